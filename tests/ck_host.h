/* ck_host.h: CUDA as much as the generated persistent kernels need, on the host, for
 * tests/test_gen.c. Included first in a C++ file of kernels that host/cgen.c wrote for the
 * CUDA target; the file is compiled with the system C++ compiler into a shared object.
 *
 * A block is a host thread that runs one CUDA thread: blockDim is 1, gridDim is the number of
 * threads ck_host_launch starts, `__shared__` variables are per thread. So the grid barrier,
 * the split of work over blocks (ck_share), the combine of split reductions, the one-block
 * regions with their publish and reload, and stops raised by one block while the others wait,
 * all run as they do on a GPU, with the same atomics; what is not exercised is more than one
 * thread per block (every __syncthreads is then a no-op). */
#ifndef CFX_CK_HOST_H
#define CFX_CK_HOST_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define CK_HOST_EMULATION 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __shared__ static thread_local

struct ck_dim3 {
    unsigned int x, y, z;
};
static thread_local ck_dim3 blockIdx;
static const ck_dim3 threadIdx = {0, 0, 0};
static const ck_dim3 blockDim = {1, 1, 1};
static ck_dim3 gridDim = {1, 1, 1};

static inline void __syncthreads(void) {}
static inline int __syncthreads_or(int p) { return p != 0; }
static inline void __threadfence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline int atomicCAS(int *p, int compare, int value)
{
    __atomic_compare_exchange_n(p, &compare, value, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return compare;
}
static inline unsigned int atomicAdd(unsigned int *p, unsigned int v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
static inline unsigned int atomicExch(unsigned int *p, unsigned int v)
{
    return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
}
static inline unsigned long long atomicMax(unsigned long long *p, unsigned long long v)
{
    unsigned long long old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (old < v &&
           !__atomic_compare_exchange_n(p, &old, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return old;
}
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dmul_rn(double a, double b) { return a * b; }

/* The global timer. A block spinning at a barrier reads it on every turn, so it also gives the
 * core away: the machine running the tests may have fewer cores than the grid has blocks. */
static inline unsigned long long ck_host_clock(void)
{
    struct timespec t;
    sched_yield();
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}
#define CK_HOST_CLOCK ck_host_clock

/* Skew: 1 holds block 0 back for a while at the start and after every grid barrier, 2 the
 * other blocks. A kernel missing a barrier where one block reads what another writes then
 * reads the old values, every time, instead of now and then. */
static int ck_host_skew;
static inline void ck_host_hold(void)
{
    if ((ck_host_skew == 1 && blockIdx.x == 0) || (ck_host_skew == 2 && blockIdx.x != 0)) {
        struct timespec ts = {0, 300000};
        nanosleep(&ts, NULL);
    }
}
#define CK_AFTER_BARRIER() ck_host_hold()

#include "compiled_kernel.cuh"

typedef void (*ck_host_kernel)(const ck_args a);

typedef struct ck_host_block {
    ck_host_kernel kernel;
    const ck_args *args;
    unsigned int index;
} ck_host_block;

static void *ck_host_block_main(void *arg)
{
    const ck_host_block *b = (const ck_host_block *)arg;
    blockIdx.x = b->index;
    ck_host_hold();
    b->kernel(*b->args);
    return NULL;
}

/* Runs kernel on `blocks` host threads (at most 16) with `skew` (above) and returns when all
 * have ended. */
extern "C" int ck_host_launch(ck_host_kernel kernel, const ck_args *args, unsigned int blocks,
                              int skew)
{
    ck_host_skew = skew;
    pthread_t threads[16];
    ck_host_block b[16];
    if (blocks < 1 || blocks > 16)
        return -1;
    gridDim.x = blocks;
    for (unsigned int i = 0; i < blocks; i++) {
        b[i].kernel = kernel;
        b[i].args = args;
        b[i].index = i;
        if (pthread_create(&threads[i], NULL, ck_host_block_main, &b[i]) != 0) {
            /* the blocks started wait for the missing ones: stop the run, as a failing block
             * would */
            atomicCAS(&args->state->status, 0, 7);
            for (unsigned int j = 0; j < i; j++)
                pthread_join(threads[j], NULL);
            return -1;
        }
    }
    for (unsigned int i = 0; i < blocks; i++)
        pthread_join(threads[i], NULL);
    return 0;
}

#endif
