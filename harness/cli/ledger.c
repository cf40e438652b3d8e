/* ledger.c — the known-failures ledger in commands (ledger.h). */
#include "ledger.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "a4w4check.h"
#include "known.h"

int a4w4_apply_ledger(const char *cmd, const char *known, cJSON *doc)
{
    char path[4096], err[1024];
    if (known && !strcmp(known, "none"))
        return A4W4_EXIT_PASS;
    if (!known) {
        a4w4_data_path("cases/known-failures.csv", path, sizeof path);
        if (access(path, R_OK))
            return A4W4_EXIT_PASS;
        known = path;
    }
    a4w4_known_ledger l;
    a4w4_hstatus st = a4w4_known_load(known, &l, err, sizeof err);
    if (st != A4W4_ST_OK) {
        a4w4_errorf("%s: --known %s", cmd, err);
        return A4W4_EXIT_BADINPUT;
    }
    if (a4w4_known_check_share(doc, &l, err, sizeof err)) {
        a4w4_errorf("%s: --known %s", cmd, err);
        a4w4_known_free(&l);
        return A4W4_EXIT_BADINPUT;
    }
    a4w4_known_apply(doc, &l, NULL);
    a4w4_known_free(&l);
    return A4W4_EXIT_PASS;
}

static const char *s_of(const cJSON *o, const char *k)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
    return s ? s : "";
}

void a4w4_print_known(const char *cmd, const cJSON *doc, int max)
{
    int nx = 0, np = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "cases")) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "known_failure");
        const char *st = s_of(k, "status");
        int xf = a4w4_known_is_xfail(e), xp = !strcmp(st, "xpass");
        if ((xf && nx++ < max) || (xp && np++ < max))
            fprintf(stderr, "a4w4check %s: %s %s on %s: known failure %s (%s)%s\n", cmd,
                    xf ? "XFAIL" : "XPASS", s_of(e, "name"), s_of(e, "backend"), s_of(k, "id"),
                    s_of(k, "upstream"), xp ? ": fixed upstream? remove the ledger entry" : "");
    }
    const cJSON *kf = cJSON_GetObjectItemCaseSensitive(doc, "known_failures");
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(kf, "entries"))
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "symptom_too_broad")))
            fprintf(stderr, "a4w4check %s: ledger entry %s: its symptom '%s' shows in failures "
                    "of different signature classes in this run, so it names no one failure and "
                    "they stay failures; state the one (class=C, or text of its signature)\n",
                    cmd, s_of(e, "id"), s_of(e, "symptom"));
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(kf, "entries"))
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "stale")))
            fprintf(stderr, "a4w4check %s: STALE ledger entry %s (%s): matched nothing for more "
                    "than %d days (last %s); fixed? remove it\n", cmd, s_of(e, "id"),
                    s_of(e, "upstream"), A4W4_KNOWN_STALE_DAYS, s_of(e, "last_matched"));
}
