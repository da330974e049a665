/* interp.cu: the cuda-persistent executor, the point of cfx. One kernel walks the
 * program's records on the device; no predicate goes back to the host.
 *
 * The grid is as large as the device keeps resident at once (the occupancy API times the
 * multiprocessors), so every block is running and a grid barrier of our own can wait for
 * all of them. Every block walks every record with a `switch`, like the CPU executor; how
 * the work and the barriers are placed is the plan's business (host/gen/plan.h: read its top
 * comment first; device/scheduler.h walks it): split records give each block a share of the
 * elements and each thread a strided part of that share, one-element records run redundantly
 * in every block on private copies (dynamic shared memory), small loops run on block 0 alone.
 *
 * What the kernel does not do itself ends the launch at its record (SCHED_F_LAUNCH): a CALL
 * of an application kernel, and a real product of SCHED_LAUNCH_PRODUCT_MIN multiply-adds or
 * more (cuBLAS). The rest, matrix-vector products included, runs inline. Two paths reach
 * such a record's work, and cfx_exec_backend_detail says which one an executor takes; the
 * session both modes share runs them (session.cu; this file supplies the interpreter's
 * launch, graph, run state, print ring and timeline):
 *
 * - Device graph launch (interp_launch.cu). The kernel is the one node of a graph
 *   instantiated for device launch. Each such record's work is captured once into a
 *   device-launchable graph of its own: a product's cuBLAS call at creation, a CALL's
 *   cuda_fn at the first run (the kernels are known then; the capture contract is
 *   cuda-graph's: the function enqueues work on the stream it is given and does nothing
 *   else, and is called once per capture, not once per call). At the record block 0
 *   tail-launches that graph and then the kernel's own graph, which starts again at the next
 *   record with the state the device kept. The host launches the graph once and takes no
 *   part until the run has ended: cfx_run_async returns at once.
 * - Pause and relaunch (persist_kernel<0>, launched directly, cooperatively where the
 *   device allows it): the launch ends with an internal pause status, the host runs the
 *   record's work on the stream (the cuda_fn, or the cuBLAS product) and launches again at
 *   the next record; an asynchronous run is served by cfx_wait. The fallback where device
 *   graph launch is not available (the probe in interp_launch.cu fails, a site does not
 *   capture or instantiate for device launch, CFX_OPTION_DEVICE_LAUNCH set to 0 with
 *   cfx_set_option). A traced run takes the path an untraced one would, through a second
 *   graph of the kernel (made at the first traced run) whose arguments carry the trace buffers.
 *
 * One-block loops run as micro-ops (device/microops.h), translated here at creation and kept
 * in shared memory beside the private copies; CFX_OPTION_MICROOPS set to 0 with
 * cfx_set_option keeps them out (every record interpreted, as before). A traced run keeps
 * them: its trace shows their whole stretch as one span ("micro-ops"), and its profile counts
 * their iterations; with micro-ops off it shows every record.
 *
 * Prints never end a launch: block 0 puts each printed value into a ring in host-mapped
 * memory and the host takes the entries, in order, while it waits for the run (cfx_run, or
 * cfx_wait for an asynchronous run). Only an asynchronous run that prints more than the ring
 * holds before cfx_wait is called waits, on the device, for that call.
 *
 * Results are copied only when the run ends ok (dev_copy_results gates on the state).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blas.h"
#include "dev.h"
#include "host/runtime/exec.h"
#include "kernels/kernels.h"
#include "microops.h"
#include "host/runtime/nvtx.h"
#include "interp_kernel.cuh"
#include "host/program/program.h"
#include "scheduler.h"
#include "session.h"

/* ==== host side ============================================================================ */


