/* persist_host.cpp: the interpreter's kernel, device/interp_kernel.cuh as the GPU runs
 * it, on host threads with fibers for its CUDA threads (persist_host.h says what for).
 * Compiled with the system C++ compiler with tests/host_cuda first on the include path, so
 * the kernel's headers get the host's stand-in for the CUDA runtime (cuda_runtime.h there,
 * CUDA itself from cuda_host.h).
 *
 * The launcher mirrors device/interp.cu: the same buffers, sized by the same rules (the
 * private copies in each block's shared memory, or in global memory past P_SHARED_PRIV_MAX;
 * the micro-ops after them), the same start of each launch (persist_start), the same reading
 * of the outcome, and the same two ways past a record that ends the launch. */
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_runtime.h"

/* The planted deadlock (persist_host_opts.hold_block): that block spins before the grid barrier
 * at hold_barrier until the launcher lets it go, as a block that never arrives would. */
static volatile int hold_block = -1, hold_barrier = -1;
static void hold_at(int block, int pc)
{
    while (__atomic_load_n(&hold_block, __ATOMIC_ACQUIRE) == block &&
           __atomic_load_n(&hold_barrier, __ATOMIC_ACQUIRE) == pc)
        sched_yield();
}
/* Where each block waits, for the hang catcher in launch (below): the pc of the grid barrier
 * its thread 0 last reached, when it got there, and when it last spun there waiting (the
 * barrier's spin gives the core away through CK_HOST_SPIN on every turn). */
typedef struct host_wait {
    int32_t pc;
    long long since_ms, spun_ms;
} host_wait;
static host_wait host_waits[CK_HOST_MAX_BLOCKS];
static long long host_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}
static void host_arrive(int block, int pc)
{
    __atomic_store_n(&host_waits[block].pc, pc, __ATOMIC_RELEASE);
    __atomic_store_n(&host_waits[block].since_ms, host_ms(), __ATOMIC_RELEASE);
    hold_at(block, pc);
}
static void host_spin(void)
{
    if (ck_host_this_block)
        __atomic_store_n(&host_waits[blockIdx.x].spun_ms, host_ms(), __ATOMIC_RELEASE);
    sched_yield();
}
#undef CK_HOST_SPIN
#define CK_HOST_SPIN() host_spin()
#define P_BEFORE_BARRIER(block, pc) host_arrive((int)(block), (int)(pc))

#include "device/interp_kernel.cuh"
#include "persist_host.h"

/* ==== the launch ========================================================================= */

static_assert(PERSIST_HOST_THREADS == P_THREADS, "persist_host.h gives C the device's block size");
static_assert(PERSIST_HOST_TRACE_CAP == P_TRACE_PER_BLOCK, "persist_host.h gives C the trace's size");
static_assert(sizeof(persist_host_event) == sizeof(persist_event) &&
                  offsetof(persist_host_event, what) == offsetof(persist_event, what) &&
                  offsetof(persist_host_event, t0) == offsetof(persist_event, t0) &&
                  offsetof(persist_host_event, t1) == offsetof(persist_event, t1),
              "persist_host.h gives C the trace event's layout");

/* The graphs a launch's blocks tail-launched (cuda_runtime.h records them): a record's site
 * graph is its pc + 1, the kernel's own graph SELF_GRAPH. Only block 0 launches, and the
 * launcher reads them after joining every block. */
#define SELF_GRAPH ((cudaGraphExec_t)(intptr_t)-1)

typedef struct host_launch {
    const persist_args *args;
    int device_launch;
    uint8_t **smem; /* per block */
} host_launch;

static void block_start(void *arg)
{
    const host_launch *l = (const host_launch *)arg;
    ck_host_smem = l->smem[blockIdx.x];
}

static void kernel_thread(void *arg)
{
    const host_launch *l = (const host_launch *)arg;
    if (l->device_launch)
        persist_kernel<1>(*l->args);
    else
        persist_kernel<0>(*l->args);
}

typedef struct host_run {
    const cfx_prog *prog;
    persist_ring *ring;
    uint8_t *ring_data;
    uint32_t ring_cap;
    unsigned long long tail;
    persist_host_result *r;
    size_t cap_prints;
    int corrupt;
} host_run;

