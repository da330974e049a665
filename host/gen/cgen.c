/* cgen.c: the code generator (cgen.h): a validated program as C for the host or as CUDA C for
 * one persistent kernel.
 *
 * Control flow. The records are cut into basic blocks; blocks reachable from the first are
 * numbered in reverse postorder and their dominators computed (Cooper, Harvey and Kennedy's
 * iterative algorithm). A retreating edge whose target does not dominate its source makes the
 * graph irreducible, and the program is emitted as a pc-dispatch loop (`for (;;) switch (pc)`),
 * which runs any program. Otherwise the structure is recovered the way Ramsey's "Beyond
 * Relooper" (ICFP 2022) does it, on the dominator tree: a loop header becomes `for (;;)`, a
 * conditional jump `if`/`else`, a SWITCH `switch`; a block with one forward predecessor is
 * written inline where that predecessor branches to it, and a block where paths merge is
 * written once, after the code of its immediate dominator, under a label. Two changes for C,
 * whose loops run on when their body ends (a Wasm `loop` falls out): a block that a loop exits
 * to is written after the loop's `for`, not inside it, and a branch to the loop's header is a
 * `continue`. A branch to the statement just after the current one writes nothing; to the
 * statement after the innermost `for` or `switch` it is `break`; any other branch to a merge
 * block is a forward `goto` out of nested statements (a `break` with a label, which C lacks).
 * The lowering of `break`, `continue`, `return`, short-circuit `and`/`or` and elif chains
 * gives reducible graphs, so the dispatch loop is a fallback that the tests force on purpose.
 *
 * Values. A one-element slot that is not a constant is a local variable of the generated
 * function (a register), loaded from the arena at the start when it is an input and zero
 * otherwise, and stored to the arena at HALT when it is a result; one-element constants are
 * literals. Tensors stay in the arena and every op on them calls the range functions of
 * kernels/ over the whole output (C) or over this block's share, strided over its threads
 * (CUDA), exactly as the interpreters call them. One-element ops call the scalar functions
 * (k_add_i32 ...), the same bodies.
 *
 * Statuses. TICK, ASSERT, CHECK_INDEX, CHECK_DIVIDE, CHECK_STEP, PRINT and CALL are written
 * where their records are, with the record index as the stop position, so a stopped run
 * reports what cpu_run reports: status, record, detail and the iterations counted so far.
 *
 * The CUDA kernel follows the persistent interpreter's plan (host/gen/plan.h: read its top comment
 * first): every block runs the program, one-element records redundantly in every thread; a split
 * record gives each block its share; a grid barrier goes where the plan puts one; a split
 * reduction combines partials over one barrier; a one-block region runs on block 0 alone while the
 * other blocks wait at its exit, where block 0 publishes its scalars and the others reload them. A
 * region whose records touch no tensor at all runs in every block instead (it has nothing to
 * share), which makes a scalar loop a loop over registers with no barrier of any kind. The device
 * helpers the kernel calls (ck_*) are in device/compiled_kernel.cuh.
 */
#include "cgen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "plan.h"
#include "host/front/source_op.h"
#include "host/util/strbuf.h"
#include "kernels/cfxlimits.h"

/* Poll the cancel flag (CUDA) at every this many TICKs in a loop of scalar records only. */
#define CGEN_SCALAR_POLL_MASK 63

/* ==== names of types and ops ================================================================= */

static const char *ctype(int dt)
{
    switch (dt) {
    case CFX_F32: return "float";
    case CFX_F64: return "double";
    case CFX_I32: return "int32_t";
    case CFX_I64: return "int64_t";
    default: return "uint8_t";
    }
}

static const char *suffix(int dt)
{
    switch (dt) {
    case CFX_F32: return "f32";
    case CFX_F64: return "f64";
    case CFX_I32: return "i32";
    case CFX_I64: return "i64";
    default: return "b";
    }
}

static const char *kdtype(int dt)
{
    switch (dt) {
    case CFX_F32: return "K_F32";
    case CFX_F64: return "K_F64";
    case CFX_I32: return "K_I32";
    case CFX_I64: return "K_I64";
    default: return "K_BOOL";
    }
}

/* The op's name in kernels/ops.h's enum (OP_ADD), which the generated code includes. */
static const char *op_ident(int op)
{
    static const char *const names[OP_COUNT] = {
#define X(name, spelling, arity, cls, infix) "OP_" #name,
        CFX_OPS(X)
#undef X
    };
    return op >= 0 && op < OP_COUNT ? names[op] : "OP_COUNT";
}

/* The stem of the scalar function of an op (k_STEM_SFX), from kernels/elementwise.h's lists,
 * so that the generator offers exactly the functions that exist; NULL if there is none. */
#define CGEN_STEM(o, s, b) case o: return #s;
static const char *binary_stem(int op, int dt)
{
    if (dt == CFX_BOOL) {
        switch (op) { K_BOOL_BINARY_OPS(CGEN_STEM) default: return NULL; }
    }
    if (dt == CFX_F32 || dt == CFX_F64) {
        switch (op) { K_REAL_BINARY_OPS(CGEN_STEM) default: return NULL; }
    }
    switch (op) { K_INT_BINARY_OPS(CGEN_STEM) default: return NULL; }
}

static const char *unary_stem(int op, int dt)
{
    switch (dt) {
    case CFX_BOOL:
        switch (op) { K_BOOL_UNARY_OPS(CGEN_STEM) default: return NULL; }
    case CFX_I32:
    case CFX_I64:
        switch (op) { K_INT_UNARY_OPS(CGEN_STEM) default: return NULL; }
    default:
        switch (op) { K_REAL_UNARY_OPS(CGEN_STEM) default: return NULL; }
    }
}
#undef CGEN_STEM

static int kind_known(int kind)
{
    switch (kind) {
#define X(name) case REC_##name:
        CGEN_KINDS(X)
#undef X
        return 1;
    default:
        return 0;
    }
}

/* ==== the generator's state ================================================================== */

enum { CTX_LOOP, CTX_SWITCH };

/* A C statement a `break` or `continue` can leave: a loop headed by block `head`, or a switch.
 * `next` is the block whose code follows the statement (-1: none). */
typedef struct ctx {
    int kind;
    int32_t head;
    int32_t next;
} ctx;

typedef struct gen {
    const cfx_prog *p;
    const cgen_options *opt;
    int cuda;
    int pass;        /* 1: find the labels in use; 2: write */
    int unfenced;    /* CUDA: a line that may read a tensor was written since the block's last
                      * barrier (see line) */
    strbuf *out;
    cgen_info *info;
    char *err;
    size_t errlen;
    int failed;
    int depth;       /* nesting of do_tree, against CGEN_MAX_DEPTH */
    int too_deep;
    int indent;
    int32_t cur;     /* the record whose code is being written (-1: none), for the barrier counts */

    /* slots */
    uint8_t *local;  /* per slot: held in a local variable */
    uint8_t *rep;    /* per slot (CUDA): a replica of the plan's, in the block's rep_ array ... */
    int32_t *rep_off; /* ... at this byte offset */
    int64_t rep_bytes;
    int64_t *alt_off; /* CUDA: a tensor that alternates by iteration (plan.alt_tick): its second
                       * buffer at this offset of ck_args.alt, -1: none */
    int32_t ahead_out; /* CUDA: the output of the product being written an iteration ahead (its
                        * next iteration's buffer), -1 */
    int32_t *pub;    /* per slot: its place in a publish buffer (CUDA), -1 */
    int32_t nlocal;
    int32_t *tfirst, *tlast; /* per slot: the first and last record that touches it (touches),
                              * INT32_MAX and -1 where none does */
    uint8_t *alt_at;  /* CUDA, per record: some tensor alternates its buffers at this TICK */

    /* blocks: block b holds records [start[b], start[b + 1]) */
    int32_t nb;
    int32_t *start;
    int32_t *blk;    /* per record: the block it is in */
    int32_t *soff, *sv; /* successors of b: sv[soff[b] .. soff[b + 1]), distinct */
    int32_t *poff, *pv; /* predecessors, likewise */
    int32_t *rpo;    /* per block: reverse postorder number, -1 if unreachable */
    int32_t *order;  /* per rpo number: the block */
    int32_t nreach;
    int32_t *idom;
    uint8_t *header; /* a loop header (the target of a back edge) */
    int32_t *loop_of;     /* innermost loop header containing the block, -1 */
    int32_t *loop_parent; /* per header: the next loop out, -1 */
    int32_t *region_end;  /* per region header block: the record after the region, else -1 */
    uint8_t *redundant;   /* per region header block: every block runs it */
    int32_t *parent;      /* where the block is written: -1 for the root */
    uint8_t *follower;    /* written under a label after its parent's statement */
    int32_t *koff, *kids; /* the followers of x: kids[koff[x] .. koff[x + 1]), by rpo */
    int32_t *bodies;      /* headers of loops and regions */
    int32_t nbodies;
    uint8_t *label_used, *top_used; /* per block, found in pass 1 */
    int halt_used, stop_used;
    int loop_tensors; /* per TICK decision (CUDA): poll at every TICK */
    uint8_t *heavy;   /* per loop header: its body works on tensors */

    ctx stack[2 * CGEN_MAX_DEPTH + 8]; /* a loop and a switch at most per level of do_tree */
    int nctx;

    /* CUDA: the interpreter's plan, built for the compiled kernel's options */
    sched_plan plan;
    sched_opts sopts;
    int have_plan;
    int32_t nlaunch; /* records that end the launch (reachable) */

    /* CUDA: tensors a loop keeps in registers (pick_resident): per slot, the elements of the
     * block's share each thread holds (0: not resident) and the loop's header block */
    int32_t *res_k;
    int32_t *res_loop;
    int dispatching; /* the pc-dispatch form is being written: nothing is resident */

    int32_t *ticks_before; /* per record (and the end), the TICKs before it: each TICK's ordinal */
} gen;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void fail(gen *g, const char *fmt, ...)
{
    if (g->failed)
        return;
    g->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->err, g->errlen, fmt, ap);
    va_end(ap);
}

/* ---- writing --------------------------------------------------------------------------------- */

/* The generator says what each line it writes is; nothing is read back from the written text.
 * CUDA keeps two things as it writes: whether the block's threads may have read memory they
 * share since the block's last barrier (`unfenced`, which decides a loop's barrier), and the
 * cost sheet's counts of the record being written (cgen_options: block and grid barriers,
 * trips to memory). The kinds of line:
 * - line: reads nothing the block's threads share: structure (braces, comments, a share's
 *   bounds), declarations, arithmetic on the thread's own registers and literals;
 * - line_reads: may read it (a tensor, the arena, a replica, a publish buffer, the kernel's
 *   arguments), or is a label or a loop's head, where a jump may arrive from below, after
 *   reads; line_reads_if for a line that reads where its operands are in memory (reads_value,
 *   reads_address). A few lines that read nothing are line_reads all the same (the declaration
 *   of an array: acc_, red_, ops_, a resident's registers; the kernel's prologue), which keeps
 *   the barriers the kernels have always had after them;
 * - block_loop: the head of a loop of the block's threads over a tensor's elements, which
 *   writes elements other threads of the block may have just read as scalars: after reads it
 *   gets a block barrier first (block_barrier, BARRIER_WAR);
 * - block_barrier: a __syncthreads, for one of the reasons below;
 * - helper: a call of a helper from helpers[], whose barriers and trips to memory are known. */

enum barrier_why {
    BARRIER_PHASE, /* a loop over tensors ends: its writes before the reads below (a trip to
                    * memory, stamped CK_EV_DONE on the timeline) */
    BARRIER_WAR    /* the reads of the block's threads above, then the writes below */
};

/* The helpers of compiled_kernel.cuh and kernels/ that wait for the block (all of them pass a
 * block barrier), with what one call costs: block barriers (a grid barrier: 2), grid barriers,
 * block reductions (each K_BLOCK_REDUCE_BARRIERS_OF its op, K_BLOCK_REDUCE_BARRIERS for each
 * reduction of a batch), and the trips to memory it ends (a matrix-vector product its own, a
 * combine two: its partials out, then in); beside each, what the line calls. */
enum helper_id { H_SYNC_OR, H_BLOCK_REDUCE, H_GRID_BARRIER, H_COMBINE, H_COMBINE_BATCH, H_MATVEC_ROWS, H_POLL };
static const struct helper_cost {
    int block, grid, reduces, phases;
} helpers[] = {
    [H_SYNC_OR] = {1, 0, 0, 0}, /* __syncthreads_or(...) */
    [H_BLOCK_REDUCE] = {0, 0, 1, 0}, /* k_block_reduce(...) */
    [H_GRID_BARRIER] = {2, 1, 0, 0}, /* ck_grid_barrier(...) */
    [H_COMBINE] = {2, 1, 1, 2}, /* ck_combine(...) */
    [H_COMBINE_BATCH] = {2, 1, 1, 2}, /* ck_combine_batch(...) */
    [H_MATVEC_ROWS] = {1, 0, 0, 1}, /* ck_matvec_rows(...) */
    [H_POLL] = {1, 0, 0, 0}, /* ck_poll(...) */
};

/* One line as it is, indented. */
static void put(gen *g, const char *text)
{
    for (int i = 0; i < g->indent; i++)
        sb_puts(g->out, "    ");
    sb_puts(g->out, text);
    sb_puts(g->out, "\n");
}

/* The cost sheet's counts of the record being written (cgen_options). CUDA: a line that ends
 * a trip to memory is followed by the timeline's stamp of it (CK_EV_DONE), so a traced run and
 * its profile see the time of each. */
static void count(gen *g, int block, int grid, int phases)
{
    int32_t *bb = g->opt->block_barriers, *gb = g->opt->grid_barriers, *ph = g->opt->phases;
    if (bb && gb && g->cur >= 0) {
        bb[g->cur] += block;
        gb[g->cur] += grid;
        if (ph)
            ph[g->cur] += phases;
    }
    if (g->cuda && g->cur >= 0 && phases > 0) { /* one stamp, after the line */
        for (int i = 0; i < g->indent; i++)
            sb_puts(g->out, "    ");
        sb_printf(g->out, "CK_STAMP(a, CK_EV_DONE, %d);\n", (int)g->cur);
    }
}

/* Writes one line of the kind `reads` (1: line_reads) in pass 2. */
static void emit(gen *g, int reads, const char *fmt, va_list ap)
{
    if (g->pass != 2)
        return;
    strbuf t = {0};
    sb_vprintf(&t, fmt, ap);
    if (t.oom)
        fail(g, "out of memory");
    else
        put(g, sb_str(&t));
    if (reads)
        g->unfenced = 1;
    sb_free(&t);
}

#if defined(__GNUC__)
#define CGEN_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CGEN_PRINTF(f, a)
#endif

CGEN_PRINTF(2, 3) static void line(gen *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(g, 0, fmt, ap);
    va_end(ap);
}

CGEN_PRINTF(2, 3) static void line_reads(gen *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(g, 1, fmt, ap);
    va_end(ap);
}

CGEN_PRINTF(3, 4) static void line_reads_if(gen *g, int reads, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(g, reads, fmt, ap);
    va_end(ap);
}

/* A block barrier for `why`. */
static void block_barrier(gen *g, enum barrier_why why)
{
    if (g->pass != 2)
        return;
    put(g, why == BARRIER_WAR ? "__syncthreads(); /* the reads of the block's threads above, then the writes below */"
                              : "__syncthreads();");
    g->unfenced = 0;
    count(g, 1, 0, why == BARRIER_PHASE);
}

/* CUDA: the head of a loop of the block's threads over a tensor's elements; a block barrier
 * before it where the block's threads may have read since the last one (a write after another
 * warp's read, which compute-sanitizer's racecheck reports in a block's replica or in a
 * one-block region, where no grid barrier comes between; a loop after a label, a loop's next
 * iteration or a branch's join, gets one too). */
CGEN_PRINTF(2, 3) static void block_loop(gen *g, const char *fmt, ...)
{
    va_list ap;
    if (g->cuda && g->unfenced)
        block_barrier(g, BARRIER_WAR);
    va_start(ap, fmt);
    emit(g, 0, fmt, ap);
    va_end(ap);
}

/* A call of helper h, written by fmt, in which `n` block reductions of op `op` pass (the kernels'
 * OP_ enum; n 0 where there are none). */
CGEN_PRINTF(5, 6) static void helper(gen *g, enum helper_id h, int op, int n, const char *fmt, ...)
{
    const struct helper_cost *c = &helpers[h];
    va_list ap;
    if (g->pass != 2)
        return;
    va_start(ap, fmt);
    emit(g, 0, fmt, ap);
    va_end(ap);
    g->unfenced = 0;
    count(g, c->block + c->reduces * n * K_BLOCK_REDUCE_BARRIERS_OF(op), c->grid, c->phases);
}

/* The kernels' op of a reduction record (a dot product sums). */
static int reduction_opcode(const cfx_record *q)
{
    return q->kind == REC_DOT ? OP_SUM : q->op;
}

/* ==== control-flow graph ===================================================================== */

static int is_jump(int kind)
{
    return kind == REC_JUMP || kind == REC_JUMP_FALSE || kind == REC_JUMP_TRUE ||
           kind == REC_SWITCH;
}

static int ends_block(int kind)
{
    return is_jump(kind) || kind == REC_HALT;
}

static int add_unique(int32_t *v, int32_t n, int32_t x)
{
    for (int32_t i = 0; i < n; i++)
        if (v[i] == x)
            return n;
    v[n] = x;
    return n + 1;
}

/* The block that control reaches by going to record t: past blocks that are a lone JUMP (the
 * lowering's `continue`, the jump over an else), which have nothing to run, unless the plan
 * puts something there (CUDA). t starts a block, being a target or after a jump. */
static int32_t to_block(const gen *g, int32_t t)
{
    for (int32_t n = 0; n < g->p->nrecords; n++) {
        const cfx_record *r = &g->p->records[t];
        if (r->kind != REC_JUMP || r->a == t || (g->have_plan && g->plan.flags[t]))
            break;
        t = r->a;
    }
    return g->blk[t];
}

