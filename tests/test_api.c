/* test_api.c: the public API end to end on the cpu backend: diagnostics handed back (not
 * printed), registered kernels, binding rules, missing inputs, stopped runs with their
 * status line and position, cancel from another thread, the iteration budget, prints.
 * Misuse: queries out of range, a NULL module, a second run from another thread while one is
 * in flight, a cancel before the run, errors that must not outlive a call that succeeded, a
 * trace that cannot be written. The profile: per-line counts and loop iterations against counts
 * known by hand, its times against the run's wall time measured here. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cfx.h"
#include "testutil.h"

static cfx_module *compile(cfx_context *ctx, const char *name, const char *src)
{
    char *diags = NULL;
    cfx_module *m = cfx_compile_string(ctx, name, src, strlen(src), &diags);
    if (!m)
        fprintf(stderr, "unexpected compile error:\n%s", diags ? diags : "(none)\n");
    cfx_free(diags);
    return m;
}

/* Runs fn with stderr and stdout sent to a file, and returns how many bytes were written to
 * them: the library must print nothing. */
static long output_of(void (*fn)(void *), void *arg)
{
    fflush(stdout);
    fflush(stderr);
    FILE *tmp = tmpfile();
    if (!tmp)
        return -1;
    int saved_out = dup(1), saved_err = dup(2);
    dup2(fileno(tmp), 1);
    dup2(fileno(tmp), 2);
    fn(arg);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    long n = lseek(fileno(tmp), 0, SEEK_END);
    fclose(tmp);
    return n;
}

struct bad_compile {
    char *diags;
    cfx_module *m;
};

static void compile_bad(void *arg)
{
    struct bad_compile *b = arg;
    const char *src = "graph f(x: i32) -> (y: i32) {\n  y = x + 1.5\n}\n";
    b->m = cfx_compile_string(NULL, "bad.cfx", src, strlen(src), &b->diags);
}

static void check_diagnostics(void)
{
    struct bad_compile b = {NULL, NULL};
    CHECK_INT(output_of(compile_bad, &b), 0);
    CHECK(b.m == NULL);
    CHECK(b.diags != NULL);
    if (b.diags) {
        CHECK(strncmp(b.diags, "bad.cfx:2:", 10) == 0);
        CHECK(strstr(b.diags, ": error: ") != NULL);
        CHECK(strstr(b.diags, "\n  y = x + 1.5\n") != NULL); /* the source line */
        CHECK(strstr(b.diags, "^\n") != NULL);               /* and a caret */
    }
    cfx_free(b.diags);

    char *diags = NULL;
    CHECK(cfx_compile_file(NULL, "no/such/file.cfx", &diags) == NULL);
    CHECK_STR(diags, "no/such/file.cfx: cannot read: No such file or directory\n");
    cfx_free(diags);
    diags = NULL;
    CHECK(cfx_compile_file(NULL, ".", &diags) == NULL);
    CHECK_STR(diags, ".: cannot read: Is a directory\n");
    cfx_free(diags);
}

static void check_queries(void)
{
    const char *src = "graph first(a: f32[2, 3], b: i64) -> (c: bool, d: f64[4]) {\n"
                      "  c = b > 0\n"
                      "  d = zeros(f64[4])\n"
                      "}\n"
                      "graph second() -> (e: i32) {\n"
                      "  e = 7\n"
                      "}\n";
    cfx_module *m = compile(NULL, "q.cfx", src);
    CHECK(m != NULL);
    if (!m)
        return;
    char ty[64];
    CHECK_INT(cfx_graph_count(m), 2);
    CHECK_STR(cfx_graph_name(m, 0), "first");
    CHECK_STR(cfx_graph_name(m, 1), "second");
    CHECK_INT(cfx_graph_find(m, NULL), 0);
    CHECK_INT(cfx_graph_find(m, "second"), 1);
    CHECK_INT(cfx_graph_find(m, "third"), -1);
    CHECK(cfx_graph_name(m, 2) == NULL);
    CHECK_INT(cfx_input_count(m, 0), 2);
    CHECK_STR(cfx_input_name(m, 0, 0), "a");
    cfx_type t = cfx_input_type(m, 0, 0);
    CHECK_STR(cfx_type_str(&t, ty, sizeof ty), "f32[2, 3]");
    CHECK_STR(cfx_input_name(m, 0, 1), "b");
    t = cfx_input_type(m, 0, 1);
    CHECK_STR(cfx_type_str(&t, ty, sizeof ty), "i64");
    CHECK_INT(cfx_result_count(m, 0), 2);
    CHECK_STR(cfx_result_name(m, 0, 1), "d");
    t = cfx_result_type(m, 0, 1);
    CHECK_STR(cfx_type_str(&t, ty, sizeof ty), "f64[4]");
    CHECK_INT(cfx_input_count(m, 1), 0);
    CHECK(cfx_input_name(m, 0, 5) == NULL);

    char *dump = cfx_dump(m, 1);
    CHECK(dump && strstr(dump, "second") && strstr(dump, "HALT"));
    cfx_free(dump);
    CHECK(cfx_dump(m, 9) == NULL);

    /* a graph with no inputs runs on AUTO, which picks cpu where there is no GPU */
    char *err = NULL;
    cfx_exec *e = cfx_exec_new(m, 1, CFX_BACKEND_AUTO, &err);
    CHECK(e != NULL);
    if (e) {
        char why[128];
        if (!cfx_backend_available(CFX_BACKEND_CUDA_PERSISTENT, why, sizeof why))
            CHECK_INT(cfx_exec_backend(e), CFX_BACKEND_CPU);
        int32_t out = 0;
        CHECK_INT(cfx_bind(e, "e", &out, sizeof out), 0);
        CHECK_INT(cfx_run(e), CFX_OK);
        CHECK_INT(out, 7);
        CHECK_STR(cfx_exec_message(e), "");
        /* asynchronously: the cpu backend runs to the end, the status comes from wait */
        out = 0;
        CHECK_INT(cfx_run_async(e), 0);
        CHECK_INT(cfx_wait(e), CFX_OK);
        CHECK_INT(out, 7);
    }
    cfx_exec_free(e);

    /* a CUDA backend where it is not available is refused with the reason */
    char why[128] = "";
    if (!cfx_backend_available(CFX_BACKEND_CUDA_HOST, why, sizeof why)) {
        CHECK(strlen(why) > 0);
        e = cfx_exec_new(m, 1, CFX_BACKEND_CUDA_HOST, &err);
        CHECK(e == NULL);
        char want[256];
        snprintf(want, sizeof want, "backend cuda-host is not available: %s", why);
        CHECK_STR(err, want);
        cfx_free(err);
        err = NULL;
    }
    CHECK(cfx_exec_new(m, 5, CFX_BACKEND_CPU, &err) == NULL);
    CHECK_STR(err, "no graph 5 in the module: it has 2, numbered from 0");
    cfx_free(err);
    err = NULL;
    CHECK(cfx_exec_new(NULL, 0, CFX_BACKEND_CPU, &err) == NULL);
    CHECK_STR(err, "the module is NULL");
    cfx_free(err);

    /* out of range: no type that reads as one (f32, the zero dtype, was answered before) */
    cfx_type none[4] = {cfx_input_type(m, 0, 99), cfx_input_type(m, 0, -1), cfx_result_type(m, 9, 0),
                        cfx_input_type(NULL, 0, 0)};
    for (int k = 0; k < 4; k++) {
        CHECK_INT(none[k].rank, -1);
        CHECK_INT(cfx_type_count(&none[k]), 0);
        CHECK_STR(cfx_type_str(&none[k], ty, sizeof ty), "(no type)");
    }
    CHECK(cfx_result_name(m, 0, 2) == NULL);
    CHECK_INT(cfx_result_count(m, 7), 0);
    cfx_module_free(m);
}