/* The host's drain (interp.cu's drain_ring): the ring's new entries, in order, into the
 * result's prints, unpadded, and their room back to block 0. */
static void drain(host_run *h)
{
    const cfx_prog *p = h->prog;
    unsigned long long head = __atomic_load_n((unsigned long long *)&h->ring->head, __ATOMIC_ACQUIRE);
    if (head - h->tail > h->ring_cap)
        h->corrupt = 1;
    while (!h->corrupt && h->tail < head) {
        uint32_t off = (uint32_t)(h->tail % h->ring_cap);
        persist_print e;
        memcpy(&e, h->ring_data + off, sizeof e);
        if (e.record == -1) {
            h->tail += h->ring_cap - off;
            continue;
        }
        uint32_t need = (uint32_t)sizeof e + ((uint32_t)e.bytes + 7u) / 8u * 8u;
        if (e.record < 0 || e.record >= p->nrecords || p->records[e.record].kind != REC_PRINT ||
            (int64_t)e.bytes != slot_bytes(&p->slots[p->records[e.record].a]) || off + need > h->ring_cap) {
            h->corrupt = 1;
            break;
        }
        persist_host_result *r = h->r;
        if (r->nprints + sizeof e + (size_t)e.bytes > h->cap_prints) {
            h->cap_prints = (h->cap_prints + sizeof e + (size_t)e.bytes) * 2;
            r->prints = (uint8_t *)realloc(r->prints, h->cap_prints);
        }
        memcpy(r->prints + r->nprints, h->ring_data + off, sizeof e + (size_t)e.bytes);
        r->nprints += sizeof e + (size_t)e.bytes;
        h->tail += need;
    }
    __atomic_store_n((unsigned long long *)&h->ring->tail, h->tail, __ATOMIC_RELEASE);
}

/* A hang on a GPU, caught here: a block that has waited HOST_STUCK_MS at a grid barrier, still
 * spinning there, once another block has ended with no stop raised and the barrier's count is not
 * a whole number of barriers (the barrier can never complete: blocks that disagree about the
 * barriers, or a barrier whose count went wrong), or a launch that runs past HOST_LAUNCH_LIMIT_S
 * seconds (opts.limit_ms), far longer than any of the tests. One line names the program's
 * kernel launch and where each block waits; then, with the race detector
 * stopping at a race (the tests' default), the run aborts, as the stand-in's other rules do, so
 * the test fails at once rather than at ctest's TIMEOUT; otherwise the run is stopped with
 * CFX_ERROR, which the comparison reports. A planted deadlock (opts.hold_block) is its test's. */
#define HOST_STUCK_MS 2000
#define HOST_LAUNCH_LIMIT_S 60
static int host_hang(const persist_args *a, const persist_host_opts *o, ck_host_grid *g, long long t0_ms)
{
    const long long now = host_ms();
    const int ended = __atomic_load_n(&g->ended, __ATOMIC_ACQUIRE);
    int stuck = -1;
    const unsigned long long count = __atomic_load_n(&a->sync->bar.arrived, __ATOMIC_ACQUIRE);
    if (ended > 0 && persist_load_status(a->state) == CFX_OK && count % (unsigned)o->nblocks != 0)
        for (int b = 0; b < o->nblocks; b++) {
            const long long since = __atomic_load_n(&host_waits[b].since_ms, __ATOMIC_ACQUIRE);
            const long long spun = __atomic_load_n(&host_waits[b].spun_ms, __ATOMIC_ACQUIRE);
            if (since > 0 && spun >= since && now - spun < 500 && now - since >= HOST_STUCK_MS)
                stuck = b;
        }
    const long long limit_ms = o->limit_ms > 0 ? o->limit_ms : 1000ll * HOST_LAUNCH_LIMIT_S;
    if (stuck < 0 && now - t0_ms < limit_ms)
        return 0;
    char line[1024];
    size_t n = 0;
    if (stuck >= 0)
        n += (size_t)snprintf(line, sizeof line,
                              "persist_host.cpp: a hang (on a GPU): block %d waits at a grid barrier that can never "
                              "complete (%d of %d blocks have ended):",
                              stuck, ended, o->nblocks);
    else
        n += (size_t)snprintf(line, sizeof line,
                              "persist_host.cpp: a hang (on a GPU): the launch ran past %.1f s, far longer than any "
                              "launch of the tests:",
                              limit_ms / 1000.0);
    for (int b = 0; b < o->nblocks && n < sizeof line - 80; b++) {
        const long long since = __atomic_load_n(&host_waits[b].since_ms, __ATOMIC_ACQUIRE);
        const long long spun = __atomic_load_n(&host_waits[b].spun_ms, __ATOMIC_ACQUIRE);
        const int pc = __atomic_load_n(&host_waits[b].pc, __ATOMIC_ACQUIRE);
        if (since > 0 && spun >= since && now - spun < 500)
            n += (size_t)snprintf(line + n, sizeof line - n, " block %d waits at the barrier before record %d;", b, pc);
        else if (since > 0)
            n += (size_t)snprintf(line + n, sizeof line - n, " block %d passed the barrier before record %d;", b, pc);
        else
            n += (size_t)snprintf(line + n, sizeof line - n, " block %d has passed no barrier;", b);
    }
    if (n > 0 && line[n - 1] == ';')
        line[n - 1] = '\0';
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
    if (ck_race_enabled() == 1)
        abort();
    atomicCAS((int *)&a->state->status, (int)CFX_OK, (int)CFX_ERROR);
    ((dev_control *)a->control)->cancel = 1; /* a loop that never ends stops at its next poll */
    return 1;
}

