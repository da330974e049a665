/* microops.h: the one-block loops of the cuda-persistent executor as pre-decoded micro-ops:
 * the translator (plain C, host, once per upload) and the dispatch loop (CFX_HD: the same
 * code on the device and in the CPU tests).
 *
 * A one-block region (plan.h: a loop that block 0 runs alone) is interpreted record by
 * record otherwise: every record reloads its kind, operands, slots and private offsets,
 * branches over kind x op x dtype, and ends with a block barrier. Its micro-ops are decided
 * once, at upload:
 * - one opcode per kind x op x dtype (add_i32, lt_i32_jf), dispatched by one dense switch;
 * - operands are byte offsets into the SCALAR FILE, the block's private copies (priv_bytes,
 *   as the plan lays them out) followed by a POOL of constants: one-element const slots,
 *   the row counts that guards compare with, and the (offset, rows) of the arena tensors
 *   that rows are read from or written to;
 * - targets are micro-op indices; a compare and the JUMP_FALSE that tests it are one
 *   micro-op, and with the TICK that opens a loop's body one more (lt_i32_jf_tick);
 * - a loop's back edge is a copy of its test, inverted and with the TICK folded in
 *   (lt_i32_jt_tick: go back to the body, else fall out), so an iteration of
 *   `while i < n { ... }` dispatches no JUMP; a JUMP to the next micro-op is dropped, and
 *   jumps to jumps are threaded.
 * A record the set does not cover (anything that is not one element wide: vector ops,
 * reductions, products) ends the micro-ops: an EXIT hands it to the record interpreter,
 * which runs it with the whole block and comes back at the next record that has micro-ops
 * (mop_prog.entry). So every program runs, and a region pays the interpreter only for what
 * the micro-ops do not cover.
 *
 * The dispatch loop (mop_run) runs on one thread: the device's thread 0 of block 0, while
 * the other warps wait at a named barrier (interp_kernel.cuh). It returns to its caller
 * for everything that involves the world outside the file and the arena: an EXIT, a stop, a
 * PRINT (the caller puts it in the print ring), and every MOP_CLOCK_TICKS-th TICK, where
 * the caller looks at its clock and, as often as the interpreter does, polls the host's
 * cancel flag and the run's status. Such a return happens only after a branch is decided,
 * never between a compare and its branch. Statuses, their records and details, the
 * iteration count and the budget are exactly the interpreter's: every micro-op carries the
 * record whose stop it raises, and the budget is counted by sched_tick at every TICK.
 */
#ifndef CFX_MICROOPS_H
#define CFX_MICROOPS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/hd.h"
#include "kernels/kernels.h"
#include "host/program/program.h"
#include "scheduler.h"

/* The scalar file and the micro-ops live in the kernel's dynamic shared memory, where the
 * private copies are: all of it together at most this many bytes (P_SHARED_PRIV_MAX), which
 * also keeps every operand offset and micro-op index inside 16 bits. */
#define MOP_SHARED_MAX 32768
/* The caller reads its clock every this many TICKs (a clock read is not free on the device)
 * and polls, as the interpreter does, when SCHED_POLL_NS have passed since the last poll. */
#define MOP_CLOCK_TICKS 32
/* A loop's test up to this many records long is copied to every back edge. */
#define MOP_ROTATE_MAX 8

/* One micro-op: 16 bytes, one shared-memory load. Which fields mean what is each opcode's
 * ROLES below: a, b, c, d are file offsets (f), pool offsets of an i64 (p) or of an
 * (offset, rows) pair (r), or small numbers (n); t is a micro-op index. pc is the record the
 * micro-op stands for: where its stop is raised, what EXIT and PRINT hand over. */
typedef struct mop {
    uint16_t code;
    uint16_t a, b, c, d;
    uint16_t t;
    int32_t pc;
} mop;

/* X(NAME, ROLES, MEANING) for the opcodes that are not one per op and dtype. ROLES: the
 * roles of a, b, c, d, then 't' if the micro-op has a target. */
#define MOP_PLAIN(X) \
    X(EXIT,             "-----", "leave for the interpreter, which goes on at record pc") \
    X(JUMP,             "----t", "go to t") \
    X(JF,               "f---t", "go to t unless bool a") \
    X(JT,               "f---t", "go to t if bool a") \
    X(JF_TICK,          "f---t", "go to t unless bool a; else TICK (record pc) and go on") \
    X(JT_TICK,          "f---t", "if bool a: TICK (record pc) and go to t; else go on") \
    X(TICK,             "-----", "one loop iteration (record pc): the caller's poll, the budget") \
    X(SWITCH,           "f--n-", "go to the t of CASE k after this one, k = i32 a if 0 <= a < d, else d") \
    X(CASE,             "----t", "a target of the SWITCH before it; never dispatched") \
    X(ASSERT,           "f----", "stop with assert unless bool a") \
    X(PRINT,            "-----", "hand the print of record pc to the caller") \
    X(CHECK_INDEX_I32,  "fp---", "stop with index unless -rows <= i32 a < rows, rows the i64 at b") \
    X(CHECK_INDEX_I64,  "fp---", "the same for an i64 a") \
    X(CHECK_BOUND,      "ffn--", "stop with index unless k_bound_ok(c >> 8, a, b), a of dtype c & 15, b of c >> 4 & 15") \
    X(CHECK_DIVIDE_I32, "f----", "stop with divide if i32 a is 0") \
    X(CHECK_DIVIDE_I64, "f----", "stop with divide if i64 a is 0") \
    X(CHECK_STEP,       "f--n-", "stop with value if a, an integer of dtype d, is 0") \
    X(MOV,              "ff---", "a = b: the 8 bytes of a one-element slot") \
    X(CAST,             "ff-n-", "a (dtype d & 15) = b (dtype d >> 4) by the cast rules") \
    X(WHERE1,           "ffff-", "a = bool b ? c : d, one-byte elements") \
    X(WHERE4,           "ffff-", "a = bool b ? c : d, four-byte elements") \
    X(WHERE8,           "ffff-", "a = bool b ? c : d, eight-byte elements") \
    X(GET_ROW1,         "ffrn-", "a = element k_row_index(b, rows) of the arena tensor (offset, rows) at c; b of dtype d") \
    X(GET_ROW4,         "ffrn-", "the same, four-byte elements") \
    X(GET_ROW8,         "ffrn-", "the same, eight-byte elements") \
    X(SET_ROW1,         "ffrn-", "element k_row_index(b, rows) of the arena tensor (offset, rows) at c = a; b of dtype d") \
    X(SET_ROW4,         "ffrn-", "the same, four-byte elements") \
    X(SET_ROW8,         "ffrn-", "the same, eight-byte elements")

/* The compares that fuse with a branch: the comparisons of K_NUM_BINARY_OPS. */
#define MOP_CMP_OPS(X) X(OP_LT, lt) X(OP_LE, le) X(OP_GT, gt) X(OP_GE, ge) X(OP_EQ, eq) X(OP_NE, ne)

/* Every typed list, applied to G(LIST, SFX, T, DTYPE): the arithmetic from the kernels' op
 * lists, per dtype (its suffix, C type and cfx_dtype). */
