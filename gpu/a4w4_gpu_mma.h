/* a4w4_gpu_mma.h — the matrix-unit GEMM's fragment maps and block scaling (internal).
 *
 * Pure __host__ __device__ helpers, so tests/gpu/a4w4_gpu_emu.hip runs them on the CPU.
 *
 * Fragment maps: which output, A row, W row and K offset each lane holds in one matrix
 * instruction. One "unit" is one instruction's output: 16 x 8 on NVIDIA
 * (mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32, a warp of 32 lanes), 16 x 16 on AMD
 * (v_mfma_i32_16x16x32_i8 on gfx940+, two v_mfma_i32_16x16x16i8 on gfx90a; a wave of 64).
 * Every unit consumes one 32-element K block, so its int32 result is one exact block dot
 * (contracts §4: |dot| <= 4608) per output.
 *
 *   NVIDIA (PTX ISA, "Matrix Fragments for mma.m16n8k32" .s8), lane = 4 g + t:
 *     A reg r (4 int8, K k0..k0+3): row g + 8 (r & 1), k0 = 4 t + 16 (r >> 1)
 *     B reg r (4 int8): W row (output column) g, k0 = 4 t + 16 r
 *     C element i: row g + 8 (i >> 1), column 2 t + (i & 1)
 *   AMD (CDNA MFMA i8 16x16), lane = 16 q + r:
 *     A and B: row (column) r, K 8 q .. 8 q + 7 (gfx940+), or 4 q .. 4 q + 3 and
 *     16 + 4 q .. 16 + 4 q + 3 (gfx90a, two instructions)
 *     C element i: row 4 q + i, column r
 *
 * Block scaling (contracts §4.1 ordered(S): value = RNE_fp32(d * 2^(sa + sb - 256)), once):
 * the two scales become per-row and per-column fp32 factors, loaded once per block and
 * shared by every output of the row or column:
 *   fa = 2^(sa - 127), fb = 2^(sb - 129): value = (d * fa) * fb.
 * d * fa is exact (|d| < 2^13, so no overflow while sa <= 241; its lowest bit 2^(sa - 127) >=
 * 2^-127 is representable, subnormal or not), and the second product rounds the exact value
 * once: gradual underflow and overflow to Inf included. When sa >= 242 the first product
 * could overflow while the value does not, so those rows take the other order:
 *   fa2 = 2^(sa - 129), fb2 = 2^(sb - 127): value = (d * fb2) * fa2,
 * exact first unless sb >= 242 as well, where the value (at least 2^228 * |d|) overflows
 * anyway. fa2 = 0 marks a row of the first kind. A scale 0xFF gives NaN factors (fa and fa2,
 * or fb and fb2), so the block value is NaN and so is the total. */
#ifndef A4W4_GPU_MMA_H
#define A4W4_GPU_MMA_H

#include "a4w4_gpu_device.h"

/* ---- NVIDIA m16n8k32 ------------------------------------------------------------------ */
A4W4D int a4w4m_nv_a_row(int lane, int reg) { return (lane >> 2) + ((reg & 1) << 3); }
A4W4D int a4w4m_nv_a_k(int lane, int reg) { return ((lane & 3) << 2) + ((reg >> 1) << 4); }
A4W4D int a4w4m_nv_b_row(int lane) { return lane >> 2; }
A4W4D int a4w4m_nv_b_k(int lane, int reg) { return ((lane & 3) << 2) + (reg << 4); }
A4W4D int a4w4m_nv_c_row(int lane, int i) { return (lane >> 2) + ((i >> 1) << 3); }
A4W4D int a4w4m_nv_c_col(int lane, int i) { return ((lane & 3) << 1) + (i & 1); }

/* ---- AMD 16x16 i8 ----------------------------------------------------------------------- */
A4W4D int a4w4m_amd_ab_row(int lane) { return lane & 15; }
/* K offset of the 8 int8 of a gfx940+ operand */
A4W4D int a4w4m_amd_k8(int lane) { return (lane >> 4) << 3; }
/* K offset of the 4 int8 of half h (0, 1) of a gfx90a operand */
A4W4D int a4w4m_amd_k4(int lane, int h) { return ((lane >> 4) << 2) + (h << 4); }
A4W4D int a4w4m_amd_c_row(int lane, int i) { return ((lane >> 4) << 2) + i; }
A4W4D int a4w4m_amd_c_col(int lane) { return lane & 15; }

/* ---- block scaling ------------------------------------------------------------------------ */
/* Row factors of activation scale sa (see the header comment). */
A4W4D void a4w4m_row_factors(unsigned sa, float *fa, float *fa2)
{
    if (sa >= 0xFFu) {
        *fa = *fa2 = a4w4d_f(A4W4D_NAN_BITS);
        return;
    }
    *fa = a4w4d_pow2((int)sa - 127);
    *fa2 = sa >= 242u ? a4w4d_pow2((int)sa - 129) : 0.0f;
}

/* Column factors of weight scale sb. */
A4W4D void a4w4m_col_factors(unsigned sb, float *fb, float *fb2)
{
    if (sb >= 0xFFu) {
        *fb = *fb2 = a4w4d_f(A4W4D_NAN_BITS);
        return;
    }
    *fb = a4w4d_pow2((int)sb - 129);
    *fb2 = a4w4d_pow2((int)sb - 127);
}

/* RNE_fp32(d * 2^(sa + sb - 256)) from the factors: one rounding. */
A4W4D float a4w4m_block_value(int d, float fa, float fa2, float fb, float fb2)
{
    const float fd = (float)d; /* exact: |d| <= 4608 */
    if (fa2 == 0.0f)
        return A4W4_FMUL(A4W4_FMUL(fd, fa), fb);
    return A4W4_FMUL(A4W4_FMUL(fd, fb2), fa2);
}

#endif
