/* api.c: the public API of cfx.h that is not the context: compiling, module queries,
 * dumps and executors.
 *
 * A module is the compiler's output (one validated cfx_prog per graph) plus a copy of the
 * registered kernels it may call, so the context may be freed after compiling. The names and
 * types of a graph's inputs and results are the compiler's declarations (compiled_graph); the
 * program's input and result slots follow the same order. An executor owns the binding rules, the result copying rule (only a run that ends
 * ok writes results), the print formatting and the messages; the backend only walks the
 * program.
 */
#define _DEFAULT_SOURCE /* syscall(SYS_gettid): the main thread's test for cfx_cancel_on_sigint */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host/cfx.h"
#include "host/gen/cgen.h"
#include "host/front/compile.h"
#include "host/program/cost.h"
#include "host/front/context.h"
#include "exec.h"
#include "nvtx.h"
#include "host/front/onnx.h"
#include "host/program/program.h"
#include "host/front/source_op.h"
#include "host/util/strbuf.h"
#include "value.h"
#include "kernels/cfxlimits.h"


struct cfx_module {
    compiled_module cm;
    exec_kernel *kernels; /* copies of the context's kernels (names owned) */
    int nkernels;
    char **known_names;   /* an imported model's inputs of 0 elements (graph 0), known at import */
    cfx_type *known_types;
    int nknown;
    char **kres_names;    /* and its outputs of 0 elements, handed back as empty arrays */
    cfx_type *kres_types;
    int nkres;
};

enum { BOUND_NONE, BOUND_HOST, BOUND_DEVICE };

/* An executor's run state. A call claims the executor (RUN_IDLE to RUN_BUSY) with one atomic
 * exchange before it touches the run's state, so a second run from another thread is refused
 * rather than run beside the first over the same buffers. */
enum { RUN_IDLE, RUN_BUSY, RUN_ASYNC /* started by cfx_run_async, waiting for cfx_wait */ };

/* An application kernel as the backend calls it: through call_cpu / call_cuda, which note the
 * value a failing kernel returned, for the run's message. */
typedef struct kernel_call {
    exec_kernel k;
    struct cfx_exec *e;
} kernel_call;

struct cfx_exec {
    cfx_module *m;
    const compiled_graph *graph; /* names and types of the inputs and results */
    const cfx_prog *prog;
    cfx_backend backend;
    const exec_ops *ops;
    void *self;             /* the backend's state */
    exec_kernel *kernels;   /* prog->nkernels, in prog->kernels order: call_cpu/call_cuda */
    kernel_call *calls;     /* prog->nkernels: what those call */
    int kernel_rc;          /* the value the last failing kernel of this run returned */
    void **inputs;          /* prog->ninputs */
    unsigned char *in_bound;
    void **defaults;        /* prog->ninputs: host buffers holding the defaults of inputs left unbound */
    void **results;         /* prog->nresults: the buffers handed to the backend */
    void **user_results;    /* what the caller bound (NULL: not bound) */
    void **scratch;         /* host buffers standing in for results that were not bound */
    unsigned char *res_bound;
    int64_t max_iters;
    void *stream;
    void (*print_fn)(void *user, const char *line);
    void *print_user;
    FILE *trace;            /* open on trace_path while tracing */
    char *trace_path;
    int profiling;          /* cfx_set_profile: profile the next runs into prof */
    int profiled;           /* the last run that ended filled prof */
    exec_profile prof;      /* prog->nrecords counts and times */
    exec_atomic_int cancel; /* kept from cfx_cancel until a run ends */
    int sigint;             /* cfx_cancel_on_sigint */
    exec_atomic_int running; /* RUN_* */
    exec_run run;
    exec_outcome out;
    int captured;           /* the last cfx_run_async was recorded by a stream capture */
    char message[1024];
    char error[1024];
};

void cfx_free(void *p) { free(p); }

/* A malloc'd copy of a formatted message (NULL when out of memory). */
static char *format_message(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *s = malloc(strlen(buf) + 1);
    if (s)
        strcpy(s, buf);
    return s;
}

static char *copy_string(const char *s)
{
    char *c = malloc(strlen(s) + 1);
    if (c)
        strcpy(c, s);
    return c;
}

/* ---- compiling ------------------------------------------------------------------------- */

/* The text compiled, with its .npy constants relative to folder dir (NULL: the current
 * directory) and the constants of the table. */
static cfx_module *compile_text(cfx_context *ctx, const char *filename, const char *text, size_t len,
                                const char *dir, const cfx_constant *constants, int nconstants,
                                char **diagnostics)
{
    char *diags = NULL;
    cfx_module *m = NULL;
    if (diagnostics)
        *diagnostics = NULL;
    const char *file = filename ? filename : "<string>";
    if (!text) {
        diags = format_message("%s: cannot compile: the text is NULL\n", file);
        goto fail;
    }
    if (len > (size_t)API_MAX_SOURCE) {
        diags = format_message("%s: cannot compile: the text is larger than 64 MiB\n", file);
        goto fail;
    }
    m = calloc(1, sizeof *m);
    if (!m) {
        diags = format_message("%s: out of memory\n", file);
        goto fail;
    }
    if (ctx && ctx->nkernels > 0) {
        m->kernels = calloc((size_t)ctx->nkernels, sizeof *m->kernels);
        if (!m->kernels) {
            diags = format_message("%s: out of memory\n", file);
            goto fail;
        }
        for (int i = 0; i < ctx->nkernels; i++) {
            const ctx_kernel *k = &ctx->kernels[i];
            /* an op registered by its source is its own `user`: the module holds a reference */
            m->kernels[i] = (exec_kernel){copy_string(k->name), k->cpu_fn, k->cuda_fn, k->user};
            sop_ref(k->source);
            m->nkernels++;
            if (!m->kernels[i].name) {
                diags = format_message("%s: out of memory\n", file);
                goto fail;
            }
        }
    }
    prof_push("compile");
    int failed = compile_source_with(ctx, file, text, len, dir, constants, nconstants, &m->cm, &diags) != 0;
    prof_pop();
    if (failed) {
        if (!diags)
            diags = format_message("%s: compilation failed\n", file);
        goto fail;
    }
    free(diags); /* warnings are not produced today; drop anything handed back on success */
    return m;
fail:
    cfx_module_free(m);
    if (diagnostics)
        *diagnostics = diags;
    else
        free(diags);
    return NULL;
}

cfx_module *cfx_compile_string(cfx_context *ctx, const char *filename, const char *text,
                               size_t len, char **diagnostics)
{
    return compile_text(ctx, filename, text, len, NULL, NULL, 0, diagnostics);
}

cfx_module *cfx_compile_string_constants(cfx_context *ctx, const char *filename, const char *text, size_t len,
                                         const cfx_constant *constants, int nconstants, char **diagnostics)
{
    return compile_text(ctx, filename, text, len, NULL, constants, constants ? nconstants : 0, diagnostics);
}

