/* test_discover.c — the discover engine (harness/discover/discover*.c, contracts §4.4).
 *
 * The ordered tree over blocks: every family structure's gap data builds a valid tree and
 * parses back to a structure with the same tree. End to end: a backend that computes the
 * plain tree oracle (ref/a4w4_tree.h) for a known contract is discovered as that contract
 * (canonical text equal), for orders, fuses, reductions, splits, combines, leaves, rounding
 * modes, accumulator formats and precisions; a backend that switches between two orders at
 * random is found nondeterministic and answered bounded(S) with its S; a backend outside the
 * family (block values rounded to bf16 before adding) gets no contract. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "a4w4_contract.h"
#include "a4w4_tree.h"
#include "discover.h"
#include "discover_setup.h"
#include "discover_internal.h"
#include "test_util.h"

/* ---- the ordered tree and the family parse ------------------------------------------------ */

static void random_family(tu_rng *r, size_t n, dc_family *f)
{
    memset(f, 0, sizeof *f);
    f->order = (a4w4_tree_order)tu_splitmix64_below(r, 2);
    f->reduce = (a4w4_tree_reduce)tu_splitmix64_below(r, 2);
    f->combine = (a4w4_tree_reduce)tu_splitmix64_below(r, 2);
    f->fuse = 1 + tu_splitmix64_below(r, 5);
    f->nsplits = 1;
    for (size_t b = 1; b < n; b++)
        if (tu_splitmix64_below(r, 9) == 0 && f->nsplits < 8)
            f->start[f->nsplits++] = (uint32_t)b;
}

Test(discover_tree, every_family_tree_builds_and_parses_back_to_the_same_tree)
{
    tu_rng r = {0xD15C0u};
    for (int iter = 0; iter < 300; iter++) {
        size_t n = 2 + tu_splitmix64_below(&r, 40);
        dc_family f, got[16];
        random_family(&r, n, &f);
        dc_gaps g, h;
        cr_assert_eq(dc_gaps_init(&g, n), 0);
        cr_assert_eq(dc_gaps_init(&h, n), 0);
        cr_assert_eq(dc_family_gaps(&f, n, &g), 0);
        dc_tree t;
        char err[256] = "";
        cr_assert_eq(dc_tree_build(&g, &t, err, sizeof err), 0, "n=%zu: %s", n, err);
        cr_assert_eq(t.nodes[t.root].lo, 0);
        cr_assert_eq(t.nodes[t.root].hi, n);
        int k = dc_family_parse(&g, got, 16);
        cr_assert_gt(k, 0, "n=%zu fuse=%u order=%d reduce=%d combine=%d splits=%zu parses as "
                     "no family", n, f.fuse, f.order, f.reduce, f.combine, f.nsplits);
        /* the first (simplest) spelling has the same tree, and no more splits */
        cr_assert_eq(dc_family_gaps(&got[0], n, &h), 0);
        for (size_t s = 1; s < n; s++)
            cr_assert(g.lo[s] == h.lo[s] && g.hi[s] == h.hi[s], "gap %zu differs", s);
        cr_assert_leq(got[0].nsplits, f.nsplits);
        dc_tree_free(&t);
        dc_gaps_free(&g);
        dc_gaps_free(&h);
    }
}

Test(discover_tree, crossing_intervals_are_no_ordered_tree)
{
    dc_gaps g;
    cr_assert_eq(dc_gaps_init(&g, 4), 0);
    /* gap 1: [0,1)|[1,3); gap 2: [0,2)|[2,4): [1,3) and [0,2) cross */
    g.lo[1] = 0, g.hi[1] = 3, g.lo[2] = 0, g.hi[2] = 4, g.lo[3] = 2, g.hi[3] = 4;
    dc_tree t;
    char err[256] = "";
    cr_assert_neq(dc_tree_build(&g, &t, err, sizeof err), 0);
    cr_assert_neq(err[0], 0);
    dc_gaps_free(&g);
}

