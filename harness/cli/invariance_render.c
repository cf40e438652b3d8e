/* invariance_render.c — see invariance_render.h. */
#include "invariance_render.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

a4w4_inv_verdict a4w4_inv_bucket_verdict(const a4w4_inv_pair *q, int lo, int hi)
{
    a4w4_inv_verdict w = A4W4_INV_INVARIANT;
    for (size_t r = 0; r < q->nruns; r++)
        if (q->runs[r].lo <= hi && q->runs[r].hi >= lo && q->runs[r].verdict > w)
            w = q->runs[r].verdict;
    return w;
}

/* The distinct kernels of q's runs and the contracts they take, e.g. "5 paths, every one
 * ordered(1)". */
static void paths_text(const a4w4_inv_pair *q, char *buf, size_t len)
{
    char c0[A4W4_CONTRACT_MAX], c[A4W4_CONTRACT_MAX];
    size_t distinct = 0;
    int same = 1;
    a4w4_inv_contract_text(&q->runs[0].path.contract, c0, sizeof c0);
    for (size_t r = 0; r < q->nruns; r++) {
        int seen = 0;
        for (size_t j = 0; j < r && !seen; j++)
            seen = a4w4_inv_path_same(&q->runs[j].path, &q->runs[r].path);
        distinct += !seen;
        a4w4_inv_contract_text(&q->runs[r].path.contract, c, sizeof c);
        same &= !strcmp(c, c0);
    }
    snprintf(buf, len, "%zu path%s over %zu run%s of M, %s %s", distinct, distinct == 1 ? "" : "s",
             q->nruns, q->nruns == 1 ? "" : "s", same ? "every one" : "contracts from", c0);
}

static void print_text_pair(const a4w4_inv_view *v, const a4w4_inv_setup *s,
                            const a4w4_inv_pair *q, FILE *out)
{
    char buf[2 * A4W4_CONTRACT_MAX + 512];
    if (q->first_break < 0) {
        paths_text(q, buf, sizeof buf);
        fprintf(out, "N %d K %d: invariant (%s)\n", q->N, q->K, buf);
    } else {
        a4w4_inv_cause(q, (size_t)q->first_break, s, buf, sizeof buf);
        fprintf(out, "N %d K %d: %s, first break at M = %d: %s\n", q->N, q->K,
                a4w4_inv_verdict_name(q->worst), q->runs[q->first_break].lo, buf);
    }
    for (size_t r = 0; v->verbose && r < q->nruns; r++) {
        char label[160], c[A4W4_CONTRACT_MAX];
        a4w4_inv_path_label(&q->runs[r].path, s, label, sizeof label);
        a4w4_inv_contract_text(&q->runs[r].path.contract, c, sizeof c);
        fprintf(out, "  M %d..%d: %s, %s: %s\n", q->runs[r].lo, q->runs[r].hi, label, c,
                a4w4_inv_verdict_name(q->runs[r].verdict));
    }
}

static void print_summary(const a4w4_inv_view *v, const a4w4_inv_setup *s,
                          const a4w4_inv_prediction *p, FILE *out)
{
    long first = -1;
    for (size_t i = 0; i < p->npairs; i++) {
        const a4w4_inv_pair *q = &p->pairs[i];
        if (q->first_break >= 0 && q->runs[q->first_break].lo > 1 &&
            (first < 0 || q->runs[q->first_break].lo < first))
            first = q->runs[q->first_break].lo;
    }
    fprintf(out, "%s: %zu (N, K) pairs over M 1..%d: %zu invariant, %zu variant, %zu "
            "nondeterministic, %zu unknown", v->title, p->npairs, s->m_max,
            p->count[A4W4_INV_INVARIANT], p->count[A4W4_INV_VARIANT],
            p->count[A4W4_INV_NONDET], p->count[A4W4_INV_UNKNOWN]);
    if (first > 0)
        fprintf(out, "; first break at M = %ld", first);
    fprintf(out, "\n");
}

static cJSON *pair_json(const a4w4_inv_setup *s, const a4w4_inv_pair *q)
{
    cJSON *j = cJSON_CreateObject(), *runs = cJSON_CreateArray();
    char buf[2 * A4W4_CONTRACT_MAX + 512];
    cJSON_AddNumberToObject(j, "N", q->N);
    cJSON_AddNumberToObject(j, "K", q->K);
    cJSON_AddStringToObject(j, "verdict", a4w4_inv_verdict_name(q->worst));
    if (q->first_break >= 0) {
        cJSON_AddNumberToObject(j, "first_break_M", q->runs[q->first_break].lo);
        a4w4_inv_cause(q, (size_t)q->first_break, s, buf, sizeof buf);
        cJSON_AddStringToObject(j, "cause", buf);
    }
    for (size_t r = 0; r < q->nruns; r++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "lo", q->runs[r].lo);
        cJSON_AddNumberToObject(o, "hi", q->runs[r].hi);
        a4w4_inv_path_label(&q->runs[r].path, s, buf, sizeof buf);
        cJSON_AddStringToObject(o, "path", buf);
        a4w4_inv_contract_text(&q->runs[r].path.contract, buf, sizeof buf);
        cJSON_AddStringToObject(o, "contract", buf);
        cJSON_AddStringToObject(o, "verdict", a4w4_inv_verdict_name(q->runs[r].verdict));
        cJSON_AddItemToArray(runs, o);
    }
    cJSON_AddItemToObject(j, "runs", runs);
    return j;
}

