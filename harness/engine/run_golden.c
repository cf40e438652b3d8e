/* run_golden.c — cases made of given operands (runner.h, runner_internal.h): golden bundles
 * (contracts §7) through the backends and their quantizer tensors, captures judged from
 * their own outputs (a4w4_judge_outputs), and a4w4_run_data. */
#include "runner_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "failing.h"
#include "fsutil.h"

/* ---- cases made of given operands (golden bundles, captures) -------------------------- */

/* A case whose row-major operands are given rather than generated: every output in the
 * sample, the operands loaded as case data, the oracles over them (both readings of E8M0
 * code 0 where it occurs), where to reload them from. */
typedef struct {
    a4w4_sample s;
    a4w4_case_data d;
    case_oracles co;
    case_source src;
    int loaded; /* d holds data */
} given_case;

/* Open g for case c (M, N, K, name) on operands op = {a_fp4, a_scale, w_fp4, w_scale} (kept
 * by the caller until given_case_close), judged under E8M0 code-0 policy A4W4_CODE0_* and
 * max_timeouts. 0, or -1 when out of memory; g is valid for given_case_close either way. */
static int given_case_open(given_case *g, const a4w4_case *c, const uint8_t *const op[4],
                           int policy, int max_timeouts)
{
    memset(g, 0, sizeof *g);
    g->src = (case_source){c, &g->s, op, 0};
    if (a4w4_sample_make(c->M, c->N, c->K, 0, c->name, 1, &g->s) != A4W4_OK ||
        a4w4_case_data_load(op[0], op[1], op[2], op[3], c->M, c->N, c->K, &g->d) != A4W4_OK)
        return -1;
    g->loaded = 1;
    return run_case_oracles_open(&g->co, &g->d, &g->s, policy, max_timeouts);
}

static void given_case_close(given_case *g)
{
    run_case_oracles_close(&g->co);
    if (g->loaded)
        a4w4_case_data_free(&g->d);
    a4w4_sample_free(&g->s);
}

/* ---- outputs computed elsewhere (captures) ------------------------------------------ */

/* The "backend" of a4w4_judge_outputs: hands back the outputs it was given. */
static int run_given(void *ctx, const a4w4_run_args *a)
{
    const uint16_t *y = ctx;
    memcpy(a->y, y, a->s->nrows * a->s->ncols * sizeof *y); /* a full sample: y as given */
    return A4W4_OK;
}

static const a4w4_backend_type given_type = {.name = "given",
                                             .what = "outputs computed elsewhere",
                                             .contract = "exact",
                                             .thread_safe = 1,
                                             .full_outputs = 1,
                                             .run = run_given};

/* S of "ordered(S)", "bounded(S)" or "atomic(S)" (plain "bounded": 1); 1 for the others. */
static unsigned split_of(const char *contract)
{
    unsigned S = 1;
    if (sscanf(contract, "ordered(%u)", &S) != 1 && sscanf(contract, "bounded(%u)", &S) != 1 &&
        sscanf(contract, "atomic(%u)", &S) != 1)
        S = 1;
    return S;
}

/* An entry judged as exact because its kernel declared no contract says so. */
static void label_undeclared(a4w4_entry_result *e)
{
    char note[sizeof e->note];
    snprintf(e->contract, sizeof e->contract, "%s", A4W4_CONTRACT_UNDECLARED);
    snprintf(note, sizeof note, "no contract declared: judged as exact, inside the exact regime "
             "only (contracts §4.1)%s%.640s", e->note[0] ? "; " : "", e->note);
    memcpy(e->note, note, sizeof note);
}

