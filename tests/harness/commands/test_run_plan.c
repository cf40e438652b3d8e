/* test_run_plan.c — run's plan (harness/commands/run_plan.h): where its items come from and the
 * errors naming them, the shard counts, the results stream's header (the settings, the
 * contracts record between the backends and the upstream version), the --save-failing
 * manifest (each saved bundle once, an entry that could not be saved flagged). */
#include <criterion/criterion.h>
#include <string.h>

#include "run_plan.h"
#include "test_util.h"

#define TMP_ROOT A4W4_BINARY_DIR "/run-plan-test-tmp"

/* A case file of the given rows under a fresh scratch directory; its path in a static buffer. */
static const char *case_file(const char *dir, const char *rows)
{
    static char path[4200];
    snprintf(path, sizeof path, "%s/c.csv", dir);
    char text[1024];
    snprintf(text, sizeof text, "name,M,N,K,regime,seed,tags\n%s", rows);
    tu_write_file(path, text, strlen(text));
    return path;
}

static const char *const three = "a,1,32,64,exact,1,\nb,4,32,128,normal,2,\nc,2,64,64,wide,3,\n";

/* p with the three cases of `three` from a case file under scratch directory name. */
static void load_three(a4w4_run_plan *p, const char *name)
{
    a4w4_run_plan_init(p);
    a4w4_run_source src = {.cases_path = case_file(tu_scratch_dir(TMP_ROOT, name), three)};
    char err[1024] = "";
    cr_assert_eq(a4w4_run_plan_items(p, &src, err, sizeof err), 0, "%s", err);
}

Test(run_plan, an_unknown_selected_item_is_a_usage_error_naming_it)
{
    static a4w4_run_plan p;
    a4w4_run_plan_init(&p);
    const char *sel[] = {"nope"};
    a4w4_run_source src = {.cases_path = case_file(tu_scratch_dir(TMP_ROOT, "sel"), three),
                           .sel = sel, .nsel = 1};
    char err[1024] = "";
    cr_assert_eq(a4w4_run_plan_items(&p, &src, err, sizeof err), A4W4_MATRIX_EUSAGE);
    cr_assert(strstr(err, "nope"), "%s", err);
    a4w4_run_plan_free(&p);
}

Test(run_plan, a_case_file_error_is_the_readers_line)
{
    static a4w4_run_plan p;
    a4w4_run_plan_init(&p);
    a4w4_run_source src = {
        .cases_path = case_file(tu_scratch_dir(TMP_ROOT, "bad"), "x,4,32,100,exact,1,\n")};
    char err[1024] = "";
    cr_assert_eq(a4w4_run_plan_items(&p, &src, err, sizeof err), A4W4_MATRIX_ECASES);
    cr_assert(strstr(err, "c.csv:2:") && strstr(err, "K=100"), "%s", err);
    a4w4_run_plan_free(&p);
}

Test(run_plan, the_shards_count_every_item_once)
{
    static a4w4_run_plan p;
    load_three(&p, "shard");
    size_t mine = 0;
    for (unsigned i = 1; i <= 2; i++) {
        a4w4_run_settings s = {.shard_i = i, .shard_n = 2};
        p.mine = 0;
        cr_assert_eq(a4w4_run_plan_shard(&p, &s), A4W4_OK);
        cr_assert(p.mine >= 1 && p.mine <= 2, "shard %u of 2: %zu items", i, p.mine);
        mine += p.mine;
    }
    cr_assert_eq(p.total_items, 3);
    cr_assert_eq(mine, 3);
    a4w4_run_plan_free(&p);
}

static int contracts_calls;
static void contracts(cJSON *header, const a4w4_backend *bk, size_t n)
{
    (void)bk;
    contracts_calls++;
    cJSON_AddNumberToObject(header, "contracts", (double)n);
}

Test(run_plan, the_header_records_the_settings_and_the_contracts_in_their_place)
{
    static a4w4_run_plan p;
    load_three(&p, "hdr");
    a4w4_run_settings s = {.full = 1, .shard_i = 2, .shard_n = 3, .code0 = "2^-127",
                           .upstream_version = "1.2"};
    cr_assert_eq(a4w4_run_plan_shard(&p, &s), A4W4_OK);
    cJSON *h = a4w4_run_header(&p, &s, contracts);
    cr_assert_not_null(h);
    cr_assert_eq(contracts_calls, 1);
    cr_assert_str_eq(cJSON_GetObjectItem(h, "shard")->valuestring, "2/3");
    cr_assert_str_eq(cJSON_GetObjectItem(h, "e8m0_code0")->valuestring, "2^-127");
    cr_assert_str_eq(cJSON_GetObjectItem(h, "set")->valuestring, "custom");
    cr_assert_eq(cJSON_GetObjectItem(h, "matrix_items")->valueint, 3);
    cr_assert_eq(cJSON_GetObjectItem(h, "shard_items")->valueint, (int)p.mine);
    const cJSON *b = cJSON_GetObjectItem(h, "budget");
    cr_assert_str_eq(cJSON_GetObjectItem(b, "rule")->valuestring, "every output (--full)");
    cr_assert_str_eq(cJSON_GetObjectItem(h, "judge")->valuestring, "host");
    /* the keys in their order: ... backends, contracts, upstream_version ... */
    const char *prev = NULL, *want[][2] = {{"backends", "contracts"},
                                           {"contracts", "upstream_version"}};
    size_t ok = 0;
    for (const cJSON *c = h->child; c; prev = c->string, c = c->next)
        for (size_t i = 0; i < 2; i++)
            ok += prev && !strcmp(prev, want[i][0]) && !strcmp(c->string, want[i][1]);
    cr_assert_eq(ok, 2, "contracts not between backends and upstream_version");
    cJSON_Delete(h);
    a4w4_run_plan_free(&p);
}

Test(run_plan, the_manifest_lists_each_saved_bundle_once_and_flags_an_unsaved_entry)
{
    static a4w4_run_plan p;
    a4w4_run_plan_init(&p);
    const char *dir = tu_scratch_dir(TMP_ROOT, "saved");
    p.doc = cJSON_Parse("{\"cases\": [{\"saved\": \"a@x\"}, {\"saved\": \"a@x\"}, "
                        "{\"saved\": \"b@x\"}, {\"note\": \"--save-failing: disk full\"}]}");
    cr_assert_not_null(p.doc);
    size_t n = 0;
    int failed = 0;
    char err[1024] = "", path[4200];
    cr_assert_eq(a4w4_run_save_manifest(&p, dir, &n, &failed, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, 2);
    cr_assert_eq(failed, 1);
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    size_t len;
    char *text = (char *)tu_read_file(path, &len);
    cJSON *m = cJSON_Parse(text);
    cr_assert_not_null(m, "%s", text);
    const cJSON *cases = cJSON_GetObjectItem(m, "cases");
    cr_assert_eq(cJSON_GetArraySize(cases), 2);
    cr_assert_str_eq(cJSON_GetArrayItem(cases, 0)->valuestring, "a@x");
    cr_assert_str_eq(cJSON_GetArrayItem(cases, 1)->valuestring, "b@x");
    cJSON_Delete(m);
    free(text);
    a4w4_run_plan_free(&p);
}
