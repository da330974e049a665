/* dev.cu: what the three CUDA executors share: error reporting, the device check, the
 * upload of a program (records, slots, table, arena with its constants, run state and the
 * host-mapped control block), the start of a run, the copy of its results and a CALL.
 */
#include "dev.h"
#include "host/runtime/nvtx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void dev_error(char *err, size_t errlen, const char *call, const char *file, int line,
               const char *msg)
{
    if (err == NULL || errlen == 0)
        return;
    /* Only the file's last component: the build's absolute path says nothing to a user. */
    const char *base = strrchr(file, '/');
    snprintf(err, errlen, "%s:%d: %s: %s", base ? base + 1 : file, line, call, msg);
}

int dev_available(char *why, size_t len)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        /* A failed query leaves a sticky last error behind; clear it so later calls of the
         * application do not see ours. */
        (void)cudaGetLastError();
        if (why && len)
            snprintf(why, len, "no CUDA device is present (%s: %s)", cudaGetErrorName(e),
                     cudaGetErrorString(e));
        return 0;
    }
    if (count == 0) {
        if (why && len)
            snprintf(why, len, "no CUDA device is present (the driver reports 0 devices)");
        return 0;
    }
    return 1;
}

/* ---- upload ---------------------------------------------------------------------------- */

void dev_prog_free(dev_prog *d)
{
    if (d == NULL)
        return;
    /* Errors are ignored here: there is nothing a caller could do with them, and the
     * pointers are forgotten either way. */
    if (d->records)
        cudaFree(d->records);
    if (d->slots)
        cudaFree(d->slots);
    if (d->table)
        cudaFree(d->table);
    if (d->arena)
        cudaFree(d->arena);
    if (d->state)
        cudaFree(d->state);
    if (d->control)
        cudaFreeHost(d->control);
    if (d->pub)
        cudaFreeHost(d->pub);
    /* the window's lines go back to normal, so that they hold no set-aside for an arena that
     * is gone (this resets the context's other persisting lines too: docs/persistent.md) */
    if (d->l2.num_bytes > 0)
        (void)cudaCtxResetPersistingL2Cache();
    memset(d, 0, sizeof *d);
}

