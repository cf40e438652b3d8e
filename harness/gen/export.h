/* export.h — operand bundles: the inputs of a case in every form a kernel may consume, for
 * systems outside this process (contracts §7, "operand bundles").
 *
 * One safetensors file per item, DIR/<file name of the item> (a4w4_bundle_file_name: '/'
 * becomes "__"), metadata (all strings): format "a4w4-operands/1", name, M, N, K, regime,
 * seed, matrix_hash, tool_version, layouts (comma list of every tensor present), absent
 * ("tensor: reason; ..." for each layout the shape does not allow), pad ("0x7F/0x7F": the row
 * and column fills of a_scale_shuffled). Tensors, U8 unless said: a_fp4 [M, K/2] (fp4x2),
 * a_scale [M, K/32] (E8M0), a_scale_shuffled [round_up(M, 256), round_up(K/32, 8)]
 * (contracts §3.3), w_fp4 [N, K/2], w_fp4_shuffled [N, K/2] (contracts §3.1, when
 * N % 16 == 0 and K % 64 == 0), w_scale [N, K/32], w_scale_swizzled [N, K/32] (contracts
 * §3.2, when N % 32 == 0 and (K/32) % 8 == 0), x BF16 [M, K] (the activations A was
 * quantized from, normal regime only) and, only when asked, y_exact BF16 [M, N] (the answer:
 * a system under test should not see it). DIR/manifest.json names the set, the matrix hash,
 * the tool version and every item written. */
#ifndef A4W4_EXPORT_H
#define A4W4_EXPORT_H

#include <stddef.h>

#include "casefile.h"
#include "gen.h"
#include "safetensors.h"

#define A4W4_OPERANDS_FORMAT "a4w4-operands/1"

typedef struct {
    const char *matrix_hash;  /* 16 hex digits, as in results.json */
    const char *tool_version;
    int with_expected;        /* 1: add y_exact */
} a4w4_export_opts;

/* Bytes the operand bundle of generated case c takes (tensor data; the header is small). */
double a4w4_export_case_bytes(const a4w4_case *c, int with_expected);

/* Generate case c in full and write its operand bundle into dir. *bytes gets the file's
 * data size. Returns 0, or -1 with err ("<path>: <rule>", out of memory, I/O). */
int a4w4_export_case(const a4w4_case *c, const a4w4_export_opts *o, const char *dir,
                     double *bytes, char *err, size_t errlen);

/* Tensors and metadata a caller appends to an operand bundle after the operands (run
 * --save-failing: the recorded outputs, engine/failing.h). Borrowed for the call. */
typedef struct {
    const a4w4_st_tensor_in *t;
    size_t nt;
    const char *const *keys, *const *vals;
    size_t nmeta;
} a4w4_export_extra;

/* Write the operand bundle of case c (regime, seed) from data d (every row generated or
 * loaded; d's M, N, K) as item `name` into dir, with x's extra tensors and metadata (NULL:
 * none) after the operands and, when o->with_expected, y_exact. Returns 0, or -1 with err
 * (the extras do not fit, out of memory, I/O); never a partial file (a4w4_st_write). */
int a4w4_export_case_data(const char *name, const a4w4_case *c, const a4w4_case_data *d,
                          const a4w4_export_opts *o, const a4w4_export_extra *x,
                          const char *dir, double *bytes, char *err, size_t errlen);

/* Write the operand bundle of golden bundle `path` (item name `name`, "golden/<stem>") into
 * dir from the tensors it holds. Returns 0; 1 when the bundle holds no GEMM operands (a
 * quantization bundle, a4w4-quant/1: err says so, nothing written); -1 with err (malformed
 * bundle, I/O). */
int a4w4_export_golden(const char *path, const char *name, const a4w4_export_opts *o,
                       const char *dir, double *bytes, char *err, size_t errlen);

/* Bytes the operand bundle of golden bundle `path` takes (the tensors a4w4_export_golden
 * copies: the operands and layouts present, x, y_exact when with_expected); 0 for a bundle
 * with no GEMM operands or one that cannot be read (a4w4_export_golden then says why). */
double a4w4_export_golden_bytes(const char *path, int with_expected);

/* Write dir/manifest.json atomically: {"format", "set", "cases_file", "matrix_hash",
 * "tool_version", "shard", "with_expected", "bytes", "cases": [names written],
 * "not_exported": {name: why}}; why[i] NULL for an item written. 0 or -1 with err. */
int a4w4_export_manifest(const char *dir, const char *set, const char *cases_file,
                         const char *shard, const a4w4_export_opts *o,
                         const char *const *names, const char *const *why, size_t n,
                         double bytes, char *err, size_t errlen);

#endif