#define MOP_BINARY_TYPES(G) \
    G(K_INT_BINARY_OPS, i32, int32_t, CFX_I32) G(K_INT_BINARY_OPS, i64, int64_t, CFX_I64) \
    G(K_REAL_BINARY_OPS, f32, float, CFX_F32) G(K_REAL_BINARY_OPS, f64, double, CFX_F64) \
    G(K_BOOL_BINARY_OPS, b, uint8_t, CFX_BOOL)
#define MOP_UNARY_TYPES(G) \
    G(K_INT_UNARY_OPS, i32, int32_t, CFX_I32) G(K_INT_UNARY_OPS, i64, int64_t, CFX_I64) \
    G(K_REAL_UNARY_OPS, f32, float, CFX_F32) G(K_REAL_UNARY_OPS, f64, double, CFX_F64) \
    G(K_BOOL_UNARY_OPS, b, uint8_t, CFX_BOOL)
#define MOP_CMP_TYPES(G) G(i32, int32_t, CFX_I32) G(i64, int64_t, CFX_I64) G(f32, float, CFX_F32) G(f64, double, CFX_F64)

enum mop_code {
#define X(name, roles, meaning) MOP_##name,
    MOP_PLAIN(X)
#undef X
#define MOP_E(OPC, STEM, ISBOOL, SFX) MOP_##STEM##_##SFX,
#define MOP_E_i32(o, s, z) MOP_E(o, s, z, i32)
#define MOP_E_i64(o, s, z) MOP_E(o, s, z, i64)
#define MOP_E_f32(o, s, z) MOP_E(o, s, z, f32)
#define MOP_E_f64(o, s, z) MOP_E(o, s, z, f64)
#define MOP_E_b(o, s, z) MOP_E(o, s, z, b)
#define MOP_E_LIST(LIST, SFX, T, DT) LIST(MOP_E_##SFX)
#define MOP_EF(OPC, STEM, SFX) MOP_##STEM##_##SFX##_jf, MOP_##STEM##_##SFX##_jf_tick, MOP_##STEM##_##SFX##_jt_tick,
#define MOP_EF_i32(o, s) MOP_EF(o, s, i32)
#define MOP_EF_i64(o, s) MOP_EF(o, s, i64)
#define MOP_EF_f32(o, s) MOP_EF(o, s, f32)
#define MOP_EF_f64(o, s) MOP_EF(o, s, f64)
#define MOP_EF_LIST(SFX, T, DT) MOP_CMP_OPS(MOP_EF_##SFX)
    MOP_BINARY_TYPES(MOP_E_LIST)
    MOP_UNARY_TYPES(MOP_E_LIST)
    MOP_CMP_TYPES(MOP_EF_LIST)
    MOP_COUNT
};

/* The opcodes' names (the tests print them) and roles, from the same lists. */
#define MOP_N(OPC, STEM, ISBOOL, SFX) #STEM "_" #SFX,
#define MOP_N_i32(o, s, z) MOP_N(o, s, z, i32)
#define MOP_N_i64(o, s, z) MOP_N(o, s, z, i64)
#define MOP_N_f32(o, s, z) MOP_N(o, s, z, f32)
#define MOP_N_f64(o, s, z) MOP_N(o, s, z, f64)
#define MOP_N_b(o, s, z) MOP_N(o, s, z, b)
#define MOP_N_LIST(LIST, SFX, T, DT) LIST(MOP_N_##SFX)
#define MOP_NF(OPC, STEM, SFX) #STEM "_" #SFX "_jf", #STEM "_" #SFX "_jf_tick", #STEM "_" #SFX "_jt_tick",
#define MOP_NF_i32(o, s) MOP_NF(o, s, i32)
#define MOP_NF_i64(o, s) MOP_NF(o, s, i64)
#define MOP_NF_f32(o, s) MOP_NF(o, s, f32)
#define MOP_NF_f64(o, s) MOP_NF(o, s, f64)
#define MOP_NF_LIST(SFX, T, DT) MOP_CMP_OPS(MOP_NF_##SFX)
static const char *const mop_names[MOP_COUNT] = {
#define X(name, roles, meaning) #name,
    MOP_PLAIN(X)
#undef X
    MOP_BINARY_TYPES(MOP_N_LIST) MOP_UNARY_TYPES(MOP_N_LIST) MOP_CMP_TYPES(MOP_NF_LIST)
};
#define MOP_RB(o, s, z) "fff--",
#define MOP_RU(o, s, z) "ff---",
#define MOP_RF(o, s) "fff-t", "fff-t", "fff-t",
#define MOP_RB_LIST(LIST, SFX, T, DT) LIST(MOP_RB)
#define MOP_RU_LIST(LIST, SFX, T, DT) LIST(MOP_RU)
#define MOP_RF_LIST(SFX, T, DT) MOP_CMP_OPS(MOP_RF)
static const char *const mop_roles[MOP_COUNT] = {
#define X(name, roles, meaning) roles,
    MOP_PLAIN(X)
#undef X
    MOP_BINARY_TYPES(MOP_RB_LIST) MOP_UNARY_TYPES(MOP_RU_LIST) MOP_CMP_TYPES(MOP_RF_LIST)
};

/* ==== the dispatch loop ================================================================== */

/* Why mop_run returned. */
#define MOP_OUT_EXIT 0  /* the interpreter goes on at record st->pc */
#define MOP_OUT_STOP 1  /* stop the run: st->status at record st->pc with st->detail */
#define MOP_OUT_PRINT 2 /* print record st->pc, then call again (st->at is past it) */
#define MOP_OUT_TICK 3  /* the clock is due at the TICK of record st->pc: the caller looks at it
                         * (the poll), then calls again, which finishes that TICK (the budget) */
#define MOP_OUT_LEFT 4  /* not mop_run's: the caller's poll saw the run stopped elsewhere */

/* What a call starts from and returns with; the caller keeps it between calls. */
typedef struct mop_state {
    int32_t at;           /* the micro-op to go on at */
    int32_t pc;           /* the record the outcome names */
    int32_t status;       /* MOP_OUT_STOP: a cfx_status */
    int32_t clock_left;   /* TICKs until the caller's clock is due (start with 1: at once) */
    int32_t tick_pending; /* MOP_OUT_TICK left its TICK half done: the next call finishes it */
    int32_t pad_;
    int64_t detail[2];
    uint64_t iters;       /* the run's iterations (the interpreter's count) */
    int64_t max_iters;    /* the budget, 0: none */
} mop_state;

#define MOP_V(T, off) (*(T *)(file + (off)))

/* The heavy arithmetic (transcendentals, real pow and %) out of line on the device: inlined,
 * every libm body would sit inside the dispatch loop and spread its hot cases over many
 * times the code. Same bodies: k_unary and k_binary on one element. */
#ifdef __CUDACC__
#define MOP_COLD static __host__ __device__ __noinline__
#else
#define MOP_COLD static
#endif
MOP_COLD void mop_cold_unary(int op, int dt, uint8_t *dst, const uint8_t *src)
{
    k_unary(op, dt, dst, src, 0, 1);
}
MOP_COLD void mop_cold_binary(int op, int dt, uint8_t *dst, const uint8_t *a, const uint8_t *b)
{
    k_binary(op, dt, dst, a, 1, b, 1, 0, 1);
}
#define MOP_CHEAP_UNARY(OPC) ((OPC) == OP_NEG || (OPC) == OP_ABS || (OPC) == OP_RELU || (OPC) == OP_SIGN)

