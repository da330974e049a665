/* cfx.h: the public C API of cfx, the one header an application includes.
 *
 * Compile a .cfx file or string into a module, pick a graph, create an executor for it,
 * bind buffers by name, run, and read the status. The library never prints and never
 * exits: every failure comes back as a return value and a message the caller owns.
 *
 *   cfx_module *m = cfx_compile_file(NULL, "graphs/if_in_while.cfx", &diag);
 *   cfx_exec *e = cfx_exec_new(m, cfx_graph_find(m, NULL), CFX_BACKEND_CPU, &err);
 *   cfx_bind(e, "x", &x, sizeof x); ...
 *   if (cfx_run(e) != CFX_OK) puts(cfx_exec_message(e));
 */
#ifndef CFX_H
#define CFX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CFX_VERSION_MAJOR 1
#define CFX_VERSION_MINOR 0
/* The version of the .cfx language this build compiles; raised by every change that alters what an
 * existing program means (docs/CHANGES.md lists them). */
#define CFX_LANGUAGE_VERSION 2

/* ---- types ---- */
/* ORDER DTYPE: cfx_dtype_name, cfx_dtype_size, cfx_dtype_count (host/runtime/exec.c) */
typedef enum cfx_dtype { CFX_F32, CFX_F64, CFX_I32, CFX_I64, CFX_BOOL } cfx_dtype;

#define CFX_TYPE_MAX_RANK 5
typedef struct cfx_type {
    cfx_dtype dtype;
    int rank;                        /* 0 for a scalar */
    int64_t dims[CFX_TYPE_MAX_RANK];
} cfx_type;

const char *cfx_dtype_name(cfx_dtype dt);  /* "f32", ...; "unknown" for another value */
int cfx_dtype_count(void);                 /* dtypes: 0 .. count - 1, so bindings can list them */
int cfx_dtype_size(cfx_dtype dt);          /* bytes per element; bool is 1 byte (0 or 1) */
int64_t cfx_type_count(const cfx_type *t); /* elements; 0 for no type (rank -1) */
/* Bytes that always hold cfx_type_str's text: `bool[` and five 20-digit dimensions. */
#define CFX_TYPE_STR_MAX 128
/* Writes `f32[2, 3]` (or `i32` for a scalar, `(no type)` for rank -1) into buf; returns buf.
 * A text longer than len - 1 is cut and ends in "...", so it never passes for a type. */
char *cfx_type_str(const cfx_type *t, char *buf, size_t len);

/* ---- run status ---- */
/* ORDER STATUS: cfx_status_name, cfx_status_count (host/runtime/exec.c) */
typedef enum cfx_status {
    CFX_OK = 0,
    CFX_STOP_ASSERT,    /* an assert was false */
    CFX_STOP_INDEX,     /* an index out of range */
    CFX_STOP_DIVIDE,    /* integer division by zero */
    CFX_STOP_VALUE,     /* a computed range step of 0 */
    CFX_STOP_LIMIT,     /* the iteration budget was spent */
    CFX_STOP_CANCELLED, /* cfx_cancel() was called */
    CFX_ERROR,          /* not a run status: misuse of the API or a failure of the backend */
} cfx_status;

const char *cfx_status_name(cfx_status s); /* "ok", "assert", "index", ...; "unknown" */
int cfx_status_count(void);                /* statuses: 0 .. count - 1 (CFX_ERROR the last) */

/* ---- context: registered application kernels ---- */
typedef struct cfx_context cfx_context;

/* One tensor argument or result handed to an application kernel. */
typedef struct cfx_tensor {
    cfx_type type;
    void *data; /* host memory for a CPU kernel, device memory for a CUDA kernel */
} cfx_tensor;

/* A CPU kernel: reads args, writes results (already allocated, with the declared types).
 * Returns 0, or non-zero to stop the run with CFX_ERROR; the run's message names the kernel
 * and the value it returned. */
typedef int (*cfx_cpu_kernel)(void *user, int nargs, const cfx_tensor *args,
                              int nresults, cfx_tensor *results);
/* A CUDA kernel: a host function that enqueues its work on `stream` (a cudaStream_t)
 * over device buffers and returns 0 without synchronizing. */
typedef int (*cfx_cuda_kernel)(void *user, void *stream, int nargs, const cfx_tensor *args,
                               int nresults, cfx_tensor *results);

