/* cpu.c: the CPU executor, the reference semantics of every record kind.
 *
 * A plain `switch` dispatch loop over a validated program: it trusts the program completely
 * (prog_validate has checked every slot, target, table range, operand type and row index) and
 * does no per-record checks of its own. Op arithmetic comes from kernels/, the same functions
 * the GPU executors call; records flagged REC_F_SCALAR take a typed fast path through the
 * one-element op functions, which is what makes scalar loops cost a few nanoseconds per
 * record.
 *
 * Run semantics the other executors match:
 * - one arena per run: the const image, then zeros, then each input copied into its slot;
 *   results are copied out only at HALT, so a stopped run writes no results;
 * - TICK: first the cancel flag (-> cancelled), then the budget: with max_iters = N, the
 *   (N+1)-th TICK stops the run with limit (detail[0] = N); out->iterations counts the TICKs
 *   that passed, so it is N after a limit stop;
 * - the stopping record is out->record (-1 after HALT); CHECK_INDEX stops with detail =
 *   {index, rows}; a CALL whose kernel fails (or has no CPU function) stops with CFX_ERROR.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec.h"
#include "kernels.h"
#include "program.h"

/* Chrome trace events are capped so that a long loop cannot fill the disk. */
#define TRACE_MAX_EVENTS 1000000

static const char *const op_spellings[OP_COUNT] = {
#define X(name, spelling, arity, cls, infix) spelling,
    CFX_OPS(X)
#undef X
};
static const char *const op_infix[OP_COUNT] = {
#define X(name, spelling, arity, cls, infix) infix,
    CFX_OPS(X)
#undef X
};

typedef struct trace_state {
    FILE *f;
    int64_t events;  /* written */
    int64_t dropped; /* past the cap */
    struct timespec start;
} trace_state;

static double since_us(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) * 1e6 + (double)(now.tv_nsec - start->tv_nsec) / 1e3;
}

static void trace_event(trace_state *t, const cfx_record *r, double ts, double end)
{
    if (t->events >= TRACE_MAX_EVENTS) {
        t->dropped++;
        return;
    }
    const char *op = "";
    if (r->kind == REC_UNARY || r->kind == REC_BINARY || r->kind == REC_REDUCE)
        op = op_spellings[r->op][0] ? op_spellings[r->op] : op_infix[r->op] ? op_infix[r->op] : "";
    fprintf(t->f, "%s\n{\"name\":\"%s%s%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":0,\"tid\":0}",
            t->events ? "," : "", rec_names[r->kind], op[0] ? " " : "", op, ts, end - ts);
    t->events++;
}

/* Operands of CALL are described to the kernel as cfx_tensors over the arena. */
static cfx_tensor slot_tensor(const cfx_slot *s, uint8_t *arena)
{
    cfx_tensor t;
    memset(&t, 0, sizeof t);
    t.type.dtype = (cfx_dtype)s->dtype;
    t.type.rank = s->rank;
    for (int d = 0; d < s->rank; d++)
        t.type.dims[d] = s->dims[d];
    t.data = arena + s->offset;
    return t;
}

/* The dispatch loop. `traced` is a constant at both call sites, so the compiler makes one copy
 * without any tracing code for the common case. Returns the outcome in *out. */
