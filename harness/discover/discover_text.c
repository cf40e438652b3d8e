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

/* The rule lines of family f's rule of K after the predicates pred ("" for none): `when
 * PRED: C`, or with boundaries fixed in K (gen_fixed) one line per count of boundaries below
 * K, `when PRED,K>b: C` from the last boundary down, then the one-split rule. */
static size_t rule_lines(const dc_shape *lead, const char *pred, char *buf, size_t len)
{
    char c[A4W4_CONTRACT_MAX];
    size_t o = 0, nb = lead->gen_fixed ? lead->gen.tree.nbounds : 0;
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

/* The rule lines of family f: `when Mpad==P[,N==N]: ...`, N named when another family of the
 * bucket has another rule. */
static size_t family_line(const a4w4_discovery *d, size_t f, const char *c, char *buf,
                          size_t len)
{
    const a4w4_shape *x = &d->shapes[f];
    int pm = a4w4_padded_m((int)x->M, 1, 1, 0), by_n = 0;
    char cj[A4W4_CONTRACT_MAX], pred[64];
    for (size_t j = 0; j < d->nshapes; j++)
        if (d->sh[j].family == j && j != f && a4w4_padded_m((int)d->shapes[j].M, 1, 1, 0) == pm)
            by_n |= !family_rule(d, j) || a4w4_contract_format(&d->sh[j].gen, cj, sizeof cj) < 0 ||
                    strcmp(c, cj) || d->sh[j].gen_fixed != d->sh[f].gen_fixed;
    if (by_n)
        snprintf(pred, sizeof pred, "Mpad==%d,N==%zu", pm, x->N);
    else
        snprintf(pred, sizeof pred, "Mpad==%d", pm);
    return rule_lines(&d->sh[f], pred, buf, len);
}

/* The found contracts: per family its rule of K, or its probed shapes' own rules. */
static int found_text(const a4w4_discovery *d, const char *head, char *buf, size_t len)
{
    char c0[A4W4_CONTRACT_MAX] = "", ci[A4W4_CONTRACT_MAX];
    int same = 1, any = 0;
    size_t first = d->nshapes;
    for (size_t i = 0; i < d->nshapes; i++) {
        any |= !d->sh[i].validate_only && d->sh[i].res.verdict == A4W4_DISCOVER_FOUND;
        if (d->sh[i].family != i)
            continue;
        if (!family_rule(d, i) || a4w4_contract_format(&d->sh[i].gen, ci, sizeof ci) < 0) {
            same = 0;
            continue;
        }
        same &= first == d->nshapes ||
                (!strcmp(c0, ci) && d->sh[i].gen_fixed == d->sh[first].gen_fixed);
        first = first == d->nshapes ? i : first;
        snprintf(c0, sizeof c0, "%s", ci);
    }
    if (!any)
        return -1;
    size_t o = found_head(d, head, buf, len);
    if (o < len && same) {
        o += rule_lines(&d->sh[first], "", buf + o, len - o);
        return o + 2 < len ? (int)(o + (size_t)snprintf(buf + o, len - o, "\n")) : -1;
    }
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
