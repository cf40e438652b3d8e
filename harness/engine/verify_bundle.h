/* verify_bundle.h — recompute every tensor of a case or quantization bundle (contracts §7) with
 * the ref/ oracles and the systems under test the caller passes, one a4w4_check per tensor. */
#ifndef A4W4_VERIFY_BUNDLE_H
#define A4W4_VERIFY_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "safetensors.h"
#include "status.h"

/* The capture bundle's metadata format (contracts §7.1): judged by verify_capture.h (`verify`,
 * `run --captures`), refused here as a case bundle. */
#define A4W4_CAPTURE_FORMAT "a4w4-capture/1"

/* A system under test checked against a case bundle's y_ordered (contracts §7), provided by the
 * caller (backends/cpu_sut.h's a4w4_cpu_bundle_suts: cpu-asm and cpu-fallback); the engine
 * never names one. */
typedef struct {
    const char *name; /* e.g. "cpu-asm": its check's subject is "<name> vs y_ordered" */
    /* 1: gemm reads the contracts §3 layouts: a_scale is a_scale_shuffled (§3.3), w_fp4
     * w_fp4_shuffled (§3.1), w_scale w_scale_swizzled (§3.2), all taken from the bundle; the
     * check is N/A when the bundle lacks one. 0: row-major a_scale [M, K/32], w_fp4 [N, K/2],
     * w_scale [N, K/32]. */
    int asm_layout;
    /* y [M, N] bf16 bits, every output, from a_fp4 [M, K/2] and the three tensors above; ctx
     * is the field below. A4W4_OK, or a ref status (the check is then N/A with its text). */
    int (*gemm)(void *ctx, const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                const uint8_t *w_scale, size_t M, size_t N, size_t K, uint16_t *y);
    void *ctx;
} a4w4_bundle_sut;

/* The layer a capture bundle's metadata names (its module path, "layer") into layer and
 * where it was called into site ("layer_call_site", else the op's "call_site"); "" when the
 * capture records none. */
void a4w4_capture_layer(const a4w4_st_file *f, char *layer, size_t llen, char *site,
                        size_t slen);

/* Verify one bundle: its tensors against the oracles, then y_ordered against each of the
 * nsuts systems under test (suts may be NULL when nsuts is 0), in order. Returns A4W4_ST_OK
 * when every check passes or is N/A, A4W4_ST_MISMATCH on any mismatch, A4W4_ST_BADINPUT on
 * bad input (err holds one line naming the file and the rule: malformed safetensors, unknown
 * format, missing metadata, a tensor the format or metadata promises but the file lacks,
 * shapes disagreeing with M/N/K; out of memory reads the same). Checks done so far stay in
 * `out` whatever the result. dims (optional, 3 entries) receives M, N, K of a case bundle
 * (rows, 0, K of a quantization bundle; zeros when unreadable). */
a4w4_hstatus a4w4_verify_bundle(const char *path, const a4w4_bundle_sut *suts, size_t nsuts,
                                a4w4_check_list *out, size_t *dims, char *err, size_t errlen);

#endif
