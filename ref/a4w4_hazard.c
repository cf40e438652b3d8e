/* a4w4_hazard.c — the static hazard class of a shape (contracts §5, §6); see a4w4_hazard.h. */
#include "a4w4_hazard.h"

#include <stdio.h>
#include <string.h>

int a4w4_hazard_classify(a4w4_hazard *h)
{
    if (!h)
        return A4W4_EINVAL;
    h->hazardous = 0;
    h->cls = A4W4_HAZARD_OK;
    if (h->winners < 0 || h->winners_nofit < 0)
        return A4W4_EINVAL;
    /* only the untuned heuristic is order-dependent (contracts §5.3) */
    h->hazardous = h->untuned && (h->winners > 1 || h->winners_nofit > 0);
    if (!h->hazardous)
        h->cls = A4W4_HAZARD_OK;
    else if (!h->policy_asm) /* contracts §6: the layer stays on Triton */
        h->cls = A4W4_HAZARD_FENCED;
    else if (h->winners_nofit > 0)
        h->cls = A4W4_HAZARD_EXPOSED;
    else
        h->cls = A4W4_HAZARD_ORDER_DEPENDENT;
    return A4W4_OK;
}

int a4w4_hazard_of_route(int M, int N, int K, const a4w4_route *r, const a4w4_policy_result *pr,
                         a4w4_hazard *out)
{
    if (!out)
        return A4W4_EINVAL;
    memset(out, 0, sizeof *out);
    if (!r || !pr || r->M != M || r->N != N || r->K != K || r->ncand_any > A4W4_MAX_KERNELS)
        return A4W4_EINVAL;
    out->M = M;
    out->N = N;
    out->K = K;
    out->untuned = r->source == A4W4_SRC_HEURISTIC;
    out->winners = (int)r->ncand_any;
    /* a tuned CK kernel, or an ASM name the kernel table lacks, has no tile: cand_any -1 */
    for (size_t i = 0; i < r->ncand_any; i++)
        out->winners_nofit += r->cand_any[i] >= 0 && (r->cand_fit[i] & A4W4_FIT_N_MASK) != 0;
    out->policy_asm = pr->decision == A4W4_DECIDE_ASM;
    return a4w4_hazard_classify(out);
}

const char *a4w4_hazard_class_name(a4w4_hazard_class c)
{
    switch (c) {
    case A4W4_HAZARD_OK: return "ok";
    case A4W4_HAZARD_EXPOSED: return "exposed";
    case A4W4_HAZARD_ORDER_DEPENDENT: return "order_dependent";
    case A4W4_HAZARD_FENCED: return "fenced";
    }
    return "?";
}

/* ---- the field's bug record ---------------------------------------------------------------- */