cfx_module *cfx_compile_file(cfx_context *ctx, const char *path, char **diagnostics)
{
    char *text = NULL, *diags = NULL;
    cfx_module *m = NULL;
    FILE *f = NULL;
    if (diagnostics)
        *diagnostics = NULL;
    if (!path) {
        diags = format_message("<file>: cannot read: the path is NULL\n");
        goto done;
    }
    f = fopen(path, "rb");
    if (!f) {
        diags = format_message("%s: cannot read: %s\n", path, strerror(errno));
        goto done;
    }
    /* read in chunks rather than trusting a size from fseek: pipes and /proc files have none */
    size_t cap = 0, len = 0;
    for (;;) {
        if (len == cap) {
            if (cap >= (size_t)API_MAX_SOURCE) {
                diags = format_message("%s: cannot read: the file is larger than 64 MiB\n", path);
                goto done;
            }
            cap = cap ? cap * 2 : 65536;
            char *grown = realloc(text, cap + 1);
            if (!grown) {
                diags = format_message("%s: cannot read: out of memory\n", path);
                goto done;
            }
            text = grown;
        }
        size_t n = fread(text + len, 1, cap - len, f);
        len += n;
        if (n == 0) {
            if (ferror(f)) {
                diags = format_message("%s: cannot read: %s\n", path, strerror(errno));
                goto done;
            }
            break;
        }
    }
    text[len] = '\0';
    {
        /* a constant's .npy path is relative to the folder of the file */
        const char *slash = strrchr(path, '/');
        size_t n = !slash ? 0 : slash == path ? 1 : (size_t)(slash - path);
        char *dir = malloc(n + 1);
        if (!dir) {
            diags = format_message("%s: out of memory\n", path);
            goto done;
        }
        memcpy(dir, path, n);
        dir[n] = '\0';
        m = compile_text(ctx, path, text, len, dir, NULL, 0, &diags);
        free(dir);
    }
done:
    if (f)
        fclose(f);
    free(text);
    if (diagnostics)
        *diagnostics = diags;
    else
        free(diags);
    return m;
}

void cfx_module_free(cfx_module *m)
{
    if (!m)
        return;
    compiled_module_free(&m->cm);
    for (int i = 0; i < m->nkernels; i++) {
        free((char *)m->kernels[i].name);
        if (m->kernels[i].cpu_fn == sop_cpu)
            sop_unref((sop *)m->kernels[i].user);
    }
    free(m->kernels);
    for (int i = 0; i < m->nknown; i++)
        free(m->known_names[i]);
    free(m->known_names);
    free(m->known_types);
    for (int i = 0; i < m->nkres; i++)
        free(m->kres_names[i]);
    free(m->kres_names);
    free(m->kres_types);
    free(m);
}

/* ---- module queries --------------------------------------------------------------------- */

static const cfx_prog *graph_prog(const cfx_module *m, int graph)
{
    if (!m || graph < 0 || graph >= m->cm.ngraphs)
        return NULL;
    return m->cm.graphs[graph].prog;
}

int cfx_graph_count(const cfx_module *m) { return m ? m->cm.ngraphs : 0; }

const char *cfx_graph_name(const cfx_module *m, int graph)
{
    return m && graph >= 0 && graph < m->cm.ngraphs ? m->cm.graphs[graph].name : NULL;
}

int cfx_graph_find(const cfx_module *m, const char *name)
{
    if (!m || m->cm.ngraphs == 0)
        return -1;
    if (!name)
        return 0;
    for (int i = 0; i < m->cm.ngraphs; i++)
        if (strcmp(m->cm.graphs[i].name, name) == 0)
            return i;
    return -1;
}

static const compiled_graph *graph_of(const cfx_module *m, int graph)
{
    if (!m || graph < 0 || graph >= m->cm.ngraphs)
        return NULL;
    return &m->cm.graphs[graph];
}

/* The inputs callers see are the declared parameters; the hidden presence inputs after them
 * (compile.h) are the library's own. */
int cfx_input_count(const cfx_module *m, int graph)
{
    const compiled_graph *g = graph_of(m, graph);
    return g ? g->ndeclared : 0;
}

const char *cfx_input_name(const cfx_module *m, int graph, int i)
{
    const compiled_graph *g = graph_of(m, graph);
    return g && i >= 0 && i < g->ndeclared ? g->params[i].name : NULL;
}

/* What a query out of range answers: rank -1, which no input or result has (cfx.h). */
static cfx_type no_type(void)
{
    cfx_type none;
    memset(&none, 0, sizeof none);
    none.rank = -1;
    return none;
}

cfx_type cfx_input_type(const cfx_module *m, int graph, int i)
{
    const compiled_graph *g = graph_of(m, graph);
    return g && i >= 0 && i < g->ndeclared ? g->params[i].type : no_type();
}

int cfx_known_input_count(const cfx_module *m, int graph)
{
    return m && graph == 0 && graph_of(m, graph) ? m->nknown : 0;
}

const char *cfx_known_input_name(const cfx_module *m, int graph, int i)
{
    return i >= 0 && i < cfx_known_input_count(m, graph) ? m->known_names[i] : NULL;
}

cfx_type cfx_known_input_type(const cfx_module *m, int graph, int i)
{
    return i >= 0 && i < cfx_known_input_count(m, graph) ? m->known_types[i] : no_type();
}

int cfx_known_result_count(const cfx_module *m, int graph)
{
    return m && graph == 0 && graph_of(m, graph) ? m->nkres : 0;
}

const char *cfx_known_result_name(const cfx_module *m, int graph, int i)
{
    return i >= 0 && i < cfx_known_result_count(m, graph) ? m->kres_names[i] : NULL;
}

cfx_type cfx_known_result_type(const cfx_module *m, int graph, int i)
{
    return i >= 0 && i < cfx_known_result_count(m, graph) ? m->kres_types[i] : no_type();
}

const char *cfx_input_default(const cfx_module *m, int graph, int i)
{
    const compiled_graph *g = graph_of(m, graph);
    return g && i >= 0 && i < g->ndeclared ? g->params[i].def : NULL;
}

int cfx_result_count(const cfx_module *m, int graph)
{
    const compiled_graph *g = graph_of(m, graph);
    return g ? g->nresults : 0;
}

const char *cfx_result_name(const cfx_module *m, int graph, int i)
{
    const compiled_graph *g = graph_of(m, graph);
    return g && i >= 0 && i < g->nresults ? g->results[i].name : NULL;
}

cfx_type cfx_result_type(const cfx_module *m, int graph, int i)
{
    const compiled_graph *g = graph_of(m, graph);
    return g && i >= 0 && i < g->nresults ? g->results[i].type : no_type();
}

/* The type of a program slot, for print records. */
static cfx_type slot_type(const cfx_prog *p, int32_t slot)
{
    const cfx_slot *s = &p->slots[slot];
    cfx_type t;
    memset(&t, 0, sizeof t);
    t.dtype = (cfx_dtype)s->dtype;
    t.rank = s->rank;
    for (int i = 0; i < s->rank && i < CFX_TYPE_MAX_RANK; i++)
        t.dims[i] = s->dims[i];
    return t;
}

char *cfx_dump(const cfx_module *m, int graph)
{
    const cfx_prog *p = graph_prog(m, graph);
    if (!p)
        return NULL;
    strbuf sb = {0};
    prog_dump(p, &sb);
    if (sb.oom) {
        sb_free(&sb);
        return NULL;
    }
    return sb_take(&sb);
}

char *cfx_dump_cost(const cfx_module *m, int graph, int blocks, const cfx_floors *floors)
{
    const cfx_prog *p = graph_prog(m, graph);
    char err[256];
    if (!p)
        return NULL;
    strbuf sb = {0};
    if (cost_sheet(p, blocks, floors, &sb, err, sizeof err) != 0) {
        sb_free(&sb);
        return NULL;
    }
    return sb_take(&sb);
}