/* Blocks, their successors and predecessors. */
static int build_blocks(gen *g)
{
    const cfx_prog *p = g->p;
    int32_t n = p->nrecords;
    uint8_t *lead = calloc((size_t)n + 1, 1);
    int32_t *tmp = malloc(sizeof(int32_t) * ((size_t)p->ntable + 4));
    int rc = -1;
    if (!lead || !tmp)
        goto done;
    lead[0] = 1;
    for (int32_t i = 0; i < n; i++) {
        const cfx_record *r = &p->records[i];
        if (ends_block(r->kind) && i + 1 < n)
            lead[i + 1] = 1;
        int32_t ns = rec_successors(p, i, tmp, p->ntable + 2);
        if (is_jump(r->kind))
            for (int32_t k = 0; k < ns; k++)
                lead[tmp[k]] = 1;
    }
    g->nb = 0;
    for (int32_t i = 0; i < n; i++)
        g->nb += lead[i];
    g->start = malloc(sizeof(int32_t) * ((size_t)g->nb + 1));
    g->blk = malloc(sizeof(int32_t) * (size_t)n);
    g->soff = calloc((size_t)g->nb + 1, sizeof(int32_t));
    g->poff = calloc((size_t)g->nb + 2, sizeof(int32_t));
    if (!g->start || !g->blk || !g->soff || !g->poff)
        goto done;
    for (int32_t i = 0, b = -1; i < n; i++) {
        if (lead[i])
            g->start[++b] = i;
        g->blk[i] = b;
    }
    g->start[g->nb] = n;
    /* successors, distinct, in the order rec_successors gives them */
    int32_t total = 0;
    for (int32_t b = 0; b < g->nb; b++) {
        int32_t last = g->start[b + 1] - 1;
        int32_t ns = rec_successors(p, last, tmp, p->ntable + 2);
        total += ns;
    }
    g->sv = malloc(sizeof(int32_t) * ((size_t)total + 1));
    g->pv = malloc(sizeof(int32_t) * ((size_t)total + 1));
    if (!g->sv || !g->pv)
        goto done;
    int32_t at = 0;
    for (int32_t b = 0; b < g->nb; b++) {
        int32_t last = g->start[b + 1] - 1;
        int32_t ns = rec_successors(p, last, tmp, p->ntable + 2), m = 0;
        g->soff[b] = at;
        for (int32_t k = 0; k < ns; k++)
            m = add_unique(g->sv + at, m, to_block(g, tmp[k]));
        at += m;
    }
    g->soff[g->nb] = at;
    for (int32_t b = 0; b < g->nb; b++)
        for (int32_t k = g->soff[b]; k < g->soff[b + 1]; k++)
            g->poff[g->sv[k] + 1]++;
    for (int32_t b = 0; b < g->nb; b++)
        g->poff[b + 1] += g->poff[b];
    {
        int32_t *fill = calloc((size_t)g->nb + 1, sizeof(int32_t));
        if (!fill)
            goto done;
        for (int32_t b = 0; b < g->nb; b++)
            for (int32_t k = g->soff[b]; k < g->soff[b + 1]; k++) {
                int32_t s = g->sv[k];
                g->pv[g->poff[s] + fill[s]++] = b;
            }
        free(fill);
    }
    rc = 0;
done:
    free(lead);
    free(tmp);
    if (rc != 0)
        fail(g, "out of memory");
    return rc;
}

/* Reverse postorder of the blocks reachable from block 0, by an explicit-stack DFS. */
static int number_blocks(gen *g)
{
    int32_t nb = g->nb;
    int32_t *stack = malloc(sizeof(int32_t) * ((size_t)nb + 1));
    int32_t *next = calloc((size_t)nb + 1, sizeof(int32_t));
    int32_t *post = malloc(sizeof(int32_t) * ((size_t)nb + 1));
    g->rpo = malloc(sizeof(int32_t) * ((size_t)nb + 1));
    g->order = malloc(sizeof(int32_t) * ((size_t)nb + 1));
    if (!stack || !next || !post || !g->rpo || !g->order) {
        free(stack);
        free(next);
        free(post);
        fail(g, "out of memory");
        return -1;
    }
    for (int32_t b = 0; b < nb; b++)
        g->rpo[b] = -1;
    int32_t sp = 0, np = 0;
    stack[sp++] = 0;
    g->rpo[0] = -2; /* on the stack or done */
    while (sp > 0) {
        int32_t b = stack[sp - 1];
        int32_t k = g->soff[b] + next[b];
        if (k < g->soff[b + 1]) {
            next[b]++;
            int32_t s = g->sv[k];
            if (g->rpo[s] == -1) {
                g->rpo[s] = -2;
                stack[sp++] = s;
            }
        } else {
            post[np++] = b;
            sp--;
        }
    }
    g->nreach = np;
    for (int32_t i = 0; i < np; i++) {
        int32_t b = post[np - 1 - i];
        g->rpo[b] = i;
        g->order[i] = b;
    }
    free(stack);
    free(next);
    free(post);
    return 0;
}

static int32_t intersect(const gen *g, int32_t a, int32_t b)
{
    while (a != b) {
        while (g->rpo[a] > g->rpo[b])
            a = g->idom[a];
        while (g->rpo[b] > g->rpo[a])
            b = g->idom[b];
    }
    return a;
}

static int dominates(const gen *g, int32_t a, int32_t b)
{
    while (b != a && b != 0)
        b = g->idom[b];
    return b == a;
}

/* Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm" (2001). */
static int find_dominators(gen *g)
{
    g->idom = malloc(sizeof(int32_t) * ((size_t)g->nb + 1));
    if (!g->idom) {
        fail(g, "out of memory");
        return -1;
    }
    for (int32_t b = 0; b < g->nb; b++)
        g->idom[b] = -1;
    g->idom[0] = 0;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int32_t i = 1; i < g->nreach; i++) {
            int32_t b = g->order[i], d = -1;
            for (int32_t k = g->poff[b]; k < g->poff[b + 1]; k++) {
                int32_t q = g->pv[k];
                if (g->rpo[q] < 0 || g->idom[q] < 0)
                    continue;
                d = d < 0 ? q : intersect(g, q, d);
            }
            if (d != g->idom[b]) {
                g->idom[b] = d;
                changed = 1;
            }
        }
    }
    return 0;
}

static int back_edge(const gen *g, int32_t from, int32_t to)
{
    return g->rpo[to] <= g->rpo[from];
}

/* Loop headers and the loops' bodies (innermost header of each block). Returns 1 if the graph
 * is reducible, 0 if not (a retreating edge into a block that does not dominate its source). */
static int find_loops(gen *g)
{
    int32_t nb = g->nb;
    g->header = calloc((size_t)nb + 1, 1);
    g->loop_of = malloc(sizeof(int32_t) * ((size_t)nb + 1));
    g->loop_parent = malloc(sizeof(int32_t) * ((size_t)nb + 1));
    int32_t *work = malloc(sizeof(int32_t) * ((size_t)nb + 1));
    uint8_t *seen = malloc((size_t)nb + 1);
    int reducible = 1;
    if (!g->header || !g->loop_of || !g->loop_parent || !work || !seen) {
        free(work);
        free(seen);
        fail(g, "out of memory");
        return 0;
    }
    for (int32_t b = 0; b < nb; b++) {
        g->loop_of[b] = -1;
        g->loop_parent[b] = -1;
    }
    for (int32_t i = 0; i < g->nreach; i++) {
        int32_t b = g->order[i];
        for (int32_t k = g->soff[b]; k < g->soff[b + 1]; k++) {
            int32_t s = g->sv[k];
            if (!back_edge(g, b, s))
                continue;
            if (!dominates(g, s, b))
                reducible = 0;
            g->header[s] = 1;
        }
    }
    /* inner loops first: an enclosing header dominates, so it has the lower number */
    for (int32_t i = g->nreach - 1; reducible && i >= 0; i--) {
        int32_t h = g->order[i];
        if (!g->header[h])
            continue;
        memset(seen, 0, (size_t)nb);
        int32_t n = 0;
        seen[h] = 1;
        if (g->loop_of[h] < 0)
            g->loop_of[h] = h;
        for (int32_t k = g->poff[h]; k < g->poff[h + 1]; k++) {
            int32_t q = g->pv[k];
            if (g->rpo[q] >= 0 && back_edge(g, q, h) && !seen[q]) {
                seen[q] = 1;
                work[n++] = q;
            }
        }
        while (n > 0) {
            int32_t x = work[--n];
            if (g->loop_of[x] < 0)
                g->loop_of[x] = h;
            else if (g->header[x] && x != h && g->loop_parent[x] < 0)
                g->loop_parent[x] = h;
            for (int32_t k = g->poff[x]; k < g->poff[x + 1]; k++) {
                int32_t q = g->pv[k];
                if (g->rpo[q] >= 0 && !seen[q]) {
                    seen[q] = 1;
                    work[n++] = q;
                }
            }
        }
    }
    free(work);
    free(seen);
    return reducible;
}

/* ==== the plan (CUDA) ========================================================================= */

static int record_touches_tensor(const gen *g, const cfx_record *r)
{
    for (int32_t k = 0, n = rec_slot_operands(g->p, r); k < n; k++) {
        int32_t s = rec_slot_operand(g->p, r, k);
        if (!g->local[s] && g->p->slots[s].kind != SLOT_CONST)
            return 1;
    }
    return 0;
}

static int region_header(const gen *g, int32_t b)
{
    return g->region_end && g->region_end[b] >= 0;
}

/* Is block b inside the body of header h (a loop's blocks, or a region's records)? */
static int in_body(const gen *g, int32_t b, int32_t h)
{
    if (region_header(g, h))
        return g->start[b] >= g->start[h] && g->start[b] < g->region_end[h];
    for (int32_t x = g->loop_of[b]; x >= 0; x = g->loop_parent[x])
        if (x == h)
            return 1;
    return 0;
}

/* CUDA: the interpreter's plan, which the kernel follows. */
static int build_plan(gen *g)
{
    char why[256];
    if (!g->cuda)
        return 0;
    /* a CALL of a kernel given by its source is written inline, not launched */
    g->sopts = plan_options_compiled(g->opt->launch_product_min);
    if (sched_plan_build_opts(g->p, &g->sopts, &g->plan, why, sizeof why) != 0) {
        fail(g, "%s", why);
        return -1;
    }
    g->have_plan = 1;
    g->alt_off = malloc(sizeof(int64_t) * ((size_t)g->p->nslots + 1));
    if (!g->alt_off) {
        fail(g, "out of memory");
        return -1;
    }
    for (int32_t s = 0; s < g->p->nslots; s++) {
        g->alt_off[s] = -1;
        if (g->plan.alt_tick[s] >= 0) {
            g->alt_off[s] = g->info->alt_bytes;
            g->info->alt_bytes += (slot_bytes(&g->p->slots[s]) + 15) / 16 * 16;
            g->info->alternates++;
        }
    }
    g->info->aheads = g->plan.naheads;
    return 0;
}

/* The plan's regions as blocks, and which regions every block may run. */
static int plan_regions(gen *g)
{
    const cfx_prog *p = g->p;
    g->region_end = malloc(sizeof(int32_t) * ((size_t)g->nb + 1));
    g->redundant = calloc((size_t)g->nb + 1, 1);
    if (!g->region_end || !g->redundant) {
        fail(g, "out of memory");
        return -1;
    }
    for (int32_t b = 0; b < g->nb; b++)
        g->region_end[b] = -1;
    if (!g->have_plan)
        return 0;
    for (int32_t i = 0; i < p->nrecords; i++) {
        if (!(g->plan.flags[i] & SCHED_F_REGION_ENTRY))
            continue;
        int32_t b = g->blk[i];
        if (g->start[b] != i || g->rpo[b] < 0)
            continue; /* an entry is a jump target, so it starts a block; unreachable: moot */
        int32_t end = g->plan.region_exit[i];
        g->region_end[b] = end;
        int only_scalars = 1;
        for (int32_t r = i; r < end; r++)
            if (record_touches_tensor(g, &p->records[r]))
                only_scalars = 0;
        g->redundant[b] = (uint8_t)only_scalars;
    }
    return 0;
}

/* ==== placement: where each block is written ================================================== */

/* Each reachable block gets a parent, under which it is written: its immediate dominator, or,
 * for a block a loop or region exits to, that body's header (the block then goes after the
 * body's statement). A block where paths merge, or one placed after a body, is a follower:
 * written once after its parent's statement, under a label; any other block is written where
 * its one predecessor branches to it. Also the followers' lists, and which loops work on
 * tensors. */
static int place_blocks(gen *g)
{
    int32_t nb = g->nb;
    g->parent = malloc(sizeof(int32_t) * ((size_t)nb + 1));
    g->follower = calloc((size_t)nb + 1, 1);
    g->bodies = malloc(sizeof(int32_t) * ((size_t)nb + 1));
    g->label_used = calloc((size_t)nb + 1, 1);
    g->top_used = calloc((size_t)nb + 1, 1);
    g->heavy = calloc((size_t)nb + 1, 1);
    if (!g->parent || !g->follower || !g->bodies || !g->label_used || !g->top_used || !g->heavy) {
        fail(g, "out of memory");
        return -1;
    }
    g->nbodies = 0;
    for (int32_t i = 0; i < g->nreach; i++) {
        int32_t b = g->order[i];
        if (g->header[b] || region_header(g, b))
            g->bodies[g->nbodies++] = b; /* in rpo order: outer before inner */
    }
    for (int32_t b = 0; b < nb; b++)
        g->parent[b] = -1;
    for (int32_t i = 1; i < g->nreach; i++) {
        int32_t y = g->order[i], d = g->idom[y];
        int32_t fwd = 0;
        for (int32_t k = g->poff[y]; k < g->poff[y + 1]; k++) {
            int32_t q = g->pv[k];
            if (g->rpo[q] >= 0 && !back_edge(g, q, y))
                fwd++;
        }
        g->parent[y] = d;
        g->follower[y] = fwd >= 2;
        /* A block that a loop (or region) exits to is written after that loop's statement:
         * the outermost body that holds its dominator and not the block itself. */
        for (int32_t k = 0; k < g->nbodies; k++) {
            int32_t h = g->bodies[k];
            if (in_body(g, d, h) && !in_body(g, y, h)) {
                g->parent[y] = h;
                g->follower[y] = 1;
                break;
            }
        }
    }
    /* the followers of each block, in reverse postorder: a counting sort over rpo numbers */
    g->koff = calloc((size_t)nb + 2, sizeof(int32_t));
    g->kids = malloc(sizeof(int32_t) * ((size_t)nb + 1));
    int32_t *fill = calloc((size_t)nb + 1, sizeof(int32_t));
    if (!g->koff || !g->kids || !fill) {
        free(fill);
        fail(g, "out of memory");
        return -1;
    }
    for (int32_t i = 1; i < g->nreach; i++) {
        int32_t y = g->order[i];
        if (g->follower[y])
            g->koff[g->parent[y] + 1]++;
    }
    for (int32_t b = 0; b < nb; b++)
        g->koff[b + 1] += g->koff[b];
    for (int32_t i = 1; i < g->nreach; i++) {
        int32_t y = g->order[i];
        if (g->follower[y]) {
            int32_t x = g->parent[y];
            g->kids[g->koff[x] + fill[x]++] = y;
        }
    }
    free(fill);
    /* a loop works on tensors when any record of its body does (CUDA: poll at every TICK) */
    for (int32_t i = 0; i < g->nreach; i++) {
        int32_t b = g->order[i];
        for (int32_t r = g->start[b]; r < g->start[b + 1]; r++) {
            if (!record_touches_tensor(g, &g->p->records[r]))
                continue;
            for (int32_t h = g->loop_of[b]; h >= 0; h = g->loop_parent[h])
                g->heavy[h] = 1;
            break;
        }
    }
    return 0;
}

/* ==== values ================================================================================== */

/* The value of a one-element slot as a C expression of its type: 1 where it reads memory (the
 * arena), 0 where it is a register or a literal. */
static int value(gen *g, strbuf *sb, int32_t s)
{
    const cfx_slot *sl = &g->p->slots[s];
    if (g->local[s]) {
        sb_printf(sb, "s%d", (int)s);
        return 0;
    }
    if (sl->kind == SLOT_CONST && sl->count == 1) {
        const uint8_t *v = g->p->consts + sl->offset;
        switch (sl->dtype) {
        case CFX_I32: {
            int32_t x;
            memcpy(&x, v, sizeof x);
            if (x == INT32_MIN)
                sb_puts(sb, "(-2147483647 - 1)");
            else
                sb_printf(sb, "%d", (int)x);
            return 0;
        }
        case CFX_I64: {
            int64_t x;
            memcpy(&x, v, sizeof x);
            if (x == INT64_MIN)
                sb_puts(sb, "(-9223372036854775807LL - 1)");
            else
                sb_printf(sb, "%lldLL", (long long)x);
            return 0;
        }
        case CFX_BOOL:
            sb_printf(sb, "(uint8_t)%u", (unsigned)v[0]);
            return 0;
        case CFX_F32: {
            float x;
            memcpy(&x, v, sizeof x);
            if (isfinite(x)) {
                sb_printf(sb, "%af", (double)x); /* exact: a hexadecimal literal */
                return 0;
            }
            break;
        }
        case CFX_F64: {
            double x;
            memcpy(&x, v, sizeof x);
            if (isfinite(x)) {
                sb_printf(sb, "%a", x);
                return 0;
            }
            break;
        }
        }
    }
    /* NaN and infinities, and anything else, are read from the arena */
    sb_printf(sb, "(*(const %s *)(arena + %lld))", ctype(sl->dtype), (long long)sl->offset);
    return 1;
}

/* The address of a slot's first element. */
static void address(gen *g, strbuf *sb, int32_t s)
{
    if (g->local[s])
        sb_printf(sb, "(uint8_t *)&s%d", (int)s);
    else if (g->rep && g->rep[s])
        sb_printf(sb, "(rep_ + %d)", (int)g->rep_off[s]);
    else if (g->alt_off && g->alt_off[s] >= 0 && s == g->ahead_out) /* the next iteration's buffer */
        sb_printf(sb, "(par%d_ ? arena + %lld : alt_ + %lld)", (int)g->plan.alt_tick[s],
                  (long long)g->p->slots[s].offset, (long long)g->alt_off[s]);
    else if (g->alt_off && g->alt_off[s] >= 0) /* this iteration's buffer of the two */
        sb_printf(sb, "(par%d_ ? alt_ + %lld : arena + %lld)", (int)g->plan.alt_tick[s], (long long)g->alt_off[s],
                  (long long)g->p->slots[s].offset);
    else
        sb_printf(sb, "(arena + %lld)", (long long)g->p->slots[s].offset);
}

/* CUDA: whether some tensor alternates its buffers at TICK record i. */
static int alternates_at(const gen *g, int32_t i)
{
    return g->alt_at && g->alt_at[i];
}

/* Whether record i is computed an iteration ahead, elsewhere (ahead_products). */
static int computed_ahead(const gen *g, int32_t i)
{
    return g->cuda && g->have_plan && g->plan.ahead_at[i] >= 0;
}

/* Short-lived strings for one emitted line: a ring, so several can be used in one call. */
typedef struct texts {
    strbuf t[6];
    int next;
} texts;

/* Whether V(s) reads memory: a line that uses it is line_reads. */
static int reads_value(gen *g, int32_t s)
{
    strbuf sb = {0};
    int reads = value(g, &sb, s);
    if (sb.oom)
        fail(g, "out of memory");
    sb_free(&sb);
    return reads;
}

/* Whether P(s) addresses memory (the arena, a replica, a second buffer), not a register. */
static int reads_address(const gen *g, int32_t s)
{
    return !g->local[s];
}

static const char *V(gen *g, texts *t, int32_t s)
{
    strbuf *sb = &t->t[t->next++ % 6];
    sb->len = 0;
    if (sb->data)
        sb->data[0] = '\0';
    value(g, sb, s);
    return sb_str(sb);
}

static const char *P(gen *g, texts *t, int32_t s)
{
    strbuf *sb = &t->t[t->next++ % 6];
    sb->len = 0;
    if (sb->data)
        sb->data[0] = '\0';
    address(g, sb, s);
    return sb_str(sb);
}

/* Frees the ring; an expression that ran out of memory fails the generation. */
static void texts_free(gen *g, texts *t)
{
    for (int i = 0; i < 6; i++) {
        if (t->t[i].oom)
            fail(g, "out of memory");
        sb_free(&t->t[i]);
    }
}

/* ==== records ================================================================================= */

