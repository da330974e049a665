/* persistent.cu: the cuda-persistent executor, the point of cfx. One kernel launch walks the
 * program's records on the device; no predicate goes back to the host.
 *
 * The grid is as large as the device keeps resident at once (the occupancy API times the
 * multiprocessors), so every block is running and a grid barrier of our own can wait for
 * all of them. Every block walks every record with a `switch`, like the CPU executor; how
 * the work and the barriers are placed is device/scheduler.h's business (read its top comment
 * first): split records give each block a share of the elements and each thread a strided
 * part of that share, one-element records run redundantly in every block on private copies
 * (dynamic shared memory), small loops run on block 0 alone.
 *
 * This file is the host side: the plan's upload, the grid and the launch, the pauses, the
 * printed lines and the trace. The device side (the barrier, the dispatch loop, the
 * kernel) is persistent_kernel.cuh.
 *
 * Ending a launch early ("pause"): a CALL of an application kernel, and a PRINT when the
 * device's print buffer is full, set the status to an internal PAUSE value and end the
 * launch at that record, every block at the same place. The host then runs the kernel's
 * cuda_fn on the stream (or hands the printed lines to the print callback) and launches
 * again at the next record. So a graph without application kernels is one launch per run,
 * and a graph with them costs one host round trip per CALL executed; no printed line is
 * ever lost. An asynchronous run enqueues the first launch; cfx_wait finishes any pauses.
 *
 * Results are copied only when the run ends ok (dev_copy_results gates on the state).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dev.h"
#include "exec.h"
#include "kernels.h"
#include "nvtx.h"
#include "persistent_kernel.cuh"
#include "program.h"
#include "scheduler.h"

/* ==== host side ============================================================================ */

typedef struct persist {
    dev_prog d;
    sched_plan plan;
    cudaStream_t own;
    uint8_t *flags;             /* device copies of the plan */
    int32_t *region_exit;
    int32_t *priv_offset;
    uint8_t *priv_global;
    uint8_t *publish;
    k_acc *partials;
    persist_sync *sync;
    uint8_t *print_buf;
    uint8_t *print_host;        /* pinned */
    uint32_t print_cap;
    persist_event *trace;       /* allocated at the first traced run */
    uint32_t *trace_count;
    int nblocks;
    size_t smem;
    int cooperative;            /* the device supports cooperative launches */
    /* the run in flight */
    exec_run run;
    cudaStream_t stream;
    int in_flight;
    int paused;                 /* the run ended a launch early at least once */
    int forced;                 /* a CALL failed: the outcome is CFX_ERROR at forced_record */
    int32_t forced_record;
    exec_outcome out;
} persist;

static int persist_available(char *why, size_t len)
{
    return dev_available(why, len);
}

static void persist_destroy(void *self)
{
    persist *x = (persist *)self;
    if (!x)
        return;
    if (x->in_flight && x->stream)
        cudaStreamSynchronize(x->stream);
    dev_prog_free(&x->d);
    sched_plan_free(&x->plan);
    if (x->own) cudaStreamDestroy(x->own);
    if (x->flags) cudaFree(x->flags);
    if (x->region_exit) cudaFree(x->region_exit);
    if (x->priv_offset) cudaFree(x->priv_offset);
    if (x->priv_global) cudaFree(x->priv_global);
    if (x->publish) cudaFree(x->publish);
    if (x->partials) cudaFree(x->partials);
    if (x->sync) cudaFree(x->sync);
    if (x->print_buf) cudaFree(x->print_buf);
    if (x->print_host) cudaFreeHost(x->print_host);
    if (x->trace) cudaFree(x->trace);
    if (x->trace_count) cudaFree(x->trace_count);
    free(x);
}

