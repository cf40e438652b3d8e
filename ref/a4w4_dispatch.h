/* a4w4_dispatch.h — who runs which kernel: AITER's gemm_a4w4 routing (contracts §5).
 *
 * Three pieces, all pure host logic:
 *   1. the tables: AITER's tuned table (a4w4_blockscale_tuned_gemm.csv, with or without the
 *      `gfx` column) and the ASM kernel table (<arch>_f4gemm_bf16_per1x32Fp4.csv), read with
 *      libcsv; every malformed row is an error naming file, line and column;
 *   2. the lookup: M, then getPaddedM(gl=0), then getPaddedM(gl=1) (contracts §5.1); a hit with a
 *      mangled name (`_ZN`) is an ASM kernel, any other name a CK blockscale kernel (§5.2);
 *   3. the ASM heuristic (§5.3) and its order-dependence: AITER walks its kernel table in
 *      std::unordered_map order, so one shape can get different kernels from different builds.
 *      The primary answer walks the table in file order; the route also reports the winners
 *      over file order, its reverse and seeded permutations, and the exact set of kernels that
 *      can win under some order (a4w4_heuristic_winners_any_order).
 *
 * Files: the CSV reader is a4w4_csv.c (a4w4_csv.h); the tables a4w4_dispatch_tables.c; the
 * heuristic and its winner sets a4w4_dispatch_heuristic.c; lookup, route, tile fit and
 * warnings a4w4_dispatch_route.c. No function keeps state outside its arguments: threads may
 * look up and route at once (each with its own a4w4_route) while no one loads or frees the
 * tables they read.
 *
 * Units: M, N, K are element counts (K is the reduction length in fp4 elements, not bytes).
 * Every function that can fail returns an a4w4_status (a4w4_formats.h) and writes one line
 * into the caller's err buffer (may be NULL); nothing here prints. */
#ifndef A4W4_DISPATCH_H
#define A4W4_DISPATCH_H

#include <stddef.h>

#include "a4w4_formats.h"

/* Largest ASM kernel table this module accepts (winner sets are fixed-size arrays). */
#define A4W4_MAX_KERNELS 256
/* Default number of seeded permutations walked by a4w4_route (at least 64). */
#define A4W4_ROUTE_PERMUTATIONS 256
/* Largest M, N, K accepted (getPaddedM's nextPow2 must not overflow an int). */
#define A4W4_DIM_MAX (1 << 30)

/* ---- tables --------------------------------------------------------------------------- */

/* One row of the tuned table. Strings are owned by the table. */
typedef struct {
    char *gfx;          /* "" when the table has no gfx column (old schema) */
    int cu_num, M, N, K;
    int kernel_id;      /* -1 when the column is absent */
    int split_k;        /* the table's splitK: CK KBatch setting, or log2_k_split for ASM */
    char *kernel_name;  /* as written; ASM names are mangled (_ZN...) */
    char *us, *tflops, *bw, *err_ratio; /* kept as text, only compared for duplicates */
    const char *file;   /* path of the file the row came from (owned by the table) */
    int file_index;     /* index of that file in the table's files[] (load order) */
    int line;           /* 1-based line of the row in that file */
} a4w4_tuned_row;

typedef struct {
    a4w4_tuned_row *rows; /* sorted by key (gfx, cu_num, M, N, K) after each load */
    size_t n, cap;
    int has_gfx;          /* 1: key (gfx, cu_num, M, N, K); 0: key (cu_num, M, N, K) */
    int loaded;           /* number of files merged in */
    size_t dropped;       /* exact duplicate rows dropped (pandas drop_duplicates) */
    char **files;         /* owned copies of the paths, one per loaded file */
} a4w4_tuned_table;

