/* test_runner.c — the runner's comparison per contract (contracts §4.1), NaN policy, detection of
 * unwritten outputs, out-of-bounds writes and pad dependence, through a4w4_run_case with
 * small backends defined here (each a known fault or a known-correct computation). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "a4w4_bound.h"
#include "a4w4_gemm.h"
#include "a4w4_layout.h"
#include "a4w4_tree.h"
#include "backend.h"
#include "gen.h"
#include "runner.h"
#include "test_util.h"

/* A correct ordered(1) GEMM from the oracle, then a per-test fault applied to its output. */
typedef enum { F_NONE, F_UNWRITTEN, F_FLIP_ONE, F_NAN_EVERYWHERE, F_OOB_WRITE, F_READ_ROW_PAD,
               F_BF16_NEIGHBOUR, F_SPLIT4, F_ATOMIC, F_TREE, F_CODE0_126, F_Y_PAST_END,
               F_Y_BEFORE, F_WRITE_INPUT, F_TIMEOUT } fault;
static a4w4_tree g_tree; /* F_TREE: the order the backend keeps (its plain oracle) */
static fault g_fault;
static int g_code0 = A4W4_CODE0_BOTH; /* the runner's reading of E8M0 code 0 in run_one */
static int g_as126; /* the backend reads E8M0 code 0 as 2^-126 whatever its fault */
static unsigned g_atomic_S = 4;   /* F_ATOMIC: the split count */
static uint64_t g_order_seed = 1; /* F_ATOMIC: the orders' random stream */

static uint64_t next_rand(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

/* Shuffle v[0..n) (Fisher-Yates on the stream x). */
static void shuffle(float *v, size_t n, uint64_t *x)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(next_rand(x) % i);
        float t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

/* One bf16-atomic split-K result (contracts §4.1 "bounded", the kernel model exactly): the
 * ordered(S) split ranges; each block value rounded once to fp32; a split's values summed in
 * fp32 in a random order; each split total rounded to bf16; the totals added in a random
 * order into a bf16 output from +0, each add in fp32 then rounded to bf16. */
static uint16_t atomic_splitk(const a4w4_dot_operands *op, unsigned S, uint64_t *x)
{
    size_t per = a4w4_split_k_per_split(op->K, S), ns = a4w4_split_count(op->K, S);
    float vals[512], parts[64];
    cr_assert(per / 32 <= 512 && ns <= 64);
    for (size_t j = 0; j < ns; j++) {
        size_t k0 = j * per, k1 = k0 + per < op->K ? k0 + per : op->K, n = 0;
        for (size_t k = k0; k < k1; k += 32) {
            a4w4_dot_operands b = {op->a_fp4 + k / 2, op->a_scale + k / 32, op->w_fp4 + k / 2,
                                   op->w_scale + k / 32, 32};
            a4w4_dot_exact(&b, NULL, &vals[n++]);
        }
        shuffle(vals, n, x);
        volatile float acc = 0.0f; /* one fp32 rounding per add */
        for (size_t i = 0; i < n; i++)
            acc = acc + vals[i];
        parts[j] = a4w4_bf16_to_f32(a4w4_f32_to_bf16(acc));
    }
    shuffle(parts, ns, x);
    uint16_t y = 0x0000;
    for (size_t j = 0; j < ns; j++) {
        volatile float t = a4w4_bf16_to_f32(y) + parts[j];
        y = a4w4_f32_to_bf16(t);
    }
    return y;
}

static int run_fault(void *ctx, const a4w4_run_args *a)
{
    (void)ctx;
    const a4w4_case_data *d = a->d;
    const a4w4_sample *s = a->s;
    size_t nb = d->K / 32;
    if (g_fault == F_TIMEOUT) {
        snprintf(a->why, a->whylen, "timed out after 1 s");
        return A4W4_RUN_TIMEOUT;
    }
    for (size_t i = 0; i < s->nrows; i++)
        for (size_t j = 0; j < s->ncols; j++) {
            size_t m = s->full ? i : s->rows[i], n = s->full ? j : s->cols[j];
            a4w4_dot_operands op = {d->a_fp4.data + m * d->K / 2, d->a_scale.data + m * nb,
                                    d->w_fp4.data + n * d->K / 2, d->w_scale.data + n * nb, d->K};
            uint8_t as[1024], ws[1024]; /* F_CODE0_126: the scales with code 0 read as 2^-126 */
            if (g_fault == F_CODE0_126 || g_as126) {
                cr_assert(nb <= 1024);
                for (size_t k = 0; k < nb; k++) {
                    as[k] = op.a_scale[k] ? op.a_scale[k] : 0x01;
                    ws[k] = op.w_scale[k] ? op.w_scale[k] : 0x01;
                }
                op.a_scale = as;
                op.w_scale = ws;
            }
            if (g_fault == F_TREE) {
                cr_assert_eq(a4w4_dot_tree(&op, &g_tree, &a->y[i * s->ncols + j], NULL), A4W4_OK);
                continue;
            }
            if (g_fault == F_ATOMIC) {
                uint64_t x = g_order_seed * 0x9E3779B97F4A7C15ull + m * 7919 + n;
                a->y[i * s->ncols + j] = atomic_splitk(&op, g_atomic_S, &x);
                continue;
            }
            float v = a4w4_dot_ordered(&op, g_fault == F_SPLIT4 ? 4 : 1);
            if (g_fault == F_READ_ROW_PAD && m == d->M - 1) {
                /* mixes in the first activation-scale pad row (row M), as a kernel that reads
                 * its tile's pad rows would: 0x7F is 1.0, the variants change it */
                uint8_t pad = d->a_scale_shuffled.data[a4w4_act_scale_shuffle_index(d->M, nb, d->M, 0)];
                v += (float)pad;
            }
            a->y[i * s->ncols + j] = a4w4_f32_to_bf16(v);
        }
    size_t n = s->nrows * s->ncols;
    if (g_fault == F_UNWRITTEN)
        a->y[n - 1] = A4W4_POISON_BF16; /* as if never written */
    if (g_fault == F_FLIP_ONE)
        a->y[1] ^= 0x0001;
    if (g_fault == F_BF16_NEIGHBOUR)
        for (size_t k = 0; k < n; k++)
            if ((a->y[k] & 0x7FFF) && (a->y[k] & 0x7FFF) < 0x7F80)
                a->y[k] += 1; /* one ULP away from exact everywhere */
    if (g_fault == F_NAN_EVERYWHERE)
        for (size_t k = 0; k < n; k++)
            a->y[k] = 0x7FC0;
    if (g_fault == F_OOB_WRITE)
        ((uint8_t *)d->w_fp4.data)[d->w_fp4.len + 7] ^= 0xFF;
    if (g_fault == F_Y_PAST_END)
        for (size_t k = 0; k < 64; k++)
            a->y[n + k] = 0x3F80;
    if (g_fault == F_Y_BEFORE)
        a->y[-1] = 0x3F80;
    if (g_fault == F_WRITE_INPUT)
        ((uint8_t *)d->a_scale.data)[0] ^= 0x01;
    return A4W4_OK;
}

static a4w4_backend_type fault_type = {
    .name = "fault", .what = "test backend", .contract = "ordered(1)", .run = run_fault};

static uint64_t g_seed = 17;

/* The fault backend as an instance named "fault" keeping contract. */
static void fault_backend(a4w4_backend *b, const char *contract, unsigned split, int asm_layout)
{
    memset(b, 0, sizeof *b);
    b->type = &fault_type;
    snprintf(b->name, sizeof b->name, "fault");
    snprintf(b->contract, sizeof b->contract, "%s", contract);
    b->split = split;
    b->asm_layout = asm_layout;
}

static a4w4_entry_list run_one(const char *contract, unsigned split, int asm_layout,
                               a4w4_regime regime, size_t M, size_t N, size_t K, int *fails)
{
    a4w4_backend b;
    fault_backend(&b, contract, split, asm_layout);
    a4w4_runner r = {.backends = &b, .nbackends = 1, .code0_reading = g_code0};
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "rt");
    c.M = M;
    c.N = N;
    c.K = K;
    c.regime = regime;
    snprintf(c.regime_text, sizeof c.regime_text, "x");
    c.seed = g_seed;
    a4w4_entry_list entries = {0};
    char err[256];
    cr_assert_eq(a4w4_run_case(&r, &c, &entries, err, sizeof err), A4W4_ST_OK, "%s", err);
    *fails = (int)a4w4_entry_list_failures(&entries);
    return entries;
}

static const a4w4_entry_result *entry_of(const a4w4_entry_list *entries, const char *backend)
{
    for (size_t i = 0; i < entries->n; i++)
        if (!strcmp(entries->items[i].backend, backend))
            return &entries->items[i];
    cr_assert_fail("no entry for %s", backend);
    return NULL;
}

static const char *verdict(const a4w4_entry_result *e) { return a4w4_verdict_name(e->verdict); }
static const char *note(const a4w4_entry_result *e) { return e->note; }

