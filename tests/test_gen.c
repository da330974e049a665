/* test_gen.c: the code generator's host twin. Every graph of graphs/, every graph shown in
 * docs/language.md, the generated programs of tests/gen_programs.h and a few hand-built
 * programs are generated as C (host/gen/cgen.h), compiled with the system C compiler into a shared
 * object, loaded, and run against the cpu executor on the same inputs: the same status, stop
 * record, details, iteration count and printed values, integer and bool results identical and
 * reals within 1e-5 relative (the cross-executor harness's tolerance). Each program is
 * generated twice: structured, and as the pc-dispatch loop, so the fallback is proven too.
 * A run of a graph file with a `# stop:` line must also end with that message, as the host
 * formats it from the generated run's outcome (exec_format_stop).
 *
 * Every program must be generated: every record kind of program.h must be one the generator
 * knows (CGEN_KINDS), and a program the generator refuses fails the test. The generated programs
 * must reach the generator with every form of gen_programs.h's second stream (list items and
 * bounds, boxes, broadcasting, **, i64 ranges).
 *
 * With a C++ compiler the CUDA target's kernels (both forms) run too, on three host threads that
 * stand in for three blocks (tests/ck_host.h), each running its CUDA threads as fibers
 * (tests/cuda_host.h): shares, grid barriers, split reductions and the block reduction's tree,
 * tiled products, one-block regions with their publish and reload, stops raised by one block
 * while others wait, and the print buffer, drained afterwards as device/compiled.cu drains it.
 * A block has as many threads as device/compiled.cu launches (256, or 32 for a program of
 * scalars) in the first run of each program and wherever there is a tiled product, and 64 in
 * the other runs of the programs the device runs with 256 (run_threads); its threads run
 * forward, in reverse or shuffled between their barriers, one order per run in turn.
 * CFX_STANDIN_SWEEP=1 runs every kernel in all three orders and at the device's sizes (about
 * four times as long). What only a GPU shows (the device's memory model, NVRTC's machine code)
 * is left to gpu_compiled and gpu_executors. A kernel that would hang a GPU (a block at a grid
 * barrier that can never complete, a loop that never ends) fails in seconds with one line from
 * ck_host.h's watchdog, which a child process here checks on a loop run 10^9 times.
 *
 * The generated programs' CUDA target runs on host threads under --stress only, for one in four:
 * compiling their kernels as C++ costs more than the rest of the test together.
 *
 * Kernel calls: programs that call binary kernels (a CPU function; the C target calls it
 * through its hook) and kernels registered by their source (cfx_register_source: both targets
 * write the source in and call it inline), hand-written and generated with calls in loops,
 * branches, before break and early return. On the CUDA target a binary kernel's CALL, and a
 * product the plan launches, ends the launch: the runs here serve it as device/compiled.cu
 * does, on both of its paths, the pause (the kernel stops with CK_STATUS_PAUSE) and device
 * graph launch (the kernel tail-launches the record's graph and its own, which ck_host.h
 * records), running the record's work on the host and launching again, so the resume logic
 * runs: scalars stored and reloaded, the jump to the code after the record.
 *
 * Inputs: each `# run:` line of a graph file, two random draws (under a budget, so no draw
 * runs long), the generated programs' own inputs; then on each program the budget at 1 and
 * at 3, a cancel set before the run, and a cancel raised by the third printed value (the
 * print callback sets the flag, so the run stops at the next TICK on both sides).
 *
 * `test_gen --mutants` is a test of this test: it breaks the generated code in small ways
 * (an add that subtracts, the budget off by one, prints dropped, a wrong status, branches that
 * test the opposite, an f32 product that adds, boxes read or written at the wrong place, an index
 * stop that reports the wrong index, grid barriers or the block barriers after split work left
 * out) and fails unless every mutant is caught.
 *
 * `--stress` (label stress: CFX_STRESS=1 ctest -L stress) compares 200 generated programs
 * rather than 40, with the CUDA target of one in four; with --mutants, every mutant is run on
 * both targets (without it, a mutant not named "(CUDA)" on the C target alone). A mutant is
 * built a few programs at a time, the programs of the smallest tensors first, until they catch
 * it.
 * Compiled files go to work/test_gen... in the build tree, removed when the test passes.
 *
 * `test_gen --files F.cfx ...` runs those programs alone the same way (tests/onnx/node_tests.py
 * --standin gives it the ONNX control-flow models, imported with `cfx import`).
 *
 * Skips (77) when the build found no C compiler. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "host/gen/cgen.h"
#include "host/front/compile.h"
#include "device/compiled_kernel.cuh"
#include "host/front/context.h"
#include "host/runtime/exec.h"
#include "gen_programs.h"
#include "kernels/ops.h"
#include "host/program/program.h"
#include "host/util/hash.h"
#include "host/util/strbuf.h"
#include "testutil.h"
#include "host/runtime/value.h"

/* Generated programs: a few by default, so the README's test command stays within its time on
 * two loaded cores; the deep sweep (--stress, label stress) takes 200, and runs the CUDA target
 * of one in EMULATED_EVERY on host threads (400 with every one's took 13 minutes there). */
#define GENERATED 40
#define GENERATED_STRESS 200
#define EMULATED_EVERY 4
#define PER_OBJECT 60      /* programs per compiled shared object */
#define MUTANT_PER_OBJECT 12 /* ... for a mutant, which is built object by object until caught */
#define MAX_INPUTS 32
#define TOL 1e-5
#define RANDOM_BUDGET                                                                              \
    20000 /* random inputs may make a loop long: the budget ends it the same way */

/* The record kinds the programs below must cover: every kind the generator knows
 * (CGEN_KINDS). A kind added to the generator without a program here fails the test. */
static int kinds_seen[REC_COUNT];

/* ---- the programs -------------------------------------------------------------------------- */

typedef struct input_set {
    void *data[MAX_INPUTS];
    int64_t max_iters;
    char what[160];
    char stop[256]; /* the `# stop:` line of a graph file's run: the message written by hand */
    int random;     /* drawn by random_sets, not written by hand */
} input_set;

typedef struct unit {
    char label[256];
    const cfx_prog *prog;
    char **names;           /* input names, prog->ninputs */
    char **defaults;        /* their defaults' text, NULL where none (cfx_input_default) */
    cfx_type *types;
    input_set *sets;
    int nsets;
    int object;             /* which shared object holds it */
    cgen_host_fn structured, dispatch;
    void (*cuda)(const ck_args a); /* the CUDA target, on host threads (tests/ck_host.h) */
    void (*cuda_dispatch)(const ck_args a);
    int64_t publish_bytes;
    int64_t alt_bytes;
    unsigned int threads;   /* the CUDA target's block size, as device/compiled.cu launches it */
    int tiles;              /* its kernel has a tiled product, which needs all CK_THREADS */
    int is_structured;      /* what the generator made */
    int refused;            /* a record kind the generator does not know (a failure) */
    int calls;              /* a CALL record */
    int launches;           /* records that end the CUDA kernel's launch */
    int expect_dispatch;    /* a hand-built irreducible program */
    int64_t product_min;    /* the CUDA target's launch_product_min (0: every product inline) */
    const exec_kernel *kernels;
    int order; /* its place as added (order_by_size) */
} unit;

static unit *units;
static int nunits, capunits;
static compiled_module *modules;
static int nmodules, capmodules;

static unit *new_unit(void)
{
    if (nunits == capunits) {
        capunits = capunits ? capunits * 2 : 256;
        units = realloc(units, sizeof *units * (size_t)capunits);
        if (!units)
            abort();
    }
    unit *u = &units[nunits++];
    memset(u, 0, sizeof *u);
    return u;
}

static input_set *new_set(unit *u)
{
    u->sets = realloc(u->sets, sizeof *u->sets * (size_t)(u->nsets + 1));
    if (!u->sets)
        abort();
    input_set *s = &u->sets[u->nsets++];
    memset(s, 0, sizeof *s);
    return s;
}

static void random_sets(unit *u, uint64_t seed, int n)
{
    for (int k = 0; k < n; k++) {
        input_set *s = new_set(u);
        uint64_t rng = seed * 7919 + (uint64_t)k;
        for (int32_t i = 0; i < u->prog->ninputs; i++) {
            size_t bytes = (size_t)slot_bytes(&u->prog->slots[u->prog->inputs[i]]);
            s->data[i] = calloc(1, bytes ? bytes : 1);
            if (!s->data[i])
                abort();
            value_random(&u->types[i], &rng, s->data[i]);
        }
        s->max_iters = RANDOM_BUDGET;
        s->random = 1;
        snprintf(s->what, sizeof s->what, "random inputs %d", k);
    }
}

/* Adds every graph of a compiled module as a unit (with no inputs yet). Returns the index of
 * its first unit, or -1 if the source does not compile (a file of `# error:` cases). */
static int add_module(const char *file, const char *text, cfx_context *ctx)
{
    compiled_module cm;
    char *diags = NULL;
    if (compile_source(ctx, file, text, strlen(text), &cm, &diags) != 0) {
        free(diags);
        return -1;
    }
    if (nmodules == capmodules) {
        capmodules = capmodules ? capmodules * 2 : 64;
        modules = realloc(modules, sizeof *modules * (size_t)capmodules);
        if (!modules)
            abort();
    }
    modules[nmodules++] = cm;
    int first = nunits;
    for (int gi = 0; gi < cm.ngraphs; gi++) {
        unit *u = new_unit();
        const compiled_graph *cg = &cm.graphs[gi];
        snprintf(u->label, sizeof u->label, "%s: graph %s", file, cg->name);
        u->prog = cg->prog;
        u->names = calloc((size_t)cg->nparams + 1, sizeof *u->names);
        u->defaults = calloc((size_t)cg->nparams + 1, sizeof *u->defaults);
        u->types = calloc((size_t)cg->nparams + 1, sizeof *u->types);
        if (!u->names || !u->defaults || !u->types)
            abort();
        for (int i = 0; i < cg->nparams; i++) {
            u->names[i] = cg->params[i].name;
            u->defaults[i] = cg->params[i].def;
            u->types[i] = cg->params[i].type;
        }
    }
    return first;
}

/* One `# run:` line of a graph file: its inputs go to the unit of the graph it names. Returns
 * the unit, or NULL; its new set is the last. */
static unit *add_run_line(int first, int ngraphs, const char *path, char *text, int lineno)
{
    char *tokens[64];
    int ntok = 0;
    const char *graph = NULL;
    int64_t max_iters = 0;
    for (char *t = strtok(text, " \t\r\n"); t && ntok < 64; t = strtok(NULL, " \t\r\n"))
        tokens[ntok++] = t;
    for (int i = 0; i + 1 < ntok; i++) {
        if (strcmp(tokens[i], "--graph") == 0)
            graph = tokens[i + 1];
        else if (strcmp(tokens[i], "--max-iters") == 0)
            max_iters = strtoll(tokens[i + 1], NULL, 10);
    }
    unit *u = NULL;
    for (int k = first; k < first + ngraphs; k++)
        if (!graph ? k == first : strcmp(units[k].prog->name, graph) == 0)
            u = &units[k];
    if (!CHECK(u != NULL))
        return NULL;
    input_set *s = new_set(u);
    char err[512] = "";
    if (test_run_inputs(tokens, ntok, u->prog->ninputs, (const char *const *)u->names, u->types,
                        (const char *const *)u->defaults, s->data, err, sizeof err) != 0) {
        fprintf(stderr, "%s:%d: %s\n", path, lineno, err);
        CHECK(0);
        u->nsets--;
        return NULL;
    }
    for (int32_t i = 0; i < u->prog->ninputs; i++) /* a None left out: zeros, never read */
        if (!s->data[i] && !(s->data[i] = calloc(1, (size_t)slot_bytes(&u->prog->slots[u->prog->inputs[i]]) + 1)))
            abort();
    s->max_iters = max_iters;
    const char *base = strrchr(path, '/');
    snprintf(s->what, sizeof s->what, "%.120s:%d", base ? base + 1 : path, lineno);
    return u;
}

static void add_graph_file(const char *path)
{
    char *text = test_read_file(path, NULL);
    if (!CHECK(text != NULL))
        return;
    int first = add_module(path, text, NULL);
    if (first < 0) {
        free(text);
        return;
    }
    int ngraphs = nunits - first;
    int lineno = 0;
    unit *last = NULL; /* the unit of the latest `# run:`, whose last set is that run's */
    for (char *p = text; p && *p;) {
        char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        lineno++;
        if (strncmp(p, "# run:", 6) == 0) {
            char *copy = malloc(n + 1);
            if (!copy)
                abort();
            memcpy(copy, p, n);
            copy[n] = '\0';
            last = add_run_line(first, ngraphs, path, copy + 6, lineno);
            free(copy);
        } else if (strncmp(p, "# stop: ", 8) == 0 && last) {
            input_set *s = &last->sets[last->nsets - 1];
            while (n > 8 && (p[n - 1] == ' ' || p[n - 1] == '\r'))
                n--;
            snprintf(s->stop, sizeof s->stop, "%.*s", (int)(n - 8), p + 8);
        }
        p = end ? end + 1 : NULL;
    }
    for (int k = first; k < nunits; k++)
        random_sets(&units[k], (uint64_t)k, 2);
    free(text);
}

static void add_graphs_dir(void)
{
    char *paths[512];
    int n = test_graph_files(paths, 512);
    if (!CHECK(n >= 0))
        return;
    for (int i = 0; i < n; i++) {
        add_graph_file(paths[i]);
        free(paths[i]);
    }
}

/* The ```cfx blocks of docs/language.md, with random inputs. */
static void add_docs(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/docs/language.md", CFX_SOURCE_DIR);
    char *text = test_read_file(path, NULL);
    if (!text)
        return;
    strbuf block = {0};
    int in = 0, indent = 0, lineno = 0, start = 0, blocks = 0;
    for (char *p = text; p && *p;) {
        char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        lineno++;
        int lead = 0;
        while (lead < (int)n && p[lead] == ' ')
            lead++;
        if (n - (size_t)lead >= 3 && strncmp(p + lead, "```", 3) == 0) {
            if (!in) {
                in = strncmp(p + lead, "```cfx", 6) == 0 ? 1 : 2;
                indent = lead;
                start = lineno;
                block.len = 0;
                if (block.data)
                    block.data[0] = '\0';
            } else {
                if (in == 1) {
                    char label[64];
                    snprintf(label, sizeof label, "docs/language.md:%d", start);
                    int first = add_module(label, sb_str(&block), NULL);
                    for (int k = first; first >= 0 && k < nunits; k++)
                        random_sets(&units[k], (uint64_t)(1000 + k), 2);
                    blocks++;
                }
                in = 0;
            }
        } else if (in) {
            size_t skip = (size_t)(lead < indent ? lead : indent);
            sb_append(&block, p + skip, n - skip);
            sb_puts(&block, "\n");
        }
        p = end ? end + 1 : NULL;
    }
    sb_free(&block);
    free(text);
    printf("docs/language.md: %d programs\n", blocks);
}

