/* test_program.c: the program builder, the validator's rejections (one corrupted copy of a
 * valid program per kind of bad field), and the dump of a tiny hand-built program compared
 * exactly with the format documented in host/program/dump.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/ops.h"
#include "host/program/program.h"
#include "host/util/strbuf.h"
#include "testutil.h"

static cfx_record rec(int kind, int op, int dtype, int flags, int a, int b, int c, int d, int line)
{
    cfx_record r;
    test_record(&r, kind, op, dtype, flags, a, b, c, d, line, 3);
    return r;
}

/* ---- the columns of the record list ---- */

/* The columns agree with the fields they name, and a few kinds have the properties the
 * executors' switches gave them before the columns existed (written out here by hand). */
static void test_record_columns(void)
{
    for (int k = 0; k < REC_COUNT; k++) {
        const char *f = rec_roles(k), *m = rec_access(k);
        char dom = rec_domain(k);
        CHECK(strlen(f) == 4 && strlen(m) == 4 && strcmp(f, rec_fields[k]) == 0);
        for (int i = 0; i < 4; i++)
            CHECK(m[i] == '-' || (f[i] == 's' && strchr("RrwWm", m[i]) != NULL));
        CHECK(strchr("abcrt-", dom) != NULL);
        if (dom == 'a' || dom == 'b' || dom == 'c')
            CHECK(f[dom - 'a'] == 's');
        /* a kind that writes slot a says how it writes it; no other writes a slot field */
        CHECK(rec_writes_a(k) == (strchr("wWm", m[0]) != NULL));
        for (int i = 1; i < 4; i++)
            CHECK(strchr("wWm", m[i]) == NULL);
        /* every split kind computes slot a; a control kind has a jump target or a table */
        CHECK(dom == '-' || rec_writes_a(k));
        CHECK((rec_family(k) == REC_FAM_CONTROL) == (k == REC_HALT || strchr(f, 't') != NULL || k == REC_SWITCH));
    }
    CHECK(rec_family(REC_COUNT) == -1 && strcmp(rec_roles(REC_COUNT), "----") == 0);
    CHECK(rec_family(REC_TICK) == REC_FAM_CHECK && rec_family(REC_PRINT) == REC_FAM_PRINT);
    CHECK(rec_family(REC_DOT) == REC_FAM_REDUCE && rec_family(REC_MATMUL) == REC_FAM_PRODUCT);
    CHECK(rec_family(REC_GET_ITEM) == REC_FAM_MOVE && rec_family(REC_WHERE) == REC_FAM_ELEMENTWISE);
    CHECK(!rec_writes_a(REC_CALL) && !rec_writes_a(REC_CHECK_BOUND) && rec_writes_a(REC_SET_ROW));
    CHECK(rec_domain(REC_SET_BOX) == 'b' && rec_domain(REC_SET_ITEM) == 'c' && rec_domain(REC_SET_ROW) == 'r');
    CHECK(rec_domain(REC_REDUCE) == 'b' && rec_domain(REC_MATMUL) == 't' && rec_domain(REC_CALL) == '-');
    CHECK(strcmp(rec_access(REC_SET_ITEM), "WRrR") == 0 && strcmp(rec_access(REC_GET_ROW), "wRR-") == 0);
    CHECK(strcmp(rec_access(REC_MATMUL), "mRR-") == 0 && strcmp(rec_access(REC_CHECK_BOUND), "RR--") == 0);

    /* the slot operands: slot fields in order, then a CALL's table */
    int32_t table[4] = {0, 7, 8, 9};
    cfx_prog p;
    memset(&p, 0, sizeof p);
    p.table = table;
    p.ntable = 4;
    cfx_record call = rec(REC_CALL, 0, 0, 0, 0, 1, 3, 1, 1);
    cfx_record where = rec(REC_WHERE, 0, CFX_F32, 0, 4, 5, 6, 2, 1);
    cfx_record box = rec(REC_GET_BOX, 0, CFX_F32, 0, 3, 1, 2, 0, 1);
    cfx_record bound = rec(REC_CHECK_INDEX, 0, CFX_I32, 0, 5, 4, -1, 0, 1);
    cfx_record jump = rec(REC_JUMP, 0, 0, 0, 2, 0, 0, 0, 1);
    CHECK(rec_slot_operands(&p, &call) == 3);
    CHECK(rec_slot_operand(&p, &call, 0) == 7 && rec_slot_operand(&p, &call, 2) == 9);
    CHECK(rec_slot_operands(&p, &where) == 4 && rec_slot_operand(&p, &where, 3) == 2);
    CHECK(rec_slot_operands(&p, &box) == 2 && rec_slot_operand(&p, &box, 1) == 1);
    CHECK(rec_slot_operands(&p, &bound) == 1 && rec_slot_operand(&p, &bound, 0) == 5);
    CHECK(rec_slot_operands(&p, &jump) == 0);
}

