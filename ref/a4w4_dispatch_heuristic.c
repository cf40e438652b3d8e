/* a4w4_dispatch_heuristic.c — AITER's untuned ASM heuristic (get_heuristic_kernel in
 * csrc/py_itfs_cu/asm_gemm_a4w4.cu, contracts §5.3) and its order-dependence: the winners over
 * sampled walk orders and the exact set of kernels that win under some order. Reentrant (no
 * state outside the arguments); prints nothing; errors go into the caller's buffer. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "a4w4_dispatch.h"
#include "a4w4_dispatch_internal.h"

static int check_params(const a4w4_kernel_table *kt, const a4w4_heur_params *p, int M, int N,
                        char *err, size_t errlen)
{
    if (!kt || !p || !p->gfx)
        return errf(err, errlen, A4W4_EINVAL, "heuristic: NULL argument");
    if (p->num_cu < 1)
        return errf(err, errlen, A4W4_EINVAL, "heuristic: num_cu is %d, must be >= 1", p->num_cu);
    if (p->log2_k_split < -1 || p->log2_k_split > 4)
        return errf(err, errlen, A4W4_EINVAL,
                    "heuristic: log2_k_split is %d, must be -1 (none) or 0..4", p->log2_k_split);
    if (M < 1 || N < 1 || M > A4W4_DIM_MAX || N > A4W4_DIM_MAX)
        return errf(err, errlen, A4W4_EINVAL, "heuristic: M %d, N %d must be in 1..%d", M, N,
                    A4W4_DIM_MAX);
    return A4W4_OK;
}

/* AITER keys its kernel map by arch + knl_name and keeps keys that start with the device arch
 * (el.first.find(arch_id) == 0). */
static int arch_matches(const a4w4_kernel_table *kt, const char *gfx, const char *name)
{
    size_t la = strlen(kt->arch), lg = strlen(gfx);
    if (la == 0)
        return 1; /* a table without an arch prefix serves any arch */
    if (lg <= la)
        return strncmp(kt->arch, gfx, lg) == 0;
    return strncmp(kt->arch, gfx, la) == 0 && strncmp(name, gfx + la, lg - la) == 0;
}

static int eligible(const a4w4_kernel_table *kt, size_t i, const a4w4_heur_params *p, int N)
{
    const a4w4_asm_kernel *k = &kt->rows[i];
    if (!arch_matches(kt, p->gfx, k->name))
        return 0;
    if (k->bpreshuffle != (p->bpreshuffle ? 1 : 0))
        return 0;
    if (k->split_k < (p->log2_k_split > 0 ? 1 : 0))
        return 0;
    /* "tile128x512 may not support N % cfg.tile_N != 0" */
    if (k->tile_m == 128 && k->tile_n == 512 && N % 512 != 0)
        return 0;
    return 1;
}

/* Split counts tried for kernel k, in AITER's order. */
static int split_list(const a4w4_asm_kernel *k, int log2_k_split, int out[4])
{
    if (log2_k_split >= 0 && k->split_k) {
        out[0] = 1 << log2_k_split;
        return 1;
    }
    if (k->split_k) {
        out[0] = 2;
        out[1] = 4;
        out[2] = 8;
        out[3] = 16;
        return 4;
    }
    out[0] = 1;
    return 1;
}

static int ilog2(int v)
{
    int r = 0;
    while (v >>= 1)
        r++;
    return r;
}

static a4w4_heur_choice candidate(const a4w4_asm_kernel *k, int idx, int split, int M, int N,
                                  int num_cu)
{
    a4w4_heur_choice c;
    unsigned long long tgm = ((unsigned long long)M + (unsigned)k->tile_m - 1) / (unsigned)k->tile_m;
    unsigned long long tgn = ((unsigned long long)N + (unsigned)k->tile_n - 1) / (unsigned)k->tile_n;
    c.kernel = idx;
    c.split = split;
    c.log2_split = ilog2(split);
    c.tiles = tgm * tgn * (unsigned)split;
    c.rounds = (c.tiles + (unsigned)num_cu - 1) / (unsigned)num_cu;
    c.empty_cu = c.rounds * (unsigned)num_cu - c.tiles;
    /* in 64 bits: tiles reach 65536 (a4w4_kernels_load), their product not an int; the ratio
     * itself is at most 32768 */
    c.ratio = (int)((long long)k->tile_m * k->tile_n / ((long long)k->tile_m + k->tile_n));
    return c;
}

/* Kernel ki's last candidate with its minimal round count: its minimal-round candidates are
 * a prefix of its split list (rounds grow with the split), and the later of them has fewer
 * empty CUs and the same ratio, so walked together they end on the last. */