/* y = x * s, elementwise, counting its calls through `user` */
static int scale(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    (*(int *)user)++;
    if (nargs != 2 || nresults != 1 || args[0].type.dtype != CFX_F32 || args[0].type.dims[0] != 4)
        return 1;
    const float *x = args[0].data;
    float s = *(const float *)args[1].data;
    float *y = results[0].data;
    for (int i = 0; i < 4; i++)
        y[i] = x[i] * s;
    return 0;
}

static int failing(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    return 7;
}

static void check_kernels_and_binding(void)
{
    cfx_context *ctx = cfx_context_new();
    int calls = 0;
    char *err = NULL;
    CHECK_INT(cfx_register_kernel(ctx, "scale", "(f32[4], f32) -> (f32[4])", scale, NULL, &calls, &err), 0);
    CHECK(err == NULL);
    CHECK_INT(cfx_register_kernel(ctx, "boom", "(i32) -> (i32)", failing, NULL, NULL, &err), 0);

    /* names and signatures that are refused */
    struct {
        const char *name, *sig, *message;
    } bad[] = {
        {"scale", "(f32) -> (f32)", "kernel 'scale' is already registered"},
        {"if", "(f32) -> (f32)", "kernel name 'if' is reserved by the language"},
        {"sum", "(f32) -> (f32)", "kernel name 'sum' is a built-in op"},
        {"f32", "(f32) -> (f32)", "kernel name 'f32' is reserved by the language"},
        {"1abc", "(f32) -> (f32)", "kernel name '1abc' is not an identifier"},
        {"a-b", "(f32) -> (f32)", "kernel name 'a-b' is not an identifier"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        err = NULL;
        CHECK_INT(cfx_register_kernel(ctx, bad[k].name, bad[k].sig, scale, NULL, NULL, &err), -1);
        CHECK_STR(err, bad[k].message);
        cfx_free(err);
    }
    err = NULL;
    CHECK_INT(cfx_register_kernel(ctx, "odd", "(f32[4] -> (f32)", scale, NULL, NULL, &err), -1);
    CHECK(err && strncmp(err, "kernel 'odd': bad signature", 27) == 0);
    cfx_free(err);
    err = NULL;
    CHECK_INT(cfx_register_kernel(ctx, "none", "(f32) -> (f32)", NULL, NULL, NULL, &err), -1);
    CHECK_STR(err, "kernel 'none' has neither a CPU nor a CUDA function");
    cfx_free(err);

    const char *src = "graph g(x: f32[4], s: f32) -> (y: f32[4], n: i32) {\n"
                      "  y = scale(x, s)\n"
                      "  n = len(x)\n"
                      "}\n"
                      "graph h(a: i32) -> (b: i32) {\n"
                      "  b = boom(a)\n"
                      "}\n";
    cfx_module *m = compile(ctx, "k.cfx", src);
    cfx_context_free(ctx); /* the module keeps what it needs */
    CHECK(m != NULL);
    if (!m)
        return;
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, &err);
    CHECK(e != NULL);
    if (!e) {
        cfx_module_free(m);
        return;
    }
    float x[4] = {1, 2, 3, -4}, s = 0.5f, y[4] = {0};
    int32_t n = 0;

    /* missing inputs: every one listed with its type */
    CHECK_INT(cfx_run(e), CFX_ERROR);
    CHECK_STR(cfx_exec_error(e), "missing inputs: x: f32[4], s: f32");
    CHECK_INT(cfx_exec_status(e), CFX_ERROR);

    /* binding errors */
    CHECK_INT(cfx_bind(e, "x", x, 8), -1);
    CHECK_STR(cfx_exec_error(e), "'x' is f32[4], 16 bytes; the buffer given has 8 bytes");
    CHECK_INT(cfx_bind(e, "q", x, 16), -1);
    CHECK_STR(cfx_exec_error(e), "graph 'g' has no input or result called 'q'");
    CHECK_INT(cfx_bind_device(e, "x", x, 16), -1);
    CHECK_STR(cfx_exec_error(e), "cannot bind device memory to 'x': this executor runs on cpu");

    CHECK_INT(cfx_bind(e, "x", x, sizeof x), 0);
    CHECK_INT(cfx_run(e), CFX_ERROR);
    CHECK_STR(cfx_exec_error(e), "missing input: s: f32");
    CHECK_INT(cfx_bind(e, "s", &s, sizeof s), 0);
    /* results need not be bound; bind y only */
    CHECK_INT(cfx_bind(e, "y", y, sizeof y), 0);
    CHECK_INT(cfx_run(e), CFX_OK);
    CHECK_INT(calls, 1);
    CHECK(y[0] == 0.5f && y[1] == 1.0f && y[2] == 1.5f && y[3] == -2.0f);
    CHECK_INT(cfx_bind(e, "n", &n, sizeof n), 0);
    CHECK_INT(cfx_run(e), CFX_OK);
    CHECK_INT(n, 4);

    /* unbinding: a result goes back to the executor's buffer and is left alone, an input must
     * be bound again; NULL unbinds everything */
    CHECK_INT(cfx_unbind(e, "q"), -1);
    CHECK_STR(cfx_exec_error(e), "graph 'g' has no input or result called 'q'");
    CHECK_INT(cfx_unbind(e, "y"), 0);
    y[0] = 7.0f;
    s = 2.0f;
    n = -1;
    CHECK_INT(cfx_run(e), CFX_OK);
    CHECK(y[0] == 7.0f); /* no longer written */
    CHECK_INT(n, 4);
    CHECK_INT(cfx_unbind(e, "s"), 0);
    CHECK_INT(cfx_run(e), CFX_ERROR);
    CHECK_STR(cfx_exec_error(e), "missing input: s: f32");
    CHECK_INT(cfx_unbind(e, NULL), 0);
    CHECK_INT(cfx_run(e), CFX_ERROR);
    CHECK_STR(cfx_exec_error(e), "missing inputs: x: f32[4], s: f32");
    n = -1;
    CHECK_INT(cfx_bind(e, "x", x, sizeof x), 0);
    CHECK_INT(cfx_bind(e, "s", &s, sizeof s), 0);
    CHECK_INT(cfx_run(e), CFX_OK);
    CHECK_INT(n, -1); /* n was unbound too */
    CHECK_INT(cfx_unbind(NULL, NULL), -1);
    cfx_exec_free(e);

    /* a kernel that fails stops the run with CFX_ERROR */
    e = cfx_exec_new(m, 1, CFX_BACKEND_CPU, &err);
    CHECK(e != NULL);
    if (e) {
        int32_t a = 1, b = -1;
        cfx_bind(e, "a", &a, 4);
        cfx_bind(e, "b", &b, 4);
        CHECK_INT(cfx_run(e), CFX_ERROR);
        CHECK_INT(b, -1); /* no result written */
        /* the message names the kernel and what it returned, at the call */
        CHECK_STR(cfx_exec_message(e), "k.cfx:6:3: run stopped: error: kernel 'boom' failed (it returned 7)");
        CHECK_STR(cfx_exec_error(e), cfx_exec_message(e));
    }
    cfx_exec_free(e);
    cfx_module_free(m);
}