Test(runner, a_correct_ordered_backend_passes_bit_exact)
{
    g_fault = F_NONE;
    int fails;
    a4w4_entry_list en = run_one("ordered(1)", 1, 0, A4W4_REGIME_WIDE, 5, 64, 512, &fails);
    const a4w4_entry_result *e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "pass");
    cr_expect_eq(e->checked, 5 * 64);
    cr_expect_eq(fails, 0);
    a4w4_entry_list_free(&en);
}

/* Outputs of the case (name, M, N, K, regime, g_seed; run_one's name is "rt") where ordered(1)
 * and exact differ: each oracle over the case's whole operands. */
static size_t ordered1_not_exact(const char *name, a4w4_regime regime, size_t M, size_t N,
                                 size_t K)
{
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s", name);
    c.M = M, c.N = N, c.K = K, c.regime = regime, c.seed = g_seed;
    a4w4_sample s;
    a4w4_case_data d;
    cr_assert_eq(a4w4_sample_make(M, N, K, c.seed, c.name, 1, &s), A4W4_OK);
    cr_assert_eq(a4w4_case_generate(&c, &s, &d), A4W4_OK);
    uint16_t *yo = malloc(M * N * 2), *ye = malloc(M * N * 2);
    cr_assert(yo && ye);
    a4w4_gemm_ordered(d.a_fp4.data, d.a_scale.data, d.w_fp4.data, d.w_scale.data, M, N, K, 1,
                      yo, NULL);
    a4w4_gemm_exact(d.a_fp4.data, d.a_scale.data, d.w_fp4.data, d.w_scale.data, M, N, K, ye,
                    NULL);
    size_t diff = 0;
    for (size_t k = 0; k < M * N; k++)
        diff += yo[k] != ye[k];
    free(yo);
    free(ye);
    a4w4_case_data_free(&d);
    a4w4_sample_free(&s);
    return diff;
}

/* exact (contracts §4.1) is a verdict inside the exact regime only: a correct ordered(1)
 * kernel declared exact, on wide operands where ordered(1) and exact differ, is not failed
 * there; the outputs outside the regime are counted not judged (never a silent pass: an
 * entry that judged nothing is n/a), the judged ones are exactly the proven ones. The same
 * kernel one bit off inside the regime fails. */
Test(runner, exact_judges_the_exact_regime_only_and_counts_the_rest_not_judged)
{
    g_fault = F_NONE;
    cr_assert_gt(ordered1_not_exact("rt", A4W4_REGIME_WIDE, 16, 192, 1024), 0,
                 "the case must tell ordered(1) from exact");
    int fails;
    a4w4_entry_list en = run_one("exact", 1, 0, A4W4_REGIME_WIDE, 16, 192, 1024, &fails);
    const a4w4_entry_result *e = entry_of(&en, "fault");
    cr_expect_neq(e->verdict, A4W4_VERDICT_FAIL, "%s", note(e));
    cr_expect(e->has_judged);
    cr_expect_eq(e->judged_bit_exact, e->exact_regime_outputs);
    cr_expect_eq(e->judged_bit_exact + e->not_judged, 16 * 192);
    cr_expect_gt(e->not_judged, 0);
    cr_expect_eq(e->verdict, e->judged_bit_exact ? A4W4_VERDICT_PASS : A4W4_VERDICT_NA);
    cr_expect(strstr(note(e), "outside the exact regime: not judged"), "%s", note(e));
    a4w4_entry_list_free(&en);
    /* NaN where every order of the terms gives a finite sum is wrong under any contract:
     * outside the regime too (a kernel once returned NaN on wide scales this way) */
    g_fault = F_NAN_EVERYWHERE;
    en = run_one("exact", 1, 0, A4W4_REGIME_WIDE, 16, 192, 1024, &fails);
    e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "fail");
    cr_expect_eq(e->mismatches, 16 * 192, "every output NaN, every one wrong");
    cr_expect_eq(e->judged_bit_exact + e->not_judged, 16 * 192);
    cr_expect(strstr(note(e), "NaN or Inf where every summation order gives a finite value"),
              "%s", note(e));
    a4w4_entry_list_free(&en);
    g_fault = F_FLIP_ONE; /* output 1 of an exact-regime case is in the regime */
    en = run_one("exact", 1, 0, A4W4_REGIME_EXACT, 3, 32, 256, &fails);
    e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "fail");
    cr_expect_eq(e->judged_bit_exact, 3 * 32);
    cr_expect_eq(e->not_judged, 0);
    a4w4_entry_list_free(&en);
    g_fault = F_NONE;
}

Test(runner, one_flipped_bit_fails_with_its_coordinates)
{
    g_fault = F_FLIP_ONE;
    int fails;
    a4w4_entry_list en = run_one("ordered(1)", 1, 0, A4W4_REGIME_WIDE, 5, 64, 512, &fails);
    const a4w4_entry_result *e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "fail");
    cr_expect_eq(e->mismatches, 1);
    cr_assert_geq(e->nfirst, 1);
    cr_expect_eq(e->first[0].row, 0);
    cr_expect_eq(e->first[0].col, 1);
    cr_expect_eq(e->max_ulp, 1);
    cr_expect_eq(fails, 1);
    a4w4_entry_list_free(&en);
}

Test(runner, an_unwritten_output_fails_even_though_the_poison_is_a_nan)
{
    g_fault = F_UNWRITTEN;
    int fails;
    /* special regime: NaN outputs exist, so a poison (also a NaN) must not pass as one */
    a4w4_entry_list en = run_one("ordered(1)", 1, 0, A4W4_REGIME_SPECIAL, 6, 32, 256, &fails);
    const a4w4_entry_result *e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "fail");
    cr_expect_eq(e->unwritten, 1);
    cr_expect(strstr(note(e), "never written") != NULL, "%s", note(e));
    a4w4_entry_list_free(&en);
}

Test(runner, nan_policy_nan_where_expected_passes_nan_elsewhere_fails)
{
    g_fault = F_NONE;
    int fails;
    a4w4_entry_list en = run_one("ordered(1)", 1, 0, A4W4_REGIME_SPECIAL, 6, 32, 256, &fails);
    cr_expect_str_eq(verdict(entry_of(&en, "fault")), "pass");
    const a4w4_entry_result *o = entry_of(&en, "oracle");
    cr_expect(strstr(note(o), "0 outside the dependent set") != NULL, "%s", note(o));
    cr_expect_str_eq(verdict(o), "pass");
    a4w4_entry_list_free(&en);
    g_fault = F_NAN_EVERYWHERE;
    en = run_one("ordered(1)", 1, 0, A4W4_REGIME_SPECIAL, 6, 32, 256, &fails);
    const a4w4_entry_result *e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "fail");
    /* 6x32 outputs, NaN-dependent: row 3 (32) + column 5 (6) - 1 = 37 */
    cr_expect_eq(e->mismatches, 6 * 32 - 37);
    a4w4_entry_list_free(&en);
}

Test(runner, a_write_past_an_input_fails_as_out_of_bounds)
{
    g_fault = F_OOB_WRITE;
    int fails;
    a4w4_entry_list en = run_one("ordered(1)", 1, 0, A4W4_REGIME_EXACT, 2, 32, 256, &fails);
    const a4w4_entry_result *e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "fail");
    cr_expect(strstr(note(e), "out of bounds") && strstr(note(e), "w_fp4"), "%s", note(e));
    a4w4_entry_list_free(&en);
}

/* Writes outside y or into an operand fail the entry, naming what was written (reproducer:
 * a kernel writing y[-1] or 64 values past y passed; one writing into its operands too). */
Test(runner, writes_outside_y_or_into_an_operand_fail_naming_them)
{
    static const struct {
        fault f;
        const char *says;
    } t[] = {{F_Y_PAST_END, "wrote 64 values past the end of y"},
             {F_Y_BEFORE, "wrote 1 value before y (down to y[-1])"},
             {F_WRITE_INPUT, "wrote into its input a_scale (its bytes changed during the call)"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        g_fault = t[i].f;
        int fails;
        a4w4_entry_list en = run_one("ordered(1)", 1, 1, A4W4_REGIME_EXACT, 33, 64, 512, &fails);
        const a4w4_entry_result *e = entry_of(&en, "fault");
        cr_expect_str_eq(verdict(e), "fail", "%s", t[i].says);
        cr_expect(strstr(note(e), t[i].says) != NULL, "%s: %s", t[i].says, note(e));
        cr_expect_eq(e->mismatches, 0, "its outputs are right: only the write fails it");
        a4w4_entry_list_free(&en);
    }
}

/* E8M0 code 0 (contracts §1), on a case where reading it as 2^-126 changes outputs: judged
 * under both readings by default, an entry matching only one is ambiguous, never a pass, and
 * makes no failure; a stated reading judges under it alone. Reproducer: code-0 entries were
 * written "pass" with ambiguous true. */
Test(runner, code0_results_are_ambiguous_unless_both_readings_agree_or_one_is_stated)
{
    static const struct {
        fault f;
        int policy;
        const char *want;
    } t[] = {{F_NONE, A4W4_CODE0_BOTH, "ambiguous"},     {F_CODE0_126, A4W4_CODE0_BOTH, "ambiguous"},
             {F_NONE, A4W4_CODE0_OCP, "pass"},           {F_CODE0_126, A4W4_CODE0_OCP, "fail"},
             {F_NONE, A4W4_CODE0_DRIVER, "fail"},        {F_CODE0_126, A4W4_CODE0_DRIVER, "pass"},
             {F_FLIP_ONE, A4W4_CODE0_BOTH, "fail"}};
    g_seed = 7014; /* cases/selftest.csv's code-0 case: 2^-126 changes 211 of its outputs */
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        g_fault = t[i].f;
        g_code0 = t[i].policy;
        int fails;
        a4w4_entry_list en = run_one("ordered(1)", 1, 0, A4W4_REGIME_CODE0, 16, 64, 256, &fails);
        const a4w4_entry_result *e = entry_of(&en, "fault");
        cr_expect_str_eq(verdict(e), t[i].want, "case %zu: %s", i, note(e));
        cr_expect_eq(e->ambiguous, !strcmp(t[i].want, "ambiguous"), "case %zu", i);
        cr_expect_eq(fails, !strcmp(t[i].want, "fail"), "case %zu", i);
        cr_expect(strstr(note(e), "contracts §1") != NULL, "case %zu: %s", i, note(e));
        a4w4_entry_list_free(&en);
    }
    g_seed = 17;
    g_code0 = A4W4_CODE0_BOTH;
}