int dev_prog_upload(dev_prog *d, const cfx_prog *p, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->prog = p;
    /* An empty arena is legal (a graph of nothing); cudaMalloc(0) returns NULL, which the
     * kernels would then index, so allocate at least one aligned unit. */
    size_t arena_bytes = p->arena_bytes > 0 ? (size_t)p->arena_bytes : CFX_ARENA_ALIGN;

    CUDA_TRY(cudaGetDevice(&d->device));
    CUDA_TRY(cudaDeviceGetAttribute(&d->sms, cudaDevAttrMultiProcessorCount, d->device));

    CUDA_TRY(cudaMalloc((void **)&d->records, sizeof(cfx_record) * (size_t)(p->nrecords > 0 ? p->nrecords : 1)));
    if (p->nrecords > 0)
        CUDA_TRY(cudaMemcpy(d->records, p->records, sizeof(cfx_record) * (size_t)p->nrecords,
                            cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMalloc((void **)&d->slots, sizeof(cfx_slot) * (size_t)(p->nslots > 0 ? p->nslots : 1)));
    if (p->nslots > 0)
        CUDA_TRY(cudaMemcpy(d->slots, p->slots, sizeof(cfx_slot) * (size_t)p->nslots,
                            cudaMemcpyHostToDevice));
    if (p->ntable > 0) {
        CUDA_TRY(cudaMalloc((void **)&d->table, sizeof(int32_t) * (size_t)p->ntable));
        CUDA_TRY(cudaMemcpy(d->table, p->table, sizeof(int32_t) * (size_t)p->ntable,
                            cudaMemcpyHostToDevice));
    }
    CUDA_TRY(cudaMalloc((void **)&d->arena, arena_bytes));
    /* The whole arena starts at zero so that a run never reads uninitialized bytes, even
     * where the program reads a slot before writing it on some path. */
    CUDA_TRY(cudaMemset(d->arena, 0, arena_bytes));
    if (p->const_bytes > 0)
        CUDA_TRY(cudaMemcpy(d->arena, p->consts, (size_t)p->const_bytes, cudaMemcpyHostToDevice));

    CUDA_TRY(cudaMalloc((void **)&d->state, sizeof(dev_state)));
    CUDA_TRY(cudaMemset(d->state, 0, sizeof(dev_state)));

    CUDA_TRY(cudaHostAlloc((void **)&d->control, sizeof(dev_control), cudaHostAllocMapped));
    memset((void *)d->control, 0, sizeof(dev_control));
    CUDA_TRY(cudaHostGetDevicePointer((void **)&d->control_dev, d->control, 0));
    CUDA_TRY(cudaHostAlloc((void **)&d->pub, sizeof(dev_state), cudaHostAllocMapped));
    memset((void *)d->pub, 0, sizeof(dev_state));
    CUDA_TRY(cudaHostGetDevicePointer((void **)&d->pub_dev, d->pub, 0));
    dev_publish_pending(d);
    /* The copies above come from pageable memory and the memsets are asynchronous: they may
     * still be in flight on the legacy default stream when this returns, and a run on a
     * non-blocking stream (the executors' own, or an application's) is not ordered after
     * that stream. Wait once here, so a run never reads constants that have not landed. */
    CUDA_TRY(cudaStreamSynchronize(0));
    return 0;

fail:
    dev_prog_free(d);
    return -1;
}

/* ---- a run ----------------------------------------------------------------------------- */

/* One thread: the state a run starts from. A kernel rather than a copy from the host, so the
 * reset is ordered on the stream without a pinned staging buffer. */
__global__ void dev_reset_state(dev_state *s)
{
    s->status = CFX_OK;
    s->record = -1;
    s->detail[0] = 0;
    s->detail[1] = 0;
    s->iterations = 0;
}

static int run_begin(dev_prog *d, const exec_run *run, cudaStream_t stream, char *err,
                  size_t errlen)
{
    const cfx_prog *p = d->prog;
    const cudaMemcpyKind kind = run->device_buffers ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;

    /* The control block is host memory: plain stores, seen by the device at launch. The
     * caller does not start a run while an earlier one on this program is in flight. */
    d->control->cancel = 0;
    d->control->max_iters = run->max_iters;

    dev_reset_state<<<1, 1, 0, stream>>>(d->state);
    CUDA_LAUNCHED();
    /* Non-const slots start at zero on every run, as on the cpu executor: a run must not
     * see what the previous one left behind. */
    if (p->arena_bytes > p->const_bytes)
        CUDA_TRY(cudaMemsetAsync(d->arena + p->const_bytes, 0,
                                 (size_t)(p->arena_bytes - p->const_bytes), stream));
    for (int32_t i = 0; i < p->ninputs; i++) {
        const cfx_slot *s = &p->slots[p->inputs[i]];
        size_t bytes = (size_t)slot_bytes(s);
        if (bytes == 0)
            continue;
        if (run->inputs == NULL || run->inputs[i] == NULL) {
            snprintf(err, errlen, "input %d of the graph has no buffer", (int)i);
            goto fail;
        }
        CUDA_TRY(cudaMemcpyAsync(d->arena + s->offset, run->inputs[i], bytes, kind, stream));
    }
    return 0;
fail:
    return -1;
}

/* dev_run_begin, as a named range for Nsight Systems */
int dev_run_begin(dev_prog *d, const exec_run *run, cudaStream_t stream, char *err, size_t errlen)
{
    prof_push("copy inputs");
    int rc = run_begin(d, run, stream, err, errlen);
    prof_pop();
    return rc;
}

/* Copies `bytes` from src to dst if the run ended ok; any grid shape. Byte-wise with a
 * word-wise fast path when both ends are 16-byte aligned (arena slots always are). */
__global__ void dev_copy_if_ok(const dev_state *state, uint8_t *dst, const uint8_t *src,
                               size_t bytes)
{
    if (*(volatile const int32_t *)&state->status != CFX_OK)
        return;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if ((((uintptr_t)dst | (uintptr_t)src) & 15u) == 0) {
        size_t words = bytes / 16;
        for (size_t w = first; w < words; w += stride)
            ((uint4 *)dst)[w] = ((const uint4 *)src)[w];
        for (size_t b = words * 16 + first; b < bytes; b += stride)
            dst[b] = src[b];
    } else {
        for (size_t b = first; b < bytes; b += stride)
            dst[b] = src[b];
    }
}

static int copy_results(dev_prog *d, const exec_run *run, cudaStream_t stream, char *err,
                     size_t errlen)
{
    const cfx_prog *p = d->prog;
    int32_t status = CFX_ERROR;
    if (run->device_buffers) {
        for (int32_t i = 0; i < p->nresults; i++) {
            const cfx_slot *s = &p->slots[p->results[i]];
            size_t bytes = (size_t)slot_bytes(s);
            if (bytes == 0 || run->results == NULL || run->results[i] == NULL)
                continue;
            size_t words = (bytes + 15) / 16;
            unsigned blocks = (unsigned)((words + 255) / 256);
            if (blocks > 1024)
                blocks = 1024;
            dev_copy_if_ok<<<blocks, 256, 0, stream>>>(d->state, (uint8_t *)run->results[i],
                                                        d->arena + s->offset, bytes);
            CUDA_LAUNCHED();
        }
        return 0;
    }

    /* Host buffers: the caller has synchronized; look at the status first. */
    CUDA_TRY(cudaMemcpyAsync(&status, &d->state->status, sizeof status, cudaMemcpyDeviceToHost,
                             stream));
    CUDA_TRY(cudaStreamSynchronize(stream));
    if (status != CFX_OK)
        return 0;
    for (int32_t i = 0; i < p->nresults; i++) {
        const cfx_slot *s = &p->slots[p->results[i]];
        size_t bytes = (size_t)slot_bytes(s);
        if (bytes == 0 || run->results == NULL || run->results[i] == NULL)
            continue;
        CUDA_TRY(cudaMemcpyAsync(run->results[i], d->arena + s->offset, bytes,
                                 cudaMemcpyDeviceToHost, stream));
    }
    CUDA_TRY(cudaStreamSynchronize(stream));
    return 0;
fail:
    return -1;
}

/* dev_copy_results, as a named range for Nsight Systems */
int dev_copy_results(dev_prog *d, const exec_run *run, cudaStream_t stream, char *err, size_t errlen)
{
    prof_push("copy results");
    int rc = copy_results(d, run, stream, err, errlen);
    prof_pop();
    return rc;
}

int dev_read_outcome(dev_prog *d, exec_outcome *out, char *err, size_t errlen)
{
    dev_state s;
    /* The run's stream has been synchronized, so any stream sees the final state. Not
     * cudaMemcpy: on the legacy default stream it would also wait for every blocking stream
     * of the application; the per-thread default stream waits for none of them. */
    CUDA_TRY(cudaMemcpyAsync(&s, d->state, sizeof s, cudaMemcpyDeviceToHost, cudaStreamPerThread));
    CUDA_TRY(cudaStreamSynchronize(cudaStreamPerThread));
    out->status = (cfx_status)s.status;
    out->record = s.status == CFX_OK ? -1 : s.record;
    out->detail[0] = s.detail[0];
    out->detail[1] = s.detail[1];
    out->iterations = (int64_t)s.iterations;
    return 0;
fail:
    return -1;
}

/* ---- a run inside the application's stream capture ---------------------------------------- */

/* dev_state.status of a published outcome that no replay has written yet */
#define DEV_PUB_PENDING (-7)

int dev_capturing(cudaStream_t s, char *err, size_t errlen)
{
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    CUDA_TRY(cudaStreamIsCapturing(s, &st));
    if (st == cudaStreamCaptureStatusInvalidated) {
        snprintf(err, errlen, "the run's stream is in a capture that was invalidated by an earlier call: end "
                 "that capture (cudaStreamEndCapture) and begin again");
        return -1;
    }
    return st == cudaStreamCaptureStatusActive;
fail:
    return -1;
}

int dev_capture_check(const exec_run *run, int async, const char *backend, char *err, size_t errlen)
{
    const cfx_prog *p = run->prog;
    if (!async) {
        snprintf(err, errlen, "%s: cfx_run under stream capture: it waits for the run, which a capture cannot; "
                 "call cfx_run_async and cfx_wait after a replay", backend);
        return -1;
    }
    for (int32_t i = 0; i < p->ninputs; i++)
        if (slot_bytes(&p->slots[p->inputs[i]]) > 0 && !run->device_buffers) {
            snprintf(err, errlen, "%s: a run under stream capture reads its inputs at each replay from device "
                     "memory: bind every input and result with cfx_bind_device (this run has host buffers)", backend);
            return -1;
        }
    if (!run->device_buffers && p->nresults > 0) {
        snprintf(err, errlen, "%s: a run under stream capture writes its results at each replay into device "
                 "memory: bind them with cfx_bind_device (this run has host buffers)", backend);
        return -1;
    }
    if (run->trace || run->profile) {
        snprintf(err, errlen, "%s: a traced or profiled run cannot be captured (the host reads the device's "
                 "stamps after the run): turn tracing and profiling off before capturing", backend);
        return -1;
    }
    for (int32_t i = 0; i < p->nrecords; i++)
        if (p->records[i].kind == REC_PRINT) {
            snprintf(err, errlen, "%s: graph '%s' prints (line %d), and the host writes out a run's prints after it "
                     "ends, which a captured run's replays do not give it: a graph without print can be captured",
                     backend, p->name ? p->name : "", (int)p->records[i].line);
            return -1;
        }
    return 0;
}

__global__ void dev_publish_kernel(const dev_state *state, dev_state *pub)
{
    pub->record = state->record;
    pub->detail[0] = state->detail[0];
    pub->detail[1] = state->detail[1];
    pub->iterations = state->iterations;
    __threadfence_system();
    *(volatile int32_t *)&pub->status = state->status;
    __threadfence_system();
}

int dev_publish(dev_prog *d, cudaStream_t s, char *err, size_t errlen)
{
    dev_publish_kernel<<<1, 1, 0, s>>>(d->state, d->pub_dev);
    CUDA_LAUNCHED();
    return 0;
fail:
    return -1;
}

void dev_publish_pending(dev_prog *d)
{
    if (d->pub)
        *(volatile int32_t *)&d->pub->status = DEV_PUB_PENDING;
}

int dev_capture_end(dev_prog *d, const exec_run *run, cudaStream_t stream, char *err, size_t errlen)
{
    if (dev_copy_results(d, run, stream, err, errlen) != 0)
        return -1;
    dev_publish_pending(d);
    return dev_publish(d, stream, err, errlen);
}

int dev_read_published(dev_prog *d, exec_outcome *out, char *err, size_t errlen)
{
    int32_t status = __atomic_load_n(&d->pub->status, __ATOMIC_ACQUIRE);
    if (status == DEV_PUB_PENDING) {
        snprintf(err, errlen, "the captured run has not been replayed yet: launch the application's graph and "
                 "synchronize it before cfx_wait");
        return -1;
    }
    out->status = (cfx_status)status;
    out->record = status == CFX_OK ? -1 : d->pub->record;
    out->detail[0] = d->pub->detail[0];
    out->detail[1] = d->pub->detail[1];
    out->iterations = (int64_t)d->pub->iterations;
    return 0;
}

int dev_graph_of_run(dev_run_fn run_fn, void *self, const exec_run *run, void **graph, char *err, size_t errlen)
{
    cudaStream_t s = NULL;
    cudaGraph_t g = NULL;
    exec_run r = *run;
    int rc;
    *graph = NULL;
    CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUDA_TRY(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    r.stream = (void *)s;
    rc = run_fn(self, &r, 1, err, errlen);
    {
        cudaError_t e = cudaStreamEndCapture(s, &g);
        if (rc >= 0 && e != cudaSuccess) {
            dev_error(err, errlen, "cudaStreamEndCapture", __FILE__, __LINE__, cudaGetErrorString(e));
            rc = -1;
        }
    }
    if (rc != EXEC_CAPTURED) {
        if (rc == 0)
            snprintf(err, errlen, "the run was not recorded by the capture");
        if (g)
            cudaGraphDestroy(g);
        (void)cudaGetLastError();
        goto fail;
    }
    cudaStreamDestroy(s);
    *graph = (void *)g;
    return 0;
fail:
    if (s)
        cudaStreamDestroy(s);
    return -1;
}

int dev_kernels_changed(const exec_kernel *captured, int32_t n, const exec_run *run)
{
    if (!captured)
        return 1;
    for (int32_t i = 0; i < n; i++) {
        cfx_cuda_kernel fn = run->kernels ? run->kernels[i].cuda_fn : NULL;
        void *user = run->kernels ? run->kernels[i].user : NULL;
        if (captured[i].cuda_fn != fn || captured[i].user != user)
            return 1;
    }
    return 0;
}

int dev_call_kernel(const dev_prog *d, const exec_kernel *k, const cfx_record *r,
                    cudaStream_t stream, int *failed, char *err, size_t errlen)
{
    const cfx_prog *p = d->prog;
    cfx_tensor *t = NULL;
    *failed = 0;
    if (!k || !k->cuda_fn) {
        *failed = 1;
        return 0;
    }
    t = (cfx_tensor *)calloc(r->c > 0 ? (size_t)r->c : 1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int32_t i = 0; i < r->c; i++) {
        const cfx_slot *s = &p->slots[p->table[r->b + i]];
        t[i].type.dtype = (cfx_dtype)s->dtype;
        t[i].type.rank = s->rank;
        for (int j = 0; j < CFX_TYPE_MAX_RANK; j++)
            t[i].type.dims[j] = j < s->rank ? s->dims[j] : 0;
        t[i].data = d->arena + s->offset;
    }
    if (k->cuda_fn(k->user, (void *)stream, r->d, t, r->c - r->d, t + r->d) != 0)
        *failed = 1;
    free(t);
    CUDA_LAUNCHED();
    return 0;
fail:
    return -1;
}

static int wait_stream_poll(dev_prog *d, cudaStream_t stream, exec_atomic_int *cancel,
                         int (*poll)(void *user, char *err, size_t errlen), void *user, char *err,
                         size_t errlen)
{
    if (cancel == NULL && poll == NULL) {
        CUDA_TRY(cudaStreamSynchronize(stream));
        return 0;
    }
    for (long spins = 0;; spins++) {
        cudaError_t e = cudaStreamQuery(stream);
        if (e != cudaSuccess && e != cudaErrorNotReady) {
            dev_error(err, errlen, "cudaStreamQuery(stream)", __FILE__, __LINE__, cudaGetErrorString(e));
            return -1;
        }
        if (poll && poll(user, err, errlen) != 0)
            return -1;
        if (e == cudaSuccess)
            break;
        if (cancel && __atomic_load_n(cancel, __ATOMIC_RELAXED))
            d->control->cancel = 1;
        if (spins > 2000) {
            /* a long run: stop burning a host core, at the price of up to 20 us latency */
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    }
    return 0;
fail:
    return -1;
}

/* dev_wait_stream_poll, as a named range for Nsight Systems */
int dev_wait_stream_poll(dev_prog *d, cudaStream_t stream, exec_atomic_int *cancel,
                         int (*poll)(void *user, char *err, size_t errlen), void *user, char *err,
                         size_t errlen)
{
    prof_push("wait for the run");
    int rc = wait_stream_poll(d, stream, cancel, poll, user, err, errlen);
    prof_pop();
    return rc;
}

int dev_wait_stream(dev_prog *d, cudaStream_t stream, exec_atomic_int *cancel, char *err,
                    size_t errlen)
{
    return dev_wait_stream_poll(d, stream, cancel, NULL, NULL, err, errlen);
}

/* ==== device graph launch ==================================================================== */

int dev_device_graph(const void *func, void **args, int blocks, int threads, size_t smem, int cooperative,
                     const cudaAccessPolicyWindow *l2, cudaStream_t s, cudaGraph_t *graph, cudaGraphExec_t *exec,
                     char *err, size_t errlen)
{
    cudaKernelNodeParams kp;
    cudaGraphNode_t node;
    cudaGraphInstantiateParams ip;
    memset(&kp, 0, sizeof kp);
    memset(&ip, 0, sizeof ip);
    *graph = NULL;
    *exec = NULL;
    kp.func = (void *)func;
    kp.gridDim = dim3((unsigned)blocks);
    kp.blockDim = dim3((unsigned)threads);
    kp.sharedMemBytes = (unsigned)smem;
    kp.kernelParams = args;
    CUDA_TRY(cudaGraphCreate(graph, 0));
    CUDA_TRY(cudaGraphAddKernelNode(&node, *graph, NULL, 0, &kp));
    if (cooperative) {
        cudaLaunchAttributeValue v;
        memset(&v, 0, sizeof v);
        v.cooperative = 1;
        CUDA_TRY(cudaGraphKernelNodeSetAttribute(node, cudaLaunchAttributeCooperative, &v));
    }
    if (l2 && l2->num_bytes > 0) {
        cudaLaunchAttributeValue v;
        memset(&v, 0, sizeof v);
        v.accessPolicyWindow = *l2;
        /* a node that refuses the window goes without it */
        if (cudaGraphKernelNodeSetAttribute(node, cudaLaunchAttributeAccessPolicyWindow, &v) != cudaSuccess)
            (void)cudaGetLastError();
    }
    ip.flags = cudaGraphInstantiateFlagDeviceLaunch | cudaGraphInstantiateFlagUpload;
    ip.uploadStream = s;
    CUDA_TRY(cudaGraphInstantiateWithParams(exec, *graph, &ip));
    return 0;
fail:
    (void)cudaGetLastError();
    *exec = NULL;
    return -1;
}

/* ==== the L2 window ========================================================================== */

void dev_l2_window(dev_prog *d, int32_t s, int on)
{
    int set_aside_max = 0, window_max = 0;
    size_t limit = 0, want;
    memset(&d->l2, 0, sizeof d->l2);
    if (s < 0 || !on || !d->arena)
        return;
    want = (size_t)slot_bytes(&d->prog->slots[s]);
    if (cudaDeviceGetAttribute(&set_aside_max, cudaDevAttrMaxPersistingL2CacheSize, d->device) != cudaSuccess ||
        cudaDeviceGetAttribute(&window_max, cudaDevAttrMaxAccessPolicyWindowSize, d->device) != cudaSuccess ||
        set_aside_max <= 0 || window_max <= 0 || cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    if (want > (size_t)window_max)
        want = (size_t)window_max;
    if (limit < want && limit < (size_t)set_aside_max) {
        size_t raise = want < (size_t)set_aside_max ? want : (size_t)set_aside_max;
        /* refused under MPS, whose server sets the set-aside: keep what there is */
        if (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, raise) != cudaSuccess ||
            cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize) != cudaSuccess) {
            (void)cudaGetLastError();
            return;
        }
    }
    if (limit == 0)
        return;
    d->l2.base_ptr = d->arena + d->prog->slots[s].offset;
    d->l2.num_bytes = want;
    /* the share of the window's lines that may persist: all of them where the set-aside holds
     * the window, else as many as it holds (the rest stream as before) */
    d->l2.hitRatio = limit >= want ? 1.0f : (float)((double)limit / (double)want);
    d->l2.hitProp = cudaAccessPropertyPersisting;
    d->l2.missProp = cudaAccessPropertyStreaming;
}

void dev_l2_describe(const dev_prog *d, char *buf, size_t len)
{
    if (d->l2.num_bytes == 0)
        snprintf(buf, len, "%s", "");
    else
        snprintf(buf, len, "; L2 keeps %.1f MB of the arena (hit ratio %.2f)", (double)d->l2.num_bytes / 1e6,
                 (double)d->l2.hitRatio);
}

int dev_launch(const void *func, void **args, int blocks, int threads, size_t smem, int cooperative,
               cudaAccessPolicyWindow *l2, cudaStream_t s, char *err, size_t errlen)
{
    if (l2 && l2->num_bytes > 0) {
        cudaLaunchConfig_t cfg;
        cudaLaunchAttribute at[2];
        memset(&cfg, 0, sizeof cfg);
        memset(at, 0, sizeof at);
        cfg.gridDim = dim3((unsigned)blocks);
        cfg.blockDim = dim3((unsigned)threads);
        cfg.dynamicSmemBytes = smem;
        cfg.stream = s;
        cfg.attrs = at;
        at[cfg.numAttrs].id = cudaLaunchAttributeAccessPolicyWindow;
        at[cfg.numAttrs++].val.accessPolicyWindow = *l2;
        if (cooperative) {
            at[cfg.numAttrs].id = cudaLaunchAttributeCooperative;
            at[cfg.numAttrs++].val.cooperative = 1;
        }
        if (cudaLaunchKernelExC(&cfg, func, args) == cudaSuccess)
            return 0;
        /* a launch the window makes fail gets none from now on (the backend's detail no longer
         * names it): the run goes on as without it */
        (void)cudaGetLastError();
        memset(l2, 0, sizeof *l2);
    }
    if (cooperative)
        CUDA_TRY(cudaLaunchCooperativeKernel(func, dim3((unsigned)blocks), dim3((unsigned)threads), args, smem, s));
    else
        CUDA_TRY(cudaLaunchKernel(func, dim3((unsigned)blocks), dim3((unsigned)threads), args, smem, s));
    return 0;
fail:
    return -1;
}

static __global__ void dev_site_end(void) {}

int dev_capture_site(cudaStream_t capture, cudaStream_t upload, dev_enqueue enqueue, void *user,
                     cudaGraph_t *graph, cudaGraphExec_t *exec, char *err, size_t errlen)
{
    cudaGraph_t g = NULL;
    cudaGraphExec_t e = NULL;
    cudaGraphInstantiateParams ip;
    int rc;
    *graph = NULL;
    *exec = NULL;
    cudaError_t ce = cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal);
    if (ce != cudaSuccess) {
        dev_error(err, errlen, "cudaStreamBeginCapture", __FILE__, __LINE__, cudaGetErrorString(ce));
        return -1;
    }
    rc = enqueue(user, capture, err, errlen);
    if (rc == 0) {
        dev_site_end<<<1, 1, 0, capture>>>();
        if ((ce = cudaGetLastError()) != cudaSuccess) {
            dev_error(err, errlen, "dev_site_end<<<>>>", __FILE__, __LINE__, cudaGetErrorString(ce));
            rc = 1;
        }
    }
    ce = cudaStreamEndCapture(capture, &g);
    if (rc == 0 && (ce != cudaSuccess || !g)) {
        snprintf(err, errlen, "its capture failed (%s)", cudaGetErrorString(ce));
        rc = 1;
    }
    if (rc != 0) {
        (void)cudaGetLastError();
        if (ce == cudaSuccess && g)
            cudaGraphDestroy(g);
        return rc < 0 ? -1 : 1;
    }
    memset(&ip, 0, sizeof ip);
    ip.flags = cudaGraphInstantiateFlagDeviceLaunch | cudaGraphInstantiateFlagUpload;
    ip.uploadStream = upload;
    ce = cudaGraphInstantiateWithParams(&e, g, &ip);
    if (ce != cudaSuccess) {
        snprintf(err, errlen, "its graph does not instantiate for device launch (%s, cudaGraphInstantiateResult %d)",
                 cudaGetErrorString(ce), (int)ip.result_out);
        (void)cudaGetLastError();
        cudaGraphDestroy(g);
        return 1;
    }
    *graph = g;
    *exec = e;
    return 0;
}

/* ==== a traced run's host track ============================================================== */

unsigned long long dev_host_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

void dev_host_track_start(dev_host_track *h, int on)
{
    h->n = 0;
    h->on = on;
}

void dev_host_span(dev_host_track *h, const char *name, unsigned long long t0)
{
    if (!h->on || h->n >= DEV_HOST_SPANS)
        return;
    h->span[h->n].name = name;
    h->span[h->n].t0 = t0;
    h->span[h->n].t1 = dev_host_ns();
    h->n++;
}

static __global__ void read_globaltimer(unsigned long long *t)
{
    unsigned long long v;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(v));
    *t = v;
}