char *cfx_dump_kernel(const cfx_module *m, int graph, const char *target, char *why, size_t len)
{
    const cfx_prog *p = graph_prog(m, graph);
    int t = !target ? -1 : strcmp(target, "cuda") == 0 ? CGEN_TARGET_CUDA : strcmp(target, "c") == 0 ? CGEN_TARGET_C : -1;
    char err[512];
    if (!p || t < 0) {
        if (why && len)
            snprintf(why, len, "%s", !p ? "no such graph" : "the kernel's target is cuda or c");
        return NULL;
    }
    strbuf sb = {0};
    if (cgen_default_kernel(p, t, &sb, err, sizeof err) != 0 || sb.oom) {
        if (why && len)
            snprintf(why, len, "%s", sb.oom ? "out of memory" : err);
        sb_free(&sb);
        return NULL;
    }
    return sb_take(&sb);
}

/* ---- backends --------------------------------------------------------------------------- */

/* The executor of backend b (its row of exec_backends), or NULL with the reason in why. A CUDA
 * backend's executors are loaded here on first use (device/loader.c), and only here, so a
 * process that never asks for one loads nothing of CUDA. */
static const exec_ops *backend_ops(cfx_backend b, char *why, size_t len)
{
    const exec_backend *row = exec_backend_row(b);
    if (!row || !row->ops) {
        snprintf(why, len, "unknown backend %d", (int)b);
        return NULL;
    }
    return row->ops(b, why, len);
}

int cfx_backend_available(cfx_backend b, char *why, size_t len)
{
    char local[512];
    if (!why || len == 0) {
        why = local;
        len = sizeof local;
    }
    why[0] = '\0';
    if (b == CFX_BACKEND_AUTO)
        return 1;
    const exec_ops *ops = backend_ops(b, why, len);
    return ops && ops->available(why, len) ? 1 : 0;
}

/* ---- executors -------------------------------------------------------------------------- */

static void set_error(cfx_exec *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->error, sizeof e->error, fmt, ap);
    va_end(ap);
}

/* ---- one run at a time ------------------------------------------------------------------ */

/* A call refused because a run is in flight, perhaps another thread's, leaves the executor's
 * error alone (the call running owns it): the refusal is kept for the refused thread, and
 * cfx_exec_error() hands it to that thread until its next call on the executor. */
static _Thread_local const cfx_exec *refused_on;
static _Thread_local char refusal[256];

/* The start of a call that may fail: the error of the caller's last call is cleared. */
static void begin_call(cfx_exec *e)
{
    if (refused_on == e)
        refused_on = NULL;
    e->error[0] = '\0';
}

/* Claims the executor in state `from` for a call that changes what a run uses: 0, or -1 when
 * a run is in flight (the refusal says what was refused). release() gives it back. */
static int claim(cfx_exec *e, int from, const char *what)
{
    int seen = from;
    if (atomic_compare_exchange_strong(&e->running, &seen, RUN_BUSY)) {
        begin_call(e);
        return 0;
    }
    refused_on = e;
    snprintf(refusal, sizeof refusal,
             "%s: a run is already in flight (an executor runs one run at a time; cfx_wait ends "
             "one started with cfx_run_async)", what);
    return -1;
}

static void release(cfx_exec *e, int to) { atomic_store(&e->running, to); }

static int call_cpu(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    kernel_call *c = user;
    int rc = c->k.cpu_fn(c->k.user, nargs, args, nresults, results);
    if (rc != 0)
        c->e->kernel_rc = rc;
    return rc;
}

static int call_cuda(void *user, void *stream, int nargs, const cfx_tensor *args, int nresults,
                     cfx_tensor *results)
{
    kernel_call *c = user;
    int rc = c->k.cuda_fn(c->k.user, stream, nargs, args, nresults, results);
    if (rc != 0)
        c->e->kernel_rc = rc;
    return rc;
}

/* Resolves every kernel the program calls; a kernel without a function for `backend` is
 * an error naming it. */
static int resolve_kernels(cfx_exec *e, cfx_backend backend, char *err, size_t errlen)
{
    const cfx_prog *p = e->prog;
    for (int32_t i = 0; i < p->nkernels; i++) {
        const char *name = p->strings + p->kernels[i];
        const exec_kernel *k = NULL;
        for (int j = 0; j < e->m->nkernels; j++)
            if (strcmp(e->m->kernels[j].name, name) == 0)
                k = &e->m->kernels[j];
        if (!k) {
            snprintf(err, errlen, "graph '%s' calls kernel '%s', which is not registered", p->name,
                     name);
            return -1;
        }
        if (!exec_backends[backend].device && !k->cpu_fn) {
            snprintf(err, errlen, "kernel '%s' has no CPU function; run graph '%s' on a CUDA backend",
                     name, p->name);
            return -1;
        }
        if (exec_backends[backend].device && !k->cuda_fn) {
            snprintf(err, errlen, "kernel '%s' has no CUDA function; run graph '%s' on the cpu backend",
                     name, p->name);
            return -1;
        }
        e->calls[i].k = *k;
        e->calls[i].e = e;
        e->kernels[i] = (exec_kernel){k->name, k->cpu_fn ? call_cpu : NULL,
                                      k->cuda_fn ? call_cuda : NULL, &e->calls[i]};
    }
    return 0;
}

/* 1 if every kernel the program calls has a CUDA function. */
static int kernels_have_cuda(const cfx_module *m, const cfx_prog *p)
{
    for (int32_t i = 0; i < p->nkernels; i++)
        for (int j = 0; j < m->nkernels; j++)
            if (strcmp(m->kernels[j].name, p->strings + p->kernels[i]) == 0 && !m->kernels[j].cuda_fn)
                return 0;
    return 1;
}

void cfx_exec_free(cfx_exec *e)
{
    if (!e)
        return;
    if (e->self && e->ops->destroy)
        e->ops->destroy(e->self);
    if (e->trace)
        fclose(e->trace);
    free(e->trace_path);
    free(e->prof.count);
    free(e->prof.ns);
    if (e->scratch)
        for (int32_t i = 0; i < e->prog->nresults; i++)
            free(e->scratch[i]);
    free(e->scratch);
    free(e->kernels);
    free(e->calls);
    if (e->defaults)
        for (int32_t i = 0; i < e->prog->ninputs; i++)
            free(e->defaults[i]);
    free(e->defaults);
    free(e->inputs);
    free(e->in_bound);
    free(e->results);
    free(e->user_results);
    free(e->res_bound);
    free(e);
}