Test(discover_tree, lca_of_a_chain_is_the_node_adding_the_later_block)
{
    dc_family f = {A4W4_ORDER_ASC, 1, A4W4_REDUCE_CHAIN, A4W4_REDUCE_CHAIN, 1, {0}};
    dc_gaps g;
    cr_assert_eq(dc_gaps_init(&g, 8), 0);
    cr_assert_eq(dc_family_gaps(&f, 8, &g), 0);
    dc_tree t;
    char err[256];
    cr_assert_eq(dc_tree_build(&g, &t, err, sizeof err), 0);
    int32_t v = dc_tree_lca(&t, 2, 5);
    cr_assert_eq(t.nodes[v].lo, 0);
    cr_assert_eq(t.nodes[v].hi, 6); /* node(acc [0,5), block 5) */
    cr_assert_eq(dc_tree_child_of(&t, v, 2), 0);
    cr_assert_eq(dc_tree_child_of(&t, v, 5), 1);
    dc_tree_free(&t);
    dc_gaps_free(&g);
}

/* ---- a backend computing the tree oracle for a known contract ---------------------------- */

typedef struct {
    a4w4_tree t[2];     /* the contract's tree; mode 1 alternates with the second */
    int mode;           /* 0: t[0]; 1: t[0] or t[1] at random per call; 2: bf16 block values;
                         * 3: t[0], but NaN (0x7FFF) on every output of the validation cases
                         * of the regimes in nan_regimes; 4: t[0], but +0 where it gives NaN */
    uint64_t rng;
    unsigned nan_regimes; /* mode 3: bit r for regime r */
} fake;

/* Block values rounded to bf16 (RNE) before an ascending fp32 chain: outside the family. */
static uint16_t bf16_leaves(const a4w4_dot_operands *op)
{
    float total = 0.0f;
    for (size_t b = 0; b < op->K / 32; b++) {
        if (op->a_scale[b] == 0xFF || op->w_scale[b] == 0xFF)
            return 0x7FC0;
        long dot = 0;
        for (size_t k = b * 32; k < b * 32 + 32; k++)
            dot += a4w4_e2m1_to_int2x(a4w4_fp4_get(op->a_fp4, k)) *
                   a4w4_e2m1_to_int2x(a4w4_fp4_get(op->w_fp4, k));
        float v = (float)ldexp((double)dot, (int)op->a_scale[b] + (int)op->w_scale[b] - 256);
        total += a4w4_bf16_to_f32(a4w4_f32_to_bf16(v));
    }
    return a4w4_f32_to_bf16(total);
}

static int fake_run(void *ctx, const a4w4_run_args *a)
{
    fake *f = ctx;
    const a4w4_case_data *d = a->d;
    const a4w4_tree *t = &f->t[0];
    if (f->mode == 1) {
        f->rng = f->rng * 6364136223846793005ull + 1442695040888963407ull;
        t = &f->t[(f->rng >> 33) & 1];
    }
    for (size_t m = 0; m < d->M; m++)
        for (size_t n = 0; n < d->N; n++) {
            a4w4_dot_operands op = {d->a_fp4.data + m * (d->K / 2), d->a_scale.data + m * (d->K / 32),
                                    d->w_fp4.data + n * (d->K / 2), d->w_scale.data + n * (d->K / 32),
                                    d->K};
            uint16_t *y = &a->y[m * d->N + n];
            if (f->mode == 2)
                *y = bf16_leaves(&op);
            else if (a4w4_dot_tree(&op, t, y, NULL) != A4W4_OK)
                return A4W4_EINVAL;
            if (f->mode == 3 && strstr(a->c->name, "/v/") &&
                (f->nan_regimes >> a->c->regime & 1u))
                *y = 0x7FFF; /* an operand upcast overflowed, say: no order gives it */
            if (f->mode == 4 && (*y & 0x7FFF) > 0x7F80)
                *y = 0; /* a NaN scale ignored */
        }
    return A4W4_OK;
}

static const a4w4_backend_type fake_type = {.name = "fake", .what = "tree oracle",
                                            .contract = "ordered(1)", .thread_safe = 1,
                                            .run = fake_run};

