/* discover_numeric.c — the numeric and element probes of `discover` (contracts §4.4 steps 3 to
 * 6): where to put them, given the ordered tree over blocks, and what their outputs decide:
 * the first rounding to bf16, the accumulator format, the node rounding, the internal precision
 * P of a node, the elements per node below a block, and the leaf width when P > 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discover_internal.h"

/* ---- placements --------------------------------------------------------------------------- */

/* A triplet (x, u | y): x and u meet at a node strictly below the one where y joins them. The
 * first non-root node with two children found walking the nodes gives x, u (first blocks of its
 * first two children) and y (a block outside it). 0 when the tree has no such node. */
static int triplet(const dc_tree *t, int32_t *x, int32_t *u, int32_t *y)
{
    for (size_t i = 0; i < t->nnodes; i++) {
        const dc_node *v = &t->nodes[i];
        if ((int32_t)i == t->root || v->nchild < 2)
            continue;
        *x = (int32_t)t->bounds[v->first];
        *u = (int32_t)t->bounds[v->first + 1];
        *y = v->lo > 0 ? 0 : (int32_t)v->hi;
        return 1;
    }
    return 0;
}

/* A node with three or more children: one block in each of its first three children. */
static int wide_node(const dc_tree *t, int32_t c[3])
{
    for (size_t i = 0; i < t->nnodes; i++) {
        const dc_node *v = &t->nodes[i];
        if (v->nchild < 3)
            continue;
        for (int k = 0; k < 3; k++)
            c[k] = (int32_t)t->bounds[v->first + (uint32_t)k];
        return 1;
    }
    return 0;
}

/* For element probes in a chain with one block per node: u with x consumed just before it and
 * y just after, in one split, with (x, u | y) in the tree. */
static int chain_triplet(const dc_shape *s, int32_t *x, int32_t *u, int32_t *y)
{
    const dc_family *f = &s->fam[0];
    if (f->reduce != A4W4_REDUCE_CHAIN || f->fuse != 1)
        return 0;
    for (size_t j = 0; j < f->nsplits; j++) {
        uint32_t a = f->start[j], b = j + 1 < f->nsplits ? f->start[j + 1] : (uint32_t)s->n;
        if (b - a < 3)
            continue;
        int32_t uu = (int32_t)a + 1, before = f->order == A4W4_ORDER_ASC ? uu - 1 : uu + 1;
        int32_t after = f->order == A4W4_ORDER_ASC ? uu + 1 : uu - 1;
        int32_t w = dc_tree_lca(&s->tree, (size_t)before, (size_t)uu);
        int32_t top = dc_tree_lca(&s->tree, (size_t)uu, (size_t)after);
        if (w == top)
            continue;
        *x = before;
        *u = uu;
        *y = after;
        return 1;
    }
    return 0;
}

/* ---- planning ----------------------------------------------------------------------------- */

int dc_numeric_plan(dc_shape *s)
{
    dc_plist L = {0};
    int32_t x, u, y, c[3];
    dc_plist_add(&L, DC_N1, 0, 1, 0, 0, 0, 0);
    dc_plist_add(&L, DC_N1, 0, -1, 0, 0, 0, 0);
    if (s->have_tree && triplet(&s->tree, &x, &u, &y)) {
        dc_plist_add(&L, DC_N2, x, u, y, 0, 0, 0);
        dc_plist_add(&L, DC_N3, x, u, y, 1, 0, 0);
        dc_plist_add(&L, DC_N3, x, u, y, -1, 0, 0);
        for (int e = 8; e <= 24; e += 16)
            for (int d = 1; d <= 7; d++) {
                dc_plist_add(&L, DC_N4B, x, u, y, d, 1, e);
                dc_plist_add(&L, DC_N4B, x, u, y, d, -1, e);
            }
    }
    if (s->have_tree && wide_node(&s->tree, c))
        for (int d = 1; d <= 64; d++) {
            dc_plist_add(&L, DC_N4A, c[0], c[1], c[2], d, 0, 0);
            dc_plist_add(&L, DC_N4A, c[0], c[1], c[2], d, 1, 0);
        }
    if (s->have_tree && chain_triplet(s, &x, &u, &y)) {
        int asc = s->fam[0].order == A4W4_ORDER_ASC;
        for (int q = 1; q <= 16; q *= 2) {
            dc_plist_add(&L, DC_E, x, u, y, asc ? 0 : q, asc ? q : 0, 24);
            dc_plist_add(&L, DC_E, x, u, y, asc ? 0 : q, asc ? q : 0, 8);
        }
        for (int e = 8; e <= 24; e += 16) {
            for (int d = e + 1; d <= 64; d++)
                dc_plist_add(&L, DC_N4E, x, u, y, d, 0, e);
            dc_plist_add(&L, DC_N4E, x, u, y, 0, 1, e);
        }
    }
    return dc_install_probes(s, &L);
}

