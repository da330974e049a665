/* hostexec.cu: the cuda-host executor, the baseline users have today.
 *
 * The host walks the records as the CPU executor does, but the data lives on the device: each
 * op record is one kernel launch (or one cuBLAS call), and every decision (a branch, a switch,
 * an assert, a guard) copies its operand back with cudaMemcpyAsync, synchronizes the stream
 * and decides on the host. That round trip per decision is exactly the cost cfx's other
 * executors remove, so this file keeps it plain rather than clever. The iteration budget and
 * the cancel flag are checked on the host at each TICK. Every record gets an NVTX range
 * (`BINARY add @ 12:5`), and a trace, when asked for, holds one event per record timed by
 * host clocks. A profiled run times each record on the device's clock instead (host_prof).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blas.h"
#include "dev.h"
#include "host/runtime/exec.h"
#include "launch.cuh"
#include "host/runtime/nvtx.h"
#include "host/program/program.h"

#define HOST_NAME_LEN 64
#define TRACE_MAX_EVENTS 1000000 /* as on the cpu executor: a long loop cannot fill the disk */
#define HOST_PROF_EVENTS 256     /* a profiled run's CUDA events in flight before it reads them */

/* A profiled run's clock: a CUDA event recorded on the run's stream after each record, so a
 * record's time is the device's from the previous record's event to its own: its kernels, and
 * the gap while the stream waited for the host (a decision's round trip lands on the record
 * after it, which the host could not launch sooner). Every HOST_PROF_EVENTS records the host
 * waits for the last event and adds the spans up; the last event is the next batch's first. */
typedef struct host_prof {
    cudaEvent_t ev[HOST_PROF_EVENTS + 1];
    int32_t record[HOST_PROF_EVENTS + 1]; /* the record whose work each event ends; -1: the start */
    int n;                                /* events recorded in this batch, the first included */
} host_prof;

typedef struct hostexec {
    dev_prog d;
    cudaStream_t own;       /* used when the run names no stream */
    blas_ctx *blas;
    launch_env env;
    uint8_t *readback;      /* pinned: a decision's operand or a printed value */
    size_t readback_bytes;
    int *flag;              /* device: CHECK_DIVIDE over a tensor */
    char (*names)[HOST_NAME_LEN]; /* NVTX and trace name of each record */
    host_prof *prof;        /* made at the first profiled run */
    exec_outcome out;       /* of the last run */
} hostexec;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int host_available(char *why, size_t len)
{
    return dev_available(why, len);
}

static void host_destroy(void *self)
{
    hostexec *h = (hostexec *)self;
    if (!h) return;
    dev_prog_free(&h->d);
    blas_free(h->blas);
    if (h->env.partials) cudaFree(h->env.partials);
    if (h->flag) cudaFree(h->flag);
    if (h->readback) cudaFreeHost(h->readback);
    if (h->own) cudaStreamDestroy(h->own);
    if (h->prof)
        for (int k = 0; k <= HOST_PROF_EVENTS; k++)
            if (h->prof->ev[k]) cudaEventDestroy(h->prof->ev[k]);
    free(h->prof);
    free(h->names);
    free(h);
}

static void *host_create(const cfx_prog *prog, char *err, size_t errlen)
{
    hostexec *h = (hostexec *)calloc(1, sizeof *h);
    if (!h) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    /* The readback buffer holds the largest operand a decision or a print copies back. */
    size_t rb = 64;
    for (int32_t i = 0; i < prog->nrecords; i++) {
        const cfx_record *r = &prog->records[i];
        if (r->kind == REC_PRINT && (size_t)slot_bytes(&prog->slots[r->a]) > rb)
            rb = (size_t)slot_bytes(&prog->slots[r->a]);
    }
    h->names = (char (*)[HOST_NAME_LEN])calloc(prog->nrecords > 0 ? (size_t)prog->nrecords : 1,
                                                sizeof *h->names);
    if (!h->names) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (int32_t i = 0; i < prog->nrecords; i++)
        exec_record_name(prog, i, h->names[i], HOST_NAME_LEN);
    prof_push("upload");
    if (dev_prog_upload(&h->d, prog, err, errlen) != 0) {
        prof_pop();
        goto fail;
    }
    prof_pop();
    CUDA_TRY(cudaStreamCreateWithFlags(&h->own, cudaStreamNonBlocking));
    CUDA_TRY(cudaHostAlloc((void **)&h->readback, rb, cudaHostAllocDefault));
    h->readback_bytes = rb;
    CUDA_TRY(cudaMalloc((void **)&h->flag, sizeof(int)));
    CUDA_TRY(cudaMalloc((void **)&h->env.partials, sizeof(k_acc) * LAUNCH_REDUCE_BLOCKS));
    h->blas = blas_new(err, errlen);
    if (!h->blas) goto fail;
    h->env.prog = prog;
    h->env.arena = h->d.arena;
    h->env.blas = h->blas;
    return h;
fail:
    host_destroy(h);
    return NULL;
}

