/* gpu_executors.c: every CUDA executor against the cpu executor, as ggml's test-backend-ops
 * runs every backend against its CPU backend.
 *
 * Runs every .cfx file in graphs/ with the inputs of each of its `# run:` lines (graphs/README.md)
 * and the generated programs of tests/gen_programs.h on each available CUDA backend
 * (cuda-host, cuda-graph, cuda-persistent in both its modes), and requires what the cpu executor gives: the same
 * status, position and stop message, integer and bool results identical, reals within 1e-5
 * relative (`|got - want| <= tol * max(1, |want|)`, or the file's `# tol:`), the same print
 * lines (numbers in them within the same tolerance). Then a loop that both persistent modes run
 * with their L2 window, and again without it (the same bits), and a budget and a cancel from
 * another thread on a long loop. Exits 77 with the reason when no CUDA backend can run here.
 *
 * `gpu_executors FILE.cfx` checks one file; `gpu_executors --seed N` one generated program;
 * `gpu_executors --quick` everything with 12 generated programs instead of 60 (for
 * compute-sanitizer, which runs every kernel many times slower). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cfx.h"
#include "gen_programs.h"
#include "testutil.h"

/* Generated programs per run. On an H100 the whole test took 55 s with 30 of them (and more
 * than 300 s with 300): 60 keeps it near a minute and a half, --quick's 12 under a minute;
 * CFX_GPU_GENERATED=N asks for N (a deep sweep). */
#define GENERATED 60
#define MAX_INPUTS 32
#define DEFAULT_TOL 1e-5

/* The executors under test. `--harness-check` puts the cpu executor alone here, so the whole
 * harness (header parsing, inputs, comparisons, budget and cancel) runs against itself on a
 * machine without a GPU, as a cpu test: a bug in the harness then shows before a GPU session
 * spends its time on it. */
static cfx_backend gpu_backends[] = {CFX_BACKEND_CUDA_HOST, CFX_BACKEND_CUDA_GRAPH,
                                     CFX_BACKEND_CUDA_PERSISTENT, CFX_BACKEND_CUDA_PERSISTENT};
/* cuda-persistent runs twice: interpreting its records, and as the kernel compiled from the
 * graph, which must really be what runs (a silent fallback would test the interpreter twice) */
static const int gpu_modes[] = {-1, -1, CFX_PERSISTENT_INTERP, CFX_PERSISTENT_COMPILED};
static const char *gpu_labels[] = {"cuda-host", "cuda-graph", "cuda-persistent interp",
                                         "cuda-persistent compiled"};
static int NGPU = (int)(sizeof gpu_backends / sizeof gpu_backends[0]);
static int gpu_ok[sizeof gpu_backends / sizeof gpu_backends[0]];

/* ---- one run and what it produced ------------------------------------------------------ */

typedef struct outcome {
    cfx_status status;
    int line, col;
    char message[512];
    char error[512];
    void *results[MAX_INPUTS];
    size_t result_bytes[MAX_INPUTS];
    char *prints; /* every printed line, each ending in '\n' */
    size_t prints_len;
} outcome;

static void collect_print(void *user, const char *line)
{
    outcome *o = (outcome *)user;
    size_t n = strlen(line);
    char *p = (char *)realloc(o->prints, o->prints_len + n + 2);
    if (!p) return;
    memcpy(p + o->prints_len, line, n);
    p[o->prints_len + n] = '\n';
    p[o->prints_len + n + 1] = '\0';
    o->prints = p;
    o->prints_len += n + 1;
}

static void outcome_free(outcome *o)
{
    for (int i = 0; i < MAX_INPUTS; i++) free(o->results[i]);
    free(o->prints);
    memset(o, 0, sizeof *o);
}

/* Runs graph `graph` of m on backend with inputs[i] for input i; fills *o. Returns -1 when the
 * executor could not be made or the run failed with CFX_ERROR (the reason is in o->error). */
/* 0: cuda-persistent runs without its L2 window (CFX_OPTION_L2_WINDOW) */
static int l2_window = 1;

