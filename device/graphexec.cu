/* graphexec.cu: the cuda-graph executor, NVIDIA's device-side answer to control flow.
 *
 * The program becomes one CUDA graph, built once per program and replayed per run, whose
 * control flow is made of conditional nodes (CUDA 12.8: WHILE and SWITCH) and whose
 * decisions are taken by tiny kernels that call cudaGraphSetConditional on the device. The
 * host launches the graph and waits; it decides nothing.
 *
 * How records map to nodes: a program counter machine.
 * The records are cut into basic blocks (a block starts at record 0, at every jump target,
 * after every control record, and at every CALL). The graph is
 *
 *     init (pc = 0) -> WHILE(w) { dispatch -> SWITCH(s) { body 0 | body 1 | ... } }
 *
 * `dispatch` reads the block number `pc` from device memory and sets s = pc and w = 1, or,
 * once pc is -1 (the program halted or stopped), s = out of range (no body runs) and w = 0.
 * The body of case k holds block k's op work, captured from the same launches cuda-host
 * makes (cuBLAS and application kernels included; should the instantiation refuse
 * cuBLAS's captured launches inside conditional bodies, the graph is built again with
 * cfx's own product kernel, see build_checked), then the blocks that an unconditional
 * jump or a fall-through leads to (up to GRAPH_CHAIN_MAX blocks, never around a cycle), and
 * ends with one `step` kernel that evaluates the closing JUMP_FALSE / JUMP_TRUE / SWITCH /
 * JUMP / HALT and writes the next pc. A `while` loop's back-edge therefore runs its head (the
 * condition, then the TICK that opens the body) in the same body: one WHILE iteration per
 * loop iteration when the body has no branch, one more per branch taken inside it.
 *
 * Structured constructs become their own conditional nodes inside a body: a loop (condition,
 * JUMP_FALSE to the exit, TICK, a body, JUMP back to the condition) whose body has no jump
 * leaving it is a WHILE node (the first test before it, then WHILE { TICK; body; test }); an
 * if (JUMP_FALSE or JUMP_TRUE forward, with an else-part when the then-part ends in a JUMP
 * forward) is an IF node with one or two bodies; they nest. That is the graph a CUDA user would write by hand,
 * and a simple loop costs one WHILE iteration with no dispatch. What does not fit (break,
 * continue, return, the short-circuit `and`/`or` of a loop condition, switch, a CALL inside)
 * stays with the pc machine: its jumps leave their construct, and mapping those onto nested
 * nodes would need flags and guards around every later node. So no program is refused or
 * run wrong; an unrecognised pattern costs a dispatch and a SWITCH per block, never
 * correctness.
 *
 * Run statuses: guards (TICK, ASSERT, CHECK_*) are inline kernels that write dev_state (the
 * first stop wins; after it, later guards, TICKs and prints in the body do nothing, and op
 * kernels that still run only compute values nobody will see, since their kernels never
 * read out of bounds). The step kernel sees the stop and sets pc = -1, which ends the
 * WHILE: no later body runs, and a CALL, which always starts its own block, never runs
 * after a stop. The results are copied out by dev_copy_results only if the state is ok.
 * TICK counts iterations in dev_state against the budget (copied from the host-mapped
 * control block once per run) and polls the control block's cancel flag, which the host sets
 * from cfx_cancel's while it waits for the run (so an async run sees a cancel once cfx_wait
 * is called). PRINT
 * cannot call the host from inside a conditional body (host nodes are not allowed there), so
 * it appends its value to a device log that the host replays, in order, through run->print
 * when the run has ended.
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

#if CUDART_VERSION >= 12080

#define GRAPH_LOG_BYTES ((int64_t)4 << 20) /* print output one run may hold */
#define STEP_FALLTHROUGH (-1)             /* a block that ends because the next one starts */
#define STEP_DIVIDE_FLAG (-2)             /* CHECK_DIVIDE over a tensor: operand is a flag */
#define GRAPH_CHAIN_MAX 8                 /* blocks one SWITCH case may run back to back */

/* The device side of a run, beside dev_state: the block counter and the print log. */
typedef struct graph_dev {
    int32_t pc;        /* block to run next; -1 once the program halted or stopped */
    int32_t overflow;  /* 1 if a print did not fit in the log */
    int64_t log_used;  /* bytes of log written */
    int64_t max_iters; /* the budget, copied from the host-mapped control block per run */
    int32_t flag;      /* any_zero result for CHECK_DIVIDE over a tensor */
    int32_t pad_;
} graph_dev;

/* A TICK reads the host-mapped cancel flag (a read across PCIe, about a microsecond) only on
 * every GRAPH_CANCEL_POLL-th iteration: a cancel is honoured a few iterations later, and a
 * loop pays for the poll a little rather than on every iteration. */
#define GRAPH_CANCEL_POLL 16

/* A print log entry: this header, then the value's bytes, padded to 16. */
typedef struct graph_log_entry {
    int32_t record;
    int32_t pad_;
    int64_t bytes;
} graph_log_entry;

/* What a block's step kernel needs to know about the block's last record. */
typedef struct graph_step {
    int32_t kind;        /* REC_* of the last record, or STEP_FALLTHROUGH / STEP_DIVIDE_FLAG */
    int32_t record;      /* its index, for the stop position */
    int32_t next;        /* block after this one (fall through, branch not taken) */
    int32_t target;      /* block a taken jump goes to */
    int32_t bound;       /* CHECK_INDEX: the row count; CHECK_BOUND: what is checked */
    int32_t ncases;      /* SWITCH: cases before the default */
    int32_t dtype;       /* dtype of the operand */
    int32_t pad_;
    const void *operand; /* the slot (or flag) the record reads */
    const int32_t *cases; /* SWITCH: ncases + 1 block numbers on the device */
    const void *operand2; /* CHECK_BOUND: its second slot (bound says what is checked) */
    int32_t dtype2;
    int32_t pad2_;
} graph_step;

/* ==== device code ========================================================================= */

static __global__ void graph_init_kernel(graph_dev *g, const dev_control *ctl)
{
    g->pc = 0;
    g->overflow = 0;
    g->log_used = 0;
    g->max_iters = ctl->max_iters;
}

/* A profiled graph (built with stamps): a stamp after each plain record's work gives that record
 * the device's time since the last stamp (the global timer), so what the dispatch, step and
 * condition kernels between cost lands on the record after them; `prof` holds the last stamp's
 * time, then n counts, then n times in nanoseconds. record -1 is the run's first stamp. A record
 * stamped after a stop that was not its own is not counted (its work did nothing). */
static __global__ void graph_stamp_kernel(unsigned long long *prof, int32_t n, int32_t record, const dev_state *st)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    int32_t status = *(volatile const int32_t *)&st->status;
    if (record >= 0 && (status == CFX_OK || st->record == record)) {
        prof[1 + record]++;
        prof[1 + n + record] += t - prof[0];
    }
    prof[0] = t;
}

static __global__ void graph_dispatch_kernel(const graph_dev *g, cudaGraphConditionalHandle loop,
                                             cudaGraphConditionalHandle sw, int32_t nblocks)
{
    int32_t pc = g->pc;
    if (pc < 0 || pc >= nblocks) {
        cudaGraphSetConditional(sw, (unsigned)nblocks); /* out of range: no body runs */
        cudaGraphSetConditional(loop, 0);
    } else {
        cudaGraphSetConditional(sw, (unsigned)pc);
        cudaGraphSetConditional(loop, 1);
    }
}

