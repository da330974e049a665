/* plan.c: the plan's analysis (host/gen/plan.h tells the model): which records are split, where
 * grid barriers go, one-block regions, replicas, batches of split reductions, alternating
 * buffers and products computed an iteration ahead. Plain C, host only, run once per upload by
 * the interpreter (device/interp.cu), the code generator (host/gen/cgen.c) and the cost sheet
 * (host/program/cost.c).
 */
#include "plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How CALL record r runs under opts: KERNEL_BINARY, it ends the launch (its kernel's CPU or
 * CUDA function runs between two launches); KERNEL_ELEMENTS or KERNEL_WHOLE, inline, as the
 * source its kernel was registered by says (opts->inline_calls). A whole-form kernel whose
 * results are neither all one-element nor all bigger is launched: one-element results are
 * computed in every thread, bigger ones by one thread (sched_call_domain), not both. */
static int sched_call_form(const cfx_prog *p, const cfx_record *r, const sched_opts *opts)
{
    if (r->kind != REC_CALL || !opts || !opts->inline_calls || r->c > SCHED_CALL_MAX_OPERANDS || r->d >= r->c)
        return KERNEL_BINARY;
    int form = prog_kernel_form(p, r->a), ones = 0;
    for (int32_t k = r->d; k < r->c; k++)
        ones += p->slots[p->table[r->b + k]].count == 1;
    if (form == KERNEL_WHOLE && ones != 0 && ones != r->c - r->d)
        return KERNEL_BINARY;
    return form;
}

/* The work items of an inline CALL (sched_call_form not KERNEL_BINARY): 0 when its results
 * have one element each (every thread of every block computes them, like any one-element
 * record); else its results' elements for KERNEL_ELEMENTS (split like an elementwise op), or
 * 1 for KERNEL_WHOLE (one call, by one thread of the block that takes the item). */
int64_t sched_call_domain(const cfx_prog *p, const cfx_record *r, int form)
{
    const cfx_slot *first = &p->slots[p->table[r->b + r->d]];
    if (first->count == 1)
        return 0;
    return form == KERNEL_ELEMENTS ? first->count : 1;
}

/* ---- the analysis ---------------------------------------------------------------------- */

/* Pending access bits of one shared slot since the last barrier. */
#define SA_R_ALIGNED 1u
#define SA_R_WHOLE   2u
#define SA_W_ALIGNED 4u
#define SA_W_WHOLE   8u

typedef struct sched_access {
    int32_t slot;
    uint8_t mode; /* one SA_* bit */
} sched_access;

/* Does an access `mode` conflict with pending bits `p` of the same slot? Aligned accesses
 * touch only the block's own share and never meet each other. */
static int sched_conflicts(unsigned mode, unsigned p)
{
    switch (mode) {
    case SA_R_ALIGNED:
        return (p & SA_W_WHOLE) != 0;
    case SA_R_WHOLE:
        return (p & (SA_W_ALIGNED | SA_W_WHOLE)) != 0;
    case SA_W_ALIGNED:
        return (p & (SA_W_WHOLE | SA_R_WHOLE)) != 0;
    default: /* SA_W_WHOLE */
        return p != 0;
    }
}

/* Does any of the accesses meet the pending bits `cur` (indexed through `dist`)? */
static int sched_any_conflict(const sched_access *acc, int na, const int32_t *dist,
                              const uint8_t *cur)
{
    for (int k = 0; k < na; k++) {
        int32_t d = dist[acc[k].slot];
        if (d >= 0 && sched_conflicts(acc[k].mode, cur[d]))
            return 1;
    }
    return 0;
}

/* How a split record with domain `n` reads operand slot s: aligned when its element e is
 * the domain's element e. */
static unsigned sched_read_mode(const cfx_prog *p, int32_t s, int64_t n)
{
    return p->slots[s].count == n ? SA_R_ALIGNED : SA_R_WHOLE;
}

/* The accesses of record r to slots, before filtering out private and const slots. At
 * most SCHED_MAX_ACCESSES. `flags` are the record's plan flags: a split record (SPLIT, or COMBINE for a
 * reduction) reads its operands' own shares where the counts match; a record computed
 * redundantly (its output is private) reads whole. */
static int sched_record_accesses(const cfx_prog *p, const cfx_record *r, unsigned flags,
                                 sched_access *acc)
{
    int n = 0;
    int64_t dom = sched_domain(r, p->slots);
    int split = dom > 0 && (flags & (SCHED_F_SPLIT | SCHED_F_COMBINE)) != 0;
#define ACC(s, m) do { acc[n].slot = (s); acc[n].mode = (uint8_t)(m); n++; } while (0)
#define RD(s) ACC((s), split ? sched_read_mode(p, (s), dom) : SA_R_WHOLE)
    /* ACCESS in program.h's record list, operand by operand */
    const char *mode = rec_access(r->kind);
    const int32_t ops[4] = {r->a, r->b, r->c, r->d};
    for (int k = 0; k < 4; k++)
        switch (mode[k]) {
        case 'w':
            ACC(ops[k], SA_W_ALIGNED);
            break;
        case 'W':
            ACC(ops[k], SA_W_WHOLE);
            break;
        case 'm':
            /* a matrix-vector product is split by rows, which are the output's element shares;
             * any other by output tiles, which are not */
            ACC(ops[k], split && sched_matvec(r, p->slots) ? SA_W_ALIGNED : SA_W_WHOLE);
            break;
        case 'r':
            RD(ops[k]);
            break;
        case 'R':
            ACC(ops[k], SA_R_WHOLE);
            break;
        default: /* '-' */
            break;
        }
    if (r->kind == REC_CALL)
        /* Only an inline CALL gets here (one that ends the launch is a kernel boundary): the
         * source may read any element of its arguments; it writes its own share of its
         * results' elements (KERNEL_ELEMENTS, split) or all of them from one block
         * (KERNEL_WHOLE). Results of one element are private and filtered out. */
        for (int32_t k = 0; k < r->c && k < SCHED_CALL_MAX_OPERANDS; k++)
            ACC(p->table[r->b + k],
                k < r->d ? SA_R_WHOLE
                         : (flags & SCHED_F_SPLIT) && prog_kernel_form(p, r->a) == KERNEL_ELEMENTS ? SA_W_ALIGNED
                                                                                                  : SA_W_WHOLE);
#undef RD
#undef ACC
    return n;
}

/* Successors of record pc (rec_successors, program.h); `out` has room for ntable + 2. */
static int32_t sched_successors(const cfx_prog *p, int32_t pc, int32_t *out)
{
    return rec_successors(p, pc, out, p->ntable + 2);
}

/* The roles of a record's operands (program.h's FIELDS), from the one list. */
static const char *sched_fields(int kind)
{
    return rec_roles(kind);
}

/* Does record r end the launch (SCHED_F_LAUNCH) under opts? Every CALL does but an inline one
 * (sched_call_form); a product does
 * when it is real and at least opts->launch_product_min multiply-adds (integer products have
 * no exact cuBLAS counterpart and stay inline). */
int sched_record_launches(const cfx_prog *p, const cfx_record *r, const sched_opts *opts)
{
    if (r->kind == REC_CALL)
        return sched_call_form(p, r, opts) == KERNEL_BINARY;
    if (r->kind != REC_MATMUL || !opts || opts->launch_product_min <= 0)
        return 0;
    int dt = p->slots[r->a].dtype;
    return (dt == CFX_F32 || dt == CFX_F64) && sched_product_size(r, p->slots) >= opts->launch_product_min;
}

/* Do all the slots a record names have at most SCHED_SMALL_COUNT elements? A record that
 * ends the launch never counts as small. */
static int sched_record_small(const cfx_prog *p, const cfx_record *r, const sched_opts *opts)
{
    if (r->kind == REC_HALT || sched_record_launches(p, r, opts))
        return 0;
    for (int32_t k = 0, n = rec_slot_operands(p, r); k < n; k++)
        if (p->slots[rec_slot_operand(p, r, k)].count > SCHED_SMALL_COUNT)
            return 0;
    return 1;
}

void sched_plan_free(sched_plan *plan)
{
    free(plan->flags);
    free(plan->region_exit);
    free(plan->priv_offset);
    free(plan->replicas);
    free(plan->batch_next);
    free(plan->batch_head);
    free(plan->alt_tick);
    free(plan->ahead_at);
    free(plan->ahead_head);
    free(plan->ahead_conflict);
    memset(plan, 0, sizeof *plan);
}

/* The loops: lastback[h] is the last record that jumps back to h (the loop [h, lastback[h]]),
 * -1 where none does. `succ` is scratch of ntable + 2. */
void sched_back_edges(const cfx_prog *p, int32_t *succ, int32_t *lastback)
{
    for (int32_t i = 0; i < p->nrecords; i++)
        lastback[i] = -1;
    for (int32_t r = 0; r < p->nrecords; r++) {
        int32_t ns = sched_successors(p, r, succ);
        for (int32_t k = 0; k < ns; k++)
            if (succ[k] <= r && lastback[succ[k]] < r)
                lastback[succ[k]] = r;
    }
}

/* minreach[i]: the lowest record reachable from record i (the loops' intervals [target, last
 * jump back], overlapping ones merged: from inside one, its start; else the record itself).
 * `succ` is scratch of ntable + 2. */
static void sched_min_reach(const cfx_prog *p, int32_t *succ, int32_t *minreach)
{
    int32_t start = -1, end = -1;
    sched_back_edges(p, succ, minreach); /* here: the last record that jumps back to i */
    for (int32_t i = 0; i < p->nrecords; i++) {
        int32_t last = minreach[i];
        if (last >= i) {
            if (end >= i) {
                end = last > end ? last : end;
            } else {
                start = i;
                end = last;
            }
        }
        minreach[i] = end >= i ? start : i;
    }
}

/* 1 if record r goes on anywhere but to r + 1 (a jump, a branch, a switch, HALT). */
static int sched_control(const cfx_prog *p, int32_t r, int32_t *succ)
{
    int32_t n = sched_successors(p, r, succ);
    return n != 1 || succ[0] != r + 1;
}

/* The innermost loop [*h, lastback[*h]] around record r (the latest head whose loop holds it);
 * 0 when none does. */
static int sched_loop_around(const int32_t *lastback, int32_t r, int32_t *h)
{
    for (int32_t k = r; k >= 0; k--)
        if (lastback[k] >= r) {
            *h = k;
            return 1;
        }
    return 0;
}

/* around[r]: the head of the innermost loop around record r, as sched_loop_around finds it, or
 * -1; for every record at once. `stack` is scratch of nrecords. */
static void sched_loops_around(const int32_t *lastback, int32_t nr, int32_t *around, int32_t *stack)
{
    /* the heads k <= r whose loops may still hold a later record: k rising, lastback falling
     * (a head whose loop ends before a later head's does is never the latest again) */
    int32_t top = 0;
    for (int32_t r = 0; r < nr; r++) {
        if (lastback[r] >= 0) {
            while (top > 0 && lastback[stack[top - 1]] <= lastback[r])
                top--;
            stack[top++] = r;
        }
        while (top > 0 && lastback[stack[top - 1]] < r)
            top--;
        around[r] = top > 0 ? stack[top - 1] : -1;
    }
}

/* Marks the one-block regions: for each loop head h, with j the last record that jumps
 * back to h, the loop [h, j] with exit j + 1 qualifies when all its slots are small, it
 * ends no launch (no CALL but an inline one), every edge leaving it goes to j + 1 and no edge from outside enters it
 * except at h. Outermost loops win; qualifying loops nest or are disjoint (an edge of one
 * would leave or enter the other elsewhere). `succ`, `in_region` and `lastback` are
 * scratch of ntable + 2, nrecords and nrecords entries. Each loop costs its own records: the
 * edges that enter a record are summed up once as the lowest and highest record they come
 * from. */
static int sched_find_regions(const cfx_prog *p, const sched_opts *opts, sched_plan *plan,
                              int32_t *succ, int32_t *in_region, int32_t *lastback)
{
    int32_t nr = p->nrecords;
    int32_t *minpred = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    int32_t *maxpred = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    if (!minpred || !maxpred) {
        free(minpred);
        free(maxpred);
        return -1;
    }
    for (int32_t i = 0; i < nr; i++) {
        in_region[i] = -1;
        minpred[i] = INT32_MAX;
        maxpred[i] = -1;
    }
    sched_back_edges(p, succ, lastback);
    for (int32_t r = 0; r < nr; r++) {
        int32_t ns = sched_successors(p, r, succ);
        for (int32_t k = 0; k < ns; k++) {
            int32_t s = succ[k];
            if (s < 0 || s >= nr)
                continue;
            minpred[s] = r < minpred[s] ? r : minpred[s];
            maxpred[s] = r > maxpred[s] ? r : maxpred[s];
        }
    }
    for (int32_t h = 0; h < nr; h++) {
        int32_t j = lastback[h];
        if (j < 0 || j + 1 >= nr)
            continue;
        int ok = 1;
        for (int32_t r = h; ok && r <= j; r++) {
            if (!sched_record_small(p, &p->records[r], opts))
                ok = 0;
            int32_t ns = sched_successors(p, r, succ);
            for (int32_t k = 0; ok && k < ns; k++)
                if (succ[k] < h || succ[k] > j + 1)
                    ok = 0; /* leaves elsewhere than the exit */
            if (ok && r > h && (minpred[r] < h || maxpred[r] > j))
                ok = 0; /* entered in the middle */
        }
        if (!ok)
            continue; /* an inner loop may still qualify */
        for (int32_t r = h; r <= j; r++) {
            in_region[r] = h;
            plan->flags[r] |= SCHED_F_ONE_BLOCK;
        }
        plan->flags[h] |= SCHED_F_REGION_ENTRY;
        plan->flags[j + 1] |= SCHED_F_REGION_EXIT;
        plan->region_exit[h] = j + 1;
        plan->nregions++;
        h = j; /* go on after the region: the loops inside it are part of it */
    }
    free(minpred);
    free(maxpred);
    return 0;
}

/* May record r write a replica (its output computed whole by every block, cheaply)? */
static int sched_replica_writer(int kind)
{
    return rec_family(kind) == REC_FAM_ELEMENTWISE || rec_family(kind) == REC_FAM_MOVE;
}