/* Adds a generated program's text as a unit with its own inputs (gen_inputs_make's for the
 * seed), compiled with the kernels of ctx (may be NULL). */
static unit *add_generated_text(const char *label, const char *src, uint64_t seed, cfx_context *ctx)
{
    int first = src ? add_module(label, src, ctx) : -1;
    if (!CHECK(first >= 0))
        return NULL;
    gen_inputs in;
    gen_inputs_make(seed, &in);
    /* GEN_SIGNATURE's inputs in order: a b n x v w */
    const void *vals[6] = {&in.a, &in.b, &in.n, &in.x, in.v, in.w};
    unit *u = &units[first];
    input_set *s = new_set(u);
    for (int32_t i = 0; i < u->prog->ninputs && i < 6; i++) {
        size_t bytes = (size_t)slot_bytes(&u->prog->slots[u->prog->inputs[i]]);
        s->data[i] = malloc(bytes);
        if (!s->data[i])
            abort();
        memcpy(s->data[i], vals[i], bytes);
    }
    s->max_iters = seed % 5 == 4 ? (int64_t)(1 + seed % 7) : 0;
    snprintf(s->what, sizeof s->what, "its inputs");
    return u;
}

static void add_generated(int count)
{
    for (uint64_t seed = 0; seed < (uint64_t)count; seed++) {
        gen_prog *g = malloc(sizeof *g);
        if (!g)
            abort();
        gen_make(g, seed);
        char *src = gen_text(g);
        char label[64];
        snprintf(label, sizeof label, "generated seed %llu", (unsigned long long)seed);
        add_generated_text(label, src, seed, NULL);
        free(src);
        free(g);
    }
}

/* ---- kernel calls ---------------------------------------------------------------------------- */

/* Binary kernels: CPU functions (test_sched's, and one with a tensor and a scalar result). */

/* (f32[4]) -> (f32[4], f32): doubles its argument, and the sum; fails past 1000, which stops
 * the run with an error on both sides */
static int double_and_sum(void *user, int nargs, const cfx_tensor *args, int nres, cfx_tensor *res)
{
    (void)user;
    if (nargs != 1 || nres != 2)
        return 1;
    const float *x = args[0].data;
    float *y = res[0].data, s = 0;
    for (int i = 0; i < 4; i++) {
        y[i] = 2 * x[i];
        s += y[i];
    }
    *(float *)res[1].data = s;
    return s > 1000;
}

/* (f32[4]) -> (f32[4]): w * 0.5 + 1 */
static int k_kw(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    (void)user, (void)nargs, (void)nresults;
    for (int i = 0; i < 4; i++)
        ((float *)results[0].data)[i] = ((const float *)args[0].data)[i] * 0.5f + 1.0f;
    return 0;
}

/* (i32[4]) -> (i32[4]): v * 2 + index, wrapping */
static int k_kv(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    (void)user, (void)nargs, (void)nresults;
    for (int i = 0; i < 4; i++)
        ((int32_t *)results[0].data)[i] = (int32_t)((uint32_t)((const int32_t *)args[0].data)[i] * 2u + (uint32_t)i);
    return 0;
}

/* (i32, i32) -> (i32): a * 3 + b, wrapping */
static int k_ka(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    (void)user, (void)nargs, (void)nresults;
    uint32_t a = (uint32_t)*(const int32_t *)args[0].data, b = (uint32_t)*(const int32_t *)args[1].data;
    *(int32_t *)results[0].data = (int32_t)(a * 3u + b);
    return 0;
}

/* (i32) -> (i32): b + 1, and a failure when b % 53 == 5 */
static int k_kfail(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    (void)user, (void)nargs, (void)nresults;
    int32_t b = *(const int32_t *)args[0].data;
    if (b % 53 == 5)
        return 1;
    *(int32_t *)results[0].data = (int32_t)((uint32_t)b + 1u);
    return 0;
}

/* Kernels given by their source: the first three compute what k_kw, k_kv and k_ka compute; kr
 * reverses a vector and adds one (a whole op with a tensor result, which one thread computes);
 * soft and hist work on the big vector of the program "big" below. */
static const char kw_src[] = "CFX_HD void kw(int64_t lo, int64_t hi, const float *x, float *y)\n"
                             "{\n    for (int64_t e = lo; e < hi; e++)\n        y[e] = x[e] * 0.5f + 1.0f;\n}\n";
static const char kv_src[] =
    "CFX_HD void kv(int64_t lo, int64_t hi, const int32_t *x, int32_t *y)\n"
    "{\n    for (int64_t e = lo; e < hi; e++)\n        y[e] = (int32_t)((uint32_t)x[e] * 2u + (uint32_t)e);\n}\n";
static const char ka_src[] = "CFX_HD void ka(const int32_t *a, const int32_t *b, int32_t *r)\n"
                             "{\n    *r = (int32_t)((uint32_t)*a * 3u + (uint32_t)*b);\n}\n";
static const char kr_src[] = "CFX_HD void kr(const int32_t *x, int32_t *y)\n"
                             "{\n    for (int i = 0; i < 4; i++)\n        y[i] = (int32_t)((uint32_t)x[3 - i] + 1u);\n}\n";
/* a smooth clamp of every element into (-1, 1), reading its neighbours too (a source may read
 * any element of an argument) */
static const char soft_src[] =
    "CFX_HD void soft(int64_t lo, int64_t hi, const float *x, const float *k, float *y)\n"
    "{\n"
    "    for (int64_t e = lo; e < hi; e++) {\n"
    "        float l = x[e > 0 ? e - 1 : e], r = x[e + 1 < 5000 ? e + 1 : e];\n"
    "        y[e] = tanhf((l + x[e] + r) * k[0]);\n"
    "    }\n"
    "}\n";
/* how many elements of x fall in each of 8 bins over [-1, 1), in one call */
static const char hist_src[] = "CFX_HD void hist(const float *x, float *h)\n"
                               "{\n"
                               "    for (int b = 0; b < 8; b++)\n"
                               "        h[b] = 0.0f;\n"
                               "    for (int i = 0; i < 5000; i++) {\n"
                               "        int b = (int)floorf((x[i] + 1.0f) * 4.0f);\n"
                               "        h[b < 0 ? 0 : b > 7 ? 7 : b] += 1.0f;\n"
                               "    }\n"
                               "}\n";

/* The two contexts: every kernel that has a CPU function as a binary kernel; or those that have
 * a source as sources, the others (kfail, double_and_sum) binary beside them. */
static cfx_context *binary_ctx, *source_ctx;

static void make_contexts(void)
{
    static const struct {
        const char *name, *signature;
        cfx_cpu_kernel fn;
        int form;
        const char *src;
    } k[] = {
        {"double_and_sum", "(f32[4]) -> (f32[4], f32)", double_and_sum, 0, NULL},
        {"kw", "(f32[4]) -> (f32[4])", k_kw, CFX_OP_ELEMENTS, kw_src},
        {"kv", "(i32[4]) -> (i32[4])", k_kv, CFX_OP_ELEMENTS, kv_src},
        {"ka", "(i32, i32) -> (i32)", k_ka, CFX_OP_WHOLE, ka_src},
        {"kfail", "(i32) -> (i32)", k_kfail, 0, NULL},
        {"kr", "(i32[4]) -> (i32[4])", NULL, CFX_OP_WHOLE, kr_src},
        {"soft", "(f32[5000], f32) -> (f32[5000])", NULL, CFX_OP_ELEMENTS, soft_src},
        {"hist", "(f32[5000]) -> (f32[8])", NULL, CFX_OP_WHOLE, hist_src},
    };
    binary_ctx = cfx_context_new();
    source_ctx = cfx_context_new();
    if (!CHECK(binary_ctx && source_ctx))
        abort();
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        char *err = NULL;
        if (k[i].fn)
            CHECK_INT(cfx_register_kernel(binary_ctx, k[i].name, k[i].signature, k[i].fn, NULL, NULL, &err), 0);
        free(err);
        err = NULL;
        if (k[i].src)
            CHECK_INT(cfx_register_source(source_ctx, k[i].name, k[i].signature, (cfx_op_form)k[i].form, k[i].src, &err),
                      0);
        else
            CHECK_INT(cfx_register_kernel(source_ctx, k[i].name, k[i].signature, k[i].fn, NULL, NULL, &err), 0);
        if (err)
            fprintf(stderr, "registering %s: %s\n", k[i].name, err);
        free(err);
    }
}

/* The unit's kernels in its program's order, from the context it was compiled with. */
static void resolve_kernels(unit *u, const cfx_context *ctx)
{
    exec_kernel *t = calloc((size_t)u->prog->nkernels + 1, sizeof *t);
    if (!t)
        abort();
    for (int32_t i = 0; i < u->prog->nkernels; i++) {
        const ctx_kernel *k = ctx_find(ctx, u->prog->strings + u->prog->kernels[i]);
        if (CHECK(k != NULL))
            t[i] = (exec_kernel){k->name, k->cpu_fn, k->cuda_fn, k->user};
    }
    u->kernels = t;
}

/* A hand-written program compiled with ctx: its graphs' units with their kernels; returns the
 * first. */
static unit *add_call_module(const char *label, const char *src, cfx_context *ctx)
{
    int first = add_module(label, src, ctx);
    if (!CHECK(first >= 0))
        return NULL;
    for (int k = first; k < nunits; k++)
        resolve_kernels(&units[k], ctx);
    return &units[first];
}

/* An input set of the unit from n values, its inputs in order. */
static void add_set(unit *u, const char *what, int n, ...)
{
    va_list ap;
    input_set *s = new_set(u);
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        const void *v = va_arg(ap, const void *);
        size_t bytes = (size_t)slot_bytes(&u->prog->slots[u->prog->inputs[i]]);
        s->data[i] = malloc(bytes);
        if (!s->data[i])
            abort();
        memcpy(s->data[i], v, bytes);
    }
    va_end(ap);
    snprintf(s->what, sizeof s->what, "%s", what);
}

/* Generated programs with kernel calls after lines that open blocks (gen_inject): with the
 * binary kernels, and with the source kernels (and kfail, binary, beside them). */
#define GENERATED_CALLS 20
static void add_generated_calls(void)
{
    static const char *const binary_stmts[] = {"w = kw(w)", "v = kv(v)", "a = ka(a, b)", "b = kfail(b)"};
    static const char *const source_stmts[] = {"w = kw(w)", "v = kv(v)", "a = ka(a, b)", "v = kr(v)",
                                               "b = kfail(b)"};
    gen_prog *g = malloc(sizeof *g);
    if (!g)
        abort();
    for (uint64_t seed = 1; seed <= 2 * GENERATED_CALLS; seed++) {
        int src = seed > GENERATED_CALLS;
        char label[96];
        gen_make(g, seed);
        char *plain = gen_text(g);
        char *text = plain ? gen_inject(plain, seed, src ? source_stmts : binary_stmts, src ? 5 : 4) : NULL;
        snprintf(label, sizeof label, "generated seed %llu with %s kernel calls", (unsigned long long)seed,
                 src ? "source" : "binary");
        unit *u = add_generated_text(label, text, seed, src ? source_ctx : binary_ctx);
        if (u)
            resolve_kernels(u, src ? source_ctx : binary_ctx);
        free(plain);
        free(text);
    }
    free(g);
}

/* The programs with kernel calls; the generated ones too unless `few` (the mutants' run). */
static int first_call_unit = -1; /* add_call_programs' first unit */

