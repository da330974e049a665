/* session.cu: the run machinery of both modes of the cuda-persistent executor (session.h says
 * what the session owns and what a mode supplies).
 *
 * Records that end the kernel's launch (a CALL of a binary application kernel, a product for
 * cuBLAS) are served one of two ways. With device graph launch the kernel is the node of a
 * device-launchable graph (the mode's device_graph) and each such record's work is captured
 * into a graph of its own (a product's when device launch is set up, a CALL's at the first run,
 * when the kernels are known), which the kernel tail-launches before itself. Otherwise, or when
 * a site cannot be captured, the kernel pauses there: the host runs the record's work on the
 * run's stream and launches again after it (the pause and relaunch path, dev_session_finish).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blas.h"
#include "dev.h"
#include "host/runtime/exec.h"
#include "host/runtime/nvtx.h"
#include "scheduler.h" /* SCHED_STATUS_PAUSE, which both kernels raise */
#include "session.h"

/* ==== memory ================================================================================ */

int dev_session_upload(dev_session *s, const cfx_prog *prog, char *err, size_t errlen)
{
    s->prog = prog;
    s->uploaded = 1; /* dev_prog_upload starts from nothing: what it made is freed on failure too */
    if (dev_prog_upload(&s->d, prog, err, errlen) != 0)
        return -1;
    CUDA_TRY(cudaStreamCreateWithFlags(&s->own, cudaStreamNonBlocking));
    CUDA_TRY(cudaStreamCreateWithFlags(&s->capture, cudaStreamNonBlocking));
    return 0;
fail:
    return -1;
}

int dev_session_alloc(dev_session *s, char *err, size_t errlen)
{
    const cfx_prog *p = s->prog;
    s->nlaunch_calls = 0;
    for (int32_t i = 0; i < p->nrecords; i++)
        s->nlaunch_calls += p->records[i].kind == REC_CALL && s->mode->ends_launch(s, i);
    CUDA_TRY(cudaHostAlloc((void **)&s->progress, sizeof(exec_progress) * (size_t)s->nblocks, cudaHostAllocMapped));
    CUDA_TRY(cudaHostGetDevicePointer((void **)&s->progress_dev, s->progress, 0));
    s->site_exec = (cudaGraphExec_t *)calloc((size_t)p->nrecords + 1, sizeof(cudaGraphExec_t));
    s->site_graph = (cudaGraph_t *)calloc((size_t)p->nrecords + 1, sizeof(cudaGraph_t));
    if (!s->site_exec || !s->site_graph) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    CUDA_TRY(cudaMalloc((void **)&s->site_exec_dev, sizeof(cudaGraphExec_t) * ((size_t)p->nrecords + 1)));
    CUDA_TRY(cudaMemset(s->site_exec_dev, 0, sizeof(cudaGraphExec_t) * ((size_t)p->nrecords + 1)));
    return 0;
fail:
    return -1;
}

/* Every site graph and the kernel's graphs. Without its graph no run can go through it, so the
 * session is on the pause path afterwards (device_launch 0): the interpreter's copy of this
 * left the flag to its caller, the compiled kernel's cleared it, and a set flag with no graph
 * would launch nothing. */
static void drop_graphs(dev_session *s)
{
    for (int32_t i = 0; s->site_exec && i < s->prog->nrecords; i++) {
        if (s->site_exec[i]) cudaGraphExecDestroy(s->site_exec[i]);
        if (s->site_graph[i]) cudaGraphDestroy(s->site_graph[i]);
        s->site_exec[i] = NULL;
        s->site_graph[i] = NULL;
    }
    if (s->main_exec) cudaGraphExecDestroy(s->main_exec);
    if (s->main_graph) cudaGraphDestroy(s->main_graph);
    if (s->trace_exec) cudaGraphExecDestroy(s->trace_exec);
    if (s->trace_graph) cudaGraphDestroy(s->trace_graph);
    s->main_exec = NULL;
    s->main_graph = NULL;
    s->trace_exec = NULL;
    s->trace_graph = NULL;
    s->device_launch = 0;
}

void dev_session_free(dev_session *s)
{
    if (s->prog)
        drop_graphs(s);
    free(s->site_exec);
    free(s->site_graph);
    free(s->captured);
    s->site_exec = NULL;
    s->site_graph = NULL;
    s->captured = NULL;
    if (s->uploaded)
        dev_prog_free(&s->d);
    s->uploaded = 0;
    if (s->site_exec_dev) cudaFree(s->site_exec_dev);
    if (s->progress) cudaFreeHost(s->progress);
    if (s->own) cudaStreamDestroy(s->own);
    if (s->capture) cudaStreamDestroy(s->capture);
    blas_free(s->blas);
    s->site_exec_dev = NULL;
    s->progress = NULL;
    s->progress_dev = NULL;
    s->own = NULL;
    s->capture = NULL;
    s->blas = NULL;
}

