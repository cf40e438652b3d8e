/* fuzz_results.c — libFuzzer target for the results-document loader (a4w4_results_parse and
 * a4w4_results_validate, reports/a4w4_reports.h) and the renderers that trust what it
 * accepts.
 *
 * Input: results.json text. The custom mutator parses it with cJSON and changes the tree
 * (json_mutator.h) with keys and strings taken from the embedded results schema (property
 * names, enum and const values), so most inputs are valid JSON close to a valid document and
 * the schema checks are reached one rule at a time.
 * Checked: a refused text gives one error line naming the input; an accepted document
 * validates again, renders to Markdown, HTML and JUnit (reproducible), and compares with
 * itself (a4w4_compare) with no new failures when its (case, backend) keys are unique. */
#include <stdlib.h>
#include <string.h>

#include "a4w4_reports.h"
#include "fuzz_common.h"
#include "json_mutator.h"

#define TARGET "results"
#define NAME "fuzz.json"
#define MAX_WORDS 512

static const char *words_keys[MAX_WORDS], *words_strings[MAX_WORDS];
static fz_json_dict dict = {words_keys, 0, words_strings, 0};
static cJSON *schema; /* kept: the dictionary points into it */

static void add_word(const char **list, size_t *n, const char *w)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(list[i], w))
            return;
    if (*n < MAX_WORDS)
        list[(*n)++] = w;
}

/* Property names -> keys; enum / const / required strings -> strings (and keys). */
static void harvest(const cJSON *node)
{
    for (const cJSON *c = node->child; c; c = c->next) {
        const char *k = c->string;
        if (k && !strcmp(k, "properties"))
            for (const cJSON *p = c->child; p; p = p->next)
                add_word(words_keys, &dict.nkeys, p->string);
        if (k && (!strcmp(k, "enum") || !strcmp(k, "required")))
            for (const cJSON *v = c->child; v; v = v->next)
                if (cJSON_IsString(v))
                    add_word(words_strings, &dict.nstrings, v->valuestring);
        if (k && !strcmp(k, "const") && cJSON_IsString(c))
            add_word(words_strings, &dict.nstrings, c->valuestring);
        harvest(c);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    static const char *const extra[] = {"ordered(1)", "ordered(65536)", "ordered(0)", "bounded",
                                        "exact", "cpu-asm", "cpu-fallback", "plugin:x.so",
                                        "premerge", "golden/g1", "0.1.0", "1/2", "merged",
                                        "0123456789abcdef", ""};
    schema = cJSON_Parse(a4w4_results_schema_text());
    fz_check(schema != NULL, TARGET, "the embedded schema does not parse");
    harvest(schema);
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
        add_word(words_strings, &dict.nstrings, extra[i]);
    return 0;
}

static int keys_unique(const cJSON *doc)
{
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    for (const cJSON *a = cases ? cases->child : NULL; a; a = a->next)
        for (const cJSON *b = a->next; b; b = b->next) {
            const cJSON *na = cJSON_GetObjectItemCaseSensitive(a, "name");
            const cJSON *nb = cJSON_GetObjectItemCaseSensitive(b, "name");
            const cJSON *ba = cJSON_GetObjectItemCaseSensitive(a, "backend");
            const cJSON *bb = cJSON_GetObjectItemCaseSensitive(b, "backend");
            if (cJSON_IsString(na) && cJSON_IsString(nb) && cJSON_IsString(ba) &&
                cJSON_IsString(bb) && !strcmp(na->valuestring, nb->valuestring) &&
                !strcmp(ba->valuestring, bb->valuestring))
                return 0;
        }
    return 1;
}

static void check_render(const char *what, char *text)
{
    fz_check(text != NULL, TARGET, "%s rendering returned NULL", what);
    free(text);
}

static void check_accepted(const cJSON *doc)
{
    char err[1024] = "";
    fz_check(a4w4_results_validate(doc, NAME, err, sizeof err) == 0, TARGET,
             "an accepted document does not validate again: %s", err);
    a4w4_report_opts o = {.reproducible = 1, .source = NAME};
    check_render("markdown", a4w4_report_markdown(doc, &o));
    check_render("html", a4w4_report_html(doc, &o));
    check_render("junit", a4w4_report_junit(doc, &o));
    a4w4_compare_opts co;
    memset(&co, 0, sizeof co);
    cJSON *cmp = a4w4_compare(doc, doc, &co);
    fz_check(cmp != NULL, TARGET, "compare returned NULL");
    fz_check(!keys_unique(doc) || a4w4_compare_new_failures(cmp) == 0, TARGET,
             "a document compared with itself has %d new failures", a4w4_compare_new_failures(cmp));
    check_render("compare markdown", a4w4_compare_markdown(cmp, &o));
    check_render("compare html", a4w4_compare_html(cmp, &o));
    cJSON_Delete(cmp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[1024] = "";
    cJSON *doc = a4w4_results_parse((const char *)data, size, NAME, err, sizeof err);
    if (!doc) {
        fz_check_err_line(err, NAME ": ", TARGET);
        return 0;
    }
    check_accepted(doc);
    cJSON_Delete(doc);
    fz_accepted();
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    fz_rng r;
    fz_rng_seed(&r, seed);
    cJSON *root = fz_one_in(&r, 8) ? NULL : cJSON_ParseWithLength((const char *)data, size);
    if (!root)
        return LLVMFuzzerMutate(data, size, max_size);
    size_t nops = 1 + fz_below(&r, 3);
    for (size_t k = 0; k < nops; k++)
        fz_json_mutate(root, &r, &dict);
    size_t n = fz_json_print(root, &r, data, max_size);
    cJSON_Delete(root);
    return n ? n : LLVMFuzzerMutate(data, size, max_size);
}
