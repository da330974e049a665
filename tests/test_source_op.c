/* test_source_op.c: ops registered by their source (cfx_register_source), on the cpu
 * executor: graphs that call them in loops give the values computed here by hand, a module
 * outlives the context that registered its ops, and every way a registration can go wrong
 * comes back from cfx_register_source with a message that names the op (a source that does
 * not compile, with the compiler's log; a missing function or one of another signature; a
 * name that is taken; a form the results do not fit; no C compiler). The generated code's
 * side (the C twin and the CUDA kernel on host threads) is test_gen's; the GPU's, gpu_compiled's.
 * An op's name is the user's and decides nothing in the generated kernel: one named like a
 * barrier (halve__syncthreads) gets the same block barriers as halve (cfx_dump_kernel).
 *
 * Skips (77) when the build found no C compiler: registering a source needs one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "testutil.h"

/* y = clamp(x, 0, 1) elementwise; the elements of [lo, hi) only */
static const char clip01_src[] =
    "CFX_HD void clip01(int64_t lo, int64_t hi, const float *x, float *y)\n"
    "{\n"
    "    for (int64_t e = lo; e < hi; e++)\n"
    "        y[e] = x[e] < 0.0f ? 0.0f : x[e] > 1.0f ? 1.0f : x[e];\n"
    "}\n";

/* the index of the largest element (the first of equals) and the sum, in one call; a helper
 * function of its own beside it */
static const char pick_src[] =
    "static inline float cfx_pick_sum(const float *x, int n)\n"
    "{\n"
    "    float s = 0.0f;\n"
    "    for (int i = 0; i < n; i++)\n"
    "        s += x[i];\n"
    "    return s;\n"
    "}\n"
    "CFX_HD void pick(const float *x, int32_t *best, float *sum)\n"
    "{\n"
    "    int32_t b = 0;\n"
    "    for (int32_t i = 1; i < 5; i++)\n"
    "        if (x[i] > x[b])\n"
    "            b = i;\n"
    "    *best = b;\n"
    "    *sum = cfx_pick_sum(x, 5);\n"
    "}\n";

/* an i64 scalar op that uses kernels.h's own body of integer power */
static const char cube_src[] =
    "CFX_HD void cube(int64_t lo, int64_t hi, const int64_t *x, int64_t *y)\n"
    "{\n"
    "    for (int64_t e = lo; e < hi; e++)\n"
    "        y[e] = k_pow_i64(x[e], 3);\n"
    "}\n";

static const char graph_src[] =
    "graph loop(x: f32[5], n: i32, k: i64) -> (y: f32[5], s: f32, best: i32, c: i64) {\n"
    "  y = x\n"
    "  s = 0.0\n"
    "  best = -1\n"
    "  c = k\n"
    "  for i in range(0, n) {\n"
    "    y = clip01(y * 2.0 - 0.25)\n"
    "    b, t = pick(y)\n"
    "    best = b\n"
    "    s = s + t\n"
    "    c = cube(c) % cast(1000003, i64)\n"
    "  }\n"
    "}\n";

static cfx_context *context_with_ops(void)
{
    cfx_context *ctx = cfx_context_new();
    char *err = NULL;
    if (!CHECK(ctx != NULL))
        return NULL;
    if (!CHECK_INT(cfx_register_source(ctx, "clip01", "(f32[5]) -> (f32[5])", CFX_OP_ELEMENTS, clip01_src, &err), 0) ||
        !CHECK_INT(cfx_register_source(ctx, "pick", "(f32[5]) -> (i32, f32)", CFX_OP_WHOLE, pick_src, &err), 0) ||
        !CHECK_INT(cfx_register_source(ctx, "cube", "(i64) -> (i64)", CFX_OP_ELEMENTS, cube_src, &err), 0)) {
        fprintf(stderr, "%s\n", err ? err : "(no message)");
        cfx_free(err);
    }
    return ctx;
}

