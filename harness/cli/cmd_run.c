/* cmd_run.c — `a4w4check run`: the main job and the nightly runner. A case matrix (a named
 * set under cases/ or any case file) through every selected backend against the oracles,
 * plus every bundle under cases/golden/; results stream to results.jsonl as each case ends,
 * and results.json + summary.md are written atomically from it.
 *
 * parse (the options) -> plan (the matrix, the backends opened here, the shard, the budget:
 * commands/run_plan.h) -> run (commands/run_plan.h's loop into the stream, progress lines here)
 * -> render (results.json and summary.md from the stream, the failures, the exit code). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4check.h"
#include "backend_list.h"
#include "options.h"
#include "cpu_sut.h"
#include "fsutil.h"
#include "ledger.h"
#include "registry.h"
#include "repro.h"
#include "run_keep.h"
#include "run_plan.h"
#include "statecheck.h"
#include "run_render.h"
#include "stream.h"

static const char run_usage[] =
    "usage: a4w4check run [--set NAME | --cases FILE | --bundle FILE...] [--case NAME...]\n"
    "                     [--golden DIR | --no-golden] [--captures DIR] [--backend a,b,...]\n"
    "                     [--out DIR] [--shard i/n] [--resume] [--full | --budget-seconds S]\n"
    "                     [--timeout S] [--contract B=FILE|TEXT]... [--max-timeouts N]\n"
    "                     [--no-isolate] [--no-call-sequence] [--e8m0-code0 R]\n"
    "                     [--save-failing DIR] [--keep-outputs DIR] [--keep-outputs-max-mb MB]\n"
    "                     [--host-judge] [--no-prefetch | --prefetch-depth N] [--quiet]\n"
    "\n"
    "Runs each case of a matrix through the backends and compares every checked output bit\n"
    "for bit with the oracle of the backend's contract (ordered(S), exact, tree(...); bounded\n"
    "backends within the derived bound), then verifies every bundle under cases/golden/.\n"
    "Every failing entry carries the command that reruns exactly it (\"repro\"), printed\n"
    "with the first failures at the end.\n"
    "\n";

#define MAX_SELECT 256

typedef struct {
    const char *cases_path, *golden_dir, *out_dir, *set, *captures_dir, *save_dir;
    const char *keep_dir; /* --keep-outputs */
    int keep_max_mb;
    const char *known, *upstream_version;
    const char *golden_default; /* golden_dir's default (cases/golden): --golden not given */
    const char *case_v[MAX_SELECT], *bundle_v[MAX_SELECT];
    a4w4_opt_strings cases_sel, bundles;
    a4w4_opt_list backend;
    a4w4_opt_strings contract; /* --contract B=FILE|TEXT, repeatable */
    a4w4_opt_shard shard;
    int full, quiet, resume;
    int budget_s;
    int timeout_s, no_isolate; /* timeout_s -1: automatic (registry.h) */
    int max_timeouts;
    int code0; /* index into a4w4_code0_names: A4W4_CODE0_BOTH, _OCP, _DRIVER */
    int host_judge;            /* 1: no device judge, everything judged on the host */
    int no_prefetch;           /* 1: each case prepared in turn (a4w4_runner.prefetch) */
    int prefetch_depth;        /* cases prepared ahead at once; 0: a4w4_prefetch_default_depth */
    int no_call_sequence;      /* 1: no call sequence (engine/statecheck.h) */
} run_opts;