a4w4_hstatus a4w4_judge_outputs(const a4w4_judge_input *in, a4w4_entry_result *e)
{
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s", in->name);
    snprintf(c.regime_text, sizeof c.regime_text, "%s", in->regime);
    c.M = in->M, c.N = in->N, c.K = in->K;
    a4w4_backend b;
    memset(&b, 0, sizeof b);
    b.type = &given_type;
    b.ctx = (void *)in->y;
    snprintf(b.name, sizeof b.name, "%s", in->backend);
    snprintf(b.contract, sizeof b.contract, "%s",
             !in->contract                   ? "exact" /* none declared: judged as exact */
             : strcmp(in->contract, "bounded") ? in->contract
                                             : "bounded(1)");
    b.split = split_of(b.contract);
    const uint8_t *op[4] = {in->a_fp4, in->a_scale, in->w_fp4, in->w_scale};
    given_case g;
    a4w4_hstatus st = A4W4_ST_NOMEM;
    if (given_case_open(&g, &c, op, in->code0_reading, 0) == 0) {
        run_gemm_backend(NULL, &b, &c, &g.d, &g.s, &g.co.j, &g.src, e);
        e->has_tags = 0;
        if (!in->contract)
            label_undeclared(e);
        st = A4W4_ST_OK;
    }
    given_case_close(&g);
    return st;
}

/* The system under test whose check this is ("<name> vs y_ordered"), or NULL. */
static const a4w4_bundle_sut *sut_of(const a4w4_check *c, const a4w4_bundle_sut *suts,
                                     size_t nsuts)
{
    for (size_t i = 0; i < nsuts; i++) {
        size_t L = strlen(suts[i].name);
        if (!strncmp(c->subject, suts[i].name, L) && c->subject[L] == ' ')
            return &suts[i];
    }
    return NULL;
}

/* 1 when backend name is selected and keeps its declared contract: a system under test judged
 * by another contract (`run --contract`) is not checked against the bundle's y_ordered but
 * through golden_backends, by the oracle of its contract. */
int run_selected(const a4w4_runner *r, const char *name)
{
    for (size_t j = 0; j < r->nbackends; j++)
        if (!strcmp(r->backends[j].name, name))
            return !r->backends[j].declared[0];
    return 0;
}

/* Identity of a golden entry: "golden/<file name without .safetensors>". */
static void golden_identity(a4w4_entry_result *e, const char *path, const size_t dims[3],
                            const char *backend, const char *contract, double ms)
{
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char name[128];
    size_t L = strlen(base);
    snprintf(name, sizeof name, "golden/%.*s", (int)(L > 12 ? L - 12 : L), base);
    a4w4_entry_identity(e, A4W4_ENTRY_BYTES, name, dims[0], dims[1], dims[2], "golden", 0,
                        backend, contract);
    e->sampled = 0;
    e->time_ms = ms;
}

/* The oracle's golden check: every tensor check that is no system under test's, folded
 * (first failure kept, checked summed), or the bad-input error. */
static void golden_oracle(const a4w4_check_list *checks, const a4w4_bundle_sut *suts,
                          size_t nsuts, a4w4_hstatus rc, const char *err, const char *path,
                          a4w4_check *oracle)
{
    memset(oracle, 0, sizeof *oracle);
    snprintf(oracle->subject, sizeof oracle->subject, "bundle tensors");
    oracle->verdict = rc == A4W4_ST_BADINPUT ? A4W4_CHECK_FAIL : A4W4_CHECK_PASS;
    if (rc == A4W4_ST_BADINPUT) /* no kernel's mismatch: a refusal (the run is bad input) */
        snprintf(oracle->note, sizeof oracle->note, "refused: bad input: %.130s", err);
    size_t ntensor = 0;
    for (size_t i = 0; i < checks->n; i++) {
        const a4w4_check *c = &checks->items[i];
        if (sut_of(c, suts, nsuts) ||
            !strncmp(c->subject, A4W4_RECORDED_SUBJECT, strlen(A4W4_RECORDED_SUBJECT)))
            continue; /* a system under test's, or outputs recorded by another run */
        ntensor++;
        oracle->checked += c->checked;
        if (c->verdict == A4W4_CHECK_FAIL && oracle->verdict != A4W4_CHECK_FAIL) {
            size_t checked = oracle->checked;
            *oracle = *c;
            oracle->checked = checked;
        }
    }
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (!oracle->note[0])
        snprintf(oracle->note, sizeof oracle->note, "%zu tensor checks (a4w4check verify %s)",
                 ntensor, base);
}

/* 1 when backend b is one of the systems under test bundle verification already ran (with
 * its declared contract, ordered(1): y_ordered). */
