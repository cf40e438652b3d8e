/* run_render.c — what `run` says while and after it runs (run_render.h). */
#include <stdio.h>
#include <stdlib.h>

#include "a4w4check.h"
#include "ledger.h"
#include "repro.h"
#include "results.h"
#include "run_render.h"

#define FAILURES_SHOWN 5

void a4w4_run_on_item(void *ctx, const a4w4_run_plan *p, size_t count, int fails,
                      const char *name, const char *write_err)
{
    a4w4_run_progress *rp = ctx;
    rp->fails = fails;
    if (write_err) {
        a4w4_errorf("run: %s", write_err);
        rp->write_failed = 1;
    }
    a4w4_progress_item(&rp->pg, count, p->mine, fails, name, 0);
    if (!rp->quiet && (count % 100 == 0 || count == p->mine)) {
        /* the table and the wall it sums to, both up to this item (a4w4_run_plan.t_accounted) */
        const a4w4_stage_times *t = &p->stages;
        const double wall = p->t_accounted - p->t_start, sum = a4w4_stage_sum(t);
        fprintf(stderr, "a4w4check run: stages after %zu items: setup %.1f s, generate %.1f s, "
                "judge %.1f s, backends %.1f s (their own runs %.1f s, pad variants' runs "
                "%.1f s), host oracles %.1f s, record %.1f s, bundles %.1f s, write %.1f s = "
                "%.1f s of %.1f s wall (other %.1f s); %.3g outputs on the device, %.3g on the "
                "host\n", count, t->setup_s, t->generate_s, t->judge_s, t->kernels_s,
                t->backend_runs_s, t->variant_runs_s, t->host_oracle_s, t->record_s,
                t->bundles_s, t->write_s, sum, wall, wall - sum,
                t->outputs_device, t->outputs_host);
    }
}

/* --save-failing DIR: DIR/manifest.json listing every bundle saved (commands/run_plan.h).
 * Returns the exit code. */
static int write_saved_manifest(const a4w4_run_end *o, const a4w4_run_plan *p)
{
    char err[1024];
    size_t n;
    int failed;
    if (a4w4_run_save_manifest(p, o->save_dir, &n, &failed, err, sizeof err)) {
        a4w4_errorf("run: --save-failing %s", err);
        return A4W4_EXIT_IO;
    }
    if (failed) {
        a4w4_errorf("run: --save-failing %s: some failing entries could not be saved (their "
                    "notes say why)", o->save_dir);
        return A4W4_EXIT_IO;
    }
    if (!o->quiet)
        fprintf(stderr, "a4w4check run: %zu failing entr%s saved in %s\n", n,
                n == 1 ? "y" : "ies", o->save_dir);
    return A4W4_EXIT_PASS;
}

/* Even with --quiet: the verdict under each contract that departs from the reference numerics
 * (results.json's "contract_departures", contracts §4.2), never silent (an INCOMPLETE verdict
 * line carries them in its reason). */
static void print_departures(const cJSON *doc, a4w4_doc_verdict v)
{
    static const char *const word[3] = {"PASS", "FAIL", "INCOMPLETE"};
    const cJSON *d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(doc, "contract_departures"))
        if (cJSON_IsString(d))
            fprintf(stderr, "a4w4check run: %s under a contract that %s (%s)\n", word[v],
                    d->valuestring, d->string);
}

int a4w4_run_finish(a4w4_run_plan *p, const a4w4_run_end *o)
{
    char err[1024];
    cJSON *hdr2 = NULL;
    a4w4_stream_tally t;
    p->doc = a4w4_stream_load_items(o->out_dir, &hdr2, &t, err, sizeof err);
    a4w4_completeness c = {p->mine, t.items}; /* distinct items, each with all its entries */
    cJSON_Delete(hdr2);
    if (!p->doc) {
        a4w4_errorf("run: %s", err);
        return A4W4_EXIT_IO;
    }
    int krc = a4w4_apply_ledger("run", o->known, p->doc);
    if (krc)
        return krc;
    a4w4_doc_verdict v = a4w4_results_judge(p->doc, &c);
    a4w4_run_add_stages(p);
    if (a4w4_results_write(p->doc, o->out_dir, err, sizeof err)) {
        a4w4_errorf("run: %s", err);
        return A4W4_EXIT_IO;
    }
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(p->doc, "counts");
    if (!o->quiet)
        fprintf(stderr, "a4w4check run: %d failing entries of %d; %s/results.json and "
                "%s/summary.md written\n",
                cJSON_GetObjectItemCaseSensitive(counts, "fail")->valueint,
                cJSON_GetObjectItemCaseSensitive(counts, "entries")->valueint, o->out_dir,
                o->out_dir);
    /* even with --quiet: the failures (with their repro commands) and why it is incomplete */
    a4w4_print_failures("run", p->doc, FAILURES_SHOWN);
    a4w4_print_known("run", p->doc, FAILURES_SHOWN);
    if (v == A4W4_DOC_INCOMPLETE)
        a4w4_errorf("run: verdict INCOMPLETE: %s",
                    cJSON_GetObjectItemCaseSensitive(p->doc, "verdict_reason")->valuestring);
    if (p->bad_input) { /* one line, however many items the same refusal hit */
        if (p->nbad > 1)
            a4w4_errorf("run: %s (and %zu more items refused or bad input: results.json "
                        "names each)", p->first_bad, p->nbad - 1);
        else
            a4w4_errorf("run: %s", p->first_bad);
        return A4W4_EXIT_BADINPUT;
    }
    if (v != A4W4_DOC_INCOMPLETE) /* an INCOMPLETE verdict line says them already */
        print_departures(p->doc, v);
    if (o->save_dir && write_saved_manifest(o, p) != A4W4_EXIT_PASS)
        return A4W4_EXIT_IO;
    return v == A4W4_DOC_FAIL ? A4W4_EXIT_MISMATCH
           : v == A4W4_DOC_INCOMPLETE ? A4W4_EXIT_INCOMPLETE
                                      : A4W4_EXIT_PASS;
}