static int run_on(cfx_module *m, int graph, cfx_backend backend, int mode, void *const *inputs,
                  int64_t max_iters, outcome *o)
{
    char *err = NULL;
    int rc = -1;
    memset(o, 0, sizeof *o);
    cfx_exec *e = cfx_exec_new(m, graph, backend, &err);
    if (!e) {
        snprintf(o->error, sizeof o->error, "%s", err ? err : "cfx_exec_new failed");
        cfx_free(err);
        return -1;
    }
    /* the cpu side accumulates as the reference, as the GPU executors do */
    if (backend == CFX_BACKEND_CPU)
        cfx_set_option(e, CFX_OPTION_ACCUMULATE, CFX_ACCUMULATE_F64);
    /* no fallback: the code generator knows every record kind (test_gen checks it) */
    if (mode >= 0 && cfx_set_persistent_mode(e, (cfx_persistent_mode)mode) != mode) {
        snprintf(o->error, sizeof o->error, "the %s mode does not run: %s",
                 mode == CFX_PERSISTENT_COMPILED ? "compiled" : "interpreter", cfx_exec_error(e));
        goto done;
    }
    if (backend == CFX_BACKEND_CUDA_PERSISTENT && !l2_window && cfx_set_option(e, CFX_OPTION_L2_WINDOW, 0) != 0) {
        snprintf(o->error, sizeof o->error, "CFX_OPTION_L2_WINDOW 0: %s", cfx_exec_error(e));
        goto done;
    }
    int nin = cfx_input_count(m, graph), nres = cfx_result_count(m, graph);
    if (nin > MAX_INPUTS || nres > MAX_INPUTS) {
        snprintf(o->error, sizeof o->error, "too many inputs or results for this test");
        goto done;
    }
    for (int i = 0; i < nin; i++) {
        cfx_type t = cfx_input_type(m, graph, i);
        size_t bytes = (size_t)(cfx_type_count(&t) * cfx_dtype_size(t.dtype));
        if (inputs[i] && cfx_bind(e, cfx_input_name(m, graph, i), inputs[i], bytes) != 0) {
            snprintf(o->error, sizeof o->error, "bind %s: %s", cfx_input_name(m, graph, i), cfx_exec_error(e));
            goto done;
        }
    }
    for (int i = 0; i < nres; i++) {
        cfx_type t = cfx_result_type(m, graph, i);
        size_t bytes = (size_t)(cfx_type_count(&t) * cfx_dtype_size(t.dtype));
        o->results[i] = malloc(bytes ? bytes : 1);
        o->result_bytes[i] = bytes;
        if (!o->results[i]) goto done;
        memset(o->results[i], 0xA5, bytes);
        if (cfx_bind(e, cfx_result_name(m, graph, i), o->results[i], bytes) != 0) {
            snprintf(o->error, sizeof o->error, "bind %s: %s", cfx_result_name(m, graph, i), cfx_exec_error(e));
            goto done;
        }
    }
    cfx_set_max_iters(e, max_iters);
    cfx_set_print(e, collect_print, o);
    o->status = cfx_run(e);
    cfx_exec_position(e, &o->line, &o->col);
    snprintf(o->message, sizeof o->message, "%s", cfx_exec_message(e));
    if (o->status == CFX_ERROR) {
        snprintf(o->error, sizeof o->error, "%s", cfx_exec_error(e));
        goto done;
    }
    rc = 0;
done:
    cfx_exec_free(e);
    return rc;
}

/* ---- comparing --------------------------------------------------------------------------- */

static int close_enough(double got, double want, double tol)
{
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabs(got - want) <= tol * fmax(1.0, fabs(want));
}

/* Text equal, except that numbers (as strtod reads them) need only be close. */
static int same_text(const char *a, const char *b, double tol)
{
    while (*a && *b) {
        int num_a = (*a >= '0' && *a <= '9') || ((*a == '-' || *a == '.') && a[1] >= '0' && a[1] <= '9');
        int num_b = (*b >= '0' && *b <= '9') || ((*b == '-' || *b == '.') && b[1] >= '0' && b[1] <= '9');
        if (num_a && num_b) {
            char *ea, *eb;
            double x = strtod(a, &ea), y = strtod(b, &eb);
            if (!close_enough(x, y, tol)) return 0;
            a = ea;
            b = eb;
            continue;
        }
        if (*a != *b) return 0;
        a++;
        b++;
    }
    return *a == *b;
}

