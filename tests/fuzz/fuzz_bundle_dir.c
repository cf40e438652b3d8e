/* fuzz_bundle_dir.c — libFuzzer target for bundle-directory verification: the bundle
 * backend's reading of a whole output directory (harness/backends/bundle_dir.h: manifest.json,
 * contract.txt, the *.safetensors files, their conflicts) and its judgement of each case
 * (harness/backends/bundle.c: through a4w4_backend_open_type, check_items and run).
 *
 * Input: the directory as parts separated by the line "--8<--":
 *   part 1  manifest.json's bytes (an empty part: no manifest.json);
 *   part 2  contract.txt's bytes (an empty part: no contract.txt);
 *   part 3… one file each: its name on the first line (bytes outside [A-Za-z0-9._-] become
 *           '_'), then either "st:M,N;key=value;..." (an output bundle the target writes:
 *           y BF16 [M, N] with M, N in 1..8, the pairs as __metadata__) or the file's raw bytes.
 * The run's matrix is three items, c1 [2, 4], c2 [1, 8] and golden/g1 [2, 4] (K 32), matrix
 * hash 00000000000000aa, this tool's version. dict/bundle_dir.dict holds the separator, the
 * manifest keys, the item and file names and the metadata keys.
 *
 * Checked beyond "no crash": a refused open, a refused check_items and every non-OK run leave
 * one line (open's and check_items' starting "bundle "); run returns OK, SKIP, REFUSED or an
 * error, never n/a; an independent reading of the manifest (cJSON): a case it lists as failed
 * never runs OK or SKIP (the kernel failed: the entry must fail), a case a manifest lists in
 * neither list is a SKIP, and a case runs OK only when its file was written; when the manifest
 * names a tool version other than this one, open refuses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "backend.h"
#include "bundle.h"
#include "bundle_dir.h"
#include "fuzz_common.h"
#include "registry.h"
#include "safetensors.h"
#include "stream.h"

#define TARGET "bundle_dir"
#define SEP "\n--8<--\n"
#define MAX_PARTS 12

typedef struct {
    const char *name;
    size_t M, N;
} item;

static const item items[] = {{"c1", 2, 4}, {"c2", 1, 8}, {"golden/g1", 2, 4}};
#define NITEMS (sizeof items / sizeof items[0])

/* Split data into parts at SEP; returns how many (at most MAX_PARTS, the last one takes the
 * rest). */
static size_t split(const uint8_t *data, size_t size, const uint8_t **p, size_t *len)
{
    size_t n = 0, at = 0, sl = strlen(SEP);
    while (n < MAX_PARTS - 1) {
        const uint8_t *hit = NULL;
        for (size_t i = at; i + sl <= size && !hit; i++)
            if (!memcmp(data + i, SEP, sl))
                hit = data + i;
        if (!hit)
            break;
        p[n] = data + at;
        len[n++] = (size_t)(hit - (data + at));
        at = (size_t)(hit - data) + sl;
    }
    p[n] = data + at;
    len[n++] = size - at;
    return n;
}

static void write_bytes(const char *dir, const char *name, const uint8_t *d, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    fz_check(f && fwrite(d, 1, n, f) == n && !fclose(f), TARGET, "cannot write %s", path);
}

/* "st:M,N;k=v;..." -> an output bundle at dir/name (a4w4_st_write); ignored when malformed. */
static void write_spec(const char *dir, const char *name, const char *spec)
{
    char path[1024], buf[512], *save = NULL;
    unsigned M = 0, N = 0;
    snprintf(buf, sizeof buf, "%s", spec + 3);
    char *dims = strtok_r(buf, ";", &save);
    if (!dims || sscanf(dims, "%u,%u", &M, &N) != 2 || M < 1 || M > 8 || N < 1 || N > 8)
        return;
    const char *keys[8], *vals[8];
    size_t nm = 0;
    for (char *kv; nm < 8 && (kv = strtok_r(NULL, ";", &save));) {
        char *eq = strchr(kv, '=');
        if (!eq)
            continue;
        *eq = 0;
        keys[nm] = kv;
        vals[nm++] = eq + 1;
    }
    uint16_t y[64];
    for (unsigned i = 0; i < M * N; i++)
        y[i] = (uint16_t)(0x3F80 + 7 * i);
    a4w4_st_tensor_in t = {"y", A4W4_DT_BF16, 2, {M, N}, y, (size_t)M * N * 2};
    char err[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    a4w4_st_write(path, &t, 1, keys, vals, nm, err, sizeof err); /* a bad key: no file */
}

/* One file part: its name line, then a spec or raw bytes. */
static void write_file(const char *dir, const uint8_t *p, size_t n)
{
    char name[72];
    size_t k = 0, i = 0;
    for (; i < n && p[i] != '\n' && k < 64; i++) {
        char c = (char)p[i];
        name[k++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                            c == '.' || c == '-' || c == '_'
                        ? c
                        : '_';
    }
    name[k] = 0;
    while (i < n && p[i] != '\n')
        i++;
    i += i < n;
    if (!k || !strcmp(name, ".") || !strcmp(name, ".."))
        return;
    char spec[520];
    size_t rest = n - i;
    if (rest >= 3 && !memcmp(p + i, "st:", 3) && rest < sizeof spec) {
        memcpy(spec, p + i, rest);
        spec[rest] = 0;
        write_spec(dir, name, spec);
    } else {
        write_bytes(dir, name, p + i, rest);
    }
}

/* The manifest's own word on a case (independent of the reader): 'f' failed, 'l' listed,
 * 'n' in neither, 0 when there is no usable manifest (not an object, or no "cases" array). */
static char manifest_says(const cJSON *m, const char *name)
{
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(m, "cases"), *e;
    if (!cJSON_IsObject(m) || !cJSON_IsArray(cases))
        return 0;
    if (cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "failed"), name))
        return 'f';
    cJSON_ArrayForEach(e, cases) if (cJSON_IsString(e) && !strcmp(e->valuestring, name)) return 'l';
    return 'n';
}