cfx_exec *cfx_exec_new(cfx_module *m, int graph, cfx_backend backend, char **err)
{
    char msg[512] = "";
    cfx_exec *e = NULL;
    if (err)
        *err = NULL;
    const cfx_prog *p = graph_prog(m, graph);
    if (!m) {
        snprintf(msg, sizeof msg, "the module is NULL");
        goto fail;
    }
    if (!p) {
        snprintf(msg, sizeof msg, "no graph %d in the module: it has %d, numbered from 0", graph,
                 m->cm.ngraphs);
        goto fail;
    }
    /* the executor indexes declarations and slots alike: they must agree */
    if (m->cm.graphs[graph].nparams != p->ninputs || m->cm.graphs[graph].nresults != p->nresults) {
        snprintf(msg, sizeof msg, "internal error: graph '%s' declares %d inputs and %d results, "
                 "its program has %d and %d", p->name, m->cm.graphs[graph].nparams,
                 m->cm.graphs[graph].nresults, (int)p->ninputs, (int)p->nresults);
        goto fail;
    }
    /* kernels first: a graph that cannot run on CUDA loads nothing of it */
    if (backend == CFX_BACKEND_AUTO)
        backend = kernels_have_cuda(m, p) &&
                          cfx_backend_available(CFX_BACKEND_CUDA_PERSISTENT, NULL, 0)
                      ? CFX_BACKEND_CUDA_PERSISTENT
                      : CFX_BACKEND_CPU;
    if (!exec_backend_row(backend) || !exec_backends[backend].ops) {
        snprintf(msg, sizeof msg, "unknown backend %d", (int)backend);
        goto fail;
    }
    char why[400] = "";
    const exec_ops *ops = backend_ops(backend, why, sizeof why);
    if (!ops || !ops->available(why, sizeof why)) {
        snprintf(msg, sizeof msg, "backend %s is not available: %s", cfx_backend_name(backend), why);
        goto fail;
    }
    e = calloc(1, sizeof *e);
    if (!e)
        goto oom;
    if (refused_on == e)
        refused_on = NULL; /* an executor freed at this address was refused on this thread */
    e->m = m;
    e->graph = &m->cm.graphs[graph];
    e->prog = p;
    e->backend = backend;
    e->ops = ops;
    atomic_init(&e->cancel, 0);
    atomic_init(&e->running, RUN_IDLE);
    size_t nk = (size_t)p->nkernels + 1, ni = (size_t)p->ninputs + 1, nr = (size_t)p->nresults + 1;
    e->kernels = calloc(nk, sizeof *e->kernels);
    e->calls = calloc(nk, sizeof *e->calls);
    e->inputs = calloc(ni, sizeof *e->inputs);
    e->in_bound = calloc(ni, 1);
    e->defaults = calloc(ni, sizeof *e->defaults);
    e->results = calloc(nr, sizeof *e->results);
    e->user_results = calloc(nr, sizeof *e->user_results);
    e->scratch = calloc(nr, sizeof *e->scratch);
    e->res_bound = calloc(nr, 1);
    if (!e->kernels || !e->calls || !e->inputs || !e->in_bound || !e->defaults || !e->results || !e->user_results ||
        !e->scratch || !e->res_bound)
        goto oom;
    if (resolve_kernels(e, backend, msg, sizeof msg) != 0)
        goto fail;
    e->self = ops->create(p, msg, sizeof msg);
    if (!e->self) {
        if (!msg[0])
            snprintf(msg, sizeof msg, "backend %s could not be created", cfx_backend_name(backend));
        goto fail;
    }
    return e;
oom:
    snprintf(msg, sizeof msg, "out of memory");
fail:
    cfx_exec_free(e);
    if (err)
        *err = copy_string(msg);
    return NULL;
}

cfx_backend cfx_exec_backend(const cfx_exec *e) { return e ? e->backend : CFX_BACKEND_AUTO; }

const char *cfx_exec_backend_detail(const cfx_exec *e)
{
    const char *d = e && e->self && e->ops->detail ? e->ops->detail(e->self) : NULL;
    return d ? d : cfx_backend_name(cfx_exec_backend(e));
}

/* Binds `name` (an input, else a result) to data of `bytes`, of kind BOUND_HOST or
 * BOUND_DEVICE. One run hands the backend either host or device buffers, so the two kinds
 * do not mix within an executor. */
static int bind(cfx_exec *e, const char *name, void *data, size_t bytes, int kind)
{
    const cfx_prog *p = e->prog;
    /* an input or result known at import (0 elements): bound to no bytes, it is taken as it is */
    int entry = e->m && e->graph == e->m->cm.graphs;
    for (int i = 0; name && entry && i < e->m->nknown + e->m->nkres; i++) {
        int res = i >= e->m->nknown;
        if (strcmp(res ? e->m->kres_names[i - e->m->nknown] : e->m->known_names[i], name) != 0)
            continue;
        if (bytes == 0)
            return 0;
        char ty[64];
        set_error(e, "%s '%s' is %s, 0 elements, known when the model was imported: bind it to 0 bytes "
                  "(the buffer given has %zu; import the model again for another shape)", res ? "result" : "input",
                  name, cfx_type_str(res ? &e->m->kres_types[i - e->m->nknown] : &e->m->known_types[i], ty, sizeof ty),
                  bytes);
        return -1;
    }
    if (!name || !data) {
        set_error(e, "cfx_bind: %s is NULL", !name ? "the name" : "the buffer");
        return -1;
    }
    if (kind == BOUND_DEVICE && !exec_backends[e->backend].device) {
        set_error(e, "cannot bind device memory to '%s': this executor runs on %s", name,
                  cfx_backend_name(e->backend));
        return -1;
    }
    int is_input = 1, index = -1;
    for (int32_t i = 0; i < e->graph->ndeclared && index < 0; i++)
        if (strcmp(e->graph->params[i].name, name) == 0)
            index = i;
    for (int32_t i = 0; i < p->nresults && index < 0; i++)
        if (strcmp(e->graph->results[i].name, name) == 0) {
            index = i;
            is_input = 0;
        }
    if (index < 0) {
        set_error(e, "graph '%s' has no input or result called '%s'", p->name, name);
        return -1;
    }
    int32_t slot = is_input ? p->inputs[index] : p->results[index];
    size_t want = (size_t)slot_bytes(&p->slots[slot]);
    if (bytes != want) {
        char ty[64];
        cfx_type t = is_input ? e->graph->params[index].type : e->graph->results[index].type;
        set_error(e, "'%s' is %s, %zu bytes; the buffer given has %zu bytes", name,
                  cfx_type_str(&t, ty, sizeof ty), want, bytes);
        return -1;
    }
    /* any other binding of the other kind? */
    for (int32_t i = 0; i < p->ninputs; i++)
        if (e->in_bound[i] && e->in_bound[i] != kind && !(is_input && i == index)) {
            set_error(e, "cannot bind '%s' to %s memory: '%s' is bound to %s memory, and one run "
                      "takes either host or device buffers", name, kind == BOUND_HOST ? "host" : "device",
                      e->graph->params[i].name, kind == BOUND_HOST ? "device" : "host");
            return -1;
        }
    for (int32_t i = 0; i < p->nresults; i++)
        if (e->res_bound[i] && e->res_bound[i] != kind && !(!is_input && i == index)) {
            set_error(e, "cannot bind '%s' to %s memory: '%s' is bound to %s memory, and one run "
                      "takes either host or device buffers", name, kind == BOUND_HOST ? "host" : "device",
                      e->graph->results[i].name, kind == BOUND_HOST ? "device" : "host");
            return -1;
        }
    if (is_input) {
        e->inputs[index] = data;
        e->in_bound[index] = (unsigned char)kind;
    } else {
        e->user_results[index] = data;
        e->res_bound[index] = (unsigned char)kind;
    }
    return 0;
}

int cfx_bind(cfx_exec *e, const char *name, void *data, size_t bytes)
{
    if (!e || claim(e, RUN_IDLE, "cfx_bind") != 0)
        return -1;
    int rc = bind(e, name, data, bytes, BOUND_HOST);
    release(e, RUN_IDLE);
    return rc;
}

int cfx_bind_device(cfx_exec *e, const char *name, void *device_data, size_t bytes)
{
    if (!e || claim(e, RUN_IDLE, "cfx_bind_device") != 0)
        return -1;
    int rc = bind(e, name, device_data, bytes, BOUND_DEVICE);
    release(e, RUN_IDLE);
    return rc;
}

