/* interp_kernel.cuh: the cuda-persistent executor's device side, the record dispatch loop
 * that one launch runs: the private copies, the block reduction, the matrix-vector rows and
 * the tiled matmul, the elementwise family, the print ring and persist_kernel itself, with
 * the sizes, buffers and argument struct it shares with the host side. The grid barrier and
 * the status and cancel polls are grid_barrier.cuh's. Read interp.cu's top comment
 * first for the executor as a whole.
 *
 * persist_kernel is a template on how a launch ends at a record that ends it (a CALL, a big
 * product: SCHED_F_LAUNCH). interp.cu instantiates persist_kernel<0>, the pause path:
 * the launch ends with the internal pause status and the host does the record's work.
 * interp_launch.cu instantiates persist_kernel<1>, device graph launch: block 0
 * tail-launches the record's pre-captured graph and then the kernel's own graph, which
 * starts again at the next record. The two live in separate files, so separate modules:
 * the device runtime call that <1> makes never keeps <0> from loading where device graph
 * launch is not available.
 *
 * One-block loops run as micro-ops (microops.h) where the executor translated them: at a
 * record where micro-ops start, thread 0 of block 0 dispatches them from shared memory while
 * the block's other warps wait at a named barrier, until they leave for the interpreter (a
 * record they do not cover, the region's exit), a print or a stop (run_microops).
 *
 * Products: a matrix-vector product runs inline, warps over the block's share of the rows
 * (kernels/block.cuh's k_matvec_rows); any other product below
 * SCHED_LAUNCH_PRODUCT_MIN runs inline, tiled through shared memory with each block taking
 * a share of the output tiles; a bigger real one is a cuBLAS graph launched between two
 * launches (cuBLAS has no device-side API since CUDA 10).
 */
#ifndef CFX_PERSISTENT_KERNEL_CUH
#define CFX_PERSISTENT_KERNEL_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "dev.h"
#include "grid_barrier.cuh"
#include "kernels/kernels.h"
#include "microops.h"
#include "host/program/program.h"
#include "scheduler.h"
#include "kernels/block.cuh"

/* ==== shared with the host side ============================================================ */

#define P_SHARED_PRIV_MAX 32768         /* private copies above this go to global memory */
#define P_PRINT_BYTES (1u << 20)        /* print ring, grown for one big printed value */
#define P_TRACE_PER_BLOCK 8192          /* trace events kept per block and run */
#define P_STATUS_PAUSE SCHED_STATUS_PAUSE /* pause path: the launch ended at a SCHED_F_LAUNCH record */

static_assert(P_THREADS == SCHED_TILE * SCHED_TILE, "a matmul tile is one element per thread");
static_assert(SCHED_TILE == K_TILE, "the plan splits products into the tiles k_matmul_tiles computes");
static_assert(P_SHARED_PRIV_MAX == MOP_SHARED_MAX, "the micro-ops share the private copies' shared memory");
static_assert(P_THREADS % 32 == 0 && P_THREADS <= 1024, "k_block_reduce merges whole warps, at most 32");

/* Device memory the blocks share besides the program's own. A run starts it with
 * persist_begin; the fields a launch starts from are read before its first barrier and
 * written for the next launch only after it. */
typedef struct persist_sync {
    persist_bar bar;               /* the grid barrier */
    int32_t start_pc;              /* where a launch starts: 0, a pause's record or the one after */
    int32_t start_region;          /* and the region block 0 goes on in, or -1 */
    int32_t resume_pc;             /* pause path: the record the launch ended at */
    int32_t resume_region;         /* and the region block 0 was in, or -1 */
    int64_t max_iters;             /* the run's budget, 0: none */
    unsigned long long print_head; /* bytes ever put in the print ring, block 0's at a launch's end */
    unsigned long long pub_iters[2]; /* block 0's iteration count beside its published copies */
} persist_sync;

/* The print ring's two counters, in host-mapped memory: the device puts entries and
 * advances head; the host takes them (while it waits for the run) and advances tail. Both
 * count bytes since the run began; an entry never wraps: where one would not fit before the
 * end, a header with record -1 fills the rest and the entry starts at offset 0. */
typedef struct persist_ring {
    volatile unsigned long long head;
    unsigned long long pad_[7];    /* head and tail on separate 64-byte lines */
    volatile unsigned long long tail;
} persist_ring;

/* One trace event: a record executed by a block, or the micro-ops that start at it, in
 * global-timer nanoseconds. */
enum { P_EV_RECORD, P_EV_MICROOPS };
typedef struct persist_event {
    int32_t record;
    int32_t what; /* P_EV_* */
    unsigned long long t0, t1;
} persist_event;

