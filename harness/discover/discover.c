/* discover.c — the rounds of a discovery (see discover.h; contracts §4.4): plan each shape's
 * probes, pack them into calls, read the outputs back, reconstruct the ordered tree over blocks,
 * then the numeric and element steps, then the fit. */
#include "discover.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "a4w4_dispatch.h"
#include "a4w4_formats.h"
#include "discover_internal.h"
#include "export.h"
#include "fsutil.h"
#include "integrity.h"
#include "itemfile.h"

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static const a4w4_regime vregimes[6] = {A4W4_REGIME_EXACT, A4W4_REGIME_NORMAL, A4W4_REGIME_WIDE,
                                        A4W4_REGIME_SPECIAL, A4W4_REGIME_CODE0, A4W4_REGIME_TINY};
static const char *const vregime_text[6] = {"exact", "normal", "wide", "special", "code0", "tiny"};

/* ---- probe plans -------------------------------------------------------------------------- */

/* Round 1 (contracts §4.4 step 1): per gap, window counts at 2^34 on both sides, and two-unit
 * probes at 2^26 on the two nearest blocks of each side. */
static int plan_structure(dc_shape *s)
{
    dc_plist L = {0};
    int32_t n = (int32_t)s->n;
    for (int32_t t = 1; t < n; t++) {
        for (int32_t hi = t - 1; hi > 0; hi -= DC_WINDOW)
            dc_plist_add(&L, DC_GAP_COUNT, t, 0, hi > DC_WINDOW ? hi - DC_WINDOW : 0, hi, 0, 0);
        for (int32_t lo = t + 1; lo < n; lo += DC_WINDOW)
            dc_plist_add(&L, DC_GAP_COUNT, t, 1, lo, lo + DC_WINDOW < n ? lo + DC_WINDOW : n, 0, 0);
        if (t >= 2)
            dc_plist_add(&L, DC_GAP_PAIR, t, 0, t - 2, t >= 3 ? t - 3 : -1, 0, 0);
        if (t + 1 < n)
            dc_plist_add(&L, DC_GAP_PAIR, t, 1, t + 1, t + 2 < n ? t + 2 : -1, 0, 0);
    }
    return dc_install_probes(s, &L);
}

/* The fallback scan: every other position of every gap, two units per probe at 2^26. */
static int plan_scan(dc_shape *s)
{
    dc_plist L = {0};
    int32_t n = (int32_t)s->n;
    for (int32_t t = 1; t < n; t++) {
        for (int32_t k = t - 2; k >= 0; k -= 2)
            dc_plist_add(&L, DC_GAP_PAIR, t, 0, k, k >= 1 ? k - 1 : -1, 0, 0);
        for (int32_t k = t + 1; k < n; k += 2)
            dc_plist_add(&L, DC_GAP_PAIR, t, 1, k, k + 1 < n ? k + 1 : -1, 0, 0);
    }
    return dc_install_probes(s, &L);
}

/* ---- reading the structure ---------------------------------------------------------------- */

/* The units of a two-unit probe that survived: bit 0 the first (value 1), bit 1 the second
 * (value 2); -1 when the output is no such sum. */
static int pair_survivors(const dc_probe *pr, float v)
{
    float u = pr->p[1] ? -v : v;
    if (u != 0.0f && u != 1.0f && u != 2.0f && u != 3.0f)
        return -1;
    return (int)u;
}

/* Gap data from the window counts: lo[t] = survivors below, hi[t] = n - survivors above
 * (contracts §4.4 step 1). 0, or -1 with err when a count is no count. */
static int gaps_from_counts(dc_shape *s, char *err, size_t errlen)
{
    size_t n = s->n;
    for (size_t t = 1; t < n; t++) {
        s->gaps.lo[t] = 0;
        s->gaps.hi[t] = (uint32_t)n;
    }
    for (size_t i = 0; i < s->nprobes; i++) {
        const dc_probe *pr = &s->probes[i];
        if (pr->kind != DC_GAP_COUNT)
            continue;
        float u = pr->p[1] ? -s->value[i] : s->value[i];
        if (!(u >= 0.0f) || u > (float)(pr->p[3] - pr->p[2]) || u != floorf(u)) {
            char d[96];
            dc_probe_describe(pr, d, sizeof d);
            snprintf(err, errlen, "%s: output %g is not a count of surviving units", d,
                     (double)s->value[i]);
            return -1;
        }
        if (pr->p[1])
            s->gaps.hi[pr->p[0]] -= (uint32_t)u;
        else
            s->gaps.lo[pr->p[0]] += (uint32_t)u;
    }
    return 0;
}

/* 1 when every two-unit probe agrees with the gap data: a unit below survives iff it is below
 * lo[t], above iff it is at or above hi[t]. */
static int pairs_agree(const dc_shape *s, char *err, size_t errlen)
{
    for (size_t i = 0; i < s->nprobes; i++) {
        const dc_probe *pr = &s->probes[i];
        if (pr->kind != DC_GAP_PAIR)
            continue;
        int got = pair_survivors(pr, s->value[i]), want = 0;
        for (int u = 0; u < 2; u++) {
            int32_t k = pr->p[2 + u];
            if (k < 0)
                continue;
            int survives = pr->p[1] ? (uint32_t)k >= s->gaps.hi[pr->p[0]]
                                    : (uint32_t)k < s->gaps.lo[pr->p[0]];
            want |= survives << u;
        }
        if (got != want) {
            char d[96];
            dc_probe_describe(pr, d, sizeof d);
            snprintf(err, errlen, "%s gave %g, the window counts predict %d", d,
                     (double)s->value[i], pr->p[1] ? -want : want);
            return 0;
        }
    }
    return 1;
}

/* Gap data from the full two-unit scan: lo[t] = 1 + the highest surviving position below,
 * hi[t] = the lowest surviving position above; survival must be monotone (contracts §4.4). */
