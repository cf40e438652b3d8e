/* repro.c — repro commands and the failing entries printed at a command's end (repro.h). */
#include "repro.h"

#include "registry.h"
#include "a4w4_reports.h"
#include "budget.h"
#include "runner.h"

#include <stdio.h>
#include <string.h>

void a4w4_shell_word(char *buf, size_t len, const char *s)
{
    size_t k = strlen(buf);
    int plain = *s != 0;
    for (const char *p = s; *p && plain; p++)
        plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                strchr("_./:=,@%+-", *p);
    if (plain) {
        snprintf(buf + k, len > k ? len - k : 0, "%s", s);
        return;
    }
    if (k + 1 < len)
        buf[k++] = '\'';
    for (const char *p = s; *p && k + 5 < len; p++) {
        if (*p == '\'') {
            memcpy(buf + k, "'\\''", 4);
            k += 4;
        } else
            buf[k++] = *p;
    }
    if (k + 1 < len)
        buf[k++] = '\'';
    buf[k < len ? k : len - 1] = 0;
}

/* Append " --opt" and, when value is not NULL, " VALUE" as a shell word. */
static void add_opt(char *buf, size_t len, const char *opt, const char *value)
{
    size_t k = strlen(buf);
    snprintf(buf + k, len > k ? len - k : 0, " %s%s", opt, value ? " " : "");
    if (value)
        a4w4_shell_word(buf, len, value);
}

/* 1 when backend holds results made before the run (bundle:DIR: its type checks them against
 * the run's matrix): its rerun keeps the run's matrix and narrows it with --case only. */
static int holds_results(const char *backend)
{
    size_t n;
    const a4w4_backend_type *const *t = a4w4_backend_types(&n);
    for (size_t i = 0; i < n; i++) {
        size_t L = strlen(t[i]->name);
        if (t[i]->check_items && !strncmp(backend, t[i]->name, L) && backend[L] == ':')
            return 1;
    }
    return 0;
}

/* The matrix part: --set S, --cases FILE, or the --bundle holding item; golden bundles as the
 * run had them where the backend's results belong to the run's whole matrix (stored). */
static void matrix_part(const a4w4_repro_run *r, const char *item, int stored, char *buf,
                        size_t len)
{
    if (!strcmp(r->set, "bundle")) {
        for (size_t i = 0; i < r->nbundles; i++) {
            const char *b = strrchr(r->bundles[i], '/');
            b = b ? b + 1 : r->bundles[i];
            size_t L = strlen(b);
            if (!strncmp(item, "golden/", 7) && strlen(item + 7) + 12 == L &&
                !strncmp(item + 7, b, L - 12))
                add_opt(buf, len, "--bundle", r->bundles[i]);
        }
        return;
    }
    if (!strcmp(r->set, "custom"))
        add_opt(buf, len, "--cases", r->cases_file);
    else
        add_opt(buf, len, "--set", r->set);
    if ((stored || !strncmp(item, "golden/", 7)) && r->golden_dir)
        add_opt(buf, len, "--golden", r->golden_dir);
    else
        add_opt(buf, len, "--no-golden", NULL);
    add_opt(buf, len, "--case", item);
}

/* What judges the rerun as the run judged it: the --contract values naming backend (its
 * name followed by '='), --e8m0-code0 and --max-timeouts when the run stated them. */
static void contract_part(const a4w4_repro_run *r, const char *backend, char *buf, size_t len)
{
    size_t L = strlen(backend);
    for (size_t i = 0; i < r->ncontracts; i++)
        if (!strncmp(r->contracts[i], backend, L) && r->contracts[i][L] == '=')
            add_opt(buf, len, "--contract", r->contracts[i]);
    if (r->code0)
        add_opt(buf, len, "--e8m0-code0", r->code0);
    if (r->max_timeouts > 0 && r->max_timeouts != A4W4_MAX_TIMEOUTS_DEFAULT) {
        char n[32];
        snprintf(n, sizeof n, "%d", r->max_timeouts);
        add_opt(buf, len, "--max-timeouts", n);
    }
}

