/* test_sched.c: the persistent executor's scheduling logic (host/gen/plan.c, device/scheduler.h) on
 * CPU threads.
 *
 * A replica of the device dispatch loop runs programs with one pthread per "block": each
 * takes its share of every split record through sched_share, keeps private copies of
 * one-element slots, asks sched_arrive what to do at each record, and meets the others at
 * a grid barrier (the device's algorithm) exactly where the plan says the device passes
 * one. A run is a chain of launches as on the device: a record whose work the kernel does
 * not do (a CALL, a product launched as a cuBLAS graph) ends the launch, its work runs on
 * the arena, and the next launch, whose threads reload their private copies from the
 * arena, starts at the record after it; both paths of the executor are modelled (the
 * device's tail-launch chain, and pause and relaunch). Prints go to a small ring that a
 * host thread drains while the blocks run. Status polls at a TICK are timed as on the
 * device, and block 0's first poll of every launch is made as late as it can be. The op
 * arithmetic is kernels/'s bodies.
 * Checks: hand-built programs against sequential computations in plain C for 1, 4 and 7
 * blocks; the plan has the barriers a reader of the program can see are needed (a
 * reduction's combine, a cross-block read after a split write, a write after a cross-block
 * read around a loop, the entry of a one-block loop) and ends launches where it must;
 * compiled programs (every example graph, programs with kernel calls, launched and inline
 * products and prints, a few hundred generated programs with kernel calls in loops,
 * branches, before break and return) against the cpu executor on both paths: status,
 * position, iterations, prints, kernel calls and results; every block takes the same
 * branches; a cancel stops every block; and, outside TSan, that the run goes wrong when the
 * cross-block read's barrier is removed. Under -DCFX_TSAN=ON a missing barrier shows up as
 * a race report.
 * `test_sched --files F.cfx ...` compares the graphs of those files alone, both ways.
 * Beside the replica, the same comparisons run the kernel itself, device/interp_kernel.cuh,
 * on host threads (persist_host.cpp): 2 to 5 blocks of 256 threads each (fibers, the CUDA
 * threads of tests/cuda_host.h: the block reduction's tree, the tiled products, the warp-per-row
 * products and the micro-ops' named barrier run as on the device), both paths, with and without
 * micro-ops, the threads of a block run forward, in reverse or shuffled in turn between their
 * barriers. CFX_STANDIN_SWEEP=1 runs every one of them in all three orders (three times as long).
 * Not under TSan, which does not follow the kernel's fences.
 *
 * Sized for the README's test command (two loaded cores): 40 generated programs of each kind,
 * and the kernel on host threads in one of its four ways per graph, in turn, for one generated
 * program in four. `test_sched --stress` (label stress: CFX_STRESS=1 ctest -L stress) is the
 * deep sweep: 200 of each kind, and the kernel in all four ways on every graph.
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/front/compile.h"
#include "host/runtime/exec.h"
#include "gen_programs.h"
#include "kernels/kernels.h"
#include "device/microops.h"
#include "host/program/program.h"
#include "device/scheduler.h"
#include "testutil.h"
#ifdef CFX_PERSIST_HOST
#include "persist_host.h"
#endif

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

/* The kernel itself on host threads (persist_host.cpp), where it was built; not under TSan,
 * which does not follow the kernel's fences. */
#if defined(CFX_PERSIST_HOST) && !defined(UNDER_TSAN)
#define RUN_KERNEL 1
#endif

/* ==== building small programs by hand ====================================================== */

#define MAXREC 64
#define MAXSLOT 32

typedef struct tprog {
    cfx_prog p;
    cfx_record rec[MAXREC];
    cfx_slot slot[MAXSLOT];
    int32_t table[16];
    uint8_t consts[256];
    int64_t top; /* next free arena byte */
} tprog;

static void tp_init(tprog *t)
{
    memset(t, 0, sizeof *t);
    t->p.name = (char *)"test";
    t->p.file = (char *)"test.cfx";
    t->p.records = t->rec;
    t->p.slots = t->slot;
    t->p.table = t->table;
    t->p.consts = t->consts;
}

static int32_t tp_slot(tprog *t, int dtype, int64_t count, int kind)
{
    int32_t s = t->p.nslots++;
    cfx_slot *sl = &t->slot[s];
    sl->dtype = (uint8_t)dtype;
    sl->rank = count == 1 ? 0 : 1;
    sl->kind = (uint8_t)kind;
    sl->name = -1;
    sl->dims[0] = (int32_t)(count == 1 ? 1 : count);
    sl->count = count;
    sl->offset = t->top;
    t->top += (count * dtype_size(dtype) + 15) / 16 * 16;
    t->p.arena_bytes = t->top;
    return s;
}

/* Consts come first, before any other slot, so they lie below const_bytes. */
static int32_t tp_const_i32(tprog *t, int32_t v)
{
    int32_t s = tp_slot(t, CFX_I32, 1, SLOT_CONST);
    memcpy(t->consts + t->slot[s].offset, &v, 4);
    t->p.const_bytes = t->top;
    return s;
}

static int32_t tp_emit(tprog *t, int kind, int op, int dtype, int32_t a, int32_t b, int32_t c)
{
    int32_t i = t->p.nrecords++;
    cfx_record *r = &t->rec[i];
    memset(r, 0, sizeof *r);
    r->kind = (uint8_t)kind;
    r->op = (uint8_t)op;
    r->dtype = (uint8_t)dtype;
    r->a = a;
    r->b = b;
    r->c = c;
    r->line = i + 1;
    return i;
}

/* ==== the replica of the device loop ======================================================= */
/* One run is a chain of launches, as on the device: a launch ends at HALT, at a stop, or at
 * a record whose work the kernel does not do (SCHED_F_LAUNCH: a CALL, a product launched as
 * a cuBLAS graph). Then that work runs on the arena (the kernel's cpu_fn, the product as
 * k_matmul computes it) and the next launch starts at the record after it. Both paths of
 * the executor are modelled: device graph launch, where block 0 leaves the next start
 * point in the shared state and "tail-launches" the record's work and then the kernel, the
 * status staying ok; and pause and relaunch, where every block raises the internal pause
 * status and the host reads where it paused. Every launch starts new threads, which load
 * their private copies from the arena, so a block 0 that ends a launch without writing its
 * copies back loses them, as it would on the device.
 *
 * Prints go to a ring of a few entries (the device's is host-mapped) that a host thread
 * drains while the blocks run, slowly on purpose, so that block 0 often waits for room.
 *
 * Status polls are timed as on the device: a block reads the run's status at a TICK only
 * every SCHED_POLL_NS, the first TICK of a launch included, and block 0 first reads the
 * host's cancel flag, a slow read across PCIe on the device. The replica makes block 0's
 * first poll of every launch as late as it can be: it waits until another block has
 * stopped or paused the run, or until no other block can move without block 0. */

#define MAXBLOCKS 8
#define MAXLOG 256

/* How a block's walk of one launch ended. */
enum { END_HALT, END_STOP, END_LEFT }; /* HALT; at its own stop or pause; it left because another block stopped the run */

typedef struct replica {
    const cfx_prog *prog;
    const sched_plan *plan;
    const exec_kernel *kernels;     /* prog->nkernels entries (NULL: every CALL fails) */
    const mop_prog *mops;           /* block 0 runs the one-block loops' micro-ops; NULL: records */
    int nblocks;
    int64_t max_iters;
    int device_launch;              /* 1: the tail-launch chain; 0: pause and relaunch */
    uint32_t ring_cap;              /* bytes of the print ring, a multiple of 8 */
    int32_t ablate_pc;              /* skip the barrier before this record, slow the others */
    uint8_t *arena;                 /* shared by all blocks */
    uint8_t *priv[MAXBLOCKS];       /* each block's private copies */
    uint8_t *publish[2];            /* block 0's copies at a region's exit */
    k_acc partials[2][SCHED_BATCH_MAX][MAXBLOCKS]; /* split reductions, by batch */
    /* one launch: the grid barrier (the device's algorithm with C11 atomics: an arrival
     * count and a generation; a stop releases the waiters) and the run's state */
    int32_t start_pc, start_region;
    atomic_uint arrived;
    atomic_uint gen;
    atomic_int idle;                /* blocks waiting in a barrier or done with the launch */
    atomic_int status;              /* CFX_OK, a stop or SCHED_STATUS_PAUSE; the first wins */
    atomic_int cancel;              /* the host's cancel flag */
    int32_t record;                 /* written by the block whose stop won */
    int64_t detail[2];
    int32_t resume_pc, resume_region; /* pause path: where the launch ended */
    int32_t next_pc;                /* device graph launch: where the next launch starts, -1: none */
    int32_t tail_site;              /* and the record whose work runs before it */
    uint64_t pub_iters[2];          /* block 0's iterations beside its published copies */
    atomic_ullong iters;            /* the run's iterations: at a launch's end, the max of the blocks' */
    atomic_int progress;            /* a block has counted an iteration (for cancel_after_ms) */
    /* the print ring: block 0 puts, the host's drain thread takes */
    uint8_t *ring;
    atomic_ullong ring_head, ring_tail;
    unsigned long long print_head;  /* block 0's head at a launch's end (persist_sync's) */
    atomic_int drain_stop;
    /* the run, for the checks */
    exec_outcome out;
    int launches, sites_run, ring_waits;
    int mop_calls;                  /* times block 0 entered micro-ops */
    uint8_t *prints;                /* every print (record, bytes, value) in order, unpadded */
    size_t nprints, cap_prints;
    int64_t executed[MAXBLOCKS];    /* records run per block, all launches */
    int32_t log[MAXBLOCKS][MAXLOG]; /* pc of every branch taken outside regions */
    int nlog[MAXBLOCKS];
    int end[MAXBLOCKS];             /* END_* of the last launch */
    int32_t end_pc[MAXBLOCKS];      /* where the block ended it */
    uint64_t iterations[MAXBLOCKS]; /* the block's count at the end of the last launch */
    int barriers[MAXBLOCKS];        /* grid barriers passed */
} replica;

/* One block's walk of one launch. */
typedef struct walker {
    replica *rp;
    int block;
    uint64_t iters;
    unsigned long long ring_head;   /* block 0's */
    uint64_t last_poll;             /* 0: the first poll of the launch is due */
    mop_state mst;                  /* block 0's micro-op state (its clock count lasts a launch) */
    sched_cursor c;
} walker;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static uint8_t *slot_addr(replica *rp, int block, int32_t s)
{
    int32_t off = rp->plan->priv_offset[s];
    if (off >= 0)
        return rp->priv[block] + off;
    return rp->arena + rp->prog->slots[s].offset;
}

/* raise_stop: the first stop wins and writes where it was. */
static void raise_stop(replica *rp, int status, int32_t pc, int64_t d0, int64_t d1, int32_t region)
{
    int ok = CFX_OK;
    if (atomic_compare_exchange_strong(&rp->status, &ok, status)) {
        rp->record = pc;
        rp->detail[0] = d0;
        rp->detail[1] = d1;
        if (status == SCHED_STATUS_PAUSE) {
            rp->resume_pc = pc;
            rp->resume_region = region;
        }
    }
}

/* Block 0's read of the host's cancel flag (poll_cancel). `late`: the first poll of a
 * launch, made as slow as it can be (see the section's comment). */
static void poll_cancel(walker *w, int32_t pc, int late)
{
    replica *rp = w->rp;
    if (late) {
        uint64_t t0 = now_ns();
        while (atomic_load(&rp->status) == CFX_OK && atomic_load(&rp->idle) < rp->nblocks - 1 &&
               now_ns() - t0 < 2000000000ull)
            sched_yield();
    }
    if (atomic_load(&rp->cancel))
        raise_stop(rp, CFX_STOP_CANCELLED, pc, 0, 0, -1);
}

/* Returns 1 when the run was stopped or paused by a block that will not arrive: leave. The
 * same steps as grid_barrier in device/interp_kernel.cuh: read the generation, arrive;
 * the last to arrive resets the count and bumps the generation; the others spin on the
 * generation and on the run's status, block 0 polling the cancel flag every 64 spins. (The
 * device's fences are the seq_cst order of these atomics.) */
static int grid_barrier(walker *w, int32_t pc)
{
    replica *rp = w->rp;
    unsigned gen = atomic_load(&rp->gen);
    int left = 0;
    if (atomic_fetch_add(&rp->arrived, 1u) == (unsigned)rp->nblocks - 1) {
        atomic_store(&rp->arrived, 0u);
        atomic_fetch_add(&rp->gen, 1u);
    } else {
        unsigned spins = 0;
        atomic_fetch_add(&rp->idle, 1);
        while (atomic_load(&rp->gen) == gen) {
            if (atomic_load(&rp->status) != CFX_OK) {
                left = atomic_load(&rp->gen) == gen; /* a barrier that completed is passed */
                break;
            }
            if (w->block == 0 && (++spins & 63u) == 0)
                poll_cancel(w, pc, 0);
            sched_yield();
        }
        atomic_fetch_sub(&rp->idle, 1);
    }
    if (!left)
        rp->barriers[w->block]++;
    return left;
}

static void store_private(replica *rp)
{
    const cfx_prog *p = rp->prog;
    for (int32_t s = 0; s < p->nslots; s++)
        if (rp->plan->priv_offset[s] >= 0)
            memcpy(rp->arena + p->slots[s].offset, slot_addr(rp, 0, s), (size_t)slot_bytes(&p->slots[s]));
}

/* ring_put: the entry (the device's: (record, bytes), then the bytes padded to 8) at block
 * 0's head, after a wrap marker where it would not fit before the ring's end; waits while
 * the ring is full, watching the status and polling the cancel flag. 1: the run was
 * stopped meanwhile. */
static int ring_put(walker *w, int32_t pc, const uint8_t *src, uint32_t bytes)
{
    replica *rp = w->rp;
    uint32_t need = 8u + (bytes + 7u) / 8u * 8u;
    unsigned long long at = w->ring_head;
    uint32_t off = (uint32_t)(at % rp->ring_cap);
    unsigned long long end = at + need + (off + need > rp->ring_cap ? rp->ring_cap - off : 0);
    int waited = 0;
    while (end - atomic_load_explicit(&rp->ring_tail, memory_order_acquire) > rp->ring_cap) {
        if (sched_status_ends_walk(atomic_load(&rp->status)))
            return 1;
        poll_cancel(w, pc, 0);
        waited = 1;
        sched_yield();
    }
    rp->ring_waits += waited;
    if (off + need > rp->ring_cap) {
        int32_t wrap[2] = {-1, 0};
        memcpy(rp->ring + off, wrap, 8);
        at += rp->ring_cap - off;
        off = 0;
    }
    int32_t h[2] = {pc, (int32_t)bytes};
    memcpy(rp->ring + off, h, 8);
    memcpy(rp->ring + off + 8, src, bytes);
    w->ring_head = at + need;
    atomic_store_explicit(&rp->ring_head, w->ring_head, memory_order_release);
    return 0;
}

/* A TICK's look at the run (REC_TICK, and a micro-op TICK whose clock is due): every
 * SCHED_POLL_NS, block 0 first reading the host's cancel flag. 1: the walk ends. */
static int tick_poll(walker *w, int32_t pc)
{
    replica *rp = w->rp;
    uint64_t t = now_ns();
    if (w->last_poll == 0 || t - w->last_poll >= SCHED_POLL_NS) {
        if (w->block == 0)
            poll_cancel(w, pc, w->last_poll == 0);
        w->last_poll = t;
        if (sched_status_ends_walk(atomic_load(&rp->status)))
            return 1;
    }
    return 0;
}

/* What the walk does after a record: go on at a pc (>= 0), or end. */
#define NEXT_HALT (-1)
#define NEXT_STOP (-2) /* this block raised (or met) a stop or a pause here */
#define NEXT_SITE (-4) /* the record's work runs between this launch and the next */
#define NEXT_LEFT (-3) /* another block stopped the run */

