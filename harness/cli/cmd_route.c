/* cmd_route.c — `a4w4check route`: which kernel AITER's gemm_a4w4 runs for each shape
 * (contracts §5), which kernels could win under another table walk order, the tile-fit warnings,
 * and SGLang's layer decision (contracts §6); `--scan` is the static hazard scan. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_dispatch.h"
#include "a4w4_hazard.h"
#include "a4w4_policy.h"
#include "a4w4check.h"
#include "options.h"
#include "shapelist.h"

#define DEFAULT_TUNED "cases/aiter/a4w4_blockscale_tuned_gemm.csv"
#define DEFAULT_KERNELS "cases/aiter/gfx950_f4gemm_bf16_per1x32Fp4.csv"
#define DEFAULT_SCAN_K "1024,4096,5120,7168,14336,34816"
#define MAX_TUNED 16
#define MAX_SCAN_K 64

static const char route_usage[] =
    "usage: a4w4check route [options] M N K [M N K ...]\n"
    "       a4w4check route [options] --cases FILE\n"
    "       a4w4check route [options] --scan [--k K,K,...]\n"
    "\n"
    "For each shape, the kernel AITER's gemm_a4w4 runs (contracts §5): a tuned row at M, at\n"
    "getPaddedM(gl=0) or getPaddedM(gl=1) (source tuned, tuned_padded_gl0, tuned_padded_gl1;\n"
    "a mangled _ZN name is an ASM kernel, any other a CK kernel), else the ASM heuristic\n"
    "(source heuristic) walking the kernel table in file order. AITER walks that table in\n"
    "unordered_map order, so the route also lists the possible winners: over file order, its\n"
    "reverse and 256 seeded permutations (candidates) and over every order (exact).\n"
    "Warnings: tile_N > N, N % tile_N != 0, tile_M > 8*M, split-K in use (result only bounded),\n"
    "order dependence. Then SGLang's layer decision (contracts §6) for the layer (N, K), and\n"
    "the field's bug record: every reported bug whose rule flags the shape (ref/a4w4_hazard.h;\n"
    "--scan lists every shape each rule flags).\n"
    "\n"
    "options:\n";

typedef struct {
    const char *tuned_v[MAX_TUNED];
    a4w4_opt_strings tuned;
    int no_tuned;
    const char *kernels;
    a4w4_heur_params hp;
    int asm_flag;
    a4w4_input_kind kind;
    int tuple_len;
    const char *kind_name;
    int json, scan;
    const char *cases, *klist;
    int scan_k[MAX_SCAN_K];
    int nscan_k;
    int *shapes; /* 3 ints per shape */
    size_t nshapes;
} route_opts;

static const a4w4_option route_options[] = {
    OPT_STRINGS("tuned", route_opts, tuned, "CSV",
                "tuned table (repeat to merge; default " DEFAULT_TUNED ")"),
    OPT_FLAG("no-tuned", route_opts, no_tuned, "route as if nothing were tuned"),
    OPT_STRING("kernels", route_opts, kernels, "CSV",
               "ASM kernel table (default " DEFAULT_KERNELS ")\n"
               "default paths resolve from the current directory, else the source tree"),
    OPT_STRING("gfx", route_opts, hp.gfx, "ARCH",
               "device arch (default gfx950; gfx942 gives AITER's error)"),
    OPT_INT("cu", route_opts, hp.num_cu, "N", 1, 65536, "compute units (default 256)"),
    OPT_INT("log2-k-split", route_opts, hp.log2_k_split, "N", -1, 4,
            "what the heuristic gets: 0 (default, AITER's Python wrapper), 1..4,\n"
            "or -1 (none: split-K kernels try 2,4,8,16)"),
    OPT_INT("bpreshuffle", route_opts, hp.bpreshuffle, "0|1", 0, 1,
            "preshuffled weight (default 1, as SGLang passes)"),
    OPT_INT("asm-flag", route_opts, asm_flag, "0|1", 0, 1,
            "SGLANG_ROCM_USE_AITER_FP4_ASM_GEMM for the policy (default 1)"),
    OPT_STRING("input", route_opts, kind_name, "KIND",
               "input of the policy call: 2d (default), 3d, tuple2, tuple3, tuple5, tupleN"),
    OPT_FLAG("json", route_opts, json, "one JSON object per line"),
    OPT_STRING("cases", route_opts, cases, "FILE", "shapes from a CSV whose header names M, N, K"),
    OPT_FLAG("scan", route_opts, scan,
             "M 1..256, N 16..512 step 16, K from --k: every untuned shape whose\n"
             "possible winners include a tile that does not fit in N or that has\n"
             "more than one possible winner, and whether the policy's N <= 128 fence\n"
             "covers every shape where a non-fitting tile can win"),
    OPT_STRING("k", route_opts, klist, "LIST", "K values of the scan (default " DEFAULT_SCAN_K ")"),
    OPT_END(),
};

static const a4w4_command_spec route_spec = {
    "route", route_usage, route_options, "M N K...",
    "exit: 0 ok, 2 bad input (malformed table, bad shape, gfx942, usage)\n"};

static int parse_int_arg(const char *opt, const char *s, long lo, long hi, int *out)
{
    long long v;
    if (a4w4_parse_int(s, strlen(s), lo, hi, &v)) {
        a4w4_errorf("route: %s '%s' is not an integer in %ld..%ld", opt, s, lo, hi);
        return 0;
    }
    *out = (int)v;
    return 1;
}

static int parse_k_list(const char *s, route_opts *o)
{
    if (a4w4_parse_int_list(s, 32, A4W4_DIM_MAX, 32, o->scan_k, MAX_SCAN_K, &o->nscan_k)) {
        a4w4_errorf("route: --k '%s': K values must be positive multiples of 32, "
                    "comma-separated, at most %d",
                    s, MAX_SCAN_K);
        return 0;
    }
    return 1;
}

/* The option values that need more than the table's checks: --gfx, --input, and which of
 * shapes, --cases, --scan and --k go together. Returns -1 when valid, else the exit code. */
