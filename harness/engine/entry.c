/* entry.c — results entries as C values and their JSON form (see entry.h). */
#include "entry.h"

#include "a4w4_hazard.h"
#include "grow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *a4w4_verdict_name(a4w4_verdict v)
{
    switch (v) {
    case A4W4_VERDICT_PASS: return "pass";
    case A4W4_VERDICT_FAIL: return "fail";
    case A4W4_VERDICT_NA: return "n/a";
    case A4W4_VERDICT_AMBIGUOUS: return "ambiguous";
    default: return "skip";
    }
}

void a4w4_mismatch_hex(uint32_t bits, int elem_bytes, char buf[16])
{
    snprintf(buf, 16, "0x%0*x", elem_bytes * 2, (unsigned)bits);
}

a4w4_entry_result *a4w4_entry_list_add(a4w4_entry_list *l)
{
    if (A4W4_GROW(l->items, l->n + 1, l->cap, 8))
        return NULL;
    memset(&l->items[l->n], 0, sizeof l->items[0]);
    return &l->items[l->n++];
}

size_t a4w4_entry_list_failures(const a4w4_entry_list *l)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += l->items[i].verdict == A4W4_VERDICT_FAIL;
    return n;
}

void a4w4_entry_list_free(a4w4_entry_list *l)
{
    free(l->items);
    memset(l, 0, sizeof *l);
}

void a4w4_entry_identity(a4w4_entry_result *e, a4w4_entry_kind kind, const char *name, size_t M,
                         size_t N, size_t K, const char *regime, unsigned long long seed,
                         const char *backend, const char *contract)
{
    e->kind = kind;
    snprintf(e->name, sizeof e->name, "%s", name);
    e->M = M;
    e->N = N;
    e->K = K;
    snprintf(e->regime, sizeof e->regime, "%s", regime);
    e->seed = seed;
    snprintf(e->backend, sizeof e->backend, "%s", backend);
    snprintf(e->contract, sizeof e->contract, "%s", contract);
}

static a4w4_verdict verdict_of_check(a4w4_check_verdict v)
{
    return v == A4W4_CHECK_PASS ? A4W4_VERDICT_PASS
         : v == A4W4_CHECK_FAIL ? A4W4_VERDICT_FAIL : A4W4_VERDICT_NA;
}

void a4w4_entry_set_check(a4w4_entry_result *e, const a4w4_check *c)
{
    e->checked = c->checked;
    e->verdict = verdict_of_check(c->verdict);
    e->mismatches = c->mismatches;
    e->max_ulp = c->max_ulp;
    e->nfirst = 0;
    if (c->verdict == A4W4_CHECK_FAIL && c->mismatches) {
        a4w4_mismatch *m = &e->first[e->nfirst++];
        snprintf(m->tensor, sizeof m->tensor, "%s", c->subject);
        m->row = c->first_row;
        m->col = c->first_col;
        m->got = c->got;
        m->expected = c->expected;
        m->elem_bytes = c->elem_bytes;
    }
    snprintf(e->note, sizeof e->note, "%s", c->note);
}

void a4w4_entry_format(const a4w4_entry_result *e, const char *prefix, char *buf, size_t len)
{
    static const char *const word[5] = {"PASS", "FAIL", "N/A", "SKIP", "AMBIGUOUS"};
    unsigned v = (unsigned)e->verdict;
    size_t k = e->checked || e->verdict != A4W4_VERDICT_FAIL /* never "FAIL .. 0 checked" */
                   ? (size_t)snprintf(buf, len, "%s %s: %s, %zu checked", word[v < 5 ? v : 3],
                                      prefix, e->contract, e->checked)
                   : (size_t)snprintf(buf, len, "FAIL %s: %s, no output compared", prefix,
                                      e->contract);
    if (k < len && e->nfirst) {
        const a4w4_mismatch *m = &e->first[0];
        char got[16], exp[16];
        a4w4_mismatch_hex(m->got, m->elem_bytes, got);
        a4w4_mismatch_hex(m->expected, m->elem_bytes, exp);
        k += (size_t)snprintf(buf + k, len - k, ", first mismatch %s (%zu, %zu): got %s "
                              "expected %s, %zu mismatch%s", m->tensor, m->row, m->col, got, exp,
                              e->mismatches, e->mismatches == 1 ? "" : "es");
    }
    if (k < len && e->has_judged) {
        size_t judged = e->judged_bit_exact + e->judged_in_bound;
        k += (size_t)snprintf(buf + k, len - k, " (%zu judged bit for bit, %zu within bound, "
                              "%zu not judged; %zu of the judged match)", e->judged_bit_exact,
                              e->judged_in_bound, e->not_judged,
                              judged - (e->mismatches < judged ? e->mismatches : judged));
    }
    if (k < len && e->note[0])
        snprintf(buf + k, len - k, "; %s", e->note);
}

