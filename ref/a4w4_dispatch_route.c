/* a4w4_dispatch_route.c — the route of one shape through AITER's gemm_a4w4 (contracts §5): the
 * lookup order (M, getPaddedM gl=0, gl=1), the ASM launch numbers, the possible winners with
 * their tile fit, and the warnings. Reentrant: every call works on its arguments only (two
 * threads may route at once, with the same or different tables). Prints nothing; errors go
 * into the caller's buffer. */
#include <stdio.h>
#include <string.h>

#include "a4w4_dispatch.h"
#include "a4w4_dispatch_internal.h"

/* ---- lookup --------------------------------------------------------------------------- */

static int next_pow2(int m)
{
    if (m <= 1)
        return 1;
    unsigned v = 1;
    while (v < (unsigned)m)
        v <<= 1;
    return (int)v;
}

int a4w4_padded_m(int M, int N, int K, int gl)
{
    (void)K;
    if (gl == 0) {
        if (M <= 256)
            return (M + 15) / 16 * 16;
        if (M <= 1024)
            return (M + 31) / 32 * 32;
        if (M <= 4096)
            return (M + 63) / 64 * 64;
        return (M + 127) / 128 * 128;
    }
    if (gl == 1) {
        if (M > 8192 && N > 4096)
            return 8192;
        return next_pow2(M);
    }
    return M;
}

int a4w4_kernel_name_is_asm(const char *name)
{
    return name && strstr(name, "_ZN") != NULL;
}

const char *a4w4_route_source_name(a4w4_route_source s)
{
    switch (s) {
    case A4W4_SRC_TUNED: return "tuned";
    case A4W4_SRC_TUNED_PADDED_GL0: return "tuned_padded_gl0";
    case A4W4_SRC_TUNED_PADDED_GL1: return "tuned_padded_gl1";
    case A4W4_SRC_HEURISTIC: return "heuristic";
    }
    return "unknown";
}

const a4w4_tuned_row *a4w4_tuned_lookup(const a4w4_tuned_table *t, const char *gfx, int cu_num,
                                        int M, int N, int K, int *src, int *m_hit)
{
    if (!t)
        return NULL;
    static const int sources[3] = {A4W4_SRC_TUNED, A4W4_SRC_TUNED_PADDED_GL0,
                                   A4W4_SRC_TUNED_PADDED_GL1};
    for (int gl = -1; gl <= 1; gl++) {
        int m = gl < 0 ? M : a4w4_padded_m(M, N, K, gl);
        const a4w4_tuned_row *row = a4w4_tuned_find(t, gfx, cu_num, m, N, K);
        if (row) {
            if (src)
                *src = sources[gl + 1];
            if (m_hit)
                *m_hit = m;
            return row;
        }
    }
    return NULL;
}

/* ---- tile fit ------------------------------------------------------------------------- */

unsigned a4w4_tile_fit(int tile_m, int tile_n, int split, int M, int N)
{
    unsigned f = 0;
    if (tile_n > 0) {
        if (tile_n > N)
            f |= A4W4_FIT_TILE_N_GT_N;
        else if (N % tile_n != 0)
            f |= A4W4_FIT_N_PARTIAL;
    }
    if (tile_m > 0 && (long long)tile_m > 8LL * M)
        f |= A4W4_FIT_TILE_M_GT_8M;
    if (split > 1)
        f |= A4W4_FIT_SPLIT_K;
    return f;
}

/* ---- the whole route ------------------------------------------------------------------ */

/* The kernels marked in w (kt->n bytes) into out[], sorted by name: an insertion sort whose
 * context (kt) is an argument, so concurrent routes never share state. Kernel names are
 * unique in a table, so the order is total. Returns the count. */
static size_t winners_to_sorted(const a4w4_kernel_table *kt, const unsigned char *w, int *out)
{
    size_t n = 0;
    for (size_t i = 0; i < kt->n; i++) {
        if (!w[i])
            continue;
        size_t j = n++;
        while (j > 0 && strcmp(kt->rows[out[j - 1]].name, kt->rows[i].name) > 0) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = (int)i;
    }
    return n;
}

