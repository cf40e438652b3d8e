/* budget.h — the whole run's host checking at the run's own rates (`run --budget-seconds S`,
 * docs/architecture.md "The budget"): the calibration that measures this run's rates
 * (a4w4_rates, runner.h) on a small case, and the plan of which cases get every output checked
 * on the host (a4w4_budget_plan, runner.h) when the estimates of a4w4_full_check_seconds
 * (runner.h) exceed the budget. */
#ifndef A4W4_BUDGET_H
#define A4W4_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "casefile.h"
#include "runner.h"

/* `run`'s default --budget-seconds: the whole run's host checking, planned at the run's own
 * measured rates (a4w4_budget_calibrate) and held to its measured time (a4w4_budget_hold).
 * On 2 cores an optimized build checks about three quarters of the pre-merge set's cases in
 * full in 60 s (docs/cli/run.md "Sampling and the budget"), the largest sampled; an
 * unoptimized build (CI's coverage and sanitizer builds, some 50x slower) measures its own
 * rates and samples more to stay within the budget. */
#define A4W4_DEFAULT_BUDGET_S 60

/* Measure this run's rates (engine/budget.c): a small normal-regime case generated, its host
 * oracles computed, and each selected GEMM backend judged on the host run on it: first on a
 * 4 x 64 sample of its outputs, rated by that call when it takes over 50 ms (a slow backend's
 * calibration stays short), else by the faster of two calls over the whole case. 0, or
 * nonzero with err (out of memory, a backend error). */
int a4w4_budget_calibrate(const a4w4_runner *r, a4w4_rates *rates, char *err, size_t errlen);

/* The plan for cases[0..n) (mine[i]: case i is this shard's) under budget_s seconds at r's
 * rates: every case when all fit, else the cheapest ones that fit (the others sampled).
 * 0, or A4W4_ENOMEM. a4w4_budget_plan_free releases it. */
int a4w4_budget_plan_make(const a4w4_runner *r, const a4w4_case *cases, size_t n,
                          const uint8_t *mine, double budget_s, a4w4_budget_plan *plan);
void a4w4_budget_plan_free(a4w4_budget_plan *plan);

/* Decide, before case c is prepared, whether the plan's full check of it still fits the
 * budget at the time measured so far (docs/cli/run.md "Sampling and the budget"): when the
 * cases checked in full took longer than their estimates (a machine busier than during the
 * calibration), its estimate is scaled by that ratio, and a case that would then pass the
 * budget is sampled instead (held[i] = A4W4_HELD_BACK, full[i] = 0, counted in nheld and
 * nsampled). Once per case: later calls change nothing; a case not in the plan, none. */
void a4w4_budget_hold(a4w4_budget_plan *plan, const a4w4_case *c);

/* Case c ran, its check taking seconds of wall: counted into spent_s (and its estimate into
 * spent_est_s) when the plan checked it in full. */
void a4w4_budget_spent(a4w4_budget_plan *plan, const a4w4_case *c, double seconds);

#endif