static int is_sut(const a4w4_backend *b, const a4w4_bundle_sut *suts, size_t nsuts)
{
    if (b->declared[0])
        return 0;
    for (size_t i = 0; i < nsuts; i++)
        if (!strcmp(suts[i].name, b->name))
            return 1;
    return 0;
}

/* The row-major operands of a loaded case bundle into op. 0, or -1 (a tensor missing or of
 * the wrong shape: bundle verification has reported it). */
static int golden_operands(const a4w4_st_file *f, const size_t dims[3], const uint8_t *op[4])
{
    static const char *const names[4] = {"a_fp4", "a_scale", "w_fp4", "w_scale"};
    size_t M = dims[0], N = dims[1], K = dims[2];
    const size_t want[4][2] = {{M, K / 2}, {M, K / 32}, {N, K / 2}, {N, K / 32}};
    for (int i = 0; i < 4; i++) {
        const a4w4_st_tensor *x = a4w4_st_find(f, names[i]);
        size_t rows, cols;
        if (!x || a4w4_st_packed_2d(x, &rows, &cols) || rows != want[i][0] || cols != want[i][1])
            return -1;
        op[i] = x->data;
    }
    return 0;
}

/* Every output of case c on row-major operands op = {a_fp4, a_scale, w_fp4, w_scale} through
 * each backend of r with a GEMM but the systems under test suts[0..nsuts) (entries appended
 * to out), judged as a given case (both readings of E8M0 code 0 where it occurs). NOMEM,
 * else OK. */
static a4w4_hstatus data_backends(const a4w4_runner *r, const a4w4_bundle_sut *suts,
                                  size_t nsuts, const a4w4_case *c, const uint8_t *const op[4],
                                  int layouts, a4w4_entry_list *out)
{
    given_case g;
    a4w4_hstatus st = given_case_open(&g, c, op, r->code0_reading, r->max_timeouts)
                          ? A4W4_ST_NOMEM
                          : A4W4_ST_OK;
    for (size_t i = 0; i < r->nbackends && st == A4W4_ST_OK; i++) {
        a4w4_backend *b = &r->backends[i];
        a4w4_entry_result *e;
        const int lay = layouts && b->type && !b->type->run && b->type->layouts;
        if (!b->type || (!b->type->run && !lay) || is_sut(b, suts, nsuts))
            continue;
        if (!(e = a4w4_entry_list_add(out)))
            st = A4W4_ST_NOMEM;
        else if (lay) { /* ref's layouts of the bundle's operands, which the bundle's oracle
                         * entry holds equal to the bundle's own (AITER's) layout tensors */
            run_layout_backend(b, c, &g.d, &g.s, e);
            run_note(e->note, sizeof e->note, "%sagainst ref's layouts of the bundle's "
                     "operands (the oracle entry holds them equal to the bundle's)",
                     e->note[0] ? "; " : "");
        } else
            run_gemm_backend(r, b, c, &g.d, &g.s, &g.co.j, &g.src, e);
    }
    given_case_close(&g);
    return st;
}

a4w4_hstatus a4w4_run_data(const a4w4_runner *r, const a4w4_case *c, a4w4_case_data *d,
                           a4w4_entry_list *out, char *err, size_t errlen)
{
    const uint8_t *op[4] = {d->a_fp4.data, d->a_scale.data, d->w_fp4.data, d->w_scale.data};
    a4w4_hstatus st = data_backends(r, NULL, 0, c, op, 0, out);
    if (st != A4W4_ST_OK)
        snprintf(err, errlen, "case %s: out of memory", c->name);
    return st;
}

/* Golden bundle path through every selected backend with a GEMM (plugins, bundles, HIP)
 * other than the systems under test bundle verification ran: its operands as a case, every
 * output compared with the oracle of the backend's contract. NOMEM, else OK. */
