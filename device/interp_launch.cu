/* interp_launch.cu: device graph launch for the cuda-persistent executor: the kernel
 * instantiated to tail-launch graphs from the device (persist_kernel<1>), the graph that
 * holds it, and the probe that says whether this device and driver run such graphs.
 *
 * In a file of its own, so in a module of its own: persist_kernel<1> calls the device
 * runtime's cudaGraphLaunch, and were that call not resolved where the module loads, only
 * this module would fail, the probe would say so, and the executor would take the pause
 * path (persist_kernel<0>, interp.cu's module). Built without -rdc, the call stays in
 * the cubin as a symbol for the driver to resolve at load, like cudaGraphSetConditional in
 * graphexec.cu (ptxas accepts these two and refuses any other unresolved function), which
 * is how NVIDIA's graphConditionalNodes sample is built by its Makefile.
 */
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "dev.h"
#include "interp_kernel.cuh"
#include "probe.cuh"

/* ==== the probe ============================================================================= */

/* (its kernels, probe_child and probe_parent, are probe.cuh's) */

/* One try: the parent as a cooperative node or not. 0, or -1 with why in err. */
static int probe_once(int cooperative, char *err, size_t errlen)
{
    cudaStream_t s = NULL;
    cudaGraph_t g_child = NULL, g_parent = NULL;
    cudaGraphExec_t e_child = NULL, e_parent = NULL;
    int *count = NULL, got = -1, rc = -1;
    void *child_args[1], *parent_args[2];

    CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUDA_TRY(cudaMalloc((void **)&count, sizeof *count));
    CUDA_TRY(cudaMemsetAsync(count, 0, sizeof *count, s));
    child_args[0] = &count;
    if (dev_device_graph((const void *)probe_child, child_args, 1, 32, 0, 0, NULL, s, &g_child, &e_child, err, errlen) != 0)
        goto fail;
    parent_args[0] = &e_child;
    parent_args[1] = &count;
    if (dev_device_graph((const void *)probe_parent, parent_args, 2, 32, 0, cooperative, NULL, s, &g_parent, &e_parent, err,
                       errlen) != 0)
        goto fail;
    CUDA_TRY(cudaGraphLaunch(e_parent, s));
    CUDA_TRY(cudaMemcpyAsync(&got, count, sizeof got, cudaMemcpyDeviceToHost, s));
    CUDA_TRY(cudaStreamSynchronize(s));
    if (got != 102) {
        snprintf(err, errlen, "a%s device graph that tail-launches a graph and itself left %d, not 102",
                 cooperative ? " cooperative" : "", got);
        goto fail;
    }
    rc = 0;
fail:
    if (rc != 0)
        (void)cudaGetLastError();
    if (e_parent) cudaGraphExecDestroy(e_parent);
    if (g_parent) cudaGraphDestroy(g_parent);
    if (e_child) cudaGraphExecDestroy(e_child);
    if (g_child) cudaGraphDestroy(g_child);
    if (count) cudaFree(count);
    if (s) cudaStreamDestroy(s);
    return rc;
}

int persist_probe_device_launch(int *cooperative, char *why, size_t len)
{
    /* once per process: the answer is the device's and the driver's */
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static int done, ok, coop;
    static char reason[384];
    pthread_mutex_lock(&lock);
    if (!done) {
        char first[192] = "";
        if (probe_once(1, first, sizeof first) == 0) {
            ok = coop = 1;
        } else if (probe_once(0, reason, sizeof reason) == 0) {
            ok = 1;
            coop = 0;
        } else {
            char second[192];
            snprintf(second, sizeof second, "%s", reason);
            snprintf(reason, sizeof reason, "cooperative node: %s; plain node: %s", first, second);
        }
        done = 1;
    }
    *cooperative = coop;
    if (!ok && why && len)
        snprintf(why, len, "%s", reason);
    pthread_mutex_unlock(&lock);
    return ok;
}

/* ==== the executor's graph ==================================================================== */

cudaError_t persist_launch_occupancy(int *per_sm, size_t smem)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, persist_kernel<1>, P_THREADS, smem);
}

int persist_launch_graph(const persist_args *a, int nblocks, size_t smem, int cooperative,
                         const cudaAccessPolicyWindow *l2, cudaStream_t upload, cudaGraph_t *graph,
                         cudaGraphExec_t *exec, char *err, size_t errlen)
{
    void *args[1] = {(void *)a};
    if (dev_device_graph((const void *)persist_kernel<1>, args, nblocks, P_THREADS, smem, cooperative, l2, upload, graph,
                       exec, err, errlen) == 0)
        return 0;
    if (*graph)
        cudaGraphDestroy(*graph);
    *graph = NULL;
    return -1;
}