/* Marks in `rep` (nslots, zeroed) the tensors that become replicas: non-const slots of 2 to
 * SCHED_REPLICA_BYTES bytes that some record writes, only sched_replica_writer records write,
 * and no CALL and no record ending the launch touches, in slot order until
 * SCHED_REPLICAS_BYTES are taken (a tensor nothing writes, an input only read, is read whole
 * by every block without a barrier anyway). Returns how many. */
static int32_t sched_pick_replicas(const cfx_prog *p, const sched_opts *opts, uint8_t *rep)
{
    int32_t n = 0;
    int64_t total = 0;
    for (int32_t s = 0; s < p->nslots; s++)
        rep[s] = 0;
    if (opts && opts->no_replicas)
        return 0;
    /* 1: written by some record (field a of a kind that writes it) */
    for (int32_t i = 0; i < p->nrecords; i++)
        if (sched_replica_writer(p->records[i].kind))
            rep[p->records[i].a] = 1;
    for (int32_t s = 0; s < p->nslots; s++) {
        const cfx_slot *sl = &p->slots[s];
        if (!(sl->kind != SLOT_CONST && sl->count > 1 && slot_bytes(sl) <= SCHED_REPLICA_BYTES))
            rep[s] = 0;
    }
    /* 2: no writer reads a big tensor whole (a tensor that cannot be a replica is shared) */
    for (int32_t i = 0; i < p->nrecords; i++) {
        const cfx_record *r = &p->records[i];
        const char *f = sched_fields(r->kind);
        int32_t ops[4] = {r->a, r->b, r->c, r->d};
        if (!sched_replica_writer(r->kind) || !rep[r->a] || r->kind == REC_GET_ROW || r->kind == REC_GET_BOX ||
            r->kind == REC_GET_ITEM || r->kind == REC_GATHER)
            continue;
        for (int k = 1; k < 4 && f[k]; k++)
            if (f[k] == 's' && p->slots[ops[k]].kind != SLOT_CONST && slot_bytes(&p->slots[ops[k]]) > SCHED_REPLICA_READ_BYTES)
                rep[r->a] = 0;
    }
    for (int32_t i = 0; i < p->nrecords; i++) {
        const cfx_record *r = &p->records[i];
        const char *f = sched_fields(r->kind);
        int32_t ops[4] = {r->a, r->b, r->c, r->d};
        if (r->kind == REC_CALL) {
            for (int32_t k = 0; k < r->c; k++)
                rep[p->table[r->b + k]] = 0;
            continue;
        }
        for (int k = 0; k < 4 && f[k]; k++) {
            if (f[k] != 's')
                continue;
            if (sched_record_launches(p, r, opts))
                rep[ops[k]] = 0;
            else if (k == 0 && !sched_replica_writer(r->kind) && rec_writes_a(r->kind))
                rep[ops[k]] = 0; /* field a is the output of every other kind that has one */
        }
    }
    for (int32_t s = 0; s < p->nslots; s++) {
        if (!rep[s])
            continue;
        int64_t b = (slot_bytes(&p->slots[s]) + 15) / 16 * 16;
        if (total + b > SCHED_REPLICAS_BYTES) {
            rep[s] = 0;
            continue;
        }
        total += b;
        n++;
    }
    return n;
}

/* Does record r write slot s (its output, or a CALL's result)? */
int sched_writes(const cfx_prog *p, const cfx_record *r, int32_t s)
{
    if (r->kind == REC_CALL) {
        for (int32_t k = r->d; k < r->c; k++)
            if (p->table[r->b + k] == s)
                return 1;
        return 0;
    }
    return rec_writes_a(r->kind) && r->a == s;
}

/* The batches of the split reductions (see plan.h's top comment): for each combine i that is not
 * itself in a batch, the later combines j of the same straight run (no control record, no
 * jump target, nothing that ends the launch, outside regions, up to the next TICK) whose
 * inputs no record in (i, j) writes and whose result none touches. `target` (nrecords) marks
 * the jump targets. */
static int sched_find_batches(const cfx_prog *p, sched_plan *plan, const uint8_t *target)
{
    int32_t nr = p->nrecords, ns = p->nslots;
    const unsigned skip = SCHED_F_ONE_BLOCK | SCHED_F_LAUNCH;
    /* since[j]: the last record before reduction j that writes its inputs or touches its
     * result (j joins the batch of i only if that is i or before); next[j]: the first record
     * from j on that is a combine or ends the straight run (brk), nr if none */
    int32_t *since = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    int32_t *next = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    int32_t *lastw = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ns + 1));
    int32_t *lastt = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ns + 1));
    uint8_t *brk = (uint8_t *)malloc((size_t)nr + 1);
    if (!since || !next || !lastw || !lastt || !brk) {
        free(since);
        free(next);
        free(lastw);
        free(lastt);
        free(brk);
        return -1;
    }
    for (int32_t s = 0; s < ns; s++)
        lastw[s] = lastt[s] = -1;
    for (int32_t j = 0; j < nr; j++) {
        const cfx_record *r = &p->records[j];
        plan->batch_next[j] = -1;
        plan->batch_head[j] = -1;
        since[j] = -1;
        if (r->kind == REC_REDUCE || r->kind == REC_DOT) {
            since[j] = lastw[r->b] > lastt[r->a] ? lastw[r->b] : lastt[r->a];
            if (r->kind == REC_DOT && lastw[r->c] > since[j])
                since[j] = lastw[r->c];
        }
        brk[j] = target[j] || (plan->flags[j] & (skip | SCHED_F_REGION_ENTRY | SCHED_F_REGION_EXIT)) ||
                 rec_family(r->kind) == REC_FAM_CONTROL || r->kind == REC_TICK || r->kind == REC_CALL;
        /* what j writes (sched_writes) and touches (sched_touches) */
        if (r->kind == REC_CALL) {
            for (int32_t k = r->d; k < r->c; k++)
                lastw[p->table[r->b + k]] = j;
        } else if (sched_writes(p, r, r->a)) {
            lastw[r->a] = j;
        }
        for (int32_t k = 0, n = rec_slot_operands(p, r); k < n; k++)
            lastt[rec_slot_operand(p, r, k)] = j;
    }
    next[nr] = nr;
    for (int32_t j = nr - 1; j >= 0; j--)
        next[j] = brk[j] || (plan->flags[j] & SCHED_F_COMBINE) ? j : next[j + 1];
    for (int32_t i = 0; i < nr; i++) {
        int32_t last = i, size = 1;
        if (!(plan->flags[i] & SCHED_F_COMBINE) || (plan->flags[i] & skip) || plan->batch_head[i] >= 0)
            continue;
        for (int32_t j = next[i + 1]; j < nr && size < SCHED_BATCH_MAX; j = next[j + 1]) {
            if (brk[j])
                break;
            if (since[j] > i)
                continue; /* a record in (i, j) writes its inputs or touches its result */
            plan->batch_next[last] = j;
            plan->batch_head[j] = i;
            plan->nbatched++;
            last = j;
            size++;
        }
    }
    free(since);
    free(next);
    free(lastw);
    free(lastt);
    free(brk);
    return 0;
}

/* The entry state of a record (sched_flow): the pending bits of the shared slots that some
 * record reachable from it still accesses, and whether bits of any other slot are pending too
 * (of those only whether anything is pending matters: at a region's entry). */
typedef struct sched_pending {
    int32_t n, cap;
    int32_t *d;   /* dense index of the slot (sched_plan_build_flow's dist) */
    uint8_t *v;   /* its pending bits, never 0 */
    uint8_t dead; /* bits of a slot that nothing reachable accesses are pending */
} sched_pending;

/* Appends slot d with bits v to *in. Returns 0, or -1 when memory runs out. */
static int sched_pending_put(sched_pending *in, int32_t d, uint8_t v)
{
    if (in->n == in->cap) {
        int32_t cap = in->cap * 2 + 4;
        int32_t *nd = (int32_t *)realloc(in->d, sizeof(int32_t) * (size_t)cap);
        if (!nd)
            return -1;
        in->d = nd;
        uint8_t *nv = (uint8_t *)realloc(in->v, (size_t)cap);
        if (!nv)
            return -1;
        in->v = nv;
        in->cap = cap;
    }
    in->d[in->n] = d;
    in->v[in->n++] = v;
    return 0;
}

/* The working state of the sweep at one record: dense bits, the slots set since the last
 * clear, and whether a slot that is left out (dead) is pending. */
typedef struct sched_cur {
    uint8_t *bits;
    int32_t *dirty;
    int32_t ndirty;
    uint8_t dead;
} sched_cur;

static void sched_cur_or(sched_cur *c, int32_t d, unsigned m)
{
    if (!m)
        return;
    if (!c->bits[d])
        c->dirty[c->ndirty++] = d; /* room: the loaded state and the record's accesses (sched_flow) */
    c->bits[d] |= (uint8_t)m;
}

static void sched_cur_clear(sched_cur *c)
{
    for (int32_t k = 0; k < c->ndirty; k++)
        c->bits[c->dirty[k]] = 0;
    c->ndirty = 0;
    c->dead = 0;
}

/* The forward data flow of sched_plan_build_flow over a plan whose flags, regions, batches and
 * products computed ahead are marked: sets SCHED_F_BARRIER_BEFORE where an access meets what
 * is pending, promotes reductions to SCHED_F_COMBINE where that spares one, and
 * SCHED_F_ENTRY_BARRIER where a region is entered with anything pending. The same sweeps, in
 * the same order, with the same results as a dense state of records times slots, in time and
 * memory of the accesses and of what is pending and still accessed later: each record keeps
 * its entry state as a list (sched_pending) that leaves out the slots no record reachable from
 * it accesses (they decide nothing but whether anything is pending), and one dense array holds
 * the state of the record being walked. `succ` is scratch of ntable + 2. Returns 0, or -1 when
 * memory runs out. */