static a4w4_heur_choice last_minimal_round(const a4w4_kernel_table *kt, int ki,
                                           const a4w4_heur_params *p, int M, int N)
{
    const a4w4_asm_kernel *k = &kt->rows[ki];
    int splits[4];
    int ns = split_list(k, p->log2_k_split, splits);
    a4w4_heur_choice best = candidate(k, ki, splits[0], M, N, p->num_cu);
    for (int s = 1; s < ns; s++) {
        a4w4_heur_choice c = candidate(k, ki, splits[s], M, N, p->num_cu);
        if (c.rounds == best.rounds)
            best = c;
    }
    return best;
}

/* AITER counts tiles in uint32 (tg_num = tg_num_M * tg_num_N * splitK): a shape where an
 * eligible candidate needs more tiles wraps there, so its answer is not AITER's; refused with
 * A4W4_EINVAL naming the limit, by both walks alike. The caller has checked p, M and N. */
static int check_tile_count(const a4w4_kernel_table *kt, const a4w4_heur_params *p, int M,
                            int N, char *err, size_t errlen)
{
    for (size_t i = 0; i < kt->n; i++) {
        if (!eligible(kt, i, p, N))
            continue;
        const a4w4_asm_kernel *k = &kt->rows[i];
        int splits[4];
        int split = splits[split_list(k, p->log2_k_split, splits) - 1]; /* the largest */
        /* unsplit: at most 2^30 x 2^30 tiles, exact in 64 bits; the split by division */
        unsigned long long tiles = candidate(k, (int)i, 1, M, N, p->num_cu).tiles;
        if (tiles > UINT32_MAX / (unsigned)split)
            return errf(err, errlen, A4W4_EINVAL,
                        "heuristic: M %d N %d: the %dx%d kernel of %s line %d needs %llu tiles "
                        "times split %d, past AITER's uint32 tile count limit 4294967295 (its "
                        "arithmetic would wrap)",
                        M, N, k->tile_m, k->tile_n, kt->file ? kt->file : "the kernel table",
                        k->line, tiles, split);
    }
    return A4W4_OK;
}

int a4w4_heur_winning_split(const a4w4_kernel_table *kt, int ki, const a4w4_heur_params *p,
                            int M, int N)
{
    if (!kt->rows[ki].split_k)
        return 1;
    return last_minimal_round(kt, ki, p, M, N).split;
}

static int no_kernel(const a4w4_kernel_table *kt, const a4w4_heur_params *p, int N, char *err,
                     size_t errlen)
{
    return errf(err, errlen, A4W4_EUNSUPPORTED,
                "%s: no eligible ASM kernel for %s (bpreshuffle %d, log2_k_split %d, N %d); "
                "AITER raises 'get_heuristic_kernel: cannot get heuristic kernel!'",
                kt->file ? kt->file : "kernel table", p->gfx, p->bpreshuffle ? 1 : 0,
                p->log2_k_split, N);
}

