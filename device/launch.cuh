/* launch.cuh: one kernel launch per op record, for the executors that launch work from the
 * host (cuda-host) or capture it into a graph (cuda-graph).
 *
 * Device code first: one __global__ kernel per record kind that runs the k_* body of
 * kernels.h one element per thread (grid-stride), and a two-pass reduction (per-block
 * partials merged in a fixed order, then one block merges the partials in order), so a
 * reduction gives the same bits on every run. Then the launcher, launch_record(), which
 * reads a record's slots and launches the right kernel (cuBLAS for a real MATMUL).
 *
 * Everything here is `static`: the header is included by several .cu files and each keeps
 * its own copy, which spares a relocatable-device-code build.
 */
#ifndef CFX_LAUNCH_CUH
#define CFX_LAUNCH_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "blas.h"
#include "dev.h"
#include "kernels/kernels.h"
#include "host/program/program.h"

#define LAUNCH_THREADS 256
/* The two grid caps may be set smaller before this header is included: the host stand-in
 * (tests/launch_host.cpp) runs at most 16 blocks, each a host thread. */
#ifndef LAUNCH_MAX_BLOCKS
#define LAUNCH_MAX_BLOCKS 4096     /* elementwise grids stride over the rest */
#endif
#ifndef LAUNCH_REDUCE_BLOCKS
#define LAUNCH_REDUCE_BLOCKS 1024  /* partials a reduction may leave: the scratch size */
#endif
#define LAUNCH_REDUCE_PER_THREAD 8 /* elements a reduction thread folds before merging */

/* Every launch of this header: kernel<<<grid, block, 0, stream>>>(args...) under nvcc; compiled
 * against the host stand-in for the CUDA runtime (tests/host_cuda, which defines
 * CK_HOST_EMULATION), the stand-in runs the kernel on host threads, one per block, and returns
 * when it has ended (tests/launch_host.cpp compares launch_record with the cpu executor so). */
#ifdef CK_HOST_EMULATION
#define LAUNCH(kernel, grid, block, stream, ...) ck_host_launch(kernel, grid, block, stream, __VA_ARGS__)
#else
#define LAUNCH(kernel, grid, block, stream, ...) kernel<<<grid, block, 0, stream>>>(__VA_ARGS__)
#endif

/* ==== device code ========================================================================= */

#define LAUNCH_FOR_EACH(e, n) \
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < (n); \
         e += (int64_t)gridDim.x * blockDim.x)

static __global__ void launch_unary_kernel(int op, int dtype, void *dst, const void *src, int64_t n)
{
    LAUNCH_FOR_EACH(e, n) k_unary(op, dtype, dst, src, e, e + 1);
}

static __global__ void launch_binary_kernel(int op, int dtype, void *dst, const void *a, int64_t na,
                                            const void *b, int64_t nb, int64_t n)
{
    LAUNCH_FOR_EACH(e, n) k_binary(op, dtype, dst, a, na, b, nb, e, e + 1);
}

static __global__ void launch_matmul_kernel(int dtype, void *dst, const void *a, const void *b,
                                            int64_t m, int64_t k, int64_t n)
{
    LAUNCH_FOR_EACH(e, m * n) k_matmul(dtype, dst, a, b, m, k, n, e, e + 1);
}

/* A batch of products (blas_matmul_batch without cuBLAS): output element e of the batch's. */
static __global__ void launch_matmul_batch_kernel(int dtype, uint8_t *dst, const uint8_t *a, const uint8_t *b,
                                                  int64_t batch, int64_t m, int64_t k, int64_t n, int64_t sa,
                                                  int64_t sb)
{
    const int64_t mn = m * n, es = dtype_size(dtype);
    LAUNCH_FOR_EACH(e, batch * mn) {
        int64_t q = e / mn, o = e - q * mn;
        k_matmul(dtype, dst + q * mn * es, a + q * sa * es, b + q * sb * es, m, k, n, o, o + 1);
    }
}

static __global__ void launch_transpose_kernel(int dtype, void *dst, const void *src, int64_t m,
                                               int64_t n)
{
    LAUNCH_FOR_EACH(e, m * n) k_transpose(dtype, dst, src, m, n, e, e + 1);
}