int cfx_unbind(cfx_exec *e, const char *name)
{
    if (!e)
        return -1;
    const cfx_prog *p = e->prog;
    if (e->running) {
        set_error(e, "cannot unbind '%s' while a run is in flight", name ? name : "(all)");
        return -1;
    }
    int found = 0;
    for (int32_t i = 0; i < p->ninputs; i++)
        if (!name || strcmp(e->graph->params[i].name, name) == 0) {
            e->inputs[i] = NULL;
            e->in_bound[i] = BOUND_NONE;
            found = 1;
        }
    for (int32_t i = 0; i < p->nresults; i++)
        if (!name || strcmp(e->graph->results[i].name, name) == 0) {
            e->user_results[i] = NULL;
            e->res_bound[i] = BOUND_NONE;
            found = 1;
        }
    if (name && !found) {
        set_error(e, "graph '%s' has no input or result called '%s'", p->name, name);
        return -1;
    }
    return 0;
}

int cfx_set_max_iters(cfx_exec *e, int64_t n)
{
    if (!e)
        return -1;
    begin_call(e);
    if (n < 0) {
        set_error(e, "the iteration budget must be 0 (no limit) or positive, got %" PRId64, n);
        return -1;
    }
    e->max_iters = n;
    return 0;
}

int cfx_set_persistent_mode(cfx_exec *e, cfx_persistent_mode mode)
{
    char why[768] = "";
    if (!e || claim(e, RUN_IDLE, "cfx_set_persistent_mode") != 0)
        return -1;
    int got = -1;
    if (mode != CFX_PERSISTENT_COMPILED && mode != CFX_PERSISTENT_INTERP) {
        set_error(e, "unknown persistent mode %d", (int)mode);
    } else if (!e->ops->mode) {
        set_error(e, "the %s backend has no persistent modes", cfx_backend_name(e->backend));
    } else {
        got = e->ops->mode(e->self, (int)mode, why, sizeof why);
        if (got < 0 || got != (int)mode)
            set_error(e, "%s", why);
    }
    release(e, RUN_IDLE);
    return got;
}

int cfx_set_option(cfx_exec *e, cfx_option option, int64_t value)
{
    char why[256] = "";
    if (!e)
        return -1;
    if (!e->ops->option) {
        set_error(e, "the %s backend has no options", cfx_backend_name(e->backend));
        return -1;
    }
    if (e->running) {
        set_error(e, "cannot change an option while a run is in flight");
        return -1;
    }
    switch (option) {
    case CFX_OPTION_DEVICE_LAUNCH:
    case CFX_OPTION_MICROOPS:
    case CFX_OPTION_L2_WINDOW:
        if (value != 0 && value != 1) {
            set_error(e, "option %d takes 0 or 1, got %" PRId64, (int)option, value);
            return -1;
        }
        break;
    case CFX_OPTION_ACCUMULATE:
        if (e->backend != CFX_BACKEND_CPU) {
            set_error(e, "the accumulate option is the cpu backend's, not %s's",
                      cfx_backend_name(e->backend));
            return -1;
        }
        if (value != CFX_ACCUMULATE_FAST && value != CFX_ACCUMULATE_F64) {
            set_error(e, "the accumulate option takes %d (fast) or %d (f64), got %" PRId64,
                      (int)CFX_ACCUMULATE_FAST, (int)CFX_ACCUMULATE_F64, value);
            return -1;
        }
        break;
    case CFX_OPTION_THREADS:
        if (e->backend != CFX_BACKEND_CPU) {
            set_error(e, "the threads option is the cpu backend's, not %s's",
                      cfx_backend_name(e->backend));
            return -1;
        }
        if (value < 0 || value > 256) {
            set_error(e, "the threads option takes 0 (the cores available) or a count from 1 to "
                         "256, got %" PRId64, value);
            return -1;
        }
        break;
    case CFX_OPTION_LAUNCH_PRODUCT_MIN:
        if (value < -1) {
            set_error(e, "the launched-product threshold takes -1 (the default), 0 or a count of "
                         "multiply-adds, got %" PRId64, value);
            return -1;
        }
        break;
    default:
        set_error(e, "unknown option %d", (int)option);
        return -1;
    }
    if (e->ops->option(e->self, (int)option, value, why, sizeof why) != 0) {
        set_error(e, "%s", why);
        return -1;
    }
    e->error[0] = '\0';
    return 0;
}

void cfx_set_stream(cfx_exec *e, void *stream)
{
    if (e)
        e->stream = stream;
}

void cfx_set_print(cfx_exec *e, void (*fn)(void *user, const char *line), void *user)
{
    if (!e)
        return;
    e->print_fn = fn;
    e->print_user = user;
}

/* Opens the trace file of the next runs (closes the last one); path NULL: no trace. */
static int open_trace(cfx_exec *e, const char *path)
{
    if (e->trace) {
        fclose(e->trace);
        e->trace = NULL;
    }
    free(e->trace_path);
    e->trace_path = NULL;
    if (!path)
        return 0;
    e->trace = fopen(path, "w");
    e->trace_path = copy_string(path);
    if (!e->trace || !e->trace_path) {
        set_error(e, "cannot write the trace to %s: %s", path,
                  e->trace ? "out of memory" : strerror(errno));
        if (e->trace)
            fclose(e->trace);
        e->trace = NULL;
        free(e->trace_path);
        e->trace_path = NULL;
        return -1;
    }
    return 0;
}

int cfx_set_trace(cfx_exec *e, const char *path)
{
    if (!e || claim(e, RUN_IDLE, "cfx_set_trace") != 0)
        return -1;
    int rc = open_trace(e, path);
    release(e, RUN_IDLE);
    return rc;
}

int cfx_set_profile(cfx_exec *e, int on)
{
    if (!e || claim(e, RUN_IDLE, "cfx_set_profile") != 0)
        return -1;
    int rc = 0;
    if (on && !e->prof.count) {
        size_t n = (size_t)e->prog->nrecords + 1;
        e->prof.count = calloc(n, sizeof *e->prof.count);
        e->prof.ns = calloc(n, sizeof *e->prof.ns);
        if (!e->prof.count || !e->prof.ns) {
            free(e->prof.count);
            free(e->prof.ns);
            e->prof.count = e->prof.ns = NULL;
            set_error(e, "cfx_set_profile: out of memory");
            rc = -1;
        }
    }
    if (rc == 0)
        e->profiling = on != 0;
    release(e, RUN_IDLE);
    return rc;
}

int cfx_profile(const cfx_exec *e, cfx_profile_row *rows, int max, double *run_us)
{
    if (!e || !e->profiled)
        return -1;
    if (run_us)
        *run_us = (double)e->prof.run_ns / 1e3;
    return exec_profile_rows(e->prog, &e->prof, rows, max);
}

char *cfx_profile_text(const cfx_exec *e)
{
    if (!e || !e->profiled)
        return NULL;
    return exec_profile_text(e->prog, &e->prof, cfx_backend_name(e->backend));
}

/* Each run writes one whole trace document, so the file is truncated before every run
 * after the first: it holds the trace of the latest run. */
static int restart_trace(cfx_exec *e)
{
    if (!e->trace)
        return 0;
    clearerr(e->trace); /* the last run's failed writes, which it reported */
    if (ftell(e->trace) == 0)
        return 0;
    e->trace = freopen(e->trace_path, "w", e->trace);
    return e->trace ? 0 : -1;
}