typedef struct persist {
    dev_session s;              /* first: the session's callbacks cast it back (session.h) */
    sched_plan plan;
    uint8_t *flags;             /* device copies of the plan */
    int32_t *region_exit;
    int32_t *priv_offset;
    int32_t *replicas;
    int32_t *batch_next;        /* the plan's batches */
    int32_t *batch_head;
    uint8_t *priv_global;
    uint8_t *publish;
    k_acc *partials;
    persist_sync *sync;
    persist_sync sync_host;     /* sync as the last launch left it */
    persist_ring *ring;         /* pinned, mapped; ring_dev is its device address */
    persist_ring *ring_dev;
    uint8_t *ring_data;         /* pinned, mapped, ring_cap bytes */
    uint8_t *ring_data_dev;
    uint32_t ring_cap;
    unsigned long long ring_tail; /* bytes the host has taken in this run */
    persist_event *trace;       /* allocated at the first traced run */
    uint32_t *trace_count;
    unsigned long long *prof;   /* persist_args.prof, allocated with the trace buffers: a traced
                                 * run's kernel always adds to it, a profiled run reads it */
    size_t smem;
    /* micro-ops */
    mop_prog mops;              /* translated at creation; ncode 0: none */
    char why_no_mops[192];      /* why there are none */
    uint8_t *mop_image;         /* device copies of mops.image and mops.entry */
    int32_t *mop_entry;
    /* device graph launch (the session's site graphs and main_exec; its trace_exec is the same
     * graph for traced runs, made at the first one: its kernel's arguments carry the trace
     * buffers, so an untraced run's kernel has no trace to test for) */
    int coop_node;              /* main_exec's node is cooperative */
    int trace_graph_failed;     /* the traced graph could not be made: traced runs take the pause path */
    char detail[1024];
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
    if (x->s.in_flight && x->s.stream)
        cudaStreamSynchronize(x->s.stream);
    dev_session_free(&x->s);
    sched_plan_free(&x->plan);
    mop_prog_free(&x->mops);
    if (x->flags) cudaFree(x->flags);
    if (x->region_exit) cudaFree(x->region_exit);
    if (x->priv_offset) cudaFree(x->priv_offset);
    if (x->replicas) cudaFree(x->replicas);
    if (x->batch_next) cudaFree(x->batch_next);
    if (x->batch_head) cudaFree(x->batch_head);
    if (x->mop_image) cudaFree(x->mop_image);
    if (x->mop_entry) cudaFree(x->mop_entry);
    if (x->priv_global) cudaFree(x->priv_global);
    if (x->publish) cudaFree(x->publish);
    if (x->partials) cudaFree(x->partials);
    if (x->sync) cudaFree(x->sync);
    if (x->ring) cudaFreeHost(x->ring);
    if (x->ring_data) cudaFreeHost(x->ring_data);
    if (x->trace) cudaFree(x->trace);
    if (x->prof) cudaFree(x->prof);
    if (x->trace_count) cudaFree(x->trace_count);
    free(x);
}

/* The kernel's arguments: the same for every launch of a run, and for the device-launched
 * graph fixed at its creation (where a run starts is in persist_sync). */
static persist_args kernel_args(const persist *x, int traced)
{
    persist_args a;
    memset(&a, 0, sizeof a);
    a.records = x->s.d.records;
    a.slots = x->s.d.slots;
    a.table = x->s.d.table;
    a.arena = x->s.d.arena;
    a.flags = x->flags;
    a.region_exit = x->region_exit;
    a.priv_offset = x->priv_offset;
    a.replicas = x->replicas;
    a.batch_next = x->batch_next;
    a.batch_head = x->batch_head;
    a.nreplicas = x->plan.nreplicas;
    a.nslots = x->s.prog->nslots;
    a.priv_bytes = x->plan.priv_bytes;
    a.priv_shared = x->priv_global == NULL;
    a.priv_global = x->priv_global;
    a.publish = x->publish;
    a.partials = x->partials;
    a.state = x->s.d.state;
    a.control = x->s.d.control_dev;
    a.sync = x->sync;
    a.ring = x->ring_dev;
    a.ring_data = x->ring_data_dev;
    a.progress = x->s.progress_dev;
    a.ring_cap = x->ring_cap;
    a.site_exec = x->s.site_exec_dev;
    if (x->mops.ncode > 0) { /* a traced run too: it takes the path an untraced one takes */
        a.mop_image = x->mop_image;
        a.mop_image_bytes = x->mops.image_bytes;
        a.mop_code_offset = x->mops.code_offset;
        a.mop_entry = x->mop_entry;
    }
    a.trace = traced ? x->trace : NULL;
    a.trace_cap = P_TRACE_PER_BLOCK;
    a.trace_count = x->trace_count;
    a.prof = traced ? x->prof : NULL;
    return a;
}