static void add_call_programs(int few)
{
    first_call_unit = nunits;
    make_contexts();
    {
        /* a scalar result written back around the call; binary */
        static const char src[] = "graph calls(x: f32[4], n: i32) -> (y: f32[4], total: f32) {\n"
                                  "  y = x\n"
                                  "  total = 0.0\n"
                                  "  for i in range(0, n) {\n"
                                  "    y, s = double_and_sum(y)\n"
                                  "    total = total + s\n"
                                  "  }\n"
                                  "}\n";
        static const float xs[2][4] = {{1, 2, 3, 4}, {100, 200, 300, 400}};
        static const int32_t ns[2] = {3, 2};
        unit *u = add_call_module("calls.cfx", src, binary_ctx);
        for (int k = 0; u && k < 2; k++)
            add_set(u, k ? "calls 1" : "calls 0", 2, xs[k], &ns[k]);
    }
    /* Scalars changed before the first call and after each (a launch must store and reload
     * them, and a block that starts late must load them before block 0 stores them again),
     * calls in branches and before an early return; the same text with binary kernels and
     * with sources. */
    static const char mixed_src[] =
        "graph mixed(a: i32, v: i32[4], w: f32[4], n: i32) -> (a2: i32, v2: i32[4], w2: f32[4], t: i32) {\n"
        "  a2 = a * 7 + 1\n"
        "  v2 = v\n"
        "  w2 = w\n"
        "  t = 0\n"
        "  while t < n {\n"
        "    t = t + 1\n"
        "    a2 = ka(a2, t)\n"
        "    if t % 2 == 0 {\n"
        "      w2 = kw(w2)\n"
        "    } else {\n"
        "      v2 = kv(v2)\n"
        "      a2 = a2 - t\n"
        "    }\n"
        "    if a2 % 11 == 3 {\n"
        "      return\n"
        "    }\n"
        "  }\n"
        "  a2 = ka(a2, 5)\n"
        "}\n";
    for (int src = 0; src < 2; src++) {
        static const int32_t as[2] = {3, -20}, ns[2] = {6, 13};
        static const int32_t v[4] = {1, -2, 3, 40};
        static const float w[4] = {0.5f, -1.5f, 2.0f, 8.0f};
        unit *u = add_call_module(src ? "mixed_source.cfx" : "mixed_binary.cfx", mixed_src,
                                  src ? source_ctx : binary_ctx);
        for (int k = 0; u && k < 2; k++)
            add_set(u, k ? "mixed 1" : "mixed 0", 4, &as[k], v, w, &ns[k]);
    }
    {
        /* Big vectors through source ops: soft split over the blocks, hist computed by one
         * thread of block 0 and read by every block after a grid barrier; a product big enough
         * for the plan to launch it (product_min below) and a binary call, which end the
         * launch. */
        static const char src[] =
            "graph big(x: f32[5000], k: f32, A: f32[8, 8], B: f32[8, 4], n: i32) -> (y: f32[5000], h: f32[8], "
            "s: f32, P: f32[8, 4], a: i32) {\n"
            "  y = x\n"
            "  h = zeros(f32[8])\n"
            "  s = 0.0\n"
            "  P = B\n"
            "  a = 1\n"
            "  for i in range(0, n) {\n"
            "    y = soft(y, k) * 0.75 + 0.1\n"
            "    h = hist(y)\n"
            "    s = s + h[i % 8] + sum(y)\n"
            "    P = A @ P\n"
            "    a = kfail(a + i)\n"
            "  }\n"
            "}\n";
        static float x[5000], A[64], B[32];
        static const float kk = 1.25f;
        static const int32_t ns[2] = {3, 1};
        for (int i = 0; i < 5000; i++)
            x[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
        for (int i = 0; i < 64; i++)
            A[i] = (float)((i * 5) % 7) / 8.0f - 0.25f;
        for (int i = 0; i < 32; i++)
            B[i] = (float)(i % 5) - 2.0f;
        unit *u = add_call_module("big.cfx", src, source_ctx);
        if (u)
            u->product_min = 256; /* 8 x 8 x 4 */
        for (int k = 0; u && k < 2; k++)
            add_set(u, k ? "big 1" : "big 0", 5, x, &kk, A, B, &ns[k]);
    }
    if (!few)
        add_generated_calls();
}

/* ---- hand-built programs ------------------------------------------------------------------- */

static cfx_record rec(int kind, int op, int dtype, int a, int b, int c)
{
    cfx_record r;
    test_record(&r, kind, op, dtype, 0, a, b, c, 0, 1, 1);
    return r;
}

/* A cycle with two entries, which no structured statement expresses: the generator must write
 * the pc-dispatch loop. x counts up to 10 through both TICKs; it starts in the middle of the
 * cycle when x < 0. */
static cfx_prog *irreducible_program(void)
{
    char err[256];
    prog_builder *b = prog_begin("irreducible.cfx", "irreducible");
    int32_t x = prog_slot(b, CFX_I32, 0, NULL, SLOT_INPUT, "x");
    int32_t out = prog_slot(b, CFX_I32, 0, NULL, SLOT_RESULT, "out");
    int32_t c = prog_slot(b, CFX_BOOL, 0, NULL, SLOT_TEMP, NULL);
    int32_t zero = 0, one = 1, ten = 10;
    int32_t k0 = prog_const(b, CFX_I32, 0, NULL, &zero), k1 = prog_const(b, CFX_I32, 0, NULL, &one);
    int32_t k10 = prog_const(b, CFX_I32, 0, NULL, &ten);
    prog_emit(b, rec(REC_COPY, 0, CFX_I32, out, x, 0));                 /* 0 */
    prog_emit(b, rec(REC_BINARY, OP_LT, CFX_I32, c, out, k0));          /* 1 */
    prog_emit(b, rec(REC_JUMP_TRUE, 0, CFX_BOOL, c, 6, 0));             /* 2: into the middle */
    prog_emit(b, rec(REC_TICK, 0, 0, 0, 0, 0));                         /* 3: A */
    prog_emit(b, rec(REC_BINARY, OP_ADD, CFX_I32, out, out, k1));       /* 4 */
    prog_emit(b, rec(REC_PRINT, 0, CFX_I32, out, -1, 0));               /* 5 */
    prog_emit(b, rec(REC_TICK, 0, 0, 0, 0, 0));                         /* 6: B */
    prog_emit(b, rec(REC_BINARY, OP_ADD, CFX_I32, out, out, k1));       /* 7 */
    prog_emit(b, rec(REC_BINARY, OP_LT, CFX_I32, c, out, k10));         /* 8 */
    prog_emit(b, rec(REC_JUMP_TRUE, 0, CFX_BOOL, c, 3, 0));                    /* 9: back to A */
    prog_emit(b, rec(REC_HALT, 0, 0, 0, 0, 0));                         /* 10 */
    prog_add_input(b, x);
    prog_add_result(b, out);
    cfx_prog *p = prog_finish(b, err, sizeof err);
    if (p && prog_validate(p, err, sizeof err) != 0) {
        fprintf(stderr, "irreducible program: %s\n", err);
        prog_free(p);
        p = NULL;
    }
    return p;
}

static cfx_prog *irreducible;

static void add_irreducible(void)
{
    irreducible = irreducible_program();
    if (!CHECK(irreducible != NULL))
        return;
    unit *u = new_unit();
    snprintf(u->label, sizeof u->label, "hand-built irreducible program");
    u->prog = irreducible;
    static char *names[] = {"x"};
    static cfx_type types[1];
    types[0].dtype = CFX_I32;
    u->names = names;
    u->types = types;
    u->expect_dispatch = 1;
    static const int32_t xs[3] = {3, -5, 20};
    for (int k = 0; k < 3; k++) {
        input_set *s = new_set(u);
        s->data[0] = malloc(sizeof xs[k]);
        if (!s->data[0])
            abort();
        memcpy(s->data[0], &xs[k], sizeof xs[k]);
        snprintf(s->what, sizeof s->what, "x = %d", (int)xs[k]);
    }
}

/* ---- generating and compiling ---------------------------------------------------------------- */

typedef struct mutant {
    const char *name, *from, *to;
} mutant;

/* Replaces every `from` in s by `to`; returns how many. */
static int replace_all(strbuf *s, const char *from, const char *to)
{
    strbuf r = {0};
    int n = 0;
    const char *p = sb_str(s);
    for (const char *q; (q = strstr(p, from)) != NULL; p = q + strlen(from), n++) {
        sb_append(&r, p, (size_t)(q - p));
        sb_puts(&r, to);
    }
    sb_puts(&r, p);
    sb_free(s);
    *s = r;
    return n;
}

static char workdir[256];
static int stress_run; /* --stress */
/* --mutants: a mutant may loop where the program does not (an add that subtracts), so every
 * run there has a budget, on both sides (20000 iterations, as random inputs have: on host
 * threads every CUDA thread of the generated kernel runs every iteration) */
static int64_t budget_cap;

/* How the generated code is compiled; warnings are errors: a warning in generated code is a bug
 * of the generator. The C target, the code users compile, at -O1; the CUDA target on the
 * stand-in at -Og: its kernels, dozens to a C++ file, were most of test_gen's time at -O1 (about
 * 100 s on two cores, 70 s at -Og), and what they are run for, barriers, races and resumes, does
 * not depend on the level. */
#define GEN_C_FLAGS "-std=c11 -O1 -fPIC -shared -ffp-contract=off -Wall -Werror -Wno-unused"
#define GEN_CXX_FLAGS "-std=c++17 -Og -fPIC -shared -pthread -ffp-contract=off -Wall -Werror -Wno-unused"

/* CFX_TEST_CC_CACHE=DIR keeps each object compiled here in DIR, named by a hash of the
 * compiler, its flags, the source and every header under tests/, host/, kernels/ and device/
 * (what it may include), and a build of the same text takes its object from there instead of
 * compiling it again. The generated code is the same in every build of one tree, so .ci/run
 * gives the release build's, the deep sweeps' and the sanitizers' runs one folder, and most of
 * the sanitizer run's time (the compiler's, on code built without the sanitizers) goes. Unset,
 * the default, every object is compiled. */
static const char *cc_cache;
static uint64_t cc_headers; /* the headers' hash, taken once */

/* The sum of the hashes of each header's path and text below dir: the same whatever order the
 * folder lists them in. */
static uint64_t hash_headers(const char *dir, int depth)
{
    uint64_t sum = 0;
    DIR *dp = depth < 8 ? opendir(dir) : NULL;
    struct dirent *de;
    while (dp && (de = readdir(dp)) != NULL) {
        char path[1024];
        struct stat st;
        const char *ext = strrchr(de->d_name, '.');
        if (de->d_name[0] == '.' || snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path ||
            stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            sum += hash_headers(path, depth + 1);
        } else if (ext && (strcmp(ext, ".h") == 0 || strcmp(ext, ".cuh") == 0)) {
            long len = 0;
            char *text = test_read_file(path, &len);
            uint64_t h = hash_bytes(HASH_SEED, path, strlen(path));
            sum += text ? hash_bytes(h, text, (size_t)len) : h;
            free(text);
        }
    }
    if (dp)
        closedir(dp);
    return sum;
}

/* CFX_TEST_CC_CACHE, read once */
static void cc_cache_open(void)
{
    static const char *const dirs[4] = {"tests", "host", "kernels", "device"};
    cc_cache = getenv("CFX_TEST_CC_CACHE");
    if (cc_cache && !*cc_cache)
        cc_cache = NULL;
    for (int i = 0; cc_cache && i < 4; i++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", CFX_SOURCE_DIR, dirs[i]);
        cc_headers += hash_headers(dir, 0);
    }
}

/* Copies a file to a new one (written aside, then renamed: a reader never sees half of it);
 * 0 or -1. */
static int copy_file(const char *from, const char *to)
{
    long len = 0;
    char *data = test_read_file(from, &len), tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.%d", to, (int)getpid());
    FILE *f = data ? fopen(tmp, "wb") : NULL;
    int ok = f && fwrite(data, 1, (size_t)len, f) == (size_t)len;
    if (f)
        ok &= fclose(f) == 0;
    ok = ok && rename(tmp, to) == 0;
    if (!ok)
        remove(tmp);
    free(data);
    return ok ? 0 : -1;
}

/* A compile of generated code under way: compile_start writes src to PATH.EXT and starts the
 * compiler on it in a child (or takes the object from CFX_TEST_CC_CACHE); compile_finish waits
 * for it and loads PATH.so. The C and C++ objects of one build are compiled at once, each its
 * own process. */
typedef struct compile_job {
    char file[512], so[512], errs[512];
    char cached[1024]; /* the object's place in the cache, or "" */
    pid_t pid; /* 0: nothing started (the file could not be written, or the cache had it) */
    int hit;   /* the cache had it: j->so is a copy */
} compile_job;

static void compile_start(compile_job *j, const char *path, const char *ext, const char *compiler,
                          const char *flags, strbuf *src)
{
    char cmd[4096];
    snprintf(j->file, sizeof j->file, "%s.%s", path, ext);
    snprintf(j->so, sizeof j->so, "%s.so", path);
    snprintf(j->errs, sizeof j->errs, "%s.err", path);
    j->pid = 0;
    j->hit = 0;
    j->cached[0] = 0;
    if (cc_cache && !src->oom) {
        uint64_t h = hash_bytes(HASH_SEED, compiler, strlen(compiler));
        h = hash_bytes(h, flags, strlen(flags));
        h = hash_bytes(h, sb_str(src), src->len);
        h += cc_headers;
        snprintf(j->cached, sizeof j->cached, "%s/%016llx.so", cc_cache, (unsigned long long)h);
        if (access(j->cached, R_OK) == 0 && copy_file(j->cached, j->so) == 0) {
            j->hit = 1;
            return;
        }
    }
    FILE *f = fopen(j->file, "w");
    if (!CHECK(f != NULL) || src->oom) {
        if (f)
            fclose(f);
        return;
    }
    fputs(sb_str(src), f);
    fclose(f);
    snprintf(
        cmd, sizeof cmd,
        "'%s' %s -I'%s/tests' -I'%s/host/gen' -I'%s/kernels' -I'%s/device' -I'%s' -o '%s' '%s' -lm 2> '%s'",
        compiler, flags, CFX_SOURCE_DIR, CFX_SOURCE_DIR, CFX_SOURCE_DIR, CFX_SOURCE_DIR, CFX_SOURCE_DIR, j->so,
        j->file, j->errs);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    if (CHECK(pid > 0))
        j->pid = pid;
}

static void *compile_finish(compile_job *j)
{
    int st = 0;
    if (!j->hit) { /* the compiler's child: wait for it, then keep its object */
        if (j->pid <= 0)
            return NULL;
        while (waitpid(j->pid, &st, 0) < 0)
            if (!CHECK(errno == EINTR))
                return NULL;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            char *msg = test_read_file(j->errs, NULL);
            fprintf(stderr, "the generated code (%s) does not compile:\n%.4000s\n", j->file, msg ? msg : "");
            free(msg);
            CHECK(0);
            return NULL;
        }
        if (j->cached[0])
            copy_file(j->so, j->cached); /* a cache that cannot be written only costs a compile */
    }
    void *h = dlopen(j->so, RTLD_NOW | RTLD_LOCAL);
    if (!CHECK(h != NULL))
        fprintf(stderr, "dlopen %s: %s\n", j->so, dlerror());
    return h;
}

static void *compile_object(const char *path, const char *ext, const char *compiler, const char *flags,
                            strbuf *src)
{
    compile_job j;
    compile_start(&j, path, ext, compiler, flags, src);
    return compile_finish(&j);
}

/* A program with a record kind the generator does not know (one added to program.h before the
 * generator learnt it) fails the test: the executors would run it with the interpreter, and the
 * compiled kernel's promise is every program. The generator must still refuse it, naming the
 * kind, so that the fallback works where a kind is newer than the generator. */
static int unknown_kinds;
static int refused(unit *u)
{
    const char *kind = NULL;
    for (int32_t i = 0; i < u->prog->nrecords && !kind; i++) {
        int known = 0;
#define X(name) known |= u->prog->records[i].kind == REC_##name;
        CGEN_KINDS(X)
#undef X
        if (!known)
            kind = rec_names[u->prog->records[i].kind];
    }
    if (!kind)
        return 0;
    if (!u->refused) {
        char err[512];
        strbuf sb = {0};
        u->refused = 1;
        unknown_kinds++;
        CHECK(cgen_emit(u->prog, NULL, &sb, NULL, err, sizeof err) == -1);
        if (!CHECK(strstr(err, kind) && strstr(err, "not known to the code generator")))
            fprintf(stderr, "%s: refused with \"%s\"\n", u->label, err);
        sb_free(&sb);
        fprintf(stderr,
                "%s: not generated: record kind %s is not known to the code generator (teach "
                "host/gen/cgen.c to write it)\n",
                u->label, kind);
        CHECK(0);
    }
    return 1;
}

static int has_call(const cfx_prog *p)
{
    for (int32_t i = 0; i < p->nrecords; i++)
        if (p->records[i].kind == REC_CALL)
            return 1;
    return 0;
}

/* A mutant of the C the generator writes for both targets, built without --stress: its C
 * target alone must catch it (the CUDA target's own mutants are named "(CUDA)"). */
static int mutant_c_only;
/* A CUDA mutant built without --stress that is not about launches: the generated programs with
 * calls are left out of its CUDA runs (the hand-written ones with calls stay). */
static int mutant_no_generated_calls;

/* Whether the unit's CUDA target runs on host threads: every program's (those with calls
 * included), but for the other generated programs only under --stress, one in EMULATED_EVERY
 * (compiling their kernels as C++ costs more than all the rest). */
static int emulated(const unit *u)
{
    unsigned long long seed;
    if (mutant_c_only)
        return 0;
    if (u->calls) /* the CUDA target's launches and resumes: every program with calls */
        return !mutant_no_generated_calls || strncmp(u->label, "generated", 9) != 0;
    if (sscanf(u->label, "generated seed %llu", &seed) != 1)
        return 1;
    return stress_run && seed % EMULATED_EVERY == 0;
}

