/* ref_plugin.c — an example plugin for the a4w4 plugin ABI (harness/backends/a4w4_plugin.h), and the
 * plugin the backend tests load (tests/harness/backends/test_backends.c).
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
 *   NO_CONTRACT      declares no contract (info.contract NULL: must be refused, saying so);
 *   BAD_CONTRACT     declares "tree(bogus=1)" (refused, naming the unknown key);
 *   CRASH_M2         gemm writes through NULL on every case with M > 1 (SIGSEGV), computes
 *                    the others: an isolated crash must fail only those entries;
 *   HANG_M2          gemm sleeps forever on every case with M > 1 (--timeout must end it);
 *   CRASH_QUERY      a4w4_plugin_query itself writes through NULL (loading must not kill
 *                    the harness;
 *   READ_CODE0_126   reads E8M0 scale code 0 as 2^-126 (the host driver's reading) instead
 *                    of 2^-127;
 *   DECLARE_CODE0=S  exports a4w4_plugin_e8m0_code0() returning S (the reading declared,
 *                    contracts §1; tests/cli/code0_declared.sh).
 * Adversarial variants, after KernelBench's reward hacks (each must fail its entries with a
 * note naming what it did; tests/cli/plugin_mutants.sh):
 *   STALE            returns its previous call's outputs when the output count repeats (kept
 *                    in memory mapped shared at load, so isolated calls share it too);
 *   ZERO_INPUTS      zeroes a_fp4 and w_fp4 before computing (through the const pointers);
 *   SIDE_THREAD      computes on a thread that starts after gemm returns and is joined in
 *                    fini (the outputs are not there when gemm returns);
 *   PAST_END         computes, then writes 64 values past the end of y;
 *   BEFORE_Y         computes, then writes y[-1];
 *   WRITE_INPUT      computes, then flips a bit of w_scale[0];
 *   DOUBLE_FREE      frees a buffer twice (a sanitizer build must report it with its own
 *                    exit code, never 1);
 *   HELPER           forks a helper process that outlives the call by 60 s (its pid goes to
 *                    $A4W4_TEST_HELPER_PIDFILE), then takes 0.3 s with
 *                    $A4W4_TEST_HELPER_SLOW set (a run to kill mid-way): the helper must hold
 *                    neither the --out lock nor the results descriptor. It leaves the call's
 *                    process group (setsid, a daemon) unless $A4W4_TEST_HELPER_MODE is
 *                    "group" (a plain forked helper, killed with the isolated call) or
 *                    "group-hang" (the same, and the call then hangs: a timed-out call);
 *   DROP_KTAIL       the selftest mutant mut-drop-kblock as a plugin: the K loop, unrolled
 *                    by 8 blocks (256 elements), has a tail loop one block short, so the last
 *                    32-block of K is dropped whenever K % 256 != 0 (docs/forensics.md walks
 *                    it from the red line to its minimal case). */
#define _DEFAULT_SOURCE /* usleep, MAP_ANONYMOUS (the adversarial variants) */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "a4w4_plugin.h"

#if defined(CRASH_M2) || defined(CRASH_QUERY)
/* volatile: the compiler cannot see the store goes to NULL, so it is a real store (SIGSEGV),
 * not a trap instruction it chose. */
static int *volatile crash_target = NULL;
#endif

#ifdef SIDE_THREAD
/* the thread gemm leaves running, and what it computes (fini joins it) */
static pthread_t side;
static int side_started;
static void *side_state;
static a4w4_plugin_gemm_args side_args;
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
#elif defined(STALE)
#define PLUGIN_NAME "stale-plugin (returns its previous call's outputs)"
#elif defined(ZERO_INPUTS)
#define PLUGIN_NAME "zero-inputs-plugin (zeroes its operands)"
#elif defined(SIDE_THREAD)
#define PLUGIN_NAME "side-thread-plugin (computes after returning)"
#elif defined(PAST_END)
#define PLUGIN_NAME "past-end-plugin (writes 64 values past y)"
#elif defined(BEFORE_Y)
#define PLUGIN_NAME "before-y-plugin (writes y[-1])"
#elif defined(WRITE_INPUT)
#define PLUGIN_NAME "write-input-plugin (flips a bit of w_scale)"
#elif defined(DOUBLE_FREE)
#define PLUGIN_NAME "double-free-plugin"
#elif defined(HELPER)
#define PLUGIN_NAME "helper-plugin (leaves a helper process running)"
#elif defined(DROP_KTAIL)
#define PLUGIN_NAME "droptail-plugin (drops the last K block when K % 256 != 0)"
#elif defined(NO_WRITE_K256)
#define PLUGIN_NAME "nowrite-plugin (writes nothing when K % 256 != 0)"
#elif defined(ZERO_OUT)
#define PLUGIN_NAME "zero-out-plugin (+0 everywhere, declares bounded(65536))"
#elif defined(NEGATE_OUT)
#define PLUGIN_NAME "negate-plugin (every output negated, declares bounded(65536))"
#elif defined(RAW_TEXT)
#define PLUGIN_NAME "raw-text\n\xff-plugin"
#elif defined(EXACT_ZERO_OFF)
#define PLUGIN_NAME "exact-zero-off-plugin (+0 outside the exact regime, declares exact)"
#elif defined(NA_ON_VALUES)
#define PLUGIN_NAME "na-on-values-plugin (n/a on scales outside 110..140)"
#else
#define PLUGIN_NAME "ref-plugin"
#endif

