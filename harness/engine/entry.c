/* entry.c — one results entry (case x backend) from a comparison (see entry.h). */
#include "entry.h"

#include <stdio.h>

cJSON *a4w4_entry_new(const char *name, size_t M, size_t N, size_t K, const char *regime,
                      unsigned long long seed, const char *backend, const char *contract)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", name);
    cJSON_AddNumberToObject(e, "M", (double)M);
    cJSON_AddNumberToObject(e, "N", (double)N);
    cJSON_AddNumberToObject(e, "K", (double)K);
    cJSON_AddStringToObject(e, "regime", regime);
    char s[32];
    snprintf(s, sizeof s, "%llu", seed);
    cJSON_AddStringToObject(e, "seed", s);
    cJSON_AddStringToObject(e, "backend", backend);
    cJSON_AddStringToObject(e, "contract", contract);
    return e;
}

static const char *verdict_name(a4w4_check_verdict v)
{
    return v == A4W4_CHECK_PASS ? "pass" : v == A4W4_CHECK_FAIL ? "fail" : "n/a";
}

void a4w4_entry_set_check(cJSON *e, const a4w4_check *c)
{
    cJSON_AddNumberToObject(e, "checked_outputs", (double)c->checked);
    cJSON_AddStringToObject(e, "verdict", verdict_name(c->verdict));
    cJSON_AddNumberToObject(e, "mismatches", (double)c->mismatches);
    cJSON_AddNumberToObject(e, "max_ulp", c->max_ulp == (unsigned)-1 ? -1.0 : (double)c->max_ulp);
    cJSON *fm = cJSON_AddArrayToObject(e, "first_mismatches");
    if (c->verdict == A4W4_CHECK_FAIL && c->mismatches) {
        cJSON *m = cJSON_CreateObject();
        char h[16];
        cJSON_AddStringToObject(m, "tensor", c->subject);
        cJSON_AddNumberToObject(m, "row", (double)c->first_row);
        cJSON_AddNumberToObject(m, "col", (double)c->first_col);
        snprintf(h, sizeof h, "0x%0*x", c->elem_bytes * 2, (unsigned)c->got);
        cJSON_AddStringToObject(m, "got", h);
        snprintf(h, sizeof h, "0x%0*x", c->elem_bytes * 2, (unsigned)c->expected);
        cJSON_AddStringToObject(m, "expected", h);
        cJSON_AddItemToArray(fm, m);
    }
    if (c->note[0])
        cJSON_AddStringToObject(e, "note", c->note);
}
