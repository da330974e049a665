/* gpu_compiled.c: the compiled mode of the cuda-persistent executor (device/compiled.cu).
 *
 * `gpu_compiled --compile-only` (a cpu test): NVRTC compiles the generated kernel of every
 * graph in graphs/ and of generated programs, with no device: the generated CUDA C is valid
 * and NVRTC takes the headers the module carries. The forms: structured and as the pc-dispatch
 * loop for sm_90, structured for sm_80 (graphs/ only), and for a program with records that end
 * the launch, both sm_90 forms built to tail-launch there. Programs that call application
 * kernels too, binary ones (the kernel ends its launch there) and ones registered by their
 * source (written into the kernel), hand-written and generated, and the kernel around a source
 * op that the other paths launch. A program the generator refuses fails, as one NVRTC rejects
 * does. Each NVRTC compilation takes a second or more of a core, so by default every other graph
 * is compiled, each in one of its forms, in turn, and 6 generated programs, none of over
 * README_MAX_RECORDS records; `--compile-only --stress`
 * (label stress) compiles every program in all its forms and 12 generated programs (all but
 * the structured form for sm_90 to PTX, without ptxas), with
 * `--part K/N` only every N-th of those builds from the K-th (the sweep is two tests, which
 * ctest runs side by side). Skips (77) where NVRTC cannot be loaded.
 *
 * `gpu_compiled` (a gpu test, 77 without a device): what only a device shows. Results of both
 * modes against the cpu executor are gpu_executors' and gpu_persistent's business (they run
 * every program in both modes); this file checks the mode itself: cfx_set_persistent_mode
 * reports the compiled kernel for a graph, also for one that calls an application kernel (a
 * binary one on both paths past its call, one registered by its source inline), and says so;
 * the cache serves a second executor of the same graph (the trace
 * says "cache":"hit") and is skipped with CFX_KERNEL_CACHE=off; a run whose prints overflow
 * the compiled kernel's buffer is run again by the interpreter and prints everything, in
 * order; `cfx run --backend cuda-persistent` says which mode runs, and says the interpreter
 * with the reason when NVRTC is missing (CFX_NVRTC=none) or the mode is forced
 * (--persistent-mode interp).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfx.h"
#include "host/front/compile.h"
#include "host/runtime/module.h"
#include "host/program/program.h"
#include "gen_programs.h"
#include "testutil.h"

#define GENERATED 6
#define GENERATED_STRESS 12
/* The README's command leaves programs of more records than this to --stress: NVRTC's time
 * grows faster than the kernel (ptxas on one function), and one generated program of 468
 * records took 12 to 39 s of a core for each of its kernels, half the test's time, where every
 * graph of graphs/ (150 records at most) takes a few seconds. */
#define README_MAX_RECORDS 300
static int left_large; /* programs over README_MAX_RECORDS left to --stress */

/* ==== compile only ========================================================================= */

static int compiled_ok, compiled_total;
static double compile_ms_total, compile_ms_max;
static double compile_ms_kind[2]; /* ... to machine code, to PTX */
static int compiled_kind[2];
static char slowest[160]; /* the build of compile_ms_max, to watch the generator's kernels grow */

/* Structured and dispatch for sm_90; `both` adds the structured form for sm_80; a program with
 * records that end the launch is built to tail-launch there too (both forms, sm_90). Without
 * --stress, only the form `turn` % (the number of them) of those. */
static int stress_run;
/* --part K/N: only the builds whose place in the sequence is K modulo N, so that the stress
 * sweep is N tests that ctest runs side by side; 0/1 by default, every build. The builds to
 * machine code and those to PTX (a third of the time) are counted apart ([1]: PTX), so that
 * each part gets its share of both: counted together, one part got every machine-code build
 * of graphs/ (their forms alternate) and took 320 s where the other took 237. */