/* One row of the ASM kernel table (f4gemm_bf16_per1x32Fp4.csv). */
typedef struct {
    int tile_m, tile_n;
    int split_k;      /* 1: the kernel takes log2_k_split (split-K capable) */
    int bpreshuffle;  /* 1: expects the preshuffled weight (contracts §3.1) */
    char *name;       /* knl_name, the mangled symbol */
    char *co_name;    /* code object file ("" when the column is absent) */
    int line;
} a4w4_asm_kernel;

typedef struct {
    a4w4_asm_kernel *rows; /* in file order (duplicates dropped) */
    size_t n;
    char arch[32];         /* from the file name prefix "gfxNNN_", "" when none (any arch) */
    char *file;
} a4w4_kernel_table;

/* Merge one tuned table CSV into t (zero-initialise t before the first call). Columns are
 * found by header name: cu_num, M, N, K, splitK and kernelName are required, gfx, kernelId,
 * us, tflops, bw and errRatio optional. Rules (contracts §5.1 and AITER's get_GEMM_config):
 * every record has as many fields as the header; integer columns hold base-10 integers
 * (M, N, K >= 1, cu_num >= 1, splitK >= 0); exact duplicate rows are dropped (pandas
 * drop_duplicates); two different rows for one key are an error naming both lines; all
 * merged files share one schema (with or without gfx); a file without data rows is an
 * error. Errors: A4W4_EINVAL (message "file:line:col: rule"), A4W4_ENOMEM. On error t keeps
 * what it had before the call. */
int a4w4_tuned_load(a4w4_tuned_table *t, const char *path, char *err, size_t errlen);
/* Release everything a4w4_tuned_load allocated and zero t (NULL is fine). */
void a4w4_tuned_free(a4w4_tuned_table *t);

/* The row for key (gfx, cu_num, M, N, K), or NULL. gfx is ignored when the table has no gfx
 * column. */
const a4w4_tuned_row *a4w4_tuned_find(const a4w4_tuned_table *t, const char *gfx, int cu_num,
                                      int M, int N, int K);

/* Read an ASM kernel table CSV into kt (overwritten). Required columns: tile_M, tile_N,
 * splitK, bpreshuffle, knl_name; co_name optional. tile_M, tile_N >= 1; splitK and
 * bpreshuffle are 0 or 1. arch: the architecture the table serves (AITER keys its kernel
 * map by arch + name); NULL derives it from the file name ("gfx950_f4gemm..." -> "gfx950"),
 * "" when the name has no such prefix (the table then serves any arch). Identical
 * duplicate rows are dropped; two rows with one knl_name but different contents are an
 * error; more than A4W4_MAX_KERNELS rows is an error. Errors: A4W4_EINVAL, A4W4_ENOMEM. */
int a4w4_kernels_load(a4w4_kernel_table *kt, const char *path, const char *arch, char *err,
                      size_t errlen);
/* Release what a4w4_kernels_load allocated and zero kt (NULL is fine). */
void a4w4_kernels_free(a4w4_kernel_table *kt);

/* Index of the kernel named `name` (knl_name), or -1. */
int a4w4_kernels_find(const a4w4_kernel_table *kt, const char *name);

/* ---- lookup --------------------------------------------------------------------------- */

/* AITER's getPaddedM(M, N, K, gl) (csrc gemm_common.cu, contracts §5.1):
 * gl 0: M <= 256 -> round up to 16; <= 1024 -> to 32; <= 4096 -> to 64; else to 128.
 * gl 1: M > 8192 and N > 4096 -> 8192; else nextPow2(M) (1 for M <= 1).
 * Any other gl returns M. Caller keeps 1 <= M <= A4W4_DIM_MAX. */
int a4w4_padded_m(int M, int N, int K, int gl);

/* 1 when kernelName is an ASM symbol (contains "_ZN", AITER's test), 0 for a CK name. */
int a4w4_kernel_name_is_asm(const char *name);