/* The graph in C, by the rules of the language (f32 arithmetic, i64 wrapping). */
static void expected(const float *x, int32_t n, int64_t k, float *y, float *s, int32_t *best, int64_t *c)
{
    memcpy(y, x, 5 * sizeof *y);
    *s = 0.0f;
    *best = -1;
    *c = k;
    for (int32_t i = 0; i < n; i++) {
        float t = 0.0f;
        for (int e = 0; e < 5; e++) {
            float v = y[e] * 2.0f - 0.25f;
            y[e] = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
        }
        *best = 0;
        for (int e = 1; e < 5; e++)
            if (y[e] > y[*best])
                *best = e;
        for (int e = 0; e < 5; e++)
            t += y[e];
        *s = *s + t;
        *c = (int64_t)((uint64_t)*c * (uint64_t)*c * (uint64_t)*c) % 1000003;
    }
}

static void run_and_compare(cfx_module *m, int32_t n)
{
    char *err = NULL;
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, &err);
    float x[5] = {0.1f, -0.3f, 0.45f, 0.3f, 0.2f}, y[5], s = -1, wy[5], ws;
    int64_t k = 7, c = 0, wc;
    int32_t best = -9, wbest;
    if (!CHECK(e != NULL)) {
        fprintf(stderr, "%s\n", err ? err : "");
        cfx_free(err);
        return;
    }
    cfx_bind(e, "x", x, sizeof x);
    cfx_bind(e, "n", &n, sizeof n);
    cfx_bind(e, "k", &k, sizeof k);
    cfx_bind(e, "y", y, sizeof y);
    cfx_bind(e, "s", &s, sizeof s);
    cfx_bind(e, "best", &best, sizeof best);
    cfx_bind(e, "c", &c, sizeof c);
    CHECK_INT(cfx_run(e), CFX_OK);
    expected(x, n, k, wy, &ws, &wbest, &wc);
    for (int i = 0; i < 5; i++)
        CHECK(y[i] == wy[i]);
    CHECK(s == ws);
    CHECK_INT(best, wbest);
    CHECK(c == wc);
    CHECK_INT(cfx_exec_iterations(e), n);
    cfx_exec_free(e);
}

static void test_runs(void)
{
    cfx_context *ctx = context_with_ops();
    char *diag = NULL;
    if (!ctx)
        return;
    cfx_module *m = cfx_compile_string(ctx, "loop.cfx", graph_src, strlen(graph_src), &diag);
    /* the module keeps what it calls: the context may go first */
    cfx_context_free(ctx);
    if (!CHECK(m != NULL)) {
        fprintf(stderr, "%s", diag ? diag : "");
        cfx_free(diag);
        return;
    }
    run_and_compare(m, 0);
    run_and_compare(m, 1);
    run_and_compare(m, 6);
    /* the dump names the calls as for any kernel */
    char *dump = cfx_dump(m, 0);
    CHECK(dump && strstr(dump, "clip01") && strstr(dump, "pick"));
    cfx_free(dump);
    cfx_module_free(m);
}

/* cfx_register_source fails with a message holding each of `want` (NULL-terminated). */
static void refused(const char *name, const char *signature, cfx_op_form form, const char *source,
                    const char *const *want)
{
    cfx_context *ctx = cfx_context_new();
    char *err = NULL;
    if (!CHECK(ctx != NULL))
        return;
    CHECK_INT(cfx_register_kernel(ctx, "taken", "(f32) -> (f32)", NULL, NULL, NULL, &err), -1);
    cfx_free(err);
    err = NULL;
    CHECK_INT(cfx_register_source(ctx, "taken", "(f32) -> (f32)", CFX_OP_ELEMENTS,
                                  "CFX_HD void taken(int64_t lo, int64_t hi, const float *x, float *y) {}\n", &err),
              0);
    cfx_free(err);
    err = NULL;
    int rc = cfx_register_source(ctx, name, signature, form, source, &err);
    CHECK_INT(rc, -1);
    int all = err != NULL;
    for (int i = 0; all && want[i]; i++)
        all = strstr(err, want[i]) != NULL;
    if (!CHECK(all))
        fprintf(stderr, "registering '%s': \"%s\"\n", name, err ? err : "(no message)");
    cfx_free(err);
    cfx_context_free(ctx);
}