/* Runs micro-ops from st->at until one of them leaves (MOP_OUT_*). `code` is the translated
 * program, `file` the scalar file (private copies, then the pool), `arena` the program's
 * arena, for the tensors that rows are read from and written to. */
CFX_HD int mop_run(const mop *code, uint8_t *file, uint8_t *arena, mop_state *st)
{
    int32_t i = st->at;
    uint64_t iters = st->iters;
    int32_t clock_left = st->clock_left;
    const int64_t max_iters = st->max_iters;
    int out = MOP_OUT_STOP;

#define MOP_STOP(status_, pc_, d0, d1)                                                            \
    do {                                                                                          \
        st->status = (status_);                                                                   \
        st->pc = (pc_);                                                                           \
        st->detail[0] = (d0);                                                                     \
        st->detail[1] = (d1);                                                                     \
        out = MOP_OUT_STOP;                                                                       \
        goto leave;                                                                               \
    } while (0)
/* A TICK of record pc_, then on at next: every MOP_CLOCK_TICKS-th one first goes to the
 * caller for its poll (and the next call counts it). */
#define MOP_TICK(pc_, next)                                                                       \
    do {                                                                                          \
        if (--clock_left <= 0) {                                                                  \
            clock_left = MOP_CLOCK_TICKS;                                                         \
            st->pc = (pc_);                                                                       \
            st->tick_pending = 1;                                                                 \
            i = (next);                                                                           \
            out = MOP_OUT_TICK;                                                                   \
            goto leave;                                                                           \
        }                                                                                         \
        if (sched_tick(&iters, max_iters))                                                        \
            MOP_STOP(CFX_STOP_LIMIT, (pc_), max_iters, 0);                                        \
        i = (next);                                                                               \
    } while (0)
#define MOP_BIN_CASE(OPC, STEM, ISBOOL, SFX, T)                                                   \
    case MOP_##STEM##_##SFX:                                                                      \
        if ((OPC == OP_POW || OPC == OP_MOD || OPC == OP_FLOORDIV || OPC == OP_FMOD || OPC == OP_ATAN2) && ((T)0.5 != 0))     \
            mop_cold_binary(OPC, sizeof(T) == 4 ? K_F32 : K_F64, file + m.a, file + m.b, file + m.c); \
        else if (ISBOOL)                                                                          \
            MOP_V(uint8_t, m.a) = (uint8_t)k_##STEM##_##SFX(MOP_V(T, m.b), MOP_V(T, m.c));        \
        else                                                                                      \
            MOP_V(T, m.a) = (T)k_##STEM##_##SFX(MOP_V(T, m.b), MOP_V(T, m.c));                    \
        i++;                                                                                      \
        break;
#define MOP_UN_CASE(OPC, STEM, ISBOOL, SFX, T)                                                    \
    case MOP_##STEM##_##SFX:                                                                      \
        if (!MOP_CHEAP_UNARY(OPC) && ((T)0.5 != 0))                                               \
            mop_cold_unary(OPC, sizeof(T) == 4 ? K_F32 : K_F64, file + m.a, file + m.b);          \
        else                                                                                      \
            MOP_V(T, m.a) = (T)k_##STEM##_##SFX(MOP_V(T, m.b));                                   \
        i++;                                                                                      \
        break;
#define MOP_CMP_CASES(OPC, STEM, SFX, T)                                                          \
    case MOP_##STEM##_##SFX##_jf: {                                                               \
        const uint8_t v_ = k_##STEM##_##SFX(MOP_V(T, m.b), MOP_V(T, m.c));                        \
        MOP_V(uint8_t, m.a) = v_;                                                                 \
        i = v_ ? i + 1 : m.t;                                                                     \
        break;                                                                                    \
    }                                                                                             \
    case MOP_##STEM##_##SFX##_jf_tick: {                                                          \
        const uint8_t v_ = k_##STEM##_##SFX(MOP_V(T, m.b), MOP_V(T, m.c));                        \
        MOP_V(uint8_t, m.a) = v_;                                                                 \
        if (!v_) {                                                                                \
            i = m.t;                                                                              \
            break;                                                                                \
        }                                                                                         \
        MOP_TICK(m.pc, i + 1);                                                                    \
        break;                                                                                    \
    }                                                                                             \
    case MOP_##STEM##_##SFX##_jt_tick: {                                                          \
        const uint8_t v_ = k_##STEM##_##SFX(MOP_V(T, m.b), MOP_V(T, m.c));                        \
        MOP_V(uint8_t, m.a) = v_;                                                                 \
        if (v_)                                                                                   \
            MOP_TICK(m.pc, m.t);                                                                  \
        else                                                                                      \
            i++;                                                                                  \
        break;                                                                                    \
    }
#define MOP_B_i32(o, s, z) MOP_BIN_CASE(o, s, z, i32, int32_t)
#define MOP_B_i64(o, s, z) MOP_BIN_CASE(o, s, z, i64, int64_t)
#define MOP_B_f32(o, s, z) MOP_BIN_CASE(o, s, z, f32, float)
#define MOP_B_f64(o, s, z) MOP_BIN_CASE(o, s, z, f64, double)
#define MOP_B_b(o, s, z) MOP_BIN_CASE(o, s, z, b, uint8_t)
#define MOP_U_i32(o, s, z) MOP_UN_CASE(o, s, z, i32, int32_t)
#define MOP_U_i64(o, s, z) MOP_UN_CASE(o, s, z, i64, int64_t)
#define MOP_U_f32(o, s, z) MOP_UN_CASE(o, s, z, f32, float)
#define MOP_U_f64(o, s, z) MOP_UN_CASE(o, s, z, f64, double)
#define MOP_U_b(o, s, z) MOP_UN_CASE(o, s, z, b, uint8_t)
#define MOP_B_LIST(LIST, SFX, T, DT) LIST(MOP_B_##SFX)
#define MOP_U_LIST(LIST, SFX, T, DT) LIST(MOP_U_##SFX)
#define MOP_C_i32(o, s) MOP_CMP_CASES(o, s, i32, int32_t)
#define MOP_C_i64(o, s) MOP_CMP_CASES(o, s, i64, int64_t)
#define MOP_C_f32(o, s) MOP_CMP_CASES(o, s, f32, float)
#define MOP_C_f64(o, s) MOP_CMP_CASES(o, s, f64, double)
#define MOP_C_LIST(SFX, T, DT) MOP_CMP_OPS(MOP_C_##SFX)
/* the row of an arena tensor (offset, rows) at pool offset r_, by an index of dtype dt_ at b_ */
#define MOP_ROW(T, r_, b_, dt_)                                                                   \
    ((T *)(arena + MOP_V(int64_t, r_)) + k_row_index(k_load_int((dt_), file + (b_)), MOP_V(int64_t, (r_) + 8)))