static int gaps_from_scan(dc_shape *s, char *err, size_t errlen)
{
    size_t n = s->n;
    uint8_t *surv = malloc(n);
    if (!surv)
        return -2;
    for (size_t t = 1; t < n; t++) {
        memset(surv, 2, n);
        for (size_t i = 0; i < s->nprobes; i++) {
            const dc_probe *pr = &s->probes[i];
            if ((size_t)pr->p[0] != t)
                continue;
            int b = pair_survivors(pr, s->value[i]);
            for (int u = 0; u < 2; u++)
                if (pr->p[2 + u] >= 0)
                    surv[pr->p[2 + u]] = b < 0 ? 3 : (uint8_t)((b >> u) & 1);
        }
        uint32_t lo = 0, hi = (uint32_t)n;
        for (size_t k = 0; k + 1 < t; k++)
            if (surv[k] == 1)
                lo = (uint32_t)k + 1;
        for (size_t k = n; k-- > t + 1;)
            if (surv[k] == 1)
                hi = (uint32_t)k;
        for (size_t k = 0; k < n; k++) {
            if (k + 1 == t || k == t)
                continue;
            int want = k < t ? k < lo : k >= hi;
            if (surv[k] != want) {
                snprintf(err, errlen, "gap (%zu,%zu): the unit at block %zu %s, which no "
                         "ordered tree allows with c = [%u,%zu) and [%zu,%u)", t - 1, t, k,
                         surv[k] == 1 ? "survived" : surv[k] == 0 ? "was lost" : "gave no count",
                         lo, t, t, hi);
                free(surv);
                return -1;
            }
        }
        s->gaps.lo[t] = lo;
        s->gaps.hi[t] = hi;
    }
    free(surv);
    return 0;
}

static void describe_family(const dc_family *f, size_t n, char *buf, size_t len)
{
    size_t o = (size_t)snprintf(buf, len, "order=%s, %u block%s per node, reduce=%s, splits",
                                f->order ? "desc" : "asc", f->fuse, f->fuse == 1 ? "" : "s",
                                f->reduce ? "pairwise" : "chain");
    for (size_t j = 0; j < f->nsplits && o < len; j++)
        o += (size_t)snprintf(buf + o, len - o, " [%u,%zu)", f->start[j],
                              j + 1 < f->nsplits ? (size_t)f->start[j + 1] : n);
    if (o < len)
        snprintf(buf + o, len - o, ", combine=%s", f->combine ? "pairwise" : "chain");
}

/* Evidence of the structure: what the gaps showed and the family it matches. */
static void structure_evidence(dc_shape *s)
{
    char d[256];
    dc_text_add(&s->ev, "- tree over the %zu blocks: %zu nodes\n", s->n, s->tree.nnodes);
    size_t shown = 0;
    for (size_t t = 1; t < s->n && shown < 6; t++) {
        if (t > 3 && t + 3 < s->n && s->gaps.lo[t] != 0 && s->gaps.hi[t] != s->n &&
            s->gaps.lo[t] + 1 != t && s->gaps.hi[t] != t + 1)
            continue;
        if (t > 3 && t + 3 < s->n && shown >= 3 && s->gaps.lo[t] != 0)
            continue;
        char w[64] = "";
        for (size_t i = 0; i < s->nprobes; i++)
            if ((size_t)s->probes[i].p[0] == t && (s->probes[i].kind == DC_GAP_COUNT ||
                                                   s->probes[i].kind == DC_GAP_PAIR)) {
                dc_probe_where(s, i, w, sizeof w);
                break;
            }
        dc_text_add(&s->ev, "  - gap (%zu,%zu): blocks [%u,%zu) and [%zu,%u) meet first "
                    "(%u units kept below, %zu above; %s)\n", t - 1, t, s->gaps.lo[t], t, t,
                    s->gaps.hi[t], s->gaps.lo[t], s->n - s->gaps.hi[t], w);
        shown++;
    }
    if (s->nfam <= 0) {
        dc_text_add(&s->ev, "- the tree is no tree of the model family (no order, fuse, reduce, "
                    "splits and combine give it)\n");
        return;
    }
    describe_family(&s->fam[0], s->n, d, sizeof d);
    dc_text_add(&s->ev, "- structure: %s (%d spelling%s of the family give this tree; the "
                "simplest first)\n", d, s->nfam, s->nfam == 1 ? "" : "s");
    for (size_t j = 1; j < s->fam[0].nsplits; j++) {
        uint32_t b = s->fam[0].start[j];
        dc_text_add(&s->ev, "  - split at block %u (element %u): gap (%u,%u) joins [%u,%u) and "
                    "[%u,%u)\n", b, b * 32, b - 1, b, s->gaps.lo[b], b, b, s->gaps.hi[b]);
    }
}

/* What the gaps said about repeats: a gap whose probes changed between runs. */
static void mark_varied(dc_shape *s, size_t probe)
{
    const dc_probe *pr = &s->probes[probe];
    if ((pr->kind == DC_GAP_COUNT || pr->kind == DC_GAP_PAIR) && s->gap_varied &&
        !s->gap_varied[pr->p[0]]) {
        s->gap_varied[pr->p[0]] = 1;
        s->nvaried_gaps++;
    }
}