static void check_stops(void)
{
    const char *src = "graph idx(x: i32[4], i: i32) -> (r: i32) {\n"
                      "  r = x[i]\n"
                      "}\n";
    cfx_module *m = compile(NULL, "idx.cfx", src);
    CHECK(m != NULL);
    if (!m)
        return;
    char *err = NULL;
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, &err);
    int32_t x[4] = {10, 20, 30, 40}, i = 4, r = -7;
    cfx_bind(e, "x", x, sizeof x);
    cfx_bind(e, "i", &i, sizeof i);
    cfx_bind(e, "r", &r, sizeof r);
    CHECK_INT(cfx_run(e), CFX_STOP_INDEX);
    CHECK_INT(cfx_exec_status(e), CFX_STOP_INDEX);
    CHECK_STR(cfx_exec_message(e), "idx.cfx:2:3: run stopped: index: 'x' has 4 rows, index was 4");
    int line = 0, col = 0;
    cfx_exec_position(e, &line, &col);
    CHECK_INT(line, 2);
    CHECK_INT(col, 3);
    CHECK_INT(r, -7); /* a stopped run writes no results */
    i = -1;
    CHECK_INT(cfx_run(e), CFX_OK);
    CHECK_INT(r, 40);
    CHECK_STR(cfx_exec_message(e), "");
    cfx_exec_free(e);
    cfx_module_free(m);
}

struct canceller {
    cfx_exec *e;
    atomic_int done;
};

static void *cancel_until_done(void *arg)
{
    struct canceller *c = arg;
    struct timespec ms = {0, 5 * 1000 * 1000};
    while (!atomic_load(&c->done)) {
        nanosleep(&ms, NULL);
        cfx_cancel(c->e);
    }
    return NULL;
}

static void check_cancel_and_budget(void)
{
    const char *src = "graph spin(x: i32) -> (i: i32) {\n"
                      "  i = 0\n"
                      "  while x < 1 {\n"
                      "    i = i + 1\n"
                      "  }\n"
                      "}\n";
    cfx_module *m = compile(NULL, "spin.cfx", src);
    CHECK(m != NULL);
    if (!m)
        return;
    char *err = NULL;
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, &err);
    int32_t x = 0, i = -1;
    cfx_bind(e, "x", &x, 4);
    cfx_bind(e, "i", &i, 4);

    /* a negative budget is refused and leaves the budget as it was (none) */
    CHECK_INT(cfx_set_max_iters(e, -5), -1);
    CHECK(strstr(cfx_exec_error(e), "iteration budget must be 0 (no limit) or positive, got -5") != NULL);
    CHECK_INT(cfx_set_max_iters(NULL, 5), -1);
    /* the interpreter's options belong to cuda-persistent; the cpu backend takes accumulate and threads */
    CHECK_INT(cfx_set_option(e, CFX_OPTION_MICROOPS, 0), -1);
    CHECK(strstr(cfx_exec_error(e), "the cpu backend takes only option 5 (accumulate) and option 6 (threads), not 2") != NULL);
    CHECK_INT(cfx_set_option(NULL, CFX_OPTION_MICROOPS, 0), -1);

    /* the budget */
    CHECK_INT(cfx_set_max_iters(e, 1000), 0);
    CHECK_INT(cfx_run(e), CFX_STOP_LIMIT);
    CHECK(strstr(cfx_exec_message(e), "spin.cfx:") == cfx_exec_message(e));
    CHECK(strstr(cfx_exec_message(e), "run stopped: limit: iteration budget of 1000 spent") != NULL);
    CHECK(cfx_exec_iterations(e) >= 1000 && cfx_exec_iterations(e) <= 1001);
    CHECK_INT(i, -1);

    /* a cancel from another thread stops an endless loop */
    cfx_set_max_iters(e, 0);
    struct canceller c = {e, 0};
    pthread_t th;
    CHECK_INT(pthread_create(&th, NULL, cancel_until_done, &c), 0);
    cfx_status st = cfx_run(e);
    atomic_store(&c.done, 1);
    pthread_join(th, NULL);
    CHECK_INT(st, CFX_STOP_CANCELLED);
    CHECK(strstr(cfx_exec_message(e), "run stopped: cancelled") != NULL);
    CHECK_INT(i, -1);

    /* and a loop that ends reports its iterations */
    x = 5;
    CHECK_INT(cfx_run(e), CFX_OK);
    CHECK_INT(i, 0);
    cfx_exec_free(e);
    cfx_module_free(m);
}

static char printed[1024];

static void collect(void *user, const char *line)
{
    (*(int *)user)++;
    strncat(printed, line, sizeof printed - strlen(printed) - 2);
    strcat(printed, "\n");
}

static void check_print_and_trace(void)
{
    const char *src = "graph p(x: i32) -> (y: f32[2]) {\n"
                      "  print(x + 1, \"lbl\")\n"
                      "  y = full(f32[2], 2.5)\n"
                      "  print(y)\n"
                      "  print(x > 2)\n"
                      "}\n";
    cfx_module *m = compile(NULL, "p.cfx", src);
    CHECK(m != NULL);
    if (!m)
        return;
    char *err = NULL;
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, &err);
    int32_t x = 3;
    int lines = 0;
    cfx_bind(e, "x", &x, 4);
    cfx_set_print(e, collect, &lines);
    const char *trace = "test_api_trace.json";
    CHECK_INT(cfx_set_trace(e, trace), 0);
    CHECK_INT(cfx_run(e), CFX_OK);
    CHECK_INT(lines, 3);
    CHECK_STR(printed, "lbl: 4\n[2.5, 2.5]\ntrue\n");
    /* a second run replaces the trace: the file holds one whole document */
    CHECK_INT(cfx_run(e), CFX_OK);
    CHECK_INT(lines, 6);
    CHECK_INT(cfx_set_trace(e, NULL), 0);
    long len = 0;
    char *text = test_read_file(trace, &len);
    CHECK(text && len > 0 && strstr(text, "traceEvents"));
    CHECK(text && strstr(strstr(text, "traceEvents") + 1, "traceEvents") == NULL);
    free(text);
    remove(trace);
    CHECK_INT(cfx_set_trace(e, "no/such/dir/t.json"), -1);
    CHECK(strncmp(cfx_exec_error(e), "cannot write the trace to no/such/dir/t.json: ", 46) == 0);
    /* a trace that cannot be written fails the run: a cut trace is never taken for a whole one */
    FILE *full = fopen("/dev/full", "w");
    if (full) {
        fclose(full);
        CHECK_INT(cfx_set_trace(e, "/dev/full"), 0);
        CHECK_STR(cfx_exec_error(e), ""); /* the failed call's error went with this success */
        CHECK_INT(cfx_run(e), CFX_ERROR);
        CHECK_STR(cfx_exec_error(e), "cannot write the trace to /dev/full: No space left on device");
        CHECK_INT(cfx_run(e), CFX_ERROR); /* and again on the next run */
        CHECK_INT(cfx_set_trace(e, NULL), 0);
        CHECK_INT(cfx_run(e), CFX_OK);
        CHECK_STR(cfx_exec_error(e), "");
    }
    cfx_exec_free(e);
    cfx_module_free(m);
}

