/* doc_verdict.c — see doc_verdict.h. */
#include "doc_verdict.h"

#include <stdio.h>
#include <string.h>

static double num(const cJSON *o, const char *k, int *ok)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    *ok &= cJSON_IsNumber(v);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* A recorded PASS that the document's own counts do not bear out (no counts, fewer items
 * recorded than expected, a backend without a comparison, a failing or skipped entry
 * counted) is shown as INCOMPLETE with a reason saying so: the header contradicts itself
 * (an edited or truncated document), and a renderer must not print PASS over it. This reads
 * the recorded counts only; nothing is recomputed from the entries. */
static void contradicted_pass(const cJSON *counts, doc_verdict *v)
{
    if (!v->verdict || strcmp(v->verdict, "PASS"))
        return;
    int ok = 1;
    double fail = num(counts, "fail", &ok), skip = num(counts, "skip", &ok);
    if (v->has_counts && ok && v->recorded_items == v->expected_items && !fail && !skip &&
        cJSON_GetArraySize(v->unchecked) == 0)
        return;
    v->verdict = "INCOMPLETE";
    v->reason = v->has_counts && ok
                    ? "the document records PASS, but its own counts do not bear it out"
                    : "the document records PASS without the counts that would bear it out";
}

void doc_verdict_read(const cJSON *doc, doc_verdict *v)
{
    static const char *const known[3] = {"PASS", "FAIL", "INCOMPLETE"};
    memset(v, 0, sizeof *v);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(doc, "verdict");
    for (int i = 0; i < 3 && cJSON_IsString(s); i++)
        if (!strcmp(s->valuestring, known[i]))
            v->verdict = known[i];
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(doc, "verdict_reason");
    v->reason = cJSON_IsString(r) ? r->valuestring : "";
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(doc, "counts");
    int ok = cJSON_IsObject(c);
    v->expected_items = num(c, "expected_items", &ok);
    v->recorded_items = num(c, "recorded_items", &ok);
    v->outputs_checked = num(c, "outputs_checked", &ok);
    v->has_counts = ok;
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(c, "backends_unchecked");
    v->unchecked = cJSON_IsArray(u) ? u : NULL;
    contradicted_pass(c, v);
}

const char *doc_verdict_word(const doc_verdict *v)
{
    return v->verdict ? v->verdict : "verdict not recorded";
}

int doc_verdict_index(const doc_verdict *v)
{
    if (!v->verdict)
        return 3;
    return !strcmp(v->verdict, "PASS") ? 0 : !strcmp(v->verdict, "FAIL") ? 1 : 2;
}

const char *doc_completeness_text(const doc_verdict *v, char *buf, size_t len)
{
    if (!v->has_counts) {
        snprintf(buf, len, "not recorded in this document");
        return buf;
    }
    size_t k = (size_t)snprintf(buf, len, "%.0f of %.0f expected items recorded, %.0f outputs "
                                "checked", v->recorded_items, v->expected_items,
                                v->outputs_checked);
    const cJSON *b;
    int first = 1;
    cJSON_ArrayForEach(b, v->unchecked) {
        if (k >= len || !cJSON_IsString(b))
            continue;
        k += (size_t)snprintf(buf + k, len - k, "%s%s", first ? ", no comparison by " : ", ",
                              b->valuestring);
        first = 0;
    }
    return buf;
}
