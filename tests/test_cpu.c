/* test_cpu.c: the CPU executor on hand-built programs: a counter loop, a branch, tensor
 * records, every stop status with its record and details, the budget, a cancel from another
 * thread while a loop spins, print, application kernels, the trace, and that a stopped run
 * writes no results. Also the names and the stop message of exec.c. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host/runtime/exec.h"
#include "kernels/kernels.h"
#include "kernels/ops.h"
#include "host/program/program.h"
#include "testutil.h"

static cfx_record rec(int kind, int op, int dtype, int flags, int a, int b, int c, int d, int line)
{
    cfx_record r;
    test_record(&r, kind, op, dtype, flags, a, b, c, d, line, 5);
    return r;
}

#define SC REC_F_SCALAR

static cfx_prog *finish(prog_builder *b)
{
    char err[256];
    cfx_prog *p = prog_finish(b, err, sizeof err);
    if (!p) {
        fprintf(stderr, "prog_finish: %s\n", err);
        return NULL;
    }
    if (prog_validate(p, err, sizeof err) != 0) {
        fprintf(stderr, "prog_validate: %s\n", err);
        prog_free(p);
        return NULL;
    }
    return p;
}

static exec_run make_run(const cfx_prog *p, void *const *inputs, void *const *results)
{
    exec_run run;
    memset(&run, 0, sizeof run);
    run.prog = p;
    run.inputs = inputs;
    run.results = results;
    return run;
}

/* while i < n { s = s + i % 7; i = i + 1 } as the lowering makes it: the test (record 0),
 * JUMP_FALSE to the exit, the TICK that opens the body (record 2), the body, JUMP back */
static cfx_prog *counter_program(void)
{
    prog_builder *b = prog_begin("count.cfx", "count");
    int32_t n = prog_slot(b, CFX_I32, 0, NULL, SLOT_INPUT, "n");
    int32_t s = prog_slot(b, CFX_I32, 0, NULL, SLOT_RESULT, "s");
    int32_t i = prog_slot(b, CFX_I32, 0, NULL, SLOT_VAR, "i");
    int32_t c = prog_slot(b, CFX_BOOL, 0, NULL, SLOT_TEMP, NULL);
    int32_t t = prog_slot(b, CFX_I32, 0, NULL, SLOT_TEMP, NULL);
    int32_t one = 1, seven = 7;
    int32_t k1 = prog_const(b, CFX_I32, 0, NULL, &one), k7 = prog_const(b, CFX_I32, 0, NULL, &seven);
    prog_add_input(b, n);
    prog_add_result(b, s);
    prog_emit(b, rec(REC_BINARY, OP_LT, CFX_I32, SC, c, i, n, 0, 2));
    prog_emit(b, rec(REC_JUMP_FALSE, 0, CFX_BOOL, SC, c, 7, 0, 0, 2));
    prog_emit(b, rec(REC_TICK, 0, 0, 0, 0, 0, 0, 0, 2));
    prog_emit(b, rec(REC_BINARY, OP_MOD, CFX_I32, SC, t, i, k7, 0, 3));
    prog_emit(b, rec(REC_BINARY, OP_ADD, CFX_I32, SC, s, s, t, 0, 3));
    prog_emit(b, rec(REC_BINARY, OP_ADD, CFX_I32, SC, i, i, k1, 0, 4));
    prog_emit(b, rec(REC_JUMP, 0, 0, 0, 0, 0, 0, 0, 2));
    prog_emit(b, rec(REC_HALT, 0, 0, 0, 0, 0, 0, 0, 5));
    return finish(b);
}

static void test_counter(void)
{
    cfx_prog *p = counter_program();
    CHECK(p != NULL);
    if (!p)
        return;
    const int32_t ns[3] = {0, 1, 1000};
    for (int k = 0; k < 3; k++) {
        int32_t n = ns[k], s = -1, want = 0;
        for (int32_t i = 0; i < n; i++)
            want += i % 7;
        void *in[1] = {&n}, *res[1] = {&s};
        exec_run run = make_run(p, in, res);
        exec_outcome out;
        CHECK_INT(cpu_run(&run, &out), 0);
        CHECK_INT(out.status, CFX_OK);
        CHECK_INT(out.record, -1);
        CHECK_INT(s, want);
        CHECK_INT(out.iterations, n); /* one per body entered; the failing test has no TICK */
    }

    /* the budget: 10 iterations run, the 11th stops the run at its TICK before its body,
     * results untouched */
    int32_t n = 1000, s = -12345;
    void *in[1] = {&n}, *res[1] = {&s};
    exec_run run = make_run(p, in, res);
    run.max_iters = 10;
    exec_outcome out;
    CHECK_INT(cpu_run(&run, &out), 0);
    CHECK_INT(out.status, CFX_STOP_LIMIT);
    CHECK_INT(out.record, 2);
    CHECK_INT(out.detail[0], 10);
    CHECK_INT(out.iterations, 10);
    CHECK_INT(s, -12345);
    char msg[256];
    exec_format_stop(p, &out, msg, sizeof msg);
    CHECK_STR(msg, "count.cfx:2:5: run stopped: limit: iteration budget of 10 spent");
    /* a budget of exactly the 1000 iterations lets the run end; one less stops it */
    run.max_iters = 1000;
    CHECK_INT(cpu_run(&run, &out), 0);
    CHECK_INT(out.status, CFX_OK);
    CHECK_INT(out.iterations, 1000);
    CHECK_INT(s, 2997); /* 142 * 21 + (0 + 1 + 2 + 3 + 4 + 5) = 2982 + 15 */
    s = -12345;
    run.max_iters = 999;
    CHECK_INT(cpu_run(&run, &out), 0);
    CHECK_INT(out.status, CFX_STOP_LIMIT);
    CHECK_INT(out.record, 2);
    CHECK_INT(out.iterations, 999);
    CHECK_INT(s, -12345);
    prog_free(p);
}

