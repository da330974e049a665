/* bench_gen.c: the generated code against the executors and Lua 5.4, per loop iteration.
 *
 * For each loop below, in one run: the cpu executor (through the public API, as an application
 * runs it), the C that host/gen/cgen.c generates for the graph (compiled with the system C compiler
 * at -O2, loaded, run on an arena laid out as the cpu executor lays it out, with a cancel flag
 * that it reads at every iteration, as the cpu executor does), the same loop in
 * Lua 5.4 (profiling/loops.lua, when a Lua is given), and on a machine with a GPU the
 * cuda-persistent executor in both modes, the interpreter and the compiled kernel. Every runner
 * must agree with the cpu executor's result, which is checked before its time is reported.
 *
 * Times are medians of REPEATS whole runs (after one warm-up run), divided by the loop
 * iterations the cpu executor counted (cfx_exec_iterations: one per loop body entered). The
 * CPU rows are processor time (CLOCK_PROCESS_CPUTIME_ID, Lua's os.clock), so time the machine
 * gave to other processes is not counted; the GPU rows are wall time around cfx_run. Also
 * reported: how long the system compiler took for the generated C, and NVRTC for the kernel
 * (with the kernel cache off, so it is a real compile).
 *
 * usage: bench_gen [--lua LUA] [--loops profiling/loops.lua] [--repeats R] [--quick]
 * Prints a Markdown table; exits 1 when a runner disagrees or fails. profiling/bench_gen.sh
 * finds Lua and runs this.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "cfx.h"
#include "host/gen/cgen.h"
#include "host/front/compile.h"
#include "host/runtime/module.h"
#include "host/util/strbuf.h"

typedef struct loop {
    const char *name;
    const char *what;   /* for the table */
    const char *source;
    int64_t n, quick_n; /* the input n */
} loop;

static const loop loops[] = {
    {"counter", "`while i < n { s = s + i % 7; i = i + 1 }`",
     "graph counter(n: i32) -> (s: i32) {\n"
     "  s = 0\n"
     "  i = 0\n"
     "  while i < n {\n"
     "    s = s + i % 7\n"
     "    i = i + 1\n"
     "  }\n"
     "}\n",
     10000000, 1000000},
    {"if_in_while", "IfInWhileNet, x = 0, y = 1, i = 0, bound n",
     "graph if_in_while(n: i32) -> (out: i32) {\n"
     "  x = 0\n"
     "  y = 1\n"
     "  i = 0\n"
     "  out = x\n"
     "  while i < n {\n"
     "    if x + i < y {\n"
     "      out = out + x\n"
     "    } else {\n"
     "      out = out + y\n"
     "    }\n"
     "    out = out + 1\n"
     "    i = i + 1\n"
     "  }\n"
     "}\n",
     10000000, 1000000},
    {"collatz", "Collatz steps of 1 .. n - 1 (i64, a while in a for)",
     "graph collatz(n: i32) -> (steps: i64) {\n"
     "  steps = cast(0, i64)\n"
     "  for k in range(1, n) {\n"
     "    v = cast(k, i64)\n"
     "    while v != 1 {\n"
     "      if v % 2 == 0 {\n"
     "        v = v // 2\n"
     "      } else {\n"
     "        v = 3 * v + 1\n"
     "      }\n"
     "      steps = steps + 1\n"
     "    }\n"
     "  }\n"
     "}\n",
     300000, 30000},
};
#define NLOOPS ((int)(sizeof loops / sizeof loops[0]))

/* The result of a graph's one result, as an integer (every loop here returns one). */
static int64_t as_int(cfx_dtype dt, const void *p)
{
    return dt == CFX_I64 ? *(const int64_t *)p : (int64_t)*(const int32_t *)p;
}

/* The cpu executor's result for input n, or INT64_MIN if it does not run. */
static int64_t cpu_result(cfx_module *m, int32_t n)
{
    int64_t out[1] = {0}, r = INT64_MIN;
    char *err = NULL;
    cfx_type rt = cfx_result_type(m, 0, 0);
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, &err);
    if (e && cfx_bind(e, "n", &n, sizeof n) == 0 &&
        cfx_bind(e, cfx_result_name(m, 0, 0), out, (size_t)cfx_dtype_size(rt.dtype)) == 0 &&
        cfx_run(e) == CFX_OK)
        r = as_int(rt.dtype, out);
    cfx_exec_free(e);
    cfx_free(err);
    return r;
}

typedef struct row {
    const char *runner;
    double ns;        /* per iteration; < 0: not measured */
    double ms;        /* compile time of this runner, < 0: none */
    char note[256];
} row;

