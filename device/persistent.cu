/* persistent.cu: the cuda-persistent executor, the point of cfx. One kernel walks the
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
 * What the kernel does not do itself ends the launch at its record (SCHED_F_LAUNCH): a CALL
 * of an application kernel, and a real product of SCHED_LAUNCH_PRODUCT_MIN multiply-adds or
 * more (cuBLAS). The rest, matrix-vector products included, runs inline. Two paths reach
 * such a record's work, and cfx_exec_backend_detail says which one an executor takes:
 *
 * - Device graph launch (persistent_launch.cu). The kernel is the one node of a graph
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
 *   graph launch is not available (the probe in persistent_launch.cu fails, a site does not
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
#include "exec.h"
#include "kernels.h"
#include "microops.h"
#include "nvtx.h"
#include "persistent_kernel.cuh"
#include "program.h"
#include "scheduler.h"

/* ==== host side ============================================================================ */


typedef struct persist {
    dev_prog d;
    sched_plan plan;
    cudaStream_t own;
    cudaStream_t capture;       /* sites' graphs are captured here */
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
    persist_ring *ring;         /* pinned, mapped; ring_dev is its device address */
    persist_ring *ring_dev;
    uint8_t *ring_data;         /* pinned, mapped, ring_cap bytes */
    uint8_t *ring_data_dev;
    exec_progress *progress;    /* per block, host-mapped (persist_args.progress) */
    exec_progress *progress_dev;
    char hang[4096];            /* the hang report taken when the run was cancelled, "" */
    dev_host_track host;        /* a traced run's host phases, for the trace's host track */
    uint32_t ring_cap;
    unsigned long long ring_tail; /* bytes the host has taken in this run */
    persist_event *trace;       /* allocated at the first traced run */
    uint32_t *trace_count;
    unsigned long long *prof;   /* persist_args.prof, allocated with the trace buffers: a traced
                                 * run's kernel always adds to it, a profiled run reads it */
    int nblocks;
    size_t smem;
    int cooperative;            /* the device supports cooperative launches */
    blas_ctx *blas;             /* NULL: products stay inline */
    int64_t product_min;        /* the plan's launch_product_min (0: every product inline) */
    /* micro-ops */
    mop_prog mops;              /* translated at creation; ncode 0: none */
    char why_no_mops[192];      /* why there are none */
    uint8_t *mop_image;         /* device copies of mops.image and mops.entry */
    int32_t *mop_entry;
    /* device graph launch */
    int device_launch;          /* 1: runs go through main_exec; else the pause path */
    int coop_node;              /* main_exec's node is cooperative */
    char why_pause[384];        /* why the pause path runs */
    cudaGraph_t *site_graph;    /* per record: the graph of its work, or NULL */
    cudaGraphExec_t *site_exec;
    cudaGraphExec_t *site_exec_dev; /* device copy of site_exec */
    cudaGraph_t main_graph;
    cudaGraphExec_t main_exec;
    /* the same graph for traced runs, made at the first one: its kernel's arguments carry the
     * trace buffers, so an untraced run's kernel has no trace to test for */
    cudaGraph_t trace_graph;
    cudaGraphExec_t trace_exec;
    int trace_graph_failed;     /* it could not be made: traced runs take the pause path */
    exec_kernel *captured;      /* the kernels the CALL sites were captured with, NULL: none yet */
    char detail[1024];
    /* the run in flight */
    exec_run run;
    cudaStream_t stream;
    int in_flight;
    int captured_run;           /* the last run was recorded by the application's capture */
    int run_device;             /* this run goes through main_exec */
    int paused;                 /* the run ended a launch early at least once */
    int forced;                 /* a CALL failed: the outcome is CFX_ERROR at forced_record */
    int32_t forced_record;
    exec_outcome out;
} persist;

static int persist_available(char *why, size_t len)
{
    return dev_available(why, len);
}

/* Every site graph and the kernel's graph; the executor runs the pause path afterwards. */
static void drop_graphs(persist *x)
{
    for (int32_t i = 0; x->site_exec && i < x->d.prog->nrecords; i++) {
        if (x->site_exec[i]) cudaGraphExecDestroy(x->site_exec[i]);
        if (x->site_graph[i]) cudaGraphDestroy(x->site_graph[i]);
        x->site_exec[i] = NULL;
        x->site_graph[i] = NULL;
    }
    if (x->main_exec) cudaGraphExecDestroy(x->main_exec);
    if (x->main_graph) cudaGraphDestroy(x->main_graph);
    if (x->trace_exec) cudaGraphExecDestroy(x->trace_exec);
    if (x->trace_graph) cudaGraphDestroy(x->trace_graph);
    x->main_exec = NULL;
    x->main_graph = NULL;
    x->trace_exec = NULL;
    x->trace_graph = NULL;
}

