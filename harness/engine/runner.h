/* runner.h — one case through every backend, compared per contract (contracts §4.1), with the
 * checks that make a verdict trustworthy: poisoned outputs (every output must be written), guard zones (no
 * out-of-bounds write; out-of-bounds scale reads turn into NaN), and, for backends that
 * read the ASM layouts, the pad-dependence variants of contracts §3.3. */
#ifndef A4W4_RUNNER_H
#define A4W4_RUNNER_H

#include <cjson/cJSON.h>

#include "backend.h"
#include "casefile.h"

typedef struct {
    a4w4_backend *backends;
    size_t nbackends;
    int full; /* check every output, no sampling */
} a4w4_runner;

/* Run generated case c; append one entry per backend plus one "oracle" entry to entries.
 * Returns the number of failing entries, or -1 when the case cannot be run at all (out of
 * memory: err set). */
int a4w4_run_case(const a4w4_runner *r, const a4w4_case *c, cJSON *entries, char *err,
                  size_t errlen);

/* Verify golden bundle path (contracts §7): entries for cpu-asm / cpu-fallback (when selected)
 * against its y_ordered and one "oracle" entry for every other tensor. Returns failing
 * entries, or -2 on bad input (err set; the oracle entry records it as a failure). */
int a4w4_run_golden(const a4w4_runner *r, const char *path, cJSON *entries, char *err,
                    size_t errlen);

/* The error bound of a "bounded(S)" kernel against the exact sum (see runner.c). */
double a4w4_bounded_tolerance(double sum_abs_terms, size_t nblocks, unsigned S);

#endif
