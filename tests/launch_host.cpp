/* launch_host.cpp: the launch kernels of the cuda-host and cuda-graph executors
 * (device/launch.cuh: one kernel per op record kind, the two-pass reduction, launch_record)
 * run on host threads, against the cpu executor.
 *
 * Compiled with the system C++ compiler with tests/host_cuda first on the include path, so
 * launch.cuh's LAUNCH runs each kernel on the stand-in for CUDA (tests/cuda_host.h: a block is
 * a host thread running its 256 CUDA threads as fibers, in a shuffled order, with the race
 * detector on) and returns when it has ended. The grids are capped small here (3 blocks for
 * elementwise kernels, which stride over the rest; at most 4 partials for a reduction, merged
 * by the second pass), so that a run stays fast and the strides and the merge of partials are
 * exercised on small tensors too.
 *
 * walk() is device/hostexec.cu's walk() over a host arena: the same records decided on the
 * host (branches, switches, asserts, checks, the budget at TICK), every op record through
 * launch_record(), CHECK_DIVIDE over a tensor through launch_any_zero_kernel. A MATMUL goes to
 * device/blas.cu, compiled in here: an f32 or f64 product to cuBLAS, which here is
 * tests/host_cuda/cublas_v2.h (cuBLAS's column-major GEMM as its documentation defines it, with
 * its argument checks), so the row-major trick, the leading dimensions and the batch strides are
 * checked; a program with such a product runs a second time with no cuBLAS context, as a graph
 * that refuses cuBLAS's launches does (launch_matmul_kernel, launch_matmul_batch_kernel: the
 * path of integer products too). One difference from hostexec.cu: a CALL stops the run with
 * CFX_ERROR, as on every executor when the run names no kernels (the graphs are compiled
 * without registered kernels, so none has a CALL).
 *
 * For every `# run:` line of every graph in graphs/ (gpu_executors.c's list, the one every CUDA
 * executor is compared on), the run must match the cpu executor's: status, record, the details
 * of an index stop or a limit, iterations, the prints (same records, same order, values within
 * the tolerance), and on ok every result, integers and bools identical and reals within
 * gpu_executors.c's tolerance (1e-5 relative, or the file's `# tol:`). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_runtime.h"

#define LAUNCH_MAX_BLOCKS 3
#define LAUNCH_REDUCE_BLOCKS 4
#include "device/launch.cuh"
/* blas.cu itself, its cuBLAS the stand-in's (tests/host_cuda/cublas_v2.h) */
#include "device/blas.cu"

extern "C" {
#include "host/front/compile.h"
#include "testutil.h"
}

#define MAX_INPUTS 32
#define DEFAULT_TOL 1e-5
#define ITER_CAP 500 /* loop iterations a run may take here (run_line) */

/* dev.h's error line, as dev.cu writes it (CUDA_TRY's failures; the stand-in's calls do not fail). */
extern "C" void dev_error(char *err, size_t errlen, const char *call, const char *file, int line, const char *msg)
{
    snprintf(err, errlen, "%s:%d: %s: %s", file, line, call, msg);
}

/* ==== the walk ============================================================================ */

static void stop(exec_outcome *out, cfx_status status, int32_t pc, int64_t d0, int64_t d1)
{
    out->status = status;
    out->record = pc;
    out->detail[0] = d0;
    out->detail[1] = d1;
}

static int rec_seen[REC_COUNT]; /* record kinds whose launches ran */

static int64_t read_int(const launch_env *env, int32_t s)
{
    const cfx_slot *sl = &env->prog->slots[s];
    return k_load_int(sl->dtype, env->arena + sl->offset);
}

