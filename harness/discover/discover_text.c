/* discover_text.c — what a finished discovery says (discover.h; contracts §4.4): each shape's
 * result, evidence and defects, and the contract text with its rules of K. */
#include "discover.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_dispatch.h"
#include "discover_internal.h"

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

/* " MxNxK" of every shape whose validate_only is vo (and, v >= 0, whose verdict is v); the
 * buckets only checked for the rules of M are never listed. */
static size_t shape_list(const a4w4_discovery *d, int vo, int v, char *buf, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < d->nshapes && o < len; i++)
        if (d->sh[i].validate_only == vo && !d->sh[i].check_only && !d->sh[i].ksplit &&
            (v < 0 || (int)d->sh[i].res.verdict == v))
            o += (size_t)snprintf(buf + o, len - o, " %zux%zux%zu", d->shapes[i].M,
                                  d->shapes[i].N, d->shapes[i].K);
    return o;
}

/* The rule lines of family f's rule of K after the predicates pred ("" for none): `when
 * PRED: C`, or with boundaries fixed in K (gen_fixed) one line per count of boundaries below
 * K, `when PRED,K>b: C` from the last boundary down, then the one-split rule. */
static size_t rule_lines(const dc_shape *lead, const char *pred, char *buf, size_t len)
{
    char c[A4W4_CONTRACT_MAX];
    size_t o = 0, nb = lead->gen_fixed ? lead->gen.tree.nbounds : 0;
    for (int i = 0; i < lead->gen_steps && o < len; i++) { /* the split count's pieces */
        a4w4_contract at;
        dc_ksplit_contract(lead, lead->step_split[i], &at);
        if (a4w4_contract_format(&at, c, sizeof c) < 0)
            return len;
        if (i + 1 < lead->gen_steps)
            o += (size_t)snprintf(buf + o, len - o, "\nwhen %s%sK<=%u: %s", pred, *pred ? "," : "",
                                  (unsigned)lead->step_kmax[i], c);
        else if (*pred)
            o += (size_t)snprintf(buf + o, len - o, "\nwhen %s: %s", pred, c);
        else
            o += (size_t)snprintf(buf + o, len - o, "\n%s", c);
    }
    if (lead->gen_steps)
        return o;
    for (size_t i = nb + 1; i-- > 0 && o < len;) {
        a4w4_contract at;
        dc_rule_at(lead, i ? lead->gen.tree.bounds[i - 1] + 1u : 32u, &at);
        if (a4w4_contract_format(&at, c, sizeof c) < 0)
            return len;
        if (i)
            o += (size_t)snprintf(buf + o, len - o, "\nwhen %s%sK>%u: %s", pred, *pred ? "," : "",
                                  (unsigned)lead->gen.tree.bounds[i - 1], c);
        else if (*pred)
            o += (size_t)snprintf(buf + o, len - o, "\nwhen %s: %s", pred, c);
        else
            o += (size_t)snprintf(buf + o, len - o, "\n%s", c);
    }
    return o;
}

/* The padded-M bucket after bucket pm (getPaddedM gl 0, contracts §5.1). */
static int next_bucket(int pm)
{
    return a4w4_padded_m(pm + 1, 1, 1, 0);
}

static int pad_of(const a4w4_discovery *d, size_t i)
{
    return a4w4_padded_m((int)d->shapes[i].M, 1, 1, 0);
}

/* One bucket of an N's rules of M: its padded M, the family leader whose rule of K holds
 * there (d->nshapes: none) and the shape (a probed family's leader or a checked bucket). */
typedef struct {
    int pm;
    size_t lead, shape;
} mbucket;

/* The buckets of N, its probed families' and its checked ones, by ascending padded M, into b
 * (room for d->nshapes). Returns how many. */
static size_t buckets_of(const a4w4_discovery *d, size_t N, mbucket *b)
{
    size_t n = 0;
    for (size_t i = 0; i < d->nshapes; i++) {
        const dc_shape *s = &d->sh[i];
        if (d->shapes[i].N != N || (s->family != i && !s->check_only))
            continue;
        size_t lead = s->check_only ? (s->res.verdict == A4W4_DISCOVER_FOUND ? s->rule_of
                                                                               : d->nshapes)
                      : dc_family_rule(d, i) ? i : d->nshapes;
        size_t j = n++;
        for (; j > 0 && b[j - 1].pm > pad_of(d, i); j--)
            b[j] = b[j - 1];
        b[j] = (mbucket){pad_of(d, i), lead, i};
    }
    return n;
}

/* 1 when the rules of K of family leaders f and g are one rule. */
static int same_rule(const a4w4_discovery *d, size_t f, size_t g)
{
    return dc_same_rule(&d->sh[f], &d->sh[g]);
}