/* A stop: status st at record r with the details (C expressions). */
static void stop(gen *g, int st, int32_t r, const char *d0, const char *d1)
{
    if (g->cuda) {
        line(g, "{ if (threadIdx.x == 0) ck_raise(a, %d, %d, %s, %s); goto out_; }", st, (int)r, d0,
             d1);
    } else {
        line(
            g,
            "{ a->status = %d; a->record = %d; a->detail[0] = %s; a->detail[1] = %s; goto stop_; }",
            st, (int)r, d0, d1);
        g->stop_used = 1;
    }
}

/* CUDA: the block's share of `n` items into lo_, hi_, and a loop over it strided by thread.
 * Inside a one-block region the share is block 0's of one. */
static void split_open(gen *g, int32_t r, const char *n)
{
    int one = g->have_plan && (g->plan.flags[r] & SCHED_F_ONE_BLOCK);
    line(g, "{");
    g->indent++;
    line(g, "int64_t lo_, hi_;");
    line(g, "ck_share(%s, %s, %s, &lo_, &hi_);", n, one ? "0" : "blockIdx.x",
         one ? "1" : "gridDim.x");
    block_loop(g, "for (int64_t e_ = lo_ + threadIdx.x; e_ < hi_; e_ += blockDim.x)");
}

static void split_close(gen *g)
{
    g->indent--;
    line(g, "}");
    block_barrier(g, BARRIER_PHASE);
}

static int scalar_record(const gen *g, const cfx_record *r)
{
    for (int32_t k = 0, n = rec_slot_operands(g->p, r); k < n; k++)
        if (g->p->slots[rec_slot_operand(g->p, r, k)].count != 1)
            return 0;
    return 1;
}

/* ---- CALL and the records that end the launch -------------------------------------------- */

/* The operands of a CALL of a kernel given by its source, as its function takes them: the
 * arguments' addresses (const), then the results'. */
static void call_operands(gen *g, const cfx_record *r, strbuf *sb)
{
    const cfx_prog *p = g->p;
    for (int32_t k = 0; k < r->c; k++) {
        int32_t s = p->table[r->b + k];
        sb_printf(sb, "%s(%s%s *)", k ? ", " : "", k < r->d ? "const " : "", sop_ctype(p->slots[s].dtype));
        address(g, sb, s);
    }
}

/* A CALL of a kernel given by its source, inline: its function over all of its results'
 * elements (C, and CUDA where every thread computes one-element results), over the block's
 * share of them strided by thread (CUDA, KERNEL_ELEMENTS), or once by thread 0 of block 0
 * (CUDA, KERNEL_WHOLE with tensor results), as sched_call_domain says. */
static void inline_call(gen *g, int32_t i, const cfx_record *r)
{
    const cfx_prog *p = g->p;
    const char *name = p->strings + p->kernels[r->a];
    const char *src = p->strings + p->kernel_source[r->a];
    int form = prog_kernel_form(p, r->a);
    int64_t n = p->slots[p->table[r->b + r->d]].count;
    int64_t dom = g->cuda ? sched_call_domain(p, r, form) : 0;
    char fn[320], nbuf[32];
    strbuf ops = {0};
    sop_mangle(name, src, fn, sizeof fn);
    call_operands(g, r, &ops);
    int reads = 0; /* some operand is in memory, not in a register */
    for (int32_t k = 0; k < r->c; k++)
        reads |= reads_address(g, p->table[r->b + k]);
    snprintf(nbuf, sizeof nbuf, "%lldLL", (long long)n);
    line(g, "/* record %d: %s, registered by its source, inline */", (int)i, name);
    if (dom == 0) {
        if (form == KERNEL_ELEMENTS)
            line_reads_if(g, reads, "%s(0, %s, %s);", fn, nbuf, sb_str(&ops));
        else
            line_reads_if(g, reads, "%s(%s);", fn, sb_str(&ops));
    } else if (form == KERNEL_ELEMENTS) {
        split_open(g, i, nbuf);
        line_reads_if(g, reads, "    %s(e_, e_ + 1, %s);", fn, sb_str(&ops));
        split_close(g);
    } else {
        line(g, "if (blockIdx.x == 0 && threadIdx.x == 0)");
        line_reads_if(g, reads, "    %s(%s);", fn, sb_str(&ops));
        block_barrier(g, BARRIER_PHASE);
    }
    if (g->pass == 2)
        g->info->inline_calls++;
    if (ops.oom)
        fail(g, "out of memory");
    sb_free(&ops);
}

/* CUDA, at HALT: before block 0 stores the results, a grid barrier where a result is also
 * loaded by every block at the launch's start (a replica, or an input kept in a register), so
 * that no block can start after block 0 has stored and load the values of the run's end
 * instead of its start: nothing on a GPU keeps a block from starting that late where the
 * launch passes no other grid barrier (the stand-in's race detector, tests/race_host.h, found
 * it). A program with records that end the launch needs none: resume_entry's grid barrier
 * already follows every block's loads. */
static void grid_barrier(gen *g, int32_t r);

static void results_after_loads(gen *g)
{
    const cfx_prog *p = g->p;
    if (g->nlaunch > 0)
        return;
    for (int32_t k = 0; k < p->nresults; k++) {
        int32_t s = p->results[k];
        if ((g->rep && g->rep[s]) || (g->local[s] && p->slots[s].kind == SLOT_INPUT)) {
            grid_barrier(g, p->nrecords - 1);
            return;
        }
    }
}

/* CUDA: record i ends the launch (a CALL of a binary kernel, a product for cuBLAS): block 0
 * stores what the next launch reloads (its scalars and replicas: CALL operands among them),
 * thread 0 hands the record over (ck_end_launch), every block ends, and the launch that
 * resumes after the record comes in at the label after it (resume_entry). */
static void end_launch(gen *g, int32_t i)
{
    const cfx_prog *p = g->p;
    const cfx_record *r = &p->records[i];
    if (r->kind == REC_CALL)
        line(g, "/* record %d: CALL of '%s', which the host's side runs: the launch ends here */", (int)i,
             p->strings + p->kernels[r->a]);
    else
        line(g, "/* record %d: a product of %lld multiply-adds, launched (cuBLAS): the launch ends here */", (int)i,
             (long long)sched_product_size(r, p->slots));
    line(g, "if (blockIdx.x == 0) {");
    g->indent++;
    line(g, "if (threadIdx.x == 0) {");
    g->indent++;
    for (int32_t s = 0; s < p->nslots; s++)
        if (g->local[s])
            line_reads(g, "*(%s *)(arena + %lld) = s%d;", ctype(p->slots[s].dtype), (long long)p->slots[s].offset, (int)s);
    g->indent--;
    line(g, "}");
    for (int32_t s = 0; g->rep && s < p->nslots; s++)
        if (g->rep[s])
            line_reads(g, "ck_block_copy(arena + %lld, rep_ + %d, %lld);", (long long)p->slots[s].offset, (int)g->rep_off[s],
                 (long long)slot_bytes(&p->slots[s]));
    g->indent--;
    line(g, "}");
    line(g, "ck_end_launch(a, %d);", (int)i);
    line(g, "goto out_;");
    g->indent--;
    line_reads(g, "resume%d_:;", (int)i);
    g->indent++;
}

/* CUDA: where a launch starts, for a program with records that end the launch: the scalars
 * (and the run's counts) as the launch before left them, unless it is the run's first; a grid
 * barrier, so that no block stores them again for the next launch before every block has
 * loaded them; then on at the record after the one the last launch ended at. Written after
 * every declaration that a jump to a label inside the statements below could skip. */
static void resume_entry(gen *g)
{
    const cfx_prog *p = g->p;
    if (!g->cuda || g->nlaunch == 0)
        return;
    line(g, "/* a launch after one that ended at a record resumes after it */");
    line(g, "{");
    g->indent++;
    line_reads(g, "const int32_t resume_ = *(const volatile int32_t *)&a.sync->resume;");
    line(g, "if (resume_ != 0) {");
    g->indent++;
    line_reads(g, "iters_ = *(const volatile unsigned long long *)&a.state->iterations;");
    line_reads(g, "print_used_ = *(const volatile uint32_t *)&a.sync->print_used;");
    for (int32_t s = 0; s < p->nslots; s++)
        if (g->local[s])
            line_reads(g, "s%d = *(const %s *)(arena + %lld);", (int)s, ctype(p->slots[s].dtype), (long long)p->slots[s].offset);
    g->indent--;
    line(g, "}");
    helper(g, H_GRID_BARRIER, 0, 0, "if (ck_grid_barrier(a, &poll_, resume_ > 0 ? resume_ - 1 : 0))");
    line(g, "    goto out_;");
    line(g, "switch (resume_) {");
    line_reads(g, "case 0: break;");
    for (int32_t i = 0; i < p->nrecords; i++)
        if ((g->plan.flags[i] & SCHED_F_LAUNCH) && g->rpo[g->blk[i]] >= 0)
            line_reads(g, "case %d: goto resume%d_;", (int)i + 1, (int)i);
    /* no such record: the host's state is not this kernel's; stop rather than start again */
    line_reads(g, "default: if (threadIdx.x == 0) ck_raise(a, CK_ERROR, resume_ - 1, -1, -1); goto out_;");
    line(g, "}");
    g->indent--;
    line(g, "}");
}

/* An elementwise range body over n items: C over [0, n), CUDA over the block's share. `fmt`
 * has the range's two ends as %s. An output held in a local (a one-row tensor) is computed
 * whole by every thread, like every other local. */
static void ranged(gen *g, int32_t r, int32_t out, int64_t n, const char *fmt_lo_hi)
{
    char nbuf[32], buf[1024];
    snprintf(nbuf, sizeof nbuf, "%lldLL", (long long)n);
    if (g->cuda && g->rep && g->rep[out]) {
        /* a replica: every block all of it, over its threads */
        block_loop(g, "for (int64_t e_ = threadIdx.x; e_ < %s; e_ += blockDim.x)", nbuf);
        snprintf(buf, sizeof buf, fmt_lo_hi, "e_", "e_ + 1");
        line_reads(g, "    %s;", buf);
        block_barrier(g, BARRIER_PHASE);
    } else if (g->cuda && !g->local[out]) {
        split_open(g, r, nbuf);
        snprintf(buf, sizeof buf, fmt_lo_hi, "e_", "e_ + 1");
        line_reads(g, "    %s;", buf);
        split_close(g);
    } else {
        snprintf(buf, sizeof buf, fmt_lo_hi, "0", nbuf);
        line_reads(g, "%s;", buf);
    }
}

/* A reduction or dot into one element: C over everything; CUDA over the block's threads, merged
 * in a fixed order, or (a split reduction) over the block's share, combined across blocks over
 * one grid barrier, as the interpreter does it. Every thread ends with the result. */
/* The op a reduction record folds with: a dot product's is a sum. */
static const char *reduction_op(const cfx_record *q)
{
    return q->kind == REC_DOT ? "OP_SUM" : op_ident(q->op);
}

/* CUDA: the accumulators acc_[0 .. n) of the split reductions batch[0 .. n), each merged over
 * the block, combined over one grid barrier at the first one's record (ck_combine for one,
 * ck_combine_batch for several), then each one's result. */
static void combine_and_finish(gen *g, const int32_t *batch, int n, texts *t)
{
    const cfx_prog *p = g->p;
    strbuf ops = {0}, dts = {0};
    for (int k = 0; k < n; k++) {
        const cfx_record *q = &p->records[batch[k]];
        sb_printf(&ops, "%s%s", k ? ", " : "", reduction_op(q));
        sb_printf(&dts, "%s%s", k ? ", " : "", kdtype(p->slots[q->b].dtype));
    }
    if (n == 1) {
        helper(g, H_COMBINE, reduction_opcode(&p->records[batch[0]]), 1,
               "if (ck_combine(a, &acc_[0], %s, %s, red_, &combines_, &poll_, %d)) goto out_;", sb_str(&ops),
             sb_str(&dts), (int)batch[0]);
    } else {
        line(g, "{");
        g->indent++;
        line_reads(g, "const int ops_[%d] = {%s}, dts_[%d] = {%s};", n, sb_str(&ops), n, sb_str(&dts));
        helper(g, H_COMBINE_BATCH, OP_SUM, n, /* each reduction of a batch at the full tree's cost */
               "if (ck_combine_batch(a, acc_, ops_, dts_, %d, red_, &combines_, &poll_, %d)) goto out_;", n,
             (int)batch[0]);
        g->indent--;
        line(g, "}");
    }
    for (int k = 0; k < n; k++) {
        const cfx_record *q = &p->records[batch[k]];
        int dt = p->slots[q->b].dtype;
        if (q->kind == REC_DOT)
            line_reads(g, "k_dot_finish(%s, &acc_[%d], %s);", kdtype(dt), k, P(g, t, q->a));
        else
            line_reads(g, "k_reduce_finish(%s, %s, &acc_[%d], %lldLL, %s);", op_ident(q->op), kdtype(dt), k,
                 (long long)p->slots[q->b].count, P(g, t, q->a));
    }
    if (ops.oom || dts.oom)
        fail(g, "out of memory");
    sb_free(&ops);
    sb_free(&dts);
}

/* CUDA: a split reduction with a batch (host/gen/plan.c): each one's fold over the block's share,
 * one combine over one barrier, each one's result. */
static void reduction_batch(gen *g, int32_t i)
{
    const cfx_prog *p = g->p;
    int32_t batch[SCHED_BATCH_MAX], n = 0;
    texts t;
    memset(&t, 0, sizeof t);
    for (int32_t q = i; q >= 0 && n < SCHED_BATCH_MAX; q = g->plan.batch_next[q])
        batch[n++] = q;
    line(g, "{");
    g->indent++;
    line_reads(g, "k_acc acc_[%d];", (int)n);
    for (int k = 0; k < n; k++) {
        const cfx_record *r = &p->records[batch[k]];
        int dt = p->slots[r->b].dtype;
        const char *op = reduction_op(r);
        int64_t cnt = p->slots[r->b].count;
        line(g, "/* record %d%s */", (int)batch[k], k ? ", in the batch" : "");
        line(g, "{");
        g->indent++;
        line(g, "k_acc m_ = k_reduce_init(%s, %s);", op, kdtype(dt));
        line(g, "int64_t lo_, hi_;");
        line(g, "ck_share(%lldLL, blockIdx.x, gridDim.x, &lo_, &hi_);", (long long)cnt);
        block_loop(g, "for (int64_t e_ = lo_ + threadIdx.x; e_ < hi_; e_ += blockDim.x)");
        if (r->kind == REC_DOT)
            line_reads(g, "    k_dot_range(%s, &m_, %s, %s, e_, e_ + 1);", kdtype(dt), P(g, &t, r->b), P(g, &t, r->c));
        else
            line_reads(g, "    k_reduce_range(%s, %s, &m_, %s, e_, e_ + 1);", op, kdtype(dt), P(g, &t, r->b));
        helper(g, H_BLOCK_REDUCE, reduction_opcode(r), 1, "acc_[%d] = k_block_reduce(red_, m_, %s, %s);", k, op, kdtype(dt));
        g->indent--;
        line(g, "}");
    }
    combine_and_finish(g, batch, (int)n, &t);
    g->indent--;
    line(g, "}");
    texts_free(g, &t);
}

static int32_t folded_into(const gen *g, int32_t j);

static void reduction(gen *g, int32_t i, const cfx_record *r, texts *t)
{
    const cfx_prog *p = g->p;
    int32_t prod = folded_into(g, i);
    if (prod >= 0) {
        line(g, "/* record %d: done with the product at record %d */", (int)i, (int)prod);
        return;
    }
    if (g->cuda && g->have_plan && g->plan.batch_head[i] >= 0) {
        line(g, "/* record %d: done in the batch of record %d */", (int)i, (int)g->plan.batch_head[i]);
        return;
    }
    if (g->cuda && g->have_plan && g->plan.batch_next[i] >= 0) {
        reduction_batch(g, i);
        return;
    }
    int dot = r->kind == REC_DOT;
    int dt = p->slots[r->b].dtype;
    int64_t n = p->slots[r->b].count;
    char op[32];
    if (dot)
        snprintf(op, sizeof op, "OP_SUM");
    else
        snprintf(op, sizeof op, "%s", op_ident(r->op));
    const char *A = P(g, t, r->a), *B = P(g, t, r->b), *C = dot ? P(g, t, r->c) : "";
    line(g, "{");
    g->indent++;
    line(g, "k_acc acc_ = k_reduce_init(%s, %s);", op, kdtype(dt));
    if (!g->cuda) {
        if (dot)
            line_reads_if(g, reads_address(g, r->b) || reads_address(g, r->c),
                          "k_dot_range(%s, &acc_, %s, %s, 0, %lldLL);", kdtype(dt), B, C, (long long)n);
        else
            line_reads_if(g, reads_address(g, r->b), "k_reduce_range(%s, %s, &acc_, %s, 0, %lldLL);", op, kdtype(dt), B,
                 (long long)n);
    } else {
        int combine = g->have_plan && (g->plan.flags[i] & SCHED_F_COMBINE) &&
                      !(g->plan.flags[i] & SCHED_F_ONE_BLOCK);
        line(g, "int64_t lo_ = 0, hi_ = %lldLL;", (long long)n);
        if (combine)
            line(g, "ck_share(%lldLL, blockIdx.x, gridDim.x, &lo_, &hi_);", (long long)n);
        block_loop(g, "for (int64_t e_ = lo_ + threadIdx.x; e_ < hi_; e_ += blockDim.x)");
        if (dot)
            line_reads(g, "    k_dot_range(%s, &acc_, %s, %s, e_, e_ + 1);", kdtype(dt), B, C);
        else
            line_reads(g, "    k_reduce_range(%s, %s, &acc_, %s, e_, e_ + 1);", op, kdtype(dt), B);
        helper(g, H_BLOCK_REDUCE, reduction_opcode(r), 1, "acc_ = k_block_reduce(red_, acc_, %s, %s);", op,
               kdtype(dt));
        if (combine) {
            helper(g, H_COMBINE, reduction_opcode(r), 1,
                   "if (ck_combine(a, &acc_, %s, %s, red_, &combines_, &poll_, %d)) goto out_;", op, kdtype(dt),
                   (int)i);
        }
    }
    if (dot)
        line_reads_if(g, reads_address(g, r->a), "k_dot_finish(%s, &acc_, %s);", kdtype(dt), A);
    else
        line_reads_if(g, reads_address(g, r->a), "k_reduce_finish(%s, %s, &acc_, %lldLL, %s);", op, kdtype(dt),
                      (long long)n, A);
    g->indent--;
    line(g, "}");
}

/* CUDA: the grid barrier (every block), or the end of the block when the run stopped. */
static void grid_barrier(gen *g, int32_t r)
{
    helper(g, H_GRID_BARRIER, 0, 0, "if (ck_grid_barrier(a, &poll_, %d)) goto out_;", (int)r); /* it stamps WAIT and PASS */
    if (g->pass == 2)
        g->info->barriers++;
}

