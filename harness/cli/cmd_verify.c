/* cmd_verify.c — `a4w4check verify BUNDLE...`: recompute every tensor of each bundle. */
#include <stdio.h>
#include <string.h>

#include "a4w4check.h"
#include "cpu_sut.h"
#include "options.h"
#include "verify_bundle.h"
#include "verify_capture.h"

static const char verify_usage[] =
    "usage: a4w4check verify BUNDLE.safetensors [BUNDLE...]\n"
    "\n"
    "Reads each case (a4w4-case/1) or quantization (a4w4-quant/1) bundle (contracts §7) and\n"
    "recomputes every tensor the oracles can produce: quantization per scale mode (from x_f32,\n"
    "x_bf16, or x in the bundle's round_mode), the three ASM layouts, y_exact, y_ordered, and\n"
    "both CPU systems under test (cpu-asm, cpu-fallback) against y_ordered. A capture bundle\n"
    "(a4w4-capture/1) is judged as `run --captures` judges it: its y against the contract its\n"
    "kernel declared (none declared: bit for bit inside the exact regime, the rest counted\n"
    "not judged), its quantizer outputs byte for byte.\n"
    "One line per check: PASS, FAIL (tensor, first mismatching (row, col), got/expected in hex,\n"
    "mismatch count) or N/A with the reason.\n"
    "\n";

static const a4w4_option verify_options[] = {OPT_END()};

static const a4w4_command_spec verify_spec = {
    "verify", verify_usage, verify_options, "BUNDLE...",
    "exit: 0 all pass, 1 any mismatch, 2 bad input (malformed file, missing tensor, bad shape)\n"};

typedef struct {
    size_t npass, nfail, nna;
} verify_counts;

/* Judge one capture bundle (a4w4_run_capture, the reading `run --captures` makes too) and
 * print one line per entry. Returns the bundle's worst exit code. */
static int verify_capture_one(const char *path, const char *base, verify_counts *n)
{
    a4w4_entry_list el = {0};
    char err[512] = "";
    a4w4_hstatus rc = a4w4_run_capture(path, &el, err, sizeof err);
    int fail = 0;
    for (size_t j = 0; j < el.n; j++) {
        char line[1400];
        a4w4_entry_format(&el.items[j], base, line, sizeof line);
        puts(line);
        n->npass += el.items[j].verdict == A4W4_VERDICT_PASS;
        n->nfail += el.items[j].verdict == A4W4_VERDICT_FAIL;
        n->nna += el.items[j].verdict == A4W4_VERDICT_NA;
        fail |= el.items[j].verdict == A4W4_VERDICT_FAIL;
    }
    a4w4_entry_list_free(&el);
    if (rc == A4W4_ST_BADINPUT) {
        fflush(stdout);
        a4w4_errorf("%s", err);
    }
    return rc != A4W4_ST_OK ? a4w4_exit_code(rc) : fail ? A4W4_EXIT_MISMATCH : A4W4_EXIT_PASS;
}

/* Verify one bundle and print its check lines. Returns the bundle's worst exit code. */
static int verify_one(const char *path, verify_counts *n)
{
    a4w4_check_list checks = {0};
    char err[512] = "";
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (a4w4_is_capture(path))
        return verify_capture_one(path, base, n);
    size_t nsuts;
    const a4w4_bundle_sut *suts = a4w4_cpu_bundle_suts(&nsuts);
    a4w4_hstatus rc = a4w4_verify_bundle(path, suts, nsuts, &checks, NULL, err, sizeof err);
    for (size_t j = 0; j < checks.n; j++) {
        char line[512];
        a4w4_check_format(&checks.items[j], base, line, sizeof line);
        puts(line);
        n->npass += checks.items[j].verdict == A4W4_CHECK_PASS;
        n->nfail += checks.items[j].verdict == A4W4_CHECK_FAIL;
        n->nna += checks.items[j].verdict == A4W4_CHECK_NA;
    }
    a4w4_check_list_free(&checks);
    if (rc == A4W4_ST_BADINPUT) {
        fflush(stdout);
        a4w4_errorf("%s", err);
    }
    return a4w4_exit_code(rc);
}

int cmd_verify(int argc, char **argv)
{
    a4w4_args args;
    int rc = a4w4_options_parse(&verify_spec, NULL, argc, argv, &args);
    if (rc != A4W4_OPTS_CONTINUE)
        return rc;
    if (args.n < 1) {
        a4w4_errorf("verify: no bundle given (usage: a4w4check verify BUNDLE...)");
        return A4W4_EXIT_BADINPUT;
    }
    int worst = A4W4_EXIT_PASS;
    verify_counts n = {0, 0, 0};
    for (int i = 0; i < args.n; i++) {
        int r = verify_one(args.v[i], &n);
        if (r == A4W4_EXIT_BADINPUT || (r == A4W4_EXIT_MISMATCH && worst == A4W4_EXIT_PASS))
            worst = r;
    }
    printf("verify: %zu passed, %zu failed, %zu n/a\n", n.npass, n.nfail, n.nna);
    return worst;
}