cfx_context *cfx_context_new(void);
void cfx_context_free(cfx_context *ctx);
/* Registers `name` so that graphs compiled with this context may call it like an op.
 * `signature` is in the language's type syntax: "(f32[4], f32) -> (f32[4])".
 * cuda_fn may be NULL (then only the cpu backend can run graphs that call it) and so may
 * cpu_fn (then only CUDA backends can). Returns 0, or -1 with a message in *err
 * (free with cfx_free) for a bad signature or a name that is taken. */
int cfx_register_kernel(cfx_context *ctx, const char *name, const char *signature,
                        cfx_cpu_kernel cpu_fn, cfx_cuda_kernel cuda_fn, void *user,
                        char **err);

/* An op given by its source rather than by functions: one function in the C that cfx's own
 * op bodies are written in (kernels/: `CFX_HD` functions, <stdint.h> types, <math.h>
 * functions), which every executor runs: the cpu executor and the generated C from a copy
 * compiled at registration with the system C compiler (CFX_CC names another; a C compiler is
 * needed at run time), and cuda-persistent's compiled kernel inline, as a function call
 * compiled with the graph by NVRTC (other CUDA paths launch a small kernel around it). Its
 * parameters point at the elements of its arguments (const) and then of its results, in the
 * signature's order, with the C type of each dtype (f32 float, f64 double, i32 int32_t, i64
 * int64_t, bool uint8_t): */
typedef enum cfx_op_form {
    /* CFX_HD void NAME(int64_t lo, int64_t hi, const float *x, ..., float *y, ...): writes
     * elements [lo, hi) of every result (all of the same size), from any elements of its
     * arguments; cfx splits the elements over blocks and threads */
    CFX_OP_ELEMENTS = 1,
    /* CFX_HD void NAME(const float *x, ..., float *y, ...): every result in one call (a
     * sampler, a reduction); its results all have one element (every thread computes them)
     * or all have more (one thread does) */
    CFX_OP_WHOLE = 2
} cfx_op_form;
/* Registers `name` as cfx_register_kernel does, with `source` defining that function. Errors
 * come back here, never at run time: a source that does not compile (with the compiler's log
 * and the op's name), a function missing or of another signature, no C compiler, and, where
 * the CUDA executors and NVRTC are present, a source NVRTC refuses. Returns 0, or -1 with a
 * message in *err (free with cfx_free). */
int cfx_register_source(cfx_context *ctx, const char *name, const char *signature,
                        cfx_op_form form, const char *source, char **err);

/* ---- compiling ---- */
typedef struct cfx_module cfx_module;

/* Compile a file or a string. On error return NULL and set *diagnostics to every message,
 * each `FILE:LINE:COL: error: MESSAGE` followed by the source line and a caret. The
 * caller frees *diagnostics with cfx_free. ctx may be NULL. `filename` names the string
 * in messages. */
cfx_module *cfx_compile_file(cfx_context *ctx, const char *path, char **diagnostics);
cfx_module *cfx_compile_string(cfx_context *ctx, const char *filename, const char *text,
                               size_t len, char **diagnostics);
/* A value for a constant of the module that the text declares without one, `const NAME: TYPE`
 * (docs/language.md, "Module constants"): `data` holds cfx_type_count(&type) elements of the
 * dtype, row-major (bool: one byte 0 or 1). */
typedef struct cfx_constant {
    const char *name;
    cfx_type type;
    const void *data;
} cfx_constant;
/* As cfx_compile_string, with values for the file's `const NAME: TYPE` declarations that have
 * none in the text: each entry's type must equal the declaration's exactly, and every entry must
 * name a declared constant without a value. `data` is copied, so it may be freed after the call.
 * Errors are diagnostics as the others: at the declaration, or at 1:1 for an entry that names
 * nothing declared. */
cfx_module *cfx_compile_string_constants(cfx_context *ctx, const char *filename, const char *text, size_t len,
                                         const cfx_constant *constants, int nconstants, char **diagnostics);
void cfx_module_free(cfx_module *m);
void cfx_free(void *p);

int cfx_graph_count(const cfx_module *m);
const char *cfx_graph_name(const cfx_module *m, int graph);
/* Index of the graph called `name`, or of the entry graph (the first) when name is
 * NULL; -1 if there is none. */