static int part_k, part_n = 1, builds_seen[2];
static void compile_prog(const cfx_prog *p, const char *label, int both, int turn)
{
    static const int archs[6] = {90, 90, 80, 90, 90, 90},
                     forms[6] = {0, COMP_BUILD_DISPATCH, 0, COMP_BUILD_DEVICE_LAUNCH,
                                 COMP_BUILD_DEVICE_LAUNCH | COMP_BUILD_DISPATCH, COMP_BUILD_TRACE};
    int launches = 0;
    if (!stress_run && p->nrecords > README_MAX_RECORDS) {
        left_large++;
        return;
    }
    for (int32_t i = 0; i < p->nrecords; i++)
        launches |= p->records[i].kind == REC_CALL || p->records[i].kind == REC_MATMUL;
    int usable[6], nusable = 0;
    for (int k = 0; k < 6; k++)
        if (!((k == 2 && !both) || ((k == 3 || k == 4) && !launches)))
            usable[nusable++] = k;
    for (int u = 0; u < nusable; u++) {
        int k = usable[u];
        if (!stress_run && u != turn % nusable)
            continue;
        /* --stress: every form but sm_90's structured one as PTX, with no ptxas (two thirds of
         * the time; the deep sweep took 15 minutes of a core on one machine): the others differ
         * from it in their source only (dispatch, tail launches, stamps) or in the architecture
         * NVRTC compiles it for (sm_80), and the README's run builds each program's form in turn
         * to machine code, so every form still meets ptxas there */
        int ptx = stress_run && k != 0;
        if (builds_seen[ptx]++ % part_n != part_k)
            continue;
        char err[1024];
        size_t bytes = 0;
        double ms = 0;
        compiled_total++;
        if (comp_build(p, archs[k], forms[k] | (ptx ? COMP_BUILD_PTX : 0), &bytes, &ms, err, sizeof err) != 0) {
            /* a refusal too (a record kind the generator does not know): every graph here is
             * one the compiled kernel must run */
            fprintf(stderr, "%s (%s_%d, %s%s%s): %s\n", label, ptx ? "compute" : "sm", archs[k],
                    forms[k] & COMP_BUILD_DISPATCH ? "dispatch" : "structured",
                    forms[k] & COMP_BUILD_DEVICE_LAUNCH ? ", tail launches" : "",
                    forms[k] & COMP_BUILD_TRACE ? ", with the timeline's stamps" : "", err);
            CHECK(0);
            continue;
        }
        CHECK(bytes > 0);
        compiled_ok++;
        compile_ms_total += ms;
        compile_ms_kind[ptx] += ms;
        compiled_kind[ptx]++;
        if (ms > compile_ms_max) {
            compile_ms_max = ms;
            snprintf(slowest, sizeof slowest, "%.100s (%s_%d, %s)", label, ptx ? "compute" : "sm", archs[k],
                     forms[k] & COMP_BUILD_DISPATCH ? "dispatch" : "structured");
        }
    }
}

static int turns; /* programs compiled so far: whose form is next */
static void compile_source_text(const cfx_context *ctx, const char *label, const char *text, int both)
{
    compiled_module cm;
    char *diags = NULL;
    if (compile_source(ctx, label, text, strlen(text), &cm, &diags) != 0) {
        if (ctx) /* every call program compiles (a graph file may be `# error:` cases) */
            fprintf(stderr, "%s: %s\n", label, diags ? diags : "?");
        CHECK(!ctx);
        free(diags);
        return;
    }
    for (int g = 0; g < cm.ngraphs; g++) {
        char what[512];
        snprintf(what, sizeof what, "%.300s: graph %s", label, cm.graphs[g].name);
        compile_prog(cm.graphs[g].prog, what, both, turns++);
    }
    compiled_module_free(&cm);
}

/* ---- programs that call application kernels ---- */

static int binary_kernel(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    (void)user, (void)nargs, (void)args, (void)nresults, (void)results;
    return 0; /* never run: these programs are only compiled */
}

static const char kw_src[] = "CFX_HD void kw(int64_t lo, int64_t hi, const float *x, float *y)\n"
                             "{\n    for (int64_t e = lo; e < hi; e++)\n        y[e] = tanhf(x[e]) * 0.5f + 1.0f;\n}\n";