/* The backend's print hook: formats the PRINT record's slot as `label: VALUE` or `VALUE`. */
static void on_print(void *user, const cfx_prog *prog, int32_t record, const void *data)
{
    cfx_exec *e = user;
    const cfx_record *r = &prog->records[record];
    cfx_type t = slot_type(prog, r->a);
    strbuf line = {0};
    if (r->b >= 0 && r->b < prog->nstrings)
        sb_printf(&line, "%s: ", prog->strings + r->b);
    value_format(&line, &t, data);
    const char *text = line.oom ? "(out of memory formatting a print)" : sb_str(&line);
    if (e->print_fn) {
        e->print_fn(e->print_user, text);
    } else {
        fputs(text, stdout);
        fputc('\n', stdout);
    }
    sb_free(&line);
}

/* Ends the current run with CFX_ERROR and msg as both the error and the message. */
static cfx_status fail_run(cfx_exec *e, const char *msg)
{
    snprintf(e->error, sizeof e->error, "%s", msg);
    snprintf(e->message, sizeof e->message, "%s", msg);
    memset(&e->out, 0, sizeof e->out);
    e->out.status = CFX_ERROR;
    e->out.record = -1;
    return CFX_ERROR;
}

/* A host buffer of v's type with every element v's default. */
static int fill_default(const compiled_value *v, void **out)
{
    int64_t n = cfx_type_count(&v->type);
    int size = cfx_dtype_size(v->type.dtype);
    unsigned char *b = malloc((size_t)(n * size) + 1);
    if (!b)
        return -1;
    for (int64_t k = 0; k < n; k++)
        memcpy(b + k * size, v->value, (size_t)size);
    *out = b;
    return 0;
}

/* What start_run starts: a run (waited for or not), cfx_prepare's preparation, or
 * cfx_exec_graph's graph of a run. */
enum { START_SYNC, START_ASYNC, START_PREPARE, START_GRAPH };

static int start_run(cfx_exec *e, int mode, void **graph)
{
    const int async = mode == START_ASYNC;
    if (mode <= START_ASYNC)
        e->captured = 0;
    const cfx_prog *p = e->prog;
    e->message[0] = '\0';
    memset(&e->out, 0, sizeof e->out);
    e->out.record = -1;
    e->kernel_rc = 0;
    /* every input must be bound, but for one with a default on a run over host buffers, which
     * takes its default: list all that are not */
    int on_device = 0;
    for (int32_t i = 0; i < p->ninputs; i++)
        on_device |= e->in_bound[i] == BOUND_DEVICE;
    for (int32_t i = 0; i < p->nresults; i++)
        on_device |= e->res_bound[i] == BOUND_DEVICE;
    strbuf missing = {0};
    for (int32_t i = 0; i < p->ninputs; i++) {
        const compiled_value *v = &e->graph->params[i];
        if (v->presence_of >= 0) {
            /* whether a parameter that defaults to None was given: a host buffer of the library's */
            if (on_device) {
                sb_free(&missing);
                char msg[512];
                snprintf(msg, sizeof msg, "'%s' defaults to None, which a run over device buffers cannot tell: "
                         "bind host buffers to run graph '%s'", e->graph->params[v->presence_of].name, p->name);
                fail_run(e, msg);
                return -1;
            }
            if (!e->defaults[i] && !(e->defaults[i] = malloc(sizeof(int32_t)))) {
                sb_free(&missing);
                fail_run(e, "out of memory");
                return -1;
            }
            *(int32_t *)e->defaults[i] = e->in_bound[v->presence_of] != 0;
            e->inputs[i] = e->defaults[i];
            continue;
        }
        if (e->in_bound[i])
            continue;
        if (v->def && !on_device) {
            if (!e->defaults[i] && fill_default(v, &e->defaults[i]) < 0) {
                sb_free(&missing);
                fail_run(e, "out of memory");
                return -1;
            }
            e->inputs[i] = e->defaults[i];
            continue;
        }
        char ty[64];
        sb_printf(&missing, "%s%s: %s%s", missing.len ? ", " : "", v->name, cfx_type_str(&v->type, ty, sizeof ty),
                  v->def ? " (its default is taken only on a run over host buffers)" : "");
    }
    if (missing.len) {
        char msg[1024];
        snprintf(msg, sizeof msg, "missing input%s: %s", strchr(sb_str(&missing), ',') ? "s" : "",
                 sb_str(&missing));
        sb_free(&missing);
        fail_run(e, msg);
        return -1;
    }
    sb_free(&missing);

    /* results that were not bound go to scratch host memory, so no backend ever sees a NULL
     * host result; with device buffers they stay NULL (the backends skip them) */
    int device = on_device;
    for (int32_t i = 0; i < p->nresults; i++) {
        if (e->res_bound[i]) {
            e->results[i] = e->user_results[i];
        } else if (device) {
            e->results[i] = NULL;
        } else {
            if (!e->scratch[i]) {
                size_t bytes = (size_t)slot_bytes(&p->slots[p->results[i]]);
                e->scratch[i] = malloc(bytes ? bytes : 1);
                if (!e->scratch[i]) {
                    fail_run(e, "out of memory");
                    return -1;
                }
            }
            e->results[i] = e->scratch[i];
        }
    }

    if (mode <= START_ASYNC && restart_trace(e) != 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "cannot write the trace to %s: %s", e->trace_path, strerror(errno));
        fail_run(e, msg);
        return -1;
    }

    exec_run run;
    memset(&run, 0, sizeof run);
    run.prog = p;
    run.inputs = e->inputs;
    run.results = e->results;
    run.device_buffers = device;
    run.stream = e->stream;
    run.max_iters = e->max_iters;
    run.cancel = &e->cancel;
    run.kernels = e->kernels;
    run.print = on_print;
    run.print_user = e;
    run.trace = mode <= START_ASYNC ? e->trace : NULL;
    e->profiled = 0;
    if (e->profiling) {
        size_t n = (size_t)p->nrecords + 1;
        memset(e->prof.count, 0, n * sizeof *e->prof.count);
        memset(e->prof.ns, 0, n * sizeof *e->prof.ns);
        e->prof.run_ns = 0;
        run.profile = &e->prof;
    }
    e->run = run; /* the backend may keep the pointer until wait() */
    /* e->cancel is left as it is: a cancel made before the run stops it (cfx.h) */

    char err[512] = "";
    if (mode == START_PREPARE || mode == START_GRAPH) {
        int rc = -1;
        if (mode == START_PREPARE) {
            rc = e->ops->prepare ? e->ops->prepare(e->self, &e->run, err, sizeof err) : 0;
        } else if (!e->ops->graph) {
            snprintf(err, sizeof err, "cfx_exec_graph: the %s backend makes no CUDA graph of its runs (cuda-graph "
                     "and cuda-persistent do)", cfx_backend_name(e->backend));
        } else if (!device) {
            snprintf(err, sizeof err, "cfx_exec_graph: a graph reads its inputs and writes its results in device "
                     "memory: bind them with cfx_bind_device");
        } else {
            rc = e->ops->graph(e->self, &e->run, graph, err, sizeof err);
            e->captured = rc == 0; /* cfx_wait reads a replay's outcome, as after a capture */
        }
        if (rc != 0) {
            fail_run(e, err[0] ? err : "the backend failed to prepare the run");
            return -1;
        }
        return 0;
    }
    int rc = e->ops->run(e->self, &e->run, async, err, sizeof err);
    if (rc < 0) {
        atomic_store(&e->cancel, 0); /* the run was started: the cancel was its */
        fail_run(e, err[0] ? err : "the backend failed to start the run");
        return -1;
    }
    e->captured = rc == EXEC_CAPTURED;
    return 0;
}