/* The cpu executor, or cuda-persistent in `mode` (-1: not cuda-persistent). Fills r; returns
 * 0, or -1 with r->note saying why. */
static int time_executor(cfx_module *m, cfx_backend backend, int mode, int32_t n, int repeats,
                         int64_t want, int64_t *iters, row *r)
{
    char *err = NULL;
    double *t = calloc((size_t)repeats, sizeof *t);
    int64_t out[1] = {0};
    cfx_type rt = cfx_result_type(m, 0, 0);
    cfx_exec *e = cfx_exec_new(m, 0, backend, &err);
    int rc = -1;
    if (!e || !t) {
        snprintf(r->note, sizeof r->note, "%s", err ? err : "out of memory");
        goto done;
    }
    if (cfx_bind(e, "n", &n, sizeof n) != 0 ||
        cfx_bind(e, cfx_result_name(m, 0, 0), out, (size_t)cfx_dtype_size(rt.dtype)) != 0) {
        snprintf(r->note, sizeof r->note, "%s", cfx_exec_error(e));
        goto done;
    }
    if (mode >= 0) {
        /* the kernel's build, timed: with the cache off it is generation plus NVRTC */
        double t0 = bench_wall_s();
        int got = cfx_set_persistent_mode(e, (cfx_persistent_mode)mode);
        if (got != mode) {
            snprintf(r->note, sizeof r->note, "%s", cfx_exec_error(e));
            goto done;
        }
        if (mode == CFX_PERSISTENT_COMPILED)
            r->ms = (bench_wall_s() - t0) * 1e3;
    }
    if (cfx_run(e) != CFX_OK) { /* warm-up */
        snprintf(r->note, sizeof r->note, "%s", cfx_exec_message(e));
        goto done;
    }
    for (int k = 0; k < repeats; k++) {
        double t0 = mode >= 0 ? bench_wall_s() : bench_cpu_s();
        cfx_status st = cfx_run(e);
        t[k] = (mode >= 0 ? bench_wall_s() : bench_cpu_s()) - t0;
        if (st != CFX_OK) {
            snprintf(r->note, sizeof r->note, "%s", cfx_exec_message(e));
            goto done;
        }
    }
    if (as_int(rt.dtype, out) != want) {
        snprintf(r->note, sizeof r->note, "FAIL: result %lld, the cpu executor's %lld",
                 (long long)as_int(rt.dtype, out), (long long)want);
        goto done;
    }
    if (iters)
        *iters = cfx_exec_iterations(e);
    r->ns = bench_median(t, repeats) * 1e9;
    rc = 0;
done:
    cfx_exec_free(e);
    cfx_free(err);
    free(t);
    return rc;
}

/* The generated C: written, compiled at -O2 (timed), loaded, run on a fresh arena each time. */
static int time_generated(const cfx_prog *p, int32_t n, int repeats, int64_t want, const char *dir,
                          row *r)
{
    strbuf src = {0};
    char err[512], cpath[600], sopath[600], cmd[2048];
    cgen_options o = {CGEN_TARGET_C, 0, "bench_run", NULL, NULL, NULL, 0, 0, 0};
    double *t = calloc((size_t)repeats, sizeof *t);
    uint8_t *arena = calloc(1, (size_t)p->arena_bytes + 16);
    void *h = NULL;
    int rc = -1;
    if (!t || !arena || cgen_emit(p, &o, &src, NULL, err, sizeof err) != 0) {
        snprintf(r->note, sizeof r->note, "%s", t && arena ? err : "out of memory");
        goto done;
    }
    snprintf(cpath, sizeof cpath, "%s/%s.c", dir, p->name);
    snprintf(sopath, sizeof sopath, "%s/%s.so", dir, p->name);
    FILE *f = fopen(cpath, "w");
    if (!f) {
        snprintf(r->note, sizeof r->note, "cannot write %s", cpath);
        goto done;
    }
    fputs(sb_str(&src), f);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "'%s' -std=c11 -O2 -fPIC -shared -ffp-contract=off -I'%s/host/gen' -I'%s/kernels' "
             "-I'%s' -o '%s' '%s' -lm",
             CFX_CC, CFX_SOURCE_DIR, CFX_SOURCE_DIR, CFX_SOURCE_DIR, sopath, cpath);
    double t0 = bench_wall_s();
    if (system(cmd) != 0) {
        snprintf(r->note, sizeof r->note, "the system C compiler failed on the generated code");
        goto done;
    }
    r->ms = (bench_wall_s() - t0) * 1e3;
    h = dlopen(sopath, RTLD_NOW | RTLD_LOCAL);
    cgen_host_fn fn = NULL;
    if (h)
        *(void **)&fn = dlsym(h, "bench_run");
    if (!fn) {
        snprintf(r->note, sizeof r->note, "cannot load the generated code: %s", dlerror());
        goto done;
    }
    const cfx_slot *in = &p->slots[p->inputs[0]], *res = &p->slots[p->results[0]];
    exec_atomic_int cancel; /* a real flag, read at every iteration as cfx_run's is */
    atomic_init(&cancel, 0);
    for (int k = -1; k < repeats; k++) { /* -1: warm-up */
        cgen_host_args a;
        memset(&a, 0, sizeof a);
        a.cancel = &cancel;
        memset(arena, 0, (size_t)p->arena_bytes);
        memcpy(arena, p->consts, (size_t)p->const_bytes);
        memcpy(arena + in->offset, &n, sizeof n);
        a.arena = arena;
        double s0 = bench_cpu_s();
        fn(&a);
        if (k >= 0)
            t[k] = bench_cpu_s() - s0;
        if (a.status != CFX_OK) {
            snprintf(r->note, sizeof r->note, "the run ended %s",
                     cfx_status_name((cfx_status)a.status));
            goto done;
        }
    }
    if (as_int((cfx_dtype)res->dtype, arena + res->offset) != want) {
        snprintf(r->note, sizeof r->note, "FAIL: result %lld, the cpu executor's %lld",
                 (long long)as_int((cfx_dtype)res->dtype, arena + res->offset), (long long)want);
        goto done;
    }
    r->ns = bench_median(t, repeats) * 1e9;
    rc = 0;
