/* fuzz_common.c — RNG, scratch directory and invariant checks of the fuzz targets (see
 * fuzz_common.h). */
#include "fuzz_common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>
#include <signal.h>

void fz_rng_seed(fz_rng *r, uint64_t seed)
{
    r->s = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    if (!r->s)
        r->s = 1;
}

uint64_t fz_rng_next(fz_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1Dull;
}

size_t fz_below(fz_rng *r, size_t n)
{
    return n ? (size_t)(fz_rng_next(r) % n) : 0;
}

int fz_one_in(fz_rng *r, size_t n)
{
    return fz_below(r, n) == 0;
}

static char scratch[512];

/* Remove the files of the scratch directory (no subdirectories are made). */
static void clear_files(void)
{
    DIR *d = opendir(scratch);
    if (d) {
        struct dirent *e;
        char p[1024];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(p, sizeof p, "%s/%s", scratch, e->d_name);
                unlink(p);
            }
        closedir(d);
    }
}

/* Remove the scratch directory and the files in it. */
static void tmp_cleanup(void)
{
    clear_files();
    rmdir(scratch);
}

/* The default initialization: the scratch directory (a target defining its own overrides it). */
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_tmp_init();
    return 0;
}

const char *fz_scratch_clear(void)
{
    fz_tmp_init();
    clear_files();
    return scratch;
}

/* Remove base/a4w4fuzz.<pid>.* left by processes that are gone (libFuzzer ends with _Exit
 * or a crash, so the atexit cleanup does not always run). */
static void remove_stale(const char *base)
{
    DIR *d = opendir(base);
    if (!d)
        return;
    struct dirent *e;
    long pid;
    while ((e = readdir(d)))
        if (sscanf(e->d_name, "a4w4fuzz.%ld.", &pid) == 1 && pid > 0 && pid != (long)getpid() &&
            kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
            snprintf(scratch, sizeof scratch, "%s/%s", base, e->d_name);
            tmp_cleanup();
        }
    closedir(d);
    scratch[0] = '\0';
}

void fz_tmp_init(void)
{
    if (scratch[0])
        return;
    const char *base = getenv("A4W4_FUZZ_TMP");
    struct stat st;
    if (!base || !*base)
        base = (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0)
                   ? "/dev/shm"
                   : "/tmp";
    remove_stale(base);
    snprintf(scratch, sizeof scratch, "%s/a4w4fuzz.%ld.XXXXXX", base, (long)getpid());
    if (!mkdtemp(scratch)) {
        fprintf(stderr, "fuzz: cannot create a scratch directory under %s (%s)\n", base,
                strerror(errno));
        abort();
    }
    atexit(tmp_cleanup);
}

void fz_scratch_path(const char *name, char *path, size_t pathlen)
{
    fz_tmp_init();
    if (snprintf(path, pathlen, "%s/%s", scratch, name) >= (int)pathlen) {
        fprintf(stderr, "fuzz: scratch path too long for %s\n", name);
        abort();
    }
}

void fz_write_input(const char *name, const uint8_t *data, size_t size, char *path,
                    size_t pathlen)
{
    fz_scratch_path(name, path, pathlen);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    size_t done = 0;
    while (fd >= 0 && done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    if (fd < 0 || done != size || close(fd) != 0) {
        fprintf(stderr, "fuzz: cannot write %s (%s)\n", path, strerror(errno));
        abort();
    }
}

void fz_check(int cond, const char *target, const char *fmt, ...)
{
    if (cond)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz invariant broken (%s): ", target);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

int fz_strict(void)
{
    static int strict = -1;
    if (strict < 0)
        strict = getenv("A4W4_FUZZ_STRICT") != NULL;
    return strict;
}

void fz_check_err_line(const char *err, const char *prefix, const char *target)
{
    fz_check(err[0] != '\0', target, "an error without a message");
    fz_check(!strchr(err, '\n') && !strchr(err, '\r'), target,
             "the error message is not one line: %s", err);
    fz_check(!strncmp(err, prefix, strlen(prefix)), target,
             "the error message does not start with '%s': %s", prefix, err);
}

void fz_accepted(void)
{
    static int planted = -1;
    if (planted < 0)
        planted = getenv("A4W4_FUZZ_PLANT_CRASH") != NULL;
    if (planted) {
        fprintf(stderr, "fuzz: planted crash (A4W4_FUZZ_PLANT_CRASH is set)\n");
        abort();
    }
}

const char *fz_source_path(const char *rel)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", A4W4_SOURCE_DIR, rel);
    return buf;
}