static __device__ void graph_stop(dev_state *st, int status, int32_t record, int64_t d0, int64_t d1)
{
    /* first stop wins, as dev.h asks; kernels of one body run one after another anyway */
    if (atomicCAS(&st->status, (int32_t)CFX_OK, (int32_t)status) == (int32_t)CFX_OK) {
        st->record = record;
        st->detail[0] = d0;
        st->detail[1] = d1;
    }
}

/* A CALL whose application kernel has no CUDA function, or whose cuda_fn failed while its
 * work was captured: replayed where the CALL's work would run, it stops the run with
 * CFX_ERROR at that record, as the cpu, cuda-host and cuda-persistent executors do. On the
 * device rather than at build time, so only a run that reaches the CALL stops there. */
static __global__ void graph_call_failed_kernel(dev_state *st, int32_t record)
{
    if (*(volatile int32_t *)&st->status != CFX_OK) return;
    graph_stop(st, CFX_ERROR, record, 0, 0);
}

/* A guard record (TICK, ASSERT, CHECK_*) inside a body. After a stop it does nothing, so the
 * first stop in program order is the one reported and TICK stops counting. */
static __global__ void graph_guard_kernel(graph_step s, dev_state *st, const graph_dev *g,
                                          const dev_control *ctl)
{
    if (*(volatile int32_t *)&st->status != CFX_OK) return;
    switch (s.kind) {
    case REC_TICK: {
        int64_t max = g->max_iters;
        if (st->iterations % GRAPH_CANCEL_POLL == 0 && *(volatile const int32_t *)&ctl->cancel)
            graph_stop(st, CFX_STOP_CANCELLED, s.record, 0, 0);
        else if (max > 0 && (int64_t)st->iterations >= max)
            graph_stop(st, CFX_STOP_LIMIT, s.record, max, 0);
        else
            st->iterations++;
        break;
    }
    case REC_ASSERT:
        if (k_load_int(s.dtype, s.operand) == 0) graph_stop(st, CFX_STOP_ASSERT, s.record, 0, 0);
        break;
    case REC_CHECK_INDEX: {
        int64_t v = k_load_int(s.dtype, s.operand);
        if (v < -(int64_t)s.bound || v >= (int64_t)s.bound) graph_stop(st, CFX_STOP_INDEX, s.record, v, s.bound);
        break;
    }
    case REC_CHECK_DIVIDE:
        if (k_load_int(s.dtype, s.operand) == 0) graph_stop(st, CFX_STOP_DIVIDE, s.record, 0, 0);
        break;
    case REC_CHECK_BOUND: {
        int64_t va = k_load_int(s.dtype, s.operand), vb = k_load_int(s.dtype2, s.operand2);
        if (!k_bound_ok(s.bound, va, vb)) graph_stop(st, CFX_STOP_INDEX, s.record, va, vb);
        break;
    }
    case STEP_DIVIDE_FLAG:
        if (*(const int32_t *)s.operand != 0) graph_stop(st, CFX_STOP_DIVIDE, s.record, 0, 0);
        break;
    case REC_CHECK_STEP:
        if (k_load_int(s.dtype, s.operand) == 0) graph_stop(st, CFX_STOP_VALUE, s.record, 0, 0);
        break;
    }
}

/* The last node of every body: evaluates the body's closing control record and writes the
 * next block, or -1 once the program halted or a guard of the body stopped it. */
static __global__ void graph_step_kernel(graph_step s, const dev_state *st, graph_dev *g)
{
    int32_t next = s.next;
    if (*(volatile const int32_t *)&st->status != CFX_OK) {
        g->pc = -1;
        return;
    }
    switch (s.kind) {
    case STEP_FALLTHROUGH:
        break;
    case REC_HALT:
        next = -1;
        break;
    case REC_JUMP:
        next = s.target;
        break;
    case REC_JUMP_FALSE:
        if (k_load_int(s.dtype, s.operand) == 0) next = s.target;
        break;
    case REC_JUMP_TRUE:
        if (k_load_int(s.dtype, s.operand) != 0) next = s.target;
        break;
    case REC_SWITCH: {
        int64_t v = k_load_int(s.dtype, s.operand);
        next = s.cases[v >= 0 && v < s.ncases ? v : s.ncases];
        break;
    }
    }
    g->pc = next;
}

/* Appends one printed value to the log; one block copies it. Nothing after a stop: a print
 * that follows a failed guard in the same body never ran on the cpu either. */
static __global__ void graph_print_kernel(const dev_state *st, graph_dev *g, uint8_t *log, int64_t cap,
                                          int32_t record, const uint8_t *src, int64_t bytes)
{
    __shared__ int64_t at;
    if (threadIdx.x == 0) {
        int64_t need = (int64_t)sizeof(graph_log_entry) + (bytes + 15) / 16 * 16;
        at = g->log_used;
        if (*(volatile const int32_t *)&st->status != CFX_OK) {
            at = -1;
        } else if (at + need > cap) {
            g->overflow = 1;
            at = -1;
        } else {
            graph_log_entry *e = (graph_log_entry *)(log + at);
            e->record = record;
            e->pad_ = 0;
            e->bytes = bytes;
            g->log_used = at + need;
        }
    }
    __syncthreads();
    if (at < 0) return;
    uint8_t *dst = log + at + sizeof(graph_log_entry);
    for (int64_t i = threadIdx.x; i < bytes; i += blockDim.x) dst[i] = src[i];
}

/* ==== building the graph =================================================================== */

typedef struct graphexec {
    dev_prog d;
    const cfx_prog *prog;
    cudaStream_t own;       /* runs go here when the caller names no stream */
    cudaStream_t capture;   /* the stream block bodies are captured on */
    blas_ctx *blas;
    launch_env env;
    graph_dev *g;           /* device */
    uint8_t *log;           /* device, GRAPH_LOG_BYTES */
    uint8_t *log_host;      /* pinned copy of the log after a run */
    int32_t *cases;         /* device: block numbers laid out like prog->table */
    int32_t *block_of;      /* host: block number of each record that starts one, else -1 */
    int32_t nblocks;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    struct graph_work *work; /* bodies of conditional nodes still to capture */
    int nwork, capwork;
    int capturing;          /* a capture on `capture` is open (to close it on failure) */
    int instantiate_failed; /* the last build_graph failed at instantiation */
    int own_products;       /* products in the bodies use cfx's kernel, not cuBLAS (build_checked) */
    char note[512];         /* what build_checked fell back to, or "" */
    int prof_build;         /* the graph has the profile's stamps (graph_stamp_kernel) */
    unsigned long long *prof; /* device, 1 + 2 * nrecords: the stamps' table */
    exec_kernel *kernels;   /* the application kernels the graph was captured with */
    int32_t nkernels;
    int call_failed;        /* a cuda_fn failed at capture: capture again at the next run */
    /* the run in flight */
    exec_run run;
    cudaStream_t stream;
    int in_flight;
    int captured;           /* the last run was recorded by the application's capture (graph_capture) */
    double t_start;
    exec_outcome out;
} graphexec;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int is_guard(int kind)
{
    return rec_family(kind) == REC_FAM_CHECK;
}

static int is_control(int kind)
{
    return rec_family(kind) == REC_FAM_CONTROL;
}

/* Marks block starts (record 0, jump targets, records after a control record, CALL records)
 * and numbers the blocks in record order. */
