/* cmd_hazards.c — `a4w4check hazards`: the hazard map. The small-N/M sweep (the
 * `hazard` set, cases/hazard.csv) through every available backend with the runner, joined per
 * (M, N, K) cell with the static dispatch facts `route --scan` reports (ref/a4w4_dispatch.h:
 * the kernel AITER's untuned heuristic picks in file order, every kernel that can win under
 * some walk order of its table and whether its tile fits N) and with SGLang's layer decision
 * (ref/a4w4_policy.h: does the N <= 128 fence, or the scale-swizzle rule, keep the cell on
 * Triton). Output: a text heat map per K, and with --json the file DIR/hazards.json that the
 * HTML report renders as a heat map.
 *
 * hazards.json (schema "a4w4check-hazards/1"), written atomically:
 * {
 *   "schema": "a4w4check-hazards/1", "tool_version": "0.4.0",
 *   "cases_file": "cases/hazard.csv", "quick": false,
 *   "backends": ["cpu-asm", "cpu-fallback"],            // in run order
 *   "routing": {"gfx": "gfx950", "cu_num": 256, "log2_k_split": 0, "bpreshuffle": 1,
 *               "tuned": "<path>", "kernels": "<path>"},
 *   "policy": {"flag": "SGLANG_ROCM_USE_AITER_FP4_ASM_GEMM", "flag_on": true, "input": "2d"},
 *   "axes": {"M": [1, 2, ...], "N": [16, 32, ...], "K": [256, 512, 1312, 2048]},   // sorted, distinct
 *   "classes": {"fail": "...", "exposed": "...", "order_dependent": "...", "fenced": "...",
 *               "ok": "..."},                         // one-line meaning of each class
 *   "cells": [                                         // one per case, sorted by K, N, M
 *     {"M": 33, "N": 160, "K": 256, "case": "h_m33_n160_k256",
 *      "class": "exposed",                             // the heat-map colour, see classes
 *      "results": {"cpu-asm": "pass", "cpu-fallback": "pass"},  // verdict per backend:
 *                                                      // "pass" | "fail" | "n/a" | "skip"
 *      "pass": ["cpu-asm", "cpu-fallback"], "fail": [], "na": [],
 *      "oracle": "pass",                               // the oracles' own cross-check
 *      "first_failure": null | "backend: first mismatch ...; note",
 *      "route": {"source": "heuristic",                // or tuned, tuned_padded_gl0/gl1
 *                "kernel": "_ZN5aiter...E",            // what AITER runs (file-order walk)
 *                "label": "256x128",                    // tile_MxTile_N[/splitK]
 *                "tile": [256, 128] | null, "kernel_fits_N": false,
 *                "possible_winners": 3,                  // kernels that win under some order
 *                "possible_winners_not_fitting_N": 2,
 *                "winners": ["128x128", "256x128", "32x128"],   // labels, sorted by tile
 *                "not_fitting_N": ["256x128", "32x128"]},
 *      "policy": {"decision": "asm" | "triton", "reason": "asm_quantize" | "small_n" |
 *                 "scale_unsupported" | ..., "fenced": false}}
 *   ],
 *   "totals": {"cells": 4096, "classes": {"fail": 0, "exposed": 768, ...},
 *              "backends": {"cpu-asm": {"pass": 1024, "fail": 0, "n/a": 1024, "skip": 0}},
 *              "oracle_fail": 0, "seconds": 70.1}
 * }
 * Classes: fail (a backend or the oracle failed the cell), else the static class of
 * ref/a4w4_hazard.h (contracts §5, §6) for the untuned heuristic: exposed (the policy puts
 * the layer on the ASM path and a kernel whose tile does not fit N can win); order_dependent
 * (ASM path, every possible winner fits, but more than one can win); fenced (the policy
 * keeps Triton on a cell whose routing is hazardous: more than one possible winner or one
 * that does not fit N); ok (also every tuned cell). */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "a4w4_dispatch.h"
#include "a4w4_hazard.h"
#include "a4w4_policy.h"
#include "a4w4check.h"
#include "backend_list.h"
#include "field_bugs.h"
#include "options.h"
#include "progress.h"
#include "registry.h"
#include "casefile.h"
#include "results.h"
#include "runner.h"
#include "stream.h"

#define DEFAULT_CASES "cases/hazard.csv"
#define DEFAULT_TUNED "cases/aiter/a4w4_blockscale_tuned_gemm.csv"
#define DEFAULT_KERNELS "cases/aiter/gfx950_f4gemm_bf16_per1x32Fp4.csv"
#define MAX_BACKENDS 64
#define MAX_K 16

static const char hazards_usage[] =
    "usage: a4w4check hazards [--k K,K,...] [--quick] [--cases FILE] [--backend a,b,...]\n"
    "                         [--contract B=FILE|TEXT]... [--json] [--out DIR] [--jobs N]\n"
    "                         [--timeout S] [--no-isolate] [--quiet]\n"
    "\n"
    "The hazard map: every (M, N, K) cell of the hazard set (M 1..64, N 16..256 step 16,\n"
    "K 256, 512, 1312, 2048) through every available backend with the runner, joined with the static\n"
    "dispatch scan (the kernel AITER's untuned heuristic picks, how many kernels could win\n"
    "under another walk order of its table, whether their tiles fit N) and SGLang's layer\n"
    "policy (is the cell fenced onto Triton). Routing as `route --scan`: gfx950, 256 CUs,\n"
    "log2_k_split 0, preshuffled weights, the tables under cases/aiter/.\n"
    "\n";