/* The two readings of E8M0 code 0 (contracts §1) under a tree contract (contracts §4.2):
 * the tree oracle over the operands read either way; a kernel keeping the tree is ambiguous
 * under both readings, passes under its own stated one and fails under the other.
 * Reproducer: a tree-contract backend on a code-0 case was judged under 2^-127 only. */
Test(runner, code0_is_read_both_ways_under_a_tree_contract)
{
    static const char *const tree = "tree(order=desc,final=rz)";
    a4w4_contract k;
    cr_assert_eq(a4w4_contract_parse(tree, &k, NULL, 0), A4W4_OK);
    g_tree = k.tree;
    static const struct {
        int as126, policy;
        const char *want;
    } t[] = {{0, A4W4_CODE0_BOTH, "ambiguous"}, {1, A4W4_CODE0_BOTH, "ambiguous"},
             {0, A4W4_CODE0_OCP, "pass"},       {1, A4W4_CODE0_OCP, "fail"},
             {1, A4W4_CODE0_DRIVER, "pass"},    {0, A4W4_CODE0_DRIVER, "fail"}};
    g_seed = 7014; /* the code-0 case of the test above */
    g_fault = F_TREE;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        g_as126 = t[i].as126;
        g_code0 = t[i].policy;
        int fails;
        a4w4_entry_list en = run_one(tree, 1, 0, A4W4_REGIME_CODE0, 16, 64, 256, &fails);
        const a4w4_entry_result *e = entry_of(&en, "fault");
        cr_expect_str_eq(verdict(e), t[i].want, "case %zu: %s", i, note(e));
        cr_expect_eq(e->not_judged, !strcmp(t[i].want, "ambiguous") ? 16 * 64 : 0,
                     "case %zu: an ambiguous entry's outputs are not judged", i);
        a4w4_entry_list_free(&en);
    }
    g_as126 = 0;
    g_fault = F_NONE;
    g_seed = 17;
    g_code0 = A4W4_CODE0_BOTH;
}

/* Exact is judged inside the exact regime only (contracts §4.1), and there under both
 * readings of E8M0 code 0: one output of two 32-blocks, A's first at code 0 against W at
 * 254 (3 units: 0.75 read as 2^-127, 1.5 as 2^-126), the second 0.25; y the exact sum under
 * either reading, or neither. */
Test(runner, code0_is_read_both_ways_under_exact_inside_the_exact_regime)
{
    uint8_t a[32] = {0}, w[32] = {0}, as[2] = {0, 127}, ws[2] = {254, 127}, as1[2] = {1, 127};
    tu_units_block(a, w, 3, 0);
    tu_units_block(a + 16, w + 16, 1, 0);
    a4w4_dot_operands o127 = {a, as, w, ws, 64}, o126 = {a, as1, w, ws, 64};
    uint16_t y127, y126, y_neither = 0x3F00; /* 1.0, 1.75, 0.5 */
    a4w4_dot_exact(&o127, &y127, NULL);
    a4w4_dot_exact(&o126, &y126, NULL);
    cr_assert_eq(y127, 0x3F80);
    cr_assert_eq(y126, 0x3FE0);
    const struct {
        const uint16_t *y;
        int policy;
        const char *want;
    } t[] = {{&y127, A4W4_CODE0_BOTH, "ambiguous"}, {&y126, A4W4_CODE0_BOTH, "ambiguous"},
             {&y127, A4W4_CODE0_OCP, "pass"},       {&y126, A4W4_CODE0_OCP, "fail"},
             {&y126, A4W4_CODE0_DRIVER, "pass"},    {&y127, A4W4_CODE0_DRIVER, "fail"},
             {&y_neither, A4W4_CODE0_BOTH, "fail"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        a4w4_judge_input in = {"capture/code0", "capture", "capture:op", "exact", a, as, w, ws,
                               1, 1, 64, t[i].y, t[i].policy};
        a4w4_entry_result e;
        memset(&e, 0, sizeof e);
        cr_assert_eq(a4w4_judge_outputs(&in, &e), A4W4_ST_OK);
        cr_expect_str_eq(verdict(&e), t[i].want, "case %zu: %s", i, note(&e));
        cr_expect_eq(e.judged_bit_exact, !strcmp(t[i].want, "ambiguous") ? 0 : 1, "case %zu",
                     i);
    }
}

/* A backend whose calls time out twice in a row is not called again: its later entries fail
 * "not run" at once (reproducer: a plugin hanging on every call cost --timeout per case). */
Test(runner, a_backend_that_timed_out_twice_in_a_row_is_not_called_again)
{
    a4w4_backend b;
    fault_backend(&b, "ordered(1)", 1, 0);
    a4w4_runner r = {.backends = &b, .nbackends = 1};
    g_fault = F_TIMEOUT;
    static const char *const want[4] = {"timed out", "timed out", "not run", "not run"};
    for (int i = 0; i < 4; i++) {
        a4w4_case c;
        memset(&c, 0, sizeof c);
        snprintf(c.name, sizeof c.name, "t%d", i);
        c.M = 2, c.N = 32, c.K = 64, c.regime = A4W4_REGIME_EXACT, c.seed = (uint64_t)i + 1;
        a4w4_entry_list en = {0};
        char err[256];
        cr_assert_eq(a4w4_run_case(&r, &c, &en, err, sizeof err), A4W4_ST_OK, "%s", err);
        const a4w4_entry_result *e = entry_of(&en, "fault");
        cr_expect_str_eq(verdict(e), "fail");
        cr_expect_str_eq(e->aborted, want[i], "case %d: %s", i, note(e));
        if (i >= 2)
            cr_expect(strstr(note(e), "not run: backend hung 2 times in a row") != NULL, "%s",
                      note(e));
        a4w4_entry_list_free(&en);
    }
    g_fault = F_NONE;
}

Test(runner, reading_the_row_pad_is_reported_pad_dependent)
{
    g_fault = F_READ_ROW_PAD;
    int fails;
    /* with the default 0x7F fill the fault's extra term is the same in the baseline and in
     * the oracle comparison it shows as a mismatch too; the variants must name the fills */
    a4w4_entry_list en = run_one("ordered(1)", 1, 1, A4W4_REGIME_EXACT, 3, 32, 256, &fails);
    const a4w4_entry_result *e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "fail");
    const char *pd = e->pad_dependent;
    cr_assert(pd[0], "no pad_dependent");
    cr_expect(strstr(pd, "row pad 0xFF") && strstr(pd, "row pad 0x00"), "%s", pd);
    a4w4_entry_list_free(&en);
}

/* Without pad rows or columns (M % 256 == 0, (K/32) % 8 == 0) every fill gives the same bytes:
 * the variants are not run, and the entry says why; one row short of 256 they run again. */
Test(runner, pad_variants_are_skipped_with_a_note_only_where_no_pad_exists)
{
    g_fault = F_NONE;
    int fails;
    a4w4_entry_list en = run_one("ordered(1)", 1, 1, A4W4_REGIME_EXACT, 256, 32, 256, &fails);
    const a4w4_entry_result *e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "pass", "%s", note(e));
    cr_expect_eq(e->pad_variants, 0);
    cr_expect(strstr(note(e), "pad variants not run") && strstr(note(e), "contracts §3.3"),
              "%s", note(e));
    a4w4_entry_list_free(&en);
    en = run_one("ordered(1)", 1, 1, A4W4_REGIME_EXACT, 255, 32, 256, &fails);
    e = entry_of(&en, "fault");
    cr_expect_eq(e->pad_variants, 2);
    cr_expect(!strstr(note(e), "pad variants not run"), "%s", note(e));
    a4w4_entry_list_free(&en);
    cr_expect_eq(a4w4_pad_variant_count(4096, 16384), 0);
    cr_expect_eq(a4w4_pad_variant_count(4095, 16384), 2);
    cr_expect_eq(a4w4_pad_variant_count(4096, 16384 + 32), 5); /* a pad column */
}