static void persist_destroy(void *self)
{
    persist *x = (persist *)self;
    if (!x)
        return;
    if (x->in_flight && x->stream)
        cudaStreamSynchronize(x->stream);
    if (x->d.prog)
        drop_graphs(x);
    free(x->site_exec);
    free(x->site_graph);
    free(x->captured);
    dev_prog_free(&x->d);
    sched_plan_free(&x->plan);
    mop_prog_free(&x->mops);
    blas_free(x->blas);
    if (x->own) cudaStreamDestroy(x->own);
    if (x->capture) cudaStreamDestroy(x->capture);
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
    if (x->site_exec_dev) cudaFree(x->site_exec_dev);
    if (x->ring) cudaFreeHost(x->ring);
    if (x->ring_data) cudaFreeHost(x->ring_data);
    if (x->progress) cudaFreeHost(x->progress);
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
    a.records = x->d.records;
    a.slots = x->d.slots;
    a.table = x->d.table;
    a.arena = x->d.arena;
    a.flags = x->flags;
    a.region_exit = x->region_exit;
    a.priv_offset = x->priv_offset;
    a.replicas = x->replicas;
    a.batch_next = x->batch_next;
    a.batch_head = x->batch_head;
    a.nreplicas = x->plan.nreplicas;
    a.nslots = x->d.prog->nslots;
    a.priv_bytes = x->plan.priv_bytes;
    a.priv_shared = x->priv_global == NULL;
    a.priv_global = x->priv_global;
    a.publish = x->publish;
    a.partials = x->partials;
    a.state = x->d.state;
    a.control = x->d.control_dev;
    a.sync = x->sync;
    a.ring = x->ring_dev;
    a.ring_data = x->ring_data_dev;
    a.progress = x->progress_dev;
    a.ring_cap = x->ring_cap;
    a.site_exec = x->site_exec_dev;
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
    dev_l2_describe(&x->d, l2, sizeof l2);
    if (x->product_min > 0)
        snprintf(launches, sizeof launches, "%d CALL site%s and %d product%s of at least %lld multiply-adds (cuBLAS)",
                 (int)pl->nlaunch_calls, pl->nlaunch_calls == 1 ? "" : "s", (int)pl->nlaunch_products,
                 pl->nlaunch_products == 1 ? "" : "s", (long long)x->product_min);
    else
        snprintf(launches, sizeof launches, "%d CALL site%s (every product inline%s)", (int)pl->nlaunch_calls,
                 pl->nlaunch_calls == 1 ? "" : "s", x->blas ? "" : ": cuBLAS did not start");
    if (x->device_launch)
        snprintf(x->detail, sizeof x->detail,
                 "device graph launch: one kernel of %d blocks x %d threads, the %s node of a device graph, "
                 "tail-launches the pre-captured graphs of %s%s, then itself at the next record; the rest "
                 "runs inline; prints go to a host-mapped ring%s%s",
                 x->nblocks, P_THREADS, x->coop_node ? "cooperative" : "plain", launches,
                 pl->nlaunch_calls > 0 && !x->captured ? " (CALLs are captured at the first run)" : "", mops, l2);
    else
        snprintf(x->detail, sizeof x->detail,
                 "pause and relaunch (%s): one kernel of %d blocks x %d threads ends its launch at each of %s, "
                 "the host runs that work and launches again; the rest runs inline; prints go to a "
                 "host-mapped ring%s%s",
                 x->why_pause, x->nblocks, P_THREADS, launches, mops, l2);
}

static const char *persist_detail(void *self)
{
    return ((persist *)self)->detail;
}

/* The hang report of the last run, taken when it was cancelled ("" otherwise). */
static const char *persist_hang(void *self)
{
    return ((persist *)self)->hang;
}

/* Leaves device graph launch for the pause path, for `why`. */
static void fall_back(persist *x, const char *why)
{
    drop_graphs(x);
    x->device_launch = 0;
    snprintf(x->why_pause, sizeof x->why_pause, "%s", why);
    describe(x);
}

/* A record's work as a device-launchable graph (dev_capture_site): what `enqueue` puts on the
 * capture stream; its handle goes to site_exec[i] (the device copy is the caller's business).
 * 0; 1 when the work cannot be captured so (why in err); -1 for a CUDA failure outside. */
