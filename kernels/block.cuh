/* block.cuh: the block-wide routines that both persistent kernels (the interpreter's,
 * device/interp_kernel.cuh, and the compiled one, device/compiled_kernel.cuh) run on the
 * device: the fixed-order block reduction, the matrix-vector product and the tiled matrix
 * product. Device code only;
 * NVRTC gets it as text with the compiled kernel's headers, so it includes nothing but
 * kernels.h. */
#ifndef CFX_BLOCK_CUH
#define CFX_BLOCK_CUH

#include "kernels.h"

#define K_TILE 16 /* output tiles are K_TILE x K_TILE elements, one per thread */

/* A 16-byte load of data read once per use (a matrix row), through the non-coherent path
 * without allocating in L1. */
static __device__ __forceinline__ float4 k_load_stream4(const float4 *p)
{
#if defined(__CUDA_ARCH__)
    float4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
    return v;
#else
    return *p;
#endif
}

/* A warp's accumulators merged into lane 0's, in a fixed order: lane l takes lane l + 16's, then
 * l + 8's, ..., l + 1's (the other lanes' results are partial). */
static __device__ __forceinline__ k_acc k_warp_merge(k_acc v, int op, int dtype)
{
    const unsigned lane = threadIdx.x & 31u;
    for (unsigned off = 16; off > 0; off >>= 1) {
        k_acc o;
        o.r = __shfl_down_sync(0xffffffffu, v.r, off);
        o.i = (int64_t)__shfl_down_sync(0xffffffffu, (unsigned long long)v.i, off);
        o.idx = (int64_t)__shfl_down_sync(0xffffffffu, (unsigned long long)v.idx, off);
        o.n = (int64_t)__shfl_down_sync(0xffffffffu, (unsigned long long)v.n, off);
        if (lane + off < 32u)
            k_reduce_merge(op, dtype, &v, &o);
    }
    return v;
}

/* Merges every thread's accumulator in a fixed order, so every block gets the same bits; every
 * thread returns the result. Each warp merges its lanes by shuffles (k_warp_merge), lane 0 of
 * each puts the warp's into red[w], and warp 0 merges those the same way into red[32]: two
 * block barriers (K_BLOCK_REDUCE_BARRIERS), where a tree in shared memory passes one per level;
 * any and all vote in one (__syncthreads_or, __syncthreads_and).
 * The next call writes red[32] only after its first barrier, which every thread reaches after
 * reading this one's. red holds at least 33 accumulators; blockDim.x is a multiple of 32, at
 * most 1024. */
