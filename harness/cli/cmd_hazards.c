/* cmd_hazards.c — `a4w4check hazards`: the hazard map. The small-N/M sweep (the
 * `hazard` set, cases/hazard.csv) through every available backend with the runner, joined per
 * (M, N, K) cell with the static dispatch facts `route --scan` reports (ref/a4w4_dispatch.h:
 * the kernel AITER's untuned heuristic picks in file order, every kernel that can win under
 * some walk order of its table and whether its tile fits N) and with SGLang's layer decision
 * (ref/a4w4_policy.h: does the N <= 128 fence, or the scale-swizzle rule, keep the cell on
 * Triton). Output: a text heat map per K, and with --format json the file DIR/hazards.json that the
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4check.h"
#include "backend_list.h"
#include "hazards_render.h"
#include "progress.h"
#include "registry.h"

#define DEFAULT_CASES "cases/hazard.csv"

static const char hazards_usage[] =
    "usage: a4w4check hazards [--k K,K,...] [--quick] [--cases FILE] [--backend a,b,...]\n"
    "                         [--contract B=FILE|TEXT]... [--format F] [--out DIR] [--jobs N]\n"
    "                         [--timeout S] [--no-isolate] [--quiet]\n"
    "\n"
    "The hazard map: every (M, N, K) cell of the hazard set (M 1..64, N 16..256 step 16,\n"
    "K 256, 512, 1312, 2048) through every available backend with the runner, joined with the static\n"
    "dispatch scan (the kernel AITER's untuned heuristic picks, how many kernels could win\n"
    "under another walk order of its table, whether their tiles fit N) and SGLang's layer\n"
    "policy (is the cell fenced onto Triton). Routing as `route --scan`: gfx950, 256 CUs,\n"
    "log2_k_split 0, preshuffled weights, the tables under cases/aiter/.\n"
    "\n";

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
    OPT_CHOICE("format", hazards_opts, json, "F", a4w4_format_text_json,
               "text (default): the map on stdout; json: also write DIR/hazards.json\n"
               "(atomically) and the results document"),
    OPT_STRING("out", hazards_opts, out_dir, "DIR", "where hazards.json goes (default build/out)"),
    OPT_INT("jobs", hazards_opts, jobs, "N", 1, 256,
            "cases run in parallel (default: the CPU count when every backend is\n"
            "thread-safe (the CPU ones, mutants, plugins, bundles), else 1)"),
    OPT_INT("timeout", hazards_opts, timeout_s, "S", 0, 86400, A4W4_TIMEOUT_HELP),
    OPT_FLAG("no-isolate", hazards_opts, no_isolate, A4W4_NO_ISOLATE_HELP),
    OPT_FLAG("quiet", hazards_opts, quiet, A4W4_QUIET_HELP),
    OPT_OLD_FLAG("json", hazards_opts, json, "--format json"),
    OPT_END(),
};

static const a4w4_command_spec hazards_spec = {
    "hazards", hazards_usage, hazards_options, NULL,
    "exit: 0 every backend passes every cell, 1 a failure, 2 bad input, 3 a GPU backend\n"
    "      without a GPU, 4 hazards.json not written\n"};

static int in_ints(const int *v, int n, long x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

/* ---- the command ------------------------------------------------------------------------ */

static const int quick_m[] = {1, 2, 16, 33, 64}, quick_n[] = {16, 64, 128, 160, 192, 256};

/* The K filter: --k's values, or 256 for --quick. Returns the exit code. */
static int plan_k(const hazards_opts *o, hazards_plan *p)
{
    if (o->klist && a4w4_parse_k_list("hazards", o->klist, p->ks, HAZARDS_MAX_K, &p->nk))
        return A4W4_EXIT_BADINPUT;
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
    p->sw.cells = calloc(p->ncases ? p->ncases : 1, sizeof *p->sw.cells);
    if (!p->sw.cells) {
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
        memset(p->sw.cells[p->sw.n].v, A4W4_HZ_SKIP, sizeof p->sw.cells[p->sw.n].v); /* until the runner says otherwise */
        p->sw.cells[p->sw.n++].c = c;
    }
    if (!p->sw.n) {
        a4w4_errorf("hazards: %s: no case matches%s%s%s", p->cases_path, o->klist ? " --k " : "",
                    o->klist ? o->klist : "", o->quick ? " and the --quick subset" : "");
        return A4W4_EXIT_BADINPUT;
    }
    qsort(p->sw.cells, p->sw.n, sizeof *p->sw.cells, a4w4_hazard_cell_cmp);
    return A4W4_EXIT_PASS;
}

/* Routing and policy per cell (static; before the long part, so bad tables stop early).
 * Returns the exit code. */