void a4w4_repro_command(const void *ctx, const char *item, const char *backend, char *buf,
                        size_t len)
{
    const a4w4_repro_run *r = ctx;
    char budget[32], timeout[32];
    snprintf(buf, len, "a4w4check run");
    matrix_part(r, item, holds_results(backend), buf, len);
    add_opt(buf, len, "--backend", backend);
    if (r->full)
        add_opt(buf, len, "--full", NULL);
    else if (r->budget_s != A4W4_DEFAULT_BUDGET_S) { /* 0 (the fixed rule) included */
        snprintf(budget, sizeof budget, "%d", r->budget_s);
        add_opt(buf, len, "--budget-seconds", budget);
    }
    if (r->timeout_s >= 0) {
        snprintf(timeout, sizeof timeout, "%d", r->timeout_s);
        add_opt(buf, len, "--timeout", timeout);
    }
    if (r->no_isolate)
        add_opt(buf, len, "--no-isolate", NULL);
    if (r->host_judge)
        add_opt(buf, len, "--host-judge", NULL);
    contract_part(r, backend, buf, len);
    add_opt(buf, len, "--out", "build/repro");
}

static const char *str_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static double num_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* An entry that fails and is not a known failure (its "known_failure" status "xfail"), nor
 * a refusal (note "refused: ...": bad input, which the command says once at its end). */
static int unexpected_failure(const cJSON *e)
{
    const cJSON *kf = cJSON_GetObjectItemCaseSensitive(e, "known_failure");
    return !strcmp(str_of(e, "verdict"), "fail") && strcmp(str_of(kf, "status"), "xfail") &&
           strncmp(str_of(e, "note"), "refused: ", 9);
}

static void print_one(const char *cmd, const cJSON *e)
{
    const char *layer = str_of(e, "layer"), *site = str_of(e, "call_site");
    char counts[160]; /* "N of M checked differ", or "no output compared (why)" */
    if (a4w4_report_differ_text(e, counts, sizeof counts))
        snprintf(counts, sizeof counts, "%.0f of %.0f checked differ", num_of(e, "mismatches"),
                 num_of(e, "checked_outputs"));
    fprintf(stderr, "a4w4check %s: FAIL %s%s%s%s%s%s%s on %s (%s): %s", cmd, str_of(e, "name"),
            *layer || *site ? " [" : "", *layer ? "layer " : "", layer,
            *site ? (*layer ? " at " : "called at ") : "", site, *layer || *site ? "]" : "",
            str_of(e, "backend"), str_of(e, "contract"), counts);
    const cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(e, "first_mismatches"), 0);
    if (m)
        fprintf(stderr, ", first %s (%.0f, %.0f) got %s expected %s",
                *str_of(m, "tensor") ? str_of(m, "tensor") : "y", num_of(m, "row"),
                num_of(m, "col"), str_of(m, "got"), str_of(m, "expected"));
    else if (*str_of(e, "note"))
        fprintf(stderr, ": %.300s", str_of(e, "note"));
    fputc('\n', stderr);
    static const char *const extra[] = {"signature", "repro", "saved"};
    for (int i = 0; i < 3; i++)
        if (*str_of(e, extra[i]))
            fprintf(stderr, "  %s: %s\n", extra[i], str_of(e, extra[i]));
}

void a4w4_print_failures(const char *cmd, const cJSON *doc, int max)
{
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "cases")) {
        if (!unexpected_failure(e))
            continue;
        if (n++ < max)
            print_one(cmd, e);
    }
    if (n > max)
        fprintf(stderr, "a4w4check %s: ... and %d more failing entr%s (summary.md lists them)\n",
                cmd, n - max, n - max == 1 ? "y" : "ies");
}
