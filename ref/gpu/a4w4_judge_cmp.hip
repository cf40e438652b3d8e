/* a4w4_judge_cmp.hip — the judge's device-side comparisons (the rules of harness/engine/
 * judge.c's a4w4_judge_exact, a4w4_judge_bounded and a4w4_judge_atomic, contracts §4.1), row
 * facts for the prover, and the weight preshuffle of contracts §3.1. Each comparison kernel
 * gives one CUDA/HIP block a chunk of A4W4J_CHUNK outputs and writes that chunk's counts, so
 * the host can find the first mismatches in row-major order without copying the outputs back. */
#include "a4w4_judge_internal.h"
#include "a4w4_judge_math.h"

#define CT 256

static __device__ __forceinline__ int j_bf16_nan(uint32_t h) { return (h & 0x7FFFu) > 0x7F80u; }

/* The runner's ULP distance: sign-magnitude on a line with -0 and +0 one apart; NaN vs NaN 0,
 * NaN vs number UINT_MAX. */
static __device__ __forceinline__ unsigned j_ulp(uint32_t a, uint32_t b)
{
    if (j_bf16_nan(a) || j_bf16_nan(b))
        return j_bf16_nan(a) && j_bf16_nan(b) ? 0u : 0xFFFFFFFFu;
    const int ia = (a & 0x8000u) ? -(int)(a & 0x7FFFu) - 1 : (int)a;
    const int ib = (b & 0x8000u) ? -(int)(b & 0x7FFFu) - 1 : (int)b;
    return (unsigned)(ia > ib ? ia - ib : ib - ia);
}

