/* grid_barrier.cuh: the grid barrier of the cuda-persistent executor, with the status and
 * cancel polls it does while it waits. One copy of this code serves the executor's kernel
 * (interp_kernel.cuh) and the grid-barrier floor of the benchmarks (profiling/floors.cu),
 * so the floor times the barrier the executor really passes, in a grid of the same shape.
 *
 * Why our own barrier and not cooperative groups' grid.sync(): grid.sync() needs a
 * cooperative launch, which forbids dynamic parallelism, and the executor keeps device-side
 * launches open to itself; this barrier works in any launch whose grid is resident. It is
 * kernels/grid.cuh's counting barrier (host/gen/plan.h explains when it is passed); a block
 * spinning in it also watches the run's status, so a block that stopped the run never leaves
 * the others waiting, and block 0 polls the host's cancel flag there (rate-limited by the
 * global timer), so a cancel lands within a fraction of a millisecond even in a loop that
 * never ends.
 *
 * Device code only, every function static: each .cu file that includes it keeps its own
 * copy, which spares a relocatable-device-code build.
 */
#ifndef CFX_GRID_BARRIER_CUH
#define CFX_GRID_BARRIER_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "dev.h"
#include "kernels/grid.cuh"
#include "scheduler.h"

/* The grid: P_THREADS threads per block, as many blocks as stay resident at once but no more
 * than P_MAX_BLOCKS_PER_SM per multiprocessor (more only make the barrier slower). */
#define P_THREADS 256
#define P_MAX_BLOCKS_PER_SM 2
/* Cancel and status polls at most every SCHED_POLL_NS: a read of host-mapped memory
 * crosses PCIe (about a microsecond), so polling at every TICK would slow a tight one-block
 * loop by half. */
#define P_POLL_NS SCHED_POLL_NS

/* The barrier's state in device memory, zeroed before a launch: kernels/grid.cuh's word. */
typedef struct persist_bar {
    unsigned long long arrived; /* arrivals at every barrier so far */
} persist_bar;

static __device__ __forceinline__ unsigned long long persist_now_ns(void)
{
#ifdef CK_HOST_CLOCK /* the kernel on host threads (tests/cuda_host.h) */
    return CK_HOST_CLOCK();
#else
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
#endif
}

static __device__ __forceinline__ int32_t persist_load_status(const dev_state *s)
{
    return *(volatile const int32_t *)&s->status;
}

/* Thread 0 only. The first stop wins (returns 1 and writes where it was); later ones (the
 * same stop raised by other blocks, or anything after a cancel) change nothing. The caller
 * fences. */
static __device__ int persist_claim_stop(dev_state *state, int32_t status, int32_t pc, int64_t d0, int64_t d1)
{
    if (atomicCAS((int *)&state->status, CFX_OK, status) != CFX_OK)
        return 0;
    state->record = pc;
    state->detail[0] = d0;
    state->detail[1] = d1;
    return 1;
}

/* Thread 0 of block 0: the host's cancel flag, at most every P_POLL_NS. */
static __device__ void persist_poll_cancel(dev_state *state, const dev_control *control,
                                           unsigned long long *last, int32_t pc)
{
    unsigned long long t = persist_now_ns();
    if (t - *last < P_POLL_NS)
        return;
    *last = t;
    if (control->cancel && persist_claim_stop(state, CFX_STOP_CANCELLED, pc, 0, 0))
        __threadfence();
}

/* The grid barrier, in every thread of every block. Returns 1 (in every thread of the block)
 * when the run was stopped while waiting: the block must end. kernels/grid.cuh's release and
 * acquire make the writes of every block before the barrier visible to every block after it
 * (as cooperative groups' grid sync does). `pc` is where a cancel seen here stops the run. */
static __device__ int persist_grid_barrier(persist_bar *bar, dev_state *state, const dev_control *control,
                                           unsigned long long *last_poll, int32_t pc,
                                           volatile int32_t *record_word, volatile int32_t *barrier_word)
{
    __shared__ int s_stop;
    __syncthreads();
    if (threadIdx.x == 0) {
        int stop = 0;
        unsigned long long target = k_grid_arrive(&bar->arrived, gridDim.x);
        unsigned int spins = 0;
        while (!k_grid_passed(&bar->arrived, target)) {
#ifdef CK_HOST_SPIN
            CK_HOST_SPIN(); /* the host's stand-in gives the core away (tests/cuda_host.h) */
#endif
            /* a long wait (a hang, or a block far behind) is said in the block's progress word
             * (host-mapped: a write across PCIe, so not on the fast path) */
            if (spins == 1024u && barrier_word) { /* said once, and undone below once passed */
                *record_word = pc;
                *barrier_word = pc;
            }
            if (persist_load_status(state) != CFX_OK) {
                /* A stop seen while the barrier still looked incomplete may have been raised
                 * after it completed (a block that passed it went on to a CALL and paused).
                 * Look at the count again, after the status: if the barrier did complete, pass
                 * it and end at the stopping record like every other block. Otherwise block 0
                 * would leave without storing its private copies at a pause and the next
                 * launch would reload stale scalars. */
                stop = !k_grid_passed(&bar->arrived, target);
                break;
            }
            spins++;
            if (blockIdx.x == 0 && (spins & 63u) == 0)
                persist_poll_cancel(state, control, last_poll, pc);
        }
        if (spins > 1024u && barrier_word && !stop) /* passed: it waits there no longer */
            *barrier_word = -1;
        s_stop = stop;
    }
    __syncthreads();
    return s_stop;
}

#endif
