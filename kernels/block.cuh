/* block.cuh: the block-wide routines that both persistent kernels (the interpreter's,
 * device/persistent_kernel.cuh, and the compiled one, device/compiled_kernel.cuh) run on the
 * device: the fixed-tree block reduction and the tiled matrix product. Device code only;
 * NVRTC gets it as text with the compiled kernel's headers, so it includes nothing but
 * kernels.h. */
#ifndef CFX_BLOCK_CUH
#define CFX_BLOCK_CUH

#include "kernels.h"

#define K_TILE 16 /* output tiles are K_TILE x K_TILE elements, one per thread */

/* Merges every thread's accumulator in a fixed tree, so every block gets the same bits; every
 * thread returns the result. red holds blockDim.x accumulators; blockDim.x is a power of two. */
static __device__ k_acc k_block_reduce(k_acc *red, k_acc mine, int op, int dtype)
{
    red[threadIdx.x] = mine;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            k_reduce_merge(op, dtype, &red[threadIdx.x], &red[threadIdx.x + s]);
        __syncthreads();
    }
    k_acc r = red[0];
    __syncthreads();
    return r;
}

/* One shared-memory cell of a tile: reals as double, integers as int64, as k_matmul
 * accumulates them. */
typedef union k_tile_cell {
    double r;
    int64_t i;
} k_tile_cell;

/* Output tiles [lo, hi) of dst[m,n] = a[m,k] @ b[k,n], one element per thread of a block of
 * K_TILE x K_TILE threads. The sum runs over k in order with unfused multiply and add, as
 * k_matmul does on the CPU. */
static __device__ void k_matmul_tiles(int dtype, uint8_t *dst, const uint8_t *a, const uint8_t *b,
                                      int64_t m, int64_t k, int64_t n, int64_t lo, int64_t hi)
{
    __shared__ k_tile_cell ta[K_TILE][K_TILE + 1];
    __shared__ k_tile_cell tb[K_TILE][K_TILE + 1];
    const int ty = threadIdx.x / K_TILE, tx = threadIdx.x % K_TILE;
    const int real = dtype == K_F32 || dtype == K_F64;
    const int64_t tiles_n = (n + K_TILE - 1) / K_TILE;
    for (int64_t t = lo; t < hi; t++) {
        int64_t row = (t / tiles_n) * K_TILE + ty, col = (t % tiles_n) * K_TILE + tx;
        double accr = 0.0;
        uint64_t acci = 0;
        for (int64_t k0 = 0; k0 < k; k0 += K_TILE) {
            int64_t ka = k0 + tx, kb = k0 + ty;
            int64_t ia = row < m && ka < k ? row * k + ka : -1;
            int64_t ib = kb < k && col < n ? kb * n + col : -1;
            if (real) {
                ta[ty][tx].r = ia >= 0 ? k_get_real(dtype, a, ia) : 0.0;
                tb[ty][tx].r = ib >= 0 ? k_get_real(dtype, b, ib) : 0.0;
            } else {
                ta[ty][tx].i = ia >= 0 ? k_get_int(dtype, a, ia) : 0;
                tb[ty][tx].i = ib >= 0 ? k_get_int(dtype, b, ib) : 0;
            }
            __syncthreads();
            int64_t kn = k - k0 < K_TILE ? k - k0 : K_TILE;
            if (real) {
                for (int q = 0; q < kn; q++)
                    accr = __dadd_rn(accr, __dmul_rn(ta[ty][q].r, tb[q][tx].r));
            } else {
                for (int q = 0; q < kn; q++)
                    acci += (uint64_t)ta[ty][q].i * (uint64_t)tb[q][tx].i;
            }
            __syncthreads();
        }
        if (row < m && col < n)
            k_store_result(dtype, dst + (row * n + col) * k_elem_size(dtype), accr, (int64_t)acci);
    }
}

#endif