/* An output's contribution to the order-independent hash. */
static __device__ __forceinline__ unsigned long long j_mix(long long k, uint32_t v)
{
    unsigned long long z = (unsigned long long)k * 0x9E3779B97F4A7C15ull + v + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Block-wide sums into chunk counters and the global record. */
typedef struct {
    unsigned miss, unw;
    unsigned long long hash, checked, ulp, use, ulps;
} j_tally;

static __device__ void j_flush(const j_tally &t, unsigned *miss, unsigned *unw, a4w4j_glob *g)
{
    __shared__ unsigned s_miss, s_unw;
    __shared__ unsigned long long s_hash, s_checked, s_ulp, s_use, s_ulps;
    if (threadIdx.x == 0) {
        s_miss = s_unw = 0;
        s_hash = s_checked = s_ulp = s_use = s_ulps = 0;
    }
    __syncthreads();
    atomicAdd(&s_miss, t.miss);
    atomicAdd(&s_unw, t.unw);
    atomicAdd(&s_hash, t.hash);
    atomicAdd(&s_checked, t.checked);
    atomicMax(&s_ulp, t.ulp);
    atomicMax(&s_use, t.use);
    atomicMax(&s_ulps, t.ulps);
    __syncthreads();
    if (threadIdx.x == 0) {
        miss[blockIdx.x] = s_miss;
        if (unw)
            unw[blockIdx.x] = s_unw;
        if (g) {
            atomicAdd(&g->hash, s_hash);
            atomicAdd(&g->checked, s_checked);
            atomicMax(&g->max_ulp, s_ulp);
            atomicMax(&g->use_bits, s_use);
            atomicMax(&g->ulp_bits, s_ulps);
        }
    }
}

__global__ void j_cmp_exact(const uint16_t *got, const uint16_t *exp, const uint8_t *mask,
                            long long n, uint16_t poison, unsigned *miss, unsigned *unw,
                            a4w4j_glob *g)
{
    j_tally t = {0, 0, 0, 0, 0, 0, 0};
    const long long c0 = (long long)blockIdx.x * A4W4J_CHUNK;
    const long long c1 = c0 + A4W4J_CHUNK < n ? c0 + A4W4J_CHUNK : n;
    for (long long k = c0 + threadIdx.x; k < c1; k += CT) {
        if (mask && !mask[k])
            continue;
        const uint32_t a = got[k], e = exp[k];
        t.checked++;
        t.hash += j_mix(k, a);
        if (a == poison) {
            t.unw++;
            t.miss++;
        } else if (a == e || (j_bf16_nan(a) && j_bf16_nan(e))) {
            continue;
        } else {
            t.miss++;
        }
        const unsigned long long d = j_ulp(a, e);
        t.ulp = d > t.ulp ? d : t.ulp;
    }
    j_flush(t, miss, unw, g);
}

/* atomic(S) (contracts §4.1): got[k] must be one order's result of its split values. */
__global__ void j_cmp_atomic(const uint16_t *got, const uint16_t *q, int nsplit, long long n,
                             uint16_t poison, unsigned *miss, unsigned *unw, a4w4j_glob *g)
{
    j_tally t = {0, 0, 0, 0, 0, 0, 0};
    const long long c0 = (long long)blockIdx.x * A4W4J_CHUNK;
    const long long c1 = c0 + A4W4J_CHUNK < n ? c0 + A4W4J_CHUNK : n;
    for (long long k = c0 + threadIdx.x; k < c1; k += CT) {
        const uint32_t a = got[k];
        uint32_t v[A4W4J_ATOMIC_MAX];
        for (int j = 0; j < nsplit; j++)
            v[j] = q[j * n + k];
        t.checked++;
        t.hash += j_mix(k, a);
        if (a == poison) {
            t.unw++;
            t.miss++;
        } else if (a4w4j_atomic_member(v, nsplit, a)) {
            continue;
        } else {
            t.miss++;
        }
        const unsigned long long d = j_ulp(a, a4w4j_atomic_fold(v, nsplit));
        t.ulp = d > t.ulp ? d : t.ulp;
    }
    j_flush(t, miss, unw, g);
}

/* One bf16 ULP at |x| (2^-133 below the normal range). */
static __device__ __forceinline__ double j_ulp_at(double x)
{
    x = x < 0 ? -x : x;
    if (x < 0x1p-126)
        return 0x1p-133;
    const int E = (int)((a4w4j_du(x) >> 52) & 0x7FF) - 1023;
    return a4w4j_pow2d(E - 7);
}

__global__ void j_cmp_bounded(const uint16_t *got, const uint16_t *exact, const float *ef,
                              const double *B, long long n, uint16_t poison, unsigned *miss,
                              unsigned *unw, a4w4j_glob *g)
{
    j_tally t = {0, 0, 0, 0, 0, 0, 0};
    const long long c0 = (long long)blockIdx.x * A4W4J_CHUNK;
    const long long c1 = c0 + A4W4J_CHUNK < n ? c0 + A4W4J_CHUNK : n;
    for (long long k = c0 + threadIdx.x; k < c1; k += CT) {
        const uint32_t a = got[k], x = exact[k];
        t.checked++;
        t.hash += j_mix(k, a);
        int bad = 0;
        if (a == poison) {
            t.unw++;
            bad = 1;
        } else {
            const float e = ef[k];
            const int gn = j_bf16_nan(a), en = e != e;
            if (gn || en) {
                bad = !(gn && en);
            } else {
                const double gv = (double)a4w4j_f(a << 16), ev = (double)e, b = B[k];
                const double inf = a4w4j_d(0x7FF0000000000000ull);
                if (ev == inf || ev == -inf || gv == inf || gv == -inf || b != b) {
                    bad = gv != ev;
                } else {
                    const double tol = J_DADD(J_DADD(b, J_DMUL(0x1p-24, ev < 0 ? -ev : ev)),
                                              0x1p-149);
                    const double dist = gv > ev ? J_DADD(gv, -ev) : J_DADD(ev, -gv);
                    const double use = J_DDIV(dist, tol);
                    const unsigned long long ub = a4w4j_du(use);
                    t.use = ub > t.use ? ub : t.use;
                    const unsigned long long lb = a4w4j_du(J_DDIV(tol, j_ulp_at(ev)));
                    t.ulps = lb > t.ulps ? lb : t.ulps;
                    bad = use > 1.0;
                    if (!bad && a != x) {
                        const unsigned long long d = j_ulp(a, x);
                        t.ulp = d > t.ulp ? d : t.ulp;
                    }
                }
            }
        }
        if (bad) {
            t.miss++;
            const unsigned long long d = j_ulp(a, x);
            t.ulp = d > t.ulp ? d : t.ulp;
        }
    }
    j_flush(t, miss, unw, g);
}

/* The runner's bounded rule (harness/engine/judge.c's bounded_ok, contracts §4.1, §4.3) on
 * one output against its limits: 1 when it passes; *use and *ulps as doubles (-1: not
 * measured), *vac 1 / 0 / -1 (the tolerance admits 0 for a finite nonzero exact value / not /
 * neither). */
static __device__ __forceinline__ int j_limits_ok(uint32_t a, double B, double e, uint8_t inf,
                                                  double *use, double *ulps, int *vac)
{
    const double ae = e < 0 ? -e : e;
    const double tol = J_DADD(J_DADD(B, J_DMUL(0x1p-24, ae)), 0x1p-149);
    const double dinf = a4w4j_d(0x7FF0000000000000ull);
    *use = *ulps = -1;
    *vac = tol == tol && tol != dinf && tol != -dinf && e != 0 ? ae <= tol : -1;
    if (B != B)
        return j_bf16_nan(a);
    if (j_bf16_nan(a))
        return (inf & 1) && (inf & 2);
    const double v = (double)a4w4j_f(a << 16);
    if (v == dinf || v == -dinf)
        return v > 0 ? inf & 1 : (inf >> 1) & 1;
    const double d = J_DADD(v, -e);
    *use = J_DDIV(d < 0 ? -d : d, tol);
    *ulps = J_DDIV(tol, j_ulp_at(e));
    return *use <= 1.0;
}

__global__ void j_cmp_limits(const uint16_t *got, const uint16_t *exact, const double *B,
                             const double *E, const uint8_t *infs, long long n, uint16_t poison,
                             unsigned *miss, unsigned *unw, a4w4j_glob *g, a4w4j_lim *lim,
                             unsigned long long *ulps)
{
    __shared__ unsigned long long s_w, s_v, s_m;
    j_tally t = {0, 0, 0, 0, 0, 0, 0};
    unsigned long long w = 0, v = 0, m = 0;
    if (threadIdx.x == 0)
        s_w = s_v = s_m = 0;
    const long long c0 = (long long)blockIdx.x * A4W4J_CHUNK;
    const long long c1 = c0 + A4W4J_CHUNK < n ? c0 + A4W4J_CHUNK : n;
    for (long long k = c0 + threadIdx.x; k < c1; k += CT) {
        const uint32_t a = got[k], x = exact[k];
        t.checked++;
        t.hash += j_mix(k, a);
        ulps[k] = 0xFFFFFFFFFFFFFFFFull;
        int bad = 1;
        if (a == poison) {
            t.unw++;
        } else {
            double use, ul;
            int vac;
            bad = !j_limits_ok(a, B[k], E[k], infs[k], &use, &ul, &vac);
            w += vac >= 0;
            v += vac > 0;
            if (use >= 0) {
                const unsigned long long ub = a4w4j_du(use);
                t.use = ub > t.use ? ub : t.use;
            }
            if (ul >= 0) {
                const unsigned long long lb = a4w4j_du(ul);
                t.ulps = lb > t.ulps ? lb : t.ulps;
                ulps[k] = lb;
                m++;
            }
        }
        t.miss += bad;
        if (bad || (a != x && !j_bf16_nan(a))) {
            const unsigned long long d = j_ulp(a, x);
            t.ulp = d > t.ulp ? d : t.ulp;
        }
    }
    __syncthreads();
    atomicAdd(&s_w, w);
    atomicAdd(&s_v, v);
    atomicAdd(&s_m, m);
    j_flush(t, miss, unw, g); /* its barriers order the shared sums above */
    if (threadIdx.x == 0) {
        atomicAdd(&lim->weighed, s_w);
        atomicAdd(&lim->vacuous, s_v);
        atomicAdd(&lim->measured, s_m);
    }
}

__global__ void j_sel_init(const a4w4j_lim *lim, a4w4j_sel *sel)
{
    const unsigned long long m = lim->measured;
    sel[0].prefix = sel[0].mask = sel[1].prefix = sel[1].mask = 0;
    sel[0].rank = m / 2;
    sel[1].rank = m % 2 || !m ? m / 2 : m / 2 - 1;
}

__global__ void j_sel_hist(const unsigned long long *v, long long n, const a4w4j_sel *sel,
                           int shift, unsigned *hist)
{
    __shared__ unsigned h[512];
    const unsigned long long p0 = sel[0].prefix, m0 = sel[0].mask;
    const unsigned long long p1 = sel[1].prefix, m1 = sel[1].mask;
    for (int i = threadIdx.x; i < 512; i += CT)
        h[i] = 0;
    __syncthreads();
    for (long long k = (long long)blockIdx.x * CT + threadIdx.x; k < n;
         k += (long long)gridDim.x * CT) {
        const unsigned long long x = v[k];
        const unsigned d = (unsigned)(x >> shift) & 255u;
        if ((x & m0) == p0)
            atomicAdd(&h[d], 1u);
        if ((x & m1) == p1)
            atomicAdd(&h[256 + d], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 512; i += CT)
        if (h[i])
            atomicAdd(&hist[i], h[i]);
}

/* Thread i picks selection i's byte at shift from its histogram and zeroes it. */
__global__ void j_sel_pick(a4w4j_sel *sel, int shift, unsigned *hist)
{
    const int i = threadIdx.x;
    unsigned *h = hist + 256 * i;
    unsigned long long r = sel[i].rank;
    unsigned d = 0;
    while (d < 255 && r >= h[d])
        r -= h[d++];
    sel[i].rank = r;
    sel[i].prefix |= (unsigned long long)d << shift;
    sel[i].mask |= 0xFFull << shift;
    for (int b = 0; b < 256; b++)
        h[b] = 0;
}

__global__ void j_diff(const uint16_t *a, const uint16_t *b, long long n, unsigned *miss)
{
    j_tally t = {0, 0, 0, 0, 0, 0, 0};
    const long long c0 = (long long)blockIdx.x * A4W4J_CHUNK;
    const long long c1 = c0 + A4W4J_CHUNK < n ? c0 + A4W4J_CHUNK : n;
    for (long long k = c0 + threadIdx.x; k < c1; k += CT)
        t.miss += a[k] != b[k];
    j_flush(t, miss, NULL, NULL);
}

__global__ void j_cmp_bytes(const uint8_t *got, const uint8_t *exp, long long n,
                            const uint8_t *scale, long long row_bytes, unsigned *miss)
{
    j_tally t = {0, 0, 0, 0, 0, 0, 0};
    const long long c0 = (long long)blockIdx.x * A4W4J_CHUNK;
    const long long c1 = c0 + A4W4J_CHUNK < n ? c0 + A4W4J_CHUNK : n;
    for (long long k = c0 + threadIdx.x; k < c1; k += CT) {
        if (scale) {
            const long long r = k / row_bytes, i = k % row_bytes;
            if (scale[r * (row_bytes / 16) + i / 16] == 0xFFu)
                continue;
        }
        t.miss += got[k] != exp[k];
    }
    j_flush(t, miss, NULL, NULL);
}

__global__ void j_nan_set(const uint16_t *y, const uint16_t *y2, long long M, long long N,
                          long long ra, long long cw, unsigned *wrong, unsigned *nans)
{
    j_tally t = {0, 0, 0, 0, 0, 0, 0};
    const long long n = M * N;
    const long long c0 = (long long)blockIdx.x * A4W4J_CHUNK;
    const long long c1 = c0 + A4W4J_CHUNK < n ? c0 + A4W4J_CHUNK : n;
    for (long long k = c0 + threadIdx.x; k < c1; k += CT) {
        const int dep = k / N == ra || k % N == cw;
        const int isn = j_bf16_nan(y[k]) && (!y2 || j_bf16_nan(y2[k]));
        t.miss += dep != isn;
        t.unw += isn;
    }
    j_flush(t, wrong, nans, NULL);
}

__global__ void j_count(const uint8_t *flags, long long n, unsigned *count)
{
    j_tally t = {0, 0, 0, 0, 0, 0, 0};
    const long long c0 = (long long)blockIdx.x * A4W4J_CHUNK;
    const long long c1 = c0 + A4W4J_CHUNK < n ? c0 + A4W4J_CHUNK : n;
    for (long long k = c0 + threadIdx.x; k < c1; k += CT)
        t.miss += flags[k] != 0;
    j_flush(t, count, NULL, NULL);
}

__global__ void j_list(const uint8_t *flags, long long n, unsigned long long *list,
                       unsigned *count, unsigned cap)
{
    for (long long k = (long long)blockIdx.x * CT + threadIdx.x; k < n;
         k += (long long)gridDim.x * CT)
        if (flags[k]) {
            const unsigned at = atomicAdd(count, 1u);
            if (at < cap)
                list[at] = (unsigned long long)k;
        }
}

/* Row facts (a4w4j_row_facts), one thread per row. */
__global__ void j_row_facts(const uint8_t *fp4, const uint8_t *sc, long long rows, long long K,
                            uint8_t *facts)
{
    for (long long r = (long long)blockIdx.x * CT + threadIdx.x; r < rows;
         r += (long long)gridDim.x * CT)
        facts[r] = (uint8_t)a4w4j_row_facts(fp4 + r * (K / 2), sc + r * (K / 32), K / 32);
}

/* Contracts §3.1: src[n0*16+n1][k0*32+k1*16+k2] -> dst[(((n0*(Kb/32)+k0)*2+k1)*16+n1)*16+k2],
 * Kb = K/2; one thread per 16-byte run (k2 = 0..15). */
__global__ void j_preshuffle(const uint8_t *w, long long N, long long Kb, uint8_t *dst)
{
    const long long runs = N * (Kb / 16);
    for (long long i = (long long)blockIdx.x * CT + threadIdx.x; i < runs;
         i += (long long)gridDim.x * CT) {
        const long long n = i / (Kb / 16), kr = i % (Kb / 16);
        const long long n0 = n / 16, n1 = n % 16, k0 = kr / 2, k1 = kr % 2;
        const long long to = (((n0 * (Kb / 32) + k0) * 2 + k1) * 16 + n1) * 16;
        *(uint4 *)(dst + to) = *(const uint4 *)(w + n * Kb + kr * 16);
    }
}

static unsigned j_chunks(long long n) { return (unsigned)((n + A4W4J_CHUNK - 1) / A4W4J_CHUNK); }
static unsigned j_grid(long long n)
{
    long long b = (n + CT - 1) / CT;
    return (unsigned)(b < 1 ? 1 : b > 65535 * 16 ? 65535 * 16 : b);
}

hipError_t a4w4j_launch_cmp_exact(const uint16_t *got, const uint16_t *exp, const uint8_t *mask,
                                  long long n, uint16_t poison, unsigned *miss, unsigned *unw,
                                  a4w4j_glob *glob)
{
    hipLaunchKernelGGL(j_cmp_exact, dim3(j_chunks(n)), dim3(CT), 0, 0, got, exp, mask, n, poison,
                       miss, unw, glob);
    return hipGetLastError();
}

hipError_t a4w4j_launch_cmp_atomic(const uint16_t *got, const uint16_t *q, int nsplit, long long n,
                                   uint16_t poison, unsigned *miss, unsigned *unw,
                                   a4w4j_glob *glob)
{
    hipLaunchKernelGGL(j_cmp_atomic, dim3(j_chunks(n)), dim3(CT), 0, 0, got, q, nsplit, n,
                       poison, miss, unw, glob);
    return hipGetLastError();
}

hipError_t a4w4j_launch_cmp_bounded(const uint16_t *got, const uint16_t *exact, const float *ef,
                                    const double *B, long long n, uint16_t poison,
                                    unsigned *miss, unsigned *unw, a4w4j_glob *glob)
{
    hipLaunchKernelGGL(j_cmp_bounded, dim3(j_chunks(n)), dim3(CT), 0, 0, got, exact, ef, B, n,
                       poison, miss, unw, glob);
    return hipGetLastError();
}

hipError_t a4w4j_launch_cmp_limits(const uint16_t *got, const uint16_t *exact, const double *B,
                                   const double *E, const uint8_t *infs, long long n,
                                   uint16_t poison, unsigned *miss, unsigned *unw,
                                   a4w4j_glob *glob, a4w4j_lim *lim, unsigned long long *ulps)
{
    hipLaunchKernelGGL(j_cmp_limits, dim3(j_chunks(n)), dim3(CT), 0, 0, got, exact, B, E, infs, n,
                       poison, miss, unw, glob, lim, ulps);
    return hipGetLastError();
}

hipError_t a4w4j_launch_sel_init(const a4w4j_lim *lim, a4w4j_sel *sel)
{
    hipLaunchKernelGGL(j_sel_init, dim3(1), dim3(1), 0, 0, lim, sel);
    return hipGetLastError();
}

hipError_t a4w4j_launch_sel_pass(const unsigned long long *v, long long n, a4w4j_sel *sel,
                                 int shift, unsigned *hist)
{
    long long b = (n + CT - 1) / CT;
    b = b < 1 ? 1 : b > 1024 ? 1024 : b; /* few blocks: each adds its 512 counts globally */
    hipLaunchKernelGGL(j_sel_hist, dim3((unsigned)b), dim3(CT), 0, 0, v, n, sel, shift, hist);
    hipError_t e = hipGetLastError();
    if (e != hipSuccess)
        return e;
    hipLaunchKernelGGL(j_sel_pick, dim3(1), dim3(2), 0, 0, sel, shift, hist);
    return hipGetLastError();
}

hipError_t a4w4j_launch_diff(const uint16_t *a, const uint16_t *b, long long n, unsigned *miss)
{
    hipLaunchKernelGGL(j_diff, dim3(j_chunks(n)), dim3(CT), 0, 0, a, b, n, miss);
    return hipGetLastError();
}

hipError_t a4w4j_launch_cmp_bytes(const uint8_t *got, const uint8_t *exp, long long n,
                                  const uint8_t *scale, long long row_bytes, unsigned *miss)
{
    hipLaunchKernelGGL(j_cmp_bytes, dim3(j_chunks(n)), dim3(CT), 0, 0, got, exp, n, scale,
                       row_bytes, miss);
    return hipGetLastError();
}

hipError_t a4w4j_launch_nan_set(const uint16_t *y, const uint16_t *y2, long long M, long long N,
                                long long ra, long long cw, unsigned *wrong, unsigned *nans)
{
    hipLaunchKernelGGL(j_nan_set, dim3(j_chunks(M * N)), dim3(CT), 0, 0, y, y2, M, N, ra, cw,
                       wrong, nans);
    return hipGetLastError();
}

__global__ void j_fill16(uint16_t *dev, long long n, uint16_t value)
{
    for (long long k = (long long)blockIdx.x * CT + threadIdx.x; k < n;
         k += (long long)gridDim.x * CT)
        dev[k] = value;
}

hipError_t a4w4j_launch_fill16(uint16_t *dev, long long n, uint16_t value)
{
    hipLaunchKernelGGL(j_fill16, dim3(j_grid(n)), dim3(CT), 0, 0, dev, n, value);
    return hipGetLastError();
}

hipError_t a4w4j_launch_count(const uint8_t *flags, long long n, unsigned *count)
{
    hipLaunchKernelGGL(j_count, dim3(j_chunks(n)), dim3(CT), 0, 0, flags, n, count);
    return hipGetLastError();
}

hipError_t a4w4j_launch_uncertain_list(const uint8_t *flags, long long n, unsigned long long *list,
                                       unsigned *count, unsigned cap)
{
    hipLaunchKernelGGL(j_list, dim3(j_grid(n)), dim3(CT), 0, 0, flags, n, list, count, cap);
    return hipGetLastError();
}

hipError_t a4w4j_launch_row_facts(const uint8_t *fp4, const uint8_t *sc, long long rows,
                                  long long K, uint8_t *facts)
{
    hipLaunchKernelGGL(j_row_facts, dim3(j_grid(rows)), dim3(CT), 0, 0, fp4, sc, rows, K, facts);
    return hipGetLastError();
}

/* Row span facts (a4w4j_row_span), one thread per row. */
__global__ void j_row_span(const uint8_t *fp4, const uint8_t *sc, long long rows, long long K,
                           uint8_t *lo, uint8_t *span)
{
    for (long long r = (long long)blockIdx.x * CT + threadIdx.x; r < rows;
         r += (long long)gridDim.x * CT)
        a4w4j_row_span(fp4 + r * (K / 2), sc + r * (K / 32), K / 32, lo + r, span + r);
}

hipError_t a4w4j_launch_row_span(const uint8_t *fp4, const uint8_t *sc, long long rows,
                                 long long K, uint8_t *lo, uint8_t *span)
{
    hipLaunchKernelGGL(j_row_span, dim3(j_grid(rows)), dim3(CT), 0, 0, fp4, sc, rows, K, lo, span);
    return hipGetLastError();
}

hipError_t a4w4j_launch_preshuffle(const uint8_t *w, long long N, long long K, uint8_t *dst)
{
    hipLaunchKernelGGL(j_preshuffle, dim3(j_grid(N * (K / 32))), dim3(CT), 0, 0, w, N, K / 2,
                       dst);
    return hipGetLastError();
}

__global__ void j_gather(const uint8_t *src, int elem, const unsigned long long *idx, long long n,
                         uint8_t *out)
{
    for (long long k = (long long)blockIdx.x * CT + threadIdx.x; k < n;
         k += (long long)gridDim.x * CT)
        for (int b = 0; b < elem; b++)
            out[k * elem + b] = src[idx[k] * elem + b];
}

hipError_t a4w4j_launch_gather(const void *src, size_t elem, const unsigned long long *idx,
                               long long n, void *out)
{
    hipLaunchKernelGGL(j_gather, dim3(j_grid(n)), dim3(CT), 0, 0, (const uint8_t *)src,
                       (int)elem, idx, n, (uint8_t *)out);
    return hipGetLastError();
}