/* The leaf probes for the P found (contracts §4.4 step 6): pairs (0, q) of one block in a node
 * where the big inputs set e_max. 0 (planned, maybe none) or -2. */
int dc_leaf_plan(dc_shape *s)
{
    dc_plist L = {0};
    int32_t x, u, y, c[3];
    int P = s->num.prec_lo, e = s->num.acc == A4W4_ACC_BF16 ? 8 : 24;
    if (s->num.elem_span < 32 && s->num.round == A4W4_ROUND_RZ && chain_triplet(s, &x, &u, &y))
        for (int q = 1; q <= 16; q *= 2)
            dc_plist_add(&L, DC_G_ELEM, x, u, y, q, P, e);
    else if (s->num.elem_span >= 32 && wide_node(&s->tree, c))
        for (int q = 1; q <= 16; q *= 2)
            dc_plist_add(&L, DC_G_BLOCK, c[0], c[1], c[2], q, P, 0);
    return dc_install_probes(s, &L);
}

/* ---- reading ------------------------------------------------------------------------------ */

/* The output of the first probe of kind with parameters matching the given ones (-999: any);
 * NaN when there is none. idx receives its index. */
static float out_of(const dc_shape *s, dc_kind kind, int32_t p3, int32_t p4, int32_t p5,
                    size_t *idx)
{
    for (size_t i = 0; i < s->nprobes; i++) {
        const dc_probe *pr = &s->probes[i];
        if (pr->kind == kind && (p3 == -999 || pr->p[3] == p3) &&
            (p4 == -999 || pr->p[4] == p4) && (p5 == -999 || pr->p[5] == p5)) {
            if (idx)
                *idx = i;
            return s->value[i];
        }
    }
    return NAN;
}

static const char *rname(int r)
{
    return r == A4W4_ROUND_RZ ? "rz" : r == A4W4_ROUND_RNE ? "rne" : "?";
}

static void say(dc_shape *s, size_t i, const char *decision, const char *why)
{
    char d[160], w[64];
    dc_probe_describe(&s->probes[i], d, sizeof d);
    dc_probe_where(s, i, w, sizeof w);
    dc_text_add(&s->ev, "- %s: probe %s (%s) gave %g (bits 0x%04x): %s\n", decision, d, w,
                (double)s->value[i], s->bits[i], why);
}

/* Step 3: the first rounding to bf16 (+-129.5 is a tie above an odd bf16 value). */
static void read_round1(dc_shape *s)
{
    size_t i = 0, j;
    float a = out_of(s, DC_N1, -999, -999, -999, &i);
    float b = -999;
    for (j = 0; j < s->nprobes; j++)
        if (s->probes[j].kind == DC_N1 && s->probes[j].p[1] < 0) {
            b = s->value[j];
            break;
        }
    if (a == 130.0f && b == -130.0f) {
        s->num.round1 = A4W4_ROUND_RNE;
        say(s, i, "first rounding to bf16 = rne", "the tie 129.5 went to the even 130");
    } else if (a == 129.0f && b == -129.0f) {
        s->num.round1 = A4W4_ROUND_RZ;
        say(s, i, "first rounding to bf16 = rz", "the tie 129.5 went toward zero, to 129");
    } else {
        s->num.round1 = -1;
        if (!isnan(a))
            say(s, i, "first rounding to bf16 unknown", "neither RNE (130) nor RZ (129)");
    }
}

/* Step 4: accumulator format, then the node rounding. */
static void read_acc_round(dc_shape *s)
{
    size_t i = 0;
    float v = out_of(s, DC_N2, -999, -999, -999, &i);
    s->num.acc = v == 1.0f ? A4W4_ACC_FP32 : v == 0.0f ? A4W4_ACC_BF16 : -1;
    if (!isnan(v))
        say(s, i, s->num.acc == A4W4_ACC_FP32 ? "acc = fp32" : s->num.acc == A4W4_ACC_BF16 ?
            "acc = bf16" : "acc unknown", s->num.acc == A4W4_ACC_FP32 ? "2^10 + 1 was kept" :
            s->num.acc == A4W4_ACC_BF16 ? "2^10 + 1 lost its 1 (8 significant bits)" :
            "expected 1 (fp32) or 0 (bf16)");
    s->num.round = -1;
    if (s->num.acc == A4W4_ACC_BF16) {
        s->num.round = s->num.round1;
        return;
    }
    float p = out_of(s, DC_N3, 1, -999, -999, &i), m = out_of(s, DC_N3, -1, -999, -999, NULL);
    if (p == 4.0f && m == -4.0f)
        s->num.round = A4W4_ROUND_RNE;
    else if (p == 2.0f && m == -2.0f)
        s->num.round = A4W4_ROUND_RZ;
    if (!isnan(p))
        say(s, i, s->num.round < 0 ? "node rounding unknown" : s->num.round == A4W4_ROUND_RNE ?
            "round = rne" : "round = rz", s->num.round == A4W4_ROUND_RNE ?
            "2^24 + 3 went to the even 2^24 + 4" : s->num.round == A4W4_ROUND_RZ ?
            "2^24 + 3 was truncated to 2^24 + 2" : "expected 4 (RNE) or 2 (RZ)");
}

