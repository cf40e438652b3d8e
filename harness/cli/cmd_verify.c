/* cmd_verify.c — `a4w4check verify BUNDLE...`: recompute every tensor of each bundle. */
#include <stdio.h>
#include <string.h>

#include "a4w4check.h"
#include "cpu_sut.h"
#include "verify_bundle.h"

static const char verify_usage[] =
    "usage: a4w4check verify BUNDLE.safetensors [BUNDLE...]\n"
    "\n"
    "Reads each case (a4w4-case/1) or quantization (a4w4-quant/1) bundle (contracts §7) and\n"
    "recomputes every tensor the oracles can produce: quantization per scale mode (from x_f32,\n"
    "x_bf16, or x in the bundle's round_mode), the three ASM layouts, y_exact, y_ordered, and\n"
    "both CPU systems under test (cpu-asm, cpu-fallback) against y_ordered.\n"
    "One line per check: PASS, FAIL (tensor, first mismatching (row, col), got/expected in hex,\n"
    "mismatch count) or N/A with the reason.\n"
    "\n"
    "exit: 0 all pass, 1 any mismatch, 2 bad input (malformed file, missing tensor, bad shape)\n";

int cmd_verify(int argc, char **argv)
{
    if (a4w4_wants_help(argc, argv)) {
        fputs(verify_usage, stdout);
        return A4W4_EXIT_PASS;
    }
    if (argc < 2) {
        a4w4_errorf("verify: no bundle given (usage: a4w4check verify BUNDLE...)");
        return A4W4_EXIT_BADINPUT;
    }
    int worst = A4W4_EXIT_PASS;
    size_t npass = 0, nfail = 0, nna = 0;
    for (int i = 1; i < argc; i++) {
        a4w4_check_list checks = {0};
        char err[512] = "";
        const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
        size_t nsuts;
        const a4w4_bundle_sut *suts = a4w4_cpu_bundle_suts(&nsuts);
        a4w4_hstatus rc = a4w4_verify_bundle(argv[i], suts, nsuts, &checks, NULL, err, sizeof err);
        for (size_t j = 0; j < checks.n; j++) {
            char line[512];
            a4w4_check_format(&checks.items[j], base, line, sizeof line);
            puts(line);
            npass += checks.items[j].verdict == A4W4_CHECK_PASS;
            nfail += checks.items[j].verdict == A4W4_CHECK_FAIL;
            nna += checks.items[j].verdict == A4W4_CHECK_NA;
        }
        a4w4_check_list_free(&checks);
        if (rc == A4W4_ST_BADINPUT) {
            fflush(stdout);
            a4w4_errorf("%s", err);
            worst = a4w4_exit_code(rc);
        } else if (rc == A4W4_ST_MISMATCH && worst == A4W4_EXIT_PASS) {
            worst = a4w4_exit_code(rc);
        }
    }
    printf("verify: %zu passed, %zu failed, %zu n/a\n", npass, nfail, nna);
    return worst;
}