static int find_blocks(graphexec *x, char *err, size_t errlen)
{
    const cfx_prog *p = x->prog;
    int32_t n = p->nrecords;
    x->block_of = (int32_t *)malloc(sizeof(int32_t) * (size_t)n);
    if (!x->block_of) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int32_t i = 0; i < n; i++) x->block_of[i] = 0;
    x->block_of[0] = 1;
    for (int32_t i = 0; i < n; i++) {
        const cfx_record *r = &p->records[i];
        if (is_control(r->kind) && i + 1 < n) x->block_of[i + 1] = 1;
        /* an application kernel must not run after a failed guard: its block is entered
         * only from dispatch, which a stop has already ended */
        if (r->kind == REC_CALL) x->block_of[i] = 1;
        if (r->kind == REC_JUMP) x->block_of[r->a] = 1;
        if (r->kind == REC_JUMP_FALSE || r->kind == REC_JUMP_TRUE) x->block_of[r->b] = 1;
        if (r->kind == REC_SWITCH)
            for (int32_t c = 0; c <= r->c; c++) x->block_of[p->table[r->b + c]] = 1;
    }
    x->nblocks = 0;
    for (int32_t i = 0; i < n; i++) x->block_of[i] = x->block_of[i] ? x->nblocks++ : -1;
    return 0;
}

/* Adds a node; the signature gained edge data in CUDA 13. */
static cudaError_t add_node(cudaGraphNode_t *node, cudaGraph_t graph, const cudaGraphNode_t *deps,
                            size_t ndeps, cudaGraphNodeParams *params)
{
#if CUDART_VERSION >= 13000
    return cudaGraphAddNode(node, graph, deps, NULL, ndeps, params);
#else
    return cudaGraphAddNode(node, graph, deps, ndeps, params);
#endif
}

/* Captures a CALL record: the application's kernel enqueues on the capture stream. A kernel
 * with no CUDA function (or no kernels at all: run->kernels may be NULL, as cpu.c allows), or
 * a cuda_fn that returns non-zero, is not a failed build: it becomes a graph_call_failed_kernel
 * in the CALL's block, so the run stops with CFX_ERROR at this record, as on the other
 * executors. The cuda_fn runs once, here, and its captured work is replayed by every run, so
 * a failure it reports now is the failure of every run that reaches the CALL (the graph is
 * captured again at the next run, see call_failed). The limit: a failure inside the replayed
 * device work itself cannot be seen, since nothing on the host runs at the CALL any more.
 * -1 only for a CUDA failure. */
static int capture_call(graphexec *x, int32_t i, const cfx_record *r, char *err, size_t errlen)
{
    const exec_kernel *k = x->kernels && r->a >= 0 && r->a < x->nkernels ? &x->kernels[r->a] : NULL;
    int failed = 0;
    if (!k || !k->cuda_fn) goto stop; /* a missing cuda_fn stays missing: no recapture for it */
    if (dev_call_kernel(&x->d, k, r, x->capture, &failed, err, errlen) != 0) return -1;
    if (!failed) return 0;
    /* Work the kernel enqueued before failing stays in the body and runs before the stop;
     * it only computes values nobody will see, since results are copied only if the run is
     * ok. A failure may be passing, so the next run captures the kernels again and calls
     * cuda_fn anew, as the other executors call it on every run; a missing cuda_fn stays
     * missing until the kernels change, which dev_kernels_changed notices. */
    x->call_failed = 1;
stop:
    graph_call_failed_kernel<<<1, 1, 0, x->capture>>>(x->d.state, i);
    CUDA_LAUNCHED();
    return 0;
fail:
    return -1;
}

/* Fills s for a guard record at index i; for CHECK_DIVIDE over a tensor, first enqueues the
 * scan that sets the flag the guard then reads. */
static int guard_of(graphexec *x, int32_t i, graph_step *s, char *err, size_t errlen)
{
    const cfx_prog *p = x->prog;
    const cfx_record *r = &p->records[i];
    memset(s, 0, sizeof *s);
    s->kind = r->kind;
    s->record = i;
    if (r->kind == REC_TICK) return 0;
    const cfx_slot *sl = &p->slots[r->a];
    s->operand = x->d.arena + sl->offset;
    s->dtype = sl->dtype;
    s->bound = r->kind == REC_CHECK_INDEX ? r->b : r->kind == REC_CHECK_BOUND ? r->d : 0;
    if (r->kind == REC_CHECK_BOUND) {
        const cfx_slot *sb = &p->slots[r->b];
        s->operand2 = x->d.arena + sb->offset;
        s->dtype2 = sb->dtype;
    }
    if (r->kind == REC_CHECK_DIVIDE && sl->count > 1) {
        CUDA_TRY(cudaMemsetAsync(&x->g->flag, 0, sizeof(int32_t), x->capture));
        launch_any_zero_kernel<<<launch_grid(sl->count), LAUNCH_THREADS, 0, x->capture>>>(
            sl->dtype, x->d.arena + sl->offset, sl->count, (int *)&x->g->flag);
        CUDA_LAUNCHED();
        s->kind = STEP_DIVIDE_FLAG;
        s->operand = &x->g->flag;
    }
    return 0;
fail:
    return -1;
}

/* Whether a body may run the block starting at record t inline after its own records: not a
 * block already in this body (a loop), not a CALL block, and not too many blocks. */
static int can_chain(const graphexec *x, int32_t t, const int32_t *starts, int nstarts)
{
    if (nstarts >= GRAPH_CHAIN_MAX || x->prog->records[t].kind == REC_CALL) return 0;
    for (int k = 0; k < nstarts; k++)
        if (starts[k] == t) return 0;
    return 1;
}

/* ---- structured constructs inside a body ---------------------------------------------------
 * Where the records form a loop or an if with no jump leaving it (no break, continue or
 * return inside, no CALL), a body holds it as a conditional node of its own, as a user of
 * CUDA graphs would write it: a loop costs one WHILE iteration with no dispatch and no
 * SWITCH, an if one IF node. Everything else stays with the pc machine, which is always
 * right, so a pattern that is not recognised costs speed, never correctness. */

#define GRAPH_MAX_NEST 32 /* deeper nests are left to the pc machine */

/* Sets a conditional handle to "the run is ok and (cond != 0) == when". */
static __global__ void graph_cond_kernel(cudaGraphConditionalHandle h, const dev_state *st,
                                         const void *cond, int dtype, int when)
{
    int ok = *(volatile const int32_t *)&st->status == CFX_OK;
    cudaGraphSetConditional(h, ok && ((k_load_int(dtype, cond) != 0) == (when != 0)) ? 1u : 0u);
}

static int plain(int kind) { return !is_control(kind) && kind != REC_CALL; }

static int loop_at(const graphexec *x, int32_t k, int32_t hi, int depth, int32_t *jf, int32_t *exit);
static int if_at(const graphexec *x, int32_t k, int32_t hi, int depth, int32_t *else_lo, int32_t *end);

/* Records [lo, hi) are plain records and recognised constructs only. */
static int region_ok(const graphexec *x, int32_t lo, int32_t hi, int depth)
{
    int32_t a, b;
    if (depth > GRAPH_MAX_NEST) return 0;
    for (int32_t k = lo; k < hi;) {
        if (loop_at(x, k, hi, depth + 1, &a, &b) || if_at(x, k, hi, depth + 1, &a, &b)) {
            k = b;
            continue;
        }
        if (!plain(x->prog->records[k].kind)) return 0;
        k++;
    }
    return 1;
}

/* A loop at k: plain condition records (maybe none), JUMP_FALSE to exit, the TICK that opens
 * the body, a structured body, and a JUMP back to k just before exit, all inside [k, hi).
 * The JUMP back makes k a block start, which rejects most k before any scan (so a long run
 * of plain records is not scanned once per record). */
static int loop_at(const graphexec *x, int32_t k, int32_t hi, int depth, int32_t *jf, int32_t *exit)
{
    const cfx_record *rec = x->prog->records;
    int32_t j = k;
    if (depth > GRAPH_MAX_NEST || x->block_of[k] < 0) return 0;
    while (j < hi && plain(rec[j].kind)) j++;
    if (j + 1 >= hi || rec[j].kind != REC_JUMP_FALSE || rec[j + 1].kind != REC_TICK) return 0;
    int32_t X = rec[j].b;
    if (X <= j + 2 || X > hi || rec[X - 1].kind != REC_JUMP || rec[X - 1].a != k) return 0;
    if (!region_ok(x, j + 1, X - 1, depth)) return 0;
    *jf = j;
    *exit = X;
    return 1;
}