/* WHERE, GET_ROW and SET_ROW for elements of N bytes, moved as T */
#define MOP_SIZED_CASES(N, T)                                                                     \
    case MOP_WHERE##N:                                                                            \
        MOP_V(T, m.a) = MOP_V(uint8_t, m.b) ? MOP_V(T, m.c) : MOP_V(T, m.d);                      \
        i++;                                                                                      \
        break;                                                                                    \
    case MOP_GET_ROW##N:                                                                          \
        MOP_V(T, m.a) = *MOP_ROW(T, m.c, m.b, m.d);                                               \
        i++;                                                                                      \
        break;                                                                                    \
    case MOP_SET_ROW##N:                                                                          \
        *MOP_ROW(T, m.c, m.b, m.d) = MOP_V(T, m.a);                                               \
        i++;                                                                                      \
        break;

    if (st->tick_pending) {
        st->tick_pending = 0;
        if (sched_tick(&iters, max_iters))
            MOP_STOP(CFX_STOP_LIMIT, st->pc, max_iters, 0);
    }
    for (;;) {
        const mop m = code[i];
        switch (m.code) {
        MOP_BINARY_TYPES(MOP_B_LIST)
        MOP_UNARY_TYPES(MOP_U_LIST)
        MOP_CMP_TYPES(MOP_C_LIST)
        case MOP_EXIT:
            st->pc = m.pc;
            out = MOP_OUT_EXIT;
            goto leave;
        case MOP_JUMP:
            i = m.t;
            break;
        case MOP_JF:
            i = MOP_V(uint8_t, m.a) ? i + 1 : m.t;
            break;
        case MOP_JT:
            i = MOP_V(uint8_t, m.a) ? m.t : i + 1;
            break;
        case MOP_JF_TICK:
            if (!MOP_V(uint8_t, m.a)) {
                i = m.t;
                break;
            }
            MOP_TICK(m.pc, i + 1);
            break;
        case MOP_JT_TICK:
            if (MOP_V(uint8_t, m.a))
                MOP_TICK(m.pc, m.t);
            else
                i++;
            break;
        case MOP_TICK:
            MOP_TICK(m.pc, i + 1);
            break;
        case MOP_SWITCH: {
            const int32_t v = MOP_V(int32_t, m.a);
            i = code[i + 1 + (v >= 0 && v < (int32_t)m.d ? v : (int32_t)m.d)].t;
            break;
        }
        case MOP_ASSERT:
            if (!MOP_V(uint8_t, m.a))
                MOP_STOP(CFX_STOP_ASSERT, m.pc, 0, 0);
            i++;
            break;
        case MOP_PRINT:
            st->pc = m.pc;
            i++;
            out = MOP_OUT_PRINT;
            goto leave;
        case MOP_CHECK_INDEX_I32:
        case MOP_CHECK_INDEX_I64: {
            const int64_t v = m.code == MOP_CHECK_INDEX_I32 ? (int64_t)MOP_V(int32_t, m.a) : MOP_V(int64_t, m.a);
            const int64_t rows = MOP_V(int64_t, m.b);
            if (v < -rows || v >= rows)
                MOP_STOP(CFX_STOP_INDEX, m.pc, v, rows);
            i++;
            break;
        }
        case MOP_CHECK_BOUND: {
            const int64_t va = k_load_int(m.c & 15, file + m.a), vb = k_load_int((m.c >> 4) & 15, file + m.b);
            if (!k_bound_ok(m.c >> 8, va, vb))
                MOP_STOP(CFX_STOP_INDEX, m.pc, va, vb);
            i++;
            break;
        }
        case MOP_CHECK_DIVIDE_I32:
            if (MOP_V(int32_t, m.a) == 0)
                MOP_STOP(CFX_STOP_DIVIDE, m.pc, 0, 0);
            i++;
            break;
        case MOP_CHECK_DIVIDE_I64:
            if (MOP_V(int64_t, m.a) == 0)
                MOP_STOP(CFX_STOP_DIVIDE, m.pc, 0, 0);
            i++;
            break;
        case MOP_CHECK_STEP:
            if (k_load_int(m.d, file + m.a) == 0)
                MOP_STOP(CFX_STOP_VALUE, m.pc, 0, 0);
            i++;
            break;
        case MOP_MOV:
            MOP_V(uint64_t, m.a) = MOP_V(uint64_t, m.b);
            i++;
            break;
        case MOP_CAST:
            k_cast(m.d & 15, file + m.a, m.d >> 4, file + m.b, 0, 1);
            i++;
            break;
        MOP_SIZED_CASES(1, uint8_t)
        MOP_SIZED_CASES(4, uint32_t)
        MOP_SIZED_CASES(8, uint64_t)
        default: /* CASE, or no opcode at all: mop_check keeps both out of the program */
            MOP_STOP(CFX_ERROR, m.pc, 0, 0);
        }
    }
leave:
    st->at = i;
    st->iters = iters;
    st->clock_left = clock_left;
    return out;
#undef MOP_STOP
#undef MOP_TICK
#undef MOP_ROW
#undef MOP_SIZED_CASES
}

/* ==== the translator (host only: plain static functions, run once per upload) ============= */

/* The micro-ops of a program's one-block regions. */
typedef struct mop_prog {
    uint8_t *image;       /* the pool (pool_bytes), then the micro-ops: what follows the
                           * private copies in the scalar file and in shared memory */
    int32_t image_bytes;
    int32_t pool_bytes;   /* a multiple of 16 */
    int32_t file_bytes;   /* the scalar file: priv_bytes + pool_bytes */
    int32_t code_offset;  /* where the micro-ops start after the private copies: file_bytes */
    const mop *code;      /* in image */
    int32_t ncode;
    int32_t *entry;       /* nrecords: the micro-op a record starts at, -1 where it has none */
    int32_t nrecords;
    /* what was translated, for the executor's description and the tests */
    int32_t nregions;     /* regions with micro-ops */
    int32_t ncovered;     /* records of those regions that run as micro-ops */
    int32_t ninterp;      /* records of those regions left to the interpreter */
    int32_t nfused;       /* compares fused with their branch */
    int32_t nrotated;     /* back edges that became a copy of their loop's test */
} mop_prog;

static inline void mop_prog_free(mop_prog *mp)
{
    free(mp->image);
    free(mp->entry);
    memset(mp, 0, sizeof *mp);
}

/* The translator's working state. */
typedef struct mop_build {
    const cfx_prog *p;
    const sched_plan *plan;
    mop *code;
    int32_t *tgt;        /* per micro-op: the record its target is, -1: none or resolved */
    int32_t ncode, capcode;
    uint8_t *pool;
    int32_t npool, cappool;
    int32_t *cpool;      /* per slot: its pool offset (one-element consts), -1: none yet */
    int32_t *start;      /* per record: its first micro-op, -1 */
    uint8_t *other_in;   /* per record: entered by a jump (not only by falling through) */
    int32_t *entry;      /* the result's entry */
    int32_t nregions, ncovered, ninterp, nfused, nrotated;
    int nomem;
    int bad;             /* a target outside its region: the plan is not what the translator trusts */
} mop_build;

static inline int mop_is_compare(int op)
{
    return op == OP_LT || op == OP_LE || op == OP_GT || op == OP_GE || op == OP_EQ || op == OP_NE;
}

/* The typed opcode of a one-element BINARY, UNARY or fused compare (`fused`: 0, or 1, 2, 3
 * for _jf, _jf_tick, _jt_tick), -1 where there is none. */
