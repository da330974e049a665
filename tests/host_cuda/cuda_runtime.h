/* cuda_runtime.h, for the host: what the interpreter's kernel and the headers it includes
 * (device/persistent_kernel.cuh, dev.h, grid_barrier.cuh) use of the CUDA runtime, so that
 * tests/persist_host.cpp compiles that kernel with the system C++ compiler. This folder is on
 * that one file's include path, ahead of any CUDA toolkit; nothing else sees it.
 *
 * Device graph launch is modelled: cudaGraphLaunch into the tail-launch stream records the
 * graph in the calling block's thread, and persist_host.cpp's launcher runs what was recorded
 * once every block has ended, in order, as the device does. */
#ifndef CFX_HOST_CUDA_RUNTIME_H
#define CFX_HOST_CUDA_RUNTIME_H

#include <stdint.h>

#include "cuda_host.h"

typedef enum cudaError { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorLaunchFailure = 719 } cudaError_t;
typedef struct host_stream *cudaStream_t;
typedef struct host_graph *cudaGraph_t;
typedef struct host_graph_exec *cudaGraphExec_t;
#define cudaStreamGraphTailLaunch ((cudaStream_t)0x100)

typedef struct __attribute__((aligned(16))) uint4 {
    unsigned int x, y, z, w;
} uint4;

static inline const char *cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "error"; }

/* persist_host.cpp: records a tail launch of g by this thread's block. */
cudaError_t cudaGraphLaunch(cudaGraphExec_t g, cudaStream_t s);
/* persist_host.cpp: the graph the calling kernel runs in. */
cudaGraphExec_t cudaGetCurrentGraphExec(void);

#endif