int cfx_graph_find(const cfx_module *m, const char *name);

/* A graph or an index out of range gives a count of 0, a NULL name and a type of rank -1. */
int cfx_input_count(const cfx_module *m, int graph);
const char *cfx_input_name(const cfx_module *m, int graph, int i);
cfx_type cfx_input_type(const cfx_module *m, int graph, int i);
/* The default of input i as the command line writes a value ("2.5", "true"), or NULL when it has
 * none. An input with a default may be left unbound on a run over host buffers: every element
 * of it takes the default (a run that binds device buffers must bind every input). */
const char *cfx_input_default(const cfx_module *m, int graph, int i);
int cfx_result_count(const cfx_module *m, int graph);
const char *cfx_result_name(const cfx_module *m, int graph, int i);
cfx_type cfx_result_type(const cfx_module *m, int graph, int i);

/* The listing of a graph's records, as `cfx dump` prints it (free with cfx_free). */
char *cfx_dump(const cfx_module *m, int graph);

/* What the persistent executor's mechanisms cost on a GPU, in microseconds (bandwidth in GB/s):
 * the figures a cost sheet predicts from. */
typedef struct cfx_floors {
    double grid_barrier_us;  /* one grid barrier of the persistent kernels */
    double block_barrier_us; /* one __syncthreads of a block */
    double bandwidth_gbs;    /* device memory, bytes read plus written per second */
    double record_us;        /* one record walked by the interpreter */
    double microop_us;       /* one micro-op of a one-block loop */
    double phase_us;         /* one trip to device memory that the compiled kernel's code makes
                              * after another (a loop over tensors, a product, a combine) */
} cfx_floors;
/* The cost sheet of a graph (`cfx dump --cost`): for each loop, what one iteration costs each
 * mode of cuda-persistent in a grid of `blocks` blocks (< 1: 264, an H100's) — records walked,
 * grid and block barriers, bytes read and written in device memory, launches — and a predicted
 * time from `floors` (NULL: an H100's, measured). Computed on the host from the plan the
 * executor follows and the kernel the code generator writes; no GPU is needed. A string to
 * free with cfx_free, or NULL (out of memory, or no such graph). */
char *cfx_dump_cost(const cfx_module *m, int graph, int blocks, const cfx_floors *floors);
/* The generated kernel of a graph (`cfx dump --kernel`): target "cuda", the CUDA C that the
 * compiled mode of cuda-persistent gives NVRTC, or "c", the C function the code generator writes
 * for the host. A string to free with cfx_free, or NULL with the reason in why (no such graph or
 * target, a program the generator does not take, out of memory). No GPU is needed. */
char *cfx_dump_kernel(const cfx_module *m, int graph, const char *target, char *why, size_t len);

/* ---- executing ---- */
/* ORDER BACKEND: the backend table, exec_backends (host/runtime/exec.c), a row per backend */
typedef enum cfx_backend {
    CFX_BACKEND_AUTO,            /* cuda-persistent where a GPU exists, else cpu */
    CFX_BACKEND_CPU,
    CFX_BACKEND_CUDA_HOST,       /* host walks the records, one launch per op */
    CFX_BACKEND_CUDA_GRAPH,      /* a CUDA graph with conditional nodes */
    CFX_BACKEND_CUDA_PERSISTENT, /* one kernel walks the records on the device */
} cfx_backend;

const char *cfx_backend_name(cfx_backend b);        /* "cpu", "cuda-host", ...; "unknown" */
int cfx_backend_count(void);                        /* backends: 0 (AUTO) .. count - 1 */
int cfx_backend_parse(const char *name, cfx_backend *out); /* 0, or -1 if unknown */
/* 1 if the backend can run here; otherwise 0 and a reason ("cfx was built without CUDA",
 * "no CUDA device is present (...)", "the CUDA executors cannot be loaded: ...") in why.
 * AUTO is always available. Asking about a CUDA backend may load the CUDA libraries. */
int cfx_backend_available(cfx_backend b, char *why, size_t len);

/* An executor runs one run at a time. A cfx_run, cfx_run_bound or cfx_run_async while a run
 * is in flight (started on any thread and not yet ended by its cfx_run or cfx_wait) is refused with
 * CFX_ERROR (-1), and so are cfx_bind, cfx_bind_device, cfx_set_trace and
 * cfx_set_persistent_mode, and a cfx_wait while another thread's cfx_run or cfx_wait is under
 * way; cfx_exec_error() then says so on the refused thread. Other calls on one executor from
 * several threads at once are not supported, but for cfx_cancel. */
