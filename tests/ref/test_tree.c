/* test_tree.c — tree contracts (ref/a4w4_tree.h and a4w4_contract.h, contracts §4.2): the strict parser (accept and
 * refuse tables, the key each refusal names), the canonical printer's round trip, contract
 * sets (the file form), hand-computed outputs for every key of the tree (expected values worked
 * out in the comments, never taken from the code under test), ordered(S) == tree(split=S) on
 * every generated regime, and the fast path (ref/a4w4_tree_fast.c) equal to the plain oracle,
 * nodes of finite precision and bf16 accumulators included. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_gemm.h"
#include "a4w4_gemm_fast.h"
#include "a4w4_contract.h"
#include "a4w4_tree.h"
#include "gen.h"
#include "test_util.h"

/* ---- parser ------------------------------------------------------------------------------ */

static const char *const canonical_default = "tree(leaf=32,order=asc,fuse=1,reduce=chain,"
                                             "prec=0,round=rne,acc=fp32,split=1,combine=chain,"
                                             "final=rne)";

/* Accepted texts and their canonical spelling. */
static const struct {
    const char *text, *canonical;
} accepted[] = {
    {"exact", "exact"},
    {"ordered(1)", "ordered(1)"},
    {"ordered(65536)", "ordered(65536)"},
    {"bounded", "bounded(1)"},
    {"bounded(3)", "bounded(3)"},
    {"tree()", "tree(leaf=32,order=asc,fuse=1,reduce=chain,prec=0,round=rne,acc=fp32,split=1,"
               "combine=chain,final=rne)"},
    {"tree(split=3)", "tree(leaf=32,order=asc,fuse=1,reduce=chain,prec=0,round=rne,acc=fp32,"
                      "split=3,combine=chain,final=rne)"},
    {"tree(final=rz,leaf=1,order=desc,fuse=4,reduce=pairwise,prec=27,round=rz,acc=bf16,"
     "split=3,combine=pairwise)",
     "tree(leaf=1,order=desc,fuse=4,reduce=pairwise,prec=27,round=rz,acc=bf16,split=3,"
     "combine=pairwise,final=rz)"},
    {"tree(split=0/256)", "tree(leaf=32,order=asc,fuse=1,reduce=chain,prec=0,round=rne,acc=fp32,"
                          "split=0/256,combine=chain,final=rne)"},
    {"tree(split=256/768)", "tree(leaf=32,order=asc,fuse=1,reduce=chain,prec=0,round=rne,"
                            "acc=fp32,split=0/256/768,combine=chain,final=rne)"},
    {"tree(fuse=4294967295,prec=64,leaf=16)",
     "tree(leaf=16,order=asc,fuse=4294967295,reduce=chain,prec=64,round=rne,acc=fp32,split=1,"
     "combine=chain,final=rne)"},
    {"tree(prec=8,leaf=2)", "tree(leaf=2,order=asc,fuse=1,reduce=chain,prec=8,round=rne,"
                            "acc=fp32,split=1,combine=chain,final=rne)"},
    /* the later keys: written only where they leave ordered(1)'s values */
    {"tree(lanes=1,lround=rne)", NULL},
    {"tree(chunk=1,leaf=1,lanes=2)", "tree(leaf=1,order=asc,fuse=1,reduce=chain,prec=0,round=rne,"
                                     "acc=fp32,split=1,combine=chain,final=rne,lanes=2,chunk=1,"
                                     "lanecomb=chain)"},
    {"tree(lanes=2)", "tree(leaf=32,order=asc,fuse=1,reduce=chain,prec=0,round=rne,acc=fp32,"
                      "split=1,combine=chain,final=rne,lanes=2,chunk=32,lanecomb=chain)"},
    {"tree(chunk=256,lanecomb=pairwise,lanes=4)",
     "tree(leaf=32,order=asc,fuse=1,reduce=chain,prec=0,round=rne,acc=fp32,split=1,"
     "combine=chain,final=rne,lanes=4,chunk=256,lanecomb=pairwise)"},
    {"tree(leaf=64)", "tree(leaf=64,order=asc,fuse=1,reduce=chain,prec=0,round=rne,acc=fp32,"
                      "split=1,combine=chain,final=rne)"},
    {"tree(lround=rz,leaf=128)", "tree(leaf=128,order=asc,fuse=1,reduce=chain,prec=0,round=rne,"
                                 "acc=fp32,split=1,combine=chain,final=rne,lround=rz)"},
    {"tree(tile=256)", "tree(leaf=32,order=asc,fuse=1,reduce=chain,prec=0,round=rne,acc=fp32,"
                       "split=1,combine=chain,final=rne,tile=256)"},
    {"tree(leaf=64,lanes=8,chunk=128,tile=1024)",
     "tree(leaf=64,order=asc,fuse=1,reduce=chain,prec=0,round=rne,acc=fp32,split=1,"
     "combine=chain,final=rne,lanes=8,chunk=128,lanecomb=chain,tile=1024)"},
    {"tree(align=64,split=3)", "tree(leaf=32,order=asc,fuse=1,reduce=chain,prec=0,round=rne,"
                               "acc=fp32,split=3,combine=chain,final=rne,align=64)"},
    {"tree(split=3,align=256)", "tree(leaf=32,order=asc,fuse=1,reduce=chain,prec=0,round=rne,"
                                "acc=fp32,split=3,combine=chain,final=rne)"},
};

/* Refused texts and a word the one-line error must name (the key or the rule). */
static const struct {
    const char *text, *names;
} refused[] = {
    {"", "not one of"},
    {"Exact", "not one of"},
    {" exact", "not one of"},
    {"exact ", "not one of"},
    {"ordered", "not one of"},
    {"ordered(-1)", "ordered(S)"},
    {"ordered(1)junk", "ordered(S)"},
    {"ordered(0)", "ordered(S)"},
    {"bounded( 2)", "bounded(S)"},
    {"ordered(01)", "ordered(S)"},
    {"ordered(65537)", "ordered(S)"},
    {"ordered()", "ordered(S)"},
    {"ordered(1", "ordered(S)"},
    {"ordered(18446744073709551617)", "ordered(S)"},
    {"ordered(1)\n", "control byte"},
    {"ex\xe2\x80\x8b" "act", "contract 'ex\\xe2\\x80\\x8bact': a non-ASCII byte \\xe2 at offset 2"},
    {"\xef\xbb\xbf" "exact", "'\\xef\\xbb\\xbfexact': a non-ASCII byte \\xef at offset 0 (contract "
                           "text is ASCII; a UTF-8 byte-order mark?)"},
    {"tree(\xe2\x80\x8b" "leaf=16)", "'tree(\\xe2\\x80\\x8bleaf=16)': a non-ASCII byte"},
    {"tree", "not one of"},
    {"tree(", "tree(key=value"},
    {"tree(leaf=16)x", "tree(key=value"},
    {"tree((leaf=16))", "tree(key=value"},
    {"tree(leaf=16) ", "tree(key=value"},
    {"tree(leaf= 16)", "whitespace"},
    {"tree(leaf=16, fuse=2)", "whitespace"},
    {"tree(leaf=3)", "leaf=3: leaf is one of"},
    {"tree(leaf=256)", "leaf=256: leaf is"},
    {"tree(leaf=96)", "leaf=96: leaf is"},
    {"tree(lround=rd)", "lround=rd: lround is rne or rz"},
    {"tree(lanes=0)", "lanes=0: lanes is"},
    {"tree(lanes=65537)", "lanes=65537: lanes is"},
    {"tree(chunk=64)", "chunk and lanecomb need lanes > 1"},
    {"tree(lanecomb=pairwise)", "chunk and lanecomb need lanes > 1"},
    {"tree(lanes=2,chunk=48)", "chunk=48: chunk is"},
    {"tree(lanes=2,chunk=0)", "chunk=0: chunk is"},
    {"tree(lanes=2,leaf=128,chunk=64)", "chunk=64: chunk is a positive multiple of 32, or"},
    {"tree(lanes=2,chunk=1)", "chunk=1: chunk is a positive multiple of 32, or"},
    {"tree(leaf=2,lanes=2,chunk=1)", "chunk=1: chunk is"},
    {"tree(leaf=1,lanes=2,chunk=3)", "chunk=3: chunk is"},
    {"tree(leaf=1,chunk=1)", "chunk and lanecomb need lanes > 1"},
    {"tree(lanes=2,lanecomb=tree)", "lanecomb=tree: lanecomb is chain, pairwise or xor"},
    {"tree(lanes=6,lanecomb=xor)", "lanes a power of two"},
    {"tree(tile=100)", "tile=100: tile is"},
    {"tree(tile=0)", "tile=0: tile is"},
    {"tree(tile=256,split=2)", "tile=256: tile is a positive multiple of 32 and replaces split"},
    {"tree(tile=256,split=0/512)", "replaces split"},
    {"tree(split=3,align=48)", "align=48: align is a positive multiple of 32"},
    {"tree(split=3,align=0)", "align=0: align is a positive multiple of 32"},
    {"tree(split=3,align=064)", "align=064: align is"},
    {"tree(align=64)", "align=64: align rounds the parts of split=S, S >= 2"},
    {"tree(split=0/512,align=64)", "align=64: align rounds the parts of split=S"},
    {"tree(tile=256,align=64)", "align=64: align rounds the parts of split=S"},
    {"tree(sum=((0,1)),align=64)", "key align does not go with sum"},
    {"tree(leaf=0)", "leaf=0: leaf is"},
    {"tree(leaf=016)", "leaf=016: leaf is"},
    {"tree(leaf=+16)", "leaf=+16: leaf is"},
    {"tree(leaf=1e1)", "leaf=1e1: leaf is"},
    {"tree(leaf=16,leaf=16)", "leaf given twice"},
    {"tree(foo=1)", "unknown key 'foo'"},
    {"tree(leaf)", "leaf has no '=value'"},
    {"tree(leaf=)", "leaf=: leaf is"},
    {"tree(,leaf=16)", "empty item"},
    {"tree(leaf=16,)", "empty item"},
    {"tree(fuse=0)", "fuse=0: fuse is"},
    {"tree(fuse=4294967296)", "fuse=4294967296: fuse is"},
    {"tree(fuse=-1)", "fuse=-1: fuse is"},
    {"tree(fuse=99999999999999999999999)", "fuse="},
    {"tree(prec=7)", "prec=7: prec is 0 or 8..64"},
    {"tree(prec=65)", "prec=65: prec is"},
    {"tree(prec=00)", "prec=00: prec is"},
    {"tree(order=up)", "order=up: order is asc or desc"},
    {"tree(reduce=tree)", "reduce=tree: reduce is chain or pairwise"},
    {"tree(combine=chains)", "combine=chains: combine is"},
    {"tree(round=rd)", "round=rd: round is rne or rz"},
    {"tree(final=rnd)", "final=rnd: final is rne or rz"},
    {"tree(acc=fp16)", "acc=fp16: acc is fp32 or bf16"},
    {"tree(split=0)", "split=0: split is S"},
    {"tree(split=65537)", "split=65537: split is S"},
    {"tree(split=0/0)", "split=0/0: split boundaries"},
    {"tree(split=256/256)", "split=256/256: split boundaries"},
    {"tree(split=512/256)", "split=512/256: split boundaries"},
    {"tree(split=100/200)", "split=100/200: split boundaries"},
    {"tree(split=0/)", "split=0/: split boundaries"},
    {"tree(split=/256)", "split=/256: split boundaries"},
    {"tree(split=256//512)", "split=256//512: split boundaries"},
    {"tree(split=4294967296/4294967328)", "split boundaries"},
};

