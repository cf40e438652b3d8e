/* fsutil.c — file helpers: atomic writes, mkdir -p, project data paths, a monotonic clock. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "errmsg.h"
#include "fsutil.h"
#include "grow.h"

/* mkstemp creates 0600; results are ordinary files (0644 under the usual umask). */
static int fchmod_default(const char *path)
{
    mode_t mask = umask(0);
    umask(mask);
    return chmod(path, 0666 & ~mask);
}

/* Every byte of buf to fd (write may take less, or be interrupted); 0, or -1 with errno. */
static int write_full(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        size_t chunk = n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n;
        ssize_t w = write(fd, p, chunk);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* fsync of the directory holding path, so the rename itself survives a crash. 0, or -1
 * with errno. */
static int fsync_parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else if ((size_t)(slash - path) < sizeof dir)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd) == 0 || errno == EINVAL ? 0 : -1; /* EINVAL: no fsync on directories */
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

/* The pieces into the open temporary file fd, fsync'ed and closed (fd is closed either way).
 * A4W4_ST_OK, or A4W4_ST_IO with err. */
static a4w4_hstatus fill_temp(int fd, const char *path, const char *tmp,
                              const a4w4_write_piece *pieces, size_t np, char *err,
                              size_t errlen)
{
    for (size_t i = 0; i < np; i++)
        if (pieces[i].n && write_full(fd, pieces[i].p, pieces[i].n)) {
            int e = errno;
            close(fd);
            return a4w4_errmsg(err, errlen, A4W4_ST_IO, path,
                               "write to temporary file %s failed: %s", tmp, strerror(e));
        }
    if (fsync(fd)) {
        int e = errno;
        close(fd);
        return a4w4_errmsg(err, errlen, A4W4_ST_IO, path, "fsync of temporary file %s failed: %s",
                           tmp, strerror(e));
    }
    if (close(fd))
        return a4w4_errmsg(err, errlen, A4W4_ST_IO, path, "close of temporary file %s failed: %s",
                           tmp, strerror(errno));
    return A4W4_ST_OK;
}

