/* cublas_v2.h, for the host: the part of cuBLAS that device/blas.cu calls, so that
 * tests/launch_host.cpp runs blas.cu itself on the stand-in (its operands swapped for the
 * row-major trick, its leading dimensions and batch strides) rather than a copy of its fallback.
 *
 * The products are computed at once on the host, as cuBLAS's documentation defines them, not
 * as cfx computes them: column-major, for each product p of batchCount,
 *   C_p[i + j * ldc] = alpha * sum_l A_p[i + l * lda] * B_p[l + j * ldb]  (+ beta * C_p[...])
 * with A_p = A + p * strideA and likewise B and C, i < m, j < n, l < k; with beta == 0, C is
 * written without being read. Only CUBLAS_OP_N (the only operation blas.cu asks for); anything
 * else is CUBLAS_STATUS_NOT_SUPPORTED. The arguments are checked as cuBLAS checks them
 * (CUBLAS_STATUS_INVALID_VALUE: m, n, k or batchCount negative, lda < max(1, m), ldb < max(1, k),
 * ldc < max(1, m)), and a handle must be given. alpha and beta are read on the host (blas.cu
 * sets CUBLAS_POINTER_MODE_HOST). The stream and the workspace are recorded, not used: the
 * stand-in's launches are synchronous. */
#ifndef CFX_HOST_CUBLAS_V2_H
#define CFX_HOST_CUBLAS_V2_H

#include <stdlib.h>

#include "cuda_runtime.h"

typedef enum cublasStatus_t {
    CUBLAS_STATUS_SUCCESS = 0,
    CUBLAS_STATUS_NOT_INITIALIZED = 1,
    CUBLAS_STATUS_INVALID_VALUE = 7,
    CUBLAS_STATUS_NOT_SUPPORTED = 15
} cublasStatus_t;
typedef enum cublasOperation_t { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 } cublasOperation_t;
typedef enum cublasMath_t { CUBLAS_DEFAULT_MATH = 0, CUBLAS_TF32_TENSOR_OP_MATH = 3 } cublasMath_t;
typedef enum cublasPointerMode_t { CUBLAS_POINTER_MODE_HOST = 0, CUBLAS_POINTER_MODE_DEVICE = 1 } cublasPointerMode_t;

typedef struct cublasContext {
    cudaStream_t stream;
    void *workspace;
    size_t workspace_bytes;
    cublasMath_t math;
    cublasPointerMode_t pointer_mode;
} *cublasHandle_t;

/* how many products the stand-in computed (launch_host checks that its f32 and f64 products
 * came here) */
[[maybe_unused]] static long long cublas_host_gemms;

static inline cublasStatus_t cublasCreate(cublasHandle_t *h)
{
    *h = (cublasHandle_t)calloc(1, sizeof **h);
    return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}
static inline cublasStatus_t cublasDestroy(cublasHandle_t h)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}
static inline const char *cublasGetStatusString(cublasStatus_t s)
{
    return s == CUBLAS_STATUS_SUCCESS         ? "CUBLAS_STATUS_SUCCESS"
           : s == CUBLAS_STATUS_INVALID_VALUE ? "CUBLAS_STATUS_INVALID_VALUE"
           : s == CUBLAS_STATUS_NOT_SUPPORTED ? "CUBLAS_STATUS_NOT_SUPPORTED"
                                              : "CUBLAS_STATUS_NOT_INITIALIZED";
}
static inline cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t m)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    h->math = m;
    return CUBLAS_STATUS_SUCCESS;
}
static inline cublasStatus_t cublasSetPointerMode(cublasHandle_t h, cublasPointerMode_t m)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    h->pointer_mode = m;
    return CUBLAS_STATUS_SUCCESS;
}
/* as cuBLAS's: setting a stream gives the handle back its default workspace */
static inline cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    h->stream = s;
    h->workspace = NULL;
    h->workspace_bytes = 0;
    return CUBLAS_STATUS_SUCCESS;
}
static inline cublasStatus_t cublasSetWorkspace(cublasHandle_t h, void *w, size_t bytes)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    h->workspace = w;
    h->workspace_bytes = bytes;
    return CUBLAS_STATUS_SUCCESS;
}

template <typename T>
static cublasStatus_t cublas_host_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                       int k, const T *alpha, const T *A, int lda, long long sa, const T *B, int ldb,
                                       long long sb, const T *beta, T *C, int ldc, long long sc, int batch)
{
    if (!h)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (ta != CUBLAS_OP_N || tb != CUBLAS_OP_N || h->pointer_mode != CUBLAS_POINTER_MODE_HOST)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (m < 0 || n < 0 || k < 0 || batch < 0 || lda < (m > 1 ? m : 1) || ldb < (k > 1 ? k : 1) ||
        ldc < (m > 1 ? m : 1) || !alpha || !beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    for (int p = 0; p < batch; p++) {
        const T *a = A + p * sa, *b = B + p * sb;
        T *c = C + p * sc;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                T sum = 0;
                for (int l = 0; l < k; l++)
                    sum += a[i + (long long)l * lda] * b[l + (long long)j * ldb];
                T *out = &c[i + (long long)j * ldc];
                *out = *beta == 0 ? *alpha * sum : *alpha * sum + *beta * *out;
            }
    }
    cublas_host_gemms += batch;
    return CUBLAS_STATUS_SUCCESS;
}

static inline cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
                                         const float *beta, float *C, int ldc)
{
    return cublas_host_gemm(h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}
static inline cublasStatus_t cublasDgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const double *alpha, const double *A, int lda, const double *B,
                                         int ldb, const double *beta, double *C, int ldc)
{
    return cublas_host_gemm(h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}
static inline cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                                       int m, int n, int k, const float *alpha, const float *A,
                                                       int lda, long long sa, const float *B, int ldb, long long sb,
                                                       const float *beta, float *C, int ldc, long long sc, int batch)
{
    return cublas_host_gemm(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}
static inline cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                                       int m, int n, int k, const double *alpha, const double *A,
                                                       int lda, long long sa, const double *B, int ldb, long long sb,
                                                       const double *beta, double *C, int ldc, long long sc,
                                                       int batch)
{
    return cublas_host_gemm(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}

#endif