/* Fill the ASM launch numbers of kernel idx run with log2 split. */
static int asm_launch(const a4w4_kernel_table *kt, int idx, int log2, a4w4_route *r, char *err,
                      size_t errlen)
{
    const a4w4_asm_kernel *k = &kt->rows[idx];
    r->kernel_index = idx;
    r->tile_m = k->tile_m;
    r->tile_n = k->tile_n;
    r->grid_x = (r->N + k->tile_n - 1) / k->tile_n;
    r->grid_y = (r->M + k->tile_m - 1) / k->tile_m;
    r->grid_z = 1;
    r->log2_k_split = 0;
    r->split = 1;
    r->k_per_tg = 0;
    if (k->split_k) {
        int k_num = 1 << log2;
        if (r->K % k_num != 0)
            return errf(err, errlen, A4W4_EUNSUPPORTED,
                        "M %d N %d K %d: K %% (1 << log2_k_split %d) != 0 (AITER raises "
                        "'Kdim %% (1 << args.log2_k_split) != 0 !')",
                        r->M, r->N, r->K, log2);
        r->log2_k_split = log2;
        r->split = k_num;
        /* in 64 bits: K + k_per_tg passes INT_MAX when K is near A4W4_DIM_MAX */
        long long k_per_tg = ((long long)r->K / k_num + 255) / 256 * 256;
        r->k_per_tg = (int)k_per_tg;
        r->grid_z = (int)(((long long)r->K + k_per_tg - 1) / k_per_tg);
    }
    r->fit = a4w4_tile_fit(k->tile_m, k->tile_n, r->split, r->M, r->N);
    return A4W4_OK;
}

/* The arguments and the shape rules of a4w4_route_shape, checked in its order. */
static int route_check(const a4w4_kernel_table *kt, const a4w4_heur_params *p, int M, int N,
                       int K, const a4w4_route *r, char *err, size_t errlen)
{
    if (!kt || !p || !p->gfx || !r)
        return errf(err, errlen, A4W4_EINVAL, "route: NULL argument");
    if (M < 1 || N < 1 || K < 1 || M > A4W4_DIM_MAX || N > A4W4_DIM_MAX || K > A4W4_DIM_MAX)
        return errf(err, errlen, A4W4_EINVAL, "M %d N %d K %d: each must be in 1..%d", M, N, K,
                    A4W4_DIM_MAX);
    if (K % 32 != 0)
        return errf(err, errlen, A4W4_EINVAL,
                    "M %d N %d K %d: K must be a multiple of 32 (one E8M0 scale per 32 elements, "
                    "contracts §1)",
                    M, N, K);
    if (!strcmp(p->gfx, "gfx942"))
        return errf(err, errlen, A4W4_EUNSUPPORTED,
                    "A4W4 GEMM kernel is not supported on gfx942, but got gfx942! (AITER "
                    "gemm_a4w4; gfx942 has no a4w4 ASM kernels, contracts §5.4)");
    return A4W4_OK;
}

/* A tuned hit: an ASM kernel (mangled name) with log2_k_split = the row's splitK, or a CK
 * blockscale kernel whose splitK is its log2 K batch (KBatch = 2^splitK). The possible
 * winners are the hit alone. */
static int route_tuned(const a4w4_kernel_table *kt, const a4w4_tuned_row *row, a4w4_route *r,
                       char *err, size_t errlen)
{
    r->row = row;
    r->kernel = row->kernel_name;
    r->is_asm = a4w4_kernel_name_is_asm(row->kernel_name);
    r->ncand = r->ncand_any = 1;
    int idx = r->is_asm ? a4w4_kernels_find(kt, row->kernel_name) : -1;
    r->cand[0] = r->cand_any[0] = idx;
    if (idx >= 0) {
        int st = asm_launch(kt, idx, row->split_k, r, err, errlen);
        if (st)
            return st;
        r->cand_fit[0] = r->fit;
        return A4W4_OK;
    }
    r->tuned_not_in_kernels = r->is_asm;
    r->log2_k_split = row->split_k;
    r->split = 1 << row->split_k;
    if (r->split > 1)
        r->fit = A4W4_FIT_SPLIT_K;
    return A4W4_OK;
}

