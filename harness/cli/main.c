/* a4w4check — the CLI. One table of subcommands (like git.c); each lives in cmd_<name>.c. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "a4w4check.h"
#include "stream.h"

static const a4w4_cmd commands[] = {
    {"verify", cmd_verify, "recompute every tensor of safetensors case bundles bit-exactly"},
    {"run", cmd_run, "run a case matrix through the backends against the oracles (main job)"},
    {"merge", cmd_merge, "combine the results of sharded runs into one report"},
    {"route", cmd_route, "which kernel AITER routes each shape to, its possible winners, the layer policy"},
    {"invariance", cmd_invariance, "does row i get the same bits at every batch size M; where not, why"},
    {"layers", cmd_layers, "the SGLang layer path end to end (contracts §6) on each backend pair vs the oracles"},
    {"bench", cmd_bench, "throughput of the exact and ordered oracles beside OpenBLAS sgemm (G-MAC/s)"},
    {"selftest", cmd_selftest, "mutation self-test: every deliberately wrong backend must fail, every correct one pass"},
    {"coverage", cmd_coverage, "which cases exercise each padded-M bucket, kernel tile, regime edge and fault class"},
    {"fingerprint", cmd_fingerprint, "which scale mode and E2M1 rounding a quantizer actually implements"},
    {"hazards", cmd_hazards, "the small-N/M hazard map: backend verdicts joined with dispatch and layer policy"},
    {"report", cmd_report, "render results.json as Markdown, self-contained HTML and JUnit XML"},
    {"export", cmd_export, "operand bundles of a case matrix for kernels outside this process"},
    {"discover", cmd_discover, "reveal a backend's accumulation order by probing; write the contract that fits"},
    {"compare", cmd_compare, "parity between two runs: new failures, fixed cases, changed bits, timing"},
    {"shrink", cmd_shrink, "reduce a failing case to a minimal one that fails the same way"},
    {"quant-parity", cmd_quant_parity, "per layer: what the Triton (even) and HIP (round_up) activation quantizers change"},
    {"known", cmd_known, "the known-failures ledger: check it, list it, update its dates from a run"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: a4w4check <command> [options] [args]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'a4w4check <command> --help' describes one command; 'a4w4check --version'\n"
                 "prints the version.\n"
                 "exit codes: 0 pass, 1 mismatch, 2 bad input or usage, 3 no GPU, 4 output not written,\n"
                 "            5 incomplete (not everything expected was checked)\n");
}

/* Keep freed memory in the process instead of giving it back to the kernel (glibc only; a
 * no-op elsewhere and under the sanitizers' allocator). A run allocates and frees the outputs,
 * oracles and scratch of every case and entry, up to gigabytes for the large pre-merge
 * cases; above 32 MiB glibc maps each block afresh and unmaps it on free, so every reuse
 * faulted its pages in again (the kernel zeroing each one): a quarter of a full pre-merge
 * run's CPU time (docs/benchmarks.md "Allocation churn"). With no mmap'ed blocks and no trim,
 * a block is carved from the heap and reused by the next case. The peak resident size is
 * unchanged; it is held until exit. Set here, in the CLI only: a program that links the
 * library (the Python bridge) keeps its own allocator settings. */
static void keep_freed_memory(void)
{
#if defined(__GLIBC__)
    mallopt(M_MMAP_MAX, 0);               /* every block from the heap (sbrk) */
    mallopt(M_TRIM_THRESHOLD, INT_MAX);   /* the heap's free top kept up to 2 GiB */
#endif
}

int main(int argc, char **argv)
{
    keep_freed_memory();
    if (argc < 2) {
        usage(stderr);
        return A4W4_EXIT_BADINPUT;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return A4W4_EXIT_PASS;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("a4w4check %s\n", A4W4_TOOL_VERSION); /* python/a4w4check/__init__.py's */
        return fflush(stdout) ? A4W4_EXIT_IO : A4W4_EXIT_PASS;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    a4w4_errorf("unknown command '%s' (see 'a4w4check --help')", argv[1]);
    return A4W4_EXIT_BADINPUT;
}