/* What a block does for one record, with the shares of (sb, sn): sched_block/sched_nblocks. */
static int32_t run_record(walker *w)
{
    replica *rp = w->rp;
    sched_cursor *c = &w->c;
    const int block = w->block;
    const cfx_prog *p = rp->prog;
    const cfx_record *r = &p->records[c->pc];
    const cfx_slot *sl = p->slots;
    unsigned f = rp->plan->flags[c->pc];
    int32_t sb = sched_block(c), sn = sched_nblocks(c);
    int64_t lo = 0, hi = 0;
    int split = (f & SCHED_F_SPLIT) != 0;
    int64_t dom = sched_domain(r, sl);

    if (dom > 0) {
        if (split || (f & SCHED_F_COMBINE))
            sched_share(dom, sb, sn, &lo, &hi);
        else
            hi = dom; /* redundant: every block all of it, into its private copy */
    }
    if (rp->ablate_pc >= 0 && block != 0 && split && c->region < 0)
        nap_ms(50); /* make a missing barrier visible: the others' shares arrive late */

    switch (r->kind) {
    case REC_HALT:
        if (block == 0)
            store_private(rp);
        return NEXT_HALT;
    case REC_JUMP:
    case REC_JUMP_FALSE:
    case REC_JUMP_TRUE:
    case REC_SWITCH: {
        int64_t v = r->kind == REC_JUMP ? 0 : k_load_int(sl[r->a].dtype, slot_addr(rp, block, r->a));
        int32_t next = sched_next_pc(r, c->pc, p->table, v);
        if (c->region < 0 && rp->nlog[block] < MAXLOG)
            rp->log[block][rp->nlog[block]++] = next;
        return next;
    }
    case REC_TICK: {
        if (tick_poll(w, c->pc))
            return NEXT_LEFT;
        if (sched_tick(&w->iters, rp->max_iters)) {
            raise_stop(rp, CFX_STOP_LIMIT, c->pc, rp->max_iters, 0, -1);
            return NEXT_STOP;
        }
        if (w->iters > 0)
            atomic_store(&rp->progress, 1);
        return c->pc + 1;
    }
    case REC_BINARY:
        k_binary(r->op, r->dtype, slot_addr(rp, block, r->a), slot_addr(rp, block, r->b),
                 sl[r->b].count, slot_addr(rp, block, r->c), sl[r->c].count, lo, hi);
        return c->pc + 1;
    case REC_IOTA:
        k_iota(sl[r->a].dtype, slot_addr(rp, block, r->a), lo, hi);
        return c->pc + 1;
    case REC_COPY: {
        int64_t size = dtype_size(sl[r->a].dtype);
        k_copy_bytes(slot_addr(rp, block, r->a), slot_addr(rp, block, r->b), lo * size, hi * size);
        return c->pc + 1;
    }
    case REC_GET_ROW: {
        int64_t size = dtype_size(sl[r->a].dtype);
        int64_t row = k_row_index(k_load_int(sl[r->c].dtype, slot_addr(rp, block, r->c)), sl[r->b].dims[0]);
        const uint8_t *src = slot_addr(rp, block, r->b) + row * sl[r->a].count * size;
        k_copy_bytes(slot_addr(rp, block, r->a), src, lo * size, hi * size);
        return c->pc + 1;
    }
    case REC_REDUCE:
    case REC_DOT: {
        /* a split reduction and its batch: partials, a grid barrier, then every block merges
         * them all in block order; a reduction of an earlier batch has nothing left to do */
        const int combine = (f & SCHED_F_COMBINE) && c->region < 0;
        k_acc acc[SCHED_BATCH_MAX];
        int32_t batch[SCHED_BATCH_MAX];
        int nbatch = 0;
        if (combine && rp->plan->batch_head[c->pc] >= 0)
            return c->pc + 1;
        for (int32_t q = c->pc; q >= 0 && nbatch < SCHED_BATCH_MAX; q = combine ? rp->plan->batch_next[q] : -1) {
            const cfx_record *rq = &p->records[q];
            int dt = sl[rq->b].dtype, op = rq->kind == REC_DOT ? OP_SUM : rq->op;
            int64_t qlo = 0, qhi = sl[rq->b].count; /* whole: redundant, or block 0 alone in a region */
            if (combine)
                sched_share(sl[rq->b].count, sb, sn, &qlo, &qhi);
            acc[nbatch] = k_reduce_init(op, dt);
            if (rq->kind == REC_DOT)
                k_dot_range(dt, &acc[nbatch], slot_addr(rp, block, rq->b), slot_addr(rp, block, rq->c), qlo, qhi);
            else
                k_reduce_range(op, dt, &acc[nbatch], slot_addr(rp, block, rq->b), qlo, qhi);
            batch[nbatch++] = q;
        }
        if (combine) {
            for (int k = 0; k < nbatch; k++)
                rp->partials[c->combines & 1][k][block] = acc[k];
            if (grid_barrier(w, c->pc))
                return NEXT_LEFT;
            for (int k = 0; k < nbatch; k++) {
                const cfx_record *rq = &p->records[batch[k]];
                int dt = sl[rq->b].dtype, op = rq->kind == REC_DOT ? OP_SUM : rq->op;
                acc[k] = k_reduce_init(op, dt);
                for (int b = 0; b < rp->nblocks; b++)
                    k_reduce_merge(op, dt, &acc[k], &rp->partials[c->combines & 1][k][b]);
            }
            c->combines++;
        }
        for (int k = 0; k < nbatch; k++) {
            const cfx_record *rq = &p->records[batch[k]];
            int dt = sl[rq->b].dtype, op = rq->kind == REC_DOT ? OP_SUM : rq->op;
            if (rq->kind == REC_DOT)
                k_dot_finish(dt, &acc[k], slot_addr(rp, block, rq->a));
            else
                k_reduce_finish(op, dt, &acc[k], sl[rq->b].count, slot_addr(rp, block, rq->a));
        }
        return c->pc + 1;
    }
    case REC_UNARY:
        k_unary(r->op, sl[r->b].dtype, slot_addr(rp, block, r->a), slot_addr(rp, block, r->b), lo, hi);
        return c->pc + 1;
    case REC_FILL:
        k_fill(sl[r->a].dtype, slot_addr(rp, block, r->a), slot_addr(rp, block, r->b), lo, hi);
        return c->pc + 1;
    case REC_CAST:
        k_cast(sl[r->a].dtype, slot_addr(rp, block, r->a), sl[r->b].dtype, slot_addr(rp, block, r->b), lo, hi);
        return c->pc + 1;
    case REC_WHERE:
        k_where(sl[r->a].dtype, slot_addr(rp, block, r->a), slot_addr(rp, block, r->b), sl[r->b].count,
                slot_addr(rp, block, r->c), sl[r->c].count, slot_addr(rp, block, r->d), sl[r->d].count,
                lo, hi);
        return c->pc + 1;
    case REC_TRANSPOSE:
        k_transpose(sl[r->a].dtype, slot_addr(rp, block, r->a), slot_addr(rp, block, r->b),
                    sl[r->b].dims[0], sl[r->b].dims[1], lo, hi);
        return c->pc + 1;
    case REC_SET_ROW: {
        int64_t size = dtype_size(sl[r->a].dtype), len = sl[r->a].count / sl[r->a].dims[0];
        int64_t row = k_row_index(k_load_int(sl[r->b].dtype, slot_addr(rp, block, r->b)), sl[r->a].dims[0]);
        k_copy_bytes(slot_addr(rp, block, r->a) + row * len * size, slot_addr(rp, block, r->c),
                     lo * size, hi * size);
        return c->pc + 1;
    }
    case REC_GET_BOX:
    case REC_SET_BOX: {
        int get = r->kind == REC_GET_BOX;
        const cfx_slot *t = &sl[get ? r->b : r->a];
        const int32_t *ent = p->table + r->c;
        int64_t st[CFX_MAX_RANK] = {0};
        for (int d = 0; d < t->rank; d++)
            if (ent[2 * d] >= 0)
                st[d] = k_load_int(sl[ent[2 * d]].dtype, slot_addr(rp, block, ent[2 * d]));
        k_box bx = rec_box(ent, t, st);
        k_box_copy(!get, dtype_size(t->dtype), slot_addr(rp, block, r->a), slot_addr(rp, block, r->b), &bx, lo, hi);
        return c->pc + 1;
    }
    case REC_BROADCAST: {
        k_bshape sh = rec_bshape(&sl[r->a], &sl[r->b]);
        k_broadcast(dtype_size(sl[r->a].dtype), slot_addr(rp, block, r->a), slot_addr(rp, block, r->b), &sh,
                    lo, hi);
        return c->pc + 1;
    }
    case REC_GATHER: {
        int64_t m, n, inner;
        rec_gather(sl, r, &m, &n, &inner);
        k_gather(dtype_size(sl[r->a].dtype), slot_addr(rp, block, r->a), slot_addr(rp, block, r->b),
                 sl[r->c].dtype, slot_addr(rp, block, r->c), m, n, inner, lo, hi);
        return c->pc + 1;
    }
    case REC_PERMUTE: {
        k_pshape sh = rec_pshape(sl, r);
        k_permute(dtype_size(sl[r->a].dtype), slot_addr(rp, block, r->a), slot_addr(rp, block, r->b), &sh, lo, hi);
        return c->pc + 1;
    }
    case REC_REDUCE_AXIS: {
        int64_t n, inner;
        rec_reduce_axis(sl, r, &n, &inner);
        k_reduce_axis(r->op, r->dtype, slot_addr(rp, block, r->a), slot_addr(rp, block, r->b), n, inner, lo, hi);
        return c->pc + 1;
    }
    case REC_GET_ITEM: {
        int64_t size = dtype_size(sl[r->a].dtype);
        int64_t item = k_item_index(k_load_int(sl[r->c].dtype, slot_addr(rp, block, r->c)),
                                    k_load_int(sl[r->d].dtype, slot_addr(rp, block, r->d)), sl[r->b].dims[0]);
        const uint8_t *src = slot_addr(rp, block, r->b) + item * sl[r->a].count * size;
        k_copy_bytes(slot_addr(rp, block, r->a), src, lo * size, hi * size);
        return c->pc + 1;
    }
    case REC_SET_ITEM: {
        int64_t size = dtype_size(sl[r->a].dtype);
        int64_t item = k_item_index(k_load_int(sl[r->b].dtype, slot_addr(rp, block, r->b)),
                                    k_load_int(sl[r->d].dtype, slot_addr(rp, block, r->d)), sl[r->a].dims[0]);
        k_copy_bytes(slot_addr(rp, block, r->a) + item * sl[r->c].count * size, slot_addr(rp, block, r->c),
                     lo * size, hi * size);
        return c->pc + 1;
    }
    case REC_CHECK_BOUND: {
        int64_t va = k_load_int(sl[r->a].dtype, slot_addr(rp, block, r->a));
        int64_t vb = k_load_int(sl[r->b].dtype, slot_addr(rp, block, r->b));
        if (!k_bound_ok(r->d, va, vb)) {
            raise_stop(rp, CFX_STOP_INDEX, c->pc, va, vb, -1);
            return NEXT_STOP;
        }
        return c->pc + 1;
    }
    case REC_MATMUL: {
        rec_mm g = rec_matmul(sl, r); /* a batch: the tiles of all its products */
        int64_t m = g.m, k = g.k, n = g.n, es = dtype_size(sl[r->a].dtype);
        int64_t tn = (n + SCHED_TILE - 1) / SCHED_TILE, per = ((m + SCHED_TILE - 1) / SCHED_TILE) * tn;
        uint8_t *A = slot_addr(rp, block, r->a), *B = slot_addr(rp, block, r->b), *C = slot_addr(rp, block, r->c);
        if (!split) {
            for (int64_t e = 0; e < g.batch; e++)
                k_matmul(sl[r->a].dtype, A + e * m * n * es, B + e * g.sb * es, C + e * g.sc * es, m, k, n, 0, m * n);
            return c->pc + 1;
        }
        if (sched_matvec(r, sl)) { /* rows, as the device splits a matrix-vector product */
            k_matmul(sl[r->a].dtype, A, B, C, m, k, 1, lo, hi);
            return c->pc + 1;
        }
        for (int64_t t = lo; t < hi; t++) { /* output tiles, as the device splits them */
            int64_t e = t / per, u = t % per;
            uint8_t *Ae = A + e * m * n * es, *Be = B + e * g.sb * es, *Ce = C + e * g.sc * es;
            for (int64_t i = (u / tn) * SCHED_TILE; i < (u / tn + 1) * SCHED_TILE && i < m; i++)
                for (int64_t j = (u % tn) * SCHED_TILE; j < (u % tn + 1) * SCHED_TILE && j < n; j++)
                    k_matmul(sl[r->a].dtype, Ae, Be, Ce, m, k, n, i * n + j, i * n + j + 1);
        }
        return c->pc + 1;
    }
    case REC_ASSERT:
        if (!k_load_int(sl[r->a].dtype, slot_addr(rp, block, r->a))) {
            raise_stop(rp, CFX_STOP_ASSERT, c->pc, 0, 0, -1);
            return NEXT_STOP;
        }
        return c->pc + 1;
    case REC_CHECK_STEP:
        if (k_load_int(sl[r->a].dtype, slot_addr(rp, block, r->a)) == 0) {
            raise_stop(rp, CFX_STOP_VALUE, c->pc, 0, 0, -1);
            return NEXT_STOP;
        }
        return c->pc + 1;
    case REC_CHECK_INDEX: {
        int64_t v = k_load_int(sl[r->a].dtype, slot_addr(rp, block, r->a));
        if (v < -(int64_t)r->b || v >= (int64_t)r->b) {
            raise_stop(rp, CFX_STOP_INDEX, c->pc, v, r->b, -1);
            return NEXT_STOP;
        }
        return c->pc + 1;
    }
    case REC_CHECK_DIVIDE: {
        /* every block checks every element, as on the device */
        const uint8_t *d = slot_addr(rp, block, r->a);
        for (int64_t e = 0; e < sl[r->a].count; e++)
            if (k_get_int(sl[r->a].dtype, d, e) == 0) {
                raise_stop(rp, CFX_STOP_DIVIDE, c->pc, 0, 0, -1);
                return NEXT_STOP;
            }
        return c->pc + 1;
    }
    case REC_PRINT:
        /* block 0 alone puts the entry in the ring; the others go on */
        if (block == 0 && ring_put(w, c->pc, slot_addr(rp, 0, r->a), (uint32_t)slot_bytes(&sl[r->a])))
            return NEXT_LEFT;
        return c->pc + 1;
    default:
        fprintf(stderr, "replica: record kind %d not supported\n", r->kind);
        abort();
    }
}

/* Block 0 in a one-block region, at a record where micro-ops start: mop_run, the device's
 * own dispatch loop, from there, its outcomes served as interp_kernel.cuh's
 * run_microops serves them (a clock ask is a TICK's poll, a print goes to the ring, a stop
 * is raised). Its file is block 0's private copies with the image after them, as in the
 * device's shared memory. Returns the record the interpreter goes on at, or NEXT_*. */
static int32_t run_microops(walker *w)
{
    replica *rp = w->rp;
    const mop_prog *mp = rp->mops;
    const cfx_prog *p = rp->prog;
    uint8_t *file = rp->priv[0];
    mop_state *st = &w->mst;
    rp->mop_calls++;
    st->at = mp->entry[w->c.pc];
    st->iters = w->iters;
    st->max_iters = rp->max_iters;
    for (;;) {
        int out = mop_run((const mop *)(file + mp->code_offset), file, rp->arena, st);
        w->iters = st->iters;
        if (w->iters > 0)
            atomic_store(&rp->progress, 1);
        w->c.pc = st->pc;
        if (out == MOP_OUT_EXIT)
            return st->pc;
        if (out == MOP_OUT_TICK) {
            if (tick_poll(w, st->pc))
                return NEXT_LEFT;
        } else if (out == MOP_OUT_PRINT) {
            const cfx_slot *sl = &p->slots[p->records[st->pc].a];
            if (ring_put(w, st->pc, slot_addr(rp, 0, p->records[st->pc].a), (uint32_t)slot_bytes(sl)))
                return NEXT_LEFT;
        } else {
            raise_stop(rp, st->status, st->pc, st->detail[0], st->detail[1], -1);
            return NEXT_STOP;
        }
    }
}

