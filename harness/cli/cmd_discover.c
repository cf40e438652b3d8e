/* cmd_discover.c — `a4w4check discover`: reveal a backend's accumulation order by probing it
 * and write the accepted contract (contracts §4.2 text or file form, §4.4 method).
 * parse -> plan -> run (discover_flow.h) -> render. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "a4w4check.h"
#include "backend_list.h"
#include "discover.h"
#include "discover_flow.h"
#include "discover_setup.h"
#include "options.h"
#include "registry.h"
#include "stream.h"

static const char discover_usage[] =
    "usage: a4w4check discover --backend B --out FILE [--shapes MxNxK,... | --cases FILE]\n"
    "                          [--seed S] [--repeats R] [--max-probes N] [--evidence PATH]\n"
    "       a4w4check discover --write-probes DIR [--shapes ...] [--seed S] [--repeats R]\n"
    "       a4w4check discover --backend bundle:OUT --probes DIR --out FILE [--runner CMD]\n"
    "\n"
    "Reveals the accumulation order of backend B by probing it (contracts §4.4): E8M0-scaled\n"
    "probes show which blocks meet first (the tree over blocks), then the node rounding, the\n"
    "accumulator format, the internal precision of a node, the elements per node and the\n"
    "leaf width. A contract is accepted only when it predicts B's outputs bit for bit on fresh\n"
    "random cases of every regime (exact, normal, wide, special, code0, tiny); it is written\n"
    "to FILE (contracts §4.2; `when` rules when the order depends on the shape) and the\n"
    "evidence to FILE.evidence.md. `a4w4check run --contract B=FILE` then judges B by it.\n"
    "Kernels outside this process: --write-probes DIR writes round 1 as operand bundles, a\n"
    "runner computes them (python3 -m a4w4check.external --ops DIR/r1 --out OUT/r1 ...),\n"
    "`--backend bundle:OUT --probes DIR` reads them and writes the next round (exit 5) until\n"
    "done; --runner CMD runs `CMD --ops DIR/rK --out OUT/rK` for every round itself.\n"
    "\n";

typedef struct {
    const char *backend, *out, *shapes, *cases, *evidence, *write_probes, *probes, *runner, *seed;
    int repeats, runner_timeout, timeout_s, no_isolate, quiet, no_evidence, threads;
    int validate_cases;
    size_t max_probes, validate_outputs;
} discover_opts;

static const a4w4_option discover_options[] = {
    OPT_STRING("backend", discover_opts, backend, "B",
               "the backend to probe: cpu-asm, cpu-fallback, plugin:LIB.so, hip-*,\n"
               "bundle:OUT (with --probes)"),
    OPT_STRING("out", discover_opts, out, "FILE", "where the accepted contract goes"),
    OPT_STRING("shapes", discover_opts, shapes, "LIST",
               "MxNxK,... shapes to probe (default 16x64x2048,256x64x2048)"),
    OPT_STRING("cases", discover_opts, cases, "FILE", "a CSV naming M, N, K: its shapes"),
    OPT_STRING("seed", discover_opts, seed, "S", "seed of the validation cases (default 1)"),
    OPT_INT("repeats", discover_opts, repeats, "R", 1, 100,
            "runs of every call, to see nondeterminism (default 3)"),
    OPT_SIZE("max-probes", discover_opts, max_probes, "N", 0, 1000000000, 1, NULL,
             "refuse a discovery whose first round needs more probes (0: no limit)"),
    OPT_STRING("evidence", discover_opts, evidence, "PATH", "evidence file (default FILE.evidence.md)"),
    OPT_STRING("write-probes", discover_opts, write_probes, "DIR",
               "write round 1's operand bundles and the plan into DIR, then stop"),
    OPT_STRING("probes", discover_opts, probes, "DIR", "the probe directory of a bundle: backend"),
    OPT_STRING("runner", discover_opts, runner, "CMD",
               "run `CMD --ops DIR/rK --out OUT/rK` for every round (bundle: backends)"),
    OPT_INT("runner-timeout", discover_opts, runner_timeout, "S", 1, 86400,
            "seconds a runner may take per round (default 900)"),
    OPT_INT("validate-cases", discover_opts, validate_cases, "N", 1, 100,
            "validation cases per regime and shape (default 1)"),
    OPT_SIZE("validate-outputs", discover_opts, validate_outputs, "N", 0, 1000000000, 1, NULL,
             "outputs checked per validation case (default 256; 0: all)"),
    OPT_INT("threads", discover_opts, threads, "T", 1, 64, "oracle threads (default: the CPUs)"),
    OPT_INT("timeout", discover_opts, timeout_s, "S", 0, 86400, A4W4_TIMEOUT_HELP),
    OPT_FLAG("no-isolate", discover_opts, no_isolate, A4W4_NO_ISOLATE_HELP),
    OPT_FLAG("quiet", discover_opts, quiet, A4W4_QUIET_HELP),
    OPT_FLAG("no-evidence", discover_opts, no_evidence,
             "the evidence only in its file, not on stdout"),
    OPT_END(),
};

static const a4w4_command_spec discover_spec = {
    "discover", discover_usage, discover_options, NULL,
    "exit: 0 a contract fits every shape asked for, 1 no tree in the model family fits (the closest and\n"
    "      where it fails are printed), 2 bad usage or input, 3 a hip backend without a GPU,\n"
    "      4 FILE not written, 5 a round's outputs are missing (what to run is printed)\n"};

typedef struct {
    a4w4_discover_opts o;
    a4w4_shape *shapes;
    size_t *groups;
    unsigned char *validate_only; /* the shapes of a rule of K that are only validated */
    size_t requested; /* the shapes asked for come first (the rest: for the rules of K) */
    a4w4_discovery *d;
    int bundle; /* the backend is bundle:OUT */
    const char *out_dir;
    char evidence[4096];
    double seconds;
} discover_plan;