static int check_args(route_opts *o, int npos)
{
    if (!*o->hp.gfx) {
        a4w4_errorf("route: --gfx is empty");
        return A4W4_EXIT_BADINPUT;
    }
    if (a4w4_input_kind_parse(o->kind_name, &o->kind, &o->tuple_len) != A4W4_OK) {
        a4w4_errorf("route: --input '%s': one of 2d, 3d, tuple2, tuple3, tuple5, tupleN",
                    o->kind_name);
        return A4W4_EXIT_BADINPUT;
    }
    const char *why = NULL;
    char buf[128];
    if (o->no_tuned && o->tuned.n)
        why = "--no-tuned and --tuned exclude each other";
    else if (o->klist && !o->scan)
        why = "--k applies to --scan only";
    else if (o->scan && (npos || o->cases))
        why = "--scan takes no shapes (no M N K, no --cases)";
    else if (!o->scan && o->cases && npos)
        why = "give shapes either as M N K arguments or with --cases, not both";
    else if (!o->scan && !o->cases && npos == 0)
        why = "no shape given (usage: a4w4check route [options] M N K ...)";
    else if (npos % 3 != 0) {
        snprintf(buf, sizeof buf, "%d shape numbers given; shapes come as M N K triples", npos);
        why = buf;
    }
    if (why) {
        a4w4_errorf("route: %s", why);
        return A4W4_EXIT_BADINPUT;
    }
    return -1;
}

/* The M N K arguments into o->shapes. Returns -1 when valid, else the exit code. */
static int parse_shapes(route_opts *o, const a4w4_args *pos)
{
    o->shapes = malloc((size_t)pos->n * sizeof *o->shapes);
    if (!o->shapes) {
        a4w4_errorf("route: out of memory");
        return A4W4_EXIT_BADINPUT;
    }
    static const char *names[3] = {"M", "N", "K"};
    for (int j = 0; j < pos->n; j++) {
        char opt[32];
        snprintf(opt, sizeof opt, "shape %d %s", j / 3 + 1, names[j % 3]);
        if (!parse_int_arg(opt, pos->v[j], 1, A4W4_DIM_MAX, &o->shapes[j]))
            return A4W4_EXIT_BADINPUT;
    }
    o->nshapes = (size_t)pos->n / 3;
    return -1;
}

/* Parse argv into o. Returns -1 on success, else an exit code. */
static int parse_args(int argc, char **argv, route_opts *o)
{
    memset(o, 0, sizeof *o);
    o->tuned = (a4w4_opt_strings){o->tuned_v, 0, MAX_TUNED};
    o->hp.gfx = "gfx950";
    o->hp.num_cu = 256;
    o->hp.log2_k_split = 0;
    o->hp.bpreshuffle = 1;
    o->asm_flag = 1;
    o->kind_name = "2d";
    a4w4_args pos;
    int rc = a4w4_options_parse(&route_spec, o, argc, argv, &pos);
    if (rc == A4W4_OPTS_CONTINUE)
        rc = check_args(o, pos.n);
    if (rc == -1 && o->scan && !parse_k_list(o->klist ? o->klist : DEFAULT_SCAN_K, o))
        rc = A4W4_EXIT_BADINPUT;
    if (rc == -1 && pos.n)
        rc = parse_shapes(o, &pos);
    return rc;
}

/* ---- output --------------------------------------------------------------------------- */

static void label_of(const a4w4_kernel_table *kt, int idx, const char *fallback, char *buf,
                     size_t len)
{
    if (idx >= 0)
        a4w4_kernel_label(kt, idx, buf, len);
    else
        snprintf(buf, len, "%s", fallback);
}

static const char *name_of(const a4w4_kernel_table *kt, int idx, const char *fallback)
{
    return idx >= 0 ? kt->rows[idx].name : fallback;
}

static int policy_for(const route_opts *o, int N, int K, a4w4_policy_result *pr)
{
    int rc = a4w4_policy_decide(o->asm_flag, o->hp.gfx, (size_t)N, 2, (size_t)N, (size_t)K / 32,
                                o->kind, o->tuple_len, pr);
    if (rc != A4W4_OK)
        a4w4_errorf("route: policy for N %d K %d: %s", N, K, a4w4_status_str(rc));
    return rc;
}

/* The field bugs (ref/a4w4_hazard.h) whose rules flag routed shape r under policy pr. */
static unsigned bugs_of_route(const route_opts *o, const a4w4_kernel_table *kt,
                              const a4w4_route *r, const a4w4_policy_result *pr)
{
    a4w4_bug_shape s;
    a4w4_bug_shape_of(r->M, r->N, r->K, r, kt, o->hp.bpreshuffle, pr, &s);
    return a4w4_bugs_of(&s);
}