static int plan_routes(hazards_plan *p)
{
    char err[1024];
    p->setup = (a4w4_dispatch_setup)A4W4_DISPATCH_SETUP_DEFAULT;
    p->tpath = a4w4_data_path(A4W4_TUNED_TABLE_DEFAULT, p->tbuf, sizeof p->tbuf);
    p->kpath = a4w4_data_path(A4W4_KERNEL_TABLE_DEFAULT, p->kbuf, sizeof p->kbuf);
    if (a4w4_tuned_load(&p->tuned, p->tpath, err, sizeof err) != A4W4_OK) {
        a4w4_errorf("hazards: tuned table %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    if (a4w4_kernels_load(&p->kt, p->kpath, NULL, err, sizeof err) != A4W4_OK) {
        a4w4_errorf("hazards: kernel table %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    if (a4w4_hazard_sweep_route(&p->sw, &p->tuned, &p->kt, &p->setup, err, sizeof err)) {
        a4w4_errorf("hazards: %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    int(*shapes)[3] = a4w4_tuned_shapes(&p->tuned, &p->ntuned);
    int bad = !shapes || a4w4_field_bugs_of((const int(*)[3])shapes, p->ntuned, &p->tuned,
                                            &p->kt, &p->setup.hp, p->bugs);
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
    a4w4_backend_list_opts bo = {"hazards", A4W4_HZ_MAX_BACKENDS, 1, o->quiet};
    if ((rc = a4w4_isolation_options("hazards", o->no_isolate, o->timeout_s)) != A4W4_EXIT_PASS ||
        (rc = a4w4_backend_list_open(&bo, &o->backend, p->bk, &p->nbk)) != A4W4_EXIT_PASS ||
        (rc = a4w4_backend_contracts_apply("hazards", &o->contract, p->bk, p->nbk)) !=
            A4W4_EXIT_PASS)
        return rc;
    if (!p->nbk) {
        a4w4_errorf("hazards: no backend to run");
        return A4W4_EXIT_BADINPUT;
    }
    p->sw.bk = p->bk;
    p->sw.nbk = p->nbk;
    p->sw.jobs = o->jobs;
    return plan_routes(p);
}

static void progress_count(void *ctx, size_t done, size_t total, int nfail)
{
    a4w4_progress_count(ctx, done, total, nfail);
}

/* The sweep (commands/hazard_sweep.h), then the classes and counts. Returns the exit code. */
static int run_hazards(const hazards_opts *o, hazards_plan *p)
{
    char err[512];
    a4w4_progress pg;
    a4w4_progress_start(&pg, "hazards", o->quiet, 1);
    if (a4w4_hazard_sweep_run(&p->sw, progress_count, &pg, err, sizeof err)) {
        a4w4_errorf("hazards: %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    if (a4w4_hazard_sweep_tally(&p->sw)) {
        a4w4_errorf("hazards: out of memory");
        return A4W4_EXIT_BADINPUT;
    }
    return A4W4_EXIT_PASS;
}

static void plan_free(hazards_plan *p)
{
    a4w4_backend_list_close(p->bk, p->nbk);
    a4w4_field_bugs_free(p->bugs);
    a4w4_tuned_free(&p->tuned);
    a4w4_kernels_free(&p->kt);
    a4w4_hazard_sweep_free(&p->sw);
    free(p->sw.cells);
    free(p->cases);
}

int cmd_hazards(int argc, char **argv)
{
    const char *contract_v[A4W4_HZ_MAX_BACKENDS];
    hazards_opts o = {.out_dir = "build/out",
                      .contract = {contract_v, 0, A4W4_HZ_MAX_BACKENDS},
                      .timeout_s = -1};
    a4w4_args args;
    int rc = a4w4_options_parse(&hazards_spec, &o, argc, argv, &args);
    if (rc != A4W4_OPTS_CONTINUE)
        return rc;
    hazards_plan p;
    memset(&p, 0, sizeof p);
    rc = plan_hazards(&o, &p);
    if (rc == A4W4_EXIT_PASS)
        rc = run_hazards(&o, &p);
    if (rc == A4W4_EXIT_PASS) {
        hazards_print_text(&o, &p);
        rc = p.sw.ncls[A4W4_HZ_FAIL] ? A4W4_EXIT_MISMATCH : A4W4_EXIT_PASS;
        if (o.json)
            rc = hazards_write_json_outputs(&o, &p, rc);
    }
    plan_free(&p);
    if (fflush(stdout) != 0) {
        a4w4_errorf("hazards: cannot write the output");
        return A4W4_EXIT_IO;
    }
    return rc;
}
