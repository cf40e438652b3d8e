/* verify_capture.c — captured calls judged from their own operands (see verify_capture.h). */
#include "verify_capture.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_formats.h"
#include "a4w4_layout.h"
#include "a4w4_quant.h"
#include "a4w4_quote.h"
#include "a4w4_contract.h"
#include "a4w4_tree.h"
#include "backend.h"
#include "casefile.h"
#include "check.h"
#include "fsutil.h"
#include "runner.h"
#include "safetensors.h"
#include "verify_bundle.h"

typedef struct {
    const a4w4_st_file *f;
    const char *path;
    char *err;
    size_t errlen;
    size_t M, N, K;
    char name[160], backend[160]; /* the entries' identity */
    int code0_reading;            /* runner.h A4W4_CODE0_* */
} capture;

static a4w4_hstatus bad(capture *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static a4w4_hstatus bad(capture *c, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(c->err, c->errlen, "%s: %s", c->path, msg);
    return A4W4_ST_BADINPUT;
}

/* Metadata dimension: a positive decimal at most A4W4_CASE_DIM_MAX, else 0. */
static size_t dim(const capture *c, const char *key)
{
    const char *v = a4w4_st_meta(c->f, key);
    char *end;
    if (!v || *v < '0' || *v > '9')
        return 0;
    unsigned long long x = strtoull(v, &end, 10);
    return *end || x > A4W4_CASE_DIM_MAX ? 0 : (size_t)x;
}

/* Packed bytes [rows, cols] of tensor name, or NULL (absent, or misshapen: err set, *rc). */
static const uint8_t *packed(capture *c, const char *name, size_t rows, size_t cols,
                             a4w4_hstatus *rc)
{
    const a4w4_st_tensor *t = a4w4_st_find(c->f, name);
    size_t r, k;
    if (!t)
        return NULL;
    if (a4w4_st_packed_2d(t, &r, &k) || r != rows || k != cols) {
        *rc = bad(c, "tensor '%s' must be packed bytes [%zu, %zu] (U8, F8_E8M0, or F4 of twice "
                  "the columns)", name, rows, cols);
        return NULL;
    }
    return t->data;
}

/* One row-major operand: `plain` as stored, else `laid` through its inverse map into *buf.
 * NULL with *rc set when neither is there (or the inverse fails). */
static const uint8_t *operand(capture *c, const char *plain, const char *laid, size_t rows,
                              size_t cols, size_t lrows, size_t lcols,
                              int (*inverse)(const uint8_t *, size_t, size_t, uint8_t *),
                              size_t inv_a, size_t inv_b, uint8_t **buf, a4w4_hstatus *rc)
{
    const uint8_t *p = packed(c, plain, rows, cols, rc);
    if (p || *rc)
        return p;
    const uint8_t *l = packed(c, laid, lrows, lcols, rc);
    if (*rc)
        return NULL;
    if (!l) {
        *rc = bad(c, "the capture holds neither '%s' nor '%s'", plain, laid);
        return NULL;
    }
    if (!(*buf = malloc(rows * cols)) || inverse(l, inv_a, inv_b, *buf) != A4W4_OK) {
        *rc = bad(c, "'%s' cannot be read back through its layout (contracts §3)", laid);
        return NULL;
    }
    return *buf;
}

static int unshuffle_act(const uint8_t *src, size_t M, size_t nb, uint8_t *dst)
{
    return a4w4_act_scale_unshuffle(src, M, nb, dst);
}

/* The row-major operands of a GEMM capture; buf[4] receives what must be freed. */
static a4w4_hstatus gemm_operands(capture *c, const uint8_t *op[4], uint8_t *buf[4])
{
    size_t M = c->M, N = c->N, K = c->K, nb = K / 32;
    a4w4_hstatus rc = A4W4_ST_OK;
    op[0] = packed(c, "a_fp4", M, K / 2, &rc);
    if (!op[0] && !rc)
        rc = bad(c, "tensor 'a_fp4' [M, K/2] is missing");
    if (!rc)
        op[1] = operand(c, "a_scale", "a_scale_shuffled", M, nb, a4w4_act_scale_padded_rows(M),
                        a4w4_act_scale_padded_cols(nb), unshuffle_act, M, nb, &buf[1], &rc);
    if (!rc)
        op[2] = operand(c, "w_fp4", "w_fp4_shuffled", N, K / 2, N, K / 2, a4w4_unpreshuffle, N,
                        K, &buf[2], &rc);
    if (!rc)
        op[3] = operand(c, "w_scale", "w_scale_swizzled", N, nb, N, nb, a4w4_scale_unswizzle, N,
                        nb, &buf[3], &rc);
    return rc;
}

/* The contract the capture is judged by: the one its kernel declared (contracts §4.1, §4.2),
 * or the rule of its declared rule set (`when` lines, contracts §4.2 "The file form") that
 * matches the call's M, N, K, as canonical text in buf[len]; NULL when it records none
 * (*declared 0). Bad input (*rc set, NULL) when the text is no contract, no rule matches the
 * shape, or a tree that does not apply to the capture's K. */
static const char *capture_contract(capture *c, char *buf, size_t len, int *declared,
                                    a4w4_hstatus *rc)
{
    const char *t = a4w4_st_meta(c->f, "contract");
    char why[512], shown[512];
    a4w4_contract_set set;
    *declared = t && *t;
    if (!*declared)
        return NULL;
    /* the file form when its first line is a `when` rule, else one contract, strictly */
    int rules = !strncmp(t + strspn(t, " \t\r\n"), "when", 4);
    a4w4_contract one;
    int st = rules ? a4w4_contract_set_parse(t, &set, why, sizeof why)
                   : a4w4_contract_parse(t, &one, why, sizeof why);
    if (!st && !rules && a4w4_contract_set_single(&one, &set))
        snprintf(why, sizeof why, "contract: out of memory"), st = A4W4_ENOMEM;
    if (st) {
        *rc = bad(c, "metadata %s", a4w4_quote(why, shown, sizeof shown));
        return NULL;
    }
    const a4w4_contract *k = a4w4_contract_set_find(&set, c->M, c->N, c->K);
    if (!k)
        *rc = bad(c, "metadata contract has no rule for M=%zu N=%zu K=%zu (contracts §4.2)",
                  c->M, c->N, c->K);
    else if (k->kind == A4W4_CONTRACT_TREE && a4w4_tree_check(&k->tree, c->K, why, sizeof why))
        *rc = bad(c, "metadata contract does not apply to K=%zu: %s (contracts §4.2)", c->K,
                  a4w4_quote(why, shown, sizeof shown));
    else if (a4w4_contract_format(k, buf, len) < 0)
        *rc = bad(c, "metadata contract: its canonical text is too long");
    a4w4_contract_set_free(&set);
    return *rc ? NULL : buf;
}

/* 1 when metadata key is absent or reads as exactly the number want. */
static int meta_number_is(const capture *c, const char *key, double want)
{
    const char *v = a4w4_st_meta(c->f, key);
    char *end;
    if (!v)
        return 1;
    double x = strtod(v, &end);
    return end != v && !*end && x == want;
}

/* 1 when metadata key is absent or is want ("True" / "False", as Python writes a bool). */
static int meta_flag_is(const capture *c, const char *key, const char *want)
{
    const char *v = a4w4_st_meta(c->f, key);
    return !v || !strcmp(v, want);
}

/* Refuse a gemm_a4w4 call whose result depends on more than the GEMM (contracts §7.1): a
 * bias, alpha != 1, beta != 0, or a bpreshuffle flag the recorded weight contradicts. */
static a4w4_hstatus refuse_a4w4_epilogue(capture *c)
{
    char sa[32], sb[32], sp[32];
    const char *alpha = a4w4_st_meta(c->f, "alpha"), *beta = a4w4_st_meta(c->f, "beta");
    const char *pre = a4w4_st_meta(c->f, "bpreshuffle");
    int plain = a4w4_st_find(c->f, "w_fp4") != NULL;
    int shuffled = a4w4_st_find(c->f, "w_fp4_shuffled") != NULL;
    if (a4w4_st_find(c->f, "bias"))
        return bad(c, "the call passed a bias, which gemm_a4w4 applies inside the kernel "
                   "(alpha*A*B + beta*bias on its ASM route, ignored on its CK route): no "
                   "contract states that epilogue, so the capture is not judged (contracts "
                   "§7.1)");
    if (!meta_number_is(c, "alpha", 1.0) || !meta_number_is(c, "beta", 0.0))
        return bad(c, "metadata alpha '%s', beta '%s': the kernel returns alpha*A*B + "
                   "beta*bias, and only alpha = 1, beta = 0 (the GEMM alone) is judged "
                   "(contracts §7.1)", a4w4_quote(alpha ? alpha : "1", sa, sizeof sa),
                   a4w4_quote(beta ? beta : "0", sb, sizeof sb));
    if (pre && !(!strcmp(pre, "True") ? shuffled && !plain : !strcmp(pre, "False") && plain))
        return bad(c, "metadata bpreshuffle '%s' but the capture holds %s: the weight the "
                   "kernel read is not the one judged (contracts §7.1)",
                   a4w4_quote(pre, sp, sizeof sp),
                   plain && shuffled ? "both w_fp4 and w_fp4_shuffled"
                   : plain           ? "w_fp4 (row-major)"
                   : shuffled        ? "w_fp4_shuffled"
                                     : "no weight");
    return A4W4_ST_OK;
}

/* Refuse a gemm_afp4wfp4 call that returns something other than y bf16 [M, N] reduced
 * (contracts §7.1): another output dtype, or skip_reduce (split-K partials). */
static a4w4_hstatus refuse_afp4wfp4_output(capture *c)
{
    char shown[64];
    const char *dtype = a4w4_st_meta(c->f, "dtype"), *skip = a4w4_st_meta(c->f, "skip_reduce");
    if (!meta_flag_is(c, "dtype", "torch.bfloat16"))
        return bad(c, "metadata dtype '%s': only a torch.bfloat16 output is judged (contracts "
                   "§7.1)", a4w4_quote(dtype, shown, sizeof shown));
    if (!meta_flag_is(c, "skip_reduce", "False"))
        return bad(c, "metadata skip_reduce '%s': the call returned split-K partials, not y; "
                   "only skip_reduce False is judged (contracts §7.1)",
                   a4w4_quote(skip, shown, sizeof shown));
    return A4W4_ST_OK;
}

/* A new entry of the capture (kind, identity, contract); NULL with *rc set when out of memory. */
static a4w4_entry_result *capture_entry(capture *c, a4w4_entry_list *out, a4w4_entry_kind kind,
                                        const char *contract, a4w4_hstatus *rc)
{
    a4w4_entry_result *e = a4w4_entry_list_add(out);
    if (!e) {
        *rc = bad(c, "out of memory");
        return NULL;
    }
    a4w4_entry_identity(e, kind, c->name, c->M, c->N, c->K, "capture", 0, c->backend, contract);
    return e;
}

/* The captured output y, BF16 [M, N], copied (malloc'ed; the file's data need not be 2-byte
 * aligned: copy, never cast); NULL with *rc set when it is missing, misshapen or no memory. */
static uint16_t *captured_y(capture *c, a4w4_hstatus *rc)
{
    const a4w4_st_tensor *y = a4w4_st_find(c->f, "y");
    if (!y || y->dtype != A4W4_DT_BF16 || y->ndim != 2 || y->shape[0] != c->M ||
        y->shape[1] != c->N) {
        *rc = bad(c, "tensor 'y' (the kernel's output) must be BF16 [%zu, %zu]", c->M, c->N);
        return NULL;
    }
    uint16_t *got = malloc(c->M * c->N * sizeof *got);
    if (!got)
        *rc = bad(c, "out of memory");
    else
        memcpy(got, y->data, c->M * c->N * sizeof *got);
    return got;
}

static a4w4_hstatus verify_gemm(capture *c, int a4w4, a4w4_entry_list *out)
{
    a4w4_hstatus rc = a4w4 ? refuse_a4w4_epilogue(c) : refuse_afp4wfp4_output(c);
    if (rc)
        return rc;
    int declared;
    char text[A4W4_CONTRACT_MAX];
    const char *contract = capture_contract(c, text, sizeof text, &declared, &rc);
    if (rc)
        return rc;
    const char *label = declared ? contract : A4W4_CONTRACT_UNDECLARED;
    const uint8_t *op[4] = {0};
    uint8_t *buf[4] = {0};
    rc = gemm_operands(c, op, buf);
    uint16_t *y = rc ? NULL : captured_y(c, &rc);
    a4w4_entry_result *e = rc ? NULL : capture_entry(c, out, A4W4_ENTRY_OUTPUTS, label, &rc);
    if (e) {
        a4w4_judge_input in = {c->name, "capture", c->backend, contract, op[0], op[1], op[2],
                               op[3], c->M, c->N, c->K, y, c->code0_reading};
        if (a4w4_judge_outputs(&in, e) != A4W4_ST_OK)
            rc = bad(c, "out of memory");
        else if (e->verdict == A4W4_VERDICT_FAIL)
            rc = A4W4_ST_MISMATCH;
    }
    free(y);
    for (int i = 0; i < 4; i++)
        free(buf[i]);
    return rc;
}

/* One quantizer output tensor's check as an entry of the capture. */
static void quant_entry(capture *c, a4w4_entry_list *out, const a4w4_check *k, a4w4_hstatus *rc)
{
    const char *contract = a4w4_st_meta(c->f, "contract");
    a4w4_entry_result *e = capture_entry(c, out, A4W4_ENTRY_BYTES,
                                         contract && *contract ? contract : "n/a", rc);
    if (e) {
        a4w4_entry_set_check(e, k);
        snprintf(e->note, sizeof e->note, "%s%s%s", k->subject, k->note[0] ? ": " : "",
                 k->note);
    }
}

/* The quantizer's outputs against ref's round_up quantization of x (contracts §2). */
static a4w4_hstatus verify_quant(capture *c, a4w4_entry_list *out)
{
    size_t M = c->M, K = c->K, nb = K / 32;
    const a4w4_st_tensor *x = a4w4_st_find(c->f, "x");
    a4w4_hstatus rc = A4W4_ST_OK;
    const uint8_t *q = packed(c, "a_fp4", M, K / 2, &rc);
    int shuf = a4w4_st_find(c->f, "a_scale_shuffled") != NULL;
    size_t sr = shuf ? a4w4_act_scale_padded_rows(M) : M;
    size_t sc = shuf ? a4w4_act_scale_padded_cols(nb) : nb;
    const uint8_t *s = rc ? NULL : packed(c, shuf ? "a_scale_shuffled" : "a_scale", sr, sc, &rc);
    const char *flag = a4w4_st_meta(c->f, "shuffle");
    char shown[32];
    if (!rc && (!x || x->dtype != A4W4_DT_BF16 || x->ndim != 2 || x->shape[0] != M ||
                x->shape[1] != K || !q || !s))
        rc = bad(c, "a quantizer capture holds x BF16 [%zu, %zu], a_fp4 and a_scale or "
                 "a_scale_shuffled", M, K);
    if (!rc && !meta_flag_is(c, "shuffle", shuf ? "True" : "False"))
        rc = bad(c, "metadata shuffle '%s' but the capture holds %s: the scale the call "
                 "returned is not the one recorded (contracts §7.1)",
                 a4w4_quote(flag, shown, sizeof shown), shuf ? "a_scale_shuffled" : "a_scale");
    uint8_t *rq = rc ? NULL : malloc(M * K / 2), *rs = rc ? NULL : malloc(sr * sc);
    uint16_t *xc = rc ? NULL : malloc(M * K * sizeof *xc);
    if (xc) /* the file's data need not be 2-byte aligned: copy, never cast */
        memcpy(xc, x->data, M * K * sizeof *xc);
    if (!rc && (!rq || !rs || !xc || a4w4_quantize(xc, A4W4_IN_BF16, M, K, A4W4_ROUND_UP, shuf,
                                                   rq, rs) != A4W4_OK))
        rc = bad(c, "out of memory");
    if (!rc) {
        a4w4_check k[2];
        a4w4_check_bytes(&k[0], "a_fp4 (round_up)", q, rq, M, K / 2, NULL);
        a4w4_check_bytes(&k[1], shuf ? "a_scale_shuffled (round_up)" : "a_scale (round_up)", s,
                         rs, sr, sc, NULL);
        for (int i = 0; i < 2 && !rc; i++)
            quant_entry(c, out, &k[i], &rc);
        if (!rc && (k[0].verdict == A4W4_CHECK_FAIL || k[1].verdict == A4W4_CHECK_FAIL))
            rc = A4W4_ST_MISMATCH;
    }
    free(rq);
    free(rs);
    free(xc);
    return rc;
}

/* The capture's entries into out (see a4w4_run_capture). */
static a4w4_hstatus judge_capture(capture *c, a4w4_entry_list *out)
{
    const char *op = a4w4_st_meta(c->f, "op");
    int quant = op && !strcmp(op, "aiter.per_1x32_f4_quant_hip");
    int gemm = op && (!strcmp(op, "aiter.gemm_a4w4") || !strcmp(op, "aiter.gemm_afp4wfp4"));
    char shown[64];
    snprintf(c->backend, sizeof c->backend, "capture:%s",
             a4w4_quote(op ? op : "?", shown, sizeof shown));
    c->M = dim(c, "M");
    c->N = dim(c, "N");
    c->K = dim(c, "K");
    const char *fmt = a4w4_st_meta(c->f, "format");
    if (!fmt || strcmp(fmt, A4W4_CAPTURE_FORMAT))
        return bad(c, "metadata format '%s' is not " A4W4_CAPTURE_FORMAT,
                   a4w4_quote(fmt ? fmt : "(missing)", shown, sizeof shown));
    if (!quant && !gemm)
        return bad(c, "metadata op '%s' is not aiter.gemm_a4w4, aiter.gemm_afp4wfp4 or "
                   "aiter.per_1x32_f4_quant_hip",
                   a4w4_quote(op ? op : "(missing)", shown, sizeof shown));
    if (!c->M || (gemm && !c->N) || !c->K || c->K % 32)
        return bad(c, "metadata M, N, K must be positive decimals (N 0 for the quantizer) "
                   "with K %% 32 == 0 (contracts §1)");
    return quant ? verify_quant(c, out) : verify_gemm(c, !strcmp(op, "aiter.gemm_a4w4"), out);
}

int a4w4_is_capture(const char *path)
{
    a4w4_st_file f;
    if (a4w4_st_load(path, &f, NULL, 0) != A4W4_ST_OK)
        return 0;
    const char *fmt = a4w4_st_meta(&f, "format");
    int yes = fmt && !strcmp(fmt, A4W4_CAPTURE_FORMAT);
    a4w4_st_free(&f);
    return yes;
}

a4w4_hstatus a4w4_run_capture(const char *path, const char *name, int code0_reading,
                              a4w4_entry_list *out, char *err, size_t errlen)
{
    a4w4_st_file f;
    double t0 = a4w4_now() * 1e3;
    if (a4w4_st_load(path, &f, err, errlen) != A4W4_ST_OK)
        return A4W4_ST_BADINPUT;
    capture c = {&f, path, err, errlen, 0, 0, 0, "", "", code0_reading};
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t L = strlen(base);
    if (name)
        snprintf(c.name, sizeof c.name, "%s", name);
    else
        snprintf(c.name, sizeof c.name, "capture/%.*s", (int)(L > 12 ? L - 12 : L), base);
    size_t first = out->n;
    a4w4_hstatus rc = judge_capture(&c, out);
    if (rc == A4W4_ST_BADINPUT || rc == A4W4_ST_NOMEM) {
        out->n = first; /* a capture that could not be read is one failing entry */
        a4w4_hstatus r2 = A4W4_ST_OK;
        const char *contract = a4w4_st_meta(&f, "contract");
        a4w4_entry_result *e = capture_entry(&c, out, A4W4_ENTRY_BYTES,
                                             contract && *contract ? contract : "n/a", &r2);
        if (e) {
            e->verdict = A4W4_VERDICT_FAIL;
            snprintf(e->note, sizeof e->note, "bad input: %s", err);
        } else
            rc = A4W4_ST_NOMEM;
    }
    double ms = a4w4_now() * 1e3 - t0;
    for (size_t i = first; i < out->n; i++) {
        out->items[i].time_ms = ms;
        /* the layer the call came from and the line that called it (entry.h) */
        a4w4_capture_layer(&f, out->items[i].layer, sizeof out->items[i].layer,
                           out->items[i].call_site, sizeof out->items[i].call_site);
        /* a capture is a comparison asked for: one that judged nothing is not made (skip),
         * which keeps the verdict from PASS */
        if (out->items[i].verdict == A4W4_VERDICT_NA)
            out->items[i].verdict = A4W4_VERDICT_SKIP;
    }
    a4w4_st_free(&f);
    return rc == A4W4_ST_MISMATCH ? A4W4_ST_OK : rc;
}
