/* cmd_route.c — `a4w4check route`: which kernel AITER's gemm_a4w4 runs for each shape
 * (contracts §5), which kernels could win under another table walk order, the tile-fit warnings,
 * and SGLang's layer decision (contracts §6); `--scan` is the static hazard scan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4check.h"
#include "dispatch_chain.h"
#include "options.h"
#include "route_render.h"
#include "route_scan.h"
#include "shapelist.h"

#define DEFAULT_SCAN_K "1024,4096,5120,7168,14336,34816"
#define MAX_TUNED 16

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
    a4w4_dispatch_setup setup;
    const char *kind_name;
    int json; /* --format: 0 text, 1 json */
    int scan;
    const char *cases, *klist;
    int scan_k[A4W4_SCAN_MAX_K];
    int nscan_k;
    int *shapes; /* 3 ints per shape */
    size_t nshapes;
} route_opts;

static const a4w4_option route_options[] = {
    OPT_STRINGS("tuned", route_opts, tuned, "CSV",
                "tuned table (repeat to merge; default " A4W4_TUNED_TABLE_DEFAULT ")"),
    OPT_FLAG("no-tuned", route_opts, no_tuned, "route as if nothing were tuned"),
    OPT_STRING("kernels", route_opts, kernels, "CSV",
               "ASM kernel table (default " A4W4_KERNEL_TABLE_DEFAULT ")\n"
               "default paths resolve from the current directory, else the source tree"),
    OPT_STRING("gfx", route_opts, setup.hp.gfx, "ARCH",
               "device arch (default gfx950; gfx942 gives AITER's error)"),
    OPT_INT("cu", route_opts, setup.hp.num_cu, "N", 1, 65536, "compute units (default 256)"),
    OPT_INT("log2-k-split", route_opts, setup.hp.log2_k_split, "N", -1, 4,
            "what the heuristic gets: 0 (default, AITER's Python wrapper), 1..4,\n"
            "or -1 (none: split-K kernels try 2,4,8,16)"),
    OPT_INT("bpreshuffle", route_opts, setup.hp.bpreshuffle, "0|1", 0, 1,
            "preshuffled weight (default 1, as SGLang passes)"),
    OPT_INT("asm-flag", route_opts, setup.asm_flag, "0|1", 0, 1,
            "SGLANG_ROCM_USE_AITER_FP4_ASM_GEMM for the policy (default 1)"),
    OPT_STRING("input", route_opts, kind_name, "KIND",
               "input of the policy call: 2d (default), 3d, tuple2, tuple3, tuple5, tupleN"),
    OPT_CHOICE("format", route_opts, json, "F", a4w4_format_text_json,
               "text (default) or json: one JSON object per line"),
    OPT_STRING("cases", route_opts, cases, "FILE", "shapes from a CSV whose header names M, N, K"),
    OPT_FLAG("scan", route_opts, scan,
             "M 1..256, N 16..512 step 16, K from --k: every untuned shape whose\n"
             "possible winners include a tile that does not fit in N or that has\n"
             "more than one possible winner, and whether the policy's N <= 128 fence\n"
             "covers every shape where a non-fitting tile can win"),
    OPT_STRING("k", route_opts, klist, "LIST", "K values of the scan (default " DEFAULT_SCAN_K ")"),
    OPT_OLD_FLAG("json", route_opts, json, "--format json"),
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

/* The option values that need more than the table's checks: --gfx, --input, and which of
 * shapes, --cases, --scan and --k go together. Returns -1 when valid, else the exit code. */
static int check_args(route_opts *o, int npos)
{
    if (!*o->setup.hp.gfx) {
        a4w4_errorf("route: --gfx is empty");
        return A4W4_EXIT_BADINPUT;
    }
    if (a4w4_input_kind_parse(o->kind_name, &o->setup.kind, &o->setup.tuple_len) != A4W4_OK) {
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
    *o = (route_opts){.tuned = {o->tuned_v, 0, MAX_TUNED},
                      .setup = A4W4_DISPATCH_SETUP_DEFAULT,
                      .kind_name = "2d"};
    a4w4_args pos;
    int rc = a4w4_options_parse(&route_spec, o, argc, argv, &pos);
    if (rc == A4W4_OPTS_CONTINUE)
        rc = check_args(o, pos.n);
    if (rc == -1 && o->scan &&
        a4w4_parse_k_list("route", o->klist ? o->klist : DEFAULT_SCAN_K, o->scan_k,
                          A4W4_SCAN_MAX_K, &o->nscan_k))
        rc = A4W4_EXIT_BADINPUT;
    if (rc == -1 && pos.n)
        rc = parse_shapes(o, &pos);
    return rc;
}

/* ---- run ------------------------------------------------------------------------------- */

static a4w4_route_view view_of(const route_opts *o)
{
    return (a4w4_route_view){.json = o->json, .kind_name = o->kind_name, .hp = o->setup.hp,
                             .asm_flag = o->setup.asm_flag, .scan_k = o->scan_k,
                             .nscan_k = o->nscan_k};
}

/* The scan (commands/route_scan.h), then its report. Returns the exit code. */
static int run_scan(const route_opts *o, const a4w4_tuned_table *tuned,
                    const a4w4_kernel_table *kt)
{
    a4w4_route_scan s = {.setup = o->setup, .nscan_k = o->nscan_k};
    memcpy(s.scan_k, o->scan_k, sizeof s.scan_k);
    char err[1024];
    a4w4_scan_status st = a4w4_route_scan_run(&s, tuned, kt, err, sizeof err);
    if (st == A4W4_SCAN_NOMEM)
        a4w4_errorf("route --scan: out of memory");
    else if (st == A4W4_SCAN_POLICY)
        a4w4_errorf("route: %s", err);
    else if (st == A4W4_SCAN_CELL)
        a4w4_errorf("route --scan: %s", err);
    else {
        a4w4_route_view v = view_of(o);
        a4w4_route_scan_print(&v, &s, tuned, kt);
    }
    a4w4_route_scan_free(&s);
    return st ? A4W4_EXIT_BADINPUT : A4W4_EXIT_PASS;
}

/* ---- shapes --------------------------------------------------------------------------- */

/* Route every shape first (route, policy, hazard: dispatch_chain.h) so a bad one stops the
 * run before any output; then print each. Returns -1 when done, else the exit code. */
static int route_shapes(const route_opts *o, const a4w4_tuned_table *tp,
                        const a4w4_kernel_table *kt)
{
    char err[1024];
    a4w4_dispatch_chain *ch = calloc(o->nshapes ? o->nshapes : 1, sizeof *ch);
    int rc = -1;
    if (!ch) {
        a4w4_errorf("route: out of memory");
        rc = A4W4_EXIT_BADINPUT;
    }
    for (size_t i = 0; rc == -1 && i < o->nshapes; i++) {
        int M = o->shapes[3 * i], N = o->shapes[3 * i + 1], K = o->shapes[3 * i + 2];
        a4w4_chain_step st = a4w4_dispatch_chain_of(tp, kt, &o->setup, M, N, K, &ch[i], err,
                                                    sizeof err);
        if (st == A4W4_CHAIN_ROUTE)
            a4w4_errorf("route: %s%sshape %zu (M %d N %d K %d): %s", o->cases ? o->cases : "",
                        o->cases ? ": " : "", i + 1, M, N, K, err);
        else if (st != A4W4_CHAIN_OK)
            a4w4_errorf("route: policy for N %d K %d: %s", N, K, err);
        if (st != A4W4_CHAIN_OK)
            rc = A4W4_EXIT_BADINPUT;
    }
    a4w4_route_view v = view_of(o);
    for (size_t i = 0; rc == -1 && i < o->nshapes; i++)
        a4w4_route_chain_print(&v, kt, &ch[i]);
    free(ch);
    return rc;
}

/* ---- entry ---------------------------------------------------------------------------- */

/* The tuned tables (unless --no-tuned) and the kernel table. Returns -1, else the exit code. */
static int load_tables(route_opts *o, a4w4_tuned_table *tuned, a4w4_kernel_table *kt)
{
    char err[1024], buf1[4096], buf2[4096];
    if (!o->no_tuned) {
        if (!o->tuned.n)
            o->tuned.v[o->tuned.n++] = a4w4_data_path(A4W4_TUNED_TABLE_DEFAULT, buf1, sizeof buf1);
        for (size_t i = 0; i < o->tuned.n; i++)
            if (a4w4_tuned_load(tuned, o->tuned.v[i], err, sizeof err) != A4W4_OK) {
                a4w4_errorf("route: tuned table %s", err);
                return A4W4_EXIT_BADINPUT;
            }
    }
    const char *kpath = o->kernels ? o->kernels : a4w4_data_path(A4W4_KERNEL_TABLE_DEFAULT, buf2, sizeof buf2);
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
    if (rc == -1 && !strcmp(o.setup.hp.gfx, "gfx942")) {
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
