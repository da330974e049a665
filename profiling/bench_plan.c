/* bench_plan.c: how compile, the GPU plans and the code generator grow with the program.
 *
 *   build/profiling/bench_plan [--quick] [--repeats N] [--max-s S] [--out FILE.md]
 *   build/profiling/bench_plan --emit SHAPE N     (prints that program, for cfx dump --cost)
 *
 * Writes programs of about 1,000, 4,000, 16,000 and 64,000 statements (250 to 4,000 with --quick)
 * in three shapes and times, on the process's CPU clock (the machine may be shared), each of:
 *
 * - compile: cfx_compile_string (parse, check, lower, validate);
 * - cost: cfx_dump_cost, the cost sheet, which builds the plans of both modes of cuda-persistent
 *   (the interpreter's and the compiled kernel's, host/gen/plan.c) and runs the code generator
 *   for the CUDA kernel;
 * - gen C, gen CUDA: cgen_emit for each target (the CUDA one builds the compiled kernel's plan and,
 *   with the grid named as the compiled executor names it, chooses the tensors loops keep in registers).
 *
 * Prints one Markdown table (and writes it to FILE.md with --out) with the median over the repeats
 * and, per row, the growth over the row of the same shape four times smaller: 4 for a linear
 * stage, 16 for a quadratic one. A stage that took more than S seconds (--max-s, default 20) at one
 * size is not run at the larger ones ("skipped"). A benchmark, not a test: it checks only that
 * every program compiles and every stage succeeds.
 *
 * Shapes (every statement a new variable, as an imported model's graph is):
 * - branches: a straight line of tensor and scalar statements with an if/else every 50;
 * - loops: for loops of eight-statement bodies over tensors, one after another;
 * - tensors: matrix-vector products, reductions, rows, transposes and elementwise ops over
 *   tensors of several sizes (some shared by the blocks, some small enough to be replicas). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "cfx.h"
#include "host/gen/cgen.h"
#include "host/front/compile.h"
#include "host/util/strbuf.h"

typedef struct text {
    char *s;
    size_t n, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void put(text *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
        va_end(ap);
        if (k >= 0 && t->n + (size_t)k < t->cap) {
            t->n += (size_t)k;
            return;
        }
        t->cap = t->cap * 2 + (size_t)k + 4096;
        t->s = realloc(t->s, t->cap);
        if (!t->s) {
            fprintf(stderr, "bench_plan: out of memory\n");
            exit(1);
        }
    }
}

/* Writes a program of about n statements; returns its statement count (an if and each
 * statement of its arms count one, a for loop and each statement of its body too). */
typedef long (*shape_fn)(text *t, long n);

static long branches(text *t, long n)
{
    long s = 2;
    put(t, "graph g(x: f32[8192], v: f32[64], c: f32) -> (y: f32[8192], z: f32) {\n  y = x\n  z = c\n");
    for (long k = 0; s < n; k++) {
        if (k % 50 == 49) {
            put(t, "  if z > %ld.0 {\n    y = y * 0.5\n    z = z - 1.0\n  } else {\n    y = y + x\n  }\n", k % 7);
            s += 4;
        } else if (k % 3 == 0) {
            put(t, "  ta%ld = y * c + x\n", k);
            put(t, "  y = ta%ld - x\n", k);
            s += 2;
        } else if (k % 3 == 1) {
            put(t, "  ub%ld = v * z + v\n", k);
            put(t, "  z = z + sum(ub%ld)\n", k);
            s += 2;
        } else {
            put(t, "  wc%ld = z * 2.0 + c\n", k);
            put(t, "  z = wc%ld - 1.0\n", k);
            s += 2;
        }
    }
    put(t, "}\n");
    return s;
}

static long loops(text *t, long n)
{
    long s = 2;
    put(t, "graph g(x: f32[8192], v: f32[64], c: f32, m: i32) -> (y: f32[8192], z: f32) {\n"
           "  y = x\n  z = c\n");
    for (long k = 0; s < n; k++) {
        put(t, "  for i%ld in range(0, m) {\n", k);
        put(t, "    la%ld = y * c + x\n", k);
        put(t, "    lb%ld = la%ld - x\n", k, k);
        put(t, "    le%ld = v * z\n", k);
        put(t, "    lf%ld = le%ld + v\n", k, k);
        put(t, "    z = z + sum(lf%ld) * 0.001\n", k);
        put(t, "    y = lb%ld * 0.5\n", k);
        put(t, "    ld%ld = dot(y, x)\n", k);
        put(t, "    z = z + ld%ld\n", k);
        put(t, "  }\n");
        s += 9;
    }
    put(t, "}\n");
    return s;
}