static const a4w4_option run_options[] = {
    OPT_STRING("set", run_opts, set, "NAME",
               "cases/NAME.csv: premerge (default), premerge-quick, nightly, hazard, edge"),
    OPT_STRING("cases", run_opts, cases_path, "FILE", "any case file (name,M,N,K,regime,seed,tags)"),
    OPT_STRINGS("bundle", run_opts, bundles, "FILE",
                "instead of a set: this case or operand bundle (repeatable; a file\n"
                "--save-failing or shrink wrote), item golden/<file stem>"),
    OPT_STRINGS("case", run_opts, cases_sel, "NAME",
                "only this item of the matrix (repeatable): a case name,\n"
                "golden/<stem> or capture/<stem>"),
    OPT_STRING("golden", run_opts, golden_dir, "DIR",
               "verify every bundle under DIR (default cases/golden)"),
    OPT_CALLBACK("no-golden", run_opts, golden_dir, NULL, a4w4_opt_cb_unset, "verify no golden bundle"),
    OPT_STRING("captures", run_opts, captures_dir, "DIR",
               "judge every capture bundle under DIR, subdirectories included\n"
               "(python a4w4check.capture's) from its own operands, after the cases\n"
               "and golden bundles; none there: INCOMPLETE (contracts §7.1)"),
    OPT_LIST("backend", run_opts, backend, "LIST",
             "comma-separated; default every backend available here. Types:\n"
             "cpu-asm, cpu-fallback, bundle:DIR, plugin:LIB.so (docs/backends.md);\n"
             "a selftest mutant (selftest --list) only by its name"),
    OPT_STRINGS("contract", run_opts, contract, "B=FILE|TEXT", A4W4_CONTRACT_HELP),
    OPT_STRING("out", run_opts, out_dir, "DIR",
               "results.jsonl, results.json, summary.md (default build/out)"),
    OPT_CALLBACK("shard", run_opts, shard, "i/n", a4w4_opt_cb_shard,
                 "run the deterministic i-th of n parts: items balanced by estimated\n"
                 "cost (M*N*K), disjoint and complete; merge joins them"),
    OPT_FLAG("resume", run_opts, resume, "keep the cases already in DIR/results.jsonl and run the rest"),
    OPT_FLAG("full", run_opts, full, "check every output of every case"),
    OPT_INT("budget-seconds", run_opts, budget_s, "S", 0, 86400,
            "the whole run's host checking, estimated at this run's own rates\n"
            "(measured at its start): every output of every case when it fits,\n"
            "else the cheapest cases in full and a tile-aware sample of the\n"
            "others (their oracle entry says so); default 60: every output of\n"
            "the premerge set in an optimized build; 0: sample above 2^26 MACs.\n"
            "With a GPU judge, GPU backends are checked on every output anyway"),
    OPT_INT("timeout", run_opts, timeout_s, "S", 0, 86400, A4W4_TIMEOUT_HELP),
    OPT_INT("max-timeouts", run_opts, max_timeouts, "N", 1, 1000000,
            "after N calls of a backend in a row time out, do not call it\n"
            "again: its remaining entries fail \"not run: backend hung N\n"
            "times in a row\" (default 2)"),
    OPT_FLAG("no-isolate", run_opts, no_isolate, A4W4_NO_ISOLATE_HELP),
    OPT_FLAG("no-call-sequence", run_opts, no_call_sequence,
             "do not also call each plugin 5 times in one process on the run's\n"
             "smallest cases, every call judged (docs/backends.md \"Call\n"
             "sequences\"); the verdict then says the sequence was off"),
    OPT_CHOICE("e8m0-code0", run_opts, code0, "R", a4w4_code0_names, A4W4_CODE0_HELP),
    OPT_STRING("save-failing", run_opts, save_dir, "DIR",
               "write each failing GEMM entry's operands with its outputs and the\n"
               "oracle's as DIR/<case>@<backend>.safetensors (+ manifest.json):\n"
               "verify, run --bundle and python -m a4w4check.external take them"),
    OPT_STRING("keep-outputs", run_opts, keep_dir, "DIR",
               "keep every generated case's GEMM outputs, per backend, as output\n"
               "bundles DIR/<backend>/<case>.safetensors (recorded in results.json;\n"
               "compare of two such runs gives the parity of their outputs)"),
    OPT_INT("keep-outputs-max-mb", run_opts, keep_max_mb, "MB", 1, 1048576,
            "refuse --keep-outputs when the outputs would take more than MB\n"
            "megabytes (default 1024)"),
    OPT_STRING("known", run_opts, known, "FILE", A4W4_KNOWN_HELP),
    OPT_STRING("upstream-version", run_opts, upstream_version, "V",
               "the version of the code under test (AITER's), for the ledger's\n"
               "since/until; recorded as upstream_version"),
    OPT_FLAG("host-judge", run_opts, host_judge,
             "no GPU judge: GPU backends judged on the host sample only"),
    OPT_FLAG("no-prefetch", run_opts, no_prefetch,
             "with the GPU judge, prepare each case in turn: no host thread\n"
             "generating the next case's operands and host oracles meanwhile\n"
             "(the same results; for measuring)"),
    OPT_INT("prefetch-depth", run_opts, prefetch_depth, "N", 1, A4W4_PREFETCH_MAX,
            "with the GPU judge, prepare up to N next cases at once, each on a\n"
            "host thread (default 3 on 8 or more cores, else 1; the same results)"),
    OPT_FLAG("quiet", run_opts, quiet, A4W4_QUIET_HELP),
    OPT_END(),
};