done:
    if (h)
        dlclose(h);
    sb_free(&src);
    free(t);
    free(arena);
    return rc;
}

/* Lua, through loops.lua; its time is divided by the same iteration count. */
static int time_lua(const char *lua, const char *script, const loop *l, int64_t n, int repeats,
                    int64_t want, row *r)
{
    char cmd[2048], name[64];
    double seconds = 0;
    long long result = 0;
    snprintf(cmd, sizeof cmd, "'%s' '%s' %s %lld %d", lua, script, l->name, (long long)n, repeats);
    FILE *f = popen(cmd, "r");
    int ok = f && fscanf(f, "%63s %lf %lld", name, &seconds, &result) == 3;
    if (f)
        pclose(f);
    if (!ok) {
        snprintf(r->note, sizeof r->note, "%s failed", cmd);
        return -1;
    }
    if (result != want) {
        snprintf(r->note, sizeof r->note, "FAIL: result %lld, the cpu executor's %lld", result,
                 (long long)want);
        return -1;
    }
    r->ns = seconds; /* seconds per run: the caller divides */
    return 0;
}

static void ratio(char *buf, size_t len, double a, double b)
{
    if (a > 0 && b > 0)
        snprintf(buf, len, "%.2f", a / b);
    else
        snprintf(buf, len, "-");
}

