/* cuda_runtime.h, for the host: what the interpreter's kernel and the headers it includes
 * (device/interp_kernel.cuh, dev.h, grid_barrier.cuh) and the device graph launch probe
 * (device/probe.cuh) use of the CUDA runtime, so that tests/persist_host.cpp and
 * tests/test_standin.cpp compile them with the system C++ compiler. This folder is on those
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

#include "cuda_host.h"

typedef enum cudaError { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorLaunchFailure = 719 } cudaError_t;
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

#endif
