/* test_runner.c — a4w4_run_case around the stages (test_run_gemm.c, test_run_golden.c hold
 * theirs): backends entered one call at a time unless thread-safe, the entries' JSON form,
 * and the budget (full outputs where a full check is estimated to fit), through small
 * backends defined here and in run_fixture.h. */
#include <criterion/criterion.h>

#include "run_fixture.h"

/* Regression (hazards --jobs 16 with HIP backends crashed on the H200): GPU backends share
 * one device and the HIP backends' device cache, so the runner must never enter a backend
 * that is not thread_safe (every GPU type) from two threads at once, whatever the caller's
 * threading; a thread_safe one is entered concurrently. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

static atomic_int g_inside, g_overlap;

static int run_exclusive(void *ctx, const a4w4_run_args *a)
{
    if (atomic_fetch_add(&g_inside, 1) != 0)
        atomic_store(&g_overlap, 1);
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    int rc = run_fault(ctx, a);
    atomic_fetch_sub(&g_inside, 1);
    return rc;
}

static a4w4_backend_type gpu_like_type = {
    .name = "gpu-like", .what = "test backend marked gpu", .contract = "ordered(1)", .gpu = 1,
    .run = run_exclusive};
static a4w4_backend_type serial_cpu_type = {
    .name = "serial-cpu", .what = "CPU test backend not declared thread-safe",
    .contract = "ordered(1)", .run = run_exclusive};
static a4w4_backend_type safe_cpu_type = {
    .name = "safe-cpu", .what = "CPU test backend declared thread-safe",
    .contract = "ordered(1)", .thread_safe = 1, .run = run_exclusive};

static void *case_thread(void *arg)
{
    a4w4_backend b;
    memset(&b, 0, sizeof b);
    b.type = arg;
    snprintf(b.name, sizeof b.name, "%s", b.type->name);
    snprintf(b.contract, sizeof b.contract, "ordered(1)");
    b.split = 1;
    a4w4_runner r = {.backends = &b, .nbackends = 1};
    for (int i = 0; i < 4; i++) {
        a4w4_case c;
        memset(&c, 0, sizeof c);
        snprintf(c.name, sizeof c.name, "mt%d", i);
        c.M = 2;
        c.N = 32;
        c.K = 64;
        c.regime = A4W4_REGIME_EXACT;
        c.seed = (uint64_t)i;
        a4w4_entry_list entries = {0};
        char err[128];
        a4w4_run_case(&r, &c, &entries, err, sizeof err);
        a4w4_entry_list_free(&entries);
    }
    return NULL;
}

/* Four threads running cases on one backend of type t; 1 when two were ever inside it. */
static int overlapped(a4w4_backend_type *t)
{
    g_fault = F_NONE;
    atomic_store(&g_overlap, 0);
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, case_thread, t);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    return atomic_load(&g_overlap);
}

Test(runner, gpu_backends_are_never_entered_concurrently)
{
    cr_expect_eq(overlapped(&gpu_like_type), 0, "two threads were inside a gpu backend at once");
}

Test(runner, backends_not_declared_thread_safe_are_never_entered_concurrently)
{
    cr_expect_eq(overlapped(&serial_cpu_type), 0,
                 "two threads were inside a backend without thread_safe at once");
}

Test(runner, thread_safe_backends_run_concurrently)
{
    cr_expect_eq(overlapped(&safe_cpu_type), 1,
                 "a thread_safe backend was serialized (4 threads x 4 cases of 2 ms never met)");
}

/* ---- the entries' JSON form (entry.h): one writer, fields in results.json's order ---- */

static void expect_keys(const cJSON *o, const char *const *keys, size_t n)
{
    const cJSON *it = o->child;
    for (size_t i = 0; i < n; i++, it = it ? it->next : NULL) {
        cr_assert_not_null(it, "missing key %s (position %zu)", keys[i], i);
        cr_expect_str_eq(it->string, keys[i], "position %zu", i);
    }
    cr_expect_null(it, "extra key %s", it ? it->string : "");
}

/* One flipped output bit in 96: AITER's checkAllclose lets 5 % of elements be out of
 * tolerance, so it passes what bit-exactness fails; hipBLASLt's unit_check and benchdnn's
 * equality catch it. The entry says so, and that a tolerance test would have shipped it. */