static int sched_flow(const cfx_prog *p, sched_plan *plan, const int32_t *dist, int32_t ndist,
                      const int32_t *in_region, const uint8_t *pre, int32_t *succ, uint8_t *tick_live)
{
    int32_t nr = p->nrecords, ns = p->nslots;
    int rc = -1, changed;
    sched_cur cur = {NULL, NULL, 0, 0};
    int32_t dirty_cap = ndist + 1;
    int32_t *fill = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    int32_t *minreach = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    int32_t *maxacc = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ndist + 1));
    int32_t *pos = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ndist + 1));
    int32_t *tick_at = (int32_t *)calloc((size_t)nr + 2, sizeof(int32_t)); /* CSR: slots taking their */
    int32_t *tick_slot = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ns + 1)); /* other buffer at a TICK */
    int32_t *ahead_at = (int32_t *)calloc((size_t)nr + 2, sizeof(int32_t));   /* CSR: products computed */
    int32_t *ahead_rec = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1)); /* after a record */
    sched_pending *st = (sched_pending *)calloc((size_t)nr + 1, sizeof(sched_pending));
    cur.bits = (uint8_t *)calloc((size_t)ndist + 1, 1);
    cur.dirty = (int32_t *)malloc(sizeof(int32_t) * (size_t)dirty_cap);
    if (!fill || !minreach || !maxacc || !pos || !tick_at || !tick_slot || !ahead_at ||
        !ahead_rec || !st || !cur.bits || !cur.dirty)
        goto done;

    sched_min_reach(p, succ, minreach);
    /* the last record that accesses each shared slot (a product computed ahead, at the record
     * after which it is computed; a batch's reductions at their own records, after the head) */
    for (int32_t d = 0; d < ndist; d++) {
        maxacc[d] = -1;
        pos[d] = -1;
    }
    for (int32_t i = 0; i < nr; i++) {
        sched_access acc[SCHED_MAX_ACCESSES];
        int na = sched_record_accesses(p, &p->records[i], 0, acc);
        int32_t at = plan->ahead_at[i] > i ? plan->ahead_at[i] : i;
        for (int k = 0; k < na; k++) {
            int32_t d = dist[acc[k].slot];
            if (d >= 0 && maxacc[d] < at)
                maxacc[d] = at;
        }
    }
    /* the slots that take their other buffer at each TICK, in slot order; the products
     * computed after each record, in record order */
    for (int32_t s = 0; s < ns; s++)
        if (plan->alt_tick[s] >= 0 && dist[s] >= 0)
            tick_at[plan->alt_tick[s] + 1]++;
    for (int32_t i = 0; i < nr; i++) {
        tick_at[i + 1] += tick_at[i];
        if (plan->ahead_at[i] >= 0)
            ahead_at[plan->ahead_at[i] + 1]++;
    }
    for (int32_t i = 0; i < nr; i++)
        ahead_at[i + 1] += ahead_at[i];
    {
        for (int32_t i = 0; i < nr; i++)
            fill[i] = 0;
        for (int32_t s = 0; s < ns; s++)
            if (plan->alt_tick[s] >= 0 && dist[s] >= 0) {
                int32_t t = plan->alt_tick[s];
                tick_slot[tick_at[t] + fill[t]++] = s;
            }
        for (int32_t i = 0; i < nr; i++)
            fill[i] = 0;
        for (int32_t q = 0; q < nr; q++)
            if (plan->ahead_at[q] >= 0) {
                int32_t a = plan->ahead_at[q];
                ahead_rec[ahead_at[a] + fill[a]++] = q;
            }
    }

    changed = 1;
    while (changed) {
        changed = 0;
        sched_cur_clear(&cur);
        for (int32_t i = 0; i < nr; i++) {
            const cfx_record *r = &p->records[i];
            int32_t nsucc;
            if (in_region[i] >= 0) {
                /* Inside a region nothing is pending across blocks; what leaves the region
                 * passes the exit's barrier. Entry from outside: below. */
                continue;
            }
            {
                sched_pending *in = &st[i];
                sched_cur_clear(&cur);
                if (plan->flags[i] & SCHED_F_REGION_EXIT) {
                    /* every block passes the exit's barrier here, whatever came before */
                    in->n = 0;
                    in->dead = 0;
                }
                for (int32_t k = 0; k < in->n; k++)
                    sched_cur_or(&cur, in->d[k], in->v[k]);
                cur.dead = in->dead;
            }
            {
                /* room for this record's accesses and its products' (the state is reloaded
                 * at every record, so the list holds at most the loaded state and those) */
                int64_t need = (int64_t)cur.ndirty + (int64_t)(ahead_at[i + 1] - ahead_at[i] + 1) * SCHED_MAX_ACCESSES + 4;
                if (need > dirty_cap) {
                    int32_t *grown = (int32_t *)realloc(cur.dirty, sizeof(int32_t) * (size_t)need);
                    if (!grown)
                        goto done;
                    cur.dirty = grown;
                    dirty_cap = (int32_t)need;
                }
            }
            if (r->kind == REC_TICK && plan->nalternates > 0) {
                /* an iteration begins: the tensors that alternate take their other buffer,
                 * which nothing touched since a grid barrier of the last iteration */
                for (int32_t k = tick_at[i]; k < tick_at[i + 1]; k++) {
                    int32_t d = dist[tick_slot[k]];
                    cur.bits[d] = 0;
                }
            }
            if (plan->batch_head[i] >= 0 || plan->ahead_at[i] >= 0) {
                /* done in its batch, at the head's combine, or an iteration ahead, after
                 * ahead_at: nothing here */
            } else if (plan->flags[i] & SCHED_F_LAUNCH) {
                /* the launch ends here: everything before it is complete, and the next
                 * launch starts with a barrier */
                sched_cur_clear(&cur);
            } else {
                sched_access acc[SCHED_MAX_ACCESSES];
                int na = sched_record_accesses(p, r, plan->flags[i], acc);
                int need = sched_any_conflict(acc, na, dist, cur.bits);
                /* a batch's later reductions read their inputs here, before the barrier */
                for (int32_t j = plan->batch_next[i]; j >= 0 && !need; j = plan->batch_next[j]) {
                    sched_access bacc[SCHED_MAX_ACCESSES];
                    int nb = sched_record_accesses(p, &p->records[j], plan->flags[j], bacc);
                    need = sched_any_conflict(bacc, nb, dist, cur.bits);
                }
                if (need && (r->kind == REC_REDUCE || r->kind == REC_DOT) && !(plan->flags[i] & SCHED_F_COMBINE)) {
                    /* A small reduction computed whole by every block would need a barrier
                     * before it here (its input is still being written) and would leave a
                     * whole read pending after it; split and combined, its one barrier is
                     * inside and nothing stays pending. The flag is only ever set, so the
                     * sweeps still end. */
                    plan->flags[i] |= SCHED_F_SPLIT | SCHED_F_COMBINE;
                    na = sched_record_accesses(p, r, plan->flags[i], acc);
                    need = sched_any_conflict(acc, na, dist, cur.bits);
                }
                if (need) {
                    plan->flags[i] |= SCHED_F_BARRIER_BEFORE;
                    sched_cur_clear(&cur);
                }
                if (plan->flags[i] & SCHED_F_COMBINE) {
                    /* the partials' barrier inside the record completes everything before
                     * it, the record's own reads included */
                    sched_cur_clear(&cur);
                } else {
                    for (int k = 0; k < na; k++) {
                        int32_t d = dist[acc[k].slot];
                        if (d >= 0)
                            sched_cur_or(&cur, d, acc[k].mode);
                    }
                }
            }
            for (int32_t e = ahead_at[i]; (pre[i] & 2) && e < ahead_at[i + 1]; e++) {
                /* product q, computed here for the next iteration: its output's other buffer,
                 * which no block reads now (the output alternates), is not checked */
                int32_t q = ahead_rec[e];
                sched_access acc[SCHED_MAX_ACCESSES];
                int na = sched_record_accesses(p, &p->records[q], plan->flags[q], acc);
                for (int k = 0; k < na; k++) {
                    int32_t d = dist[acc[k].slot];
                    if (d < 0)
                        continue;
                    if (acc[k].slot != p->records[q].a && sched_conflicts(acc[k].mode, cur.bits[d]))
                        plan->ahead_conflict[q] = 1;
                    sched_cur_or(&cur, d, acc[k].mode);
                }
            }
            nsucc = sched_successors(p, i, succ);
            for (int32_t k = 0; k < nsucc; k++) {
                int32_t s = succ[k], ch = 0;
                if ((pre[i] & 1) && s == i + 1)
                    continue; /* into a loop whose entry computes a product ahead (barriers) */
                if (s < 0 || s >= nr)
                    continue;
                sched_pending *in = &st[s];
                for (int32_t m = 0; m < in->n; m++)
                    pos[in->d[m]] = m;
                for (int32_t m = 0; m < cur.ndirty; m++) {
                    int32_t d = cur.dirty[m], at;
                    uint8_t v = cur.bits[d];
                    if (!v)
                        continue;
                    if (maxacc[d] < minreach[s]) {
                        ch |= !in->dead;
                        in->dead = 1;
                        continue;
                    }
                    at = pos[d];
                    if (at >= 0) {
                        if ((uint8_t)(in->v[at] | v) != in->v[at]) {
                            in->v[at] |= v;
                            ch = 1;
                        }
                        continue;
                    }
                    if (sched_pending_put(in, d, v) != 0)
                        goto done;
                    pos[d] = in->n - 1;
                    ch = 1;
                }
                if (cur.dead && !in->dead) {
                    in->dead = 1;
                    ch = 1;
                }
                for (int32_t m = 0; m < in->n; m++)
                    pos[in->d[m]] = -1;
                if (ch && s <= i)
                    changed = 1;
            }
        }
    }
    /* A region is entered with whatever is pending from outside: block 0 is about to touch
     * slots the others may still be using. Its entry's state holds the union over outside
     * predecessors only, since region records propagate nothing. */
    for (int32_t i = 0; i < nr; i++)
        if ((plan->flags[i] & SCHED_F_REGION_ENTRY) && (st[i].n > 0 || st[i].dead))
            plan->flags[i] |= SCHED_F_ENTRY_BARRIER;
    /* tick_live[s]: whether a tensor that alternates has bits pending at its TICK, where the
     * sweep clears them. A TICK's entry state only grows from sweep to sweep (one inside a
     * region is never walked, a region's exit starts empty each time), so where the last one
     * holds none of the tensor's bits, no sweep cleared any: without it alternating, every
     * sweep goes the same way (sched_plan_build_rep). */
    for (int32_t i = 0; tick_live && i < nr; i++) {
        if (tick_at[i] == tick_at[i + 1] || in_region[i] >= 0)
            continue;
        for (int32_t m = 0; m < st[i].n; m++)
            pos[st[i].d[m]] = m;
        for (int32_t k = tick_at[i]; k < tick_at[i + 1]; k++) {
            int32_t at = pos[dist[tick_slot[k]]];
            if (at >= 0 && st[i].v[at])
                tick_live[tick_slot[k]] = 1;
        }
        for (int32_t m = 0; m < st[i].n; m++)
            pos[st[i].d[m]] = -1;
    }
    rc = 0;
done:
    for (int32_t i = 0; st && i < nr; i++) {
        free(st[i].d);
        free(st[i].v);
    }
    free(st);
    free(fill);
    free(minreach);
    free(maxacc);
    free(pos);
    free(tick_at);
    free(tick_slot);
    free(ahead_at);
    free(ahead_rec);
    free(cur.bits);
    free(cur.dirty);
    return rc;
}

/* Builds the plan of a validated program for opts (NULL: no product ends the launch), with the
 * replicas `rep` and, where alt is not NULL, the tensors that alternate and the products
 * computed ahead that it asks for (sched_alternate_candidates' layout). Returns 0, or -1 with a
 * reason in err when memory runs out. */
static int sched_plan_build_flow(const cfx_prog *p, const sched_opts *opts, const uint8_t *rep,
                                 const int32_t *alt, sched_plan *plan, uint8_t *tick_live, uint8_t *flags0,
                                 char *err, size_t errlen)
{
    int32_t nr = p->nrecords, ns = p->nslots;
    int32_t *succ = NULL, *in_region = NULL, *dist = NULL, *lastback = NULL;
    uint8_t *pre = NULL; /* per record: 1 the record before a loop whose entry computes a product
                          * ahead, 2 a record after which a product is computed ahead */
    int32_t ndist = 0;
    int64_t priv = 0;
    int rc = -1;

    memset(plan, 0, sizeof *plan);
    plan->nrecords = nr;
    plan->nslots = ns;
    plan->flags = (uint8_t *)calloc((size_t)nr + 1, 1);
    plan->region_exit = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    plan->priv_offset = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ns + 1));
    succ = (int32_t *)malloc(sizeof(int32_t) * ((size_t)p->ntable + 2));
    in_region = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    dist = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ns + 1));
    lastback = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    plan->replicas = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ns + 1));
    plan->batch_next = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    plan->batch_head = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    plan->alt_tick = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ns + 1));
    plan->ahead_at = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    plan->ahead_head = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    plan->ahead_conflict = (uint8_t *)calloc((size_t)nr + 1, 1);
    pre = (uint8_t *)calloc((size_t)nr + 1, 1);
    if (!plan->flags || !plan->region_exit || !plan->priv_offset || !succ || !in_region || !dist
        || !lastback || !plan->replicas || !plan->batch_next || !plan->batch_head || !plan->alt_tick
        || !plan->ahead_at || !plan->ahead_head || !plan->ahead_conflict || !pre)
        goto nomem;
    for (int32_t s = 0; s < ns; s++) {
        plan->alt_tick[s] = alt ? alt[s] : -1;
        plan->nalternates += plan->alt_tick[s] >= 0;
    }
    /* the products computed an iteration ahead: those asked for whose output still alternates */
    sched_back_edges(p, succ, lastback);
    for (int32_t i = 0; i < nr; i++) {
        int32_t h;
        plan->ahead_at[i] = plan->ahead_head[i] = -1;
        if (!alt || alt[ns + i] < 0 || alt[p->records[i].a] < 0 || !sched_loop_around(lastback, i, &h))
            continue;
        plan->ahead_at[i] = alt[ns + i];
        plan->ahead_head[i] = h;
        pre[h - 1] |= 1; /* the entry's copy ends with a grid barrier: nothing pending into h */
        pre[plan->ahead_at[i]] |= 2; /* a product is computed after this record */
        plan->naheads++;
    }

    /* private copies (scalars first, then the replicas, each at a multiple of 16 bytes), and a
     * dense index of the shared (non-private, non-const) slots */
    for (int32_t s = 0; s < ns; s++) {
        const cfx_slot *sl = &p->slots[s];
        plan->priv_offset[s] = -1;
        dist[s] = -1;
        if (sched_slot_private(sl)) {
            plan->priv_offset[s] = (int32_t)priv;
            priv += SCHED_PRIV_UNIT;
        } else if (!rep[s] && sl->kind != SLOT_CONST) {
            dist[s] = ndist++;
        }
    }
    priv = (priv + 15) / 16 * 16;
    plan->nreplicas = 0;
    for (int32_t s = 0; s < ns; s++)
        if (rep[s]) {
            plan->replicas[plan->nreplicas++] = s;
            plan->priv_offset[s] = (int32_t)priv;
            priv += (slot_bytes(&p->slots[s]) + 15) / 16 * 16;
        }
    if (priv > INT32_MAX - 16) {
        snprintf(err, errlen, "the program has too many scalar slots for the persistent executor");
        goto fail;
    }
    plan->priv_bytes = (int32_t)((priv + 15) / 16 * 16);

    for (int32_t i = 0; i < nr; i++) {
        const cfx_record *r = &p->records[i];
        int64_t dom = sched_domain(r, p->slots);
        plan->region_exit[i] = -1;
        if (sched_record_launches(p, r, opts)) {
            plan->flags[i] |= SCHED_F_LAUNCH;
            if (r->kind == REC_CALL)
                plan->nlaunch_calls++;
            else
                plan->nlaunch_products++;
        } else if (r->kind == REC_CALL) {
            /* inline: split over its results' elements, or one item for one block */
            if (sched_call_domain(p, r, sched_call_form(p, r, opts)) > 0)
                plan->flags[i] |= SCHED_F_SPLIT;
        } else if (dom > 0) {
            if (r->kind == REC_REDUCE || r->kind == REC_DOT) {
                /* over replicas alone, every block has every element: no combine */
                int own = plan->priv_offset[r->b] >= 0 && (r->kind == REC_REDUCE || plan->priv_offset[r->c] >= 0);
                if (dom > SCHED_REDUNDANT_REDUCE_MAX && !own)
                    plan->flags[i] |= SCHED_F_SPLIT | SCHED_F_COMBINE;
            } else if (plan->priv_offset[r->a] < 0) {
                plan->flags[i] |= SCHED_F_SPLIT;
            }
        }
    }

    if (sched_find_regions(p, opts, plan, succ, in_region, lastback) != 0)
        goto nomem;
    {
        /* jump targets, for the batches (lastback is free again: reused as marks) */
        uint8_t *target = (uint8_t *)lastback;
        for (int32_t r = 0; r < nr; r++)
            target[r] = 0;
        for (int32_t r = 0; r < nr; r++) {
            int32_t n = sched_successors(p, r, succ);
            for (int32_t k = 0; k < n; k++)
                if (succ[k] != r + 1 && succ[k] < nr)
                    target[succ[k]] = 1;
        }
        if (sched_find_batches(p, plan, target) != 0)
            goto nomem;
    }

    /* The flow: the pending bits of each shared slot on entry to each record, the union over
     * the predecessors, swept in record order until nothing changes (the bits only grow, so it
     * ends). One dense array `cur` holds the bits as the sweep walks; a record that only the
     * record before it falls into takes them from there, and every other record keeps its
     * entry state as a list (sched_flow), so the analysis costs what the program's accesses
     * and pending sets do, not records times slots. */
    if (tick_live)
        memset(tick_live, 0, (size_t)ns);
    if (flags0) /* the flags before the flow (sched_plan_build_opts' trials of a program without loops) */
        memcpy(flags0, plan->flags, (size_t)nr);
    if (ndist > 0 && sched_flow(p, plan, dist, ndist, in_region, pre, succ, tick_live) != 0)
        goto nomem;
    for (int32_t i = 0; i < nr; i++)
        if (plan->flags[i] & (SCHED_F_BARRIER_BEFORE | SCHED_F_ENTRY_BARRIER))
            plan->nbarriers++;
    rc = 0;