/* ---- the builder ---- */
static void test_builder(void)
{
    char err[256];
    prog_builder *b = prog_begin("b.cfx", "g");
    CHECK(b != NULL);
    int32_t s1 = prog_string(b, "hello"), s2 = prog_string(b, "world"), s3 = prog_string(b, "hello");
    CHECK_INT(s1, 0);
    CHECK_INT(s2, 6);
    CHECK_INT(s3, s1); /* interned */
    int32_t one = 1, two = 2;
    int32_t c1 = prog_const(b, CFX_I32, 0, NULL, &one);
    int32_t c2 = prog_const(b, CFX_I32, 0, NULL, &two);
    int32_t c3 = prog_const(b, CFX_I32, 0, NULL, &one);
    CHECK(c1 != c2);
    CHECK_INT(c3, c1); /* the same constant is one slot */
    int32_t dims[2] = {2, 3};
    int32_t v = prog_slot(b, CFX_F64, 2, dims, SLOT_VAR, "m");
    int32_t in = prog_slot(b, CFX_BOOL, 0, NULL, SLOT_INPUT, "flag");
    prog_add_input(b, in);
    CHECK_INT(prog_kernel(b, "k"), 0);
    CHECK_INT(prog_kernel(b, "j"), 1);
    CHECK_INT(prog_kernel(b, "k"), 0);
    int32_t t = prog_table(b, NULL, 3);
    CHECK_INT(t, 0);
    CHECK(prog_table_at(b, 2) != NULL);
    CHECK(prog_table_at(b, 3) == NULL);
    CHECK_INT(prog_here(b), 0);
    CHECK_INT(prog_emit(b, rec(REC_JUMP, 0, 0, 0, 1, 0, 0, 0, 1)), 0);
    CHECK_INT(prog_emit(b, rec(REC_HALT, 0, 0, 0, 0, 0, 0, 0, 2)), 1);
    prog_record(b, 0)->a = 1;
    CHECK(prog_record(b, 2) == NULL);
    cfx_prog *p = prog_finish(b, err, sizeof err);
    CHECK(p != NULL);
    if (!p)
        return;
    CHECK_INT(p->nrecords, 2);
    CHECK_INT(p->const_bytes, 32); /* two i32 constants, each at an aligned offset */
    CHECK_INT(p->slots[c1].offset, 0);
    CHECK_INT(p->slots[c2].offset, 16);
    CHECK_INT(p->slots[v].offset, 32);
    CHECK_INT(p->slots[v].count, 6);
    CHECK_INT(p->slots[in].offset, 32 + 48);
    CHECK_INT(p->arena_bytes, 32 + 48 + 16);
    CHECK_INT(*(int32_t *)(p->consts + p->slots[c2].offset), 2);
    CHECK_STR(p->strings + p->slots[v].name, "m");
    CHECK_STR(p->strings + p->kernels[1], "j");
    CHECK_STR(p->name, "g");
    CHECK_STR(p->file, "b.cfx");
    CHECK_INT(prog_validate(p, err, sizeof err), 0);
    prog_free(p);

    /* a dimension below 1 is refused, and prog_finish says why */
    b = prog_begin("b.cfx", "g");
    int32_t zero[1] = {0};
    CHECK_INT(prog_slot(b, CFX_F32, 1, zero, SLOT_VAR, "z"), -1);
    err[0] = '\0';
    CHECK(prog_finish(b, err, sizeof err) == NULL);
    CHECK(strstr(err, "dimension") != NULL);

    /* more elements than CFX_MAX_ELEMENTS in one tensor */
    b = prog_begin("b.cfx", "g");
    int32_t huge[2] = {1 << 16, 1 << 15};
    CHECK_INT(prog_slot(b, CFX_F32, 2, huge, SLOT_VAR, "h"), -1);
    CHECK(prog_finish(b, err, sizeof err) == NULL);

    /* an arena over CFX_MAX_ARENA: three tensors of 2^30 f64 elements (8 GiB each) */
    b = prog_begin("b.cfx", "g");
    int32_t big[1] = {1 << 30};
    for (int i = 0; i < 3; i++)
        CHECK(prog_slot(b, CFX_F64, 1, big, SLOT_TEMP, NULL) >= 0);
    prog_emit(b, rec(REC_HALT, 0, 0, 0, 0, 0, 0, 0, 1));
    err[0] = '\0';
    CHECK(prog_finish(b, err, sizeof err) == NULL);
    CHECK(strstr(err, "memory") != NULL);

    /* interning stays exact with many distinct constants and names (the sets grow) */
    b = prog_begin("b.cfx", "g");
    int ok = 1;
    for (int32_t i = 0; i < 20000 && ok; i++) {
        char name[32];
        snprintf(name, sizeof name, "v%d", i);
        ok = prog_const(b, CFX_I32, 0, NULL, &i) == i && prog_string(b, name) >= 0;
    }
    for (int32_t i = 0; i < 20000 && ok; i++) {
        char name[32];
        snprintf(name, sizeof name, "v%d", i);
        int32_t at = prog_string(b, name);
        ok = prog_const(b, CFX_I32, 0, NULL, &i) == i && at >= 0 && strcmp(name, "v0") != 0
                 ? at > 0
                 : at == 0;
    }
    CHECK(ok);
    int64_t wide = 5;
    CHECK(prog_const(b, CFX_I64, 0, NULL, &wide) == 20000); /* same bytes, other dtype: a new slot */
    prog_abandon(b);

    prog_abandon(prog_begin("x", "y"));
}

/* Interning is by hash: 100,000 distinct constants and names build in linear time. With a
 * linear search this is ~10^10 comparisons (minutes); with the sets it takes milliseconds,
 * so the 5 s bound only catches the quadratic kind of slowness, never a busy machine. The
 * results must be exactly those of the plain rule: a new constant is the next slot at the
 * next 16-aligned offset, a new string goes at the end of the string bytes, and asking again
 * gives the same index. */
static void test_interning_scales(void)
{
    enum { N = 100000 };
    clock_t start = clock();
    prog_builder *b = prog_begin("big.cfx", "g");
    CHECK(b != NULL);
    if (!b)
        return;
    int ok = 1;
    int64_t want_offset = 0; /* string bytes so far, counted here */
    for (int32_t i = 0; i < N && ok; i++) {
        char name[32];
        int len = snprintf(name, sizeof name, "name%d", i);
        ok = prog_const(b, CFX_I32, 0, NULL, &i) == i && prog_string(b, name) == want_offset;
        want_offset += len + 1;
    }
    want_offset = 0;
    for (int32_t i = 0; i < N && ok; i++) { /* again: the same slots and offsets, nothing new */
        char name[32];
        int len = snprintf(name, sizeof name, "name%d", i);
        ok = prog_const(b, CFX_I32, 0, NULL, &i) == i && prog_string(b, name) == want_offset;
        want_offset += len + 1;
    }
    CHECK(ok);
    prog_emit(b, rec(REC_HALT, 0, 0, 0, 0, 0, 0, 0, 1));
    char err[200] = "";
    cfx_prog *p = prog_finish(b, err, sizeof err);
    double seconds = (double)(clock() - start) / CLOCKS_PER_SEC;
    CHECK(p != NULL);
    if (p) {
        CHECK_INT(p->nslots, N);
        CHECK_INT(p->nstrings, want_offset);
        CHECK_INT(p->const_bytes, (int64_t)N * CFX_ARENA_ALIGN); /* one aligned cell each */
        CHECK_INT(p->slots[N - 1].offset, (int64_t)(N - 1) * CFX_ARENA_ALIGN);
        int32_t last;
        memcpy(&last, p->consts + p->slots[N - 1].offset, sizeof last);
        CHECK_INT(last, N - 1);
    }
    prog_free(p);
    printf("test_program: %d constants and %d names interned twice in %.3f s\n", N, N, seconds);
    CHECK(seconds < 5.0);
}

