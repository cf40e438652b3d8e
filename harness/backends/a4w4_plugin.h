/* a4w4_plugin.h — the plugin ABI: put any A4W4 GEMM (AITER's real gemm_a4w4 on an MI355X, a
 * vendor library, a simulator) under the harness without changing it.  ABI version 1.
 *
 * This header is self-contained: plain C types only, no harness or ref headers, so a plugin
 * can be built outside this tree (copy the file).  A plugin is a shared library that exports
 *
 *     const a4w4_plugin_info *a4w4_plugin_query(void);
 *
 * and is selected with `a4w4check run --backend plugin:/path/libmy.so` (a path without '/'
 * is taken relative to the current directory, never searched on the library path).  The
 * harness dlopen()s it with RTLD_NOW | RTLD_LOCAL, calls a4w4_plugin_query once, checks
 * abi_version == A4W4_PLUGIN_ABI_VERSION (exact match: any change to a struct below bumps
 * it; abi_version stays the first member in every version), validates the contract string,
 * calls init (if any), then gemm once per case and output sample (more than once per case
 * for ASM-layout plugins, see asm_layout), then fini (if any), then dlclose()s it.
 *
 * Isolation (the default; `--no-isolate` turns it off): the harness runs the plugin's code in
 * forked child processes.  One child first loads it, queries, inits and finis it; the harness
 * process then loads it and calls only a4w4_plugin_query (never init, gemm or fini); and
 * every gemm call runs in a fresh child as a whole instance: init, that one gemm, fini.  y is
 * then shared memory the harness reads after the child exits.  A crash (signal), a nonzero
 * exit or a call past the deadline (`--timeout`) fails that case only.  So init runs once per
 * call: keep it cheap, or expect its cost per call (a GPU plugin gets a fresh device context
 * in each child; state kept in globals does not carry from one call to the next).
 *
 * Minimal plugin:
 *
 *     #include "a4w4_plugin.h"
 *     static int my_gemm(void *state, const a4w4_plugin_gemm_args *a) { ... return 0; }
 *     static const a4w4_plugin_info info = {A4W4_PLUGIN_ABI_VERSION, "my-gemm", "ordered(1)",
 *                                           0, NULL, my_gemm, NULL};
 *     A4W4_PLUGIN_EXPORT const a4w4_plugin_info *a4w4_plugin_query(void) { return &info; }
 *
 * Build: cc -shared -fPIC -O2 -Iharness/backends my.c -o libmy.so (tests/plugins/ref_plugin.c is a
 * complete example: an independent ordered(1) GEMM on the row-major operands).
 *
 * ---- Formats (contracts §1) -------------------------------------------------------------------
 * fp4x2:  two E2M1 codes per byte, element 2i in the low nibble, 2i+1 in the high nibble;
 *         codes 0..7 = {0, 0.5, 1, 1.5, 2, 3, 4, 6}, 8..15 their negatives (8 is -0).
 * E8M0:   one byte per 32-element block along K, value 2^(code-127); 0xFF is NaN (every
 *         output reading such a block must be NaN); code 0 is 2^-127 in the oracles, but
 *         disputed: see "E8M0 code 0" below.
 * bf16:   outputs are raw bf16 bit patterns (uint16_t, host byte order).
 *
 * ---- The GEMM (contracts §4) ------------------------------------------------------------------
 * y[m][n] = sum_k A[m][k] * W[n][k], A = dequant(a_fp4, a_scale) [M, K],
 * W = dequant(w_fp4, w_scale) [N, K] (N-major, like torch.nn.Linear's weight), y bf16 [M, N].
 * K is a multiple of 32; M, N, K >= 1.  No bias.
 *
 * ---- Operands (a4w4_plugin_gemm_args) ----------------------------------------------------
 * All sizes are in bytes or elements as stated; all matrices are dense, no strides.
 *   a_fp4             [M, K/2] bytes, row-major fp4x2.
 *   a_scale           [M, K/32] bytes, row-major E8M0.
 *   a_scale_shuffled  the §3.3 layout of a_scale (AITER's _shuffle_asm_fp4_act_scale):
 *                     a_scale_rows_padded * a_scale_cols_padded bytes (rows rounded up to
 *                     256, columns to 8), pad cells filled as the harness chooses (0x7F by
 *                     default; an asm_layout plugin also sees 0xFF and 0x00 fills).  NULL
 *                     (and both sizes 0) when the layout does not exist for the shape.
 *   w_fp4             [N, K/2] bytes, row-major fp4x2.
 *   w_scale           [N, K/32] bytes, row-major E8M0.
 *   w_fp4_shuffled    the §3.1 preshuffle of w_fp4 (shuffle_weight(w, (16, 16))), N * K/2
 *                     bytes; NULL unless N % 16 == 0 and K % 64 == 0.
 *   w_scale_swizzled  the §3.2 swizzle of w_scale (e8m0_shuffle), N * K/32 bytes; NULL
 *                     unless N % 32 == 0 and (K/32) % 8 == 0.
 * Every row-major operand is always present.  Inputs sit between guard zones of 0xFF bytes
 * (NaN scales), so a kernel that reads out of bounds tends to produce NaN outputs; and in a
 * sampled case (large M*N*K) only the rows of A named in rows[] and the rows of W named in
 * cols[] hold case data, the others hold filler (codes 0, scale 0x7F): computing the whole
 * product is allowed, only the requested outputs are looked at.
 *
 * ---- Outputs -----------------------------------------------------------------------------
 * The outputs to compute are rows[i] x cols[j] for i < nrows, j < ncols; output
 * (rows[i], cols[j]) goes to y[i * ncols + j].  rows == NULL means every row (nrows == M,
 * rows[i] = i); cols == NULL means every column (ncols == N).  Indices are sorted ascending
 * and distinct.  y holds nrows * ncols bf16 values and arrives filled with the poison
 * pattern 0x7FA5: the plugin must write every element (an element still holding the poison
 * is reported as unwritten).  A plugin that computes the full [M, N] product gathers the
 * requested outputs into y itself.  y sits between poisoned guard zones (before it, and after
 * it the padding rows up to a multiple of 32 rows plus more): writing y[-1], past the end
 * or into AITER-style padding rows fails the case.  So does writing into any operand (they
 * are hashed before and after every call) and changing y after gemm returned.
 *
 * ---- Return codes ------------------------------------------------------------------------
 * gemm returns 0 when y is complete; 1 when the case is not applicable to the plugin (shape
 * outside what the kernel supports, a layout it needs is NULL): the verdict becomes "n/a"
 * and msg must say why in one line (a property of the shape: the harness calls again with
 * constant operands of the same shape, and a plugin that computes those fails the case); a negative value on error (device failure, allocation
 * failure): msg says what failed; the case is reported as an error.  init returns 0 or a
 * negative value with msg (the backend then fails to open).
 * msg is a buffer of msglen bytes (msglen >= 1) holding "" on entry; write one line, NUL
 * terminated, no newline (snprintf(msg, msglen, ...)). The harness shows every byte of it (and
 * of the plugin's name) outside printable ASCII as \xNN, in its messages and documents.
 *
 * ---- Ownership and lifetime ---------------------------------------------------------------
 * Every pointer in a4w4_plugin_gemm_args belongs to the harness and is valid only for the
 * duration of the call: do not keep it, do not free it, do not write through the const
 * ones.  The info struct and its strings belong to the plugin and must stay valid and
 * unchanged until the library is closed (static storage).  State the plugin allocates in
 * init is released by fini.
 *
 * ---- Threading ----------------------------------------------------------------------------
 * The harness never calls into one instance concurrently: init, every gemm and fini of an
 * instance are serialized (possibly from different threads).  The same library may be opened
 * as more than one instance (dlopen then returns the same handle, so globals are shared):
 * each instance gets its own init / fini pair and state pointer, and calls on different
 * instances may overlap — keep per-instance data in the state, or lock globals.  gemm must
 * be synchronous: y is read as soon as it returns (wait for the device).
 *
 * ---- Accumulation contract (contracts §4.1) ---------------------------------------------------
 * contract declares what the results are compared against, bit for bit:
 *   "ordered(1)"  each 32-block's exact dot times its two scales rounded once to fp32,
 *                 blocks added in ascending K into an fp32 total from +0.0, RNE to bf16;
 *   "ordered(S)"  S a decimal integer >= 1 without sign or leading zeros (at most 65536):
 *                 the same per split of round_up(ceil(K/S), 256) elements, split totals
 *                 added in split order;
 *   "exact"       the correctly rounded bf16 of the exact sum;
 *   "bounded", "bounded(S)"  reduction order not fixed (bf16-atomic split-K over S
 *                 splits of round_up(ceil(K/S), 256) elements, each summed in fp32 in any
 *                 order, rounded to bf16 and added with bf16 atomics in any order;
 *                 "bounded" means S = 1 and is recorded as bounded(1)): each output is held
 *                 to a bound derived from its own exact split partials for that S
 *                 (contracts §4.1), so declare the S the kernel really uses; never reported
 *                 bit-exact;
 *   "tree(key=value,...)"  any other fixed order of the K reduction (contracts §4.2): leaf
 *                 size, K order, fused nodes, pairwise reduction, the internal precision and
 *                 rounding of a node, the accumulator format, split ranges and how they are
 *                 combined, the final rounding; e.g. "tree(reduce=pairwise,fuse=2)". Every
 *                 output is compared bit for bit with the tree oracle. The string may be of
 *                 any length (the harness records it in its canonical spelling);
 *   a rule set    a kernel whose order depends on the shape declares it as the text of a
 *                 contract file (contracts §4.2): `when` rules, one per line ("when
 *                 K<=4096: ordered(1)\nordered(2)"), the first rule whose predicates hold
 *                 for a case's shape is its contract, a shape no rule matches is not judged
 *                 (the run INCOMPLETE), and a rule after an unconditional one is refused;
 *                 `run --contract B=FILE` overrides whatever the plugin declares.
 * asm_layout = 1 declares that the kernel reads the ASM layouts (a_scale_shuffled,
 * w_fp4_shuffled, w_scale_swizzled): the harness then reruns it with different pad fills and
 * checks that the valid outputs do not change (contracts §3.3).  0: row-major operands only.
 *
 * ---- E8M0 code 0 (contracts §1) -------------------------------------------------------------
 * Sources disagree on scale code 0: 2^-127 (OCP, AITER's torch reference, the oracles) or
 * 2^-126 (one host driver).  A plugin declares the reading its kernel implements by also
 * exporting
 *
 *     A4W4_PLUGIN_EXPORT const char *a4w4_plugin_e8m0_code0(void) { return "2^-127"; }
 *
 * ("2^-127" or "2^-126"; anything else refuses the plugin).  Cases holding code 0 are then
 * judged under that reading alone.  A plugin that exports no such function declares nothing:
 * where the two readings expect other bits, an entry matching only one of them is
 * "ambiguous" (not judged; the run is INCOMPLETE, exit 5).  `run --e8m0-code0 R` overrides
 * every backend's declaration.  The harness process calls this function and
 * a4w4_plugin_query only (isolated: after the probe child called both). */