/* Compares a backend's outcome with the cpu's; prints what differs under `what`. */
static int same_outcome(cfx_module *m, int graph, const outcome *want, const outcome *got, double tol,
                        const char *what)
{
    int ok = 1;
    if (got->status != want->status || got->line != want->line || got->col != want->col ||
        strcmp(got->message, want->message) != 0) {
        fprintf(stderr, "%s: status %s at %d:%d \"%s\", cpu %s at %d:%d \"%s\"\n", what,
                cfx_status_name(got->status), got->line, got->col, got->message,
                cfx_status_name(want->status), want->line, want->col, want->message);
        ok = 0;
    }
    if (!same_text(got->prints ? got->prints : "", want->prints ? want->prints : "", tol)) {
        fprintf(stderr, "%s: printed\n%s--- cpu printed\n%s---\n", what, got->prints ? got->prints : "",
                want->prints ? want->prints : "");
        ok = 0;
    }
    if (want->status != CFX_OK || got->status != CFX_OK) return ok;
    for (int i = 0; i < cfx_result_count(m, graph); i++) {
        cfx_type t = cfx_result_type(m, graph, i);
        int64_t n = cfx_type_count(&t);
        const void *g = got->results[i], *w = want->results[i];
        for (int64_t k = 0; k < n; k++) {
            int same;
            double gv = 0, wv = 0;
            switch (t.dtype) {
            case CFX_F32: gv = ((const float *)g)[k]; wv = ((const float *)w)[k]; same = close_enough(gv, wv, tol); break;
            case CFX_F64: gv = ((const double *)g)[k]; wv = ((const double *)w)[k]; same = close_enough(gv, wv, tol); break;
            case CFX_I32: gv = ((const int32_t *)g)[k]; wv = ((const int32_t *)w)[k]; same = ((const int32_t *)g)[k] == ((const int32_t *)w)[k]; break;
            case CFX_I64: gv = (double)((const int64_t *)g)[k]; wv = (double)((const int64_t *)w)[k]; same = ((const int64_t *)g)[k] == ((const int64_t *)w)[k]; break;
            case CFX_BOOL:
            default: gv = ((const uint8_t *)g)[k]; wv = ((const uint8_t *)w)[k]; same = gv == wv; break;
            }
            if (!same) {
                fprintf(stderr, "%s: result %s[%lld] = %.17g, cpu %.17g\n", what, cfx_result_name(m, graph, i),
                        (long long)k, gv, wv);
                ok = 0;
                break;
            }
        }
    }
    return ok;
}

/* Runs one set of inputs on the cpu and on every available GPU backend. */
static void compare_all(cfx_module *m, int graph, void *const *inputs, int64_t max_iters, double tol,
                        const char *what)
{
    outcome want;
    char label[600];
    if (run_on(m, graph, CFX_BACKEND_CPU, -1, inputs, max_iters, &want) != 0) {
        fprintf(stderr, "%s: cpu: %s\n", what, want.error);
        CHECK(0);
        outcome_free(&want);
        return;
    }
    for (int b = 0; b < NGPU; b++) {
        outcome got;
        if (!gpu_ok[b]) continue;
        snprintf(label, sizeof label, "%s [%s]", what, gpu_labels[b]);
        if (run_on(m, graph, gpu_backends[b], gpu_modes[b], inputs, max_iters, &got) != 0) {
            fprintf(stderr, "%s: %s\n", label, got.error);
            CHECK(0);
        } else {
            CHECK(same_outcome(m, graph, &want, &got, tol, label));
        }
        outcome_free(&got);
    }
    outcome_free(&want);
}

/* ---- the files in graphs/ ------------------------------------------------------------------------ */