Test(tree_parse, accepts_every_form_and_prints_its_canonical_text)
{
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
        a4w4_contract c;
        char err[256] = "", out[A4W4_CONTRACT_MAX];
        cr_assert_eq(a4w4_contract_parse(accepted[i].text, &c, err, sizeof err), A4W4_OK,
                     "'%s' refused: %s", accepted[i].text, err);
        cr_assert_geq(a4w4_contract_format(&c, out, sizeof out), 0);
        cr_expect_str_eq(out, accepted[i].canonical ? accepted[i].canonical : canonical_default,
                         "'%s'", accepted[i].text);
        /* round trip: the canonical text parses to the same contract and prints the same */
        a4w4_contract c2;
        char out2[A4W4_CONTRACT_MAX];
        cr_assert_eq(a4w4_contract_parse(out, &c2, err, sizeof err), A4W4_OK, "%s: %s", out, err);
        cr_assert_geq(a4w4_contract_format(&c2, out2, sizeof out2), 0);
        cr_expect_str_eq(out2, out);
        cr_expect(a4w4_contract_same(&c, &c2));
    }
}

Test(tree_parse, refuses_bad_text_with_one_line_naming_the_key_and_rule)
{
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        a4w4_contract c;
        memset(&c, 0x5A, sizeof c);
        a4w4_contract before = c;
        char err[512] = "";
        cr_assert_eq(a4w4_contract_parse(refused[i].text, &c, err, sizeof err), A4W4_EINVAL,
                     "'%s' accepted", refused[i].text);
        cr_expect(strstr(err, refused[i].names), "'%s': error '%s' does not name '%s'",
                  refused[i].text, err, refused[i].names);
        cr_expect_null(strchr(err, '\n'), "'%s': the error is not one line", refused[i].text);
        cr_expect_eq(memcmp(&c, &before, sizeof c), 0, "'%s': *c changed", refused[i].text);
    }
}

Test(tree_parse, takes_63_boundaries_and_refuses_64)
{
    /* 63 boundaries ending at the largest allowed, 4294967264: the longest canonical text */
    char text[2048] = "tree(split=0", out[A4W4_CONTRACT_MAX], err[256] = "";
    for (unsigned i = 1; i <= 63; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "/%u",
                 4294967264u - 32u * (63u - i));
    strcat(text, ",fuse=4294967295,order=desc,reduce=pairwise,combine=pairwise)");
    a4w4_contract c;
    cr_assert_eq(a4w4_contract_parse(text, &c, err, sizeof err), A4W4_OK, "%s", err);
    cr_expect_eq(c.tree.nbounds, 63);
    cr_expect_eq(c.tree.bounds[62], 4294967264u);
    cr_expect_gt(a4w4_contract_format(&c, out, sizeof out), 700);
    cr_expect_eq(a4w4_contract_format(&c, out, 100), -1, "a too small buffer is refused");
    cr_expect_str_eq(out, "");
    /* 64 boundaries 32, 64, ..., 2048 */
    char more[2048] = "tree(split=32";
    for (unsigned i = 2; i <= 64; i++)
        snprintf(more + strlen(more), sizeof more - strlen(more), "/%u", 32u * i);
    strcat(more, ")");
    cr_assert_eq(a4w4_contract_parse(more, &c, err, sizeof err), A4W4_EINVAL, "%s", more);
    cr_expect(strstr(err, "at most 63"), "%s", err);
}

Test(tree_parse, the_tree_defaults_are_ordered_1s_values)
{
    a4w4_contract c = {.kind = A4W4_CONTRACT_TREE, .split = 1};
    a4w4_tree_defaults(&c.tree);
    char out[A4W4_CONTRACT_MAX];
    cr_assert_geq(a4w4_contract_format(&c, out, sizeof out), 0);
    cr_expect_str_eq(out, canonical_default);
}

/* ---- contract sets ---------------------------------------------------------------------- */

Test(tree_sets, the_first_matching_rule_wins_and_unmatched_shapes_find_none)
{
    const char *text = "# hip-asm-like dispatch\n"
                       "\n"
                       "when K>=4096, N%512==0 : tree(split=4)   # big K\n"
                       "when M<=16,K!=1024: ordered(1)\r\n"
                       "  when K==1024:tree(reduce=pairwise)\n"
                       "when M>4096:exact\n";
    a4w4_contract_set set;
    char err[256] = "", out[4096];
    cr_assert_eq(a4w4_contract_set_parse(text, &set, err, sizeof err), A4W4_OK, "%s", err);
    cr_assert_eq(set.n, 4);
    cr_expect_eq(set.rules[0].line, 3);
    cr_expect_eq(set.rules[3].line, 6);
    const a4w4_contract *c = a4w4_contract_set_find(&set, 8, 1024, 8192);
    cr_assert_not_null(c);
    cr_expect_eq(c->kind, A4W4_CONTRACT_TREE);
    cr_expect_eq(c->tree.split, 4);
    c = a4w4_contract_set_find(&set, 8, 1000, 8192); /* N % 512 != 0: rule 2 */
    cr_assert_not_null(c);
    cr_expect_eq(c->kind, A4W4_CONTRACT_ORDERED);
    c = a4w4_contract_set_find(&set, 8, 1000, 1024); /* K == 1024: rule 3 */
    cr_assert_not_null(c);
    cr_expect_eq(c->tree.reduce, A4W4_REDUCE_PAIRWISE);
    c = a4w4_contract_set_find(&set, 5000, 1000, 512);
    cr_assert_not_null(c);
    cr_expect_eq(c->kind, A4W4_CONTRACT_EXACT);
    cr_expect_null(a4w4_contract_set_find(&set, 100, 1000, 512), "no rule matches");
    cr_assert_geq(a4w4_contract_set_format(&set, out, sizeof out), 0);
    cr_expect_str_eq(out, "when K>=4096,N%512==0: tree(leaf=32,order=asc,fuse=1,reduce=chain,"
                          "prec=0,round=rne,acc=fp32,split=4,combine=chain,final=rne)\n"
                          "when M<=16,K!=1024: ordered(1)\n"
                          "when K==1024: tree(leaf=32,order=asc,fuse=1,reduce=pairwise,prec=0,"
                          "round=rne,acc=fp32,split=1,combine=chain,final=rne)\n"
                          "when M>4096: exact");
    /* the canonical text parses back to the same set */
    a4w4_contract_set again;
    cr_assert_eq(a4w4_contract_set_parse(out, &again, err, sizeof err), A4W4_OK, "%s", err);
    char out2[4096];
    cr_assert_geq(a4w4_contract_set_format(&again, out2, sizeof out2), 0);
    cr_expect_str_eq(out2, out);
    a4w4_contract_set_free(&again);
    a4w4_contract_set_free(&set);
}

/* Mpad is AITER's getPaddedM(M, N, K, 0) (contracts §5.1), written out here by hand: M up to
 * 256 rounds up to 16, up to 1024 to 32, up to 4096 to 64, past it to 128. */
Test(tree_sets, mpad_rules_follow_the_dispatchers_padded_m_buckets)
{
    const char *text = "when Mpad<=32: ordered(2)\n"
                       "when Mpad==288, K%256==0: ordered(3)\n"
                       "when Mpad%128==0: ordered(4)\n";
    a4w4_contract_set set;
    char err[256] = "", out[1024];
    cr_assert_eq(a4w4_contract_set_parse(text, &set, err, sizeof err), A4W4_OK, "%s", err);
    static const struct {
        size_t M, K;
        unsigned split; /* 0: no rule */
    } want[] = {
        {1, 256, 2},   {16, 256, 2},  {17, 256, 2},  {32, 256, 2},   {33, 256, 0},
        {257, 512, 3}, {288, 512, 3}, {289, 512, 0}, {288, 500, 0},  {4097, 64, 4},
        {4096, 64, 4}, {4033, 64, 4}, {4032, 64, 0}, {1025, 64, 0},  {8192, 64, 4},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const a4w4_contract *c = a4w4_contract_set_find(&set, want[i].M, 64, want[i].K);
        if (!want[i].split) {
            cr_expect_null(c, "M=%zu K=%zu: a rule matched", want[i].M, want[i].K);
            continue;
        }
        cr_assert_not_null(c, "M=%zu K=%zu: no rule", want[i].M, want[i].K);
        cr_expect_eq(c->split, want[i].split, "M=%zu K=%zu: S=%u", want[i].M, want[i].K, c->split);
    }
    cr_assert_geq(a4w4_contract_set_format(&set, out, sizeof out), 0);
    cr_expect_str_eq(out, "when Mpad<=32: ordered(2)\nwhen Mpad==288,K%256==0: ordered(3)\n"
                          "when Mpad%128==0: ordered(4)");
    a4w4_contract_set_free(&set);
    cr_expect_eq(a4w4_contract_set_parse("when Mpad=32: exact", &set, err, sizeof err), A4W4_EINVAL);
    cr_expect(strstr(err, "predicate 'Mpad=32'"), "%s", err);
    cr_expect_eq(a4w4_contract_set_parse("when Mp<=32: exact", &set, err, sizeof err), A4W4_EINVAL);
}

/* The split count as a function of K as discover writes it (contracts §4.4): one `when K<=..`
 * rule per count, the last count for every larger K; the canonical text round-trips, and a
 * malformed bound is refused naming it. */