/* The lookup walk of contracts §5.1: the row at M, else at getPaddedM(M, N, K, 0), else at
 * getPaddedM(M, N, K, 1), keyed with gfx (when the table has a gfx column) and cu_num.
 * Returns the row or NULL; on a hit *src (A4W4_SRC_TUNED, _PADDED_GL0 or _PADDED_GL1) and
 * *m_hit (the M of the row) are set when non-NULL. t may be NULL (nothing tuned). */
const a4w4_tuned_row *a4w4_tuned_lookup(const a4w4_tuned_table *t, const char *gfx, int cu_num,
                                        int M, int N, int K, int *src, int *m_hit);

/* ---- padded-M buckets ------------------------------------------------------------------ */

/* One bucket of M values the lookup (contracts §5.1) sends to the same tuned M value by the
 * same step: getPaddedM at gl 0 or gl 1, or M itself for a tuned M that no padding produces.
 * A case exercises a bucket's edge with M = lo (one past the bucket below). */
typedef struct {
    int m_tuned;  /* the M value of the tuned table the step lands on */
    int gl;       /* 0 or 1: getPaddedM's gl; -1: M itself (m_tuned is no padded value) */
    int lo, hi;   /* the bucket: lo <= M <= hi (hi A4W4_DIM_MAX: every M past 8192) */
    int n_rule;   /* 0 any N; 1 only N > 4096 (gl 1 caps M > 8192 at 8192); -1 only N <= 4096
                     (gl 1 past 8192 needs it to reach a power of two) */
} a4w4_m_bucket;

/* The buckets of the tuned M values m[0..n) (any order, repeats allowed), sorted by (lo, gl,
 * n_rule): for each distinct value v, gl 0 when getPaddedM(v, ., ., 0) == v (lo the smallest M
 * padded to v); gl 1 when v is a power of two (lo = v/2 + 1, 1 for v = 1; past 8192 only for
 * N <= 4096), and for v = 8192 also every M > 8192 at N > 4096; M itself when v is neither.
 * Writes at most cap buckets into out and returns how many there are (call with cap 0 to
 * count). Values outside 1..A4W4_DIM_MAX are skipped. */
size_t a4w4_m_buckets(const int *m, size_t n, a4w4_m_bucket *out, size_t cap);

/* ---- ASM heuristic -------------------------------------------------------------------- */

typedef struct {
    const char *gfx;   /* the device arch, e.g. "gfx950" */
    int num_cu;        /* compute units (multiProcessorCount), >= 1 */
    int log2_k_split;  /* -1: none given (split-K kernels try {2,4,8,16}); 0: what AITER's
                          Python wrapper passes when nothing is tuned; > 0: only split-K
                          kernels, split 2^log2_k_split. At most 4. */
    int bpreshuffle;   /* 1: preshuffled weight (what SGLang passes), 0: plain */
} a4w4_heur_params;

/* One candidate's numbers, as get_heuristic_kernel computes them (contracts §5.3). Computed in
 * 64 bits; AITER's int/uint32 arithmetic gives the same values while tiles < 2^31. */
typedef struct {
    int kernel;        /* index into the kernel table, -1 when nothing was eligible */
    int split;         /* 1, 2, 4, 8 or 16 */
    int log2_split;    /* log2(split) */
    unsigned long long tiles;    /* ceil(M/tile_M) * ceil(N/tile_N) * split */
    unsigned long long rounds;   /* ceil(tiles / num_cu) */
    unsigned long long empty_cu; /* rounds*num_cu - tiles */
    int ratio;         /* tile_M*tile_N/(tile_M+tile_N), integer division as in AITER */
} a4w4_heur_choice;

