/* run_render.h — what `run` says while and after it runs (cli/cmd_run.c plans and runs,
 * commands/run_plan.h works through the items): the progress lines of the item loop, then
 * results.json and summary.md from the stream, the failures with their repro commands, the
 * verdict and the exit code. */
#ifndef A4W4_RUN_RENDER_H
#define A4W4_RUN_RENDER_H

#include "progress.h"
#include "run_plan.h"

/* The progress of a4w4_run_items (its ctx): fails is the failing entries so far;
 * write_failed: a results stream write failed (said at its item). */
typedef struct {
    a4w4_progress pg;
    int quiet, fails, write_failed;
} a4w4_run_progress;

/* a4w4_run_loop's on_item: "run: MESSAGE" on stderr when the item's write failed, the
 * progress line, and every 100 items (unless quiet) where the time went (seconds per stage,
 * outputs compared on the device and on the host). */
void a4w4_run_on_item(void *ctx, const a4w4_run_plan *p, size_t count, int fails,
                      const char *name, const char *write_err);

/* Where a run ends: the --out directory, the --known ledger (NULL: the default), the
 * --save-failing directory (NULL: none), --quiet. */
typedef struct {
    const char *out_dir, *known, *save_dir;
    int quiet;
} a4w4_run_end;

/* The final documents from the stream in e->out_dir (cases of earlier runs included): the
 * ledger applied, the verdict over the shard's p->mine items (a missing one: INCOMPLETE,
 * contracts §7.1), p's stages, results.json and summary.md written atomically; on stderr the
 * counts (unless quiet), the first failures with their repro commands, the known failures,
 * why INCOMPLETE, the first bad input; the --save-failing manifest. Returns the exit code:
 * A4W4_EXIT_PASS, _MISMATCH, _INCOMPLETE, _BADINPUT (an item refused), _IO (not written). */
int a4w4_run_finish(a4w4_run_plan *p, const a4w4_run_end *e);

#endif
