/* test_discover_fprev.c — FPRev's rebuild (contracts §4.4 "Any tree: FPRev's pairwise
 * probes"): from pair counts n - |LCA(i, j)| worked out by hand for a chain, a balanced tree
 * and a butterfly's lanes, discover_fprev.c rebuilds the tree as tree(sum=...); counts no
 * binary tree gives (a node of three inputs, a count that is no integer) leave none and say
 * why. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_tree.h"
#include "discover_internal.h"

/* A shape of n blocks whose pair probes read out[i][j] (i < j). */
static void shape_with(dc_shape *s, size_t n, const float *out)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    s->sh.M = 8;
    s->sh.N = 8;
    s->sh.K = 32 * n;
    s->probes = calloc(n * n, sizeof *s->probes);
    s->value = calloc(n * n, sizeof *s->value);
    cr_assert(s->probes && s->value);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            s->probes[s->nprobes] = (dc_probe){DC_FPREV_PAIR, {(int32_t)i, (int32_t)j}};
            s->value[s->nprobes++] = out[i * n + j];
        }
}

static void shape_free(dc_shape *s)
{
    free(s->probes);
    free(s->value);
    dc_text_free(&s->ev);
}

static void expect_tree(size_t n, const float *out, const char *want)
{
    dc_shape s;
    shape_with(&s, n, out);
    dc_fprev_read(&s);
    cr_assert(s.have_fprev, "no tree: %s", s.ev.s ? s.ev.s : "");
    char text[A4W4_CONTRACT_MAX];
    cr_assert_geq(a4w4_contract_format(&s.fprev, text, sizeof text), 0);
    cr_expect_str_eq(text, want);
    shape_free(&s);
}

Test(fprev, a_chain_and_a_balanced_tree_are_rebuilt_from_their_pair_counts)
{
    /* chain over 4 blocks: blocks i < j meet at the node adding j, j + 1 blocks: 3 - j */
    float chain[16] = {0};
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            chain[i * 4 + j] = (float)(3 - j);
    expect_tree(4, chain, "tree(prec=0,round=rne,acc=fp32,final=rne,sum=(((0,1),2),3))");
    /* ((0,1),(2,3)): pairs inside a half meet in 2 blocks (2 survive), across in 4 (0) */
    float bal[16] = {0};
    bal[0 * 4 + 1] = bal[2 * 4 + 3] = 2;
    expect_tree(4, bal, "tree(prec=0,round=rne,acc=fp32,final=rne,sum=((0,1),(2,3)))");
    /* 8 lanes of one block each at K = 256, xor-shuffled: ((0,4),(2,6)),((1,5),(3,7)) */
    float bf[64];
    for (int i = 0; i < 8; i++)
        for (int j = i + 1; j < 8; j++) {
            /* lanes meet at the step of the lowest bit they differ in (^4, then ^2, then ^1) */
            int x = i ^ j, lca = x & 1 ? 8 : x & 2 ? 4 : 2;
            bf[i * 8 + j] = (float)(8 - lca);
        }
    expect_tree(8, bf, "tree(prec=0,round=rne,acc=fp32,final=rne,sum=(((0,4),(2,6)),((1,5),"
                       "(3,7))))");
}

Test(fprev, counts_no_binary_tree_gives_leave_none_and_say_why)
{
    static const struct {
        size_t n;
        float out[9];
        const char *why;
    } bad[] = {
        /* one node of three inputs: every pair reads 3 - 1 - 1 = 1 */
        {3, {0, 1, 1, 0, 0, 1, 0, 0, 0}, "no block meets 0 at the root"},
        {3, {0, 1, 0.5f, 0, 0, 0, 0, 0, 0}, "not a count"},
        {3, {0, 0, 1, 0, 0, 1, 0, 0, 0}, "LCA of"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        dc_shape s;
        shape_with(&s, bad[k].n, bad[k].out);
        dc_fprev_read(&s);
        cr_expect(!s.have_fprev, "case %zu: a tree was rebuilt", k);
        cr_expect(s.ev.s && strstr(s.ev.s, "no binary tree") && strstr(s.ev.s, bad[k].why),
                  "case %zu: %s", k, s.ev.s ? s.ev.s : "");
        shape_free(&s);
    }
}

/* Past the general form's limit (n > 256 blocks, K > 8192) FPRev's probes are not planned, and
 * the evidence says so (before: nothing said, and the butterfly at K = 8224 read as lanes=2). */
Test(fprev, more_than_256_blocks_plan_no_pairs_and_say_so)
{
    dc_shape s;
    memset(&s, 0, sizeof s);
    s.n = A4W4_SUMTREE_MAX_BLOCKS + 1;
    s.sh.M = 1;
    s.sh.N = 8;
    s.sh.K = 32 * s.n;
    cr_assert_eq(dc_fprev_start(&s, 0, NULL), 0);
    cr_expect_eq(s.nprobes, 0);
    cr_assert(s.ev.s && strstr(s.ev.s, "FPRev's pairwise probes are not run: they take at most "
                                       "256 blocks (K <= 8192, the general form's limit), this "
                                       "shape has 257"),
              "evidence: %s", s.ev.s ? s.ev.s : "(none)");
    shape_free(&s);
}