/* ---- a valid program that uses most record kinds, to corrupt one field at a time ----
 * slots: see the enum; the records are listed in base_program(). */
enum {
    S_X,     /* x: f32[4] input */
    S_I,     /* i: i32 input */
    S_OUT,   /* out: f32 result */
    S_M,     /* m: f32[2, 2] var */
    S_V,     /* v: f32[2] var */
    S_MV,    /* f32[2] temp */
    S_MT,    /* f32[2, 2] temp */
    S_COND,  /* bool temp */
    S_ONE,   /* i32 const 1 */
    S_ROW,   /* f32 temp (a row of x) */
    S_SEL,   /* i32 var */
    S_Q,     /* i32 temp */
    S_CIDX,  /* i32 const 2 */
    S_ROWM,  /* f32[2] temp (a row of m) */
    S_COUNT
};

static cfx_prog *base_program(void)
{
    char err[256];
    prog_builder *b = prog_begin("v.cfx", "valid");
    int32_t d4[1] = {4}, d22[2] = {2, 2}, d2[1] = {2};
    int32_t one = 1, two = 2;
    prog_slot(b, CFX_F32, 1, d4, SLOT_INPUT, "x");
    prog_slot(b, CFX_I32, 0, NULL, SLOT_INPUT, "i");
    prog_slot(b, CFX_F32, 0, NULL, SLOT_RESULT, "out");
    prog_slot(b, CFX_F32, 2, d22, SLOT_VAR, "m");
    prog_slot(b, CFX_F32, 1, d2, SLOT_VAR, "v");
    prog_slot(b, CFX_F32, 1, d2, SLOT_TEMP, NULL);
    prog_slot(b, CFX_F32, 2, d22, SLOT_TEMP, NULL);
    prog_slot(b, CFX_BOOL, 0, NULL, SLOT_TEMP, NULL);
    prog_const(b, CFX_I32, 0, NULL, &one);
    prog_slot(b, CFX_F32, 0, NULL, SLOT_TEMP, NULL);
    prog_slot(b, CFX_I32, 0, NULL, SLOT_VAR, "sel");
    prog_slot(b, CFX_I32, 0, NULL, SLOT_TEMP, NULL);
    prog_const(b, CFX_I32, 0, NULL, &two);
    prog_slot(b, CFX_F32, 1, d2, SLOT_TEMP, NULL);
    prog_add_input(b, S_X);
    prog_add_input(b, S_I);
    prog_add_result(b, S_OUT);
    int32_t msg = prog_string(b, "i must be small");
    int32_t xname = prog_string(b, "x");
    int32_t kern = prog_kernel(b, "scale");
    int32_t targets[3] = {13, 14, 14};
    int32_t tab = prog_table(b, targets, 3);
    int32_t callops[2] = {S_V, S_MV};
    int32_t calltab = prog_table(b, callops, 2);
    const int SC = REC_F_SCALAR;
    /* 0 */ prog_emit(b, rec(REC_CHECK_INDEX, 0, CFX_I32, SC, S_I, 4, xname, 0, 1));
    /* 1 */ prog_emit(b, rec(REC_GET_ROW, 0, CFX_F32, 0, S_ROW, S_X, S_I, 0, 1));
    /* 2 */ prog_emit(b, rec(REC_TICK, 0, 0, 0, 0, 0, 0, 0, 2));
    /* 3 */ prog_emit(b, rec(REC_BINARY, OP_LT, CFX_I32, SC, S_COND, S_SEL, S_I, 0, 2));
    /* 4 */ prog_emit(b, rec(REC_JUMP_FALSE, 0, CFX_BOOL, SC, S_COND, 7, 0, 0, 2));
    /* 5 */ prog_emit(b, rec(REC_BINARY, OP_ADD, CFX_I32, SC, S_SEL, S_SEL, S_ONE, 0, 3));
    /* 6 */ prog_emit(b, rec(REC_JUMP, 0, 0, 0, 2, 0, 0, 0, 2));
    /* 7 */ prog_emit(b, rec(REC_ASSERT, 0, CFX_BOOL, SC, S_COND, msg, 0, 0, 4));
    /* 8 */ prog_emit(b, rec(REC_MATMUL, 0, CFX_F32, 0, S_MV, S_M, S_V, 0, 5));
    /* 9 */ prog_emit(b, rec(REC_TRANSPOSE, 0, CFX_F32, 0, S_MT, S_M, 0, 0, 6));
    /* 10 */ prog_emit(b, rec(REC_BINARY, OP_DIV, CFX_I32, SC, S_Q, S_SEL, S_ONE, 0, 7));
    /* 11 */ prog_emit(b, rec(REC_GET_ROW, 0, CFX_F32, 0, S_ROWM, S_M, S_ONE, 0, 8));
    /* 12 */ prog_emit(b, rec(REC_SWITCH, 0, CFX_I32, SC, S_SEL, tab, 2, 0, 9));
    /* 13 */ prog_emit(b, rec(REC_CALL, 0, 0, 0, kern, calltab, 2, 1, 10));
    /* 14 */ prog_emit(b, rec(REC_REDUCE, OP_SUM, CFX_F32, 0, S_OUT, S_MV, 0, 0, 11));
    /* 15 */ prog_emit(b, rec(REC_PRINT, 0, CFX_F32, SC, S_OUT, -1, 0, 0, 12));
    /* 16 */ prog_emit(b, rec(REC_HALT, 0, 0, 0, 0, 0, 0, 0, 13));
    cfx_prog *p = prog_finish(b, err, sizeof err);
    if (!p)
        fprintf(stderr, "base_program: %s\n", err);
    return p;
}

/* A deep copy, so that each corruption starts from the valid program. */
static void *dup_bytes(const void *src, size_t n)
{
    void *d = malloc(n ? n : 1);
    if (d && n)
        memcpy(d, src, n);
    return d;
}