static long tensors(text *t, long n)
{
    long s = 3;
    put(t, "graph g(a: f32[256, 256], b: f32[64, 64], x: f32[256], v: f32[64], c: f32) -> (y: f32[256], z: f32) {\n"
           "  y = x\n  h = v\n  z = c\n");
    for (long k = 0; s < n; k++) {
        switch (k % 6) {
        case 0: put(t, "  tp%ld = a @ y\n", k); put(t, "  y = tanh(tp%ld) + x\n", k); break;
        case 1: put(t, "  tq%ld = b @ h\n", k); put(t, "  h = tq%ld * 0.5 + v\n", k); break;
        case 2: put(t, "  tr%ld = dot(y, x)\n", k); put(t, "  z = z + tr%ld\n", k); break;
        case 3: put(t, "  tm%ld = max(h)\n", k); put(t, "  z = z - tm%ld\n", k); break;
        case 4: put(t, "  tg%ld = transpose(b)\n", k); put(t, "  h = tg%ld[%ld] + h\n", k, k % 64); break;
        default: put(t, "  te%ld = y * z\n", k); put(t, "  y = te%ld - x * c\n", k); break;
        }
        s += 2;
    }
    put(t, "}\n");
    return s;
}

static const struct {
    const char *name;
    shape_fn fn;
} shapes[] = {{"branches", branches}, {"loops", loops}, {"tensors", tensors}};

enum { ST_COMPILE, ST_COST, ST_GEN_C, ST_GEN_CUDA, NSTAGES };
static const char *stage_names[NSTAGES] = {"compile", "cost", "gen C", "gen CUDA"};

/* Times stage st on the compiled source, once; seconds, or -1 when it failed. */
static double run_stage(int st, const text *t, char *why, size_t whylen)
{
    double t0 = bench_cpu_s(), dt = -1;
    char *diag = NULL;
    if (st == ST_COMPILE) {
        cfx_module *m = cfx_compile_string(NULL, "g.cfx", t->s, t->n, &diag);
        dt = bench_cpu_s() - t0;
        if (!m) {
            snprintf(why, whylen, "%.200s", diag ? diag : "out of memory");
            dt = -1;
        }
        cfx_module_free(m);
        cfx_free(diag);
        return dt;
    }
    if (st == ST_COST) {
        cfx_module *m = cfx_compile_string(NULL, "g.cfx", t->s, t->n, &diag);
        if (!m) {
            snprintf(why, whylen, "%.200s", diag ? diag : "out of memory");
            cfx_free(diag);
            return -1;
        }
        t0 = bench_cpu_s();
        char *sheet = cfx_dump_cost(m, 0, 0, NULL);
        dt = bench_cpu_s() - t0;
        if (!sheet) {
            snprintf(why, whylen, "no cost sheet");
            dt = -1;
        }
        cfx_free(sheet);
        cfx_module_free(m);
        return dt;
    }
    compiled_module cm;
    if (compile_source(NULL, "g.cfx", t->s, t->n, &cm, &diag) != 0) {
        snprintf(why, whylen, "%.200s", diag ? diag : "out of memory");
        cfx_free(diag);
        return -1;
    }
    cgen_options o;
    memset(&o, 0, sizeof o);
    o.target = st == ST_GEN_C ? CGEN_TARGET_C : CGEN_TARGET_CUDA;
    if (st != ST_GEN_C) { /* a grid named, as the compiled executor and `cfx dump --kernel` name one */
        o.blocks = CGEN_DEFAULT_BLOCKS;
        o.threads = 256;
    }
    strbuf src = {0};
    char err[256];
    t0 = bench_cpu_s();
    int rc = cgen_emit(cm.graphs[0].prog, &o, &src, NULL, err, sizeof err);
    dt = bench_cpu_s() - t0;
    if (rc != 0) {
        snprintf(why, whylen, "%s", err);
        dt = -1;
    }
    sb_free(&src);
    compiled_module_free(&cm);
    return dt;
}

