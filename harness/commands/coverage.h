/* coverage.h — which cases of a matrix exercise each padded-M bucket of the tuned tables
 * (contracts §5.1), each tile_M and tile_N of the ASM kernel table (§5.3), each edge of the
 * generated input regimes (§4.1, §4.3) and each output grid past 256 and 1,024 tiles of the
 * largest tile: the model of `a4w4check coverage`. Items of other kinds (the self-test's fault
 * classes) join through a4w4_coverage_add. Nothing here prints. */
#ifndef A4W4_COVERAGE_H
#define A4W4_COVERAGE_H

#include <stddef.h>

#include "a4w4_dispatch.h"
#include "casefile.h"
#include "status.h"

/* 1 when case c exercises the item (arg: the item's own data). */
typedef int (*a4w4_case_rule)(const a4w4_case *c, const void *arg);

typedef struct {
    char group[16];  /* "bucket", "tile_M", "tile_N", "edge", "grid", "fault" */
    char what[160];  /* the item, e.g. "M' 128 by getPaddedM gl 1: M 65..128" */
    char rule[96];   /* the cases that exercise it, e.g. "M == 65" */
    size_t *cases;   /* indices into the matrix, ascending */
    size_t ncases;
} a4w4_cov_item;

typedef struct {
    a4w4_cov_item *items;
    size_t n, cap;
} a4w4_coverage;

/* Append one item: the cases[0..ncases) for which rule(c, arg) holds. A4W4_ST_OK or
 * A4W4_ST_NOMEM. */
a4w4_hstatus a4w4_coverage_add(a4w4_coverage *cov, const char *group, const char *what,
                               const char *rule, const a4w4_case *cases, size_t ncases,
                               a4w4_case_rule r, const void *arg);

/* The distinct M values of the tuned tables at paths[0..npaths) (each loaded on its own with
 * a4w4_tuned_load, contracts §5.1), malloc'ed into *m (*nm of them). A4W4_ST_OK;
 * A4W4_ST_BADINPUT with err naming the file and the rule; A4W4_ST_NOMEM. */
a4w4_hstatus a4w4_tuned_m_values(const char *const *paths, size_t npaths, int **m, size_t *nm,
                                 char *err, size_t errlen);

/* One item per padded-M bucket of the tuned M values m[0..nm) (a4w4_m_buckets): a case
 * exercises a bucket when its M is the bucket's lo (one past the edge below it: the bucket and
 * its lower edge at once) and its N meets the bucket's N rule. */
a4w4_hstatus a4w4_coverage_buckets(a4w4_coverage *cov, const a4w4_case *cases, size_t ncases,
                                   const int *m, size_t nm);

/* One item per distinct tile_M and tile_N of kernel table kt: tile_M t is exercised by a case
 * with M > t and M % t == 1 (one row past a tile edge), tile_N t by one with N > t and
 * 0 < N % t <= 32 (one 32-column group past a tile edge; 32 keeps the ASM layouts). */
a4w4_hstatus a4w4_coverage_tiles(a4w4_coverage *cov, const a4w4_case *cases, size_t ncases,
                                 const a4w4_kernel_table *kt);

/* The regime edges (each kind of the range regime, E8M0 255 on both sides, fp32 subnormals,
 * zero-sign rows, E8M0 code 0) and the output grids past 256 and 1,024 tiles of 256x256. */
a4w4_hstatus a4w4_coverage_edges(a4w4_coverage *cov, const a4w4_case *cases, size_t ncases);

/* Items no case exercises. */
size_t a4w4_coverage_uncovered(const a4w4_coverage *cov);

void a4w4_coverage_free(a4w4_coverage *cov);

#endif