/* Step 5 (elements): E from the pairs (0, q); fp32 probes use 2^24, bf16 ones 2^8. */
static void read_elem_span(dc_shape *s)
{
    int e = s->num.acc == A4W4_ACC_BF16 ? 8 : 24, same_max = 0, seen = 0, broken = 0;
    size_t last = 0;
    for (size_t i = 0; i < s->nprobes; i++) {
        const dc_probe *pr = &s->probes[i];
        if (pr->kind != DC_E || pr->p[5] != e)
            continue;
        int q = pr->p[3] ? pr->p[3] : pr->p[4];
        seen = 1;
        last = i;
        if (s->value[i] == 0.0f) {
            if (same_max * 2 != q && !(same_max == 0 && q == 1))
                broken = 1;
            same_max = q;
        } else if (s->value[i] != -1.0f) {
            broken = 1;
        }
    }
    if (!seen) {
        s->num.elem_span = 32;
        return;
    }
    s->num.elem_span = broken ? -1 : same_max == 16 ? 32 : same_max ? 2 * same_max : 1;
    char why[160];
    snprintf(why, sizeof why, broken ? "the pairs (0, q) are not 'same node' up to some q and "
             "'separate' after" : "elements 0 and q cancel before rounding for q < %d only",
             s->num.elem_span);
    if (s->num.elem_span == 32)
        snprintf(why, sizeof why, "elements 0 and 16 cancel before rounding: no node boundary "
                 "inside a block");
    char d[48];
    snprintf(d, sizeof d, "elements per node %s %d", s->num.elem_span == 32 ? ">=" : "=",
             s->num.elem_span);
    say(s, last, broken ? "elements per node unknown" : d, why);
}

static int has(const dc_shape *s, dc_kind kind)
{
    for (size_t i = 0; i < s->nprobes; i++)
        if (s->probes[i].kind == kind)
            return 1;
    return 0;
}

/* The exponent of the accumulator-scaled precision probes: 24 (fp32), 8 (bf16). */
static int acc_exp(const dc_shape *s)
{
    return s->num.acc == A4W4_ACC_BF16 ? 8 : 24;
}

/* Step 5 (precision), nodes below a block: RZ scans d; RNE only tells e+1 from >= e+2. */
static void read_prec_elem(dc_shape *s)
{
    size_t i = 0;
    int e = acc_exp(s);
    if (s->num.round == A4W4_ROUND_RZ) {
        for (int d = e + 1; d <= 64; d++) {
            float v = out_of(s, DC_N4E, d, 0, e, &i);
            if (v == 0.0f) {
                s->num.prec_lo = s->num.prec_hi = d;
                say(s, i, "prec found", "the first -2^(e-d) truncated away: P = d");
                return;
            }
        }
        s->num.prec_lo = s->num.prec_hi = 0;
        dc_text_add(&s->ev, "- prec = 0 (exact): -2^(%d-d) survived the node for every d in "
                    "%d..64\n", e, e + 1);
        return;
    }
    float v = out_of(s, DC_N4E, 0, 1, e, &i);
    if (s->num.elem_span == 1) { /* elements 0 and 1 in two nodes: each rounds 2^e + small */
        char d[48];
        s->num.prec_lo = e + 1;
        snprintf(d, sizeof d, "prec >= %d or exact", e + 1);
        say(s, i, d, "one element per node: the tie (+1) and the tail (+0.5) meet no node "
            "together, so the probe tells no precision beyond the tie (validation decides)");
    } else if (v == 0.0f) {
        s->num.prec_lo = s->num.prec_hi = e + 1;
        say(s, i, "prec found", "the tail 0.5 below the tie was truncated: P = e + 1");
    } else if (v == 2.0f) {
        char d[48];
        s->num.prec_lo = e + 2;
        snprintf(d, sizeof d, "prec >= %d or exact", e + 2);
        say(s, i, d, "the tail 0.5 broke the tie: it survived the node");
    }
}

