/* run_keep.c — run --keep-outputs's plan (run_keep.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "run_keep.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "a4w4check.h"
#include "fsutil.h"
#include "gen.h"
#include "kept_outputs.h"

static size_t gemm_backends(const a4w4_run_plan *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->nb; i++)
        n += p->bk[i].type->run != NULL;
    return n;
}

/* 1 when case k will have every output computed on the host (runner.c's check_all, and
 * the sample that holds every output up to A4W4_FULL_CHECK_MACS). */
static int kept_case(const a4w4_run_plan *p, size_t k, int full)
{
    const a4w4_case *c = &p->m.cases[k];
    const a4w4_budget_plan *b = &p->budget;
    if (full || (double)c->M * (double)c->N * (double)c->K <= (double)A4W4_FULL_CHECK_MACS)
        return 1;
    return b->full && b->cases == p->m.cases && k < b->ncases && b->full[k];
}

double a4w4_run_keep_bytes(a4w4_run_plan *p, unsigned shard_i, unsigned shard_n, int full)
{
    double per_backend = 0;
    for (size_t k = 0; k < p->m.ncases; k++)
        if (a4w4_matrix_in_shard(&p->m, k, shard_i, shard_n) != 0 && kept_case(p, k, full))
            per_backend += a4w4_kept_file_bytes(p->m.cases[k].M, p->m.cases[k].N);
    return per_backend * (double)gemm_backends(p);
}

/* DIR and DIR/<backend dir> for each GEMM backend. 0, or -1 after the error line. */
static int make_dirs(const a4w4_run_plan *p, const char *dir)
{
    char err[1024], path[4400], bdir[160];
    if (a4w4_mkdir_p(dir, err, sizeof err)) {
        a4w4_errorf("run: --keep-outputs %s", err);
        return -1;
    }
    for (size_t i = 0; i < p->nb; i++) {
        if (!p->bk[i].type->run)
            continue;
        a4w4_kept_backend_dir(p->bk[i].name, bdir, sizeof bdir);
        snprintf(path, sizeof path, "%s/%s", dir, bdir);
        if (a4w4_mkdir_p(path, err, sizeof err)) {
            a4w4_errorf("run: --keep-outputs %s", err);
            return -1;
        }
    }
    return 0;
}

int a4w4_run_keep_check(a4w4_run_plan *p, const char *dir, double max_bytes, unsigned shard_i,
                        unsigned shard_n, int full)
{
    double bytes = a4w4_run_keep_bytes(p, shard_i, shard_n, full);
    if (bytes <= max_bytes)
        return A4W4_EXIT_PASS;
    a4w4_errorf("run: --keep-outputs %s: the outputs of %zu cases through %zu GEMM backends "
                "(those checked in full) take up to %.1f MiB, more than the limit of %.1f MiB "
                "(--keep-outputs-max-mb raises it)", dir, p->m.ncases, gemm_backends(p),
                bytes / 1048576.0, max_bytes / 1048576.0);
    return A4W4_EXIT_BADINPUT;
}

int a4w4_run_keep_prepare(a4w4_run_plan *p, const char *dir, double max_bytes,
                          unsigned shard_i, unsigned shard_n, int full, int quiet)
{
    double bytes = a4w4_run_keep_bytes(p, shard_i, shard_n, full);
    int rc = a4w4_run_keep_check(p, dir, max_bytes, shard_i, shard_n, full);
    if (rc != A4W4_EXIT_PASS)
        return rc;
    if (make_dirs(p, dir))
        return A4W4_EXIT_IO;
    char abs[PATH_MAX];
    if (!realpath(dir, abs)) {
        a4w4_errorf("run: --keep-outputs %s: cannot resolve its path", dir);
        return A4W4_EXIT_IO;
    }
    cJSON *k = cJSON_AddObjectToObject(p->header, "kept_outputs");
    if (!k || !cJSON_AddStringToObject(k, "dir", abs) ||
        !cJSON_AddStringToObject(k, "layout", "<dir>/<backend>/<case>.safetensors") ||
        !cJSON_AddNumberToObject(k, "planned_bytes", bytes) ||
        !cJSON_AddNumberToObject(k, "limit_bytes", max_bytes)) {
        a4w4_errorf("run: out of memory");
        return A4W4_EXIT_IO;
    }
    if (!quiet)
        fprintf(stderr, "a4w4check run: keeping every GEMM output in %s (up to %.1f MiB)\n", abs,
                bytes / 1048576.0);
    return A4W4_EXIT_PASS;
}
