/* floors.cu: the floors of floors.h, measured with CUDA events on the current device.
 *
 * Device code first (the kernels each floor times), then the timing helpers, then one
 * function per floor, then floors_measure. Every CUDA call goes through FL_TRY; a floor
 * that cannot be measured fails the whole measurement with the call that failed, since a
 * table read against a wrong floor is worse than none.
 *
 * The loop floors are differential: a kernel or graph that runs the mechanism n1 times and
 * one that runs it n2 times, (t2 - t1) / (n2 - n1), so the launch that wraps the loop
 * cancels out and what remains is the price of one more iteration.
 */
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "floors.h"
#include "kernels/grid.cuh"
#include "device/grid_barrier.cuh"


enum { BARRIER_THREADS = P_THREADS };

/* ---- device code ----------------------------------------------------------------- */

__global__ void empty_kernel(void) {}

__global__ void set_counter(int *counter, int n)
{
    *counter = n;
}

/* Conditional nodes (WHILE, cudaGraphSetConditional, cudaGraphAddNode) need CUDA 12.4;
 * with an older toolkit the WHILE floor reports that it cannot be measured. */
#define FL_HAVE_WHILE (CUDART_VERSION >= 12040)

#if FL_HAVE_WHILE
/* The body of the WHILE node: one iteration is one decrement; the last one clears the
 * condition, so a counter of n runs the body n times (the default value 1 starts it). */
__global__ void while_body(cudaGraphConditionalHandle handle, int *counter)
{
    int left = *counter - 1;
    *counter = left;
    if (left <= 0)
        cudaGraphSetConditional(handle, 0);
}
#endif

/* n passes of the persistent executor's grid barrier, with its status poll in every wait and
 * block 0's cancel poll every 64 spins (the status stays ok and the flag clear, as in a run
 * that is not being stopped), in a grid shaped as the executor shapes its own. */
__global__ void __launch_bounds__(P_THREADS, P_MAX_BLOCKS_PER_SM)
grid_barrier_kernel(persist_bar *bar, dev_state *state, const dev_control *control, int n)
{
    unsigned long long last_poll = 0;
    for (int i = 0; i < n; i++)
        if (persist_grid_barrier(bar, state, control, &last_poll, 0, NULL, NULL))
            return;
}

/* ---- grid barrier variants, measured beside the executor's to choose its design ---------- */

/* The counting barrier of kernels/grid.cuh (one release add per block, acquire spin on one
 * word), with a status poll at every spin, as the executor's would have. */
__global__ void __launch_bounds__(P_THREADS, P_MAX_BLOCKS_PER_SM)
barrier_counting_kernel(unsigned long long *words, dev_state *state, int n)
{
    __shared__ int s_stop;
    for (int i = 0; i < n; i++) {
        __syncthreads();
        if (threadIdx.x == 0) {
            int stop = 0;
            unsigned long long target = k_grid_arrive(words, gridDim.x);
            while (!k_grid_passed(words, target))
                if (persist_load_status(state) != CFX_OK) {
                    stop = 1;
                    break;
                }
            s_stop = stop;
        }
        __syncthreads();
        if (s_stop)
            return;
    }
}

/* Two levels: blocks arrive in groups of FL_GROUP on a word of their group's (each word on its
 * own 128-byte line), the last of a group arrives for it at the top word, and every block
 * spins on the top word: FL_GROUP arrivals contend on each line instead of the whole grid. */