typedef int (*site_enqueue)(persist *x, int32_t i, const void *what, cudaStream_t s, char *err, size_t errlen);

typedef struct site_job {
    persist *x;
    int32_t i;
    site_enqueue enqueue;
    const void *what;
} site_job;

static int run_site_job(void *user, cudaStream_t s, char *err, size_t errlen)
{
    const site_job *j = (const site_job *)user;
    return j->enqueue(j->x, j->i, j->what, s, err, errlen);
}

static int capture_site(persist *x, int32_t i, site_enqueue enqueue, const void *what, char *err, size_t errlen)
{
    site_job job = {x, i, enqueue, what};
    return dev_capture_site(x->capture, x->own, run_site_job, &job, &x->site_graph[i], &x->site_exec[i], err,
                            errlen);
}

/* site_enqueue for a product: the cuBLAS call cuda-host makes. */
static int enqueue_product(persist *x, int32_t i, const void *what, cudaStream_t s, char *err, size_t errlen)
{
    const cfx_prog *p = x->d.prog;
    const cfx_record *r = &p->records[i];
    const cfx_slot *sb = &p->slots[r->b], *sc = &p->slots[r->c];
    int64_t n = sc->rank == 2 ? sc->dims[1] : 1;
    (void)what;
    return blas_matmul(x->blas, s, sb->dtype, x->d.arena + p->slots[r->a].offset, x->d.arena + sb->offset,
                       x->d.arena + sc->offset, sb->dims[0], sb->dims[1], n, err, errlen) == 0 ? 0 : 1;
}

/* site_enqueue for a CALL: the kernel's cuda_fn on the capture stream. */
static int enqueue_call(persist *x, int32_t i, const void *what, cudaStream_t s, char *err, size_t errlen)
{
    const exec_kernel *k = (const exec_kernel *)what;
    int failed = 0;
    if (dev_call_kernel(&x->d, k, &x->d.prog->records[i], s, &failed, err, errlen) != 0)
        return 1;
    if (failed) {
        snprintf(err, errlen, "kernel '%s' %s", k && k->name ? k->name : "?",
                 k && k->cuda_fn ? "reported a failure while it was captured" : "has no CUDA function");
        return 1;
    }
    return 0;
}

/* Copies site_exec to the device, where persist_kernel<1> reads it. */
static int upload_sites(persist *x, char *err, size_t errlen)
{
    CUDA_TRY(cudaMemcpyAsync(x->site_exec_dev, x->site_exec, sizeof(cudaGraphExec_t) * (size_t)x->d.prog->nrecords,
                             cudaMemcpyHostToDevice, x->own));
    CUDA_TRY(cudaStreamSynchronize(x->own));
    return 0;
fail:
    return -1;
}

/* Device graph launch at creation: the probe, the products' graphs, the kernel's graph.
 * Falls back to the pause path (with the reason) for anything that does not work; -1 only
 * for a CUDA failure that leaves the executor unusable. */
static int setup_device_launch(persist *x, int wanted, char *err, size_t errlen)
{
    const cfx_prog *p = x->d.prog;
    char why[320] = "";
    persist_args a;
    if (!wanted) {
        fall_back(x, "pause and relaunch asked for (CFX_OPTION_DEVICE_LAUNCH 0)");
        return 0;
    }
    if (!persist_probe_device_launch(&x->coop_node, why, sizeof why)) {
        char msg[384];
        snprintf(msg, sizeof msg, "device graph launch is not available here: %s", why);
        fall_back(x, msg);
        return 0;
    }
    x->coop_node = x->coop_node && x->cooperative;
    for (int32_t i = 0; i < p->nrecords; i++) {
        if (!(x->plan.flags[i] & SCHED_F_LAUNCH) || p->records[i].kind == REC_CALL)
            continue;
        int rc = capture_site(x, i, enqueue_product, NULL, why, sizeof why);
        if (rc < 0) {
            snprintf(err, errlen, "%s", why);
            return -1;
        }
        if (rc > 0) {
            char msg[384];
            snprintf(msg, sizeof msg, "the product at record %d: %s", (int)i, why);
            fall_back(x, msg);
            return 0;
        }
    }
    if (upload_sites(x, err, errlen) != 0)
        return -1;
    a = kernel_args(x, 0);
    if (persist_launch_graph(&a, x->nblocks, x->smem, x->coop_node, &x->d.l2, x->own, &x->main_graph, &x->main_exec, why,
                             sizeof why) != 0) {
        char msg[384];
        snprintf(msg, sizeof msg, "the kernel's graph: %s", why);
        fall_back(x, msg);
        return 0;
    }
    x->device_launch = 1;
    describe(x);
    return 0;
}

