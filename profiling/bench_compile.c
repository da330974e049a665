/* bench_compile.c: compile time and memory against program size.
 *
 *   build/profiling/bench_compile [--quick] [--repeats N] [--out FILE.md]
 *
 * Writes graphs of growing size in five shapes and compiles each (cfx_compile_file: parse,
 * check, lower and validate, the whole compiler) in a child process of its own, forked from
 * this small one, so the child's peak resident memory (wait4) is the compile's. Prints one
 * Markdown table, and writes it to FILE.md with --out:
 *
 * - statements: statements of the graph (an `if` and each statement in its arms count one);
 * - wall ms: the median compile time over the repeats (reading the file included);
 * - peak MiB: the child's peak resident memory, the largest over the repeats;
 * - bytes/stmt: (peak - the peak of a one-statement graph) / statements;
 * - time/stmt ratio: wall / statements, against the same figure at the shape's smallest size,
 *   measured in the same run. A compiler linear in the program's size keeps it near 1 (a
 *   little above as the working set outgrows the caches); a quadratic one doubles it at each
 *   doubling.
 *
 * Shapes: straight (y = y + x again and again), branches (an if/else and a new variable per
 * step: every if joins its paths), switch (one switch of N cases: the duplicate-case test),
 * loops (a for loop and a new variable per step), calls (a call of a two-statement graph per
 * step, inlined). Sizes double from 10,000 statements to 160,000 (from 2,500 with --quick),
 * a quarter of that for calls, whose inlined graph would pass the per-graph cap of 2^20 nodes. Linux and POSIX (fork, wait4). A benchmark, not a
 * test: it measures and checks only that every program compiles. */
#define _DEFAULT_SOURCE /* wait4 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "cfx.h"

/* Writes a graph of about n statements to f; returns its statement count. */
typedef long (*shape_fn)(FILE *f, long n);

static long straight(FILE *f, long n)
{
    fprintf(f, "graph g(x: i32) -> (y: i32) {\n  y = x\n");
    for (long k = 1; k < n; k++)
        fprintf(f, "  y = y + x\n");
    fprintf(f, "}\n");
    return n;
}

static long branches(FILE *f, long n)
{
    long s = 1;
    fprintf(f, "graph g(x: i32) -> (y: i32) {\n  y = x\n");
    for (long k = 0; s + 4 <= n; k++, s += 4)
        fprintf(f, "  if y > %ld { y = y - 1 } else { y = y + 2 }\n  t%ld = y * 3\n", k % 100, k);
    fprintf(f, "}\n");
    return s;
}

static long switches(FILE *f, long n)
{
    fprintf(f, "graph g(x: i32) -> (y: i32) {\n  switch x {\n");
    for (long k = 0; k < n - 1; k++)
        fprintf(f, "    case %ld { y = %ld }\n", k, k);
    fprintf(f, "    default { y = -1 }\n  }\n}\n");
    return n + 1;
}

static long loops(FILE *f, long n)
{
    long s = 1;
    fprintf(f, "graph g(x: i32) -> (y: i32) {\n  y = x\n");
    for (long k = 0; s + 2 <= n; k++, s += 2)
        fprintf(f, "  for i in range(0, x) { t%ld = y + i }\n", k);
    fprintf(f, "}\n");
    return s;
}

static long calls(FILE *f, long n)
{
    fprintf(f, "graph g(x: i32) -> (y: i32) {\n  y = x\n");
    for (long k = 1; k < n; k++)
        fprintf(f, "  y = f(y)\n");
    fprintf(f, "}\ngraph f(a: i32) -> (b: i32) {\n  b = a + 1\n  b = b * 3\n}\n");
    return n;
}

static const struct {
    const char *name;
    shape_fn fn;
    int scale; /* sizes are divided by this */
} shapes[] = {{"straight", straight, 1}, {"branches", branches, 1}, {"switch", switches, 1},
              {"loops", loops, 1}, {"calls", calls, 4}};