/* hostexec.cu's walk(): from record 0 to HALT or a stop. -1 with err when a launch failed. */
static int walk(const launch_env *env, int *flag, int64_t max_iters, test_prints *pr, exec_outcome *out, int64_t *launched,
                char *err, size_t errlen)
{
    const cfx_prog *p = env->prog;
    cudaStream_t stream = NULL;
    int32_t pc = 0;
    for (;;) {
        const cfx_record *r = &p->records[pc];
        int32_t next = pc + 1;
        int done = 0;
        switch ((enum rec_kind)r->kind) {
        case REC_HALT:
            done = 1;
            break;
        case REC_JUMP:
            next = r->a;
            break;
        case REC_JUMP_FALSE:
        case REC_JUMP_TRUE:
            if ((read_int(env, r->a) != 0) == (r->kind == REC_JUMP_TRUE)) next = r->b;
            break;
        case REC_SWITCH: {
            int64_t v = read_int(env, r->a);
            next = p->table[r->b + (v >= 0 && v < r->c ? v : r->c)];
            break;
        }
        case REC_TICK:
            if (max_iters > 0 && out->iterations >= max_iters) {
                stop(out, CFX_STOP_LIMIT, pc, max_iters, 0);
                done = 1;
            } else {
                out->iterations++;
            }
            break;
        case REC_ASSERT:
            if (!read_int(env, r->a)) {
                stop(out, CFX_STOP_ASSERT, pc, 0, 0);
                done = 1;
            }
            break;
        case REC_PRINT:
            test_print(pr, p, pc, env->arena + p->slots[r->a].offset);
            break;
        case REC_CHECK_INDEX: {
            int64_t v = read_int(env, r->a);
            if (v < -(int64_t)r->b || v >= (int64_t)r->b) {
                stop(out, CFX_STOP_INDEX, pc, v, r->b);
                done = 1;
            }
            break;
        }
        case REC_CHECK_BOUND: {
            int64_t va = read_int(env, r->a), vb = read_int(env, r->b);
            if (!k_bound_ok(r->d, va, vb)) {
                stop(out, CFX_STOP_INDEX, pc, va, vb);
                done = 1;
            }
            break;
        }
        case REC_CHECK_DIVIDE: {
            /* hostexec.cu's any_zero: one element read directly, a tensor scanned by the kernel */
            const cfx_slot *sl = &p->slots[r->a];
            int zero;
            if (sl->count == 1) {
                zero = read_int(env, r->a) == 0;
            } else {
                *flag = 0;
                LAUNCH(launch_any_zero_kernel, launch_grid(sl->count), LAUNCH_THREADS, stream, sl->dtype,
                       env->arena + sl->offset, sl->count, flag);
                CUDA_LAUNCHED();
                (*launched)++;
                rec_seen[REC_CHECK_DIVIDE] = 1;
                zero = *flag;
            }
            if (zero) {
                stop(out, CFX_STOP_DIVIDE, pc, 0, 0);
                done = 1;
            }
            break;
        }
        case REC_CHECK_STEP:
            if (read_int(env, r->a) == 0) {
                stop(out, CFX_STOP_VALUE, pc, 0, 0);
                done = 1;
            }
            break;
        case REC_CALL: /* no kernels named: as every executor does then */
            stop(out, CFX_ERROR, pc, 0, 0);
            done = 1;
            break;
        case REC_UNARY:
        case REC_BINARY:
        case REC_REDUCE:
        case REC_DOT:
        case REC_MATMUL:
        case REC_TRANSPOSE:
        case REC_FILL:
        case REC_IOTA:
        case REC_COPY:
        case REC_CAST:
        case REC_WHERE:
        case REC_GET_ROW:
        case REC_SET_ROW:
        case REC_GET_BOX:
        case REC_SET_BOX:
        case REC_BROADCAST:
        case REC_GET_ITEM:
        case REC_SET_ITEM:
        case REC_GATHER:
        case REC_REDUCE_AXIS:
        case REC_PERMUTE:
            if (launch_record(env, r, stream, err, errlen) != 0) return -1;
            (*launched)++;
            rec_seen[r->kind] = 1;
            break;
        }
        if (done) break;
        pc = next;
    }
    return 0;
fail:
    return -1;
}

/* ==== the comparison ======================================================================= */

static int close_enough(double got, double want, double tol)
{
    if (got == want || (got != got && want != want)) return 1;
    return fabs(got - want) <= tol * fmax(1.0, fabs(want));
}