/* A bf16-atomic result some ULPs off exact passes bounded(2) with the distance reported, and
 * fails the exact contract; ordered(1) moved one ULP on every output is no bf16-atomic
 * result (the per-output bound is tighter than that where a split partial is small). */
Test(runner, bounded_contract_accepts_atomic_ulps_and_exact_contract_does_not)
{
    g_fault = F_ATOMIC;
    g_atomic_S = 2;
    g_order_seed = 5;
    int fails;
    a4w4_entry_list en = run_one("bounded(2)", 2, 0, A4W4_REGIME_NORMAL, 4, 32, 2048, &fails);
    const a4w4_entry_result *e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "pass", "%s", note(e));
    cr_expect_geq(e->max_ulp, 1);
    cJSON *j = a4w4_entry_json(e); /* the one writer carries the bound fields */
    cr_assert_not_null(j);
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(j, "bound_use")) &&
              cJSON_GetObjectItem(j, "bound_use")->valuedouble == e->bound_use);
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(j, "bound_ulp_median")));
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(j, "bound_ulp_max")));
    cJSON_Delete(j);
    a4w4_entry_list_free(&en);
    en = run_one("exact", 1, 0, A4W4_REGIME_NORMAL, 4, 32, 2048, &fails);
    cr_expect_str_eq(verdict(entry_of(&en, "fault")), "fail");
    j = a4w4_entry_json(entry_of(&en, "fault"));
    cr_expect_null(cJSON_GetObjectItem(j, "bound_use"), "only bounded entries have a bound");
    cJSON_Delete(j);
    a4w4_entry_list_free(&en);
    g_fault = F_BF16_NEIGHBOUR;
    en = run_one("bounded(2)", 2, 0, A4W4_REGIME_NORMAL, 4, 32, 2048, &fails);
    e = entry_of(&en, "fault");
    cr_expect_str_eq(verdict(e), "fail");
    cr_expect_gt(e->bound_use, 1.0);
    cr_expect(strstr(note(e), "outside the bounded(2) bound"), "%s", note(e));
    a4w4_entry_list_free(&en);
    g_fault = F_NONE;
}

/* A correct bf16-atomic split-K (random orders of blocks and of splits) declared bounded(S)
 * passes on every regime where its bound is strong (not judged where it is not), with the per-entry bound fields set; the bound is used (a correct
 * result comes within a visible fraction of it) yet never exceeded. The range regime's
 * outputs at and past bf16's largest value round to +-Inf or NaN on some splits and orders,
 * which the model allows there (contracts §4.3). Reproducer of the bug this holds fixed: a
 * range case through a bounded(4) backend failed with "got 0x7f80 expected 0x7f80 ... outside
 * the bounded(4) bound" (the Inf of 511 * 2^119 measured from a finite fp32 exact value). */
Test(runner, a_correct_bf16_atomic_splitk_passes_within_the_per_output_bound)
{
    static const a4w4_regime regimes[] = {A4W4_REGIME_EXACT, A4W4_REGIME_NORMAL,
                                          A4W4_REGIME_WIDE, A4W4_REGIME_SPECIAL,
                                          A4W4_REGIME_CODE0, A4W4_REGIME_TINY,
                                          A4W4_REGIME_RANGE};
    static const unsigned splits[] = {1, 2, 4, 8};
    static const size_t Ks[] = {512, 2048, 4096};
    g_fault = F_ATOMIC;
    g_code0 = A4W4_CODE0_OCP; /* the bound, not the reading of code 0, is under test here */
    double most = 0;
    for (size_t r = 0; r < sizeof regimes / sizeof regimes[0]; r++)
        for (size_t si = 0; si < 4; si++)
            for (size_t ki = 0; ki < 3; ki++) {
                char contract[32];
                snprintf(contract, sizeof contract, "bounded(%u)", splits[si]);
                g_atomic_S = splits[si];
                g_order_seed = 100 * r + 10 * si + ki + 1;
                int fails;
                a4w4_entry_list en =
                    run_one(contract, splits[si], 0, regimes[r], 4, 32, Ks[ki], &fails);
                const a4w4_entry_result *e = entry_of(&en, "fault");
                /* the tiny regime's outputs lie inside the bound's underflow terms, and some
                 * of the range regime's near zero: there the bound admits 0 on most outputs
                 * and the entry is not judged (contracts §4.1, the strength of a bound) */
                int weak = regimes[r] == A4W4_REGIME_TINY || regimes[r] == A4W4_REGIME_RANGE;
                cr_expect_str_eq(verdict(e), e->vacuous ? "skip" : "pass",
                                 "%s regime %zu K %zu: %s", contract, r, Ks[ki], note(e));
                cr_expect(!e->vacuous || weak, "%s regime %zu K %zu judged nothing: %s",
                          contract, r, Ks[ki], note(e));
                cr_expect(e->has_bound && e->bound_use <= 1.0 && e->bound_ulp_median > 0,
                          "%s: bound fields %d %g %g", contract, e->has_bound, e->bound_use,
                          e->bound_ulp_median);
                if (e->bound_use > most)
                    most = e->bound_use;
                a4w4_entry_list_free(&en);
            }
    cr_expect_gt(most, 0.01, "the bound is never approached (largest use %g): too loose?", most);
    g_fault = F_NONE;
}

/* The property itself, straight against ref's bound: many random orders of the blocks inside
 * each split and of the splits, every output of wide and normal cases, never beyond B. */
Test(runner, random_atomic_orders_stay_within_the_bound)
{
    static const a4w4_regime regimes[] = {A4W4_REGIME_NORMAL, A4W4_REGIME_WIDE};
    static const unsigned splits[] = {2, 3, 8};
    double most = 0;
    for (size_t r = 0; r < 2; r++)
        for (size_t si = 0; si < 3; si++) {
            a4w4_case c;
            memset(&c, 0, sizeof c);
            snprintf(c.name, sizeof c.name, "prop");
            c.M = 3;
            c.N = 8;
            c.K = 4096;
            c.regime = regimes[r];
            c.seed = 31 + r * 3 + si;
            a4w4_sample smp;
            a4w4_case_data d;
            cr_assert_eq(a4w4_sample_make(c.M, c.N, c.K, c.seed, c.name, 1, &smp), 0);
            cr_assert_eq(a4w4_case_generate(&c, &smp, &d), 0);
            size_t nb = c.K / 32;
            for (size_t m = 0; m < c.M; m++)
                for (size_t n = 0; n < c.N; n++) {
                    a4w4_dot_operands op = {d.a_fp4.data + m * c.K / 2, d.a_scale.data + m * nb,
                                            d.w_fp4.data + n * c.K / 2, d.w_scale.data + n * nb,
                                            c.K};
                    float e;
                    a4w4_dot_exact(&op, NULL, &e);
                    double B = a4w4_dot_bounded_bound(&op, splits[si]);
                    double tol = B + 0x1p-24 * fabs(e) + 0x1p-149;
                    uint64_t x = 977 * m + n + 1000 * c.seed;
                    for (int t = 0; t < 40; t++) {
                        double g = a4w4_bf16_to_f32(atomic_splitk(&op, splits[si], &x));
                        double use = fabs(g - e) / tol;
                        cr_assert_leq(use, 1.0, "S=%u (%zu,%zu) trial %d: |%g - %g| > %g",
                                      splits[si], m, n, t, g, (double)e, tol);
                        most = use > most ? use : most;
                    }
                }
            a4w4_case_data_free(&d);
            a4w4_sample_free(&smp);
        }
    cr_expect_gt(most, 0.01, "largest use %g", most);
}

Test(runner, ordered_s_contract_compares_against_ordered_s)
{
    /* find a generated wide case where ordered(1) and ordered(4) round to different bf16
     * somewhere (the oracle decides, not the runner), then: an ordered(4) computation
     * declared ordered(4) passes, an ordered(1) computation declared ordered(4) fails */
    uint64_t seed = 0;
    for (uint64_t sd = 1; sd < 400 && !seed; sd++) {
        a4w4_case c;
        memset(&c, 0, sizeof c);
        snprintf(c.name, sizeof c.name, "rt");
        c.M = 16;
        c.N = 64;
        c.K = 4096;
        c.regime = A4W4_REGIME_WIDE;
        c.seed = sd;
        a4w4_sample s;
        a4w4_case_data d;
        cr_assert_eq(a4w4_sample_make(c.M, c.N, c.K, sd, c.name, 1, &s), 0);
        cr_assert_eq(a4w4_case_generate(&c, &s, &d), 0);
        for (size_t m = 0; m < c.M && !seed; m++)
            for (size_t n = 0; n < c.N && !seed; n++) {
                a4w4_dot_operands op = {d.a_fp4.data + m * 2048, d.a_scale.data + m * 128,
                                        d.w_fp4.data + n * 2048, d.w_scale.data + n * 128, c.K};
                if (a4w4_f32_to_bf16(a4w4_dot_ordered(&op, 1)) !=
                    a4w4_f32_to_bf16(a4w4_dot_ordered(&op, 4)))
                    seed = sd;
            }
        a4w4_case_data_free(&d);
        a4w4_sample_free(&s);
    }
    cr_assert_neq(seed, 0, "no wide case separates ordered(1) from ordered(4)");
    g_seed = seed;
    int fails;
    g_fault = F_SPLIT4;
    a4w4_entry_list en = run_one("ordered(4)", 4, 0, A4W4_REGIME_WIDE, 16, 64, 4096, &fails);
    cr_expect_str_eq(verdict(entry_of(&en, "fault")), "pass");
    a4w4_entry_list_free(&en);
    g_fault = F_NONE;
    en = run_one("ordered(4)", 4, 0, A4W4_REGIME_WIDE, 16, 64, 4096, &fails);
    cr_expect_str_eq(verdict(entry_of(&en, "fault")), "fail", "ordered(1) results passed as ordered(4)");
    a4w4_entry_list_free(&en);
    g_fault = F_SPLIT4;
    en = run_one("ordered(1)", 1, 0, A4W4_REGIME_WIDE, 16, 64, 4096, &fails);
    cr_expect_str_eq(verdict(entry_of(&en, "fault")), "fail", "ordered(4) results passed as ordered(1)");
    a4w4_entry_list_free(&en);
    g_seed = 17;
}

