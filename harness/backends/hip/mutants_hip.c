/* mutants_hip.c — the GPU mutants of `a4w4check selftest --gpu` (mutants.h).
 * Built only with a GPU (A4W4_GPU != off); every type needs a usable GPU (.gpu = 1).
 *
 * The faults live in the device code, not on the host: each mutant switches on one test-only
 * fault of gpu/a4w4_gpu.h (a4w4_gpu_set_fault; the launchers pass it to the kernels as an
 * argument), runs exactly the device path of the correct HIP backend (backend_hip.h: same
 * operand cache, poisoned device output, sampled rows copied back), and switches the fault
 * off again before it returns, whatever happened. They mirror the CPU mutants of
 * mutants.c; the comment of each says which case of cases/selftest.csv kills it.
 *
 * mut-hip-read-past-a needs a guard to be visible: on a GPU a read one row past a buffer
 * rarely faults and reads whatever follows. So that mutant uploads a_scale at the START of
 * its own device allocation with A4W4_GUARD_BYTES of 0xFF (the NaN scale) right after it:
 * row M's scales read as 0xFF, row M-1 turns NaN, and the runner's comparison kills it. */
#include <stdio.h>
#include <string.h>

#include "a4w4_gpu.h"
#include "fsutil.h"
#include "registry.h"
#include "backend_hip.h"
#include "gen.h"

/* Switch the fault on; A4W4_EINVAL with why when the library refuses it. */
static int fault_on(int fault, char *why, size_t whylen)
{
    int rc = a4w4_gpu_set_fault(fault);
    if (rc != A4W4_GPU_OK) {
        snprintf(why, whylen, "a4w4_gpu_set_fault(%d) failed: %s", fault, a4w4_gpu_strerror(rc));
        return A4W4_EINVAL;
    }
    return A4W4_OK;
}

static void fault_off(void) { (void)a4w4_gpu_set_fault(A4W4_GPU_FAULT_NONE); }

/* The ASM-layout GEMM on tile `tile_name` with `fault` on. */
static int asm_with(int fault, const char *tile_name, unsigned splits, const a4w4_run_args *a)
{
    int tile = a4w4_gpu_tile_find(tile_name);
    if (tile < 0) {
        snprintf(a->why, a->whylen, "the GPU library has no tile %s", tile_name);
        return A4W4_EINVAL;
    }
    int rc = fault_on(fault, a->why, a->whylen);
    if (rc == A4W4_OK)
        rc = a4w4_hip_asm_gemm(A4W4_GPU_ENGINE_PORTABLE, tile, splits, A4W4_GPU_SPLIT_ORDERED, a);
    fault_off();
    return rc;
}

/* The row-major fallback GEMM with `fault` on (a_scale from the shared device cache). */
static int rowmajor_with(int fault, const a4w4_run_args *a)
{
    int rc = fault_on(fault, a->why, a->whylen);
    if (rc == A4W4_OK)
        rc = a4w4_hip_rowmajor_gemm(A4W4_GPU_ENGINE_PORTABLE, a, NULL);
    fault_off();
    return rc;
}

#define ASM_RUN(fn, fault, tile, splits)                                                      \
    static int fn(void *ctx, const a4w4_run_args *a)                                          \
    {                                                                                         \
        (void)ctx;                                                                            \
        return asm_with(fault, tile, splits, a);                                              \
    }
#define ROWMAJOR_RUN(fn, fault)                                                               \
    static int fn(void *ctx, const a4w4_run_args *a)                                          \
    {                                                                                         \
        (void)ctx;                                                                            \
        return rowmajor_with(fault, a);                                                       \
    }

/* GEMM faults. Kills expected on cases/selftest.csv (the first case in file order that can):
 *   pad-ff       st_m33_n64_k512, "row pad 0xFF" variant (M % 32 != 0: a partial 32-row group)
 *   pad-00       st_m33_n64_k512, "row pad 0x00" variant
 *   e8m0-code0   st_m16_n64_k256 (code0 regime, seed 7014: 115 outputs move)
 *   drop-kblock  st_m8_n48_k320 (K % 256 = 64: the last of the tail's 2 blocks dropped)
 *   drop-kchunk  st_m33_n64_k512 (K = 512: the second 256-chunk dropped)
 *   rows-small-n st_m33_n64_k512 (N = 64 <= 128, M = 33 in [2, 64])
 *   splitk-bf16  st_m33_n64_k512 (K = 512: two ordered(2) splits of 256)
 *   tail-unwrit. st_m33_n64_k512 (tile 32x128: floor(33/32) = 1 tile, row 32 keeps the poison)
 *   read-past-a  st_m33_n64_k512 (odd M: row 32 pairs with row 33, past the buffer: NaN) */