/* Discover f at M x N x K; the result of shape 0 into *r (copied), the contract text into
 * text. Also the defect list of shape 0 into list (may be NULL). */
static void discover_listing(fake *f, size_t M, size_t N, size_t K,
                             a4w4_discover_shape_result *r, char *text, size_t len, char *list,
                             size_t listlen)
{
    a4w4_shape sh = {M, N, K};
    a4w4_discover_opts o = {&sh, 1, NULL, 7, 3, 0, 1, 0, 2, NULL};
    a4w4_discovery *d;
    char err[256];
    cr_assert_eq(a4w4_discover_new(&o, &d, err, sizeof err), A4W4_ST_OK, "%s", err);
    a4w4_backend b;
    memset(&b, 0, sizeof b);
    b.type = &fake_type;
    b.ctx = f;
    snprintf(b.name, sizeof b.name, "fake");
    size_t n;
    for (int round = 0; a4w4_discover_round(d, &n, NULL); round++) {
        cr_assert_lt(round, 8, "more than 8 rounds");
        cr_assert_eq(a4w4_discover_run_round(d, &b, NULL, NULL, NULL, err, sizeof err),
                     A4W4_ST_OK, "%s", err);
    }
    *r = *a4w4_discover_result(d, 0);
    text[0] = 0;
    if (r->verdict != A4W4_DISCOVER_FAILED)
        a4w4_contract_format(&r->contract, text, len);
    if (list)
        snprintf(list, listlen, "%s", a4w4_discover_defects(d, 0));
    a4w4_discover_free(d);
}

static void discover(fake *f, size_t M, size_t N, size_t K, a4w4_discover_shape_result *r,
                     char *text, size_t len)
{
    discover_listing(f, M, N, K, r, text, len, NULL, 0);
}

static void expect_found(const char *contract, size_t M, size_t K)
{
    a4w4_contract want;
    char err[256], got[A4W4_CONTRACT_MAX];
    cr_assert_eq(a4w4_contract_parse(contract, &want, err, sizeof err), A4W4_OK, "%s", err);
    fake f = {{{0}}, 0, 1, 0};
    if (want.kind == A4W4_CONTRACT_ORDERED) {
        a4w4_tree_defaults(&f.t[0]);
        f.t[0].split = want.split;
    } else {
        f.t[0] = want.tree;
    }
    a4w4_discover_shape_result r;
    discover(&f, M, 1, K, &r, got, sizeof got);
    cr_expect_eq(r.verdict, A4W4_DISCOVER_FOUND, "%s at K=%zu: not found (closest %s: %s)",
                 contract, K, got, r.closest_fails);
    if (r.verdict != A4W4_DISCOVER_FOUND)
        return;
    /* the same tree: the canonical texts are equal (ordered(S) written as a tree is ordered(S)) */
    a4w4_contract norm = want;
    if (want.kind == A4W4_CONTRACT_TREE) {
        a4w4_tree d;
        a4w4_tree_defaults(&d);
        d.split = want.tree.split;
        if (!want.tree.nbounds && !memcmp(&d, &want.tree, sizeof d))
            norm = (a4w4_contract){A4W4_CONTRACT_ORDERED, want.tree.split, {0}};
    }
    cr_expect(a4w4_contract_same(&r.contract, &norm), "%s at K=%zu: discovered %s", contract, K,
              got);
    cr_expect(!r.nondeterministic);
}

Test(discover_fake, recovers_block_orders_and_splits)
{
    expect_found("ordered(1)", 32, 512);
    expect_found("ordered(2)", 32, 1024);
    expect_found("tree(order=desc)", 32, 512);
    expect_found("tree(reduce=pairwise)", 32, 640);
    expect_found("tree(fuse=2)", 32, 512);
    expect_found("tree(fuse=3,order=desc)", 32, 512);
    expect_found("tree(combine=pairwise,split=96/160/384)", 32, 512);
}

Test(discover_fake, recovers_splits_with_pairwise_combine_and_desc_order)
{
    expect_found("tree(split=96/160/384,combine=pairwise,order=desc)", 32, 512);
    expect_found("tree(split=160/1056)", 32, 2048);
}