int a4w4_heuristic(const a4w4_kernel_table *kt, const a4w4_heur_params *p, int M, int N,
                   const size_t *order, size_t norder, a4w4_heur_choice *out, char *err,
                   size_t errlen)
{
    int st = check_params(kt, p, M, N, err, errlen);
    if (!st)
        st = check_tile_count(kt, p, M, N, err, errlen);
    if (st)
        return st;
    if (!out || (order && norder != kt->n))
        return errf(err, errlen, A4W4_EINVAL, "heuristic: bad order or output argument");
    a4w4_heur_choice best;
    memset(&best, 0, sizeof best);
    best.kernel = -1;
    unsigned long long round = UINT_MAX, empty = (unsigned)p->num_cu;
    int ratio = 1; /* compute2mem_effi starts at 1.0; ratios are integers */
    for (size_t w = 0; w < kt->n; w++) {
        size_t i = order ? order[w] : w;
        if (i >= kt->n)
            return errf(err, errlen, A4W4_EINVAL, "heuristic: order names kernel %zu of %zu", i,
                        kt->n);
        if (!eligible(kt, i, p, N))
            continue;
        int splits[4];
        int ns = split_list(&kt->rows[i], p->log2_k_split, splits);
        for (int s = 0; s < ns; s++) {
            a4w4_heur_choice c = candidate(&kt->rows[i], (int)i, splits[s], M, N, p->num_cu);
            if (c.rounds < round || (c.rounds == round && (empty > c.empty_cu || c.ratio > ratio))) {
                round = c.rounds;
                empty = c.empty_cu;
                ratio = c.ratio;
                best = c;
            }
        }
    }
    if (best.kernel < 0)
        return no_kernel(kt, p, N, err, errlen);
    *out = best;
    return A4W4_OK;
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Walk order number `walk` of a4w4_heuristic_winners_sampled into order[0..n): -2 file order,
 * -1 its reverse, w >= 0 the Fisher-Yates permutation seeded w + 1. */
static void walk_order(int walk, size_t n, size_t *order)
{
    for (size_t i = 0; i < n; i++)
        order[i] = walk == -1 ? n - 1 - i : i;
    if (walk < 0)
        return;
    uint64_t seed = (uint64_t)walk + 1;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(splitmix64(&seed) % i);
        size_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

int a4w4_heuristic_winners_sampled(const a4w4_kernel_table *kt, const a4w4_heur_params *p,
                                   int M, int N, int nperm, unsigned char *winners, char *err,
                                   size_t errlen)
{
    int st = check_params(kt, p, M, N, err, errlen);
    if (st)
        return st;
    if (!winners || nperm < 0)
        return errf(err, errlen, A4W4_EINVAL, "heuristic: bad winners or permutation count");
    memset(winners, 0, kt->n);
    size_t order[A4W4_MAX_KERNELS];
    a4w4_heur_choice c;
    for (int walk = -2; walk < nperm; walk++) {
        walk_order(walk, kt->n, order);
        if ((st = a4w4_heuristic(kt, p, M, N, order, kt->n, &c, err, errlen)))
            return st;
        winners[c.kernel] = 1;
    }
    return A4W4_OK;
}

/* Mark in reach[] every candidate of rep[0..n) that can end selected: the Pareto-maximal ones
 * (fewest empty CUs, largest ratio) and whatever replaces a reached one. */
static void reachable_winners(const a4w4_heur_choice *rep, size_t n, unsigned char *reach)
{
    size_t queue[A4W4_MAX_KERNELS], qh = 0, qt = 0;
    memset(reach, 0, n);
    for (size_t i = 0; i < n; i++) {
        int maximal = 1;
        for (size_t j = 0; j < n && maximal; j++)
            if (rep[j].empty_cu <= rep[i].empty_cu && rep[j].ratio >= rep[i].ratio &&
                (rep[j].empty_cu < rep[i].empty_cu || rep[j].ratio > rep[i].ratio))
                maximal = 0;
        if (maximal) {
            reach[i] = 1;
            queue[qt++] = i;
        }
    }
    while (qh < qt) {
        size_t i = queue[qh++];
        /* j replaces i when i is selected (same rounds) */
        for (size_t j = 0; j < n; j++)
            if (!reach[j] && (rep[j].empty_cu < rep[i].empty_cu || rep[j].ratio > rep[i].ratio)) {
                reach[j] = 1;
                queue[qt++] = j;
            }
    }
}

int a4w4_heuristic_winners_any_order(const a4w4_kernel_table *kt, const a4w4_heur_params *p,
                                     int M, int N, unsigned char *winners, char *err,
                                     size_t errlen)
{
    int st = check_params(kt, p, M, N, err, errlen);
    if (!st)
        st = check_tile_count(kt, p, M, N, err, errlen);
    if (st)
        return st;
    if (!winners)
        return errf(err, errlen, A4W4_EINVAL, "heuristic: NULL winners");
    memset(winners, 0, kt->n);
    /* Per eligible kernel, its split block acts as its last minimal-round split; only the
     * kernels with the fewest rounds overall can end selected. */
    a4w4_heur_choice first[A4W4_MAX_KERNELS], rep[A4W4_MAX_KERNELS];
    size_t nfirst = 0, nrep = 0;
    unsigned long long rmin = ULLONG_MAX;
    for (size_t i = 0; i < kt->n; i++) {
        if (!eligible(kt, i, p, N))
            continue;
        first[nfirst] = last_minimal_round(kt, (int)i, p, M, N);
        if (first[nfirst].rounds < rmin)
            rmin = first[nfirst].rounds;
        nfirst++;
    }
    if (!nfirst)
        return no_kernel(kt, p, N, err, errlen);
    for (size_t i = 0; i < nfirst; i++)
        if (first[i].rounds == rmin)
            rep[nrep++] = first[i];
    unsigned char reach[A4W4_MAX_KERNELS];
    reachable_winners(rep, nrep, reach);
    for (size_t i = 0; i < nrep; i++)
        if (reach[i])
            winners[rep[i].kernel] = 1;
    return A4W4_OK;
}
