/* discover_structure.c — round 1 of a shape's discovery (contracts §4.4 step 1): the probes
 * that read the tree over blocks (window counts, two-unit probes, the scan), and the ordered
 * families read back from their outputs (discover_internal.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "discover_internal.h"

/* ---- probe plans -------------------------------------------------------------------------- */

/* Round 1 (contracts §4.4 step 1): per gap, window counts at 2^34 on both sides, and two-unit
 * probes at 2^26 on the two nearest blocks of each side. */
int dc_structure_plan(dc_shape *s)
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
void dc_structure_mark_varied(dc_shape *s, size_t probe)
{
    const dc_probe *pr = &s->probes[probe];
    if ((pr->kind == DC_GAP_COUNT || pr->kind == DC_GAP_PAIR) && s->gap_varied &&
        !s->gap_varied[pr->p[0]]) {
        s->gap_varied[pr->p[0]] = 1;
        s->nvaried_gaps++;
    }
}

/* After round 1 or the scan: the tree, the family, the next phase. */
int dc_structure_read(dc_shape *s)
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