static void test_refusals(void)
{
    {
        const char *const want[] = {"op 'bad'", "does not compile", "CFX_HD void bad(int64_t lo, int64_t hi, const float *a0, float *r0)", "bad:", NULL};
        /* the log names the op's own line: "bad:2:..." */
        refused("bad", "(f32[4]) -> (f32[4])", CFX_OP_ELEMENTS,
                "CFX_HD void bad(int64_t lo, int64_t hi, const float *x, float *y)\n{ y[lo] = x[lo] +; }\n", want);
    }
    {
        const char *const want[] = {"op 'wrong'", "must define", "const double *a0", NULL};
        refused("wrong", "(f64[4]) -> (f64[4])", CFX_OP_ELEMENTS,
                "CFX_HD void wrong(int64_t lo, int64_t hi, const float *x, float *y)\n"
                "{ for (int64_t e = lo; e < hi; e++) y[e] = x[e]; }\n",
                want);
    }
    {
        const char *const want[] = {"op 'whole'", "must define", "CFX_HD void whole(const int32_t *a0, int32_t *r0)", NULL};
        /* an elements function where a whole one is declared */
        refused("whole", "(i32) -> (i32)", CFX_OP_WHOLE,
                "CFX_HD void whole(int64_t lo, int64_t hi, const int32_t *x, int32_t *y) { y[0] = x[0]; }\n", want);
    }
    {
        const char *const want[] = {"op 'missing'", "must define", NULL};
        refused("missing", "(i32) -> (i32)", CFX_OP_WHOLE, "CFX_HD void other(const int32_t *x, int32_t *y) { *y = *x; }\n",
                want);
    }
    {
        const char *const want[] = {"kernel 'taken' is already registered", NULL};
        refused("taken", "(f32) -> (f32)", CFX_OP_ELEMENTS, clip01_src, want);
    }
    {
        const char *const want[] = {"kernel name 'sum' is a built-in op", NULL};
        refused("sum", "(f32) -> (f32)", CFX_OP_ELEMENTS, clip01_src, want);
    }
    {
        const char *const want[] = {"'while' is reserved", NULL};
        refused("while", "(f32) -> (f32)", CFX_OP_ELEMENTS, clip01_src, want);
    }
    {
        const char *const want[] = {"op 'float'", "clashes with C", NULL};
        refused("float", "(f32) -> (f32)", CFX_OP_ELEMENTS, clip01_src, want);
    }
    {
        const char *const want[] = {"op 'int64_t'", "clashes with C", NULL};
        refused("int64_t", "(f32) -> (f32)", CFX_OP_ELEMENTS, clip01_src, want);
    }
    {
        const char *const want[] = {"op 'split'", "result 1 has 3 elements", NULL};
        refused("split", "(f32[4]) -> (f32[4], f32[3])", CFX_OP_ELEMENTS, clip01_src, want);
    }
    {
        const char *const want[] = {"op 'mixed'", "split it into two ops", NULL};
        refused("mixed", "(f32[4]) -> (f32[4], i32)", CFX_OP_WHOLE, clip01_src, want);
    }
    {
        const char *const want[] = {"op 'form'", "neither CFX_OP_ELEMENTS nor CFX_OP_WHOLE", NULL};
        refused("form", "(f32) -> (f32)", (cfx_op_form)7, clip01_src, want);
    }
    {
        const char *const want[] = {"'nul'", "the source is NULL", NULL};
        refused("nul", "(f32) -> (f32)", CFX_OP_ELEMENTS, NULL, want);
    }
    {
        const char *const want[] = {"kernel 'sig'", "bad signature", NULL};
        refused("sig", "(f32 -> (f32)", CFX_OP_ELEMENTS, clip01_src, want);
    }
    {
        /* no C compiler at run time: the message says what is needed and how to name one */
        cfx_context *ctx = cfx_context_new();
        char *err = NULL;
        setenv("CFX_CC", "/nonexistent/cfx-cc", 1);
        CHECK_INT(cfx_register_source(ctx, "clip01", "(f32[5]) -> (f32[5])", CFX_OP_ELEMENTS, clip01_src, &err), -1);
        unsetenv("CFX_CC");
        if (!CHECK(err && strstr(err, "op 'clip01'") && strstr(err, "needs a C compiler at run time") &&
                   strstr(err, "CFX_CC")))
            fprintf(stderr, "no compiler: \"%s\"\n", err ? err : "(no message)");
        cfx_free(err);
        cfx_context_free(ctx);
    }
    {
        char *err = NULL;
        CHECK_INT(cfx_register_source(NULL, "x", "(f32) -> (f32)", CFX_OP_ELEMENTS, clip01_src, &err), -1);
        CHECK(err && strstr(err, "cfx_register_source: the context is NULL"));
        cfx_free(err);
    }
}

