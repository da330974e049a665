/* cpu.c: the CPU executor, the reference semantics of every record kind.
 *
 * A plain `switch` dispatch loop over a validated program: it trusts the program completely
 * (prog_validate has checked every slot, target, table range, operand type and row index) and
 * does no per-record checks of its own. Op arithmetic comes from kernels/, the same functions
 * the GPU executors call, but for products, dots and whole-tensor reductions, which run in
 * host/runtime/cpu_linalg.c in the executor's accumulation mode (CFX_OPTION_ACCUMULATE: the fast one,
 * through a CBLAS, by default; cpu_run, which the tests call, the reference's, bit-identical to
 * kernels/), and for the elementwise records this file runs through loops of its own that the
 * compiler vectorises or that skip a slow path (binary_range, unary_range, transpose_range,
 * box_runs: the same k_ functions element by element, the same bits); records flagged
 * REC_F_SCALAR take a typed fast path through the one-element op functions, which is what
 * makes scalar loops cost a few nanoseconds per record. Each run first decodes the records
 * into operand addresses and one dispatch code (see "decoded records"), fusing a comparison
 * with the JUMP_FALSE that tests it, and with the
 * TICK after that when there is one (a loop's test and the start of its body); a traced or
 * profiled run does not fuse, so its trace and profile show every record. An executor runs on
 * CFX_OPTION_THREADS threads (default the cores available): an elementwise record over a large
 * tensor is split into element ranges over them (split_min, host/runtime/pool.c), and so are the
 * fast mode's sums; every split gives the same bits as one thread.
 *
 * Run semantics the other executors match:
 * - one arena per run: the const image, then zeros, then each input copied into its slot;
 *   results are copied out only at HALT, so a stopped run writes no results;
 * - TICK: first the cancel flag (-> cancelled; this executor also reads it before a record of
 *   CFX_CANCEL_CHECK_ELEMENTS or more and between the bands of a long product), then the budget:
 *   with max_iters = N, the (N+1)-th TICK stops the run with limit (detail[0] = N);
 *   out->iterations counts the TICKs that passed, so it is N after a limit stop. The lowering
 *   puts a loop's TICK at the start of its body, after the test, so TICKs are iterations (bodies
 *   entered): a loop of exactly N iterations ends ok under a budget of N, and the stop comes
 *   before the (N+1)-th body;
 * - the stopping record is out->record (-1 after HALT); CHECK_INDEX stops with detail =
 *   {index, rows}; a CALL whose kernel fails (or has no CPU function) stops with CFX_ERROR.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_linalg.h"
#include "exec.h"
#include "pool.h"
#include "kernels/kernels.h"
#include "host/program/program.h"

/* Chrome trace events are capped so that a long loop cannot fill the disk. */
#define TRACE_MAX_EVENTS 1000000

