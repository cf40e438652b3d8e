/* compare.c — a4w4_compare and its Markdown and HTML renderings: the parity report between
 * two runs or two paths (fallback vs ASM, flag off vs on, last night vs tonight). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_reports.h"
#include "compare_parity.h"
#include "doc_verdict.h"
#include "html_common.h"

#define COMPARE_SCHEMA "a4w4check-compare/1"

/* ---- matching ------------------------------------------------------------------------- */

typedef struct {
    const char *name, *backend;
    const cJSON *e;
    int used;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->backend, y->backend);
}

static keyed *index_entries(const cJSON *cases, size_t *n)
{
    *n = 0;
    keyed *k = malloc(((size_t)cJSON_GetArraySize(cases) + 1) * sizeof *k);
    if (!k)
        return NULL;
    const cJSON *e;
    cJSON_ArrayForEach(e, cases) {
        k[*n].name = jstr(e, "name");
        k[*n].backend = jstr(e, "backend");
        k[*n].e = e;
        k[(*n)++].used = 0;
    }
    qsort(k, *n, sizeof *k, cmp_keyed);
    return k;
}

static const char *mapped_backend(const char *b, const a4w4_compare_opts *co)
{
    for (size_t i = 0; co && i < co->npairs; i++)
        if (!strcmp(co->pair_base[i], b))
            return co->pair_cand[i];
    return b;
}

/* Whether backend b's entries of one side take part: a pair names it on this side
 * (mine), or no pair names it at all. A backend a pair names only on the other side is that
 * pair's other path: `--pair A=B` compares BASE's A with CAND's B, and BASE's B and CAND's A
 * stay out (counted as unpaired), never new failures or fixes of their own. */
static int on_side(const char *b, const a4w4_compare_opts *co, int cand)
{
    int other = 0;
    for (size_t i = 0; co && i < co->npairs; i++) {
        if (!strcmp(cand ? co->pair_cand[i] : co->pair_base[i], b))
            return 1;
        other |= !strcmp(cand ? co->pair_base[i] : co->pair_cand[i], b);
    }
    return !other;
}

/* ---- items ---------------------------------------------------------------------------- */

static cJSON *item_new(const cJSON *base, const cJSON *cand, const char *why)
{
    const cJSON *any = cand ? cand : base;
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "name", jstr(any, "name"));
    cJSON_AddStringToObject(it, "backend", jstr(any, "backend"));
    if (base && cand && strcmp(jstr(base, "backend"), jstr(cand, "backend")))
        cJSON_AddStringToObject(it, "base_backend", jstr(base, "backend"));
    cJSON_AddNumberToObject(it, "M", jnum(any, "M", 0));
    cJSON_AddNumberToObject(it, "N", jnum(any, "N", 0));
    cJSON_AddNumberToObject(it, "K", jnum(any, "K", 0));
    cJSON_AddStringToObject(it, "base_verdict", base ? jstr(base, "verdict") : "absent");
    cJSON_AddStringToObject(it, "cand_verdict", cand ? jstr(cand, "verdict") : "absent");
    if (base)
        cJSON_AddNumberToObject(it, "base_mismatches", jnum(base, "mismatches", 0));
    if (cand) {
        cJSON_AddNumberToObject(it, "cand_mismatches", jnum(cand, "mismatches", 0));
        cJSON_AddNumberToObject(it, "cand_checked", jnum(cand, "checked_outputs", 0));
        const cJSON *m =
            cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cand, "first_mismatches"), 0);
        if (m)
            cJSON_AddItemToObject(it, "cand_first_mismatch", cJSON_Duplicate(m, 1));
        if (*jstr(cand, "note"))
            cJSON_AddStringToObject(it, "cand_note", jstr(cand, "note"));
    }
    if (why)
        cJSON_AddStringToObject(it, "why", why);
    return it;
}

/* Same inputs: shape, regime, seed and the same checked outputs. */
static int same_inputs(const cJSON *a, const cJSON *b, char *why, size_t len)
{
    static const char *const nums[] = {"M", "N", "K", "checked_outputs"};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        if (jnum(a, nums[i], -1) != jnum(b, nums[i], -1)) {
            snprintf(why, len, "%s %.0f -> %.0f", nums[i], jnum(a, nums[i], -1),
                     jnum(b, nums[i], -1));
            return 0;
        }
    static const char *const strs[] = {"regime", "seed"};
    for (size_t i = 0; i < 2; i++)
        if (strcmp(jstr(a, strs[i]), jstr(b, strs[i]))) {
            snprintf(why, len, "%s %s -> %s", strs[i], jstr(a, strs[i]), jstr(b, strs[i]));
            return 0;
        }
    if (jtrue(a, "sampled") != jtrue(b, "sampled")) {
        snprintf(why, len, "sampled -> %s", jtrue(b, "sampled") ? "sampled" : "full");
        return 0;
    }
    return 1;
}

