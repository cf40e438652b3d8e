/* test_sumtree.c — the general form of a tree contract, tree(...,sum=(...)) (contracts §4.2
 * "The general form"): its parser's refusals, its canonical text, hand-derived outputs of the
 * plain oracle, and its spelling of ordered(2), pairwise and lanes=2 held bit-equal to those
 * keys on every generated regime. The spellings are built here from §4.2's rules, not by the
 * code under test. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_gemm.h"
#include "a4w4_contract.h"
#include "a4w4_tree.h"
#include "gen.h"
#include "test_util.h"

static a4w4_contract parse_ok(const char *text)
{
    a4w4_contract c;
    char err[512] = "";
    cr_assert_eq(a4w4_contract_parse(text, &c, err, sizeof err), A4W4_OK, "%s: %s", text, err);
    cr_assert_eq(c.kind, A4W4_CONTRACT_TREE);
    return c;
}

Test(sumtree_parse, prints_one_canonical_text_that_parses_back)
{
    static const struct {
        const char *text, *canonical;
    } cases[] = {
        {"tree(sum=((0,1),(2,3)))", "tree(prec=0,round=rne,acc=fp32,final=rne,sum=((0,1),(2,3)))"},
        {"tree(final=rz,sum=(0),acc=bf16)", "tree(prec=0,round=rne,acc=bf16,final=rz,sum=(0))"},
        {"tree(sum=(((2)),1,(0,3)),prec=16,lround=rz,round=rz)",
         "tree(prec=16,round=rz,acc=fp32,final=rne,lround=rz,sum=(((2)),1,(0,3)))"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        a4w4_contract c = parse_ok(cases[i].text);
        char buf[A4W4_CONTRACT_MAX];
        cr_assert_geq(a4w4_contract_format(&c, buf, sizeof buf), 0);
        cr_expect_str_eq(buf, cases[i].canonical);
        a4w4_contract back = parse_ok(buf);
        cr_expect(a4w4_contract_same(&c, &back));
    }
}

Test(sumtree_parse, refuses_each_rule_with_one_line_naming_it)
{
    static const struct {
        const char *text, *names;
    } bad[] = {
        {"tree(sum=(0,0))", "block 0 appears twice"},
        {"tree(sum=(0,2))", "block 1 is missing"},
        {"tree(sum=(0,256))", "past the 256 blocks"},
        {"tree(sum=())", "block index"},
        {"tree(sum=(0,,1))", "block index"},
        {"tree(sum=(01,1))", "leading zero"},
        {"tree(sum=((0,1)2))", "','-separated"},
        {"tree(sum=(0,1)2)", "text after the root"},
        {"tree(sum=(0,1),(2))", "nothing after ')'"},
        {"tree(sum=0)", "the value is one node"},
        {"tree(sum=(0,1)", "nothing after ')'"},
        {"tree(sum=(0,1)))", "nothing after ')'"},
        {"tree(sum=(0,1),split=2)", "key split does not go with sum"},
        {"tree(lanes=2,sum=(0,1))", "key lanes does not go with sum"},
        {"tree(sum=(0,1),sum=(0,1))", "given twice"},
        {"tree(sum=(0, 1))", "whitespace"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        a4w4_contract c;
        char err[512] = "";
        cr_assert_eq(a4w4_contract_parse(bad[i].text, &c, err, sizeof err), A4W4_EINVAL,
                     "'%s' accepted", bad[i].text);
        cr_expect(strstr(err, bad[i].names), "'%s': '%s' does not name '%s'", bad[i].text, err,
                  bad[i].names);
        cr_expect(!strchr(err, '\n'), "'%s': more than one line", bad[i].text);
    }
}

Test(sumtree_parse, takes_512_nodes_and_refuses_513)
{
    char text[A4W4_CONTRACT_MAX], err[512];
    for (int nodes = 512; nodes <= 513; nodes++) { /* unary nodes around blocks 0 and 1 */
        size_t o = (size_t)snprintf(text, sizeof text, "tree(sum=(");
        for (int i = 1; i < nodes; i++)
            text[o++] = '(';
        o += (size_t)snprintf(text + o, sizeof text - o, "0");
        for (int i = 1; i < nodes; i++)
            text[o++] = ')';
        snprintf(text + o, sizeof text - o, ",1))");
        a4w4_contract c;
        int rc = a4w4_contract_parse(text, &c, err, sizeof err);
        cr_expect_eq(rc, nodes == 512 ? A4W4_OK : A4W4_EINVAL, "%d nodes: %s", nodes, err);
        if (rc)
            cr_expect(strstr(err, "more than 512 nodes"), "%s", err);
    }
}

