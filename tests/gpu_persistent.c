/* gpu_persistent.c: the cuda-persistent executor against the cpu executor, through the public
 * API, in both of its modes (the interpreter, then the compiled kernel). Each program runs on both with the same inputs; the status, the stopping position,
 * the iteration count and the printed lines must be the same, integer and bool results
 * identical and real results within 1e-5 relative. The programs are chosen to reach every
 * path of the scheduler: scalar loops on one block, big vectors split across blocks with
 * cross-block reads and split reductions, switch, row reads and writes, matmul, every stop,
 * the budget, a cancel from another thread, an asynchronous run, and a trace. Then what
 * device graph launch adds, on both paths (device graph launch where the executor takes it,
 * and pause and relaunch forced with cfx_set_option's CFX_OPTION_DEVICE_LAUNCH): a CALL in a loop of
 * 10,000 iterations, a run that needs no host work between cfx_run_async and cfx_wait, and a
 * 2048-cube product in a loop launched as a cuBLAS graph. And the same CALL on cuda-host and
 * cuda-graph, whose cuda_fn calls differ (every CALL, or once at the capture). In both modes,
 * the compiled kernel resumes after each launch-ending record. And kernels registered by their
 * source, which the compiled kernel runs inline and the interpreter launches.
 * Exits 77 (skipped) where there is no device. `--quick`: fewer iterations where a test
 * only needs many (for compute-sanitizer).
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cfx.h"
#include "testutil.h"

/* ==== printed lines ======================================================================== */
typedef struct lines {
    char *text;
    size_t len, cap;
    int n;
} lines;

static void on_line(void *user, const char *line)
{
    lines *l = (lines *)user;
    size_t add = strlen(line) + 1;
    if (l->len + add + 1 > l->cap) {
        size_t cap = (l->cap + add + 1) * 2;
        char *t = (char *)realloc(l->text, cap);
        if (!t)
            return;
        l->text = t;
        l->cap = cap;
    }
    memcpy(l->text + l->len, line, add - 1);
    l->text[l->len + add - 1] = '\n';
    l->len += add;
    l->text[l->len] = '\0';
    l->n++;
}

/* ==== inputs ================================================================================ */

/* Deterministic inputs: reals in [-1, 1), integers in [1, 10) (no zero divisors unless asked),
 * bools alternating. `overrides` is "name=value name=value": every element of that input
 * gets the value. */
static void fill_input(const char *name, cfx_type t, void *data, const char *overrides, uint64_t seed)
{
    int64_t n = cfx_type_count(&t);
    double forced = 0.0;
    int have = 0;
    size_t nl = strlen(name);
    for (const char *p = overrides; p && *p;) {
        while (*p == ' ')
            p++;
        if (strncmp(p, name, nl) == 0 && p[nl] == '=') {
            forced = strtod(p + nl + 1, NULL);
            have = 1;
        }
        while (*p && *p != ' ')
            p++;
    }
    for (size_t i = 0; i < nl; i++)
        seed = seed * 131 + (unsigned char)name[i];
    for (int64_t e = 0; e < n; e++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(seed >> 11) / 9007199254740992.0;
        double real = have ? forced : 2.0 * u - 1.0;
        int64_t integer = have ? (int64_t)forced : 1 + (int64_t)(u * 9.0);
        switch (t.dtype) {
        case CFX_F32: ((float *)data)[e] = (float)real; break;
        case CFX_F64: ((double *)data)[e] = real; break;
        case CFX_I32: ((int32_t *)data)[e] = (int32_t)integer; break;
        case CFX_I64: ((int64_t *)data)[e] = integer; break;
        case CFX_BOOL: ((uint8_t *)data)[e] = (uint8_t)(have ? forced != 0 : (e & 1)); break;
        }
    }
}

/* ==== one side of a comparison ============================================================= */
typedef struct side {
    cfx_exec *e;
    void *in[16];
    void *out[16];
    lines printed;
    cfx_status status;
    int line, col;
    int64_t iterations;
} side;

/* The mode every cuda-persistent executor here runs in: main runs everything in both. The
 * compiled mode runs graphs that call application kernels too, and must never fall back. */
static cfx_persistent_mode mode = CFX_PERSISTENT_INTERP;

static void set_mode(cfx_exec *e)
{
    int got = cfx_set_persistent_mode(e, mode);
    if (got != (int)mode) {
        fprintf(stderr, "the %s mode does not run: %s\n",
                mode == CFX_PERSISTENT_INTERP ? "interpreter" : "compiled", cfx_exec_error(e));
        CHECK(0);
    }
}

static int side_start(side *s, cfx_module *m, int g, cfx_backend b, const char *overrides,
                      int64_t max_iters)
{
    char *err = NULL;
    memset(s, 0, sizeof *s);
    s->e = cfx_exec_new(m, g, b, &err);
    if (!s->e) {
        fprintf(stderr, "cfx_exec_new(%s): %s\n", cfx_backend_name(b), err ? err : "?");
        cfx_free(err);
        return -1;
    }
    if (b == CFX_BACKEND_CUDA_PERSISTENT)
        set_mode(s->e);
    if (b == CFX_BACKEND_CPU) /* the reference's accumulation, as the GPU executors' */
        cfx_set_option(s->e, CFX_OPTION_ACCUMULATE, CFX_ACCUMULATE_F64);
    for (int i = 0; i < cfx_input_count(m, g) && i < 16; i++) {
        cfx_type t = cfx_input_type(m, g, i);
        size_t bytes = (size_t)cfx_type_count(&t) * (size_t)cfx_dtype_size(t.dtype);
        s->in[i] = calloc(bytes + 1, 1);
        fill_input(cfx_input_name(m, g, i), t, s->in[i], overrides, 12345);
        if (cfx_bind(s->e, cfx_input_name(m, g, i), s->in[i], bytes) != 0) {
            fprintf(stderr, "bind %s: %s\n", cfx_input_name(m, g, i), cfx_exec_error(s->e));
            return -1;
        }
    }
    for (int i = 0; i < cfx_result_count(m, g) && i < 16; i++) {
        cfx_type t = cfx_result_type(m, g, i);
        size_t bytes = (size_t)cfx_type_count(&t) * (size_t)cfx_dtype_size(t.dtype);
        s->out[i] = calloc(bytes + 1, 1);
        if (cfx_bind(s->e, cfx_result_name(m, g, i), s->out[i], bytes) != 0) {
            fprintf(stderr, "bind %s: %s\n", cfx_result_name(m, g, i), cfx_exec_error(s->e));
            return -1;
        }
    }
    cfx_set_print(s->e, on_line, &s->printed);
    cfx_set_max_iters(s->e, max_iters);
    return 0;
}

