/* backend_list.h — the one reading of `--backend a,b,...` (run, hazards, bench, layers):
 * the names of the list (an OPT_LIST option, options.h), each at most once, opened through
 * backends/registry.h; without the option, the default selection with one
 * "a4w4check <cmd>: notice: skipping backend NAME: why" line per type not available here. */
#ifndef A4W4_BACKEND_LIST_H
#define A4W4_BACKEND_LIST_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "backend.h"
#include "options.h"

typedef struct {
    const char *cmd;   /* the command, for messages: "a4w4check: <cmd>: ..." */
    size_t max;        /* at most this many backends (the caller's array) */
    int mutants;       /* 1: a selftest mutant's name (mutants.h) opens that mutant too */
    int quiet;         /* 1: no notice lines for the default selection */
} a4w4_backend_list_opts;

/* Check the names of a given --backend list (list->text != NULL): at least one, none given
 * twice, at most o->max. Returns 0, or A4W4_EXIT_BADINPUT after one line on stderr
 * ("<cmd>: --backend names NAME twice", "... names no backend", "... more than N"). */
int a4w4_backend_list_check(const a4w4_backend_list_opts *o, const a4w4_opt_list *list);

/* Open the backends of list into bk[0..*n) (list->text == NULL: the default selection of
 * registry.h, with its notices on stderr unless o->quiet). On an error every backend opened
 * so far is closed, *n is 0 and the return is the exit code after one line on stderr:
 * A4W4_EXIT_BADINPUT (a bad list, an unknown name, a failed prepare) or A4W4_EXIT_NOGPU (a
 * GPU backend without a usable GPU). Returns A4W4_EXIT_PASS when opened. */
int a4w4_backend_list_open(const a4w4_backend_list_opts *o, const a4w4_opt_list *list,
                           a4w4_backend *bk, size_t *n);

/* The help of the plugin isolation options (--timeout, --no-isolate) of the commands that
 * run plugins (run, hazards); their values go to a4w4_plugin_isolation (registry.h) before
 * a4w4_backend_list_open. */
#define A4W4_TIMEOUT_HELP                                                                   \
    "seconds one plugin call may run before it is killed and its entry\n"                \
    "fails \"timed out after S s\"; 0: no limit; default: 60 s plus 1 s per\n"          \
    "1e9 multiply-adds of the call (a full 4096x4096x16384 case: 335 s)"
#define A4W4_NO_ISOLATE_HELP                                                                \
    "run plugins in this process (no fork per call, no --timeout): a crash\n"            \
    "or hang of the plugin then ends or stalls the whole run"

/* The isolation options of command cmd: --timeout (timeout_s, -1 when not given) is enforced
 * only on isolated plugins, so with --no-isolate it is refused (one line, A4W4_EXIT_BADINPUT);
 * else they are handed to a4w4_plugin_isolation and A4W4_EXIT_PASS is returned. */
int a4w4_isolation_options(const char *cmd, int no_isolate, int timeout_s);

/* Hand every opened backend with a check_items (backend.h) the run's identity and the names
 * of all its matrix items. Returns A4W4_EXIT_PASS, or A4W4_EXIT_BADINPUT after one line on
 * stderr ("<cmd>: <the backend's reason>") for the first backend that refuses. */
int a4w4_backend_list_check_items(const char *cmd, a4w4_backend *bk, size_t n,
                                  const a4w4_run_identity *id, const char *const *items,
                                  size_t nitems);
/* --e8m0-code0's values, in A4W4_CODE0_* order (engine/runner.h), as results headers record
 * them (contracts §1); NULL-terminated. */
extern const char *const a4w4_code0_names[];

/* The help of `--e8m0-code0 R` (run, shrink). */
#define A4W4_CODE0_HELP                                                                     \
    "how E8M0 scale code 0 is read (contracts §1): both (default)\n"                     \
    "judges each backend under the reading it declares (cpu-asm,\n"                      \
    "cpu-fallback: 2^-127), an undeclared one under 2^-127 and\n"                        \
    "2^-126 (an entry matching only one is ambiguous, never a pass,\n"                   \
    "verdict INCOMPLETE); 2^-127 (OCP, the oracles) or 2^-126 (one\n"                    \
    "host driver) states the reading for every backend"

/* The help of `--contract B=FILE|TEXT` (run, hazards, shrink). */
#define A4W4_CONTRACT_HELP                                                                  \
    "judge backend B (as named in --backend) by this contract instead of\n"              \
    "the one it declares: TEXT is exact, ordered(S), bounded(S) or\n"                    \
    "tree(key=value,...); anything else names a contract file of rules\n"              \
    "'[when M|N|K<op>V,...:] CONTRACT' (contracts §4.2); repeatable, once per B"

/* Apply every `--contract B=VALUE` of specs to the opened backends bk[0..n) (contracts §4.2):
 * B must be one of their names as selected, at most once; a VALUE that is "exact" or
 * "bounded" or starts with "ordered(", "bounded(" or "tree(" is one contract text, anything
 * else names a contract file (io/contractfile.h). Returns A4W4_EXIT_PASS, or the exit code
 * after one line on stderr: A4W4_EXIT_BADINPUT (no '=', an unknown or repeated B, a bad
 * contract or file, a backend without GEMM outputs). */
int a4w4_backend_contracts_apply(const char *cmd, const a4w4_opt_strings *specs,
                                 a4w4_backend *bk, size_t n);

/* Add to header (a results document's) "contracts": {name: the contract in force, canonical;
 * a rule set one rule per line}, "e8m0_code0_declared": {name: "2^-127" or "2^-126"} of the
 * backends declaring their reading of E8M0 code 0 (contracts §1; may be empty) and, when
 * `--contract` overrode any, "contract_overrides": {name: {"declared": what the backend
 * declared, "source": the file, or "text"}}; for every GEMM backend "contract_sources": {name:
 * "declared by the backend", "given with --contract (text)", "given with --contract FILE" or
 * "discovered by discover, given with --contract FILE" (the file has discover's "# discovered
 * by" line)}, and for those whose contract departs from the reference numerics
 * "contract_departures": {name: the phrases of io/contractfile.h
 * a4w4_contract_set_departures} (contracts §4.2). */
void a4w4_backends_contracts_json(cJSON *header, const a4w4_backend *bk, size_t n);

/* Close bk[0..n). */
void a4w4_backend_list_close(a4w4_backend *bk, size_t n);

#endif