/* Step 5 (precision), a node with three or more inputs: the first d whose 2^(60-d) was
 * truncated away beside 2^60 and -2^60. One node rounds once, so where the small input sits
 * among the three cannot matter; when it does, the node is no node of the family. */
static void read_prec_wide(dc_shape *s)
{
    size_t i = 0, j = 0;
    for (int d = 1; d <= 64; d++) {
        float v = out_of(s, DC_N4A, d, 0, -999, &i), w = out_of(s, DC_N4A, d, 1, -999, &j);
        if (v != w && !s->num.order_dependent) {
            say(s, j, "no single rounding", "the same three inputs in another place of the node "
                "gave another sum: the node adds them one after another (outside the family)");
            s->num.order_dependent = 1;
        }
        if (v != ldexpf(1.0f, 60 - d)) {
            if (v == 0.0f) {
                s->num.prec_lo = s->num.prec_hi = d;
                say(s, i, "prec found", "2^(60-d) truncated away in a node with 2^60 and -2^60: "
                    "P = d");
            } else {
                say(s, i, "prec unknown", "expected 2^(60-d) or 0");
            }
            return;
        }
    }
    if (!s->num.order_dependent) {
        s->num.prec_lo = s->num.prec_hi = 0;
        dc_text_add(&s->ev, "- prec = 0 (exact): 2^(60-d) survived a node with 2^60 and -2^60 "
                    "for every d in 1..64, wherever it sat\n");
    }
}

/* Step 5 (precision), two-input nodes only: the tail 2^-d of 1 + 2^-d added to 2^e. */
static void read_prec_binary(dc_shape *s)
{
    size_t i = 0;
    int sign = s->num.round == A4W4_ROUND_RZ ? -1 : 1, e = acc_exp(s);
    float kept = 2.0f * (float)sign, lost = sign > 0 ? 0.0f : -1.0f;
    for (int d = 1; d <= 7; d++) {
        float v = out_of(s, DC_N4B, d, sign, e, &i);
        if (v == lost) {
            s->num.prec_lo = s->num.prec_hi = e + d;
            say(s, i, "prec found", "the tail 2^-d of 1 + 2^-d was truncated: P = e + d");
            return;
        }
        if (v != kept) {
            say(s, i, "prec unknown", "expected the tail kept or truncated");
            return;
        }
    }
    s->num.prec_lo = e + 8;
    char d[48];
    snprintf(d, sizeof d, "prec >= %d or exact", e + 8);
    say(s, i, d, "the tail 2^-d of 1 + 2^-d survived a two-input node for d = 1..7 (no node "
        "with three inputs to probe deeper)");
}

/* P in [prec_lo, prec_hi]; unknown or open-ended ranges end at 65, "or exact". */
static void read_prec(dc_shape *s)
{
    s->num.prec_lo = 0;
    s->num.prec_hi = 65;
    if (s->num.elem_span > 0 && s->num.elem_span < 32 && has(s, DC_N4E))
        read_prec_elem(s);
    else if (has(s, DC_N4A))
        read_prec_wide(s);
    else if (has(s, DC_N4B))
        read_prec_binary(s);
    else
        dc_text_add(&s->ev, "- prec unknown: the tree has no node to probe it (validation "
                    "decides)\n");
}

void dc_numeric_read(dc_shape *s)
{
    read_round1(s);
    read_acc_round(s);
    read_elem_span(s);
    read_prec(s);
    s->num.leaf = 0;
}

/* Step 6: the leaf width from the pairs (0, q), q = 1, 2, 4, 8, 16: same leaf for q < G. */
void dc_leaf_read(dc_shape *s)
{
    int same_max = 0, seen = 0;
    size_t last = 0;
    for (int q = 1; q <= 16; q *= 2)
        for (size_t i = 0; i < s->nprobes; i++) {
            const dc_probe *pr = &s->probes[i];
            if ((pr->kind != DC_G_BLOCK && pr->kind != DC_G_ELEM) || pr->p[3] != q)
                continue;
            seen = 1;
            last = i;
            if (s->value[i] != 0.0f && same_max * 2 == (q == 1 ? 0 : q))
                same_max = q;
            if (s->value[i] != 0.0f && q == 1)
                same_max = 1;
        }
    if (!seen)
        return;
    s->num.leaf = same_max == 16 ? 32 : same_max ? 2 * same_max : 1;
    char d[48];
    snprintf(d, sizeof d, "leaf = %d", s->num.leaf);
    say(s, last, d, "two inputs each below the truncation step survive only when summed in one "
        "leaf first");
}

const char *dc_round_name(int r)
{
    return rname(r);
}