/* One `# run:` line of file `path` (tokens after "run:"). */
static void run_line(cfx_module *m, const char *path, char *line, double tol, int lineno)
{
    char *tokens[64];
    int ntok = 0;
    const char *graph_name = NULL;
    int64_t max_iters = 0;
    void *inputs[MAX_INPUTS] = {0};
    char what[512];

    for (char *t = strtok(line, " \t\r\n"); t && ntok < 64; t = strtok(NULL, " \t\r\n")) tokens[ntok++] = t;
    for (int i = 0; i < ntok; i++) {
        if (strcmp(tokens[i], "--graph") == 0 && i + 1 < ntok) graph_name = tokens[++i];
        else if (strcmp(tokens[i], "--max-iters") == 0 && i + 1 < ntok) max_iters = strtoll(tokens[++i], NULL, 10);
    }
    int graph = cfx_graph_find(m, graph_name);
    snprintf(what, sizeof what, "%s:%d", path, lineno);
    if (!CHECK(graph >= 0)) return;
    int nin = cfx_input_count(m, graph);
    if (!CHECK(nin <= MAX_INPUTS)) return;
    const char *names[MAX_INPUTS], *defaults[MAX_INPUTS];
    cfx_type types[MAX_INPUTS];
    char err[512] = "";
    for (int i = 0; i < nin; i++) {
        names[i] = cfx_input_name(m, graph, i);
        types[i] = cfx_input_type(m, graph, i);
        defaults[i] = cfx_input_default(m, graph, i);
    }
    if (test_run_inputs(tokens, ntok, nin, names, types, defaults, inputs, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", what, err);
        CHECK(0);
        goto done;
    }
    compare_all(m, graph, inputs, max_iters, tol, what);
done:
    for (int i = 0; i < MAX_INPUTS; i++) free(inputs[i]);
}

static void check_file(const char *path)
{
    long len = 0;
    char *text = test_read_file(path, &len);
    char *diags = NULL;
    double tol = DEFAULT_TOL;
    if (!CHECK(text != NULL)) return;
    cfx_module *m = cfx_compile_file(NULL, path, &diags); /* a constant's .npy is beside the file */
    if (!m) { /* a file that must not compile (`# error:`): nothing to run */
        cfx_free(diags);
        free(text);
        return;
    }
    /* `# tol:` first: it applies to the whole file */
    for (char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, "# tol:", 6) == 0) {
            double t = strtod(p + 6, NULL);
            if (t > tol) tol = t;
        }
    int lineno = 0;
    for (char *p = text; p && *p;) {
        char *end = strchr(p, '\n');
        lineno++;
        if (strncmp(p, "# run:", 6) == 0) {
            size_t n = end ? (size_t)(end - p) : strlen(p);
            char *copy = (char *)malloc(n + 1);
            if (copy) {
                memcpy(copy, p, n);
                copy[n] = '\0';
                run_line(m, path, copy + 6, tol, lineno);
                free(copy);
            }
        }
        p = end ? end + 1 : NULL;
    }
    cfx_module_free(m);
    free(text);
}

static void check_graphs_dir(void)
{
    char *paths[512];
    int n = test_graph_files(paths, 512);
    if (!CHECK(n >= 0)) return;
    for (int i = 0; i < n; i++) {
        check_file(paths[i]);
        free(paths[i]);
    }
    printf("graphs: %d files\n", n);
}

/* ---- generated programs ----------------------------------------------------------------- */

static void check_generated(uint64_t seed)
{
    gen_prog *g = (gen_prog *)malloc(sizeof *g);
    gen_inputs in;
    char *src, *diags = NULL, what[64];
    if (!CHECK(g != NULL)) return;
    gen_make(g, seed);
    src = gen_text(g);
    gen_inputs_make(seed, &in);
    snprintf(what, sizeof what, "generated seed %llu", (unsigned long long)seed);
    cfx_module *m = src ? cfx_compile_string(NULL, "gen.cfx", src, strlen(src), &diags) : NULL;
    if (!m) {
        fprintf(stderr, "%s does not compile:\n%s", what, diags ? diags : "");
        CHECK(0);
    } else {
        /* GEN_SIGNATURE's inputs in order: a b n x v w */
        void *inputs[6] = {&in.a, &in.b, &in.n, &in.x, in.v, in.w};
        int64_t budget = seed % 5 == 4 ? (int64_t)(1 + seed % 7) : 0;
        compare_all(m, 0, inputs, budget, DEFAULT_TOL, what);
    }
    cfx_module_free(m);
    cfx_free(diags);
    free(src);
    free(g);
}