/* A print entry in the ring: this header, then the slot's bytes padded to 8. */
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
    const int32_t *replicas;     /* the plan's replicas (private tensors), nreplicas of them */
    const int32_t *batch_next;   /* the plan's batches of split reductions */
    const int32_t *batch_head;
    int32_t nreplicas;
    int32_t nslots;
    int32_t priv_bytes;
    int priv_shared;             /* 1: private copies in dynamic shared memory */
    uint8_t *priv_global;        /* else nblocks * priv_bytes here */
    uint8_t *publish;            /* 2 * priv_bytes */
    k_acc *partials;             /* 2 * SCHED_BATCH_MAX * nblocks */
    dev_state *state;
    const dev_control *control;  /* host-mapped */
    persist_sync *sync;
    persist_ring *ring;          /* host-mapped */
    uint8_t *ring_data;          /* host-mapped, ring_cap bytes */
    uint32_t ring_cap;           /* a multiple of 8 */
    cudaGraphExec_t *site_exec;  /* per record: its graph, for persist_kernel<1>; else NULL */
    const uint8_t *mop_image;    /* micro-ops (microops.h: the pool, then the code), NULL: none */
    int32_t mop_image_bytes;     /* a multiple of 16, copied after the private copies */
    int32_t mop_code_offset;     /* where the code starts in shared memory */
    const int32_t *mop_entry;    /* per record: its first micro-op, -1 */
    persist_event *trace;        /* NULL: no trace */
    uint32_t trace_cap;          /* events per block */
    uint32_t *trace_count;       /* per block: events seen (kept or not) */
    /* NULL, or a profile that block 0 adds every traced record to (it needs trace set): [0] its
     * first record's start, [1] its last record's end, then per record its count and its
     * nanoseconds, at [2 + 2 * pc] and [3 + 2 * pc]. Block 0 walks every record (the others
     * wait at one-block regions), so its counts are the run's, whatever the events' cap;
     * micro-ops count once at the record where they start, and their iterations at the
     * region's first TICK. */
    unsigned long long *prof;
    /* NULL, or per block its progress word in host-mapped memory, which the host reads while the
     * run goes on: a hang report (exec_format_hang) says from them where each block stood */
    exec_progress *progress;
} persist_args;

/* ==== device side ========================================================================== */

/* The block's dynamic shared memory: the private copies, then the micro-ops. On the host
 * (tests/cuda_host.h) the launcher gives each block a buffer. */
#ifdef CK_HOST_EMULATION
#define P_DYNAMIC_SMEM(name) uint8_t *const name = ck_host_smem
#else
#define P_DYNAMIC_SMEM(name) extern __shared__ __align__(16) uint8_t name[]
#endif

