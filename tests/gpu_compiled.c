/* gpu_compiled.c: the compiled mode of the cuda-persistent executor (device/compiled.cu).
 *
 * `gpu_compiled --compile-only` (a cpu test): NVRTC compiles the generated kernel of every
 * graph in graphs/ and of generated programs, with no device: the generated CUDA C is valid
 * and NVRTC takes the headers the module carries. A program the generator refuses fails, as
 * one NVRTC rejects does. Each NVRTC compilation takes a second or more of a core, so by
 * default every graph is compiled in one of the three forms (structured and as the pc-dispatch
 * loop for sm_90, structured for sm_80), in turn, and 6 generated programs in one of two;
 * `--compile-only --stress` (label stress) compiles every graph in all three and 12 generated
 * programs in both of theirs. Skips (77) where NVRTC cannot be loaded.
 *
 * `gpu_compiled` (a gpu test, 77 without a device): what only a device shows. Results of both
 * modes against the cpu executor are gpu_executors' and gpu_persistent's business (they run
 * every program in both modes); this file checks the mode itself: cfx_set_persistent_mode
 * reports the compiled kernel for a graph and the interpreter for one that calls an application
 * kernel, with the reason; the cache serves a second executor of the same graph (the trace
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
#include "compile.h"
#include "compiled.h"
#include "gen_programs.h"
#include "testutil.h"

#define GENERATED 6
#define GENERATED_STRESS 12

/* ==== compile only ========================================================================= */

static int compiled_ok, compiled_total;
static double compile_ms_total;

/* Structured and dispatch for sm_90; `both` adds the structured form for sm_80. Without
 * --stress, only form `turn` % (2 or 3) of those. */
static int stress_run;
static void compile_prog(const cfx_prog *p, const char *label, int both, int turn)
{
    static const int archs[3] = {90, 90, 80}, forms[3] = {0, 1, 0};
    int nforms = both ? 3 : 2;
    for (int k = 0; k < nforms; k++) {
        if (!stress_run && k != turn % nforms)
            continue;
        char err[1024];
        size_t bytes = 0;
        double ms = 0;
        compiled_total++;
        if (comp_build(p, archs[k], forms[k], &bytes, &ms, err, sizeof err) != 0) {
            /* a refusal too (a record kind the generator does not know): every graph here is
             * one the compiled kernel must run */
            fprintf(stderr, "%s (sm_%d, %s): %s\n", label, archs[k],
                    forms[k] ? "dispatch" : "structured", err);
            CHECK(0);
            continue;
        }
        CHECK(bytes > 0);
        compiled_ok++;
        compile_ms_total += ms;
    }
}

static int turns; /* programs compiled so far: whose form is next */
static void compile_source_text(const char *label, const char *text, int both)
{
    compiled_module cm;
    char *diags = NULL;
    if (compile_source(NULL, label, text, strlen(text), &cm, &diags) != 0) {
        free(diags); /* a file of `# error:` cases */
        return;
    }
    for (int g = 0; g < cm.ngraphs; g++) {
        char what[512];
        snprintf(what, sizeof what, "%.300s: graph %s", label, cm.graphs[g].name);
        compile_prog(cm.graphs[g].prog, what, both, turns++);
    }
    compiled_module_free(&cm);
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
    for (int i = 0; i < n; i++) {
        char *text = test_read_file(paths[i], NULL);
        if (CHECK(text != NULL))
            compile_source_text(paths[i], text, 1);
        free(text);
        free(paths[i]);
    }
    for (uint64_t seed = 0; seed < (uint64_t)generated; seed++) {
        gen_prog *g = malloc(sizeof *g);
        if (!CHECK(g != NULL))
            break;
        gen_make(g, seed);
        char *src = gen_text(g), label[64];
        snprintf(label, sizeof label, "generated seed %llu", (unsigned long long)seed);
        if (CHECK(src != NULL))
            compile_source_text(label, src, 0);
        free(src);
        free(g);
    }
    printf("NVRTC compiled %d of %d kernels (graphs/ and %d generated programs, %s), %.0f ms each "
           "on average\n",
           compiled_ok, compiled_total, generated,
           stress_run ? "structured and dispatch for sm_90, structured for sm_80 too for graphs/"
                      : "each in one of its forms, in turn (--stress: all)",
           compiled_ok ? compile_ms_total / compiled_ok : 0.0);
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
        CHECK(strncmp(cfx_exec_backend_detail(e), "compiled kernel: ", 17) == 0);
        free(t);
        /* forced to the interpreter, then back */
        CHECK_INT(cfx_set_persistent_mode(e, CFX_PERSISTENT_INTERP), CFX_PERSISTENT_INTERP);
        count = -1;
        t = read_trace(e, trace);
        CHECK_INT(count, 1000);
        CHECK(t && !strstr(t, "\"mode\":\"compiled\"") && strstr(t, "BINARY"));
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

/* A graph that calls an application kernel runs on the interpreter, which says why. */
static int twice(void *user, void *stream, int nargs, const cfx_tensor *args, int nres,
                 cfx_tensor *res)
{
    return 0; /* never run: the test only asks for the mode */
}

static void test_call_falls_back(void)
{
    static const char src[] = "graph g(n: i32) -> (y: f32[4]) {\n  y = twice(zeros(f32[4]))\n}\n";
    char *err = NULL, *diag = NULL;
    cfx_context *ctx = cfx_context_new();
    if (!CHECK(ctx != NULL))
        return;
    CHECK_INT(cfx_register_kernel(ctx, "twice", "(f32[4]) -> (f32[4])", NULL, twice, NULL, &err),
              0);
    cfx_module *m = cfx_compile_string(ctx, "calls.cfx", src, strlen(src), &diag);
    if (CHECK(m != NULL)) {
        cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CUDA_PERSISTENT, &err);
        if (CHECK(e != NULL)) {
            CHECK_INT(cfx_set_persistent_mode(e, CFX_PERSISTENT_COMPILED), CFX_PERSISTENT_INTERP);
            CHECK(strstr(cfx_exec_error(e), "CALL of application kernel 'twice'") != NULL);
            cfx_exec_free(e);
        }
    }
    cfx_module_free(m);
    cfx_context_free(ctx);
    cfx_free(err);
    cfx_free(diag);
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
    test_call_falls_back();
    test_print_overflow();
    test_cli(dir);
    test_workdir_remove(dir);
    return test_finish("gpu_compiled");
}