/* One launch of nblocks blocks of `threads` threads; the host drains the ring until every
 * block has ended. */
static int launch(const persist_args *a, const persist_host_opts *o, int threads, uint8_t **smem, host_run *h)
{
    host_launch l = {a, o->device_launch, smem};
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_host_grid g;
    memset(&g, 0, sizeof g);
    g.blocks = (unsigned)o->nblocks;
    g.threads = (unsigned)threads;
    g.order = o->order;
    g.seed = o->seed + (unsigned long long)h->r->launches;
    g.kernel = kernel_thread;
    g.block_start = block_start;
    g.arg = &l;
    ck_host_ntails = 0;
    ck_host_current_graph = SELF_GRAPH;
    memset(host_waits, 0, sizeof host_waits);
    const long long t0_ms = host_ms();
    int hung = 0;
    int rc = ck_host_grid_start(&g);
    if (rc != 0) /* the blocks started wait at the first barrier for the missing ones: stop the run */
        atomicCAS((int *)&a->state->status, (int)CFX_OK, (int)CFX_ERROR);
    while (ck_host_grid_running(&g)) {
        drain(h);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double ms = (double)(now.tv_sec - t0.tv_sec) * 1e3 + (double)(now.tv_nsec - t0.tv_nsec) / 1e6;
        /* the deadlock settled: every block but the held one says it waits at a barrier (a
         * block says so after a long wait; on a loaded machine that may take a while), or 20 s */
        int waiting = 0;
        for (int b = 0; o->report_ms > 0 && a->progress && b < o->nblocks; b++)
            waiting += b != o->hold_block && a->progress[b].barrier >= 0;
        if (o->report_ms > 0 && !h->r->hang[0] && ms >= o->report_ms &&
            (waiting == o->nblocks - 1 || ms >= o->report_ms + 20000)) {
            /* session.cu at a cancel: the report from the progress words, while the blocks
             * still stand where they are; then the cancel, and the held block let go */
            exec_format_hang(h->prog, a->progress, o->nblocks, h->r->hang, sizeof h->r->hang);
            ((dev_control *)a->control)->cancel = 1;
            __atomic_store_n(&hold_block, -1, __ATOMIC_RELEASE);
        }
        if (!hung && !(o->report_ms > 0 && o->hold_block >= 0))
            hung = host_hang(a, o, &g, t0_ms);
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    ck_host_grid_join(&g);
    drain(h);
    return rc;
}

/* interp.cu's persist_start: the state running, a fresh barrier, where to start. */
static void start_launch(dev_state *state, persist_sync *sync, int32_t pc, int64_t max_iters)
{
    state->status = CFX_OK;
    state->record = -1;
    sync->bar.arrived = 0;
    sync->start_pc = pc;
    sync->start_region = -1;
    sync->max_iters = max_iters;
}

static void *zalloc16(size_t n)
{
    size_t size = (n + 15) / 16 * 16 + 16;
    void *p = aligned_alloc(16, size);
    if (p)
        memset(p, 0, size);
    return p;
}

extern "C" int persist_host_run(const cfx_prog *p, const sched_plan *plan, const persist_host_opts *o,
                                persist_host_result *r)
{
    const int nb = o->nblocks, threads = o->threads ? o->threads : P_THREADS;
    const mop_prog *mops = o->mops && o->mops->ncode > 0 ? o->mops : NULL;
    uint8_t *smem[16] = {0};
    persist_args a;
    host_run h;
    size_t smem_bytes, max_print = 0;
    int rc = -1;
    memset(r, 0, sizeof *r);
    memset(&a, 0, sizeof a);
    memset(&h, 0, sizeof h);
    if (nb < 1 || nb > 16 || threads < 32 || threads > P_THREADS || threads % 32 != 0)
        return -1;

    /* the arena, with the constants and the inputs */
    r->arena = (uint8_t *)zalloc16((size_t)p->arena_bytes);
    if (!r->arena)
        return -1;
    if (p->const_bytes > 0)
        memcpy(r->arena, p->consts, (size_t)p->const_bytes);
    if (o->init)
        o->init(p, r->arena);

    /* interp.cu's persist_create */
    smem_bytes = plan->priv_bytes <= P_SHARED_PRIV_MAX ? (size_t)plan->priv_bytes : 0;
    if (mops)
        smem_bytes = (size_t)mops->code_offset + sizeof(mop) * (size_t)mops->ncode;
    for (int i = 0; i < nb; i++)
        smem[i] = (uint8_t *)zalloc16(smem_bytes);
    a.records = p->records;
    a.slots = p->slots;
    a.table = p->table;
    a.arena = r->arena;
    a.flags = plan->flags;
    a.region_exit = plan->region_exit;
    a.priv_offset = plan->priv_offset;
    a.replicas = plan->replicas;
    a.batch_next = plan->batch_next;
    a.batch_head = plan->batch_head;
    a.nreplicas = plan->nreplicas;
    a.nslots = p->nslots;
    a.priv_bytes = plan->priv_bytes;
    a.priv_global = smem_bytes == 0 && plan->priv_bytes > 0
                        ? (uint8_t *)zalloc16((size_t)nb * (size_t)plan->priv_bytes)
                        : NULL;
    a.priv_shared = a.priv_global == NULL;
    a.publish = (uint8_t *)zalloc16(2 * (size_t)(plan->priv_bytes > 0 ? plan->priv_bytes : 16));
    a.partials = (k_acc *)zalloc16(2 * SCHED_BATCH_MAX * sizeof(k_acc) * (size_t)nb);
    a.state = (dev_state *)zalloc16(sizeof(dev_state));
    a.control = (const dev_control *)zalloc16(sizeof(dev_control));
    a.sync = (persist_sync *)zalloc16(sizeof(persist_sync));
    for (int32_t i = 0; i < p->nrecords; i++)
        if (p->records[i].kind == REC_PRINT) {
            size_t bytes = (size_t)slot_bytes(&p->slots[p->records[i].a]);
            max_print = bytes > max_print ? bytes : max_print;
        }
    {
        size_t least = 2 * (sizeof(persist_print) + (max_print + 7) / 8 * 8);
        size_t cap = o->ring_cap ? (size_t)o->ring_cap : P_PRINT_BYTES;
        cap = (cap + 7) / 8 * 8;
        a.ring_cap = (uint32_t)(cap > least ? cap : least);
    }
    a.ring = (persist_ring *)zalloc16(sizeof(persist_ring));
    a.ring_data = (uint8_t *)zalloc16(a.ring_cap);
    cudaGraphExec_t *sites = (cudaGraphExec_t *)calloc((size_t)p->nrecords + 1, sizeof *sites);
    for (int32_t i = 0; sites && i < p->nrecords; i++)
        if (plan->flags[i] & SCHED_F_LAUNCH)
            sites[i] = (cudaGraphExec_t)(intptr_t)(i + 1);
    a.site_exec = sites;
    if (mops) {
        a.mop_image = mops->image;
        a.mop_image_bytes = mops->image_bytes;
        a.mop_code_offset = mops->code_offset;
        a.mop_entry = mops->entry;
    }
    a.trace_cap = P_TRACE_PER_BLOCK;
    exec_progress progress[16];
    for (int i = 0; i < 16; i++) {
        progress[i].record = -1;
        progress[i].barrier = -1;
        progress[i].iterations = 0;
    }
    a.progress = progress;
    {
        const int planted = o->report_ms > 0 && o->hold_block >= 0;
        __atomic_store_n(&hold_barrier, planted ? (int)o->hold_barrier : -1, __ATOMIC_RELEASE);
        __atomic_store_n(&hold_block, planted ? o->hold_block : -1, __ATOMIC_RELEASE);
    }
    if (o->trace) { /* interp.cu's persist_run: the buffers, the counts zeroed once per run */
        r->trace = (persist_host_event *)zalloc16(sizeof(persist_event) * (size_t)nb * P_TRACE_PER_BLOCK);
        a.trace = (persist_event *)r->trace;
        a.trace_count = r->trace_count;
        r->prof = (unsigned long long *)zalloc16(sizeof(unsigned long long) * (2 + 2 * (size_t)p->nrecords));
        a.prof = r->prof;
        if (!a.trace || !a.prof)
            goto done;
    }
    for (int i = 0; i < nb; i++)
        if (!smem[i])
            goto done;
    if ((smem_bytes == 0 && plan->priv_bytes > 0 && !a.priv_global) || !a.publish || !a.partials || !a.state ||
        !a.control || !a.sync || !a.ring || !a.ring_data || !sites)
        goto done;

    /* interp.cu's persist_run and session.cu's dev_session_finish */
    h.prog = p;
    h.ring = a.ring;
    h.ring_data = a.ring_data;
    h.ring_cap = a.ring_cap;
    h.r = r;
    start_launch(a.state, a.sync, 0, o->max_iters);
    for (;;) {
        r->launches++;
        if (launch(&a, o, threads, smem, &h) != 0 || h.corrupt)
            goto done;
        int32_t site = -1;
        if (!o->device_launch && a.state->status == P_STATUS_PAUSE) {
            site = a.sync->resume_pc;
        } else if (o->device_launch && ck_host_ntails > 0) {
            /* the site's graph, then the kernel's own, which starts where block 0 said */
            if (ck_host_ntails != 2 || ck_host_tails[1] != SELF_GRAPH || ck_host_tails[0] == SELF_GRAPH)
                goto done;
            site = (int32_t)((intptr_t)ck_host_tails[0] - 1);
            if (a.sync->start_pc != site + 1)
                goto done;
        } else {
            break;
        }
        if (site < 0 || site >= p->nrecords || !(plan->flags[site] & SCHED_F_LAUNCH))
            goto done;
        r->sites++;
        if (!o->site || o->site(o->site_user, &p->records[site], r->arena) != 0) {
            /* a CALL that fails stops the run there with CFX_ERROR, as every executor does */
            a.state->status = CFX_ERROR;
            a.state->record = site;
            a.state->detail[0] = a.state->detail[1] = 0;
            break;
        }
        if (!o->device_launch)
            start_launch(a.state, a.sync, site + 1, o->max_iters);
    }
    /* dev_read_outcome */
    r->out.status = (cfx_status)a.state->status;
    r->out.record = a.state->status == CFX_OK ? -1 : a.state->record;
    r->out.detail[0] = a.state->detail[0];
    r->out.detail[1] = a.state->detail[1];
    r->out.iterations = (int64_t)a.state->iterations;
    rc = 0;
done:
    for (int i = 0; i < nb; i++)
        free(smem[i]);
    free(a.priv_global);
    free(a.publish);
    free(a.partials);
    free(a.state);
    free((void *)a.control);
    free(a.sync);
    free((void *)a.ring);
    free(a.ring_data);
    free(sites);
    return rc;
}

extern "C" unsigned long long persist_host_race_checks(void)
{
    return ck_race_hooks;
}
