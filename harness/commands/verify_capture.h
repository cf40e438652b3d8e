/* verify_capture.h — judge a captured call (a capture bundle, format "a4w4-capture/1", written
 * by the Python bridge's a4w4check.capture) from its own operands (contracts §7). The one
 * reading of a capture: `verify` and `run --captures` both call a4w4_run_capture and report
 * the entries it makes, so they give the same verdicts and counts.
 *
 * Metadata: op ("aiter.gemm_a4w4", "aiter.gemm_afp4wfp4", "aiter.per_1x32_f4_quant_hip"), M,
 * N, K, contract (GEMM ops: the contract the kernel declared, "exact", "ordered(S)",
 * "bounded(S)", "tree(...)" (contracts §4.1, §4.2); empty or absent when it declared none),
 * shuffle (quantizer), call_site, layer.
 * GEMM tensors as the kernel received them: a_fp4 [M, K/2]; a_scale [M, K/32] or
 * a_scale_shuffled (contracts §3.3); w_fp4 [N, K/2] or w_fp4_shuffled (§3.1); w_scale
 * [N, K/32] or w_scale_swizzled (§3.2); y BF16 [M, N], the kernel's output. Quantizer: x BF16
 * [M, K] and its outputs a_fp4 and a_scale or a_scale_shuffled. Packed tensors may be U8,
 * F8_E8M0 or F4 (safetensors.h). */
#ifndef A4W4_VERIFY_CAPTURE_H
#define A4W4_VERIFY_CAPTURE_H

#include "entry.h"
#include "runner.h"
#include "status.h"
#include "verify_bundle.h" /* A4W4_CAPTURE_FORMAT */

/* 1 when the file at path is a safetensors file whose metadata format is a4w4-capture/1;
 * 0 otherwise (another format, or unreadable: the bundle readers say why). */
int a4w4_is_capture(const char *path);

/* Judge capture bundle path into entries appended to out, named `name` (the matrix item's,
 * "capture/<path under DIR>"; NULL: "capture/<file stem>"), backend "capture:<op>" (op quoted:
 * control bytes as '?'), regime "capture". A call whose result depends on more than the
 * modeled op (contracts §7.1: gemm_a4w4 with a bias, alpha != 1, beta != 0 or a bpreshuffle
 * flag its weight contradicts; gemm_afp4wfp4 with another output dtype or skip_reduce; a
 * quantizer whose shuffle flag its scale contradicts) is refused. A GEMM: one entry, y through
 * the layout maps' inverses judged by a4w4_judge_outputs (runner.h) against the contract the
 * capture records, or, when it records none, recorded as A4W4_CONTRACT_UNDECLARED ("no
 * contract declared": judged as exact, bit for bit where the exact regime is proven, the rest
 * counted not judged; never against a contract the kernel did not declare). A quantizer: one
 * entry per output tensor, byte for byte against ref's round_up quantization (contracts §2).
 * An entry that judged nothing is "skip" (a comparison asked for and not made keeps the
 * verdict from PASS). A malformed or refused capture is one failing entry noting the rule.
 * E8M0 code 0 in a GEMM's operands is read per code0_reading (runner.h A4W4_CODE0_*: both
 * readings, an entry matching only one "ambiguous"; or the one a run states).
 * Returns A4W4_ST_OK (also when the capture mismatches: the entries say so),
 * A4W4_ST_BADINPUT (err: "<path>: <rule>", metadata text quoted) or A4W4_ST_NOMEM. */
a4w4_hstatus a4w4_run_capture(const char *path, const char *name, int code0_reading,
                              a4w4_entry_list *out, char *err, size_t errlen);

#endif