int main(int argc, char **argv)
{
    const char *lua = NULL, *script = CFX_SOURCE_DIR "/profiling/loops.lua";
    int repeats = 7, quick = 0, failed = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--lua") == 0 && i + 1 < argc)
            lua = argv[++i];
        else if (strcmp(argv[i], "--loops") == 0 && i + 1 < argc)
            script = argv[++i];
        else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else {
            fprintf(stderr,
                    "usage: bench_gen [--lua LUA] [--loops loops.lua] [--repeats R] [--quick]\n");
            return 2;
        }
    }
    if (repeats < 1 || repeats > 101) {
        fprintf(stderr, "bench_gen: --repeats wants 1 .. 101\n");
        return 2;
    }
    if (!CFX_CC[0]) {
        printf("bench_gen: the build found no C compiler for the generated code: nothing to "
               "measure\n");
        return 0;
    }
    char dir[] = "/tmp/bench_gen_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("bench_gen: mkdtemp");
        return 1;
    }
    char why[512] = "";
    int gpu = cfx_backend_available(CFX_BACKEND_CUDA_PERSISTENT, why, sizeof why);
    if (gpu)
        setenv("CFX_KERNEL_CACHE", "off", 1); /* the compile time is a real compile */

    printf("## Generated code against the executors and Lua 5.4, per loop iteration\n\n");
    printf("Medians of %d runs after a warm-up; ns per iteration (cfx_exec_iterations of the cpu "
           "executor); "
           "ratios are the row's time over the baseline's, so below 1 is faster.\n\n",
           repeats);
    printf("| loop | iterations | runner | ns/iter | vs cfx cpu | vs Lua | compile ms | note |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    for (int li = 0; li < NLOOPS; li++) {
        const loop *l = &loops[li];
        int32_t n = (int32_t)(quick ? l->quick_n : l->n);
        char *diag = NULL;
        compiled_module cm;
        cfx_module *m = cfx_compile_string(NULL, l->name, l->source, strlen(l->source), &diag);
        if (!m || compile_source(NULL, l->name, l->source, strlen(l->source), &cm, &diag) != 0) {
            fprintf(stderr, "bench_gen: %s does not compile: %s\n", l->name, diag ? diag : "");
            cfx_module_free(m);
            return 1;
        }
        row rows[5] = {{"cfx cpu executor", -1, -1, ""},
                       {"generated C (cc -O2)", -1, -1, ""},
                       {"Lua 5.4", -1, -1, ""},
                       {"cuda-persistent interpreter", -1, -1, ""},
                       {"cuda-persistent compiled", -1, -1, ""}};
        int64_t want = cpu_result(m, n), iters = 0;
        /* the cpu executor first: its result and iteration count are every row's reference */
        if (want == INT64_MIN ||
            time_executor(m, CFX_BACKEND_CPU, -1, n, repeats, want, &iters, &rows[0]) != 0 ||
            iters <= 0) {
            fprintf(stderr, "bench_gen: the cpu executor did not run %s: %s\n", l->name,
                    rows[0].note);
            return 1;
        }
        rows[0].ns /= (double)iters;
        if (time_generated(cm.graphs[0].prog, n, repeats, want, dir, &rows[1]) == 0)
            rows[1].ns /= (double)iters;
        if (!lua)
            snprintf(rows[2].note, sizeof rows[2].note,
                     "not measured: no --lua given (profiling/bench_gen.sh finds lua5.4)");
        else if (time_lua(lua, script, l, n, repeats < 5 ? repeats : 5, want, &rows[2]) == 0)
            rows[2].ns = rows[2].ns * 1e9 / (double)iters;
        for (int mode = 0; mode < 2; mode++) {
            row *r = &rows[3 + mode];
            if (!gpu) {
                /* NVRTC needs no device: the build time is measured even here */
                char err[512];
                double ms = 0;
                if (mode == 1 &&
                    comp_build(cm.graphs[0].prog, 90, 0, NULL, &ms, err, sizeof err) == 0) {
                    r->ms = ms;
                    snprintf(r->note, sizeof r->note,
                             "not run (no GPU); compile ms: generation and NVRTC for sm_90");
                } else {
                    snprintf(r->note, sizeof r->note, "not measured (no GPU)");
                }
                continue;
            }
            int want_mode = mode == 0 ? CFX_PERSISTENT_INTERP : CFX_PERSISTENT_COMPILED;
            if (time_executor(m, CFX_BACKEND_CUDA_PERSISTENT, want_mode, n, repeats, want, NULL,
                              r) == 0)
                r->ns /= (double)iters;
        }
        for (int k = 0; k < 5; k++) {
            char vs_cpu[32], vs_lua[32], ms[32];
            ratio(vs_cpu, sizeof vs_cpu, rows[k].ns, rows[0].ns);
            ratio(vs_lua, sizeof vs_lua, rows[k].ns, rows[2].ns);
            if (rows[k].ms >= 0)
                snprintf(ms, sizeof ms, "%.0f", rows[k].ms);
            else
                snprintf(ms, sizeof ms, "-");
            if (rows[k].ns >= 0)
                printf("| %s | %lld | %s | %.2f | %s | %s | %s | %s |\n", l->name, (long long)iters,
                       rows[k].runner, rows[k].ns, vs_cpu, vs_lua, ms, rows[k].note);
            else
                printf("| %s | %lld | %s | - | - | - | %s | %s |\n", l->name, (long long)iters,
                       rows[k].runner, ms, rows[k].note);
            failed |= strncmp(rows[k].note, "FAIL", 4) == 0 || (k < 2 && rows[k].ns < 0);
        }
        compiled_module_free(&cm);
        cfx_module_free(m);
        cfx_free(diag);
    }
    printf("\nLoops: ");
    for (int li = 0; li < NLOOPS; li++)
        printf("%s%s %s (n = %lld)", li ? "; " : "", loops[li].name, loops[li].what,
               (long long)(quick ? loops[li].quick_n : loops[li].n));
    printf(". Compile ms: the system C compiler on the generated file; for the compiled kernel, "
           "generating, NVRTC and loading, with the kernel cache off (without a GPU: generating "
           "and NVRTC).%s%s\n",
           gpu ? "" : " GPU: ", gpu ? "" : why);
    snprintf(why, sizeof why, "rm -rf '%s'", dir);
    if (system(why) != 0)
        fprintf(stderr, "bench_gen: could not remove %s\n", dir);
    return failed ? 1 : 0;
}