typedef struct {
    const char *cases_arg, *klist, *out_dir;
    a4w4_opt_list backend;
    a4w4_opt_strings contract; /* --contract B=FILE|TEXT, repeatable */
    int quick, json, quiet, jobs;
    int timeout_s, no_isolate; /* timeout_s -1: automatic (registry.h) */
} hazards_opts;

static const a4w4_option hazards_options[] = {
    OPT_STRING("k", hazards_opts, klist, "LIST", "only these K values (default: every K of the case file)"),
    OPT_FLAG("quick", hazards_opts, quick,
             "a subset for tests: M {1, 2, 16, 33, 64} x N {16, 64, 128, 160, 192,\n"
             "256}, K 256 unless --k says otherwise"),
    OPT_STRING("cases", hazards_opts, cases_arg, "FILE", "the sweep (default " DEFAULT_CASES ")"),
    OPT_LIST("backend", hazards_opts, backend, "LIST",
             "comma-separated backends (default every backend available here); a\n"
             "selftest mutant's name works too (mut-rows-small-n shows the fence)"),
    OPT_STRINGS("contract", hazards_opts, contract, "B=FILE|TEXT", A4W4_CONTRACT_HELP),
    OPT_FLAG("json", hazards_opts, json, "also write DIR/hazards.json (atomically)"),
    OPT_STRING("out", hazards_opts, out_dir, "DIR", "where hazards.json goes (default build/out)"),
    OPT_INT("jobs", hazards_opts, jobs, "N", 1, 256,
            "cases run in parallel (default: the CPU count when every backend is\n"
            "thread-safe (the CPU ones, mutants, plugins, bundles), else 1)"),
    OPT_INT("timeout", hazards_opts, timeout_s, "S", 0, 86400, A4W4_TIMEOUT_HELP),
    OPT_FLAG("no-isolate", hazards_opts, no_isolate, A4W4_NO_ISOLATE_HELP),
    OPT_FLAG("quiet", hazards_opts, quiet, "no progress lines"),
    OPT_END(),
};

static const a4w4_command_spec hazards_spec = {
    "hazards", hazards_usage, hazards_options, NULL,
    "exit: 0 every backend passes every cell, 1 a failure, 2 bad input, 3 a GPU backend\n"
    "      without a GPU, 4 hazards.json not written\n"};

enum { CLS_FAIL, CLS_EXPOSED, CLS_ORDER, CLS_FENCED, CLS_OK, NCLS };
static const char *const cls_name[NCLS] = {"fail", "exposed", "order_dependent", "fenced", "ok"};
static const char cls_sym[NCLS] = {'X', '!', '~', 'f', '.'};
static const char *const cls_what[NCLS] = {
    "a backend (or the oracle's cross-check) failed this cell",
    "ASM layer (policy) and a kernel whose tile does not fit N can win",
    "ASM layer, every possible winner fits N, but more than one can win (walk order decides)",
    "the policy keeps Triton on a cell whose routing is hazardous (several possible winners, or "
    "one that does not fit N)",
    "no hazard: tuned, or one possible winner that fits N on the ASM path, or Triton without a "
    "hazard"};

enum { V_PASS, V_FAIL, V_NA, V_SKIP };
static const char *const v_name[4] = {"pass", "fail", "n/a", "skip"};

typedef struct {
    const a4w4_case *c;
    unsigned char v[MAX_BACKENDS];
    int oracle_fail, done, cls;
    char first_fail[400];
    cJSON *entries; /* the runner's entries of this cell (for results.json) */
    /* routing */
    a4w4_route_source source;
    char kernel[160], label[64];
    int tile_m, tile_n, kernel_fits;
    int nwin, nnofit;
    unsigned char win[A4W4_MAX_KERNELS], nofit[A4W4_MAX_KERNELS];
    a4w4_policy_result pol;
    a4w4_hazard hz; /* the static class (ref/a4w4_hazard.h) */
    unsigned bugs;  /* the field bug rules that flag the cell (ref/a4w4_hazard.h) */
} cell;

typedef struct {
    cell *cells;
    size_t ncells, next, ndone;
    int nfail;
    a4w4_runner runner;
    pthread_mutex_t mu;
    int io_error;
    a4w4_progress pg;
    char err[512];
} work;

static int parse_klist(const char *s, int *k, int *nk)
{
    return a4w4_parse_int_list(s, 32, A4W4_DIM_MAX, 32, k, MAX_K, nk) == 0;
}