/* Did the checked output bits change? 1 changed, 0 same, -1 unknown; why explains. */
static int bits_changed(const cJSON *a, const cJSON *b, char *why, size_t len)
{
    const char *ha = jstr(a, "y_hash"), *hb = jstr(b, "y_hash");
    if (*ha && *hb) {
        snprintf(why, len, "y_hash %s -> %s", ha, hb);
        return strcmp(ha, hb) != 0;
    }
    if (strcmp(jstr(a, "contract"), jstr(b, "contract"))) {
        snprintf(why, len, "contracts differ (%s, %s) and no y_hash", jstr(a, "contract"),
                 jstr(b, "contract"));
        return -1;
    }
    /* same inputs, same contract: the oracle's expected bits are the same in both runs */
    int pa = !strcmp(jstr(a, "verdict"), "pass"), pb = !strcmp(jstr(b, "verdict"), "pass");
    const cJSON *fa = cJSON_GetObjectItemCaseSensitive(a, "first_mismatches");
    const cJSON *fb = cJSON_GetObjectItemCaseSensitive(b, "first_mismatches");
    int rec_differs = jnum(a, "mismatches", 0) != jnum(b, "mismatches", 0) ||
                      jnum(a, "unwritten", 0) != jnum(b, "unwritten", 0) ||
                      jnum(a, "max_ulp", -1) != jnum(b, "max_ulp", -1) ||
                      !(fa && fb ? cJSON_Compare(fa, fb, 1) : fa == fb);
    if (rec_differs) {
        snprintf(why, len,
                 "mismatch records differ (%.0f -> %.0f mismatches, max %.0f -> %.0f ULP)",
                 jnum(a, "mismatches", 0), jnum(b, "mismatches", 0), jnum(a, "max_ulp", -1),
                 jnum(b, "max_ulp", -1));
        return 1;
    }
    if (pa && pb && !contract_bounded(jstr(a, "contract"))) {
        snprintf(why, len, "both bit-exact against the same oracle");
        return 0;
    }
    snprintf(why, len, "no y_hash and equal mismatch records");
    return -1;
}

typedef struct {
    double r;
    cJSON *item;
} ratio_item;

static int cmp_ratio_desc(const void *a, const void *b)
{
    const ratio_item *x = a, *y = b;
    return x->r < y->r ? 1 : x->r > y->r ? -1 : 0;
}

static cJSON *run_info(const cJSON *doc)
{
    cJSON *r = cJSON_CreateObject();
    int n[NVERDICTS];
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    verdict_counts(cases, n);
    cJSON_AddStringToObject(r, "set", jstr(doc, "set"));
    cJSON_AddStringToObject(r, "tool_version", jstr(doc, "tool_version"));
    cJSON_AddStringToObject(r, "matrix_hash", jstr(doc, "matrix_hash"));
    cJSON_AddNumberToObject(r, "entries", cJSON_GetArraySize(cases));
    cJSON_AddNumberToObject(r, "failing", n[1]);
    cJSON_AddNumberToObject(r, "xfail", n[VERDICT_XFAIL]);
    doc_verdict v; /* as the document records it: never recomputed here */
    char comp[1200];
    doc_verdict_read(doc, &v);
    cJSON_AddStringToObject(r, "verdict", doc_verdict_word(&v));
    cJSON_AddStringToObject(r, "completeness", doc_completeness_text(&v, comp, sizeof comp));
    if (*v.reason)
        cJSON_AddStringToObject(r, "verdict_reason", v.reason);
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(doc, "environment");
    if (*jstr(env, "git_commit"))
        cJSON_AddStringToObject(r, "git_commit", jstr(env, "git_commit"));
    return r;
}

/* The comparison's lists and counters, filled entry by entry. */
typedef struct {
    cJSON *newf, *fixed, *still, *vchg, *bchg, *indiff, *only_b, *only_c;
    cJSON *kchg; /* "contract_changes": one object per (backend, base, cand contract) */
    int matched, same, unknown, unpaired;
} cmp_lists;

static void lists_make(cJSON *out, cmp_lists *L)
{
    memset(L, 0, sizeof *L);
    L->newf = cJSON_AddArrayToObject(out, "new_failures");
    L->fixed = cJSON_AddArrayToObject(out, "fixed");
    L->still = cJSON_AddArrayToObject(out, "still_failing");
    L->vchg = cJSON_AddArrayToObject(out, "verdict_changes");
    L->bchg = cJSON_AddArrayToObject(out, "bits_changed");
    L->indiff = cJSON_AddArrayToObject(out, "inputs_differ");
    L->only_b = cJSON_AddArrayToObject(out, "only_base");
    L->only_c = cJSON_AddArrayToObject(out, "only_cand");
    L->kchg = cJSON_AddArrayToObject(out, "contract_changes");
}

/* A matched pair judged under other contracts: counted in L's "contract_changes" under its
 * backend (the candidate's name) and the two contract texts. */
static void note_contract_change(const cJSON *e, const cJSON *c, cmp_lists *L)
{
    cJSON *k;
    cJSON_ArrayForEach(k, L->kchg) {
        if (!strcmp(jstr(k, "backend"), jstr(c, "backend")) &&
            !strcmp(jstr(k, "base"), jstr(e, "contract")) &&
            !strcmp(jstr(k, "cand"), jstr(c, "contract"))) {
            cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(k, "entries"),
                                 jnum(k, "entries", 0) + 1);
            return;
        }
    }
    k = cJSON_CreateObject();
    cJSON_AddStringToObject(k, "backend", jstr(c, "backend"));
    cJSON_AddStringToObject(k, "base", jstr(e, "contract"));
    cJSON_AddStringToObject(k, "cand", jstr(c, "contract"));
    cJSON_AddNumberToObject(k, "entries", 1);
    cJSON_AddItemToArray(L->kchg, k);
}