#define FL_GROUP 16
__global__ void __launch_bounds__(P_THREADS, P_MAX_BLOCKS_PER_SM)
barrier_tree_kernel(unsigned long long *words, dev_state *state, int n)
{
    __shared__ int s_stop;
    const unsigned int g = blockIdx.x / FL_GROUP, ngroups = (gridDim.x + FL_GROUP - 1) / FL_GROUP;
    const unsigned int size = gridDim.x - g * FL_GROUP < FL_GROUP ? gridDim.x - g * FL_GROUP : FL_GROUP;
    unsigned long long *top = words, *mine = words + 16 * (1 + g);
    for (int i = 0; i < n; i++) {
        __syncthreads();
        if (threadIdx.x == 0) {
            int stop = 0;
            unsigned long long old;
            asm volatile("atom.add.acq_rel.gpu.u64 %0, [%1], 1;" : "=l"(old) : "l"(mine) : "memory");
            unsigned long long target = (old / size + 1) * ngroups;
            if (old % size == size - 1)
                k_grid_add_release(top);
            while (!k_grid_passed(top, target))
                if (persist_load_status(state) != CFX_OK) {
                    stop = 1;
                    break;
                }
            s_stop = stop;
        }
        __syncthreads();
        if (s_stop)
            return;
    }
}

/* Cooperative groups' grid sync, for comparison (it needs a cooperative launch). */
__global__ void __launch_bounds__(P_THREADS, P_MAX_BLOCKS_PER_SM)
barrier_cg_kernel(unsigned long long *words, dev_state *state, int n)
{
    (void)words;
    (void)state;
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    for (int i = 0; i < n; i++)
        grid.sync();
}

/* `sink` keeps the loop from being anything but n barriers: each thread writes once. */
__global__ void block_barrier_kernel(int n, int *sink)
{
    for (int i = 0; i < n; i++)
        __syncthreads();
    sink[threadIdx.x] = n;
}

/* ---- timing helpers ---------------------------------------------------------------- */

extern "C" floor_stat floors_summarize(double *v, int n)
{
    floor_stat s;
    s.median = bench_median(v, n);
    s.min = v[0];
    s.max = v[n - 1];
    s.repeats = n;
    return s;
}

/* Ends a timing started by recording t0 on s: records t1, waits for it and sets *ms. */
static int stop_timer(cudaStream_t s, cudaEvent_t t0, cudaEvent_t t1, float *ms, char *err,
                      size_t errlen)
{
    FL_TRY(cudaEventRecord(t1, s));
    FL_TRY(cudaEventSynchronize(t1));
    FL_TRY(cudaEventElapsedTime(ms, t0, t1));
    return 0;
fail:
    return -1;
}

/* ---- the floors -------------------------------------------------------------------- */

/* Empty kernels launched back to back: per launch, the host's launch rate or the GPU's
 * dispatch rate, whichever is slower. */
static int measure_launch(cudaStream_t s, cudaEvent_t t0, cudaEvent_t t1, int repeats,
                          int per, double *v, char *err, size_t errlen)
{
    float ms = 0;
    for (int r = -1; r < repeats; r++) { /* r == -1 is the warm-up */
        FL_TRY(cudaEventRecord(t0, s));
        for (int i = 0; i < per; i++) {
            empty_kernel<<<1, 1, 0, s>>>();
            FL_LAUNCHED();
        }
        if (stop_timer(s, t0, t1, &ms, err, errlen) != 0)
            goto fail;
        if (r >= 0)
            v[r] = 1e3 * ms / per;
    }
    return 0;
fail:
    return -1;
}

/* A 4-byte copy to pinned host memory and a stream sync, `per` times in a row. The events
 * bracket the whole sequence, so the time includes the host waking up and issuing the next
 * copy: what a host-side decision costs per loop iteration. */
static int measure_d2h_sync(cudaStream_t s, cudaEvent_t t0, cudaEvent_t t1, int repeats,
                            int per, double *v, char *err, size_t errlen)
{
    int *dflag = NULL, *hflag = NULL;
    float ms = 0;
    FL_TRY(cudaMalloc((void **)&dflag, sizeof *dflag));
    FL_TRY(cudaMallocHost((void **)&hflag, sizeof *hflag));
    FL_TRY(cudaMemsetAsync(dflag, 0, sizeof *dflag, s));
    for (int r = -1; r < repeats; r++) {
        FL_TRY(cudaEventRecord(t0, s));
        for (int i = 0; i < per; i++) {
            FL_TRY(cudaMemcpyAsync(hflag, dflag, sizeof *dflag, cudaMemcpyDeviceToHost, s));
            FL_TRY(cudaStreamSynchronize(s));
        }
        if (stop_timer(s, t0, t1, &ms, err, errlen) != 0)
            goto fail;
        if (r >= 0)
            v[r] = 1e3 * ms / per;
    }
    cudaFree(dflag);
    cudaFreeHost(hflag);
    return 0;
fail:
    cudaFree(dflag);
    cudaFreeHost(hflag);
    return -1;
}