static inline int mop_typed_code(int kind, int dt, int op, int fused)
{
#define MOP_MAP(OPC, STEM, ISBOOL, SFX) case OPC: return MOP_##STEM##_##SFX;
#define MOP_M_i32(o, s, z) MOP_MAP(o, s, z, i32)
#define MOP_M_i64(o, s, z) MOP_MAP(o, s, z, i64)
#define MOP_M_f32(o, s, z) MOP_MAP(o, s, z, f32)
#define MOP_M_f64(o, s, z) MOP_MAP(o, s, z, f64)
#define MOP_M_b(o, s, z) MOP_MAP(o, s, z, b)
#define MOP_MF(OPC, STEM, SFX) case OPC: return MOP_##STEM##_##SFX##_jf + fused - 1;
#define MOP_MF_i32(o, s) MOP_MF(o, s, i32)
#define MOP_MF_i64(o, s) MOP_MF(o, s, i64)
#define MOP_MF_f32(o, s) MOP_MF(o, s, f32)
#define MOP_MF_f64(o, s) MOP_MF(o, s, f64)
#define MOP_M_DT(LIST, SFX, T, DT) case DT: switch (op) { LIST(MOP_M_##SFX) } break;
#define MOP_MF_DT(SFX, T, DT) case DT: switch (op) { MOP_CMP_OPS(MOP_MF_##SFX) } break;
    if (fused)
        switch (dt) { MOP_CMP_TYPES(MOP_MF_DT) default: break; }
    else if (kind == REC_BINARY)
        switch (dt) { MOP_BINARY_TYPES(MOP_M_DT) default: break; }
    else
        switch (dt) { MOP_UNARY_TYPES(MOP_M_DT) default: break; }
    return -1;
#undef MOP_MAP
#undef MOP_MF
}

/* Appends n bytes to the pool (8-aligned); returns their file offset, or -1 when memory runs
 * out (b->nomem). */
static inline int32_t mop_pool_add(mop_build *b, const void *bytes, int32_t n)
{
    int32_t at = (b->npool + 7) / 8 * 8;
    if (at + n > b->cappool) {
        int32_t cap = 2 * (at + n) + 64;
        uint8_t *q = (uint8_t *)realloc(b->pool, (size_t)cap);
        if (!q) {
            b->nomem = 1;
            return -1;
        }
        b->pool = q;
        b->cappool = cap;
    }
    memset(b->pool + b->npool, 0, (size_t)(at + n - b->npool));
    memcpy(b->pool + at, bytes, (size_t)n);
    b->npool = at + n;
    return b->plan->priv_bytes + at;
}

/* The file offset of one-element slot s: its private copy, or its pool entry (a const,
 * zero-extended to 8 bytes); -1 for a slot that is not one element. `dry`: only say whether
 * it has one (a pool entry is made when the micro-op is emitted). */
static inline int32_t mop_file(mop_build *b, int32_t s, int dry)
{
    const cfx_slot *sl = &b->p->slots[s];
    if (sl->count != 1)
        return -1; /* a replica (a private tensor) too: the interpreter takes its records */
    if (b->plan->priv_offset[s] >= 0)
        return b->plan->priv_offset[s];
    if (sl->kind != SLOT_CONST)
        return -1;
    if (dry)
        return 0;
    if (b->cpool[s] < 0) {
        uint64_t v = 0;
        memcpy(&v, b->p->consts + sl->offset, (size_t)slot_bytes(sl));
        b->cpool[s] = mop_pool_add(b, &v, 8);
    }
    return b->cpool[s];
}

/* A pool entry for a row of arena tensor s (offset, rows): -1 if s lives in the file. */
static inline int32_t mop_rowdesc(mop_build *b, int32_t s, int dry)
{
    const cfx_slot *sl = &b->p->slots[s];
    int64_t d[2];
    if (b->plan->priv_offset[s] >= 0 || sl->count < 2 || sl->rank < 1)
        return -1;
    if (dry)
        return 0;
    d[0] = sl->offset;
    d[1] = sl->dims[0];
    return mop_pool_add(b, d, 16);
}

/* The one micro-op of record q, which is not a jump, branch, switch or TICK ("straight": a
 * copy of it may stand anywhere, since its stops name q). Returns 0 and fills *m, or -1 when
 * the micro-ops do not cover q. `dry`: only decide. */
static inline int mop_straight(mop_build *b, int32_t q, int dry, mop *m)
{
    const cfx_record *r = &b->p->records[q];
    const cfx_slot *S = b->p->slots;
    int32_t fa = -1, fb = -1, fc = -1, fd = -1;
    int code = -1, d = 0;
    const char *f = rec_fields[r->kind];
    /* every slot operand in the file, except where a kind says otherwise below */
    if (r->kind != REC_GET_ROW && r->kind != REC_SET_ROW) {
        int32_t ops[4] = {r->a, r->b, r->c, r->d};
        int32_t *fo[4] = {&fa, &fb, &fc, &fd};
        for (int k = 0; k < 4; k++)
            if (f[k] == 's' && !(r->kind == REC_PRINT && k == 0) && (*fo[k] = mop_file(b, ops[k], 1)) < 0)
                return -1;
    }
    switch ((enum rec_kind)r->kind) {
    case REC_BINARY:
    case REC_UNARY:
        code = mop_typed_code(r->kind, r->dtype, r->op, 0);
        break;
    case REC_COPY:
    case REC_FILL:
        code = MOP_MOV;
        break;
    case REC_CAST:
        code = MOP_CAST;
        d = S[r->a].dtype | S[r->b].dtype << 4;
        break;
    case REC_WHERE: {
        int size = dtype_size(S[r->a].dtype);
        code = size == 1 ? MOP_WHERE1 : size == 4 ? MOP_WHERE4 : MOP_WHERE8;
        break;
    }
    case REC_GET_ROW:
    case REC_SET_ROW: {
        /* one element of a 1-D arena tensor: a = the element's slot, b = the index */
        const int get = r->kind == REC_GET_ROW;
        const int32_t val = get ? r->a : r->c, idx = get ? r->c : r->b, ten = get ? r->b : r->a;
        int size = dtype_size(S[val].dtype);
        fa = mop_file(b, val, 1);
        fb = mop_file(b, idx, 1);
        if (fa < 0 || fb < 0 || mop_rowdesc(b, ten, 1) < 0 || S[ten].count != S[ten].dims[0])
            return -1;
        code = (get ? MOP_GET_ROW1 : MOP_SET_ROW1) + (size == 1 ? 0 : size == 4 ? 1 : 2);
        d = S[idx].dtype;
        if (!dry) {
            fa = mop_file(b, val, 0);
            fb = mop_file(b, idx, 0);
            fc = mop_rowdesc(b, ten, 0);
        }
        break;
    }
    case REC_ASSERT:
        code = MOP_ASSERT;
        break;
    case REC_PRINT:
        code = MOP_PRINT;
        fa = -1; /* the caller prints the record's slot, wherever it lives */
        break;
    case REC_CHECK_INDEX:
        code = S[r->a].dtype == CFX_I64 ? MOP_CHECK_INDEX_I64 : S[r->a].dtype == CFX_I32 ? MOP_CHECK_INDEX_I32 : -1;
        if (!dry) {
            int64_t rows = r->b;
            fb = mop_pool_add(b, &rows, 8);
        }
        break;
    case REC_CHECK_BOUND:
        code = MOP_CHECK_BOUND;
        fc = S[r->a].dtype | S[r->b].dtype << 4 | r->d << 8;
        break;
    case REC_CHECK_DIVIDE:
        code = S[r->a].dtype == CFX_I64 ? MOP_CHECK_DIVIDE_I64 : S[r->a].dtype == CFX_I32 ? MOP_CHECK_DIVIDE_I32 : -1;
        break;
    case REC_CHECK_STEP:
        code = MOP_CHECK_STEP;
        d = S[r->a].dtype;
        break;
    /* control records (elsewhere), and whatever is wider than one element */
    case REC_HALT:
    case REC_JUMP:
    case REC_JUMP_FALSE:
    case REC_JUMP_TRUE:
    case REC_SWITCH:
    case REC_TICK:
    case REC_REDUCE:
    case REC_DOT:
    case REC_MATMUL:
    case REC_TRANSPOSE:
    case REC_IOTA:
    case REC_CALL:
    case REC_GET_BOX:
    case REC_SET_BOX:
    case REC_BROADCAST:
    case REC_GET_ITEM:
    case REC_SET_ITEM:
    case REC_GATHER:
    case REC_REDUCE_AXIS:
    case REC_PERMUTE:
        return -1;
    }
    if (code < 0)
        return -1;
    if (dry)
        return 0;
    /* the operands for real: consts get their pool entries now */
    if (r->kind != REC_GET_ROW && r->kind != REC_SET_ROW) {
        int32_t ops[4] = {r->a, r->b, r->c, r->d};
        int32_t *fo[4] = {&fa, &fb, &fc, &fd};
        for (int k = 0; k < 4; k++)
            if (f[k] == 's' && !(r->kind == REC_PRINT && k == 0))
                *fo[k] = mop_file(b, ops[k], 0);
    }
    memset(m, 0, sizeof *m);
    m->code = (uint16_t)code;
    m->a = (uint16_t)(fa < 0 ? 0 : fa);
    m->b = (uint16_t)(fb < 0 ? 0 : fb);
    m->c = (uint16_t)(fc < 0 ? 0 : fc);
    m->d = (uint16_t)(r->kind == REC_WHERE ? fd : d);
    m->pc = q;
    return 0;
}