typedef struct cfx_exec cfx_exec;

/* An executor for one graph of the module (which must outlive it). For AUTO, the backend
 * picked is cfx_exec_backend(). On failure NULL and a message in *err (cfx_free). */
cfx_exec *cfx_exec_new(cfx_module *m, int graph, cfx_backend backend, char **err);
void cfx_exec_free(cfx_exec *e);
cfx_backend cfx_exec_backend(const cfx_exec *e);
/* One line on the path the executor takes: for cuda-persistent, device graph launch or the
 * pause-and-relaunch fallback (with its reason), and what it launches. May change after the
 * first run (application kernels are captured then). The backend's name where there is
 * nothing more to say; never NULL; valid until the next run or cfx_exec_free. */
const char *cfx_exec_backend_detail(const cfx_exec *e);

/* Bind an input or a result by name to `bytes` of memory that must match its type.
 * cfx_bind: host memory. cfx_bind_device: device memory of a CUDA backend (no copy
 * through the host). Inputs are read when the run starts; results are written only when
 * the run ends ok. Returns 0, or -1 with the reason in cfx_exec_error(). */
int cfx_bind(cfx_exec *e, const char *name, void *data, size_t bytes);
int cfx_bind_device(cfx_exec *e, const char *name, void *device_data, size_t bytes);
/* Forget the binding of `name` (an input or a result), or of every input and result when
 * name is NULL: an unbound result goes back to the executor's own buffer, an unbound input
 * must be bound again before the next run. After unbinding everything, the next run may bind
 * buffers of the other kind (host or device), and the executor keeps no pointer to memory the
 * caller is about to free. Returns 0, or -1 for an unknown name or a run in flight (the
 * reason in cfx_exec_error()). */
int cfx_unbind(cfx_exec *e, const char *name);

/* Iteration budget: the run stops with CFX_STOP_LIMIT once loops have run `n` iterations
 * in all. 0 means no limit (the default). Returns 0, or -1 for a negative `n` (the budget
 * is left as it was, and cfx_exec_error() says why). */
int cfx_set_max_iters(cfx_exec *e, int64_t n);
/* The CUDA stream (a cudaStream_t) to run on; NULL is the executor's own stream. */
void cfx_set_stream(cfx_exec *e, void *stream);
/* Where `print` output goes: one call per printed line, in program order, without the
 * newline. The default writes to stdout. */
void cfx_set_print(cfx_exec *e, void (*fn)(void *user, const char *line), void *user);
/* Writes a Chrome trace (Perfetto opens it) of the next runs to `path`; NULL stops. Each
 * event names its record and carries its source position (args "line" and "col"). A run
 * whose trace cannot be written (a full disk, say) returns CFX_ERROR, after which the
 * results it wrote are not to be trusted. */
int cfx_set_trace(cfx_exec *e, const char *path);

/* ---- profile ----
 * A flat profile of a run: where its time went, by source line, by record kind and per loop.
 * The cpu executor stamps its own clock at every record while profiling is on (and does not
 * fuse records then, so a profiled run is slower than a plain one). cuda-persistent's
 * interpreter (CFX_PERSISTENT_INTERP) profiles from its device timeline: block 0's
 * %globaltimer stamps around each record (a one-block loop run as micro-ops: one span, its
 * iterations counted at its loop), so its times leave out the gaps between records and add up
 * to less than the run's. Its compiled
 * kernel profiles from block 0's stamps at the end of each phase (a fused loop, a product, a
 * combine), around each grid barrier and at each iteration (one in 64 of a loop without tensor
 * work, whose iterations it counts exactly all the same), in a build of the kernel with the
 * stamps: the times of a phase go to the record whose code it ends, a barrier's wait to the
 * barrier's record, a loop's test to its TICK. cuda-host records a CUDA event on the run's
 * stream after each record, so a record's time is the device's from the previous record's end to
 * its own (a decision's round trip lands on the record after it). cuda-graph profiles in a build
 * of its graph with a one-thread stamp kernel after each record's work (the graph without them
 * is built again for the next unprofiled run): a record's time runs from the previous stamp, so
 * the dispatch and condition kernels' time lands on the record after them. */