#if FL_HAVE_WHILE
/* A graph holding one WHILE conditional node whose body is while_body. Launched with the
 * counter at n, the body runs n times; the counter is read back afterwards to prove it.
 * The handle's default 1 with cudaGraphCondAssignDefault is applied at the start of every
 * launch, so each launch enters the body once and the counter alone decides how often. */
static int measure_while(cudaStream_t s, cudaEvent_t t0, cudaEvent_t t1, int repeats, int n2,
                         double *v, char *err, size_t errlen)
{
    const int n1 = 1;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    cudaGraphConditionalHandle handle;
    /* Aggregate-initialized: the union inside has no default constructor in C++. Its first
     * member is the zero padding, so every byte not set below is 0 as the API requires. */
    cudaGraphNodeParams cond = {cudaGraphNodeTypeConditional, {0, 0, 0}, {{0}}, 0};
    cudaGraphNode_t cond_node, body_node;
    cudaKernelNodeParams kp = {};
    cudaGraph_t body;
    int *counter = NULL;
    int left = -1;
    void *args[2];
    float ms1 = 0, ms2 = 0;

    FL_TRY(cudaMalloc((void **)&counter, sizeof *counter));
    FL_TRY(cudaGraphCreate(&graph, 0));
    FL_TRY(cudaGraphConditionalHandleCreate(&handle, graph, 1, cudaGraphCondAssignDefault));
    cond.conditional.handle = handle;
    cond.conditional.type = cudaGraphCondTypeWhile;
    cond.conditional.size = 1;
#if CUDART_VERSION >= 13000
    FL_TRY(cudaGraphAddNode(&cond_node, graph, NULL, NULL, 0, &cond));
#else
    FL_TRY(cudaGraphAddNode(&cond_node, graph, NULL, 0, &cond));
#endif
    body = cond.conditional.phGraph_out[0];
    args[0] = &handle;
    args[1] = &counter;
    kp.func = (void *)while_body;
    kp.gridDim = dim3(1, 1, 1);
    kp.blockDim = dim3(1, 1, 1);
    kp.sharedMemBytes = 0;
    kp.kernelParams = args;
    kp.extra = NULL;
    FL_TRY(cudaGraphAddKernelNode(&body_node, body, NULL, 0, &kp));
    FL_TRY(cudaGraphInstantiate(&exec, graph, 0));

    for (int r = -1; r < repeats; r++) {
        for (int pass = 0; pass < 2; pass++) {
            int n = pass == 0 ? n1 : n2;
            set_counter<<<1, 1, 0, s>>>(counter, n);
            FL_LAUNCHED();
            FL_TRY(cudaEventRecord(t0, s));
            FL_TRY(cudaGraphLaunch(exec, s));
            if (stop_timer(s, t0, t1, pass == 0 ? &ms1 : &ms2, err, errlen) != 0)
                goto fail;
            FL_TRY(cudaMemcpy(&left, counter, sizeof left, cudaMemcpyDeviceToHost));
            if (left != 0) {
                snprintf(err, errlen, "WHILE node floor: the body left the counter at %d, "
                         "not 0, after %d iterations", left, n);
                goto fail;
            }
        }
        if (r >= 0)
            v[r] = 1e3 * (ms2 - ms1) / (n2 - n1);
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaFree(counter);
    return 0;
fail:
    if (exec)
        cudaGraphExecDestroy(exec);
    if (graph)
        cudaGraphDestroy(graph);
    cudaFree(counter);
    return -1;
}
#else
static int measure_while(cudaStream_t s, cudaEvent_t t0, cudaEvent_t t1, int repeats, int n2,
                         double *v, char *err, size_t errlen)
{
    (void)s, (void)t0, (void)t1, (void)repeats, (void)n2, (void)v;
    snprintf(err, errlen, "WHILE node floor: CUDA %d has no conditional graph nodes (12.4 or later needed)",
             (int)CUDART_VERSION);
    return -1;
}
#endif

/* The executor's grid: P_THREADS threads per block, as many blocks per multiprocessor as
 * stay resident, at most P_MAX_BLOCKS_PER_SM; launched cooperatively where the device allows
 * it, as the executor's pause-and-relaunch path does, so that every block is guaranteed
 * resident (a barrier over blocks that are not would hang). The run state it polls is
 * ok throughout and the cancel flag lives in host-mapped memory, as the executor's. */
static int measure_grid_barrier(cudaStream_t s, cudaEvent_t t0, cudaEvent_t t1, int repeats,
                                int n2, int sms, double *v, int *blocks, char *err, size_t errlen)
{
    const int n1 = 1;
    persist_bar *b = NULL;
    dev_state *state = NULL;
    dev_control *control = NULL, *control_dev = NULL;
    int coop = 0, dev = 0, n = 0, per_sm = 0;
    float ms1 = 0, ms2 = 0;
    void *args[4];
    dim3 grid(1), block(P_THREADS);

    FL_TRY(cudaGetDevice(&dev));
    FL_TRY(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
    FL_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, grid_barrier_kernel, P_THREADS, 0));
    if (per_sm < 1) {
        snprintf(err, errlen, "grid barrier floor: the barrier kernel does not fit on a multiprocessor");
        goto fail;
    }
    grid = dim3((unsigned)(sms * (per_sm < P_MAX_BLOCKS_PER_SM ? per_sm : P_MAX_BLOCKS_PER_SM)));
    *blocks = (int)grid.x;
    FL_TRY(cudaMalloc((void **)&b, sizeof *b));
    FL_TRY(cudaMalloc((void **)&state, sizeof *state));
    FL_TRY(cudaHostAlloc((void **)&control, sizeof *control, cudaHostAllocMapped));
    memset((void *)control, 0, sizeof *control);
    FL_TRY(cudaHostGetDevicePointer((void **)&control_dev, control, 0));
    FL_TRY(cudaMemsetAsync(b, 0, sizeof *b, s));
    FL_TRY(cudaMemsetAsync(state, 0, sizeof *state, s));
    args[0] = &b;
    args[1] = &state;
    args[2] = &control_dev;
    args[3] = &n;
    for (int r = -1; r < repeats; r++) {
        for (int pass = 0; pass < 2; pass++) {
            n = pass == 0 ? n1 : n2;
            FL_TRY(cudaEventRecord(t0, s));
            if (coop) {
                FL_TRY(cudaLaunchCooperativeKernel((void *)grid_barrier_kernel, grid, block,
                                                   args, 0, s));
            } else {
                grid_barrier_kernel<<<grid, block, 0, s>>>(b, state, control_dev, n);
                FL_LAUNCHED();
            }
            if (stop_timer(s, t0, t1, pass == 0 ? &ms1 : &ms2, err, errlen) != 0)
                goto fail;
        }
        if (r >= 0)
            v[r] = 1e3 * (ms2 - ms1) / (n2 - n1);
    }
    cudaFree(b);
    cudaFree(state);
    cudaFreeHost(control);
    return 0;
fail:
    cudaFree(b);
    cudaFree(state);
    if (control)
        cudaFreeHost(control);
    return -1;
}