cJSON *a4w4_entry_new(const char *name, size_t M, size_t N, size_t K, const char *regime,
                      unsigned long long seed, const char *backend, const char *contract)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", name);
    cJSON_AddNumberToObject(e, "M", (double)M);
    cJSON_AddNumberToObject(e, "N", (double)N);
    cJSON_AddNumberToObject(e, "K", (double)K);
    cJSON_AddStringToObject(e, "regime", regime);
    char s[32];
    snprintf(s, sizeof s, "%llu", seed);
    cJSON_AddStringToObject(e, "seed", s);
    cJSON_AddStringToObject(e, "backend", backend);
    cJSON_AddStringToObject(e, "contract", contract);
    return e;
}

static double ulp_json(unsigned max_ulp)
{
    return max_ulp == (unsigned)-1 ? -1.0 : (double)max_ulp;
}

static void add_first_mismatches(cJSON *o, const a4w4_entry_result *e)
{
    cJSON *fm = cJSON_AddArrayToObject(o, "first_mismatches");
    for (size_t i = 0; i < e->nfirst; i++) {
        const a4w4_mismatch *mm = &e->first[i];
        cJSON *m = cJSON_CreateObject();
        char h[16];
        cJSON_AddStringToObject(m, "tensor", mm->tensor);
        cJSON_AddNumberToObject(m, "row", (double)mm->row);
        cJSON_AddNumberToObject(m, "col", (double)mm->col);
        a4w4_mismatch_hex(mm->got, mm->elem_bytes, h);
        cJSON_AddStringToObject(m, "got", h);
        a4w4_mismatch_hex(mm->expected, mm->elem_bytes, h);
        cJSON_AddStringToObject(m, "expected", h);
        cJSON_AddItemToArray(fm, m);
    }
}

/* judged_bit_exact, judged_in_bound, not_judged (GEMM output entries only). */
static void add_judged_fields(cJSON *o, const a4w4_entry_result *e)
{
    if (!e->has_judged)
        return;
    cJSON_AddNumberToObject(o, "judged_bit_exact", (double)e->judged_bit_exact);
    cJSON_AddNumberToObject(o, "judged_in_bound", (double)e->judged_in_bound);
    cJSON_AddNumberToObject(o, "not_judged", (double)e->not_judged);
}

/* [[first, last, mismatches], ...] of map runs. */
static cJSON *ranges_json(const a4w4_map_range *r, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        double v[3] = {(double)r[i].first, (double)r[i].last, (double)r[i].count};
        cJSON_AddItemToArray(a, cJSON_CreateDoubleArray(v, 3));
    }
    return a;
}

/* "mismatch_map" (engine/signature.h): the counts the signature rests on. */
static void add_map(cJSON *o, const a4w4_mismatch_map *m)
{
    cJSON *j = cJSON_AddObjectToObject(o, "mismatch_map");
    cJSON_AddNumberToObject(j, "rows_checked", (double)m->nrows);
    cJSON_AddNumberToObject(j, "cols_checked", (double)m->ncols);
    cJSON_AddNumberToObject(j, "rows_hit", (double)m->rows_hit);
    cJSON_AddNumberToObject(j, "cols_hit", (double)m->cols_hit);
    cJSON_AddNumberToObject(j, "rows_whole", (double)m->rows_whole);
    cJSON_AddNumberToObject(j, "cols_whole", (double)m->cols_whole);
    cJSON_AddItemToObject(j, "rows", ranges_json(m->rows, m->nrow_ranges));
    cJSON_AddBoolToObject(j, "rows_more", m->rows_more);
    cJSON_AddItemToObject(j, "cols", ranges_json(m->cols, m->ncol_ranges));
    cJSON_AddBoolToObject(j, "cols_more", m->cols_more);
    cJSON *k = cJSON_AddObjectToObject(j, "kinds");
    for (int i = 0; i < A4W4_MK_COUNT; i++)
        if (m->kinds[i])
            cJSON_AddNumberToObject(k, a4w4_mismatch_kind_name((a4w4_mismatch_kind)i),
                                    (double)m->kinds[i]);
    cJSON_AddNumberToObject(j, "tiny_expected", (double)m->tiny_expected);
    if (m->row_tile)
        cJSON_AddNumberToObject(j, "row_tile", m->row_tile);
    if (m->col_tile)
        cJSON_AddNumberToObject(j, "col_tile", m->col_tile);
    if (m->row_partial_tile)
        cJSON_AddNumberToObject(j, "row_partial_tile", m->row_partial_tile);
    cJSON *kb = cJSON_AddObjectToObject(j, "k_block");
    cJSON_AddNumberToObject(kb, "tested", (double)m->k_tested);
    cJSON_AddNumberToObject(kb, "explained", (double)m->k_hits);
    if (m->k_block >= 0) {
        cJSON_AddNumberToObject(kb, "index", (double)m->k_block);
        cJSON_AddStringToObject(kb, "how", m->k_doubled ? "counted twice" : "missing");
    }
    cJSON_AddNumberToObject(kb, "code0", (double)m->code0);
    if (m->variant[0])
        cJSON_AddStringToObject(j, "variant", m->variant);
}