/* ---- misuse: one run at a time, cancel before the run, errors that go -------------------- */

/* A kernel that holds its run until the test lets it go: a run stays in flight while the
 * other thread tries its calls. Bounded (10 s), so a run let in beside it cannot hang. */
static atomic_int gate_entered, gate_open;

static int gate(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    atomic_fetch_add(&gate_entered, 1);
    struct timespec ms = {0, 1000 * 1000};
    for (int i = 0; i < 10000 && !atomic_load(&gate_open); i++)
        nanosleep(&ms, NULL);
    *(int32_t *)results[0].data = *(const int32_t *)args[0].data + 1;
    return 0;
}

struct runner {
    cfx_exec *e;
    cfx_status st;
    char error[256];
};

static void *run_on_thread(void *arg)
{
    struct runner *r = arg;
    r->st = cfx_run(r->e);
    snprintf(r->error, sizeof r->error, "%s", cfx_exec_error(r->e));
    return NULL;
}

static void check_one_run_at_a_time(void)
{
    cfx_context *ctx = cfx_context_new();
    char *err = NULL;
    CHECK_INT(cfx_register_kernel(ctx, "gate", "(i32) -> (i32)", gate, NULL, NULL, &err), 0);
    cfx_module *m = compile(ctx, "g.cfx", "graph g(a: i32) -> (b: i32) {\n  b = gate(a)\n}\n");
    cfx_context_free(ctx);
    if (!CHECK(m != NULL))
        return;
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, &err);
    if (!CHECK(e != NULL)) {
        cfx_module_free(m);
        return;
    }
    int32_t a = 41, b = 0;
    CHECK_INT(cfx_bind(e, "a", &a, sizeof a), 0);
    CHECK_INT(cfx_bind(e, "b", &b, sizeof b), 0);
    struct runner r = {e, CFX_ERROR, ""};
    pthread_t th;
    atomic_store(&gate_entered, 0);
    atomic_store(&gate_open, 0);
    CHECK_INT(pthread_create(&th, NULL, run_on_thread, &r), 0);
    struct timespec ms = {0, 1000 * 1000};
    for (int i = 0; i < 10000 && !atomic_load(&gate_entered); i++)
        nanosleep(&ms, NULL);
    CHECK_INT(atomic_load(&gate_entered), 1);
    /* the other thread's run is in the kernel: every call that would share its state is refused */
    const char *flight = "a run is already in flight (an executor runs one run at a time; cfx_wait "
                         "ends one started with cfx_run_async)";
    char want[256];
    CHECK_INT(cfx_run(e), CFX_ERROR);
    snprintf(want, sizeof want, "cfx_run: %s", flight);
    CHECK_STR(cfx_exec_error(e), want);
    CHECK_INT(cfx_run_async(e), -1);
    CHECK_INT(cfx_wait(e), CFX_ERROR);
    int32_t other = 0;
    CHECK_INT(cfx_bind(e, "b", &other, sizeof other), -1);
    snprintf(want, sizeof want, "cfx_bind: %s", flight);
    CHECK_STR(cfx_exec_error(e), want);
    CHECK_INT(cfx_set_trace(e, "never.json"), -1);
    CHECK_INT(atomic_load(&gate_entered), 1); /* no second run reached the kernel */
    atomic_store(&gate_open, 1);
    pthread_join(th, NULL);
    CHECK_INT(r.st, CFX_OK);
    CHECK_INT(b, 42);
    CHECK_STR(r.error, ""); /* the refusals were this thread's, not the running one's */
    CHECK_INT(atomic_load(&gate_entered), 1);
    /* the run has ended: the executor takes runs again, and the refusal is gone */
    a = 1;
    CHECK_INT(cfx_run(e), CFX_OK);
    CHECK_INT(b, 2);
    CHECK_STR(cfx_exec_error(e), "");
    cfx_exec_free(e);
    cfx_module_free(m);
}

static void check_cancel_before_run_and_errors(void)
{
    const char *src = "graph spin(x: i32) -> (i: i32) {\n"
                      "  i = 0\n"
                      "  while x < 1 {\n"
                      "    i = i + 1\n"
                      "  }\n"
                      "}\n"
                      "graph flat(x: i32) -> (y: i32) {\n"
                      "  y = x + 1\n"
                      "}\n";
    cfx_module *m = compile(NULL, "c.cfx", src);
    if (!CHECK(m != NULL))
        return;
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, NULL);
    cfx_exec *f = cfx_exec_new(m, 1, CFX_BACKEND_CPU, NULL);
    if (!CHECK(e && f)) {
        cfx_exec_free(e);
        cfx_exec_free(f);
        cfx_module_free(m);
        return;
    }
    int32_t x = 0, i = -1, y = 0;
    CHECK_INT(cfx_bind(e, "x", &x, 4), 0);
    CHECK_INT(cfx_bind(e, "i", &i, 4), 0);
    /* a cancel before the run is kept for it: the endless loop stops at once */
    cfx_cancel(e);
    CHECK_INT(cfx_run(e), CFX_STOP_CANCELLED);
    CHECK(cfx_exec_iterations(e) <= 1);
    /* ... and only that run: the next one goes to its budget */
    CHECK_INT(cfx_set_max_iters(e, 50), 0);
    CHECK_INT(cfx_run(e), CFX_STOP_LIMIT);
    CHECK_INT(cfx_exec_iterations(e), 50);
    /* a graph without loops ends as usual, and its run takes the cancel with it */
    CHECK_INT(cfx_bind(f, "x", &x, 4), 0);
    CHECK_INT(cfx_bind(f, "y", &y, 4), 0);
    cfx_cancel(f);
    CHECK_INT(cfx_run(f), CFX_OK);
    CHECK_INT(y, 1);
    CHECK_INT(cfx_run(f), CFX_OK);

    /* an error lasts until the next call that succeeds */
    CHECK_INT(cfx_bind(e, "nothere", &x, 4), -1);
    CHECK(cfx_exec_error(e)[0] != '\0');
    CHECK_INT(cfx_bind(e, "x", &x, 4), 0);
    CHECK_STR(cfx_exec_error(e), "");
    CHECK_INT(cfx_set_max_iters(e, -1), -1);
    CHECK(cfx_exec_error(e)[0] != '\0');
    CHECK_INT(cfx_set_max_iters(e, 10), 0);
    CHECK_STR(cfx_exec_error(e), "");
    CHECK_INT(cfx_bind(e, "x", &x, 3), -1);
    CHECK(cfx_exec_error(e)[0] != '\0');
    CHECK_INT(cfx_run(e), CFX_STOP_LIMIT); /* a run that stops is a call that succeeded */
    CHECK_STR(cfx_exec_error(e), "");
    cfx_exec_free(e);
    cfx_exec_free(f);
    cfx_module_free(m);
}

