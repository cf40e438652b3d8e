/* cmd_shrink.c — `a4w4check shrink`: a failing case reduced to a minimal one that still fails
 * the same way on the same backend (commands/shrink.h), printed as a case-file line (the
 * smallest failing shape, generated from the case's own name and seed), the operands left
 * nonzero, and an operand bundle with the command that reruns it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4check.h"
#include "backend_list.h"
#include "casefile.h"
#include "failing.h"
#include "fsutil.h"
#include "matrix.h"
#include "options.h"
#include "registry.h"
#include "repro.h"
#include "budget.h"
#include "runner.h"
#include "shrink.h"

static const char shrink_usage[] =
    "usage: a4w4check shrink --backend B (--cases FILE | --set NAME) --case NAME [--out DIR]\n"
    "                        [--max-calls N] [--full] [--timeout S] [--no-isolate]\n"
    "                        [--contract B=FILE|TEXT] [--e8m0-code0 R]\n"
    "\n"
    "Reduces a failing case on one GEMM backend (cpu-asm, cpu-fallback, plugin:LIB.so, a HIP\n"
    "backend, a selftest mutant by name) to a minimal one that fails the same way (the same\n"
    "family of signature: wrong values, NaN, never written, pad-dependent, crashed, ...):\n"
    "first the shape (M, N, K to the smallest failing values of the tile grid, regenerated\n"
    "from the case's own name and seed: a case-file line), then the operands of that shape\n"
    "(whole K blocks, rows of A, rows of W zeroed, scales set to 1.0, in halving chunks).\n"
    "Deterministic; at most --max-calls runs of the case. Prints the case-file line, the\n"
    "operands left nonzero and the commands that rerun both; writes DIR/minimal.csv and the\n"
    "minimal operands as DIR/<case>@<backend>.safetensors (run --bundle, verify, external).\n"
    "bundle:DIR holds outputs computed elsewhere, once: it cannot be shrunk here (export the\n"
    "case and shrink the kernel behind it through a plugin). Give the --contract and\n"
    "--e8m0-code0 the failing run was judged by (its rerun command carries them): every trial\n"
    "is judged the same way, and the printed commands repeat them.\n"
    "\n";

typedef struct {
    const char *cases_path, *set, *name, *out_dir;
    a4w4_opt_list backend;
    a4w4_opt_strings contract; /* --contract B=FILE|TEXT (once: one backend) */
    int max_calls, full, timeout_s, no_isolate;
    int code0; /* index into a4w4_code0_names */
} shrink_opts;

static const a4w4_option shrink_options[] = {
    OPT_LIST("backend", shrink_opts, backend, "B", "the backend the case fails on (one)"),
    OPT_STRING("cases", shrink_opts, cases_path, "FILE", "the case file holding the case"),
    OPT_STRING("set", shrink_opts, set, "NAME", "or cases/NAME.csv"),
    OPT_STRING("case", shrink_opts, name, "NAME", "the failing case"),
    OPT_STRING("out", shrink_opts, out_dir, "DIR", "minimal.csv and the bundle (default build/shrink)"),
    OPT_INT("max-calls", shrink_opts, max_calls, "N", 1, 100000,
            "runs of the case at most (default 200), the first included"),
    OPT_FLAG("full", shrink_opts, full, "check every output of the original case"),
    OPT_INT("timeout", shrink_opts, timeout_s, "S", 0, 86400, A4W4_TIMEOUT_HELP),
    OPT_FLAG("no-isolate", shrink_opts, no_isolate, A4W4_NO_ISOLATE_HELP),
    OPT_STRINGS("contract", shrink_opts, contract, "B=FILE|TEXT", A4W4_CONTRACT_HELP),
    OPT_CHOICE("e8m0-code0", shrink_opts, code0, "R", a4w4_code0_names, A4W4_CODE0_HELP),
    OPT_END(),
};

static const a4w4_command_spec shrink_spec = {
    "shrink", shrink_usage, shrink_options, NULL,
    "exit: 0 a failing case shrunk, 1 the case does not fail on the backend, 2 bad usage or\n"
    "      input (also a bundle: or non-GEMM backend), 3 no GPU, 4 DIR not written\n"};

/* The case named o->name of the case file. Returns the exit code. */
static int find_case(const shrink_opts *o, a4w4_case *c)
{
    a4w4_matrix m;
    char err[1024];
    if (!o->name || !o->backend.text || (!o->cases_path == !o->set)) {
        a4w4_errorf("shrink: give --backend, --case and one of --cases or --set (see 'a4w4check "
                    "shrink --help')");
        return A4W4_EXIT_BADINPUT;
    }
    int mr = a4w4_matrix_load(&m, o->set, o->cases_path, NULL, err, sizeof err);
    int rc = mr ? A4W4_EXIT_BADINPUT : A4W4_EXIT_PASS;
    if (mr)
        a4w4_errorf(mr == A4W4_MATRIX_ECASES ? "%s" : "shrink: %s", err);
    for (size_t i = 0; !mr && i < m.ncases; i++)
        if (!strcmp(m.cases[i].name, o->name)) {
            *c = m.cases[i];
            rc = -1;
        }
    if (rc == A4W4_EXIT_PASS) {
        a4w4_errorf("shrink: --case %s: no such case in %s (shrink takes generated cases; a "
                    "bundle reruns with run --bundle)", o->name, m.cases_path);
        rc = A4W4_EXIT_BADINPUT;
    }
    a4w4_matrix_free(&m);
    return rc == -1 ? A4W4_EXIT_PASS : rc;
}