/* "signature", "signature_class" and the map of a failing entry. */
static void add_signature(cJSON *o, const a4w4_entry_result *e)
{
    if (!e->signature[0])
        return;
    cJSON_AddStringToObject(o, "signature", e->signature);
    cJSON_AddStringToObject(o, "signature_class", e->signature_class);
    if (e->map.has)
        add_map(o, &e->map);
}

/* "layer", "call_site" of a capture's entry, when the capture names them. */
static void add_layer(cJSON *o, const a4w4_entry_result *e)
{
    if (e->layer[0])
        cJSON_AddStringToObject(o, "layer", e->layer);
    if (e->call_site[0])
        cJSON_AddStringToObject(o, "call_site", e->call_site);
}

/* "tolerance": the peers' criteria on a failing entry's outputs (engine/criteria.h). */
static void add_tolerance(cJSON *o, const a4w4_entry_result *e)
{
    if (!e->ntol)
        return;
    cJSON *t = cJSON_AddObjectToObject(o, "tolerance");
    cJSON_AddNumberToObject(t, "outputs", (double)e->tol_outputs);
    cJSON_AddStringToObject(t, "reference", "the dequantized operands' product: the exact sum "
                            "rounded to fp32, then to bf16 where the criterion casts it");
    cJSON_AddBoolToObject(t, "would_ship", a4w4_criteria_would_ship(e->tol, e->ntol));
    cJSON *a = a4w4_criteria_json(e->tol, e->ntol);
    if (a)
        cJSON_AddItemToObject(t, "criteria", a);
}

/* The fields of an OUTPUTS entry after its identity. */
static void add_outputs_fields(cJSON *o, const a4w4_entry_result *e)
{
    if (e->has_run)
        cJSON_AddNumberToObject(o, "run_ms", e->run_ms);
    if (e->has_y_hash) {
        char hex[24];
        snprintf(hex, sizeof hex, "%016llx", e->y_hash);
        cJSON_AddStringToObject(o, "y_hash", hex);
    }
    if (e->pad_variants)
        cJSON_AddNumberToObject(o, "pad_variants", (double)e->pad_variants);
    if (e->pad_dependent[0])
        cJSON_AddStringToObject(o, "pad_dependent", e->pad_dependent);
    cJSON_AddNumberToObject(o, "checked_outputs", (double)e->checked);
    cJSON_AddBoolToObject(o, "sampled", e->sampled);
    cJSON_AddStringToObject(o, "verdict", a4w4_verdict_name(e->verdict));
    cJSON_AddNumberToObject(o, "mismatches", (double)e->mismatches);
    cJSON_AddNumberToObject(o, "unwritten", (double)e->unwritten);
    cJSON_AddNumberToObject(o, "max_ulp", ulp_json(e->max_ulp));
    if (e->has_bound) {
        cJSON_AddNumberToObject(o, "bound_use", e->bound_use);
        cJSON_AddNumberToObject(o, "bound_ulp_median", e->bound_ulp_median);
        cJSON_AddNumberToObject(o, "bound_ulp_max", e->bound_ulp_max);
        cJSON_AddNumberToObject(o, "bound_vacuous", (double)e->bound_vacuous);
        cJSON_AddNumberToObject(o, "bound_strength",
                                e->bound_weighed ? 1.0 - (double)e->bound_vacuous /
                                                             (double)e->bound_weighed
                                                 : 1.0);
    }
    add_first_mismatches(o, e);
    cJSON_AddNumberToObject(o, "time_ms", e->time_ms);
    if (e->has_cost)
        cJSON_AddNumberToObject(o, "cost_ms", e->cost_ms);
    if (e->has_prep) {
        cJSON_AddNumberToObject(o, "prep_generate_ms", e->prep_generate_ms);
        cJSON_AddNumberToObject(o, "prep_oracles_ms", e->prep_oracles_ms);
    }
    cJSON_AddNumberToObject(o, "exact_regime_outputs", (double)e->exact_regime_outputs);
    add_judged_fields(o, e);
    if (e->ambiguous)
        cJSON_AddBoolToObject(o, "ambiguous", 1);
    if (e->note[0])
        cJSON_AddStringToObject(o, "note", e->note);
    if (e->aborted[0])
        cJSON_AddStringToObject(o, "aborted", e->aborted);
    add_signature(o, e);
    if (e->repro[0])
        cJSON_AddStringToObject(o, "repro", e->repro);
    if (e->saved[0])
        cJSON_AddStringToObject(o, "saved", e->saved);
    if (e->kept[0])
        cJSON_AddStringToObject(o, "kept_output", e->kept);
    if (e->kept_why[0])
        cJSON_AddStringToObject(o, "kept_output_missing", e->kept_why);
    add_layer(o, e);
    add_tolerance(o, e);
}

