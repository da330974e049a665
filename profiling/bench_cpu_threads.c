/* bench_cpu_threads.c: what the cpu executor's threads (CFX_OPTION_THREADS) buy, op by op and
 * size by size, and what an element of each op costs on one core (the basis of the split sizes
 * in host/runtime/cpu.c, split_min, and cpu_linalg.c).
 *
 * For each op below and each size N (a tensor of N elements, [N / 1024, 1024]), compiles (through
 * the public API) a graph that evaluates the op over the tensor `steps` times (steps * N about
 * 2^24 elements in all), and times it with 1 thread and with T threads (default 2), alternating
 * the two so that both see the same load. Prints per element the medians and their ratio, then
 * the best runs' (the fastest of RUNS: what a run gets when no other process takes the cores):
 *     OP N MEDIAN_NS_1 MEDIAN_NS_T SPEEDUP BEST_NS_1 BEST_NS_T SPEEDUP
 * Wall time, so the threads' work counts once. T = 1 runs both sides on one thread: the ratios
 * then show the noise of the machine's load.
 *
 * usage: bench_cpu_threads [T] [RUNS] [N...]   (N a multiple of 1024; default 65536 and 1048576)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cfx.h"

/* op, the result's dtype (the shape is x's, "T" transposed, "S" a scalar), the expression */
static const struct {
    const char *op, *dtype, *shape, *expr;
} ops[] = {
    {"add", "f32", "", "x + y"},
    {"mul", "f32", "", "x * y"},
    {"div", "f32", "", "x / y"},
    {"lt", "bool", "", "x < y"},
    {"max", "f32", "", "max(x, y)"},
    {"neg", "f32", "", "-x"},
    {"sqrt", "f32", "", "sqrt(x)"},
    {"floor", "f32", "", "floor(x)"},
    {"cast", "i32", "", "cast(x, i32)"},
    {"where", "f32", "", "where(b, x, y)"},
    {"transpose", "f32", "T", "transpose(x)"},
    {"exp", "f32", "", "exp(x)"},
    {"log", "f32", "", "log(x)"},
    {"tanh", "f32", "", "tanh(x)"},
    {"pow", "f32", "", "x ** y"},
    {"floordiv", "f32", "", "x // y"},
    {"bcast-add", "f32", "", "x + y[0]"},
    {"sum", "f32", "S", "sum(x)"},
    {"max-red", "f32", "S", "max(x)"},
};

