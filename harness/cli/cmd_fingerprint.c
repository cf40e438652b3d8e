/* cmd_fingerprint.c — `a4w4check fingerprint`: which scale mode and which E2M1 rounding a
 * quantizer actually implements, from crafted blocks whose amax separates the four
 * modes of contracts §2 and whose elements sit on E2M1 ties (quantizers.h). For when a fused
 * Triton quantizer and the HIP one disagree. */
#include <stdio.h>
#include <string.h>

#include "a4w4_quant.h"
#include "a4w4check.h"
#include "options.h"
#include "registry.h"
#include "quantizers.h"

static const char fingerprint_usage[] =
    "usage: a4w4check fingerprint --quantizer X [--mode MODE]\n"
    "\n"
    "Feeds quantizer X crafted bf16 blocks (amax at values where round_up, round_down, ceil\n"
    "and even give different scale codes; elements on E2M1 ties) and names the scale mode and\n"
    "the rounding it implements, e.g. 'round_up + RNE', or 'no single mode matches: ...'.\n"
    "\n";

typedef struct {
    const char *backend, *mode;
} fingerprint_opts;

static const a4w4_option fingerprint_options[] = {
    OPT_STRING("quantizer", fingerprint_opts, backend, "X",
               "a quantizer: ref (ref-quant), a quantizer mutant (mut-mode-ceil,\n"
               "mut-e2m1-trunc, ...; see selftest --list), hip-quant in GPU builds"),
    OPT_STRING("mode", fingerprint_opts, mode, "MODE",
               "the mode to ask for: round_up, round_down, ceil, even (default: each)"),
    OPT_OLD_STRING("backend", fingerprint_opts, backend, "--quantizer"),
    OPT_END(),
};

static const a4w4_command_spec fingerprint_spec = {
    "fingerprint", fingerprint_usage, fingerprint_options, NULL,
    "exit: 0 X implements every asked mode with RNE and the contracts' nibble order, 1 otherwise,\n"
    "      2 bad usage or an unknown quantizer, 3 a GPU quantizer without a GPU\n"};

/* The scale modes to ask for, [*m0, *m1). Returns the exit code (PASS: a valid --mode). */
static int plan_modes(const fingerprint_opts *o, int *m0, int *m1)
{
    *m0 = 0;
    *m1 = A4W4_SCALE_MODE_COUNT;
    if (!o->mode)
        return A4W4_EXIT_PASS;
    *m0 = a4w4_scale_mode_parse(o->mode);
    if (*m0 < 0) {
        a4w4_errorf("fingerprint: --mode '%s' is not a scale mode (round_up, round_down, "
                    "ceil, even)", o->mode);
        return A4W4_EXIT_BADINPUT;
    }
    *m1 = *m0 + 1;
    return A4W4_EXIT_PASS;
}

/* Open the quantizer named by --quantizer into b. Returns the exit code. */
static int open_quantizer(const char *name, a4w4_backend *b)
{
    char names[1024], err[1024];
    const a4w4_backend_type *t = a4w4_quantizer_find(name, names, sizeof names);
    if (!t) {
        a4w4_errorf("fingerprint: --quantizer '%s' is not a quantizer (%s)", name, names);
        return A4W4_EXIT_BADINPUT;
    }
    int orc = a4w4_backend_open_type(t, NULL, b, err, sizeof err);
    if (orc)
        a4w4_errorf("fingerprint: %s", err);
    return a4w4_exit_code(orc);
}

/* Fingerprint b in modes [m0, m1), one line each. Returns the exit code. */
static int run_modes(a4w4_backend *b, int m0, int m1)
{
    int rc = A4W4_EXIT_PASS;
    for (int m = m0; m < m1; m++) {
        a4w4_fingerprint fp;
        char err[1024];
        if (a4w4_fingerprint_quantizer(b, m, &fp, err, sizeof err) != A4W4_OK) {
            a4w4_errorf("fingerprint: %s", err);
            rc = A4W4_EXIT_MISMATCH;
            continue;
        }
        int ok = a4w4_fingerprint_conforms(&fp);
        printf("fingerprint %s asked %s: %s (%s)\n", b->name,
               a4w4_scale_mode_name((a4w4_scale_mode)m), fp.summary,
               ok ? "as asked" : "differs from the asked mode + RNE");
        if (!ok)
            rc = A4W4_EXIT_MISMATCH;
    }
    return rc;
}

int cmd_fingerprint(int argc, char **argv)
{
    fingerprint_opts o = {0};
    a4w4_args args;
    int rc = a4w4_options_parse(&fingerprint_spec, &o, argc, argv, &args);
    if (rc != A4W4_OPTS_CONTINUE)
        return rc;
    if (!o.backend) {
        a4w4_errorf("fingerprint: --quantizer X is required (e.g. ref)");
        return A4W4_EXIT_BADINPUT;
    }
    int m0, m1;
    a4w4_backend b;
    if ((rc = plan_modes(&o, &m0, &m1)) || (rc = open_quantizer(o.backend, &b)))
        return rc;
    rc = run_modes(&b, m0, m1);
    a4w4_backend_close(&b);
    if (fflush(stdout) != 0) {
        a4w4_errorf("fingerprint: cannot write the output");
        return A4W4_EXIT_IO;
    }
    return rc;
}