/* Run the heuristic once, walking the kernels in `order` (indices into kt; NULL = file
 * order; norder must be kt->n when order is given). Eligible: kt->arch is "" or equals
 * p->gfx; bpreshuffle matches; splitK >= (log2_k_split > 0); the 128x512 tile only when
 * N % 512 == 0. A candidate replaces the choice if it needs fewer rounds, or the same rounds
 * and either fewer empty CUs or a larger ratio; the choice's rounds, empty CUs and ratio are
 * then updated (start: rounds = UINT_MAX, empty = num_cu, ratio = 1.0). The ratio update is
 * what AITER's current asm_gemm_a4w4.cu does; contracts §5.3 names only the empty-CU update, and
 * an older revision left the ratio at 1.0 (then every minimal-round kernel could win).
 * Errors: A4W4_EINVAL (bad arguments; a shape where an eligible kernel needs more than
 * 2^32 - 1 tiles, where AITER's uint32 tile count wraps), A4W4_EUNSUPPORTED ("cannot get
 * heuristic kernel": no eligible kernel). contracts §5.3; AITER
 * csrc/py_itfs_cu/asm_gemm_a4w4.cu. */
int a4w4_heuristic(const a4w4_kernel_table *kt, const a4w4_heur_params *p, int M, int N,
                   const size_t *order, size_t norder, a4w4_heur_choice *out, char *err,
                   size_t errlen);

/* Winners over sampled walk orders: file order, its reverse, and nperm Fisher-Yates
 * permutations seeded 1..nperm (splitmix64; deterministic). winners[i] is set to 1 for every
 * kernel i that wins some walk (array of kt->n bytes, cleared first). Errors as
 * a4w4_heuristic. */
int a4w4_heuristic_winners_sampled(const a4w4_kernel_table *kt, const a4w4_heur_params *p,
                                   int M, int N, int nperm, unsigned char *winners, char *err,
                                   size_t errlen);

/* The exact set of kernels that win under at least one walk order. Derivation: only
 * candidates with the minimal round count can end selected; a split-K kernel's splits are
 * walked together in ascending order and act as its last minimal-round split (each later
 * one has fewer empty CUs and the same ratio); among the remaining candidates, c1 is
 * "not beaten" by c2 when c2 has at least as many empty CUs and at most the ratio. A walk
 * is a chain of replacements c1 -> c2 -> ... -> w with every other candidate walked while a
 * chain member that it does not beat is selected. Hence w can win iff w is Pareto-maximal
 * (fewest empty CUs, largest ratio) or w is reachable by replacements from a maximal one.
 * winners as above. */
int a4w4_heuristic_winners_any_order(const a4w4_kernel_table *kt, const a4w4_heur_params *p,
                                     int M, int N, unsigned char *winners, char *err,
                                     size_t errlen);

/* ---- tile fit ------------------------------------------------------------------------- */

enum {
    A4W4_FIT_TILE_N_GT_N = 1u << 0, /* tile_N > N: the only N tile runs past the output */
    A4W4_FIT_N_PARTIAL = 1u << 1,   /* tile_N <= N and N % tile_N != 0: partial last tile */
    A4W4_FIT_TILE_M_GT_8M = 1u << 2,/* tile_M > 8*M: the M tile is mostly padding rows */
    A4W4_FIT_SPLIT_K = 1u << 3      /* split > 1: bf16 atomics, result only bounded (§4.1) */
};
/* Mask of the flags above that mean "the tile does not fit the output" (N direction). */
#define A4W4_FIT_N_MASK (A4W4_FIT_TILE_N_GT_N | A4W4_FIT_N_PARTIAL)

/* Fit flags of a tile_m x tile_n kernel run with `split` on an M x N output. */
unsigned a4w4_tile_fit(int tile_m, int tile_n, int split, int M, int N);

/* ---- the whole route ------------------------------------------------------------------ */

typedef enum {
    A4W4_SRC_TUNED = 0,          /* tuned row at M itself */
    A4W4_SRC_TUNED_PADDED_GL0 = 1,/* tuned row at getPaddedM(M, N, K, 0) */
    A4W4_SRC_TUNED_PADDED_GL1 = 2,/* tuned row at getPaddedM(M, N, K, 1) */
    A4W4_SRC_HEURISTIC = 3       /* no hit: ASM heuristic */
} a4w4_route_source;

