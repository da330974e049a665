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

#endif