/* Writes after reads with no block barrier between, in the CUDA target's text: a line that reads
 * an element of a tensor into a scalar (`sN = ...[...]`, which every thread of the block does),
 * then, with no barrier written between, a loop of the block's threads over a tensor's
 * elements (which writes elements some thread may not have read yet). compute-sanitizer's
 * racecheck found such hazards on an H100 in the kernels of graphs/augmented.cfx,
 * index_rows.cfx and tuples.cfx; the stand-in's fibers cannot show them (only thread 0's
 * scalars reach the results). Counts them in straight-line text (not along a loop's back
 * edge). */
static int unfenced_writes;
static int fences_caught; /* kernels where the check finds the writes once their barriers are out */
static void check_fences(const char *label, const char *text)
{
    int reads = 0, line_no = 1;
    for (const char *l = text; *l; line_no++) {
        const char *end = strchr(l, '\n');
        size_t n = end ? (size_t)(end - l) : strlen(l);
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf ? n : sizeof buf - 1), l);
        const char *t = buf;
        while (*t == ' ')
            t++;
        int v = 0;
        if (strstr(t, "__syncthreads") || strstr(t, "ck_grid_barrier(") || strstr(t, "k_block_reduce(") ||
            strstr(t, "ck_poll(") || strstr(t, "ck_combine")) {
            reads = 0;
        } else if (strncmp(t, "for (int64_t e_ = ", 18) == 0 && strstr(t, "threadIdx.x")) {
            if (reads) {
                if (unfenced_writes++ < 5 && label)
                    fprintf(stderr, "%s: CUDA line %d: a loop of the block's threads writes after scalar reads "
                            "of tensor elements with no block barrier between\n", label, line_no);
                reads = 0;
            }
        } else if (t[0] == 's' && sscanf(t, "s%d = ", &v) == 1 && strchr(t, '[')) {
            reads = 1;
        }
        l += n + (end != NULL);
    }
}

static int (*host_launch)(void (*kernel)(const ck_args a), const ck_args *args,
                          unsigned int blocks, unsigned int threads, int order, unsigned int seed,
                          int skew, struct CUgraphExec_st **tails, int *ntails);
static void (*host_set_name)(const char *name); /* what the stand-in's hang report names */
/* what the CUDA target's kernels held: one-block regions (of which every block runs), grid
 * barriers, records that end the launch, kernels called inline (by their source) */
static int regions, redundant, barriers, launches, inline_calls, alternating, ahead;
/* what their runs did: launches ended at a record and resumed after it, on each path */
static int sites_paused, sites_tail;
static int reruns; /* kernels seen to stop for a rerun when their print buffer was full */

/* Writes units [lo, hi) into one C file, both forms of each, and (with a C++ compiler) their
 * CUDA kernels into one C++ file over tests/ck_host.h; compiles and loads both. handles[0] and
 * handles[1] get the objects (NULL where there is none). Returns 0, -1, or 1 for a mutant that
 * changes nothing in them (not built: its runs would only repeat the normal run's, and a run
 * that differs there, on a loaded machine, would count as the mutant caught). */
static int build_object(int obj, int lo, int hi, const mutant *mut, int *mutated, void **handles)
{
    strbuf src = {0}, cuda = {0};
    char path[512], err[512];
    int ncuda = 0; /* CUDA kernels written: none, no C++ object */
    handles[0] = handles[1] = NULL;
    sb_puts(&cuda, "#include \"ck_host.h\"\n");
    for (int k = lo; k < hi; k++) {
        unit *u = &units[k];
        static const char *const names[4] = {"structured_", "dispatch_", "cuda_", "cudad_"};
        if (refused(u))
            continue;
        u->calls = has_call(u->prog);
        u->cuda = u->cuda_dispatch = NULL; /* an earlier build's, whose object is closed */
        for (int form = 0; form < 4; form++) {
            char entry[64];
            snprintf(entry, sizeof entry, "%s%d", names[form], k);
            cgen_options o = {form >= 2 ? CGEN_TARGET_CUDA : CGEN_TARGET_C, form == 1 || form == 3,
                              entry, NULL, NULL, NULL, u->product_min, 1, 64}; /* the fewest blocks and
                                                                                   * threads it runs with */
            cgen_info info;
            size_t at = cuda.len;
            if (form >= 2 && (!CFX_CXX[0] || !emulated(u)))
                continue; /* no C++ compiler, or a generated program's outside --stress */
            if (cgen_emit(u->prog, &o, form >= 2 ? &cuda : &src, &info, err, sizeof err) != 0) {
                fprintf(stderr, "%s: cgen_emit: %s\n", u->label, err);
                CHECK(0);
                sb_free(&src);
                sb_free(&cuda);
                return -1;
            }
            ncuda += form >= 2;
            if (form >= 2 && !mut) {
                check_fences(u->label, sb_str(&cuda) + at);
                /* the test of the check: the generator's own barriers for this taken out */
                strbuf bare = {0};
                sb_puts(&bare, sb_str(&cuda) + at);
                if (replace_all(&bare, "__syncthreads(); /* the reads", "; /* the reads") > 0) {
                    int before = unfenced_writes;
                    check_fences(NULL, sb_str(&bare));
                    fences_caught += unfenced_writes > before;
                    unfenced_writes = before;
                }
                sb_free(&bare);
            }
            if (form == 0)
                u->is_structured = info.structured;
            if (form == 2) {
                u->publish_bytes = info.publish_bytes;
                u->alt_bytes = info.alt_bytes;
                u->threads = info.needs_block || info.needs_grid ? CK_THREADS : 32;
                u->tiles = strstr(sb_str(&cuda) + at, "ck_matmul_tiles(") != NULL ||
                           strstr(sb_str(&cuda) + at, "ck_matmul_tiles_batch(") != NULL; /* a batch's tiles */
                u->launches = info.launches;
                regions += info.regions;
                redundant += info.redundant;
                barriers += info.barriers;
                launches += info.launches;
                inline_calls += info.inline_calls;
                alternating += info.alternates > 0;
                ahead += info.aheads > 0;
            }
        }
        u->object = obj;
    }
    if (mut) {
        const int places = replace_all(&src, mut->from, mut->to) + replace_all(&cuda, mut->from, mut->to);
        *mutated += places;
        if (places == 0) { /* the object as the normal run builds it: nothing to catch */
            sb_free(&src);
            sb_free(&cuda);
            return 1;
        }
    }
    compile_job jobs[2];
    jobs[1].pid = 0;
    snprintf(path, sizeof path, "%s/gen%d%s", workdir, obj, mut ? "m" : "");
    compile_start(&jobs[0], path, "c", CFX_CC, GEN_C_FLAGS, &src);
    if (CFX_CXX[0] && ncuda > 0) {
        snprintf(path, sizeof path, "%s/cuda%d%s", workdir, obj, mut ? "m" : "");
        compile_start(&jobs[1], path, "cpp", CFX_CXX, GEN_CXX_FLAGS, &cuda);
    }
    handles[0] = compile_finish(&jobs[0]);
    handles[1] = compile_finish(&jobs[1]);
    sb_free(&src);
    sb_free(&cuda);
    if (!handles[0] || (CFX_CXX[0] && ncuda > 0 && !handles[1]))
        return -1;
    *(void **)&host_launch = dlsym(handles[1] ? handles[1] : handles[0], "ck_host_launch");
    *(void **)&host_set_name = dlsym(handles[1] ? handles[1] : handles[0], "ck_host_set_name");
    for (int k = lo; k < hi; k++) {
        char entry[64];
        if (units[k].refused)
            continue;
        snprintf(entry, sizeof entry, "structured_%d", k);
        *(void **)&units[k].structured = dlsym(handles[0], entry);
        snprintf(entry, sizeof entry, "dispatch_%d", k);
        *(void **)&units[k].dispatch = dlsym(handles[0], entry);
        if (!CHECK(units[k].structured && units[k].dispatch))
            return -1;
        if (handles[1] && emulated(&units[k])) {
            snprintf(entry, sizeof entry, "cuda_%d", k);
            *(void **)&units[k].cuda = dlsym(handles[1], entry);
            snprintf(entry, sizeof entry, "cudad_%d", k);
            *(void **)&units[k].cuda_dispatch = dlsym(handles[1], entry);
            if (!CHECK(units[k].cuda && units[k].cuda_dispatch && host_launch))
                return -1;
        }
    }
    return 0;
}

/* ---- running -------------------------------------------------------------------------------- */

/* Printed values: the record and the slot's bytes of each, back to back. */
typedef struct printlog {
    strbuf bytes;
    int32_t records[4096];
    int64_t offsets[4096];
    int n, overflow;
    exec_atomic_int *cancel; /* set after the third print when not NULL */
} printlog;

static void log_print(printlog *l, const cfx_prog *p, int32_t record, const void *data)
{
    if (l->n >= 4096) {
        l->overflow = 1;
        return;
    }
    l->records[l->n] = record;
    l->offsets[l->n] = (int64_t)l->bytes.len;
    l->n++;
    sb_append(&l->bytes, data, (size_t)slot_bytes(&p->slots[p->records[record].a]));
    if (l->cancel && l->n == 3)
        atomic_store(l->cancel, 1);
}

static const cfx_prog *print_prog;
static void cpu_print(void *user, const cfx_prog *p, int32_t record, const void *data)
{
    log_print(user, p, record, data);
}

static void gen_print(void *user, int32_t record, const void *data)
{
    log_print(user, print_prog, record, data);
}

/* The CALL hook of the generated code: the registered kernel on the record's operands, as
 * cpu.c hands them over. */
static const exec_kernel *call_table;
static int gen_call(void *user, int32_t record, uint8_t *arena)
{
    const cfx_prog *p = user;
    const cfx_record *r = &p->records[record];
    cfx_tensor t[16];
    if (!call_table || r->c > 16 || !call_table[r->a].cpu_fn)
        return 1;
    for (int32_t k = 0; k < r->c; k++) {
        const cfx_slot *s = &p->slots[p->table[r->b + k]];
        memset(&t[k], 0, sizeof t[k]);
        t[k].type.dtype = (cfx_dtype)s->dtype;
        t[k].type.rank = s->rank;
        for (int d = 0; d < s->rank; d++)
            t[k].type.dims[d] = s->dims[d];
        t[k].data = arena + s->offset;
    }
    return call_table[r->a].cpu_fn(call_table[r->a].user, r->d, t, r->c - r->d, t + r->d);
}

/* Equal values of a slot's type: integers and bools bit for bit, reals within TOL (NaN = NaN). */
static int same_values(int dtype, int64_t n, const void *x, const void *y, int64_t *first_diff)
{
    for (int64_t e = 0; e < n; e++) {
        int same = 1;
        if (dtype == CFX_F32 || dtype == CFX_F64) {
            double a = dtype == CFX_F32 ? ((const float *)x)[e] : ((const double *)x)[e];
            double b = dtype == CFX_F32 ? ((const float *)y)[e] : ((const double *)y)[e];
            same = (isnan(a) && isnan(b)) || a == b ||
                   (isfinite(b) && fabs(a - b) <= TOL * fmax(1.0, fabs(b)));
        } else {
            int size = dtype_size(dtype);
            same = memcmp((const uint8_t *)x + e * size, (const uint8_t *)y + e * size,
                          (size_t)size) == 0;
        }
        if (!same) {
            *first_diff = e;
            return 0;
        }
    }
    return 1;
}

typedef struct result {
    exec_outcome out;
    uint8_t *arena;  /* the generated side's arena; the cpu side's results */
    void *res[MAX_INPUTS];
    printlog log;
} result;

static void result_free(result *r)
{
    free(r->arena);
    for (int i = 0; i < MAX_INPUTS; i++)
        free(r->res[i]);
    sb_free(&r->log.bytes);
}

static int run_cpu(const unit *u, const input_set *s, int64_t max_iters, int cancel_mode, result *r)
{
    const cfx_prog *p = u->prog;
    exec_atomic_int cancel;
    atomic_init(&cancel, cancel_mode == 1);
    exec_run run;
    memset(&run, 0, sizeof run);
    for (int32_t i = 0; i < p->nresults; i++) {
        size_t bytes = (size_t)slot_bytes(&p->slots[p->results[i]]);
        r->res[i] = malloc(bytes ? bytes : 1);
        if (!r->res[i])
            abort();
        memset(r->res[i], 0xA5, bytes);
    }
    run.prog = p;
    run.inputs = s->data;
    run.results = r->res;
    run.max_iters = max_iters;
    run.cancel = &cancel;
    run.kernels = u->kernels;
    run.print = cpu_print;
    run.print_user = &r->log;
    r->log.cancel = cancel_mode == 2 ? &cancel : NULL;
    return cpu_run(&run, &r->out);
}

/* An arena as the cpu executor lays it out: the constants, zeros, the inputs in their slots. */
static uint8_t *new_arena(const cfx_prog *p, const input_set *s)
{
    uint8_t *arena = calloc(1, (size_t)(p->arena_bytes > 0 ? p->arena_bytes : 16));
    if (!arena)
        abort();
    if (p->const_bytes > 0)
        memcpy(arena, p->consts, (size_t)p->const_bytes);
    for (int32_t i = 0; i < p->ninputs; i++) {
        const cfx_slot *sl = &p->slots[p->inputs[i]];
        memcpy(arena + sl->offset, s->data[i], (size_t)slot_bytes(sl));
    }
    return arena;
}

static void run_generated(const unit *u, cgen_host_fn fn, const input_set *s, int64_t max_iters,
                          int cancel_mode, result *r)
{
    const cfx_prog *p = u->prog;
    exec_atomic_int cancel;
    atomic_init(&cancel, cancel_mode == 1);
    r->arena = new_arena(p, s);
    cgen_host_args a;
    memset(&a, 0, sizeof a);
    a.arena = r->arena;
    a.max_iters = max_iters;
    a.cancel = &cancel;
    a.print = gen_print;
    a.print_user = &r->log;
    a.call = gen_call;
    a.call_user = (void *)p;
    a.status = -100;
    r->log.cancel = cancel_mode == 2 ? &cancel : NULL;
    print_prog = p;
    call_table = u->kernels;
    fn(&a);
    r->out.status = (cfx_status)a.status;
    r->out.record = a.record;
    r->out.detail[0] = a.detail[0];
    r->out.detail[1] = a.detail[1];
    r->out.iterations = a.iterations;
}

/* The CUDA target on `blocks` host threads of u->threads CUDA threads each, which run in
 * `order` (tests/cuda_host.h: 0 forward, 1 reverse, 2 shuffled); the printed values are read
 * from the kernel's buffer afterwards, as device/compiled.cu drains it. */
#define EMULATED_BLOCKS 3
static int cuda_runs;       /* every run so far: the next one's seed */
static int cuda_runs_block; /* of which with blocks of CK_THREADS */
static int standin_sweep;   /* CFX_STANDIN_SWEEP=1: every run in all three orders, with the device's sizes */

