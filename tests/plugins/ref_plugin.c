/* ref_plugin.c — an example plugin for the a4w4 plugin ABI (harness/backends/a4w4_plugin.h), and the
 * plugin the backend tests load (tests/test_backends.c).
 *
 * An independent plain-loop ordered(1) GEMM on the row-major operands (a_fp4, a_scale, w_fp4,
 * w_scale): its own E2M1 decode (from the code's bits), per 32-block integer dot, the block
 * value dot * 2^(sa+sb-256) formed exactly in double and rounded once to fp32, blocks added in
 * ascending K into an fp32 total from +0.0, RNE to bf16 (contracts §4.1). It shares no code with
 * ref/ or harness/: only the ABI header. Build it with -ffp-contract=off.
 *
 * Variants (same source, one macro each; tests/plugins/CMakeLists.txt):
 *   BREAK_ROW0       every output of row 0 is one bf16 ULP off (bits + 1): a broken kernel
 *                    the harness must catch;
 *   PLUGIN_ABI=n     reports abi_version n instead of A4W4_PLUGIN_ABI_VERSION (old ABI);
 *   NO_QUERY         exports no a4w4_plugin_query (not a plugin);
 *   CRASH_M2         gemm writes through NULL on every case with M > 1 (SIGSEGV), computes
 *                    the others: an isolated crash must fail only those entries;
 *   HANG_M2          gemm sleeps forever on every case with M > 1 (--timeout must end it);
 *   CRASH_QUERY      a4w4_plugin_query itself writes through NULL (loading must not kill
 *                    the harness). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "a4w4_plugin.h"

#if defined(CRASH_M2) || defined(CRASH_QUERY)
/* volatile: the compiler cannot see the store goes to NULL, so it is a real store (SIGSEGV),
 * not a trap instruction it chose. */
static int *volatile crash_target = NULL;
#endif

#ifndef PLUGIN_ABI
#define PLUGIN_ABI A4W4_PLUGIN_ABI_VERSION
#endif

#if defined(BREAK_ROW0)
#define PLUGIN_NAME "bad-plugin (row 0 one ULP off)"
#elif defined(NO_QUERY)
#define PLUGIN_NAME "noquery-plugin"
#elif defined(CRASH_M2)
#define PLUGIN_NAME "crash-plugin (SIGSEGV when M > 1)"
#elif defined(HANG_M2)
#define PLUGIN_NAME "hang-plugin (sleeps forever when M > 1)"
#elif defined(TREE_CONTRACT)
#define PLUGIN_NAME "tree-plugin (ordered(1) declared as a tree)"
#else
#define PLUGIN_NAME "ref-plugin"
#endif

/* TREE_CONTRACT: the same order declared as a tree contract with its keys shuffled
 * (contracts §4.2: tree(split=1) is ordered(1)). */
#ifdef TREE_CONTRACT
#define PLUGIN_CONTRACT "tree(final=rne,combine=chain,split=1,acc=fp32,leaf=32)"
#else
#define PLUGIN_CONTRACT "ordered(1)"
#endif

/* Twice the E2M1 value of a 4-bit code: sign bit 3, exponent bits 2..1, mantissa bit 0;
 * exponent 0 is subnormal (0 or 0.5), else (1 + m/2) * 2^(e-1). */
static int e2m1_twice(unsigned code)
{
    unsigned e = (code >> 1) & 3u, m = code & 1u;
    int mag = e == 0 ? (int)m : (int)((2u + m) << (e - 1));
    return (code & 8u) ? -mag : mag;
}