static const char kv_src[] =
    "CFX_HD void kv(int64_t lo, int64_t hi, const int32_t *x, int32_t *y)\n"
    "{\n    for (int64_t e = lo; e < hi; e++)\n        y[e] = k_pow_i32(x[e], 2) + (int32_t)e;\n}\n";
static const char ka_src[] = "CFX_HD void ka(const int32_t *a, const int32_t *b, int32_t *r)\n"
                             "{\n    *r = (int32_t)((uint32_t)*a * 3u + (uint32_t)*b);\n}\n";
static const char big_src[] = "CFX_HD void big(int64_t lo, int64_t hi, const float *x, float *y)\n"
                              "{\n    for (int64_t e = lo; e < hi; e++)\n        y[e] = x[(e + 1) % 6000] + 1.0f;\n}\n";
static const char hist_src[] = "CFX_HD void hist(const float *x, float *h)\n"
                               "{\n    for (int b = 0; b < 4; b++)\n        h[b] = x[b * 1000];\n}\n";

static const char *const call_programs[] = {
    "graph calls(x: f32[6000], A: f32[512, 512], B: f32[512, 512], a: i32, v: i32[4], w: f32[4], n: i32) "
    "-> (y: f32[6000], P: f32[512, 512], a2: i32, v2: i32[4], w2: f32[4], h: f32[4]) {\n"
    "  y = x\n  P = B\n  a2 = a\n  v2 = v\n  w2 = w\n  h = zeros(f32[4])\n"
    "  for i in range(0, n) {\n"
    "    y = big(y) * 0.5\n"
    "    h = hist(y)\n"
    "    P = A @ P\n"
    "    a2 = ka(a2, i)\n"
    "    if a2 % 2 == 0 {\n      w2 = kw(w2)\n    } else {\n      v2 = kv(v2)\n    }\n"
    "    b = kfail(a2)\n"
    "    if b == 7 {\n      return\n    }\n"
    "  }\n"
    "}\n",
    "graph small(a: i32, n: i32) -> (a2: i32) {\n"
    "  a2 = a\n  while a2 < n {\n    a2 = ka(a2, 1)\n    a2 = kfail(a2)\n  }\n}\n",
};

/* The programs above and generated ones with calls (tests/gen_programs.h's gen_inject), with
 * the kernels binary (every CALL ends the launch) and given by their source (written inline;
 * kfail binary beside them), through the generator and NVRTC. */
static void compile_calls(void)
{
    static const struct {
        const char *name, *signature, *src;
        int form;
    } k[] = {
        {"kw", "(f32[4]) -> (f32[4])", kw_src, CFX_OP_ELEMENTS},
        {"kv", "(i32[4]) -> (i32[4])", kv_src, CFX_OP_ELEMENTS},
        {"ka", "(i32, i32) -> (i32)", ka_src, CFX_OP_WHOLE},
        {"big", "(f32[6000]) -> (f32[6000])", big_src, CFX_OP_ELEMENTS},
        {"hist", "(f32[6000]) -> (f32[4])", hist_src, CFX_OP_WHOLE},
        {"kfail", "(i32) -> (i32)", NULL, 0},
    };
    static const char *const stmts[] = {"w = kw(w)", "v = kv(v)", "a = ka(a, b)", "b = kfail(b)"};
    int before = compiled_total;
    for (int source = 0; source < 2; source++) {
        cfx_context *ctx = cfx_context_new();
        gen_prog *g = malloc(sizeof *g);
        if (!CHECK(ctx && g)) {
            free(g);
            cfx_context_free(ctx);
            return;
        }
        for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
            char *err = NULL;
            int rc = source && k[i].src
                         ? cfx_register_source(ctx, k[i].name, k[i].signature, (cfx_op_form)k[i].form, k[i].src, &err)
                         : cfx_register_kernel(ctx, k[i].name, k[i].signature, binary_kernel, NULL, NULL, &err);
            if (!CHECK_INT(rc, 0))
                fprintf(stderr, "%s: %s\n", k[i].name, err ? err : "?");
            cfx_free(err);
        }
        for (size_t i = 0; i < sizeof call_programs / sizeof call_programs[0]; i++)
            compile_source_text(ctx, source ? "calls (source kernels)" : "calls (binary kernels)", call_programs[i], 0);
        for (uint64_t seed = 1; seed <= 3; seed++) {
            gen_make(g, seed);
            char *plain = gen_text(g), label[96];
            char *text = plain ? gen_inject(plain, seed, stmts, 4) : NULL;
            snprintf(label, sizeof label, "generated seed %llu with %s calls", (unsigned long long)seed,
                     source ? "source" : "binary");
            if (CHECK(text != NULL))
                compile_source_text(ctx, label, text, 0);
            free(plain);
            free(text);
        }
        free(g);
        cfx_context_free(ctx);
    }
    printf("NVRTC compiled %d kernels of programs that call application kernels\n", compiled_total - before);
}