/* One block's part of one launch, the device's persist_kernel. */
static void *block_main(void *arg)
{
    walker *w = (walker *)arg;
    replica *rp = w->rp;
    const int block = w->block;
    const cfx_prog *p = rp->prog;
    int32_t next = NEXT_LEFT;

    w->iters = atomic_load(&rp->iters);
    w->ring_head = rp->print_head;
    w->last_poll = 0;
    memset(&w->mst, 0, sizeof w->mst);
    w->mst.clock_left = 1; /* the first TICK of a launch looks at the clock, as REC_TICK does */
    /* the launch: every block loads its private copies from the arena, and none writes
     * them back before all have read them; block 0 puts the micro-ops after its copies */
    for (int32_t s = 0; s < p->nslots; s++)
        if (rp->plan->priv_offset[s] >= 0)
            memcpy(slot_addr(rp, block, s), rp->arena + p->slots[s].offset, (size_t)slot_bytes(&p->slots[s]));
    if (rp->mops && block == 0)
        memcpy(rp->priv[0] + rp->plan->priv_bytes, rp->mops->image, (size_t)rp->mops->image_bytes);
    if (grid_barrier(w, rp->start_pc))
        goto out;
    sched_cursor_init(&w->c, rp->start_pc, block, rp->nblocks);
    if (rp->start_region >= 0) {
        if (block == 0)
            w->c.region = rp->start_region;
        else
            w->c.pc = rp->plan->region_exit[rp->start_region];
    }
    for (;;) {
        sched_cursor *c = &w->c;
        unsigned act = sched_arrive(rp->plan->flags, rp->plan->region_exit, c);
        uint8_t *pub = rp->publish[c->exits & 1];
        if ((act & SCHED_DO_PUBLISH) && block == 0) {
            memcpy(pub, rp->priv[0], (size_t)rp->plan->priv_bytes);
            rp->pub_iters[c->exits & 1] = w->iters;
        }
        if ((act & SCHED_DO_BARRIER) && c->pc != rp->ablate_pc && grid_barrier(w, c->pc)) {
            next = NEXT_LEFT;
        } else {
            if (act & SCHED_DO_RELOAD) {
                if (block != 0) {
                    memcpy(rp->priv[block], pub, (size_t)rp->plan->priv_bytes);
                    w->iters = rp->pub_iters[c->exits & 1];
                }
                c->exits++;
            }
            if (act & SCHED_DO_SKIP)
                continue;
            rp->executed[block]++;
            if (rp->mops && c->region >= 0 && rp->mops->entry[c->pc] >= 0) {
                next = run_microops(w); /* a region holds no record that ends the launch */
            } else if (rp->plan->flags[c->pc] & SCHED_F_LAUNCH) {
                /* never inside a region: every block ends here, block 0 having written its
                 * copies back */
                if (block == 0)
                    store_private(rp);
                if (!rp->device_launch) {
                    raise_stop(rp, SCHED_STATUS_PAUSE, c->pc, 0, 0, -1);
                    next = NEXT_STOP;
                } else {
                    if (block == 0) {
                        rp->tail_site = c->pc;
                        rp->next_pc = c->pc + 1;
                    }
                    next = NEXT_SITE;
                }
                break;
            } else {
                next = run_record(w);
            }
        }
        if (next < 0)
            break;
        c->pc = next;
    }
out:
    rp->end[block] = next == NEXT_HALT ? END_HALT : next == NEXT_STOP || next == NEXT_SITE ? END_STOP : END_LEFT;
    rp->end_pc[block] = w->c.pc;
    rp->iterations[block] = w->iters;
    {
        unsigned long long have = atomic_load(&rp->iters);
        while (w->iters > have && !atomic_compare_exchange_weak(&rp->iters, &have, w->iters))
            ;
    }
    if (block == 0)
        rp->print_head = w->ring_head;
    atomic_fetch_add(&rp->idle, 1);
    return NULL;
}

/* The work of a record that ends the launch, between two launches: a CALL's kernel (the
 * host's dev_call_kernel, or its captured graph; cpu.c's CALL), or a launched product
 * (cuBLAS; here k_matmul). Returns 0, or -1 for a kernel that is missing or fails (the run
 * stops with CFX_ERROR there, as on every executor). */
static int site_work(const cfx_prog *p, const exec_kernel *kernels, uint8_t *arena, const cfx_record *r)
{
    const cfx_slot *sl = p->slots;
    if (r->kind == REC_MATMUL) { /* a batch: each product in turn */
        rec_mm g = rec_matmul(sl, r);
        int64_t es = dtype_size(sl[r->a].dtype);
        for (int64_t e = 0; e < g.batch; e++)
            k_matmul(sl[r->a].dtype, arena + sl[r->a].offset + e * g.m * g.n * es, arena + sl[r->b].offset + e * g.sb * es,
                     arena + sl[r->c].offset + e * g.sc * es, g.m, g.k, g.n, 0, g.m * g.n);
        return 0;
    }
    const exec_kernel *k = kernels ? &kernels[r->a] : NULL;
    cfx_tensor t[32];
    if (!k || !k->cpu_fn || r->c > 32)
        return -1;
    for (int32_t i = 0; i < r->c; i++) {
        const cfx_slot *s = &sl[p->table[r->b + i]];
        memset(&t[i].type, 0, sizeof t[i].type);
        t[i].type.dtype = (cfx_dtype)s->dtype;
        t[i].type.rank = s->rank;
        for (int j = 0; j < s->rank; j++)
            t[i].type.dims[j] = s->dims[j];
        t[i].data = arena + s->offset;
    }
    return k->cpu_fn(k->user, r->d, t, r->c - r->d, t + r->d) == 0 ? 0 : -1;
}

#ifdef RUN_KERNEL
/* persist_host's site work: the replica's, on the kernel's arena. */
typedef struct host_sites {
    const cfx_prog *prog;
    const exec_kernel *kernels;
} host_sites;

static int host_site_work(void *user, const cfx_record *r, uint8_t *arena)
{
    const host_sites *hs = (const host_sites *)user;
    return site_work(hs->prog, hs->kernels, arena, r);
}
#endif

/* Takes the ring's new entries, in order, to the run's list (without the padding). */
static void drain_once(replica *rp)
{
    unsigned long long head = atomic_load_explicit(&rp->ring_head, memory_order_acquire);
    unsigned long long tail = atomic_load_explicit(&rp->ring_tail, memory_order_relaxed);
    while (tail < head) {
        uint32_t off = (uint32_t)(tail % rp->ring_cap);
        int32_t h[2];
        memcpy(h, rp->ring + off, 8);
        if (h[0] == -1) {
            tail += rp->ring_cap - off;
            continue;
        }
        size_t bytes = (size_t)h[1];
        if (rp->nprints + bytes + 8 > rp->cap_prints) {
            rp->cap_prints = (rp->cap_prints + bytes + 8) * 2;
            rp->prints = (uint8_t *)realloc(rp->prints, rp->cap_prints);
        }
        memcpy(rp->prints + rp->nprints, rp->ring + off, 8 + bytes);
        rp->nprints += 8 + bytes;
        tail += 8u + ((uint32_t)bytes + 7u) / 8u * 8u;
    }
    atomic_store_explicit(&rp->ring_tail, tail, memory_order_release);
}

/* The host's drain while the run goes on (dev_wait_stream_poll's poll), with naps so that
 * the ring fills; once more after the last launch. */