/* An if at k: JUMP_FALSE / JUMP_TRUE forward to E over a structured then-part; when the
 * then-part ends with a JUMP forward to F (>= E), [E, F) is the else-part. Inside [k, hi). */
static int if_at(const graphexec *x, int32_t k, int32_t hi, int depth, int32_t *else_lo, int32_t *end)
{
    const cfx_record *rec = x->prog->records;
    if (depth > GRAPH_MAX_NEST || (rec[k].kind != REC_JUMP_FALSE && rec[k].kind != REC_JUMP_TRUE)) return 0;
    int32_t E = rec[k].b;
    if (E <= k + 1 || E > hi) return 0;
    if (E - 1 > k + 1 && rec[E - 1].kind == REC_JUMP && rec[E - 1].a > E && rec[E - 1].a <= hi) {
        int32_t F = rec[E - 1].a;
        if (!region_ok(x, k + 1, E - 1, depth) || !region_ok(x, E, F, depth)) return 0;
        *else_lo = E;
        *end = F;
        return 1;
    }
    if (!region_ok(x, k + 1, E, depth)) return 0;
    *else_lo = -1;
    *end = E;
    return 1;
}

static int emit_record(graphexec *x, int32_t i, char *err, size_t errlen);

/* One plain record: a guard, a print, an application kernel or an op, on the capture stream,
 * inside an NVTX range named by the record (Nsight Systems shows the capture, not the replays,
 * under it), and in a profiled graph its stamp after it. */
static int emit_plain(graphexec *x, int32_t i, char *err, size_t errlen)
{
    char name[96];
    exec_record_name(x->prog, i, name, sizeof name);
    prof_push(name);
    int rc = emit_record(x, i, err, errlen);
    prof_pop();
    if (rc == 0 && x->prof_build) {
        graph_stamp_kernel<<<1, 1, 0, x->capture>>>(x->prof, x->prog->nrecords, i, x->d.state);
        CUDA_LAUNCHED();
    }
    return rc;
fail:
    return -1;
}

static int emit_record(graphexec *x, int32_t i, char *err, size_t errlen)
{
    const cfx_prog *p = x->prog;
    const cfx_record *r = &p->records[i];
    cudaStream_t cs = x->capture;
    if (is_guard(r->kind)) {
        graph_step gs;
        if (guard_of(x, i, &gs, err, errlen) != 0) return -1;
        graph_guard_kernel<<<1, 1, 0, cs>>>(gs, x->d.state, x->g, x->d.control_dev);
    } else if (r->kind == REC_PRINT) {
        const cfx_slot *sl = &p->slots[r->a];
        graph_print_kernel<<<1, LAUNCH_THREADS, 0, cs>>>(x->d.state, x->g, x->log, GRAPH_LOG_BYTES, i,
                                                         x->d.arena + sl->offset, slot_bytes(sl));
    } else if (r->kind == REC_CALL) {
        return capture_call(x, i, r, err, errlen);
    } else {
        return launch_record(&x->env, r, cs, err, errlen);
    }
    CUDA_LAUNCHED();
    return 0;
fail:
    return -1;
}

/* The graph being captured and its current tail (deps and ndeps may be NULL when only the
 * graph is wanted); the signatures gained edge data in 13. Asking for the tail without its
 * edge data fails with cudaErrorLossyQuery when an edge into it is not a plain one (a
 * programmatic launch by a library), so the tail is asked for only right after our own
 * plain launch. A capture that an application kernel's cuda_fn invalidated reports a NULL
 * graph: say so here rather than fail later in cudaGraphConditionalHandleCreate with a bare
 * "invalid argument". */
static cudaError_t capture_info(cudaStream_t s, cudaGraph_t *graph, const cudaGraphNode_t **deps,
                                size_t *ndeps)
{
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    cudaError_t e;
#if CUDART_VERSION >= 13000
    e = cudaStreamGetCaptureInfo(s, &st, NULL, graph, deps, NULL, ndeps);
#else
    e = cudaStreamGetCaptureInfo(s, &st, NULL, graph, deps, ndeps);
#endif
    if (e == cudaSuccess && st != cudaStreamCaptureStatusActive) e = cudaErrorStreamCaptureInvalidated;
    return e;
}

static cudaError_t capture_continue_after(cudaStream_t s, cudaGraphNode_t *node)
{
#if CUDART_VERSION >= 13000
    return cudaStreamUpdateCaptureDependencies(s, node, NULL, 1, cudaStreamSetCaptureDependencies);
#else
    return cudaStreamUpdateCaptureDependencies(s, node, 1, cudaStreamSetCaptureDependencies);
#endif
}

/* Body graphs whose records are captured once the current capture has ended. */
typedef struct graph_work {
    cudaGraph_t graph;
    int32_t lo, hi;    /* a structured region */
    int32_t head, jf;  /* a WHILE body: then the condition, records [head, jf) */
    cudaGraphConditionalHandle handle;
} graph_work;

static int push_work(graphexec *x, graph_work w, char *err, size_t errlen)
{
    if (x->nwork == x->capwork) {
        int cap = x->capwork ? x->capwork * 2 : 16;
        graph_work *n = (graph_work *)realloc(x->work, sizeof *n * (size_t)cap);
        if (!n) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        x->work = n;
        x->capwork = cap;
    }
    x->work[x->nwork++] = w;
    return 0;
}

/* Adds, at the tail of the capture, a conditional node whose condition kernel (reading the
 * slot of control record `ctl`, `when` as in graph_cond_kernel) has just been captured. */
static int add_conditional(graphexec *x, enum cudaGraphConditionalNodeType type, unsigned size,
                           int32_t ctl, int when, cudaGraphConditionalHandle *h, cudaGraph_t *bodies,
                           char *err, size_t errlen)
{
    const cfx_prog *p = x->prog;
    const cfx_slot *cond = &p->slots[p->records[ctl].a];
    cudaGraph_t graph;
    const cudaGraphNode_t *deps;
    size_t ndeps = 0;
    cudaGraphNode_t node;
    /* only the graph: the tail here may be a library's kernel (see capture_info) */
    CUDA_TRY(capture_info(x->capture, &graph, NULL, NULL));
    /* no default (flags 0): the value is undefined at each launch until graph_cond_kernel,
     * captured just before the node, sets it, which it does on every pass */
    CUDA_TRY(cudaGraphConditionalHandleCreate(h, graph, 0, 0));
    graph_cond_kernel<<<1, 1, 0, x->capture>>>(*h, x->d.state, x->d.arena + cond->offset, cond->dtype, when);
    CUDA_LAUNCHED();
    CUDA_TRY(capture_info(x->capture, &graph, &deps, &ndeps));
    {
        cudaGraphNodeParams np = {};
        memset((void *)&np, 0, sizeof np);
        np.type = cudaGraphNodeTypeConditional;
        np.conditional.handle = *h;
        np.conditional.type = type;
        np.conditional.size = size;
        CUDA_TRY(add_node(&node, graph, deps, ndeps, &np));
        for (unsigned b = 0; b < size; b++) bodies[b] = np.conditional.phGraph_out[b];
    }
    CUDA_TRY(capture_continue_after(x->capture, &node));
    return 0;
fail:
    return -1;
}