static uint16_t bf16_rne(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((u >> 16) | 0x0040u); /* NaN: quiet, sign kept */
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

/* ordered(1) dot of row m of A with row n of W, as bf16 bits. */
static uint16_t dot_ordered1(const a4w4_plugin_gemm_args *a, int (*dec)[256][2], size_t m,
                             size_t n)
{
    size_t nb = a->K / 32, half = a->K / 2;
    const uint8_t *xa = a->a_fp4 + m * half, *xw = a->w_fp4 + n * half;
    const uint8_t *sa = a->a_scale + m * nb, *sw = a->w_scale + n * nb;
    float total = 0.0f;
    for (size_t b = 0; b < nb; b++) {
        if (sa[b] == 0xFF || sw[b] == 0xFF)
            return 0x7FC0; /* a NaN block makes the output NaN */
        long dot = 0;
        for (size_t i = 0; i < 16; i++) {
            const int *p = (*dec)[xa[b * 16 + i]], *q = (*dec)[xw[b * 16 + i]];
            dot += (long)p[0] * q[0] + (long)p[1] * q[1];
        }
        /* exact in double (|dot| <= 4608, exponent >= -256); one rounding to fp32 */
        float v = (float)ldexp((double)dot, (int)sa[b] + (int)sw[b] - 256);
        total += v;
    }
    return bf16_rne(total);
}

static int ref_init(void **state, char *msg, size_t msglen)
{
    /* byte -> twice the values of its low and high nibble */
    int(*dec)[256][2] = malloc(sizeof *dec);
    if (!dec) {
        snprintf(msg, msglen, "out of memory");
        return -1;
    }
    for (unsigned v = 0; v < 256; v++) {
        (*dec)[v][0] = e2m1_twice(v & 15u);
        (*dec)[v][1] = e2m1_twice(v >> 4);
    }
    *state = dec;
    return 0;
}

static void ref_fini(void *state)
{
    free(state);
}

static int ref_gemm(void *state, const a4w4_plugin_gemm_args *a)
{
    if (!state) {
        snprintf(a->msg, a->msglen, "gemm called without init");
        return -1;
    }
    if (a->M == 0 || a->N == 0 || a->K == 0 || a->K % 32) {
        snprintf(a->msg, a->msglen, "shape M=%zu N=%zu K=%zu: need M, N, K >= 1, K %% 32 == 0",
                 a->M, a->N, a->K);
        return -1;
    }
#ifdef CRASH_M2
    if (a->M > 1)
        *crash_target = 1;
#endif
#ifdef HANG_M2
    while (a->M > 1)
        sleep(1);
#endif
    if (!a->a_fp4 || !a->a_scale || !a->w_fp4 || !a->w_scale || !a->y) {
        snprintf(a->msg, a->msglen, "a row-major operand or y is NULL");
        return -1;
    }
    /* The ABI's promises about the ASM-layout operands (this plugin does not read them). */
    size_t nb = a->K / 32;
    int pre = a->N % 16 == 0 && a->K % 64 == 0, swz = a->N % 32 == 0 && nb % 8 == 0;
    if (!a->a_scale_shuffled || a->a_scale_rows_padded != (a->M + 255) / 256 * 256 ||
        a->a_scale_cols_padded != (nb + 7) / 8 * 8 || !a->w_fp4_shuffled != !pre ||
        !a->w_scale_swizzled != !swz) {
        snprintf(a->msg, a->msglen, "ASM-layout operands break the ABI: a_scale_shuffled %s "
                 "[%zu, %zu], w_fp4_shuffled %s, w_scale_swizzled %s for M=%zu N=%zu K=%zu",
                 a->a_scale_shuffled ? "set" : "NULL", a->a_scale_rows_padded,
                 a->a_scale_cols_padded, a->w_fp4_shuffled ? "set" : "NULL",
                 a->w_scale_swizzled ? "set" : "NULL", a->M, a->N, a->K);
        return -1;
    }
    if (a->nrows != (a->rows ? a->nrows : a->M) || a->ncols != (a->cols ? a->ncols : a->N)) {
        snprintf(a->msg, a->msglen, "rows/cols NULL but nrows=%zu ncols=%zu (M=%zu N=%zu)",
                 a->nrows, a->ncols, a->M, a->N);
        return -1;
    }
    for (size_t i = 0; i < a->nrows; i++) {
        size_t m = a->rows ? a->rows[i] : i;
        if (m >= a->M) {
            snprintf(a->msg, a->msglen, "rows[%zu] = %zu is not below M = %zu", i, m, a->M);
            return -1;
        }
        for (size_t j = 0; j < a->ncols; j++) {
            size_t n = a->cols ? a->cols[j] : j;
            if (n >= a->N) {
                snprintf(a->msg, a->msglen, "cols[%zu] = %zu is not below N = %zu", j, n, a->N);
                return -1;
            }
            uint16_t v = dot_ordered1(a, state, m, n);
#ifdef BREAK_ROW0
            if (m == 0)
                v = (uint16_t)(v + 1u);
#endif
            a->y[i * a->ncols + j] = v;
        }
    }
    return 0;
}

static const a4w4_plugin_info info = {
    PLUGIN_ABI, PLUGIN_NAME, PLUGIN_CONTRACT, 0, ref_init, ref_gemm, ref_fini,
};

#ifdef NO_QUERY
A4W4_PLUGIN_EXPORT const a4w4_plugin_info *not_the_query(void);
A4W4_PLUGIN_EXPORT const a4w4_plugin_info *not_the_query(void)
#else
A4W4_PLUGIN_EXPORT const a4w4_plugin_info *a4w4_plugin_query(void)
#endif
{
#ifdef CRASH_QUERY
    *crash_target = 1;
#endif
    return &info;
}