/* One GEMM backend that shrink can call again and again. Returns the exit code. */
static int open_backend(const shrink_opts *o, a4w4_backend *b, size_t *nb)
{
    if (o->backend.n != 1) {
        a4w4_errorf("shrink: --backend takes one backend (got %zu)", o->backend.n);
        return A4W4_EXIT_BADINPUT;
    }
    if (!strncmp(o->backend.item[0], "bundle:", 7)) {
        a4w4_errorf("shrink: --backend %s: a bundle holds outputs computed once elsewhere; "
                    "shrink must call the kernel on new operands (wrap it in a plugin:LIB.so)",
                    o->backend.item[0]);
        return A4W4_EXIT_BADINPUT;
    }
    a4w4_backend_list_opts bo = {"shrink", 1, 1, 1};
    int rc = a4w4_isolation_options("shrink", o->no_isolate, o->timeout_s);
    if (rc == A4W4_EXIT_PASS)
        rc = a4w4_backend_list_open(&bo, &o->backend, b, nb);
    if (rc == A4W4_EXIT_PASS && !b->type->run) {
        a4w4_errorf("shrink: --backend %s has no GEMM (a layout or quantizer backend): shrink "
                    "reduces GEMM cases", b->name);
        a4w4_backend_list_close(b, *nb);
        *nb = 0;
        rc = A4W4_EXIT_BADINPUT;
    }
    if (rc == A4W4_EXIT_PASS && (rc = a4w4_backend_contracts_apply("shrink", &o->contract, b,
                                                                   *nb)) != A4W4_EXIT_PASS) {
        a4w4_backend_list_close(b, *nb);
        *nb = 0;
    }
    return rc;
}

/* A rerun command of the shrunk case as run would give it: case file csv (bundle NULL) or
 * the minimal bundle, with the checking options shrink judged by. */
static void rerun_command(const shrink_opts *o, const char *csv, const char *const *bundle,
                          const char *item, const char *backend, char *buf, size_t len)
{
    a4w4_repro_run rr = {.set = bundle ? "bundle" : "custom", .cases_file = bundle ? "" : csv,
                         .bundles = bundle, .nbundles = bundle != NULL,
                         .budget_s = A4W4_DEFAULT_BUDGET_S, .timeout_s = -1,
                         .no_isolate = o->no_isolate, .contracts = o->contract.v,
                         .ncontracts = o->contract.n,
                         .code0 = o->code0 ? a4w4_code0_names[o->code0] : NULL};
    a4w4_repro_command(&rr, item, backend, buf, len);
}

/* DIR/minimal.csv: the header and the minimal shape's line. Returns the exit code. */
static int write_minimal_csv(const char *dir, const a4w4_case *c, char *line, size_t len,
                             char *path, size_t plen)
{
    char err[1024], text[1024];
    snprintf(line, len, "%s,%zu,%zu,%zu,%s,%llu,%s%sshrunk", c->name, c->M, c->N, c->K,
             c->regime_text, (unsigned long long)c->seed, c->tags, c->tags[0] ? ";" : "");
    snprintf(text, sizeof text, "# a4w4check shrink: the smallest failing shape of %s (same "
             "name, seed, regime)\nname,M,N,K,regime,seed,tags\n%s\n", c->name, line);
    snprintf(path, plen, "%s/minimal.csv", dir);
    if (a4w4_mkdir_p(dir, err, sizeof err) ||
        a4w4_write_atomic(path, text, strlen(text), err, sizeof err)) {
        a4w4_errorf("shrink: --out %s", err);
        return A4W4_EXIT_IO;
    }
    return A4W4_EXIT_PASS;
}

/* What bundle_repro needs: the options and the minimal bundle's path. */
typedef struct {
    const shrink_opts *o;
    const char *path;
} bundle_ctx;

/* The repro of the minimal bundle: run --bundle on it (an a4w4_repro_fn; ctx a bundle_ctx). */
static void bundle_repro(const void *ctx, const char *item, const char *backend, char *buf,
                         size_t len)
{
    const bundle_ctx *bc = ctx;
    const char *path = bc->path;
    (void)item;
    char name[600];
    const char *b = strrchr(path, '/');
    snprintf(name, sizeof name, "golden/%.*s", (int)strlen(b ? b + 1 : path) - 12, b ? b + 1 : path);
    rerun_command(bc->o, NULL, &bc->path, name, backend, buf, len);
}

/* The minimal operands through the backend once more, saved as DIR/<case>@<backend>. Returns
 * the exit code; *e gets the entry. */