/* Base entry e matched with candidate entry c: verdict change, inputs, output bits. */
static void classify_pair(const cJSON *e, const cJSON *c, cmp_lists *L)
{
    /* a known failure (XFAIL, as run, merge or compare --known recorded it) is neither a new
     * failure nor a still failing one */
    int vb = entry_verdict_index(e), vc = entry_verdict_index(c);
    int other = strcmp(jstr(e, "contract"), jstr(c, "contract")) != 0;
    char why[300];
    L->matched++;
    if (other)
        note_contract_change(e, c, L);
    if (vc == 1 && vb != 1)
        cJSON_AddItemToArray(L->newf, item_new(e, c, NULL));
    else if (vb == 1 && vc == 0 && other) { /* a pass under another contract is no fix */
        snprintf(why, sizeof why, "passes under another contract (%.120s, was %.120s): not a "
                 "fix", jstr(c, "contract"), jstr(e, "contract"));
        cJSON_AddItemToArray(L->vchg, item_new(e, c, why));
    } else if (vb == 1 && vc == 0)
        cJSON_AddItemToArray(L->fixed, item_new(e, c, NULL));
    else if (vb == 1 && vc == 1)
        cJSON_AddItemToArray(L->still, item_new(e, c, NULL));
    else if (vb != vc)
        cJSON_AddItemToArray(L->vchg, item_new(e, c, NULL));
    if (!same_inputs(e, c, why, sizeof why))
        cJSON_AddItemToArray(L->indiff, item_new(e, c, why));
    else if (vb != 2 && vc != 2 && vb != 3 && vc != 3 && vb != VERDICT_AMBIGUOUS &&
             vc != VERDICT_AMBIGUOUS) {
        int ch = bits_changed(e, c, why, sizeof why);
        if (ch == 1)
            cJSON_AddItemToArray(L->bchg, item_new(e, c, why));
        L->same += ch == 0;
        L->unknown += ch < 0;
    }
}

/* The timing ratio of a matched pair, when both times reach min_ms: appended to ratios. */
static void add_ratio(const cJSON *e, const cJSON *c, double min_ms, ratio_item *ratios,
                      size_t *nr, double *logsum)
{
    double tb = jnum(e, "time_ms", 0), tc = jnum(c, "time_ms", 0);
    if (tb < min_ms || tc < min_ms)
        return;
    cJSON *it = item_new(e, c, NULL);
    cJSON_AddNumberToObject(it, "base_ms", tb);
    cJSON_AddNumberToObject(it, "cand_ms", tc);
    cJSON_AddNumberToObject(it, "ratio", tc / tb);
    ratios[*nr].r = tc / tb;
    ratios[(*nr)++].item = it;
    *logsum += log(tc / tb);
}

/* The geometric mean of the ratios per backend, in first-seen order. */
static void add_per_backend(cJSON *timing, const ratio_item *ratios, size_t nr)
{
    cJSON *perb = cJSON_AddArrayToObject(timing, "per_backend");
    for (size_t i = 0; i < nr; i++) {
        const char *bk = jstr(ratios[i].item, "backend");
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(jstr(ratios[j].item, "backend"), bk);
        if (seen)
            continue;
        double ls = 0;
        size_t cnt = 0;
        for (size_t j = i; j < nr; j++)
            if (!strcmp(jstr(ratios[j].item, "backend"), bk)) {
                ls += log(ratios[j].r);
                cnt++;
            }
        cJSON *pb = cJSON_CreateObject();
        cJSON_AddStringToObject(pb, "backend", bk);
        cJSON_AddNumberToObject(pb, "timed", (double)cnt);
        cJSON_AddNumberToObject(pb, "geomean_ratio", exp(ls / (double)cnt));
        cJSON_AddItemToArray(perb, pb);
    }
}

/* "timing": counts, geometric means, the entries slower by the ratio (the items of ratios are
 * moved into it or freed). Returns the number slower; *nfast the number faster. */
static int add_timing(cJSON *out, ratio_item *ratios, size_t nr, double logsum, double slower,
                      double min_ms, int *nfast)
{
    cJSON *timing = cJSON_AddObjectToObject(out, "timing");
    cJSON_AddNumberToObject(timing, "timed", (double)nr);
    if (nr)
        cJSON_AddNumberToObject(timing, "geomean_ratio", exp(logsum / (double)nr));
    else
        cJSON_AddNullToObject(timing, "geomean_ratio");
    cJSON_AddNumberToObject(timing, "slower_ratio", slower);
    cJSON_AddNumberToObject(timing, "min_ms", min_ms);
    add_per_backend(timing, ratios, nr);
    qsort(ratios, nr, sizeof *ratios, cmp_ratio_desc);
    cJSON *slow = cJSON_AddArrayToObject(timing, "slower");
    int nslow = 0;
    *nfast = 0;
    for (size_t i = 0; i < nr; i++) {
        if (ratios[i].r >= slower) {
            cJSON_AddItemToArray(slow, ratios[i].item);
            nslow++;
        } else {
            *nfast += ratios[i].r <= 1.0 / slower;
            cJSON_Delete(ratios[i].item);
        }
    }
    cJSON_AddNumberToObject(timing, "faster", *nfast);
    return nslow;
}

static void add_totals(cJSON *totals, const cmp_lists *L, int nslow, int nfast)
{
    cJSON_AddNumberToObject(totals, "matched", L->matched);
    cJSON_AddNumberToObject(totals, "new_failures", cJSON_GetArraySize(L->newf));
    cJSON_AddNumberToObject(totals, "fixed", cJSON_GetArraySize(L->fixed));
    cJSON_AddNumberToObject(totals, "still_failing", cJSON_GetArraySize(L->still));
    cJSON_AddNumberToObject(totals, "verdict_changes", cJSON_GetArraySize(L->vchg));
    cJSON_AddNumberToObject(totals, "bits_changed", cJSON_GetArraySize(L->bchg));
    cJSON_AddNumberToObject(totals, "bits_same", L->same);
    cJSON_AddNumberToObject(totals, "bits_unknown", L->unknown);
    cJSON_AddNumberToObject(totals, "inputs_differ", cJSON_GetArraySize(L->indiff));
    cJSON_AddNumberToObject(totals, "only_base", cJSON_GetArraySize(L->only_b));
    cJSON_AddNumberToObject(totals, "only_cand", cJSON_GetArraySize(L->only_c));
    cJSON_AddNumberToObject(totals, "unpaired", L->unpaired);
    cJSON_AddNumberToObject(totals, "contract_changes", cJSON_GetArraySize(L->kchg));
    cJSON_AddNumberToObject(totals, "slower", nslow);
    cJSON_AddNumberToObject(totals, "faster", nfast);
}

