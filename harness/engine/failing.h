/* failing.h — a failing entry saved with its operands (`run --save-failing DIR`, `shrink`):
 * an operand bundle (format a4w4-operands/1, gen/export.h: every operand layout, the
 * case's name, M, N, K, regime, seed, matrix hash and tool version) that also records what
 * the backend returned and what its contract's oracle expected, so that
 *   `a4w4check verify FILE` recomputes the expected outputs and shows the failure again from
 *   the file alone, `a4w4check run --bundle FILE --backend B` reruns the operands on B, and
 *   `python -m a4w4check.external --ops DIR` runs them through an outside kernel.
 *
 * Added to the operand bundle (contracts §7):
 *   y_got       BF16 [nrows, ncols]  the backend's outputs at the checked outputs
 *   y_expected  BF16 [nrows, ncols]  the contract's oracle there: ordered(S) bits for
 *                                    ordered(S), the exact bits for exact and bounded(S)
 *   y_exact     BF16 [M, N]          only when every output was checked
 * and metadata (strings): backend, contract, rows and cols (the checked output rows and
 * columns as ascending ranges "0-3,15,31-33", or "all"), mismatches, variant (the pad fill
 * whose run the outputs are, "" for the plain run: contracts §3.3), signature, repro.
 * Item name "<case>@<backend, characters outside [A-Za-z0-9._-] as '_', one selected as
 * TYPE:PATH (a plugin, a bundle) by TYPE_<its file name>>", and when another backend of the run
 * has the same file name (two plugins libk.so from different folders) "-<8 hex digits>" after
 * it, the FNV-1a hash of the whole backend spec, so each keeps its own file; file name as
 * a4w4_item_path gives it. Nothing here prints. */
#ifndef A4W4_FAILING_H
#define A4W4_FAILING_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "casefile.h"
#include "gen.h"
#include "safetensors.h"
#include "status.h"
#include "check.h"

/* What the runner holds of one failing GEMM entry. got and expected are in sample order
 * ([s->nrows, s->ncols]); d may hold only the sampled rows (it is regenerated in full). */
typedef struct {
    const a4w4_case *c;
    const a4w4_case_data *d;
    const a4w4_sample *s;
    const uint16_t *got, *expected;
    const char *backend, *contract;
    size_t mismatches;
    const char *variant;   /* "" or the pad variant whose outputs these are */
    const char *signature; /* "" when none */
    const char *repro;     /* "" when none */
    const a4w4_run_identity *id; /* may be NULL */
    int qualify; /* another backend of the run has the same item name: add the hash */
} a4w4_failing;

/* The item name of the saved entry into buf ("<case>@<backend>", "-<hash>" after it when
 * qualify; see above). */
void a4w4_failing_name(const char *case_name, const char *backend, int qualify, char *buf,
                       size_t len);

/* 1 when backend specs a and b differ yet a4w4_failing_name gives them the same item name
 * (unqualified): a run holding both qualifies both. */
int a4w4_failing_names_collide(const char *a, const char *b);

/* Write f's bundle into dir (created) as item a4w4_failing_name; name (optional) receives the
 * item name. A4W4_ST_OK, or A4W4_ST_IO / A4W4_ST_NOMEM / A4W4_ST_BADINPUT with err; never a
 * partial file. */
a4w4_hstatus a4w4_failing_save(const a4w4_failing *f, const char *dir, char *name,
                               size_t namelen, char *err, size_t errlen);

/* Ascending distinct indices idx[0..n) as ranges "0-3,15,31-33" into buf; "all" when full.
 * -1 when buf is too short. */
int a4w4_ranges_format(const size_t *idx, size_t n, int full, char *buf, size_t len);

/* Parse a4w4_ranges_format's text (every index below limit, ascending, distinct); "all"
 * gives 0..limit-1. *idx malloc'ed (caller frees), *n its count. 0, or -1 (malformed, out of
 * memory). */
int a4w4_ranges_parse(const char *text, size_t limit, size_t **idx, size_t *n);

/* Subject prefix of the checks of a recorded failure (a4w4_verify_recorded): run's golden
 * path leaves them out of the bundle's own verdict. */
#define A4W4_RECORDED_SUBJECT "recorded "

/* When loaded bundle f records a failure (holds y_got), check it from the operands a [M, K/2],
 * as [M, K/32], w [N, K/2], ws [N, K/32]: y_expected against the contract's oracle at the
 * recorded outputs, then y_got against it (bit for bit; bounded(S) within the per-output
 * bound, contracts §4.1): two checks whose subjects start with A4W4_RECORDED_SUBJECT, *fails
 * += the failing ones. A bundle without y_got: nothing. A4W4_ST_OK, or A4W4_ST_BADINPUT
 * with err ("<path>: <rule>": bad contract, ranges or shapes). */
a4w4_hstatus a4w4_verify_recorded(const a4w4_st_file *f, const char *path, const uint8_t *a,
                                  const uint8_t *as, const uint8_t *w, const uint8_t *ws,
                                  size_t M, size_t N, size_t K, a4w4_check_list *out,
                                  int *fails, char *err, size_t errlen);

#endif
