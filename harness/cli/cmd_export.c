/* cmd_export.c — `a4w4check export`: operand bundles of a case matrix for kernels outside
 * this process (gen/export.h; contracts §7). parse -> plan -> run -> render. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4check.h"
#include "export.h"
#include "matrix.h"
#include "options.h"
#include "stream.h"

static const char export_usage[] =
    "usage: a4w4check export [--set NAME | --cases FILE] [--golden DIR | --no-golden]\n"
    "                        [--shard i/n] [--out DIR] [--with-expected] [--max-bytes N]\n"
    "                        [--quiet]\n"
    "\n"
    "Writes one operand bundle per item of a matrix (the cases of a set, then every golden\n"
    "bundle) into DIR, with every form a kernel may consume: A as fp4x2 and its E8M0 scales\n"
    "row-major and as the padded, shuffled ASM layout (pad 0x7F), W as fp4x2 row-major and\n"
    "preshuffled, its scales row-major and swizzled (where the shape allows; metadata `absent`\n"
    "says why not), the bf16 activations of normal-regime cases, and DIR/manifest.json.\n"
    "Outputs a kernel writes for them are checked with `a4w4check run --backend bundle:OUT`\n"
    "on the same matrix (python -m a4w4check.external writes such outputs).\n"
    "Sizes (operands are full, as a kernel needs them): premerge 0.61 GB, edge 11 MB,\n"
    "nightly 412 GB (split it with --shard; --max-bytes refuses an export above a budget\n"
    "before writing anything).\n"
    "\n";

typedef struct {
    const char *set, *cases_path, *golden_dir, *out_dir;
    a4w4_opt_shard shard;
    int with_expected, quiet;
    double max_bytes; /* 0: no limit */
} export_opts;

/* --max-bytes N with an optional suffix K, M or G (powers of 1000). */
static int parse_bytes(const a4w4_option *opt, void *field, const char *v, char *err,
                       size_t errlen)
{
    (void)opt;
    char *end;
    double x = strtod(v, &end);
    double mul = *end == 'K' ? 1e3 : *end == 'M' ? 1e6 : *end == 'G' ? 1e9 : *end ? -1 : 1;
    if (!(*v == '.' || (*v >= '0' && *v <= '9')) || !(x > 0) || mul < 0 || (*end && end[1])) {
        snprintf(err, errlen, "--max-bytes '%s' must be a positive number of bytes (suffix K, M "
                 "or G allowed)", v);
        return -1;
    }
    *(double *)field = x * mul;
    return 0;
}

static const a4w4_option export_options[] = {
    OPT_STRING("set", export_opts, set, "NAME",
               "cases/NAME.csv: premerge (default), premerge-quick, nightly, hazard, edge"),
    OPT_STRING("cases", export_opts, cases_path, "FILE",
               "any case file (name,M,N,K,regime,seed,tags)"),
    OPT_STRING("golden", export_opts, golden_dir, "DIR",
               "golden bundles to export too (default cases/golden)"),
    OPT_CALLBACK("no-golden", export_opts, golden_dir, NULL, a4w4_opt_cb_unset,
                 "no golden bundles"),
    OPT_CALLBACK("shard", export_opts, shard, "i/n", a4w4_opt_cb_shard,
                 "only the i-th of n parts (the split run makes: items balanced by\n"
                 "estimated cost, deterministic, disjoint and complete)"),
    OPT_STRING("out", export_opts, out_dir, "DIR", "where the bundles go (default build/operands)"),
    OPT_FLAG("with-expected", export_opts, with_expected,
             "add y_exact (BF16 [M, N]); left out by default: a system under\n"
             "test should not see its answer"),
    OPT_CALLBACK("max-bytes", export_opts, max_bytes, "N", parse_bytes,
                 "refuse (exit 2) when the export would exceed N bytes (suffix K, M, G)"),
    OPT_FLAG("quiet", export_opts, quiet, A4W4_QUIET_HELP),
    OPT_END(),
};

static const a4w4_command_spec export_spec = {
    "export", export_usage, export_options, NULL,
    "exit: 0 written, 2 bad input or over --max-bytes, 4 a bundle could not be written\n"};

typedef struct {
    a4w4_matrix m;
    char **names; /* items of this shard, matrix order */
    char **why;   /* why item i was not exported (NULL: written) */
    size_t n;
    double bytes;
    char hash[32], shard[32];
} export_plan;

