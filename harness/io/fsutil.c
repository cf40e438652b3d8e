/* fsutil.c — file helpers: atomic writes, mkdir -p, project data paths, a monotonic clock. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"

/* mkstemp creates 0600; results are ordinary files (0644 under the usual umask). */
static int fchmod_default(const char *path)
{
    mode_t mask = umask(0);
    umask(mask);
    return chmod(path, 0666 & ~mask);
}

a4w4_hstatus a4w4_write_atomic(const char *path, const void *data, size_t len, char *err,
                               size_t errlen)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (!tmp) {
        snprintf(err, errlen, "%s: out of memory", path);
        return A4W4_ST_NOMEM;
    }
    snprintf(tmp, n + 16, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot create a temporary file beside it (%s)", path, strerror(errno));
        free(tmp);
        return A4W4_ST_IO;
    }
    const char *p = data;
    size_t left = len;
    int ok = 1;
    while (left && ok) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            ok = 0;
        else {
            p += w;
            left -= (size_t)w;
        }
    }
    if (ok && fsync(fd) != 0)
        ok = 0;
    int saved = errno;
    if (close(fd) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    if (ok && fchmod_default(tmp) == 0 && rename(tmp, path) == 0) {
        free(tmp);
        return A4W4_ST_OK;
    }
    if (ok)
        saved = errno;
    unlink(tmp);
    snprintf(err, errlen, "%s: cannot write (%s)", path, strerror(saved));
    free(tmp);
    return A4W4_ST_IO;
}

a4w4_hstatus a4w4_mkdir_p(const char *dir, char *err, size_t errlen)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) {
        snprintf(err, errlen, "%s: path too long", dir);
        return A4W4_ST_IO;
    }
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == 0) {
            char c = *p;
            *p = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
                snprintf(err, errlen, "%s: cannot create directory (%s)", buf, strerror(errno));
                return A4W4_ST_IO;
            }
            *p = c;
            if (!c)
                break;
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: not a directory", dir);
        return A4W4_ST_IO;
    }
    return A4W4_ST_OK;
}

const char *a4w4_data_path(const char *rel, char *buf, size_t len)
{
    if (rel[0] == '/' || access(rel, F_OK) == 0)
        snprintf(buf, len, "%s", rel);
    else
        snprintf(buf, len, "%s/%s", A4W4_SOURCE_DIR, rel);
    return buf;
}

double a4w4_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}
