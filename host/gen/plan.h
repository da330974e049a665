/* plan.h: the persistent executor's plan: which records a block shares, where the grid
 * barriers go, which slots live privately in every block. Built once per upload on the
 * host (host/gen/plan.c), walked by every block on the device (device/scheduler.h).
 *
 * The model (device/interp_kernel.cuh walks it, tests/test_sched.c replays it on pthreads):
 * - Every block walks every record. A record whose output has many elements is SPLIT: each
 *   block computes its share (sched_share) of the elements. A record whose output has one
 *   element is computed REDUNDANTLY by every block into the block's own PRIVATE copy of that
 *   slot, so scalars, conditions and loop counters never need a grid barrier and every
 *   block takes the same branch: a condition is either such a private scalar, computed the
 *   same way from the same values by every block, or was read from a slot that a barrier
 *   made complete. Const slots are read where they are and never written.
 * - A grid barrier is placed before a record (SCHED_F_BARRIER_BEFORE) when the record
 *   touches a slot in a way that may meet another block's access since the last barrier:
 *   any read or write of an element that is not in this block's own share of that slot,
 *   against any access of the slot by another block (read-after-write, write-after-read,
 *   write-after-write). Accesses of element e by the block that owns e under
 *   sched_share(count) ("aligned") never conflict with each other: an elementwise chain
 *   runs with no barrier at all. The analysis is a forward data flow over the records; at
 *   a jump target it assumes the pending accesses of every predecessor (a union), so it is
 *   conservative across branches and loops.
 * - A reduction over a big slot (SCHED_F_COMBINE) folds each block's share into a partial,
 *   writes it to a global array, passes a grid barrier inside the record and then every
 *   block merges all partials in block order into its private result: one barrier, the
 *   same bits in every block. Later split reductions of the same straight run of records
 *   whose inputs nothing in between writes, and whose results nothing in between touches,
 *   join its BATCH: their partials are folded there too and pass the same barrier
 *   (batch_next, batch_head), and at their own records nothing is left to do. Power
 *   iteration's dot(v, w) and norm(w) cost one barrier, not two. Partials alternate between two arrays (by a count of combines
 *   that every block keeps the same), so a fast block's next partial never overwrites one
 *   a slow block is still merging: to reach a third combine it must pass the second's
 *   barrier, which the slow block reaches only after finishing the first.
 * - A loop whose slots are all small (at most SCHED_SMALL_COUNT elements) and that has one
 *   entry and one exit is a ONE_BLOCK region: block 0 runs it alone with block barriers
 *   only (its shares are those of one block), the other blocks jump from the region's
 *   entry to its exit and wait there. At the exit record every block arriving from outside
 *   a region or from that region publishes/reloads: block 0 writes its private copies to a
 *   publish buffer (two, alternating, for the reason above), a grid barrier, the other
 *   blocks reload theirs from it.
 *
 * - A launch starts with every block loading its private copies from the arena and one grid
 *   barrier: block 0 writes its copies back to the arena at HALT (results) and when a launch
 *   ends early, and must not do so while a block that started late is still loading.
 * - Work the kernel does not do itself ends the launch (SCHED_F_LAUNCH): every CALL of an
 *   application kernel, and a product big enough to be worth cuBLAS (sched_plan_build_opts).
 *   The compiled kernel (sched_opts.inline_calls) runs a CALL of a kernel registered by its
 *   source inline instead, split over its results' elements like an elementwise op, or (a
 *   whole-form kernel) computed by every thread into private results or by one block into
 *   shared ones (sched_call_form, sched_call_domain).
 *   Every block ends its walk at such a record (never inside a region), block 0 having written
 *   its private copies back; the record's work runs between two launches (a graph launched
 *   from the device, or the host at a pause) and the next launch starts at the record after
 *   it. Everything written before it is complete by then, so the analysis treats it as a
 *   barrier.
 * - A matrix-vector product ([m,k] @ [k]) is split by rows: a block's share of the rows is its
 *   share of the output's elements (aligned), and a warp takes a row at a time.
 * - A small tensor that only cheap records write (elementwise, copies, rows and boxes; never
 *   a product, a CALL or a launched record) is a REPLICA: private like a one-element slot,
 *   every block computes all of its elements into its own copy. Every read of a replica is
 *   then the block's own, so it needs no barrier and leaves nothing pending: vectors such as
 *   CG's r, p and x, and a decode step's h, cost no barrier to update and no barrier before
 *   the product that reads them. What a replica's records read from shared slots they read
 *   whole, behind a barrier where the analysis needs one, as any redundant record does.
 *
 * The analysis (sched_plan_build_opts, host/gen/plan.c) runs once per upload, on the host only.
 * This header holds what it produces (sched_plan, its flags and limits), the options it is
 * built for (plan_options_compiled, plan_options_interp), and the queries that the analysis,
 * the code generator and the device code all ask (sched_share, sched_domain: CFX_HD). The
 * walk of a plan (sched_arrive, which decides at each record whether a block runs it, skips
 * to a region's exit, or first publishes, waits and reloads) is device/scheduler.h's: the
 * device loop and the test's replica both call it.
 */
