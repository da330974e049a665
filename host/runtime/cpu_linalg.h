/* cpu_linalg.h: the cpu executor's products, dots and whole-tensor reductions
 * (host/runtime/cpu_linalg.c), in one of two accumulation modes. */
#ifndef CFX_CPU_LINALG_H
#define CFX_CPU_LINALG_H

#include <stdint.h>

/* CPU_ACC_F64: bit-identical to the kernels/ reference bodies (f32 accumulates in double);
 * CPU_ACC_FAST: f32 in f32 in a CBLAS's order (or cfx's own blocked kernels). */
enum { CPU_ACC_F64 = 0, CPU_ACC_FAST = 1 };

/* 1 when the fast mode's f32/f64 products go to a CBLAS: this build found one at configure
 * and it opens here (the first call opens it). */
int cpu_have_blas(void);
/* 1: the fast mode runs cfx's own kernels even where a CBLAS opens (for the tests); 0: back. */
void cpu_blas_off(int off);
/* dst[m,n] = a[m,k] @ b[k,n] (n = 1 for a vector b), row-major, dst apart from a and b. */
void cpu_matmul(int dtype, int mode, void *dst, const void *a, const void *b, int64_t m, int64_t k,
                int64_t n);
/* *dst = a . b over n elements. */
void cpu_dot(int dtype, int mode, void *dst, const void *a, const void *b, int64_t n);
/* the REDUCE record: *dst = op over the n elements of src */
void cpu_reduce(int op, int dtype, int mode, void *dst, const void *src, int64_t n);
/* The same on up to `threads` threads (host/runtime/pool.c): the fast mode's sums, means, norms
 * and (without a BLAS) dots of real tensors in fixed chunks whose partials add in chunk order,
 * and its extremes in ranges compared in order, the same bits whatever the count; the BLAS's
 * dot on the BLAS's threads (cpu_blas_threads). cpu_dot and cpu_reduce are these with one. */
void cpu_dot_threads(int dtype, int mode, int threads, void *dst, const void *a, const void *b, int64_t n);
void cpu_reduce_threads(int op, int dtype, int mode, int threads, void *dst, const void *src, int64_t n);
/* Sets the CBLAS's thread count (the process's; through openblas_set_num_threads or
 * bli_thread_set_num_threads where the library has one, opening the BLAS), when it differs
 * from the count last set; cpu.c calls it before the fast mode's products and dots of an
 * executor whose count was set. */
void cpu_blas_threads(int threads);

#endif
