/* persistent_kernel.cuh: the cuda-persistent executor's device side, the record dispatch loop
 * that one launch runs: the private copies, the block reduction, the tiled matmul, the
 * elementwise family and persist_kernel itself, with the sizes, buffers and argument struct
 * it shares with the host side. The grid barrier and the status and cancel polls are
 * grid_barrier.cuh's. Read persistent.cu's top comment first for the executor as a whole;
 * persistent.cu is the host side and the only file that includes this one.
 *
 * MATMUL runs inline, tiled through shared memory, with each block taking a share of the
 * output tiles. Not cuBLAS: its device-side API is gone (CUDA 10 removed it), and a host
 * call would end the launch like a CALL; the products cfx's graphs carry inside loops are
 * moderate, where the inline tile loop beats a launch.
 */
#ifndef CFX_PERSISTENT_KERNEL_CUH
#define CFX_PERSISTENT_KERNEL_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "dev.h"
#include "grid_barrier.cuh"
#include "kernels.h"
#include "program.h"
#include "scheduler.h"

/* ==== shared with the host side ============================================================ */

#define P_SHARED_PRIV_MAX 32768         /* private copies above this go to global memory */
#define P_PRINT_BYTES (1u << 20)        /* print buffer, grown for one big printed value */
#define P_TRACE_PER_BLOCK 8192          /* trace events kept per block and run */
#define P_STATUS_PAUSE SCHED_STATUS_PAUSE /* the launch ended at a CALL or a full print buffer */

static_assert(P_THREADS == SCHED_TILE * SCHED_TILE, "a matmul tile is one element per thread");
static_assert((P_THREADS & (P_THREADS - 1)) == 0, "block_reduce halves blockDim: a power of two");

/* Device memory the blocks share besides the program's own. */
typedef struct persist_sync {
    persist_bar bar;               /* the grid barrier */
    int32_t resume_pc;             /* after a pause: the record it ended at */
    int32_t resume_region;         /* and the region block 0 was in, or -1 */
    uint32_t print_used;           /* bytes of print entries, written by block 0 at the end */
    uint32_t pub_print[2];         /* block 0's print_used beside its published copies */
    uint32_t pad_;
    unsigned long long pub_iters[2]; /* block 0's iteration count beside them */
} persist_sync;

/* One trace event: a record executed by a block, in global-timer nanoseconds. */
typedef struct persist_event {
    int32_t record;
    int32_t pad_;
    unsigned long long t0, t1;
} persist_event;

/* A print entry in the device buffer: this header, then the slot's bytes padded to 8. */
typedef struct persist_print {
    int32_t record;
    int32_t bytes;
} persist_print;

typedef struct persist_args {
    const cfx_record *records;
    const cfx_slot *slots;
    const int32_t *table;
    uint8_t *arena;
    const uint8_t *flags;
    const int32_t *region_exit;
    const int32_t *priv_offset;
    int32_t nslots;
    int32_t priv_bytes;
    int priv_shared;             /* 1: private copies in dynamic shared memory */
    uint8_t *priv_global;        /* else nblocks * priv_bytes here */
    uint8_t *publish;            /* 2 * priv_bytes */
    k_acc *partials;             /* 2 * nblocks */
    dev_state *state;
    const dev_control *control;  /* host-mapped */
    persist_sync *sync;
    uint8_t *print_buf;
    uint32_t print_cap;
    persist_event *trace;        /* NULL: no trace */
    uint32_t trace_cap;          /* events per block */
    uint32_t *trace_count;       /* per block: events seen (kept or not) */
    int32_t start_pc;
    int32_t start_region;
    int64_t max_iters;
} persist_args;

/* ==== device side ========================================================================== */

/* Thread 0 only: persist_claim_stop, and a pause's resume point beside it. */
__device__ void raise_stop(const persist_args &a, int32_t status, int32_t pc, int64_t d0,
                           int64_t d1, int32_t region)
{
    if (persist_claim_stop(a.state, status, pc, d0, d1)) {
        if (status == P_STATUS_PAUSE) {
            a.sync->resume_pc = pc;
            a.sync->resume_region = region;
        }
        __threadfence();
    }
}