/* The comment line of N's rules of M (more than one bucket): the buckets probed, those only
 * checked, those left without a rule, and what the open ends assume. */
static size_t m_comment(const a4w4_discovery *d, size_t N, int by_n, char *buf, size_t len)
{
    static mbucket b[A4W4_DISCOVER_MAX_SHAPES];
    size_t nb = buckets_of(d, N, b), o = 0;
    if (nb < 2)
        return 0;
    const char *part[3] = {"probed", "checked (round-1 probes and validation)",
                           "no rule (neither or both neighbours' rules hold)"};
    if (by_n)
        o += (size_t)snprintf(buf, len, "\n# rules of M (N=%zu):", N);
    else
        o += (size_t)snprintf(buf, len, "\n# rules of M:");
    for (int k = 0; k < 3 && o < len; k++) {
        size_t at = o;
        o += (size_t)snprintf(buf + o, len - o, " %s Mpad", part[k]);
        size_t head = o;
        for (size_t i = 0; i < nb && o < len; i++) {
            int chk = d->sh[b[i].shape].check_only, none = b[i].lead == d->nshapes;
            if ((k == 0 && !chk && !none) || (k == 1 && chk && !none) || (k == 2 && none))
                o += (size_t)snprintf(buf + o, len - o, " %d", b[i].pm);
        }
        if (o == head)
            o = at; /* nothing of this kind */
        else if (o < len)
            o += (size_t)snprintf(buf + o, len - o, ";");
    }
    for (size_t i = 0; i + 1 < nb && o < len; i++) { /* buckets not checked */
        int lo = next_bucket(b[i].pm), last = lo;
        while (next_bucket(last) < b[i + 1].pm)
            last = next_bucket(last);
        if (lo < b[i + 1].pm)
            o += (size_t)snprintf(buf + o, len - o, lo < last ? " no rule (not checked) Mpad "
                                  "%d..%d;" : " no rule (not checked) Mpad %d;", lo, last);
    }
    if (o < len)
        o += (size_t)snprintf(buf + o, len - o, " Mpad below %d and above %d assumed to keep "
                              "the nearest bucket's rule (not probed, contracts §4.4)",
                              b[0].pm, b[nb - 1].pm);
    return o;
}

/* The rule lines of N's rules of M, each after pred0 ("" or "N==n"): every run of adjacent
 * buckets (no bucket between them unchecked) with one rule of K a range, `Mpad>=first` unless
 * it starts the list and `Mpad<=last` unless it ends it (`Mpad==P` for a run of one bucket
 * inside the list); a bucket without a rule, or not checked, matches none; a probed family
 * without a rule gets its probed shapes' own rules. */
static size_t m_lines(const a4w4_discovery *d, size_t N, const char *pred0, char *buf,
                      size_t len)
{
    static mbucket b[A4W4_DISCOVER_MAX_SHAPES];
    char pred[160], ci[A4W4_CONTRACT_MAX];
    size_t nb = buckets_of(d, N, b), o = 0;
    for (size_t i = 0; i < nb && o < len;) {
        size_t e = i;
        if (b[i].lead == d->nshapes) {
            i++;
            continue;
        }
        while (e + 1 < nb && b[e + 1].lead != d->nshapes && next_bucket(b[e].pm) == b[e + 1].pm &&
               same_rule(d, b[i].lead, b[e + 1].lead))
            e++;
        size_t p = (size_t)snprintf(pred, sizeof pred, "%s", pred0);
        if (i > 0 && e + 1 < nb && b[i].pm == b[e].pm)
            snprintf(pred + p, sizeof pred - p, "%sMpad==%d", p ? "," : "", b[i].pm);
        else if (i > 0)
            p += (size_t)snprintf(pred + p, sizeof pred - p, "%sMpad>=%d", p ? "," : "", b[i].pm);
        if (e + 1 < nb && (i == 0 || b[i].pm != b[e].pm))
            snprintf(pred + p, sizeof pred - p, "%sMpad<=%d", p ? "," : "", b[e].pm);
        o += rule_lines(&d->sh[b[i].lead], pred, buf + o, len - o);
        i = e + 1;
    }
    for (size_t f = 0; f < nb && o < len; f++) /* per-shape rules */
        for (size_t i = 0; b[f].lead == d->nshapes && i < d->nshapes && o < len; i++)
            if (d->sh[i].family == b[f].shape && !d->sh[b[f].shape].check_only &&
                !d->sh[i].validate_only && !d->sh[i].ksplit &&
                d->sh[i].res.verdict == A4W4_DISCOVER_FOUND &&
                a4w4_contract_format(&d->sh[i].res.contract, ci, sizeof ci) >= 0)
                o += (size_t)snprintf(buf + o, len - o, "\nwhen M==%zu,N==%zu,K==%zu: %s",
                                      d->shapes[i].M, d->shapes[i].N, d->shapes[i].K, ci);
    return o;
}