static void print_json(const a4w4_inv_view *v, const a4w4_inv_setup *s,
                       const a4w4_inv_prediction *p, FILE *out)
{
    for (size_t i = 0; i < p->npairs; i++) {
        cJSON *j = pair_json(s, &p->pairs[i]);
        cJSON_AddStringToObject(j, "table", v->title);
        char *t = cJSON_PrintUnformatted(j);
        fprintf(out, "%s\n", t ? t : "{}");
        free(t);
        cJSON_Delete(j);
    }
    cJSON *sum = cJSON_CreateObject();
    cJSON_AddStringToObject(sum, "table", v->title);
    cJSON_AddNumberToObject(sum, "pairs", (double)p->npairs);
    cJSON_AddNumberToObject(sum, "m_max", s->m_max);
    for (int k = 0; k < 4; k++)
        cJSON_AddNumberToObject(sum, a4w4_inv_verdict_name((a4w4_inv_verdict)k),
                                (double)p->count[k]);
    char *t = cJSON_PrintUnformatted(sum);
    fprintf(out, "%s\n", t ? t : "{}");
    free(t);
    cJSON_Delete(sum);
}

/* Bucket b of the map: [1, 1], then [2^(b-1) + 1, 2^b] (b >= 1), cut at m_max. 0 when b
 * starts past m_max. */
static int bucket_of(int b, int m_max, long *lo, long *hi)
{
    *lo = b == 0 ? 1 : (1L << (b - 1)) + 1;
    *hi = b == 0 ? 1 : 1L << b;
    if (*hi > m_max)
        *hi = m_max;
    return b < 31 && *lo <= m_max;
}

/* The Markdown map: one row per (N, K), one column per M bucket, a cell the bucket's worst
 * verdict; the last column the first break and its cause. */
static void print_markdown(const a4w4_inv_view *v, const a4w4_inv_setup *s,
                           const a4w4_inv_prediction *p, FILE *out)
{
    static const char *const mark[] = {"inv", "?", "nondet", "VAR"};
    long lo, hi;
    fprintf(out, "## Batch invariance: %s\n\n", v->title);
    print_summary(v, s, p, out);
    fprintf(out, "\nCells: inv (every M of the bucket gives row i the bits it gets at M = 1), "
                 "VAR (variant), nondet (bf16 atomics), ? (no declared contract decides).\n\n"
                 "| N | K |");
    for (int b = 0; bucket_of(b, s->m_max, &lo, &hi); b++)
        fprintf(out, lo == hi ? " %ld |" : " %ld-%ld |", lo, hi);
    fprintf(out, " first break |\n|---|---|");
    for (int b = 0; bucket_of(b, s->m_max, &lo, &hi); b++)
        fprintf(out, "---|");
    fprintf(out, "---|\n");
    for (size_t i = 0; i < p->npairs; i++) {
        const a4w4_inv_pair *q = &p->pairs[i];
        fprintf(out, "| %d | %d |", q->N, q->K);
        for (int b = 0; bucket_of(b, s->m_max, &lo, &hi); b++)
            fprintf(out, " %s |", mark[a4w4_inv_bucket_verdict(q, (int)lo, (int)hi)]);
        char buf[2 * A4W4_CONTRACT_MAX + 512] = "";
        if (q->first_break >= 0)
            a4w4_inv_cause(q, (size_t)q->first_break, s, buf, sizeof buf);
        fprintf(out, " %s |\n", buf);
    }
    fprintf(out, "\n");
}

/* text with &, <, > and " escaped for HTML. */
static void html_text(FILE *out, const char *t)
{
    for (; *t; t++)
        switch (*t) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*t, out);
        }
}

/* The map as one self-contained HTML page: the summary first, then the (N, K) x M-bucket
 * table; each cell's colour is doubled by its text (inv, VAR, nondet, ?). */