/* Captures records [lo, hi) of a structured region (region_ok holds). */
static int emit_region(graphexec *x, int32_t lo, int32_t hi, int depth, char *err, size_t errlen)
{
    for (int32_t k = lo; k < hi;) {
        int32_t a, b;
        cudaGraphConditionalHandle h;
        cudaGraph_t bodies[2];
        if (loop_at(x, k, hi, depth + 1, &a, &b)) {
            /* the first test before the node, then WHILE { TICK; body; test } (the region
             * [a + 1, b - 1) starts with the TICK) */
            for (int32_t t = k; t < a; t++)
                if (emit_plain(x, t, err, errlen) != 0) return -1;
            if (add_conditional(x, cudaGraphCondTypeWhile, 1, a, 1, &h, bodies, err, errlen) != 0) return -1;
            graph_work w = {bodies[0], a + 1, b - 1, k, a, h};
            if (push_work(x, w, err, errlen) != 0) return -1;
            k = b;
        } else if (if_at(x, k, hi, depth + 1, &a, &b)) {
            /* the then-part runs when the branch is not taken */
            int when = x->prog->records[k].kind == REC_JUMP_FALSE;
            int32_t then_hi = a >= 0 ? a - 1 : b;
            if (add_conditional(x, cudaGraphCondTypeIf, a >= 0 ? 2 : 1, k, when, &h, bodies, err, errlen) != 0)
                return -1;
            graph_work w = {bodies[0], k + 1, then_hi, -1, -1, h};
            if (push_work(x, w, err, errlen) != 0) return -1;
            if (a >= 0) {
                graph_work we = {bodies[1], a, b, -1, -1, h};
                if (push_work(x, we, err, errlen) != 0) return -1;
            }
            k = b;
        } else {
            if (emit_plain(x, k, err, errlen) != 0) return -1;
            k++;
        }
    }
    return 0;
}

/* Captures the bodies left in the work list, each into its own graph (more may be added). */
static int drain_work(graphexec *x, char *err, size_t errlen)
{
    while (x->nwork > 0) {
        graph_work w = x->work[--x->nwork];
        cudaGraph_t captured = NULL;
        CUDA_TRY(cudaStreamBeginCaptureToGraph(x->capture, w.graph, NULL, NULL, 0,
                                               cudaStreamCaptureModeThreadLocal));
        x->capturing = 1;
        if (emit_region(x, w.lo, w.hi, 0, err, errlen) != 0) goto fail;
        if (w.head >= 0) {
            const cfx_slot *cond = &x->prog->slots[x->prog->records[w.jf].a];
            for (int32_t t = w.head; t < w.jf; t++)
                if (emit_plain(x, t, err, errlen) != 0) goto fail;
            graph_cond_kernel<<<1, 1, 0, x->capture>>>(w.handle, x->d.state, x->d.arena + cond->offset,
                                                       cond->dtype, 1);
            CUDA_LAUNCHED();
        }
        CUDA_TRY(cudaStreamEndCapture(x->capture, &captured));
        x->capturing = 0;
    }
    return 0;
fail:
    return -1;
}

/* Enqueues on the capture stream the body of the SWITCH case for the block that starts at
 * record `first`: its records, and, through unconditional jumps and fall-throughs, those of
 * the blocks after it (so a loop's back-edge and its head run in one body), up to the first
 * conditional control record that is not a recognised construct; then the step kernel that
 * picks the next block. Guards are inline kernels that write dev_state; the step kernel sees
 * a stop and ends the program. */
static int capture_block(graphexec *x, int32_t first, char *err, size_t errlen)
{
    const cfx_prog *p = x->prog;
    cudaStream_t cs = x->capture;
    int32_t starts[GRAPH_CHAIN_MAX];
    int nstarts = 0;
    int32_t i = first;
    graph_step s;
    memset(&s, 0, sizeof s);
    starts[nstarts++] = first;
    for (;;) {
        const cfx_record *r = &p->records[i];
        int32_t a, b;
        if ((loop_at(x, i, p->nrecords, 0, &a, &b) || if_at(x, i, p->nrecords, 0, &a, &b))) {
            /* a recognised construct: as a conditional node, then on after it (depth -1:
             * emit_region recognises it again at depth 0, exactly as it was just found) */
            if (emit_region(x, i, b, -1, err, errlen) != 0) goto fail;
            i = b;
        } else if (is_control(r->kind)) {
            if (r->kind == REC_JUMP && can_chain(x, r->a, starts, nstarts)) {
                starts[nstarts++] = r->a;
                i = r->a;
                continue;
            }
            s.kind = r->kind;
            s.record = i;
            break;
        } else {
            if (emit_plain(x, i, err, errlen) != 0) goto fail;
            i++;
        }
        /* the validator guarantees the last record is HALT, so i is in range here */
        if (x->block_of[i] >= 0) {
            if (can_chain(x, i, starts, nstarts)) {
                starts[nstarts++] = i;
                continue;
            }
            s.kind = STEP_FALLTHROUGH;
            s.record = i - 1;
            s.next = x->block_of[i];
            break;
        }
    }
    if (s.kind != STEP_FALLTHROUGH) {
        const cfx_record *r = &p->records[s.record];
        s.next = s.kind != REC_HALT && s.record + 1 < p->nrecords ? x->block_of[s.record + 1] : -1;
        if (r->kind == REC_JUMP) s.target = x->block_of[r->a];
        if (r->kind == REC_JUMP_FALSE || r->kind == REC_JUMP_TRUE) s.target = x->block_of[r->b];
        if (r->kind == REC_JUMP_FALSE || r->kind == REC_JUMP_TRUE || r->kind == REC_SWITCH) {
            s.operand = x->d.arena + p->slots[r->a].offset;
            s.dtype = p->slots[r->a].dtype;
        }
        if (r->kind == REC_SWITCH) {
            s.ncases = r->c;
            s.cases = x->cases + r->b;
        }
    }
    graph_step_kernel<<<1, 1, 0, cs>>>(s, x->d.state, x->g);
    CUDA_LAUNCHED();
    return 0;
fail:
    return -1;
}

/* The executor's graph, its nodes added to `root` after deps[0 .. ndeps): the init kernel, the
 * WHILE over the dispatch kernel and the SWITCH of the blocks, each block's case captured on
 * x->capture. *last gets the WHILE node, the last of them. root is x->graph (build_graph) or the
 * graph of the application's capture in progress (graph_capture), which CUDA lets hold
 * conditional nodes where a child graph node may not. */