/* After round 1 or the scan: the tree, the family, the next phase. */
static int read_structure(dc_shape *s)
{
    char err[512] = "";
    if (s->n < 2) {
        s->nfam = dc_family_parse(&s->gaps, s->fam, 16);
        return dc_numeric_plan(s) ? -2 : (s->phase = DC_PHASE_NUMERIC, 0);
    }
    int bad = s->phase == DC_PHASE_STRUCTURE
                  ? gaps_from_counts(s, err, sizeof err) || !pairs_agree(s, err, sizeof err)
                  : gaps_from_scan(s, err, sizeof err);
    if (bad && s->phase == DC_PHASE_STRUCTURE && !s->nondet) {
        dc_text_add(&s->ev, "- the window counts (2^34, up to %d units) disagree with the "
                    "two-unit probes (2^26): %s; a node truncates its inputs, so every position "
                    "is probed with two units at 2^26\n", DC_WINDOW, err);
        s->phase = DC_PHASE_SCAN;
        return plan_scan(s);
    }
    int rc = bad ? -1 : dc_tree_build(&s->gaps, &s->tree, err, sizeof err);
    if (rc == -2)
        return -2;
    s->have_tree = rc == 0;
    if (rc) {
        dc_text_add(&s->ev, "- no ordered tree over blocks: %s\n", err);
        s->nfam = 0;
        s->phase = DC_PHASE_DONE;
        return 0;
    }
    s->nfam = dc_family_parse(&s->gaps, s->fam, 16);
    if (s->nfam < 0)
        return -2;
    structure_evidence(s);
    if (s->nfam == 0 || s->nondet) {
        s->phase = DC_PHASE_DONE;
        return 0;
    }
    s->phase = DC_PHASE_NUMERIC;
    return dc_numeric_plan(s);
}

/* ---- the discovery ------------------------------------------------------------------------ */

static int setup_validation(dc_shape *s, const a4w4_discover_opts *o, size_t index)
{
    size_t nv = 6 * (size_t)o->validate_cases;
    s->vcases = calloc(nv, sizeof *s->vcases);
    s->vy = calloc(nv * o->repeats, sizeof *s->vy);
    if (!s->vcases || !s->vy)
        return -2;
    for (size_t r = 0; r < 6; r++)
        for (unsigned i = 0; i < o->validate_cases; i++) {
            a4w4_case *c = &s->vcases[s->nvcases++];
            snprintf(c->name, sizeof c->name, "discover/%zux%zux%zu/v/%s/%u", s->sh.M, s->sh.N,
                     s->sh.K, vregime_text[r], i);
            c->M = s->sh.M;
            c->N = s->sh.N;
            c->K = s->sh.K;
            c->regime = vregimes[r];
            c->mode = A4W4_ROUND_UP;
            snprintf(c->regime_text, sizeof c->regime_text, "%s", vregime_text[r]);
            c->seed = mix64(o->seed ^ mix64((uint64_t)index * 1000003u + r * 101u + i + 1));
            snprintf(c->tags, sizeof c->tags, "discover");
        }
    return 0;
}

/* The family of shape i (contracts §4.4, the rule of K): the first shape with its N and its
 * padded-M bucket (getPaddedM gl 0, contracts §5.1). */
static size_t family_of(const a4w4_discovery *d, size_t i)
{
    const a4w4_shape *x = &d->shapes[i];
    for (size_t j = 0; j < i; j++)
        if (d->shapes[j].N == x->N && a4w4_padded_m((int)d->shapes[j].M, 1, 1, 0) ==
                                          a4w4_padded_m((int)x->M, 1, 1, 0))
            return j;
    return i;
}

a4w4_hstatus a4w4_discover_new(const a4w4_discover_opts *o, a4w4_discovery **out, char *err,
                               size_t errlen)
{
    *out = NULL;
    if (!o->nshapes || o->nshapes > A4W4_DISCOVER_MAX_SHAPES || !o->repeats ||
        !o->validate_cases) {
        snprintf(err, errlen, "discover needs 1..%d shapes, repeats >= 1 and at least one "
                 "validation case per regime", A4W4_DISCOVER_MAX_SHAPES);
        return A4W4_ST_BADINPUT;
    }
    for (size_t i = 0; i < o->nshapes; i++) {
        const a4w4_shape *x = &o->shapes[i];
        if (!x->M || !x->N || !x->K || x->K % 32 || x->K > A4W4_DISCOVER_MAX_K ||
            x->M > A4W4_CASE_DIM_MAX || x->N > A4W4_CASE_DIM_MAX) {
            snprintf(err, errlen, "shape %zux%zux%zu: M, N >= 1 (at most %u), K a positive "
                     "multiple of 32 up to %u", x->M, x->N, x->K, A4W4_CASE_DIM_MAX,
                     A4W4_DISCOVER_MAX_K);
            return A4W4_ST_BADINPUT;
        }
    }
    a4w4_discovery *d = calloc(1, sizeof *d);
    if (!d || !(d->shapes = malloc(o->nshapes * sizeof *d->shapes)) ||
        !(d->group = malloc(o->nshapes * sizeof *d->group)) ||
        !(d->sh = calloc(o->nshapes, sizeof *d->sh))) {
        a4w4_discover_free(d);
        snprintf(err, errlen, "out of memory");
        return A4W4_ST_NOMEM;
    }
    d->o = *o;
    d->o.threads = o->threads < 1 ? 1 : o->threads;
    d->nshapes = o->nshapes;
    memcpy(d->shapes, o->shapes, o->nshapes * sizeof *d->shapes);
    for (size_t i = 0; i < o->nshapes; i++)
        d->group[i] = o->group ? o->group[i] : i;
    d->o.shapes = d->shapes;
    d->o.group = d->group;
    for (size_t i = 0; i < o->nshapes; i++) {
        dc_shape *s = &d->sh[i];
        s->sh = o->shapes[i];
        s->n = s->sh.K / 32;
        s->w_side = s->sh.N > s->sh.M;
        s->slots = s->w_side ? s->sh.N : s->sh.M;
        s->probed = d->group[i];
        s->tree.root = -1;
        s->validate_only = o->validate_only && o->validate_only[i];
        s->family = family_of(d, i);
        int rc = dc_gaps_init(&s->gaps, s->n) || setup_validation(s, o, i) ||
                 !(s->gap_varied = calloc(s->n + 1, 1));
        if (!rc && s->probed == i && !s->validate_only)
            rc = plan_structure(s);
        if (rc) {
            a4w4_discover_free(d);
            snprintf(err, errlen, "out of memory");
            return A4W4_ST_NOMEM;
        }
        s->phase = s->probed == i && !s->validate_only ? DC_PHASE_STRUCTURE : DC_PHASE_DONE;
    }
    *out = d;
    return A4W4_ST_OK;
}

