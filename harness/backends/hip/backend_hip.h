/* backend_hip.h — device paths of the HIP backends (hip.c) shared with the GPU
 * mutants (mutants_hip.c). Only in GPU builds (A4W4_HAVE_GPU). Each call runs the
 * same code as the correct HIP backend: operands uploaded through hip.c's per-case
 * device cache, the output poisoned on the device, sampled rows copied back after a
 * synchronize. Returns an A4W4_* status (A4W4_EUNSUPPORTED with a->why / why for n/a). */
#ifndef A4W4_BACKEND_HIP_H
#define A4W4_BACKEND_HIP_H

#include <stddef.h>
#include <stdint.h>

#include "registry.h"

#ifdef A4W4_HAVE_GPU
/* 0 when a GPU is usable; else why ("no GPU usable by the nvidia build (...)") and 1. */
int a4w4_hip_available(char *why, size_t whylen);
/* An a4w4_gpu_status as an A4W4_* status, with the runtime's message in why. */
int a4w4_hip_status(int gpu_rc, char *why, size_t whylen);
/* The ASM-layout GEMM on kernel `engine` (A4W4_GPU_ENGINE_*) and tile index `tile`
 * (a4w4_gpu_tile_find), splits / split_mode as in a4w4_gpu_gemm_asm_dev: n/a unless the case
 * has the layouts and K % 256 == 0. */
int a4w4_hip_asm_gemm(int engine, int tile, unsigned splits, int split_mode,
                      const a4w4_run_args *a);
/* The row-major fallback GEMM on kernel `engine`; a_scale_dev: a device copy of d->a_scale to
 * use instead of the cached one (NULL: the cache). */
int a4w4_hip_rowmajor_gemm(int engine, const a4w4_run_args *a, const void *a_scale_dev);
/* hip-layout's and hip-quant's work (backend.h's layouts / quantize, without ctx). */
int a4w4_hip_layouts(const a4w4_case_data *d, uint8_t *w_fp4_shuffled,
                     uint8_t *w_scale_swizzled, uint8_t *a_scale_shuffled, char *why,
                     size_t whylen);
int a4w4_hip_quantize(const uint16_t *x, size_t rows, size_t K, int mode, uint8_t *fp4,
                      uint8_t *scale, char *why, size_t whylen);

/* The GPU mutants (mutants_hip.c), in a fixed order; mutants.h's table lists them
 * after the CPU ones. */
extern const a4w4_backend_type a4w4_mut_hip_k1n1, a4w4_mut_hip_d1d4, a4w4_mut_hip_pad_ff,
    a4w4_mut_hip_pad_00, a4w4_mut_hip_nibble, a4w4_mut_hip_e8m0, a4w4_mut_hip_mode_ru,
    a4w4_mut_hip_mode_rd, a4w4_mut_hip_mode_ce, a4w4_mut_hip_mode_ev, a4w4_mut_hip_trunc,
    a4w4_mut_hip_drop, a4w4_mut_hip_drop_chunk, a4w4_mut_hip_rows, a4w4_mut_hip_splitk,
    a4w4_mut_hip_tail, a4w4_mut_hip_past;
#define A4W4_HIP_MUTANTS                                                                      \
    &a4w4_mut_hip_k1n1, &a4w4_mut_hip_d1d4, &a4w4_mut_hip_pad_ff, &a4w4_mut_hip_pad_00,       \
        &a4w4_mut_hip_nibble, &a4w4_mut_hip_e8m0, &a4w4_mut_hip_mode_ru,                      \
        &a4w4_mut_hip_mode_rd, &a4w4_mut_hip_mode_ce, &a4w4_mut_hip_mode_ev,                  \
        &a4w4_mut_hip_trunc, &a4w4_mut_hip_drop, &a4w4_mut_hip_drop_chunk, &a4w4_mut_hip_rows, \
        &a4w4_mut_hip_splitk, &a4w4_mut_hip_tail, &a4w4_mut_hip_past
#endif

#endif
