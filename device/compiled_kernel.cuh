/* compiled_kernel.cuh: what a compiled persistent kernel calls. host/gen/cgen.c writes the kernel
 * (one `extern "C" __global__` function per program, scalars in registers, the program's
 * control flow as C statements); device/compiled.cu compiles it with NVRTC, handing NVRTC this
 * header and kernels/ as text, and launches it with the ck_args below. compiled.cu includes it
 * too, for the argument and state layouts, so nvcc checks that it compiles on every build.
 *
 * The helpers mirror the interpreter's (device/interp_kernel.cuh) so that both modes take
 * the same decisions: the same grid barrier (kernels/grid.cuh's counting barrier, watching the
 * run's status so a stopped run never leaves a block waiting; block 0 polls the host's cancel
 * flag while it waits) and the same split of items over blocks (plan.h's sched_share)
 * are written again here, because NVRTC compiles only what it is handed, without the CUDA
 * runtime's headers that the interpreter's device code includes. The fixed-order block
 * reduction and the tiled matrix product are shared (kernels/block.cuh).
 *
 * Records that end the launch (a CALL of a binary kernel, a product for cuBLAS: the plan's
 * SCHED_F_LAUNCH) end it as the interpreter's do: block 0 stores its scalars and replicas to the
 * arena, thread 0 records where the next launch resumes (ck_sync.resume, the record after) and
 * ck_end_launch either tail-launches the record's pre-captured graph and then the kernel's own
 * graph (built with CK_DEVICE_LAUNCH 1: the kernel is the node of a device-launchable graph) or
 * raises CK_STATUS_PAUSE at the record, for the host to run the work and launch again. The
 * generated kernel starts every launch by reloading its scalars where it resumes, one grid
 * barrier, and a jump to the code after that record (host/gen/cgen.c's resume_entry). A kernel
 * given by its source is no launch: the generator writes it inline.
 *
 * A print buffer that fills up stops the launch with CK_STATUS_RERUN: the host then runs the
 * whole program again with the interpreter, which pauses to drain the buffer (nothing of the
 * first attempt is visible: results are copied only after an ok run, prints only after the
 * launch).
 */
#ifndef CFX_COMPILED_KERNEL_CUH
#define CFX_COMPILED_KERNEL_CUH

#include <stdint.h>

#include "kernels/kernels.h"

#define CK_THREADS 256              /* threads per block, whole warps (the block reduction) */
#define CK_BATCH_MAX 4              /* split reductions combined over one barrier: SCHED_BATCH_MAX */
#define CK_TILE 16                  /* matmul output tiles are CK_TILE x CK_TILE, one per thread */
#define CK_POLL_NS 100000ull        /* read the host-mapped cancel flag at most this often */
#define CK_STOP_CANCELLED 6         /* CFX_STOP_CANCELLED (compiled.cu checks that they agree) */
#define CK_STATUS_RERUN 100         /* the print buffer is full: run again with the interpreter */
#define CK_STATUS_PAUSE (-1)        /* SCHED_STATUS_PAUSE: the launch ended at a record for the host */
#define CK_ERROR 7                  /* CFX_ERROR: a tail launch failed (compiled.cu checks both) */
/* 1: the kernel can end a launch by tail-launching graphs (ck_args.device_launch says whether a
 * launch does); 0: it can only pause, and loads where the device runtime's graph launch is not
 * available. Set by the source NVRTC compiles (compiled.cu writes it first); the host emulation
 * has both (tests/ck_host.h). */
#ifndef CK_DEVICE_LAUNCH
#define CK_DEVICE_LAUNCH 0
#endif

#ifdef __cplusplus
static_assert(CK_THREADS == CK_TILE * CK_TILE, "a matmul tile is one element per thread");
#endif

/* The run's state, as dev_state (device/dev.h) lays it out. */
typedef struct ck_state {
    int32_t status;
    int32_t record;
    int64_t detail[2];
    unsigned long long iterations;
} ck_state;

/* The host-mapped control block, as dev_control. */
typedef struct ck_control {
    volatile int32_t cancel;
    int32_t pad_;
    int64_t max_iters;
} ck_control;