/* Thread 0 only: persist_claim_stop, and a pause's resume point beside it. */
static __device__ void raise_stop(const persist_args &a, int32_t status, int32_t pc, int64_t d0,
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

static __device__ __forceinline__ void poll_cancel(const persist_args &a, unsigned long long *last, int32_t pc)
{
    persist_poll_cancel(a.state, a.control, last, pc);
}

/* A test's debug hook before every grid barrier: nothing on a GPU; the stand-in can hold a
 * block back there, which is how a test plants a deadlock for the hang report. */
#ifndef P_BEFORE_BARRIER
#define P_BEFORE_BARRIER(block, pc) ((void)0)
#endif

/* The grid barrier; a block that waits there long says so in its progress word, so a hang
 * report can name the barrier and the blocks that never arrived. */
static __device__ __forceinline__ int grid_barrier(const persist_args &a, unsigned long long *last_poll, int32_t pc)
{
    P_BEFORE_BARRIER(blockIdx.x, pc);
    exec_progress *w = a.progress ? &a.progress[blockIdx.x] : NULL;
    return persist_grid_barrier(&a.sync->bar, a.state, a.control, last_poll, pc, w ? &w->record : NULL,
                                w ? &w->barrier : NULL);
}

/* Thread 0 of a block: the record it ran from t0 to now (what: P_EV_RECORD), or the micro-ops
 * that start at it (P_EV_MICROOPS), into its part of the trace buffer, and block 0 into the
 * profile; past the cap an event is only counted, so the host can say how many were dropped. */
static __device__ void trace_record(const persist_args &a, int32_t block, uint32_t *ntrace, int32_t pc,
                                    unsigned long long t0, int32_t what = P_EV_RECORD)
{
    const unsigned long long t1 = persist_now_ns();
    if (*ntrace < a.trace_cap) {
        persist_event *ev = &a.trace[(size_t)block * a.trace_cap + *ntrace];
        ev->record = pc;
        ev->what = what;
        ev->t0 = t0;
        ev->t1 = t1;
    }
    (*ntrace)++;
    if (a.prof && block == 0) {
        if (a.prof[0] == 0)
            a.prof[0] = t0;
        a.prof[1] = t1;
        a.prof[2 + 2 * (size_t)pc]++;
        a.prof[3 + 2 * (size_t)pc] += t1 - t0;
    }
}

/* Thread 0 at a TICK (REC_TICK, or a micro-op TICK whose clock is due): every P_POLL_NS it
 * looks at the run's status, block 0 first polling the host's cancel flag, and says where the
 * block stands in its progress word (`iters`: the iterations so far). 1: the block ends its
 * walk, which only a cancel makes it do (sched_status_ends_walk). */
static __device__ int tick_poll(const persist_args &a, int32_t block, unsigned long long *last_poll, int32_t pc,
                                unsigned long long iters)
{
    unsigned long long t = persist_now_ns();
    if (t - *last_poll < P_POLL_NS)
        return 0;
    if (a.progress) {
        a.progress[block].record = pc;
        a.progress[block].iterations = iters;
    }
    if (block == 0)
        poll_cancel(a, last_poll, pc);
    *last_poll = t;
    return sched_status_ends_walk(persist_load_status(a.state));
}

static __device__ __forceinline__ uint8_t *slot_ptr(const persist_args &a, uint8_t *priv, int32_t s)
{
    int32_t off = a.priv_offset[s];
    return off >= 0 ? priv + off : a.arena + a.slots[s].offset;
}

/* Bytes [0, n) from src to dst by every thread of the block, in 4-byte words where both
 * are 4-byte aligned and n is a multiple of 4. */
static __device__ __forceinline__ void block_copy(uint8_t *dst, const uint8_t *src, int64_t n)
{
    if (((uintptr_t)dst | (uintptr_t)src | (uintptr_t)n) % 4 == 0) {
        for (int64_t i = threadIdx.x; i < n / 4; i += blockDim.x)
            ((uint32_t *)dst)[i] = ((const uint32_t *)src)[i];
    } else {
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
            dst[i] = src[i];
    }
}

/* Private copies from (to_arena 0) or to their arena slots (all threads of the block): the
 * one-element slots a thread each, the replicas by the whole block. */
static __device__ void copy_private(const persist_args &a, uint8_t *priv, int to_arena)
{
    for (int32_t s = threadIdx.x; s < a.nslots; s += blockDim.x) {
        int32_t off = a.priv_offset[s];
        if (off < 0 || a.slots[s].count != 1)
            continue;
        uint8_t *arena = a.arena + a.slots[s].offset;
        int64_t n = slot_bytes(&a.slots[s]);
        for (int64_t i = 0; i < n; i++) {
            if (to_arena)
                arena[i] = priv[off + i];
            else
                priv[off + i] = arena[i];
        }
    }
    for (int32_t k = 0; k < a.nreplicas; k++) {
        const int32_t s = a.replicas[k];
        uint8_t *arena = a.arena + a.slots[s].offset, *mine = priv + a.priv_offset[s];
        if (to_arena)
            block_copy(arena, mine, slot_bytes(&a.slots[s]));
        else
            block_copy(mine, arena, slot_bytes(&a.slots[s]));
    }
}

static __device__ void load_private(const persist_args &a, uint8_t *priv)
{
    copy_private(a, priv, 0);
}

static __device__ void store_private(const persist_args &a, const uint8_t *priv)
{
    copy_private(a, (uint8_t *)priv, 1);
}

/* Rows [lo, hi) of dst[m] = a[m,k] @ x[k]: kernels/block.cuh's, which the compiled kernel
 * calls too, so both modes give the same bits. Not inlined, nor is ring_put: inline, they
 * pushed the dispatch loop from 96 registers to 128 with spills; as calls, the loop keeps 128
 * without spills (ptxas, sm_90). */
static __device__ __noinline__ void matvec_rows(int dtype, uint8_t *dst, const uint8_t *a, const uint8_t *x, int64_t k,
                                   int64_t lo, int64_t hi)
{
    k_matvec_rows(dtype, dst, a, x, k, lo, hi);
}

/* PRINT, by every thread of block 0: the slot's bytes as one entry of the ring, in program
 * order. *head (thread 0's) is where the entry goes; *tail_seen (thread 0's) the host's tail
 * as last read. When the ring is full block 0 waits for the host to take entries, watching
 * the run's status and polling the cancel flag; returns 1 when the run was cancelled
 * meanwhile (the block must end), else 0. Prints never end a launch. */
static __device__ __noinline__ int ring_put(const persist_args &a, int32_t pc, const uint8_t *src, uint32_t bytes,
                               unsigned long long *head, unsigned long long *tail_seen,
                               unsigned long long *last_poll)
{
    __shared__ uint32_t s_at;
    __shared__ int s_stop;
    if (threadIdx.x == 0) {
        const uint32_t need = (uint32_t)sizeof(persist_print) + (bytes + 7u) / 8u * 8u;
        unsigned long long at = *head;
        uint32_t off = (uint32_t)(at % a.ring_cap);
        unsigned long long end = at + need + (off + need > a.ring_cap ? a.ring_cap - off : 0);
        int stop = 0;
        while (end - *tail_seen > a.ring_cap) {
            *tail_seen = a.ring->tail;
            if (end - *tail_seen <= a.ring_cap)
                break;
            if (sched_status_ends_walk(persist_load_status(a.state))) {
                stop = 1; /* a cancel: any other stop or pause lies ahead, and block 0 prints until it gets there */
                break;
            }
            persist_poll_cancel(a.state, a.control, last_poll, pc);
        }
        if (!stop && off + need > a.ring_cap) {
            persist_print wrap = {-1, 0};
            memcpy(a.ring_data + off, &wrap, sizeof wrap);
            at += a.ring_cap - off;
            off = 0;
        }
        if (!stop) {
            persist_print h = {pc, (int32_t)bytes};
            memcpy(a.ring_data + off, &h, sizeof h);
            *head = at + need;
        }
        s_at = off;
        s_stop = stop;
    }
    __syncthreads();
    if (s_stop)
        return 1;
    for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x)
        a.ring_data[s_at + sizeof(persist_print) + i] = src[i];
    /* the entry's bytes reach host memory before the head that publishes them */
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0)
        a.ring->head = *head;
    return 0;
}