/* Copies slot `s`'s bytes to the readback buffer and waits for them: one host decision. */
static int read_slot(hostexec *h, int32_t s, cudaStream_t stream, char *err, size_t errlen)
{
    const cfx_slot *slot = &h->d.prog->slots[s];
    CUDA_TRY(cudaMemcpyAsync(h->readback, h->d.arena + slot->offset, (size_t)slot_bytes(slot),
                             cudaMemcpyDeviceToHost, stream));
    CUDA_TRY(cudaStreamSynchronize(stream));
    return 0;
fail:
    return -1;
}

/* Reads a one-element integer or bool slot. */
static int read_int(hostexec *h, int32_t s, cudaStream_t stream, int64_t *v, char *err, size_t errlen)
{
    if (read_slot(h, s, stream, err, errlen) != 0) return -1;
    *v = k_load_int(h->d.prog->slots[s].dtype, h->readback);
    return 0;
}

/* CHECK_DIVIDE: 1 if any element of the divisor is 0. One element is read back directly; a
 * tensor is scanned on the device and only the flag comes back. */
static int any_zero(hostexec *h, int32_t s, cudaStream_t stream, int *zero, char *err, size_t errlen)
{
    const cfx_slot *slot = &h->d.prog->slots[s];
    if (slot->count == 1) {
        int64_t v;
        if (read_int(h, s, stream, &v, err, errlen) != 0) return -1;
        *zero = v == 0;
        return 0;
    }
    CUDA_TRY(cudaMemsetAsync(h->flag, 0, sizeof(int), stream));
    launch_any_zero_kernel<<<launch_grid(slot->count), LAUNCH_THREADS, 0, stream>>>(
        slot->dtype, h->d.arena + slot->offset, slot->count, h->flag);
    CUDA_LAUNCHED();
    CUDA_TRY(cudaMemcpyAsync(h->readback, h->flag, sizeof(int), cudaMemcpyDeviceToHost, stream));
    CUDA_TRY(cudaStreamSynchronize(stream));
    memcpy(zero, h->readback, sizeof(int));
    return 0;
fail:
    return -1;
}

/* CALL on our stream (dev_call_kernel); run->kernels may be NULL, as cpu.c allows, and then
 * the run stops with CFX_ERROR at the CALL, as on the cpu and cuda-persistent executors. */
static int call_kernel(hostexec *h, const exec_run *run, const cfx_record *r, cudaStream_t stream,
                       int *failed, char *err, size_t errlen)
{
    const exec_kernel *k = run->kernels ? &run->kernels[r->a] : NULL;
    return dev_call_kernel(&h->d, k, r, stream, failed, err, errlen);
}

static void stop(exec_outcome *out, cfx_status status, int32_t pc, int64_t d0, int64_t d1)
{
    out->status = status;
    out->record = pc;
    out->detail[0] = d0;
    out->detail[1] = d1;
}

/* The profile's clock (host_prof) at a run's start: its first event, on `stream`. */
static int prof_start(hostexec *h, cudaStream_t stream, char *err, size_t errlen)
{
    if (!h->prof) {
        h->prof = (host_prof *)calloc(1, sizeof *h->prof);
        if (!h->prof) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        for (int k = 0; k <= HOST_PROF_EVENTS; k++)
            CUDA_TRY(cudaEventCreate(&h->prof->ev[k]));
    }
    CUDA_TRY(cudaEventRecord(h->prof->ev[0], stream));
    h->prof->record[0] = -1;
    h->prof->n = 1;
    return 0;
fail:
    return -1;
}

/* Waits for the batch's last event and adds each record's span to the profile; the last event
 * starts the next batch. */