static __global__ void launch_fill_kernel(int dtype, void *dst, const void *value, int64_t n)
{
    LAUNCH_FOR_EACH(e, n) k_fill(dtype, dst, value, e, e + 1);
}

static __global__ void launch_iota_kernel(int dtype, void *dst, int64_t n)
{
    LAUNCH_FOR_EACH(e, n) k_iota(dtype, dst, e, e + 1);
}

static __global__ void launch_cast_kernel(int dst_dtype, void *dst, int src_dtype, const void *src,
                                          int64_t n)
{
    LAUNCH_FOR_EACH(e, n) k_cast(dst_dtype, dst, src_dtype, src, e, e + 1);
}

static __global__ void launch_where_kernel(int dtype, void *dst, const uint8_t *c, int64_t nc,
                                           const void *a, int64_t na, const void *b, int64_t nb,
                                           int64_t n)
{
    LAUNCH_FOR_EACH(e, n) k_where(dtype, dst, c, nc, a, na, b, nb, e, e + 1);
}

/* Copies in 16-byte pieces: one piece per thread. */
static __global__ void launch_copy_kernel(void *dst, const void *src, int64_t bytes)
{
    LAUNCH_FOR_EACH(e, (bytes + 15) / 16) {
        int64_t lo = e * 16, hi = lo + 16 < bytes ? lo + 16 : bytes;
        k_copy_bytes(dst, src, lo, hi);
    }
}

/* GET_ROW / SET_ROW read the index on the device, so neither the host nor a graph needs its
 * value. CHECK_INDEX has already stopped the run for an index out of range; the test here
 * only keeps a kernel that runs anyway (a graph body) from touching memory it must not. */
static __global__ void launch_get_row_kernel(void *dst, const uint8_t *src, const void *index,
                                             int index_dtype, int64_t rows, int64_t row_bytes)
{
    int64_t r = k_row_index(k_load_int(index_dtype, index), rows);
    if (r < 0 || r >= rows) return;
    LAUNCH_FOR_EACH(e, (row_bytes + 15) / 16) {
        int64_t lo = e * 16, hi = lo + 16 < row_bytes ? lo + 16 : row_bytes;
        k_copy_bytes(dst, src + r * row_bytes, lo, hi);
    }
}

static __global__ void launch_set_row_kernel(uint8_t *dst, const void *index, int index_dtype,
                                             int64_t rows, int64_t row_bytes, const void *src)
{
    int64_t r = k_row_index(k_load_int(index_dtype, index), rows);
    if (r < 0 || r >= rows) return;
    LAUNCH_FOR_EACH(e, (row_bytes + 15) / 16) {
        int64_t lo = e * 16, hi = lo + 16 < row_bytes ? lo + 16 : row_bytes;
        k_copy_bytes(dst + r * row_bytes, src, lo, hi);
    }
}

static __global__ void launch_broadcast_kernel(int size, void *dst, const void *src, k_bshape sh, int64_t n)
{
    LAUNCH_FOR_EACH(e, n) k_broadcast(size, dst, src, &sh, e, e + 1);
}

/* GATHER: element e of the result from k_gather_src, the indices read on the device. */
static __global__ void launch_gather_kernel(int size, void *dst, const void *src, int idx_dtype, const void *idx,
                                            int64_t m, int64_t rows, int64_t inner, int64_t n)
{
    LAUNCH_FOR_EACH(e, n) k_gather(size, dst, src, idx_dtype, idx, m, rows, inner, e, e + 1);
}

/* PERMUTE: element e of the result from its source element (kernels/elementwise.h). */
static __global__ void launch_permute_kernel(int size, void *dst, const void *src, k_pshape sh, int64_t n)
{
    LAUNCH_FOR_EACH(e, n) k_permute(size, dst, src, &sh, e, e + 1);
}

/* REDUCE_AXIS: result e, its run along the axis, as every executor folds it (kernels/reduce.h). */
static __global__ void launch_reduce_axis_kernel(int op, int dtype, void *dst, const void *src, int64_t len,
                                                 int64_t inner, int64_t n)
{
    LAUNCH_FOR_EACH(e, n) k_reduce_axis(op, dtype, dst, src, len, inner, e, e + 1);
}

