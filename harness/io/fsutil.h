/* fsutil.h — file helpers shared by every room: atomic writes, mkdir -p, data paths, clock. */
#ifndef A4W4_FSUTIL_H
#define A4W4_FSUTIL_H

#include <stddef.h>

#include "status.h"

/* Write len bytes to path atomically: a temporary file in the same directory, fsync, rename.
 * Returns A4W4_ST_OK; on failure removes the temporary file, leaves path untouched and returns
 * A4W4_ST_IO (or A4W4_ST_NOMEM) with err set. */
a4w4_hstatus a4w4_write_atomic(const char *path, const void *data, size_t len, char *err,
                               size_t errlen);

/* mkdir -p: A4W4_ST_OK, or A4W4_ST_IO with err set (cannot create, not a directory, path too
 * long). */
a4w4_hstatus a4w4_mkdir_p(const char *dir, char *err, size_t errlen);

/* Resolve a project data path (e.g. "cases/premerge.csv"): as given when it exists relative to
 * the current directory, else under the source tree the binary was built from. Returns buf. */
const char *a4w4_data_path(const char *rel, char *buf, size_t len);

/* Monotonic seconds. */
double a4w4_now(void);

#endif
