/* gpu_capture.c: cfx runs inside the application's CUDA graph, on a GPU, against the cpu
 * executor (docs/persistent.md, "Inside the application's graph").
 *
 * For the first `# run:` line of every graph of graphs/ (graphs/README.md) and each backend that
 * can be captured (cuda-graph, cuda-persistent interpreting and compiled): the cpu executor's
 * status and results over host buffers; then, as an application does, device buffers for every
 * input and result, the executor on the application's stream, cfx_prepare, the input buffers
 * zeroed, cfx_run_async between cudaStreamBeginCapture and cudaStreamEndCapture, the graph
 * instantiated, and only then the run's inputs copied into the input buffers (so a replay that
 * read them at the capture would see zeros). The graph is replayed 100 times, the result buffers
 * poisoned before each: every replay must give the cpu executor's status (cfx_wait) and, when
 * ok, its results (integers and bools identical, reals within the file's `# tol:` or 1e-5
 * relative). A run the backend refuses under capture (prints; cuda-persistent's records that
 * end the kernel's launch) must say so and what to choose instead, and leave the capture whole.
 * Then cfx_exec_graph's graph for cuda-persistent, as a child graph node of a graph of the
 * application's, replayed the same way. Exits 77 when no CUDA backend can run here.
 *
 * Written without a GPU: compiled, not yet run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "testutil.h"

/* The CUDA runtime, reached only when the library was built with it: weak references (as in
 * gpu_persistent.c), so that this test builds, and skips, where there is no CUDA. Handles are
 * void pointers; the enums' values are CUDA's. */
typedef void *cudaStream_t, *cudaGraph_t, *cudaGraphExec_t, *cudaGraphNode_t;
enum { cudaSuccess = 0, cudaStreamNonBlocking = 1, cudaStreamCaptureModeGlobal = 0, cudaMemcpyHostToDevice = 1,
       cudaMemcpyDeviceToHost = 2 };
extern int cudaMalloc(void **p, size_t bytes) __attribute__((weak));
extern int cudaFree(void *p) __attribute__((weak));
extern int cudaMemcpy(void *dst, const void *src, size_t bytes, int kind) __attribute__((weak));
extern int cudaMemset(void *p, int value, size_t bytes) __attribute__((weak));
extern int cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t s) __attribute__((weak));
extern int cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags) __attribute__((weak));
extern int cudaStreamDestroy(cudaStream_t s) __attribute__((weak));
extern int cudaStreamSynchronize(cudaStream_t s) __attribute__((weak));
extern int cudaStreamBeginCapture(cudaStream_t s, int mode) __attribute__((weak));
extern int cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g) __attribute__((weak));
extern int cudaGraphCreate(cudaGraph_t *g, unsigned flags) __attribute__((weak));
extern int cudaGraphAddChildGraphNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t n,
                                      cudaGraph_t child) __attribute__((weak));
extern int cudaGraphInstantiate(cudaGraphExec_t *x, cudaGraph_t g, unsigned long long flags) __attribute__((weak));
extern int cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t s) __attribute__((weak));
extern int cudaGraphExecDestroy(cudaGraphExec_t x) __attribute__((weak));
extern int cudaGraphDestroy(cudaGraph_t g) __attribute__((weak));

#define MAX_IO 32
#define REPLAYS 100
#define DEFAULT_TOL 1e-5

enum { B_GRAPH, B_INTERP, B_COMPILED, NB };
static const char *labels[NB] = {"cuda-graph", "cuda-persistent interp", "cuda-persistent compiled"};
static int nreplayed, nrefused;

#define CUDA_OK(call) CHECK_INT((call), cudaSuccess)

static size_t type_bytes(cfx_type t) { return (size_t)cfx_type_count(&t) * (size_t)cfx_dtype_size(t.dtype); }