/* 0 when the run's trace reached its file; -1 with the run failed when a write did not (a
 * full disk, a file size limit), so a cut trace is never taken for a whole one. */
static int check_trace(cfx_exec *e)
{
    if (!e->trace)
        return 0;
    int flushed = fflush(e->trace) == 0, why = errno;
    if (flushed && !ferror(e->trace))
        return 0;
    if (flushed) {
        /* the backend's own flush failed, and its errno is gone: a newline (white space after
         * the document) asks the file again */
        clearerr(e->trace);
        fputc('\n', e->trace);
        why = fflush(e->trace) != 0 ? errno : 0;
    }
    char msg[768];
    snprintf(msg, sizeof msg, "cannot write the trace to %s: %s", e->trace_path,
             why ? strerror(why) : "a write failed");
    fail_run(e, msg);
    return -1;
}

static cfx_status finish_run(cfx_exec *e)
{
    char err[512] = "";
    exec_outcome out;
    memset(&out, 0, sizeof out);
    out.record = -1;
    int failed = e->ops->wait(e->self, &out, err, sizeof err) != 0;
    atomic_store(&e->cancel, 0); /* each cancel stops at most one run */
    if (failed)
        return fail_run(e, err[0] ? err : "the backend failed");
    if (check_trace(e) != 0)
        return CFX_ERROR;
    e->profiled = e->run.profile != NULL; /* a stopped run's profile too: where it went */
    e->out = out;
    e->message[0] = '\0';
    if (out.status != CFX_OK) {
        if (out.record >= 0 && out.record < e->prog->nrecords)
            exec_format_stop(e->prog, &out, e->message, sizeof e->message);
        else
            snprintf(e->message, sizeof e->message, "%s: run stopped: %s", e->prog->file,
                     cfx_status_name(out.status));
        /* an application kernel that failed: what it returned */
        size_t n = strlen(e->message);
        if (out.status == CFX_ERROR && e->kernel_rc != 0 && n + 32 < sizeof e->message)
            snprintf(e->message + n, sizeof e->message - n, " (it returned %d)", e->kernel_rc);
    }
    if (out.status == CFX_ERROR)
        snprintf(e->error, sizeof e->error, "%s", e->message);
    return out.status;
}

/* ---- Ctrl-C: cfx_cancel_on_sigint ----
 * During a synchronous run on the main thread of an executor that asked for it, SIGINT's
 * handler is the library's: it cancels the run (an atomic store, safe in a handler) and calls
 * the handler that was there before, whose work (Python's flag and wakeup fd, an application's
 * counter) is then done as if the library were not there. One run at a time holds the hook (a
 * nested run, from a callback, installs none), so the handler put back is always the one found. */

static cfx_exec *_Atomic sigint_exec;     /* the run the hook cancels; NULL: no hook */
static struct sigaction sigint_before;    /* written before the hook is installed */

static void on_sigint(int sig, siginfo_t *info, void *ctx)
{
    cfx_exec *e = atomic_load(&sigint_exec);
    if (e)
        atomic_store(&e->cancel, 1);
    if (sigint_before.sa_flags & SA_SIGINFO) {
        if (sigint_before.sa_sigaction)
            sigint_before.sa_sigaction(sig, info, ctx);
    } else if (sigint_before.sa_handler != SIG_DFL && sigint_before.sa_handler != SIG_IGN) {
        sigint_before.sa_handler(sig);
    }
}

/* Whether the calling thread is the process's main thread, where a terminal's Ctrl-C is
 * handled (Linux: its thread id is the process id). */
static int on_main_thread(void)
{
#ifdef __linux__
    static _Thread_local signed char main_thread = -1;
    if (main_thread < 0)
        main_thread = (signed char)(syscall(SYS_gettid) == getpid());
    return main_thread;
#else
    return 1;
#endif
}

/* Installs the hook for e's run; 1 when installed (sigint_unhook puts the old handler back). */
static int sigint_hook(cfx_exec *e)
{
    cfx_exec *none = NULL;
    if (!e->sigint || !on_main_thread() || !atomic_compare_exchange_strong(&sigint_exec, &none, e))
        return 0;
    struct sigaction on;
    memset(&on, 0, sizeof on);
    on.sa_sigaction = on_sigint;
    on.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&on.sa_mask);
    if (sigaction(SIGINT, &on, &sigint_before) != 0) {
        atomic_store(&sigint_exec, NULL);
        return 0;
    }
    if (!(sigint_before.sa_flags & SA_SIGINFO) && sigint_before.sa_handler == SIG_IGN) {
        sigaction(SIGINT, &sigint_before, NULL); /* Ctrl-C was ignored: so it stays */
        atomic_store(&sigint_exec, NULL);
        return 0;
    }
    return 1;
}

static void sigint_unhook(int hooked)
{
    if (hooked) {
        sigaction(SIGINT, &sigint_before, NULL);
        atomic_store(&sigint_exec, NULL);
    }
}

int cfx_cancel_on_sigint(cfx_exec *e, int on)
{
    if (!e)
        return -1;
    e->sigint = on != 0;
    return 0;
}

cfx_status cfx_run(cfx_exec *e)
{
    if (!e || claim(e, RUN_IDLE, "cfx_run") != 0)
        return CFX_ERROR;
    int hooked = sigint_hook(e);
    cfx_status st = start_run(e, START_SYNC, NULL) == 0 ? finish_run(e) : CFX_ERROR;
    sigint_unhook(hooked);
    release(e, RUN_IDLE);
    return st;
}

/* The buffer of a cfx_run_bound entry: the entry, or with CFX_BOUND_INDIRECT what it points at. */
static void *bound_buffer(void *const *entries, int32_t i, int flags)
{
    void *entry = entries[i];
    return entry && (flags & CFX_BOUND_INDIRECT) ? *(void *const *)entry : entry;
}

cfx_status cfx_run_bound(cfx_exec *e, void *const *inputs, void *const *results, int flags,
                         int64_t *iterations)
{
    if (!e || claim(e, RUN_IDLE, "cfx_run_bound") != 0)
        return CFX_ERROR;
    const cfx_prog *p = e->prog;
    const int device = flags & CFX_BOUND_DEVICE;
    const unsigned char kind = device ? BOUND_DEVICE : BOUND_HOST;
    cfx_status st = CFX_ERROR;
    if (flags & ~(CFX_BOUND_DEVICE | CFX_BOUND_INDIRECT)) {
        set_error(e, "cfx_run_bound: unknown flags 0x%x", (unsigned)flags);
    } else if (device && !exec_backends[e->backend].device) {
        set_error(e, "cannot bind device memory: this executor runs on %s", cfx_backend_name(e->backend));
    } else {
        /* declared inputs first; the inputs past them (whether a None default was given) are
         * the library's, filled by start_run */
        for (int32_t i = 0; i < p->ninputs; i++) {
            void *data = inputs && i < e->graph->ndeclared ? bound_buffer(inputs, i, flags) : NULL;
            e->inputs[i] = data;
            e->in_bound[i] = data ? kind : BOUND_NONE;
        }
        for (int32_t i = 0; i < p->nresults; i++) {
            void *data = results ? bound_buffer(results, i, flags) : NULL;
            e->user_results[i] = data;
            e->res_bound[i] = data ? kind : BOUND_NONE;
        }
        int hooked = sigint_hook(e);
        st = start_run(e, START_SYNC, NULL) == 0 ? finish_run(e) : CFX_ERROR;
        sigint_unhook(hooked);
    }
    for (int32_t i = 0; i < p->ninputs; i++) {
        e->inputs[i] = NULL;
        e->in_bound[i] = BOUND_NONE;
    }
    for (int32_t i = 0; i < p->nresults; i++) {
        e->user_results[i] = NULL;
        e->res_bound[i] = BOUND_NONE;
    }
    if (iterations)
        *iterations = e->out.iterations;
    release(e, RUN_IDLE);
    return st;
}