static const a4w4_bug_rule rules[A4W4_BUG_COUNT] = {
    {"aiter-4176", "ROCm/aiter#4176", "https://github.com/ROCm/aiter/issues/4176",
     "ASM gemm_a4w4 returns garbage when K % 256 != 0 (the launcher rounds each K chunk to 256 "
     "and never checks; K = 1664, 1824, 1856 reported)",
     "an ASM route with K % 256 != 0", 1},
    {"aiter-5261", "ROCm/aiter#5261", "https://github.com/ROCm/aiter/issues/5261",
     "split-K: K passed to the kernel in elements instead of bytes",
     "an ASM route with split-K (more than one split)", 1},
    {"aiter-5377", "ROCm/aiter#5377", "https://github.com/ROCm/aiter/issues/5377",
     "BK = 512 with K = 768 gives nondeterministic NaN for 64 < M <= 256",
     "an ASM route with K = 768 and 64 < M <= 256 (the kernel table does not say BK)", 1},
    {"ck-11774", "ROCm/rocm-libraries#11774", "https://github.com/ROCm/rocm-libraries/issues/11774",
     "CK-tile fp4 GEMM wrong for M < 32", "a CK route (tuned CK blockscale kernel) with M < 32",
     1},
    {"sglang-26884", "sgl-project/sglang#26884", "https://github.com/sgl-project/sglang/issues/26884",
     "a non-preshuffle kernel run on preshuffled weights (GSM8K 0.88 -> 0.21)",
     "an ASM route to a kernel with bpreshuffle 0 while the weights are preshuffled", 1},
    {"tile-128x512", "contracts §5.3", "https://github.com/ROCm/aiter/blob/main/csrc/py_itfs_cu/asm_gemm_a4w4.cu",
     "the 128x512 tile is only valid when N % 512 == 0 (AITER's heuristic skips it otherwise)",
     "an ASM route to the 128x512 tile with N % 512 != 0 (a tuned row can name it)", 1},
    {"triton-11624", "triton-lang/triton#11624", "https://github.com/triton-lang/triton/issues/11624",
     "tl.dot_scaled decodes E8M0 code 0 as 0 instead of 2^-127",
     "the Triton path (gemm_afp4wfp4 on tl.dot_scaled) when E8M0 code 0 occurs: data, not "
     "shape", 0},
    {"triton-8518", "triton-lang/triton#8518", "https://github.com/triton-lang/triton/issues/8518",
     "microscaling GEMM wrong with split_k > 1",
     "the Triton path with split_k > 1: Triton's own config, not in the tables", 0},
    {"vllm-40754", "vllm-project/vllm#40754", "https://github.com/vllm-project/vllm/issues/40754",
     "an AITER signature change binds out as bias in a positional gemm_a4w4 call",
     "no shape: a call checked against the installed AITER's signature (the Python bridge)",
     0},
};

const a4w4_bug_rule *a4w4_bug_rules(size_t *n)
{
    *n = A4W4_BUG_COUNT;
    return rules;
}

unsigned a4w4_bugs_of(const a4w4_bug_shape *s)
{
    unsigned m = 0;
    int a = s->routed && s->is_asm, ck = s->routed && !s->is_asm;
    m |= (unsigned)(a && s->K % 256 != 0) << A4W4_BUG_AITER_4176;
    m |= (unsigned)(a && s->split > 1) << A4W4_BUG_AITER_5261;
    m |= (unsigned)(a && s->K == 768 && s->M > 64 && s->M <= 256) << A4W4_BUG_AITER_5377;
    m |= (unsigned)(ck && s->M < 32) << A4W4_BUG_CK_11774;
    m |= (unsigned)(a && s->kernel_bpreshuffle == 0 && s->bpreshuffle) << A4W4_BUG_SGLANG_26884;
    m |= (unsigned)(a && s->tile_m == 128 && s->tile_n == 512 && s->N % 512 != 0)
         << A4W4_BUG_TILE_128X512;
    m |= (unsigned)(!s->policy_asm) << A4W4_BUG_TRITON_11624;
    return m;
}

void a4w4_bug_shape_of(int M, int N, int K, const a4w4_route *r, const a4w4_kernel_table *kt,
                       int bpreshuffle, const a4w4_policy_result *pr, a4w4_bug_shape *out)
{
    memset(out, 0, sizeof *out);
    out->M = M;
    out->N = N;
    out->K = K;
    out->bpreshuffle = bpreshuffle;
    out->policy_asm = pr && pr->decision == A4W4_DECIDE_ASM;
    out->kernel_bpreshuffle = -1;
    out->split = 1;
    if (!r)
        return;
    out->routed = 1;
    out->is_asm = r->is_asm;
    out->tile_m = r->tile_m;
    out->tile_n = r->tile_n;
    out->split = r->is_asm && r->split > 1 ? r->split : 1;
    if (kt && r->kernel_index >= 0 && (size_t)r->kernel_index < kt->n)
        out->kernel_bpreshuffle = kt->rows[r->kernel_index].bpreshuffle;
}

const char *a4w4_bugs_text(unsigned mask, const char *sep, int citations, char *buf, size_t len)
{
    size_t k = 0;
    if (len)
        buf[0] = 0;
    for (int i = 0; i < A4W4_BUG_COUNT && k < len; i++)
        if (mask & (1u << i))
            k += (size_t)snprintf(buf + k, len - k, "%s%s", k ? sep : "",
                                  citations ? rules[i].citation : rules[i].id);
    return buf;
}