/* The CALL sites' graphs, at the first run (or when the kernels changed): every cuda_fn is
 * called once, on the capture stream. A kernel that has no CUDA function, reports a failure,
 * or enqueues what a device graph may not hold sends the executor to the pause path, which
 * calls cuda_fn at every CALL as the other executors do. */
static int capture_calls(persist *x, const exec_run *run, char *err, size_t errlen)
{
    const cfx_prog *p = x->d.prog;
    char why[320];
    exec_kernel *k = (exec_kernel *)calloc((size_t)p->nkernels + 1, sizeof *k);
    if (!k) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (run->kernels)
        memcpy(k, run->kernels, sizeof *k * (size_t)p->nkernels);
    free(x->captured);
    x->captured = NULL;
    for (int32_t i = 0; i < p->nrecords; i++) {
        if (p->records[i].kind != REC_CALL)
            continue;
        if (x->site_exec[i]) {
            cudaGraphExecDestroy(x->site_exec[i]);
            cudaGraphDestroy(x->site_graph[i]);
            x->site_exec[i] = NULL;
            x->site_graph[i] = NULL;
        }
        int rc = capture_site(x, i, enqueue_call, &k[p->records[i].a], why, sizeof why);
        if (rc < 0) {
            snprintf(err, errlen, "%s", why);
            free(k);
            return -1;
        }
        if (rc > 0) {
            char msg[384];
            snprintf(msg, sizeof msg, "the CALL at record %d: %s", (int)i, why);
            fall_back(x, msg);
            free(k);
            return 0;
        }
    }
    x->captured = k;
    if (upload_sites(x, err, errlen) != 0)
        return -1;
    describe(x);
    return 0;
}

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
    prof_push("upload");
    /* cuBLAS for the big products; without it they run inline like the others */
    x->blas = blas_new(why, sizeof why);
    if (!x->blas)
        (void)cudaGetLastError();
    opts = plan_options_interp(!x->blas ? 0 : o->launch_product_min >= 0 ? o->launch_product_min
                                                                         : SCHED_LAUNCH_PRODUCT_MIN);
    x->product_min = opts.launch_product_min;
    if (sched_plan_build_opts(prog, &opts, &x->plan, err, errlen) != 0)
        goto fail;
    {
        if (!o->microops)
            snprintf(x->why_no_mops, sizeof x->why_no_mops, "micro-ops turned off (CFX_OPTION_MICROOPS 0)");
        else if (mop_translate(prog, &x->plan, &x->mops, why, sizeof why) != 0)
            snprintf(x->why_no_mops, sizeof x->why_no_mops, "%s", why);
    }
    if (dev_prog_upload(&x->d, prog, err, errlen) != 0)
        goto fail;
    dev_l2_window(&x->d, sched_l2_keep(prog), o->l2_window);
    CUDA_TRY(cudaStreamCreateWithFlags(&x->own, cudaStreamNonBlocking));
    CUDA_TRY(cudaStreamCreateWithFlags(&x->capture, cudaStreamNonBlocking));

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
    x->nblocks = x->d.sms * (per_sm < P_MAX_BLOCKS_PER_SM ? per_sm : P_MAX_BLOCKS_PER_SM);
    CUDA_TRY(cudaDeviceGetAttribute(&x->cooperative, cudaDevAttrCooperativeLaunch, x->d.device));
    if (x->smem == 0 && x->plan.priv_bytes > 0)
        CUDA_TRY(cudaMalloc((void **)&x->priv_global, (size_t)x->nblocks * (size_t)x->plan.priv_bytes));
    pub_bytes = 2 * (size_t)(x->plan.priv_bytes > 0 ? x->plan.priv_bytes : 16);
    CUDA_TRY(cudaMalloc((void **)&x->publish, pub_bytes));
    CUDA_TRY(cudaMalloc((void **)&x->partials, 2 * SCHED_BATCH_MAX * sizeof(k_acc) * (size_t)x->nblocks));
    CUDA_TRY(cudaMalloc((void **)&x->sync, sizeof(persist_sync)));

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
    CUDA_TRY(cudaHostAlloc((void **)&x->progress, sizeof(exec_progress) * (size_t)x->nblocks, cudaHostAllocMapped));
    CUDA_TRY(cudaHostGetDevicePointer((void **)&x->progress_dev, x->progress, 0));

    x->site_exec = (cudaGraphExec_t *)calloc((size_t)prog->nrecords + 1, sizeof(cudaGraphExec_t));
    x->site_graph = (cudaGraph_t *)calloc((size_t)prog->nrecords + 1, sizeof(cudaGraph_t));
    if (!x->site_exec || !x->site_graph) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    CUDA_TRY(cudaMalloc((void **)&x->site_exec_dev, sizeof(cudaGraphExec_t) * ((size_t)prog->nrecords + 1)));
    CUDA_TRY(cudaMemset(x->site_exec_dev, 0, sizeof(cudaGraphExec_t) * ((size_t)prog->nrecords + 1)));
    /* The plan's cudaMemcpy calls above are from pageable memory: they may return before the
     * bytes reach the device, and they are ordered on the legacy default stream, which a
     * run on a non-blocking stream (our own, or an application's) does not wait for. */
    CUDA_TRY(cudaStreamSynchronize(0));
    if (setup_device_launch(x, o->device_launch, err, errlen) != 0)
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