/* ==== records that end the launch =========================================================== */

typedef struct site_job {
    dev_session *s;
    int32_t i;
    const exec_kernel *k; /* a CALL's kernel; NULL for a product */
} site_job;

/* A product's cuBLAS call on stream st: the one cuda-host makes. */
static int enqueue_product(dev_session *s, int32_t i, cudaStream_t st, char *err, size_t errlen)
{
    const cfx_prog *p = s->prog;
    const cfx_record *r = &p->records[i];
    const cfx_slot *sb = &p->slots[r->b], *sc = &p->slots[r->c];
    rec_mm g = rec_matmul(p->slots, r); /* a batch: one strided batched product */
    return blas_matmul_batch(s->blas, st, sb->dtype, s->d.arena + p->slots[r->a].offset, s->d.arena + sb->offset,
                             s->d.arena + sc->offset, g.batch, g.m, g.k, g.n, g.sb, g.sc, err, errlen) == 0 ? 0 : 1;
}

/* dev_enqueue for a site's capture: the product's cuBLAS call, or the CALL's cuda_fn. */
static int enqueue_site(void *user, cudaStream_t st, char *err, size_t errlen)
{
    const site_job *j = (const site_job *)user;
    if (j->s->prog->records[j->i].kind != REC_CALL)
        return enqueue_product(j->s, j->i, st, err, errlen);
    int failed = 0;
    if (dev_call_kernel(&j->s->d, j->k, &j->s->prog->records[j->i], st, &failed, err, errlen) != 0)
        return 1;
    if (failed) {
        snprintf(err, errlen, "kernel '%s' %s", j->k && j->k->name ? j->k->name : "?",
                 j->k && j->k->cuda_fn ? "reported a failure while it was captured" : "has no CUDA function");
        return 1;
    }
    return 0;
}

void dev_session_fall_back(dev_session *s, const char *why)
{
    drop_graphs(s);
    snprintf(s->why_pause, sizeof s->why_pause, "%s", why);
    if (s->mode->describe)
        s->mode->describe(s);
}

/* Copies site_exec to the device, where the kernel reads it. */
static int upload_sites(dev_session *s, char *err, size_t errlen)
{
    CUDA_TRY(cudaMemcpyAsync(s->site_exec_dev, s->site_exec, sizeof(cudaGraphExec_t) * (size_t)s->prog->nrecords,
                             cudaMemcpyHostToDevice, s->own));
    CUDA_TRY(cudaStreamSynchronize(s->own));
    return 0;
fail:
    return -1;
}

/* Captures record i's work into site_graph[i] and site_exec[i]: 0; 1 falls back (the reason
 * is kept); -1 for a CUDA failure. */
static int capture_site(dev_session *s, int32_t i, const exec_kernel *k, char *err, size_t errlen)
{
    site_job job = {s, i, k};
    char why[320];
    int rc = dev_capture_site(s->capture, s->own, enqueue_site, &job, &s->site_graph[i], &s->site_exec[i], why,
                              sizeof why);
    if (rc < 0)
        snprintf(err, errlen, "%s", why);
    if (rc > 0) {
        char msg[400];
        snprintf(msg, sizeof msg, "the %s at record %d: %s", k ? "CALL" : "product", (int)i, why);
        dev_session_fall_back(s, msg);
    }
    return rc;
}

int dev_session_device_launch(dev_session *s, char *err, size_t errlen)
{
    const cfx_prog *p = s->prog;
    char why[320] = "";
    int coop = 0;
    if (!persist_probe_device_launch(&coop, why, sizeof why)) {
        char msg[400];
        snprintf(msg, sizeof msg, "device graph launch is not available here: %s", why);
        dev_session_fall_back(s, msg);
        return 0;
    }
    for (int32_t i = 0; i < p->nrecords; i++) {
        /* the products the kernel ends its launch at (its CALLs are captured at the first run) */
        if (p->records[i].kind == REC_CALL || !s->mode->ends_launch(s, i))
            continue;
        int rc = capture_site(s, i, NULL, err, errlen);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
    }
    if (upload_sites(s, err, errlen) != 0)
        return -1;
    if (s->mode->device_graph(s, coop, why, sizeof why) != 0) {
        char msg[400];
        snprintf(msg, sizeof msg, "the kernel's graph: %s", why);
        dev_session_fall_back(s, msg);
        return 0;
    }
    s->device_launch = 1;
    if (s->mode->describe)
        s->mode->describe(s);
    return 0;
}