static int compile_only(void)
{
    int generated = stress_run ? GENERATED_STRESS : GENERATED;
    char why[512];
    char *paths[512];
    if (!comp_nvrtc_available(why, sizeof why)) {
        printf("skipped: %s\n", why);
        return 77;
    }
    int n = test_graph_files(paths, 512);
    if (!CHECK(n >= 0))
        return test_finish("gpu_compiled --compile-only");
    /* the README's command compiles every other graph (the suite's time with CUDA present, on a
     * loaded machine, stays within its 5 minutes); --stress every one */
    int skipped = 0;
    for (int i = 0; i < n; i++) {
        char *text = !stress_run && i % 2 ? NULL : test_read_file(paths[i], NULL);
        if (!stress_run && i % 2)
            skipped++;
        else if (CHECK(text != NULL))
            compile_source_text(NULL, paths[i], text, 1);
        free(text);
        free(paths[i]);
    }
    if (skipped)
        printf("%d of %d graphs left to --stress\n", skipped, n);
    for (uint64_t seed = 0; seed < (uint64_t)generated; seed++) {
        gen_prog *g = malloc(sizeof *g);
        if (!CHECK(g != NULL))
            break;
        gen_make(g, seed);
        char *src = gen_text(g), label[64];
        snprintf(label, sizeof label, "generated seed %llu", (unsigned long long)seed);
        if (CHECK(src != NULL))
            compile_source_text(NULL, label, src, 0);
        free(src);
        free(g);
    }
    compile_calls();
    if (left_large)
        printf("%d programs of over %d records left to --stress\n", left_large, README_MAX_RECORDS);
    if (part_n > 1)
        printf("part %d of %d: builds %d, %d, %d, ... of the %d to machine code and of the %d to PTX\n", part_k,
               part_n, part_k, part_k + part_n, part_k + 2 * part_n, builds_seen[0], builds_seen[1]);
    printf("NVRTC compiled %d of %d kernels (graphs/ and %d generated programs, %s), %.0f ms each "
           "on average\n",
           compiled_ok, compiled_total, generated,
           stress_run ? "every form of each: structured for sm_90; as PTX, structured for compute_80 (graphs/), "
                        "and for compute_90 dispatch, tail-launching where a record ends the launch, with the timeline's stamps"
                      : "each in one of its forms, in turn (--stress: all)",
           compiled_ok ? compile_ms_total / compiled_ok : 0.0);
    if (compiled_kind[1])
        printf("to machine code: %d builds, %.1f s; to PTX: %d builds, %.1f s\n", compiled_kind[0],
               compile_ms_kind[0] / 1000, compiled_kind[1], compile_ms_kind[1] / 1000);
    if (compiled_ok)
        printf("the slowest: %s, %.0f ms\n", slowest, compile_ms_max);
    return test_finish("gpu_compiled --compile-only");
}

/* ==== on a device =========================================================================== */

static const char *counter =
    "graph counter(n: i32) -> (count: i32) {\n"
    "  count = 0\n"
    "  while count < n {\n"
    "    count = count + 1\n"
    "  }\n"
    "}\n";

/* 20000 prints of f32[16] (80 bytes each with its header): 1.6 MB, past the compiled kernel's
 * 1 MiB buffer, so its run ends and the interpreter runs the program again */
