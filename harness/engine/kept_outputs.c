/* kept_outputs.c — run --keep-outputs's output bundles (kept_outputs.h). */
#include "kept_outputs.h"

#include <stdio.h>
#include <string.h>

#include "safetensors.h"

void a4w4_kept_backend_dir(const char *b, char *buf, size_t len)
{
    size_t k = 0;
    for (; b[k] && k + 1 < len; k++) {
        char ch = b[k];
        int ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                 (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
        buf[k] = ok ? ch : '_';
    }
    if (len)
        buf[k < len ? k : len - 1] = 0;
    if (len > 2 && (!strcmp(buf, ".") || !strcmp(buf, ".."))) /* never a parent directory */
        buf[0] = '_';
}

double a4w4_kept_file_bytes(size_t M, size_t N)
{
    return 2.0 * (double)M * (double)N + 512.0;
}

/* The case name as a file name: '/' as "__" (bundle.h). */
static void case_file(const char *name, char *buf, size_t len)
{
    size_t k = 0;
    for (const char *p = name; *p && k + 3 < len; p++) {
        if (*p == '/') {
            buf[k++] = '_';
            buf[k++] = '_';
        } else {
            buf[k++] = *p;
        }
    }
    buf[k] = 0;
}

int a4w4_kept_write(const char *dir, const char *b, const char *contract, const a4w4_case *c,
                    const uint16_t *y, char *rel, size_t rellen, char *err, size_t errlen)
{
    char bdir[160], cfile[200], path[4400], mv[5][32];
    a4w4_kept_backend_dir(b, bdir, sizeof bdir);
    case_file(c->name, cfile, sizeof cfile);
    snprintf(rel, rellen, "%s/%s.safetensors", bdir, cfile);
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    snprintf(mv[0], sizeof mv[0], "%zu", c->M);
    snprintf(mv[1], sizeof mv[1], "%zu", c->N);
    snprintf(mv[2], sizeof mv[2], "%zu", c->K);
    snprintf(mv[3], sizeof mv[3], "%llu", (unsigned long long)c->seed);
    snprintf(mv[4], sizeof mv[4], "%s", A4W4_TOOL_VERSION);
    const char *keys[] = {"format", "case", "backend", "contract", "M", "N",
                          "K", "regime", "seed", "tool_version"};
    const char *vals[] = {"a4w4-outputs/1", c->name, b, contract, mv[0], mv[1],
                          mv[2], c->regime_text, mv[3], mv[4]};
    a4w4_st_tensor_in t = {"y", A4W4_DT_BF16, 2, {c->M, c->N}, y, 2 * c->M * c->N};
    if (a4w4_st_write(path, &t, 1, keys, vals, 10, err, errlen) != A4W4_ST_OK) {
        rel[0] = 0;
        return -1;
    }
    return 0;
}

void a4w4_kept_entry(const char *dir, const char *b, const a4w4_case *c, const uint16_t *y,
                     const char *why_not, a4w4_entry_result *e)
{
    if (!y) {
        snprintf(e->kept_why, sizeof e->kept_why, "%s", why_not ? why_not : "no outputs");
        return;
    }
    char err[512];
    if (a4w4_kept_write(dir, b, e->contract, c, y, e->kept, sizeof e->kept, err, sizeof err))
        snprintf(e->kept_why, sizeof e->kept_why, "not written: %.140s", err);
}
