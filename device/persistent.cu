/* persistent.cu: the cuda-persistent executor, the point of cfx. One kernel launch walks the
 * program's records on the device; no predicate goes back to the host.
 *
 * The grid is as large as the device keeps resident at once (the occupancy API times the
 * multiprocessors), so every block is running and a grid barrier of our own can wait for
 * all of them. Every block walks every record with a `switch`, like the CPU executor; how
 * the work and the barriers are placed is device/scheduler.h's business (read its top comment
 * first): split records give each block a share of the elements and each thread a strided
 * part of that share, one-element records run redundantly in every block on private copies
 * (dynamic shared memory), small loops run on block 0 alone.
 *
 * Why our own barrier and not cooperative groups' grid.sync(): a cooperative launch forbids
 * device-side launches, and the design keeps those possible for large work. The barrier is
 * an arrival counter and a generation number with fences (scheduler.h explains when it is
 * passed); a block spinning in it also watches the run's status, so a block that stopped
 * the run never leaves the others waiting, and block 0 polls the host's cancel flag there
 * and at every TICK (rate-limited by the global timer), so a cancel lands within a
 * fraction of a millisecond even in a loop that never ends.
 *
 * Ending a launch early ("pause"): a CALL of an application kernel, and a PRINT when the
 * device's print buffer is full, set the status to an internal PAUSE value and end the
 * launch at that record, every block at the same place. The host then runs the kernel's
 * cuda_fn on the stream (or hands the printed lines to the print callback) and launches
 * again at the next record. So a graph without application kernels is one launch per run,
 * and a graph with them costs one host round trip per CALL executed; no printed line is
 * ever lost. An asynchronous run enqueues the first launch; cfx_wait finishes any pauses.
 *
 * MATMUL runs inline, tiled through shared memory, with each block taking a share of the
 * output tiles. Not cuBLAS: its device-side API is gone (CUDA 10 removed it), and a host
 * call would end the launch like a CALL; the products cfx's graphs carry inside loops are
 * moderate, where the inline tile loop beats a launch.
 *
 * Results are copied only when the run ends ok (dev_copy_results gates on the state).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dev.h"
#include "exec.h"
#include "kernels.h"
#include "nvtx.h"
#include "program.h"
#include "scheduler.h"

#define P_THREADS 256
#define P_MAX_BLOCKS_PER_SM 2           /* more blocks only make the barrier slower */
#define P_SHARED_PRIV_MAX 32768         /* private copies above this go to global memory */
/* Cancel and status polls at most this often: a read of host-mapped memory crosses PCIe
 * (about a microsecond), so polling at every TICK would slow a tight one-block loop by
 * half; every 100 us costs about 1% and still stops a run within a fraction of a ms. */
#define P_POLL_NS 100000ull
#define P_PRINT_BYTES (1u << 20)        /* print buffer, grown for one big printed value */
#define P_TRACE_PER_BLOCK 8192          /* trace events kept per block and run */
#define P_STATUS_PAUSE (-1)             /* the launch ended at a CALL or a full print buffer */

static_assert(P_THREADS == SCHED_TILE * SCHED_TILE, "a matmul tile is one element per thread");
static_assert((P_THREADS & (P_THREADS - 1)) == 0, "block_reduce halves blockDim: a power of two");