/* Regression (hazards --jobs 16 with HIP backends crashed on the H200): GPU backends share
 * one device and the HIP backends' device cache, so the runner must never enter a backend
 * that is not thread_safe (every GPU type) from two threads at once, whatever the caller's
 * threading; a thread_safe one is entered concurrently. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

static atomic_int g_inside, g_overlap;

static int run_exclusive(void *ctx, const a4w4_run_args *a)
{
    if (atomic_fetch_add(&g_inside, 1) != 0)
        atomic_store(&g_overlap, 1);
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    int rc = run_fault(ctx, a);
    atomic_fetch_sub(&g_inside, 1);
    return rc;
}

static a4w4_backend_type gpu_like_type = {
    .name = "gpu-like", .what = "test backend marked gpu", .contract = "ordered(1)", .gpu = 1,
    .run = run_exclusive};
static a4w4_backend_type serial_cpu_type = {
    .name = "serial-cpu", .what = "CPU test backend not declared thread-safe",
    .contract = "ordered(1)", .run = run_exclusive};
static a4w4_backend_type safe_cpu_type = {
    .name = "safe-cpu", .what = "CPU test backend declared thread-safe",
    .contract = "ordered(1)", .thread_safe = 1, .run = run_exclusive};

static void *case_thread(void *arg)
{
    a4w4_backend b;
    memset(&b, 0, sizeof b);
    b.type = arg;
    snprintf(b.name, sizeof b.name, "%s", b.type->name);
    snprintf(b.contract, sizeof b.contract, "ordered(1)");
    b.split = 1;
    a4w4_runner r = {.backends = &b, .nbackends = 1};
    for (int i = 0; i < 4; i++) {
        a4w4_case c;
        memset(&c, 0, sizeof c);
        snprintf(c.name, sizeof c.name, "mt%d", i);
        c.M = 2;
        c.N = 32;
        c.K = 64;
        c.regime = A4W4_REGIME_EXACT;
        c.seed = (uint64_t)i;
        a4w4_entry_list entries = {0};
        char err[128];
        a4w4_run_case(&r, &c, &entries, err, sizeof err);
        a4w4_entry_list_free(&entries);
    }
    return NULL;
}

/* Four threads running cases on one backend of type t; 1 when two were ever inside it. */
static int overlapped(a4w4_backend_type *t)
{
    g_fault = F_NONE;
    atomic_store(&g_overlap, 0);
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, case_thread, t);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    return atomic_load(&g_overlap);
}

Test(runner, gpu_backends_are_never_entered_concurrently)
{
    cr_expect_eq(overlapped(&gpu_like_type), 0, "two threads were inside a gpu backend at once");
}

Test(runner, backends_not_declared_thread_safe_are_never_entered_concurrently)
{
    cr_expect_eq(overlapped(&serial_cpu_type), 0,
                 "two threads were inside a backend without thread_safe at once");
}

Test(runner, thread_safe_backends_run_concurrently)
{
    cr_expect_eq(overlapped(&safe_cpu_type), 1,
                 "a thread_safe backend was serialized (4 threads x 4 cases of 2 ms never met)");
}

/* ---- the entries' JSON form (entry.h): one writer, fields in results.json's order ---- */

static void expect_keys(const cJSON *o, const char *const *keys, size_t n)
{
    const cJSON *it = o->child;
    for (size_t i = 0; i < n; i++, it = it ? it->next : NULL) {
        cr_assert_not_null(it, "missing key %s (position %zu)", keys[i], i);
        cr_expect_str_eq(it->string, keys[i], "position %zu", i);
    }
    cr_expect_null(it, "extra key %s", it ? it->string : "");
}

/* One flipped output bit in 96: AITER's checkAllclose lets 5 % of elements be out of
 * tolerance, so it passes what bit-exactness fails; hipBLASLt's unit_check and benchdnn's
 * equality catch it. The entry says so, and that a tolerance test would have shipped it. */
Test(runner, a_failing_entry_carries_the_peers_verdicts_on_its_outputs)
{
    g_fault = F_FLIP_ONE;
    int fails;
    a4w4_entry_list en = run_one("ordered(1)", 1, 1, A4W4_REGIME_EXACT, 3, 32, 256, &fails);
    const a4w4_entry_result *e = &en.items[1];
    cr_assert_eq(e->verdict, A4W4_VERDICT_FAIL);
    cr_assert_gt(e->ntol, 0);
    cr_expect_eq(e->tol_outputs, 3 * 32);
    const char *want[][2] = {{"aiter-checkallclose", "PASS"}, {"hipblaslt-unit-check", "FAIL"},
                             {"onednn-benchdnn-matmul", "FAIL"}, {"flashinfer-cosine", "n/a"}};
    for (size_t w = 0; w < 4; w++) {
        const a4w4_crit_result *r = NULL;
        for (size_t i = 0; i < e->ntol; i++)
            if (!strcmp(e->tol[i].c->id, want[w][0]))
                r = &e->tol[i];
        cr_assert_not_null(r, "%s", want[w][0]);
        cr_expect_str_eq(a4w4_crit_verdict_name(r->verdict), want[w][1], "%s", r->text);
    }
    cJSON *a = a4w4_entry_list_json(&en);
    const cJSON *t = cJSON_GetObjectItem(cJSON_GetArrayItem(a, 1), "tolerance");
    cr_assert_not_null(t);
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(t, "would_ship")));
    cr_expect_null(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 0), "tolerance"),
                   "a passing entry has none");
    cJSON_Delete(a);
    a4w4_entry_list_free(&en);
}

Test(runner, a_failing_gemm_entry_is_written_with_its_fields_in_order)
{
    g_fault = F_FLIP_ONE;
    int fails;
    a4w4_entry_list en = run_one("ordered(1)", 1, 1, A4W4_REGIME_EXACT, 3, 32, 256, &fails);
    cJSON *a = a4w4_entry_list_json(&en);
    cr_assert_not_null(a);
    cr_assert_eq(cJSON_GetArraySize(a), 2);
    static const char *const fault_keys[] = {
        "name", "M", "N", "K", "regime", "seed", "backend", "contract", "tags", "run_ms",
        "y_hash", "pad_variants", "checked_outputs", "sampled", "verdict", "mismatches",
        "unwritten", "max_ulp", "first_mismatches", "time_ms", "cost_ms", "exact_regime_outputs",
        "judged_bit_exact", "judged_in_bound", "not_judged", "signature", "signature_class",
        "mismatch_map", "tolerance", "route", "policy", "hazard", "field_bugs"};
    const cJSON *e = cJSON_GetArrayItem(a, 1);
    expect_keys(e, fault_keys, sizeof fault_keys / sizeof fault_keys[0]);
    cr_expect_eq(cJSON_GetObjectItem(e, "judged_bit_exact")->valuedouble, 3 * 32,
                 "ordered(1): every output judged bit for bit");
    cr_expect_eq(cJSON_GetObjectItem(e, "not_judged")->valuedouble, 0);
    cr_expect_str_eq(cJSON_GetObjectItem(e, "verdict")->valuestring, "fail");
    cr_expect_str_eq(cJSON_GetObjectItem(e, "seed")->valuestring, "17");
    cr_expect_geq(cJSON_GetObjectItem(e, "cost_ms")->valuedouble,
                  cJSON_GetObjectItem(e, "run_ms")->valuedouble,
                  "the entry's whole cost holds its backend's run");
    const cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItem(e, "first_mismatches"), 0);
    cr_expect_str_eq(cJSON_GetObjectItem(m, "tensor")->valuestring, "y");
    cr_expect_eq(cJSON_GetObjectItem(m, "col")->valuedouble, 1);
    char want[16];
    a4w4_mismatch_hex(en.items[1].first[0].got, 2, want);
    cr_expect_str_eq(cJSON_GetObjectItem(m, "got")->valuestring, want);
    cr_expect_eq(strlen(want), 6, "bf16 bits print as 0x and 4 digits: %s", want);
    static const char *const oracle_keys[] = {
        "name", "M", "N", "K", "regime", "seed", "backend", "contract", "tags",
        "checked_outputs", "sampled", "verdict", "mismatches", "unwritten", "max_ulp",
        "first_mismatches", "time_ms", "cost_ms", "exact_regime_outputs", "route", "policy",
        "hazard", "field_bugs"};
    expect_keys(cJSON_GetArrayItem(a, 0), oracle_keys, sizeof oracle_keys / sizeof oracle_keys[0]);
    cJSON_Delete(a);
    a4w4_entry_list_free(&en);
}