/* The block size of a run: the device's (u->threads) for the first run of a program's
 * structured kernel, for a kernel with a tiled product (kernels/block.cuh needs them all) and
 * with CFX_STANDIN_SWEEP=1; otherwise 64 where the device launches CK_THREADS, which shows the
 * same missing barriers for a quarter of the time. */
static unsigned int run_threads(const unit *u, int first)
{
    return first || u->tiles || standin_sweep || u->threads < CK_THREADS ? u->threads : 64;
}
/* The work of a record that ended the launch, between two launches, as device/compiled.cu
 * has it done (the kernel's CPU function here; the product as the cpu executor computes it).
 * Returns 0, or non-zero for a kernel that failed. */
static int site_work(const unit *u, int32_t i, uint8_t *arena)
{
    const cfx_prog *p = u->prog;
    const cfx_record *r = &p->records[i];
    if (r->kind == REC_CALL) {
        call_table = u->kernels;
        return gen_call((void *)p, i, arena);
    }
    const cfx_slot *sa = &p->slots[r->a], *sb = &p->slots[r->b], *sc = &p->slots[r->c];
    rec_mm g = rec_matmul(p->slots, r); /* a batch: each product in turn */
    int64_t es = dtype_size(r->dtype);
    for (int64_t e = 0; e < g.batch; e++)
        k_matmul(r->dtype, arena + sa->offset + e * g.m * g.n * es, arena + sb->offset + e * g.sb * es,
                 arena + sc->offset + e * g.sc * es, g.m, g.k, g.n, 0, g.m * g.n);
    return 0;
}

/* The kernel's own graph, as tests/ck_host.h's cudaGetCurrentGraphExec names it. */
#define BROKEN_LAUNCH 99 /* the status of a run whose launches went wrong: no cfx_status */
#define CK_HOST_SELF ((struct CUgraphExec_st *)(intptr_t)-1)
/* More launches than this in one run is a kernel that never gets past a record (the programs
 * here take at most a few hundred). */
#define MAX_LAUNCHES 2000
static int most_launches; /* in one run */

static void run_cuda(const unit *u, void (*kernel)(const ck_args a), const input_set *s,
                     int64_t max_iters, int cancel, unsigned int blocks, unsigned int threads,
                     int order, int skew, uint32_t print_cap, int device_launch, result *r)
{
    const cfx_prog *p = u->prog;
    ck_state st = {0, -1, {0, 0}, 0};
    ck_control ctl;
    ck_sync sync;
    k_acc partials[2 * 16];
    memset(&ctl, 0, sizeof ctl);
    memset(&sync, 0, sizeof sync);
    ctl.cancel = cancel;
    ctl.max_iters = max_iters;
    r->arena = new_arena(p, s);
    uint8_t *publish = calloc(2, (size_t)u->publish_bytes), *prints = malloc(print_cap);
    uint8_t *alt = calloc(1, (size_t)u->alt_bytes + 16);
    if (!publish || !prints || !alt)
        abort();
    ck_args a;
    memset(&a, 0, sizeof a);
    a.arena = r->arena;
    a.state = &st;
    a.control = &ctl;
    a.sync = &sync;
    a.partials = partials;
    a.publish = publish;
    a.alt = alt;
    a.print_buf = prints;
    a.print_cap = print_cap;
    sync.max_iters = max_iters;
    cuda_runs_block += threads == CK_THREADS;
    /* the fake graph of record i is i + 1 (ck_host.h) */
    struct CUgraphExec_st **sites = calloc((size_t)p->nrecords + 1, sizeof *sites);
    if (!sites)
        abort();
    for (int32_t i = 0; i < p->nrecords; i++)
        sites[i] = (struct CUgraphExec_st *)(intptr_t)(i + 1);
    a.site_exec = sites;
    a.device_launch = device_launch;
    /* device/compiled.cu's run: launch; at a pause or after the kernel's tail launches, the
     * record's work, then the next launch, which resumes after it. A launch that ends anywhere
     * else ends the run with a status no executor reports, which the comparison catches (and
     * a mutant is meant to make). */
    for (int n = 0;; n++) {
        struct CUgraphExec_st *tails[4];
        int ntails = 0;
        int32_t site = -1;
        if (host_set_name)
            host_set_name(u->label);
        if (!CHECK_INT(host_launch(kernel, &a, blocks, threads, order, (unsigned)cuda_runs++, skew, tails, &ntails), 0))
            break;
        if (!device_launch && st.status == CK_STATUS_PAUSE) {
            site = st.record;
            sites_paused++;
        } else if (device_launch && ntails > 0) {
            /* the site's graph, then the kernel's own */
            site = ntails == 2 && tails[1] == CK_HOST_SELF && tails[0] != CK_HOST_SELF
                       ? (int32_t)((intptr_t)tails[0] - 1)
                       : -1;
            sites_tail++;
        } else {
            break;
        }
        if (n + 1 > most_launches)
            most_launches = n + 1;
        if (site < 0 || site >= p->nrecords || sync.resume != site + 1 || n >= MAX_LAUNCHES ||
            (p->records[site].kind != REC_CALL && p->records[site].kind != REC_MATMUL)) {
            if (budget_cap == 0)
                fprintf(stderr, "%s: a launch ended at record %d (resume %d) after %d launches\n", u->label,
                        (int)site, (int)sync.resume, n);
            st.status = BROKEN_LAUNCH;
            break;
        }
        if (site_work(u, site, r->arena) != 0) {
            /* a kernel that fails stops the run there with an error, as every executor does */
            st.status = CFX_ERROR;
            st.record = site;
            st.detail[0] = st.detail[1] = 0;
            break;
        }
        if (!device_launch) {
            st.status = CFX_OK;
            st.record = -1;
        }
    }
    free(sites);
    r->out.status = (cfx_status)st.status;
    r->out.record = st.status == CFX_OK ? -1 : st.record;
    r->out.detail[0] = st.detail[0];
    r->out.detail[1] = st.detail[1];
    r->out.iterations = (int64_t)st.iterations;
    for (uint32_t off = 0;
         off + sizeof(ck_print_entry) <= sync.print_used && st.status != CK_STATUS_RERUN;) {
        ck_print_entry h;
        memcpy(&h, prints + off, sizeof h);
        if (!CHECK(h.record >= 0 && h.record < p->nrecords))
            break;
        log_print(&r->log, p, h.record, prints + off + sizeof h);
        off += (uint32_t)sizeof h + ((uint32_t)h.bytes + 7u) / 8u * 8u;
    }
    free(publish);
    free(alt);
    free(prints);
}

static const char *status_name(int st)
{
    return st >= 0 && st <= CFX_ERROR ? cfx_status_name((cfx_status)st) : "(not set)";
}

/* Whether the program has a product of reals: the CUDA target's warp-per-row product adds in
 * another order than the cpu's (docs/persistent.md), which random inputs can amplify without
 * bound (CG on a matrix that is not positive definite). */
static int real_product(const cfx_prog *p)
{
    for (int32_t r = 0; r < p->nrecords; r++)
        if (p->records[r].kind == REC_MATMUL &&
            (p->slots[p->records[r].a].dtype == CFX_F32 || p->slots[p->records[r].a].dtype == CFX_F64))
            return 1;
    return 0;
}

/* Whether the cpu's real results are past 1e6 or not finite: a run that diverged. */
static int diverged(const cfx_prog *p, const result *want)
{
    for (int32_t i = 0; i < p->nresults; i++) {
        const cfx_slot *sl = &p->slots[p->results[i]];
        for (int64_t e = 0; e < sl->count && (sl->dtype == CFX_F32 || sl->dtype == CFX_F64); e++) {
            double v = sl->dtype == CFX_F32 ? ((const float *)want->res[i])[e] : ((const double *)want->res[i])[e];
            if (!(fabs(v) <= 1e6))
                return 1;
        }
    }
    return 0;
}

static int diverged_runs; /* CUDA-target runs on random inputs compared by status only */

/* Compares the generated run with the cpu run; prints the first difference. With `reordered`
 * (the CUDA target on random inputs, which sums products in another order), a run whose cpu
 * results diverged is compared by its status, stop, prints' records and iterations only. */
static int same_run_ex(const unit *u, const result *want, const result *got, const char *what, int reordered)
{
    const cfx_prog *p = u->prog;
    const exec_outcome *w = &want->out, *g = &got->out;
    int64_t at = 0;
    if (w->status != g->status || w->record != g->record || w->detail[0] != g->detail[0] ||
        w->detail[1] != g->detail[1] || w->iterations != g->iterations) {
        fprintf(stderr,
                "%s: %s: %s at record %d (%lld, %lld) after %lld iterations; cpu %s at record %d "
                "(%lld, %lld) after %lld\n",
                u->label, what, status_name(g->status), (int)g->record, (long long)g->detail[0],
                (long long)g->detail[1], (long long)g->iterations, status_name(w->status),
                (int)w->record, (long long)w->detail[0], (long long)w->detail[1],
                (long long)w->iterations);
        return 0;
    }
    const printlog *wl = &want->log, *gl = &got->log;
    if (wl->n != gl->n || wl->overflow != gl->overflow) {
        fprintf(stderr, "%s: %s: %d values printed, cpu %d\n", u->label, what, gl->n, wl->n);
        return 0;
    }
    for (int k = 0; k < wl->n; k++) {
        const cfx_slot *sl = &p->slots[p->records[wl->records[k]].a];
        if (wl->records[k] != gl->records[k] ||
            !same_values(sl->dtype, sl->count, gl->bytes.data + gl->offsets[k],
                         wl->bytes.data + wl->offsets[k], &at)) {
            fprintf(stderr, "%s: %s: print %d (record %d) differs from the cpu's (record %d)\n",
                    u->label, what, k, (int)gl->records[k], (int)wl->records[k]);
            return 0;
        }
    }
    if (w->status != CFX_OK)
        return 1;
    if (reordered && real_product(p) && diverged(p, want)) {
        diverged_runs++;
        return 1;
    }
    for (int32_t i = 0; i < p->nresults; i++) {
        const cfx_slot *sl = &p->slots[p->results[i]];
        if (!same_values(sl->dtype, sl->count, got->arena + sl->offset, want->res[i], &at)) {
            fprintf(stderr, "%s: %s: result %d differs from the cpu's at element %lld\n", u->label,
                    what, (int)i, (long long)at);
            return 0;
        }
    }
    return 1;
}

static int same_run(const unit *u, const result *want, const result *got, const char *what)
{
    return same_run_ex(u, want, got, what, 0);
}

/* runs whose stop message was compared with a `# stop:` line, and those naming a dimension */
static int stops_checked, stops_dimension;

/* A run of a graph file with a `# stop:` line: the message the host formats from the generated
 * run's outcome (exec_format_stop, as cfx_run does for every executor) is the one written in the
 * file, from the file's name on (the file is named here by its full path, there as the command
 * line gave it). */
static int same_stop(const unit *u, const input_set *s, const result *got, const char *what)
{
    char msg[512] = "";
    if (!s->stop[0])
        return 1;
    exec_format_stop(u->prog, &got->out, msg, sizeof msg);
    const char *file = u->prog->file ? u->prog->file : "?", *slash = strrchr(file, '/');
    const char *base = slash ? slash + 1 : file;
    const char *w = strstr(s->stop, base), *g = strstr(msg, base);
    if (w && g && strcmp(w, g) == 0) {
        stops_checked++;
        stops_dimension += strstr(w, ": dimension ") != NULL;
        return 1;
    }
    fprintf(stderr, "%s: %s: stopped with \"%s\"; the file says \"%s\"\n", u->label, what, msg,
            s->stop);
    return 0;
}

/* Every input set of a unit, then the budget and cancel variations on its first set; both
 * generated forms against the cpu. Returns the number of runs that differed. */
static int check_unit(unit *u)
{
    int bad = 0;
    if (u->refused)
        return 0;
    for (int32_t i = 0; i < u->prog->nrecords; i++)
        kinds_seen[u->prog->records[i].kind] = 1;
    if (!u->structured || !u->dispatch)
        return 1;
    for (int k = 0; k < u->nsets + 4; k++) {
        const input_set *s = &u->sets[k < u->nsets ? k : 0];
        if (u->nsets == 0)
            break;
        int64_t max_iters = s->max_iters;
        int cancel = 0;
        char what[256];
        switch (k - u->nsets) {
        case 0: max_iters = 1; break;
        case 1: max_iters = 3; break;
        case 2: cancel = 1; break;
        case 3: cancel = 2; break;
        default: break;
        }
        if (budget_cap > 0 && (max_iters <= 0 || max_iters > budget_cap))
            max_iters = budget_cap;
        snprintf(what, sizeof what, "%s%s", s->what,
                 k < u->nsets       ? ""
                 : k - u->nsets < 2 ? (max_iters == 1 ? ", budget 1" : ", budget 3")
                 : cancel == 1      ? ", cancelled before the run"
                                    : ", cancelled at the third print");
        result want, got1, got2;
        memset(&want, 0, sizeof want);
        memset(&got1, 0, sizeof got1);
        memset(&got2, 0, sizeof got2);
        if (run_cpu(u, s, max_iters, cancel, &want) != 0) {
            fprintf(stderr, "%s: %s: cpu_run failed\n", u->label, what);
            bad++;
        } else {
            char w2[300];
            run_generated(u, u->structured, s, max_iters, cancel, &got1);
            snprintf(w2, sizeof w2, "%s [structured]", what);
            bad += !same_run(u, &want, &got1, w2);
            bad += k < u->nsets && !same_stop(u, s, &got1, w2);
            run_generated(u, u->dispatch, s, max_iters, cancel, &got2);
            snprintf(w2, sizeof w2, "%s [dispatch]", what);
            bad += !same_run(u, &want, &got2, w2);
            bad += k < u->nsets && !same_stop(u, s, &got2, w2);
            /* the CUDA target: not with a cancel at a print (prints reach the host only after
             * the kernel), and with one block for a cancel before the run (with more, a block
             * other than 0, which alone reads the flag, may reach another stop first) */
            /* (for the generated programs, only on their own inputs: host threads are slow) */
            int emulate =
                u->cuda && cancel != 2 && (k < u->nsets || strncmp(u->label, "generated", 9) != 0);
            /* the structured kernel of a graph on its inputs also with either side held back at
             * every barrier (tests/ck_host.h), so a barrier missing from the kernel shows up
             * every time (when the values it would have read matter to the result) */
            int skews = k < u->nsets && strncmp(u->label, "generated", 9) != 0 ? 3 : 1;
            /* the threads of a block run in one order per run, the next run the next order
             * (all three in every run with CFX_STANDIN_SWEEP=1) */
            for (int form = 0; emulate && form < 2; form++)
                for (int skew = 0; skew < (form ? 1 : skews); skew++)
                    for (int rep = 0; rep < (standin_sweep ? 3 : 1); rep++) {
                        static const char *const orders[] = {"forward", "reverse", "shuffled"};
                        const int order = standin_sweep ? rep : cuda_runs % 3;
                        const unsigned int threads = run_threads(u, k == 0 && form == 0 && skew == 0);
                        /* a kernel with launches, alternately on both paths past a record that
                         * ends one: the pause and device graph launch */
                        int tail = u->launches > 0 && (form + skew + k + rep) % 2 == 1;
                        result got3;
                        memset(&got3, 0, sizeof got3);
                        run_cuda(u, form ? u->cuda_dispatch : u->cuda, s, max_iters, cancel,
                                 cancel ? 1 : EMULATED_BLOCKS, threads, order, skew, 1u << 20, tail, &got3);
                        snprintf(w2, sizeof w2, "%.200s [cuda %s, %d blocks of %u threads, %s%s%s]", what,
                                 form ? "dispatch" : "structured", cancel ? 1 : EMULATED_BLOCKS,
                                 threads, orders[order],
                                 skew == 1 ? ", block 0 held back" : skew == 2 ? ", blocks held back" : "",
                                 u->launches == 0 ? "" : tail ? ", tail launches" : ", pauses");
                        bad += !same_run_ex(u, &want, &got3, w2, s->random);
                        bad += k < u->nsets && !same_stop(u, s, &got3, w2);
                        result_free(&got3);
                    }
        }
        result_free(&want);
        result_free(&got1);
        result_free(&got2);
    }
    return bad;
}