static cJSON *compare_header(const cJSON *base, const cJSON *cand, const a4w4_compare_opts *co)
{
    cJSON *out = cJSON_CreateObject();
    if (!out)
        return NULL;
    cJSON_AddStringToObject(out, "schema", COMPARE_SCHEMA);
    cJSON_AddItemToObject(out, "base", run_info(base));
    cJSON_AddItemToObject(out, "cand", run_info(cand));
    cJSON *pairs = cJSON_AddArrayToObject(out, "pairs");
    for (size_t i = 0; co && i < co->npairs; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "base", co->pair_base[i]);
        cJSON_AddStringToObject(p, "cand", co->pair_cand[i]);
        cJSON_AddItemToArray(pairs, p);
    }
    return out;
}

cJSON *a4w4_compare(const cJSON *base, const cJSON *cand, const a4w4_compare_opts *co)
{
    double slower = co && co->slower_ratio > 0 ? co->slower_ratio : 1.25;
    double min_ms = co && co->min_ms > 0 ? co->min_ms : 0.05;
    const cJSON *bc = cJSON_GetObjectItemCaseSensitive(base, "cases");
    const cJSON *cc = cJSON_GetObjectItemCaseSensitive(cand, "cases");
    size_t ncand = 0, nr = 0;
    keyed *ck = index_entries(cc, &ncand);
    cJSON *out = compare_header(base, cand, co);
    ratio_item *ratios = malloc(((size_t)cJSON_GetArraySize(bc) + 1) * sizeof *ratios);
    if (!ck || !out || !ratios) {
        free(ck);
        free(ratios);
        cJSON_Delete(out);
        return NULL;
    }
    cJSON *totals = cJSON_AddObjectToObject(out, "totals");
    cmp_lists L;
    lists_make(out, &L);
    double logsum = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, bc) {
        if (!on_side(jstr(e, "backend"), co, 0)) {
            L.unpaired++;
            continue;
        }
        keyed key = {jstr(e, "name"), mapped_backend(jstr(e, "backend"), co), NULL, 0};
        keyed *hit = ncand ? bsearch(&key, ck, ncand, sizeof *ck, cmp_keyed) : NULL;
        if (!hit && co && co->npairs && is_call_sequence(key.name) &&
            strcmp(key.backend, jstr(e, "backend"))) {
            L.unpaired++; /* a plugin's call sequence: the other path may have none */
            continue;
        }
        if (!hit) {
            cJSON_AddItemToArray(L.only_b, item_new(e, NULL, "not in the candidate run"));
            continue;
        }
        hit->used = 1;
        classify_pair(e, hit->e, &L);
        add_ratio(e, hit->e, min_ms, ratios, &nr, &logsum);
    }
    for (size_t i = 0; i < ncand; i++)
        if (!ck[i].used && (!on_side(ck[i].backend, co, 1) ||
                            (co && co->npairs && is_call_sequence(ck[i].name))))
            L.unpaired++;
        else if (!ck[i].used)
            cJSON_AddItemToArray(entry_verdict_index(ck[i].e) == 1 ? L.newf : L.only_c,
                                 item_new(NULL, ck[i].e, "not in the base run"));
    int nfast, nslow = add_timing(out, ratios, nr, logsum, slower, min_ms, &nfast);
    free(ratios);
    free(ck);
    add_totals(totals, &L, nslow, nfast);
    return out;
}

int a4w4_compare_new_failures(const cJSON *cmp)
{
    return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(cmp, "new_failures"));
}

int a4w4_compare_losses(const cJSON *cmp)
{
    return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(cmp, "only_base"));
}

/* ---- Markdown ------------------------------------------------------------------------- */

static const a4w4_report_opts default_opts = {0, NULL};

/* A run's recorded verdict and completeness, escaped by esc (rb_md, rb_html): "verdict
 * PASS, 84 of 84 expected items recorded, ..." or "verdict not recorded". */
static void run_verdict(rbuf *b, const cJSON *r, void (*esc)(rbuf *, const char *))
{
    const char *v = jstr(r, "verdict");
    int recorded = strncmp(v, "verdict ", 8) != 0;
    rb_puts(b, recorded ? "verdict " : "");
    esc(b, v);
    if (recorded) {
        rb_puts(b, ", ");
        esc(b, jstr(r, "completeness"));
    }
    if (*jstr(r, "verdict_reason") && strcmp(v, "PASS")) {
        rb_puts(b, ": ");
        esc(b, jstr(r, "verdict_reason"));
    }
}

static void md_run(rbuf *b, const char *label, const cJSON *r)
{
    rb_printf(b, "%s: ", label);
    if (*jstr(r, "source")) {
        rb_puts(b, "`");
        rb_md(b, jstr(r, "source"));
        rb_puts(b, "` ");
    }
    rb_printf(b, "(set %s, a4w4check %s, %.0f entries, %.0f failing", jstr(r, "set"),
              jstr(r, "tool_version"), jnum(r, "entries", 0), jnum(r, "failing", 0));
    if (*jstr(r, "git_commit"))
        rb_printf(b, ", commit %.12s", jstr(r, "git_commit"));
    rb_puts(b, "; ");
    run_verdict(b, r, rb_md);
    rb_puts(b, ")");
}

