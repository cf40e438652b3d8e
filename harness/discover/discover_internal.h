/* discover_internal.h — what the files of the discover engine share (discover.c: rounds and
 * results; discover_probe.c: probe patterns; discover_tree.c: the ordered tree over blocks and
 * the model family's trees; discover_numeric.c: numeric and element probes and their reading;
 * discover_fit.c: candidates and validation). Contracts §4.4 states and proves every rule
 * used here. Not a public header: only the discover_*.c files include it. */
#ifndef A4W4_DISCOVER_INTERNAL_H
#define A4W4_DISCOVER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "a4w4_contract.h"
#include "a4w4_tree.h"
#include "discover.h"
#include "gen.h"

/* ---- evidence text ------------------------------------------------------------------------ */

typedef struct {
    char *s;
    size_t len, cap;
} dc_text;

void dc_text_add(dc_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dc_text_free(dc_text *t);

struct dc_shape_s;

/* ---- probes (contracts §4.4) --------------------------------------------------------------
 * A probe is one patterned row: per block a scale exponent and 32 E2M1 codes; the other
 * operand is 1.0 in every element at scale 2^0, so the output equals the pattern's sum under
 * the kernel's tree. Kinds and their parameters (p[0..5]):
 *   DC_GAP_COUNT  t, side (0 below / 1 above), window [p2, p3): +2^34 at block t-1, -2^34 at
 *                 t, a unit (+1 below, -1 above) at element 0 of every window block
 *   DC_GAP_PAIR   t, side, k1, k2 (-1: none): +2^26 / -2^26 at t-1 / t, units of value 1 at
 *                 k1 and 2 at k2 (sign + below, - above)
 *   DC_N1         block b, sign: one block of value +-129.5
 *   DC_N2         x, u, y: +2^10 at x, +1 at u, -2^10 at y
 *   DC_N3         x, u, y, sign: +-2^24 at x, +-3 at u, -+2^24 at y
 *   DC_N4A        p, m, s, d, between: +2^60 at p, -2^60 at m, +2^(60-d) at s; between = 1
 *                 swaps the blocks of -2^60 and 2^(60-d) (the small input between the bigs)
 *   DC_N4B        x, u, y, d, sign, e: +2^e at x, sign*(1 + 2^-d) at u, -2^e at y
 *   DC_N4E        x, u, y, d, rne, e: +2^e at x; RZ form: -2^(e-d) at element 0 of u; RNE
 *                 form: +1 and +0.5 at elements 0 and 1 of u (d unused); -2^e at y
 *                 (e = 24 for an fp32 accumulator, 8 for bf16)
 *   DC_E          x, u, y, first, second, e: +2^e at x, +1 at element `first` of u, -1 at
 *                 element `second` of u, -2^e at y
 *   DC_G_BLOCK    p, m, u, q, P: +2^60 at p, -2^60 at m, 1.5 * 2^(60-P) at elements 0 and q
 *                 of u
 *   DC_G_ELEM     x, u, y, q, P, e: +2^e at x, -1.5 * 2^(e-P) at elements 0 and q of u,
 *                 -2^e at y
 *   DC_ZERO       nothing: every element 0 (a filler slot; its output must be +0)
 *   DC_FPREV_PAIR i, j: +2^32 at block i, -2^32 at block j, +1 at every other block (FPRev's
 *                 pairwise probe: the output counts the units outside the children of
 *                 LCA(i, j) that hold i and j; discover_fprev.c) */
typedef enum {
    DC_ZERO = 0,
    DC_GAP_COUNT,
    DC_GAP_PAIR,
    DC_N1,
    DC_N2,
    DC_N3,
    DC_N4A,
    DC_N4B,
    DC_N4E,
    DC_E,
    DC_G_BLOCK,
    DC_G_ELEM,
    DC_FPREV_PAIR
} dc_kind;

typedef struct {
    dc_kind kind;
    int32_t p[6];
} dc_probe;

/* The exponents the probes use (contracts §4.4). */
#define DC_E_COUNT 34 /* window probes: up to 256 units swamped in fp32 by RNE and RZ */
#define DC_E_PAIR 26  /* two-unit probes: 1 + 2 = 3 < half an ulp of 2^26, exact at P >= 27 */
#define DC_WINDOW 256 /* units per window probe: a count up to 256 is exact in bf16 */
#define DC_E_FPREV 32 /* pairwise probes: up to 254 units below half an ulp of 2^32 in fp32 */

/* A growing list of probes; oom is set (and the probe dropped) when it cannot grow. */
typedef struct {
    dc_probe *v;
    size_t n, cap;
    int oom;
} dc_plist;

void dc_plist_add(dc_plist *L, dc_kind kind, int32_t a, int32_t b, int32_t c, int32_t d,
                  int32_t e, int32_t f);

/* Write probe pr into one row: fp4 [K/2] packed codes, scale [K/32] E8M0 codes. */
void dc_probe_write(const dc_probe *pr, size_t K, uint8_t *fp4, uint8_t *scale);

/* A short description of a probe for the evidence ("gap 7 below [0, 6)"). */
void dc_probe_describe(const dc_probe *pr, char *buf, size_t len);

/* Where probe i of the shape's current round ran: "round 2, call c0, row 17" (column when
 * the patterns sit on W). */
void dc_probe_where(const struct dc_shape_s *s, size_t i, char *buf, size_t len);

/* ---- the ordered tree over blocks (contracts §4.4, steps 1 and 2) -------------------------
 * gaps: for every gap t in 1..n-1 between blocks t-1 and t, the children of LCA(t-1, t) that
 * hold them: c_{t-1} = [lo[t], t) and c_t = [t, hi[t]). */
typedef struct {
    size_t n;
    uint32_t *lo, *hi; /* [n], index 0 unused */
} dc_gaps;

/* A node: its leaf interval and the boundaries of its children (nchild + 1 values from
 * bounds[first]). */
typedef struct {
    uint32_t lo, hi, first, nchild;
    int32_t parent;
} dc_node;

typedef struct {
    size_t n;
    dc_node *nodes;
    size_t nnodes;
    uint32_t *bounds;
    size_t nbounds;
    int32_t *leaf_parent; /* [n] */
    int32_t root;         /* -1 when n == 1 */
} dc_tree;

int dc_gaps_init(dc_gaps *g, size_t n);
void dc_gaps_free(dc_gaps *g);

/* Build the ordered tree from gap data. 0, or -1 with err naming the first gap that breaks an
 * ordered tree (crossing or unlinked intervals, a missing node); -2 out of memory. */
int dc_tree_build(const dc_gaps *g, dc_tree *t, char *err, size_t errlen);
void dc_tree_free(dc_tree *t);

/* The node that is the lowest common ancestor of leaves i != j, and the depth of a node. */
int32_t dc_tree_lca(const dc_tree *t, size_t i, size_t j);

/* The child index of node v holding leaf k (-1 when k is outside v). */
int dc_tree_child_of(const dc_tree *t, int32_t v, size_t k);

/* The model family's structure over blocks (contracts §4.2 rules 1, 3, 5, 6 restricted to
 * element 0 of every block): order, blocks per node, reduce, splits (first block of each),
 * combine. */
typedef struct {
    a4w4_tree_order order;
    unsigned fuse; /* blocks per node, F_b */
    a4w4_tree_reduce reduce, combine;
    size_t nsplits;
    uint32_t start[A4W4_TREE_MAX_BOUNDS + 1]; /* first block of each split; start[0] = 0 */
} dc_family;

/* The gap data of the family's tree over n blocks into g (g initialised for n). 0 or -2. */
int dc_family_gaps(const dc_family *f, size_t n, dc_gaps *g);

/* Every family structure whose tree equals the observed gap data, best first (fewer splits,
 * smaller fuse, chain before pairwise, asc before desc, combine chain before pairwise).
 * Returns the count (at most max), or -2 out of memory. */
int dc_family_parse(const dc_gaps *g, dc_family *out, size_t max);

/* The splits alone, for a kernel whose combine changes run to run: from every split start
 * the longest interval whose gaps are one split's under some order, fuse and reduce (the
 * combine-level gaps are ignored); the structure with the fewest splits into *out. Returns 1,
 * or -2 out of memory. */
int dc_family_splits(const dc_gaps *g, dc_family *out);

/* ---- numeric and element probes (contracts §4.4, steps 3 to 6) --------------------------- */

/* What the numeric steps decided, for one shape. */
typedef struct {
    int round1;             /* first rounding to bf16: A4W4_ROUND_RNE / RZ, -1 unknown */
    int acc;                /* A4W4_ACC_FP32 / BF16, -1 unknown */
    int round;              /* node rounding, -1 unknown */
    int prec_lo, prec_hi;   /* P in [prec_lo, prec_hi]; 0/0: exact; prec_hi 65: "or exact" */
    int elem_span;          /* E: elements per node when below a block (1..16), 32: none below */
    int leaf;               /* G when decided (P > 0), 0 unknown */
    int order_dependent;    /* a node's sum changed with its inputs' places */
} dc_numeric;

/* The pieces of a rule of K whose split count changes with K, and the K of its bisection
 * per family (contracts §4.4, "The split count as a function of K"). */
#define DC_MAX_STEPS 16
#define DC_MAX_KSPLIT 24

/* ---- the per-shape analysis state --------------------------------------------------------- */

typedef enum {
    DC_PHASE_STRUCTURE = 0, /* round 1: window and two-unit gap probes, validation cases */
    DC_PHASE_SCAN,          /* the window counts disagreed: every position, two units each */
    DC_PHASE_NUMERIC,       /* numeric and element probes */
    DC_PHASE_LEAF,          /* P > 0: the leaf width inside a node */
    DC_PHASE_FPREV,         /* no candidate fits: FPRev's pairwise probes over every block pair */
    DC_PHASE_DONE
} dc_phase;

typedef struct dc_shape_s {
    a4w4_shape sh;
    size_t n;           /* blocks */
    int w_side;         /* 1: patterns on W rows (N > M) */
    size_t slots;       /* probes per call */
    size_t probed;      /* the shape whose probes stand for this one (group leader) */
    dc_phase phase;
    /* the current round's probes and their outputs (one value per probe and repeat) */
    dc_probe *probes;
    size_t nprobes;
    size_t first_call;  /* index of the shape's first call in the round */
    unsigned round_no;  /* the round the current probes ran in */
    size_t ncalls;      /* probe calls of the round (repeats included) */
    float *value;       /* [nprobes]: the output of repeat 0 (NaN when not read) */
    uint16_t *bits;     /* [nprobes] */
    int nondet;         /* a probe or validation output changed between repeats */
    int nondet_cases;   /* a validation output (random operands) changed between repeats */
    int position_dep;   /* columns (or rows) of one probe disagreed */
    size_t nvaried_gaps;
    uint8_t *gap_varied; /* [n] */
    /* structure */
    dc_gaps gaps;
    dc_tree tree;
    int have_tree;
    dc_family fam[16];
    int nfam;
    dc_numeric num;
    /* validation cases: generated in round 1 and kept */
    a4w4_case *vcases;
    size_t nvcases;
    uint16_t **vy;      /* [nvcases * repeats] outputs */
    /* every probe of every round and its output (repeat 0), for the candidates' check */
    dc_probe *hist;
    uint16_t *hist_bits;
    size_t nhist, hist_cap;
    size_t probes_total;
    size_t calls_total;
    dc_text ev;
    dc_text defects_ev; /* the accepted contract's defects, one list item each */
    a4w4_discover_shape_result res;
    const a4w4_contract *forced; /* a grouped shape: validate its leader's contract only */
    /* the rule of K (contracts §4.4, generalising over K) */
    int validate_only;  /* not probed: validates its family's rule of K */
    int check_only;     /* a bucket of the rules of M: round 1 and validation, held to the
                         * rules of K of the nearest probed buckets (contracts §4.4) */
    size_t rule_of;     /* check_only and FOUND: the family leader whose rule holds here */
    size_t family;      /* the first shape of the same N and padded-M bucket */
    int gen_ok;         /* family leader: the probed shapes' contracts make one rule of K */
    a4w4_contract gen;  /* that rule (gen_fixed: with every boundary, dc_rule_at) */
    int gen_fixed;      /* the rule's split boundaries are fixed in K (dc_rule_at) */
    a4w4_contract forced_rule; /* a validate-only shape: its family's rule at its K */
    char gen_why[512];  /* !gen_ok: why not */
    int gen_tried;      /* family leader: dc_generalize ran */
    /* family leader: a rule of K whose split count changes with K (contracts §4.4, "The
     * split count as a function of K", discover_ksplit.c): gen with split step_split[i]
     * for K <= step_kmax[i], the last piece for every larger K; gen_steps pieces (0: none) */
    int gen_steps;
    uint32_t step_kmax[DC_MAX_STEPS];
    unsigned step_split[DC_MAX_STEPS];
    int ks_state;       /* family leader: 0 not tried, 1 bisecting, 2 done, -1 no such rule */
    a4w4_tree ks_base;  /* the family's tree but for its splits (split, align unset) */
    unsigned ks_align;  /* A: the parts are round_up(ceil(K/S), A) at every K read */
    size_t ks_added;    /* the K of the bisection added so far (at most DC_MAX_KSPLIT) */
    /* a K of the split-count bisection of family `family`: round 1 and the validation cases
     * run, its split count read between ks_lo and ks_hi (the counts at the K around it) */
    int ksplit;
    unsigned ks_lo, ks_hi, ks_split; /* ks_split: the count read (FOUND) */
    int finished;       /* its result is final (finish_shape ran) */
    unsigned first_round; /* the round its round-1 probes and validation cases run in */
    /* FPRev's pairwise probes (discover_fprev.c): run once, when no candidate fits */
    int fprev_tried;
    int have_fprev;     /* fprev holds the rebuilt tree as tree(sum=...) */
    a4w4_contract fprev;
} dc_shape;

struct a4w4_discovery {
    a4w4_discover_opts o;
    a4w4_shape *shapes; /* room for A4W4_DISCOVER_MAX_SHAPES: the bisection adds shapes */
    size_t *group;
    dc_shape *sh;
    size_t nshapes;
    unsigned round_no;
    a4w4_discover_call *calls;
    size_t ncalls;
    int done;
};

/* Make L shape s's current probes (s's old list freed). 0, or -2 (L freed) when L ran out of
 * memory. */
int dc_install_probes(struct dc_shape_s *s, dc_plist *L);

/* Round 1 of shape s (discover_structure.c, contracts §4.4 step 1): its window-count and
 * two-unit probes into s->probes. 0 or -2 (out of memory). */
int dc_structure_plan(dc_shape *s);
/* Probe `probe` of s changed between repeats: its gap is marked varied (counted once). */
void dc_structure_mark_varied(dc_shape *s, size_t probe);
/* After round 1 or the scan: s's gaps, tree over blocks and families read from the probes'
 * outputs, with evidence lines, and its next phase planned (the scan, the numeric probes, or
 * done). 0 or -2 (out of memory). */
int dc_structure_read(dc_shape *s);

/* Plan the numeric and element probes of shape s (its tree and family known) into s->probes.
 * 0 or -2. */
int dc_numeric_plan(dc_shape *s);
/* Read the numeric and element probes into s->num, with evidence lines. */
void dc_numeric_read(dc_shape *s);
/* Plan the leaf probes for the P found (s->num); none when no placement exists. 0 or -2. */
int dc_leaf_plan(dc_shape *s);
void dc_leaf_read(dc_shape *s);
const char *dc_round_name(int r);

/* Candidates from s->fam and s->num, validated on the shape's validation outputs; fills
 * s->res (verdict, contract or closest, counts) and evidence. threads >= 1. */
void dc_fit(dc_shape *s, const a4w4_discover_opts *o);

/* 1 when contract c predicts shape s's probes and its validation outputs (every repeat), the
 * defects aside as dc_fit counts them; s's result is left as it is. */
int dc_check(dc_shape *s, const a4w4_discover_opts *o, const a4w4_contract *c);

/* The rule of K of family f (its leader s = &sh[f]): from the contracts the probed shapes of
 * the family found (discover_rule.c). Sets s->gen_ok, s->gen, or s->gen_why. */
void dc_generalize(dc_shape *sh, size_t nshapes, size_t f, const a4w4_discover_opts *o);
/* The contract the rule of K of family leader `lead` (gen_ok) gives at K into *out: its gen,
 * or with gen_fixed gen's split boundaries below K only (none left: one split; contracts
 * §4.4 "The rule of K"). */
void dc_rule_at(const dc_shape *lead, size_t K, a4w4_contract *out);

/* c as a tree (ordered(S) is tree(split=S), contracts §4.2): 0, or -1 for exact and
 * bounded(S), which have no tree. */
int dc_as_tree(const a4w4_contract *c, a4w4_tree *t);

/* 1 when tree t at K cuts the splits starts[0..n] (starts[n] = K). */
int dc_cuts(const a4w4_tree *t, size_t K, const size_t *starts, size_t n);

/* 1 when shape s is one of family f's probed shapes (not validate-only, not a bucket of the
 * rules of M, not a K of the split-count bisection). */
int dc_probed_in(const dc_shape *s, size_t f);

/* The rule of K whose split count changes with K (discover_ksplit.c, contracts §4.4): after
 * dc_generalize found no rule for family f, read the split count at each probed K (one tree
 * but for its splits, parts of round_up(ceil(K/S), A) elements for one A) and bisect between
 * K of different counts. Adds the shapes of the next K to read to d (their round 1 is the
 * next round) and returns how many; 0 when the bisection is over (the rule in the leader's
 * gen and gen_steps, or ks_state -1 with gen_why); -2 out of memory. */
int dc_ksplit_step(struct a4w4_discovery *d, size_t f);

/* The split count of bisection shape s (ksplit), read from its round-1 structure and held to
 * its probes and validation outputs: s->res FOUND with ks_split, or NO_FIT with why. */
void dc_ksplit_finish(struct a4w4_discovery *d, dc_shape *s);

/* 1 when the rule of K of family leader f (dc_rule_at) holds on every probed shape of the
 * family: the shape's own contract is the rule's at its K, or that predicts its probes and
 * validation outputs (dc_check). */
int dc_lead_rule_holds(dc_shape *sh, size_t nshapes, size_t f, const a4w4_discover_opts *o);

/* 1 when family leaders a and b (gen_ok) have one rule of K. */
int dc_same_rule(const dc_shape *a, const dc_shape *b);

/* Add shape x to d (family f) with its round-1 probes and validation cases, to run in the
 * next round (d->nshapes < A4W4_DISCOVER_MAX_SHAPES). 0 or -2 (out of memory). */
int dc_add_shape(struct a4w4_discovery *d, const a4w4_shape *x, size_t f);

/* The contract of family leader lead's split-count rule at split count S into *out. */
void dc_ksplit_contract(const dc_shape *lead, unsigned S, a4w4_contract *out);

/* FPRev (contracts §4.4 "Any tree: FPRev's pairwise probes"), for probed shape s (index
 * its index; o unused): when its structure read no interval tree (the model family's trees
 * beyond intervals are then tried, and random validation cases cannot tell all of them from
 * the kernel's tree), the pairwise probes of every block pair (n <= A4W4_SUMTREE_MAX_BLOCKS)
 * are planned and s->phase is DC_PHASE_FPREV: returns 1. Every candidate is then held to
 * them. 0 when FPRev is not wanted or was run; -2 out of memory. */
int dc_fprev_start(dc_shape *s, size_t index, const a4w4_discover_opts *o);

/* Read the pairwise probes: rebuild the tree over blocks into s->fprev (s->have_fprev), or
 * say in the evidence why none (a count that is no count, a pair no binary tree gives). */
void dc_fprev_read(dc_shape *s);

/* 1 when family leader f has a validated rule of K: its rule exists, every probed shape of
 * the family found a contract and every validate-only shape of it took the rule. */
int dc_family_rule(const struct a4w4_discovery *d, size_t f);

/* The value a bf16 output stands for. */
float dc_bf16_value(uint16_t h);

#endif