/* GET_BOX / SET_BOX: the table's entries by value, the starts read on the device from their
 * slots (rec_box clamps them, so a graph body whose check failed still stays inside). */
typedef struct launch_box {
    int32_t entries[2 * K_MAX_RANK];
    const void *start[K_MAX_RANK];
    int32_t dtype[K_MAX_RANK];
    cfx_slot tensor;
} launch_box;

static __global__ void launch_box_kernel(int set, void *dst, const void *src, launch_box lb, int64_t n)
{
    int64_t st[K_MAX_RANK] = {0};
    for (int d = 0; d < lb.tensor.rank; d++)
        if (lb.start[d]) st[d] = k_load_int(lb.dtype[d], lb.start[d]);
    k_box bx = rec_box(lb.entries, &lb.tensor, st);
    LAUNCH_FOR_EACH(e, n) k_box_copy(set, dtype_size(lb.tensor.dtype), dst, src, &bx, e, e + 1);
}

/* GET_ITEM / SET_ITEM: the item from the index and the length on the device; k_item_index
 * keeps it inside the list even where a failed CHECK_BOUND did not stop a graph body. */
static __global__ void launch_get_item_kernel(void *dst, const uint8_t *list, int64_t cap,
                                              const void *index, int index_dtype, const void *len,
                                              int len_dtype, int64_t item_bytes)
{
    int64_t r = k_item_index(k_load_int(index_dtype, index), k_load_int(len_dtype, len), cap);
    LAUNCH_FOR_EACH(e, (item_bytes + 15) / 16) {
        int64_t lo = e * 16, hi = lo + 16 < item_bytes ? lo + 16 : item_bytes;
        k_copy_bytes(dst, list + r * item_bytes, lo, hi);
    }
}

static __global__ void launch_set_item_kernel(uint8_t *list, int64_t cap, const void *index,
                                              int index_dtype, const void *len, int len_dtype,
                                              int64_t item_bytes, const void *src)
{
    int64_t r = k_item_index(k_load_int(index_dtype, index), k_load_int(len_dtype, len), cap);
    LAUNCH_FOR_EACH(e, (item_bytes + 15) / 16) {
        int64_t lo = e * 16, hi = lo + 16 < item_bytes ? lo + 16 : item_bytes;
        k_copy_bytes(list + r * item_bytes, src, lo, hi);
    }
}

/* Merges the block's accumulators in shared memory pairwise, lower share first, so the
 * order of merging is fixed by the thread numbering and never by timing. */
static __device__ void launch_block_merge(int op, int dtype, k_acc *sh)
{
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        unsigned t = threadIdx.x;
        if (t % (2 * stride) == 0 && t + stride < blockDim.x) k_reduce_merge(op, dtype, &sh[t], &sh[t + stride]);
    }
    __syncthreads();
}

/* Pass 1 of a reduction (or of a dot product when b != NULL): block j folds a contiguous
 * share of the elements, each of its threads a contiguous piece of that share. With one
 * block it finishes the result itself (dst); otherwise it leaves its partial in parts[j]. */
static __global__ void launch_reduce_kernel(int op, int dtype, const void *a, const void *b,
                                            int64_t n, k_acc *parts, void *dst)
{
    __shared__ k_acc sh[LAUNCH_THREADS];
    int merge_op = b ? (int)OP_SUM : op;
    int64_t per_block = (n + gridDim.x - 1) / gridDim.x;
    int64_t blo = (int64_t)blockIdx.x * per_block;
    int64_t bhi = blo + per_block < n ? blo + per_block : n;
    int64_t per_thread = (per_block + blockDim.x - 1) / blockDim.x;
    int64_t lo = blo + (int64_t)threadIdx.x * per_thread;
    int64_t hi = lo + per_thread < bhi ? lo + per_thread : bhi;
    k_acc acc = k_reduce_init(merge_op, dtype);
    if (lo < hi) {
        if (b)
            k_dot_range(dtype, &acc, a, b, lo, hi);
        else
            k_reduce_range(op, dtype, &acc, a, lo, hi);
    }
    sh[threadIdx.x] = acc;
    launch_block_merge(merge_op, dtype, sh);
    if (threadIdx.x != 0) return;
    if (gridDim.x > 1) {
        parts[blockIdx.x] = sh[0];
    } else if (b) {
        k_dot_finish(dtype, &sh[0], dst);
    } else {
        k_reduce_finish(op, dtype, &sh[0], n, dst);
    }
}