int dev_session_calls_changed(const dev_session *s, const exec_run *run)
{
    return s->device_launch && s->nlaunch_calls > 0 && dev_kernels_changed(s->captured, s->prog->nkernels, run);
}

/* The CALL sites' graphs, at the first run (or when the kernels changed): every launched CALL's
 * cuda_fn is called once, on the capture stream. A kernel that has no CUDA function, reports a
 * failure, or enqueues what a device graph may not hold sends the executor to the pause path,
 * which calls cuda_fn at every CALL as the other executors do. */
int dev_session_capture_calls(dev_session *s, const exec_run *run, char *err, size_t errlen)
{
    const cfx_prog *p = s->prog;
    if (!dev_session_calls_changed(s, run))
        return 0;
    exec_kernel *k = (exec_kernel *)calloc((size_t)p->nkernels + 1, sizeof *k);
    if (!k) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (run->kernels)
        memcpy(k, run->kernels, sizeof *k * (size_t)p->nkernels);
    free(s->captured);
    s->captured = NULL;
    for (int32_t i = 0; i < p->nrecords; i++) {
        if (p->records[i].kind != REC_CALL || !s->mode->ends_launch(s, i))
            continue;
        if (s->site_exec[i]) {
            cudaGraphExecDestroy(s->site_exec[i]);
            cudaGraphDestroy(s->site_graph[i]);
            s->site_exec[i] = NULL;
            s->site_graph[i] = NULL;
        }
        int rc = capture_site(s, i, &k[p->records[i].a], err, errlen);
        if (rc != 0) {
            free(k);
            return rc < 0 ? -1 : 0;
        }
    }
    s->captured = k;
    if (upload_sites(s, err, errlen) != 0)
        return -1;
    if (s->mode->describe)
        s->mode->describe(s);
    return 0;
}

/* ==== a run ================================================================================= */

int dev_session_busy(const dev_session *s, char *err, size_t errlen)
{
    if (!s->in_flight)
        return 0;
    snprintf(err, errlen, "a run of this executor is still in flight: wait for it first");
    return -1;
}

int dev_session_stream(dev_session *s, const exec_run *run, cudaStream_t *stream, char *err, size_t errlen)
{
    if (dev_session_busy(s, err, errlen) != 0)
        return -1;
    *stream = run->stream ? (cudaStream_t)run->stream : s->own;
    /* only the application's stream can be in its capture, never the executor's own */
    return run->stream ? dev_capturing(*stream, err, errlen) : 0;
}

/* Why a run of this executor cannot be recorded into the application's capture (err), or 0. */
static int capture_refusal(const dev_session *s, char *err, size_t errlen)
{
    int n = s->nlaunches;
    if (n == 0) return 0;
    if (s->device_launch)
        snprintf(err, errlen, "%s: %d record%s of this graph end the kernel's launch (CALLs of "
                 "kernels given as functions, products launched for cuBLAS), which the kernel serves by tail-launching "
                 "their graphs and then its own graph from the device; as a node of the application's graph it has "
                 "no graph of its own to relaunch: choose cuda-graph, or register kernels by their source and set "
                 "CFX_OPTION_LAUNCH_PRODUCT_MIN 0 (products inside the kernel)", s->mode->name, n, n == 1 ? "" : "s");
    else
        snprintf(err, errlen, "%s: %d record%s of this graph end the kernel's launch and are "
                 "served by pause and relaunch, which needs the host between launches: choose cuda-graph, or "
                 "register kernels by their source and set CFX_OPTION_LAUNCH_PRODUCT_MIN 0 (products inside the "
                 "kernel)", s->mode->name, n, n == 1 ? "" : "s");
    return -1;
}

/* A run recorded into the application's capture on `stream`: the kernel's shared state, the
 * run's start, one launch of the kernel (a plain launch: the device graph would relaunch itself
 * from the device; without the L2 window, whose refusal would end the capture), the guarded
 * result copies and the outcome's publication. With no record that ends the launch it never
 * pauses. */