static void *drain_thread(void *arg)
{
    replica *rp = (replica *)arg;
    while (!atomic_load(&rp->drain_stop)) {
        drain_once(rp);
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    drain_once(rp);
    return NULL;
}

typedef struct replica_opts {
    int64_t max_iters;
    int32_t ablate_pc;                            /* -1: none */
    void (*init)(const cfx_prog *, uint8_t *);    /* writes the inputs into the arena */
    const exec_kernel *kernels;
    const mop_prog *mops;                         /* micro-ops for block 0's one-block loops, NULL: none */
    int device_launch;                            /* the tail-launch chain, else pause and relaunch */
    uint32_t ring_cap;                            /* 0: 32 bytes; never under two of the biggest entry */
    int cancel_after_ms;                          /* > 0: the host cancels the run then */
} replica_opts;

typedef struct canceller {
    replica *rp;
    int ms;
} canceller;

/* Cancels the run c->ms after it has counted an iteration (at most 10 s on): on a loaded
 * machine the blocks may not have run at all in the first c->ms, and the checks want a run that
 * was under way. */
static void *cancel_later(void *arg)
{
    canceller *c = (canceller *)arg;
    for (int i = 0; i < 10000 && !atomic_load(&c->rp->progress); i++)
        nap_ms(1);
    nap_ms(c->ms);
    atomic_store(&c->rp->cancel, 1);
    return NULL;
}

/* Runs prog on nblocks threads, launch after launch, and fills rp->out as the device's
 * state would end up. Returns the arena (caller frees; also rp->prints). */
static uint8_t *replica_run_opts(replica *rp, const cfx_prog *p, const sched_plan *plan, int nblocks,
                                 const replica_opts *o)
{
    pthread_t th[MAXBLOCKS], canc, drain;
    walker ws[MAXBLOCKS];
    canceller cd;
    memset(rp, 0, sizeof *rp);
    rp->prog = p;
    rp->plan = plan;
    rp->kernels = o->kernels;
    rp->mops = o->mops;
    rp->nblocks = nblocks;
    rp->max_iters = o->max_iters;
    rp->ablate_pc = o->ablate_pc;
    rp->device_launch = o->device_launch;
    /* at least two of the biggest entry, as the device's: an entry that must wrap then
     * always fits once the ring is empty */
    rp->ring_cap = o->ring_cap ? o->ring_cap : 32u;
    for (int32_t i = 0; i < p->nrecords; i++)
        if (p->records[i].kind == REC_PRINT) {
            uint32_t need = 8u + ((uint32_t)slot_bytes(&p->slots[p->records[i].a]) + 7u) / 8u * 8u;
            if (rp->ring_cap < 2 * need)
                rp->ring_cap = 2 * need;
        }
    rp->arena = (uint8_t *)calloc((size_t)p->arena_bytes + 16, 1);
    if (p->const_bytes > 0)
        memcpy(rp->arena, p->consts, (size_t)p->const_bytes);
    if (o->init)
        o->init(p, rp->arena);
    for (int b = 0; b < nblocks; b++)
        rp->priv[b] = (uint8_t *)calloc((size_t)plan->priv_bytes + (o->mops ? (size_t)o->mops->image_bytes : 0) + 16, 1);
    rp->publish[0] = (uint8_t *)calloc((size_t)plan->priv_bytes + 16, 1);
    rp->publish[1] = (uint8_t *)calloc((size_t)plan->priv_bytes + 16, 1);
    rp->ring = (uint8_t *)calloc(rp->ring_cap + 8, 1);
    atomic_init(&rp->ring_head, 0);
    atomic_init(&rp->ring_tail, 0);
    atomic_init(&rp->drain_stop, 0);
    pthread_create(&drain, NULL, drain_thread, rp);
    atomic_init(&rp->cancel, 0);
    atomic_init(&rp->iters, 0);
    atomic_init(&rp->progress, 0);
    if (o->cancel_after_ms > 0) {
        cd.rp = rp;
        cd.ms = o->cancel_after_ms;
        pthread_create(&canc, NULL, cancel_later, &cd);
    }
    rp->start_pc = 0;
    rp->start_region = -1;
    for (;;) {
        /* a fresh barrier and the state running again (persist_resume) */
        atomic_init(&rp->arrived, 0u);
        atomic_init(&rp->gen, 0u);
        atomic_init(&rp->idle, 0);
        atomic_init(&rp->status, CFX_OK);
        rp->record = -1;
        rp->next_pc = -1;
        rp->tail_site = -1;
        rp->launches++;
        for (int b = 0; b < nblocks; b++) {
            ws[b].rp = rp;
            ws[b].block = b;
            pthread_create(&th[b], NULL, block_main, &ws[b]);
        }
        for (int b = 0; b < nblocks; b++)
            pthread_join(th[b], NULL);
        int status = atomic_load(&rp->status);
        int32_t site = -1;
        if (status == SCHED_STATUS_PAUSE && !rp->device_launch) {
            site = rp->resume_pc; /* the host reads where the launch paused */
        } else if (status == CFX_OK && rp->device_launch && rp->tail_site >= 0) {
            site = rp->tail_site; /* block 0 tail-launched the site's graph, then the kernel */
            CHECK_INT(rp->next_pc, site + 1);
        } else {
            CHECK(status != SCHED_STATUS_PAUSE);
            rp->out.status = (cfx_status)status;
            rp->out.record = status == CFX_OK ? -1 : rp->record;
            rp->out.detail[0] = rp->detail[0];
            rp->out.detail[1] = rp->detail[1];
            break;
        }
        CHECK(rp->plan->flags[site] & SCHED_F_LAUNCH);
        rp->sites_run++;
        if (site_work(p, rp->kernels, rp->arena, &p->records[site]) != 0) {
            rp->out.status = CFX_ERROR;
            rp->out.record = site;
            break;
        }
        rp->start_pc = site + 1;
        rp->start_region = -1;
    }
    atomic_store(&rp->drain_stop, 1);
    pthread_join(drain, NULL);
    rp->out.iterations = (int64_t)atomic_load(&rp->iters);
    if (o->cancel_after_ms > 0)
        pthread_join(canc, NULL);
    for (int b = 0; b < nblocks; b++)
        free(rp->priv[b]);
    free(rp->publish[0]);
    free(rp->publish[1]);
    free(rp->ring);
    return rp->arena;
}

/* The common case: no kernels, the pause path, the default ring, no cancel. */
static uint8_t *replica_run(replica *rp, const cfx_prog *p, const sched_plan *plan, int nblocks,
                            int64_t max_iters, int32_t ablate_pc,
                            void (*init)(const cfx_prog *, uint8_t *))
{
    replica_opts o;
    memset(&o, 0, sizeof o);
    o.max_iters = max_iters;
    o.ablate_pc = ablate_pc;
    o.init = init;
    return replica_run_opts(rp, p, plan, nblocks, &o);
}

static int32_t arena_i32(const cfx_prog *p, const uint8_t *arena, int32_t s, int64_t e)
{
    int32_t v;
    memcpy(&v, arena + p->slots[s].offset + 4 * e, 4);
    return v;
}

/* Every block took the same branches, passed the same barriers, counted the same iterations
 * and ended the last launch at the same record (a block that left a barrier because block 0
 * stopped inside a one-block region, or left at a TICK after another block's stop,
 * excepted for the record and counts). */
static void check_uniform(const replica *rp)
{
    for (int b = 1; b < rp->nblocks; b++) {
        int n = rp->nlog[b] < rp->nlog[0] ? rp->nlog[b] : rp->nlog[0];
        CHECK(memcmp(rp->log[b], rp->log[0], sizeof(int32_t) * (size_t)n) == 0);
        if (rp->end[b] == END_LEFT || rp->end[0] == END_LEFT) {
            /* it saw the stop late or early: the same branches as far as both went */
            CHECK(rp->out.status != CFX_OK);
            continue;
        }
        CHECK_INT(rp->nlog[b], rp->nlog[0]);
        CHECK_INT(rp->end[b], rp->end[0]);
        CHECK_INT(rp->end_pc[b], rp->end_pc[0]);
        CHECK_INT(rp->iterations[b], rp->iterations[0]);
        CHECK_INT(rp->barriers[b], rp->barriers[0]);
    }
}

/* ==== program 1: big vectors, a reduction, a loop reading across blocks ==================== */
/*   v = iota(N); w = v * 2; s = sum(w); i = 0; acc = 0
 *   while i < k { tick; w = w + i; t = w[N-1]; acc = acc + t; i = i + 1 }
 *   s2 = sum(w)
 * N is above SCHED_SMALL_COUNT (the loop runs on every block) and above
 * SCHED_REDUNDANT_REDUCE_MAX (the sums are split and combined). */
#define P1_N 5000
enum { P1_V, P1_W, P1_S, P1_I, P1_K, P1_ACC, P1_T, P1_C, P1_S2 };
/* The hand-built programs below pin the rules for shared slots: their tensors would otherwise be
 * small enough to be replicas (test_replicas has its own). */
static const sched_opts shared_only = {0, 1, 0, 0};

static int32_t p1_slot[16];
static int32_t p1_rec_reduce, p1_rec_getrow, p1_rec_add, p1_rec_mul, p1_rec_head;

static void build_p1(tprog *t)
{
    tp_init(t);
    int32_t two = tp_const_i32(t, 2), one = tp_const_i32(t, 1), zero = tp_const_i32(t, 0);
    int32_t last = tp_const_i32(t, P1_N - 1);
    int32_t *S = p1_slot;
    S[P1_V] = tp_slot(t, CFX_I32, P1_N, SLOT_TEMP);
    S[P1_W] = tp_slot(t, CFX_I32, P1_N, SLOT_VAR);
    S[P1_S] = tp_slot(t, CFX_I32, 1, SLOT_RESULT);
    S[P1_I] = tp_slot(t, CFX_I32, 1, SLOT_VAR);
    S[P1_K] = tp_slot(t, CFX_I32, 1, SLOT_INPUT);
    S[P1_ACC] = tp_slot(t, CFX_I32, 1, SLOT_RESULT);
    S[P1_T] = tp_slot(t, CFX_I32, 1, SLOT_TEMP);
    S[P1_C] = tp_slot(t, CFX_BOOL, 1, SLOT_TEMP);
    S[P1_S2] = tp_slot(t, CFX_I32, 1, SLOT_RESULT);
    tp_emit(t, REC_IOTA, 0, CFX_I32, S[P1_V], 0, 0);                                /* 0 */
    p1_rec_mul = tp_emit(t, REC_BINARY, OP_MUL, CFX_I32, S[P1_W], S[P1_V], two);    /* 1 */
    p1_rec_reduce = tp_emit(t, REC_REDUCE, OP_SUM, CFX_I32, S[P1_S], S[P1_W], 0);   /* 2 */
    tp_emit(t, REC_COPY, 0, CFX_I32, S[P1_I], zero, 0);                             /* 3 */
    tp_emit(t, REC_COPY, 0, CFX_I32, S[P1_ACC], zero, 0);                           /* 4 */
    p1_rec_head = tp_emit(t, REC_BINARY, OP_LT, CFX_I32, S[P1_C], S[P1_I], S[P1_K]); /* 5 */
    int32_t jf = tp_emit(t, REC_JUMP_FALSE, 0, CFX_BOOL, S[P1_C], 0, 0);            /* 6 */
    tp_emit(t, REC_TICK, 0, 0, 0, 0, 0);                                            /* 7 */
    p1_rec_add = tp_emit(t, REC_BINARY, OP_ADD, CFX_I32, S[P1_W], S[P1_W], S[P1_I]); /* 8 */
    p1_rec_getrow = tp_emit(t, REC_GET_ROW, 0, CFX_I32, S[P1_T], S[P1_W], last);    /* 9 */
    tp_emit(t, REC_BINARY, OP_ADD, CFX_I32, S[P1_ACC], S[P1_ACC], S[P1_T]);         /* 10 */
    tp_emit(t, REC_BINARY, OP_ADD, CFX_I32, S[P1_I], S[P1_I], one);                 /* 11 */
    tp_emit(t, REC_JUMP, 0, 0, p1_rec_head, 0, 0);                                  /* 12 */
    t->rec[jf].b = tp_emit(t, REC_REDUCE, OP_SUM, CFX_I32, S[P1_S2], S[P1_W], 0);   /* 13 */
    tp_emit(t, REC_HALT, 0, 0, 0, 0, 0);
}

static int32_t p1_k;
static void init_p1(const cfx_prog *p, uint8_t *arena)
{
    memcpy(arena + p->slots[p1_slot[P1_K]].offset, &p1_k, 4);
}

static void test_p1(void)
{
    tprog t;
    sched_plan plan;
    char err[200];
    build_p1(&t);
    CHECK_INT(sched_plan_build_opts(&t.p, &shared_only, &plan, err, sizeof err), 0);

    /* what the plan must say */
    CHECK(plan.flags[p1_rec_reduce] & SCHED_F_COMBINE);      /* partials combined after a barrier */
    CHECK(plan.flags[p1_rec_getrow] & SCHED_F_BARRIER_BEFORE); /* reads w[N-1], another block's share */
    CHECK(plan.flags[p1_rec_add] & SCHED_F_BARRIER_BEFORE);  /* writes w while others may read w[N-1] */
    CHECK(!(plan.flags[p1_rec_mul] & SCHED_F_BARRIER_BEFORE)); /* elementwise after iota: own share */
    CHECK(!(plan.flags[p1_rec_head] & SCHED_F_BARRIER_BEFORE)); /* private scalars */
    CHECK(plan.flags[p1_rec_mul] & SCHED_F_SPLIT);
    CHECK(!(plan.flags[p1_rec_head] & SCHED_F_SPLIT));
    CHECK_INT(plan.nregions, 0);                             /* the loop's slots are big */
    CHECK(plan.priv_offset[p1_slot[P1_I]] >= 0);
    CHECK(plan.priv_offset[p1_slot[P1_W]] < 0);

    /* the sequential answer, in plain C */
    static int32_t w[P1_N];
    int32_t s = 0, acc = 0;
    p1_k = 5;
    for (int e = 0; e < P1_N; e++) {
        w[e] = 2 * e;
        s += w[e];
    }
    for (int32_t i = 0; i < p1_k; i++) {
        for (int e = 0; e < P1_N; e++)
            w[e] += i;
        acc += w[P1_N - 1];
    }
    int32_t s2 = 0;
    for (int e = 0; e < P1_N; e++)
        s2 += w[e];

    int counts[] = {1, 4, 7};
    for (int k = 0; k < 3; k++) {
        replica rp;
        uint8_t *arena = replica_run(&rp, &t.p, &plan, counts[k], 0, -1, init_p1);
        CHECK_INT(rp.out.record, -1);
        CHECK_INT(arena_i32(&t.p, arena, p1_slot[P1_S], 0), s);
        CHECK_INT(arena_i32(&t.p, arena, p1_slot[P1_ACC], 0), acc);
        CHECK_INT(arena_i32(&t.p, arena, p1_slot[P1_S2], 0), s2);
        CHECK_INT(arena_i32(&t.p, arena, p1_slot[P1_W], P1_N - 1), w[P1_N - 1]);
        CHECK_INT(rp.iterations[0], p1_k);
        CHECK_INT(rp.nlog[0], p1_k + 1 + p1_k); /* k+1 conditional branches, k back jumps */
        check_uniform(&rp);
        free(arena);
    }

    /* the budget stops every block at the same TICK */
    {
        replica rp;
        uint8_t *arena = replica_run(&rp, &t.p, &plan, 4, 3, -1, init_p1);
        CHECK_INT(rp.out.record, 7);
        CHECK_INT(rp.out.status, CFX_STOP_LIMIT);
        CHECK_INT(rp.iterations[0], 3);
        check_uniform(&rp);
        free(arena);
    }
    /* the TICK opens the body, so a budget of exactly the k iterations ends the run; one
     * less stops it at the TICK of the last iteration, k - 1 of them done */
    for (int64_t budget = p1_k - 1; budget <= p1_k; budget++) {
        replica rp;
        uint8_t *arena = replica_run(&rp, &t.p, &plan, 4, budget, -1, init_p1);
        CHECK_INT(rp.out.record, budget == p1_k ? -1 : 7);
        if (budget < p1_k)
            CHECK_INT(rp.out.status, CFX_STOP_LIMIT);
        CHECK_INT(rp.iterations[0], budget);
        if (budget == p1_k)
            CHECK_INT(arena_i32(&t.p, arena, p1_slot[P1_ACC], 0), acc);
        check_uniform(&rp);
        free(arena);
    }

#ifndef UNDER_TSAN
    /* Without the barrier before w[N-1] is read, block 0 reads the last block's share
     * before the slowed-down block has written it: the answer is wrong. (Under TSan this
     * run would be a reported race, which is the same finding.) */
    {
        replica rp;
        uint8_t *arena = replica_run(&rp, &t.p, &plan, 4, 0, p1_rec_getrow, init_p1);
        CHECK(arena_i32(&t.p, arena, p1_slot[P1_ACC], 0) != acc);
        free(arena);
    }
#endif
    sched_plan_free(&plan);
}

/* ==== program 2: a small loop runs on block 0 alone ======================================== */
/*   v = iota(100); i = 0
 *   while i < n { tick; v = v + i; s = sum(v); i = i + 1 }
 *   out = s * 2;  big = iota(5000); top = big[4999] + out */
#define P2_N 100
static int32_t p2_v, p2_i, p2_n, p2_s, p2_c, p2_out, p2_big, p2_top, p2_t;
static int32_t p2_head, p2_exit;

static void build_p2(tprog *t)
{
    tp_init(t);
    int32_t two = tp_const_i32(t, 2), one = tp_const_i32(t, 1), zero = tp_const_i32(t, 0);
    int32_t last = tp_const_i32(t, 4999);
    p2_v = tp_slot(t, CFX_I32, P2_N, SLOT_VAR);
    p2_i = tp_slot(t, CFX_I32, 1, SLOT_VAR);
    p2_n = tp_slot(t, CFX_I32, 1, SLOT_INPUT);
    p2_s = tp_slot(t, CFX_I32, 1, SLOT_VAR);
    p2_c = tp_slot(t, CFX_BOOL, 1, SLOT_TEMP);
    p2_out = tp_slot(t, CFX_I32, 1, SLOT_RESULT);
    p2_big = tp_slot(t, CFX_I32, 5000, SLOT_TEMP);
    p2_t = tp_slot(t, CFX_I32, 1, SLOT_TEMP);
    p2_top = tp_slot(t, CFX_I32, 1, SLOT_RESULT);
    tp_emit(t, REC_IOTA, 0, CFX_I32, p2_v, 0, 0);                       /* 0 */
    tp_emit(t, REC_COPY, 0, CFX_I32, p2_i, zero, 0);                    /* 1 */
    tp_emit(t, REC_COPY, 0, CFX_I32, p2_s, zero, 0);                    /* 2 */
    p2_head = tp_emit(t, REC_BINARY, OP_LT, CFX_I32, p2_c, p2_i, p2_n); /* 3 */
    int32_t jf = tp_emit(t, REC_JUMP_FALSE, 0, CFX_BOOL, p2_c, 0, 0);   /* 4 */
    tp_emit(t, REC_TICK, 0, 0, 0, 0, 0);                                /* 5 */
    tp_emit(t, REC_BINARY, OP_ADD, CFX_I32, p2_v, p2_v, p2_i);          /* 6 */
    tp_emit(t, REC_REDUCE, OP_SUM, CFX_I32, p2_s, p2_v, 0);             /* 7 */
    tp_emit(t, REC_BINARY, OP_ADD, CFX_I32, p2_i, p2_i, one);           /* 8 */
    tp_emit(t, REC_JUMP, 0, 0, p2_head, 0, 0);                          /* 9 */
    p2_exit = tp_emit(t, REC_BINARY, OP_MUL, CFX_I32, p2_out, p2_s, two); /* 10 */
    t->rec[jf].b = p2_exit;
    tp_emit(t, REC_IOTA, 0, CFX_I32, p2_big, 0, 0);
    tp_emit(t, REC_GET_ROW, 0, CFX_I32, p2_t, p2_big, last);
    tp_emit(t, REC_BINARY, OP_ADD, CFX_I32, p2_top, p2_t, p2_out);
    tp_emit(t, REC_HALT, 0, 0, 0, 0, 0);
}

static int32_t p2_n_value;
static void init_p2(const cfx_prog *p, uint8_t *arena)
{
    memcpy(arena + p->slots[p2_n].offset, &p2_n_value, 4);
}

static void test_p2(void)
{
    tprog t;
    sched_plan plan;
    char err[200];
    build_p2(&t);
    CHECK_INT(sched_plan_build_opts(&t.p, &shared_only, &plan, err, sizeof err), 0);

    CHECK_INT(plan.nregions, 1);
    CHECK(plan.flags[p2_head] & SCHED_F_REGION_ENTRY);
    CHECK(plan.flags[p2_head] & SCHED_F_ENTRY_BARRIER); /* v was written split by iota */
    CHECK_INT(plan.region_exit[p2_head], p2_exit);
    CHECK(plan.flags[p2_exit] & SCHED_F_REGION_EXIT);
    for (int32_t r = p2_head; r < p2_exit; r++)
        CHECK(plan.flags[r] & SCHED_F_ONE_BLOCK);
    CHECK(!(plan.flags[p2_exit] & SCHED_F_ONE_BLOCK));
    CHECK(plan.flags[p2_exit + 2] & SCHED_F_BARRIER_BEFORE); /* big[4999] from another block */

    for (int32_t n = 0; n <= 6; n += 3) {
        int32_t v[P2_N], s = 0;
        for (int e = 0; e < P2_N; e++)
            v[e] = e;
        for (int32_t i = 0; i < n; i++) {
            s = 0;
            for (int e = 0; e < P2_N; e++) {
                v[e] += i;
                s += v[e];
            }
        }
        p2_n_value = n;
        int counts[] = {1, 4, 7};
        for (int k = 0; k < 3; k++) {
            replica rp;
            uint8_t *arena = replica_run(&rp, &t.p, &plan, counts[k], 0, -1, init_p2);
            CHECK_INT(arena_i32(&t.p, arena, p2_out, 0), 2 * s);
            CHECK_INT(arena_i32(&t.p, arena, p2_top, 0), 4999 + 2 * s);
            CHECK_INT(arena_i32(&t.p, arena, p2_v, P2_N - 1), v[P2_N - 1]);
            CHECK_INT(rp.iterations[0], n);
            for (int b = 1; b < counts[k]; b++) {
                CHECK_INT(rp.iterations[b], n); /* block 0's count, reloaded at the exit */
                CHECK_INT(rp.barriers[b], rp.barriers[0]);
                if (n > 0)
                    CHECK(rp.executed[b] < rp.executed[0]); /* the loop ran on block 0 only */
            }
            free(arena);
        }
    }
    sched_plan_free(&plan);
}

/* ==== program 3: a switch and branches on a reduction's result ============================= */
/*   v = iota(3000); s = sum(v) (split); m = s % 3
 *   switch m { case 0: r = 10  case 1: r = 20  default: r = 30 }
 *   big = v + r; out = big[2999] */
static void test_p3(void)
{
    tprog t;
    sched_plan plan;
    char err[200];
    tp_init(&t);
    int32_t three = tp_const_i32(&t, 3), c10 = tp_const_i32(&t, 10), c20 = tp_const_i32(&t, 20);
    int32_t c30 = tp_const_i32(&t, 30), last = tp_const_i32(&t, 2999);
    int32_t v = tp_slot(&t, CFX_I32, 3000, SLOT_TEMP), s = tp_slot(&t, CFX_I32, 1, SLOT_TEMP);
    int32_t m = tp_slot(&t, CFX_I32, 1, SLOT_TEMP), r = tp_slot(&t, CFX_I32, 1, SLOT_VAR);
    int32_t big = tp_slot(&t, CFX_I32, 3000, SLOT_TEMP), out = tp_slot(&t, CFX_I32, 1, SLOT_RESULT);
    tp_emit(&t, REC_IOTA, 0, CFX_I32, v, 0, 0);                  /* 0 */
    tp_emit(&t, REC_REDUCE, OP_SUM, CFX_I32, s, v, 0);           /* 1 */
    tp_emit(&t, REC_BINARY, OP_MOD, CFX_I32, m, s, three);       /* 2 */
    tp_emit(&t, REC_SWITCH, 0, CFX_I32, m, 0, 2);                /* 3: table[0..2] */
    int32_t a0 = tp_emit(&t, REC_COPY, 0, CFX_I32, r, c10, 0);   /* 4 */
    int32_t j0 = tp_emit(&t, REC_JUMP, 0, 0, 0, 0, 0);           /* 5 */
    int32_t a1 = tp_emit(&t, REC_COPY, 0, CFX_I32, r, c20, 0);   /* 6 */
    int32_t j1 = tp_emit(&t, REC_JUMP, 0, 0, 0, 0, 0);           /* 7 */
    int32_t a2 = tp_emit(&t, REC_COPY, 0, CFX_I32, r, c30, 0);   /* 8 */
    int32_t join = tp_emit(&t, REC_BINARY, OP_ADD, CFX_I32, big, v, r); /* 9 */
    tp_emit(&t, REC_GET_ROW, 0, CFX_I32, out, big, last);        /* 10 */
    tp_emit(&t, REC_HALT, 0, 0, 0, 0, 0);
    t.rec[j0].a = join;
    t.rec[j1].a = join;
    t.table[0] = a0;
    t.table[1] = a1;
    t.table[2] = a2;
    t.p.ntable = 3;
    CHECK_INT(sched_plan_build_opts(&t.p, &shared_only, &plan, err, sizeof err), 0);
    CHECK(plan.flags[1] & SCHED_F_COMBINE);
    CHECK(!(plan.flags[join] & SCHED_F_BARRIER_BEFORE)); /* aligned with iota's shares */
    CHECK(plan.flags[join + 1] & SCHED_F_BARRIER_BEFORE);

    int64_t sum = 0;
    for (int e = 0; e < 3000; e++)
        sum += e;
    int32_t want_r = sum % 3 == 0 ? 10 : sum % 3 == 1 ? 20 : 30;
    int counts[] = {1, 4, 7};
    for (int k = 0; k < 3; k++) {
        replica rp;
        uint8_t *arena = replica_run(&rp, &t.p, &plan, counts[k], 0, -1, NULL);
        CHECK_INT(arena_i32(&t.p, arena, out, 0), 2999 + want_r);
        CHECK_INT(arena_i32(&t.p, arena, r, 0), want_r);
        check_uniform(&rp);
        free(arena);
    }
    sched_plan_free(&plan);
}

/* ==== the pure functions =================================================================== */
static void test_share(void)
{
    /* shares cover [0, count) in order, without gaps or overlap, sizes differ by <= 1, on both
     * sides of 2^31 (below it sched_share divides in 32 bits) */
    int64_t counts[] = {0, 1, 5, 7, 100, 5000, 1000003, 2147483647, 2147483648LL, 6000000007LL};
    for (int i = 0; i < 10; i++)
        for (int64_t n = 1; n <= 9; n++) {
            int64_t next = 0, minsz = INT64_MAX, maxsz = 0;
            for (int64_t b = 0; b < n; b++) {
                int64_t lo, hi;
                sched_share(counts[i], b, n, &lo, &hi);
                CHECK_INT(lo, next);
                next = hi;
                minsz = hi - lo < minsz ? hi - lo : minsz;
                maxsz = hi - lo > maxsz ? hi - lo : maxsz;
            }
            CHECK_INT(next, counts[i]);
            CHECK(maxsz - minsz <= 1);
        }
    /* the 32-bit path gives exactly the 64-bit arithmetic's shares (computed here by hand) */
    for (int64_t b = 0; b < 264; b++) {
        int64_t lo, hi, count = 2147483647, base = count / 264, rem = count % 264;
        sched_share(count, b, 264, &lo, &hi);
        CHECK_INT(lo, b * base + (b < rem ? b : rem));
        CHECK_INT(hi - lo, base + (b < rem ? 1 : 0));
    }
    /* budget: exactly max_iters ticks run */
    uint64_t it = 0;
    CHECK_INT(sched_tick(&it, 2), 0);
    CHECK_INT(sched_tick(&it, 2), 0);
    CHECK_INT(sched_tick(&it, 2), 1);
    CHECK_INT(it, 2);
    it = 0;
    for (int i = 0; i < 100; i++)
        CHECK_INT(sched_tick(&it, 0), 0);
}


/* ==== real programs: the compiler's output on the replica against the cpu executor ========= */

/* Deterministic inputs: reals in [-1, 1), integers in [1, 10), bools alternating; an
 * override "name=value" sets every element of that input. */
static void fill_value(const cfx_slot *sl, uint8_t *dst, const char *name, const char *overrides)
{
    uint64_t seed = 12345;
    double forced = 0.0;
    int have = 0;
    size_t nl = strlen(name);
    for (const char *q = overrides; q && *q;) {
        while (*q == ' ')
            q++;
        if (strncmp(q, name, nl) == 0 && q[nl] == '=') {
            forced = strtod(q + nl + 1, NULL);
            have = 1;
        }
        while (*q && *q != ' ')
            q++;
    }
    for (size_t i = 0; i < nl; i++)
        seed = seed * 131 + (unsigned char)name[i];
    for (int64_t e = 0; e < sl->count; e++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(seed >> 11) / 9007199254740992.0;
        double real = have ? forced : 2.0 * u - 1.0;
        int64_t integer = have ? (int64_t)forced : 1 + (int64_t)(u * 9.0);
        switch (sl->dtype) {
        case CFX_F32: { float v = (float)real; memcpy(dst + 4 * e, &v, 4); break; }
        case CFX_F64: memcpy(dst + 8 * e, &real, 8); break;
        case CFX_I32: { int32_t v = (int32_t)integer; memcpy(dst + 4 * e, &v, 4); break; }
        case CFX_I64: memcpy(dst + 8 * e, &integer, 8); break;
        default: dst[e] = (uint8_t)(have ? forced != 0 : (e & 1)); break;
        }
    }
}

static void *const *g_inputs; /* for init_inputs */
static void init_inputs(const cfx_prog *p, uint8_t *arena)
{
    for (int32_t i = 0; i < p->ninputs; i++) {
        const cfx_slot *sl = &p->slots[p->inputs[i]];
        memcpy(arena + sl->offset, g_inputs[i], (size_t)slot_bytes(sl));
    }
}

static int same_values(const cfx_slot *sl, const uint8_t *x, const uint8_t *y)
{
    for (int64_t e = 0; e < sl->count; e++) {
        if (sl->dtype == CFX_F32 || sl->dtype == CFX_F64) {
            double a, b;
            if (sl->dtype == CFX_F32) {
                float fa, fb;
                memcpy(&fa, x + 4 * e, 4);
                memcpy(&fb, y + 4 * e, 4);
                a = fa;
                b = fb;
            } else {
                memcpy(&a, x + 8 * e, 8);
                memcpy(&b, y + 8 * e, 8);
            }
            if (!(a == b || (a != a && b != b) || fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b))))
                return 0;
        } else {
            int size = dtype_size(sl->dtype);
            if (memcmp(x + size * e, y + size * e, (size_t)size) != 0)
                return 0;
        }
    }
    return 1;
}