/* Device memory the blocks share: the grid barrier, the bytes of prints written, where a launch
 * resumes and the run's budget. The host writes it before a run's first launch. */
typedef struct ck_sync {
    unsigned long long bar_arrived; /* kernels/grid.cuh's count */
    uint32_t print_used;
    int32_t resume;                 /* 0: a run's first launch; r + 1: the last launch ended at record r */
    int64_t max_iters;              /* the budget, 0: none (read once per launch) */
} ck_sync;

/* A print entry: this header, then the value's bytes padded to 8. */
typedef struct ck_print_entry {
    int32_t record;
    int32_t bytes;
} ck_print_entry;

/* The timeline of a kernel built with CK_TRACE (a build of its own, so that a kernel built
 * without it has no stamp at all): thread 0 of each block stamps the time at the boundaries the
 * generator knows, into the block's part of `trace`. A launch's START and END carry the global
 * timer (%globaltimer, nanoseconds, the same on every multiprocessor), each beside a CLOCK event
 * with the multiprocessor's cycle counter (%clock64) at that point; every other stamp carries
 * cycles, which cost a register read where the global timer is a slower trip off the core and
 * ticks more coarsely. The host maps each launch's cycles onto nanoseconds by the line through
 * its two ends (ck_timeline_ns). */
enum {
    CK_EV_START = 1, /* the block starts a launch (record: where it resumes, -1 at the first) */
    CK_EV_ITER,      /* a loop iteration begins (record: the loop's TICK) */
    CK_EV_REGION,    /* a one-block region begins (record: its first) */
    CK_EV_WAIT,      /* the block arrives at a grid barrier (record: the barrier's) */
    CK_EV_PASS,      /* ... and leaves it */
    CK_EV_DONE,      /* the block ends a phase: a loop over tensors, a product, a combine
                      * (record: the one whose code it ends) */
    CK_EV_END,       /* the block ends the launch */
    CK_EV_SAMPLE,    /* a loop without tensor work: an iteration begins where the kernel's count
                      * of iterations is a multiple of CK_SAMPLE (record: the loop's TICK). Such
                      * an iteration takes tens of nanoseconds, about what a stamp costs, so
                      * the kernel stamps one in CK_SAMPLE, and counts them all in ck_ticks_ */
    CK_EV_CLOCK      /* the cycle counter right after START or right before END (record: theirs) */
};
#define CK_SAMPLE 64
typedef struct ck_event {
    int32_t record;
    int32_t kind;
    unsigned long long t;
} ck_event;

#ifndef __CUDACC_RTC__
/* The host's reading of one block's n events (kept in the order stamped): every time in
 * nanoseconds of the global timer, and the CLOCK events taken out; returns how many events are
 * left. Within each launch, from START to END, a stamp's cycles c go to t0 + (c - c0) / rate,
 * (c0, t0) being START's and rate the cycles per nanosecond between START and END. A launch
 * whose END was not kept (the buffer was full) takes the last rate known, else `ghz` (the
 * device's clock in GHz). */
static inline uint32_t ck_timeline_ns(ck_event *ev, uint32_t n, double ghz)
{
    uint32_t out = 0, k = 0;
    double rate = ghz > 0 ? ghz : 1.0;
    while (k < n) {
        if (ev[k].kind != CK_EV_START || k + 1 >= n || ev[k + 1].kind != CK_EV_CLOCK) {
            k++; /* nothing to map it by (a START kept without its CLOCK ends the buffer) */
            continue;
        }
        uint32_t e = k + 2;
        while (e < n && ev[e].kind != CK_EV_END && ev[e].kind != CK_EV_START)
            e++;
        const unsigned long long t0 = ev[k].t, c0 = ev[k + 1].t;
        if (e < n && ev[e].kind == CK_EV_END && ev[e - 1].kind == CK_EV_CLOCK && e - 1 > k + 1 &&
            ev[e - 1].t > c0 && ev[e].t > t0)
            rate = (double)(ev[e - 1].t - c0) / (double)(ev[e].t - t0);
        const uint32_t end = e < n && ev[e].kind == CK_EV_END ? e + 1 : e;
        for (uint32_t q = k; q < end; q++) {
            ck_event v = ev[q];
            if (v.kind == CK_EV_CLOCK)
                continue;
            if (v.kind != CK_EV_START && v.kind != CK_EV_END)
                v.t = t0 + (unsigned long long)((double)(v.t >= c0 ? v.t - c0 : 0) / rate + 0.5);
            ev[out++] = v;
        }
        k = end;
    }
    return out;
}
#endif