Test(discover_fake, recovers_rounding_modes_and_accumulator_formats)
{
    expect_found("tree(round=rz)", 32, 512);
    expect_found("tree(final=rz)", 32, 512);
    expect_found("tree(acc=bf16)", 32, 512);
    expect_found("tree(acc=bf16,round=rz,order=desc)", 32, 512);
}

Test(discover_fake, recovers_fused_nodes_and_their_precision)
{
    expect_found("tree(fuse=4,prec=27,round=rz)", 32, 512);
    expect_found("tree(fuse=4,prec=40)", 32, 512);
}

Test(discover_fake, recovers_leaves_and_nodes_below_a_block)
{
    expect_found("tree(leaf=16)", 32, 512);
    expect_found("tree(leaf=8,order=desc)", 32, 512);
    expect_found("tree(leaf=1,fuse=16,prec=26,round=rz)", 32, 256);
    expect_found("tree(leaf=4,fuse=4,prec=30,round=rz)", 32, 256);
}

/* Its two orders differ in how four fp32 split totals are combined, which the bf16 output of
 * a random case almost never shows: the nondeterminism is seen on the probes only, and
 * bounded(S) is accepted only for nondeterminism seen on the random validation cases
 * (contracts §4.4; disc-combine-random, which adds bf16 partials, gets bounded(4):
 * tests/cli/discover_gt.sh). */
Test(discover_fake, a_backend_whose_order_changes_where_random_data_cannot_see_gets_no_bound)
{
    fake f = {{{0}}, 1, 12345, 0};
    a4w4_tree_defaults(&f.t[0]);
    a4w4_tree_defaults(&f.t[1]);
    f.t[0].split = f.t[1].split = 4;
    f.t[1].combine = A4W4_REDUCE_PAIRWISE; /* (s0 + s1) + (s2 + s3) against a chain */
    a4w4_discover_shape_result r;
    char got[A4W4_CONTRACT_MAX];
    discover(&f, 32, 1, 1024, &r, got, sizeof got);
    cr_expect(r.nondeterministic);
    cr_expect_eq(r.verdict, A4W4_DISCOVER_NO_FIT, "accepted %s", got);
}

Test(discover_fake, block_values_rounded_to_bf16_fit_no_tree_and_name_the_closest)
{
    fake f = {{{0}}, 2, 1, 0};
    a4w4_tree_defaults(&f.t[0]);
    a4w4_discover_shape_result r;
    char got[A4W4_CONTRACT_MAX];
    discover(&f, 32, 1, 512, &r, got, sizeof got);
    cr_expect_eq(r.verdict, A4W4_DISCOVER_NO_FIT, "found %s", got);
    cr_expect(r.has_closest);
    cr_expect_str_eq(got, "ordered(1)");
    cr_expect(strstr(r.closest_fails, "differ") != NULL, "%s", r.closest_fails);
}

/* ---- defects: outputs no order can give (contracts §4.4 step 7) ---------------------------- */

static unsigned regime_bit(a4w4_regime r) { return 1u << r; }

Test(discover_defects, nan_on_the_wide_and_code0_cases_is_counted_as_defects_and_the_order_kept)
{
    /* what an upcast to bf16 of scaled operands does on a GPU: NaN where the wide and code-0
     * operands overflow, every order giving a finite value there; 2 of 6 regimes */
    fake f = {{{0}}, 3, 1, regime_bit(A4W4_REGIME_WIDE) | regime_bit(A4W4_REGIME_CODE0)};
    a4w4_tree_defaults(&f.t[0]);
    f.t[0].fuse = 2;
    a4w4_discover_shape_result r;
    char got[A4W4_CONTRACT_MAX];
    static char list[1 << 20];
    discover_listing(&f, 32, 8, 512, &r, got, sizeof got, list, sizeof list);
    cr_assert_eq(r.verdict, A4W4_DISCOVER_FOUND, "closest %s: %s", got, r.closest_fails);
    cr_expect_str_eq(got, "tree(leaf=32,order=asc,fuse=2,reduce=chain,prec=0,round=rne,"
                     "acc=fp32,split=1,combine=chain,final=rne)");
    /* 256 outputs checked per case (32 x 8), 3 runs: every output of 2 cases of 6 */
    cr_expect_eq(r.defects, 2u * 256 * 3, "defects %zu", r.defects);
    cr_expect_eq(r.validated, 4u * 256 * 3, "validated %zu", r.validated);
    cr_expect(strstr(r.defect_first, "regime wide") && strstr(r.defect_first, "got 0x7fff") &&
              strstr(r.defect_first, "every order left open gives a finite value"), "%s",
              r.defect_first);
    cr_expect(strstr(list, "regime code0") != NULL, "the list lacks the code0 defects");
}