/* One line for cfx_exec_backend_detail. */
static void describe(persist *x)
{
    char launches[256], mops[320];
    const mop_prog *mp = &x->mops;
    if (mp->ncode > 0)
        snprintf(mops, sizeof mops,
                 "; %d one-block loop%s run%s as %d micro-ops from shared memory (%d record%s left to the "
                 "interpreter)",
                 (int)mp->nregions, mp->nregions == 1 ? "" : "s", mp->nregions == 1 ? "s" : "", (int)mp->ncode,
                 (int)mp->ninterp, mp->ninterp == 1 ? "" : "s");
    else
        snprintf(mops, sizeof mops, "; no micro-ops: %s", x->why_no_mops);
    const sched_plan *pl = &x->plan;
    char l2[96];
    dev_l2_describe(&x->s.d, l2, sizeof l2);
    if (x->s.product_min > 0)
        snprintf(launches, sizeof launches, "%d CALL site%s and %d product%s of at least %lld multiply-adds (cuBLAS)",
                 (int)pl->nlaunch_calls, pl->nlaunch_calls == 1 ? "" : "s", (int)pl->nlaunch_products,
                 pl->nlaunch_products == 1 ? "" : "s", (long long)x->s.product_min);
    else
        snprintf(launches, sizeof launches, "%d CALL site%s (every product inline%s)", (int)pl->nlaunch_calls,
                 pl->nlaunch_calls == 1 ? "" : "s", x->s.blas ? "" : ": cuBLAS did not start");
    if (x->s.device_launch)
        snprintf(x->detail, sizeof x->detail,
                 "device graph launch: one kernel of %d blocks x %d threads, the %s node of a device graph, "
                 "tail-launches the pre-captured graphs of %s%s, then itself at the next record; the rest "
                 "runs inline; prints go to a host-mapped ring%s%s",
                 x->s.nblocks, P_THREADS, x->coop_node ? "cooperative" : "plain", launches,
                 pl->nlaunch_calls > 0 && !x->s.captured ? " (CALLs are captured at the first run)" : "", mops, l2);
    else
        snprintf(x->detail, sizeof x->detail,
                 "pause and relaunch (%s): one kernel of %d blocks x %d threads ends its launch at each of %s, "
                 "the host runs that work and launches again; the rest runs inline; prints go to a "
                 "host-mapped ring%s%s",
                 x->s.why_pause, x->s.nblocks, P_THREADS, launches, mops, l2);
}

static const char *persist_detail(void *self)
{
    return ((persist *)self)->detail;
}

/* The hang report of the last run, taken when it was cancelled ("" otherwise). */
static const char *persist_hang(void *self)
{
    return ((persist *)self)->s.hang;
}

/* What the session asks of the interpreter (session.h); defined with the kernel, below. */
static int persist_ends_launch(const dev_session *s, int32_t i);
static int persist_device_graph(dev_session *s, int coop, char *why, size_t len);
static int persist_reset_sync(dev_session *s, char *err, size_t errlen);
static int persist_launch(dev_session *s, int32_t pc, char *err, size_t errlen);
static int32_t persist_pause_pc(const dev_session *s, const dev_state *st);
static int drain_ring(dev_session *s, char *err, size_t errlen);
static int persist_timeline(dev_session *s, char *err, size_t errlen);
static int persist_capture_ready(dev_session *s, const exec_run *run, char *err, size_t errlen);
static void persist_describe(dev_session *s);

static const dev_session_mode persist_mode = {
    "cuda-persistent (interpreter)", "device", persist_ends_launch, persist_device_graph, persist_reset_sync,
    persist_launch, persist_pause_pc, drain_ring, NULL, persist_timeline, persist_capture_ready,
    persist_describe,
};