typedef enum cfx_profile_by {
    CFX_PROFILE_LINE, /* the records of one source line */
    CFX_PROFILE_KIND, /* the records of one kind (cfx dump's names: BINARY, TICK, ...) */
    CFX_PROFILE_LOOP  /* one loop, from its test to its back edge, nested loops included */
} cfx_profile_by;
typedef struct cfx_profile_row {
    cfx_profile_by by;
    int line;          /* LINE: the line; LOOP: the line of its while or for; KIND: 0 */
    const char *kind;  /* KIND: the kind's name (static); "" otherwise */
    int64_t count;     /* records run; LOOP: iterations (bodies entered) */
    double total_us;   /* time in them, from the record's start to the next record's */
    double mean_us;    /* total_us / count: for a LOOP, the time per iteration */
    double share;      /* total_us / the run's time */
} cfx_profile_row;
/* Profiles the next runs (on != 0) or stops. Returns 0, or -1 for a run in flight or out of
 * memory, with why in cfx_exec_error(). */
int cfx_set_profile(cfx_exec *e, int on);
/* The last profiled run's rows (cfx_profile_by order: lines ascending, kinds by time, loops
 * by line) into rows[0 .. max); returns how many there are (more than max: the rest left
 * out), or -1 when no run was profiled. *run_us (may be NULL) gets the run's time on the same
 * clock, which the rows of each kind add up to. */
int cfx_profile(const cfx_exec *e, cfx_profile_row *rows, int max, double *run_us);
/* The same profile as `cfx run --profile` prints it, or NULL when no run was profiled (free
 * with cfx_free). */
char *cfx_profile_text(const cfx_exec *e);

/* The two modes of the cuda-persistent backend (docs/persistent.md). COMPILED, the default:
 * the graph is generated as CUDA C, compiled with NVRTC when first needed (the machine code is
 * cached on disk by program and device), and runs as one kernel with its scalars in
 * registers. INTERP: one kernel walks the graph's records. */
typedef enum cfx_persistent_mode {
    CFX_PERSISTENT_COMPILED,
    CFX_PERSISTENT_INTERP
} cfx_persistent_mode;
/* Picks the mode of a cuda-persistent executor's next runs and returns the mode they will
 * use. Asking for COMPILED builds the kernel now (or finds it in the cache); when it cannot be
 * built (no NVRTC, a compile error) the interpreter runs, INTERP is returned and
 * cfx_exec_error() says why. A graph that calls application kernels runs compiled too: a kernel
 * registered by its source is compiled into it, a binary one ends the kernel's launch there
 * (docs/persistent.md). -1 for another backend or while a run is in flight. */
int cfx_set_persistent_mode(cfx_exec *e, cfx_persistent_mode mode);

/* Options of cuda-persistent (docs/persistent.md), for benchmarks and tests that compare its
 * paths, and of cpu (ACCUMULATE, THREADS); the defaults are what a user wants. Each takes effect at the next run, whenever it is
 * set: the interpreter is made again with it, and so is the compiled kernel for the options
 * that concern it (DEVICE_LAUNCH, LAUNCH_PRODUCT_MIN). */