/* Elements of dtype: identical, or reals within tol (gpu_executors.c's rule). */
static int same_elements(int dtype, int64_t count, const uint8_t *got, const uint8_t *want, double tol)
{
    for (int64_t e = 0; e < count; e++) {
        if (dtype == CFX_F32) {
            float g, w;
            memcpy(&g, got + 4 * e, 4);
            memcpy(&w, want + 4 * e, 4);
            if (!close_enough(g, w, tol)) return 0;
        } else if (dtype == CFX_F64) {
            double g, w;
            memcpy(&g, got + 8 * e, 8);
            memcpy(&w, want + 8 * e, 8);
            if (!close_enough(g, w, tol)) return 0;
        } else {
            int size = dtype_size(dtype);
            if (memcmp(got + size * e, want + size * e, (size_t)size) != 0) return 0;
        }
    }
    return 1;
}

static int same_prints(const cfx_prog *p, const test_prints *got, const test_prints *want, double tol)
{
    if (got->n != want->n) return 0;
    for (size_t at = 0; at < want->n;) {
        int32_t hg[2], hw[2];
        memcpy(hg, got->bytes + at, 8);
        memcpy(hw, want->bytes + at, 8);
        if (hg[0] != hw[0] || hg[1] != hw[1]) return 0;
        const cfx_slot *sl = &p->slots[p->records[hw[0]].a];
        if (!same_elements(sl->dtype, sl->count, got->bytes + at + 8, want->bytes + at + 8, tol)) return 0;
        at += 8 + (size_t)hw[1];
    }
    return 1;
}

static int64_t runs, stopped, launches;

static blas_ctx *blas; /* blas_new's, on the stand-in's cuBLAS */

/* Whether p has an f32 or f64 MATMUL, which blas.cu gives cuBLAS. */
static int real_products(const cfx_prog *p)
{
    for (int32_t i = 0; i < p->nrecords; i++)
        if (p->records[i].kind == REC_MATMUL &&
            (p->slots[p->records[i].b].dtype == CFX_F32 || p->slots[p->records[i].b].dtype == CFX_F64))
            return 1;
    return 0;
}

/* One run of p on the inputs, on the cpu executor and through launch_record, with the products'
 * cuBLAS context b (NULL: none). */
static void compare_run(const cfx_prog *p, void *const *inputs, int64_t max_iters, double tol, const char *what,
                        blas_ctx *b)
{
    void *results[MAX_INPUTS] = {0};
    test_prints want_pr = {NULL, 0, 0}, got_pr = {NULL, 0, 0};
    exec_outcome want, got;
    char err[512] = "";
    memset(&want, 0, sizeof want);
    memset(&got, 0, sizeof got);
    got.status = CFX_OK;
    got.record = -1;
    if (!CHECK(p->nresults <= MAX_INPUTS)) return;
    for (int32_t i = 0; i < p->nresults; i++)
        results[i] = calloc((size_t)slot_bytes(&p->slots[p->results[i]]) + 1, 1);

    exec_run run;
    memset(&run, 0, sizeof run);
    run.prog = p;
    run.inputs = inputs;
    run.results = results;
    run.max_iters = max_iters;
    run.print = test_print;
    run.print_user = &want_pr;
    if (!CHECK_INT(cpu_run(&run, &want), 0)) {
        fprintf(stderr, "  %s: the cpu executor failed\n", what);
        goto done;
    }

    {
        /* the arena as dev_run_begin leaves it: the constants, zeros, the inputs */
        uint8_t *arena = (uint8_t *)calloc((size_t)p->arena_bytes + 16, 1);
        k_acc *partials = (k_acc *)calloc(LAUNCH_REDUCE_BLOCKS, sizeof(k_acc));
        int flag = 0;
        int64_t launched = 0;
        if (p->const_bytes > 0) memcpy(arena, p->consts, (size_t)p->const_bytes);
        for (int32_t i = 0; i < p->ninputs; i++) {
            const cfx_slot *sl = &p->slots[p->inputs[i]];
            memcpy(arena + sl->offset, inputs[i], (size_t)slot_bytes(sl));
        }
        launch_env env = {p, arena, partials, b};
        int rc = walk(&env, &flag, max_iters, &got_pr, &got, &launched, err, sizeof err);
        int bad = !CHECK_INT(rc, 0);
        bad |= !CHECK_INT(got.status, want.status);
        bad |= !CHECK_INT(got.record, want.record);
        if (want.status == CFX_STOP_INDEX || want.status == CFX_STOP_LIMIT) {
            bad |= !CHECK_INT(got.detail[0], want.detail[0]);
            if (want.status == CFX_STOP_INDEX) bad |= !CHECK_INT(got.detail[1], want.detail[1]);
        }
        bad |= !CHECK_INT(got.iterations, want.iterations);
        bad |= !CHECK(same_prints(p, &got_pr, &want_pr, tol));
        if (rc == 0 && want.status == CFX_OK)
            for (int32_t i = 0; i < p->nresults; i++) {
                const cfx_slot *sl = &p->slots[p->results[i]];
                if (!CHECK(same_elements(sl->dtype, sl->count, arena + sl->offset, (const uint8_t *)results[i], tol))) {
                    bad = 1;
                    fprintf(stderr, "  result %d differs\n", i);
                }
            }
        if (bad)
            fprintf(stderr, "  in %s, graph %s%s: the launch kernels on the stand-in differ from the cpu executor%s%s\n",
                    what, p->name ? p->name : "?", b ? "" : " (no cuBLAS)", err[0] ? ": " : "", err);
        runs++;
        stopped += want.status != CFX_OK;
        launches += launched;
        free(arena);
        free(partials);
    }
done:
    for (int32_t i = 0; i < p->nresults; i++) free(results[i]);
    free(want_pr.bytes);
    free(got_pr.bytes);
}