static const char *printer =
    "graph printer(n: i32) -> (s: f32) {\n"
    "  v = iota(f32[16])\n"
    "  s = 0.0\n"
    "  for i in range(0, n) {\n"
    "    v = v + 1.0\n"
    "    print(v, \"v\")\n"
    "    s = s + sum(v)\n"
    "  }\n"
    "}\n";

typedef struct printed {
    long n;
    char last[512];
    int out_of_order;
} printed;

static void count_line(void *user, const char *line)
{
    printed *p = (printed *)user;
    char want[64];
    /* the first element of the k-th print is k (iota starts at 0, plus one per iteration) */
    snprintf(want, sizeof want, "v: [%ld, ", p->n + 1);
    if (strncmp(line, want, strlen(want)) != 0)
        p->out_of_order = 1;
    p->n++;
    snprintf(p->last, sizeof p->last, "%s", line);
}

static cfx_exec *make(cfx_module *m, int32_t *n, void *out, size_t out_bytes, const char *out_name)
{
    char *err = NULL;
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CUDA_PERSISTENT, &err);
    if (!CHECK(e != NULL)) {
        fprintf(stderr, "%s\n", err ? err : "");
        cfx_free(err);
        return NULL;
    }
    CHECK_INT(cfx_bind(e, "n", n, sizeof *n), 0);
    CHECK_INT(cfx_bind(e, out_name, out, out_bytes), 0);
    return e;
}

static char *read_trace(cfx_exec *e, const char *path)
{
    CHECK_INT(cfx_set_trace(e, path), 0);
    CHECK_INT(cfx_run(e), CFX_OK);
    cfx_set_trace(e, NULL);
    return test_read_file(path, NULL);
}

static void test_modes_and_cache(const char *cache)
{
    char *diag = NULL, trace[512];
    int32_t n = 1000, count = -1;
    snprintf(trace, sizeof trace, "%s/trace.json", cache);
    setenv("CFX_KERNEL_CACHE", cache, 1);
    cfx_module *m = cfx_compile_string(NULL, "counter.cfx", counter, strlen(counter), &diag);
    if (!CHECK(m != NULL))
        return;
    /* the first executor compiles (a miss), the second finds it */
    for (int k = 0; k < 2; k++) {
        cfx_exec *e = make(m, &n, &count, sizeof count, "count");
        if (!e)
            break;
        CHECK_INT(cfx_set_persistent_mode(e, CFX_PERSISTENT_COMPILED), CFX_PERSISTENT_COMPILED);
        char *t = read_trace(e, trace);
        CHECK_INT(count, 1000);
        CHECK(t && strstr(t, "\"mode\":\"compiled\"") && strstr(t, "\"compile_ms\":"));
        CHECK(t && strstr(t, k == 0 ? "\"cache\":\"miss\"" : "\"cache\":\"hit\""));
        /* the kernel built with its stamps: a track per block, the loop's iterations on them (a
         * span from each one's stamp to the next: the loop's test) */
        CHECK(t && strstr(t, "\"block 0\"") && strstr(t, "\"loop test") && strstr(t, "\"host\""));
        CHECK(strncmp(cfx_exec_backend_detail(e), "compiled kernel: ", 17) == 0);
        free(t);
        /* forced to the interpreter, then back */
        CHECK_INT(cfx_set_persistent_mode(e, CFX_PERSISTENT_INTERP), CFX_PERSISTENT_INTERP);
        count = -1;
        t = read_trace(e, trace);
        CHECK_INT(count, 1000);
        /* the interpreter's trace: the loop as micro-ops, the path an untraced run takes */
        CHECK(t && !strstr(t, "\"mode\":\"compiled\"") && strstr(t, "\"micro-ops"));
        CHECK(strncmp(cfx_exec_backend_detail(e), "interpreter, as asked", 21) == 0);
        free(t);
        CHECK_INT(cfx_set_persistent_mode(e, CFX_PERSISTENT_COMPILED), CFX_PERSISTENT_COMPILED);
        CHECK_INT(cfx_set_persistent_mode(e, (cfx_persistent_mode)7), -1);
        cfx_exec_free(e);
    }
    /* no cache */
    setenv("CFX_KERNEL_CACHE", "off", 1);
    cfx_exec *e = make(m, &n, &count, sizeof count, "count");
    if (e) {
        CHECK_INT(cfx_set_persistent_mode(e, CFX_PERSISTENT_COMPILED), CFX_PERSISTENT_COMPILED);
        char *t = read_trace(e, trace);
        CHECK(t && strstr(t, "\"cache\":\"off\""));
        free(t);
        cfx_exec_free(e);
    }
    /* another backend has no modes */
    char *err = NULL;
    cfx_exec *c = cfx_exec_new(m, 0, CFX_BACKEND_CPU, &err);
    if (CHECK(c != NULL)) {
        CHECK_INT(cfx_set_persistent_mode(c, CFX_PERSISTENT_INTERP), -1);
        CHECK(strstr(cfx_exec_error(c), "no persistent modes") != NULL);
        cfx_exec_free(c);
    }
    cfx_free(err);
    cfx_module_free(m);
    remove(trace);
}

