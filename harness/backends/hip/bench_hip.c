/* bench_hip.c — the GPU rows of `bench` beside the kernels' own (GPU builds only): the GPU
 * judge's passes on a case resident on the device, and a bf16 GEMM of the same shape in
 * cuBLAS (NVIDIA builds with the toolkit's cuBLAS: A4W4_HAVE_CUBLAS), the vendor library's
 * rate on the same machine in the same run. Timing only: nothing here judges. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a4w4_gpu.h"
#include "a4w4_judge_gpu.h"
#include "fsutil.h"
#include "registry.h"

#ifdef A4W4_HAVE_CUBLAS
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#endif

static int cmp_d(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of reps wall-clock timings of f(arg) (synchronised inside f). */
static double median_ms(int (*f)(void *), void *arg, int reps, int *rc)
{
    double *t = malloc((size_t)(reps > 0 ? reps : 1) * sizeof *t);
    if (!t) {
        *rc = 1;
        return 0;
    }
    *rc = f(arg); /* warm-up */
    int n = 0;
    for (; n < reps && !*rc; n++) {
        const double t0 = a4w4_now();
        *rc = f(arg);
        t[n] = (a4w4_now() - t0) * 1e3;
    }
    double m = 0;
    if (!*rc && n) {
        qsort(t, (size_t)n, sizeof *t, cmp_d);
        m = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    }
    free(t);
    return m;
}

typedef struct {
    a4w4j_operands op;
    unsigned S, Sb;
    int exact;
} judge_job;

/* One set of judge passes, as a4w4j_prepare(S, exact, Sb) makes them. */
static int judge_once(void *arg)
{
    judge_job *j = arg;
    a4w4j_case *c = NULL;
    int rc = a4w4j_open(&j->op, &c);
    if (!rc)
        rc = a4w4j_prepare(c, j->S, j->exact, j->Sb);
    a4w4j_close(c);
    return rc;
}

int a4w4_hip_bench_judge(const a4w4_case_data *d, unsigned S, int reps, double *ordered_ms,
                         double *exact_ms, double *all_ms, char *why, size_t whylen)
{
    void *dev[4] = {NULL, NULL, NULL, NULL};
    const void *src[4] = {d->a_fp4.data, d->a_scale.data, d->w_fp4.data, d->w_scale.data};
    const size_t len[4] = {d->a_fp4.len, d->a_scale.len, d->w_fp4.len, d->w_scale.len};
    int rc = 0;
    for (int i = 0; i < 4 && !rc; i++)
        rc = a4w4j_alloc(&dev[i], len[i]) || a4w4j_upload(dev[i], src[i], len[i]);
    judge_job j = {{dev[0], dev[1], dev[2], dev[3], src[0], src[1], src[2], src[3], d->M, d->N,
                    d->K},
                   S, 0, 0};
    if (!rc) /* the ordered pass: ordered(1) and ordered(S) together */
        *ordered_ms = median_ms(judge_once, &j, reps, &rc);
    j.S = 1;
    j.exact = 1;
    if (!rc) /* the ordered(1) pass and the exact pass with the prover */
        *exact_ms = median_ms(judge_once, &j, reps, &rc);
    j.S = S;
    j.Sb = S;
    if (!rc) /* everything: ordered(1) and (S), exact, prover, bounded(S) bound */
        *all_ms = median_ms(judge_once, &j, reps, &rc);
    if (rc)
        snprintf(why, whylen, "GPU judge: %s", a4w4j_last_error());
    for (int i = 0; i < 4; i++)
        a4w4j_free(dev[i]);
    return rc;
}

#ifdef A4W4_HAVE_CUBLAS
typedef struct {
    cublasHandle_t h;
    void *A, *B, *C;
    int M, N, K;
} blas_job;

/* C [M, N] (row-major) = A [M, K] x W [N, K]^T in bf16 with fp32 accumulation: column-major
 * C^T [N, M] = W (op T) x A. */
static int blas_once(void *arg)
{
    blas_job *j = arg;
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t st = cublasGemmEx(j->h, CUBLAS_OP_T, CUBLAS_OP_N, j->N, j->M, j->K, &one, j->B,
                                     CUDA_R_16BF, j->K, j->A, CUDA_R_16BF, j->K, &zero, j->C,
                                     CUDA_R_16BF, j->N, CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT);
    return st != CUBLAS_STATUS_SUCCESS || cudaDeviceSynchronize() != cudaSuccess;
}
#endif

int a4w4_hip_bench_cublas(size_t M, size_t N, size_t K, int reps, double *ms, char *why,
                          size_t whylen)
{
#ifdef A4W4_HAVE_CUBLAS
    blas_job j = {NULL, NULL, NULL, NULL, (int)M, (int)N, (int)K};
    int rc = cublasCreate(&j.h) != CUBLAS_STATUS_SUCCESS;
    rc = rc || cudaMalloc(&j.A, M * K * 2) != cudaSuccess ||
         cudaMalloc(&j.B, N * K * 2) != cudaSuccess || cudaMalloc(&j.C, M * N * 2) != cudaSuccess;
    rc = rc || cudaMemset(j.A, 0x3C, M * K * 2) != cudaSuccess ||
         cudaMemset(j.B, 0x3C, N * K * 2) != cudaSuccess; /* bf16 0x3C3C: finite values */
    if (!rc)
        *ms = median_ms(blas_once, &j, reps, &rc);
    if (rc)
        snprintf(why, whylen, "cuBLAS bf16 GEMM failed");
    cudaFree(j.A);
    cudaFree(j.B);
    cudaFree(j.C);
    if (j.h)
        cublasDestroy(j.h);
    return rc;
#else
    (void)M; (void)N; (void)K; (void)reps; (void)ms;
    snprintf(why, whylen, "this build has no cuBLAS (NVIDIA builds with the CUDA toolkit's cuBLAS)");
    return -1;
#endif
}