static void execute(const exec_run *run, uint8_t *arena, cfx_tensor *tensors, trace_state *trace,
                    const int traced, exec_outcome *out)
{
    const cfx_prog *prog = run->prog;
    const cfx_record *records = prog->records;
    const cfx_slot *slots = prog->slots;
    const int32_t *table = prog->table;
    atomic_int no_cancel = 0;
    atomic_int *cancel = run->cancel ? run->cancel : &no_cancel;
    const int64_t limit = run->max_iters > 0 ? run->max_iters : INT64_MAX;
    int64_t iters = 0;
    int32_t pc = 0;
    const cfx_record *r;
    double t0 = 0;

/* Lua's lvm.c style: fetch, dispatch, and the slot addresses a case needs. */
#define vmfetch() (r = &records[pc])
#define vmdispatch(k) switch (k)
#define SLOT(i) (arena + slots[i].offset)
#define A SLOT(r->a)
#define B SLOT(r->b)
#define C SLOT(r->c)
#define D SLOT(r->d)
#define COUNT(i) (slots[i].count)
#define STOP(status_, d0, d1)                                                                     \
    do {                                                                                          \
        out->status = (status_);                                                                  \
        out->detail[0] = (d0);                                                                    \
        out->detail[1] = (d1);                                                                    \
        goto stop;                                                                                \
    } while (0)

    for (;;) {
        vmfetch();
        if (traced)
            t0 = since_us(&trace->start);
        vmdispatch(r->kind)
        {
        case REC_HALT:
            if (traced)
                trace_event(trace, r, t0, since_us(&trace->start));
            out->status = CFX_OK;
            out->record = -1;
            out->iterations = iters;
            return;
        case REC_JUMP:
            pc = r->a;
            break;
        case REC_JUMP_FALSE:
            pc = *(const uint8_t *)A ? pc + 1 : r->b;
            break;
        case REC_JUMP_TRUE:
            pc = *(const uint8_t *)A ? r->b : pc + 1;
            break;
        case REC_SWITCH: {
            int32_t v = *(const int32_t *)A;
            pc = v >= 0 && v < r->c ? table[r->b + v] : table[r->b + r->c];
            break;
        }
        case REC_TICK:
            if (atomic_load_explicit(cancel, memory_order_relaxed))
                STOP(CFX_STOP_CANCELLED, 0, 0);
            if (iters >= limit)
                STOP(CFX_STOP_LIMIT, run->max_iters, 0);
            iters++;
            pc++;
            break;
        case REC_ASSERT:
            if (!*(const uint8_t *)A)
                STOP(CFX_STOP_ASSERT, 0, 0);
            pc++;
            break;
        case REC_PRINT:
            if (run->print)
                run->print(run->print_user, prog, pc, A);
            pc++;
            break;
        case REC_CHECK_INDEX: {
            int64_t v = k_load_int(slots[r->a].dtype, A), rows = r->b;
            if (v < -rows || v >= rows)
                STOP(CFX_STOP_INDEX, v, rows);
            pc++;
            break;
        }
        case REC_CHECK_DIVIDE: {
            int dt = slots[r->a].dtype;
            const uint8_t *p = A;
            for (int64_t e = 0; e < COUNT(r->a); e++)
                if (k_get_int(dt, p, e) == 0)
                    STOP(CFX_STOP_DIVIDE, 0, 0);
            pc++;
            break;
        }
        case REC_CHECK_STEP:
            if (k_load_int(slots[r->a].dtype, A) == 0)
                STOP(CFX_STOP_VALUE, 0, 0);
            pc++;
            break;
        case REC_UNARY:
            if (r->flags & REC_F_SCALAR) {
                switch (r->dtype) {
                case CFX_I32: k_unary1_i32(r->op, A, *(const int32_t *)B); break;
                case CFX_I64: k_unary1_i64(r->op, A, *(const int64_t *)B); break;
                case CFX_F32: k_unary1_f32(r->op, A, *(const float *)B); break;
                case CFX_F64: k_unary1_f64(r->op, A, *(const double *)B); break;
                default: k_unary1_b(r->op, A, *(const uint8_t *)B); break;
                }
            } else {
                k_unary(r->op, r->dtype, A, B, 0, COUNT(r->a));
            }
            pc++;
            break;
        case REC_BINARY:
            if (r->flags & REC_F_SCALAR) {
                switch (r->dtype) {
                case CFX_I32: k_binary1_i32(r->op, A, *(const int32_t *)B, *(const int32_t *)C); break;
                case CFX_I64: k_binary1_i64(r->op, A, *(const int64_t *)B, *(const int64_t *)C); break;
                case CFX_F32: k_binary1_f32(r->op, A, *(const float *)B, *(const float *)C); break;
                case CFX_F64: k_binary1_f64(r->op, A, *(const double *)B, *(const double *)C); break;
                default: k_binary1_b(r->op, A, *(const uint8_t *)B, *(const uint8_t *)C); break;
                }
            } else {
                k_binary(r->op, r->dtype, A, B, COUNT(r->b), C, COUNT(r->c), 0, COUNT(r->a));
            }
            pc++;
            break;
        case REC_REDUCE: {
            k_acc acc = k_reduce_init(r->op, r->dtype);
            k_reduce_range(r->op, r->dtype, &acc, B, 0, COUNT(r->b));
            k_reduce_finish(r->op, r->dtype, &acc, COUNT(r->b), A);
            pc++;
            break;
        }
        case REC_DOT: {
            k_acc acc = k_reduce_init(OP_SUM, r->dtype);
            k_dot_range(r->dtype, &acc, B, C, 0, COUNT(r->b));
            k_dot_finish(r->dtype, &acc, A);
            pc++;
            break;
        }
        case REC_MATMUL: {
            const cfx_slot *sb = &slots[r->b], *sc = &slots[r->c];
            int64_t m = sb->dims[0], k = sb->dims[1], n = sc->rank == 2 ? sc->dims[1] : 1;
            k_matmul(r->dtype, A, B, C, m, k, n, 0, m * n);
            pc++;
            break;
        }
        case REC_TRANSPOSE: {
            const cfx_slot *sb = &slots[r->b];
            k_transpose(r->dtype, A, B, sb->dims[0], sb->dims[1], 0, sb->count);
            pc++;
            break;
        }
        case REC_FILL:
            k_fill(r->dtype, A, B, 0, COUNT(r->a));
            pc++;
            break;
        case REC_IOTA:
            k_iota(r->dtype, A, 0, COUNT(r->a));
            pc++;
            break;
        case REC_COPY:
            if (r->a != r->b)
                memcpy(A, B, (size_t)slot_bytes(&slots[r->a]));
            pc++;
            break;
        case REC_CAST:
            k_cast(slots[r->a].dtype, A, r->dtype, B, 0, COUNT(r->a));
            pc++;
            break;
        case REC_WHERE:
            k_where(r->dtype, A, B, COUNT(r->b), C, COUNT(r->c), D, COUNT(r->d), 0, COUNT(r->a));
            pc++;
            break;
        case REC_GET_ROW: {
            int64_t rows = slots[r->b].dims[0];
            int64_t i = k_row_index(k_load_int(slots[r->c].dtype, C), rows);
            int64_t bytes = slot_bytes(&slots[r->a]);
            memcpy(A, B + i * bytes, (size_t)bytes);
            pc++;
            break;
        }
        case REC_SET_ROW: {
            int64_t rows = slots[r->a].dims[0];
            int64_t i = k_row_index(k_load_int(slots[r->b].dtype, B), rows);
            int64_t bytes = slot_bytes(&slots[r->c]);
            memcpy(A + i * bytes, C, (size_t)bytes);
            pc++;
            break;
        }
        case REC_CALL: {
            const exec_kernel *kern = run->kernels ? &run->kernels[r->a] : NULL;
            if (!kern || !kern->cpu_fn)
                STOP(CFX_ERROR, 0, 0);
            for (int32_t k = 0; k < r->c; k++)
                tensors[k] = slot_tensor(&slots[table[r->b + k]], arena);
            if (kern->cpu_fn(kern->user, r->d, tensors, r->c - r->d, tensors + r->d) != 0)
                STOP(CFX_ERROR, 0, 0);
            pc++;
            break;
        }
        default: /* never: the validator rejects unknown kinds */
            STOP(CFX_ERROR, 0, 0);
        }
        if (traced)
            trace_event(trace, r, t0, since_us(&trace->start));
    }
stop:
    if (traced)
        trace_event(trace, r, t0, since_us(&trace->start));
    out->record = pc;
    out->iterations = iters;
#undef vmfetch
#undef vmdispatch
#undef SLOT
#undef A
#undef B
#undef C
#undef D
#undef COUNT
#undef STOP
}