/* An assert message longer than the status line holds is cut and ends in "...". */
static void check_long_assert_message(void)
{
    char src[2048], msg[1001];
    memset(msg, 'm', sizeof msg - 1);
    msg[sizeof msg - 1] = '\0';
    snprintf(src, sizeof src, "graph a(x: i32) -> (y: i32) {\n  assert(x > 0, \"%s\")\n  y = x\n}\n", msg);
    cfx_module *m = compile(NULL, "a.cfx", src);
    if (!CHECK(m != NULL))
        return;
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, NULL);
    int32_t x = 0, y = 0;
    cfx_bind(e, "x", &x, sizeof x);
    cfx_bind(e, "y", &y, sizeof y);
    CHECK_INT(cfx_run(e), CFX_STOP_ASSERT);
    const char *got = cfx_exec_message(e);
    const char *head = "a.cfx:2:3: run stopped: assert: mmm";
    size_t n = strlen(got);
    CHECK(strncmp(got, head, strlen(head)) == 0);
    CHECK(n > 200 && n < sizeof msg);
    CHECK(n > 3 && strcmp(got + n - 4, "m...") == 0);
    cfx_exec_free(e);
    cfx_module_free(m);
}

/* An input with a default may be left unbound on a host run; cfx_input_default says it. */
static void check_defaults(void)
{
    cfx_module *m = compile(NULL, "d.cfx",
                            "graph d(x: i32, k: i32 = 7, v: f64[2] = -0.5) -> (y: i32, w: f64[2]) {\n"
                            "  y = x * k\n  w = v * 2.0\n}\n");
    if (!CHECK(m != NULL))
        return;
    CHECK(cfx_input_default(m, 0, 0) == NULL);
    CHECK_STR(cfx_input_default(m, 0, 1), "7");
    CHECK_STR(cfx_input_default(m, 0, 2), "-0.5");
    CHECK(cfx_input_default(m, 0, 3) == NULL);
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, NULL);
    int32_t x = 3, y = 0, k = 2;
    double w[2] = {0, 0};
    cfx_bind(e, "x", &x, sizeof x);
    cfx_bind(e, "y", &y, sizeof y);
    cfx_bind(e, "w", w, sizeof w);
    CHECK_INT(cfx_run(e), CFX_OK);
    CHECK_INT(y, 21);                        /* 3 * 7 */
    CHECK(w[0] == -1.0 && w[1] == -1.0);     /* the default fills both elements */
    cfx_bind(e, "k", &k, sizeof k);
    CHECK_INT(cfx_run(e), CFX_OK);
    CHECK_INT(y, 6);
    cfx_exec_free(e);
    /* without x the run fails and names x alone */
    e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, NULL);
    cfx_bind(e, "y", &y, sizeof y);
    CHECK_INT(cfx_run(e), CFX_ERROR);
    CHECK_STR(cfx_exec_error(e), "missing input: x: i32");
    cfx_exec_free(e);
    cfx_module_free(m);

    /* a parameter that defaults to None: unbound, the graph sees None; its hidden presence input
     * is no input a caller sees or binds */
    m = compile(NULL, "n.cfx",
                "graph n(x: i32, w: i32 = None) -> (y: i32) {\n"
                "  y = x if w is None else x + w\n}\n");
    if (!CHECK(m != NULL))
        return;
    CHECK_INT(cfx_input_count(m, 0), 2);
    CHECK_STR(cfx_input_default(m, 0, 1), "None");
    e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, NULL);
    int32_t wv = 10, present = 1;
    cfx_bind(e, "x", &x, sizeof x);
    cfx_bind(e, "y", &y, sizeof y);
    CHECK(cfx_bind(e, "present(w)", &present, sizeof present) != 0);
    CHECK_INT(cfx_run(e), CFX_OK);
    CHECK_INT(y, 3);
    cfx_bind(e, "w", &wv, sizeof wv);
    CHECK_INT(cfx_run(e), CFX_OK);
    CHECK_INT(y, 13);
    cfx_exec_free(e);
    cfx_module_free(m);
}

/* cfx_compile_string_constants: a tensor constant and a bool constant bound by the table (the
 * caller's data freed right after the call), beside one with its value in the text; a table entry
 * of another type, one that names nothing declared, one for a constant the text gives a value,
 * and a declaration the table leaves without one: each a diagnostic at its place. By hand, with
 * W = [[1, 2, 3], [4, 5, 6]], x = [1, 10], M = [true, false, true], K = 5:
 * y = x @ W = [41, 52, 63]; n = K + sum of M = 7; z = W[1] where M else 0 = [4, 0, 6]. */
static void check_constants(void)
{
    const char *src = "const W: f32[2, 3]\n"
                      "const M: bool[3]\n"
                      "const K: i64 = 5\n"
                      "graph c(x: f32[2]) -> (y: f32[3], n: i64, z: f32[3]) {\n"
                      "  y = x @ W\n"
                      "  n = K + sum(where(M, 1, 0))\n"
                      "  z = where(M, W[1], 0.0)\n"
                      "}\n";
    float *w = malloc(6 * sizeof *w);
    uint8_t *mask = malloc(3);
    if (!CHECK(w && mask))
        return;
    for (int i = 0; i < 6; i++)
        w[i] = (float)(i + 1);
    mask[0] = 1, mask[1] = 0, mask[2] = 1;
    cfx_constant table[2] = {{"W", {CFX_F32, 2, {2, 3, 0, 0}}, w}, {"M", {CFX_BOOL, 1, {3, 0, 0, 0}}, mask}};
    char *diags = NULL;
    cfx_module *m = cfx_compile_string_constants(NULL, "k.cfx", src, strlen(src), table, 2, &diags);
    free(w);
    free(mask);
    if (!CHECK(m != NULL)) {
        fprintf(stderr, "%s", diags ? diags : "");
        cfx_free(diags);
        return;
    }
    CHECK(diags == NULL);
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, NULL);
    float x[2] = {1, 10}, y[3] = {0, 0, 0}, z[3] = {9, 9, 9};
    int64_t n = 0;
    cfx_bind(e, "x", x, sizeof x);
    cfx_bind(e, "y", y, sizeof y);
    cfx_bind(e, "n", &n, sizeof n);
    cfx_bind(e, "z", z, sizeof z);
    CHECK_INT(cfx_run(e), CFX_OK);
    CHECK(y[0] == 41 && y[1] == 52 && y[2] == 63);
    CHECK_INT(n, 7);
    CHECK(z[0] == 4 && z[1] == 0 && z[2] == 6);
    cfx_exec_free(e);
    cfx_module_free(m);

    float data[6] = {0};
    uint8_t bits[3] = {0};
    /* W as f32[3, 2], and an entry Q the text does not declare */
    cfx_constant wrong[3] = {{"W", {CFX_F32, 2, {3, 2, 0, 0}}, data},
                             {"M", {CFX_BOOL, 1, {3, 0, 0, 0}}, bits},
                             {"Q", {CFX_F32, 0, {0, 0, 0, 0}}, data}};
    diags = NULL;
    CHECK(cfx_compile_string_constants(NULL, "k.cfx", src, strlen(src), wrong, 3, &diags) == NULL);
    CHECK(diags && strstr(diags, "k.cfx:1:7: error: constant 'W' is f32[2, 3], but the compile call's table "
                                 "gives it as f32[3, 2]\n"));
    CHECK(diags && strstr(diags, "k.cfx:1:1: error: the compile call's table gives constant 'Q', which the file "
                                 "does not declare (const Q: TYPE)\n"));
    CHECK(diags && !strstr(diags, "'M'"));
    cfx_free(diags);
    /* no table: W and M have no value; K has one in the text, so the table may not give it */
    diags = NULL;
    CHECK(cfx_compile_string(NULL, "k.cfx", src, strlen(src), &diags) == NULL);
    CHECK(diags && strstr(diags, "k.cfx:1:7: error: constant 'W' has no value: write one (const W: TYPE = VALUE), "
                                 "or give it in the compile call's table (cfx_compile_string_constants)\n"));
    CHECK(diags && strstr(diags, "k.cfx:2:7: error: constant 'M' has no value"));
    cfx_free(diags);
    cfx_constant k[3] = {table[0], table[1], {"K", {CFX_I64, 0, {0, 0, 0, 0}}, &n}};
    k[0].data = data;
    k[1].data = bits;
    diags = NULL;
    CHECK(cfx_compile_string_constants(NULL, "k.cfx", src, strlen(src), k, 3, &diags) == NULL);
    CHECK(diags && strstr(diags, "k.cfx:3:7: error: constant 'K' has a value in the text, and the compile call's "
                                 "table gives it another\n"));
    cfx_free(diags);
}

