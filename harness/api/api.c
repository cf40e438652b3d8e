/* api.c — the public API of a4w4check_api.h over the engine. This file is the one adapter:
 * every call into engine/, gen/, io/ and ref/ made by the library is here (generation: gen/gen;
 * the judgement: runner.h's a4w4_judge_outputs, the runner's own backend judgement; the
 * failing-case bundle: engine/failing), so re-pointing the library at another judge is a
 * change of this file only. Nothing here prints or exits. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "a4w4_layout.h"
#include "a4w4_contract.h"
#include "a4w4_tree.h"
#include "a4w4check_api.h"
#include "casefile.h"
#include "contractfile.h"
#include "failing.h"
#include "gen.h"
#include "entry.h"
#include "itemfile.h"
#include "judge.h"

struct a4w4check_operands {
    a4w4_case c;
    a4w4_sample s; /* every output */
    a4w4_case_data d;
};

int a4w4check_api_version(void) { return A4W4CHECK_API_VERSION; }

const char *a4w4check_tool_version(void) { return A4W4_TOOL_VERSION; }

/* One line into err (errlen may be 0); returns st. */
static a4w4check_status fail(a4w4check_status st, char *err, size_t errlen, const char *fmt,
                             ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return st;
}

/* The a4w4_case of c, checked as a case file's line is (io/casefile.h). */
static a4w4check_status case_of(const a4w4check_case *c, a4w4_case *k, char *err,
                                size_t errlen)
{
    memset(k, 0, sizeof *k);
    if (!c->name || !c->name[0] || strlen(c->name) >= sizeof k->name)
        return fail(A4W4CHECK_EINVAL, err, errlen, "case name: must be 1 to %zu bytes",
                    sizeof k->name - 1);
    if (c->M < 1 || c->N < 1 || c->K < 32 || c->K % 32)
        return fail(A4W4CHECK_EINVAL, err, errlen, "case %s: M=%zu N=%zu K=%zu: M, N >= 1 and "
                    "K a positive multiple of 32", c->name, c->M, c->N, c->K);
    char why[256];
    if (a4w4_case_shape_rule(c->M, c->N, c->K, why, sizeof why))
        return fail(A4W4CHECK_EINVAL, err, errlen, "case %s: %s", c->name, why);
    if (!c->regime || strlen(c->regime) >= sizeof k->regime_text ||
        a4w4_regime_parse(c->regime, &k->regime, &k->mode) != A4W4_ST_OK)
        return fail(A4W4CHECK_EINVAL, err, errlen, "case %s: regime '%.40s': one of exact, "
                    "normal, normal:<scale mode>, wide, special, code0, tiny, range", c->name,
                    c->regime ? c->regime : "(null)");
    snprintf(k->name, sizeof k->name, "%s", c->name);
    snprintf(k->regime_text, sizeof k->regime_text, "%s", c->regime);
    k->M = c->M, k->N = c->N, k->K = c->K, k->seed = c->seed;
    return A4W4CHECK_OK;
}

a4w4check_status a4w4check_generate(const a4w4check_case *c, a4w4check_operands **out,
                                    char *err, size_t errlen)
{
    if (!c || !out)
        return fail(A4W4CHECK_EINVAL, err, errlen, "a4w4check_generate: NULL argument");
    *out = NULL;
    a4w4check_operands *o = calloc(1, sizeof *o);
    if (!o)
        return fail(A4W4CHECK_ENOMEM, err, errlen, "out of memory");
    a4w4check_status st = case_of(c, &o->c, err, errlen);
    if (st != A4W4CHECK_OK) {
        free(o);
        return st;
    }
    if (a4w4_sample_make(c->M, c->N, c->K, c->seed, c->name, 1, &o->s) != A4W4_OK) {
        free(o);
        return fail(A4W4CHECK_ENOMEM, err, errlen, "case %s: out of memory", c->name);
    }
    if (a4w4_case_generate(&o->c, &o->s, &o->d) != A4W4_OK) {
        a4w4_sample_free(&o->s);
        free(o);
        return fail(A4W4CHECK_ENOMEM, err, errlen, "case %s: out of memory for its operands "
                    "(M=%zu N=%zu K=%zu)", c->name, c->M, c->N, c->K);
    }
    *out = o;
    return A4W4CHECK_OK;
}

static const char *const tensor_names[A4W4CHECK_NTENSORS] = {
    "a_fp4", "a_scale", "w_fp4", "w_scale", "a_scale_shuffled", "w_fp4_shuffled",
    "w_scale_swizzled"};

const char *a4w4check_tensor_name(a4w4check_tensor t)
{
    return (unsigned)t < A4W4CHECK_NTENSORS ? tensor_names[t] : NULL;
}