Test(tree_sets, split_count_ranges_of_k_take_the_first_range_holding_k)
{
    const char *text = "when K<=2080: ordered(1)\n"
                       "when K<=3168: tree(split=2,align=64)\n"
                       "when K<=5120 : tree(split=3,align=64)\n"
                       "tree(split=5,align=64)\n";
    a4w4_contract_set set;
    char err[256] = "", out[2048], out2[2048];
    cr_assert_eq(a4w4_contract_set_parse(text, &set, err, sizeof err), A4W4_OK, "%s", err);
    static const struct {
        size_t K;
        unsigned split;
    } want[] = {{32, 1}, {2080, 1}, {2112, 2}, {3168, 2}, {3200, 3}, {4096, 3}, {5120, 3},
                {5152, 5}, {262144, 5}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const a4w4_contract *c = a4w4_contract_set_find(&set, 32, 256, want[i].K);
        cr_assert_not_null(c, "K=%zu: no rule", want[i].K);
        unsigned S = c->kind == A4W4_CONTRACT_ORDERED ? c->split : c->tree.split;
        cr_expect_eq(S, want[i].split, "K=%zu: S=%u", want[i].K, S);
        cr_expect(c->kind == A4W4_CONTRACT_ORDERED || c->tree.align == 64, "K=%zu", want[i].K);
    }
    cr_assert_geq(a4w4_contract_set_format(&set, out, sizeof out), 0);
    cr_expect(strstr(out, "when K<=5120: tree(") && strstr(out, ",align=64)\ntree("), "%s", out);
    a4w4_contract_set again;
    cr_assert_eq(a4w4_contract_set_parse(out, &again, err, sizeof err), A4W4_OK, "%s", err);
    cr_assert_geq(a4w4_contract_set_format(&again, out2, sizeof out2), 0);
    cr_expect_str_eq(out2, out);
    a4w4_contract_set_free(&again);
    a4w4_contract_set_free(&set);
    static const char *const bad[][2] = {
        {"when K<=2080.5: ordered(1)\nordered(2)", "predicate 'K<=2080.5'"},
        {"when K<=: ordered(1)\nordered(2)", "predicate 'K<='"},
        {"when K=<2080: ordered(1)\nordered(2)", "predicate 'K=<2080'"},
        {"when K<=2080: tree(split=1,align=64)", "align"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(a4w4_contract_set_parse(bad[i][0], &set, err, sizeof err), A4W4_EINVAL,
                     "'%s' accepted", bad[i][0]);
        cr_expect(strstr(err, bad[i][1]), "'%s': '%s' does not name '%s'", bad[i][0], err,
                  bad[i][1]);
    }
}

/* Blanks between a predicate's name, operator and number are allowed (contracts §4.2, the file
 * form): the spaced rules read as the compact ones, rule for rule; a blank inside a name or a
 * number is not. */
Test(tree_sets, blanks_around_a_predicates_operator_read_as_the_compact_form)
{
    const char *spaced = "when Mpad <= 32 , K % 256 == 0 : tree(split=2)\n"
                         "when\tN >\t9: ordered(2)\nordered(1)\n";
    const char *compact = "when Mpad<=32,K%256==0: tree(split=2)\nwhen N>9: ordered(2)\nordered(1)\n";
    a4w4_contract_set a, b;
    char err[256] = "", fa[1024], fb[1024];
    cr_assert_eq(a4w4_contract_set_parse(spaced, &a, err, sizeof err), A4W4_OK, "%s", err);
    cr_assert_eq(a4w4_contract_set_parse(compact, &b, err, sizeof err), A4W4_OK, "%s", err);
    cr_assert_geq(a4w4_contract_set_format(&a, fa, sizeof fa), 0);
    cr_assert_geq(a4w4_contract_set_format(&b, fb, sizeof fb), 0);
    cr_expect_str_eq(fa, fb);
    static const size_t shapes[][3] = {{16, 8, 512}, {16, 8, 288}, {48, 16, 512}, {48, 8, 512}};
    for (size_t i = 0; i < 4; i++) {
        const a4w4_contract *ca = a4w4_contract_set_find(&a, shapes[i][0], shapes[i][1], shapes[i][2]);
        const a4w4_contract *cb = a4w4_contract_set_find(&b, shapes[i][0], shapes[i][1], shapes[i][2]);
        cr_assert(ca && cb);
        cr_expect_eq(ca->kind, cb->kind, "shape %zu", i);
        cr_expect_eq(ca->split, cb->split, "shape %zu", i);
    }
    a4w4_contract_set_free(&a);
    a4w4_contract_set_free(&b);
    static const char *const bad[] = {"when K<=3 2: ordered(2)\nordered(1)",
                                      "when Mp ad<=32: ordered(2)\nordered(1)",
                                      "when K< =32: ordered(2)\nordered(1)"};
    for (size_t i = 0; i < 3; i++)
        cr_expect_eq(a4w4_contract_set_parse(bad[i], &a, err, sizeof err), A4W4_EINVAL,
                     "'%s' accepted", bad[i]);
}

Test(tree_sets, a_single_contract_is_a_set_of_one_unconditional_rule)
{
    a4w4_contract_set set;
    char err[256];
    cr_assert_eq(a4w4_contract_set_parse("ordered(2)", &set, err, sizeof err), A4W4_OK);
    cr_assert_eq(set.n, 1);
    cr_expect_eq(set.rules[0].npreds, 0);
    const a4w4_contract *c = a4w4_contract_set_find(&set, 1, 1, 32);
    cr_assert_not_null(c);
    cr_expect_eq(c->split, 2);
    a4w4_contract_set_free(&set);
}

Test(tree_sets, refuses_bad_lines_naming_the_line)
{
    static const struct {
        const char *text, *names;
    } bad[] = {
        {"", "no rule"},
        {"# only a comment\n\n", "no rule"},
        {"exact\nwhen K>=: exact", "line 2: predicate 'K>='"},
        {"when Q==1: exact", "line 1: predicate 'Q==1'"},
        {"when K%0==0: exact", "predicate 'K%0==0'"},
        {"when K%4==4: exact", "predicate 'K%4==4'"},
        {"when K> =4: exact", "predicate 'K> =4'"},
        {"when K>=1 exact", "line 1: a 'when' rule"},
        {"when K>=1,: exact", "predicate ''"},
        {"when K=1: exact", "predicate 'K=1'"},
        {"when K==-1: exact", "predicate 'K==-1'"},
        {"when K==18446744073709551616: exact", "predicate"},
        {"when M==1,M==1,M==1,M==1,M==1,M==1,M==1,M==1,M==1: exact", "at most 8"},
        {"ordered(1)\n\nwhen K>=1: tree(leaf=3)", "line 3: contract 'tree(leaf=3)': leaf=3"},
        {"exact junk", "line 1: contract 'exact junk'"},
        /* after a rule without `when` no rule can match (contracts §4.2 "The file form") */
        {"when K>=4096: exact\nordered(1)\n# x\n\nwhen M<=16: ordered(2)",
         "line 5: rule 'when M<=16: ordered(2)' can never match: line 2 before it has no 'when'"},
        {"ordered(1)\nordered(2)", "line 2: rule 'ordered(2)' can never match: line 1"},
        {"when Mpad<=32: ordered(1)\nwhen K>=64: exact\nwhen K>=64,Mpad<=32 : ordered(2)",
         "line 3: rule 'when K>=64,Mpad<=32 : ordered(2)' can never match: line 1 before it "
         "holds wherever it does"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        a4w4_contract_set set;
        char err[512] = "";
        cr_assert_eq(a4w4_contract_set_parse(bad[i].text, &set, err, sizeof err), A4W4_EINVAL,
                     "'%s' accepted", bad[i].text);
        cr_expect(strstr(err, bad[i].names), "'%s': '%s' does not name '%s'", bad[i].text, err,
                  bad[i].names);
        cr_expect_eq(set.n, 0);
        cr_expect_null(set.rules);
    }
}

/* 1 when predicate p holds for some shape of the domain (M, N from 1, K a multiple of 32
 * from 32; M up to mmax, K up to kmax), searched shape by shape through a set of one rule
 * built by hand (never through the parser under test). */
static int some_shape_matches(a4w4_shape_pred p, size_t mmax, size_t kmax)
{
    a4w4_contract_rule r = {.line = 1, .npreds = 1};
    r.preds[0] = p;
    r.contract.kind = A4W4_CONTRACT_EXACT;
    a4w4_contract_set set = {1, &r};
    for (size_t M = 1; M <= mmax; M++)
        for (size_t K = 32; K <= kmax; K += 32)
            if (a4w4_contract_set_find(&set, M, M, K))
                return 1;
    return 0;
}

/* The parser's verdict on "when PRED: exact" (PRED: dim, then op and v, or "%d==v" when d) held
 * to a search over shapes: accepted exactly when some shape matches, else refused naming the
 * line, the predicate and why. */
static void pred_as_search(char dim, const char *op, unsigned v, unsigned d, size_t mmax,
                           size_t kmax)
{
    static const char *const names[] = {"==", "!=", "<", "<=", ">", ">="};
    char pred[48], text[96], err[512] = "", want[128];
    a4w4_shape_pred p = {dim, A4W4_PRED_MOD, v, d};
    for (int k = 0; !d && k < 6; k++)
        if (!strcmp(op, names[k]))
            p.op = (a4w4_pred_op)k;
    if (d)
        snprintf(pred, sizeof pred, "%s%%%u==%u", dim == 'P' ? "Mpad" : dim == 'K' ? "K" : "M",
                 d, v);
    else
        snprintf(pred, sizeof pred, "%s%s%u", dim == 'P' ? "Mpad" : dim == 'K' ? "K" : "M", op,
                 v);
    snprintf(text, sizeof text, "when %s: exact", pred);
    int reached = some_shape_matches(p, mmax, kmax);
    a4w4_contract_set set;
    int rc = a4w4_contract_set_parse(text, &set, err, sizeof err);
    if (rc == A4W4_OK)
        a4w4_contract_set_free(&set);
    cr_expect_eq(rc == A4W4_OK, reached, "'%s' %s, but %s shape up to M=%zu K=%zu matches",
                 pred, rc == A4W4_OK ? "accepted" : "refused", reached ? "a" : "no", mmax, kmax);
    snprintf(want, sizeof want, "line 1: predicate '%s' holds for no shape: ", pred);
    if (rc != A4W4_OK)
        cr_expect(strstr(err, want), "'%s' refused as '%s'", pred, err);
}

/* A predicate no shape reaches (contracts §4.2 "The file form": M, N >= 1, K a positive
 * multiple of 32, Mpad a padded-M bucket of §5.1) is refused at parse time, one line naming
 * the line, the predicate and why; every refused predicate is one that a search over shapes
 * finds unmatched, and each of these unreachable ones is refused. */
Test(tree_sets, refuses_predicates_no_shape_reaches)
{
    static const char *const dead[] = {
        "Mpad==17", "Mpad<=0", "Mpad<16", "Mpad==272", "Mpad==4160", "Mpad==0", "Mpad%16==1",
        "Mpad%32==8", "K%32==5", "K==33", "K<32", "K<=31", "K==0", "K%64==16", "M<=0", "M<1",
        "M==0", "N<=0", "N==0", "N<1"};
    for (size_t i = 0; i < sizeof dead / sizeof dead[0]; i++) {
        a4w4_contract_set set;
        char text[96], err[512] = "", want[96];
        snprintf(text, sizeof text, "# c\nwhen K>=64: ordered(2)\nwhen %s, K>=32: exact\n",
                 dead[i]);
        cr_expect_eq(a4w4_contract_set_parse(text, &set, err, sizeof err), A4W4_EINVAL,
                     "'%s' accepted", dead[i]);
        snprintf(want, sizeof want, "line 3: predicate '%s' holds for no shape: ", dead[i]);
        cr_expect(strstr(err, want), "'%s': '%s' does not say '%s'", dead[i], err, want);
        cr_expect(strstr(err, dead[i][0] == 'M' && dead[i][1] == 'p' ? "§5.1"
                              : dead[i][0] == 'K'                  ? "multiple of 32"
                                                                   : "at least 1"),
                  "'%s': '%s' does not say why", dead[i], err);
    }
    /* the search: the parser accepts exactly the predicates some shape satisfies */
    for (unsigned v = 0; v <= 4400; v += v < 1100 ? 1 : 7)
        pred_as_search('P', "==", v, 0, 4500, 32);
    static const char *const ops[] = {"==", "<", "<=", "!=", ">", ">="};
    for (unsigned v = 0; v <= 300; v++)
        for (size_t o = 0; o < 6; o++) {
            pred_as_search('K', ops[o], v, 0, 1, 640);
            pred_as_search('P', ops[o], v, 0, 300, 32);
            pred_as_search('M', ops[o], v, 0, 302, 32);
        }
    for (unsigned d = 1; d <= 130; d++)
        for (unsigned r = 0; r < d; r++) {
            pred_as_search('K', NULL, r, d, 1, 32 * 140);
            pred_as_search('M', NULL, r, d, 140, 32);
            if (d <= 64) /* past 4096 the buckets repeat every 128: d of them reach each residue */
                pred_as_search('P', NULL, r, d, 4224 + 128 * 64, 32);
        }
}

/* ---- hand-computed outputs --------------------------------------------------------------
 * One output over K elements. W is 1.0 everywhere (code 2, scale 127); A is zero except the
 * elements set, so a block's value is the sum of its A values times 2^(sa - 127).
 * block_pow2(o, b, e) makes block b's value 2^e (element 0 = 1.0, sa = 127 + e). */
typedef struct {
    size_t K;
    uint8_t a[512], as[32], w[512], ws[32];
} one_output;

static one_output *out_new(size_t K)
{
    one_output *o = calloc(1, sizeof *o);
    cr_assert(o && K <= 1024 && K % 32 == 0);
    o->K = K;
    memset(o->as, 127, sizeof o->as);
    memset(o->w, 0x22, sizeof o->w);
    memset(o->ws, 127, sizeof o->ws);
    return o;
}

static void set_a(one_output *o, size_t k, uint8_t code, uint8_t scale)
{
    a4w4_fp4_set(o->a, k, code);
    o->as[k / 32] = scale;
}

static void block_pow2(one_output *o, size_t b, int e)
{
    set_a(o, b * 32, 2, (uint8_t)(127 + e));
}

/* The accumulator value under contract text (a tree) and its bf16 bits into *bf16. */
static float eval(const one_output *o, const char *text, uint16_t *bf16)
{
    a4w4_contract c;
    char err[256] = "";
    cr_assert_eq(a4w4_contract_parse(text, &c, err, sizeof err), A4W4_OK, "%s: %s", text, err);
    cr_assert_eq(c.kind, A4W4_CONTRACT_TREE);
    a4w4_dot_operands op = {o->a, o->as, o->w, o->ws, o->K};
    uint16_t b = 0;
    float acc = 0;
    cr_assert_eq(a4w4_dot_tree(&op, &c.tree, &b, &acc), A4W4_OK, "%s", text);
    if (bf16)
        *bf16 = b;
    return acc;
}

/* acc's fp32 bits under text equal want, and the bf16 output equals want_bf16: the plain
 * oracle's, and the fast path's on every instruction set this machine runs. */
static void expect_tree(const one_output *o, const char *text, uint32_t want, uint16_t want_bf16)
{
    uint16_t b;
    float acc = eval(o, text, &b);
    cr_expect_eq(a4w4_f32_bits(acc), want, "%s: acc 0x%08x, want 0x%08x", text,
                 a4w4_f32_bits(acc), want);
    cr_expect_eq(b, want_bf16, "%s: bf16 0x%04x, want 0x%04x", text, b, want_bf16);
    a4w4_contract c;
    cr_assert_eq(a4w4_contract_parse(text, &c, NULL, 0), A4W4_OK);
    for (int isa = A4W4_FAST_AUTO + 1; isa < A4W4_FAST_ISA_COUNT; isa++) {
        if (!a4w4_fast_isa_supported((a4w4_fast_isa)isa))
            continue;
        float f = 0;
        cr_assert_eq(a4w4_gemm_tree_fast_ex(o->a, o->as, o->w, o->ws, 1, 1, o->K, &c.tree, &b, &f,
                                            1, (a4w4_fast_isa)isa, NULL),
                     A4W4_OK);
        cr_expect_eq(a4w4_f32_bits(f), want, "%s on %s: acc 0x%08x, want 0x%08x", text,
                     a4w4_fast_isa_name((a4w4_fast_isa)isa), a4w4_f32_bits(f), want);
        cr_expect_eq(b, want_bf16, "%s on %s: bf16 0x%04x, want 0x%04x", text,
                     a4w4_fast_isa_name((a4w4_fast_isa)isa), b, want_bf16);
    }
}

Test(tree_oracle, round_rz_truncates_where_rne_breaks_a_tie_to_even)
{
    /* blocks 1, 2^-23, 2^-24: acc = 1 + 2^-23 exactly, then 1 + 2^-23 + 2^-24 lies halfway
     * between 1 + 2^-23 (odd significand) and 1 + 2^-22: RNE takes 1 + 2^-22 (0x3F800002),
     * RZ keeps 1 + 2^-23 (0x3F800001); both are 1.0 in bf16 */
    one_output *o = out_new(96);
    block_pow2(o, 0, 0);
    block_pow2(o, 1, -23);
    block_pow2(o, 2, -24);
    expect_tree(o, "tree()", 0x3F800002u, 0x3F80);
    expect_tree(o, "tree(round=rz)", 0x3F800001u, 0x3F80);
    free(o);
}

Test(tree_oracle, final_rz_and_a_bf16_accumulator_round_where_bf16_sees_it)
{
    /* blocks 1 and 1.5 * 2^-8 (element 1.5, sa = 119): fp32 acc 1 + 3 * 2^-9 = 0x3F80C000 is
     * 0.75 of a bf16 ulp (2^-7) above 1: final RNE 0x3F81, final RZ 0x3F80. acc=bf16: the
     * second node rounds 1 + 3 * 2^-9 to bf16 itself: RNE 1 + 2^-7 (0x3F810000), RZ 1. */
    one_output *o = out_new(64);
    block_pow2(o, 0, 0);
    set_a(o, 32, 3, 119);
    expect_tree(o, "tree()", 0x3F80C000u, 0x3F81);
    expect_tree(o, "tree(final=rz)", 0x3F80C000u, 0x3F80);
    expect_tree(o, "tree(acc=bf16)", 0x3F810000u, 0x3F81);
    expect_tree(o, "tree(acc=bf16,round=rz)", 0x3F800000u, 0x3F80);
    free(o);
}

Test(tree_oracle, a_fused_node_keeps_units_an_accumulator_chain_loses)
{
    /* blocks 2^24, 1, 1. Chain: 2^24 + 1 is a tie between 2^24 (even) and 2^24 + 2: 2^24,
     * twice: 16777216 (0x4B800000). fuse=3: one node, exact 2^24 + 2 = 16777218 (0x4B800001).
     * fuse=2: node(0, 2^24, 1) = 2^24, node(2^24, 1) = 2^24. order=desc: 1, 2, 2^24 + 2. */
    one_output *o = out_new(96);
    block_pow2(o, 0, 24);
    block_pow2(o, 1, 0);
    block_pow2(o, 2, 0);
    expect_tree(o, "tree()", 0x4B800000u, 0x4B80);
    expect_tree(o, "tree(fuse=3)", 0x4B800001u, 0x4B80);
    expect_tree(o, "tree(fuse=2)", 0x4B800000u, 0x4B80);
    expect_tree(o, "tree(fuse=4294967295)", 0x4B800001u, 0x4B80);
    expect_tree(o, "tree(order=desc)", 0x4B800001u, 0x4B80);
    /* pairwise over 3 leaves: (2^24 + 1) -> 2^24, then 2^24 + 1 -> 2^24; descending:
     * (1 + 1) = 2, 2^24 carried, 2 + 2^24 = 2^24 + 2 */
    expect_tree(o, "tree(reduce=pairwise)", 0x4B800000u, 0x4B80);
    expect_tree(o, "tree(reduce=pairwise,order=desc)", 0x4B800001u, 0x4B80);
    free(o);
}

Test(tree_oracle, pairwise_reduction_pairs_neighbours_level_by_level)
{
    /* blocks 2^24, 1, 1, 1. chain: 2^24 three times over (each + 1 is a tie to even).
     * pairwise: (2^24, 1) -> 2^24, (1, 1) -> 2, then 2^24 + 2 exactly. */
    one_output *o = out_new(128);
    block_pow2(o, 0, 24);
    for (size_t b = 1; b < 4; b++)
        block_pow2(o, b, 0);
    expect_tree(o, "tree()", 0x4B800000u, 0x4B80);
    expect_tree(o, "tree(reduce=pairwise)", 0x4B800001u, 0x4B80);
    /* groups of 2 (2^24 + 1 -> 2^24 and 2), then pairwise: the same 2^24 + 2 */
    expect_tree(o, "tree(reduce=pairwise,fuse=2)", 0x4B800001u, 0x4B80);
    /* one split per block: combine chain adds 2^24, 1, 1, 1 in turn (2^24); pairwise
     * combines (2^24, 1) -> 2^24 and (1, 1) -> 2, then 2^24 + 2 */
    expect_tree(o, "tree(split=0/32/64/96)", 0x4B800000u, 0x4B80);
    expect_tree(o, "tree(split=0/32/64/96,combine=pairwise)", 0x4B800001u, 0x4B80);
    free(o);
}

Test(tree_oracle, prec_aligns_to_the_largest_input_and_truncates)
{
    /* one fused node of +0 (the chain's start), 1, 2^-24, 2^-26. Exact: 1 + 2^-24 + 2^-26,
     * above the tie, RNE gives 1 + 2^-23 (0x3F800001). prec=27: q = 2^(0 - 27 + 1) = 2^-26
     * keeps every input: the same. prec=26 (q = 2^-25) and prec=25 (q = 2^-24) truncate 2^-26
     * to 0: 1 + 2^-24 is a tie, to even: 1.0. */
    one_output *o = out_new(96);
    block_pow2(o, 0, 0);
    block_pow2(o, 1, -24);
    block_pow2(o, 2, -26);
    expect_tree(o, "tree(fuse=3)", 0x3F800001u, 0x3F80);
    expect_tree(o, "tree(fuse=3,prec=27)", 0x3F800001u, 0x3F80);
    expect_tree(o, "tree(fuse=3,prec=26)", 0x3F800000u, 0x3F80);
    expect_tree(o, "tree(fuse=3,prec=25)", 0x3F800000u, 0x3F80);
    free(o);
}

Test(tree_oracle, prec_truncates_a_negative_input_toward_zero)
{
    /* one node of +0, 1 and -1.5 * 2^-26 (element -1.5 = code 0xB, sa = 101). prec=0, RZ:
     * 1 - 1.5 * 2^-26 truncates to 1 - 2^-24 (0x3F7FFFFF, bf16 by RNE 0x3F80, by RZ 0x3F7F);
     * RNE: 1.0 (0.375 ulp below).
     * prec=25, RZ: q = 2^-24, trunc(-0.375) = 0 (toward zero, not -1): the sum is 1.0. */
    one_output *o = out_new(64);
    block_pow2(o, 0, 0);
    set_a(o, 32, 0xB, 101);
    expect_tree(o, "tree(fuse=2,round=rz)", 0x3F7FFFFFu, 0x3F80);
    expect_tree(o, "tree(fuse=2,round=rz,final=rz)", 0x3F7FFFFFu, 0x3F7F);
    expect_tree(o, "tree(fuse=2)", 0x3F800000u, 0x3F80);
    expect_tree(o, "tree(fuse=2,round=rz,prec=25)", 0x3F800000u, 0x3F80);
    free(o);
}

Test(tree_oracle, a_bf16_accumulator_loses_what_fp32_keeps)
{
    /* block 1, then 16 blocks of 2^-9. fp32: 1 + 16 * 2^-9 = 1 + 2^-5 = 1.03125 (0x3F840000,
     * exact in bf16: 0x3F84). acc=bf16: each 1 + 2^-9 is a quarter of a bf16 ulp above 1 and
     * rounds back to 1. fuse=17 with acc=bf16: one node, 1.03125, bf16-exact. */
    one_output *o = out_new(544);
    block_pow2(o, 0, 0);
    for (size_t b = 1; b < 17; b++)
        block_pow2(o, b, -9);
    expect_tree(o, "tree()", 0x3F840000u, 0x3F84);
    expect_tree(o, "tree(acc=bf16)", 0x3F800000u, 0x3F80);
    expect_tree(o, "tree(acc=bf16,round=rz)", 0x3F800000u, 0x3F80);
    expect_tree(o, "tree(acc=bf16,fuse=17)", 0x3F840000u, 0x3F84);
    free(o);
}

Test(tree_oracle, leaves_smaller_than_a_block_accumulate_half_blocks)
{
    /* block 0 = 2^24 (element 0), block 1 = elements 0 and 16 at 1.0. leaf=32: 2^24 + 2
     * (exact). leaf=16: leaves 2^24, +0, 1, 1: each + 1 ties to 2^24. leaf=16,fuse=2: groups
     * (2^24, 0) -> 2^24 and node(2^24, 1, 1) = 2^24 + 2. leaf=1, descending: the two 1s first
     * (acc 2), then 2^24: 2^24 + 2. */
    one_output *o = out_new(64);
    block_pow2(o, 0, 24);
    set_a(o, 32, 2, 127);
    set_a(o, 48, 2, 127);
    expect_tree(o, "tree()", 0x4B800001u, 0x4B80);
    expect_tree(o, "tree(leaf=16)", 0x4B800000u, 0x4B80);
    expect_tree(o, "tree(leaf=16,fuse=2)", 0x4B800001u, 0x4B80);
    expect_tree(o, "tree(leaf=1,order=desc)", 0x4B800001u, 0x4B80);
    expect_tree(o, "tree(leaf=1)", 0x4B800000u, 0x4B80);
    free(o);
}

Test(tree_oracle, splits_follow_k_per_split_or_the_boundaries_given)
{
    /* K = 512: block 0 = 2^24, blocks 8 and 9 = 1. One split: 2^24 (both 1s tie away).
     * split=2: k_per_split = round_up(256, 256) = 256, splits [0,256) = 2^24 and [256,512) = 2,
     * total 2^24 + 2. split=256 is S = 256 (k_per_split 256 again), not a boundary: the same.
     * split=0/256: the same two splits. split=0/288: [0,288) holds block 0 and 8 (2^24),
     * [288,512) block 9 (1): 2^24 + 1 ties to 2^24. */
    one_output *o = out_new(512);
    block_pow2(o, 0, 24);
    block_pow2(o, 8, 0);
    block_pow2(o, 9, 0);
    expect_tree(o, "tree()", 0x4B800000u, 0x4B80);
    expect_tree(o, "tree(split=2)", 0x4B800001u, 0x4B80);
    expect_tree(o, "tree(split=256)", 0x4B800001u, 0x4B80);
    expect_tree(o, "tree(split=0/256)", 0x4B800001u, 0x4B80);
    expect_tree(o, "tree(split=0/288)", 0x4B800000u, 0x4B80);
    free(o);
}

Test(tree_oracle, a_boundary_at_or_past_k_is_an_error_for_that_k)
{
    one_output *o = out_new(256);
    a4w4_contract c;
    char err[256] = "";
    cr_assert_eq(a4w4_contract_parse("tree(split=0/256)", &c, err, sizeof err), A4W4_OK);
    cr_expect_eq(a4w4_tree_check(&c.tree, 256, err, sizeof err), A4W4_EINVAL);
    cr_expect(strstr(err, "split boundary 256 is not below K=256"), "%s", err);
    cr_expect_eq(a4w4_tree_check(&c.tree, 288, err, sizeof err), A4W4_OK);
    a4w4_dot_operands op = {o->a, o->as, o->w, o->ws, 256};
    uint16_t b = 0x1234;
    cr_expect_eq(a4w4_dot_tree(&op, &c.tree, &b, NULL), A4W4_EINVAL);
    cr_expect_eq(b, 0x1234, "no output on error");
    cr_expect_eq(a4w4_gemm_tree(o->a, o->as, o->w, o->ws, 1, 1, 256, &c.tree, &b, NULL),
                 A4W4_EINVAL);
    free(o);
}

Test(tree_oracle, the_zero_sign_follows_ieee_addition)
{
    /* two blocks of -0.5 * 1.0 * 2^(0 + 0 - 254) = -2^-255: each leaf rounds to -0 (below
     * 2^-150). chain: +0 + -0 = +0 (0x0000). pairwise reduce and combine: node(-0, -0) = -0
     * (every input -0) and one split is carried up unchanged: 0x8000. pairwise reduce with a
     * chain combine: +0 + -0 = +0. */
    one_output *o = out_new(64);
    o->ws[0] = o->ws[1] = 0;
    set_a(o, 0, 9, 0);
    set_a(o, 32, 9, 0);
    expect_tree(o, "tree()", 0x00000000u, 0x0000);
    expect_tree(o, "tree(reduce=pairwise,combine=pairwise)", 0x80000000u, 0x8000);
    /* the same through a fused node and through RZ nodes: node(-0, -0) = -0 */
    expect_tree(o, "tree(reduce=pairwise,combine=pairwise,fuse=2)", 0x80000000u, 0x8000);
    expect_tree(o, "tree(reduce=pairwise,combine=pairwise,round=rz)", 0x80000000u, 0x8000);
    expect_tree(o, "tree(reduce=pairwise)", 0x00000000u, 0x0000);
    expect_tree(o, "tree(fuse=2,combine=pairwise)", 0x00000000u, 0x0000);
    free(o);
}

Test(tree_oracle, overflow_is_inf_under_rne_and_the_largest_finite_under_rz)
{
    /* blocks 2^127 and 2^127: 2^128 overflows. RNE: +inf (0x7F800000, bf16 0x7F80). RZ: fp32
     * max 0x7F7FFFFF; its bf16 by RNE rounds up to inf (0x7F80), by RZ to bf16 max 0x7F7F.
     * acc=bf16, RZ: bf16 max (2^8 - 1) * 2^120 = 0x7F7F0000. */
    one_output *o = out_new(64);
    block_pow2(o, 0, 127);
    block_pow2(o, 1, 127);
    expect_tree(o, "tree()", 0x7F800000u, 0x7F80);
    expect_tree(o, "tree(round=rz)", 0x7F7FFFFFu, 0x7F80);
    expect_tree(o, "tree(round=rz,final=rz)", 0x7F7FFFFFu, 0x7F7F);
    expect_tree(o, "tree(acc=bf16,round=rz)", 0x7F7F0000u, 0x7F7F);
    free(o);
}

Test(tree_oracle, plus_and_minus_inf_meet_as_nan_and_a_nan_scale_is_nan)
{
    /* 6 * 2^127 overflows a leaf to +inf, -6 * 2^127 to -inf: their node is NaN (0x7FC0). One
     * inf leaf with a finite one: inf. A 0xFF scale anywhere: NaN (0x7FC0, acc 0x7FC00000). */
    one_output *o = out_new(64);
    set_a(o, 0, 7, 254);
    expect_tree(o, "tree()", 0x7F800000u, 0x7F80);
    set_a(o, 32, 15, 254);
    expect_tree(o, "tree()", 0x7FC00000u, 0x7FC0);
    expect_tree(o, "tree(reduce=pairwise,leaf=8,prec=30,acc=bf16)", 0x7FC00000u, 0x7FC0);
    set_a(o, 32, 0, 0xFF);
    expect_tree(o, "tree(order=desc)", 0x7FC00000u, 0x7FC0);
    o->as[1] = 127;
    o->ws[1] = 0xFF;
    expect_tree(o, "tree(round=rz)", 0x7FC00000u, 0x7FC0);
    free(o);
}

Test(tree_oracle, a_leaf_rounds_once_to_fp32_with_gradual_underflow)
{
    /* element 1.5 (sa = 0) times 0.5 (code 1, sb = 106): 3 units of 2^(106 - 256) =
     * 1.5 * 2^-149, a tie between 1 and 2 subnormal quanta: RNE to even, 2^-148 (0x00000002),
     * whatever the node rounding; bf16 of 2^-148 is +0. */
    one_output *o = out_new(32);
    set_a(o, 0, 3, 0);
    a4w4_fp4_set(o->w, 0, 1);
    o->ws[0] = 106;
    expect_tree(o, "tree()", 0x00000002u, 0x0000);
    expect_tree(o, "tree(round=rz)", 0x00000002u, 0x0000);
    free(o);
}

Test(tree_oracle, interleaved_lanes_take_blocks_or_chunks_by_index_mod_l)
{
    /* blocks 2^24, 0, 1, 1. ordered(1): 2^24, then + 1 twice, each a tie to even: 2^24.
     * lanes=2 (chunks of one block): lane 0 = {2^24, 1} -> 2^24, lane 1 = {0, 1} -> 1,
     * combined 2^24 + 1 -> 2^24. lanes=2,chunk=64: lane 0 = {2^24, 0} -> 2^24, lane 1 =
     * {1, 1} -> 2, combined 2^24 + 2 exactly (0x4B800001). lanes=4: one block per lane, chain
     * from +0: 2^24, 2^24, 2^24 (tie), 2^24 (tie); pairwise: (2^24 + 0), (1 + 1) = 2, then
     * 2^24 + 2. lanes=8 has four lanes without a chunk: the same as lanes=4. */
    one_output *o = out_new(128);
    block_pow2(o, 0, 24);
    block_pow2(o, 2, 0);
    block_pow2(o, 3, 0);
    expect_tree(o, "tree()", 0x4B800000u, 0x4B80);
    expect_tree(o, "tree(lanes=2)", 0x4B800000u, 0x4B80);
    expect_tree(o, "tree(lanes=2,chunk=64)", 0x4B800001u, 0x4B80);
    expect_tree(o, "tree(lanes=2,chunk=64,lanecomb=pairwise)", 0x4B800001u, 0x4B80);
    expect_tree(o, "tree(lanes=4)", 0x4B800000u, 0x4B80);
    expect_tree(o, "tree(lanes=4,lanecomb=pairwise)", 0x4B800001u, 0x4B80);
    expect_tree(o, "tree(lanes=8,lanecomb=pairwise)", 0x4B800001u, 0x4B80);
    /* order=desc inside each lane: lane 0 = {1, 2^24} -> 2^24 + 1 -> 2^24 as before; with
     * chunk=64, lane 1 = {1, 1} -> 2: unchanged; a lane's reversal never crosses lanes */
    expect_tree(o, "tree(lanes=2,chunk=64,order=desc)", 0x4B800001u, 0x4B80);
    free(o);
}

Test(tree_oracle, element_lanes_take_elements_by_index_mod_l)
{
    /* element 0 = 2^24, elements 33 and 35 = 1 (block 1 at scale 2^0), every other 0.
     * leaf=1 (a fused multiply-add chain over exact products): 2^24, then + 1 twice, each a
     * tie to even: 2^24. lanes=2,chunk=1 (even elements into lane 0, odd into lane 1, as a
     * BLAS kernel's two accumulators): lane 0 = 2^24, lane 1 = 1 + 1 = 2, combined 2^24 + 2
     * exactly (0x4B800001). chunk=2: elements 32, 33 go to lane 0 (2^24 + 1 -> 2^24), 34, 35 to
     * lane 1 (1), combined 2^24 + 1 -> 2^24. */
    one_output *o = out_new(64);
    block_pow2(o, 0, 24);
    set_a(o, 33, 2, 127);
    set_a(o, 35, 2, 127);
    expect_tree(o, "tree(leaf=1)", 0x4B800000u, 0x4B80);
    expect_tree(o, "tree(leaf=1,lanes=2,chunk=1)", 0x4B800001u, 0x4B80);
    expect_tree(o, "tree(leaf=1,lanes=2,chunk=2)", 0x4B800000u, 0x4B80);
    free(o);
}

Test(tree_oracle, tile_cuts_k_into_splits_of_t_elements_the_last_shorter)
{
    /* blocks 2^24, 1, 1 at K = 96. tile=64: splits [0, 64) = 2^24 + 1 -> 2^24 and [64, 96) = 1;
     * chained: 2^24 + 1 -> 2^24. At K = 128 with block 3 = 1 too, [64, 128) = 2 and the total
     * is 2^24 + 2. The splits are those of explicit boundaries at every multiple of T. */
    one_output *o = out_new(160);
    block_pow2(o, 0, 24);
    block_pow2(o, 1, 0);
    block_pow2(o, 2, 0);
    block_pow2(o, 3, 0);
    expect_tree(o, "tree(tile=64)", 0x4B800001u, 0x4B80);
    expect_tree(o, "tree(split=0/64/128)", 0x4B800001u, 0x4B80);
    o->K = 96;
    expect_tree(o, "tree(tile=64)", 0x4B800000u, 0x4B80);
    a4w4_contract c;
    cr_assert_eq(a4w4_contract_parse("tree(tile=64)", &c, NULL, 0), A4W4_OK);
    size_t st[8];
    cr_assert_eq(a4w4_tree_splits(&c.tree, 160, st, 8), 3);
    cr_expect(st[0] == 0 && st[1] == 64 && st[2] == 128 && st[3] == 160);
    cr_assert_eq(a4w4_tree_splits(&c.tree, 64, st, 8), 1);
    cr_assert_eq(a4w4_tree_splits(&c.tree, 4096, NULL, 0), 64);
    free(o);
}

Test(tree_oracle, align_rounds_the_parts_of_split_s_to_multiples_of_a)
{
    /* split=3,align=64 at K 4096 cuts at 1408 and 2816 (round_up(1366, 64)), cuBLAS's split-K
     * on an H100 (contracts §4.4); split=3 (align 256) at 1536 and 3072. At K 160 the parts are
     * 64 elements: [0, 64), [64, 128), [128, 160). Blocks 2^24, 1, 1, 0, 1 at K 160: align=64
     * gives 2^24 + 1 -> 2^24, then 1 + 0 = 1 and 1, chained: 2^24 + 1 -> 2^24 twice (0x4B80,
     * 2^24); split=3 (one 256-element part) the same chain. Blocks 2^24, 0, 1, 1, 0: align=64
     * adds [64, 128) = 1 + 1 = 2 as one partial: 2^24 + 2 (0x4B800001), one chain 2^24. */
    a4w4_contract c;
    size_t st[8];
    cr_assert_eq(a4w4_contract_parse("tree(split=3,align=64)", &c, NULL, 0), A4W4_OK);
    cr_assert_eq(a4w4_tree_splits(&c.tree, 4096, st, 8), 3);
    cr_expect(st[1] == 1408 && st[2] == 2816 && st[3] == 4096, "%zu %zu", st[1], st[2]);
    cr_assert_eq(a4w4_tree_splits(&c.tree, 5120, st, 8), 3);
    cr_expect(st[1] == 1728 && st[2] == 3456);
    cr_assert_eq(a4w4_tree_splits(&c.tree, 608, st, 8), 3);
    cr_expect(st[1] == 256 && st[2] == 512);
    cr_assert_eq(a4w4_tree_splits(&c.tree, 96, st, 8), 2); /* round_up(32, 64): 2 parts */
    cr_assert_eq(a4w4_contract_parse("tree(split=5,align=64)", &c, NULL, 0), A4W4_OK);
    cr_assert_eq(a4w4_tree_splits(&c.tree, 8192, st, 8), 5);
    cr_expect(st[1] == 1664 && st[4] == 6656);
    cr_assert_eq(a4w4_contract_parse("tree(split=3)", &c, NULL, 0), A4W4_OK);
    cr_assert_eq(a4w4_tree_splits(&c.tree, 4096, st, 8), 3);
    cr_expect(st[1] == 1536 && st[2] == 3072);
    one_output *o = out_new(160);
    block_pow2(o, 0, 24);
    block_pow2(o, 3, 0);
    block_pow2(o, 4, 0);
    expect_tree(o, "tree(split=3,align=64)", 0x4B800000u, 0x4B80);
    block_pow2(o, 2, 0);
    set_a(o, 128, 0, 127); /* block 4 = 0: blocks 2^24, 0, 1, 1, 0 */
    expect_tree(o, "tree(split=3,align=64)", 0x4B800001u, 0x4B80);
    expect_tree(o, "tree(split=3)", 0x4B800000u, 0x4B80);
    free(o);
}

Test(tree_oracle, a_fused_leaf_sums_its_blocks_exactly_and_rounds_once)
{
    /* blocks 2^24, 0, 1, 2^-30. leaf=64: leaves {2^24, 0} = 2^24 and {1, 2^-30}, rounded once
     * to 1; 2^24 + 1 ties to 2^24. fuse=2 sums the block values in the node instead:
     * 2^24 + 1 + 2^-30 lies above the tie: 2^24 + 2. */
    one_output *o = out_new(128);
    block_pow2(o, 0, 24);
    block_pow2(o, 2, 0);
    block_pow2(o, 3, -30);
    expect_tree(o, "tree(leaf=64)", 0x4B800000u, 0x4B80);
    expect_tree(o, "tree(fuse=2)", 0x4B800001u, 0x4B80);
    /* blocks 2^24, 1, 1, 0: ordered(1) and leaf=64 ({2^24, 1} ties to 2^24, then + 1 ties):
     * 2^24; leaf=128 sums all four exactly: 2^24 + 2. */
    block_pow2(o, 1, 0);
    set_a(o, 96, 0, 127);
    expect_tree(o, "tree()", 0x4B800000u, 0x4B80);
    expect_tree(o, "tree(leaf=64)", 0x4B800000u, 0x4B80);
    expect_tree(o, "tree(leaf=128)", 0x4B800001u, 0x4B80);
    /* K = 96 with leaf=128: one leaf of the three blocks, 2^24 + 2 */
    o->K = 96;
    expect_tree(o, "tree(leaf=128)", 0x4B800001u, 0x4B80);
    free(o);
}

Test(tree_oracle, a_fused_leaf_rounds_with_lround_and_sums_past_fp32_exactly)
{
    /* blocks 1 and -2^-30 (code 0xA is -1.0): exact 1 - 2^-30. RNE: 1.0 (0x3F800000); the
     * leaf rounded toward zero: 1 - 2^-24 (0x3F7FFFFF), bf16 1.0 by RNE, 0x3F7F by final=rz. */
    one_output *o = out_new(64);
    block_pow2(o, 0, 0);
    set_a(o, 32, 0xA, 127 - 30);
    expect_tree(o, "tree()", 0x3F800000u, 0x3F80);
    expect_tree(o, "tree(leaf=64)", 0x3F800000u, 0x3F80);
    expect_tree(o, "tree(leaf=64,lround=rz)", 0x3F7FFFFFu, 0x3F80);
    expect_tree(o, "tree(leaf=64,lround=rz,final=rz)", 0x3F7FFFFFu, 0x3F7F);
    expect_tree(o, "tree(leaf=32,lround=rz)", 0x3F800000u, 0x3F80);
    /* blocks +2^254 and -2^254 (both scales 254): each alone overflows fp32, so ordered(1)
     * meets +inf and -inf (NaN); a 64-K leaf sums them exactly to 0: +0. With +2^254 and
     * -2^254 + 2^253 (element -0.5): the leaf's exact 2^253 rounds to +inf (RNE) or the
     * largest finite fp32 (RZ, 0x7F7FFFFF, bf16 RNE of that is +inf, RZ 0x7F7F). */
    set_a(o, 0, 2, 254);
    o->ws[0] = 254;
    set_a(o, 32, 0xA, 254);
    o->ws[1] = 254;
    expect_tree(o, "tree()", 0x7FC00000u, 0x7FC0);
    expect_tree(o, "tree(leaf=64)", 0x00000000u, 0x0000);
    set_a(o, 33, 1, 254);
    expect_tree(o, "tree(leaf=64)", 0x7F800000u, 0x7F80);
    expect_tree(o, "tree(leaf=64,lround=rz)", 0x7F7FFFFFu, 0x7F80);
    expect_tree(o, "tree(leaf=64,lround=rz,final=rz)", 0x7F7FFFFFu, 0x7F7F);
    free(o);
}

Test(tree_oracle, the_fast_path_takes_lanes_fused_leaves_and_lround_rz_the_plain_oracle_the_rest)
{
    static const struct {
        const char *text;
        int fast;
    } routes[] = {{"tree(tile=256)", 1},
                  {"tree(lanes=2)", 1},
                  {"tree(leaf=64)", 1},
                  {"tree(leaf=128)", 1},
                  {"tree(lround=rz)", 1},
                  {"tree(leaf=16)", 1},
                  {"tree(lanes=64,chunk=32)", 1},
                  {"tree(lanes=65,chunk=32)", 0},
                  {"tree(prec=24,lanes=2)", 0},
                  {"tree(prec=24,fuse=257)", 0},
                  {"tree(prec=24,fuse=256,leaf=128)", 1},
                  {"tree(sum=((0,1),2))", 0}};
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        a4w4_contract c;
        cr_assert_eq(a4w4_contract_parse(routes[i].text, &c, NULL, 0), A4W4_OK);
        cr_expect_eq(a4w4_tree_fast_eligible(&c.tree), routes[i].fast, "%s", routes[i].text);
    }
}

/* ---- ordered(S) == tree(split=S) on every generated regime ------------------------------- */

static const a4w4_regime regimes[] = {A4W4_REGIME_EXACT,   A4W4_REGIME_NORMAL, A4W4_REGIME_WIDE,
                                      A4W4_REGIME_SPECIAL, A4W4_REGIME_CODE0,  A4W4_REGIME_TINY,
                                      A4W4_REGIME_RANGE};

static int nan16(uint16_t b) { return (b & 0x7F80) == 0x7F80 && (b & 0x7F); }

/* Generated operands of regime r (every row). */
static void generate(a4w4_case *c, a4w4_sample *s, a4w4_case_data *d)
{
    cr_assert_eq(a4w4_sample_make(c->M, c->N, c->K, c->seed, c->name, 1, s), A4W4_OK);
    cr_assert_eq(a4w4_case_generate(c, s, d), A4W4_OK, "generate %s", c->name);
}

Test(tree_ordered, tree_split_s_is_bit_identical_to_ordered_s_on_every_regime)
{
    static const size_t Ks[] = {512, 1056, 2080};
    static const unsigned Ss[] = {1, 2, 3, 4, 8};
    for (size_t r = 0; r < sizeof regimes / sizeof regimes[0]; r++)
        for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++) {
            char name[64];
            snprintf(name, sizeof name, "tree_eq_%zu_%zu", r, Ks[ki]);
            a4w4_case c = tu_case(name, 9, 17, Ks[ki], regimes[r], A4W4_ROUND_UP, 1000 + r * 7 + ki);
            a4w4_sample s;
            a4w4_case_data d;
            generate(&c, &s, &d);
            size_t n = c.M * c.N;
            uint16_t *yo = malloc(n * 2), *yt = malloc(n * 2);
            float *fo = malloc(n * 4), *ft = malloc(n * 4);
            cr_assert(yo && yt && fo && ft);
            for (size_t si = 0; si < sizeof Ss / sizeof Ss[0]; si++) {
                char text[32], err[256];
                snprintf(text, sizeof text, "tree(split=%u)", Ss[si]);
                a4w4_contract t;
                cr_assert_eq(a4w4_contract_parse(text, &t, err, sizeof err), A4W4_OK);
                cr_assert_eq(a4w4_gemm_ordered(d.a_fp4.data, d.a_scale.data, d.w_fp4.data,
                                               d.w_scale.data, c.M, c.N, c.K, Ss[si], yo, fo),
                             A4W4_OK);
                cr_assert_eq(a4w4_gemm_tree(d.a_fp4.data, d.a_scale.data, d.w_fp4.data,
                                            d.w_scale.data, c.M, c.N, c.K, &t.tree, yt, ft),
                             A4W4_OK);
                for (size_t k = 0; k < n; k++) {
                    /* NaN meets NaN whatever its sign (contracts §4.2): the range regime's
                     * +Inf + -Inf gives ordered's fp32 sum the sign the hardware picks */
                    if (isnan(fo[k]) && isnan(ft[k]) && nan16(yo[k]) && nan16(yt[k]))
                        continue;
                    cr_assert_eq(yt[k], yo[k], "regime %d K=%zu S=%u output %zu: tree 0x%04x, "
                                 "ordered 0x%04x", (int)regimes[r], c.K, Ss[si], k, yt[k], yo[k]);
                    cr_assert_eq(a4w4_f32_bits(ft[k]), a4w4_f32_bits(fo[k]),
                                 "regime %d K=%zu S=%u output %zu fp32", (int)regimes[r], c.K,
                                 Ss[si], k);
                }
            }
            free(yo);
            free(yt);
            free(fo);
            free(ft);
            a4w4_case_data_free(&d);
            a4w4_sample_free(&s);
        }
}