/* Does record q run as micro-ops (on its own, or as part of a fused one)? */
static inline int mop_covered(mop_build *b, int32_t q)
{
    const cfx_record *r = &b->p->records[q];
    mop m;
    REC_COUNT_IS(34);
    switch (r->kind) {
    case REC_JUMP:
    case REC_TICK:
        return 1;
    case REC_JUMP_FALSE:
    case REC_JUMP_TRUE:
        return b->p->slots[r->a].dtype == CFX_BOOL && mop_file(b, r->a, 1) >= 0;
    case REC_SWITCH:
        return b->p->slots[r->a].dtype == CFX_I32 && mop_file(b, r->a, 1) >= 0 && r->c < 1024;
    default:
        return mop_straight(b, q, 1, &m) == 0;
    }
}

/* Appends a micro-op whose target is record `to` (-1: none); returns its index. */
static inline int32_t mop_emit(mop_build *b, const mop *m, int32_t to)
{
    if (b->ncode == b->capcode) {
        int32_t cap = 2 * b->capcode + 64;
        mop *c = (mop *)realloc(b->code, sizeof(mop) * (size_t)cap);
        int32_t *t = (int32_t *)realloc(b->tgt, sizeof(int32_t) * (size_t)cap);
        if (c)
            b->code = c;
        if (t)
            b->tgt = t;
        if (!c || !t) {
            b->nomem = 1;
            return -1;
        }
        b->capcode = cap;
    }
    b->code[b->ncode] = *m;
    b->tgt[b->ncode] = to;
    return b->ncode++;
}

static inline int32_t mop_emit_op(mop_build *b, int code, int32_t a, int32_t to, int32_t pc)
{
    mop m;
    memset(&m, 0, sizeof m);
    m.code = (uint16_t)code;
    m.a = (uint16_t)a;
    m.pc = pc;
    return mop_emit(b, &m, to);
}

/* Is record q a one-element numeric compare whose result the branch at q + 1 tests? */
static inline int mop_fusable_compare(mop_build *b, int32_t q, int32_t branch)
{
    const cfx_record *r = &b->p->records[q], *j = &b->p->records[branch];
    mop m;
    return r->kind == REC_BINARY && mop_is_compare(r->op) && r->dtype != CFX_BOOL && j->a == r->a &&
           mop_straight(b, q, 1, &m) == 0;
}

/* The fused micro-op of compare q with its branch (fused: 1 _jf, 2 _jf_tick, 3 _jt_tick). */
static inline void mop_emit_fused(mop_build *b, int32_t q, int fused, int32_t to, int32_t pc)
{
    const cfx_record *r = &b->p->records[q];
    mop m;
    memset(&m, 0, sizeof m);
    m.code = (uint16_t)mop_typed_code(REC_BINARY, r->dtype, r->op, fused);
    m.a = (uint16_t)mop_file(b, r->a, 0);
    m.b = (uint16_t)mop_file(b, r->b, 0);
    m.c = (uint16_t)mop_file(b, r->c, 0);
    m.pc = pc;
    mop_emit(b, &m, to);
    b->nfused++;
}

/* A JUMP at r back to a loop's test: where the test (records t..k: straight records, then
 * the JUMP_FALSE at k, whose fall-through is the TICK at k + 1 that opens the body) is short,
 * the JUMP becomes a copy of it that branches back into the body on true, the TICK folded
 * in, and falls out towards the loop's exit. Returns 1 if it did. */
static inline int mop_rotate(mop_build *b, int32_t r, int32_t h, int32_t e)
{
    const cfx_record *R = b->p->records;
    const int32_t t = R[r].a;
    int32_t k;
    mop m;
    if (t < h || t > r)
        return 0;
    for (k = t; k < e && k - t <= MOP_ROTATE_MAX && R[k].kind != REC_JUMP_FALSE; k++)
        if (R[k].kind == REC_JUMP || R[k].kind == REC_JUMP_TRUE || R[k].kind == REC_SWITCH ||
            R[k].kind == REC_TICK || mop_straight(b, k, 1, &m) != 0)
            return 0;
    if (k + 1 >= e || k - t > MOP_ROTATE_MAX || R[k].kind != REC_JUMP_FALSE || !mop_covered(b, k) ||
        R[k + 1].kind != REC_TICK)
        return 0;
    const int fuse = k > t && mop_fusable_compare(b, k - 1, k);
    for (int32_t q = t; q < (fuse ? k - 1 : k); q++) {
        mop_straight(b, q, 0, &m);
        mop_emit(b, &m, -1);
    }
    if (fuse)
        mop_emit_fused(b, k - 1, 3, k + 2, k + 1);
    else
        mop_emit_op(b, MOP_JT_TICK, mop_file(b, R[k].a, 0), k + 2, k + 1);
    if (R[k].b != r + 1)
        mop_emit_op(b, MOP_JUMP, 0, R[k].b, r);
    b->nrotated++;
    return 1;
}

/* The micro-ops of covered record r of region [h, e), with what fuses into it; returns the
 * records consumed. b->entry is set for r; a record consumed into r's micro-op has none. */