static void *persist_create(const cfx_prog *prog, char *err, size_t errlen)
{
    persist *x = (persist *)calloc(1, sizeof *x);
    int per_sm = 0;
    size_t max_print = 0;
    size_t pub_bytes;
    if (!x) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    prof_push("upload");
    if (sched_plan_build(prog, &x->plan, err, errlen) != 0)
        goto fail;
    if (dev_prog_upload(&x->d, prog, err, errlen) != 0)
        goto fail;
    CUDA_TRY(cudaStreamCreateWithFlags(&x->own, cudaStreamNonBlocking));

    CUDA_TRY(cudaMalloc((void **)&x->flags, (size_t)prog->nrecords + 1));
    CUDA_TRY(cudaMemcpy(x->flags, x->plan.flags, (size_t)prog->nrecords, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMalloc((void **)&x->region_exit, sizeof(int32_t) * ((size_t)prog->nrecords + 1)));
    CUDA_TRY(cudaMemcpy(x->region_exit, x->plan.region_exit, sizeof(int32_t) * (size_t)prog->nrecords,
                        cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMalloc((void **)&x->priv_offset, sizeof(int32_t) * ((size_t)prog->nslots + 1)));
    if (prog->nslots > 0)
        CUDA_TRY(cudaMemcpy(x->priv_offset, x->plan.priv_offset, sizeof(int32_t) * (size_t)prog->nslots,
                            cudaMemcpyHostToDevice));

    /* The grid: as many blocks as stay resident together, so the barrier cannot wait for a
     * block that is not running. */
    x->smem = x->plan.priv_bytes <= P_SHARED_PRIV_MAX ? (size_t)x->plan.priv_bytes : 0;
    CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, persist_kernel, P_THREADS, x->smem));
    if (per_sm < 1) {
        snprintf(err, errlen, "the persistent kernel does not fit on a multiprocessor of this device");
        goto fail;
    }
    x->nblocks = x->d.sms * (per_sm < P_MAX_BLOCKS_PER_SM ? per_sm : P_MAX_BLOCKS_PER_SM);
    CUDA_TRY(cudaDeviceGetAttribute(&x->cooperative, cudaDevAttrCooperativeLaunch, x->d.device));
    if (x->smem == 0 && x->plan.priv_bytes > 0)
        CUDA_TRY(cudaMalloc((void **)&x->priv_global, (size_t)x->nblocks * (size_t)x->plan.priv_bytes));
    pub_bytes = 2 * (size_t)(x->plan.priv_bytes > 0 ? x->plan.priv_bytes : 16);
    CUDA_TRY(cudaMalloc((void **)&x->publish, pub_bytes));
    CUDA_TRY(cudaMalloc((void **)&x->partials, 2 * sizeof(k_acc) * (size_t)x->nblocks));
    CUDA_TRY(cudaMalloc((void **)&x->sync, sizeof(persist_sync)));

    /* The print buffer holds many lines, and always at least the biggest single one. */
    for (int32_t i = 0; i < prog->nrecords; i++)
        if (prog->records[i].kind == REC_PRINT) {
            size_t b = (size_t)slot_bytes(&prog->slots[prog->records[i].a]);
            max_print = b + 1 > max_print ? b + 1 : max_print;
        }
    if (max_print > 0) {
        size_t cap = 2 * (sizeof(persist_print) + (max_print + 7) / 8 * 8);
        if (cap > (size_t)UINT32_MAX / 2) {
            snprintf(err, errlen, "a printed value is too big for the persistent executor");
            goto fail;
        }
        x->print_cap = cap > P_PRINT_BYTES ? (uint32_t)cap : P_PRINT_BYTES;
    } else {
        x->print_cap = 16;
    }
    CUDA_TRY(cudaMalloc((void **)&x->print_buf, x->print_cap));
    CUDA_TRY(cudaHostAlloc((void **)&x->print_host, x->print_cap, cudaHostAllocDefault));
    /* The plan's cudaMemcpy calls above are from pageable memory: they may return before the
     * bytes reach the device, and they are ordered on the legacy default stream, which a
     * run on a non-blocking stream (our own, or an application's) does not wait for. */
    CUDA_TRY(cudaStreamSynchronize(0));
    prof_pop();
    return x;
fail:
    prof_pop();
    persist_destroy(x);
    return NULL;
}