int cfx_run_async(cfx_exec *e)
{
    if (!e || claim(e, RUN_IDLE, "cfx_run_async") != 0)
        return -1;
    int rc = start_run(e, START_ASYNC, NULL);
    release(e, rc == 0 ? RUN_ASYNC : RUN_IDLE);
    return rc;
}

int cfx_prepare(cfx_exec *e)
{
    if (!e || claim(e, RUN_IDLE, "cfx_prepare") != 0)
        return -1;
    int rc = start_run(e, START_PREPARE, NULL);
    release(e, RUN_IDLE);
    return rc;
}

int cfx_exec_graph(cfx_exec *e, void **graph)
{
    if (graph)
        *graph = NULL;
    if (!e || claim(e, RUN_IDLE, "cfx_exec_graph") != 0)
        return -1;
    int rc = -1;
    if (!graph)
        fail_run(e, "cfx_exec_graph: graph is NULL");
    else
        rc = start_run(e, START_GRAPH, graph);
    release(e, RUN_IDLE);
    return rc;
}

cfx_status cfx_wait(cfx_exec *e)
{
    if (!e)
        return CFX_ERROR;
    if (atomic_load(&e->running) == RUN_IDLE && !e->captured)
        return e->out.status; /* nothing in flight: the last run's status */
    if (atomic_load(&e->running) == RUN_IDLE) {
        /* a captured run: the outcome of the application's last replay of it, read again */
        if (claim(e, RUN_IDLE, "cfx_wait") != 0)
            return CFX_ERROR;
        cfx_status st = finish_run(e);
        release(e, RUN_IDLE);
        return st;
    }
    if (claim(e, RUN_ASYNC, "cfx_wait") != 0)
        return CFX_ERROR; /* another thread's cfx_run, or its cfx_wait */
    cfx_status st = finish_run(e);
    release(e, RUN_IDLE);
    return st;
}

void cfx_cancel(cfx_exec *e)
{
    if (e)
        atomic_store(&e->cancel, 1);
}

cfx_status cfx_exec_status(const cfx_exec *e) { return e ? e->out.status : CFX_ERROR; }

const char *cfx_exec_message(const cfx_exec *e) { return e ? e->message : ""; }

void cfx_exec_position(const cfx_exec *e, int *line, int *col)
{
    int l = 0, c = 0;
    if (e && e->out.status != CFX_OK && e->out.record >= 0 && e->out.record < e->prog->nrecords) {
        l = e->prog->records[e->out.record].line;
        c = e->prog->records[e->out.record].col;
    }
    if (line)
        *line = l;
    if (col)
        *col = c;
}

const char *cfx_exec_error(const cfx_exec *e)
{
    if (!e)
        return "the executor is NULL";
    return refused_on == e ? refusal : e->error;
}

int64_t cfx_exec_iterations(const cfx_exec *e) { return e ? e->out.iterations : 0; }

const char *cfx_exec_hang_report(const cfx_exec *e)
{
    if (!e || !e->ops || !e->ops->hang || e->out.status != CFX_STOP_CANCELLED)
        return "";
    const char *r = e->ops->hang(e->self);
    return r ? r : "";
}

/* ---- importing ONNX models (onnx.c writes the text; it compiles as any other) ------------- */

int cfx_onnx_available(void)
{
#ifdef CFX_HAVE_ONNX
    return 1;
#else
    return 0;
#endif
}

cfx_module *cfx_import_onnx(cfx_context *ctx, const char *path, const void *bytes, size_t len,
                            const cfx_input_shape *shapes, int nshapes, char **diagnostics)
{
    onnx_import im;
    char *err = NULL;
    if (diagnostics)
        *diagnostics = NULL;
    if (onnx_import_model(path, bytes, len, shapes, nshapes, NULL, NULL, &im, &err) != 0) {
        if (diagnostics)
            *diagnostics = err;
        else
            free(err);
        return NULL;
    }
    cfx_constant *table = calloc((size_t)im.nconstants + 1, sizeof *table);
    cfx_module *m = NULL;
    if (!table) {
        err = format_message("%s: out of memory\n", im.file);
    } else {
        for (int k = 0; k < im.nconstants; k++)
            table[k] = (cfx_constant){im.constants[k].name, im.constants[k].type, im.constants[k].data};
        m = cfx_compile_string_constants(ctx, im.file, im.text, strlen(im.text), table, im.nconstants, &err);
        if (!m && err) {
            /* the importer writes only what compiles: what does not is its bug, said in one line */
            char *nl = strchr(err, '\n');
            char *one = format_message("%s: error: the imported program does not compile (a bug of cfx's "
                                       "importer; cfx import shows the program): %.*s\n",
                                       path ? path : "model.onnx", nl ? (int)(nl - err) : (int)strlen(err), err);
            free(err);
            err = one;
        }
    }
    free(table);
    /* the graph's inputs and results go by their ONNX names (not always identifiers) */
    if (m && m->cm.ngraphs == 1) {
        compiled_graph *g = &m->cm.graphs[0];
        for (int k = 0; k < g->ndeclared && k < im.ninputs; k++) {
            free(g->params[k].name);
            g->params[k].name = copy_string(im.input_names[k]);
        }
        for (int k = 0; k < g->nresults && k < im.nresults; k++) {
            free(g->results[k].name);
            g->results[k].name = copy_string(im.result_names[k]);
        }
        for (int k = 0; k < g->ndeclared; k++)
            if (!g->params[k].name)
                goto oom;
        for (int k = 0; k < g->nresults; k++)
            if (!g->results[k].name)
                goto oom;
    }
    if (m && im.nknown) { /* the inputs known at import: the module answers for them by name */
        m->known_names = im.known_names;
        m->known_types = im.known_types;
        m->nknown = im.nknown;
        im.known_names = NULL;
        im.known_types = NULL;
        im.nknown = 0;
    }
    if (m && im.nkres) {
        m->kres_names = im.kres_names;
        m->kres_types = im.kres_types;
        m->nkres = im.nkres;
        im.kres_names = NULL;
        im.kres_types = NULL;
        im.nkres = 0;
    }
    onnx_import_free(&im);
    if (diagnostics)
        *diagnostics = err;
    else
        free(err);
    return m;
oom:
    onnx_import_free(&im);
    cfx_module_free(m);
    if (diagnostics)
        *diagnostics = format_message("%s: out of memory\n", path ? path : "model.onnx");
    return NULL;
}

char *cfx_import_onnx_source(const char *path, const void *bytes, size_t len,
                             const cfx_input_shape *shapes, int nshapes, const char *data_dir,
                             const char *data_dir_text, char **diagnostics)
{
    onnx_import im;
    char *err = NULL;
    if (diagnostics)
        *diagnostics = NULL;
    if (onnx_import_model(path, bytes, len, shapes, nshapes, data_dir, data_dir_text, &im, &err) != 0) {
        if (diagnostics)
            *diagnostics = err;
        else
            free(err);
        return NULL;
    }
    char *text = im.text;
    im.text = NULL;
    onnx_import_free(&im);
    return text;
}