static void free_calls(a4w4_discovery *d)
{
    for (size_t i = 0; i < d->ncalls; i++)
        free(d->calls[i].y);
    free(d->calls);
    d->calls = NULL;
    d->ncalls = 0;
}

void a4w4_discover_free(a4w4_discovery *d)
{
    if (!d)
        return;
    free_calls(d);
    for (size_t i = 0; d->sh && i < d->nshapes; i++) {
        dc_shape *s = &d->sh[i];
        free(s->probes);
        free(s->value);
        free(s->bits);
        free(s->gap_varied);
        free(s->hist);
        free(s->hist_bits);
        dc_gaps_free(&s->gaps);
        dc_tree_free(&s->tree);
        for (size_t k = 0; s->vy && k < s->nvcases * d->o.repeats; k++)
            free(s->vy[k]);
        free(s->vy);
        free(s->vcases);
        dc_text_free(&s->ev);
        dc_text_free(&s->defects_ev);
    }
    free(d->sh);
    free(d->shapes);
    free(d->group);
    free(d);
}

/* ---- rounds -------------------------------------------------------------------------------- */

static int add_call(a4w4_discovery *d, size_t *cap, const a4w4_discover_call *c)
{
    if (d->ncalls == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        a4w4_discover_call *p = realloc(d->calls, nc * sizeof *p);
        if (!p)
            return -2;
        d->calls = p;
        *cap = nc;
    }
    d->calls[d->ncalls++] = *c;
    return 0;
}

/* The calls of the current round: every shape's probes, `slots` to a call, each call repeated;
 * in round 1 also every validation case, repeated. */
static int build_calls(a4w4_discovery *d)
{
    size_t cap = 0;
    unsigned R = d->o.repeats;
    free_calls(d);
    for (size_t i = 0; i < d->nshapes; i++) {
        dc_shape *s = &d->sh[i];
        s->first_call = d->ncalls;
        s->ncalls = 0;
        int probing = s->phase != DC_PHASE_DONE;
        size_t ncalls = probing ? (s->nprobes + s->slots - 1) / s->slots : 0;
        for (size_t c = 0; c < ncalls; c++)
            for (unsigned rep = 0; rep < R; rep++) {
                a4w4_discover_call call;
                memset(&call, 0, sizeof call);
                call.shape = i;
                call.rep = rep;
                snprintf(call.c.name, sizeof call.c.name, "discover/%zux%zux%zu/r%u/c%zu%s%.0u",
                         s->sh.M, s->sh.N, s->sh.K, d->round_no, c, rep ? "/rep" : "", rep);
                call.c.M = s->sh.M;
                call.c.N = s->sh.N;
                call.c.K = s->sh.K;
                call.c.regime = A4W4_REGIME_EXACT;
                snprintf(call.c.regime_text, sizeof call.c.regime_text, "probe");
                call.c.seed = mix64(d->o.seed ^ (d->round_no * 7919u + c));
                if (add_call(d, &cap, &call))
                    return -2;
                s->ncalls++;
            }
        s->probes_total += probing ? s->nprobes : 0;
    }
    for (size_t i = 0; d->round_no == 1 && i < d->nshapes; i++) {
        dc_shape *s = &d->sh[i];
        for (size_t v = 0; v < s->nvcases; v++)
            for (unsigned rep = 0; rep < R; rep++) {
                a4w4_discover_call call = {s->vcases[v], i, 1, rep, v, NULL};
                if (rep)
                    snprintf(call.c.name + strlen(call.c.name),
                             sizeof call.c.name - strlen(call.c.name), "/rep%u", rep);
                if (add_call(d, &cap, &call))
                    return -2;
            }
    }
    return 0;
}

/* Is any work left? Plan the next round when so. */
static int next_round(a4w4_discovery *d)
{
    int any = 0;
    for (size_t i = 0; i < d->nshapes; i++)
        any |= d->sh[i].phase != DC_PHASE_DONE;
    if (!any && d->round_no > 0) {
        d->done = 1;
        free_calls(d);
        return 0;
    }
    d->round_no++;
    return build_calls(d);
}

a4w4_discover_call *a4w4_discover_round(a4w4_discovery *d, size_t *n, unsigned *round_no)
{
    if (!d->done && d->round_no == 0 && next_round(d)) {
        *n = 0;
        return NULL;
    }
    *n = d->done ? 0 : d->ncalls;
    if (round_no)
        *round_no = d->round_no;
    return d->done ? NULL : d->calls;
}

size_t a4w4_discover_round_probes(const a4w4_discovery *d)
{
    size_t n = 0;
    for (size_t i = 0; !d->done && i < d->nshapes; i++)
        if (d->sh[i].phase != DC_PHASE_DONE)
            n += d->sh[i].nprobes;
    return n;
}

/* The probe call of shape s: its index among s's calls (repeats counted once). */
static size_t call_index(const a4w4_discovery *d, size_t i)
{
    const a4w4_discover_call *c = &d->calls[i];
    return (i - d->sh[c->shape].first_call) / d->o.repeats;
}