static double wall_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static const cfx_profile_row *find_row(const cfx_profile_row *rows, int n, cfx_profile_by by, int line,
                                       const char *kind)
{
    for (int i = 0; i < n; i++)
        if (rows[i].by == by && rows[i].line == line && (!kind || strcmp(rows[i].kind, kind) == 0))
            return &rows[i];
    return NULL;
}

/* cfx_set_profile / cfx_profile / cfx_profile_text on the cpu executor. The expected counts
 * are the program's, by hand: with n = 5 the outer loop (line 4) runs 5 times and the inner
 * (line 6) 3 times each, 15; lines 5 and 10 are one record each per outer iteration, lines 7
 * and 8 one each per inner iteration. */
static void check_profile(void)
{
    cfx_module *m = compile(NULL, "prof.cfx",
                            "graph p(n: i32) -> (s: i32) {\n" /* 1 */
                            "  s = 0\n"                         /* 2 */
                            "  i = 0\n"                         /* 3 */
                            "  while i < n {\n"                 /* 4 */
                            "    j = 0\n"                       /* 5 */
                            "    while j < 3 {\n"               /* 6 */
                            "      s = s + j\n"                 /* 7 */
                            "      j = j + 1\n"                 /* 8 */
                            "    }\n"
                            "    i = i + 1\n"                   /* 10 */
                            "  }\n"
                            "}\n");
    if (!CHECK(m != NULL))
        return;
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, NULL);
    int32_t n = 5, s = -1;
    cfx_bind(e, "n", &n, sizeof n);
    cfx_bind(e, "s", &s, sizeof s);
    CHECK_INT(cfx_profile(e, NULL, 0, NULL), -1); /* nothing profiled yet */
    CHECK(cfx_profile_text(e) == NULL);
    CHECK_INT(cfx_set_profile(e, 1), 0);
    double t0 = wall_us();
    CHECK_INT(cfx_run(e), CFX_OK);
    double wall = wall_us() - t0;
    CHECK_INT(s, 15);

    cfx_profile_row rows[64];
    double run_us = -1;
    int nrows = cfx_profile(e, rows, 64, &run_us);
    CHECK(nrows > 0 && nrows <= 64);
    CHECK(run_us > 0 && run_us <= wall);
    static const struct { int line; int64_t count; } by_hand[] = {{2, 1}, {3, 1}, {5, 5}, {7, 15}, {8, 15}, {10, 5}};
    for (size_t k = 0; k < sizeof by_hand / sizeof by_hand[0]; k++) {
        const cfx_profile_row *r = find_row(rows, nrows, CFX_PROFILE_LINE, by_hand[k].line, NULL);
        if (CHECK(r != NULL))
            CHECK_INT(r->count, by_hand[k].count);
    }
    CHECK(find_row(rows, nrows, CFX_PROFILE_LINE, 9, NULL) == NULL); /* a closing brace */
    const cfx_profile_row *outer = find_row(rows, nrows, CFX_PROFILE_LOOP, 4, NULL);
    const cfx_profile_row *inner = find_row(rows, nrows, CFX_PROFILE_LOOP, 6, NULL);
    if (CHECK(outer && inner)) {
        CHECK_INT(outer->count, 5);
        CHECK_INT(inner->count, 15);
        CHECK(inner->total_us <= outer->total_us); /* nested inside */
        CHECK_REAL(outer->mean_us, outer->total_us / 5, 1e-9);
    }
    const cfx_profile_row *ticks = find_row(rows, nrows, CFX_PROFILE_KIND, 0, "TICK");
    if (CHECK(ticks != NULL))
        CHECK_INT(ticks->count, 20); /* one per iteration of either loop */
    /* each view adds up to the run: every record's time is charged to one line and one kind */
    double line_sum = 0, kind_sum = 0, share_sum = 0;
    int last_line = 0;
    for (int i = 0; i < nrows; i++) {
        CHECK(rows[i].total_us >= 0 && rows[i].share >= 0 && rows[i].share <= 1);
        if (rows[i].by == CFX_PROFILE_LINE) {
            CHECK(rows[i].line > last_line); /* ascending, one row per line */
            last_line = rows[i].line;
            line_sum += rows[i].total_us;
            share_sum += rows[i].share;
        } else if (rows[i].by == CFX_PROFILE_KIND) {
            kind_sum += rows[i].total_us;
        }
    }
    CHECK(line_sum <= wall);
    CHECK_REAL(line_sum, run_us, 1e-3 * run_us + 1e-6);
    CHECK_REAL(kind_sum, run_us, 1e-3 * run_us + 1e-6);
    CHECK_REAL(share_sum, 1.0, 1e-3);
    CHECK_INT(cfx_profile(e, rows, 2, NULL), nrows); /* the count, whatever room was given */
    char *text = cfx_profile_text(e);
    CHECK(text && strstr(text, "profile of graph p (prof.cfx) on cpu: ") && strstr(text, "by source line:") &&
          strstr(text, "by record kind:") && strstr(text, "us/iteration"));
    cfx_free(text);

    /* n = 0: neither body runs, so no row for their lines, and the outer loop has 0 iterations */
    n = 0;
    CHECK_INT(cfx_run(e), CFX_OK);
    nrows = cfx_profile(e, rows, 64, NULL);
    CHECK(find_row(rows, nrows, CFX_PROFILE_LINE, 7, NULL) == NULL);
    outer = find_row(rows, nrows, CFX_PROFILE_LOOP, 4, NULL);
    CHECK(outer && outer->count == 0);

    /* off: the next run leaves no profile */
    CHECK_INT(cfx_set_profile(e, 0), 0);
    CHECK_INT(cfx_run(e), CFX_OK);
    CHECK_INT(cfx_profile(e, rows, 64, NULL), -1);
    cfx_exec_free(e);
    cfx_module_free(m);
}