static inline int32_t mop_record(mop_build *b, int32_t r, int32_t h, int32_t e)
{
    const cfx_record *R = b->p->records;
    const cfx_record *x = &R[r];
    mop m;
    b->entry[r] = b->ncode;
    REC_COUNT_IS(34);
    switch (x->kind) {
    case REC_BINARY:
        /* a compare, the JUMP_FALSE that tests it and the TICK that opens a loop's body */
        if (r + 1 < e && R[r + 1].kind == REC_JUMP_FALSE && !b->other_in[r + 1] && mop_fusable_compare(b, r, r + 1)) {
            if (r + 2 < e && R[r + 2].kind == REC_TICK && !b->other_in[r + 2]) {
                mop_emit_fused(b, r, 2, R[r + 1].b, r + 2);
                return 3;
            }
            mop_emit_fused(b, r, 1, R[r + 1].b, r + 1);
            return 2;
        }
        break;
    case REC_JUMP_FALSE:
        if (r + 1 < e && R[r + 1].kind == REC_TICK && !b->other_in[r + 1]) {
            mop_emit_op(b, MOP_JF_TICK, mop_file(b, x->a, 0), x->b, r + 1);
            return 2;
        }
        mop_emit_op(b, MOP_JF, mop_file(b, x->a, 0), x->b, r);
        return 1;
    case REC_JUMP_TRUE:
        mop_emit_op(b, MOP_JT, mop_file(b, x->a, 0), x->b, r);
        return 1;
    case REC_TICK:
        mop_emit_op(b, MOP_TICK, 0, -1, r);
        return 1;
    case REC_SWITCH:
        memset(&m, 0, sizeof m);
        m.code = MOP_SWITCH;
        m.a = (uint16_t)mop_file(b, x->a, 0);
        m.d = (uint16_t)x->c;
        m.pc = r;
        mop_emit(b, &m, -1);
        for (int32_t k = 0; k <= x->c; k++)
            mop_emit_op(b, MOP_CASE, 0, b->p->table[x->b + k], r);
        return 1;
    case REC_JUMP:
        if (mop_rotate(b, r, h, e) || x->a == r + 1)
            return 1; /* a copy of the loop's test; or nothing: it falls through */
        mop_emit_op(b, MOP_JUMP, 0, x->a, r);
        return 1;
    default:
        break;
    }
    mop_straight(b, r, 0, &m);
    mop_emit(b, &m, -1);
    return 1;
}

/* Region [h, e): its micro-ops, its records' entries, every target resolved inside it. */
static inline void mop_region(mop_build *b, int32_t h, int32_t e)
{
    const cfx_prog *p = b->p;
    const int32_t n0 = b->ncode;
    for (int32_t r = h; r <= e; r++) {
        b->other_in[r] = 0;
        b->start[r] = -1;
    }
    b->other_in[h] = 1; /* entered from outside */
    for (int32_t x = h; x < e; x++) {
        const cfx_record *R = &p->records[x];
        if (R->kind == REC_JUMP)
            b->other_in[R->a] = 1;
        else if (R->kind == REC_JUMP_FALSE || R->kind == REC_JUMP_TRUE)
            b->other_in[R->b] = 1; /* even its own fall-through: nothing fuses over a target */
        else if (R->kind == REC_SWITCH)
            for (int32_t k = 0; k <= R->c; k++)
                b->other_in[p->table[R->b + k]] = 1;
    }
    for (int32_t r = h; r < e;) {
        int32_t n;
        b->start[r] = b->ncode;
        if (!mop_covered(b, r)) {
            mop_emit_op(b, MOP_EXIT, 0, -1, r); /* the interpreter runs r */
            b->ninterp++;
            r++;
            continue;
        }
        n = mop_record(b, r, h, e);
        b->ncovered += n;
        r += n;
    }
    b->start[e] = b->ncode;
    mop_emit_op(b, MOP_EXIT, 0, -1, e);
    if (b->nomem)
        return;
    /* targets: records of [h, e] to micro-ops */
    for (int32_t i = n0; i < b->ncode; i++) {
        int32_t to = b->tgt[i];
        if (to < 0)
            continue;
        if (to < h || to > e || b->start[to] < 0) {
            b->bad = 1;
            return;
        }
        b->code[i].t = (uint16_t)b->start[to];
    }
    /* jumps to jumps go straight on; a jump to an EXIT is that EXIT */
    for (int32_t i = n0; i < b->ncode; i++) {
        mop *m = &b->code[i];
        if (mop_roles[m->code][4] != 't')
            continue;
        for (int hops = 0; hops < 16 && b->code[m->t].code == MOP_JUMP; hops++)
            m->t = b->code[m->t].t;
        if (m->code == MOP_JUMP && b->code[m->t].code == MOP_EXIT) {
            m->code = MOP_EXIT;
            m->pc = b->code[m->t].pc;
        }
    }
}

/* Checks what the dispatch loop trusts: every opcode known, every operand inside the scalar
 * file, every target a micro-op (never a CASE, nor past the end), a SWITCH followed by its
 * CASEs, no micro-op that falls off the end, every row inside the arena, every EXIT at a
 * record, every entry a micro-op. 0, or -1 with the reason. */
