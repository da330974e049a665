/* dev.h: what the three CUDA executors share: the checking macro, the uploaded program,
 * the run state the device reports through, and the host-mapped control block.
 *
 * Included only from .cu files (it names CUDA types). The implementation is dev.cu.
 */
#ifndef CFX_DEV_H
#define CFX_DEV_H

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "host/runtime/exec.h"
#include "host/program/program.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Records a failed CUDA call as "FILE:LINE: CALL: MESSAGE" in err (of size errlen). */
void dev_error(char *err, size_t errlen, const char *call, const char *file, int line,
               const char *msg);

/* Every CUDA and cuBLAS call goes through one of these. The enclosing function has
 * `char *err`, `size_t errlen` and a `fail:` label: one cleanup exit, as SQLite does. */
#define CUDA_TRY(call)                                                                    \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            dev_error(err, errlen, #call, __FILE__, __LINE__, cudaGetErrorString(e_));    \
            goto fail;                                                                    \
        }                                                                                 \
    } while (0)
/* After every kernel launch. */
#define CUDA_LAUNCHED() CUDA_TRY(cudaGetLastError())

/* 1 if a CUDA device is present; otherwise 0 and "no CUDA device is present (...)". */
int dev_available(char *why, size_t len);

/* How a run ended, written by the device (or by the host-driven executor). Mirrors
 * exec_outcome; status 0 is ok. Lives in device memory. */
typedef struct dev_state {
    int32_t status;     /* cfx_status; the first stop wins (atomicCAS from CFX_OK) */
    int32_t record;     /* record that stopped the run, -1 while running */
    int64_t detail[2];
    unsigned long long iterations;
} dev_state;

/* The host-mapped control block (cudaHostAllocMapped): the host writes `cancel` while the
 * run is in flight and the device polls it; the device never waits on the host. */
typedef struct dev_control {
    volatile int32_t cancel;
    int32_t pad_;
    int64_t max_iters;  /* 0: no limit */
} dev_control;

/* A program copied to the device: records, slots and table in device memory, and an arena
 * whose const region holds the program's constants (no record writes there, the validator
 * guarantees it, so it is copied once per upload). */
typedef struct dev_prog {
    const cfx_prog *prog;     /* the host program it came from */
    cfx_record *records;      /* device */
    cfx_slot *slots;          /* device */
    int32_t *table;           /* device (NULL when the program has none) */
    uint8_t *arena;           /* device, prog->arena_bytes */
    dev_state *state;         /* device */
    dev_control *control;     /* host-mapped; control_dev is its device address */
    dev_control *control_dev;
    int device;               /* the CUDA device it lives on */
    int sms;                  /* multiprocessors of that device */
    cudaAccessPolicyWindow l2; /* the L2 window of its launches (dev_l2_window); num_bytes 0: none */
    dev_state *pub;           /* host-mapped: the outcome a captured run's replays publish (dev_publish) */
    dev_state *pub_dev;
} dev_prog;

int dev_prog_upload(dev_prog *d, const cfx_prog *p, char *err, size_t errlen);
void dev_prog_free(dev_prog *d);

/* Before a run: reset the state, copy the inputs into their slots (from host or device
 * buffers), set the budget and clear the cancel flag. All on `stream`. */
int dev_run_begin(dev_prog *d, const exec_run *run, cudaStream_t stream, char *err,
                  size_t errlen);
/* Enqueues on `stream`, after the run, the copy of the results to the caller's buffers that
 * happens only if the state says ok: for device buffers a small kernel that reads the state
 * and copies (no host round trip, so an asynchronous run stays asynchronous); for host
 * buffers the executor calls it after synchronizing and it copies only if ok. */
int dev_copy_results(dev_prog *d, const exec_run *run, cudaStream_t stream, char *err,
                     size_t errlen);
/* Reads the state back (stream must be synchronized) into an exec_outcome. */
int dev_read_outcome(dev_prog *d, exec_outcome *out, char *err, size_t errlen);

/* ---- a run inside the application's stream capture ------------------------------------------
 * (docs/persistent.md, "Inside the application's graph"). A warm run enqueues only capturable work;
 * these are what the executors share to record it, or to refuse it before recording anything. */

/* 1 when `s` is being captured (cudaStreamIsCapturing), 0 when not; -1 with why when it cannot be
 * told. */