static a4w4_hstatus golden_backends(const a4w4_runner *r, const a4w4_bundle_sut *suts,
                                    size_t nsuts, const char *path, const size_t dims[3],
                                    a4w4_entry_list *out)
{
    size_t want = 0;
    for (size_t i = 0; i < r->nbackends; i++)
        want += r->backends[i].type &&
                (r->backends[i].type->run || r->backends[i].type->layouts) &&
                !is_sut(&r->backends[i], suts, nsuts);
    a4w4_st_file f;
    if (!want || !dims[0] || a4w4_st_load(path, &f, NULL, 0))
        return A4W4_ST_OK;
    a4w4_case c = {.M = dims[0], .N = dims[1], .K = dims[2], .regime = A4W4_REGIME_EXACT};
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    snprintf(c.name, sizeof c.name, "golden/%.*s", (int)(strlen(base) - 12), base);
    snprintf(c.regime_text, sizeof c.regime_text, "golden");
    snprintf(c.tags, sizeof c.tags, "golden");
    const uint8_t *op[4];
    a4w4_hstatus st = A4W4_ST_OK;
    if (golden_operands(&f, dims, op) == 0)
        st = data_backends(r, suts, nsuts, &c, op, 1, out);
    a4w4_st_free(&f);
    return st;
}

/* Quantizer backend b on a quantization bundle's x_bf16 [rows, K] in every scale mode whose
 * expected codes and scales (a_fp4_<mode>_from_bf16, a_scale_<mode>_from_bf16: AITER's) the
 * bundle holds, byte for byte (codes of NaN blocks, scale 0xFF, skipped: contracts §2). */
static void golden_quant_entry(a4w4_backend *b, const a4w4_case *c, const a4w4_st_file *f,
                               const a4w4_st_tensor *x, a4w4_entry_result *e)
{
    const size_t rows = x->shape[0], K = x->shape[1], nb = K / 32;
    static const a4w4_sample all = {.full = 1};
    uint8_t *q = malloc(rows * K / 2 + 1), *sc = malloc(rows * nb + 1),
            *skip = malloc(rows * K / 2 + 1);
    a4w4_check chk[2 * A4W4_SCALE_MODE_COUNT];
    int n = 0, na = 1;
    char why[512] = "";
    double ms = 0;
    for (int m = 0; m < A4W4_SCALE_MODE_COUNT && q && sc && skip; m++) {
        char tq[64], ts[64];
        snprintf(tq, sizeof tq, "a_fp4_%s_from_bf16", a4w4_scale_mode_name((a4w4_scale_mode)m));
        snprintf(ts, sizeof ts, "a_scale_%s_from_bf16", a4w4_scale_mode_name((a4w4_scale_mode)m));
        const a4w4_st_tensor *rq = a4w4_st_find(f, tq), *rs = a4w4_st_find(f, ts);
        if (!rq || !rs || rq->nbytes != rows * K / 2 || rs->nbytes != rows * nb)
            continue;
        double t0 = a4w4_now() * 1e3;
        run_enter(b);
        int rc = b->type->quantize(b->ctx, (const uint16_t *)x->data, rows, K, m, q, sc, why,
                                   sizeof why);
        run_leave(b);
        ms += a4w4_now() * 1e3 - t0;
        if (rc == A4W4_EUNSUPPORTED)
            continue;
        na = 0;
        if (rc != A4W4_OK) {
            a4w4_check_na(&chk[n], "quantize", why[0] ? why : a4w4_status_str(rc));
            chk[n++].verdict = A4W4_CHECK_FAIL;
            break;
        }
        for (size_t k = 0; k < rows * K / 2; k++) /* a NaN block's codes are unspecified */
            skip[k] = rs->data[(k / (K / 2)) * nb + (k % (K / 2)) / 16] == 0xFF;
        a4w4_check_bytes(&chk[n++], tq, q, rq->data, rows, K / 2, skip);
        a4w4_check_bytes(&chk[n++], ts, sc, rs->data, rows, nb, NULL);
    }
    if (!q || !sc || !skip) {
        a4w4_check_na(&chk[n], "quantize", "out of memory");
        chk[n++].verdict = A4W4_CHECK_FAIL;
        na = 0;
    }
    run_byte_entry(c, b, &all, chk, n, ms,
               na ? (why[0] ? why : "the bundle holds no mode's codes and scales from bf16") : NULL,
               e);
    free(q);
    free(sc);
    free(skip);
}

/* Every quantizer backend of r on a quantization bundle (x_bf16 and each mode's expected
 * codes and scales). NOMEM, else OK. */
