/* repro.h — the one-line command that reruns one failing entry exactly (a case of a set or
 * case file, or a bundle, on one backend, with the checking options of the run that found
 * it), and the failing entries a command prints at its end (run, merge, shrink). */
#ifndef A4W4_REPRO_H
#define A4W4_REPRO_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* What a run was: its matrix (set name, or "custom" with cases_file, or "bundle" with the
 * bundle paths), golden directory (NULL: none) and checking options. */
typedef struct {
    const char *set, *cases_file, *golden_dir;
    const char *const *bundles; /* set "bundle": the --bundle paths */
    size_t nbundles;
    int full, budget_s, timeout_s, no_isolate; /* timeout_s -1: automatic */
    const char *const *contracts; /* the run's --contract B=FILE|TEXT values (those of the */
    size_t ncontracts;            /* backend rerun are repeated) */
    const char *code0;            /* --e8m0-code0's value when stated (NULL: the default) */
    int max_timeouts;             /* --max-timeouts (0 or the default: not repeated) */
    int host_judge;               /* --host-judge given */
} a4w4_repro_run;

/* Append s to buf (of len bytes, NUL-terminated) as one shell word: as is when it holds
 * only [A-Za-z0-9_./:=,@%+-], else in single quotes (a ' as '\''). */
void a4w4_shell_word(char *buf, size_t len, const char *s);

/* The command rerunning item (a case name, "golden/<stem>", or a --bundle item) of run on
 * backend into buf: `a4w4check run <matrix> --case ITEM --backend B [checking options]
 * --out build/repro`. An a4w4_repro_fn (engine/runner.h); ctx is an a4w4_repro_run. */
void a4w4_repro_command(const void *ctx, const char *item, const char *backend, char *buf,
                        size_t len);

/* Print the first max failing entries of results document doc on stderr, one block each:
 * "FAIL <case> on <backend> (<contract>): <mismatches> of <checked> ... first (r, c) got ..
 * expected .."; "  signature: ..." and "  repro: ..." when recorded. Then "... and N more
 * (summary.md lists them)" when there are more. cmd names the command. */
void a4w4_print_failures(const char *cmd, const cJSON *doc, int max);

#endif
