/* a4w4_dispatch_internal.h — what the dispatch files of ref/ share among themselves
 * (a4w4_csv.c, a4w4_dispatch_tables.c, a4w4_dispatch_heuristic.c, a4w4_dispatch_route.c).
 * Not for callers outside ref/: they use a4w4_dispatch.h and a4w4_csv.h. */
#ifndef A4W4_DISPATCH_INTERNAL_H
#define A4W4_DISPATCH_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "a4w4_dispatch.h"
#include "a4w4_errf.h"


/* The split kernel ki (an index into kt) wins with under p on an M x N output: its last split
 * with the minimal round count (1 for a kernel without split-K). contracts §5.3. The caller
 * has checked p, M and N (a4w4_heuristic's rules). */
int a4w4_heur_winning_split(const a4w4_kernel_table *kt, int ki, const a4w4_heur_params *p,
                            int M, int N);

#endif
