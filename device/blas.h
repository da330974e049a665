/* blas.h: matrix products through cuBLAS for the executors that launch work.
 *
 * cfx stores tensors row-major and cuBLAS reads column-major, so C = A @ B is computed as
 * C^T = B^T @ A^T: the same bytes, the operands swapped, no transposition copied. f32 and
 * f64 use CUBLAS_DEFAULT_MATH (never TF32), so a product differs from the CPU executor's
 * only by the order of its additions; integer products go to the k_matmul launch kernel,
 * since cuBLAS has no exact integer GEMM for these dtypes.
 *
 * Included only from .cu files (it names CUDA types).
 */
#ifndef CFX_BLAS_H
#define CFX_BLAS_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct blas_ctx blas_ctx;

/* A cuBLAS handle with its own workspace (so a product can be captured into a CUDA graph
 * without cuBLAS allocating). NULL with a reason in err on failure. */
blas_ctx *blas_new(char *err, size_t errlen);
void blas_free(blas_ctx *b);

/* Enqueues dst[m,n] = a[m,k] @ b[k,n] (row-major; n = 1 for a vector b) of cfx_dtype dtype
 * on stream. Device pointers. With b NULL, cfx's own product kernel (k_matmul, one output
 * element per thread) instead of cuBLAS, for graphs that refuse cuBLAS's launches. Returns
 * 0, or -1 with a reason in err. */
int blas_matmul(blas_ctx *b, cudaStream_t stream, int dtype, void *dst, const void *a,
                const void *bm, int64_t m, int64_t k, int64_t n, char *err, size_t errlen);

/* Enqueues `batch` products as blas_matmul's (a batched MATMUL, rec_matmul): dst's products m * n
 * elements apart, a's sa and bm's sb apart (0: one shared by all); one strided batched GEMM of
 * cuBLAS, or cfx's own kernel over every output element of the batch. batch 1 is blas_matmul. */
int blas_matmul_batch(blas_ctx *b, cudaStream_t stream, int dtype, void *dst, const void *a, const void *bm,
                      int64_t batch, int64_t m, int64_t k, int64_t n, int64_t sa, int64_t sb, char *err,
                      size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
