/* dispatch_chain.h — route → policy → hazard, composed once: for a shape (M, N, K), the kernel
 * AITER's gemm_a4w4 runs (contracts §5, ref/a4w4_dispatch.h), SGLang's layer decision for
 * (N, K) (contracts §6, ref/a4w4_policy.h), the static hazard class (ref/a4w4_hazard.h) and
 * the field bug rules that flag the shape. `route`, `hazards` and the results annotation
 * (annotate.c) all read their dispatch facts from here. Nothing here prints. */
#ifndef A4W4_DISPATCH_CHAIN_H
#define A4W4_DISPATCH_CHAIN_H

#include <stddef.h>

#include "a4w4_dispatch.h"
#include "a4w4_hazard.h"
#include "a4w4_policy.h"
#include "fsutil.h"

/* The default dispatch tables: A4W4_TUNED_TABLE_DEFAULT, A4W4_KERNEL_TABLE_DEFAULT (fsutil.h). */

/* What the chain routes for: the heuristic's parameters and the policy's inputs (the flag
 * SGLANG_ROCM_USE_AITER_FP4_ASM_GEMM, the activation kind and its tuple length). */
typedef struct {
    a4w4_heur_params hp;
    int asm_flag;
    a4w4_input_kind kind;
    int tuple_len;
} a4w4_dispatch_setup;

/* `route`'s defaults: gfx950, 256 CUs, log2_k_split 0, preshuffled weights, the flag on,
 * 2-D activations. */
#define A4W4_DISPATCH_SETUP_DEFAULT                                                             \
    {.hp = {.gfx = "gfx950", .num_cu = 256, .log2_k_split = 0, .bpreshuffle = 1},               \
     .asm_flag = 1, .kind = A4W4_INPUT_TENSOR_2D, .tuple_len = 0}

/* One shape through the chain. */
typedef struct {
    a4w4_route route;
    a4w4_policy_result policy;
    a4w4_hazard hazard;
    unsigned bugs; /* bit i: a4w4_bug_rules()[i] flags the shape */
} a4w4_dispatch_chain;

/* Which step of the chain failed. */
typedef enum {
    A4W4_CHAIN_OK = 0,
    A4W4_CHAIN_ROUTE,  /* AITER has no kernel for the shape (err: the router's reason) */
    A4W4_CHAIN_POLICY, /* the policy refused its inputs (err: the status) */
    A4W4_CHAIN_HAZARD  /* the hazard rule refused the route (err: the status) */
} a4w4_chain_step;

/* SGLang's layer decision for layer (N, K) (contracts §6): a4w4_policy_decide with weight
 * [N, K/2] fp4x2 and scales [N, K/32]. Returns an A4W4_* status. */
int a4w4_layer_policy(const a4w4_dispatch_setup *s, int N, int K, a4w4_policy_result *pr);

/* (M, N, K) (each 1..A4W4_DIM_MAX) through route, policy and hazard into *out, with the
 * tuned table (NULL: nothing tuned) and the kernel table. Returns the failing step (err, when
 * not NULL, gets its reason) or A4W4_CHAIN_OK. Reentrant. */
a4w4_chain_step a4w4_dispatch_chain_of(const a4w4_tuned_table *tuned,
                                       const a4w4_kernel_table *kt,
                                       const a4w4_dispatch_setup *s, int M, int N, int K,
                                       a4w4_dispatch_chain *out, char *err, size_t errlen);

/* The kernel indexes whose set[i] is nonzero, sorted by tile (tile_M, then tile_N; equal
 * tiles keep table order) into idx (room for kt->n). Returns how many. */
size_t a4w4_kernel_set_by_tile(const a4w4_kernel_table *kt, const unsigned char *set, int *idx);

#endif
