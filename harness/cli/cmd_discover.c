/* cmd_discover.c — `a4w4check discover`: reveal a backend's accumulation order by probing it
 * and write the accepted contract (contracts §4.2 text or file form, §4.4 method).
 * parse -> plan -> run (discover_flow.h) -> render. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "a4w4_dispatch.h"
#include "a4w4check.h"
#include "backend_list.h"
#include "discover.h"
#include "discover_flow.h"
#include "options.h"
#include "registry.h"
#include "shapelist.h"
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
    int repeats, runner_timeout, timeout_s, no_isolate, quiet, threads, validate_cases;
    size_t max_probes, validate_outputs;
} discover_opts;

static const a4w4_option discover_options[] = {
    OPT_STRING("backend", discover_opts, backend, "B",
               "the backend to probe: cpu-asm, cpu-fallback, plugin:LIB.so, hip-*,\n"
               "bundle:OUT (with --probes)"),
    OPT_STRING("out", discover_opts, out, "FILE", "where the accepted contract goes"),
    OPT_STRING("shapes", discover_opts, shapes, "LIST",
               "MxNxK,... shapes to probe (default 64x64x2048)"),
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
    OPT_FLAG("quiet", discover_opts, quiet, "no progress lines, and the evidence only in its file"),
    OPT_END(),
};

static const a4w4_command_spec discover_spec = {
    "discover", discover_usage, discover_options, NULL,
    "exit: 0 a contract fits every shape, 1 no tree in the model family fits (the closest and\n"
    "      where it fails are printed), 2 bad usage or input, 3 a hip backend without a GPU,\n"
    "      4 FILE not written, 5 a round's outputs are missing (what to run is printed)\n"};

typedef struct {
    a4w4_discover_opts o;
    a4w4_shape *shapes;
    size_t *groups;
    a4w4_discovery *d;
    a4w4_backend b;
    int bundle; /* the backend is bundle:OUT */
    const char *out_dir;
    char evidence[4096];
    double seconds;
} discover_plan;

/* --shapes MxNxK,... into p->shapes. */
static int parse_shapes(const char *text, discover_plan *p)
{
    size_t n = 1;
    for (const char *c = text; *c; c++)
        n += *c == ',';
    p->shapes = calloc(n, sizeof *p->shapes);
    if (!p->shapes)
        return -1;
    const char *c = text;
    for (size_t i = 0; i < n; i++) {
        char tail;
        int used = 0;
        if (sscanf(c, "%zux%zux%zu%n", &p->shapes[i].M, &p->shapes[i].N, &p->shapes[i].K,
                   &used) != 3 || (c[used] != ',' && c[used] != 0) ||
            sscanf(c, "%*[0-9]x%*[0-9]x%*[0-9]%c", &tail) > 1) {
            a4w4_errorf("discover: --shapes '%s': each shape is MxNxK with decimal M, N, K", text);
            return -1;
        }
        c += used + (c[used] == ',');
    }
    p->o.nshapes = n;
    return 0;
}

static int shapes_from_cases(const char *path, discover_plan *p)
{
    int *s;
    size_t n;
    char err[1024];
    if (a4w4_shapelist_load(path, &s, &n, err, sizeof err) != A4W4_OK) {
        a4w4_errorf("discover: --cases %s", err);
        return -1;
    }
    p->shapes = calloc(n, sizeof *p->shapes);
    size_t k = 0;
    for (size_t i = 0; p->shapes && i < n; i++) {
        a4w4_shape x = {(size_t)s[3 * i], (size_t)s[3 * i + 1], (size_t)s[3 * i + 2]};
        int dup = 0;
        for (size_t j = 0; j < k; j++)
            dup |= p->shapes[j].M == x.M && p->shapes[j].N == x.N && p->shapes[j].K == x.K;
        if (!dup)
            p->shapes[k++] = x;
    }
    free(s);
    p->o.nshapes = k;
    return p->shapes ? 0 : -1;
}

/* hip-asm:dispatch: shapes the dispatcher sends to the same ASM tile and split share one probed
 * shape (contracts §5; the first of each group is probed, every one validated). */
