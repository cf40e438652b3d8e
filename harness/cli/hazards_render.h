/* hazards_render.h — what `a4w4check hazards` prints and writes: the text map on stdout,
 * hazards.json (schema at the top of cmd_hazards.c) and the results document. Shared by
 * cmd_hazards.c (parse, plan, run) and hazards_render.c (render). */
#ifndef A4W4_HAZARDS_RENDER_H
#define A4W4_HAZARDS_RENDER_H

#include "field_bugs.h"
#include "hazard_sweep.h"
#include "options.h"

#define HAZARDS_MAX_K 16

typedef struct {
    const char *cases_arg, *klist, *out_dir;
    a4w4_opt_list backend;
    a4w4_opt_strings contract; /* --contract B=FILE|TEXT, repeatable */
    int quick, json, quiet, jobs;
    int timeout_s, no_isolate; /* timeout_s -1: automatic (registry.h) */
} hazards_opts;

/* Everything a hazard map is made of: the cells (cases of the sweep that pass the filters,
 * sorted by K, N, M), the backends, the dispatch tables, and after the sweep the counts. */
typedef struct {
    int ks[HAZARDS_MAX_K], nk;
    const char *cases_path;
    a4w4_case *cases;
    size_t ncases;
    a4w4_hazard_sweep sw; /* the cells, and after the sweep the counts */
    a4w4_backend bk[A4W4_HZ_MAX_BACKENDS];
    size_t nbk;
    a4w4_dispatch_setup setup;
    const char *tpath, *kpath;
    a4w4_tuned_table tuned;
    a4w4_kernel_table kt;
    a4w4_bug_shapes bugs[A4W4_BUG_COUNT]; /* the default tuned table's shapes per rule */
    size_t ntuned;
    char cbuf[4096], tbuf[4096], kbuf[4096];
} hazards_plan;


/* The text map on stdout: the run line, the legend, a map per K, the counts, the failures. */
void hazards_print_text(const hazards_opts *o, const hazards_plan *p);

/* OUT/hazards.json, then the results document. Returns rc, or A4W4_EXIT_IO when either could
 * not be written. */
int hazards_write_json_outputs(const hazards_opts *o, const hazards_plan *p, int rc);

#endif
