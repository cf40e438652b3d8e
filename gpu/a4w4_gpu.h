/* a4w4_gpu.h — C ABI of the GPU systems under test: the per-1x32 MXFP4 quantizer,
 * the three layout transforms, the ASM-layout GEMM (tile configurations named after AITER's
 * gfx950 f4gemm kernels, plain / deterministic split-K / atomic split-K) and the row-major
 * fallback GEMM. docs/contracts.md sections are cited per function.
 *
 * Plain C types only; safe to include from C11 and C++. Every function that can fail returns
 * an a4w4_gpu_status (0 ok, a distinct negative per failure class); the library never prints
 * and never exits. a4w4_gpu_last_error() gives the runtime's message of the last failure on
 * the calling thread.
 *
 * Two forms of every operation:
 *   - host form  (no suffix): all pointers are HOST memory. The call allocates device buffers,
 *     copies in, launches, copies the outputs back, frees, and synchronises. Easiest for the
 *     harness; not for timing.
 *   - device form (_dev suffix): all tensor pointers are DEVICE memory (from a4w4_gpu_malloc),
 *     `stream` is a hipStream_t/cudaStream_t cast to void* (NULL: the default stream). The call
 *     only enqueues work (asynchronous); call a4w4_gpu_synchronize() before reading results.
 *     fp4 and output pointers must be 16-byte aligned (a4w4_gpu_malloc gives 256), else
 *     A4W4_GPU_EARG.
 *
 * Byte sizes of the tensors (all U8 unless said; bf16 travels as uint16_t bits):
 *   x (quantizer input)   M*K elements of f32 / bf16 / fp16, row-major
 *   a_fp4                 M*K/2          a_scale (row-major)         M*K/32
 *   a_scale_shuffled      a4w4_gpu_act_scale_shuffled_bytes(M, K/32) = ceil(M/256)*256 *
 *                         ceil((K/32)/8)*8   (contracts §3.3)
 *   w_fp4 / w_fp4_shuffled N*K/2         w_scale / w_scale_swizzled  N*K/32
 *   y                     M*N uint16_t (bf16 bits), row-major; nothing outside [M, N] is
 *                         written.
 *
 * Accumulation contracts (contracts §4.1) kept by the GEMMs:
 *   a4w4_gpu_gemm_asm(splits = S, A4W4_GPU_SPLIT_ORDERED)   ordered(S), bit for bit
 *                         (S = 1: ordered(1)); split ranges k_per_split = round_up(ceil(K/S),
 *                         256), at least 256; split totals added in split order.
 *   a4w4_gpu_gemm_asm(splits = S, A4W4_GPU_SPLIT_ATOMIC)    bounded only: output zeroed, each
 *                         split's fp32 total rounded to bf16 and added with a bf16 atomic
 *                         (fp32 add, RNE to bf16) in whatever order the splits finish — like
 *                         AITER's bf16-atomic split-K kernels.
 *   a4w4_gpu_gemm_rowmajor                                   ordered(1), bit for bit.
 * Two kernels keep these contracts (the _engine forms pick one; the others run the portable
 * one): A4W4_GPU_ENGINE_PORTABLE, the plain reference kernel (block dots by 4-way int8 dot
 * products), and A4W4_GPU_ENGINE_MMA, the block dots from the matrix units (NVIDIA
 * mma.sync m16n8k32 s8, AMD MFMA i8; a4w4_gpu_mma.hip), held bit-equal to it.
 * NaN outputs (a scale 0xFF on either side, or Inf - Inf) are written as bf16 0x7FC0. */
#ifndef A4W4_GPU_H
#define A4W4_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes ------------------------------------------------------------------ */
typedef enum {
    A4W4_GPU_OK = 0,
    A4W4_GPU_ENODEV = -10,   /* no GPU / no driver / library built without a GPU backend */
    A4W4_GPU_ESHAPE = -11,   /* bad shape: M, N or K zero, K % 32 != 0, size overflow */
    A4W4_GPU_ELAYOUT = -12,  /* layout rule fails (preshuffle N%16/K%64, swizzle N%32/(K/32)%8),
                                unknown tile, tile that needs another layout */
    A4W4_GPU_ELAUNCH = -13,  /* kernel launch or execution failed */
    A4W4_GPU_ENOMEM = -14,   /* device (or host staging) allocation failed */
    A4W4_GPU_EARG = -15,     /* NULL / misaligned pointer, bad mode, dtype, splits or tile index */
    A4W4_GPU_ERUNTIME = -16  /* any other runtime failure (copy, event, sync) */
} a4w4_gpu_status;