/* Where a block stands, in host-mapped memory, as exec_progress (host/runtime/exec.h) lays it out: the
 * last TICK or barrier record it reached, the barrier it has waited at long (-1: none), its
 * iterations at that TICK. The host reads them for a hang report. */
typedef struct ck_progress {
    volatile int32_t record;
    volatile int32_t barrier;
    volatile unsigned long long iterations;
} ck_progress;

/* The kernel's one argument. */
typedef struct ck_args {
    uint8_t *arena;
    ck_state *state;
    const ck_control *control; /* host-mapped */
    ck_sync *sync;
    k_acc *partials;           /* 2 * CK_BATCH_MAX * gridDim.x: split reductions' partials */
    uint8_t *publish;          /* 2 buffers: the scalars block 0 hands over at a region's exit */
    uint8_t *print_buf;
    uint32_t print_cap;
    int32_t device_launch;     /* 1: tail-launch at a record that ends the launch (a kernel built
                                * with CK_DEVICE_LAUNCH 1, the node of a device graph); 0: pause */
    struct CUgraphExec_st *const *site_exec; /* per record: the graph of a record that ends the
                                              * launch (a cudaGraphExec_t), for CK_DEVICE_LAUNCH */
    ck_event *trace;           /* CK_TRACE: trace_cap events per block */
    uint32_t trace_cap;
    uint32_t *trace_count;     /* CK_TRACE: per block, events stamped (kept or not), across launches */
    unsigned long long *tick_counts; /* CK_TRACE: per block, the iterations of each TICK record (in
                                      * the program's order of them), added at each launch's end */
    ck_progress *progress;     /* per block, host-mapped; NULL: none */
    uint8_t *alt;              /* the second buffers of the tensors that alternate by loop
                                * iteration (cgen_info.alt_bytes; plan.h's alt_tick) */
} ck_args;

/* Device code; also compiled by a host C++ compiler where tests/ck_host.h stands in for CUDA
 * (blocks as host threads, their CUDA threads as fibers), which is how the tests run these
 * kernels without a GPU. */
#if defined(__CUDACC__) || defined(CK_HOST_EMULATION)
#include "kernels/block.cuh"
#include "kernels/grid.cuh"

static_assert(CK_TILE == K_TILE, "products are split into the tiles k_matmul_tiles computes");

/* A hook after every grid barrier: nothing on a GPU; the host emulation holds some blocks back
 * there, so that a barrier missing from a kernel shows up as a wrong result every time. */
#ifndef CK_BEFORE_BARRIER /* thread 0, before it arrives (the host emulation may hold a block) */
#define CK_BEFORE_BARRIER(record) ((void)0)
#endif
#ifndef CK_AFTER_BARRIER
#define CK_AFTER_BARRIER() ((void)0)
#endif

static __device__ __forceinline__ unsigned long long ck_now(void)
{
    unsigned long long t;
#if defined(__CUDA_ARCH__)
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
#elif defined(CK_HOST_EMULATION)
    t = CK_HOST_CLOCK();
#else
    t = 0; /* nvcc's host pass: never run */
#endif
    return t;
}

/* The multiprocessor's cycle counter (the host emulation: its clock again, a rate of 1). */
static __device__ __forceinline__ unsigned long long ck_cycles(void)
{
    unsigned long long t;
#if defined(__CUDA_ARCH__)
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t));
#elif defined(CK_HOST_EMULATION)
    t = CK_HOST_CLOCK();
