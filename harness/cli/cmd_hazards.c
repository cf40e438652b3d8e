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
 *   "axes": {"M": [1, 2, ...], "N": [16, 32, ...], "K": [256, 2048]},   // sorted, distinct
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
 *   "totals": {"cells": 2048, "classes": {"fail": 0, "exposed": 128, ...},
 *              "backends": {"cpu-asm": {"pass": 1024, "fail": 0, "n/a": 1024, "skip": 0}},
 *              "oracle_fail": 0, "seconds": 70.1}
 * }
 * Classes (first that applies): fail (a backend or the oracle failed the cell); exposed
 * (the policy puts the layer on the ASM path and a kernel whose tile does not fit N can win);
 * order_dependent (ASM path, every possible winner fits, but more than one can win); fenced
 * (the policy keeps Triton on a cell whose routing is hazardous: more than one possible
 * winner or one that does not fit N); ok. */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "a4w4_dispatch.h"
#include "a4w4_policy.h"
#include "a4w4check.h"
#include "registry.h"
#include "casefile.h"
#include "mutants.h"
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
    "                         [--json] [--out DIR] [--jobs N] [--quiet]\n"
    "\n"
    "The hazard map: every (M, N, K) cell of the hazard set (M 1..64, N 16..256 step 16,\n"
    "K 256 and 2048) through every available backend with the runner, joined with the static\n"
    "dispatch scan (the kernel AITER's untuned heuristic picks, how many kernels could win\n"
    "under another walk order of its table, whether their tiles fit N) and SGLang's layer\n"
    "policy (is the cell fenced onto Triton). Routing as `route --scan`: gfx950, 256 CUs,\n"
    "log2_k_split 0, preshuffled weights, the tables under cases/aiter/.\n"
    "\n"
    "  --k LIST        only these K values (default: every K of the case file)\n"
    "  --quick         a subset for tests: M {1, 2, 16, 33, 64} x N {16, 64, 128, 160, 192,\n"
    "                  256}, K 256 unless --k says otherwise\n"
    "  --cases FILE    the sweep (default " DEFAULT_CASES ")\n"
    "  --backend LIST  comma-separated backends (default every backend available here); a\n"
    "                  selftest mutant's name works too (mut-rows-small-n shows the fence)\n"
    "  --json          also write DIR/hazards.json (atomically)\n"
    "  --out DIR       where hazards.json goes (default build/out)\n"
    "  --jobs N        cases run in parallel (default: the CPU count when every backend is\n"
    "                  thread-safe (the CPU ones, mutants, plugins, bundles), else 1)\n"
    "  --quiet         no progress lines\n"
    "\n"
    "exit: 0 every backend passes every cell, 1 a failure, 2 bad input, 3 a GPU backend\n"
    "      without a GPU, 4 hazards.json not written\n";

enum { CLS_FAIL, CLS_EXPOSED, CLS_ORDER, CLS_FENCED, CLS_OK, NCLS };
static const char *const cls_name[NCLS] = {"fail", "exposed", "order_dependent", "fenced", "ok"};
static const char cls_sym[NCLS] = {'X', '!', '~', 'f', '.'};
static const char *const cls_what[NCLS] = {
    "a backend (or the oracle's cross-check) failed this cell",
    "ASM layer (policy) and a kernel whose tile does not fit N can win",
    "ASM layer, every possible winner fits N, but more than one can win (walk order decides)",
    "the policy keeps Triton on a cell whose routing is hazardous (several possible winners, or "
    "one that does not fit N)",
    "no hazard: one possible winner that fits N on the ASM path, or Triton without a hazard"};

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
} cell;

typedef struct {
    cell *cells;
    size_t ncells, next, ndone;
    int nfail;
    a4w4_runner runner;
    pthread_mutex_t mu;
    int quiet, tty, io_error;
    double t0, last;
    char err[512];
} work;