typedef enum cfx_option {
    /* 1 (the default): a CALL of a binary kernel or a launched product ends the kernel's launch
     * by tail-launching its graph from the device, where the device can (both modes). 0: the
     * launch pauses and the host serves the record and relaunches (pause and relaunch). */
    CFX_OPTION_DEVICE_LAUNCH = 1,
    /* 1 (the default): the interpreter's one-block loops run as micro-ops. 0: record by
     * record. */
    CFX_OPTION_MICROOPS = 2,
    /* Products of at least this many multiply-adds are launched (cuBLAS) instead of run
     * inside the kernel (both modes); 0 runs every product inside; -1 (the default) is 2^27. */
    CFX_OPTION_LAUNCH_PRODUCT_MIN = 3,
    /* 1 (the default): the largest tensor a loop reads whole every iteration and never writes
     * (of 1 MiB or more: a product's matrix) is kept in L2's set-aside for persisting lines
     * while the kernel runs (an access policy window on its launch; both modes). The context's
     * set-aside is raised to what that needs when it is smaller, up to the device's limit, and
     * never lowered. 0: no window, the set-aside untouched. */
    CFX_OPTION_L2_WINDOW = 4,
    /* The cpu backend's: how sums, dots and products of reals
     * accumulate, a cfx_accumulate. CFX_ACCUMULATE_FAST (the default; $CFX_ACCUMULATE=fast):
     * f32 and f64 products (matmul, matrix-vector, dot) through the CBLAS found at configure,
     * f32 accumulating in f32 in the BLAS's order, as numpy and PyTorch do.
     * CFX_ACCUMULATE_F64 ($CFX_ACCUMULATE=f64): the reference, every sum, dot and product of
     * f32 accumulated in double and rounded once (docs/language.md, "Arithmetic rules"), as
     * the tests compare executors with. $CFX_ACCUMULATE sets the mode of new executors. */
    CFX_OPTION_ACCUMULATE = 5,
    /* The cpu backend's: how many threads (the calling one among them) its elementwise records
     * over large tensors and the fast mode's reductions run on, from 1 (the calling thread
     * alone) to 256; 0 (the default) is the cores the process may run on (its affinity mask),
     * or $CFX_NUM_THREADS where set when the executor was made. Records over small tensors run
     * on the calling thread whatever the count, and no count changes a result. A count set here
     * (but 0) or by $CFX_NUM_THREADS is also given to the CBLAS before the executor's products;
     * by default the CBLAS keeps its own (OPENBLAS_NUM_THREADS, else its cores). The CBLAS's
     * count is the process's: the executor whose product runs last sets it. */
    CFX_OPTION_THREADS = 6
} cfx_option;
typedef enum cfx_accumulate {
    CFX_ACCUMULATE_FAST = 0,
    CFX_ACCUMULATE_F64 = 1
} cfx_accumulate;
/* Returns 0, or -1 for another backend, an unknown option or value, or a run in flight
 * (cfx_exec_error() says which). */
int cfx_set_option(cfx_exec *e, cfx_option option, int64_t value);

/* Run to the end and return the status. */
cfx_status cfx_run(cfx_exec *e);
/* Enqueue the run on the stream and return at once (CUDA backends; the cpu backend runs
 * to the end). The status is ready after cfx_wait(), or after the application has
 * synchronized the stream and called cfx_wait(). */
int cfx_run_async(cfx_exec *e);
cfx_status cfx_wait(cfx_exec *e);
/* One run over buffers given by position rather than bound by name, in one call: as cfx_bind
 * (host memory) or cfx_bind_device (flags with CFX_BOUND_DEVICE) of each non-NULL inputs[i] and
 * results[i], then cfx_run, then cfx_unbind(e, NULL), so that bindings made before are not
 * used and the executor keeps no pointer once it returns. inputs has cfx_input_count entries in
 * declaration order, results cfx_result_count; a NULL entry is left unbound (an input with a
 * default takes it on a run over host buffers; a result goes to the executor's own buffer), and
 * so is every entry of an array passed as NULL. Each buffer holds its declared type's bytes,
 * which are not checked (the caller knows the types). With CFX_BOUND_INDIRECT each non-NULL
 * entry is instead the address of a pointer to the buffer, read at the run's start: the field of
 * an array object that holds its data pointer, which a binding layer then need not read itself
 * (a NULL pointer there leaves the entry unbound). Returns the run's status as cfx_run does,
 * CFX_ERROR with why in cfx_exec_error() for what cfx_bind or cfx_run would refuse. Where
 * iterations is not NULL it receives cfx_exec_iterations() of the run (a caller that wants it
 * needs no second call). */
enum {
    CFX_BOUND_DEVICE = 1,   /* the buffers are device memory (0: host memory) */
    CFX_BOUND_INDIRECT = 2  /* the entries are addresses of the buffers' pointers */
};
cfx_status cfx_run_bound(cfx_exec *e, void *const *inputs, void *const *results, int flags,
                         int64_t *iterations);

