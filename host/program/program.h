/* program.h: the compiled program, the contract between the compiler and every executor.
 *
 * A program is a flat array of fixed-size records plus a table of slots. Records hold no
 * pointers: operands are slot indices, jump targets are absolute record indices, strings
 * and tables are offsets into side arrays. Every variable, temporary and constant is a
 * slot: a dtype, a shape and a byte offset into one arena. A program therefore means the
 * same thing on the host and on the device after a plain copy of its arrays.
 *
 * This header is shared by host/ and device/ and must stay plain C (no host-only types).
 */
#ifndef CFX_PROGRAM_H
#define CFX_PROGRAM_H

#include <stdint.h>
#include <stddef.h>

#include "host/cfx.h"
#include "kernels/hd.h"
#include "kernels/cfxlimits.h"
#include "kernels/kernels.h" /* k_bshape */

#ifdef __cplusplus
extern "C" {
#endif

#define CFX_ARENA_ALIGN 16
#if CFX_MAX_RANK != K_MAX_RANK || CFX_MAX_RANK != CFX_TYPE_MAX_RANK
#error "the program, the kernels and the public type must agree on the rank"
#endif
/* the limits of a tensor and an arena: kernels/cfxlimits.h */

/* ---- record kinds ------------------------------------------------------------------
 * One row per kind: every property of a kind is a column here, and everything else (the
 * enum, the names in `cfx dump`, the validator's field table, the queries below that the
 * executors, the plan and the cost sheet ask) is generated from this one list. A new kind is
 * a new row, its emission in lower.c, and the cases the build then asks for: each switch over
 * every kind is on `(enum rec_kind)` without a `default:` (-Wswitch-enum names a missing kind),
 * and each switch that keeps a `default:` asserts the count (grep REC_COUNT_IS). Code
 * generation is opted into in host/gen/cgen.h (CGEN_KINDS).
 *
 * FIELDS: the role of operands a, b, c, d in order (rec_roles):
 *   s  slot index            t  jump target (record index)
 *   m  string offset (-1: none)   k  offset into the int table
 *   n  an integer immediate  -  unused (must be 0)
 * FAMILY: enum rec_family (rec_family): CONTROL moves pc; CHECK may stop the run (TICK: the
 *   loop budget and a cancel); PRINT; CALL an application kernel (its slots are in the
 *   table); the rest write slot a (rec_writes_a): ELEMENTWISE, REDUCE (one element from all
 *   of b; REDUCE_AXIS one per run of b along an axis), PRODUCT, MOVE (rows, boxes, items, transposes, permutes, broadcasts).
 * DOMAIN: what a split record's work items are (rec_domain, the plan's sched_domain):
 *   a b c  the elements of that slot operand    r  the elements of one row of slot a
 *   t      MATMUL's output tiles, of every product of a batch (rows for one matrix-vector
 *          product)    -  not split
 * ACCESS: how each of a, b, c, d is touched when the blocks share the work (rec_access):
 *   R  read whole by every block       r  read by the block's own share of the domain where
 *                                         its count is the domain's, whole otherwise
 *   w  written by the block's own share    W  written whole or in a part at any place
 *   m  MATMUL's output: own share for a split matrix-vector product, whole otherwise
 *   -  no slot touched, or only a one-element one (GET_BOX's starts are in the table)
 * COMMENT: what the record does.
 *
 *  NAME          FIELDS FAMILY      DOMAIN ACCESS COMMENT */
#define CFX_RECORDS(X) \
    X(HALT,        "----", CONTROL,     '-', "----", "end of the graph: copy results out, status ok") \
    X(JUMP,        "t---", CONTROL,     '-', "----", "pc = a") \
    X(JUMP_FALSE,  "st--", CONTROL,     '-', "R---", "if not slot a (one-element bool) then pc = b") \
    X(JUMP_TRUE,   "st--", CONTROL,     '-', "R---", "if slot a (one-element bool) then pc = b") \
    X(SWITCH,      "skn-", CONTROL,     '-', "R---", "pc = table[b + v] for v = slot a (i32) in [0, c), else table[b + c] (default)") \
    X(TICK,        "----", CHECK,       '-', "----", "one loop iteration: stop with limit when the budget is spent, with cancelled on a cancel") \
    X(ASSERT,      "sm--", CHECK,       '-', "R---", "stop with status assert and message b unless slot a (one-element bool)") \
    X(PRINT,       "sm--", PRINT,       '-', "R---", "print slot a, with label b (-1: none), in program order") \
    X(CHECK_INDEX, "snmn", CHECK,       '-', "R---", "stop with status index unless -b <= slot a < b; c names the indexed tensor, d its dimension indexed (0: rows)") \
    X(CHECK_DIVIDE,"s---", CHECK,       '-', "R---", "stop with status divide if any element of slot a (an integer divisor) is 0") \
    X(CHECK_STEP,  "smnn", CHECK,       '-', "R---", "stop with status value if slot a (an integer) is 0: a range step (b = -1), or the flag of variable b, assigned only inside the loop at line d (c = 0), or whose value is read where it may be None (c = 1)") \
    X(UNARY,       "ss--", ELEMENTWISE, 'a', "wr--", "slot a = op(slot b), elementwise") \
    X(BINARY,      "sss-", ELEMENTWISE, 'a', "wrr-", "slot a = op(slot b, slot c), elementwise; a one-element b or c is broadcast") \
    X(REDUCE,      "ss--", REDUCE,      'b', "wr--", "slot a (one element) = op over all of slot b") \
    X(DOT,         "sss-", REDUCE,      'b', "wrr-", "slot a (one element) = sum of slot b * slot c (1-D, same length)") \
    X(MATMUL,      "sssn", PRODUCT,     't', "mRR-", "slot a = slot b @ slot c: [m,k]@[k,n] or [m,k]@[k] (d = 0); d = B >= 1: B products back to back, b's B [m,k] (or one shared), c's B [k,n] (or one shared, or a shared [k]): rec_matmul") \
    X(TRANSPOSE,   "ss--", MOVE,        'a', "wR--", "slot a = transpose of slot b (2-D)") \
    X(FILL,        "ss--", ELEMENTWISE, 'a', "wr--", "every element of slot a = slot b (one element, same dtype)") \
    X(IOTA,        "s---", ELEMENTWISE, 'a', "w---", "slot a = 0, 1, 2, ... over its elements in row-major order") \
    X(COPY,        "ss--", ELEMENTWISE, 'a', "wr--", "slot a = slot b (same dtype and element count)") \
    X(CAST,        "ss--", ELEMENTWISE, 'a', "wr--", "slot a = slot b converted to slot a's dtype") \
    X(WHERE,       "ssss", ELEMENTWISE, 'a', "wrrr", "slot a = slot b ? slot c : slot d, elementwise; one-element operands broadcast") \
    X(GET_ROW,     "sss-", MOVE,        'a', "wRR-", "slot a = row slot c of slot b (index already checked; negative counts from the end)") \
    X(SET_ROW,     "sss-", MOVE,        'r', "WRr-", "row slot b of slot a = slot c (index already checked; negative counts from the end)") \
    X(CALL,        "nknn", CALL,        '-', "----", "application kernel a on slots table[b .. b+c): the first d are arguments, the rest results") \
    X(GET_BOX,     "ssk-", MOVE,        'a', "wR--", "slot a = the box of slot b given by table[c .. c + 2 * rank(b)): per dimension a start slot (-1: 0) and a length (-1: one element at an index, negative counts from the end; n: n elements from the start); the starts were checked, rec_box clamps them into b") \
    X(SET_BOX,     "ssk-", MOVE,        'b', "Wr--", "the box of slot a given by table[c ..] (as GET_BOX's, over a's dimensions) = slot b") \
    X(BROADCAST,   "ss--", MOVE,        'a', "wR--", "slot a = slot b repeated to a's shape by numpy's rules (b's dims, aligned at the right, are 1 or a's)") \
    X(CHECK_BOUND, "ssmn", CHECK,       '-', "RR--", "stop with status index unless k_bound_ok(d, slot a, slot b) (one-element integers); d says what is checked: 0 an index a of a list of length b, 1 an append at length a to capacity b, 2 a pop (a = -1) from length b, 3 a slice start a below b, 4 a stack of length a = capacity b; c names the list or tensor") \
    X(GET_ITEM,    "ssss", MOVE,        'a', "wRRR", "slot a = item slot c of list slot b of length slot d (k_item_index: negative counts from the length, clamped into b)") \
    X(SET_ITEM,    "ssss", MOVE,        'c', "WRrR", "item slot b of list slot a of length slot d = slot c (k_item_index: negative counts from the length, clamped into a)") \
    X(GATHER,      "sssn", MOVE,        'a', "wRR-", "slot a = numpy's take(slot b, slot c, axis=d): b's slices along axis d at the indices in slot c (i32 or i64; negative counts from the end, clamped into b: checked before by CHECK_INDEX of their least and greatest)") \
    X(REDUCE_AXIS, "ssn-", REDUCE,      'a', "wR--", "slot a = op over axis c of slot b, as REDUCE over each run of b along the axis, in order (rec_reduce_axis); a's elements are b's with that axis dropped (or kept as 1)") \
    X(PERMUTE,     "ssn-", MOVE,        'a', "wR--", "slot a = numpy's transpose(slot b, perm): a's dimension k is b's dimension perm[k], perm packed in c, 3 bits a dimension from the lowest (rec_perm_axis); same dtype, a's dims b's permuted (rec_pshape)")

enum rec_kind {
#define X(name, fields, family, domain, access, comment) REC_##name,
    CFX_RECORDS(X)
#undef X
};
/* The number of kinds: not a member of enum rec_kind, so that a switch over every kind need
 * not name it. */
enum {
    REC_COUNT = 0
#define X(name, fields, family, domain, access, comment) + 1
    CFX_RECORDS(X)
#undef X
};

/* A switch over record kinds that keeps a `default:` (the kinds it does not name share one
 * answer) asserts the count it was written for: a new kind stops the build there until the
 * default is seen to fit it, and the count is raised. Every other per-kind switch is on
 * `(enum rec_kind)` without a default, so that -Wswitch-enum names a missing kind. */
#ifdef __cplusplus
#define REC_COUNT_IS(n) static_assert(REC_COUNT == (n), "a new record kind: does this switch's default fit it?")
#else
#define REC_COUNT_IS(n) _Static_assert(REC_COUNT == (n), "a new record kind: does this switch's default fit it?")
#endif

/* The families of record kinds (FAMILY above); those from ELEMENTWISE on write slot a. */
enum rec_family {
    REC_FAM_CONTROL,
    REC_FAM_CHECK,
    REC_FAM_PRINT,
    REC_FAM_CALL,
    REC_FAM_ELEMENTWISE,
    REC_FAM_REDUCE,
    REC_FAM_PRODUCT,
    REC_FAM_MOVE,
};

/* The columns of CFX_RECORDS for a kind, on the host and on the device ("----", -1 and '-'
 * for a kind out of the list, which prog_validate refuses). */
CFX_HD const char *rec_roles(int kind)
{
    switch (kind) {
#define X(name, fields, family, domain, access, comment) case REC_##name: return fields;
        CFX_RECORDS(X)
#undef X
    }
    return "----";
}

CFX_HD int rec_family(int kind)
{
    switch (kind) {
#define X(name, fields, family, domain, access, comment) case REC_##name: return REC_FAM_##family;
        CFX_RECORDS(X)
#undef X
    }
    return -1;
}

CFX_HD char rec_domain(int kind)
{
    switch (kind) {
#define X(name, fields, family, domain, access, comment) case REC_##name: return domain;
        CFX_RECORDS(X)
#undef X
    }
    return '-';
}

CFX_HD const char *rec_access(int kind)
{
    switch (kind) {
#define X(name, fields, family, domain, access, comment) case REC_##name: return access;
        CFX_RECORDS(X)
#undef X
    }
    return "----";
}

/* Does a record of this kind compute slot a (FAMILY ELEMENTWISE, REDUCE, PRODUCT, MOVE)? */
CFX_HD int rec_writes_a(int kind)
{
    return rec_family(kind) >= REC_FAM_ELEMENTWISE;
}

/* One record, 28 bytes, the same bytes on host and device. */
typedef struct cfx_record {
    uint8_t kind;   /* enum rec_kind */
    uint8_t op;     /* enum op_kind for UNARY, BINARY, REDUCE, REDUCE_AXIS; 0 elsewhere */
    uint8_t dtype;  /* cfx_dtype of the operands (for UNARY, BINARY, REDUCE, REDUCE_AXIS: of slot b) */
    uint8_t flags;  /* REC_F_* */
    int32_t a, b, c, d;
    int32_t line;   /* source position of the statement this record belongs to */
    int32_t col;
} cfx_record;

/* flags */
#define REC_F_SCALAR 1u /* every slot operand has one element: executors may take a fast path */

/* ---- slots ------------------------------------------------------------------------ */
enum slot_kind {
    SLOT_TEMP,   /* a temporary of the lowering */
    SLOT_VAR,    /* a named variable of the graph */
    SLOT_CONST,  /* a constant: its bytes are in the program's const image */
    SLOT_INPUT,  /* a graph parameter: filled from the caller's buffer before the run */
    SLOT_RESULT, /* a graph result: copied to the caller's buffer at HALT */
};

typedef struct cfx_slot {
    uint8_t dtype;  /* cfx_dtype */
    uint8_t rank;   /* 0 for a scalar */
    uint8_t kind;   /* enum slot_kind */
    uint8_t pad_;
    int32_t name;   /* string offset of the variable's name, -1 for temporaries */
    int32_t dims[CFX_MAX_RANK];
    int64_t count;  /* number of elements (1 for a scalar) */
    int64_t offset; /* byte offset into the arena, a multiple of CFX_ARENA_ALIGN */
} cfx_slot;

/* ---- the program ------------------------------------------------------------------- */
typedef struct cfx_prog {
    char *name;           /* the graph's name */
    char *file;           /* the source file's name, for positions */
    cfx_record *records;
    int32_t nrecords;
    cfx_slot *slots;
    int32_t nslots;
    int32_t *table;       /* switch targets and call operand lists */
    int32_t ntable;
    char *strings;        /* NUL-terminated strings back to back; offsets index this */
    int32_t nstrings;     /* bytes used */
    uint8_t *consts;      /* initial image of arena bytes [0, const_bytes) */
    int64_t const_bytes;
    int64_t arena_bytes;  /* total arena size; const slots lie below const_bytes */
    int32_t *inputs;      /* slot of each graph parameter, in declaration order */
    int32_t ninputs;
    int32_t *results;     /* slot of each graph result, in declaration order */
    int32_t nresults;
    int32_t *kernels;     /* string offset of each application kernel a CALL names */
    int32_t nkernels;
    /* How each kernel was registered (NULL: every one as a binary kernel, cfx_register_kernel):
     * its form (KERNEL_*) and, for a kernel registered by its source (cfx_register_source),
     * the string offset of that source, which the code generator inlines (-1: none). Set after
     * lowering by prog_set_kernel_source. */
    uint8_t *kernel_form;
    int32_t *kernel_source;
} cfx_prog;

/* kernel_form: a binary kernel (a CPU and a CUDA function), or a kernel given by its source,
 * over its results' elements [lo, hi) or computing all of them in one call (cfx_op_form). */
#define KERNEL_BINARY 0
#define KERNEL_ELEMENTS 1
#define KERNEL_WHOLE 2

/* The form of kernel k of p (KERNEL_BINARY where p says nothing). */
CFX_HD int prog_kernel_form(const cfx_prog *p, int32_t k)
{
    return p->kernel_form && k >= 0 && k < p->nkernels ? p->kernel_form[k] : KERNEL_BINARY;
}

/* properties generated from CFX_RECORDS */
extern const char *const rec_names[REC_COUNT];
extern const char *const rec_fields[REC_COUNT];

/* Does record r read the cancel flag before it starts: one that computes (rec_writes_a) over
 * CFX_CANCEL_CHECK_ELEMENTS or more, its result's or operand b's. Every executor asks the same. */
CFX_HD int rec_polls_cancel(const cfx_slot *slots, const cfx_record *r)
{
    if (rec_family(r->kind) < REC_FAM_ELEMENTWISE)
        return 0;
    return slots[r->a].count >= CFX_CANCEL_CHECK_ELEMENTS ||
           (rec_roles(r->kind)[1] == 's' && slots[r->b].count >= CFX_CANCEL_CHECK_ELEMENTS);
}

/* bytes per element of a cfx_dtype: f32 f64 i32 i64 bool */
CFX_HD int dtype_size(int dt)
{
    return dt == CFX_F64 || dt == CFX_I64 ? 8 : dt == CFX_BOOL ? 1 : 4;
}

CFX_HD int64_t slot_bytes(const cfx_slot *s)
{
    return s->count * (int64_t)dtype_size(s->dtype);
}

/* The shape of a REDUCE_AXIS record for k_reduce_axis: b seen as [outer, *n, *inner], reduced
 * along its middle dimension, axis c of b. */
CFX_HD void rec_reduce_axis(const cfx_slot *slots, const cfx_record *r, int64_t *n, int64_t *inner)
{
    const cfx_slot *b = &slots[r->b];
    *n = b->dims[r->c];
    *inner = 1;
    for (int k = r->c + 1; k < b->rank; k++)
        *inner *= b->dims[k];
}

/* Successors of record pc in the control-flow graph (a stop is no successor), for the
 * validator and the scheduler. Returns their number; `out` has room for `cap` (a SWITCH
 * has c + 1: a caller asks with cap big enough, or walks the table itself). */
CFX_HD int32_t rec_successors(const cfx_prog *p, int32_t pc, int32_t *out, int32_t cap)
{
    const cfx_record *r = &p->records[pc];
    int32_t n = 0;
    REC_COUNT_IS(34);
    switch (r->kind) {
    case REC_HALT:
        break;
    case REC_JUMP:
        out[n++] = r->a;
        break;
    case REC_JUMP_FALSE:
    case REC_JUMP_TRUE:
        out[n++] = pc + 1;
        out[n++] = r->b;
        break;
    case REC_SWITCH:
        for (int32_t k = 0; k <= r->c && n < cap; k++)
            out[n++] = p->table[r->b + k];
        break;
    default:
        out[n++] = pc + 1;
        break;
    }
    return n;
}

/* The slot operands of record r, in order: its slot fields (FIELDS 's', a to d), then a
 * CALL's operands table[b .. b + c). rec_slot_operands gives their number and
 * rec_slot_operand(p, r, k) operand k of them, for the walk over every slot a record names:
 *   for (int32_t k = 0, n = rec_slot_operands(p, r); k < n; k++) ... rec_slot_operand(p, r, k) */
CFX_HD int32_t rec_slot_operands(const cfx_prog *p, const cfx_record *r)
{
    const char *f = rec_roles(r->kind);
    int32_t n = r->kind == REC_CALL ? r->c : 0;
    for (int i = 0; i < 4; i++)
        n += f[i] == 's';
    (void)p;
    return n;
}

CFX_HD int32_t rec_slot_operand(const cfx_prog *p, const cfx_record *r, int32_t k)
{
    const char *f = rec_roles(r->kind);
    const int32_t ops[4] = {r->a, r->b, r->c, r->d};
    for (int i = 0; i < 4; i++)
        if (f[i] == 's' && k-- == 0)
            return ops[i];
    return p->table[r->b + k]; /* a CALL's */
}

/* The shapes of a BROADCAST record, for k_broadcast. */
CFX_HD k_bshape rec_bshape(const cfx_slot *dst, const cfx_slot *src)
{
    k_bshape sh;
    for (int d = 0; d < CFX_MAX_RANK; d++) {
        sh.dims[d] = dst->dims[d];
        sh.sdims[d] = src->dims[d];
    }
    sh.drank = dst->rank;
    sh.srank = src->rank;
    return sh;
}

/* The shape of a GATHER record for k_gather: *m indices into *n slices of *inner elements. */
CFX_HD void rec_gather(const cfx_slot *slots, const cfx_record *r, int64_t *m, int64_t *n, int64_t *inner)
{
    const cfx_slot *b = &slots[r->b];
    *m = slots[r->c].count;
    *n = b->dims[r->d];
    *inner = 1;
    for (int k = r->d + 1; k < b->rank; k++)
        *inner *= b->dims[k];
}

/* PERMUTE's permutation, packed in field c: result dimension k is source dimension
 * (c >> 3k) & 7. */
CFX_HD int rec_perm_axis(int32_t c, int k)
{
    return (int)((uint32_t)c >> (3 * k)) & 7;
}

/* The shape of a PERMUTE record for k_permute: the result's dims and, per result dimension,
 * the source's stride of the dimension it is. */
CFX_HD k_pshape rec_pshape(const cfx_slot *slots, const cfx_record *r)
{
    const cfx_slot *a = &slots[r->a], *b = &slots[r->b];
    int64_t st[CFX_MAX_RANK], s = 1;
    for (int k = b->rank - 1; k >= 0; k--) {
        st[k] = s;
        s *= b->dims[k];
    }
    k_pshape sh;
    sh.rank = a->rank;
    for (int k = 0; k < CFX_MAX_RANK; k++) {
        int j = rec_perm_axis(r->c, k);
        sh.dims[k] = k < a->rank ? a->dims[k] : 1;
        sh.stride[k] = k < a->rank && j < b->rank ? st[j] : 0;
    }
    return sh;
}

/* The shape of MATMUL record r: `batch` products a[m,n] = b[m,k] @ c[k,n], back to back in a (m * n
 * elements apart), b's sb and c's sc elements apart (0: one shared by all). A plain product (d = 0):
 * one, b [m, k], c [k, n] or the vector [k] (n = 1). A batched one (d = B >= 1): m and k are b's last
 * two dimensions (a b of one dimension is the row [1, k]), k and n c's (a c of one dimension is the
 * column [k, 1]); b holds B matrices or one (its count m * k), c likewise; a has B * m * n elements
 * (prog_validate checks all that). A batch whose c is shared and b is not is one product of B * m
 * rows (the same rows, in one call): what every executor runs. */
typedef struct rec_mm {
    int64_t batch, m, k, n, sb, sc;
} rec_mm;

CFX_HD rec_mm rec_matmul(const cfx_slot *slots, const cfx_record *r)
{
    const cfx_slot *b = &slots[r->b], *c = &slots[r->c];
    rec_mm g;
    if (r->d <= 0) {
        g.batch = 1;
        g.m = b->dims[0];
        g.k = b->dims[1];
        g.n = c->rank == 2 ? c->dims[1] : 1;
        g.sb = g.sc = 0;
        return g;
    }
    g.batch = r->d;
    g.m = b->rank >= 2 ? b->dims[b->rank - 2] : 1;
    g.k = b->rank >= 1 ? b->dims[b->rank - 1] : 1;
    g.n = c->rank >= 2 ? c->dims[c->rank - 1] : 1;
    g.sb = g.batch > 1 && b->count != g.m * g.k ? g.m * g.k : 0;
    g.sc = g.batch > 1 && c->count != g.k * g.n ? g.k * g.n : 0;
    if (g.sc == 0 && (g.sb != 0 || g.batch == 1)) { /* one product of batch * m rows */
        g.m *= g.batch;
        g.batch = 1;
        g.sb = 0;
    }
    return g;
}

/* The box of a GET_BOX or SET_BOX record over tensor slot t, from its table entries and the
 * values its start slots hold (0 where an entry names none). */
CFX_HD k_box rec_box(const int32_t *entries, const cfx_slot *t, const int64_t *starts)
{
    k_box b;
    b.rank = t->rank;
    for (int d = 0; d < CFX_MAX_RANK; d++) {
        b.dims[d] = d < t->rank ? t->dims[d] : 1;
        b.len[d] = d < t->rank ? entries[2 * d + 1] : 1;
        b.start[d] = d < t->rank ? k_box_start(starts[d], b.len[d], b.dims[d]) : 0;
    }
    return b;
}

/* ---- building a program (used by the lowering) ------------------------------------ *
 * The builder grows the arrays; every function returns the new index or -1 on overflow
 * of a limit, never aborts. Const slots are placed in the const image; other slots after
 * it, once prog_finish() knows the const size. */
typedef struct prog_builder prog_builder;

prog_builder *prog_begin(const char *file, const char *graph_name);
int32_t prog_emit(prog_builder *b, cfx_record r);                 /* returns the record index */
cfx_record *prog_record(prog_builder *b, int32_t index);          /* for patching jumps */
int32_t prog_here(const prog_builder *b);                         /* index of the next record */
int32_t prog_slot(prog_builder *b, cfx_dtype dt, int rank, const int32_t *dims,
                  enum slot_kind kind, const char *name);         /* name may be NULL */
int32_t prog_const(prog_builder *b, cfx_dtype dt, int rank, const int32_t *dims,
                   const void *data);                             /* data: count elements of dt */
/* The bytes of a constant prog_const made (its value final), NULL for any other slot (a constant
 * prog_slot made is filled by its maker later); valid until the next constant is added. */
const void *prog_const_value(const prog_builder *b, int32_t slot);
int32_t prog_string(prog_builder *b, const char *s);              /* interned */
int32_t prog_table(prog_builder *b, const int32_t *v, int32_t n); /* returns the offset */
int32_t *prog_table_at(prog_builder *b, int32_t offset);          /* for patching switch tables */
int32_t prog_kernel(prog_builder *b, const char *name);           /* kernel index, interned */
void prog_add_input(prog_builder *b, int32_t slot);
void prog_add_result(prog_builder *b, int32_t slot);
/* Lays out the arena and returns the program, or NULL (with a reason in err) when a
 * limit is exceeded. The builder is freed either way. */
cfx_prog *prog_finish(prog_builder *b, char *err, size_t errlen);
void prog_abandon(prog_builder *b);
void prog_free(cfx_prog *p);
/* Records that kernel k of a finished program was registered by its source: form (KERNEL_ELEMENTS
 * or KERNEL_WHOLE) and the source text, added to the strings. Returns 0, or -1 with the reason
 * in err (out of memory, a bad index). */
int prog_set_kernel_source(cfx_prog *p, int32_t k, int form, const char *source, char *err, size_t errlen);

/* Checks everything an executor trusts: targets in range, slots in range and inside the
 * arena, operand dtypes and shapes consistent with each record kind, strings and tables in
 * bounds, the last record is HALT. Returns 0, or -1 with a reason in err. */
int prog_validate(const cfx_prog *p, char *err, size_t errlen);

/* A readable listing, one record per line (`cfx dump`). */
struct strbuf;
void prog_dump(const cfx_prog *p, struct strbuf *out);

#ifdef __cplusplus
}
#endif
#endif