static void publish_scalars(gen *g)
{
    const cfx_prog *p = g->p;
    line(g, "if (blockIdx.x == 0 && threadIdx.x == 0) {");
    g->indent++;
    line_reads(g, "uint8_t *pub_ = a.publish + (size_t)(exits_ & 1u) * %lldu;",
         (long long)g->info->publish_bytes);
    line_reads(g, "*(uint64_t *)pub_ = iters_;");
    line_reads(g, "*(uint32_t *)(pub_ + 8) = print_used_;");
    for (int32_t s = 0; s < p->nslots; s++)
        if (g->local[s])
            line_reads(g, "*(%s *)(pub_ + %d) = s%d;", ctype(p->slots[s].dtype), 16 + 8 * g->pub[s],
                 (int)s);
    g->indent--;
    line(g, "}");
    if (g->rep_bytes > 0)
        line_reads(g, "if (blockIdx.x == 0) ck_block_copy(a.publish + (size_t)(exits_ & 1u) * %lldu + %lld, rep_, %lld);",
             (long long)g->info->publish_bytes, (long long)(g->info->publish_bytes - g->rep_bytes),
             (long long)g->rep_bytes);
}

static void reload_scalars(gen *g)
{
    const cfx_prog *p = g->p;
    line(g, "if (blockIdx.x != 0) {");
    g->indent++;
    line_reads(g, "const uint8_t *pub_ = a.publish + (size_t)(exits_ & 1u) * %lldu;",
         (long long)g->info->publish_bytes);
    line_reads(g, "iters_ = *(const volatile uint64_t *)pub_;");
    line_reads(g, "print_used_ = *(const volatile uint32_t *)(pub_ + 8);");
    for (int32_t s = 0; s < p->nslots; s++)
        if (g->local[s])
            line_reads(g, "s%d = *(const volatile %s *)(pub_ + %d);", (int)s, ctype(p->slots[s].dtype),
                 16 + 8 * g->pub[s]);
    if (g->rep_bytes > 0)
        line_reads(g, "ck_block_copy(rep_, pub_ + %lld, %lld);", (long long)(g->info->publish_bytes - g->rep_bytes),
             (long long)g->rep_bytes);
    g->indent--;
    line(g, "}");
    if (g->rep_bytes > 0)
        block_barrier(g, BARRIER_PHASE);
    line(g, "exits_++;");
}

/* The region that ends at record `exit` (its header block), or -1. */
static int32_t region_ending_at(const gen *g, int32_t exit)
{
    if (!g->have_plan || !(g->plan.flags[exit] & SCHED_F_REGION_EXIT))
        return -1;
    for (int32_t b = 0; b < g->nb; b++)
        if (g->region_end[b] == exit)
            return b;
    return -1;
}

/* CUDA: what a block does on arriving at record i that is the exit of a region: block 0
 * publishes its scalars, all wait at a grid barrier, the others reload. After a region that
 * every block ran there is nothing to publish, and a barrier is needed only for what other
 * paths into the exit may have left pending (the plan clears everything there). */
static void region_exit_actions(gen *g, int32_t i)
{
    int32_t h = region_ending_at(g, i);
    if (h < 0 && !(g->have_plan && (g->plan.flags[i] & SCHED_F_REGION_EXIT)))
        return;
    if (h >= 0 && g->redundant[h]) {
        int32_t b = g->blk[i], outside = 0;
        for (int32_t k = g->poff[b]; k < g->poff[b + 1]; k++) {
            int32_t q = g->pv[k];
            if (g->rpo[q] >= 0 && !in_body(g, q, h))
                outside = 1;
        }
        if (outside)
            grid_barrier(g, i);
        return;
    }
    line(g, "/* the exit of the region at record %d */", h >= 0 ? (int)g->start[h] : -1);
    publish_scalars(g);
    grid_barrier(g, i);
    reload_scalars(g);
}

/* ==== fused elementwise loops (CUDA) ==========================================================
 * Consecutive split elementwise records over the same number of elements, with nothing the plan
 * puts between them, run as one loop over the block's share: each thread computes every record
 * at its elements in turn. A thread reads an element of a tensor only where it wrote it (every
 * operand has the loop's count, or one element), so no block barrier is needed between them. A
 * value computed in the loop is read again from a register; a temporary that no record outside
 * the loop touches is never stored. The scalar functions are those k_unary, k_binary and k_where
 * call, so the bits are the same. */

/* Does record i read or write slot s (a slot field, or a CALL's table entry)? */
static int touches(const cfx_prog *p, int32_t i, int32_t s)
{
    const cfx_record *r = &p->records[i];
    for (int32_t k = 0, n = rec_slot_operands(p, r); k < n; k++)
        if (rec_slot_operand(p, r, k) == s)
            return 1;
    return 0;
}

/* The slot operands a fused record reads (after its output, field a). */
static int fused_inputs(const cfx_record *r, int32_t in[3])
{
    const char *f = rec_roles(r->kind);
    const int32_t ops[4] = {r->a, r->b, r->c, r->d};
    int n = 0;
    if (rec_family(r->kind) != REC_FAM_ELEMENTWISE)
        return 0;
    for (int k = 1; k < 4; k++)
        if (f[k] == 's')
            in[n++] = ops[k];
    return n;
}

/* The loop a record's elements run in: FUSE_SPLIT, the block's share of them (a split record),
 * or FUSE_WHOLE, all of them in every block (a replica's); 0 for anything else. */
enum { FUSE_SPLIT = 1, FUSE_WHOLE = 2 };
static int fused_space(const gen *g, int32_t i)
{
    int32_t a = g->p->records[i].a;
    if (g->plan.flags[i] & SCHED_F_SPLIT)
        return FUSE_SPLIT;
    return g->rep && g->rep[a] ? FUSE_WHOLE : 0;
}

/* Can record i be part of a fused loop over n elements (0: take the record's own count)? */
static int64_t fusable(const gen *g, int32_t i, int64_t n)
{
    const cfx_prog *p = g->p;
    const cfx_record *r = &p->records[i];
    const cfx_slot *sl = p->slots;
    int32_t in[3];
    int nin = fused_inputs(r, in);
    if (!g->cuda || !g->have_plan || nin == 0 || !fused_space(g, i) || g->local[r->a])
        return 0;
    if (n == 0)
        n = sl[r->a].count;
    if (sl[r->a].count != n || n < 2 || (r->kind == REC_COPY && r->a == r->b))
        return 0;
    if (r->kind == REC_UNARY && !unary_stem(r->op, r->dtype))
        return 0;
    if (r->kind == REC_BINARY && !binary_stem(r->op, r->dtype))
        return 0;
    for (int k = 0; k < nin; k++) {
        const cfx_slot *o = &sl[in[k]];
        if (!(g->local[in[k]] || (o->kind == SLOT_CONST && o->count == 1) || o->count == n))
            return 0;
    }
    return n;
}

/* The records [i, end) that fuse with record i, within [i, hi): a later one joins when nothing
 * is to be done before it (no barrier, no region's entry or exit) and it shares the count and
 * the one-block-ness of i. */
static int32_t fused_end(const gen *g, int32_t i, int32_t hi)
{
    int64_t n = fusable(g, i, 0);
    unsigned one = g->plan.flags[i] & SCHED_F_ONE_BLOCK;
    int space = fused_space(g, i);
    int32_t j = i + 1;
    const unsigned stops = SCHED_F_BARRIER_BEFORE | SCHED_F_ENTRY_BARRIER | SCHED_F_REGION_ENTRY |
                           SCHED_F_REGION_EXIT | SCHED_F_LAUNCH;
    while (j < hi && !(g->plan.flags[j] & stops) && (g->plan.flags[j] & SCHED_F_ONE_BLOCK) == one &&
           fusable(g, j, n) == n && fused_space(g, j) == space)
        j++;
    return j;
}

/* Can the reduction at record j fold its elements inside the fused loop over n elements that
 * ends before it? Its inputs must have n elements and its elements be the loop's: after a
 * split loop a split reduction (its share is the loop's) or one inside the same one-block
 * region (the whole); after a replica's loop one every block computes whole. */
static int fusable_reduction(const gen *g, int32_t j, int32_t lo, int64_t n)
{
    const cfx_prog *p = g->p;
    const cfx_record *r = &p->records[j];
    unsigned f = g->plan.flags[j], one = g->plan.flags[lo] & SCHED_F_ONE_BLOCK;
    if (r->kind != REC_REDUCE && r->kind != REC_DOT)
        return 0;
    if (f & (SCHED_F_BARRIER_BEFORE | SCHED_F_ENTRY_BARRIER | SCHED_F_REGION_ENTRY | SCHED_F_REGION_EXIT |
             SCHED_F_LAUNCH))
        return 0;
    if (g->plan.batch_next[j] >= 0 || g->plan.batch_head[j] >= 0)
        return 0; /* a batch's reductions are folded together (reduction_batch) */
    if ((f & SCHED_F_ONE_BLOCK) != one)
        return 0;
    if (fused_space(g, lo) == FUSE_SPLIT ? !one && !(f & SCHED_F_COMBINE) : !one && (f & SCHED_F_COMBINE))
        return 0;
    if (p->slots[r->b].count != n || g->local[r->b] || (r->kind == REC_DOT && (p->slots[r->c].count != n ||
                                                                                g->local[r->c])))
        return 0;
    return g->local[r->a];
}

/* Is the output of record w (in [lo, hi)) a temporary no record outside (w, hi) touches? */
static int fused_private(const gen *g, int32_t lo, int32_t hi, int32_t w)
{
    const cfx_prog *p = g->p;
    int32_t s = p->records[w].a;
    (void)lo;
    if (p->slots[s].kind != SLOT_TEMP)
        return 0;
    /* no record before w touches it (w may), none at hi or after */
    return g->tfirst[s] >= w && g->tlast[s] < hi;
}

/* ---- tensors held in registers ---- */

/* A tensor that a loop only reads and writes element by element, each element by the thread
 * that owns it under the block's share (a split elementwise record, which the fused loops
 * write), can live in that thread's registers through the loop: loaded once before the loop,
 * read from registers in every fused loop inside it, and written to both registers and memory
 * (so memory is always current: a stop, a barrier or a read by another record finds it there;
 * the registers only save the loads). collatz's v and steps are such tensors. The kernel must
 * then run with at least the grid the options name, so that a thread's elements fit in its
 * registers (the kernel checks at its start). */
#define CGEN_RESIDENT_MAX_K 8 /* elements of one tensor per thread at most */
#define CGEN_RESIDENT_REGS 32 /* 32-bit registers for all of them, per thread */

/* Elements of slot s's split share each thread holds at most, in the grid the options name
 * (0: no grid named). */
static int resident_k(const gen *g, int32_t s)
{
    int64_t n = g->p->slots[s].count, nb = g->opt->blocks, nt = g->opt->threads;
    if (nb <= 0 || nt <= 0)
        return 0;
    int64_t k = ((n + nb - 1) / nb + nt - 1) / nt;
    return k <= CGEN_RESIDENT_MAX_K ? (int)k : 0;
}

/* Is record i an elementwise record over slot s's elements that a fused loop writes (its
 * thread writes element e_ of the block's share)? */
static int aligned_writer(const gen *g, int32_t i, int32_t s)
{
    int64_t n = g->p->slots[s].count;
    return g->p->records[i].a == s && fusable(g, i, n) == n && fused_space(g, i) == FUSE_SPLIT &&
           !(g->plan.flags[i] & SCHED_F_ONE_BLOCK);
}

/* Is record i in the loop headed by block h? */
static int in_loop(const gen *g, int32_t i, int32_t h)
{
    return g->rpo[g->blk[i]] >= 0 && in_body(g, g->blk[i], h);
}

/* Does record i read slot s as it stood when its block of code began (no record before it in
 * the block writes s): a read a fused loop would load from memory? */
static int reads_on_entry(const gen *g, int32_t i, int32_t s)
{
    const cfx_prog *p = g->p;
    int32_t in[3];
    int kind = p->records[i].kind;
    if ((fused_inputs(&p->records[i], in) == 0 && kind != REC_REDUCE && kind != REC_DOT) || !touches(p, i, s) ||
        (sched_writes(p, &p->records[i], s) && p->records[i].b != s && p->records[i].c != s &&
         p->records[i].d != s))
        return 0; /* not elementwise or a reduction: it reads memory, whatever is resident */
    for (int32_t k = i - 1; k >= g->start[g->blk[i]]; k--)
        if (sched_writes(p, &p->records[k], s))
            return 0;
    return 1;
}

/* Can slot s live in registers through the loop headed by h? Every record anywhere that writes
 * it is an aligned writer (`aligned`, asked once per slot); the loop reads it where a fused loop
 * would load it; no record in the loop ends the launch and no launch resumes inside it (a
 * resumed launch would skip the loads); the loop is not a one-block region's and has no matrix
 * product (whose routine wants every register it can get: with CG's x, r and p held across
 * it, the kernel for 8192 rows needed 128 registers instead of 106, and the H100 ran it 30%
 * slower: docs/persistent.md). `unfit[h]` marks the loops with such a product or launch.
 * Only records from s's first touch to its last can write or read it. */
static int resident_in(const gen *g, int32_t s, int32_t h, const uint8_t *unfit, int aligned)
{
    if ((g->plan.flags[g->start[h]] & SCHED_F_ONE_BLOCK) || unfit[h] || !aligned)
        return 0;
    for (int32_t i = g->tfirst[s]; i <= g->tlast[s]; i++)
        if (in_loop(g, i, h) && reads_on_entry(g, i, s))
            return 1;
    return 0;
}

/* Marks every loop record i is in (a region's loop aside: its entry is a one-block record, which
 * resident_in refuses first), and lists those newly marked in list[*n] where list is given. */