/* "tuned", "tuned_padded_gl0", "tuned_padded_gl1", "heuristic". */
const char *a4w4_route_source_name(a4w4_route_source s);

typedef struct {
    int M, N, K;
    a4w4_route_source source;
    int tuned_m;                 /* M' of the hit (0 for heuristic) */
    const a4w4_tuned_row *row;   /* the hit (NULL for heuristic) */
    int is_asm;                  /* 1: ASM kernel; 0: CK blockscale kernel */
    const char *kernel;          /* name as written in the tables */
    int kernel_index;            /* index into the kernel table; -1 for CK or not found */
    int tile_m, tile_n;          /* 0 when unknown (CK, or ASM name not in the table) */
    int log2_k_split;            /* log2 split the kernel gets (ASM), or the row's splitK (CK) */
    int split;                   /* 2^log2_k_split for split-K ASM kernels, else 1 */
    int k_per_tg;                /* split-K ASM kernels: ceil((K/split)/256)*256, else 0 */
    int grid_x, grid_y, grid_z;  /* ASM launch grid: ceil(N/tile_N), ceil(M/tile_M), z */
    unsigned fit;                /* A4W4_FIT_* of the chosen kernel (ASM, tile known) */
    a4w4_heur_choice choice;     /* heuristic numbers (source heuristic), else kernel -1 */
    /* Possible winners (kernel indices, sorted by name): over file order, reverse and
     * A4W4_ROUTE_PERMUTATIONS seeded permutations; and over every order. For a tuned hit
     * both hold just the hit (ncand 1, index -1 for CK). */
    int cand[A4W4_MAX_KERNELS];
    size_t ncand;
    int cand_any[A4W4_MAX_KERNELS];
    size_t ncand_any;
    unsigned cand_fit[A4W4_MAX_KERNELS]; /* fit flags of cand_any[i] */
    int tuned_not_in_kernels;    /* ASM hit whose name the kernel table lacks */
} a4w4_route;

/* Route one shape as AITER's gemm_a4w4 does (contracts §5): gfx942 is refused with AITER's
 * message ("A4W4 GEMM kernel is not supported on gfx942, but got gfx942!"); tuned lookup at
 * M, padded gl0, padded gl1 (key uses p->gfx when the table has a gfx column, and
 * p->num_cu); a hit with a mangled name runs that ASM kernel with log2_k_split = the row's
 * splitK, any other name the CK kernel; no hit runs the heuristic with p. tuned may be NULL
 * (nothing tuned). Requires 1 <= M, N, K <= A4W4_DIM_MAX and K % 32 == 0 (one E8M0 scale
 * per 32 elements, contracts §1). For split-K ASM kernels K % split must be 0 (AITER's check).
 * Errors: A4W4_EINVAL (shape, arguments), A4W4_EUNSUPPORTED (gfx942, no eligible
 * kernel, K % split). */
int a4w4_route_shape(const a4w4_tuned_table *tuned, const a4w4_kernel_table *kt,
                     const a4w4_heur_params *p, int M, int N, int K, a4w4_route *r,
                     char *err, size_t errlen);

/* Warnings of a route, rendered one per call: index i in [0, a4w4_route_warning_count(r)).
 * Order: the chosen kernel's fit flags (one line each), "tuned kernel not in the kernel
 * table", the order-dependence line when more than one kernel can win, then one line per
 * other possible winner whose tile does not fit. Writes a NUL-terminated line into buf. */
size_t a4w4_route_warning_count(const a4w4_route *r);
void a4w4_route_warning(const a4w4_route *r, const a4w4_kernel_table *kt, size_t i, char *buf,
                        size_t len);

/* "256x256" style label of kernel i ("256x256/splitK" for split-K kernels). */
void a4w4_kernel_label(const a4w4_kernel_table *kt, int i, char *buf, size_t len);

#endif
