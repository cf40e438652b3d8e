/* devjudge.h — judging on a device: the interface the runner uses when a GPU judge is in the
 * run (backends/hip/devjudge_hip.c implements it over ref/gpu/a4w4_judge_gpu.h; the engine
 * never names it). With a device judge, every output of every case is compared on the
 * device for the backends that have device forms (a4w4_backend_type.run_device,
 * .layouts_device, .quantize_device), while the host keeps its sample (the budget's) for the
 * other backends and for the C oracles' re-check of the judge (contracts §4.1 contracts,
 * held equal bit for bit on every sampled output).
 *
 * Every function returns 0, or nonzero with why (one line); open returns A4W4_DEVJUDGE_NOFIT
 * when the case does not fit the device's memory even in blocks (why names the case and the
 * bytes it needs: docs/gpu.md, "The device judge's memory"). */
#ifndef A4W4_DEVJUDGE_H
#define A4W4_DEVJUDGE_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "entry.h"
#include "judge.h"

/* What a device call of a GEMM backend leaves beside its comparison (judge.h's record, over
 * every output of the case). */
typedef struct {
    int has_y_hash;
    unsigned long long y_hash; /* order-independent hash of every output */
    double run_ms;             /* the backend's device work, wall */
} a4w4_devcall;

/* What a case needs the judge to compute, from the selected backends' contracts. */
typedef struct {
    unsigned ordered_s; /* S > 1 of an ordered(S) backend, 0 none */
    unsigned bounded_s; /* S of a bounded(S) backend, 0 none */
    unsigned atomic_s;  /* S of an atomic(S) backend, 0 none */
    size_t work_bytes;  /* the largest split-K workspace an ordered(S) device backend uses on
                           this case (a4w4_backend_type.device_workspace), 0 none */
} a4w4_devneeds;

/* The oracle's facts over every output. */
typedef struct {
    size_t outputs;    /* M * N */
    size_t proven;     /* outputs in the exact regime */
    a4w4_comparison ord_vs_exact; /* ordered(1) vs exact on the proven outputs */
    size_t nan_wrong, nans;   /* special regime: outputs off the NaN rule, NaN outputs */
    size_t uncertain; /* outputs the device could not round (the plain C oracle did) */
    double judge_ms;  /* the judge's passes, wall */
    size_t blocks, block_rows; /* judged in blocks of rows: their count (1: the whole case) and
                                * rows (docs/gpu.md, "The device judge's memory") */
} a4w4_devoracle;

/* The judge's values at a sample's outputs (host arrays, s->nrows * s->ncols each, atomic_q
 * S times that; NULL where not wanted). bound, exact_f64 and infs are the bounded(S) limits
 * of the S the case
 * was opened for (a4w4_devneeds.bounded_s): the bound, the exact value rounded once to
 * double and where ±Inf is allowed (bit 0 +Inf, bit 1 -Inf), a4w4_bounded_limits' fields. */
typedef struct {
    uint16_t *ordered1, *exact, *ordered_s;
    float *exact_f32;
    double *bound, *exact_f64;
    uint8_t *infs;
    /* atomic(S) of the S the case was opened for (a4w4_devneeds.atomic_s): output i's split
     * values at atomic_q[i * S ..], the tail past the non-empty splits 0 */
    uint16_t *atomic_q;
} a4w4_devsample;

enum { A4W4_DEVJUDGE_NOFIT = 2 };

typedef struct a4w4_devjudge {
    void *self;
    /* Put case d on the device and compute what `need` says: the judge's arrays of the whole
     * case when they fit its memory ceiling, else blocks of rows judged one at a time, each
     * use recomputing its passes (the same entries). */
    int (*open)(void *self, const a4w4_case *c, const a4w4_case_data *d,
                const a4w4_devneeds *need, char *why, size_t whylen);
    int (*sample)(void *self, const a4w4_sample *s, const a4w4_devsample *out, char *why,
                  size_t whylen);
    int (*oracle)(void *self, const a4w4_case_data *d, int special, a4w4_devoracle *out,
                  char *why, size_t whylen);
    /* Run GEMM backend b on every output and compare per its contract (variant 0), or re-run
     * it after the runner changed the pad fills (a4w4_case_refill) and count the outputs
     * that changed against its baseline (variant 1; bounded: outputs newly outside the
     * bound) into out->mismatches; the call's time and outputs' hash into *call. A bounded(S)
     * backend of the S the case was opened for (need->bounded_s) is compared on the device
     * by the runner's bounded rule against the judge's limits (contracts §4.1, §4.3: counts,
     * first mismatches, the bound's use, weight and median; only its outputs at a->s come
     * back); one of another S called with a full sample (a->s->full) is not compared: its
     * every output comes back in a->y ([M, N] row-major) for the host to judge. Returns the backend's
     * own status in *brc (A4W4_OK, A4W4_EUNSUPPORTED, ...). */
    int (*run)(void *self, const a4w4_backend *b, const a4w4_run_args *a, int variant,
               int *brc, a4w4_comparison *out, a4w4_devcall *call, char *why, size_t whylen);
    /* A layout backend's three layouts vs the reference layouts, byte for byte. */
    int (*layouts)(void *self, const a4w4_backend *b, const a4w4_case_data *d, int *brc,
                   a4w4_comparison *out, char *why, size_t whylen);
    /* A quantizer backend on every activation row vs the reference codes and scales. */
    int (*quantize)(void *self, const a4w4_backend *b, const a4w4_case *c,
                    const a4w4_case_data *d, int *brc, a4w4_comparison *out, char *why,
                    size_t whylen);
    void (*close)(void *self);
    /* One line for the run's environment ("NVIDIA H200, judge ...") */
    const char *(*describe)(void *self);
    /* TEST ONLY (selftest --gpu): 1 makes the judge deliberately wrong (its ordered(1) one
     * bf16 ULP high in every output column 15 mod 16), 0 restores it. */
    void (*set_fault)(void *self, int fault);
} a4w4_devjudge;

#endif