static int prof_drain(hostexec *h, exec_profile *out, char *err, size_t errlen)
{
    host_prof *q = h->prof;
    CUDA_TRY(cudaEventSynchronize(q->ev[q->n - 1]));
    for (int k = 1; k < q->n; k++) {
        float ms = 0;
        CUDA_TRY(cudaEventElapsedTime(&ms, q->ev[k - 1], q->ev[k]));
        int64_t ns = (int64_t)((double)ms * 1e6);
        out->ns[q->record[k]] += ns;
        out->count[q->record[k]]++;
        out->run_ns += ns;
    }
    {
        cudaEvent_t last = q->ev[q->n - 1];
        q->ev[q->n - 1] = q->ev[0];
        q->ev[0] = last;
        q->record[0] = q->record[q->n - 1];
        q->n = 1;
    }
    return 0;
fail:
    return -1;
}

/* After record pc's work: its event, and the batch read once full. */
static int prof_record(hostexec *h, exec_profile *out, int32_t pc, cudaStream_t stream, char *err,
                       size_t errlen)
{
    host_prof *q = h->prof;
    CUDA_TRY(cudaEventRecord(q->ev[q->n], stream));
    q->record[q->n++] = pc;
    if (q->n == HOST_PROF_EVENTS + 1)
        return prof_drain(h, out, err, errlen);
    return 0;
fail:
    return -1;
}

/* Walks the program from record 0 to HALT or a stop; fills h->out. Returns -1 only for a
 * failure of CUDA or of an application kernel. */
static int walk(hostexec *h, const exec_run *run, cudaStream_t stream, char *err, size_t errlen)
{
    const cfx_prog *p = h->d.prog;
    exec_outcome *out = &h->out;
    int32_t pc = 0;
    int64_t events = 0, dropped = 0;
    int rc = -1;
    double t0 = now_us();
    if (run->trace) exec_trace_open(run->trace, "cuda-host", p, "host", 0);
    if (run->profile && prof_start(h, stream, err, errlen) != 0) goto done; /* rc -1 */
    for (;;) {
        const cfx_record *r = &p->records[pc];
        int32_t next = pc + 1;
        int done = 0;
        double ts = run->trace ? now_us() : 0.0;
        prof_push(h->names[pc]);
        switch ((enum rec_kind)r->kind) {
        case REC_HALT:
            done = 1;
            break;
        case REC_JUMP:
            next = r->a;
            break;
        case REC_JUMP_FALSE:
        case REC_JUMP_TRUE: {
            int64_t v;
            if (read_int(h, r->a, stream, &v, err, errlen) != 0) goto fail;
            if ((v != 0) == (r->kind == REC_JUMP_TRUE)) next = r->b;
            break;
        }
        case REC_SWITCH: {
            int64_t v;
            if (read_int(h, r->a, stream, &v, err, errlen) != 0) goto fail;
            next = p->table[r->b + (v >= 0 && v < r->c ? v : r->c)];
            break;
        }
        case REC_TICK:
            if (run->cancel && __atomic_load_n(run->cancel, __ATOMIC_RELAXED)) {
                stop(out, CFX_STOP_CANCELLED, pc, 0, 0);
                done = 1;
            } else if (run->max_iters > 0 && out->iterations >= run->max_iters) {
                stop(out, CFX_STOP_LIMIT, pc, run->max_iters, 0);
                done = 1;
            } else {
                out->iterations++;
            }
            break;
        case REC_ASSERT: {
            int64_t v;
            if (read_int(h, r->a, stream, &v, err, errlen) != 0) goto fail;
            if (!v) {
                stop(out, CFX_STOP_ASSERT, pc, 0, 0);
                done = 1;
            }
            break;
        }
        case REC_PRINT:
            if (read_slot(h, r->a, stream, err, errlen) != 0) goto fail;
            if (run->print) run->print(run->print_user, p, pc, h->readback);
            break;
        case REC_CHECK_INDEX: {
            int64_t v;
            if (read_int(h, r->a, stream, &v, err, errlen) != 0) goto fail;
            if (v < -(int64_t)r->b || v >= (int64_t)r->b) {
                stop(out, CFX_STOP_INDEX, pc, v, r->b);
                done = 1;
            }
            break;
        }
        case REC_CHECK_BOUND: {
            int64_t va, vb;
            if (read_int(h, r->a, stream, &va, err, errlen) != 0) goto fail;
            if (read_int(h, r->b, stream, &vb, err, errlen) != 0) goto fail;
            if (!k_bound_ok(r->d, va, vb)) {
                stop(out, CFX_STOP_INDEX, pc, va, vb);
                done = 1;
            }
            break;
        }
        case REC_CHECK_DIVIDE: {
            int zero = 0;
            if (any_zero(h, r->a, stream, &zero, err, errlen) != 0) goto fail;
            if (zero) {
                stop(out, CFX_STOP_DIVIDE, pc, 0, 0);
                done = 1;
            }
            break;
        }
        case REC_CHECK_STEP: {
            int64_t v;
            if (read_int(h, r->a, stream, &v, err, errlen) != 0) goto fail;
            if (v == 0) {
                stop(out, CFX_STOP_VALUE, pc, 0, 0);
                done = 1;
            }
            break;
        }
        case REC_CALL: {
            int failed = 0;
            if (call_kernel(h, run, r, stream, &failed, err, errlen) != 0) goto fail;
            if (failed) {
                stop(out, CFX_ERROR, pc, 0, 0);
                done = 1;
            }
            break;
        }
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
            if (launch_record(&h->env, r, stream, err, errlen) != 0) goto fail;
            break;
        }
        if (run->profile && prof_record(h, run->profile, pc, stream, err, errlen) != 0) goto fail;
        prof_pop();
        if (run->trace) {
            double te = now_us();
            if (events < TRACE_MAX_EVENTS)
                exec_trace_event(run->trace, p, pc, h->names[pc], ts - t0, te - ts, 0);
            if (events < TRACE_MAX_EVENTS) events++;
            else dropped++;
        }
        if (done) break;
        pc = next;
    }
    if (run->profile && prof_drain(h, run->profile, err, errlen) != 0) goto done; /* rc -1 */
    rc = 0;
    goto done;
fail:
    prof_pop();
done:
    if (run->trace) {
        fprintf(run->trace,
                "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"executor\":\"cuda-host\",\"graph\":\"%s\","
                "\"events\":%lld,\"events_dropped\":%lld,\"event_cap\":%d}}\n",
                p->name ? p->name : "", (long long)events, (long long)dropped, TRACE_MAX_EVENTS);
        fflush(run->trace);
    }
    return rc;
}