static __device__ k_acc k_block_reduce(k_acc *red, k_acc mine, int op, int dtype)
{
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    if (op == OP_ANY || op == OP_ALL) {
        /* booleans: the block votes in one barrier. An empty share holds the op's identity (0
         * for any, 1 for all), so its vote changes nothing; the result's n is 1, since merging
         * and finishing these ops look at i alone (an empty side merged is its identity). */
        k_acc v = k_reduce_init(op, dtype);
        v.i = op == OP_ANY ? __syncthreads_or(mine.i != 0) : __syncthreads_and(mine.i != 0);
        v.n = 1;
        (void)red;
        return v;
    }
    const int sum = op == OP_SUM || op == OP_MEAN || op == OP_NORM;
    if (sum || op == OP_RMAX || op == OP_RMIN || op == OP_ARGMAX || op == OP_ARGMIN) {
        /* in registers, each pair of lanes (lane, lane ^ off) ending with the same merge of the
         * two. Sums (dot products too): the fields added as k_reduce_merge adds them; an empty
         * share adds nothing, its sums being 0 (a non-empty real one is never -0, since it
         * starts at +0). Extremes: the better of the two by k_extreme_better's order (NaN
         * first, ties to the lower position), a total order, so each lane of a pair takes the
         * same element, and the block the same one whatever the merges' order; the counts
         * add. */
        const int real = k_is_real(dtype), want_max = op == OP_RMAX || op == OP_ARGMAX;
        k_acc v = mine;
        for (int level = 0; level < 2; level++) {
            for (unsigned off = 16; off > 0; off >>= 1) {
                k_acc o;
                o.r = __shfl_xor_sync(0xffffffffu, v.r, off);
                o.i = (int64_t)__shfl_xor_sync(0xffffffffu, (unsigned long long)v.i, off);
                o.n = (int64_t)__shfl_xor_sync(0xffffffffu, (unsigned long long)v.n, off);
                if (sum) {
                    v.r = __dadd_rn(v.r, o.r);
                    v.i = (int64_t)((uint64_t)v.i + (uint64_t)o.i);
                } else {
                    o.idx = (int64_t)__shfl_xor_sync(0xffffffffu, (unsigned long long)v.idx, off);
                    if (o.n != 0 && k_extreme_better(real, want_max, o.r, o.i, o.idx, &v)) {
                        v.r = o.r;
                        v.i = o.i;
                        v.idx = o.idx;
                    }
                }
                v.n += o.n;
            }
            if (level == 0) {
                if (lane == 0) {
                    K_RACE_W(&red[warp], sizeof *red);
                    red[warp] = v;
                }
                __syncthreads();
                if (warp != 0)
                    break;
                const k_acc none = {0, 0, 0, 0};
                v = lane < nwarps ? (K_RACE_RS(&red[lane], sizeof *red), red[lane]) : none;
            } else if (lane == 0) {
                K_RACE_W(&red[32], sizeof *red);
                red[32] = v;
            }
        }
        __syncthreads();
        K_RACE_RS(&red[32], sizeof *red);
        return red[32];
    }
    k_acc v = k_warp_merge(mine, op, dtype);
    if (lane == 0) {
        K_RACE_W(&red[warp], sizeof *red);
        red[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        const k_acc none = {0, 0, 0, 0}; /* n = 0: what every merge passes over */
        v = k_warp_merge(lane < nwarps ? (K_RACE_RS(&red[lane], sizeof *red), red[lane]) : none, op, dtype);
        if (lane == 0) {
            K_RACE_W(&red[32], sizeof *red);
            red[32] = v;
        }
    }
    __syncthreads();
    K_RACE_RS(&red[32], sizeof *red);
    return red[32];
}

/* The sum of a warp's lanes' accumulators, in a fixed butterfly order, in every lane. */
static __device__ __forceinline__ double k_warp_sum_real(double v)
{
    for (int off = 16; off > 0; off >>= 1)
        v = __dadd_rn(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}
static __device__ __forceinline__ uint64_t k_warp_sum_int(uint64_t v)
{
    for (int off = 16; off > 0; off >>= 1)
        v += (uint64_t)__shfl_xor_sync(0xffffffffu, (unsigned long long)v, off);
    return v;
}

/* f32 rows [lo, hi) of dst = a @ x with R rows per warp at a time and U 16-byte chunks per lane
 * and row loaded before any is used (k_matvec_rows picks R and U). Row r's sum is the same
 * whatever R and U: each lane adds its chunks lane, lane + 32, ... in order, component by
 * component, and the lanes meet in k_warp_sum_real's fixed butterfly. */
template <int R, int U>
static __device__ void k_matvec_f32(float *dst, const uint8_t *a, const float4 *xv, int64_t k4, int64_t lo,
                                    int64_t hi, float *stash)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    for (int64_t row0 = lo + (int64_t)warp * R; row0 < hi; row0 += (int64_t)nwarps * R) {
        double acc[R];
        const float4 *ar[R];
        for (int r = 0; r < R; r++) {
            acc[r] = 0.0;
            /* rows past hi repeat the last row: loaded, never stored */
            ar[r] = (const float4 *)(a + (size_t)(row0 + r < hi ? row0 + r : hi - 1) * (size_t)k4 * 16);
            K_RACE_R_STRIDED(ar[r] + lane, (k4 - lane + 31) / 32, 32 * 16, 16); /* this lane's chunks */
        }
        K_RACE_R_STRIDED(xv + lane, (k4 - lane + 31) / 32, 32 * 16, 16);
        int64_t q = lane;
        for (; q + 32 * (U - 1) < k4; q += 32 * U) {
            float4 u[R][U], v[U];
            for (int j = 0; j < U; j++) {
                v[j] = xv[q + 32 * j];
                for (int r = 0; r < R; r++)
                    u[r][j] = k_load_stream4(ar[r] + q + 32 * j);
            }
            for (int j = 0; j < U; j++)
                for (int r = 0; r < R; r++) {
                    acc[r] = fma((double)u[r][j].x, (double)v[j].x, acc[r]);
                    acc[r] = fma((double)u[r][j].y, (double)v[j].y, acc[r]);
                    acc[r] = fma((double)u[r][j].z, (double)v[j].z, acc[r]);
                    acc[r] = fma((double)u[r][j].w, (double)v[j].w, acc[r]);
                }
        }
        for (; q < k4; q += 32) {
            float4 v = xv[q];
            for (int r = 0; r < R; r++) {
                float4 u = k_load_stream4(ar[r] + q);
                acc[r] = fma((double)u.x, (double)v.x, acc[r]);
                acc[r] = fma((double)u.y, (double)v.y, acc[r]);
                acc[r] = fma((double)u.z, (double)v.z, acc[r]);
                acc[r] = fma((double)u.w, (double)v.w, acc[r]);
            }
        }
        for (int r = 0; r < R; r++) {
            double sum = k_warp_sum_real(acc[r]);
            if (lane == 0 && row0 + r < hi) {
                K_RACE_W(&dst[row0 + r], sizeof(float));
                dst[row0 + r] = (float)sum;
                if (stash) {
                    K_RACE_W(&stash[row0 + r - lo], sizeof(float));
                    stash[row0 + r - lo] = (float)sum;
                }
            }
        }
    }
}

/* Rows [lo, hi) of dst[m] = a[m,k] @ x[k], by every thread of the block. f32 rows that start
 * 16-byte aligned: the warps share the rows, R at a time each where there are enough to keep
 * every warp busy (4, 2 or 1 rows of the block's share per warp), and each lane keeps 8
 * 16-byte loads in flight (U = 8 / R chunks of each of its R rows), enough to keep device
 * memory busy whether a block has 4 long rows (CG on 1024) or 124 short ones (a decoder's
 * vocabulary). The matrix is read through the non-coherent path without allocating in L1, so
 * the vector stays there. Reals are summed in double and rounded once, as k_matmul does; f32
 * products are exact in double, so a fused multiply-add gives the bits of a multiply and an
 * add. Each row's order of additions depends on nothing but k (not on the block's size, R, U
 * or which warp takes the row), so both persistent kernels give the same bits; it differs from
 * k_matmul's, so a result may differ from the cpu executor's in the last bits
 * (docs/persistent.md states the tolerance). With `stash`, row r's result also goes to element
 * r - lo of it (shared memory, where a reduction of the result that follows reads it without a
 * trip to device memory). */
static __device__ void k_matvec_rows(int dtype, uint8_t *dst, const uint8_t *a, const uint8_t *x, int64_t k,
                                     int64_t lo, int64_t hi, uint8_t *stash = NULL)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    const int esz = k_elem_size(dtype);
#ifdef CK_HOST_EMULATION /* a block of less than a warp (tests/cuda_host.h) */
    if (nwarps == 0) {
        if (threadIdx.x == 0) {
            k_matmul(dtype, dst, a, x, hi, k, 1, lo, hi);
            if (stash)
                k_copy_bytes(stash, dst + lo * esz, 0, (hi - lo) * esz);
        }
        return;
    }
#endif
    if (dtype == K_F32 && (k & 3) == 0) {
        const int64_t per_warp = nwarps > 0 ? (hi - lo) / nwarps : 0;
        float *st = (float *)stash;
        if (per_warp >= 4)
            k_matvec_f32<4, 2>((float *)dst, a, (const float4 *)x, k / 4, lo, hi, st);
        else if (per_warp >= 2)
            k_matvec_f32<2, 4>((float *)dst, a, (const float4 *)x, k / 4, lo, hi, st);
        else
            k_matvec_f32<1, 8>((float *)dst, a, (const float4 *)x, k / 4, lo, hi, st);
        return;
    }
    /* any other dtype or alignment: a warp per row, an element per lane at a time */
    const int real = dtype == K_F32 || dtype == K_F64;
    for (int64_t row = lo + warp; row < hi; row += nwarps) {
        double accr = 0.0;
        uint64_t acci = 0;
        K_RACE_R_STRIDED(a + (row * k + lane) * esz, (k - lane + 31) / 32, 32 * esz, esz);
        K_RACE_R_STRIDED(x + lane * esz, (k - lane + 31) / 32, 32 * esz, esz);
        if (real) {
            for (int64_t e = lane; e < k; e += 32)
                accr = __dadd_rn(accr, __dmul_rn(k_get_real(dtype, a, row * k + e), k_get_real(dtype, x, e)));
            accr = k_warp_sum_real(accr);
        } else {
            for (int64_t e = lane; e < k; e += 32)
                acci += (uint64_t)k_get_int(dtype, a, row * k + e) * (uint64_t)k_get_int(dtype, x, e);
            acci = k_warp_sum_int(acci);
        }
        if (lane == 0) {
            k_store_result(dtype, dst + row * esz, accr, (int64_t)acci);
            if (stash)
                k_store_result(dtype, stash + (row - lo) * esz, accr, (int64_t)acci);
        }
    }
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
            if (ia >= 0)
                K_RACE_R(a + ia * k_elem_size(dtype), k_elem_size(dtype));
            if (ib >= 0)
                K_RACE_R(b + ib * k_elem_size(dtype), k_elem_size(dtype));
            K_RACE_W(&ta[ty][tx], sizeof(k_tile_cell));
            K_RACE_W(&tb[ty][tx], sizeof(k_tile_cell));
            if (real) {
                ta[ty][tx].r = ia >= 0 ? k_get_real(dtype, a, ia) : 0.0;
                tb[ty][tx].r = ib >= 0 ? k_get_real(dtype, b, ib) : 0.0;
            } else {
                ta[ty][tx].i = ia >= 0 ? k_get_int(dtype, a, ia) : 0;
                tb[ty][tx].i = ib >= 0 ? k_get_int(dtype, b, ib) : 0;
            }
            __syncthreads();
            int64_t kn = k - k0 < K_TILE ? k - k0 : K_TILE;
            K_RACE_RS(&ta[ty][0], kn * sizeof(k_tile_cell));
            K_RACE_RS_STRIDED(&tb[0][tx], kn, sizeof tb[0], sizeof(k_tile_cell));
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

/* Output tiles [lo, hi) of a batch of products (a batched MATMUL, rec_matmul): tile t is tile
 * t % T of product t / T (T tiles each), dst's products m * n elements apart, a's sa and b's sb
 * (0: one shared by all); each product's tiles as k_matmul_tiles computes them. */
static __device__ void k_matmul_tiles_batch(int dtype, uint8_t *dst, const uint8_t *a, const uint8_t *b,
                                            int64_t m, int64_t k, int64_t n, int64_t sa, int64_t sb,
                                            int64_t lo, int64_t hi)
{
    const int64_t per = ((m + K_TILE - 1) / K_TILE) * ((n + K_TILE - 1) / K_TILE);
    const int64_t es = k_elem_size(dtype);
    for (int64_t t = lo; per > 0 && t < hi;) {
        int64_t e = t / per, end = (e + 1) * per < hi ? (e + 1) * per : hi;
        k_matmul_tiles(dtype, dst + e * m * n * es, a + e * sa * es, b + e * sb * es, m, k, n, t - e * per,
                       end - e * per);
        t = end;
    }
}

#endif
