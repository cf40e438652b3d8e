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
    /* room for every shape a discovery may hold: the split-count bisection adds some later
     * (discover_ksplit.c), and pointers into d->sh stay valid */
    size_t cap = A4W4_DISCOVER_MAX_SHAPES;
    a4w4_discovery *d = calloc(1, sizeof *d);
    if (!d || !(d->shapes = malloc(cap * sizeof *d->shapes)) ||
        !(d->group = malloc(cap * sizeof *d->group)) || !(d->sh = calloc(cap, sizeof *d->sh))) {
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
        s->validate_only = o->validate_only && o->validate_only[i] == 1;
        s->check_only = o->validate_only && o->validate_only[i] == 2;
        s->family = s->check_only ? i : family_of(d, i);
        s->first_round = 1;
        int rc = dc_gaps_init(&s->gaps, s->n) || setup_validation(s, o, i) ||
                 !(s->gap_varied = calloc(s->n + 1, 1));
        if (!rc && s->probed == i && !s->validate_only)
            rc = dc_structure_plan(s);
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

int dc_add_shape(a4w4_discovery *d, const a4w4_shape *x, size_t f)
{
    size_t i = d->nshapes;
    dc_shape *s = &d->sh[i];
    d->shapes[i] = *x;
    d->group[i] = i;
    s->sh = *x;
    s->n = x->K / 32;
    s->w_side = x->N > x->M;
    s->slots = s->w_side ? x->N : x->M;
    s->probed = i;
    s->tree.root = -1;
    s->family = f;
    s->first_round = d->round_no + 1;
    d->nshapes++; /* freed with the others from here on */
    if (dc_gaps_init(&s->gaps, s->n) || setup_validation(s, &d->o, i) ||
        !(s->gap_varied = calloc(s->n + 1, 1)) || dc_structure_plan(s))
        return -2;
    s->phase = DC_PHASE_STRUCTURE;
    return 0;
}

size_t a4w4_discover_nshapes(const a4w4_discovery *d)
{
    return d->nshapes;
}

const a4w4_shape *a4w4_discover_shape(const a4w4_discovery *d, size_t i)
{
    return i < d->nshapes ? &d->shapes[i] : NULL;
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
    for (size_t i = 0; i < d->nshapes; i++) { /* in a shape's first round */
        dc_shape *s = &d->sh[i];
        for (size_t v = 0; s->first_round == d->round_no && v < s->nvcases; v++)
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
                dc_structure_mark_varied(s, p);
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

/* 1 when family leader f has a validated rule of K: its rule exists, every probed shape of
 * it found a contract and every validate-only shape of it took the rule. */
int dc_family_rule(const a4w4_discovery *d, size_t f)
{
    if (d->sh[f].check_only || d->sh[f].ksplit || !d->sh[f].gen_ok)
        return 0;
    for (size_t i = 0; i < d->nshapes; i++)
        if (d->sh[i].family == f && d->sh[i].res.verdict != A4W4_DISCOVER_FOUND)
            return 0;
    return 1;
}

/* The family leader of N with a validated rule whose bucket is the nearest below (above: 1)
 * bucket pm, or nshapes. */
static size_t nearest_family(const a4w4_discovery *d, size_t N, int pm, int above)
{
    size_t best = d->nshapes;
    int bp = 0;
    for (size_t j = 0; j < d->nshapes; j++) {
        int pj = a4w4_padded_m((int)d->shapes[j].M, 1, 1, 0);
        if (d->sh[j].family != j || d->sh[j].ksplit || d->shapes[j].N != N ||
            !dc_family_rule(d, j) ||
            (above ? pj <= pm : pj >= pm))
            continue;
        if (best == d->nshapes || (above ? pj < bp : pj > bp))
            best = j, bp = pj;
    }
    return best;
}

/* Does the rule of K of family leader f predict bucket s (its round-1 probes and every
 * validation output)? 1 or 0, with an evidence line; *c the rule at s's K. */
static int bucket_holds(a4w4_discovery *d, dc_shape *s, size_t f, a4w4_contract *c)
{
    char txt[A4W4_CONTRACT_MAX];
    dc_rule_at(&d->sh[f], s->sh.K, c);
    if (a4w4_contract_format(c, txt, sizeof txt) < 0)
        return 0;
    int ok = !s->nondet && !s->position_dep && dc_check(s, &d->o, c);
    dc_text_add(&s->ev, "- a bucket of the rules of M, checked, not probed further: the rule of K "
                "of Mpad %d, %s, %s its %zu round-1 probes and its validation outputs%s\n",
                a4w4_padded_m((int)d->shapes[f].M, 1, 1, 0), txt, ok ? "predicts" :
                "does not predict", s->nhist, s->nondet ? " (they changed between runs)" : "");
    return ok;
}

/* A bucket of the rules of M (contracts §4.4): it takes the rule of K of the nearest probed
 * bucket below or above when that one alone predicts it (or both do and they are one rule);
 * when both predict it and differ, this K cannot tell them apart and the bucket gets none. */
static void check_bucket(a4w4_discovery *d, dc_shape *s)
{
    int pm = a4w4_padded_m((int)s->sh.M, 1, 1, 0), held[2] = {0, 0};
    size_t f[2];
    a4w4_contract c[2];
    s->res.verdict = A4W4_DISCOVER_NO_FIT;
    s->res.probes = s->probes_total;
    s->res.calls = s->calls_total;
    s->res.validation_cases = s->nvcases;
    for (int above = 0; above < 2; above++) {
        f[above] = nearest_family(d, s->sh.N, pm, above);
        held[above] = f[above] < d->nshapes && bucket_holds(d, s, f[above], &c[above]);
    }
    int same = held[0] && held[1] && dc_same_rule(&d->sh[f[0]], &d->sh[f[1]]);
    if (held[0] && held[1] && !same) {
        dc_text_add(&s->ev, "- no rule for Mpad %d: both neighbours' rules of K predict it at "
                    "K=%zu, so this K cannot tell which one it keeps (not judged)\n", pm, s->sh.K);
        return;
    }
    if (!held[0] && !held[1]) {
        dc_text_add(&s->ev, "- no rule for Mpad %d: no neighbour's rule of K holds here (not "
                    "judged)\n", pm);
        return;
    }
    int k = held[0] ? 0 : 1;
    s->res.verdict = A4W4_DISCOVER_FOUND;
    s->res.contract = c[k];
    s->rule_of = f[k];
}

static int finish_shape(a4w4_discovery *d, size_t i)
{
    dc_shape *s = &d->sh[i];
    if (s->finished)
        return 0;
    s->finished = 1;
    if (s->ksplit) {
        dc_ksplit_finish(d, s);
        return 0;
    }
    if (s->check_only) {
        check_bucket(d, s);
        return 0;
    }
    if (s->validate_only) {
        const dc_shape *lead = &d->sh[s->family];
        if (!lead->gen_ok) {
            s->res.verdict = A4W4_DISCOVER_NO_FIT;
            dc_text_add(&s->ev, "- not probed; the probed shapes of its family give no rule of "
                        "K to validate here: %s\n", lead->gen_why);
            return 0;
        }
        dc_rule_at(lead, s->sh.K, &s->forced_rule);
        s->forced = &s->forced_rule;
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
    if (s->check_only) { /* its round-1 probes are kept (s->hist) for the check */
        s->phase = DC_PHASE_DONE;
        return 0;
    }
    switch (s->phase) {
    case DC_PHASE_STRUCTURE:
    case DC_PHASE_SCAN: {
        int rc = dc_structure_read(s);
        if (s->ksplit && s->phase != DC_PHASE_SCAN) /* its tree over blocks is all it reads */
            s->phase = DC_PHASE_DONE;
        return rc;
    }
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

/* Every probe read: the probed shapes (and the K of a split-count bisection) first, then
 * each family's rule of K; when a bisection adds K to read, that is the next round; else the
 * shapes that only validate a rule, then the buckets of the rules of M. 0 or -2. */
static int finish_all(a4w4_discovery *d)
{
    size_t n0 = d->nshapes;
    int added = 0;
    for (size_t i = 0; i < n0; i++)
        if (!d->sh[i].validate_only && !d->sh[i].check_only)
            finish_shape(d, i);
    for (size_t i = 0; i < n0; i++) {
        dc_shape *s = &d->sh[i];
        if (s->family != i || s->check_only || s->ksplit)
            continue;
        if (!s->gen_tried)
            dc_generalize(d->sh, d->nshapes, i, &d->o);
        int rc = s->gen_ok && !s->ks_state ? 0 : dc_ksplit_step(d, i);
        if (rc < 0)
            return rc;
        added += rc;
    }
    for (int pass = 2; !added && pass < 4; pass++)
        for (size_t i = 0; i < d->nshapes; i++)
            if ((pass == 2 && d->sh[i].validate_only) || (pass == 3 && d->sh[i].check_only))
                finish_shape(d, i);
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
    if (all_done && finish_all(d)) {
        snprintf(err, errlen, "out of memory planning the split-count bisection");
        return A4W4_ST_NOMEM;
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