static int build_nodes(graphexec *x, cudaGraph_t root, const cudaGraphNode_t *deps, size_t ndeps,
                       cudaGraphNode_t *last, char *err, size_t errlen)
{
    const cfx_prog *p = x->prog;
    cudaGraphNode_t init_node, while_node, dispatch_node, switch_node;
    cudaGraphConditionalHandle loop_h, switch_h;
    cudaGraph_t body, *cases;
    int32_t nblocks = x->nblocks;
    void *init_args[2] = {&x->g, &x->d.control_dev};
    void *dispatch_args[4];

    x->call_failed = 0;
    {
        cudaGraphNodeParams np = {};
        memset((void *)&np, 0, sizeof np); /* every unused byte zero, as the API asks */
        np.type = cudaGraphNodeTypeKernel;
        np.kernel.func = (void *)graph_init_kernel;
        np.kernel.gridDim = dim3(1, 1, 1);
        np.kernel.blockDim = dim3(1, 1, 1);
        np.kernel.kernelParams = init_args;
        CUDA_TRY(add_node(&init_node, root, deps, ndeps, &np));
    }
    if (x->prof_build) { /* the profile's first stamp, where the run starts */
        int32_t n = p->nrecords, none = -1;
        void *args[4] = {&x->prof, &n, &none, &x->d.state};
        cudaGraphNodeParams np = {};
        memset((void *)&np, 0, sizeof np);
        np.type = cudaGraphNodeTypeKernel;
        np.kernel.func = (void *)graph_stamp_kernel;
        np.kernel.gridDim = dim3(1, 1, 1);
        np.kernel.blockDim = dim3(1, 1, 1);
        np.kernel.kernelParams = args;
        cudaGraphNode_t first = init_node;
        CUDA_TRY(add_node(&init_node, root, &first, 1, &np));
    }
    /* 1 with cudaGraphCondAssignDefault: the runtime sets it at the start of every launch
     * (cudaGraphConditionalHandleCreate's defaultLaunchValue), so every run enters the WHILE
     * once and its dispatch decides from there; a run never sees the 0 the last one left. */
    CUDA_TRY(cudaGraphConditionalHandleCreate(&loop_h, root, 1, cudaGraphCondAssignDefault));
    {
        cudaGraphNodeParams np = {};
        memset((void *)&np, 0, sizeof np);
        np.type = cudaGraphNodeTypeConditional;
        np.conditional.handle = loop_h;
        np.conditional.type = cudaGraphCondTypeWhile;
        np.conditional.size = 1;
        CUDA_TRY(add_node(&while_node, root, &init_node, 1, &np));
        body = np.conditional.phGraph_out[0];
    }
    /* the SWITCH lives in the WHILE body, so its handle belongs to that graph */
    CUDA_TRY(cudaGraphConditionalHandleCreate(&switch_h, body, 0, 0));
    dispatch_args[0] = &x->g;
    dispatch_args[1] = &loop_h;
    dispatch_args[2] = &switch_h;
    dispatch_args[3] = &nblocks;
    {
        cudaGraphNodeParams np = {};
        memset((void *)&np, 0, sizeof np); /* every unused byte zero, as the API asks */
        np.type = cudaGraphNodeTypeKernel;
        np.kernel.func = (void *)graph_dispatch_kernel;
        np.kernel.gridDim = dim3(1, 1, 1);
        np.kernel.blockDim = dim3(1, 1, 1);
        np.kernel.kernelParams = dispatch_args;
        CUDA_TRY(add_node(&dispatch_node, body, NULL, 0, &np));
    }
    {
        cudaGraphNodeParams np = {};
        memset((void *)&np, 0, sizeof np);
        np.type = cudaGraphNodeTypeConditional;
        np.conditional.handle = switch_h;
        np.conditional.type = cudaGraphCondTypeSwitch;
        np.conditional.size = (unsigned)nblocks;
        CUDA_TRY(add_node(&switch_node, body, &dispatch_node, 1, &np));
        cases = np.conditional.phGraph_out;
    }
    for (int32_t i = 0; i < p->nrecords; i++) {
        int32_t b = x->block_of[i];
        if (b < 0) continue;
        cudaGraph_t captured = NULL;
        CUDA_TRY(cudaStreamBeginCaptureToGraph(x->capture, cases[b], NULL, NULL, 0,
                                               cudaStreamCaptureModeThreadLocal));
        x->capturing = 1;
        if (capture_block(x, i, err, errlen) != 0) goto fail;
        CUDA_TRY(cudaStreamEndCapture(x->capture, &captured));
        x->capturing = 0;
        /* the bodies of the conditional nodes that block's case now holds */
        if (drain_work(x, err, errlen) != 0) goto fail;
    }
    *last = while_node;
    return 0;
fail:
    if (x->capturing) {
        /* A capture into a body failed or was invalidated (an application kernel's cuda_fn
         * may do that). Destroying the parent graph after an invalidated capture into one
         * of its conditional bodies can crash inside the driver, so the parent is let go
         * instead: its host-side memory leaks, once per failed build, and the error is
         * returned as it is. */
        cudaGraph_t dummy = NULL;
        (void)cudaStreamEndCapture(x->capture, &dummy);
        (void)cudaGetLastError();
        x->capturing = 0;
        if (root == x->graph) x->graph = NULL;
    }
    x->nwork = 0;
    return -1;
}

static int build_graph(graphexec *x, char *err, size_t errlen)
{
    cudaGraphNode_t last;
    CUDA_TRY(cudaGraphCreate(&x->graph, 0));
    if (build_nodes(x, x->graph, NULL, 0, &last, err, errlen) != 0) return -1;
    {
        /* WithParams rather than cudaGraphInstantiate: on failure it says why (a conditional
         * handle left without a node, a node type a conditional body refuses, such as the
         * memory-allocation node a cuBLAS without its workspace would capture) and which
         * node, which a first run on a GPU needs in its message. Plain launch-time upload
         * (flags 0): a run may go to any stream, and the first launch uploads. */
        cudaGraphInstantiateParams ip;
        cudaError_t e;
        memset(&ip, 0, sizeof ip);
        e = cudaGraphInstantiateWithParams(&x->exec, x->graph, &ip);
        if (e != cudaSuccess) {
            enum cudaGraphNodeType t = cudaGraphNodeTypeCount;
            if (ip.errNode_out) (void)cudaGraphNodeGetType(ip.errNode_out, &t);
            snprintf(err, errlen,
                     "cudaGraphInstantiateWithParams: %s (cudaGraphInstantiateResult %d, failing node "
                     "of cudaGraphNodeType %d)",
                     cudaGetErrorString(e), (int)ip.result_out, (int)t);
            (void)cudaGetLastError();
            x->exec = NULL;
            x->instantiate_failed = 1;
            goto fail;
        }
    }
    return 0;
fail:
    return -1;
}

/* ==== the executor ========================================================================== */

static int graph_available(char *why, size_t len)
{
    int driver = 0;
    if (!dev_available(why, len)) return 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess || driver < 12080) {
        snprintf(why, len, "the CUDA driver (%d) is older than 12.8, which conditional SWITCH nodes need",
                 driver);
        return 0;
    }
    return 1;
}

static void drop_graph(graphexec *x)
{
    if (x->exec) cudaGraphExecDestroy(x->exec);
    if (x->graph) cudaGraphDestroy(x->graph);
    x->exec = NULL;
    x->graph = NULL;
}

/* 1 if the program has an f32 or f64 product, which launch_record hands to cuBLAS. */
static int has_blas_products(const cfx_prog *p)
{
    for (int32_t i = 0; i < p->nrecords; i++) {
        const cfx_record *r = &p->records[i];
        if (r->kind == REC_MATMUL && (p->slots[r->a].dtype == CFX_F32 || p->slots[r->a].dtype == CFX_F64))
            return 1;
    }
    return 0;
}

/* build_graph, with the one fallback it has. Every product sits inside a conditional body
 * (the whole program is WHILE { SWITCH { ... } }), and cuBLAS picks its kernels and their
 * launch attributes itself: one whose capture carries an attribute that bodies refuse
 * (programmatic dependent launch, say) fails at instantiation, and then every run with `@`
 * would fail. The check is the instantiation itself: when it fails and the program has
 * cuBLAS products, the graph is built again with cfx's own product kernel in the bodies
 * (blas_matmul without a context), which bodies accept, and `note` says so. */
static int build_checked(graphexec *x, char *err, size_t errlen)
{
    char first[256];
    x->instantiate_failed = 0;
    if (build_graph(x, err, errlen) == 0) return 0;
    if (!x->instantiate_failed || x->own_products || !has_blas_products(x->prog)) return -1;
    snprintf(first, sizeof first, "%s", err);
    drop_graph(x);
    x->own_products = 1;
    x->env.blas = NULL;
    if (build_graph(x, err, errlen) != 0) return -1;
    snprintf(x->note, sizeof x->note,
             "products use cfx's own kernel inside the conditional bodies: the graph with cuBLAS's was "
             "refused (%s)", first);
    return 0;
}

