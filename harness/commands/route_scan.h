/* route_scan.h — the static hazard scan of `route --scan`: every (M, N, K) with M 1..256,
 * N 16..512 step 16 and K from a list, routed as AITER's gemm_a4w4 does (contracts §5) with
 * SGLang's layer decision per (N, K) (contracts §6): which untuned cells have more than one
 * possible winner or a winner whose tile does not fit N, their hazard class
 * (ref/a4w4_hazard.h), the counts, and the shapes each field bug rule flags. Nothing here
 * prints; cli/route_render.c renders. */
#ifndef A4W4_ROUTE_SCAN_H
#define A4W4_ROUTE_SCAN_H

#include <stddef.h>

#include "dispatch_chain.h"

#define A4W4_SCAN_M_MAX 256
#define A4W4_SCAN_N_MIN 16
#define A4W4_SCAN_N_MAX 512
#define A4W4_SCAN_N_STEP 16
#define A4W4_SCAN_NN ((A4W4_SCAN_N_MAX - A4W4_SCAN_N_MIN) / A4W4_SCAN_N_STEP + 1)
#define A4W4_SCAN_MAX_K 64

/* One (M, N) cell over every K of the scan; K sets are bit masks (bit i: scan_k[i]). */
typedef struct {
    unsigned char any[A4W4_MAX_KERNELS];   /* exact winners */
    unsigned char smp[A4W4_MAX_KERNELS];   /* sampled winners */
    unsigned char nofit[A4W4_MAX_KERNELS]; /* winners whose tile does not fit in N */
    unsigned char mfit[A4W4_MAX_KERNELS];  /* winners with tile_M > 8*M */
    int nany, nsmp, n_nofit, n_mfit;
    int file_winner;                          /* heuristic winner in file order */
    int file_nofit;                           /* that winner does not fit N */
    unsigned long long untuned_k;             /* untuned at these K */
    unsigned long long hazard_k, exposed_k;   /* class not ok / exposed at these K */
    unsigned long long bug_k[A4W4_BUG_COUNT]; /* the field bug's rule flags these K */
} a4w4_scan_cell;

/* Counts over the scan's untuned (M, N, K) shapes. */
typedef struct {
    size_t total, untuned, hazard, multi, nofit, mfit, missed;
    size_t nofit_small_n, nofit_scale, nofit_other_triton, nofit_asm;
    size_t multi_asm, mfit_asm, file_nofit_asm, all_nofit_asm;
} a4w4_scan_totals;

/* A scan: the setup and K list in, the cells, policies and totals out. */
typedef struct {
    a4w4_dispatch_setup setup;
    int scan_k[A4W4_SCAN_MAX_K];
    int nscan_k;
    a4w4_scan_cell *cells;    /* [A4W4_SCAN_NN][A4W4_SCAN_M_MAX + 1], index M (0 unused) */
    a4w4_policy_result *pol;  /* [A4W4_SCAN_NN][nscan_k] (the policy does not depend on M) */
    a4w4_scan_totals totals;
} a4w4_route_scan;

/* Why a scan stopped. */
typedef enum {
    A4W4_SCAN_OK = 0,
    A4W4_SCAN_NOMEM,
    A4W4_SCAN_POLICY, /* err: "policy for N .. K ..: status" */
    A4W4_SCAN_CELL    /* err: "M .. N ..: the heuristic's reason" */
} a4w4_scan_status;

/* Run the scan s (setup and scan_k filled) over the tuned table (NULL: nothing tuned) and
 * the kernel table. Returns A4W4_SCAN_OK, else the reason with err. Free with
 * a4w4_route_scan_free. */
a4w4_scan_status a4w4_route_scan_run(a4w4_route_scan *s, const a4w4_tuned_table *tuned,
                                     const a4w4_kernel_table *kt, char *err, size_t errlen);
void a4w4_route_scan_free(a4w4_route_scan *s);

/* Cell (M, N) and the policies of layer N (index by K). */
const a4w4_scan_cell *a4w4_scan_cell_at(const a4w4_route_scan *s, int M, int N);
const a4w4_policy_result *a4w4_scan_policies_of(const a4w4_route_scan *s, int N);

/* Whether cells a and b print as one run (same untuned K, winners, non-fitting winners and
 * file-order winner) over the first n kernels. */
int a4w4_scan_same_cell(const a4w4_scan_cell *a, const a4w4_scan_cell *b, size_t n);

#endif
