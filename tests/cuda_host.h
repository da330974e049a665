/* cuda_host.h: CUDA as much as cfx's persistent kernels need, on the host. Included before
 * a kernel's header in a C++ file compiled with the system C++ compiler: by ck_host.h for the
 * generated kernels (tests/test_gen.c), and through tests/host_cuda/cuda_runtime.h for the
 * interpreter's kernel (tests/persist_host.cpp).
 *
 * A block is a host thread that runs one CUDA thread: blockDim is 1, gridDim is the number of
 * threads the launcher starts, `__shared__` variables are per thread. So the grid barrier,
 * the split of work over blocks, the combine of split reductions, the one-block regions with
 * their publish and reload, and stops raised by one block while the others wait all run as
 * they do on a GPU, with the same atomics; what is not exercised is more than one thread per
 * block (every __syncthreads is then a no-op, a warp shuffle returns its own value). The
 * kernels' own code takes its one-thread paths where a block of one thread needs one (the
 * tiled and the warp-per-row products). */
#ifndef CFX_CUDA_HOST_H
#define CFX_CUDA_HOST_H

#include <sched.h>
#include <stdint.h>
#include <time.h>

#define CK_HOST_EMULATION 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __shared__ static thread_local
#define __align__(n) __attribute__((aligned(n)))

struct ck_dim3 {
    unsigned int x, y, z;
};
typedef struct float4 {
    float x, y, z, w;
} float4;
typedef struct double2 {
    double x, y;
} double2;

static thread_local ck_dim3 blockIdx;
static const ck_dim3 threadIdx = {0, 0, 0};
static const ck_dim3 blockDim = {1, 1, 1};
static ck_dim3 gridDim = {1, 1, 1};

static inline void __syncthreads(void) {}
static inline int __syncthreads_or(int p) { return p != 0; }
static inline void __syncwarp(void) {}
static inline void __threadfence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
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
/* A warp of one thread: every lane is this one. */
static inline double __shfl_xor_sync(unsigned int, double v, int) { return v; }
static inline unsigned long long __shfl_xor_sync(unsigned int, unsigned long long v, int) { return v; }

/* Dynamic shared memory (`extern __shared__` on a GPU): the block's buffer, which the
 * launcher sets in each block's thread before the kernel starts. */
static thread_local unsigned char *ck_host_smem;

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

#endif