/* A graph that calls an application kernel runs on the compiled kernel, on both paths past
 * the CALL, and says so; with the kernel registered by its source, the call is inline. */
static int twice(void *user, void *stream, int nargs, const cfx_tensor *args, int nres,
                 cfx_tensor *res)
{
    (void)stream, (void)nargs, (void)args, (void)nres, (void)res;
    (*(int *)user)++; /* enqueues nothing: the result keeps what the arena holds */
    return 0;
}

static const char twice_src[] = "CFX_HD void twice(int64_t lo, int64_t hi, const float *x, float *y)\n"
                                "{\n    for (int64_t e = lo; e < hi; e++)\n        y[e] = 2.0f * x[e];\n}\n";

static void test_calls_compiled(void)
{
    static const char src[] = "graph g(n: i32) -> (y: f32[4]) {\n  y = twice(iota(f32[4]) + cast(n, f32))\n}\n";
    for (int source = 0; source < 2; source++) {
        char *err = NULL, *diag = NULL;
        int calls = 0;
        int32_t n = 3;
        float y[4] = {-1, -1, -1, -1};
        cfx_context *ctx = cfx_context_new();
        if (!CHECK(ctx != NULL))
            return;
        if (source)
            CHECK_INT(cfx_register_source(ctx, "twice", "(f32[4]) -> (f32[4])", CFX_OP_ELEMENTS, twice_src, &err), 0);
        else
            CHECK_INT(cfx_register_kernel(ctx, "twice", "(f32[4]) -> (f32[4])", NULL, twice, &calls, &err), 0);
        cfx_module *m = cfx_compile_string(ctx, "calls.cfx", src, strlen(src), &diag);
        for (int pause = 0; m && pause < 2; pause++) {
            cfx_exec *e = make(m, &n, y, sizeof y, "y");
            if (!e)
                break;
            if (pause)
                CHECK_INT(cfx_set_option(e, CFX_OPTION_DEVICE_LAUNCH, 0), 0);
            if (!CHECK_INT(cfx_set_persistent_mode(e, CFX_PERSISTENT_COMPILED), CFX_PERSISTENT_COMPILED))
                fprintf(stderr, "%s\n", cfx_exec_error(e));
            calls = 0;
            CHECK_INT(cfx_run(e), CFX_OK);
            const char *d = cfx_exec_backend_detail(e);
            printf("gpu_compiled: a %s kernel's call%s: %s\n", source ? "source" : "binary",
                   pause ? " (pause asked for)" : "", d);
            CHECK(strncmp(d, "compiled kernel: ", 17) == 0);
            if (source) {
                CHECK(strstr(d, "1 call of kernels registered by their source written inline") && !strstr(d, "ends the launch"));
                for (int i = 0; i < 4; i++)
                    CHECK_REAL(y[i], 2.0 * (i + n), 0.0);
            } else {
                CHECK(strstr(d, "1 record ends the launch") != NULL);
                CHECK(strstr(d, pause ? "pause and relaunch (pause and relaunch asked for" : "device graph launch") ||
                      (!pause && strstr(d, "pause and relaunch (device graph launch is not available")));
                CHECK_INT(calls, 1); /* called once at the pause, or captured once */
            }
            cfx_exec_free(e);
        }
        cfx_module_free(m);
        cfx_context_free(ctx);
        cfx_free(err);
        cfx_free(diag);
    }
}

