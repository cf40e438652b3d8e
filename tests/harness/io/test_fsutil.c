/* test_fsutil.c — file helpers (harness/io/fsutil.c): the one atomic writer (every piece in
 * order, no partial file and no temporary file left when a write fails), the output
 * directory's lock, the removal of a killed writer's temporary files (only its own names),
 * the whole-file reader (every size, the cap exact) and the refusal of files that are not
 * regular (a FIFO would block a reader forever). */
#include <criterion/criterion.h>

#include <dirent.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"

/* A scratch directory under the build tree, emptied. */
static void scratch(char *dir, size_t len, const char *name)
{
    snprintf(dir, len, "%s/test-scratch/%s", A4W4_BINARY_DIR, name);
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    cr_assert_eq(system(cmd), 0);
}

static void touch(const char *dir, const char *name)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    fputs("x", f);
    fclose(f);
}

static int exists(const char *dir, const char *name)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* Entries of dir besides . and .., and how many of them hold ".tmp". */
static size_t entries(const char *dir, size_t *ntmp)
{
    size_t n = 0;
    *ntmp = 0;
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        n++;
        *ntmp += strstr(e->d_name, ".tmp") != NULL;
    }
    closedir(d);
    return n;
}

static char *slurp(const char *path, size_t *len)
{
    int missing;
    char err[512];
    char *b = a4w4_read_regular(path, 0, len, &missing, err, sizeof err);
    cr_assert_not_null(b, "%s", err);
    return b;
}