static cfx_prog *clone(const cfx_prog *p)
{
    cfx_prog *c = malloc(sizeof *c);
    *c = *p;
    c->name = dup_bytes(p->name, strlen(p->name) + 1);
    c->file = dup_bytes(p->file, strlen(p->file) + 1);
    c->records = dup_bytes(p->records, sizeof *p->records * (size_t)p->nrecords);
    c->slots = dup_bytes(p->slots, sizeof *p->slots * (size_t)p->nslots);
    c->table = dup_bytes(p->table, sizeof *p->table * (size_t)p->ntable);
    c->strings = dup_bytes(p->strings, (size_t)p->nstrings);
    c->consts = dup_bytes(p->consts, (size_t)p->const_bytes);
    c->inputs = dup_bytes(p->inputs, sizeof(int32_t) * (size_t)p->ninputs);
    c->results = dup_bytes(p->results, sizeof(int32_t) * (size_t)p->nresults);
    c->kernels = dup_bytes(p->kernels, sizeof(int32_t) * (size_t)p->nkernels);
    return c;
}

typedef void (*corrupt_fn)(cfx_prog *p);

static int expect_rejected(const cfx_prog *base, corrupt_fn f, const char *what, const char *needle)
{
    char err[256] = "";
    cfx_prog *p = clone(base);
    f(p);
    int rc = prog_validate(p, err, sizeof err);
    int ok = rc == -1 && strlen(err) > 0 && (!needle || strstr(err, needle));
    if (!ok)
        fprintf(stderr, "  corruption '%s' was not rejected as expected (rc %d, err \"%s\")\n", what,
                rc, err);
    CHECK(ok);
    prog_free(p);
    return ok;
}