/* The fields of a BYTES entry after its identity. */
static void add_bytes_fields(cJSON *o, const a4w4_entry_result *e)
{
    cJSON_AddNumberToObject(o, "checked_outputs", (double)e->checked);
    cJSON_AddStringToObject(o, "verdict", a4w4_verdict_name(e->verdict));
    cJSON_AddNumberToObject(o, "mismatches", (double)e->mismatches);
    cJSON_AddNumberToObject(o, "max_ulp", ulp_json(e->max_ulp));
    add_first_mismatches(o, e);
    if (e->note[0])
        cJSON_AddStringToObject(o, "note", e->note);
    cJSON_AddBoolToObject(o, "sampled", e->sampled);
    cJSON_AddNumberToObject(o, "time_ms", e->time_ms);
    if (e->has_cost)
        cJSON_AddNumberToObject(o, "cost_ms", e->cost_ms);
    add_judged_fields(o, e);
    add_signature(o, e);
    if (e->repro[0])
        cJSON_AddStringToObject(o, "repro", e->repro);
    add_layer(o, e);
    add_tolerance(o, e);
}

/* "route", "policy", "hazard" of a generated case (engine/annotate.h). */
static void add_dispatch_fields(cJSON *o, const a4w4_dispatch_facts *f)
{
    cJSON *r = cJSON_AddObjectToObject(o, "route");
    cJSON_AddStringToObject(r, "source", f->source);
    cJSON_AddStringToObject(r, "path", f->path);
    cJSON_AddStringToObject(r, "kernel", f->kernel);
    if (f->has_label)
        cJSON_AddStringToObject(r, "label", f->label);
    else
        cJSON_AddNullToObject(r, "label");
    if (f->tile_m) {
        int tile[2] = {f->tile_m, f->tile_n};
        cJSON_AddItemToObject(r, "tile", cJSON_CreateIntArray(tile, 2));
    } else
        cJSON_AddNullToObject(r, "tile");
    cJSON_AddNumberToObject(r, "split", f->split);
    cJSON_AddBoolToObject(r, "kernel_fits_N", f->kernel_fits_n);
    cJSON_AddNumberToObject(r, "possible_winners", f->winners);
    cJSON_AddNumberToObject(r, "possible_winners_not_fitting_N", f->winners_nofit);
    cJSON *p = cJSON_AddObjectToObject(o, "policy");
    cJSON_AddStringToObject(p, "decision", f->decision);
    cJSON_AddStringToObject(p, "reason", f->reason);
    cJSON_AddStringToObject(o, "hazard", f->hazard);
    cJSON *fb = cJSON_AddArrayToObject(o, "field_bugs");
    size_t nr;
    const a4w4_bug_rule *br = a4w4_bug_rules(&nr);
    for (size_t i = 0; i < nr; i++)
        if (f->bugs & (1u << i))
            cJSON_AddItemToArray(fb, cJSON_CreateString(br[i].id));
}

cJSON *a4w4_entry_json(const a4w4_entry_result *e)
{
    cJSON *o = a4w4_entry_new(e->name, e->M, e->N, e->K, e->regime, e->seed, e->backend,
                              e->contract);
    if (!o)
        return NULL;
    if (e->has_tags)
        cJSON_AddStringToObject(o, "tags", e->tags);
    if (e->kind == A4W4_ENTRY_OUTPUTS)
        add_outputs_fields(o, e);
    else
        add_bytes_fields(o, e);
    if (e->dispatch.has)
        add_dispatch_fields(o, &e->dispatch);
    return o;
}

cJSON *a4w4_entry_list_json(const a4w4_entry_list *l)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < l->n; i++) {
        cJSON *e = a4w4_entry_json(&l->items[i]);
        if (!e || !cJSON_AddItemToArray(a, e)) {
            cJSON_Delete(e);
            cJSON_Delete(a);
            return NULL;
        }
    }
    return a;
}