/* ---- application kernels: the host's part of a CALL, the same functions on both sides ---- */

static int kernel_calls; /* every call of every kernel below, on the side being run */

static int k_dup(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    (void)user, (void)nargs, (void)nresults;
    kernel_calls++;
    memcpy(results[0].data, args[0].data, (size_t)cfx_type_count(&args[0].type) * 4);
    return 0;
}

/* (f32[4]) -> (f32[4]): w * 0.5 + 1 */
static int k_kw(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    (void)user, (void)nargs, (void)nresults;
    kernel_calls++;
    for (int i = 0; i < 4; i++)
        ((float *)results[0].data)[i] = ((const float *)args[0].data)[i] * 0.5f + 1.0f;
    return 0;
}

/* (i32[4]) -> (i32[4]): v * 2 + index, wrapping */
static int k_kv(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    (void)user, (void)nargs, (void)nresults;
    kernel_calls++;
    for (int i = 0; i < 4; i++)
        ((int32_t *)results[0].data)[i] =
            (int32_t)((uint32_t)((const int32_t *)args[0].data)[i] * 2u + (uint32_t)i);
    return 0;
}

/* (i32, i32) -> (i32): a * 3 + b, wrapping */
static int k_ka(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    (void)user, (void)nargs, (void)nresults;
    kernel_calls++;
    uint32_t a = (uint32_t)*(const int32_t *)args[0].data, b = (uint32_t)*(const int32_t *)args[1].data;
    *(int32_t *)results[0].data = (int32_t)(a * 3u + b);
    return 0;
}

/* (i32) -> (i32): b + 1, and a failure (the run stops with CFX_ERROR) when b % 53 == 5 */
static int k_kfail(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    (void)user, (void)nargs, (void)nresults;
    kernel_calls++;
    int32_t b = *(const int32_t *)args[0].data;
    if (b % 53 == 5)
        return 1;
    *(int32_t *)results[0].data = (int32_t)((uint32_t)b + 1u);
    return 0;
}

static const struct {
    const char *name, *signature;
    cfx_cpu_kernel fn;
} test_kernels[] = {
    {"dup", "(f32[3000]) -> (f32[3000])", k_dup},
    {"kw", "(f32[4]) -> (f32[4])", k_kw},
    {"kv", "(i32[4]) -> (i32[4])", k_kv},
    {"ka", "(i32, i32) -> (i32)", k_ka},
    {"kfail", "(i32) -> (i32)", k_kfail},
};
enum { NTEST_KERNELS = sizeof test_kernels / sizeof test_kernels[0] };

static cfx_context *test_context(void)
{
    static cfx_context *ctx;
    if (!ctx) {
        ctx = cfx_context_new();
        for (int i = 0; i < NTEST_KERNELS; i++) {
            char *err = NULL;
            CHECK_INT(cfx_register_kernel(ctx, test_kernels[i].name, test_kernels[i].signature,
                                          test_kernels[i].fn, NULL, NULL, &err), 0);
            free(err);
        }
    }
    return ctx;
}

/* The program's kernels in prog->kernels order (an unknown name gets no function). */
static void resolve_kernels(const cfx_prog *p, exec_kernel *out)
{
    for (int32_t i = 0; i < p->nkernels; i++) {
        const char *name = p->strings + p->kernels[i];
        memset(&out[i], 0, sizeof out[i]);
        out[i].name = name;
        for (int k = 0; k < NTEST_KERNELS; k++)
            if (strcmp(test_kernels[k].name, name) == 0)
                out[i].cpu_fn = test_kernels[k].fn;
    }
}

/* What a comparison ran, for the callers' checks. */
typedef struct compare_stats {
    int graphs;       /* graphs compared */
    int sites;        /* launch-ending records whose work ran between launches, all runs */
    int products;     /* of which launched products */
    int ring_waits;   /* prints that waited for room in the ring */
    int stopped;      /* runs that did not end ok */
    int mop_graphs;   /* graphs with micro-ops */
    int mop_calls;    /* times block 0 entered micro-ops, all runs */
} compare_stats;

#ifdef RUN_KERNEL
static int kernel_runs, kernel_sites; /* the interpreter's own kernel on host threads (persist_host) */
static int standin_sweep;             /* CFX_STANDIN_SWEEP=1: its runs in all three orders */
#endif

/* A run against the cpu executor's (want, with want_calls kernel calls, the prints pr and the
 * results out): status, record, the details a stop reports, iterations, kernel calls (the
 * global count of the run just made), prints, and on ok the results in arena. 1 when any
 * differs (each difference is a failed check). */
static int differs(const cfx_prog *p, const exec_outcome *want, int want_calls, const test_prints *pr, void *const *out,
                   const exec_outcome *got, const uint8_t *prints, size_t nprints, const uint8_t *arena)
{
    int bad = 0;
    bad |= !CHECK_INT(got->status, want->status);
    bad |= !CHECK_INT(got->record, want->record);
    if (want->status == CFX_STOP_INDEX || want->status == CFX_STOP_LIMIT) {
        bad |= !CHECK_INT(got->detail[0], want->detail[0]);
        if (want->status == CFX_STOP_INDEX)
            bad |= !CHECK_INT(got->detail[1], want->detail[1]);
    }
    bad |= !CHECK_INT(got->iterations, want->iterations);
    bad |= !CHECK_INT(kernel_calls, want_calls);
    bad |= !CHECK_INT((int64_t)nprints, (int64_t)pr->n);
    bad |= !CHECK(nprints == pr->n && (pr->n == 0 || memcmp(prints, pr->bytes, pr->n) == 0));
    if (want->status == CFX_OK)
        for (int32_t i = 0; i < p->nresults; i++) {
            const cfx_slot *sl = &p->slots[p->results[i]];
            bad |= !CHECK(same_values(sl, arena + sl->offset, (const uint8_t *)out[i]));
        }
    return bad;
}

/* How to compare: the ring's size (0: the replica's default, two small entries) and the
 * products that end the launch (sched_opts; 0: none). */
typedef struct compare_opts {
    uint32_t ring_cap;
    int64_t launch_product_min;
    int sampled; /* a generated program: the kernel on host threads runs for one in four */
} compare_opts;

/* --stress: every kernel-on-host way for every graph, and the generated sweeps at full size */
static int stress_run;
#define GENERATED 40
#define GENERATED_STRESS 200 /* 300 of each took 8 minutes on two loaded cores */
static int generated_count(void) { return stress_run ? GENERATED_STRESS : GENERATED; }

/* Every graph of `src` on cpu_run and on the replica, on both paths (device graph launch,
 * pause and relaunch) with 4 and 7 blocks, block 0 running the one-block loops' micro-ops
 * as the device does by default, and twice more without them: same status, record,
 * details, iterations, prints, kernel calls and results. Adds to *st; returns the graphs
 * compared. */
static int compare_compiled_with(const char *file, const char *src, size_t len, const char *overrides,
                                 int64_t max_iters, const compare_opts *co, compare_stats *st)
{
    compiled_module m;
    char *diag = NULL;
    int compared = 0;
    if (compile_source(test_context(), file, src, len, &m, &diag) != 0) {
        free(diag);
        return 0;
    }
    for (int g = 0; g < m.ngraphs; g++) {
        const cfx_prog *p = m.graphs[g].prog;
        sched_plan plan;
        mop_prog mops;
        int have_mops;
        char err[200];
        void *in[32] = {0}, *out[32] = {0};
        exec_kernel kernels[16];
        if (p->ninputs > 32 || p->nresults > 32 || p->nkernels > 16)
            continue;
        sched_opts so = plan_options_interp(co ? co->launch_product_min : 0);
        resolve_kernels(p, kernels);
        CHECK_INT(sched_plan_build_opts(p, &so, &plan, err, sizeof err), 0);
        have_mops = mop_translate(p, &plan, &mops, err, sizeof err) == 0;
        CHECK(have_mops || plan.nregions == 0);
        for (int32_t i = 0; i < p->ninputs; i++) {
            const cfx_slot *sl = &p->slots[p->inputs[i]];
            in[i] = calloc((size_t)slot_bytes(sl) + 1, 1);
            fill_value(sl, (uint8_t *)in[i], m.graphs[g].params[i].name, overrides);
        }
        for (int32_t i = 0; i < p->nresults; i++)
            out[i] = calloc((size_t)slot_bytes(&p->slots[p->results[i]]) + 1, 1);

        test_prints pr = {NULL, 0, 0};
        exec_run run;
        exec_outcome o;
        memset(&run, 0, sizeof run);
        memset(&o, 0, sizeof o);
        run.prog = p;
        run.inputs = in;
        run.results = out;
        run.max_iters = max_iters;
        run.print = test_print;
        run.print_user = &pr;
        run.kernels = kernels;
        kernel_calls = 0;
        CHECK_INT(cpu_run(&run, &o), 0);
        int cpu_calls = kernel_calls;

        const int counts[] = {4, 7, 4, 7, 4, 7}, device[] = {0, 0, 1, 1, 0, 1};
        for (int k = 0; k < 6; k++) {
            replica rp;
            replica_opts ro;
            memset(&ro, 0, sizeof ro);
            ro.max_iters = max_iters;
            ro.ablate_pc = -1;
            ro.init = init_inputs;
            ro.kernels = kernels;
            ro.ring_cap = co ? co->ring_cap : 0;
            ro.device_launch = device[k];
            ro.mops = have_mops && k < 4 ? &mops : NULL;
            g_inputs = in;
            kernel_calls = 0;
            uint8_t *arena = replica_run_opts(&rp, p, &plan, counts[k], &ro);
            int bad = differs(p, &o, cpu_calls, &pr, out, &rp.out, rp.prints, rp.nprints, arena);
            check_uniform(&rp);
            if (bad)
                fprintf(stderr, "  in %s, graph %s, %d blocks, %s, %s, inputs '%s', %d launches\n", file, p->name,
                        counts[k], ro.device_launch ? "device graph launch" : "pause and relaunch",
                        ro.mops ? "micro-ops" : "records only", overrides, rp.launches);
            if (st) {
                st->mop_calls += rp.mop_calls;
                st->sites += rp.sites_run;
                st->ring_waits += rp.ring_waits;
                st->stopped += o.status != CFX_OK;
            }
            free(rp.prints);
            free(arena);
        }
#ifdef RUN_KERNEL
        /* The kernel itself (persist_host.cpp), in blocks of PERSIST_HOST_THREADS threads as on
         * the device, on both paths, with and without micro-ops: each
         * way on every graph under --stress; else one way per graph, in turn, and for one
         * generated program in four (host threads standing in for blocks are slow). The threads of a block run
         * in one of three orders in turn (tests/cuda_host.h), in all three with CFX_STANDIN_SWEEP=1. */
        const int kblocks[] = {3, 4, 5, 2}, kdevice[] = {0, 1, 0, 1}, kmops[] = {1, 1, 0, 0};
        static unsigned sample, turn;
        int kfirst = 0, klast = 4 * (standin_sweep ? 3 : 1);
        if (!stress_run && !standin_sweep) {
            int skip = co && co->sampled && sample++ % 4 != 0;
            kfirst = skip ? 0 : (int)(turn++ % 4);
            klast = skip ? 0 : kfirst + 1;
        }
        for (int k = kfirst; k < klast; k++) {
            persist_host_opts ho;
            persist_host_result hr;
            host_sites hs = {p, kernels};
            static const char *const orders[] = {"forward", "reverse", "shuffled"};
            const int order = standin_sweep ? k / 4 : kernel_runs % 3;
            memset(&ho, 0, sizeof ho);
            ho.nblocks = kblocks[k % 4];
            ho.order = order;
            ho.seed = (unsigned)kernel_runs;
            ho.device_launch = kdevice[k % 4];
            ho.mops = have_mops && kmops[k % 4] ? &mops : NULL;
            ho.max_iters = max_iters;
            ho.ring_cap = co ? co->ring_cap : 0;
            ho.init = init_inputs;
            ho.site = host_site_work;
            ho.site_user = &hs;
            g_inputs = in;
            kernel_calls = 0;
            int bad = !CHECK_INT(persist_host_run(p, &plan, &ho, &hr), 0);
            bad = bad || differs(p, &o, cpu_calls, &pr, out, &hr.out, hr.prints, hr.nprints, hr.arena);
            if (bad)
                fprintf(stderr,
                        "  in %s, graph %s, the kernel on %d host blocks (%s order), %s, %s, inputs '%s', %d "
                        "launches\n",
                        file, p->name, kblocks[k % 4], orders[order],
                        kdevice[k % 4] ? "device graph launch" : "pause and relaunch",
                        ho.mops ? "micro-ops" : "records only", overrides, hr.launches);
            kernel_runs++;
            kernel_sites += hr.sites;
            free(hr.arena);
            free(hr.prints);
        }
#endif
        compared++;
        if (st)
            st->mop_graphs += have_mops;
        if (have_mops)
            mop_prog_free(&mops);
        free(pr.bytes);
        for (int i = 0; i < 32; i++) {
            free(in[i]);
            free(out[i]);
        }
        sched_plan_free(&plan);
    }
    compiled_module_free(&m);
    if (st)
        st->graphs += compared;
    return compared;
}

