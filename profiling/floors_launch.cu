/* floors_launch.cu: the device tail-launch floors (floors.h), in a file of its own so in a
 * module of its own: its kernels call the device runtime's cudaGraphLaunch, and where that
 * does not load or run, only these floors say "not measured", never the others.
 *
 * Both are what the cuda-persistent executor's device graph launch pays per record whose
 * work it launches, less the work: a kernel, the node of a device graph, in the executor's
 * grid shape, that ends and tail-launches itself (tail_self), or first an empty graph, the
 * stand-in of a site's graph, then itself (tail_site). Differential, as the loop floors:
 * (t(n2) - t(1)) / (n2 - 1).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "floors.h"
#include "device/grid_barrier.cuh"


static __global__ void fl_empty(void) {}

/* Counts down; until 0, tail-launches `site` (when given) and then its own graph. */
static __global__ void __launch_bounds__(P_THREADS, P_MAX_BLOCKS_PER_SM)
fl_tail(int *counter, cudaGraphExec_t site)
{
    if (blockIdx.x != 0 || threadIdx.x != 0)
        return;
    int left = *counter - 1;
    *counter = left;
    if (left <= 0)
        return;
    if (site && cudaGraphLaunch(site, cudaStreamGraphTailLaunch) != cudaSuccess)
        *counter = -1000000;
    else if (cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch) != cudaSuccess)
        *counter = -2000000;
}

static __global__ void fl_set(int *counter, int n)
{
    *counter = n;
}

/* A device graph of one kernel node, uploaded on s. */
static cudaError_t device_graph(const void *func, void **args, unsigned blocks, unsigned threads, cudaStream_t s,
                                cudaGraph_t *g, cudaGraphExec_t *e)
{
    cudaKernelNodeParams kp = {};
    cudaGraphNode_t node;
    cudaGraphInstantiateParams ip = {};
    cudaError_t rc;
    kp.func = (void *)func;
    kp.gridDim = dim3(blocks);
    kp.blockDim = dim3(threads);
    kp.kernelParams = args;
    if ((rc = cudaGraphCreate(g, 0)) != cudaSuccess || (rc = cudaGraphAddKernelNode(&node, *g, NULL, 0, &kp)) != cudaSuccess)
        return rc;
    ip.flags = cudaGraphInstantiateFlagDeviceLaunch | cudaGraphInstantiateFlagUpload;
    ip.uploadStream = s;
    return cudaGraphInstantiateWithParams(e, *g, &ip);
}

extern "C" int floors_measure_tail(floors *out, int quick, char *err, size_t errlen)
{
    cudaStream_t s = NULL;
    cudaEvent_t t0 = NULL, t1 = NULL;
    cudaGraph_t g_site = NULL, g_tail[2] = {NULL, NULL};
    cudaGraphExec_t e_site = NULL, e_tail[2] = {NULL, NULL};
    int *counter = NULL, dev = 0, sms = 0, per_sm = 0, left = -1, rc = -1;
    const int repeats = quick ? 5 : 21, n2 = quick ? 1000 : 10000;
    double v[2][64];
    cudaGraphExec_t sites[2];
    void *args[2][2];
    unsigned blocks;

    FL_TRY(cudaGetDevice(&dev));
    FL_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    FL_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fl_tail, P_THREADS, 0));
    blocks = (unsigned)(sms * (per_sm < P_MAX_BLOCKS_PER_SM ? per_sm : P_MAX_BLOCKS_PER_SM));
    FL_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    FL_TRY(cudaEventCreate(&t0));
    FL_TRY(cudaEventCreate(&t1));
    FL_TRY(cudaMalloc((void **)&counter, sizeof *counter));
    FL_TRY(device_graph((const void *)fl_empty, NULL, 1, 1, s, &g_site, &e_site));
    sites[0] = NULL;
    sites[1] = e_site;
    for (int k = 0; k < 2; k++) {
        args[k][0] = &counter;
        args[k][1] = &sites[k];
        FL_TRY(device_graph((const void *)fl_tail, args[k], blocks, P_THREADS, s, &g_tail[k], &e_tail[k]));
    }
    for (int k = 0; k < 2; k++)
        for (int r = -1; r < repeats; r++) {
            float ms[2] = {0, 0};
            for (int pass = 0; pass < 2; pass++) {
                fl_set<<<1, 1, 0, s>>>(counter, pass == 0 ? 1 : n2);
                FL_TRY(cudaGetLastError());
                FL_TRY(cudaEventRecord(t0, s));
                FL_TRY(cudaGraphLaunch(e_tail[k], s));
                FL_TRY(cudaEventRecord(t1, s));
                FL_TRY(cudaEventSynchronize(t1));
                FL_TRY(cudaEventElapsedTime(&ms[pass], t0, t1));
                FL_TRY(cudaMemcpy(&left, counter, sizeof left, cudaMemcpyDeviceToHost));
                if (left != 0) {
                    snprintf(err, errlen, "the tail-launch chain ended with its counter at %d, not 0%s", left,
                             left <= -1000000 ? " (a device-side cudaGraphLaunch failed)" : "");
                    goto fail;
                }
            }
            if (r >= 0)
                v[k][r] = 1e3 * (ms[1] - ms[0]) / (n2 - 1);
        }
    out->tail_self_us = floors_summarize(v[0], repeats);
    out->tail_site_us = floors_summarize(v[1], repeats);
    out->tail_blocks = (int)blocks;
    rc = 0;
fail:
    if (rc != 0)
        (void)cudaGetLastError();
    for (int k = 0; k < 2; k++) {
        if (e_tail[k]) cudaGraphExecDestroy(e_tail[k]);
        if (g_tail[k]) cudaGraphDestroy(g_tail[k]);
    }
    if (e_site) cudaGraphExecDestroy(e_site);
    if (g_site) cudaGraphDestroy(g_site);
    if (counter) cudaFree(counter);
    if (t0) cudaEventDestroy(t0);
    if (t1) cudaEventDestroy(t1);
    if (s) cudaStreamDestroy(s);
    return rc;
}