int a4w4_discover_call_data(const a4w4_discovery *d, size_t i, a4w4_case_data *out)
{
    const a4w4_discover_call *c = &d->calls[i];
    if (c->generated) {
        a4w4_sample full = {.full = 1};
        return a4w4_case_generate(&d->sh[c->shape].vcases[c->item], &full, out);
    }
    const dc_shape *s = &d->sh[c->shape];
    size_t M = s->sh.M, N = s->sh.N, K = s->sh.K, slots = s->slots;
    size_t first = call_index(d, i) * slots;
    uint8_t *pf = calloc(slots, K / 2), *ps = malloc(slots * (K / 32));
    size_t other = s->w_side ? M : N;
    uint8_t *of = malloc(other * (K / 2)), *os = malloc(other * (K / 32));
    int rc = A4W4_ENOMEM;
    if (pf && ps && of && os) {
        memset(of, 0x22, other * (K / 2)); /* 1.0 in both nibbles (contracts §1) */
        memset(os, 127, other * (K / 32));
        for (size_t r = 0; r < slots; r++) {
            dc_probe zero = {DC_ZERO, {0}};
            const dc_probe *pr = first + r < s->nprobes ? &s->probes[first + r] : &zero;
            dc_probe_write(pr, K, pf + r * (K / 2), ps + r * (K / 32));
        }
        rc = s->w_side ? a4w4_case_data_load(of, os, pf, ps, M, N, K, out)
                       : a4w4_case_data_load(pf, ps, of, os, M, N, K, out);
    }
    free(pf);
    free(ps);
    free(of);
    free(os);
    return rc;
}

void a4w4_discover_round_hash(const a4w4_discovery *d, char *buf, size_t len)
{
    uint64_t h = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < d->ncalls; i++)
        for (const char *p = d->calls[i].c.name; *p; p++)
            h = (h ^ (uint8_t)*p) * 0x100000001B3ull;
    h ^= mix64(d->o.seed + d->o.repeats * 31u + d->round_no);
    snprintf(buf, len, "%016llx", (unsigned long long)h);
}

/* ---- reading a round ----------------------------------------------------------------------- */

/* Probe outputs of shape s from its calls: the value of every probe (repeat 0), the position
 * check (every output of a probe row or column equal) and the repeat check. */
static void read_probes(a4w4_discovery *d, dc_shape *s)
{
    size_t M = s->sh.M, N = s->sh.N, other = s->w_side ? M : N;
    unsigned R = d->o.repeats;
    free(s->value);
    free(s->bits);
    s->value = malloc((s->nprobes ? s->nprobes : 1) * sizeof *s->value);
    s->bits = malloc((s->nprobes ? s->nprobes : 1) * sizeof *s->bits);
    if (!s->value || !s->bits)
        return;
    s->round_no = d->round_no;
    for (size_t p = 0; p < s->nprobes; p++) {
        size_t call = s->first_call + (p / s->slots) * R, r = p % s->slots;
        const uint16_t *y = d->calls[call].y;
        uint16_t v = s->w_side ? y[r] : y[r * N];
        for (size_t o = 1; o < other; o++)
            if ((s->w_side ? y[o * N + r] : y[r * N + o]) != v)
                s->position_dep = 1;
        for (unsigned k = 1; k < R; k++) {
            const uint16_t *z = d->calls[call + k].y;
            if ((s->w_side ? z[r] : z[r * N]) != v) {
                s->nondet = 1;
                mark_varied(s, p);
            }
        }
        s->bits[p] = v;
        s->value[p] = dc_bf16_value(v);
    }
    s->calls_total += s->ncalls;
    if (s->nhist + s->nprobes > s->hist_cap) {
        size_t cap = s->nhist + s->nprobes + 256;
        dc_probe *h = realloc(s->hist, cap * sizeof *h);
        uint16_t *b = h ? realloc(s->hist_bits, cap * sizeof *b) : NULL;
        if (h)
            s->hist = h;
        if (!b)
            return; /* the check then covers fewer probes */
        s->hist_bits = b;
        s->hist_cap = cap;
    }
    memcpy(s->hist + s->nhist, s->probes, s->nprobes * sizeof *s->probes);
    memcpy(s->hist_bits + s->nhist, s->bits, s->nprobes * sizeof *s->bits);
    s->nhist += s->nprobes;
}

/* Keep the validation outputs of round 1 (ownership moves to the shape). */
static void keep_validation(a4w4_discovery *d)
{
    unsigned R = d->o.repeats;
    for (size_t i = 0; i < d->ncalls; i++) {
        a4w4_discover_call *c = &d->calls[i];
        if (!c->generated)
            continue;
        dc_shape *s = &d->sh[c->shape];
        s->vy[c->item * R + c->rep] = c->y;
        c->y = NULL;
        s->calls_total++;
    }
    for (size_t i = 0; i < d->nshapes; i++) {
        dc_shape *s = &d->sh[i];
        for (size_t v = 0; v < s->nvcases; v++)
            for (unsigned k = 1; k < R; k++)
                if (s->vy[v * R] && s->vy[v * R + k] &&
                    memcmp(s->vy[v * R], s->vy[v * R + k], s->sh.M * s->sh.N * 2))
                    s->nondet = s->nondet_cases = 1;
    }
}

static int finish_shape(a4w4_discovery *d, size_t i)
{
    dc_shape *s = &d->sh[i];
    if (s->validate_only) {
        const dc_shape *lead = &d->sh[s->family];
        if (!lead->gen_ok) {
            s->res.verdict = A4W4_DISCOVER_NO_FIT;
            dc_text_add(&s->ev, "- not probed; the probed shapes of its family give no rule of "
                        "K to validate here: %s\n", lead->gen_why);
            return 0;
        }
        s->forced = &lead->gen;
    } else if (s->probed != i) {
        const dc_shape *lead = &d->sh[s->probed];
        if (lead->res.verdict != A4W4_DISCOVER_FOUND) {
            s->res.verdict = A4W4_DISCOVER_NO_FIT;
            dc_text_add(&s->ev, "- the first shape of this group found no contract\n");
            return 0;
        }
        s->forced = &lead->res.contract;
    }
    if (s->position_dep)
        dc_text_add(&s->ev, "- the outputs of one probe differed between its columns (or rows): "
                    "the order depends on the output position\n");
    dc_fit(s, &d->o);
    s->res.nondeterministic = s->nondet;
    s->res.probes = s->probes_total;
    s->res.calls = s->calls_total;
    return 0;
}

