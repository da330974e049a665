/* test_soak.c: cfx in a long-running application, through the C API (issue 36). One executor
 * runs a small graph again and again (runs that end, and runs stopped by the iteration budget),
 * and modules are compiled, run once and freed again and again: after a warm-up, resident
 * memory stays flat (within 1 MiB, read from /proc/self/statm) and no file descriptor
 * (/proc/self/fd) or thread (/proc/self/task) is left behind. Each result is checked against a
 * value worked out by hand, so a run that silently did nothing cannot pass.
 *
 * Sizes: 10,000 runs and 200 compile cycles for the README's test command; 100,000 and 1,000
 * with --stress (label stress, CFX_STRESS=1 ctest -L stress). Linux only (/proc); elsewhere it
 * skips (77). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfx.h"
#include "testutil.h"

#define MIB (1024.0 * 1024.0)

/* Under AddressSanitizer freed memory waits in a quarantine, so resident memory grows by design:
 * there the sanitizer's own leak check stands in for the 1 MiB bound. */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_BOUND_CHECKED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RSS_BOUND_CHECKED 0
#endif
#endif
#ifndef RSS_BOUND_CHECKED
#define RSS_BOUND_CHECKED 1
#endif

/* s = sum over i < n of (x[i % 4] * 2 + 1): for x = [1, 2, 3, 4] and n = 8, 2 * (2 * 10) + 8 = 48 */
static const char SRC[] = "graph soak(x: f32[4], n: i32) -> (s: f32, y: f32[4]) {\n"
                          "  s = 0.0\n"
                          "  y = x * 2.0 + 1.0\n"
                          "  for i in range(n) {\n"
                          "    s = s + y[i % 4]\n"
                          "  }\n"
                          "}\n";

/* Resident memory in bytes, or -1 where /proc/self/statm cannot be read. */
static double resident_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    long size = 0, resident = 0;
    int n = fscanf(f, "%ld %ld", &size, &resident);
    fclose(f);
    return n == 2 ? (double)resident * (double)sysconf(_SC_PAGESIZE) : -1;
}

/* Entries of a /proc folder (open file descriptors, threads), or -1. */
static int count_entries(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* opendir's own descriptor, for /proc/self/fd (one thread reads: harmless) */
}

static cfx_module *compile_soak(void)
{
    char *diags = NULL;
    cfx_module *m = cfx_compile_string(NULL, "soak.cfx", SRC, strlen(SRC), &diags);
    if (!m)
        fprintf(stderr, "%s", diags ? diags : "compile failed\n");
    cfx_free(diags);
    return m;
}

/* One run of e over x and n; 0 when the status and the results are what they should be. */
static int run_once(cfx_exec *e, int32_t n, int stop)
{
    float x[4] = {1, 2, 3, 4}, y[4] = {0}, s = -1;
    if (cfx_bind(e, "x", x, sizeof x) != 0 || cfx_bind(e, "n", &n, sizeof n) != 0 ||
        cfx_bind(e, "s", &s, sizeof s) != 0 || cfx_bind(e, "y", y, sizeof y) != 0)
        return -1;
    cfx_set_max_iters(e, stop ? 3 : 0);
    cfx_status st = cfx_run(e);
    cfx_unbind(e, NULL);
    if (stop) /* the budget of 3 stops the loop of 8 before its 4th iteration: no results */
        return st == CFX_STOP_LIMIT && cfx_exec_iterations(e) == 3 && s == -1 ? 0 : -1;
    /* y = [3, 5, 7, 9]; s = n / 4 rounds of 24 (n a multiple of 4) */
    return st == CFX_OK && y[0] == 3 && y[3] == 9 && s == 24.0f * (float)(n / 4) ? 0 : -1;
}

static void soak_runs(int runs)
{
    cfx_module *m = compile_soak();
    if (!CHECK(m != NULL))
        return;
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, NULL);
    if (!CHECK(e != NULL)) {
        cfx_module_free(m);
        return;
    }
    int warm = runs / 10, bad = 0;
    double before = 0, peak = 0;
    int fds = 0, threads = 0;
    for (int i = 0; i < runs; i++) {
        if (i == warm) {
            before = resident_bytes();
            fds = count_entries("/proc/self/fd");
            threads = count_entries("/proc/self/task");
        }
        bad += run_once(e, 8, i % 7 == 3) != 0;
        if (i >= warm && i % 500 == 0) {
            double now = resident_bytes();
            peak = now > peak ? now : peak;
        }
    }
    double after = resident_bytes();
    peak = after > peak ? after : peak;
    CHECK_INT(bad, 0);
    printf("test_soak: %d runs: resident %.2f MiB after warm-up, %.2f MiB at the end (peak %.2f)\n", runs,
           before / MIB, after / MIB, peak / MIB);
    CHECK(!RSS_BOUND_CHECKED || peak - before <= MIB);
    CHECK_INT(count_entries("/proc/self/fd"), fds);
    CHECK_INT(count_entries("/proc/self/task"), threads);
    cfx_exec_free(e);
    cfx_module_free(m);
}

static void soak_compiles(int cycles)
{
    int warm = cycles / 10, bad = 0;
    double before = 0, peak = 0;
    int fds = 0, threads = 0;
    for (int i = 0; i < cycles; i++) {
        if (i == warm) {
            before = resident_bytes();
            fds = count_entries("/proc/self/fd");
            threads = count_entries("/proc/self/task");
        }
        cfx_module *m = compile_soak();
        cfx_exec *e = m ? cfx_exec_new(m, 0, CFX_BACKEND_CPU, NULL) : NULL;
        bad += !e || run_once(e, 4 * (i % 5), 0) != 0;
        cfx_exec_free(e);
        cfx_module_free(m);
        if (i >= warm) {
            double now = resident_bytes();
            peak = now > peak ? now : peak;
        }
    }
    CHECK_INT(bad, 0);
    printf("test_soak: %d compile cycles: resident %.2f MiB after warm-up, peak %.2f MiB\n", cycles,
           before / MIB, peak / MIB);
    CHECK(!RSS_BOUND_CHECKED || peak - before <= MIB);
    CHECK_INT(count_entries("/proc/self/fd"), fds);
    CHECK_INT(count_entries("/proc/self/task"), threads);
}

int main(int argc, char **argv)
{
    if (resident_bytes() < 0 || count_entries("/proc/self/fd") < 0) {
        printf("test_soak: no /proc/self here: skipped\n");
        return 77;
    }
    int stress = test_stress(argc, argv);
    soak_runs(stress ? 100000 : 10000);
    soak_compiles(stress ? 1000 : 200);
    return test_finish("test_soak");
}