Test(runner, a_byte_entry_is_written_from_its_check)
{
    a4w4_entry_list l = {0};
    a4w4_entry_result *e = a4w4_entry_list_add(&l);
    cr_assert_not_null(e);
    a4w4_entry_identity(e, A4W4_ENTRY_BYTES, "golden/g", 1, 2, 64, "golden", 0, "cpu-asm",
                        "ordered(1)");
    uint8_t got[4] = {1, 2, 3, 4}, exp[4] = {1, 2, 9, 4};
    a4w4_check c;
    a4w4_check_bytes(&c, "w_fp4_shuffled", got, exp, 2, 2, NULL);
    a4w4_entry_set_check(e, &c);
    e->time_ms = 1.5;
    cr_expect_eq(a4w4_entry_list_failures(&l), 1);
    cJSON *o = a4w4_entry_json(e);
    static const char *const keys[] = {"name", "M", "N", "K", "regime", "seed", "backend",
                                       "contract", "checked_outputs", "verdict", "mismatches",
                                       "max_ulp", "first_mismatches", "sampled", "time_ms"};
    expect_keys(o, keys, sizeof keys / sizeof keys[0]);
    const cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "first_mismatches"), 0);
    cr_expect_str_eq(cJSON_GetObjectItem(m, "tensor")->valuestring, "w_fp4_shuffled");
    cr_expect_eq(cJSON_GetObjectItem(m, "row")->valuedouble, 1);
    cr_expect_eq(cJSON_GetObjectItem(m, "col")->valuedouble, 0);
    cr_expect_str_eq(cJSON_GetObjectItem(m, "got")->valuestring, "0x03");
    cr_expect_str_eq(cJSON_GetObjectItem(m, "expected")->valuestring, "0x09");
    cJSON_Delete(o);
    a4w4_entry_list_free(&l);
}

/* ---- golden bundles: the systems under test come from the caller (verify_bundle.h) ---- */

static int sut_ordered(void *ctx, const uint8_t *a, const uint8_t *as, const uint8_t *w,
                       const uint8_t *ws, size_t M, size_t N, size_t K, uint16_t *y)
{
    int rc = a4w4_gemm_ordered(a, as, w, ws, M, N, K, 1, y, NULL);
    if (ctx && rc == A4W4_OK)
        y[M * N - 1] ^= 0x0001; /* ctx != NULL: one flipped bit */
    return rc;
}

static int sut_unsupported(void *ctx, const uint8_t *a, const uint8_t *as, const uint8_t *w,
                           const uint8_t *ws, size_t M, size_t N, size_t K, uint16_t *y)
{
    (void)ctx, (void)a, (void)as, (void)w, (void)ws, (void)M, (void)N, (void)K, (void)y;
    return A4W4_EUNSUPPORTED;
}

Test(runner, golden_bundles_check_the_systems_under_test_the_caller_passes)
{
    static int flip = 1;
    const a4w4_bundle_sut suts[] = {{"good", 0, sut_ordered, NULL},
                                    {"broken", 0, sut_ordered, &flip},
                                    {"refuses", 0, sut_unsupported, NULL},
                                    {"unselected", 0, sut_ordered, &flip}};
    a4w4_backend b[3];
    memset(b, 0, sizeof b);
    snprintf(b[0].name, sizeof b[0].name, "good");
    snprintf(b[1].name, sizeof b[1].name, "broken");
    snprintf(b[2].name, sizeof b[2].name, "refuses");
    a4w4_runner r = {.backends = b, .nbackends = 3};
    a4w4_entry_list en = {0};
    char err[512] = "";
    const char *path = A4W4_SOURCE_DIR "/cases/golden/g1_m1_n256_k512.safetensors";
    cr_assert_eq(a4w4_run_golden(&r, suts, 4, path, &en, err, sizeof err), A4W4_ST_OK, "%s", err);
    cr_assert_eq(en.n, 4, "good, broken, refuses, then the oracle (unselected: no entry)");
    cr_expect_str_eq(en.items[0].backend, "good");
    cr_expect_str_eq(verdict(&en.items[0]), "pass");
    cr_expect_str_eq(en.items[0].name, "golden/g1_m1_n256_k512");
    cr_expect_str_eq(verdict(&en.items[1]), "fail");
    cr_expect_eq(en.items[1].mismatches, 1);
    cr_expect_str_eq(en.items[1].first[0].tensor, "broken vs y_ordered");
    cr_expect_str_eq(verdict(&en.items[2]), "n/a");
    cr_expect(strstr(en.items[2].note, "not"), "%s", en.items[2].note);
    cr_expect_str_eq(en.items[3].backend, "oracle");
    cr_expect_str_eq(verdict(&en.items[3]), "pass", "%s", en.items[3].note);
    cr_expect_eq(a4w4_entry_list_failures(&en), 1);
    a4w4_entry_list_free(&en);
    /* a bad bundle: the oracle entry records it, the status says so */
    cr_assert_eq(a4w4_run_golden(&r, suts, 4, A4W4_SOURCE_DIR "/cases/premerge.csv", &en, err,
                                 sizeof err), A4W4_ST_BADINPUT);
    cr_assert_eq(en.n, 1);
    cr_expect_str_eq(verdict(&en.items[0]), "fail");
    cr_expect(strstr(en.items[0].note, "bad input"), "%s", en.items[0].note);
    a4w4_entry_list_free(&en);
}

Test(runner, an_asm_layout_sut_is_not_applicable_without_the_layouts)
{
    const a4w4_bundle_sut suts[] = {{"asm-reader", 1, sut_ordered, NULL}};
    a4w4_check_list checks = {0};
    char err[512] = "";
    /* g5: N = 48 has no scale swizzle, so the bundle holds no ASM layouts */
    const char *path = A4W4_SOURCE_DIR "/cases/golden/g5_m8_n48_k320.safetensors";
    cr_assert_eq(a4w4_verify_bundle(path, suts, 1, &checks, NULL, err, sizeof err), A4W4_ST_OK,
                 "%s", err);
    const a4w4_check *last = &checks.items[checks.n - 1];
    cr_expect_str_eq(last->subject, "asm-reader vs y_ordered");
    cr_expect_eq(last->verdict, A4W4_CHECK_NA);
    cr_expect(strstr(last->note, "ASM layouts not applicable"), "%s", last->note);
    a4w4_check_list_free(&checks);
}

/* ---- the budget: full outputs where a full check is estimated to fit ------------------- */

static a4w4_backend_type gpu_cost_type = {
    .name = "gpu-cost", .what = "GPU-rated test backend", .contract = "ordered(1)", .gpu = 1,
    .run = run_fault};

Test(runner, the_full_check_estimate_follows_its_cost_model)
{
    a4w4_backend b[2];
    memset(b, 0, sizeof b);
    b[0].type = &fault_type; /* a CPU backend reading the ASM layouts */
    b[0].asm_layout = 1;
    b[1].type = &gpu_cost_type;
    a4w4_case c;
    memset(&c, 0, sizeof c);
    c.M = 16;
    c.N = 1024;
    c.K = 5120;
    double macs = 16.0 * 1024 * 5120, gen = (16.0 + 1024) * 5120 * A4W4_COST_GEN_S_PER_ELEMENT;
    a4w4_runner none = {.backends = b}, cpu = {.backends = b, .nbackends = 1},
                both = {.backends = b, .nbackends = 2};
    cr_expect_float_eq(a4w4_full_check_seconds(&none, &c), macs * A4W4_COST_ORACLE_S_PER_MAC + gen,
                       1e-12);
    /* K % 256 == 0: the baseline and 2 pad variants */
    cr_expect_float_eq(a4w4_full_check_seconds(&cpu, &c),
                       macs * (A4W4_COST_ORACLE_S_PER_MAC + 3 * A4W4_COST_CPU_RUN_S_PER_MAC) + gen,
                       1e-12);
    cr_expect_float_eq(a4w4_full_check_seconds(&both, &c) - a4w4_full_check_seconds(&cpu, &c),
                       macs * A4W4_COST_GPU_RUN_S_PER_MAC, 1e-12);
    c.M = 256; /* no pad at all: the baseline alone */
    cr_expect_float_eq(a4w4_full_check_seconds(&cpu, &c),
                       256.0 * 1024 * 5120 * (A4W4_COST_ORACLE_S_PER_MAC + A4W4_COST_CPU_RUN_S_PER_MAC) +
                           (256.0 + 1024) * 5120 * A4W4_COST_GEN_S_PER_ELEMENT,
                       1e-12);
    c.M = 16;
    c.K = 5120 + 32; /* column pads: 5 variants */
    double macs2 = 16.0 * 1024 * 5152, gen2 = (16.0 + 1024) * 5152 * A4W4_COST_GEN_S_PER_ELEMENT;
    cr_expect_float_eq(a4w4_full_check_seconds(&cpu, &c),
                       macs2 * (A4W4_COST_ORACLE_S_PER_MAC + 6 * A4W4_COST_CPU_RUN_S_PER_MAC) +
                           gen2,
                       1e-12);
}

