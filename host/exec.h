/* exec.h: what every executor provides, and the run state they all report through.
 *
 * api.c owns binding, result copying rules and message formatting; an executor only walks
 * a validated program. Every executor fills the same exec_outcome, so the status line
 * for a stopped run is formatted once (exec_format_stop) whatever ran it.
 */
#ifndef CFX_EXEC_H
#define CFX_EXEC_H

#include <stdint.h>
#include <stdio.h>

#include "cfx.h"
#include "program.h"

#ifdef __cplusplus
/* .cu files are C++, which has no <stdatomic.h> before C++23; the flag has the layout of
 * an int there and is read with __atomic_load_n. */
typedef int exec_atomic_int;
extern "C" {
#else
#include <stdatomic.h>
typedef atomic_int exec_atomic_int;
#endif

/* A registered application kernel as an executor sees it (resolved by name). */
typedef struct exec_kernel {
    const char *name;
    cfx_cpu_kernel cpu_fn;
    cfx_cuda_kernel cuda_fn;
    void *user;
} exec_kernel;

/* How a run ended. `record` is the index of the record that stopped it (-1 for ok);
 * detail holds what the message needs: for index, the index value and the row count;
 * for limit, the budget. */
typedef struct exec_outcome {
    cfx_status status;
    int32_t record;
    int64_t detail[2];
    int64_t iterations; /* TICKs executed */
} exec_outcome;

/* One run's arguments. inputs[i] / results[i] follow prog->inputs / prog->results. */
typedef struct exec_run {
    const cfx_prog *prog;
    void *const *inputs;
    void *const *results;
    int device_buffers;          /* 1: inputs and results are device pointers */
    void *stream;                /* cudaStream_t, or NULL for the executor's own */
    int64_t max_iters;           /* 0: no limit */
    exec_atomic_int *cancel;     /* set to 1 by cfx_cancel from any thread */
    const exec_kernel *kernels;  /* prog->nkernels entries, in prog->kernels order */
    void (*print)(void *user, const cfx_prog *prog, int32_t record, const void *data);
    void *print_user;            /* print gets the PRINT record and its slot's bytes */
    FILE *trace;                 /* Chrome trace events go here when not NULL */
} exec_run;

/* The executor interface. create() may cache per-program state (an uploaded program, a
 * built CUDA graph); run() starts a run and, unless `async`, waits for it; wait() blocks
 * until the run ends and fills the outcome. */
typedef struct exec_ops {
    cfx_backend backend;
    int (*available)(char *why, size_t len);
    void *(*create)(const cfx_prog *prog, char *err, size_t len);
    int (*run)(void *self, const exec_run *run, int async, char *err, size_t len);
    int (*wait)(void *self, exec_outcome *out, char *err, size_t len);
    void (*destroy)(void *self);
    /* cuda-persistent only (NULL elsewhere): sets the mode of the next runs (a
     * cfx_persistent_mode), builds what it needs, and returns the mode they will use, with why
     * in `why`; -1 when it cannot be set now. */
    int (*mode)(void *self, int want, char *why, size_t len);
} exec_ops;

extern const exec_ops cpu_exec_ops;
/* device/: defined when cfx is built with CUDA; the stubs in host/nodevice.c say
 * "cfx was built without CUDA" otherwise. */
extern const exec_ops dev_host_ops, dev_graph_ops, dev_persistent_ops;
/* cuda-persistent with its two modes (device/compiled.cu): a compiled kernel, or the
 * interpreter, dev_persistent_ops, which it runs where the compiled kernel cannot. */
extern const exec_ops dev_compiled_ops;

/* The CPU executor as a plain call: runs prog over host buffers to the end. */
int cpu_run(const exec_run *run, exec_outcome *out);

/* `FILE:LINE:COL: run stopped: STATUS: DETAIL` for a stopped run (not for ok). */
void exec_format_stop(const cfx_prog *prog, const exec_outcome *out, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