static int dispatch_groups(discover_plan *p)
{
    char e[1024], t1[4096], t2[4096];
    a4w4_tuned_table tuned;
    a4w4_kernel_table kt;
    memset(&tuned, 0, sizeof tuned);
    memset(&kt, 0, sizeof kt);
    if (a4w4_tuned_load(&tuned, a4w4_data_path("cases/aiter/a4w4_blockscale_tuned_gemm.csv", t1,
                                               sizeof t1), e, sizeof e) ||
        a4w4_kernels_load(&kt, a4w4_data_path("cases/aiter/gfx950_f4gemm_bf16_per1x32Fp4.csv",
                                              t2, sizeof t2), "gfx950", e, sizeof e)) {
        a4w4_errorf("discover: hip-asm:dispatch needs the dispatch tables: %s", e);
        return -1;
    }
    a4w4_heur_params hp = {"gfx950", 256, 0, 1};
    a4w4_route *r = calloc(p->o.nshapes, sizeof *r);
    int *ok = calloc(p->o.nshapes, sizeof *ok);
    for (size_t i = 0; r && ok && i < p->o.nshapes; i++) {
        const a4w4_shape *s = &p->shapes[i];
        ok[i] = !a4w4_route_shape(&tuned, &kt, &hp, (int)s->M, (int)s->N, (int)s->K, &r[i], e,
                                  sizeof e) && r[i].is_asm;
        p->groups[i] = i;
        for (size_t j = 0; ok[i] && j < i; j++)
            if (ok[j] && !strcmp(r[i].kernel, r[j].kernel) && r[i].split == r[j].split &&
                p->groups[j] == j) {
                p->groups[i] = j;
                break;
            }
    }
    int rc = r && ok ? 0 : -1;
    free(r);
    free(ok);
    a4w4_tuned_free(&tuned);
    a4w4_kernels_free(&kt);
    return rc;
}

