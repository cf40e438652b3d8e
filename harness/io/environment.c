/* environment.c — a4w4_environment_json: where a run happened, recorded in its header so
 * every report rendered later from results.json can show it. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "environment.h"
#include "fsutil.h"
#include "stream.h"

#ifndef A4W4_SOURCE_DIR
#define A4W4_SOURCE_DIR "."
#endif

/* The AITER tables the dispatch oracle reads by default (harness/cli/cmd_route.c's defaults). */
static const struct {
    const char *role, *rel;
} default_tables[] = {{"tuned", A4W4_TUNED_TABLE_DEFAULT},
                      {"kernels", A4W4_KERNEL_TABLE_DEFAULT}};


void a4w4_file_fnv1a64(const char *path, char out[20])
{
    int not_regular;
    char err[64];
    FILE *f = a4w4_fopen_regular(path, &not_regular, err, sizeof err); /* a FIFO never blocks */
    if (!f) {
        snprintf(out, 20, "unreadable");
        return;
    }
    unsigned long long h = 0xCBF29CE484222325ull;
    int c;
    while ((c = getc(f)) != EOF)
        h = (h ^ (unsigned char)c) * 0x100000001B3ull;
    fclose(f);
    snprintf(out, 20, "%016llx", h);
}

/* scandir filter: every entry but "." and "..". */
static int not_dot(const struct dirent *de)
{
    return strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
}

void a4w4_dir_fnv1a64(const char *dir, char out[20])
{
    struct dirent **names = NULL;
    int n = scandir(dir, &names, not_dot, alphasort);
    if (n < 0) {
        snprintf(out, 20, "unreadable");
        return;
    }
    unsigned long long h = 0xCBF29CE484222325ull;
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        int fits = snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name) <
                   (int)sizeof path;
        if (fits && !lstat(path, &st) && S_ISREG(st.st_mode)) {
            int ok;
            const char *nm = names[i]->d_name;
            for (size_t k = 0; k <= strlen(nm); k++) /* the name and its NUL */
                h = (h ^ (unsigned char)nm[k]) * 0x100000001B3ull;
            h = a4w4_hash_file(path, h, &ok);
            if (!ok)
                h = a4w4_hash_str("\001unreadable", h);
        }
        free(names[i]);
    }
    free(names);
    snprintf(out, 20, "%016llx", h);
}

/* First line of a command's output (trailing whitespace removed); 0 on success. */
static int first_line_of(const char *cmd, char *buf, size_t len)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    buf[0] = 0;
    char *got = fgets(buf, (int)len, p);
    while (fgetc(p) != EOF) /* drain */
        ;
    int st = pclose(p);
    if (!got || st != 0)
        return -1;
    size_t L = strlen(buf);
    while (L && (buf[L - 1] == '\n' || buf[L - 1] == '\r' || buf[L - 1] == ' '))
        buf[--L] = 0;
    return L ? 0 : -1;
}

/* First line of a file (trailing whitespace removed); 0 on success. */
static int first_line_file(const char *path, char *buf, size_t len)
{
    int not_regular;
    char err[64];
    FILE *f = a4w4_fopen_regular(path, &not_regular, err, sizeof err);
    if (!f)
        return -1;
    char *got = fgets(buf, (int)len, f);
    fclose(f);
    if (!got)
        return -1;
    size_t L = strlen(buf);
    while (L && (buf[L - 1] == '\n' || buf[L - 1] == '\r' || buf[L - 1] == ' '))
        buf[--L] = 0;
    return L ? 0 : -1;
}

/* Whether the real paths of a and b are the same directory (1), not (0). */
static int same_dir(const char *a, const char *b)
{
    char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
    int same = ra && rb && !strcmp(ra, rb);
    free(ra);
    free(rb);
    return same;
}