a4w4_hstatus a4w4_write_atomic_pieces(const char *path, const a4w4_write_piece *pieces,
                                      size_t np, char *err, size_t errlen)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + sizeof ".tmpXXXXXX");
    if (!tmp)
        return a4w4_errmsg(err, errlen, A4W4_ST_NOMEM, path, "out of memory");
    snprintf(tmp, n + sizeof ".tmpXXXXXX", "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd >= 0)
        (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (fd < 0) {
        a4w4_errmsg(err, errlen, A4W4_ST_IO, path, "cannot create temporary file %s: %s", tmp,
                    strerror(errno));
        free(tmp);
        return A4W4_ST_IO;
    }
    a4w4_hstatus rc = fill_temp(fd, path, tmp, pieces, np, err, errlen);
    if (rc == A4W4_ST_OK && fchmod_default(tmp) != 0)
        rc = a4w4_errmsg(err, errlen, A4W4_ST_IO, path, "cannot set the mode of %s: %s", tmp,
                         strerror(errno));
    if (rc == A4W4_ST_OK && rename(tmp, path) != 0)
        rc = a4w4_errmsg(err, errlen, A4W4_ST_IO, path, "cannot rename %s over it: %s", tmp,
                         strerror(errno));
    if (rc != A4W4_ST_OK)
        unlink(tmp);
    else if (fsync_parent_dir(path) != 0)
        rc = a4w4_errmsg(err, errlen, A4W4_ST_IO, path,
                         "written, but the fsync of its directory failed: %s", strerror(errno));
    free(tmp);
    return rc;
}

a4w4_hstatus a4w4_write_atomic(const char *path, const void *data, size_t len, char *err,
                               size_t errlen)
{
    a4w4_write_piece p = {data, len};
    return a4w4_write_atomic_pieces(path, &p, 1, err, errlen);
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

/* What a non-regular file is, for messages. */
static const char *file_kind(mode_t m)
{
    return S_ISFIFO(m)   ? "a FIFO"
           : S_ISDIR(m)  ? "a directory"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
                         : "not a plain file";
}

FILE *a4w4_fopen_regular(const char *path, int *not_regular, char *err, size_t errlen)
{
    *not_regular = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int saved = errno;
        snprintf(err, errlen, "%s: cannot open (%s)", path, strerror(saved));
        errno = saved; /* ENOENT tells a missing file from an unreadable one */
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0)
        st.st_mode = 0; /* unknown: refused as not a plain file */
    if (!S_ISREG(st.st_mode)) {
        *not_regular = 1;
        snprintf(err, errlen, "%s: not a regular file (%s); give a file", path,
                 file_kind(st.st_mode));
        close(fd);
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    FILE *f = fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ? NULL : fdopen(fd, "rb");
    if (!f) {
        int saved = errno;
        snprintf(err, errlen, "%s: cannot open (%s)", path, strerror(saved));
        close(fd);
        errno = saved;
    }
    return f;
}

char *a4w4_read_regular(const char *path, size_t max, size_t *len, int *missing, char *err,
                        size_t errlen)
{
    int not_regular;
    *len = 0;
    *missing = 0;
    FILE *f = a4w4_fopen_regular(path, &not_regular, err, errlen);
    if (!f) {
        int saved = errno;
        *missing = !not_regular && saved == ENOENT;
        if (!not_regular)
            snprintf(err, errlen, "%s: cannot read (%s)", path, strerror(saved));
        return NULL;
    }
    char *buf = NULL;
    size_t cap = 0, n = 0;
    int oom = 0;
    for (;;) { /* room for one more byte and the NUL; with max, read no more than max + 1 */
        if ((oom = A4W4_GROW(buf, n + 2, cap, (size_t)1 << 14) != 0))
            break;
        size_t want = cap - 1 - n;
        if (max && max - n < want) /* n <= max here */
            want = max - n + 1;
        size_t got = fread(buf + n, 1, want, f);
        n += got;
        if (got < want || ferror(f) || (max && n > max))
            break; /* the end, a read error, or more than max */
    }
    int bad = ferror(f);
    fclose(f);
    int too_big = !oom && max && n > max;
    if (!oom && !bad && !too_big) {
        buf[n] = '\0';
        *len = n;
        return buf;
    }
    if (too_big)
        snprintf(err, errlen, "%s: larger than %zu bytes", path, max);
    else
        snprintf(err, errlen, "%s: cannot read (%s)", path, bad ? "read error" : "out of memory");
    free(buf);
    return NULL;
}

/* The descriptors kept from forked children, each stored as fd + 1 (0: a free slot). The
 * atfork child handler closes them in every child fork() makes, whoever forks (an isolated
 * plugin call, a plugin's own helper process in --no-isolate): a child that outlives its
 * call then holds neither the --out lock nor the results stream. */
#define KEPT_MAX 16
static int kept[KEPT_MAX];
static pthread_mutex_t kept_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;

static void close_kept_in_child(void)
{
    for (int i = 0; i < KEPT_MAX; i++)
        if (kept[i]) {
            close(kept[i] - 1);
            kept[i] = 0;
        }
}

static void kept_init(void)
{
    pthread_atfork(NULL, NULL, close_kept_in_child);
}

void a4w4_fd_keep_from_children(int fd)
{
    if (fd < 0)
        return;
    pthread_once(&kept_once, kept_init);
    pthread_mutex_lock(&kept_mu);
    for (int i = 0; i < KEPT_MAX; i++)
        if (!kept[i]) {
            kept[i] = fd + 1;
            break;
        }
    pthread_mutex_unlock(&kept_mu);
}

void a4w4_fd_close_kept(int fd)
{
    if (fd < 0)
        return;
    pthread_mutex_lock(&kept_mu);
    for (int i = 0; i < KEPT_MAX; i++)
        if (kept[i] == fd + 1)
            kept[i] = 0;
    pthread_mutex_unlock(&kept_mu);
    close(fd);
}

/* The holder text a lock file records ("pid N: ..."), trimmed to one line. */
static void read_holder(int fd, char *buf, size_t len)
{
    ssize_t r = pread(fd, buf, len - 1, 0);
    buf[r > 0 ? r : 0] = 0;
    buf[strcspn(buf, "\n")] = 0;
    if (!*buf)
        snprintf(buf, len, "pid unknown (it has not written its name yet)");
}

a4w4_hstatus a4w4_dir_lock(const char *dir, const char *holder, int *fd, char *err,
                           size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, A4W4_DIR_LOCK_NAME);
    *fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (*fd < 0) {
        snprintf(err, errlen, "%s: cannot create the lock file (%s)", path, strerror(errno));
        return A4W4_ST_IO;
    }
    if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
        int busy = errno == EWOULDBLOCK;
        char who[1024];
        if (busy)
            read_holder(*fd, who, sizeof who);
        else
            snprintf(err, errlen, "%s: cannot lock (%s)", path, strerror(errno));
        if (busy)
            snprintf(err, errlen, "%s is in use by %s (lock %s); wait for it to end or use "
                     "another directory", dir, who, A4W4_DIR_LOCK_NAME);
        close(*fd);
        *fd = -1;
        return busy ? A4W4_ST_BADINPUT : A4W4_ST_IO;
    }
    a4w4_fd_keep_from_children(*fd); /* a plugin's child must not keep the lock */
    char line[1200];
    int n = snprintf(line, sizeof line, "pid %ld: %.1100s\n", (long)getpid(), holder);
    if (ftruncate(*fd, 0) != 0 || pwrite(*fd, line, (size_t)n, 0) != n) {
        snprintf(err, errlen, "%s: cannot write (%s)", path, strerror(errno));
        a4w4_dir_unlock(*fd);
        *fd = -1;
        return A4W4_ST_IO;
    }
    return A4W4_ST_OK;
}