static int launch(persist *x, int32_t pc, int32_t region, char *err, size_t errlen)
{
    persist_args a;
    memset(&a, 0, sizeof a);
    a.records = x->d.records;
    a.slots = x->d.slots;
    a.table = x->d.table;
    a.arena = x->d.arena;
    a.flags = x->flags;
    a.region_exit = x->region_exit;
    a.priv_offset = x->priv_offset;
    a.nslots = x->d.prog->nslots;
    a.priv_bytes = x->plan.priv_bytes;
    a.priv_shared = x->priv_global == NULL;
    a.priv_global = x->priv_global;
    a.publish = x->publish;
    a.partials = x->partials;
    a.state = x->d.state;
    a.control = x->d.control_dev;
    a.sync = x->sync;
    a.print_buf = x->print_buf;
    a.print_cap = x->print_cap;
    a.trace = x->run.trace ? x->trace : NULL;
    a.trace_cap = P_TRACE_PER_BLOCK;
    a.trace_count = x->trace_count;
    a.start_pc = pc;
    a.start_region = region;
    a.max_iters = x->run.max_iters;
    /* A cooperative launch makes the hardware start every block at once, so the grid barrier
     * never waits for a block that another application kernel keeps off the device. The
     * barrier itself stays ours (not grid.sync()): the kernel launches no child work today, and
     * if it ever does it must drop the cooperative launch, which forbids child launches, and
     * keep this barrier. A device without cooperative launches gets the ordinary launch, where
     * the occupancy-sized grid is resident as long as nothing else holds the multiprocessors. */
    if (x->cooperative) {
        void *params[] = {&a};
        CUDA_TRY(cudaLaunchCooperativeKernel((const void *)persist_kernel, dim3(x->nblocks), dim3(P_THREADS),
                                             params, x->smem, x->stream));
    } else {
        persist_kernel<<<x->nblocks, P_THREADS, x->smem, x->stream>>>(a);
        CUDA_LAUNCHED();
    }
    return 0;
fail:
    return -1;
}

/* Hands the print entries of the buffer to the callback, in program order. */
static int drain_prints(persist *x, uint32_t used, char *err, size_t errlen)
{
    if (used == 0)
        return 0;
    if (used > x->print_cap) {
        snprintf(err, errlen, "the device reported %u bytes of printed values in a %u-byte buffer",
                 used, x->print_cap);
        return -1;
    }
    CUDA_TRY(cudaMemcpyAsync(x->print_host, x->print_buf, used, cudaMemcpyDeviceToHost, x->stream));
    CUDA_TRY(cudaStreamSynchronize(x->stream));
    for (uint32_t off = 0; off + sizeof(persist_print) <= used;) {
        persist_print h;
        memcpy(&h, x->print_host + off, sizeof h);
        if (h.record < 0 || h.record >= x->d.prog->nrecords || h.bytes < 0) {
            snprintf(err, errlen, "a corrupt print entry at byte %u of the device's buffer", off);
            return -1;
        }
        if (x->run.print)
            x->run.print(x->run.print_user, x->d.prog, h.record, x->print_host + off + sizeof h);
        off += (uint32_t)sizeof h + ((uint32_t)h.bytes + 7u) / 8u * 8u;
    }
    return 0;
fail:
    return -1;
}

/* CALL on the run's stream (dev_call_kernel); no kernel or a failing one stops the run with
 * CFX_ERROR, as on the cpu executor. */
static int call_kernel(persist *x, const cfx_record *r, int *failed, char *err, size_t errlen)
{
    const exec_kernel *k = x->run.kernels ? &x->run.kernels[r->a] : NULL;
    return dev_call_kernel(&x->d, k, r, x->stream, failed, err, errlen);
}

/* Chrome trace of the run: one event per record per block (tid = block), like the cpu
 * executor's. */