/* No tuned hit: the heuristic in file order, then the possible winners (sampled orders and
 * every order), each with the fit of the split it wins with. */
static int route_heuristic(const a4w4_kernel_table *kt, const a4w4_heur_params *p,
                           a4w4_route *r, char *err, size_t errlen)
{
    const int M = r->M, N = r->N;
    int st;
    r->source = A4W4_SRC_HEURISTIC;
    r->is_asm = 1;
    if ((st = a4w4_heuristic(kt, p, M, N, NULL, 0, &r->choice, err, errlen)))
        return st;
    r->kernel = kt->rows[r->choice.kernel].name;
    if ((st = asm_launch(kt, r->choice.kernel, r->choice.log2_split, r, err, errlen)))
        return st;
    unsigned char w[A4W4_MAX_KERNELS];
    if ((st = a4w4_heuristic_winners_sampled(kt, p, M, N, A4W4_ROUTE_PERMUTATIONS, w, err,
                                             errlen)))
        return st;
    r->ncand = winners_to_sorted(kt, w, r->cand);
    if ((st = a4w4_heuristic_winners_any_order(kt, p, M, N, w, err, errlen)))
        return st;
    r->ncand_any = winners_to_sorted(kt, w, r->cand_any);
    for (size_t i = 0; i < r->ncand_any; i++) {
        const a4w4_asm_kernel *k = &kt->rows[r->cand_any[i]];
        int split = a4w4_heur_winning_split(kt, r->cand_any[i], p, M, N);
        r->cand_fit[i] = a4w4_tile_fit(k->tile_m, k->tile_n, split, M, N);
    }
    return A4W4_OK;
}

int a4w4_route_shape(const a4w4_tuned_table *tuned, const a4w4_kernel_table *kt,
                     const a4w4_heur_params *p, int M, int N, int K, a4w4_route *r, char *err,
                     size_t errlen)
{
    int st = route_check(kt, p, M, N, K, r, err, errlen);
    if (st)
        return st;
    memset(r, 0, sizeof *r);
    r->M = M;
    r->N = N;
    r->K = K;
    r->kernel_index = -1;
    r->choice.kernel = -1;
    int src = A4W4_SRC_HEURISTIC;
    const a4w4_tuned_row *row =
        a4w4_tuned_lookup(tuned, p->gfx, p->num_cu, M, N, K, &src, &r->tuned_m);
    if (!row)
        return route_heuristic(kt, p, r, err, errlen);
    r->source = (a4w4_route_source)src;
    return route_tuned(kt, row, r, err, errlen);
}

/* ---- labels and warnings -------------------------------------------------------------- */

void a4w4_kernel_label(const a4w4_kernel_table *kt, int i, char *buf, size_t len)
{
    if (!kt || i < 0 || (size_t)i >= kt->n) {
        snprintf(buf, len, "?");
        return;
    }
    const a4w4_asm_kernel *k = &kt->rows[i];
    snprintf(buf, len, "%dx%d%s%s", k->tile_m, k->tile_n, k->split_k ? "/splitK" : "",
             k->bpreshuffle ? "" : "/noBpreShuffle");
}