static void md_item(rbuf *b, const cJSON *it, int show_bits)
{
    rb_puts(b, "- `");
    rb_md(b, jstr(it, "name"));
    rb_puts(b, "` on `");
    rb_md(b, jstr(it, "backend"));
    rb_puts(b, "`");
    if (*jstr(it, "base_backend")) {
        rb_puts(b, " (base `");
        rb_md(b, jstr(it, "base_backend"));
        rb_puts(b, "`)");
    }
    rb_printf(b, ", M=%.0f N=%.0f K=%.0f: %s -> %s", jnum(it, "M", 0), jnum(it, "N", 0),
              jnum(it, "K", 0), jstr(it, "base_verdict"), jstr(it, "cand_verdict"));
    if (!strcmp(jstr(it, "cand_verdict"), "fail")) {
        if (jnum(it, "cand_checked", 0) > 0 || jnum(it, "cand_mismatches", 0) > 0)
            rb_printf(b, ", %.0f of %.0f outputs differ", jnum(it, "cand_mismatches", 0),
                      jnum(it, "cand_checked", 0));
        else /* a crash, a timeout, a refusal: never "0 of 0" (its note says which) */
            rb_puts(b, ", no output compared");
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(it, "cand_first_mismatch");
        if (m)
            rb_printf(b, "; first %s(%.0f, %.0f) got %s expected %s",
                      *jstr(m, "tensor") ? jstr(m, "tensor") : "y", jnum(m, "row", 0),
                      jnum(m, "col", 0), jstr(m, "got"), jstr(m, "expected"));
        if (*jstr(it, "cand_note")) {
            rb_puts(b, ". ");
            rb_md(b, jstr(it, "cand_note"));
        }
    }
    if ((show_bits || !strcmp(jstr(it, "base_verdict"), "absent")) && *jstr(it, "why")) {
        rb_puts(b, " (");
        rb_md(b, jstr(it, "why"));
        rb_puts(b, ")");
    }
    rb_puts(b, "\n");
}

static void md_list(rbuf *b, const cJSON *cmp, const char *key, const char *title, int show_bits)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(cmp, key), *it;
    int n = cJSON_GetArraySize(a);
    if (!n)
        return;
    rb_printf(b, "## %s (%d)\n\n", title, n);
    int k = 0;
    cJSON_ArrayForEach(it, a) {
        if (k++ == 200) {
            rb_printf(b, "- ... and %d more (see the JSON or HTML comparison)\n", n - 200);
            break;
        }
        md_item(b, it, show_bits);
    }
    rb_puts(b, "\n");
}

/* Title, verdict (with the candidate's recorded INCOMPLETE), both runs, the pairs. */
static void md_head(rbuf *b, const cJSON *cmp, int nf, const cJSON *base, const cJSON *cand)
{
    rb_printf(b, "# a4w4check compare: %s vs %s\n\n", jstr(base, "set"), jstr(cand, "set"));
    if (nf)
        rb_printf(b, "**Verdict: REGRESSION** (%d new failure%s)", nf, nf == 1 ? "" : "s");
    else
        rb_puts(b, "**Verdict: NO NEW FAILURE**");
    if (!strcmp(jstr(cand, "verdict"), "INCOMPLETE"))
        rb_puts(b, "; **the candidate run is INCOMPLETE** (its recorded verdict)");
    rb_puts(b, ".\n\n");
    md_run(b, "Base", base);
    rb_puts(b, "; ");
    md_run(b, "candidate", cand);
    rb_puts(b, ".");
    const cJSON *p;
    int k = 0;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(cmp, "pairs")) {
        rb_puts(b, k++ ? ", `" : " Compared as one path: `");
        rb_md(b, jstr(p, "base"));
        rb_puts(b, "` (base) with `");
        rb_md(b, jstr(p, "cand"));
        rb_puts(b, "` (candidate)");
    }
    rb_puts(b, k ? ".\n\n" : "\n\n");
}

/* The backends judged under another contract in the candidate, with both contracts. */
static void md_contract_changes(rbuf *b, const cJSON *cmp)
{
    const cJSON *k;
    int n = 0;
    cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(cmp, "contract_changes")) {
        if (!n++)
            rb_puts(b, "## Contract changes\n\nThese entries were judged under another contract "
                       "in the candidate: their verdicts compare two contracts, not two "
                       "kernels, and a pass under the new one is never counted as fixed.\n\n"
                       "| backend | base contract | candidate contract | entries |\n"
                       "|---|---|---|---:|\n");
        rb_puts(b, "| ");
        rb_md(b, jstr(k, "backend"));
        rb_puts(b, " | ");
        rb_md(b, jstr(k, "base"));
        rb_puts(b, " | ");
        rb_md(b, jstr(k, "cand"));
        rb_printf(b, " | %.0f |\n", jnum(k, "entries", 0));
    }
    if (n)
        rb_puts(b, "\n");
}

