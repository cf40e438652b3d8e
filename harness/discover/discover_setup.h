/* discover_setup.h — what `discover` needs around a discovery (discover.h, contracts §4.4):
 * the shapes it probes (given as text or in a case file), the groups of shapes that share one
 * probed shape, and the evidence document written beside the contract. Nothing here prints;
 * errors come back as text for the caller's one line. */
#ifndef A4W4_DISCOVER_SETUP_H
#define A4W4_DISCOVER_SETUP_H

#include <stddef.h>

#include "discover.h"
#include "status.h"

/* "MxNxK,MxNxK,..." (decimal M, N, K; no spaces) into *shapes (malloc'ed, *n of them).
 * Returns 0; -1 for text that is not such a list; -2 out of memory (*shapes NULL either way).
 * Shapes are not range-checked here: a4w4_discover_new refuses impossible ones. */
int a4w4_discover_parse_shapes(const char *text, a4w4_shape **shapes, size_t *n);

/* The distinct (M, N, K) of a shape list or case file (io/shapelist.h: a CSV naming M, N, K),
 * in first-seen order, into *shapes (malloc'ed, *n of them). Returns A4W4_ST_OK, or the
 * shape list's status with err set (the file and the rule), or A4W4_ST_NOMEM (err empty). */
a4w4_hstatus a4w4_discover_shapes_from_file(const char *path, a4w4_shape **shapes, size_t *n,
                                            char *err, size_t errlen);

/* hip-asm:dispatch: group[i] = the first shape j <= i that AITER's dispatcher (contracts §5;
 * the default tables, gfx950, 256 CUs, log2_k_split 0) sends to the same ASM kernel with the
 * same split-K as shape i (i itself when none, or when shape i does not route to ASM). Such
 * shapes share one probed shape and are each validated. Returns 0; -1 when the dispatch
 * tables cannot be read (err: why); -2 out of memory. */
int a4w4_discover_dispatch_groups(const a4w4_shape *shapes, size_t n, size_t *group, char *err,
                                  size_t errlen);

/* The shapes of a rule of K (contracts §4.4, "Rules of the shape"): every requested shape,
 * then per family (one N and padded-M bucket, getPaddedM gl 0, contracts §5.1) more probed
 * K at the family's first M until it has three distinct K (multiples of k_step: 32, or 256
 * for a backend that takes K % 256 == 0 only), one of them with K % 256 != 0 when k_step is 32,
 * then two shapes validated only: a K not probed at that M, and another M of the bucket
 * (when it has one) at another K not probed; then per N the buckets of the rules of M: every
 * bucket between two requested buckets (at most A4W4_DISCOVER_MAX_CHECKS per pair, evenly
 * spaced), at its largest M and the lower bucket's K. *out (malloc'ed, *nout shapes) and *vo
 * (malloc'ed, 1 for a validate-only shape, 2 for a checked bucket) replace nothing: the
 * caller frees them. Returns 0;
 * -1 when the expansion passes A4W4_DISCOVER_MAX_SHAPES (err: how many families fit); -2
 * out of memory. */
int a4w4_discover_expand(const a4w4_shape *shapes, size_t n, size_t k_step, a4w4_shape **out,
                         size_t *nout, unsigned char **vo, char *err, size_t errlen);

/* The evidence document (Markdown) of a finished discovery d run with o on backend:
 * "# discover: BACKEND", the time in seconds, seed and repeats, the accepted contract text
 * (contract; NULL: "(none)"), then per shape its evidence and its defects (outputs no order
 * can give, contracts §4.4 step 7). Returns the malloc'ed text (*len bytes, NUL-terminated),
 * or NULL out of memory. */
char *a4w4_discover_evidence_doc(const a4w4_discovery *d, const a4w4_discover_opts *o,
                                 const char *backend, double seconds, const char *contract,
                                 size_t *len);

#endif
