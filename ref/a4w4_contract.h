/* a4w4_contract.h — accumulation contracts as values (contracts §4.1, §4.2): exact,
 * ordered(S), bounded(S) and tree(key=value,...) in one struct, the one strict parser of their
 * text, the one canonical printer, the bit-exact oracle of a contract, and contract sets (the
 * file form: rules chosen by the case shape). The tree's own fields and oracle: a4w4_tree.h.
 *
 * Errors: functions return A4W4_OK or a negative a4w4_status and, where they take one, write
 * one line into err (errlen bytes; err may be NULL) naming the offending input and the rule.
 * Nothing here prints. */
#ifndef A4W4_CONTRACT_H
#define A4W4_CONTRACT_H

#include <stddef.h>
#include <stdint.h>

#include "a4w4_tree.h"

/* The longest contract text, its terminating NUL included. The canonical text of every
 * contract the parser accepts fits (the limits below keep it under 2200 bytes: a sum tree of
 * 256 blocks and 512 nodes is at most 1944 bytes of brackets, digits and commas). */
#define A4W4_CONTRACT_MAX 4096
typedef enum {
    A4W4_CONTRACT_EXACT = 0,
    A4W4_CONTRACT_ORDERED = 1,
    A4W4_CONTRACT_BOUNDED = 2,
    A4W4_CONTRACT_TREE = 3,
    A4W4_CONTRACT_ATOMIC = 4 /* atomic(S): bf16 split values added in any order (§4.1) */
} a4w4_contract_kind;

/* One accumulation contract. split is S of ordered(S), bounded(S) and atomic(S) (plain
 * "bounded" is bounded(1)), 1 for exact and tree; tree is set for kind TREE only. */
typedef struct {
    a4w4_contract_kind kind;
    unsigned split;
    a4w4_tree tree;
} a4w4_contract;

/* Parse one contract text, strictly: "exact", "ordered(S)", "bounded", "bounded(S)" (S a
 * decimal 1..65536, no sign, no leading zero, no spaces), "atomic(S)" (S 1..6: its S! orders
 * are enumerated, contracts §4.1 "atomic(S)"; a larger S is refused), or "tree(key=value,...)"
 * with the keys of contracts §4.2 in any order, each at most once (omitted keys take
 * ordered(1)'s values), or the general form "tree(sum=(...),...)": a node is '(' then its
 * inputs (block indices, decimals, or nodes), ','-separated, then ')'; only prec, round, acc,
 * final and lround go with sum (contracts §4.2 "The general form"). No whitespace anywhere.
 * A4W4_OK with *c set, or A4W4_EINVAL with err = one line naming the text, the key and the rule
 * (e.g. "contract 'tree(leaf=3)': leaf=3: leaf is one of 1, 2, 4, 8, 16, 32"); *c is then
 * untouched. */
int a4w4_contract_parse(const char *text, a4w4_contract *c, char *err, size_t errlen);

/* The canonical text of c into buf (len bytes): "exact", "ordered(S)", "bounded(S)",
 * "atomic(S)", or
 * "tree(leaf=..,order=..,fuse=..,reduce=..,prec=..,round=..,acc=..,split=..,combine=..,
 * final=..)" with every key, in that order, then lround=rz when set, lanes=L,chunk=C,
 * lanecomb=.. when L > 1, and tile=T when set (contracts §4.2: the later keys are written
 * only when they leave ordered(1)'s values); the general form as "tree(prec=..,round=..,
 * acc=..,final=..[,lround=rz],sum=(...))". Returns the text's length, or -1 when it does not
 * fit in len (buf then holds "") or c is not a valid contract. Parsing the text gives c back. */
int a4w4_contract_format(const a4w4_contract *c, char *buf, size_t len);

/* 1 when a and b have the same canonical text, else 0. */
int a4w4_contract_same(const a4w4_contract *a, const a4w4_contract *b);

/* The bit-exact oracle of contract c over every output, plain: exact -> a4w4_gemm_exact,
 * ordered(S) -> a4w4_gemm_ordered, tree -> a4w4_gemm_tree (arguments and errors theirs);
 * atomic(S) -> its split values added in split order, one member of each output's set (a
 * kernel is judged by membership, ref/a4w4_atomic.h a4w4_atomic_member; contracts §4.1);
 * A4W4_EUNSUPPORTED for bounded(S), which has no bit-exact answer (contracts §4.1). y_f32
 * (optional) receives the fp32 or accumulator values. */
int a4w4_gemm_contract(const a4w4_contract *c, const uint8_t *a_fp4, const uint8_t *a_scale,
                       const uint8_t *w_fp4, const uint8_t *w_scale, size_t M, size_t N,
                       size_t K, uint16_t *y_bf16, float *y_f32);