static int in_ints(const int *v, int n, long x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

/* First mismatch and note of a failing runner entry, one line. */
static void entry_reason(const a4w4_entry_result *e, char *buf, size_t len)
{
    const a4w4_mismatch *fm = e->nfirst ? &e->first[0] : NULL;
    size_t u = (size_t)snprintf(buf, len, "%s: ", e->backend);
    if (fm && u < len) {
        char got[16], exp[16];
        a4w4_mismatch_hex(fm->got, fm->elem_bytes, got);
        a4w4_mismatch_hex(fm->expected, fm->elem_bytes, exp);
        u += (size_t)snprintf(buf + u, len - u, "%zu mismatches, first at (%zu, %zu): got %s "
                              "expected %s", e->mismatches, fm->row, fm->col, got, exp);
    }
    if (e->note[0] && u < len)
        snprintf(buf + u, len - u, "%s%.*s", fm ? "; " : "", (int)(len - u), e->note);
}

static void *worker(void *arg)
{
    work *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        size_t i = w->next < w->ncells && !w->io_error ? w->next++ : w->ncells;
        pthread_mutex_unlock(&w->mu);
        if (i >= w->ncells)
            return NULL;
        cell *cl = &w->cells[i];
        a4w4_entry_list el = {0};
        char err[512];
        a4w4_hstatus rs = a4w4_run_case(&w->runner, cl->c, &el, err, sizeof err);
        if (rs == A4W4_ST_OK && !(cl->entries = a4w4_entry_list_json(&el))) {
            rs = A4W4_ST_NOMEM;
            snprintf(err, sizeof err, "case %s: out of memory for the results", cl->c->name);
        }
        int f = rs == A4W4_ST_OK ? (int)a4w4_entry_list_failures(&el) : -1;
        if (f >= 0) {
            for (size_t k = 0; k < el.n; k++) {
                const a4w4_entry_result *e = &el.items[k];
                int vv = e->verdict == A4W4_VERDICT_PASS ? V_PASS
                       : e->verdict == A4W4_VERDICT_FAIL ? V_FAIL
                       : e->verdict == A4W4_VERDICT_NA ? V_NA : V_SKIP;
                if (vv == V_FAIL && !cl->first_fail[0])
                    entry_reason(e, cl->first_fail, sizeof cl->first_fail);
                if (!strcmp(e->backend, "oracle")) {
                    cl->oracle_fail |= vv == V_FAIL;
                    continue;
                }
                for (size_t b = 0; b < w->runner.nbackends; b++)
                    if (!strcmp(w->runner.backends[b].name, e->backend))
                        cl->v[b] = (unsigned char)vv;
            }
        }
        a4w4_entry_list_free(&el);
        pthread_mutex_lock(&w->mu);
        if (f < 0) {
            w->io_error = 1;
            snprintf(w->err, sizeof w->err, "%s", err);
        }
        cl->done = 1;
        w->ndone++;
        w->nfail += f > 0;
        a4w4_progress_count(&w->pg, w->ndone, w->ncells, w->nfail);
        pthread_mutex_unlock(&w->mu);
    }
}