/* One short sentence per status (static storage). */
const char *a4w4_gpu_strerror(int status);
/* The GPU runtime's message for the last failure on this thread ("" when none). */
const char *a4w4_gpu_last_error(void);
/* "nvidia" or "amd": the platform this library was compiled for. */
const char *a4w4_gpu_platform(void);

/* Number of usable devices (0 when none or when the runtime fails: never negative). When
 * name != NULL and len > 0, writes device 0's name (NUL-terminated, truncated to len) or ""
 * when there is no device. */
int a4w4_gpu_available(char *name, size_t len);

/* ---- tile configurations (cases/aiter/gfx950_f4gemm_bf16_per1x32Fp4.csv) --------------- */
typedef struct {
    const char *name;     /* "f4gemm_bf16_per1x32Fp4_BpreShuffle_32x128" */
    const char *symbol;   /* "_ZN5aiter41f4gemm_bf16_per1x32Fp4_BpreShuffle_32x128E" */
    int tile_m, tile_n;   /* output tile of one thread block */
    int split_k;          /* the table's splitK column (AITER runs it with atomic split-K) */
    int bpreshuffle;      /* 1: w_fp4 preshuffled (§3.1); 0: w_fp4 row-major [N, K/2] (the
                             one noBpreShuffle kernel; scales swizzled/shuffled as for 1 —
                             our assumption, AITER documents nothing for it) */
} a4w4_gpu_tile;

int a4w4_gpu_tile_count(void);
/* NULL when index is out of range. */
const a4w4_gpu_tile *a4w4_gpu_tile_get(int index);
/* Index of a tile by table name, mangled symbol, ".co" file name or "MxN" (the BpreShuffle
 * variant); -1 when unknown. */
int a4w4_gpu_tile_find(const char *name);

/* ---- quantizer, per_1x32_f4_quant (contracts §2, §3.3) -------------------------------------- */
/* dtype values match ref's a4w4_in_dtype; mode values match ref's a4w4_scale_mode. */
enum { A4W4_GPU_IN_F32 = 0, A4W4_GPU_IN_BF16 = 1, A4W4_GPU_IN_FP16 = 2 };
enum { A4W4_GPU_ROUND_UP = 0, A4W4_GPU_ROUND_DOWN = 1, A4W4_GPU_CEIL = 2, A4W4_GPU_EVEN = 3 };

/* Bytes of the shuffled activation scale of an [M, cols] scale tensor (0 on overflow). */
size_t a4w4_gpu_act_scale_shuffled_bytes(size_t M, size_t cols);

/* x [M, K] -> x_fp4 [M, K/2] and x_scale. shuffle == 0: x_scale [M, K/32] row-major.
 * shuffle != 0: x_scale is the §3.3 layout (a4w4_gpu_act_scale_shuffled_bytes(M, K/32)
 * bytes), pad rows (r >= M) filled with row_fill, pad columns (c >= K/32, any row) with
 * col_fill (SGLang: 0x7F, 0x7F); fills are ignored when shuffle == 0. A block holding NaN
 * or Inf gets scale 0xFF; its element codes are unspecified. Needs K % 32 == 0. */
int a4w4_gpu_quantize(const void *x, int dtype, size_t M, size_t K, int mode, int shuffle,
                      uint8_t row_fill, uint8_t col_fill, uint8_t *x_fp4, uint8_t *x_scale);
int a4w4_gpu_quantize_dev(const void *x, int dtype, size_t M, size_t K, int mode,
                          int shuffle, uint8_t row_fill, uint8_t col_fill, uint8_t *x_fp4,
                          uint8_t *x_scale, void *stream);