int a4w4_env_git_commit(const char *src, char *out, size_t outlen, int *dirty)
{
    char cmd[4400], line[4200];
    snprintf(out, outlen, "unknown");
    if (dirty)
        *dirty = 0;
    if (!src || strchr(src, '\'') || strlen(src) > 4096)
        return 0;
    /* src must be the top level of its own checkout: inside another repository (a source
     * tarball unpacked in someone's tree), HEAD would be that repository's commit */
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse --show-toplevel 2>/dev/null", src);
    if (first_line_of(cmd, line, sizeof line) != 0 || !same_dir(line, src))
        return 0;
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse HEAD 2>/dev/null", src);
    if (first_line_of(cmd, line, sizeof line) != 0 || strlen(line) < 7 || strlen(line) > 64 ||
        strspn(line, "0123456789abcdef") != strlen(line) || strlen(line) >= outlen)
        return 0;
    snprintf(out, outlen, "%s", line);
    if (dirty) {
        char d[256] = "";
        snprintf(cmd, sizeof cmd,
                 "git -C '%s' status --porcelain --untracked-files=no 2>/dev/null | head -n 1", src);
        *dirty = first_line_of(cmd, d, sizeof d) == 0;
    }
    return 1;
}

static void git_info(cJSON *env)
{
    char commit[72];
    int dirty = 0;
    if (a4w4_env_git_commit(A4W4_SOURCE_DIR, commit, sizeof commit, &dirty)) {
        cJSON_AddStringToObject(env, "git_commit", commit);
        cJSON_AddBoolToObject(env, "git_dirty", dirty);
    } else {
        cJSON_AddStringToObject(env, "git_commit", "unknown");
    }
}

static void gpu_info(cJSON *env)
{
    char line[256], path[96];
    for (int i = 0; i < 8; i++) { /* amdgpu exposes the marketing name per card */
        snprintf(path, sizeof path, "/sys/class/drm/card%d/device/product_name", i);
        if (first_line_file(path, line, sizeof line) == 0) {
            cJSON_AddStringToObject(env, "gpu", line);
            break;
        }
    }
    if (first_line_file("/sys/module/amdgpu/version", line, sizeof line) == 0) {
        char v[300];
        snprintf(v, sizeof v, "amdgpu %s", line);
        cJSON_AddStringToObject(env, "driver", v);
    } else if (first_line_file("/proc/driver/nvidia/version", line, sizeof line) == 0) {
        cJSON_AddStringToObject(env, "driver", line);
    }
}

void a4w4_environment_json(cJSON *header)
{
    if (!header)
        return;
    cJSON_DeleteItemFromObjectCaseSensitive(header, "environment");
    cJSON *env = cJSON_AddObjectToObject(header, "environment");
    if (!env)
        return;
#if defined(__clang__)
    cJSON_AddStringToObject(env, "compiler", "clang " __clang_version__);
#elif defined(__GNUC__)
    cJSON_AddStringToObject(env, "compiler", "gcc " __VERSION__);
#else
    cJSON_AddStringToObject(env, "compiler", "unknown C11 compiler");
#endif
    git_info(env);
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) == 0 && host[0])
        cJSON_AddStringToObject(env, "host", host);
    struct utsname u;
    if (uname(&u) == 0) {
        char os[3 * 65 + 4];
        snprintf(os, sizeof os, "%s %s %s", u.sysname, u.release, u.machine);
        cJSON_AddStringToObject(env, "os", os);
    }
    time_t now = time(NULL);
    struct tm tmv;
    char date[32];
    if (gmtime_r(&now, &tmv) && strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tmv))
        cJSON_AddStringToObject(env, "date", date);
    gpu_info(env);
    cJSON *tables = cJSON_AddArrayToObject(env, "tables");
    for (size_t i = 0; i < sizeof default_tables / sizeof default_tables[0]; i++) {
        char buf[4096], h[20];
        const char *p = a4w4_data_path(default_tables[i].rel, buf, sizeof buf);
        a4w4_file_fnv1a64(p, h);
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "role", default_tables[i].role);
        cJSON_AddStringToObject(t, "path", default_tables[i].rel);
        cJSON_AddStringToObject(t, "fnv1a64", h);
        cJSON_AddItemToArray(tables, t);
    }
}