/* ---- inside the application's CUDA graph (docs/persistent.md, "Inside the application's graph")
 * cfx_prepare does now everything a run with the current bindings needs that is not work on the
 * run's stream: allocations, uploads, the compiled kernel's NVRTC build, probes, graph builds and
 * instantiations, the capture of application kernels. A run after it (or after one ordinary run
 * with the same bindings and settings) enqueues only capturable work: resetting the run state,
 * copying the inputs in, the kernel launches or the executor's graph, the guarded copies of the
 * results out. Returns 0, or -1 with why in cfx_exec_error(); nothing to do for the cpu backend.
 *
 * A cfx_run_async on a stream (cfx_set_stream) that is being captured (cudaStreamBeginCapture)
 * records the run into the capture and runs nothing; it needs every input and result bound with
 * cfx_bind_device (read and written at each replay, not at the capture) and a warm executor. A
 * run that could not be captured whole is refused with CFX_ERROR (-1) before it records anything,
 * cfx_exec_error() saying what and what to choose instead, never a broken capture: cuda-host (it
 * brings every decision back to the host), cfx_run (it waits), prints, traces,
 * profiles, a cuda-persistent graph whose records end the kernel's launch (binary kernels, launched
 * products), and whatever would build or allocate first (call cfx_prepare before capturing). After
 * such a capture cfx_wait, once the application has synchronized a replay of its graph, returns
 * that replay's status (each cfx_wait reads the last replay's) until the next run. The cpu backend
 * knows nothing of streams: it runs on the host at the call and records nothing. */
int cfx_prepare(cfx_exec *e);
/* One run's work as a CUDA graph of its own: cuda-persistent's (the kernel's node), which the
 * application adds to its graph as a child graph node (cudaGraphAddChildGraphNode clones it), and
 * cuda-graph's, which holds conditional nodes, which CUDA does not allow in a child graph node:
 * instantiate and launch it, or capture cfx_run_async into the application's graph instead, which
 * builds the conditional nodes into that graph. *graph gets a cudaGraph_t that the
 * caller destroys with cudaGraphDestroy; the executor must outlive every instantiation of it.
 * The same conditions as a captured run: device bindings, and no part that needs the host. After
 * it, cfx_wait reports the status of the last replay, as after a captured run. Returns 0, or -1 with
 * why in cfx_exec_error() (*graph NULL). */
int cfx_exec_graph(cfx_exec *e, void **graph);
/* Ask a running run to stop with CFX_STOP_CANCELLED. Safe from any thread, and from a signal
 * handler. A run stops at its next loop iteration; the cpu executor also stops before a
 * record of 65,536 elements or more and between the bands of rows of a long matrix product,
 * so that a graph with no loop stops too. A cancel made while no run is in flight is kept for
 * the next run, which then stops at the first of those points (one that reaches none ends as
 * usual); every run clears the cancel when it ends, so each cancel stops at most one run. */
void cfx_cancel(cfx_exec *e);
/* 1: a SIGINT (Ctrl-C) during one of e's synchronous runs (cfx_run, cfx_run_bound) made on the
 * process's main thread cancels that run, as cfx_cancel, and then goes on to the handler that
 * was installed before the run (an application's, Python's); where that was SIG_IGN nothing is
 * cancelled, and where it was SIG_DFL the run is cancelled instead of the process ended. The
 * library's handler is installed at the run's start and the one before put back at its end (two
 * sigaction calls a run); a run inside another's print or kernel callback installs none. 0 (the
 * default): signals are left alone. Returns 0, or -1 for a NULL executor. */
int cfx_cancel_on_sigint(cfx_exec *e, int on);

/* After a run: its status, the one-line message for a stopped run
 * (`FILE:LINE:COL: run stopped: index: 'x' has 4 rows, index was 4`, "" for ok), the
 * source position of the statement that stopped it, and the error of the last call on the
 * executor ("" when that call succeeded). The error belongs to the executor, with one
 * exception: a call refused because a run is in flight (see cfx_exec above) leaves the
 * executor's error to the run's own thread, and the refusal is seen by the refused thread
 * alone, until that thread's next call on the executor; other threads see the executor's. */
cfx_status cfx_exec_status(const cfx_exec *e);
const char *cfx_exec_message(const cfx_exec *e);
void cfx_exec_position(const cfx_exec *e, int *line, int *col);
const char *cfx_exec_error(const cfx_exec *e);
int64_t cfx_exec_iterations(const cfx_exec *e); /* loop iterations of the last run */
/* After a cancelled run of cuda-persistent (either mode): a hang report, taken at the cancel
 * from the progress word each block keeps in host-mapped memory: a line per block with the
 * statement it stood at and its iterations, then for each grid barrier some block waited at,
 * which blocks waited and which had not arrived. "" for other runs and backends (the cpu
 * executor's position is cfx_exec_position's). Valid until the next run. */