/* each corruption, named by what it breaks */
static void c_kind(cfx_prog *p) { p->records[2].kind = REC_COUNT; }
static void c_flags(cfx_prog *p) { p->records[2].flags = 0x80; }
static void c_op_on_jump(cfx_prog *p) { p->records[6].op = OP_ADD; }
static void c_op_range(cfx_prog *p) { p->records[5].op = OP_COUNT; }
static void c_op_class(cfx_prog *p) { p->records[5].op = OP_SUM; }
static void c_op_dtype(cfx_prog *p) { p->records[14].op = OP_ALL; }
static void c_unused_field(cfx_prog *p) { p->records[16].a = 1; }
static void c_unused_d(cfx_prog *p) { p->records[5].d = 3; }
static void c_slot_high(cfx_prog *p) { p->records[5].c = p->nslots; }
static void c_slot_negative(cfx_prog *p) { p->records[5].a = -1; }
static void c_target_high(cfx_prog *p) { p->records[6].a = p->nrecords; }
static void c_target_negative(cfx_prog *p) { p->records[4].b = -1; }
static void c_string(cfx_prog *p) { p->records[7].b = p->nstrings; }
static void c_string_negative(cfx_prog *p) { p->records[7].b = -2; }
static void c_switch_range(cfx_prog *p) { p->records[12].c = p->ntable; }
static void c_switch_count(cfx_prog *p) { p->records[12].c = -1; }
static void c_switch_target(cfx_prog *p) { p->table[1] = p->nrecords + 5; }
static void c_switch_value(cfx_prog *p) { p->records[12].a = S_COND; p->records[12].dtype = CFX_BOOL; }
static void c_call_kernel(cfx_prog *p) { p->records[13].a = 1; }
static void c_call_args(cfx_prog *p) { p->records[13].d = 3; }
static void c_call_table(cfx_prog *p) { p->records[13].b = p->ntable - 1; }
static void c_call_slot(cfx_prog *p) { p->table[3] = 999; }
static void c_call_const(cfx_prog *p) { p->table[4] = S_ONE; }
static void c_misaligned(cfx_prog *p) { p->slots[S_M].offset += 4; }
static void c_outside_arena(cfx_prog *p) { p->slots[S_X].offset = p->arena_bytes; }
static void c_negative_offset(cfx_prog *p) { p->slots[S_Q].offset = -16; }
static void c_count(cfx_prog *p) { p->slots[S_X].count = 5; }
static void c_dim_past_rank(cfx_prog *p) { p->slots[S_I].dims[1] = 3; }
static void c_zero_dim(cfx_prog *p) { p->slots[S_X].dims[0] = 0; p->slots[S_X].count = 0; }
static void c_rank(cfx_prog *p) { p->slots[S_X].rank = CFX_MAX_RANK + 1; }
static void c_dtype(cfx_prog *p) { p->slots[S_Q].dtype = 9; }
static void c_slot_kind(cfx_prog *p) { p->slots[S_Q].kind = 17; }
static void c_slot_name(cfx_prog *p) { p->slots[S_M].name = p->nstrings + 3; }
static void c_overlap(cfx_prog *p) { p->slots[S_Q].offset = p->slots[S_SEL].offset; }
static void c_const_outside(cfx_prog *p) { p->slots[S_ONE].offset = p->const_bytes; }
static void c_var_in_consts(cfx_prog *p) { p->slots[S_Q].offset = 0; }
static void c_write_const(cfx_prog *p) { p->records[5].a = S_ONE; }
static void c_binary_dtypes(cfx_prog *p) { p->records[5].c = S_OUT; }
static void c_binary_counts(cfx_prog *p) { p->records[5].a = S_V; p->records[5].flags = 0; }
static void c_compare_result(cfx_prog *p) { p->records[3].a = S_Q; }
static void c_dtype_field(cfx_prog *p) { p->records[5].dtype = CFX_I64; }
static void c_dtype_field_jump(cfx_prog *p) { p->records[6].dtype = CFX_BOOL; }
static void c_scalar_flag(cfx_prog *p) { p->records[14].flags = REC_F_SCALAR; }
static void c_condition_type(cfx_prog *p) { p->records[4].a = S_Q; p->records[4].dtype = CFX_I32; }
static void c_assert_type(cfx_prog *p) { p->records[7].a = S_OUT; p->records[7].dtype = CFX_F32; }
static void c_matmul_shape(cfx_prog *p) { p->records[8].a = S_MT; }
static void c_matmul_alias(cfx_prog *p) { p->records[8].a = S_V; p->records[8].c = S_V; }
/* record 8 as a batched MATMUL (d = 2): m [2, 2] @ v [2], both shared by the 2 products, into x f32[4] */
static void c_matmul_batch(cfx_prog *p) { p->records[8] = rec(REC_MATMUL, 0, CFX_F32, 0, S_X, S_M, S_V, 2, 5); }
static void c_matmul_batch_one(cfx_prog *p) { p->records[8].d = 1; } /* the plain product as a batch of 1 */
static void c_matmul_batch_negative(cfx_prog *p) { p->records[8].d = -1; }
static void c_matmul_batch_count(cfx_prog *p) { c_matmul_batch(p); p->records[8].d = 3; } /* 3 * [2, 1] is not x's 4 */
static void c_matmul_batch_k(cfx_prog *p) { c_matmul_batch(p); p->records[8].b = S_X; p->records[8].a = S_MT; } /* [4] @ [2] */
static void c_matmul_batch_result(cfx_prog *p) { c_matmul_batch(p); p->records[8].c = S_MT; } /* 2 * [2, 2] is 8 */
static void c_transpose_shape(cfx_prog *p) { p->records[9].b = S_MV; }
static void c_reduce_result(cfx_prog *p) { p->records[14].a = S_MV; }
static void c_get_row_shape(cfx_prog *p) { p->records[1].a = S_MV; }
static void c_get_row_index_type(cfx_prog *p) { p->records[1].c = S_OUT; }
static void c_unchecked_index(cfx_prog *p) { p->records[0].b = 3; }
static void c_index_dimension(cfx_prog *p) { p->records[0].d = CFX_MAX_RANK; }
static void c_check_removed(cfx_prog *p)
{
    p->records[0] = rec(REC_CHECK_STEP, 0, CFX_I32, 0, S_I, -1, 0, 0, 1);
}
static void c_index_killed(cfx_prog *p)
{
    /* i is written between its check and the row read */
    p->records[0] = rec(REC_CHECK_INDEX, 0, CFX_I32, REC_F_SCALAR, S_I, 4, -1, 0, 1);
    p->records[1] = rec(REC_BINARY, OP_ADD, CFX_I32, REC_F_SCALAR, S_I, S_I, S_ONE, 0, 1);
    p->records[2] = rec(REC_GET_ROW, 0, CFX_F32, 0, S_ROW, S_X, S_I, 0, 1);
    p->records[6].a = 3; /* the loop now starts at record 3, after a TICK that is gone */
    p->records[3] = rec(REC_TICK, 0, 0, 0, 0, 0, 0, 0, 2);
    p->records[4] = rec(REC_JUMP, 0, 0, 0, 5, 0, 0, 0, 2);
    p->records[5] = rec(REC_JUMP, 0, 0, 0, 7, 0, 0, 0, 2);
}
static void c_const_index(cfx_prog *p) { p->records[11].c = S_CIDX; }
/* record 11 as a GATHER: m's row 1 (a take of one index along axis 0 is GET_ROW's row) */
static void c_gather(cfx_prog *p) { p->records[11] = rec(REC_GATHER, 0, CFX_F32, 0, S_ROWM, S_M, S_ONE, 0, 8); }
static void c_gather_shape(cfx_prog *p) { c_gather(p); p->records[11].a = S_ROW; }
static void c_gather_index_type(cfx_prog *p) { c_gather(p); p->records[11].c = S_OUT; }
static void c_gather_axis(cfx_prog *p) { c_gather(p); p->records[11].d = 2; }
/* record 11 as a REDUCE_AXIS: m's column sums (sum along axis 0 of f32[2, 2] is f32[2]) */
static void c_reduce_axis(cfx_prog *p) { p->records[11] = rec(REC_REDUCE_AXIS, OP_SUM, CFX_F32, 0, S_ROWM, S_M, 0, 0, 8); }
static void c_reduce_axis_max1(cfx_prog *p) { c_reduce_axis(p); p->records[11].op = OP_RMAX; p->records[11].c = 1; }
static void c_reduce_axis_shape(cfx_prog *p) { c_reduce_axis(p); p->records[11].a = S_ROW; }
static void c_reduce_axis_axis(cfx_prog *p) { c_reduce_axis(p); p->records[11].c = 2; }
static void c_reduce_axis_negative(cfx_prog *p) { c_reduce_axis(p); p->records[11].c = -1; }
static void c_reduce_axis_dtype(cfx_prog *p) { c_reduce_axis(p); p->records[11].op = OP_ARGMAX; }
static void c_reduce_axis_field(cfx_prog *p) { c_reduce_axis(p); p->records[11].d = 1; }
/* record 9 as a PERMUTE: m's transpose by axes (1, 0), packed 3 bits an axis */
static void c_permute(cfx_prog *p) { p->records[9] = rec(REC_PERMUTE, 0, CFX_F32, 0, S_MT, S_M, 1, 0, 6); }
static void c_permute_identity(cfx_prog *p) { c_permute(p); p->records[9].c = 0 | 1 << 3; }
static void c_permute_repeat(cfx_prog *p) { c_permute(p); p->records[9].c = 0; } /* (0, 0) */
static void c_permute_range(cfx_prog *p) { c_permute(p); p->records[9].c = 2; } /* (2, 0) */
static void c_permute_extra(cfx_prog *p) { c_permute(p); p->records[9].c = 1 | 2 << 6; } /* (1, 0, 2) */
static void c_permute_negative(cfx_prog *p) { c_permute(p); p->records[9].c = -1; }
static void c_permute_rank(cfx_prog *p) { c_permute(p); p->records[9].a = S_ROWM; }
static void c_permute_dims(cfx_prog *p) { c_permute(p); p->slots[S_MT].dims[0] = 4; p->slots[S_MT].dims[1] = 1; }
static void c_permute_alias(cfx_prog *p) { c_permute(p); p->records[9].a = S_M; }
static void c_permute_dtype(cfx_prog *p) { c_permute(p); p->slots[S_MT].dtype = CFX_I32; p->records[9].dtype = CFX_I32; }
static void c_permute_field(cfx_prog *p) { c_permute(p); p->records[9].d = 1; }
static void c_last_not_halt(cfx_prog *p) { p->records[16] = rec(REC_JUMP, 0, 0, 0, 15, 0, 0, 0, 1); }
static void c_loop_without_tick(cfx_prog *p) { p->records[6].a = 3; }
static void c_strings_unterminated(cfx_prog *p) { p->strings[p->nstrings - 1] = 'x'; }
static void c_input_missing(cfx_prog *p) { p->ninputs = 1; }
static void c_input_kind(cfx_prog *p) { p->inputs[1] = S_Q; }
static void c_input_twice(cfx_prog *p) { p->inputs[1] = p->inputs[0]; }
static void c_result_range(cfx_prog *p) { p->results[0] = -1; }
static void c_arena(cfx_prog *p) { p->arena_bytes = CFX_MAX_ARENA + 16; }
static void c_const_bytes(cfx_prog *p) { p->const_bytes = p->arena_bytes + 16; }
static void c_no_records(cfx_prog *p) { p->nrecords = 0; }
static void c_kernel_name(cfx_prog *p) { p->kernels[0] = -5; }

