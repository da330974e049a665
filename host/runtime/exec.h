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

#include "host/cfx.h"
#include "host/program/program.h"

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

/* A run's flat profile as an executor fills it: per record, how many times it ran and the
 * nanoseconds from its start to the next record's, so the times add up to the run's (profile.c
 * turns them into rows by line, by kind and by loop). The caller allocates prog->nrecords of
 * each and zeroes them; run_ns is the span from the first record's start to the run's end. */
typedef struct exec_profile {
    int64_t *count;
    int64_t *ns;
    int64_t run_ns;
} exec_profile;

/* Where a block of a persistent kernel stands, as it says in host-mapped memory (written by its
 * thread 0 at each TICK when the poll's clock is due, and around each grid barrier): the last
 * TICK or barrier record it reached, the barrier it waits at (-1: none), and its iterations at
 * that TICK. */
typedef struct exec_progress {
    volatile int32_t record;
    volatile int32_t barrier;
    volatile unsigned long long iterations;
} exec_progress;

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
    exec_profile *profile;       /* filled when not NULL (the cpu executor's, so far) */
} exec_run;

/* The executor interface. create() may cache per-program state (an uploaded program, a
 * built CUDA graph); run() starts a run and, unless `async`, waits for it; wait() blocks
 * until the run ends and fills the outcome. detail() (may be NULL) says in one line which
 * path the executor takes, for cfx_exec_backend_detail; the text lives in the executor.
 * mode() is cuda-persistent's (below). */
typedef struct exec_ops {
    cfx_backend backend;
    int (*available)(char *why, size_t len);
    void *(*create)(const cfx_prog *prog, char *err, size_t len);
    int (*run)(void *self, const exec_run *run, int async, char *err, size_t len);
    int (*wait)(void *self, exec_outcome *out, char *err, size_t len);
    void (*destroy)(void *self);
    const char *(*detail)(void *self);
    /* cuda-persistent only (NULL elsewhere): sets the mode of the next runs (a
     * cfx_persistent_mode), builds what it needs, and returns the mode they will use, with why
     * in `why`; -1 when it cannot be set now. */
    int (*mode)(void *self, int want, char *why, size_t len);
    /* cuda-persistent and cpu (NULL elsewhere): cfx_set_option, already checked for range;
     * 0, or -1 with why. */
    int (*option)(void *self, int option, int64_t value, char *why, size_t len);
    /* may be NULL: the last run's hang report (exec_format_hang, taken when it was cancelled),
     * "" when there is none; the text lives in the executor */
    const char *(*hang)(void *self);
    /* may be NULL (nothing to prepare): cfx_prepare, every allocation, upload, build, probe and
     * graph instantiation a run with these arguments needs, so that the run itself enqueues
     * only work a stream capture can record. 0, or -1 with why. */
    int (*prepare)(void *self, const exec_run *run, char *err, size_t len);
    /* may be NULL (the backend has none): cfx_exec_graph, one run's work (run->device_buffers)
     * as a new cudaGraph_t in *graph, which the caller owns. 0, or -1 with why. */
    int (*graph)(void *self, const exec_run *run, void **graph, char *err, size_t len);
} exec_ops;

/* run() returns this instead of 0 when its stream was being captured: the run's work was
 * recorded into the capture and nothing ran; wait() then reads the outcome that the last replay
 * of the application's graph published (docs/persistent.md, "Inside the application's graph"). */
#define EXEC_CAPTURED 1

extern const exec_ops cpu_exec_ops;

/* ---- the backend table ----------------------------------------------------------------------
 * One row per cfx_backend, indexed by it (exec.c). ORDER BACKEND: cfx.h's enum and the rows
 * change together, and a static_assert there checks the count. A new backend is its enum
 * constant, its row, and its executor's own file (a CUDA one also its dev_module entry). */
typedef struct exec_backend {
    const char *name; /* cfx_backend_name, `cfx run --backend NAME`, Python's backend= */
    /* 1: a CUDA backend: its runs may take device buffers (cfx_bind_device) and call the CUDA
     * functions of application kernels; 0: host buffers and the CPU functions */
    int device;
    /* its executor, or NULL with why (AUTO: NULL, it picks another row; a CUDA backend: dev_ops,
     * which loads the CUDA module) */
    const exec_ops *(*ops)(cfx_backend b, char *why, size_t len);
} exec_backend;

#define EXEC_NBACKENDS 5
extern const exec_backend exec_backends[EXEC_NBACKENDS];
/* The row of b, or NULL for a value out of the enum. */
const exec_backend *exec_backend_row(cfx_backend b);

/* ---- the CUDA executors ------------------------------------------------------------------
 * They live in a module of their own, libcfx_cuda.so (the .cu files of device/ and
 * kernels/), which device/loader.c opens the first time a CUDA backend is asked for; libcfx
 * itself has no link dependency on CUDA. Without CUDA, device/none.c answers for the loader. */

/* Bumped whenever dev_module or exec_ops changes, so a module from another build is refused. */
#define DEV_MODULE_ABI 6
/* The module's one exported symbol: a function taking nothing and returning its table. */
#define DEV_MODULE_ENTRY "cfx_cuda_module"