/* The CUDA target cannot drain a full print buffer mid-kernel: it stops with CK_STATUS_RERUN
 * (and the executor runs the program again with the interpreter). A program that prints, with
 * a buffer too small for its first value, must stop so. */
static int check_rerun(int lo, int hi)
{
    for (int k = lo; k < hi; k++) {
        unit *u = &units[k];
        int prints = 0;
        for (int32_t i = 0; i < u->prog->nrecords; i++)
            prints |= u->prog->records[i].kind == REC_PRINT;
        if (!prints || !u->cuda || u->nsets == 0)
            continue;
        result r, want;
        memset(&r, 0, sizeof r);
        memset(&want, 0, sizeof want);
        run_cuda(u, u->cuda, &u->sets[0], 0, 0, EMULATED_BLOCKS, run_threads(u, 0), 2, 0, 8, 0, &r);
        int cpu_prints = run_cpu(u, &u->sets[0], 0, 0, &want) == 0 ? want.log.n : 0;
        int bad = cpu_prints > 0 && (r.out.status != (cfx_status)CK_STATUS_RERUN || r.log.n != 0);
        if (bad)
            fprintf(
                stderr,
                "%s: with an 8-byte print buffer the kernel ended with status %d after %d prints\n",
                u->label, (int)r.out.status, r.log.n);
        reruns += cpu_prints > 0 && !bad;
        result_free(&r);
        result_free(&want);
        if (cpu_prints > 0)
            return bad;
    }
    return 0;
}

/* Every record kind of program.h is one the generator writes: a kind it does not know would send
 * every program that has one to the interpreter. */
/* A kernel of its own for the checks below: one program generated for the CUDA target with the
 * options `o` (its entry `o->entry`), after the lines `head`, compiled with tests/ck_host.h into
 * a shared object in the work folder, outside the sweep's units, with the state a launch of it
 * points into (host_kernel_args). */
typedef struct host_kernel {
    const cfx_prog *prog; /* the module keeps it */
    cgen_info info;
    void *object;         /* for more of its symbols */
    void (*kernel)(const ck_args a);
    int (*launch)(void (*)(const ck_args), const ck_args *, unsigned, unsigned, int, unsigned, int,
                  struct CUgraphExec_st **, int *);
    ck_state st;
    ck_control ctl;
    ck_sync sync;
    k_acc partials[2 * CK_BATCH_MAX * 16];
    uint8_t *publish, *alt, prints[64];
    ck_args args;
} host_kernel;

/* Builds it; 0, or -1 after a failed check. `code`, when not NULL, gets the generated text
 * (the caller frees it). */
static int host_kernel_build(host_kernel *hk, const char *file, const char *src, const char *head,
                             const cgen_options *o, char **code)
{
    char err[512], path[512];
    strbuf cuda = {0};
    memset(hk, 0, sizeof *hk);
    int first = add_module(file, src, NULL);
    if (!CHECK(first >= 0))
        return -1;
    hk->prog = units[first].prog;
    free(units[first].names);
    free(units[first].defaults);
    free(units[first].types);
    nunits = first; /* not one of the sweep's units: its check runs it alone */
    sb_puts(&cuda, head);
    sb_puts(&cuda, "#include \"ck_host.h\"\n");
    if (!CHECK_INT(cgen_emit(hk->prog, o, &cuda, &hk->info, err, sizeof err), 0)) {
        fprintf(stderr, "%s: cgen_emit: %s\n", file, err);
        sb_free(&cuda);
        return -1;
    }
    if (code)
        *code = strdup(sb_str(&cuda));
    snprintf(path, sizeof path, "%s/%s", workdir, o->entry);
    hk->object = compile_object(path, "cpp", CFX_CXX, GEN_CXX_FLAGS, &cuda);
    sb_free(&cuda);
    if (!CHECK(hk->object != NULL))
        return -1;
    *(void **)&hk->kernel = dlsym(hk->object, o->entry);
    *(void **)&hk->launch = dlsym(hk->object, "ck_host_launch");
    return CHECK(hk->kernel && hk->launch) ? 0 : -1;
}

/* A run's state, fresh, over `arena`: hk->args points into hk. */
static void host_kernel_args(host_kernel *hk, uint8_t *arena)
{
    free(hk->publish);
    hk->publish = calloc(2, (size_t)hk->info.publish_bytes + 16);
    memset(&hk->st, 0, sizeof hk->st);
    hk->st.record = -1;
    memset(&hk->ctl, 0, sizeof hk->ctl);
    memset(&hk->sync, 0, sizeof hk->sync);
    memset(&hk->args, 0, sizeof hk->args);
    hk->args.arena = arena;
    hk->args.state = &hk->st;
    hk->args.control = &hk->ctl;
    hk->args.sync = &hk->sync;
    hk->args.partials = hk->partials;
    hk->args.publish = hk->publish;
    free(hk->alt);
    hk->alt = calloc(1, (size_t)hk->info.alt_bytes + 16);
    hk->args.alt = hk->alt;
    hk->args.print_buf = hk->prints;
    hk->args.print_cap = sizeof hk->prints;
}

/* One launch of it on `blocks` host blocks of `threads` threads; the launcher's status. */
static int host_kernel_launch(host_kernel *hk, unsigned blocks, unsigned threads, unsigned seed)
{
    struct CUgraphExec_st *tails[4];
    int ntails = 0;
    return hk->launch(hk->kernel, &hk->args, blocks, threads, 0, seed, 0, tails, &ntails);
}

/* The compiled kernel's timeline (CK_TRACE, device/compiled_kernel.cuh): a kernel generated for
 * the CUDA target, built with CK_TRACE, on 4 host blocks. By hand, the loop runs n = 5 times:
 * block 0 stamps 5 iterations, and every other block 5 too, or none where the plan makes the
 * loop a one-block region (then every block stamps the region's start); each block's events
 * start with START, end with END and go forward in time, block 0's with a phase's end (DONE, at
 * a record of the program) in every iteration; every block passes the same grid
 * barriers in the same order, and none leaves the k-th before the last one has arrived at it. */
static void check_timeline(void)
{
    static const char src[] =
        "graph tl(x: f32[4096], n: i32) -> (s: f32, c: i32) {\n"
        "  s = 0.0\n  c = 0\n  y = x\n"
        "  while c < n {\n"
        "    y = y * 0.5 + 1.0\n"
        "    s = s + sum(y)\n"
        "    c = c + 1\n"
        "  }\n}\n";
    enum { BLOCKS = 4, CAP = 256 };
    if (!CFX_CXX[0])
        return;
    host_kernel hk;
    cgen_options o = {CGEN_TARGET_CUDA, 0, "cuda_timeline", NULL, NULL, NULL, 0, 0, 0};
    if (host_kernel_build(&hk, "timeline.cfx", src, "#define CK_TRACE 1\n", &o, NULL) != 0)
        return;
    const cfx_prog *p = hk.prog;
    CHECK(hk.info.barriers > 0);

    float *x = calloc(4096, sizeof *x);
    int32_t n = 5;
    input_set set;
    memset(&set, 0, sizeof set);
    set.data[0] = x;
    set.data[1] = &n;
    uint8_t *arena = new_arena(p, &set);
    static ck_event events[BLOCKS * CAP];
    uint32_t counts[BLOCKS] = {0};
    unsigned long long ticks[BLOCKS] = {0}; /* the program's one TICK */
    host_kernel_args(&hk, arena);
    hk.args.trace = events;
    hk.args.trace_cap = CAP;
    hk.args.trace_count = counts;
    hk.args.tick_counts = ticks;
    unsigned threads = hk.info.needs_block || hk.info.needs_grid ? CK_THREADS : 32;
    CHECK_INT(host_kernel_launch(&hk, BLOCKS, threads, 1), 0);
    const ck_state st = hk.st;
    CHECK_INT(st.status, CFX_OK);
    CHECK_INT(st.iterations, 5);

    int nwait[BLOCKS] = {0};
    for (int b = 0; b < BLOCKS; b++) {
        const ck_event *e = events + (size_t)b * CAP;
        uint32_t m = counts[b];
        int iters = 0, done = 0, ok = m >= 2 && m <= CAP && e[0].kind == CK_EV_START && e[m - 1].kind == CK_EV_END;
        for (uint32_t k = 0; ok && k < m; k++) {
            ok = e[k].kind >= CK_EV_START && e[k].kind <= CK_EV_CLOCK && (k == 0 || e[k - 1].t <= e[k].t);
            iters += e[k].kind == CK_EV_ITER;
            if (e[k].kind == CK_EV_DONE) { /* a phase's end names the record whose code it ends */
                ok = e[k].record >= 0 && e[k].record < p->nrecords;
                done++;
            }
            nwait[b] += e[k].kind == CK_EV_WAIT;
            if (ok && e[k].kind == CK_EV_WAIT) /* a barrier is passed right after it is waited at */
                ok = k + 1 < m && e[k + 1].kind == CK_EV_PASS && e[k + 1].record == e[k].record;
        }
        if (!CHECK(ok))
            fprintf(stderr, "timeline: block %d's %u events are not START ... END in time order\n", b, m);
        { /* the host's reading: a launch here, its two CLOCK events out, in time order still */
            static ck_event copy[CAP];
            uint32_t mm = m <= CAP ? m : CAP, left;
            memcpy(copy, e, sizeof(ck_event) * mm);
            left = ck_timeline_ns(copy, mm, 1.0);
            CHECK_INT(left, mm - 2);
            for (uint32_t k = 0; k < left; k++)
                if (!CHECK(copy[k].kind != CK_EV_CLOCK && (k == 0 || copy[k - 1].t <= copy[k].t)))
                    break;
        }
        if (b == 0 || iters != 0)
            CHECK_INT(iters, 5);
        CHECK_INT(ticks[b], (unsigned long long)iters); /* a loop over tensors: each iteration stamped */
        if (b == 0) /* each iteration's update of y and its sum end a phase or more */
            CHECK(done >= 5);
        CHECK_INT(nwait[b], nwait[0]);
    }
    CHECK(nwait[0] >= 1);
    /* the k-th barrier of every block: the same record, left only after every block arrived */
    int32_t at[BLOCKS] = {0};
    for (int k = 0; k < nwait[0]; k++) {
        unsigned long long last_in = 0, first_out = ~0ull;
        int32_t rec = -2;
        int same = 1;
        for (int b = 0; b < BLOCKS; b++) {
            const ck_event *e = events + (size_t)b * CAP;
            while (e[at[b]].kind != CK_EV_WAIT)
                at[b]++;
            same &= rec == -2 || e[at[b]].record == rec;
            rec = e[at[b]].record;
            last_in = e[at[b]].t > last_in ? e[at[b]].t : last_in;
            first_out = e[at[b] + 1].t < first_out ? e[at[b] + 1].t : first_out;
            at[b]++;
        }
        if (!CHECK(same && last_in <= first_out))
            fprintf(stderr, "timeline: barrier %d (record %d) left before every block arrived\n", k, (int)rec);
    }
    free(x);
    free(arena);
    free(hk.publish);
    free(hk.alt);
}

/* The host's reading of a block's stamps (ck_timeline_ns), on events made by hand: a launch
 * whose START is at 1000 ns and cycle 5000 and whose END is at 2000 ns and cycle 7000 runs at 2
 * cycles a nanosecond, so its stamps at cycles 5500 and 6000 stand at 1250 and 1500 ns; a second
 * launch whose END was not kept (START at 3000 ns, cycle 9000) keeps that rate: its stamp at
 * cycle 9400 stands at 3200 ns. The CLOCK events go: 6 of 9 are left. A third launch with its
 * own rate (4000 ns, cycle 100; END at 4100 ns, cycle 150: half a cycle a nanosecond) puts
 * cycle 120 at 4040 ns. */
static void check_timeline_ns(void)
{
    ck_event ev[] = {
        {-1, CK_EV_START, 1000}, {-1, CK_EV_CLOCK, 5000}, {10, CK_EV_DONE, 5500}, {11, CK_EV_WAIT, 6000},
        {-1, CK_EV_CLOCK, 7000}, {-1, CK_EV_END, 2000}, {12, CK_EV_START, 3000}, {12, CK_EV_CLOCK, 9000},
        {13, CK_EV_DONE, 9400},
    };
    uint32_t n = ck_timeline_ns(ev, 9, 1.5);
    static const unsigned long long want[] = {1000, 1250, 1500, 2000, 3000, 3200};
    static const int kinds[] = {CK_EV_START, CK_EV_DONE, CK_EV_WAIT, CK_EV_END, CK_EV_START, CK_EV_DONE};
    if (CHECK_INT(n, 6))
        for (uint32_t k = 0; k < n; k++) {
            CHECK_INT(ev[k].kind, kinds[k]);
            CHECK_INT(ev[k].t, want[k]);
        }
    ck_event ev2[] = {
        {-1, CK_EV_START, 4000}, {-1, CK_EV_CLOCK, 100}, {5, CK_EV_ITER, 120}, {-1, CK_EV_CLOCK, 150}, {-1, CK_EV_END, 4100},
    };
    if (CHECK_INT(ck_timeline_ns(ev2, 5, 1.5), 3))
        CHECK_INT(ev2[1].t, 4040);
}

/* A loop without tensor work, traced: its iteration costs about what a stamp does, so the
 * kernel stamps one in CK_SAMPLE (64) and counts them all. By hand: the loop runs 200 times
 * (c = 0 .. 199; k counts the multiples of 3 among them, 67); the kernel's count of iterations
 * is a multiple of 64 at c = 0, 64, 128 and 192, so each block that runs the loop stamps 4
 * samples, no per-iteration ITER, and counts 200 at the TICK; block 0 runs it. */