done:
    free(succ);
    free(in_region);
    free(dist);
    free(lastback);
    free(pre);
    return rc;
nomem:
    snprintf(err, errlen, "out of memory in the scheduler's analysis");
fail:
    sched_plan_free(plan);
    rc = -1;
    goto done;
}

/* ---- tensors that alternate between two buffers by iteration (sched_opts.alternate) ----
 *
 * A shared tensor that a loop writes once an iteration and reads only after that write, in the
 * same iteration (CG's Ap, the temporaries of a decode step), needs a grid barrier before it is
 * written only because slow blocks may still read the last iteration's value. The compiled
 * kernel gives such a tensor two buffers and takes the other one at each iteration's TICK: its
 * write no longer meets the last iteration's reads, and the barrier goes. The buffer it writes
 * again, two iterations on, is safe as long as every iteration passes a grid barrier: a block
 * still reading iteration i's value has not arrived at iteration i+1's barrier, which every
 * block passes before it writes in iteration i+2.
 *
 * The rule, by the program's shape (sched_alternate_candidates): a shared tensor of a variable
 * or temporary, written by one record W only, W inside a loop on the straight run of records
 * from its TICK (no jump between the TICK and W, none into that run), W not reading it, every
 * other record that touches it a reader after W inside the loop. And by the plan
 * (sched_alternates_hold): the loop ends no launch and holds no one-block region, and the
 * straight run from its TICK passes a grid barrier (a barrier before a record, or a combine),
 * so every iteration does. */

/* ---- products computed an iteration ahead (sched_opts.alternate too) ----
 *
 * A loop whose body starts with a product of a vector that the body computes later (greedy
 * decoding: h = tanh(M @ h + E[tok]), then W @ h and its argmax) passes a grid barrier between
 * the product's rows and their readers, and another at the argmax's combine. The product only
 * depends on what the record P that writes its vector leaves, so the compiled kernel computes it
 * right after P, for the next iteration, into the other buffer of its alternating output; the
 * barrier it waited for is then the one after P (the combine), and once before the loop, on entry,
 * it is computed between two grid barriers. Its readers this iteration read this iteration's
 * buffer, written before the last iteration's barrier; its write of the other buffer meets no
 * read, the last reader of that buffer having passed that same barrier.
 *
 * The shape (sched_ahead_shape): the product W (a MATMUL, which cannot stop a run) writes a
 * tensor that alternates by the rule below, read only up to P; each operand is written in the
 * loop by P alone or not at all, and P by at least one; P follows W on the same straight run;
 * the loop is entered only by falling into its head from the record before it. The plan
 * (sched_alternates_hold): computing it after P meets nothing pending, a grid barrier follows P
 * on its straight run, and every block runs the record before the head in the loop's launch
 * (not in a one-block region, not a record that ends the launch). The product's profile keeps its count: the entry's copy is
 * stamped as the record before the loop. */

/* The one record in the loop [h, j] that writes operands of product w, or -1 when none does or
 * several do. */
static int32_t sched_ahead_writer(const cfx_prog *p, const cfx_record *w, int32_t h, int32_t j)
{
    int32_t at = -1;
    int32_t ops[2] = {w->b, w->c};
    for (int k = 0; k < 2; k++)
        for (int32_t q = h; q <= j; q++) {
            if (!sched_writes(p, &p->records[q], ops[k]))
                continue;
            if (at >= 0 && at != q)
                return -1;
            at = q;
        }
    return at;
}

/* Whether product w in the loop at h (its output read last at record `last`) has the shape.
 * minpred and maxpred: per record, the lowest and highest record with an edge into it. */
static int sched_ahead_shape(const cfx_prog *p, const int32_t *lastback, const uint8_t *target,
                             const int32_t *minpred, const int32_t *maxpred, int32_t *succ, int32_t w,
                             int32_t h, int32_t last)
{
    int32_t j = lastback[h], at;
    if (p->records[w].kind != REC_MATMUL || h < 1 || sched_control(p, h - 1, succ))
        return 0;
    at = sched_ahead_writer(p, &p->records[w], h, j);
    if (at <= w || last > at)
        return 0;
    for (int32_t k = w + 1; k <= at; k++) /* one straight run from w to the writer */
        if (target[k] || sched_control(p, k - 1, succ))
            return 0;
    /* entered only from h - 1: no edge into h from before h - 1 or after the loop */
    return minpred[h] >= h - 1 && maxpred[h] <= j;
}

/* Marks alt[s] (nslots) with the TICK of the loop for each shared tensor s (not private by
 * `rep` or as a scalar, not an input, result or constant) whose uses fit the rule's shape, -1
 * for the others; and after them alt[nslots + w] (nrecords) with the record after which product
 * w may be computed an iteration ahead (its output one of those tensors), -1 for the others.
 * Returns how many tensors; -1 when memory runs out. */
static int32_t sched_alternate_candidates(const cfx_prog *p, const uint8_t *rep, int32_t *alt)
{
    int32_t nr = p->nrecords, ns = p->nslots, n = 0;
    int32_t *succ = (int32_t *)malloc(sizeof(int32_t) * ((size_t)p->ntable + 2));
    int32_t *lastback = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    int32_t *writer = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ns + 1)); /* -1 none, -2 several */
    int32_t *first = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ns + 1));  /* first reader */
    int32_t *last = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ns + 1));   /* last reader */
    uint8_t *target = (uint8_t *)calloc((size_t)nr + 1, 1);
    int32_t *around = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));  /* sched_loops_around */
    int32_t *runtick = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1)); /* below */
    int32_t *minpred = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    int32_t *maxpred = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    if (!succ || !lastback || !writer || !first || !last || !target || !around || !runtick || !minpred || !maxpred) {
        n = -1;
        goto done;
    }
    sched_back_edges(p, succ, lastback);
    sched_loops_around(lastback, nr, around, runtick);
    for (int32_t r = 0; r < nr; r++) {
        minpred[r] = INT32_MAX;
        maxpred[r] = -1;
    }
    for (int32_t r = 0; r < nr; r++) {
        int32_t k = sched_successors(p, r, succ);
        for (int32_t q = 0; q < k; q++) {
            int32_t x = succ[q];
            if (x < 0 || x >= nr)
                continue;
            if (x != r + 1)
                target[x] = 1;
            minpred[x] = r < minpred[x] ? r : minpred[x];
            maxpred[x] = r > maxpred[x] ? r : maxpred[x];
        }
    }
    /* runtick[k]: going back from record k along its straight run (no jump into k or a record
     * it passes, no control record before one), the TICK met first, or -1 */
    for (int32_t k = 0; k < nr; k++)
        runtick[k] = k == 0 || target[k]                  ? -1
                     : p->records[k - 1].kind == REC_TICK ? k - 1
                     : sched_control(p, k - 1, succ)      ? -1
                                                          : runtick[k - 1];
    for (int32_t s = 0; s < ns; s++) {
        writer[s] = -1;
        first[s] = INT32_MAX;
        last[s] = -1;
        alt[s] = -1;
    }
    for (int32_t r = 0; r < nr; r++)
        alt[ns + r] = -1;
    for (int32_t r = 0; r < nr; r++) {
        sched_access acc[SCHED_MAX_ACCESSES];
        int na = sched_record_accesses(p, &p->records[r], 0, acc);
        for (int q = 0; q < na; q++) {
            int32_t s = acc[q].slot;
            if (acc[q].mode & (SA_W_ALIGNED | SA_W_WHOLE)) {
                writer[s] = writer[s] == -1 ? r : -2;
            } else {
                first[s] = r < first[s] ? r : first[s];
                last[s] = r > last[s] ? r : last[s];
            }
        }
    }
    for (int32_t s = 0; s < ns; s++) {
        const cfx_slot *sl = &p->slots[s];
        int32_t w = writer[s], h, t = -1;
        if (w < 0 || rep[s] || sched_slot_private(sl) || (sl->kind != SLOT_VAR && sl->kind != SLOT_TEMP))
            continue;
        h = around[w];
        if (first[s] <= w || h < 0 || last[s] > lastback[h])
            continue; /* read before it is written (or by W itself), or outside the loop */
        if (w > h && runtick[w] >= h) /* back from W along the straight run to the TICK */
            t = runtick[w];
        if (t < 0)
            continue;
        alt[s] = t;
        n++;
        if (sched_ahead_shape(p, lastback, target, minpred, maxpred, succ, w, h, last[s]))
            alt[ns + w] = sched_ahead_writer(p, &p->records[w], h, lastback[h]);
    }
done:
    free(succ);
    free(lastback);
    free(writer);
    free(first);
    free(last);
    free(target);
    free(around);
    free(runtick);
    free(minpred);
    free(maxpred);
    return n;
}

/* Drops (alt[s] = -1) each candidate whose loop the plan does not let alternate: one that ends a
 * launch or holds a one-block region, or whose iterations need not pass a grid barrier; first
 * (alt[nslots + w] = -1, and nothing else that round) each product the plan does not let be
 * computed ahead. Returns how many it dropped; -1 when memory runs out. */
static int32_t sched_alternates_hold(const cfx_prog *p, const sched_plan *plan, int32_t *alt)
{
    int32_t dropped = 0, nr = p->nrecords;
    int32_t *succ = (int32_t *)malloc(sizeof(int32_t) * ((size_t)p->ntable + 2));
    int32_t *lastback = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    int32_t *around = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    int32_t *next = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1)); /* below */
    int32_t *bad = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));  /* below */
    if (!succ || !lastback || !around || !next || !bad) {
        dropped = -1;
        goto done;
    }
    sched_back_edges(p, succ, lastback);
    sched_loops_around(lastback, nr, around, next);
    /* next[k]: the first record from k on that passes a grid barrier (a barrier before it, a
     * combine) or is a control record, nr if none; bad[k]: how many records before k end a
     * launch, hold a region or are a region's exit */
    next[nr] = nr;
    for (int32_t k = nr - 1; k >= 0; k--) {
        unsigned f = plan->flags[k];
        int barrier = (f & SCHED_F_BARRIER_BEFORE) || ((f & SCHED_F_COMBINE) && plan->batch_head[k] < 0);
        next[k] = barrier || sched_control(p, k, succ) ? k : next[k + 1];
    }
    bad[0] = 0;
    for (int32_t k = 0; k < nr; k++)
        bad[k + 1] = bad[k] + ((plan->flags[k] & (SCHED_F_LAUNCH | SCHED_F_ONE_BLOCK | SCHED_F_REGION_EXIT)) != 0);
#define SCHED_PASSES_BARRIER(k) \
    ((plan->flags[k] & SCHED_F_BARRIER_BEFORE) || ((plan->flags[k] & SCHED_F_COMBINE) && plan->batch_head[k] < 0))
    for (int32_t w = 0; w < nr; w++) {
        int32_t at = plan->ahead_at[w], h = plan->ahead_head[w], k;
        if (at < 0)
            continue;
        /* the entry's copy runs after record h - 1, by every block, in the same launch as the
         * loop: not after block 0 alone, nor where a launch ends (the next starts at h) */
        if ((plan->flags[h - 1] & (SCHED_F_ONE_BLOCK | SCHED_F_LAUNCH)) || (plan->flags[h] & SCHED_F_REGION_EXIT)) {
            alt[p->nslots + w] = -1;
            dropped++;
            continue;
        }
        /* a grid barrier on the straight run after at */
        k = next[at + 1];
        if (plan->ahead_conflict[w] || k >= nr || !SCHED_PASSES_BARRIER(k)) {
            alt[p->nslots + w] = -1;
            dropped++;
        }
    }
    if (dropped > 0) /* the tensors are judged on the plan without those products */
        goto done;
    for (int32_t s = 0; s < p->nslots; s++) {
        int32_t t = alt[s], h, k;
        if (t < 0)
            continue;
        h = around[t];
        /* the loop ends no launch and holds no region; a grid barrier on the straight run
         * after its TICK */
        int ok = h >= 0 && bad[lastback[h] + 1] == bad[h];
        k = ok ? next[t + 1] : nr;
        if (!ok || k > lastback[h] || !SCHED_PASSES_BARRIER(k)) {
            alt[s] = -1;
            dropped++;
        }
    }
#undef SCHED_PASSES_BARRIER
done:
    free(succ);
    free(lastback);
    free(around);
    free(next);
    free(bad);
    return dropped;
}

static double sched_plan_cost(const cfx_prog *p, const sched_plan *plan);

/* The plan for `alt` (NULL: none alternate), built again without the candidates it does not let
 * alternate until it lets every one left; tick_live (nslots, or NULL) as sched_flow leaves it for
 * that plan. Returns 0, or -1 with a reason in err. */
static int sched_plan_build_alt(const cfx_prog *p, const sched_opts *opts, const uint8_t *rep, int32_t *alt,
                                sched_plan *plan, uint8_t *tick_live, char *err, size_t errlen)
{
    for (;;) {
        if (sched_plan_build_flow(p, opts, rep, alt, plan, tick_live, NULL, err, errlen) != 0)
            return -1;
        int32_t dropped = alt ? sched_alternates_hold(p, plan, alt) : 0;
        if (dropped == 0)
            return 0;
        sched_plan_free(plan);
        if (dropped < 0) {
            snprintf(err, errlen, "out of memory in the scheduler's analysis");
            return -1;
        }
    }
}

/* The plan for the replicas `rep`, with the tensors that alternate where opts asks for them:
 * those of the candidates the plan lets alternate, each dropped again where the plan without it
 * costs no more (sched_plan_cost), so a second buffer stays only where it spares a barrier.
 * Returns 0, or -1 with a reason in err.
 *
 * A tensor with no bits pending at its TICK in the plan (tick_live) and no product computed
 * ahead into it is dropped without a new analysis: the sweeps without it clear nothing that
 * they cleared with it, so they set the same flags, the same candidates hold and the plan
 * costs the same (taken, as a trial that costs no more is). Only the tensors whose second
 * buffer may spare a barrier cost an analysis of the whole program each. */
