/* matrix.h — the case matrix a command works through: the cases of a case file plus the golden
 * bundles of a directory and the capture bundles of another, its identity hash and the
 * deterministic shard split, balanced by estimated cost. Items: cases first, then golden
 * bundles, then captures. `run` and `export` plan from the same struct, so an exported directory and a run over it name the same
 * items and the same matrix_hash. */
#ifndef A4W4_MATRIX_H
#define A4W4_MATRIX_H

#include <stddef.h>

#include "casefile.h"

typedef struct {
    char set[64];              /* the set name, or "custom" for --cases */
    char cases_path[4096];     /* the case file read */
    a4w4_case *cases;          /* ncases generated cases, file order */
    size_t ncases;
    char **bundles;            /* nbundles golden bundle paths (DIR/NAME.safetensors) */
    size_t nbundles;
    char **captures;           /* ncaptures capture bundle paths (a4w4check.capture's) */
    size_t ncaptures;
    char *captures_dir;        /* --captures DIR (NULL: none asked for) */
    /* FNV-1a 64 of the case file's bytes, then of each golden, operand or capture bundle's
     * file name and bytes (docs/cli/run.md, "Results, resume, shards") */
    unsigned long long hash;
    /* The matrix before a4w4_matrix_select narrowed it (`--case`): its hash and item names
     * (NULL, 0: never narrowed, the matrix is its own base). Results made before the run
     * (bundle:DIR) belong to the base: a subset of it reruns them. */
    unsigned long long base_hash;
    char **base_items;
    size_t nbase_items;
    unsigned shard_n;          /* the shard count shard_of holds (0: not planned yet) */
    unsigned *shard_of;        /* per item, its shard 1..shard_n (a4w4_matrix_in_shard) */
} a4w4_matrix;

/* Estimated cost of checking item k in full, in MAC-equivalents (a function of the item alone,
 * so every process computes the same): a case M*N*K (the oracles and every system under test
 * scale with it) + A4W4_COST_PER_OPERAND * (M + N) * K (generation, layouts) +
 * A4W4_COST_PER_ITEM; a golden or capture bundle A4W4_COST_PER_BUNDLE. Saturates at
 * UINT64_MAX. */
#define A4W4_COST_PER_OPERAND 16ull
#define A4W4_COST_PER_ITEM (1ull << 24)
#define A4W4_COST_PER_BUNDLE (1ull << 28)
unsigned long long a4w4_matrix_item_cost(const a4w4_matrix *m, size_t k);

/* 1 when item k (0-based: cases, then golden bundles, then captures) belongs to shard i of n
 * (1-based), else 0; n == 0: every item. Items go to shards by their estimated cost
 * (a4w4_matrix_item_cost): greedy longest-processing-time, items in decreasing cost (ties:
 * lower index first), each to the shard with the least cost so far (ties: lower shard), so the
 * split is deterministic, disjoint and complete, and shard costs come out nearly equal. The
 * assignment is computed on the first call for n and kept in m. -1 when it cannot be (out of
 * memory). */
int a4w4_matrix_in_shard(a4w4_matrix *m, size_t k, unsigned i, unsigned n);

/* The summed estimated cost of shard i of n (a4w4_matrix_in_shard's split); 0 when out of
 * memory or i is not in 1..n. */
unsigned long long a4w4_matrix_shard_cost(a4w4_matrix *m, unsigned i, unsigned n);

/* a4w4_matrix_load's failures: a usage error (bad set name, unreadable golden directory or
 * one without a bundle: err names the option) or the case file's own error (err names the file, line and rule). */
enum { A4W4_MATRIX_EUSAGE = -1, A4W4_MATRIX_ECASES = -2 };

/* Load the matrix: cases_path when given (set becomes "custom"), else cases/<set>.csv
 * resolved by a4w4_data_path (set NULL means "premerge"); golden_dir NULL for no bundles.
 * Returns 0, or A4W4_MATRIX_EUSAGE / A4W4_MATRIX_ECASES with err = one line naming the input
 * and the rule. *m is valid for a4w4_matrix_free either way. */
int a4w4_matrix_load(a4w4_matrix *m, const char *set, const char *cases_path,
                     const char *golden_dir, char *err, size_t errlen);

/* Load a matrix of bundle files only (`run --bundle FILE`): no cases, the given case or
 * operand bundles (contracts §7, gen/export.h, engine/failing.h) as golden items named
 * "golden/<file name without .safetensors>", set "bundle", each file's name and bytes folded
 * into the hash. Returns 0, or A4W4_MATRIX_EUSAGE
 * with err (a path without .safetensors, two files of one name, out of memory). */
int a4w4_matrix_load_bundles(a4w4_matrix *m, const char *const *paths, size_t n, char *err,
                             size_t errlen);

/* Keep only the items named names[0..n) (`run --case NAME`: a case name, "golden/<stem>" or
 * "capture/<stem>"), in matrix order, the matrix before it kept as base_hash and base_items,
 * folding the names into the hash (a selection is another
 * matrix for --resume and merge), each distinct name once: `--case X --case X` is the matrix
 * of `--case X` (docs/cli/run.md, "Results, resume, shards"). 0, or A4W4_MATRIX_EUSAGE with err naming the first name no
 * item has. */
int a4w4_matrix_select(a4w4_matrix *m, const char *const *names, size_t n, char *err,
                       size_t errlen);

/* The item name of golden bundle i: "golden/<file name without .safetensors>". */
void a4w4_matrix_bundle_name(const a4w4_matrix *m, size_t i, char *buf, size_t len);

/* Add every *.safetensors under DIR, subdirectories included (sorted by path; symbolic links
 * to directories not followed; 16 levels at most), as capture items "capture/<path under DIR
 * without .safetensors>", folding their names and bytes into the hash. A DIR holding none is one item
 * A4W4_CAPTURES_NONE (the run records it as a skip: captures were asked for and none was
 * judged, so the verdict is never PASS). 0, or A4W4_MATRIX_EUSAGE with err when a directory
 * cannot be read or a name holds a control byte. */
#define A4W4_CAPTURES_NONE "capture/(none)"
int a4w4_matrix_add_captures(a4w4_matrix *m, const char *dir, char *err, size_t errlen);

/* Items in all (cases + bundles + captures), and the name of item k. */
size_t a4w4_matrix_items(const a4w4_matrix *m);
void a4w4_matrix_item_name(const a4w4_matrix *m, size_t k, char *buf, size_t len);

void a4w4_matrix_free(a4w4_matrix *m);

#endif