/* Pass 2: one block merges the partials in block order and writes the result. */
static __global__ void launch_reduce_final_kernel(int op, int dtype, int is_dot, const k_acc *parts,
                                                  int nparts, int64_t n, void *dst)
{
    __shared__ k_acc sh[LAUNCH_THREADS];
    int merge_op = is_dot ? (int)OP_SUM : op;
    int per_thread = (nparts + (int)blockDim.x - 1) / (int)blockDim.x;
    int lo = (int)threadIdx.x * per_thread;
    int hi = lo + per_thread < nparts ? lo + per_thread : nparts;
    k_acc acc = k_reduce_init(merge_op, dtype);
    for (int j = lo; j < hi; j++) k_reduce_merge(merge_op, dtype, &acc, &parts[j]);
    sh[threadIdx.x] = acc;
    launch_block_merge(merge_op, dtype, sh);
    if (threadIdx.x != 0) return;
    if (is_dot)
        k_dot_finish(dtype, &sh[0], dst);
    else
        k_reduce_finish(op, dtype, &sh[0], n, dst);
}

/* CHECK_DIVIDE over a tensor: *flag = 1 if any element is 0 (the host clears it first).
 * Every writer stores the same value, so the race is benign. */
static __global__ void launch_any_zero_kernel(int dtype, const void *src, int64_t n, int *flag)
{
    LAUNCH_FOR_EACH(e, n) {
        const uint8_t *p = (const uint8_t *)src + e * dtype_size(dtype);
        if (k_load_int(dtype, p) == 0) *flag = 1;
    }
}

/* ==== launchers ============================================================================ */

/* What a launch needs besides the record: where the arena is on the device, a scratch of
 * LAUNCH_REDUCE_BLOCKS partials for reductions, and a cuBLAS context. */
typedef struct launch_env {
    const cfx_prog *prog;
    uint8_t *arena;
    k_acc *partials;
    blas_ctx *blas;
} launch_env;

static unsigned launch_grid(int64_t n)
{
    int64_t blocks = (n + LAUNCH_THREADS - 1) / LAUNCH_THREADS;
    if (blocks < 1) blocks = 1;
    if (blocks > LAUNCH_MAX_BLOCKS) blocks = LAUNCH_MAX_BLOCKS;
    return (unsigned)blocks;
}

static int launch_reduce(const launch_env *env, int op, int dtype, const void *a, const void *b,
                         int64_t n, void *dst, cudaStream_t s, char *err, size_t errlen)
{
    int64_t per_block = (int64_t)LAUNCH_THREADS * LAUNCH_REDUCE_PER_THREAD;
    int64_t blocks = (n + per_block - 1) / per_block;
    if (blocks < 1) blocks = 1;
    if (blocks > LAUNCH_REDUCE_BLOCKS) blocks = LAUNCH_REDUCE_BLOCKS;
    LAUNCH(launch_reduce_kernel, (unsigned)blocks, LAUNCH_THREADS, s, op, dtype, a, b, n, env->partials, dst);
    CUDA_LAUNCHED();
    if (blocks > 1) {
        LAUNCH(launch_reduce_final_kernel, 1, LAUNCH_THREADS, s, op, dtype, b != NULL, env->partials,
               (int)blocks, n, dst);
        CUDA_LAUNCHED();
    }
    return 0;
fail:
    return -1;
}

/* Launches the work of one op record (UNARY ... SET_ROW) on stream s. Control records, guards,
 * PRINT and CALL are the executor's business; passing one here is an error. */