static int sched_plan_build_rep(const cfx_prog *p, const sched_opts *opts, const uint8_t *rep,
                                sched_plan *plan, char *err, size_t errlen)
{
    int32_t *alt = NULL, n = 0, ns = p->nslots;
    uint8_t *live = NULL, *trial_live = NULL, *ahead_out = NULL;
    sched_plan trial;
    if (opts && opts->alternate) {
        alt = (int32_t *)malloc(sizeof(int32_t) * ((size_t)p->nslots + (size_t)p->nrecords + 1));
        live = (uint8_t *)malloc((size_t)ns + 1);
        trial_live = (uint8_t *)malloc((size_t)ns + 1);
        ahead_out = (uint8_t *)malloc((size_t)ns + 1);
        n = alt && live && trial_live && ahead_out ? sched_alternate_candidates(p, rep, alt) : -1;
        if (n < 0) {
            free(alt);
            free(live);
            free(trial_live);
            free(ahead_out);
            snprintf(err, errlen, "out of memory in the scheduler's analysis");
            return -1;
        }
    }
    if (sched_plan_build_alt(p, opts, rep, n > 0 ? alt : NULL, plan, n > 0 ? live : NULL, err, errlen) != 0) {
        free(alt);
        free(live);
        free(trial_live);
        free(ahead_out);
        return -1;
    }
    /* one analysis per candidate that may matter: each tensor that alternates, and each product
     * computed ahead, goes where the plan costs no more without it */
    if (plan->nalternates > 0) {
        double best = sched_plan_cost(p, plan);
        /* ahead_out[s]: a product computed ahead writes s (dropping s drops it too) */
        memset(ahead_out, 0, (size_t)ns);
        for (int32_t w = 0; w < p->nrecords; w++)
            if (plan->ahead_at[w] >= 0)
                ahead_out[p->records[w].a] = 1;
        for (int32_t s = 0; s < p->nslots + p->nrecords; s++) {
            if (s < p->nslots ? plan->alt_tick[s] < 0 : plan->ahead_at[s - p->nslots] < 0)
                continue;
            if (s < ns && !live[s] && !ahead_out[s]) {
                plan->alt_tick[s] = -1;
                plan->nalternates--;
                continue;
            }
            for (int32_t k = 0; k < p->nslots; k++)
                alt[k] = plan->alt_tick[k];
            for (int32_t k = 0; k < p->nrecords; k++)
                alt[p->nslots + k] = plan->ahead_at[k];
            alt[s] = -1;
            if (sched_plan_build_alt(p, opts, rep, alt, &trial, trial_live, err, errlen) != 0) {
                sched_plan_free(plan);
                free(alt);
                free(live);
                free(trial_live);
                free(ahead_out);
                return -1;
            }
            if (sched_plan_cost(p, &trial) <= best) {
                best = sched_plan_cost(p, &trial);
                sched_plan_free(plan);
                *plan = trial;
                memcpy(live, trial_live, (size_t)ns);
                memset(ahead_out, 0, (size_t)ns);
                for (int32_t w = 0; w < p->nrecords; w++)
                    if (plan->ahead_at[w] >= 0)
                        ahead_out[p->records[w].a] = 1;
            } else {
                sched_plan_free(&trial);
            }
        }
    }
    free(alt);
    free(live);
    free(trial_live);
    free(ahead_out);
    return 0;
}

/* What a plan's grid barriers cost, for choosing replicas: each record that passes one (a
 * barrier before it, a combine, a region's exit) counts 64^d for the d loops around it, so
 * that a barrier in a loop outweighs any number outside it, and an inner loop's an outer's. */
static double sched_plan_cost(const cfx_prog *p, const sched_plan *plan)
{
    double cost = 0;
    int32_t succ_cap = p->ntable + 2;
    int32_t *succ = (int32_t *)malloc(sizeof(int32_t) * ((size_t)succ_cap + 1));
    int32_t *depth = (int32_t *)calloc((size_t)p->nrecords + 1, sizeof(int32_t));
    if (!succ || !depth) {
        free(succ);
        free(depth);
        return 0;
    }
    /* each jump back from r to t adds one to the depth of [t, r]: counted at the ends */
    for (int32_t r = 0; r < p->nrecords; r++) {
        int32_t n = sched_successors(p, r, succ);
        for (int32_t k = 0; k < n; k++)
            if (succ[k] <= r) {
                depth[succ[k]]++;
                depth[r + 1]--;
            }
    }
    for (int32_t i = 1; i < p->nrecords; i++)
        depth[i] += depth[i - 1];
    for (int32_t i = 0; i < p->nrecords; i++) {
        unsigned f = plan->flags[i];
        if (plan->batch_head[i] >= 0)
            continue; /* its combine is its batch's */
        int barriers = ((f & SCHED_F_BARRIER_BEFORE) && !(f & SCHED_F_ONE_BLOCK)) + ((f & SCHED_F_ENTRY_BARRIER) != 0) +
                       ((f & SCHED_F_COMBINE) && !(f & SCHED_F_ONE_BLOCK)) + ((f & SCHED_F_REGION_EXIT) != 0);
        if (barriers)
            cost += barriers * pow(64.0, depth[i] < 8 ? depth[i] : 8);
    }
    for (int32_t i = 0; plan->ahead_at && i < p->nrecords; i++) {
        int32_t d = plan->ahead_at[i] >= 0 ? depth[plan->ahead_head[i] - 1] : -1;
        if (d >= 0) /* the entry's copy, between two barriers */
            cost += 2 * pow(64.0, d < 8 ? d : 8);
    }
    free(succ);
    free(depth);
    return cost;
}

/* ---- the replicas' trials in a program without loops ----
 *
 * Each trial of sched_plan_build_opts builds the plan of the whole program again, without one
 * replica. In a program without loops the flow is one sweep, and the trial's differs from the
 * plan's only from the first record that touches the slot on: where no edge from before a record
 * lands after it (a cut), the entry state of the record is all that the records before it pass
 * on. So the trial walks from the cut before the slot's first access, from the plan's own entry
 * state there, as sched_flow does, and stops at the first cut after its last access where its
 * entry state is the plan's again: from there on the two are the same. The barriers it counts
 * on the way, against the plan's on the same records, give the trial's cost (every barrier
 * counts one outside loops). A trial that costs no more is then built whole, as before, and
 * taken; so the walk decides only which trials lose. It is checked first against the plan
 * itself: walked from the start without any trial it must set the plan's flags exactly, or
 * every trial is built whole. A slot that a reduction of more than SCHED_REDUNDANT_REDUCE_MAX
 * elements reads (whose combine, and so the batches, hang on the replica) is built whole too. */
typedef struct sched_lf {
    uint8_t *cut;        /* nr + 1: 1 where no edge from before the record lands after it */
    int32_t *first;      /* ns: the first record that accesses the slot, -1 */
    int32_t *last;       /* ns: the last one */
    uint8_t *flags0;     /* 2 x (nr + 1): the plan's flags before its flow, then a trial's */
    uint8_t *flags;      /* nr: the walk's flags */
    int32_t *bprefix;    /* nr + 1: the plan's barriers before each record */
    sched_pending *st;   /* nr + 1: the walk's entry states, by slot */
    sched_pending *cutst; /* nr + 1: the plan's entry state at each cut, by slot */
    uint8_t *shared;     /* ns: the plan's shared slots (sched_plan_build_flow's dist >= 0) */
    sched_cur cur;       /* by slot */
    int32_t *pos;        /* ns: -1 */
} sched_lf;

static void sched_lf_free(sched_lf *lf, int32_t nr)
{
    for (int32_t i = 0; i <= nr; i++) {
        if (lf->st) {
            free(lf->st[i].d);
            free(lf->st[i].v);
        }
        if (lf->cutst) {
            free(lf->cutst[i].d);
            free(lf->cutst[i].v);
        }
    }
    free(lf->cut);
    free(lf->first);
    free(lf->last);
    free(lf->flags0);
    free(lf->flags);
    free(lf->bprefix);
    free(lf->st);
    free(lf->cutst);
    free(lf->shared);
    free(lf->cur.bits);
    free(lf->cur.dirty);
    free(lf->pos);
}

/* The flags before the flow of record j (flags0[j]) in the trial without replica s
 * (sched_plan_build_flow's rule for a record whose output is no longer private: split). */
static uint8_t sched_trial_flags0(const cfx_prog *p, const uint8_t *flags0, int32_t j, int32_t s)
{
    const cfx_record *r = &p->records[j];
    uint8_t f = flags0[j];
    if (s >= 0 && r->a == s && !(f & SCHED_F_LAUNCH) && r->kind != REC_CALL && r->kind != REC_REDUCE &&
        r->kind != REC_DOT && sched_domain(r, p->slots) > 0)
        f |= SCHED_F_SPLIT;
    return f;
}

/* One record of a walk, as sched_flow's sweep steps it: record i with flags f before the flow,
 * the shared slots `shared` and s, the state before it in cur and after it left there. Returns
 * its flags (a barrier before it, a reduction split and combined, where the state needs them). */
static uint8_t sched_walk_record(const cfx_prog *p, const sched_plan *plan, const uint8_t *flags0,
                                 const uint8_t *shared, int32_t i, uint8_t f, int32_t s, sched_cur *cur)
{
    const cfx_record *r = &p->records[i];
    if (plan->batch_head[i] >= 0)
        return f; /* done in its batch */
    if (f & SCHED_F_LAUNCH) {
        sched_cur_clear(cur);
        return f;
    }
    sched_access acc[SCHED_MAX_ACCESSES];
    int na = sched_record_accesses(p, r, f, acc), need = 0;
#define SCHED_WALK_SHARED(x) (shared[x] || (x) == s)
    for (int k = 0; k < na && !need; k++)
        need = SCHED_WALK_SHARED(acc[k].slot) && sched_conflicts(acc[k].mode, cur->bits[acc[k].slot]);
    for (int32_t j = plan->batch_next[i]; j >= 0 && !need; j = plan->batch_next[j]) {
        sched_access bacc[SCHED_MAX_ACCESSES];
        int nb = sched_record_accesses(p, &p->records[j], sched_trial_flags0(p, flags0, j, s), bacc);
        for (int k = 0; k < nb && !need; k++)
            need = SCHED_WALK_SHARED(bacc[k].slot) && sched_conflicts(bacc[k].mode, cur->bits[bacc[k].slot]);
    }
    if (need && (r->kind == REC_REDUCE || r->kind == REC_DOT) && !(f & SCHED_F_COMBINE)) {
        f |= SCHED_F_SPLIT | SCHED_F_COMBINE;
        na = sched_record_accesses(p, r, f, acc);
        need = 0;
        for (int k = 0; k < na && !need; k++)
            need = SCHED_WALK_SHARED(acc[k].slot) && sched_conflicts(acc[k].mode, cur->bits[acc[k].slot]);
    }
    if (need) {
        f |= SCHED_F_BARRIER_BEFORE;
        sched_cur_clear(cur);
    }
    if (f & SCHED_F_COMBINE)
        sched_cur_clear(cur);
    else
        for (int k = 0; k < na; k++)
            if (SCHED_WALK_SHARED(acc[k].slot))
                sched_cur_or(cur, acc[k].slot, acc[k].mode);
#undef SCHED_WALK_SHARED
    return f;
}

/* Walks from cut a (entry state lf->cutst[a]) as sched_flow's one sweep does, with slot s shared
 * too (-1: none); with s >= 0 ends at the first cut after s's last access whose entry state is
 * the plan's, else walks to the end and saves every cut's entry state. *count: the barriers of
 * the walked records. Returns where it ended (nr: the end), -1 when memory runs out. */
static int32_t sched_lf_walk(const cfx_prog *p, const sched_plan *plan, sched_lf *lf, int32_t a, int32_t s,
                             int32_t *succ, int64_t *count)
{
    int32_t nr = p->nrecords, end = nr, maxx = a;
    sched_cur *cur = &lf->cur;
    *count = 0;
    for (int32_t k = 0; k < lf->cutst[a].n; k++) /* the walk's entry state at a */
        if (sched_pending_put(&lf->st[a], lf->cutst[a].d[k], lf->cutst[a].v[k]) != 0)
            return -1;
    lf->st[a].dead = lf->cutst[a].dead;
    for (int32_t i = a; i < nr; i++) {
        sched_pending *in = &lf->st[i];
        if (i > a && lf->cut[i]) {
            if (s < 0) { /* save the plan's entry state here */
                lf->cutst[i].n = 0;
                for (int32_t k = 0; k < in->n; k++)
                    if (sched_pending_put(&lf->cutst[i], in->d[k], in->v[k]) != 0)
                        return -1;
                lf->cutst[i].dead = in->dead;
            } else if (i > lf->last[s] && in->n == lf->cutst[i].n && in->dead == lf->cutst[i].dead) {
                int same = 1;
                for (int32_t k = 0; k < in->n; k++)
                    lf->pos[in->d[k]] = k;
                for (int32_t k = 0; k < in->n && same; k++) {
                    int32_t at = lf->pos[lf->cutst[i].d[k]];
                    same = at >= 0 && in->v[at] == lf->cutst[i].v[k];
                }
                for (int32_t k = 0; k < in->n; k++)
                    lf->pos[in->d[k]] = -1;
                if (same) {
                    end = i;
                    break;
                }
            }
        }
        sched_cur_clear(cur);
        for (int32_t k = 0; k < in->n; k++)
            sched_cur_or(cur, in->d[k], in->v[k]);
        cur->dead = in->dead;
        uint8_t f = sched_walk_record(p, plan, lf->flags0, lf->shared, i, sched_trial_flags0(p, lf->flags0, i, s), s, cur);
        lf->flags[i] = f;
        if (plan->batch_head[i] < 0)
            *count += ((f & SCHED_F_BARRIER_BEFORE) != 0) + ((f & SCHED_F_COMBINE) != 0);
        int32_t nsucc = sched_successors(p, i, succ);
        for (int32_t k = 0; k < nsucc; k++) {
            int32_t x = succ[k];
            if (x <= i || x >= nr)
                continue;
            maxx = x > maxx ? x : maxx;
            sched_pending *to = &lf->st[x];
            for (int32_t m = 0; m < to->n; m++)
                lf->pos[to->d[m]] = m;
            for (int32_t m = 0; m < cur->ndirty; m++) {
                int32_t d = cur->dirty[m];
                uint8_t v = cur->bits[d];
                if (!v)
                    continue;
                if (lf->last[d] < x) {
                    to->dead = 1;
                    continue;
                }
                if (lf->pos[d] >= 0) {
                    to->v[lf->pos[d]] |= v;
                    continue;
                }
                if (sched_pending_put(to, d, v) != 0)
                    return -1;
                lf->pos[d] = to->n - 1;
            }
            if (cur->dead)
                to->dead = 1;
            for (int32_t m = 0; m < to->n; m++)
                lf->pos[to->d[m]] = -1;
        }
    }
    sched_cur_clear(cur);
    for (int32_t i = a; i <= maxx; i++) { /* empty the walk's states for the next walk */
        lf->st[i].n = 0;
        lf->st[i].dead = 0;
    }
    return end;
}

