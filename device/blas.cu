/* blas.cu: cuBLAS wrappers for MATMUL (see blas.h for the row-major trick and precision). */
#include "blas.h"

#include <cublas_v2.h>
#include <stdio.h>
#include <stdlib.h>

#include "launch.cuh"

/* cuBLAS's recommended workspace for Hopper; given up front so that a product captured into a
 * CUDA graph never asks cuBLAS to allocate. */
#define BLAS_WORKSPACE_BYTES ((size_t)32 << 20)

struct blas_ctx {
    cublasHandle_t handle;
    void *workspace;
};

#define BLAS_TRY(call)                                                                \
    do {                                                                              \
        cublasStatus_t s_ = (call);                                                   \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                            \
            dev_error(err, errlen, #call, __FILE__, __LINE__, cublasGetStatusString(s_)); \
            goto fail;                                                                \
        }                                                                             \
    } while (0)

blas_ctx *blas_new(char *err, size_t errlen)
{
    blas_ctx *b = (blas_ctx *)calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    BLAS_TRY(cublasCreate(&b->handle));
    BLAS_TRY(cublasSetMathMode(b->handle, CUBLAS_DEFAULT_MATH));
    /* alpha and beta live on the host stack of blas_matmul (the default, said explicitly) */
    BLAS_TRY(cublasSetPointerMode(b->handle, CUBLAS_POINTER_MODE_HOST));
    CUDA_TRY(cudaMalloc(&b->workspace, BLAS_WORKSPACE_BYTES));
    BLAS_TRY(cublasSetWorkspace(b->handle, b->workspace, BLAS_WORKSPACE_BYTES));
    return b;
fail:
    blas_free(b);
    return NULL;
}

void blas_free(blas_ctx *b)
{
    if (!b) return;
    if (b->handle) cublasDestroy(b->handle);
    if (b->workspace) cudaFree(b->workspace);
    free(b);
}

int blas_matmul(blas_ctx *b, cudaStream_t stream, int dtype, void *dst, const void *a,
                const void *bm, int64_t m, int64_t k, int64_t n, char *err, size_t errlen)
{
    if (!b || (dtype != CFX_F32 && dtype != CFX_F64)) {
        /* no exact integer GEMM in cuBLAS for i32/i64 with wrapping, or no cuBLAS wanted:
         * the op body does it, one output element per thread */
        int64_t count = m * n;
        unsigned blocks = (unsigned)((count + LAUNCH_THREADS - 1) / LAUNCH_THREADS);
        if (blocks < 1) blocks = 1;
        if (blocks > LAUNCH_MAX_BLOCKS) blocks = LAUNCH_MAX_BLOCKS;
        LAUNCH(launch_matmul_kernel, blocks, LAUNCH_THREADS, stream, dtype, dst, a, bm, m, k, n);
        CUDA_LAUNCHED();
        return 0;
    }
    if (m > INT32_MAX || k > INT32_MAX || n > INT32_MAX) {
        snprintf(err, errlen, "matmul: a dimension exceeds cuBLAS's int range");
        return -1;
    }
    BLAS_TRY(cublasSetStream(b->handle, stream));
    /* cublasSetStream resets the handle's workspace to cuBLAS's own pool (cuBLAS docs), so
     * ours is given again after it: without this, a product captured into a CUDA graph
     * would have cuBLAS allocate during capture. */
    BLAS_TRY(cublasSetWorkspace(b->handle, b->workspace, BLAS_WORKSPACE_BYTES));
    {
        /* column-major: dst^T [n,m] = bm^T [n,k] @ a^T [k,m] */
        int im = (int)m, ik = (int)k, in = (int)n;
        if (dtype == CFX_F32) {
            const float one = 1.0f, zero = 0.0f;
            BLAS_TRY(cublasSgemm(b->handle, CUBLAS_OP_N, CUBLAS_OP_N, in, im, ik, &one,
                                 (const float *)bm, in, (const float *)a, ik, &zero, (float *)dst, in));
        } else {
            const double one = 1.0, zero = 0.0;
            BLAS_TRY(cublasDgemm(b->handle, CUBLAS_OP_N, CUBLAS_OP_N, in, im, ik, &one,
                                 (const double *)bm, in, (const double *)a, ik, &zero, (double *)dst,
                                 in));
        }
    }
    return 0;
fail:
    return -1;
}

int blas_matmul_batch(blas_ctx *b, cudaStream_t stream, int dtype, void *dst, const void *a, const void *bm,
                      int64_t batch, int64_t m, int64_t k, int64_t n, int64_t sa, int64_t sb, char *err,
                      size_t errlen)
{
    if (batch == 1)
        return blas_matmul(b, stream, dtype, dst, a, bm, m, k, n, err, errlen);
    if (!b || (dtype != CFX_F32 && dtype != CFX_F64)) {
        /* as blas_matmul: the op body, one output element of the batch per thread */
        int64_t count = batch * m * n;
        unsigned blocks = (unsigned)((count + LAUNCH_THREADS - 1) / LAUNCH_THREADS);
        if (blocks < 1) blocks = 1;
        if (blocks > LAUNCH_MAX_BLOCKS) blocks = LAUNCH_MAX_BLOCKS;
        LAUNCH(launch_matmul_batch_kernel, blocks, LAUNCH_THREADS, stream, dtype, (uint8_t *)dst,
               (const uint8_t *)a, (const uint8_t *)bm, batch, m, k, n, sa, sb);
        CUDA_LAUNCHED();
        return 0;
    }
    if (m > INT32_MAX || k > INT32_MAX || n > INT32_MAX || batch > INT32_MAX) {
        snprintf(err, errlen, "matmul: a dimension or the batch exceeds cuBLAS's int range");
        return -1;
    }
    BLAS_TRY(cublasSetStream(b->handle, stream));
    BLAS_TRY(cublasSetWorkspace(b->handle, b->workspace, BLAS_WORKSPACE_BYTES)); /* as blas_matmul */
    {
        /* column-major, as blas_matmul: dst^T [n,m] = bm^T [n,k] @ a^T [k,m] for each product; a
         * stride of 0 reads one shared matrix */
        int im = (int)m, ik = (int)k, in = (int)n, ib = (int)batch;
        long long sd = (long long)(m * n);
        if (dtype == CFX_F32) {
            const float one = 1.0f, zero = 0.0f;
            BLAS_TRY(cublasSgemmStridedBatched(b->handle, CUBLAS_OP_N, CUBLAS_OP_N, in, im, ik, &one,
                                               (const float *)bm, in, (long long)sb, (const float *)a, ik,
                                               (long long)sa, &zero, (float *)dst, in, sd, ib));
        } else {
            const double one = 1.0, zero = 0.0;
            BLAS_TRY(cublasDgemmStridedBatched(b->handle, CUBLAS_OP_N, CUBLAS_OP_N, in, im, ik, &one,
                                               (const double *)bm, in, (long long)sb, (const double *)a, ik,
                                               (long long)sa, &zero, (double *)dst, in, sd, ib));
        }
    }
    return 0;
fail:
    return -1;
}