static int write_trace(persist *x, char *err, size_t errlen)
{
    FILE *f = x->run.trace;
    const cfx_prog *p = x->d.prog;
    size_t nb = (size_t)x->nblocks;
    uint32_t *counts = (uint32_t *)malloc(sizeof(uint32_t) * nb);
    persist_event *ev = (persist_event *)malloc(sizeof(persist_event) * nb * P_TRACE_PER_BLOCK);
    unsigned long long base = ~0ull;
    long long kept = 0, dropped = 0;
    int first = 1;
    if (!counts || !ev) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    /* on the run's stream: a cudaMemcpy on the legacy default stream would also wait for
     * the application's other blocking streams */
    CUDA_TRY(cudaMemcpyAsync(counts, x->trace_count, sizeof(uint32_t) * nb, cudaMemcpyDeviceToHost,
                             x->stream));
    CUDA_TRY(cudaMemcpyAsync(ev, x->trace, sizeof(persist_event) * nb * P_TRACE_PER_BLOCK,
                             cudaMemcpyDeviceToHost, x->stream));
    CUDA_TRY(cudaStreamSynchronize(x->stream));
    for (size_t b = 0; b < nb; b++)
        for (uint32_t i = 0; i < counts[b] && i < P_TRACE_PER_BLOCK; i++)
            if (ev[b * P_TRACE_PER_BLOCK + i].t0 < base)
                base = ev[b * P_TRACE_PER_BLOCK + i].t0;
    fputs("{\"traceEvents\":[", f);
    for (size_t b = 0; b < nb; b++) {
        uint32_t n = counts[b] < P_TRACE_PER_BLOCK ? counts[b] : P_TRACE_PER_BLOCK;
        dropped += counts[b] - n;
        for (uint32_t i = 0; i < n; i++) {
            const persist_event *e = &ev[b * P_TRACE_PER_BLOCK + i];
            const cfx_record *r = &p->records[e->record];
            int has_op = r->kind == REC_UNARY || r->kind == REC_BINARY || r->kind == REC_REDUCE;
            fprintf(f, "%s\n{\"name\":\"%s%s%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":0,\"tid\":%d}",
                    first ? "" : ",", rec_names[r->kind], has_op ? " " : "",
                    has_op ? op_name(r->op) : "", (double)(e->t0 - base) / 1e3,
                    (double)(e->t1 - e->t0) / 1e3, (int)b);
            first = 0;
            kept++;
        }
    }
    fprintf(f,
            "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"executor\":\"cuda-persistent\",\"graph\":\"%s\","
            "\"events\":%lld,\"events_dropped\":%lld,\"event_cap\":%d,\"blocks\":%d}}\n",
            p->name ? p->name : "", kept, dropped, P_TRACE_PER_BLOCK, x->nblocks);
    fflush(f);
    free(counts);
    free(ev);
    return 0;
fail:
    free(counts);
    free(ev);
    return -1;
}

/* Waits for the launch in flight, serves its pauses (CALLs, full print buffer) with new
 * launches, copies the results and reads the outcome. */