#ifndef CFX_PLAN_H
#define CFX_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/hd.h"
#include "host/program/program.h"

/* Per-record flags of a plan. */
#define SCHED_F_BARRIER_BEFORE 0x01u /* grid barrier before the record (outside regions) */
#define SCHED_F_ONE_BLOCK      0x02u /* inside a one-block region: block 0 alone runs it */
#define SCHED_F_REGION_ENTRY   0x04u /* first record of a region: other blocks go to its exit */
#define SCHED_F_REGION_EXIT    0x08u /* the record after a region: publish, grid barrier, reload */
#define SCHED_F_ENTRY_BARRIER  0x10u /* grid barrier before a region is entered from outside */
#define SCHED_F_SPLIT          0x20u /* the record's elements are shared across blocks */
#define SCHED_F_COMBINE        0x40u /* a split reduction: partials, grid barrier, merge */
#define SCHED_F_LAUNCH         0x80u /* ends the launch: its work runs between two launches */

/* Products (f32 or f64, m * k * n multiply-adds at least this many) that the executor
 * launches as pre-captured cuBLAS graphs rather than computing inline. A launch costs the end
 * of the persistent launch, the product's graph and a relaunch. On an H100 (bench_gpu's
 * call_matmul, profiling/results/2026-11-26-h100.md) a 512-cube product, 2^27, launched cost
 * 68.9 us an iteration against 178.4 inline, so the crossing is at or below 2^27; where below
 * has not been measured. 2^27 keeps every matrix-vector product of profiling/bench inline
 * (cg_8192's A @ p is 2^26). To move it, run call_matmul with other shapes and say which run
 * picked the new figure. */
#define SCHED_LAUNCH_PRODUCT_MIN ((int64_t)1 << 27)

/* What the plan is built for. */
typedef struct sched_opts {
    int64_t launch_product_min; /* products at least this big end the launch; 0: none do */
    int no_replicas;            /* 1: no tensor is a replica (the tests of the shared-slot rules) */
    int inline_calls;           /* 1: a CALL of a kernel registered by its source runs inside the
                                 * kernel (the compiled kernel inlines it); 0: every CALL ends the
                                 * launch (the interpreter) */
    int alternate;              /* 1: tensors that fit the rule alternate between two buffers by
                                 * loop iteration (the compiled kernel: sched_pick_alternates) */
} sched_opts;

/* A CALL runs inline only with at most this many operands (the API's 16 arguments and 16
 * results); one with more ends the launch. */
#define SCHED_CALL_MAX_OPERANDS 32
/* Room for the slot accesses of one record (sched_record_accesses). */
#define SCHED_MAX_ACCESSES (SCHED_CALL_MAX_OPERANDS + 8)

/* A loop is a candidate for one block when every slot it touches has at most this many
 * elements: a block of 256 threads does that in a few steps, cheaper than a grid barrier. */
#define SCHED_SMALL_COUNT 4096
/* A reduction over at most this many elements is computed whole by every block (no
 * barrier inside the record); a bigger one is split and combined. */
#define SCHED_REDUNDANT_REDUCE_MAX 2048
/* At most this many split reductions share one combine's barrier (a batch). */
#define SCHED_BATCH_MAX 4
/* MATMUL is split into square output tiles of this side. */
#define SCHED_TILE 16