/* ---- budget and cancel on a long loop --------------------------------------------------- */

/* ---- the L2 window --------------------------------------------------------------------------- */

/* Power iteration on a 9 MiB matrix: the loop reads it whole every iteration, so both modes of
 * cuda-persistent keep it in L2 (sched_l2_keep). Against the cpu, then each persistent mode
 * without the window: the window changes where lines live, never a bit of the results. */
static const char *l2_loop =
    "graph l2(a: f32[1536, 1536], v0: f32[1536], n: i32) -> (v: f32[1536]) {\n"
    "  v = v0\n  i = 0\n  while i < n {\n    w = a @ v\n    v = w / norm(w)\n    i = i + 1\n  }\n}\n";

static void check_l2_window(void)
{
    enum { N = 1536 };
    char *diags = NULL;
    float *a = malloc(sizeof(float) * N * N), v0[N];
    int32_t n = 12;
    uint32_t x = 12345;
    cfx_module *m = cfx_compile_string(NULL, "l2.cfx", l2_loop, strlen(l2_loop), &diags);
    if (!CHECK(m != NULL && a != NULL)) goto done;
    for (int64_t k = 0; k < (int64_t)N * N; k++) {
        x = x * 1664525u + 1013904223u;
        a[k] = (float)((x >> 8) & 0xffff) / 65536.0f - 0.5f;
    }
    for (int k = 0; k < N; k++) v0[k] = 1.0f;
    void *inputs[3] = {a, v0, &n};
    compare_all(m, 0, inputs, 0, DEFAULT_TOL, "l2.cfx");
    for (int b = 0; b < NGPU; b++) {
        outcome with, without;
        if (!gpu_ok[b] || gpu_backends[b] != CFX_BACKEND_CUDA_PERSISTENT) continue;
        int rw = run_on(m, 0, gpu_backends[b], gpu_modes[b], inputs, 0, &with);
        l2_window = 0;
        int ro = run_on(m, 0, gpu_backends[b], gpu_modes[b], inputs, 0, &without);
        l2_window = 1;
        if (CHECK_INT(rw, 0) && CHECK_INT(ro, 0) && CHECK_INT(without.status, with.status) &&
            !CHECK(memcmp(with.results[0], without.results[0], sizeof(float) * N) == 0))
            fprintf(stderr, "l2.cfx [%s]: results differ without the L2 window\n", gpu_labels[b]);
        outcome_free(&with);
        outcome_free(&without);
    }
done:
    cfx_module_free(m);
    cfx_free(diags);
    free(a);
}

static const char *long_loop =
    "graph spin(n: i32) -> (i: i32) {\n"
    "  i = 0\n"
    "  while i < n {\n"
    "    i = i + 1\n"
    "  }\n"
    "}\n";

typedef struct canceller {
    cfx_exec *e;
    int delay_ms;
} canceller;