Test(runner, a_failing_entry_carries_the_peers_verdicts_on_its_outputs)
{
    g_fault = F_FLIP_ONE;
    int fails;
    a4w4_entry_list en = run_one("ordered(1)", 1, 1, A4W4_REGIME_EXACT, 3, 32, 256, &fails);
    const a4w4_entry_result *e = &en.items[1];
    cr_assert_eq(e->verdict, A4W4_VERDICT_FAIL);
    cr_assert_gt(e->ntol, 0);
    cr_expect_eq(e->tol_outputs, 3 * 32);
    const char *want[][2] = {{"aiter-checkallclose", "PASS"}, {"hipblaslt-unit-check", "FAIL"},
                             {"onednn-benchdnn-matmul", "FAIL"}, {"flashinfer-cosine", "n/a"}};
    for (size_t w = 0; w < 4; w++) {
        const a4w4_crit_result *r = NULL;
        for (size_t i = 0; i < e->ntol; i++)
            if (!strcmp(e->tol[i].c->id, want[w][0]))
                r = &e->tol[i];
        cr_assert_not_null(r, "%s", want[w][0]);
        cr_expect_str_eq(a4w4_crit_verdict_name(r->verdict), want[w][1], "%s", r->text);
    }
    cJSON *a = a4w4_entry_list_json(&en);
    const cJSON *t = cJSON_GetObjectItem(cJSON_GetArrayItem(a, 1), "tolerance");
    cr_assert_not_null(t);
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(t, "would_ship")));
    cr_expect_null(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 0), "tolerance"),
                   "a passing entry has none");
    cJSON_Delete(a);
    a4w4_entry_list_free(&en);
}

Test(runner, a_failing_gemm_entry_is_written_with_its_fields_in_order)
{
    g_fault = F_FLIP_ONE;
    int fails;
    a4w4_entry_list en = run_one("ordered(1)", 1, 1, A4W4_REGIME_EXACT, 3, 32, 256, &fails);
    cJSON *a = a4w4_entry_list_json(&en);
    cr_assert_not_null(a);
    cr_assert_eq(cJSON_GetArraySize(a), 2);
    static const char *const fault_keys[] = {
        "name", "M", "N", "K", "regime", "seed", "backend", "contract", "tags", "run_ms",
        "y_hash", "pad_variants", "checked_outputs", "sampled", "verdict", "mismatches",
        "unwritten", "max_ulp", "first_mismatches", "time_ms", "cost_ms", "exact_regime_outputs",
        "judged_bit_exact", "judged_in_bound", "not_judged", "signature", "signature_class",
        "mismatch_map", "tolerance", "route", "policy", "hazard", "field_bugs"};
    const cJSON *e = cJSON_GetArrayItem(a, 1);
    expect_keys(e, fault_keys, sizeof fault_keys / sizeof fault_keys[0]);
    cr_expect_eq(cJSON_GetObjectItem(e, "judged_bit_exact")->valuedouble, 3 * 32,
                 "ordered(1): every output judged bit for bit");
    cr_expect_eq(cJSON_GetObjectItem(e, "not_judged")->valuedouble, 0);
    cr_expect_str_eq(cJSON_GetObjectItem(e, "verdict")->valuestring, "fail");
    cr_expect_str_eq(cJSON_GetObjectItem(e, "seed")->valuestring, "17");
    cr_expect_geq(cJSON_GetObjectItem(e, "cost_ms")->valuedouble,
                  cJSON_GetObjectItem(e, "run_ms")->valuedouble,
                  "the entry's whole cost holds its backend's run");
    const cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItem(e, "first_mismatches"), 0);
    cr_expect_str_eq(cJSON_GetObjectItem(m, "tensor")->valuestring, "y");
    cr_expect_eq(cJSON_GetObjectItem(m, "col")->valuedouble, 1);
    char want[16];
    a4w4_mismatch_hex(en.items[1].first[0].got, 2, want);
    cr_expect_str_eq(cJSON_GetObjectItem(m, "got")->valuestring, want);
    cr_expect_eq(strlen(want), 6, "bf16 bits print as 0x and 4 digits: %s", want);
    static const char *const oracle_keys[] = {
        "name", "M", "N", "K", "regime", "seed", "backend", "contract", "tags",
        "checked_outputs", "sampled", "verdict", "mismatches", "unwritten", "max_ulp",
        "first_mismatches", "time_ms", "cost_ms", "prep_generate_ms", "prep_oracles_ms",
        "exact_regime_outputs", "route", "policy", "hazard", "field_bugs"};
    const cJSON *oe = cJSON_GetArrayItem(a, 0);
    expect_keys(oe, oracle_keys, sizeof oracle_keys / sizeof oracle_keys[0]);
    double gen = cJSON_GetObjectItem(oe, "prep_generate_ms")->valuedouble,
           ora = cJSON_GetObjectItem(oe, "prep_oracles_ms")->valuedouble;
    cr_expect(gen > 0 && ora > 0, "the case's generation and host oracles took time: %g, %g ms",
              gen, ora);
    cr_expect_leq(gen + ora, cJSON_GetObjectItem(oe, "cost_ms")->valuedouble,
                  "the oracle entry's cost holds the case's generation and host oracles");
    cJSON_Delete(a);
    a4w4_entry_list_free(&en);
}