/* ---- layouts (contracts §3) --------------------------------------------------------------- */
/* §3.1 w [N, K/2] -> preshuffled [N*K/2]. ELAYOUT unless N % 16 == 0 and K % 64 == 0. */
int a4w4_gpu_preshuffle(const uint8_t *w, size_t N, size_t K, uint8_t *dst);
int a4w4_gpu_preshuffle_dev(const uint8_t *w, size_t N, size_t K, uint8_t *dst, void *stream);
/* §3.2 [rows, cols] -> swizzled. ELAYOUT unless rows % 32 == 0 and cols % 8 == 0. */
int a4w4_gpu_scale_swizzle(const uint8_t *src, size_t rows, size_t cols, uint8_t *dst);
int a4w4_gpu_scale_swizzle_dev(const uint8_t *src, size_t rows, size_t cols, uint8_t *dst,
                               void *stream);
/* §3.3 a_scale [M, cols] -> padded + shuffled (a4w4_gpu_act_scale_shuffled_bytes bytes);
 * pad rows filled row_fill, pad columns (any row) col_fill. */
int a4w4_gpu_act_scale_shuffle(const uint8_t *src, size_t M, size_t cols, uint8_t row_fill,
                               uint8_t col_fill, uint8_t *dst);
int a4w4_gpu_act_scale_shuffle_dev(const uint8_t *src, size_t M, size_t cols,
                                   uint8_t row_fill, uint8_t col_fill, uint8_t *dst,
                                   void *stream);

/* ---- GEMMs (contracts §4) ----------------------------------------------------------------- */
enum { A4W4_GPU_SPLIT_ORDERED = 0, A4W4_GPU_SPLIT_ATOMIC = 1 };

/* Split-K ranges (contracts §4.1 ordered(S)): k_per_split = round_up(ceil(K/S), 256), at least
 * 256; the number of non-empty splits ceil(K / k_per_split) may be below S. */
size_t a4w4_gpu_split_k_per_split(size_t K, unsigned splits);
unsigned a4w4_gpu_split_count(size_t K, unsigned splits);

/* Device workspace bytes a4w4_gpu_gemm_asm_dev needs (0 for splits <= 1 or atomic). */
size_t a4w4_gpu_gemm_workspace_bytes(size_t M, size_t N, size_t K, unsigned splits,
                                     int split_mode);

/* ASM-layout GEMM y = A * W^T (bf16 [M, N]) on tile `tile` (a4w4_gpu_tile_find).
 * Reads a_fp4 [M, K/2] row-major, a_scale_shuffled (§3.3, padded to 256 rows / 8 cols),
 * w_fp4 preshuffled (§3.1; row-major when the tile's bpreshuffle == 0), w_scale_swizzled
 * (§3.2). Needs N % 32 == 0 and K % 256 == 0 (the swizzle rule on [N, K/32] and the
 * preshuffle rule), any M >= 1; else ELAYOUT. splits >= 1; split_mode A4W4_GPU_SPLIT_*.
 * Pad rows of a_scale_shuffled are never used for valid outputs; no byte past any buffer
 * is read. The device form takes a workspace of a4w4_gpu_gemm_workspace_bytes() bytes;
 * workspace == NULL makes it allocate (and free, after a synchronize) one itself. */
int a4w4_gpu_gemm_asm(int tile, unsigned splits, int split_mode, const uint8_t *a_fp4,
                      const uint8_t *a_scale_shuffled, const uint8_t *w_fp4,
                      const uint8_t *w_scale_swizzled, size_t M, size_t N, size_t K,
                      uint16_t *y);
int a4w4_gpu_gemm_asm_dev(int tile, unsigned splits, int split_mode, const uint8_t *a_fp4,
                          const uint8_t *a_scale_shuffled, const uint8_t *w_fp4,
                          const uint8_t *w_scale_swizzled, size_t M, size_t N, size_t K,
                          uint16_t *y, void *workspace, size_t workspace_bytes, void *stream);

/* The same GEMMs on a chosen kernel: engine A4W4_GPU_ENGINE_PORTABLE (what the forms above
 * run) or A4W4_GPU_ENGINE_MMA (the matrix units; no test-only faults); any other engine is
 * A4W4_GPU_EARG. Arguments, contracts and errors as above, except that the matrix-unit
 * kernel's deterministic split-K needs a workspace of only M*N*4 bytes (one fp32 accumulator
 * the splits are added into in split order; a4w4_gpu_gemm_workspace_bytes is enough). */
enum { A4W4_GPU_ENGINE_PORTABLE = 0, A4W4_GPU_ENGINE_MMA = 1 };
int a4w4_gpu_gemm_asm_engine(int engine, int tile, unsigned splits, int split_mode,
                             const uint8_t *a_fp4, const uint8_t *a_scale_shuffled,
                             const uint8_t *w_fp4, const uint8_t *w_scale_swizzled, size_t M,
                             size_t N, size_t K, uint16_t *y);