/* Block 0 at record pc of a one-block region, where micro-ops start (a.mop_entry[pc] >= 0),
 * every thread: thread 0 runs mop_run, the dispatch loop the CPU tests run too, on the
 * scalar file (the private copies and the pool, in shared memory, which the code follows),
 * while lanes 1..31 wait for it at the warp's reconvergence and warps 1..7 at named barrier
 * 1, with no block barrier per micro-op. Thread 0 serves the clock asks itself (the TICK's
 * poll, as REC_TICK makes it) and raises stops; the block together puts prints in the ring
 * and goes back to the micro-ops. Every thread leaves with the iteration count and the record
 * the interpreter goes on at, or a stop. The file and the code are reached through the
 * extern shared array, not through parameters, so the compiler sees shared-memory loads and
 * stores. Not inlined, and returning by value: the dispatch loop keeps its registers out of
 * the record loop's, and the record loop keeps its iteration count in a register. */
typedef struct mop_leave {
    int32_t next_pc;  /* where the interpreter goes on; a stop's record */
    int32_t stopped;  /* the block ends its walk */
    uint64_t iters;
} mop_leave;

static __device__ __noinline__ mop_leave run_microops(const persist_args &a, int32_t pc, uint64_t iters,
                                                      unsigned long long *last_poll, unsigned long long *ring_head,
                                                      unsigned long long *ring_tail)
{
    P_DYNAMIC_SMEM(smem_priv);
    __shared__ int32_t s_out, s_pc;
    __shared__ unsigned long long s_iters;
    mop_state st;
    mop_leave l;
    st.at = a.mop_entry[pc];
    st.iters = iters;
    st.max_iters = a.sync->max_iters; /* the launch's, as the kernel read it */
    st.clock_left = 1; /* the first TICK looks at the clock, as REC_TICK does at every one */
    st.tick_pending = 0;
    for (;;) {
        if (threadIdx.x < 32) {
            if (threadIdx.x == 0) {
                int out;
                for (;;) {
                    out = mop_run((const mop *)(smem_priv + a.mop_code_offset), smem_priv, a.arena, &st);
                    if (out != MOP_OUT_TICK)
                        break;
                    if (tick_poll(a, 0, last_poll, st.pc, st.iters)) {
                        out = MOP_OUT_LEFT;
                        break;
                    }
                }
                if (out == MOP_OUT_STOP)
                    raise_stop(a, st.status, st.pc, st.detail[0], st.detail[1], -1);
                s_out = out;
                s_pc = st.pc;
                s_iters = st.iters;
            }
            __syncwarp();
        }
        /* warps 1..7 have waited here since the call; warp 0 arrives when thread 0 is done */
#ifdef CK_HOST_BAR_SYNC /* inline PTX: the host's stand-in has its own (tests/cuda_host.h) */
        CK_HOST_BAR_SYNC(1, blockDim.x);
#else
        asm volatile("bar.sync 1, %0;" ::"r"(blockDim.x) : "memory");
#endif
        const int out = s_out;
        l.next_pc = s_pc;
        l.iters = s_iters;
        l.stopped = out != MOP_OUT_EXIT;
        __syncthreads(); /* every thread has read them before thread 0 writes them again */
        if (out == MOP_OUT_PRINT) {
            const int32_t s = a.records[l.next_pc].a;
            l.stopped = ring_put(a, l.next_pc, slot_ptr(a, smem_priv, s), (uint32_t)slot_bytes(&a.slots[s]),
                                 ring_head, ring_tail, last_poll);
            if (!l.stopped)
                continue; /* thread 0's st.at is past the PRINT */
        }
        return l;
    }
}