/* ---- the fast path equals the plain oracle ----------------------------------------------- */

/* Trees exercising every key, the fast path's (lanes, fused leaves, lround=rz included) and
 * ones it hands to the threaded plain oracle. */
static const char *const fast_trees[] = {
    "tree()",
    "tree(order=desc)",
    "tree(fuse=2)",
    "tree(fuse=4,order=desc,final=rz)",
    "tree(fuse=3,reduce=pairwise)",
    "tree(reduce=pairwise)",
    "tree(round=rz)",
    "tree(round=rz,fuse=2,reduce=pairwise,combine=pairwise)",
    "tree(split=3,combine=pairwise)",
    "tree(split=0/96/160,fuse=5,final=rz)",
    "tree(fuse=4294967295)",
    "tree(split=8,reduce=pairwise,order=desc,round=rz)",
    "tree(fuse=7,round=rz,split=4,combine=pairwise,order=desc)",
    "tree(leaf=16,fuse=3)",
    "tree(leaf=1,order=desc,reduce=pairwise,round=rz)",
    "tree(leaf=8,split=0/96/160,combine=pairwise,fuse=5)",
    "tree(leaf=2,split=3,final=rz)",
    "tree(acc=bf16,prec=30,reduce=pairwise)",
    "tree(leaf=16,prec=27,fuse=4)",
    "tree(tile=256,fuse=2)",
    "tree(tile=96,reduce=pairwise,combine=pairwise,order=desc)",
    "tree(split=3,align=64,fuse=2)",
    "tree(split=5,align=32,combine=pairwise,round=rz)",
    "tree(lanes=2)",
    "tree(lanes=8,lanecomb=pairwise,order=desc)",
    "tree(lanes=4,chunk=256,fuse=3,reduce=pairwise)",
    "tree(lanes=8,lanecomb=xor,split=3)",
    "tree(lanes=16,chunk=64,lanecomb=xor,round=rz)",
    "tree(lanes=3,chunk=96,leaf=16,lanecomb=pairwise,combine=pairwise,split=0/96/160)",
    "tree(lanes=4,acc=bf16,fuse=2,tile=96)",
    "tree(lanes=4,chunk=8,leaf=2,order=desc)",
    "tree(lanes=2,chunk=16,leaf=16,lround=rz,reduce=pairwise)",
    "tree(leaf=64)",
    "tree(leaf=128,lround=rz,order=desc)",
    "tree(leaf=64,lround=rz,split=0/96/160,fuse=3,reduce=pairwise)",
    "tree(leaf=128,prec=27,fuse=4,round=rz)",
    "tree(leaf=64,lanes=2,chunk=128,lround=rz,final=rz,acc=bf16)",
    "tree(lround=rz,fuse=2)",
    "tree(leaf=8,lround=rz,split=3,combine=pairwise)",
    "tree(prec=24,lanes=2,chunk=64)",
};