static void *cancel_later(void *arg)
{
    canceller *c = (canceller *)arg;
    struct timespec ts = {c->delay_ms / 1000, (long)(c->delay_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    cfx_cancel(c->e);
    return NULL;
}

static void check_budget_and_cancel(cfx_backend backend, int mode)
{
    char *diags = NULL, *err = NULL;
    int32_t n = 2000000000, i = -1;
    cfx_module *m = cfx_compile_string(NULL, "spin.cfx", long_loop, strlen(long_loop), &diags);
    if (!CHECK(m != NULL)) goto done;
    cfx_exec *e = cfx_exec_new(m, 0, backend, &err);
    if (!CHECK(e != NULL)) {
        fprintf(stderr, "%s: %s\n", cfx_backend_name(backend), err ? err : "");
        goto done;
    }
    if (mode >= 0) CHECK_INT(cfx_set_persistent_mode(e, (cfx_persistent_mode)mode), mode);
    if (backend == CFX_BACKEND_CUDA_PERSISTENT) {
        /* the options' values are checked; a good one is taken */
        CHECK_INT(cfx_set_option(e, CFX_OPTION_MICROOPS, 2), -1);
        CHECK(strstr(cfx_exec_error(e), "takes 0 or 1, got 2") != NULL);
        CHECK_INT(cfx_set_option(e, CFX_OPTION_LAUNCH_PRODUCT_MIN, -2), -1);
        CHECK_INT(cfx_set_option(e, (cfx_option)99, 0), -1);
        CHECK(strstr(cfx_exec_error(e), "unknown option 99") != NULL);
        CHECK_INT(cfx_set_option(e, CFX_OPTION_LAUNCH_PRODUCT_MIN, -1), 0);
        CHECK_INT(cfx_set_option(e, CFX_OPTION_L2_WINDOW, 3), -1);
        CHECK_INT(cfx_set_option(e, CFX_OPTION_L2_WINDOW, 1), 0);
    }
    CHECK(cfx_bind(e, "n", &n, sizeof n) == 0);
    CHECK(cfx_bind(e, "i", &i, sizeof i) == 0);
    /* the path the executor takes: never empty; the backend's name where it says no more
     * (cpu, cuda-host); cuda-persistent names one of its two paths */
    {
        const char *detail = cfx_exec_backend_detail(e);
        CHECK(detail != NULL && detail[0] != '\0');
        if (backend == CFX_BACKEND_CPU || backend == CFX_BACKEND_CUDA_HOST)
            CHECK_STR(detail, cfx_backend_name(backend));
        /* cuda-persistent names its mode first: the compiled kernel, or the interpreter (as
         * asked, or why it runs instead) */
        if (backend == CFX_BACKEND_CUDA_PERSISTENT) {
            CHECK(strncmp(detail, "compiled kernel", 15) == 0 || strncmp(detail, "interpreter", 11) == 0);
            if (mode == CFX_PERSISTENT_INTERP)
                CHECK(strncmp(detail, "interpreter, as asked", 21) == 0);
        }
        printf("%s: %s\n", cfx_backend_name(backend), detail);
    }
    /* the budget: 100 iterations run, the 101st stops the run before its body, and no result
     * is written */
    cfx_set_max_iters(e, 100);
    CHECK_INT(cfx_run(e), CFX_STOP_LIMIT);
    CHECK_INT(cfx_exec_iterations(e), 100);
    CHECK_INT(i, -1);
    /* once the interpreter has run, the detail also names its path */
    if (backend == CFX_BACKEND_CUDA_PERSISTENT && mode == CFX_PERSISTENT_INTERP) {
        const char *detail = cfx_exec_backend_detail(e);
        CHECK(strstr(detail, "; device graph launch") != NULL || strstr(detail, "; pause and relaunch") != NULL);
        printf("%s after a run: %s\n", cfx_backend_name(backend), detail);
    }
    /* a cancel from another thread stops a loop that would run for a very long time */
    cfx_set_max_iters(e, 0);
    canceller c = {e, 200};
    pthread_t th;
    if (CHECK(pthread_create(&th, NULL, cancel_later, &c) == 0)) {
        CHECK_INT(cfx_run(e), CFX_STOP_CANCELLED);
        pthread_join(th, NULL);
        CHECK_INT(i, -1);
    }
    /* and the executor runs to the end afterwards */
    n = 50;
    CHECK_INT(cfx_run(e), CFX_OK);
    CHECK_INT(i, 50);
    CHECK_INT(cfx_exec_iterations(e), 50); /* one per body entered; the failing test is free */
    /* a budget of exactly the 50 iterations is enough, one less is not */
    i = -1;
    cfx_set_max_iters(e, 50);
    CHECK_INT(cfx_run(e), CFX_OK);
    CHECK_INT(i, 50);
    CHECK_INT(cfx_exec_iterations(e), 50);
    i = -1;
    cfx_set_max_iters(e, 49);
    CHECK_INT(cfx_run(e), CFX_STOP_LIMIT);
    CHECK_INT(cfx_exec_iterations(e), 49);
    CHECK_INT(i, -1);
    cfx_set_max_iters(e, 0);
    /* asynchronously: the status and the results are there after cfx_wait */
    n = 70;
    i = -1;
    if (CHECK(cfx_run_async(e) == 0)) {
        CHECK_INT(cfx_wait(e), CFX_OK);
        CHECK_INT(i, 70);
    }
    /* the profile: the loop's row counts its 70 iterations (by hand; the compiled kernel stamps
     * only one in 64 of this loop's, and counts them all), and the lines add up to no more than
     * the run; then a run without it still gives the results (cuda-graph builds again) */
    i = -1;
    if (CHECK_INT(cfx_set_profile(e, 1), 0)) {
        cfx_profile_row rows[64];
        double run_us = 0, sum = 0;
        int loops = 0;
        CHECK_INT(cfx_run(e), CFX_OK);
        CHECK_INT(i, 70);
        int nrows = cfx_profile(e, rows, 64, &run_us);
        CHECK(nrows > 0 && nrows <= 64 && run_us > 0);
        for (int k = 0; k < nrows && k < 64; k++) {
            if (rows[k].by == CFX_PROFILE_LOOP) {
                loops++;
                CHECK_INT(rows[k].count, 70);
            }
            if (rows[k].by == CFX_PROFILE_LINE)
                sum += rows[k].total_us;
        }
        CHECK_INT(loops, 1);
        if (!CHECK(sum > 0 && sum <= run_us * 1.0001))
            fprintf(stderr, "%s: profile lines %.3f us against the run's %.3f us\n", cfx_backend_name(backend), sum,
                    run_us);
        CHECK_INT(cfx_set_profile(e, 0), 0);
        i = -1;
        CHECK_INT(cfx_run(e), CFX_OK);
        CHECK_INT(i, 70);
    }
    cfx_exec_free(e);
done:
    cfx_module_free(m);
    cfx_free(diags);
    cfx_free(err);
}

int main(int argc, char **argv)
{
    char why[256];
    int any = 0;
    int generated = GENERATED;
    const char *deep = getenv("CFX_GPU_GENERATED");
    if (deep && atoi(deep) > 0)
        generated = atoi(deep);
    if (argc > 1 && strcmp(argv[1], "--quick") == 0) {
        generated = GENERATED / 5;
        argc = 1;
    }
    if (argc > 1 && strcmp(argv[1], "--harness-check") == 0) {
        gpu_backends[0] = CFX_BACKEND_CPU;
        gpu_labels[0] = "cpu";
        NGPU = 1;
        argc = 1;
    }
    for (int b = 0; b < NGPU; b++) {
        why[0] = '\0';
        gpu_ok[b] = cfx_backend_available(gpu_backends[b], why, sizeof why);
        if (gpu_ok[b]) any = 1;
        else printf("%s: not available: %s\n", gpu_labels[b], why);
    }
    if (!any) {
        printf("skipped: no CUDA backend can run here (%s)\n", why);
        return 77;
    }
    if (argc > 2 && strcmp(argv[1], "--seed") == 0) {
        check_generated(strtoull(argv[2], NULL, 10));
        return test_finish("gpu_executors");
    }
    if (argc > 1) {
        check_file(argv[1]);
        return test_finish("gpu_executors");
    }
    check_graphs_dir();
    for (uint64_t seed = 0; seed < (uint64_t)generated; seed++) check_generated(seed);
    printf("generated: %d programs\n", generated);
    check_l2_window();
    for (int b = 0; b < NGPU; b++)
        if (gpu_ok[b]) check_budget_and_cancel(gpu_backends[b], gpu_modes[b]);
    return test_finish("gpu_executors");
}
