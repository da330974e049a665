/* cuda_runtime.h, for the host: what the interpreter's kernel and the headers it includes
 * (device/interp_kernel.cuh, dev.h, grid_barrier.cuh), the device graph launch probe
 * (device/probe.cuh) and the launch kernels with their launcher (device/launch.cuh) use of the
 * CUDA runtime, so that tests/persist_host.cpp, tests/test_standin.cpp and
 * tests/launch_host.cpp compile them with the system C++ compiler (and cublas_v2.h beside it,
 * the part of cuBLAS device/blas.cu calls). This folder is on those
 * files' include path, ahead of any CUDA toolkit; nothing else sees it.
 *
 * Device graph launch is modelled: cudaGraphLaunch into the tail-launch stream records the
 * graph, in the order of the calls, and the launcher (persist_host.cpp, test_standin.cpp) runs
 * what was recorded once every block has ended, in order, as the device does;
 * cudaGetCurrentGraphExec returns what the launcher says the running graph is. */
#ifndef CFX_HOST_CUDA_RUNTIME_H
#define CFX_HOST_CUDA_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include <tuple>
#include <utility>

#include "cuda_host.h"

typedef enum cudaError { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2,
                         cudaErrorLaunchFailure = 719 } cudaError_t;
typedef struct host_stream *cudaStream_t;
typedef struct host_graph *cudaGraph_t;
typedef struct host_graph_exec *cudaGraphExec_t;
#define cudaStreamGraphTailLaunch ((cudaStream_t)0x100)

/* dev_prog's L2 window (dev.h): only carried here, never applied */
typedef enum cudaAccessProperty { cudaAccessPropertyNormal, cudaAccessPropertyStreaming, cudaAccessPropertyPersisting } cudaAccessProperty;
typedef struct cudaAccessPolicyWindow {
    void *base_ptr;
    size_t num_bytes;
    float hitRatio;
    cudaAccessProperty hitProp, missProp;
} cudaAccessPolicyWindow;

typedef struct __attribute__((aligned(16))) uint4 {
    unsigned int x, y, z, w;
} uint4;

static inline const char *cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "error"; }

/* Device memory is the host's here (device/blas.cu's workspace). */
static inline cudaError_t cudaMalloc(void **p, size_t bytes)
{
    *p = malloc(bytes ? bytes : 1);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
static inline cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}

/* The tail launches of the running launch, in order (the launcher clears ck_host_ntails
 * before it and reads them after it), and the graph it runs in. */
#define CK_HOST_MAX_TAILS 8
static cudaGraphExec_t ck_host_tails[CK_HOST_MAX_TAILS];
static int ck_host_ntails;
static cudaGraphExec_t ck_host_current_graph;

static inline cudaError_t cudaGraphLaunch(cudaGraphExec_t g, cudaStream_t s)
{
    if (s != cudaStreamGraphTailLaunch || !g)
        return cudaErrorInvalidValue;
    int i = __atomic_fetch_add(&ck_host_ntails, 1, __ATOMIC_SEQ_CST);
    if (i >= CK_HOST_MAX_TAILS) {
        __atomic_fetch_sub(&ck_host_ntails, 1, __ATOMIC_SEQ_CST);
        return cudaErrorInvalidValue;
    }
    ck_host_tails[i] = g;
    return cudaSuccess;
}

static inline cudaGraphExec_t cudaGetCurrentGraphExec(void) { return ck_host_current_graph; }

/* A launch's error: the stand-in's launches either run or abort (ck_host_launch). */
static inline cudaError_t cudaGetLastError(void) { return cudaSuccess; }

/* device/launch.cuh's launches (its LAUNCH): kernel<<<grid, block, 0, stream>>>(args...) run at
 * once on host threads, one per block (tests/cuda_host.h), in ck_host_launch_order (the seed
 * advancing at each launch), returning when every block has ended: the host's launches are
 * synchronous and the stream is not used. The arguments are converted once to the kernel's
 * parameter types, and each CUDA thread gets its own copy of them, as on a GPU. A grid the
 * stand-in cannot run (more than CK_HOST_MAX_BLOCKS blocks, threads not a multiple of 32 up
 * to CK_HOST_MAX_THREADS) aborts with a message: the caller keeps its grids small (the kernels
 * of launch.cuh stride over what a smaller grid leaves). */
[[maybe_unused]] static int ck_host_launch_order = CK_HOST_SHUFFLE;
[[maybe_unused]] static unsigned long long ck_host_launch_seed, ck_host_launches;

template <typename... P> struct ck_host_call {
    void (*kernel)(P...);
    std::tuple<P...> args;
    static void run(void *self)
    {
        ck_host_call *c = (ck_host_call *)self;
        std::apply(c->kernel, c->args);
    }
};

template <typename... P, typename... A>
static inline void ck_host_launch(void (*kernel)(P...), unsigned grid, unsigned block, cudaStream_t stream,
                                  A &&...args)
{
    static_assert(sizeof...(P) == sizeof...(A), "a launch passes every parameter of its kernel");
    (void)stream;
    ck_host_call<P...> c{kernel, std::tuple<P...>(std::forward<A>(args)...)};
    ck_host_grid g;
    memset(&g, 0, sizeof g);
    g.blocks = grid;
    g.threads = block;
    g.order = ck_host_launch_order;
    g.seed = ck_host_launch_seed + ck_host_launches++;
    g.kernel = ck_host_call<P...>::run;
    g.arg = &c;
    if (ck_host_grid_start(&g) != 0) {
        fprintf(stderr, "cuda_runtime.h: a launch of %u blocks of %u threads cannot run on the stand-in (at most %d "
                "blocks of a multiple of 32 threads up to %d)\n", grid, block, CK_HOST_MAX_BLOCKS, CK_HOST_MAX_THREADS);
        abort();
    }
    ck_host_grid_join(&g);
}

#endif