Test(sumtree_check, a_sum_tree_applies_to_its_one_k)
{
    a4w4_contract c = parse_ok("tree(sum=((0,1),2))");
    char err[256] = "";
    cr_expect_eq(a4w4_tree_check(&c.tree, 96, err, sizeof err), A4W4_OK, "%s", err);
    cr_expect_eq(a4w4_tree_check(&c.tree, 128, err, sizeof err), A4W4_EINVAL);
    cr_expect(strstr(err, "sum names 3 blocks (K=96), not K=128"), "%s", err);
    uint8_t z[64] = {0}, s[4] = {127, 127, 127, 127};
    uint16_t y;
    cr_expect_eq(a4w4_gemm_tree(z, s, z, s, 1, 1, 128, &c.tree, &y, NULL), A4W4_EINVAL);
}

/* ---- hand-derived outputs: W = 1.0 everywhere, block b of A one element 2^e -------------- */

typedef struct {
    uint8_t a[64], as[4], w[64], ws[4];
} three_blocks;

static three_blocks *blocks_new(void)
{
    three_blocks *o = calloc(1, sizeof *o);
    cr_assert(o);
    memset(o->as, 127, sizeof o->as);
    memset(o->w, 0x22, sizeof o->w); /* 1.0 */
    memset(o->ws, 127, sizeof o->ws);
    return o;
}

static uint32_t acc_bits(const three_blocks *o, size_t K, const char *text)
{
    a4w4_contract c = parse_ok(text);
    a4w4_dot_operands op = {o->a, o->as, o->w, o->ws, K};
    float acc = 0;
    cr_assert_eq(a4w4_dot_tree(&op, &c.tree, NULL, &acc), A4W4_OK, "%s", text);
    return a4w4_f32_bits(acc);
}

Test(sumtree_oracle, each_node_sums_exactly_and_rounds_once)
{
    three_blocks *o = blocks_new();
    a4w4_fp4_set(o->a, 0, 2);  /* block 0: 2^24 */
    o->as[0] = 127 + 24;
    a4w4_fp4_set(o->a, 32, 2); /* blocks 1, 2: 1.0 */
    a4w4_fp4_set(o->a, 64, 2);
    /* 2^24 + 1 ties to the even 2^24, twice; 1 + 1 = 2 first gives 2^24 + 2 */
    cr_expect_eq(acc_bits(o, 96, "tree(sum=((0,1),2))"), 0x4B800000u);
    cr_expect_eq(acc_bits(o, 96, "tree(sum=(0,(1,2)))"), 0x4B800001u);
    cr_expect_eq(acc_bits(o, 96, "tree(sum=(0,1,2))"), 0x4B800001u);
    cr_expect_eq(acc_bits(o, 96, "tree(sum=((2,0),1))"), 0x4B800000u);
    /* RZ: 2^24 + 1 truncates to 2^24, then 2^24 + 1 again */
    cr_expect_eq(acc_bits(o, 96, "tree(round=rz,sum=((0,1),2))"), 0x4B800000u);
    free(o);
}

Test(sumtree_oracle, the_root_takes_a_plus_zero_start)
{
    three_blocks *o = blocks_new();
    /* blocks 0 and 1: -0.5 * 2^-127 * 2^-127 rounds to -0 in fp32 (rule 2) */
    for (int b = 0; b < 2; b++) {
        a4w4_fp4_set(o->a, (size_t)b * 32, 0x9);
        o->as[b] = 0;
        o->ws[b] = 0;
    }
    /* node(-0, -0) alone is -0; the root's +0 input makes it +0, as ordered(1)'s chain */
    cr_expect_eq(acc_bits(o, 64, "tree(sum=(0,1))"), 0x00000000u);
    cr_expect_eq(acc_bits(o, 64, "tree(sum=((0,1)))"), 0x00000000u);
    cr_expect_eq(acc_bits(o, 64, "tree()"), 0x00000000u);
    free(o);
}

/* ---- the keys' trees spelled as sum trees, held bit-equal on every regime ----------------- */

typedef struct {
    char s[A4W4_CONTRACT_MAX];
    size_t o;
} text_buf;

static void put(text_buf *t, const char *x)
{
    size_t n = strlen(x);
    cr_assert_lt(t->o + n, sizeof t->s);
    memcpy(t->s + t->o, x, n + 1);
    t->o += n;
}

/* A chain from +0 over blocks first, first + step, ... below end (rule 5, fuse 1): the first
 * node is node(+0, leaf), a node of one input; each later one adds the next leaf. */
