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

#include "cfx.h"
#include "hd.h"
#include "kernels.h" /* k_bshape */

#ifdef __cplusplus
extern "C" {
#endif

#define CFX_MAX_RANK 5
#define CFX_ARENA_ALIGN 16
#if CFX_MAX_RANK != K_MAX_RANK || CFX_MAX_RANK != CFX_TYPE_MAX_RANK
#error "the program, the kernels and the public type must agree on the rank"
#endif
/* Largest tensor and arena a program may describe: keeps every byte offset, element
 * count and index product inside int64 and every element index inside int32 for the
 * kernels. A larger shape is a compile error, not an overflow. */
#define CFX_MAX_ELEMENTS ((int64_t)1 << 30)
#define CFX_MAX_ARENA ((int64_t)1 << 34)

/* ---- record kinds ------------------------------------------------------------------
 * X(NAME, FIELDS, COMMENT). FIELDS gives the role of operands a, b, c, d in order:
 *   s  slot index            t  jump target (record index)
 *   m  string offset (-1: none)   k  offset into the int table
 *   n  an integer immediate  -  unused (must be 0)
 * The enum, the names in `cfx dump` and the property table used by the validator are
 * all generated from this one list. `op` and `dtype` are extra fields of the record. */
#define CFX_RECORDS(X) \
    X(HALT,         "----", "end of the graph: copy results out, status ok") \
    X(JUMP,         "t---", "pc = a") \
    X(JUMP_FALSE,   "st--", "if not slot a (one-element bool) then pc = b") \
    X(JUMP_TRUE,    "st--", "if slot a (one-element bool) then pc = b") \
    X(SWITCH,       "skn-", "pc = table[b + v] for v = slot a (i32) in [0, c), else table[b + c] (default)") \
    X(TICK,         "----", "one loop iteration: stop with limit when the budget is spent, with cancelled on a cancel") \
    X(ASSERT,       "sm--", "stop with status assert and message b unless slot a (one-element bool)") \
    X(PRINT,        "sm--", "print slot a, with label b (-1: none), in program order") \
    X(CHECK_INDEX,  "snmn", "stop with status index unless -b <= slot a < b; c names the indexed tensor, d its dimension indexed (0: rows)") \
    X(CHECK_DIVIDE, "s---", "stop with status divide if any element of slot a (an integer divisor) is 0") \
    X(CHECK_STEP,   "smnn", "stop with status value if slot a (an integer) is 0: a range step (b = -1), or the flag of variable b, assigned only inside the loop at line d (c = 0), or whose value is read where it may be None (c = 1)") \
    X(UNARY,        "ss--", "slot a = op(slot b), elementwise") \
    X(BINARY,       "sss-", "slot a = op(slot b, slot c), elementwise; a one-element b or c is broadcast") \
    X(REDUCE,       "ss--", "slot a (one element) = op over all of slot b") \
    X(DOT,          "sss-", "slot a (one element) = sum of slot b * slot c (1-D, same length)") \
    X(MATMUL,       "sss-", "slot a = slot b @ slot c: [m,k]@[k,n] or [m,k]@[k]") \
    X(TRANSPOSE,    "ss--", "slot a = transpose of slot b (2-D)") \
    X(FILL,         "ss--", "every element of slot a = slot b (one element, same dtype)") \
    X(IOTA,         "s---", "slot a = 0, 1, 2, ... over its elements in row-major order") \
    X(COPY,         "ss--", "slot a = slot b (same dtype and element count)") \
    X(CAST,         "ss--", "slot a = slot b converted to slot a's dtype") \
    X(WHERE,        "ssss", "slot a = slot b ? slot c : slot d, elementwise; one-element operands broadcast") \
    X(GET_ROW,      "sss-", "slot a = row slot c of slot b (index already checked; negative counts from the end)") \
    X(SET_ROW,      "sss-", "row slot b of slot a = slot c (index already checked; negative counts from the end)") \
    X(CALL,         "nknn", "application kernel a on slots table[b .. b+c): the first d are arguments, the rest results") \
    X(GET_BOX,      "ssk-", "slot a = the box of slot b given by table[c .. c + 2 * rank(b)): per dimension a start slot (-1: 0) and a length (-1: one element at an index, negative counts from the end; n: n elements from the start); the starts were checked, rec_box clamps them into b") \
    X(SET_BOX,      "ssk-", "the box of slot a given by table[c ..] (as GET_BOX's, over a's dimensions) = slot b") \
    X(BROADCAST,    "ss--", "slot a = slot b repeated to a's shape by numpy's rules (b's dims, aligned at the right, are 1 or a's)") \
    X(CHECK_BOUND,  "ssmn", "stop with status index unless k_bound_ok(d, slot a, slot b) (one-element integers); d says what is checked: 0 an index a of a list of length b, 1 an append at length a to capacity b, 2 a pop (a = -1) from length b, 3 a slice start a below b, 4 a stack of length a = capacity b; c names the list or tensor") \
    X(GET_ITEM,     "ssss", "slot a = item slot c of list slot b of length slot d (k_item_index: negative counts from the length, clamped into b)") \
    X(SET_ITEM,     "ssss", "item slot b of list slot a of length slot d = slot c (k_item_index: negative counts from the length, clamped into a)")

enum rec_kind {
#define X(name, fields, comment) REC_##name,
    CFX_RECORDS(X)
#undef X
    REC_COUNT
};

/* One record, 28 bytes, the same bytes on host and device. */
typedef struct cfx_record {
    uint8_t kind;   /* enum rec_kind */
    uint8_t op;     /* enum op_kind for UNARY, BINARY, REDUCE; 0 elsewhere */
    uint8_t dtype;  /* cfx_dtype of the operands (for UNARY, BINARY, REDUCE: of slot b) */
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

/* bytes per element of a cfx_dtype: f32 f64 i32 i64 bool */
CFX_HD int dtype_size(int dt)
{
    return dt == CFX_F64 || dt == CFX_I64 ? 8 : dt == CFX_BOOL ? 1 : 4;
}

CFX_HD int64_t slot_bytes(const cfx_slot *s)
{
    return s->count * (int64_t)dtype_size(s->dtype);
}

/* Successors of record pc in the control-flow graph (a stop is no successor), for the
 * validator and the scheduler. Returns their number; `out` has room for `cap` (a SWITCH
 * has c + 1: a caller asks with cap big enough, or walks the table itself). */
CFX_HD int32_t rec_successors(const cfx_prog *p, int32_t pc, int32_t *out, int32_t cap)
{
    const cfx_record *r = &p->records[pc];
    int32_t n = 0;
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
