/* fsutil.h — file helpers shared by every room: atomic writes, mkdir -p, data paths, clock. */
#ifndef A4W4_FSUTIL_H
#define A4W4_FSUTIL_H

#include <stddef.h>

/* Write len bytes to path atomically: a temporary file in the same directory, fsync, rename.
 * On failure removes the temporary file, leaves path untouched, returns -1 with err set. */
int a4w4_write_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen);

/* mkdir -p; 0 or -1 with err set. */
int a4w4_mkdir_p(const char *dir, char *err, size_t errlen);

/* Resolve a project data path (e.g. "cases/premerge.csv"): as given when it exists relative to
 * the current directory, else under the source tree the binary was built from. Returns buf. */
const char *a4w4_data_path(const char *rel, char *buf, size_t len);

/* Monotonic seconds. */
double a4w4_now(void);

#endif