__device__ __forceinline__ void poll_cancel(const persist_args &a, unsigned long long *last, int32_t pc)
{
    persist_poll_cancel(a.state, a.control, last, pc);
}

__device__ __forceinline__ int grid_barrier(const persist_args &a, unsigned long long *last_poll, int32_t pc)
{
    return persist_grid_barrier(&a.sync->bar, a.state, a.control, last_poll, pc);
}

__device__ __forceinline__ uint8_t *slot_ptr(const persist_args &a, uint8_t *priv, int32_t s)
{
    int32_t off = a.priv_offset[s];
    return off >= 0 ? priv + off : a.arena + a.slots[s].offset;
}

/* Private copies from or to their arena slots (all threads of the block). */
__device__ void load_private(const persist_args &a, uint8_t *priv)
{
    for (int32_t s = threadIdx.x; s < a.nslots; s += blockDim.x) {
        int32_t off = a.priv_offset[s];
        if (off < 0)
            continue;
        const uint8_t *src = a.arena + a.slots[s].offset;
        int64_t n = slot_bytes(&a.slots[s]);
        for (int64_t i = 0; i < n; i++)
            priv[off + i] = src[i];
    }
}

__device__ void store_private(const persist_args &a, const uint8_t *priv)
{
    for (int32_t s = threadIdx.x; s < a.nslots; s += blockDim.x) {
        int32_t off = a.priv_offset[s];
        if (off < 0)
            continue;
        uint8_t *dst = a.arena + a.slots[s].offset;
        int64_t n = slot_bytes(&a.slots[s]);
        for (int64_t i = 0; i < n; i++)
            dst[i] = priv[off + i];
    }
}

/* Merges every thread's accumulator in a fixed tree: the same bits in every block. */
__device__ k_acc block_reduce(k_acc *red, k_acc mine, int op, int dtype)
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

/* One shared-memory cell of a matmul tile: reals as double, integers as int64, as
 * k_matmul accumulates them. */
typedef union tile_cell {
    double r;
    int64_t i;
} tile_cell;

/* Output tiles [lo, hi) of dst[m,n] = a[m,k] @ b[k,n], one element per thread. The sum runs
 * over k in order with unfused multiply and add, as k_matmul does on the CPU. */