/* Device memory the blocks share besides the program's own. */
typedef struct persist_sync {
    unsigned int bar_count;        /* grid barrier: blocks arrived */
    unsigned int bar_gen;          /* grid barrier: generation, bumped by the last to arrive */
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

__device__ __forceinline__ unsigned long long now_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ int32_t load_status(const dev_state *s)
{
    return *(volatile const int32_t *)&s->status;
}

/* Thread 0 only. The first stop wins; later ones (the same stop raised by other blocks,
 * or anything after a cancel) change nothing. */
__device__ void raise_stop(const persist_args &a, int32_t status, int32_t pc, int64_t d0,
                           int64_t d1, int32_t region)
{
    if (atomicCAS((int *)&a.state->status, CFX_OK, status) == CFX_OK) {
        a.state->record = pc;
        a.state->detail[0] = d0;
        a.state->detail[1] = d1;
        if (status == P_STATUS_PAUSE) {
            a.sync->resume_pc = pc;
            a.sync->resume_region = region;
        }
        __threadfence();
    }
}

/* Thread 0 of block 0: the host's cancel flag, at most every P_POLL_NS. */
__device__ void poll_cancel(const persist_args &a, unsigned long long *last, int32_t pc)
{
    unsigned long long t = now_ns();
    if (t - *last < P_POLL_NS)
        return;
    *last = t;
    if (a.control->cancel)
        raise_stop(a, CFX_STOP_CANCELLED, pc, 0, 0, -1);
}

/* The grid barrier. Returns 1 (in every thread of the block) when the run was stopped while
 * waiting: the block must end. The fences make the writes of every block before the
 * barrier visible to every block after it (as cooperative groups' grid sync does). */
__device__ int grid_barrier(const persist_args &a, unsigned long long *last_poll, int32_t pc)
{
    __shared__ int s_stop;
    __syncthreads();
    if (threadIdx.x == 0) {
        persist_sync *s = a.sync;
        int stop = 0;
        unsigned int gen = *(volatile unsigned int *)&s->bar_gen;
        __threadfence();
        if (atomicAdd(&s->bar_count, 1u) == gridDim.x - 1) {
            atomicExch(&s->bar_count, 0u);
            __threadfence();
            atomicAdd(&s->bar_gen, 1u);
        } else {
            unsigned int spins = 0;
            while (*(volatile unsigned int *)&s->bar_gen == gen) {
                if (load_status(a.state) != CFX_OK) {
                    /* A stop seen while the generation still looked old may have been raised
                     * after this barrier completed (a block that passed it went on to a CALL
                     * or a full PRINT and paused). The two loads are unordered, so look at
                     * the generation again behind a fence: if the barrier did complete, pass
                     * it and end at the stopping record like every other block. Otherwise
                     * block 0 would leave without storing its private copies at a pause and
                     * the next launch would reload stale scalars. */
                    __threadfence();
                    stop = *(volatile unsigned int *)&s->bar_gen == gen;
                    break;
                }
                if (blockIdx.x == 0 && (++spins & 63u) == 0)
                    poll_cancel(a, last_poll, pc);
            }
        }
        __threadfence();
        s_stop = stop;
    }
    __syncthreads();
    return s_stop;
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
        const unsigned long long t0 = a.trace && tid == 0 ? now_ns() : 0;
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
                unsigned long long t = now_ns();
                if (t - last_poll >= P_POLL_NS) {
                    if (block == 0)
                        poll_cancel(a, &last_poll, pc);
                    last_poll = t;
                    stopped = load_status(a.state) != CFX_OK;
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
                ev->t1 = now_ns();
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

/* ==== host side ============================================================================ */

typedef struct persist {
    dev_prog d;
    sched_plan plan;
    cudaStream_t own;
    uint8_t *flags;             /* device copies of the plan */
    int32_t *region_exit;
    int32_t *priv_offset;
    uint8_t *priv_global;
    uint8_t *publish;
    k_acc *partials;
    persist_sync *sync;
    uint8_t *print_buf;
    uint8_t *print_host;        /* pinned */
    uint32_t print_cap;
    persist_event *trace;       /* allocated at the first traced run */
    uint32_t *trace_count;
    int nblocks;
    size_t smem;
    int cooperative;            /* the device supports cooperative launches */
    /* the run in flight */
    exec_run run;
    cudaStream_t stream;
    int in_flight;
    int paused;                 /* the run ended a launch early at least once */
    int forced;                 /* a CALL failed: the outcome is CFX_ERROR at forced_record */
    int32_t forced_record;
    exec_outcome out;
} persist;

static int persist_available(char *why, size_t len)
{
    return dev_available(why, len);
}

static void persist_destroy(void *self)
{
    persist *x = (persist *)self;
    if (!x)
        return;
    if (x->in_flight && x->stream)
        cudaStreamSynchronize(x->stream);
    dev_prog_free(&x->d);
    sched_plan_free(&x->plan);
    if (x->own) cudaStreamDestroy(x->own);
    if (x->flags) cudaFree(x->flags);
    if (x->region_exit) cudaFree(x->region_exit);
    if (x->priv_offset) cudaFree(x->priv_offset);
    if (x->priv_global) cudaFree(x->priv_global);
    if (x->publish) cudaFree(x->publish);
    if (x->partials) cudaFree(x->partials);
    if (x->sync) cudaFree(x->sync);
    if (x->print_buf) cudaFree(x->print_buf);
    if (x->print_host) cudaFreeHost(x->print_host);
    if (x->trace) cudaFree(x->trace);
    if (x->trace_count) cudaFree(x->trace_count);
    free(x);
}

static void *persist_create(const cfx_prog *prog, char *err, size_t errlen)
{
    persist *x = (persist *)calloc(1, sizeof *x);
    int per_sm = 0;
    size_t max_print = 0;
    size_t pub_bytes;
    if (!x) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    prof_push("upload");
    if (sched_plan_build(prog, &x->plan, err, errlen) != 0)
        goto fail;
    if (dev_prog_upload(&x->d, prog, err, errlen) != 0)
        goto fail;
    CUDA_TRY(cudaStreamCreateWithFlags(&x->own, cudaStreamNonBlocking));

    CUDA_TRY(cudaMalloc((void **)&x->flags, (size_t)prog->nrecords + 1));
    CUDA_TRY(cudaMemcpy(x->flags, x->plan.flags, (size_t)prog->nrecords, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMalloc((void **)&x->region_exit, sizeof(int32_t) * ((size_t)prog->nrecords + 1)));
    CUDA_TRY(cudaMemcpy(x->region_exit, x->plan.region_exit, sizeof(int32_t) * (size_t)prog->nrecords,
                        cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMalloc((void **)&x->priv_offset, sizeof(int32_t) * ((size_t)prog->nslots + 1)));
    if (prog->nslots > 0)
        CUDA_TRY(cudaMemcpy(x->priv_offset, x->plan.priv_offset, sizeof(int32_t) * (size_t)prog->nslots,
                            cudaMemcpyHostToDevice));

    /* The grid: as many blocks as stay resident together, so the barrier cannot wait for a
     * block that is not running. */
    x->smem = x->plan.priv_bytes <= P_SHARED_PRIV_MAX ? (size_t)x->plan.priv_bytes : 0;
    CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, persist_kernel, P_THREADS, x->smem));
    if (per_sm < 1) {
        snprintf(err, errlen, "the persistent kernel does not fit on a multiprocessor of this device");
        goto fail;
    }
    x->nblocks = x->d.sms * (per_sm < P_MAX_BLOCKS_PER_SM ? per_sm : P_MAX_BLOCKS_PER_SM);
    CUDA_TRY(cudaDeviceGetAttribute(&x->cooperative, cudaDevAttrCooperativeLaunch, x->d.device));
    if (x->smem == 0 && x->plan.priv_bytes > 0)
        CUDA_TRY(cudaMalloc((void **)&x->priv_global, (size_t)x->nblocks * (size_t)x->plan.priv_bytes));
    pub_bytes = 2 * (size_t)(x->plan.priv_bytes > 0 ? x->plan.priv_bytes : 16);
    CUDA_TRY(cudaMalloc((void **)&x->publish, pub_bytes));
    CUDA_TRY(cudaMalloc((void **)&x->partials, 2 * sizeof(k_acc) * (size_t)x->nblocks));
    CUDA_TRY(cudaMalloc((void **)&x->sync, sizeof(persist_sync)));

    /* The print buffer holds many lines, and always at least the biggest single one. */
    for (int32_t i = 0; i < prog->nrecords; i++)
        if (prog->records[i].kind == REC_PRINT) {
            size_t b = (size_t)slot_bytes(&prog->slots[prog->records[i].a]);
            max_print = b + 1 > max_print ? b + 1 : max_print;
        }
    if (max_print > 0) {
        size_t cap = 2 * (sizeof(persist_print) + (max_print + 7) / 8 * 8);
        if (cap > (size_t)UINT32_MAX / 2) {
            snprintf(err, errlen, "a printed value is too big for the persistent executor");
            goto fail;
        }
        x->print_cap = cap > P_PRINT_BYTES ? (uint32_t)cap : P_PRINT_BYTES;
    } else {
        x->print_cap = 16;
    }
    CUDA_TRY(cudaMalloc((void **)&x->print_buf, x->print_cap));
    CUDA_TRY(cudaHostAlloc((void **)&x->print_host, x->print_cap, cudaHostAllocDefault));
    /* The plan's cudaMemcpy calls above are from pageable memory: they may return before the
     * bytes reach the device, and they are ordered on the legacy default stream, which a
     * run on a non-blocking stream (our own, or an application's) does not wait for. */
    CUDA_TRY(cudaStreamSynchronize(0));
    prof_pop();
    return x;
fail:
    prof_pop();
    persist_destroy(x);
    return NULL;
}

static int launch(persist *x, int32_t pc, int32_t region, char *err, size_t errlen)
{
    persist_args a;
    memset(&a, 0, sizeof a);
    a.records = x->d.records;
    a.slots = x->d.slots;
    a.table = x->d.table;
    a.arena = x->d.arena;
    a.flags = x->flags;
    a.region_exit = x->region_exit;
    a.priv_offset = x->priv_offset;
    a.nslots = x->d.prog->nslots;
    a.priv_bytes = x->plan.priv_bytes;
    a.priv_shared = x->priv_global == NULL;
    a.priv_global = x->priv_global;
    a.publish = x->publish;
    a.partials = x->partials;
    a.state = x->d.state;
    a.control = x->d.control_dev;
    a.sync = x->sync;
    a.print_buf = x->print_buf;
    a.print_cap = x->print_cap;
    a.trace = x->run.trace ? x->trace : NULL;
    a.trace_cap = P_TRACE_PER_BLOCK;
    a.trace_count = x->trace_count;
    a.start_pc = pc;
    a.start_region = region;
    a.max_iters = x->run.max_iters;
    /* A cooperative launch makes the hardware start every block at once, so the grid barrier
     * never waits for a block that another application kernel keeps off the device. The
     * barrier itself stays ours (not grid.sync()): the kernel launches no child work today, and
     * if it ever does it must drop the cooperative launch, which forbids child launches, and
     * keep this barrier. A device without cooperative launches gets the ordinary launch, where
     * the occupancy-sized grid is resident as long as nothing else holds the multiprocessors. */
    if (x->cooperative) {
        void *params[] = {&a};
        CUDA_TRY(cudaLaunchCooperativeKernel((const void *)persist_kernel, dim3(x->nblocks), dim3(P_THREADS),
                                             params, x->smem, x->stream));
    } else {
        persist_kernel<<<x->nblocks, P_THREADS, x->smem, x->stream>>>(a);
        CUDA_LAUNCHED();
    }
    return 0;
fail:
    return -1;
}

/* Hands the print entries of the buffer to the callback, in program order. */
static int drain_prints(persist *x, uint32_t used, char *err, size_t errlen)
{
    if (used == 0)
        return 0;
    if (used > x->print_cap) {
        snprintf(err, errlen, "the device reported %u bytes of printed values in a %u-byte buffer",
                 used, x->print_cap);
        return -1;
    }
    CUDA_TRY(cudaMemcpyAsync(x->print_host, x->print_buf, used, cudaMemcpyDeviceToHost, x->stream));
    CUDA_TRY(cudaStreamSynchronize(x->stream));
    for (uint32_t off = 0; off + sizeof(persist_print) <= used;) {
        persist_print h;
        memcpy(&h, x->print_host + off, sizeof h);
        if (h.record < 0 || h.record >= x->d.prog->nrecords || h.bytes < 0) {
            snprintf(err, errlen, "a corrupt print entry at byte %u of the device's buffer", off);
            return -1;
        }
        if (x->run.print)
            x->run.print(x->run.print_user, x->d.prog, h.record, x->print_host + off + sizeof h);
        off += (uint32_t)sizeof h + ((uint32_t)h.bytes + 7u) / 8u * 8u;
    }
    return 0;
fail:
    return -1;
}

/* CALL on the run's stream (dev_call_kernel); no kernel or a failing one stops the run with
 * CFX_ERROR, as on the cpu executor. */
static int call_kernel(persist *x, const cfx_record *r, int *failed, char *err, size_t errlen)
{
    const exec_kernel *k = x->run.kernels ? &x->run.kernels[r->a] : NULL;
    return dev_call_kernel(&x->d, k, r, x->stream, failed, err, errlen);
}

/* Chrome trace of the run: one event per record per block (tid = block), like the cpu
 * executor's. */
static int write_trace(persist *x, char *err, size_t errlen)
{
    FILE *f = x->run.trace;
    const cfx_prog *p = x->d.prog;
    size_t nb = (size_t)x->nblocks;
    uint32_t *counts = (uint32_t *)malloc(sizeof(uint32_t) * nb);
    persist_event *ev = (persist_event *)malloc(sizeof(persist_event) * nb * P_TRACE_PER_BLOCK);
    unsigned long long base = ~0ull;
    long long kept = 0, dropped = 0;
    int first = 1;
    if (!counts || !ev) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    /* on the run's stream: a cudaMemcpy on the legacy default stream would also wait for
     * the application's other blocking streams */
    CUDA_TRY(cudaMemcpyAsync(counts, x->trace_count, sizeof(uint32_t) * nb, cudaMemcpyDeviceToHost,
                             x->stream));
    CUDA_TRY(cudaMemcpyAsync(ev, x->trace, sizeof(persist_event) * nb * P_TRACE_PER_BLOCK,
                             cudaMemcpyDeviceToHost, x->stream));
    CUDA_TRY(cudaStreamSynchronize(x->stream));
    for (size_t b = 0; b < nb; b++)
        for (uint32_t i = 0; i < counts[b] && i < P_TRACE_PER_BLOCK; i++)
            if (ev[b * P_TRACE_PER_BLOCK + i].t0 < base)
                base = ev[b * P_TRACE_PER_BLOCK + i].t0;
    fputs("{\"traceEvents\":[", f);
    for (size_t b = 0; b < nb; b++) {
        uint32_t n = counts[b] < P_TRACE_PER_BLOCK ? counts[b] : P_TRACE_PER_BLOCK;
        dropped += counts[b] - n;
        for (uint32_t i = 0; i < n; i++) {
            const persist_event *e = &ev[b * P_TRACE_PER_BLOCK + i];
            const cfx_record *r = &p->records[e->record];
            int has_op = r->kind == REC_UNARY || r->kind == REC_BINARY || r->kind == REC_REDUCE;
            fprintf(f, "%s\n{\"name\":\"%s%s%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":0,\"tid\":%d}",
                    first ? "" : ",", rec_names[r->kind], has_op ? " " : "",
                    has_op ? op_name(r->op) : "", (double)(e->t0 - base) / 1e3,
                    (double)(e->t1 - e->t0) / 1e3, (int)b);
            first = 0;
            kept++;
        }
    }
    fprintf(f,
            "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"executor\":\"cuda-persistent\",\"graph\":\"%s\","
            "\"events\":%lld,\"events_dropped\":%lld,\"event_cap\":%d,\"blocks\":%d}}\n",
            p->name ? p->name : "", kept, dropped, P_TRACE_PER_BLOCK, x->nblocks);
    fflush(f);
    free(counts);
    free(ev);
    return 0;
fail:
    free(counts);
    free(ev);
    return -1;
}

/* Waits for the launch in flight, serves its pauses (CALLs, full print buffer) with new
 * launches, copies the results and reads the outcome. */
static int finish(persist *x, char *err, size_t errlen)
{
    const cfx_prog *p = x->d.prog;
    dev_state st;
    persist_sync sy;
    for (;;) {
        if (dev_wait_stream(&x->d, x->stream, x->run.cancel, err, errlen) != 0)
            goto fail;
        /* on our stream, not the legacy default one, which would also wait for the
         * application's other streams */
        CUDA_TRY(cudaMemcpyAsync(&st, x->d.state, sizeof st, cudaMemcpyDeviceToHost, x->stream));
        CUDA_TRY(cudaMemcpyAsync(&sy, x->sync, sizeof sy, cudaMemcpyDeviceToHost, x->stream));
        CUDA_TRY(cudaStreamSynchronize(x->stream));
        if (drain_prints(x, sy.print_used, err, errlen) != 0)
            goto fail;
        if (st.status != P_STATUS_PAUSE)
            break;
        x->paused = 1;
        int32_t pc = sy.resume_pc, region = sy.resume_region;
        if (pc < 0 || pc >= p->nrecords) {
            snprintf(err, errlen, "the device paused at record %d, outside the program", (int)pc);
            goto fail;
        }
        if (p->records[pc].kind == REC_CALL) {
            int failed = 0;
            if (call_kernel(x, &p->records[pc], &failed, err, errlen) != 0)
                goto fail;
            if (failed) {
                x->forced = 1;
                x->forced_record = pc;
                break;
            }
            pc++;
        }
        /* a fresh barrier, an empty print buffer, the state running again */
        CUDA_TRY(cudaMemsetAsync(x->sync, 0, sizeof(persist_sync), x->stream));
        persist_resume<<<1, 1, 0, x->stream>>>(x->d.state);
        CUDA_LAUNCHED();
        if (launch(x, pc, region, err, errlen) != 0)
            goto fail;
    }
    if (!x->forced && st.status == CFX_OK) {
        /* device buffers: the copy enqueued after the first launch saw a pause, redo it */
        if (!x->run.device_buffers || x->paused)
            if (dev_copy_results(&x->d, &x->run, x->stream, err, errlen) != 0)
                goto fail;
    }
    CUDA_TRY(cudaStreamSynchronize(x->stream));
    if (dev_read_outcome(&x->d, &x->out, err, errlen) != 0)
        goto fail;
    if (x->forced) {
        x->out.status = CFX_ERROR;
        x->out.record = x->forced_record;
        x->out.detail[0] = x->out.detail[1] = 0;
    }
    if (x->run.trace && write_trace(x, err, errlen) != 0)
        goto fail;
    x->in_flight = 0;
    return 0;
fail:
    x->in_flight = 0;
    x->out.status = CFX_ERROR;
    return -1;
}

static int persist_run(void *self, const exec_run *run, int async, char *err, size_t errlen)
{
    persist *x = (persist *)self;
    if (x->in_flight) {
        snprintf(err, errlen, "a run of this executor is still in flight: wait for it first");
        return -1;
    }
    x->run = *run;
    x->stream = run->stream ? (cudaStream_t)run->stream : x->own;
    x->paused = 0;
    x->forced = 0;
    memset(&x->out, 0, sizeof x->out);
    x->out.record = -1;
    prof_push("run");
    if (run->trace && !x->trace) {
        CUDA_TRY(cudaMalloc((void **)&x->trace, sizeof(persist_event) * (size_t)x->nblocks * P_TRACE_PER_BLOCK));
        CUDA_TRY(cudaMalloc((void **)&x->trace_count, sizeof(uint32_t) * (size_t)x->nblocks));
    }
    if (run->trace)
        CUDA_TRY(cudaMemsetAsync(x->trace_count, 0, sizeof(uint32_t) * (size_t)x->nblocks, x->stream));
    CUDA_TRY(cudaMemsetAsync(x->sync, 0, sizeof(persist_sync), x->stream));
    if (dev_run_begin(&x->d, run, x->stream, err, errlen) != 0)
        goto fail;
    if (launch(x, 0, -1, err, errlen) != 0)
        goto fail;
    x->in_flight = 1;
    /* device buffers: the result copy follows the launch on the stream and gates itself on
     * the status, so an asynchronous run needs nothing from the host to deliver results */
    if (run->device_buffers && dev_copy_results(&x->d, run, x->stream, err, errlen) != 0)
        goto fail;
    prof_pop();
    if (!async)
        return finish(x, err, errlen);
    return 0;
fail:
    prof_pop();
    if (x->in_flight)
        cudaStreamSynchronize(x->stream);
    x->in_flight = 0;
    x->out.status = CFX_ERROR;
    return -1;
}

static int persist_wait(void *self, exec_outcome *out, char *err, size_t errlen)
{
    persist *x = (persist *)self;
    int rc = 0;
    if (x->in_flight)
        rc = finish(x, err, errlen);
    *out = x->out;
    return rc;
}

const exec_ops dev_persistent_ops = {
    CFX_BACKEND_CUDA_PERSISTENT, persist_available, persist_create, persist_run, persist_wait,
    persist_destroy,
};
