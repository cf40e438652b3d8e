/* fsutil.h — file helpers shared by every room: atomic writes, mkdir -p, data paths, clock. */
#ifndef A4W4_FSUTIL_H
#define A4W4_FSUTIL_H

#include <stddef.h>
#include <stdio.h>

#include "status.h"

/* The one atomic writer: the pieces, in order, into a temporary file "<path>.tmpXXXXXX" in
 * the same directory (mkostemp), fsync of the file, mode 0666 & ~umask, rename over path,
 * fsync of the directory. Returns A4W4_ST_OK; on failure removes the temporary file, leaves
 * path untouched (unless only the directory's fsync failed: then path holds the new bytes)
 * and returns A4W4_ST_IO (or A4W4_ST_NOMEM) with err "<path>: <what failed>: <errno text>". */
typedef struct {
    const void *p;
    size_t n;
} a4w4_write_piece;
a4w4_hstatus a4w4_write_atomic_pieces(const char *path, const a4w4_write_piece *pieces,
                                      size_t np, char *err, size_t errlen);

/* a4w4_write_atomic_pieces with one piece: len bytes at data. */
a4w4_hstatus a4w4_write_atomic(const char *path, const void *data, size_t len, char *err,
                               size_t errlen);

/* mkdir -p: A4W4_ST_OK, or A4W4_ST_IO with err set (cannot create, not a directory, path too
 * long). */
a4w4_hstatus a4w4_mkdir_p(const char *dir, char *err, size_t errlen);

/* The default dispatch tables (AITER's, under cases/aiter/): the one place they are named.
 * Resolve with a4w4_data_path. */
#define A4W4_TUNED_TABLE_DEFAULT "cases/aiter/a4w4_blockscale_tuned_gemm.csv"
#define A4W4_KERNEL_TABLE_DEFAULT "cases/aiter/gfx950_f4gemm_bf16_per1x32Fp4.csv"

/* Resolve a project data path (e.g. "cases/premerge.csv"): as given when it exists relative to
 * the current directory, else under the source tree the binary was built from. Returns buf. */
const char *a4w4_data_path(const char *rel, char *buf, size_t len);

/* Monotonic seconds. */
double a4w4_now(void);

/* Open path for reading only when it is a regular file: a FIFO, a device or a directory is
 * refused at once (opened non-blocking, so a FIFO without a writer cannot block). Returns
 * the stream, or NULL with one line in err ("<path>: not a regular file (a FIFO)", or
 * "<path>: cannot open (<errno text>)"); *not_regular is set to 1 for the former. */
FILE *a4w4_fopen_regular(const char *path, int *not_regular, char *err, size_t errlen);

/* Read the whole file at path into a malloc'ed buffer, NUL-terminated after its *len bytes,
 * through a4w4_fopen_regular: a FIFO, a device or a directory is refused at once (never
 * blocks). max > 0 caps the size. Every file the harness reads whole (results.jsonl, a
 * results document, a bundle's manifest.json and contract.txt, ...) goes through it.
 * Returns the buffer, or NULL with one line in err ("<path>: not a regular file (a FIFO);
 * give a file", "<path>: cannot read (<errno text>)", "<path>: larger than N bytes",
 * "<path>: cannot read (...)") and *missing = 1 when the file does not exist. */
char *a4w4_read_regular(const char *path, size_t max, size_t *len, int *missing, char *err,
                        size_t errlen);

/* Keep descriptor fd from every child a later fork() makes (a pthread_atfork handler closes
 * it there), for the descriptors a child must never hold: the --out lock and the results
 * stream. A plugin's helper process that outlives its call (isolated or not) then keeps
 * neither: the lock goes when the run ends, a rerun is not refused. At most 16 at a time.
 * a4w4_fd_close_kept forgets and closes it. */
void a4w4_fd_keep_from_children(int fd);
void a4w4_fd_close_kept(int fd);

/* Take the exclusive lock of an output directory: flock(LOCK_EX | LOCK_NB) on dir/LOCK_NAME
 * (created 0666 & ~umask; kept after the run: flock locks die with their holder, so a
 * killed run never leaves a stale lock), then write "pid <pid>: <holder>\n" into it.
 * Returns A4W4_ST_OK with *fd the lock (release: a4w4_dir_unlock); A4W4_ST_BADINPUT when
 * another process holds it (err: "<dir> is in use by pid <pid>: <its holder text>");
 * the descriptor is kept from forked children (a4w4_fd_keep_from_children);
 * A4W4_ST_IO when the lock file cannot be created or locked (err set). */
#define A4W4_DIR_LOCK_NAME ".a4w4check.lock"
a4w4_hstatus a4w4_dir_lock(const char *dir, const char *holder, int *fd, char *err,
                           size_t errlen);
void a4w4_dir_unlock(int fd);

/* Remove from dir the temporary files a killed writer left: for each base in bases[0..n),
 * "<base>.tmp" (the resume rewrite of earlier versions) and "<base>.tmpXXXXXX" (a4w4_write_atomic's
 * mkstemp names: exactly six characters of [A-Za-z0-9]); nothing else is touched. Call it
 * only while holding the directory's lock. Returns the number of files removed. */
size_t a4w4_remove_stale_temps(const char *dir, const char *const *bases, size_t n);

/* Remove the regular files dir/names[i] (i < n) where they exist: documents of an earlier run
 * that would otherwise sit beside a new one. A4W4_ST_OK, or A4W4_ST_IO with err naming the
 * first file that exists and cannot be removed (a name that is not a regular file counts). */
a4w4_hstatus a4w4_remove_files(const char *dir, const char *const *names, size_t n, char *err,
                               size_t errlen);

/* 1 when the directory that would hold path (its parent; "." for a bare name) exists and a
 * file can be created there by this process (one is made and removed), else 0: checked
 * before work whose result goes to path. */
int a4w4_parent_writable(const char *path);

#endif