/* Shapes, groups and options from the command line (or the probe directory's plan). */
static int plan(const discover_opts *a, discover_plan *p)
{
    p->bundle = a->backend && !strncmp(a->backend, "bundle:", 7);
    int from_dir = p->bundle && a->probes && !a->runner;
    if (a->shapes && a->cases) {
        a4w4_errorf("discover: give --shapes or --cases, not both");
        return A4W4_EXIT_BADINPUT;
    }
    if (!a->write_probes && (!a->backend || !a->out)) {
        a4w4_errorf("discover: --backend B and --out FILE are required (or --write-probes DIR)");
        return A4W4_EXIT_BADINPUT;
    }
    if (p->bundle && !a->probes) {
        a4w4_errorf("discover: --backend %s needs --probes DIR (the directory --write-probes "
                    "wrote, or where --runner's probes go)", a->backend);
        return A4W4_EXIT_BADINPUT;
    }
    if ((a->runner || a->probes) && a->backend && !p->bundle) {
        a4w4_errorf("discover: --runner and --probes go with --backend bundle:OUT");
        return A4W4_EXIT_BADINPUT;
    }
    if (from_dir) {
        if (a->shapes || a->cases) {
            a4w4_errorf("discover: --probes %s fixes the shapes (its discover.json); drop "
                        "--shapes/--cases", a->probes);
            return A4W4_EXIT_BADINPUT;
        }
        if (a4w4_dflow_read_plan(a->probes, &p->o, &p->shapes, &p->groups, &p->validate_only))
            return A4W4_EXIT_BADINPUT;
    } else {
        int rc = a4w4_dflow_shapes(a->shapes, a->cases, a->backend, &p->o, &p->shapes,
                                   &p->groups, &p->validate_only, &p->requested);
        if (rc)
            return rc;
        p->o.seed = a->seed ? strtoull(a->seed, NULL, 10) : 1;
        p->o.repeats = (unsigned)a->repeats;
        p->o.validate_cases = (unsigned)a->validate_cases;
        p->o.validate_outputs = a->validate_outputs;
    }
    p->o.shapes = p->shapes;
    p->o.group = p->groups;
    p->o.max_probes = a->max_probes;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    p->o.threads = a->threads ? a->threads : cpus > 0 ? (int)(cpus < 64 ? cpus : 64) : 1;
    if (a->out)
        snprintf(p->evidence, sizeof p->evidence, "%s", a->evidence ? a->evidence : a->out);
    if (a->out && !a->evidence)
        strncat(p->evidence, ".evidence.md", sizeof p->evidence - strlen(p->evidence) - 1);
    p->out_dir = p->bundle ? a->backend + 7 : NULL;
    if (a->out && !a->write_probes &&
        (!a4w4_parent_writable(a->out) || !a4w4_parent_writable(p->evidence))) {
        a4w4_errorf("discover: cannot write %s: its directory does not exist or is not "
                    "writable (nothing probed)", a4w4_parent_writable(a->out) ? p->evidence
                                                                              : a->out);
        return A4W4_EXIT_IO;
    }
    char err[1024];
    a4w4_hstatus st = a4w4_discover_new(&p->o, &p->d, err, sizeof err);
    if (st != A4W4_ST_OK) {
        a4w4_errorf("discover: %s", err);
        return a4w4_exit_code(st);
    }
    size_t n, probes;
    a4w4_discover_round(p->d, &n, NULL);
    probes = a4w4_discover_round_probes(p->d);
    if (a->max_probes && probes > a->max_probes) {
        a4w4_errorf("discover: round 1 needs %zu probes (%zu calls), over --max-probes %zu",
                    probes, n, a->max_probes);
        return A4W4_EXIT_BADINPUT;
    }
    return A4W4_EXIT_PASS;
}