typedef struct trace_state {
    FILE *f;
    const cfx_prog *prog;
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

static int64_t now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static void trace_event(trace_state *t, const cfx_record *r, double ts, double end)
{
    if (t->events >= TRACE_MAX_EVENTS) {
        t->dropped++;
        return;
    }
    exec_trace_event(t->f, t->prog, (int32_t)(r - t->prog->records), NULL, ts, end - ts, 0);
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

/* ==== decoded records ========================================================================
 * Before a run, each record is decoded once into the arena addresses of its operands and a
 * `code` that names a hot case directly: a typed one-element UNARY/BINARY (kind, dtype and
 * op folded into one number), a jump or a TICK. The dispatch loop switches on that code, so a
 * scalar `i = i + 1` costs one dispatch and no slot lookups; every other record takes the
 * general path (F_GENERAL), which switches on the record itself. */
enum {
    F_GENERAL,
    F_JUMP,
    F_JUMP_FALSE,
    F_JUMP_TRUE,
    F_TICK,
    F_BIN,                          /* + dtype * OP_COUNT + op */
    F_UN = F_BIN + 5 * OP_COUNT,    /* + dtype * OP_COUNT + op */
    F_CMP_JF = F_UN + 5 * OP_COUNT, /* + dtype * OP_COUNT + op: a comparison and the JUMP_FALSE
                                       after it that tests its result (an if's test) */
    F_CMP_JF_TICK = F_CMP_JF + 5 * OP_COUNT, /* + dtype * OP_COUNT + op: the same, then the TICK
                                                the JUMP_FALSE falls into (a loop's test and
                                                the start of its body): three records, one step */
    F_JUMP_CMP_JF_TICK = F_CMP_JF_TICK + 5 * OP_COUNT, /* + dtype * OP_COUNT + op: a JUMP to an
                                                          F_CMP_JF_TICK (a loop's back edge)
                                                          and that step: four records */
};
#define FBIN(dt, op) (F_BIN + (dt) * OP_COUNT + (op))
#define FUN(dt, op) (F_UN + (dt) * OP_COUNT + (op))
#define FCMPJF(dt, op) (F_CMP_JF + (dt) * OP_COUNT + (op))
#define FCMPJFT(dt, op) (F_CMP_JF_TICK + (dt) * OP_COUNT + (op))
#define FJCMPJFT(dt, op) (F_JUMP_CMP_JF_TICK + (dt) * OP_COUNT + (op))

typedef struct decoded {
    uint8_t *a, *b, *c;
    int32_t code;
    int32_t target; /* JUMP, JUMP_FALSE, JUMP_TRUE */
} decoded;

static int is_compare(int op)
{
    return op == OP_LT || op == OP_LE || op == OP_GT || op == OP_GE || op == OP_EQ || op == OP_NE;
}

/* `fuse`: allow the fused steps (F_CMP_JF, F_CMP_JF_TICK, F_JUMP_CMP_JF_TICK). A fused step
 * still writes everything its records write and stops at the same record (a budget stop
 * names the TICK), and the later records keep their own decoding for the jumps that land on
 * them. Off when tracing, so the trace shows every record. A loop `while i < n` is lowered as
 * `test: i < n; JUMP_FALSE exit; TICK; body; JUMP test`: its first test runs as one
 * F_CMP_JF_TICK step, and each later iteration's control (the back edge, the test and the
 * TICK) as one F_JUMP_CMP_JF_TICK step. */
static void decode(const cfx_prog *prog, uint8_t *arena, decoded *dec, int fuse)
{
    for (int32_t i = 0; i < prog->nrecords; i++) {
        const cfx_record *r = &prog->records[i];
        const char *f = rec_fields[r->kind];
        decoded *d = &dec[i];
        memset(d, 0, sizeof *d);
        d->a = f[0] == 's' ? arena + prog->slots[r->a].offset : NULL;
        d->b = f[1] == 's' ? arena + prog->slots[r->b].offset : NULL;
        d->c = f[2] == 's' ? arena + prog->slots[r->c].offset : NULL;
        d->code = F_GENERAL;
        REC_COUNT_IS(34);
        switch (r->kind) {
        case REC_JUMP:
            d->code = F_JUMP;
            d->target = r->a;
            break;
        case REC_JUMP_FALSE: d->code = F_JUMP_FALSE; d->target = r->b; break;
        case REC_JUMP_TRUE: d->code = F_JUMP_TRUE; d->target = r->b; break;
        case REC_TICK: d->code = F_TICK; break;
        case REC_BINARY:
            if (!(r->flags & REC_F_SCALAR))
                break;
            d->code = FBIN(r->dtype, r->op);
            if (fuse && is_compare(r->op) && r->dtype != CFX_BOOL && i + 1 < prog->nrecords &&
                prog->records[i + 1].kind == REC_JUMP_FALSE && prog->records[i + 1].a == r->a) {
                d->code = FCMPJF(r->dtype, r->op);
                d->target = prog->records[i + 1].b;
                if (i + 2 < prog->nrecords && prog->records[i + 2].kind == REC_TICK)
                    d->code = FCMPJFT(r->dtype, r->op);
            }
            break;
        case REC_UNARY:
            if (r->flags & REC_F_SCALAR)
                d->code = FUN(r->dtype, r->op);
            break;
        default:
            break;
        }
    }
    /* a JUMP to a loop's fused test takes the test in (its operands; the exit is the test's) */
    for (int32_t i = 0; fuse && i < prog->nrecords; i++) {
        const cfx_record *r = &prog->records[i];
        int32_t t = r->a;
        if (r->kind != REC_JUMP || dec[t].code < F_CMP_JF_TICK || dec[t].code >= F_JUMP_CMP_JF_TICK)
            continue;
        dec[i].a = dec[t].a;
        dec[i].b = dec[t].b;
        dec[i].c = dec[t].c;
        dec[i].code = dec[t].code - F_CMP_JF_TICK + F_JUMP_CMP_JF_TICK;
    }
}

/* The fast cases, generated from the op lists in kernels/elementwise.h. */
#define FAST_BIN(OPC, STEM, ISBOOL, DT, SFX, T)                                                   \
    case FBIN(DT, OPC):                                                                           \
        if (ISBOOL)                                                                               \
            *(uint8_t *)x->a = (uint8_t)k_##STEM##_##SFX(*(const T *)x->b, *(const T *)x->c);     \
        else                                                                                      \
            *(T *)x->a = (T)k_##STEM##_##SFX(*(const T *)x->b, *(const T *)x->c);                 \
        x++;                                                                                      \
        break;
#define FAST_UN(OPC, STEM, ISBOOL, DT, SFX, T)                                                    \
    case FUN(DT, OPC):                                                                            \
        *(T *)x->a = (T)k_##STEM##_##SFX(*(const T *)x->b);                                       \
        x++;                                                                                      \
        break;
/* The TICK a fused step ends with: x is at the TICK, so a stop there names it. */
#define TICK_STEP()                                                                               \
    do {                                                                                          \
        if (atomic_load_explicit(cancel, memory_order_relaxed))                                   \
            STOP(CFX_STOP_CANCELLED, 0, 0);                                                       \
        if (iters >= limit)                                                                       \
            STOP(CFX_STOP_LIMIT, run->max_iters, 0);                                              \
        iters++;                                                                                  \
        x++;                                                                                      \
    } while (0)
#define FAST_CMP_JF(OPC, STEM, ISBOOL, DT, SFX, T)                                                \
    case FCMPJF(DT, OPC): {                                                                       \
        uint8_t v_ = (uint8_t)k_##STEM##_##SFX(*(const T *)x->b, *(const T *)x->c);               \
        *(uint8_t *)x->a = v_;                                                                    \
        x = v_ ? x + 2 : dec + x->target;                                                         \
        break;                                                                                    \
    }                                                                                             \
    case FCMPJFT(DT, OPC): {                                                                      \
        uint8_t v_ = (uint8_t)k_##STEM##_##SFX(*(const T *)x->b, *(const T *)x->c);               \
        *(uint8_t *)x->a = v_;                                                                    \
        if (!v_) {                                                                                \
            x = dec + x->target;                                                                  \
            break;                                                                                \
        }                                                                                         \
        x += 2;                                                                                   \
        TICK_STEP();                                                                              \
        break;                                                                                    \
    }                                                                                             \
    case FJCMPJFT(DT, OPC): { /* x->a, b, c are the test's; x->target is the test */              \
        const decoded *h_ = dec + x->target;                                                      \
        uint8_t v_ = (uint8_t)k_##STEM##_##SFX(*(const T *)x->b, *(const T *)x->c);               \
        *(uint8_t *)x->a = v_;                                                                    \
        if (!v_) {                                                                                \
            x = dec + h_->target;                                                                 \
            break;                                                                                \
        }                                                                                         \
        x = h_ + 2;                                                                               \
        TICK_STEP();                                                                              \
        break;                                                                                    \
    }
#define CMP_OPS(X) X(OP_LT, lt, 1) X(OP_LE, le, 1) X(OP_GT, gt, 1) X(OP_GE, ge, 1) X(OP_EQ, eq, 1) X(OP_NE, ne, 1)
#define FAST_CMP_JF_I32(o, s, z) FAST_CMP_JF(o, s, z, CFX_I32, i32, int32_t)
#define FAST_CMP_JF_I64(o, s, z) FAST_CMP_JF(o, s, z, CFX_I64, i64, int64_t)
#define FAST_CMP_JF_F32(o, s, z) FAST_CMP_JF(o, s, z, CFX_F32, f32, float)
#define FAST_CMP_JF_F64(o, s, z) FAST_CMP_JF(o, s, z, CFX_F64, f64, double)
#define FAST_BIN_I32(o, s, z) FAST_BIN(o, s, z, CFX_I32, i32, int32_t)
#define FAST_BIN_I64(o, s, z) FAST_BIN(o, s, z, CFX_I64, i64, int64_t)
#define FAST_BIN_F32(o, s, z) FAST_BIN(o, s, z, CFX_F32, f32, float)
#define FAST_BIN_F64(o, s, z) FAST_BIN(o, s, z, CFX_F64, f64, double)
#define FAST_BIN_B(o, s, z) FAST_BIN(o, s, z, CFX_BOOL, b, uint8_t)
#define FAST_UN_I32(o, s, z) FAST_UN(o, s, z, CFX_I32, i32, int32_t)
#define FAST_UN_I64(o, s, z) FAST_UN(o, s, z, CFX_I64, i64, int64_t)
#define FAST_UN_F32(o, s, z) FAST_UN(o, s, z, CFX_F32, f32, float)
#define FAST_UN_F64(o, s, z) FAST_UN(o, s, z, CFX_F64, f64, double)
#define FAST_UN_B(o, s, z) FAST_UN(o, s, z, CFX_BOOL, b, uint8_t)

#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define NOINLINE
#define ALWAYS_INLINE inline
#endif

/* A matrix product in bands of rows (cpu_matmul_band: tens of milliseconds each at most), with
 * the cancel flag read between bands, so that a deadline or Ctrl-C stops a long product soon.
 * Returns 1 when cancelled (the product left partly written; a stopped run writes no results). */
static int matmul_cancellable(int dtype, int acc_mode, void *dst, const void *a, const void *b, int64_t m,
                              int64_t k, int64_t n, atomic_int *cancel)
{
    size_t es = (size_t)dtype_size(dtype);
    int64_t band = cpu_matmul_band(dtype, acc_mode, m, k, n);
    for (int64_t i = 0; i < m; i += band) {
        if (i > 0 && atomic_load_explicit(cancel, memory_order_relaxed))
            return 1;
        int64_t end = i + band < m ? i + band : m;
        cpu_matmul(dtype, acc_mode, (char *)dst + (size_t)(i * n) * es, (const char *)a + (size_t)(i * k) * es,
                   b, end - i, k, n);
    }
    return 0;
}

/* Elementwise records are split over the executor's threads (host/runtime/pool.c) from a size
 * that depends on what an element costs, so that each part is tens of microseconds of work or
 * more, above what waking a worker costs: SPLIT_CHEAP elements for the ops that vectorise
 * (about 0.4 to 1.4 ns an element on one core, streaming: + - * /, comparisons, min, max,
 * copies, fills), SPLIT_MEDIUM for those about 1 to 9 ns (sqrt, floor, round, casts, where,
 * transposes, integer division), SPLIT_HEAVY for the math library's functions and the index
 * arithmetic of a box whose last dimension is an index (3 to 20 ns: exp, log, tanh, erf, pow,
 * floordiv); broadcasts and other boxes copy runs (broadcast_runs, box_runs): cheap. Each part
 * is at least half the size. Smaller records, and every record of a one-thread executor, run
 * on the calling thread. The per-element costs are measured in
 * profiling/results/2026-11-29-cpu-threads.md; on an idle machine two threads lost at 262144
 * elements of the cheap ops (0.88-0.97x) and won from 1048576 (1.43-1.54x), so they split from there. */
#define SPLIT_CHEAP 1048576
#define SPLIT_MEDIUM 65536
#define SPLIT_HEAVY 8192

static int64_t split_min(const cfx_prog *prog, const cfx_record *r)
{
    int real = r->dtype == CFX_F32 || r->dtype == CFX_F64;
    /* a record whose elements move (a transpose, a broadcast, a box) over its own slot reads
     * other elements' places: kept whole, in its order */
    if (r->a == r->b && (r->kind == REC_TRANSPOSE || r->kind == REC_BROADCAST || r->kind == REC_GET_BOX ||
                         r->kind == REC_SET_BOX || r->kind == REC_PERMUTE))
        return INT64_MAX;
    switch (r->kind) {
    case REC_UNARY:
        switch (r->op) {
        case OP_NEG:
        case OP_ABS:
        case OP_RELU:
        case OP_NOT:
            return SPLIT_CHEAP;
        case OP_SQRT:
        case OP_FLOOR:
        case OP_CEIL:
        case OP_ROUND:
        case OP_SIGN:
            return SPLIT_MEDIUM;
        default:
            return real ? SPLIT_HEAVY : SPLIT_CHEAP;
        }
    case REC_BINARY:
        switch (r->op) {
        case OP_MOD:
        case OP_FLOORDIV:
        case OP_TRUNCDIV:
        case OP_FMOD:
        case OP_POW:
        case OP_ATAN2:
            return real || r->op == OP_POW ? SPLIT_HEAVY : SPLIT_MEDIUM;
        default:
            return SPLIT_CHEAP;
        }
    case REC_FILL:
    case REC_COPY:
        return SPLIT_CHEAP;
    case REC_BROADCAST:
    case REC_GATHER:
    case REC_PERMUTE:
        return SPLIT_CHEAP;
    case REC_GET_BOX:
    case REC_SET_BOX: { /* runs, unless the box's last dimension is an index */
        int rank = prog->slots[r->kind == REC_GET_BOX ? r->b : r->a].rank;
        return rank > 0 && prog->table[r->c + 2 * rank - 1] >= 1 ? SPLIT_CHEAP : SPLIT_HEAVY;
    }
    default: /* CAST, WHERE, IOTA: about 1 to 9 ns; TRANSPOSE was too, and in tiles
              * (transpose_range) is about 0.5: left here, where the splits were measured */
        return SPLIT_MEDIUM;
    }
}

/* A run's bytes. The short runs of a reduction's halving tree (a softmax's max over rows ends
 * in runs of one to sixteen floats) are copied with a size the compiler knows, not a call. */
static inline void copy_run(uint8_t *d, const uint8_t *s, int64_t bytes)
{
    switch (bytes) {
    case 4: memcpy(d, s, 4); break;
    case 8: memcpy(d, s, 8); break;
    case 16: memcpy(d, s, 16); break;
    case 32: memcpy(d, s, 32); break;
    case 64: memcpy(d, s, 64); break;
    default: memcpy(d, s, (size_t)bytes); break;
    }
}

/* BROADCAST and the boxes a run at a time: the elements of a range that lie in one row of the
 * result's last dimension (of the box's) come from one stretch of the source, or, broadcast along
 * that dimension, from one element of it; its place is found once a run (kernels/'s index
 * functions, the GPU's per element; a box's from the first run's, box_runs) and the run is a
 * memcpy or a fill. The same bytes as
 * k_broadcast and k_box_copy element by element, at a copy's speed: the index arithmetic per
 * element cost a decoder's layer norms and heads 10 to 25 us a record. */
static void broadcast_runs(int size, uint8_t *d, const uint8_t *s, const k_bshape *sh, int64_t lo, int64_t hi)
{
    if (sh->drank == 0) {
        k_broadcast(size, d, s, sh, lo, hi);
        return;
    }
    int64_t row = sh->dims[sh->drank - 1];
    int along = sh->srank > 0 && sh->sdims[sh->srank - 1] != 1; /* the source moves with the row */
    for (int64_t e = lo; e < hi;) {
        int64_t n = row - e % row;
        n = n < hi - e ? n : hi - e;
        const uint8_t *from = s + k_broadcast_src(sh, e) * size;
        if (along) {
            memcpy(d + e * size, from, (size_t)(n * size));
        } else if (size == 4) {
            uint32_t v;
            memcpy(&v, from, 4);
            for (int64_t i = 0; i < n; i++)
                memcpy(d + (e + i) * 4, &v, 4);
        } else {
            for (int64_t i = 0; i < n; i++)
                memcpy(d + (e + i) * size, from, (size_t)size);
        }
        e += n;
    }
}

/* PERMUTE: when the last dimension stays last, a run of the result's last dimension is one
 * stretch of the source (its place from k_permute_src once a run) and is a memcpy; otherwise
 * k_permute's odometer, an element at a time, with a size the compiler knows for 4 and 8 bytes.
 * The same bytes as k_permute. */
static void permute_runs(int size, uint8_t *d, const uint8_t *s, const k_pshape *sh, int64_t lo, int64_t hi)
{
    int rank = sh->rank;
    if (rank > 0 && sh->stride[rank - 1] == 1 && sh->dims[rank - 1] > 1) {
        int64_t row = sh->dims[rank - 1];
        for (int64_t e = lo; e < hi;) {
            int64_t n = row - e % row;
            n = n < hi - e ? n : hi - e;
            memcpy(d + e * size, s + k_permute_src(sh, e) * size, (size_t)(n * size));
            e += n;
        }
        return;
    }
    if (size != 4 && size != 8) {
        k_permute(size, d, s, sh, lo, hi);
        return;
    }
    if (lo >= hi)
        return;
    int64_t idx[CFX_MAX_RANK] = {0}, from = 0, e = lo;
    for (int k = rank - 1; k >= 0; k--) {
        idx[k] = e % sh->dims[k];
        e /= sh->dims[k];
        from += idx[k] * sh->stride[k];
    }
    int64_t inner = rank > 0 ? sh->dims[rank - 1] : 1, step = rank > 0 ? sh->stride[rank - 1] : 0;
    for (e = lo; e < hi;) {
        /* the rest of this row of the result: the source's elements `step` apart */
        int64_t n = inner - (rank > 0 ? idx[rank - 1] : 0);
        n = n < hi - e ? n : hi - e;
        if (size == 4)
            for (int64_t i = 0; i < n; i++)
                memcpy(d + (e + i) * 4, s + (from + i * step) * 4, 4);
        else
            for (int64_t i = 0; i < n; i++)
                memcpy(d + (e + i) * 8, s + (from + i * step) * 8, 8);
        e += n;
        if (e >= hi)
            break;
        /* the next row: the odometer over the dimensions before the last */
        from -= (rank > 0 ? idx[rank - 1] : 0) * step;
        if (rank > 0)
            idx[rank - 1] = 0;
        for (int k = rank - 2; k >= 0; k--) {
            from += sh->stride[k];
            if (++idx[k] < sh->dims[k])
                break;
            from -= idx[k] * sh->stride[k];
            idx[k] = 0;
        }
    }
}

static void box_runs(int set, int size, uint8_t *d, const uint8_t *s, const k_box *b, int64_t lo, int64_t hi)
{
    int rank = b->rank;
    int64_t row = rank > 0 ? b->len[rank - 1] : -1;
    if (row < 1 || lo >= hi) { /* an index last: no two box elements are neighbours in the tensor */
        k_box_copy(set, size, d, s, b, lo, hi);
        return;
    }
    /* a run is the box's last dimension, and the ones before it while the dimensions after
     * them are whole (a head of [4, 64, 32] is one run of 2048); the place of the first run is
     * found once (k_box_src), the next runs' by an odometer over the box's dimensions above the
     * run, so a run costs its copy and no divisions */
    int64_t idx[K_MAX_RANK], len[K_MAX_RANK], stride[K_MAX_RANK], st = 1;
    for (int q = rank - 1; q >= 0; q--) {
        len[q] = b->len[q] < 0 ? 1 : b->len[q];
        stride[q] = st;
        st *= b->dims[q];
    }
    int top = rank - 1;
    while (top > 0 && len[top] == b->dims[top]) {
        top--;
        row *= len[top];
    }
    int64_t pos = lo % row, rest = lo / row;
    for (int q = top - 1; q >= 0; q--) {
        idx[q] = rest % len[q];
        rest /= len[q];
    }
    int64_t x = k_box_src(b, lo);
    for (int64_t e = lo; e < hi;) {
        int64_t n = row - pos;
        n = n < hi - e ? n : hi - e;
        if (set)
            copy_run(d + x * size, s + e * size, n * size);
        else
            copy_run(d + e * size, s + x * size, n * size);
        e += n;
        x -= pos; /* the start of the run; then the next run */
        pos = 0;
        for (int q = top - 1; q >= 0; q--) {
            x += stride[q];
            if (++idx[q] < len[q])
                break;
            x -= len[q] * stride[q];
            idx[q] = 0;
        }
    }
}

/* TRANSPOSE in tiles (dst [n, m], dst[i][j] = src[j][i]): a tile's rows of the source stay in
 * cache while its columns are read; the same bytes as k_transpose, which finds each element's
 * place with a division. */
#define TILE 16
#define TRANSPOSE_TILES(NAME, T)                                                                  \
    static void NAME(uint8_t *dst, const uint8_t *src, int64_t m, int64_t n, int64_t r0, int64_t r1) \
    {                                                                                             \
        for (int64_t i0 = r0; i0 < r1; i0 += TILE)                                                \
            for (int64_t j0 = 0; j0 < m; j0 += TILE) {                                            \
                int64_t i1 = i0 + TILE < r1 ? i0 + TILE : r1, j1 = j0 + TILE < m ? j0 + TILE : m; \
                for (int64_t i = i0; i < i1; i++)                                                 \
                    for (int64_t j = j0; j < j1; j++) {                                           \
                        T v;                                                                      \
                        memcpy(&v, src + (j * n + i) * sizeof(T), sizeof(T));                     \
                        memcpy(dst + (i * m + j) * sizeof(T), &v, sizeof(T));                     \
                    }                                                                             \
            }                                                                                     \
    }
TRANSPOSE_TILES(transpose_rows4, uint32_t)
TRANSPOSE_TILES(transpose_rows8, uint64_t)
#undef TILE

static void transpose_range(int dtype, uint8_t *d, const uint8_t *s, int64_t m, int64_t n, int64_t lo,
                            int64_t hi)
{
    int size = dtype_size(dtype);
    int64_t r0 = (lo + m - 1) / m, r1 = hi / m; /* the whole rows of dst in [lo, hi) */
    if ((size != 4 && size != 8) || r0 >= r1) {
        k_transpose(dtype, d, s, m, n, lo, hi);
        return;
    }
    k_transpose(dtype, d, s, m, n, lo, r0 * m);
    (size == 4 ? transpose_rows4 : transpose_rows8)(d, s, m, n, r0, r1);
    k_transpose(dtype, d, s, m, n, r1 * m, hi);
}

/* BINARY of reals over contiguous operands, or one of them one element, in loops the compiler
 * vectorises (k_binary reads each operand with a stride, 0 or 1, known only at run time, which
 * keeps it scalar): the same k_ functions element by element, so the same bits. Returns 0,
 * having done nothing, for the ops it does not take. */
#define BINARY_LOOPS(T, FN)                                                                       \
    do {                                                                                          \
        if (na != 1 && nb != 1) {                                                                 \
            for (int64_t e = lo; e < hi; e++)                                                     \
                d[e] = FN(a[e], b[e]);                                                            \
        } else if (nb == 1) {                                                                     \
            T y = b[0];                                                                           \
            for (int64_t e = lo; e < hi; e++)                                                     \
                d[e] = FN(a[e], y);                                                               \
        } else {                                                                                  \
            T x = a[0];                                                                           \
            for (int64_t e = lo; e < hi; e++)                                                     \
                d[e] = FN(x, b[e]);                                                               \
        }                                                                                         \
    } while (0)
#define BINARY_FAST(NAME, T, SFX)                                                                 \
    static int NAME(int op, T *d, const T *a, int64_t na, const T *b, int64_t nb, int64_t lo, int64_t hi) \
    {                                                                                             \
        switch (op) {                                                                             \
        case OP_ADD: BINARY_LOOPS(T, k_add_##SFX); return 1;                                      \
        case OP_SUB: BINARY_LOOPS(T, k_sub_##SFX); return 1;                                      \
        case OP_MUL: BINARY_LOOPS(T, k_mul_##SFX); return 1;                                      \
        case OP_DIV: BINARY_LOOPS(T, k_div_##SFX); return 1;                                      \
        case OP_MAX: BINARY_LOOPS(T, k_max_##SFX); return 1;                                      \
        case OP_MIN: BINARY_LOOPS(T, k_min_##SFX); return 1;                                      \
        default: return 0;                                                                        \
        }                                                                                         \
    }
BINARY_FAST(binary_fast_f32, float, f32)
BINARY_FAST(binary_fast_f64, double, f64)

static void binary_range(int op, int dtype, void *dst, const void *a, int64_t na, const void *b, int64_t nb,
                         int64_t lo, int64_t hi)
{
    if (dtype == K_F32 && binary_fast_f32(op, dst, a, na, b, nb, lo, hi))
        return;
    if (dtype == K_F64 && binary_fast_f64(op, dst, a, na, b, nb, lo, hi))
        return;
    k_binary(op, dtype, dst, a, na, b, nb, lo, hi);
}

/* UNARY's own loops for two ops of reals, the same bits as k_unary's:
 * - relu: k_relu's selection, written so that the compiler makes it branch-free (k_unary's
 *   loop branches on the sign, and mispredicts half of an activation's elements);
 * - exp: below -104 (f32; -746, f64) the result rounds to +0, which libm reaches by its
 *   underflow path (errno and the flag: several times the cost of an ordinary argument), as
 *   the masked scores of a softmax all do. */
static NOINLINE void unary_range(int op, int dtype, void *dst, const void *src, int64_t lo, int64_t hi)
{
    if (op == OP_RELU && dtype == K_F32) {
        float *d = dst;
        const float *s = src;
        for (int64_t e = lo; e < hi; e++) {
            float a = s[e], r = a > 0.0f ? a : 0.0f;
            d[e] = a != a ? a : r;
        }
    } else if (op == OP_RELU && dtype == K_F64) {
        double *d = dst;
        const double *s = src;
        for (int64_t e = lo; e < hi; e++) {
            double a = s[e], r = a > 0.0 ? a : 0.0;
            d[e] = a != a ? a : r;
        }
    } else if (op == OP_EXP && dtype == K_F32) {
        float *d = dst;
        const float *s = src;
        for (int64_t e = lo; e < hi; e++)
            d[e] = s[e] < -104.0f ? 0.0f : k_exp_f32(s[e]);
    } else if (op == OP_EXP && dtype == K_F64) {
        double *d = dst;
        const double *s = src;
        for (int64_t e = lo; e < hi; e++)
            d[e] = s[e] < -746.0 ? 0.0 : k_exp_f64(s[e]);
    } else {
        k_unary(op, dtype, dst, src, lo, hi);
    }
}

/* The elementwise records, over elements [lo, hi) of their result (of their source for
 * SET_BOX): each element is computed alone, so any split of the range gives the same bits. */
static void data_range(const cfx_prog *prog, const cfx_record *r, uint8_t *arena, int64_t lo, int64_t hi)
{
    const cfx_slot *slots = prog->slots;
#define SLOT(i) (arena + slots[i].offset)
#define A SLOT(r->a)
#define B SLOT(r->b)
#define C SLOT(r->c)
#define D SLOT(r->d)
#define COUNT(i) (slots[i].count)
    switch (r->kind) { /* the kinds run_data sends here */
    case REC_UNARY:
        unary_range(r->op, r->dtype, A, B, lo, hi);
        break;
    case REC_BINARY:
        binary_range(r->op, r->dtype, A, B, COUNT(r->b), C, COUNT(r->c), lo, hi);
        break;
    case REC_TRANSPOSE: {
        const cfx_slot *sb = &slots[r->b];
        transpose_range(r->dtype, A, B, sb->dims[0], sb->dims[1], lo, hi);
        break;
    }
    case REC_FILL:
        k_fill(r->dtype, A, B, lo, hi);
        break;
    case REC_IOTA:
        k_iota(r->dtype, A, lo, hi);
        break;
    case REC_COPY: {
        size_t es = (size_t)dtype_size(slots[r->a].dtype);
        if (r->a != r->b)
            memcpy(A + (size_t)lo * es, B + (size_t)lo * es, (size_t)(hi - lo) * es);
        break;
    }
    case REC_CAST:
        k_cast(slots[r->a].dtype, A, r->dtype, B, lo, hi);
        break;
    case REC_WHERE:
        k_where(r->dtype, A, B, COUNT(r->b), C, COUNT(r->c), D, COUNT(r->d), lo, hi);
        break;
    case REC_GET_BOX:
    case REC_SET_BOX: {
        int get = r->kind == REC_GET_BOX;
        const cfx_slot *t = &slots[get ? r->b : r->a];
        const int32_t *ent = prog->table + r->c;
        int64_t st[CFX_MAX_RANK] = {0};
        for (int d = 0; d < t->rank; d++)
            if (ent[2 * d] >= 0)
                st[d] = k_load_int(slots[ent[2 * d]].dtype, SLOT(ent[2 * d]));
        k_box bx = rec_box(ent, t, st);
        box_runs(!get, dtype_size(t->dtype), A, B, &bx, lo, hi);
        break;
    }
    case REC_BROADCAST: {
        k_bshape sh = rec_bshape(&slots[r->a], &slots[r->b]);
        broadcast_runs(dtype_size(slots[r->a].dtype), A, B, &sh, lo, hi);
        break;
    }
    case REC_GATHER: {
        int64_t m, n, inner;
        rec_gather(slots, r, &m, &n, &inner);
        k_gather(dtype_size(r->dtype), A, B, slots[r->c].dtype, C, m, n, inner, lo, hi);
        break;
    }
    case REC_PERMUTE: {
        k_pshape sh = rec_pshape(slots, r);
        permute_runs(dtype_size(slots[r->a].dtype), A, B, &sh, lo, hi);
        break;
    }
    default:
        break;
    }
#undef SLOT
#undef A
#undef B
#undef C
#undef D
#undef COUNT
}

/* The elements data_range runs over: the result's (the source's for SET_BOX, whose result is
 * the whole tensor the box lies in). */
static int64_t data_elements(const cfx_prog *prog, const cfx_record *r)
{
    return prog->slots[r->kind == REC_SET_BOX ? r->b : r->a].count;
}

typedef struct data_job {
    const cfx_prog *prog;
    const cfx_record *r;
    uint8_t *arena;
} data_job;

static void data_part(void *ctx, int part, int64_t lo, int64_t hi)
{
    const data_job *j = ctx;
    (void)part;
    data_range(j->prog, j->r, j->arena, lo, hi);
}

/* REDUCE_AXIS over results [lo, hi), in the run's accumulation mode. A run along the last axis
 * (inner 1, contiguous) is reduced as REDUCE reduces a tensor (cpu_reduce_rows: in the fast mode the
 * sums of reals in 16 partial sums in double, bit for bit the reference in the f64 mode), so
 * that a row reduced by this record or by a REDUCE of the row gives the same bits. A strided run
 * (inner > 1) is folded in its order, i = 0 .. n-1, as k_reduce_axis does on every other
 * executor; a sum or mean of reals AXIS_BLOCK results at a time, i outer, so that the reads
 * stream along the inner dimension: each result still sees the same additions in the same
 * order, so the bits are k_reduce_axis's. */
#define AXIS_BLOCK 64

static void reduce_axis_range(int op, int dtype, int mode, uint8_t *dst, const uint8_t *src, int64_t n,
                              int64_t inner, int64_t lo, int64_t hi)
{
    int size = dtype_size(dtype);
    int out = op == OP_ARGMAX || op == OP_ARGMIN ? 4 : op == OP_ALL || op == OP_ANY ? 1 : size;
    if (inner == 1) {
        cpu_reduce_rows(op, dtype, mode, dst + lo * out, src + lo * n * size, hi - lo, n);
        return;
    }
    if (!((dtype == K_F32 || dtype == K_F64) && (op == OP_SUM || op == OP_MEAN))) {
        k_reduce_axis(op, dtype, dst, src, n, inner, lo, hi);
        return;
    }
    for (int64_t e = lo; e < hi;) {
        int64_t o = e / inner, k = e % inner, m = inner - k;
        m = m < hi - e ? m : hi - e;
        m = m < AXIS_BLOCK ? m : AXIS_BLOCK;
        double acc[AXIS_BLOCK] = {0};
        const uint8_t *run = src + (o * n * inner + k) * size;
        for (int64_t i = 0; i < n; i++) {
            if (dtype == K_F32) {
                const float *x = (const float *)(run + i * inner * size);
                for (int64_t j = 0; j < m; j++)
                    acc[j] += (double)x[j];
            } else {
                const double *x = (const double *)(run + i * inner * size);
                for (int64_t j = 0; j < m; j++)
                    acc[j] += x[j];
            }
        }
        for (int64_t j = 0; j < m; j++) {
            double v = op == OP_MEAN ? (n > 0 ? acc[j] / (double)n : 0.0) : acc[j];
            if (dtype == K_F32)
                ((float *)dst)[e + j] = (float)v;
            else
                ((double *)dst)[e + j] = v;
        }
        e += m;
    }
}

typedef struct axis_job {
    const cfx_prog *prog;
    const cfx_record *r;
    uint8_t *arena;
    int mode;
} axis_job;

static void axis_part(void *ctx, int part, int64_t lo, int64_t hi)
{
    const axis_job *j = ctx;
    const cfx_slot *sl = j->prog->slots;
    int64_t n, inner;
    (void)part;
    rec_reduce_axis(sl, j->r, &n, &inner);
    reduce_axis_range(j->r->op, j->r->dtype, j->mode, j->arena + sl[j->r->a].offset, j->arena + sl[j->r->b].offset,
                      n, inner, lo, hi);
}

/* The records that compute (every kind that writes a slot and cannot stop the run). Kept out
 * of the dispatch loop so that the loop stays small: inlining all the op bodies into it costs
 * the scalar cases registers and code layout. Returns 1, having done nothing, for a record
 * over CFX_CANCEL_CHECK_ELEMENTS or more (rec_polls_cancel) when the cancel flag is set (so a
 * deadline or Ctrl-C stops a run with no loop at its next large record, and not only at a
 * loop's TICK; the generated code does the same), or when a long
 * op saw the flag on its way. `threads`: the executor's thread count, which the elementwise
 * records over large tensors (split_min) and the fast mode's sums and dots are split over;
 * `blas_threads`: the count the CBLAS is given before the fast mode's products and dots, 0 to
 * leave it the BLAS's own. */
static NOINLINE int run_data(const cfx_prog *prog, const cfx_record *r, uint8_t *arena,
                             atomic_int *cancel, int acc_mode, int threads, int blas_threads)
{
    const cfx_slot *slots = prog->slots;
    if (rec_polls_cancel(slots, r) && atomic_load_explicit(cancel, memory_order_relaxed))
        return 1;
#define SLOT(i) (arena + slots[i].offset)
#define A SLOT(r->a)
#define B SLOT(r->b)
#define C SLOT(r->c)
#define D SLOT(r->d)
#define COUNT(i) (slots[i].count)
    switch ((enum rec_kind)r->kind) {
    case REC_UNARY:
    case REC_BINARY:
    case REC_TRANSPOSE:
    case REC_FILL:
    case REC_IOTA:
    case REC_COPY:
    case REC_CAST:
    case REC_WHERE:
    case REC_GET_BOX:
    case REC_SET_BOX:
    case REC_BROADCAST:
    case REC_GATHER:
    case REC_PERMUTE: {
        int64_t n = data_elements(prog, r);
        int64_t min = threads > 1 ? split_min(prog, r) : 0;
        if (threads > 1 && n >= min) {
            data_job j = {prog, r, arena};
            pool_for(n, min / 2, threads, data_part, &j);
        } else {
            data_range(prog, r, arena, 0, n);
        }
        break;
    }
    case REC_REDUCE_AXIS: { /* split by results, each part about SPLIT_CHEAP elements read */
        int64_t n, inner, count = COUNT(r->a);
        rec_reduce_axis(slots, r, &n, &inner);
        int64_t min = n > 0 ? SPLIT_CHEAP / n : SPLIT_CHEAP;
        min = min < 2 ? 2 : min;
        axis_job j = {prog, r, arena, acc_mode};
        if (threads > 1 && count >= min)
            pool_for(count, min / 2, threads, axis_part, &j);
        else
            axis_part(&j, 0, 0, count);
        break;
    }
    case REC_REDUCE: /* host/runtime/cpu_linalg.c, in the run's accumulation mode */
        cpu_reduce_threads(r->op, r->dtype, acc_mode, threads, A, B, COUNT(r->b));
        break;
    case REC_DOT:
        if (acc_mode == CPU_ACC_FAST && blas_threads > 0 && (r->dtype == K_F32 || r->dtype == K_F64))
            cpu_blas_threads(blas_threads); /* a real product or dot may go to the BLAS */
        cpu_dot_threads(r->dtype, acc_mode, threads, A, B, C, COUNT(r->b));
        break;
    case REC_MATMUL: { /* a batch: each product as a plain one's, in order (rec_matmul) */
        rec_mm g = rec_matmul(slots, r);
        size_t es = (size_t)dtype_size(r->dtype);
        if (acc_mode == CPU_ACC_FAST && blas_threads > 0 && (r->dtype == K_F32 || r->dtype == K_F64))
            cpu_blas_threads(blas_threads); /* a real product or dot may go to the BLAS */
        int polls = rec_polls_cancel(slots, r); /* a big batch stops between products, as a big product between bands */
        for (int64_t e = 0; e < g.batch; e++) {
            if (e > 0 && polls && atomic_load_explicit(cancel, memory_order_relaxed))
                return 1;
            if (matmul_cancellable(r->dtype, acc_mode, A + (size_t)(e * g.m * g.n) * es, B + (size_t)(e * g.sb) * es,
                                   C + (size_t)(e * g.sc) * es, g.m, g.k, g.n, cancel))
                return 1;
        }
        break;
    }
    case REC_GET_ROW: { /* the index was checked (validator: on every path) */
        int64_t i = k_row_index(k_load_int(slots[r->c].dtype, C), slots[r->b].dims[0]);
        int64_t bytes = slot_bytes(&slots[r->a]);
        memcpy(A, B + i * bytes, (size_t)bytes);
        break;
    }
    case REC_SET_ROW: {
        int64_t i = k_row_index(k_load_int(slots[r->b].dtype, B), slots[r->a].dims[0]);
        int64_t bytes = slot_bytes(&slots[r->c]);
        memcpy(A + i * bytes, C, (size_t)bytes);
        break;
    }
    case REC_GET_ITEM: {
        int64_t i = k_item_index(k_load_int(slots[r->c].dtype, C), k_load_int(slots[r->d].dtype, D),
                                 slots[r->b].dims[0]);
        int64_t bytes = slot_bytes(&slots[r->a]);
        memcpy(A, B + i * bytes, (size_t)bytes);
        break;
    }
    case REC_SET_ITEM: {
        int64_t i = k_item_index(k_load_int(slots[r->b].dtype, B), k_load_int(slots[r->d].dtype, D),
                                 slots[r->a].dims[0]);
        int64_t bytes = slot_bytes(&slots[r->c]);
        memcpy(A + i * bytes, C, (size_t)bytes);
        break;
    }
    case REC_HALT:
    case REC_JUMP:
    case REC_JUMP_FALSE:
    case REC_JUMP_TRUE:
    case REC_SWITCH:
    case REC_TICK:
    case REC_ASSERT:
    case REC_PRINT:
    case REC_CHECK_INDEX:
    case REC_CHECK_DIVIDE:
    case REC_CHECK_STEP:
    case REC_CALL:
    case REC_CHECK_BOUND:
        break;
    }
    return 0;
#undef SLOT
#undef A
#undef B
#undef C
#undef D
#undef COUNT
}

/* The dispatch loop. The program counter is `x`, a pointer into the decoded records (the
 * record index is x - dec). Always inlined into the entry points below, with `traced` and
 * `profiled` constants, so the plain loop carries no tracing or profiling code at all. A
 * profiled loop reads the clock once per record and charges the time since the last stamp to
 * the record before, so the records' times add up to the run's. Fills *out. */
static ALWAYS_INLINE void execute(const exec_run *run, int acc_mode, int threads, int blas_threads,
                                  uint8_t *arena,
                                  const decoded *dec, cfx_tensor *tensors, trace_state *trace,
                                  const int traced, exec_profile *prof, const int profiled,
                                  exec_outcome *out)
{
    const cfx_prog *prog = run->prog;
    const cfx_record *records = prog->records;
    const cfx_slot *slots = prog->slots;
    const int32_t *table = prog->table;
    atomic_int no_cancel = 0;
    atomic_int *cancel = run->cancel ? run->cancel : &no_cancel;
    const int64_t limit = run->max_iters > 0 ? run->max_iters : INT64_MAX;
    int64_t iters = 0;
    const decoded *x = dec;
    double t0 = 0;
    int64_t stamp = 0, run_start = 0; /* run_start: the first record's stamp */
    int32_t last = -1; /* the record the profile's last stamp started */

/* Lua's lvm.c style: the record index, dispatch, and the way out for a stop. */
#define PC ((int32_t)(x - dec))
#define vmdispatch(code) switch (code)
#define PROFILE_STAMP(record)                                                                     \
    do {                                                                                          \
        int64_t now_ = now_ns();                                                                  \
        if (last >= 0)                                                                            \
            prof->ns[last] += now_ - stamp;                                                       \
        else                                                                                      \
            run_start = now_;                                                                     \
        stamp = now_;                                                                             \
        last = (record);                                                                          \
    } while (0)
#define STOP(status_, d0, d1)                                                                     \
    do {                                                                                          \
        out->status = (status_);                                                                  \
        out->detail[0] = (d0);                                                                    \
        out->detail[1] = (d1);                                                                    \
        goto stop;                                                                                \
    } while (0)

    for (;;) {
        const int32_t at = PC; /* the record being executed, for the trace */
        if (traced)
            t0 = since_us(&trace->start);
        if (profiled) {
            PROFILE_STAMP(at);
            prof->count[at]++;
        }
        vmdispatch(x->code) {
        K_INT_BINARY_OPS(FAST_BIN_I32)
        K_INT_BINARY_OPS(FAST_BIN_I64)
        K_REAL_BINARY_OPS(FAST_BIN_F32)
        K_REAL_BINARY_OPS(FAST_BIN_F64)
        K_BOOL_BINARY_OPS(FAST_BIN_B)
        K_INT_UNARY_OPS(FAST_UN_I32)
        K_INT_UNARY_OPS(FAST_UN_I64)
        K_REAL_UNARY_OPS(FAST_UN_F32)
        K_REAL_UNARY_OPS(FAST_UN_F64)
        K_BOOL_UNARY_OPS(FAST_UN_B)
        CMP_OPS(FAST_CMP_JF_I32)
        CMP_OPS(FAST_CMP_JF_I64)
        CMP_OPS(FAST_CMP_JF_F32)
        CMP_OPS(FAST_CMP_JF_F64)
        case F_JUMP:
            x = dec + x->target;
            break;
        case F_JUMP_FALSE:
            x = *x->a ? x + 1 : dec + x->target;
            break;
        case F_JUMP_TRUE:
            x = *x->a ? dec + x->target : x + 1;
            break;
        case F_TICK:
            TICK_STEP();
            break;
        default: {
            /* F_GENERAL: the record itself says what to do */
            const cfx_record *r = &records[PC];
            switch ((enum rec_kind)r->kind) {
            case REC_HALT:
                if (traced)
                    trace_event(trace, r, t0, since_us(&trace->start));
                if (profiled) {
                    PROFILE_STAMP(-1);
                    prof->run_ns = stamp - run_start;
                }
                out->status = CFX_OK;
                out->record = -1;
                out->iterations = iters;
                return;
            case REC_SWITCH: {
                int32_t v = *(const int32_t *)x->a;
                x = dec + (v >= 0 && v < r->c ? table[r->b + v] : table[r->b + r->c]);
                break;
            }
            case REC_ASSERT:
                if (!*x->a)
                    STOP(CFX_STOP_ASSERT, 0, 0);
                x++;
                break;
            case REC_PRINT:
                if (run->print)
                    run->print(run->print_user, prog, PC, x->a);
                x++;
                break;
            case REC_CHECK_INDEX: {
                int64_t v = k_load_int(slots[r->a].dtype, x->a), rows = r->b;
                if (v < -rows || v >= rows)
                    STOP(CFX_STOP_INDEX, v, rows);
                x++;
                break;
            }
            case REC_CHECK_BOUND: {
                int64_t va = k_load_int(slots[r->a].dtype, x->a), vb = k_load_int(slots[r->b].dtype, x->b);
                if (!k_bound_ok(r->d, va, vb))
                    STOP(CFX_STOP_INDEX, va, vb);
                x++;
                break;
            }
            case REC_CHECK_DIVIDE: {
                int dt = slots[r->a].dtype;
                for (int64_t e = 0; e < slots[r->a].count; e++)
                    if (k_get_int(dt, x->a, e) == 0)
                        STOP(CFX_STOP_DIVIDE, 0, 0);
                x++;
                break;
            }
            case REC_CHECK_STEP:
                if (k_load_int(slots[r->a].dtype, x->a) == 0)
                    STOP(CFX_STOP_VALUE, 0, 0);
                x++;
                break;
            case REC_CALL: {
                const exec_kernel *kern = run->kernels ? &run->kernels[r->a] : NULL;
                if (!kern || !kern->cpu_fn)
                    STOP(CFX_ERROR, 0, 0);
                for (int32_t k = 0; k < r->c; k++)
                    tensors[k] = slot_tensor(&slots[table[r->b + k]], arena);
                if (kern->cpu_fn(kern->user, r->d, tensors, r->c - r->d, tensors + r->d) != 0)
                    STOP(CFX_ERROR, 0, 0);
                x++;
                break;
            }
            /* every record that computes, scalar or not (JUMP, JUMP_FALSE, JUMP_TRUE and TICK
             * never get here: decoded above) */
            case REC_JUMP:
            case REC_JUMP_FALSE:
            case REC_JUMP_TRUE:
            case REC_TICK:
            case REC_UNARY:
            case REC_BINARY:
            case REC_REDUCE:
            case REC_DOT:
            case REC_MATMUL:
            case REC_TRANSPOSE:
            case REC_FILL:
            case REC_IOTA:
            case REC_COPY:
            case REC_CAST:
            case REC_WHERE:
            case REC_GET_ROW:
            case REC_SET_ROW:
            case REC_GET_BOX:
            case REC_SET_BOX:
            case REC_BROADCAST:
            case REC_GET_ITEM:
            case REC_SET_ITEM:
            case REC_GATHER:
            case REC_REDUCE_AXIS:
            case REC_PERMUTE:
                if (run_data(prog, r, arena, cancel, acc_mode, threads, blas_threads))
                    STOP(CFX_STOP_CANCELLED, 0, 0);
                x++;
                break;
            }
        }
        }
        if (traced)
            trace_event(trace, &records[at], t0, since_us(&trace->start));
    }
stop:
    if (traced)
        trace_event(trace, &records[PC], t0, since_us(&trace->start));
    if (profiled) {
        /* a TICK that stopped the run began no iteration: the profile counts iterations */
        if (records[PC].kind == REC_TICK && prof->count[PC] > 0)
            prof->count[PC]--;
        PROFILE_STAMP(-1);
        prof->run_ns = stamp - run_start;
    }
    out->record = PC;
    out->iterations = iters;
#undef PC
#undef vmdispatch
#undef PROFILE_STAMP
#undef STOP
}

static NOINLINE void execute_plain(const exec_run *run, int acc_mode, int threads, int blas_threads,
                                   uint8_t *arena,
                                   const decoded *dec, cfx_tensor *tensors, exec_outcome *out)
{
    execute(run, acc_mode, threads, blas_threads, arena, dec, tensors, NULL, 0, NULL, 0, out);
}

static NOINLINE void execute_profiled(const exec_run *run, int acc_mode, int threads, int blas_threads,
                                      uint8_t *arena,
                                      const decoded *dec, cfx_tensor *tensors, exec_outcome *out)
{
    execute(run, acc_mode, threads, blas_threads, arena, dec, tensors, NULL, 0, run->profile, 1, out);
}

static NOINLINE void execute_traced(const exec_run *run, int acc_mode, int threads, int blas_threads,
                                    uint8_t *arena,
                                    const decoded *dec, cfx_tensor *tensors, trace_state *trace,
                                    exec_outcome *out)
{
    /* a traced run is slow already: profiling it too costs one more test per record */
    execute(run, acc_mode, threads, blas_threads, arena, dec, tensors, trace, 1, run->profile, run->profile != NULL, out);
}

/* The bytes of a run's one allocation: the arena, the decoded records, room for the widest
 * CALL's operands; *arena_bytes gets the arena's part. */
static size_t run_bytes(const cfx_prog *prog, size_t *arena_bytes)
{
    int32_t max_call = 0;
    for (int32_t i = 0; i < prog->nrecords; i++)
        if (prog->records[i].kind == REC_CALL && prog->records[i].c > max_call)
            max_call = prog->records[i].c;
    *arena_bytes = (size_t)(prog->arena_bytes + CFX_ARENA_ALIGN - 1) / CFX_ARENA_ALIGN * CFX_ARENA_ALIGN;
    size_t dec_bytes = (size_t)prog->nrecords * sizeof(decoded);
    size_t total = *arena_bytes + dec_bytes + (size_t)max_call * sizeof(cfx_tensor);
    total = (total + CFX_ARENA_ALIGN - 1) / CFX_ARENA_ALIGN * CFX_ARENA_ALIGN;
    return total ? total : CFX_ARENA_ALIGN;
}

int cpu_run(const exec_run *run, exec_outcome *out)
{
    return cpu_run_threads(run, CFX_ACCUMULATE_F64, 1, 0, out);
}

int cpu_run_mode(const exec_run *run, int accumulate, exec_outcome *out)
{
    return cpu_run_threads(run, accumulate, 1, 0, out);
}

int cpu_run_threads(const exec_run *run, int accumulate, int threads, int blas_threads, exec_outcome *out)
{
    int acc_mode = accumulate == CFX_ACCUMULATE_FAST ? CPU_ACC_FAST : CPU_ACC_F64;
    const cfx_prog *prog = run->prog;
    memset(out, 0, sizeof *out);
    out->status = CFX_ERROR;
    out->record = -1;
    if (run->device_buffers)
        return -1;

    size_t arena_bytes, total = run_bytes(prog, &arena_bytes);
    size_t dec_bytes = (size_t)prog->nrecords * sizeof(decoded);
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
    decoded *dec = (decoded *)(arena + arena_bytes);
    cfx_tensor *tensors = (cfx_tensor *)(arena + arena_bytes + dec_bytes);
    decode(prog, arena, dec, run->trace == NULL && run->profile == NULL);

    if (run->trace) {
        trace_state t = {run->trace, prog, 0, 0, {0, 0}};
        clock_gettime(CLOCK_MONOTONIC, &t.start);
        exec_trace_open(t.f, "cpu", prog, "host", 0);
        execute_traced(run, acc_mode, threads, blas_threads, arena, dec, tensors, &t, out);
        fprintf(t.f,
                "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"executor\":\"cpu\",\"graph\":\"%s\","
                "\"events\":%lld,\"events_dropped\":%lld,\"event_cap\":%d}}\n",
                prog->name, (long long)t.events, (long long)t.dropped, TRACE_MAX_EVENTS);
        fflush(t.f);
    } else if (run->profile) {
        execute_profiled(run, acc_mode, threads, blas_threads, arena, dec, tensors, out);
    } else {
        execute_plain(run, acc_mode, threads, blas_threads, arena, dec, tensors, out);
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
    int accumulate; /* CFX_ACCUMULATE_FAST or CFX_ACCUMULATE_F64 */
    int threads;    /* 1 to POOL_MAX_THREADS */
    int blas;       /* the count given to the CBLAS: threads where set ($CFX_NUM_THREADS, the
                       option), 0 (the BLAS's own, OPENBLAS_NUM_THREADS) by default */
} cpu_exec;

/* The accumulation mode of a new executor: $CFX_ACCUMULATE (fast or f64) where set, else
 * fast; -1 for another value. */
static int accumulate_from_env(void)
{
    const char *v = getenv("CFX_ACCUMULATE");
    if (!v || !*v || strcmp(v, "fast") == 0)
        return CFX_ACCUMULATE_FAST;
    if (strcmp(v, "f64") == 0)
        return CFX_ACCUMULATE_F64;
    return -1;
}

/* The thread count of a new executor: $CFX_NUM_THREADS (a whole number from 1 to
 * POOL_MAX_THREADS) where set, else the cores this process may run on; -1 for another value. */
static int threads_from_env(void)
{
    const char *v = getenv("CFX_NUM_THREADS");
    if (!v || !*v)
        return pool_cores();
    char *end;
    long n = strtol(v, &end, 10);
    if (*end != '\0' || end == v || n < 1 || n > POOL_MAX_THREADS)
        return -1;
    return (int)n;
}

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
    e->accumulate = accumulate_from_env();
    if (e->accumulate < 0) {
        snprintf(err, len, "CFX_ACCUMULATE is '%s': it takes fast or f64", getenv("CFX_ACCUMULATE"));
        free(e);
        return NULL;
    }
    e->threads = threads_from_env();
    e->blas = getenv("CFX_NUM_THREADS") && *getenv("CFX_NUM_THREADS") ? e->threads : 0;
    if (e->threads < 0) {
        snprintf(err, len, "CFX_NUM_THREADS is '%s': it takes a whole number from 1 to %d",
                 getenv("CFX_NUM_THREADS"), POOL_MAX_THREADS);
        free(e);
        return NULL;
    }
    pool_retain();
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
    for (int32_t i = 0; i < run->prog->ninputs; i++)
        if (!run->inputs || !run->inputs[i]) {
            snprintf(err, len, "input %d is not bound", (int)i); /* api.c binds every one */
            return -1;
        }
    if (cpu_run_threads(run, e->accumulate, e->threads, e->blas, &e->outcome) != 0) {
        size_t arena_bytes, total = run_bytes(run->prog, &arena_bytes);
        snprintf(err, len, "out of memory: a run of graph '%s' needs %zu bytes (%zu MiB) at once, "
                 "%zu of them for its values", run->prog->name ? run->prog->name : "?", total,
                 (total + ((size_t)1 << 20) - 1) >> 20, arena_bytes);
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
    pool_release();
}

/* cfx_set_option: api.c has checked the option's range. */
static int cpu_option(void *self, int option, int64_t value, char *why, size_t len)
{
    if (option == CFX_OPTION_THREADS) {
        ((cpu_exec *)self)->threads = value == 0 ? pool_cores() : (int)value;
        ((cpu_exec *)self)->blas = (int)value;
        return 0;
    }
    if (option != CFX_OPTION_ACCUMULATE) {
        snprintf(why, len, "the cpu backend takes only option %d (accumulate) and option %d (threads), not %d",
                 (int)CFX_OPTION_ACCUMULATE, (int)CFX_OPTION_THREADS, option);
        return -1;
    }
    ((cpu_exec *)self)->accumulate = (int)value;
    return 0;
}

const exec_ops cpu_exec_ops = {CFX_BACKEND_CPU, cpu_available, cpu_create, cpu_ops_run, cpu_wait,
                               cpu_destroy, NULL, NULL, cpu_option, NULL, NULL, NULL};
