/* cmd_fingerprint.c — `a4w4check fingerprint`: which scale mode and which E2M1 rounding a
 * quantizer actually implements, from crafted blocks whose amax separates the four
 * modes of contracts §2 and whose elements sit on E2M1 ties (quantizers.h). For when a fused
 * Triton quantizer and the HIP one disagree. */
#include <stdio.h>
#include <string.h>

#include "a4w4_quant.h"
#include "a4w4check.h"
#include "registry.h"
#include "quantizers.h"

static const char fingerprint_usage[] =
    "usage: a4w4check fingerprint --backend X [--mode MODE]\n"
    "\n"
    "Feeds quantizer X crafted bf16 blocks (amax at values where round_up, round_down, ceil\n"
    "and even give different scale codes; elements on E2M1 ties) and names the scale mode and\n"
    "the rounding it implements, e.g. 'round_up + RNE', or 'no single mode matches: ...'.\n"
    "\n"
    "  --backend X   a quantizer: ref (ref-quant), a quantizer mutant (mut-mode-ceil,\n"
    "                mut-e2m1-trunc, ...; see selftest --list), hip-quant in GPU builds\n"
    "  --mode MODE   the mode to ask for: round_up, round_down, ceil, even (default: each)\n"
    "\n"
    "exit: 0 X implements every asked mode with RNE and the contracts' nibble order, 1 otherwise,\n"
    "      2 bad usage or an unknown quantizer, 3 a GPU quantizer without a GPU\n";

int cmd_fingerprint(int argc, char **argv)
{
    if (a4w4_wants_help(argc, argv)) {
        fputs(fingerprint_usage, stdout);
        return A4W4_EXIT_PASS;
    }
    const char *name = NULL, *mode_s = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if ((!strcmp(a, "--backend") || !strcmp(a, "--mode")) && i + 1 >= argc) {
            a4w4_errorf("fingerprint: %s needs a value", a);
            return A4W4_EXIT_BADINPUT;
        }
        if (!strcmp(a, "--backend"))
            name = argv[++i];
        else if (!strcmp(a, "--mode"))
            mode_s = argv[++i];
        else {
            a4w4_errorf("fingerprint: unknown argument '%s' (see a4w4check fingerprint --help)", a);
            return A4W4_EXIT_BADINPUT;
        }
    }
    if (!name) {
        a4w4_errorf("fingerprint: --backend X is required (a quantizer, e.g. ref)");
        return A4W4_EXIT_BADINPUT;
    }
    int m0 = 0, m1 = A4W4_SCALE_MODE_COUNT;
    if (mode_s) {
        m0 = a4w4_scale_mode_parse(mode_s);
        if (m0 < 0) {
            a4w4_errorf("fingerprint: --mode '%s' is not a scale mode (round_up, round_down, "
                        "ceil, even)", mode_s);
            return A4W4_EXIT_BADINPUT;
        }
        m1 = m0 + 1;
    }
    char names[1024], err[1024];
    const a4w4_backend_type *t = a4w4_quantizer_find(name, names, sizeof names);
    if (!t) {
        a4w4_errorf("fingerprint: --backend '%s' is not a quantizer (%s)", name, names);
        return A4W4_EXIT_BADINPUT;
    }
    a4w4_backend b;
    int orc = a4w4_backend_open_type(t, NULL, &b, err, sizeof err);
    if (orc) {
        a4w4_errorf("fingerprint: %s", err);
        return a4w4_exit_code(orc);
    }
    int rc = A4W4_EXIT_PASS;
    for (int m = m0; m < m1; m++) {
        a4w4_fingerprint fp;
        if (a4w4_fingerprint_quantizer(&b, m, &fp, err, sizeof err) != A4W4_OK) {
            a4w4_errorf("fingerprint: %s", err);
            rc = A4W4_EXIT_MISMATCH;
            continue;
        }
        int ok = a4w4_fingerprint_conforms(&fp);
        printf("fingerprint %s asked %s: %s (%s)\n", b.name,
               a4w4_scale_mode_name((a4w4_scale_mode)m), fp.summary,
               ok ? "as asked" : "differs from the asked mode + RNE");
        if (!ok)
            rc = A4W4_EXIT_MISMATCH;
    }
    a4w4_backend_close(&b);
    if (fflush(stdout) != 0) {
        a4w4_errorf("fingerprint: cannot write the output");
        return A4W4_EXIT_IO;
    }
    return rc;
}
