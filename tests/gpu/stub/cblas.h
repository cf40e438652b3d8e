/* cblas.h — the one CBLAS entry point ref/a4w4_gemm.c uses, for building the GPU check
 * programs where OpenBLAS is not installed (the GPU machine image). Standard enum values.
 * Used only by tests/gpu/build-standalone.sh; normal builds use OpenBLAS's own header. */
#ifndef A4W4_STUB_CBLAS_H
#define A4W4_STUB_CBLAS_H

enum CBLAS_ORDER { CblasRowMajor = 101, CblasColMajor = 102 };
enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113 };
typedef enum CBLAS_ORDER CBLAS_LAYOUT;

void cblas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb,
                 int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                 int ldb, float beta, float *C, int ldc);

#endif