int cpu_run(const exec_run *run, exec_outcome *out)
{
    const cfx_prog *prog = run->prog;
    memset(out, 0, sizeof *out);
    out->status = CFX_ERROR;
    out->record = -1;
    if (run->device_buffers)
        return -1;

    /* one allocation: the arena, then room for the widest CALL's operand list */
    int32_t max_call = 0;
    for (int32_t i = 0; i < prog->nrecords; i++)
        if (prog->records[i].kind == REC_CALL && prog->records[i].c > max_call)
            max_call = prog->records[i].c;
    size_t arena_bytes = (size_t)prog->arena_bytes;
    size_t total = arena_bytes + (size_t)max_call * sizeof(cfx_tensor);
    total = (total + CFX_ARENA_ALIGN - 1) / CFX_ARENA_ALIGN * CFX_ARENA_ALIGN;
    if (total == 0)
        total = CFX_ARENA_ALIGN;
    uint8_t *arena = aligned_alloc(CFX_ARENA_ALIGN, total);
    if (!arena)
        return -1;
    if (prog->const_bytes > 0)
        memcpy(arena, prog->consts, (size_t)prog->const_bytes);
    memset(arena + prog->const_bytes, 0, total - (size_t)prog->const_bytes);
    for (int32_t i = 0; i < prog->ninputs; i++) {
        const cfx_slot *s = &prog->slots[prog->inputs[i]];
        if (!run->inputs || !run->inputs[i]) {
            free(arena);
            return -1;
        }
        memcpy(arena + s->offset, run->inputs[i], (size_t)slot_bytes(s));
    }
    cfx_tensor *tensors = (cfx_tensor *)(arena + arena_bytes);

    if (run->trace) {
        trace_state t = {run->trace, 0, 0, {0, 0}};
        clock_gettime(CLOCK_MONOTONIC, &t.start);
        fputs("{\"traceEvents\":[", t.f);
        execute(run, arena, tensors, &t, 1, out);
        fprintf(t.f,
                "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"executor\":\"cpu\",\"graph\":\"%s\","
                "\"events\":%lld,\"events_dropped\":%lld,\"event_cap\":%d}}\n",
                prog->name, (long long)t.events, (long long)t.dropped, TRACE_MAX_EVENTS);
        fflush(t.f);
    } else {
        execute(run, arena, tensors, NULL, 0, out);
    }

    if (out->status == CFX_OK && run->results) {
        for (int32_t i = 0; i < prog->nresults; i++) {
            const cfx_slot *s = &prog->slots[prog->results[i]];
            if (run->results[i])
                memcpy(run->results[i], arena + s->offset, (size_t)slot_bytes(s));
        }
    }
    free(arena);
    return 0;
}

