/* discover_flow.h — how `discover` gets its rounds run (contracts §4.4): through an opened
 * backend in this process (cpu-*, plugin:, hip-*), or as operand bundles for a runner outside
 * it (`--write-probes DIR`, then a runner such as `python3 -m a4w4check.external`, then
 * `--backend bundle:OUT --probes DIR`; or `--runner CMD`, which runs the runner itself).
 *
 * Probe directory DIR: DIR/discover.json (the options the probes were planned with: shapes,
 * groups, seed, repeats, validation sizes) and DIR/r<k>/ (round k's operand bundles and
 * manifest.json). Outputs: OUT/r<k>/ (a runner's output bundles for round k). Rounds are
 * planned from the outputs of the rounds before, so round k+1 exists only after round k's
 * outputs were read. */
#ifndef A4W4_DISCOVER_FLOW_H
#define A4W4_DISCOVER_FLOW_H

#include <stddef.h>

#include "backend.h"
#include "discover.h"

/* Open backend (a4w4_backend_open's spec: cpu-*, plugin:LIB.so, hip-*) and run every round
 * through it, with a progress line per round on stderr unless quiet. Returns an exit code:
 * A4W4_EXIT_PASS when the discovery is done, else after one line on stderr (the backend that
 * would not open, or the call and the backend's reason). */
int a4w4_dflow_backend(a4w4_discovery *d, const char *backend, int quiet);

/* --write-probes DIR: DIR/discover.json for o and round 1's operand bundles in DIR/r1, then
 * what to run next on stdout. Returns an exit code (A4W4_EXIT_IO after one line when a file
 * could not be written). */
int a4w4_dflow_write_probes(const a4w4_discovery *d, const char *dir,
                            const a4w4_discover_opts *o);

/* The shapes of `--shapes TEXT` or `--cases FILE` (both NULL: 16x64x2048,256x64x2048, Mpad
 * 16 and 256, the buckets between checked for the rules of M) into *sh and o->nshapes, each
 * its own group in *groups (both malloc'ed); with backend hip-asm:dispatch, the shapes
 * AITER's dispatcher sends to one ASM kernel share a group. Otherwise the shapes of a rule of
 * K and of the rules of M are added (a4w4_discover_expand: more probed K per family, shapes
 * only validated and buckets only checked, marked in *vo, malloc'ed; NULL with dispatch
 * groups), after the *requested shapes asked for. Returns an exit code
 * (A4W4_EXIT_BADINPUT after one line naming the option and the rule). */
int a4w4_dflow_shapes(const char *shapes, const char *cases, const char *backend,
                      a4w4_discover_opts *o, a4w4_shape **sh, size_t **groups,
                      unsigned char **vo, size_t *requested);

/* Write DIR/discover.json for opts (atomically). 0 or an exit code after one line. */
int a4w4_dflow_write_plan(const char *dir, const a4w4_discover_opts *o);

/* Read DIR/discover.json into *o (shapes, groups and the validate-only marks malloc'ed into
 * *shapes, *groups, *vo; a plan without "validate_only" probes every shape). 0 or
 * A4W4_EXIT_BADINPUT after one line naming the file and the rule. */
int a4w4_dflow_read_plan(const char *dir, a4w4_discover_opts *o, a4w4_shape **shapes,
                         size_t **groups, unsigned char **vo);

/* The bundle flow: for round k, read OUT/r<k> through a bundle: backend when it exists; when it
 * does not, write DIR/r<k> (if missing) and either run `runner --ops DIR/r<k> --out OUT/r<k>`
 * (runner != NULL, at most timeout_s seconds a round) or stop with A4W4_EXIT_INCOMPLETE and a
 * line saying what to run. Returns an exit code (PASS when the discovery is done). */
int a4w4_dflow_bundle(a4w4_discovery *d, const char *probes_dir, const char *out_dir,
                      const char *runner, int timeout_s, int quiet);

#endif