static int compare_compiled(const char *file, const char *src, size_t len, const char *overrides,
                            int64_t max_iters)
{
    return compare_compiled_with(file, src, len, overrides, max_iters, NULL, NULL);
}

/* Tensors that alternate between two buffers by iteration (sched_opts.alternate, the compiled
 * kernel's plan), by hand from the rule in host/gen/plan.c, on loops over 1024 and 8192 elements
 * (not one-block loops):
 * - CG's step: ap is written by the product, read by dot(p, ap) (a combine) and by r's update;
 *   with ap alternating, alpha * ap is a replica computed after the combine and the loop has
 *   one grid barrier, against two in the interpreter's plan, where ap does not alternate;
 * - the same loop with ap also given a value before the loop and read at its test (a second
 *   writer, and live across iterations): ap cannot alternate;
 * - the step inside an `if` (its product not on the straight run from the loop's TICK, so an
 *   iteration may pass no barrier): ap cannot alternate either;
 * - a loop whose writes need no barrier (each block updates its own share): nothing alternates,
 *   since nothing would be spared. */
static const char alt_cg[] =
    "graph cg(a: f32[1024, 1024], b: f32[1024], n: i32) -> (x: f32[1024]) {\n"
    "  x = zeros(f32[1024])\n  r = copy(b)\n  p = copy(b)\n  rs = dot(r, r)\n  i = 0\n"
    "  while i < n {\n    ap = a @ p\n    alpha = rs / dot(p, ap)\n    x = x + alpha * p\n"
    "    r = r - alpha * ap\n    rs2 = dot(r, r)\n    p = r + (rs2 / rs) * p\n    rs = rs2\n    i = i + 1\n  }\n}\n";
static const char alt_live[] =
    "graph cg(a: f32[1024, 1024], b: f32[1024], n: i32) -> (x: f32[1024]) {\n"
    "  x = zeros(f32[1024])\n  r = copy(b)\n  p = copy(b)\n  ap = copy(b)\n  rs = dot(r, r)\n  i = 0\n"
    "  while i < n and sum(ap) < 1.0e30 {\n    ap = a @ p\n    alpha = rs / dot(p, ap)\n"
    "    x = x + alpha * p\n    r = r - alpha * ap\n    rs2 = dot(r, r)\n    p = r + (rs2 / rs) * p\n"
    "    rs = rs2\n    i = i + 1\n  }\n}\n";
static const char alt_branch[] =
    "graph cg(a: f32[1024, 1024], b: f32[1024], n: i32) -> (x: f32[1024]) {\n"
    "  x = zeros(f32[1024])\n  r = copy(b)\n  p = copy(b)\n  rs = dot(r, r)\n  i = 0\n"
    "  while i < n {\n    if i % 2 == 0 {\n      ap = a @ p\n      alpha = rs / dot(p, ap)\n"
    "      x = x + alpha * p\n      r = r - alpha * ap\n      rs2 = dot(r, r)\n"
    "      p = r + (rs2 / rs) * p\n      rs = rs2\n    }\n    i = i + 1\n  }\n}\n";
static const char alt_none[] =
    "graph up(v: f32[8192], n: i32) -> (v2: f32[8192]) {\n"
    "  v2 = copy(v)\n  i = 0\n  while i < n {\n    t = v2 * 0.5\n    v2 = t + 1.0\n    i = i + 1\n  }\n}\n";

/* The grid barriers of a program's loop (its one back edge) under a plan: before a record, and
 * a combine's (one per batch). */
static int loop_barriers(const cfx_prog *p, const sched_plan *plan)
{
    int32_t succ[64], h = -1, j = -1;
    int n = 0;
    for (int32_t r = 0; r < p->nrecords; r++) {
        int32_t k = rec_successors(p, r, succ, 64);
        for (int32_t q = 0; q < k; q++)
            if (succ[q] <= r) {
                h = succ[q];
                j = r;
            }
    }
    for (int32_t i = h; h >= 0 && i <= j; i++) {
        n += (plan->flags[i] & SCHED_F_BARRIER_BEFORE) != 0;
        n += (plan->flags[i] & SCHED_F_COMBINE) && plan->batch_head[i] < 0;
    }
    return n;
}

/* Compiles one graph and builds the interpreter's plan and the compiled kernel's for it.
 * Returns its program, or NULL after a failed check (then nothing is left to free). */
static const cfx_prog *plans_of(const char *file, const char *src, compiled_module *m, sched_plan *pi,
                                sched_plan *pc)
{
    char *diag = NULL, err[200];
    sched_opts interp = plan_options_interp(0), comp = plan_options_compiled(0);
    if (!CHECK_INT(compile_source(NULL, file, src, strlen(src), m, &diag), 0)) {
        fprintf(stderr, "%s: %s\n", file, diag ? diag : "");
        free(diag);
        return NULL;
    }
    free(diag);
    const cfx_prog *p = m->graphs[0].prog;
    if (!CHECK_INT(sched_plan_build_opts(p, &interp, pi, err, sizeof err), 0)) {
        compiled_module_free(m);
        return NULL;
    }
    if (!CHECK_INT(sched_plan_build_opts(p, &comp, pc, err, sizeof err), 0)) {
        sched_plan_free(pi);
        compiled_module_free(m);
        return NULL;
    }
    return p;
}

