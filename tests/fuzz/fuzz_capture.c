/* fuzz_capture.c — libFuzzer target for capture verification (a4w4_verify_capture,
 * harness/engine/verify_capture.h; a4w4_run_capture, harness/engine/runner.h; contracts §7.1).
 *
 * Input: a capture bundle image (safetensors, format a4w4-capture/1). The custom mutator is
 * the safetensors one (st_mutator.h): it keeps the file's structure and mutates the header's
 * dtypes, shapes, offsets (repacking them back to back at any byte offset, so BF16 tensors
 * land misaligned), names and __metadata__, so inputs reach the op rules, the layouts'
 * inverses and the oracles. dict/capture.dict adds the ops, the tensor names and the call
 * fields (bias, alpha, beta, bpreshuffle, shuffle, dtype, skip_reduce).
 *
 * Checked on every input, beyond "no crash" (UBSan aborts on a misaligned read):
 *   - the status is OK, MISMATCH, BADINPUT or NOMEM; BADINPUT and NOMEM leave one error line
 *     starting with the file's name, control bytes of the file's text shown as '?';
 *   - OK and MISMATCH recompute at least one tensor; OK has no failing check, MISMATCH one;
 *     a GEMM's y check covers M * N outputs and a quantizer's two checks M * K / 2 and the
 *     scale's bytes; dims are the metadata's M, N, K;
 *   - an independent reading of the refusal rules: a gemm_a4w4 capture holding a bias tensor
 *     and an op outside the three known ones are never judged (BADINPUT);
 *   - through a4w4_run_capture (the file written to the scratch directory): the same status,
 *     every entry named as asked, a failing entry exactly when the verification did not pass,
 *     none "n/a" (a capture not judged is "skip"), a refused capture one failing entry, no
 *     control byte in an entry's backend or contract. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "runner.h"
#include "safetensors.h"
#include "st_mutator.h"
#include "verify_capture.h"

#define TARGET "capture"
#define NAME "fuzz.safetensors"

/* The metadata value as a positive decimal, else 0 (the reader's rule for M, N, K). */
static size_t meta_dim(const a4w4_st_file *f, const char *key)
{
    const char *v = a4w4_st_meta(f, key);
    char *end;
    if (!v || *v < '0' || *v > '9')
        return 0;
    unsigned long long x = strtoull(v, &end, 10);
    return *end ? 0 : (size_t)x;
}

static int is_op(const char *op, const char *want)
{
    return op && !strcmp(op, want);
}

/* The checks of a judged capture against what the file says (dims, counts). */
static void check_judged(const a4w4_st_file *f, const a4w4_check_list *out, a4w4_hstatus rc,
                         const size_t dims[3])
{
    const char *op = a4w4_st_meta(f, "op");
    int quant = is_op(op, "aiter.per_1x32_f4_quant_hip");
    size_t fails = 0;
    fz_check(out->n >= 1, TARGET, "status %d with no check", (int)rc);
    fz_check(dims[0] == meta_dim(f, "M") && dims[2] == meta_dim(f, "K") &&
                 (quant || dims[1] == meta_dim(f, "N")),
             TARGET, "dims %zu, %zu, %zu are not the metadata's", dims[0], dims[1], dims[2]);
    for (size_t i = 0; i < out->n; i++) {
        const a4w4_check *c = &out->items[i];
        fails += c->verdict == A4W4_CHECK_FAIL;
        fz_check(c->verdict != A4W4_CHECK_NA || rc == A4W4_ST_OK, TARGET, "N/A in a mismatch");
        if (!quant && c->verdict != A4W4_CHECK_NA)
            fz_check(c->checked == dims[0] * dims[1], TARGET, "y check covers %zu of %zu outputs",
                     c->checked, dims[0] * dims[1]);
        if (quant && i == 0)
            fz_check(c->checked == dims[0] * dims[2] / 2, TARGET, "a_fp4 check covers %zu bytes",
                     c->checked);
    }
    fz_check((rc == A4W4_ST_MISMATCH) == (fails > 0), TARGET, "status %d with %zu failing checks",
             (int)rc, fails);
    fz_check(!(is_op(op, "aiter.gemm_a4w4") && a4w4_st_find(f, "bias")), TARGET,
             "a gemm_a4w4 capture with a bias was judged");
    fz_check(quant || is_op(op, "aiter.gemm_a4w4") || is_op(op, "aiter.gemm_afp4wfp4"), TARGET,
             "an unknown op '%s' was judged", op ? op : "(none)");
}

/* The same file through the runner's path: the entries agree with the verification. */
static void check_run(const uint8_t *data, size_t size, a4w4_hstatus want)
{
    char path[1024], err[512] = "";
    fz_write_input(NAME, data, size, path, sizeof path);
    a4w4_entry_list el = {0};
    a4w4_hstatus rc = a4w4_run_capture(path, "capture/fuzz", &el, err, sizeof err);
    a4w4_hstatus expect = want == A4W4_ST_MISMATCH ? A4W4_ST_OK : want;
    fz_check(rc == expect || rc == A4W4_ST_NOMEM, TARGET, "run status %d, verify %d", (int)rc,
             (int)want);
    if (rc == A4W4_ST_BADINPUT)
        fz_check(el.n == 1 && el.items[0].verdict == A4W4_VERDICT_FAIL, TARGET,
                 "a refused capture is %zu entries, not one failing entry", el.n);
    size_t fails = 0;
    for (size_t i = 0; i < el.n; i++) {
        const a4w4_entry_result *e = &el.items[i];
        fails += e->verdict == A4W4_VERDICT_FAIL;
        fz_check(!strcmp(e->name, "capture/fuzz"), TARGET, "entry named '%s'", e->name);
        fz_check(e->verdict != A4W4_VERDICT_NA, TARGET, "an n/a capture entry (a skip is due)");
        fz_check(!strpbrk(e->backend, "\n\r\x1b") && !strpbrk(e->contract, "\n\r\x1b"), TARGET,
                 "a control byte in backend '%s' or contract", e->backend);
    }
    fz_check(rc == A4W4_ST_NOMEM || (fails > 0) == (want != A4W4_ST_OK), TARGET,
             "%zu failing entries for a capture verify judged %d", fails, (int)want);
    a4w4_entry_list_free(&el);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    a4w4_st_file f;
    char err[512] = "";
    if (a4w4_st_load_mem(NAME, data, size, &f, err, sizeof err))
        return 0; /* the reader's own target (fuzz_safetensors) holds its promises */
    a4w4_check_list out = {0};
    size_t dims[3] = {0, 0, 0};
    a4w4_hstatus rc = a4w4_verify_capture(&f, NAME, &out, dims, err, sizeof err);
    fz_check(rc == A4W4_ST_OK || rc == A4W4_ST_MISMATCH || rc == A4W4_ST_BADINPUT ||
                 rc == A4W4_ST_NOMEM,
             TARGET, "status %d", (int)rc);
    if (rc == A4W4_ST_BADINPUT || rc == A4W4_ST_NOMEM) {
        fz_check_err_line(err, NAME ": ", TARGET);
        fz_check(!strchr(err, '\x1b'), TARGET, "an ESC byte in the error: %s", err);
    } else {
        check_judged(&f, &out, rc, dims);
        fz_accepted();
    }
    a4w4_check_list_free(&out);
    a4w4_st_free(&f);
    check_run(data, size, rc);
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    return fz_st_mutate(data, size, max_size, seed);
}