/* 1 when the directory that would hold path is missing or not writable. */
static int dir_unwritable(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = 0;
    else
        *slash = 0;
    return access(dir, W_OK) != 0;
}

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
        if (a4w4_dflow_read_plan(a->probes, &p->o, &p->shapes, &p->groups))
            return A4W4_EXIT_BADINPUT;
    } else {
        int rc = a->cases ? shapes_from_cases(a->cases, p)
                          : parse_shapes(a->shapes ? a->shapes : "64x64x2048", p);
        if (rc || !(p->groups = calloc(p->o.nshapes, sizeof *p->groups)))
            return A4W4_EXIT_BADINPUT;
        for (size_t i = 0; i < p->o.nshapes; i++)
            p->groups[i] = i;
        if (a->backend && !strcmp(a->backend, "hip-asm:dispatch") && dispatch_groups(p))
            return A4W4_EXIT_BADINPUT;
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
    if (a->out && !a->write_probes && (dir_unwritable(a->out) || dir_unwritable(p->evidence))) {
        a4w4_errorf("discover: cannot write %s: its directory does not exist or is not "
                    "writable (nothing probed)", dir_unwritable(a->out) ? a->out : p->evidence);
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

/* Run the rounds: in this process, or through operand bundles. Returns the exit code. */
static int run(const discover_opts *a, discover_plan *p)
{
    double t0 = a4w4_now();
    int rc;
    if (a->write_probes) {
        rc = a4w4_dflow_write_plan(a->write_probes, &p->o);
        char dir[4200], err[1024];
        snprintf(dir, sizeof dir, "%s/r1", a->write_probes);
        if (!rc && a4w4_discover_write_round(p->d, dir, A4W4_TOOL_VERSION, err, sizeof err)) {
            a4w4_errorf("discover: %s", err);
            rc = A4W4_EXIT_IO;
        }
        if (!rc)
            printf("discover: round 1's probes are in %s; run the kernel on them, e.g.\n"
                   "  python3 -m a4w4check.external --ops %s --out OUT/r1 --kernel NAME "
                   "--contract exact\nthen: a4w4check discover --backend bundle:OUT --probes %s "
                   "--out FILE\n", dir, dir, a->write_probes);
        return rc;
    }
    if (p->bundle) {
        if (a->runner && (rc = a4w4_dflow_write_plan(a->probes, &p->o)))
            return rc;
        rc = a4w4_dflow_bundle(p->d, a->probes, p->out_dir, a->runner, a->runner_timeout,
                               a->quiet);
    } else {
        char err[1024];
        if ((rc = a4w4_isolation_options("discover", a->no_isolate, a->timeout_s)))
            return rc;
        a4w4_hstatus st = a4w4_backend_open(a->backend, &p->b, err, sizeof err);
        if (st != A4W4_ST_OK) {
            a4w4_errorf("discover: %s", err);
            return a4w4_exit_code(st);
        }
        rc = a4w4_dflow_backend(p->d, &p->b, a->quiet);
    }
    p->seconds = a4w4_now() - t0;
    return rc;
}

/* ---- render ------------------------------------------------------------------------------- */

static void shape_line(FILE *f, const discover_plan *p, size_t i, const char *backend)
{
    const a4w4_discover_shape_result *r = a4w4_discover_result(p->d, i);
    const a4w4_shape *s = &p->shapes[i];
    char c[A4W4_CONTRACT_MAX] = "";
    if (r->verdict != A4W4_DISCOVER_FAILED)
        a4w4_contract_format(&r->contract, c, sizeof c);
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

static int write_evidence(const discover_plan *p, const char *backend, const char *contract)
{
    size_t cap = 1 << 16, len = 0;
    char *doc = malloc(cap);
    if (!doc)
        return -1;
    len += (size_t)snprintf(doc, cap, "# discover: %s\n\n%.2f s in all, seed %llu, %u run%s of "
                            "every call\n\n## Contract\n\n```\n%s```\n", backend, p->seconds,
                            (unsigned long long)p->o.seed, p->o.repeats,
                            p->o.repeats == 1 ? "" : "s", contract ? contract : "(none)\n");
    for (size_t i = 0; i < p->o.nshapes; i++) {
        const char *ev = a4w4_discover_evidence(p->d, i), *df = a4w4_discover_defects(p->d, i);
        size_t need = len + strlen(ev) + strlen(df) + 512;
        if (need > cap) {
            char *q = realloc(doc, cap = 2 * need);
            if (!q) {
                free(doc);
                return -1;
            }
            doc = q;
        }
        len += (size_t)snprintf(doc + len, cap - len, "\n## %zux%zux%zu\n\n%s%s%s",
                                p->shapes[i].M, p->shapes[i].N, p->shapes[i].K, ev,
                                df[0] ? "\n### Defects (outputs no order can give)\n\n" : "",
                                df);
    }
    char err[1024];
    int rc = a4w4_write_atomic(p->evidence, doc, len, err, sizeof err) ? -1 : 0;
    if (rc)
        a4w4_errorf("discover: %s", err);
    free(doc);
    return rc;
}

static int render(const discover_opts *a, discover_plan *p)
{
    char text[16384], err[1024];
    int found = a4w4_discover_contract_text(p->d, text, sizeof text) >= 0, all = 1;
    for (size_t i = 0; i < p->o.nshapes; i++) {
        shape_line(stdout, p, i, a->backend);
        if (!a->quiet) /* the evidence: which probe decided what, the validation */
            fputs(a4w4_discover_evidence(p->d, i), stdout);
        all &= a4w4_discover_result(p->d, i)->verdict == A4W4_DISCOVER_FOUND;
    }
    printf("discover: %.2f s; evidence in %s\n", p->seconds, p->evidence);
    if (write_evidence(p, a->backend, found ? text : NULL))
        return A4W4_EXIT_IO;
    if (found && a4w4_write_atomic(a->out, text, strlen(text), err, sizeof err)) {
        a4w4_errorf("discover: %s", err);
        return A4W4_EXIT_IO;
    }
    if (found)
        printf("discover: contract written to %s%s\n", a->out, all ? "" :
               " (rules for the shapes that fit only)");
    char closest[4200];
    snprintf(closest, sizeof closest, "%s.closest", a->out);
    if (!all && a4w4_discover_closest_text(p->d, text, sizeof text) >= 0) {
        if (a4w4_write_atomic(closest, text, strlen(text), err, sizeof err)) {
            a4w4_errorf("discover: %s", err);
            return A4W4_EXIT_IO;
        }
        printf("discover: the closest candidates (not accepted) written to %s\n", closest);
    }
    return all ? A4W4_EXIT_PASS : A4W4_EXIT_MISMATCH;
}

int cmd_discover(int argc, char **argv)
{
    discover_opts a = {0};
    a.repeats = 3;
    a.runner_timeout = 900;
    a.timeout_s = -1;
    a.validate_cases = 1;
    a.validate_outputs = 256;
    a4w4_args args;
    int rc = a4w4_options_parse(&discover_spec, &a, argc, argv, &args);
    if (rc != A4W4_OPTS_CONTINUE)
        return rc;
    discover_plan p;
    memset(&p, 0, sizeof p);
    rc = plan(&a, &p);
    if (rc == A4W4_EXIT_PASS)
        rc = run(&a, &p);
    if (rc == A4W4_EXIT_PASS && !a.write_probes)
        rc = render(&a, &p);
    if (p.b.type)
        a4w4_backend_close(&p.b);
    a4w4_discover_free(p.d);
    free(p.shapes);
    free(p.groups);
    return rc;
}
