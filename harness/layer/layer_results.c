/* layer_results.c — the results entries, header and counts of `layers` (layer_results.h). */
#include "layer_results.h"

#include <stdio.h>

#include "entry.h"
#include "stream.h"

static const char *kind_name(a4w4_input_kind k)
{
    switch (k) {
    case A4W4_INPUT_TENSOR_2D: return "2d";
    case A4W4_INPUT_TENSOR_3D: return "3d";
    case A4W4_INPUT_TUPLE2: return "tuple2";
    case A4W4_INPUT_TUPLE3: return "tuple3";
    case A4W4_INPUT_TUPLE5: return "tuple5";
    default: return "tuple";
    }
}

/* The first mismatch of r, as `run` writes first_mismatches. */
static void add_first_mismatch(cJSON *fm, const a4w4_layer_case_result *r)
{
    cJSON *m = cJSON_CreateObject();
    char h[16];
    size_t cols = r->kind == A4W4_INPUT_TUPLE5 ? 1 : r->N;
    cJSON_AddStringToObject(m, "tensor", r->kind == A4W4_INPUT_TUPLE5 ? "c1|c2" : "y");
    cJSON_AddNumberToObject(m, "row", (double)(r->first_index / cols));
    cJSON_AddNumberToObject(m, "col", (double)(r->first_index % cols));
    snprintf(h, sizeof h, "0x%04x", r->first_got);
    cJSON_AddStringToObject(m, "got", h);
    snprintf(h, sizeof h, "0x%04x", r->first_expected);
    cJSON_AddStringToObject(m, "expected", h);
    cJSON_AddItemToArray(fm, m);
}

/* The layer fields beside `run`'s. */
static void add_layer_fields(cJSON *e, const a4w4_layer_case_result *r)
{
    cJSON_AddStringToObject(e, "decision", a4w4_decision_name(r->got.decision));
    cJSON_AddStringToObject(e, "reason", a4w4_policy_reason_name(r->got.reason));
    cJSON_AddStringToObject(e, "expected_decision", a4w4_decision_name(r->expected.decision));
    cJSON_AddStringToObject(e, "expected_reason", a4w4_policy_reason_name(r->expected.reason));
    cJSON_AddStringToObject(e, "layer_decision", a4w4_decision_name(r->layer_decision));
    cJSON_AddStringToObject(e, "input_kind", kind_name(r->kind));
    cJSON_AddBoolToObject(e, "bias", r->bias);
    cJSON_AddBoolToObject(e, "flag", r->flag_on);
    cJSON_AddStringToObject(e, "gfx", r->gfx);
    cJSON_AddStringToObject(e, "dtype", r->dtype == A4W4_IN_BF16 ? "bf16" : "fp32");
    cJSON_AddBoolToObject(e, "computed", r->computed);
    cJSON_AddNumberToObject(e, "status", r->status);
    cJSON_AddNumberToObject(e, "weight_preshuffles", r->preshuffles);
    cJSON_AddNumberToObject(e, "weight_swizzles", r->swizzles);
}

cJSON *a4w4_layer_entry(const a4w4_layer_case_result *r, const a4w4_layer_ops *p,
                        const a4w4_layer_group *g)
{
    char regime[32];
    snprintf(regime, sizeof regime, "normal:%s",
             r->expected.layer_asm ? "round_up" : "even");
    cJSON *e = a4w4_entry_new(r->name, r->M, r->N, r->K, regime, g->seed, p->name, p->contract);
    cJSON_AddNumberToObject(e, "checked_outputs", (double)r->checked_outputs);
    cJSON_AddBoolToObject(e, "sampled", 0);
    cJSON_AddStringToObject(e, "verdict", r->pass ? "pass" : "fail");
    cJSON_AddNumberToObject(e, "mismatches", (double)r->mismatches);
    cJSON_AddNumberToObject(e, "unwritten", (double)r->unwritten);
    cJSON_AddNumberToObject(e, "max_ulp", r->max_ulp == (unsigned)-1 ? -1.0 : (double)r->max_ulp);
    cJSON *fm = cJSON_AddArrayToObject(e, "first_mismatches");
    if (r->computed && r->mismatches)
        add_first_mismatch(fm, r);
    cJSON_AddNumberToObject(e, "time_ms", r->time_ms);
    cJSON_AddNumberToObject(e, "exact_regime_outputs", 0);
    cJSON_AddBoolToObject(e, "ambiguous", 0);
    cJSON_AddStringToObject(e, "note", r->note);
    cJSON *par = r->has_parity ? a4w4_parity_diff_json(&r->parity) : NULL;
    if (par)
        cJSON_AddItemToObject(e, "parity", par);
    add_layer_fields(e, r);
    return e;
}

cJSON *a4w4_layer_header(size_t qwen_n, size_t ngroups, const a4w4_layer_ops *const *pairs,
                         size_t npairs)
{
    char desc[128], hex[32], shard[] = "1/1";
    snprintf(desc, sizeof desc, "layers/1 qwen_n=%zu groups=%zu", qwen_n, ngroups);
    snprintf(hex, sizeof hex, "%016llx", a4w4_hash_str(desc, 0xCBF29CE484222325ull));
    cJSON *header = cJSON_CreateObject();
    cJSON_AddStringToObject(header, "schema", A4W4_RESULTS_SCHEMA);
    cJSON_AddStringToObject(header, "tool", "a4w4check");
    cJSON_AddStringToObject(header, "tool_version", A4W4_TOOL_VERSION);
    cJSON_AddStringToObject(header, "set", "layers");
    cJSON_AddStringToObject(header, "cases_file", desc);
    cJSON_AddStringToObject(header, "matrix_hash", hex);
    cJSON_AddStringToObject(header, "shard", shard);
    cJSON_AddBoolToObject(header, "full", 1);
    cJSON_AddNumberToObject(header, "budget_seconds", 0);
    cJSON *bl = cJSON_AddArrayToObject(header, "backends");
    cJSON *bc = cJSON_AddObjectToObject(header, "contracts");
    for (size_t i = 0; i < npairs; i++) {
        cJSON_AddItemToArray(bl, cJSON_CreateString(pairs[i]->name));
        cJSON_AddStringToObject(bc, pairs[i]->name, pairs[i]->contract);
    }
    cJSON_AddNumberToObject(header, "matrix_items",
                            (double)(ngroups * A4W4_LAYER_CASES_PER_GROUP));
    cJSON_AddNumberToObject(header, "shard_items", (double)(ngroups * A4W4_LAYER_CASES_PER_GROUP));
    return header;
}

void a4w4_layer_count(a4w4_layer_counts *n, const a4w4_layer_case_result *r)
{
    n->passed += r->pass;
    n->failed += !r->pass;
    n->computed += r->computed;
    n->rejected += !r->computed && r->expected.decision == A4W4_DECIDE_REJECT;
    n->refused += !r->computed && r->expected.decision != A4W4_DECIDE_REJECT;
}