/* One variant of the table floors_barrier_variants: `per_sm` blocks per multiprocessor (as
 * many as fit when 0), launched cooperatively (which every variant's grid must allow: all
 * resident). */
typedef void (*barrier_fn)(unsigned long long *, dev_state *, int);
static int measure_barrier_variant(cudaStream_t s, cudaEvent_t t0, cudaEvent_t t1, int repeats, int n2, int sms,
                                   barrier_fn fn, int per_sm_max, double *v, int *blocks, char *err,
                                   size_t errlen)
{
    const int n1 = 1;
    unsigned long long *words = NULL;
    dev_state *state = NULL;
    int coop = 0, dev = 0, n = 0, per_sm = 0;
    float ms1 = 0, ms2 = 0;
    void *args[3];
    dim3 grid(1), block(P_THREADS);

    FL_TRY(cudaGetDevice(&dev));
    FL_TRY(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
    if (!coop) {
        snprintf(err, errlen, "barrier variants: the device has no cooperative launch");
        goto fail;
    }
    FL_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, P_THREADS, 0));
    if (per_sm < 1) {
        snprintf(err, errlen, "barrier variants: the kernel does not fit on a multiprocessor");
        goto fail;
    }
    grid = dim3((unsigned)(sms * (per_sm < per_sm_max ? per_sm : per_sm_max)));
    *blocks = (int)grid.x;
    FL_TRY(cudaMalloc((void **)&words, 16 * sizeof *words * (2 + grid.x / FL_GROUP)));
    FL_TRY(cudaMalloc((void **)&state, sizeof *state));
    FL_TRY(cudaMemsetAsync(state, 0, sizeof *state, s));
    args[0] = &words;
    args[1] = &state;
    args[2] = &n;
    for (int r = -1; r < repeats; r++) {
        for (int pass = 0; pass < 2; pass++) {
            n = pass == 0 ? n1 : n2;
            FL_TRY(cudaMemsetAsync(words, 0, 16 * sizeof *words * (2 + grid.x / FL_GROUP), s));
            FL_TRY(cudaEventRecord(t0, s));
            FL_TRY(cudaLaunchCooperativeKernel((void *)fn, grid, block, args, 0, s));
            if (stop_timer(s, t0, t1, pass == 0 ? &ms1 : &ms2, err, errlen) != 0)
                goto fail;
        }
        if (r >= 0)
            v[r] = 1e3 * (ms2 - ms1) / (n2 - n1);
    }
    cudaFree(words);
    cudaFree(state);
    return 0;