__device__ void matmul_tiles(int dtype, uint8_t *dst, const uint8_t *a, const uint8_t *b,
                             int64_t m, int64_t k, int64_t n, int64_t lo, int64_t hi)
{
    __shared__ tile_cell ta[SCHED_TILE][SCHED_TILE + 1];
    __shared__ tile_cell tb[SCHED_TILE][SCHED_TILE + 1];
    const int ty = threadIdx.x / SCHED_TILE, tx = threadIdx.x % SCHED_TILE;
    const int real = dtype == K_F32 || dtype == K_F64;
    const int64_t tiles_n = (n + SCHED_TILE - 1) / SCHED_TILE;
    for (int64_t t = lo; t < hi; t++) {
        int64_t row = (t / tiles_n) * SCHED_TILE + ty, col = (t % tiles_n) * SCHED_TILE + tx;
        double accr = 0.0;
        uint64_t acci = 0;
        for (int64_t k0 = 0; k0 < k; k0 += SCHED_TILE) {
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
            int64_t kn = k - k0 < SCHED_TILE ? k - k0 : SCHED_TILE;
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

/* The elementwise family over output elements [lo, hi), strided over the block's threads.
 * A redundant record (private output, one element) has lo = 0, hi = 1: thread 0 does it. */
__device__ void run_elementwise(const persist_args &a, uint8_t *priv, const cfx_record &r,
                                int64_t lo, int64_t hi)
{
    const cfx_slot *sl = a.slots;
    const int64_t T = blockDim.x;
    uint8_t *A = slot_ptr(a, priv, r.a);
    int64_t e = lo + threadIdx.x;
    switch (r.kind) {
    case REC_UNARY: {
        const uint8_t *B = slot_ptr(a, priv, r.b);
        for (; e < hi; e += T)
            k_unary(r.op, sl[r.b].dtype, A, B, e, e + 1);
        break;
    }
    case REC_BINARY: {
        const uint8_t *B = slot_ptr(a, priv, r.b), *C = slot_ptr(a, priv, r.c);
        for (; e < hi; e += T)
            k_binary(r.op, sl[r.b].dtype, A, B, sl[r.b].count, C, sl[r.c].count, e, e + 1);
        break;
    }
    case REC_FILL: {
        const uint8_t *B = slot_ptr(a, priv, r.b);
        for (; e < hi; e += T)
            k_fill(sl[r.a].dtype, A, B, e, e + 1);
        break;
    }
    case REC_IOTA:
        for (; e < hi; e += T)
            k_iota(sl[r.a].dtype, A, e, e + 1);
        break;
    case REC_COPY: {
        const uint8_t *B = slot_ptr(a, priv, r.b);
        int64_t size = dtype_size(sl[r.a].dtype);
        for (; e < hi; e += T)
            k_copy_bytes(A, B, e * size, (e + 1) * size);
        break;
    }
    case REC_CAST: {
        const uint8_t *B = slot_ptr(a, priv, r.b);
        for (; e < hi; e += T)
            k_cast(sl[r.a].dtype, A, sl[r.b].dtype, B, e, e + 1);
        break;
    }
    case REC_WHERE: {
        const uint8_t *B = slot_ptr(a, priv, r.b), *C = slot_ptr(a, priv, r.c);
        const uint8_t *D = slot_ptr(a, priv, r.d);
        for (; e < hi; e += T)
            k_where(sl[r.a].dtype, A, B, sl[r.b].count, C, sl[r.c].count, D, sl[r.d].count, e, e + 1);
        break;
    }
    case REC_TRANSPOSE: {
        const uint8_t *B = slot_ptr(a, priv, r.b);
        for (; e < hi; e += T)
            k_transpose(sl[r.a].dtype, A, B, sl[r.b].dims[0], sl[r.b].dims[1], e, e + 1);
        break;
    }
    case REC_GET_ROW: {
        int64_t size = dtype_size(sl[r.a].dtype);
        int64_t row = k_row_index(k_load_int(sl[r.c].dtype, slot_ptr(a, priv, r.c)), sl[r.b].dims[0]);
        const uint8_t *B = slot_ptr(a, priv, r.b) + row * sl[r.a].count * size;
        for (; e < hi; e += T)
            k_copy_bytes(A, B, e * size, (e + 1) * size);
        break;
    }
    case REC_SET_ROW: {
        int64_t size = dtype_size(sl[r.a].dtype);
        int64_t len = sl[r.a].count / sl[r.a].dims[0];
        int64_t row = k_row_index(k_load_int(sl[r.b].dtype, slot_ptr(a, priv, r.b)), sl[r.a].dims[0]);
        const uint8_t *C = slot_ptr(a, priv, r.c);
        for (; e < hi; e += T)
            k_copy_bytes(A + row * len * size, C, e * size, (e + 1) * size);
        break;
    }
    case REC_BROADCAST: {
        const uint8_t *B = slot_ptr(a, priv, r.b);
        k_bshape sh = rec_bshape(&sl[r.a], &sl[r.b]);
        for (; e < hi; e += T)
            k_broadcast(dtype_size(sl[r.a].dtype), A, B, &sh, e, e + 1);
        break;
    }
    case REC_GET_ITEM: {
        int64_t size = dtype_size(sl[r.a].dtype);
        int64_t item = k_item_index(k_load_int(sl[r.c].dtype, slot_ptr(a, priv, r.c)),
                                    k_load_int(sl[r.d].dtype, slot_ptr(a, priv, r.d)), sl[r.b].dims[0]);
        const uint8_t *B = slot_ptr(a, priv, r.b) + item * sl[r.a].count * size;
        for (; e < hi; e += T)
            k_copy_bytes(A, B, e * size, (e + 1) * size);
        break;
    }
    case REC_SET_ITEM: {
        int64_t size = dtype_size(sl[r.a].dtype);
        int64_t item = k_item_index(k_load_int(sl[r.b].dtype, slot_ptr(a, priv, r.b)),
                                    k_load_int(sl[r.d].dtype, slot_ptr(a, priv, r.d)), sl[r.a].dims[0]);
        const uint8_t *C = slot_ptr(a, priv, r.c);
        for (; e < hi; e += T)
            k_copy_bytes(A + item * sl[r.c].count * size, C, e * size, (e + 1) * size);
        break;
    }
    default:
        break;
    }
}

/* The dispatch loop: every block walks the records from a.start_pc to HALT, a stop or a
 * pause. Every decision below is the same in all threads of a block (they read the same
 * private copies after a __syncthreads), so the barriers inside are never divergent. */
__global__ void __launch_bounds__(P_THREADS, P_MAX_BLOCKS_PER_SM) persist_kernel(const persist_args a)
{
    extern __shared__ __align__(16) uint8_t smem_priv[];
    __shared__ k_acc red[P_THREADS];
    __shared__ int s_flag;

    const int tid = threadIdx.x;
    const int32_t block = blockIdx.x, nblocks = gridDim.x;
    uint8_t *priv = a.priv_shared ? smem_priv : a.priv_global + (size_t)block * a.priv_bytes;
    uint64_t iters = a.state->iterations;
    uint32_t print_used = a.sync->print_used;
    uint32_t ntrace = a.trace ? a.trace_count[block] : 0;
    unsigned long long last_poll = 0;
    sched_cursor c;

    load_private(a, priv);
    /* Block 0 writes its copies back to the arena at HALT or a pause; without this barrier
     * a block that starts late could load a copy block 0 has already changed (the replica
     * in test_sched found this under TSan). One barrier per launch. */
    if (grid_barrier(a, &last_poll, a.start_pc))
        goto out;
    sched_cursor_init(&c, a.start_pc, block, nblocks);
    if (a.start_region >= 0) {
        /* resuming inside a one-block region: block 0 goes on in it, the others wait at
         * its exit as they did before the pause */
        if (block == 0)
            c.region = a.start_region;
        else
            c.pc = a.region_exit[a.start_region];
    }

    for (;;) {
        const unsigned act = sched_arrive(a.flags, a.region_exit, &c);
        if ((act & SCHED_DO_PUBLISH) && block == 0) {
            uint8_t *pub = a.publish + (size_t)(c.exits & 1) * a.priv_bytes;
            for (int32_t i = tid; i < a.priv_bytes; i += blockDim.x)
                pub[i] = priv[i];
            if (tid == 0) {
                a.sync->pub_print[c.exits & 1] = print_used;
                a.sync->pub_iters[c.exits & 1] = iters;
            }
        }
        if (act & SCHED_DO_BARRIER) {
            if (grid_barrier(a, &last_poll, c.pc))
                goto out;
        }
        if (act & SCHED_DO_RELOAD) {
            if (block != 0) {
                const uint8_t *pub = a.publish + (size_t)(c.exits & 1) * a.priv_bytes;
                for (int32_t i = tid; i < a.priv_bytes; i += blockDim.x)
                    priv[i] = pub[i];
                print_used = *(volatile uint32_t *)&a.sync->pub_print[c.exits & 1];
                iters = *(volatile unsigned long long *)&a.sync->pub_iters[c.exits & 1];
            }
            c.exits++;
            __syncthreads();
        }
        if (act & SCHED_DO_SKIP)
            continue;

        const int32_t pc = c.pc;
        const cfx_record r = a.records[pc];
        const unsigned f = a.flags[pc];
        const int32_t sb = sched_block(&c), sn = sched_nblocks(&c);
        const unsigned long long t0 = a.trace && tid == 0 ? persist_now_ns() : 0;
        int32_t next = pc + 1;

        switch (r.kind) {
        case REC_HALT:
            if (block == 0)
                store_private(a, priv);
            goto out;
        case REC_JUMP:
            next = r.a;
            break;
        case REC_JUMP_FALSE:
        case REC_JUMP_TRUE:
        case REC_SWITCH: {
            int64_t v = k_load_int(a.slots[r.a].dtype, slot_ptr(a, priv, r.a));
            next = sched_next_pc(&r, pc, a.table, v);
            break;
        }
        case REC_TICK:
            if (tid == 0) {
                int stopped = 0;
                unsigned long long t = persist_now_ns();
                if (t - last_poll >= P_POLL_NS) {
                    if (block == 0)
                        poll_cancel(a, &last_poll, pc);
                    last_poll = t;
                    /* a pause is no reason to leave here: sched_leave_at_tick */
                    stopped = sched_leave_at_tick(persist_load_status(a.state));
                }
                s_flag = stopped;
            }
            __syncthreads();
            if (s_flag)
                goto out;
            if (sched_tick(&iters, a.max_iters)) {
                if (tid == 0)
                    raise_stop(a, CFX_STOP_LIMIT, pc, a.max_iters, 0, -1);
                goto out;
            }
            break;
        case REC_ASSERT:
            if (!k_load_int(a.slots[r.a].dtype, slot_ptr(a, priv, r.a))) {
                if (tid == 0)
                    raise_stop(a, CFX_STOP_ASSERT, pc, 0, 0, -1);
                goto out;
            }
            break;
        case REC_CHECK_INDEX: {
            int64_t v = k_load_int(a.slots[r.a].dtype, slot_ptr(a, priv, r.a));
            if (v < -(int64_t)r.b || v >= (int64_t)r.b) {
                if (tid == 0)
                    raise_stop(a, CFX_STOP_INDEX, pc, v, r.b, -1);
                goto out;
            }
            break;
        }
        case REC_CHECK_BOUND: {
            int64_t va = k_load_int(a.slots[r.a].dtype, slot_ptr(a, priv, r.a));
            int64_t vb = k_load_int(a.slots[r.b].dtype, slot_ptr(a, priv, r.b));
            if (!k_bound_ok(r.d, va, vb)) {
                if (tid == 0)
                    raise_stop(a, CFX_STOP_INDEX, pc, va, vb, -1);
                goto out;
            }
            break;
        }
        case REC_CHECK_STEP:
            if (k_load_int(a.slots[r.a].dtype, slot_ptr(a, priv, r.a)) == 0) {
                if (tid == 0)
                    raise_stop(a, CFX_STOP_VALUE, pc, 0, 0, -1);
                goto out;
            }
            break;
        case REC_CHECK_DIVIDE: {
            /* every block checks every element, so every block stops here or none does */
            const cfx_slot *s = &a.slots[r.a];
            const uint8_t *p = slot_ptr(a, priv, r.a);
            int zero = 0;
            for (int64_t e = tid; e < s->count; e += blockDim.x)
                zero |= k_get_int(s->dtype, p, e) == 0;
            if (__syncthreads_or(zero)) {
                if (tid == 0)
                    raise_stop(a, CFX_STOP_DIVIDE, pc, 0, 0, -1);
                goto out;
            }
            break;
        }
        case REC_PRINT: {
            const cfx_slot *s = &a.slots[r.a];
            uint32_t bytes = (uint32_t)slot_bytes(s);
            uint32_t need = (uint32_t)sizeof(persist_print) + (bytes + 7u) / 8u * 8u;
            if (print_used + need > a.print_cap) {
                /* full: every block that walks this record ends here; the host hands the
                 * lines out and launches again at this PRINT */
                if (block == 0)
                    store_private(a, priv);
                __syncthreads();
                if (tid == 0)
                    raise_stop(a, P_STATUS_PAUSE, pc, 0, 0, c.region);
                goto out;
            }
            if (block == 0) {
                uint8_t *entry = a.print_buf + print_used;
                const uint8_t *src = slot_ptr(a, priv, r.a);
                if (tid == 0) {
                    persist_print h = {pc, (int32_t)bytes};
                    memcpy(entry, &h, sizeof h);
                }
                for (uint32_t i = tid; i < bytes; i += blockDim.x)
                    entry[sizeof(persist_print) + i] = src[i];
            }
            print_used += need;
            break;
        }
        case REC_CALL:
            /* never inside a region (scheduler.h): every block ends here, the host runs it */
            if (block == 0)
                store_private(a, priv);
            __syncthreads();
            if (tid == 0)
                raise_stop(a, P_STATUS_PAUSE, pc, 0, 0, -1);
            goto out;
        case REC_REDUCE:
        case REC_DOT: {
            const cfx_slot *sl = a.slots;
            const int dt = sl[r.b].dtype;
            const int op = r.kind == REC_DOT ? (int)OP_SUM : (int)r.op;
            const int combine = (f & SCHED_F_COMBINE) && c.region < 0;
            const uint8_t *B = slot_ptr(a, priv, r.b);
            const uint8_t *C = r.kind == REC_DOT ? slot_ptr(a, priv, r.c) : NULL;
            int64_t lo = 0, hi = sl[r.b].count;
            if (combine)
                sched_share(sl[r.b].count, sb, sn, &lo, &hi);
            k_acc acc = k_reduce_init(op, dt);
            for (int64_t e = lo + tid; e < hi; e += blockDim.x) {
                if (r.kind == REC_DOT)
                    k_dot_range(dt, &acc, B, C, e, e + 1);
                else
                    k_reduce_range(op, dt, &acc, B, e, e + 1);
            }
            acc = block_reduce(red, acc, op, dt);
            if (combine) {
                k_acc *part = a.partials + (size_t)(c.combines & 1) * nblocks;
                if (tid == 0)
                    part[block] = acc;
                if (grid_barrier(a, &last_poll, pc))
                    goto out;
                /* every block merges all partials in the same order */
                acc = k_reduce_init(op, dt);
                for (int32_t b = tid; b < nblocks; b += blockDim.x)
                    k_reduce_merge(op, dt, &acc, &part[b]);
                acc = block_reduce(red, acc, op, dt);
                c.combines++;
            }
            if (tid == 0) {
                uint8_t *A = slot_ptr(a, priv, r.a);
                if (r.kind == REC_DOT)
                    k_dot_finish(dt, &acc, A);
                else
                    k_reduce_finish(op, dt, &acc, sl[r.b].count, A);
            }
            break;
        }
        case REC_MATMUL: {
            const cfx_slot *sl = a.slots;
            int64_t m = sl[r.b].dims[0], k = sl[r.b].dims[1];
            int64_t n = sl[r.c].rank == 2 ? sl[r.c].dims[1] : 1;
            uint8_t *A = slot_ptr(a, priv, r.a);
            const uint8_t *B = slot_ptr(a, priv, r.b), *C = slot_ptr(a, priv, r.c);
            if (f & SCHED_F_SPLIT) {
                int64_t lo, hi;
                sched_share(sched_domain(&r, sl), sb, sn, &lo, &hi);
                matmul_tiles(sl[r.a].dtype, A, B, C, m, k, n, lo, hi);
            } else if (tid == 0) {
                k_matmul(sl[r.a].dtype, A, B, C, m, k, n, 0, sl[r.a].count);
            }
            break;
        }
        default: {
            /* the elementwise family, split or redundant */
            int64_t dom = sched_domain(&r, a.slots), lo = 0, hi = dom;
            if (f & SCHED_F_SPLIT)
                sched_share(dom, sb, sn, &lo, &hi);
            run_elementwise(a, priv, r, lo, hi);
            break;
        }
        }
        __syncthreads();
        if (a.trace && tid == 0) {
            if (ntrace < a.trace_cap) {
                persist_event *ev = &a.trace[(size_t)block * a.trace_cap + ntrace];
                ev->record = pc;
                ev->t0 = t0;
                ev->t1 = persist_now_ns();
            }
            ntrace++;
        }
        c.pc = next;
    }
out:
    if (tid == 0) {
        atomicMax(&a.state->iterations, (unsigned long long)iters);
        if (block == 0)
            a.sync->print_used = print_used;
        if (a.trace)
            a.trace_count[block] = ntrace;
    }
}

/* After a pause: running again. */
__global__ void persist_resume(dev_state *s)
{
    s->status = CFX_OK;
    s->record = -1;
}

#endif