static void print_json(const route_opts *o, const a4w4_kernel_table *kt, const a4w4_route *r,
                       const a4w4_policy_result *pr)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "M", r->M);
    cJSON_AddNumberToObject(j, "N", r->N);
    cJSON_AddNumberToObject(j, "K", r->K);
    cJSON_AddStringToObject(j, "gfx", o->hp.gfx);
    cJSON_AddNumberToObject(j, "cu_num", o->hp.num_cu);
    cJSON_AddStringToObject(j, "source", a4w4_route_source_name(r->source));
    if (r->row)
        cJSON_AddNumberToObject(j, "tuned_M", r->tuned_m);
    else
        cJSON_AddNullToObject(j, "tuned_M");
    cJSON_AddStringToObject(j, "path", r->is_asm ? "asm" : "ck");
    cJSON_AddStringToObject(j, "kernel", r->kernel);
    if (r->tile_m) {
        int tile[2] = {r->tile_m, r->tile_n};
        cJSON_AddItemToObject(j, "tile", cJSON_CreateIntArray(tile, 2));
    } else {
        cJSON_AddNullToObject(j, "tile");
    }
    cJSON_AddNumberToObject(j, "log2_k_split", r->log2_k_split);
    cJSON_AddNumberToObject(j, "split", r->split);
    if (r->k_per_tg)
        cJSON_AddNumberToObject(j, "k_per_tg", r->k_per_tg);
    else
        cJSON_AddNullToObject(j, "k_per_tg");
    if (r->tile_m) {
        int grid[3] = {r->grid_x, r->grid_y, r->grid_z};
        cJSON_AddItemToObject(j, "grid", cJSON_CreateIntArray(grid, 3));
    } else {
        cJSON_AddNullToObject(j, "grid");
    }
    cJSON *c = cJSON_AddArrayToObject(j, "candidates");
    for (size_t i = 0; i < r->ncand; i++)
        cJSON_AddItemToArray(c, cJSON_CreateString(name_of(kt, r->cand[i], r->kernel)));
    cJSON *ca = cJSON_AddArrayToObject(j, "candidates_any_order");
    for (size_t i = 0; i < r->ncand_any; i++)
        cJSON_AddItemToArray(ca, cJSON_CreateString(name_of(kt, r->cand_any[i], r->kernel)));
    cJSON *w = cJSON_AddArrayToObject(j, "warnings");
    for (size_t i = 0; i < a4w4_route_warning_count(r); i++) {
        char buf[512];
        a4w4_route_warning(r, kt, i, buf, sizeof buf);
        cJSON_AddItemToArray(w, cJSON_CreateString(buf));
    }
    cJSON *pj = cJSON_AddObjectToObject(j, "policy");
    cJSON_AddStringToObject(pj, "decision", a4w4_decision_name(pr->decision));
    cJSON_AddStringToObject(pj, "reason", a4w4_policy_reason_name(pr->reason));
    cJSON_AddStringToObject(pj, "input", o->kind_name);
    cJSON_AddBoolToObject(pj, "warn_once", pr->warn_once);
    cJSON_AddStringToObject(pj, "message", pr->message);
    cJSON *fb = cJSON_AddArrayToObject(j, "field_bugs");
    size_t nr;
    const a4w4_bug_rule *br = a4w4_bug_rules(&nr);
    unsigned mask = bugs_of_route(o, kt, r, pr);
    for (size_t i = 0; i < nr; i++)
        if (mask & (1u << i))
            cJSON_AddItemToArray(fb, cJSON_CreateString(br[i].id));
    char *s = cJSON_PrintUnformatted(j);
    if (s)
        puts(s);
    free(s);
    cJSON_Delete(j);
}

/* Short codes of fit flags, comma-separated. */
static void fit_codes(unsigned f, char *buf, size_t len)
{
    buf[0] = '\0';
    size_t u = 0;
    static const struct {
        unsigned bit;
        const char *code;
    } codes[] = {{A4W4_FIT_TILE_N_GT_N, "tile_N>N"},
                 {A4W4_FIT_N_PARTIAL, "N%tile_N!=0"},
                 {A4W4_FIT_TILE_M_GT_8M, "tile_M>8M"},
                 {A4W4_FIT_SPLIT_K, "split-K"}};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (f & codes[i].bit) {
            int n = snprintf(buf + u, len - u, "%s%s", u ? "," : "", codes[i].code);
            if (n < 0 || (size_t)n >= len - u)
                return;
            u += (size_t)n;
        }
}

static void print_human(const route_opts *o, const a4w4_kernel_table *kt, const a4w4_route *r,
                        const a4w4_policy_result *pr)
{
    char lab[64], codes[96], bugs[512];
    label_of(kt, r->kernel_index, "?", lab, sizeof lab);
    printf("M=%d N=%d K=%d: %s", r->M, r->N, r->K, a4w4_route_source_name(r->source));
    if (r->row)
        printf(" (row M=%d, %s:%d)", r->tuned_m, r->row->file, r->row->line);
    if (r->is_asm && r->kernel_index >= 0)
        printf(" -> ASM %s %s, log2_k_split %d, grid %dx%dx%d", lab, r->kernel, r->log2_k_split,
               r->grid_x, r->grid_y, r->grid_z);
    else if (r->is_asm)
        printf(" -> ASM %s (not in the kernel table), log2_k_split %d", r->kernel,
               r->log2_k_split);
    else
        printf(" -> CK %s, splitK %d", r->kernel, r->log2_k_split);
    if (r->k_per_tg)
        printf(", k_per_tg %d", r->k_per_tg);
    printf("; possible winners %zu (sampled orders %zu)", r->ncand_any, r->ncand);
    if (r->source == A4W4_SRC_HEURISTIC) {
        printf(":");
        for (size_t i = 0; i < r->ncand_any; i++) {
            label_of(kt, r->cand_any[i], "?", lab, sizeof lab);
            printf("%s%s", i ? "," : " ", lab);
        }
    }
    fit_codes(r->fit, codes, sizeof codes);
    size_t nw = a4w4_route_warning_count(r);
    printf("; warnings %zu%s%s%s", nw, codes[0] ? " [" : "", codes,
           codes[0] ? "]" : "");
    if (r->ncand_any > 1)
        printf(" [order-dependent]");
    printf("; policy %s (%s)", a4w4_decision_name(pr->decision),
           a4w4_policy_reason_name(pr->reason));
    a4w4_bugs_text(bugs_of_route(o, kt, r, pr), ", ", 1, bugs, sizeof bugs);
    printf("%s%s\n", bugs[0] ? "; field bugs: " : "", bugs);
}

/* ---- scan ----------------------------------------------------------------------------- */

#define SCAN_M_MAX 256
#define SCAN_N_MIN 16
#define SCAN_N_MAX 512
#define SCAN_N_STEP 16
#define SCAN_NN ((SCAN_N_MAX - SCAN_N_MIN) / SCAN_N_STEP + 1)