static int save_minimal(const shrink_opts *o, a4w4_shrink_result *r, a4w4_backend *b,
                        char *path, size_t plen, a4w4_entry_result *e)
{
    const char *dir = o->out_dir;
    bundle_ctx bc = {o, path};
    char item[600], err[512];
    a4w4_failing_name(r->shape.name, b->name, 0, item, sizeof item);
    snprintf(path, plen, "%s/%s.safetensors", dir, item);
    a4w4_case_data d;
    if (a4w4_shrink_data(r, &d)) {
        a4w4_errorf("shrink: out of memory");
        return A4W4_EXIT_IO;
    }
    a4w4_runner run = {.backends = b, .nbackends = 1, .full = 1, .repro = bundle_repro,
                       .repro_ctx = &bc, .save_dir = dir, .code0_reading = o->code0};
    a4w4_entry_list el = {0};
    a4w4_hstatus st = a4w4_run_data(&run, &r->shape, &d, &el, err, sizeof err);
    int rc = A4W4_EXIT_PASS;
    if (st != A4W4_ST_OK || el.n != 1 || !el.items[0].saved[0]) {
        a4w4_errorf("shrink: the minimal case %s: %s", st ? err : el.n ? el.items[0].note
                    : "no entry", st ? "" : "(not saved)");
        rc = A4W4_EXIT_IO;
    } else
        *e = el.items[0];
    a4w4_entry_list_free(&el);
    a4w4_case_data_free(&d);
    return rc;
}

static void print_result(const shrink_opts *o, const a4w4_shrink_result *r,
                         const a4w4_entry_result *e, const char *line, const char *csv,
                         const char *bundle, const char *backend)
{
    const a4w4_case *c = &r->original, *s = &r->shape;
    char kb[512], ar[512], wr[512], as[512], ws[512], rr[1024];
    printf("shrink: %s on %s fails: %s\n", c->name, backend, r->first.signature);
    printf("shrink: %zu runs%s; shape %zux%zux%zu -> %zux%zux%zu\n", r->calls,
           r->budget_hit ? " (--max-calls reached: smaller may exist)" : "", c->M, c->N, c->K,
           s->M, s->N, s->K);
    printf("minimal shape (case-file line, %s):\n  %s\n", csv, line);
    rerun_command(o, csv, NULL, s->name, backend, rr, sizeof rr);
    printf("  rerun: %s\n", rr);
    a4w4_shrink_units_text(&r->kblocks, 1, kb, sizeof kb);
    a4w4_shrink_units_text(&r->a_rows, 1, ar, sizeof ar);
    a4w4_shrink_units_text(&r->w_rows, 1, wr, sizeof wr);
    a4w4_shrink_units_text(&r->a_scales, 0, as, sizeof as);
    a4w4_shrink_units_text(&r->w_scales, 0, ws, sizeof ws);
    printf("operands left nonzero: K blocks %s of 0..%zu; A rows %s of 0..%zu; W rows %s of "
           "0..%zu\n", kb, s->K / 32 - 1, ar, s->M - 1, wr, s->N - 1);
    printf("scales set to 1.0: A rows %s; W rows %s\n", as, ws);
    printf("signature: %s\n", e->signature);
    printf("bundle: %s\nrepro: %s\n", bundle, e->repro);
}

int cmd_shrink(int argc, char **argv)
{
    const char *contract_v[1];
    shrink_opts o = {.out_dir = "build/shrink", .max_calls = 200, .timeout_s = -1,
                     .contract = {contract_v, 0, 1}};
    a4w4_args args;
    int rc = a4w4_options_parse(&shrink_spec, &o, argc, argv, &args);
    if (rc != A4W4_OPTS_CONTINUE)
        return rc;
    a4w4_case c;
    a4w4_backend b;
    size_t nb = 0;
    rc = find_case(&o, &c);
    if (rc == A4W4_EXIT_PASS)
        rc = open_backend(&o, &b, &nb);
    if (rc != A4W4_EXIT_PASS)
        return rc;
    a4w4_shrink_opts so = {&b, (size_t)o.max_calls, o.full, o.code0};
    a4w4_shrink_result r;
    char err[1024], line[512], csv[4200], bundle[4200];
    a4w4_hstatus st = a4w4_shrink(&so, &c, &r, err, sizeof err);
    a4w4_entry_result e;
    if (st == A4W4_ST_NA) {
        printf("shrink: %s does not fail on %s (%s%s%s): nothing to shrink\n", c.name, b.name,
               a4w4_verdict_name(r.first.verdict), r.first.note[0] ? ": " : "", r.first.note);
        rc = A4W4_EXIT_MISMATCH;
    } else if (st != A4W4_ST_OK) {
        a4w4_errorf("shrink: %s", err);
        rc = a4w4_exit_code(st);
    } else if (!(rc = write_minimal_csv(o.out_dir, &r.shape, line, sizeof line, csv,
                                        sizeof csv)) &&
               !(rc = save_minimal(&o, &r, &b, bundle, sizeof bundle, &e)))
        print_result(&o, &r, &e, line, csv, bundle, b.name);
    a4w4_shrink_free(&r);
    a4w4_backend_list_close(&b, nb);
    return rc;
}