#else
    t = 0;
#endif
    return t;
}

/* CK_STAMP: thread 0 of the block stamps an event (ck_event's kinds); nothing at all in a kernel
 * built without CK_TRACE. Past the cap an event is only counted. */
#ifdef CK_TRACE
/* The block's count of stamps, thread 0's, in shared memory from the launch's START to its END,
 * where it goes back to trace_count: a stamp then costs no round trip to device memory (reading
 * the count there at every stamp made a traced if_in_while 2.7 times slower on an H100). */
__shared__ uint32_t ck_trace_n_;
static __device__ __forceinline__ void ck_put(const ck_args &a, int32_t kind, int32_t record, unsigned long long t)
{
    uint32_t n = ck_trace_n_++;
    if (n < a.trace_cap) {
        ck_event *e = &a.trace[(size_t)blockIdx.x * a.trace_cap + n];
        e->record = record;
        e->kind = kind;
        e->t = t;
    }
}
static __device__ void ck_stamp(const ck_args &a, int32_t kind, int32_t record)
{
    if (threadIdx.x != 0 || !a.trace)
        return;
    if (kind == CK_EV_START) {
        ck_trace_n_ = a.trace_count[blockIdx.x];
        ck_put(a, CK_EV_START, record, ck_now());
        ck_put(a, CK_EV_CLOCK, record, ck_cycles());
    } else if (kind == CK_EV_END) {
        ck_put(a, CK_EV_CLOCK, record, ck_cycles());
        ck_put(a, CK_EV_END, record, ck_now());
        a.trace_count[blockIdx.x] = ck_trace_n_;
    } else {
        ck_put(a, kind, record, ck_cycles());
    }
}
#define CK_STAMP(a, kind, record) ck_stamp(a, kind, record)
/* Each thread counts the iterations of each TICK (the k-th TICK record of the program: its
 * CK_TICK(k)) in registers, and thread 0 adds them to its block's tick_counts at the launch's end:
 * the profile's exact counts, though loops without tensor work are stamped one iteration in
 * CK_SAMPLE and a buffer keeps only the first trace_cap stamps. */
#define CK_TICKS(n) unsigned long long ck_ticks_[n] = {0}
#define CK_TICK(k) (ck_ticks_[k]++)
#define CK_TICKS_OUT(a, n)                                                                    \
    do {                                                                                      \
        if (threadIdx.x == 0 && (a).tick_counts)                                              \
            for (int k_ = 0; k_ < (n); k_++)                                                  \
                (a).tick_counts[(size_t)blockIdx.x * (n) + k_] += ck_ticks_[k_];              \
    } while (0)
#else
#define CK_STAMP(a, kind, record) ((void)0)
#define CK_TICKS(n) ((void)0)
#define CK_TICK(k) ((void)0)
#define CK_TICKS_OUT(a, n) ((void)0)
#endif

static __device__ __forceinline__ int32_t ck_status(const ck_args &a)
{
    return *(volatile const int32_t *)&a.state->status;
}

/* The first stop wins; later ones (the same stop raised by other blocks) change nothing. */
static __device__ void ck_raise(const ck_args &a, int32_t status, int32_t record, int64_t d0,
                                int64_t d1)
{
    if (atomicCAS((int *)&a.state->status, 0, status) == 0) {
        a.state->record = record;
        a.state->detail[0] = d0;
        a.state->detail[1] = d1;
        __threadfence();
    }
}

/* Thread 0: block 0 looks at the host's cancel flag, every block at the run's status, at most
 * every CK_POLL_NS (a read across PCIe costs about a microsecond). Returns 1 for a cancel
 * only: every other stop is raised by the program at the same record in every block, so a
 * block that sees one raised by a block ahead of it goes on until it reaches that record
 * itself. Block 0 must: it writes the printed values, and the ones before the stop are due. */
static __device__ int ck_look(const ck_args &a, unsigned long long *last, int32_t record)
{
    unsigned long long t = ck_now();
    if (t - *last < CK_POLL_NS)
        return 0;
    *last = t;
    if (blockIdx.x == 0 && a.control->cancel)
        ck_raise(a, CK_STOP_CANCELLED, record, 0, 0);
    return ck_status(a) == CK_STOP_CANCELLED;
}