typedef struct dev_module {
    int abi;                  /* DEV_MODULE_ABI of the module's build */
    int version_major, version_minor; /* CFX_VERSION_* of the module's build */
    size_t ops_size;          /* sizeof(exec_ops) there */
    int cudart_version;       /* CUDART_VERSION it was compiled with (13000 is 13.0) */
    const exec_ops *host, *graph, *persistent; /* persistent: with its two modes */
    /* compiled.h's checks, which need NVRTC and so run in the module (device/compiled.cu) */
    int (*nvrtc_available)(char *why, size_t len);
    int (*kernel_build)(const cfx_prog *prog, int arch, int flags, size_t *image_bytes,
                        double *ms, char *err, size_t errlen);
    /* ops registered by their source on the device (compiled.h's comp_op_*) */
    int (*op_check)(const char *text, char *why, size_t len);
    int (*op_launch)(void **handle, const char *text, void *stream, void *const *p, int np, int64_t n,
                     char *why, size_t len);
    void (*op_release)(void *handle);
} dev_module;
typedef const dev_module *(*dev_module_fn)(void);

/* Defined only inside the module, which hands them out through its table. */
extern const exec_ops dev_host_ops, dev_graph_ops, dev_persistent_ops;
/* cuda-persistent with its two modes (device/compiled.cu): a compiled kernel, or the
 * interpreter, dev_persistent_ops, which it runs where the compiled kernel cannot. The table's
 * `persistent` is this one. */
extern const exec_ops dev_compiled_ops;

/* The executor of CUDA backend b, loading the module on first use; NULL with the reason in
 * why when the build has no CUDA, no device is present (asked of the CUDA runtime alone, so
 * the module is not loaded for nothing), or the module or a library it needs cannot be
 * loaded. The caller still asks ops->available(). Thread-safe. */
const exec_ops *dev_ops(cfx_backend b, char *why, size_t len);
/* For `cfx backends`: loads the module even where no device is present, and says in buf
 * what was built and what loaded. Returns 1 when the module loaded, 0 for a build without
 * CUDA, -1 when it cannot be loaded. */
int dev_module_describe(char *buf, size_t len);
/* 1 when this build has the CUDA executors, 0 otherwise; loads nothing (`cfx --version`). */
int dev_module_built(void);
/* The module's table, loading it even where no device is present (NVRTC needs none); NULL with
 * the reason in why. */
const dev_module *dev_module_get(char *why, size_t len);

/* The CPU executor as a plain call: runs prog over host buffers to the end, accumulating as
 * the reference does (CFX_ACCUMULATE_F64), so its results are bit-identical to the kernels/
 * bodies; cpu_run_mode takes the mode (a cfx_accumulate). Both run on the calling thread alone;
 * cpu_run_threads splits large elementwise records and the fast mode's sums over `threads`
 * (host/runtime/pool.c; 1: the calling thread alone) and gives the CBLAS `blas_threads`
 * before its products (0: the BLAS's own count). */
int cpu_run(const exec_run *run, exec_outcome *out);
int cpu_run_mode(const exec_run *run, int accumulate, exec_outcome *out);
int cpu_run_threads(const exec_run *run, int accumulate, int threads, int blas_threads, exec_outcome *out);

/* `FILE:LINE:COL: run stopped: STATUS: DETAIL` for a stopped run (not for ok). */
void exec_format_stop(const cfx_prog *prog, const exec_outcome *out, char *buf, size_t len);

/* A hang report from nblocks progress words (exec_progress; record -1: the block has reached
 * none): a line per block with the statement it stood at and its iterations, then, for each
 * grid barrier some block waits at, which blocks wait there and which have not arrived and
 * where those stand. Writes at most len bytes into buf (NUL-terminated). */
void exec_format_hang(const cfx_prog *prog, const exec_progress *progress, int nblocks, char *buf, size_t len);

/* A record's name for NVTX ranges and traces: its kind, its op, and its source position
 * (`BINARY add @ 12:5`), into buf of len bytes. */
void exec_record_name(const cfx_prog *prog, int32_t record, char *buf, size_t len);

/* Chrome trace documents, as every executor writes them. exec_trace_open writes
 * `{"traceEvents":[` and metadata events naming the process (`cfx EXECUTOR: graph NAME (FILE)`)
 * and its threads: tid 0 called `thread` when nthreads is 0, else tids 0 .. nthreads-1 called
 * `thread N`. exec_trace_event writes one complete event, ",\n" first, with the record's source
 * position (the position `cfx dump` prints) in args "line" and "col", and "record"; `name` NULL
 * is the record's kind (and op), and the name of a record's event ends in ` (line N)`. record -1 is a span of the
 * whole graph, at the position of its first statement. The caller closes the array and the
 * document. */
void exec_trace_open(FILE *f, const char *executor, const cfx_prog *prog, const char *thread,
                     int nthreads);
void exec_trace_event(FILE *f, const cfx_prog *prog, int32_t record, const char *name, double ts_us,
                      double dur_us, int tid);

/* The profile's rows (profile.c): by source line (ascending), by record kind (most time
 * first), and one per loop (by line), into rows[0 .. max); returns how many there are. */
int exec_profile_rows(const cfx_prog *prog, const exec_profile *p, cfx_profile_row *rows, int max);
/* The profile as the text `cfx run --profile` prints (malloc'd; NULL when out of memory). */
char *exec_profile_text(const cfx_prog *prog, const exec_profile *p, const char *executor);

#ifdef __cplusplus
}
#endif
#endif