fail:
    cudaFree(words);
    cudaFree(state);
    return -1;
}

extern "C" const char *const floors_barrier_variant_names[FL_BARRIER_VARIANTS] = {
    "counting barrier (one release add, acquire spin), executor's grid",
    "counting barrier, one block per multiprocessor",
    "two-level counting barrier (groups of 16 blocks), executor's grid",
    "cooperative groups grid.sync(), executor's grid",
};

static int measure_block_barrier(cudaStream_t s, cudaEvent_t t0, cudaEvent_t t1, int repeats,
                                 int n2, double *v, char *err, size_t errlen)
{
    const int n1 = 1;
    int *sink = NULL;
    float ms1 = 0, ms2 = 0;
    FL_TRY(cudaMalloc((void **)&sink, BARRIER_THREADS * sizeof *sink));
    for (int r = -1; r < repeats; r++) {
        for (int pass = 0; pass < 2; pass++) {
            FL_TRY(cudaEventRecord(t0, s));
            block_barrier_kernel<<<1, BARRIER_THREADS, 0, s>>>(pass == 0 ? n1 : n2, sink);
            FL_LAUNCHED();
            if (stop_timer(s, t0, t1, pass == 0 ? &ms1 : &ms2, err, errlen) != 0)
                goto fail;
        }
        if (r >= 0)
            v[r] = 1e3 * (ms2 - ms1) / (n2 - n1);
    }
    cudaFree(sink);
    return 0;
fail:
    cudaFree(sink);
    return -1;
}

/* A device-to-device copy far larger than any L2: bytes read plus bytes written over the
 * time. Tries 512 MiB buffers, then smaller ones where memory is short. */