/* if x < y { out = x * 2 } else { out = y - 1 }; x is assigned (its own copy) afterwards */
static void test_branch(void)
{
    prog_builder *b = prog_begin("br.cfx", "branch");
    int32_t x = prog_slot(b, CFX_F64, 0, NULL, SLOT_INPUT, "x");
    int32_t y = prog_slot(b, CFX_F64, 0, NULL, SLOT_INPUT, "y");
    int32_t out = prog_slot(b, CFX_F64, 0, NULL, SLOT_RESULT, "out");
    int32_t c = prog_slot(b, CFX_BOOL, 0, NULL, SLOT_TEMP, NULL);
    double two = 2, one = 1;
    int32_t k2 = prog_const(b, CFX_F64, 0, NULL, &two), k1 = prog_const(b, CFX_F64, 0, NULL, &one);
    prog_add_input(b, x);
    prog_add_input(b, y);
    prog_add_result(b, out);
    prog_emit(b, rec(REC_BINARY, OP_LT, CFX_F64, SC, c, x, y, 0, 1));
    prog_emit(b, rec(REC_JUMP_FALSE, 0, CFX_BOOL, SC, c, 4, 0, 0, 1));
    prog_emit(b, rec(REC_BINARY, OP_MUL, CFX_F64, SC, out, x, k2, 0, 2));
    prog_emit(b, rec(REC_JUMP, 0, 0, 0, 5, 0, 0, 0, 2));
    prog_emit(b, rec(REC_BINARY, OP_SUB, CFX_F64, SC, out, y, k1, 0, 4));
    prog_emit(b, rec(REC_BINARY, OP_ADD, CFX_F64, SC, x, x, k1, 0, 5));
    prog_emit(b, rec(REC_HALT, 0, 0, 0, 0, 0, 0, 0, 6));
    cfx_prog *p = finish(b);
    CHECK(p != NULL);
    if (!p)
        return;
    double xv = 1.5, yv = 4, r = 0;
    void *in[2] = {&xv, &yv}, *res[1] = {&r};
    exec_run run = make_run(p, in, res);
    exec_outcome o;
    CHECK_INT(cpu_run(&run, &o), 0);
    CHECK_INT(o.status, CFX_OK);
    CHECK_REAL(r, 3.0, 0);
    CHECK_REAL(xv, 1.5, 0); /* the caller's buffer is never written */
    xv = 5;
    CHECK_INT(cpu_run(&run, &o), 0);
    CHECK_REAL(r, 3.0, 0); /* y - 1 */
    xv = nan("");          /* NaN < y is false: the else branch */
    r = 0;
    CHECK_INT(cpu_run(&run, &o), 0);
    CHECK_REAL(r, 3.0, 0);
    prog_free(p);
}

/* Tensor records: matmul, transpose, rows (negative index), where, cast, reduce, dot, fill,
 * iota, copy, elementwise with broadcast, switch. Expected values by hand. */