static int launch_record(const launch_env *env, const cfx_record *r, cudaStream_t s, char *err,
                         size_t errlen)
{
    const cfx_slot *slots = env->prog->slots;
    const cfx_slot *sa = &slots[r->a];
    /* operands b, c, d are slots only for some kinds; the pointers are formed only then */
#define SLOT_PTR(i) ((void *)(env->arena + slots[(i)].offset))
    switch ((enum rec_kind)r->kind) {
    case REC_UNARY:
        LAUNCH(launch_unary_kernel, launch_grid(sa->count), LAUNCH_THREADS, s,
            r->op, slots[r->b].dtype, SLOT_PTR(r->a), SLOT_PTR(r->b), sa->count);
        break;
    case REC_BINARY:
        LAUNCH(launch_binary_kernel, launch_grid(sa->count), LAUNCH_THREADS, s,
            r->op, slots[r->b].dtype, SLOT_PTR(r->a), SLOT_PTR(r->b), slots[r->b].count,
            SLOT_PTR(r->c), slots[r->c].count, sa->count);
        break;
    case REC_REDUCE:
        return launch_reduce(env, r->op, slots[r->b].dtype, SLOT_PTR(r->b), NULL, slots[r->b].count,
                             SLOT_PTR(r->a), s, err, errlen);
    case REC_DOT:
        return launch_reduce(env, OP_DOT, slots[r->b].dtype, SLOT_PTR(r->b), SLOT_PTR(r->c),
                             slots[r->b].count, SLOT_PTR(r->a), s, err, errlen);
    case REC_MATMUL: { /* a batch: one strided batched product (rec_matmul) */
        rec_mm g = rec_matmul(slots, r);
        return blas_matmul_batch(env->blas, s, slots[r->b].dtype, SLOT_PTR(r->a), SLOT_PTR(r->b), SLOT_PTR(r->c),
                                 g.batch, g.m, g.k, g.n, g.sb, g.sc, err, errlen);
    }
    case REC_TRANSPOSE: {
        const cfx_slot *sb = &slots[r->b];
        LAUNCH(launch_transpose_kernel, launch_grid(sa->count), LAUNCH_THREADS, s,
            sb->dtype, SLOT_PTR(r->a), SLOT_PTR(r->b), sb->dims[0], sb->dims[1]);
        break;
    }
    case REC_FILL:
        LAUNCH(launch_fill_kernel, launch_grid(sa->count), LAUNCH_THREADS, s, sa->dtype, SLOT_PTR(r->a),
               SLOT_PTR(r->b), sa->count);
        break;
    case REC_IOTA:
        LAUNCH(launch_iota_kernel, launch_grid(sa->count), LAUNCH_THREADS, s, sa->dtype, SLOT_PTR(r->a),
               sa->count);
        break;
    case REC_COPY: {
        int64_t bytes = slot_bytes(sa);
        LAUNCH(launch_copy_kernel, launch_grid((bytes + 15) / 16), LAUNCH_THREADS, s,
            SLOT_PTR(r->a), SLOT_PTR(r->b), bytes);
        break;
    }
    case REC_CAST:
        LAUNCH(launch_cast_kernel, launch_grid(sa->count), LAUNCH_THREADS, s,
            sa->dtype, SLOT_PTR(r->a), slots[r->b].dtype, SLOT_PTR(r->b), sa->count);
        break;
    case REC_WHERE:
        LAUNCH(launch_where_kernel, launch_grid(sa->count), LAUNCH_THREADS, s,
            sa->dtype, SLOT_PTR(r->a), (const uint8_t *)SLOT_PTR(r->b), slots[r->b].count,
            SLOT_PTR(r->c), slots[r->c].count, SLOT_PTR(r->d), slots[r->d].count, sa->count);
        break;
    case REC_GET_ROW: {
        /* slot a = row (slot c) of slot b */
        const cfx_slot *sb = &slots[r->b];
        int64_t row_bytes = slot_bytes(sa);
        LAUNCH(launch_get_row_kernel, launch_grid((row_bytes + 15) / 16), LAUNCH_THREADS, s,
            SLOT_PTR(r->a), (const uint8_t *)SLOT_PTR(r->b), SLOT_PTR(r->c), slots[r->c].dtype,
            sb->dims[0], row_bytes);
        break;
    }
    case REC_SET_ROW: {
        /* row (slot b) of slot a = slot c */
        int64_t row_bytes = slot_bytes(&slots[r->c]);
        LAUNCH(launch_set_row_kernel, launch_grid((row_bytes + 15) / 16), LAUNCH_THREADS, s,
            (uint8_t *)SLOT_PTR(r->a), SLOT_PTR(r->b), slots[r->b].dtype, sa->dims[0], row_bytes,
            SLOT_PTR(r->c));
        break;
    }
    case REC_GET_BOX:
    case REC_SET_BOX: {
        int get = r->kind == REC_GET_BOX;
        launch_box lb;
        memset(&lb, 0, sizeof lb);
        lb.tensor = slots[get ? r->b : r->a];
        for (int d = 0; d < lb.tensor.rank; d++) {
            int32_t st = env->prog->table[r->c + 2 * d];
            lb.entries[2 * d] = st;
            lb.entries[2 * d + 1] = env->prog->table[r->c + 2 * d + 1];
            lb.start[d] = st >= 0 ? (const void *)SLOT_PTR(st) : NULL;
            lb.dtype[d] = st >= 0 ? slots[st].dtype : 0;
        }
        int64_t n = slots[get ? r->a : r->b].count;
        LAUNCH(launch_box_kernel, launch_grid(n), LAUNCH_THREADS, s, !get, SLOT_PTR(r->a), SLOT_PTR(r->b), lb, n);
        break;
    }
    case REC_BROADCAST:
        LAUNCH(launch_broadcast_kernel, launch_grid(sa->count), LAUNCH_THREADS, s,
            dtype_size(sa->dtype), SLOT_PTR(r->a), SLOT_PTR(r->b), rec_bshape(sa, &slots[r->b]), sa->count);
        break;
    case REC_GATHER: {
        int64_t m, rows, inner;
        rec_gather(slots, r, &m, &rows, &inner);
        LAUNCH(launch_gather_kernel, launch_grid(sa->count), LAUNCH_THREADS, s,
            dtype_size(sa->dtype), SLOT_PTR(r->a), SLOT_PTR(r->b), slots[r->c].dtype, SLOT_PTR(r->c), m, rows,
            inner, sa->count);
        break;
    }
    case REC_PERMUTE:
        LAUNCH(launch_permute_kernel, launch_grid(sa->count), LAUNCH_THREADS, s,
            dtype_size(sa->dtype), SLOT_PTR(r->a), SLOT_PTR(r->b), rec_pshape(slots, r), sa->count);
        break;
    case REC_REDUCE_AXIS: {
        int64_t len, inner;
        rec_reduce_axis(slots, r, &len, &inner);
        LAUNCH(launch_reduce_axis_kernel, launch_grid(sa->count), LAUNCH_THREADS, s,
            r->op, r->dtype, SLOT_PTR(r->a), SLOT_PTR(r->b), len, inner, sa->count);
        break;
    }
    case REC_GET_ITEM: {
        /* slot a = item (slot c) of list slot b, length slot d */
        int64_t item_bytes = slot_bytes(sa);
        LAUNCH(launch_get_item_kernel, launch_grid((item_bytes + 15) / 16), LAUNCH_THREADS, s,
            SLOT_PTR(r->a), (const uint8_t *)SLOT_PTR(r->b), slots[r->b].dims[0], SLOT_PTR(r->c),
            slots[r->c].dtype, SLOT_PTR(r->d), slots[r->d].dtype, item_bytes);
        break;
    }
    case REC_SET_ITEM: {
        /* item (slot b) of list slot a, length slot d = slot c */
        int64_t item_bytes = slot_bytes(&slots[r->c]);
        LAUNCH(launch_set_item_kernel, launch_grid((item_bytes + 15) / 16), LAUNCH_THREADS, s,
            (uint8_t *)SLOT_PTR(r->a), sa->dims[0], SLOT_PTR(r->b), slots[r->b].dtype, SLOT_PTR(r->d),
            slots[r->d].dtype, item_bytes, SLOT_PTR(r->c));
        break;
    }
    case REC_HALT:
    case REC_JUMP:
    case REC_JUMP_FALSE:
    case REC_JUMP_TRUE:
    case REC_SWITCH:
    case REC_TICK:
    case REC_ASSERT:
    case REC_PRINT:
    case REC_CHECK_INDEX:
    case REC_CHECK_DIVIDE:
    case REC_CHECK_STEP:
    case REC_CALL:
    case REC_CHECK_BOUND:
        snprintf(err, errlen, "launch_record: record kind %s is not an op", rec_names[r->kind]);
        return -1;
    }
#undef SLOT_PTR
    CUDA_LAUNCHED();
    return 0;
fail:
    return -1;
}

#endif
