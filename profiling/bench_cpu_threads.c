/* bench_cpu_threads.c: what the cpu executor's threads (CFX_OPTION_THREADS) buy, by tensor size.
 *
 * For each size N and each loop body below, compiles (through the public API) a graph that runs
 * the body `steps` times over f32[N] tensors (steps * N about 2^25 elements in all), and times
 * it with 1 thread and with T threads (default 2), alternating the two so that both see the same
 * load, and prints per element of the loop the medians and their ratio, then the best runs'
 * (the fastest of RUNS, what a run gets when no other process takes the cores) and theirs:
 *     KIND N MEDIAN_NS_1 MEDIAN_NS_T SPEEDUP BEST_NS_1 BEST_NS_T SPEEDUP
 * The bodies: `z = z * y + x` (two elementwise records), `z = exp(x) * y` (two, one of them
 * heavier), `s = s + sum(x)` (a reduction, fast mode). Wall time (the threads' work counts once).
 *
 * T = 1 runs both sides on one thread: the ratios then show the noise of the machine's load.
 *
 * usage: bench_cpu_threads [T] [RUNS] [N...]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cfx.h"

static const struct {
    const char *kind, *body;
} loops[] = {
    {"mul-add", "  z = x\n  for i in range(steps) {\n    z = z * y + x\n  }\n"},
    {"exp-mul", "  z = x\n  for i in range(steps) {\n    z = exp(x) * y\n  }\n"},
    {"sum", "  z = x\n  s = 0.0\n  for i in range(steps) {\n    s = s + sum(x)\n  }\n  z = z * s\n"},
};

static int bench(const char *kind, const char *body, long n, int threads, int runs)
{
    char src[1024];
    snprintf(src, sizeof src, "graph g(x: f32[%ld], y: f32[%ld], steps: i32) -> (z: f32[%ld]) {\n%s}\n",
             n, n, n, body);
    char *diag = NULL, *err = NULL;
    cfx_module *m = cfx_compile_string(NULL, "threads.cfx", src, strlen(src), &diag);
    cfx_exec *e[2] = {NULL, NULL};
    float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
    float *z = malloc(sizeof(float) * (size_t)n);
    double *t[2] = {malloc(sizeof(double) * (size_t)runs), malloc(sizeof(double) * (size_t)runs)};
    int rc = 1;
    int32_t steps = (int32_t)((1L << 25) / n > 0 ? (1L << 25) / n : 1);
    if (!m || !x || !y || !z || !t[0] || !t[1]) {
        fprintf(stderr, "bench_cpu_threads: %s", diag ? diag : "out of memory\n");
        goto done;
    }
    for (long i = 0; i < n; i++) {
        x[i] = (float)((i * 7919) % 1000) / 1000.0f;
        y[i] = 0.5f + (float)(i % 13) / 100.0f;
    }
    for (int k = 0; k < 2; k++) {
        e[k] = cfx_exec_new(m, cfx_graph_find(m, NULL), CFX_BACKEND_CPU, &err);
        if (!e[k] || cfx_set_option(e[k], CFX_OPTION_THREADS, k == 0 ? 1 : threads) ||
            cfx_bind(e[k], "x", x, sizeof(float) * (size_t)n) || cfx_bind(e[k], "y", y, sizeof(float) * (size_t)n) ||
            cfx_bind(e[k], "steps", &steps, sizeof steps) || cfx_bind(e[k], "z", z, sizeof(float) * (size_t)n)) {
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
    double per = (double)steps * (double)n;
    double a = bench_median(t[0], runs) / per * 1e9, b = bench_median(t[1], runs) / per * 1e9;
    double a0 = bench_quantile(t[0], runs, 0.0) / per * 1e9, b0 = bench_quantile(t[1], runs, 0.0) / per * 1e9;
    printf("%-8s %9ld %8.3f %8.3f %6.2f %8.3f %8.3f %6.2f\n", kind, n, a, b, a / b, a0, b0, a0 / b0);
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
    free(z);
    free(t[0]);
    free(t[1]);
    return rc;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    static const long sizes[] = {4096, 16384, 32768, 65536, 131072, 262144, 1048576, 4194304};
    if (threads < 1 || threads > 256 || runs < 1 || runs > 101) {
        fprintf(stderr, "usage: bench_cpu_threads [T (1..256)] [RUNS (1..101)] [N...]\n");
        return 1;
    }
    char cpu[128];
    bench_cpu_name(cpu, sizeof cpu);
    printf("# %s; 1 thread against %d; ns per element of the loop, median and best of %d runs\n", cpu,
           threads, runs);
    printf("%-8s %9s %8s %8s %6s %8s %8s %6s\n", "kind", "N", "med t=1", "med t=T", "1/T", "best t=1",
           "best t=T", "1/T");
    for (size_t l = 0; l < sizeof loops / sizeof loops[0]; l++) {
        if (argc > 3) {
            for (int i = 3; i < argc; i++)
                if (bench(loops[l].kind, loops[l].body, strtol(argv[i], NULL, 10), threads, runs))
                    return 1;
        } else {
            for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
                if (bench(loops[l].kind, loops[l].body, sizes[i], threads, runs))
                    return 1;
        }
    }
    return 0;
}
