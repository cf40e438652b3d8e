/* mutants.h — deliberately wrong systems under test for `a4w4check selftest`.
 *
 * A mutant is an ordinary backend type (backend.h) with one realistic fault injected; the
 * self-test runs it through a4w4_run_case exactly like a real backend and expects the harness
 * to give it a failing verdict somewhere on cases/selftest.csv. Three kinds, as in backend.h:
 *
 *   GEMM mutants (run)         outputs compared per contract, with poison, guard zones and
 *                              the pad-dependence variants (runner.c);
 *   quantizer mutants (quantize) codes and scales compared with ref's quantization of the
 *                              normal-regime activations (contracts §2);
 *   layout mutants (layouts)   the three contracts §3 layouts compared byte for byte with ref's.
 *
 * Mutants are NOT in the default backend table (registry.c): `run` never selects them. Open
 * one with a4w4_backend_open_type(). Each type's `what` names the fault and the check
 * expected to catch it; the comments in mutants.c explain how the fault would arise
 * in a real kernel. GPU mutants join the same table with .gpu = 1 (selftest --gpu). */
#ifndef A4W4_MUTANTS_H
#define A4W4_MUTANTS_H

#include <stddef.h>

#include "registry.h"

/* The mutant types, in a fixed order, and their count (*n). Never NULL. */
const a4w4_backend_type *const *a4w4_mutant_types(size_t *n);

/* The mutant named `name` ("mut-pad-ff"), or NULL. */
const a4w4_backend_type *a4w4_mutant_find(const char *name);

/* The field bug reproductions that are not in the mutants' kill rate: GEMMs showing on
 * outputs three faults the mutants show only on layout bytes or not at all (selftest runs
 * them for its field table; each must be killed too). */
const a4w4_backend_type *const *a4w4_field_repro_types(size_t *n);

/* A bug class of the field (the hazards' rules and the contracts' edge cases), its source and
 * the mutant or field reproduction (by name) that shows it on GEMM outputs. */
typedef struct {
    const char *bug, *source, *repro;
} a4w4_field_bug_class;
const a4w4_field_bug_class *a4w4_field_bug_classes(size_t *n);

#endif
