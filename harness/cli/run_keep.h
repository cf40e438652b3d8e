/* run_keep.h — `run --keep-outputs DIR`'s plan: the disk it will take, the limit, the
 * directories, and the record in results.json (engine/kept_outputs.h writes the files). */
#ifndef A4W4_RUN_KEEP_H
#define A4W4_RUN_KEEP_H

#include <stddef.h>

#include "run_plan.h"

/* The bytes kept outputs of this shard's generated cases take through p's GEMM backends:
 * a4w4_kept_file_bytes per case and backend, over the cases whose every output is computed
 * on the host (full: --full; else those of at most A4W4_FULL_CHECK_MACS and those p's budget
 * checks in full; sampled entries keep nothing). */
double a4w4_run_keep_bytes(a4w4_run_plan *p, unsigned shard_i, unsigned shard_n, int full);

/* Before anything is written: refuse (one line naming dir, the size and the limit, exit 2)
 * when the planned bytes pass max_bytes. Returns the exit code (0 go on). */
int a4w4_run_keep_check(a4w4_run_plan *p, const char *dir, double max_bytes, unsigned shard_i,
                        unsigned shard_n, int full);

/* Then: a4w4_run_keep_check again, make dir and one directory per GEMM backend, and record in
 * p->header "kept_outputs": {dir (its absolute path), layout, planned_bytes, limit_bytes}.
 * Returns the exit code (0 go on, 2 over the limit, 4 a directory not made). */
int a4w4_run_keep_prepare(a4w4_run_plan *p, const char *dir, double max_bytes,
                          unsigned shard_i, unsigned shard_n, int full, int quiet);

#endif