/* Analyse what shape s's probes showed and plan its next phase. */
static int analyse(dc_shape *s)
{
    switch (s->phase) {
    case DC_PHASE_STRUCTURE:
    case DC_PHASE_SCAN:
        return read_structure(s);
    case DC_PHASE_NUMERIC:
        dc_numeric_read(s);
        s->phase = DC_PHASE_DONE;
        if (s->num.prec_lo > 0 && s->num.prec_lo == s->num.prec_hi) {
            if (dc_leaf_plan(s))
                return -2;
            if (s->nprobes)
                s->phase = DC_PHASE_LEAF;
        }
        return 0;
    case DC_PHASE_LEAF:
        dc_leaf_read(s);
        s->phase = DC_PHASE_DONE;
        return 0;
    case DC_PHASE_FPREV:
        dc_fprev_read(s);
        s->phase = DC_PHASE_DONE;
        return 0;
    case DC_PHASE_DONE:
        return 0;
    }
    return 0;
}

static const char *status_why(int rc)
{
    return rc == A4W4_EUNSUPPORTED ? "not applicable" : rc == A4W4_RUN_CRASHED ? "crashed"
           : rc == A4W4_RUN_TIMEOUT ? "timed out" : rc == A4W4_RUN_REFUSED ? "refused"
                                                   : "failed";
}

/* Run call i through b; y is allocated, poisoned and kept in the call. */
static a4w4_hstatus run_call(a4w4_discovery *d, size_t i, a4w4_backend *b,
                             const a4w4_run_identity *id, char *err, size_t errlen)
{
    a4w4_discover_call *c = &d->calls[i];
    a4w4_case_data data;
    if (a4w4_discover_call_data(d, i, &data) != A4W4_OK) {
        snprintf(err, errlen, "%s: out of memory building the operands", c->c.name);
        return A4W4_ST_NOMEM;
    }
    size_t n = c->c.M * c->c.N;
    free(c->y);
    if (!(c->y = malloc(n * sizeof *c->y))) {
        a4w4_case_data_free(&data);
        snprintf(err, errlen, "%s: out of memory for the outputs", c->c.name);
        return A4W4_ST_NOMEM;
    }
    /* the call writes between poisoned guards (engine/integrity.h): a write outside its
     * outputs is named, never corrupts the process */
    a4w4_out_buf out;
    if (a4w4_out_alloc(&out, c->c.M, c->c.N)) {
        a4w4_case_data_free(&data);
        snprintf(err, errlen, "%s: out of memory for the outputs", c->c.name);
        return A4W4_ST_NOMEM;
    }
    a4w4_out_poison(&out);
    a4w4_sample full = {.full = 1, .nrows = c->c.M, .ncols = c->c.N};
    char why[512] = "", breach[256] = "";
    a4w4_run_args args = {.c = &c->c, .d = &data, .s = &full, .y = out.y, .why = why,
                          .whylen = sizeof why, .id = id, .y_before = out.before,
                          .y_after = out.after};
    int rc = b->type->run(b->ctx, &args);
    int breached = a4w4_out_breached(&out, breach, sizeof breach);
    memcpy(c->y, out.y, n * sizeof *c->y);
    a4w4_out_free(&out);
    a4w4_case_data_free(&data);
    if (breached) {
        snprintf(err, errlen, "%s: backend %s %s", c->c.name, b->name, breach);
        return A4W4_ST_BADINPUT;
    }
    if (rc == A4W4_RUN_SKIP) {
        snprintf(err, errlen, "%s: %s", c->c.name, why[0] ? why : "no result");
        return A4W4_ST_NA;
    }
    if (rc != A4W4_OK) {
        snprintf(err, errlen, "%s: backend %s %s%s%s", c->c.name, b->name, status_why(rc),
                 why[0] ? ": " : "", why);
        return rc == A4W4_ENOMEM ? A4W4_ST_NOMEM : A4W4_ST_BADINPUT;
    }
    for (size_t k = 0; k < n; k++)
        if (c->y[k] == A4W4_POISON_BF16) {
            snprintf(err, errlen, "%s: backend %s left output (%zu, %zu) unwritten", c->c.name,
                     b->name, k / c->c.N, k % c->c.N);
            return A4W4_ST_BADINPUT;
        }
    return A4W4_ST_OK;
}

a4w4_hstatus a4w4_discover_run_round(a4w4_discovery *d, a4w4_backend *b,
                                     const a4w4_run_identity *id,
                                     void (*progress)(void *ctx, size_t done, size_t total),
                                     void *progress_ctx, char *err, size_t errlen)
{
    for (size_t i = 0; i < d->ncalls; i++) {
        a4w4_hstatus st = run_call(d, i, b, id, err, errlen);
        if (st != A4W4_ST_OK)
            return st;
        if (progress)
            progress(progress_ctx, i + 1, d->ncalls);
    }
    if (d->round_no == 1)
        keep_validation(d);
    for (size_t i = 0; i < d->nshapes; i++) {
        dc_shape *s = &d->sh[i];
        if (s->phase == DC_PHASE_DONE)
            continue;
        read_probes(d, s);
        if (!s->value || analyse(s)) {
            snprintf(err, errlen, "out of memory analysing the probes");
            return A4W4_ST_NOMEM;
        }
    }
    int all_done = 1;
    for (size_t i = 0; i < d->nshapes; i++)
        all_done &= d->sh[i].phase == DC_PHASE_DONE;
    int fprev = 0; /* no candidate fits a shape: its pairwise probes first, then finish */
    for (size_t i = 0; all_done && i < d->nshapes; i++) {
        int rc = dc_fprev_start(&d->sh[i], i, &d->o);
        if (rc < 0) {
            snprintf(err, errlen, "out of memory planning the pairwise probes");
            return A4W4_ST_NOMEM;
        }
        fprev |= rc;
    }
    all_done &= !fprev;
    /* the probed shapes first, then each family's rule of K, then the shapes that only
     * validate it */
    for (int pass = 0; all_done && pass < 3; pass++)
        for (size_t i = 0; i < d->nshapes; i++) {
            if (pass == 1 && d->sh[i].family == i)
                dc_generalize(d->sh, d->nshapes, i, &d->o);
            else if (pass != 1 && d->sh[i].validate_only == (pass == 2))
                finish_shape(d, i);
        }
    if (next_round(d)) {
        snprintf(err, errlen, "out of memory planning the next round");
        return A4W4_ST_NOMEM;
    }
    return A4W4_ST_OK;
}