/* Pause path: one launch of persist_kernel<0>, starting where persist_start said. A
 * cooperative launch makes the hardware start every block at once, so the grid barrier never
 * waits for a block that another application kernel keeps off the device; a device without
 * cooperative launches gets the ordinary launch, where the occupancy-sized grid is resident
 * as long as nothing else holds the multiprocessors. */
static int launch_paused(persist *x, char *err, size_t errlen)
{
    persist_args a = kernel_args(x, x->run.trace != NULL || x->run.profile != NULL);
    void *params[] = {&a};
    return dev_launch((const void *)persist_kernel<0>, params, x->nblocks, P_THREADS, x->smem, x->cooperative,
                      &x->d.l2, x->stream, err, errlen);
}

/* Takes the ring's new entries, in order, to the print callback and gives their room back
 * (dev_wait_stream_poll's poll: called while the run goes on and once after). */
static int drain_ring(void *user, char *err, size_t errlen)
{
    persist *x = (persist *)user;
    const cfx_prog *p = x->d.prog;
    /* a cancel: the hang report now, while the blocks still stand where the run left them */
    if (!x->hang[0] && x->run.cancel && __atomic_load_n(x->run.cancel, __ATOMIC_RELAXED))
        exec_format_hang(p, x->progress, x->nblocks, x->hang, sizeof x->hang);
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
        if (x->run.print)
            x->run.print(x->run.print_user, p, h.record, x->ring_data + off + sizeof h);
        x->ring_tail += need;
    }
    if (x->ring_tail != start)
        __atomic_store_n((unsigned long long *)&x->ring->tail, x->ring_tail, __ATOMIC_RELEASE);
    return 0;
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
    /* the host's clock on the device's */
    if (dev_clock_offset(&x->host, x->stream, (unsigned long long *)x->prof, err, errlen) != 0)
        goto fail;
    for (size_t b = 0; b < nb; b++)
        for (uint32_t i = 0; i < counts[b] && i < P_TRACE_PER_BLOCK; i++)
            if (ev[b * P_TRACE_PER_BLOCK + i].t0 < base)
                base = ev[b * P_TRACE_PER_BLOCK + i].t0;
    base = dev_host_track_base(&x->host, base);
    exec_trace_open(f, "cuda-persistent", p, "block", (int)nb);
    fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%d,\"args\":{\"name\":\"host\"}}", (int)nb);
    dev_host_track_write(f, p, &x->host, base, (int)nb);
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
            p->name ? p->name : "", kept, dropped, P_TRACE_PER_BLOCK, x->nblocks,
            x->run_device ? "device graph launch" : "pause and relaunch", x->host.offset);
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
    const int32_t n = x->d.prog->nrecords;
    unsigned long long *prof = (unsigned long long *)malloc(sizeof(unsigned long long) * (2 + 2 * (size_t)n));
    if (!prof) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    CUDA_TRY(cudaMemcpyAsync(prof, x->prof, sizeof(unsigned long long) * (2 + 2 * (size_t)n), cudaMemcpyDeviceToHost,
                             x->stream));
    CUDA_TRY(cudaStreamSynchronize(x->stream));
    for (int32_t i = 0; i < n; i++) {
        x->run.profile->count[i] = (int64_t)prof[2 + 2 * i];
        x->run.profile->ns[i] = (int64_t)prof[3 + 2 * i];
    }
    x->run.profile->run_ns = prof[1] > prof[0] ? (int64_t)(prof[1] - prof[0]) : 0;
    free(prof);
    return 0;