const uint8_t *a4w4check_operands_tensor(const a4w4check_operands *o, a4w4check_tensor t,
                                         size_t shape[2])
{
    shape[0] = shape[1] = 0;
    if (!o || (unsigned)t >= A4W4CHECK_NTENSORS)
        return NULL;
    const a4w4_case_data *d = &o->d;
    size_t M = d->M, N = d->N, kb = d->K / 32;
    const a4w4_guarded *g[A4W4CHECK_NTENSORS] = {&d->a_fp4, &d->a_scale, &d->w_fp4,
                                                 &d->w_scale, &d->a_scale_shuffled,
                                                 &d->w_fp4_shuffled, &d->w_scale_swizzled};
    const size_t rows[A4W4CHECK_NTENSORS] = {M, M, N, N, a4w4_act_scale_padded_rows(M), N, N};
    const size_t cols[A4W4CHECK_NTENSORS] = {d->K / 2, kb, d->K / 2, kb,
                                             a4w4_act_scale_padded_cols(kb), d->K / 2, kb};
    if (!g[t]->data)
        return NULL;
    shape[0] = rows[t], shape[1] = cols[t];
    return g[t]->data;
}

void a4w4check_operands_free(a4w4check_operands *o)
{
    if (!o)
        return;
    a4w4_case_data_free(&o->d);
    a4w4_sample_free(&o->s);
    free(o);
}

/* The contract of opts parsed into *k and checked against K; NULL text: exact (undeclared). */
static a4w4check_status contract_of(const a4w4check_judge_opts *opts, size_t K,
                                    a4w4_contract *k, char *err, size_t errlen)
{
    char why[300] = "";
    if (a4w4_contract_parse(opts->contract ? opts->contract : "exact", k, why, sizeof why))
        return fail(A4W4CHECK_EINVAL, err, errlen, "%s", why);
    if (k->kind == A4W4_CONTRACT_TREE && a4w4_tree_check(&k->tree, K, why, sizeof why))
        return fail(A4W4CHECK_EINVAL, err, errlen, "contract '%.300s': %s", opts->contract,
                    why);
    char text[A4W4_CONTRACT_MAX];
    int tl = a4w4_contract_format(k, text, sizeof text);
    if (tl < 0 || (size_t)tl >= sizeof ((a4w4check_verdict *)0)->contract)
        return fail(A4W4CHECK_EINVAL, err, errlen, "contract '%.60s...': its canonical text "
                    "is longer than a verdict's %zu bytes (a sum tree of about 128 blocks or "
                    "more, contracts §4.2)", opts->contract,
                    sizeof ((a4w4check_verdict *)0)->contract - 1);
    if ((unsigned)opts->code0 > A4W4CHECK_CODE0_2M126)
        return fail(A4W4CHECK_EINVAL, err, errlen, "code0 reading %d: one of 0 (both), 1 "
                    "(2^-127), 2 (2^-126)", (int)opts->code0);
    return A4W4CHECK_OK;
}

/* Arguments common to judge and save: NULLs, y_len, the contract. */
static a4w4check_status check_args(const a4w4check_operands *o, const uint16_t *y, size_t y_len,
                                   const a4w4check_judge_opts *opts, a4w4_contract *k,
                                   char *err, size_t errlen)
{
    if (!o || !y || !opts)
        return fail(A4W4CHECK_EINVAL, err, errlen, "a4w4check: NULL argument");
    if (y_len != o->d.M * o->d.N)
        return fail(A4W4CHECK_EINVAL, err, errlen, "case %s: outputs hold %zu elements, "
                    "M x N = %zu x %zu = %zu expected", o->c.name, y_len, o->d.M, o->d.N,
                    o->d.M * o->d.N);
    return contract_of(opts, o->d.K, k, err, errlen);
}

