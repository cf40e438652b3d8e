/* matrix.h — the case matrix a command works through: the cases of a case file plus the golden
 * bundles of a directory and the capture bundles of another, its identity hash and the
 * deterministic shard split. Items: cases first, then golden bundles, then captures. `run` and
 * `export` plan from the same struct, so an exported directory and a run over it name the same
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
    unsigned long long hash;   /* FNV-1a 64 of the case file bytes and the bundle file names */
} a4w4_matrix;

/* Item k (0-based, cases first, then bundles) belongs to shard i of n (1-based): k % n + 1 == i. */
int a4w4_matrix_in_shard(size_t k, unsigned i, unsigned n);

/* a4w4_matrix_load's failures: a usage error (bad set name, unreadable golden directory: err
 * names the option) or the case file's own error (err names the file, line and rule). */
enum { A4W4_MATRIX_EUSAGE = -1, A4W4_MATRIX_ECASES = -2 };

/* Load the matrix: cases_path when given (set becomes "custom"), else cases/<set>.csv
 * resolved by a4w4_data_path (set NULL means "premerge"); golden_dir NULL for no bundles.
 * Returns 0, or A4W4_MATRIX_EUSAGE / A4W4_MATRIX_ECASES with err = one line naming the input
 * and the rule. *m is valid for a4w4_matrix_free either way. */
int a4w4_matrix_load(a4w4_matrix *m, const char *set, const char *cases_path,
                     const char *golden_dir, char *err, size_t errlen);

/* The item name of golden bundle i: "golden/<file name without .safetensors>". */
void a4w4_matrix_bundle_name(const a4w4_matrix *m, size_t i, char *buf, size_t len);

/* Add every DIR/NAME.safetensors (sorted) as a capture item "capture/NAME", folding the names
 * into the hash. 0, or A4W4_MATRIX_EUSAGE with err when DIR cannot be read. */
int a4w4_matrix_add_captures(a4w4_matrix *m, const char *dir, char *err, size_t errlen);

/* Items in all (cases + bundles + captures), and the name of item k. */
size_t a4w4_matrix_items(const a4w4_matrix *m);
void a4w4_matrix_item_name(const a4w4_matrix *m, size_t k, char *buf, size_t len);

void a4w4_matrix_free(a4w4_matrix *m);

#endif
