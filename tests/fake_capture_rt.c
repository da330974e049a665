/* fake_capture_rt.c: a stand-in for the CUDA runtime that the real CUDA module (libcfx_cuda.so)
 * loads on a machine without a GPU, built as libcudart.so.N into build/tests/capture_cuda/ for
 * test_capture.c. It holds the executors' host code to the rules of stream capture.
 *
 * "Device" memory is host memory (cudaMalloc is calloc), copies and memsets happen at once, and
 * kernels do not run: a launch is only recorded, by the name the module registered for it (two
 * exceptions below). Streams can be captured as CUDA captures them (cudaStreamBeginCapture,
 * ...ToGraph, cudaStreamGetCaptureInfo, cudaStreamUpdateCaptureDependencies, cudaStreamEndCapture):
 * work enqueued on a capturing stream becomes nodes of its graph. While any stream is being
 * captured, every call that would break the capture on a GPU, or that a warm run must not make,
 * is refused with cudaErrorStreamCaptureUnsupported, invalidates the captures, and is written into
 * a log the test reads (fake_cuda_violations):
 * - allocations and frees (cudaMalloc, cudaFree, cudaHostAlloc, cudaFreeHost), synchronous copies
 *   and memsets, synchronizations and queries of streams and events, graph instantiation and
 *   launches, stream creation, device attribute and occupancy queries, library loads, limits;
 * - a cudaMemcpyAsync between device memory and pageable host memory (only page-locked memory
 *   can be a copy node's host end);
 * - work on the legacy default stream or the per-thread stream (an implicit synchronization with
 *   the capturing stream).
 * The kernels it runs, because the host reads what they write: dev_publish_kernel (the state a
 * captured run publishes, copied at a replay of a graph holding it) and probe_parent (device graph
 * launch's probe, which leaves 102 in its counter when device graph launch works; FAKE_CUDA_DGL=0
 * makes it fail). */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* what nvcc's generated host code calls (crt/host_runtime.h, device_functions.h) */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void __cudaUnregisterFatBinary(void **fatCubinHandle);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, void *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                               cudaStream_t stream);
/* the test's view */
int fake_cuda_violations(char *buf, size_t len);
void fake_cuda_clear(void);
int fake_cuda_describe(cudaGraph_t g, char *buf, size_t len);
long fake_cuda_live_allocations(void);
/* for the fake cuBLAS (fake_capture_blas.c): work of a library enqueued on s, as one kernel */
cudaError_t fake_cuda_library_kernel(cudaStream_t s, const char *name);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- the log of violations -------------------------------------------------------------------- */
static char vlog[4096];
static int nviolations;

/* ---- memory --------------------------------------------------------------------------------- */
enum { MEM_DEVICE, MEM_PINNED };
typedef struct alloc {
    char *p;
    size_t n;
    int kind;
} alloc;
static alloc *allocs;
static int nallocs, capallocs;

static void add_alloc(void *p, size_t n, int kind)
{
    if (nallocs == capallocs) {
        capallocs = capallocs ? 2 * capallocs : 256;
        allocs = (alloc *)realloc(allocs, sizeof *allocs * (size_t)capallocs);
    }
    allocs[nallocs].p = (char *)p;
    allocs[nallocs].n = n;
    allocs[nallocs].kind = kind;
    nallocs++;
}

static int drop_alloc(void *p)
{
    for (int i = 0; i < nallocs; i++)
        if (allocs[i].p == p) {
            allocs[i] = allocs[--nallocs];
            return 1;
        }
    return 0;
}

/* MEM_DEVICE or MEM_PINNED for [p, p + n) inside an allocation, else -1 (pageable host memory) */
static int kind_of(const void *p, size_t n)
{
    const char *c = (const char *)p;
    for (int i = 0; i < nallocs; i++)
        if (c >= allocs[i].p && c + n <= allocs[i].p + allocs[i].n)
            return allocs[i].kind;
    return -1;
}

/* ---- kernels by name -------------------------------------------------------------------------- */
typedef struct kname {
    const void *fn;
    char name[160];
} kname;
static kname *knames;
static int nknames, capknames;

