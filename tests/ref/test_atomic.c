/* test_atomic.c — the atomic(S) contract (contracts §4.1 "atomic(S)", ref/a4w4_atomic.h): its
 * text, its split values, its set of orders on hand-derived outputs, and its strength: a
 * kernel in one fixed order passes, the wrong kernels (a split total rounded toward zero, a
 * split dropped, the split totals added in fp32 and rounded once, zeros) fail, the tiny regime
 * included. */
#include <criterion/criterion.h>

#include <string.h>

#include "a4w4_atomic.h"
#include "a4w4_contract.h"
#include "a4w4_gemm.h"
#include "test_util.h"

#define BF16_1 0x3F80   /* 1.0 */
#define BF16_256 0x4380 /* 256 */
#define BF16_258 0x4381
#define BF16_260 0x4382

Test(atomic_text, parses_prints_and_refuses_what_it_cannot_enumerate)
{
    a4w4_contract c;
    char buf[64], err[256];
    cr_assert_eq(a4w4_contract_parse("atomic(4)", &c, err, sizeof err), A4W4_OK, "%s", err);
    cr_expect_eq(c.kind, A4W4_CONTRACT_ATOMIC);
    cr_expect_eq(c.split, 4u);
    cr_expect_gt(a4w4_contract_format(&c, buf, sizeof buf), 0);
    cr_expect_str_eq(buf, "atomic(4)");
    cr_expect_eq(a4w4_contract_parse("atomic(6)", &c, err, sizeof err), A4W4_OK);
    const char *bad[] = {"atomic(7)", "atomic(0)", "atomic(04)", "atomic", "atomic(4)x",
                         "atomic( 4)", "atomic(65536)"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        cr_expect_eq(a4w4_contract_parse(bad[i], &c, err, sizeof err), A4W4_EINVAL, "%s",
                     bad[i]);
        cr_expect(strchr(err, '\n') == NULL && err[0], "one line for %s", bad[i]);
    }
    a4w4_contract_parse("atomic(9)", &c, err, sizeof err);
    cr_expect(strstr(err, "1..6") != NULL, "the cap is named: %s", err);
    cr_expect(a4w4_contract_text_same("atomic(4)", "atomic(4)"));
    cr_expect(!a4w4_contract_text_same("atomic(4)", "bounded(4)"));
    /* a rule of the file form (contracts §4.2) */
    a4w4_contract_set set;
    cr_assert_eq(a4w4_contract_set_parse("# split-K for the small buckets\n"
                                         "when Mpad <= 32: atomic(4)\nordered(1)\n",
                                         &set, err, sizeof err), A4W4_OK, "%s", err);
    const a4w4_contract *k = a4w4_contract_set_find(&set, 16, 256, 1024);
    cr_assert(k && k->kind == A4W4_CONTRACT_ATOMIC && k->split == 4);
    char text[256];
    cr_expect_gt(a4w4_contract_set_format(&set, text, sizeof text), 0);
    cr_expect_str_eq(text, "when Mpad<=32: atomic(4)\nordered(1)");
    a4w4_contract_set_free(&set);
}

/* One output of K = 1024 (32 blocks): tu_row (test_util.h). */

/* Splits 256, 1, 1, 1: 256 + 1 ties to 256 in bf16, 258 + 1 ties to 260. Every order of the
 * three ones around 256 gives 256 (256 first or second) or 260 (third or last); the fp32
 * ordered(4) total 259 rounds to 260; 258 is no order's result. */
