/* bench.h: the clocks and the order statistics every benchmark in profiling/ reads its
 * figures with, so that "median" means one thing in every table, and the CPU's name for their
 * headers. Header-only; C and CUDA C.
 */
#ifndef CFX_BENCH_H
#define CFX_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Seconds on the monotonic wall clock. */
static inline double bench_wall_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Seconds of CPU this process has used: for loops on the host, where a shared machine's
 * other tenants should not count. */
static inline double bench_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile q (0 .. 1) of the sorted v[0..n), n >= 1, interpolated linearly between the two
 * nearest values. */
static inline double bench_quantile(const double *v, int n, double q)
{
    double pos = q * (n - 1);
    int i = (int)pos;
    if (i >= n - 1)
        return v[n - 1];
    return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

/* Sorts v[0..n) in place and returns its median (the mean of the middle two for even n). */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return bench_quantile(v, n, 0.5);
}

/* The CPU's model name (/proc/cpuinfo), or "?", for a table's header. */
static inline void bench_cpu_name(char *buf, size_t n)
{
    snprintf(buf, n, "?");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        char *c = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && c) {
            snprintf(buf, n, "%s", c + 2);
            buf[strcspn(buf, "\n")] = '\0';
            break;
        }
    }
    if (f)
        fclose(f);
}

#endif
