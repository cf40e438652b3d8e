/* ledger.h — the known-failures ledger as commands use it (io/known.h): `--known FILE`
 * (run, merge, compare), the default cases/known-failures.csv, and `a4w4check known`. */
#ifndef A4W4_LEDGER_H
#define A4W4_LEDGER_H

#include <cjson/cJSON.h>

/* The --known option's help. */
#define A4W4_KNOWN_HELP                                                                    \
    "known-failures ledger: its failures are XFAIL (counted, listed, not\n"                \
    "failing), its passes XPASS; default cases/known-failures.csv when it\n"               \
    "exists; 'none': no ledger"

/* Apply ledger `known` (NULL: the default when it exists; "none": nothing) to results
 * document doc (a4w4_known_apply, before the verdict is judged). Returns the exit code after
 * one line on stderr when the ledger is unreadable or malformed (2), else 0. */
int a4w4_apply_ledger(const char *cmd, const char *known, cJSON *doc);

/* On stderr: the known failures (XFAIL), XPASS and stale entries doc records, one line
 * each (at most max of each kind). */
void a4w4_print_known(const char *cmd, const cJSON *doc, int max);

#endif