const char *cfx_exec_hang_report(const cfx_exec *e);

/* ---- importing ONNX models (docs/onnx.md) ----
 * A model with If, Loop and Scan and the op set of docs/onnx.md becomes a module with one graph,
 * named after the model's graph, whose inputs and results are the ONNX graph's inputs (its
 * initializers excluded) and outputs, under their ONNX names (cfx_input_name gives them, and
 * cfx_bind takes them). A sequence input is given as its items stacked along a new first axis
 * (one shape in `shapes` under its name), or item by item: shapes named NAME[0], NAME[1], ...,
 * each then an input of that name (so its items may differ in shape). A sequence result is its
 * items stacked, or, where they differ in shape, one result per item, NAME[0], NAME[1], ... */
typedef struct cfx_input_shape {
    const char *name;  /* an input of the model's graph */
    cfx_type type;     /* its dtype and shape, which fix the model's symbolic dimensions */
    const void *value; /* NULL, or its elements: where the model takes a shape or a length from
                        * the input's value (Range's bounds, Expand's shape), the import fixes
                        * the input to this value, and a run given another stops with assert */
} cfx_input_shape;
/* An input of 0 elements carries no data: where `shapes` gives one such a shape (or an imported
 * input is otherwise of 0 elements), the import holds it as a value known by its dtype and shape
 * and it is no parameter of the graph: cfx_input_count leaves it out, a run over inputs by
 * position does not take it, and the module lists it here (graph 0; other modules: none). A run
 * takes it by name too, as cfx_bind(e, NAME, any, 0): 0 bytes, else CFX_ERROR; its dtype and
 * shape are the caller's to check against cfx_known_input_type (cfx run and Python do). */
int cfx_known_input_count(const cfx_module *m, int graph);
const char *cfx_known_input_name(const cfx_module *m, int graph, int i);
cfx_type cfx_known_input_type(const cfx_module *m, int graph, int i);
/* Likewise an output of 0 elements (its type known at import): no result of the graph
 * (cfx_result_count leaves it out), listed here; the caller hands it back as an empty array of
 * that type (cfx run's --out writes such a .npy file; Python returns one), and cfx_bind takes
 * it by name at 0 bytes. */
int cfx_known_result_count(const cfx_module *m, int graph);
const char *cfx_known_result_name(const cfx_module *m, int graph, int i);
cfx_type cfx_known_result_type(const cfx_module *m, int graph, int i);
/* 1 when this build reads ONNX models (it was built with protobuf-c), else 0. */
int cfx_onnx_available(void);
/* Imports the serialized ModelProto bytes[0, len), or, where bytes is NULL, the file at path.
 * `path` names the model in messages and is where external data is read from (files beside it;
 * a location that leaves the model's folder is refused); with bytes and a NULL path the model is
 * "model.onnx" and may not use external data. `shapes` (nshapes entries, or NULL) fix symbolic
 * dimensions; without them every input's declared shape must be static. On error NULL and one
 * line in *diagnostics (cfx_free): `MODEL: node 'NAME' (OP, domain 'D', opset N): ...` or
 * `MODEL: error: ...`; without protobuf-c at build time, a line saying how to get it. A run that
 * stops names the line of the imported text (`MODEL.cfx:LINE:COL`), which
 * cfx_import_onnx_source gives. */
cfx_module *cfx_import_onnx(cfx_context *ctx, const char *path, const void *bytes, size_t len,
                            const cfx_input_shape *shapes, int nshapes, char **diagnostics);
/* The .cfx text of that module (what `cfx import` writes), each statement with its ONNX node's
 * name in a comment. Constants of more than 16 elements are written as .npy files into data_dir
 * and named in the text as data_dir_text/NAME.npy (data_dir NULL: declared without a value, as
 * cfx_compile_string_constants binds them). Free with cfx_free; NULL and *diagnostics on error. */
char *cfx_import_onnx_source(const char *path, const void *bytes, size_t len,
                             const cfx_input_shape *shapes, int nshapes, const char *data_dir,
                             const char *data_dir_text, char **diagnostics);

#ifdef __cplusplus
}
#endif
#endif
