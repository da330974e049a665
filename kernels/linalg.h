/* linalg.h: matrix product and transpose, over output-element ranges.
 *
 * matmul accumulates each output element in double for reals (so f32 results do not depend on
 * how the work is split) and in uint64 for integers (wrapping), and rounds once at the end.
 * These are the reference bodies; an executor may hand large products to cuBLAS instead.
 */
#ifndef CFX_KERNELS_LINALG_H
#define CFX_KERNELS_LINALG_H

#include <stdint.h>

#include "elementwise.h"
#include "hd.h"
#include "reduce.h"

CFX_HD void k_matmul(int dtype, void *dst, const void *a, const void *b, int64_t m, int64_t k,
                     int64_t n, int64_t lo, int64_t hi)
{
    (void)m;
    int real = k_is_real(dtype);
    for (int64_t e = lo; e < hi; e++) { /* row i of a, column j of b */
        K_RACE_RANGE_R(a, (e / n) * k, (e / n + 1) * k, 1, k_elem_size(dtype));
        K_RACE_R_STRIDED((const uint8_t *)b + (e % n) * k_elem_size(dtype), k, n * k_elem_size(dtype),
                         k_elem_size(dtype));
    }
    for (int64_t e = lo; e < hi; e++) {
        int64_t i = e / n, j = e % n;
        double r = 0.0;
        uint64_t s = 0;
        for (int64_t t = 0; t < k; t++) {
            if (real)
                r += k_get_real(dtype, a, i * k + t) * k_get_real(dtype, b, t * n + j);
            else
                s += (uint64_t)k_get_int(dtype, a, i * k + t) *
                     (uint64_t)k_get_int(dtype, b, t * n + j);
        }
        k_store_result(dtype, (uint8_t *)dst + e * k_elem_size(dtype), r, (int64_t)s);
    }
}

/* dst [n,m] from src [m,n]: output element e = (i, j) with i < n, j < m reads src (j, i). */
CFX_HD void k_transpose(int dtype, void *dst, const void *src, int64_t m, int64_t n, int64_t lo,
                        int64_t hi)
{
    int size = k_elem_size(dtype);
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *s = (const uint8_t *)src;
    K_RACE_RANGE_W(d, lo, hi, size);
    for (int64_t e = lo; e < hi; e++) {
        int64_t i = e / m, j = e % m;
        const uint8_t *from = s + (j * n + i) * size;
        K_RACE_R(from, size);
        for (int q = 0; q < size; q++)
            d[e * size + q] = from[q];
    }
}

#endif