Test(atomic_set, hand_derived_orders)
{
    tu_row r;
    tu_row_init(&r);
    tu_row_block(&r, 0, 4, 0, 131, 131); /* 4 units of 2^6: 256 */
    tu_row_block(&r, 8, 4, 0, 127, 127); /* 1.0 */
    tu_row_block(&r, 16, 4, 0, 127, 127);
    tu_row_block(&r, 24, 4, 0, 127, 127);
    a4w4_dot_operands op = {r.a, r.as, r.w, r.ws, 1024};
    uint16_t q[A4W4_ATOMIC_SPLIT_MAX], res[720];
    cr_assert_eq(a4w4_dot_atomic_splits(&op, 4, q), 4u);
    cr_expect_eq(q[0], BF16_256);
    cr_expect_eq(q[1], BF16_1);
    cr_expect_eq(q[3], BF16_1);
    cr_expect_eq(a4w4_atomic_fold(q, NULL, 4), BF16_256, "split order");
    cr_expect_eq(a4w4_atomic_results(q, 4, res), 2u);
    cr_expect(a4w4_atomic_member(q, 4, BF16_256));
    cr_expect(a4w4_atomic_member(q, 4, BF16_260));
    cr_expect(!a4w4_atomic_member(q, 4, BF16_258));
    cr_expect(!a4w4_atomic_member(q, 4, 0x0000));
    cr_expect(!a4w4_atomic_member(q, 4, 0x7FC0));
    cr_expect_eq(a4w4_f32_to_bf16(a4w4_dot_ordered(&op, 4)), BF16_260, "ordered(4)");
    /* at S = 2 the splits are 256 + 1 (one fp32 total: 257, ties to 256) and 1 + 1 = 2:
     * 256 + 2 = 258 in either order */
    cr_expect_eq(a4w4_dot_atomic_splits(&op, 2, q), 2u);
    cr_expect_eq(a4w4_atomic_results(q, 2, res), 1u);
    cr_expect_eq(res[0], BF16_258);
}

/* The zeroed output is +0: a split value -0 (a negative total below bf16's range) adds to +0,
 * where ordered(1) keeps the -0 (contracts §4.1, the sign of a zero output). A NaN scale
 * makes every order NaN. */
Test(atomic_set, zero_sign_and_nan)
{
    tu_row r;
    tu_row_init(&r);
    tu_row_block(&r, 3, 1, 1, 60, 60); /* -2^-136 */
    a4w4_dot_operands op = {r.a, r.as, r.w, r.ws, 1024};
    uint16_t q[A4W4_ATOMIC_SPLIT_MAX];
    cr_assert_eq(a4w4_dot_atomic_splits(&op, 1, q), 1u);
    cr_expect_eq(q[0], 0x8000, "the split value is -0");
    cr_expect_eq(a4w4_f32_to_bf16(a4w4_dot_ordered(&op, 1)), 0x8000, "ordered(1): -0");
    cr_expect(a4w4_atomic_member(q, 1, 0x0000));
    cr_expect(!a4w4_atomic_member(q, 1, 0x8000), "-0 is no atomic result");
    cr_expect_eq(a4w4_atomic_add(0x0000, 0x8000), 0x0000);
    r.ws[20] = 0xFF;
    cr_assert_eq(a4w4_dot_atomic_splits(&op, 4, q), 4u);
    for (unsigned j = 0; j < 4; j++)
        cr_expect(a4w4_bf16_is_nan(q[j]));
    cr_expect(a4w4_atomic_member(q, 4, 0xFFC1), "any NaN");
    cr_expect(!a4w4_atomic_member(q, 4, 0x7F80));
}

/* ---- strength: mutants over generated operands ----------------------------------------- */
#define SM 8
#define SN 32
#define SK 1024
typedef struct {
    uint8_t a[SM * SK / 2], as[SM * SK / 32], w[SN * SK / 2], ws[SN * SK / 32];
} operands;

/* Random codes; scales around 127 (normal) or with sa + sb in 108..132 (tiny regime). */
static void generate(operands *o, uint64_t seed, int tiny)
{
    tu_rng rng = {seed};
    for (size_t i = 0; i < sizeof o->a; i++)
        o->a[i] = (uint8_t)tu_splitmix64(&rng);
    for (size_t i = 0; i < sizeof o->w; i++)
        o->w[i] = (uint8_t)tu_splitmix64(&rng);
    for (size_t i = 0; i < sizeof o->as; i++)
        o->as[i] = (uint8_t)((tiny ? 54 : 120) + tu_splitmix64_below(&rng, tiny ? 12 : 14));
    for (size_t i = 0; i < sizeof o->ws; i++)
        o->ws[i] = (uint8_t)((tiny ? 54 : 120) + tu_splitmix64_below(&rng, tiny ? 12 : 14));
}

/* The fp32 total of split [k0, k1) of op: ordered(1) on that range. */
static float split_total(const a4w4_dot_operands *op, size_t k0, size_t k1)
{
    a4w4_dot_operands p = {op->a_fp4 + k0 / 2, op->a_scale + k0 / 32, op->w_fp4 + k0 / 2,
                           op->w_scale + k0 / 32, k1 - k0};
    return a4w4_dot_ordered(&p, 1);
}