/* A file of len bytes (byte i is 'a' + i % 26) at dir/name; its path into path. */
static void fill(const char *dir, const char *name, size_t len, char *path, size_t plen)
{
    snprintf(path, plen, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    for (size_t i = 0; i < len; i++)
        fputc('a' + (int)(i % 26), f);
    cr_assert_eq(fclose(f), 0);
}

/* Whole files of every size around the read buffer's first size (16 KiB) and its doublings
 * come back byte for byte, NUL-terminated; max admits a file of exactly max bytes and refuses
 * one byte more ("larger than"); a missing file sets *missing. */
Test(read_regular, every_size_reads_whole_and_max_is_exact)
{
    char dir[4096], path[4400], err[512];
    scratch(dir, sizeof dir, "read-regular");
    static const size_t sizes[] = {0, 1, 16383, 16384, 16385, 32767, 32768, 32769, 100000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t sz = sizes[i], len;
        fill(dir, "f.bin", sz, path, sizeof path);
        for (int m = 0; m < 3; m++) { /* no cap, max = the size, max = the size - 1 */
            size_t max = m == 0 ? 0 : m == 1 ? sz : sz - 1;
            if (m == 2 && sz < 2)
                continue; /* max 0 is no cap */
            int missing = -1;
            char *b = a4w4_read_regular(path, max, &len, &missing, err, sizeof err);
            cr_expect_eq(missing, 0);
            if (m == 2) {
                cr_expect_null(b, "%zu bytes with max %zu", sz, max);
                cr_expect(strstr(err, "larger than") != NULL, "%s", err);
                free(b);
                continue;
            }
            cr_assert_not_null(b, "%zu bytes, max %zu: %s", sz, max, err);
            cr_expect_eq(len, sz);
            cr_expect_eq(b[sz], '\0');
            for (size_t j = 0; j < sz; j++)
                if (b[j] != 'a' + (int)(j % 26))
                    cr_assert_fail("%zu bytes: byte %zu differs", sz, j);
            free(b);
        }
    }
    int missing = 0;
    size_t len;
    snprintf(path, sizeof path, "%s/none.bin", dir);
    cr_expect_null(a4w4_read_regular(path, 0, &len, &missing, err, sizeof err));
    cr_expect_eq(missing, 1, "%s", err);
}

Test(write_atomic, the_pieces_land_in_order_with_the_default_mode_and_no_temporary_left)
{
    char dir[4096], path[4400], err[512];
    scratch(dir, sizeof dir, "atomic-ok");
    snprintf(path, sizeof path, "%s/out.txt", dir);
    touch(dir, "out.txt"); /* replaced, not appended to */
    const a4w4_write_piece pieces[3] = {{"abc", 3}, {"", 0}, {"de\n", 3}};
    cr_assert_eq(a4w4_write_atomic_pieces(path, pieces, 3, err, sizeof err), A4W4_ST_OK, "%s",
                 err);
    size_t len, ntmp;
    char *b = slurp(path, &len);
    cr_expect_eq(len, 6);
    cr_expect_str_eq(b, "abcde\n");
    free(b);
    cr_expect_eq(entries(dir, &ntmp), 1);
    cr_expect_eq(ntmp, 0);
    struct stat st;
    mode_t mask = umask(0);
    umask(mask);
    cr_assert_eq(stat(path, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0666 & ~mask, "mode %o", (unsigned)(st.st_mode & 0777));
}

/* The rename fails (path is a directory): the temporary file it wrote is removed, the
 * directory stays, the error names path and the step. */
Test(write_atomic, a_failed_rename_leaves_no_temporary_file)
{
    char dir[4096], path[4400], err[512];
    scratch(dir, sizeof dir, "atomic-rename");
    snprintf(path, sizeof path, "%s/target", dir);
    cr_assert_eq(mkdir(path, 0777), 0);
    cr_assert_eq(a4w4_write_atomic(path, "x", 1, err, sizeof err), A4W4_ST_IO);
    cr_expect_eq(strncmp(err, path, strlen(path)), 0, "%s", err);
    cr_expect(strstr(err, "cannot rename") != NULL, "%s", err);
    size_t ntmp;
    cr_expect_eq(entries(dir, &ntmp), 1);
    cr_expect_eq(ntmp, 0, "a temporary file was left in %s", dir);
    struct stat st;
    cr_expect(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
}

/* A write that fails half-way (the file size limit; root ignores a read-only directory, so
 * the limit stands in for a full disk): no partial file, the old one untouched. */
Test(write_atomic, a_write_failing_half_way_leaves_the_old_file_and_no_partial_one)
{
    char dir[4096], path[4400], err[512];
    scratch(dir, sizeof dir, "atomic-fsize");
    snprintf(path, sizeof path, "%s/out.bin", dir);
    touch(dir, "out.bin");
    size_t big = 1 << 20;
    char *d = calloc(big, 1);
    cr_assert_not_null(d);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old_lim, lim;
    cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old_lim), 0);
    lim = old_lim;
    lim.rlim_cur = 64 * 1024;
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    a4w4_hstatus rc = a4w4_write_atomic(path, d, big, err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &old_lim);
    free(d);
    cr_assert_eq(rc, A4W4_ST_IO);
    cr_expect(strstr(err, "write to temporary file") != NULL, "%s", err);
    size_t len, ntmp;
    char *b = slurp(path, &len);
    cr_expect_eq(len, 1);
    cr_expect_eq(b[0], 'x');
    free(b);
    cr_expect_eq(entries(dir, &ntmp), 1);
    cr_expect_eq(ntmp, 0, "a partial temporary file was left in %s", dir);
}

/* The directory does not exist: nothing is created, the error says so in one line. */
Test(write_atomic, a_missing_directory_is_an_io_error_naming_the_path)
{
    char dir[4096], path[4400], err[512];
    scratch(dir, sizeof dir, "atomic-nodir");
    snprintf(path, sizeof path, "%s/no-such-dir/out.txt", dir);
    cr_assert_eq(a4w4_write_atomic(path, "x", 1, err, sizeof err), A4W4_ST_IO);
    cr_expect_eq(strncmp(err, path, strlen(path)), 0, "%s", err);
    cr_expect(strstr(err, "cannot create temporary file") != NULL, "%s", err);
    cr_expect(access(path, F_OK) != 0);
}

Test(dir_lock, a_second_holder_is_refused_naming_the_first)
{
    char dir[4096], err[2048];
    scratch(dir, sizeof dir, "lock");
    int a = -1, b = -1;
    cr_assert_eq(a4w4_dir_lock(dir, "a4w4check run --out x", &a, err, sizeof err), A4W4_ST_OK,
                 "%s", err);
    /* flock locks belong to the open file: a second open conflicts even in this process */
    cr_expect_eq(a4w4_dir_lock(dir, "a4w4check run --set edge", &b, err, sizeof err),
                 A4W4_ST_BADINPUT);
    cr_expect_eq(b, -1);
    char want[256];
    snprintf(want, sizeof want, "is in use by pid %ld: a4w4check run --out x (lock %s)",
             (long)getpid(), A4W4_DIR_LOCK_NAME);
    cr_expect(strstr(err, want) != NULL, "%s", err);
    a4w4_dir_unlock(a);
    cr_expect_eq(a4w4_dir_lock(dir, "second", &b, err, sizeof err), A4W4_ST_OK, "%s", err);
    a4w4_dir_unlock(b);
}

Test(dir_lock, a_directory_that_cannot_hold_the_lock_file_is_an_io_error)
{
    char dir[4096], err[2048];
    scratch(dir, sizeof dir, "lock_missing");
    strcat(dir, "/not-there");
    int fd = 0;
    cr_expect_eq(a4w4_dir_lock(dir, "x", &fd, err, sizeof err), A4W4_ST_IO);
    cr_expect(strstr(err, "cannot create the lock file") != NULL, "%s", err);
}

Test(stale_temps, only_the_writers_own_names_are_removed)
{
    char dir[4096], sub[4200];
    scratch(dir, sizeof dir, "temps");
    static const char *const stale[] = {"results.json.tmpAb12Cd", "summary.md.tmp000000",
                                        "results.jsonl.tmp"};
    static const char *const keep[] = {"results.json.tmpAb12C",   "results.json.tmpAb12Cde",
                                       "results.json.tmp-b12Cd",  "other.json.tmpAb12Cd",
                                       "results.json",            "summary.md",
                                       "results.jsonl.tmp.other", "xresults.json.tmpAb12Cd"};
    for (size_t i = 0; i < 3; i++)
        touch(dir, stale[i]);
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
        touch(dir, keep[i]);
    snprintf(sub, sizeof sub, "%s/summary.md.tmpDIRDIR", dir);
    cr_assert_eq(mkdir(sub, 0777), 0); /* only regular files go */
    static const char *const bases[] = {"results.jsonl", "results.json", "summary.md"};
    cr_expect_eq(a4w4_remove_stale_temps(dir, bases, 3), 3);
    for (size_t i = 0; i < 3; i++)
        cr_expect(!exists(dir, stale[i]), "%s left", stale[i]);
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
        cr_expect(exists(dir, keep[i]), "%s removed", keep[i]);
    cr_expect(exists(dir, "summary.md.tmpDIRDIR"));
    cr_expect_eq(a4w4_remove_stale_temps(dir, bases, 3), 0);
}

Test(remove_files, the_named_files_go_absent_ones_are_fine_a_directory_is_an_io_error)
{
    char dir[4096], sub[4200], err[512] = "";
    scratch(dir, sizeof dir, "remove");
    touch(dir, "results.json");
    touch(dir, "results.jsonl");
    static const char *const names[] = {"results.json", "summary.md"}; /* summary.md absent */
    cr_assert_eq(a4w4_remove_files(dir, names, 2, err, sizeof err), A4W4_ST_OK, "%s", err);
    cr_expect(!exists(dir, "results.json"));
    cr_expect(exists(dir, "results.jsonl"), "a file not named was removed");
    snprintf(sub, sizeof sub, "%s/summary.md", dir);
    cr_assert_eq(mkdir(sub, 0777), 0);
    cr_expect_eq(a4w4_remove_files(dir, names, 2, err, sizeof err), A4W4_ST_IO);
    cr_expect(strstr(err, "summary.md") && strstr(err, "not a regular file"), "%s", err);
}

Test(fopen_regular, a_fifo_or_a_directory_is_refused_at_once)
{
    char dir[4096], path[4200], err[512];
    scratch(dir, sizeof dir, "fifo");
    snprintf(path, sizeof path, "%s/cases.csv", dir);
    cr_assert_eq(mkfifo(path, 0666), 0);
    int nr = 0;
    cr_expect_null(a4w4_fopen_regular(path, &nr, err, sizeof err)); /* returns: never blocks */
    cr_expect_eq(nr, 1);
    cr_expect(strstr(err, "cases.csv: not a regular file (a FIFO)") != NULL, "%s", err);
    cr_expect_null(a4w4_fopen_regular(dir, &nr, err, sizeof err));
    cr_expect(strstr(err, "not a regular file (a directory)") != NULL, "%s", err);
    snprintf(path, sizeof path, "%s/missing.csv", dir);
    cr_expect_null(a4w4_fopen_regular(path, &nr, err, sizeof err));
    cr_expect_eq(nr, 0);
    cr_expect(strstr(err, "missing.csv: cannot open (No such file or directory)") != NULL, "%s",
              err);
    touch(dir, "plain.csv");
    snprintf(path, sizeof path, "%s/plain.csv", dir);
    FILE *f = a4w4_fopen_regular(path, &nr, err, sizeof err);
    cr_assert_not_null(f, "%s", err);
    cr_expect_eq(fgetc(f), 'x');
    fclose(f);
}