static void chain(text_buf *t, size_t first, size_t end, size_t step)
{
    size_t n = (end - first + step - 1) / step;
    char x[32];
    for (size_t i = 0; i < n; i++)
        put(t, "(");
    for (size_t i = 0; i < n; i++) {
        snprintf(x, sizeof x, "%s%zu)", i ? "," : "", first + i * step);
        put(t, x);
    }
}

/* Pairwise over blocks [lo, hi) as rule 5 builds it: each group (fuse 1: one leaf) is a node
 * of its leaf, then perfect trees over the first 2^a1 group values, the next 2^a2, ...,
 * joined right to left (contracts §4.2's stack form). */
static void pairwise(text_buf *t, size_t lo, size_t hi)
{
    size_t n = hi - lo, p = 1;
    char x[16];
    if (n == 1) {
        snprintf(x, sizeof x, "(%zu)", lo);
        put(t, x);
        return;
    }
    while (p * 2 < n)
        p *= 2; /* the first perfect tree: the largest power of two below n (half of n's) */
    put(t, "(");
    pairwise(t, lo, lo + p);
    put(t, ",");
    pairwise(t, lo + p, hi);
    put(t, ")");
}

/* The sum-tree spelling of key, at K with n = K/32 blocks; split0 the first block of the
 * second split of ordered(2) at K. Each chain's first node holds one leaf (node(+0, leaf));
 * the combine's first node holds one split value (node(+0, value)); the root's +0 input
 * stands for no node. */
static void spell(text_buf *t, const char *key, size_t n, size_t split0, const char *keys)
{
    t->o = 0;
    t->s[0] = 0;
    put(t, "tree(");
    put(t, keys);
    put(t, "sum=(");
    if (!strcmp(key, "ordered(2)")) { /* node(node(+0, chain0), chain1) */
        put(t, "(");
        chain(t, 0, split0, 1);
        put(t, "),");
        chain(t, split0, n, 1);
    } else if (!strcmp(key, "pairwise")) { /* node(+0, the split's pairwise value) */
        pairwise(t, 0, n);
    } else if (!strcmp(key, "xor")) { /* lanes=8, lanecomb=xor: node(+0, lane 0 shuffled) */
        static const int order[8] = {0, 4, 2, 6, 1, 5, 3, 7};
        static const char *const sep[8] = {"(((", ",", "),(", ",", ")),((", ",", "),(", ","};
        for (int l = 0; l < 8; l++) { /* (((c0,c4),(c2,c6)),((c1,c5),(c3,c7))) */
            put(t, sep[l]);
            chain(t, (size_t)order[l], n, 8);
        }
        put(t, ")))");
    } else { /* lanes=2: node(+0, node(node(+0, lane 0), lane 1)) */
        put(t, "((");
        chain(t, 0, n, 2);
        put(t, "),");
        chain(t, 1, n, 2);
        put(t, ")");
    }
    put(t, "))");
}

static int nan16(uint16_t b) { return (b & 0x7F80) == 0x7F80 && (b & 0x7F); }

static void expect_same_outputs(const a4w4_case_data *d, const a4w4_case *c, const char *ktext,
                                const char *stext)
{
    a4w4_contract k = parse_ok(ktext), s = parse_ok(stext);
    size_t n = c->M * c->N;
    uint16_t *yk = malloc(n * 2), *ys = malloc(n * 2);
    float *fk = malloc(n * 4), *fs = malloc(n * 4);
    cr_assert(yk && ys && fk && fs);
    cr_assert_eq(a4w4_gemm_contract(&k, d->a_fp4.data, d->a_scale.data, d->w_fp4.data,
                                    d->w_scale.data, c->M, c->N, c->K, yk, fk), A4W4_OK);
    cr_assert_eq(a4w4_gemm_contract(&s, d->a_fp4.data, d->a_scale.data, d->w_fp4.data,
                                    d->w_scale.data, c->M, c->N, c->K, ys, fs), A4W4_OK, "%s",
                 stext);
    for (size_t i = 0; i < n; i++) {
        if (isnan(fk[i]) && isnan(fs[i]) && nan16(yk[i]) && nan16(ys[i]))
            continue; /* NaN meets NaN whatever its sign (contracts §4.2) */
        cr_assert_eq(ys[i], yk[i], "%s K=%zu regime %s output %zu: sum 0x%04x, keys 0x%04x",
                     ktext, c->K, c->regime_text, i, ys[i], yk[i]);
        cr_assert_eq(a4w4_f32_bits(fs[i]), a4w4_f32_bits(fk[i]), "%s K=%zu regime %s output "
                     "%zu: accumulator", ktext, c->K, c->regime_text, i);
    }
    free(yk);
    free(ys);
    free(fk);
    free(fs);
}