static void test_alternate(void)
{
    static const struct {
        const char *file, *src;
        int interp, compiled; /* the loop's grid barriers; -1: the same as the interpreter's */
        const char *alternates; /* the one slot that alternates, NULL: none */
    } cases[] = {
        {"alt_cg.cfx", alt_cg, 2, 1, "ap"},
        {"alt_live.cfx", alt_live, -1, -1, NULL},
        {"alt_branch.cfx", alt_branch, -1, -1, NULL},
        {"alt_none.cfx", alt_none, 0, 0, NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        compiled_module m;
        sched_plan pi, pc;
        const cfx_prog *p = plans_of(cases[c].file, cases[c].src, &m, &pi, &pc);
        if (p) {
            int bi = loop_barriers(p, &pi), bc = loop_barriers(p, &pc);
            if (cases[c].interp >= 0)
                CHECK_INT(bi, cases[c].interp);
            CHECK_INT(bc, cases[c].compiled >= 0 ? cases[c].compiled : bi);
            CHECK_INT(pi.nalternates, 0);
            CHECK_INT(pc.nalternates, cases[c].alternates ? 1 : 0);
            for (int32_t s = 0; s < p->nslots; s++) {
                if (pc.alt_tick[s] < 0)
                    continue;
                const char *name = p->slots[s].name >= 0 ? p->strings + p->slots[s].name : "";
                CHECK_STR(name, cases[c].alternates ? cases[c].alternates : "(none)");
                CHECK_INT(p->records[pc.alt_tick[s]].kind, REC_TICK);
            }
            sched_plan_free(&pi);
            sched_plan_free(&pc);
            compiled_module_free(&m);
        }
    }
}

/* Products computed an iteration ahead (the compiled kernel's plan): by hand from each loop's
 * shape and barriers (plan.c's rule). */
static void test_ahead(void)
{
    static const struct {
        const char *file, *src;
        int interp, compiled; /* the loop's grid barriers */
        int aheads;
    } cases[] = {
        /* greedy decoding: m @ h (rows shared) waits for h, then the argmax combines; computed
         * right after h for the next step, the combine is the one barrier */
        {"ahead_decode.cfx",
         "graph g(w: f32[4096, 8], m: f32[8, 8], e: f32[4096, 8], n: i32) -> (t: i32) {\n"
         "  h = zeros(f32[8])\n  t = 0\n  i = 0\n  while i < n {\n    h = tanh(m @ h + e[t])\n"
         "    t = argmax(w @ h)\n    i = i + 1\n  }\n}\n",
         2, 1, 1},
        /* the same without the argmax: no barrier follows h, so nothing is computed ahead (the
         * interpreter: tanh reads all of the sum, which the next iteration writes while slow
         * blocks still read it; the compiled kernel alternates the sum instead) */
        {"ahead_nobarrier.cfx",
         "graph g(m: f32[8, 8], e: f32[4096, 8], n: i32) -> (h: f32[8]) {\n"
         "  h = zeros(f32[8])\n  i = 0\n  while i < n {\n    h = tanh(m @ h + e[i % 4096])\n    i = i + 1\n  }\n}\n",
         2, 1, 0},
        /* h written twice in the loop: the product's operand has no one writer */
        {"ahead_two_writers.cfx",
         "graph g(w: f32[4096, 8], m: f32[8, 8], e: f32[4096, 8], n: i32) -> (t: i32) {\n"
         "  h = zeros(f32[8])\n  t = 0\n  i = 0\n  while i < n {\n    h = tanh(m @ h + e[t])\n"
         "    t = argmax(w @ h)\n    h = h * 0.5\n    i = i + 1\n  }\n}\n",
         -1, -1, 0},
        /* CG: its product's operand p is written last, after its barriers: Ap alternates instead */
        {"ahead_cg.cfx", alt_cg, 2, 1, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        compiled_module m;
        sched_plan pi, pc;
        const cfx_prog *p = plans_of(cases[c].file, cases[c].src, &m, &pi, &pc);
        if (p) {
            int bi = loop_barriers(p, &pi), bc = loop_barriers(p, &pc);
            if (cases[c].interp >= 0)
                CHECK_INT(bi, cases[c].interp);
            if (cases[c].compiled >= 0)
                CHECK_INT(bc, cases[c].compiled);
            CHECK_INT(pi.naheads, 0);
            if (!CHECK_INT(pc.naheads, cases[c].aheads))
                fprintf(stderr, "  in %s\n", cases[c].file);
            for (int32_t i = 0; i < p->nrecords; i++) {
                if (pc.ahead_at[i] < 0)
                    continue;
                /* a product, computed after the record that writes its vector, whose output
                 * alternates */
                CHECK_INT(p->records[i].kind, REC_MATMUL);
                CHECK(pc.alt_tick[p->records[i].a] >= 0);
                CHECK(sched_writes(p, &p->records[pc.ahead_at[i]], p->records[i].c));
            }
            sched_plan_free(&pi);
            sched_plan_free(&pc);
            compiled_module_free(&m);
        }
    }
}

/* The tensor kept in L2 (sched_l2_keep): the largest a loop reads whole and never writes, of 1 MiB
 * (1048576 bytes) or more; by hand from each program. */
static void test_l2_keep(void)
{
    static const struct {
        const char *file, *src, *keep; /* keep: the slot's name, NULL: none */
    } cases[] = {
        /* a product's matrix, 2 MiB, read each iteration */
        {"l2_matvec.cfx",
         "graph g(a: f32[1024, 512], v: f32[512], n: i32) -> (w: f32[1024]) {\n"
         "  w = zeros(f32[1024])\n  i = 0\n  while i < n {\n    w = a @ v + w\n    i = i + 1\n  }\n}\n",
         "a"},
        /* the same matrix written in the loop: nothing to keep */
        {"l2_written.cfx",
         "graph g(a: f32[1024, 512], v: f32[512], n: i32) -> (w: f32[1024]) {\n"
         "  w = zeros(f32[1024])\n  b = copy(a)\n  i = 0\n  while i < n {\n    w = b @ v + w\n    b = b * 0.5\n"
         "    i = i + 1\n  }\n}\n",
         NULL},
        /* a 4 MiB table read a row at a time, a 1 MiB matrix read whole: the matrix */
        {"l2_rows.cfx",
         "graph g(e: f32[4096, 256], m: f32[1024, 256], n: i32) -> (w: f32[1024]) {\n"
         "  w = zeros(f32[1024])\n  i = 0\n  while i < n {\n    w = w + m @ e[i % 4096]\n    i = i + 1\n  }\n}\n",
         "m"},
        /* 1 MiB less 4 KiB: L2 keeps it without help */
        {"l2_small.cfx",
         "graph g(m: f32[1020, 256], v: f32[256], n: i32) -> (w: f32[1020]) {\n"
         "  w = zeros(f32[1020])\n  i = 0\n  while i < n {\n    w = w + m @ v\n    i = i + 1\n  }\n}\n",
         NULL},
        /* read whole, but outside the loop */
        {"l2_outside.cfx",
         "graph g(a: f32[1024, 512], v: f32[512], n: i32) -> (w: f32[1024]) {\n"
         "  w = a @ v\n  i = 0\n  while i < n {\n    w = w * 0.5\n    i = i + 1\n  }\n}\n",
         NULL},
        /* two matrices read whole in the loop: the larger (4 MiB against 2 MiB), an elementwise
         * operand counting as much as a product's */
        {"l2_largest.cfx",
         "graph g(a: f32[1024, 512], b: f32[1024, 1024], v: f32[512], n: i32) -> (s: f32) {\n"
         "  s = 0.0\n  i = 0\n  while i < n {\n    s = s + sum(a @ v) + sum(b * 2.0)\n    i = i + 1\n  }\n}\n",
         "b"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        compiled_module m;
        char *diag = NULL;
        if (!CHECK_INT(compile_source(NULL, cases[c].file, cases[c].src, strlen(cases[c].src), &m, &diag), 0)) {
            fprintf(stderr, "%s: %s\n", cases[c].file, diag ? diag : "");
            free(diag);
            continue;
        }
        const cfx_prog *p = m.graphs[0].prog;
        int32_t s = sched_l2_keep(p);
        const char *name = s < 0 ? "(none)" : p->slots[s].name >= 0 ? p->strings + p->slots[s].name : "(a temporary)";
        if (!CHECK_STR(name, cases[c].keep ? cases[c].keep : "(none)"))
            fprintf(stderr, "  in %s\n", cases[c].file);
        compiled_module_free(&m);
        free(diag);
    }
}

/* The programs of gpu_persistent.c, which reach every path of the scheduler. */
static const char *const programs[][2] = {
    {"graph vectors(x: f32[100000], n: i32) -> (s: f32, m: f32, am: i32, nz: bool, y: f32[100000]) {\n"
     "  y = x\n  i = 0\n  while i < n {\n    y = y * 0.5 + 1.0\n"
     "    if sum(y) > 150000.0 {\n      y = y - 0.25\n    }\n    i = i + 1\n  }\n"
     "  s = sum(y)\n  m = max(y)\n  am = argmax(y)\n  nz = all(y > 0.0)\n}\n", "n=7"},
    {"graph small(v: i32[16], k: i32) -> (t: i32, w: i32[16], z: i64) {\n"
     "  w = v\n  t = 0\n  z = cast(0, i64)\n  for j in range(0, k) {\n    w = w * 3 % 7 + j\n"
     "    t = t + sum(w)\n    switch j % 3 {\n      case 0 { z = z + cast(t, i64) }\n"
     "      case 1 { z = z - 1 }\n      default { print(w, \"w\") }\n    }\n  }\n}\n", "k=30"},
    {"graph rows(x: f32[64, 512], n: i32) -> (acc: f32[512], best: i32, x2: f32[64, 512]) {\n"
     "  acc = x[0]\n  best = 0\n  x2 = x\n  for i in range(1, n) {\n"
     "    acc = acc + x[i % 64] * 0.5\n    if sum(acc) > 3.0 {\n      best = i\n    }\n"
     "    x2[(i * 7) % 64] = acc\n  }\n}\n", "n=40"},
    {"graph products(a: f32[40, 30], b: f32[30, 20], p: i32[9, 7], q: i32[7, 5], v: f64[30],\n"
     "               w: f64[33, 30]) -> (c: f32[40, 20], r: i32[9, 5], wv: f64[33], t: f32[20, 40],\n"
     "               d: f64) {\n  c = a @ b\n  r = p @ q\n  wv = w @ v\n  t = transpose(c)\n"
     "  d = dot(v, v)\n}\n", ""},
    {"graph bigmm(a: f32[100, 64], b: f32[64, 90]) -> (c: f32[100, 90], s: f32) {\n"
     "  c = a @ b\n  s = sum(c)\n  for i in range(0, 3) {\n    c = where(c > 0.0, c, c * 0.5)\n"
     "    s = s + norm(c)\n  }\n}\n", ""},
};

static const char *const stop_src =
    "graph stops(x: f32[8], k: i32, d: i32[5000], n: i32) -> (y: f32, q: i32[5000], c: i32) {\n"
    "  c = 0\n  while c < n {\n    c = c + 1\n  }\n  y = x[k]\n  q = d // d\n"
    "  assert(y > -2.0, \"y is too small\")\n  for s in range(0, 3, k - 1) {\n    c = c + s\n  }\n}\n";

static void compare_graph(const char *path, const char *text, long len, void *user)
{
    compare_compiled_with(path, text, (size_t)len, "", 3000, NULL, (compare_stats *)user);
}

static void test_compiled(void)
{
    int n = 0;
    for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++)
        n += compare_compiled("program.cfx", programs[i][0], strlen(programs[i][0]), programs[i][1], 0);
    const char *stop_inputs[] = {"k=3 n=5", "k=9 n=5", "k=-9 n=5", "k=3 n=5 d=0", "k=3 n=5 x=-3",
                                 "k=1 n=5"};
    for (int i = 0; i < 6; i++)
        n += compare_compiled("stops.cfx", stop_src, strlen(stop_src), stop_inputs[i], 0);
    n += compare_compiled("stops.cfx", stop_src, strlen(stop_src), "k=3 n=50", 20);
    CHECK_INT(n, 12);

    /* every example graph, with generated inputs and a budget against runaway loops */
    compare_stats st;
    memset(&st, 0, sizeof st);
    int files = test_each_graph(compare_graph, &st);
    printf("test_sched: %d example files, %d graphs compared with the cpu executor (%d with micro-ops, entered "
           "%d times)\n", files, st.graphs, st.mop_graphs, st.mop_calls);
    CHECK(files >= 10 && st.graphs >= 30);
    CHECK(st.mop_graphs >= 15 && st.mop_calls >= 100);
}

/* ==== generated programs: one-block loops as micro-ops ===================================== */

/* The generator's programs as they are (no kernel calls, so their loops are one-block loops,
 * run as micro-ops with the interpreter for their tensor records), every third under a small
 * budget so that limit stops fall inside the micro-ops. */
static void test_generated_microops(void)
{
    gen_prog *g = (gen_prog *)malloc(sizeof *g);
    compare_stats st;
    memset(&st, 0, sizeof st);
    int n = generated_count();
    for (uint64_t seed = 1; seed <= (uint64_t)n; seed++) {
        gen_make(g, seed);
        char *text = gen_text(g);
        compare_opts co = {seed % 2 ? 24u : 0u, 0, 1};
        compare_compiled_with("generated.cfx", text, strlen(text), "", seed % 3 == 0 ? (int64_t)(1 + seed % 7) : 400,
                              &co, &st);
        free(text);
    }
    printf("test_sched: %d generated programs compared with the cpu executor, %d with micro-ops (entered %d "
           "times, %d runs stopped, %d prints waited for the ring)\n",
           st.graphs, st.mop_graphs, st.mop_calls, st.stopped, st.ring_waits);
    /* nearly every program compiles, more than half have one-block loops, runs stop (300
     * programs gave 300 graphs, 207 with micro-ops entered 2768 times, 918 runs stopped) */
    CHECK(st.graphs >= n * 29 / 30);
    CHECK(st.mop_graphs >= n / 2 && st.mop_calls >= n * 10 / 3);
    CHECK(st.stopped >= n / 3);
    free(g);
}

/* ==== pauses: CALLs, full print buffers, cancel, against the cpu executor ================== */

/* Prints, then a stop that every block raises at the same record. Block 0 prints while the
 * others run ahead to the stop; with a ring of two entries it must wait for the host there,
 * and it must not take the others' stop for a reason to leave: the cpu executor prints all
 * four lines before it stops. */
static const char *const prints_then_stop_src =
    "graph late(n: i32, v: i32[4]) -> (r: i32) {\n"
    "  print(n, \"a\")\n  print(n + 1, \"b\")\n  print(n + 2, \"c\")\n  print(n + 3, \"d\")\n"
    "  r = v[n]\n}\n";

static void test_prints_before_stop(void)
{
    compare_stats st;
    compare_opts co = {24u, 0, 0};
    memset(&st, 0, sizeof st);
    for (int i = 0; i < 5; i++)
        CHECK_INT(compare_compiled_with("late.cfx", prints_then_stop_src, strlen(prints_then_stop_src), "n=4", 0,
                                        &co, &st),
                  1);
    CHECK_INT(st.stopped, 5 * 6);
    CHECK(st.ring_waits > 0);
    printf("test_sched: prints before a stop raised by blocks ahead of block 0: %d runs, %d prints waited for "
           "the ring\n", st.stopped, st.ring_waits);
}

/* A CALL right after the loop's TICK: at the first TICK of every launch after a CALL, block 0
 * reads the status after its slow poll, when the other blocks have already reached the next
 * CALL and paused the run. A block 0 that left there would lose i, c and s. */
static const char *const call_loop_src =
    "graph racy(w: f32[4], n: i32) -> (w2: f32[4], c: i32, s: f32) {\n"
    "  w2 = w\n  c = 0\n  s = 0.0\n  for i in range(0, n) {\n    w2 = kw(w2)\n    c = c + i\n"
    "    s = s + sum(w2)\n  }\n}\n";

/* gpu_persistent.c's: a kernel over a big tensor and a print in every iteration. */
static const char *const calls_src =
    "graph calls(x: f32[3000], n: i32) -> (y: f32[3000], s: f32) {\n"
    "  y = x\n  s = 0.0\n  for i in range(0, n) {\n    y = dup(y) * 0.5 + 1.0\n"
    "    s = s + sum(y)\n    print(s, \"s\")\n  }\n}\n";

/* Kernels in branches, after a break test and before an early return. */
static const char *const call_branches_src =
    "graph branchy(a: i32, b: i32, v: i32[4], n: i32) -> (a2: i32, v2: i32[4], t: i32) {\n"
    "  a2 = a\n  v2 = v\n  t = 0\n  while t < n {\n    t = t + 1\n    if t % 3 == 0 {\n"
    "      v2 = kv(v2)\n      continue\n    } elif t % 5 == 0 {\n      a2 = ka(a2, t)\n"
    "    } else {\n      print(a2, \"a2\")\n    }\n    if t > 20 {\n      break\n    }\n"
    "    if sum(v2) < 0 {\n      a2 = ka(a2, 1)\n      return\n    }\n  }\n  a2 = ka(a2, b)\n}\n";

/* A loop that runs until it is cancelled: over a big tensor (every block); and a scalar one,
 * a one-block loop that runs as micro-ops. */
static const char *const spin_small_src =
    "graph spin1(n: i64) -> (c: i64) {\n  c = cast(0, i64)\n  while c < n {\n    c = c + 1\n  }\n}\n";
static const char *const spin_src =
    "graph spin(n: i64, v: f32[20000]) -> (c: i64, s: f32) {\n"
    "  c = cast(0, i64)\n  s = 0.0\n  while c < n {\n    c = c + 1\n    s = s + sum(v)\n  }\n}\n";

static int64_t spin_n;
static void init_spin(const cfx_prog *p, uint8_t *arena)
{
    memcpy(arena + p->slots[p->inputs[0]].offset, &spin_n, 8);
}

/* Products: with a threshold of 10000 multiply-adds, a @ b and transpose(c) @ a (24000
 * each) end the launch and run between launches, w @ v (6000) stays inline as a
 * matrix-vector product split by rows over the blocks (w has 6000 elements: the loop is
 * not a one-block loop). */
static const char *const products_src =
    "graph prods(a: f32[40, 30], b: f32[30, 20], w: f32[300, 20], v: f32[20], n: i32) -> (c: f32[40, 20],\n"
    "            wv: f32[300], s: f32) {\n"
    "  c = a @ b\n  wv = w @ v\n  s = 0.0\n  for i in range(0, n) {\n    c = c * 0.5 + 1.0\n"
    "    d = transpose(c) @ a\n    s = s + sum(d)\n    wv = w @ v * 0.5 + wv\n    print(s, \"s\")\n"
    "    if s > 1000000.0 {\n      break\n    }\n  }\n}\n";

/* A loop that would run for ever, cancelled by the host after 30 ms, with 1 and 4 blocks on
 * both paths; with `microops`, block 0 runs it as micro-ops and sees the cancel at a TICK's
 * poll, having entered them once. */
static void cancel_runs(const char *file, const char *src, int microops)
{
    compiled_module m;
    char *diag = NULL;
    if (CHECK_INT(compile_source(NULL, file, src, strlen(src), &m, &diag), 0)) {
        const cfx_prog *p = m.graphs[0].prog;
        sched_plan plan;
        mop_prog mops;
        char err[200];
        CHECK_INT(sched_plan_build(p, &plan, err, sizeof err), 0);
        if (microops)
            CHECK_INT(mop_translate(p, &plan, &mops, err, sizeof err), 0);
        for (int k = 0; k < 4; k++) {
            replica rp;
            replica_opts ro;
            memset(&ro, 0, sizeof ro);
            ro.ablate_pc = -1;
            ro.cancel_after_ms = 30;
            ro.init = init_spin;
            ro.device_launch = k >= 2;
            ro.mops = microops ? &mops : NULL;
            spin_n = (int64_t)1 << 50;
            uint8_t *arena = replica_run_opts(&rp, p, &plan, k % 2 ? 4 : 1, &ro);
            CHECK_INT(rp.out.status, CFX_STOP_CANCELLED);
            CHECK(rp.out.iterations > 0);
            check_uniform(&rp);
            if (microops) {
                CHECK(rp.out.record >= 0 && p->records[rp.out.record].kind == REC_TICK);
                CHECK_INT(rp.mop_calls, 1); /* entered once, never left before the cancel */
            }
            free(rp.prints);
            free(arena);
        }
        if (microops)
            mop_prog_free(&mops);
        sched_plan_free(&plan);
        compiled_module_free(&m);
    }
    free(diag);
}

static void test_launch_sites(void)
{
    compare_stats st;
    compare_opts co;
    memset(&st, 0, sizeof st);
    memset(&co, 0, sizeof co);
    compare_compiled_with("racy.cfx", call_loop_src, strlen(call_loop_src), "n=12", 0, NULL, &st);
    compare_compiled_with("racy.cfx", call_loop_src, strlen(call_loop_src), "n=0", 0, NULL, &st);
    compare_compiled_with("racy.cfx", call_loop_src, strlen(call_loop_src), "n=30", 9, NULL, &st);
    CHECK_INT(st.graphs, 3);
    CHECK_INT(st.sites, 6 * (12 + 9)); /* six runs a graph; the budget stops the third at 9 */

    /* prints in a ring of two entries, which the host drains while the blocks run */
    memset(&st, 0, sizeof st);
    co.ring_cap = 16;
    compare_compiled_with("calls.cfx", calls_src, strlen(calls_src), "n=7", 0, &co, &st);
    CHECK_INT(st.sites, 6 * 7);
    /* ... and inside a one-block loop: gpu_persistent.c's `small` prints i32[16] (72 bytes) */
    memset(&st, 0, sizeof st);
    co.ring_cap = 80;
    compare_compiled_with("small.cfx", programs[1][0], strlen(programs[1][0]), "k=30", 0, &co, &st);
    CHECK(st.ring_waits > 0);

    memset(&st, 0, sizeof st);
    co.ring_cap = 16;
    const char *branch_inputs[] = {"n=30 a=2 b=3", "n=4 a=1 b=1", "n=0 a=5 b=7", "n=30 v=-9 a=1 b=1"};
    for (int i = 0; i < 4; i++)
        compare_compiled_with("branchy.cfx", call_branches_src, strlen(call_branches_src), branch_inputs[i], 0,
                              &co, &st);
    compare_compiled_with("branchy.cfx", call_branches_src, strlen(call_branches_src), "n=30 a=2 b=3", 7, &co,
                          &st);
    CHECK_INT(st.graphs, 5);
    CHECK(st.sites > 40);

    /* launched products, inline matrix-vector products; and the same with none launched */
    memset(&st, 0, sizeof st);
    co.ring_cap = 0;
    co.launch_product_min = 10000;
    compare_compiled_with("prods.cfx", products_src, strlen(products_src), "n=6", 0, &co, &st);
    CHECK_INT(st.sites, 6 * (1 + 6));
    co.launch_product_min = 0;
    compare_compiled_with("prods.cfx", products_src, strlen(products_src), "n=6", 0, &co, &st);
    CHECK_INT(st.sites, 6 * (1 + 6));
    {
        compiled_module m;
        char *diag = NULL;
        sched_plan plan;
        sched_opts so = plan_options_interp(10000);
        char err[200];
        if (CHECK_INT(compile_source(NULL, "prods.cfx", products_src, strlen(products_src), &m, &diag), 0)) {
            const cfx_prog *p = m.graphs[0].prog;
            int launched = 0, matvec = 0;
            CHECK_INT(sched_plan_build_opts(p, &so, &plan, err, sizeof err), 0);
            for (int32_t i = 0; i < p->nrecords; i++) {
                const cfx_record *r = &p->records[i];
                if (r->kind != REC_MATMUL)
                    continue;
                if (plan.flags[i] & SCHED_F_LAUNCH) {
                    launched++;
                    CHECK(!(plan.flags[i] & SCHED_F_ONE_BLOCK));
                } else {
                    matvec += sched_matvec(r, p->slots) && (plan.flags[i] & SCHED_F_SPLIT);
                }
            }
            CHECK_INT(launched, 2);
            CHECK_INT(plan.nlaunch_products, 2);
            CHECK_INT(matvec, 2);
            sched_plan_free(&plan);
            compiled_module_free(&m);
        }
        free(diag);
    }

    /* a cancel from the host, seen by block 0 at a TICK or in a barrier: every block stops */
    cancel_runs("spin.cfx", spin_src, 0);
    cancel_runs("spin1.cfx", spin_small_src, 1);
}

#ifdef RUN_KERNEL
/* The interpreter's per-record trace on both paths (docs/persistent.md): the same events on
 * device graph launch, whose launches the kernel starts itself, as on pause and relaunch. racy
 * with n = 12 is 12 iterations by hand, each ending a launch at its CALL: every block's events
 * are in order in time, each within its own start and end, with the loop's TICK and the CALL
 * 12 times on block 0, and block 0 walks the same records in the same order on both paths.
 * The profile block 0 adds up from the same stamps counts each record as often as the cpu
 * executor's profile does, and its times fit in its span. */
static void test_trace_paths(void)
{
    compiled_module m;
    char *diag = NULL;
    if (!CHECK_INT(compile_source(test_context(), "racy.cfx", call_loop_src, strlen(call_loop_src), &m, &diag), 0)) {
        free(diag);
        return;
    }
    const cfx_prog *p = m.graphs[0].prog;
    sched_plan plan;
    sched_opts so = plan_options_interp(0);
    exec_kernel kernels[16];
    void *in[32] = {0};
    char err[200];
    resolve_kernels(p, kernels);
    CHECK_INT(sched_plan_build_opts(p, &so, &plan, err, sizeof err), 0);
    for (int32_t i = 0; i < p->ninputs; i++) {
        const cfx_slot *sl = &p->slots[p->inputs[i]];
        in[i] = calloc((size_t)slot_bytes(sl) + 1, 1);
        fill_value(sl, (uint8_t *)in[i], m.graphs[0].params[i].name, "n=12");
    }
    int32_t tick = -1, call = -1;
    for (int32_t i = 0; i < p->nrecords; i++) {
        tick = p->records[i].kind == REC_TICK && tick < 0 ? i : tick;
        call = p->records[i].kind == REC_CALL && call < 0 ? i : call;
    }
    CHECK(tick >= 0 && call >= 0);
    /* the cpu executor's profile counts, for the device profile's */
    int64_t *cpu_count = calloc((size_t)p->nrecords + 1, sizeof *cpu_count);
    int64_t *cpu_ns = calloc((size_t)p->nrecords + 1, sizeof *cpu_ns);
    {
        void *out[32] = {0};
        exec_profile prof = {cpu_count, cpu_ns, 0};
        exec_run run;
        exec_outcome o;
        memset(&run, 0, sizeof run);
        for (int32_t i = 0; i < p->nresults; i++)
            out[i] = calloc((size_t)slot_bytes(&p->slots[p->results[i]]) + 1, 1);
        run.prog = p;
        run.inputs = in;
        run.results = out;
        run.kernels = kernels;
        run.profile = &prof;
        CHECK_INT(cpu_run(&run, &o), 0);
        CHECK_INT(o.status, CFX_OK);
        CHECK_INT(cpu_count[tick], 12);
        for (int i = 0; i < 32; i++)
            free(out[i]);
    }
    int32_t *walk[2] = {NULL, NULL};
    uint32_t nwalk[2] = {0, 0};
    for (int dl = 0; dl < 2; dl++) {
        persist_host_opts ho;
        persist_host_result hr;
        host_sites hs = {p, kernels};
        memset(&ho, 0, sizeof ho);
        ho.nblocks = 3;
        ho.device_launch = dl;
        ho.init = init_inputs;
        ho.site = host_site_work;
        ho.site_user = &hs;
        ho.trace = 1;
        g_inputs = in;
        if (!CHECK_INT(persist_host_run(p, &plan, &ho, &hr), 0) || !CHECK(hr.trace != NULL && hr.prof != NULL)) {
            free(hr.arena);
            free(hr.prints);
            free(hr.trace);
            free(hr.prof);
            continue;
        }
        int counts_ok = 1;
        unsigned long long sum = 0;
        for (int32_t i = 0; i < p->nrecords; i++) {
            counts_ok &= (int64_t)hr.prof[2 + 2 * i] == cpu_count[i];
            sum += hr.prof[3 + 2 * i];
        }
        if (!CHECK(counts_ok))
            fprintf(stderr, "  the device profile's counts differ from the cpu executor's (%s)\n",
                    dl ? "device graph launch" : "pause and relaunch");
        CHECK(hr.prof[1] >= hr.prof[0] && sum <= hr.prof[1] - hr.prof[0]);
        CHECK_INT(hr.out.status, CFX_OK);
        CHECK_INT(hr.launches, 13); /* the first, and one after each CALL */
        for (int b = 0; b < ho.nblocks; b++) {
            const persist_host_event *ev = hr.trace + (size_t)b * PERSIST_HOST_TRACE_CAP;
            uint32_t n = hr.trace_count[b];
            int order_ok = n > 0 && n <= PERSIST_HOST_TRACE_CAP, ticks = 0, calls = 0;
            for (uint32_t k = 0; order_ok && k < n; k++) {
                order_ok = ev[k].record >= 0 && ev[k].record < p->nrecords && ev[k].t0 <= ev[k].t1 &&
                           (k == 0 || ev[k - 1].t1 <= ev[k].t0);
                ticks += ev[k].record == tick;
                calls += ev[k].record == call;
            }
            if (!CHECK(order_ok))
                fprintf(stderr, "  block %d's trace (%u events, %s) is out of order\n", b, n,
                        dl ? "device graph launch" : "pause and relaunch");
            if (b == 0) {
                CHECK_INT(ticks, 12);
                CHECK_INT(calls, 12);
                walk[dl] = malloc(sizeof(int32_t) * (n + 1));
                for (uint32_t k = 0; walk[dl] && k < n; k++)
                    walk[dl][k] = ev[k].record;
                nwalk[dl] = n;
            }
        }
        free(hr.arena);
        free(hr.prints);
        free(hr.trace);
        free(hr.prof);
    }
    free(cpu_count);
    free(cpu_ns);
    if (CHECK(walk[0] && walk[1]) && CHECK_INT(nwalk[1], nwalk[0]))
        CHECK(memcmp(walk[0], walk[1], sizeof(int32_t) * nwalk[0]) == 0);
    free(walk[0]);
    free(walk[1]);
    for (int i = 0; i < 32; i++)
        free(in[i]);
    sched_plan_free(&plan);
    compiled_module_free(&m);
}
#endif

#ifdef RUN_KERNEL
/* A traced run keeps the micro-ops (the path an untraced run takes): a one-block loop whose
 * 7 iterations (by hand: i = 0 .. 6, s = 0 + 1 + ... + 6 = 21) run as micro-ops is one span
 * on block 0's track, marked as micro-ops, at the record where they start, and the profile
 * counts the 7 iterations at the loop's TICK. */
static void test_trace_microops(void)
{
    static const char src[] = "graph tm(n: i32) -> (s: i32) {\n"
                              "  s = 0\n  i = 0\n"
                              "  while i < n {\n    s = s + i\n    i = i + 1\n  }\n}\n";
    compiled_module m;
    char *diag = NULL;
    if (!CHECK_INT(compile_source(test_context(), "tm.cfx", src, strlen(src), &m, &diag), 0)) {
        free(diag);
        return;
    }
    const cfx_prog *p = m.graphs[0].prog;
    sched_plan plan;
    mop_prog mops;
    void *in[32] = {0};
    char err[200];
    CHECK_INT(sched_plan_build(p, &plan, err, sizeof err), 0);
    if (!CHECK_INT(mop_translate(p, &plan, &mops, err, sizeof err), 0)) {
        sched_plan_free(&plan);
        compiled_module_free(&m);
        return;
    }
    in[0] = calloc(8, 1);
    fill_value(&p->slots[p->inputs[0]], (uint8_t *)in[0], "n", "n=7");
    int32_t tick = -1;
    for (int32_t i = 0; i < p->nrecords; i++)
        tick = p->records[i].kind == REC_TICK && tick < 0 ? i : tick;
    persist_host_opts ho;
    persist_host_result hr;
    memset(&ho, 0, sizeof ho);
    ho.nblocks = 3;
    ho.init = init_inputs;
    ho.mops = &mops;
    ho.trace = 1;
    g_inputs = in;
    if (CHECK_INT(persist_host_run(p, &plan, &ho, &hr), 0) && CHECK(hr.trace && hr.prof) && CHECK(tick >= 0)) {
        CHECK_INT(hr.out.status, CFX_OK);
        CHECK_INT(*(int32_t *)(hr.arena + p->slots[p->results[0]].offset), 21);
        CHECK_INT((int64_t)hr.prof[2 + 2 * tick], 7);
        int spans = 0;
        for (uint32_t k = 0; k < hr.trace_count[0] && k < PERSIST_HOST_TRACE_CAP; k++)
            if (hr.trace[k].what == 1) {
                spans++;
                CHECK(hr.trace[k].record >= 0 && hr.trace[k].record <= tick && hr.trace[k].t0 <= hr.trace[k].t1);
            }
        CHECK_INT(spans, 1);
    }
    free(hr.arena);
    free(hr.prints);
    free(hr.trace);
    free(hr.prof);
    free(in[0]);
    mop_prog_free(&mops);
    sched_plan_free(&plan);
    compiled_module_free(&m);
}

/* The stand-in's own hang catcher (persist_host.cpp), in a child process: the same loop, nobody
 * held, with a launch's limit at 1 s, must end in about that with one line that says a hang and
 * where each block stands, and abort (or, where the race detector does not stop at a race, end
 * the run with CFX_ERROR), rather than run until ctest's TIMEOUT. */
static void check_hang_catcher(const cfx_prog *p, const sched_plan *plan)
{
    char errs[] = "/tmp/test_sched_hang_XXXXXX";
    int fd = mkstemp(errs);
    if (!CHECK(fd >= 0))
        return;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        if (dup2(fd, 2) < 0)
            _exit(2);
        persist_host_opts ho;
        persist_host_result hr;
        memset(&ho, 0, sizeof ho);
        ho.nblocks = 4;
        ho.threads = 64;
        ho.init = init_inputs;
        ho.hold_block = -1;
        ho.limit_ms = 1000;
        int rc = persist_host_run(p, plan, &ho, &hr);
        _exit(rc == 0 && hr.out.status == CFX_ERROR ? 7 : 1);
    }
    int wst = 0;
    char text[2048] = "";
    if (CHECK(pid > 0 && waitpid(pid, &wst, 0) == pid)) {
        ssize_t n = pread(fd, text, sizeof text - 1, 0);
        text[n > 0 ? n : 0] = 0;
        const int aborted = WIFSIGNALED(wst) && WTERMSIG(wst) == SIGABRT;
        const int stopped = WIFEXITED(wst) && WEXITSTATUS(wst) == 7;
        if (!CHECK((aborted || stopped) && strstr(text, "persist_host.cpp: a hang (on a GPU): the launch ran past 1.0 s") &&
                   strstr(text, " block 3 ")))
            fprintf(stderr, "hang catcher: the child %s, and said:\n%s",
                    aborted ? "aborted" : stopped ? "stopped" : "ended otherwise", text);
    }
    close(fd);
    unlink(errs);
}

/* The hang report (exec_format_hang over the blocks' progress words): a planted deadlock, block
 * 2 of 4 held before the grid barrier of the split sum on line 6, is reported, while the blocks
 * stand where they are, as that barrier with 3 of 4 blocks waiting and block 2 not arrived; the
 * run then ends cancelled. The loop would run 1000000 times: a finished run is a failure. */
static void test_hang_report(void)
{
    static const char src[] =
        "graph hang(x: f32[200000], n: i32) -> (s: f32) {\n" /* 1 */
        "  s = 0.0\n"                                        /* 2 */
        "  y = x\n"                                          /* 3 */
        "  for i in range(0, n) {\n"                         /* 4 */
        "    y = y * 0.5\n"                                  /* 5 */
        "    s = s + sum(y)\n"                               /* 6 */
        "  }\n}\n";
    compiled_module m;
    char *diag = NULL;
    if (!CHECK_INT(compile_source(test_context(), "hang.cfx", src, strlen(src), &m, &diag), 0)) {
        free(diag);
        return;
    }
    const cfx_prog *p = m.graphs[0].prog;
    sched_plan plan;
    sched_opts so = plan_options_interp(0);
    void *in[32] = {0};
    char err[200];
    CHECK_INT(sched_plan_build_opts(p, &so, &plan, err, sizeof err), 0);
    for (int32_t i = 0; i < p->ninputs; i++) {
        const cfx_slot *sl = &p->slots[p->inputs[i]];
        in[i] = calloc((size_t)slot_bytes(sl) + 1, 1);
        fill_value(sl, (uint8_t *)in[i], m.graphs[0].params[i].name, "n=1000000");
    }
    int32_t reduce = -1;
    for (int32_t i = 0; i < p->nrecords; i++)
        if (p->records[i].kind == REC_REDUCE && reduce < 0)
            reduce = i;
    if (CHECK(reduce >= 0) && CHECK_INT(p->records[reduce].line, 6)) {
        persist_host_opts ho;
        persist_host_result hr;
        memset(&ho, 0, sizeof ho);
        ho.nblocks = 4;
        ho.threads = 64;
        ho.init = init_inputs;
        ho.hold_block = 2;
        ho.hold_barrier = reduce;
        ho.report_ms = 300;
        g_inputs = in;
        CHECK_INT(persist_host_run(p, &plan, &ho, &hr), 0);
        CHECK_INT(hr.out.status, CFX_STOP_CANCELLED);
        char want[256];
        snprintf(want, sizeof want, "grid barrier at hang.cfx:6:5 (record %d): 3 of 4 blocks wait there; not arrived: block 2 (",
                 (int)reduce);
        if (!CHECK(strstr(hr.hang, want) != NULL))
            fprintf(stderr, "  the hang report:\n%s  wanted a line with: %s\n", hr.hang, want);
        CHECK(strstr(hr.hang, "block 2: at ") != NULL);
        CHECK(strstr(hr.hang, "block 0: at hang.cfx:6:5 after ") != NULL);
        free(hr.arena);
        free(hr.prints);
        free(hr.trace);
        free(hr.prof);
        check_hang_catcher(p, &plan);
    }
    for (int i = 0; i < 32; i++)
        free(in[i]);
    sched_plan_free(&plan);
    compiled_module_free(&m);
}
#endif

/* ==== generated programs with kernels called in loops, branches, before break and return ==== */

/* A kernel call after every line that opens a block (but a switch's), with probability 1/2
 * (gen_inject). */
static char *inject_calls(const char *text, uint64_t seed)
{
    static const char *const stmts[] = {"w = kw(w)", "v = kv(v)", "a = ka(a, b)", "b = kfail(b)"};
    return gen_inject(text, seed, stmts, 4);
}

static void test_generated_calls(void)
{
    gen_prog *g = (gen_prog *)malloc(sizeof *g);
    compare_stats st;
    int with_break = 0, with_return = 0, with_loop = 0;
    memset(&st, 0, sizeof st);
    int n = generated_count();
    for (uint64_t seed = 1; seed <= (uint64_t)n; seed++) {
        gen_make(g, seed);
        char *plain = gen_text(g);
        char *text = inject_calls(plain, seed);
        int sites_before = st.sites;
        compare_opts co = {seed % 2 ? 24u : 0u, 0, 1};
        /* every other one with the smallest print ring (two of its biggest entry) */
        if (compare_compiled_with("generated.cfx", text, strlen(text), "", 400, &co, &st) > 0 &&
            st.sites > sites_before) {
            with_break += strstr(text, "break") != NULL;
            with_return += strstr(text, "return") != NULL;
            with_loop += strstr(text, "while") != NULL || strstr(text, "for ") != NULL;
        }
        free(plain);
        free(text);
    }
    printf("test_sched: %d generated programs with calls compared with the cpu executor on both paths (%d "
           "CALLs run between launches, %d prints waited for the ring, %d runs stopped; %d with break, %d with "
           "return, %d with loops)\n",
           st.graphs, st.sites, st.ring_waits, st.stopped, with_break, with_return, with_loop);
    /* 300 programs gave 300 graphs, 3336 CALLs between launches, 106 with break, 108 with
     * return, 179 with loops */
    CHECK(st.graphs >= n * 5 / 6);
    CHECK(st.sites >= n * 16 / 3);
    CHECK(with_break >= n / 15 && with_return >= n / 15 && with_loop >= n / 6);
    free(g);
}

/* test_sched --files F.cfx ...: each file's graphs alone, on the replica and (with a C++
 * compiler) the interpreter's own kernel on host threads, against the cpu executor on inputs
 * drawn at random, as compare_compiled_with does for the example graphs (tests/onnx/node_tests.py
 * --standin gives it ONNX's control-flow models imported with `cfx import`). */
static int run_files(int argc, char **argv)
{
    compare_stats st;
    memset(&st, 0, sizeof st);
    int files = 0;
    for (int i = 0; i < argc; i++) {
        long len = 0;
        char *text = test_read_file(argv[i], &len);
        if (!CHECK(text != NULL))
            continue;
        files += CHECK(compare_compiled_with(argv[i], text, (size_t)len, "", 400, NULL, &st) > 0);
        free(text);
    }
    printf("test_sched --files: %d of %d files compiled, %d graphs compared with the cpu executor "
           "(%d runs stopped)\n", files, argc, st.graphs, st.stopped);
#ifdef RUN_KERNEL
    printf("test_sched --files: the interpreter's own kernel on host threads: %d runs\n", kernel_runs);
#endif
    return test_finish("test_sched --files");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--files") == 0)
        return run_files(argc - 2, argv + 2);
    stress_run = test_stress(argc, argv);
#ifdef RUN_KERNEL
    standin_sweep = getenv("CFX_STANDIN_SWEEP") && strcmp(getenv("CFX_STANDIN_SWEEP"), "1") == 0;
#endif
    test_share();
    test_p1();
    test_p2();
    test_p3();
    test_compiled();
    test_alternate();
    test_ahead();
    test_l2_keep();
    test_launch_sites();
#ifdef RUN_KERNEL
    test_trace_paths();
    test_trace_microops();
    test_hang_report();
#endif
    test_prints_before_stop();
    test_generated_calls();
    test_generated_microops();
#ifdef RUN_KERNEL
    printf("test_sched: the interpreter's own kernel (device/interp_kernel.cuh) on host threads, blocks of %d "
           "threads: %d runs "
           "compared with the cpu executor, %d launch-ending records served between launches\n",
           PERSIST_HOST_THREADS, kernel_runs, kernel_sites);
    {
        /* the race detector (tests/race_host.h) ran in them, unless the environment turned it off */
        const char *race = getenv("CFX_STANDIN_RACE");
        printf("test_sched: the stand-in's race detector checked %llu accesses of the kernel's\n",
               persist_host_race_checks());
        if (!(race && strcmp(race, "0") == 0))
            CHECK(persist_host_race_checks() > 1000);
    }
    if (stress_run) /* 300 generated programs of each kind gave 2748 runs, 2436 records */
        CHECK(kernel_runs >= 4 * 400 && kernel_sites >= 1000);
    else
        CHECK(kernel_runs >= 80 && kernel_sites >= 40);
#else
    printf("test_sched: the interpreter's own kernel was not run (%s)\n",
#ifdef UNDER_TSAN
           "ThreadSanitizer does not follow its fences"
#else
           "no C++ compiler at configure time"
#endif
    );
#endif
    return test_finish("test_sched");
}
