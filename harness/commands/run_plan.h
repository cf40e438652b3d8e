/* run_plan.h — what `run` works through and the steps between its options and its documents
 * (cli/cmd_run.c parses, opens the backends, prints and picks the exit code): the shard's
 * items, the whole-run budget (contracts §4.1), the results stream's header, the loop running
 * each item into the stream, the --save-failing manifest. Prints nothing. */
#ifndef A4W4_RUN_PLAN_H
#define A4W4_RUN_PLAN_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "backend.h"
#include "devjudge.h"
#include "matrix.h"
#include "budget.h"
#include "runner.h"
#include "status.h"
#include "stream.h"
#include "verify_bundle.h"

#define A4W4_RUN_MAX_BACKENDS 64

/* The checking settings of a run that the plan and its header need. */
typedef struct {
    int full;                     /* every output of every case */
    int budget_s;                 /* the whole-run budget in seconds (0: none, or --full) */
    unsigned shard_i, shard_n;    /* this run is part i of n (1 of 1: the whole matrix) */
    const char *code0;            /* the reading of E8M0 code 0, as recorded (contracts §1) */
    const char *upstream_version; /* NULL: not recorded */
} a4w4_run_settings;

/* What a run works through: the matrix items (cases, then golden bundles, then captures), the
 * opened backends (the caller's), the device judge, the budget, the output stream. */
typedef struct {
    a4w4_matrix m;
    size_t total_items, mine; /* the matrix's items, this shard's */
    a4w4_backend bk[A4W4_RUN_MAX_BACKENDS];
    size_t nb;
    const a4w4_devjudge *dev; /* the device judge, or NULL */
    char dev_why[256];        /* why none */
    a4w4_rates rates;
    int have_rates;
    a4w4_budget_plan budget;
    a4w4_stage_times stages;
    double t_start; /* a4w4_now() at the start of the run */
    double t_items_end; /* a4w4_now() when a4w4_run_items returned (0: not yet) */
    /* a4w4_now() when the last item was accounted: the stage table sums to t_accounted -
     * t_start when on_item sees it (the progress line's wall) */
    double t_accounted;
    cJSON *header, *done, *doc;
    a4w4_stream st;
    int bad_input;
    size_t nbad;          /* items recorded with a refusal or bad input (a4w4_run_items) */
    char first_bad[1024]; /* the first one's message */
    int lock_fd; /* the --out directory's lock (fsutil.h), -1 when not held */
} a4w4_run_plan;

/* An empty plan: no stream, no lock, t_start now. */
void a4w4_run_plan_init(a4w4_run_plan *p);

/* Where a run's items come from: the given bundles (nbundles > 0), else, with captures_only,
 * no case and no golden bundle (set "captures"), else the set NAME (NULL: premerge) or case
 * file with golden_dir's bundles (NULL: none); then the capture bundles under captures_dir
 * (NULL: none) and, when nsel > 0, only the items named sel[0..nsel). */
typedef struct {
    const char *set, *cases_path, *golden_dir, *captures_dir;
    const char *const *bundles, *const *sel;
    size_t nbundles, nsel;
    int captures_only; /* `run --captures DIR` with no --set, --cases, --golden or --bundle */
} a4w4_run_source;

/* Load the items of src into p->m (commands/matrix.h). 0, or A4W4_MATRIX_ECASES (err is the
 * case file reader's line, naming the file, line and rule) or A4W4_MATRIX_EUSAGE (err names
 * the option's input and the rule). */
int a4w4_run_plan_items(a4w4_run_plan *p, const a4w4_run_source *src, char *err, size_t errlen);

/* Count the matrix's items (p->total_items) and those of shard s->shard_i of s->shard_n
 * (p->mine). A4W4_OK or A4W4_ENOMEM. */
int a4w4_run_plan_shard(a4w4_run_plan *p, const a4w4_run_settings *s);

/* The whole-run budget (contracts §4.1; nothing with s->full or s->budget_s <= 0): this run's
 * rates measured on a small case (a4w4_budget_calibrate: p->have_rates; when that fails, the
 * built-in rates and why in note), then which of this shard's cases get every output checked
 * on the host. A4W4_OK or A4W4_ENOMEM. */
int a4w4_run_plan_budget(a4w4_run_plan *p, const a4w4_run_settings *s, char *note,
                         size_t notelen);

/* The names of the matrix's items, in order, for bundle:DIR backends' stored results:
 * (*names)[k] points into *store; both free()d by the caller. A4W4_OK or A4W4_ENOMEM. */
int a4w4_run_item_names(const a4w4_run_plan *p, char (**store)[160], const char ***names,
                        size_t *n);

/* The run's identity, the header of results.jsonl (schema A4W4_RESULTS_SCHEMA): tool, set,
 * cases file, matrix hash, shard, full, budget_seconds, e8m0_code0, backends, the contracts
 * (added by contracts(), the caller's), backend_files (each plugin library's FNV-1a 64),
 * upstream_version, item counts, the budget record, the
 * judge, the environment. NULL when out of memory. */
cJSON *a4w4_run_header(const a4w4_run_plan *p, const a4w4_run_settings *s,
                       void (*contracts)(cJSON *header, const a4w4_backend *bk, size_t n));

/* How a4w4_run_items runs each item and reports it. verify_repro writes the command that
 * reruns a capture bundle at path ("a4w4check verify PATH") into buf; on_item is called after
 * each item this process ran: count of this shard's items so far, failing entries so far,
 * the item's name, and write_err (its results stream write failed: the message) or NULL. */
typedef struct {
    const a4w4_runner *runner;
    const a4w4_bundle_sut *suts; /* the golden bundles' systems under test */
    size_t nsuts;
    void (*verify_repro)(const char *path, char *buf, size_t len);
    void (*on_item)(void *ctx, const a4w4_run_plan *p, size_t count, int fails,
                    const char *name, const char *write_err);
    void *ctx;
} a4w4_run_loop;

/* Run this shard's items not already in p->done, each into the stream p->st as it ends, then
 * close the stream. A golden bundle that is bad input is recorded (its failing entry says
 * why), counted in p->nbad with the first message in p->first_bad, and the loop goes on.
 * Returns A4W4_ST_OK; A4W4_ST_IO after a failed stream write (reported through on_item);
 * else the status of the item that stopped the run with its message in err. *count: this
 * shard's items reached. */
a4w4_hstatus a4w4_run_items(a4w4_run_plan *p, const a4w4_run_settings *s, const a4w4_run_loop *l,
                            size_t *count, char *err, size_t errlen);

/* This process's stages into p->doc's "stages" (seconds; informational: a resumed run's
 * earlier cases are not in them), wall_s up to now; and into p->doc's "budget" the plan as the
 * run kept it: cases_full and cases_sampled after the cases held back (cases_held_back), the
 * wall its full checks took (full_seconds) and their estimates (full_estimated_seconds). */
void a4w4_run_add_stages(a4w4_run_plan *p);

/* save_dir/manifest.json (a4w4-operands/1, gen/export.h) listing every bundle p->doc's
 * entries saved (each once), so that python -m a4w4check.external --ops DIR runs them.
 * *n: bundles listed; *failed: some failing entry could not be saved (its note says why).
 * A4W4_OK, or -1 with err ("out of memory", or the writer's message). */
int a4w4_run_save_manifest(const a4w4_run_plan *p, const char *save_dir, size_t *n,
                           int *failed, char *err, size_t errlen);

/* Release the plan's matrix, budget and documents (not the backends, not the lock). */
void a4w4_run_plan_free(a4w4_run_plan *p);

#endif
