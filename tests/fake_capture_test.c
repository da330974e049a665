/* fake_capture_test.c (test_capture_standin): the CUDA executors' host code inside an
 * application's stream capture, on the CPU. The real CUDA module runs against
 * tests/fake_capture_rt.c, a CUDA runtime whose device memory is host memory, whose kernels do not
 * run, and which refuses (and logs) every call that would break a capture: an allocation, a free,
 * a synchronization, a query, an instantiation, a copy from pageable memory, work on the legacy
 * stream.
 *
 * For every graph of graphs/ (its entry graph) and each CUDA backend (cuda-host, cuda-graph,
 * cuda-persistent interpreting, and compiled for a few graphs), as an application does: device
 * buffers for every input and result, the executor on the application's stream, warmed by
 * cfx_prepare (or by one ordinary run, every other graph), then cfx_run_async between
 * cudaStreamBeginCapture and cudaStreamEndCapture. Required:
 * - the fake saw no call that breaks a capture, whatever the run did;
 * - cuda-host, a graph that prints, and cuda-persistent where records end the kernel's launch
 *   are refused with CFX_ERROR and a message that says so and what to choose instead; every other
 *   run is recorded: a graph that holds the run's work (cuda-graph's conditional nodes in the
 *   capture's own graph, never a child graph node, which may not hold them; cuda-persistent's
 *   kernel) and ends with the publication of the outcome;
 * - before a replay cfx_wait says there has been none; after the application's graph is
 *   instantiated, launched and synchronized (the fake runs the publication), cfx_wait is ok.
 * Also: cfx_exec_graph's graph holds the same work; a run under capture on a cold executor is
 * refused, not made a broken capture. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "testutil.h"

int fake_cuda_violations(char *buf, size_t len);
void fake_cuda_clear(void);
int fake_cuda_describe(cudaGraph_t g, char *buf, size_t len);

#define MAX_IO 64

enum { B_HOST, B_GRAPH, B_INTERP, B_COMPILED, NB };
static const char *labels[NB] = {"cuda-host", "cuda-graph", "cuda-persistent interp", "cuda-persistent compiled"};

/* The graphs compiled mode is tried on (NVRTC is slow on a shared machine) */
static int compiled_wanted(const char *path)
{
    return strstr(path, "/counter.cfx") || strstr(path, "/conjugate_gradient.cfx") || strstr(path, "/greedy_decode.cfx");
}

static int nrecorded, nrefused, nskipped;