int a4w4_gpu_gemm_asm_engine_dev(int engine, int tile, unsigned splits, int split_mode,
                                 const uint8_t *a_fp4, const uint8_t *a_scale_shuffled,
                                 const uint8_t *w_fp4, const uint8_t *w_scale_swizzled,
                                 size_t M, size_t N, size_t K, uint16_t *y, void *workspace,
                                 size_t workspace_bytes, void *stream);

/* Fallback GEMM (the role of Triton's gemm_afp4wfp4): all operands row-major, a_fp4
 * [M, K/2], a_scale [M, K/32], w_fp4 [N, K/2], w_scale [N, K/32]; any M, N >= 1, K % 32 == 0;
 * ordered(1). */
int a4w4_gpu_gemm_rowmajor(const uint8_t *a_fp4, const uint8_t *a_scale, const uint8_t *w_fp4,
                           const uint8_t *w_scale, size_t M, size_t N, size_t K, uint16_t *y);
int a4w4_gpu_gemm_rowmajor_dev(const uint8_t *a_fp4, const uint8_t *a_scale,
                               const uint8_t *w_fp4, const uint8_t *w_scale, size_t M, size_t N,
                               size_t K, uint16_t *y, void *stream);
int a4w4_gpu_gemm_rowmajor_engine(int engine, const uint8_t *a_fp4, const uint8_t *a_scale,
                                  const uint8_t *w_fp4, const uint8_t *w_scale, size_t M,
                                  size_t N, size_t K, uint16_t *y);
int a4w4_gpu_gemm_rowmajor_engine_dev(int engine, const uint8_t *a_fp4, const uint8_t *a_scale,
                                      const uint8_t *w_fp4, const uint8_t *w_scale, size_t M,
                                      size_t N, size_t K, uint16_t *y, void *stream);

/* ---- fault injection (TEST ONLY: `a4w4check selftest --gpu`) --------------------
 * Deliberately wrong behaviour inside the device code, so the harness can prove it catches
 * each known class of fault on the GPU itself. A process-wide setting, 0 (NONE) by default:
 * every launcher reads it when it enqueues work and passes it to its kernel as a plain
 * argument (the GEMM picks a kernel instantiation with the fault code compiled out when it is
 * 0, so the fault-free path is unchanged in results and speed). Work already enqueued keeps
 * the fault it was launched with. Not synchronised with concurrent launches from other
 * threads: set it, launch, reset it to NONE, on one thread. Never set it in production.
 * Each fault is silent outside the shapes / data named, as the real bug would be:
 *   PRESHUFFLE_K1N1   preshuffle kernel (§3.1): view permuted (0,2,1,3,4), k1 and n1 swapped
 *   SWIZZLE_D1D4      scale swizzle and activation-scale shuffle kernels (§3.2, §3.3): axes
 *                     d1 and d4 swapped, view permuted (0,3,5,2,1,4)
 *   NIBBLE_SWAP       quantizer: element 2i packed in the HIGH nibble
 *   MODE_ROUND_UP ... MODE_EVEN   quantizer: asked for that scale mode, computes the scale
 *                     code in the next one (round_up->round_down->ceil->even->round_up)
 *   E2M1_TRUNC        quantizer: E2M1 by truncation toward zero instead of RNE
 *   E8M0_CODE0        GEMM: a scale byte 0 (either side) decoded as 2^-126, not 2^-127
 *   DROP_KBLOCK       GEMM: the last 32-block of a partial (K % 256 != 0) 256-chunk dropped
 *                     (a tail-loop bound off by one); silent when K % 256 == 0
 *   DROP_KCHUNK       GEMM: the last 256-chunk of each split's K range dropped when the range
 *                     holds more than one chunk (main-loop bound off by one)
 *   ROWS_SMALL_N      GEMM: when N <= 128 and 2 <= M <= 64 every row reads activation row 0
 *                     (codes and scales): right in row 0, wrong in rows 1..M-1
 *   SPLITK_BF16       split reduce of the ordered split-K: partials rounded to bf16 and
 *                     added in bf16 (split order) instead of fp32 + one rounding
 *   TAIL_UNWRITTEN    GEMM launch: floor(M / tile_m) row tiles, the last partial tile is
 *                     never written (no launch at all when M < tile_m)
 *   READ_PAST_A       GEMM: 2-row micro-tiles; an output row takes the NaN flag of its pair
 *                     row 2i^1, whose scales are loaded unclamped, so for odd M row M-1
 *                     reads the scales of row M, ONE ROW PAST a_scale (row-major a_scale:
 *                     outside the buffer; a caller that wants to see it puts a guard of 0xFF
 *                     after the buffer, then row M-1 turns NaN; a shuffled a_scale has
 *                     pad rows there)
 *   PAD_FF            GEMM (shuffled a_scale): NaN test over the scales of the whole 32-row
 *                     group, pad rows included: a 0xFF row pad NaNs the partial tile
 *   PAD_00            GEMM (shuffled a_scale): a K block is skipped for a 32-row group when
 *                     the group's MINIMUM scale is 0 (meant: maximum): a 0x00 row pad drops
 *                     every block of the partial tile */