/* At a TICK (every thread of the block): 1 when the run was stopped and the block must end.
 * When the poll is due, the block also says where it stands in its progress word (a write
 * across PCIe, so no more often). */
static __device__ __noinline__ int ck_poll(const ck_args &a, unsigned long long *last,
                                           int32_t record, uint64_t iters)
{
    int stop = 0;
    if (threadIdx.x == 0) {
        unsigned long long before = *last;
        stop = ck_look(a, last, record);
        if (*last != before && a.progress) {
            a.progress[blockIdx.x].record = record;
            a.progress[blockIdx.x].iterations = iters;
        }
    }
    return __syncthreads_or(stop);
}

/* The grid barrier (every thread of every block). Returns 1 when the run was stopped while
 * waiting and the barrier cannot complete: the block must end. That happens for a cancel, and
 * for blocks waiting at a one-block region's exit when block 0 stopped inside the region; a
 * stop the program raises elsewhere is raised by a block that passed this barrier, so the
 * barrier completes. The fences make every block's writes before the barrier visible to every
 * block after it (kernels/grid.cuh). */
static __device__ __noinline__ int ck_grid_barrier(const ck_args &a, unsigned long long *last,
                                                   int32_t record)
{
    __shared__ int s_stop;
    __syncthreads();
    CK_STAMP(a, CK_EV_WAIT, record);
    if (threadIdx.x == 0) {
        ck_sync *s = a.sync;
        int stop = 0;
        unsigned int spins = 0;
        ck_progress *w = a.progress ? &a.progress[blockIdx.x] : NULL;
        CK_BEFORE_BARRIER(record);
        unsigned long long target = k_grid_arrive(&s->bar_arrived, gridDim.x);
        while (!k_grid_passed(&s->bar_arrived, target)) {
            /* a long wait (a hang, or a block far behind) is said in the progress word, once,
             * and undone below once passed (as the interpreter's barrier does) */
            if (++spins == 1024u && w) {
                w->record = record;
                w->barrier = record;
            }
            if (ck_status(a) != 0) {
                /* the barrier may have completed just before the stop: pass it then */
                stop = !k_grid_passed(&s->bar_arrived, target);
                break;
            }
            ck_look(a, last, record);
        }
        if (spins >= 1024u && w && !stop)
            w->barrier = -1;
        s_stop = stop;
        if (!stop)
            CK_STAMP(a, CK_EV_PASS, record);
    }
    __syncthreads();
    CK_AFTER_BARRIER();
    return s_stop;
}

/* sched_share (host/gen/plan.h): block `block` of `nblocks` takes items [lo, hi). */
static __device__ __forceinline__ void ck_share(int64_t count, int64_t block, int64_t nblocks,
                                                int64_t *lo, int64_t *hi)
{
    if (count >= 0 && count <= 0x7fffffff && nblocks > 0 && nblocks <= 0x7fffffff) {
        /* the same shares in 32 bits, where a GPU divides several times faster */
        uint32_t c = (uint32_t)count, n = (uint32_t)nblocks, b = (uint32_t)block;
        uint32_t base32 = c / n, rem32 = c - base32 * n;
        *lo = (int64_t)b * base32 + (b < rem32 ? b : rem32);
        *hi = *lo + base32 + (b < rem32 ? 1 : 0);
        return;
    }
    int64_t base = count / nblocks, rem = count % nblocks;
    *lo = block * base + (block < rem ? block : rem);
    *hi = *lo + base + (block < rem ? 1 : 0);
}

/* A split reduction: this block's partial to the global array, a grid barrier, then every
 * block merges all partials in block order. The arrays alternate, so a fast block's next
 * partial never overwrites one that a slow block still reads. Returns 1 if the run stopped. */
