/* run_plan.c — the steps of `run` between its options and its documents (run_plan.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "environment.h"
#include "export.h"
#include "fsutil.h"
#include "jsontext.h"
#include "results.h"
#include "run_plan.h"
#include "verify_capture.h"

/* The one entry of a --captures DIR that holds no capture bundle (matrix.h's
 * A4W4_CAPTURES_NONE): verdict "skip", the note naming dir. A4W4_ST_OK or A4W4_ST_NOMEM. */
static a4w4_hstatus run_captures_none(const char *dir, a4w4_entry_list *out, char *err,
                                      size_t errlen)
{
    a4w4_entry_result *e = a4w4_entry_list_add(out);
    if (!e) {
        snprintf(err, errlen, "--captures %s: out of memory for the results", dir);
        return A4W4_ST_NOMEM;
    }
    a4w4_entry_identity(e, A4W4_ENTRY_BYTES, A4W4_CAPTURES_NONE, 0, 0, 0, "capture", 0,
                        "capture", "n/a");
    e->verdict = A4W4_VERDICT_SKIP;
    e->time_ms = 0;
    snprintf(e->note, sizeof e->note, "--captures %s holds no capture bundle (*.safetensors, "
             "subdirectories included): nothing was judged", dir);
    return A4W4_ST_OK;
}

void a4w4_run_plan_init(a4w4_run_plan *p)
{
    memset(p, 0, sizeof *p);
    p->t_start = a4w4_now();
    p->st.fd = -1;
    p->lock_fd = -1;
}

int a4w4_run_plan_items(a4w4_run_plan *p, const a4w4_run_source *src, char *err, size_t errlen)
{
    int mr = src->nbundles || src->captures_only
                 ? a4w4_matrix_load_bundles(&p->m, src->bundles, src->nbundles, err, errlen)
                 : a4w4_matrix_load(&p->m, src->set, src->cases_path, src->golden_dir, err,
                                    errlen);
    if (!mr && src->captures_only && !src->nbundles) /* the captures alone, no case */
        snprintf(p->m.set, sizeof p->m.set, "captures");
    if (!mr && src->captures_dir)
        mr = a4w4_matrix_add_captures(&p->m, src->captures_dir, err, errlen);
    if (!mr && src->nsel)
        mr = a4w4_matrix_select(&p->m, src->sel, src->nsel, err, errlen);
    return mr;
}

int a4w4_run_plan_shard(a4w4_run_plan *p, const a4w4_run_settings *s)
{
    p->total_items = a4w4_matrix_items(&p->m);
    for (size_t k = 0; k < p->total_items; k++) {
        int in = a4w4_matrix_in_shard(&p->m, k, s->shard_i, s->shard_n);
        if (in < 0)
            return A4W4_ENOMEM;
        p->mine += (size_t)in;
    }
    return A4W4_OK;
}

int a4w4_run_plan_budget(a4w4_run_plan *p, const a4w4_run_settings *s, char *note,
                         size_t notelen)
{
    *note = '\0';
    if (s->full || s->budget_s <= 0)
        return A4W4_OK;
    a4w4_runner r = {.backends = p->bk, .nbackends = p->nb, .dev = p->dev};
    if (!a4w4_budget_calibrate(&r, &p->rates, note, notelen)) { /* else the constant model */
        p->have_rates = 1;
        r.rates = &p->rates;
    }
    uint8_t *mine = calloc(p->m.ncases ? p->m.ncases : 1, 1);
    if (!mine)
        return A4W4_ENOMEM;
    for (size_t k = 0; k < p->m.ncases; k++)
        mine[k] = a4w4_matrix_in_shard(&p->m, k, s->shard_i, s->shard_n) == 1;
    int rc = a4w4_budget_plan_make(&r, p->m.cases, p->m.ncases, mine, s->budget_s, &p->budget);
    free(mine);
    return rc ? A4W4_ENOMEM : A4W4_OK;
}

