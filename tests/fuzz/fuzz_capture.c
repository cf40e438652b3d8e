/* fuzz_capture.c — libFuzzer target for capture judgement (a4w4_run_capture,
 * harness/commands/verify_capture.h, the one reading `verify` and `run --captures` share;
 * contracts §7.1).
 *
 * Input: a capture bundle image (safetensors, format a4w4-capture/1). The custom mutator is
 * the safetensors one (st_mutator.h): it keeps the file's structure and mutates the header's
 * dtypes, shapes, offsets (repacking them back to back at any byte offset, so BF16 tensors
 * land misaligned), names and __metadata__, so inputs reach the op rules, the layouts'
 * inverses and the oracles. dict/capture.dict adds the ops, the tensor names and the call
 * fields (bias, alpha, beta, bpreshuffle, shuffle, dtype, skip_reduce).
 *
 * Checked on every input, beyond "no crash" (UBSan aborts on a misaligned read):
 *   - the status is OK, BADINPUT or NOMEM; BADINPUT and NOMEM leave one error line starting
 *     with the file's path, no ESC byte, and exactly one failing entry;
 *   - OK: at least one entry, every entry named as asked and of M, N, K the metadata's, none
 *     "n/a" (a capture not judged is "skip"), no control byte in its backend or contract; a
 *     GEMM entry's judged counts add up to M * N; a quantizer's first entry covers M * K / 2;
 *   - an independent reading of the refusal rules: a gemm_a4w4 capture holding a bias tensor
 *     and an op outside the three known ones are never judged (BADINPUT). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
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

/* The entries of a capture judged OK against what the file says (dims, counts, names). */
static void check_judged(const a4w4_st_file *f, const a4w4_entry_list *el)
{
    const char *op = a4w4_st_meta(f, "op");
    int quant = is_op(op, "aiter.per_1x32_f4_quant_hip");
    size_t M = meta_dim(f, "M"), N = meta_dim(f, "N"), K = meta_dim(f, "K");
    fz_check(el->n >= 1, TARGET, "a judged capture with no entry");
    for (size_t i = 0; i < el->n; i++) {
        const a4w4_entry_result *e = &el->items[i];
        fz_check(!strcmp(e->name, "capture/fuzz"), TARGET, "entry named '%s'", e->name);
        fz_check(e->verdict != A4W4_VERDICT_NA, TARGET, "an n/a capture entry (a skip is due)");
        fz_check(!strpbrk(e->backend, "\n\r\x1b") && !strpbrk(e->contract, "\n\r\x1b"), TARGET,
                 "a control byte in backend '%s' or contract", e->backend);
        fz_check(e->M == M && e->K == K && (quant || e->N == N), TARGET,
                 "dims %zu, %zu, %zu are not the metadata's", e->M, e->N, e->K);
        if (!quant && e->has_judged)
            fz_check(e->judged_bit_exact + e->judged_in_bound + e->not_judged == M * N, TARGET,
                     "y judged counts cover %zu of %zu outputs",
                     e->judged_bit_exact + e->judged_in_bound + e->not_judged, M * N);
        if (quant && i == 0)
            fz_check(e->checked == M * K / 2, TARGET, "a_fp4 check covers %zu bytes", e->checked);
    }
    fz_check(!(is_op(op, "aiter.gemm_a4w4") && a4w4_st_find(f, "bias")), TARGET,
             "a gemm_a4w4 capture with a bias was judged");
    fz_check(quant || is_op(op, "aiter.gemm_a4w4") || is_op(op, "aiter.gemm_afp4wfp4"), TARGET,
             "an unknown op '%s' was judged", op ? op : "(none)");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    a4w4_st_file f;
    char err[512] = "", path[1024];
    if (a4w4_st_load_mem(NAME, data, size, &f, err, sizeof err))
        return 0; /* the reader's own target (fuzz_safetensors) holds its promises */
    fz_write_input(NAME, data, size, path, sizeof path);
    a4w4_entry_list el = {0};
    a4w4_hstatus rc =
        a4w4_run_capture(path, "capture/fuzz", A4W4_CODE0_BOTH, &el, err, sizeof err);
    fz_check(rc == A4W4_ST_OK || rc == A4W4_ST_BADINPUT || rc == A4W4_ST_NOMEM, TARGET,
             "status %d", (int)rc);
    if (rc == A4W4_ST_BADINPUT || rc == A4W4_ST_NOMEM) {
        fz_check_err_line(err, path, TARGET);
        fz_check(!strchr(err, '\x1b'), TARGET, "an ESC byte in the error: %s", err);
        fz_check(el.n == 1 && el.items[0].verdict == A4W4_VERDICT_FAIL, TARGET,
                 "a refused capture is %zu entries, not one failing entry", el.n);
    } else {
        check_judged(&f, &el);
        fz_accepted();
    }
    a4w4_entry_list_free(&el);
    a4w4_st_free(&f);
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    return fz_st_mutate(data, size, max_size, seed);
}