static void test_validator(void)
{
    char err[256];
    cfx_prog *base = base_program();
    CHECK(base != NULL);
    if (!base)
        return;
    int rc = prog_validate(base, err, sizeof err);
    CHECK_INT(rc, 0);
    if (rc != 0) {
        fprintf(stderr, "the base program is invalid: %s\n", err);
        prog_free(base);
        return;
    }
    /* the message names the record and its kind */
    expect_rejected(base, c_slot_high, "slot out of range", "record 5 (BINARY)");
    expect_rejected(base, c_kind, "unknown record kind", NULL);
    expect_rejected(base, c_flags, "unknown flag", NULL);
    expect_rejected(base, c_op_on_jump, "op on a JUMP", NULL);
    expect_rejected(base, c_op_range, "op out of range", NULL);
    expect_rejected(base, c_op_class, "reduction op in BINARY", NULL);
    expect_rejected(base, c_op_dtype, "all over f32", NULL);
    expect_rejected(base, c_unused_field, "unused field of HALT", NULL);
    expect_rejected(base, c_unused_d, "unused field d of BINARY", NULL);
    expect_rejected(base, c_index_dimension, "CHECK_INDEX of a dimension past the rank", "dimension 5");
    expect_rejected(base, c_slot_negative, "negative slot", NULL);
    expect_rejected(base, c_target_high, "jump past the end", NULL);
    expect_rejected(base, c_target_negative, "negative jump target", NULL);
    expect_rejected(base, c_string, "string offset past the end", NULL);
    expect_rejected(base, c_string_negative, "string offset -2", NULL);
    expect_rejected(base, c_switch_range, "switch table range", NULL);
    expect_rejected(base, c_switch_count, "switch count -1", NULL);
    expect_rejected(base, c_switch_target, "switch target", NULL);
    expect_rejected(base, c_switch_value, "switch on a bool", NULL);
    expect_rejected(base, c_call_kernel, "kernel index", NULL);
    expect_rejected(base, c_call_args, "argument count past the operands", NULL);
    expect_rejected(base, c_call_table, "call operands past the table", NULL);
    expect_rejected(base, c_call_slot, "call operand slot", NULL);
    expect_rejected(base, c_call_const, "call writes a constant", NULL);
    expect_rejected(base, c_misaligned, "misaligned slot", NULL);
    expect_rejected(base, c_outside_arena, "slot outside the arena", NULL);
    expect_rejected(base, c_negative_offset, "negative offset", NULL);
    expect_rejected(base, c_count, "count inconsistent with dims", NULL);
    expect_rejected(base, c_dim_past_rank, "dimension past the rank", NULL);
    expect_rejected(base, c_zero_dim, "zero dimension", NULL);
    expect_rejected(base, c_rank, "rank over the maximum", NULL);
    expect_rejected(base, c_dtype, "unknown dtype", NULL);
    expect_rejected(base, c_slot_kind, "unknown slot kind", NULL);
    expect_rejected(base, c_slot_name, "slot name offset", NULL);
    expect_rejected(base, c_overlap, "overlapping slots", NULL);
    expect_rejected(base, c_const_outside, "constant outside the image", NULL);
    expect_rejected(base, c_var_in_consts, "variable inside the image", NULL);
    expect_rejected(base, c_write_const, "write to a constant", NULL);
    expect_rejected(base, c_binary_dtypes, "operands of two dtypes", NULL);
    expect_rejected(base, c_binary_counts, "result count", NULL);
    expect_rejected(base, c_compare_result, "comparison writing i32", NULL);
    expect_rejected(base, c_dtype_field, "dtype field", NULL);
    expect_rejected(base, c_dtype_field_jump, "dtype field of a JUMP", NULL);
    expect_rejected(base, c_scalar_flag, "scalar flag on a tensor record", NULL);
    expect_rejected(base, c_condition_type, "condition of type i32", NULL);
    expect_rejected(base, c_assert_type, "assert on f32", NULL);
    expect_rejected(base, c_matmul_shape, "matmul result shape", NULL);
    expect_rejected(base, c_matmul_alias, "matmul writing its operand", NULL);
    {
        /* a batched MATMUL (d = B >= 1): the counts rec_matmul reads */
        cfx_prog *g = clone(base);
        c_matmul_batch(g);
        CHECK_INT(prog_validate(g, err, sizeof err), 0);
        rec_mm mm = rec_matmul(g->slots, &g->records[8]);
        CHECK(mm.batch == 2 && mm.m == 2 && mm.k == 2 && mm.n == 1 && mm.sb == 0 && mm.sc == 0);
        prog_free(g);
        g = clone(base);
        c_matmul_batch_one(g);
        CHECK_INT(prog_validate(g, err, sizeof err), 0);
        mm = rec_matmul(g->slots, &g->records[8]);
        CHECK(mm.batch == 1 && mm.m == 2 && mm.k == 2 && mm.n == 1);
        prog_free(g);
        expect_rejected(base, c_matmul_batch_negative, "matmul of a negative batch", "batch count -1 is negative");
        expect_rejected(base, c_matmul_batch_count, "batched matmul result of the wrong count",
                        "result holds 4 elements, not 3 products [2, 1]");
        expect_rejected(base, c_matmul_batch_k, "batched matmul of mismatched k", "batched matmul needs");
        expect_rejected(base, c_matmul_batch_result, "batched matmul result of a shared [2, 2] right",
                        "result holds 4 elements, not 2 products [2, 2]");
    }
    expect_rejected(base, c_transpose_shape, "transpose of a vector", NULL);
    expect_rejected(base, c_reduce_result, "reduction into a tensor", NULL);
    expect_rejected(base, c_get_row_shape, "row of the wrong shape", NULL);
    expect_rejected(base, c_get_row_index_type, "row index of type f32", NULL);
    expect_rejected(base, c_unchecked_index, "index checked against the wrong row count", "not checked");
    expect_rejected(base, c_check_removed, "index never checked", "not checked");
    expect_rejected(base, c_index_killed, "index written after its check", "not checked");
    expect_rejected(base, c_const_index, "constant index out of range", "constant row index");
    {
        /* GATHER: the result's shape is b's with the axis replaced by the indices' shape */
        cfx_prog *g = clone(base);
        c_gather(g);
        CHECK_INT(prog_validate(g, err, sizeof err), 0);
        prog_free(g);
        expect_rejected(base, c_gather_shape, "gather result of the wrong shape", "gather operands");
        expect_rejected(base, c_gather_index_type, "gather of f32 indices", "gather operands");
        expect_rejected(base, c_gather_axis, "gather along an axis past the rank", "gather operands");
    }
    {
        /* REDUCE_AXIS: the result's shape is b's without axis c, its dtype the reduction's */
        cfx_prog *g = clone(base);
        c_reduce_axis(g);
        CHECK_INT(prog_validate(g, err, sizeof err), 0);
        prog_free(g);
        g = clone(base);
        c_reduce_axis_max1(g);
        CHECK_INT(prog_validate(g, err, sizeof err), 0);
        prog_free(g);
        expect_rejected(base, c_reduce_axis_shape, "reduction along an axis of the wrong shape",
                        "not the operand's without axis 0");
        expect_rejected(base, c_reduce_axis_axis, "reduction along an axis past the rank",
                        "reduction axis 2 is out of range for a tensor of rank 2");
        expect_rejected(base, c_reduce_axis_negative, "reduction along a negative axis", "axis -1 is out of range");
        expect_rejected(base, c_reduce_axis_dtype, "argmax along an axis into f32", "along an axis on these operands");
        expect_rejected(base, c_reduce_axis_field, "reduction along an axis with field d set", "unused field d");
    }
    {
        /* PERMUTE: a's dims are b's permuted by the axes packed in c, same dtype, a not b */
        cfx_prog *g = clone(base);
        c_permute(g);
        CHECK_INT(prog_validate(g, err, sizeof err), 0);
        prog_free(g);
        g = clone(base);
        c_permute_identity(g);
        CHECK_INT(prog_validate(g, err, sizeof err), 0);
        prog_free(g);
        expect_rejected(base, c_permute_repeat, "permute by (0, 0)", "are not a permutation of 2 dimensions");
        expect_rejected(base, c_permute_range, "permute by (2, 0)", "are not a permutation of 2 dimensions");
        expect_rejected(base, c_permute_extra, "permute by three axes of a rank-2 tensor",
                        "name more dimensions than its operand's 2");
        expect_rejected(base, c_permute_negative, "permute by a negative field", "name more dimensions");
        expect_rejected(base, c_permute_rank, "permute into a rank-1 result", "has rank 1, its operand rank 2");
        expect_rejected(base, c_permute_dims, "permute into [4, 1] from [2, 2]",
                        "result dimension 0 is 4, not its operand's dimension 1 (2)");
        expect_rejected(base, c_permute_alias, "permute writing its operand", "cannot write its operand");
        expect_rejected(base, c_permute_dtype, "permute into i32 from f32", "must have its operand's dtype");
        expect_rejected(base, c_permute_field, "permute with field d set", "unused field d");
    }
    expect_rejected(base, c_last_not_halt, "last record not HALT", NULL);
    expect_rejected(base, c_loop_without_tick, "loop without TICK", "TICK");
    expect_rejected(base, c_strings_unterminated, "strings not terminated", NULL);
    expect_rejected(base, c_input_missing, "input slot not listed", NULL);
    expect_rejected(base, c_input_kind, "input list names a temporary", NULL);
    expect_rejected(base, c_input_twice, "input listed twice", NULL);
    expect_rejected(base, c_result_range, "result slot -1", NULL);
    expect_rejected(base, c_arena, "arena over the limit", NULL);
    expect_rejected(base, c_const_bytes, "const image larger than the arena", NULL);
    expect_rejected(base, c_no_records, "no records", NULL);
    expect_rejected(base, c_kernel_name, "kernel name offset", NULL);
    CHECK_INT(prog_validate(NULL, err, sizeof err), -1);
    prog_free(base);
}