static __device__ __noinline__ int ck_combine(const ck_args &a, k_acc *acc, int op, int dtype,
                                              k_acc *red, uint32_t *combines,
                                              unsigned long long *last, int32_t record)
{
    k_acc *part = a.partials + (uint64_t)(*combines & 1u) * CK_BATCH_MAX * gridDim.x;
    if (threadIdx.x == 0) {
        K_RACE_W(&part[blockIdx.x], sizeof *part);
        part[blockIdx.x] = *acc;
    }
    if (ck_grid_barrier(a, last, record))
        return 1;
    k_acc m = k_reduce_init(op, dtype);
    for (int32_t b = threadIdx.x; b < (int32_t)gridDim.x; b += blockDim.x)
        k_reduce_merge(op, dtype, &m, &part[b]);
    *acc = k_block_reduce(red, m, op, dtype);
    (*combines)++;
    return 0;
}

/* A batch of n split reductions (plan.h) over one barrier: each one's partial to its
 * array, one grid barrier, then each merged as ck_combine merges. Returns 1 if the run stopped. */
static __device__ __noinline__ int ck_combine_batch(const ck_args &a, k_acc *acc, const int *op,
                                                    const int *dtype, int n, k_acc *red,
                                                    uint32_t *combines, unsigned long long *last,
                                                    int32_t record)
{
    k_acc *part = a.partials + (uint64_t)(*combines & 1u) * CK_BATCH_MAX * gridDim.x;
    if (threadIdx.x == 0)
        for (int k = 0; k < n; k++) {
            K_RACE_W(&part[(uint64_t)k * gridDim.x + blockIdx.x], sizeof *part);
            part[(uint64_t)k * gridDim.x + blockIdx.x] = acc[k];
        }
    if (ck_grid_barrier(a, last, record))
        return 1;
    for (int k = 0; k < n; k++) {
        k_acc m = k_reduce_init(op[k], dtype[k]);
        for (int32_t b = threadIdx.x; b < (int32_t)gridDim.x; b += blockDim.x)
            k_reduce_merge(op[k], dtype[k], &m, &part[(uint64_t)k * gridDim.x + b]);
        acc[k] = k_block_reduce(red, m, op[k], dtype[k]);
    }
    (*combines)++;
    return 0;
}

/* Output tiles [lo, hi) of dst[m,n] = a[m,k] @ b[k,n]: kernels/block.cuh's, kept out of line
 * (the generated code calls it at every split product). */
static __device__ __noinline__ void ck_matmul_tiles(int dtype, uint8_t *dst, const uint8_t *a,
                                                    const uint8_t *b, int64_t m, int64_t k,
                                                    int64_t n, int64_t lo, int64_t hi)
{
    k_matmul_tiles(dtype, dst, a, b, m, k, n, lo, hi);
}

/* Output tiles [lo, hi) of a batch of products (a batched MATMUL): kernels/block.cuh's, out of
 * line as ck_matmul_tiles. */
static __device__ __noinline__ void ck_matmul_tiles_batch(int dtype, uint8_t *dst, const uint8_t *a,
                                                          const uint8_t *b, int64_t m, int64_t k, int64_t n,
                                                          int64_t sa, int64_t sb, int64_t lo, int64_t hi)
{
    k_matmul_tiles_batch(dtype, dst, a, b, m, k, n, sa, sb, lo, hi);
}

/* Bytes [0, n) from src to dst by every thread of the block (a replica loaded, published or
 * reloaded; both 16-byte aligned), in 4-byte words where n allows. */
static __device__ void ck_block_copy(uint8_t *dst, const uint8_t *src, int64_t n)
{
    if (n % 4 == 0) {
        for (int64_t i = threadIdx.x; i < n / 4; i += blockDim.x) {
            K_RACE_R(src + 4 * i, 4);
            K_RACE_W(dst + 4 * i, 4);
            ((uint32_t *)dst)[i] = ((const volatile uint32_t *)src)[i];
        }
    } else {
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
            K_RACE_R(src + i, 1);
            K_RACE_W(dst + i, 1);
            dst[i] = ((const volatile uint8_t *)src)[i];
        }
    }
}