static void add_kname(const void *fn, const char *name)
{
    if (nknames == capknames) {
        capknames = capknames ? 2 * capknames : 256;
        knames = (kname *)realloc(knames, sizeof *knames * (size_t)capknames);
    }
    knames[nknames].fn = fn;
    snprintf(knames[nknames].name, sizeof knames[nknames].name, "%s", name);
    nknames++;
}

static const char *name_of(const void *fn)
{
    for (int i = nknames - 1; i >= 0; i--) /* the latest name of fn */
        if (knames[i].fn == fn)
            return knames[i].name;
    return "?";
}

/* ---- graphs --------------------------------------------------------------------------------- */
enum { N_KERNEL, N_MEMCPY, N_MEMSET, N_CHILD, N_COND, N_EMPTY, N_OTHER };
struct CUgraph_st;
typedef struct fnode {
    int type;
    char name[160];           /* a kernel's */
    uint64_t arg[4];          /* the first pointer arguments of the kernels the fake runs */
    struct CUgraph_st *child; /* N_CHILD */
} fnode;
struct CUgraph_st {
    fnode **nodes;
    int n, cap;
};
struct CUgraphExec_st {
    struct CUgraph_st *g;
};

static fnode *add_node(cudaGraph_t g, int type, const char *name)
{
    fnode *f = (fnode *)calloc(1, sizeof *f);
    f->type = type;
    if (name)
        snprintf(f->name, sizeof f->name, "%s", name);
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 16;
        g->nodes = (fnode **)realloc(g->nodes, sizeof *g->nodes * (size_t)g->cap);
    }
    g->nodes[g->n++] = f;
    return f;
}

/* the kernels the fake runs: their pointer arguments are kept */
static void keep_args(fnode *f, void **args)
{
    if (args && (strstr(f->name, "dev_publish_kernel") || strstr(f->name, "probe_parent")))
        for (int i = 0; i < 2; i++)
            memcpy(&f->arg[i], args[i], sizeof f->arg[i]);
}

static void run_kernel(const char *name, const uint64_t *arg)
{
    if (strstr(name, "dev_publish_kernel")) {
        /* dev_state: int32 status, int32 record, int64 detail[2], u64 iterations */
        memcpy((void *)(uintptr_t)arg[1], (const void *)(uintptr_t)arg[0], 32);
    } else if (strstr(name, "probe_parent")) {
        const char *dgl = getenv("FAKE_CUDA_DGL");
        if (!dgl || strcmp(dgl, "0") != 0)
            *(int *)(uintptr_t)arg[1] = 102;
    }
}

static void run_graph(cudaGraph_t g)
{
    for (int i = 0; g && i < g->n; i++) {
        if (g->nodes[i]->type == N_KERNEL)
            run_kernel(g->nodes[i]->name, g->nodes[i]->arg);
        else if (g->nodes[i]->type == N_CHILD)
            run_graph(g->nodes[i]->child);
    }
}

/* ---- streams and capture ---------------------------------------------------------------------- */
struct CUstream_st {
    int capturing;   /* cudaStreamCaptureStatus */
    cudaGraph_t graph;
    unsigned long long id;
    cudaGraphNode_t last;
};
static int ncapturing;
static unsigned long long next_id = 1;

static struct CUstream_st *stream_of(cudaStream_t s) { return (uintptr_t)s < 0x100 ? NULL : (struct CUstream_st *)s; }

/* A call that breaks every capture in progress: logged, the captures invalidated. */
static cudaError_t violate(const char *call, const char *why)
{
    char line[320];
    snprintf(line, sizeof line, "%s (%s)\n", call, why);
    if (strlen(vlog) + strlen(line) < sizeof vlog)
        strcat(vlog, line);
    nviolations++;
    return cudaErrorStreamCaptureUnsupported;
}

#define FORBIDDEN_IN_CAPTURE(call)                                                       \
    do {                                                                                 \
        if (ncapturing > 0) {                                                            \
            pthread_mutex_lock(&lock);                                                   \
            cudaError_t e_ = violate(call, "not allowed while a stream is being captured"); \
            pthread_mutex_unlock(&lock);                                                 \
            return e_;                                                                   \
        }                                                                                \
    } while (0)

/* Work on stream s: 1 when it goes into s's capture (*g), 0 when it runs now; a violation for
 * the legacy or per-thread stream while a capture is in progress. */