char *a4w4_compare_markdown(const cJSON *cmp, const a4w4_report_opts *o)
{
    if (!o)
        o = &default_opts;
    rbuf b = {0};
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(cmp, "totals");
    const cJSON *base = cJSON_GetObjectItemCaseSensitive(cmp, "base");
    const cJSON *cand = cJSON_GetObjectItemCaseSensitive(cmp, "cand");
    const cJSON *tm = cJSON_GetObjectItemCaseSensitive(cmp, "timing");
    md_head(&b, cmp, (int)jnum(t, "new_failures", 0), base, cand);
    int k;
    rb_printf(&b,
              "| | entries |\n|---|---:|\n| matched | %.0f |\n| new failures | %.0f |\n"
              "| fixed (newly passing) | %.0f |\n| still failing | %.0f |\n"
              "| other verdict changes | %.0f |\n| outputs whose bits changed | %.0f |\n"
              "| bits unchanged (proven) | %.0f |\n| bits unknown (no y_hash) | %.0f |\n"
              "| inputs differ (not comparable) | %.0f |\n| only in base | %.0f |\n"
              "| only in candidate | %.0f |\n",
              jnum(t, "matched", 0), jnum(t, "new_failures", 0), jnum(t, "fixed", 0),
              jnum(t, "still_failing", 0), jnum(t, "verdict_changes", 0),
              jnum(t, "bits_changed", 0), jnum(t, "bits_same", 0), jnum(t, "bits_unknown", 0),
              jnum(t, "inputs_differ", 0), jnum(t, "only_base", 0), jnum(t, "only_cand", 0));
    if (jnum(t, "unpaired", 0) > 0)
        rb_printf(&b, "| left out (the other path of a --pair) | %.0f |\n", jnum(t, "unpaired", 0));
    if (!o->reproducible) {
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(tm, "geomean_ratio");
        if (cJSON_IsNumber(g))
            rb_printf(&b,
                      "| timing: geometric mean of candidate/base | %.3fx over %.0f entries |\n",
                      g->valuedouble, jnum(tm, "timed", 0));
        rb_printf(&b, "| slower by >= %.2fx | %.0f |\n", jnum(tm, "slower_ratio", 0),
                  jnum(t, "slower", 0));
    }
    rb_puts(&b, "\n");
    md_contract_changes(&b, cmp);
    md_list(&b, cmp, "new_failures", "New failures", 0);
    md_list(&b, cmp, "fixed", "Fixed (newly passing)", 0);
    md_list(&b, cmp, "still_failing", "Still failing", 0);
    md_list(&b, cmp, "verdict_changes", "Other verdict changes", 0);
    md_list(&b, cmp, "bits_changed", "Outputs whose bits changed", 1);
    md_list(&b, cmp, "inputs_differ", "Inputs differ (not comparable)", 1);
    md_list(&b, cmp, "only_base", "Only in base", 0);
    md_list(&b, cmp, "only_cand", "Only in candidate", 0);
    compare_parity_md(&b, cmp);
    if (!o->reproducible) {
        rb_puts(&b, "## Timing\n\n");
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(tm, "geomean_ratio");
        if (!cJSON_IsNumber(g))
            rb_printf(&b, "No entry timed at >= %.3f ms in both runs.\n\n", jnum(tm, "min_ms", 0));
        else {
            rb_printf(&b,
                      "Geometric mean of candidate/base time: **%.3fx** over %.0f entries timed "
                      "at >= %.3f ms in both runs (%.0f faster by >= %.2fx).",
                      g->valuedouble, jnum(tm, "timed", 0), jnum(tm, "min_ms", 0),
                      jnum(tm, "faster", 0), jnum(tm, "slower_ratio", 0));
            const cJSON *pb;
            k = 0;
            cJSON_ArrayForEach(pb, cJSON_GetObjectItemCaseSensitive(tm, "per_backend")) {
                rb_puts(&b, k++ ? ", `" : " Per backend: `");
                rb_md(&b, jstr(pb, "backend"));
                rb_printf(&b, "` %.3fx (%.0f)", jnum(pb, "geomean_ratio", 0), jnum(pb, "timed", 0));
            }
            rb_puts(&b, ".\n\n");
            const cJSON *sl = cJSON_GetObjectItemCaseSensitive(tm, "slower"), *it;
            if (cJSON_GetArraySize(sl)) {
                rb_printf(&b,
                          "Slower by >= %.2fx (slowest first):\n\n| case | backend | base ms | "
                          "candidate ms | ratio |\n|---|---|---:|---:|---:|\n",
                          jnum(tm, "slower_ratio", 0));
                k = 0;
                cJSON_ArrayForEach(it, sl) {
                    if (k++ == 50) {
                        rb_printf(&b, "| ... %d more | | | | |\n", cJSON_GetArraySize(sl) - 50);
                        break;
                    }
                    rb_puts(&b, "| ");
                    rb_md(&b, jstr(it, "name"));
                    rb_puts(&b, " | ");
                    rb_md(&b, jstr(it, "backend"));
                    rb_printf(&b, " | %.3f | %.3f | %.2fx |\n", jnum(it, "base_ms", 0),
                              jnum(it, "cand_ms", 0), jnum(it, "ratio", 0));
                }
                rb_puts(&b, "\n");
            }
        }
    }
    return rb_take(&b);
}

/* ---- HTML ----------------------------------------------------------------------------- */