static void emit(FILE *md, const char *s)
{
    fputs(s, stdout);
    fflush(stdout);
    if (md) {
        fputs(s, md);
        fflush(md);
    }
}

int main(int argc, char **argv)
{
    int repeats = 3, quick = 0;
    double max_s = 20;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (strcmp(argv[i], "--max-s") == 0 && i + 1 < argc)
            max_s = atof(argv[++i]);
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--emit") == 0 && i + 2 < argc) {
            for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
                if (strcmp(shapes[sh].name, argv[i + 1]) == 0) {
                    text t = {0};
                    shapes[sh].fn(&t, atol(argv[i + 2]));
                    fwrite(t.s, 1, t.n, stdout);
                    free(t.s);
                    return 0;
                }
            fprintf(stderr, "bench_plan: no shape %s (branches, loops, tensors)\n", argv[i + 1]);
            return 2;
        }
        else {
            fprintf(stderr, "usage: bench_plan [--quick] [--repeats N] [--max-s S] [--out FILE.md] | --emit SHAPE N\n");
            return 2;
        }
    }
    if (repeats < 1 || repeats > 31)
        repeats = 3;
    FILE *md = out ? fopen(out, "w") : NULL;
    if (out && !md) {
        perror(out);
        return 1;
    }
    char cpu[200], date[32], line[512];
    bench_cpu_name(cpu, sizeof cpu);
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    snprintf(line, sizeof line,
             "Compile and plan against program size, %s: %s, %ld cores. Median CPU seconds of %d runs "
             "(one where a run takes over 2 s); x4: the growth over the size four times smaller (4: linear).\n\n"
             "| shape | statements | records | compile s | x4 | cost s | x4 | gen C s | x4 | gen CUDA s | x4 |\n"
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
             date, cpu, sysconf(_SC_NPROCESSORS_ONLN), repeats);
    emit(md, line);
    long first = quick ? 250 : 1000, last = quick ? 4000 : 64000;
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
        double prev[NSTAGES] = {0}, slow[NSTAGES] = {0};
        for (long n = first; n <= last; n *= 4) {
            text t = {0};
            long stmts = shapes[sh].fn(&t, n);
            int nrec = -1;
            {
                compiled_module cm;
                char *diag = NULL;
                if (compile_source(NULL, "g.cfx", t.s, t.n, &cm, &diag) != 0) {
                    fprintf(stderr, "bench_plan: %s at %ld statements does not compile: %.500s\n",
                            shapes[sh].name, stmts, diag ? diag : "");
                    return 1;
                }
                nrec = cm.graphs[0].prog->nrecords;
                compiled_module_free(&cm);
                cfx_free(diag);
            }
            int len = snprintf(line, sizeof line, "| %s | %ld | %d |", shapes[sh].name, stmts, nrec);
            for (int st = 0; st < NSTAGES; st++) {
                double v[31];
                int k = 0;
                char why[300] = "";
                if (slow[st] > max_s) {
                    len += snprintf(line + len, sizeof line - (size_t)len, " skipped | |");
                    prev[st] = 0;
                    continue;
                }
                for (; k < repeats; k++) {
                    v[k] = run_stage(st, &t, why, sizeof why);
                    if (v[k] < 0) {
                        fprintf(stderr, "bench_plan: %s of %s at %ld statements failed: %s\n", stage_names[st],
                                shapes[sh].name, stmts, why);
                        return 1;
                    }
                    if (v[k] > 2) {
                        k++;
                        break;
                    }
                }
                qsort(v, (size_t)k, sizeof v[0], bench_cmp_double);
                double med = bench_quantile(v, k, 0.5);
                slow[st] = med;
                if (prev[st] > 0)
                    len += snprintf(line + len, sizeof line - (size_t)len, " %.3f | %.1f |", med, med / prev[st]);
                else
                    len += snprintf(line + len, sizeof line - (size_t)len, " %.3f | |", med);
                prev[st] = med;
            }
            snprintf(line + len, sizeof line - (size_t)len, "\n");
            emit(md, line);
            free(t.s);
        }
    }
    if (md)
        fclose(md);
    return 0;
}