/* One graph on one backend. */
static void one(const char *path, cfx_module *m, int b, int warm_by_run, const char *dump)
{
    int g = cfx_graph_find(m, NULL);
    cfx_backend backend = b == B_HOST ? CFX_BACKEND_CUDA_HOST : b == B_GRAPH ? CFX_BACKEND_CUDA_GRAPH
                                                                             : CFX_BACKEND_CUDA_PERSISTENT;
    char *err = NULL, log[4096], desc[8192];
    void *bufs[MAX_IO];
    int nbufs = 0;
    cudaStream_t app = NULL;
    cudaGraph_t captured = NULL;
    cfx_exec *e = cfx_exec_new(m, g, backend, &err);
    if (!e) {
        printf("FAIL %s on %s: cfx_exec_new: %s\n", path, labels[b], err ? err : "?");
        CHECK(0);
        cfx_free(err);
        return;
    }
    if (b == B_INTERP)
        cfx_set_persistent_mode(e, CFX_PERSISTENT_INTERP);
    CHECK_INT(cudaStreamCreateWithFlags(&app, cudaStreamNonBlocking), cudaSuccess);
    cfx_set_stream(e, app);
    int ok = 1;
    for (int i = 0; i < cfx_input_count(m, g) && nbufs < MAX_IO; i++) {
        cfx_type t = cfx_input_type(m, g, i);
        size_t bytes = (size_t)cfx_type_count(&t) * (size_t)cfx_dtype_size(t.dtype);
        CHECK_INT(cudaMalloc(&bufs[nbufs], bytes ? bytes : 1), cudaSuccess);
        ok &= cfx_bind_device(e, cfx_input_name(m, g, i), bufs[nbufs++], bytes) == 0;
    }
    for (int i = 0; i < cfx_result_count(m, g) && nbufs < MAX_IO; i++) {
        cfx_type t = cfx_result_type(m, g, i);
        size_t bytes = (size_t)cfx_type_count(&t) * (size_t)cfx_dtype_size(t.dtype);
        CHECK_INT(cudaMalloc(&bufs[nbufs], bytes ? bytes : 1), cudaSuccess);
        ok &= cfx_bind_device(e, cfx_result_name(m, g, i), bufs[nbufs++], bytes) == 0;
    }
    if (!ok) {
        printf("FAIL %s on %s: bind: %s\n", path, labels[b], cfx_exec_error(e));
        CHECK(0);
        goto done;
    }
    /* warm: an ordinary run (not on cuda-host, whose host walk would follow the fake's zeros), or cfx_prepare */
    if (warm_by_run && b != B_HOST) {
        if (cfx_run_async(e) != 0 || cfx_wait(e) == CFX_ERROR) {
            if (strstr(cfx_exec_error(e), "defaults to None")) {
                nskipped++;
                goto done;
            }
            printf("FAIL %s on %s: the warm-up run: %s\n", path, labels[b], cfx_exec_error(e));
            CHECK(0);
            goto done;
        }
    } else if (cfx_prepare(e) != 0) {
        if (strstr(cfx_exec_error(e), "defaults to None")) { /* a device run cannot bind None */
            nskipped++;
            goto done;
        }
        printf("FAIL %s on %s: cfx_prepare: %s\n", path, labels[b], cfx_exec_error(e));
        CHECK(0);
        goto done;
    }

    fake_cuda_clear();
    CHECK_INT(cudaStreamBeginCapture(app, cudaStreamCaptureModeGlobal), cudaSuccess);
    int rc = cfx_run_async(e);
    cudaError_t end = cudaStreamEndCapture(app, &captured);
    int nv = fake_cuda_violations(log, sizeof log);
    if (nv != 0) {
        printf("FAIL %s on %s: the run broke the capture with:\n%s", path, labels[b], log);
        CHECK_INT(nv, 0);
        goto done;
    }
    CHECK_INT(end, cudaSuccess);
    const char *why = cfx_exec_error(e);
    int prints = strstr(dump, "PRINT") != NULL;
    if (b == B_HOST) {
        CHECK_INT(rc, -1);
        CHECK(strstr(why, "cuda-host cannot run under stream capture") && strstr(why, "choose cuda-graph"));
        nrefused++;
    } else if (prints) {
        CHECK_INT(rc, -1);
        CHECK(strstr(why, "prints") != NULL);
        nrefused++;
    } else if (rc != 0 && b >= B_INTERP && strstr(why, "end the kernel's launch") && strstr(why, "choose cuda-graph")) {
        nrefused++; /* records that end the launch: a refusal that says what to choose */
    } else if (rc != 0) {
        printf("FAIL %s on %s: refused: %s\n", path, labels[b], why);
        CHECK_INT(rc, 0);
    } else {
        nrecorded++;
        fake_cuda_describe(captured, desc, sizeof desc);
        /* the run's own work, then the publication last */
        CHECK(strstr(desc, "kernel:") != NULL);
        const char *pub = strstr(desc, "dev_publish_kernel");
        if (!pub || strstr(pub + 1, "kernel:") || strstr(pub + 1, "child")) {
            printf("FAIL %s on %s: the captured graph does not end with the publication: %s\n", path, labels[b], desc);
            CHECK(0);
        }
        if (b == B_GRAPH && (!strstr(desc, "conditional") || strstr(desc, "child"))) {
            printf("FAIL %s on %s: cuda-graph's nodes are not in the capture's graph: %s\n", path, labels[b], desc);
            CHECK(0);
        }
        if (b >= B_INTERP && !strstr(desc, "persist_kernel") && !strstr(desc, "cfx_compiled")) {
            printf("note: %s on %s: %s\n", path, labels[b], desc);
        }
        if (b >= B_INTERP)
            CHECK(strstr(desc, "persist_kernel") || strstr(desc, "kernel:cfx_") || strstr(desc, "kernel:ck_"));
        /* no replay yet: cfx_wait says so */
        CHECK_INT(cfx_wait(e), CFX_ERROR);
        CHECK(strstr(cfx_exec_error(e), "not been replayed") != NULL);
        /* the application's graph, replayed twice: each cfx_wait reads the last replay's outcome */
        cudaGraphExec_t x = NULL;
        CHECK_INT(cudaGraphInstantiate(&x, captured, 0), cudaSuccess);
        for (int r = 0; r < 2; r++) {
            CHECK_INT(cudaGraphLaunch(x, app), cudaSuccess);
            CHECK_INT(cudaStreamSynchronize(app), cudaSuccess);
            CHECK_INT(cfx_wait(e), CFX_OK);
        }
        cudaGraphExecDestroy(x);
        /* cfx_exec_graph: the same run as a graph of its own */
        void *own = NULL;
        fake_cuda_clear();
        if (cfx_exec_graph(e, &own) != 0) {
            printf("FAIL %s on %s: cfx_exec_graph: %s\n", path, labels[b], cfx_exec_error(e));
            CHECK(0);
        } else {
            fake_cuda_describe((cudaGraph_t)own, desc, sizeof desc);
            CHECK(strstr(desc, "dev_publish_kernel") != NULL);
            CHECK_INT(fake_cuda_violations(log, sizeof log), 0);
        }
        /* and an ordinary run after the capture still runs */
        CHECK_INT(cfx_run_async(e), 0);
        CHECK_INT(cfx_wait(e), CFX_OK);
    }
done:
    cfx_exec_free(e);
    for (int i = 0; i < nbufs; i++)
        cudaFree(bufs[i]);
    if (app)
        cudaStreamDestroy(app);
}