static void html_items(rbuf *b, const cJSON *cmp, const char *key, const char *title, int open,
                       int show_why)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(cmp, key), *it;
    int n = cJSON_GetArraySize(a);
    rb_printf(b, "<h2 id=\"%s\">%s (%d)</h2>\n", key, title, n);
    if (!n) {
        rb_puts(b, "<p>None.</p>\n");
        return;
    }
    rb_printf(b,
              "<details%s><summary>%d entr%s</summary>\n<table class=\"sortable\"><thead><tr>"
              "<th>case</th><th>backend</th><th class=\"n\">M</th><th class=\"n\">N</th>"
              "<th class=\"n\">K</th><th>base</th><th>candidate</th><th class=\"n\">mismatches</th>"
              "<th>first mismatch (candidate)</th>%s</tr></thead><tbody>\n",
              open ? " open" : "", n, n == 1 ? "y" : "ies", show_why ? "<th>why</th>" : "");
    cJSON_ArrayForEach(it, a) {
        rb_puts(b, "<tr><td><code>");
        rb_html(b, jstr(it, "name"));
        rb_puts(b, "</code></td><td>");
        rb_html(b, jstr(it, "backend"));
        if (*jstr(it, "base_backend")) {
            rb_puts(b, " (base ");
            rb_html(b, jstr(it, "base_backend"));
            rb_puts(b, ")");
        }
        rb_printf(
            b,
            "</td><td class=\"n\">%.0f</td><td class=\"n\">%.0f</td><td class=\"n\">%.0f</td><td>",
            jnum(it, "M", 0), jnum(it, "N", 0), jnum(it, "K", 0));
        const char *bv = jstr(it, "base_verdict"), *cv = jstr(it, "cand_verdict");
        if (!strcmp(bv, "absent"))
            rb_puts(b, "absent");
        else
            html_verdict_chip(b, verdict_index(bv));
        rb_puts(b, "</td><td>");
        if (!strcmp(cv, "absent"))
            rb_puts(b, "absent");
        else
            html_verdict_chip(b, verdict_index(cv));
        rb_printf(b, "</td><td class=\"n\">%.0f -&gt; %.0f</td><td class=\"mono\">",
                  jnum(it, "base_mismatches", 0), jnum(it, "cand_mismatches", 0));
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(it, "cand_first_mismatch");
        if (m) {
            rb_html(b, *jstr(m, "tensor") ? jstr(m, "tensor") : "y");
            rb_printf(b, "(%.0f, %.0f) got ", jnum(m, "row", 0), jnum(m, "col", 0));
            rb_html(b, jstr(m, "got"));
            rb_puts(b, " expected ");
            rb_html(b, jstr(m, "expected"));
        }
        rb_puts(b, "</td>");
        if (show_why) {
            rb_puts(b, "<td>");
            rb_html(b, jstr(it, "why"));
            rb_puts(b, "</td>");
        }
        rb_puts(b, "</tr>\n");
    }
    rb_puts(b, "</tbody></table></details>\n");
}

/* The totals table (and the timing geomean unless reproducible). */
static void html_totals(rbuf *b, const cJSON *t, const cJSON *tm, const a4w4_report_opts *o)
{
    static const struct {
        const char *key, *label;
    } rows[] = {{"matched", "matched"},
                {"new_failures", "new failures"},
                {"fixed", "fixed (newly passing)"},
                {"still_failing", "still failing"},
                {"verdict_changes", "other verdict changes"},
                {"bits_changed", "outputs whose bits changed"},
                {"bits_same", "bits unchanged (proven)"},
                {"bits_unknown", "bits unknown (no y_hash)"},
                {"inputs_differ", "inputs differ (not comparable)"},
                {"only_base", "only in base"},
                {"only_cand", "only in candidate"}};
    rb_puts(b, "<table><tbody>\n");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        rb_printf(b, "<tr><th>%s</th><td class=\"n\">%.0f</td></tr>\n", rows[i].label,
                  jnum(t, rows[i].key, 0));
    if (!o->reproducible && cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(tm, "geomean_ratio")))
        rb_printf(b,
                  "<tr><th>timing: geometric mean of candidate/base</th><td class=\"n\">%.3fx "
                  "over %.0f</td></tr>\n",
                  jnum(tm, "geomean_ratio", 0), jnum(tm, "timed", 0));
    rb_puts(b, "</tbody></table>\n");
}

/* One run's paragraph: source, set, version, entries, commit, recorded verdict. */
static void html_run(rbuf *b, const cJSON *r, const char *label)
{
    rb_printf(b, "<p class=\"meta\">%s: ", label);
    if (*jstr(r, "source")) {
        rb_puts(b, "<code>");
        rb_html(b, jstr(r, "source"));
        rb_puts(b, "</code> ");
    }
    rb_puts(b, "(set ");
    rb_html(b, jstr(r, "set"));
    rb_puts(b, ", a4w4check ");
    rb_html(b, jstr(r, "tool_version"));
    rb_printf(b, ", %.0f entries, %.0f failing", jnum(r, "entries", 0), jnum(r, "failing", 0));
    if (*jstr(r, "git_commit")) {
        rb_puts(b, ", commit ");
        rb_html(b, jstr(r, "git_commit"));
    }
    rb_puts(b, "; ");
    run_verdict(b, r, rb_html);
    rb_puts(b, ")</p>\n");
}

/* The backends judged under another contract in the candidate (md_contract_changes). */
static void html_contract_changes(rbuf *b, const cJSON *cmp)
{
    const cJSON *k;
    int n = 0;
    cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(cmp, "contract_changes")) {
        if (!n++)
            rb_puts(b, "<p class=\"banner incomplete\" id=\"contract-changes\">&#9888; "
                       "Contract changes: a pass under another contract is never counted as "
                       "fixed.</p>\n<ul>\n");
        rb_puts(b, "<li><code>");
        rb_html(b, jstr(k, "backend"));
        rb_puts(b, "</code>: <code>");
        rb_html(b, jstr(k, "base"));
        rb_puts(b, "</code> &#8594; <code>");
        rb_html(b, jstr(k, "cand"));
        rb_printf(b, "</code> (%.0f entries)</li>\n", jnum(k, "entries", 0));
    }
    if (n)
        rb_puts(b, "</ul>\n");
}

