/* entry_dispatch.c — see entry_dispatch.h. */
#include "entry_dispatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_common.h"

static const cJSON *obj(const cJSON *e, const char *k)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(e, k);
    return cJSON_IsObject(o) ? o : NULL;
}

int entry_has_dispatch(const cJSON *e) { return obj(e, "route") && obj(e, "policy"); }

int entry_dispatch_text(const cJSON *e, char *buf, size_t len)
{
    const cJSON *r = obj(e, "route"), *p = obj(e, "policy");
    buf[0] = '\0';
    if (!r || !p)
        return 0;
    int is_asm = !strcmp(jstr(r, "path"), "asm");
    const cJSON *tile = cJSON_GetObjectItemCaseSensitive(r, "tile");
    char lab[64];
    if (is_asm && *jstr(r, "label"))
        snprintf(lab, sizeof lab, "%s", jstr(r, "label"));
    else
        snprintf(lab, sizeof lab, "%.60s", *jstr(r, "kernel") ? jstr(r, "kernel") : "?");
    int nwin = (int)jnum(r, "possible_winners", 0);
    snprintf(buf, len,
             "%s -> %s %s%s%s; %d possible winner%s over every walk order%s, %d not fitting N; "
             "policy %s (%s)",
             jstr(r, "source"), is_asm ? "ASM" : "CK", lab,
             jnum(r, "split", 1) > 1 ? " split-K" : "",
             is_asm && cJSON_IsArray(tile)
                 ? (jtrue(r, "kernel_fits_N") ? " (fits N)" : " (tile does not fit N)")
                 : "",
             nwin, nwin == 1 ? "" : "s", nwin > 1 ? " (order-dependent)" : "",
             (int)jnum(r, "possible_winners_not_fitting_N", 0), jstr(p, "decision"),
             jstr(p, "reason"));
    size_t u = strlen(buf);
    if (*jstr(e, "hazard") && u < len)
        snprintf(buf + u, len - u, "; hazard %s", jstr(e, "hazard"));
    return 1;
}

int entry_exposed(const cJSON *e) { return !strcmp(jstr(e, "hazard"), "exposed"); }

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

fence_pos fence_find(const cJSON *cases, const int *Ns, size_t nN)
{
    fence_pos f = {0, 0, 1};
    const cJSON *e;
    cJSON_ArrayForEach(e, cases) {
        const cJSON *p = obj(e, "policy");
        int N = (int)jnum(e, "N", 0);
        const int *at = p && nN ? bsearch(&N, Ns, nN, sizeof *Ns, cmp_int) : NULL;
        if (!at)
            continue;
        f.known = 1;
        f.all_asm &= !strcmp(jstr(p, "decision"), "asm");
        size_t col = (size_t)(at - Ns) + 1;
        if (!strcmp(jstr(p, "reason"), "small_n") && col > f.nle)
            f.nle = col;
    }
    return f;
}

size_t entries_with_dispatch(const cJSON *cases)
{
    size_t n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cases)
        n += (size_t)entry_has_dispatch(e);
    return n;
}
