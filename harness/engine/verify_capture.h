/* verify_capture.h — judge a captured call (a capture bundle, format "a4w4-capture/1", written
 * by the Python bridge's a4w4check.capture) from its own operands (contracts §7).
 *
 * Metadata: op ("aiter.gemm_a4w4", "aiter.gemm_afp4wfp4", "aiter.per_1x32_f4_quant_hip"), M,
 * N, K, contract ("exact", "ordered(S)", "tree(...)"; GEMM ops; contracts §4.1, §4.2),
 * shuffle (quantizer), call_site, layer.
 * GEMM tensors as the kernel received them: a_fp4 [M, K/2]; a_scale [M, K/32] or
 * a_scale_shuffled (contracts §3.3); w_fp4 [N, K/2] or w_fp4_shuffled (§3.1); w_scale
 * [N, K/32] or w_scale_swizzled (§3.2); y BF16 [M, N], the kernel's output. Quantizer: x BF16
 * [M, K] and its outputs a_fp4 and a_scale or a_scale_shuffled. Packed tensors may be U8,
 * F8_E8M0 or F4 (safetensors.h). */
#ifndef A4W4_VERIFY_CAPTURE_H
#define A4W4_VERIFY_CAPTURE_H

#include "safetensors.h"
#include "status.h"
#include "verify_bundle.h"

#define A4W4_CAPTURE_FORMAT "a4w4-capture/1"

/* Recompute the captured call of loaded file f (path for messages), as contracts §7.1 says:
 * a call whose result depends on more than the modeled op (gemm_a4w4 with a bias, alpha != 1,
 * beta != 0 or a bpreshuffle flag its weight contradicts; gemm_afp4wfp4 with another output
 * dtype or skip_reduce; a quantizer whose shuffle flag its scale contradicts) is refused
 * (A4W4_ST_BADINPUT). Otherwise a GEMM's y through the layout maps' inverses and the oracle
 * of its contract (exact: every output against the correctly rounded sum, the note says how
 * many lie in the proven exact regime; ordered(S) and tree contracts: bit for bit), a
 * quantizer's outputs with ref's round_up quantizer. One check per recomputed
 * tensor goes to out (first mismatching (row, col), both values, count). Returns A4W4_ST_OK,
 * A4W4_ST_MISMATCH, or A4W4_ST_BADINPUT with err = "<path>: <rule>" (unknown op or contract,
 * missing or misshapen tensor, impossible M, N, K, a refused call; metadata text quoted:
 * control bytes as '?'), A4W4_ST_NOMEM. dims (3) gets M, N, K. */
a4w4_hstatus a4w4_verify_capture(const a4w4_st_file *f, const char *path, a4w4_check_list *out,
                                 size_t *dims, char *err, size_t errlen);

#endif