/* lanecomb=xor (contracts §4.2 rule 1a): 8 lanes shuffled v[l] + v[l ^ x], x = 4, 2, 1, are
 * the sum tree (((c0,c4),(c2,c6)),((c1,c5),(c3,c7))) at K = 256 and 512, every regime. */
Test(sumtree_keys, lanecomb_xor_is_the_xor_shuffle_of_its_sum_spelling)
{
    static const a4w4_regime regimes[] = {A4W4_REGIME_EXACT, A4W4_REGIME_NORMAL, A4W4_REGIME_WIDE,
                                          A4W4_REGIME_SPECIAL, A4W4_REGIME_CODE0, A4W4_REGIME_TINY,
                                          A4W4_REGIME_RANGE};
    static const char *const variants[] = {"", "acc=bf16,final=rz,", "round=rz,prec=12,"};
    for (size_t r = 0; r < sizeof regimes / sizeof regimes[0]; r++)
        for (size_t K = 256; K <= 512; K += 256) {
            a4w4_case c;
            memset(&c, 0, sizeof c);
            snprintf(c.name, sizeof c.name, "xor_%zu_%zu", r, K);
            c.M = 5;
            c.N = 9;
            c.K = K;
            c.regime = regimes[r];
            c.mode = A4W4_ROUND_UP;
            snprintf(c.regime_text, sizeof c.regime_text, "r%d", (int)regimes[r]);
            c.seed = 91 + r * 3 + K;
            a4w4_sample s;
            a4w4_case_data d;
            cr_assert_eq(a4w4_sample_make(c.M, c.N, c.K, c.seed, c.name, 1, &s), A4W4_OK);
            cr_assert_eq(a4w4_case_generate(&c, &s, &d), A4W4_OK, "generate %s", c.name);
            for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
                char ktext[128];
                text_buf st;
                snprintf(ktext, sizeof ktext, "tree(%slanes=8,lanecomb=xor)", variants[v]);
                spell(&st, "xor", K / 32, 0, variants[v]);
                expect_same_outputs(&d, &c, ktext, st.s);
            }
            a4w4_case_data_free(&d);
            a4w4_sample_free(&s);
        }
}

Test(sumtree_keys, the_sum_spelling_of_ordered_2_pairwise_and_lanes_2_is_bit_identical)
{
    static const a4w4_regime regimes[] = {A4W4_REGIME_EXACT,   A4W4_REGIME_NORMAL,
                                          A4W4_REGIME_WIDE,    A4W4_REGIME_SPECIAL,
                                          A4W4_REGIME_CODE0,   A4W4_REGIME_TINY,
                                          A4W4_REGIME_RANGE};
    /* K = 1024: ordered(2) cuts at 512; K = 1056: at 768 (k_per_split = round_up(528, 256)) */
    static const struct {
        size_t K, split0;
    } ks[] = {{1024, 16}, {1056, 24}};
    static const char *const variants[][2] = {
        {"", ""}, {"round=rz,prec=12,", "round=rz,prec=12,"}, {"acc=bf16,final=rz,", "acc=bf16,final=rz,"}};
    static const char *const keys[] = {"ordered(2)", "pairwise", "lanes=2"};
    static const char *const key_text[] = {"split=2", "reduce=pairwise", "lanes=2"};
    for (size_t r = 0; r < sizeof regimes / sizeof regimes[0]; r++)
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
            a4w4_case c;
            memset(&c, 0, sizeof c);
            snprintf(c.name, sizeof c.name, "sumtree_%zu_%zu", r, ks[ki].K);
            c.M = 5;
            c.N = 9;
            c.K = ks[ki].K;
            c.regime = regimes[r];
            c.mode = A4W4_ROUND_UP;
            snprintf(c.regime_text, sizeof c.regime_text, "r%d", (int)regimes[r]);
            c.seed = 77 + r * 5 + ki;
            a4w4_sample s;
            a4w4_case_data d;
            cr_assert_eq(a4w4_sample_make(c.M, c.N, c.K, c.seed, c.name, 1, &s), A4W4_OK);
            cr_assert_eq(a4w4_case_generate(&c, &s, &d), A4W4_OK, "generate %s", c.name);
            for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++)
                for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
                    char ktext[128];
                    text_buf st;
                    snprintf(ktext, sizeof ktext, "tree(%s%s)", variants[v][0], key_text[k]);
                    spell(&st, keys[k], c.K / 32, ks[ki].split0, variants[v][1]);
                    expect_same_outputs(&d, &c, ktext, st.s);
                }
            a4w4_case_data_free(&d);
            a4w4_sample_free(&s);
        }
}
