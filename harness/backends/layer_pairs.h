/* layer_pairs.h — the backend pairs the layer model of layer/layer.h runs on (contracts §6):
 * the table `a4w4check layers --backend` picks from. Each pair is an a4w4_layer_ops (function
 * pointers, declared by the engine); the engine never names one. */
#ifndef A4W4_LAYER_PAIRS_H
#define A4W4_LAYER_PAIRS_H

#include <stddef.h>

#include "layer.h"

/* The CPU pair: ref's quantizer and layout functions for the four layout kernels (on the CPU
 * there is nothing else to run them with, so for this pair those steps equal the oracle by
 * construction; what the pair tests is the plumbing and the two GEMMs) and cpu_sut.h's
 * a4w4_cpu_asm_gemm / a4w4_cpu_fallback_gemm, both ordered(1). */
extern const a4w4_layer_ops a4w4_layer_ops_cpu;

/* The registered pairs and their count: cpu, then hip (hip/layer_hip.c: gpu/a4w4_gpu.h's host
 * forms) in GPU builds, whose `available` says whether a GPU is usable. */
const a4w4_layer_ops *const *a4w4_layer_ops_list(size_t *count);
/* A pair by name, or NULL. */
const a4w4_layer_ops *a4w4_layer_ops_find(const char *name);

#endif