/* A backend held to a tree contract adds its oracle's rate: the fast path's per leaf for prec
 * > 0 or acc=bf16, its per-MAC rate times 32/leaf for the other trees it takes, the plain
 * oracle's per leaf for a tree it does not take (prec > 0 with fuse > 256). */
Test(runner, a_tree_contract_adds_the_rate_of_the_oracle_that_judges_it)
{
    static const struct {
        const char *contract;
        double per_mac;
    } rows[] = {
        {"tree(leaf=1,fuse=16,prec=26,round=rz)", A4W4_COST_TREE_PREC_S_PER_LEAF},
        {"tree(leaf=32,acc=bf16)", A4W4_COST_TREE_PREC_S_PER_LEAF / 32},
        {"tree(leaf=2,fuse=16)", A4W4_COST_TREE_FAST_S_PER_MAC * 16},
        {"tree(leaf=1,fuse=257,prec=26)", A4W4_COST_TREE_PLAIN_S_PER_LEAF},
    };
    a4w4_backend b;
    memset(&b, 0, sizeof b);
    b.type = &gpu_cost_type;
    a4w4_case c;
    memset(&c, 0, sizeof c);
    c.M = 16;
    c.N = 1024;
    c.K = 4096;
    double macs = 16.0 * 1024 * 4096;
    snprintf(b.contract, sizeof b.contract, "ordered(1)");
    a4w4_runner r = {.backends = &b, .nbackends = 1};
    double base = a4w4_full_check_seconds(&r, &c);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        snprintf(b.contract, sizeof b.contract, "%s", rows[i].contract);
        cr_expect_float_eq(a4w4_full_check_seconds(&r, &c) - base, macs * rows[i].per_mac,
                           1e-9 * macs * rows[i].per_mac, "%s", rows[i].contract);
    }
}

/* The fault backend on a case above A4W4_FULL_CHECK_MACS with budget_s. */
static a4w4_entry_list run_budget(double budget_s, int full)
{
    g_fault = F_NONE;
    a4w4_backend b;
    memset(&b, 0, sizeof b);
    b.type = &fault_type;
    snprintf(b.name, sizeof b.name, "fault");
    snprintf(b.contract, sizeof b.contract, "ordered(1)");
    b.split = 1;
    a4w4_runner r = {.backends = &b, .nbackends = 1, .full = full, .budget_s = budget_s};
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "budget");
    c.M = 40;
    c.N = 1700;
    c.K = 1024; /* 69.6M MACs > 2^26; about 0.2 s estimated */
    c.regime = A4W4_REGIME_NORMAL;
    c.seed = 5;
    cr_assert_gt((double)c.M * c.N * c.K, (double)A4W4_FULL_CHECK_MACS);
    a4w4_entry_list en = {0};
    char err[256];
    cr_assert_eq(a4w4_run_case(&r, &c, &en, err, sizeof err), A4W4_ST_OK, "%s", err);
    return en;
}

Test(runner, a_case_within_the_budget_is_checked_in_full_and_beyond_it_sampled_with_a_note)
{
    a4w4_entry_list fits = run_budget(1.0, 0), over = run_budget(0.01, 0),
                    none = run_budget(0, 0), forced = run_budget(0.01, 1);
    const a4w4_entry_result *f = entry_of(&fits, "fault"), *o = entry_of(&over, "fault"),
                            *n = entry_of(&none, "fault"), *x = entry_of(&forced, "fault");
    cr_expect_eq(f->checked, 40 * 1700);
    cr_expect_eq(f->sampled, 0);
    cr_expect_eq(entry_of(&fits, "oracle")->checked, 40 * 1700);
    cr_expect_eq(strstr(note(entry_of(&fits, "oracle")), "sampled"), NULL);
    cr_expect_eq(o->sampled, 1);
    cr_expect_lt(o->checked, 40 * 1700);
    char want[128];
    snprintf(want, sizeof want, "sampled: %zu of 68000 outputs checked", o->checked);
    const char *on = note(entry_of(&over, "oracle"));
    cr_expect(strstr(on, want) && strstr(on, "above the budget of 0.01 s"), "%s", on);
    /* budget 0: the fixed rule (a sample above 2^26 MACs), no note; --full wins */
    cr_expect_eq(n->sampled, 1);
    cr_expect_eq(n->checked, o->checked);
    cr_expect_eq(strstr(note(entry_of(&none, "oracle")), "sampled"), NULL);
    cr_expect_eq(x->sampled, 0);
    cr_expect_str_eq(verdict(f), "pass");
    cr_expect_str_eq(verdict(o), "pass");
    a4w4_entry_list_free(&fits);
    a4w4_entry_list_free(&over);
    a4w4_entry_list_free(&none);
    a4w4_entry_list_free(&forced);
}

/* ---- tree contracts (contracts §4.2) ------------------------------------------------------ */

/* A backend keeping tree text, judged by contract; its entry's verdict and mismatches. */
static a4w4_entry_result judged(const char *keeps, const char *contract, a4w4_regime regime,
                                size_t K)
{
    a4w4_contract k;
    cr_assert_eq(a4w4_contract_parse(keeps, &k, NULL, 0), A4W4_OK, "%s", keeps);
    g_tree = k.tree;
    g_fault = F_TREE;
    int fails;
    a4w4_entry_list en = run_one(contract, 1, 0, regime, 5, 48, K, &fails);
    a4w4_entry_result e = *entry_of(&en, "fault");
    a4w4_entry_list_free(&en);
    g_fault = F_NONE;
    return e;
}

/* ordered(S) and tree(split=S) give the same verdict and the same mismatches on every regime,
 * for a backend that keeps ordered(S) (pass) and for ones that keep another order: a bf16
 * accumulator, or a final rounding toward zero (they fail wherever the bits differ). */
Test(runner, ordered_s_and_its_tree_spelling_give_identical_verdicts)
{
    static const a4w4_regime regimes[] = {A4W4_REGIME_EXACT, A4W4_REGIME_NORMAL,
                                          A4W4_REGIME_WIDE,  A4W4_REGIME_SPECIAL,
                                          A4W4_REGIME_CODE0, A4W4_REGIME_TINY};
    static const unsigned Ss[] = {1, 2, 3, 4, 8};
    size_t failing = 0;
    for (size_t r = 0; r < sizeof regimes / sizeof regimes[0]; r++)
        for (size_t si = 0; si < sizeof Ss / sizeof Ss[0]; si++) {
            char ord[32], tree[64], keeps[3][64];
            snprintf(ord, sizeof ord, "ordered(%u)", Ss[si]);
            snprintf(tree, sizeof tree, "tree(split=%u)", Ss[si]);
            snprintf(keeps[0], sizeof keeps[0], "tree(split=%u)", Ss[si]);
            snprintf(keeps[1], sizeof keeps[1], "tree(acc=bf16)");
            snprintf(keeps[2], sizeof keeps[2], "tree(split=%u,final=rz)", Ss[si]);
            for (int kb = 0; kb < 3; kb++) {
                a4w4_entry_result a = judged(keeps[kb], ord, regimes[r], 2080);
                a4w4_entry_result b = judged(keeps[kb], tree, regimes[r], 2080);
                cr_expect_eq(a.verdict, b.verdict, "%s judged by %s: %s, by %s: %s", keeps[kb],
                             ord, verdict(&a), tree, verdict(&b));
                cr_expect_eq(a.mismatches, b.mismatches, "%s: %zu vs %zu mismatches", keeps[kb],
                             a.mismatches, b.mismatches);
                cr_expect_eq(a.checked, b.checked);
                cr_expect_str_eq(a.contract, ord);
                cr_expect(strstr(b.contract, "split=") && !strncmp(b.contract, "tree(leaf=32", 12),
                          "recorded canonically: %s", b.contract);
                if (kb == 0)
                    cr_expect_str_eq(verdict(&a), "pass", "%s: %s", keeps[kb], note(&a));
                failing += a.verdict == A4W4_VERDICT_FAIL;
            }
        }
    cr_expect_gt(failing, 40, "the mis-declared orders must fail (%zu of 60 do)", failing);
}

/* A backend keeping a pairwise tree passes when judged by it and fails as ordered(1) on wide
 * data; a tree that does not apply to K (a split boundary at or past it) skips the entry, the
 * note naming the boundary: not judged, so the run is INCOMPLETE, never "FAIL 0 of 0". */