/* Rows [lo, hi) of a matrix-vector product: kernels/block.cuh's, which the interpreter calls
 * too (the same bits in both modes), kept out of line, the rows' results also in `stash` where
 * it is not NULL. Ends with the block's barrier. */
static __device__ __noinline__ void ck_matvec_rows(int dtype, uint8_t *dst, const uint8_t *a,
                                                   const uint8_t *x, int64_t k, int64_t lo,
                                                   int64_t hi, uint8_t *stash = NULL)
{
    k_matvec_rows(dtype, dst, a, x, k, lo, hi, stash);
    __syncthreads();
}

/* PRINT (every thread of every block): block 0 appends the entry; all count its bytes, so the
 * count agrees everywhere. Returns 1 when the buffer is full: the run ends for a rerun. */
static __device__ __noinline__ int ck_print(const ck_args &a, uint32_t *used, int32_t record,
                                            const uint8_t *src, int64_t bytes)
{
    uint32_t need = (uint32_t)sizeof(ck_print_entry) + ((uint32_t)bytes + 7u) / 8u * 8u;
    if ((uint64_t)*used + need > a.print_cap) {
        if (threadIdx.x == 0)
            ck_raise(a, CK_STATUS_RERUN, record, 0, 0);
        return 1;
    }
    if (blockIdx.x == 0) {
        uint8_t *e = a.print_buf + *used;
        if (threadIdx.x == 0) {
            ck_print_entry h = {record, (int32_t)bytes};
            *(ck_print_entry *)e = h;
        }
        for (int64_t i = threadIdx.x; i < bytes; i += blockDim.x)
            e[sizeof(ck_print_entry) + i] = src[i];
    }
    *used += need;
    return 0;
}

/* The device runtime's graph launch, which NVRTC has no header for: the function the driver
 * resolves when the module loads (as for device/interp_launch.cu's kernel) and the special
 * register that names the graph the kernel runs in (cuda_device_runtime_api.h's). */
#if CK_DEVICE_LAUNCH && defined(__CUDACC_RTC__)
extern "C" __device__ int cudaGraphLaunch(struct CUgraphExec_st *graph, struct CUstream_st *stream);
static __device__ __forceinline__ struct CUgraphExec_st *cudaGetCurrentGraphExec(void)
{
    unsigned long long g;
    asm("mov.u64 %0, %%current_graph_exec;" : "=l"(g));
    return (struct CUgraphExec_st *)g;
}
#define cudaStreamGraphTailLaunch ((struct CUstream_st *)0x0100000000000000ull)
#endif

/* A record that ends the launch (every thread of every block, after block 0 stored its scalars
 * and replicas): thread 0 of block 0 says where the next launch resumes and hands the record
 * over, by tail-launching its graph and then the kernel's own (they run once every block has
 * ended, in that order), or by pausing the run at it for the host. */
static __device__ void ck_end_launch(const ck_args &a, int32_t record)
{
    if (blockIdx.x != 0 || threadIdx.x != 0)
        return;
    a.sync->resume = record + 1;
#if CK_DEVICE_LAUNCH || defined(CK_HOST_EMULATION)
    if (a.device_launch) {
        int e1 = (int)cudaGraphLaunch(a.site_exec[record], cudaStreamGraphTailLaunch);
        int e2 = e1 == 0 ? (int)cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch) : 0;
        if (e1 != 0 || e2 != 0)
            ck_raise(a, CK_ERROR, record, e1, e2);
        return;
    }
#endif
    ck_raise(a, CK_STATUS_PAUSE, record, 0, 0);
}

/* The end of the launch for a block: the iterations counted (the largest count wins: blocks
 * that waited out a region have block 0's) and block 0's print bytes. */
static __device__ void ck_finish(const ck_args &a, uint64_t iters, uint32_t print_used)
{
    if (threadIdx.x == 0) {
        atomicMax(&a.state->iterations, (unsigned long long)iters);
        if (blockIdx.x == 0)
            a.sync->print_used = print_used;
    }
}

#endif /* __CUDACC__ || CK_HOST_EMULATION */
#endif