int a4w4_run_item_names(const a4w4_run_plan *p, char (**store)[160], const char ***names,
                        size_t *n)
{
    *n = a4w4_matrix_items(&p->m);
    *store = malloc((*n ? *n : 1) * sizeof **store);
    *names = malloc((*n ? *n : 1) * sizeof **names);
    if (!*store || !*names)
        return A4W4_ENOMEM;
    for (size_t k = 0; k < *n; k++) {
        a4w4_matrix_item_name(&p->m, k, (*store)[k], sizeof (*store)[k]);
        (*names)[k] = (*store)[k];
    }
    return A4W4_OK;
}

/* What the budget and the judge are (informational, not part of the identity): the rates
 * measured, the cases checked in full and sampled on the host, the device judge. */
static void header_budget(cJSON *header, const a4w4_run_plan *p, const a4w4_run_settings *s)
{
    cJSON *b = cJSON_AddObjectToObject(header, "budget");
    if (p->budget.full) {
        cJSON_AddNumberToObject(b, "cases_full", (double)p->budget.nfull);
        cJSON_AddNumberToObject(b, "cases_sampled", (double)p->budget.nsampled);
        if (p->budget.ndevice) /* every entry judged on the device: no host check bought */
            cJSON_AddNumberToObject(b, "cases_device", (double)p->budget.ndevice);
        cJSON_AddNumberToObject(b, "planned_seconds", p->budget.planned_s);
    }
    if (p->have_rates) {
        cJSON_AddNumberToObject(b, "calibration_seconds", p->rates.calibrate_s);
        cJSON_AddNumberToObject(b, "oracle_gmac_per_s", 1e-9 / p->rates.oracle_s_per_mac);
    }
    int whole = 0; /* a backend that holds every output (bundle:): every case checked whole */
    for (size_t i = 0; i < p->nb; i++)
        whole |= p->bk[i].type && p->bk[i].type->full_outputs;
    cJSON_AddStringToObject(b, "rule", s->full ? "every output (--full)"
                                   : whole ? "every output (a backend holding every output: "
                                             "bundle; no budget applies to the cases it holds)"
                                   : s->budget_s <= 0 ? "sampled above 2^26 MACs"
                                   : p->have_rates ? "whole-run budget at measured rates"
                                                   : "whole-run budget at built-in rates");
    cJSON_AddStringToObject(header, "judge", p->dev ? p->dev->describe(p->dev->self) : "host");
}

/* "backend_files": the files of each backend whose type runs them, FNV-1a 64: a plugin's
 * library (arg_is_library: its bytes), a bundle directory (arg_is_outputs: its files' names
 * and bytes), so that --resume and merge refuse results of another build of the library, or
 * of other outputs, under the same name (part of the identity, harness/io/stream.c). Left out
 * when no backend runs such files. */
static void header_backend_files(cJSON *header, const a4w4_run_plan *p)
{
    cJSON *files = NULL;
    for (size_t i = 0; i < p->nb; i++) {
        const char *arg = strchr(p->bk[i].name, ':');
        const a4w4_backend_type *t = p->bk[i].type;
        if (!t || !(t->arg_is_library || t->arg_is_outputs) || !arg)
            continue;
        char h[20];
        if (t->arg_is_library)
            a4w4_file_fnv1a64(arg + 1, h);
        else
            a4w4_dir_fnv1a64(arg + 1, h);
        if (!files)
            files = cJSON_AddObjectToObject(header, "backend_files");
        cJSON_AddStringToObject(files, p->bk[i].name, h);
    }
}