static int popcount(unsigned v)
{
    int n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

/* Other possible winners that carry fit flags, in cand_any order. */
static int other_flagged(const a4w4_route *r, size_t j)
{
    return r->cand_any[j] != r->kernel_index && r->cand_fit[j] != 0;
}

size_t a4w4_route_warning_count(const a4w4_route *r)
{
    size_t n = (size_t)popcount(r->fit) + (r->tuned_not_in_kernels ? 1 : 0);
    if (r->ncand_any > 1)
        n++;
    for (size_t j = 0; j < r->ncand_any; j++)
        if (other_flagged(r, j))
            n++;
    return n;
}

static void fit_text(unsigned bit, int tile_m, int tile_n, int split, int log2, int M, int N,
                     char *buf, size_t len)
{
    switch (bit) {
    case A4W4_FIT_TILE_N_GT_N:
        snprintf(buf, len, "tile_N %d > N %d: the N tile runs past the output", tile_n, N);
        break;
    case A4W4_FIT_N_PARTIAL:
        snprintf(buf, len, "N %d %% tile_N %d = %d: the last N tile is partial", N, tile_n,
                 N % tile_n);
        break;
    case A4W4_FIT_TILE_M_GT_8M:
        snprintf(buf, len, "tile_M %d > 8*M = %lld: the M tile is mostly padding rows", tile_m,
                 8LL * M);
        break;
    default:
        snprintf(buf, len,
                 "split-K %d (log2_k_split %d): partials added with bf16 atomics, the result is "
                 "only bounded (contracts §4.1)",
                 split, log2);
        break;
    }
}

/* "possible winner <label>: rule; rule" for cand_any[j]: the clause of each fit flag before
 * its colon, "split-K" for a split. */
static void other_winner_text(const a4w4_route *r, const a4w4_kernel_table *kt, size_t j,
                              char *buf, size_t len)
{
    char label[64];
    a4w4_kernel_label(kt, r->cand_any[j], label, sizeof label);
    const a4w4_asm_kernel *k = &kt->rows[r->cand_any[j]];
    int used = snprintf(buf, len, "possible winner %s:", label);
    for (unsigned bit = 1; bit <= A4W4_FIT_SPLIT_K && used >= 0 && (size_t)used < len;
         bit <<= 1) {
        if (!(r->cand_fit[j] & bit))
            continue;
        char t[160];
        int split = bit == A4W4_FIT_SPLIT_K ? 2 : 1;
        fit_text(bit, k->tile_m, k->tile_n, split, -1, r->M, r->N, t, sizeof t);
        /* keep the clause before the colon: the rule, not the explanation */
        char *colon = strchr(t, ':');
        if (colon && bit != A4W4_FIT_SPLIT_K)
            *colon = '\0';
        if (bit == A4W4_FIT_SPLIT_K)
            snprintf(t, sizeof t, "split-K");
        used += snprintf(buf + used, len - (size_t)used, " %s;", t);
    }
    if (used > 0 && (size_t)used < len && buf[used - 1] == ';')
        buf[used - 1] = '\0';
}

void a4w4_route_warning(const a4w4_route *r, const a4w4_kernel_table *kt, size_t i, char *buf,
                        size_t len)
{
    if (!buf || !len)
        return;
    buf[0] = '\0';
    for (unsigned bit = 1; bit <= A4W4_FIT_SPLIT_K; bit <<= 1) {
        if (!(r->fit & bit))
            continue;
        if (i-- == 0) {
            fit_text(bit, r->tile_m, r->tile_n, r->split, r->log2_k_split, r->M, r->N, buf, len);
            return;
        }
    }
    if (r->tuned_not_in_kernels && i-- == 0) {
        snprintf(buf, len,
                 "tuned ASM kernel %s is not in the kernel table %s (AITER raises 'not find "
                 "kernel')",
                 r->kernel, kt && kt->file ? kt->file : "");
        return;
    }
    if (r->ncand_any > 1 && i-- == 0) {
        snprintf(buf, len,
                 "order-dependent: %zu kernels can win (AITER walks its kernel table in "
                 "unordered_map order)",
                 r->ncand_any);
        return;
    }
    for (size_t j = 0; j < r->ncand_any; j++) {
        if (!other_flagged(r, j) || i-- != 0)
            continue;
        other_winner_text(r, kt, j, buf, len);
        return;
    }
}