/* Sets lf up for the plan built with flags0 already in lf->flags0: its shared slots, its barriers,
 * and the entry states of its cuts, walked and checked against the plan. Returns 1 when the walk
 * gives the plan's flags, 0 when it does not (no trial is walked then), -1 when memory runs out. */
static int sched_lf_base(const cfx_prog *p, const sched_plan *plan, sched_lf *lf, int32_t *succ)
{
    int32_t nr = p->nrecords;
    int64_t count;
    for (int32_t x = 0; x < p->nslots; x++)
        lf->shared[x] = plan->priv_offset[x] < 0 && p->slots[x].kind != SLOT_CONST;
    lf->bprefix[0] = 0;
    for (int32_t i = 0; i < nr; i++) {
        unsigned f = plan->flags[i];
        lf->bprefix[i + 1] = lf->bprefix[i] + (plan->batch_head[i] >= 0 ? 0
                                               : ((f & SCHED_F_BARRIER_BEFORE) != 0) + ((f & SCHED_F_COMBINE) != 0));
    }
    if (sched_lf_walk(p, plan, lf, 0, -1, succ, &count) < 0)
        return -1;
    if (count != lf->bprefix[nr])
        return 0;
    for (int32_t i = 0; i < nr; i++)
        if (lf->flags[i] != plan->flags[i])
            return 0;
    return 1;
}

/* Sets lf up for a program without loops (see above); 1 when it has none, 0 when it has loops
 * or regions, -1 when memory runs out. */
static int sched_lf_init(const cfx_prog *p, sched_lf *lf, int32_t *succ)
{
    int32_t nr = p->nrecords, ns = p->nslots, reach = 0;
    memset(lf, 0, sizeof *lf);
    for (int32_t i = 0; i < nr; i++) {
        int32_t n = sched_successors(p, i, succ);
        for (int32_t k = 0; k < n; k++)
            if (succ[k] <= i)
                return 0;
    }
    lf->cut = (uint8_t *)calloc((size_t)nr + 1, 1);
    lf->first = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ns + 1));
    lf->last = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ns + 1));
    lf->flags0 = (uint8_t *)calloc(2 * ((size_t)nr + 1), 1); /* the plan's, then a trial's */
    lf->flags = (uint8_t *)calloc((size_t)nr + 1, 1);
    lf->bprefix = (int32_t *)calloc((size_t)nr + 1, sizeof(int32_t));
    lf->st = (sched_pending *)calloc((size_t)nr + 1, sizeof(sched_pending));
    lf->cutst = (sched_pending *)calloc((size_t)nr + 1, sizeof(sched_pending));
    lf->shared = (uint8_t *)calloc((size_t)ns + 1, 1);
    lf->cur.bits = (uint8_t *)calloc((size_t)ns + 1, 1);
    lf->cur.dirty = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ns + 1));
    lf->pos = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ns + 1));
    if (!lf->cut || !lf->first || !lf->last || !lf->flags0 || !lf->flags || !lf->bprefix || !lf->st ||
        !lf->cutst || !lf->shared || !lf->cur.bits || !lf->cur.dirty || !lf->pos)
        return -1;
    for (int32_t x = 0; x < ns; x++) {
        lf->first[x] = lf->last[x] = -1;
        lf->pos[x] = -1;
    }
    for (int32_t i = 0; i < nr; i++) {
        sched_access acc[SCHED_MAX_ACCESSES];
        int na = sched_record_accesses(p, &p->records[i], 0, acc);
        int32_t n = sched_successors(p, i, succ);
        lf->cut[i] = reach <= i;
        for (int k = 0; k < na; k++) {
            int32_t x = acc[k].slot;
            if (lf->first[x] < 0)
                lf->first[x] = i;
            lf->last[x] = i;
        }
        for (int32_t k = 0; k < n; k++)
            reach = succ[k] > reach ? succ[k] : reach;
    }
    return 1;
}

/* ---- the replicas' trials in a program with loops ----
 *
 * With loops the flow is several sweeps (sched_flow), and what a record's entry state holds
 * depends on the sweeps before: a bit once passed on stays, even where a later sweep sets a
 * barrier. So a trial is walked over a stretch [a, e) between two cuts (no edge crosses the
 * gap before a or before e but the fall-through into them, none lands on them from behind,
 * none is inside a one-block region), sweep by sweep as sched_flow sweeps it: in sweep k the
 * walk starts from the entry state the plan's own sweep k had at a (the records before a are
 * the same in the trial, so they pass on the same), sweeps [a, e) as sched_flow does, and ends
 * when nothing jumped back changed and a's state changes no more. The walk of the plan itself,
 * from the start, saves each cut's entry state whenever a sweep changes it, and must set the
 * plan's flags exactly, or no trial is walked. The trial's state at e must be the plan's in
 * every sweep (after its last the plan's changes no more): then the records from e on sweep as
 * the plan's did, and the trial's barriers in [a, e), against the plan's there, weighed as
 * sched_plan_cost weighs them, give its cost. Where e's states differ the walk is tried again
 * to a cut twice as far (a few times, then to the end). As for a program without loops, the walk only
 * decides which trials lose: one that costs no more is built whole and taken.
 *
 * The compiled kernel's trials (opts->alternate) build the plan with tensors that alternate too
 * (sched_plan_build_rep). Those are walked only where alternation cannot matter: the plan keeps
 * no tensor that alternates and no product computed ahead, no product may be computed ahead in
 * the trial (sched_alternate_candidates), and no tensor that may alternate has bits pending at
 * its TICK, in the plan (outside [a, e)) or in the walk (inside). A TICK then clears nothing, in
 * any sweep, so every plan sched_plan_build_rep builds for the trial sets the flags of the plan
 * without alternates, and every candidate is dropped without a trial. */
typedef struct sched_lw_snap {
    int32_t sweep; /* the sweep from which the cut's entry state is this one */
    int32_t next;  /* the cut's next snapshot, -1 */
    int64_t off;   /* its entries in pool_d and pool_v */
    int32_t n;
    uint8_t dead;
} sched_lw_snap;

typedef struct sched_lw {
    uint8_t *cut;        /* nr + 1 */
    int32_t *cover;      /* nr + 2: scratch for the cuts */
    int32_t *minreach;   /* nr + 1: the lowest record reachable from each (sched_flow's) */
    int32_t *first;      /* ns: the first record that accesses the slot, -1 */
    int32_t *last;       /* ns: the last one */
    uint8_t *flags0;     /* nr + 1: the plan's flags before its flow */
    uint8_t *flags;      /* nr + 1: the walk's flags */
    double *weight;      /* nr + 1: what a barrier at the record costs (sched_plan_cost) */
    sched_pending *st;   /* nr + 1: the walk's entry states, by slot */
    uint8_t *shared;     /* ns: the plan's shared slots */
    sched_cur cur;       /* by slot */
    int32_t *pos;        /* ns: -1 */
    int32_t *snap_head;  /* nr + 1: each cut's first snapshot, -1 */
    int32_t *snap_tail;  /* nr + 1: its last */
    sched_lw_snap *snaps;
    int32_t nsnaps, capsnaps;
    int32_t *pool_d;
    uint8_t *pool_v;
    int64_t npool, cappool;
    int32_t *cand;       /* ns + nr: sched_alternate_candidates without replicas; NULL where
                          * the plan has no tensors that alternate */
    uint8_t *ahead_into; /* ns: a product that may be computed ahead writes the slot */
    int32_t *cand_off;   /* nr + 1: the tensors that may alternate at each TICK, ... */
    int32_t *cand_slot;  /* ... cand_slot[cand_off[i] .. cand_off[i + 1]) */
    /* the last trial walked (sched_lw_trial), for sched_lw_take: its stretch [ta, te), whether
     * a tensor that may alternate is live in it, and its own snapshots of the cuts inside,
     * saved after the first tsnaps0 snapshots and tpool0 entries */
    int32_t *tmp_head;   /* nr + 1 */
    int32_t *tmp_tail;   /* nr + 1 */
    int twalked, tlive;
    int32_t ta, te, tsnaps0;
    int64_t tpool0;
} sched_lw;

static void sched_lw_free(sched_lw *lw, int32_t nr)
{
    for (int32_t i = 0; lw->st && i <= nr; i++) {
        free(lw->st[i].d);
        free(lw->st[i].v);
    }
    free(lw->cut);
    free(lw->cover);
    free(lw->minreach);
    free(lw->first);
    free(lw->last);
    free(lw->flags0);
    free(lw->flags);
    free(lw->weight);
    free(lw->st);
    free(lw->shared);
    free(lw->cur.bits);
    free(lw->cur.dirty);
    free(lw->pos);
    free(lw->snap_head);
    free(lw->snap_tail);
    free(lw->snaps);
    free(lw->pool_d);
    free(lw->pool_v);
    free(lw->cand);
    free(lw->ahead_into);
    free(lw->cand_off);
    free(lw->cand_slot);
    free(lw->tmp_head);
    free(lw->tmp_tail);
    memset(lw, 0, sizeof *lw);
}


/* Sets lw up for a program with loops; 1, or -1 when memory runs out. */
static int sched_lw_init(const cfx_prog *p, const sched_opts *opts, sched_lw *lw, int32_t *succ)
{
    int32_t nr = p->nrecords, ns = p->nslots;
    memset(lw, 0, sizeof *lw);
    lw->cut = (uint8_t *)calloc((size_t)nr + 1, 1);
    lw->cover = (int32_t *)calloc((size_t)nr + 2, sizeof(int32_t));
    lw->minreach = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    lw->first = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ns + 1));
    lw->last = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ns + 1));
    lw->flags0 = (uint8_t *)calloc((size_t)nr + 1, 1);
    lw->flags = (uint8_t *)calloc((size_t)nr + 1, 1);
    lw->weight = (double *)calloc((size_t)nr + 1, sizeof(double));
    lw->st = (sched_pending *)calloc((size_t)nr + 1, sizeof(sched_pending));
    lw->shared = (uint8_t *)calloc((size_t)ns + 1, 1);
    lw->cur.bits = (uint8_t *)calloc((size_t)ns + 1, 1);
    lw->cur.dirty = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ns + 1));
    lw->pos = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ns + 1));
    lw->snap_head = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    lw->snap_tail = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    lw->tmp_head = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    lw->tmp_tail = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    if (!lw->cut || !lw->cover || !lw->minreach || !lw->first || !lw->last || !lw->flags0 || !lw->flags ||
        !lw->weight || !lw->st || !lw->shared || !lw->cur.bits || !lw->cur.dirty || !lw->pos || !lw->snap_head ||
        !lw->snap_tail || !lw->tmp_head || !lw->tmp_tail)
        return -1;
    if (opts && opts->alternate) {
        uint8_t *none = (uint8_t *)calloc((size_t)ns + 1, 1);
        lw->cand = (int32_t *)malloc(sizeof(int32_t) * ((size_t)ns + (size_t)nr + 1));
        lw->ahead_into = (uint8_t *)calloc((size_t)ns + 1, 1);
        int32_t n = none && lw->cand && lw->ahead_into ? sched_alternate_candidates(p, none, lw->cand) : -1;
        free(none);
        if (n < 0)
            return -1;
        for (int32_t w = 0; w < nr; w++)
            if (lw->cand[ns + w] >= 0)
                lw->ahead_into[p->records[w].a] = 1;
        lw->cand_off = (int32_t *)calloc((size_t)nr + 2, sizeof(int32_t));
        lw->cand_slot = (int32_t *)malloc(sizeof(int32_t) * ((size_t)n + 1));
        if (!lw->cand_off || !lw->cand_slot)
            return -1;
        for (int32_t t = 0; t < ns; t++)
            if (lw->cand[t] >= 0)
                lw->cand_off[lw->cand[t] + 1]++;
        for (int32_t i = 0; i < nr; i++)
            lw->cand_off[i + 1] += lw->cand_off[i];
        for (int32_t t = 0; t < ns; t++) /* cand_off[i] counts up to cand_off[i + 1] here ... */
            if (lw->cand[t] >= 0)
                lw->cand_slot[lw->cand_off[lw->cand[t]]++] = t;
        for (int32_t i = nr; i > 0; i--) /* ... and back */
            lw->cand_off[i] = lw->cand_off[i - 1];
        lw->cand_off[0] = 0;
    }
    for (int32_t x = 0; x < ns; x++) {
        lw->first[x] = lw->last[x] = -1;
        lw->pos[x] = -1;
    }
    for (int32_t i = 0; i < nr; i++) {
        sched_access acc[SCHED_MAX_ACCESSES];
        int na = sched_record_accesses(p, &p->records[i], 0, acc);
        for (int k = 0; k < na; k++) {
            int32_t x = acc[k].slot;
            if (lw->first[x] < 0)
                lw->first[x] = i;
            lw->last[x] = i;
        }
    }
    sched_min_reach(p, succ, lw->minreach);
    /* the weights: 64^d for the d loops around the record (sched_plan_cost) */
    {
        int32_t *depth = lw->cover;
        for (int32_t r = 0; r < nr; r++) {
            int32_t n = sched_successors(p, r, succ);
            for (int32_t k = 0; k < n; k++)
                if (succ[k] <= r) {
                    depth[succ[k]]++;
                    depth[r + 1]--;
                }
        }
        for (int32_t i = 1; i < nr; i++)
            depth[i] += depth[i - 1];
        for (int32_t i = 0; i < nr; i++)
            lw->weight[i] = pow(64.0, depth[i] < 8 ? depth[i] : 8);
    }
    return 1;
}