ASM_RUN(run_pad_ff, A4W4_GPU_FAULT_PAD_FF, "32x128", 1)
ASM_RUN(run_pad_00, A4W4_GPU_FAULT_PAD_00, "32x128", 1)
ROWMAJOR_RUN(run_e8m0, A4W4_GPU_FAULT_E8M0_CODE0)
ROWMAJOR_RUN(run_drop, A4W4_GPU_FAULT_DROP_KBLOCK)
ASM_RUN(run_drop_chunk, A4W4_GPU_FAULT_DROP_KCHUNK, "32x128", 1)
ASM_RUN(run_rows, A4W4_GPU_FAULT_ROWS_SMALL_N, "32x128", 1)
ASM_RUN(run_splitk, A4W4_GPU_FAULT_SPLITK_BF16, "256x256", 2)
ASM_RUN(run_tail, A4W4_GPU_FAULT_TAIL_UNWRITTEN, "32x128", 1)

/* Row-major GEMM with READ_PAST_A on, a_scale followed by a 0xFF guard in one allocation. */
static int run_past(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    const a4w4_case_data *d = a->d;
    const size_t len = d->a_scale.len;
    void *buf = NULL;
    int grc = a4w4_gpu_malloc(&buf, len + A4W4_GUARD_BYTES);
    if (grc == A4W4_GPU_OK)
        grc = a4w4_gpu_memcpy_h2d(buf, d->a_scale.data, len);
    if (grc == A4W4_GPU_OK)
        grc = a4w4_gpu_memset((uint8_t *)buf + len, 0xFF, A4W4_GUARD_BYTES);
    int rc = grc == A4W4_GPU_OK ? fault_on(A4W4_GPU_FAULT_READ_PAST_A, a->why, a->whylen)
                                : a4w4_hip_status(grc, a->why, a->whylen);
    if (rc == A4W4_OK)
        rc = a4w4_hip_rowmajor_gemm(A4W4_GPU_ENGINE_PORTABLE, a, buf); /* synchronises */
    fault_off();
    a4w4_gpu_free(buf);
    return rc;
}

/* Quantizer faults: every one is killed on the quantizer-bytes check of the first normal
 * case whose mode it breaks: nibble-swap and e2m1-trunc on st_m8_n48_k320 (round_up; the
 * first normal case), mode-X on st_m4_n32_k1024_<X> (X asked, the next mode used). */
#define QUANT_RUN(fn, fault)                                                                  \
    static int fn(void *ctx, const uint16_t *x, size_t rows, size_t K, int mode, uint8_t *fp4, \
                  uint8_t *scale, char *why, size_t whylen)                                   \
    {                                                                                         \
        (void)ctx;                                                                            \
        int rc = fault_on(fault, why, whylen);                                                \
        if (rc == A4W4_OK)                                                                    \
            rc = a4w4_hip_quantize(x, rows, K, mode, fp4, scale, why, whylen);                \
        fault_off();                                                                          \
        return rc;                                                                            \
    }
QUANT_RUN(q_nibble, A4W4_GPU_FAULT_NIBBLE_SWAP)
QUANT_RUN(q_trunc, A4W4_GPU_FAULT_E2M1_TRUNC)
QUANT_RUN(q_mode_ru, A4W4_GPU_FAULT_MODE_ROUND_UP)
QUANT_RUN(q_mode_rd, A4W4_GPU_FAULT_MODE_ROUND_DOWN)
QUANT_RUN(q_mode_ce, A4W4_GPU_FAULT_MODE_CEIL)
QUANT_RUN(q_mode_ev, A4W4_GPU_FAULT_MODE_EVEN)

/* Layout faults: killed on the layout-bytes check of the first case with the layouts
 * (st_m33_n64_k512: preshuffle, weight-scale swizzle and activation-scale shuffle). */
#define LAYOUT_RUN(fn, fault)                                                                 \
    static int fn(void *ctx, const a4w4_case_data *d, uint8_t *wsh, uint8_t *wsw,             \
                  uint8_t *ash, char *why, size_t whylen)                                     \
    {                                                                                         \
        (void)ctx;                                                                            \
        int rc = fault_on(fault, why, whylen);                                                \
        if (rc == A4W4_OK)                                                                    \
            rc = a4w4_hip_layouts(d, wsh, wsw, ash, why, whylen);                             \
        fault_off();                                                                          \
        return rc;                                                                            \
    }
LAYOUT_RUN(l_k1n1, A4W4_GPU_FAULT_PRESHUFFLE_K1N1)
LAYOUT_RUN(l_d1d4, A4W4_GPU_FAULT_SWIZZLE_D1D4)