int dev_session_capture(dev_session *s, const exec_run *run, int async, cudaStream_t stream, char *err,
                        size_t errlen)
{
    int rc = -1;
    if (dev_capture_check(run, async, s->mode->name, err, errlen) != 0) return -1;
    if (capture_refusal(s, err, errlen) != 0) return -1;
    if (s->mode->capture_ready && s->mode->capture_ready(s, run, err, errlen) != 0) return -1;
    s->run = *run;
    s->stream = stream;
    s->paused = 0;
    s->forced = 0;
    s->run_device = 0;
    s->hang[0] = '\0';
    s->in_capture = 1;
    if (s->mode->reset_sync(s, err, errlen) != 0 || dev_run_begin(&s->d, run, stream, err, errlen) != 0 ||
        s->mode->launch(s, -1, err, errlen) != 0 || dev_capture_end(&s->d, run, stream, err, errlen) != 0)
        goto done;
    s->captured_run = 1;
    rc = EXEC_CAPTURED;
done:
    s->in_capture = 0;
    return rc;
}

void dev_session_begin(dev_session *s, const exec_run *run)
{
    s->captured_run = 0;
    s->run = *run;
    s->stream = run->stream ? (cudaStream_t)run->stream : s->own;
    s->paused = 0;
    s->forced = 0;
    s->run_device = 0; /* the mode's to set, once the CALL sites are captured (or fell back) */
    memset(&s->out, 0, sizeof s->out);
    s->out.record = -1;
    /* no block has said where it stands yet (nothing writes them: no run is in flight) */
    s->hang[0] = '\0';
    for (int b = 0; s->progress && b < s->nblocks; b++) {
        s->progress[b].record = -1;
        s->progress[b].barrier = -1;
        s->progress[b].iterations = 0;
    }
    prof_push("run");
}

int dev_session_fail(dev_session *s)
{
    prof_pop();
    if (s->in_flight)
        cudaStreamSynchronize(s->stream);
    s->in_flight = 0;
    s->out.status = CFX_ERROR;
    return -1;
}

int dev_session_launch(dev_session *s, int async, char *err, size_t errlen)
{
    unsigned long long t;
    if (s->mode->reset_sync(s, err, errlen) != 0)
        return dev_session_fail(s);
    t = dev_host_ns();
    if (dev_run_begin(&s->d, &s->run, s->stream, err, errlen) != 0)
        return dev_session_fail(s);
    dev_host_span(&s->host, "copy inputs (enqueued)", t);
    clock_gettime(CLOCK_MONOTONIC, &s->t_launch);
    t = dev_host_ns();
    if (s->mode->launch(s, -1, err, errlen) != 0)
        return dev_session_fail(s);
    dev_host_span(&s->host, s->run_device ? "launch (device graph)" : "launch", t);
    s->in_flight = 1;
    /* device buffers: the result copy follows the launch (all of its tail launches) on the
     * stream and gates itself on the status, so an asynchronous run needs nothing from the
     * host to deliver results */
    if (s->run.device_buffers && dev_copy_results(&s->d, &s->run, s->stream, err, errlen) != 0)
        return dev_session_fail(s);
    prof_pop();
    return async ? 0 : dev_session_finish(s, err, errlen);
}

/* While a run goes on (dev_wait_stream_poll's poll): at a cancel, the hang report, from the
 * blocks' progress words while they still stand where the run left them; then the mode's. */
static int poll_run(void *user, char *err, size_t errlen)
{
    dev_session *s = (dev_session *)user;
    if (!s->hang[0] && s->progress && s->run.cancel && __atomic_load_n(s->run.cancel, __ATOMIC_RELAXED))
        exec_format_hang(s->prog, s->progress, s->nblocks, s->hang, sizeof s->hang);
    return s->mode->poll ? s->mode->poll(s, err, errlen) : 0;
}

/* Pause path: the work of record pc, on the run's stream. 0, or -1 for a CUDA failure; a CALL
 * that fails sets s->forced (the run stops with CFX_ERROR, as on the cpu executor). */
static int serve_pause(dev_session *s, int32_t pc, char *err, size_t errlen)
{
    const cfx_record *r = &s->prog->records[pc];
    if (r->kind == REC_CALL) {
        int failed = 0;
        const exec_kernel *k = s->run.kernels ? &s->run.kernels[r->a] : NULL;
        if (dev_call_kernel(&s->d, k, r, s->stream, &failed, err, errlen) != 0)
            return -1;
        if (failed) {
            s->forced = 1;
            s->forced_record = pc;
        }
        return 0;
    }
    return enqueue_product(s, pc, s->stream, err, errlen) == 0 ? 0 : -1;
}