Test(runner, a_byte_entry_is_written_from_its_check)
{
    a4w4_entry_list l = {0};
    a4w4_entry_result *e = a4w4_entry_list_add(&l);
    cr_assert_not_null(e);
    a4w4_entry_identity(e, A4W4_ENTRY_BYTES, "golden/g", 1, 2, 64, "golden", 0, "cpu-asm",
                        "ordered(1)");
    uint8_t got[4] = {1, 2, 3, 4}, exp[4] = {1, 2, 9, 4};
    a4w4_check c;
    a4w4_check_bytes(&c, "w_fp4_shuffled", got, exp, 2, 2, NULL);
    a4w4_entry_set_check(e, &c);
    e->time_ms = 1.5;
    cr_expect_eq(a4w4_entry_list_failures(&l), 1);
    cJSON *o = a4w4_entry_json(e);
    static const char *const keys[] = {"name", "M", "N", "K", "regime", "seed", "backend",
                                       "contract", "checked_outputs", "verdict", "mismatches",
                                       "max_ulp", "first_mismatches", "sampled", "time_ms"};
    expect_keys(o, keys, sizeof keys / sizeof keys[0]);
    const cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "first_mismatches"), 0);
    cr_expect_str_eq(cJSON_GetObjectItem(m, "tensor")->valuestring, "w_fp4_shuffled");
    cr_expect_eq(cJSON_GetObjectItem(m, "row")->valuedouble, 1);
    cr_expect_eq(cJSON_GetObjectItem(m, "col")->valuedouble, 0);
    cr_expect_str_eq(cJSON_GetObjectItem(m, "got")->valuestring, "0x03");
    cr_expect_str_eq(cJSON_GetObjectItem(m, "expected")->valuestring, "0x09");
    cJSON_Delete(o);
    a4w4_entry_list_free(&l);
}

/* ---- the budget: full outputs where a full check is estimated to fit ------------------- */

static a4w4_backend_type gpu_cost_type = {
    .name = "gpu-cost", .what = "GPU-rated test backend", .contract = "ordered(1)", .gpu = 1,
    .run = run_fault};

Test(runner, the_full_check_estimate_follows_its_cost_model)
{
    a4w4_backend b[2];
    memset(b, 0, sizeof b);
    b[0].type = &fault_type; /* a CPU backend reading the ASM layouts */
    b[0].asm_layout = 1;
    b[1].type = &gpu_cost_type;
    a4w4_case c;
    memset(&c, 0, sizeof c);
    c.M = 16;
    c.N = 1024;
    c.K = 5120;
    double macs = 16.0 * 1024 * 5120, gen = (16.0 + 1024) * 5120 * A4W4_COST_GEN_S_PER_ELEMENT;
    a4w4_runner none = {.backends = b}, cpu = {.backends = b, .nbackends = 1},
                both = {.backends = b, .nbackends = 2};
    cr_expect_float_eq(a4w4_full_check_seconds(&none, &c), macs * A4W4_COST_ORACLE_S_PER_MAC + gen,
                       1e-12);
    /* K % 256 == 0: the baseline and 2 pad variants */
    cr_expect_float_eq(a4w4_full_check_seconds(&cpu, &c),
                       macs * (A4W4_COST_ORACLE_S_PER_MAC + 3 * A4W4_COST_CPU_RUN_S_PER_MAC) + gen,
                       1e-12);
    cr_expect_float_eq(a4w4_full_check_seconds(&both, &c) - a4w4_full_check_seconds(&cpu, &c),
                       macs * A4W4_COST_GPU_RUN_S_PER_MAC, 1e-12);
    c.M = 256; /* no pad at all: the baseline alone */
    cr_expect_float_eq(a4w4_full_check_seconds(&cpu, &c),
                       256.0 * 1024 * 5120 * (A4W4_COST_ORACLE_S_PER_MAC + A4W4_COST_CPU_RUN_S_PER_MAC) +
                           (256.0 + 1024) * 5120 * A4W4_COST_GEN_S_PER_ELEMENT,
                       1e-12);
    c.M = 16;
    c.K = 5120 + 32; /* column pads: 5 variants */
    double macs2 = 16.0 * 1024 * 5152, gen2 = (16.0 + 1024) * 5152 * A4W4_COST_GEN_S_PER_ELEMENT;
    cr_expect_float_eq(a4w4_full_check_seconds(&cpu, &c),
                       macs2 * (A4W4_COST_ORACLE_S_PER_MAC + 6 * A4W4_COST_CPU_RUN_S_PER_MAC) +
                           gen2,
                       1e-12);
}