static void side_done(side *s)
{
    s->status = cfx_exec_status(s->e);
    cfx_exec_position(s->e, &s->line, &s->col);
    s->iterations = cfx_exec_iterations(s->e);
}

static void side_free(side *s)
{
    for (int i = 0; i < 16; i++) {
        free(s->in[i]);
        free(s->out[i]);
    }
    free(s->printed.text);
    cfx_exec_free(s->e);
}

/* Results of both sides: integers and bools identical, reals within 1e-5 relative. */
static void compare_results(const char *label, cfx_module *m, int g, const side *a, const side *b)
{
    for (int i = 0; i < cfx_result_count(m, g) && i < 16; i++) {
        cfx_type t = cfx_result_type(m, g, i);
        int64_t n = cfx_type_count(&t);
        int64_t bad = 0, first = -1;
        for (int64_t e = 0; e < n; e++) {
            int same;
            switch (t.dtype) {
            case CFX_F32: {
                double x = ((float *)a->out[i])[e], y = ((float *)b->out[i])[e];
                same = (isnan(x) && isnan(y)) || x == y || fabs(x - y) <= 1e-5 * fmax(fabs(x), fabs(y));
                break;
            }
            case CFX_F64: {
                double x = ((double *)a->out[i])[e], y = ((double *)b->out[i])[e];
                same = (isnan(x) && isnan(y)) || x == y || fabs(x - y) <= 1e-5 * fmax(fabs(x), fabs(y));
                break;
            }
            case CFX_I32: same = ((int32_t *)a->out[i])[e] == ((int32_t *)b->out[i])[e]; break;
            case CFX_I64: same = ((int64_t *)a->out[i])[e] == ((int64_t *)b->out[i])[e]; break;
            case CFX_BOOL:
            default: same = ((uint8_t *)a->out[i])[e] == ((uint8_t *)b->out[i])[e]; break;
            }
            if (!same) {
                bad++;
                if (first < 0)
                    first = e;
            }
        }
        if (bad)
            fprintf(stderr, "%s: result '%s' differs in %lld of %lld elements (first at %lld)\n", label,
                    cfx_result_name(m, g, i), (long long)bad, (long long)n, (long long)first);
        CHECK_INT(bad, 0);
    }
}

/* Runs graph `graph` of `src` on cpu and cuda-persistent and compares everything; `want` is
 * the status the cpu run must have (so the comparison is not vacuous). */
static void compare(const char *label, const char *src, const char *graph, const char *overrides,
                    int64_t max_iters, cfx_status want, int async)
{
    char *diag = NULL;
    cfx_module *m = cfx_compile_string(NULL, "test.cfx", src, strlen(src), &diag);
    if (!m) {
        fprintf(stderr, "%s: does not compile:\n%s\n", label, diag ? diag : "?");
        cfx_free(diag);
        CHECK(m != NULL);
        return;
    }
    int g = cfx_graph_find(m, graph);
    CHECK(g >= 0);
    side cpu, gpu;
    if (side_start(&cpu, m, g, CFX_BACKEND_CPU, overrides, max_iters) != 0 ||
        side_start(&gpu, m, g, CFX_BACKEND_CUDA_PERSISTENT, overrides, max_iters) != 0) {
        CHECK(0);
        cfx_module_free(m);
        return;
    }
    cfx_run(cpu.e);
    if (async) {
        CHECK_INT(cfx_run_async(gpu.e), 0);
        cfx_wait(gpu.e);
    } else {
        cfx_run(gpu.e);
    }
    side_done(&cpu);
    side_done(&gpu);
    if (cpu.status != gpu.status || cpu.status != want)
        fprintf(stderr, "%s: cpu %s (%s), cuda-persistent %s (%s), want %s\n", label,
                cfx_status_name(cpu.status), cfx_exec_message(cpu.e), cfx_status_name(gpu.status),
                cfx_exec_message(gpu.e), cfx_status_name(want));
    CHECK_INT(cpu.status, want);
    CHECK_INT(gpu.status, cpu.status);
    CHECK_INT(gpu.line, cpu.line);
    CHECK_INT(gpu.col, cpu.col);
    CHECK_STR(cfx_exec_message(gpu.e), cfx_exec_message(cpu.e));
    CHECK_INT(gpu.iterations, cpu.iterations);
    CHECK_INT(gpu.printed.n, cpu.printed.n);
    CHECK_STR(gpu.printed.text ? gpu.printed.text : "", cpu.printed.text ? cpu.printed.text : "");
    if (cpu.status == CFX_OK && gpu.status == CFX_OK)
        compare_results(label, m, g, &cpu, &gpu);
    side_free(&cpu);
    side_free(&gpu);
    cfx_module_free(m);
}

/* ==== the programs ========================================================================= */

/* MindSpore's IfInWhileNet: scalars only, so the loop runs on one block. */
static const char *if_in_while =
    "graph if_in_while(x: i32, y: i32, i: i32) -> (out: i32) {\n"
    "  out = x\n"
    "  while i < 3 {\n"
    "    if x + i < y {\n"
    "      out = out + x\n"
    "    } else {\n"
    "      out = out + y\n"
    "    }\n"
    "    out = out + 1\n"
    "    i = i + 1\n"
    "  }\n"
    "}\n";

/* Big vectors: split elementwise work, split reductions deciding a branch every iteration. */
static const char *vectors =
    "graph vectors(x: f32[100000], n: i32) -> (s: f32, m: f32, am: i32, nz: bool, y: f32[100000]) {\n"
    "  y = x\n"
    "  i = 0\n"
    "  while i < n {\n"
    "    y = y * 0.5 + 1.0\n"
    "    if sum(y) > 150000.0 {\n"
    "      y = y - 0.25\n"
    "    }\n"
    "    i = i + 1\n"
    "  }\n"
    "  s = sum(y)\n"
    "  m = max(y)\n"
    "  am = argmax(y)\n"
    "  nz = all(y > 0.0)\n"
    "}\n";