/* Merges entries (d[k], v[k]) and `dead` into pending state `to` (lw->pos all -1 on entry and
 * exit); sets *ch when anything grew. -1 when memory runs out. */
static int sched_lw_merge(sched_lw *lw, sched_pending *to, const int32_t *d, const uint8_t *v, int32_t n,
                          uint8_t dead, int *ch)
{
    int rc = 0;
    for (int32_t m = 0; m < to->n; m++)
        lw->pos[to->d[m]] = m;
    for (int32_t k = 0; k < n && rc == 0; k++) {
        int32_t at = lw->pos[d[k]];
        if (at >= 0) {
            if ((uint8_t)(to->v[at] | v[k]) != to->v[at]) {
                to->v[at] |= v[k];
                *ch = 1;
            }
        } else if (sched_pending_put(to, d[k], v[k]) != 0) {
            rc = -1;
        } else {
            lw->pos[d[k]] = to->n - 1;
            *ch = 1;
        }
    }
    if (dead && !to->dead) {
        to->dead = 1;
        *ch = 1;
    }
    for (int32_t m = 0; m < to->n; m++)
        lw->pos[to->d[m]] = -1;
    return rc;
}

/* Is pending state `in` the state of snapshot q? */
static int sched_lw_same(sched_lw *lw, const sched_pending *in, int32_t q)
{
    const sched_lw_snap *sn = &lw->snaps[q];
    int same = in->n == sn->n && in->dead == sn->dead;
    if (!same)
        return 0;
    for (int32_t k = 0; k < in->n; k++)
        lw->pos[in->d[k]] = k;
    for (int32_t k = 0; k < sn->n && same; k++) {
        int32_t at = lw->pos[lw->pool_d[sn->off + k]];
        same = at >= 0 && in->v[at] == lw->pool_v[sn->off + k];
    }
    for (int32_t k = 0; k < in->n; k++)
        lw->pos[in->d[k]] = -1;
    return same;
}

/* Saves `in` as cut i's entry state from sweep k on, in the lists head/tail (the plan's
 * snap_head/snap_tail, or a trial's tmp_head/tmp_tail). -1 when memory runs out. */
static int sched_lw_save(sched_lw *lw, int32_t *head, int32_t *tail, int32_t i, int32_t k, const sched_pending *in)
{
    if (lw->nsnaps == lw->capsnaps) {
        int32_t cap = lw->capsnaps * 2 + 16;
        sched_lw_snap *g = (sched_lw_snap *)realloc(lw->snaps, sizeof(sched_lw_snap) * (size_t)cap);
        if (!g)
            return -1;
        lw->snaps = g;
        lw->capsnaps = cap;
    }
    if (lw->npool + in->n > lw->cappool) {
        int64_t cap = (lw->cappool + in->n) * 2 + 64;
        int32_t *gd = (int32_t *)realloc(lw->pool_d, sizeof(int32_t) * (size_t)cap);
        if (!gd)
            return -1;
        lw->pool_d = gd;
        uint8_t *gv = (uint8_t *)realloc(lw->pool_v, (size_t)cap);
        if (!gv)
            return -1;
        lw->pool_v = gv;
        lw->cappool = cap;
    }
    sched_lw_snap *sn = &lw->snaps[lw->nsnaps];
    sn->sweep = k;
    sn->next = -1;
    sn->off = lw->npool;
    sn->n = in->n;
    sn->dead = in->dead;
    if (in->n > 0) { /* (an empty state may have no arrays yet) */
        memcpy(lw->pool_d + lw->npool, in->d, sizeof(int32_t) * (size_t)in->n);
        memcpy(lw->pool_v + lw->npool, in->v, (size_t)in->n);
        lw->npool += in->n;
    }
    if (tail[i] >= 0)
        lw->snaps[tail[i]].next = lw->nsnaps;
    else
        head[i] = lw->nsnaps;
    tail[i] = lw->nsnaps++;
    return 0;
}

/* Empties the walk's states of [a, e]. */
static void sched_lw_clean(sched_lw *lw, int32_t a, int32_t e, int32_t nr)
{
    for (int32_t i = a; i <= e && i <= nr; i++) {
        lw->st[i].n = 0;
        lw->st[i].dead = 0;
    }
    sched_cur_clear(&lw->cur);
}

/* Sweeps [a, e) as sched_flow does, with slot s shared too (-1: none): `base`, the plan's own walk
 * from the start to the end, saving every cut's entry states; else a trial, from the plan's
 * entry states at cut a, that must leave the plan's at cut e, saving the entry states of the
 * cuts in between in tmp_head/tmp_tail (emptied for them before). Leaves the walk's flags in
 * lw->flags and its final entry states in lw->st (sched_lw_clean empties them). Returns 1 when
 * walked, 0 when e's states are not the plan's or an edge leaves [a, e], -1 when memory runs
 * out. */
static int sched_lw_walk(const cfx_prog *p, const sched_plan *plan, sched_lw *lw, int32_t a, int32_t e,
                         int32_t s, int base, int32_t *succ)
{
    int32_t nr = p->nrecords;
    sched_cur *cur = &lw->cur;
    int32_t in_at = base ? -1 : lw->snap_head[a];
    int32_t last_in = base || lw->snap_tail[a] < 0 ? 0 : lw->snaps[lw->snap_tail[a]].sweep;
    int32_t at_e = base || e >= nr ? -1 : lw->snap_head[e];
    int check_e = !base && e < nr && !(lw->flags0[e] & SCHED_F_REGION_EXIT);
    int32_t *head = base ? lw->snap_head : lw->tmp_head, *tail = base ? lw->snap_tail : lw->tmp_tail;
    int32_t k;
    if (check_e && at_e < 0)
        return 0;
    for (int32_t i = a; i < e; i++)
        lw->flags[i] = sched_trial_flags0(p, lw->flags0, i, s);
    for (k = 1;; k++) {
        int changed = 0;
        if (!base) {
            /* the plan's entry state at a in sweep k */
            while (in_at >= 0 && lw->snaps[in_at].next >= 0 && lw->snaps[lw->snaps[in_at].next].sweep <= k)
                in_at = lw->snaps[in_at].next;
            if (in_at >= 0) {
                const sched_lw_snap *sn = &lw->snaps[in_at];
                int ch = 0;
                if (sched_lw_merge(lw, &lw->st[a], lw->pool_d + sn->off, lw->pool_v + sn->off, sn->n, sn->dead,
                                   &ch) != 0)
                    return -1;
            }
        }
        for (int32_t i = a; i < e; i++) {
            sched_pending *in = &lw->st[i];
            if (lw->flags0[i] & SCHED_F_ONE_BLOCK)
                continue; /* inside a region: nothing pending across blocks */
            if (lw->flags0[i] & SCHED_F_REGION_EXIT) {
                in->n = 0;
                in->dead = 0;
            }
            if (lw->cut[i] && (base || i > a) && (tail[i] < 0 || !sched_lw_same(lw, in, tail[i])) &&
                sched_lw_save(lw, head, tail, i, k, in) != 0)
                return -1;
            sched_cur_clear(cur);
            for (int32_t m = 0; m < in->n; m++)
                sched_cur_or(cur, in->d[m], in->v[m]);
            cur->dead = in->dead;
            uint8_t f = sched_walk_record(p, plan, lw->flags0, lw->shared, i, lw->flags[i], s, cur);
            lw->flags[i] = f;
            int32_t nsucc = sched_successors(p, i, succ);
            for (int32_t q = 0; q < nsucc; q++) {
                int32_t x = succ[q];
                int ch = 0;
                if (x < 0 || x >= nr)
                    continue;
                if (x < a || x > e)
                    return 0; /* not a stretch between cuts (cannot happen) */
                sched_pending *to = &lw->st[x];
                for (int32_t m = 0; m < to->n; m++)
                    lw->pos[to->d[m]] = m;
                for (int32_t m = 0; m < cur->ndirty; m++) {
                    int32_t d = cur->dirty[m], at;
                    uint8_t v = cur->bits[d];
                    if (!v)
                        continue;
                    if (lw->last[d] < lw->minreach[x]) {
                        ch |= !to->dead;
                        to->dead = 1;
                        continue;
                    }
                    at = lw->pos[d];
                    if (at >= 0) {
                        if ((uint8_t)(to->v[at] | v) != to->v[at]) {
                            to->v[at] |= v;
                            ch = 1;
                        }
                        continue;
                    }
                    if (sched_pending_put(to, d, v) != 0) {
                        for (int32_t m2 = 0; m2 < to->n; m2++)
                            lw->pos[to->d[m2]] = -1;
                        return -1;
                    }
                    lw->pos[d] = to->n - 1;
                    ch = 1;
                }
                if (cur->dead && !to->dead) {
                    to->dead = 1;
                    ch = 1;
                }
                for (int32_t m = 0; m < to->n; m++)
                    lw->pos[to->d[m]] = -1;
                if (ch && x <= i)
                    changed = 1;
            }
        }
        if (check_e) {
            /* the plan's entry state at e in sweep k */
            while (lw->snaps[at_e].next >= 0 && lw->snaps[lw->snaps[at_e].next].sweep <= k)
                at_e = lw->snaps[at_e].next;
            if (lw->snaps[at_e].sweep > k || !sched_lw_same(lw, &lw->st[e], at_e))
                return 0;
        }
        if (!changed && k >= last_in)
            break;
    }
    if (check_e && lw->snaps[lw->snap_tail[e]].sweep > k)
        return 0; /* the plan's state at e changed later */
    for (int32_t h = a; h < e; h++) /* entered with anything pending: sched_flow's rule */
        if ((lw->flags0[h] & SCHED_F_REGION_ENTRY) && (lw->st[h].n > 0 || lw->st[h].dead))
            lw->flags[h] |= SCHED_F_ENTRY_BARRIER;
    return 1;
}

/* Does a tensor that may alternate (lw->cand, not in rep, s counting as not) whose TICK is in
 * [a, e) have bits pending at its TICK in the walk's states? 1 if one has, or if s itself may
 * alternate at a TICK outside [a, e). */
static int sched_lw_live(sched_lw *lw, const uint8_t *rep, int32_t s, int32_t a, int32_t e)
{
    int live = 0;
    if (s >= 0 && lw->cand[s] >= 0 && (lw->cand[s] < a || lw->cand[s] >= e))
        return 1;
    for (int32_t tick = a; tick < e && !live; tick++) {
        const sched_pending *in = &lw->st[tick];
        if (lw->cand_off[tick] == lw->cand_off[tick + 1] || (lw->flags0[tick] & SCHED_F_ONE_BLOCK))
            continue; /* sched_flow looks at no TICK inside a region */
        for (int32_t m = 0; m < in->n; m++)
            lw->pos[in->d[m]] = m;
        for (int32_t k = lw->cand_off[tick]; k < lw->cand_off[tick + 1] && !live; k++) {
            int32_t t = lw->cand_slot[k];
            live = (!rep[t] || t == s) && lw->pos[t] >= 0 && in->v[lw->pos[t]];
        }
        for (int32_t m = 0; m < in->n; m++)
            lw->pos[in->d[m]] = -1;
    }
    return live;
}

/* What record i's barriers under flags f cost (sched_plan_cost's count). */
static double sched_lw_cost(const sched_plan *plan, const sched_lw *lw, int32_t i, unsigned f)
{
    if (plan->batch_head[i] >= 0)
        return 0;
    int barriers = ((f & SCHED_F_BARRIER_BEFORE) && !(f & SCHED_F_ONE_BLOCK)) + ((f & SCHED_F_ENTRY_BARRIER) != 0) +
                   ((f & SCHED_F_COMBINE) && !(f & SCHED_F_ONE_BLOCK)) + ((f & SCHED_F_REGION_EXIT) != 0);
    return barriers * lw->weight[i];
}

/* Sets lw up for `plan`, built for opts with the replicas `rep`: its flags before the flow (one
 * more build), its shared slots, its cuts, and its entry states at the cuts, walked and checked
 * against the plan. Returns 1 when trials may be walked, 0 when not, -1 when memory runs out. */
static int sched_lw_base(const cfx_prog *p, const sched_opts *opts, const uint8_t *rep, const sched_plan *plan,
                         sched_lw *lw, int32_t *succ, char *err, size_t errlen)
{
    int32_t nr = p->nrecords, ns = p->nslots;
    sched_plan tmp;
    int same = 1, rc;
    if (plan->naheads > 0 || plan->nalternates > 0)
        return 0;
    if (sched_plan_build_flow(p, opts, rep, NULL, &tmp, NULL, lw->flags0, err, errlen) != 0)
        return -1;
    for (int32_t i = 0; i < nr && same; i++)
        same = tmp.flags[i] == plan->flags[i] && tmp.batch_head[i] == plan->batch_head[i] &&
               tmp.batch_next[i] == plan->batch_next[i];
    for (int32_t x = 0; x < ns && same; x++)
        same = tmp.priv_offset[x] == plan->priv_offset[x];
    sched_plan_free(&tmp);
    if (!same)
        return 0;
    for (int32_t x = 0; x < ns; x++)
        lw->shared[x] = plan->priv_offset[x] < 0 && p->slots[x].kind != SLOT_CONST;
    /* the cuts: no edge crosses the gap before i but i - 1's into i, none lands on i from i or
     * after, i is outside the regions */
    memset(lw->cover, 0, sizeof(int32_t) * ((size_t)nr + 2));
    for (int32_t u = 0; u < nr; u++) {
        int32_t n = sched_successors(p, u, succ);
        for (int32_t k = 0; k < n; k++) {
            int32_t v = succ[k];
            if (v < 0 || v >= nr || v == u + 1)
                continue;
            if (v > u) { /* gaps u + 1 .. v */
                lw->cover[u + 1]++;
                lw->cover[v + 1]--;
            } else { /* gaps v .. u (v itself: landed on from behind) */
                lw->cover[v]++;
                lw->cover[u + 1]--;
            }
        }
    }
    for (int32_t i = 0, c = 0; i <= nr; i++) {
        c += lw->cover[i];
        lw->cut[i] = i == nr || (c == 0 && !(lw->flags0[i] & SCHED_F_ONE_BLOCK));
        lw->snap_head[i] = lw->snap_tail[i] = -1;
    }
    lw->nsnaps = 0;
    lw->npool = 0;
    rc = sched_lw_walk(p, plan, lw, 0, nr, -1, 1, succ);
    for (int32_t i = 0; rc > 0 && i < nr; i++)
        if (lw->flags[i] != plan->flags[i])
            rc = 0;
    if (rc > 0 && lw->cand) {
        /* no product computed ahead, and no tensor that may alternate live, in the plan */
        for (int32_t w = 0; w < nr && rc > 0; w++)
            if (lw->cand[ns + w] >= 0 && !rep[p->records[w].a])
                rc = 0;
        if (rc > 0 && sched_lw_live(lw, rep, -1, 0, nr))
            rc = 0;
    }
    sched_lw_clean(lw, 0, nr, nr);
    return rc;
}