/* A backend held to a tree contract adds its oracle's rate: the fast path's per leaf for prec
 * > 0 or acc=bf16, its per-MAC rate times 32/leaf for the other trees it takes, the plain
 * oracle's per leaf for a tree it does not take (prec > 0 with fuse > 256). */
Test(runner, a_tree_contract_adds_the_rate_of_the_oracle_that_judges_it)
{
    static const struct {
        const char *contract;
        double per_mac;
    } rows[] = {
        {"tree(leaf=1,fuse=16,prec=26,round=rz)", A4W4_COST_TREE_PREC_S_PER_LEAF},
        {"tree(leaf=32,acc=bf16)", A4W4_COST_TREE_PREC_S_PER_LEAF / 32},
        {"tree(leaf=2,fuse=16)", A4W4_COST_TREE_FAST_S_PER_MAC * 16},
        {"tree(leaf=1,fuse=257,prec=26)", A4W4_COST_TREE_PLAIN_S_PER_LEAF},
    };
    a4w4_backend b;
    memset(&b, 0, sizeof b);
    b.type = &gpu_cost_type;
    a4w4_case c;
    memset(&c, 0, sizeof c);
    c.M = 16;
    c.N = 1024;
    c.K = 4096;
    double macs = 16.0 * 1024 * 4096;
    snprintf(b.contract, sizeof b.contract, "ordered(1)");
    a4w4_runner r = {.backends = &b, .nbackends = 1};
    double base = a4w4_full_check_seconds(&r, &c);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        snprintf(b.contract, sizeof b.contract, "%s", rows[i].contract);
        cr_expect_float_eq(a4w4_full_check_seconds(&r, &c) - base, macs * rows[i].per_mac,
                           1e-9 * macs * rows[i].per_mac, "%s", rows[i].contract);
    }
}

/* The fault backend on a case above A4W4_FULL_CHECK_MACS with budget_s. */
static a4w4_entry_list run_budget(double budget_s, int full)
{
    g_fault = F_NONE;
    a4w4_backend b;
    memset(&b, 0, sizeof b);
    b.type = &fault_type;
    snprintf(b.name, sizeof b.name, "fault");
    snprintf(b.contract, sizeof b.contract, "ordered(1)");
    b.split = 1;
    a4w4_runner r = {.backends = &b, .nbackends = 1, .full = full, .budget_s = budget_s};
    a4w4_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "budget");
    c.M = 40;
    c.N = 1700;
    c.K = 1024; /* 69.6M MACs > 2^26; about 0.2 s estimated */
    c.regime = A4W4_REGIME_NORMAL;
    c.seed = 5;
    cr_assert_gt((double)c.M * c.N * c.K, (double)A4W4_FULL_CHECK_MACS);
    a4w4_entry_list en = {0};
    char err[256];
    cr_assert_eq(a4w4_run_case(&r, &c, &en, err, sizeof err), A4W4_ST_OK, "%s", err);
    return en;
}

Test(runner, a_case_within_the_budget_is_checked_in_full_and_beyond_it_sampled_with_a_note)
{
    a4w4_entry_list fits = run_budget(1.0, 0), over = run_budget(0.01, 0),
                    none = run_budget(0, 0), forced = run_budget(0.01, 1);
    const a4w4_entry_result *f = entry_of(&fits, "fault"), *o = entry_of(&over, "fault"),
                            *n = entry_of(&none, "fault"), *x = entry_of(&forced, "fault");
    cr_expect_eq(f->checked, 40 * 1700);
    cr_expect_eq(f->sampled, 0);
    cr_expect_eq(entry_of(&fits, "oracle")->checked, 40 * 1700);
    cr_expect_eq(strstr(note(entry_of(&fits, "oracle")), "sampled"), NULL);
    cr_expect_eq(o->sampled, 1);
    cr_expect_lt(o->checked, 40 * 1700);
    char want[128];
    snprintf(want, sizeof want, "sampled: %zu of 68000 outputs checked", o->checked);
    const char *on = note(entry_of(&over, "oracle"));
    cr_expect(strstr(on, want) && strstr(on, "above the budget of 0.01 s"), "%s", on);
    /* budget 0: the fixed rule (a sample above 2^26 MACs), no note; --full wins */
    cr_expect_eq(n->sampled, 1);
    cr_expect_eq(n->checked, o->checked);
    cr_expect_eq(strstr(note(entry_of(&none, "oracle")), "sampled"), NULL);
    cr_expect_eq(x->sampled, 0);
    cr_expect_str_eq(verdict(f), "pass");
    cr_expect_str_eq(verdict(o), "pass");
    a4w4_entry_list_free(&fits);
    a4w4_entry_list_free(&over);
    a4w4_entry_list_free(&none);
    a4w4_entry_list_free(&forced);
}