static int finish(persist *x, char *err, size_t errlen)
{
    const cfx_prog *p = x->d.prog;
    dev_state st;
    persist_sync sy;
    for (;;) {
        if (dev_wait_stream(&x->d, x->stream, x->run.cancel, err, errlen) != 0)
            goto fail;
        /* on our stream, not the legacy default one, which would also wait for the
         * application's other streams */
        CUDA_TRY(cudaMemcpyAsync(&st, x->d.state, sizeof st, cudaMemcpyDeviceToHost, x->stream));
        CUDA_TRY(cudaMemcpyAsync(&sy, x->sync, sizeof sy, cudaMemcpyDeviceToHost, x->stream));
        CUDA_TRY(cudaStreamSynchronize(x->stream));
        if (drain_prints(x, sy.print_used, err, errlen) != 0)
            goto fail;
        if (st.status != P_STATUS_PAUSE)
            break;
        x->paused = 1;
        int32_t pc = sy.resume_pc, region = sy.resume_region;
        if (pc < 0 || pc >= p->nrecords) {
            snprintf(err, errlen, "the device paused at record %d, outside the program", (int)pc);
            goto fail;
        }
        if (p->records[pc].kind == REC_CALL) {
            int failed = 0;
            if (call_kernel(x, &p->records[pc], &failed, err, errlen) != 0)
                goto fail;
            if (failed) {
                x->forced = 1;
                x->forced_record = pc;
                break;
            }
            pc++;
        }
        /* a fresh barrier, an empty print buffer, the state running again */
        CUDA_TRY(cudaMemsetAsync(x->sync, 0, sizeof(persist_sync), x->stream));
        persist_resume<<<1, 1, 0, x->stream>>>(x->d.state);
        CUDA_LAUNCHED();
        if (launch(x, pc, region, err, errlen) != 0)
            goto fail;
    }
    if (!x->forced && st.status == CFX_OK) {
        /* device buffers: the copy enqueued after the first launch saw a pause, redo it */
        if (!x->run.device_buffers || x->paused)
            if (dev_copy_results(&x->d, &x->run, x->stream, err, errlen) != 0)
                goto fail;
    }
    CUDA_TRY(cudaStreamSynchronize(x->stream));
    if (dev_read_outcome(&x->d, &x->out, err, errlen) != 0)
        goto fail;
    if (x->forced) {
        x->out.status = CFX_ERROR;
        x->out.record = x->forced_record;
        x->out.detail[0] = x->out.detail[1] = 0;
    }
    if (x->run.trace && write_trace(x, err, errlen) != 0)
        goto fail;
    x->in_flight = 0;
    return 0;
fail:
    x->in_flight = 0;
    x->out.status = CFX_ERROR;
    return -1;
}

static int persist_run(void *self, const exec_run *run, int async, char *err, size_t errlen)
{
    persist *x = (persist *)self;
    if (x->in_flight) {
        snprintf(err, errlen, "a run of this executor is still in flight: wait for it first");
        return -1;
    }
    x->run = *run;
    x->stream = run->stream ? (cudaStream_t)run->stream : x->own;
    x->paused = 0;
    x->forced = 0;
    memset(&x->out, 0, sizeof x->out);
    x->out.record = -1;
    prof_push("run");
    if (run->trace && !x->trace) {
        CUDA_TRY(cudaMalloc((void **)&x->trace, sizeof(persist_event) * (size_t)x->nblocks * P_TRACE_PER_BLOCK));
        CUDA_TRY(cudaMalloc((void **)&x->trace_count, sizeof(uint32_t) * (size_t)x->nblocks));
    }
    if (run->trace)
        CUDA_TRY(cudaMemsetAsync(x->trace_count, 0, sizeof(uint32_t) * (size_t)x->nblocks, x->stream));
    CUDA_TRY(cudaMemsetAsync(x->sync, 0, sizeof(persist_sync), x->stream));
    if (dev_run_begin(&x->d, run, x->stream, err, errlen) != 0)
        goto fail;
    if (launch(x, 0, -1, err, errlen) != 0)
        goto fail;
    x->in_flight = 1;
    /* device buffers: the result copy follows the launch on the stream and gates itself on
     * the status, so an asynchronous run needs nothing from the host to deliver results */
    if (run->device_buffers && dev_copy_results(&x->d, run, x->stream, err, errlen) != 0)
        goto fail;
    prof_pop();
    if (!async)
        return finish(x, err, errlen);
    return 0;
fail:
    prof_pop();
    if (x->in_flight)
        cudaStreamSynchronize(x->stream);
    x->in_flight = 0;
    x->out.status = CFX_ERROR;
    return -1;
}

static int persist_wait(void *self, exec_outcome *out, char *err, size_t errlen)
{
    persist *x = (persist *)self;
    int rc = 0;
    if (x->in_flight)
        rc = finish(x, err, errlen);
    *out = x->out;
    return rc;
}

const exec_ops dev_persistent_ops = {
    CFX_BACKEND_CUDA_PERSISTENT, persist_available, persist_create, persist_run, persist_wait,
    persist_destroy,
};