cJSON *a4w4_run_header(const a4w4_run_plan *p, const a4w4_run_settings *s,
                       void (*contracts)(cJSON *header, const a4w4_backend *bk, size_t n))
{
    char hex[32];
    snprintf(hex, sizeof hex, "%016llx", p->m.hash);
    cJSON *header = cJSON_CreateObject();
    cJSON_AddStringToObject(header, "schema", A4W4_RESULTS_SCHEMA);
    cJSON_AddStringToObject(header, "tool", "a4w4check");
    cJSON_AddStringToObject(header, "tool_version", A4W4_TOOL_VERSION);
    cJSON_AddStringToObject(header, "set", p->m.set);
    cJSON_AddStringToObject(header, "cases_file", p->m.cases_path);
    cJSON_AddStringToObject(header, "matrix_hash", hex);
    char shard[32];
    snprintf(shard, sizeof shard, "%u/%u", s->shard_i, s->shard_n);
    cJSON_AddStringToObject(header, "shard", shard);
    cJSON_AddBoolToObject(header, "full", s->full);
    /* 0: no budget (sampled above 2^26 MACs, or every output with --full); contracts §4.1 */
    cJSON_AddNumberToObject(header, "budget_seconds", s->budget_s);
    /* contracts §1: the reading of E8M0 code 0 the GEMM entries are judged under */
    cJSON_AddStringToObject(header, "e8m0_code0", s->code0);
    cJSON *bl = cJSON_AddArrayToObject(header, "backends");
    cJSON_AddItemToArray(bl, cJSON_CreateString("oracle"));
    contracts(header, p->bk, p->nb);
    for (size_t i = 0; i < p->nb; i++)
        cJSON_AddItemToArray(bl, cJSON_CreateString(p->bk[i].name));
    header_backend_files(header, p);
    if (s->upstream_version)
        cJSON_AddStringToObject(header, "upstream_version", s->upstream_version);
    cJSON_AddNumberToObject(header, "matrix_items", (double)p->total_items);
    cJSON_AddNumberToObject(header, "shard_items", (double)p->mine);
    header_budget(header, p, s);
    a4w4_environment_json(header); /* compiler, commit, host, date, GPU, tables used */
    a4w4_json_text_guard(header);   /* a path's raw bytes: the stream stays JSON too */
    return header;
}

/* Run matrix item k into *entries (its results entries as JSON). Returns its failing
 * entries, or -1 when the run must stop (*st and err set). A golden bundle that is bad input
 * counts as one failure and marks the plan. */
static int run_item(a4w4_run_plan *p, const a4w4_run_loop *l, size_t k, const char *name,
                    cJSON **entries, a4w4_hstatus *st, char *err, size_t errlen)
{
    a4w4_entry_list el = {0};
    size_t nc = p->m.ncases, ng = p->m.nbundles;
    const a4w4_runner *runner = l->runner;
    a4w4_hstatus rs =
        k < nc           ? a4w4_run_case(runner, &p->m.cases[k], &el, err, errlen)
        : k < nc + ng    ? a4w4_run_golden(runner, l->suts, l->nsuts, p->m.bundles[k - nc], &el,
                                           err, errlen)
        : p->m.ncaptures ? a4w4_run_capture(p->m.captures[k - nc - ng], name,
                                            runner->code0_reading, &el, err, errlen)
                         : run_captures_none(p->m.captures_dir, &el, err, errlen);
    if (k >= nc + ng && p->m.ncaptures) /* a capture is judged from its own file: verify reruns it */
        for (size_t i = 0; i < el.n; i++)
            if (el.items[i].verdict == A4W4_VERDICT_FAIL)
                l->verify_repro(p->m.captures[k - nc - ng], el.items[i].repro,
                                sizeof el.items[i].repro);
    int f = (int)a4w4_entry_list_failures(&el);
    *entries = rs == A4W4_ST_NOMEM ? NULL : a4w4_entry_list_json(&el);
    a4w4_entry_list_free(&el);
    if (!*entries && rs != A4W4_ST_NOMEM) {
        rs = A4W4_ST_NOMEM;
        snprintf(err, errlen, "case %s: out of memory for the results", name);
    }
    if (rs == A4W4_ST_BADINPUT && *entries && cJSON_GetArraySize(*entries) > 0) {
        p->bad_input = 1; /* recorded: its failing entry says why; said once at the end */
        if (!p->nbad++)
            snprintf(p->first_bad, sizeof p->first_bad, "%s", err);
        return 1;
    }
    if (rs != A4W4_ST_OK) {
        *st = rs;
        cJSON_Delete(*entries);
        return -1;
    }
    return f;
}

/* Whether item name is already recorded (--resume). */
static int recorded(const a4w4_run_plan *p, const char *name)
{
    int skip = 0;
    const cJSON *dn;
    cJSON_ArrayForEach(dn, p->done) skip |= !strcmp(dn->valuestring, name);
    return skip;
}

/* The cases the runner prepares ahead while item k runs (a4w4_runner.prefetch): the next
 * case items of this shard not yet recorded, in order, at most max (<= A4W4_PREFETCH_MAX)
 * into next[]; their number. */