/* Remove the bundles of calls [0, n) and the manifest from dir, and dir when that leaves it
 * empty: what a failed write left. */
static void remove_round(const a4w4_discovery *d, const char *dir, size_t n)
{
    char path[4400];
    for (size_t i = 0; i < n; i++)
        if (!a4w4_item_path(dir, d->calls[i].c.name, path, sizeof path))
            remove(path);
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    remove(path);
    rmdir(dir); /* fails, harmlessly, when other files are there */
}

void a4w4_discover_remove_round(const a4w4_discovery *d, const char *dir)
{
    remove_round(d, dir, d->ncalls);
}

int a4w4_discover_write_round(const a4w4_discovery *d, const char *dir, const char *tool_version,
                              char *err, size_t errlen)
{
    char hash[32];
    a4w4_discover_round_hash(d, hash, sizeof hash);
    a4w4_export_opts eo = {hash, tool_version, 0};
    const char **names = calloc(d->ncalls ? d->ncalls : 1, sizeof *names);
    const char **why = calloc(d->ncalls ? d->ncalls : 1, sizeof *why);
    double bytes = 0;
    int rc = -1;
    size_t i = 0;
    if (!names || !why) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (a4w4_mkdir_p(dir, err, errlen))
        goto out;
    for (; i < d->ncalls; i++) {
        a4w4_case_data data;
        double b = 0;
        if (a4w4_discover_call_data(d, i, &data) != A4W4_OK) {
            snprintf(err, errlen, "%s: out of memory building the operands", d->calls[i].c.name);
            goto out;
        }
        int w = a4w4_export_case_data(d->calls[i].c.name, &d->calls[i].c, &data, &eo, NULL, dir, &b,
                                      err, errlen);
        a4w4_case_data_free(&data);
        if (w)
            goto out;
        names[i] = d->calls[i].c.name;
        bytes += b;
    }
    rc = a4w4_export_manifest(dir, "discover", "", "1/1", &eo, names, why, d->ncalls, bytes, err,
                              errlen);
out:
    if (rc && names && why)
        remove_round(d, dir, i); /* never a partial round */
    free(names);
    free(why);
    return rc;
}

const a4w4_discover_shape_result *a4w4_discover_result(const a4w4_discovery *d, size_t shape)
{
    return shape < d->nshapes && d->done ? &d->sh[shape].res : NULL;
}

const char *a4w4_discover_evidence(const a4w4_discovery *d, size_t shape)
{
    return shape < d->nshapes && d->sh[shape].ev.s ? d->sh[shape].ev.s : "";
}

const char *a4w4_discover_defects(const a4w4_discovery *d, size_t shape)
{
    return shape < d->nshapes && d->sh[shape].defects_ev.s ? d->sh[shape].defects_ev.s : "";
}

/* " MxNxK" of every shape whose validate_only is vo (and, v >= 0, whose verdict is v). */
static size_t shape_list(const a4w4_discovery *d, int vo, int v, char *buf, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < d->nshapes && o < len; i++)
        if (d->sh[i].validate_only == vo && (v < 0 || (int)d->sh[i].res.verdict == v))
            o += (size_t)snprintf(buf + o, len - o, " %zux%zux%zu", d->shapes[i].M,
                                  d->shapes[i].N, d->shapes[i].K);
    return o;
}

/* 1 when family f has a validated rule of K: its rule exists, every probed shape of it found
 * a contract and every validate-only shape of it took the rule. */
static int family_rule(const a4w4_discovery *d, size_t f)
{
    if (!d->sh[f].gen_ok)
        return 0;
    for (size_t i = 0; i < d->nshapes; i++)
        if (d->sh[i].family == f && d->sh[i].res.verdict != A4W4_DISCOVER_FOUND)
            return 0;
    return 1;
}

/* The comment lines of the found contracts: the probed shapes, those only validated, the
 * defects per shape. */
static size_t found_head(const a4w4_discovery *d, const char *head, char *buf, size_t len)
{
    size_t o = (size_t)snprintf(buf, len, "# %s: probed at", head);
    o += shape_list(d, 0, -1, buf + o, o < len ? len - o : 0);
    int vo = 0;
    for (size_t i = 0; i < d->nshapes; i++)
        vo |= d->sh[i].validate_only;
    if (vo && o < len) {
        o += (size_t)snprintf(buf + o, len - o, "\n# rules of K validated (not probed) at");
        size_t at = o;
        o += shape_list(d, 1, A4W4_DISCOVER_FOUND, buf + o, o < len ? len - o : 0);
        if (o == at && o < len)
            o += (size_t)snprintf(buf + o, len - o, " none");
        char rej[1024];
        if (shape_list(d, 1, A4W4_DISCOVER_NO_FIT, rej, sizeof rej) && o < len)
            o += (size_t)snprintf(buf + o, len - o, "; rejected at%s", rej);
    }
    for (size_t i = 0; i < d->nshapes && o < len; i++)
        if (d->sh[i].res.verdict == A4W4_DISCOVER_FOUND && d->sh[i].res.defects)
            o += (size_t)snprintf(buf + o, len - o, "\n# %zux%zux%zu: %zu validation outputs "
                                  "are defects (no order gives them; see the evidence)",
                                  d->shapes[i].M, d->shapes[i].N, d->shapes[i].K,
                                  d->sh[i].res.defects);
    return o;
}