char *a4w4_compare_html(const cJSON *cmp, const a4w4_report_opts *o)
{
    if (!o)
        o = &default_opts;
    rbuf b = {0};
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(cmp, "totals");
    const cJSON *tm = cJSON_GetObjectItemCaseSensitive(cmp, "timing");
    int nf = (int)jnum(t, "new_failures", 0);
    char title[300];
    snprintf(title, sizeof title, "a4w4check compare: %.100s vs %.100s - %s",
             jstr(cJSON_GetObjectItemCaseSensitive(cmp, "base"), "set"),
             jstr(cJSON_GetObjectItemCaseSensitive(cmp, "cand"), "set"),
             nf ? "REGRESSION" : "NO NEW FAILURE");
    html_begin(&b, title);
    rb_puts(&b, "<h1>");
    rb_html(&b, title);
    rb_puts(&b, "</h1>\n");
    rb_printf(&b,
              "<p class=\"banner %s\" id=\"verdict\">%s Verdict: %s &#8212; %d new failure%s, "
              "%.0f fixed, %.0f outputs whose bits changed</p>\n",
              nf ? "fail" : "pass", nf ? "&#10008;" : "&#10004;",
              nf ? "REGRESSION" : "NO NEW FAILURE", nf, nf == 1 ? "" : "s", jnum(t, "fixed", 0),
              jnum(t, "bits_changed", 0));
    if (!strcmp(jstr(cJSON_GetObjectItemCaseSensitive(cmp, "cand"), "verdict"), "INCOMPLETE"))
        rb_puts(&b, "<p class=\"banner incomplete\">&#9888; The candidate run is INCOMPLETE (its "
                    "recorded verdict): see below.</p>\n");
    html_totals(&b, t, tm, o);
    html_run(&b, cJSON_GetObjectItemCaseSensitive(cmp, "base"), "Base");
    html_run(&b, cJSON_GetObjectItemCaseSensitive(cmp, "cand"), "Candidate");
    html_contract_changes(&b, cmp);
    html_items(&b, cmp, "new_failures", "New failures", 1, 1);
    html_items(&b, cmp, "fixed", "Fixed (newly passing)", 1, 0);
    html_items(&b, cmp, "still_failing", "Still failing", 0, 0);
    html_items(&b, cmp, "verdict_changes", "Other verdict changes", 1, 0);
    html_items(&b, cmp, "bits_changed", "Outputs whose bits changed", 1, 1);
    html_items(&b, cmp, "inputs_differ", "Inputs differ (not comparable)", 0, 1);
    html_items(&b, cmp, "only_base", "Only in base", 0, 0);
    html_items(&b, cmp, "only_cand", "Only in candidate", 0, 0);
    compare_parity_html(&b, cmp);
    rb_puts(&b, "<h2 id=\"timing\">Timing</h2>\n");
    if (o->reproducible)
        rb_puts(&b, "<p class=\"note\">Left out (reproducible rendering).</p>\n");
    else if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(tm, "geomean_ratio")))
        rb_printf(&b, "<p>No entry timed at &gt;= %.3f ms in both runs.</p>\n",
                  jnum(tm, "min_ms", 0));
    else {
        rb_printf(&b,
                  "<p>Geometric mean of candidate/base time: <b>%.3fx</b> over %.0f entries "
                  "timed at &gt;= %.3f ms in both runs; %.0f faster by &gt;= %.2fx.</p>\n"
                  "<table><thead><tr><th>backend</th><th class=\"n\">timed</th>"
                  "<th class=\"n\">geometric mean ratio</th></tr></thead><tbody>\n",
                  jnum(tm, "geomean_ratio", 0), jnum(tm, "timed", 0), jnum(tm, "min_ms", 0),
                  jnum(tm, "faster", 0), jnum(tm, "slower_ratio", 0));
        const cJSON *pb, *it;
        cJSON_ArrayForEach(pb, cJSON_GetObjectItemCaseSensitive(tm, "per_backend")) {
            rb_puts(&b, "<tr><td><code>");
            rb_html(&b, jstr(pb, "backend"));
            rb_printf(&b, "</code></td><td class=\"n\">%.0f</td><td class=\"n\">%.3fx</td></tr>\n",
                      jnum(pb, "timed", 0), jnum(pb, "geomean_ratio", 0));
        }
        rb_puts(&b, "</tbody></table>\n");
        const cJSON *sl = cJSON_GetObjectItemCaseSensitive(tm, "slower");
        rb_printf(&b,
                  "<details open><summary>%d entr%s slower by &gt;= %.2fx</summary>\n"
                  "<table class=\"sortable\"><thead><tr><th>case</th><th>backend</th>"
                  "<th class=\"n\">base ms</th><th class=\"n\">candidate ms</th>"
                  "<th class=\"n\">ratio</th><th>relative</th></tr></thead><tbody>\n",
                  cJSON_GetArraySize(sl), cJSON_GetArraySize(sl) == 1 ? "y" : "ies",
                  jnum(tm, "slower_ratio", 0));
        double top = jnum(cJSON_GetArrayItem(sl, 0), "ratio", 1);
        cJSON_ArrayForEach(it, sl) {
            rb_puts(&b, "<tr><td><code>");
            rb_html(&b, jstr(it, "name"));
            rb_puts(&b, "</code></td><td>");
            rb_html(&b, jstr(it, "backend"));
            rb_printf(
                &b,
                "</td><td class=\"n\">%.3f</td><td class=\"n\">%.3f</td><td class=\"n\">%.2fx</td>"
                "<td data-v=\"%.6f\"><span class=\"bar\" style=\"width:%.0fpx;background:" OI_PURPLE
                "\"></span></td></tr>\n",
                jnum(it, "base_ms", 0), jnum(it, "cand_ms", 0), jnum(it, "ratio", 0),
                jnum(it, "ratio", 0), 1 + 160 * jnum(it, "ratio", 0) / top);
        }
        rb_puts(&b, "</tbody></table></details>\n");
    }
    rb_puts(&b, "<footer class=\"meta\"><p>Rendered by <code>a4w4check compare</code>; "
                "self-contained (no network).</p></footer>\n");
    html_end(&b);
    return rb_take(&b);
}