static a4w4_hstatus golden_quantizers(const a4w4_runner *r, const char *path,
                                      a4w4_entry_list *out)
{
    size_t want = 0;
    for (size_t i = 0; i < r->nbackends; i++)
        want += r->backends[i].type && r->backends[i].type->quantize != NULL;
    a4w4_st_file f;
    if (!want || a4w4_st_load(path, &f, NULL, 0))
        return A4W4_ST_OK;
    const a4w4_st_tensor *x = a4w4_st_find(&f, "x_bf16");
    a4w4_hstatus st = A4W4_ST_OK;
    if (x && x->dtype == A4W4_DT_BF16 && x->ndim == 2 && x->shape[0] && x->shape[1] &&
        x->shape[1] % 32 == 0) {
        a4w4_case c = {.M = x->shape[0], .N = 0, .K = x->shape[1]};
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        snprintf(c.name, sizeof c.name, "golden/%.*s", (int)(strlen(base) - 12), base);
        snprintf(c.regime_text, sizeof c.regime_text, "golden");
        snprintf(c.tags, sizeof c.tags, "golden");
        for (size_t i = 0; i < r->nbackends && st == A4W4_ST_OK; i++) {
            a4w4_backend *b = &r->backends[i];
            a4w4_entry_result *e;
            if (!b->type || !b->type->quantize)
                continue;
            if (!(e = a4w4_entry_list_add(out)))
                st = A4W4_ST_NOMEM;
            else
                golden_quant_entry(b, &c, &f, x, e);
        }
    }
    a4w4_st_free(&f);
    return st;
}

a4w4_hstatus a4w4_run_golden(const a4w4_runner *r, const a4w4_bundle_sut *suts, size_t nsuts,
                             const char *path, a4w4_entry_list *out, char *err, size_t errlen)
{
    a4w4_check_list checks = {0};
    double t0 = (a4w4_now() * 1e3);
    size_t dims[3] = {0, 0, 0};
    a4w4_hstatus rc = a4w4_verify_bundle(path, suts, nsuts, &checks, dims, err, errlen);
    double ms = (a4w4_now() * 1e3) - t0;
    a4w4_hstatus st = rc == A4W4_ST_BADINPUT ? A4W4_ST_BADINPUT : A4W4_ST_OK;
    a4w4_entry_result *e;
    for (size_t i = 0; i < checks.n && st != A4W4_ST_NOMEM; i++) {
        const a4w4_bundle_sut *sut = sut_of(&checks.items[i], suts, nsuts);
        if (!sut || !run_selected(r, sut->name))
            continue;
        if (!(e = a4w4_entry_list_add(out))) {
            st = A4W4_ST_NOMEM;
            break;
        }
        golden_identity(e, path, dims, sut->name, "ordered(1)", ms);
        a4w4_entry_set_check(e, &checks.items[i]);
        e->has_judged = 1; /* the system under test's y against y_ordered, bit for bit */
        e->judged_bit_exact = e->verdict == A4W4_VERDICT_NA ? 0 : e->checked;
        e->not_judged = dims[0] * dims[1] - e->judged_bit_exact;
    }
    if (st != A4W4_ST_NOMEM && (e = a4w4_entry_list_add(out))) {
        a4w4_check oracle;
        golden_oracle(&checks, suts, nsuts, rc, err, path, &oracle);
        golden_identity(e, path, dims, "oracle", "bit-exact tensors", ms);
        a4w4_entry_set_check(e, &oracle);
    } else {
        st = A4W4_ST_NOMEM;
    }
    if (st == A4W4_ST_OK && rc != A4W4_ST_BADINPUT) {
        size_t first = out->n;
        st = dims[1] ? golden_backends(r, suts, nsuts, path, dims, out) /* a GEMM's bundle */
                     : golden_quantizers(r, path, out);
        if (st == A4W4_ST_OK) /* a backend refusing the bundle is bad input, as for a case */
            st = run_refusals(out, first, err, errlen);
    }
    if (st == A4W4_ST_NOMEM)
        snprintf(err, errlen, "%s: out of memory for the results", path);
    a4w4_check_list_free(&checks);
    return st;
}
