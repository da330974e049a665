/* bench_capture.c: a cfx run inside the application's CUDA graph against cfx_run_async called
 * each time (docs/persistent.md, "Inside the application's graph"; issue 34, item 5).
 *
 *   bench_capture [--runs N] [--only counter|cg_1024|greedy_decode]
 *
 * For profiling/bench/counter.cfx (n = 10000), cg_1024.cfx (tol 0, 50 iterations) and
 * greedy_decode.cfx (eos -1, 128 steps), on cuda-graph and on cuda-persistent (compiled), with
 * every input and result bound with cfx_bind_device on the application's stream:
 *   call      cfx_run_async then cfx_wait, each run (the host waits for each, as a caller that
 *             reads a status does);
 *   replay    the application's graph holding the captured run (cfx_prepare, cfx_run_async under
 *             cudaStreamBeginCapture, cudaGraphInstantiate), cudaGraphLaunch then
 *             cudaStreamSynchronize, each run;
 *   replay-bb the same graph launched N times back to back, one synchronization at the end:
 *             what an application's step loop that never waits on cfx costs;
 *   exec-graph cfx_exec_graph's graph, launched then synchronized each run: cuda-persistent's
 *             as a child graph node of a graph of the application's, cuda-graph's (conditional
 *             nodes, which a child graph node may not hold) instantiated as it is.
 * Prints a markdown table of medians over 5 rounds of N runs (default 200): microseconds per
 * run and per loop iteration (the iterations a run takes, from cfx_exec_iterations of a checked
 * run), and the ratio call / replay. Each mode's results are checked against the first
 * ordinary run's (identical bytes: the same executor on the same inputs). Exits 77 without a
 * GPU. Written without a GPU: compiled, not yet run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"

#ifndef CFX_HAVE_CUDA
int main(void)
{
    printf("bench_capture: this build has no CUDA\n");
    return 77;
}
#else
#include <cuda_runtime_api.h>
#include <math.h>
#include <time.h>

#define ROUNDS 5
#define MAX_IO 8

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static unsigned long long rng = 0x9E3779B97F4A7C15ull;
static float uniform(void) /* in [-1, 1) */
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((rng >> 40) / (double)(1ull << 24)) * 2.0f - 1.0f;
}

/* Fills input `name` of type t with the benchmark's values. */
static void fill(const char *graph, const char *name, cfx_type t, void *p)
{
    int64_t n = cfx_type_count(&t);
    if (t.dtype == CFX_I32) {
        int32_t v = 0;
        if (!strcmp(name, "n")) v = 10000;
        else if (!strcmp(name, "max_iters")) v = 50;
        else if (!strcmp(name, "start")) v = 1;
        else if (!strcmp(name, "eos")) v = -1;
        else if (!strcmp(name, "max_len")) v = 128;
        for (int64_t i = 0; i < n; i++) ((int32_t *)p)[i] = v;
        return;
    }
    float *f = (float *)p;
    if (!strcmp(graph, "cg_1024") && !strcmp(name, "A")) {
        /* 2 I plus a symmetric tridiagonal of -0.5: eigenvalues in (1, 3), so rr stays positive */
        int64_t d = t.dims[0];
        memset(f, 0, sizeof(float) * (size_t)n);
        for (int64_t i = 0; i < d; i++) {
            f[i * d + i] = 2.0f;
            if (i + 1 < d) f[i * d + i + 1] = f[(i + 1) * d + i] = -0.5f;
        }
    } else if (!strcmp(name, "tol")) {
        f[0] = 0.0f;
    } else if (!strcmp(name, "M")) {
        for (int64_t i = 0; i < n; i++) f[i] = uniform() / 16.0f;
    } else if (!strcmp(name, "h0")) {
        memset(f, 0, sizeof(float) * (size_t)n);
    } else {
        for (int64_t i = 0; i < n; i++) f[i] = uniform();
    }
}

typedef struct bench {
    cfx_module *m;
    int g;
    const char *name;
    void *din[MAX_IO], *dres[MAX_IO];
    size_t in_bytes[MAX_IO], res_bytes[MAX_IO];
    int nin, nres;
    void *want[MAX_IO]; /* the first run's results */
} bench;

static size_t type_bytes(cfx_type t) { return (size_t)cfx_type_count(&t) * (size_t)cfx_dtype_size(t.dtype); }

