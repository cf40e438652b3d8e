/* hazard_sweep.h — the sweep behind `a4w4check hazards`: every (M, N, K) cell of a case set
 * through the runner with every backend, joined with the cell's static dispatch facts
 * (dispatch_chain.h: AITER's route, contracts §5; SGLang's layer decision, contracts §6; the
 * hazard class and field bugs of ref/a4w4_hazard.h), then classed and counted for the map.
 * Nothing here prints; cli/hazards_render.c renders. */
#ifndef A4W4_HAZARD_SWEEP_H
#define A4W4_HAZARD_SWEEP_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "backend.h"
#include "casefile.h"
#include "dispatch_chain.h"

#define A4W4_HZ_MAX_BACKENDS 64

/* The map's classes: fail (a backend or the oracle failed), else ref's static class. */
enum { A4W4_HZ_FAIL, A4W4_HZ_EXPOSED, A4W4_HZ_ORDER, A4W4_HZ_FENCED, A4W4_HZ_OK, A4W4_HZ_NCLS };
extern const char *const a4w4_hz_class_name[A4W4_HZ_NCLS];
extern const char a4w4_hz_class_symbol[A4W4_HZ_NCLS];
extern const char *const a4w4_hz_class_meaning[A4W4_HZ_NCLS];

/* A backend's verdict on a cell (skip until the runner says otherwise). */
enum { A4W4_HZ_PASS, A4W4_HZ_VFAIL, A4W4_HZ_NA, A4W4_HZ_SKIP };
extern const char *const a4w4_hz_verdict_name[4];

/* One cell: the case, the verdicts per backend, its routing and class. */
typedef struct {
    const a4w4_case *c;
    unsigned char v[A4W4_HZ_MAX_BACKENDS]; /* verdict per backend, in run order */
    int oracle_fail, done, cls;
    char first_fail[400];
    cJSON *entries; /* the runner's entries of this cell (for results.json) */
    a4w4_route_source source;
    char kernel[160], label[64];
    int tile_m, tile_n, kernel_fits;
    int nwin, nnofit;
    unsigned char win[A4W4_MAX_KERNELS], nofit[A4W4_MAX_KERNELS];
    a4w4_policy_result pol;
    a4w4_hazard hz; /* the static class (ref/a4w4_hazard.h) */
    unsigned bugs;  /* the field bug rules that flag the cell (ref/a4w4_hazard.h) */
} a4w4_hazard_cell;

/* A sweep: cells and backends in; the job count, seconds, counts and axes out. */
typedef struct {
    a4w4_hazard_cell *cells; /* each with c set and v all A4W4_HZ_SKIP */
    size_t n;
    a4w4_backend *bk;
    size_t nbk;
    int jobs;     /* in: 0 automatic (the CPU count when every backend is thread-safe, else
                     1); out: the jobs used, at most one per cell */
    double secs;  /* wall time of the sweep */
    size_t ncls[A4W4_HZ_NCLS], vcount[A4W4_HZ_MAX_BACKENDS][4], oracle_fail;
    size_t *Ms, *Ns, *Ks, nM, nN, nK; /* sorted distinct values of each axis */
} a4w4_hazard_sweep;

/* Sort order of cells: K, N, M, then case name (qsort comparator). */
int a4w4_hazard_cell_cmp(const void *a, const void *b);

/* Route every cell (static: before the long part) with setup s. Returns 0, else -1 with err
 * naming the case. */
int a4w4_hazard_sweep_route(a4w4_hazard_sweep *sw, const a4w4_tuned_table *tuned,
                            const a4w4_kernel_table *kt, const a4w4_dispatch_setup *s,
                            char *err, size_t errlen);

/* Called under the sweep's lock after each cell. */
typedef void (*a4w4_hazard_progress)(void *ctx, size_t done, size_t total, int nfail);

/* Every cell through the runner on sw->jobs threads. Returns 0, else -1 with err (the
 * runner could not run a case). */
int a4w4_hazard_sweep_run(a4w4_hazard_sweep *sw, a4w4_hazard_progress cb, void *ctx,
                          char *err, size_t errlen);

/* Classes, counts per class and per backend verdict, the axes. Returns 0, -1 out of memory. */
int a4w4_hazard_sweep_tally(a4w4_hazard_sweep *sw);

/* The kernel labels of a set, sorted by tile, as a JSON array. */
cJSON *a4w4_kernel_set_json(const a4w4_kernel_table *kt, const unsigned char *set);

/* Frees the axes and the cells' entries (not the cells). */
void a4w4_hazard_sweep_free(a4w4_hazard_sweep *sw);

#endif