/* An index checked on one path only: the row read after the join is rejected; checked on
 * both paths, it is accepted. */
static void test_index_paths(void)
{
    char err[256];
    for (int both = 0; both < 2; both++) {
        prog_builder *b = prog_begin("p.cfx", "paths");
        int32_t d3[1] = {3};
        int32_t x = prog_slot(b, CFX_I64, 1, d3, SLOT_INPUT, "x");
        int32_t i = prog_slot(b, CFX_I64, 0, NULL, SLOT_INPUT, "i");
        int32_t c = prog_slot(b, CFX_BOOL, 0, NULL, SLOT_INPUT, "c");
        int32_t r = prog_slot(b, CFX_I64, 0, NULL, SLOT_RESULT, "r");
        prog_add_input(b, x);
        prog_add_input(b, i);
        prog_add_input(b, c);
        prog_add_result(b, r);
        prog_emit(b, rec(REC_JUMP_FALSE, 0, CFX_BOOL, 1, c, 3, 0, 0, 1));
        prog_emit(b, rec(REC_CHECK_INDEX, 0, CFX_I64, 1, i, 3, -1, 0, 2));
        prog_emit(b, rec(REC_JUMP, 0, 0, 0, 4, 0, 0, 0, 2));
        if (both)
            prog_emit(b, rec(REC_CHECK_INDEX, 0, CFX_I64, 1, i, 3, -1, 0, 3));
        else
            prog_emit(b, rec(REC_CHECK_STEP, 0, CFX_I64, 1, i, -1, 0, 0, 3));
        prog_emit(b, rec(REC_GET_ROW, 0, CFX_I64, 0, r, x, i, 0, 4));
        prog_emit(b, rec(REC_HALT, 0, 0, 0, 0, 0, 0, 0, 5));
        cfx_prog *p = prog_finish(b, err, sizeof err);
        CHECK(p != NULL);
        CHECK_INT(prog_validate(p, err, sizeof err), both ? 0 : -1);
        prog_free(p);
    }
}