static int parse_klist(const char *s, int *k, int *nk)
{
    *nk = 0;
    for (const char *p = s; *p;) {
        char *end = NULL;
        long v = strtol(p, &end, 10);
        if (end == p || v < 32 || v % 32 || v > A4W4_DIM_MAX || *nk >= MAX_K ||
            (*end && *end != ','))
            return 0;
        k[(*nk)++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return *nk > 0;
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
        double now = a4w4_now();
        if (!w->quiet && (now - w->last >= 5.0 || w->ndone == w->ncells)) {
            double el = now - w->t0;
            fprintf(stderr, "%sa4w4check hazards: [%zu/%zu] %d failing, %.0fs elapsed, ETA %.0fs%s",
                    w->tty ? "\r\033[K" : "", w->ndone, w->ncells, w->nfail, el,
                    el / (double)w->ndone * (double)(w->ncells - w->ndone),
                    w->tty && w->ndone < w->ncells ? "" : "\n");
            fflush(stderr);
            w->last = now;
        }
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
    free(r);
    int rc = a4w4_policy_decide(1, hp->gfx, c->N, 2, c->N, c->K / 32, A4W4_INPUT_TENSOR_2D, 0,
                                &cl->pol);
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
    int hazardous = cl->nwin > 1 || cl->nnofit > 0;
    if (fail)
        cl->cls = CLS_FAIL;
    else if (cl->pol.decision == A4W4_DECIDE_ASM)
        cl->cls = cl->nnofit ? CLS_EXPOSED : cl->nwin > 1 ? CLS_ORDER : CLS_OK;
    else
        cl->cls = hazardous ? CLS_FENCED : CLS_OK;
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

int cmd_hazards(int argc, char **argv)
{
    if (a4w4_wants_help(argc, argv)) {
        fputs(hazards_usage, stdout);
        return A4W4_EXIT_PASS;
    }
    const char *cases_arg = NULL, *klist = NULL, *blist = NULL, *out_dir = "build/out";
    int quick = 0, json = 0, quiet = 0;
    long jobs = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int takes = !strcmp(a, "--k") || !strcmp(a, "--cases") || !strcmp(a, "--backend") ||
                    !strcmp(a, "--out") || !strcmp(a, "--jobs");
        if (takes && i + 1 >= argc) {
            a4w4_errorf("hazards: %s needs a value", a);
            return A4W4_EXIT_BADINPUT;
        }
        if (!strcmp(a, "--k"))
            klist = argv[++i];
        else if (!strcmp(a, "--cases"))
            cases_arg = argv[++i];
        else if (!strcmp(a, "--backend"))
            blist = argv[++i];
        else if (!strcmp(a, "--out"))
            out_dir = argv[++i];
        else if (!strcmp(a, "--jobs")) {
            char *end;
            jobs = strtol(argv[++i], &end, 10);
            if (*end || jobs < 1 || jobs > 256) {
                a4w4_errorf("hazards: --jobs '%s' is not an integer in 1..256", argv[i]);
                return A4W4_EXIT_BADINPUT;
            }
        } else if (!strcmp(a, "--quick"))
            quick = 1;
        else if (!strcmp(a, "--json"))
            json = 1;
        else if (!strcmp(a, "--quiet"))
            quiet = 1;
        else {
            a4w4_errorf("hazards: unknown argument '%s' (see a4w4check hazards --help)", a);
            return A4W4_EXIT_BADINPUT;
        }
    }
    int ks[MAX_K], nk = 0;
    if (klist && !parse_klist(klist, ks, &nk)) {
        a4w4_errorf("hazards: --k '%s': K values must be positive multiples of 32, "
                    "comma-separated, at most %d", klist, MAX_K);
        return A4W4_EXIT_BADINPUT;
    }
    if (quick && !klist) {
        ks[0] = 256;
        nk = 1;
    }
    static const int quick_m[] = {1, 2, 16, 33, 64}, quick_n[] = {16, 64, 128, 160, 192, 256};

    char cbuf[4096], tbuf[4096], kbuf[4096], err[1024];
    const char *cases_path = cases_arg ? cases_arg : a4w4_data_path(DEFAULT_CASES, cbuf, sizeof cbuf);
    a4w4_case *cases = NULL;
    size_t ncases = 0;
    if (a4w4_casefile_read(cases_path, &cases, &ncases, err, sizeof err)) {
        a4w4_errorf("hazards: %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    cell *cells = calloc(ncases ? ncases : 1, sizeof *cells);
    a4w4_backend bk[MAX_BACKENDS];
    int nbk = 0, rc = A4W4_EXIT_PASS;
    a4w4_tuned_table tuned = {0};
    a4w4_kernel_table kt = {0};
    size_t *Ms = NULL, *Ns = NULL, *Ks = NULL, nM = 0, nN = 0, nK = 0, n = 0;
    if (!cells) {
        a4w4_errorf("hazards: out of memory");
        free(cases);
        return A4W4_EXIT_BADINPUT;
    }
    for (size_t i = 0; i < ncases; i++) {
        const a4w4_case *c = &cases[i];
        if ((nk && !in_ints(ks, nk, (long)c->K)) ||
            (quick && (!in_ints(quick_m, 5, (long)c->M) || !in_ints(quick_n, 6, (long)c->N))))
            continue;
        if (c->M > A4W4_DIM_MAX || c->N > A4W4_DIM_MAX || c->K > A4W4_DIM_MAX) {
            a4w4_errorf("hazards: %s: case %s: M, N and K must be at most %d", cases_path,
                        c->name, A4W4_DIM_MAX);
            rc = A4W4_EXIT_BADINPUT;
            goto out;
        }
        memset(cells[n].v, V_SKIP, sizeof cells[n].v); /* until the runner says otherwise */
        cells[n++].c = c;
    }
    if (!n) {
        a4w4_errorf("hazards: %s: no case matches%s%s%s", cases_path, klist ? " --k " : "",
                    klist ? klist : "", quick ? " and the --quick subset" : "");
        rc = A4W4_EXIT_BADINPUT;
        goto out;
    }
    qsort(cells, n, sizeof *cells, cell_cmp);

    /* backends */
    if (!blist) {
        char skipped[2048];
        nbk = (int)a4w4_backend_defaults(bk, MAX_BACKENDS, skipped, sizeof skipped);
        if (skipped[0] && !quiet)
            for (char *save = NULL, *l = strtok_r(skipped, "\n", &save); l;
                 l = strtok_r(NULL, "\n", &save))
                fprintf(stderr, "a4w4check hazards: notice: skipping backend %s\n", l);
    } else {
        char b2[2048];
        snprintf(b2, sizeof b2, "%s", blist);
        for (char *save = NULL, *t = strtok_r(b2, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (nbk == MAX_BACKENDS) {
                a4w4_errorf("hazards: more than %d backends", MAX_BACKENDS);
                rc = A4W4_EXIT_BADINPUT;
                goto out;
            }
            /* a mutant (selftest --list) by name too: its failing cells show on the map */
            const a4w4_backend_type *mt = a4w4_mutant_find(t);
            int orc = mt ? a4w4_backend_open_type(mt, NULL, &bk[nbk], err, sizeof err)
                         : a4w4_backend_open(t, &bk[nbk], err, sizeof err);
            if (orc) {
                a4w4_errorf("hazards: %s", err);
                rc = a4w4_exit_code(orc);
                goto out;
            }
            nbk++;
        }
    }
    if (!nbk) {
        a4w4_errorf("hazards: no backend to run");
        rc = A4W4_EXIT_BADINPUT;
        goto out;
    }

    /* routing and policy per cell (static; before the long part, so bad tables stop early) */
    a4w4_heur_params hp = {"gfx950", 256, 0, 1};
    const char *tpath = a4w4_data_path(DEFAULT_TUNED, tbuf, sizeof tbuf);
    const char *kpath = a4w4_data_path(DEFAULT_KERNELS, kbuf, sizeof kbuf);
    if (a4w4_tuned_load(&tuned, tpath, err, sizeof err) != A4W4_OK) {
        a4w4_errorf("hazards: tuned table %s", err);
        rc = A4W4_EXIT_BADINPUT;
        goto out;
    }
    if (a4w4_kernels_load(&kt, kpath, NULL, err, sizeof err) != A4W4_OK) {
        a4w4_errorf("hazards: kernel table %s", err);
        rc = A4W4_EXIT_BADINPUT;
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (route_cell(&cells[i], &tuned, &kt, &hp, err, sizeof err)) {
            a4w4_errorf("hazards: %s", err);
            rc = A4W4_EXIT_BADINPUT;
            goto out;
        }

    /* the sweep */
    if (!jobs) {
        int all_safe = 1; /* the runner serializes the others: more jobs would only wait */
        for (int b = 0; b < nbk; b++)
            all_safe &= bk[b].type->thread_safe;
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = all_safe && ncpu > 1 ? (ncpu > 64 ? 64 : ncpu) : 1;
    }
    if ((size_t)jobs > n)
        jobs = (long)n;
    work w;
    memset(&w, 0, sizeof w);
    w.cells = cells;
    w.ncells = n;
    w.runner.backends = bk;
    w.runner.nbackends = (size_t)nbk;
    w.quiet = quiet;
    w.tty = isatty(2);
    w.t0 = w.last = a4w4_now();
    pthread_mutex_init(&w.mu, NULL);
    pthread_t th[256];
    long started = 0;
    for (long j = 1; j < jobs; j++)
        if (pthread_create(&th[started], NULL, worker, &w) == 0)
            started++;
    worker(&w);
    for (long j = 0; j < started; j++)
        pthread_join(th[j], NULL);
    pthread_mutex_destroy(&w.mu);
    double secs = a4w4_now() - w.t0;
    if (w.io_error) {
        a4w4_errorf("hazards: %s", w.err);
        rc = A4W4_EXIT_BADINPUT;
        goto out;
    }

    /* the map */
    size_t ncls[NCLS] = {0}, vcount[MAX_BACKENDS][4], oracle_fail = 0;
    memset(vcount, 0, sizeof vcount);
    for (size_t i = 0; i < n; i++) {
        classify(&cells[i], (size_t)nbk);
        ncls[cells[i].cls]++;
        oracle_fail += (size_t)cells[i].oracle_fail;
        for (int b = 0; b < nbk; b++)
            vcount[b][cells[i].v[b]]++;
    }
    Ms = axis(cells, n, 0, &nM);
    Ns = axis(cells, n, 1, &nN);
    Ks = axis(cells, n, 2, &nK);
    if (!Ms || !Ns || !Ks) {
        a4w4_errorf("hazards: out of memory");
        rc = A4W4_EXIT_BADINPUT;
        goto out;
    }
    printf("hazards: %zu cells from %s%s; backends", n, cases_path, quick ? " (--quick subset)" : "");
    for (int b = 0; b < nbk; b++)
        printf("%s %s", b ? "," : "", bk[b].name);
    printf("; routing gfx950, 256 CUs, log2_k_split 0, bpreshuffle 1; policy: %s on, 2-D input\n",
           A4W4_POLICY_FLAG);
    printf("legend:");
    for (int c = 0; c < NCLS; c++)
        printf("%s %c %s", c ? ";" : "", cls_sym[c], cls_name[c]);
    printf("\n");
    for (int c = 0; c < NCLS; c++)
        printf("  %c %-16s %s\n", cls_sym[c], cls_name[c], cls_what[c]);
    for (size_t k = 0; k < nK; k++)
        print_map(cells, n, Ms, nM, Ns, nN, Ks[k]);
    printf("\ncells:");
    for (int c = 0; c < NCLS; c++)
        printf("%s %zu %s", c ? "," : "", ncls[c], cls_name[c]);
    printf("\n");
    for (int b = 0; b < nbk; b++)
        printf("%-24s %zu pass, %zu fail, %zu n/a%s\n", bk[b].name, vcount[b][V_PASS],
               vcount[b][V_FAIL], vcount[b][V_NA],
               vcount[b][V_SKIP] ? " (some skipped)" : "");
    if (oracle_fail)
        printf("oracle cross-check failed on %zu cells\n", oracle_fail);
    size_t shown = 0;
    for (size_t i = 0; i < n && shown < 20; i++)
        if (cells[i].cls == CLS_FAIL) {
            printf("FAIL M=%zu N=%zu K=%zu (%s) %s\n", cells[i].c->M, cells[i].c->N,
                   cells[i].c->K, cells[i].c->name, cells[i].first_fail);
            shown++;
        }
    if (ncls[CLS_FAIL] > shown)
        printf("... %zu more failing cells (see --json)\n", ncls[CLS_FAIL] - shown);
    printf("%.1f s, %ld job%s\n", secs, jobs, jobs == 1 ? "" : "s");
    rc = ncls[CLS_FAIL] ? A4W4_EXIT_MISMATCH : A4W4_EXIT_PASS;

    if (json) {
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "schema", "a4w4check-hazards/1");
        cJSON_AddStringToObject(doc, "tool_version", A4W4_TOOL_VERSION);
        cJSON_AddStringToObject(doc, "cases_file", cases_path);
        cJSON_AddBoolToObject(doc, "quick", quick);
        cJSON *ba = cJSON_AddArrayToObject(doc, "backends");
        for (int b = 0; b < nbk; b++)
            cJSON_AddItemToArray(ba, cJSON_CreateString(bk[b].name));
        cJSON *ro = cJSON_AddObjectToObject(doc, "routing");
        cJSON_AddStringToObject(ro, "gfx", hp.gfx);
        cJSON_AddNumberToObject(ro, "cu_num", hp.num_cu);
        cJSON_AddNumberToObject(ro, "log2_k_split", hp.log2_k_split);
        cJSON_AddNumberToObject(ro, "bpreshuffle", hp.bpreshuffle);
        cJSON_AddStringToObject(ro, "tuned", tpath);
        cJSON_AddStringToObject(ro, "kernels", kpath);
        cJSON *po = cJSON_AddObjectToObject(doc, "policy");
        cJSON_AddStringToObject(po, "flag", A4W4_POLICY_FLAG);
        cJSON_AddBoolToObject(po, "flag_on", 1);
        cJSON_AddStringToObject(po, "input", "2d");
        cJSON *ax = cJSON_AddObjectToObject(doc, "axes");
        const size_t *av[3] = {Ms, Ns, Ks};
        size_t an[3] = {nM, nN, nK};
        static const char *const anames[3] = {"M", "N", "K"};
        for (int a = 0; a < 3; a++) {
            cJSON *arr = cJSON_AddArrayToObject(ax, anames[a]);
            for (size_t i = 0; i < an[a]; i++)
                cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)av[a][i]));
        }
        cJSON *cd = cJSON_AddObjectToObject(doc, "classes");
        for (int c = 0; c < NCLS; c++)
            cJSON_AddStringToObject(cd, cls_name[c], cls_what[c]);
        cJSON *ca = cJSON_AddArrayToObject(doc, "cells");
        for (size_t i = 0; i < n; i++) {
            const cell *cl = &cells[i];
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
            for (int b = 0; b < nbk; b++) {
                cJSON_AddStringToObject(res, bk[b].name, v_name[cl->v[b]]);
                cJSON *to = cl->v[b] == V_PASS ? pa : cl->v[b] == V_FAIL ? fa
                          : cl->v[b] == V_NA ? na : NULL;
                if (to)
                    cJSON_AddItemToArray(to, cJSON_CreateString(bk[b].name));
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
            cJSON_AddItemToObject(r, "winners", label_array(&kt, cl->win));
            cJSON_AddItemToObject(r, "not_fitting_N", label_array(&kt, cl->nofit));
            cJSON *p = cJSON_AddObjectToObject(o, "policy");
            cJSON_AddStringToObject(p, "decision", a4w4_decision_name(cl->pol.decision));
            cJSON_AddStringToObject(p, "reason", a4w4_policy_reason_name(cl->pol.reason));
            cJSON_AddBoolToObject(p, "fenced", cl->pol.decision != A4W4_DECIDE_ASM);
            cJSON_AddItemToArray(ca, o);
        }
        cJSON *tot = cJSON_AddObjectToObject(doc, "totals");
        cJSON_AddNumberToObject(tot, "cells", (double)n);
        cJSON *tc = cJSON_AddObjectToObject(tot, "classes");
        for (int c = 0; c < NCLS; c++)
            cJSON_AddNumberToObject(tc, cls_name[c], (double)ncls[c]);
        cJSON *tb = cJSON_AddObjectToObject(tot, "backends");
        for (int b = 0; b < nbk; b++) {
            cJSON *x = cJSON_AddObjectToObject(tb, bk[b].name);
            for (int v = 0; v < 4; v++)
                cJSON_AddNumberToObject(x, v_name[v], (double)vcount[b][v]);
        }
        cJSON_AddNumberToObject(tot, "oracle_fail", (double)oracle_fail);
        cJSON_AddNumberToObject(tot, "seconds", secs);
        char *text = cJSON_PrintUnformatted(doc);
        cJSON_Delete(doc);
        char path[4096];
        snprintf(path, sizeof path, "%s/hazards.json", out_dir);
        if (!text || a4w4_mkdir_p(out_dir, err, sizeof err) ||
            a4w4_write_atomic(path, text, strlen(text), err, sizeof err)) {
            a4w4_errorf("hazards: --out %s: %s", out_dir, text ? err : "out of memory");
            rc = A4W4_EXIT_IO;
        } else {
            printf("wrote %s\n", path);
        }
        free(text);
        /* the same cells as a results document, so `a4w4check report DIR --format html` draws
         * the hazard heat map from this run (its schema is that of `run`) */
        if (rc == A4W4_EXIT_PASS || rc == A4W4_EXIT_MISMATCH) {
            cJSON *res = cJSON_CreateObject();
            cJSON_AddStringToObject(res, "schema", A4W4_RESULTS_SCHEMA);
            cJSON_AddStringToObject(res, "tool", "a4w4check");
            cJSON_AddStringToObject(res, "tool_version", A4W4_TOOL_VERSION);
            cJSON_AddStringToObject(res, "set", "hazard");
            cJSON_AddStringToObject(res, "cases_file", cases_path);
            cJSON *bl = cJSON_AddArrayToObject(res, "backends");
            cJSON_AddItemToArray(bl, cJSON_CreateString("oracle"));
            for (int b = 0; b < nbk; b++)
                cJSON_AddItemToArray(bl, cJSON_CreateString(bk[b].name));
            cJSON *all = cJSON_AddArrayToObject(res, "cases");
            for (size_t i = 0; i < n; i++) {
                cJSON *e;
                if (cells[i].entries)
                    cJSON_ArrayForEach(e, cells[i].entries) cJSON_AddItemToArray(all, cJSON_Duplicate(e, 1));
            }
            if (a4w4_results_write(res, out_dir, err, sizeof err)) {
                a4w4_errorf("hazards: --out %s", err);
                rc = A4W4_EXIT_IO;
            } else {
                printf("wrote %s/results.json and %s/summary.md (render the heat map: a4w4check "
                       "report %s --format html)\n", out_dir, out_dir, out_dir);
            }
            cJSON_Delete(res);
        }
    }
out:
    for (int b = 0; b < nbk; b++)
        a4w4_backend_close(&bk[b]);
    a4w4_tuned_free(&tuned);
    a4w4_kernels_free(&kt);
    free(Ms);
    free(Ns);
    free(Ks);
    for (size_t i = 0; cells && i < n; i++)
        cJSON_Delete(cells[i].entries);
    free(cells);
    free(cases);
    if (fflush(stdout) != 0) {
        a4w4_errorf("hazards: cannot write the output");
        return A4W4_EXIT_IO;
    }
    return rc;
}