typedef struct {
    unsigned char any[A4W4_MAX_KERNELS]; /* exact winners */
    unsigned char smp[A4W4_MAX_KERNELS]; /* sampled winners */
    unsigned char nofit[A4W4_MAX_KERNELS];/* winners whose tile does not fit in N */
    unsigned char mfit[A4W4_MAX_KERNELS]; /* winners with tile_M > 8*M */
    int nany, nsmp, n_nofit, n_mfit;
    int file_winner;                       /* heuristic winner in file order */
    int file_nofit;                        /* that winner does not fit N */
    unsigned long long untuned_k;          /* bit i: untuned at scan_k[i] */
    unsigned long long hazard_k, exposed_k;/* bit i: class not ok / exposed at scan_k[i] */
    unsigned long long bug_k[A4W4_BUG_COUNT]; /* bit i: the field bug's rule flags scan_k[i] */
} scan_cell;

static int same_cell(const scan_cell *a, const scan_cell *b, size_t n)
{
    return a->untuned_k == b->untuned_k && !memcmp(a->any, b->any, n) &&
           !memcmp(a->nofit, b->nofit, n) && a->file_winner == b->file_winner;
}

static void set_labels(const a4w4_kernel_table *kt, const unsigned char *set, char *buf,
                       size_t len)
{
    size_t u = 0;
    buf[0] = '\0';
    int idx[A4W4_MAX_KERNELS];
    size_t n = 0;
    for (size_t i = 0; i < kt->n; i++)
        if (set[i])
            idx[n++] = (int)i;
    /* by tile: M then N */
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0; b--) {
            const a4w4_asm_kernel *x = &kt->rows[idx[b - 1]], *y = &kt->rows[idx[b]];
            if (x->tile_m < y->tile_m || (x->tile_m == y->tile_m && x->tile_n <= y->tile_n))
                break;
            int t = idx[b];
            idx[b] = idx[b - 1];
            idx[b - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        char lab[64];
        a4w4_kernel_label(kt, idx[i], lab, sizeof lab);
        int w = snprintf(buf + u, len - u, "%s%s", i ? "," : "", lab);
        if (w < 0 || (size_t)w >= len - u)
            return;
        u += (size_t)w;
    }
}

static unsigned long long all_k_bits(const route_opts *o)
{
    return o->nscan_k >= 64 ? ~0ull : ((1ull << o->nscan_k) - 1);
}

static void k_set_text(const route_opts *o, unsigned long long bits, char *buf, size_t len)
{
    if (bits == all_k_bits(o)) {
        snprintf(buf, len, "all K");
        return;
    }
    size_t u = (size_t)snprintf(buf, len, "K=");
    int first = 1;
    for (int i = 0; i < o->nscan_k && u < len; i++)
        if (bits & (1ull << i)) {
            u += (size_t)snprintf(buf + u, len - u, "%s%d", first ? "" : ",", o->scan_k[i]);
            first = 0;
        }
}

static void m_range(int m0, int m1, char *buf, size_t len)
{
    if (m0 == m1)
        snprintf(buf, len, "M=%d", m0);
    else
        snprintf(buf, len, "M=%d..%d", m0, m1);
}

/* Policy text for layer N over the K bits: "asm" when one decision holds for every K, else
 * one "decision(reason) at K=..." group per distinct decision. */
static void policy_text(const route_opts *o, const a4w4_policy_result *pol_n,
                        unsigned long long kbits, char *buf, size_t len)
{
    size_t u = 0;
    buf[0] = '\0';
    unsigned long long done = 0;
    for (int k = 0; k < o->nscan_k && u < len; k++) {
        if (!(kbits & (1ull << k)) || (done & (1ull << k)))
            continue;
        unsigned long long same = 0;
        for (int j = k; j < o->nscan_k; j++)
            if ((kbits & (1ull << j)) && pol_n[j].decision == pol_n[k].decision &&
                pol_n[j].reason == pol_n[k].reason)
                same |= 1ull << j;
        done |= same;
        char ks[512];
        k_set_text(o, same == kbits ? all_k_bits(o) : same, ks, sizeof ks);
        if (pol_n[k].decision == A4W4_DECIDE_ASM)
            u += (size_t)snprintf(buf + u, len - u, "%sasm", u ? ", " : "");
        else
            u += (size_t)snprintf(buf + u, len - u, "%s%s(%s)", u ? ", " : "",
                                  a4w4_decision_name(pol_n[k].decision),
                                  a4w4_policy_reason_name(pol_n[k].reason));
        if (same != kbits && u < len)
            u += (size_t)snprintf(buf + u, len - u, " at %s", ks);
    }
}

static void print_json_line(cJSON *j)
{
    char *s = cJSON_PrintUnformatted(j);
    if (s)
        puts(s);
    free(s);
    cJSON_Delete(j);
}

/* Counts over the scan's untuned (M, N, K) shapes. */
typedef struct {
    size_t total, untuned, hazard, multi, nofit, mfit, missed;
    size_t nofit_small_n, nofit_scale, nofit_other_triton, nofit_asm;
    size_t multi_asm, mfit_asm, file_nofit_asm, all_nofit_asm;
} scan_totals;

/* The layer policy per (N, K) into pol[ni * nscan_k + k] (it does not depend on M). 0, or
 * an exit code after the error. */
static int scan_policies(const route_opts *o, a4w4_policy_result *pol)
{
    for (int ni = 0; ni < SCAN_NN; ni++) {
        int N = SCAN_N_MIN + ni * SCAN_N_STEP;
        for (int k = 0; k < o->nscan_k; k++)
            if (policy_for(o, N, o->scan_k[k], &pol[(size_t)ni * (size_t)o->nscan_k + (size_t)k]))
                return A4W4_EXIT_BADINPUT;
    }
    return 0;
}

/* Cell (M, N): at which K it is untuned and, if at any, its possible winners (exact and
 * sampled), which of them do not fit, the file-order winner. 0, or an exit code. */