/* TREE_CONTRACT: the same order declared as a tree contract with its keys shuffled
 * (contracts §4.2: tree(split=1) is ordered(1)). */
#ifdef TREE_CONTRACT
#define PLUGIN_CONTRACT "tree(final=rne,combine=chain,split=1,acc=fp32,leaf=32)"
#elif defined(NO_CONTRACT)
#define PLUGIN_CONTRACT NULL
#elif defined(BAD_CONTRACT)
#define PLUGIN_CONTRACT "tree(bogus=1)"
#elif defined(ZERO_OUT) || defined(NEGATE_OUT)
#define PLUGIN_CONTRACT "bounded(65536)"
#elif defined(EXACT_ZERO_OFF)
#define PLUGIN_CONTRACT "exact"
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
#ifdef DROP_KTAIL
    if (nb % 8) /* the fault: the tail loop runs to nb - 1 */
        nb--;
#endif
    for (size_t b = 0; b < nb; b++) {
        if (sa[b] == 0xFF || sw[b] == 0xFF)
            return 0x7FC0; /* a NaN block makes the output NaN */
        long dot = 0;
        for (size_t i = 0; i < 16; i++) {
            const int *p = (*dec)[xa[b * 16 + i]], *q = (*dec)[xw[b * 16 + i]];
            dot += (long)p[0] * q[0] + (long)p[1] * q[1];
        }
        /* exact in double (|dot| <= 4608, exponent >= -256); one rounding to fp32 */
#ifdef READ_CODE0_126 /* E8M0 code 0 read as 2^-126, as code 1 (contracts §1) */
        float v = (float)ldexp((double)dot, (sa[b] ? sa[b] : 1) + (sw[b] ? sw[b] : 1) - 256);
#else
        float v = (float)ldexp((double)dot, (int)sa[b] + (int)sw[b] - 256);
#endif
        total += v;
    }
    return bf16_rne(total);
}

#ifdef EXACT_ZERO_OFF
/* 1 when exact judges output (m, n) (contracts §4.1): it reads a NaN scale, or it lies in the
 * exact regime: the sum of |terms| below 2^24 units of the smallest nonzero term's quantum
 * 2^(sa+sw-256), which is at least 2^-149 (an output with no nonzero term is in it). */
static int in_exact_regime(const a4w4_plugin_gemm_args *a, int (*dec)[256][2], size_t m,
                           size_t n)
{
    size_t nb = a->K / 32, half = a->K / 2;
    const uint8_t *xa = a->a_fp4 + m * half, *xw = a->w_fp4 + n * half;
    const uint8_t *sa = a->a_scale + m * nb, *sw = a->w_scale + n * nb;
    int qmin = 1 << 20;
    for (size_t b = 0; b < nb; b++) {
        if (sa[b] == 0xFF || sw[b] == 0xFF)
            return 1;
        for (size_t i = 0; i < 16 && sa[b] + sw[b] < qmin; i++) {
            const int *p = (*dec)[xa[b * 16 + i]], *q = (*dec)[xw[b * 16 + i]];
            if (p[0] * q[0] != 0 || p[1] * q[1] != 0)
                qmin = sa[b] + sw[b];
        }
    }
    if (qmin == 1 << 20)
        return 1;
    if (qmin - 256 < -149)
        return 0;
    double units = 0;
    for (size_t b = 0; b < nb; b++) {
        long abs = 0;
        for (size_t i = 0; i < 16; i++) {
            const int *p = (*dec)[xa[b * 16 + i]], *q = (*dec)[xw[b * 16 + i]];
            abs += labs((long)p[0] * q[0]) + labs((long)p[1] * q[1]);
        }
        units += ldexp((double)abs, sa[b] + sw[b] - qmin);
    }
    return units < 0x1p24;
}
#endif

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
#ifdef SIDE_THREAD
    if (side_started)
        pthread_join(side, NULL);
    side_started = 0;
#endif
    free(state);
}

#ifdef NA_ON_VALUES
/* 1 when a scale of the n requested rows (idx, NULL: 0..n-1) of s [*, nb] is outside
 * 110..140: wide, tiny, range, code-0 and NaN-scale data. */
static int scales_outside(const uint8_t *s, size_t nb, const size_t *idx, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t b = 0; b < nb; b++) {
            uint8_t v = s[(idx ? idx[i] : i) * nb + b];
            if (v < 110 || v > 140)
                return 1;
        }
    return 0;
}
#endif