Test(runner, a_tree_backend_passes_its_tree_and_fails_a_wrong_declaration)
{
    a4w4_entry_result e = judged("tree(reduce=pairwise,fuse=2,round=rz)",
                                 "tree(round=rz,fuse=2,reduce=pairwise)", A4W4_REGIME_WIDE, 4096);
    cr_expect_str_eq(verdict(&e), "pass", "%s", note(&e));
    cr_expect_eq(e.checked, 5 * 48);
    e = judged("tree(reduce=pairwise,fuse=2,round=rz)", "ordered(1)", A4W4_REGIME_WIDE, 4096);
    cr_expect_str_eq(verdict(&e), "fail");
    cr_expect_gt(e.mismatches, 0);
    e = judged("tree()", "tree(split=0/4096)", A4W4_REGIME_WIDE, 4096);
    cr_expect_str_eq(verdict(&e), "skip", "%s", note(&e)); /* unjudged, never a 0-of-0 FAIL */
    cr_expect_eq(e.checked, 0);
    cr_expect(strstr(note(&e), "not judged: the contract does not apply to this case: split "
                               "boundary 4096 is not below K=4096"), "%s", note(&e));
    e = judged("tree()", "tree(split=0/8192)", A4W4_REGIME_WIDE, 4096); /* past K */
    cr_expect_str_eq(verdict(&e), "skip", "%s", note(&e));
}

/* A rule set picks the rule of each case's shape; a shape no rule matches is skipped (its
 * outputs unjudged: the run is INCOMPLETE) with the reason, never a pass and never n/a. A rule
 * file without a rule for 1,024 of a run's shapes once gave PASS with 0 % judged. */
Test(runner, a_contract_set_picks_the_rule_per_shape_and_an_unmatched_shape_is_skipped)
{
    a4w4_backend b;
    memset(&b, 0, sizeof b);
    b.type = &fault_type;
    snprintf(b.name, sizeof b.name, "fault");
    snprintf(b.contract_source, sizeof b.contract_source, "rules.txt");
    snprintf(b.contract, sizeof b.contract, "rules of rules.txt (2)");
    char err[256];
    cr_assert_eq(a4w4_contract_set_parse("when K>=1024: tree(order=desc,final=rz)\n"
                                         "when K==512: ordered(1)\n", &b.contracts, err,
                                         sizeof err), A4W4_OK, "%s", err);
    a4w4_contract k;
    cr_assert_eq(a4w4_contract_parse("tree(final=rz,order=desc)", &k, NULL, 0), A4W4_OK);
    g_tree = k.tree;
    g_fault = F_TREE;
    a4w4_runner r = {.backends = &b, .nbackends = 1};
    static const size_t Ks[] = {2048, 512, 256};
    static const char *const want[] = {"pass", "fail", "skip"};
    for (int i = 0; i < 3; i++) {
        a4w4_case c;
        memset(&c, 0, sizeof c);
        snprintf(c.name, sizeof c.name, "set%d", i);
        c.M = 4;
        c.N = 32;
        c.K = Ks[i];
        c.regime = A4W4_REGIME_WIDE;
        snprintf(c.regime_text, sizeof c.regime_text, "wide");
        c.seed = 5;
        a4w4_entry_list en = {0};
        cr_assert_eq(a4w4_run_case(&r, &c, &en, err, sizeof err), A4W4_ST_OK, "%s", err);
        const a4w4_entry_result *e = entry_of(&en, "fault");
        cr_expect_str_eq(verdict(e), want[i], "K=%zu: %s (%zu mismatches)", Ks[i], note(e), e->mismatches);
        if (i == 2) {
            cr_expect_str_eq(note(e), "contract rules.txt has no rule for M=4 N=32 K=256");
            cr_expect_eq(e->checked, 0);
        }
        if (i == 0)
            cr_expect(!strncmp(e->contract, "tree(leaf=32,order=desc", 23), "%s", e->contract);
        a4w4_entry_list_free(&en);
    }
    g_fault = F_NONE;
    a4w4_contract_set_free(&b.contracts);
}

/* ---- outputs computed elsewhere (a4w4_judge_outputs, the judgement of captures) ---- */

/* Judge y over the operands of a generated case (M, N, K, regime, seed g_seed) against
 * contract (NULL: none declared); y is that case's ordered(1) result when flip < 0, else with
 * output flip one ULP off. */
static a4w4_entry_result judge_given(const char *contract, a4w4_regime regime, size_t M,
                                     size_t N, size_t K, long flip)
{
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "given");
    c.M = M, c.N = N, c.K = K, c.regime = regime, c.seed = g_seed;
    a4w4_sample s;
    a4w4_case_data d;
    cr_assert_eq(a4w4_sample_make(M, N, K, c.seed, c.name, 1, &s), A4W4_OK);
    cr_assert_eq(a4w4_case_generate(&c, &s, &d), A4W4_OK);
    uint16_t *y = malloc(M * N * 2);
    cr_assert(y);
    a4w4_gemm_ordered(d.a_fp4.data, d.a_scale.data, d.w_fp4.data, d.w_scale.data, M, N, K, 1, y,
                      NULL);
    if (flip >= 0)
        y[flip] ^= 1;
    a4w4_judge_input in = {"capture/given", "capture", "capture:op", contract, d.a_fp4.data,
                           d.a_scale.data, d.w_fp4.data, d.w_scale.data, M, N, K, y,
                           A4W4_CODE0_BOTH};
    a4w4_entry_result e;
    memset(&e, 0, sizeof e);
    cr_assert_eq(a4w4_judge_outputs(&in, &e), A4W4_ST_OK);
    free(y);
    a4w4_case_data_free(&d);
    a4w4_sample_free(&s);
    return e;
}

/* A capture's failing outputs (a kernel outside the process) carry the peers' criteria too:
 * one output one ULP off in 16 x 64 passes AITER's checkAllclose and fails hipBLASLt's
 * unit_check. */
Test(runner, a_failing_capture_carries_the_peers_verdicts)
{
    g_seed = 17;
    a4w4_entry_result e = judge_given("ordered(1)", A4W4_REGIME_EXACT, 16, 64, 256, 5);
    cr_assert_eq(e.verdict, A4W4_VERDICT_FAIL, "%s", e.note);
    cr_assert_gt(e.ntol, 0);
    cr_expect_eq(e.tol_outputs, 16 * 64);
    for (size_t i = 0; i < e.ntol; i++) {
        if (!strcmp(e.tol[i].c->id, "aiter-checkallclose"))
            cr_expect_eq(e.tol[i].verdict, A4W4_CRIT_PASS, "%s", e.tol[i].text);
        if (!strcmp(e.tol[i].c->id, "hipblaslt-unit-check"))
            cr_expect_eq(e.tol[i].verdict, A4W4_CRIT_FAIL, "%s", e.tol[i].text);
    }
}

/* Outputs computed elsewhere are judged as a backend's are: by their declared contract on
 * every output; with none declared, recorded "undeclared" and judged as exact inside the
 * exact regime only (a correct ordered(1) result on wide operands where ordered(1) and exact
 * differ is no failure, just not judged); one bit off inside the regime fails. */
Test(runner, outputs_computed_elsewhere_are_judged_by_their_declared_contract_or_none)
{
    g_seed = 17;
    cr_assert_gt(ordered1_not_exact("given", A4W4_REGIME_WIDE, 16, 192, 1024), 0,
                 "the operands must tell ordered(1) from exact");
    a4w4_entry_result e = judge_given("ordered(1)", A4W4_REGIME_WIDE, 16, 192, 1024, -1);
    cr_expect_str_eq(verdict(&e), "pass", "%s", note(&e));
    cr_expect_str_eq(e.contract, "ordered(1)");
    cr_expect_eq(e.judged_bit_exact, 16 * 192);
    cr_expect_str_eq(e.name, "capture/given");
    cr_expect_str_eq(e.backend, "capture:op");
    e = judge_given(NULL, A4W4_REGIME_WIDE, 16, 192, 1024, -1);
    cr_expect_neq(e.verdict, A4W4_VERDICT_FAIL, "%s", note(&e));
    cr_expect_str_eq(e.contract, A4W4_CONTRACT_UNDECLARED);
    cr_expect_eq(e.judged_bit_exact, e.exact_regime_outputs);
    cr_expect_eq(e.judged_bit_exact + e.not_judged, 16 * 192);
    cr_expect(!strncmp(note(&e), "no contract declared", 20), "%s", note(&e));
    e = judge_given(NULL, A4W4_REGIME_EXACT, 3, 32, 256, 5);
    cr_expect_str_eq(verdict(&e), "fail", "%s", note(&e));
    cr_expect_eq(e.mismatches, 1);
    cr_expect_eq(e.first[0].row * 32 + e.first[0].col, 5);
    e = judge_given("bounded(1)", A4W4_REGIME_NORMAL, 4, 32, 2048, -1);
    cr_expect_str_eq(verdict(&e), "pass", "%s", note(&e));
    cr_expect_eq(e.judged_in_bound, 4 * 32);
}

/* The one-line form of an entry (verify's lines) names an ambiguous verdict as such: it once
 * printed word[verdict & 3], so an ambiguous capture (verdict 4, contracts §1: never a pass)
 * read "PASS" in `a4w4check verify`. */
Test(runner, an_ambiguous_entry_is_never_printed_as_a_pass)
{
    a4w4_entry_result e;
    memset(&e, 0, sizeof e);
    e.verdict = A4W4_VERDICT_AMBIGUOUS;
    snprintf(e.contract, sizeof e.contract, "ordered(1)");
    char line[512];
    a4w4_entry_format(&e, "c.safetensors", line, sizeof line);
    cr_assert(!strncmp(line, "AMBIGUOUS c.safetensors: ordered(1)", 35), "%s", line);
}