/* bf16 of x by truncation (RZ). */
static uint16_t bf16_rz(float x)
{
    return (uint16_t)(a4w4_f32_bits(x) >> 16);
}

enum { FIXED_REVERSE, RZ_SPLIT, DROP_LAST, FP32_ONCE, ZEROS, NKINDS };

/* Outputs of each mutant kind that are in no order's result, at S = 4. */
static void count_outside(const operands *o, size_t out[NKINDS], size_t *nonzero)
{
    memset(out, 0, NKINDS * sizeof *out);
    *nonzero = 0;
    const size_t per = a4w4_split_k_per_split(SK, 4);
    for (size_t m = 0; m < SM; m++)
        for (size_t n = 0; n < SN; n++) {
            a4w4_dot_operands op = {o->a + m * SK / 2, o->as + m * SK / 32,
                                    o->w + n * SK / 2, o->ws + n * SK / 32, SK};
            uint16_t q[A4W4_ATOMIC_SPLIT_MAX], qrz[4];
            const unsigned ns = a4w4_dot_atomic_splits(&op, 4, q);
            cr_assert_eq(ns, 4u);
            float p[4], f = 0.0f;
            for (unsigned s = 0; s < 4; s++) {
                p[s] = split_total(&op, s * per, (s + 1) * per);
                qrz[s] = bf16_rz(p[s]);
                f += p[s];
            }
            const unsigned rev[4] = {3, 2, 1, 0};
            const uint16_t got[NKINDS] = {a4w4_atomic_fold(q, rev, 4), a4w4_atomic_fold(qrz, NULL, 4),
                                          a4w4_atomic_fold(q, NULL, 3), a4w4_f32_to_bf16(f), 0};
            for (int k = 0; k < NKINDS; k++)
                out[k] += !a4w4_atomic_member(q, 4, got[k]);
            *nonzero += (a4w4_atomic_fold(q, NULL, 4) & 0x7FFF) != 0;
        }
}

static void expect_strength(int tiny)
{
    size_t out[NKINDS], nonzero;
    count_outside(&(operands){0}, out, &nonzero); /* all zeros: every kind gives +0 */
    cr_expect_eq(out[FIXED_REVERSE] + out[RZ_SPLIT] + out[DROP_LAST] + out[FP32_ONCE], 0);
    static operands o;
    generate(&o, tiny ? 0x7A11ull : 0xA70Bull, tiny);
    count_outside(&o, out, &nonzero);
    cr_expect_gt(nonzero, SM * SN / 2, "most outputs nonzero (%zu)", nonzero);
    cr_expect_eq(out[FIXED_REVERSE], 0, "one fixed order is in the set");
    cr_expect_gt(out[RZ_SPLIT], 0, "a split total rounded toward zero");
    cr_expect_gt(out[DROP_LAST], SM * SN / 2, "a split dropped (%zu)", out[DROP_LAST]);
    cr_expect_gt(out[FP32_ONCE], 0, "the split totals added in fp32, rounded once");
    cr_expect_eq(out[ZEROS], nonzero, "zeros fail on every nonzero output");
}

Test(atomic_strength, normal_regime) { expect_strength(0); }
Test(atomic_strength, tiny_regime) { expect_strength(1); }

/* The whole-matrix form holds each output's split values. */
Test(atomic_gemm, matches_the_per_output_form)
{
    static operands o;
    generate(&o, 0x5E7ull, 0);
    static uint16_t q[SM * SN * 6];
    unsigned n = 0;
    cr_assert_eq(a4w4_gemm_atomic_splits(o.a, o.as, o.w, o.ws, SM, SN, SK, 6, q, &n), A4W4_OK);
    cr_expect_eq(n, 4u, "K=1024 at S=6: parts of 256, four of them");
    for (size_t m = 0; m < SM; m++)
        for (size_t j = 0; j < SN; j++) {
            a4w4_dot_operands op = {o.a + m * SK / 2, o.as + m * SK / 32, o.w + j * SK / 2,
                                    o.ws + j * SK / 32, SK};
            uint16_t one[6] = {0};
            a4w4_dot_atomic_splits(&op, 6, one);
            cr_expect(!memcmp(one, q + (m * SN + j) * 6, sizeof one));
        }
    cr_expect_eq(a4w4_gemm_atomic_splits(o.a, o.as, o.w, o.ws, SM, SN, SK, 7, q, &n),
                 A4W4_EINVAL);
}