static int results_same(const bench *b, const char *mode)
{
    for (int i = 0; i < b->nres; i++) {
        void *h = malloc(b->res_bytes[i]);
        cudaMemcpy(h, b->dres[i], b->res_bytes[i], cudaMemcpyDeviceToHost);
        int same = memcmp(h, b->want[i], b->res_bytes[i]) == 0;
        free(h);
        if (!same) {
            printf("FAIL: %s, %s: result '%s' differs from the first run's\n", b->name, mode, cfx_result_name(b->m, b->g, i));
            return 0;
        }
    }
    return 1;
}

/* One backend on one graph: a row of the table. */
static int run_backend(bench *b, cfx_backend backend, int runs)
{
    char *err = NULL;
    cudaStream_t s;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t x = NULL;
    double t_call[ROUNDS], t_replay[ROUNDS], t_bb[ROUNDS];
    int ok = 1;
    cfx_exec *e = cfx_exec_new(b->m, b->g, backend, &err);
    if (!e) {
        printf("| %s | %s | - | %s |\n", b->name, cfx_backend_name(backend), err);
        cfx_free(err);
        return 0;
    }
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cfx_set_stream(e, s);
    for (int i = 0; i < b->nin; i++) cfx_bind_device(e, cfx_input_name(b->m, b->g, i), b->din[i], b->in_bytes[i]);
    for (int i = 0; i < b->nres; i++) cfx_bind_device(e, cfx_result_name(b->m, b->g, i), b->dres[i], b->res_bytes[i]);
    /* the first run: the reference results and the iterations */
    if (cfx_run_async(e) != 0 || cfx_wait(e) != CFX_OK) {
        printf("| %s | %s | - | the first run: %s |\n", b->name, cfx_backend_name(backend), cfx_exec_error(e));
        ok = 0;
        goto done;
    }
    int64_t iters = cfx_exec_iterations(e);
    for (int i = 0; i < b->nres; i++) {
        free(b->want[i]);
        b->want[i] = malloc(b->res_bytes[i]);
        cudaMemcpy(b->want[i], b->dres[i], b->res_bytes[i], cudaMemcpyDeviceToHost);
    }
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_us();
        for (int k = 0; k < runs; k++) {
            cfx_run_async(e);
            cfx_wait(e);
        }
        t_call[r] = (now_us() - t0) / runs;
    }
    ok &= results_same(b, "call");
    /* the capture */
    if (cfx_prepare(e) != 0 || cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess) {
        printf("| %s | %s | - | cfx_prepare: %s |\n", b->name, cfx_backend_name(backend), cfx_exec_error(e));
        ok = 0;
        goto done;
    }
    int rc = cfx_run_async(e);
    if (cudaStreamEndCapture(s, &graph) != cudaSuccess || rc != 0 || cudaGraphInstantiate(&x, graph, 0) != cudaSuccess) {
        printf("| %s | %s | - | capture: %s |\n", b->name, cfx_backend_name(backend), rc ? cfx_exec_error(e) : "a CUDA call failed");
        ok = 0;
        goto done;
    }
    for (int i = 0; i < b->nres; i++) cudaMemset(b->dres[i], 0, b->res_bytes[i]);
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_us();
        for (int k = 0; k < runs; k++) {
            cudaGraphLaunch(x, s);
            cudaStreamSynchronize(s);
        }
        t_replay[r] = (now_us() - t0) / runs;
    }
    ok &= cfx_wait(e) == CFX_OK && results_same(b, "replay");
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_us();
        for (int k = 0; k < runs; k++) cudaGraphLaunch(x, s);
        cudaStreamSynchronize(s);
        t_bb[r] = (now_us() - t0) / runs;
    }
    ok &= cfx_wait(e) == CFX_OK && results_same(b, "replay-bb");
    /* cfx_exec_graph's graph: cuda-persistent's as a child node of a graph of the application's,
     * cuda-graph's (conditional nodes, which a child node may not hold) instantiated as it is */
    double t_own[ROUNDS];
    int have_own = 0;
    {
        void *own = NULL;
        cudaGraph_t app = NULL;
        cudaGraphExec_t xo = NULL;
        cudaGraphNode_t node;
        if (cfx_exec_graph(e, &own) == 0) {
            if (backend == CFX_BACKEND_CUDA_PERSISTENT) {
                cudaGraphCreate(&app, 0);
                cudaGraphAddChildGraphNode(&node, app, NULL, 0, (cudaGraph_t)own);
            }
            if (cudaGraphInstantiate(&xo, app ? app : (cudaGraph_t)own, 0) == cudaSuccess) {
                for (int r = 0; r < ROUNDS; r++) {
                    double t0 = now_us();
                    for (int k = 0; k < runs; k++) {
                        cudaGraphLaunch(xo, s);
                        cudaStreamSynchronize(s);
                    }
                    t_own[r] = (now_us() - t0) / runs;
                }
                have_own = 1;
                ok &= cfx_wait(e) == CFX_OK && results_same(b, "exec-graph");
                cudaGraphExecDestroy(xo);
            }
            if (app) cudaGraphDestroy(app);
            cudaGraphDestroy((cudaGraph_t)own);
        } else {
            printf("<!-- %s, %s: cfx_exec_graph: %s -->\n", b->name, cfx_backend_name(backend), cfx_exec_error(e));
        }
    }
    {
        double c = median(t_call, ROUNDS), rp = median(t_replay, ROUNDS), bb = median(t_bb, ROUNDS);
        double it = iters > 0 ? (double)iters : 1.0;
        char own_col[32] = "-";
        if (have_own) snprintf(own_col, sizeof own_col, "%.1f", median(t_own, ROUNDS));
        printf("| %s | %s | %lld | %.1f | %.1f | %.1f | %s | %.3f | %.3f | %.3f | %.2f |%s\n", b->name,
               cfx_backend_name(backend), (long long)iters, c, rp, bb, own_col, c / it, rp / it, bb / it, c / rp,
               ok ? "" : " (results differ)");
    }