static const a4w4_command_spec run_spec = {
    "run", run_usage, run_options, NULL,
    "exit: 0 all pass, 1 any mismatch, 2 bad input (or --out in use by another run),\n"
    "      3 a GPU backend without a GPU, 4 results not written, 5 incomplete (an item\n"
    "      not recorded, or a backend that compared nothing: every entry n/a or skip)\n"};

/* Backends holding results made before the run (bundle:DIR) checked against the whole
 * matrix: its hash and every item's name; under --case the matrix it narrowed (its base: the
 * results of a matrix answer any subset of it, so a failing entry's repro line reruns).
 * Returns the exit code. */
static int check_stored_results(a4w4_run_plan *p)
{
    char hash[32], (*store)[160] = NULL;
    snprintf(hash, sizeof hash, "%016llx", p->m.base_items ? p->m.base_hash : p->m.hash);
    a4w4_run_identity id = {hash, A4W4_TOOL_VERSION};
    const char **v = NULL;
    size_t n;
    int rc = A4W4_EXIT_IO;
    if (p->m.base_items)
        rc = a4w4_backend_list_check_items("run", p->bk, p->nb, &id,
                                           (const char *const *)p->m.base_items,
                                           p->m.nbase_items);
    else if (a4w4_run_item_names(p, &store, &v, &n))
        a4w4_errorf("run: out of memory listing the items");
    else
        rc = a4w4_backend_list_check_items("run", p->bk, p->nb, &id, v, n);
    free(store);
    free(v);
    return rc;
}

/* The run's settings for commands/run_plan.h. */
static a4w4_run_settings settings(const run_opts *o)
{
    return (a4w4_run_settings){.full = o->full, .budget_s = o->budget_s, .shard_i = o->shard.i,
                               .shard_n = o->shard.n, .code0 = a4w4_code0_names[o->code0],
                               .upstream_version = o->upstream_version};
}