static void test_tensors(void)
{
    prog_builder *b = prog_begin("t.cfx", "tensors");
    int32_t d23[2] = {2, 3}, d32[2] = {3, 2}, d3[1] = {3}, d2[1] = {2}, d22[2] = {2, 2};
    int32_t m = prog_slot(b, CFX_F32, 2, d23, SLOT_INPUT, "m");
    int32_t v = prog_slot(b, CFX_F32, 1, d3, SLOT_INPUT, "v");
    int32_t i = prog_slot(b, CFX_I32, 0, NULL, SLOT_INPUT, "i");
    int32_t mv = prog_slot(b, CFX_F32, 1, d2, SLOT_RESULT, "mv");
    int32_t mt = prog_slot(b, CFX_F32, 2, d32, SLOT_RESULT, "mt");
    int32_t row = prog_slot(b, CFX_F32, 1, d3, SLOT_RESULT, "row");
    int32_t w = prog_slot(b, CFX_I32, 1, d3, SLOT_RESULT, "w");
    int32_t tot = prog_slot(b, CFX_F32, 0, NULL, SLOT_RESULT, "tot");
    int32_t am = prog_slot(b, CFX_I32, 0, NULL, SLOT_RESULT, "am");
    int32_t dt = prog_slot(b, CFX_F32, 0, NULL, SLOT_RESULT, "dt");
    int32_t mm = prog_slot(b, CFX_F32, 2, d22, SLOT_RESULT, "mm");
    int32_t sw = prog_slot(b, CFX_I32, 0, NULL, SLOT_RESULT, "sw");
    int32_t io = prog_slot(b, CFX_I64, 1, d3, SLOT_TEMP, NULL);
    int32_t gt = prog_slot(b, CFX_BOOL, 1, d3, SLOT_TEMP, NULL);
    int32_t fl = prog_slot(b, CFX_I32, 1, d3, SLOT_TEMP, NULL);
    int32_t m2 = prog_slot(b, CFX_F32, 2, d23, SLOT_VAR, "m2");
    float half = 0.5f;
    int32_t minus9 = -9, zero = 0, neg1 = -1;
    int32_t khalf = prog_const(b, CFX_F32, 0, NULL, &half);
    int32_t k9 = prog_const(b, CFX_I32, 0, NULL, &minus9);
    int32_t kneg1 = prog_const(b, CFX_I32, 0, NULL, &neg1);
    (void)zero;
    prog_add_input(b, m);
    prog_add_input(b, v);
    prog_add_input(b, i);
    int32_t results[] = {mv, mt, row, w, tot, am, dt, mm, sw};
    for (size_t k = 0; k < sizeof results / sizeof results[0]; k++)
        prog_add_result(b, results[k]);
    int32_t targets[3] = {17, 19, 19}; /* case 0, case 1, default */
    int32_t tab = prog_table(b, targets, 3);
    int32_t xname = prog_string(b, "m");
    prog_emit(b, rec(REC_MATMUL, 0, CFX_F32, 0, mv, m, v, 0, 1));                   /* 0 */
    prog_emit(b, rec(REC_TRANSPOSE, 0, CFX_F32, 0, mt, m, 0, 0, 2));                /* 1 */
    prog_emit(b, rec(REC_CHECK_INDEX, 0, CFX_I32, SC, i, 2, xname, 0, 3));          /* 2 */
    prog_emit(b, rec(REC_GET_ROW, 0, CFX_F32, 0, row, m, i, 0, 3));                 /* 3 */
    prog_emit(b, rec(REC_IOTA, 0, CFX_I64, 0, io, 0, 0, 0, 4));                     /* 4 */
    prog_emit(b, rec(REC_BINARY, OP_GT, CFX_F32, 0, gt, v, khalf, 0, 5));           /* 5 */
    prog_emit(b, rec(REC_FILL, 0, CFX_I32, 0, fl, k9, 0, 0, 6));                    /* 6 */
    prog_emit(b, rec(REC_CAST, 0, CFX_I64, 0, w, io, 0, 0, 7));                     /* 7 */
    prog_emit(b, rec(REC_WHERE, 0, CFX_I32, 0, w, gt, w, fl, 8));                   /* 8 */
    prog_emit(b, rec(REC_REDUCE, OP_SUM, CFX_F32, 0, tot, m, 0, 0, 9));             /* 9 */
    prog_emit(b, rec(REC_REDUCE, OP_ARGMAX, CFX_F32, 0, am, v, 0, 0, 10));          /* 10 */
    prog_emit(b, rec(REC_DOT, 0, CFX_F32, 0, dt, v, row, 0, 11));                   /* 11 */
    prog_emit(b, rec(REC_COPY, 0, CFX_F32, 0, m2, m, 0, 0, 12));                    /* 12 */
    prog_emit(b, rec(REC_CHECK_INDEX, 0, CFX_I32, SC, kneg1, 2, xname, 0, 13));     /* 13 */
    prog_emit(b, rec(REC_SET_ROW, 0, CFX_F32, 0, m2, kneg1, v, 0, 13));             /* 14 */
    prog_emit(b, rec(REC_MATMUL, 0, CFX_F32, 0, mm, m2, mt, 0, 14));                /* 15 */
    prog_emit(b, rec(REC_SWITCH, 0, CFX_I32, SC, i, tab, 2, 0, 15));                /* 16 */
    prog_emit(b, rec(REC_FILL, 0, CFX_I32, SC, sw, k9, 0, 0, 16));                  /* 17: case 0 */
    prog_emit(b, rec(REC_JUMP, 0, 0, 0, 20, 0, 0, 0, 16));                          /* 18 */
    prog_emit(b, rec(REC_FILL, 0, CFX_I32, SC, sw, i, 0, 0, 17));                   /* 19: default */
    prog_emit(b, rec(REC_HALT, 0, 0, 0, 0, 0, 0, 0, 18));                           /* 20 */
    cfx_prog *p = finish(b);
    CHECK(p != NULL);
    if (!p)
        return;
    float M[6] = {1, 2, 3, 4, 5, 6}, V[3] = {1, 0, -1};
    int32_t I = -1;
    float MV[2], MT[6], ROW[3], TOT, DT, MM[4];
    int32_t W[3], AM, SW;
    void *in[3] = {M, V, &I};
    void *res[9] = {MV, MT, ROW, W, &TOT, &AM, &DT, MM, &SW};
    exec_run run = make_run(p, in, res);
    exec_outcome o;
    CHECK_INT(cpu_run(&run, &o), 0);
    CHECK_INT(o.status, CFX_OK);
    CHECK_REAL(MV[0], -2, 0); /* [[1,2,3],[4,5,6]] @ [1,0,-1] */
    CHECK_REAL(MV[1], -2, 0);
    const float mt_want[6] = {1, 4, 2, 5, 3, 6};
    for (int k = 0; k < 6; k++)
        CHECK_REAL(MT[k], mt_want[k], 0);
    CHECK_REAL(ROW[0], 4, 0); /* m[-1] is the last row */
    CHECK_REAL(ROW[2], 6, 0);
    CHECK_INT(W[0], 0); /* v > 0.5 = [true, false, false]: iota where true, -9 elsewhere */
    CHECK_INT(W[1], -9);
    CHECK_INT(W[2], -9);
    CHECK_REAL(TOT, 21, 0);
    CHECK_INT(AM, 0);
    CHECK_REAL(DT, 4 - 6, 0);
    /* m2 = m with its last row set to v: [[1,2,3],[1,0,-1]]; mm = m2 @ mt (mt = m^T) */
    CHECK_REAL(MM[0], 1 * 1 + 2 * 2 + 3 * 3, 0);
    CHECK_REAL(MM[1], 1 * 4 + 2 * 5 + 3 * 6, 0);
    CHECK_REAL(MM[2], 1 * 1 + 0 * 2 + -1 * 3, 0);
    CHECK_REAL(MM[3], 1 * 4 + 0 * 5 + -1 * 6, 0);
    CHECK_INT(SW, -1); /* i = -1: the default case copies i */
    CHECK_REAL(M[3], 4, 0);
    I = 0;
    CHECK_INT(cpu_run(&run, &o), 0);
    CHECK_INT(SW, -9); /* case 0 */
    CHECK_REAL(ROW[0], 1, 0);
    /* an index out of range stops at the CHECK_INDEX, with the index and the row count */
    I = 2;
    SW = 777;
    CHECK_INT(cpu_run(&run, &o), 0);
    CHECK_INT(o.status, CFX_STOP_INDEX);
    CHECK_INT(o.record, 2);
    CHECK_INT(o.detail[0], 2);
    CHECK_INT(o.detail[1], 2);
    CHECK_INT(SW, 777);
    char msg[256];
    exec_format_stop(p, &o, msg, sizeof msg);
    CHECK_STR(msg, "t.cfx:3:5: run stopped: index: 'm' has 2 rows, index was 2");
    /* the message names the dimension the check is of, and a tensor with no name as such */
    p->records[o.record].d = 1;
    exec_format_stop(p, &o, msg, sizeof msg);
    CHECK_STR(msg, "t.cfx:3:5: run stopped: index: dimension 1 of 'm' has size 2, index was 2");
    p->records[o.record].c = -1;
    exec_format_stop(p, &o, msg, sizeof msg);
    CHECK_STR(msg, "t.cfx:3:5: run stopped: index: dimension 1 of the tensor has size 2, index was 2");
    p->records[o.record].d = 0;
    exec_format_stop(p, &o, msg, sizeof msg);
    CHECK_STR(msg, "t.cfx:3:5: run stopped: index: the tensor has 2 rows, index was 2");
    I = -3;
    CHECK_INT(cpu_run(&run, &o), 0);
    CHECK_INT(o.status, CFX_STOP_INDEX);
    CHECK_INT(o.detail[0], -3);
    prog_free(p);
}