done:
    if (x) cudaGraphExecDestroy(x);
    if (graph) cudaGraphDestroy(graph);
    cfx_exec_free(e);
    cudaStreamDestroy(s);
    return ok;
}

int main(int argc, char **argv)
{
    static const char *files[] = {"counter", "cg_1024", "greedy_decode"};
    const char *only = NULL;
    int runs = 200, ok = 1;
    char why[512];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    }
    if (!cfx_backend_available(CFX_BACKEND_CUDA_GRAPH, why, sizeof why)) {
        printf("bench_capture: %s\n", why);
        return 77;
    }
    printf("| graph | backend | iterations | call us/run | replay us/run | replay-bb us/run | exec-graph us/run | "
           "call us/it | replay us/it | replay-bb us/it | call / replay |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int f = 0; f < 3; f++) {
        char path[1024], *diag = NULL;
        bench b;
        if (only && strcmp(only, files[f])) continue;
        memset(&b, 0, sizeof b);
        snprintf(path, sizeof path, "%s/profiling/bench/%s.cfx", CFX_SOURCE_DIR, files[f]);
        b.m = cfx_compile_file(NULL, path, &diag);
        if (!b.m) {
            printf("%s\n", diag);
            cfx_free(diag);
            return 1;
        }
        b.g = cfx_graph_find(b.m, NULL);
        b.name = files[f];
        b.nin = cfx_input_count(b.m, b.g);
        b.nres = cfx_result_count(b.m, b.g);
        for (int i = 0; i < b.nin; i++) {
            cfx_type t = cfx_input_type(b.m, b.g, i);
            void *h;
            b.in_bytes[i] = type_bytes(t);
            h = malloc(b.in_bytes[i]);
            fill(files[f], cfx_input_name(b.m, b.g, i), t, h);
            cudaMalloc(&b.din[i], b.in_bytes[i]);
            cudaMemcpy(b.din[i], h, b.in_bytes[i], cudaMemcpyHostToDevice);
            free(h);
        }
        for (int i = 0; i < b.nres; i++) {
            b.res_bytes[i] = type_bytes(cfx_result_type(b.m, b.g, i));
            cudaMalloc(&b.dres[i], b.res_bytes[i]);
        }
        ok &= run_backend(&b, CFX_BACKEND_CUDA_GRAPH, runs);
        ok &= run_backend(&b, CFX_BACKEND_CUDA_PERSISTENT, runs);
        for (int i = 0; i < b.nin; i++) cudaFree(b.din[i]);
        for (int i = 0; i < b.nres; i++) {
            cudaFree(b.dres[i]);
            free(b.want[i]);
        }
        cfx_module_free(b.m);
    }
    return ok ? 0 : 1;
}
#endif