/* The requested outputs of a into a->y: 0, or -1 with msg. */
static int compute(void *state, const a4w4_plugin_gemm_args *a)
{
#ifdef NA_ON_VALUES /* the fault: "not applicable" said of values, not of a shape */
    if (scales_outside(a->a_scale, a->K / 32, a->rows, a->nrows) ||
        scales_outside(a->w_scale, a->K / 32, a->cols, a->ncols)) {
        snprintf(a->msg, a->msglen, "shape not supported");
        return 1;
    }
#endif
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
#ifdef ZERO_OUT
            v = 0;
#endif
#ifdef NEGATE_OUT
            v ^= 0x8000u;
#endif
#ifdef EXACT_ZERO_OFF
            if (!in_exact_regime(a, state, m, n))
                v = 0;
#endif
            a->y[i * a->ncols + j] = v;
        }
    }
    return 0;
}

#ifdef STALE
/* The last outputs, in memory mapped shared when the library loads: the harness process maps
 * it, and every isolated call's child (a fork of it) shares it. */
static struct {
    size_t n;
    uint16_t y[1 << 16];
} *stale;

__attribute__((constructor)) static void stale_map(void)
{
    void *p = mmap(NULL, sizeof *stale, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    stale = p == MAP_FAILED ? NULL : p;
}
#endif

#ifdef SIDE_THREAD
static void *side_main(void *v)
{
    (void)v;
    usleep(50000); /* gemm has long returned */
    compute(side_state, &side_args);
    return NULL;
}
#endif

#ifdef HELPER
/* A helper process that outlives the call (a daemon a real library might start). */
static void spawn_helper(void)
{
    const char *mode = getenv("A4W4_TEST_HELPER_MODE");
    pid_t p = fork();
    if (p == 0) {
        if (!mode || strncmp(mode, "group", 5))
            setsid();
        for (int i = 0; i < 600; i++)
            usleep(100000);
        _exit(0);
    }
    const char *f = getenv("A4W4_TEST_HELPER_PIDFILE");
    FILE *o = p > 0 && f ? fopen(f, "a") : NULL;
    if (o) {
        fprintf(o, "%ld\n", (long)p);
        fclose(o);
    }
}
#endif

/* The gemm of the variant: compute, and whatever the adversarial variants do around it. */
static int adversary(void *state, const a4w4_plugin_gemm_args *a)
{
    size_t n = a->nrows * a->ncols;
    (void)n;
#ifdef ZERO_INPUTS
    memset((uint8_t *)a->a_fp4, 0, a->M * a->K / 2);
    memset((uint8_t *)a->w_fp4, 0, a->N * a->K / 2);
#endif
#ifdef SIDE_THREAD
    side_state = state;
    side_args = *a;
    side_started = pthread_create(&side, NULL, side_main, NULL) == 0;
    return side_started ? 0 : -1;
#else
#ifdef NO_WRITE_K256
    if (a->K % 256)
        return 0;
#endif
    int rc = compute(state, a);
    if (rc)
        return rc;
#endif
#ifdef STALE
    if (stale && n <= sizeof stale->y / sizeof stale->y[0]) {
        if (stale->n == n)
            memcpy(a->y, stale->y, n * sizeof *a->y);
        else {
            stale->n = n;
            memcpy(stale->y, a->y, n * sizeof *a->y);
        }
    }
#endif
#ifdef PAST_END
    for (size_t i = 0; i < 64; i++)
        a->y[n + i] = 0x3F80;
#endif
#ifdef BEFORE_Y
    a->y[-1] = 0x3F80;
#endif
#ifdef WRITE_INPUT
    ((uint8_t *)a->w_scale)[0] ^= 1;
#endif
#ifdef DOUBLE_FREE
    char *volatile p = malloc(16);
    free(p);
    free(p);
#endif
#ifdef HELPER
    spawn_helper();
    if (getenv("A4W4_TEST_HELPER_SLOW")) /* a slow call: the harness killed mid-run */
        usleep(300000);
    const char *mode = getenv("A4W4_TEST_HELPER_MODE");
    for (int i = 0; mode && !strcmp(mode, "group-hang") && i < 600; i++)
        usleep(100000);
#endif
    return 0;
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
#ifdef RAW_TEXT /* messages a results document cannot hold as they are: a line break, bytes
                 * that are no UTF-8; n/a when M is even, an error otherwise */
    snprintf(a->msg, a->msglen, "line one\nline \"two\" \xff\xfe \xc3( end\r");
    return a->M % 2 ? -1 : 1;
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
    return adversary(state, a);
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

#ifdef DECLARE_CODE0 /* the optional declaration of the E8M0 code-0 reading (contracts §1) */
A4W4_PLUGIN_EXPORT const char *a4w4_plugin_e8m0_code0(void)
{
    return DECLARE_CODE0;
}
#endif
