/* probe.cuh: the two kernels of the probe that says whether this device and driver run graphs
 * launched from the device (interp_launch.cu's persist_probe_device_launch). In a header
 * of their own so that tests/test_standin.cpp runs them on the host's stand-in for CUDA, which
 * records tail launches as the device makes them.
 *
 * The probe launches probe_parent as the node of a device graph (2 blocks of 32 threads);
 * the first time, it tail-launches probe_child's graph (1 block of 32 threads) and then
 * itself. A device that runs both leaves 1 + 100 + 1 in *count: one addition per launch,
 * whatever the size of the launch's grid, so only one thread of each adds. */
#ifndef CFX_PROBE_CUH
#define CFX_PROBE_CUH

#include <cuda_runtime.h>

static __global__ void probe_child(int *count)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        atomicAdd(count, 100);
}

static __global__ void probe_parent(cudaGraphExec_t child, int *count)
{
    if (blockIdx.x != 0 || threadIdx.x != 0)
        return;
    if (atomicAdd(count, 1) != 0)
        return;
    if (cudaGraphLaunch(child, cudaStreamGraphTailLaunch) != cudaSuccess)
        atomicAdd(count, 10000);
    else if (cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch) != cudaSuccess)
        atomicAdd(count, 20000);
}

#endif