/* One program per remaining stop status: assert, divide, value. */
static void test_stops(void)
{
    char msg[256];
    /* assert(x > 0, "x must be positive") then out = 10 / x guarded, then a range step */
    prog_builder *b = prog_begin("s.cfx", "stops");
    int32_t d2[1] = {2};
    int32_t x = prog_slot(b, CFX_I32, 0, NULL, SLOT_INPUT, "x");
    int32_t dv = prog_slot(b, CFX_I64, 1, d2, SLOT_INPUT, "dv");
    int32_t step = prog_slot(b, CFX_I32, 0, NULL, SLOT_INPUT, "step");
    int32_t out = prog_slot(b, CFX_I64, 1, d2, SLOT_RESULT, "out");
    int32_t c = prog_slot(b, CFX_BOOL, 0, NULL, SLOT_TEMP, NULL);
    int32_t zero = 0;
    int64_t ten = 10;
    int32_t k0 = prog_const(b, CFX_I32, 0, NULL, &zero);
    int32_t k10 = prog_const(b, CFX_I64, 0, NULL, &ten);
    prog_add_input(b, x);
    prog_add_input(b, dv);
    prog_add_input(b, step);
    prog_add_result(b, out);
    int32_t m = prog_string(b, "x must be positive");
    prog_emit(b, rec(REC_BINARY, OP_GT, CFX_I32, SC, c, x, k0, 0, 1));  /* 0 */
    prog_emit(b, rec(REC_ASSERT, 0, CFX_BOOL, SC, c, m, 0, 0, 1));      /* 1 */
    prog_emit(b, rec(REC_CHECK_DIVIDE, 0, CFX_I64, 0, dv, 0, 0, 0, 2)); /* 2 */
    prog_emit(b, rec(REC_BINARY, OP_DIV, CFX_I64, 0, out, k10, dv, 0, 2));
    prog_emit(b, rec(REC_CHECK_STEP, 0, CFX_I32, SC, step, -1, 0, 0, 3)); /* 4 */
    prog_emit(b, rec(REC_HALT, 0, 0, 0, 0, 0, 0, 0, 4));
    cfx_prog *p = finish(b);
    CHECK(p != NULL);
    if (!p)
        return;
    int32_t X = 1, S = 1;
    int64_t DV[2] = {3, -4}, OUT[2] = {55, 55};
    void *in[3] = {&X, DV, &S}, *res[1] = {OUT};
    exec_run run = make_run(p, in, res);
    exec_outcome o;
    CHECK_INT(cpu_run(&run, &o), 0);
    CHECK_INT(o.status, CFX_OK);
    CHECK_INT(OUT[0], 3);
    CHECK_INT(OUT[1], -2);

    OUT[0] = OUT[1] = 55;
    X = 0;
    CHECK_INT(cpu_run(&run, &o), 0);
    CHECK_INT(o.status, CFX_STOP_ASSERT);
    CHECK_INT(o.record, 1);
    CHECK_INT(OUT[0], 55);
    exec_format_stop(p, &o, msg, sizeof msg);
    CHECK_STR(msg, "s.cfx:1:5: run stopped: assert: x must be positive");

    X = 1;
    DV[1] = 0;
    CHECK_INT(cpu_run(&run, &o), 0);
    CHECK_INT(o.status, CFX_STOP_DIVIDE);
    CHECK_INT(o.record, 2);
    CHECK_INT(OUT[0], 55);
    exec_format_stop(p, &o, msg, sizeof msg);
    CHECK_STR(msg, "s.cfx:2:5: run stopped: divide: integer division by zero");

    DV[1] = 5;
    S = 0;
    CHECK_INT(cpu_run(&run, &o), 0);
    CHECK_INT(o.status, CFX_STOP_VALUE);
    CHECK_INT(o.record, 4);
    CHECK_INT(OUT[1], 55);
    exec_format_stop(p, &o, msg, sizeof msg);
    CHECK_STR(msg, "s.cfx:3:5: run stopped: value: range step is 0");
    prog_free(p);
}