static void check_sampled(void)
{
    static const char src[] =
        "graph sl(n: i32) -> (c: i32, k: i32) {\n"
        "  c = 0\n  k = 0\n"
        "  while c < n {\n"
        "    if c % 3 == 0 {\n      k = k + 1\n    }\n"
        "    c = c + 1\n"
        "  }\n}\n";
    enum { BLOCKS = 3, CAP = 64 };
    if (!CFX_CXX[0])
        return;
    host_kernel hk;
    cgen_options o = {CGEN_TARGET_CUDA, 0, "cuda_sampled", NULL, NULL, NULL, 0, 0, 0};
    char *code = NULL;
    if (host_kernel_build(&hk, "sampled.cfx", src, "#define CK_TRACE 1\n", &o, &code) != 0)
        return;
    const cfx_prog *p = hk.prog;
    int32_t nticks = 0;
    for (int32_t i = 0; i < p->nrecords; i++)
        nticks += p->records[i].kind == REC_TICK;
    CHECK_INT(nticks, 1);
    CHECK(strstr(code, "CK_EV_SAMPLE") != NULL && strstr(code, "CK_EV_ITER") == NULL);
    free(code);
    int32_t n = 200;
    input_set set;
    memset(&set, 0, sizeof set);
    set.data[0] = &n;
    uint8_t *arena = new_arena(p, &set);
    static ck_event events[BLOCKS * CAP];
    uint32_t counts[BLOCKS] = {0};
    unsigned long long ticks[BLOCKS] = {0};
    host_kernel_args(&hk, arena);
    hk.args.trace = events;
    hk.args.trace_cap = CAP;
    hk.args.trace_count = counts;
    hk.args.tick_counts = ticks;
    CHECK_INT(host_kernel_launch(&hk, BLOCKS, 32, 2), 0);
    CHECK_INT(hk.st.status, CFX_OK);
    CHECK_INT(hk.st.iterations, 200);
    CHECK_INT(*(int32_t *)(arena + p->slots[p->results[0]].offset), 200);
    CHECK_INT(*(int32_t *)(arena + p->slots[p->results[1]].offset), 67);
    for (int b = 0; b < BLOCKS; b++) {
        const ck_event *e = events + (size_t)b * CAP;
        int samples = 0, other = 0;
        for (uint32_t k = 0; k < counts[b] && k < CAP; k++) {
            samples += e[k].kind == CK_EV_SAMPLE;
            other += e[k].kind == CK_EV_ITER;
            if (e[k].kind == CK_EV_SAMPLE && !CHECK(p->records[e[k].record].kind == REC_TICK))
                fprintf(stderr, "sampled: block %d's sample names record %d, not the loop's TICK\n", b,
                        (int)e[k].record);
        }
        CHECK_INT(other, 0);
        if (b == 0 || samples != 0) {
            CHECK_INT(samples, 4);
            CHECK_INT(ticks[b], 200);
        } else {
            CHECK_INT(ticks[b], 0);
        }
    }
    free(arena);
    free(hk.publish);
    free(hk.alt);
}

/* A loop that keeps tensors in registers (cgen.c's resident tensors): collatz over 4608 starts
 * (more than a one-block region takes), generated for a grid of 3 blocks of CK_THREADS threads,
 * where each thread holds 6 elements of v and of steps. On 3 host blocks its steps agree with a
 * plain C loop's; the kernel says it keeps them in registers; run on 2 blocks, fewer than it
 * was generated for, it refuses at its start (CK_ERROR) instead of dropping elements. */
static void check_resident(void)
{
    static const char src[] =
        "graph rc(x: i64[4608]) -> (steps: i32[4608]) {\n"
        "  steps = zeros(i32[4608])\n  v = x\n"
        "  while any(v > 1) {\n"
        "    active = v > 1\n"
        "    v = where(active, where(v % 2 == 0, v // 2, 3 * v + 1), v)\n"
        "    steps = steps + cast(active, i32)\n"
        "  }\n}\n";
    enum { N = 4608 };
    if (!CFX_CXX[0])
        return;
    host_kernel hk;
    char *code = NULL;
    cgen_options o = {CGEN_TARGET_CUDA, 0, "cuda_resident", NULL, NULL, NULL, 0, 3, CK_THREADS};
    int built = host_kernel_build(&hk, "resident.cfx", src, "", &o, &code) == 0;
    CHECK(code && strstr(code, "in registers through the loop") != NULL);
    CHECK(code && strstr(code, "[6]; /* its elements") != NULL);
    free(code);
    if (!built)
        return;
    const cfx_prog *p = hk.prog;
    int64_t *x = malloc(sizeof(int64_t) * N);
    int32_t want[N];
    for (int j = 0; j < N; j++) { /* by hand: the steps that take x[j] to 1 */
        x[j] = 1 + (int64_t)(((uint64_t)j * 2654435761u) % 100000u);
        int64_t v = x[j];
        want[j] = 0;
        while (v > 1) {
            v = v % 2 == 0 ? v / 2 : 3 * v + 1;
            want[j]++;
        }
    }
    for (int blocks = 3; blocks >= 2; blocks--) {
        input_set set;
        memset(&set, 0, sizeof set);
        set.data[0] = x;
        uint8_t *arena = new_arena(p, &set);
        host_kernel_args(&hk, arena);
        CHECK_INT(host_kernel_launch(&hk, (unsigned)blocks, CK_THREADS, 7), 0);
        const ck_state st = hk.st;
        if (blocks == 3) {
            const int32_t *got = (const int32_t *)(arena + p->slots[p->results[0]].offset);
            int bad = 0;
            CHECK_INT(st.status, CFX_OK);
            for (int j = 0; j < N; j++)
                bad += got[j] != want[j];
            if (!CHECK_INT(bad, 0))
                fprintf(stderr, "resident: %d of %d step counts differ from the C loop's\n", bad, N);
        } else {
            CHECK_INT(st.status, CK_ERROR);
        }
        free(arena);
    }
    free(x);
    free(hk.publish);
    free(hk.alt);
}

/* The compiled kernel's progress words (ck_args.progress, which a hang report reads): a loop of
 * 300000 iterations (by hand: c counts them) polls its clock at every 64th TICK, and when the
 * poll is due (every 100 us) thread 0 says where the block stands: after the run the word names
 * the loop's TICK, some iterations between 1 and 300000, and no barrier. */
static void check_progress(void)
{
    static const char src[] = "graph pg(n: i32) -> (c: i32) {\n  c = 0\n  while c < n {\n    c = c + 1\n  }\n}\n";
    if (!CFX_CXX[0])
        return;
    host_kernel hk;
    cgen_options o = {CGEN_TARGET_CUDA, 0, "cuda_progress", NULL, NULL, NULL, 0, 0, 0};
    if (host_kernel_build(&hk, "progress.cfx", src, "", &o, NULL) != 0)
        return;
    const cfx_prog *p = hk.prog;
    int32_t n = 300000, tick = -1;
    for (int32_t i = 0; i < p->nrecords; i++)
        tick = p->records[i].kind == REC_TICK && tick < 0 ? i : tick;
    input_set set;
    memset(&set, 0, sizeof set);
    set.data[0] = &n;
    uint8_t *arena = new_arena(p, &set);
    ck_progress progress = {-1, -1, 0};
    host_kernel_args(&hk, arena);
    hk.args.progress = &progress;
    CHECK_INT(host_kernel_launch(&hk, 1, 32, 3), 0);
    CHECK_INT(hk.st.status, CFX_OK);
    CHECK_INT(*(int32_t *)(arena + p->slots[p->results[0]].offset), 300000);
    CHECK(tick >= 0 && progress.record == tick);
    CHECK(progress.iterations >= 1 && progress.iterations <= 300000);
    CHECK_INT(progress.barrier, -1);
    free(arena);
    free(hk.publish);
    free(hk.alt);
}

/* The compiled kernel's hang report, from a planted deadlock: block 2 of 4 held before the grid
 * barrier of the split sum on line 6 (tests/ck_host.h's ck_host_plant) while the others wait
 * there. Read from the blocks' progress words once the 3 say they wait (or after 20 s), the
 * report names that barrier's line, 3 of 4 blocks waiting, and block 2 not arrived; a cancel
 * then ends the run (cancelled), the held block let go. The loop would run 1000000 times. */
static void *hang_launch_main(void *arg)
{
    host_kernel_launch((host_kernel *)arg, 4, 64, 5);
    return NULL;
}

/* The stand-in's own hang catcher (tests/ck_host.h's watchdog), in a child process: the same
 * loop 10^9 times, nobody held, with the watchdog's limit at 1 s, must end in about that with one
 * line that says a hang and where the blocks stand, and abort (or, where the race detector does
 * not stop at a race, end the run with status 7), rather than run until ctest's TIMEOUT. */
static void check_watchdog(host_kernel *hk, input_set *set, void (*plant)(int, int))
{
    void (*set_limit)(long);
    *(void **)&set_limit = dlsym(hk->object, "ck_host_set_limit_ms");
    if (!CHECK(set_limit != NULL))
        return;
    char errs[512];
    snprintf(errs, sizeof errs, "%s/watchdog.err", workdir);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(errs, "w", stderr))
            _exit(2);
        int32_t n = 1000000000;
        set->data[1] = &n;
        plant(-1, -1);
        set_limit(1000);
        host_kernel_args(hk, new_arena(hk->prog, set));
        int rc = host_kernel_launch(hk, 4, 64, 6);
        _exit(rc == 0 && hk->st.status == 7 ? 7 : 1);
    }
    int wst = 0;
    if (!CHECK(pid > 0 && waitpid(pid, &wst, 0) == pid))
        return;
    char text[2048] = "";
    FILE *f = fopen(errs, "r");
    if (f) {
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = 0;
        fclose(f);
    }
    const int aborted = WIFSIGNALED(wst) && WTERMSIG(wst) == SIGABRT;
    const int stopped = WIFEXITED(wst) && WEXITSTATUS(wst) == 7;
    if (!CHECK((aborted || stopped) && strstr(text, "a hang (on a GPU): kernel cuda_hang") &&
               strstr(text, "the launch ran past 1.0 s") && strstr(text, " block 3 ")))
        fprintf(stderr, "watchdog: the child %s, and said:\n%s", aborted ? "aborted" : stopped ? "stopped" : "ended otherwise",
                text);
}