static int enqueue(cudaStream_t s, const char *call, cudaError_t *err, cudaGraph_t *g)
{
    struct CUstream_st *st = stream_of(s);
    *err = cudaSuccess;
    if (!st) {
        if (ncapturing > 0)
            *err = violate(call, "work on the legacy or per-thread default stream synchronizes with a capturing stream");
        return 0;
    }
    if (st->capturing == cudaStreamCaptureStatusInvalidated) {
        *err = cudaErrorStreamCaptureInvalidated;
        return 0;
    }
    if (st->capturing == cudaStreamCaptureStatusActive) {
        *g = st->graph;
        return 1;
    }
    return 0;
}

static void captured(cudaStream_t s, cudaGraphNode_t n) { stream_of(s)->last = n; }

/* ---- the test's view -------------------------------------------------------------------------- */
int fake_cuda_violations(char *buf, size_t len)
{
    pthread_mutex_lock(&lock);
    if (buf && len)
        snprintf(buf, len, "%s", vlog);
    int n = nviolations;
    pthread_mutex_unlock(&lock);
    return n;
}

void fake_cuda_clear(void)
{
    pthread_mutex_lock(&lock);
    vlog[0] = '\0';
    nviolations = 0;
    pthread_mutex_unlock(&lock);
}

long fake_cuda_live_allocations(void) { return nallocs; }

static void describe(cudaGraph_t g, char *buf, size_t len)
{
    static const char *type_names[] = {"kernel", "memcpy", "memset", "child", "conditional", "empty", "other"};
    for (int i = 0; g && i < g->n; i++) {
        size_t at = strlen(buf);
        const fnode *f = g->nodes[i];
        if (f->type == N_KERNEL)
            snprintf(buf + at, len - at, "kernel:%s ", f->name);
        else
            snprintf(buf + at, len - at, "%s ", type_names[f->type]);
        if (f->type == N_CHILD) {
            at = strlen(buf);
            snprintf(buf + at, len - at, "{ ");
            describe(f->child, buf, len);
            at = strlen(buf);
            snprintf(buf + at, len - at, "} ");
        }
    }
}

int fake_cuda_describe(cudaGraph_t g, char *buf, size_t len)
{
    if (!buf || len == 0)
        return 0;
    buf[0] = '\0';
    describe(g, buf, len);
    return g ? g->n : 0;
}

/* ---- registration and launches --------------------------------------------------------------- */
void **__cudaRegisterFatBinary(void *fatCubin)
{
    static void *handle;
    (void)fatCubin;
    return &handle;
}
void __cudaRegisterFatBinaryEnd(void **h) { (void)h; }
void __cudaUnregisterFatBinary(void **h) { (void)h; }
void __cudaRegisterFunction(void **h, const char *hostFun, char *deviceFun, const char *deviceName, int thread_limit,
                            uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
    (void)h, (void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    pthread_mutex_lock(&lock);
    add_kname(hostFun, deviceName);
    pthread_mutex_unlock(&lock);
}

static __thread struct {
    dim3 grid, block;
    size_t smem;
    void *stream;
} config;
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, void *stream)
{
    config.grid = gridDim;
    config.block = blockDim;
    config.smem = sharedMem;
    config.stream = stream;
    return 0;
}
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream)
{
    *gridDim = config.grid;
    *blockDim = config.block;
    *sharedMem = config.smem;
    *(void **)stream = config.stream;
    return cudaSuccess;
}
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func)
{
    *kernel = (cudaKernel_t)func;
    return cudaSuccess;
}

static cudaError_t launch(const void *func, void **args, cudaStream_t s, const char *call)
{
    cudaGraph_t g = NULL;
    cudaError_t e;
    pthread_mutex_lock(&lock);
    const char *name = name_of(func);
    if (enqueue(s, call, &e, &g)) {
        fnode *f = add_node(g, N_KERNEL, name);
        keep_args(f, args);
        captured(s, (cudaGraphNode_t)f);
    } else if (e == cudaSuccess) {
        fnode f;
        memset(&f, 0, sizeof f);
        snprintf(f.name, sizeof f.name, "%s", name);
        keep_args(&f, args);
        run_kernel(f.name, f.arg);
    }
    pthread_mutex_unlock(&lock);
    return e;
}