/* Outputs of the fast path (path isa, threads) that differ from the plain oracle's bits
 * (bf16 and accumulator value); the first one's index in *first. */
static size_t fast_mismatches(const a4w4_case_data *d, const a4w4_tree *t, a4w4_fast_isa isa,
                              unsigned threads, const uint16_t *pb, const float *pf,
                              size_t *first, a4w4_fast_stats *st)
{
    size_t n = d->M * d->N, bad = 0;
    uint16_t *fb = malloc(n * 2);
    float *ff = malloc(n * 4);
    cr_assert(fb && ff);
    cr_assert_eq(a4w4_gemm_tree_fast_ex(d->a_fp4.data, d->a_scale.data, d->w_fp4.data,
                                        d->w_scale.data, d->M, d->N, d->K, t, fb, ff, threads, isa,
                                        st),
                 A4W4_OK);
    for (size_t k = 0; k < n; k++)
        if (fb[k] != pb[k] || a4w4_f32_bits(ff[k]) != a4w4_f32_bits(pf[k])) {
            if (!bad)
                *first = k;
            bad++;
        }
    free(fb);
    free(ff);
    return bad;
}

Test(tree_fast, equals_the_plain_oracle_on_every_regime_path_and_thread_count)
{
    static const size_t shapes[][3] = {{19, 35, 544}, {35, 19, 2080}, {5, 70, 288}};
    for (size_t r = 0; r < sizeof regimes / sizeof regimes[0]; r++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            char name[64];
            snprintf(name, sizeof name, "tree_fast_%zu_%zu", r, si);
            a4w4_case c = tu_case(name, shapes[si][0], shapes[si][1], shapes[si][2], regimes[r], A4W4_ROUND_UP,
                             77 + r * 5 + si);
            a4w4_sample s;
            a4w4_case_data d;
            generate(&c, &s, &d);
            size_t n = c.M * c.N;
            uint16_t *pb = malloc(n * 2);
            float *pf = malloc(n * 4);
            cr_assert(pb && pf);
            size_t ntrees = sizeof fast_trees / sizeof fast_trees[0];
            for (size_t ti = 0; ti < ntrees; ti++) {
                /* the -O0 builds take every A4W4_SWEEP_STRIDE-th (regime, shape, tree): 19
                 * trees, so each tree still meets several shapes and regimes */
                if (tu_sweep_skip((r * (sizeof shapes / sizeof shapes[0]) + si) * ntrees + ti))
                    continue;
                a4w4_contract t;
                char err[256];
                cr_assert_eq(a4w4_contract_parse(fast_trees[ti], &t, err, sizeof err), A4W4_OK);
                cr_assert_eq(a4w4_gemm_tree(d.a_fp4.data, d.a_scale.data, d.w_fp4.data,
                                            d.w_scale.data, c.M, c.N, c.K, &t.tree, pb, pf),
                             A4W4_OK);
                int eligible = a4w4_tree_fast_eligible(&t.tree);
                for (int isa = A4W4_FAST_AUTO + 1; isa < A4W4_FAST_ISA_COUNT; isa++) {
                    /* a tree the fast path does not take runs the plain oracle, threaded,
                     * whatever the path: checked once */
                    if (!a4w4_fast_isa_supported((a4w4_fast_isa)isa) ||
                        (!eligible && isa != A4W4_FAST_PORTABLE))
                        continue;
                    /* two threads on one path and shape: the threading is the driver's, not
                     * the path's (and idle OpenMP threads spin on a loaded machine) */
                    unsigned maxth =
                        si == 0 && isa == (int)a4w4_fast_isa_resolve(A4W4_FAST_AUTO) ? 2 : 1;
                    for (unsigned th = 1; th <= maxth; th++) {
                        size_t first = 0;
                        a4w4_fast_stats st;
                        size_t bad = fast_mismatches(&d, &t.tree, (a4w4_fast_isa)isa, th, pb, pf,
                                                     &first, &st);
                        cr_assert_eq(bad, 0, "%s regime %d %zux%zux%zu %s threads %u: %zu "
                                     "outputs differ, first %zu", fast_trees[ti], (int)regimes[r],
                                     c.M, c.N, c.K, a4w4_fast_isa_name((a4w4_fast_isa)isa), th,
                                     bad, first);
                        size_t by_tree = st.tree + st.trivial;
                        if (eligible)
                            cr_assert_eq(by_tree, n, "%s: %zu of %zu outputs by the fast path",
                                         fast_trees[ti], by_tree, n);
                        else
                            cr_assert_eq(st.plain, n);
                    }
                }
            }
            free(pb);
            free(pf);
            a4w4_case_data_free(&d);
            a4w4_sample_free(&s);
        }
}

