/* fuzz_common.h — what every libFuzzer target in tests/fuzz shares: a small deterministic
 * RNG for the custom mutators, a per-process scratch directory for the path-based readers,
 * and the invariant check that turns a broken promise of a reader into a crash libFuzzer
 * records (it aborts; the crash file is the input).
 *
 * Built only with -DA4W4_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt); run by ci/fuzz.sh.
 * Environment:
 *   A4W4_FUZZ_TMP          parent of the scratch directory (default /dev/shm, else /tmp);
 *   A4W4_FUZZ_PLANT_CRASH  when set, fz_accepted() aborts: ci/fuzz.sh's own test that a
 *                          crash fails the run (tests/fuzz/CMakeLists.txt);
 *   A4W4_FUZZ_STRICT       when set, also check the promises the readers are known to break
 *                          today (fz_strict(); each use names its finding, and
 *                          findings/README.md lists them with an input each), so a fix can be
 *                          verified; unset (CI), those are tolerated and new faults still fail. */
#ifndef A4W4_FUZZ_COMMON_H
#define A4W4_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* libFuzzer's entry points and its built-in mutator (available to custom mutators). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
/* fuzz_common.c defines a weak LLVMFuzzerInitialize that makes the scratch directory
 * (fz_tmp_init); a target needing more defines its own. */
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* xorshift64* state; never 0. */
typedef struct {
    uint64_t s;
} fz_rng;

void fz_rng_seed(fz_rng *r, uint64_t seed);
uint64_t fz_rng_next(fz_rng *r);
/* Uniform in [0, n) (n >= 1). */
size_t fz_below(fz_rng *r, size_t n);
/* 1 with probability 1/n. */
int fz_one_in(fz_rng *r, size_t n);

/* Create the per-process scratch directory (idempotent; removed at normal exit). Aborts when
 * it cannot be made: a target that cannot write its input cannot test anything. */
void fz_tmp_init(void);
/* Write size bytes to <scratch>/<name> (truncating) and its path into path[pathlen].
 * Aborts on I/O errors or a path that does not fit. */
void fz_write_input(const char *name, const uint8_t *data, size_t size, char *path,
                    size_t pathlen);

/* Empty the scratch directory (made when missing) and return its path: a target that reads
 * a whole directory (bundle_dir) writes its input there as files. */
const char *fz_scratch_clear(void);

/* <scratch>/<name> into path[pathlen] (nothing written). Aborts when it does not fit. */
void fz_scratch_path(const char *name, char *path, size_t pathlen);

/* Abort with "fuzz invariant broken (<target>): <message>" on stderr unless cond holds. */
void fz_check(int cond, const char *target, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* 1 when A4W4_FUZZ_STRICT is set. */
int fz_strict(void);

/* A library error message must be non-empty, one line (no '\n' or '\r': input text quoted
 * into it shows control bytes as '?', ref/a4w4_quote.h) and start with prefix. */
void fz_check_err_line(const char *err, const char *prefix, const char *target);

/* Called by a target when the library accepted the input (planted-crash hook, see above). */
void fz_accepted(void);

/* Absolute path of a file of the source tree (A4W4_SOURCE_DIR/rel), static storage. */
const char *fz_source_path(const char *rel);

#endif