static int cell_cmp(const void *a, const void *b)
{
    const a4w4_case *x = ((const cell *)a)->c, *y = ((const cell *)b)->c;
    if (x->K != y->K)
        return x->K < y->K ? -1 : 1;
    if (x->N != y->N)
        return x->N < y->N ? -1 : 1;
    if (x->M != y->M)
        return x->M < y->M ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int size_cmp(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorted distinct values of one axis (0 M, 1 N, 2 K) over the cells; malloc'ed. */
static size_t *axis(const cell *cells, size_t n, int which, size_t *count)
{
    size_t *v = malloc((n ? n : 1) * sizeof *v), k = 0;
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++)
        v[i] = which == 0 ? cells[i].c->M : which == 1 ? cells[i].c->N : cells[i].c->K;
    qsort(v, n, sizeof *v, size_cmp);
    for (size_t i = 0; i < n; i++)
        if (!k || v[i] != v[k - 1])
            v[k++] = v[i];
    *count = k;
    return v;
}

/* Kernel labels of a set, sorted by tile (M then N), comma-separated into a JSON array. */
static cJSON *label_array(const a4w4_kernel_table *kt, const unsigned char *set)
{
    cJSON *a = cJSON_CreateArray();
    int idx[A4W4_MAX_KERNELS];
    size_t n = 0;
    for (size_t i = 0; i < kt->n; i++)
        if (set[i])
            idx[n++] = (int)i;
    for (size_t x = 1; x < n; x++)
        for (size_t y = x; y > 0; y--) {
            const a4w4_asm_kernel *p = &kt->rows[idx[y - 1]], *q = &kt->rows[idx[y]];
            if (p->tile_m < q->tile_m || (p->tile_m == q->tile_m && p->tile_n <= q->tile_n))
                break;
            int t = idx[y];
            idx[y] = idx[y - 1];
            idx[y - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        char lab[64];
        a4w4_kernel_label(kt, idx[i], lab, sizeof lab);
        cJSON_AddItemToArray(a, cJSON_CreateString(lab));
    }
    return a;
}

static int route_cell(cell *cl, const a4w4_tuned_table *tuned, const a4w4_kernel_table *kt,
                      const a4w4_heur_params *hp, char *err, size_t errlen)
{
    const a4w4_case *c = cl->c;
    a4w4_route *r = malloc(sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char e[512];
    if (a4w4_route_shape(tuned, kt, hp, (int)c->M, (int)c->N, (int)c->K, r, e, sizeof e)) {
        snprintf(err, errlen, "%s: route M %zu N %zu K %zu: %s", c->name, c->M, c->N, c->K, e);
        free(r);
        return -1;
    }
    cl->source = r->source;
    snprintf(cl->kernel, sizeof cl->kernel, "%s", r->kernel ? r->kernel : "");
    if (r->kernel_index >= 0)
        a4w4_kernel_label(kt, r->kernel_index, cl->label, sizeof cl->label);
    else
        snprintf(cl->label, sizeof cl->label, "%s", r->is_asm ? "?" : "ck");
    cl->tile_m = r->tile_m;
    cl->tile_n = r->tile_n;
    cl->kernel_fits = r->tile_m ? !(r->fit & A4W4_FIT_N_MASK) : 1;
    for (size_t i = 0; i < r->ncand_any; i++) {
        cl->nwin++;
        if (r->cand_any[i] < 0)
            continue;
        cl->win[r->cand_any[i]] = 1;
        if (r->cand_fit[i] & A4W4_FIT_N_MASK) {
            cl->nofit[r->cand_any[i]] = 1;
            cl->nnofit++;
        }
    }
    int rc = a4w4_policy_decide(1, hp->gfx, c->N, 2, c->N, c->K / 32, A4W4_INPUT_TENSOR_2D, 0,
                                &cl->pol);
    if (rc == A4W4_OK)
        rc = a4w4_hazard_of_route((int)c->M, (int)c->N, (int)c->K, r, &cl->pol, &cl->hz);
    a4w4_bug_shape bs;
    a4w4_bug_shape_of((int)c->M, (int)c->N, (int)c->K, r, kt, hp->bpreshuffle, &cl->pol, &bs);
    cl->bugs = a4w4_bugs_of(&bs);
    free(r);
    if (rc != A4W4_OK) {
        snprintf(err, errlen, "%s: policy N %zu K %zu: %s", c->name, c->N, c->K,
                 a4w4_status_str(rc));
        return -1;
    }
    return 0;
}

static void classify(cell *cl, size_t nb)
{
    int fail = cl->oracle_fail;
    for (size_t b = 0; b < nb; b++)
        fail |= cl->v[b] == V_FAIL;
    /* the static class is ref's (a4w4_hazard_class order); "fail" is the backends' */
    static const int of_ref[] = {CLS_OK, CLS_EXPOSED, CLS_ORDER, CLS_FENCED};
    cl->cls = fail ? CLS_FAIL : of_ref[cl->hz.cls];
}

static void print_map(const cell *cells, size_t n, const size_t *Ms, size_t nM, const size_t *Ns,
                      size_t nN, size_t K)
{
    /* symbol grid [M][N] for this K ('' where the matrix has no cell) */
    char *g = malloc(nM * (nN + 1));
    if (!g)
        return;
    memset(g, ' ', nM * (nN + 1));
    for (size_t i = 0; i < n; i++) {
        if (cells[i].c->K != K)
            continue;
        size_t mi = 0, ni = 0;
        while (Ms[mi] != cells[i].c->M)
            mi++;
        while (Ns[ni] != cells[i].c->N)
            ni++;
        g[mi * (nN + 1) + ni] = cls_sym[cells[i].cls];
    }
    printf("\nK=%zu%*sN:", K, 9, "");
    for (size_t j = 0; j < nN; j++)
        printf("%4zu", Ns[j]);
    printf("\n");
    for (size_t a = 0; a < nM;) {
        size_t b = a;
        while (b + 1 < nM && !memcmp(g + (b + 1) * (nN + 1), g + a * (nN + 1), nN))
            b++;
        char mr[32];
        if (a == b)
            snprintf(mr, sizeof mr, "M=%zu", Ms[a]);
        else
            snprintf(mr, sizeof mr, "M=%zu..%zu", Ms[a], Ms[b]);
        printf("  %-14s  ", mr);
        for (size_t j = 0; j < nN; j++)
            printf("%4c", g[a * (nN + 1) + j]);
        printf("\n");
        a = b + 1;
    }
    free(g);
}

/* ---- the command ------------------------------------------------------------------------ */

static const int quick_m[] = {1, 2, 16, 33, 64}, quick_n[] = {16, 64, 128, 160, 192, 256};

/* Everything a hazard map is made of: the cells (cases of the sweep that pass the filters,
 * sorted by K, N, M), the backends, the dispatch tables, and after the sweep the counts. */
typedef struct {
    int ks[MAX_K], nk;
    const char *cases_path;
    a4w4_case *cases;
    size_t ncases;
    cell *cells;
    size_t n;
    a4w4_backend bk[MAX_BACKENDS];
    size_t nbk;
    a4w4_heur_params hp;
    const char *tpath, *kpath;
    a4w4_tuned_table tuned;
    a4w4_kernel_table kt;
    int jobs;
    double secs;
    size_t ncls[NCLS], vcount[MAX_BACKENDS][4], oracle_fail;
    a4w4_bug_shapes bugs[A4W4_BUG_COUNT]; /* the default tuned table's shapes per rule */
    size_t ntuned;
    size_t *Ms, *Ns, *Ks, nM, nN, nK;
    char cbuf[4096], tbuf[4096], kbuf[4096];
} hazards_plan;

/* The K filter: --k's values, or 256 for --quick. Returns the exit code. */
static int plan_k(const hazards_opts *o, hazards_plan *p)
{
    if (o->klist && !parse_klist(o->klist, p->ks, &p->nk)) {
        a4w4_errorf("hazards: --k '%s': K values must be positive multiples of 32, "
                    "comma-separated, at most %d", o->klist, MAX_K);
        return A4W4_EXIT_BADINPUT;
    }
    if (o->quick && !o->klist) {
        p->ks[0] = 256;
        p->nk = 1;
    }
    return A4W4_EXIT_PASS;
}

/* The cells: the sweep's cases that pass --k and --quick, sorted. Returns the exit code. */
static int plan_cells(const hazards_opts *o, hazards_plan *p)
{
    char err[1024];
    p->cases_path = o->cases_arg ? o->cases_arg : a4w4_data_path(DEFAULT_CASES, p->cbuf, sizeof p->cbuf);
    if (a4w4_casefile_read(p->cases_path, &p->cases, &p->ncases, err, sizeof err)) {
        a4w4_errorf("hazards: %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    p->cells = calloc(p->ncases ? p->ncases : 1, sizeof *p->cells);
    if (!p->cells) {
        a4w4_errorf("hazards: out of memory");
        return A4W4_EXIT_BADINPUT;
    }
    for (size_t i = 0; i < p->ncases; i++) {
        const a4w4_case *c = &p->cases[i];
        if ((p->nk && !in_ints(p->ks, p->nk, (long)c->K)) ||
            (o->quick && (!in_ints(quick_m, 5, (long)c->M) || !in_ints(quick_n, 6, (long)c->N))))
            continue;
        if (c->M > A4W4_DIM_MAX || c->N > A4W4_DIM_MAX || c->K > A4W4_DIM_MAX) {
            a4w4_errorf("hazards: %s: case %s: M, N and K must be at most %d", p->cases_path,
                        c->name, A4W4_DIM_MAX);
            return A4W4_EXIT_BADINPUT;
        }
        memset(p->cells[p->n].v, V_SKIP, sizeof p->cells[p->n].v); /* until the runner says otherwise */
        p->cells[p->n++].c = c;
    }
    if (!p->n) {
        a4w4_errorf("hazards: %s: no case matches%s%s%s", p->cases_path, o->klist ? " --k " : "",
                    o->klist ? o->klist : "", o->quick ? " and the --quick subset" : "");
        return A4W4_EXIT_BADINPUT;
    }
    qsort(p->cells, p->n, sizeof *p->cells, cell_cmp);
    return A4W4_EXIT_PASS;
}

/* Routing and policy per cell (static; before the long part, so bad tables stop early).
 * Returns the exit code. */
static int plan_routes(hazards_plan *p)
{
    char err[1024];
    p->hp = (a4w4_heur_params){"gfx950", 256, 0, 1};
    p->tpath = a4w4_data_path(DEFAULT_TUNED, p->tbuf, sizeof p->tbuf);
    p->kpath = a4w4_data_path(DEFAULT_KERNELS, p->kbuf, sizeof p->kbuf);
    if (a4w4_tuned_load(&p->tuned, p->tpath, err, sizeof err) != A4W4_OK) {
        a4w4_errorf("hazards: tuned table %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    if (a4w4_kernels_load(&p->kt, p->kpath, NULL, err, sizeof err) != A4W4_OK) {
        a4w4_errorf("hazards: kernel table %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    for (size_t i = 0; i < p->n; i++)
        if (route_cell(&p->cells[i], &p->tuned, &p->kt, &p->hp, err, sizeof err)) {
            a4w4_errorf("hazards: %s", err);
            return A4W4_EXIT_BADINPUT;
        }
    int(*shapes)[3] = a4w4_tuned_shapes(&p->tuned, &p->ntuned);
    int bad = !shapes || a4w4_field_bugs_of((const int(*)[3])shapes, p->ntuned, &p->tuned,
                                            &p->kt, &p->hp, p->bugs);
    free(shapes);
    if (bad) {
        a4w4_errorf("hazards: out of memory");
        return A4W4_EXIT_BADINPUT;
    }
    return A4W4_EXIT_PASS;
}

/* Cells, backends, routes. Returns the exit code. */
static int plan_hazards(const hazards_opts *o, hazards_plan *p)
{
    int rc = plan_k(o, p);
    if (rc == A4W4_EXIT_PASS)
        rc = plan_cells(o, p);
    if (rc != A4W4_EXIT_PASS)
        return rc;
    a4w4_backend_list_opts bo = {"hazards", MAX_BACKENDS, 1, o->quiet};
    if ((rc = a4w4_isolation_options("hazards", o->no_isolate, o->timeout_s)) != A4W4_EXIT_PASS ||
        (rc = a4w4_backend_list_open(&bo, &o->backend, p->bk, &p->nbk)) != A4W4_EXIT_PASS ||
        (rc = a4w4_backend_contracts_apply("hazards", &o->contract, p->bk, p->nbk)) !=
            A4W4_EXIT_PASS)
        return rc;
    if (!p->nbk) {
        a4w4_errorf("hazards: no backend to run");
        return A4W4_EXIT_BADINPUT;
    }
    return plan_routes(p);
}

/* --jobs, or the CPU count when every backend is thread-safe, else 1; at most a job
 * per cell. */
static int job_count(const hazards_opts *o, const hazards_plan *p)
{
    long jobs = o->jobs;
    if (!jobs) {
        int all_safe = 1; /* the runner serializes the others: more jobs would only wait */
        for (size_t b = 0; b < p->nbk; b++)
            all_safe &= p->bk[b].type->thread_safe;
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = all_safe && ncpu > 1 ? (ncpu > 64 ? 64 : ncpu) : 1;
    }
    if ((size_t)jobs > p->n)
        jobs = (long)p->n;
    return (int)jobs;
}

/* The sweep: every cell through the runner on p->jobs threads. Returns the exit code. */
static int run_sweep(const hazards_opts *o, hazards_plan *p)
{
    p->jobs = job_count(o, p);
    work w;
    memset(&w, 0, sizeof w);
    w.cells = p->cells;
    w.ncells = p->n;
    w.runner.backends = p->bk;
    w.runner.nbackends = p->nbk;
    a4w4_progress_start(&w.pg, "hazards", o->quiet, 1);
    pthread_mutex_init(&w.mu, NULL);
    pthread_t th[256];
    long started = 0;
    for (long j = 1; j < p->jobs; j++)
        if (pthread_create(&th[started], NULL, worker, &w) == 0)
            started++;
    worker(&w);
    for (long j = 0; j < started; j++)
        pthread_join(th[j], NULL);
    pthread_mutex_destroy(&w.mu);
    p->secs = a4w4_now() - w.pg.t0;
    if (w.io_error) {
        a4w4_errorf("hazards: %s", w.err);
        return A4W4_EXIT_BADINPUT;
    }
    return A4W4_EXIT_PASS;
}

/* Classes, counts per class and per backend verdict, the axes. Returns the exit code. */
static int tally(hazards_plan *p)
{
    for (size_t i = 0; i < p->n; i++) {
        classify(&p->cells[i], p->nbk);
        p->ncls[p->cells[i].cls]++;
        p->oracle_fail += (size_t)p->cells[i].oracle_fail;
        for (size_t b = 0; b < p->nbk; b++)
            p->vcount[b][p->cells[i].v[b]]++;
    }
    p->Ms = axis(p->cells, p->n, 0, &p->nM);
    p->Ns = axis(p->cells, p->n, 1, &p->nN);
    p->Ks = axis(p->cells, p->n, 2, &p->nK);
    if (!p->Ms || !p->Ns || !p->Ks) {
        a4w4_errorf("hazards: out of memory");
        return A4W4_EXIT_BADINPUT;
    }
    return A4W4_EXIT_PASS;
}

/* The text map on stdout: the run line, the legend, a map per K, the counts, the failures. */
static void print_text(const hazards_opts *o, const hazards_plan *p)
{
    printf("hazards: %zu cells from %s%s; backends", p->n, p->cases_path,
           o->quick ? " (--quick subset)" : "");
    for (size_t b = 0; b < p->nbk; b++)
        printf("%s %s", b ? "," : "", p->bk[b].name);
    printf("; routing gfx950, 256 CUs, log2_k_split 0, bpreshuffle 1; policy: %s on, 2-D input\n",
           A4W4_POLICY_FLAG);
    printf("legend:");
    for (int c = 0; c < NCLS; c++)
        printf("%s %c %s", c ? ";" : "", cls_sym[c], cls_name[c]);
    printf("\n");
    for (int c = 0; c < NCLS; c++)
        printf("  %c %-16s %s\n", cls_sym[c], cls_name[c], cls_what[c]);
    for (size_t k = 0; k < p->nK; k++)
        print_map(p->cells, p->n, p->Ms, p->nM, p->Ns, p->nN, p->Ks[k]);
    printf("\ncells:");
    for (int c = 0; c < NCLS; c++)
        printf("%s %zu %s", c ? "," : "", p->ncls[c], cls_name[c]);
    printf("\n");
    for (size_t b = 0; b < p->nbk; b++)
        printf("%-24s %zu pass, %zu fail, %zu n/a%s\n", p->bk[b].name, p->vcount[b][V_PASS],
               p->vcount[b][V_FAIL], p->vcount[b][V_NA],
               p->vcount[b][V_SKIP] ? " (some skipped)" : "");
    if (p->oracle_fail)
        printf("oracle cross-check failed on %zu cells\n", p->oracle_fail);
    size_t shown = 0;
    for (size_t i = 0; i < p->n && shown < 20; i++)
        if (p->cells[i].cls == CLS_FAIL) {
            printf("FAIL M=%zu N=%zu K=%zu (%s) %s\n", p->cells[i].c->M, p->cells[i].c->N,
                   p->cells[i].c->K, p->cells[i].c->name, p->cells[i].first_fail);
            shown++;
        }
    if (p->ncls[CLS_FAIL] > shown)
        printf("... %zu more failing cells (see --json)\n", p->ncls[CLS_FAIL] - shown);
    size_t ncell[A4W4_BUG_COUNT] = {0};
    for (size_t i = 0; i < p->n; i++)
        for (int b = 0; b < A4W4_BUG_COUNT; b++)
            ncell[b] += (p->cells[i].bugs >> b) & 1u;
    char what[600];
    snprintf(what, sizeof what, "the default tuned table's %zu shapes (%s)", p->ntuned, p->tpath);
    a4w4_print_field_bugs(stdout, p->bugs, what, p->ntuned, 12);
    size_t nrules;
    const a4w4_bug_rule *rules = a4w4_bug_rules(&nrules);
    printf("  cells of this map each rule flags:");
    for (int b = 0; b < A4W4_BUG_COUNT; b++)
        printf("%s %s %zu", b ? "," : "", rules[b].id, ncell[b]);
    printf("\n");
    printf("%.1f s, %d job%s\n", p->secs, p->jobs, p->jobs == 1 ? "" : "s");
}

/* One cell of hazards.json. */
static cJSON *cell_json(const hazards_plan *p, const cell *cl)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "M", (double)cl->c->M);
    cJSON_AddNumberToObject(o, "N", (double)cl->c->N);
    cJSON_AddNumberToObject(o, "K", (double)cl->c->K);
    cJSON_AddStringToObject(o, "case", cl->c->name);
    cJSON_AddStringToObject(o, "class", cls_name[cl->cls]);
    cJSON *res = cJSON_AddObjectToObject(o, "results");
    cJSON *pa = cJSON_AddArrayToObject(o, "pass");
    cJSON *fa = cJSON_AddArrayToObject(o, "fail");
    cJSON *na = cJSON_AddArrayToObject(o, "na");
    for (size_t b = 0; b < p->nbk; b++) {
        cJSON_AddStringToObject(res, p->bk[b].name, v_name[cl->v[b]]);
        cJSON *to = cl->v[b] == V_PASS ? pa : cl->v[b] == V_FAIL ? fa
                  : cl->v[b] == V_NA ? na : NULL;
        if (to)
            cJSON_AddItemToArray(to, cJSON_CreateString(p->bk[b].name));
    }
    cJSON_AddStringToObject(o, "oracle", cl->oracle_fail ? "fail" : "pass");
    if (cl->first_fail[0])
        cJSON_AddStringToObject(o, "first_failure", cl->first_fail);
    else
        cJSON_AddNullToObject(o, "first_failure");
    cJSON *r = cJSON_AddObjectToObject(o, "route");
    cJSON_AddStringToObject(r, "source", a4w4_route_source_name(cl->source));
    cJSON_AddStringToObject(r, "kernel", cl->kernel);
    cJSON_AddStringToObject(r, "label", cl->label);
    if (cl->tile_m) {
        int tile[2] = {cl->tile_m, cl->tile_n};
        cJSON_AddItemToObject(r, "tile", cJSON_CreateIntArray(tile, 2));
    } else
        cJSON_AddNullToObject(r, "tile");
    cJSON_AddBoolToObject(r, "kernel_fits_N", cl->kernel_fits);
    cJSON_AddNumberToObject(r, "possible_winners", cl->nwin);
    cJSON_AddNumberToObject(r, "possible_winners_not_fitting_N", cl->nnofit);
    cJSON_AddItemToObject(r, "winners", label_array(&p->kt, cl->win));
    cJSON_AddItemToObject(r, "not_fitting_N", label_array(&p->kt, cl->nofit));
    cJSON *pj = cJSON_AddObjectToObject(o, "policy");
    cJSON_AddStringToObject(pj, "decision", a4w4_decision_name(cl->pol.decision));
    cJSON_AddStringToObject(pj, "reason", a4w4_policy_reason_name(cl->pol.reason));
    cJSON_AddBoolToObject(pj, "fenced", cl->pol.decision != A4W4_DECIDE_ASM);
    cJSON *fb = cJSON_AddArrayToObject(o, "field_bugs");
    size_t nr;
    const a4w4_bug_rule *br = a4w4_bug_rules(&nr);
    for (size_t b = 0; b < nr; b++)
        if ((cl->bugs >> b) & 1u)
            cJSON_AddItemToArray(fb, cJSON_CreateString(br[b].id));
    return o;
}

/* The header fields of hazards.json: schema, backends, routing, policy, axes, classes. */
static void hazards_doc_head(const hazards_opts *o, const hazards_plan *p, cJSON *doc)
{
    cJSON_AddStringToObject(doc, "schema", "a4w4check-hazards/1");
    cJSON_AddStringToObject(doc, "tool_version", A4W4_TOOL_VERSION);
    cJSON_AddStringToObject(doc, "cases_file", p->cases_path);
    cJSON_AddBoolToObject(doc, "quick", o->quick);
    cJSON *ba = cJSON_AddArrayToObject(doc, "backends");
    for (size_t b = 0; b < p->nbk; b++)
        cJSON_AddItemToArray(ba, cJSON_CreateString(p->bk[b].name));
    cJSON *ro = cJSON_AddObjectToObject(doc, "routing");
    cJSON_AddStringToObject(ro, "gfx", p->hp.gfx);
    cJSON_AddNumberToObject(ro, "cu_num", p->hp.num_cu);
    cJSON_AddNumberToObject(ro, "log2_k_split", p->hp.log2_k_split);
    cJSON_AddNumberToObject(ro, "bpreshuffle", p->hp.bpreshuffle);
    cJSON_AddStringToObject(ro, "tuned", p->tpath);
    cJSON_AddStringToObject(ro, "kernels", p->kpath);
    cJSON *po = cJSON_AddObjectToObject(doc, "policy");
    cJSON_AddStringToObject(po, "flag", A4W4_POLICY_FLAG);
    cJSON_AddBoolToObject(po, "flag_on", 1);
    cJSON_AddStringToObject(po, "input", "2d");
    cJSON *ax = cJSON_AddObjectToObject(doc, "axes");
    const size_t *av[3] = {p->Ms, p->Ns, p->Ks};
    size_t an[3] = {p->nM, p->nN, p->nK};
    static const char *const anames[3] = {"M", "N", "K"};
    for (int a = 0; a < 3; a++) {
        cJSON *arr = cJSON_AddArrayToObject(ax, anames[a]);
        for (size_t i = 0; i < an[a]; i++)
            cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)av[a][i]));
    }
    cJSON *cd = cJSON_AddObjectToObject(doc, "classes");
    for (int c = 0; c < NCLS; c++)
        cJSON_AddStringToObject(cd, cls_name[c], cls_what[c]);
}

/* hazards.json (the schema at the top of this file). */
static cJSON *hazards_doc(const hazards_opts *o, const hazards_plan *p)
{
    cJSON *doc = cJSON_CreateObject();
    hazards_doc_head(o, p, doc);
    cJSON *ca = cJSON_AddArrayToObject(doc, "cells");
    for (size_t i = 0; i < p->n; i++)
        cJSON_AddItemToArray(ca, cell_json(p, &p->cells[i]));
    cJSON *tot = cJSON_AddObjectToObject(doc, "totals");
    cJSON_AddNumberToObject(tot, "cells", (double)p->n);
    cJSON *tc = cJSON_AddObjectToObject(tot, "classes");
    for (int c = 0; c < NCLS; c++)
        cJSON_AddNumberToObject(tc, cls_name[c], (double)p->ncls[c]);
    cJSON *tb = cJSON_AddObjectToObject(tot, "backends");
    for (size_t b = 0; b < p->nbk; b++) {
        cJSON *x = cJSON_AddObjectToObject(tb, p->bk[b].name);
        for (int v = 0; v < 4; v++)
            cJSON_AddNumberToObject(x, v_name[v], (double)p->vcount[b][v]);
    }
    cJSON_AddNumberToObject(tot, "oracle_fail", (double)p->oracle_fail);
    cJSON_AddNumberToObject(tot, "seconds", p->secs);
    /* the field's bug rules with the default tuned table's shapes each flags */
    cJSON_AddItemToObject(doc, "field_bugs", a4w4_field_bugs_json(p->bugs));
    return doc;
}

/* DIR/hazards.json, atomically. Returns the exit code (PASS: written). */
static int write_hazards_json(const hazards_opts *o, const hazards_plan *p)
{
    char err[1024], path[4096];
    cJSON *doc = hazards_doc(o, p);
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    snprintf(path, sizeof path, "%s/hazards.json", o->out_dir);
    int rc = A4W4_EXIT_PASS;
    if (!text || a4w4_mkdir_p(o->out_dir, err, sizeof err) ||
        a4w4_write_atomic(path, text, strlen(text), err, sizeof err)) {
        a4w4_errorf("hazards: --out %s: %s", o->out_dir, text ? err : "out of memory");
        rc = A4W4_EXIT_IO;
    } else {
        printf("wrote %s\n", path);
    }
    free(text);
    return rc;
}

/* The same cells as a results document, so `a4w4check report DIR --format html` draws the
 * hazard heat map from this run (its schema is that of `run`). Returns the exit code. */
static int write_results_doc(const hazards_opts *o, const hazards_plan *p)
{
    char err[1024];
    cJSON *res = cJSON_CreateObject();
    cJSON_AddStringToObject(res, "schema", A4W4_RESULTS_SCHEMA);
    cJSON_AddStringToObject(res, "tool", "a4w4check");
    cJSON_AddStringToObject(res, "tool_version", A4W4_TOOL_VERSION);
    cJSON_AddStringToObject(res, "set", "hazard");
    cJSON_AddStringToObject(res, "cases_file", p->cases_path);
    cJSON *bl = cJSON_AddArrayToObject(res, "backends");
    cJSON_AddItemToArray(bl, cJSON_CreateString("oracle"));
    for (size_t b = 0; b < p->nbk; b++)
        cJSON_AddItemToArray(bl, cJSON_CreateString(p->bk[b].name));
    a4w4_backends_contracts_json(res, p->bk, p->nbk);
    cJSON *all = cJSON_AddArrayToObject(res, "cases");
    for (size_t i = 0; i < p->n; i++) {
        cJSON *e;
        if (p->cells[i].entries)
            cJSON_ArrayForEach(e, p->cells[i].entries) cJSON_AddItemToArray(all, cJSON_Duplicate(e, 1));
    }
    int rc = A4W4_EXIT_PASS;
    if (a4w4_results_write(res, o->out_dir, err, sizeof err)) {
        a4w4_errorf("hazards: --out %s", err);
        rc = A4W4_EXIT_IO;
    } else {
        printf("wrote %s/results.json and %s/summary.md (render the heat map: a4w4check "
               "report %s --format html)\n", o->out_dir, o->out_dir, o->out_dir);
    }
    cJSON_Delete(res);
    return rc;
}

/* hazards.json, then the results document. Returns rc, or A4W4_EXIT_IO when either could
 * not be written. */
static int write_json_outputs(const hazards_opts *o, const hazards_plan *p, int rc)
{
    if (write_hazards_json(o, p) != A4W4_EXIT_PASS || write_results_doc(o, p) != A4W4_EXIT_PASS)
        return A4W4_EXIT_IO;
    return rc;
}

static void plan_free(hazards_plan *p)
{
    a4w4_backend_list_close(p->bk, p->nbk);
    a4w4_field_bugs_free(p->bugs);
    a4w4_tuned_free(&p->tuned);
    a4w4_kernels_free(&p->kt);
    free(p->Ms);
    free(p->Ns);
    free(p->Ks);
    for (size_t i = 0; p->cells && i < p->n; i++)
        cJSON_Delete(p->cells[i].entries);
    free(p->cells);
    free(p->cases);
}

int cmd_hazards(int argc, char **argv)
{
    const char *contract_v[MAX_BACKENDS];
    hazards_opts o = {NULL, NULL, "build/out", {0}, {contract_v, 0, MAX_BACKENDS}, 0, 0, 0, 0, -1, 0};
    a4w4_args args;
    int rc = a4w4_options_parse(&hazards_spec, &o, argc, argv, &args);
    if (rc != A4W4_OPTS_CONTINUE)
        return rc;
    hazards_plan p;
    memset(&p, 0, sizeof p);
    rc = plan_hazards(&o, &p);
    if (rc == A4W4_EXIT_PASS)
        rc = run_sweep(&o, &p);
    if (rc == A4W4_EXIT_PASS)
        rc = tally(&p);
    if (rc == A4W4_EXIT_PASS) {
        print_text(&o, &p);
        rc = p.ncls[CLS_FAIL] ? A4W4_EXIT_MISMATCH : A4W4_EXIT_PASS;
        if (o.json)
            rc = write_json_outputs(&o, &p, rc);
    }
    plan_free(&p);
    if (fflush(stdout) != 0) {
        a4w4_errorf("hazards: cannot write the output");
        return A4W4_EXIT_IO;
    }
    return rc;
}