static void check_hang(void)
{
    static const char src[] = "graph hang(x: f32[200000], n: i32) -> (s: f32) {\n" /* 1 */
                              "  s = 0.0\n"                                        /* 2 */
                              "  y = x\n"                                          /* 3 */
                              "  for i in range(0, n) {\n"                         /* 4 */
                              "    y = y * 0.5\n"                                  /* 5 */
                              "    s = s + sum(y)\n"                               /* 6 */
                              "  }\n}\n";
    if (!CFX_CXX[0])
        return;
    host_kernel hk;
    cgen_options o = {CGEN_TARGET_CUDA, 0, "cuda_hang", NULL, NULL, NULL, 0, 0, 0};
    if (host_kernel_build(&hk, "hang.cfx", src, "", &o, NULL) != 0)
        return;
    const cfx_prog *p = hk.prog;
    void (*plant)(int, int);
    void (*let_go)(void);
    *(void **)&plant = dlsym(hk.object, "ck_host_plant");
    *(void **)&let_go = dlsym(hk.object, "ck_host_let_go");
    int32_t reduce = -1;
    for (int32_t i = 0; i < p->nrecords; i++)
        reduce = p->records[i].kind == REC_REDUCE && reduce < 0 ? i : reduce;
    if (!CHECK(plant && let_go) || !CHECK(reduce >= 0 && p->records[reduce].line == 6))
        return;
    float *x = calloc(200000, sizeof *x);
    int32_t n = 1000000;
    input_set set;
    memset(&set, 0, sizeof set);
    set.data[0] = x;
    set.data[1] = &n;
    uint8_t *arena = new_arena(p, &set);
    ck_progress progress[4];
    for (int b = 0; b < 4; b++) {
        progress[b].record = -1;
        progress[b].barrier = -1;
        progress[b].iterations = 0;
    }
    host_kernel_args(&hk, arena);
    hk.args.progress = progress;
    plant(2, reduce);
    pthread_t th;
    if (!CHECK_INT(pthread_create(&th, NULL, hang_launch_main, &hk), 0)) {
        let_go();
        free(arena);
        free(x);
        free(hk.publish);
    free(hk.alt);
        return;
    }
    for (int k = 0; k < 2000; k++) { /* until the 3 others say they wait at the barrier: 20 s at most */
        int waiting = 0;
        for (int b = 0; b < 4; b++)
            waiting += progress[b].barrier == reduce;
        if (waiting == 3)
            break;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    char report[2048], want[128];
    exec_format_hang(p, (const exec_progress *)progress, 4, report, sizeof report);
    snprintf(want, sizeof want, "hang.cfx:6:5 (record %d): 3 of 4 blocks wait there; not arrived: block 2", (int)reduce);
    if (!CHECK(strstr(report, want) != NULL))
        fprintf(stderr, "hang: the compiled kernel's report does not say '%s':\n%s", want, report);
    hk.ctl.cancel = 1;
    let_go();
    pthread_join(th, NULL);
    CHECK_INT(hk.st.status, CFX_STOP_CANCELLED);
    check_watchdog(&hk, &set, plant);
    free(arena);
    free(x);
    free(hk.publish);
    free(hk.alt);
}

static void check_all_kinds_known(void)
{
    for (int k = 0; k < REC_COUNT; k++) {
        int known = 0;
#define X(name) known |= k == REC_##name;
        CGEN_KINDS(X)
#undef X
        if (!known) {
            fprintf(stderr, "record kind %s is not known to the code generator (CGEN_KINDS)\n",
                    rec_names[k]);
            CHECK(0);
        }
    }
}

/* The forms of tests/gen_programs.h's second stream reach the generator: the generated programs
 * that were generated and compared have list items, boxes (slices, x[i, j], x[:, j]),
 * broadcasting, ** and i64 comparisons (ranges over i64). */
enum { FORM_ITEM, FORM_BOUND, FORM_GET_BOX, FORM_SET_BOX, FORM_BROADCAST, FORM_POW, FORM_I64_CMP,
       NFORMS };
static int forms_seen[NFORMS];

static void count_forms(const unit *u)
{
    int seen[NFORMS] = {0};
    if (strncmp(u->label, "generated", 9) != 0 || u->refused || !u->structured)
        return;
    for (int32_t i = 0; i < u->prog->nrecords; i++) {
        const cfx_record *r = &u->prog->records[i];
        seen[FORM_ITEM] |= r->kind == REC_GET_ITEM || r->kind == REC_SET_ITEM;
        seen[FORM_BOUND] |= r->kind == REC_CHECK_BOUND;
        seen[FORM_GET_BOX] |= r->kind == REC_GET_BOX;
        seen[FORM_SET_BOX] |= r->kind == REC_SET_BOX;
        seen[FORM_BROADCAST] |= r->kind == REC_BROADCAST;
        seen[FORM_POW] |= r->kind == REC_BINARY && r->op == OP_POW;
        seen[FORM_I64_CMP] |= r->kind == REC_BINARY && r->dtype == CFX_I64 &&
                              (r->op == OP_LT || r->op == OP_GT);
    }
    for (int f = 0; f < NFORMS; f++)
        forms_seen[f] += seen[f];
}

static void report_forms(void)
{
    static const char *const names[NFORMS] = {"list items",   "list bounds", "GET_BOX",
                                              "SET_BOX",      "BROADCAST",   "**",
                                              "i64 compares"};
    printf("generated programs compared, by form:");
    for (int f = 0; f < NFORMS; f++) {
        printf(" %s %d%s", names[f], forms_seen[f], f + 1 < NFORMS ? "," : "\n");
        CHECK(forms_seen[f] > 0);
    }
}

/* A unit's size, for the mutants' order: the bytes of its program's slots (its tensors), which
 * is what its runs on the CUDA target's host threads take time over. */
static int64_t unit_bytes(const unit *u)
{
    int64_t bytes = 0;
    for (int32_t i = 0; i < u->prog->nslots; i++)
        bytes += slot_bytes(&u->prog->slots[i]);
    return bytes;
}

static int by_bytes(const void *a, const void *b)
{
    const unit *x = a, *y = b;
    int64_t bx = unit_bytes(x), by = unit_bytes(y);
    return bx < by ? -1 : bx > by ? 1 : x->order - y->order;
}

/* The mutants' order of units [0, n): smallest first, so that the object a mutant is first built
 * into, which catches nearly all of them, is one of small programs (in the files' order, a
 * graph of large tensors came first and every CUDA mutant ran it on host threads). */
static void order_by_size(int n)
{
    for (int k = 0; k < n; k++)
        units[k].order = k;
    qsort(units, (size_t)n, sizeof *units, by_bytes);
}

/* Builds and runs units [0, n) object by object; returns the number of runs that differed (the
 * check is the caller's: a normal run wants none, a mutant some). A mutant stops at the first
 * object that catches it, and one about launches or source ops starts at the programs with
 * calls, the only ones it can change, and goes round to the others. */
static int build_and_run(int n, const mutant *mut, int *mutated, int *structured)
{
    int bad = 0;
    void *handles[1024];
    int nh = 0;
    int per = mut ? MUTANT_PER_OBJECT : PER_OBJECT;
    /* the objects: `per` units each from unit `start` to n, then from unit 0 up to `start` */
    int start = 0, los[512], his[512], nobjects = 0;
    if (mut && first_call_unit >= 0 && (strstr(mut->name, "launch") || strstr(mut->name, "source op")))
        start = first_call_unit;
    for (int part = 0; part < 2; part++) {
        const int from = part ? 0 : start, to = part ? start : n;
        for (int lo = from; lo < to && nobjects < 512; lo += per) {
            los[nobjects] = lo;
            his[nobjects++] = lo + per < to ? lo + per : to;
        }
    }
    for (int c = 0; c < nobjects && !(mut && bad > 0); c++) {
        const int lo = los[c], hi = his[c];
        void *h[2];
        int rc = build_object(nh, lo, hi, mut, mutated, h);
        for (int i = 0; i < 2; i++)
            if (h[i] && nh < 1024)
                handles[nh++] = h[i];
        if (rc == 1)
            continue;
        if (rc != 0) {
            bad++;
            continue;
        }
        bad += check_rerun(lo, hi);
        for (int k = lo; k < hi; k++) {
            bad += check_unit(&units[k]);
            if (!mut)
                count_forms(&units[k]);
            *structured += units[k].is_structured;
            if (!mut && !units[k].refused && units[k].is_structured == units[k].expect_dispatch) {
                fprintf(stderr, "%s: generated %s, expected %s\n", units[k].label,
                        units[k].is_structured ? "structured" : "the dispatch loop",
                        units[k].expect_dispatch ? "the dispatch loop" : "structured");
                bad++;
            }
        }
    }
    for (int i = 0; i < nh; i++)
        dlclose(handles[i]);
    return bad;
}

/* The generator refuses a record kind it does not know, with a message naming it. */
static void check_refusal(void)
{
    cfx_prog *p = irreducible_program();
    char err[256];
    strbuf sb = {0};
    if (!CHECK(p != NULL))
        return;
    p->records[4].kind =
        REC_COUNT; /* no validator would let this through: the generator checks anyway */
    CHECK(cgen_emit(p, NULL, &sb, NULL, err, sizeof err) == -1);
    CHECK(strstr(err, "record 4") != NULL &&
          strstr(err, "not known to the code generator") != NULL);
    sb_free(&sb);
    prog_free(p);
}

/* test_gen --files F.cfx ...: those programs alone (ONNX models imported with `cfx import`,
 * tests/onnx/node_tests.py --standin), both targets against the cpu executor on random inputs
 * and their `# run:` lines, without the suite's own checks of what its programs cover. */
static int run_files(int argc, char **argv)
{
    /* one folder per process: two --files runs at once (node_tests.py beside a user's) must not
     * empty each other's */
    char name[64];
    snprintf(name, sizeof name, "test_gen_files_%ld", (long)getpid());
    if (test_workdir(name, workdir, sizeof workdir) != 0)
        return 1;
    for (int i = 0; i < argc; i++)
        add_graph_file(argv[i]);
    printf("programs: %d from %d files\n", nunits, argc);
    int mutated = 0, structured = 0;
    int bad = build_and_run(nunits, NULL, &mutated, &structured);
    printf("%d programs structured, %d as the dispatch loop, %d not generated; %d runs differ\n",
           structured, nunits - structured - unknown_kinds, unknown_kinds, bad);
    if (CFX_CXX[0])
        printf("CUDA target on %d host blocks: %d runs\n", EMULATED_BLOCKS, cuda_runs);
    else
        printf("no C++ compiler: the CUDA target was not run on host threads\n");
    CHECK_INT(bad, 0);
    CHECK_INT(unknown_kinds, 0);
    CHECK_INT(unfenced_writes, 0);
    if (test_failures == 0)
        test_workdir_remove(workdir);
    return test_finish("test_gen --files");
}

int main(int argc, char **argv)
{
    cc_cache_open();
    if (argc > 1 && strcmp(argv[1], "--files") == 0) {
        if (!CFX_CC[0]) {
            printf("skipped: the build found no C compiler (cc) to compile the generated code with\n");
            return 77;
        }
        return run_files(argc - 2, argv + 2);
    }
    int mutants = argc > 1 && strcmp(argv[1], "--mutants") == 0;
    /* a mutant the stand-in's race detector sees, or that breaks one of its other rules (a warp
     * operation naming a lane that has ended), ends its run with a status of its own
     * (tests/race_host.h), which the comparison counts as caught, rather than stopping the test */
    if (mutants)
        setenv("CFX_STANDIN_RACE", "quiet", 0);
    int stress = stress_run = test_stress(argc, argv);
    standin_sweep = getenv("CFX_STANDIN_SWEEP") && strcmp(getenv("CFX_STANDIN_SWEEP"), "1") == 0;
    if (!CFX_CC[0]) {
        printf("skipped: the build found no C compiler (cc) to compile the generated code with\n");
        return 77;
    }
    /* in the build tree, one folder per way of running, emptied first: a run killed at its
     * timeout leaves nothing in the system's temporary folder, and the next run removes it */
    char name[64];
    snprintf(name, sizeof name, "test_gen%s%s", mutants ? "_mutants" : "", stress ? "_stress" : "");
    if (test_workdir(name, workdir, sizeof workdir) != 0)
        return 1;
    check_refusal();
    check_all_kinds_known();
    if (!mutants) {
        check_timeline_ns();
        check_timeline();
        check_sampled();
        check_resident();
        check_progress();
        check_hang();
    }
    add_graphs_dir();
    int ngraph_units = nunits;
    add_docs();
    add_call_programs(mutants);
    add_irreducible();
    if (!mutants)
        add_generated(stress ? GENERATED_STRESS : GENERATED);
    printf("programs: %d (%d from graphs/)\n", nunits, ngraph_units);

    if (mutants) {
        order_by_size(first_call_unit);
        budget_cap = 20000;
        /* each must be caught: the twin would be useless if it were not */
        static const mutant muts[] = {
            {"an add that subtracts", "k_add_i32(", "k_sub_i32("},
            {"the budget off by one", "iters_ >= limit_", "iters_ > limit_"},
            {"prints dropped", "if (a->print)", "if (0)"},
            {"index stops reported as divide", "a->status = 2;", "a->status = 3;"},
            {"guards that test the opposite", "if (!(", "if (("},
            {"an f32 product that adds (within the tolerance it would pass)",
             "k_binary(OP_MUL, K_F32", "k_binary(OP_ADD, K_F32"},
            {"the wrong block runs a one-block region (CUDA)", "blockIdx.x != 0",
             "blockIdx.x != 1"},
            {"grid barriers left out (CUDA)", "if (ck_grid_barrier(a, &poll_, ",
             "if (0 && ck_grid_barrier(a, &poll_, "},
            {"block barriers after split work left out (CUDA)", "__syncthreads();", ";"},
            {"boxes that start at 0 (slices, x[i, j], x[:, j])", "k_box_start((int64_t)",
             "k_box_start((int64_t)0 * "},
            {"an index stop's index off by one", "a->detail[0] = v_;", "a->detail[0] = v_ + 1;"},
            {"a launch that resumes after the wrong record (CUDA)", "ck_end_launch(a, ", "ck_end_launch(a, 1 + "},
            {"scalars not reloaded where a launch resumes (CUDA)", "if (resume_ != 0) {", "if (0) {"},
            {"no barrier where a launch starts (CUDA)", "if (ck_grid_barrier(a, &poll_, resume_",
             "if (0 && ck_grid_barrier(a, &poll_, resume_"},
            {"a source op over part of its elements (C)", "(0, 4LL, ", "(0, 3LL, "},
            {"a source op over part of the block's share (CUDA)", "(e_, e_ + 1, ", "(e_, e_, "},
        };
        for (size_t m = 0; m < sizeof muts / sizeof muts[0]; m++) {
            int mutated = 0, structured = 0;
            mutant_c_only = !stress && strstr(muts[m].name, "(CUDA)") == NULL;
            mutant_no_generated_calls = !stress && !strstr(muts[m].name, "launch") &&
                                        !strstr(muts[m].name, "source op");
            int bad = build_and_run(nunits, &muts[m], &mutated, &structured);
            printf("mutant '%s': %d places changed, %d runs differ\n", muts[m].name, mutated, bad);
            CHECK(mutated > 0);
            CHECK(bad > 0);
        }
    } else {
        int mutated = 0, structured = 0;
        int bad = build_and_run(nunits, NULL, &mutated, &structured);
        printf("CUDA target: %d loops of a block's threads that write after scalar reads with no block barrier "
               "between (%d kernels where the check finds them once the generator's barriers are taken out)\n",
               unfenced_writes, fences_caught);
        CHECK_INT(unfenced_writes, 0);
        if (CFX_CXX[0])
            CHECK(fences_caught > 0);
        int calls = 0, cuda_calls = 0;
        for (int k = 0; k < nunits; k++) {
            calls += units[k].calls;
            cuda_calls += units[k].calls && units[k].cuda;
        }
        printf("%d programs structured, %d as the dispatch loop, %d not generated (a record kind "
               "the generator does not know: each a failure); %d runs differ\n",
               structured, nunits - structured - unknown_kinds, unknown_kinds, bad);
        printf("%d programs with a CALL, %d of them run as CUDA too: %d records that end the launch, %d kernel "
               "calls written inline (registered by their source); %d launches ended at a record and resumed "
               "after it when the host served a pause, %d after tail launches (at most %d launches in a run)\n",
               calls, cuda_calls, launches, inline_calls, sites_paused, sites_tail, most_launches);
        CHECK(calls >= GENERATED_CALLS);
        if (CFX_CXX[0]) {
            CHECK(cuda_calls == calls && launches > 0 && inline_calls > 0);
            CHECK(sites_paused >= 50 && sites_tail >= 50);
        }
        printf("stop messages as the graph files write them: %d runs (%d naming a dimension)\n",
               stops_checked, stops_dimension);
        CHECK(stops_checked > 0 && stops_dimension > 0);
        CHECK_INT(unknown_kinds, 0);
        report_forms();
        if (CFX_CXX[0]) {
            printf("CUDA target on %d host blocks: %d runs (%d with blocks of %d threads, the others "
                   "of 64 or 32), %d one-block regions (%d run by every block), %d grid barriers, %d kernels "
                   "with tensors that alternate buffers by iteration, %d with a product computed an iteration ahead\n",
                   EMULATED_BLOCKS, cuda_runs, cuda_runs_block, CK_THREADS, regions, redundant,
                   barriers, alternating, ahead);
            printf("  %d of them on random inputs that diverged (results past 1e6) through a product of reals: "
                   "compared by status, stop and iterations only\n", diverged_runs);
            CHECK(regions > redundant && redundant > 0 && barriers > 0);
            CHECK(alternating >= 2); /* graphs/conjugate_gradient.cfx's n = 96, product_reduce.cfx */
            CHECK(ahead >= 1);       /* graphs/greedy_decode.cfx's wide decoder */
            CHECK(reruns > 0);
            CHECK(diverged_runs < cuda_runs / 20); /* a rare exemption, not a way around the check */
        } else {
            printf("no C++ compiler: the CUDA target was not run on host threads\n");
        }
        CHECK_INT(bad, 0);
        /* every kind the generator knows was run */
#define X(name)                                                                                    \
    if (!kinds_seen[REC_##name]) {                                                                 \
        fprintf(stderr, "no program here has a %s record: add one\n", #name);                      \
        CHECK(0);                                                                                  \
    }
        CGEN_KINDS(X)
#undef X
    }
    for (int k = 0; k < nunits; k++) {
        for (int j = 0; j < units[k].nsets; j++)
            for (int i = 0; i < MAX_INPUTS; i++)
                free(units[k].sets[j].data[i]);
        free(units[k].sets);
        free((void *)units[k].kernels);
        if (units[k].prog != irreducible) {
            free(units[k].names);
            free(units[k].defaults);
            free(units[k].types);
        }
    }
    free(units);
    for (int k = 0; k < nmodules; k++)
        compiled_module_free(&modules[k]);
    free(modules);
    prog_free(irreducible);
    if (test_failures == 0) {
        test_workdir_remove(workdir);
    } else {
        fprintf(stderr, "the generated files are in %s\n", workdir);
    }
    return test_finish(mutants ? "test_gen --mutants" : "test_gen");
}