/* Bytes of one private copy: every one-element slot gets 8, whatever its dtype. */
#define SCHED_PRIV_UNIT 8
/* Small tensors may live privately in every block too, as REPLICAS (sched_pick_replicas): a
 * tensor of at most SCHED_REPLICA_BYTES, all of them together at most SCHED_REPLICAS_BYTES, so
 * that the private copies stay in shared memory beside the micro-ops. */
#define SCHED_REPLICA_BYTES 16384
#define SCHED_REPLICAS_BYTES 24576
/* ... and whose records read no shared tensor of more than this many bytes whole (every block
 * would read all of it: a replica of a function of a big shared tensor costs more than it
 * saves). Rows, boxes and items read only what they copy. 16 KB: power iteration's
 * v = w / norm(w) over 4096 floats; 264 blocks reading 16 KB each from L2 is about 4 MB, which
 * should take a fraction of the grid barrier (1.21 us on an H100) the replica spares (an
 * estimate: not yet measured). A replica stays only where it spares a barrier. */
#define SCHED_REPLICA_READ_BYTES 16384

typedef struct sched_plan {
    int32_t nrecords;
    int32_t nslots;
    uint8_t *flags;        /* nrecords: SCHED_F_* */
    int32_t *region_exit;  /* nrecords: for a REGION_ENTRY record the record after its region, else -1 */
    int32_t *priv_offset;  /* nslots: byte offset of the slot's private copy, -1 if it has none
                            * (every private slot has one: scalars and replicas) */
    int32_t priv_bytes;    /* bytes of one block's private copies, a multiple of 16 */
    int32_t nreplicas;     /* tensors that live privately in every block ... */
    int32_t *replicas;     /* ... their slots, in slot order */
    int32_t *batch_next;   /* nrecords: the next reduction of a combine's batch, -1 */
    int32_t *batch_head;   /* nrecords: for a reduction done in an earlier combine's batch,
                            * that combine's record (the reduction itself is then no work);
                            * else -1 */
    int32_t nbatched;      /* reductions done in an earlier combine's batch */
    int32_t nregions;      /* one-block regions found */
    int32_t nbarriers;     /* records with SCHED_F_BARRIER_BEFORE or SCHED_F_ENTRY_BARRIER */
    int32_t nlaunch_calls;    /* CALL records (they end the launch) */
    int32_t nlaunch_products; /* products that end the launch (SCHED_F_LAUNCH) */
    int32_t *alt_tick;     /* nslots: for a tensor whose two buffers alternate by iteration, the
                            * TICK record of that loop, where the next iteration's buffer is
                            * taken; else -1 (sched_pick_alternates) */
    int32_t nalternates;
    int32_t *ahead_at;     /* nrecords: for a product computed an iteration ahead (below), the
                            * record after which each iteration computes it for the next; else -1 */
    int32_t *ahead_head;   /* nrecords: for such a product, its loop's head, before which it is
                            * also computed once on entry; else -1 */
    uint8_t *ahead_conflict; /* nrecords: 1 where computing it after ahead_at meets a pending access */
    int32_t naheads;
} sched_plan;

/* ---- shares ----------------------------------------------------------------------------- */

/* Block `block` of `nblocks` takes elements [lo, hi) of `count`: contiguous shares whose
 * sizes differ by at most one, in block order. Depends on nothing but its arguments, so two
 * records over slots of the same count give every block the same elements. */
CFX_HD void sched_share(int64_t count, int64_t block, int64_t nblocks, int64_t *lo, int64_t *hi)
{
    if (count >= 0 && count <= 0x7fffffff && nblocks > 0 && nblocks <= 0x7fffffff) {
        /* the same shares in 32 bits, where a GPU divides several times faster */
        uint32_t c = (uint32_t)count, n = (uint32_t)nblocks, b = (uint32_t)block;
        uint32_t base32 = c / n, rem32 = c - base32 * n;
        *lo = (int64_t)b * base32 + (b < rem32 ? b : rem32);
        *hi = *lo + base32 + (b < rem32 ? 1 : 0);
        return;
    }
    int64_t base = count / nblocks, rem = count % nblocks;
    *lo = block * base + (block < rem ? block : rem);
    *hi = *lo + base + (block < rem ? 1 : 0);
}