/* The rule line of family f: `when Mpad==P[,N==N]: C`, N named when another family of the
 * bucket has another rule. */
static size_t family_line(const a4w4_discovery *d, size_t f, const char *c, char *buf,
                          size_t len)
{
    const a4w4_shape *x = &d->shapes[f];
    int pm = a4w4_padded_m((int)x->M, 1, 1, 0), by_n = 0;
    char cj[A4W4_CONTRACT_MAX];
    for (size_t j = 0; j < d->nshapes; j++)
        if (d->sh[j].family == j && j != f && a4w4_padded_m((int)d->shapes[j].M, 1, 1, 0) == pm)
            by_n |= !family_rule(d, j) || a4w4_contract_format(&d->sh[j].gen, cj, sizeof cj) < 0 ||
                    strcmp(c, cj);
    if (by_n)
        return (size_t)snprintf(buf, len, "\nwhen Mpad==%d,N==%zu: %s", pm, x->N, c);
    return (size_t)snprintf(buf, len, "\nwhen Mpad==%d: %s", pm, c);
}

/* The found contracts: per family its rule of K, or its probed shapes' own rules. */
static int found_text(const a4w4_discovery *d, const char *head, char *buf, size_t len)
{
    char c0[A4W4_CONTRACT_MAX] = "", ci[A4W4_CONTRACT_MAX];
    int same = 1, any = 0;
    for (size_t i = 0; i < d->nshapes; i++) {
        any |= !d->sh[i].validate_only && d->sh[i].res.verdict == A4W4_DISCOVER_FOUND;
        if (d->sh[i].family != i)
            continue;
        if (!family_rule(d, i) || a4w4_contract_format(&d->sh[i].gen, ci, sizeof ci) < 0) {
            same = 0;
            continue;
        }
        same &= !c0[0] || !strcmp(c0, ci);
        snprintf(c0, sizeof c0, "%s", ci);
    }
    if (!any)
        return -1;
    size_t o = found_head(d, head, buf, len);
    if (o < len && same)
        return o + strlen(c0) + 2 < len ? (int)(o + (size_t)snprintf(buf + o, len - o, "\n%s\n", c0)) : -1;
    for (size_t f = 0; f < d->nshapes && o < len; f++) {
        if (d->sh[f].family != f)
            continue;
        if (family_rule(d, f) && a4w4_contract_format(&d->sh[f].gen, ci, sizeof ci) >= 0) {
            o += family_line(d, f, ci, buf + o, len - o);
            continue;
        }
        for (size_t i = 0; i < d->nshapes && o < len; i++) /* per-shape rules */
            if (d->sh[i].family == f && !d->sh[i].validate_only &&
                d->sh[i].res.verdict == A4W4_DISCOVER_FOUND &&
                a4w4_contract_format(&d->sh[i].res.contract, ci, sizeof ci) >= 0)
                o += (size_t)snprintf(buf + o, len - o, "\nwhen M==%zu,N==%zu,K==%zu: %s",
                                      d->shapes[i].M, d->shapes[i].N, d->shapes[i].K, ci);
    }
    if (o < len)
        o += (size_t)snprintf(buf + o, len - o, "\n");
    return o < len ? (int)o : -1;
}

/* The rules of the shapes whose verdict is v (FOUND: the accepted contracts; NO_FIT: the
 * closest candidates), after the comment line head. */
static int rules_text(const a4w4_discovery *d, a4w4_discover_verdict v, const char *head,
                      char *buf, size_t len)
{
    char c0[A4W4_CONTRACT_MAX], ci[A4W4_CONTRACT_MAX];
    int same = 1, any = 0;
    if (v == A4W4_DISCOVER_FOUND)
        return found_text(d, head, buf, len);
    for (size_t i = 0; i < d->nshapes; i++) {
        const a4w4_discover_shape_result *r = &d->sh[i].res;
        if (d->sh[i].validate_only)
            continue;
        if (r->verdict != v || !r->has_closest) {
            same = 0;
            continue;
        }
        if (a4w4_contract_format(&r->contract, any ? ci : c0, A4W4_CONTRACT_MAX) < 0)
            return -1;
        same &= !any || !strcmp(c0, ci);
        any = 1;
    }
    if (!any)
        return -1;
    size_t o = (size_t)snprintf(buf, len, "# %s at", head);
    o += shape_list(d, 0, (int)v, buf + o, o < len ? len - o : 0);
    if (o < len && same)
        o += (size_t)snprintf(buf + o, len - o, "\n%s\n", c0);
    for (size_t i = 0; !same && i < d->nshapes && o < len; i++) {
        const a4w4_discover_shape_result *r = &d->sh[i].res;
        if (d->sh[i].validate_only || r->verdict != v || !r->has_closest ||
            a4w4_contract_format(&r->contract, ci, sizeof ci) < 0)
            continue;
        o += (size_t)snprintf(buf + o, len - o, "\nwhen M==%zu,N==%zu,K==%zu: %s", d->shapes[i].M,
                              d->shapes[i].N, d->shapes[i].K, ci);
    }
    if (o < len && !same)
        o += (size_t)snprintf(buf + o, len - o, "\n");
    return o < len ? (int)o : -1;
}

int a4w4_discover_validate_only(const a4w4_discovery *d, size_t shape)
{
    return d->sh[shape].validate_only;
}

int a4w4_discover_contract_text(const a4w4_discovery *d, char *buf, size_t len)
{
    return rules_text(d, A4W4_DISCOVER_FOUND, "discovered by a4w4check discover", buf, len);
}

int a4w4_discover_closest_text(const a4w4_discovery *d, char *buf, size_t len)
{
    return rules_text(d, A4W4_DISCOVER_NO_FIT, "NOT ACCEPTED: the closest candidates a4w4check "
                      "discover found (no tree in the model family fits; the evidence says "
                      "where each fails)", buf, len);
}