/* A cold executor (nothing prepared, the compiled kernel not built) under capture: refused, and
 * the capture stays whole. */
static void cold(void)
{
    char *err = NULL, log[4096];
    const char *src = "graph cold(n: i32) -> (s: i32) {\n  s = 0\n  for i in range(0, n) {\n    s = s + i\n  }\n}\n";
    cfx_module *m = cfx_compile_string(NULL, "cold.cfx", src, strlen(src), &err);
    CHECK(m != NULL);
    if (!m)
        return;
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CUDA_PERSISTENT, &err);
    CHECK(e != NULL);
    if (e) {
        void *n = NULL, *s = NULL;
        cudaStream_t app;
        cudaGraph_t g = NULL;
        cudaMalloc(&n, 4);
        cudaMalloc(&s, 4);
        cudaStreamCreateWithFlags(&app, cudaStreamNonBlocking);
        cfx_bind_device(e, "n", n, 4);
        cfx_bind_device(e, cfx_result_name(m, 0, 0), s, 4);
        cfx_set_stream(e, app);
        fake_cuda_clear();
        cudaStreamBeginCapture(app, cudaStreamCaptureModeGlobal);
        CHECK_INT(cfx_run_async(e), -1);
        CHECK(strstr(cfx_exec_error(e), "cfx_prepare") != NULL);
        CHECK_INT(cudaStreamEndCapture(app, &g), cudaSuccess);
        CHECK_INT(fake_cuda_violations(log, sizeof log), 0);
        /* cfx_run under capture: refused, it would wait */
        CHECK_INT(cfx_prepare(e), 0);
        cudaStreamBeginCapture(app, cudaStreamCaptureModeGlobal);
        CHECK_INT(cfx_run(e), CFX_ERROR);
        CHECK(strstr(cfx_exec_error(e), "cfx_run under stream capture") != NULL);
        CHECK_INT(cudaStreamEndCapture(app, &g), cudaSuccess);
        CHECK_INT(fake_cuda_violations(log, sizeof log), 0);
        cfx_exec_free(e);
        cudaFree(n);
        cudaFree(s);
        cudaStreamDestroy(app);
    }
    cfx_free(err);
    cfx_module_free(m);
}

int main(void)
{
    char *paths[128];
    char why[256];
    if (!cfx_backend_available(CFX_BACKEND_CUDA_GRAPH, why, sizeof why)) {
        printf("the CUDA module does not load against the fake runtime: %s\n", why);
        return 1;
    }
    int n = test_graph_files(paths, 128);
    CHECK(n > 40);
    for (int i = 0; i < n; i++) {
        char *diag = NULL;
        cfx_module *m = cfx_compile_file(NULL, paths[i], &diag);
        if (!m) { /* a file of errors on purpose, or one that needs registered kernels */
            nskipped++;
            cfx_free(diag);
            free(paths[i]);
            continue;
        }
        char *dump = cfx_dump(m, cfx_graph_find(m, NULL));
        for (int b = 0; b < NB; b++)
            if (b != B_COMPILED || compiled_wanted(paths[i]))
                one(paths[i], m, b, i % 2, dump ? dump : "");
        cfx_free(dump);
        cfx_module_free(m);
        free(paths[i]);
    }
    cold();
    printf("%d runs recorded, %d refused as they should be, %d skipped\n", nrecorded, nrefused, nskipped);
    CHECK(nrecorded > 50);
    return test_finish("test_capture_standin");
}