cudaError_t fake_cuda_library_kernel(cudaStream_t s, const char *name)
{
    static char handle; /* a function pointer of its own, named `name` once */
    pthread_mutex_lock(&lock);
    if (strcmp(name_of(&handle), name) != 0)
        add_kname(&handle, name);
    pthread_mutex_unlock(&lock);
    return launch(&handle, NULL, s, name);
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                               cudaStream_t stream)
{
    (void)gridDim, (void)blockDim, (void)sharedMem;
    return launch((const void *)kernel, args, stream, "a kernel launch");
}
cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                             cudaStream_t stream)
{
    (void)gridDim, (void)blockDim, (void)sharedMem;
    return launch(func, args, stream, "cudaLaunchKernel");
}
cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                        cudaStream_t stream)
{
    (void)gridDim, (void)blockDim, (void)sharedMem;
    return launch(func, args, stream, "cudaLaunchCooperativeKernel");
}
cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config_, const void *func, void **args)
{
    return launch(func, args, config_->stream, "cudaLaunchKernelExC");
}

/* ---- errors and the device -------------------------------------------------------------------- */
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorStreamCaptureUnsupported: return "cudaErrorStreamCaptureUnsupported";
    case cudaErrorStreamCaptureInvalidated: return "cudaErrorStreamCaptureInvalidated";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    default: return "cudaErrorUnknown";
    }
}
const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated: return "operation failed due to a previous error during capture";
    case cudaErrorInvalidValue: return "invalid argument";
    default: return "unknown error";
    }
}
cudaError_t cudaGetDeviceCount(int *count)
{
    *count = 1;
    return cudaSuccess;
}
cudaError_t cudaGetDevice(int *device)
{
    *device = 0;
    return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int *v)
{
    *v = CUDART_VERSION;
    return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    (void)device;
    FORBIDDEN_IN_CAPTURE("cudaDeviceGetAttribute");
    switch (attr) {
    case cudaDevAttrMultiProcessorCount: *value = 4; break;
    case cudaDevAttrCooperativeLaunch: *value = 1; break;
    case cudaDevAttrComputeCapabilityMajor: *value = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; break;
    case cudaDevAttrClockRate: *value = 1000000; break;
    default: *value = 0; break; /* no L2 set-aside: no window */
    }
    return cudaSuccess;
}
cudaError_t cudaDeviceGetLimit(size_t *v, enum cudaLimit limit)
{
    (void)limit;
    FORBIDDEN_IN_CAPTURE("cudaDeviceGetLimit");
    *v = 0;
    return cudaSuccess;
}
cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t v)
{
    (void)limit, (void)v;
    FORBIDDEN_IN_CAPTURE("cudaDeviceSetLimit");
    return cudaSuccess;
}
cudaError_t cudaCtxResetPersistingL2Cache(void)
{
    FORBIDDEN_IN_CAPTURE("cudaCtxResetPersistingL2Cache");
    return cudaSuccess;
}
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *func, int block, size_t smem)
{
    (void)func, (void)block, (void)smem;
    FORBIDDEN_IN_CAPTURE("cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    *n = 2;
    return cudaSuccess;
}
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, const void *func, int block, size_t smem,
                                                                   unsigned flags)
{
    (void)flags;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, func, block, smem);
}