/* got against want, n elements of dt: integers and bools exactly, reals within tol */
static int same(cfx_dtype dt, const void *got, const void *want, int64_t n, double tol)
{
    for (int64_t i = 0; i < n; i++) {
        double g, w;
        switch (dt) {
        case CFX_F32: g = ((const float *)got)[i], w = ((const float *)want)[i]; break;
        case CFX_F64: g = ((const double *)got)[i], w = ((const double *)want)[i]; break;
        case CFX_I32: if (((const int32_t *)got)[i] != ((const int32_t *)want)[i]) return 0; continue;
        case CFX_I64: if (((const int64_t *)got)[i] != ((const int64_t *)want)[i]) return 0; continue;
        case CFX_BOOL: default: if (((const uint8_t *)got)[i] != ((const uint8_t *)want)[i]) return 0; continue;
        }
        if (isnan(w) ? !isnan(g) : fabs(g - w) > tol * (fabs(w) > 1 ? fabs(w) : 1)) return 0;
    }
    return 1;
}

typedef struct want {
    cfx_status status;
    void *results[MAX_IO];
} want;

/* Replays x `REPLAYS` times on s and compares each with w. */
static void replay(cfx_exec *e, cfx_module *m, int g, cudaGraphExec_t x, cudaStream_t s, void *const *dres,
                   const want *w, double tol, const char *what)
{
    int nres = cfx_result_count(m, g);
    for (int r = 0; r < REPLAYS; r++) {
        for (int i = 0; i < nres; i++)
            CUDA_OK(cudaMemsetAsync(dres[i], 0xA5, type_bytes(cfx_result_type(m, g, i)), s));
        CUDA_OK(cudaGraphLaunch(x, s));
        CUDA_OK(cudaStreamSynchronize(s));
        cfx_status st = cfx_wait(e);
        if (st != w->status) {
            printf("FAIL %s: replay %d: status %s (%s), the cpu executor's %s\n", what, r, cfx_status_name(st),
                   cfx_exec_error(e), cfx_status_name(w->status));
            CHECK(0);
            return;
        }
        if (st != CFX_OK)
            continue;
        for (int i = 0; i < nres; i++) {
            cfx_type t = cfx_result_type(m, g, i);
            size_t bytes = type_bytes(t);
            void *h = malloc(bytes ? bytes : 1);
            CUDA_OK(cudaMemcpy(h, dres[i], bytes, cudaMemcpyDeviceToHost));
            if (!same(t.dtype, h, w->results[i], cfx_type_count(&t), tol)) {
                printf("FAIL %s: replay %d: result '%s' differs from the cpu executor's\n", what, r,
                       cfx_result_name(m, g, i));
                CHECK(0);
                free(h);
                return;
            }
            free(h);
        }
    }
    nreplayed++;
}