/* The elementwise family over output elements [lo, hi), strided over the block's threads.
 * A redundant record (private output, one element) has lo = 0, hi = 1: thread 0 does it. */
static __device__ void run_elementwise(const persist_args &a, uint8_t *priv, const cfx_record &r,
                                int64_t lo, int64_t hi)
{
    const cfx_slot *sl = a.slots;
    const int64_t T = blockDim.x;
    uint8_t *A = slot_ptr(a, priv, r.a);
    int64_t e = lo + threadIdx.x;
    switch ((enum rec_kind)r.kind) {
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
    case REC_GET_BOX:
    case REC_SET_BOX: {
        const int get = r.kind == REC_GET_BOX;
        const cfx_slot *t = &sl[get ? r.b : r.a];
        const int32_t *ent = a.table + r.c;
        int64_t st[CFX_MAX_RANK] = {0};
        for (int d = 0; d < t->rank; d++)
            if (ent[2 * d] >= 0)
                st[d] = k_load_int(sl[ent[2 * d]].dtype, slot_ptr(a, priv, ent[2 * d]));
        k_box bx = rec_box(ent, t, st);
        const uint8_t *B = slot_ptr(a, priv, r.b);
        for (; e < hi; e += T)
            k_box_copy(!get, dtype_size(t->dtype), A, B, &bx, e, e + 1);
        break;
    }
    case REC_BROADCAST: {
        const uint8_t *B = slot_ptr(a, priv, r.b);
        k_bshape sh = rec_bshape(&sl[r.a], &sl[r.b]);
        for (; e < hi; e += T)
            k_broadcast(dtype_size(sl[r.a].dtype), A, B, &sh, e, e + 1);
        break;
    }
    case REC_GATHER: {
        int64_t m, n, inner;
        rec_gather(sl, &r, &m, &n, &inner);
        const uint8_t *B = slot_ptr(a, priv, r.b), *C = slot_ptr(a, priv, r.c);
        for (; e < hi; e += T)
            k_gather(dtype_size(sl[r.a].dtype), A, B, sl[r.c].dtype, C, m, n, inner, e, e + 1);
        break;
    }
    case REC_PERMUTE: {
        const uint8_t *B = slot_ptr(a, priv, r.b);
        k_pshape sh = rec_pshape(sl, &r);
        for (; e < hi; e += T)
            k_permute(dtype_size(sl[r.a].dtype), A, B, &sh, e, e + 1);
        break;
    }
    case REC_REDUCE_AXIS: {
        int64_t n, inner;
        rec_reduce_axis(sl, &r, &n, &inner);
        const uint8_t *B = slot_ptr(a, priv, r.b);
        for (; e < hi; e += T)
            k_reduce_axis(r.op, r.dtype, A, B, n, inner, e, e + 1);
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
    case REC_REDUCE:
    case REC_DOT:
    case REC_MATMUL:
    case REC_CALL:
    case REC_CHECK_BOUND:
        break;
    }
}

/* A reduction record's fold over the block's share (split) or over everything (redundant, or
 * block 0 in a region), merged over the block's threads in a fixed order: every thread gets
 * it. */
static __device__ k_acc reduce_share(const persist_args &a, uint8_t *priv, const cfx_record &r, int split,
                                     int32_t sb, int32_t sn, k_acc *red)
{
    const cfx_slot *sl = a.slots;
    const int dt = sl[r.b].dtype;
    const int op = r.kind == REC_DOT ? (int)OP_SUM : (int)r.op;
    const uint8_t *B = slot_ptr(a, priv, r.b);
    const uint8_t *C = r.kind == REC_DOT ? slot_ptr(a, priv, r.c) : NULL;
    int64_t lo = 0, hi = sl[r.b].count;
    if (split)
        sched_share(sl[r.b].count, sb, sn, &lo, &hi);
    k_acc acc = k_reduce_init(op, dt);
    for (int64_t e = lo + threadIdx.x; e < hi; e += blockDim.x) {
        if (r.kind == REC_DOT)
            k_dot_range(dt, &acc, B, C, e, e + 1);
        else
            k_reduce_range(op, dt, &acc, B, e, e + 1);
    }
    return k_block_reduce(red, acc, op, dt);
}

/* Thread 0: the reduction's result from its merged accumulator into its (private) slot. */
static __device__ void finish_reduction(const persist_args &a, uint8_t *priv, const cfx_record &r, const k_acc *acc)
{
    const cfx_slot *sl = a.slots;
    const int dt = sl[r.b].dtype;
    uint8_t *A = slot_ptr(a, priv, r.a);
    if (r.kind == REC_DOT)
        k_dot_finish(dt, acc, A);
    else
        k_reduce_finish(r.op, dt, acc, sl[r.b].count, A);
}

/* The dispatch loop: every block walks the records from a.sync->start_pc to HALT, a stop,
 * or a record that ends the launch (DEVICE_LAUNCH: see the top comment). Every decision
 * below is the same in all threads of a block (they read the same private copies after a
 * __syncthreads), so the barriers inside are never divergent. */
template <int DEVICE_LAUNCH>
__global__ void __launch_bounds__(P_THREADS, P_MAX_BLOCKS_PER_SM) persist_kernel(const persist_args a)
{
    P_DYNAMIC_SMEM(smem_priv);
    __shared__ k_acc red[P_THREADS];
    __shared__ int s_flag;

    const int tid = threadIdx.x;
    const int32_t block = blockIdx.x, nblocks = gridDim.x;
    uint8_t *priv = a.priv_shared ? smem_priv : a.priv_global + (size_t)block * a.priv_bytes;
    uint64_t iters = a.state->iterations;
    const int32_t start_pc = a.sync->start_pc, start_region = a.sync->start_region;
    const int64_t max_iters = a.sync->max_iters;
    unsigned long long ring_head = block == 0 ? a.sync->print_head : 0, ring_tail = 0;
    uint32_t ntrace = a.trace ? a.trace_count[block] : 0;
    unsigned long long last_poll = 0;
    sched_cursor c;

    load_private(a, priv);
    if (a.mop_image && block == 0) {
        /* the micro-ops after the private copies (both multiples of 16 bytes) */
        const uint4 *src = (const uint4 *)a.mop_image;
        uint4 *dst = (uint4 *)(smem_priv + a.priv_bytes);
        for (int32_t i = tid; i < a.mop_image_bytes / 16; i += blockDim.x)
            dst[i] = src[i];
    }
    /* Block 0 writes its copies back to the arena at HALT or where the launch ends early;
     * without this barrier a block that starts late could load a copy block 0 has already
     * changed (the replica in test_sched found this under TSan). One barrier per launch. */
    if (grid_barrier(a, &last_poll, start_pc))
        goto out;
    sched_cursor_init(&c, start_pc, block, nblocks);
    if (start_region >= 0) {
        /* resuming inside a one-block region: block 0 goes on in it, the others wait at
         * its exit as they did before the pause */
        if (block == 0)
            c.region = start_region;
        else
            c.pc = a.region_exit[start_region];
    }

    for (;;) {
        const unsigned act = sched_arrive(a.flags, a.region_exit, &c);
        if ((act & SCHED_DO_PUBLISH) && block == 0) {
            uint8_t *pub = a.publish + (size_t)(c.exits & 1) * a.priv_bytes;
            for (int32_t i = tid; i < a.priv_bytes; i += blockDim.x)
                pub[i] = priv[i];
            if (tid == 0)
                a.sync->pub_iters[c.exits & 1] = iters;
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
                iters = *(volatile unsigned long long *)&a.sync->pub_iters[c.exits & 1];
            }
            c.exits++;
            __syncthreads();
        }
        if (act & SCHED_DO_SKIP)
            continue;

        const int32_t pc = c.pc;
        if (c.region >= 0 && a.mop_image && a.mop_entry[pc] >= 0) {
            /* block 0 alone: every thread of it takes this branch. A traced run stamps the
             * micro-ops' stretch as one event at the record where they start, and its profile
             * counts their iterations at the region's first TICK (its loop's). */
            const unsigned long long t0 = a.trace && tid == 0 ? persist_now_ns() : 0;
            const mop_leave l = run_microops(a, pc, iters, &last_poll, &ring_head, &ring_tail);
            if (a.trace && tid == 0) {
                trace_record(a, block, &ntrace, pc, t0, P_EV_MICROOPS);
                for (int32_t i = pc; a.prof && i < a.region_exit[c.region]; i++)
                    if (a.records[i].kind == REC_TICK) {
                        a.prof[2 + 2 * (size_t)i] += l.iters - iters;
                        break;
                    }
            }
            iters = l.iters;
            c.pc = l.next_pc;
            if (l.stopped)
                goto out;
            continue;
        }
        const cfx_record r = a.records[pc];
        const unsigned f = a.flags[pc];
        const int32_t sb = sched_block(&c), sn = sched_nblocks(&c);
        const unsigned long long t0 = a.trace && tid == 0 ? persist_now_ns() : 0;
        int32_t next = pc + 1;

        if (f & SCHED_F_LAUNCH) {
            /* The record's work runs between this launch and the next (never inside a
             * region: plan.h), and every block ends here. Block 0 writes its private
             * copies back first; the kernel's end orders them before that work. */
            if (block == 0)
                store_private(a, priv);
            __syncthreads();
            if (tid == 0) {
                if constexpr (DEVICE_LAUNCH) {
                    /* the record's graph, then this graph again at the next record; both run
                     * once every block of this launch has ended */
                    if (block == 0) {
                        a.sync->start_pc = pc + 1;
                        a.sync->start_region = -1;
                        cudaError_t e1 = cudaGraphLaunch(a.site_exec[pc], cudaStreamGraphTailLaunch);
                        cudaError_t e2 = e1 == cudaSuccess
                                             ? cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch)
                                             : cudaSuccess;
                        if (e1 != cudaSuccess || e2 != cudaSuccess)
                            raise_stop(a, CFX_ERROR, pc, (int64_t)e1, (int64_t)e2, -1);
                    }
                } else {
                    raise_stop(a, P_STATUS_PAUSE, pc, 0, 0, -1);
                }
            }
            /* the record that ends the launch is in the trace too, up to the launch's end */
            if (a.trace && tid == 0)
                trace_record(a, block, &ntrace, pc, t0);
            goto out;
        }

        switch ((enum rec_kind)r.kind) {
        case REC_HALT:
            if (block == 0)
                store_private(a, priv);
            if (a.trace && tid == 0)
                trace_record(a, block, &ntrace, pc, t0);
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
            if (tid == 0)
                s_flag = tick_poll(a, block, &last_poll, pc, iters);
            __syncthreads();
            if (s_flag)
                goto out;
            if (sched_tick(&iters, max_iters)) {
                if (tid == 0)
                    raise_stop(a, CFX_STOP_LIMIT, pc, max_iters, 0, -1);
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
        case REC_PRINT:
            /* block 0 alone: the ring keeps program order, and the other blocks go on */
            if (block == 0) {
                const cfx_slot *sl = &a.slots[r.a];
                if (ring_put(a, pc, slot_ptr(a, priv, r.a), (uint32_t)slot_bytes(sl), &ring_head, &ring_tail,
                             &last_poll))
                    goto out;
            }
            break;
        case REC_REDUCE:
        case REC_DOT: {
            /* A split reduction folds the block's share of itself and of its batch (plan.h)
             * into partials, passes one grid barrier, and merges each; a reduction of an earlier
             * batch was done there. */
            if (a.batch_head[pc] >= 0 && c.region < 0)
                break;
            const int combine = (f & SCHED_F_COMBINE) && c.region < 0;
            int32_t q = pc;
            for (int k = 0; k < SCHED_BATCH_MAX && q >= 0; k++, q = combine ? a.batch_next[q] : -1) {
                const cfx_record rq = q == pc ? r : a.records[q];
                k_acc acc = reduce_share(a, priv, rq, combine, sb, sn, red);
                if (combine) {
                    if (tid == 0)
                        a.partials[((size_t)(c.combines & 1) * SCHED_BATCH_MAX + k) * nblocks + block] = acc;
                } else if (tid == 0) {
                    finish_reduction(a, priv, rq, &acc);
                }
            }
            if (combine) {
                if (grid_barrier(a, &last_poll, pc))
                    goto out;
                /* every block merges all partials in the same order */
                q = pc;
                for (int k = 0; k < SCHED_BATCH_MAX && q >= 0; k++, q = a.batch_next[q]) {
                    const cfx_record rq = q == pc ? r : a.records[q];
                    const k_acc *part = a.partials + ((size_t)(c.combines & 1) * SCHED_BATCH_MAX + k) * nblocks;
                    const int dt = a.slots[rq.b].dtype, op = rq.kind == REC_DOT ? (int)OP_SUM : (int)rq.op;
                    k_acc acc = k_reduce_init(op, dt);
                    for (int32_t b = tid; b < nblocks; b += blockDim.x)
                        k_reduce_merge(op, dt, &acc, &part[b]);
                    acc = k_block_reduce(red, acc, op, dt);
                    if (tid == 0)
                        finish_reduction(a, priv, rq, &acc);
                }
                c.combines++;
            }
            break;
        }
        case REC_MATMUL: {
            /* a batch (rec_matmul): the tiles of all its products are the work items */
            const cfx_slot *sl = a.slots;
            rec_mm g = rec_matmul(sl, &r);
            int64_t m = g.m, k = g.k, n = g.n, es = dtype_size(sl[r.a].dtype);
            uint8_t *A = slot_ptr(a, priv, r.a);
            const uint8_t *B = slot_ptr(a, priv, r.b), *C = slot_ptr(a, priv, r.c);
            if ((f & SCHED_F_SPLIT) && sched_matvec(&r, sl)) {
                int64_t lo, hi;
                sched_share(m, sb, sn, &lo, &hi);
                matvec_rows(sl[r.a].dtype, A, B, C, k, lo, hi);
            } else if (f & SCHED_F_SPLIT) {
                int64_t lo, hi;
                sched_share(sched_domain(&r, sl), sb, sn, &lo, &hi);
                k_matmul_tiles_batch(sl[r.a].dtype, A, B, C, m, k, n, g.sb, g.sc, lo, hi);
            } else if (tid == 0) {
                for (int64_t e = 0; e < g.batch; e++)
                    k_matmul(sl[r.a].dtype, A + e * m * n * es, B + e * g.sb * es, C + e * g.sc * es, m, k, n, 0,
                             m * n);
            }
            break;
        }
        case REC_UNARY:
        case REC_BINARY:
        case REC_TRANSPOSE:
        case REC_FILL:
        case REC_IOTA:
        case REC_COPY:
        case REC_CAST:
        case REC_WHERE:
        case REC_GET_ROW:
        case REC_SET_ROW:
        case REC_CALL:
        case REC_GET_BOX:
        case REC_SET_BOX:
        case REC_BROADCAST:
        case REC_GET_ITEM:
        case REC_SET_ITEM:
        case REC_GATHER:
        case REC_REDUCE_AXIS:
        case REC_PERMUTE: {
            /* the elementwise family, split or redundant */
            int64_t dom = sched_domain(&r, a.slots), lo = 0, hi = dom;
            if (f & SCHED_F_SPLIT)
                sched_share(dom, sb, sn, &lo, &hi);
            run_elementwise(a, priv, r, lo, hi);
            break;
        }
        }
        __syncthreads();
        if (a.trace && tid == 0)
            trace_record(a, block, &ntrace, pc, t0);
        c.pc = next;
    }
out:
    if (tid == 0) {
        atomicMax(&a.state->iterations, (unsigned long long)iters);
        if (block == 0)
            a.sync->print_head = ring_head;
        if (a.trace)
            a.trace_count[block] = ntrace;
    }
}

/* ==== what interp.cu and interp_launch.cu share ===================================== */

/* interp_launch.cu: whether this device runs graphs that persist_kernel<1> launches from
 * the device (a probe run once per process: a cooperative kernel node, else a plain one).
 * Returns 1 and sets *cooperative, or 0 with the reason in why. */
int persist_probe_device_launch(int *cooperative, char *why, size_t len);
/* interp_launch.cu: blocks of persist_kernel<1> resident per multiprocessor with smem
 * bytes of dynamic shared memory. */
cudaError_t persist_launch_occupancy(int *per_sm, size_t smem);
/* interp_launch.cu: a graph of one kernel node, persist_kernel<1>(*a) on nblocks blocks
 * (cooperative or not, with the L2 window l2, dev.h), instantiated for device launch and
 * uploaded on `upload`. */
int persist_launch_graph(const persist_args *a, int nblocks, size_t smem, int cooperative,
                         const cudaAccessPolicyWindow *l2, cudaStream_t upload, cudaGraph_t *graph,
                         cudaGraphExec_t *exec, char *err, size_t errlen);

#endif
