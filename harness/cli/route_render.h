/* route_render.h — what `a4w4check route` prints: one line per routed shape (text, or a JSON
 * object per line) and the static hazard scan (commands/route_scan.h) as text or JSON lines. */
#ifndef A4W4_ROUTE_RENDER_H
#define A4W4_ROUTE_RENDER_H

#include "dispatch_chain.h"
#include "route_scan.h"

/* What the printers need from the command line. */
typedef struct {
    int json;              /* JSON lines, else text */
    const char *kind_name; /* the policy's input kind as given (--input) */
    a4w4_heur_params hp;
    int asm_flag;
    const int *scan_k; /* the scan's K values (scan printing only) */
    int nscan_k;
} a4w4_route_view;

/* One routed shape (route, policy, field bugs) on stdout. */
void a4w4_route_chain_print(const a4w4_route_view *o, const a4w4_kernel_table *kt,
                            const a4w4_dispatch_chain *ch);

/* The scan s (run with the tuned table, NULL for none, and kernel table kt) on stdout: the
 * head, the hazard runs, the summary, the uncovered shapes and the field bugs. */
void a4w4_route_scan_print(const a4w4_route_view *o, const a4w4_route_scan *s,
                           const a4w4_tuned_table *tuned, const a4w4_kernel_table *kt);

#endif