static size_t cases_after(a4w4_run_plan *p, const a4w4_run_settings *s, size_t k,
                          size_t max, const a4w4_case **next)
{
    char name[160];
    size_t n = 0;
    for (size_t j = k + 1; j < p->m.ncases && n < max; j++) {
        if (a4w4_matrix_in_shard(&p->m, j, s->shard_i, s->shard_n) != 1)
            continue;
        a4w4_matrix_item_name(&p->m, j, name, sizeof name);
        if (!recorded(p, name))
            next[n++] = &p->m.cases[j];
    }
    return n;
}

a4w4_hstatus a4w4_run_items(a4w4_run_plan *p, const a4w4_run_settings *s, const a4w4_run_loop *l,
                            size_t *count, char *err, size_t errlen)
{
    int fails = 0;
    a4w4_hstatus st = A4W4_ST_OK;
    *count = 0;
    double t_mark = a4w4_now(); /* the wall up to here is in the table */
    p->stages.setup_s = t_mark - p->t_start; /* plan, calibration, header, stream */
    for (size_t k = 0; k < p->total_items && st == A4W4_ST_OK; k++) {
        if (a4w4_matrix_in_shard(&p->m, k, s->shard_i, s->shard_n) != 1)
            continue;
        ++*count;
        char name[160], werr[1024];
        a4w4_matrix_item_name(&p->m, k, name, sizeof name);
        if (recorded(p, name))
            continue;
        cJSON *entries = NULL;
        const double before = a4w4_stage_sum(&p->stages), t_item = a4w4_now();
        if (k < p->m.ncases) { /* each case's full check decided before it is prepared */
            a4w4_budget_hold(&p->budget, &p->m.cases[k]);
            if (l->runner->prefetch) { /* prepared while this one runs */
                const a4w4_case *next[A4W4_PREFETCH_MAX];
                const size_t n = cases_after(p, s, k, a4w4_prefetch_depth(l->runner->prefetch), next);
                for (size_t i = 0; i < n; i++)
                    a4w4_budget_hold(&p->budget, next[i]);
                a4w4_prefetch_next(l->runner->prefetch, next, n);
            }
        }
        int f = run_item(p, l, k, name, &entries, &st, err, errlen);
        if (f < 0)
            break;
        if (k < p->m.ncases)
            a4w4_budget_spent(&p->budget, &p->m.cases[k], a4w4_now() - t_item);
        fails += f;
        double tw = a4w4_now();
        int wrc = a4w4_stream_case(&p->st, name, entries, werr, sizeof werr);
        p->stages.write_s += a4w4_now() - tw;
        if (wrc)
            st = A4W4_ST_IO;
        cJSON_Delete(entries);
        /* what the runner's stages did not cover since the last item was accounted: a case's
         * annotation, results line and teardown, the previous progress line, a skipped
         * (--resume) item; a bundle's or capture's whole check. Before on_item, so that the
         * progress line's table holds this item and sums to its wall. */
        const double now = a4w4_now(), rest = now - t_mark - (a4w4_stage_sum(&p->stages) - before);
        *(k < p->m.ncases ? &p->stages.record_s : &p->stages.bundles_s) += rest > 0 ? rest : 0;
        t_mark = now;
        p->t_accounted = now;
        l->on_item(l->ctx, p, *count, fails, name, wrc ? werr : NULL);
    }
    a4w4_stream_close(&p->st);
    p->t_items_end = a4w4_now();
    p->stages.record_s += p->t_items_end - t_mark; /* the last progress line, the stream closed */
    return st;
}

/* The budget as the run kept it (docs/cli/run.md "Sampling and the budget"): the header's
 * plan made at the start, updated with the cases held back from a full check to keep the
 * budget, and the wall the cases checked in full took against their estimates. */
static void add_budget_held(a4w4_run_plan *p)
{
    cJSON *b = cJSON_GetObjectItemCaseSensitive(p->doc, "budget");
    if (!p->budget.full || !cJSON_IsObject(b))
        return;
    cJSON_ReplaceItemInObjectCaseSensitive(b, "cases_full",
                                           cJSON_CreateNumber((double)p->budget.nfull));
    cJSON_ReplaceItemInObjectCaseSensitive(b, "cases_sampled",
                                           cJSON_CreateNumber((double)p->budget.nsampled));
    cJSON_AddNumberToObject(b, "cases_held_back", (double)p->budget.nheld);
    cJSON_AddNumberToObject(b, "full_seconds", p->budget.spent_s);
    cJSON_AddNumberToObject(b, "full_estimated_seconds", p->budget.spent_est_s);
}