static void test_print_overflow(void)
{
    char *diag = NULL;
    int32_t n = 20000;
    float s = -1, want = 0;
    printed p;
    cfx_module *m = cfx_compile_string(NULL, "printer.cfx", printer, strlen(printer), &diag);
    if (!CHECK(m != NULL))
        return;
    for (int32_t i = 1; i <= n;
         i++) /* sum over i of (i + 0) + ... + (i + 15), in f32 as cfx adds */
        want = want + (float)(16.0 * i + 120.0);
    cfx_exec *e = make(m, &n, &s, sizeof s, "s");
    if (e) {
        memset(&p, 0, sizeof p);
        cfx_set_print(e, count_line, &p);
        CHECK_INT(cfx_set_persistent_mode(e, CFX_PERSISTENT_COMPILED), CFX_PERSISTENT_COMPILED);
        CHECK_INT(cfx_run(e), CFX_OK);
        CHECK_INT(p.n, n);
        CHECK_INT(p.out_of_order, 0);
        CHECK_REAL(s, want, 1e-5);
        /* and a short run stays on the compiled kernel */
        n = 10;
        memset(&p, 0, sizeof p);
        CHECK_INT(cfx_run(e), CFX_OK);
        CHECK_INT(p.n, 10);
        cfx_exec_free(e);
    }
    cfx_module_free(m);
}

/* `cfx run` says which mode runs. */
static void test_cli(const char *dir)
{
    char cmd[2048], out[512];
    snprintf(out, sizeof out, "%s/cli.txt", dir);
    static const struct {
        const char *env, *args, *want;
    } cases[] = {
        {"", "", "cfx: backend cuda-persistent (compiled kernel: "},
        {"", "--persistent-mode interp", "cfx: backend cuda-persistent (interpreter, as asked"},
        {"CFX_NVRTC=none ", "",
         "cfx: backend cuda-persistent (interpreter: NVRTC is not available"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        snprintf(cmd, sizeof cmd,
                 "%s'%s' run '%s/graphs/if_in_while.cfx' --backend cuda-persistent %s "
                 "--in x=0 --in y=1 --in i=0 > '%s' 2>&1",
                 cases[k].env, CFX_BINARY, CFX_SOURCE_DIR, cases[k].args, out);
        int rc = system(cmd);
        char *text = test_read_file(out, NULL);
        CHECK_INT(rc, 0);
        if (!CHECK(text && strstr(text, cases[k].want) && strstr(text, "out = 5")))
            fprintf(stderr, "%s\n-> %s\n", cmd, text ? text : "(nothing)");
        free(text);
    }
    remove(out);
}

int main(int argc, char **argv)
{
    char why[512], dir[256];
    stress_run = test_stress(argc, argv);
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--part") == 0 &&
            (sscanf(argv[i + 1], "%d/%d", &part_k, &part_n) != 2 || part_n < 1 || part_k < 0 || part_k >= part_n)) {
            fprintf(stderr, "gpu_compiled: --part wants K/N with 0 <= K < N, got '%s'\n", argv[i + 1]);
            return 2;
        }
    if (argc > 1 && strcmp(argv[1], "--compile-only") == 0)
        return compile_only();
    if (!cfx_backend_available(CFX_BACKEND_CUDA_PERSISTENT, why, sizeof why)) {
        printf("skipped: %s\n", why);
        return 77;
    }
    if (!comp_nvrtc_available(why, sizeof why)) {
        printf("skipped: the device is here but %s\n", why);
        return 77;
    }
    if (test_workdir("gpu_compiled", dir, sizeof dir) != 0)
        return 1;
    test_modes_and_cache(dir);
    test_calls_compiled();
    test_print_overflow();
    test_cli(dir);
    test_workdir_remove(dir);
    return test_finish("gpu_compiled");
}
