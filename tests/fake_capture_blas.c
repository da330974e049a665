/* fake_capture_blas.c: cuBLAS for test_capture_standin (beside fake_capture_rt.c), built as
 * libcublas.so.N into build/tests/capture_cuda/: the calls of device/blas.cu, over no device.
 * A product is one kernel named after its routine, enqueued on the handle's stream through the
 * fake runtime, so that a capture records it and a run outside one does nothing. */
#include <cublas_v2.h>
#include <stdlib.h>

cudaError_t fake_cuda_library_kernel(cudaStream_t s, const char *name);

struct cublasContext {
    cudaStream_t stream;
};

cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    *h = (cublasHandle_t)calloc(1, sizeof(struct cublasContext));
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}
const char *cublasGetStatusString(cublasStatus_t s) { return s == CUBLAS_STATUS_SUCCESS ? "success" : "failure"; }
cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t m)
{
    (void)h, (void)m;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t m)
{
    (void)h, (void)m;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t h, void *w, size_t n)
{
    (void)h, (void)w, (void)n;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s)
{
    h->stream = s;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const float *alpha, const float *A, int lda, const float *B, int ldb, const float *beta,
                              float *C, int ldc)
{
    (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb, (void)beta;
    (void)C, (void)ldc;
    return fake_cuda_library_kernel(h->stream, "cublasSgemm") == cudaSuccess ? CUBLAS_STATUS_SUCCESS
                                                                             : CUBLAS_STATUS_EXECUTION_FAILED;
}
cublasStatus_t cublasDgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const double *alpha, const double *A, int lda, const double *B, int ldb,
                              const double *beta, double *C, int ldc)
{
    (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb, (void)beta;
    (void)C, (void)ldc;
    return fake_cuda_library_kernel(h->stream, "cublasDgemm") == cudaSuccess ? CUBLAS_STATUS_SUCCESS
                                                                             : CUBLAS_STATUS_EXECUTION_FAILED;
}
cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const float *alpha, const float *A, int lda, long long sA,
                                         const float *B, int ldb, long long sB, const float *beta, float *C, int ldc,
                                         long long sC, int batch)
{
    (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)A, (void)lda, (void)sA, (void)B, (void)ldb;
    (void)sB, (void)beta, (void)C, (void)ldc, (void)sC, (void)batch;
    return fake_cuda_library_kernel(h->stream, "cublasSgemmStridedBatched") == cudaSuccess
               ? CUBLAS_STATUS_SUCCESS
               : CUBLAS_STATUS_EXECUTION_FAILED;
}
cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const double *alpha, const double *A, int lda, long long sA,
                                         const double *B, int ldb, long long sB, const double *beta, double *C,
                                         int ldc, long long sC, int batch)
{
    (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)A, (void)lda, (void)sA, (void)B, (void)ldb;
    (void)sB, (void)beta, (void)C, (void)ldc, (void)sC, (void)batch;
    return fake_cuda_library_kernel(h->stream, "cublasDgemmStridedBatched") == cudaSuccess
               ? CUBLAS_STATUS_SUCCESS
               : CUBLAS_STATUS_EXECUTION_FAILED;
}