/* Which one-element slots live privately in every block: those the program may write (consts
 * are read in place). A plan adds replicas (priv_offset says which slots it made private). */
CFX_HD int sched_slot_private(const cfx_slot *s)
{
    return s->count == 1 && s->kind != SLOT_CONST;
}

/* The number of work items a record is split into (0: not a split record). For a split
 * reduction this is the input's element count, for MATMUL the number of output tiles, for
 * SET_ROW the row's elements, otherwise the output's elements. */
CFX_HD int64_t sched_domain(const cfx_record *r, const cfx_slot *slots)
{
    switch (rec_domain(r->kind)) { /* DOMAIN in program.h's record list */
    case 'a':
        return slots[r->a].count;
    case 'b':
        return slots[r->b].count;
    case 'c':
        return slots[r->c].count;
    case 'r':
        return slots[r->a].dims[0] > 0 ? slots[r->a].count / slots[r->a].dims[0] : 0;
    case 't': {
        rec_mm g = rec_matmul(slots, r);
        if (g.n == 1 && g.batch == 1)
            return g.m; /* matrix-vector: rows */
        return g.batch * (((g.m + SCHED_TILE - 1) / SCHED_TILE) * ((g.n + SCHED_TILE - 1) / SCHED_TILE));
    }
    default: /* '-' */
        return 0;
    }
}

/* Is MATMUL record r a matrix-vector product (n = 1, one product), split by rows? A batch of
 * them is split by tiles, each one column wide. */
CFX_HD int sched_matvec(const cfx_record *r, const cfx_slot *slots)
{
    if (r->kind != REC_MATMUL)
        return 0;
    rec_mm g = rec_matmul(slots, r);
    return g.n == 1 && g.batch == 1;
}

/* Multiply-adds of a MATMUL record (of all its batch). */
CFX_HD int64_t sched_product_size(const cfx_record *r, const cfx_slot *slots)
{
    rec_mm g = rec_matmul(slots, r);
    return g.batch * g.m * g.k * g.n;
}

/* ---- the two modes' options ------------------------------------------------------------- */

/* The compiled kernel's plan (host/gen/cgen.c writes the kernel that follows it): a CALL of a kernel
 * registered by its source runs inline, tensors that fit the rule alternate between two
 * buffers; products of at least product_min multiply-adds end the launch (0: none do). */
static inline sched_opts plan_options_compiled(int64_t product_min)
{
    sched_opts o = {product_min, 0, 1, 1};
    return o;
}

/* The interpreter's plan (device/interp_kernel.cuh walks it): every CALL ends the launch,
 * and so do products of at least product_min multiply-adds (0: none do). */
static inline sched_opts plan_options_interp(int64_t product_min)
{
    sched_opts o = {product_min, 0, 0, 0};
    return o;
}

/* ---- the analysis (host/gen/plan.c) --------------------------------------------------------- */

#ifdef __cplusplus
extern "C" {
#endif

/* Builds the plan of a validated program for opts (NULL: no product ends the launch, every
 * CALL does), its replicas chosen so that they cost no barrier. Returns 0, or -1 with a
 * reason in err when memory runs out. sched_plan_build: the same with opts NULL. */
int sched_plan_build_opts(const cfx_prog *p, const sched_opts *opts, sched_plan *plan,
                          char *err, size_t errlen);
int sched_plan_build(const cfx_prog *p, sched_plan *plan, char *err, size_t errlen);
void sched_plan_free(sched_plan *plan);

/* Does record r end the launch (SCHED_F_LAUNCH) under opts? */
int sched_record_launches(const cfx_prog *p, const cfx_record *r, const sched_opts *opts);
/* The work items of an inline CALL (see host/gen/plan.c). */
int64_t sched_call_domain(const cfx_prog *p, const cfx_record *r, int form);
/* Does record r write slot s? */
int sched_writes(const cfx_prog *p, const cfx_record *r, int32_t s);
/* The loops: lastback[h] is the last record that jumps back to h, -1 where none does.
 * `succ` is scratch of ntable + 2. */
void sched_back_edges(const cfx_prog *p, int32_t *succ, int32_t *lastback);
/* The slot to keep in L2's persisting set-aside, -1 for none. */
int32_t sched_l2_keep(const cfx_prog *p);

#ifdef __cplusplus
}
#endif

#endif