static void graph_destroy(void *self)
{
    graphexec *x = (graphexec *)self;
    if (!x) return;
    if (x->in_flight && x->stream) cudaStreamSynchronize(x->stream);
    drop_graph(x);
    dev_prog_free(&x->d);
    blas_free(x->blas);
    if (x->env.partials) cudaFree(x->env.partials);
    if (x->g) cudaFree(x->g);
    if (x->prof) cudaFree(x->prof);
    if (x->log) cudaFree(x->log);
    if (x->log_host) cudaFreeHost(x->log_host);
    if (x->cases) cudaFree(x->cases);
    if (x->capture) cudaStreamDestroy(x->capture);
    if (x->own) cudaStreamDestroy(x->own);
    free(x->block_of);
    free(x->work);
    free(x->kernels);
    free(x);
}

static void *graph_create(const cfx_prog *prog, char *err, size_t errlen)
{
    graphexec *x = (graphexec *)calloc(1, sizeof *x);
    int32_t *cases_host = NULL;
    if (!x) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    x->prog = prog;
    if (prog->nrecords < 1) {
        snprintf(err, errlen, "the program has no records");
        goto fail;
    }
    if (find_blocks(x, err, errlen) != 0) goto fail;
    prof_push("upload");
    if (dev_prog_upload(&x->d, prog, err, errlen) != 0) {
        prof_pop();
        goto fail;
    }
    prof_pop();
    CUDA_TRY(cudaStreamCreateWithFlags(&x->own, cudaStreamNonBlocking));
    CUDA_TRY(cudaStreamCreateWithFlags(&x->capture, cudaStreamNonBlocking));
    CUDA_TRY(cudaMalloc((void **)&x->g, sizeof(graph_dev)));
    CUDA_TRY(cudaMemset(x->g, 0, sizeof(graph_dev)));
    CUDA_TRY(cudaMalloc((void **)&x->log, (size_t)GRAPH_LOG_BYTES));
    CUDA_TRY(cudaMalloc((void **)&x->env.partials, sizeof(k_acc) * LAUNCH_REDUCE_BLOCKS));
    if (prog->ntable > 0) {
        /* switch targets as block numbers, at the same offsets as in prog->table */
        cases_host = (int32_t *)malloc(sizeof(int32_t) * (size_t)prog->ntable);
        if (!cases_host) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        for (int32_t i = 0; i < prog->ntable; i++) cases_host[i] = -1;
        for (int32_t i = 0; i < prog->nrecords; i++) {
            const cfx_record *r = &prog->records[i];
            if (r->kind == REC_SWITCH)
                for (int32_t c = 0; c <= r->c; c++) cases_host[r->b + c] = x->block_of[prog->table[r->b + c]];
        }
        CUDA_TRY(cudaMalloc((void **)&x->cases, sizeof(int32_t) * (size_t)prog->ntable));
        CUDA_TRY(cudaMemcpy(x->cases, cases_host, sizeof(int32_t) * (size_t)prog->ntable,
                            cudaMemcpyHostToDevice));
    }
    x->blas = blas_new(err, errlen);
    if (!x->blas) goto fail;
    x->env.prog = prog;
    x->env.arena = x->d.arena;
    x->env.blas = x->blas;
    /* A program that calls application kernels is captured at its first run, when the
     * kernels are known; any other is built now, so a build failure is reported here. */
    if (prog->nkernels == 0) {
        prof_push("build graph");
        int rc = build_checked(x, err, errlen);
        prof_pop();
        if (rc != 0) goto fail;
    }
    /* The cudaMemset of x->g and the pageable cudaMemcpy of x->cases above are ordered on the
     * legacy default stream and may not have landed when they return; a run on a
     * non-blocking stream (our own, or an application's) is not ordered after that stream.
     * Wait once here, as dev_prog_upload and persist_create do, so the first graph launch
     * never reads them half written. */
    CUDA_TRY(cudaStreamSynchronize(0));
    free(cases_host);
    return x;
fail:
    free(cases_host);
    graph_destroy(x);
    return NULL;
}

static int finish(graphexec *x, char *err, size_t errlen);

/* A run recorded into the capture on `stream` (the application's): the start of the run, the
 * executor's graph built again into the capture's graph (build_nodes: a child graph node may not
 * hold conditional nodes, and nothing promises that a graph launch into a capturing stream is
 * recorded), the guarded
 * result copies and the outcome's publication. The build allocates nothing and instantiates
 * nothing: it adds nodes, and captures the blocks' work on x->capture, as at creation. */
static int graph_capture(graphexec *x, const exec_run *run, cudaStream_t stream, char *err, size_t errlen)
{
    cudaGraph_t cap = NULL;
    const cudaGraphNode_t *deps = NULL;
    size_t ndeps = 0;
    cudaGraphNode_t node;
    if (dev_run_begin(&x->d, run, stream, err, errlen) != 0) return -1;
    CUDA_TRY(capture_info(stream, &cap, &deps, &ndeps));
    if (build_nodes(x, cap, deps, ndeps, &node, err, errlen) != 0) return -1;
    CUDA_TRY(capture_continue_after(stream, &node));
    if (dev_capture_end(&x->d, run, stream, err, errlen) != 0) return -1;
    x->run = *run;
    x->stream = stream;
    x->captured = 1;
    return EXEC_CAPTURED;
fail:
    return -1;
}

/* 1 when a run with these arguments must build (or allocate) first: what graph_prepare does. */
static int graph_needs_prep(const graphexec *x, const exec_run *run)
{
    const cfx_prog *p = x->prog;
    return !x->exec || (run->profile != NULL) != x->prof_build ||
           (p->nkernels > 0 && (x->call_failed || dev_kernels_changed(x->kernels, x->nkernels, run)));
}

/* cfx_prepare, and the start of every run: the graph for this run's profiling and application
 * kernels, built and instantiated. */
static int graph_prepare(void *self, const exec_run *run, char *err, size_t errlen)
{
    graphexec *x = (graphexec *)self;
    const cfx_prog *p = x->prog;
    if (x->in_flight) {
        snprintf(err, errlen, "a run of this executor is still in flight");
        return -1;
    }
    if ((run->profile != NULL) != x->prof_build) {
        /* a profiled run needs the graph with the stamps, an unprofiled one the graph without */
        if (run->profile && !x->prof) {
            cudaError_t e = cudaMalloc((void **)&x->prof, sizeof(unsigned long long) * (1 + 2 * (size_t)p->nrecords));
            if (e != cudaSuccess) {
                dev_error(err, errlen, "cudaMalloc", __FILE__, __LINE__, cudaGetErrorString(e));
                x->prof = NULL;
                return -1;
            }
        }
        x->prof_build = run->profile != NULL;
        if (x->exec) {
            drop_graph(x);
            if (build_checked(x, err, errlen) != 0) {
                drop_graph(x);
                return -1;
            }
        }
    }
    if (p->nkernels > 0 && (x->call_failed || dev_kernels_changed(x->kernels, x->nkernels, run))) {
        drop_graph(x);
        free(x->kernels);
        x->nkernels = 0;
        /* zeroed: with no kernels in the run, every CALL captures as a stop (capture_call) */
        x->kernels = (exec_kernel *)calloc((size_t)p->nkernels, sizeof(exec_kernel));
        if (!x->kernels) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        if (run->kernels) memcpy(x->kernels, run->kernels, sizeof(exec_kernel) * (size_t)p->nkernels);
        x->nkernels = p->nkernels;
        if (build_checked(x, err, errlen) != 0) {
            free(x->kernels);
            x->kernels = NULL;
            drop_graph(x);
            return -1;
        }
    }
    return 0;
}