static void captured(cfx_module *m, int g, int b, void *const *inputs, const want *w, int64_t max_iters, double tol,
                     const char *path)
{
    char what[600], *err = NULL;
    void *din[MAX_IO] = {0}, *dres[MAX_IO] = {0};
    int nin = cfx_input_count(m, g), nres = cfx_result_count(m, g);
    cudaStream_t s = NULL;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t x = NULL;
    snprintf(what, sizeof what, "%s on %s", path, labels[b]);
    cfx_exec *e = cfx_exec_new(m, g, b == B_GRAPH ? CFX_BACKEND_CUDA_GRAPH : CFX_BACKEND_CUDA_PERSISTENT, &err);
    if (!e) {
        printf("FAIL %s: %s\n", what, err);
        CHECK(0);
        cfx_free(err);
        return;
    }
    if (b != B_GRAPH &&
        cfx_set_persistent_mode(e, b == B_INTERP ? CFX_PERSISTENT_INTERP : CFX_PERSISTENT_COMPILED) !=
            (b == B_INTERP ? CFX_PERSISTENT_INTERP : CFX_PERSISTENT_COMPILED)) {
        printf("FAIL %s: the mode does not run: %s\n", what, cfx_exec_error(e));
        CHECK(0);
        goto done;
    }
    cfx_set_max_iters(e, max_iters);
    CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cfx_set_stream(e, s);
    for (int i = 0; i < nin; i++) {
        size_t bytes = type_bytes(cfx_input_type(m, g, i));
        CUDA_OK(cudaMalloc(&din[i], bytes ? bytes : 1));
        CUDA_OK(cudaMemset(din[i], 0, bytes ? bytes : 1)); /* zeros at the capture */
        CHECK_INT(cfx_bind_device(e, cfx_input_name(m, g, i), din[i], bytes), 0);
    }
    for (int i = 0; i < nres; i++) {
        size_t bytes = type_bytes(cfx_result_type(m, g, i));
        CUDA_OK(cudaMalloc(&dres[i], bytes ? bytes : 1));
        CHECK_INT(cfx_bind_device(e, cfx_result_name(m, g, i), dres[i], bytes), 0);
    }
    if (cfx_prepare(e) != 0) {
        printf("FAIL %s: cfx_prepare: %s\n", what, cfx_exec_error(e));
        CHECK(0);
        goto done;
    }
    CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    int rc = cfx_run_async(e);
    int end = cudaStreamEndCapture(s, &graph);
    CHECK_INT(end, cudaSuccess); /* refused or not, the capture is whole */
    if (rc != 0) {
        const char *why = cfx_exec_error(e);
        if (!strstr(why, "prints") && !strstr(why, "end the kernel's launch")) {
            printf("FAIL %s: refused under capture: %s\n", what, why);
            CHECK(0);
        }
        nrefused++;
        goto done;
    }
    CUDA_OK(cudaGraphInstantiate(&x, graph, 0));
    for (int i = 0; i < nin; i++) /* the inputs only now: a replay must read them */
        CUDA_OK(cudaMemcpy(din[i], inputs[i], type_bytes(cfx_input_type(m, g, i)), cudaMemcpyHostToDevice));
    replay(e, m, g, x, s, dres, w, tol, what);
    cudaGraphExecDestroy(x);
    x = NULL;
    cudaGraphDestroy(graph);
    graph = NULL;

    if (b != B_GRAPH) {
        /* cfx_exec_graph's graph as a child node of the application's graph */
        void *own = NULL;
        cudaGraph_t app = NULL;
        cudaGraphNode_t node;
        char w2[640];
        snprintf(w2, sizeof w2, "%s, cfx_exec_graph as a child node", what);
        if (cfx_exec_graph(e, &own) != 0) {
            printf("FAIL %s: %s\n", w2, cfx_exec_error(e));
            CHECK(0);
            goto done;
        }
        CUDA_OK(cudaGraphCreate(&app, 0));
        CUDA_OK(cudaGraphAddChildGraphNode(&node, app, NULL, 0, own));
        CUDA_OK(cudaGraphInstantiate(&x, app, 0));
        replay(e, m, g, x, s, dres, w, tol, w2);
        cudaGraphDestroy(app);
        cudaGraphDestroy(own);
    }
done:
    if (x) cudaGraphExecDestroy(x);
    if (graph) cudaGraphDestroy(graph);
    cfx_exec_free(e);
    for (int i = 0; i < nin; i++) cudaFree(din[i]);
    for (int i = 0; i < nres; i++) cudaFree(dres[i]);
    if (s) cudaStreamDestroy(s);
}

static void quiet(void *user, const char *line)
{
    (void)user, (void)line;
}

