/* bench_cpu_loop.c: the cost of control on the CPU executor, per loop iteration.
 *
 * Compiles, through the public API as an application would, the scalar loop
 *     while i < n { s = s + i % 7; i = i + 1 }
 * and times the cpu backend over n iterations (default 10^7), several runs, and prints the
 * median as one line that bench_cpu.sh reads:
 *     cfx-cpu N NS_PER_ITERATION S
 * (S, the result, is printed so that the work cannot be skipped and can be checked: it is
 * the sum of i % 7 for i < n, wrapped to i32.) profiling/loops.lua's counter is the same loop
 * in Lua.
 *
 * usage: bench_cpu_loop [N] [RUNS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "cfx.h"

static const char *source =
    "graph loop(n: i32) -> (s: i32) {\n"
    "  s = 0\n"
    "  i = 0\n"
    "  while i < n {\n"
    "    s = s + i % 7\n"
    "    i = i + 1\n"
    "  }\n"
    "}\n";

/* Processor time of this process, like Lua's os.clock(), so that both sides of the comparison
 * are measured the same way and neither counts time the machine gave to other processes (the
 * run is synchronous and single-threaded on the cpu backend). */
int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 10000000L;
    int runs = argc > 2 ? atoi(argv[2]) : 7;
    if (n < 1 || n > 2000000000L || runs < 1 || runs > 101) {
        fprintf(stderr, "usage: bench_cpu_loop [N (1..2e9)] [RUNS (1..101)]\n");
        return 1;
    }
    char *diag = NULL, *err = NULL;
    int rc = 1;
    cfx_exec *e = NULL;
    double *times = malloc(sizeof(double) * (size_t)runs);
    cfx_module *m = cfx_compile_string(NULL, "loop.cfx", source, strlen(source), &diag);
    if (!m || !times) {
        fprintf(stderr, "bench_cpu_loop: %s", diag ? diag : "out of memory\n");
        goto done;
    }
    e = cfx_exec_new(m, cfx_graph_find(m, NULL), CFX_BACKEND_CPU, &err);
    if (!e) {
        fprintf(stderr, "bench_cpu_loop: %s\n", err ? err : "no executor");
        goto done;
    }
    int32_t nv = (int32_t)n, s = 0;
    if (cfx_bind(e, "n", &nv, sizeof nv) || cfx_bind(e, "s", &s, sizeof s)) {
        fprintf(stderr, "bench_cpu_loop: %s\n", cfx_exec_error(e));
        goto done;
    }
    cfx_run(e); /* warm up: page in the code and the arena */
    for (int r = 0; r < runs; r++) {
        double t0 = bench_cpu_s();
        cfx_status st = cfx_run(e);
        times[r] = bench_cpu_s() - t0;
        if (st != CFX_OK) {
            fprintf(stderr, "bench_cpu_loop: run %d ended %s: %s\n", r, cfx_status_name(st),
                    cfx_exec_message(e));
            goto done;
        }
    }
    printf("cfx-cpu %ld %.2f %d\n", n, bench_median(times, runs) / (double)n * 1e9, s);
    rc = 0;
done:
    cfx_exec_free(e);
    cfx_module_free(m);
    cfx_free(diag);
    cfx_free(err);
    free(times);
    return rc;
}