/* The comment line of family leader f's split count as a function of K (contracts §4.4):
 * every K it was read at with its count, the K probed and those the bisection added, and
 * what is assumed. 0 bytes when f has no such rule. */
static size_t ksplit_comment(const a4w4_discovery *d, size_t f, char *buf, size_t len)
{
    const dc_shape *lead = &d->sh[f];
    if (lead->family != f || lead->check_only || lead->ksplit || !lead->gen_steps ||
        !dc_family_rule(d, f))
        return 0;
    size_t o = (size_t)snprintf(buf, len, "\n# split count by K (M=%zu, N=%zu): read at K",
                                d->shapes[f].M, d->shapes[f].N);
    for (size_t last = 0; o < len;) { /* every K read, ascending */
        const dc_shape *s = NULL;
        for (size_t i = 0; i < d->nshapes; i++)
            if ((dc_probed_in(&d->sh[i], f) || (d->sh[i].ksplit && d->sh[i].family == f)) &&
                d->sh[i].sh.K > last && (!s || d->sh[i].sh.K < s->sh.K))
                s = &d->sh[i];
        if (!s)
            break;
        last = s->sh.K;
        a4w4_contract at;
        dc_rule_at(lead, s->sh.K, &at);
        o += (size_t)snprintf(buf + o, len - o, " %zu (S %u%s)", s->sh.K,
                              at.kind == A4W4_CONTRACT_ORDERED ? at.split : at.tree.split,
                              s->ksplit ? ", bisected" : "");
    }
    if (o < len)
        o += (size_t)snprintf(buf + o, len - o, "; S parts of round_up(ceil(K/S), %u); each "
                              "change located between two K 32 apart; S assumed constant "
                              "between two K read with one S, below the lowest and above the "
                              "highest (contracts §4.4)", lead->ks_align);
    return o;
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
    for (size_t f = 0; f < d->nshapes && o < len; f++)
        o += ksplit_comment(d, f, buf + o, len - o);
    for (size_t i = 0; i < d->nshapes && o < len; i++)
        if (d->sh[i].res.verdict == A4W4_DISCOVER_FOUND && d->sh[i].res.defects)
            o += (size_t)snprintf(buf + o, len - o, "\n# %zux%zux%zu: %zu validation outputs "
                                  "are defects (no order gives them; see the evidence)",
                                  d->shapes[i].M, d->shapes[i].N, d->shapes[i].K,
                                  d->sh[i].res.defects);
    return o;
}

/* The found contracts: per N its rules of M (contracts §4.4), written once without `N==` when
 * every N has the same lines. */
static int found_text(const a4w4_discovery *d, const char *head, char *buf, size_t len)
{
    static char first[1 << 20], cur[1 << 20]; /* as large as the caller's text (cmd_discover.c) */
    int any = 0, same = 1, ngroups = 0;
    for (size_t i = 0; i < d->nshapes; i++)
        any |= !d->sh[i].validate_only && !d->sh[i].check_only && !d->sh[i].ksplit &&
               d->sh[i].res.verdict == A4W4_DISCOVER_FOUND;
    if (!any)
        return -1;
    for (size_t i = 0; i < d->nshapes; i++) { /* each N once, in first-seen order */
        size_t j = 0;
        while (j < i && d->shapes[j].N != d->shapes[i].N)
            j++;
        if (j < i || d->sh[i].check_only)
            continue;
        m_lines(d, d->shapes[i].N, "", ngroups ? cur : first, sizeof first);
        same &= !ngroups || !strcmp(first, cur);
        ngroups++;
    }
    size_t o = found_head(d, head, buf, len);
    for (int pass = 0; pass < 2; pass++) /* the comments, then the rules */
        for (size_t i = 0; i < d->nshapes && o < len; i++) {
            size_t j = 0;
            char np[32];
            while (j < i && d->shapes[j].N != d->shapes[i].N)
                j++;
            if (j < i || d->sh[i].check_only)
                continue;
            np[0] = 0;
            if (!same)
                snprintf(np, sizeof np, "N==%zu", d->shapes[i].N);
            o += pass ? m_lines(d, d->shapes[i].N, np, buf + o, len - o)
                      : m_comment(d, d->shapes[i].N, !same, buf + o, len - o);
            if (pass && same)
                break;
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
        if (d->sh[i].validate_only || d->sh[i].check_only || d->sh[i].ksplit)
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
        if (d->sh[i].validate_only || d->sh[i].check_only || d->sh[i].ksplit || r->verdict != v ||
            !r->has_closest ||
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
    if (d->sh[shape].ksplit)
        return 3;
    return d->sh[shape].check_only ? 2 : d->sh[shape].validate_only;
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