static void mark_loops(const gen *g, int32_t i, uint8_t *mark, int32_t *list, int32_t *n)
{
    if (i < g->p->nrecords && g->rpo[g->blk[i]] >= 0)
        for (int32_t x = g->loop_of[g->blk[i]]; x >= 0; x = g->loop_parent[x])
            if (!mark[x]) {
                mark[x] = 1;
                if (list)
                    list[(*n)++] = x;
            }
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The tensors loops keep in registers: for each slot that can (split, 2 to 8 bytes an
 * element, its thread's elements within CGEN_RESIDENT_MAX_K), the outermost loop it can live
 * in, while the registers last. The loops asked are those around a record that touches the
 * slot (in any other, resident_in finds no read), in block order as before. */
static int pick_resident(gen *g)
{
    const cfx_prog *p = g->p;
    int regs = 0;
    g->res_k = calloc((size_t)p->nslots + 1, sizeof(int32_t));
    g->res_loop = malloc(sizeof(int32_t) * ((size_t)p->nslots + 1));
    uint8_t *unfit = calloc((size_t)g->nb + 1, 1), *around = calloc((size_t)g->nb + 1, 1);
    int32_t *cand = malloc(sizeof(int32_t) * ((size_t)g->nb + 1));
    if (!g->res_k || !g->res_loop || !unfit || !around || !cand) {
        free(unfit);
        free(around);
        free(cand);
        fail(g, "out of memory");
        return -1;
    }
    for (int32_t s = 0; s < p->nslots; s++)
        g->res_loop[s] = -1;
    for (int32_t i = 0; g->cuda && g->have_plan && i < p->nrecords; i++) {
        if (p->records[i].kind == REC_MATMUL)
            mark_loops(g, i, unfit, NULL, NULL);
        if (g->plan.flags[i] & SCHED_F_LAUNCH) {
            mark_loops(g, i, unfit, NULL, NULL);
            mark_loops(g, i + 1, unfit, NULL, NULL);
        }
    }
    for (int32_t s = 0; g->cuda && g->have_plan && s < p->nslots; s++) {
        const cfx_slot *sl = &p->slots[s];
        int k = resident_k(g, s), size = dtype_size(sl->dtype);
        if (k == 0 || sl->kind == SLOT_CONST || g->local[s] || (g->rep && g->rep[s]) || sl->count < 2 ||
            (g->alt_off && g->alt_off[s] >= 0) || regs + k * (size + 3) / 4 > CGEN_RESIDENT_REGS)
            continue;
        int aligned = 1;
        int32_t ncand = 0;
        for (int32_t i = g->tfirst[s]; i <= g->tlast[s]; i++) {
            if (sched_writes(p, &p->records[i], s) && !aligned_writer(g, i, s))
                aligned = 0;
            if (touches(p, i, s))
                mark_loops(g, i, around, cand, &ncand);
        }
        qsort(cand, (size_t)ncand, sizeof *cand, cmp_i32); /* block order, as every loop was asked */
        for (int32_t c = 0; c < ncand; c++)
            around[cand[c]] = 0;
        int32_t best = -1;
        for (int32_t c = 0; c < ncand; c++) {
            int32_t h = cand[c];
            if (g->header[h] && g->rpo[h] >= 0 && (best < 0 || in_body(g, best, h)) &&
                resident_in(g, s, h, unfit, aligned))
                best = h;
        }
        if (best < 0)
            continue;
        g->res_k[s] = k;
        g->res_loop[s] = best;
        regs += k * (size + 3) / 4;
    }
    free(unfit);
    free(around);
    free(cand);
    return 0;
}

/* The elements per thread of the fused loop over [lo, hi) when it runs over registers (some
 * slot it touches is resident in a loop around it), else 0. */
static int resident_loop_k(const gen *g, int32_t lo, int32_t hi, int32_t red)
{
    const cfx_prog *p = g->p;
    if (!g->res_k || g->dispatching || fused_space(g, lo) != FUSE_SPLIT || (g->plan.flags[lo] & SCHED_F_ONE_BLOCK))
        return 0;
    for (int32_t i = lo; i < (red >= 0 ? red + 1 : hi); i++) {
        /* the lowest slot record i touches that is resident in a loop around lo */
        const cfx_record *r = &p->records[i];
        int32_t best = -1;
        for (int32_t k = 0, n = rec_slot_operands(p, r); k < n; k++) {
            int32_t s = rec_slot_operand(p, r, k);
            if (g->res_k[s] && (best < 0 || s < best) && in_loop(g, lo, g->res_loop[s]))
                best = s;
        }
        if (best >= 0)
            return g->res_k[best];
    }
    return 0;
}

/* Before the loop headed by block h: the tensors it keeps in registers, loaded, each thread its
 * elements of the block's share. */
static void resident_loads(gen *g, int32_t h)
{
    const cfx_prog *p = g->p;
    for (int32_t s = 0; g->res_k && !g->dispatching && s < p->nslots; s++) {
        if (g->res_loop[s] != h)
            continue;
        strbuf at = {0};
        address(g, &at, s);
        line(g, "/* s%d in registers through the loop at record %d */", (int)s, (int)g->start[h]);
        line(g, "{");
        g->indent++;
        line(g, "int64_t lo_, hi_;");
        line(g, "ck_share(%lldLL, blockIdx.x, gridDim.x, &lo_, &hi_);", (long long)p->slots[s].count);
        line_reads(g, "for (int j_ = 0; j_ < %d; j_++) { /* each its own elements: no block barrier */", (int)g->res_k[s]);
        line(g, "    const int64_t e_ = lo_ + threadIdx.x + (int64_t)j_ * blockDim.x;");
        line(g, "    if (e_ < hi_)");
        line_reads(g, "        r%d_[j_] = ((const %s *)%s)[e_];", (int)s, ctype(p->slots[s].dtype), sb_str(&at));
        line(g, "}");
        g->indent--;
        line(g, "}");
        if (at.oom)
            fail(g, "out of memory");
        sb_free(&at);
    }
}

/* Is slot s in registers in the fused loop at record lo? */
static int resident_at(const gen *g, int32_t s, int32_t lo)
{
    return g->res_k && !g->dispatching && g->res_k[s] && in_loop(g, lo, g->res_loop[s]);
}

/* The value of operand s at element e_ in the fused loop: a register written earlier in the
 * loop (reg[s] >= 0: the record that wrote it; -2: loaded from the arena into u<s>_), a local,
 * a constant, or a load from the arena, which is written once into a register. */
static void fused_value(gen *g, strbuf *sb, int32_t *reg, int32_t s, int32_t lo, int rk)
{
    const cfx_slot *o = &g->p->slots[s];
    if (reg[s] < 0 && reg[s] != -2 && rk && resident_at(g, s, lo)) {
        line_reads(g, "const %s u%d_ = r%d_[k_];", ctype(o->dtype), (int)s, (int)s);
        reg[s] = -2;
        sb_printf(sb, "u%d_", (int)s);
    } else if (reg[s] >= 0) {
        sb_printf(sb, "v%d_", (int)reg[s]);
    } else if (reg[s] == -2) {
        sb_printf(sb, "u%d_", (int)s);
    } else if (g->local[s] || (o->kind == SLOT_CONST && o->count == 1)) {
        value(g, sb, s);
    } else {
        strbuf at = {0};
        address(g, &at, s);
        line_reads(g, "const %s u%d_ = ((const %s *)%s)[e_];", ctype(o->dtype), (int)s, ctype(o->dtype), sb_str(&at));
        if (at.oom)
            fail(g, "out of memory");
        sb_free(&at);
        reg[s] = -2;
        sb_printf(sb, "u%d_", (int)s);
    }
}

/* Writes records [lo, hi) as one loop over the block's share, and the reduction at record red
 * (-1: none) folded into the same loop, then merged as reduction() merges it. */
static void fused_loop(gen *g, int32_t lo, int32_t hi, int32_t red)
{
    const cfx_prog *p = g->p;
    const cfx_slot *sl = p->slots;
    int32_t *reg = (int32_t *)malloc(sizeof(int32_t) * ((size_t)p->nslots + 1));
    strbuf x[3] = {{0}, {0}, {0}};
    char nbuf[32], op[32];
    const cfx_record *rr = red >= 0 ? &p->records[red] : NULL;
    int rdt = rr ? sl[rr->b].dtype : 0;
    int one = (g->plan.flags[lo] & SCHED_F_ONE_BLOCK) != 0;
    int rk = resident_loop_k(g, lo, hi, red);
    if (!reg) {
        fail(g, "out of memory");
        return;
    }
    for (int32_t s = 0; s < p->nslots; s++)
        reg[s] = -1;
    snprintf(nbuf, sizeof nbuf, "%lldLL", (long long)sl[p->records[lo].a].count);
    snprintf(op, sizeof op, "%s", rr && rr->kind == REC_REDUCE ? op_ident(rr->op) : "OP_SUM");
    if (rr) {
        line(g, "/* records %d to %d, fused, with the reduction at record %d */", (int)lo, (int)hi - 1,
             (int)red);
        line(g, "{");
        g->indent++;
        line(g, "k_acc acc_ = k_reduce_init(%s, %s);", op, kdtype(rdt));
    } else {
        line(g, "/* records %d to %d, fused */", (int)lo, (int)hi - 1);
    }
    if (rk) { /* over the thread's elements of the share, in registers */
        line(g, "{");
        g->indent++;
        line(g, "int64_t lo_, hi_;");
        line(g, "ck_share(%s, blockIdx.x, gridDim.x, &lo_, &hi_);", nbuf);
        block_loop(g, "for (int k_ = 0; k_ < %d; k_++)", rk);
    } else if (fused_space(g, lo) == FUSE_SPLIT) {
        split_open(g, lo, nbuf);
    } else { /* a replica's: every element in every block, as split_close closes it */
        line(g, "{");
        g->indent++;
        block_loop(g, "for (int64_t e_ = threadIdx.x; e_ < %s; e_ += blockDim.x)", nbuf);
    }
    line(g, "{");
    g->indent++;
    if (rk) {
        line(g, "const int64_t e_ = lo_ + threadIdx.x + (int64_t)k_ * blockDim.x;");
        line(g, "if (e_ >= hi_)");
        line(g, "    break;");
    }
    for (int32_t i = lo; i < hi; i++) {
        const cfx_record *r = &p->records[i];
        const cfx_slot *out = &sl[r->a];
        const char *T = ctype(out->dtype);
        int32_t in[3];
        int nin = fused_inputs(r, in);
        for (int k = 0; k < nin; k++) {
            x[k].len = 0;
            if (x[k].data)
                x[k].data[0] = '\0';
            fused_value(g, &x[k], reg, in[k], lo, rk);
        }
        REC_COUNT_IS(34);
        switch (r->kind) {
        case REC_UNARY:
            line(g, "const %s v%d_ = k_%s_%s(%s);", T, (int)i, unary_stem(r->op, r->dtype), suffix(r->dtype),
                 sb_str(&x[0]));
            break;
        case REC_BINARY:
            line(g, "const %s v%d_ = k_%s_%s(%s, %s);", T, (int)i, binary_stem(r->op, r->dtype),
                 suffix(r->dtype), sb_str(&x[0]), sb_str(&x[1]));
            break;
        case REC_FILL:
        case REC_COPY:
            line(g, "const %s v%d_ = %s;", T, (int)i, sb_str(&x[0]));
            break;
        case REC_CAST:
            line(g, "%s v%d_;", T, (int)i);
            line(g, "{ const %s c_ = %s; k_cast(%s, (uint8_t *)&v%d_, %s, (const uint8_t *)&c_, 0, 1); }",
                 ctype(sl[r->b].dtype), sb_str(&x[0]), kdtype(out->dtype), (int)i, kdtype(sl[r->b].dtype));
            break;
        case REC_WHERE:
            line_reads(g, "const %s v%d_ = %s%s ? %s : %s%s;", T, (int)i, r->dtype == CFX_BOOL ? "(uint8_t)((" : "",
                 sb_str(&x[0]), sb_str(&x[1]), sb_str(&x[2]), r->dtype == CFX_BOOL ? ") != 0)" : "");
            break;
        default:
            break;
        }
        if (!fused_private(g, lo, rr ? red + 1 : hi, i)) {
            strbuf at = {0};
            address(g, &at, r->a);
            line_reads(g, "((%s *)%s)[e_] = v%d_;", T, sb_str(&at), (int)i);
            if (rk && resident_at(g, r->a, lo))
                line_reads(g, "r%d_[k_] = v%d_;", (int)r->a, (int)i);
            if (at.oom)
                fail(g, "out of memory");
            sb_free(&at);
        }
        reg[r->a] = i;
    }
    if (rr) {
        for (int k = 0; k < (rr->kind == REC_DOT ? 2 : 1); k++) {
            x[k].len = 0;
            if (x[k].data)
                x[k].data[0] = '\0';
            fused_value(g, &x[k], reg, k == 0 ? rr->b : rr->c, lo, rk);
        }
        if (rr->kind == REC_DOT)
            line(g, "{ const %s b_ = %s, c_ = %s; k_dot_range(%s, &acc_, &b_, &c_, 0, 1); }", ctype(rdt),
                 sb_str(&x[0]), sb_str(&x[1]), kdtype(rdt));
        else
            line(g, "{ const %s b_ = %s; k_reduce_one(%s, %s, &acc_, &b_, e_); }", ctype(rdt), sb_str(&x[0]), op,
                 kdtype(rdt));
    }
    g->indent--;
    line(g, "}");
    split_close(g);
    if (rr) {
        char target[64];
        snprintf(target, sizeof target, "(uint8_t *)&s%d", (int)rr->a);
        helper(g, H_BLOCK_REDUCE, reduction_opcode(rr), 1, "acc_ = k_block_reduce(red_, acc_, %s, %s);", op,
               kdtype(rdt));
        if (!one && fused_space(g, lo) == FUSE_SPLIT)
            helper(g, H_COMBINE, reduction_opcode(rr), 1,
                   "if (ck_combine(a, &acc_, %s, %s, red_, &combines_, &poll_, %d)) goto out_;", op, kdtype(rdt),
                   (int)red);
        if (rr->kind == REC_DOT)
            line(g, "k_dot_finish(%s, &acc_, %s);", kdtype(rdt), target);
        else
            line(g, "k_reduce_finish(%s, %s, &acc_, %lldLL, %s);", op, kdtype(rdt),
                 (long long)sl[rr->b].count, target);
        g->indent--;
        line(g, "}");
    }
    for (int k = 0; k < 3; k++) {
        if (x[k].oom)
            fail(g, "out of memory");
        sb_free(&x[k]);
    }
    free(reg);
}

/* The other operand of reduction q when it folds into the product writing slot out: -1 for a
 * reduction of the product's own elements, the other tensor of a dot product with it (as many
 * elements, in memory, of the product's dtype), or -2 when q cannot fold. */
static int32_t fold_other(const gen *g, const cfx_record *q, int32_t out)
{
    const cfx_prog *p = g->p;
    if (q->kind == REC_REDUCE)
        return q->b == out ? -1 : -2;
    if (q->kind != REC_DOT)
        return -2;
    int32_t o = q->b == out ? q->c : q->c == out ? q->b : -2;
    if (o < 0 || g->local[o] || p->slots[o].count != p->slots[out].count || p->slots[o].dtype != p->slots[out].dtype)
        return -2;
    return o;
}

/* Is record k arithmetic on scalars held in locals alone (no tensor, no stop, no jump)? */
static int local_arithmetic(const gen *g, int32_t k)
{
    const cfx_record *r = &g->p->records[k];
    int32_t in[3];
    int n = fused_inputs(r, in);
    if ((r->kind != REC_UNARY && r->kind != REC_BINARY && r->kind != REC_COPY && r->kind != REC_CAST) ||
        !g->local[r->a])
        return 0;
    for (int q = 0; q < n; q++)
        if (!g->local[in[q]] && g->p->slots[in[q]].kind != SLOT_CONST)
            return 0;
    return 1;
}

/* Bytes of the block's rows of record i's product (its share, in the grid the options name), or
 * 0 when no grid is named. */
static int64_t product_share_bytes(const gen *g, int32_t i)
{
    const cfx_slot *out = &g->p->slots[g->p->records[i].a];
    if (g->opt->blocks <= 0)
        return 0;
    return (out->count + g->opt->blocks - 1) / g->opt->blocks * dtype_size(out->dtype);
}

/* CUDA: the split reduction that reads record i's matrix-vector product right after it (its
 * epilogue), or -1: the first record after it, in the same block of code, past arithmetic on
 * local scalars that does not touch the reduction's result, if it is a reduction of the
 * product's result or a dot product of it with a tensor of as many elements (fold_other),
 * split and combined by the plan over the same shares as the rows (a split reduction's shares
 * are the product's output's), with nothing to do before it; if it heads a batch, every
 * reduction of the batch too (they read their inputs at the head, as a batch does). The
 * product then keeps its block's rows in shared memory (at most CGEN_STASH_BYTES), where the
 * reductions read them instead of from device memory; their reads of other tensors move to the
 * product, which does not write them, and the result is ready before the arithmetic skipped,
 * which does not read it. */
#define CGEN_STASH_BYTES 8192
static int32_t product_epilogue(const gen *g, int32_t i)
{
    const cfx_prog *p = g->p;
    const cfx_record *r = &p->records[i];
    const unsigned none = SCHED_F_BARRIER_BEFORE | SCHED_F_ENTRY_BARRIER | SCHED_F_REGION_ENTRY |
                          SCHED_F_REGION_EXIT | SCHED_F_LAUNCH | SCHED_F_ONE_BLOCK;
    int32_t j = i + 1;
    int64_t stash = r->kind == REC_MATMUL ? product_share_bytes(g, i) : 0;
    if (!g->cuda || !g->have_plan || computed_ahead(g, i) || !sched_matvec(r, p->slots) || g->local[r->a] || stash <= 0 ||
        stash > CGEN_STASH_BYTES ||
        (g->plan.flags[i] & (SCHED_F_LAUNCH | SCHED_F_ONE_BLOCK)) || !(g->plan.flags[i] & SCHED_F_SPLIT))
        return -1;
    while (j < p->nrecords && g->blk[j] == g->blk[i] && local_arithmetic(g, j))
        j++;
    if (j >= p->nrecords || g->blk[j] != g->blk[i] || (g->plan.flags[j] & none) ||
        !(g->plan.flags[j] & SCHED_F_COMBINE) || g->plan.batch_head[j] >= 0)
        return -1;
    for (int32_t q = j; q >= 0; q = g->plan.batch_next[q]) {
        const cfx_record *red = &p->records[q];
        if (fold_other(g, red, r->a) == -2 || !g->local[red->a] || p->slots[red->b].dtype != r->dtype)
            return -1;
        for (int32_t k = i + 1; k < j; k++)
            if (touches(p, k, red->a))
                return -1;
    }
    return j;
}

/* The product record whose epilogue folds reduction j (product_epilogue), or -1. */
static int32_t folded_into(const gen *g, int32_t j)
{
    int32_t lo = j, first = g->start[g->blk[j]];
    if (!g->cuda || !g->have_plan)
        return -1;
    /* only a record with nothing but local arithmetic between it and j can fold j: the
     * epilogue of one further back ends at that record which is not */
    while (lo > first && local_arithmetic(g, lo - 1))
        lo--;
    if (lo > first)
        lo--;
    for (int32_t k = lo; k < j; k++)
        if (product_epilogue(g, k) == j)
            return k;
    return -1;
}

/* Records i (a matrix-vector product) and j (the reduction product_epilogue found, with its
 * batch): the product's rows, kept also in the block's stash (ep_), then each reduction's fold
 * over the block's share read from there, in the order reduction() folds (the same bits),
 * merged and combined as reduction() and reduction_batch() do. */
static void product_with_reduction(gen *g, int32_t i, int32_t j)
{
    const cfx_prog *p = g->p;
    const cfx_record *r = &p->records[i];
    const char *dt = kdtype(r->dtype), *T = ctype(r->dtype);
    int32_t batch[SCHED_BATCH_MAX], n = 0;
    texts t;
    memset(&t, 0, sizeof t);
    for (int32_t q = j; q >= 0 && n < SCHED_BATCH_MAX; q = g->plan.batch_next[q])
        batch[n++] = q;
    line(g, "/* records %d and %d%s: the product, its rows kept in shared memory for the reduction%s */", (int)i,
         (int)j, n > 1 ? " with its batch" : "", n > 1 ? "s" : "");
    line(g, "{");
    g->indent++;
    line(g, "int64_t lo_, hi_;");
    line(g, "ck_share(%lldLL, blockIdx.x, gridDim.x, &lo_, &hi_);", (long long)p->slots[r->a].count);
    line_reads(g, "k_acc acc_[%d];", (int)n);
    for (int k = 0; k < n; k++)
        line_reads(g, "acc_[%d] = k_reduce_init(%s, %s);", k, reduction_op(&p->records[batch[k]]), dt);
    helper(g, H_MATVEC_ROWS, 0, 0, "ck_matvec_rows(%s, %s, %s, %s, %lldLL, lo_, hi_, ep_);", dt, P(g, &t, r->a), P(g, &t, r->b),
         P(g, &t, r->c), (long long)rec_matmul(p->slots, r).k);
    g->cur = j;
    block_loop(g, "for (int64_t e_ = lo_ + threadIdx.x; e_ < hi_; e_ += blockDim.x) {");
    g->indent++;
    line_reads(g, "const %s y_ = ((const %s *)ep_)[e_ - lo_];", T, T);
    for (int k = 0; k < n; k++) {
        const cfx_record *q = &p->records[batch[k]];
        int32_t o = fold_other(g, q, r->a);
        if (o >= 0)
            line_reads(g, "{ const %s o_ = ((const %s *)%s)[e_]; k_dot_range(%s, &acc_[%d], &y_, &o_, 0, 1); }", T, T,
                 P(g, &t, o), dt, k);
        else
            line_reads(g, "k_reduce_one(%s, %s, &acc_[%d], &y_, e_);", op_ident(q->op), dt, k);
    }
    g->indent--;
    line(g, "}");
    for (int k = 0; k < n; k++)
        helper(g, H_BLOCK_REDUCE, reduction_opcode(&p->records[batch[k]]), 1, "acc_[%d] = k_block_reduce(red_, acc_[%d], %s, %s);",
               k, k, reduction_op(&p->records[batch[k]]), dt);
    combine_and_finish(g, batch, (int)n, &t);
    g->indent--;
    line(g, "}");
    texts_free(g, &t);
}

/* CUDA: everything the plan asks for before record i, except a region's entry (written before
 * the region's statement) and the exit actions of a record that starts a region. */
static void arrive(gen *g, int32_t i, int at_region_header)
{
    if (!g->cuda || !g->have_plan)
        return;
    unsigned f = g->plan.flags[i];
    if (!at_region_header)
        region_exit_actions(g, i);
    if ((f & SCHED_F_BARRIER_BEFORE) && !(f & SCHED_F_ONE_BLOCK))
        grid_barrier(g, i);
}

/* How many TICK records come before record i: a TICK's place in the kernel's count of each
 * loop's iterations (CK_TICK), and, at i = nrecords, how many there are. */
static int32_t tick_ordinal(const gen *g, int32_t i)
{
    return g->ticks_before[i];
}

/* One record that is not a jump or HALT. */
static void record(gen *g, int32_t i)
{
    const cfx_prog *p = g->p;
    const cfx_record *r = &p->records[i];
    const cfx_slot *sl = p->slots;
    texts t;
    memset(&t, 0, sizeof t);
    int cuda = g->cuda;
    int one = scalar_record(g, r);
    char buf[1024];

    switch ((enum rec_kind)r->kind) {
    case REC_TICK:
        if (cuda) {
            int32_t h = g->loop_of[g->blk[i]];
            int heavy = h >= 0 && g->heavy[h];
            int mask = heavy ? 0 : CGEN_SCALAR_POLL_MASK;
            /* the timeline: every iteration of a loop over tensors, one in CK_SAMPLE of a loop
             * without (its iteration costs about what a stamp does); the count, of each */
            if (heavy)
                line(g, "CK_STAMP(a, CK_EV_ITER, %d);", (int)i);
            else
                line(g, "if ((iters_ & (CK_SAMPLE - 1)) == 0) CK_STAMP(a, CK_EV_SAMPLE, %d);", (int)i);
            line(g, "CK_TICK(%d);", (int)tick_ordinal(g, i));
            if (alternates_at(g, i))
                line(g, "par%d_ ^= 1u; /* the other buffer of the tensors that alternate */", (int)i);
            helper(g, H_POLL, 0, 0, "if ((iters_ & %du) == 0 && ck_poll(a, &poll_, %d, iters_)) goto out_;", mask, (int)i);
            line(g, "if (budget_ > 0 && iters_ >= (uint64_t)budget_)");
            g->indent++;
            stop(g, CFX_STOP_LIMIT, i, "budget_", "0");
            g->indent--;
        } else {
            line_reads(g, "if (a->cancel && atomic_load_explicit(a->cancel, memory_order_relaxed))");
            g->indent++;
            stop(g, CFX_STOP_CANCELLED, i, "0", "0");
            g->indent--;
            line(g, "if (iters_ >= limit_)");
            g->indent++;
            stop(g, CFX_STOP_LIMIT, i, "a->max_iters", "0");
            g->indent--;
        }
        line(g, "iters_++;");
        break;
    case REC_ASSERT:
        line_reads_if(g, reads_value(g, r->a), "if (!%s)", V(g, &t, r->a));
        g->indent++;
        stop(g, CFX_STOP_ASSERT, i, "0", "0");
        g->indent--;
        break;
    case REC_CHECK_INDEX:
        line(g, "{");
        g->indent++;
        line_reads_if(g, reads_value(g, r->a), "int64_t v_ = (int64_t)%s;", V(g, &t, r->a));
        line(g, "if (v_ < -%dLL || v_ >= %dLL)", (int)r->b, (int)r->b);
        g->indent++;
        snprintf(buf, sizeof buf, "%dLL", (int)r->b);
        stop(g, CFX_STOP_INDEX, i, "v_", buf);
        g->indent -= 2;
        line(g, "}");
        break;
    case REC_CHECK_BOUND:
        line(g, "{");
        g->indent++;
        line_reads_if(g, reads_value(g, r->a) || reads_value(g, r->b), "int64_t a_ = (int64_t)%s, b_ = (int64_t)%s;",
                      V(g, &t, r->a), V(g, &t, r->b));
        line(g, "if (!k_bound_ok(%d, a_, b_))", (int)r->d);
        g->indent++;
        stop(g, CFX_STOP_INDEX, i, "a_", "b_");
        g->indent -= 2;
        line(g, "}");
        break;
    case REC_CHECK_STEP:
        line_reads_if(g, reads_value(g, r->a), "if (%s == 0)", V(g, &t, r->a));
        g->indent++;
        stop(g, CFX_STOP_VALUE, i, "0", "0");
        g->indent--;
        break;
    case REC_CHECK_DIVIDE:
        if (sl[r->a].count == 1) {
            line_reads_if(g, reads_value(g, r->a), "if (%s == 0)", V(g, &t, r->a));
            g->indent++;
            stop(g, CFX_STOP_DIVIDE, i, "0", "0");
            g->indent--;
        } else if (cuda) {
            /* every block looks at every element, so all stop here or none does */
            line(g, "{");
            g->indent++;
            line(g, "int z_ = 0;");
            block_loop(g, "for (int64_t e_ = threadIdx.x; e_ < %lldLL; e_ += blockDim.x)",
                 (long long)sl[r->a].count);
            line_reads_if(g, reads_address(g, r->a), "    z_ |= k_get_int(%s, %s, e_) == 0;", kdtype(sl[r->a].dtype),
                 P(g, &t, r->a));
            helper(g, H_SYNC_OR, 0, 0, "if (__syncthreads_or(z_))");
            g->indent++;
            stop(g, CFX_STOP_DIVIDE, i, "0", "0");
            g->indent -= 2;
            line(g, "}");
        } else {
            line(g, "for (int64_t e_ = 0; e_ < %lldLL; e_++)", (long long)sl[r->a].count);
            g->indent++;
            line_reads_if(g, reads_address(g, r->a), "if (k_get_int(%s, %s, e_) == 0)", kdtype(sl[r->a].dtype),
                          P(g, &t, r->a));
            g->indent++;
            stop(g, CFX_STOP_DIVIDE, i, "0", "0");
            g->indent -= 2;
        }
        break;
    case REC_PRINT:
        if (cuda) {
            int64_t bytes = slot_bytes(&sl[r->a]);
            /* a full buffer cannot be drained mid-kernel: the host runs the program again
             * with the interpreter, which pauses to drain it */
            line_reads_if(g, reads_address(g, r->a), "if (ck_print(a, &print_used_, %d, %s, %lldLL)) goto out_;", (int)i,
                 P(g, &t, r->a), (long long)bytes);
        } else {
            line_reads(g, "if (a->print)");
            line_reads(g, "    a->print(a->print_user, %d, %s);", (int)i, P(g, &t, r->a));
        }
        break;
    case REC_CALL: {
        if (cuda && (g->plan.flags[i] & SCHED_F_LAUNCH)) {
            end_launch(g, i);
            break;
        }
        if (prog_kernel_form(p, r->a) != KERNEL_BINARY) {
            inline_call(g, i, r);
            break;
        }
        /* C: scalars go to the arena for the kernel and results come back */
        for (int32_t k = 0; k < r->c; k++) {
            int32_t s = p->table[r->b + k];
            if (g->local[s])
                line_reads(g, "*(%s *)(arena + %lld) = s%d;", ctype(sl[s].dtype), (long long)sl[s].offset,
                     (int)s);
        }
        line_reads(g, "if (!a->call || a->call(a->call_user, %d, arena) != 0)", (int)i);
        g->indent++;
        stop(g, CFX_ERROR, i, "0", "0");
        g->indent--;
        for (int32_t k = r->d; k < r->c; k++) {
            int32_t s = p->table[r->b + k];
            if (g->local[s])
                line_reads(g, "s%d = *(const %s *)(arena + %lld);", (int)s, ctype(sl[s].dtype),
                     (long long)sl[s].offset);
        }
        break;
    }
    case REC_UNARY:
        if (one && g->local[r->a]) {
            line_reads_if(g, reads_value(g, r->b), "s%d = k_%s_%s(%s);", (int)r->a, unary_stem(r->op, r->dtype), suffix(r->dtype),
                 V(g, &t, r->b));
        } else {
            snprintf(buf, sizeof buf, "k_unary(%s, %s, %s, %s, %%s, %%s)", op_ident(r->op),
                     kdtype(r->dtype), P(g, &t, r->a), P(g, &t, r->b));
            ranged(g, i, r->a, sl[r->a].count, buf);
        }
        break;
    case REC_BINARY:
        if (one && g->local[r->a]) {
            line_reads_if(g, reads_value(g, r->b) || reads_value(g, r->c), "s%d = k_%s_%s(%s, %s);", (int)r->a,
                          binary_stem(r->op, r->dtype),
                 suffix(r->dtype), V(g, &t, r->b), V(g, &t, r->c));
        } else {
            snprintf(buf, sizeof buf, "k_binary(%s, %s, %s, %s, %lldLL, %s, %lldLL, %%s, %%s)",
                     op_ident(r->op), kdtype(r->dtype), P(g, &t, r->a), P(g, &t, r->b),
                     (long long)sl[r->b].count, P(g, &t, r->c), (long long)sl[r->c].count);
            ranged(g, i, r->a, sl[r->a].count, buf);
        }
        break;
    case REC_REDUCE:
    case REC_DOT:
        reduction(g, i, r, &t);
        break;
    case REC_MATMUL: {
        rec_mm mm = rec_matmul(sl, r); /* a batch: its products' tiles, or a loop of them */
        int64_t m = mm.m, k = mm.k, n = mm.n, es = dtype_size(r->dtype);
        if (cuda && (g->plan.flags[i] & SCHED_F_LAUNCH)) {
            end_launch(g, i);
        } else if (cuda && !g->local[r->a] && sched_matvec(r, sl)) {
            /* a matrix-vector product: the block's share of the rows, as the plan splits it,
             * with the interpreter's routine (kernels/block.cuh) */
            int oneb = g->have_plan && (g->plan.flags[i] & SCHED_F_ONE_BLOCK);
            line(g, "{");
            g->indent++;
            line(g, "int64_t lo_, hi_;");
            line(g, "ck_share(%lldLL, %s, %s, &lo_, &hi_);", (long long)m, oneb ? "0" : "blockIdx.x",
                 oneb ? "1" : "gridDim.x");
            helper(g, H_MATVEC_ROWS, 0, 0, "ck_matvec_rows(%s, %s, %s, %s, %lldLL, lo_, hi_);", kdtype(r->dtype), P(g, &t, r->a),
                 P(g, &t, r->b), P(g, &t, r->c), (long long)k);
            g->indent--;
            line(g, "}");
        } else if (cuda && !g->local[r->a]) {
            /* output tiles of the block's share, as the interpreter splits them */
            int64_t tiles =
                mm.batch * (((m + SCHED_TILE - 1) / SCHED_TILE) * ((n + SCHED_TILE - 1) / SCHED_TILE));
            int oneb = g->have_plan && (g->plan.flags[i] & SCHED_F_ONE_BLOCK);
            line(g, "{");
            g->indent++;
            line(g, "int64_t lo_, hi_;");
            line(g, "ck_share(%lldLL, %s, %s, &lo_, &hi_);", (long long)tiles,
                 oneb ? "0" : "blockIdx.x", oneb ? "1" : "gridDim.x");
            if (mm.batch > 1)
                line_reads(g, "ck_matmul_tiles_batch(%s, %s, %s, %s, %lldLL, %lldLL, %lldLL, %lldLL, %lldLL, lo_, hi_);",
                     kdtype(r->dtype), P(g, &t, r->a), P(g, &t, r->b), P(g, &t, r->c), (long long)m,
                     (long long)k, (long long)n, (long long)mm.sb, (long long)mm.sc);
            else
                line_reads(g, "ck_matmul_tiles(%s, %s, %s, %s, %lldLL, %lldLL, %lldLL, lo_, hi_);",
                     kdtype(r->dtype), P(g, &t, r->a), P(g, &t, r->b), P(g, &t, r->c), (long long)m,
                     (long long)k, (long long)n);
            g->indent--;
            line(g, "}");
            block_barrier(g, BARRIER_PHASE);
        } else if (mm.batch > 1) {
            line_reads_if(g, reads_address(g, r->a) || reads_address(g, r->b) || reads_address(g, r->c),
                          "for (int64_t e_ = 0; e_ < %lldLL; e_++) k_matmul(%s, %s + e_ * %lldLL, %s + e_ * %lldLL, "
                          "%s + e_ * %lldLL, %lldLL, %lldLL, %lldLL, 0, %lldLL);",
                          (long long)mm.batch, kdtype(r->dtype), P(g, &t, r->a), (long long)(m * n * es),
                          P(g, &t, r->b), (long long)(mm.sb * es), P(g, &t, r->c), (long long)(mm.sc * es),
                          (long long)m, (long long)k, (long long)n, (long long)(m * n));
        } else {
            line_reads_if(g, reads_address(g, r->a) || reads_address(g, r->b) || reads_address(g, r->c),
                          "k_matmul(%s, %s, %s, %s, %lldLL, %lldLL, %lldLL, 0, %lldLL);",
                 kdtype(r->dtype), P(g, &t, r->a), P(g, &t, r->b), P(g, &t, r->c), (long long)m,
                 (long long)k, (long long)n, (long long)(m * n));
        }
        break;
    }
    case REC_TRANSPOSE:
        snprintf(buf, sizeof buf, "k_transpose(%s, %s, %s, %lldLL, %lldLL, %%s, %%s)",
                 kdtype(r->dtype), P(g, &t, r->a), P(g, &t, r->b), (long long)sl[r->b].dims[0],
                 (long long)sl[r->b].dims[1]);
        ranged(g, i, r->a, sl[r->a].count, buf);
        break;
    case REC_FILL:
        if (g->local[r->a]) {
            line_reads_if(g, reads_address(g, r->a) || reads_address(g, r->b), "k_fill(%s, %s, %s, 0, 1);",
                          kdtype(r->dtype), P(g, &t, r->a), P(g, &t, r->b));
        } else {
            snprintf(buf, sizeof buf, "k_fill(%s, %s, %s, %%s, %%s)", kdtype(r->dtype),
                     P(g, &t, r->a), P(g, &t, r->b));
            ranged(g, i, r->a, sl[r->a].count, buf);
        }
        break;
    case REC_IOTA:
        if (g->local[r->a]) {
            line_reads_if(g, reads_address(g, r->a), "k_iota(%s, %s, 0, 1);", kdtype(r->dtype), P(g, &t, r->a));
        } else {
            snprintf(buf, sizeof buf, "k_iota(%s, %s, %%s, %%s)", kdtype(r->dtype), P(g, &t, r->a));
            ranged(g, i, r->a, sl[r->a].count, buf);
        }
        break;
    case REC_COPY:
        if (r->a == r->b)
            break;
        if (g->local[r->a]) {
            line_reads_if(g, reads_value(g, r->b), "s%d = %s;", (int)r->a, V(g, &t, r->b));
        } else {
            int size = dtype_size(sl[r->a].dtype);
            snprintf(buf, sizeof buf, "k_copy_bytes(%s, %s, (%%s) * %d, (%%s) * %d)",
                     P(g, &t, r->a), P(g, &t, r->b), size, size);
            ranged(g, i, r->a, sl[r->a].count, buf);
        }
        break;
    case REC_CAST:
        if (g->local[r->a]) {
            line_reads_if(g, reads_address(g, r->a) || reads_address(g, r->b), "k_cast(%s, %s, %s, %s, 0, 1);",
                          kdtype(sl[r->a].dtype), P(g, &t, r->a),
                 kdtype(r->dtype), P(g, &t, r->b));
        } else {
            snprintf(buf, sizeof buf, "k_cast(%s, %s, %s, %s, %%s, %%s)", kdtype(sl[r->a].dtype),
                     P(g, &t, r->a), kdtype(r->dtype), P(g, &t, r->b));
            ranged(g, i, r->a, sl[r->a].count, buf);
        }
        break;
    case REC_WHERE:
        if (g->local[r->a]) {
            line_reads(g, "s%d = %s ? %s : %s;", (int)r->a, V(g, &t, r->b), V(g, &t, r->c),
                 V(g, &t, r->d));
            if (r->dtype == CFX_BOOL) /* k_where keeps bools 0/1 */
                line(g, "s%d = s%d != 0;", (int)r->a, (int)r->a);
        } else {
            snprintf(buf, sizeof buf,
                     "k_where(%s, %s, %s, %lldLL, %s, %lldLL, %s, %lldLL, %%s, %%s)",
                     kdtype(r->dtype), P(g, &t, r->a), P(g, &t, r->b), (long long)sl[r->b].count,
                     P(g, &t, r->c), (long long)sl[r->c].count, P(g, &t, r->d),
                     (long long)sl[r->d].count);
            ranged(g, i, r->a, sl[r->a].count, buf);
        }
        break;
    case REC_GET_ROW: {
        int64_t bytes = slot_bytes(&sl[r->a]);
        const char *idx = V(g, &t, r->c);
        if (g->local[r->a]) {
            line_reads(g, "s%d = ((const %s *)%s)[k_row_index((int64_t)%s, %dLL)];", (int)r->a,
                 ctype(sl[r->a].dtype), P(g, &t, r->b), idx, (int)sl[r->b].dims[0]);
        } else {
            int size = dtype_size(sl[r->a].dtype);
            snprintf(buf, sizeof buf,
                     "k_copy_bytes(%s, %s + k_row_index((int64_t)%s, %dLL) * %lldLL, (%%s) * %d, "
                     "(%%s) * %d)",
                     P(g, &t, r->a), P(g, &t, r->b), idx, (int)sl[r->b].dims[0], (long long)bytes,
                     size, size);
            ranged(g, i, r->a, sl[r->a].count, buf);
        }
        break;
    }
    case REC_SET_ROW: {
        int64_t bytes = slot_bytes(&sl[r->c]);
        int size = dtype_size(sl[r->c].dtype);
        const char *idx = V(g, &t, r->b);
        snprintf(buf, sizeof buf,
                 "k_copy_bytes(%s + k_row_index((int64_t)%s, %dLL) * %lldLL, %s, (%%s) * %d, (%%s) "
                 "* %d)",
                 P(g, &t, r->a), idx, (int)sl[r->a].dims[0], (long long)bytes, P(g, &t, r->c), size,
                 size);
        ranged(g, i, r->a, sl[r->c].count, buf);
        break;
    }
    case REC_BROADCAST: {
        const cfx_slot *sa = &sl[r->a], *sb = &sl[r->b];
        strbuf sh = {0}; /* {dims}, {sdims} */
        for (int k = 0; k < 2 * CFX_MAX_RANK; k++)
            sb_printf(&sh, "%s%d", k % CFX_MAX_RANK ? ", " : k ? "}, {" : "{",
                      (int)(k < CFX_MAX_RANK ? sa->dims[k] : sb->dims[k - CFX_MAX_RANK]));
        sb_puts(&sh, "}");
        if (sh.oom)
            fail(g, "out of memory");
        snprintf(buf, sizeof buf,
                 "{ const k_bshape sh_ = {%s, %d, %d}; "
                 "k_broadcast(%d, %s, %s, &sh_, %%s, %%s); }",
                 sb_str(&sh), (int)sa->rank, (int)sb->rank, dtype_size(sa->dtype), P(g, &t, r->a),
                 P(g, &t, r->b));
        sb_free(&sh);
        ranged(g, i, r->a, sa->count, buf);
        break;
    }
    case REC_GATHER: {
        /* the indices are read through their address wherever they live: a scalar index is a
         * one-element tensor here as in the interpreters */
        int64_t m, n, inner;
        rec_gather(sl, r, &m, &n, &inner);
        snprintf(buf, sizeof buf, "k_gather(%d, %s, %s, %s, %s, %lldLL, %lldLL, %lldLL, %%s, %%s)",
                 dtype_size(sl[r->a].dtype), P(g, &t, r->a), P(g, &t, r->b), kdtype(sl[r->c].dtype),
                 P(g, &t, r->c), (long long)m, (long long)n, (long long)inner);
        ranged(g, i, r->a, sl[r->a].count, buf);
        break;
    }
    case REC_PERMUTE: {
        /* the shape rec_pshape makes for the interpreters, as constants */
        k_pshape ps = rec_pshape(sl, r);
        strbuf sh = {0}; /* {dims}, {stride} */
        for (int k = 0; k < 2 * CFX_MAX_RANK; k++)
            sb_printf(&sh, "%s%lldLL", k % CFX_MAX_RANK ? ", " : k ? "}, {" : "{",
                      (long long)(k < CFX_MAX_RANK ? ps.dims[k] : ps.stride[k - CFX_MAX_RANK]));
        sb_puts(&sh, "}");
        if (sh.oom)
            fail(g, "out of memory");
        snprintf(buf, sizeof buf,
                 "{ const k_pshape sh_ = {%d, %s}; "
                 "k_permute(%d, %s, %s, &sh_, %%s, %%s); }",
                 (int)ps.rank, sb_str(&sh), dtype_size(sl[r->a].dtype), P(g, &t, r->a), P(g, &t, r->b));
        sb_free(&sh);
        ranged(g, i, r->a, sl[r->a].count, buf);
        break;
    }
    case REC_REDUCE_AXIS: {
        /* each result its run along the axis, in order (kernels/reduce.h): the interpreters' bits */
        int64_t n, inner;
        rec_reduce_axis(sl, r, &n, &inner);
        snprintf(buf, sizeof buf, "k_reduce_axis(%s, %s, %s, %s, %lldLL, %lldLL, %%s, %%s)", op_ident(r->op),
                 kdtype(r->dtype), P(g, &t, r->a), P(g, &t, r->b), (long long)n, (long long)inner);
        ranged(g, i, r->a, sl[r->a].count, buf);
        break;
    }
    case REC_GET_BOX:
    case REC_SET_BOX: {
        /* The box as rec_box (program.h) makes it for the interpreters: its dims and lengths
         * come from rec_box here, and each start is read from its slot at run time and made
         * safe by k_box_start, which is what rec_box does with it. */
        int get = r->kind == REC_GET_BOX;
        const cfx_slot *tn = &sl[get ? r->b : r->a];
        const int32_t *ent = p->table + r->c;
        const int64_t no_starts[CFX_MAX_RANK] = {0};
        k_box shape = rec_box(ent, tn, no_starts);
        strbuf box = {0};
        sb_printf(&box, "{%d, {", (int)shape.rank);
        for (int k = 0; k < 2 * CFX_MAX_RANK; k++)
            sb_printf(&box, "%s%d", k % CFX_MAX_RANK ? ", " : k ? "}, {" : "",
                      (int)(k < CFX_MAX_RANK ? shape.dims[k] : shape.len[k - CFX_MAX_RANK]));
        sb_puts(&box, "}, {");
        for (int d = 0; d < CFX_MAX_RANK; d++) {
            const char *sep = d ? ", " : "";
            if (d >= tn->rank)
                sb_printf(&box, "%s0", sep);
            else
                sb_printf(&box, "%sk_box_start((int64_t)%s, %d, %d)", sep,
                          ent[2 * d] >= 0 ? V(g, &t, ent[2 * d]) : "0", (int)shape.len[d],
                          (int)shape.dims[d]);
        }
        sb_puts(&box, "}}");
        if (box.oom)
            fail(g, "out of memory");
        if (snprintf(buf, sizeof buf,
                     "{ const k_box bx_ = %s; k_box_copy(%d, %d, %s, %s, &bx_, %%s, %%s); }",
                     sb_str(&box), !get, dtype_size(tn->dtype), P(g, &t, r->a),
                     P(g, &t, r->b)) >= (int)sizeof buf)
            fail(g, "internal error: record %d's code does not fit its buffer", (int)i);
        sb_free(&box);
        /* split as the plan splits it (sched_domain): over the box's elements */
        ranged(g, i, r->a, get ? sl[r->a].count : sl[r->b].count, buf);
        break;
    }
    case REC_GET_ITEM: {
        /* k_item_index clamps into the list, as the interpreters do */
        char idx[256];
        snprintf(idx, sizeof idx, "k_item_index((int64_t)%s, (int64_t)%s, %dLL)", V(g, &t, r->c),
                 V(g, &t, r->d), (int)sl[r->b].dims[0]);
        if (g->local[r->a]) {
            line_reads(g, "s%d = ((const %s *)%s)[%s];", (int)r->a, ctype(sl[r->a].dtype), P(g, &t, r->b),
                 idx);
        } else {
            int size = dtype_size(sl[r->a].dtype);
            snprintf(buf, sizeof buf, "k_copy_bytes(%s, %s + %s * %lldLL, (%%s) * %d, (%%s) * %d)",
                     P(g, &t, r->a), P(g, &t, r->b), idx, (long long)slot_bytes(&sl[r->a]), size,
                     size);
            ranged(g, i, r->a, sl[r->a].count, buf);
        }
        break;
    }
    case REC_SET_ITEM: {
        char idx[256];
        int size = dtype_size(sl[r->c].dtype);
        snprintf(idx, sizeof idx, "k_item_index((int64_t)%s, (int64_t)%s, %dLL)", V(g, &t, r->b),
                 V(g, &t, r->d), (int)sl[r->a].dims[0]);
        snprintf(buf, sizeof buf, "k_copy_bytes(%s + %s * %lldLL, %s, (%%s) * %d, (%%s) * %d)",
                 P(g, &t, r->a), idx, (long long)slot_bytes(&sl[r->c]), P(g, &t, r->c), size, size);
        ranged(g, i, r->a, sl[r->c].count, buf);
        break;
    }
    case REC_HALT:
    case REC_JUMP:
    case REC_JUMP_FALSE:
    case REC_JUMP_TRUE:
    case REC_SWITCH:
        fail(g, "internal error: record %d (%s) reached the record writer", (int)i,
             rec_names[r->kind]);
        break;
    }
    texts_free(g, &t);
}

/* ==== structured emission ===================================================================== */

static void do_tree(gen *g, int32_t x, int32_t ft);

/* The innermost loop on the stack (a `continue` goes to it), or NULL. */
static const ctx *innermost_loop(const gen *g)
{
    for (int i = g->nctx - 1; i >= 0; i--)
        if (g->stack[i].kind == CTX_LOOP)
            return &g->stack[i];
    return NULL;
}

/* Control passes from block `from` to block `to`; `ft` is the block whose code follows the
 * current statement (-1: none, so something must be written). */
static void do_branch(gen *g, int32_t from, int32_t to, int32_t ft)
{
    if (to == ft)
        return;
    if (back_edge(g, from, to)) {
        const ctx *l = innermost_loop(g);
        if (l && l->head == to) {
            line(g, "continue;");
            if (g->pass == 2)
                g->info->continues++;
        } else {
            line(g, "goto t%d;", (int)g->start[to]);
            g->top_used[to] = 1;
            if (g->pass == 2)
                g->info->gotos++;
        }
        return;
    }
    if (g->follower[to]) {
        if (g->nctx > 0 && g->stack[g->nctx - 1].next == to) {
            line(g, "break;");
            if (g->pass == 2)
                g->info->breaks++;
        } else {
            line(g, "goto b%d;", (int)g->start[to]);
            g->label_used[to] = 1;
            if (g->pass == 2)
                g->info->gotos++;
        }
        return;
    }
    do_tree(g, to, ft);
}

/* Does a branch from `from` to `to` write a jump (break, continue, goto) rather than nothing
 * or the target's code? */
static int is_jump_branch(const gen *g, int32_t from, int32_t to, int32_t ft)
{
    return to != ft && (back_edge(g, from, to) || g->follower[to]);
}

static void guarded(gen *g, int32_t x, const char *cond, int negate, int32_t to, int32_t ft)
{
    line(g, negate ? "if (!(%s)) {" : "if (%s) {", cond);
    g->indent++;
    do_branch(g, x, to, ft);
    g->indent--;
    line(g, "}");
}

/* A two-way branch: true goes to t, false to f. An arm that falls through is left out; an arm
 * that is a jump becomes a guard (`if (!c) { break; }`) followed by the other arm's code, so a
 * loop's test reads as it was written. */
static void do_if(gen *g, int32_t x, const char *cond, int32_t t, int32_t f, int32_t ft)
{
    if (t == ft && f == ft)
        return;
    if (g->pass == 2)
        g->info->ifs++;
    if (t == ft) {
        guarded(g, x, cond, 1, f, ft);
    } else if (f == ft) {
        guarded(g, x, cond, 0, t, ft);
    } else if (is_jump_branch(g, x, f, ft)) {
        guarded(g, x, cond, 1, f, ft);
        do_branch(g, x, t, ft);
    } else if (is_jump_branch(g, x, t, ft)) {
        guarded(g, x, cond, 0, t, ft);
        do_branch(g, x, f, ft);
    } else {
        line(g, "if (%s) {", cond);
        g->indent++;
        do_branch(g, x, t, ft);
        g->indent--;
        line(g, "} else {");
        g->indent++;
        do_branch(g, x, f, ft);
        g->indent--;
        line(g, "}");
    }
}

/* The records of block x and its closing branch. */
/* CUDA: the products the plan computes an iteration ahead (host/gen/plan.c) that are due after the
 * records [lo, hi] just written: after the record that writes their operands, for the next
 * iteration; after the record before their loop's head, once on entry, between two grid
 * barriers (its time and barriers are that record's, so the product's own count stays one an
 * iteration). Either way into the next iteration's buffer of their output. */
static void ahead_products(gen *g, int32_t lo, int32_t hi)
{
    if (!g->cuda || !g->have_plan || g->plan.naheads == 0)
        return;
    int32_t keep = g->cur;
    for (int32_t w = 0; w < g->p->nrecords && !g->failed; w++) {
        int32_t at = g->plan.ahead_at[w], entry = g->plan.ahead_head[w] - 1;
        if (at < 0)
            continue;
        if (entry >= lo && entry <= hi) {
            g->cur = entry;
            line(g, "/* record %d for the loop's first iteration (then each iteration computes it for the next) */",
                 (int)w);
            grid_barrier(g, entry);
            g->ahead_out = g->p->records[w].a;
            record(g, w);
            g->ahead_out = -1;
            grid_barrier(g, entry);
        }
        if (at >= lo && at <= hi) {
            g->cur = w;
            line(g, "/* record %d for the next iteration: its operands are final here */", (int)w);
            g->ahead_out = g->p->records[w].a;
            record(g, w);
            g->ahead_out = -1;
        }
    }
    g->cur = keep;
}

/* Before records [lo, hi] (one, or a fused group), as the cpu executor before each: where one
 * computes over CFX_CANCEL_CHECK_ELEMENTS or more (rec_polls_cancel), the cancel flag is read and
 * the run stops there, at the first such record, so that a run without a loop stops at a large
 * record with the status and record the cpu executor gives. CUDA: ck_poll (block 0 reads the
 * flag; the other blocks stop at their next grid barrier). */
static void cancel_poll(gen *g, int32_t lo, int32_t hi)
{
    const cfx_prog *p = g->p;
    int32_t at = -1;
    for (int32_t k = lo; k <= hi && at < 0; k++)
        if (rec_polls_cancel(p->slots, &p->records[k]))
            at = k;
    if (at < 0)
        return;
    if (g->cuda) {
        helper(g, H_POLL, 0, 0, "if (ck_poll(a, &poll_, %d, iters_)) goto out_;", (int)at);
        return;
    }
    line_reads(g, "if (a->cancel && atomic_load_explicit(a->cancel, memory_order_relaxed))");
    g->indent++;
    stop(g, CFX_STOP_CANCELLED, at, "0", "0");
    g->indent--;
}

static void block_code(gen *g, int32_t x, int32_t ft, int at_region_header)
{
    const cfx_prog *p = g->p;
    int32_t lo = g->start[x], hi = g->start[x + 1];
    texts t;
    memset(&t, 0, sizeof t);
    for (int32_t i = lo; i < hi && !g->failed; i++) {
        const cfx_record *r = &p->records[i];
        g->cur = i;
        arrive(g, i, at_region_header && i == lo);
        REC_COUNT_IS(34);
        switch (r->kind) {
        case REC_HALT:
            line(g, "goto halt_;");
            g->halt_used = 1;
            break;
        case REC_JUMP:
            do_branch(g, x, to_block(g, r->a), ft);
            break;
        case REC_JUMP_FALSE:
        case REC_JUMP_TRUE: {
            int32_t taken = to_block(g, r->b), next = to_block(g, i + 1);
            const char *c = V(g, &t, r->a);
            if (taken == next)
                do_branch(g, x, next, ft);
            else if (r->kind == REC_JUMP_TRUE)
                do_if(g, x, c, taken, next, ft);
            else
                do_if(g, x, c, next, taken, ft);
            break;
        }
        case REC_SWITCH: {
            /* one case per distinct target, in the order of the table */
            int32_t n = r->c;
            if (g->pass == 2)
                g->info->switches++;
            line_reads_if(g, reads_value(g, r->a), "switch (%s) {", V(g, &t, r->a));
            g->stack[g->nctx++] = (ctx){CTX_SWITCH, -1, ft};
            for (int32_t k = 0; k <= n; k++) {
                int32_t tb = to_block(g, p->table[r->b + k]), seen = 0;
                for (int32_t j = 0; j < k; j++)
                    if (to_block(g, p->table[r->b + j]) == tb)
                        seen = 1;
                if (seen)
                    continue;
                int dflt = to_block(g, p->table[r->b + n]) == tb;
                for (int32_t j = k; j < n; j++)
                    if (to_block(g, p->table[r->b + j]) == tb && !dflt)
                        line_reads(g, "case %d:", (int)j);
                if (dflt)
                    line_reads(g, "default:");
                g->indent++;
                line(g, "{");
                g->indent++;
                if (tb == ft)
                    line(g, "break;");
                else
                    do_branch(g, x, tb, -1);
                g->indent--;
                line(g, "}");
                g->indent--;
            }
            g->nctx--;
            line(g, "}");
            break;
        }
        default: {
            int64_t n = fusable(g, i, 0);
            int32_t end = n ? fused_end(g, i, hi) : i + 1;
            int32_t red = n && end < hi && fusable_reduction(g, end, i, n) ? end : -1;
            int32_t ep = product_epilogue(g, i), first = i;
            int ahead = computed_ahead(g, i);
            if (!ahead)
                cancel_poll(g, i, red >= 0 ? red : ep >= 0 ? ep : end - 1);
            if (ahead) {
                line(g, "/* record %d: computed an iteration ahead, after record %d */", (int)i,
                     (int)g->plan.ahead_at[i]);
            } else if (end > i + 1 || red >= 0 || (n && resident_at(g, r->a, i))) {
                fused_loop(g, i, end, red);
                i = red >= 0 ? red : end - 1;
            } else if (ep >= 0) {
                product_with_reduction(g, i, ep); /* the records between follow as usual */
            } else {
                record(g, i);
            }
            ahead_products(g, first, i);
            if (i + 1 == hi) /* falls into the next block */
                do_branch(g, x, to_block(g, hi), ft);
            break;
        }
        }
    }
    texts_free(g, &t);
}

/* Block x followed by the blocks written after it (ys, in order), each under its label. */
static void node_within(gen *g, int32_t x, const int32_t *ys, int32_t n, int32_t ft,
                        int at_region_header)
{
    block_code(g, x, n > 0 ? ys[0] : ft, at_region_header);
    for (int32_t k = 0; k < n && !g->failed; k++) {
        if (g->pass == 1 || g->label_used[ys[k]])
            line_reads(g, "b%d:;", (int)g->start[ys[k]]);
        do_tree(g, ys[k], k + 1 < n ? ys[k + 1] : ft);
    }
}

/* Block x and everything written under it: its loop or region statement, then the blocks
 * placed after it. */
static void do_tree(gen *g, int32_t x, int32_t ft)
{
    if (g->failed)
        return;
    if (++g->depth > CGEN_MAX_DEPTH) {
        g->too_deep = 1;
        g->failed = 1;
        g->depth--;
        return;
    }
    /* the blocks written after x, in reverse postorder (place_blocks sorted them) */
    const int32_t *ys = g->kids + g->koff[x];
    int32_t n = g->koff[x + 1] - g->koff[x];

    int body = g->header[x] || region_header(g, x);
    if (!body) {
        node_within(g, x, ys, n, ft, 0);
        g->depth--;
        return;
    }
    /* inside: the followers in the body; after: the others */
    int32_t nin = 0;
    int32_t *in = malloc(sizeof(int32_t) * ((size_t)n + 1)),
            *after = malloc(sizeof(int32_t) * ((size_t)n + 1));
    int32_t nafter = 0;
    if (!in || !after) {
        free(in);
        free(after);
        fail(g, "out of memory");
        g->depth--;
        return;
    }
    for (int32_t k = 0; k < n; k++) {
        if (in_body(g, ys[k], x))
            in[nin++] = ys[k];
        else
            after[nafter++] = ys[k];
    }
    int32_t next = nafter > 0 ? after[0] : ft;
    int region = region_header(g, x);
    if (region) {
        int32_t h = g->start[x];
        unsigned f = g->plan.flags[h];
        g->cur = h;
        region_exit_actions(g, h); /* a region that starts where another ends */
        line(g, "/* a one-block region: records %d to %d%s */", (int)h, (int)g->region_end[x] - 1,
             g->redundant[x] ? ", scalars only, so every block runs it" : "");
        if (f & SCHED_F_ENTRY_BARRIER)
            grid_barrier(g, h);
        line(g, "CK_STAMP(a, CK_EV_REGION, %d);", (int)h);
        if (!g->redundant[x]) {
            int32_t eb = to_block(g, g->region_end[x]);
            line(g, "if (blockIdx.x != 0)");
            line(g, "    goto b%d;", (int)g->start[eb]);
            g->label_used[eb] = 1;
            if (!g->follower[eb])
                fail(g, "internal error: the exit of the region at record %d has no label", (int)h);
        }
    }
    if (g->header[x]) {
        if (g->pass == 2)
            g->info->loops++;
        resident_loads(g, x);
        line_reads(g, "for (;;) {");
        g->indent++;
        if (g->pass == 1 || g->top_used[x])
            line_reads(g, "t%d:;", (int)g->start[x]);
        g->stack[g->nctx++] = (ctx){CTX_LOOP, x, next};
        node_within(g, x, in, nin, x, region);
        g->nctx--;
        g->indent--;
        line(g, "}");
    } else {
        node_within(g, x, in, nin, next, region);
    }
    for (int32_t k = 0; k < nafter && !g->failed; k++) {
        if (g->pass == 1 || g->label_used[after[k]])
            line_reads(g, "b%d:;", (int)g->start[after[k]]);
        do_tree(g, after[k], k + 1 < nafter ? after[k + 1] : ft);
    }
    free(in);
    free(after);
    g->depth--;
}

/* ==== the pc-dispatch loop ==================================================================== */

static void dispatch_branch(gen *g, int32_t to)
{
    line(g, "pc_ = %d;", (int)g->start[to]);
    line(g, "break;");
}

static void dispatch(gen *g)
{
    const cfx_prog *p = g->p;
    texts t;
    memset(&t, 0, sizeof t);
    line(g, "int32_t pc_ = 0;");
    if (g->cuda)
        line(g, "int32_t region_ = -1; /* the region block 0 is running */");
    resume_entry(g);
    line_reads(g, "for (;;) {");
    g->indent++;
    line(g, "switch (pc_) {");
    for (int32_t i = 0; i < g->nreach && !g->failed; i++) {
        int32_t x = g->order[i], lo = g->start[x], hi = g->start[x + 1];
        g->cur = lo;
        line_reads(g, "case %d: {", (int)lo);
        g->indent++;
        if (region_header(g, x)) {
            unsigned f = g->plan.flags[lo];
            if (f & SCHED_F_REGION_EXIT) {
                /* the exit of the region before, unless block 0 comes round this region's loop */
                line(g, "if (region_ != %d) {", (int)lo);
                g->indent++;
                region_exit_actions(g, lo);
                line(g, "region_ = -1;");
                g->indent--;
                line(g, "}");
            }
            line(g, "if (region_ < 0) {");
            g->indent++;
            if (f & SCHED_F_ENTRY_BARRIER)
                grid_barrier(g, lo);
            line(g, "CK_STAMP(a, CK_EV_REGION, %d);", (int)lo);
            if (!g->redundant[x]) {
                line(g, "if (blockIdx.x != 0) {");
                dispatch_branch(g, to_block(g, g->region_end[x]));
                line(g, "}");
            }
            line(g, "region_ = %d;", (int)lo);
            g->indent--;
            line(g, "}");
        } else if (g->cuda && g->have_plan && (g->plan.flags[lo] & SCHED_F_REGION_EXIT)) {
            line(g, "region_ = -1;");
        }
        for (int32_t r = lo; r < hi && !g->failed; r++) {
            const cfx_record *rec = &p->records[r];
            g->cur = r;
            arrive(g, r, region_header(g, x) && r == lo);
            REC_COUNT_IS(34);
            switch (rec->kind) {
            case REC_HALT:
                line(g, "goto halt_;");
                g->halt_used = 1;
                break;
            case REC_JUMP:
                dispatch_branch(g, to_block(g, rec->a));
                break;
            case REC_JUMP_FALSE:
            case REC_JUMP_TRUE:
                line_reads_if(g, reads_value(g, rec->a), "if (%s%s) {", rec->kind == REC_JUMP_FALSE ? "!" : "",
                              V(g, &t, rec->a));
                g->indent++;
                dispatch_branch(g, to_block(g, rec->b));
                g->indent--;
                line(g, "}");
                dispatch_branch(g, to_block(g, r + 1));
                break;
            case REC_SWITCH: {
                line(g, "{");
                g->indent++;
                line_reads_if(g, reads_value(g, rec->a), "int32_t v_ = %s;", V(g, &t, rec->a));
                line_reads(g, "pc_ = v_ >= 0 && v_ < %d ? ck_table%d_[v_] : %d;", (int)rec->c, (int)r,
                     (int)g->start[to_block(g, p->table[rec->b + rec->c])]);
                g->indent--;
                line(g, "}");
                line(g, "break;");
                break;
            }
            default: {
                int32_t ep = product_epilogue(g, r);
                int ahead = computed_ahead(g, r);
                if (!ahead)
                    cancel_poll(g, r, ep >= 0 ? ep : r);
                if (ahead)
                    line(g, "/* record %d: computed an iteration ahead, after record %d */", (int)r,
                         (int)g->plan.ahead_at[r]);
                else if (ep >= 0)
                    product_with_reduction(g, r, ep); /* record ep then says it is folded */
                else
                    record(g, r);
                ahead_products(g, r, r);
                if (r + 1 == hi)
                    dispatch_branch(g, to_block(g, hi));
                break;
            }
            }
        }
        g->indent--;
        line(g, "}");
    }
    line(g, "}");
    g->indent--;
    line(g, "}");
    texts_free(g, &t);
}

/* The switch tables of the dispatch loop, as static arrays of record indices. */
static void dispatch_tables(gen *g)
{
    const cfx_prog *p = g->p;
    for (int32_t i = 0; i < p->nrecords; i++) {
        const cfx_record *r = &p->records[i];
        if (r->kind != REC_SWITCH || g->rpo[g->blk[i]] < 0)
            continue;
        strbuf sb = {0};
        for (int32_t k = 0; k < r->c; k++)
            sb_printf(&sb, "%s%d", k ? ", " : "", (int)g->start[to_block(g, p->table[r->b + k])]);
        line_reads(g, "%sconst int32_t ck_table%d_[%d] = {%s};", g->cuda ? "" : "static ", (int)i,
             (int)(r->c > 0 ? r->c : 1), r->c > 0 ? sb_str(&sb) : "0");
        if (sb.oom)
            fail(g, "out of memory");
        sb_free(&sb);
    }
}

/* ==== the function ============================================================================ */

static void function(gen *g, const char *entry, int use_dispatch)
{
    const cfx_prog *p = g->p;
    g->dispatching = use_dispatch;
    g->halt_used = g->stop_used = 0;
    g->indent = 0;
    g->cur = -1;
    g->nctx = 0;
    g->depth = 0;
    if (g->cuda) {
        /* two blocks per multiprocessor, as the executor launches them at most: registers
         * enough for both (a kernel that needs more spills rather than runs one block per
         * multiprocessor, half the warps to hide memory's latency) */
        line(g, "extern \"C\" __global__ void __launch_bounds__(CK_THREADS, 2) %s(const ck_args a)",
             entry);
        line(g, "{");
        g->indent++;
        line_reads(g, "uint8_t *const arena = a.arena;");
        for (int32_t i = 0; i < p->nrecords; i++)
            if (p->records[i].kind == REC_REDUCE || p->records[i].kind == REC_DOT) {
                line_reads(g, "__shared__ k_acc red_[CK_THREADS];");
                break;
            }
        if (g->rep_bytes > 0) {
            /* the replicas, loaded from the arena (ck_load_replicas waits for the block) */
            line_reads(g, "__shared__ __align__(16) uint8_t rep_[%lld];", (long long)g->rep_bytes);
            for (int32_t s = 0; s < p->nslots; s++)
                if (g->rep[s])
                    line_reads(g, "ck_block_copy(rep_ + %d, arena + %lld, %lld);", (int)g->rep_off[s],
                         (long long)p->slots[s].offset, (long long)slot_bytes(&p->slots[s]));
            block_barrier(g, BARRIER_PHASE);
        }
        line(g, "uint64_t iters_ = 0;");
        line(g, "uint32_t print_used_ = 0, combines_ = 0, exits_ = 0;");
        line(g, "unsigned long long poll_ = 0;");
        line_reads(g, "const int64_t budget_ = *(const volatile int64_t *)&a.sync->max_iters;");
        line_reads(g, "CK_STAMP(a, CK_EV_START, *(const volatile int32_t *)&a.sync->resume - 1);");
        if (tick_ordinal(g, p->nrecords) > 0)
            line(g, "CK_TICKS(%d);", (int)tick_ordinal(g, p->nrecords));
        if (g->info->alternates > 0)
            line_reads(g, "uint8_t *const alt_ = a.alt; /* the second buffers of the tensors that alternate */");
        for (int32_t i = 0; i < p->nrecords; i++)
            if (p->records[i].kind == REC_TICK && alternates_at(g, i))
                line(g, "uint32_t par%d_ = 0; (void)par%d_;", (int)i, (int)i);
        line(g, "(void)combines_; (void)exits_; (void)print_used_; (void)budget_;");
    } else {
        line(g, "void %s(cgen_host_args *a)", entry);
        line(g, "{");
        g->indent++;
        line_reads(g, "uint8_t *const arena = a->arena;");
        line_reads(g, "const int64_t limit_ = a->max_iters > 0 ? a->max_iters : INT64_MAX;");
        line(g, "int64_t iters_ = 0;");
        line_reads(g, "(void)arena; (void)limit_;");
    }
    /* the scalars: inputs from the arena, everything else zero, as the arena starts */
    for (int32_t s = 0; s < p->nslots; s++) {
        const cfx_slot *sl = &p->slots[s];
        if (!g->local[s])
            continue;
        if (sl->kind == SLOT_INPUT)
            line_reads(g, "%s s%d = *(const %s *)(arena + %lld);", ctype(sl->dtype), (int)s,
                 ctype(sl->dtype), (long long)sl->offset);
        else
            line(g, "%s s%d = 0;", ctype(sl->dtype), (int)s);
    }
    int any = 0;
    for (int32_t s = 0; g->cuda && g->res_k && !use_dispatch && s < p->nslots; s++)
        if (g->res_k[s]) {
            line_reads(g, "%s r%d_[%d]; /* its elements of the share, in registers (resident_loads) */",
                 ctype(p->slots[s].dtype), (int)s, (int)g->res_k[s]);
            any = 1;
        }
    int64_t stash = 0;
    for (int32_t i = 0; g->cuda && i < p->nrecords; i++)
        if (product_epilogue(g, i) >= 0 && product_share_bytes(g, i) > stash)
            stash = product_share_bytes(g, i);
    if (stash > 0) { /* a product's rows for the reduction after it (product_with_reduction) */
        line_reads(g, "__shared__ __align__(16) uint8_t ep_[%lld];", (long long)stash);
        any = 1;
    }
    if (any) { /* the registers and the stash hold a thread's, a block's elements only in a grid this big */
        line(g, "if (gridDim.x < %dU || blockDim.x < %dU) {", g->opt->blocks, g->opt->threads);
        line(g, "    if (blockIdx.x == 0 && threadIdx.x == 0)");
        line(g, "        ck_raise(a, CK_ERROR, 0, %d, %d);", g->opt->blocks, g->opt->threads);
        line(g, "    ck_finish(a, 0, 0);");
        line(g, "    return;");
        line(g, "}");
    }
    if (use_dispatch) {
        dispatch_tables(g);
        dispatch(g);
    } else {
        resume_entry(g);
        do_tree(g, 0, -1);
    }
    /* HALT: the scalar results go to their slots */
    if (g->halt_used || g->pass == 1) {
        line_reads(g, "halt_:");
        if (g->cuda) {
            results_after_loads(g);
            line(g, "if (blockIdx.x == 0 && threadIdx.x == 0) {");
            g->indent++;
        }
        for (int32_t k = 0; k < p->nresults; k++) {
            int32_t s = p->results[k];
            if (g->local[s])
                line_reads(g, "*(%s *)(arena + %lld) = s%d;", ctype(p->slots[s].dtype),
                     (long long)p->slots[s].offset, (int)s);
        }
        if (g->cuda) {
            g->indent--;
            line(g, "}");
            for (int32_t k = 0; k < p->nresults; k++) {
                int32_t s = p->results[k];
                if (g->rep && g->rep[s])
                    line_reads(g, "if (blockIdx.x == 0) ck_block_copy(arena + %lld, rep_ + %d, %lld);",
                         (long long)p->slots[s].offset, (int)g->rep_off[s], (long long)slot_bytes(&p->slots[s]));
            }
        } else {
            line_reads(g, "a->status = 0;");
            line_reads(g, "a->record = -1;");
            line_reads(g, "a->detail[0] = a->detail[1] = 0;");
            line_reads(g, "a->iterations = iters_;");
            line(g, "return;");
        }
    }
    if (g->cuda) {
        line(g, "goto out_;");
        line_reads(g, "out_:");
        line(g, "CK_STAMP(a, CK_EV_END, -1);");
        if (tick_ordinal(g, p->nrecords) > 0)
            line(g, "CK_TICKS_OUT(a, %d);", (int)tick_ordinal(g, p->nrecords));
        line(g, "ck_finish(a, iters_, print_used_);");
    } else if (g->stop_used || g->pass == 1) {
        line_reads(g, "stop_:");
        line_reads(g, "a->iterations = iters_;");
    }
    g->indent--;
    line(g, "}");
}

/* ==== the entry point ========================================================================= */

/* Per slot the first and last record that touches it, per record whether a tensor alternates
 * its buffers there (CUDA) and the TICKs before it: asked for each fused loop and each TICK. */
static int touch_ranges(gen *g)
{
    const cfx_prog *p = g->p;
    g->tfirst = malloc(sizeof(int32_t) * ((size_t)p->nslots + 1));
    g->tlast = malloc(sizeof(int32_t) * ((size_t)p->nslots + 1));
    g->alt_at = calloc((size_t)p->nrecords + 1, 1);
    g->ticks_before = malloc(sizeof(int32_t) * ((size_t)p->nrecords + 1));
    if (!g->tfirst || !g->tlast || !g->alt_at || !g->ticks_before) {
        fail(g, "out of memory");
        return -1;
    }
    for (int32_t s = 0; s < p->nslots; s++) {
        g->tfirst[s] = INT32_MAX;
        g->tlast[s] = -1;
        if (g->alt_off && g->alt_off[s] >= 0 && g->plan.alt_tick[s] >= 0)
            g->alt_at[g->plan.alt_tick[s]] = 1;
    }
    g->ticks_before[0] = 0;
    for (int32_t i = 0; i < p->nrecords; i++)
        g->ticks_before[i + 1] = g->ticks_before[i] + (p->records[i].kind == REC_TICK);
    for (int32_t i = 0; i < p->nrecords; i++) {
        const cfx_record *r = &p->records[i];
        for (int32_t k = 0, n = rec_slot_operands(p, r); k < n; k++) {
            int32_t s = rec_slot_operand(p, r, k);
            if (g->tfirst[s] > i)
                g->tfirst[s] = i;
            g->tlast[s] = i;
        }
    }
    return 0;
}

static void gen_free(gen *g)
{
    free(g->tfirst);
    free(g->tlast);
    free(g->alt_at);
    free(g->ticks_before);
    free(g->res_k);
    free(g->res_loop);
    free(g->local);
    free(g->rep);
    free(g->rep_off);
    free(g->alt_off);
    free(g->pub);
    free(g->start);
    free(g->blk);
    free(g->soff);
    free(g->sv);
    free(g->poff);
    free(g->pv);
    free(g->rpo);
    free(g->order);
    free(g->idom);
    free(g->header);
    free(g->loop_of);
    free(g->loop_parent);
    free(g->region_end);
    free(g->redundant);
    free(g->parent);
    free(g->follower);
    free(g->koff);
    free(g->kids);
    free(g->bodies);
    free(g->label_used);
    free(g->top_used);
    free(g->heavy);
    if (g->have_plan)
        sched_plan_free(&g->plan);
}

/* Refuses what the target cannot run. */
static int check_program(gen *g)
{
    const cfx_prog *p = g->p;
    for (int32_t i = 0; i < p->nrecords; i++) {
        const cfx_record *r = &p->records[i];
        if (r->kind >= REC_COUNT || !kind_known(r->kind)) {
            fail(g, "record %d: record kind %s is not known to the code generator", (int)i,
                 r->kind < REC_COUNT ? rec_names[r->kind] : "(out of range)");
            return -1;
        }
        if ((r->kind == REC_UNARY && !unary_stem(r->op, r->dtype) && (r->flags & REC_F_SCALAR)) ||
            (r->kind == REC_BINARY && !binary_stem(r->op, r->dtype) && (r->flags & REC_F_SCALAR))) {
            fail(g, "record %d: op %s on %s has no scalar function in kernels/", (int)i,
                 op_name(r->op), cfx_dtype_name((cfx_dtype)r->dtype));
            return -1;
        }
    }
    return 0;
}

int cgen_emit(const cfx_prog *p, const cgen_options *opt, strbuf *out, cgen_info *info, char *err,
              size_t errlen)
{
    gen g;
    cgen_info local_info;
    cgen_options defaults = {CGEN_TARGET_C, 0, NULL, NULL, NULL, NULL, 0, 0, 0};
    strbuf scratch = {0};
    int rc = -1;
    memset(&g, 0, sizeof g);
    g.ahead_out = -1;
    if (!opt)
        opt = &defaults;
    if (!info)
        info = &local_info;
    memset(info, 0, sizeof *info);
    g.p = p;
    g.opt = opt;
    g.cuda = opt->target == CGEN_TARGET_CUDA;
    g.info = info;
    g.err = err;
    g.errlen = errlen;
    if (err && errlen)
        err[0] = '\0';
    const char *entry = opt->entry ? opt->entry : g.cuda ? "cfx_compiled" : "cgen_run";

    if (p->nrecords < 1) {
        fail(&g, "the program has no records");
        goto done;
    }
    if (check_program(&g) != 0)
        goto done;
    g.local = calloc((size_t)p->nslots + 1, 1);
    g.pub = malloc(sizeof(int32_t) * ((size_t)p->nslots + 1));
    if (!g.local || !g.pub) {
        fail(&g, "out of memory");
        goto done;
    }
    for (int32_t s = 0; s < p->nslots; s++) {
        g.local[s] = (uint8_t)sched_slot_private(&p->slots[s]);
        g.pub[s] = g.local[s] ? g.nlocal++ : -1;
    }
    info->publish_bytes = 16 + 8 * (int64_t)g.nlocal;
    if (build_plan(&g) != 0 || touch_ranges(&g) != 0 || build_blocks(&g) != 0 || number_blocks(&g) != 0 ||
        find_dominators(&g) != 0)
        goto done;
    if (g.have_plan && g.plan.nreplicas > 0) {
        /* the plan's replicas live in the block's rep_ array, after the scalars when published */
        g.rep = calloc((size_t)p->nslots + 1, 1);
        g.rep_off = malloc(sizeof(int32_t) * ((size_t)p->nslots + 1));
        if (!g.rep || !g.rep_off) {
            fail(&g, "out of memory");
            goto done;
        }
        for (int32_t k = 0; k < g.plan.nreplicas; k++) {
            int32_t s = g.plan.replicas[k];
            g.rep[s] = 1;
            g.rep_off[s] = (int32_t)g.rep_bytes;
            g.rep_bytes += (slot_bytes(&p->slots[s]) + 15) / 16 * 16;
        }
        info->publish_bytes = (info->publish_bytes + 15) / 16 * 16 + g.rep_bytes;
    }
    info->blocks = g.nreach;
    int reducible = find_loops(&g);
    if (g.failed || plan_regions(&g) != 0 || place_blocks(&g) != 0 || pick_resident(&g) != 0)
        goto done;
    for (int32_t i = 0; i < p->nrecords; i++) {
        if (g.rpo[g.blk[i]] < 0)
            continue;
        if (!scalar_record(&g, &p->records[i]) || record_touches_tensor(&g, &p->records[i]))
            info->needs_block = 1;
        if (g.have_plan && (g.plan.flags[i] & (SCHED_F_SPLIT | SCHED_F_COMBINE |
                                               SCHED_F_BARRIER_BEFORE | SCHED_F_ENTRY_BARRIER)))
            info->needs_grid = 1;
    }
    for (int32_t b = 0; b < g.nb; b++)
        if (region_header(&g, b)) {
            info->regions++;
            info->redundant += g.redundant[b];
        }
    for (int32_t i = 0; g.have_plan && i < p->nrecords; i++)
        if ((g.plan.flags[i] & SCHED_F_LAUNCH) && g.rpo[g.blk[i]] >= 0)
            g.nlaunch++;
    info->launches = g.nlaunch;
    int use_dispatch = opt->force_dispatch || !reducible;
    const char *why = !reducible            ? "irreducible control flow"
                      : opt->force_dispatch ? "asked for"
                                            : "";

    /* pass 1 finds the labels in use, pass 2 writes; a nest too deep for the structured form
     * is written as the dispatch loop */
    g.out = &scratch;
    g.pass = 1;
    function(&g, entry, use_dispatch);
    if (g.too_deep && !use_dispatch) {
        g.failed = 0;
        g.too_deep = 0;
        use_dispatch = 1;
        why = "blocks nested too deeply";
        function(&g, entry, use_dispatch);
    }
    if (g.failed)
        goto done;
    info->structured = !use_dispatch;
    snprintf(info->why_dispatch, sizeof info->why_dispatch, "%s", why);
    g.out = out;
    g.pass = 2;
    sb_printf(out, "/* %s: graph '%s' of %s, %d records, generated by cfx (%s, %s) */\n", entry,
              p->name ? p->name : "?", p->file ? p->file : "?", (int)p->nrecords,
              g.cuda ? "CUDA" : "C", use_dispatch ? "pc-dispatch loop" : "structured");
    if (g.cuda)
        sb_puts(out, "#include \"compiled_kernel.cuh\"\n\n");
    else
        sb_puts(out, "#include <math.h>\n#include <stdatomic.h>\n#include <stdint.h>\n#include <string.h>\n\n"
                     "#include \"cgen.h\"\n#include \"kernels.h\"\n\n");
    /* the kernels given by their source, each once per file, renamed (source_op.h) */
    for (int32_t k = 0; k < p->nkernels; k++)
        if (prog_kernel_form(p, k) != KERNEL_BINARY) {
            char after[96];
            snprintf(after, sizeof after, "%s (generated)", entry);
            sop_write_unit(out, p->strings + p->kernels[k], p->strings + p->kernel_source[k], after);
        }
    function(&g, entry, use_dispatch);
    sb_puts(out, "\n");
    if (out->oom || scratch.oom) {
        fail(&g, "out of memory");
        goto done;
    }
    rc = 0;
done:
    sb_free(&scratch);
    gen_free(&g);
    return rc;
}

int cgen_default_kernel(const cfx_prog *p, int target, strbuf *out, char *err, size_t errlen)
{
    cgen_options o;
    memset(&o, 0, sizeof o);
    o.target = target;
    if (target == CGEN_TARGET_CUDA) { /* device/compiled.cu's generate */
        o.launch_product_min = SCHED_LAUNCH_PRODUCT_MIN;
        o.blocks = CGEN_DEFAULT_BLOCKS;
        o.threads = 256; /* CK_THREADS */
    }
    return cgen_emit(p, &o, out, NULL, err, errlen);
}