fail:
    free(prof);
    return -1;
}

/* Pause path: the work of the record the launch ended at, on the run's stream. Returns 0, or
 * -1 for a CUDA failure; a CALL that fails sets x->forced (the run stops with CFX_ERROR). */
static int serve_pause(persist *x, int32_t pc, char *err, size_t errlen)
{
    const cfx_prog *p = x->d.prog;
    const cfx_record *r = &p->records[pc];
    if (r->kind == REC_CALL) {
        int failed = 0;
        if (call_kernel(x, r, &failed, err, errlen) != 0)
            return -1;
        if (failed) {
            x->forced = 1;
            x->forced_record = pc;
        }
        return 0;
    }
    return enqueue_product(x, pc, NULL, x->stream, err, errlen) == 0 ? 0 : -1;
}

/* Waits for the run in flight, draining prints meanwhile; on the pause path serves its
 * pauses with new launches; copies the results and reads the outcome. */
static int finish(persist *x, char *err, size_t errlen)
{
    const cfx_prog *p = x->d.prog;
    dev_state st;
    persist_sync sy;
    for (;;) {
        unsigned long long t = dev_host_ns();
        if (dev_wait_stream_poll(&x->d, x->stream, x->run.cancel, drain_ring, x, err, errlen) != 0)
            goto fail;
        dev_host_span(&x->host, "wait for the launch", t);
        /* on our stream, not the legacy default one, which would also wait for the
         * application's other streams */
        CUDA_TRY(cudaMemcpyAsync(&st, x->d.state, sizeof st, cudaMemcpyDeviceToHost, x->stream));
        CUDA_TRY(cudaMemcpyAsync(&sy, x->sync, sizeof sy, cudaMemcpyDeviceToHost, x->stream));
        CUDA_TRY(cudaStreamSynchronize(x->stream));
        if (st.status != P_STATUS_PAUSE)
            break;
        int32_t pc = sy.resume_pc;
        if (x->run_device || pc < 0 || pc >= p->nrecords || !(x->plan.flags[pc] & SCHED_F_LAUNCH)) {
            snprintf(err, errlen, "the device paused at record %d, which does not end a launch", (int)pc);
            goto fail;
        }
        x->paused = 1;
        t = dev_host_ns();
        if (serve_pause(x, pc, err, errlen) != 0)
            goto fail;
        dev_host_span(&x->host, "pause: the record's work", t);
        if (x->forced)
            break;
        t = dev_host_ns();
        persist_start<<<1, 1, 0, x->stream>>>(x->d.state, x->sync, pc + 1, -1, x->run.max_iters);
        CUDA_LAUNCHED();
        if (launch_paused(x, err, errlen) != 0)
            goto fail;
        dev_host_span(&x->host, "launch", t);
    }
    if (x->run_device && st.status == CFX_ERROR && st.record >= 0 && st.record < p->nrecords &&
        (x->plan.flags[st.record] & SCHED_F_LAUNCH)) {
        /* persist_kernel<1> could not tail-launch: a failure of the backend, not of the run */
        snprintf(err, errlen, "device graph launch failed at record %d: cudaGraphLaunch returned %s / %s",
                 (int)st.record, cudaGetErrorName((cudaError_t)st.detail[0]),
                 cudaGetErrorName((cudaError_t)st.detail[1]));
        goto fail;
    }
    {
        unsigned long long t = dev_host_ns();
        if (!x->forced && st.status == CFX_OK) {
            /* device buffers: the copy enqueued after the first launch saw a pause, redo it */
            if (!x->run.device_buffers || x->paused)
                if (dev_copy_results(&x->d, &x->run, x->stream, err, errlen) != 0)
                    goto fail;
        }
        CUDA_TRY(cudaStreamSynchronize(x->stream));
        dev_host_span(&x->host, "copy results", t);
    }
    if (dev_read_outcome(&x->d, &x->out, err, errlen) != 0)
        goto fail;
    if (x->forced) {
        x->out.status = CFX_ERROR;
        x->out.record = x->forced_record;
        x->out.detail[0] = x->out.detail[1] = 0;
    }
    if (x->run.profile || x->run.trace) {
        prof_push("read the timeline");
        int failed = (x->run.profile && read_profile(x, err, errlen) != 0) ||
                     (x->run.trace && write_trace(x, err, errlen) != 0);
        prof_pop();
        if (failed)
            goto fail;
    }
    x->in_flight = 0;
    return 0;
fail:
    x->in_flight = 0;
    x->out.status = CFX_ERROR;
    return -1;
}