/* ---- memory --------------------------------------------------------------------------------- */
static cudaError_t alloc_mem(void **p, size_t n, int kind, const char *call)
{
    FORBIDDEN_IN_CAPTURE(call);
    *p = calloc(1, n ? n : 1);
    pthread_mutex_lock(&lock);
    add_alloc(*p, n ? n : 1, kind);
    pthread_mutex_unlock(&lock);
    return cudaSuccess;
}
static cudaError_t free_mem(void *p, const char *call)
{
    FORBIDDEN_IN_CAPTURE(call);
    if (!p)
        return cudaSuccess;
    pthread_mutex_lock(&lock);
    int found = drop_alloc(p);
    pthread_mutex_unlock(&lock);
    if (!found)
        return cudaErrorInvalidValue;
    free(p);
    return cudaSuccess;
}
cudaError_t cudaMalloc(void **p, size_t n) { return alloc_mem(p, n, MEM_DEVICE, "cudaMalloc"); }
cudaError_t cudaHostAlloc(void **p, size_t n, unsigned flags)
{
    (void)flags;
    return alloc_mem(p, n, MEM_PINNED, "cudaHostAlloc");
}
cudaError_t cudaFree(void *p) { return free_mem(p, "cudaFree"); }
cudaError_t cudaFreeHost(void *p) { return free_mem(p, "cudaFreeHost"); }
cudaError_t cudaHostGetDevicePointer(void **d, void *h, unsigned flags)
{
    (void)flags;
    *d = h;
    return cudaSuccess;
}
cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    (void)kind;
    FORBIDDEN_IN_CAPTURE("cudaMemcpy");
    memmove(dst, src, n);
    return cudaSuccess;
}
cudaError_t cudaMemset(void *dst, int v, size_t n)
{
    FORBIDDEN_IN_CAPTURE("cudaMemset");
    memset(dst, v, n);
    return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t s)
{
    cudaGraph_t g = NULL;
    cudaError_t e;
    pthread_mutex_lock(&lock);
    if (enqueue(s, "cudaMemcpyAsync", &e, &g)) {
        int kd = kind_of(dst, n), ks = kind_of(src, n);
        if (kd < 0 || ks < 0) {
            e = violate("cudaMemcpyAsync", "pageable host memory cannot be the end of a captured copy");
        } else {
            captured(s, (cudaGraphNode_t)add_node(g, N_MEMCPY, NULL));
        }
    } else if (e == cudaSuccess) {
        memmove(dst, src, n);
    }
    (void)kind;
    pthread_mutex_unlock(&lock);
    return e;
}
cudaError_t cudaMemsetAsync(void *dst, int v, size_t n, cudaStream_t s)
{
    cudaGraph_t g = NULL;
    cudaError_t e;
    pthread_mutex_lock(&lock);
    if (enqueue(s, "cudaMemsetAsync", &e, &g))
        captured(s, (cudaGraphNode_t)add_node(g, N_MEMSET, NULL));
    else if (e == cudaSuccess)
        memset(dst, v, n);
    pthread_mutex_unlock(&lock);
    return e;
}

/* ---- streams and events ---------------------------------------------------------------------- */
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    (void)flags;
    FORBIDDEN_IN_CAPTURE("cudaStreamCreateWithFlags");
    *s = (cudaStream_t)calloc(1, sizeof(struct CUstream_st));
    return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithFlags(s, 0); }
cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    FORBIDDEN_IN_CAPTURE("cudaStreamDestroy");
    free(stream_of(s));
    return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    (void)s;
    FORBIDDEN_IN_CAPTURE("cudaStreamSynchronize");
    return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize(void)
{
    FORBIDDEN_IN_CAPTURE("cudaDeviceSynchronize");
    return cudaSuccess;
}
cudaError_t cudaStreamQuery(cudaStream_t s)
{
    (void)s;
    FORBIDDEN_IN_CAPTURE("cudaStreamQuery");
    return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t *ev)
{
    *ev = (cudaEvent_t)calloc(1, 16);
    return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t ev)
{
    free(ev);
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t s)
{
    cudaGraph_t g = NULL;
    cudaError_t e;
    (void)ev;
    pthread_mutex_lock(&lock);
    if (enqueue(s, "cudaEventRecord", &e, &g))
        e = violate("cudaEventRecord", "a warm run records no events");
    pthread_mutex_unlock(&lock);
    return e;
}
cudaError_t cudaEventSynchronize(cudaEvent_t ev)
{
    (void)ev;
    FORBIDDEN_IN_CAPTURE("cudaEventSynchronize");
    return cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    (void)a, (void)b;
    *ms = 0.001f;
    return cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode mode)
{
    struct CUstream_st *st = stream_of(s);
    (void)mode;
    if (!st || st->capturing != cudaStreamCaptureStatusNone)
        return cudaErrorInvalidValue;
    pthread_mutex_lock(&lock);
    st->graph = (cudaGraph_t)calloc(1, sizeof(struct CUgraph_st));
    st->capturing = cudaStreamCaptureStatusActive;
    st->id = next_id++;
    st->last = NULL;
    ncapturing++;
    pthread_mutex_unlock(&lock);
    return cudaSuccess;
}
cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t s, cudaGraph_t graph, const cudaGraphNode_t *deps,
                                          const cudaGraphEdgeData *data, size_t ndeps, enum cudaStreamCaptureMode mode)
{
    struct CUstream_st *st = stream_of(s);
    (void)deps, (void)data, (void)ndeps, (void)mode;
    if (!st || st->capturing != cudaStreamCaptureStatusNone || !graph)
        return cudaErrorInvalidValue;
    pthread_mutex_lock(&lock);
    st->graph = graph;
    st->capturing = cudaStreamCaptureStatusActive;
    st->id = next_id++;
    st->last = NULL;
    ncapturing++;
    pthread_mutex_unlock(&lock);
    return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *graph)
{
    struct CUstream_st *st = stream_of(s);
    cudaError_t e = cudaSuccess;
    if (!st || st->capturing == cudaStreamCaptureStatusNone)
        return cudaErrorInvalidValue;
    pthread_mutex_lock(&lock);
    *graph = st->graph;
    if (nviolations > 0) { /* a violation invalidated every capture in progress */
        *graph = NULL;
        e = cudaErrorStreamCaptureInvalidated;
    }
    st->capturing = cudaStreamCaptureStatusNone;
    st->graph = NULL;
    ncapturing--;
    pthread_mutex_unlock(&lock);
    return e;
}
cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *status)
{
    struct CUstream_st *st = stream_of(s);
    *status = cudaStreamCaptureStatusNone;
    if (st)
        *status = st->capturing == cudaStreamCaptureStatusActive && nviolations > 0 ? cudaStreamCaptureStatusInvalidated
                                                                                     : (enum cudaStreamCaptureStatus)st->capturing;
    else if (ncapturing > 0)
        return violate("cudaStreamIsCapturing", "asked of the legacy stream while another is captured");
    return cudaSuccess;
}
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t s, enum cudaStreamCaptureStatus *status, unsigned long long *id,
                                     cudaGraph_t *graph, const cudaGraphNode_t **deps, const cudaGraphEdgeData **data,
                                     size_t *ndeps)
{
    struct CUstream_st *st = stream_of(s);
    if (!st)
        return cudaErrorInvalidValue;
    *status = (enum cudaStreamCaptureStatus)st->capturing;
    if (id)
        *id = st->id;
    if (graph)
        *graph = st->graph;
    if (deps)
        *deps = st->last ? &st->last : NULL;
    if (data)
        *data = NULL;
    if (ndeps)
        *ndeps = st->last ? 1 : 0;
    return cudaSuccess;
}
cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t s, cudaGraphNode_t *deps, const cudaGraphEdgeData *data,
                                                size_t n, unsigned flags)
{
    struct CUstream_st *st = stream_of(s);
    (void)data, (void)flags;
    if (!st || st->capturing != cudaStreamCaptureStatusActive)
        return cudaErrorIllegalState;
    st->last = n ? deps[n - 1] : NULL;
    return cudaSuccess;
}
cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    static __thread enum cudaStreamCaptureMode current = cudaStreamCaptureModeGlobal;
    enum cudaStreamCaptureMode m = *mode;
    *mode = current;
    current = m;
    return cudaSuccess;
}