static inline int mop_check(const cfx_prog *p, const sched_plan *plan, const mop_prog *mp, char *why, size_t len)
{
    const int32_t fb = mp->file_bytes;
    if (mp->pool_bytes % 16 || fb != plan->priv_bytes + mp->pool_bytes || mp->code_offset != fb ||
        mp->image_bytes != mp->pool_bytes + 16 * mp->ncode || fb + 16 * mp->ncode > MOP_SHARED_MAX ||
        (const uint8_t *)mp->code != mp->image + mp->pool_bytes || mp->nrecords != p->nrecords) {
        snprintf(why, len, "the micro-ops' layout is inconsistent");
        return -1;
    }
    for (int32_t i = 0; i < mp->ncode; i++) {
        const mop *m = &mp->code[i];
        const uint16_t ops[4] = {m->a, m->b, m->c, m->d};
        if (m->code >= MOP_COUNT) {
            snprintf(why, len, "micro-op %d: no opcode %d", (int)i, (int)m->code);
            return -1;
        }
        const char *roles = mop_roles[m->code];
        for (int k = 0; k < 4; k++) {
            int size = roles[k] == 'r' ? 16 : 8;
            if ((roles[k] == 'f' || roles[k] == 'p' || roles[k] == 'r') &&
                (ops[k] % 8 || ops[k] + size > fb || (roles[k] != 'f' && ops[k] < plan->priv_bytes))) {
                snprintf(why, len, "micro-op %d (%s): operand %c outside the scalar file", (int)i,
                         mop_names[m->code], 'a' + k);
                return -1;
            }
        }
        if (roles[4] == 't' && (m->t >= mp->ncode || mp->code[m->t].code == MOP_CASE)) {
            snprintf(why, len, "micro-op %d (%s): target %d is no micro-op", (int)i, mop_names[m->code], (int)m->t);
            return -1;
        }
        if (m->code == MOP_CASE && (i == 0 || (mp->code[i - 1].code != MOP_SWITCH && mp->code[i - 1].code != MOP_CASE))) {
            snprintf(why, len, "micro-op %d: a CASE without its SWITCH", (int)i);
            return -1;
        }
        if (m->code == MOP_SWITCH) {
            if (i + 1 + m->d >= mp->ncode) {
                snprintf(why, len, "micro-op %d: the SWITCH's CASEs run past the end", (int)i);
                return -1;
            }
            for (int32_t k = 0; k <= m->d; k++)
                if (mp->code[i + 1 + k].code != MOP_CASE) {
                    snprintf(why, len, "micro-op %d: the SWITCH lacks CASE %d", (int)i, (int)k);
                    return -1;
                }
        }
        if (m->code != MOP_EXIT && m->code != MOP_JUMP && m->code != MOP_SWITCH && m->code != MOP_CASE &&
            (i + 1 >= mp->ncode || mp->code[i + 1].code == MOP_CASE)) {
            snprintf(why, len, "micro-op %d (%s) falls off its code", (int)i, mop_names[m->code]);
            return -1;
        }
        if (m->pc < 0 || m->pc > p->nrecords || (m->pc == p->nrecords && m->code != MOP_EXIT)) {
            snprintf(why, len, "micro-op %d (%s) names record %d", (int)i, mop_names[m->code], (int)m->pc);
            return -1;
        }
        if (m->code == MOP_CAST || m->code == MOP_CHECK_STEP || roles[2] == 'r') {
            if ((m->d & 15) >= 5 || (m->d >> 4) >= 5) {
                snprintf(why, len, "micro-op %d (%s): no dtype %d", (int)i, mop_names[m->code], (int)m->d);
                return -1;
            }
        }
        if (m->code == MOP_CHECK_BOUND && ((m->c & 15) >= 5 || ((m->c >> 4) & 15) >= 5 || (m->c >> 8) > 4)) {
            snprintf(why, len, "micro-op %d: a bound check of no kind", (int)i);
            return -1;
        }
        if (roles[2] == 'r') {
            int64_t d[2];
            int size = m->code == MOP_GET_ROW1 || m->code == MOP_SET_ROW1   ? 1
                       : m->code == MOP_GET_ROW4 || m->code == MOP_SET_ROW4 ? 4
                                                                            : 8;
            memcpy(d, mp->image + (m->c - plan->priv_bytes), sizeof d);
            if (d[0] < 0 || d[1] < 1 || d[0] % size || d[0] + d[1] * size > p->arena_bytes) {
                snprintf(why, len, "micro-op %d (%s): a row outside the arena", (int)i, mop_names[m->code]);
                return -1;
            }
        }
    }
    for (int32_t r = 0; r < p->nrecords; r++)
        if (mp->entry[r] < -1 || mp->entry[r] >= mp->ncode || (mp->entry[r] >= 0 && !(plan->flags[r] & SCHED_F_ONE_BLOCK))) {
            snprintf(why, len, "record %d enters micro-op %d", (int)r, (int)mp->entry[r]);
            return -1;
        }
    return 0;
}

/* Translates the one-block regions of a validated program (plan: its sched_plan) into
 * micro-ops. A region whose micro-ops would not fit in shared memory beside those before it
 * is left to the interpreter. Returns 0 with *mp filled, or -1 with the reason in why
 * (nothing to translate, nothing fits, out of memory) and *mp empty: the executor then
 * interprets every record, as it does without micro-ops. */
static inline int mop_translate(const cfx_prog *p, const sched_plan *plan, mop_prog *mp, char *why, size_t len)
{
    mop_build b;
    const int32_t nr = p->nrecords;
    int rc = -1;
    memset(mp, 0, sizeof *mp);
    memset(&b, 0, sizeof b);
    b.p = p;
    b.plan = plan;
    if (plan->nregions == 0) {
        snprintf(why, len, "the program has no one-block loops");
        return -1;
    }
    if (plan->priv_bytes > MOP_SHARED_MAX - 64) {
        snprintf(why, len, "its private copies (%d bytes) leave no room in shared memory", (int)plan->priv_bytes);
        return -1;
    }
    b.start = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    b.other_in = (uint8_t *)malloc((size_t)nr + 1);
    b.cpool = (int32_t *)malloc(sizeof(int32_t) * ((size_t)p->nslots + 1));
    b.entry = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nr + 1));
    if (!b.start || !b.other_in || !b.cpool || !b.entry)
        goto nomem;
    for (int32_t s = 0; s < p->nslots; s++)
        b.cpool[s] = -1;
    for (int32_t r = 0; r < nr; r++)
        b.entry[r] = -1;
    for (int32_t h = 0; h < nr; h++) {
        if (!(plan->flags[h] & SCHED_F_REGION_ENTRY))
            continue;
        const int32_t e = plan->region_exit[h], n0 = b.ncode, pool0 = b.npool;
        const int32_t counts[4] = {b.ncovered, b.ninterp, b.nfused, b.nrotated};
        mop_region(&b, h, e);
        if (b.nomem)
            goto nomem;
        if (b.bad) {
            snprintf(why, len, "the one-block loop at record %d is entered or left elsewhere than the plan says", (int)h);
            goto done;
        }
        if (plan->priv_bytes + (b.npool + 15) / 16 * 16 + 16 * b.ncode > MOP_SHARED_MAX) {
            /* leave this region to the interpreter; a later, smaller one may still fit */
            b.ncode = n0;
            b.npool = pool0;
            for (int32_t r = h; r < e; r++)
                b.entry[r] = -1;
            for (int32_t s = 0; s < p->nslots; s++)
                if (b.cpool[s] >= plan->priv_bytes + pool0)
                    b.cpool[s] = -1;
            b.ncovered = counts[0];
            b.ninterp = counts[1];
            b.nfused = counts[2];
            b.nrotated = counts[3];
            continue;
        }
        b.nregions++;
    }
    if (b.ncode == 0) {
        snprintf(why, len, "no one-block loop fits in shared memory beside the private copies");
        goto done;
    }
    mp->pool_bytes = (b.npool + 15) / 16 * 16;
    mp->ncode = b.ncode;
    mp->image_bytes = mp->pool_bytes + 16 * b.ncode;
    mp->image = (uint8_t *)calloc((size_t)mp->image_bytes, 1);
    if (!mp->image)
        goto nomem;
    if (b.npool > 0)
        memcpy(mp->image, b.pool, (size_t)b.npool);
    memcpy(mp->image + mp->pool_bytes, b.code, sizeof(mop) * (size_t)b.ncode);
    mp->code = (const mop *)(mp->image + mp->pool_bytes);
    mp->file_bytes = plan->priv_bytes + mp->pool_bytes;
    mp->code_offset = mp->file_bytes;
    mp->entry = b.entry;
    b.entry = NULL;
    mp->nrecords = nr;
    mp->nregions = b.nregions;
    mp->ncovered = b.ncovered;
    mp->ninterp = b.ninterp;
    mp->nfused = b.nfused;
    mp->nrotated = b.nrotated;
    rc = mop_check(p, plan, mp, why, len);
    if (rc != 0)
        mop_prog_free(mp);
    goto done;
nomem:
    snprintf(why, len, "out of memory in the micro-op translator");
    mop_prog_free(mp);
    rc = -1;
done:
    free(b.code);
    free(b.tgt);
    free(b.pool);
    free(b.cpool);
    free(b.start);
    free(b.other_in);
    free(b.entry);
    return rc;
}

#endif