int dev_clock_offset(dev_host_track *h, cudaStream_t stream, unsigned long long *scratch, char *err,
                     size_t errlen)
{
    unsigned long long ha = dev_host_ns(), hb, dt = 0;
    read_globaltimer<<<1, 1, 0, stream>>>(scratch);
    CUDA_LAUNCHED();
    CUDA_TRY(cudaMemcpyAsync(&dt, scratch, sizeof dt, cudaMemcpyDeviceToHost, stream));
    CUDA_TRY(cudaStreamSynchronize(stream));
    hb = dev_host_ns();
    h->offset = (long long)(dt - (ha + (hb - ha) / 2));
    return 0;
fail:
    return -1;
}

unsigned long long dev_host_track_base(const dev_host_track *h, unsigned long long base)
{
    for (int i = 0; i < h->n; i++)
        if (h->span[i].t0 + (unsigned long long)h->offset < base)
            base = h->span[i].t0 + (unsigned long long)h->offset;
    return base;
}

void dev_host_track_write(FILE *f, const cfx_prog *p, const dev_host_track *h, unsigned long long base, int tid)
{
    for (int i = 0; i < h->n; i++)
        exec_trace_event(f, p, -1, h->span[i].name,
                         (double)(long long)(h->span[i].t0 + (unsigned long long)h->offset - base) / 1e3,
                         (double)(h->span[i].t1 - h->span[i].t0) / 1e3, tid);
}