/* ---- graphs --------------------------------------------------------------------------------- */
cudaError_t cudaGraphCreate(cudaGraph_t *g, unsigned flags)
{
    (void)flags;
    *g = (cudaGraph_t)calloc(1, sizeof(struct CUgraph_st));
    return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t g)
{
    (void)g; /* kept: child nodes refer to graphs by pointer here, where CUDA clones them */
    return cudaSuccess;
}
cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t n,
                                   const struct cudaKernelNodeParams *p)
{
    (void)deps, (void)n;
    pthread_mutex_lock(&lock);
    fnode *f = add_node(g, N_KERNEL, name_of(p->func));
    keep_args(f, p->kernelParams);
    pthread_mutex_unlock(&lock);
    *node = (cudaGraphNode_t)f;
    return cudaSuccess;
}
cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t n,
                                       cudaGraph_t child)
{
    (void)deps, (void)n;
    if (!g || !child)
        return cudaErrorInvalidValue;
    pthread_mutex_lock(&lock);
    fnode *f = add_node(g, N_CHILD, NULL);
    f->child = child;
    pthread_mutex_unlock(&lock);
    *node = (cudaGraphNode_t)f;
    return cudaSuccess;
}
cudaError_t cudaGraphAddNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps,
                             const cudaGraphEdgeData *data, size_t n, struct cudaGraphNodeParams *p)
{
    (void)deps, (void)data, (void)n;
    pthread_mutex_lock(&lock);
    fnode *f;
    if (p->type == cudaGraphNodeTypeConditional) {
        f = add_node(g, N_COND, NULL);
        p->conditional.phGraph_out = (cudaGraph_t *)calloc(p->conditional.size, sizeof(cudaGraph_t));
        for (unsigned i = 0; i < p->conditional.size; i++)
            p->conditional.phGraph_out[i] = (cudaGraph_t)calloc(1, sizeof(struct CUgraph_st));
    } else if (p->type == cudaGraphNodeTypeKernel) {
        f = add_node(g, N_KERNEL, name_of(p->kernel.func));
        keep_args(f, p->kernel.kernelParams);
    } else {
        f = add_node(g, N_OTHER, NULL);
    }
    pthread_mutex_unlock(&lock);
    *node = (cudaGraphNode_t)f;
    return cudaSuccess;
}
cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle *h, cudaGraph_t g, unsigned def, unsigned flags)
{
    static unsigned long long next = 1;
    (void)g, (void)def, (void)flags;
    *h = next++;
    return cudaSuccess;
}
cudaError_t cudaGraphKernelNodeSetAttribute(cudaGraphNode_t node, cudaKernelNodeAttrID attr,
                                            const cudaKernelNodeAttrValue *v)
{
    (void)node, (void)attr, (void)v;
    return cudaSuccess;
}
cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType *t)
{
    (void)node;
    *t = cudaGraphNodeTypeKernel;
    return cudaSuccess;
}
cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *exec, cudaGraph_t g, cudaGraphInstantiateParams *p)
{
    FORBIDDEN_IN_CAPTURE("cudaGraphInstantiateWithParams");
    *exec = (cudaGraphExec_t)calloc(1, sizeof(struct CUgraphExec_st));
    (*exec)->g = g;
    if (p)
        p->result_out = cudaGraphInstantiateSuccess;
    return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t g, unsigned long long flags)
{
    (void)flags;
    return cudaGraphInstantiateWithParams(exec, g, NULL);
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    FORBIDDEN_IN_CAPTURE("cudaGraphExecDestroy");
    free(exec);
    return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s)
{
    cudaGraph_t g = NULL;
    cudaError_t e;
    pthread_mutex_lock(&lock);
    if (enqueue(s, "cudaGraphLaunch", &e, &g))
        e = violate("cudaGraphLaunch", "a graph launched into a capturing stream: add it as a child graph node");
    else if (e == cudaSuccess && exec)
        run_graph(exec->g);
    pthread_mutex_unlock(&lock);
    return e;
}

/* ---- libraries (the compiled kernel) ---------------------------------------------------------- */
cudaError_t cudaLibraryLoadData(cudaLibrary_t *lib, const void *code, enum cudaJitOption *jo, void **jv, unsigned nj,
                                enum cudaLibraryOption *lo, void **lv, unsigned nl)
{
    (void)code, (void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
    FORBIDDEN_IN_CAPTURE("cudaLibraryLoadData");
    *lib = (cudaLibrary_t)calloc(1, 16);
    return cudaSuccess;
}
cudaError_t cudaLibraryGetKernel(cudaKernel_t *k, cudaLibrary_t lib, const char *name)
{
    (void)lib;
    char *handle = (char *)calloc(1, 16);
    pthread_mutex_lock(&lock);
    add_kname(handle, name);
    pthread_mutex_unlock(&lock);
    *k = (cudaKernel_t)handle;
    return cudaSuccess;
}
cudaError_t cudaLibraryUnload(cudaLibrary_t lib)
{
    FORBIDDEN_IN_CAPTURE("cudaLibraryUnload");
    free(lib);
    return cudaSuccess;
}