static int measure_bandwidth(cudaStream_t s, cudaEvent_t t0, cudaEvent_t t1, int repeats,
                             double *v, double *copy_bytes, char *err, size_t errlen)
{
    void *src = NULL, *dst = NULL;
    size_t bytes = (size_t)512 << 20;
    float ms = 0;
    while (bytes >= ((size_t)64 << 20)) {
        if (cudaMalloc(&src, bytes) == cudaSuccess && cudaMalloc(&dst, bytes) == cudaSuccess)
            break;
        cudaFree(src);
        src = NULL;
        dst = NULL;
        cudaGetLastError(); /* clear the allocation failure before trying smaller */
        bytes /= 2;
    }
    if (!src || !dst) {
        snprintf(err, errlen, "bandwidth floor: cannot allocate two 64 MiB device buffers");
        goto fail;
    }
    FL_TRY(cudaMemsetAsync(src, 1, bytes, s));
    for (int r = -1; r < repeats; r++) {
        FL_TRY(cudaEventRecord(t0, s));
        FL_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
        if (stop_timer(s, t0, t1, &ms, err, errlen) != 0)
            goto fail;
        if (r >= 0)
            v[r] = 2.0 * (double)bytes / (ms * 1e-3) / 1e9;
    }
    *copy_bytes = 2.0 * (double)bytes;
    cudaFree(src);
    cudaFree(dst);
    return 0;
fail:
    cudaFree(src);
    cudaFree(dst);
    return -1;
}

/* Each pass reads all of p (n 16-byte words) once, spread over the grid, through L2 only. */
static __global__ void l2_read_kernel(const uint4 *p, size_t n, int passes, unsigned *sink)
{
    unsigned acc = 0;
    for (int k = 0; k < passes; k++)
        for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
            uint4 w = __ldcg(p + i);
            acc ^= w.x ^ w.y ^ w.z ^ w.w;
        }
    if (acc == 0x9e3779b9u) /* never, as far as the compiler knows: keeps the loads */
        sink[0] = acc;
}

/* Reads of a 16 MiB buffer that stays in L2, by the executor's grid: bytes over the time of
 * one pass, differential over 1 and 11 passes (the first one, untimed, brings it in). */
static int measure_l2_read(cudaStream_t s, cudaEvent_t t0, cudaEvent_t t1, int repeats, int sms, double *v,
                           char *err, size_t errlen)
{
    const size_t bytes = (size_t)16 << 20;
    const int n1 = 1, n2 = 11;
    uint4 *buf = NULL;
    unsigned *sink = NULL;
    float ms1 = 0, ms2 = 0;
    FL_TRY(cudaMalloc((void **)&buf, bytes));
    FL_TRY(cudaMalloc((void **)&sink, sizeof *sink));
    FL_TRY(cudaMemsetAsync(buf, 1, bytes, s));
    for (int r = -1; r < repeats; r++) {
        for (int pass = 0; pass < 2; pass++) {
            FL_TRY(cudaEventRecord(t0, s));
            l2_read_kernel<<<sms * P_MAX_BLOCKS_PER_SM, BARRIER_THREADS, 0, s>>>(buf, bytes / 16, pass == 0 ? n1 : n2,
                                                                                  sink);
            FL_LAUNCHED();
            if (stop_timer(s, t0, t1, pass == 0 ? &ms1 : &ms2, err, errlen) != 0)
                goto fail;
        }
        if (r >= 0)
            v[r] = (double)bytes * (n2 - n1) / ((ms2 - ms1) * 1e-3) / 1e9;
    }
    cudaFree(buf);
    cudaFree(sink);
    return 0;
fail:
    cudaFree(buf);
    cudaFree(sink);
    return -1;
}

/* ---- entry points ------------------------------------------------------------------ */