void *persist_create_opts(const cfx_prog *prog, const persist_opts *o, char *err, size_t errlen)
{
    persist *x = (persist *)calloc(1, sizeof *x);
    int per_sm = 0, per_sm_launch = 0;
    size_t max_print = 0, ring_cap;
    size_t pub_bytes;
    sched_opts opts;
    char why[256];
    if (!x) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    x->s.mode = &persist_mode;
    prof_push("upload");
    /* cuBLAS for the big products; without it they run inline like the others */
    x->s.blas = blas_new(why, sizeof why);
    if (!x->s.blas)
        (void)cudaGetLastError();
    opts = plan_options_interp(!x->s.blas ? 0 : o->launch_product_min >= 0 ? o->launch_product_min
                                                                           : SCHED_LAUNCH_PRODUCT_MIN);
    x->s.product_min = opts.launch_product_min;
    if (sched_plan_build_opts(prog, &opts, &x->plan, err, errlen) != 0)
        goto fail;
    {
        if (!o->microops)
            snprintf(x->why_no_mops, sizeof x->why_no_mops, "micro-ops turned off (CFX_OPTION_MICROOPS 0)");
        else if (mop_translate(prog, &x->plan, &x->mops, why, sizeof why) != 0)
            snprintf(x->why_no_mops, sizeof x->why_no_mops, "%s", why);
    }
    x->s.nlaunches = x->plan.nlaunch_calls + x->plan.nlaunch_products;
    if (dev_session_upload(&x->s, prog, err, errlen) != 0)
        goto fail;
    dev_l2_window(&x->s.d, sched_l2_keep(prog), o->l2_window);

    CUDA_TRY(cudaMalloc((void **)&x->flags, (size_t)prog->nrecords + 1));
    CUDA_TRY(cudaMemcpy(x->flags, x->plan.flags, (size_t)prog->nrecords, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMalloc((void **)&x->region_exit, sizeof(int32_t) * ((size_t)prog->nrecords + 1)));
    CUDA_TRY(cudaMemcpy(x->region_exit, x->plan.region_exit, sizeof(int32_t) * (size_t)prog->nrecords,
                        cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMalloc((void **)&x->priv_offset, sizeof(int32_t) * ((size_t)prog->nslots + 1)));
    if (prog->nslots > 0)
        CUDA_TRY(cudaMemcpy(x->priv_offset, x->plan.priv_offset, sizeof(int32_t) * (size_t)prog->nslots,
                            cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMalloc((void **)&x->batch_next, sizeof(int32_t) * ((size_t)prog->nrecords + 1)));
    CUDA_TRY(cudaMemcpy(x->batch_next, x->plan.batch_next, sizeof(int32_t) * (size_t)prog->nrecords,
                        cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMalloc((void **)&x->batch_head, sizeof(int32_t) * ((size_t)prog->nrecords + 1)));
    CUDA_TRY(cudaMemcpy(x->batch_head, x->plan.batch_head, sizeof(int32_t) * (size_t)prog->nrecords,
                        cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMalloc((void **)&x->replicas, sizeof(int32_t) * ((size_t)x->plan.nreplicas + 1)));
    if (x->plan.nreplicas > 0)
        CUDA_TRY(cudaMemcpy(x->replicas, x->plan.replicas, sizeof(int32_t) * (size_t)x->plan.nreplicas,
                            cudaMemcpyHostToDevice));

    if (x->mops.ncode > 0) {
        CUDA_TRY(cudaMalloc((void **)&x->mop_image, (size_t)x->mops.image_bytes));
        CUDA_TRY(cudaMemcpy(x->mop_image, x->mops.image, (size_t)x->mops.image_bytes, cudaMemcpyHostToDevice));
        CUDA_TRY(cudaMalloc((void **)&x->mop_entry, sizeof(int32_t) * ((size_t)prog->nrecords + 1)));
        CUDA_TRY(cudaMemcpy(x->mop_entry, x->mops.entry, sizeof(int32_t) * (size_t)prog->nrecords,
                            cudaMemcpyHostToDevice));
    }

    /* The grid: as many blocks as stay resident together, so the barrier cannot wait for a
     * block that is not running; the same for both instantiations of the kernel. The
     * micro-ops follow the private copies in shared memory (mop_translate keeps both within
     * P_SHARED_PRIV_MAX). */
    x->smem = x->plan.priv_bytes <= P_SHARED_PRIV_MAX ? (size_t)x->plan.priv_bytes : 0;
    if (x->mops.ncode > 0)
        x->smem = (size_t)x->mops.code_offset + sizeof(mop) * (size_t)x->mops.ncode;
    CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, persist_kernel<0>, P_THREADS, x->smem));
    if (persist_launch_occupancy(&per_sm_launch, x->smem) != cudaSuccess) {
        (void)cudaGetLastError();
        per_sm_launch = per_sm; /* its module did not load: the probe will say so */
    }
    per_sm = per_sm_launch < per_sm ? per_sm_launch : per_sm;
    if (per_sm < 1) {
        snprintf(err, errlen, "the persistent kernel does not fit on a multiprocessor of this device");
        goto fail;
    }
    x->s.nblocks = x->s.d.sms * (per_sm < P_MAX_BLOCKS_PER_SM ? per_sm : P_MAX_BLOCKS_PER_SM);
    CUDA_TRY(cudaDeviceGetAttribute(&x->s.cooperative, cudaDevAttrCooperativeLaunch, x->s.d.device));
    if (x->smem == 0 && x->plan.priv_bytes > 0)
        CUDA_TRY(cudaMalloc((void **)&x->priv_global, (size_t)x->s.nblocks * (size_t)x->plan.priv_bytes));
    pub_bytes = 2 * (size_t)(x->plan.priv_bytes > 0 ? x->plan.priv_bytes : 16);
    CUDA_TRY(cudaMalloc((void **)&x->publish, pub_bytes));
    CUDA_TRY(cudaMalloc((void **)&x->partials, 2 * SCHED_BATCH_MAX * sizeof(k_acc) * (size_t)x->s.nblocks));
    CUDA_TRY(cudaMalloc((void **)&x->sync, sizeof(persist_sync)));
    x->s.sync = x->sync;
    x->s.sync_host = &x->sync_host;
    x->s.sync_bytes = sizeof x->sync_host;

    /* The print ring holds many lines, and always at least two of the biggest. */
    for (int32_t i = 0; i < prog->nrecords; i++)
        if (prog->records[i].kind == REC_PRINT) {
            size_t b = (size_t)slot_bytes(&prog->slots[prog->records[i].a]);
            max_print = b > max_print ? b : max_print;
        }
    ring_cap = 2 * (sizeof(persist_print) + (max_print + 7) / 8 * 8);
    if (ring_cap > (size_t)UINT32_MAX / 2) {
        snprintf(err, errlen, "a printed value is too big for the persistent executor");
        goto fail;
    }
    x->ring_cap = ring_cap > P_PRINT_BYTES ? (uint32_t)ring_cap : P_PRINT_BYTES;
    CUDA_TRY(cudaHostAlloc((void **)&x->ring, sizeof(persist_ring), cudaHostAllocMapped));
    memset((void *)x->ring, 0, sizeof(persist_ring));
    CUDA_TRY(cudaHostGetDevicePointer((void **)&x->ring_dev, x->ring, 0));
    CUDA_TRY(cudaHostAlloc((void **)&x->ring_data, x->ring_cap, cudaHostAllocMapped));
    CUDA_TRY(cudaHostGetDevicePointer((void **)&x->ring_data_dev, x->ring_data, 0));
    if (dev_session_alloc(&x->s, err, errlen) != 0)
        goto fail;
    /* The plan's cudaMemcpy calls above are from pageable memory: they may return before the
     * bytes reach the device, and they are ordered on the legacy default stream, which a
     * run on a non-blocking stream (our own, or an application's) does not wait for. */
    CUDA_TRY(cudaStreamSynchronize(0));
    /* device graph launch: the probe, the products' graphs, the kernel's graph; the pause path
     * (with the reason) for anything that does not work */
    if (!o->device_launch)
        dev_session_fall_back(&x->s, "pause and relaunch asked for (CFX_OPTION_DEVICE_LAUNCH 0)");
    else if (dev_session_device_launch(&x->s, err, errlen) != 0)
        goto fail;
    prof_pop();
    return x;
fail:
    prof_pop();
    persist_destroy(x);
    return NULL;
}

/* The run state a launch starts from (persist_sync's fields for it, the status running). */
static __global__ void persist_start(dev_state *state, persist_sync *sync, int32_t pc, int32_t region,
                                     int64_t max_iters)
{
    state->status = CFX_OK;
    state->record = -1;
    sync->bar.arrived = 0;
    sync->start_pc = pc;
    sync->start_region = region;
    sync->max_iters = max_iters;
}

/* One launch of the kernel (session.h's launch): persist_start says where it starts, at the
 * first record or after the one the last launch paused at; then the kernel's graph, or
 * persist_kernel<0> launched directly (the pause path). A cooperative launch makes the hardware
 * start every block at once, so the grid barrier never waits for a block that another
 * application kernel keeps off the device; a device without cooperative launches gets the
 * ordinary launch, where the occupancy-sized grid is resident as long as nothing else holds the
 * multiprocessors. Inside the application's capture: untraced, without the L2 window. */
static int persist_launch(dev_session *s, int32_t pc, char *err, size_t errlen)
{
    persist *x = (persist *)s;
    int traced = !s->in_capture && (s->run.trace != NULL || s->run.profile != NULL);
    persist_start<<<1, 1, 0, s->stream>>>(s->d.state, x->sync, pc + 1, -1, s->run.max_iters);
    CUDA_LAUNCHED();
    if (pc < 0 && s->run_device) {
        CUDA_TRY(cudaGraphLaunch(traced ? s->trace_exec : s->main_exec, s->stream));
        return 0;
    }
    {
        persist_args a = kernel_args(x, traced);
        void *params[] = {&a};
        return dev_launch((const void *)persist_kernel<0>, params, s->nblocks, P_THREADS, x->smem, s->cooperative,
                          s->in_capture ? NULL : &s->d.l2, s->stream, err, errlen);
    }
fail:
    return -1;
}

/* The kernel's graph for device launch: persist_kernel<1>, the node of a device graph. */
static int persist_device_graph(dev_session *s, int coop, char *why, size_t len)
{
    persist *x = (persist *)s;
    x->coop_node = coop && s->cooperative;
    persist_args a = kernel_args(x, 0);
    return persist_launch_graph(&a, s->nblocks, x->smem, x->coop_node, &s->d.l2, s->own, &s->main_graph,
                                &s->main_exec, why, len);
}

static int persist_ends_launch(const dev_session *s, int32_t i)
{
    return (((const persist *)s)->plan.flags[i] & SCHED_F_LAUNCH) != 0;
}

/* The run state a run starts from: persist_start sets the rest at each launch. */
static int persist_reset_sync(dev_session *s, char *err, size_t errlen)
{
    CUDA_TRY(cudaMemsetAsync(((persist *)s)->sync, 0, sizeof(persist_sync), s->stream));
    return 0;
fail:
    return -1;
}

static int32_t persist_pause_pc(const dev_session *s, const dev_state *st)
{
    (void)st;
    return ((const persist *)s)->sync_host.resume_pc;
}

static void persist_describe(dev_session *s)
{
    describe((persist *)s);
}

/* Takes the ring's new entries, in order, to the print callback and gives their room back
 * (dev_wait_stream_poll's poll: called while the run goes on and once after, after the
 * session has taken the hang report of a cancelled run). */
static int drain_ring(dev_session *s, char *err, size_t errlen)
{
    persist *x = (persist *)s;
    const cfx_prog *p = x->s.prog;
    unsigned long long head = __atomic_load_n((unsigned long long *)&x->ring->head, __ATOMIC_ACQUIRE);
    unsigned long long start = x->ring_tail;
    if (head - x->ring_tail > x->ring_cap) {
        snprintf(err, errlen, "the device's print ring says %llu bytes are waiting in a %u-byte ring",
                 head - x->ring_tail, x->ring_cap);
        return -1;
    }
    while (x->ring_tail < head) {
        uint32_t off = (uint32_t)(x->ring_tail % x->ring_cap);
        persist_print h;
        memcpy(&h, x->ring_data + off, sizeof h);
        if (h.record == -1) { /* the rest of the ring is unused: the next entry is at 0 */
            x->ring_tail += x->ring_cap - off;
            continue;
        }
        uint32_t need = (uint32_t)sizeof h + ((uint32_t)h.bytes + 7u) / 8u * 8u;
        if (h.record < 0 || h.record >= p->nrecords || p->records[h.record].kind != REC_PRINT ||
            (int64_t)h.bytes != slot_bytes(&p->slots[p->records[h.record].a]) || off + need > x->ring_cap) {
            snprintf(err, errlen, "a corrupt entry at byte %u of the device's print ring", off);
            return -1;
        }
        if (x->s.run.print)
            x->s.run.print(x->s.run.print_user, p, h.record, x->ring_data + off + sizeof h);
        x->ring_tail += need;
    }
    if (x->ring_tail != start)
        __atomic_store_n((unsigned long long *)&x->ring->tail, x->ring_tail, __ATOMIC_RELEASE);
    return 0;
}

/* Chrome trace of the run: one event per record per block (tid = block), like the cpu
 * executor's. */
static int write_trace(persist *x, char *err, size_t errlen)
{
    FILE *f = x->s.run.trace;
    const cfx_prog *p = x->s.prog;
    size_t nb = (size_t)x->s.nblocks;
    uint32_t *counts = (uint32_t *)malloc(sizeof(uint32_t) * nb);
    persist_event *ev = (persist_event *)malloc(sizeof(persist_event) * nb * P_TRACE_PER_BLOCK);
    unsigned long long base = ~0ull;
    long long kept = 0, dropped = 0;
    if (!counts || !ev) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    /* on the run's stream: a cudaMemcpy on the legacy default stream would also wait for
     * the application's other blocking streams */
    CUDA_TRY(cudaMemcpyAsync(counts, x->trace_count, sizeof(uint32_t) * nb, cudaMemcpyDeviceToHost,
                             x->s.stream));
    CUDA_TRY(cudaMemcpyAsync(ev, x->trace, sizeof(persist_event) * nb * P_TRACE_PER_BLOCK,
                             cudaMemcpyDeviceToHost, x->s.stream));
    CUDA_TRY(cudaStreamSynchronize(x->s.stream));
    for (size_t b = 0; b < nb; b++)
        for (uint32_t i = 0; i < counts[b] && i < P_TRACE_PER_BLOCK; i++)
            if (ev[b * P_TRACE_PER_BLOCK + i].t0 < base)
                base = ev[b * P_TRACE_PER_BLOCK + i].t0;
    /* the host's clock on the device's */
    if (dev_session_trace_open(&x->s, "cuda-persistent", base, (unsigned long long *)x->prof, &base, err, errlen) != 0)
        goto fail;
    for (size_t b = 0; b < nb; b++) {
        uint32_t n = counts[b] < P_TRACE_PER_BLOCK ? counts[b] : P_TRACE_PER_BLOCK;
        dropped += counts[b] - n;
        for (uint32_t i = 0; i < n; i++) {
            const persist_event *e = &ev[b * P_TRACE_PER_BLOCK + i];
            exec_trace_event(f, p, e->record, e->what == P_EV_MICROOPS ? "micro-ops" : NULL, (double)(e->t0 - base) / 1e3,
                             (double)(e->t1 - e->t0) / 1e3, (int)b);
            kept++;
        }
    }
    fprintf(f,
            "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"executor\":\"cuda-persistent\",\"graph\":\"%s\","
            "\"events\":%lld,\"events_dropped\":%lld,\"event_cap\":%d,\"blocks\":%d,\"path\":\"%s\","
            "\"host_clock_offset_ns\":%lld}}\n",
            p->name ? p->name : "", kept, dropped, P_TRACE_PER_BLOCK, x->s.nblocks,
            x->s.run_device ? "device graph launch" : "pause and relaunch", x->s.host.offset);
    fflush(f);
    free(counts);
    free(ev);
    return 0;
fail:
    free(counts);
    free(ev);
    return -1;
}

/* The profile block 0 added up on the device (persist_args.prof) into the run's exec_profile. */
static int read_profile(persist *x, char *err, size_t errlen)
{
    const int32_t n = x->s.prog->nrecords;
    unsigned long long *prof = (unsigned long long *)malloc(sizeof(unsigned long long) * (2 + 2 * (size_t)n));
    if (!prof) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    CUDA_TRY(cudaMemcpyAsync(prof, x->prof, sizeof(unsigned long long) * (2 + 2 * (size_t)n), cudaMemcpyDeviceToHost,
                             x->s.stream));
    CUDA_TRY(cudaStreamSynchronize(x->s.stream));
    for (int32_t i = 0; i < n; i++) {
        x->s.run.profile->count[i] = (int64_t)prof[2 + 2 * i];
        x->s.run.profile->ns[i] = (int64_t)prof[3 + 2 * i];
    }
    x->s.run.profile->run_ns = prof[1] > prof[0] ? (int64_t)(prof[1] - prof[0]) : 0;
    free(prof);
    return 0;
fail:
    free(prof);
    return -1;
}

/* A traced or profiled run's timeline: the profile, then the trace. */
static int persist_timeline(dev_session *s, char *err, size_t errlen)
{
    persist *x = (persist *)s;
    prof_push("read the timeline");
    int failed = (s->run.profile && read_profile(x, err, errlen) != 0) || (s->run.trace && write_trace(x, err, errlen) != 0);
    prof_pop();
    return failed ? -1 : 0;
}

/* Under the application's capture: a run with these arguments must not capture its application
 * kernels' graphs or allocate its trace buffers first (what persist_prepare does). */
static int persist_capture_ready(dev_session *s, const exec_run *run, char *err, size_t errlen)
{
    if (!dev_session_calls_changed(s, run) && !((run->trace || run->profile) && !((persist *)s)->trace))
        return 0;
    snprintf(err, errlen, "cuda-persistent (interpreter): under stream capture the run would capture its "
             "kernels' graphs first: call cfx_prepare (or run once) before capturing");
    return -1;
}

/* cfx_prepare, and the start of every run: the CALL sites' graphs for this run's kernels, the
 * trace buffers and the traced graph of a traced or profiled run. */
static int persist_prepare(void *self, const exec_run *run, char *err, size_t errlen)
{
    persist *x = (persist *)self;
    int traced = run->trace || run->profile;
    if (dev_session_busy(&x->s, err, errlen) != 0 || dev_session_capture_calls(&x->s, run, err, errlen) != 0)
        return -1;
    if (traced && !x->trace) {
        size_t prof_words = 2 + 2 * (size_t)x->s.prog->nrecords;
        CUDA_TRY(cudaMalloc((void **)&x->trace, sizeof(persist_event) * (size_t)x->s.nblocks * P_TRACE_PER_BLOCK));
        CUDA_TRY(cudaMalloc((void **)&x->trace_count, sizeof(uint32_t) * (size_t)x->s.nblocks));
        CUDA_TRY(cudaMalloc((void **)&x->prof, sizeof(unsigned long long) * prof_words));
    }
    /* a traced run takes the path an untraced one takes, through the traced graph; only where
     * that graph cannot be made does it pause at each launch-ending record */
    if (traced && x->s.device_launch && !x->s.trace_exec && !x->trace_graph_failed) {
        persist_args ta = kernel_args(x, 1);
        char why[320];
        x->trace_graph_failed = persist_launch_graph(&ta, x->s.nblocks, x->smem, x->coop_node, &x->s.d.l2, x->s.own,
                                                     &x->s.trace_graph, &x->s.trace_exec, why, sizeof why) != 0;
    }
    return 0;
fail:
    return -1;
}

static int persist_run(void *self, const exec_run *run, int async, char *err, size_t errlen)
{
    persist *x = (persist *)self;
    dev_session *s = &x->s;
    cudaStream_t stream;
    /* a profiled run is a traced one whose events need not be written: its profile comes from
     * the same stamps */
    int capturing = dev_session_stream(s, run, &stream, err, errlen), traced = run->trace || run->profile;
    if (capturing != 0)
        return capturing < 0 ? -1 : dev_session_capture(s, run, async, stream, err, errlen);
    dev_session_begin(s, run);
    if (persist_prepare(x, run, err, errlen) != 0)
        return dev_session_fail(s);
    s->run_device = s->device_launch && (!traced || s->trace_exec);
    if (traced) {
        CUDA_TRY(cudaMemsetAsync(x->trace_count, 0, sizeof(uint32_t) * (size_t)s->nblocks, s->stream));
        CUDA_TRY(cudaMemsetAsync(x->prof, 0, sizeof(unsigned long long) * (2 + 2 * (size_t)s->prog->nrecords),
                                 s->stream));
    }
    /* the ring is empty (no run is in flight: nothing writes it) */
    x->ring->head = 0;
    x->ring->tail = 0;
    x->ring_tail = 0;
    dev_host_track_start(&s->host, run->trace != NULL);
    return dev_session_launch(s, async, err, errlen);
fail:
    return dev_session_fail(s);
}

static int persist_wait(void *self, exec_outcome *out, char *err, size_t errlen)
{
    return dev_session_wait(&((persist *)self)->s, out, err, errlen);
}

/* cfx_exec_graph: a run recorded by a capture of this call's own. */
static int persist_graph(void *self, const exec_run *run, void **graph, char *err, size_t errlen)
{
    if (persist_prepare(self, run, err, errlen) != 0) return -1;
    return dev_graph_of_run(persist_run, self, run, graph, err, errlen);
}

static void *persist_create(const cfx_prog *prog, char *err, size_t errlen)
{
    static const persist_opts defaults = PERSIST_OPTS_DEFAULT;
    return persist_create_opts(prog, &defaults, err, errlen);
}

const exec_ops dev_persistent_ops = {
    CFX_BACKEND_CUDA_PERSISTENT, persist_available, persist_create, persist_run, persist_wait,
    persist_destroy, persist_detail, NULL, NULL, persist_hang, persist_prepare, persist_graph,
};