/* cfx_prepare and cfx_exec_graph on the cpu backend: nothing to prepare (a run after it is an
 * ordinary run), and no CUDA graph, which cfx_exec_graph says, naming the backends that make one. */
static void check_prepare_and_graph(void)
{
    const char *src = "graph g(n: i32) -> (s: i32) {\n  s = 0\n  for i in range(0, n) {\n    s = s + i\n  }\n}\n";
    char *err = NULL;
    cfx_module *m = cfx_compile_string(NULL, "prep.cfx", src, strlen(src), &err);
    if (!CHECK(m != NULL))
        return;
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, &err);
    int32_t n = 5, s = -1;
    void *graph = (void *)&n;
    CHECK(e != NULL);
    CHECK_INT(cfx_prepare(e), -1); /* n is not bound */
    CHECK_STR(cfx_exec_error(e), "missing input: n: i32");
    cfx_bind(e, "n", &n, sizeof n);
    cfx_bind(e, "s", &s, sizeof s);
    CHECK_INT(cfx_prepare(e), 0);
    CHECK_STR(cfx_exec_error(e), "");
    CHECK_INT(s, -1); /* prepared, not run */
    CHECK_INT(cfx_exec_graph(e, &graph), -1);
    CHECK(graph == NULL);
    CHECK(strstr(cfx_exec_error(e), "the cpu backend makes no CUDA graph") != NULL);
    CHECK_INT(cfx_exec_graph(e, NULL), -1);
    CHECK_INT(cfx_run(e), CFX_OK);
    CHECK_INT(s, 0 + 1 + 2 + 3 + 4);
    CHECK_INT(cfx_wait(e), CFX_OK);
    cfx_exec_free(e);
    cfx_module_free(m);
    cfx_free(err);
}

/* The counts that let bindings build their names from the library (python/cfx/_lib.py): every
 * value below the count has a name, the count itself has none; names as cfx.h lists them. */
static void check_counts(void)
{
    static const char *const backends[] = {"auto", "cpu", "cuda-host", "cuda-graph", "cuda-persistent"};
    static const char *const statuses[] = {"ok", "assert", "index", "divide", "value", "limit", "cancelled", "error"};
    static const char *const dtypes[] = {"f32", "f64", "i32", "i64", "bool"};
    CHECK_INT(cfx_backend_count(), 5);
    CHECK_INT(cfx_status_count(), 8);
    CHECK_INT(cfx_dtype_count(), 5);
    for (int i = 0; i < 5; i++) {
        cfx_backend b = CFX_BACKEND_AUTO;
        CHECK_STR(cfx_backend_name((cfx_backend)i), backends[i]);
        CHECK_INT(cfx_backend_parse(backends[i], &b), 0);
        CHECK_INT((int)b, i);
        CHECK_STR(cfx_dtype_name((cfx_dtype)i), dtypes[i]);
    }
    for (int i = 0; i < 8; i++)
        CHECK_STR(cfx_status_name((cfx_status)i), statuses[i]);
    CHECK_STR(cfx_backend_name((cfx_backend)cfx_backend_count()), "unknown");
    CHECK_STR(cfx_backend_name((cfx_backend)-1), "unknown");
    CHECK_STR(cfx_status_name((cfx_status)cfx_status_count()), "unknown");
    CHECK_STR(cfx_dtype_name((cfx_dtype)cfx_dtype_count()), "unknown");
    cfx_backend b = CFX_BACKEND_CPU;
    CHECK_INT(cfx_backend_parse("gpu", &b), -1);
    CHECK_INT(cfx_backend_parse(NULL, &b), -1);
    CHECK_INT((int)b, CFX_BACKEND_CPU);
    CHECK_INT(cfx_backend_available(CFX_BACKEND_AUTO, NULL, 0), 1);
    CHECK_INT(cfx_backend_available(CFX_BACKEND_CPU, NULL, 0), 1);
    char why[256] = "x";
    CHECK_INT(cfx_backend_available((cfx_backend)cfx_backend_count(), why, sizeof why), 0);
    CHECK_STR(why, "unknown backend 5");
    char *err = NULL;
    cfx_module *m = compile(NULL, "c.cfx", "graph c(x: i32) -> (y: i32) {\n  y = x\n}\n");
    if (!CHECK(m != NULL))
        return;
    CHECK(cfx_exec_new(m, 0, (cfx_backend)cfx_backend_count(), &err) == NULL);
    CHECK_STR(err ? err : "", "unknown backend 5");
    cfx_free(err);
    cfx_module_free(m);
}

/* cfx_run_bound: buffers by position in one call; NULL entries unbound (a default taken, a
 * result left in the executor's own buffer); nothing stays bound after it, and bindings made by
 * name before are not used. Expected values by hand. */