/* The host decides every branch, so a run is synchronous whatever `async` asks: it has ended
 * when run() returns, and wait() only reports it. */
static int host_run(void *self, const exec_run *run, int async, char *err, size_t errlen)
{
    hostexec *h = (hostexec *)self;
    cudaStream_t stream = run->stream ? (cudaStream_t)run->stream : h->own;
    int capturing = run->stream ? dev_capturing(stream, err, errlen) : 0; /* never the executor's own stream */
    if (capturing < 0) return -1;
    if (capturing) {
        snprintf(err, errlen, "cuda-host cannot run under stream capture: it copies each decision's predicate back "
                 "to the host and waits for it, which a captured graph cannot do; choose cuda-graph or "
                 "cuda-persistent to run inside the application's graph");
        return -1;
    }
    memset(&h->out, 0, sizeof h->out);
    h->out.status = CFX_OK;
    h->out.record = -1;
    prof_push("run");
    if (dev_run_begin(&h->d, run, stream, err, errlen) != 0) goto fail;
    if (walk(h, run, stream, err, errlen) != 0) goto fail;
    /* A stopped run writes no results: the copy is not even enqueued. The device state stays
     * ok (this executor decides stops on the host), so dev_copy_results copies. */
    if (h->out.status == CFX_OK) {
        CUDA_TRY(cudaStreamSynchronize(stream));
        if (dev_copy_results(&h->d, run, stream, err, errlen) != 0) goto fail;
    }
    CUDA_TRY(cudaStreamSynchronize(stream));
    prof_pop();
    return 0;
fail:
    prof_pop();
    h->out.status = CFX_ERROR;
    return -1;
}

static int host_wait(void *self, exec_outcome *out, char *err, size_t errlen)
{
    hostexec *h = (hostexec *)self;
    *out = h->out;
    return 0;
}

const exec_ops dev_host_ops = {
    CFX_BACKEND_CUDA_HOST, host_available, host_create, host_run, host_wait, host_destroy, NULL,
};