/* A small loop (one block) with prints, integer rules and a switch. */
static const char *small =
    "graph small(v: i32[16], k: i32) -> (t: i32, w: i32[16], z: i64) {\n"
    "  w = v\n"
    "  t = 0\n"
    "  z = cast(0, i64)\n"
    "  for j in range(0, k) {\n"
    "    w = w * 3 % 7 + j\n"
    "    t = t + sum(w)\n"
    "    switch j % 3 {\n"
    "      case 0 { z = z + cast(t, i64) }\n"
    "      case 1 { z = z - 1 }\n"
    "      default { print(w, \"w\") }\n"
    "    }\n"
    "  }\n"
    "}\n";

/* Rows of a big matrix read in a loop (cross-block reads), a row written back. */
static const char *rows =
    "graph rows(x: f32[64, 512], n: i32) -> (acc: f32[512], best: i32, x2: f32[64, 512]) {\n"
    "  acc = x[0]\n"
    "  best = 0\n"
    "  x2 = x\n"
    "  for i in range(1, n) {\n"
    "    acc = acc + x[i % 64] * 0.5\n"
    "    if sum(acc) > 3.0 {\n"
    "      best = i\n"
    "    }\n"
    "    x2[(i * 7) % 64] = acc\n"
    "  }\n"
    "}\n";

/* Products, inline: real, integer, matrix-vector, and a transpose. */
static const char *products =
    "graph products(a: f32[40, 30], b: f32[30, 20], p: i32[9, 7], q: i32[7, 5], v: f64[30],\n"
    "               w: f64[33, 30]) -> (c: f32[40, 20], r: i32[9, 5], wv: f64[33], t: f32[20, 40],\n"
    "               d: f64) {\n"
    "  c = a @ b\n"
    "  r = p @ q\n"
    "  wv = w @ v\n"
    "  t = transpose(c)\n"
    "  d = dot(v, v)\n"
    "}\n";

/* Every stop a run can raise. */
static const char *stops =
    "graph stops(x: f32[8], k: i32, d: i32[5000], n: i32) -> (y: f32, q: i32[5000], c: i32) {\n"
    "  c = 0\n"
    "  while c < n {\n"
    "    c = c + 1\n"
    "  }\n"
    "  y = x[k]\n"
    "  q = d // d\n"
    "  assert(y > -2.0, \"y is too small\")\n"
    "  for s in range(0, 3, k - 1) {\n"
    "    c = c + s\n"
    "  }\n"
    "}\n";

/* A loop that runs until it is cancelled or its budget is spent. */
static const char *spin =
    "graph spin(n: i64, v: f32[20000]) -> (c: i64, s: f32) {\n"
    "  c = cast(0, i64)\n"
    "  s = 0.0\n"
    "  while c < n {\n"
    "    c = c + 1\n"
    "    s = s + sum(v)\n"
    "  }\n"
    "}\n";

/* ==== cancel from another thread ============================================================ */
typedef struct canceller {
    cfx_exec *e;
    int ms;
} canceller;