static int scan_cell_fill(const route_opts *o, const a4w4_tuned_table *tuned,
                          const a4w4_kernel_table *kt, int M, int N, scan_cell *c,
                          scan_totals *t)
{
    char err[512];
    for (int k = 0; k < o->nscan_k; k++) {
        t->total++;
        if (!a4w4_tuned_lookup(tuned, o->hp.gfx, o->hp.num_cu, M, N, o->scan_k[k], NULL, NULL))
            c->untuned_k |= 1ull << k;
    }
    if (!c->untuned_k)
        return 0;
    a4w4_heur_choice fw;
    int rc = a4w4_heuristic_winners_any_order(kt, &o->hp, M, N, c->any, err, sizeof err);
    if (!rc)
        rc = a4w4_heuristic_winners_sampled(kt, &o->hp, M, N, A4W4_ROUTE_PERMUTATIONS, c->smp,
                                            err, sizeof err);
    if (!rc)
        rc = a4w4_heuristic(kt, &o->hp, M, N, NULL, 0, &fw, err, sizeof err);
    if (rc) {
        a4w4_errorf("route --scan: M %d N %d: %s", M, N, err);
        return A4W4_EXIT_BADINPUT;
    }
    for (size_t i = 0; i < kt->n; i++) {
        c->nany += c->any[i];
        c->nsmp += c->smp[i];
        if (!c->any[i])
            continue;
        unsigned f = a4w4_tile_fit(kt->rows[i].tile_m, kt->rows[i].tile_n, 1, M, N);
        c->nofit[i] = (f & A4W4_FIT_N_MASK) != 0;
        c->mfit[i] = (f & A4W4_FIT_TILE_M_GT_8M) != 0;
        c->n_nofit += c->nofit[i];
        c->n_mfit += c->mfit[i];
    }
    c->file_winner = fw.kernel;
    c->file_nofit = c->nofit[fw.kernel];
    return 0;
}

/* Classify cell c at each K where it is untuned, given the policy there (pol_n[k]), with
 * ref's hazard rule (contracts §5, §6), and count it. */
static void scan_count(const route_opts *o, scan_cell *c, const a4w4_policy_result *pol_n,
                       scan_totals *t)
{
    for (int k = 0; k < o->nscan_k; k++) {
        if (!(c->untuned_k & (1ull << k)))
            continue;
        const a4w4_policy_result *pr = &pol_n[k];
        /* the class needs the facts, not M and N; untuned here by construction */
        a4w4_hazard hz = {0, 0, o->scan_k[k], 1, c->nany, c->n_nofit,
                          pr->decision == A4W4_DECIDE_ASM, 0, A4W4_HAZARD_OK};
        a4w4_hazard_classify(&hz);
        int is_asm = hz.policy_asm;
        c->hazard_k |= (unsigned long long)(hz.cls != A4W4_HAZARD_OK) << k;
        c->exposed_k |= (unsigned long long)(hz.cls == A4W4_HAZARD_EXPOSED) << k;
        t->untuned++;
        t->hazard += hz.cls != A4W4_HAZARD_OK;
        t->multi += c->nany > 1;
        t->multi_asm += c->nany > 1 && is_asm;
        t->missed += c->nsmp != c->nany;
        t->mfit += c->n_mfit > 0;
        t->mfit_asm += c->n_mfit > 0 && is_asm;
        if (c->n_nofit) {
            t->nofit++;
            if (hz.cls == A4W4_HAZARD_EXPOSED) {
                t->nofit_asm++;
                t->file_nofit_asm += c->file_nofit;
                t->all_nofit_asm += c->n_nofit == c->nany;
            }
            else if (pr->reason == A4W4_REASON_SMALL_N)
                t->nofit_small_n++;
            else if (pr->reason == A4W4_REASON_SCALE_UNSUPPORTED)
                t->nofit_scale++;
            else
                t->nofit_other_triton++;
        }
    }
}

/* The scan's opening lines: parameters, tables, what the columns mean. */
static void print_scan_head(const route_opts *o, const a4w4_tuned_table *tuned,
                            const a4w4_kernel_table *kt)
{
    char ks[512];
    {
        size_t u = 0;
        for (int i = 0; i < o->nscan_k && u < sizeof ks; i++)
            u += (size_t)snprintf(ks + u, sizeof ks - u, "%s%d", i ? "," : "", o->scan_k[i]);
    }
    char tunedtxt[1024] = "none";
    if (tuned && tuned->loaded) {
        size_t u = 0;
        for (int i = 0; i < tuned->loaded && u < sizeof tunedtxt; i++)
            u += (size_t)snprintf(tunedtxt + u, sizeof tunedtxt - u, "%s%s", i ? " + " : "",
                                  tuned->files[i]);
    }
    printf("route --scan: %s, %d CUs, log2_k_split %d, bpreshuffle %d; M 1..%d, N %d..%d "
           "step %d, K {%s}; policy with %s=%d, input %s\n",
           o->hp.gfx, o->hp.num_cu, o->hp.log2_k_split, o->hp.bpreshuffle, SCAN_M_MAX,
           SCAN_N_MIN, SCAN_N_MAX, SCAN_N_STEP, ks, A4W4_POLICY_FLAG, o->asm_flag,
           o->kind_name);
    printf("tables: tuned %s; kernels %s\n", tunedtxt, kt->file);
    printf("possible winners: every kernel that wins under some walk order of the kernel "
           "table (exact); 'sampled' counts those found by file order, its reverse and %d "
           "seeded permutations\n",
           A4W4_ROUTE_PERMUTATIONS);
    printf("a tile does not fit N when tile_N > N or N %% tile_N != 0\n");
    printf("\nhazards (untuned shapes with more than one possible winner, or a possible "
           "winner that does not fit N), runs over M:\n");
}