static void print_html(const a4w4_inv_view *v, const a4w4_inv_setup *s,
                       const a4w4_inv_prediction *p, FILE *out)
{
    static const char *const mark[] = {"inv", "?", "nondet", "VAR"};
    static const char *const colour[] = {"#009E73", "#BBBBBB", "#E69F00", "#D55E00"};
    long lo, hi;
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Batch invariance: ", out);
    html_text(out, v->title);
    fputs("</title><style>body{font-family:sans-serif}td,th{border:1px solid #ccc;padding:2px "
          "5px;font-size:12px}table{border-collapse:collapse}td.c{color:#fff;text-align:center}"
          "</style></head><body>\n<h1>Batch invariance: ", out);
    html_text(out, v->title);
    fputs("</h1>\n<p>", out);
    char line[1024];
    FILE *mem = fmemopen(line, sizeof line, "w");
    if (mem) {
        print_summary(v, s, p, mem);
        fclose(mem);
        line[sizeof line - 1] = 0;
        html_text(out, line);
    }
    fputs("</p>\n<table><tr><th>N</th><th>K</th>", out);
    for (int b = 0; bucket_of(b, s->m_max, &lo, &hi); b++)
        fprintf(out, lo == hi ? "<th>%ld</th>" : "<th>%ld-%ld</th>", lo, hi);
    fputs("<th>first break</th></tr>\n", out);
    for (size_t i = 0; i < p->npairs; i++) {
        const a4w4_inv_pair *q = &p->pairs[i];
        fprintf(out, "<tr><td>%d</td><td>%d</td>", q->N, q->K);
        for (int b = 0; bucket_of(b, s->m_max, &lo, &hi); b++) {
            a4w4_inv_verdict w = a4w4_inv_bucket_verdict(q, (int)lo, (int)hi);
            fprintf(out, "<td class=\"c\" style=\"background:%s\">%s</td>", colour[w], mark[w]);
        }
        char buf[2 * A4W4_CONTRACT_MAX + 512] = "";
        if (q->first_break >= 0)
            a4w4_inv_cause(q, (size_t)q->first_break, s, buf, sizeof buf);
        fputs("<td>", out);
        html_text(out, buf);
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n</body></html>\n", out);
}

int a4w4_inv_print(const a4w4_inv_view *v, const a4w4_inv_setup *s,
                   const a4w4_inv_prediction *p, FILE *out)
{
    if (v->format == 1)
        print_json(v, s, p, out);
    else if (v->format == 2)
        print_markdown(v, s, p, out);
    else if (v->format == 3)
        print_html(v, s, p, out);
    else {
        for (size_t i = 0; i < p->npairs; i++)
            print_text_pair(v, s, &p->pairs[i], out);
        print_summary(v, s, p, out);
    }
    return ferror(out) ? -1 : 0;
}

cJSON *a4w4_inv_map_json(const a4w4_inv_view *v, const a4w4_inv_setup *s,
                         const a4w4_inv_prediction *p)
{
    cJSON *m = cJSON_CreateObject(), *bk = cJSON_CreateArray(), *pairs = cJSON_CreateArray();
    cJSON *counts = cJSON_CreateObject();
    long lo, hi, first = -1;
    cJSON_AddStringToObject(m, "title", v->title);
    cJSON_AddNumberToObject(m, "m_max", s->m_max);
    for (int b = 0; bucket_of(b, s->m_max, &lo, &hi); b++) {
        cJSON *x = cJSON_CreateArray();
        cJSON_AddItemToArray(x, cJSON_CreateNumber((double)lo));
        cJSON_AddItemToArray(x, cJSON_CreateNumber((double)hi));
        cJSON_AddItemToArray(bk, x);
    }
    cJSON_AddItemToObject(m, "buckets", bk);
    for (int k = 0; k < 4; k++)
        cJSON_AddNumberToObject(counts, a4w4_inv_verdict_name((a4w4_inv_verdict)k),
                                (double)p->count[k]);
    cJSON_AddItemToObject(m, "counts", counts);
    for (size_t i = 0; i < p->npairs; i++) {
        const a4w4_inv_pair *q = &p->pairs[i];
        cJSON *j = pair_json(s, q), *cells = cJSON_CreateArray();
        cJSON_DeleteItemFromObjectCaseSensitive(j, "runs");
        for (int b = 0; bucket_of(b, s->m_max, &lo, &hi); b++)
            cJSON_AddItemToArray(cells, cJSON_CreateString(a4w4_inv_verdict_name(
                                            a4w4_inv_bucket_verdict(q, (int)lo, (int)hi))));
        cJSON_AddItemToObject(j, "cells", cells);
        cJSON_AddItemToArray(pairs, j);
        if (q->first_break >= 0 && q->runs[q->first_break].lo > 1 &&
            (first < 0 || q->runs[q->first_break].lo < first))
            first = q->runs[q->first_break].lo;
    }
    if (first > 0)
        cJSON_AddNumberToObject(m, "first_break_M", (double)first);
    cJSON_AddItemToObject(m, "pairs", pairs);
    return m;
}