void a4w4_run_add_stages(a4w4_run_plan *p)
{
    a4w4_stage_times *t = &p->stages;
    const double now = a4w4_now();
    if (p->t_items_end > 0) /* the stream read back, the ledger, the document's verdict */
        t->finish_s = now - p->t_items_end;
    const double wall = now - p->t_start;
    add_budget_held(p);
    cJSON *st = cJSON_AddObjectToObject(p->doc, "stages");
    cJSON_AddNumberToObject(st, "setup_s", t->setup_s);
    cJSON_AddNumberToObject(st, "generate_s", t->generate_s);
    cJSON_AddNumberToObject(st, "judge_s", t->judge_s);
    cJSON_AddNumberToObject(st, "kernels_s", t->kernels_s);
    cJSON_AddNumberToObject(st, "backend_runs_s", t->backend_runs_s);
    cJSON_AddNumberToObject(st, "variant_runs_s", t->variant_runs_s);
    cJSON_AddNumberToObject(st, "host_oracle_s", t->host_oracle_s);
    cJSON_AddNumberToObject(st, "record_s", t->record_s);
    cJSON_AddNumberToObject(st, "bundles_s", t->bundles_s);
    cJSON_AddNumberToObject(st, "write_s", t->write_s);
    cJSON_AddNumberToObject(st, "finish_s", t->finish_s);
    cJSON_AddNumberToObject(st, "other_s", wall - a4w4_stage_sum(t));
    cJSON_AddNumberToObject(st, "prefetch_s", t->prefetch_s);
    cJSON_AddNumberToObject(st, "wall_s", wall);
    cJSON_AddNumberToObject(st, "outputs_device", t->outputs_device);
    cJSON_AddNumberToObject(st, "outputs_host", t->outputs_host);
    cJSON_AddNumberToObject(st, "oracle_outputs", t->oracle_outputs);
    cJSON_AddNumberToObject(st, "w_device_bytes", t->w_device_bytes);
    cJSON_AddNumberToObject(st, "w_host_bytes", t->w_host_bytes);
}

int a4w4_run_save_manifest(const a4w4_run_plan *p, const char *save_dir, size_t *n,
                           int *failed, char *err, size_t errlen)
{
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(p->doc, "cases"), *e;
    size_t cap = (size_t)cJSON_GetArraySize(cases) + 1;
    const char **names = calloc(cap, sizeof *names), **why = calloc(cap, sizeof *why);
    *n = 0;
    *failed = 0;
    cJSON_ArrayForEach(e, cases) {
        const cJSON *sv = cJSON_GetObjectItemCaseSensitive(e, "saved");
        const char *note = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "note"));
        *failed |= note && strstr(note, "--save-failing: ") != NULL;
        if (!cJSON_IsString(sv) || !names)
            continue;
        int dup = 0;
        for (size_t i = 0; i < *n && !dup; i++)
            dup = !strcmp(names[i], sv->valuestring);
        if (!dup)
            names[(*n)++] = sv->valuestring;
    }
    char hash[32];
    snprintf(hash, sizeof hash, "%016llx", p->m.hash);
    a4w4_export_opts eo = {hash, A4W4_TOOL_VERSION, 0};
    int rc = 0;
    if (!names || !why) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    } else if (a4w4_mkdir_p(save_dir, err, errlen) || /* nothing saved: DIR not made yet */
               a4w4_export_manifest(save_dir, p->m.set, p->m.cases_path, "1/1", &eo, names, why,
                                    *n, 0, err, errlen)) {
        rc = -1;
    }
    free(names);
    free(why);
    return rc;
}

void a4w4_run_plan_free(a4w4_run_plan *p)
{
    a4w4_budget_plan_free(&p->budget);
    a4w4_matrix_free(&p->m);
    cJSON_Delete(p->header);
    cJSON_Delete(p->done);
    cJSON_Delete(p->doc);
}