typedef enum {
    A4W4_GPU_FAULT_NONE = 0,
    A4W4_GPU_FAULT_PRESHUFFLE_K1N1 = 1,
    A4W4_GPU_FAULT_SWIZZLE_D1D4 = 2,
    A4W4_GPU_FAULT_NIBBLE_SWAP = 3,
    A4W4_GPU_FAULT_MODE_ROUND_UP = 4,   /* + mode: 4 round_up, 5 round_down, 6 ceil, 7 even */
    A4W4_GPU_FAULT_MODE_ROUND_DOWN = 5,
    A4W4_GPU_FAULT_MODE_CEIL = 6,
    A4W4_GPU_FAULT_MODE_EVEN = 7,
    A4W4_GPU_FAULT_E2M1_TRUNC = 8,
    A4W4_GPU_FAULT_E8M0_CODE0 = 9,
    A4W4_GPU_FAULT_DROP_KBLOCK = 10,
    A4W4_GPU_FAULT_DROP_KCHUNK = 11,
    A4W4_GPU_FAULT_ROWS_SMALL_N = 12,
    A4W4_GPU_FAULT_SPLITK_BF16 = 13,
    A4W4_GPU_FAULT_TAIL_UNWRITTEN = 14,
    A4W4_GPU_FAULT_READ_PAST_A = 15,
    A4W4_GPU_FAULT_PAD_FF = 16,
    A4W4_GPU_FAULT_PAD_00 = 17,
    A4W4_GPU_FAULT_COUNT = 18
} a4w4_gpu_fault;

/* Set the process-wide fault (a4w4_gpu_fault); A4W4_GPU_EARG outside [0, COUNT), the setting
 * unchanged. Needs no device. */
int a4w4_gpu_set_fault(int fault);
/* The fault in force (0 when none). */
int a4w4_gpu_get_fault(void);

/* ---- device memory and timing hooks (for tests and `bench`) ----------------------------- */
int a4w4_gpu_malloc(void **ptr, size_t bytes);          /* *ptr = NULL on failure */
int a4w4_gpu_free(void *ptr);                            /* NULL is fine */
int a4w4_gpu_memcpy_h2d(void *dst, const void *src, size_t bytes);
int a4w4_gpu_memcpy_d2h(void *dst, const void *src, size_t bytes);
int a4w4_gpu_memcpy_d2d(void *dst, const void *src, size_t bytes, void *stream); /* async */
int a4w4_gpu_memset(void *dst, int value, size_t bytes);
int a4w4_gpu_synchronize(void);                          /* whole device; reports kernel faults */

/* Event timer: record start and stop around enqueued work on `stream`, then read the
 * elapsed milliseconds (waits for the stop event). */
typedef struct a4w4_gpu_timer a4w4_gpu_timer;
int a4w4_gpu_timer_create(a4w4_gpu_timer **timer);
int a4w4_gpu_timer_start(a4w4_gpu_timer *timer, void *stream);
int a4w4_gpu_timer_stop(a4w4_gpu_timer *timer, void *stream);
int a4w4_gpu_timer_elapsed_ms(a4w4_gpu_timer *timer, float *ms);
void a4w4_gpu_timer_destroy(a4w4_gpu_timer *timer);

#ifdef __cplusplus
}
#endif

#endif