/* The public record of entry e (M x N outputs) and contract k. */
static void verdict_of(const a4w4_entry_result *e, const a4w4_contract *k, size_t outputs,
                       a4w4check_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->verdict = (a4w4check_verdict_kind)e->verdict;
    snprintf(v->verdict_name, sizeof v->verdict_name, "%s", a4w4_verdict_name(e->verdict));
    snprintf(v->contract, sizeof v->contract, "%.1023s", e->contract); /* fits: contract_of */
    a4w4_contract_departures(k, v->departures, sizeof v->departures);
    v->outputs = outputs, v->checked = e->checked;
    v->mismatches = e->mismatches, v->unwritten = e->unwritten;
    v->judged_bit_exact = e->judged_bit_exact, v->judged_in_bound = e->judged_in_bound;
    v->not_judged = e->not_judged, v->max_ulp = e->max_ulp;
    v->nfirst = e->nfirst < A4W4CHECK_MAX_FIRST ? e->nfirst : A4W4CHECK_MAX_FIRST;
    for (size_t i = 0; i < v->nfirst; i++)
        v->first[i] = (a4w4check_mismatch){e->first[i].row, e->first[i].col,
                                           (uint16_t)e->first[i].got,
                                           (uint16_t)e->first[i].expected};
    snprintf(v->signature, sizeof v->signature, "%s", e->signature);
    snprintf(v->signature_class, sizeof v->signature_class, "%s", e->signature_class);
    snprintf(v->note, sizeof v->note, "%s", e->note);
    a4w4_entry_format(e, e->name, v->line, sizeof v->line);
}

a4w4check_status a4w4check_judge(const a4w4check_operands *o, const uint16_t *y, size_t y_len,
                                 const a4w4check_judge_opts *opts, a4w4check_verdict *v,
                                 char *err, size_t errlen)
{
    a4w4_contract k;
    a4w4check_status st = check_args(o, y, y_len, opts, &k, err, errlen);
    if (st != A4W4CHECK_OK)
        return st;
    if (!v)
        return fail(A4W4CHECK_EINVAL, err, errlen, "a4w4check_judge: NULL verdict");
    const a4w4_case_data *d = &o->d;
    a4w4_judge_input in = {o->c.name, o->c.regime_text, opts->backend ? opts->backend : "api",
                           opts->contract, d->a_fp4.data, d->a_scale.data, d->w_fp4.data,
                           d->w_scale.data, d->M, d->N, d->K, y, (int)opts->code0};
    a4w4_entry_result *e = calloc(1, sizeof *e);
    if (!e || a4w4_judge_outputs(&in, e) != A4W4_ST_OK) {
        free(e);
        return fail(A4W4CHECK_ENOMEM, err, errlen, "case %s: out of memory for the judgement",
                    o->c.name);
    }
    e->seed = o->c.seed;
    verdict_of(e, &k, d->M * d->N, v);
    free(e);
    return A4W4CHECK_OK;
}

a4w4check_status a4w4check_save_failing(const a4w4check_operands *o, const uint16_t *y,
                                        size_t y_len, const a4w4check_judge_opts *opts,
                                        const a4w4check_verdict *v, const char *dir,
                                        char *path, size_t pathlen, char *err, size_t errlen)
{
    a4w4_contract k;
    a4w4check_status st = check_args(o, y, y_len, opts, &k, err, errlen);
    if (st != A4W4CHECK_OK)
        return st;
    if (!v || !dir || !dir[0])
        return fail(A4W4CHECK_EINVAL, err, errlen, "a4w4check_save_failing: NULL verdict or "
                    "directory");
    const a4w4_case_data *d = &o->d;
    uint16_t *expected = malloc(d->M * d->N * sizeof *expected);
    if (!expected)
        return fail(A4W4CHECK_ENOMEM, err, errlen, "case %s: out of memory", o->c.name);
    a4w4_contract oracle = k; /* bounded(S) has no bit-exact answer: the exact bits */
    if (oracle.kind == A4W4_CONTRACT_BOUNDED)
        a4w4_contract_parse("exact", &oracle, NULL, 0);
    if (a4w4_gemm_contract(&oracle, d->a_fp4.data, d->a_scale.data, d->w_fp4.data,
                           d->w_scale.data, d->M, d->N, d->K, expected, NULL) != A4W4_OK) {
        free(expected);
        return fail(A4W4CHECK_ENOMEM, err, errlen, "case %s: out of memory for the oracle",
                    o->c.name);
    }
    a4w4_failing f = {&o->c, d, &o->s, y, expected, opts->backend ? opts->backend : "api",
                      v->contract, v->mismatches, "", v->signature, "", NULL, 0};
    char name[512], e2[512];
    a4w4_hstatus hs = a4w4_failing_save(&f, dir, name, sizeof name, e2, sizeof e2);
    free(expected);
    if (hs != A4W4_ST_OK)
        return fail(hs == A4W4_ST_NOMEM ? A4W4CHECK_ENOMEM
                    : hs == A4W4_ST_IO  ? A4W4CHECK_EIO
                                        : A4W4CHECK_EINVAL,
                    err, errlen, "%s", e2);
    if (path && pathlen && a4w4_item_path(dir, name, path, pathlen))
        return fail(A4W4CHECK_EINVAL, err, errlen, "%s: the saved file's path does not fit "
                    "%zu bytes", dir, pathlen);
    return A4W4CHECK_OK;
}