/* 1 when s is a contract string the harness knows (contracts §4.1, §4.2): "exact",
 * "bounded", "ordered(S)" or "bounded(S)" with S a decimal integer in 1..65536 without sign,
 * spaces or leading zeros, or "tree(key=value,...)" (a4w4_contract_parse), or the file form's
 * rules, `when PRED,...: CONTRACT` one per line, the first starting with "when" (contracts
 * §4.2 "The file form", a4w4_contract_text_is_rules); else 0 (also for NULL). */
int a4w4_contract_valid(const char *s);

/* 1 when contract text s is the file form's rules: its first line that is neither blank nor a
 * '#' comment starts with "when ", or a second such line follows it (contracts §4.2 "The file
 * form": the set parser then says what is wrong with it, e.g. a rule no shape can reach); 0
 * for one contract line (parsed strictly: no spaces, no second line) and for NULL. */
int a4w4_contract_text_is_rules(const char *s);

/* 1 when contract texts a and b (a4w4_contract_valid's forms) name the same contract: the same
 * canonical form (plain "bounded" is "bounded(1)", contracts §4.1; a tree's keys in any order,
 * contracts §4.2; a rule set's rules in order, comments and spacing aside); 0 when they differ
 * or either is not valid. Each canonical text must fit 16 KiB (a bundle's contract text is at
 * most A4W4_CONTRACT_MAX bytes). */
int a4w4_contract_text_same(const char *a, const char *b);

/* ---- contract sets: the file form (contracts §4.2 "The file form") --------------------
 * Text, one rule per line: `[when PRED[,PRED...]:] CONTRACT`; '#' starts a comment; blank
 * lines are skipped; spaces and tabs around the words, the ':' and the ','s are allowed. PRED
 * is `M|N|K|Mpad` then `==`, `!=`, `<`, `<=`, `>` or `>=` then a decimal, or `X%D==R` (D >= 1,
 * R < D); `Mpad` is the dispatcher's padded-M bucket, getPaddedM(M, N, K, 0) (contracts §5.1:
 * M rounded up to 16 up to 256, to 32 up to 1024, to 64 up to 4096, else to 128). The first
 * rule whose predicates all hold for a shape is its contract. */
#define A4W4_RULE_MAX_PREDS 8

typedef enum {
    A4W4_PRED_EQ = 0,
    A4W4_PRED_NE,
    A4W4_PRED_LT,
    A4W4_PRED_LE,
    A4W4_PRED_GT,
    A4W4_PRED_GE,
    A4W4_PRED_MOD /* X % mod == value */
} a4w4_pred_op;

typedef struct {
    char dim; /* 'M', 'N', 'K', or 'P': Mpad, the padded-M bucket of M */
    a4w4_pred_op op;
    uint64_t value;
    uint64_t mod; /* A4W4_PRED_MOD only */
} a4w4_shape_pred;

typedef struct {
    unsigned line; /* 1-based line of the text it came from */
    size_t npreds;
    a4w4_shape_pred preds[A4W4_RULE_MAX_PREDS];
    a4w4_contract contract;
} a4w4_contract_rule;

typedef struct {
    size_t n;
    a4w4_contract_rule *rules; /* malloc'ed; a4w4_contract_set_free */
} a4w4_contract_set;

/* Parse the file form (a single contract text is a set of one rule). A4W4_OK with *set
 * (free with a4w4_contract_set_free); A4W4_EINVAL with err = "line L: <rule>" (a bad
 * predicate or contract, a predicate no shape satisfies ("line L: predicate 'Mpad==17' holds
 * for no shape: <why>": M, N >= 1, K a positive multiple of 32, Mpad a value of getPaddedM),
 * a rule that can never match: after an unconditional one, or after one whose predicates are
 * all among its own; text with no rule) and *set empty;
 * A4W4_ENOMEM. */
int a4w4_contract_set_parse(const char *text, a4w4_contract_set *set, char *err, size_t errlen);

/* The contract of the first rule matching shape (M, N, K), or NULL when none does. */
const a4w4_contract *a4w4_contract_set_find(const a4w4_contract_set *set, size_t M, size_t N,
                                            size_t K);

/* The canonical text of a set: one rule per line ("when K>=4096,N%512==0: tree(...)"),
 * '\n'-separated, no trailing newline. Length, or -1 when it does not fit in len. */
int a4w4_contract_set_format(const a4w4_contract_set *set, char *buf, size_t len);

/* A set of one unconditional rule holding c. A4W4_OK or A4W4_ENOMEM. */
int a4w4_contract_set_single(const a4w4_contract *c, a4w4_contract_set *set);

/* A copy of src into dst (dst's old rules are not freed). A4W4_OK or A4W4_ENOMEM. */
int a4w4_contract_set_copy(const a4w4_contract_set *src, a4w4_contract_set *dst);

void a4w4_contract_set_free(a4w4_contract_set *set);

#endif