/* Run the rounds: in this process, or through operand bundles (discover_flow.h). Returns the
 * exit code. */
static int run(const discover_opts *a, discover_plan *p)
{
    double t0 = a4w4_now();
    int rc;
    if (a->write_probes)
        return a4w4_dflow_write_probes(p->d, a->write_probes, &p->o);
    if (p->bundle) {
        if (a->runner && (rc = a4w4_dflow_write_plan(a->probes, &p->o)))
            return rc;
        rc = a4w4_dflow_bundle(p->d, a->probes, p->out_dir, a->runner, a->runner_timeout,
                               a->quiet);
    } else {
        if ((rc = a4w4_isolation_options("discover", a->no_isolate, a->timeout_s)))
            return rc;
        rc = a4w4_dflow_backend(p->d, a->backend, a->quiet);
    }
    p->seconds = a4w4_now() - t0;
    return rc;
}

/* ---- render ------------------------------------------------------------------------------- */

static void shape_line(FILE *f, const discover_plan *p, size_t i, const char *backend)
{
    const a4w4_discover_shape_result *r = a4w4_discover_result(p->d, i);
    const a4w4_shape *s = a4w4_discover_shape(p->d, i);
    char c[A4W4_CONTRACT_MAX] = "";
    if (r->verdict != A4W4_DISCOVER_FAILED)
        a4w4_contract_format(&r->contract, c, sizeof c);
    if (a4w4_discover_validate_only(p->d, i) == 3) { /* a K of the split-count bisection */
        int held = r->verdict == A4W4_DISCOVER_FOUND;
        fprintf(f, "discover: %s at %zux%zux%zu (a K of the split-count bisection): %s%s\n",
                backend, s->M, s->N, s->K, held ? "split count read: " :
                "no split count between its neighbours' fits (no rule of K)", held ? c : "");
        return;
    }
    if (a4w4_discover_validate_only(p->d, i) == 2) { /* a bucket of the rules of M */
        int held = r->verdict == A4W4_DISCOVER_FOUND;
        fprintf(f, "discover: %s at %zux%zux%zu (a bucket checked for the rules of M): %s%s\n",
                backend, s->M, s->N, s->K, held ? "the nearest probed bucket's rule of K holds: "
                : "no neighbour's rule of K holds (this bucket is left without a rule)",
                held ? c : "");
        return;
    }
    if (a4w4_discover_validate_only(p->d, i)) { /* not probed: the rule of K checked there */
        int held = r->verdict == A4W4_DISCOVER_FOUND, tried = r->validation_cases > 0;
        fprintf(f, "discover: %s at %zux%zux%zu (validated only, not probed): %s%s%s%s\n",
                backend, s->M, s->N, s->K, held ? "the rule of K holds: " : tried ?
                "the rule of K fails: " : "no rule of K to validate (per-shape rules written)",
                held ? c : "", !held && tried && r->has_closest ? r->closest_fails : "",
                held ? " predicted bit for bit" : "");
        return;
    }
    if (r->verdict == A4W4_DISCOVER_FOUND) {
        fprintf(f, "discover: %s at %zux%zux%zu: %s (%zu probes, %zu calls; %zu validation "
                "outputs of %zu cases predicted bit for bit%s)\n", backend, s->M, s->N, s->K, c,
                r->probes, r->calls, r->validated, r->validation_cases,
                r->nondeterministic ? ", nondeterministic: within the bound" : "");
        if (r->defects) /* outputs no order can give (contracts §4.4 step 7) */
            fprintf(f, "  defects: %zu (first: %s)\n", r->defects, r->defect_first);
        return;
    }
    fprintf(f, "discover: %s at %zux%zux%zu: no tree in the model family fits%s%s%s%s "
            "(%zu probes, %zu calls)\n", backend, s->M, s->N, s->K,
            r->has_closest ? "; closest " : "", r->has_closest ? c : "",
            r->has_closest ? ": " : "", r->has_closest ? r->closest_fails : "", r->probes,
            r->calls);
}