static int bench(int o, long n, int threads, int runs)
{
    long rows = n / 1024;
    char src[1024], out[64];
    if (strcmp(ops[o].shape, "S") == 0)
        snprintf(out, sizeof out, "%s", ops[o].dtype);
    else if (strcmp(ops[o].shape, "T") == 0)
        snprintf(out, sizeof out, "%s[1024, %ld]", ops[o].dtype, rows);
    else
        snprintf(out, sizeof out, "%s[%ld, 1024]", ops[o].dtype, rows);
    snprintf(src, sizeof src,
             "graph g(x: f32[%ld, 1024], y: f32[%ld, 1024], b: bool[%ld, 1024], steps: i32) -> (z: %s) {\n"
             "  z = %s\n"
             "  for i in range(steps) {\n"
             "    z = %s\n"
             "  }\n"
             "}\n",
             rows, rows, rows, out, ops[o].expr, ops[o].expr);
    char *diag = NULL, *err = NULL;
    cfx_module *m = cfx_compile_string(NULL, "threads.cfx", src, strlen(src), &diag);
    cfx_exec *e[2] = {NULL, NULL};
    float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
    uint8_t *b = malloc((size_t)n);
    void *z = malloc(sizeof(float) * (size_t)n);
    double *t[2] = {malloc(sizeof(double) * (size_t)runs), malloc(sizeof(double) * (size_t)runs)};
    int rc = 1;
    int32_t steps = (int32_t)((1L << 24) / n > 0 ? (1L << 24) / n : 1);
    if (!m || !x || !y || !b || !z || !t[0] || !t[1]) {
        fprintf(stderr, "bench_cpu_threads: %s", diag ? diag : "out of memory\n");
        goto done;
    }
    for (long i = 0; i < n; i++) {
        x[i] = 0.001f + (float)((i * 7919) % 1000) / 1000.0f;
        y[i] = 0.5f + (float)(i % 13) / 100.0f;
        b[i] = (uint8_t)(i % 3 == 0);
    }
    size_t zbytes = strcmp(ops[o].shape, "S") == 0 ? 4 : strcmp(ops[o].dtype, "bool") == 0 ? (size_t)n : 4 * (size_t)n;
    for (int k = 0; k < 2; k++) {
        e[k] = cfx_exec_new(m, cfx_graph_find(m, NULL), CFX_BACKEND_CPU, &err);
        if (!e[k] || cfx_set_option(e[k], CFX_OPTION_THREADS, k == 0 ? 1 : threads) ||
            cfx_bind(e[k], "x", x, sizeof(float) * (size_t)n) || cfx_bind(e[k], "y", y, sizeof(float) * (size_t)n) ||
            cfx_bind(e[k], "b", b, (size_t)n) || cfx_bind(e[k], "steps", &steps, sizeof steps) ||
            cfx_bind(e[k], "z", z, zbytes)) {
            fprintf(stderr, "bench_cpu_threads: %s\n", e[k] ? cfx_exec_error(e[k]) : err);
            goto done;
        }
        cfx_run(e[k]); /* warm up: the arena, the workers */
    }
    for (int r = 0; r < runs; r++)
        for (int k = 0; k < 2; k++) {
            double t0 = bench_wall_s();
            if (cfx_run(e[k]) != CFX_OK) {
                fprintf(stderr, "bench_cpu_threads: %s\n", cfx_exec_message(e[k]));
                goto done;
            }
            t[k][r] = bench_wall_s() - t0;
        }
    double per = (double)(steps + 1) * (double)n;
    double a = bench_median(t[0], runs) / per * 1e9, c = bench_median(t[1], runs) / per * 1e9;
    double a0 = bench_quantile(t[0], runs, 0.0) / per * 1e9, c0 = bench_quantile(t[1], runs, 0.0) / per * 1e9;
    printf("%-10s %8ld %8.3f %8.3f %6.2f %8.3f %8.3f %6.2f\n", ops[o].op, n, a, c, a / c, a0, c0, a0 / c0);
    fflush(stdout);
    rc = 0;
done:
    cfx_exec_free(e[0]);
    cfx_exec_free(e[1]);
    cfx_module_free(m);
    cfx_free(diag);
    cfx_free(err);
    free(x);
    free(y);
    free(b);
    free(z);
    free(t[0]);
    free(t[1]);
    return rc;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    long sizes[16] = {65536, 1048576};
    int nsizes = 2;
    if (argc > 3) {
        nsizes = 0;
        for (int i = 3; i < argc && nsizes < 16; i++)
            sizes[nsizes++] = strtol(argv[i], NULL, 10);
    }
    int bad = threads < 1 || threads > 256 || runs < 1 || runs > 101;
    for (int i = 0; i < nsizes; i++)
        bad |= sizes[i] < 1024 || sizes[i] % 1024 != 0 || sizes[i] > (1L << 26);
    if (bad) {
        fprintf(stderr, "usage: bench_cpu_threads [T (1..256)] [RUNS (1..101)] [N (multiples of 1024)...]\n");
        return 1;
    }
    char cpu[128];
    bench_cpu_name(cpu, sizeof cpu);
    printf("# %s; 1 thread against %d; ns per element, median and best of %d runs\n", cpu, threads, runs);
    printf("%-10s %8s %8s %8s %6s %8s %8s %6s\n", "op", "N", "med t=1", "med t=T", "1/T", "best t=1",
           "best t=T", "1/T");
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (int i = 0; i < nsizes; i++)
            if (bench((int)o, sizes[i], threads, runs))
                return 1;
    return 0;
}