/* One hazard run (N, M..m1) as a JSON line. */
static void print_hazard_json(const route_opts *o, const a4w4_kernel_table *kt, const scan_cell *c,
                              const a4w4_policy_result *pol_n, int N, int M, int m1)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "type", "hazard");
    cJSON_AddNumberToObject(j, "N", N);
    cJSON_AddNumberToObject(j, "M_min", M);
    cJSON_AddNumberToObject(j, "M_max", m1);
    cJSON *ka = cJSON_AddArrayToObject(j, "K");
    cJSON *pa = cJSON_AddArrayToObject(j, "policy");
    for (int k = 0; k < o->nscan_k; k++)
        if (c->untuned_k & (1ull << k)) {
            cJSON_AddItemToArray(ka, cJSON_CreateNumber(o->scan_k[k]));
            cJSON *p = cJSON_CreateObject();
            cJSON_AddStringToObject(p, "decision", a4w4_decision_name(pol_n[k].decision));
            cJSON_AddStringToObject(p, "reason", a4w4_policy_reason_name(pol_n[k].reason));
            cJSON_AddItemToArray(pa, p);
        }
    cJSON *wa = cJSON_AddArrayToObject(j, "candidates_any_order");
    cJSON *na = cJSON_AddArrayToObject(j, "not_fitting_N");
    for (size_t i = 0; i < kt->n; i++) {
        if (c->any[i])
            cJSON_AddItemToArray(wa, cJSON_CreateString(kt->rows[i].name));
        if (c->nofit[i])
            cJSON_AddItemToArray(na, cJSON_CreateString(kt->rows[i].name));
    }
    cJSON_AddStringToObject(j, "kernel", kt->rows[c->file_winner].name);
    cJSON_AddBoolToObject(j, "kernel_fits_N", !c->file_nofit);
    print_json_line(j);
}

/* One hazard run (N, M..m1) as a text line. */
static void print_hazard_text(const route_opts *o, const a4w4_kernel_table *kt,
                              const scan_cell *c, const a4w4_policy_result *pol_n, int N, int M,
                              int m1)
{
    char mr[32], kset[512], win[4096], nf[4096], pt[1024], fwl[64];
    m_range(M, m1, mr, sizeof mr);
    k_set_text(o, c->untuned_k, kset, sizeof kset);
    set_labels(kt, c->any, win, sizeof win);
    set_labels(kt, c->nofit, nf, sizeof nf);
    policy_text(o, pol_n, c->untuned_k, pt, sizeof pt);
    a4w4_kernel_label(kt, c->file_winner, fwl, sizeof fwl);
    printf("N=%d %s %s: file order %s%s; %d possible winners: %s", N, mr, kset, fwl,
           c->file_nofit ? " (does not fit N)" : "", c->nany, win);
    if (c->n_nofit)
        printf("; not fitting N: %s", nf);
    printf("; policy %s\n", pt);
}

/* Every hazardous cell, runs of equal cells over M merged, per N. */
static void print_hazards(const route_opts *o, const a4w4_kernel_table *kt,
                          const scan_cell *cells, const a4w4_policy_result *pol)
{
    for (int ni = 0; ni < SCAN_NN; ni++) {
        int N = SCAN_N_MIN + ni * SCAN_N_STEP;
        const a4w4_policy_result *pol_n = &pol[(size_t)ni * (size_t)o->nscan_k];
        int M = 1;
        while (M <= SCAN_M_MAX) {
            const scan_cell *c = &cells[(size_t)ni * (SCAN_M_MAX + 1) + (size_t)M];
            int m1 = M;
            while (m1 + 1 <= SCAN_M_MAX &&
                   same_cell(c, &cells[(size_t)ni * (SCAN_M_MAX + 1) + (size_t)m1 + 1], kt->n))
                m1++;
            if (c->hazard_k) {
                if (o->json)
                    print_hazard_json(o, kt, c, pol_n, N, M, m1);
                else
                    print_hazard_text(o, kt, c, pol_n, N, M, m1);
            }
            M = m1 + 1;
        }
    }
}

/* The summary: a JSON line, or the summary and fence paragraphs. */
static void print_scan_summary(const route_opts *o, const scan_totals *t)
{
    if (o->json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "type", "summary");
        cJSON_AddNumberToObject(j, "shapes", (double)t->total);
        cJSON_AddNumberToObject(j, "untuned", (double)t->untuned);
        cJSON_AddNumberToObject(j, "hazardous", (double)t->hazard);
        cJSON_AddNumberToObject(j, "multiple_winners", (double)t->multi);
        cJSON_AddNumberToObject(j, "multiple_winners_asm", (double)t->multi_asm);
        cJSON_AddNumberToObject(j, "not_fitting_N", (double)t->nofit);
        cJSON_AddNumberToObject(j, "not_fitting_N_fenced_small_n", (double)t->nofit_small_n);
        cJSON_AddNumberToObject(j, "not_fitting_N_scale_unsupported", (double)t->nofit_scale);
        cJSON_AddNumberToObject(j, "not_fitting_N_other_triton", (double)t->nofit_other_triton);
        cJSON_AddNumberToObject(j, "not_fitting_N_asm", (double)t->nofit_asm);
        cJSON_AddNumberToObject(j, "not_fitting_N_asm_file_order", (double)t->file_nofit_asm);
        cJSON_AddNumberToObject(j, "not_fitting_N_asm_every_winner", (double)t->all_nofit_asm);
        cJSON_AddNumberToObject(j, "tile_M_gt_8M", (double)t->mfit);
        cJSON_AddNumberToObject(j, "tile_M_gt_8M_asm", (double)t->mfit_asm);
        cJSON_AddNumberToObject(j, "sampling_misses", (double)t->missed);
        cJSON_AddBoolToObject(j, "fence_covers_all", t->nofit_asm == 0);
        print_json_line(j);
        return;
    }
    printf("\nsummary: %zu shapes (M, N, K), %zu untuned, %zu hazardous; %zu have more than "
           "one possible winner (%zu of them on an ASM layer); a tile that does not fit N "
           "can win at %zu; a tile with tile_M > 8*M can win at %zu (%zu on an ASM layer); "
           "the sampled orders miss some winner at %zu\n",
           t->total, t->untuned, t->hazard, t->multi, t->multi_asm, t->nofit, t->mfit,
           t->mfit_asm, t->missed);
    printf("fence: of the %zu untuned shapes where a tile that does not fit N can win, the "
           "N <= 128 fence keeps %zu on Triton, the scale-swizzle rule (N %% 32, K/32 %% 8) "
           "%zu more, other policy steps %zu; %zu stay on the ASM path: the N <= 128 fence "
           "%s\n",
           t->nofit, t->nofit_small_n, t->nofit_scale, t->nofit_other_triton, t->nofit_asm,
           t->nofit_asm ? "does NOT cover every such shape" : "(with the scale rule) covers them all");
    if (t->nofit_asm)
        printf("fence: of those %zu ASM-path shapes, the file-order winner itself does not fit N "
               "at %zu, and no kernel that can win fits N at %zu\n",
               t->nofit_asm, t->file_nofit_asm, t->all_nofit_asm);
}