static void *cancel_later(void *arg)
{
    canceller *c = (canceller *)arg;
    struct timespec ts = {c->ms / 1000, (long)(c->ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    cfx_cancel(c->e);
    return NULL;
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_cancel(void)
{
    char *diag = NULL;
    cfx_module *m = cfx_compile_string(NULL, "spin.cfx", spin, strlen(spin), &diag);
    CHECK(m != NULL);
    if (!m) {
        cfx_free(diag);
        return;
    }
    side gpu;
    if (side_start(&gpu, m, 0, CFX_BACKEND_CUDA_PERSISTENT, "n=4000000000000", 0) != 0) {
        CHECK(0);
        cfx_module_free(m);
        return;
    }
    canceller c = {gpu.e, 200};
    pthread_t th;
    pthread_create(&th, NULL, cancel_later, &c);
    double t0 = seconds();
    cfx_status st = cfx_run(gpu.e);
    double dt = seconds() - t0;
    pthread_join(th, NULL);
    CHECK_INT(st, CFX_STOP_CANCELLED);
    CHECK(dt < 5.0); /* noticed well within seconds of the cancel at 0.2 s */
    CHECK(cfx_exec_iterations(gpu.e) > 0);
    /* the interpreter's hang report: every block said where it stood before the cancel */
    if (mode == CFX_PERSISTENT_INTERP)
        CHECK(strstr(cfx_exec_hang_report(gpu.e), "block 0: at ") != NULL);
    side_free(&gpu);
    cfx_module_free(m);
}

/* 1 if the executor runs device graph launch (its detail says which path it takes, in either
 * mode). */
static int device_launch(const cfx_exec *e)
{
    return strstr(cfx_exec_backend_detail(e), "device graph launch") != NULL;
}

static void test_trace(void)
{
    char *diag = NULL;
    char path[] = "/tmp/gpu_persistent_trace_XXXXXX";
    int fd = mkstemp(path);
    cfx_module *m = cfx_compile_string(NULL, "iw.cfx", if_in_while, strlen(if_in_while), &diag);
    CHECK(m != NULL && fd >= 0);
    if (!m || fd < 0) {
        cfx_free(diag);
        return;
    }
    side gpu;
    if (side_start(&gpu, m, 0, CFX_BACKEND_CUDA_PERSISTENT, "x=0 y=1 i=0", 0) == 0) {
        CHECK_INT(cfx_set_trace(gpu.e, path), 0);
        CHECK_INT(cfx_run(gpu.e), CFX_OK);
        CHECK_INT(*(int32_t *)gpu.out[0], 5);
        cfx_set_trace(gpu.e, NULL);
        long len = 0;
        char *text = test_read_file(path, &len);
        CHECK(text != NULL);
        if (text) {
            CHECK(strncmp(text, "{\"traceEvents\":[", 16) == 0);
            CHECK(strstr(text, "\"ph\":\"X\"") != NULL);
            CHECK(strstr(text, "\"tid\":0") != NULL);
            CHECK(strstr(text, "cuda-persistent") != NULL);
            if (mode == CFX_PERSISTENT_INTERP) { /* an event per record and block, the loop as micro-ops */
                CHECK(strstr(text, "\"micro-ops") != NULL);
                /* on the path an untraced run takes: device graph launch where the executor has it */
                /* the host's phases on their own track, moved onto the device's clock */
                CHECK(strstr(text, "\"args\":{\"name\":\"host\"}") && strstr(text, "\"host_clock_offset_ns\":") &&
                      strstr(text, "\"name\":\"copy results\""));
                if (device_launch(gpu.e))
                    CHECK(strstr(text, "\"path\":\"device graph launch\"") != NULL);
                else
                    CHECK(strstr(text, "\"path\":\"pause and relaunch\"") != NULL);
            }
            else /* how the kernel was built, and the host's phases on the blocks' clock */
                CHECK(strstr(text, "\"mode\":\"compiled\"") && strstr(text, "\"compile_ms\":") &&
                      strstr(text, "\"host_clock_offset_ns\":") && strstr(text, "\"name\":\"copy results\"") &&
                      strstr(text, "\"name\":\"wait for the launch\""));
            free(text);
        }
        /* the profile, from block 0's stamps (the interpreter's at each record, the compiled
         * kernel's at each phase and iteration), where the loop's 3 iterations (by hand: i = 0,
         * 1, 2) are counted */
        CHECK_INT(cfx_set_profile(gpu.e, 1), 0);
        cfx_status pst = cfx_run(gpu.e);
        {
            cfx_profile_row prow[64];
            double run_us = 0, sum = 0;
            CHECK_INT(pst, CFX_OK);
            int n = cfx_profile(gpu.e, prow, 64, &run_us);
            int loops = 0;
            CHECK(n > 0 && n <= 64 && run_us > 0);
            for (int i = 0; i < n && i < 64; i++) {
                if (prow[i].by == CFX_PROFILE_LOOP) {
                    loops++;
                    CHECK_INT(prow[i].count, 3);
                }
                if (prow[i].by == CFX_PROFILE_LINE)
                    sum += prow[i].total_us;
            }
            CHECK_INT(loops, 1);
            CHECK(sum <= run_us * 1.0001);
        }
        cfx_set_profile(gpu.e, 0);
    } else {
        CHECK(0);
    }
    side_free(&gpu);
    cfx_module_free(m);
    remove(path);
}


/* ==== device buffers and application kernels =============================================== */

/* The CUDA runtime, reached only when the library was built with it: weak references, so
 * this file also links in a build without CUDA (where main skips before using them). The
 * return type is cudaError_t, an int-sized enum; 0 is success. Kinds: 1 host to device,
 * 2 device to host, 3 device to device. */
extern int cudaMalloc(void **p, size_t bytes) __attribute__((weak));
extern int cudaFree(void *p) __attribute__((weak));
extern int cudaMemcpy(void *dst, const void *src, size_t bytes, int kind) __attribute__((weak));
extern int cudaMemcpyAsync(void *dst, const void *src, size_t bytes, int kind, void *stream)
    __attribute__((weak));
extern int cudaDeviceSynchronize(void) __attribute__((weak));
extern int cudaMemset(void *p, int value, size_t bytes) __attribute__((weak));
extern int cudaStreamCreateWithFlags(void **stream, unsigned flags) __attribute__((weak));
extern int cudaStreamSynchronize(void *stream) __attribute__((weak));
extern int cudaStreamDestroy(void *stream) __attribute__((weak));

/* `dup`: the result is a copy of the argument (f32[N]). The CUDA version enqueues the copy on
 * the stream it is given, as an application kernel must. `user` counts the calls. */
static int dup_cpu(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    (void)nargs;
    (void)nresults;
    (*(int *)user)++;
    memcpy(results[0].data, args[0].data, (size_t)cfx_type_count(&args[0].type) * 4);
    return 0;
}

static int dup_cuda(void *user, void *stream, int nargs, const cfx_tensor *args, int nresults,
                    cfx_tensor *results)
{
    (void)nargs;
    (void)nresults;
    (*(int *)user)++;
    return cudaMemcpyAsync(results[0].data, args[0].data, (size_t)cfx_type_count(&args[0].type) * 4, 3,
                           stream) == 0 ? 0 : -1;
}

static const char *calls =
    "graph calls(x: f32[3000], n: i32) -> (y: f32[3000], s: f32) {\n"
    "  y = x\n"
    "  s = 0.0\n"
    "  for i in range(0, n) {\n"
    "    y = dup(y) * 0.5 + 1.0\n"
    "    s = s + sum(y)\n"
    "    print(s, \"s\")\n"
    "  }\n"
    "}\n";

/* cuda-persistent's executor on the pause-and-relaunch path when `pause`, else on the path
 * it picks (device graph launch where it works). */
static int side_start_path(side *s, cfx_module *m, cfx_backend b, const char *overrides, int pause)
{
    int rc = side_start(s, m, 0, b, overrides, 0);
    if (rc == 0 && pause && b == CFX_BACKEND_CUDA_PERSISTENT && cfx_set_option(s->e, CFX_OPTION_DEVICE_LAUNCH, 0) != 0) {
        fprintf(stderr, "cfx_set_option: %s\n", cfx_exec_error(s->e));
        return -1;
    }
    return rc;
}

/* `calls` with n iterations on cpu and on cuda-persistent (asynchronously), on one path: the
 * same prints and results. On the pause path the host calls dup_cuda at every CALL; on
 * device graph launch once, when the CALL's graph is captured at the first run. */
static void test_calls(int n, int pause)
{
    int cpu_calls = 0, gpu_calls = 0;
    char *err = NULL, *diag = NULL, inputs[32], label[64];
    cfx_context *ctx[2] = {cfx_context_new(), cfx_context_new()};
    CHECK_INT(cfx_register_kernel(ctx[0], "dup", "(f32[3000]) -> (f32[3000])", dup_cpu, NULL, &cpu_calls,
                                  &err), 0);
    CHECK_INT(cfx_register_kernel(ctx[1], "dup", "(f32[3000]) -> (f32[3000])", NULL, dup_cuda, &gpu_calls,
                                  &err), 0);
    cfx_module *m[2];
    side sd[2];
    snprintf(inputs, sizeof inputs, "n=%d", n);
    snprintf(label, sizeof label, "calls n=%d%s", n, pause ? " (pause path)" : "");
    for (int k = 0; k < 2; k++) {
        m[k] = cfx_compile_string(ctx[k], "calls.cfx", calls, strlen(calls), &diag);
        if (!m[k]) {
            fprintf(stderr, "calls.cfx: %s\n", diag ? diag : "?");
            cfx_free(diag);
            CHECK(0);
            return;
        }
        CHECK_INT(side_start_path(&sd[k], m[k], k == 0 ? CFX_BACKEND_CPU : CFX_BACKEND_CUDA_PERSISTENT, inputs,
                                  pause), 0);
    }
    CHECK_INT(cfx_run(sd[0].e), CFX_OK);
    /* asynchronous: on the pause path cfx_wait serves the CALLs; on device graph launch the
     * device does */
    CHECK_INT(cfx_run_async(sd[1].e), 0);
    CHECK_INT(cfx_wait(sd[1].e), CFX_OK);
    printf("gpu_persistent: %s: %s\n", label, cfx_exec_backend_detail(sd[1].e));
    if (pause)
        CHECK(!device_launch(sd[1].e));
    CHECK_INT(cpu_calls, n);
    CHECK_INT(gpu_calls, device_launch(sd[1].e) ? 1 : n);
    side_done(&sd[0]);
    side_done(&sd[1]);
    CHECK_INT(sd[1].iterations, sd[0].iterations);
    CHECK_INT(sd[1].printed.n, n);
    CHECK_STR(sd[1].printed.text ? sd[1].printed.text : "", sd[0].printed.text ? sd[0].printed.text : "");
    compare_results(label, m[0], 0, &sd[0], &sd[1]);
    for (int k = 0; k < 2; k++) {
        side_free(&sd[k]);
        cfx_module_free(m[k]);
        cfx_context_free(ctx[k]);
    }
}

/* `calls` on cuda-host and cuda-graph, which the C tests had not run a CALL on before the
 * Python package's NVRTC kernel test did: two runs of one executor against one cpu run. The
 * second starts from zeroed result buffers, so it must deliver its results itself; cuda-host
 * calls dup_cuda at every CALL, cuda-graph once, when it captures the graph at the first run,
 * and the second run replays that capture. */
static void test_calls_other(cfx_backend b, int n)
{
    int cpu_calls = 0, gpu_calls = 0;
    char *err = NULL, *diag = NULL, inputs[32], label[64], why[256];
    if (!cfx_backend_available(b, why, sizeof why)) {
        printf("gpu_persistent: calls on %s skipped: %s\n", cfx_backend_name(b), why);
        return;
    }
    cfx_context *ctx[2] = {cfx_context_new(), cfx_context_new()};
    CHECK_INT(cfx_register_kernel(ctx[0], "dup", "(f32[3000]) -> (f32[3000])", dup_cpu, NULL, &cpu_calls,
                                  &err), 0);
    CHECK_INT(cfx_register_kernel(ctx[1], "dup", "(f32[3000]) -> (f32[3000])", NULL, dup_cuda, &gpu_calls,
                                  &err), 0);
    cfx_module *m[2] = {NULL, NULL};
    side sd[2];
    memset(sd, 0, sizeof sd);
    snprintf(inputs, sizeof inputs, "n=%d", n);
    snprintf(label, sizeof label, "calls n=%d on %s", n, cfx_backend_name(b));
    for (int k = 0; k < 2; k++) {
        m[k] = cfx_compile_string(ctx[k], "calls.cfx", calls, strlen(calls), &diag);
        if (!CHECK(m[k] != NULL) ||
            !CHECK(side_start(&sd[k], m[k], 0, k == 0 ? CFX_BACKEND_CPU : b, inputs, 0) == 0))
            goto done;
    }
    CHECK_INT(cfx_run(sd[0].e), CFX_OK);
    CHECK_INT(cfx_run(sd[1].e), CFX_OK);
    for (int i = 0; i < cfx_result_count(m[1], 0); i++) {
        cfx_type t = cfx_result_type(m[1], 0, i);
        memset(sd[1].out[i], 0, (size_t)cfx_type_count(&t) * (size_t)cfx_dtype_size(t.dtype));
    }
    free(sd[1].printed.text);
    memset(&sd[1].printed, 0, sizeof sd[1].printed);
    CHECK_INT(cfx_run(sd[1].e), CFX_OK);
    CHECK_INT(cpu_calls, n);
    CHECK_INT(gpu_calls, b == CFX_BACKEND_CUDA_GRAPH ? 1 : 2 * n);
    side_done(&sd[0]);
    side_done(&sd[1]);
    CHECK_INT(sd[1].iterations, sd[0].iterations);
    CHECK_INT(sd[1].printed.n, n);
    CHECK_STR(sd[1].printed.text ? sd[1].printed.text : "", sd[0].printed.text ? sd[0].printed.text : "");
    compare_results(label, m[0], 0, &sd[0], &sd[1]);
done:
    cfx_free(diag);
    for (int k = 0; k < 2; k++) {
        if (sd[k].e)
            side_free(&sd[k]);
        cfx_module_free(m[k]);
        cfx_context_free(ctx[k]);
    }
}

/* `calls` with dup registered by its source (and a whole op after it), on cpu and on
 * cuda-persistent: the compiled kernel writes both into the kernel (no launch, no pause: its
 * detail says so), the interpreter launches them (the kernels around them that NVRTC builds):
 * the same prints and results either way. */
static const char dup_src[] = "CFX_HD void dup(int64_t lo, int64_t hi, const float *x, float *y)\n"
                              "{\n    for (int64_t e = lo; e < hi; e++)\n        y[e] = x[e];\n}\n";
static const char last_src[] = "CFX_HD void last(const float *x, float *r)\n{\n    *r = x[2999] * 0.5f;\n}\n";
static const char *calls_source =
    "graph calls(x: f32[3000], n: i32) -> (y: f32[3000], s: f32) {\n"
    "  y = x\n"
    "  s = 0.0\n"
    "  for i in range(0, n) {\n"
    "    y = dup(y) * 0.5 + 1.0\n"
    "    s = s + sum(y) + last(y)\n"
    "    print(s, \"s\")\n"
    "  }\n"
    "}\n";

static void test_source_calls(int n)
{
    char *err = NULL, *diag = NULL, inputs[32], label[64];
    cfx_context *ctx = cfx_context_new();
    side sd[2];
    if (!CHECK_INT(cfx_register_source(ctx, "dup", "(f32[3000]) -> (f32[3000])", CFX_OP_ELEMENTS, dup_src, &err), 0) ||
        !CHECK_INT(cfx_register_source(ctx, "last", "(f32[3000]) -> (f32)", CFX_OP_WHOLE, last_src, &err), 0)) {
        fprintf(stderr, "%s\n", err ? err : "?");
        cfx_free(err);
        cfx_context_free(ctx);
        return;
    }
    snprintf(inputs, sizeof inputs, "n=%d", n);
    snprintf(label, sizeof label, "source calls n=%d", n);
    cfx_module *m = cfx_compile_string(ctx, "calls.cfx", calls_source, strlen(calls_source), &diag);
    cfx_context_free(ctx); /* the module keeps its ops */
    if (!CHECK(m != NULL)) {
        fprintf(stderr, "%s\n", diag ? diag : "?");
        cfx_free(diag);
        return;
    }
    CHECK_INT(side_start(&sd[0], m, 0, CFX_BACKEND_CPU, inputs, 0), 0);
    CHECK_INT(side_start(&sd[1], m, 0, CFX_BACKEND_CUDA_PERSISTENT, inputs, 0), 0);
    CHECK_INT(cfx_run(sd[0].e), CFX_OK);
    CHECK_INT(cfx_run(sd[1].e), CFX_OK);
    printf("gpu_persistent: %s: %s\n", label, cfx_exec_backend_detail(sd[1].e));
    if (mode == CFX_PERSISTENT_COMPILED)
        CHECK(strstr(cfx_exec_backend_detail(sd[1].e), "2 calls of kernels registered by their source written inline") &&
              !strstr(cfx_exec_backend_detail(sd[1].e), "end the launch") &&
              !strstr(cfx_exec_backend_detail(sd[1].e), "ends the launch"));
    else
        CHECK(strstr(cfx_exec_backend_detail(sd[1].e), "2 CALL sites") != NULL);
    side_done(&sd[0]);
    side_done(&sd[1]);
    CHECK_INT(sd[1].iterations, sd[0].iterations);
    CHECK_INT(sd[1].printed.n, n);
    CHECK_STR(sd[1].printed.text ? sd[1].printed.text : "", sd[0].printed.text ? sd[0].printed.text : "");
    compare_results(label, m, 0, &sd[0], &sd[1]);
    side_free(&sd[0]);
    side_free(&sd[1]);
    cfx_module_free(m);
}

/* No host work between cfx_run_async and cfx_wait on device graph launch: after a first run
 * (which captures the CALL), a run of 10,000 iterations with a CALL in each ends on the
 * application's stream with no cuda_fn call and no print callback, its results already in
 * the device buffers when the application has only synchronized its stream; cfx_wait then
 * reports ok and still calls nothing. */
static int host_prints;
static void count_print(void *user, const char *line)
{
    (void)user, (void)line;
    host_prints++;
}

static const char *loop_call =
    "graph loopcall(x: f32[3000], n: i32) -> (y: f32[3000], c: i32) {\n"
    "  y = x\n  c = 0\n  for i in range(0, n) {\n    y = dup(y) * 0.5 + 1.0\n    c = c + 1\n"
    "    if c < 0 {\n      print(c, \"never\")\n    }\n  }\n}\n";

static void test_no_host_work(void)
{
    if (!cudaMalloc || !cudaStreamCreateWithFlags || !cudaStreamSynchronize || !cudaMemset) {
        printf("gpu_persistent: no-host-work test skipped: the CUDA runtime is not linked\n");
        return;
    }
    int gpu_calls = 0;
    char *err = NULL, *diag = NULL;
    void *stream = NULL, *dx = NULL, *dn = NULL, *dy = NULL, *dc = NULL;
    float x[3000], y[3000];
    int32_t n = 10000, c = -1;
    cfx_context *ctx = cfx_context_new();
    cfx_module *m = NULL;
    cfx_exec *e = NULL;
    CHECK_INT(cfx_register_kernel(ctx, "dup", "(f32[3000]) -> (f32[3000])", NULL, dup_cuda, &gpu_calls, &err), 0);
    m = cfx_compile_string(ctx, "loopcall.cfx", loop_call, strlen(loop_call), &diag);
    if (!CHECK(m != NULL))
        goto done;
    e = cfx_exec_new(m, 0, CFX_BACKEND_CUDA_PERSISTENT, &err);
    if (!CHECK(e != NULL))
        goto done;
    for (int i = 0; i < 3000; i++)
        x[i] = (float)(i % 7) - 3.0f;
    CHECK_INT(cudaStreamCreateWithFlags(&stream, 1 /* cudaStreamNonBlocking */), 0);
    CHECK_INT(cudaMalloc(&dx, sizeof x), 0);
    CHECK_INT(cudaMalloc(&dn, 4), 0);
    CHECK_INT(cudaMalloc(&dy, sizeof y), 0);
    CHECK_INT(cudaMalloc(&dc, 4), 0);
    cudaMemcpy(dx, x, sizeof x, 1);
    cudaMemcpy(dn, &n, 4, 1);
    CHECK_INT(cudaDeviceSynchronize(), 0); /* pageable copies land before the run reads them */
    CHECK_INT(cfx_bind_device(e, "x", dx, sizeof x), 0);
    CHECK_INT(cfx_bind_device(e, "n", dn, 4), 0);
    CHECK_INT(cfx_bind_device(e, "y", dy, sizeof y), 0);
    CHECK_INT(cfx_bind_device(e, "c", dc, 4), 0);
    cfx_set_stream(e, stream);
    cfx_set_print(e, count_print, NULL);
    CHECK_INT(cfx_run(e), CFX_OK); /* the first run captures the CALL's graph */
    if (!device_launch(e)) {
        printf("gpu_persistent: no-host-work test skipped: %s\n", cfx_exec_backend_detail(e));
        goto done;
    }
    gpu_calls = 0;
    host_prints = 0;
    CHECK_INT(cudaMemset(dy, 0, sizeof y), 0);
    CHECK_INT(cudaDeviceSynchronize(), 0);
    CHECK_INT(cfx_run_async(e), 0);
    CHECK_INT(cudaStreamSynchronize(stream), 0); /* the application waits, not cfx */
    CHECK_INT(gpu_calls, 0);
    CHECK_INT(host_prints, 0);
    cudaMemcpy(y, dy, sizeof y, 2);
    cudaMemcpy(&c, dc, 4, 2);
    CHECK_INT(c, n);
    {
        /* y = y * 0.5 + 1 ten thousand times from x: 2 in f32, for every element */
        int bad = 0;
        for (int i = 0; i < 3000; i++)
            bad += y[i] != 2.0f;
        CHECK_INT(bad, 0);
    }
    CHECK_INT(cfx_wait(e), CFX_OK);
    CHECK_INT(cfx_exec_iterations(e), n);
    CHECK_INT(gpu_calls, 0);
    CHECK_INT(host_prints, 0);
done:
    cfx_free(err);
    cfx_free(diag);
    cfx_exec_free(e);
    cfx_module_free(m);
    cfx_context_free(ctx);
    void *all[] = {dx, dn, dy, dc};
    for (int i = 0; i < 4; i++)
        if (all[i])
            cudaFree(all[i]);
    if (stream)
        cudaStreamDestroy(stream);
}

/* A product of side N in a loop, launched as a cuBLAS graph (N^3 is far above
 * SCHED_LAUNCH_PRODUCT_MIN), against the cpu executor. Tolerance: cuBLAS sums k = N products
 * in f32 where the cpu executor sums in double and rounds once, so an element may differ by
 * about sqrt(N) f32 roundings of the sum's magnitude: every element of y is required within
 * 2e-4 of the largest |y| (the scale keeps |y| near 1 across iterations). */
static void test_big_product(int N, int pause)
{
    char src[512], *diag = NULL, label[64];
    side cpu, gpu;
    snprintf(src, sizeof src,
             "graph bigmm(a: f32[%d, %d], x: f32[%d, %d], n: i32) -> (y: f32[%d, %d], s: f32) {\n"
             "  y = x\n  s = 0.0\n  for i in range(0, n) {\n    y = a @ y * %g\n    s = s + y[0][0]\n  }\n}\n",
             N, N, N, N, N, N, 1.0 / sqrt((double)N / 3.0));
    snprintf(label, sizeof label, "product %dx%d%s", N, N, pause ? " (pause path)" : "");
    cfx_module *m = cfx_compile_string(NULL, "bigmm.cfx", src, strlen(src), &diag);
    if (!CHECK(m != NULL)) {
        fprintf(stderr, "%s\n", diag ? diag : "?");
        cfx_free(diag);
        return;
    }
    if (side_start_path(&cpu, m, CFX_BACKEND_CPU, "n=2", 0) != 0 ||
        side_start_path(&gpu, m, CFX_BACKEND_CUDA_PERSISTENT, "n=2", pause) != 0) {
        CHECK(0);
        cfx_module_free(m);
        return;
    }
    CHECK_INT(cfx_run(cpu.e), CFX_OK);
    CHECK_INT(cfx_run(gpu.e), CFX_OK);
    printf("gpu_persistent: %s: %s\n", label, cfx_exec_backend_detail(gpu.e));
    /* both modes launch it */
    CHECK(strstr(cfx_exec_backend_detail(gpu.e),
                 mode == CFX_PERSISTENT_INTERP ? "1 product" : "1 record ends the launch") != NULL);
    {
        const float *want = (const float *)cpu.out[0], *got = (const float *)gpu.out[0];
        double scale = 0, worst = 0;
        for (int64_t e = 0; e < (int64_t)N * N; e++)
            scale = fmax(scale, fabs(want[e]));
        for (int64_t e = 0; e < (int64_t)N * N; e++)
            worst = fmax(worst, fabs((double)got[e] - want[e]));
        printf("gpu_persistent: %s: largest difference %.3g of largest |y| %.3g\n", label, worst, scale);
        CHECK(scale > 0.1);
        CHECK(worst <= 2e-4 * scale);
    }
    side_free(&cpu);
    side_free(&gpu);
    cfx_module_free(m);
}

/* Inputs and results in device memory: results arrive without a host copy, and a stopped run
 * leaves the result buffers as they were. */
static void test_device_buffers(void)
{
    if (!cudaMalloc || !cudaFree || !cudaMemcpy || !cudaDeviceSynchronize) {
        printf("gpu_persistent: device-buffer test skipped: the CUDA runtime is not linked\n");
        return;
    }
    char *diag = NULL, *err = NULL;
    cfx_module *m = cfx_compile_string(NULL, "stops.cfx", stops, strlen(stops), &diag);
    CHECK(m != NULL);
    if (!m) {
        cfx_free(diag);
        return;
    }
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CUDA_PERSISTENT, &err);
    CHECK(e != NULL);
    if (!e) {
        cfx_free(err);
        cfx_module_free(m);
        return;
    }
    set_mode(e);
    float x[8];
    int32_t d[5000], q[5000], k = 2, n = 4, c = -1;
    float y = -1.0f;
    for (int i = 0; i < 8; i++)
        x[i] = (float)i * 0.5f;
    for (int i = 0; i < 5000; i++)
        d[i] = i % 7 + 1;
    void *dx = NULL, *dk = NULL, *dd = NULL, *dn = NULL, *dy = NULL, *dq = NULL, *dc = NULL;
    CHECK_INT(cudaMalloc(&dx, sizeof x), 0);
    CHECK_INT(cudaMalloc(&dk, 4), 0);
    CHECK_INT(cudaMalloc(&dd, sizeof d), 0);
    CHECK_INT(cudaMalloc(&dn, 4), 0);
    CHECK_INT(cudaMalloc(&dy, 4), 0);
    CHECK_INT(cudaMalloc(&dq, sizeof q), 0);
    CHECK_INT(cudaMalloc(&dc, 4), 0);
    cudaMemcpy(dx, x, sizeof x, 1);
    cudaMemcpy(dk, &k, 4, 1);
    cudaMemcpy(dd, d, sizeof d, 1);
    cudaMemcpy(dn, &n, 4, 1);
    cudaMemcpy(dc, &c, 4, 1);
    /* A cudaMemcpy from pageable memory may return before its bytes reach the device, and it
     * is ordered on the legacy default stream, which the executor's own non-blocking stream
     * does not wait for: wait here, before the run reads them. */
    CHECK_INT(cudaDeviceSynchronize(), 0);
    CHECK_INT(cfx_bind_device(e, "x", dx, sizeof x), 0);
    CHECK_INT(cfx_bind_device(e, "k", dk, 4), 0);
    CHECK_INT(cfx_bind_device(e, "d", dd, sizeof d), 0);
    CHECK_INT(cfx_bind_device(e, "n", dn, 4), 0);
    CHECK_INT(cfx_bind_device(e, "y", dy, 4), 0);
    CHECK_INT(cfx_bind_device(e, "q", dq, sizeof q), 0);
    CHECK_INT(cfx_bind_device(e, "c", dc, 4), 0);
    CHECK_INT(cfx_run(e), CFX_OK);
    cudaMemcpy(&y, dy, 4, 2);
    cudaMemcpy(q, dq, sizeof q, 2);
    cudaMemcpy(&c, dc, 4, 2);
    CHECK_REAL(y, 1.0, 0.0);  /* x[2] */
    CHECK_INT(q[4999], 1);    /* d / d */
    CHECK_INT(c, 4 + 0 + 1 + 2); /* the while counts to n = 4, then range(0, 3, 1) adds 0, 1, 2 */

    /* k = 9 stops at x[k]: the result buffers keep what they had */
    k = 9;
    c = -7;
    cudaMemcpy(dk, &k, 4, 1);
    cudaMemcpy(dc, &c, 4, 1);
    CHECK_INT(cudaDeviceSynchronize(), 0);
    CHECK_INT(cfx_run(e), CFX_STOP_INDEX);
    cudaMemcpy(&c, dc, 4, 2);
    CHECK_INT(c, -7);
    cfx_exec_free(e);
    cfx_module_free(m);
    void *all[] = {dx, dk, dd, dn, dy, dq, dc};
    for (int i = 0; i < 7; i++)
        cudaFree(all[i]);
}

int main(int argc, char **argv)
{
    char why[256];
    /* --quick: a smaller workload for compute-sanitizer (profiling/gpu_round.sh), which runs
     * every kernel many times slower; every path is still taken. --tiny: smaller again, for
     * racecheck and synccheck, which did not finish even this in 75 s on an H100: one program
     * of each kind of kernel path (micro-ops, split records and a combine, rows, products, a
     * stop, a CALL on both paths), short loops, no 512-cube product. */
    int tiny = argc > 1 && strcmp(argv[1], "--tiny") == 0;
    int quick = tiny || (argc > 1 && strcmp(argv[1], "--quick") == 0);
    if (!cfx_backend_available(CFX_BACKEND_CUDA_PERSISTENT, why, sizeof why)) {
        printf("gpu_persistent: skipped: %s\n", why);
        return 77;
    }
    for (int k = 0; k < 2; k++) {
    mode = k == 0 ? CFX_PERSISTENT_INTERP : CFX_PERSISTENT_COMPILED;
    printf("gpu_persistent: the %s mode\n", k == 0 ? "interpreter" : "compiled");
    compare("if_in_while", if_in_while, NULL, "x=0 y=1 i=0", 0, CFX_OK, 0);
    compare("vectors", vectors, NULL, tiny ? "n=2" : "n=7", 0, CFX_OK, 0);
    compare("rows", rows, NULL, tiny ? "n=3" : "n=100", 0, CFX_OK, 0);
    compare("products", products, NULL, "", 0, CFX_OK, 0);
    compare("stops index", stops, NULL, "k=9 n=5", 0, CFX_STOP_INDEX, 0);
    test_calls(tiny ? 2 : 5, 0);
    test_calls(tiny ? 2 : 5, 1);
    test_source_calls(5);
    if (tiny)
        continue;
    compare("if_in_while random", if_in_while, NULL, "i=-5", 0, CFX_OK, 0);
    compare("vectors async", vectors, NULL, "n=3", 0, CFX_OK, 1);
    compare("vectors zero iterations", vectors, NULL, "n=0", 0, CFX_OK, 0);
    compare("small", small, NULL, "k=10", 0, CFX_OK, 0);
    compare("small many prints", small, NULL, quick ? "k=6000" : "k=60000", 0, CFX_OK, 0);
    compare("stops ok", stops, NULL, "k=3 n=5", 0, CFX_OK, 0);
    compare("stops index negative", stops, NULL, "k=-9 n=5", 0, CFX_STOP_INDEX, 0);
    compare("stops divide", stops, NULL, "k=3 n=5 d=0", 0, CFX_STOP_DIVIDE, 0);
    compare("stops assert", stops, NULL, "k=3 n=5 x=-3", 0, CFX_STOP_ASSERT, 0);
    compare("stops value", stops, NULL, "k=1 n=5", 0, CFX_STOP_VALUE, 0);
    compare("stops limit", stops, NULL, "k=3 n=50", 20, CFX_STOP_LIMIT, 0);
    compare("spin limit", spin, NULL, "n=1000000", 1000, CFX_STOP_LIMIT, 0);
    if (k == 0) { /* the other executors have no modes: once */
        test_calls_other(CFX_BACKEND_CUDA_HOST, 5);
        test_calls_other(CFX_BACKEND_CUDA_GRAPH, 5);
    }
    test_source_calls(quick ? 1000 : 10000);
    test_cancel();
    test_trace();
    test_calls(quick ? 1000 : 10000, 0);
    test_calls(quick ? 1000 : 10000, 1);
    test_device_buffers();
    test_no_host_work();
    /* the cpu executor's side of a 2048-cube product takes about a minute */
    test_big_product(quick ? 512 : 2048, 0);
    test_big_product(quick ? 512 : 1024, 1);
    }
    return test_finish("gpu_persistent");
}