Test(tree_fast, a_node_sum_two_doubles_cannot_hold_is_recomputed_exactly)
{
    /* one fused node of +0, 2^24, 1, 2^-40, 2^-100, -2^-40 (fuse=5, one leaf per block). In
     * double: s = 2^24 + 1 exactly; the errors 2^-40 and 2^-100 do not fit one double (c keeps
     * 2^-40, loses 2^-100 into its error bound), and -2^-40 cancels c to 0: the two doubles say
     * 2^24 + 1, a tie that RNE takes to 2^24. The exact sum 2^24 + 1 + 2^-100 is above the tie:
     * 2^24 + 2 (0x4B800001). The bound 2^-100 is not below |c2| = 0, so the fast path flags the
     * output and recomputes it with the plain oracle. */
    one_output *o = out_new(160);
    block_pow2(o, 0, 24);
    block_pow2(o, 1, 0);
    block_pow2(o, 2, -40);
    block_pow2(o, 3, -100);
    set_a(o, 128, 10, 87); /* -1.0 * 2^-40 */
    expect_tree(o, "tree(fuse=5)", 0x4B800001u, 0x4B80);
    a4w4_contract t;
    char err[256];
    cr_assert_eq(a4w4_contract_parse("tree(fuse=5)", &t, err, sizeof err), A4W4_OK);
    for (int isa = A4W4_FAST_AUTO + 1; isa < A4W4_FAST_ISA_COUNT; isa++) {
        if (!a4w4_fast_isa_supported((a4w4_fast_isa)isa))
            continue;
        uint16_t b = 0;
        float f = 0;
        a4w4_fast_stats st;
        cr_assert_eq(a4w4_gemm_tree_fast_ex(o->a, o->as, o->w, o->ws, 1, 1, 160, &t.tree, &b, &f, 1,
                                            (a4w4_fast_isa)isa, &st),
                     A4W4_OK);
        cr_expect_eq(a4w4_f32_bits(f), 0x4B800001u, "%s: 0x%08x",
                     a4w4_fast_isa_name((a4w4_fast_isa)isa), a4w4_f32_bits(f));
        cr_expect_eq(st.tree_redone, 1, "%s", a4w4_fast_isa_name((a4w4_fast_isa)isa));
    }
    free(o);
}