extern "C" int floors_device_info(floors_device *out, char *err, size_t errlen)
{
    int count = 0, dev = 0;
    cudaDeviceProp prop;
    memset(out, 0, sizeof *out);
    FL_TRY(cudaGetDeviceCount(&count));
    if (count < 1) {
        snprintf(err, errlen, "cudaGetDeviceCount found no device");
        goto fail;
    }
    FL_TRY(cudaGetDevice(&dev));
    FL_TRY(cudaGetDeviceProperties(&prop, dev));
    snprintf(out->name, sizeof out->name, "%s", prop.name);
    out->sms = prop.multiProcessorCount;
    out->cc_major = prop.major;
    out->cc_minor = prop.minor;
    out->memory_gib = (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0);
    FL_TRY(cudaDriverGetVersion(&out->driver_version));
    FL_TRY(cudaRuntimeGetVersion(&out->runtime_version));
    return 0;
fail:
    return -1;
}

enum { MAX_REPEATS = 64 };

extern "C" int floors_measure(floors *out, int quick, char *err, size_t errlen)
{
    cudaStream_t s = NULL;
    cudaEvent_t t0 = NULL, t1 = NULL;
    int dev = 0, sms = 0;
    int repeats = quick ? 5 : 21;
    double v[MAX_REPEATS];

    memset(out, 0, sizeof *out);
    FL_TRY(cudaGetDevice(&dev));
    FL_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    FL_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    FL_TRY(cudaEventCreate(&t0));
    FL_TRY(cudaEventCreate(&t1));

    if (measure_launch(s, t0, t1, repeats, quick ? 200 : 1000, v, err, errlen))
        goto fail;
    out->launch_us = floors_summarize(v, repeats);
    if (measure_d2h_sync(s, t0, t1, repeats, quick ? 50 : 200, v, err, errlen))
        goto fail;
    out->d2h_sync_us = floors_summarize(v, repeats);
    if (measure_while(s, t0, t1, repeats, quick ? 1000 : 10000, v, err, errlen))
        goto fail;
    out->while_iter_us = floors_summarize(v, repeats);
    if (measure_grid_barrier(s, t0, t1, repeats, quick ? 2000 : 20000, sms, v, &out->grid_blocks, err,
                             errlen))
        goto fail;
    out->grid_barrier_us = floors_summarize(v, repeats);
    {
        static const struct {
            barrier_fn fn;
            int per_sm;
        } variants[FL_BARRIER_VARIANTS] = {
            {barrier_counting_kernel, P_MAX_BLOCKS_PER_SM},
            {barrier_counting_kernel, 1},
            {barrier_tree_kernel, P_MAX_BLOCKS_PER_SM},
            {barrier_cg_kernel, P_MAX_BLOCKS_PER_SM},
        };
        for (int i = 0; i < FL_BARRIER_VARIANTS; i++) {
            if (measure_barrier_variant(s, t0, t1, repeats, quick ? 2000 : 20000, sms, variants[i].fn,
                                        variants[i].per_sm, v, &out->barrier_variant_blocks[i], err, errlen))
                goto fail;
            out->barrier_variant_us[i] = floors_summarize(v, repeats);
        }
    }
    out->block_threads = BARRIER_THREADS;
    if (measure_block_barrier(s, t0, t1, repeats, quick ? 20000 : 200000, v, err, errlen))
        goto fail;
    out->block_barrier_us = floors_summarize(v, repeats);
    if (measure_bandwidth(s, t0, t1, repeats, v, &out->copy_bytes, err, errlen))
        goto fail;
    out->bandwidth_gbs = floors_summarize(v, repeats);
    if (measure_l2_read(s, t0, t1, repeats, sms, v, err, errlen))
        goto fail;
    out->l2_read_gbs = floors_summarize(v, repeats);
    if (floors_measure_tail(out, quick, out->tail_note, sizeof out->tail_note) != 0)
        out->tail_blocks = 0;

    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    cudaStreamDestroy(s);
    return 0;
fail:
    if (t0)
        cudaEventDestroy(t0);
    if (t1)
        cudaEventDestroy(t1);
    if (s)
        cudaStreamDestroy(s);
    return -1;
}
