/* backend.h — the table every system under test registers in (STYLE: like BLIS's context).
 *
 * A backend type names what it runs and the accumulation contract it keeps (SPEC §4.1) and
 * provides prepare / run / release. The runner opens the selected types into instances
 * (`--backend cpu-asm,plugin:./libmy.so`), walks them for every case, and compares what
 * they write per contract. Types register in backend.c's table; each lives in its own
 * backend_<name>.c. */
#ifndef A4W4_BACKEND_H
#define A4W4_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "casefile.h"
#include "gen.h"

/* The output poison: a signalling-NaN bf16 pattern no arithmetic produces. Outputs still
 * holding it after a run were never written. */
#define A4W4_POISON_BF16 0x7FA5u

/* What one run gets. y [s->nrows, s->ncols] arrives poisoned; the backend writes every
 * element (output (s->rows[i], s->cols[j]) at y[i * s->ncols + j]; all outputs when
 * s->full). why receives the reason for A4W4_EUNSUPPORTED or an error. */
typedef struct {
    const a4w4_case *c;
    const a4w4_case_data *d;
    const a4w4_sample *s;
    uint16_t *y;
    char *why;
    size_t whylen;
} a4w4_run_args;

typedef struct {
    const char *name;     /* "cpu-asm"; types with needs_arg are selected as "name:ARG" */
    const char *what;     /* one line: what it runs */
    const char *contract; /* "ordered(1)", "ordered(S)", "exact", "bounded"; prepare may refine */
    int asm_layout;       /* reads the SPEC §3 layouts: run the pad-dependence variants */
    int needs_arg;        /* 1: selected only explicitly, as "name:ARG" */
    int gpu;              /* 1: needs a GPU (exit 3 when asked for without one) */
    /* 0 when usable here; else fills why (e.g. "no GPU") and returns nonzero. NULL: always. */
    int (*available)(char *why, size_t whylen);
    /* Set *ctx (may stay NULL) from arg (NULL without ":ARG"). contract/asm_layout may be
     * refined through the instance (plugins declare theirs). 0 or nonzero with err. */
    int (*prepare)(const char *arg, void **ctx, char *contract, size_t contract_len,
                   int *asm_layout, char *err, size_t errlen);
    /* A4W4_OK, A4W4_EUNSUPPORTED (verdict n/a, why says the rule) or another status. */
    int (*run)(void *ctx, const a4w4_run_args *a);
    void (*release)(void *ctx);
    /* Layout backends (run == NULL): build the SPEC §3 layouts of case d from its row-major
     * tensors into the given buffers (sizes as in a4w4_case_data; a NULL buffer is a layout
     * the shape does not have). The runner compares them byte for byte with ref's. */
    int (*layouts)(void *ctx, const a4w4_case_data *d, uint8_t *w_fp4_shuffled,
                   uint8_t *w_scale_swizzled, uint8_t *a_scale_shuffled, char *why,
                   size_t whylen);
    /* Quantizer backends (run == NULL): quantize x (bf16 [rows, K]) per 1x32 in `mode` into
     * fp4 [rows, K/2] and row-major scale [rows, K/32] (SPEC §2). The runner feeds the
     * activation rows of normal-regime cases and compares with ref's quantization. */
    int (*quantize)(void *ctx, const uint16_t *x, size_t rows, size_t K, int mode, uint8_t *fp4,
                    uint8_t *scale, char *why, size_t whylen);
    /* Optional device-side timing for `bench` (GPU GEMM backends): operands resident on the
     * device, one warm-up launch, then reps launches each timed with device events; median
     * and minimum in ms, and the bytes one launch must move (operands read + output written). */
    int (*bench)(void *ctx, const a4w4_case_data *d, int reps, double *median_ms,
                 double *min_ms, double *bytes, char *why, size_t whylen);
} a4w4_backend_type;

typedef struct {
    const a4w4_backend_type *type;
    void *ctx;
    char name[160];    /* as selected, e.g. "plugin:libref.so" */
    char contract[32]; /* the contract in force */
    unsigned split;    /* S of ordered(S) (1 for others) */
    int asm_layout;
} a4w4_backend;

/* The registered types and their count. */
const a4w4_backend_type *const *a4w4_backend_types(size_t *count);

/* Open "name" or "name:ARG" into b. Returns 0; 2 for an unknown name, a missing/extra ARG or
 * a failed prepare; 3 when the type needs a GPU and none is usable (err says so). */
int a4w4_backend_open(const char *spec, a4w4_backend *b, char *err, size_t errlen);
/* Open type t (looked up elsewhere, e.g. the selftest's mutant table) with arg (NULL when
 * none) into b, exactly as a4w4_backend_open does after its name lookup; b->name becomes
 * "name" or "name:ARG". Same returns (2 for a missing/extra ARG or a failed prepare; 3 for a
 * GPU type without a usable GPU). */
int a4w4_backend_open_type(const a4w4_backend_type *t, const char *arg, a4w4_backend *b,
                           char *err, size_t errlen);
void a4w4_backend_close(a4w4_backend *b);

/* The default selection: every type that needs no ARG and is available here; the others'
 * names and reasons go to skipped (one "name: why" per line, may be NULL). Returns count. */
size_t a4w4_backend_defaults(a4w4_backend *out, size_t max, char *skipped, size_t skippedlen);

/* Backend types defined in backend_*.c. */
extern const a4w4_backend_type a4w4_backend_cpu_asm, a4w4_backend_cpu_fallback,
    a4w4_backend_bundle, a4w4_backend_plugin;

#ifdef A4W4_HAVE_GPU
/* The HIP backends (backend_hip.c), built when A4W4_GPU != off; null-terminated list. */
extern const a4w4_backend_type *const a4w4_backend_hip_types[];
/* Device-to-device copy bandwidth in GB/s (bytes read + written per second), median of reps
 * timed copies of a 1 GiB buffer; 0 when it cannot be measured. */
double a4w4_hip_copy_bandwidth_gbs(int reps);
#endif

#endif