/* ---- the fast path's nodes of finite precision and bf16 accumulators ---------------------
 * (ref/a4w4_tree_fast.c, contracts §4.2 rule 4 and "The fast path"): hand-computed outputs of
 * an aligned, truncated fused node, then the fast path bit-equal to the plain oracle over a
 * grid of contracts (leaf=1 with fuse=16, prec 8/13/24/26, round rz and rne, acc=bf16,
 * split=0/1408/2816 at K=4096) on every generated regime and on adversarial operands (scales
 * at the ends of E8M0's range: leaves that overflow, underflow or cancel inside one node). */

static a4w4_tree parse_tree(const char *text)
{
    a4w4_contract c;
    char err[256] = "";
    cr_assert_eq(a4w4_contract_parse(text, &c, err, sizeof err), A4W4_OK, "%s: %s", text, err);
    cr_assert_eq(c.kind, A4W4_CONTRACT_TREE, "%s", text);
    return c.tree;
}

/* ---- hand-computed: one output, K = 64 ----------------------------------------------------
 * W is 1.0 everywhere (code 2, scale 127), so leaf=1's leaf k is A[k]. A[0] = 1.0 (block 0,
 * scale 127); A[32..34] = 1.5 * 2^-25 (code 3, block 1 scale 102); the rest 0. With fuse=16
 * the chain's groups are k 0..15, 16..31, 32..47, 48..63: after the first two acc = 1.0;
 * the third node's inputs are acc = 1.0 (e_max = 0) and three leaves 3 * 2^-26.
 *  prec=26: q = 2^(0 - 26 + 1) = 2^-25, each leaf truncates to 1 * q: s = 1 + 3 * 2^-25, i.e.
 *    0.75 of fp32's ulp 2^-23 at 1.0: rz keeps 1.0 (0x3F800000), rne takes 1 + 2^-23
 *    (0x3F800001).
 *  prec=27: q = 2^-26, the leaves are exact: s = 1 + 9 * 2^-26 = 1 + 1.125 ulp: rz gives
 *    1 + 2^-23 (0x3F800001); so does prec=0 with rz.
 *  acc=bf16, prec=26, rne: s = 1 + 3 * 2^-25 is far below half of bf16's ulp 2^-7: 1.0.
 * The last group (zeros) leaves acc unchanged; every bf16 output is 0x3F80. */