int dev_capturing(cudaStream_t s, char *err, size_t errlen);
/* What every backend refuses under capture, before it records anything: cfx_run (it waits for the
 * run), host buffers (bind device ones: they are read and written at each replay), prints (the host
 * reads them after the run), traces and profiles (the host reads them). `backend` names the backend
 * in the message. 0, or -1 with why. */
int dev_capture_check(const exec_run *run, int async, const char *backend, char *err, size_t errlen);
/* The last work of a captured run: the run state copied into d->pub (host-mapped), so that cfx_wait
 * after a replay reads that replay's outcome without a copy or a synchronization of its own.
 * dev_publish_pending marks the outcome as not yet published (at the capture). */
int dev_publish(dev_prog *d, cudaStream_t s, char *err, size_t errlen);
void dev_publish_pending(dev_prog *d);
/* The end of every captured run: its results' copies, then its outcome published. */
int dev_capture_end(dev_prog *d, const exec_run *run, cudaStream_t stream, char *err, size_t errlen);
/* The outcome the last replay published; -1 with why when no replay has published one since the
 * capture. */
int dev_read_published(dev_prog *d, exec_outcome *out, char *err, size_t errlen);
/* cfx_exec_graph for an executor whose run() records a captured run: run() on a stream of this
 * call's own, under capture, into a new graph handed to the caller (*graph). 0, or -1 with why. */
typedef int (*dev_run_fn)(void *self, const exec_run *run, int async, char *err, size_t errlen);
int dev_graph_of_run(dev_run_fn run_fn, void *self, const exec_run *run, void **graph, char *err, size_t errlen);

/* CALL record r: describes its operand slots as cfx_tensors over d's arena and lets kernel k
 * (NULL when the run names none) enqueue its work on `stream`. Returns 0 and sets *failed
 * when k is NULL, has no CUDA function or reports failure (the run stops with CFX_ERROR, as
 * on the cpu executor); -1 for out of memory or a CUDA failure. */
int dev_call_kernel(const dev_prog *d, const exec_kernel *k, const cfx_record *r,
                    cudaStream_t stream, int *failed, char *err, size_t errlen);

/* 1 if the run's application kernels differ, by CUDA function or user pointer, from the n that
 * CALL sites were captured with (`captured`; NULL: nothing captured yet). A run may pass no
 * kernels (run->kernels NULL, as cpu.c allows): that reads as kernels with no CUDA function. */
int dev_kernels_changed(const exec_kernel *captured, int32_t n, const exec_run *run);

/* Waits for `stream`, forwarding a cfx_cancel() made meanwhile (`cancel`, may be NULL) to
 * the device's flag in d's control block. */
int dev_wait_stream(dev_prog *d, cudaStream_t stream, exec_atomic_int *cancel, char *err,
                    size_t errlen);
/* The same, calling poll(user, err, errlen) while the stream runs, and once after it has
 * ended (a host that drains what the device writes as it goes); a poll that returns non-zero
 * ends the wait with -1. */
int dev_wait_stream_poll(dev_prog *d, cudaStream_t stream, exec_atomic_int *cancel,
                         int (*poll)(void *user, char *err, size_t errlen), void *user, char *err,
                         size_t errlen);

/* Device graph launch, as both modes of cuda-persistent use it (session.cu for both, with
 * interp_launch.cu for the interpreter's graph and compiled.cu for the compiled kernel's).
 *
 * dev_device_graph: a graph of one kernel node, func<<<blocks, threads, smem>>>(args), cooperative
 * or not (func may be a cudaKernel_t), instantiated for device launch and uploaded on s. 0, or
 * -1 with why in err; on failure *graph may hold the graph (the caller destroys it) and *exec is
 * NULL.
 *
 * dev_capture_site: the work of a record that ends a kernel's launch as a graph that kernel
 * tail-launches: what enqueue(user, stream) puts on `capture` (a stream of the executor's own),
 * then an empty kernel, so that no graph is empty; instantiated for device launch and uploaded
 * on `upload`. 0 with *graph and *exec; 1 when the work cannot be captured or instantiated so
 * (why in err; the executor then pauses for it instead); -1 for a CUDA failure outside it. */
int dev_device_graph(const void *func, void **args, int blocks, int threads, size_t smem, int cooperative,
                     const cudaAccessPolicyWindow *l2, cudaStream_t s, cudaGraph_t *graph, cudaGraphExec_t *exec,
                     char *err, size_t errlen);