void a4w4_dir_unlock(int fd)
{
    a4w4_fd_close_kept(fd); /* the lock goes with the descriptor; the file stays (fsutil.h) */
}

/* 1 when name is base + ".tmp", or base + ".tmp" + six characters of [A-Za-z0-9]. */
static int is_stale_temp(const char *name, const char *base)
{
    size_t L = strlen(base);
    if (strncmp(name, base, L) || strncmp(name + L, ".tmp", 4))
        return 0;
    const char *x = name + L + 4;
    if (!*x)
        return 1;
    size_t k = 0;
    for (; x[k]; k++)
        if (!((x[k] >= 'a' && x[k] <= 'z') || (x[k] >= 'A' && x[k] <= 'Z') ||
              (x[k] >= '0' && x[k] <= '9')))
            return 0;
    return k == 6;
}

size_t a4w4_remove_stale_temps(const char *dir, const char *const *bases, size_t n)
{
    DIR *d = opendir(dir);
    size_t removed = 0;
    if (!d)
        return 0;
    const struct dirent *de;
    while ((de = readdir(d))) {
        for (size_t i = 0; i < n; i++) {
            if (!is_stale_temp(de->d_name, bases[i]))
                continue;
            char path[4400];
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            struct stat st;
            if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && unlink(path) == 0)
                removed++;
            break;
        }
    }
    closedir(d);
    return removed;
}

a4w4_hstatus a4w4_remove_files(const char *dir, const char *const *names, size_t n, char *err,
                               size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct stat st;
        int got = lstat(path, &st) == 0;
        if (!got && errno == ENOENT)
            continue;
        if (!got || !S_ISREG(st.st_mode) || unlink(path) != 0) {
            snprintf(err, errlen, "%s: cannot remove the earlier run's file (%s)", path,
                     !got || S_ISREG(st.st_mode) ? strerror(errno) : "not a regular file");
            return A4W4_ST_IO;
        }
    }
    return A4W4_ST_OK;
}

int a4w4_parent_writable(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = 0;
    else
        *slash = 0;
    /* a file made and removed there: access(W_OK) says yes to root on /proc and the like */
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/.a4w4check-writable-XXXXXX", dir);
    int fd = mkstemp(probe);
    if (fd < 0)
        return 0;
    close(fd);
    unlink(probe);
    return 1;
}