/* A per-cell set of K bits (bit i: scan_k[i]) the runs below print. */
typedef unsigned long long (*cell_mask)(const scan_cell *c, int which);

static unsigned long long exposed_of(const scan_cell *c, int which)
{
    (void)which;
    return c->exposed_k;
}

static unsigned long long bug_of(const scan_cell *c, int which) { return c->bug_k[which]; }

/* "  N=160: M=1..256 (all K), ..." per N: runs over M of equal nonzero masks. */
static void print_runs(const route_opts *o, const scan_cell *cells, cell_mask mask, int which)
{
    for (int ni = 0; ni < SCAN_NN; ni++) {
        int N = SCAN_N_MIN + ni * SCAN_N_STEP, printed = 0;
        const scan_cell *row = &cells[(size_t)ni * (SCAN_M_MAX + 1)];
        for (int M = 1; M <= SCAN_M_MAX;) {
            unsigned long long ks = mask(&row[M], which);
            int m1 = M;
            while (m1 + 1 <= SCAN_M_MAX && mask(&row[m1 + 1], which) == ks)
                m1++;
            if (ks) {
                char mr[32], kset[512];
                m_range(M, m1, mr, sizeof mr);
                k_set_text(o, ks, kset, sizeof kset);
                if (!printed)
                    printf("  N=%d:", N);
                printf("%s %s (%s)", printed ? "," : "", mr, kset);
                printed = 1;
            }
            M = m1 + 1;
        }
        if (printed)
            printf("\n");
    }
}

/* The cells on the ASM path where a tile that does not fit N can win, runs over M, per N. */
static void print_uncovered(const route_opts *o, const scan_cell *cells)
{
    printf("uncovered (ASM layer and a possible winner that does not fit N), runs over M:\n");
    print_runs(o, cells, exposed_of, 0);
}

/* The field bugs (ref/a4w4_hazard.h) of cell (M, N) at every K: an untuned shape gets the
 * heuristic's kernel (an ASM tile of the table, split 2^log2_k_split), a tuned one its route. */
static void scan_bugs(const route_opts *o, const a4w4_tuned_table *tuned,
                      const a4w4_kernel_table *kt, int M, int N, scan_cell *c,
                      const a4w4_policy_result *pol_n)
{
    char err[256];
    for (int k = 0; k < o->nscan_k; k++) {
        a4w4_bug_shape s;
        a4w4_route r;
        int K = o->scan_k[k];
        if (c->untuned_k & (1ull << k)) {
            a4w4_bug_shape_of(M, N, K, NULL, kt, o->hp.bpreshuffle, &pol_n[k], &s);
            s.routed = s.is_asm = 1;
            s.tile_m = kt->rows[c->file_winner].tile_m;
            s.tile_n = kt->rows[c->file_winner].tile_n;
            s.split = o->hp.log2_k_split > 0 ? 1 << o->hp.log2_k_split : 1;
            s.kernel_bpreshuffle = kt->rows[c->file_winner].bpreshuffle;
        } else if (!a4w4_route_shape(tuned, kt, &o->hp, M, N, K, &r, err, sizeof err)) {
            a4w4_bug_shape_of(M, N, K, &r, kt, o->hp.bpreshuffle, &pol_n[k], &s);
        } else
            continue;
        unsigned mask = a4w4_bugs_of(&s);
        for (int b = 0; b < A4W4_BUG_COUNT; b++)
            c->bug_k[b] |= (unsigned long long)((mask >> b) & 1u) << k;
    }
}

/* Every shape of the scan each field bug's rule flags: runs over M per N, with the K set. */
static void print_bugs(const route_opts *o, const scan_cell *cells)
{
    size_t nr;
    const a4w4_bug_rule *br = a4w4_bug_rules(&nr);
    if (!o->json)
        printf("\nfield bugs (ref/a4w4_hazard.c: each reported bug as a rule over the shape, "
               "its route and the layer decision), every shape of the scan each flags:\n");
    for (size_t b = 0; b < nr; b++) {
        size_t count = 0;
        for (size_t i = 0; i < (size_t)SCAN_NN * (SCAN_M_MAX + 1); i++)
            count += (size_t)__builtin_popcountll(cells[i].bug_k[b]);
        if (o->json) {
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "type", "field_bug");
            cJSON_AddStringToObject(j, "id", br[b].id);
            cJSON_AddStringToObject(j, "citation", br[b].citation);
            cJSON_AddStringToObject(j, "url", br[b].url);
            cJSON_AddStringToObject(j, "rule", br[b].rule);
            cJSON_AddBoolToObject(j, "shape_rule", br[b].shape_rule);
            cJSON_AddNumberToObject(j, "shapes", (double)count);
            print_json_line(j);
            continue;
        }
        printf("%s (%s): %s; %s: %zu shape%s\n", br[b].id, br[b].citation, br[b].what,
               br[b].rule, count, count == 1 ? "" : "s");
        if (count)
            print_runs(o, cells, bug_of, (int)b);
    }
}