#ifndef A4W4_PLUGIN_H
#define A4W4_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#define A4W4_PLUGIN_ABI_VERSION 1u

/* Name of the exported query function (for dlsym). */
#define A4W4_PLUGIN_QUERY_SYMBOL "a4w4_plugin_query"

/* gemm return codes. */
#define A4W4_PLUGIN_OK 0
#define A4W4_PLUGIN_NOT_APPLICABLE 1

/* Mark the query function exported even under -fvisibility=hidden. */
#if defined(__GNUC__)
#define A4W4_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define A4W4_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* One GEMM call; see "Operands" and "Outputs" above for layouts, sizes and units. */
typedef struct {
    size_t M, N, K;                   /* elements; K % 32 == 0 */
    const uint8_t *a_fp4;             /* [M, K/2] row-major fp4x2 */
    const uint8_t *a_scale;           /* [M, K/32] row-major E8M0 */
    const uint8_t *a_scale_shuffled;  /* contracts §3.3, [a_scale_rows_padded * a_scale_cols_padded]; or NULL */
    size_t a_scale_rows_padded;       /* round_up(M, 256), 0 when a_scale_shuffled is NULL */
    size_t a_scale_cols_padded;       /* round_up(K/32, 8), 0 when a_scale_shuffled is NULL */
    const uint8_t *w_fp4;             /* [N, K/2] row-major fp4x2 */
    const uint8_t *w_scale;           /* [N, K/32] row-major E8M0 */
    const uint8_t *w_fp4_shuffled;    /* contracts §3.1, N*K/2 bytes; or NULL */
    const uint8_t *w_scale_swizzled;  /* contracts §3.2, N*K/32 bytes; or NULL */
    const size_t *rows;               /* [nrows] output rows, ascending; NULL = all (nrows == M) */
    size_t nrows;
    const size_t *cols;               /* [ncols] output columns, ascending; NULL = all (ncols == N) */
    size_t ncols;
    uint16_t *y;                      /* [nrows, ncols] bf16 bits, arrives poisoned (0x7FA5) */
    char *msg;                        /* one-line reason for return 1 or < 0 */
    size_t msglen;
} a4w4_plugin_gemm_args;