/* The trial without replica s, walked (see above): 1 when it costs more than the plan (the
 * replica stays), 0 when the walk cannot tell (build it whole), -1 when memory runs out. */
static int sched_lw_trial(const cfx_prog *p, const sched_plan *plan, sched_lw *lw, const uint8_t *rep, int32_t s,
                          double best, int32_t *succ)
{
    int32_t nr = p->nrecords, a, e;
    int rc;
    lw->twalked = 0;
    lw->tsnaps0 = lw->nsnaps;
    lw->tpool0 = lw->npool;
    if (lw->first[s] < 0)
        return 0;
    if (lw->cand && lw->ahead_into[s])
        return 0; /* a product may be computed ahead into s */
    for (a = lw->first[s]; a > 0 && !lw->cut[a]; a--)
        ;
    if (!lw->cut[a])
        return 0;
    for (e = lw->last[s] + 1; e < nr && !lw->cut[e]; e++)
        ;
    for (int tries = 0;; tries++) {
        for (int32_t i = a; i <= e && i <= nr; i++)
            lw->tmp_head[i] = lw->tmp_tail[i] = -1;
        lw->nsnaps = lw->tsnaps0;
        lw->npool = lw->tpool0;
        rc = sched_lw_walk(p, plan, lw, a, e, s, 0, succ);
        if (rc != 0)
            break;
        sched_lw_clean(lw, a, e, nr);
        if (e >= nr)
            return 0;
        /* on to a cut twice as far (every walk together at most about twice the last), then
         * to the end, where nothing is compared */
        int64_t far = (int64_t)a + 2 * ((int64_t)e - a) + 1;
        if (tries >= 3 || far >= nr)
            e = nr;
        else
            for (e = (int32_t)far; e < nr && !lw->cut[e]; e++)
                ;
    }
    if (rc < 0)
        return -1;
    lw->twalked = 1;
    lw->ta = a;
    lw->te = e;
    lw->tlive = lw->cand && sched_lw_live(lw, rep, s, a, e);
    double diff = 0, wmax = 0;
    for (int32_t i = a; i < e; i++) {
        diff += sched_lw_cost(plan, lw, i, lw->flags[i]) - sched_lw_cost(plan, lw, i, plan->flags[i]);
        wmax = lw->weight[i] > wmax ? lw->weight[i] : wmax;
    }
    /* every sum exact (integers below 2^52), so the whole build's cost is best + diff */
    rc = diff > 0 && best < 4503599627370496.0 && wmax * 4.0 * (double)nr < 4503599627370496.0 && !lw->tlive;
    sched_lw_clean(lw, a, e, nr);
    if (rc) { /* not taken: its snapshots go */
        lw->twalked = 0;
        lw->nsnaps = lw->tsnaps0;
        lw->npool = lw->tpool0;
    }
    return rc;
}

/* After the trial without replica s was taken: where it was walked (lw->twalked), and the whole
 * build `next` set the flags the walk did in [ta, te) and the plan's `prev` elsewhere, lw becomes
 * `next`'s (its flags before the flow, shared slots and snapshots change only there) and 1 is
 * returned; else 0 (sched_lw_base must start again), and the trial's snapshots go. */
static int sched_lw_take(const cfx_prog *p, const sched_plan *prev, const sched_plan *next, sched_lw *lw,
                         int32_t s)
{
    int32_t nr = p->nrecords;
    int ok = lw->twalked && !lw->tlive && next->nalternates == 0 && next->naheads == 0;
    for (int32_t i = 0; ok && i < nr; i++)
        ok = next->flags[i] == (i >= lw->ta && i < lw->te ? lw->flags[i] : prev->flags[i]) &&
             next->batch_head[i] == prev->batch_head[i] && next->batch_next[i] == prev->batch_next[i];
    for (int32_t x = 0; ok && x < p->nslots; x++)
        ok = (next->priv_offset[x] < 0 && p->slots[x].kind != SLOT_CONST) == (lw->shared[x] || x == s);
    if (!ok) {
        if (lw->twalked) {
            lw->nsnaps = lw->tsnaps0;
            lw->npool = lw->tpool0;
        }
        lw->twalked = 0;
        return 0;
    }
    for (int32_t i = lw->ta; i < lw->te; i++) {
        lw->flags0[i] = sched_trial_flags0(p, lw->flags0, i, s);
        if (i > lw->ta && lw->cut[i]) {
            lw->snap_head[i] = lw->tmp_head[i];
            lw->snap_tail[i] = lw->tmp_tail[i];
        }
    }
    lw->shared[s] = 1;
    lw->twalked = 0;
    return 1;
}

/* Builds the plan of a validated program for opts (NULL: no product ends the launch), its
 * replicas chosen so that they cost no barrier: the candidates of sched_pick_replicas, then
 * each dropped again where the plan without it costs no more (sched_plan_cost), so a replica
 * stays only where it saves barriers. Returns 0, or -1 with a reason in err when memory runs
 * out. */
int sched_plan_build_opts(const cfx_prog *p, const sched_opts *opts, sched_plan *plan,
                          char *err, size_t errlen)
{
    uint8_t *rep = (uint8_t *)calloc((size_t)p->nslots + 1, 1);
    sched_plan trial;
    int rc;
    if (!rep) {
        snprintf(err, errlen, "out of memory in the scheduler's analysis");
        return -1;
    }
    int32_t n = sched_pick_replicas(p, opts, rep);
    /* a program without loops walks its trials (sched_lf_walk) where it can */
    sched_lf lf;
    int32_t *succ = (int32_t *)malloc(sizeof(int32_t) * ((size_t)p->ntable + 2));
    uint8_t *bigred = (uint8_t *)calloc((size_t)p->nslots + 1, 1);
    int walk = !succ || !bigred ? -1 : n > 0 ? sched_lf_init(p, &lf, succ) : (memset(&lf, 0, sizeof lf), 0);
    /* ... and one with loops walks them (sched_lw_walk) where it can */
    sched_lw lw;
    int lwalk = 0;
    memset(&lw, 0, sizeof lw);
    if (walk == 0 && n > 0)
        lwalk = sched_lw_init(p, opts, &lw, succ);
    if (walk < 0 || lwalk < 0) {
        rc = -1;
        snprintf(err, errlen, "out of memory in the scheduler's analysis");
        goto done;
    }
    rc = walk ? sched_plan_build_flow(p, opts, rep, NULL, plan, NULL, lf.flags0, err, errlen)
              : sched_plan_build_rep(p, opts, rep, plan, err, errlen);
    if (rc == 0 && walk)
        walk = sched_lf_base(p, plan, &lf, succ);
    if (rc == 0 && lwalk)
        lwalk = sched_lw_base(p, opts, rep, plan, &lw, succ, err, errlen);
    if (lwalk < 0) {
        rc = -1;
        snprintf(err, errlen, "out of memory in the scheduler's analysis");
    }
    for (int32_t i = 0; (walk > 0 || lwalk > 0) && i < p->nrecords; i++) {
        /* the reductions whose combine hangs on a replica: their trials are built whole */
        const cfx_record *r = &p->records[i];
        if ((r->kind == REC_REDUCE || r->kind == REC_DOT) && sched_domain(r, p->slots) > SCHED_REDUNDANT_REDUCE_MAX) {
            bigred[r->b] = 1;
            if (r->kind == REC_DOT)
                bigred[r->c] = 1;
        }
    }
    /* one analysis per candidate: at most SCHED_REPLICAS_BYTES / 16 of them, whatever the
     * program's size */
    if (rc == 0 && n > 0 && walk >= 0) {
        double best = sched_plan_cost(p, plan);
        for (int32_t s = 0; s < p->nslots && rc == 0; s++) {
            if (!rep[s])
                continue;
            if (walk > 0 && lf.first[s] >= 0 && !bigred[s]) {
                int32_t a = lf.first[s];
                int64_t count;
                while (!lf.cut[a])
                    a--;
                int32_t end = sched_lf_walk(p, plan, &lf, a, s, succ, &count);
                if (end < 0) {
                    walk = -1;
                    break;
                }
                if (best + (double)(count - (lf.bprefix[end] - lf.bprefix[a])) > best)
                    continue; /* the trial costs more: the replica stays */
            }
            if (lwalk > 0 && !bigred[s]) {
                int more = sched_lw_trial(p, plan, &lw, rep, s, best, succ);
                if (more < 0) {
                    walk = -1;
                    break;
                }
                if (more)
                    continue; /* the trial costs more: the replica stays */
            }
            rep[s] = 0;
            rc = walk ? sched_plan_build_flow(p, opts, rep, NULL, &trial, NULL, lf.flags0 + p->nrecords + 1, err, errlen)
                      : sched_plan_build_rep(p, opts, rep, &trial, err, errlen);
            if (rc != 0)
                break;
            double c = sched_plan_cost(p, &trial);
            if (c <= best) {
                int took = lwalk > 0 && sched_lw_take(p, plan, &trial, &lw, s);
                best = c;
                sched_plan_free(plan);
                *plan = trial;
                if (walk) {
                    memcpy(lf.flags0, lf.flags0 + p->nrecords + 1, (size_t)p->nrecords);
                    walk = sched_lf_base(p, plan, &lf, succ);
                }
                if (lwalk > 0 && !took) {
                    lwalk = sched_lw_base(p, opts, rep, plan, &lw, succ, err, errlen);
                    if (lwalk < 0) {
                        rc = -1;
                        snprintf(err, errlen, "out of memory in the scheduler's analysis");
                        break;
                    }
                }
            } else {
                rep[s] = 1;
                sched_plan_free(&trial);
                if (lwalk > 0 && lw.twalked) { /* the trial's snapshots go */
                    lw.nsnaps = lw.tsnaps0;
                    lw.npool = lw.tpool0;
                    lw.twalked = 0;
                }
            }
        }
    }
    if (walk < 0 && rc == 0) {
        rc = -1;
        snprintf(err, errlen, "out of memory in the scheduler's analysis");
    }
    if (rc != 0 && n > 0)
        sched_plan_free(plan);
done:
    if (n > 0)
        sched_lf_free(&lf, p->nrecords);
    sched_lw_free(&lw, p->nrecords);
    free(succ);
    free(bigred);
    free(rep);
    return rc;
}

/* ---- the L2 window ---------------------------------------------------------------------------
 * A tensor that a loop reads whole every iteration and never writes (a product's matrix above
 * all: greedy decoding's 32 MiB of weights, power iteration's 64 MiB) comes from device memory
 * again each iteration unless L2 still holds it, and the loop's own traffic evicts it. The GPU
 * executors ask the device to keep one such tensor in L2's set-aside for persisting lines (an
 * access policy window on the kernel's launch, docs/persistent.md): the one with the most bytes,
 * of at least SCHED_L2_MIN (smaller ones stay in L2 without help). */
#define SCHED_L2_MIN ((int64_t)1 << 20)

/* Does record r read all of slot s each time it runs (an elementwise operand, a reduction's,
 * a product's)? Rows, items and boxes read a part; control and checks read scalars. */
static int sched_reads_all(const cfx_record *r, int32_t s)
{
    const char *f = rec_fields[r->kind];
    int32_t ops[4] = {r->a, r->b, r->c, r->d};
    REC_COUNT_IS(34);
    switch (r->kind) {
    case REC_MATMUL: case REC_BINARY: case REC_DOT: case REC_WHERE: case REC_UNARY: case REC_COPY:
    case REC_CAST: case REC_REDUCE: case REC_TRANSPOSE: case REC_BROADCAST:
    case REC_REDUCE_AXIS: case REC_PERMUTE:
        for (int k = 1; k < 4 && f[k]; k++)
            if (f[k] == 's' && ops[k] == s)
                return 1;
        return 0;
    default:
        return 0;
    }
}

/* The slot to keep in L2, -1 for none (or when memory runs out: the window is only a hint). */
int32_t sched_l2_keep(const cfx_prog *p)
{
    int32_t nr = p->nrecords, best = -1;
    int32_t *succ = (int32_t *)malloc(((size_t)p->ntable + 2) * sizeof *succ);
    int32_t *lastback = (int32_t *)malloc(((size_t)nr + 1) * sizeof *lastback);
    if (!succ || !lastback) {
        free(succ);
        free(lastback);
        return -1;
    }
    sched_back_edges(p, succ, lastback);
    for (int32_t h = 0; h < nr; h++) {
        if (lastback[h] < 0)
            continue;
        for (int32_t i = h; i <= lastback[h]; i++) {
            const cfx_record *r = &p->records[i];
            const char *f = rec_fields[r->kind];
            int32_t ops[4] = {r->a, r->b, r->c, r->d};
            for (int k = 1; k < 4 && f[k]; k++) {
                int32_t s = ops[k];
                if (f[k] != 's' || !sched_reads_all(r, s) || slot_bytes(&p->slots[s]) < SCHED_L2_MIN ||
                    (best >= 0 && slot_bytes(&p->slots[s]) <= slot_bytes(&p->slots[best])))
                    continue;
                int written = 0;
                for (int32_t j = h; j <= lastback[h] && !written; j++)
                    written = sched_writes(p, &p->records[j], s);
                if (!written)
                    best = s;
            }
        }
    }
    free(succ);
    free(lastback);
    return best;
}

/* The plan with no product ending the launch (CALLs still do). */
int sched_plan_build(const cfx_prog *p, sched_plan *plan, char *err, size_t errlen)
{
    return sched_plan_build_opts(p, NULL, plan, err, errlen);
}