static int graph_run(void *self, const exec_run *run, int async, char *err, size_t errlen)
{
    graphexec *x = (graphexec *)self;
    cudaStream_t stream = run->stream ? (cudaStream_t)run->stream : x->own;
    int capturing = run->stream ? dev_capturing(stream, err, errlen) : 0; /* never the executor's own */
    if (capturing < 0) return -1;
    if (capturing) {
        /* inside the application's capture: only the run's own work, or nothing at all */
        if (x->in_flight) {
            snprintf(err, errlen, "a run of this executor is still in flight");
            return -1;
        }
        if (dev_capture_check(run, async, "cuda-graph", err, errlen) != 0) return -1;
        if (graph_needs_prep(x, run)) {
            snprintf(err, errlen, "cuda-graph: under stream capture the run would build its graph first (the first "
                     "run, or application kernels that changed): call cfx_prepare (or run once) before capturing");
            return -1;
        }
        return graph_capture(x, run, stream, err, errlen);
    }
    if (graph_prepare(self, run, err, errlen) != 0) return -1;
    const cfx_prog *p = x->prog;
    x->run = *run;
    x->stream = run->stream ? (cudaStream_t)run->stream : x->own;
    x->captured = 0;
    memset(&x->out, 0, sizeof x->out);
    x->out.record = -1;
    x->t_start = now_us();
    prof_push("run");
    if (dev_run_begin(&x->d, run, x->stream, err, errlen) != 0) goto fail;
    if (x->prof_build)
        CUDA_TRY(cudaMemsetAsync(x->prof, 0, sizeof(unsigned long long) * (1 + 2 * (size_t)p->nrecords), x->stream));
    CUDA_TRY(cudaGraphLaunch(x->exec, x->stream));
    /* device buffers: the copy is ordered after the graph and checks the state itself */
    if (run->device_buffers && dev_copy_results(&x->d, run, x->stream, err, errlen) != 0) goto fail;
    prof_pop();
    x->in_flight = 1;
    if (!async) return finish(x, err, errlen);
    return 0;
fail:
    prof_pop();
    return -1;
}

/* Replays the print log through run->print, in program order. */
static int replay_prints(graphexec *x, char *err, size_t errlen)
{
    graph_dev g;
    int64_t at = 0;
    /* On the run's stream, not with cudaMemcpy: on the legacy default stream it would also
     * wait for every blocking stream of the application (as dev_read_outcome says). */
    CUDA_TRY(cudaMemcpyAsync(&g, x->g, sizeof g, cudaMemcpyDeviceToHost, x->stream));
    CUDA_TRY(cudaStreamSynchronize(x->stream));
    if (g.log_used == 0) goto check;
    if (!x->log_host) CUDA_TRY(cudaHostAlloc((void **)&x->log_host, (size_t)GRAPH_LOG_BYTES, cudaHostAllocDefault));
    CUDA_TRY(cudaMemcpyAsync(x->log_host, x->log, (size_t)g.log_used, cudaMemcpyDeviceToHost, x->stream));
    CUDA_TRY(cudaStreamSynchronize(x->stream));
    while (at + (int64_t)sizeof(graph_log_entry) <= g.log_used) {
        graph_log_entry e;
        memcpy(&e, x->log_host + at, sizeof e);
        if (x->run.print) x->run.print(x->run.print_user, x->prog, e.record, x->log_host + at + sizeof e);
        at += (int64_t)sizeof e + (e.bytes + 15) / 16 * 16;
    }
check:
    if (g.overflow) {
        snprintf(err, errlen, "print output of this run exceeded the cuda-graph log of %lld bytes",
                 (long long)GRAPH_LOG_BYTES);
        return -1;
    }
    return 0;
fail:
    return -1;
}

/* The stamps' table (graph_stamp_kernel) into the run's profile. */
static int read_profile(graphexec *x, char *err, size_t errlen)
{
    int32_t n = x->prog->nrecords;
    exec_profile *pr = x->run.profile;
    unsigned long long *t = (unsigned long long *)malloc(sizeof *t * (1 + 2 * (size_t)n));
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    CUDA_TRY(cudaMemcpyAsync(t, x->prof, sizeof *t * (1 + 2 * (size_t)n), cudaMemcpyDeviceToHost, x->stream));
    CUDA_TRY(cudaStreamSynchronize(x->stream));
    for (int32_t i = 0; i < n; i++) {
        pr->count[i] += (int64_t)t[1 + i];
        pr->ns[i] += (int64_t)t[1 + n + i];
        pr->run_ns += (int64_t)t[1 + n + i];
    }
    free(t);
    return 0;
fail:
    free(t);
    return -1;
}

static int finish(graphexec *x, char *err, size_t errlen)
{
    int rc = -1;
    if (dev_wait_stream(&x->d, x->stream, x->run.cancel, err, errlen) != 0) goto done;
    if (!x->run.device_buffers && dev_copy_results(&x->d, &x->run, x->stream, err, errlen) != 0) goto done;
    if (dev_read_outcome(&x->d, &x->out, err, errlen) != 0) goto done;
    if (replay_prints(x, err, errlen) != 0) goto done;
    if (x->run.profile && read_profile(x, err, errlen) != 0) goto done;
    if (x->run.trace) { /* the device decides everything: the host sees one span, launch to end */
        exec_trace_open(x->run.trace, "cuda-graph", x->prog, "device", 0);
        exec_trace_event(x->run.trace, x->prog, -1, "graph launch", 0.0, now_us() - x->t_start, 0);
        fprintf(x->run.trace,
                "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"executor\":\"cuda-graph\",\"graph\":\"%s\","
                "\"events\":1,\"events_dropped\":0}}\n",
                x->prog->name ? x->prog->name : "");
        fflush(x->run.trace);
    }
    rc = 0;
done:
    x->in_flight = 0;
    if (rc != 0) x->out.status = CFX_ERROR;
    return rc;
}

static int graph_wait(void *self, exec_outcome *out, char *err, size_t errlen)
{
    graphexec *x = (graphexec *)self;
    if (x->captured) {
        /* a captured run: what the application's last replay of it published */
        if (dev_read_published(&x->d, &x->out, err, errlen) != 0) return -1;
    } else if (x->in_flight && finish(x, err, errlen) != 0) {
        return -1;
    }
    *out = x->out;
    return 0;
}

/* cfx_exec_graph: a run recorded by a capture of this call's own. */
static int graph_graph(void *self, const exec_run *run, void **graph, char *err, size_t errlen)
{
    graphexec *x = (graphexec *)self;
    if (graph_prepare(self, run, err, errlen) != 0) return -1;
    return dev_graph_of_run(graph_run, x, run, graph, err, errlen);
}

/* Which products the bodies hold: cuBLAS's, or cfx's kernel after build_checked's fallback. */
static const char *graph_detail(void *self)
{
    graphexec *x = (graphexec *)self;
    if (x->note[0]) return x->note;
    return "one CUDA graph with conditional nodes; products by cuBLAS, captured into the bodies";
}

const exec_ops dev_graph_ops = {
    CFX_BACKEND_CUDA_GRAPH, graph_available, graph_create, graph_run, graph_wait, graph_destroy, graph_detail,
    NULL,
    NULL,
    NULL,
    graph_prepare,
    graph_graph,
};

#else /* CUDART_VERSION < 12080 */

static int graph_too_old(char *why, size_t len)
{
    snprintf(why, len, "the CUDA toolkit is older than 12.8");
    return 0;
}

const exec_ops dev_graph_ops = {CFX_BACKEND_CUDA_GRAPH, graph_too_old, NULL, NULL, NULL, NULL, NULL};

#endif