/* What a4w4_plugin_query returns (static storage, owned by the plugin). */
typedef struct {
    uint32_t abi_version;  /* A4W4_PLUGIN_ABI_VERSION; always the first member */
    const char *name;      /* short display name, e.g. "aiter-gemm_a4w4" (NULL: file name) */
    const char *contract;  /* "ordered(S)", "exact", "bounded", "bounded(S)" or "tree(...)" */
    int asm_layout;        /* 1: the kernel consumes the ASM layouts (pad variants are run) */
    /* Optional (NULL): called once per instance before any gemm. Set *state (may stay NULL);
     * return 0, or < 0 with msg (the backend fails to open). */
    int (*init)(void **state, char *msg, size_t msglen);
    /* Required: compute the requested outputs. 0 ok, 1 not applicable, < 0 error. */
    int (*gemm)(void *state, const a4w4_plugin_gemm_args *args);
    /* Optional (NULL): called once per instance after the last gemm, with init's state. */
    void (*fini)(void *state);
} a4w4_plugin_info;

typedef const a4w4_plugin_info *(*a4w4_plugin_query_fn)(void);

/* Optional (ABI 1 compatible: a plugin without it is undeclared): the reading of E8M0 scale
 * code 0 the kernel implements, "2^-127" (OCP, AITER's torch reference) or "2^-126" (one host
 * driver), a static string. See "E8M0 code 0" above. */
#define A4W4_PLUGIN_E8M0_CODE0_SYMBOL "a4w4_plugin_e8m0_code0"
typedef const char *(*a4w4_plugin_e8m0_code0_fn)(void);

/* Exported by every plugin; may return NULL to refuse loading (e.g. no device). */
A4W4_PLUGIN_EXPORT const a4w4_plugin_info *a4w4_plugin_query(void);

/* Exported by a plugin that declares its E8M0 code-0 reading (optional, above). */
A4W4_PLUGIN_EXPORT const char *a4w4_plugin_e8m0_code0(void);

#ifdef __cplusplus
}
#endif

#endif