static int file_exists(const char *dir, const char *case_name)
{
    char fname[512], path[1024];
    struct stat st;
    if (a4w4_bundle_file_name(case_name, fname, sizeof fname))
        return 0;
    snprintf(path, sizeof path, "%s/%s", dir, fname);
    return stat(path, &st) == 0;
}

/* Every item through the opened backend, checked against the manifest's word. */
static void run_items(a4w4_backend *b, const char *dir, const cJSON *m,
                      const a4w4_run_identity *id)
{
    for (size_t i = 0; i < NITEMS; i++) {
        a4w4_case c = {.M = items[i].M, .N = items[i].N, .K = 32, .seed = 0};
        snprintf(c.name, sizeof c.name, "%s", items[i].name);
        a4w4_case_data d;
        memset(&d, 0, sizeof d);
        d.M = c.M, d.N = c.N, d.K = c.K;
        a4w4_sample s = {0};
        s.full = 1;
        uint16_t y[64];
        char why[1024] = "";
        a4w4_run_args a = {
            .c = &c, .d = &d, .s = &s, .y = y, .why = why, .whylen = sizeof why, .id = id};
        int rc = b->type->run(b->ctx, &a);
        char says = manifest_says(m, c.name);
        fz_check(rc != A4W4_EUNSUPPORTED, TARGET, "%s: n/a from a bundle", c.name);
        if (rc != A4W4_OK)
            fz_check_err_line(why, "", TARGET);
        fz_check(says != 'f' || (rc != A4W4_OK && rc != A4W4_RUN_SKIP), TARGET,
                 "%s: failed in the manifest, yet run gave %d", c.name, rc);
        fz_check(says != 'n' || rc == A4W4_RUN_SKIP, TARGET,
                 "%s: in no list of the manifest, yet run gave %d", c.name, rc);
        fz_check(rc != A4W4_OK || file_exists(dir, c.name), TARGET, "%s: OK without a file",
                 c.name);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *p[MAX_PARTS];
    size_t len[MAX_PARTS], n = split(data, size, p, len);
    const char *dir = fz_scratch_clear();
    if (len[0])
        write_bytes(dir, "manifest.json", p[0], len[0]);
    if (n > 1 && len[1])
        write_bytes(dir, "contract.txt", p[1], len[1]);
    for (size_t i = 2; i < n; i++)
        write_file(dir, p[i], len[i]);
    cJSON *m = len[0] ? cJSON_ParseWithLength((const char *)p[0], len[0]) : NULL;
    const cJSON *tv = cJSON_GetObjectItemCaseSensitive(m, "tool_version");
    const char *version = cJSON_IsString(tv) ? tv->valuestring : "";
    a4w4_backend b;
    char err[1024] = "";
    if (a4w4_backend_open_type(&a4w4_backend_bundle, dir, &b, err, sizeof err)) {
        fz_check_err_line(err, "bundle ", TARGET);
    } else {
        fz_check(!version[0] || !strcmp(version, A4W4_TOOL_VERSION), TARGET,
                 "opened with a manifest of tool version '%s'", version);
        a4w4_run_identity id = {"00000000000000aa", A4W4_TOOL_VERSION};
        const char *names[NITEMS];
        for (size_t i = 0; i < NITEMS; i++)
            names[i] = items[i].name;
        if (b.type->check_items(b.ctx, &id, names, NITEMS, err, sizeof err))
            fz_check_err_line(err, "bundle ", TARGET);
        else
            fz_accepted();
        run_items(&b, dir, m, &id); /* per case too, as other commands open bundles */
        a4w4_backend_close(&b);
    }
    cJSON_Delete(m);
    return 0;
}