/* len bytes of text into path, atomically. 0, or -1 after one line. */
static int write_text(const char *path, const char *text, size_t len)
{
    char err[1024];
    if (!a4w4_write_atomic(path, text, len, err, sizeof err))
        return 0;
    a4w4_errorf("discover: %s", err);
    return -1;
}

/* The evidence document into its file. 0, or -1 (after one line unless out of memory). */
static int write_evidence(const discover_plan *p, const char *backend, const char *contract)
{
    size_t len = 0;
    char *doc = a4w4_discover_evidence_doc(p->d, &p->o, backend, p->seconds, contract, &len);
    int rc = doc ? write_text(p->evidence, doc, len) : -1;
    free(doc);
    return rc;
}

static int render(const discover_opts *a, discover_plan *p)
{
    /* every shape's rule: up to A4W4_DISCOVER_MAX_SHAPES shapes, each probed at three K, a
     * per-shape sum tree (contracts §4.2 "The general form") up to 2200 bytes each */
    static char text[1 << 20];
    int found = a4w4_discover_contract_text(p->d, text, sizeof text) >= 0, all = 1;
    for (size_t i = 0; i < a4w4_discover_nshapes(p->d); i++) {
        shape_line(stdout, p, i, a->backend);
        if (!a->no_evidence) /* the evidence: which probe decided what, the validation */
            fputs(a4w4_discover_evidence(p->d, i), stdout);
        /* the shapes asked for decide; those added for a rule of K give it or per-shape rules */
        all &= (p->requested && i >= p->requested) || a4w4_discover_validate_only(p->d, i) ||
               a4w4_discover_result(p->d, i)->verdict == A4W4_DISCOVER_FOUND;
    }
    printf("discover: %.2f s; evidence in %s\n", p->seconds, p->evidence);
    if (write_evidence(p, a->backend, found ? text : NULL))
        return A4W4_EXIT_IO;
    if (found && write_text(a->out, text, strlen(text)))
        return A4W4_EXIT_IO;
    if (found)
        printf("discover: contract written to %s%s\n", a->out, all ? "" :
               " (rules for the shapes that fit only)");
    char closest[4200];
    snprintf(closest, sizeof closest, "%s.closest", a->out);
    if (!all && a4w4_discover_closest_text(p->d, text, sizeof text) >= 0) {
        if (write_text(closest, text, strlen(text)))
            return A4W4_EXIT_IO;
        printf("discover: the closest candidates (not accepted) written to %s\n", closest);
    }
    return all ? A4W4_EXIT_PASS : A4W4_EXIT_MISMATCH;
}

int cmd_discover(int argc, char **argv)
{
    discover_opts a = {.repeats = 3, .runner_timeout = 900, .timeout_s = -1,
                       .validate_cases = 1, .validate_outputs = 256};
    a4w4_args args;
    int rc = a4w4_options_parse(&discover_spec, &a, argc, argv, &args);
    if (rc != A4W4_OPTS_CONTINUE)
        return rc;
    discover_plan p = {0};
    rc = plan(&a, &p);
    if (rc == A4W4_EXIT_PASS)
        rc = run(&a, &p);
    if (rc == A4W4_EXIT_PASS && !a.write_probes)
        rc = render(&a, &p);
    a4w4_discover_free(p.d);
    free(p.shapes);
    free(p.groups);
    free(p.validate_only);
    return rc;
}
