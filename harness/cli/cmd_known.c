/* cmd_known.c — `a4w4check known`: the known-failures ledger (io/known.h) checked and listed,
 * and the nightly's update of its last_matched dates from a results document. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "a4w4_reports.h"
#include "a4w4check.h"
#include "known.h"
#include "options.h"
#include "results.h"

static const char known_usage[] =
    "usage: a4w4check known [--ledger FILE] [--touch RESULTS [--output FILE] [--date YYYY-MM-DD]]\n"
    "\n"
    "Reads the known-failures ledger (default cases/known-failures.csv), checks every entry\n"
    "and lists them with the days since each last matched. --touch RESULTS (a results.json\n"
    "or its directory) applies the ledger to that run and sets last_matched to the run's\n"
    "date (or --date) on every entry it matched, XFAIL or XPASS, writing the ledger over\n"
    "itself or to --output FILE: the nightly keeps the dates that tell a stale entry (one that\n"
    "matched nothing for 30 days) from a live one.\n"
    "\n";

typedef struct {
    const char *ledger, *touch, *out, *date;
} known_opts;

static const a4w4_option known_options[] = {
    OPT_STRING("ledger", known_opts, ledger, "FILE", "the ledger (default cases/known-failures.csv)"),
    OPT_STRING("touch", known_opts, touch, "RESULTS", "update last_matched from this run"),
    OPT_STRING("output", known_opts, out, "FILE", "write the updated ledger here (default: over it)"),
    OPT_STRING("date", known_opts, date, "DAY", "the day of the run (default: its recorded date)"),
    OPT_OLD_STRING("out", known_opts, out, "--output"),
    OPT_END(),
};

static const a4w4_command_spec known_spec = {
    "known", known_usage, known_options, NULL,
    "exit: 0 ok, 2 a malformed ledger or results file, 4 the ledger could not be written\n"};

static void list(const a4w4_known_ledger *l, const char *today)
{
    printf("%s: %zu known failure%s\n", l->path, l->n, l->n == 1 ? "" : "s");
    for (size_t i = 0; i < l->n; i++) {
        const a4w4_known_entry *e = &l->e[i];
        int days = a4w4_known_days(e->last_matched, today);
        printf("  %-28s %s on %s case %s%s%s: %s; versions %s..%s; last matched %s (%d days)%s\n",
               e->id, e->shape[0] ? e->shape : "any shape", e->backend, e->cases,
               e->symptom[0] ? ", symptom " : "", e->symptom, e->upstream,
               e->since[0] ? e->since : "*", e->until[0] ? e->until : "*", e->last_matched, days,
               days > A4W4_KNOWN_STALE_DAYS ? " (stale if nothing of a run matches it)" : "");
    }
}

/* --touch: the run's matches into the ledger's dates. Returns the exit code. */
static int touch(const known_opts *o, const a4w4_known_ledger *l)
{
    char err[1024], day[16];
    cJSON *doc = a4w4_results_read(o->touch, err, sizeof err);
    if (!doc) {
        a4w4_errorf("known: %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    if (a4w4_known_check_share(doc, l, err, sizeof err)) {
        a4w4_errorf("known: %s", err);
        cJSON_Delete(doc);
        return A4W4_EXIT_BADINPUT;
    }
    a4w4_known_apply(doc, l, o->date);
    const cJSON *kf = cJSON_GetObjectItemCaseSensitive(doc, "known_failures");
    snprintf(day, sizeof day, "%s", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(kf, "date")));
    size_t n = 0;
    a4w4_hstatus st = a4w4_known_touch(l, doc, day, o->out, &n, err, sizeof err);
    cJSON_Delete(doc);
    if (st != A4W4_ST_OK) {
        a4w4_errorf("known: %s", err);
        return a4w4_exit_code(st);
    }
    printf("known: %zu ledger entr%s matched on %s; %s written\n", n, n == 1 ? "y" : "ies", day,
           o->out ? o->out : l->path);
    return A4W4_EXIT_PASS;
}

int cmd_known(int argc, char **argv)
{
    known_opts o = {0};
    a4w4_args args;
    int rc = a4w4_options_parse(&known_spec, &o, argc, argv, &args);
    if (rc != A4W4_OPTS_CONTINUE)
        return rc;
    char path[4096], err[1024], today[16];
    if (!o.ledger)
        o.ledger = a4w4_data_path("cases/known-failures.csv", path, sizeof path);
    if ((o.out || o.date) && !o.touch) {
        a4w4_errorf("known: --output and --date go with --touch");
        return A4W4_EXIT_BADINPUT;
    }
    a4w4_known_ledger l;
    a4w4_hstatus st = a4w4_known_load(o.ledger, &l, err, sizeof err);
    if (st != A4W4_ST_OK) {
        a4w4_errorf("known: %s", err);
        return A4W4_EXIT_BADINPUT;
    }
    time_t now = time(NULL);
    struct tm tmv;
    strftime(today, sizeof today, "%Y-%m-%d", gmtime_r(&now, &tmv));
    rc = o.touch ? touch(&o, &l) : (list(&l, today), A4W4_EXIT_PASS);
    a4w4_known_free(&l);
    return rc;
}