/* Compiles path in a child; wall seconds and the child's peak resident KiB. 0, or -1 when
 * the compile failed. */
static int compile_once(const char *path, double *wall, long *peak_kib)
{
    fflush(NULL);
    double t0 = bench_wall_s();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        char *diags = NULL;
        cfx_module *m = cfx_compile_file(NULL, path, &diags);
        if (!m)
            fprintf(stderr, "%.2000s", diags ? diags : "out of memory\n");
        _exit(m ? 0 : 1);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid)
        return -1;
    *wall = bench_wall_s() - t0;
    *peak_kib = ru.ru_maxrss;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Writes shape fn at size n to path and measures it: median wall, largest peak. */
static long measure(const char *path, shape_fn fn, long n, int repeats, double *wall, long *peak)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    long stmts = fn(f, n);
    if (fclose(f) != 0) {
        perror(path);
        exit(1);
    }
    double walls[64];
    *peak = 0;
    for (int r = 0; r < repeats; r++) {
        long p = 0;
        if (compile_once(path, &walls[r], &p) != 0) {
            fprintf(stderr, "bench_compile: a program of %ld statements did not compile\n", stmts);
            exit(1);
        }
        *peak = p > *peak ? p : *peak;
    }
    *wall = bench_median(walls, repeats);
    return stmts;
}

int main(int argc, char **argv)
{
    int repeats = 3, quick = 0;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out = argv[++i];
        else {
            fprintf(stderr, "usage: bench_compile [--quick] [--repeats N] [--out FILE.md]\n");
            return 2;
        }
    }
    if (repeats < 1 || repeats > 63)
        repeats = 3;
    char dir[] = "/tmp/bench_compile.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[64];
    snprintf(path, sizeof path, "%s/g.cfx", dir);
    FILE *md = out ? fopen(out, "w") : NULL;
    if (out && !md) {
        perror(out);
        return 1;
    }
    char cpu[200], date[32];
    bench_cpu_name(cpu, sizeof cpu);
    time_t t = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&t));
    double base_wall;
    long base_peak;
    measure(path, straight, 1, repeats > 5 ? repeats : 5, &base_wall, &base_peak);

    char text[512];
    FILE *sinks[2] = {stdout, md};
    snprintf(text, sizeof text,
             "Compile size, %s: %s, %ld cores. %d repeats (median wall time, largest peak).\n"
             "A one-statement graph: %.2f ms and %.1f MiB (its peak is subtracted for bytes/stmt).\n\n"
             "| shape | statements | wall ms | peak MiB | bytes/stmt | time/stmt ratio |\n"
             "| --- | ---: | ---: | ---: | ---: | ---: |\n",
             date, cpu, sysconf(_SC_NPROCESSORS_ONLN), repeats, base_wall * 1e3, (double)base_peak / 1024);
    for (int k = 0; k < 2; k++)
        if (sinks[k])
            fputs(text, sinks[k]);
    long first_n = quick ? 2500 : 10000;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        double first = 0;
        long n0 = first_n / shapes[s].scale;
        for (long n = n0; n <= n0 * 16; n *= 2) {
            double wall;
            long peak;
            long stmts = measure(path, shapes[s].fn, n, repeats, &wall, &peak);
            double per = wall / (double)stmts;
            if (first == 0)
                first = per;
            snprintf(text, sizeof text, "| %s | %ld | %.1f | %.1f | %.0f | %.2f |\n", shapes[s].name, stmts,
                     wall * 1e3, (double)peak / 1024, (double)(peak - base_peak) * 1024 / (double)stmts,
                     per / first);
            for (int k = 0; k < 2; k++)
                if (sinks[k]) {
                    fputs(text, sinks[k]);
                    fflush(sinks[k]);
                }
        }
    }
    if (md)
        fclose(md);
    unlink(path);
    rmdir(dir);
    return 0;
}
