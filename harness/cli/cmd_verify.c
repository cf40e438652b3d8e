/* cmd_verify.c — `a4w4check verify BUNDLE...`: recompute every tensor of each bundle. */
#include <stdio.h>
#include <string.h>

#include "a4w4_quote.h"
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
    "exit: 0 all pass, 1 any mismatch, 2 bad input (malformed file, missing tensor, bad shape,\n"
    "      a capture whose call the oracles do not model), 5 a bundle with no check made\n"};

typedef struct {
    size_t npass, nfail, nna, nskip, nambiguous;
} verify_counts;

/* Print one line (text from the file quoted: control bytes as '?', a4w4_quote.h) and count its
 * verdict (0 pass, 1 fail, 2 n/a, 3 skip, 4 ambiguous: a4w4_verdict; a case bundle's checks
 * are 0..2). A skipped or ambiguous entry is not judged, and the count line says so apart
 * from n/a (never a PASS over missing data). */
static void say(verify_counts *n, const char *line, int verdict)
{
    char shown[1400];
    puts(a4w4_quote(line, shown, sizeof shown));
    n->npass += verdict == 0;
    n->nfail += verdict == 1;
    n->nna += verdict == A4W4_VERDICT_NA;
    n->nskip += verdict == A4W4_VERDICT_SKIP;
    n->nambiguous += verdict == A4W4_VERDICT_AMBIGUOUS;
}

/* The bundle's bad-input line, after its check lines; then, when nothing was judged (no check
 * passed or failed), the INCOMPLETE line. Returns the bundle's exit code from rc and counts. */
static int say_end(a4w4_hstatus rc, const char *err, const char *base, size_t judged,
                   size_t fails)
{
    char shown[600];
    fflush(stdout);
    if (rc == A4W4_ST_BADINPUT)
        a4w4_errorf("%s", a4w4_quote(err, shown, sizeof shown));
    if (rc != A4W4_ST_OK)
        return a4w4_exit_code(rc);
    if (fails)
        return A4W4_EXIT_MISMATCH;
    if (!judged) {
        a4w4_errorf("verify: %s: INCOMPLETE: no check passed or failed (each N/A, skipped or "
                    "ambiguous)", base);
        return A4W4_EXIT_INCOMPLETE;
    }
    return A4W4_EXIT_PASS;
}

/* Judge one capture bundle (a4w4_run_capture, the reading `run --captures` makes too) and
 * print one line per entry. Returns the bundle's worst exit code. */
static int verify_capture_one(const char *path, const char *base, verify_counts *n)
{
    a4w4_entry_list el = {0};
    char err[512] = "";
    a4w4_hstatus rc = a4w4_run_capture(path, NULL, A4W4_CODE0_BOTH, &el, err, sizeof err);
    size_t fails = a4w4_entry_list_failures(&el), judged = 0;
    char prefix[1024]; /* a capture names its layer and call site on every line */
    const a4w4_entry_result *e0 = el.n ? &el.items[0] : NULL;
    const char *layer = e0 ? e0->layer : "", *site = e0 ? e0->call_site : "";
    snprintf(prefix, sizeof prefix, "%s%s%s%s%s%s%s", base, *layer || *site ? " [" : "",
             *layer ? "layer " : "", layer, *site ? (*layer ? " at " : "called at ") : "", site,
             *layer || *site ? "]" : "");
    for (size_t j = 0; j < el.n; j++) {
        char line[1600];
        a4w4_entry_format(&el.items[j], prefix, line, sizeof line);
        say(n, line, (int)el.items[j].verdict);
        judged += el.items[j].verdict == A4W4_VERDICT_PASS ||
                  el.items[j].verdict == A4W4_VERDICT_FAIL;
    }
    a4w4_entry_list_free(&el);
    return say_end(rc, err, base, judged, fails);
}

/* Verify one bundle and print its check lines. Returns the bundle's worst exit code: a bundle
 * none of whose checks passed or failed (every one N/A) is incomplete, never a pass. */
static int verify_one(const char *path, verify_counts *n)
{
    a4w4_check_list checks = {0};
    char err[512] = "", base[256];
    const char *b = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    a4w4_quote(b, base, sizeof base);
    if (a4w4_is_capture(path))
        return verify_capture_one(path, base, n);
    size_t nsuts, judged = 0, fails = 0;
    const a4w4_bundle_sut *suts = a4w4_cpu_bundle_suts(&nsuts);
    a4w4_hstatus rc = a4w4_verify_bundle(path, suts, nsuts, &checks, NULL, err, sizeof err);
    for (size_t j = 0; j < checks.n; j++) {
        char line[512];
        a4w4_check_format(&checks.items[j], base, line, sizeof line);
        say(n, line, (int)checks.items[j].verdict);
        judged += checks.items[j].verdict != A4W4_CHECK_NA;
        fails += checks.items[j].verdict == A4W4_CHECK_FAIL;
    }
    a4w4_check_list_free(&checks);
    return say_end(rc, err, base, judged, fails);
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
    verify_counts n = {0, 0, 0, 0, 0};
    for (int i = 0; i < args.n; i++) {
        int r = verify_one(args.v[i], &n);
        if (r == A4W4_EXIT_BADINPUT || (r == A4W4_EXIT_MISMATCH && worst != A4W4_EXIT_BADINPUT) ||
            (r == A4W4_EXIT_INCOMPLETE && worst == A4W4_EXIT_PASS))
            worst = r;
    }
    printf("verify: %zu passed, %zu failed, %zu n/a", n.npass, n.nfail, n.nna);
    if (n.nskip)
        printf(", %zu skipped", n.nskip);
    if (n.nambiguous)
        printf(", %zu ambiguous", n.nambiguous);
    putchar('\n');
    return worst;
}