/* Finishes b, which must make a valid program, and compares its dump with `want`. */
static void expect_dump(prog_builder *b, const char *want)
{
    char err[256];
    cfx_prog *p = prog_finish(b, err, sizeof err);
    CHECK(p != NULL);
    if (!p)
        return;
    CHECK_INT(prog_validate(p, err, sizeof err), 0);
    strbuf sb = {0};
    prog_dump(p, &sb);
    CHECK_STR(sb_str(&sb), want);
    sb_free(&sb);
    prog_free(p);
}

/* ---- the dump ---- */
static void test_dump(void)
{
    prog_builder *b = prog_begin("d.cfx", "tiny");
    int32_t d3[1] = {3}, d22[2] = {2, 2};
    int32_t n = prog_slot(b, CFX_I32, 0, NULL, SLOT_INPUT, "n");
    int32_t s = prog_slot(b, CFX_F32, 0, NULL, SLOT_RESULT, "s");
    int32_t c = prog_slot(b, CFX_BOOL, 0, NULL, SLOT_TEMP, NULL);
    int32_t seven = 7;
    int32_t k7 = prog_const(b, CFX_I32, 0, NULL, &seven);
    float fv[3] = {1.5f, 0.1f, -2.0f};
    int32_t kv = prog_const(b, CFX_F32, 1, d3, fv);
    uint8_t bm[4] = {1, 0, 0, 1};
    int32_t kb = prog_const(b, CFX_BOOL, 2, d22, bm);
    int32_t t = prog_slot(b, CFX_F32, 1, d3, SLOT_TEMP, NULL);
    prog_add_input(b, n);
    prog_add_result(b, s);
    int32_t msg = prog_string(b, "n is \"big\"");
    int32_t targets[2] = {3, 4};
    int32_t tab = prog_table(b, targets, 2);
    prog_emit(b, rec(REC_BINARY, OP_LT, CFX_I32, 1, c, n, k7, 0, 2));
    prog_emit(b, rec(REC_ASSERT, 0, CFX_BOOL, 1, c, msg, 0, 0, 2));
    prog_emit(b, rec(REC_SWITCH, 0, CFX_I32, 1, n, tab, 1, 0, 3));
    prog_emit(b, rec(REC_UNARY, OP_EXP, CFX_F32, 0, t, kv, 0, 0, 4));
    prog_emit(b, rec(REC_REDUCE, OP_RMAX, CFX_F32, 0, s, t, 0, 0, 5));
    prog_emit(b, rec(REC_HALT, 0, 0, 0, 0, 0, 0, 0, 6));
    (void)kb;
    expect_dump(b,
        "graph tiny: 6 records, 7 slots, arena 112 bytes (48 of constants)\n"
        "slots:\n"
        "  s0    n        i32        input  @48\n"
        "  s1    s        f32        result @64\n"
        "  s2    -        bool       temp   @80\n"
        "  s3    -        i32        const  @0 = 7\n"
        "  s4    -        f32[3]     const  @16 = [1.5, 0.1, -2]\n"
        "  s5    -        bool[2, 2] const  @32 = [[true, false], [false, true]]\n"
        "  s6    -        f32[3]     temp   @96\n"
        "records:\n"
        "     0  BINARY       lt s2 s0 s3                  ; 2:3\n"
        "     1  ASSERT       s2 \"n is \\\"big\\\"\"            ; 2:3\n"
        "     2  SWITCH       s0 k0 1 [->3 default ->4]    ; 3:3\n"
        "     3  UNARY        exp s6 s4                    ; 4:3\n"
        "     4  REDUCE       max s1 s6                    ; 5:3\n"
        "     5  HALT                                      ; 6:3\n");
}

/* CALL, PRINT without a label, the kernels line and a 17-element constant (cut at 16) */
static void test_dump_call(void)
{
    prog_builder *b = prog_begin("c.cfx", "calls");
    int32_t d17[1] = {17};
    int64_t big[17];
    for (int i = 0; i < 17; i++)
        big[i] = i - 1;
    int32_t x = prog_slot(b, CFX_F64, 0, NULL, SLOT_INPUT, "x");
    int32_t y = prog_slot(b, CFX_F64, 0, NULL, SLOT_RESULT, "y");
    int32_t k = prog_const(b, CFX_I64, 1, d17, big);
    prog_add_input(b, x);
    prog_add_result(b, y);
    int32_t kern = prog_kernel(b, "twice");
    int32_t ops[3] = {x, k, y};
    int32_t tab = prog_table(b, ops, 3);
    prog_emit(b, rec(REC_CALL, 0, 0, 0, kern, tab, 3, 2, 7));
    prog_emit(b, rec(REC_PRINT, 0, CFX_F64, 1, y, -1, 0, 0, 8));
    prog_emit(b, rec(REC_HALT, 0, 0, 0, 0, 0, 0, 0, 9));
    expect_dump(b,
        "graph calls: 3 records, 3 slots, arena 176 bytes (144 of constants)\n"
        "kernels: twice\n"
        "slots:\n"
        "  s0    x        f64        input  @144\n"
        "  s1    y        f64        result @160\n" /* every slot starts 16-aligned */
        "  s2    -        i64[17]    const  @0 = [-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, ...]\n"
        "records:\n"
        "     0  CALL         0 k0 3 2 [twice: s0 s2 -> s1] ; 7:3\n"
        "     1  PRINT        s1 -                         ; 8:3\n"
        "     2  HALT                                      ; 9:3\n");
}

int main(void)
{
    test_builder();
    test_interning_scales();
    test_validator();
    test_index_paths();
    test_dump();
    test_dump_call();
    test_record_columns();
    return test_finish("test_program");
}