int dev_session_finish(dev_session *s, char *err, size_t errlen)
{
    const cfx_prog *p = s->prog;
    dev_state st;
    for (;;) {
        unsigned long long t = dev_host_ns();
        if (dev_wait_stream_poll(&s->d, s->stream, s->run.cancel, poll_run, s, err, errlen) != 0)
            goto fail;
        dev_host_span(&s->host, "wait for the launch", t);
        /* on our stream, not the legacy default one, which would also wait for the
         * application's other streams */
        CUDA_TRY(cudaMemcpyAsync(&st, s->d.state, sizeof st, cudaMemcpyDeviceToHost, s->stream));
        CUDA_TRY(cudaMemcpyAsync(s->sync_host, s->sync, s->sync_bytes, cudaMemcpyDeviceToHost, s->stream));
        CUDA_TRY(cudaStreamSynchronize(s->stream));
        if (st.status != SCHED_STATUS_PAUSE)
            break;
        /* the launch ended at a record for the host: its work, then the next launch, which
         * resumes after it */
        int32_t pc = s->mode->pause_pc(s, &st);
        if (s->run_device || pc < 0 || pc >= p->nrecords || !s->mode->ends_launch(s, pc)) {
            snprintf(err, errlen, "the %s paused at record %d, which does not end a launch", s->mode->kernel, (int)pc);
            goto fail;
        }
        s->paused = 1;
        t = dev_host_ns();
        if (serve_pause(s, pc, err, errlen) != 0)
            goto fail;
        dev_host_span(&s->host, "pause: the record's work", t);
        if (s->forced)
            break;
        t = dev_host_ns();
        if (s->mode->launch(s, pc, err, errlen) != 0)
            goto fail;
        dev_host_span(&s->host, "launch", t);
    }
    s->in_flight = 0;
    if (s->run_device && st.status == CFX_ERROR && st.record >= 0 && st.record < p->nrecords &&
        s->mode->ends_launch(s, st.record) && (st.detail[0] != 0 || st.detail[1] != 0)) {
        /* the kernel could not tail-launch: a failure of the backend, not of the run */
        snprintf(err, errlen, "device graph launch failed at record %d: cudaGraphLaunch returned %s / %s",
                 (int)st.record, cudaGetErrorName((cudaError_t)st.detail[0]),
                 cudaGetErrorName((cudaError_t)st.detail[1]));
        goto fail;
    }
    if (s->mode->ended) {
        int handled = 0, rc = s->mode->ended(s, &st, &handled, err, errlen);
        if (handled)
            return rc;
        if (rc != 0)
            goto fail;
    }
    {
        unsigned long long t = dev_host_ns();
        /* device buffers: the copy enqueued after the first launch saw a pause, so it is redone */
        if (!s->forced && st.status == CFX_OK && (!s->run.device_buffers || s->paused) &&
            dev_copy_results(&s->d, &s->run, s->stream, err, errlen) != 0)
            goto fail;
        CUDA_TRY(cudaStreamSynchronize(s->stream));
        dev_host_span(&s->host, "copy results", t);
    }
    if (dev_read_outcome(&s->d, &s->out, err, errlen) != 0)
        goto fail;
    if (s->forced) {
        s->out.status = CFX_ERROR;
        s->out.record = s->forced_record;
        s->out.detail[0] = s->out.detail[1] = 0;
    }
    if ((s->run.trace || s->run.profile) && s->mode->timeline(s, err, errlen) != 0)
        goto fail;
    return 0;
fail:
    s->in_flight = 0;
    s->out.status = CFX_ERROR;
    return -1;
}

int dev_session_wait(dev_session *s, exec_outcome *out, char *err, size_t errlen)
{
    int rc = 0;
    if (s->captured_run)
        rc = dev_read_published(&s->d, &s->out, err, errlen); /* the application's last replay */
    else if (s->in_flight)
        rc = dev_session_finish(s, err, errlen);
    *out = s->out;
    return rc;
}

/* ==== the trace ============================================================================= */

int dev_session_trace_open(dev_session *s, const char *executor, unsigned long long device_base,
                           unsigned long long *clock, unsigned long long *base, char *err, size_t errlen)
{
    FILE *f = s->run.trace;
    if (dev_clock_offset(&s->host, s->stream, clock, err, errlen) != 0)
        return -1;
    *base = dev_host_track_base(&s->host, device_base);
    exec_trace_open(f, executor, s->prog, "block", s->nblocks);
    fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%d,\"args\":{\"name\":\"host\"}}",
            s->nblocks);
    dev_host_track_write(f, s->prog, &s->host, *base, s->nblocks);
    return 0;
}