/* 1 when a run with these arguments must capture its application kernels' graphs or allocate
 * its trace buffers first: what persist_prepare does. */
static int persist_needs_prep(const persist *x, const exec_run *run)
{
    return (x->device_launch && x->plan.nlaunch_calls > 0 && dev_kernels_changed(x->captured, x->d.prog->nkernels, run)) ||
           ((run->trace || run->profile) && !x->trace);
}

/* Why a run of this executor cannot be recorded into the application's capture (err), or 0. */
static int persist_capture_refusal(const sched_plan *plan, int device_launch, const char *mode, char *err, size_t errlen)
{
    int n = plan->nlaunch_calls + plan->nlaunch_products;
    if (n == 0) return 0;
    if (device_launch)
        snprintf(err, errlen, "cuda-persistent (%s): %d record%s of this graph end the kernel's launch (CALLs of "
                 "kernels given as functions, products launched for cuBLAS), which the kernel serves by tail-launching "
                 "their graphs and then its own graph from the device; as a node of the application's graph it has "
                 "no graph of its own to relaunch: choose cuda-graph, or register kernels by their source and set "
                 "CFX_OPTION_LAUNCH_PRODUCT_MIN 0 (products inside the kernel)", mode, n, n == 1 ? "" : "s");
    else
        snprintf(err, errlen, "cuda-persistent (%s): %d record%s of this graph end the kernel's launch and are "
                 "served by pause and relaunch, which needs the host between launches: choose cuda-graph, or "
                 "register kernels by their source and set CFX_OPTION_LAUNCH_PRODUCT_MIN 0 (products inside the "
                 "kernel)", mode, n, n == 1 ? "" : "s");
    return -1;
}

/* cfx_prepare, and the start of every run: the CALL sites' graphs for this run's kernels, the
 * trace buffers and the traced graph of a traced or profiled run. */
static int persist_prepare(void *self, const exec_run *run, char *err, size_t errlen)
{
    persist *x = (persist *)self;
    int traced = run->trace || run->profile;
    if (x->in_flight) {
        snprintf(err, errlen, "a run of this executor is still in flight: wait for it first");
        return -1;
    }
    if (x->device_launch && x->plan.nlaunch_calls > 0 && dev_kernels_changed(x->captured, x->d.prog->nkernels, run) &&
        capture_calls(x, run, err, errlen) != 0)
        return -1;
    if (traced && !x->trace) {
        size_t prof_words = 2 + 2 * (size_t)x->d.prog->nrecords;
        CUDA_TRY(cudaMalloc((void **)&x->trace, sizeof(persist_event) * (size_t)x->nblocks * P_TRACE_PER_BLOCK));
        CUDA_TRY(cudaMalloc((void **)&x->trace_count, sizeof(uint32_t) * (size_t)x->nblocks));
        CUDA_TRY(cudaMalloc((void **)&x->prof, sizeof(unsigned long long) * prof_words));
    }
    /* a traced run takes the path an untraced one takes, through the traced graph; only where
     * that graph cannot be made does it pause at each launch-ending record */
    if (traced && x->device_launch && !x->trace_exec && !x->trace_graph_failed) {
        persist_args ta = kernel_args(x, 1);
        char why[320];
        x->trace_graph_failed = persist_launch_graph(&ta, x->nblocks, x->smem, x->coop_node, &x->d.l2, x->own,
                                                     &x->trace_graph, &x->trace_exec, why, sizeof why) != 0;
    }
    return 0;
fail:
    return -1;
}

/* A run recorded into the application's capture on `stream`: the run's start, one launch of the
 * kernel (persist_kernel<0>: with no record that ends the launch it never pauses), the guarded
 * result copies and the outcome's publication. A plain cooperative launch rather than the device
 * graph, which would relaunch itself from the device; without the L2 window, whose refusal would
 * end the capture. */