Test(discover_defects, nan_on_most_validation_outputs_is_no_fit)
{
    /* 4 of 6 regimes NaN: the defects are the majority, no order is accepted beside them */
    fake f = {{{0}}, 3, 1, regime_bit(A4W4_REGIME_WIDE) | regime_bit(A4W4_REGIME_CODE0) |
                           regime_bit(A4W4_REGIME_NORMAL) | regime_bit(A4W4_REGIME_TINY)};
    a4w4_tree_defaults(&f.t[0]);
    a4w4_discover_shape_result r;
    char got[A4W4_CONTRACT_MAX];
    discover(&f, 32, 8, 512, &r, got, sizeof got);
    cr_expect_eq(r.verdict, A4W4_DISCOVER_NO_FIT, "accepted %s", got);
    cr_expect(r.has_closest);
    cr_expect_str_eq(got, "ordered(1)");
    cr_expect(strstr(r.closest_fails, "are defects") != NULL, "%s", r.closest_fails);
}

Test(discover_defects, nan_on_every_validation_output_is_no_fit)
{
    fake f = {{{0}}, 3, 1, 0x3Fu};
    a4w4_tree_defaults(&f.t[0]);
    a4w4_discover_shape_result r;
    char got[A4W4_CONTRACT_MAX];
    discover(&f, 32, 8, 512, &r, got, sizeof got);
    cr_expect_eq(r.verdict, A4W4_DISCOVER_NO_FIT, "accepted %s", got);
    cr_expect_gt(r.defects, 6u * 256 * 3 / 2, "defects %zu", r.defects);
}

Test(discover_defects, an_ignored_nan_scale_is_a_defect_not_an_order)
{
    /* the special regime's 0xFF scales make every order NaN; +0 there is no order's output */
    fake f = {{{0}}, 4, 1, 0};
    a4w4_tree_defaults(&f.t[0]);
    f.t[0].order = A4W4_ORDER_DESC;
    a4w4_discover_shape_result r;
    char got[A4W4_CONTRACT_MAX];
    discover(&f, 32, 8, 512, &r, got, sizeof got);
    cr_assert_eq(r.verdict, A4W4_DISCOVER_FOUND, "closest %s: %s", got, r.closest_fails);
    cr_expect_gt(r.defects, 0u);
    cr_expect(strstr(r.defect_first, "regime special") &&
              strstr(r.defect_first, "every order gives NaN"), "%s", r.defect_first);
}

Test(discover_defects, a_kernel_without_defects_reports_none)
{
    fake f = {{{0}}, 0, 1, 0};
    a4w4_tree_defaults(&f.t[0]);
    a4w4_discover_shape_result r;
    char got[A4W4_CONTRACT_MAX];
    discover(&f, 32, 8, 512, &r, got, sizeof got);
    cr_assert_eq(r.verdict, A4W4_DISCOVER_FOUND);
    cr_expect_eq(r.defects, 0u);
    cr_expect_eq(r.validated, 6u * 256 * 3);
}

/* The shapes of a rule of K (contracts §4.4): per family of N and padded-M bucket three K
 * probed, one with K % 256 != 0 (steps of 256 for the ASM-layout backends), then a larger K
 * and another M of the bucket validated only. */