/* One `# run:` line (its tokens after "run:") of a compiled file. */
static void run_line(const compiled_module *m, char *line, double tol, const char *what)
{
    char *tokens[64];
    int ntok = 0;
    const char *graph_name = NULL;
    int64_t max_iters = 0;
    char *save = NULL; /* test_each_graph walks its list with strtok */
    for (char *t = strtok_r(line, " \t\r\n", &save); t && ntok < 64; t = strtok_r(NULL, " \t\r\n", &save))
        tokens[ntok++] = t;
    for (int i = 0; i < ntok; i++) {
        if (strcmp(tokens[i], "--graph") == 0 && i + 1 < ntok) graph_name = tokens[++i];
        else if (strcmp(tokens[i], "--max-iters") == 0 && i + 1 < ntok) max_iters = strtoll(tokens[++i], NULL, 10);
    }
    /* the long scalar loops (counter.cfx, python_forms.cfx: 700000 launches of one element,
     * most of the test's time) under a budget, on both sides: they must stop at the same TICK */
    if (max_iters <= 0 || max_iters > ITER_CAP) max_iters = ITER_CAP;
    int g = 0;
    if (graph_name)
        for (g = 0; g < m->ngraphs && strcmp(m->graphs[g].name, graph_name) != 0; g++) {}
    if (!CHECK(g < m->ngraphs)) return;
    const compiled_graph *cg = &m->graphs[g];
    if (!CHECK(cg->nparams <= MAX_INPUTS)) return;
    const char *names[MAX_INPUTS], *defaults[MAX_INPUTS];
    cfx_type types[MAX_INPUTS];
    void *inputs[MAX_INPUTS] = {0};
    char err[512] = "";
    for (int i = 0; i < cg->nparams; i++) {
        names[i] = cg->params[i].name;
        types[i] = cg->params[i].type;
        defaults[i] = cg->params[i].def;
    }
    if (test_run_inputs(tokens, ntok, cg->nparams, names, types, defaults, inputs, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", what, err);
        CHECK(0);
    } else {
        /* an input left unbound (its default is None): zeros on both sides, as the API binds it */
        for (int i = 0; i < cg->nparams; i++)
            if (!inputs[i]) inputs[i] = calloc((size_t)slot_bytes(&cg->prog->slots[cg->prog->inputs[i]]) + 1, 1);
        compare_run(cg->prog, inputs, max_iters, tol, what, blas);
        if (real_products(cg->prog))
            compare_run(cg->prog, inputs, max_iters, tol, what, NULL);
    }
    for (int i = 0; i < MAX_INPUTS; i++) free(inputs[i]);
}

static int files_run;

static void check_file(const char *path, const char *text, long len, void *user)
{
    (void)user;
    compiled_module m;
    char *diag = NULL;
    if (compile_source(NULL, path, text, (size_t)len, &m, &diag) != 0) { /* `# error:`, or it calls kernels */
        free(diag);
        return;
    }
    double tol = DEFAULT_TOL;
    for (const char *q = text; q && *q; q = strchr(q, '\n'), q = q ? q + 1 : NULL)
        if (strncmp(q, "# tol:", 6) == 0) {
            double t = strtod(q + 6, NULL);
            if (t > tol) tol = t;
        }
    int lineno = 0, ran = 0;
    for (const char *q = text; q && *q;) {
        const char *end = strchr(q, '\n');
        lineno++;
        size_t n = end ? (size_t)(end - q) : strlen(q);
        if (strncmp(q, "# run:", 6) == 0) {
            char *copy = (char *)malloc(n + 1);
            char what[512];
            memcpy(copy, q, n);
            copy[n] = '\0';
            snprintf(what, sizeof what, "%s:%d", path, lineno);
            run_line(&m, copy + 6, tol, what);
            free(copy);
            ran = 1;
        }
        q = end ? end + 1 : NULL;
    }
    files_run += ran;
    compiled_module_free(&m);
}

/* What the example graphs do not reach: CHECK_DIVIDE over a tensor (launch_any_zero_kernel: no
 * zero, every element zero, one zero among others), and reductions long enough for several
 * blocks' partials and the second pass that merges them. */
static const char big_src[] =
    "# run: d=random x=random z=2 --seed 1\n"
    "# run: d=random x=random z=0 --seed 2\n"
    "# run: d=random x=random z=-1 --seed 3\n"
    "graph big(d: i32[5000], z: i32, x: f32[10000]) -> (q: i32[5000], r: i32[5000], s: f32, t: f32, m: f32,\n"
    "                                                  am: i32, v: f64) {\n"
    "  q = d // (d * 0 + z)\n"
    "  r = d % (d - d[7] + z + 1)\n"
    "  s = sum(x)\n  t = dot(x, x)\n  m = max(x)\n  am = argmax(x)\n  v = sum(cast(x, f64) * 0.5)\n"
    "}\n";

int main(void)
{
    struct timespec t0, t1;
    char err[256];
    clock_gettime(CLOCK_MONOTONIC, &t0);
    blas = blas_new(err, sizeof err);
    if (!CHECK(blas != NULL))
        fprintf(stderr, "  blas_new: %s\n", err);
    check_file("launch_host.cpp", big_src, (long)strlen(big_src), NULL);
    CHECK_INT(runs, 3);
    files_run = 0;
    int files = test_each_graph(check_file, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    char kinds[1024];
    size_t k = 0;
    int nkinds = 0;
    kinds[0] = '\0';
    for (int i = 0; i < REC_COUNT; i++)
        if (rec_seen[i] && k < sizeof kinds - 32) {
            k += (size_t)snprintf(kinds + k, sizeof kinds - k, " %s", rec_names[i]);
            nkinds++;
        }
    printf("launch_host: %d example files (%d with run lines) and 3 runs of its own, %lld runs compared with the cpu executor (%lld "
           "stopped), %lld kernel launches on the stand-in, %.1f s\n",
           files, files_run, (long long)runs, (long long)stopped, (long long)launches,
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    printf("launch_host: %d record kinds launched:%s\n", nkinds, kinds);
    printf("launch_host: %lld f32 and f64 products through blas.cu on the stand-in's cuBLAS\n", cublas_host_gemms);
    CHECK(files >= 30 && runs >= 150 && launches >= 1000);
    CHECK(cublas_host_gemms > 0);
    blas_free(blas);
    /* the launches this test is for, each run at least once */
    const int wanted[] = {REC_UNARY,  REC_BINARY,    REC_REDUCE,  REC_DOT,    REC_MATMUL,   REC_TRANSPOSE,
                          REC_FILL,   REC_COPY,      REC_CAST,    REC_WHERE,  REC_GET_ROW,  REC_SET_ROW,
                          REC_GET_BOX, REC_BROADCAST, REC_GATHER, REC_REDUCE_AXIS, REC_PERMUTE,
                          REC_CHECK_DIVIDE};
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++)
        if (!CHECK(rec_seen[wanted[i]])) fprintf(stderr, "  no %s record was launched\n", rec_names[wanted[i]]);
    return test_finish("launch_host");
}