static int persist_capture(persist *x, const exec_run *run, int async, cudaStream_t stream, char *err, size_t errlen)
{
    if (dev_capture_check(run, async, "cuda-persistent (interpreter)", err, errlen) != 0) return -1;
    if (persist_capture_refusal(&x->plan, x->device_launch, "interpreter", err, errlen) != 0) return -1;
    if (persist_needs_prep(x, run)) {
        snprintf(err, errlen, "cuda-persistent (interpreter): under stream capture the run would capture its "
                 "kernels' graphs first: call cfx_prepare (or run once) before capturing");
        return -1;
    }
    x->run = *run;
    x->stream = stream;
    x->paused = 0;
    x->forced = 0;
    x->run_device = 0;
    x->hang[0] = '\0';
    CUDA_TRY(cudaMemsetAsync(x->sync, 0, sizeof(persist_sync), stream));
    if (dev_run_begin(&x->d, run, stream, err, errlen) != 0) return -1;
    persist_start<<<1, 1, 0, stream>>>(x->d.state, x->sync, 0, -1, run->max_iters);
    CUDA_LAUNCHED();
    {
        persist_args a = kernel_args(x, 0);
        void *params[] = {&a};
        if (dev_launch((const void *)persist_kernel<0>, params, x->nblocks, P_THREADS, x->smem, x->cooperative, NULL,
                       stream, err, errlen) != 0)
            return -1;
    }
    if (dev_capture_end(&x->d, run, stream, err, errlen) != 0) return -1;
    x->captured_run = 1;
    return EXEC_CAPTURED;
fail:
    return -1;
}

static int persist_run(void *self, const exec_run *run, int async, char *err, size_t errlen)
{
    persist *x = (persist *)self;
    if (x->in_flight) {
        snprintf(err, errlen, "a run of this executor is still in flight: wait for it first");
        return -1;
    }
    {
        cudaStream_t s = run->stream ? (cudaStream_t)run->stream : x->own;
        int capturing = run->stream ? dev_capturing(s, err, errlen) : 0; /* never the executor's own stream */
        if (capturing < 0) return -1;
        if (capturing) return persist_capture(x, run, async, s, err, errlen);
    }
    x->captured_run = 0;
    x->run = *run;
    x->stream = run->stream ? (cudaStream_t)run->stream : x->own;
    x->paused = 0;
    x->forced = 0;
    memset(&x->out, 0, sizeof x->out);
    x->out.record = -1;
    prof_push("run");
    if (persist_prepare(x, run, err, errlen) != 0)
        goto fail;
    /* a profiled run is a traced one whose events need not be written: its profile comes from
     * the same stamps */
    int traced;
    unsigned long long t_phase;
    traced = run->trace || run->profile;
    x->run_device = x->device_launch && (!traced || x->trace_exec);
    if (traced) {
        CUDA_TRY(cudaMemsetAsync(x->trace_count, 0, sizeof(uint32_t) * (size_t)x->nblocks, x->stream));
        CUDA_TRY(cudaMemsetAsync(x->prof, 0, sizeof(unsigned long long) * (2 + 2 * (size_t)x->d.prog->nrecords),
                                 x->stream));
    }
    /* the ring is empty (no run is in flight: nothing writes it) */
    x->ring->head = 0;
    x->ring->tail = 0;
    x->ring_tail = 0;
    /* no block has said where it stands yet (nothing writes them: no run is in flight) */
    x->hang[0] = '\0';
    for (int b = 0; b < x->nblocks; b++) {
        x->progress[b].record = -1;
        x->progress[b].barrier = -1;
        x->progress[b].iterations = 0;
    }
    CUDA_TRY(cudaMemsetAsync(x->sync, 0, sizeof(persist_sync), x->stream));
    dev_host_track_start(&x->host, run->trace != NULL);
    t_phase = dev_host_ns();
    if (dev_run_begin(&x->d, run, x->stream, err, errlen) != 0)
        goto fail;
    dev_host_span(&x->host, "copy inputs (enqueued)", t_phase);
    t_phase = dev_host_ns();
    persist_start<<<1, 1, 0, x->stream>>>(x->d.state, x->sync, 0, -1, run->max_iters);
    CUDA_LAUNCHED();
    if (x->run_device)
        CUDA_TRY(cudaGraphLaunch(traced ? x->trace_exec : x->main_exec, x->stream));
    else if (launch_paused(x, err, errlen) != 0)
        goto fail;
    dev_host_span(&x->host, x->run_device ? "launch (device graph)" : "launch", t_phase);
    x->in_flight = 1;
    /* device buffers: the result copy follows the launch (all of its tail launches) on the
     * stream and gates itself on the status, so an asynchronous run needs nothing from the
     * host to deliver results */
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
    if (x->captured_run)
        rc = dev_read_published(&x->d, &x->out, err, errlen); /* the application's last replay */
    else if (x->in_flight)
        rc = finish(x, err, errlen);
    *out = x->out;
    return rc;
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