static void check_run_bound(void)
{
    cfx_module *m = compile(NULL, "rb.cfx",
                            "graph d(x: i32, k: i32 = 7, v: f64[2] = -0.5) -> (y: i32, w: f64[2]) {\n"
                            "  y = x * k\n  w = v * 2.0\n}\n");
    if (!CHECK(m != NULL))
        return;
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, NULL);
    int32_t x = 3, k = 2, y = 0, y_old = -1, x_old = 100;
    double v[2] = {1.5, -4}, w[2] = {0, 0};
    void *in[3] = {&x, &k, v}, *out[2] = {&y, w};
    CHECK_INT(cfx_run_bound(e, in, out, 0, NULL), CFX_OK);
    CHECK_INT(y, 6);                        /* 3 * 2 */
    CHECK(w[0] == 3.0 && w[1] == -8.0);     /* v * 2 */
    CHECK_STR(cfx_exec_error(e), "");
    /* k and v left out: their defaults; w to the executor's buffer (w untouched) */
    void *in2[3] = {&x, NULL, NULL}, *out2[2] = {&y, NULL};
    w[0] = 9;
    CHECK_INT(cfx_run_bound(e, in2, out2, 0, NULL), CFX_OK);
    CHECK_INT(y, 21); /* 3 * 7 */
    CHECK(w[0] == 9.0);
    /* bindings by name are replaced by the call and forgotten after it */
    cfx_bind(e, "x", &x_old, sizeof x_old);
    cfx_bind(e, "y", &y_old, sizeof y_old);
    CHECK_INT(cfx_run_bound(e, in, out, 0, NULL), CFX_OK);
    CHECK_INT(y, 6);
    CHECK_INT(y_old, -1);
    CHECK_INT(cfx_run(e), CFX_ERROR); /* nothing bound after cfx_run_bound */
    CHECK_STR(cfx_exec_error(e), "missing input: x: i32");
    /* an input missing, a NULL array, device memory on cpu */
    CHECK_INT(cfx_run_bound(e, NULL, out, 0, NULL), CFX_ERROR);
    CHECK_STR(cfx_exec_error(e), "missing input: x: i32");
    CHECK_INT(cfx_run_bound(e, in, out, 1, NULL), CFX_ERROR);
    CHECK_STR(cfx_exec_error(e), "cannot bind device memory: this executor runs on cpu");
    CHECK_INT(cfx_run_bound(NULL, in, out, 0, NULL), CFX_ERROR);
    CHECK_INT(cfx_run_bound(e, in, out, 4, NULL), CFX_ERROR);
    CHECK_STR(cfx_exec_error(e), "cfx_run_bound: unknown flags 0x4");
    /* CFX_BOUND_INDIRECT: each entry the address of a pointer to the buffer (an array object's
     * data field), read at the run; a NULL pointer there leaves the entry unbound (k's default) */
    struct { int64_t header; void *data; } ax = {1, &x}, ak = {2, NULL}, av = {3, v}, ay = {4, &y},
                                             aw = {5, w};
    void *ind_in[3] = {&ax.data, &ak.data, &av.data}, *ind_out[2] = {&ay.data, &aw.data};
    x = 4;
    v[0] = 0.25;
    CHECK_INT(cfx_run_bound(e, ind_in, ind_out, CFX_BOUND_INDIRECT, NULL), CFX_OK);
    CHECK_INT(y, 28);                       /* 4 * 7 */
    CHECK(w[0] == 0.5 && w[1] == -8.0);     /* v * 2 */
    x = 3;
    /* a stopped run: status and message as cfx_run's */
    cfx_exec_free(e);
    cfx_module_free(m);
    m = compile(NULL, "rs.cfx", "graph s(i: i32) -> (y: f32) {\n  t = [1.0, 2.0]\n  y = t[i]\n}\n");
    if (!CHECK(m != NULL))
        return;
    e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, NULL);
    int32_t i = 2;
    float fy = 0;
    void *in3[1] = {&i}, *out3[1] = {&fy};
    CHECK_INT(cfx_run_bound(e, in3, out3, 0, NULL), CFX_STOP_INDEX);
    CHECK(strstr(cfx_exec_message(e), "rs.cfx:3:") != NULL);
    i = 1;
    CHECK_INT(cfx_run_bound(e, in3, out3, 0, NULL), CFX_OK);
    CHECK(fy == 2.0f);
    cfx_exec_free(e);
    cfx_module_free(m);
    /* the run's iterations through the last argument: a loop of n trips, by hand */
    m = compile(NULL, "ri.cfx",
                "graph c(n: i32) -> (s: i32) {\n  s = 0\n  i = 0\n  while i < n {\n    s = s + i\n"
                "    i = i + 1\n  }\n}\n");
    if (!CHECK(m != NULL))
        return;
    e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, NULL);
    int32_t n = 5, sum = -1;
    int64_t iters = -1;
    void *in4[1] = {&n}, *out4[1] = {&sum};
    CHECK_INT(cfx_run_bound(e, in4, out4, 0, &iters), CFX_OK);
    CHECK_INT(sum, 10); /* 0 + 1 + 2 + 3 + 4 */
    CHECK(iters == 5);
    CHECK(iters == cfx_exec_iterations(e));
    cfx_exec_free(e);
    cfx_module_free(m);
}

/* cfx_cancel_on_sigint: a SIGINT during a run on the main thread cancels it and still reaches
 * the handler that was installed before; without it, or with SIGINT ignored, the run goes on;
 * the handler before is back after every run. */
static volatile sig_atomic_t sigints_seen;
static void count_sigint(int sig)
{
    (void)sig;
    sigints_seen++;
}

static void *sigint_later(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    kill(getpid(), SIGINT);
    return NULL;
}

/* Runs e (an endless loop with a budget of `budget` iterations) with a SIGINT sent after 50 ms
 * from another thread (the signal may be delivered to either thread). */
static cfx_status run_with_sigint(cfx_exec *e)
{
    pthread_t t;
    if (pthread_create(&t, NULL, sigint_later, NULL) != 0)
        return CFX_ERROR;
    cfx_status st = cfx_run(e);
    pthread_join(t, NULL);
    return st;
}

static void check_cancel_on_sigint(void)
{
    cfx_module *m = compile(NULL, "int.cfx",
                            "graph spin(x: i32) -> (y: i32) {\n  y = x\n  while y >= 0 {\n"
                            "    y = y + 1\n    if y > 1000000 {\n      y = 0\n    }\n  }\n}\n");
    if (!CHECK(m != NULL))
        return;
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, NULL);
    int32_t x = 0, y = 0;
    CHECK_INT(cfx_bind(e, "x", &x, 4), 0);
    CHECK_INT(cfx_bind(e, "y", &y, 4), 0);
    struct sigaction count, before, now;
    memset(&count, 0, sizeof count);
    count.sa_handler = count_sigint;
    sigemptyset(&count.sa_mask);
    sigaction(SIGINT, &count, &before);
    /* on: cancelled, and the application's handler saw the signal too */
    CHECK_INT(cfx_cancel_on_sigint(e, 1), 0);
    CHECK_INT(cfx_set_max_iters(e, INT64_C(1) << 40), 0); /* hours: only the cancel ends it */
    sigints_seen = 0;
    CHECK_INT(run_with_sigint(e), CFX_STOP_CANCELLED);
    CHECK_INT(sigints_seen, 1);
    sigaction(SIGINT, NULL, &now);
    CHECK(now.sa_handler == count_sigint); /* put back */
    /* off: the run is not cancelled (a budget ends it), the handler still counts */
    CHECK_INT(cfx_cancel_on_sigint(e, 0), 0);
    CHECK_INT(cfx_set_max_iters(e, 20000000), 0);
    sigints_seen = 0;
    CHECK_INT(run_with_sigint(e), CFX_STOP_LIMIT);
    CHECK_INT(sigints_seen, 1);
    /* SIGINT ignored: it stays ignored and cancels nothing */
    CHECK_INT(cfx_cancel_on_sigint(e, 1), 0);
    signal(SIGINT, SIG_IGN);
    CHECK_INT(run_with_sigint(e), CFX_STOP_LIMIT);
    sigaction(SIGINT, NULL, &now);
    CHECK(now.sa_handler == SIG_IGN);
    CHECK_INT(cfx_cancel_on_sigint(NULL, 1), -1);
    sigaction(SIGINT, &before, NULL);
    cfx_exec_free(e);
    cfx_module_free(m);
}

int main(void)
{
    check_diagnostics();
    check_queries();
    check_kernels_and_binding();
    check_stops();
    check_cancel_and_budget();
    check_print_and_trace();
    check_long_assert_message();
    check_one_run_at_a_time();
    check_cancel_before_run_and_errors();
    check_defaults();
    check_constants();
    check_profile();
    check_prepare_and_graph();
    check_run_bound();
    check_cancel_on_sigint();
    check_counts();
    return test_finish("test_api");
}