/* ==== the exec_ops interface: create keeps the program, run runs synchronously ============== */
typedef struct cpu_exec {
    const cfx_prog *prog;
    exec_outcome outcome;
} cpu_exec;

static int cpu_available(char *why, size_t len)
{
    if (why && len)
        why[0] = '\0';
    return 1;
}

static void *cpu_create(const cfx_prog *prog, char *err, size_t len)
{
    cpu_exec *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    e->prog = prog;
    e->outcome.status = CFX_OK;
    e->outcome.record = -1;
    return e;
}

static int cpu_ops_run(void *self, const exec_run *run, int async, char *err, size_t len)
{
    cpu_exec *e = self;
    if (run->device_buffers) {
        snprintf(err, len, "the cpu backend cannot use device buffers");
        return -1;
    }
    if (cpu_run(run, &e->outcome) != 0) {
        snprintf(err, len, "out of memory, or an input is not bound");
        return -1;
    }
    return 0;
}

static int cpu_wait(void *self, exec_outcome *out, char *err, size_t len)
{
    *out = ((cpu_exec *)self)->outcome;
    return 0;
}

static void cpu_destroy(void *self)
{
    free(self);
}

const exec_ops cpu_exec_ops = {CFX_BACKEND_CPU, cpu_available, cpu_create, cpu_ops_run, cpu_wait,
                               cpu_destroy};