Test(discover_rules, the_shapes_of_a_rule_of_k)
{
    const a4w4_shape asked[2] = {{32, 8, 1152}, {40, 8, 1024}};
    a4w4_shape *x;
    unsigned char *vo;
    size_t n;
    char err[256];
    cr_assert_eq(a4w4_discover_expand(asked, 2, 32, &x, &n, &vo, err, sizeof err), 0, "%s", err);
    static const struct {
        size_t M, K;
        unsigned char vo;
    } want[] = {/* asked; K/2 + 32, 3K/4 + 96; the largest + 160; M + 1 (same bucket) at the
                 * probed K's midpoint + 64, down to a multiple of 32 */
                {32, 1152, 0}, {40, 1024, 0}, {32, 608, 0}, {32, 960, 0}, {32, 1312, 1},
                {31, 928, 1},  {40, 544, 0},  {40, 864, 0}, {40, 1184, 1}, {41, 832, 1}};
    cr_assert_eq(n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < n; i++) {
        cr_expect(x[i].M == want[i].M && x[i].N == 8 && x[i].K == want[i].K && vo[i] == want[i].vo,
                  "shape %zu: %zux%zux%zu vo %d, expected %zux8x%zu vo %d", i, x[i].M, x[i].N,
                  x[i].K, vo[i], want[i].M, want[i].K, want[i].vo);
    }
    free(x);
    free(vo);
    cr_assert_eq(a4w4_discover_expand(asked, 1, 256, &x, &n, &vo, err, sizeof err), 0, "%s", err);
    for (size_t i = 0; i < n; i++)
        cr_expect_eq(x[i].K % 256, i == 0 ? 1152 % 256 : 0, "K %zu", x[i].K);
    free(x);
    free(vo);
    a4w4_shape many[26];
    for (size_t i = 0; i < 26; i++)
        many[i] = (a4w4_shape){1, 16 * (i + 1), 512};
    cr_expect_eq(a4w4_discover_expand(many, 26, 32, &x, &n, &vo, err, sizeof err), -1);
    cr_expect(strstr(err, "26 families"), "%s", err);
}

/* The rules of M (contracts §4.4): every padded-M bucket strictly between two requested
 * buckets of one N is checked (validate_only 2), at its largest M and the lower bucket's K;
 * past A4W4_DISCOVER_MAX_CHECKS between one pair, that many evenly spaced. */
Test(discover_rules, the_buckets_of_the_rules_of_m)
{
    const a4w4_shape asked[3] = {{8, 16, 1152}, {200, 16, 960}, {40, 32, 512}};
    a4w4_shape *x;
    unsigned char *vo;
    size_t n, checks = 0;
    char err[256];
    cr_assert_eq(a4w4_discover_expand(asked, 3, 32, &x, &n, &vo, err, sizeof err), 0, "%s", err);
    for (size_t i = 0; i < n; i++) {
        if (vo[i] != 2)
            continue;
        /* Mpad 32, 48, ..., 192 between 16 and 208; none for N 32 (one bucket) */
        cr_expect(x[i].M == 32 + 16 * checks && x[i].N == 16 && x[i].K == 1152,
                  "check %zu: %zux%zux%zu", checks, x[i].M, x[i].N, x[i].K);
        checks++;
    }
    cr_expect_eq(checks, 11);
    free(x);
    free(vo);
    const a4w4_shape far[2] = {{8, 16, 512}, {1100, 16, 512}}; /* Mpad 16 and 1152: 40 between */
    cr_assert_eq(a4w4_discover_expand(far, 2, 32, &x, &n, &vo, err, sizeof err), 0, "%s", err);
    size_t first = 0, last = 0;
    checks = 0;
    for (size_t i = 0; i < n; i++)
        if (vo[i] == 2) {
            first = checks++ ? first : x[i].M;
            last = x[i].M;
        }
    cr_expect_eq(checks, A4W4_DISCOVER_MAX_CHECKS);
    cr_expect(first == 32 && last == 1024, "checked Mpad %zu .. %zu", first, last);
    free(x);
    free(vo);
}