#define GPU_GEMM(var, nm, desc, contr, asm_, fn)                                               \
    const a4w4_backend_type var = {.name = nm, .what = desc, .contract = contr,                \
                                   .asm_layout = asm_, .gpu = 1, .thread_safe = 0,             \
                                   .available = a4w4_hip_available, .run = fn}
#define GPU_BYTES(var, nm, desc, field, fn)                                                    \
    const a4w4_backend_type var = {.name = nm, .what = desc, .contract = "bytes", .gpu = 1,    \
                                   .thread_safe = 0,                                           \
                                   .available = a4w4_hip_available, .field = fn}

GPU_BYTES(a4w4_mut_hip_k1n1, "mut-hip-preshuffle-k1n1",
          "GPU preshuffle kernel with k1 and n1 swapped (layout bytes)", layouts, l_k1n1);
GPU_BYTES(a4w4_mut_hip_d1d4, "mut-hip-swizzle-d1d4",
          "GPU scale-swizzle kernels with axes d1 and d4 swapped (layout bytes)", layouts,
          l_d1d4);
GPU_GEMM(a4w4_mut_hip_pad_ff, "mut-hip-pad-ff",
         "GPU ASM GEMM 32x128, NaN test over the 32-row scale group incl. pad rows "
         "(row pad 0xFF variant)", "ordered(1)", 1, run_pad_ff);
GPU_GEMM(a4w4_mut_hip_pad_00, "mut-hip-pad-00",
         "GPU ASM GEMM 32x128, zero-block skip on the group's minimum scale "
         "(row pad 0x00 variant)", "ordered(1)", 1, run_pad_00);
GPU_BYTES(a4w4_mut_hip_nibble, "mut-hip-nibble-swap",
          "GPU quantizer packs element 2i in the high nibble (quantizer bytes)", quantize,
          q_nibble);
GPU_GEMM(a4w4_mut_hip_e8m0, "mut-hip-e8m0-code0",
         "GPU row-major GEMM decodes E8M0 code 0 as 2^-126 (code0 regime)", "ordered(1)", 0,
         run_e8m0);
GPU_BYTES(a4w4_mut_hip_mode_ru, "mut-hip-mode-round_up",
          "GPU quantizer asked for round_up quantizes in round_down (quantizer bytes)",
          quantize, q_mode_ru);
GPU_BYTES(a4w4_mut_hip_mode_rd, "mut-hip-mode-round_down",
          "GPU quantizer asked for round_down quantizes in ceil (quantizer bytes)", quantize,
          q_mode_rd);
GPU_BYTES(a4w4_mut_hip_mode_ce, "mut-hip-mode-ceil",
          "GPU quantizer asked for ceil quantizes in even (quantizer bytes)", quantize,
          q_mode_ce);
GPU_BYTES(a4w4_mut_hip_mode_ev, "mut-hip-mode-even",
          "GPU quantizer asked for even quantizes in round_up (quantizer bytes)", quantize,
          q_mode_ev);
GPU_BYTES(a4w4_mut_hip_trunc, "mut-hip-e2m1-trunc",
          "GPU quantizer rounds E2M1 by truncation instead of RNE (quantizer bytes)", quantize,
          q_trunc);
GPU_GEMM(a4w4_mut_hip_drop, "mut-hip-drop-kblock",
         "GPU row-major GEMM drops the last K block when K % 256 != 0 (plain comparison)",
         "ordered(1)", 0, run_drop);
GPU_GEMM(a4w4_mut_hip_drop_chunk, "mut-hip-drop-kchunk",
         "GPU ASM GEMM 32x128 drops the last 256-chunk of K when K > 256 (plain comparison)",
         "ordered(1)", 1, run_drop_chunk);
GPU_GEMM(a4w4_mut_hip_rows, "mut-hip-rows-small-n",
         "GPU ASM GEMM 32x128: rows 1..M-1 read row 0 when N <= 128 and 2 <= M <= 64 "
         "(plain comparison)", "ordered(1)", 1, run_rows);
GPU_GEMM(a4w4_mut_hip_splitk, "mut-hip-splitk-bf16",
         "GPU ASM GEMM, 2-way split-K reduced in bf16 while declaring ordered(2) "
         "(plain comparison)", "ordered(2)", 1, run_splitk);
GPU_GEMM(a4w4_mut_hip_tail, "mut-hip-tail-unwritten",
         "GPU ASM GEMM 32x128 launches floor(M/32) row tiles: the partial tile stays "
         "unwritten (poison)", "ordered(1)", 1, run_tail);
GPU_GEMM(a4w4_mut_hip_past, "mut-hip-read-past-a",
         "GPU row-major GEMM, 2-row micro-tiles read a_scale row M when M is odd "
         "(0xFF guard after the buffer -> NaN)", "ordered(1)", 0, run_past);