/* ---- cancel from another thread while `while true { }` spins ---- */
typedef struct canceller {
    exec_atomic_int *flag;
} canceller;

static void *cancel_soon(void *arg)
{
    canceller *c = arg;
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    atomic_store(c->flag, 1);
    return NULL;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A list by hand: items i32[3] (a variable, as the lowering makes it), length and index as
 * inputs. CHECK_BOUND(i, len) then GET_ITEM, CHECK_BOUND(len, 3) then SET_ITEM at len; each
 * CHECK_BOUND stops with index, its operands as detail and a message by what it checks; a
 * GET_ITEM that no check guards still stays inside the list (the index is clamped). */
static void test_list_records(void)
{
    char msg[256];
    prog_builder *b = prog_begin("l.cfx", "lists");
    int32_t d3[1] = {3};
    int32_t items = prog_slot(b, CFX_I32, 1, d3, SLOT_INPUT, "xs");
    int32_t len = prog_slot(b, CFX_I32, 0, NULL, SLOT_INPUT, "len(xs)");
    int32_t i = prog_slot(b, CFX_I64, 0, NULL, SLOT_INPUT, "i");
    int32_t got = prog_slot(b, CFX_I32, 0, NULL, SLOT_RESULT, "got");
    int32_t wild = prog_slot(b, CFX_I32, 0, NULL, SLOT_RESULT, "wild");
    int32_t out = prog_slot(b, CFX_I32, 1, d3, SLOT_RESULT, "out");
    int32_t three = 3, nine = 9;
    int64_t far = 1000;
    int32_t k3 = prog_const(b, CFX_I32, 0, NULL, &three), k9 = prog_const(b, CFX_I32, 0, NULL, &nine);
    int32_t kfar = prog_const(b, CFX_I64, 0, NULL, &far);
    prog_add_input(b, items);
    prog_add_input(b, len);
    prog_add_input(b, i);
    prog_add_result(b, got);
    prog_add_result(b, wild);
    prog_add_result(b, out);
    int32_t name = prog_string(b, "xs");
    prog_emit(b, rec(REC_CHECK_BOUND, 0, CFX_I64, SC, i, len, name, 0, 1));      /* 0 */
    prog_emit(b, rec(REC_GET_ITEM, 0, CFX_I32, 0, got, items, i, len, 1));       /* 1 */
    prog_emit(b, rec(REC_GET_ITEM, 0, CFX_I32, 0, wild, items, kfar, len, 2));   /* 2 */
    prog_emit(b, rec(REC_COPY, 0, CFX_I32, 0, out, items, 0, 0, 3));            /* 3 */
    prog_emit(b, rec(REC_CHECK_BOUND, 0, CFX_I32, SC, len, k3, name, 1, 4));      /* 4 */
    prog_emit(b, rec(REC_SET_ITEM, 0, CFX_I32, 0, out, len, k9, len, 4));        /* 5 */
    prog_emit(b, rec(REC_HALT, 0, 0, 0, 0, 0, 0, 0, 5));
    cfx_prog *p = finish(b);
    CHECK(p != NULL);
    if (!p)
        return;
    int32_t XS[3] = {10, 20, 30}, LEN = 2, GOT = 0, WILD = 0, OUT[3] = {0, 0, 0};
    int64_t I = -2;
    void *in[3] = {XS, &LEN, &I}, *res[3] = {&GOT, &WILD, OUT};
    exec_run run = make_run(p, in, res);
    exec_outcome o;
    CHECK_INT(cpu_run(&run, &o), 0);
    CHECK_INT(o.status, CFX_OK);
    CHECK_INT(GOT, 10);  /* -2 counts from the length 2, not from the capacity 3 */
    CHECK_INT(WILD, 30); /* 1000 is clamped to the last item: no read outside */
    CHECK_INT(OUT[0], 10);
    CHECK_INT(OUT[2], 9); /* appended at the length */

    I = 2;
    CHECK_INT(cpu_run(&run, &o), 0);
    CHECK_INT(o.status, CFX_STOP_INDEX);
    CHECK_INT(o.record, 0);
    CHECK_INT(o.detail[0], 2);
    CHECK_INT(o.detail[1], 2);
    exec_format_stop(p, &o, msg, sizeof msg);
    CHECK_STR(msg, "l.cfx:1:5: run stopped: index: list 'xs' has 2 items, index was 2");

    I = 0;
    LEN = 3;
    CHECK_INT(cpu_run(&run, &o), 0);
    CHECK_INT(o.status, CFX_STOP_INDEX);
    CHECK_INT(o.record, 4);
    exec_format_stop(p, &o, msg, sizeof msg);
    CHECK_STR(msg, "l.cfx:4:5: run stopped: index: list 'xs' is full: it holds at most 3 items");
    prog_free(p);

    /* the bound of each kind of check, as every executor evaluates it */
    CHECK(k_bound_ok(0, -2, 2) && !k_bound_ok(0, -3, 2) && !k_bound_ok(0, 2, 2));
    CHECK(k_bound_ok(1, 2, 3) && !k_bound_ok(1, 3, 3));
    CHECK(k_bound_ok(2, -1, 1) && !k_bound_ok(2, -1, 0));
    CHECK(k_bound_ok(3, 0, 1) && !k_bound_ok(3, -1, 5) && !k_bound_ok(3, 5, 5));
    CHECK(k_bound_ok(4, 3, 3) && !k_bound_ok(4, 2, 3));
    CHECK_INT(k_item_index(-1, 2, 3), 1);
    CHECK_INT(k_item_index(-9, 2, 3), 0);
    CHECK_INT(k_item_index(5, 2, 3), 2);
}

static void test_cancel(void)
{
    prog_builder *b = prog_begin("spin.cfx", "spin");
    int32_t r = prog_slot(b, CFX_I32, 0, NULL, SLOT_RESULT, "r");
    int32_t one = 1;
    int32_t k1 = prog_const(b, CFX_I32, 0, NULL, &one);
    prog_add_result(b, r);
    prog_emit(b, rec(REC_TICK, 0, 0, 0, 0, 0, 0, 0, 1));
    prog_emit(b, rec(REC_BINARY, OP_ADD, CFX_I32, SC, r, r, k1, 0, 2));
    prog_emit(b, rec(REC_JUMP, 0, 0, 0, 0, 0, 0, 0, 1));
    prog_emit(b, rec(REC_HALT, 0, 0, 0, 0, 0, 0, 0, 3));
    cfx_prog *p = finish(b);
    CHECK(p != NULL);
    if (!p)
        return;
    exec_atomic_int flag = 0;
    canceller c = {&flag};
    int32_t R = 42;
    void *res[1] = {&R};
    exec_run run = make_run(p, NULL, res);
    run.cancel = &flag;
    pthread_t th;
    double t0 = now_s();
    CHECK_INT(pthread_create(&th, NULL, cancel_soon, &c), 0);
    exec_outcome o;
    CHECK_INT(cpu_run(&run, &o), 0);
    double took = now_s() - t0;
    pthread_join(th, NULL);
    CHECK_INT(o.status, CFX_STOP_CANCELLED);
    CHECK_INT(o.record, 0);
    CHECK(o.iterations > 0);
    CHECK(took < 2.0); /* 50 ms plus the time to notice */
    CHECK_INT(R, 42);
    char msg[256];
    exec_format_stop(p, &o, msg, sizeof msg);
    CHECK_STR(msg, "spin.cfx:1:5: run stopped: cancelled: cancelled by the caller");

    /* through the exec_ops interface, with a cancel already set: stops at the first TICK */
    char err[256];
    void *self = cpu_exec_ops.create(p, err, sizeof err);
    CHECK(self != NULL);
    CHECK_INT(cpu_exec_ops.backend, CFX_BACKEND_CPU);
    CHECK_INT(cpu_exec_ops.available(err, sizeof err), 1);
    atomic_store(&flag, 1);
    CHECK_INT(cpu_exec_ops.run(self, &run, 0, err, sizeof err), 0);
    CHECK_INT(cpu_exec_ops.wait(self, &o, err, sizeof err), 0);
    CHECK_INT(o.status, CFX_STOP_CANCELLED);
    CHECK_INT(o.iterations, 0);
    /* and with a budget instead */
    atomic_store(&flag, 0);
    run.max_iters = 1000;
    CHECK_INT(cpu_exec_ops.run(self, &run, 0, err, sizeof err), 0);
    CHECK_INT(cpu_exec_ops.wait(self, &o, err, sizeof err), 0);
    CHECK_INT(o.status, CFX_STOP_LIMIT);
    CHECK_INT(o.iterations, 1000);
    run.device_buffers = 1;
    CHECK_INT(cpu_exec_ops.run(self, &run, 0, err, sizeof err), -1);
    cpu_exec_ops.destroy(self);
    prog_free(p);
}

/* ---- print, application kernels and the trace ---- */
typedef struct printed {
    int calls;
    int32_t record;
    float value;
} printed;

static void on_print(void *user, const cfx_prog *prog, int32_t record, const void *data)
{
    printed *pr = user;
    pr->calls++;
    pr->record = record;
    memcpy(&pr->value, data, sizeof pr->value);
}

static int scale_kernel(void *user, int nargs, const cfx_tensor *args, int nresults,
                        cfx_tensor *results)
{
    int *calls = user;
    (*calls)++;
    if (nargs != 2 || nresults != 1 || args[0].type.rank != 1 || args[0].type.dims[0] != 3 ||
        args[1].type.rank != 0 || results[0].type.dtype != CFX_F32)
        return 1;
    const float *x = args[0].data, *k = args[1].data;
    float *y = results[0].data;
    for (int i = 0; i < 3; i++)
        y[i] = x[i] * *k;
    return *k < 0; /* a negative factor is this kernel's failure */
}

static void test_print_call_trace(void)
{
    prog_builder *b = prog_begin("k.cfx", "kern");
    int32_t d3[1] = {3};
    int32_t x = prog_slot(b, CFX_F32, 1, d3, SLOT_INPUT, "x");
    int32_t k = prog_slot(b, CFX_F32, 0, NULL, SLOT_INPUT, "k");
    int32_t y = prog_slot(b, CFX_F32, 1, d3, SLOT_RESULT, "y");
    int32_t s = prog_slot(b, CFX_F32, 0, NULL, SLOT_TEMP, NULL);
    prog_add_input(b, x);
    prog_add_input(b, k);
    prog_add_result(b, y);
    int32_t kern = prog_kernel(b, "scale");
    int32_t ops[3] = {x, k, y};
    int32_t tab = prog_table(b, ops, 3);
    int32_t label = prog_string(b, "sum");
    prog_emit(b, rec(REC_CALL, 0, 0, 0, kern, tab, 3, 2, 1));
    prog_emit(b, rec(REC_REDUCE, OP_SUM, CFX_F32, 0, s, y, 0, 0, 2));
    prog_emit(b, rec(REC_PRINT, 0, CFX_F32, SC, s, label, 0, 0, 2));
    prog_emit(b, rec(REC_HALT, 0, 0, 0, 0, 0, 0, 0, 3));
    cfx_prog *p = finish(b);
    CHECK(p != NULL);
    if (!p)
        return;
    int calls = 0;
    exec_kernel kernels[1] = {{"scale", scale_kernel, NULL, &calls}};
    printed pr = {0, -1, 0};
    float X[3] = {1, 2, 3}, K = 2, Y[3] = {0, 0, 0};
    void *in[2] = {X, &K}, *res[1] = {Y};
    exec_run run = make_run(p, in, res);
    run.kernels = kernels;
    run.print = on_print;
    run.print_user = &pr;
    exec_outcome o;
    CHECK_INT(cpu_run(&run, &o), 0);
    CHECK_INT(o.status, CFX_OK);
    CHECK_INT(calls, 1);
    CHECK_REAL(Y[2], 6, 0);
    CHECK_INT(pr.calls, 1);
    CHECK_INT(pr.record, 2);
    CHECK_REAL(pr.value, 12, 0);

    /* a failing kernel stops the run with error at the CALL, results untouched */
    K = -1;
    Y[0] = 99;
    CHECK_INT(cpu_run(&run, &o), 0);
    CHECK_INT(o.status, CFX_ERROR);
    CHECK_INT(o.record, 0);
    CHECK_REAL(Y[0], 99, 0);
    char msg[256];
    exec_format_stop(p, &o, msg, sizeof msg);
    CHECK_STR(msg, "k.cfx:1:5: run stopped: error: kernel 'scale' failed");
    /* a kernel without a CPU function is an error too */
    kernels[0].cpu_fn = NULL;
    CHECK_INT(cpu_run(&run, &o), 0);
    CHECK_INT(o.status, CFX_ERROR);
    kernels[0].cpu_fn = scale_kernel;

    /* the trace: one event per record executed, Chrome's JSON object format */
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (f) {
        K = 2;
        run.trace = f;
        CHECK_INT(cpu_run(&run, &o), 0);
        CHECK_INT(o.status, CFX_OK);
        long len = ftell(f);
        rewind(f);
        char *text = calloc(1, (size_t)len + 1);
        CHECK(fread(text, 1, (size_t)len, f) == (size_t)len);
        CHECK(strncmp(text, "{\"traceEvents\":[", 16) == 0);
        CHECK(strstr(text, "\"name\":\"CALL (line 1)\"") != NULL); /* names end in their line */
        CHECK(strstr(text, "\"name\":\"REDUCE sum (line ") != NULL);
        CHECK(strstr(text, "\"name\":\"HALT") != NULL);
        CHECK(strstr(text, "\"ph\":\"X\"") != NULL);
        CHECK(strstr(text, "\"events\":4") != NULL);
        /* each event leads to its source (the CALL is record 0, at 1:5: rec() above), and the
         * process and its thread have names */
        CHECK(strstr(text, "\"name\":\"CALL (line 1)\",\"ph\":\"X\"") != NULL &&
              strstr(strstr(text, "\"name\":\"CALL (line 1)\",\"ph\":\"X\""), "\"args\":{\"line\":1,\"col\":5,\"record\":0}"));
        CHECK(strstr(text, "\"name\":\"process_name\",\"ph\":\"M\"") != NULL &&
              strstr(text, "\"args\":{\"name\":\"cfx cpu: graph kern (k.cfx)\"}") != NULL);
        CHECK(strstr(text, "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{\"name\":\"host\"}") != NULL);
        CHECK(len > 2 && text[len - 2] == '}');
        free(text);
        fclose(f);
    }
    prog_free(p);
}

/* The fused steps (compare + JUMP_FALSE + TICK, and the back edge JUMP with all three) give
 * the same results and stops as the plain records: the counter with tracing (no fusion)
 * against without, and both against the budget rule worked out by hand for n = 4. */
static void test_fusion_matches(void)
{
    cfx_prog *p = counter_program();
    if (!p)
        return;
    FILE *f = tmpfile();
    for (int64_t budget = 0; budget < 6; budget++) {
        int32_t n = 4, s1 = -1, s2 = -1;
        void *in[1] = {&n}, *r1[1] = {&s1}, *r2[1] = {&s2};
        exec_run a = make_run(p, in, r1), b = make_run(p, in, r2);
        a.max_iters = b.max_iters = budget;
        b.trace = f;
        exec_outcome oa, ob;
        cpu_run(&a, &oa);
        cpu_run(&b, &ob);
        CHECK_INT(oa.status, ob.status);
        CHECK_INT(oa.record, ob.record);
        CHECK_INT(oa.iterations, ob.iterations);
        CHECK_INT(s1, s2);
        /* no budget, or one of at least the 4 iterations: ok; else a stop at the TICK */
        int ends = budget == 0 || budget >= 4;
        CHECK_INT(oa.status, ends ? CFX_OK : CFX_STOP_LIMIT);
        CHECK_INT(oa.record, ends ? -1 : 2);
        CHECK_INT(oa.iterations, ends ? 4 : budget);
        CHECK_INT(s1, ends ? 0 + 1 + 2 + 3 : -1);
    }
    if (f)
        fclose(f);
    prog_free(p);
}

static void test_names(void)
{
    CHECK_STR(cfx_status_name(CFX_OK), "ok");
    CHECK_STR(cfx_status_name(CFX_STOP_ASSERT), "assert");
    CHECK_STR(cfx_status_name(CFX_STOP_INDEX), "index");
    CHECK_STR(cfx_status_name(CFX_STOP_DIVIDE), "divide");
    CHECK_STR(cfx_status_name(CFX_STOP_VALUE), "value");
    CHECK_STR(cfx_status_name(CFX_STOP_LIMIT), "limit");
    CHECK_STR(cfx_status_name(CFX_STOP_CANCELLED), "cancelled");
    CHECK_STR(cfx_status_name(CFX_ERROR), "error");
    CHECK_STR(cfx_dtype_name(CFX_F32), "f32");
    CHECK_STR(cfx_dtype_name(CFX_BOOL), "bool");
    CHECK_INT(cfx_dtype_size(CFX_F64), 8);
    CHECK_INT(cfx_dtype_size(CFX_I32), 4);
    CHECK_INT(cfx_dtype_size(CFX_BOOL), 1);
    cfx_type t = {CFX_F32, 2, {2, 3, 0, 0}};
    char buf[64];
    CHECK_STR(cfx_type_str(&t, buf, sizeof buf), "f32[2, 3]");
    CHECK_INT(cfx_type_count(&t), 6);
    cfx_type s = {CFX_I32, 0, {0, 0, 0, 0}};
    CHECK_STR(cfx_type_str(&s, buf, sizeof buf), "i32");
    CHECK_INT(cfx_type_count(&s), 1);
    /* a buffer too small: cut, ending in "...", never a shorter type that reads as valid */
    char tiny[4], small[8], two[2];
    cfx_type_str(&t, tiny, sizeof tiny);
    CHECK_STR(tiny, "...");
    cfx_type_str(&t, small, sizeof small);
    CHECK_STR(small, "f32[...");
    cfx_type_str(&t, two, sizeof two);
    CHECK_STR(two, ".");
    cfx_type v4 = {CFX_F32, 1, {4, 0, 0, 0}};
    char exact[7]; /* "f32[4]" and its terminator */
    CHECK_STR(cfx_type_str(&v4, exact, sizeof exact), "f32[4]");
    CHECK_STR(cfx_type_str(&v4, tiny, sizeof tiny), "...");
    /* the largest type fits CFX_TYPE_STR_MAX */
    cfx_type big = {CFX_BOOL, 5, {INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN}};
    char most[CFX_TYPE_STR_MAX];
    CHECK_STR(cfx_type_str(&big, most, sizeof most),
              "bool[-9223372036854775808, -9223372036854775808, -9223372036854775808, "
              "-9223372036854775808, -9223372036854775808]");
    /* no type: rank -1, as cfx_input_type gives for an index out of range */
    cfx_type none = {CFX_F32, -1, {0, 0, 0, 0}};
    CHECK_STR(cfx_type_str(&none, buf, sizeof buf), "(no type)");
    CHECK_INT(cfx_type_count(&none), 0);
    CHECK_STR(cfx_status_name((cfx_status)99), "unknown");
    CHECK_STR(cfx_backend_name((cfx_backend)99), "unknown");
    CHECK_STR(cfx_dtype_name((cfx_dtype)99), "unknown");
    const char *names[] = {"auto", "cpu", "cuda-host", "cuda-graph", "cuda-persistent"};
    for (int i = 0; i < 5; i++) {
        cfx_backend be = CFX_BACKEND_CPU;
        CHECK_INT(cfx_backend_parse(names[i], &be), 0);
        CHECK_INT(be, i);
        CHECK_STR(cfx_backend_name((cfx_backend)i), names[i]);
    }
    cfx_backend be;
    CHECK_INT(cfx_backend_parse("gpu", &be), -1);
}

int main(void)
{
    test_counter();
    test_branch();
    test_list_records();
    test_tensors();
    test_stops();
    test_cancel();
    test_print_call_trace();
    test_fusion_matches();
    test_names();
    return test_finish("test_cpu");
}
