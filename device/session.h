/* session.h: the run machinery both modes of the cuda-persistent executor share (session.cu):
 * the interpreter (interp.cu) and the compiled kernel (compiled.cu) each embed a
 * dev_session as their first member and hand it a dev_session_mode, a small table of what only
 * the mode knows: how its kernel is launched, what it ends a launch at, its graph for device
 * launch, its shared state as a run starts, and its timeline.
 *
 * The session owns the uploaded program and the streams, the records' site graphs and the
 * kernel's graph for device launch (setting them up, falling back to pause and relaunch, the
 * CALL sites' capture at the first run), a run from its start to its outcome (the first launch,
 * the wait, the pauses served by the host with a new launch each, the results, the forced
 * outcome of a failed CALL), a run recorded by the application's stream capture, the blocks'
 * progress words and the hang report, and the traced run's host track.
 *
 * Included only from .cu files (it names CUDA types). */
#ifndef CFX_SESSION_H
#define CFX_SESSION_H

#include <cuda_runtime.h>
#include <stdint.h>
#include <time.h>

#include "blas.h"
#include "dev.h"
#include "host/runtime/exec.h"
#include "host/program/program.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dev_session dev_session;

/* What a mode supplies. Every entry but those marked optional is required. */
typedef struct dev_session_mode {
    const char *name;   /* "cuda-persistent (interpreter)": the capture checks' messages */
    const char *kernel; /* "device", "compiled kernel": "the KERNEL paused at record ..." */
    /* 1 when record i ends the kernel's launch (its work runs between two launches) */
    int (*ends_launch)(const dev_session *s, int32_t i);
    /* The kernel's graph for device launch into s->main_graph and s->main_exec, its node
     * cooperative where `coop` (the device runs cooperative device-launched nodes): 0, or -1
     * with why (the session falls back to the pause path). */
    int (*device_graph)(dev_session *s, int coop, char *why, size_t len);
    /* The kernel's shared state as a run starts, enqueued on s->stream (s->in_capture: inside
     * the application's capture). */
    int (*reset_sync)(dev_session *s, char *err, size_t errlen);
    /* A launch on s->stream: the run's first (pc -1; s->run_device: through the kernel's graph),
     * or the next after a pause at record pc. Inside the application's capture (s->in_capture)
     * a plain launch without the L2 window. */
    int (*launch)(dev_session *s, int32_t pc, char *err, size_t errlen);
    /* With the state saying pause and the kernel's shared state read (sync_host), the record
     * the launch ended at (-1: not a record that can end it). */
    int32_t (*pause_pc)(const dev_session *s, const dev_state *st);
    /* optional: while the run goes on (and once after), beside the hang report */
    int (*poll)(dev_session *s, char *err, size_t errlen);
    /* optional: the last launch ended, before the results: 0 to go on, -1 with err; *handled
     * set when the mode has finished the run itself (the return value is the run's). */
    int (*ended)(dev_session *s, const dev_state *st, int *handled, char *err, size_t errlen);
    /* a traced or profiled run's timeline, after its outcome */
    int (*timeline)(dev_session *s, char *err, size_t errlen);
    /* optional: under capture, why this run cannot be recorded yet (err), or 0 */
    int (*capture_ready)(dev_session *s, const exec_run *run, char *err, size_t errlen);
    /* optional: the device launch state changed (cfx_exec_backend_detail's line) */
    void (*describe)(dev_session *s);
} dev_session_mode;

