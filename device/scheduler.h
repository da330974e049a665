/* scheduler.h: the walk of the persistent executor's plan (host/gen/plan.h), as plain C that runs
 * on the device, and in tests on CPU threads standing in for blocks: what a block does on
 * arriving at a record (sched_arrive), where control goes next, and the run's status as the
 * blocks see it. The plan itself, its flags and the shares of a split record (sched_share,
 * sched_domain) are host/gen/plan.h's; its analysis is host/gen/plan.c, run once per upload.
 */
#ifndef CFX_SCHEDULER_H
#define CFX_SCHEDULER_H

#include <stdint.h>

#include "kernels/hd.h"
#include "host/gen/plan.h"
#include "host/program/program.h"

/* ---- walking: what a block does on arriving at a record ---------------------------------- */

/* One block's position in the walk. */
typedef struct sched_cursor {
    int32_t pc;
    int32_t block;
    int32_t nblocks;
    int32_t region;    /* entry record of the region block 0 is running, -1 outside */
    uint32_t combines; /* split reductions done: picks the partials array */
    uint32_t exits;    /* region exits passed: picks the publish buffer */
} sched_cursor;

/* Actions, done in this order: */
#define SCHED_DO_PUBLISH 0x1u /* block 0: write private copies to publish buffer (exits & 1) */
#define SCHED_DO_BARRIER 0x2u /* grid barrier */
#define SCHED_DO_RELOAD  0x4u /* other blocks: read private copies back from that buffer */
#define SCHED_DO_SKIP    0x8u /* cursor->pc moved: start again at the new record */
/* ... and then, unless SKIP, run the record with sched_block/sched_nblocks. The publish
 * buffer is number (cursor->exits & 1); the caller increments cursor->exits after the
 * RELOAD step, on every block (all of them take that path together). Likewise it uses
 * partials array (cursor->combines & 1) for a COMBINE record outside a region and then
 * increments cursor->combines. Inside a region a reduction stays inside block 0 and counts
 * nothing, so the counters stay equal on every block. */

CFX_HD void sched_cursor_init(sched_cursor *c, int32_t pc, int32_t block, int32_t nblocks)
{
    c->pc = pc;
    c->block = block;
    c->nblocks = nblocks;
    c->region = -1;
    c->combines = 0;
    c->exits = 0;
}

/* Decides what the block at c->pc does before running the record. `flags` and
 * `region_exit` are the plan's arrays. Returns SCHED_DO_* bits; with SCHED_DO_SKIP set,
 * c->pc is the region's exit and the caller starts over there (after a barrier if
 * SCHED_DO_BARRIER is also set). Uniform: every block outside a region gets the same
 * answer for the same record, except that block 0 enters regions and the others skip. */
CFX_HD unsigned sched_arrive(const uint8_t *flags, const int32_t *region_exit, sched_cursor *c)
{
    unsigned f = flags[c->pc];
    unsigned act = 0;
    if ((f & SCHED_F_REGION_EXIT) && (c->region < 0 || region_exit[c->region] == c->pc)) {
        /* Leaving a region (block 0) or waiting for it (the others); also when every block
         * arrives here from outside, which is harmless: block 0's copies equal theirs. */
        act |= SCHED_DO_PUBLISH | SCHED_DO_BARRIER | SCHED_DO_RELOAD;
        c->region = -1;
    }
    if ((f & SCHED_F_REGION_ENTRY) && c->region < 0) {
        if (f & SCHED_F_ENTRY_BARRIER)
            act |= SCHED_DO_BARRIER;
        if (c->block != 0) {
            c->pc = region_exit[c->pc];
            return act | SCHED_DO_SKIP;
        }
        c->region = c->pc;
        return act;
    }
    if (c->region < 0 && (f & SCHED_F_BARRIER_BEFORE))
        act |= SCHED_DO_BARRIER;
    return act;
}

/* The share arithmetic inside a region is that of one block. */
CFX_HD int32_t sched_block(const sched_cursor *c) { return c->region >= 0 ? 0 : c->block; }
CFX_HD int32_t sched_nblocks(const sched_cursor *c) { return c->region >= 0 ? 1 : c->nblocks; }

/* Where control goes after a control record, given the value of its slot operand (a bool
 * for JUMP_FALSE/JUMP_TRUE, the i32 for SWITCH; ignored otherwise). For any other record
 * kind, pc + 1. The same function on every block with the same value: the same branch. */
CFX_HD int32_t sched_next_pc(const cfx_record *r, int32_t pc, const int32_t *table, int64_t value)
{
    REC_COUNT_IS(34);
    switch (r->kind) {
    case REC_JUMP:
        return r->a;
    case REC_JUMP_FALSE:
        return value ? pc + 1 : r->b;
    case REC_JUMP_TRUE:
        return value ? r->b : pc + 1;
    case REC_SWITCH:
        return value >= 0 && value < r->c ? table[r->b + value] : table[r->b + r->c];
    default:
        return pc + 1;
    }
}

/* ---- the run's status, as the blocks see it --------------------------------------------- */

/* A launch that ends early on purpose (at a CALL the host runs, or a full print buffer)
 * sets the run's status to this value, which is no cfx_status: the host serves the pause
 * and launches again. */
#define SCHED_STATUS_PAUSE (-1)
/* Blocks look at the run's status at a TICK at most this often (block 0 also reads the
 * host's cancel flag then, across PCIe): every 100 us costs a tight loop about 1% and still
 * stops a run within a fraction of a millisecond. */
#define SCHED_POLL_NS 100000ull

/* A block has just read the run's status where it looks at it outside a barrier (at a
 * TICK; block 0 while it waits for room in the print ring): does it end its walk there?
 * Only for a cancel. Every other status is raised by the program at a record that every
 * block reaches on its own path with the same values (a stop, or a pause at a record that
 * ends the launch), so a block that sees one raised by a block ahead of it goes on until it
 * reaches that record itself, as the compiled kernel does (compiled_kernel.cuh, ck_look).
 * Block 0 must: the prints before the stop are due, and a block 0 that left before a pause
 * would not write its private copies back, so the next launch would resume with stale loop
 * counters. tests/test_sched.c makes block 0 late at every
 * launch and gives it a print ring of two entries, so that it waits for the host while the
 * others run ahead. A cancel is the host's: it stops the run wherever it lands. */
CFX_HD int sched_status_ends_walk(int32_t status)
{
    return status == CFX_STOP_CANCELLED;
}

/* One TICK: counts the iteration and says whether the budget is spent (returns 1: stop
 * with limit before running the iteration). The budget allows exactly max_iters ticks. */
CFX_HD int sched_tick(uint64_t *iterations, int64_t max_iters)
{
    if (max_iters > 0 && *iterations >= (uint64_t)max_iters)
        return 1;
    (*iterations)++;
    return 0;
}

#endif