static int plan(const export_opts *o, export_plan *p)
{
    char err[1024];
    int mr = a4w4_matrix_load(&p->m, o->set, o->cases_path, o->golden_dir, err, sizeof err);
    if (mr) {
        if (mr == A4W4_MATRIX_ECASES)
            a4w4_errorf("%s", err); /* the reader's line names the file */
        else
            a4w4_errorf("export: %s", err);
        return -1;
    }
    size_t total = p->m.ncases + p->m.nbundles;
    if (!(p->names = calloc(total ? total : 1, sizeof *p->names)) ||
        !(p->why = calloc(total ? total : 1, sizeof *p->why))) {
        a4w4_errorf("export: out of memory");
        return -1;
    }
    for (size_t k = 0; k < total; k++) {
        int in = a4w4_matrix_in_shard(&p->m, k, o->shard.i, o->shard.n);
        if (in < 0) {
            a4w4_errorf("export: out of memory");
            return -1;
        }
        if (!in)
            continue;
        char name[512];
        if (k < p->m.ncases)
            snprintf(name, sizeof name, "%s", p->m.cases[k].name);
        else
            a4w4_matrix_bundle_name(&p->m, k - p->m.ncases, name, sizeof name);
        p->names[p->n++] = strdup(name);
        p->bytes += k < p->m.ncases
                        ? a4w4_export_case_bytes(&p->m.cases[k], o->with_expected)
                        : a4w4_export_golden_bytes(p->m.bundles[k - p->m.ncases],
                                                   o->with_expected);
    }
    snprintf(p->hash, sizeof p->hash, "%016llx", p->m.hash);
    snprintf(p->shard, sizeof p->shard, "%u/%u", o->shard.i, o->shard.n);
    return 0;
}

static void plan_free(export_plan *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->names[i]);
        free(p->why ? p->why[i] : NULL);
    }
    free(p->names);
    free(p->why);
    a4w4_matrix_free(&p->m);
}

/* Write every item of the plan; returns the exit code. */
static int run(const export_opts *o, export_plan *p)
{
    char err[1024];
    a4w4_export_opts eo = {p->hash, A4W4_TOOL_VERSION, o->with_expected};
    double written = 0, t0 = a4w4_now();
    size_t j = 0, total = p->m.ncases + p->m.nbundles;
    if (a4w4_mkdir_p(o->out_dir, err, sizeof err)) {
        a4w4_errorf("export: --out %s", err);
        return A4W4_EXIT_IO;
    }
    /* an earlier export's manifest would list its cases beside this one's bundles: gone until
     * this export writes its own, so one cut short leaves no manifest (docs/cli/export.md) */
    static const char *const manifest[] = {"manifest.json"};
    if (a4w4_remove_files(o->out_dir, manifest, 1, err, sizeof err)) {
        a4w4_errorf("export: %s", err);
        return A4W4_EXIT_IO;
    }
    for (size_t k = 0; k < total; k++) {
        if (a4w4_matrix_in_shard(&p->m, k, o->shard.i, o->shard.n) != 1)
            continue;
        double b = 0;
        int rc = k < p->m.ncases
                     ? a4w4_export_case(&p->m.cases[k], &eo, o->out_dir, &b, err, sizeof err)
                     : a4w4_export_golden(p->m.bundles[k - p->m.ncases], p->names[j], &eo,
                                          o->out_dir, &b, err, sizeof err);
        if (rc < 0) {
            a4w4_errorf("export: %s", err);
            return k < p->m.ncases ? A4W4_EXIT_IO : A4W4_EXIT_BADINPUT;
        }
        if (rc > 0)
            p->why[j] = strdup(err);
        written += b;
        j++;
        if (!o->quiet)
            fprintf(stderr, "a4w4check export: [%zu/%zu] %s (%.1f MB, %.0fs)\n", j, p->n,
                    p->names[j - 1], b / 1e6, a4w4_now() - t0);
    }
    if (a4w4_export_manifest(o->out_dir, p->m.set, p->m.cases_path, p->shard, &eo,
                             (const char *const *)p->names, (const char *const *)p->why, p->n, written,
                             err, sizeof err)) {
        a4w4_errorf("export: %s", err);
        return A4W4_EXIT_IO;
    }
    size_t skipped = 0;
    for (size_t i = 0; i < p->n; i++)
        skipped += p->why[i] != NULL;
    printf("export: %zu operand bundles, %.1f MB in %s (matrix %s, shard %s)", p->n - skipped,
           written / 1e6, o->out_dir, p->hash, p->shard);
    printf(skipped ? "; %zu items not exported (manifest.json says why)\n" : "\n", skipped);
    return A4W4_EXIT_PASS;
}

int cmd_export(int argc, char **argv)
{
    char golden[4096];
    export_opts o = {.golden_dir = a4w4_data_path("cases/golden", golden, sizeof golden),
                     .out_dir = "build/operands", .shard = {1, 1}};
    a4w4_args args;
    int rc = a4w4_options_parse(&export_spec, &o, argc, argv, &args);
    if (rc != A4W4_OPTS_CONTINUE)
        return rc;
    export_plan p = {0};
    rc = A4W4_EXIT_BADINPUT;
    if (o.set && o.cases_path) {
        a4w4_errorf("export: give --set or --cases, not both");
        return rc;
    }
    if (plan(&o, &p))
        goto out;
    if (o.max_bytes > 0 && p.bytes > o.max_bytes) {
        a4w4_errorf("export: the export would take %.0f bytes (%.2f GB), over --max-bytes %.0f "
                    "(nothing written; use --shard i/n or a smaller set)", p.bytes, p.bytes / 1e9,
                    o.max_bytes);
        goto out;
    }
    rc = run(&o, &p);
out:
    plan_free(&p);
    return rc;
}