/* The block barriers written into a kernel: its lines that are a __syncthreads statement. */
static int barrier_lines(const char *text)
{
    int n = 0;
    for (const char *l = text; l && *l;) {
        while (*l == ' ')
            l++;
        n += strncmp(l, "__syncthreads();", 16) == 0 || strncmp(l, "if (__syncthreads_or(", 21) == 0;
        l = strchr(l, '\n');
        l = l ? l + 1 : NULL;
    }
    return n;
}

/* The CUDA kernel of a one-block loop (block 0 alone runs it, with block barriers only: its
 * element store makes it one) that reads an element of y into a scalar, calls the op `name` on
 * it (every thread, on its registers) and then scales y by the result: the block's threads read
 * y[0] before some thread writes it, so a block barrier comes between them, whatever the op is
 * called. */
static char *kernel_calling(const char *name, int *barriers)
{
    char src[512], graph[512], *err = NULL, *diag = NULL, why[256] = "";
    cfx_context *ctx = cfx_context_new();
    *barriers = -1;
    if (!CHECK(ctx != NULL))
        return NULL;
    snprintf(src, sizeof src,
             "CFX_HD void %s(int64_t lo, int64_t hi, const float *x, float *y)\n"
             "{\n"
             "    for (int64_t e = lo; e < hi; e++)\n"
             "        y[e] = x[e] * 0.5f;\n"
             "}\n", name);
    snprintf(graph, sizeof graph,
             "graph g(x: f32[8], n: i32) -> (y: f32[8]) {\n"
             "  y = x\n"
             "  for i in range(0, n) {\n"
             "    h = %s(y[0])\n"
             "    y = y * h\n"
             "    y[1] = h\n"
             "  }\n"
             "}\n", name);
    if (!CHECK_INT(cfx_register_source(ctx, name, "(f32) -> (f32)", CFX_OP_ELEMENTS, src, &err), 0)) {
        fprintf(stderr, "%s\n", err ? err : "(no message)");
        cfx_free(err);
        cfx_context_free(ctx);
        return NULL;
    }
    cfx_module *m = cfx_compile_string(ctx, "barrier_name.cfx", graph, strlen(graph), &diag);
    cfx_context_free(ctx);
    if (!CHECK(m != NULL)) {
        fprintf(stderr, "%s", diag ? diag : "");
        cfx_free(diag);
        return NULL;
    }
    char *kernel = cfx_dump_kernel(m, 0, "cuda", why, sizeof why);
    if (!CHECK(kernel != NULL))
        fprintf(stderr, "cfx_dump_kernel: %s\n", why);
    else
        *barriers = barrier_lines(kernel);
    CHECK(kernel && strstr(kernel, "/* a one-block region: records ")); /* the loop runs on one block */
    cfx_module_free(m);
    return kernel;
}

static void test_barrier_name(void)
{
    int plain = -1, named = -1;
    char *a = kernel_calling("halve", &plain);
    char *b = kernel_calling("halve__syncthreads", &named);
    /* the write of y after the read of y[0], in the loop: a barrier between them */
    CHECK(a && strstr(a, "__syncthreads(); /* the reads of the block's threads above, then the writes below */"));
    CHECK(b && strstr(b, "__syncthreads(); /* the reads of the block's threads above, then the writes below */"));
    if (!CHECK(plain > 0 && named == plain))
        fprintf(stderr, "block barriers: %d with halve, %d with halve__syncthreads\n", plain, named);
    cfx_free(a);
    cfx_free(b);
}

int main(void)
{
    if (!CFX_CC[0]) {
        printf("skipped: the build found no C compiler, which registering an op by its source needs\n");
        return 77;
    }
    test_runs();
    test_refusals();
    test_barrier_name();
    return test_finish("test_source_op");
}
