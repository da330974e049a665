/* grid.cuh: the core of the grid barrier that both persistent kernels pass (the interpreter's,
 * device/grid_barrier.cuh, and the compiled one, device/compiled_kernel.cuh) and that
 * profiling/floors.cu times. Device code only; NVRTC gets it as text.
 *
 * A counting barrier. One 64-bit word counts the arrivals of every barrier of a run; thread 0
 * of each block adds one with release semantics, and the value before its add says which
 * barrier it is at: the arrivals at barrier k are k*n .. k*n + n-1 for a grid of n blocks,
 * since no block arrives at barrier k+1 before barrier k has completed. It then spins with
 * acquire loads until the word reaches (k+1)*n. One atomic per block and one line to spin on,
 * where an arrival counter with a generation number needs a reset and a second word written
 * behind a full fence by the last block (two more trips to L2 on the critical path). The word
 * needs no reset between barriers, nor between the launches of one run, as long as every
 * launch ends with every barrier complete; it is zeroed when a run starts.
 *
 * The release on the add publishes what the block wrote before the barrier (thread 0 reaches
 * it after a __syncthreads, which orders the block's writes before its own); the acquire on
 * the load that sees the barrier complete makes the other blocks' writes visible to thread 0,
 * and the __syncthreads after it to the rest of the block. This is how cooperative groups'
 * grid sync orders memory, without a cooperative launch.
 */
#ifndef CFX_GRID_CUH
#define CFX_GRID_CUH

/* Adds one to *word with release semantics at device scope; returns the value before. */
static __device__ __forceinline__ unsigned long long k_grid_add_release(unsigned long long *word)
{
#if defined(__CUDA_ARCH__)
    unsigned long long old;
    asm volatile("atom.add.release.gpu.u64 %0, [%1], 1;" : "=l"(old) : "l"(word) : "memory");
    return old;
#else /* the host stand-in (tests/cuda_host.h), and nvcc's host pass, which never runs it */
#ifdef CK_HOST_GRID_ARRIVE
    CK_HOST_GRID_ARRIVE(); /* the block's next grid epoch (tests/race_host.h) */
#endif
    return __atomic_fetch_add(word, 1ull, __ATOMIC_SEQ_CST);
#endif
}

/* *word, loaded with acquire semantics at device scope. */
static __device__ __forceinline__ unsigned long long k_grid_load_acquire(const unsigned long long *word)
{
#if defined(__CUDA_ARCH__)
    unsigned long long v;
    asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(word) : "memory");
    return v;
#else
    return __atomic_load_n(word, __ATOMIC_SEQ_CST);
#endif
}

/* Thread 0 of a block of a grid of `nblocks`: arrives at the barrier and returns the count at
 * which it completes. */
static __device__ __forceinline__ unsigned long long k_grid_arrive(unsigned long long *word,
                                                                   unsigned int nblocks)
{
    unsigned long long old = k_grid_add_release(word);
    return (old / nblocks + 1) * nblocks;
}

/* Thread 0: 1 once the barrier that completes at `target` has completed. */
static __device__ __forceinline__ int k_grid_passed(const unsigned long long *word,
                                                    unsigned long long target)
{
    return k_grid_load_acquire(word) >= target;
}

#endif