struct dev_session {
    const dev_session_mode *mode;
    const cfx_prog *prog;
    dev_prog d;
    int uploaded;               /* d holds the uploaded program */
    cudaStream_t own;
    cudaStream_t capture;       /* sites' graphs are captured here */
    int nblocks;
    int cooperative;            /* the device supports cooperative launches */
    blas_ctx *blas;             /* the products' cuBLAS; NULL: every product inline */
    int64_t product_min;        /* the plan's launch_product_min (0: every product inline) */
    int32_t nlaunches;          /* records that end the launch (the mode's count) */
    int32_t nlaunch_calls;      /* CALLs among them (dev_session_alloc counts them) */
    const void *sync;           /* the kernel's shared state (device), the mode's type... */
    void *sync_host;            /* ...read here after each launch... */
    size_t sync_bytes;          /* ...of this size */
    exec_progress *progress;    /* per block, host-mapped: where each block stands */
    exec_progress *progress_dev;
    char hang[4096];            /* the last run's hang report, taken when it was cancelled, or "" */
    dev_host_track host;        /* a traced run's host phases, for the trace's host track */
    /* device graph launch */
    int device_launch;          /* 1: runs go through main_exec; 0: pause and relaunch */
    char why_pause[400];        /* why they pause */
    cudaGraph_t *site_graph;    /* per record: the graph of its work, or NULL */
    cudaGraphExec_t *site_exec;
    cudaGraphExec_t *site_exec_dev; /* device copy of site_exec, which the kernel reads */
    cudaGraph_t main_graph;
    cudaGraphExec_t main_exec;
    cudaGraph_t trace_graph;    /* the interpreter's graph for traced runs (made by it), or NULL */
    cudaGraphExec_t trace_exec;
    exec_kernel *captured;      /* the kernels the CALL sites were captured with, NULL: none yet */
    /* the run in flight */
    exec_run run;
    cudaStream_t stream;
    int in_flight;
    int in_capture;             /* recording into the application's capture now */
    int captured_run;           /* the last run was recorded by the application's capture */
    int run_device;             /* this run goes through the kernel's graph */
    int paused;                 /* the run ended a launch early at least once */
    int forced;                 /* a CALL failed at a pause: the outcome is CFX_ERROR at forced_record */
    int32_t forced_record;
    struct timespec t_launch;   /* the run's first launch */
    exec_outcome out;
};

/* Uploads prog and makes the streams (the L2 window is the mode's: dev_l2_window). */
int dev_session_upload(dev_session *s, const cfx_prog *prog, char *err, size_t errlen);
/* With s->nblocks known: the progress words and the site graphs' tables. */
int dev_session_alloc(dev_session *s, char *err, size_t errlen);
/* Frees what the session holds and leaves it ready to upload again (mode, prog, the last run
 * and its outcome kept). */
void dev_session_free(dev_session *s);

/* Device graph launch: the probe, the products' graphs, the kernel's graph. Falls back to
 * pausing (with the reason) where anything does not work; -1 only for a CUDA failure that
 * leaves the executor unusable. */
int dev_session_device_launch(dev_session *s, char *err, size_t errlen);
/* Leaves device graph launch for the pause path, for `why`. */
void dev_session_fall_back(dev_session *s, const char *why);
/* The CALL sites' graphs for this run's kernels where they changed (device launch only). */
int dev_session_capture_calls(dev_session *s, const exec_run *run, char *err, size_t errlen);
/* 1 when the CALL sites' graphs are to be captured again for this run's kernels. */
int dev_session_calls_changed(const dev_session *s, const exec_run *run);

/* A run's start: -1 when one is in flight (err); otherwise *stream is the run's, and the
 * return 1 when it is being captured by the application, 0 when not. */
int dev_session_stream(dev_session *s, const exec_run *run, cudaStream_t *stream, char *err, size_t errlen);
/* A run recorded into the application's capture on `stream` (EXEC_CAPTURED, or -1). */
int dev_session_capture(dev_session *s, const exec_run *run, int async, cudaStream_t stream, char *err,
                        size_t errlen);
/* A run that is not captured: begin (an NVTX range "run" opens), then the mode's own buffers
 * and s->run_device (whether this run goes through the kernel's graph), then launch, which ends
 * the range and, unless async, the run; fail ends a run that failed between the two (returns
 * -1). */
void dev_session_begin(dev_session *s, const exec_run *run);
int dev_session_launch(dev_session *s, int async, char *err, size_t errlen);
int dev_session_fail(dev_session *s);
/* Waits for the run in flight (serving its pauses) and reads its outcome. */
int dev_session_finish(dev_session *s, char *err, size_t errlen);
/* cfx_wait: the outcome of the last run (an application's replay, or the run in flight). */
int dev_session_wait(dev_session *s, exec_outcome *out, char *err, size_t errlen);
/* The "still in flight" refusal: -1 with err when a run is in flight, else 0. */
int dev_session_busy(const dev_session *s, char *err, size_t errlen);

/* The trace's start: the host's clock on the device's (through 8 bytes of device memory,
 * `clock`), the header, and the host's track after the blocks' (tid nblocks). *base is the
 * trace's zero on the device's clock, the earlier of `device_base` and the host's first span. */
int dev_session_trace_open(dev_session *s, const char *executor, unsigned long long device_base,
                           unsigned long long *clock, unsigned long long *base, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