/* The items, the backends and the output directory. Returns the exit code. */
static int plan_run(const run_opts *o, a4w4_run_plan *p)
{
    char err[1024];
    if (o->set && o->cases_path) {
        a4w4_errorf("run: give --set or --cases, not both");
        return A4W4_EXIT_BADINPUT;
    }
    if (o->bundles.n && (o->set || o->cases_path)) {
        a4w4_errorf("run: --bundle runs the given bundles only: no --set or --cases with it");
        return A4W4_EXIT_BADINPUT;
    }
    a4w4_run_source src = {o->set, o->cases_path, o->golden_dir, o->captures_dir, o->bundles.v,
                           o->cases_sel.v, o->bundles.n, o->cases_sel.n, 0};
    /* --captures alone judges the captures alone (no premerge set, no golden bundle):
     * --set, --cases or --golden given as well add theirs */
    src.captures_only = o->captures_dir && !o->set && !o->cases_path && !o->bundles.n &&
                        (!o->golden_dir || o->golden_dir == o->golden_default);
    int mr = a4w4_run_plan_items(p, &src, err, sizeof err);
    if (mr) { /* the case file reader's line names the file */
        a4w4_errorf(mr == A4W4_MATRIX_ECASES ? "%s" : "run: %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    /* a mutant by name: repros */
    a4w4_backend_list_opts bo = {"run", A4W4_RUN_MAX_BACKENDS, 1, o->quiet};
    int rc = a4w4_isolation_options("run", o->no_isolate, o->timeout_s);
    if (rc == A4W4_EXIT_PASS && !(src.captures_only && !o->backend.text))
        rc = a4w4_backend_list_open(&bo, &o->backend, p->bk, &p->nb); /* else none: every
                                                          * capture is judged from its file */
    if (rc == A4W4_EXIT_PASS)
        rc = check_stored_results(p);
    if (rc == A4W4_EXIT_PASS)
        rc = a4w4_backend_contracts_apply("run", &o->contract, p->bk, p->nb);
    if (rc != A4W4_EXIT_PASS)
        return rc;
    if (a4w4_mkdir_p(o->out_dir, err, sizeof err)) {
        a4w4_errorf("run: --out %s", err);
        return A4W4_EXIT_IO;
    }
    a4w4_run_settings rs = settings(o);
    if (a4w4_run_plan_shard(p, &rs)) {
        a4w4_errorf("run: out of memory planning the shards");
        return A4W4_EXIT_IO;
    }
    if (!o->host_judge)
        p->dev = a4w4_backend_devjudge(p->dev_why, sizeof p->dev_why);
    int brc = a4w4_run_plan_budget(p, &rs, err, sizeof err);
    if (!p->have_rates && !o->full && o->budget_s > 0 && !o->quiet) /* the constant model */
        fprintf(stderr, "a4w4check run: %s; the budget uses the built-in rates\n", err);
    if (brc) {
        a4w4_errorf("run: out of memory planning the budget");
        return A4W4_EXIT_IO;
    }
    return A4W4_EXIT_PASS;
}

/* The call sequence of the run (engine/statecheck.h): its cases from the whole matrix (every
 * shard picks the same), off with --no-call-sequence, none without a plugin backend. */
static void plan_sequence(const run_opts *o, const a4w4_run_plan *p, a4w4_statecheck *sc)
{
    size_t plugins = 0;
    for (size_t i = 0; i < p->nb; i++)
        plugins += p->bk[i].type->run_sequence != NULL;
    if (o->no_call_sequence || !plugins) {
        memset(sc, 0, sizeof *sc);
        snprintf(sc->why, sizeof sc->why, "%s", o->no_call_sequence
                 ? "off (--no-call-sequence): no plugin was called twice in one process"
                 : "none: no backend with a call sequence (plugin:LIB) in the run");
    } else
        a4w4_statecheck_pick(p->m.cases, p->m.ncases, sc);
    sc->isolated = !o->no_isolate;
}

/* Take --out's lock (a second run into the same directory would interleave its cases with
 * ours) and remove the temporary files a killed writer left there. Returns the exit code. */
static int claim_out_dir(const run_opts *o, a4w4_run_plan *p, int argc, char **argv)
{
    char holder[1024], err[1400];
    size_t k = (size_t)snprintf(holder, sizeof holder, "a4w4check");
    for (int i = 0; i < argc && k < sizeof holder; i++)
        k += (size_t)snprintf(holder + k, sizeof holder - k, " %s", argv[i]);
    a4w4_hstatus st = a4w4_dir_lock(o->out_dir, holder, &p->lock_fd, err, sizeof err);
    if (st != A4W4_ST_OK) {
        a4w4_errorf("run: --out %s", err);
        return a4w4_exit_code(st);
    }
    static const char *const ours[] = {"results.jsonl", "results.json", "summary.md"};
    size_t removed = a4w4_remove_stale_temps(o->out_dir, ours, 3);
    if (removed && !o->quiet)
        fprintf(stderr, "a4w4check run: removed %zu temporary file%s a killed run left in %s\n",
                removed, removed == 1 ? "" : "s", o->out_dir);
    return A4W4_EXIT_PASS;
}

/* A capture's failing entry is rerun by `a4w4check verify PATH`. */
static void verify_repro(const char *path, char *buf, size_t len)
{
    snprintf(buf, len, "a4w4check verify ");
    a4w4_shell_word(buf, len, path);
}

/* Every item of this shard through the backends into the stream. Returns the exit code. */
static int run_items(const run_opts *o, a4w4_run_plan *p, const a4w4_statecheck *sc)
{
    char err[1024], hash[32];
    /* the operands' identity: the matrix a --case subset was taken from (check_stored_results) */
    snprintf(hash, sizeof hash, "%016llx", p->m.base_items ? p->m.base_hash : p->m.hash);
    a4w4_run_identity id = {hash, A4W4_TOOL_VERSION};
    const unsigned depth = o->prefetch_depth ? (unsigned)o->prefetch_depth
                                             : a4w4_prefetch_default_depth();
    a4w4_repro_run rr = {p->m.set, p->m.cases_path, o->golden_dir, o->bundles.v, o->bundles.n,
                         o->full, o->budget_s, o->timeout_s, o->no_isolate, o->contract.v,
                         o->contract.n, o->code0 ? a4w4_code0_names[o->code0] : NULL,
                         o->max_timeouts, o->host_judge};
    a4w4_runner runner = {.backends = p->bk, .nbackends = p->nb, .full = o->full, .id = &id,
                          .budget_s = o->budget_s, .code0_reading = o->code0,
                          .max_timeouts = o->max_timeouts, .repro = a4w4_repro_command,
                          .repro_ctx = &rr, .save_dir = o->save_dir,
                          .keep_dir = o->keep_dir,
                          .plan = p->budget.full ? &p->budget : NULL,
                          .rates = p->have_rates ? &p->rates : NULL,
                          .dev = p->dev, .stages = &p->stages, .seq = sc,
                          /* the device judges: the host prepares the next cases meanwhile */
                          .prefetch = p->dev && !o->no_prefetch ? a4w4_prefetch_new(depth)
                                                                : NULL};
    a4w4_run_progress rp = {.quiet = o->quiet};
    a4w4_progress_start(&rp.pg, "run", o->quiet, 0);
    size_t nsuts, ndone = (size_t)cJSON_GetArraySize(p->done), count;
    if (ndone && !o->quiet)
        fprintf(stderr, "a4w4check run: resuming: %zu cases already recorded in %s\n", ndone,
                p->st.path);
    a4w4_run_loop l = {&runner, a4w4_cpu_bundle_suts(&nsuts), 0, verify_repro,
                       a4w4_run_on_item, &rp};
    l.nsuts = nsuts;
    a4w4_run_settings rs = settings(o);
    a4w4_hstatus st = a4w4_run_items(p, &rs, &l, &count, err, sizeof err);
    a4w4_prefetch_free(runner.prefetch);
    if (st != A4W4_ST_OK && !rp.write_failed) /* a write error was said at its item */
        a4w4_errorf("run: %s", err);
    a4w4_progress_item(&rp.pg, count, p->mine, rp.fails, "done", 1);
    return a4w4_exit_code(st);
}

int cmd_run(int argc, char **argv)
{
    char golden_buf[4096], err[1024];
    const char *contract_v[A4W4_RUN_MAX_BACKENDS];
    run_opts o = {.golden_dir = a4w4_data_path("cases/golden", golden_buf, sizeof golden_buf),
                  .golden_default = golden_buf,
                  .out_dir = "build/out",
                  .contract = {contract_v, 0, A4W4_RUN_MAX_BACKENDS},
                  .shard = {1, 1},
                  .budget_s = A4W4_DEFAULT_BUDGET_S,
                  .timeout_s = -1,
                  .max_timeouts = A4W4_MAX_TIMEOUTS_DEFAULT,
                  .code0 = A4W4_CODE0_BOTH,
                  .keep_max_mb = 1024};
    o.cases_sel = (a4w4_opt_strings){o.case_v, 0, MAX_SELECT};
    o.bundles = (a4w4_opt_strings){o.bundle_v, 0, MAX_SELECT};
    a4w4_args args;
    int rc = a4w4_options_parse(&run_spec, &o, argc, argv, &args);
    if (rc != A4W4_OPTS_CONTINUE)
        return rc;
    if (o.full) /* every output anyway: no budget in the run's identity (merge, --resume) */
        o.budget_s = 0;
    a4w4_run_plan p;
    a4w4_statecheck sc;
    a4w4_run_plan_init(&p);
    rc = plan_run(&o, &p);
    if (rc == A4W4_EXIT_PASS && o.keep_dir) /* before anything is written */
        rc = a4w4_run_keep_check(&p, o.keep_dir, o.keep_max_mb * 1048576.0, o.shard.i,
                                 o.shard.n, o.full);
    if (rc == A4W4_EXIT_PASS)
        plan_sequence(&o, &p, &sc);
    if (rc == A4W4_EXIT_PASS)
        rc = claim_out_dir(&o, &p, argc, argv);
    if (rc == A4W4_EXIT_PASS) {
        a4w4_run_settings rs = settings(&o);
        p.header = a4w4_run_header(&p, &rs, a4w4_backends_contracts_json);
        char seq[512];
        a4w4_statecheck_describe(&sc, seq, sizeof seq);
        if (p.header && !cJSON_AddStringToObject(p.header, "call_sequence", seq)) {
            cJSON_Delete(p.header);
            p.header = NULL;
        }
        if (o.keep_dir && p.header)
            rc = a4w4_run_keep_prepare(&p, o.keep_dir, o.keep_max_mb * 1048576.0, o.shard.i,
                                       o.shard.n, o.full, o.quiet);
    }
    if (rc == A4W4_EXIT_PASS) {
        a4w4_stream_tally t;
        rc = a4w4_exit_code(
            a4w4_stream_open(&p.st, o.out_dir, p.header, o.resume, &p.done, &t, err, sizeof err));
        /* results.json and summary.md now describe another stream than this run's: gone
         * until this run writes its own, so a run cut short leaves no earlier verdict beside
         * its results.jsonl (docs/cli/run.md "Results, resume, shards") */
        static const char *const rendered[] = {"results.json", "summary.md"};
        if (!rc)
            rc = a4w4_exit_code(a4w4_remove_files(o.out_dir, rendered, 2, err, sizeof err));
        if (rc)
            a4w4_errorf("run: %s", err);
        else if (t.dropped && !o.quiet)
            fprintf(stderr, "a4w4check run: resuming: %zu recorded line%s dropped and run again "
                    "(incomplete or repeated; first: %s)\n", t.dropped, t.dropped == 1 ? "" : "s",
                    t.first_dropped);
    }
    if (rc == A4W4_EXIT_PASS)
        rc = run_items(&o, &p, &sc);
    if (rc == A4W4_EXIT_PASS)
        rc = a4w4_run_finish(&p, &(a4w4_run_end){o.out_dir, o.known, o.save_dir, o.quiet});
    a4w4_dir_unlock(p.lock_fd);
    a4w4_backend_list_close(p.bk, p.nb);
    a4w4_run_plan_free(&p);
    return rc;
}
