/* a4w4check.h — what every subcommand shares: exit codes, the command table entry type,
 * and the one-line error convention. */
#ifndef A4W4CHECK_H
#define A4W4CHECK_H

#include <stddef.h>
#include <stdio.h>

#include "fsutil.h"
#include "status.h"

/* Exit codes, uniform across subcommands (README "Exit codes"). */
enum {
    A4W4_EXIT_PASS = 0,     /* every check passed */
    A4W4_EXIT_MISMATCH = 1, /* at least one check failed (bits differ) */
    A4W4_EXIT_BADINPUT = 2, /* malformed input, impossible shape, bad usage */
    A4W4_EXIT_NOGPU = 3,    /* a GPU backend was asked for and no GPU is usable */
    A4W4_EXIT_IO = 4,       /* an output could not be written */
    A4W4_EXIT_INCOMPLETE = 5 /* no check failed, but not everything was checked (results.json
                              * verdict INCOMPLETE: items missing, a backend compared nothing) */
};

/* The exit code of a library status (io/status.h), the one place statuses become exit codes:
 * OK and NA -> 0, MISMATCH -> 1, BADINPUT -> 2, NOGPU -> 3, IO and NOMEM -> 4; any other
 * value -> 2. */
int a4w4_exit_code(int status);

typedef struct {
    const char *name;
    int (*fn)(int argc, char **argv); /* argv[0] is the subcommand name */
    const char *summary;
} a4w4_cmd;

/* Subcommands (harness/cli/cmd_<name>.c). */
int cmd_verify(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_route(int argc, char **argv);
int cmd_invariance(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_selftest(int argc, char **argv);
int cmd_coverage(int argc, char **argv);
int cmd_fingerprint(int argc, char **argv);
int cmd_hazards(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_layers(int argc, char **argv);
int cmd_shrink(int argc, char **argv);
int cmd_known(int argc, char **argv);
int cmd_quant_parity(int argc, char **argv);
int cmd_discover(int argc, char **argv);

/* Print "a4w4check: <fmt>\n" on stderr: one line naming the input and the rule. */
void a4w4_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* 1 when argv has -h or --help (anywhere before "--"). */
int a4w4_wants_help(int argc, char **argv);

#endif