/* The first `# run:` line of the file. */
static void check_file(const char *path)
{
    long len = 0;
    char *text = test_read_file(path, &len), *diags = NULL, *line = NULL;
    double tol = DEFAULT_TOL;
    if (!CHECK(text != NULL)) return;
    cfx_module *m = cfx_compile_string(NULL, path, text, (size_t)len, &diags);
    if (!m) {
        cfx_free(diags);
        free(text);
        return;
    }
    for (char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, "# tol:", 6) == 0 && strtod(p + 6, NULL) > tol) tol = strtod(p + 6, NULL);
        if (!line && strncmp(p, "# run:", 6) == 0) {
            const char *end = strchr(p, '\n');
            size_t n = end ? (size_t)(end - p) : strlen(p);
            line = (char *)malloc(n + 1);
            memcpy(line, p, n);
            line[n] = '\0';
        }
    }
    if (line) {
        char *tokens[64], err[512];
        int ntok = 0;
        const char *gname = NULL;
        int64_t max_iters = 0;
        void *inputs[MAX_IO] = {0};
        const char *names[MAX_IO], *defaults[MAX_IO];
        cfx_type types[MAX_IO];
        want w;
        memset(&w, 0, sizeof w);
        for (char *t = strtok(line + 6, " \t\r\n"); t && ntok < 64; t = strtok(NULL, " \t\r\n")) tokens[ntok++] = t;
        for (int i = 0; i < ntok; i++) {
            if (strcmp(tokens[i], "--graph") == 0 && i + 1 < ntok) gname = tokens[++i];
            else if (strcmp(tokens[i], "--max-iters") == 0 && i + 1 < ntok) max_iters = strtoll(tokens[++i], NULL, 10);
        }
        int g = cfx_graph_find(m, gname);
        int nin = g >= 0 ? cfx_input_count(m, g) : 0, nres = g >= 0 ? cfx_result_count(m, g) : 0;
        int ok = g >= 0 && nin <= MAX_IO && nres <= MAX_IO;
        for (int i = 0; ok && i < nin; i++) {
            names[i] = cfx_input_name(m, g, i);
            types[i] = cfx_input_type(m, g, i);
            defaults[i] = cfx_input_default(m, g, i);
        }
        ok = ok && test_run_inputs(tokens, ntok, nin, names, types, defaults, inputs, err, sizeof err) == 0;
        for (int i = 0; ok && i < nin; i++)
            ok = inputs[i] != NULL; /* an input that defaults to None: a device run cannot leave it unbound */
        cfx_exec *cpu = ok ? cfx_exec_new(m, g, CFX_BACKEND_CPU, &diags) : NULL;
        if (cpu) {
            cfx_set_max_iters(cpu, max_iters);
            cfx_set_print(cpu, quiet, NULL);
            for (int i = 0; i < nin; i++)
                cfx_bind(cpu, names[i], inputs[i], type_bytes(types[i]));
            for (int i = 0; i < nres; i++) {
                size_t bytes = type_bytes(cfx_result_type(m, g, i));
                w.results[i] = calloc(1, bytes ? bytes : 1);
                cfx_bind(cpu, cfx_result_name(m, g, i), w.results[i], bytes);
            }
            w.status = cfx_run(cpu);
            cfx_exec_free(cpu);
            if (w.status != CFX_ERROR)
                for (int b = 0; b < NB; b++) captured(m, g, b, inputs, &w, max_iters, tol, path);
            for (int i = 0; i < nres; i++) free(w.results[i]);
        }
        cfx_free(diags);
        for (int i = 0; i < MAX_IO; i++) free(inputs[i]);
        free(line);
    }
    cfx_module_free(m);
    free(text);
}

int main(int argc, char **argv)
{
    char why[512], *paths[512];
    if (!cfx_backend_available(CFX_BACKEND_CUDA_GRAPH, why, sizeof why) ||
        !cfx_backend_available(CFX_BACKEND_CUDA_PERSISTENT, why, sizeof why)) {
        printf("skipped: %s\n", why);
        return 77;
    }
    if (!cudaMalloc || !cudaStreamBeginCapture || !cudaGraphInstantiate || !cudaGraphAddChildGraphNode) {
        printf("skipped: this build does not link the CUDA runtime\n");
        return 77;
    }
    if (argc > 1) {
        check_file(argv[1]);
    } else {
        int n = test_graph_files(paths, 512);
        CHECK(n > 0);
        for (int i = 0; i < n; i++) {
            check_file(paths[i]);
            free(paths[i]);
        }
    }
    printf("%d captured runs replayed %d times each, %d refused\n", nreplayed, REPLAYS, nrefused);
    CHECK(nreplayed > 0);
    return test_finish("gpu_capture");
}
