/* invariance_render.h — what `a4w4check invariance` prints: per table, a summary line, one
 * line per (N, K) with its first break and cause (every run with --verbose), as text, JSON
 * lines, or the map ((N, K) x M bucket) in Markdown or as one HTML page. */
#ifndef A4W4_INVARIANCE_RENDER_H
#define A4W4_INVARIANCE_RENDER_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "invariance.h"

/* How to print. */
typedef struct {
    int format;        /* 0 text, 1 json, 2 markdown, 3 html */
    int verbose;       /* text: every run of every pair */
    const char *title; /* the table's name: its file, or the shape list's */
} a4w4_inv_view;

/* The prediction p (made with setup s) on out. Returns 0, or -1 when out failed. */
int a4w4_inv_print(const a4w4_inv_view *v, const a4w4_inv_setup *s,
                   const a4w4_inv_prediction *p, FILE *out);

/* The map of prediction p (made with setup s) as results.json records it (reports/schema
 * results.schema.json $defs/invariance, maps[]): title, m_max, buckets [[lo, hi], ...],
 * counts per verdict, first_break_M, and per (N, K) its verdict, first break, cause and the
 * worst verdict of each bucket (cells). cJSON may run out of memory: the caller validates. */
cJSON *a4w4_inv_map_json(const a4w4_inv_view *v, const a4w4_inv_setup *s,
                         const a4w4_inv_prediction *p);

/* The M buckets of the map: [1], [2], [3, 4], [5, 8], ... up to m_max (powers of two). A
 * pair's cell in a bucket is the worst verdict of its runs that meet the bucket. */
a4w4_inv_verdict a4w4_inv_bucket_verdict(const a4w4_inv_pair *q, int lo, int hi);

#endif