typedef struct {
    uint8_t a[32], as[2], w[32], ws[2];
} k64_output;

static void expect_k64(const k64_output *o, const char *text, uint32_t want)
{
    a4w4_tree t = parse_tree(text);
    a4w4_dot_operands op = {o->a, o->as, o->w, o->ws, 64};
    uint16_t b = 0;
    float f = 0;
    cr_assert_eq(a4w4_dot_tree(&op, &t, &b, &f), A4W4_OK);
    cr_expect_eq(a4w4_f32_bits(f), want, "%s plain: 0x%08x, want 0x%08x", text,
                 a4w4_f32_bits(f), want);
    cr_expect_eq(b, 0x3F80, "%s plain bf16 0x%04x", text, b);
    for (int isa = A4W4_FAST_AUTO + 1; isa < A4W4_FAST_ISA_COUNT; isa++) {
        if (!a4w4_fast_isa_supported((a4w4_fast_isa)isa))
            continue;
        a4w4_fast_stats st;
        cr_assert_eq(a4w4_gemm_tree_fast_ex(o->a, o->as, o->w, o->ws, 1, 1, 64, &t, &b, &f, 1,
                                            (a4w4_fast_isa)isa, &st),
                     A4W4_OK);
        cr_expect_eq(st.tree, 1, "%s: not by the fast path", text);
        cr_expect_eq(a4w4_f32_bits(f), want, "%s on %s: 0x%08x, want 0x%08x", text,
                     a4w4_fast_isa_name((a4w4_fast_isa)isa), a4w4_f32_bits(f), want);
        cr_expect_eq(b, 0x3F80, "%s on %s: bf16 0x%04x", text,
                     a4w4_fast_isa_name((a4w4_fast_isa)isa), b);
    }
}

Test(tree_fast_prec, a_fused_node_truncates_its_inputs_to_p_bits_below_the_largest)
{
    k64_output o;
    memset(&o, 0, sizeof o);
    memset(o.w, 0x22, sizeof o.w);
    o.ws[0] = o.ws[1] = 127;
    o.as[0] = 127;
    o.as[1] = 102;
    a4w4_fp4_set(o.a, 0, 2);
    for (size_t k = 32; k < 35; k++)
        a4w4_fp4_set(o.a, k, 3);
    expect_k64(&o, "tree(leaf=1,fuse=16,prec=26,round=rz)", 0x3F800000u);
    expect_k64(&o, "tree(leaf=1,fuse=16,prec=26,round=rne)", 0x3F800001u);
    expect_k64(&o, "tree(leaf=1,fuse=16,prec=27,round=rz)", 0x3F800001u);
    expect_k64(&o, "tree(leaf=1,fuse=16,round=rz)", 0x3F800001u);
    expect_k64(&o, "tree(leaf=1,fuse=16,prec=26,round=rne,acc=bf16)", 0x3F800000u);
}

/* ---- the grid: fast == plain ------------------------------------------------------------ */

/* Contracts the fast path now takes (prec > 0 with fuse <= 256, acc=bf16), the kernels' own
 * first; split=0/1408/2816 needs K > 2816 (the K = 4096 shape only). */
static const struct {
    const char *text;
    int needs_k4096;
} grid[] = {
    {"tree(leaf=1,fuse=16,prec=26,round=rz)", 0},
    {"tree(leaf=1,fuse=16,prec=26,round=rz,split=0/1408/2816)", 1},
    {"tree(leaf=1,fuse=16,prec=26,round=rz,split=0/1408/2816,combine=pairwise)", 1},
    {"tree(leaf=1,fuse=16,prec=24,round=rz,split=0/1408/2816,final=rz)", 1},
    {"tree(leaf=1,fuse=16,prec=13,round=rne)", 0},
    {"tree(leaf=1,fuse=16,prec=8,round=rz,acc=bf16)", 0},
    {"tree(leaf=1,fuse=16,prec=26,round=rz,acc=bf16,split=0/1408/2816)", 1},
    {"tree(leaf=2,fuse=3,prec=24,reduce=pairwise,order=desc)", 0},
    {"tree(leaf=32,fuse=4,prec=26,round=rz,split=3,combine=pairwise)", 0},
    {"tree(leaf=8,prec=13,round=rz)", 0},
    {"tree(leaf=16,fuse=1,prec=8,reduce=pairwise,round=rne)", 0},
    {"tree(leaf=4,fuse=256,prec=64,round=rz,order=desc)", 0},
    {"tree(leaf=1,fuse=255,prec=53,reduce=pairwise,acc=bf16,final=rz)", 0},
    {"tree(leaf=32,fuse=7,prec=40,split=5,combine=pairwise,round=rz)", 0},
    {"tree(acc=bf16)", 0},
    {"tree(acc=bf16,round=rz,reduce=pairwise)", 0},
    {"tree(leaf=1,acc=bf16,fuse=16,round=rz,split=0/1408/2816,final=rz)", 1},
    {"tree(leaf=4,acc=bf16,fuse=5,order=desc,combine=pairwise,split=3)", 0},
};

/* Adversarial operands: random codes, scales drawn from E8M0's ends and middle (0, 1, 2;
 * 100..140; 250..254) and now and then 0xFF, so that one node meets leaves that overflow
 * fp32, that are subnormal or lost to the alignment, and that cancel. */
static void adversarial(a4w4_case_data *d, uint64_t seed)
{
    tu_rng r;
    tu_xorshift64_seed(&r, seed);
    static const uint8_t ends[] = {0, 1, 2, 250, 251, 252, 253, 254};
    uint8_t *sc[2] = {d->a_scale.data, d->w_scale.data};
    size_t ns[2] = {d->M * (d->K / 32), d->N * (d->K / 32)};
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < ns[s]; i++) {
            unsigned pick = tu_xorshift64_below(&r, 64);
            sc[s][i] = pick == 0 ? 0xFF
                       : pick < 24 ? ends[tu_xorshift64_below(&r, sizeof ends)]
                                   : (uint8_t)(100 + tu_xorshift64_below(&r, 41));
        }
    uint8_t *fp[2] = {d->a_fp4.data, d->w_fp4.data};
    size_t nb[2] = {d->M * (d->K / 2), d->N * (d->K / 2)};
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < nb[s]; i++)
            fp[s][i] = (uint8_t)tu_xorshift64(&r);
}

/* Fast and plain outputs (bf16 and accumulator bits) of tree t on d; returns the mismatches
 * and asserts that every output was the fast path's (an eligible tree) and none redone
 * beyond prec = 0's rare undecided sums. */
static size_t prec_mismatches(const a4w4_case_data *d, const a4w4_tree *t, unsigned threads,
                         size_t *first)
{
    size_t n = d->M * d->N, bad = 0;
    uint16_t *pb = malloc(n * 2), *fb = malloc(n * 2);
    float *pf = malloc(n * 4), *ff = malloc(n * 4);
    cr_assert(pb && fb && pf && ff);
    cr_assert_eq(a4w4_gemm_tree(d->a_fp4.data, d->a_scale.data, d->w_fp4.data, d->w_scale.data,
                                d->M, d->N, d->K, t, pb, pf),
                 A4W4_OK);
    a4w4_fast_stats st;
    cr_assert_eq(a4w4_gemm_tree_fast_ex(d->a_fp4.data, d->a_scale.data, d->w_fp4.data,
                                        d->w_scale.data, d->M, d->N, d->K, t, fb, ff, threads,
                                        A4W4_FAST_AUTO, &st),
                 A4W4_OK);
    cr_assert_eq(st.tree + st.trivial, n, "%zu of %zu outputs by the fast path",
                 st.tree + st.trivial, n);
    for (size_t k = 0; k < n; k++)
        if (fb[k] != pb[k] || a4w4_f32_bits(ff[k]) != a4w4_f32_bits(pf[k])) {
            if (!bad)
                *first = k;
            bad++;
        }
    if (bad)
        cr_log_error("first mismatch %zu: fast 0x%04x 0x%08x, plain 0x%04x 0x%08x", *first,
                     fb[*first], a4w4_f32_bits(ff[*first]), pb[*first], a4w4_f32_bits(pf[*first]));
    free(pb);
    free(fb);
    free(pf);
    free(ff);
    return bad;
}

/* Regimes: the generator's (A4W4_REGIME_COUNT of them), then -1 for adversarial(). */
static const int grid_regimes[] = {A4W4_REGIME_NORMAL, A4W4_REGIME_EXACT, A4W4_REGIME_WIDE,
                              A4W4_REGIME_SPECIAL, A4W4_REGIME_CODE0, A4W4_REGIME_TINY, -1};

Test(tree_fast_prec, equals_the_plain_oracle_on_a_grid_of_contracts_and_operands)
{
    /* K = 4096 for the kernels' split; a ragged shape (N not a multiple of 16, M past one
     * tile of rows) at K = 544 */
    static const size_t shapes[][3] = {{3, 17, 4096}, {19, 21, 544}};
    size_t point = 0;
    for (size_t ri = 0; ri < sizeof grid_regimes / sizeof grid_regimes[0]; ri++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            a4w4_regime reg = grid_regimes[ri] < 0 ? A4W4_REGIME_NORMAL : (a4w4_regime)grid_regimes[ri];
            char name[64];
            snprintf(name, sizeof name, "tree_prec_%zu_%zu", ri, si);
            a4w4_case c = tu_case(name, shapes[si][0], shapes[si][1], shapes[si][2], reg, A4W4_ROUND_UP,
                             900 + ri * 3 + si);
            a4w4_sample s;
            a4w4_case_data d;
            generate(&c, &s, &d);
            if (grid_regimes[ri] < 0)
                adversarial(&d, c.seed);
            for (size_t gi = 0; gi < sizeof grid / sizeof grid[0]; gi++) {
                if (grid[gi].needs_k4096 && c.K != 4096)
                    continue;
                if (tu_sweep_skip(point++))
                    continue;
                a4w4_tree t = parse_tree(grid[gi].text);
                cr_assert(a4w4_tree_fast_eligible(&t), "%s not taken", grid[gi].text);
                size_t first = 0, bad = prec_mismatches(&d, &t, si == 1 ? 2 : 1, &first);
                cr_assert_eq(bad, 0, "%s, regime %d, %zux%zux%zu: %zu outputs differ, first %zu",
                             grid[gi].text, grid_regimes[ri], c.M, c.N, c.K, bad, first);
            }
            a4w4_case_data_free(&d);
            a4w4_sample_free(&s);
        }
}

Test(tree_fast_prec, takes_prec_trees_up_to_the_fuse_limit_and_bf16_accumulators)
{
    a4w4_tree t = parse_tree("tree(prec=26,fuse=256)");
    cr_expect(a4w4_tree_fast_eligible(&t));
    t = parse_tree("tree(prec=26,fuse=257)");
    cr_expect(!a4w4_tree_fast_eligible(&t), "fuse 257 > A4W4_TREE_FAST_PREC_FUSE_MAX");
    t = parse_tree("tree(acc=bf16,fuse=4294967295)");
    cr_expect(a4w4_tree_fast_eligible(&t));
    cr_expect(!a4w4_tree_fast_eligible(NULL));
}