/* The L2 window (plan.c's sched_l2_keep picks the tensor): d->l2 becomes an access policy
 * window that keeps slot s's bytes of the arena in L2's set-aside for persisting lines while
 * the kernel runs; s < 0 or `on` 0 clears it. The context's set-aside is raised to what the
 * window needs when it is smaller, never lowered (an application's own setting stays). Where the
 * device keeps nothing (no set-aside: before sm_80, under MIG or MPS) the window is cleared and
 * the run goes on without; there is no failure to report.
 *
 * dev_launch: func<<<blocks, threads, smem, s>>>(args), cooperative or not, with the window l2
 * where l2 is not NULL and its num_bytes not 0; a launch refused with the window is made again
 * without it, and *l2 is cleared so that later launches go without it too. */
void dev_l2_window(dev_prog *d, int32_t s, int on);
/* "; L2 keeps 33.6 MB of the arena (hit ratio 1.00)" for a backend's detail, "" without a window. */
void dev_l2_describe(const dev_prog *d, char *buf, size_t len);
int dev_launch(const void *func, void **args, int blocks, int threads, size_t smem, int cooperative,
               cudaAccessPolicyWindow *l2, cudaStream_t s, char *err, size_t errlen);
typedef int (*dev_enqueue)(void *user, cudaStream_t s, char *err, size_t errlen);
int dev_capture_site(cudaStream_t capture, cudaStream_t upload, dev_enqueue enqueue, void *user,
                     cudaGraph_t *graph, cudaGraphExec_t *exec, char *err, size_t errlen);

/* A traced run's host track (both modes of cuda-persistent): the host's phases on its own clock
 * (dev_host_ns, CLOCK_MONOTONIC in nanoseconds), put on the device's global timer, which the
 * blocks stamp, by the offset dev_clock_offset measures. */
#define DEV_HOST_SPANS 256
typedef struct dev_host_track {
    struct {
        const char *name; /* a string literal */
        unsigned long long t0, t1;
    } span[DEV_HOST_SPANS];
    int n;
    int on;           /* the run is traced: its phases are kept */
    long long offset; /* the device's clock less the host's (dev_clock_offset) */
} dev_host_track;
unsigned long long dev_host_ns(void);
/* A run starts: no phases yet, kept from now on when `on` (the run is traced). */
void dev_host_track_start(dev_host_track *h, int on);
/* A phase that began at t0 (dev_host_ns) and ends now; nothing past DEV_HOST_SPANS, or when the
 * run is not traced. */
void dev_host_span(dev_host_track *h, const char *name, unsigned long long t0);
/* Sets h->offset: the global timer read by a kernel on `stream` (through 8 bytes of device
 * memory, `scratch`) between two host stamps, taken at their middle, so off by at most half a
 * launch's latency. */
int dev_clock_offset(dev_host_track *h, cudaStream_t stream, unsigned long long *scratch, char *err,
                     size_t errlen);
/* The earliest of the track's spans on the device's clock, or `base` if that is earlier. */
unsigned long long dev_host_track_base(const dev_host_track *h, unsigned long long base);
/* The track's spans as the trace's events on track `tid`, in microseconds from `base` (device
 * clock). */
void dev_host_track_write(FILE *f, const cfx_prog *p, const dev_host_track *h, unsigned long long base, int tid);

/* interp_launch.cu: whether this device runs graphs that a kernel launches from the device
 * (a probe run once per process: a cooperative kernel node, else a plain one). Returns 1 and
 * sets *cooperative, or 0 with the reason in why. The compiled kernel asks it too. */
int persist_probe_device_launch(int *cooperative, char *why, size_t len);

/* The cuda-persistent interpreter (interp.cu) with the options cfx_set_option sets, which
 * are fixed when it is created: dev_persistent_ops.create is this with the defaults. */
typedef struct persist_opts {
    int device_launch;          /* 0: pause and relaunch */
    int microops;               /* 0: one-block loops record by record */
    int64_t launch_product_min; /* -1: SCHED_LAUNCH_PRODUCT_MIN; 0: every product inline */
    int l2_window;              /* 0: no L2 window (dev_l2_window) */
} persist_opts;
#define PERSIST_OPTS_DEFAULT {1, 1, -1, 1}
void *persist_create_opts(const cfx_prog *prog, const persist_opts *o, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
