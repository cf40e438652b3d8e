/* disc_probe_liar_true.c — disc_probe_liar.c with LIAR_TRUTH: ordered(1) on real data, per-run
 * noise on discover's probes only (contracts §4.4: no bounded(S) from probes alone). */
#define GT_NAME "disc-probe-liar-true"
#define LIAR_TRUTH
#include "disc_probe_liar.c"