/* Fill and count every cell of the scan. 0, or an exit code after the error. */
static int scan_cells(const route_opts *o, const a4w4_tuned_table *tuned,
                      const a4w4_kernel_table *kt, scan_cell *cells,
                      const a4w4_policy_result *pol, scan_totals *t)
{
    for (int ni = 0; ni < SCAN_NN; ni++) {
        int N = SCAN_N_MIN + ni * SCAN_N_STEP;
        for (int M = 1; M <= SCAN_M_MAX; M++) {
            scan_cell *c = &cells[(size_t)ni * (SCAN_M_MAX + 1) + (size_t)M];
            if (scan_cell_fill(o, tuned, kt, M, N, c, t))
                return A4W4_EXIT_BADINPUT;
            if (c->untuned_k)
                scan_count(o, c, &pol[(size_t)ni * (size_t)o->nscan_k], t);
            scan_bugs(o, tuned, kt, M, N, c, &pol[(size_t)ni * (size_t)o->nscan_k]);
        }
    }
    return 0;
}

static int run_scan(const route_opts *o, const a4w4_tuned_table *tuned,
                    const a4w4_kernel_table *kt)
{
    scan_cell *cells = calloc((size_t)SCAN_NN * (SCAN_M_MAX + 1), sizeof *cells);
    a4w4_policy_result *pol = calloc((size_t)SCAN_NN * (size_t)o->nscan_k, sizeof *pol);
    if (!cells || !pol) {
        free(cells);
        free(pol);
        a4w4_errorf("route --scan: out of memory");
        return A4W4_EXIT_BADINPUT;
    }
    scan_totals t;
    memset(&t, 0, sizeof t);
    int rc = scan_policies(o, pol);
    if (!rc)
        rc = scan_cells(o, tuned, kt, cells, pol, &t);
    if (!rc) {
        if (!o->json)
            print_scan_head(o, tuned, kt);
        print_hazards(o, kt, cells, pol);
        print_scan_summary(o, &t);
        if (!o->json && t.nofit_asm)
            print_uncovered(o, cells);
        print_bugs(o, cells);
    }
    free(cells);
    free(pol);
    return rc ? rc : A4W4_EXIT_PASS;
}

/* ---- shapes --------------------------------------------------------------------------- */

/* Route every shape first so a bad one stops the run before any output; then print each.
 * Returns -1 when done, else the exit code. */
static int route_shapes(const route_opts *o, const a4w4_tuned_table *tp,
                        const a4w4_kernel_table *kt)
{
    char err[1024];
    a4w4_route *routes = calloc(o->nshapes, sizeof *routes);
    a4w4_policy_result *pols = calloc(o->nshapes, sizeof *pols);
    int rc = -1;
    if (!routes || !pols) {
        a4w4_errorf("route: out of memory");
        rc = A4W4_EXIT_BADINPUT;
    }
    for (size_t i = 0; rc == -1 && i < o->nshapes; i++) {
        int M = o->shapes[3 * i], N = o->shapes[3 * i + 1], K = o->shapes[3 * i + 2];
        if (a4w4_route_shape(tp, kt, &o->hp, M, N, K, &routes[i], err, sizeof err)) {
            a4w4_errorf("route: %s%sshape %zu (M %d N %d K %d): %s", o->cases ? o->cases : "",
                        o->cases ? ": " : "", i + 1, M, N, K, err);
            rc = A4W4_EXIT_BADINPUT;
        } else if (policy_for(o, N, K, &pols[i]) != A4W4_OK) {
            rc = A4W4_EXIT_BADINPUT;
        }
    }
    for (size_t i = 0; rc == -1 && i < o->nshapes; i++) {
        if (o->json)
            print_json(o, kt, &routes[i], &pols[i]);
        else
            print_human(o, kt, &routes[i], &pols[i]);
    }
    free(routes);
    free(pols);
    return rc;
}

/* ---- entry ---------------------------------------------------------------------------- */

/* The tuned tables (unless --no-tuned) and the kernel table. Returns -1, else the exit code. */
static int load_tables(route_opts *o, a4w4_tuned_table *tuned, a4w4_kernel_table *kt)
{
    char err[1024], buf1[4096], buf2[4096];
    if (!o->no_tuned) {
        if (!o->tuned.n)
            o->tuned.v[o->tuned.n++] = a4w4_data_path(DEFAULT_TUNED, buf1, sizeof buf1);
        for (size_t i = 0; i < o->tuned.n; i++)
            if (a4w4_tuned_load(tuned, o->tuned.v[i], err, sizeof err) != A4W4_OK) {
                a4w4_errorf("route: tuned table %s", err);
                return A4W4_EXIT_BADINPUT;
            }
    }
    const char *kpath = o->kernels ? o->kernels : a4w4_data_path(DEFAULT_KERNELS, buf2, sizeof buf2);
    if (a4w4_kernels_load(kt, kpath, NULL, err, sizeof err) != A4W4_OK) {
        a4w4_errorf("route: kernel table %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    return -1;
}

int cmd_route(int argc, char **argv)
{
    route_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc == -1 && !strcmp(o.hp.gfx, "gfx942")) {
        a4w4_errorf("route: A4W4 GEMM kernel is not supported on gfx942, but got gfx942! (AITER "
                    "gemm_a4w4; gfx942 has no a4w4 ASM kernels, contracts §5.4)");
        rc = A4W4_EXIT_BADINPUT;
    }
    if (rc != -1) {
        free(o.shapes);
        return rc;
    }
    char err[1024];
    a4w4_tuned_table tuned = {0};
    a4w4_kernel_table kt = {0};
    rc = load_tables(&o, &tuned, &kt);
    const a4w4_tuned_table *tp = o.no_tuned ? NULL : &tuned;
    if (rc == -1 && o.scan) {
        rc = run_scan(&o, tp, &kt);
    } else if (rc == -1) {
        if (o.cases && a4w4_shapelist_load(o.cases, &o.shapes, &o.nshapes, err, sizeof err)) {
            a4w4_errorf("route: cases %s", err);
            rc = A4W4_EXIT_BADINPUT;
        } else {
            rc = route_shapes(&o, tp, &kt);
            rc = rc == -1 ? A4W4_EXIT_PASS : rc;
        }
    }
    free(o.shapes);
    a4w4_tuned_free(&tuned);
    a4w4_kernels_free(&kt);
    if (fflush(stdout) != 0) {
        a4w4_errorf("route: cannot write the output");
        return A4W4_EXIT_IO;
    }
    return rc;
}
