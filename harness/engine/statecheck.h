/* statecheck.h — the call sequence (docs/backends.md "Call sequences"): a kernel wrong only on
 * a later call in one process (a stale weight cache, a warm-up bug, state leaking from one
 * shape into the next) passes when every call is its process's first, as isolated plugin
 * calls are. So every backend with a run_sequence (plugins) is also called
 * A4W4_SEQ_CALLS times in one process on small cases of the run's own matrix:
 *     A, A again (the same operands), A' (A's shape, other operands), B, A again
 * with A the smallest case of an exact, normal or wide regime and B the smallest one of
 * another shape, preferring A's N (a cache keyed by N alone); every call is judged bit for bit
 * (or within the bound) under the contract the backend holds that case to (contracts §4.1,
 * §4.2), exactly as a4w4_judge_outputs judges a capture. The sequence is one entry per
 * backend, recorded with case A's item under the name "<A>/call-sequence"; its note names the
 * first call that failed ("call 3 of 5, the first of 8x64x256 with other operands, after
 * 8x64x256 in one process: 512 of 512 outputs differ"). The run's calibration call of that
 * backend (runner.h a4w4_rates, in the same process when not isolated) is judged too and
 * reported in the same entry. */
#ifndef A4W4_STATECHECK_H
#define A4W4_STATECHECK_H

#include <stddef.h>

#include "casefile.h"
#include "entry.h"
#include "status.h"

#define A4W4_SEQ_CALLS 5
/* The largest case the sequence takes (M*N*K): its oracles and five calls stay in the
 * milliseconds in an optimized build. */
#define A4W4_SEQ_MAX_MACS (1ull << 22)

typedef struct a4w4_statecheck {
    int have;         /* 0: no sequence (why says so: off, or no case fits) */
    a4w4_case a, b;   /* the first case and the other shape (b.M == 0: none, 4 calls) */
    int isolated;     /* the plugins run isolated: the sequence is one child (as the note says) */
    char why[160];
} a4w4_statecheck;

/* Pick the sequence's cases from cases[0..n) (the whole matrix, every shard: the same pick in
 * each) into *sc: A and B as above, of at most A4W4_SEQ_MAX_MACS MACs. */
void a4w4_statecheck_pick(const a4w4_case *cases, size_t n, a4w4_statecheck *sc);

/* The sequence in one line for results.json's "call_sequence": "on: NAME (MxNxK), NAME
 * again, NAME with other operands, NAME (MxNxK), NAME again, every call judged"; without
 * one, sc->why ("off (--no-call-sequence): ...", "none: ..."), which io/results.c adds to
 * the verdict line. */
void a4w4_statecheck_describe(const a4w4_statecheck *sc, char *buf, size_t len);


#endif
