/* cblas_stub.c — a plain (slow, correct) sgemm behind stub/cblas.h, so ref/a4w4_gemm.c links
 * without OpenBLAS. Accumulates each dot product in double, then rounds to float, then
 * applies alpha/beta: a cross-check path only (the GPU checks never call it). */
#include "cblas.h"

#include <stddef.h>

void cblas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb,
                 int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                 int ldb, float beta, float *C, int ldc)
{
    /* Column-major C = op(A) op(B) is row-major C^T = op(B)^T op(A)^T: swap operands. */
    if (order == CblasColMajor) {
        cblas_sgemm(CblasRowMajor, tb, ta, N, M, K, alpha, B, ldb, A, lda, beta, C, ldc);
        return;
    }
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0.0;
            for (int k = 0; k < K; k++) {
                float a = ta == CblasNoTrans ? A[(size_t)i * lda + k] : A[(size_t)k * lda + i];
                float b = tb == CblasNoTrans ? B[(size_t)k * ldb + j] : B[(size_t)j * ldb + k];
                s += (double)a * (double)b;
            }
            float *c = &C[(size_t)i * ldc + j];
            *c = alpha * (float)s + (beta == 0.0f ? 0.0f : beta * *c);
        }
}
