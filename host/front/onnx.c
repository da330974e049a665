/* onnx.c: ONNX models imported as .cfx text (onnx.h; the op table is in docs/onnx.md).
 *
 * One pass over the model's nodes in order (ONNX lists them topologically). Each value the
 * graph computes is an `ival`: its ONNX name, its type (every shape is fixed here), and either
 * the cfx variable that holds it at run time or its data, when it is known at import (an
 * initializer, a Constant, or a node whose inputs are all known and which folds: shape
 * arithmetic above all). A known value that run-time code reads becomes a module constant.
 * Subgraphs (If's branches, Loop's and Scan's bodies) open a scope in which the enclosing
 * values stay visible by name, and their statements are written inside the cfx block that
 * runs them. Errors leave through one longjmp to onnx_import_model, with every allocation on
 * the importer's list, as Lua's errors unwind to its protected call.
 *
 * The sections, in order: the importer's own services (errors and memory ... folding at import,
 * then the helpers ops compose one another with); the ops by family, each an op_ function of
 * the node (casts; shapes; gathers and scatters; arithmetic and reductions; bitwise; uint64;
 * activations and normalizations; Conv and the pools; images; quantization; attention;
 * recurrences; losses; signal; ai.onnx.ml); sequences and optionals; control flow; the dispatch
 * from an op type to its function; and last the model, where onnx_import_model begins. */
/* realpath, for external data (POSIX's XSI part) */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#include "onnx.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/runtime/npy.h"
#include "host/util/strbuf.h"
#include "host/runtime/value.h"

#ifndef CFX_HAVE_ONNX

int onnx_import_model(const char *path, const void *bytes, size_t len,
                      const cfx_input_shape *shapes, int nshapes, const char *data_dir,
                      const char *data_dir_text, onnx_import *out, char **err)
{
    memset(out, 0, sizeof *out);
    const char *msg = "cannot import ONNX models: cfx was built without protobuf-c; install it "
                      "(apt-get install protobuf-c-compiler libprotobuf-c-dev libonnx-dev) and "
                      "configure the build again\n";
    size_t n = strlen(path ? path : "model.onnx") + strlen(msg) + 4;
    *err = malloc(n);
    if (*err)
        snprintf(*err, n, "%s: %s", path ? path : "model.onnx", msg);
    return -1;
}

void onnx_import_free(onnx_import *im)
{
    (void)im;
}

#else

#include "onnx.pb-c.h"
#include "kernels/cfxlimits.h"
#include "kernels/elementwise.h"


typedef struct ival {
    const char *name; /* the ONNX name */
    const char *id;   /* the cfx variable or constant holding it; NULL until needed */
    cfx_type ty;
    void *data;       /* known at import: cfx_type_count(ty) elements of ty.dtype */
    int prev;         /* the value this one shadows (same name, outer scope), or -1 */
    /* a one-element integer known as sym + off, sym a scalar expression of run time (a loop's
     * counter, say): a Slice from it to it plus a constant has a length known at import */
    const char *sym;
    int64_t off;
    const char *narrow; /* an int64 that is the cast of this i32 variable (ArgMax's) */
    const char *elem;   /* a one-element value reshaped from this scalar variable */
    const char *dot_a, *dot_b; /* a product of two vectors of one length: a ReduceSum of it is dot(a, b) */
    int half;           /* an f32 that is ONNX's float16 (HALF_F16) or bfloat16 (HALF_BF16): its
                         * values are that type's, each node that computes one rounds it; or an
                         * i32 that is ONNX's int8, uint8, int16 or uint16, an i64 that is its
                         * uint32 (HALF_I8 ... HALF_U32, narrow()), each node wrapping it; or
                         * an i64 holding uint64's bits (HALF_U64: no wrap, ops taken by name,
                         * u64_op()) */
    int seq, opt;       /* a sequence (a cfx list of items of type ty), an optional: SEQ_*, OPT_* */
    int64_t cap, slen;  /* a sequence's capacity, and its length where known at import (else -1) */
    const char *has;    /* an optional sequence that may be None: the bool variable saying it is not */
    struct ival **items; /* a sequence held item by item (SEQ_ITEMS): its slen items, each a value */
} ival;

enum { HALF_NONE, HALF_F16, HALF_BF16, HALF_F8E4M3FN, HALF_F8E4M3FNUZ, HALF_F8E5M2, HALF_F8E5M2FNUZ, HALF_F4E2M1,
       HALF_F8E8M0, HALF_I8, HALF_U8, HALF_I16, HALF_U16, HALF_U32, HALF_U64, HALF_I4, HALF_U4, HALF_I2, HALF_U2 };
static const char *const half_types[] = {"", "float16", "bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2",
                                         "float8e5m2fnuz", "float4e2m1", "float8e8m0", "int8", "uint8", "int16",
                                         "uint16", "uint32", "uint64", "int4", "uint4", "int2", "uint2"};
static const char *const half_round[] = {"", "round_f16", "round_bf16", "round_f8e4m3fn", "round_f8e4m3fnuz",
                                         "round_f8e5m2", "round_f8e5m2fnuz", "round_f4e2m1", "round_f8e8m0"};

/* A narrow integer type (held in i32, uint32 in i64; uint64 in i64 as its bits), not a half type */
static int narrow(int half)
{
    return half >= HALF_I8;
}

/* A string-keyed map to int with open addressing; -1 marks a key bound to nothing. */
typedef struct smap {
    const char **keys;
    int *vals;
    size_t cap, n;
} smap;

typedef struct imp {
    jmp_buf jb;
    char *msg;
    const char *model;    /* its name in messages */
    char *dir;            /* the model's folder, for external data; NULL: none allowed */
    Onnx__ModelProto *mp;
    void **allocs;
    size_t nallocs, capallocs;
    ival **vals;          /* every value bound, each in memory of its own: callers keep pointers
                           * to them while more are bound */
    int nvals, capvals;
    smap names;           /* ONNX name -> newest ival */
    smap ids;             /* cfx identifiers taken */
    strbuf consts, body, head;
    strbuf *held;         /* bodies written apart (a loop's, while its prologue is written) */
    int nheld, capheld;
    strbuf **sbs;         /* the ops' texts built across calls that may fail (new_sb): freed at
                           * the end, an error's included */
    int nsbs, capsbs;
    int indent;
    const char *note;     /* the current node's comment, ending each line written for it */
    const Onnx__NodeProto *node; /* for messages */
    int node_half;        /* the half type the current node says its results have (Cast's 'to', a
                           * Constant's tensor), or -1: that of its first real input */
    int node_rounded;     /* the current node rounded its results to their half type itself */
    int nlines;           /* lines written so far */
    int64_t opset;        /* of the default domain where the current node is */
    const Onnx__NodeProto *caller; /* the node whose function is being inlined, for ref_attr_name */
    int depth;
    int counter;
    const char *data_dir, *data_dir_text;
    onnx_constant *table;
    int ntable, captable;
    const cfx_input_shape *shapes;
    int nshapes;
    int use_values;       /* fix the inputs whose values the caller gave (a second try) */
    const char **in_names, **res_names; /* the main graph's, for the result */
    int nin, nres;
    const char **known_names; /* the main graph's inputs of 0 elements, known at import */
    cfx_type *known_types;
    int nknown;
    const char **kres_names;  /* and its outputs of 0 elements, known at import */
    cfx_type *kres_types;
    int nkres;
    /* values a subgraph gives back that its nodes may compute straight into the variable the
     * enclosing If or Loop keeps them in (a loop-carried value once its old value is read no
     * more), instead of into a variable of their own and a copy */
    struct direct { const char *name, *id; int depth, from; } *direct;
    int ndirect, capdirect;
    int node_index;       /* of the current node in its graph */
    const Onnx__GraphProto *graph; /* whose nodes emit_graph_nodes imports, */
    const Onnx__FunctionProto *func; /* or the function op_function inlines (the other NULL) */
    const Onnx__NodeProto **done; /* nodes of it imported with an earlier one, to pass over */
    int ndone, capdone;
    struct wide { const Onnx__NodeProto *reader; int rank; int64_t dims[8]; } *wide; /* a Reshape
                           * whose input is held merged: the dims it has (reshape_through_transpose) */
    int nwide, capwide;
    int64_t unrolled;     /* nodes imported by Loops and SequenceMaps unrolled at import, in all */
    int base, *bases;     /* where the current scope's values begin, and the enclosing ones' */
    int nbases, capbases;
    const char *pure_id;  /* a fresh variable out_var just gave: its defining line may be dropped
                           * when nothing reads it (prune) */
    const void *bytes;    /* the model's bytes, and the file's buffer when read here */
    size_t len;
    uint8_t *file;
} imp;

/* Functions used before their definition: the ops compose one another, and control flow
 * imports subgraphs through the dispatch at the end. */
static const char *attr_str(imp *I, const Onnx__NodeProto *n, const char *name, const char *def);
static int has_input(const Onnx__NodeProto *n, size_t k);
static const char *real_lit(imp *I, double v);
static void op_transpose(imp *I, const Onnx__NodeProto *n);
static void gather_loop(imp *I, const char *out, const cfx_type *t, const char *data, int rank, int axis,
                        const char *idx, int64_t n);
static void op_gather(imp *I, const Onnx__NodeProto *n);
static void op_matmul(imp *I, const Onnx__NodeProto *n);
static int activation(imp *I, const Onnx__NodeProto *n, const char *op);
static int64_t graph_opset_guard(imp *I);
static ival **subgraph_outputs(imp *I, const Onnx__GraphProto *g, const Onnx__NodeProto *owner);
static int declared_type(imp *I, const Onnx__GraphProto *g, const char *name, cfx_type *t);
static void assign_all(imp *I, const char **targets, const char **values, size_t n);
static void node(imp *I, const Onnx__NodeProto *n);
static void emit_graph_nodes(imp *I, const Onnx__GraphProto *g);
static int node_reads(const Onnx__NodeProto *n, const char *name);
static int reads(const Onnx__GraphProto *g, const char *name);
static int graph_reads_id(imp *I, const Onnx__GraphProto *g, const char *id);
static int last_use_of_id(imp *I, const Onnx__GraphProto *g, const char *id);
static int last_read(const Onnx__GraphProto *g, const char *name);

/* ---- errors and memory ---------------------------------------------------------------- */

static void fail(imp *I, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3), noreturn))
#endif
    ;

static void fail(imp *I, const char *fmt, ...)
{
    strbuf sb = {0};
    va_list ap;
    va_start(ap, fmt);
    char what[512];
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (I->node) {
        const Onnx__NodeProto *n = I->node;
        sb_printf(&sb, "%s: node '%.80s' (%.40s, domain '%.40s', opset %lld): %s\n", I->model,
                  n->name && *n->name ? n->name : (n->n_output ? n->output[0] : "?"),
                  n->op_type ? n->op_type : "?", n->domain ? n->domain : "", (long long)I->opset, what);
    } else {
        sb_printf(&sb, "%s: error: %s\n", I->model, what);
    }
    /* names come from the model: bytes that do not print are shown as \xNN, so the message
     * stays one line a terminal shows as it is */
    strbuf shown = {0};
    for (size_t i = 0; !sb.oom && i < sb.len; i++) {
        unsigned char c = (unsigned char)sb.data[i];
        if ((c >= 0x20 && c < 0x7f) || (c == '\n' && i + 1 == sb.len))
            sb_append(&shown, (const char *)&c, 1);
        else
            sb_printf(&shown, "\\x%02X", c);
    }
    sb_free(&sb);
    I->msg = shown.oom ? NULL : sb_take(&shown);
    sb_free(&shown);
    longjmp(I->jb, 1);
}

static void *take(imp *I, void *p)
{
    if (!p)
        fail(I, "out of memory");
    if (I->nallocs == I->capallocs) {
        size_t cap = I->capallocs ? 2 * I->capallocs : 256;
        void **grown = realloc(I->allocs, cap * sizeof *grown);
        if (!grown) {
            free(p);
            fail(I, "out of memory");
        }
        I->allocs = grown;
        I->capallocs = cap;
    }
    I->allocs[I->nallocs++] = p;
    return p;
}

/* Room for one more element in the growing array *arr of *cap elements, n of them in use. */
static void grow(imp *I, void *arr, int n, int *cap, size_t size)
{
    if (n < *cap)
        return;
    int more = *cap ? 2 * *cap : 16;
    void *grown = realloc(*(void **)arr, (size_t)more * size);
    if (!grown)
        fail(I, "out of memory");
    *(void **)arr = grown;
    *cap = more;
}

static void *alloc(imp *I, size_t n)
{
    return take(I, calloc(1, n ? n : 1));
}

/* A text an op builds while calling what may fail (ref, in, a check): the importer holds it,
 * so that an error frees it as it frees the rest; sb_free may let its buffer go sooner. */
static strbuf *new_sb(imp *I)
{
    grow(I, &I->sbs, I->nsbs, &I->capsbs, sizeof *I->sbs);
    strbuf *sb = alloc(I, sizeof *sb);
    I->sbs[I->nsbs++] = sb;
    return sb;
}

static char *sdup(imp *I, const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = alloc(I, n);
    memcpy(c, s, n);
    return c;
}

/* memcpy that takes no pointer when there is nothing to copy (a model's empty lists are NULL) */
static void copy(void *dst, const void *src, size_t n)
{
    if (n)
        memcpy(dst, src, n);
}

static char *fmt(imp *I, const char *f, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static char *fmt(imp *I, const char *f, ...)
{
    strbuf sb = {0};
    va_list ap;
    va_start(ap, f);
    sb_vprintf(&sb, f, ap);
    va_end(ap);
    if (sb.oom) {
        sb_free(&sb);
        fail(I, "out of memory");
    }
    return take(I, sb_take(&sb));
}

/* A name from the model as it may stand in the text's comments and strings: bytes that do not
 * print, quotes and backslashes as \xNN, at most 80 bytes of it (a newline in a node's name must
 * not end a comment, nor a quote a string). */
static const char *clean(imp *I, const char *s)
{
    strbuf sb = {0};
    size_t n = 0;
    for (; s && *s && n < 80; s++, n++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
            sb_append(&sb, (const char *)&c, 1);
        else
            sb_printf(&sb, "\\x%02X", c);
    }
    if (s && *s)
        sb_puts(&sb, "...");
    if (sb.oom) {
        sb_free(&sb);
        fail(I, "out of memory");
    }
    return sb.data ? take(I, sb_take(&sb)) : "";
}

/* ---- the string map ------------------------------------------------------------------- */

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int *smap_slot(imp *I, smap *m, const char *key, int insert)
{
    if (insert && 2 * (m->n + 1) > m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 256;
        const char **keys = calloc(cap, sizeof *keys);
        int *vals = calloc(cap, sizeof *vals);
        if (!keys || !vals) {
            free(keys);
            free(vals);
            fail(I, "out of memory");
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->keys[i])
                continue;
            size_t j = hash(m->keys[i]) & (cap - 1);
            while (keys[j])
                j = (j + 1) & (cap - 1);
            keys[j] = m->keys[i];
            vals[j] = m->vals[i];
        }
        free(m->keys);
        free(m->vals);
        m->keys = keys;
        m->vals = vals;
        m->cap = cap;
    }
    if (!m->cap)
        return NULL;
    size_t j = hash(key) & (m->cap - 1);
    while (m->keys[j]) {
        if (strcmp(m->keys[j], key) == 0)
            return &m->vals[j];
        j = (j + 1) & (m->cap - 1);
    }
    if (!insert)
        return NULL;
    m->keys[j] = key;
    m->vals[j] = -1;
    m->n++;
    return &m->vals[j];
}

static void smap_free(smap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ---- values and scopes ---------------------------------------------------------------- */

static ival *lookup(imp *I, const char *name)
{
    int *v = smap_slot(I, &I->names, name, 0);
    return v && *v >= 0 ? I->vals[*v] : NULL;
}

static ival *bind(imp *I, const char *name, const cfx_type *ty, const char *id, void *data)
{
    grow(I, &I->vals, I->nvals, &I->capvals, sizeof *I->vals);
    int *slot = smap_slot(I, &I->names, name, 1);
    ival *v = alloc(I, sizeof *v);
    I->vals[I->nvals] = v;
    v->name = name;
    v->id = id;
    v->ty = *ty;
    v->data = data;
    v->sym = NULL;
    v->off = 0;
    v->narrow = NULL;
    v->elem = NULL;
    v->dot_a = v->dot_b = NULL;
    v->half = HALF_NONE;
    v->prev = *slot;
    *slot = I->nvals++;
    return v;
}

/* A scope: the values a graph (or a function's body) binds, from its inputs on; a node may not
 * compute a value its own scope already holds (ONNX's graphs assign each name once). */
static int scope_open(imp *I)
{
    grow(I, &I->bases, I->nbases, &I->capbases, sizeof *I->bases);
    I->bases[I->nbases++] = I->base;
    I->base = I->nvals;
    return I->nvals;
}

static void scope_close(imp *I, int base)
{
    if (I->nbases > 0)
        I->base = I->bases[--I->nbases];
    while (I->nvals > base) {
        ival *v = I->vals[--I->nvals];
        *smap_slot(I, &I->names, v->name, 0) = v->prev;
    }
}

static int64_t count(const cfx_type *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->rank; d++)
        n *= t->dims[d];
    return n;
}

static const char *tystr(imp *I, const cfx_type *t)
{
    char buf[CFX_TYPE_STR_MAX];
    return sdup(I, cfx_type_str(t, buf, sizeof buf));
}

static cfx_type mktype(cfx_dtype dt, int rank, const int64_t *dims)
{
    cfx_type t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    t.rank = rank;
    for (int d = 0; d < rank; d++)
        t.dims[d] = dims[d];
    return t;
}

static int same_type(const cfx_type *a, const cfx_type *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank)
        return 0;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d])
            return 0;
    return 1;
}

/* A fresh cfx identifier made from an ONNX name: letters, digits and '_', prefixed so that it
 * meets no keyword or built-in op, and numbered where that is taken. */
static const char *new_id(imp *I, const char *prefix, const char *name)
{
    strbuf sb = {0};
    sb_puts(&sb, prefix);
    size_t start = sb.len;
    for (const char *p = name; *p && sb.len - start < 48; p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (ok)
            sb_append(&sb, p, 1);
        else if (sb.len > start && sb.data[sb.len - 1] != '_')
            sb_puts(&sb, "_");
    }
    while (sb.len > start && sb.data[sb.len - 1] == '_')
        sb.len--, sb.data[sb.len] = '\0';
    if (sb.oom) {
        sb_free(&sb);
        fail(I, "out of memory");
    }
    char *base = take(I, sb_take(&sb));
    /* each taken id holds the number its next namesake tries first: a node that makes thousands
     * of ids of one name (a pool's offsets) tries each number once, not thousands of times */
    int *next = smap_slot(I, &I->ids, base, 0);
    if (!next) {
        *smap_slot(I, &I->ids, base, 1) = 2;
        return base;
    }
    int k = *next;
    const char *id;
    while (smap_slot(I, &I->ids, id = fmt(I, "%s_%d", base, k), 0))
        k++;
    *next = k + 1; /* before the insert, which may move the slots */
    *smap_slot(I, &I->ids, id, 1) = 2;
    return id;
}

/* 1 when some value in scope is held by variable id (a live value a write would destroy) */
static int lookup_id(imp *I, const char *id)
{
    for (int k = I->nvals - 1; k >= 0; k--)
        if (I->vals[k]->id && !strcmp(I->vals[k]->id, id))
            return 1;
    return 0;
}

/* ---- writing statements ----------------------------------------------------------------- */

static void line(imp *I, const char *f, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A line that defines a fresh variable and nothing else starts with PURE_MARK, the variable and
 * PURE_END, for prune. */
#define PURE_MARK '\x01'

#define PURE_END '\x02'

static void line(imp *I, const char *f, ...)
{
    for (int k = 0; k < I->indent; k++)
        sb_puts(&I->body, "  ");
    size_t at = I->body.len;
    va_list ap;
    va_start(ap, f);
    sb_vprintf(&I->body, f, ap);
    va_end(ap);
    if (I->pure_id && !I->body.oom) {
        size_t n = strlen(I->pure_id);
        const char *l = I->body.data + at;
        if (!strncmp(l, I->pure_id, n) && !strncmp(l + n, " = ", 3)) {
            char *mark = fmt(I, "%c%s%c", PURE_MARK, I->pure_id, PURE_END);
            strbuf moved = {0};
            sb_append(&moved, l, I->body.len - at);
            I->body.len = at;
            I->body.data[at] = '\0';
            sb_puts(&I->body, mark);
            sb_append(&I->body, sb_str(&moved), moved.len);
            sb_free(&moved);
        }
    }
    I->pure_id = NULL;
    I->nlines++;
    if (I->note)
        sb_printf(&I->body, "  # %s", I->note);
    sb_puts(&I->body, "\n");
    if (I->body.oom)
        fail(I, "out of memory");
}

/* A loop's body is written apart and put after its prologue: the buffer being written is held
 * in I meanwhile, so that an error on the way frees it with everything else. */
static void body_apart(imp *I)
{
    grow(I, &I->held, I->nheld, &I->capheld, sizeof *I->held);
    I->held[I->nheld++] = I->body;
    memset(&I->body, 0, sizeof I->body);
}

/* Back to the enclosing buffer, the body just written held until body_join appends it. */
static void body_back(imp *I)
{
    strbuf inner = I->body;
    I->body = I->held[I->nheld - 1];
    I->held[I->nheld - 1] = inner;
}

static void body_join(imp *I)
{
    strbuf *inner = &I->held[I->nheld - 1];
    sb_append(&I->body, inner->data ? inner->data : "", inner->len);
    sb_free(inner);
    I->nheld--;
    if (I->body.oom)
        fail(I, "out of memory");
}

/* Drops the lines that define a variable nothing reads (a Shape's chain once folded, an int64
 * cast whose int32 was taken instead), as long as there are such: every identifier is counted
 * once over the body (comments and strings left out), and a marked line whose variable counts
 * once, its own definition, goes, taking its reads off the counts. Linear in the text. */
static int ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int ident_char(char c)
{
    return ident_start(c) || (c >= '0' && c <= '9');
}

/* ---- known data ----------------------------------------------------------------------- */

static double getd(const ival *v, int64_t i)
{
    switch (v->ty.dtype) {
    case CFX_F32: return ((const float *)v->data)[i];
    case CFX_F64: return ((const double *)v->data)[i];
    case CFX_I32: return ((const int32_t *)v->data)[i];
    case CFX_I64: return (double)((const int64_t *)v->data)[i];
    case CFX_BOOL: return ((const uint8_t *)v->data)[i];
    }
    return 0;
}

/* A real as an integer where one is read (truncated; NaN 0, past the range the nearest end), so
 * that a model's real where an integer belongs gives a value the caller's checks refuse. */
static int64_t int_of_real(double x)
{
    return x != x ? 0 : x >= 0x1p63 ? INT64_MAX : x < -0x1p63 ? INT64_MIN : (int64_t)x;
}

static int64_t geti(const ival *v, int64_t i)
{
    switch (v->ty.dtype) {
    case CFX_F32: return int_of_real(((const float *)v->data)[i]);
    case CFX_F64: return int_of_real(((const double *)v->data)[i]);
    case CFX_I32: return ((const int32_t *)v->data)[i];
    case CFX_I64: return ((const int64_t *)v->data)[i];
    case CFX_BOOL: return ((const uint8_t *)v->data)[i];
    }
    return 0;
}

static void setd(cfx_dtype dt, void *data, int64_t i, double x)
{
    switch (dt) {
    case CFX_F32: ((float *)data)[i] = (float)x; break;
    case CFX_F64: ((double *)data)[i] = x; break;
    case CFX_I32: ((int32_t *)data)[i] = (int32_t)x; break;
    case CFX_I64: ((int64_t *)data)[i] = (int64_t)x; break;
    case CFX_BOOL: ((uint8_t *)data)[i] = x != 0; break;
    }
}

static void seti(cfx_dtype dt, void *data, int64_t i, int64_t x)
{
    switch (dt) {
    case CFX_F32: ((float *)data)[i] = (float)x; break;
    case CFX_F64: ((double *)data)[i] = (double)x; break;
    case CFX_I32: ((int32_t *)data)[i] = (int32_t)(uint32_t)x; break;
    case CFX_I64: ((int64_t *)data)[i] = x; break;
    case CFX_BOOL: ((uint8_t *)data)[i] = x != 0; break;
    }
}

static int is_real(cfx_dtype dt)
{
    return dt == CFX_F32 || dt == CFX_F64;
}

static void *new_data(imp *I, const cfx_type *t)
{
    /* folds stop at ONNX_FOLD_MAX; masks and index lists made at import stop here */
    if (count(t) > ((int64_t)1 << 24))
        fail(I, "a constant made at import would have %lld elements; at most 2^24 are made",
             (long long)count(t));
    return alloc(I, (size_t)count(t) * (size_t)cfx_dtype_size(t->dtype));
}

/* The name of a known value as run-time code reads it: a module constant, made once. */
static const char *ref(imp *I, ival *v)
{
    if (v->id)
        return v->id;
    if (!v->data)
        fail(I, "internal error: value '%s' has neither a variable nor data", v->name);
    if (count(&v->ty) == 0)
        fail(I, "'%s' has no elements, and cfx has no tensors of 0 elements at run time", v->name);
    const char *id = new_id(I, "c_", v->name);
    int64_t n = count(&v->ty);
    sb_printf(&I->consts, "const %s: %s", id, tystr(I, &v->ty));
    if (n <= ONNX_INLINE_MAX) {
        sb_puts(&I->consts, " = ");
        value_format(&I->consts, &v->ty, v->data);
    } else if (I->data_dir) {
        char err[512];
        const char *path = fmt(I, "%s/%s.npy", I->data_dir, id);
        if (npy_write_file(path, &v->ty, v->data, err, sizeof err) != 0)
            fail(I, "cannot write constant '%s': %s", v->name, err);
        sb_printf(&I->consts, " = \"%s/%s.npy\"", I->data_dir_text ? I->data_dir_text : I->data_dir, id);
    } else {
        grow(I, &I->table, I->ntable, &I->captable, sizeof *I->table);
        I->table[I->ntable++] = (onnx_constant){(char *)id, v->ty, v->data};
    }
    sb_printf(&I->consts, "  # '%s'\n", clean(I, v->name));
    if (I->consts.oom)
        fail(I, "out of memory");
    v->id = id;
    return id;
}

/* ---- float16 and bfloat16 ---------------------------------------------------------------- */

static double half_value_of(int half, double x)
{
    switch (half) {
    case HALF_F16: return k_round_f16_f64(x);
    case HALF_BF16: return k_round_bf16_f64(x);
    case HALF_F8E4M3FN: return k_round_f8e4m3fn_f64(x);
    case HALF_F8E4M3FNUZ: return k_round_f8e4m3fnuz_f64(x);
    case HALF_F8E5M2: return k_round_f8e5m2_f64(x);
    case HALF_F8E5M2FNUZ: return k_round_f8e5m2fnuz_f64(x);
    case HALF_F4E2M1: return k_round_f4e2m1_f64(x);
    case HALF_F8E8M0: return k_round_f8e8m0_f64(x);
    default: return x;
    }
}

/* ---- the float8 types and float4e2m1 -------------------------------------------------------
 * Held in f32 as float16 is, each node rounding its result to the type (round_f8e4m3fn ...
 * round_f8e8m0: the format's own conversion, without saturation). A Cast (CastLike,
 * QuantizeLinear) to one saturates where ONNX says so. */

static int minifloat(int half)
{
    return half >= HALF_F8E4M3FN && half <= HALF_F8E8M0;
}

/* The largest finite value of a float8 type or float4e2m1 */
static double minifloat_max(int half)
{
    return half == HALF_F8E4M3FN ? 448 : half == HALF_F8E4M3FNUZ ? 240 : half == HALF_F4E2M1 ? 6
         : half == HALF_F8E8M0 ? 0x1p127 : 57344;
}

/* A Cast's round_mode for float8e8m0: 'u'p (the default), 'd'own or 'n'earest */
static int e8m0_mode(imp *I, const Onnx__NodeProto *n)
{
    const char *m = attr_str(I, n, "round_mode", "up");
    if (strcmp(m, "up") && strcmp(m, "down") && strcmp(m, "nearest"))
        fail(I, "round_mode is '%s'; it must be up, down or nearest", m);
    return m[0];
}

/* x cast to a float8 type or float4e2m1 as ONNX's Cast says (its tables, and its reference:
 * numpy_helper's saturate_cast and to_float8e8m0). With saturate, x is clamped to the largest
 * finite value first (inf too; NaN stays NaN); without it the format's own conversion: past the
 * largest value NaN, inf for float8e5m2. float4e2m1 always saturates (round_f4e2m1). float8e8m0
 * drops the sign, takes 2^-127 for anything under it (0 too), and rounds to a power of two by
 * round_mode: nearest (halfway up), up or down; without saturate, past 2^127 NaN. Two cases differ
 * from the reference (1.23), as ONNX's table says: inf with saturate is 2^127 (the reference
 * gives NaN), and a value under 2^-127 rounded up is 2^-127 (the reference takes 2^-126 for an
 * f32 subnormal). A known value: */
static double minifloat_cast_value(int half, int sat, int mode, double x)
{
    double mx = minifloat_max(half);
    if (isnan(x) || half != HALF_F8E8M0)
        return half_value_of(half, sat && fabs(x) > mx ? copysign(mx, x) : x);
    double a = fabs(x) < 0x1p-127 ? 0x1p-127 : sat && fabs(x) > mx ? mx : fabs(x);
    double r = k_round_f8e8m0_f64(mode == 'd' && a > mx ? mx : a);
    if (mode == 'u')
        return r < a ? k_round_f8e8m0_f64(2 * r) : r;
    if (mode == 'd')
        return isinf(a) ? NAN : r > a ? r / 2 : r;
    return r;
}

/* The same of run time: an expression of e's dtype (lines before it for float8e8m0's steps) */
static const char *minifloat_cast_expr(imp *I, const char *name, int half, int sat, int mode, const char *e)
{
    const char *fn = half_round[half], *mx = real_lit(I, minifloat_max(half));
    if (half != HALF_F8E8M0)
        return sat && half != HALF_F4E2M1 ? fmt(I, "%s(min(max(%s, -%s), %s))", fn, e, mx, mx)
                                          : fmt(I, "%s(%s)", fn, e);
    const char *a = new_id(I, "a_", name), *r = new_id(I, "r_", name), *lo = real_lit(I, 0x1p-127);
    line(I, "%s = %s", a, sat ? fmt(I, "min(max(abs(%s), %s), %s)", e, lo, mx) : fmt(I, "max(abs(%s), %s)", e, lo));
    if (mode == 'd') { /* inf, without saturate, NaN: a - a */
        line(I, "%s = %s(min(%s, %s))", r, fn, a, mx);
        return fmt(I, "where(%s > %s, %s * 0.5, %s)%s", r, a, r, r, sat ? "" : fmt(I, " + (%s - %s)", a, a));
    }
    line(I, "%s = %s(%s)", r, fn, a);
    return mode == 'n' ? r : fmt(I, "%s(where(%s < %s, %s * 2.0, %s))", fn, r, a, r, r);
}

/* ---- int8, uint8, int16, uint16 and uint32 ---------------------------------------------------
 * cfx has no narrow integers either: int8, uint8, int16 and uint16 are held in i32, uint32 in i64
 * (unsigned values as the non-negative ones), and every node whose result has such a type wraps it
 * to the type (modulo 2^bits, two's complement for the signed ones, as numpy and ONNX's reference
 * compute in the type), except the nodes that only move, pick or compare values. i32 and i64
 * wrap modulo 2^32 and 2^64, multiples of the type's modulus, so one wrap of the result gives the
 * type's. The "half" of an ival says which type, as for float16; docs/onnx.md says so. */

/* The bits of a narrow integer type */
static int narrow_bits(int half)
{
    return half == HALF_U64 ? 64 : half == HALF_U32 ? 32 : half == HALF_I16 || half == HALF_U16 ? 16
         : half == HALF_I8 || half == HALF_U8 ? 8 : half == HALF_I4 || half == HALF_U4 ? 4 : 2;
}

static int64_t narrow_modulus(int half)
{
    return (int64_t)1 << narrow_bits(half);
}

static int narrow_signed(int half)
{
    return half == HALF_I8 || half == HALF_I16 || half == HALF_I4 || half == HALF_I2;
}

/* The dtype that holds a narrow type's values */
static cfx_dtype narrow_holder(int half)
{
    return half == HALF_U32 || half == HALF_U64 ? CFX_I64 : CFX_I32;
}

/* x wrapped to the narrow type: (uint64_t)x is x modulo 2^64, a multiple of the modulus */
static int64_t narrow_value_of(int half, int64_t x)
{
    if (half == HALF_U64) /* i64's wrap is uint64's */
        return x;
    int64_t m = narrow_modulus(half), r = (int64_t)((uint64_t)x % (uint64_t)m);
    return narrow_signed(half) && r >= m / 2 ? r - m : r;
}

/* The name of a value's ONNX type: its narrow or half type, else its dtype */
static const char *type_name(const ival *v)
{
    return v->half ? half_types[v->half] : cfx_dtype_name(v->ty.dtype);
}

/* A known value wrapped to its narrow type (a copy, where that changes it). */
static void wrap_known(imp *I, ival *v)
{
    int64_t n = count(&v->ty), i = 0;
    while (i < n && narrow_value_of(v->half, geti(v, i)) == geti(v, i))
        i++;
    if (i == n)
        return;
    void *c = new_data(I, &v->ty);
    for (i = 0; i < n; i++)
        seti(v->ty.dtype, c, i, narrow_value_of(v->half, geti(v, i)));
    v->data = c;
    v->id = NULL; /* a module constant made of the old value is not this one */
}

/* A known f32 value rounded to its half type (a copy, where that changes it); a narrow
 * integer's wrapped. */
static void round_known(imp *I, ival *v)
{
    if (narrow(v->half)) {
        wrap_known(I, v);
        return;
    }
    const float *d = v->data;
    int64_t n = count(&v->ty), i = 0;
    while (i < n && (isnan(d[i]) || (float)half_value_of(v->half, d[i]) == d[i]))
        i++;
    if (i == n)
        return;
    float *c = new_data(I, &v->ty);
    for (i = 0; i < n; i++)
        c[i] = (float)half_value_of(v->half, d[i]);
    v->data = c;
    v->id = NULL; /* a module constant made of the old value is not this one */
}

static int plain_id(const char *s)
{
    if (!s || !ident_start(*s))
        return 0;
    while (*s && ident_char(*s))
        s++;
    return *s == '\0';
}

/* expr, rounded to the half type where there is one (wrapped to a narrow integer type): a step
 * inside an op ONNX computes in it */
static const char *half_rounded(imp *I, int half, const char *expr)
{
    if (half == HALF_U64)
        return expr;
    long long m = narrow(half) ? (long long)narrow_modulus(half) : 0;
    if (m)
        return narrow_signed(half) ? fmt(I, "(((%s) + %lld) %% %lld - %lld)", expr, m / 2, m, m / 2)
                                   : fmt(I, "((%s) %% %lld)", expr, m);
    return half ? fmt(I, "%s(%s)", half_round[half], expr) : expr;
}

/* A value of run time rounded to its half type: in its own variable, or into a new one where
 * that variable holds another value too (an input, what an op passed through). */
static void round_value(imp *I, ival *v, int fresh)
{
    const char *from = ref(I, v);
    const char *id = fresh || !plain_id(from) ? new_id(I, narrow(v->half) ? "w_" : "h_", v->name) : from;
    line(I, "%s = %s", id, half_rounded(I, v->half, from));
    v->id = id;
    v->elem = NULL; /* facts about the value before it was rounded */
    v->dot_a = v->dot_b = NULL;
}

/* Ops whose results hold only values they were given, moved, picked or negated: never rounded. */
static int keeps_values(const char *op)
{
    static const char *const ops[] = {
        "Identity", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Transpose", "Expand", "Concat",
        "Split", "Slice", "Gather", "GatherElements", "ScatterND", "Where", "Neg", "Abs", "Relu",
        "Max", "Min", "ReduceMax", "ReduceMin", "TopK", "Ceil", "Floor", "Round", "Sign", "Clip",
        "Trilu", "Constant", "ConstantOfShape", "ScatterElements", "Scatter", "Tile", "Pad",
        "OneHot", "GatherND", "DepthToSpace", "SpaceToDepth", "ReverseSequence", "CenterCropPad",
        "MaxUnpool"};
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
        if (!strcmp(op, ops[k]))
            return 1;
    return 0;
}

/* Results of a node whose input is of a narrow integer type that are never of that type: a
 * count, a shape or indices (an i64, as uint32's holder). */
static int index_result(const char *op, size_t k)
{
    static const char *const ops[] = {"Shape", "Size", "ArgMax", "ArgMin", "NonZero"};
    for (size_t j = 0; j < sizeof ops / sizeof *ops; j++)
        if (!strcmp(op, ops[j]))
            return 1;
    return k > 0 && (!strcmp(op, "TopK") || !strcmp(op, "Unique"));
}

/* After a node (not If, Loop, Scan or a function, whose inner nodes did this): its real results
 * take the half type it says, or that of its first real input, and are rounded to it; where it
 * has no real input, its integer results take the narrow type of its first integer input and
 * are wrapped to it (a negation too: -(-128) is -128 in int8). */
static void round_results(imp *I, const Onnx__NodeProto *n, int wrote)
{
    int half = I->node_half;
    for (size_t k = 0; half < 0 && k < n->n_input; k++) {
        ival *x = has_input(n, k) ? lookup(I, n->input[k]) : NULL;
        if (x && is_real(x->ty.dtype))
            half = x->half;
    }
    for (size_t k = 0; half < 0 && k < n->n_input; k++) {
        ival *x = has_input(n, k) ? lookup(I, n->input[k]) : NULL;
        if (x && !x->seq && (x->ty.dtype == CFX_I32 || x->ty.dtype == CFX_I64))
            half = x->half;
    }
    if (half <= 0)
        return;
    int keeps = (keeps_values(n->op_type) || I->node_rounded) &&
                !(narrow(half) && (!strcmp(n->op_type, "Neg") || !strcmp(n->op_type, "Abs")));
    for (size_t k = 0; k < n->n_output; k++) {
        ival *v = n->output[k] && *n->output[k] ? lookup(I, n->output[k]) : NULL;
        if (!v || v->ty.dtype != (narrow(half) ? narrow_holder(half) : CFX_F32) ||
            (narrow(half) && index_result(n->op_type, k)))
            continue;
        v->half = half;
        if (keeps || half == HALF_U64) /* i64's arithmetic wraps as uint64's */
            continue;
        if (v->data) {
            round_known(I, v);
            continue;
        }
        /* a result that is an input's variable, passed through (a Cast to f32 of an f32),
         * gets a variable of its own; one the node wrote (a loop's value) is rounded there */
        int alias = 0;
        for (size_t j = 0; j < n->n_input && !wrote; j++) {
            ival *x = has_input(n, j) ? lookup(I, n->input[j]) : NULL;
            alias |= x && x->id && v->id && !strcmp(x->id, v->id);
        }
        round_value(I, v, alias);
    }
}

/* ---- types from the model --------------------------------------------------------------- */

static const char *onnx_dtype_name(int32_t t)
{
    static const char *const names[] = {"undefined", "float", "uint8", "int8", "uint16", "int16",
                                        "int32", "int64", "string", "bool", "float16", "double",
                                        "uint32", "uint64", "complex64", "complex128", "bfloat16",
                                        "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz",
                                        "uint4", "int4", "float4e2m1", "float8e8m0", "uint2", "int2"};
    return t >= 0 && t < (int32_t)(sizeof names / sizeof *names) ? names[t] : "an unknown type";
}

/* ONNX's newer types, past what this onnx.proto names (IR 9 and later) */
enum { ONNX_FLOAT8E4M3FN = 17, ONNX_FLOAT8E4M3FNUZ, ONNX_FLOAT8E5M2, ONNX_FLOAT8E5M2FNUZ, ONNX_UINT4, ONNX_INT4,
       ONNX_FLOAT4E2M1, ONNX_FLOAT8E8M0, ONNX_UINT2, ONNX_INT2 };

/* The cfx dtype of ONNX's type t. float16, bfloat16, the float8 types and float4e2m1 are held in
 * f32, int8, uint8, int16, uint16, int4, uint4, int2 and uint2 in i32, uint32 in i64, uint64 in i64
 * as its bits; *half says which. */
static cfx_dtype dtype_of(imp *I, int32_t t, const char *what, int *half)
{
    *half = t == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 ? HALF_F16
          : t == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16 ? HALF_BF16
          : t == ONNX__TENSOR_PROTO__DATA_TYPE__INT8 ? HALF_I8
          : t == ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 ? HALF_U8
          : t == ONNX__TENSOR_PROTO__DATA_TYPE__INT16 ? HALF_I16
          : t == ONNX__TENSOR_PROTO__DATA_TYPE__UINT16 ? HALF_U16
          : t == ONNX__TENSOR_PROTO__DATA_TYPE__UINT32 ? HALF_U32
          : t == ONNX__TENSOR_PROTO__DATA_TYPE__UINT64 ? HALF_U64
          : t == ONNX_FLOAT8E4M3FN ? HALF_F8E4M3FN
          : t == ONNX_FLOAT8E4M3FNUZ ? HALF_F8E4M3FNUZ
          : t == ONNX_FLOAT8E5M2 ? HALF_F8E5M2
          : t == ONNX_FLOAT8E5M2FNUZ ? HALF_F8E5M2FNUZ
          : t == ONNX_FLOAT4E2M1 ? HALF_F4E2M1
          : t == ONNX_FLOAT8E8M0 ? HALF_F8E8M0
          : t == ONNX_INT4 ? HALF_I4
          : t == ONNX_UINT4 ? HALF_U4
          : t == ONNX_INT2 ? HALF_I2
          : t == ONNX_UINT2 ? HALF_U2 : HALF_NONE;
    if (*half)
        return narrow(*half) ? narrow_holder(*half) : CFX_F32;
    switch (t) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return CFX_F32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: return CFX_F64;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return CFX_I32;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return CFX_I64;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: return CFX_BOOL;
    default:
        fail(I, "'%s' is of type %s (%d); cfx takes float, double, int32, int64, bool, float16, bfloat16, the "
             "float8 types, float4e2m1, int8, uint8, int16, uint16, uint32, uint64, int4, uint4, int2 and uint2", what,
             onnx_dtype_name(t), (int)t);
    }
}

/* A shape cfx can hold: rank at most CFX_TYPE_MAX_RANK, at most 2^30 elements, every dimension
 * at least 1, or, for a value known at import (an empty axes list, a part of a split), 0: such a
 * value may be read at import but never at run time (ref refuses it). */
static void check_shape(imp *I, const char *what, int64_t rank, const int64_t *dims, int empty_ok)
{
    if (rank > CFX_TYPE_MAX_RANK)
        fail(I, "'%s' has rank %lld; cfx takes tensors of at most %d dimensions", what,
             (long long)rank, CFX_TYPE_MAX_RANK);
    int64_t n = 1;
    for (int64_t d = 0; d < rank; d++) {
        if (dims[d] == 0 && empty_ok)
            return;
        if (dims[d] < 1)
            fail(I, "'%s' has a dimension of %lld; cfx takes tensors whose every dimension is at least 1",
                 what, (long long)dims[d]);
        if (dims[d] > ((int64_t)1 << 30) || n * dims[d] > ((int64_t)1 << 30))
            fail(I, "'%s' has more than 2^30 elements", what);
        n *= dims[d];
    }
}

static void check_dims(imp *I, const char *what, int64_t rank, const int64_t *dims)
{
    check_shape(I, what, rank, dims, 0);
}

/* An input of 0 elements, which the import holds as a value known by its type alone: the
 * type given must have the model's declared dtype (or the one cfx holds it in) and agree with
 * its declared shape where that is static, since the run is not asked for it again. */
static void check_declared(imp *I, const Onnx__ValueInfoProto *vi, const cfx_type *given)
{
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return;
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    cfx_type decl = {0};
    int h;
    decl.dtype = tt->has_elem_type ? dtype_of(I, tt->elem_type, vi->name, &h) : given->dtype;
    int same = decl.dtype == given->dtype;
    decl.rank = given->rank;
    if (tt->shape) {
        decl.rank = (int)tt->shape->n_dim;
        same &= decl.rank == given->rank;
        for (int d = 0; d < decl.rank && d < CFX_TYPE_MAX_RANK; d++) {
            const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
            int fixed = dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            decl.dims[d] = fixed ? dim->dim_value : d < given->rank ? given->dims[d] : 0;
            same &= !fixed || (d < given->rank && dim->dim_value == given->dims[d]);
        }
    }
    if (!same)
        fail(I, "input '%s' is given as %s (0 elements), but the model declares it %s", vi->name,
             tystr(I, given), decl.rank <= CFX_TYPE_MAX_RANK ? tystr(I, &decl) : "of another rank");
}

/* The type of a model's graph input or output; a symbolic dimension takes its size from the
 * caller's shapes, else it is an error (for an input) or left at 0 (for an output: unknown). */
static int value_info_type(imp *I, const Onnx__ValueInfoProto *vi, int input, cfx_type *out, int *half)
{
    *half = HALF_NONE;
    const char *name = vi->name ? vi->name : "";
    for (int k = 0; input && k < I->nshapes; k++)
        if (I->shapes[k].name && strcmp(I->shapes[k].name, name) == 0) {
            *out = I->shapes[k].type;
            /* a float16 or bfloat16 input is given as f32, an int8 ... uint16 as i32, a uint32 as i64 */
            const Onnx__TypeProto *dt = vi->type;
            if (dt && dt->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && dt->tensor_type &&
                dt->tensor_type->has_elem_type && (out->dtype == CFX_F32 || out->dtype == CFX_I32 ||
                                                   out->dtype == CFX_I64) &&
                dtype_of(I, dt->tensor_type->elem_type, name, half) != out->dtype)
                *half = HALF_NONE;
            /* an input of no elements is known whole by its type: the shape given must be
             * the one the model declares (its static dimensions), and the dtype its own */
            int empty = count(out) == 0 && out->rank <= CFX_TYPE_MAX_RANK;
            check_shape(I, name, out->rank, out->dims, empty);
            if (empty)
                check_declared(I, vi, out);
            return 1;
        }
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type) {
        if (!input)
            return 0;
        fail(I, "input '%s' is not a tensor: %s", name, tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE
             ? "maps are not supported" : "a sequence cannot be a graph input, as a cfx list cannot be a "
             "parameter (docs/language.md, Lists; an optional of a tensor can)");
    }
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    memset(out, 0, sizeof *out);
    out->dtype = dtype_of(I, tt->has_elem_type ? tt->elem_type : 0, name, half);
    if (!tt->shape) {
        if (!input)
            return 0;
        fail(I, "input '%s' has no shape; give it (cfx run: a .npy input; the C API: shapes)", name);
    }
    if (tt->shape->n_dim > CFX_TYPE_MAX_RANK)
        fail(I, "'%s' has rank %zu; cfx takes tensors of at most %d dimensions", name,
             tt->shape->n_dim, CFX_TYPE_MAX_RANK);
    out->rank = (int)tt->shape->n_dim;
    for (size_t d = 0; d < tt->shape->n_dim; d++) {
        const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
        if (dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            out->dims[d] = dim->dim_value;
        } else {
            if (!input)
                return 0;
            fail(I, "input '%s' has a symbolic dimension %zu ('%s'): give its shape (cfx run: a .npy "
                 "input; the C API and Python: shapes)", name, d,
                 dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param
                     ? dim->dim_param : "?");
        }
    }
    check_shape(I, name, out->rank, out->dims, input); /* an input of 0 elements: known (its type) */
    return 1;
}

/* ---- tensors in the model ---------------------------------------------------------------- */

static void *read_external(imp *I, const Onnx__TensorProto *t, size_t want, size_t room)
{
    const char *loc = NULL;
    int64_t offset = 0, length = -1;
    for (size_t k = 0; k < t->n_external_data; k++) {
        const Onnx__StringStringEntryProto *e = t->external_data[k];
        if (!e || !e->key || !e->value)
            continue;
        if (strcmp(e->key, "location") == 0)
            loc = e->value;
        else if (strcmp(e->key, "offset") == 0)
            offset = strtoll(e->value, NULL, 10);
        else if (strcmp(e->key, "length") == 0)
            length = strtoll(e->value, NULL, 10);
    }
    const char *name = t->name ? t->name : "";
    if (!loc)
        fail(I, "tensor '%s' has external data without a location", name);
    if (!I->dir)
        fail(I, "tensor '%s' has external data ('%s'), which a model given in memory cannot use", name, loc);
    /* the file must lie in the model's folder or below it: no absolute path, no '..' */
    if (loc[0] == '/' || loc[0] == '\\' || strstr(loc, "..") || strchr(loc, ':'))
        fail(I, "tensor '%s': external data '%s' lies outside the model's folder", name, loc);
    if (offset < 0 || (length >= 0 && (size_t)length != want))
        fail(I, "tensor '%s': external data '%s' has offset %lld and length %lld, expected %zu bytes",
             name, loc, (long long)offset, (long long)length, want);
    const char *path = fmt(I, "%s/%s", I->dir, loc);
    /* and no link inside it may lead out of it */
    char *real_dir = realpath(I->dir, NULL), *real_path = realpath(path, NULL);
    int inside = real_dir && real_path && !strncmp(real_path, real_dir, strlen(real_dir)) &&
                 (real_path[strlen(real_dir)] == '/' || !strcmp(real_dir, "/"));
    free(real_dir);
    free(real_path);
    if (!inside)
        fail(I, "tensor '%s': external data '%s' %s", name, loc,
             access(path, F_OK) == 0 ? "lies outside the model's folder (through a link)" : "cannot be read: no such file");
    /* the file's size first: a shape that asks for more than the file holds makes no buffer */
    struct stat st;
    if (stat(path, &st) != 0)
        fail(I, "tensor '%s': cannot read external data '%s': %s", name, path, strerror(errno));
    if ((uint64_t)st.st_size < (uint64_t)offset || (uint64_t)st.st_size - (uint64_t)offset < want)
        fail(I, "tensor '%s': external data '%s' holds fewer than %zu bytes at offset %lld", name, path,
             want, (long long)offset);
    void *out = alloc(I, room);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail(I, "tensor '%s': cannot read external data '%s': %s", name, path, strerror(errno));
    int ok = fseek(f, (long)offset, SEEK_SET) == 0 && fread(out, 1, want, f) == want;
    fclose(f);
    if (!ok)
        fail(I, "tensor '%s': external data '%s' holds fewer than %zu bytes at offset %lld", name, path,
             want, (long long)offset);
    return out;
}

/* A TensorProto's type and data, checked: every dimension at least 1, the data exactly the
 * elements its dimensions say. */
/* A float16 or bfloat16 tensor's n elements, as f32 (exactly). */
static void *half_data(imp *I, const Onnx__TensorProto *t, const char *name, const cfx_type *ty, int half)
{
    int64_t n = count(ty);
    size_t bytes = (size_t)n * 2;
    uint16_t *bits;
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        bits = read_external(I, t, bytes, bytes + 2);
    } else if (t->has_raw_data) {
        if (t->raw_data.len != bytes)
            fail(I, "tensor '%s' holds %zu bytes of data, its shape %s of %s needs %zu", name, t->raw_data.len,
                 tystr(I, ty), half_types[half], bytes);
        bits = alloc(I, bytes + 2);
        if (bytes)
            memcpy(bits, t->raw_data.data, bytes); /* little-endian, as this machine */
    } else if (t->n_int32_data == (size_t)n) { /* the 16 bits of each in an int32 */
        bits = alloc(I, bytes + 2);
        for (int64_t i = 0; i < n; i++)
            bits[i] = (uint16_t)t->int32_data[i];
    } else {
        fail(I, "tensor '%s' holds %zu elements, its shape %s needs %lld", name, t->n_int32_data,
             tystr(I, ty), (long long)n);
    }
    float *data = alloc(I, (size_t)n * sizeof(float) + 1);
    for (int64_t i = 0; i < n; i++)
        data[i] = half == HALF_F16 ? k_f16_value(bits[i]) : k_bf16_value(bits[i]);
    return data;
}

/* The value of a float8 or float4 type's bits (ONNX's IR.md, OCP's formats): sign, exponent,
 * mantissa; exponent 0 a subnormal. E4M3FN's S.1111.111 is NaN, the FNUZ types' 1000 0000 is NaN,
 * E5M2's exponent 31 inf or NaN; float4e2m1 has neither; float8e8m0 is 2^(bits - 127), 255 NaN. */
static double minifloat_value(int half, unsigned bits)
{
    if (half == HALF_F8E8M0)
        return bits == 255 ? NAN : ldexp(1.0, (int)bits - 127);
    int mb = half == HALF_F8E5M2 || half == HALF_F8E5M2FNUZ ? 2 : half == HALF_F4E2M1 ? 1 : 3;
    int eb = half == HALF_F4E2M1 ? 2 : 7 - mb;
    int bias = half == HALF_F8E4M3FN ? 7 : half == HALF_F8E4M3FNUZ ? 8 : half == HALF_F8E5M2 ? 15
             : half == HALF_F8E5M2FNUZ ? 16 : 1;
    unsigned sign = (bits >> (eb + mb)) & 1, e = (bits >> mb) & ((1u << eb) - 1), m = bits & ((1u << mb) - 1);
    if ((half == HALF_F8E4M3FNUZ || half == HALF_F8E5M2FNUZ) && bits == 0x80)
        return NAN;
    if (half == HALF_F8E4M3FN && e == 15 && m == 7)
        return NAN;
    if (half == HALF_F8E5M2 && e == 31)
        return m ? NAN : sign ? -INFINITY : INFINITY;
    double v = e ? ldexp((double)((1u << mb) + m), (int)e - bias - mb) : ldexp((double)m, 1 - bias - mb);
    return sign ? -v : v;
}

/* A tensor's bytes where they are raw (in a file beside the model, or raw_data), checked to be
 * `bytes` long; NULL where the tensor holds its values in a typed field instead. */
static const uint8_t *raw_bytes(imp *I, const Onnx__TensorProto *t, const char *name, const cfx_type *ty,
                                int half, size_t bytes)
{
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return read_external(I, t, bytes, bytes + 1);
    if (!t->has_raw_data)
        return NULL;
    if (t->raw_data.len != bytes)
        fail(I, "tensor '%s' holds %zu bytes of data, its shape %s of %s needs %zu", name, t->raw_data.len,
             tystr(I, ty), half_types[half], bytes);
    return t->raw_data.data;
}

/* The elements per byte of a packed type: int4, uint4 and float4e2m1 two (the first in the low
 * four bits), int2 and uint2 four; 1 for the others */
static int per_byte(int half)
{
    return half == HALF_I4 || half == HALF_U4 || half == HALF_F4E2M1 ? 2 : half == HALF_I2 || half == HALF_U2 ? 4 : 1;
}

/* A tensor of a type of one byte or less an element (the float8 types, float4e2m1, int4, uint4,
 * int2, uint2), as f32 values or i32 ones wrapped to the type: from raw data or int32_data (one
 * byte in each), packed per_byte() to a byte, as onnx's helper writes them. */
static void *byte_data(imp *I, const Onnx__TensorProto *t, const char *name, const cfx_type *ty, int half)
{
    int64_t n = count(ty);
    int k = per_byte(half), bits = 8 / k;
    size_t bytes = (size_t)((n + k - 1) / k);
    const uint8_t *raw = raw_bytes(I, t, name, ty, half, bytes);
    if (!raw && t->n_int32_data != bytes) {
        fail(I, "tensor '%s' holds %zu entries of int32_data, its shape %s of %s needs %zu", name, t->n_int32_data,
             tystr(I, ty), half_types[half], bytes);
    }
    void *data = alloc(I, (size_t)n * 4 + 1);
    for (int64_t i = 0; i < n; i++) {
        unsigned byte = raw ? raw[i / k] : (unsigned)t->int32_data[i / k] & 255;
        unsigned b = (byte >> (bits * (i % k))) & ((1u << bits) - 1);
        if (narrow(half))
            ((int32_t *)data)[i] = (int32_t)narrow_value_of(half, b);
        else
            ((float *)data)[i] = (float)minifloat_value(half, b);
    }
    return data;
}

/* A narrow integer tensor's n elements, in the dtype that holds them: from raw data of 1, 2, 4 or
 * 8 bytes each, or int32_data (uint64_data for uint32 and uint64), as ONNX stores them. */
static void *narrow_data(imp *I, const Onnx__TensorProto *t, const char *name, const cfx_type *ty, int half)
{
    int64_t n = count(ty);
    int wide = half == HALF_U32 || half == HALF_U64; /* in uint64_data */
    int esize = half == HALF_U64 ? 8 : half == HALF_U32 ? 4 : half == HALF_I8 || half == HALF_U8 ? 1 : 2;
    size_t bytes = (size_t)n * (size_t)esize;
    const uint8_t *raw = raw_bytes(I, t, name, ty, half, bytes);
    if (!raw && (wide ? t->n_uint64_data : t->n_int32_data) != (size_t)n) {
        fail(I, "tensor '%s' holds %zu elements, its shape %s needs %lld", name,
             wide ? t->n_uint64_data : t->n_int32_data, tystr(I, ty), (long long)n);
    }
    void *data = alloc(I, (size_t)n * (size_t)cfx_dtype_size(ty->dtype) + 1);
    for (int64_t i = 0; i < n; i++) {
        int64_t x;
        if (raw) { /* little-endian */
            uint64_t u = 0;
            for (int b = 0; b < esize; b++)
                u |= (uint64_t)raw[i * esize + b] << (8 * b);
            x = (int64_t)u; /* uint64's bits */
        } else {
            x = wide ? (int64_t)t->uint64_data[i] : t->int32_data[i];
        }
        seti(ty->dtype, data, i, narrow_value_of(half, x));
    }
    return data;
}

/* A tensor's data, in cfx's dtype; *half says where it was float16 or bfloat16 (held in f32) or
 * a narrow integer type (held in i32 or i64). */
static void *tensor_data(imp *I, const Onnx__TensorProto *t, cfx_type *ty, int *half)
{
    const char *name = t->name && *t->name ? t->name : "(a constant)";
    memset(ty, 0, sizeof *ty);
    ty->dtype = dtype_of(I, t->has_data_type ? t->data_type : 0, name, half);
    int h = *half;
    check_shape(I, name, (int64_t)t->n_dims, t->dims, 1);
    ty->rank = (int)t->n_dims;
    for (size_t d = 0; d < t->n_dims; d++)
        ty->dims[d] = t->dims[d];
    if ((h >= HALF_F8E4M3FN && h <= HALF_F8E8M0) || h >= HALF_I4)
        return byte_data(I, t, name, ty, h);
    if (narrow(h))
        return narrow_data(I, t, name, ty, h);
    if (h)
        return half_data(I, t, name, ty, h);
    int64_t n = count(ty);
    size_t esize = (size_t)cfx_dtype_size(ty->dtype), bytes = (size_t)n * esize;
    /* the data the model holds is checked against the shape before a buffer is made: a shape of
     * a billion elements over four bytes of data is refused, not allocated */
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return read_external(I, t, bytes, bytes);
    if (t->has_raw_data) {
        if (t->raw_data.len != bytes)
            fail(I, "tensor '%s' holds %zu bytes of data, its shape %s needs %zu", name, t->raw_data.len,
                 tystr(I, ty), bytes);
        uint8_t *data = alloc(I, bytes);
        if (bytes)
            memcpy(data, t->raw_data.data, bytes); /* little-endian, as this machine */
        return data;
    }
    size_t have = ty->dtype == CFX_F32 ? t->n_float_data : ty->dtype == CFX_F64 ? t->n_double_data
                : ty->dtype == CFX_I64 ? t->n_int64_data : t->n_int32_data;
    if (have != (size_t)n)
        fail(I, "tensor '%s' holds %zu elements, its shape %s needs %lld", name, have, tystr(I, ty),
             (long long)n);
    uint8_t *data = alloc(I, bytes);
    if (ty->dtype == CFX_F32 && bytes)
        memcpy(data, t->float_data, bytes);
    else if (ty->dtype == CFX_F64 && bytes)
        memcpy(data, t->double_data, bytes);
    else if (ty->dtype == CFX_I64 && bytes)
        memcpy(data, t->int64_data, bytes);
    else
        for (size_t i = 0; i < have; i++)
            seti(ty->dtype, data, (int64_t)i, t->int32_data[i]);
    return data;
}

/* ---- attributes -------------------------------------------------------------------------- */

static const Onnx__AttributeProto *attr(imp *I, const Onnx__NodeProto *n, const char *name)
{
    for (size_t k = 0; k < n->n_attribute; k++) {
        const Onnx__AttributeProto *a = n->attribute[k];
        if (!a || !a->name || strcmp(a->name, name) != 0)
            continue;
        if (a->ref_attr_name && *a->ref_attr_name) {
            if (!I->caller)
                fail(I, "attribute '%s' refers to '%s' outside a function", name, a->ref_attr_name);
            return attr(I, I->caller, a->ref_attr_name);
        }
        return a;
    }
    return NULL;
}

static int64_t attr_int(imp *I, const Onnx__NodeProto *n, const char *name, int64_t def)
{
    const Onnx__AttributeProto *a = attr(I, n, name);
    if (!a)
        return def;
    if (!a->has_i)
        fail(I, "attribute '%s' is not an integer", name);
    return a->i;
}

static double attr_float(imp *I, const Onnx__NodeProto *n, const char *name, double def)
{
    const Onnx__AttributeProto *a = attr(I, n, name);
    if (!a)
        return def;
    if (!a->has_f)
        fail(I, "attribute '%s' is not a float", name);
    return a->f;
}

/* An ints attribute; NULL (and *len 0) when absent. */
static const int64_t *attr_ints(imp *I, const Onnx__NodeProto *n, const char *name, size_t *len)
{
    const Onnx__AttributeProto *a = attr(I, n, name);
    *len = a ? a->n_ints : 0;
    return a ? a->ints : NULL;
}

static const Onnx__GraphProto *attr_graph(imp *I, const Onnx__NodeProto *n, const char *name)
{
    const Onnx__AttributeProto *a = attr(I, n, name);
    if (!a || !a->g)
        fail(I, "the subgraph attribute '%s' is missing", name);
    return a->g;
}

/* A string attribute (a copy), or def where it is absent. */
static const char *attr_str(imp *I, const Onnx__NodeProto *n, const char *name, const char *def)
{
    const Onnx__AttributeProto *a = attr(I, n, name);
    if (!a)
        return def;
    if (!a->has_s)
        fail(I, "attribute '%s' is not a string", name);
    char *s = alloc(I, a->s.len + 1);
    copy(s, a->s.data, a->s.len);
    s[a->s.len] = '\0';
    return s;
}

/* ---- inputs and outputs of a node -------------------------------------------------------- */

static int has_input(const Onnx__NodeProto *n, size_t k)
{
    return k < n->n_input && n->input[k] && n->input[k][0];
}

static ival *in(imp *I, const Onnx__NodeProto *n, size_t k)
{
    if (!has_input(n, k))
        fail(I, "input %zu is missing", k);
    ival *v = lookup(I, n->input[k]);
    if (!v)
        fail(I, "input '%s' is not defined before this node", n->input[k]);
    return v;
}

static ival *in_opt(imp *I, const Onnx__NodeProto *n, size_t k)
{
    return has_input(n, k) ? in(I, n, k) : NULL;
}

static ival *known(imp *I, const Onnx__NodeProto *n, size_t k, const char *what)
{
    ival *v = in(I, n, k);
    if (!v->data)
        fail(I, "%s ('%s') must be known when the model is imported: cfx needs static shapes", what,
             v->name);
    return v;
}

static const char *out_name(imp *I, const Onnx__NodeProto *n, size_t k)
{
    if (k >= n->n_output || !n->output[k])
        fail(I, "output %zu is missing", k);
    return n->output[k];
}

/* Binds output k of n to a fresh variable of type t and returns the variable's name. */
static void add_direct(imp *I, const char *name, const char *id, int depth, int from)
{
    for (int k = 0; k < I->ndirect; k++)
        if (I->direct[k].depth == depth && !strcmp(I->direct[k].name, name))
            return; /* one value given back twice: the first variable takes it */
    grow(I, &I->direct, I->ndirect, &I->capdirect, sizeof *I->direct);
    I->direct[I->ndirect++] = (struct direct){name, id, depth, from};
}

static void drop_direct(imp *I, int depth)
{
    while (I->ndirect > 0 && I->direct[I->ndirect - 1].depth >= depth)
        I->ndirect--;
}

/* The variable for value `name` computed at the current node: the enclosing If's or Loop's own
 * where it may take it directly, else a fresh one. */
static const char *var_for(imp *I, const char *name)
{
    for (int k = 0; k < I->ndirect; k++) {
        struct direct *d = &I->direct[k];
        if (d->id && d->depth == I->depth && I->node_index >= d->from && !strcmp(d->name, name)) {
            const char *id = d->id;
            d->id = NULL;
            /* the variable takes a new value: run-time terms that read it are stale from here */
            size_t len = strlen(id);
            for (int j = 0; j < I->nvals; j++) {
                const char *sym = I->vals[j]->sym;
                if (sym && !strncmp(sym, id, len) && (sym[len] == '\0' || sym[len] == '['))
                    I->vals[j]->sym = NULL;
                if (I->vals[j]->elem && !strcmp(I->vals[j]->elem, id))
                    I->vals[j]->elem = NULL;
            }
            return id;
        }
    }
    return new_id(I, "v_", name);
}

/* The variable waiting for value `name` at depth where it is no live value (a graph result not
 * written yet), taken; NULL where there is none. */
static const char *fresh_direct(imp *I, const char *name, int depth)
{
    for (int k = 0; k < I->ndirect; k++) {
        struct direct *d = &I->direct[k];
        if (d->id && d->depth == depth && d->from < 0 && !strcmp(d->name, name) && !lookup_id(I, d->id)) {
            const char *id = d->id;
            d->id = NULL;
            return id;
        }
    }
    return NULL;
}

/* Binds output k of n to a variable of type t and returns the variable's name. */
static const char *out_var(imp *I, const Onnx__NodeProto *n, size_t k, const cfx_type *t)
{
    const char *name = out_name(I, n, k);
    check_dims(I, name, t->rank, t->dims);
    const char *id = var_for(I, name);
    bind(I, name, t, id, NULL);
    I->pure_id = !strncmp(id, "v_", 2) ? id : NULL;
    return id;
}

static void out_known(imp *I, const Onnx__NodeProto *n, size_t k, const cfx_type *t, void *data)
{
    const char *name = out_name(I, n, k);
    check_shape(I, name, t->rank, t->dims, 1);
    bind(I, name, t, NULL, data);
}

/* ---- shapes ------------------------------------------------------------------------------- */

static int norm_axis(imp *I, int64_t axis, int rank, const char *what)
{
    if (axis < -rank || axis >= rank)
        fail(I, "%s %lld is out of range for rank %d", what, (long long)axis, rank);
    return (int)(axis < 0 ? axis + rank : axis);
}

/* numpy's broadcast of a and b into out; an error when they do not broadcast */
static void broadcast(imp *I, const cfx_type *a, const cfx_type *b, cfx_type *out)
{
    int r = a->rank > b->rank ? a->rank : b->rank;
    out->rank = r;
    for (int d = 0; d < r; d++) {
        int da = d - (r - a->rank), db = d - (r - b->rank);
        int64_t x = da >= 0 ? a->dims[da] : 1, y = db >= 0 ? b->dims[db] : 1;
        if (x != y && x != 1 && y != 1)
            fail(I, "shapes %s and %s do not broadcast", tystr(I, a), tystr(I, b));
        out->dims[d] = x == 1 ? y : x;
    }
}

/* flat index into v of the element of out's flat index i, by broadcasting */
static int64_t bindex(const cfx_type *out, const cfx_type *v, int64_t i)
{
    int64_t idx[CFX_TYPE_MAX_RANK], k = 0, stride = 1;
    for (int d = out->rank - 1; d >= 0; d--) {
        idx[d] = i % out->dims[d];
        i /= out->dims[d];
    }
    for (int d = v->rank - 1; d >= 0; d--) {
        int od = d + out->rank - v->rank;
        k += (v->dims[d] == 1 ? 0 : idx[od]) * stride;
        stride *= v->dims[d];
    }
    return k;
}

/* ", " separated dims "[2, 3]" for reshape */
static const char *dims_list(imp *I, const cfx_type *t)
{
    strbuf sb = {0};
    sb_puts(&sb, "[");
    for (int d = 0; d < t->rank; d++)
        sb_printf(&sb, "%s%lld", d ? ", " : "", (long long)t->dims[d]);
    sb_puts(&sb, "]");
    if (sb.oom)
        fail(I, "out of memory");
    return take(I, sb_take(&sb));
}

/* An expression of x reshaped to t (x has t's element count). */
static const char *reshaped(imp *I, const char *x, const cfx_type *from, const cfx_type *t)
{
    if (same_type(from, t) || (from->rank == t->rank && !memcmp(from->dims, t->dims, sizeof t->dims[0] * (size_t)t->rank)))
        return x;
    if (t->rank == 0) {
        if (from->rank == 1)
            return fmt(I, "%s[0]", x);
        return fmt(I, "reshape(%s, [1])[0]", x);
    }
    return fmt(I, "reshape(%s, %s)", x, dims_list(I, t));
}

/* A subscript selecting index `idx` along axis of a rank-r tensor: "[:, :, i]" */
static const char *subscript(imp *I, int rank, int axis, const char *idx)
{
    strbuf sb = {0};
    sb_puts(&sb, "[");
    for (int d = 0; d <= axis && d < rank; d++)
        sb_printf(&sb, "%s%s", d ? ", " : "", d == axis ? idx : ":");
    sb_puts(&sb, "]");
    if (sb.oom)
        fail(I, "out of memory");
    return take(I, sb_take(&sb));
}

static const char *zeros_of(imp *I, const cfx_type *t)
{
    if (t->rank == 0)
        return fmt(I, "cast(0, %s)", cfx_dtype_name(t->dtype));
    return fmt(I, "zeros(%s)", tystr(I, t));
}

/* ---- integers known up to a run-time term ------------------------------------------------- */

static int one_int_type(const cfx_type *t)
{
    return (t->dtype == CFX_I32 || t->dtype == CFX_I64) && count(t) == 1;
}

static int one_int(const ival *v)
{
    return one_int_type(&v->ty);
}

/* v as sym + off: 1 for a one-element integer of run time, 0 otherwise */
static int sym_of(imp *I, ival *v, const char **sym, int64_t *off)
{
    if (!one_int(v) || v->data)
        return 0;
    if (v->sym) {
        *sym = v->sym;
        *off = v->off;
        return 1;
    }
    const char *x = ref(I, v);
    *sym = v->ty.rank == 0 ? x : v->ty.rank == 1 ? fmt(I, "%s[0]", x) : fmt(I, "reshape(%s, [1])[0]", x);
    *off = 0;
    return 1;
}

/* The output just bound for n's output 0 is the same integer as v (a reshape, a cast, an
 * identity): it keeps v's run-time term. */
static void keep_sym(imp *I, const Onnx__NodeProto *n, ival *v)
{
    ival *o = lookup(I, out_name(I, n, 0));
    const char *sym;
    int64_t off;
    if (o && one_int(o) && !o->data && sym_of(I, v, &sym, &off)) {
        o->sym = sym;
        o->off = off;
    }
}

/* ---- folding at import -------------------------------------------------------------------- */

/* Elementwise binary ops, on known data and as cfx text. */
enum bin { B_ADD, B_SUB, B_MUL, B_DIV, B_POW, B_MIN, B_MAX, B_MOD, B_FMOD, B_EQ, B_LT, B_GT, B_LE, B_GE,
           B_AND, B_OR, B_XOR };

static int bin_is_cmp(enum bin b)
{
    return b >= B_EQ && b <= B_GE;
}

static int bin_is_logic(enum bin b)
{
    return b >= B_AND;
}

static double fold_real(enum bin op, double a, double b)
{
    switch (op) {
    case B_ADD: return a + b;
    case B_SUB: return a - b;
    case B_MUL: return a * b;
    case B_DIV: return a / b;
    case B_POW: return pow(a, b);
    case B_MIN: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
    case B_MAX: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
    case B_MOD: { double r = fmod(a, b); return r != 0 && ((r < 0) != (b < 0)) ? r + b : r; }
    case B_FMOD: return fmod(a, b);
    case B_EQ: return a == b;
    case B_LT: return a < b;
    case B_GT: return a > b;
    case B_LE: return a <= b;
    case B_GE: return a >= b;
    case B_AND: return a != 0 && b != 0;
    case B_OR: return a != 0 || b != 0;
    case B_XOR: return (a != 0) != (b != 0);
    }
    return 0;
}

/* integer ops with ONNX's meaning: Div truncates, Mod takes the divisor's sign; 0 for a divisor
 * of 0 is never reached (the caller leaves that to run time) */
static int64_t fold_int(enum bin op, int64_t a, int64_t b, int *ok)
{
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (op) {
    case B_ADD: return (int64_t)(ua + ub);
    case B_SUB: return (int64_t)(ua - ub);
    case B_MUL: return (int64_t)(ua * ub);
    case B_DIV: if (b == 0 || (a == INT64_MIN && b == -1)) { *ok = 0; return 0; } return a / b;
    case B_MOD: { if (b == 0 || b == -1) { *ok = b != 0; return 0; } int64_t r = a % b; return r != 0 && ((r < 0) != (b < 0)) ? r + b : r; }
    case B_FMOD: if (b == 0 || b == -1) { *ok = b != 0; return 0; } return a % b;
    case B_MIN: return a < b ? a : b;
    case B_MAX: return a > b ? a : b;
    case B_POW: { int64_t r = 1; if (b < 0) { *ok = 0; return 0; } for (int64_t k = 0; k < b && k < 64; k++) r = (int64_t)((uint64_t)r * (uint64_t)a); return r; }
    case B_EQ: return a == b;
    case B_LT: return a < b;
    case B_GT: return a > b;
    case B_LE: return a <= b;
    case B_GE: return a >= b;
    case B_AND: return a && b;
    case B_OR: return a || b;
    case B_XOR: return !a != !b;
    }
    return 0;
}

static const char *bin_text(imp *I, enum bin op, cfx_dtype dt, const char *a, const char *b)
{
    int integer = !is_real(dt) && dt != CFX_BOOL;
    switch (op) {
    case B_ADD: return fmt(I, "%s + %s", a, b);
    case B_SUB: return fmt(I, "%s - %s", a, b);
    case B_MUL: return fmt(I, "%s * %s", a, b);
    case B_DIV: return integer ? fmt(I, "truncdiv(%s, %s)", a, b) : fmt(I, "%s / %s", a, b);
    case B_POW: return fmt(I, "pow(%s, %s)", a, b);
    case B_MIN: return fmt(I, "min(%s, %s)", a, b);
    case B_MAX: return fmt(I, "max(%s, %s)", a, b);
    case B_MOD: return fmt(I, "%s %% %s", a, b);
    case B_FMOD: return fmt(I, "fmod(%s, %s)", a, b);
    case B_EQ: return fmt(I, "%s == %s", a, b);
    case B_LT: return fmt(I, "%s < %s", a, b);
    case B_GT: return fmt(I, "%s > %s", a, b);
    case B_LE: return fmt(I, "%s <= %s", a, b);
    case B_GE: return fmt(I, "%s >= %s", a, b);
    case B_AND: return fmt(I, "%s and %s", a, b);
    case B_OR: return fmt(I, "%s or %s", a, b);
    case B_XOR: return fmt(I, "%s != %s", a, b);
    }
    return "";
}

/* A binary node: folded when both operands are known and small, else one statement. */
static void binary(imp *I, const Onnx__NodeProto *n, enum bin op, ival *a, ival *b)
{
    cfx_type out;
    memset(&out, 0, sizeof out);
    if (bin_is_logic(op) && (a->ty.dtype != CFX_BOOL || b->ty.dtype != CFX_BOOL))
        fail(I, "the operands must be bool, not %s and %s", tystr(I, &a->ty), tystr(I, &b->ty));
    if (op != B_POW && a->ty.dtype != b->ty.dtype)
        fail(I, "the operands' types differ: %s and %s", tystr(I, &a->ty), tystr(I, &b->ty));
    if (bin_is_cmp(op) && op != B_EQ && a->ty.dtype == CFX_BOOL)
        fail(I, "comparing bools by order is not supported");
    broadcast(I, &a->ty, &b->ty, &out);
    out.dtype = bin_is_cmp(op) || bin_is_logic(op) ? CFX_BOOL : a->ty.dtype;
    if (count(&out) == 0) { /* an operand of 0 elements: so is the result, known by its type */
        out_known(I, n, 0, &out, alloc(I, 1));
        return;
    }
    check_dims(I, out_name(I, n, 0), out.rank, out.dims);
    if (a->data && b->data && count(&out) <= ONNX_FOLD_MAX) {
        void *data = new_data(I, &out);
        int ok = 1;
        for (int64_t i = 0; i < count(&out) && ok; i++) {
            int64_t ia = bindex(&out, &a->ty, i), ib = bindex(&out, &b->ty, i);
            if (is_real(a->ty.dtype))
                setd(out.dtype, data, i, fold_real(op, getd(a, ia), getd(b, ib)));
            else if (op == B_POW && is_real(b->ty.dtype))
                setd(out.dtype, data, i, fold_real(op, getd(a, ia), getd(b, ib)));
            else
                seti(out.dtype, data, i, fold_int(op, geti(a, ia), geti(b, ib), &ok));
        }
        if (ok) {
            out_known(I, n, 0, &out, data);
            return;
        }
    }
    const char *x = ref(I, a), *y = ref(I, b);
    if (op == B_POW && b->ty.dtype != a->ty.dtype)
        y = fmt(I, "cast(%s, %s)", y, cfx_dtype_name(a->ty.dtype));
    if ((op == B_MOD) && is_real(a->ty.dtype) && attr_int(I, n, "fmod", 0) == 0)
        op = B_MOD;
    const char *e = bin_text(I, op, a->ty.dtype, x, y);
    const char *v = out_var(I, n, 0, &out);
    line(I, "%s = %s", v, e);
    if (op == B_MUL && a->ty.rank == 1 && same_type(&a->ty, &b->ty) && is_real(a->ty.dtype)) {
        ival *o = lookup(I, out_name(I, n, 0));
        o->dot_a = x;
        o->dot_b = y;
    }
    /* sym + k: an integer of run time plus or minus a known one */
    const char *sym;
    int64_t off;
    ival *o = lookup(I, out_name(I, n, 0));
    if ((op == B_ADD || op == B_SUB) && one_int_type(&out)) {
        if (b->data && one_int(b) && sym_of(I, a, &sym, &off)) {
            o->sym = sym;
            o->off = op == B_ADD ? off + geti(b, 0) : off - geti(b, 0);
        } else if (op == B_ADD && a->data && one_int(a) && sym_of(I, b, &sym, &off)) {
            o->sym = sym;
            o->off = off + geti(a, 0);
        }
    }
}

/* Unary elementwise ops: cfx's name for each (NULL: written out below). */
static int unary(imp *I, const Onnx__NodeProto *n, const char *op)
{
    static const struct { const char *onnx, *cfx; int real_only; } ops[] = {
        {"Neg", "neg", 0}, {"Abs", "abs", 0}, {"Exp", "exp", 1}, {"Log", "log", 1},
        {"Sqrt", "sqrt", 1}, {"Tanh", "tanh", 1}, {"Sigmoid", "sigmoid", 1}, {"Relu", "relu", 0},
        {"Sin", "sin", 1}, {"Cos", "cos", 1}, {"Tan", "tan", 1}, {"Ceil", "ceil", 1},
        {"Floor", "floor", 1}, {"Erf", "erf", 1}, {"Sign", "sign", 0}, {"Round", "round", 1},
        {"Not", "not", 0}, {"Reciprocal", NULL, 1}, {"Identity", NULL, 0}, {"IsNaN", NULL, 1},
        {"Atan", "atan", 1}, {"Asin", "asin", 1}, {"Acos", "acos", 1}, {"Asinh", "asinh", 1},
        {"Acosh", "acosh", 1}, {"Atanh", "atanh", 1},
    };
    int k = -1;
    for (int i = 0; i < (int)(sizeof ops / sizeof *ops); i++)
        if (strcmp(ops[i].onnx, op) == 0)
            k = i;
    if (k < 0)
        return 0;
    ival *x = in(I, n, 0);
    if (ops[k].real_only && !is_real(x->ty.dtype))
        fail(I, "the operand is %s; %s takes float or double", tystr(I, &x->ty), op);
    if (strcmp(op, "Not") == 0 && x->ty.dtype != CFX_BOOL)
        fail(I, "the operand is %s; Not takes bool", tystr(I, &x->ty));
    if (strcmp(op, "Not") != 0 && strcmp(op, "Identity") != 0 && x->ty.dtype == CFX_BOOL)
        fail(I, "the operand is %s; %s takes numbers", tystr(I, &x->ty), op);
    if (strcmp(op, "Identity") == 0) {
        bind(I, out_name(I, n, 0), &x->ty, x->id, x->data); /* an alias: values never change */
        keep_sym(I, n, x);
        return 1;
    }
    cfx_type t = x->ty;
    if (strcmp(op, "IsNaN") == 0)
        t.dtype = CFX_BOOL;
    if (x->data && count(&t) == 0) { /* 0 elements: so is the result, known by its type */
        out_known(I, n, 0, &t, alloc(I, 1));
        return 1;
    }
    if (x->data && count(&t) <= ONNX_FOLD_MAX && (strcmp(op, "Neg") == 0 || strcmp(op, "Not") == 0 ||
                                                  strcmp(op, "Abs") == 0)) {
        void *data = new_data(I, &t);
        for (int64_t i = 0; i < count(&t); i++) {
            if (strcmp(op, "Not") == 0)
                seti(t.dtype, data, i, !geti(x, i));
            else if (is_real(t.dtype))
                setd(t.dtype, data, i, op[0] == 'N' ? -getd(x, i) : fabs(getd(x, i)));
            else
                seti(t.dtype, data, i, op[0] == 'N' ? (int64_t)(0 - (uint64_t)geti(x, i)) :
                                       geti(x, i) < 0 ? (int64_t)(0 - (uint64_t)geti(x, i)) : geti(x, i));
        }
        out_known(I, n, 0, &t, data);
        return 1;
    }
    /* whole numbers of known values: a length computed from the data (Range's, expanded) */
    int whole = !strcmp(op, "Ceil") || !strcmp(op, "Floor") || !strcmp(op, "Round") || !strcmp(op, "Relu");
    if (x->data && count(&t) <= ONNX_FOLD_MAX && whole) {
        void *data = new_data(I, &t);
        for (int64_t i = 0; i < count(&t); i++) {
            if (!is_real(t.dtype)) { /* Relu */
                seti(t.dtype, data, i, geti(x, i) > 0 ? geti(x, i) : 0);
                continue;
            }
            double d = getd(x, i); /* of f32 or f64: each result is of the same type, exactly */
            setd(t.dtype, data, i, op[0] == 'C' ? ceil(d) : op[0] == 'F' ? floor(d) : op[1] == 'o' ? rint(d)
                                   : isnan(d) || d > 0 ? d : 0.0);
        }
        out_known(I, n, 0, &t, data);
        return 1;
    }
    const char *a = ref(I, x);
    const char *e = ops[k].cfx ? fmt(I, "%s(%s)", ops[k].cfx, a)
                  : strcmp(op, "Reciprocal") == 0 ? fmt(I, "1.0 / %s", a)
                  : fmt(I, "%s != %s", a, a);
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = %s", v, e);
    return 1;
}

/* ---- nodes composed of nodes, and what the ops share --------------------------------------------
 * An op of many steps (Attention, LSTM, a quantized Conv) is written as the nodes it is made of:
 * part() binds one expression to a value of its own and step() runs another op's function on
 * values already bound, so every step folds, rounds and checks as that op does. */

/* Reads known integer data (a shape, axes, starts) into out; returns the count. */
static int64_t ints_of(imp *I, ival *v, int64_t *out, int64_t cap, const char *what)
{
    int64_t c = count(&v->ty);
    if (v->ty.rank > 1 || c > cap)
        fail(I, "%s ('%s') must be a vector of at most %lld integers", what, v->name, (long long)cap);
    if (is_real(v->ty.dtype))
        fail(I, "%s ('%s') must be integers", what, v->name);
    for (int64_t i = 0; i < c; i++)
        out[i] = geti(v, i);
    return c;
}

/* A list of integers a node takes from input k (known at import) where it has one, else from
 * attribute `name` (older opsets); 0 entries where it has neither. */
static int64_t ints_arg(imp *I, const Onnx__NodeProto *n, size_t k, const char *name, int64_t *out,
                        int64_t cap, const char *what)
{
    if (has_input(n, k))
        return ints_of(I, known(I, n, k, what), out, cap, what);
    size_t len;
    const int64_t *a = attr_ints(I, n, name, &len);
    if (!a)
        return 0;
    if ((int64_t)len > cap)
        fail(I, "%s has %zu entries, at most %lld are taken", what, len, (long long)cap);
    copy(out, a, len * sizeof *a);
    return (int64_t)len;
}

/* A real literal for the text: "2.0", "-0.75" (it takes the dtype of the other operand). */
static const char *real_lit(imp *I, double v)
{
    const char *s = fmt(I, "%.17g", v);
    return strpbrk(s, ".en") ? s : fmt(I, "%s.0", s);
}

static const char *real_const(imp *I, double x, cfx_dtype dt, const char *why)
{
    cfx_type t = mktype(dt, 0, NULL);
    void *data = new_data(I, &t);
    setd(dt, data, 0, x);
    ival v = {.name = why, .ty = t, .data = data};
    return ref(I, &v);
}

/* One integer known at import from input k (a scalar or one element), as `what`. */
static int64_t known_int(imp *I, const Onnx__NodeProto *n, size_t k, const char *what)
{
    int64_t v[1];
    if (ints_of(I, known(I, n, k, what), v, 1, what) != 1)
        fail(I, "%s has no value", what);
    return v[0];
}

/* A value of a composed op (Attention, RotaryEmbedding): expr in a variable of its own, bound
 * under a name made from the node's first output and tag. */
static ival *part(imp *I, const Onnx__NodeProto *n, const char *tag, const cfx_type *t, int half, const char *expr)
{
    const char *name = fmt(I, "%s#%s", out_name(I, n, 0), tag);
    const char *id = new_id(I, "t_", name);
    line(I, "%s = %s", id, expr);
    ival *v = bind(I, name, t, id, NULL);
    v->half = half;
    return v;
}

/* One of the importer's own ops (op_transpose, op_matmul, op_gather) run as a step of n, on the
 * values ins, with at most one attribute; its result, bound as part() binds (tag NULL: as n's
 * first output). Messages still name n. */
static ival *step_with(imp *I, const Onnx__NodeProto *n, const char *tag, void (*fn)(imp *, const Onnx__NodeProto *),
                       ival **ins, size_t nin, Onnx__AttributeProto **attrs, size_t nattr)
{
    Onnx__NodeProto s = *n;
    char **names = alloc(I, nin * sizeof *names);
    char *out = tag ? fmt(I, "%s#%s", out_name(I, n, 0), tag) : (char *)out_name(I, n, 0);
    if (!tag)
        tag = "out";
    for (size_t k = 0; k < nin; k++) {
        names[k] = fmt(I, "%s#%s_in%zu", out_name(I, n, 0), tag, k);
        bind(I, names[k], &ins[k]->ty, ins[k]->id, ins[k]->data)->half = ins[k]->half;
    }
    s.input = names;
    s.n_input = nin;
    s.output = &out;
    s.n_output = 1;
    s.attribute = attrs;
    s.n_attribute = nattr;
    fn(I, &s);
    ival *v = lookup(I, out);
    v->half = ins[0]->half;
    return v;
}

/* step_with one attribute, or none */
static ival *step(imp *I, const Onnx__NodeProto *n, const char *tag, void (*fn)(imp *, const Onnx__NodeProto *),
                  ival **ins, size_t nin, Onnx__AttributeProto *a)
{
    return step_with(I, n, tag, fn, ins, nin, a ? &a : NULL, a ? 1 : 0);
}

/* x with its axes permuted, by the importer's Transpose */
static ival *permuted_part(imp *I, const Onnx__NodeProto *n, const char *tag, ival *x, const int64_t *perm)
{
    Onnx__AttributeProto a = {0};
    a.name = "perm";
    a.ints = (int64_t *)perm;
    a.n_ints = (size_t)x->ty.rank;
    return step(I, n, tag, op_transpose, &x, 1, &a);
}

/* a @ b by the importer's MatMul (batched as it writes them), rounded to the half type */
static ival *product_part(imp *I, const Onnx__NodeProto *n, const char *tag, ival *a, ival *b, int half)
{
    ival *ab[2] = {a, b};
    ival *v = step(I, n, tag, op_matmul, ab, 2, NULL);
    if (half)
        line(I, "%s = %s", v->id, half_rounded(I, half, v->id));
    v->half = half;
    return v;
}

static const char *sub_dims(imp *I, const char *x, int rank, int axis, int64_t lo, int64_t hi)
{
    strbuf sb = {0};
    sb_printf(&sb, "%s[", x);
    for (int d = 0; d <= axis && d < rank; d++)
        sb_printf(&sb, "%s%s", d ? ", " : "", d == axis ? fmt(I, "%lld:%lld", (long long)lo, (long long)hi) : ":");
    sb_puts(&sb, "]");
    if (sb.oom)
        fail(I, "out of memory");
    return take(I, sb_take(&sb));
}

/* Loops over every index of t (as i0, i1, ...), writing `body` with those names inside. */
static void element_loops(imp *I, const cfx_type *t, const char **ix, int open)
{
    if (open) {
        for (int d = 0; d < t->rank; d++) {
            ix[d] = new_id(I, "i_", fmt(I, "%d", d));
            line(I, "for %s in range(%lld) {", ix[d], (long long)t->dims[d]);
            I->indent++;
        }
    } else {
        for (int d = 0; d < t->rank; d++) {
            I->indent--;
            line(I, "}");
        }
    }
}

static const char *index_list(imp *I, const char **ix, int rank)
{
    strbuf sb = {0};
    for (int d = 0; d < rank; d++)
        sb_printf(&sb, "%s%s", d ? ", " : "", ix[d]);
    if (sb.oom)
        fail(I, "out of memory");
    return take(I, sb_take(&sb));
}

/* "[b, :, p, :]": index `first` on axis 0, `at` on axis, ':' elsewhere (rank r) */
static const char *index_at(imp *I, int r, const char *first, int axis, const char *at)
{
    strbuf sb = {0};
    sb_puts(&sb, "[");
    for (int d = 0; d < r; d++)
        sb_printf(&sb, "%s%s", d ? ", " : "", d == 0 ? first : d == axis ? at : ":");
    sb_puts(&sb, "]");
    if (sb.oom)
        fail(I, "out of memory");
    return take(I, sb_take(&sb));
}

/* "(2, 0, 1)": a permutation for permute */
static const char *perm_text(imp *I, const int *perm, int rank)
{
    strbuf sb = {0};
    sb_puts(&sb, "(");
    for (int d = 0; d < rank; d++)
        sb_printf(&sb, "%s%d", d ? ", " : "", perm[d]);
    sb_puts(&sb, rank == 1 ? ",)" : ")");
    if (sb.oom)
        fail(I, "out of memory");
    return take(I, sb_take(&sb));
}

/* A known i64 vector as a module constant, for a loop to read. */
static const char *index_table(imp *I, const char *name, const int64_t *vals, int64_t len)
{
    cfx_type t = mktype(CFX_I64, 1, &len);
    int64_t *d = new_data(I, &t);
    copy(d, vals, (size_t)len * sizeof *d);
    ival v = {.name = name, .ty = t, .data = d};
    return ref(I, &v);
}

/* Element i of `to` (a tensor of to's type) from known x, by a map of each axis's output index to
 * the input's (-1: `fill`, a known one-element value, or 0 where there is none). */
static void *fold_map(imp *I, ival *x, const cfx_type *to, int64_t *const *map, ival *fill)
{
    void *data = new_data(I, to);
    for (int64_t i = 0; i < count(to); i++) {
        int64_t rem = i, src = 0, stride = 1, inside = 1;
        int64_t idx[CFX_TYPE_MAX_RANK];
        for (int d = to->rank - 1; d >= 0; d--) {
            idx[d] = rem % to->dims[d];
            rem /= to->dims[d];
        }
        for (int d = to->rank - 1; d >= 0; d--) {
            int64_t j = map[d][idx[d]];
            inside &= j >= 0;
            src += j * stride;
            stride *= x->ty.dims[d];
        }
        ival *from = inside ? x : fill;
        int64_t at = inside ? src : 0;
        if (!from)
            seti(to->dtype, data, i, 0);
        else if (is_real(to->dtype))
            setd(to->dtype, data, i, getd(from, at));
        else
            seti(to->dtype, data, i, geti(from, at));
    }
    return data;
}

/* "[a:b, :, c:d]": a box of a rank-r tensor, lo[d] to hi[d] along each axis (whole where the
 * box spans it, len[d]). */
static const char *box_text(imp *I, int r, const int64_t *lo, const int64_t *hi, const int64_t *len)
{
    strbuf sb = {0};
    sb_puts(&sb, "[");
    for (int d = 0; d < r; d++) {
        if (lo[d] == 0 && hi[d] == len[d])
            sb_printf(&sb, "%s:", d ? ", " : "");
        else
            sb_printf(&sb, "%s%lld:%lld", d ? ", " : "", (long long)lo[d], (long long)hi[d]);
    }
    sb_puts(&sb, "]");
    if (sb.oom)
        fail(I, "out of memory");
    return take(I, sb_take(&sb));
}

/* The length along `axis` (rank r) of output k, whose length depends on the data: the model's
 * declared shape, or 0 where it declares none. */
static int64_t declared_length(imp *I, const Onnx__NodeProto *n, size_t k, int r, int axis)
{
    cfx_type decl;
    if (k >= n->n_output || !n->output[k] || !*n->output[k] ||
        !declared_type(I, I->mp->graph, n->output[k], &decl) || decl.rank != r || decl.dims[axis] < 1)
        return 0;
    return decl.dims[axis];
}

/* The refusal of an output whose length depends on data that is neither declared nor known. The
 * words "must be known when the model is imported" let a caller who gave the input's value have
 * it fixed (onnx_import_model's second try). */
static void data_length_unknown(imp *I, const Onnx__NodeProto *n, size_t k, ival *x)
{
    fail(I, "the length of output '%s' depends on the data, and the model declares none: '%s' must be known "
         "when the model is imported (cfx fixes every shape at import)", clean(I, out_name(I, n, k)),
         clean(I, x->name));
}

/* ---- Cast and CastLike ----------------------------------------------------------------------- */

static void op_cast(imp *I, const Onnx__NodeProto *n, cfx_dtype to)
{
    ival *x = in(I, n, 0);
    cfx_type t = x->ty;
    t.dtype = to;
    if (x->ty.dtype == to) {
        bind(I, out_name(I, n, 0), &t, x->id, x->data);
        return;
    }
    if (x->narrow && to == CFX_I32) { /* int64 of an int32, back to int32 */
        const char *v = out_var(I, n, 0, &t);
        line(I, "%s = %s", v, x->narrow);
        return;
    }
    if (x->data && count(&t) <= ONNX_FOLD_MAX) {
        void *data = new_data(I, &t);
        for (int64_t i = 0; i < count(&t); i++) {
            if (is_real(to))
                setd(to, data, i, getd(x, i));
            else if (is_real(x->ty.dtype)) {
                double d = getd(x, i);
                /* as cfx's cast: toward zero, saturating, NaN to 0 (ONNX leaves those undefined) */
                double lo = to == CFX_I32 ? -2147483648.0 : -9223372036854775808.0;
                double hi = to == CFX_I32 ? 2147483647.0 : 9223372036854775807.0;
                if (to == CFX_BOOL)
                    seti(to, data, i, d != 0);
                else
                    seti(to, data, i, isnan(d) ? 0 : d <= lo ? (int64_t)lo : d >= hi ? (to == CFX_I32 ? INT32_MAX : INT64_MAX) : (int64_t)d);
            } else
                seti(to, data, i, geti(x, i));
        }
        out_known(I, n, 0, &t, data);
        return;
    }
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = cast(%s, %s)", v, ref(I, x), cfx_dtype_name(to));
    if (!is_real(x->ty.dtype) && x->ty.dtype != CFX_BOOL && one_int_type(&t))
        keep_sym(I, n, x);
}

/* A Cast of uint64 (held in i64 as its bits) to a real: the value as unsigned, its high and low
 * 32 bits each exact in f64, so the sum rounds once (an f32 or a half type rounds again from
 * that f64). A Cast of a real to uint64: toward zero, a value of 2^63 or more by way of
 * x - 2^64 (exact), a negative one as its i64 (-1.0 gives 2^64 - 1, as numpy's astype on x86);
 * NaN, and values of 2^64 or more, which ONNX leaves undefined, as cfx's cast (0, saturated). */
static void op_cast_u64_real(imp *I, const Onnx__NodeProto *n, ival *x, cfx_dtype to, int half)
{
    cfx_type t = x->ty;
    t.dtype = to;
    const char *e = ref(I, x);
    if (x->half == HALF_U64) {
        const char *f = fmt(I, "cast((%s >> 32) & 4294967295, f64) * 4294967296.0 + cast(%s & 4294967295, f64)", e, e);
        if (half == HALF_F16 || half == HALF_BF16) {
            f = half_rounded(I, half, f);
            I->node_rounded = 1;
        } else if (minifloat(half)) {
            f = minifloat_cast_expr(I, out_name(I, n, 0), half, attr_int(I, n, "saturate", 1) != 0,
                                    half == HALF_F8E8M0 ? e8m0_mode(I, n) : 0, f);
            I->node_rounded = 1;
        }
        line(I, "%s = %s", out_var(I, n, 0, &t), to == CFX_F64 ? f : fmt(I, "cast(%s, %s)", f, cfx_dtype_name(to)));
        return;
    }
    line(I, "%s = where(%s >= 9223372036854775808.0, cast(%s - 18446744073709551616.0, i64), cast(%s, i64))",
         out_var(I, n, 0, &t), e, e, e);
}

/* A Cast to a float8 type or float4e2m1 (minifloat_cast_value), from the value itself as for
 * float16: an f64 or an integer (by way of f64) in f64, an f32 in f32. */
static void op_cast_minifloat(imp *I, const Onnx__NodeProto *n, ival *x, int half)
{
    int sat = attr_int(I, n, "saturate", 1) != 0, mode = half == HALF_F8E8M0 ? e8m0_mode(I, n) : 0;
    I->node_rounded = 1;
    if (x->half == half) { /* of that type already */
        op_cast(I, n, CFX_F32);
        return;
    }
    cfx_type t = x->ty;
    t.dtype = CFX_F32;
    if (x->data && count(&t) <= ONNX_FOLD_MAX) {
        float *d = new_data(I, &t);
        for (int64_t i = 0; i < count(&t); i++)
            d[i] = (float)minifloat_cast_value(half, sat, mode, x->ty.dtype == CFX_BOOL ? (double)(geti(x, i) != 0)
                                                                                    : getd(x, i));
        out_known(I, n, 0, &t, d);
        return;
    }
    const char *e = ref(I, x);
    if (!is_real(x->ty.dtype))
        e = fmt(I, "cast(%s, f64)", e);
    const char *y = minifloat_cast_expr(I, out_name(I, n, 0), half, sat, mode, e);
    line(I, "%s = %s", out_var(I, n, 0, &t), x->ty.dtype == CFX_F32 ? y : fmt(I, "cast(%s, f32)", y));
}

/* A Cast to float16 or bfloat16 rounds once from the value itself: from f64 (or an integer, by
 * way of f64, exact up to 2^53) with the rounding in f64, since rounding to f32 first could round
 * twice; from f32 after the cast (round_results). A Cast to a narrow integer type casts to the
 * dtype holding it (from a real, toward zero, as numpy's astype) and is wrapped after it. */
static void op_cast_half(imp *I, const Onnx__NodeProto *n, cfx_dtype to, int half)
{
    ival *x = in(I, n, 0);
    I->node_half = is_real(to) || narrow(half) ? half : HALF_NONE;
    if ((x->half == HALF_U64 && is_real(to)) || (half == HALF_U64 && is_real(x->ty.dtype))) {
        op_cast_u64_real(I, n, x, to, half);
        return;
    }
    if (minifloat(half)) {
        op_cast_minifloat(I, n, x, half);
        return;
    }
    if (!half || narrow(half) || x->ty.dtype == CFX_F32) { /* to a narrow integer: cast, then wrapped */
        I->node_rounded = half && x->half == half; /* of that type already */
        op_cast(I, n, to);
        return;
    }
    I->node_rounded = 1;
    cfx_type t = x->ty;
    t.dtype = CFX_F32;
    if (x->data && count(&t) <= ONNX_FOLD_MAX) {
        float *d = new_data(I, &t);
        for (int64_t i = 0; i < count(&t); i++)
            d[i] = (float)half_value_of(half, x->ty.dtype == CFX_BOOL ? (double)(geti(x, i) != 0) : getd(x, i));
        out_known(I, n, 0, &t, d);
        return;
    }
    const char *from = ref(I, x);
    if (x->ty.dtype != CFX_F64)
        from = fmt(I, "cast(%s, f64)", from);
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = cast(%s, f32)", v, half_rounded(I, half, from));
}

/* ---- ops that shape, join and cut: Reshape ... Slice, Transpose, Tile, Pad, the constants -------
 * Each a composition of the language's ops and statements; shape arithmetic folds at import. */

static void op_reshape_to(imp *I, const Onnx__NodeProto *n, ival *x, const cfx_type *t)
{
    if (count(t) != count(&x->ty))
        fail(I, "cannot reshape %s (%lld elements) to %s", tystr(I, &x->ty), (long long)count(&x->ty),
             tystr(I, t));
    if (x->data) {
        out_known(I, n, 0, t, x->data);
        return;
    }
    const char *e = reshaped(I, ref(I, x), &x->ty, t);
    if (e == x->id) {
        bind(I, out_name(I, n, 0), t, x->id, NULL);
    } else {
        const char *v = out_var(I, n, 0, t);
        line(I, "%s = %s", v, e);
    }
    keep_sym(I, n, x);
    if (count(t) == 1) { /* the one element is still that scalar */
        ival *o = lookup(I, out_name(I, n, 0));
        o->elem = x->elem ? x->elem : x->ty.rank == 0 ? x->id : NULL;
    }
}

/* The dims a Reshape of `in` (rank ir, dims id) to `shape` (r entries, up to 8) gives: 0 copies
 * the input's entry (unless allowzero), -1 is inferred. */
static void reshape_dims(imp *I, const int64_t *id, int ir, int64_t n_in, const int64_t *shape, int r,
                         int allowzero, int64_t *dims)
{
    int infer = -1;
    int64_t known_count = 1;
    for (int d = 0; d < r; d++) {
        int64_t s = shape[d];
        if (s == 0 && !allowzero) {
            if (d >= ir)
                fail(I, "shape entry %d is 0 (copy) but the input has rank %d", d, ir);
            s = id[d];
        }
        if (s == -1) {
            if (infer >= 0)
                fail(I, "the shape has two -1 entries");
            infer = d;
            s = 1;
        } else if (s < 1 && !(s == 0 && n_in == 0)) { /* 0: of an input of 0 elements (known) */
            fail(I, "shape entry %d is %lld", d, (long long)shape[d]);
        } else if (s > ((int64_t)1 << 30) || known_count * s > ((int64_t)1 << 30)) { /* no overflow */
            fail(I, "cannot reshape %lld elements to a shape of more than 2^30 elements", (long long)n_in);
        }
        dims[d] = s;
        known_count *= s;
    }
    if (infer >= 0) {
        if (known_count == 0)
            fail(I, "the shape has a 0 and a -1 entry: the -1 is not determined");
        if (n_in % known_count != 0)
            fail(I, "cannot reshape %lld elements to a shape with -1", (long long)n_in);
        dims[infer] = n_in / known_count;
    }
}

/* The one node of the current graph or function that reads `name`, where nothing else does (no
 * subgraph, no output of it); else NULL. */
static const Onnx__NodeProto *sole_reader(imp *I, const char *name)
{
    const Onnx__GraphProto *g = I->graph;
    const Onnx__FunctionProto *f = I->func;
    Onnx__NodeProto *const *nodes = g ? g->node : f ? f->node : NULL;
    size_t nn = g ? g->n_node : f ? f->n_node : 0;
    const Onnx__NodeProto *found = NULL;
    if (!nodes || !name || !*name)
        return NULL;
    for (size_t k = 0; g && k < g->n_output; k++)
        if (g->output[k] && g->output[k]->name && !strcmp(g->output[k]->name, name))
            return NULL;
    for (size_t k = 0; f && k < f->n_output; k++)
        if (f->output[k] && !strcmp(f->output[k], name))
            return NULL;
    for (size_t k = 0; k < nn; k++)
        if (nodes[k] && node_reads(nodes[k], name)) {
            if (found)
                return NULL;
            found = nodes[k];
        }
    return found;
}

/* 1 when n was imported with an earlier node of its graph or function (I->done) */
static int done_already(imp *I, const Onnx__NodeProto *n)
{
    for (int j = 0; j < I->ndone; j++)
        if (I->done[j] == n)
            return 1;
    return 0;
}

/* A Reshape to a rank above cfx's whose result only a Transpose reads, whose result only a
 * Reshape reads (PyTorch writes F.pixel_unshuffle so, ONNX's SpaceToDepth and DepthToSpace
 * functions too): the Transpose's result is computed here as one transpose of the axes that stay
 * together through it merged (axes of 1 dropped), where that leaves at most CFX_TYPE_MAX_RANK
 * axes, and bound at that rank; the Transpose is then done (I->done), and the second Reshape
 * takes its input's dims as the Transpose's (I->wide). Returns 0, writing nothing, where the
 * nodes are not so. */
static int reshape_through_transpose(imp *I, const Onnx__NodeProto *n, ival *x, const int64_t *dims, int r)
{
    if (n->n_output < 1)
        return 0;
    const Onnx__NodeProto *tr = sole_reader(I, n->output[0]);
    if (!tr || !tr->op_type || strcmp(tr->op_type, "Transpose") || (tr->domain && *tr->domain) ||
        tr->n_input < 1 || strcmp(tr->input[0], n->output[0]) || tr->n_output != 1 || !tr->output[0] ||
        !*tr->output[0])
        return 0;
    const Onnx__NodeProto *rs = sole_reader(I, tr->output[0]);
    if (!rs || !rs->op_type || strcmp(rs->op_type, "Reshape") || (rs->domain && *rs->domain) ||
        rs->n_input < 1 || strcmp(rs->input[0], tr->output[0]))
        return 0;
    int64_t perm[8];
    size_t np;
    const int64_t *p = attr_ints(I, tr, "perm", &np);
    if (p && (int)np != r)
        return 0;
    int seen[8] = {0};
    for (int d = 0; d < r; d++) {
        perm[d] = p ? p[d] : r - 1 - d;
        if (perm[d] < 0 || perm[d] >= r || seen[perm[d]]++)
            return 0;
    }
    /* the axes of more than 1, numbered in the input's order; then the runs of them that are
     * consecutive there and in the permuted order, each to be one axis */
    int compact[8], nc = 0, q[8], nq = 0;
    int64_t cdims[8];
    for (int d = 0; d < r; d++) {
        compact[d] = dims[d] > 1 ? nc : -1;
        if (dims[d] > 1)
            cdims[nc++] = dims[d];
    }
    for (int d = 0; d < r; d++)
        if (compact[perm[d]] >= 0)
            q[nq++] = compact[perm[d]];
    int run[8], nruns = 0; /* run[j]: the run of q[j], numbered in the permuted order */
    int64_t rsize[8], rfirst[8];
    for (int j = 0; j < nq; j++) {
        if (j > 0 && q[j] == q[j - 1] + 1) {
            run[j] = run[j - 1];
            rsize[run[j]] *= cdims[q[j]];
        } else {
            if (nruns == CFX_TYPE_MAX_RANK)
                return 0;
            run[j] = nruns++;
            rfirst[run[j]] = q[j];
            rsize[run[j]] = cdims[q[j]];
        }
    }
    /* the merged input: the runs in the input's order; rperm: the permuted order of them */
    int64_t mdims[CFX_TYPE_MAX_RANK] = {0}, rperm[CFX_TYPE_MAX_RANK] = {0};
    for (int a = 0; a < nruns; a++) {
        int at = 0;
        for (int b = 0; b < nruns; b++)
            at += rfirst[b] < rfirst[a];
        mdims[at] = rsize[a];
        rperm[a] = at;
    }
    cfx_type mt = mktype(x->ty.dtype, nruns, mdims);
    ival *merged = part(I, n, "merged", &mt, x->half, reshaped(I, ref(I, x), &x->ty, &mt));
    ival *moved = nruns > 1 ? permuted_part(I, n, "moved", merged, rperm) : merged;
    bind(I, tr->output[0], &moved->ty, moved->id, moved->data)->half = x->half;
    grow(I, &I->done, I->ndone, &I->capdone, sizeof *I->done);
    I->done[I->ndone++] = tr;
    grow(I, &I->wide, I->nwide, &I->capwide, sizeof *I->wide);
    struct wide *w = &I->wide[I->nwide++];
    w->reader = rs;
    w->rank = r;
    for (int d = 0; d < r; d++)
        w->dims[d] = dims[perm[d]];
    return 1;
}

static void op_reshape(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int64_t shape[8], dims[8];
    int64_t r = ints_of(I, known(I, n, 1, "the shape"), shape, 8, "the shape");
    int allowzero = (int)attr_int(I, n, "allowzero", 0);
    const int64_t *xdims = x->ty.dims;
    int xrank = x->ty.rank;
    for (int k = I->nwide - 1; k >= 0; k--) /* the input a transpose of rank 6 or more, merged */
        if (I->wide[k].reader == n) {
            xdims = I->wide[k].dims;
            xrank = I->wide[k].rank;
            break;
        }
    reshape_dims(I, xdims, xrank, count(&x->ty), shape, (int)r, allowzero, dims);
    if (r > CFX_TYPE_MAX_RANK) {
        if (reshape_through_transpose(I, n, x, dims, (int)r))
            return;
        fail(I, "the result has rank %lld; cfx takes at most %d", (long long)r, CFX_TYPE_MAX_RANK);
    }
    cfx_type t = mktype(x->ty.dtype, (int)r, dims);
    op_reshape_to(I, n, x, &t);
}

/* Squeeze, Unsqueeze, Flatten: reshapes whose shape follows from axes */
static void op_squeeze(imp *I, const Onnx__NodeProto *n, int unsqueeze)
{
    ival *x = in(I, n, 0);
    int64_t axes[8];
    int64_t na = ints_arg(I, n, 1, "axes", axes, 8, "the axes");
    cfx_type t = x->ty;
    if (unsqueeze) {
        int r = x->ty.rank + (int)na;
        if (r > CFX_TYPE_MAX_RANK)
            fail(I, "the result has rank %d; cfx takes at most %d", r, CFX_TYPE_MAX_RANK);
        int mark[8] = {0};
        for (int64_t k = 0; k < na; k++) {
            int ax = norm_axis(I, axes[k], r, "axis");
            if (mark[ax])
                fail(I, "axis %d is given twice", ax);
            mark[ax] = 1;
        }
        t.rank = r;
        for (int d = 0, s = 0; d < r; d++)
            t.dims[d] = mark[d] ? 1 : x->ty.dims[s++];
    } else {
        int mark[8] = {0};
        for (int64_t k = 0; k < na; k++) {
            int ax = norm_axis(I, axes[k], x->ty.rank, "axis");
            if (x->ty.dims[ax] != 1)
                fail(I, "axis %d has size %lld, not 1", ax, (long long)x->ty.dims[ax]);
            mark[ax] = 1;
        }
        t.rank = 0;
        for (int d = 0; d < x->ty.rank; d++)
            if (na ? !mark[d] : x->ty.dims[d] != 1)
                t.dims[t.rank++] = x->ty.dims[d];
    }
    op_reshape_to(I, n, x, &t);
}

static void op_flatten(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int64_t a = attr_int(I, n, "axis", 1);
    if (a < -x->ty.rank || a > x->ty.rank)
        fail(I, "axis %lld is out of range for rank %d", (long long)a, x->ty.rank);
    int axis = (int)(a < 0 ? a + x->ty.rank : a);
    cfx_type t = x->ty;
    t.rank = 2;
    t.dims[0] = t.dims[1] = 1;
    for (int d = 0; d < x->ty.rank; d++)
        t.dims[d < axis ? 0 : 1] *= x->ty.dims[d];
    op_reshape_to(I, n, x, &t);
}

static void op_shape(imp *I, const Onnx__NodeProto *n, int size)
{
    ival *x = in(I, n, 0);
    int64_t dims[CFX_TYPE_MAX_RANK];
    int r = 0;
    if (size) {
        dims[r++] = count(&x->ty);
    } else {
        int64_t start = attr_int(I, n, "start", 0), end = attr_int(I, n, "end", x->ty.rank);
        if (start < 0) start += x->ty.rank;
        if (end < 0) end += x->ty.rank;
        if (start < 0) start = 0;
        if (end > x->ty.rank) end = x->ty.rank;
        for (int64_t d = start; d < end; d++)
            dims[r++] = x->ty.dims[d];
    }
    int64_t len = r;
    cfx_type t = size ? mktype(CFX_I64, 0, NULL) : mktype(CFX_I64, 1, &len);
    int64_t *data = r ? new_data(I, &t) : alloc(I, 1); /* an empty slice: known, of 0 elements */
    memcpy(data, dims, (size_t)r * sizeof *data);
    out_known(I, n, 0, &t, data);
}

static void op_constant(imp *I, const Onnx__NodeProto *n)
{
    const Onnx__AttributeProto *a = n->n_attribute ? n->attribute[0] : NULL;
    if (!a || !a->name)
        fail(I, "a Constant needs a value attribute");
    cfx_type t;
    void *data;
    if (strcmp(a->name, "value") == 0 && a->t) {
        int half;
        data = tensor_data(I, a->t, &t, &half);
        I->node_half = half;
    } else if (strcmp(a->name, "value_float") == 0) {
        t = mktype(CFX_F32, 0, NULL);
        data = new_data(I, &t);
        *(float *)data = a->f;
    } else if (strcmp(a->name, "value_int") == 0) {
        t = mktype(CFX_I64, 0, NULL);
        data = new_data(I, &t);
        *(int64_t *)data = a->i;
    } else if (strcmp(a->name, "value_floats") == 0) {
        int64_t len = (int64_t)a->n_floats; /* 0: known at import only (ref refuses it) */
        t = mktype(CFX_F32, 1, &len);
        check_shape(I, out_name(I, n, 0), 1, &len, 1);
        data = new_data(I, &t);
        copy(data, a->floats, a->n_floats * sizeof(float));
    } else if (strcmp(a->name, "value_ints") == 0) {
        /* 0 entries: an empty shape, as PyTorch exports for Expand to a scalar */
        int64_t len = (int64_t)a->n_ints;
        t = mktype(CFX_I64, 1, &len);
        check_shape(I, out_name(I, n, 0), 1, &len, 1);
        data = new_data(I, &t);
        copy(data, a->ints, a->n_ints * sizeof(int64_t));
    } else {
        fail(I, "a Constant's '%s' is not supported (tensors, floats and ints are)", a->name);
    }
    out_known(I, n, 0, &t, data);
}

static void op_constant_of_shape(imp *I, const Onnx__NodeProto *n)
{
    int64_t shape[8];
    int64_t r = ints_of(I, known(I, n, 0, "the shape"), shape, 8, "the shape");
    cfx_type vt = mktype(CFX_F32, 0, NULL);
    void *value = NULL;
    const Onnx__AttributeProto *a = attr(I, n, "value");
    if (a && a->t) {
        int half;
        value = tensor_data(I, a->t, &vt, &half);
        I->node_half = half;
    }
    if (count(&vt) != 1)
        fail(I, "the value must have one element");
    if (r > CFX_TYPE_MAX_RANK)
        fail(I, "the result has rank %lld; cfx takes at most %d", (long long)r, CFX_TYPE_MAX_RANK);
    cfx_type t = mktype(vt.dtype, (int)r, shape);
    check_shape(I, out_name(I, n, 0), r, shape, 1);
    if (count(&t) <= ONNX_FOLD_MAX) { /* folded; a larger one is filled at run time */
        void *data = count(&t) ? new_data(I, &t) : alloc(I, 1); /* 0 elements: known by the type */
        ival tmp = {.ty = vt, .data = value};
        for (int64_t i = 0; value && i < count(&t); i++) {
            if (is_real(vt.dtype))
                setd(t.dtype, data, i, getd(&tmp, 0));
            else
                seti(t.dtype, data, i, geti(&tmp, 0));
        }
        out_known(I, n, 0, &t, data);
        return;
    }
    ival one = {.name = out_name(I, n, 0), .ty = vt, .data = value ? value : new_data(I, &vt)};
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = full(%s, %s)", v, tystr(I, &t), ref(I, &one));
}

static void op_range(imp *I, const Onnx__NodeProto *n)
{
    ival *s = known(I, n, 0, "Range's start"), *l = known(I, n, 1, "Range's limit"),
         *d = known(I, n, 2, "Range's delta");
    const ival *const sld[3] = {s, l, d};
    for (int k = 0; k < 3; k++) /* scalars, each of the one number type (the spec's T) */
        if (count(&sld[k]->ty) != 1 || sld[k]->ty.dtype == CFX_BOOL || sld[k]->ty.dtype != s->ty.dtype)
            fail(I, "Range's %s is %s, not one number of the start's type", k ? k == 1 ? "limit" : "delta" : "start",
                 tystr(I, &sld[k]->ty));
    cfx_dtype dt = s->ty.dtype;
    double start = getd(s, 0), limit = getd(l, 0), delta = getd(d, 0);
    if (delta == 0)
        fail(I, "Range's delta is 0");
    double len = ceil((limit - start) / delta);
    if (!(len >= 1))
        fail(I, "Range gives no elements (cfx has no tensors of 0 elements)");
    if (len > (double)((int64_t)1 << 24))
        fail(I, "Range gives %.0f elements; at most 2^24 are folded", len);
    int64_t nlen = (int64_t)len;
    cfx_type t = mktype(dt, 1, &nlen);
    void *data = new_data(I, &t);
    for (int64_t i = 0; i < nlen; i++) {
        if (is_real(dt))
            setd(dt, data, i, start + (double)i * delta);
        else
            seti(dt, data, i, geti(s, 0) + i * geti(d, 0));
    }
    out_known(I, n, 0, &t, data);
}

static void op_expand(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int64_t shape[8];
    int64_t r = ints_of(I, known(I, n, 1, "the shape"), shape, 8, "the shape");
    if (r > CFX_TYPE_MAX_RANK)
        fail(I, "the shape has rank %lld; cfx takes at most %d", (long long)r, CFX_TYPE_MAX_RANK);
    cfx_type s = mktype(x->ty.dtype, (int)r, shape), t;
    broadcast(I, &x->ty, &s, &t);
    t.dtype = x->ty.dtype;
    if (same_type(&t, &x->ty)) {
        bind(I, out_name(I, n, 0), &t, x->id, x->data);
        return;
    }
    if (x->data && count(&t) <= ONNX_FOLD_MAX) {
        void *data = new_data(I, &t);
        for (int64_t i = 0; i < count(&t); i++) {
            if (is_real(t.dtype))
                setd(t.dtype, data, i, getd(x, bindex(&t, &x->ty, i)));
            else
                seti(t.dtype, data, i, geti(x, bindex(&t, &x->ty, i)));
        }
        out_known(I, n, 0, &t, data);
        return;
    }
    const char *a = ref(I, x), *v = out_var(I, n, 0, &t);
    if (t.dtype == CFX_BOOL)
        line(I, "%s = %s == ones(%s)", v, a, tystr(I, &t));
    else
        line(I, "%s = %s * ones(%s)", v, a, tystr(I, &t));
}

static void op_concat(imp *I, const Onnx__NodeProto *n)
{
    if (n->n_input == 0)
        fail(I, "Concat needs inputs");
    ival *first = in(I, n, 0);
    int axis = norm_axis(I, attr_int(I, n, "axis", 0), first->ty.rank, "axis");
    cfx_type t = first->ty;
    t.dims[axis] = 0;
    int all_known = 1;
    for (size_t k = 0; k < n->n_input; k++) {
        ival *x = in(I, n, k);
        if (x->ty.dtype != t.dtype || x->ty.rank != t.rank)
            fail(I, "input %zu is %s, input 0 %s", k, tystr(I, &x->ty), tystr(I, &first->ty));
        for (int d = 0; d < t.rank; d++)
            if (d != axis && x->ty.dims[d] != t.dims[d])
                fail(I, "input %zu is %s, input 0 %s", k, tystr(I, &x->ty), tystr(I, &first->ty));
        t.dims[axis] += x->ty.dims[axis];
        all_known &= x->data != NULL || count(&x->ty) == 0;
    }
    check_shape(I, out_name(I, n, 0), t.rank, t.dims, all_known);
    if (all_known && count(&t) <= ONNX_FOLD_MAX) {
        void *data = new_data(I, &t);
        int64_t outer = 1, inner = 1;
        for (int d = 0; d < axis; d++) outer *= t.dims[d];
        for (int d = axis + 1; d < t.rank; d++) inner *= t.dims[d];
        int64_t o = 0;
        size_t es = (size_t)cfx_dtype_size(t.dtype);
        for (int64_t b = 0; b < outer; b++)
            for (size_t k = 0; k < n->n_input; k++) {
                ival *x = in(I, n, k);
                int64_t chunk = x->ty.dims[axis] * inner;
                copy((char *)data + (size_t)o * es, (char *)x->data + (size_t)(b * chunk) * es, (size_t)chunk * es);
                o += chunk;
            }
        out_known(I, n, 0, &t, data);
        return;
    }
    /* the language's concat: each part written into its place (parts of no elements left out) */
    strbuf *parts = new_sb(I);
    int nparts = 0;
    for (size_t k = 0; k < n->n_input; k++) {
        ival *x = in(I, n, k);
        if (count(&x->ty) > 0)
            sb_printf(parts, "%s%s", nparts++ ? ", " : "", ref(I, x));
    }
    if (parts->oom)
        fail(I, "out of memory");
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = concat((%s%s), axis=%d)", v, sb_str(parts), nparts == 1 ? "," : "", axis);
    sb_free(parts);
}

static void op_split(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int axis = norm_axis(I, attr_int(I, n, "axis", 0), x->ty.rank, "axis");
    int64_t sizes[64];
    int64_t ns = ints_arg(I, n, 1, "split", sizes, 64, "the split");
    if (ns == 0) {
        int64_t parts = attr_int(I, n, "num_outputs", (int64_t)n->n_output);
        if (parts < 1 || parts > 64)
            fail(I, "cannot split into %lld parts", (long long)parts);
        int64_t each = (x->ty.dims[axis] + parts - 1) / parts;
        for (int64_t k = 0; k < parts; k++) {
            int64_t left = x->ty.dims[axis] - k * each;
            sizes[ns++] = left < each ? left : each;
        }
    }
    if ((size_t)ns != n->n_output)
        fail(I, "%lld parts for %zu outputs", (long long)ns, n->n_output);
    int64_t off = 0;
    for (int64_t k = 0; k < ns; k++) {
        cfx_type t = x->ty;
        t.dims[axis] = sizes[k];
        if (sizes[k] < 0 || sizes[k] > x->ty.dims[axis] - off)
            fail(I, "the parts do not fit dimension %d of %s", axis, tystr(I, &x->ty));
        if (sizes[k] == 0) { /* an empty part: known, and never read at run time */
            out_known(I, n, (size_t)k, &t, new_data(I, &t));
            continue;
        }
        if (x->data && count(&t) <= ONNX_FOLD_MAX) {
            int64_t outer = 1, inner = 1;
            for (int d = 0; d < axis; d++) outer *= t.dims[d];
            for (int d = axis + 1; d < t.rank; d++) inner *= t.dims[d];
            size_t es = (size_t)cfx_dtype_size(t.dtype);
            char *data = new_data(I, &t);
            for (int64_t b = 0; b < outer; b++)
                copy(data + (size_t)(b * sizes[k] * inner) * es,
                       (char *)x->data + (size_t)((b * x->ty.dims[axis] + off) * inner) * es,
                       (size_t)(sizes[k] * inner) * es);
            out_known(I, n, (size_t)k, &t, data);
            off += sizes[k];
            continue;
        }
        const char *range = fmt(I, "%lld:%lld", (long long)off, (long long)(off + sizes[k]));
        const char *v = out_var(I, n, (size_t)k, &t);
        line(I, "%s = %s%s", v, ref(I, x), subscript(I, x->ty.rank, axis, range));
        off += sizes[k];
    }
}

static void op_slice(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int r = x->ty.rank;
    int64_t starts[8], ends[8], axes[8], steps[8];
    int64_t ns, ne, na = 0, nst = 0;
    if (I->opset < 10) {
        size_t k;
        const int64_t *a = attr_ints(I, n, "starts", &k);
        ns = (int64_t)k;
        if (!a || k > 8) fail(I, "starts are missing");
        memcpy(starts, a, k * sizeof *a);
        a = attr_ints(I, n, "ends", &k);
        ne = (int64_t)k;
        if (!a || k > 8) fail(I, "ends are missing");
        memcpy(ends, a, k * sizeof *a);
        a = attr_ints(I, n, "axes", &k);
        if (a && k <= 8) { na = (int64_t)k; memcpy(axes, a, k * sizeof *a); }
    } else if (!in(I, n, 1)->data || !in(I, n, 2)->data) {
        /* starts of run time: one axis, its end its start plus a constant (x[i:i + k]) */
        ival *sv = in(I, n, 1), *ev = in(I, n, 2);
        const char *s1, *s2;
        int64_t o1, o2, ax = 0;
        if (!one_int(sv) || !one_int(ev) || !sym_of(I, sv, &s1, &o1) || !sym_of(I, ev, &s2, &o2) ||
            strcmp(s1, s2) != 0)
            fail(I, "the starts and ends ('%s', '%s') must be known when the model is imported, or the end "
                 "be the start plus a constant: the slice's length may not depend on the data", sv->name, ev->name);
        if (has_input(n, 3))
            ints_of(I, known(I, n, 3, "the axes"), &ax, 1, "the axes");
        if (has_input(n, 4)) {
            int64_t st;
            ints_of(I, known(I, n, 4, "the steps"), &st, 1, "the steps");
            if (st != 1)
                fail(I, "a slice of run-time start takes a step of 1");
        }
        int axis = norm_axis(I, ax, r, "axis");
        int64_t len = o2 - o1;
        if (len < 1 || len > x->ty.dims[axis])
            fail(I, "the slice has %lld elements along axis %d of size %lld", (long long)len, axis,
                 (long long)x->ty.dims[axis]);
        cfx_type t = x->ty;
        t.dims[axis] = len;
        const char *nm = out_name(I, n, 0);
        const char *st = new_id(I, "start_", nm);
        line(I, "%s = %s + %lld", st, s1, (long long)o1);
        const char *v = out_var(I, n, 0, &t);
        line(I, "%s = %s%s", v, ref(I, x),
             subscript(I, r, axis, fmt(I, "%s:%s + %lld", st, st, (long long)len)));
        return;
    } else {
        ns = ints_of(I, known(I, n, 1, "the starts"), starts, 8, "the starts");
        ne = ints_of(I, known(I, n, 2, "the ends"), ends, 8, "the ends");
        if (has_input(n, 3))
            na = ints_of(I, known(I, n, 3, "the axes"), axes, 8, "the axes");
        if (has_input(n, 4))
            nst = ints_of(I, known(I, n, 4, "the steps"), steps, 8, "the steps");
    }
    if (ns != ne || (na && na != ns) || (nst && nst != ns))
        fail(I, "starts, ends, axes and steps differ in length");
    int64_t lo[CFX_TYPE_MAX_RANK], step[CFX_TYPE_MAX_RANK];
    cfx_type t = x->ty;
    for (int d = 0; d < r; d++) {
        lo[d] = 0;
        step[d] = 1;
    }
    for (int64_t k = 0; k < ns; k++) {
        int ax = norm_axis(I, na ? axes[k] : k, r, "axis");
        int64_t dim = x->ty.dims[ax], s = nst ? steps[k] : 1, b = starts[k], e = ends[k];
        if (s == 0)
            fail(I, "a step of 0");
        if (b < 0) b += dim;
        if (e < 0) e += dim;
        if (s > 0) {
            b = b < 0 ? 0 : b > dim ? dim : b;
            e = e < 0 ? 0 : e > dim ? dim : e;
        } else {
            b = b < 0 ? -1 : b > dim - 1 ? dim - 1 : b;
            e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
        }
        int64_t len = s > 0 ? (e - b + s - 1) / s : (b - e + (-s) - 1) / (-s);
        if (len < 0)
            len = 0;
        lo[ax] = b;
        step[ax] = s;
        t.dims[ax] = len;
    }
    if (count(&t) == 0) {
        out_known(I, n, 0, &t, new_data(I, &t));
        return;
    }
    if (x->data && count(&t) <= ONNX_FOLD_MAX) {
        void *data = new_data(I, &t);
        for (int64_t i = 0; i < count(&t); i++) {
            int64_t rem = i, src = 0, stride = 1;
            int64_t idx[CFX_TYPE_MAX_RANK];
            for (int d = r - 1; d >= 0; d--) {
                idx[d] = rem % t.dims[d];
                rem /= t.dims[d];
            }
            for (int d = r - 1; d >= 0; d--) {
                src += (lo[d] + idx[d] * step[d]) * stride;
                stride *= x->ty.dims[d];
            }
            if (is_real(t.dtype))
                setd(t.dtype, data, i, getd(x, src));
            else
                seti(t.dtype, data, i, geti(x, src));
        }
        out_known(I, n, 0, &t, data);
        return;
    }
    const char *src = ref(I, x);
    /* axes with step 1 as a subscript; others as gathers of an index vector, one axis at a time */
    strbuf *sb = new_sb(I);
    sb_puts(sb, "[");
    cfx_type mid = x->ty;
    for (int d = 0; d < r; d++) {
        if (step[d] == 1) {
            sb_printf(sb, "%s%lld:%lld", d ? ", " : "", (long long)lo[d], (long long)(lo[d] + t.dims[d]));
            mid.dims[d] = t.dims[d];
        } else {
            sb_printf(sb, "%s:", d ? ", " : "");
        }
    }
    sb_puts(sb, "]");
    if (sb->oom)
        fail(I, "out of memory");
    const char *cur = fmt(I, "%s%s", src, sb_str(sb));
    sb_free(sb);
    int last = -1; /* the last axis with a step: its gather writes the result */
    for (int d = 0; d < r; d++)
        if (step[d] != 1)
            last = d;
    if (last < 0) {
        const char *v = out_var(I, n, 0, &t);
        line(I, "%s = %s", v, cur);
        return;
    }
    const char *prev = new_id(I, "s_", out_name(I, n, 0));
    line(I, "%s = %s", prev, cur);
    for (int d = 0; d < r; d++) {
        if (step[d] == 1)
            continue;
        cfx_type next = mid;
        next.dims[d] = t.dims[d];
        int64_t len = t.dims[d];
        cfx_type it = mktype(CFX_I64, 1, &len);
        int64_t *id = new_data(I, &it);
        for (int64_t k = 0; k < len; k++)
            id[k] = lo[d] + k * step[d];
        ival iv = {.name = fmt(I, "%s_steps%d", out_name(I, n, 0), d), .ty = it, .data = id};
        const char *to = d == last ? out_var(I, n, 0, &t) : new_id(I, "s_", out_name(I, n, 0));
        gather_loop(I, to, &next, prev, r, d, ref(I, &iv), len);
        prev = to;
        mid = next;
    }
}

static void op_transpose(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int r = x->ty.rank;
    int64_t perm[CFX_TYPE_MAX_RANK];
    size_t np;
    const int64_t *p = attr_ints(I, n, "perm", &np);
    if (p && (int)np != r)
        fail(I, "perm has %zu entries for rank %d", np, r);
    int seen[CFX_TYPE_MAX_RANK] = {0}, ident = 1;
    for (int d = 0; d < r; d++) {
        perm[d] = p ? p[d] : r - 1 - d;
        if (perm[d] < 0 || perm[d] >= r || seen[perm[d]]++)
            fail(I, "perm is not a permutation of 0..%d", r - 1);
        ident &= perm[d] == d;
    }
    cfx_type t = x->ty;
    for (int d = 0; d < r; d++)
        t.dims[d] = x->ty.dims[perm[d]];
    if (ident || r < 2) {
        bind(I, out_name(I, n, 0), &t, x->id, x->data);
        return;
    }
    if (x->data && count(&t) <= ONNX_FOLD_MAX) {
        void *data = new_data(I, &t);
        for (int64_t i = 0; i < count(&t); i++) {
            int64_t idx[CFX_TYPE_MAX_RANK], rem = i, src = 0;
            for (int d = r - 1; d >= 0; d--) {
                idx[d] = rem % t.dims[d];
                rem /= t.dims[d];
            }
            int64_t sidx[CFX_TYPE_MAX_RANK];
            for (int d = 0; d < r; d++)
                sidx[perm[d]] = idx[d];
            for (int d = 0; d < r; d++)
                src = src * x->ty.dims[d] + sidx[d];
            if (is_real(t.dtype))
                setd(t.dtype, data, i, getd(x, src));
            else
                seti(t.dtype, data, i, geti(x, src));
        }
        out_known(I, n, 0, &t, data);
        return;
    }
    const char *src = ref(I, x), *v = out_var(I, n, 0, &t);
    if (r == 2) {
        line(I, "%s = transpose(%s)", v, src);
        return;
    }
    /* the language's permute: one record (a PERMUTE, or a COPY where only axes of length 1 move) */
    strbuf *axes = new_sb(I);
    for (int d = 0; d < r; d++)
        sb_printf(axes, "%s%lld", d ? ", " : "", (long long)perm[d]);
    if (axes->oom)
        fail(I, "out of memory");
    line(I, "%s = permute(%s, (%s))", v, src, sb_str(axes));
    sb_free(axes);
}

/* Tile with repeats known at import: the language's concat of copies along each repeated axis
 * (a loop of slice writes past 16 copies). */
static void op_tile(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int r = x->ty.rank;
    if (I->opset < 6)
        fail(I, "Tile of opset %lld (tiles and axis as inputs) is not supported; opset 6 on is",
             (long long)I->opset);
    int64_t reps[CFX_TYPE_MAX_RANK];
    int64_t nr = ints_of(I, known(I, n, 1, "the repeats"), reps, CFX_TYPE_MAX_RANK, "the repeats");
    if (nr != r)
        fail(I, "%lld repeats for %s", (long long)nr, tystr(I, &x->ty));
    cfx_type t = x->ty;
    for (int d = 0; d < r; d++) {
        if (reps[d] < 0 || reps[d] > ((int64_t)1 << 30))
            fail(I, "repeat %lld along axis %d", (long long)reps[d], d);
        t.dims[d] = x->ty.dims[d] * reps[d];
    }
    check_shape(I, out_name(I, n, 0), t.rank, t.dims, x->data != NULL);
    if (count(&t) == 0 || (x->data && count(&t) <= ONNX_FOLD_MAX)) {
        int64_t *map[CFX_TYPE_MAX_RANK];
        for (int d = 0; d < r; d++) {
            map[d] = alloc(I, (size_t)(t.dims[d] + 1) * sizeof *map[d]);
            for (int64_t p = 0; p < t.dims[d]; p++)
                map[d][p] = p % x->ty.dims[d];
        }
        out_known(I, n, 0, &t, count(&t) ? fold_map(I, x, &t, map, NULL) : new_data(I, &t));
        return;
    }
    int last = -1;
    for (int d = 0; d < r; d++)
        if (reps[d] > 1)
            last = d;
    if (last < 0) {
        bind(I, out_name(I, n, 0), &x->ty, x->id, x->data);
        return;
    }
    const char *cur = ref(I, x);
    cfx_type ct = x->ty;
    for (int d = 0; d <= last; d++) {
        if (reps[d] == 1)
            continue;
        int64_t len = ct.dims[d];
        ct.dims[d] *= reps[d];
        const char *to = d == last ? out_var(I, n, 0, &ct) : new_id(I, "t_", out_name(I, n, 0));
        if (reps[d] <= 16) {
            strbuf *sb = new_sb(I);
            for (int64_t k = 0; k < reps[d]; k++)
                sb_printf(sb, "%s%s", k ? ", " : "", cur);
            if (sb->oom)
                fail(I, "out of memory");
            line(I, "%s = concat((%s), axis=%d)", to, sb_str(sb), d);
            sb_free(sb);
        } else {
            const char *k = new_id(I, "k_", "tile");
            line(I, "%s = %s", to, zeros_of(I, &ct));
            line(I, "for %s in range(%lld) {", k, (long long)reps[d]);
            I->indent++;
            line(I, "%s%s = %s", to, subscript(I, r, d, fmt(I, "%s * %lld:%s * %lld + %lld", k, (long long)len, k,
                                                             (long long)len, (long long)len)), cur);
            I->indent--;
            line(I, "}");
        }
        cur = to;
    }
}

/* The input index that output index p of a padded axis reads: a crop of size m starting `lo`
 * into the input, `a` pad entries before it; -1 where the constant goes. numpy's pad. */
static int64_t pad_source(int mode, int64_t p, int64_t a, int64_t m, int64_t lo)
{
    int64_t j = p - a;
    if (j >= 0 && j < m)
        return lo + j;
    if (mode == 0)
        return -1;
    if (mode == 1) /* edge */
        j = j < 0 ? 0 : m - 1;
    else if (mode == 2) /* wrap */
        j = ((j % m) + m) % m;
    else if (m == 1) /* reflect */
        j = 0;
    else {
        int64_t period = 2 * (m - 1);
        j = ((j % period) + period) % period;
        j = j < m ? j : period - j;
    }
    return lo + j;
}

/* Pad with pads known at import (a negative one crops): constant, reflect, edge, wrap. The
 * constant fills the result and the (cropped) data is written into its middle; the other modes
 * pad one axis at a time, the middle written whole and each pad row copied from its row. */
static void op_pad(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int r = x->ty.rank;
    const char *ms = attr_str(I, n, "mode", "constant");
    static const char *const modes[] = {"constant", "edge", "wrap", "reflect"};
    int mode = -1;
    for (int k = 0; k < 4; k++)
        if (!strcmp(ms, modes[k]))
            mode = k;
    if (mode < 0)
        fail(I, "mode '%s' is not supported (constant, reflect, edge, wrap are)", clean(I, ms));
    int64_t pads[2 * CFX_TYPE_MAX_RANK], axes[CFX_TYPE_MAX_RANK];
    int64_t np, na = 0;
    ival *cv = NULL;
    double value = 0;
    if (I->opset < 11) {
        np = ints_arg(I, n, n->n_input + 1, attr(I, n, "pads") ? "pads" : "paddings", pads, 2 * CFX_TYPE_MAX_RANK,
                      "the pads");
        value = half_value_of(x->half, attr_float(I, n, "value", 0)); /* a value of the data's type */
    } else {
        np = ints_of(I, known(I, n, 1, "the pads"), pads, 2 * CFX_TYPE_MAX_RANK, "the pads");
        cv = in_opt(I, n, 2);
        if (has_input(n, 3))
            na = ints_of(I, known(I, n, 3, "the axes"), axes, CFX_TYPE_MAX_RANK, "the axes");
    }
    if (!has_input(n, 3))
        for (int d = 0; d < r; d++)
            axes[na++] = d;
    if (np != 2 * na)
        fail(I, "%lld pads for %lld axes", (long long)np, (long long)na);
    if (cv && (count(&cv->ty) != 1 || cv->ty.dtype != x->ty.dtype))
        fail(I, "the constant value is %s, not one %s", tystr(I, &cv->ty), cfx_dtype_name(x->ty.dtype));
    for (int64_t k = 0; k < np; k++)
        if (pads[k] < -((int64_t)1 << 30) || pads[k] > ((int64_t)1 << 30))
            fail(I, "a pad of %lld", (long long)pads[k]);
    int64_t before[CFX_TYPE_MAX_RANK] = {0}, after[CFX_TYPE_MAX_RANK] = {0};
    int64_t lo[CFX_TYPE_MAX_RANK], m[CFX_TYPE_MAX_RANK];
    int seen[CFX_TYPE_MAX_RANK] = {0};
    for (int64_t k = 0; k < na; k++) {
        int d = norm_axis(I, axes[k], r, "axis");
        if (seen[d]++)
            fail(I, "axis %d is padded twice", d);
        before[d] = pads[k];
        after[d] = pads[na + k];
    }
    cfx_type t = x->ty, crop = x->ty;
    int crops = 0, pads_any = 0;
    for (int d = 0; d < r; d++) {
        lo[d] = before[d] < 0 ? -before[d] : 0;
        m[d] = x->ty.dims[d] - lo[d] - (after[d] < 0 ? -after[d] : 0);
        if (m[d] < 1)
            fail(I, "the pads crop axis %d of %s to nothing", d, tystr(I, &x->ty));
        crops |= m[d] != x->ty.dims[d];
        before[d] = before[d] > 0 ? before[d] : 0;
        after[d] = after[d] > 0 ? after[d] : 0;
        pads_any |= before[d] + after[d] > 0;
        crop.dims[d] = m[d];
        t.dims[d] = m[d] + before[d] + after[d];
    }
    check_dims(I, out_name(I, n, 0), t.rank, t.dims);
    if (x->data && (!cv || cv->data) && count(&t) <= ONNX_FOLD_MAX) {
        int64_t *map[CFX_TYPE_MAX_RANK];
        for (int d = 0; d < r; d++) {
            map[d] = alloc(I, (size_t)t.dims[d] * sizeof *map[d]);
            for (int64_t p = 0; p < t.dims[d]; p++)
                map[d][p] = pad_source(mode, p, before[d], m[d], lo[d]);
        }
        cfx_type one = mktype(x->ty.dtype, 0, NULL);
        ival fill = {.name = "value", .ty = one, .data = new_data(I, &one)};
        if (cv)
            fill = *cv;
        else
            setd(one.dtype, fill.data, 0, value);
        out_known(I, n, 0, &t, fold_map(I, x, &t, map, &fill));
        return;
    }
    const char *src = ref(I, x), *nm = out_name(I, n, 0);
    int64_t hi[CFX_TYPE_MAX_RANK];
    for (int d = 0; d < r; d++)
        hi[d] = lo[d] + m[d];
    if (crops)
        src = fmt(I, "%s%s", src, box_text(I, r, lo, hi, x->ty.dims));
    if (!pads_any) {
        const char *v = out_var(I, n, 0, &t);
        line(I, "%s = %s", v, crops ? src : fmt(I, "copy(%s)", src));
        return;
    }
    if (mode == 0) {
        const char *fill;
        if (cv)
            fill = cv->ty.rank == 0 ? ref(I, cv) : reshaped(I, ref(I, cv), &cv->ty, &(cfx_type){.dtype = cv->ty.dtype});
        else
            fill = value == 0 ? NULL : real_const(I, value, x->ty.dtype, fmt(I, "%s_value", nm));
        int64_t end[CFX_TYPE_MAX_RANK];
        for (int d = 0; d < r; d++)
            end[d] = before[d] + m[d];
        const char *v = out_var(I, n, 0, &t);
        line(I, "%s = %s", v, fill ? fmt(I, "full(%s, %s)", tystr(I, &t), fill) : zeros_of(I, &t));
        line(I, "%s%s = %s", v, box_text(I, r, before, end, t.dims), src);
        return;
    }
    if (crops) {
        const char *c = new_id(I, "c_", nm);
        line(I, "%s = %s", c, src);
        src = c;
    }
    int last = -1;
    for (int d = 0; d < r; d++)
        if (before[d] + after[d] > 0)
            last = d;
    cfx_type ct = crop;
    for (int d = 0; d <= last; d++) {
        int64_t a = before[d], b = after[d], len = m[d];
        if (a + b == 0)
            continue;
        ct.dims[d] = t.dims[d];
        const char *to = d == last ? out_var(I, n, 0, &ct) : new_id(I, "p_", nm);
        line(I, "%s = %s", to, zeros_of(I, &ct));
        line(I, "%s%s = %s", to, subscript(I, r, d, fmt(I, "%lld:%lld", (long long)a, (long long)(a + len))), src);
        int64_t np2 = a + b;
        if (np2 > ((int64_t)1 << 16)) /* each a row copy of run time, from a table made here */
            fail(I, "%lld pad entries along axis %d in mode %s; at most 2^16 are taken", (long long)np2, d, ms);
        int64_t *pos = alloc(I, (size_t)np2 * sizeof *pos), *from = alloc(I, (size_t)np2 * sizeof *from);
        for (int64_t k = 0; k < np2; k++) {
            pos[k] = k < a ? k : a + len + (k - a);
            from[k] = pad_source(mode, pos[k], a, len, 0);
        }
        if (np2 <= 8) {
            for (int64_t k = 0; k < np2; k++)
                line(I, "%s%s = %s%s", to, subscript(I, r, d, fmt(I, "%lld", (long long)pos[k])), src,
                     subscript(I, r, d, fmt(I, "%lld", (long long)from[k])));
        } else {
            const char *pt = index_table(I, fmt(I, "%s_pad%d", nm, d), pos, np2);
            const char *ft = index_table(I, fmt(I, "%s_from%d", nm, d), from, np2);
            const char *k = new_id(I, "k_", "pad");
            line(I, "for %s in range(%lld) {", k, (long long)np2);
            I->indent++;
            line(I, "%s%s = %s%s", to, subscript(I, r, d, fmt(I, "%s[%s]", pt, k)), src,
                 subscript(I, r, d, fmt(I, "%s[%s]", ft, k)));
            I->indent--;
            line(I, "}");
        }
        src = to;
    }
}

/* DepthToSpace (inverse 0) and SpaceToDepth (inverse 1) of [N, C, H, W], both modes. ONNX's
 * definition goes through rank 6, which cfx has not: here the spatial side is seen as
 * [N * C', H, b, W, b] (rank 5), and the channel side as [N, b * b, C', H, W] (DCR: the block
 * offset outermost) or [N * C', b * b, H, W] (CRD: innermost); each block offset (i, j) is one
 * slice of either side copied into the other. */
static void op_depth_space(imp *I, const Onnx__NodeProto *n, int inverse)
{
    ival *x = in(I, n, 0);
    if (x->ty.rank != 4)
        fail(I, "the input is %s; rank 4 ([N, C, H, W]) is taken", tystr(I, &x->ty));
    int64_t b = attr_int(I, n, "blocksize", 0);
    const char *mode = attr_str(I, n, "mode", "DCR");
    int crd = !strcmp(mode, "CRD");
    if (!crd && strcmp(mode, "DCR") != 0)
        fail(I, "mode '%s' is not supported (DCR and CRD are)", clean(I, mode));
    if (b < 1 || b > 4096)
        fail(I, "blocksize %lld", (long long)b);
    int64_t N = x->ty.dims[0], C = x->ty.dims[1], H = x->ty.dims[2], W = x->ty.dims[3];
    /* the channels C2 and spatial H2 x W2 of the side with the channels split */
    int64_t C2 = inverse ? C : C / (b * b), H2 = inverse ? H / b : H, W2 = inverse ? W / b : W;
    if (!inverse && C % (b * b))
        fail(I, "%lld channels do not split into blocks of %lld x %lld", (long long)C, (long long)b, (long long)b);
    if (inverse && (H % b || W % b))
        fail(I, "the input %s does not split into blocks of %lld x %lld", tystr(I, &x->ty), (long long)b, (long long)b);
    int64_t sp[5] = {N * C2, H2, b, W2, b};
    int64_t ch[5] = {N, b * b, C2, H2, W2};
    if (crd) {
        ch[0] = N * C2;
        ch[1] = b * b;
        ch[2] = H2;
        ch[3] = W2;
    }
    cfx_type spt = mktype(x->ty.dtype, 5, sp), cht = mktype(x->ty.dtype, crd ? 4 : 5, ch);
    cfx_type part = mktype(x->ty.dtype, 3, (int64_t[]){N * C2, H2, W2});
    cfx_type t = x->ty;
    if (inverse) {
        t.dims[1] = C * b * b;
        t.dims[2] = H2;
        t.dims[3] = W2;
    } else {
        t.dims[1] = C2;
        t.dims[2] = H * b;
        t.dims[3] = W * b;
    }
    const char *src = ref(I, x), *nm = out_name(I, n, 0);
    const char *from = new_id(I, "s_", nm), *to = new_id(I, "t_", nm);
    const char *i = new_id(I, "i_", "block"), *j = new_id(I, "j_", "block");
    const char *spart = fmt(I, "%s[:, :, %s, :, %s]", inverse ? from : to, i, j);
    const char *cpart = fmt(I, "%s[:, %s * %lld + %s]", inverse ? to : from, i, (long long)b, j);
    cfx_type chp = cht; /* one block offset of the channel side */
    chp.rank = cht.rank - 1;
    chp.dims[0] = cht.dims[0];
    for (int d = 1; d < chp.rank; d++)
        chp.dims[d] = cht.dims[d + 1];
    line(I, "%s = %s", from, reshaped(I, src, &x->ty, inverse ? &spt : &cht));
    line(I, "%s = %s", to, zeros_of(I, inverse ? &cht : &spt));
    line(I, "for %s in range(%lld) {", i, (long long)b);
    I->indent++;
    line(I, "for %s in range(%lld) {", j, (long long)b);
    I->indent++;
    if (inverse)
        line(I, "%s = %s", cpart, reshaped(I, spart, &part, &chp));
    else
        line(I, "%s = %s", spart, reshaped(I, cpart, &chp, &part));
    I->indent--;
    line(I, "}");
    I->indent--;
    line(I, "}");
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = %s", v, reshaped(I, to, inverse ? &cht : &spt, &t));
}

/* CenterCropPad with the shape known at import: the centred box of the input (cropped) written
 * into the centred box of zeros (padded), each axis's odd excess on the end, as ONNX's reference. */
static void op_center_crop_pad(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int r = x->ty.rank;
    int64_t sh[CFX_TYPE_MAX_RANK], axes[CFX_TYPE_MAX_RANK];
    int64_t ns = ints_of(I, known(I, n, 1, "the shape"), sh, CFX_TYPE_MAX_RANK, "the shape");
    size_t na = 0;
    const int64_t *ax = attr_ints(I, n, "axes", &na);
    if (!ax) {
        na = (size_t)r;
        for (int d = 0; d < r; d++)
            axes[d] = d;
    } else {
        if (na > (size_t)r)
            fail(I, "%zu axes for %s", na, tystr(I, &x->ty));
        for (size_t k = 0; k < na; k++)
            axes[k] = norm_axis(I, ax[k], r, "axis");
    }
    if (ns != (int64_t)na)
        fail(I, "%lld sizes for %zu axes", (long long)ns, na);
    cfx_type t = x->ty;
    int64_t clo[CFX_TYPE_MAX_RANK], chi[CFX_TYPE_MAX_RANK], plo[CFX_TYPE_MAX_RANK], phi[CFX_TYPE_MAX_RANK];
    for (int d = 0; d < r; d++) {
        clo[d] = plo[d] = 0;
        chi[d] = phi[d] = x->ty.dims[d];
    }
    for (size_t k = 0; k < na; k++) {
        int a = (int)axes[k];
        int64_t dim = x->ty.dims[a], s = sh[k];
        if (s < 1 || s > ((int64_t)1 << 30))
            fail(I, "size %lld for axis %d", (long long)s, a);
        t.dims[a] = s;
        if (s < dim) {
            clo[a] = (dim - s) / 2;
            chi[a] = clo[a] + s;
            phi[a] = s;
        } else if (s > dim) {
            plo[a] = (s - dim) / 2;
            phi[a] = plo[a] + dim;
        }
    }
    check_shape(I, out_name(I, n, 0), t.rank, t.dims, 0);
    const char *src = ref(I, x);
    int pads = 0, crops = 0;
    for (int d = 0; d < r; d++) {
        pads |= t.dims[d] > x->ty.dims[d];
        crops |= t.dims[d] < x->ty.dims[d];
    }
    const char *part = crops ? fmt(I, "%s%s", src, box_text(I, r, clo, chi, x->ty.dims)) : src;
    const char *v = out_var(I, n, 0, &t);
    if (!pads) {
        line(I, "%s = %s", v, part);
        return;
    }
    line(I, "%s = %s", v, zeros_of(I, &t));
    line(I, "%s%s = %s", v, box_text(I, r, plo, phi, t.dims), part);
}

/* Trilu and EyeLike: masks known at import */
static void op_trilu(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int64_t k = 0;
    if (has_input(n, 1))
        ints_of(I, known(I, n, 1, "k"), &k, 1, "k");
    int upper = (int)attr_int(I, n, "upper", 1), r = x->ty.rank;
    if (r < 2)
        fail(I, "the operand is %s, not a matrix or a stack of them", tystr(I, &x->ty));
    if (count(&x->ty) == 0) { /* nothing to mask: the result is known, of 0 elements too */
        out_known(I, n, 0, &x->ty, alloc(I, 1));
        return;
    }
    int64_t rows = x->ty.dims[r - 2], cols = x->ty.dims[r - 1];
    cfx_type mt = mktype(CFX_BOOL, 2, (int64_t[]){rows, cols});
    uint8_t *mask = new_data(I, &mt);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            mask[i * cols + j] = upper ? j - i >= k : j - i <= k;
    ival mv = {.name = fmt(I, "%s_mask", out_name(I, n, 0)), .ty = mt, .data = mask};
    cfx_type zt = x->ty;
    const char *xs = ref(I, x), *ms = ref(I, &mv);
    const char *v = out_var(I, n, 0, &x->ty);
    const char *zero = x->ty.dtype == CFX_BOOL ? fmt(I, "zeros(%s)", tystr(I, &zt)) : zeros_of(I, &zt);
    if (r == 2)
        line(I, "%s = where(%s, %s, %s)", v, ms, xs, zero);
    else { /* spread the mask over the leading dimensions */
        cfx_type bt = x->ty;
        bt.dtype = CFX_BOOL;
        line(I, "%s = where(%s == ones(%s), %s, %s)", v, ms, tystr(I, &bt), xs, zero);
    }
}

/* EyeLike: the identity (its diagonal moved by k) of the input's shape, known at import */
static void op_eyelike(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    if (x->ty.rank != 2)
        fail(I, "the input is %s, not a matrix", tystr(I, &x->ty));
    cfx_dtype dt = x->ty.dtype;
    int half = x->half;
    if (attr(I, n, "dtype"))
        dt = dtype_of(I, (int32_t)attr_int(I, n, "dtype", 0), "EyeLike's 'dtype'", &half);
    int64_t k = attr_int(I, n, "k", 0), rows = x->ty.dims[0], cols = x->ty.dims[1];
    cfx_type t = mktype(dt, 2, x->ty.dims);
    void *data = new_data(I, &t);
    for (int64_t i = 0; i < rows; i++)
        if (i + k >= 0 && i + k < cols)
            seti(dt, data, i * cols + i + k, 1);
    out_known(I, n, 0, &t, data);
    I->node_half = half;
}

/* OneHot: `depth` known at import, indices of run time (reals cast to int64, a negative one
 * counted from the end, one outside -depth to depth - 1 matching no position); each element
 * the values' `on` where its position along `axis` is the index, else `off`: a comparison of
 * the indices with a known iota, and one `where`. */
static void op_onehot(imp *I, const Onnx__NodeProto *n)
{
    ival *ix = in(I, n, 0), *dv = known(I, n, 1, "the depth"), *vals = in(I, n, 2);
    if (count(&dv->ty) != 1 || dv->ty.dtype == CFX_BOOL)
        fail(I, "the depth is %s, not one number", tystr(I, &dv->ty));
    double dd = getd(dv, 0);
    if (!(dd >= 1 && dd < (double)((int64_t)1 << 30)))
        fail(I, "the depth is %g; it must be from 1 to 2^30", dd);
    int64_t depth = is_real(dv->ty.dtype) ? (int64_t)dd : geti(dv, 0);
    if (vals->ty.rank != 1 || vals->ty.dims[0] != 2)
        fail(I, "the values are %s; OneHot takes [off, on], two elements", tystr(I, &vals->ty));
    if (ix->ty.dtype == CFX_BOOL)
        fail(I, "the indices are %s, not numbers", tystr(I, &ix->ty));
    int r = ix->ty.rank;
    int axis = norm_axis(I, attr_int(I, n, "axis", -1), r + 1, "axis");
    cfx_type t = vals->ty, kt = ix->ty, pos; /* the result; the indices with a 1 at axis; iota's */
    t.rank = kt.rank = r + 1;
    for (int d = 0, s = 0; d <= r; d++) {
        t.dims[d] = d == axis ? depth : ix->ty.dims[s];
        kt.dims[d] = d == axis ? 1 : ix->ty.dims[s];
        s += d != axis;
    }
    check_dims(I, out_name(I, n, 0), t.rank, t.dims);
    pos = mktype(CFX_I64, 0, NULL);
    pos.rank = r + 1;
    for (int d = 0; d <= r; d++)
        pos.dims[d] = d == axis ? depth : 1;
    const char *nm = out_name(I, n, 0), *is = ref(I, ix), *vs = ref(I, vals);
    if (is_real(ix->ty.dtype)) {
        const char *c = new_id(I, "ix_", nm);
        line(I, "%s = cast(%s, i64)", c, is);
        is = c;
    }
    const char *k = new_id(I, "k_", nm);
    line(I, "%s = where(%s < 0, %s + %lld, %s)", k, is, is, (long long)depth, is);
    const char *mask = fmt(I, "%s == iota(%s)", reshaped(I, k, &ix->ty, &kt), tystr(I, &pos));
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = where(%s, %s[1], %s[0])", v, mask, vs, vs);
    I->node_half = vals->half;
}

/* ---- ops that read or write by index: the gathers and scatters, ReverseSequence, Compress, ------
 * NonZero and Unique */

/* Gather along axis by index vector expression `idx` of n entries (i64/i32 run-time or known),
 * into out (data's shape with axis replaced by n): a loop of row copies. */
static void gather_loop(imp *I, const char *out, const cfx_type *t, const char *data, int rank, int axis,
                        const char *idx, int64_t n)
{
    const char *k = new_id(I, "k_", "gather");
    line(I, "%s = %s", out, zeros_of(I, t));
    line(I, "for %s in range(%lld) {", k, (long long)n);
    I->indent++;
    line(I, "%s%s = %s%s", out, subscript(I, rank, axis, k), data,
         subscript(I, rank, axis, fmt(I, "%s[%s]", idx, k)));
    I->indent--;
    line(I, "}");
}

/* A Gather whose result has a rank above cfx's, read only by a Transpose read only by a Reshape
 * (PyTorch writes F.unfold so: a known [kernel, positions] index per spatial axis): the Gather of
 * the index flattened, then reshape_through_transpose on the result's dims. Returns 0 where the
 * nodes are not so (what it wrote then is dropped by the refusal that follows). */
static int gather_through_transpose(imp *I, const Onnx__NodeProto *n, ival *x, ival *ix, int axis)
{
    int r = x->ty.rank + ix->ty.rank - 1;
    if (ix->ty.rank < 2 || r > 8)
        return 0;
    int64_t dims[8], m = count(&ix->ty);
    for (int d = 0, o = 0; d < x->ty.rank; d++) {
        if (d == axis)
            for (int q = 0; q < ix->ty.rank; q++)
                dims[o++] = ix->ty.dims[q];
        else
            dims[o++] = x->ty.dims[d];
    }
    cfx_type ft = mktype(ix->ty.dtype, 1, &m);
    const char *fname = fmt(I, "%s#flat_index", out_name(I, n, 0));
    ival *flat = ix->data ? bind(I, fname, &ft, NULL, ix->data)
                          : bind(I, fname, &ft, reshaped(I, ref(I, ix), &ix->ty, &ft), NULL);
    Onnx__AttributeProto a = {0};
    a.name = "axis";
    a.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a.has_i = 1;
    a.i = axis;
    ival *ins[2] = {x, flat};
    ival *g = step(I, n, "flat", op_gather, ins, 2, &a);
    return reshape_through_transpose(I, n, g, dims, r);
}

static void op_gather(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *ix = in(I, n, 1);
    int axis = norm_axis(I, attr_int(I, n, "axis", 0), x->ty.rank, "axis");
    if (is_real(ix->ty.dtype) || ix->ty.dtype == CFX_BOOL)
        fail(I, "the indices are %s, not integers", tystr(I, &ix->ty));
    cfx_type t = x->ty;
    t.rank = x->ty.rank + ix->ty.rank - 1;
    if (t.rank > CFX_TYPE_MAX_RANK) {
        if (gather_through_transpose(I, n, x, ix, axis))
            return;
        fail(I, "the result has rank %d; cfx takes at most %d", t.rank, CFX_TYPE_MAX_RANK);
    }
    for (int d = 0, o = 0; d < x->ty.rank; d++) {
        if (d == axis)
            for (int q = 0; q < ix->ty.rank; q++)
                t.dims[o++] = ix->ty.dims[q];
        else
            t.dims[o++] = x->ty.dims[d];
    }
    int64_t m = count(&ix->ty);
    if (x->data && ix->data && count(&t) <= ONNX_FOLD_MAX) {
        int64_t outer = 1, inner = 1, dim = x->ty.dims[axis];
        for (int d = 0; d < axis; d++) outer *= x->ty.dims[d];
        for (int d = axis + 1; d < x->ty.rank; d++) inner *= x->ty.dims[d];
        void *data = new_data(I, &t);
        size_t es = (size_t)cfx_dtype_size(t.dtype);
        for (int64_t b = 0; b < outer; b++)
            for (int64_t j = 0; j < m; j++) {
                int64_t i = geti(ix, j);
                if (i < -dim || i >= dim)
                    fail(I, "index %lld is out of range for dimension %d of size %lld", (long long)i, axis, (long long)dim);
                if (i < 0)
                    i += dim;
                copy((char *)data + (size_t)((b * m + j) * inner) * es,
                       (char *)x->data + (size_t)((b * dim + i) * inner) * es, (size_t)inner * es);
            }
        out_known(I, n, 0, &t, data);
        return;
    }
    const char *src = ref(I, x);
    if (ix->ty.rank == 0) {
        const char *i = ix->data ? fmt(I, "%lld", (long long)geti(ix, 0)) : ref(I, ix);
        const char *v = out_var(I, n, 0, &t);
        line(I, "%s = %s%s", v, src, subscript(I, x->ty.rank, axis, i));
        return;
    }
    if (ix->ty.dtype == CFX_I32 || ix->ty.dtype == CFX_I64) {
        /* one take: one GATHER record whatever the number of indices (a loop of row copies,
         * gather_loop, was a dozen records per index on the cpu executor) */
        const char *v = out_var(I, n, 0, &t);
        line(I, "%s = take(%s, %s, axis=%d)", v, src, ref(I, ix), axis);
        return;
    }
    const char *idx = ref(I, ix);
    if (ix->ty.rank > 1)
        idx = fmt(I, "reshape(%s, [%lld])", idx, (long long)m);
    cfx_type flat = x->ty;
    flat.dims[axis] = m;
    if (ix->ty.rank == 1) {
        const char *v = out_var(I, n, 0, &t);
        gather_loop(I, v, &t, src, x->ty.rank, axis, idx, m);
        return;
    }
    const char *tmp = new_id(I, "g_", out_name(I, n, 0));
    if (ix->ty.rank > 1) {
        const char *iv = new_id(I, "i_", out_name(I, n, 0));
        line(I, "%s = %s", iv, idx);
        idx = iv;
    }
    gather_loop(I, tmp, &flat, src, x->ty.rank, axis, idx, m);
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = %s", v, reshaped(I, tmp, &flat, &t));
}

static void op_gather_elements(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *ix = in(I, n, 1);
    int axis = norm_axis(I, attr_int(I, n, "axis", 0), x->ty.rank, "axis");
    if (ix->ty.rank != x->ty.rank)
        fail(I, "the indices' rank %d differs from the data's %d", ix->ty.rank, x->ty.rank);
    cfx_type t = ix->ty;
    t.dtype = x->ty.dtype;
    const char *v = out_var(I, n, 0, &t), *src = ref(I, x), *idx = ref(I, ix);
    const char *ixs[CFX_TYPE_MAX_RANK], *sel[CFX_TYPE_MAX_RANK];
    line(I, "%s = %s", v, zeros_of(I, &t));
    element_loops(I, &t, ixs, 1);
    const char *all = index_list(I, ixs, t.rank);
    for (int d = 0; d < t.rank; d++)
        sel[d] = d == axis ? fmt(I, "%s[%s]", idx, all) : ixs[d];
    line(I, "%s[%s] = %s[%s]", v, all, src, index_list(I, sel, t.rank));
    element_loops(I, &t, ixs, 0);
}

/* GatherND: a loop over the index tuples (the indices but their last axis), each copying the
 * data's slice at the tuple (after batch_dims leading axes, shared with the indices) into the
 * result's row. The language's subscripts check each index: a negative one counts from the end,
 * one out of range stops the run with `index` (refused at import where the indices are known). */
static void op_gather_nd(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *ix = in(I, n, 1);
    int r = x->ty.rank, q = ix->ty.rank;
    int64_t b = attr_int(I, n, "batch_dims", 0);
    if (ix->ty.dtype != CFX_I64 && ix->ty.dtype != CFX_I32)
        fail(I, "the indices are %s, not integers", tystr(I, &ix->ty));
    if (r < 1 || q < 1)
        fail(I, "data %s and indices %s: each needs rank 1 or more", tystr(I, &x->ty), tystr(I, &ix->ty));
    if (b < 0 || b >= r || b >= q)
        fail(I, "batch_dims %lld for data %s and indices %s", (long long)b, tystr(I, &x->ty), tystr(I, &ix->ty));
    for (int d = 0; d < b; d++)
        if (ix->ty.dims[d] != x->ty.dims[d])
            fail(I, "batch dimension %d is %lld in the data %s and %lld in the indices %s", d,
                 (long long)x->ty.dims[d], tystr(I, &x->ty), (long long)ix->ty.dims[d], tystr(I, &ix->ty));
    int64_t k = ix->ty.dims[q - 1];
    if (k < 1 || b + k > r)
        fail(I, "index tuples of %lld entries into %s after %lld batch dimensions", (long long)k,
             tystr(I, &x->ty), (long long)b);
    cfx_type t = x->ty;
    t.rank = q - 1 + r - (int)b - (int)k;
    if (t.rank > CFX_TYPE_MAX_RANK)
        fail(I, "the result has rank %d; cfx takes at most %d", t.rank, CFX_TYPE_MAX_RANK);
    for (int d = 0; d < q - 1; d++)
        t.dims[d] = ix->ty.dims[d];
    for (int d = (int)(b + k); d < r; d++)
        t.dims[q - 1 + d - b - k] = x->ty.dims[d];
    if (count(&t) == 0)
        fail(I, "the result %s has no elements", tystr(I, &t));
    for (int64_t i = 0; ix->data && i < count(&ix->ty); i++) {
        int64_t v = geti(ix, i), dim = x->ty.dims[b + i % k];
        if (v < -dim || v >= dim)
            fail(I, "index %lld is out of range for dimension %lld of size %lld", (long long)v,
                 (long long)(b + i % k), (long long)dim);
    }
    const char *src = ref(I, x), *idx = ref(I, ix);
    const char *v = out_var(I, n, 0, &t);
    const char *ixs[CFX_TYPE_MAX_RANK], *sel[CFX_TYPE_MAX_RANK];
    cfx_type lead = ix->ty; /* the index tuples */
    lead.rank = q - 1;
    if (q > 1)
        line(I, "%s = %s", v, zeros_of(I, &t));
    element_loops(I, &lead, ixs, 1);
    const char *all = index_list(I, ixs, q - 1);
    for (int d = 0; d < b; d++)
        sel[d] = ixs[d];
    for (int e = 0; e < k; e++)
        sel[b + e] = fmt(I, "%s[%s%s%d]", idx, all, q > 1 ? ", " : "", e);
    if (q > 1)
        line(I, "%s[%s] = %s[%s]", v, all, src, index_list(I, sel, (int)(b + k)));
    else
        line(I, "%s = %s[%s]", v, src, index_list(I, sel, (int)(b + k)));
    element_loops(I, &lead, ixs, 0);
}

/* A scatter's reduction attribute: how the update is combined with the old value ("+", "*",
 * "max", "min"), or NULL for none (a plain write). */
static const char *scatter_reduction(imp *I, const Onnx__NodeProto *n, const ival *x)
{
    const char *red = attr_str(I, n, "reduction", "none");
    const char *with = !strcmp(red, "add") ? "+" : !strcmp(red, "mul") ? "*" : !strcmp(red, "max") ? "max"
                     : !strcmp(red, "min") ? "min" : NULL;
    if (!with && strcmp(red, "none") != 0)
        fail(I, "reduction '%s' is not supported (none, add, mul, max, min are)", clean(I, red));
    if (with && x->ty.dtype == CFX_BOOL)
        fail(I, "reduction '%s' of %s is not supported", red, tystr(I, &x->ty));
    return with;
}

/* The line writing val at `at`, combined with the old value by `with` (scatter_reduction's); a
 * sum or product of halves rounds at each step, as the type computes it. */
static void scatter_write(imp *I, const char *at, const char *with, const char *val, int half)
{
    if (!with)
        line(I, "%s = %s", at, val);
    else if (with[0] == '+' || with[0] == '*')
        line(I, "%s = %s", at, half_rounded(I, half, fmt(I, "%s %s %s", at, with, val)));
    else
        line(I, "%s = %s(%s, %s)", at, with, at, val);
}

/* ScatterND: data with rows (or elements) replaced, or combined with them by the reduction,
 * written in place where the result goes to the variable that holds the data and the data is
 * read no more (a loop's carried `tokens[t] = tok`). */
static void op_scatter_nd(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *ix = in(I, n, 1), *up = in(I, n, 2);
    const char *with = scatter_reduction(I, n, x); /* the new value combined with the old */
    if (ix->ty.dtype != CFX_I64 && ix->ty.dtype != CFX_I32)
        fail(I, "the indices are %s, not integers", tystr(I, &ix->ty));
    if (ix->ty.rank < 1)
        fail(I, "the indices are a scalar");
    int k = (int)ix->ty.dims[ix->ty.rank - 1];
    if (k < 1 || k > x->ty.rank)
        fail(I, "index tuples of %d entries into %s", k, tystr(I, &x->ty));
    int64_t m = count(&ix->ty) / k;
    cfx_type want = x->ty; /* updates: the indices' leading shape, then the data's from k on */
    want.rank = ix->ty.rank - 1 + x->ty.rank - k;
    for (int d = 0; d < ix->ty.rank - 1; d++)
        want.dims[d] = ix->ty.dims[d];
    for (int d = k; d < x->ty.rank; d++)
        want.dims[ix->ty.rank - 1 + d - k] = x->ty.dims[d];
    if (!same_type(&want, &up->ty))
        fail(I, "the updates are %s; data %s and indices %s need %s", tystr(I, &up->ty), tystr(I, &x->ty),
             tystr(I, &ix->ty), tystr(I, &want));
    const char *src = ref(I, x), *idx = ref(I, ix), *upd = ref(I, up);
    const char *v = out_var(I, n, 0, &x->ty);
    if (strcmp(v, src) != 0)
        line(I, "%s = %s", v, src);
    cfx_type row = up->ty; /* one update */
    row.rank = x->ty.rank - k;
    for (int d = 0; d < row.rank; d++)
        row.dims[d] = x->ty.dims[k + d];
    const char *flat_i = ix->ty.rank == 2 ? idx : fmt(I, "reshape(%s, [%lld, %d])", idx, (long long)m, k);
    cfx_type upf = row;
    upf.rank = row.rank + 1;
    upf.dims[0] = m;
    for (int d = 0; d < row.rank; d++)
        upf.dims[d + 1] = row.dims[d];
    const char *flat_u = same_type(&upf, &up->ty) ? upd : fmt(I, "reshape(%s, %s)", upd, dims_list(I, &upf));
    const char *j = m == 1 ? "0" : new_id(I, "j_", out_name(I, n, 0));
    if (m > 1) {
        line(I, "for %s in range(%lld) {", j, (long long)m);
        I->indent++;
    }
    strbuf *sb = new_sb(I);
    const char *sym;
    int64_t off;
    if (m == 1 && k == 1 && sym_of(I, ix, &sym, &off))
        sb_printf(sb, off ? "%s + %lld" : "%s", sym, (long long)off);
    else
        for (int d = 0; d < k; d++)
            sb_printf(sb, "%s%s[%s, %d]", d ? ", " : "", flat_i, j, d);
    if (sb->oom)
        fail(I, "out of memory");
    const char *val = m == 1 && row.rank == 0 && up->elem ? up->elem : fmt(I, "%s[%s]", flat_u, j);
    const char *at = fmt(I, "%s[%s]", v, sb_str(sb));
    scatter_write(I, at, with, val, x->half);
    sb_free(sb);
    if (m > 1) {
        I->indent--;
        line(I, "}");
    }
}

/* ScatterElements (and opset 9's Scatter): data with the updates written element by element at
 * the indices along axis, combined by the reduction; in place where the result goes to the
 * variable that holds the data (op_scatter_nd's rule). Each write is the language's element
 * assignment, so a run-time index out of range stops the run with `index`, and a negative one
 * counts from the end, as ONNX says. */
static void op_scatter_elements(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *ix = in(I, n, 1), *up = in(I, n, 2);
    int r = x->ty.rank;
    if (r < 1)
        fail(I, "the data is a scalar");
    int axis = norm_axis(I, attr_int(I, n, "axis", 0), r, "axis");
    const char *with = scatter_reduction(I, n, x);
    if (ix->ty.dtype != CFX_I64 && ix->ty.dtype != CFX_I32)
        fail(I, "the indices are %s, not integers", tystr(I, &ix->ty));
    if (ix->ty.rank != r)
        fail(I, "the indices are %s for data %s: they must have its rank", tystr(I, &ix->ty), tystr(I, &x->ty));
    for (int d = 0; d < r; d++)
        if (d != axis && ix->ty.dims[d] > x->ty.dims[d])
            fail(I, "the indices are %s, larger than the data %s in dimension %d", tystr(I, &ix->ty),
                 tystr(I, &x->ty), d);
    cfx_type ut = ix->ty;
    ut.dtype = x->ty.dtype;
    if (!same_type(&ut, &up->ty))
        fail(I, "the updates are %s; indices %s need %s", tystr(I, &up->ty), tystr(I, &ix->ty), tystr(I, &ut));
    if (count(&ix->ty) == 0)
        fail(I, "the indices have no elements");
    int64_t dim = x->ty.dims[axis];
    for (int64_t i = 0; ix->data && i < count(&ix->ty); i++) {
        int64_t v = geti(ix, i);
        if (v < -dim || v >= dim)
            fail(I, "index %lld is out of range for axis %d of size %lld", (long long)v, axis, (long long)dim);
    }
    const char *src = ref(I, x), *idx = ref(I, ix), *upd = ref(I, up);
    const char *v = out_var(I, n, 0, &x->ty);
    if (strcmp(v, src) != 0)
        line(I, "%s = %s", v, src);
    const char *ixs[CFX_TYPE_MAX_RANK], *sel[CFX_TYPE_MAX_RANK];
    int loops = 0; /* a loop over each dimension of the indices but those of size 1 */
    for (int d = 0; d < r; d++) {
        ixs[d] = "0";
        if (ix->ty.dims[d] > 1) {
            ixs[d] = new_id(I, "i_", fmt(I, "%d", d));
            line(I, "for %s in range(%lld) {", ixs[d], (long long)ix->ty.dims[d]);
            I->indent++;
            loops++;
        }
    }
    const char *all = index_list(I, ixs, r);
    for (int d = 0; d < r; d++)
        sel[d] = d == axis ? fmt(I, "%s[%s]", idx, all) : ixs[d];
    const char *at = fmt(I, "%s[%s]", v, index_list(I, sel, r));
    const char *val = fmt(I, "%s[%s]", upd, all);
    scatter_write(I, at, with, val, x->half);
    while (loops-- > 0) {
        I->indent--;
        line(I, "}");
    }
}

/* TensorScatter (opset 24's KV-cache update): the cache copied, and the update's rows written
 * at write_indices[b] + s along axis (modulo the axis's length for mode circular), a loop over
 * the batch and the update's rows; a position outside the cache stops the run with `index`. */
static void op_tensor_scatter(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *up = in(I, n, 1), *wi = in_opt(I, n, 2);
    int r = x->ty.rank;
    if (r < 2)
        fail(I, "the cache is %s; rank 2 or more is taken", tystr(I, &x->ty));
    int axis = norm_axis(I, attr_int(I, n, "axis", -2), r, "axis");
    const char *mode = attr_str(I, n, "mode", "linear");
    int circ = !strcmp(mode, "circular");
    if (!circ && strcmp(mode, "linear") != 0)
        fail(I, "mode '%s' is not supported (linear, circular)", mode);
    if (axis == 0)
        fail(I, "axis 0: the sequence axis must follow the batch axis");
    if (up->ty.dtype != x->ty.dtype || up->ty.rank != r)
        fail(I, "the update is %s for the cache %s", tystr(I, &up->ty), tystr(I, &x->ty));
    for (int d = 0; d < r; d++)
        if (d == axis ? up->ty.dims[d] > x->ty.dims[d] : up->ty.dims[d] != x->ty.dims[d])
            fail(I, "the update is %s for the cache %s", tystr(I, &up->ty), tystr(I, &x->ty));
    int64_t B = x->ty.dims[0], S = up->ty.dims[axis], M = x->ty.dims[axis];
    if (wi && ((wi->ty.dtype != CFX_I64 && wi->ty.dtype != CFX_I32) || wi->ty.rank != 1 || wi->ty.dims[0] != B))
        fail(I, "write_indices is %s for %lld batch entries", tystr(I, &wi->ty), (long long)B);
    const char *src = ref(I, x), *u = ref(I, up), *nm = out_name(I, n, 0);
    const char *b = new_id(I, "b_", nm), *s = new_id(I, "s_", nm), *p = new_id(I, "p_", nm);
    const char *v = out_var(I, n, 0, &x->ty);
    line(I, "%s = %s", v, src);
    line(I, "for %s in range(%lld) {", b, (long long)B);
    I->indent++;
    line(I, "for %s in range(%lld) {", s, (long long)S);
    I->indent++;
    const char *pos = wi ? fmt(I, "cast(%s[%s], i64) + %s", ref(I, wi), b, s) : fmt(I, "cast(%s, i64)", s);
    line(I, "%s = %s", p, circ ? fmt(I, "(%s) %% %lld", pos, (long long)M) : pos);
    line(I, "%s%s = %s%s", v, index_at(I, r, b, axis, p), u, index_at(I, r, b, axis, s));
    I->indent--;
    line(I, "}");
    I->indent--;
    line(I, "}");
}

/* ReverseSequence: each batch entry's first sequence_lens[b] steps reversed, the rest kept; a
 * loop over the batch and the steps reading the row at the computed step. */
static void op_reverse_sequence(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *ln = in(I, n, 1);
    int r = x->ty.rank;
    if (r < 2)
        fail(I, "the input is %s; rank 2 or more is taken", tystr(I, &x->ty));
    int ta = norm_axis(I, attr_int(I, n, "time_axis", 0), r, "time_axis");
    int ba = norm_axis(I, attr_int(I, n, "batch_axis", 1), r, "batch_axis");
    if (ta > 1 || ba > 1 || ta == ba)
        fail(I, "time_axis %d and batch_axis %d: they must be 0 and 1", ta, ba);
    if (ln->ty.dtype != CFX_I64 && ln->ty.dtype != CFX_I32)
        fail(I, "sequence_lens is %s, not integers", tystr(I, &ln->ty));
    int64_t B = x->ty.dims[ba], T = x->ty.dims[ta];
    if (ln->ty.rank != 1 || ln->ty.dims[0] != B)
        fail(I, "sequence_lens is %s for %lld batch entries", tystr(I, &ln->ty), (long long)B);
    for (int64_t i = 0; ln->data && i < B; i++)
        if (geti(ln, i) < 0 || geti(ln, i) > T)
            fail(I, "sequence length %lld is outside 0 to %lld", (long long)geti(ln, i), (long long)T);
    const char *src = ref(I, x), *lens = ref(I, ln), *nm = out_name(I, n, 0);
    const char *b = new_id(I, "b_", nm), *t = new_id(I, "t_", nm), *l = new_id(I, "l_", nm);
    const char *v = out_var(I, n, 0, &x->ty);
    line(I, "%s = %s", v, src);
    line(I, "for %s in range(%lld) {", b, (long long)B);
    I->indent++;
    line(I, "%s = %s[%s]", l, lens, b);
    line(I, "for %s in range(%lld) {", t, (long long)T);
    I->indent++;
    const char *s = fmt(I, "(%s - 1 - %s) if %s < %s else %s", l, t, t, l, t);
    if (ta == 0)
        line(I, "%s[%s, %s] = %s[%s, %s]", v, t, b, src, s, b);
    else
        line(I, "%s[%s, %s] = %s[%s, %s]", v, b, t, src, b, s);
    I->indent--;
    line(I, "}");
    I->indent--;
    line(I, "}");
}

/* Compress: the slices of x along axis (x flattened where there is no axis) where the condition
 * is true. Its length is the count of true entries: with the condition known at import, the
 * slices at known positions are copied; with one of run time, the model's declared shape gives
 * the length, a loop copies each selected slice to the next row, and the run checks the count
 * (`assert`; more rows stop at the first past the end with `index`). */
static void op_compress(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *c = in(I, n, 1);
    const Onnx__AttributeProto *aa = attr(I, n, "axis");
    cfx_type xt = x->ty;
    if (!aa) {
        int64_t all = count(&x->ty);
        xt = mktype(x->ty.dtype, 1, &all);
    }
    int r = xt.rank;
    if (r < 1)
        fail(I, "the input is %s, a scalar", tystr(I, &x->ty));
    int axis = aa ? norm_axis(I, attr_int(I, n, "axis", 0), r, "axis") : 0;
    if (c->ty.dtype != CFX_BOOL || c->ty.rank != 1)
        fail(I, "the condition is %s, not a bool vector", tystr(I, &c->ty));
    int64_t L = c->ty.dims[0];
    if (L > xt.dims[axis])
        fail(I, "the condition has %lld entries for an axis of %lld", (long long)L, (long long)xt.dims[axis]);
    const char *nm = out_name(I, n, 0), *xs = reshaped(I, ref(I, x), &x->ty, &xt);
    if (!plain_id(xs)) {
        const char *f = new_id(I, "f_", nm);
        line(I, "%s = %s", f, xs);
        xs = f;
    }
    cfx_type t = xt;
    if (c->data) {
        int64_t *pos = alloc(I, (size_t)(L > 0 ? L : 1) * sizeof *pos), np = 0;
        for (int64_t i = 0; i < L; i++)
            if (geti(c, i))
                pos[np++] = i;
        if (np == 0)
            fail(I, "the condition selects nothing, and cfx has no tensors of 0 elements");
        t.dims[axis] = np;
        const char *v = out_var(I, n, 0, &t);
        if (np == xt.dims[axis]) {
            line(I, "%s = %s", v, xs);
            return;
        }
        line(I, "%s = %s", v, zeros_of(I, &t));
        if (np <= 8) {
            for (int64_t k = 0; k < np; k++)
                line(I, "%s%s = %s%s", v, subscript(I, r, axis, fmt(I, "%lld", (long long)k)), xs,
                     subscript(I, r, axis, fmt(I, "%lld", (long long)pos[k])));
            return;
        }
        const char *pt = index_table(I, fmt(I, "%s_pos", nm), pos, np), *k = new_id(I, "k_", nm);
        line(I, "for %s in range(%lld) {", k, (long long)np);
        I->indent++;
        line(I, "%s%s = %s%s", v, subscript(I, r, axis, k), xs, subscript(I, r, axis, fmt(I, "%s[%s]", pt, k)));
        I->indent--;
        line(I, "}");
        return;
    }
    cfx_type decl;
    if (!declared_type(I, I->mp->graph, nm, &decl) || decl.rank != r || decl.dims[axis] < 1)
        fail(I, "the condition is of run time and the output's length along axis %d is not declared: the "
             "count of true entries fixes it, and cfx fixes every shape at import", axis);
    int64_t D = decl.dims[axis];
    t.dims[axis] = D;
    const char *v = out_var(I, n, 0, &t), *i = new_id(I, "i_", nm), *j = new_id(I, "j_", nm);
    line(I, "%s = %s", v, zeros_of(I, &t));
    line(I, "%s = 0", j);
    line(I, "for %s in range(%lld) {", i, (long long)L);
    I->indent++;
    line(I, "if %s[%s] {", ref(I, c), i);
    I->indent++;
    line(I, "%s%s = %s%s", v, subscript(I, r, axis, j), xs, subscript(I, r, axis, i));
    line(I, "%s += 1", j);
    I->indent--;
    line(I, "}");
    I->indent--;
    line(I, "}");
    line(I, "assert(%s == %lld, \"Compress '%s': the condition selects another count of slices than the "
         "%lld declared\")", j, (long long)D, clean(I, nm), (long long)D);
}

/* NonZero: the [rank, count] indices of the nonzero elements, in row-major order. Of a value known
 * at import, computed there; of one of run time, the count is the model's declared one: a loop
 * over the elements writes each nonzero one's indices to the next column, and the run checks the
 * count (`assert`; more stop at the first column past the end with `index`). */
static void op_nonzero(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int r = x->ty.rank;
    if (r < 1)
        fail(I, "the input is %s, a scalar; NonZero takes a tensor of rank 1 or more", tystr(I, &x->ty));
    int64_t N = count(&x->ty), D = 0;
    if (x->data) {
        for (int64_t i = 0; i < N; i++)
            D += is_real(x->ty.dtype) ? getd(x, i) != 0 : geti(x, i) != 0;
        if (D == 0)
            fail(I, "'%s' has no nonzero element, and cfx has no tensors of 0 elements", clean(I, x->name));
        cfx_type t = mktype(CFX_I64, 2, (int64_t[]){r, D});
        int64_t *data = new_data(I, &t), j = 0;
        for (int64_t i = 0; i < N; i++) {
            if (is_real(x->ty.dtype) ? getd(x, i) == 0 : geti(x, i) == 0)
                continue;
            for (int64_t d = r - 1, rest = i; d >= 0; d--) {
                data[d * D + j] = rest % x->ty.dims[d];
                rest /= x->ty.dims[d];
            }
            j++;
        }
        out_known(I, n, 0, &t, data);
        return;
    }
    D = declared_length(I, n, 0, 2, 1);
    if (!D)
        data_length_unknown(I, n, 0, x);
    cfx_type ft = mktype(x->ty.dtype, 1, &N), t = mktype(CFX_I64, 2, (int64_t[]){r, D});
    const char *nm = out_name(I, n, 0), *xs = reshaped(I, ref(I, x), &x->ty, &ft);
    if (!plain_id(xs)) {
        const char *f = new_id(I, "f_", nm);
        line(I, "%s = %s", f, xs);
        xs = f;
    }
    const char *i = new_id(I, "i_", nm), *j = new_id(I, "j_", nm), *v = out_var(I, n, 0, &t);
    line(I, "%s = %s", v, zeros_of(I, &t));
    line(I, "%s = 0", j);
    line(I, "for %s in range(%lld) {", i, (long long)N);
    I->indent++;
    line(I, x->ty.dtype == CFX_BOOL ? "if %s[%s] {" : "if %s[%s] != 0 {", xs, i);
    I->indent++;
    int64_t stride = 1;
    for (int d = r - 1; d >= 0; d--) {
        line(I, "%s[%d, %s] = cast(%s // %lld %% %lld, i64)", v, d, j, i, (long long)stride, (long long)x->ty.dims[d]);
        stride *= x->ty.dims[d];
    }
    line(I, "%s += 1", j);
    I->indent--;
    line(I, "}");
    I->indent--;
    line(I, "}");
    line(I, "assert(%s == %lld, \"NonZero '%s': the input has another count of nonzero elements than the %lld "
         "declared\")", j, (long long)D, clean(I, nm), (long long)D);
}

/* 1 when slices a and b (m elements each, from flat positions pa and pb of x's data) are equal,
 * NaN equal to NaN as numpy's unique */
static int slices_equal(const ival *x, int64_t pa, int64_t pb, int64_t m, const int64_t *at)
{
    for (int64_t e = 0; e < m; e++) {
        int64_t ia = at[pa * m + e], ib = at[pb * m + e];
        if (is_real(x->ty.dtype)) {
            double a = getd(x, ia), b = getd(x, ib);
            if (!(a == b || (a != a && b != b)))
                return 0;
        } else if (geti(x, ia) != geti(x, ib)) {
            return 0;
        }
    }
    return 1;
}

/* Unique: the distinct elements (no axis: of x flattened) or slices along axis, sorted (numpy's
 * unique: slices in lexicographic order, NaN last and equal to NaN) or in order of first
 * appearance (sorted = 0), with indices, inverse_indices and counts. The count U is the model's
 * declared one, or counted at import where x is known there. x is seen as [n, m] (the axis moved
 * first); a first loop marks each slice that appears for the first time, and the run checks
 * their count (`assert`); a second gives each slice its rank among them (the distinct ones less
 * than it, or the first appearances before its own) and writes the outputs at it. */
static void op_unique(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    cfx_dtype dt = x->ty.dtype;
    const Onnx__AttributeProto *aa = attr(I, n, "axis");
    int srt = (int)attr_int(I, n, "sorted", 1), r = x->ty.rank;
    if (dt == CFX_BOOL && srt)
        fail(I, "sorted Unique of %s is not supported (numbers are taken)", tystr(I, &x->ty));
    if (aa && r < 1)
        fail(I, "the input is %s, a scalar, with an axis", tystr(I, &x->ty));
    int axis = aa ? norm_axis(I, attr_int(I, n, "axis", 0), r, "axis") : 0;
    int64_t nsl = aa ? x->ty.dims[axis] : count(&x->ty), m = count(&x->ty) / (nsl ? nsl : 1);
    /* the order of x's elements with the axis first: perm, and the moved type */
    int perm[CFX_TYPE_MAX_RANK], np = 0;
    cfx_type mt = x->ty;
    if (aa) {
        perm[np++] = axis;
        for (int d = 0; d < r; d++)
            if (d != axis)
                perm[np++] = d;
        for (int d = 0; d < r; d++)
            mt.dims[d] = x->ty.dims[perm[d]];
    }
    int64_t U = 0;
    if (x->data) {
        if (nsl * m > ((int64_t)1 << 16))
            fail(I, "'%s' has %lld elements; Unique counts at most 2^16 at import", clean(I, x->name),
                 (long long)(nsl * m));
        int64_t *at = alloc(I, (size_t)(nsl * m + 1) * sizeof *at);
        for (int64_t p = 0; p < nsl * m; p++) { /* the flat position in x of element p of [n, m] */
            int64_t rest = p, pos = 0, idx[CFX_TYPE_MAX_RANK] = {0};
            for (int d = mt.rank - 1; d >= 0 && aa; d--) {
                idx[perm[d]] = rest % mt.dims[d];
                rest /= mt.dims[d];
            }
            for (int d = 0; d < r && aa; d++)
                pos = pos * x->ty.dims[d] + idx[d];
            at[p] = aa ? pos : p;
        }
        for (int64_t i = 0; i < nsl; i++) {
            int first = 1;
            for (int64_t j = 0; j < i && first; j++)
                first = !slices_equal(x, i, j, m, at);
            U += first;
        }
    } else {
        U = declared_length(I, n, 0, aa ? r : 1, axis);
        for (size_t k = 1; !U && k < 4; k += 2)
            U = declared_length(I, n, k, 1, 0);
        if (!U)
            data_length_unknown(I, n, 0, x);
    }
    const char *nm = out_name(I, n, 0), *xs = ref(I, x);
    cfx_type xt = mktype(dt, 2, (int64_t[]){nsl, m});
    if (aa && axis)
        xs = fmt(I, "permute(%s, %s)", xs, perm_text(I, perm, r));
    const char *X = new_id(I, "x_", nm), *first = new_id(I, "first_", nm), *fp = new_id(I, "fp_", nm);
    const char *i = new_id(I, "i_", nm), *eq = new_id(I, "eq_", nm), *rk = new_id(I, "rank_", nm);
    line(I, "%s = %s", X, reshaped(I, xs, &mt, &xt));
    /* the elementwise equality of X and its row i (NaN equal to NaN), and order (NaN last) */
    const char *row = fmt(I, "%s[%s]", X, i);
    const char *eqe = is_real(dt) ? fmt(I, "(%s == %s) or ((%s != %s) and (%s != %s))", X, row, X, X, row, row)
                                  : fmt(I, "%s == %s", X, row);
    const char *lte = is_real(dt) ? fmt(I, "(%s < %s) or ((%s != %s) and (%s == %s))", X, row, row, row, X, X)
                                  : fmt(I, "%s < %s", X, row);
    line(I, "%s = zeros(bool[%lld])", first, (long long)nsl);
    line(I, "%s = zeros(i32[%lld])", fp, (long long)nsl);
    line(I, "for %s in range(%lld) {", i, (long long)nsl);
    I->indent++;
    line(I, "%s = all(%s, axis=1)", eq, eqe);
    line(I, "%s[%s] = argmax(cast(%s, i32))", fp, i, eq);
    line(I, "%s[%s] = %s[%s] == %s", first, i, fp, i, i);
    I->indent--;
    line(I, "}");
    line(I, "assert(sum(%s) == %lld, \"Unique '%s': the input has another count of distinct %s than the %lld "
         "declared\")", first, (long long)U, clean(I, nm), aa ? "slices" : "elements", (long long)U);
    cfx_type yt = mktype(dt, 2, (int64_t[]){U, m}), ut = mktype(CFX_I64, 1, &U), it = mktype(CFX_I64, 1, &nsl);
    const char *ys = new_id(I, "y_", nm), *ix = new_id(I, "ix_", nm), *inv = new_id(I, "inv_", nm);
    const char *cn = new_id(I, "cnt_", nm);
    line(I, "%s = %s", ys, zeros_of(I, &yt));
    line(I, "%s = %s", ix, zeros_of(I, &ut));
    line(I, "%s = %s", cn, zeros_of(I, &ut));
    line(I, "%s = %s", inv, zeros_of(I, &it));
    line(I, "for %s in range(%lld) {", i, (long long)nsl);
    I->indent++;
    line(I, "%s = all(%s, axis=1)", eq, eqe);
    if (srt) { /* the distinct slices less than row i: at their first difference from it, less */
        const char *p = new_id(I, "p_", nm);
        line(I, "%s = reshape(argmax(cast(not (%s), i32), axis=1), [%lld, 1])", p, eqe, (long long)nsl);
        line(I, "%s = sum(%s and any((%s) and (iota(i32[1, %lld]) == %s), axis=1) and not %s)", rk, first, lte,
             (long long)m, p, eq);
    } else {
        line(I, "%s = sum(%s and (iota(i32[%lld]) < %s[%s]))", rk, first, (long long)nsl, fp, i);
    }
    line(I, "%s[%s] = cast(%s, i64)", inv, i, rk);
    line(I, "if %s[%s] {", first, i);
    I->indent++;
    line(I, "%s[%s] = %s", ys, rk, row);
    line(I, "%s[%s] = cast(%s, i64)", ix, rk, i);
    line(I, "%s[%s] = cast(sum(%s), i64)", cn, rk, eq);
    I->indent--;
    line(I, "}");
    I->indent--;
    line(I, "}");
    cfx_type ot = mktype(dt, 1, &U);
    if (aa) { /* [U, m] seen as x with the axis first, then moved back */
        int inv_perm[CFX_TYPE_MAX_RANK];
        for (int d = 0; d < r; d++)
            inv_perm[perm[d]] = d;
        cfx_type ut2 = mt;
        ut2.dims[0] = U;
        ot = x->ty;
        ot.dims[axis] = U;
        const char *e = reshaped(I, ys, &yt, &ut2);
        ys = axis ? fmt(I, "permute(%s, %s)", e, perm_text(I, inv_perm, r)) : e;
    } else {
        ys = reshaped(I, ys, &yt, &ot);
    }
    const char *outs[4] = {ys, ix, inv, cn};
    const cfx_type *ts[4] = {&ot, &ut, &it, &ut};
    for (size_t k = 0; k < 4 && k < n->n_output; k++)
        if (n->output[k] && *n->output[k]) {
            int64_t dk = k == 0 ? ot.dims[aa ? axis : 0] : ts[k]->dims[0];
            int64_t dd = declared_length(I, n, k, ts[k]->rank, k == 0 && aa ? axis : 0);
            if (dd && dd != dk)
                fail(I, "output '%s' is declared of length %lld; the data gives %lld", clean(I, n->output[k]),
                     (long long)dd, (long long)dk);
            line(I, "%s = %s", out_var(I, n, k, ts[k]), outs[k]);
        }
    I->node_rounded = 1;
}

/* ---- arithmetic: Where, Clip, Sum and the rest of many operands, the reductions, Softmax, -------
 * TopK, CumSum, MatMul, Gemm, Einsum, Det */

static void op_where(imp *I, const Onnx__NodeProto *n)
{
    ival *c = in(I, n, 0), *a = in(I, n, 1), *b = in(I, n, 2);
    if (c->ty.dtype != CFX_BOOL)
        fail(I, "the condition is %s, not bool", tystr(I, &c->ty));
    if (a->ty.dtype != b->ty.dtype)
        fail(I, "the operands' types differ: %s and %s", tystr(I, &a->ty), tystr(I, &b->ty));
    cfx_type ab, t;
    broadcast(I, &a->ty, &b->ty, &ab);
    broadcast(I, &c->ty, &ab, &t);
    t.dtype = a->ty.dtype;
    if (c->data && a->data && b->data && count(&t) <= ONNX_FOLD_MAX) {
        void *data = new_data(I, &t);
        for (int64_t i = 0; i < count(&t); i++) {
            ival *p = geti(c, bindex(&t, &c->ty, i)) ? a : b;
            if (is_real(t.dtype))
                setd(t.dtype, data, i, getd(p, bindex(&t, &p->ty, i)));
            else
                seti(t.dtype, data, i, geti(p, bindex(&t, &p->ty, i)));
        }
        out_known(I, n, 0, &t, data);
        return;
    }
    /* cfx's where broadcasts one-element operands only: spread the others by a product */
    const char *x[3];
    ival *v3[3] = {c, a, b};
    for (int k = 0; k < 3; k++) {
        x[k] = ref(I, v3[k]);
        if (count(&v3[k]->ty) != 1 && !(v3[k]->ty.rank == t.rank && count(&v3[k]->ty) == count(&t))) {
            cfx_type s = t;
            s.dtype = v3[k]->ty.dtype;
            x[k] = s.dtype == CFX_BOOL ? fmt(I, "(%s == ones(%s))", x[k], tystr(I, &s))
                                       : fmt(I, "(%s * ones(%s))", x[k], tystr(I, &s));
        }
    }
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = where(%s, %s, %s)", v, x[0], x[1], x[2]);
}

static void op_clip(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    const char *e = ref(I, x), *nm = out_name(I, n, 0);
    if (I->opset < 11) {
        const Onnx__AttributeProto *lo = attr(I, n, "min"), *hi = attr(I, n, "max");
        if (lo)
            e = fmt(I, "max(%s, %s)", e, real_const(I, lo->f, x->ty.dtype, fmt(I, "%s_min", nm)));
        if (hi)
            e = fmt(I, "min(%s, %s)", e, real_const(I, hi->f, x->ty.dtype, fmt(I, "%s_max", nm)));
    } else {
        ival *lo = in_opt(I, n, 1), *hi = in_opt(I, n, 2);
        if (lo)
            e = fmt(I, "max(%s, %s)", e, ref(I, lo));
        if (hi)
            e = fmt(I, "min(%s, %s)", e, ref(I, hi));
    }
    const char *v = out_var(I, n, 0, &x->ty);
    line(I, "%s = %s", v, e);
}

/* Sum, Mean, Min, Max of any number of operands, folded pairwise */
static void op_variadic(imp *I, const Onnx__NodeProto *n, enum bin op, int mean)
{
    if (n->n_input == 0)
        fail(I, "no operands");
    if (n->n_input == 2 && !mean) { /* folds where both are known (Max of two shapes) */
        binary(I, n, op, in(I, n, 0), in(I, n, 1));
        return;
    }
    ival *acc = in(I, n, 0);
    cfx_type t = acc->ty;
    const char *e = ref(I, acc);
    for (size_t k = 1; k < n->n_input; k++) {
        ival *b = in(I, n, k);
        if (b->ty.dtype != t.dtype)
            fail(I, "the operands' types differ: %s and %s", tystr(I, &t), tystr(I, &b->ty));
        cfx_type o;
        broadcast(I, &t, &b->ty, &o);
        o.dtype = t.dtype;
        t = o;
        e = bin_text(I, op, t.dtype, fmt(I, "(%s)", e), ref(I, b));
    }
    if (mean)
        e = fmt(I, "(%s) / %s", e, real_const(I, (double)n->n_input, t.dtype, fmt(I, "%s_count", out_name(I, n, 0))));
    if (n->n_input == 1) {
        bind(I, out_name(I, n, 0), &t, acc->id, acc->data);
        return;
    }
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = %s", v, e);
}

/* IsInf with its detect_negative and detect_positive */
static void op_isinf(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    if (!is_real(x->ty.dtype))
        fail(I, "the operand is %s", tystr(I, &x->ty));
    int neg = (int)attr_int(I, n, "detect_negative", 1), pos = (int)attr_int(I, n, "detect_positive", 1);
    cfx_type t = x->ty;
    t.dtype = CFX_BOOL;
    const char *xs = ref(I, x);
    const char *v = out_var(I, n, 0, &t);
    if (neg && pos)
        line(I, "%s = abs(%s) == inf", v, xs);
    else if (pos)
        line(I, "%s = %s == inf", v, xs);
    else if (neg)
        line(I, "%s = %s == -inf", v, xs);
    else
        line(I, "%s = %s != %s and %s == %s", v, xs, xs, xs, xs); /* all false, with x's shape */
}

/* ReduceProd (op_reduce's axes): the reduced axes moved first and flattened, and the rows
 * multiplied in order; a half type's product is rounded once, as ReduceSum's sum is. */
static void reduce_prod(imp *I, const Onnx__NodeProto *n, ival *x, const int *mark, const cfx_type *t)
{
    int r = x->ty.rank, perm[CFX_TYPE_MAX_RANK], np = 0, moved = 0;
    int64_t rows = 1;
    cfx_type rest = x->ty;
    rest.rank = 0;
    for (int d = 0; d < r; d++)
        if (mark[d]) {
            perm[np] = d;
            moved |= np != d;
            np++;
            rows *= x->ty.dims[d];
        }
    for (int d = 0; d < r; d++)
        if (!mark[d]) {
            perm[np] = d;
            moved |= np != d;
            np++;
            rest.dims[rest.rank++] = x->ty.dims[d];
        }
    const char *nm = out_name(I, n, 0), *e = ref(I, x);
    if (r > 1 && moved)
        e = fmt(I, "permute(%s, %s)", e, perm_text(I, perm, r));
    cfx_type flat = rest;
    flat.rank = rest.rank + 1;
    flat.dims[0] = rows;
    for (int d = 0; d < rest.rank; d++)
        flat.dims[d + 1] = rest.dims[d];
    cfx_type pt = x->ty;
    for (int d = 0; d < r; d++)
        pt.dims[d] = x->ty.dims[perm[d]];
    e = reshaped(I, e, &pt, &flat);
    if (!plain_id(e)) {
        const char *f = new_id(I, "f_", nm);
        line(I, "%s = %s", f, e);
        e = f;
    }
    const char *acc = new_id(I, "prod_", nm);
    if (rows <= 8) {
        const char *p = fmt(I, "%s[0]", e);
        for (int64_t k = 1; k < rows; k++)
            p = fmt(I, "%s * %s[%lld]", p, e, (long long)k);
        line(I, "%s = %s", acc, p);
    } else {
        const char *k = new_id(I, "k_", "prod");
        line(I, "%s = %s[0]", acc, e);
        line(I, "for %s in range(1, %lld) {", k, (long long)rows);
        I->indent++;
        line(I, "%s = %s * %s[%s]", acc, acc, e, k);
        I->indent--;
        line(I, "}");
    }
    const char *v = out_var(I, n, 0, t);
    line(I, "%s = %s", v, reshaped(I, acc, &rest, t));
}

/* ArgMax/ArgMin with select_last_index = 1: the largest position (1 on) along the axis among the
 * elements equal to the extreme (NaN where the extreme is NaN), less one. */
static void arg_last(imp *I, const Onnx__NodeProto *n, ival *x, int axis, int keep, const char *fn,
                     const cfx_type *t)
{
    int r = x->ty.rank;
    const char *nm = out_name(I, n, 0), *xs = ref(I, x);
    cfx_type pt = x->ty;
    pt.dtype = CFX_I64;
    for (int d = 0; d < r; d++)
        pt.dims[d] = d == axis ? x->ty.dims[d] : 1;
    int64_t *pos = new_data(I, &pt);
    for (int64_t k = 0; k < x->ty.dims[axis]; k++)
        pos[k] = k + 1;
    ival pv = {.name = fmt(I, "%s_positions", nm), .ty = pt, .data = pos};
    const char *ex = new_id(I, "e_", nm), *at = new_id(I, "at_", nm);
    line(I, "%s = %s(%s, axis=%d, keepdims=True)", ex, !strcmp(fn, "argmax") ? "max" : "min", xs, axis);
    const char *hit = fmt(I, "(%s == %s)", xs, ex);
    if (is_real(x->ty.dtype))
        hit = fmt(I, "(%s or (%s != %s))", hit, xs, xs);
    line(I, "%s = cast(%s, i64) * %s", at, hit, ref(I, &pv));
    const char *v = out_var(I, n, 0, t);
    line(I, "%s = max(%s, axis=%d%s) - 1", v, at, axis, keep ? ", keepdims=True" : "");
}

/* A reduction of data of 0 elements (op_reduce's fn, a bool's max and min as any and all),
 * known at import: each result element reduces an empty set, so it is the op's identity, as
 * ONNX's reference gives it (0 for the sums, 1 for the product, -inf for the logs of sums, the
 * lowest and highest of the dtype for max and min, NaN for the mean); a result of 0 elements too
 * is a known value of 0 elements. */
static void reduce_empty(imp *I, const Onnx__NodeProto *n, ival *x, const char *fn, const cfx_type *t)
{
    const char *op = n->op_type;
    int big = x->ty.dtype == CFX_I64;
    int64_t least = big ? INT64_MIN : INT32_MIN, most = big ? INT64_MAX : INT32_MAX;
    if (x->half == HALF_U64) /* its bits: the highest, 2^64 - 1, is held as -1 */
        least = 0, most = -1;
    else if (narrow(x->half)) { /* the narrow type's range */
        int64_t m = narrow_modulus(x->half);
        least = narrow_signed(x->half) ? -m / 2 : 0;
        most = narrow_signed(x->half) ? m / 2 - 1 : m - 1;
    }
    int real = is_real(x->ty.dtype);
    double id = 0;
    int64_t iid = 0;
    if (!strcmp(fn, "prod") || !strcmp(fn, "all"))
        id = 1, iid = 1;
    else if (!strcmp(fn, "max"))
        id = -INFINITY, iid = least;
    else if (!strcmp(fn, "min"))
        id = INFINITY, iid = most;
    else if (!strcmp(fn, "mean"))
        id = NAN;
    else if (!strcmp(op, "ReduceLogSum") || !strcmp(op, "ReduceLogSumExp"))
        id = -INFINITY;
    if (!real && (id != id || (!strcmp(fn, "sum") && strcmp(op, "ReduceSum") && strcmp(op, "ReduceSumSquare") &&
                               strcmp(op, "ReduceL1"))))
        fail(I, "%s of integers is not supported", op);
    void *data = count(t) ? new_data(I, t) : alloc(I, 1);
    for (int64_t i = 0; i < count(t); i++)
        if (real)
            setd(t->dtype, data, i, id);
        else
            seti(t->dtype, data, i, iid);
    bind(I, out_name(I, n, 0), t, NULL, data)->half = x->half;
}

/* ReduceSum/Max/Min/Mean/SumSquare and ArgMax/ArgMin */
static void op_reduce(imp *I, const Onnx__NodeProto *n, const char *fn, int arg)
{
    ival *x = in(I, n, 0);
    int r = x->ty.rank;
    int keep = (int)attr_int(I, n, "keepdims", 1);
    int mark[CFX_TYPE_MAX_RANK] = {0}, nmark = 0, last = 0;
    if (arg) {
        last = attr_int(I, n, "select_last_index", 0) != 0;
        if (r == 0)
            fail(I, "the operand is a scalar");
        mark[norm_axis(I, attr_int(I, n, "axis", 0), r, "axis")] = 1;
        nmark = 1;
    } else {
        int64_t axes[8];
        int64_t na = 0;
        int from_input = (strcmp(fn, "sum") == 0 && !strcmp(n->op_type, "ReduceSum") && I->opset >= 13) || I->opset >= 18;
        na = ints_arg(I, n, from_input ? 1 : n->n_input, from_input ? "" : "axes", axes, 8, "the axes");
        if (na == 0 && attr_int(I, n, "noop_with_empty_axes", 0)) {
            bind(I, out_name(I, n, 0), &x->ty, x->id, x->data);
            return;
        }
        for (int64_t k = 0; k < na; k++)
            mark[norm_axis(I, axes[k], r, "axis")] = 1;
        if (na == 0)
            for (int d = 0; d < r; d++)
                mark[d] = 1;
        for (int d = 0; d < r; d++)
            nmark += mark[d];
    }
    if (!arg && strcmp(fn, "mean") == 0 && !is_real(x->ty.dtype))
        fail(I, "ReduceMean of integers is not supported");
    if (x->ty.dtype == CFX_BOOL) { /* the largest of bools is any, the smallest all */
        if (arg || !strcmp(fn, "sum") || !strcmp(fn, "mean") || !strcmp(fn, "prod"))
            fail(I, "the operand is %s", tystr(I, &x->ty));
        fn = !strcmp(fn, "max") ? "any" : "all";
    }
    cfx_type t = x->ty;
    if (arg)
        t.dtype = CFX_I64;
    t.rank = 0;
    for (int d = 0; d < r; d++) {
        if (!mark[d])
            t.dims[t.rank++] = x->ty.dims[d];
        else if (keep)
            t.dims[t.rank++] = 1;
    }
    if (count(&x->ty) == 0 && !arg) {
        reduce_empty(I, n, x, fn, &t);
        return;
    }
    if (!strcmp(fn, "prod") && r > 0) {
        reduce_prod(I, n, x, mark, &t);
        return;
    }
    if (last) {
        for (int d = 0; d < r; d++)
            if (mark[d])
                arg_last(I, n, x, d, keep, fn, &t);
        return;
    }
    const char *e = ref(I, x);
    const char *op = n->op_type, *post = NULL;
    if (!strcmp(op, "ReduceSumSquare") || !strcmp(op, "ReduceL2"))
        e = fmt(I, "(%s * %s)", e, e);
    else if (!strcmp(op, "ReduceL1"))
        e = fmt(I, "abs(%s)", e);
    else if (!strcmp(op, "ReduceLogSumExp"))
        e = fmt(I, "exp(%s)", e);
    if (!strcmp(op, "ReduceL2"))
        post = "sqrt";
    else if (!strcmp(op, "ReduceLogSum") || !strcmp(op, "ReduceLogSumExp"))
        post = "log";
    if (post && !is_real(x->ty.dtype))
        fail(I, "%s of integers is not supported", op);
    if (nmark == r && !arg && !strcmp(fn, "sum") && x->dot_a && !keep && !strcmp(n->op_type, "ReduceSum")) {
        e = fmt(I, "dot(%s, %s)", x->dot_a, x->dot_b); /* the product is then read no more: pruned */
    } else if (nmark == r && !arg) {
        e = fmt(I, "%s(%s)", fn, e);
        cfx_type s = t;
        s.rank = 0;
        e = reshaped(I, e, &s, &t);
    } else {
        for (int d = r - 1; d >= 0; d--)
            if (mark[d])
                e = fmt(I, "%s(%s, axis=%d%s)", fn, e, d, keep ? ", keepdims=True" : "");
        if (arg) { /* cfx's argmax is i32: kept as such, for a Cast back to int32 */
            const char *small = new_id(I, "a_", out_name(I, n, 0));
            line(I, "%s = %s", small, e);
            const char *v = out_var(I, n, 0, &t);
            line(I, "%s = cast(%s, i64)", v, small);
            lookup(I, out_name(I, n, 0))->narrow = small;
            return;
        }
    }
    if (post)
        e = fmt(I, "%s(%s)", post, e);
    if (r == 0 && !arg && !post && strcmp(op, "ReduceSumSquare") && strcmp(op, "ReduceL1")) {
        bind(I, out_name(I, n, 0), &x->ty, x->id, x->data);
        return;
    }
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = %s", v, e);
}

static void op_softmax(imp *I, const Onnx__NodeProto *n, int logsoft)
{
    ival *x = in(I, n, 0);
    int r = x->ty.rank;
    if (!is_real(x->ty.dtype) || r == 0)
        fail(I, "the operand is %s", tystr(I, &x->ty));
    int axis = norm_axis(I, attr_int(I, n, "axis", I->opset >= 13 ? -1 : 1), r, "axis");
    if (I->opset < 13 && axis != r - 1)
        fail(I, "before opset 13 only axis = rank - 1 is supported");
    const char *a = ref(I, x);
    const char *nm = out_name(I, n, 0);
    const char *m = new_id(I, "m_", nm), *e = new_id(I, "e_", nm);
    cfx_type t = x->ty;
    /* of a half type, each step rounds as ONNX's definition of the op computes it in that type */
    line(I, "%s = max(%s, axis=%d, keepdims=True)", m, a, axis);
    const char *d = half_rounded(I, x->half, fmt(I, "%s - %s", a, m));
    line(I, "%s = %s", e, half_rounded(I, x->half, fmt(I, "exp(%s)", d)));
    const char *s = half_rounded(I, x->half, fmt(I, "sum(%s, axis=%d, keepdims=True)", e, axis));
    const char *v = out_var(I, n, 0, &t);
    if (logsoft)
        line(I, "%s = %s - %s", v, d, half_rounded(I, x->half, fmt(I, "log(%s)", s)));
    else
        line(I, "%s = %s / %s", v, e, s);
}

/* Hardmax: 1 at the first largest element along the axis (the first NaN, where there is one, as
 * numpy's argmax), 0 elsewhere. The position is the smallest of an iota where the element is the
 * maximum: two reductions along the axis (docs/language.md, Reductions), no loop. Before opset 13 the input
 * is seen as a matrix whose rows end at `axis`, as ONNX coerced it. */
static void op_hardmax(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int r = x->ty.rank;
    if (!is_real(x->ty.dtype) || r == 0)
        fail(I, "the operand is %s", tystr(I, &x->ty));
    int axis = norm_axis(I, attr_int(I, n, "axis", I->opset >= 13 ? -1 : 1), r, "axis");
    const char *xs = ref(I, x), *nm = out_name(I, n, 0);
    cfx_type wt = x->ty; /* the type worked on */
    if (I->opset < 13) {
        int64_t a = 1, b = 1;
        for (int d = 0; d < r; d++)
            *(d < axis ? &a : &b) *= x->ty.dims[d];
        wt = mktype(x->ty.dtype, 2, (int64_t[]){a, b});
        axis = 1;
        if (!same_type(&wt, &x->ty)) {
            const char *m2 = new_id(I, "x_", nm);
            line(I, "%s = %s", m2, reshaped(I, xs, &x->ty, &wt));
            xs = m2;
        }
    }
    int64_t D = wt.dims[axis];
    cfx_type pos = mktype(CFX_I32, 0, NULL);
    pos.rank = wt.rank;
    for (int d = 0; d < wt.rank; d++)
        pos.dims[d] = d == axis ? D : 1;
    const char *io = fmt(I, "iota(%s)", tystr(I, &pos));
    const char *mx = new_id(I, "mx_", nm), *first = new_id(I, "k_", nm);
    line(I, "%s = max(%s, axis=%d, keepdims=True)", mx, xs, axis);
    line(I, "%s = min(where(%s == %s or %s != %s, %s, %lld), axis=%d, keepdims=True)", first, xs, mx, xs, xs, io,
         (long long)D, axis);
    const char *y = fmt(I, "cast(%s == %s, %s)", io, first, cfx_dtype_name(wt.dtype));
    const char *v = out_var(I, n, 0, &x->ty);
    line(I, "%s = %s", v, reshaped(I, y, &wt, &x->ty));
}

/* LpNormalization: x divided by its L1 or L2 norm along the axis; 0 where the norm is 0, as
 * ONNX's reference gives */
static void op_lpnorm(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int r = x->ty.rank;
    if (!is_real(x->ty.dtype) || r == 0)
        fail(I, "the operand is %s", tystr(I, &x->ty));
    int axis = norm_axis(I, attr_int(I, n, "axis", -1), r, "axis");
    int64_t p = attr_int(I, n, "p", 2);
    if (p != 1 && p != 2)
        fail(I, "p = %lld is not supported (1 and 2 are)", (long long)p);
    const char *xs = ref(I, x), *nrm = new_id(I, "nrm_", out_name(I, n, 0));
    if (p == 1)
        line(I, "%s = sum(abs(%s), axis=%d, keepdims=True)", nrm, xs, axis);
    else
        line(I, "%s = sqrt(sum(%s * %s, axis=%d, keepdims=True))", nrm, xs, xs, axis);
    const char *v = out_var(I, n, 0, &x->ty);
    line(I, "%s = where(%s == 0.0, 0.0, %s / %s)", v, nrm, xs, nrm);
}

/* TopK along one axis of a tensor of rank 1 or 2, k known: k rounds of argmax (argmin for the
 * smallest), each taking the chosen element out of a copy; ties go to the lower index, as ONNX
 * says. Ranks 3 to 5: the axis moved last and the others flattened into the rows of a matrix,
 * whose results are moved back. */
static void op_topk(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int64_t k;
    if (I->opset < 10)
        k = attr_int(I, n, "k", -1);
    else
        ints_of(I, known(I, n, 1, "k"), &k, 1, "k");
    int r = x->ty.rank;
    if (r < 1 || r > 5)
        fail(I, "TopK of rank %d is not supported (ranks 1 to 5 are)", r);
    int axis = norm_axis(I, attr_int(I, n, "axis", -1), r, "axis");
    int largest = (int)attr_int(I, n, "largest", 1);
    if (!attr_int(I, n, "sorted", 1))
        fail(I, "sorted = 0 is not supported");
    if (x->ty.dtype == CFX_BOOL)
        fail(I, "the operand is %s", tystr(I, &x->ty));
    if (k < 1 || k > x->ty.dims[axis])
        fail(I, "k = %lld for an axis of %lld", (long long)k, (long long)x->ty.dims[axis]);
    cfx_type vt = x->ty, it;
    vt.dims[axis] = k;
    it = vt;
    it.dtype = CFX_I64;
    const char *nm = out_name(I, n, 0), *xs = ref(I, x);
    int perm[CFX_TYPE_MAX_RANK], inv[CFX_TYPE_MAX_RANK], nd = 0;
    ival flat;
    cfx_type ot = vt, pt = vt; /* rank 3 on: the results' type as given, and with the axis last */
    if (r > 2) {
        for (int d = 0; d < r; d++)
            if (d != axis)
                perm[nd++] = d;
        perm[nd++] = axis;
        int64_t rows = count(&x->ty) / x->ty.dims[axis];
        for (int d = 0; d < r; d++) {
            inv[perm[d]] = d;
            pt.dims[d] = vt.dims[perm[d]];
        }
        cfx_type xp = x->ty, x2 = mktype(x->ty.dtype, 2, (int64_t[]){rows, x->ty.dims[axis]});
        for (int d = 0; d < r; d++)
            xp.dims[d] = x->ty.dims[perm[d]];
        const char *e = axis == r - 1 ? xs : fmt(I, "permute(%s, %s)", xs, perm_text(I, perm, r));
        xs = new_id(I, "x_", nm);
        line(I, "%s = %s", xs, reshaped(I, e, &xp, &x2));
        flat = (ival){.name = x->name, .id = xs, .ty = x2};
        x = &flat;
        axis = 1;
        vt = mktype(x->ty.dtype, 2, (int64_t[]){rows, k});
        it = vt;
        it.dtype = CFX_I64;
    }
    /* the value that takes a chosen element out: below (above) every other */
    cfx_type one = mktype(x->ty.dtype, 0, NULL);
    void *lim = new_data(I, &one);
    if (is_real(x->ty.dtype))
        setd(one.dtype, lim, 0, largest ? -INFINITY : INFINITY);
    else
        seti(one.dtype, lim, 0, x->ty.dtype == CFX_I32 ? (largest ? INT32_MIN : INT32_MAX) : (largest ? INT64_MIN : INT64_MAX));
    ival limv = {.name = fmt(I, "%s_out_of", out_name(I, n, 0)), .ty = one, .data = lim};
    const char *out_of = ref(I, &limv);
    const char *m = new_id(I, "m_", nm), *j = new_id(I, "j_", nm), *w = new_id(I, "w_", nm);
    int want_idx = n->n_output > 1 && n->output[1] && *n->output[1];
    const char *vals = r > 2 ? new_id(I, "tv_", nm) : out_var(I, n, 0, &vt);
    line(I, "%s = %s", vals, zeros_of(I, &vt));
    const char *idx = want_idx && r <= 2 ? out_var(I, n, 1, &it) : new_id(I, "i_", nm);
    line(I, "%s = %s", idx, zeros_of(I, &it));
    line(I, "%s = copy(%s)", m, xs);
    const char *pick = largest ? "argmax" : "argmin";
    if (r == 1) {
        line(I, "for %s in range(%lld) {", j, (long long)k);
        I->indent++;
        line(I, "%s = %s(%s)", w, pick, m);
        line(I, "%s[%s] = %s[%s]", vals, j, xs, w);
        line(I, "%s[%s] = cast(%s, i64)", idx, j, w);
        line(I, "%s[%s] = %s", m, w, out_of);
        I->indent--;
        line(I, "}");
        return;
    }
    const char *row = new_id(I, "row_", nm);
    int other = 1 - axis;
    line(I, "for %s in range(%lld) {", row, (long long)x->ty.dims[other]);
    I->indent++;
    line(I, "for %s in range(%lld) {", j, (long long)k);
    I->indent++;
    const char *sel_m = axis == 1 ? fmt(I, "%s[%s]", m, row) : fmt(I, "%s[:, %s]", m, row);
    line(I, "%s = %s(%s)", w, pick, sel_m);
    const char *at_x = axis == 1 ? fmt(I, "[%s, %s]", row, w) : fmt(I, "[%s, %s]", w, row);
    const char *at_o = axis == 1 ? fmt(I, "[%s, %s]", row, j) : fmt(I, "[%s, %s]", j, row);
    line(I, "%s%s = %s%s", vals, at_o, xs, at_x);
    line(I, "%s%s = cast(%s, i64)", idx, at_o, w);
    line(I, "%s%s = %s", m, at_x, out_of);
    I->indent--;
    line(I, "}");
    I->indent--;
    line(I, "}");
    for (int o = 0; r > 2 && o < 1 + want_idx; o++) {
        cfx_type made = o ? it : vt, back = pt, to = ot;
        if (o)
            back.dtype = to.dtype = CFX_I64;
        const char *e = reshaped(I, o ? idx : vals, &made, &back);
        if (perm[r - 1] != r - 1)
            e = fmt(I, "permute(%s, %s)", e, perm_text(I, inv, r));
        const char *v = out_var(I, n, (size_t)o, &to);
        line(I, "%s = %s", v, e);
    }
}

/* CumSum and CumProd along a known axis (exclusive, reverse): a loop over that axis, the
 * running sum (product) of the slices before it carried in `acc` */
static void op_cumsum(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int prod = !strcmp(n->op_type, "CumProd");
    int64_t ax;
    ints_of(I, known(I, n, 1, "the axis"), &ax, 1, "the axis");
    int r = x->ty.rank;
    if (r < 1 || x->ty.dtype == CFX_BOOL)
        fail(I, "the operand is %s", tystr(I, &x->ty));
    int axis = norm_axis(I, ax, r, "axis");
    int excl = (int)attr_int(I, n, "exclusive", 0), rev = (int)attr_int(I, n, "reverse", 0);
    int64_t len = x->ty.dims[axis];
    if (x->data && count(&x->ty) <= ONNX_FOLD_MAX) { /* known: done here (torch's repeat_interleave) */
        int64_t outer = 1, inner = 1;
        for (int d = 0; d < axis; d++)
            outer *= x->ty.dims[d];
        for (int d = axis + 1; d < r; d++)
            inner *= x->ty.dims[d];
        void *data = new_data(I, &x->ty);
        int dt = x->ty.dtype, real = is_real(x->ty.dtype);
        for (int64_t o = 0; o < outer; o++)
            for (int64_t i = 0; i < inner; i++) {
                /* f64's sum or product; f32's in f32, as ONNX's reference computes it */
                double accd = prod;
                float accf = (float)prod;
                int64_t acci = prod;
                for (int64_t t = 0; t < len; t++) {
                    int64_t at = (o * len + (rev ? len - 1 - t : t)) * inner + i;
                    for (int pass = 0; pass < 2; pass++) {
                        if (pass == (excl != 0)) { /* exclusive: stored before the element is taken */
                            if (dt == CFX_F64)
                                accd = prod ? accd * getd(x, at) : accd + getd(x, at);
                            else if (real)
                                accf = prod ? (float)(accf * (float)getd(x, at)) : (float)(accf + (float)getd(x, at));
                            else if (prod)
                                acci = (int64_t)((uint64_t)acci * (uint64_t)geti(x, at));
                            else
                                acci = (int64_t)((uint64_t)acci + (uint64_t)geti(x, at));
                        } else if (real) {
                            setd(x->ty.dtype, data, at, dt == CFX_F64 ? accd : accf);
                        } else {
                            seti(x->ty.dtype, data, at, acci);
                        }
                    }
                }
            }
        out_known(I, n, 0, &x->ty, data);
        return;
    }
    const char *nm = out_name(I, n, 0), *xs = ref(I, x);
    cfx_type rowt = x->ty; /* one slice along the axis */
    rowt.rank = 0;
    for (int d = 0; d < r; d++)
        if (d != axis)
            rowt.dims[rowt.rank++] = x->ty.dims[d];
    const char *acc = new_id(I, "acc_", nm), *t = new_id(I, "t_", nm), *p = new_id(I, "p_", nm);
    const char *v = out_var(I, n, 0, &x->ty);
    line(I, "%s = %s", v, zeros_of(I, &x->ty));
    if (!prod)
        line(I, "%s = %s", acc, zeros_of(I, &rowt));
    else if (rowt.rank)
        line(I, "%s = ones(%s)", acc, tystr(I, &rowt));
    else
        line(I, "%s = cast(1, %s)", acc, cfx_dtype_name(rowt.dtype));
    const char *with = prod ? "*" : "+";
    line(I, "for %s in range(%lld) {", t, (long long)len);
    I->indent++;
    line(I, "%s = %s", p, rev ? fmt(I, "%lld - %s", (long long)(len - 1), t) : t);
    const char *at = subscript(I, r, axis, p);
    if (excl) {
        line(I, "%s%s = %s", v, at, acc);
        line(I, "%s = %s %s %s%s", acc, acc, with, xs, at);
    } else {
        line(I, "%s = %s %s %s%s", acc, acc, with, xs, at);
        line(I, "%s%s = %s", v, at, acc);
    }
    I->indent--;
    line(I, "}");
}

static void op_matmul(imp *I, const Onnx__NodeProto *n)
{
    ival *a = in(I, n, 0), *b = in(I, n, 1);
    if (a->ty.dtype != b->ty.dtype || a->ty.dtype == CFX_BOOL)
        fail(I, "the operands are %s and %s", tystr(I, &a->ty), tystr(I, &b->ty));
    int ra = a->ty.rank, rb = b->ty.rank;
    if (ra == 0 || rb == 0)
        fail(I, "MatMul takes no scalars");
    int64_t k1 = a->ty.dims[ra - 1], k2 = rb == 1 ? b->ty.dims[0] : b->ty.dims[rb - 2];
    if (k1 != k2)
        fail(I, "the operands %s and %s do not multiply", tystr(I, &a->ty), tystr(I, &b->ty));
    const char *x = ref(I, a), *y = ref(I, b);
    if (ra <= 2 && rb <= 2) {
        cfx_type t = mktype(a->ty.dtype, 0, NULL);
        if (ra == 2) t.dims[t.rank++] = a->ty.dims[0];
        if (rb == 2) t.dims[t.rank++] = b->ty.dims[1];
        const char *v = out_var(I, n, 0, &t);
        line(I, "%s = %s @ %s", v, x, y);
        return;
    }
    /* batched: the batch dims broadcast; an A of [..., m, k] times a matrix is one product */
    cfx_type ba = a->ty, bb = b->ty, batch;
    ba.rank = ra > 2 ? ra - 2 : 0;
    bb.rank = rb > 2 ? rb - 2 : 0;
    broadcast(I, &ba, &bb, &batch);
    cfx_type t = batch;
    t.dtype = a->ty.dtype;
    if (ra >= 2) t.dims[t.rank++] = a->ty.dims[ra - 2];
    if (rb >= 2) t.dims[t.rank++] = b->ty.dims[rb - 1];
    if (t.rank > CFX_TYPE_MAX_RANK)
        fail(I, "the result has rank %d; cfx takes at most %d", t.rank, CFX_TYPE_MAX_RANK);
    const char *v = out_var(I, n, 0, &t);
    if (rb <= 2 && ra > 2) {
        int64_t rows = count(&a->ty) / k1;
        cfx_type flat = mktype(a->ty.dtype, 2, (int64_t[]){rows, k1});
        cfx_type prod = mktype(a->ty.dtype, rb == 2 ? 2 : 1, (int64_t[]){rows, b->ty.dims[rb - 1]});
        line(I, "%s = %s", v, reshaped(I, fmt(I, "(%s @ %s)", reshaped(I, x, &a->ty, &flat), y), &prod, &t));
        return;
    }
    if (count(&batch) <= ONNX_UNROLL_SMALL) { /* the language's batched @: a product each, unrolled */
        line(I, "%s = %s @ %s", v, x, y);
        return;
    }
    const char *ixs[CFX_TYPE_MAX_RANK] = {0};
    line(I, "%s = %s", v, zeros_of(I, &t));
    element_loops(I, &batch, ixs, 1);
    const char *sa[CFX_TYPE_MAX_RANK], *sb[CFX_TYPE_MAX_RANK];
    for (int d = 0; d < ba.rank; d++) {
        int od = d + batch.rank - ba.rank;
        sa[d] = ba.dims[d] == 1 ? "0" : ixs[od];
    }
    for (int d = 0; d < bb.rank; d++) {
        int od = d + batch.rank - bb.rank;
        sb[d] = bb.dims[d] == 1 ? "0" : ixs[od];
    }
    const char *ea = ba.rank ? fmt(I, "%s[%s]", x, index_list(I, sa, ba.rank)) : x;
    const char *eb = bb.rank ? fmt(I, "%s[%s]", y, index_list(I, sb, bb.rank)) : y;
    line(I, "%s[%s] = %s @ %s", v, index_list(I, ixs, batch.rank), ea, eb);
    element_loops(I, &batch, ixs, 0);
}

static void op_gemm(imp *I, const Onnx__NodeProto *n)
{
    ival *a = in(I, n, 0), *b = in(I, n, 1), *c = in_opt(I, n, 2);
    if (a->ty.rank != 2 || b->ty.rank != 2 || a->ty.dtype != b->ty.dtype || !is_real(a->ty.dtype))
        fail(I, "Gemm takes two real matrices, not %s and %s", tystr(I, &a->ty), tystr(I, &b->ty));
    double alpha = attr_float(I, n, "alpha", 1.0), beta = attr_float(I, n, "beta", 1.0);
    int ta = (int)attr_int(I, n, "transA", 0), tb = (int)attr_int(I, n, "transB", 0);
    int64_t m = a->ty.dims[ta ? 1 : 0], k = a->ty.dims[ta ? 0 : 1];
    int64_t k2 = b->ty.dims[tb ? 1 : 0], nn = b->ty.dims[tb ? 0 : 1];
    if (k != k2)
        fail(I, "the operands %s and %s do not multiply", tystr(I, &a->ty), tystr(I, &b->ty));
    cfx_type t = mktype(a->ty.dtype, 2, (int64_t[]){m, nn});
    const char *x = ta ? fmt(I, "transpose(%s)", ref(I, a)) : ref(I, a);
    const char *y = tb ? fmt(I, "transpose(%s)", ref(I, b)) : ref(I, b);
    const char *e = fmt(I, "%s @ %s", x, y);
    const char *nm = out_name(I, n, 0);
    if (alpha != 1.0)
        e = fmt(I, "%s * (%s)", real_const(I, alpha, t.dtype, fmt(I, "%s_alpha", nm)), e);
    if (c && beta != 0.0) {
        cfx_type chk;
        broadcast(I, &c->ty, &t, &chk);
        const char *cc = ref(I, c);
        if (beta != 1.0)
            cc = fmt(I, "%s * %s", real_const(I, beta, t.dtype, fmt(I, "%s_beta", nm)), cc);
        e = fmt(I, "%s + %s", e, cc);
    }
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = %s", v, e);
}

/* Einsum's diagonal: while a label repeats in an operand's labels (lab, *nl of them), the
 * diagonal of its two axes, copied a position at a time into a value without the second axis;
 * returns the operand so reduced. */
static ival *einsum_diagonal(imp *I, const Onnx__NodeProto *n, ival *x, char *lab, int *nl)
{
    for (;;) {
        int a = -1, b = -1;
        for (int p = 0; p < *nl && a < 0; p++)
            for (int q = p + 1; q < *nl; q++)
                if (lab[p] == lab[q]) {
                    a = p;
                    b = q;
                    break;
                }
        if (a < 0)
            return x;
        int64_t len = x->ty.dims[a];
        if (x->ty.dims[b] != len)
            fail(I, "Einsum: label '%c' is %lld and %lld in one operand", lab[a], (long long)len,
                 (long long)x->ty.dims[b]);
        cfx_type t = x->ty;
        for (int d = b; d < t.rank - 1; d++)
            t.dims[d] = t.dims[d + 1];
        t.rank--;
        const char *nm = out_name(I, n, 0), *xs = ref(I, x), *id = new_id(I, "diag_", nm);
        const char *k = new_id(I, "k_", nm);
        strbuf *sb = new_sb(I), *sd = new_sb(I);
        for (int d = 0; d < x->ty.rank; d++) {
            const char *ix = d == a || d == b ? k : ":";
            sb_printf(sb, "%s%s", d ? ", " : "", ix);
            if (d != b)
                sb_printf(sd, "%s%s", sd->len ? ", " : "", ix);
        }
        if (sb->oom || sd->oom)
            fail(I, "out of memory");
        const char *from = take(I, sb_take(sb)), *to = take(I, sb_take(sd));
        line(I, "%s = %s", id, zeros_of(I, &t));
        line(I, "for %s in range(%lld) {", k, (long long)len);
        I->indent++;
        line(I, "%s[%s] = %s[%s]", id, to, xs, from);
        I->indent--;
        line(I, "}");
        ival *y = alloc(I, sizeof *y);
        y->name = id;
        y->id = id;
        y->ty = t;
        y->half = HALF_NONE;
        memmove(lab + b, lab + b + 1, (size_t)(*nl - b - 1));
        (*nl)--;
        x = y;
    }
}

static void op_einsum(imp *I, const Onnx__NodeProto *n)
{
    const char *eq = attr_str(I, n, "equation", NULL);
    if (!eq)
        fail(I, "the equation is missing");
    size_t nops = n->n_input;
    if (nops < 1 || nops > 2)
        fail(I, "Einsum of %zu operands is not supported (one or two are)", nops);
    /* the equation without spaces, each operand's labels with "..." spelled out in digits */
    char lab[3][CFX_TYPE_MAX_RANK + 1];
    int nl[3] = {0, 0, 0}, explicit_out = 0, ell_rank = 0, part = 0;
    char spec[3][64];
    int ns[3] = {0, 0, 0};
    for (const char *p = eq; *p; p++) {
        if (*p == ' ')
            continue;
        if (*p == ',') {
            if (++part > 1)
                fail(I, "Einsum '%s': more than two operands", clean(I, eq));
            continue;
        }
        if (*p == '-' && p[1] == '>') {
            if (explicit_out)
                fail(I, "Einsum '%s' has '->' twice", clean(I, eq));
            explicit_out = 1;
            part = 2;
            p++;
            continue;
        }
        if (ns[part] >= 60)
            fail(I, "Einsum '%s' is too long", clean(I, eq));
        spec[part][ns[part]++] = *p;
    }
    int nin_spec = 1;
    for (const char *p = eq; *p && !(*p == '-' && p[1] == '>'); p++)
        nin_spec += *p == ',';
    if ((size_t)nin_spec != nops)
        fail(I, "Einsum '%s' names %d operands, the node has %zu", clean(I, eq), nin_spec, nops);
    ival *ops[2] = {in(I, n, 0), nops > 1 ? in(I, n, 1) : NULL};
    for (size_t k = 0; k < nops; k++) {
        int rank = ops[k]->ty.rank, letters = 0, has_ell = 0;
        for (int j = 0; j < ns[k]; j++) {
            char c = spec[k][j];
            if (c == '.') {
                if (j + 2 >= ns[k] || spec[k][j + 1] != '.' || spec[k][j + 2] != '.' || has_ell)
                    fail(I, "Einsum '%s': a '.' that is not one '...'", clean(I, eq));
                has_ell = 1;
                j += 2;
            } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
                letters++;
            } else {
                fail(I, "Einsum '%s': '%c' is not a label", clean(I, eq), c);
            }
        }
        int er = rank - letters;
        if (er < 0 || (!has_ell && er != 0))
            fail(I, "Einsum '%s': operand %zu is %s, of another rank than its labels", clean(I, eq), k,
                 tystr(I, &ops[k]->ty));
        if (er > ell_rank)
            ell_rank = er;
        for (int j = 0; j < ns[k]; j++) {
            if (spec[k][j] == '.') {
                for (int e = 0; e < er; e++) /* right-aligned, as numpy broadcasts them */
                    lab[k][nl[k]++] = (char)('0' + (CFX_TYPE_MAX_RANK - er + e));
                j += 2;
            } else {
                lab[k][nl[k]++] = spec[k][j];
            }
        }
        ops[k] = einsum_diagonal(I, n, ops[k], lab[k], &nl[k]); /* a label twice: the diagonal */
    }
    /* the size of each label, one for all operands */
    int64_t size[128];
    for (int c = 0; c < 128; c++)
        size[c] = -1;
    for (size_t k = 0; k < nops; k++)
        for (int a = 0; a < nl[k]; a++) {
            int c = lab[k][a];
            if (size[c] >= 0 && size[c] != ops[k]->ty.dims[a])
                fail(I, "Einsum '%s': label '%c' is %lld in one operand and %lld in another (broadcasting is "
                     "not supported)", clean(I, eq), c, (long long)size[c], (long long)ops[k]->ty.dims[a]);
            size[c] = ops[k]->ty.dims[a];
        }
    /* the result's labels */
    if (explicit_out) {
        int has_ell = 0;
        for (int j = 0; j < ns[2]; j++) {
            char c = spec[2][j];
            if (c == '.') {
                if (j + 2 >= ns[2] || spec[2][j + 1] != '.' || spec[2][j + 2] != '.' || has_ell)
                    fail(I, "Einsum '%s': a '.' that is not one '...'", clean(I, eq));
                has_ell = 1;
                if (nl[2] + ell_rank > CFX_TYPE_MAX_RANK)
                    fail(I, "Einsum '%s': the result has more than %d dimensions", clean(I, eq), CFX_TYPE_MAX_RANK);
                for (int e = 0; e < ell_rank; e++)
                    lab[2][nl[2]++] = (char)('0' + (CFX_TYPE_MAX_RANK - ell_rank + e));
                j += 2;
            } else {
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) || size[(int)c] < 0)
                    fail(I, "Einsum '%s': the result's label '%c' is in no operand", clean(I, eq), c);
                if (nl[2] >= CFX_TYPE_MAX_RANK)
                    fail(I, "Einsum '%s': the result has more than %d dimensions", clean(I, eq), CFX_TYPE_MAX_RANK);
                lab[2][nl[2]++] = c;
            }
        }
        if (!has_ell && ell_rank > 0)
            fail(I, "Einsum '%s': the '...' dimensions are summed (not supported)", clean(I, eq));
    } else { /* numpy's implicit result: '...' first, then the labels seen once, in order */
        for (int e = 0; e < ell_rank; e++)
            lab[2][nl[2]++] = (char)('0' + (CFX_TYPE_MAX_RANK - ell_rank + e));
        for (int c = 'A'; c <= 'z'; c++) {
            int seen = 0;
            for (size_t k = 0; k < nops; k++)
                seen += memchr(lab[k], c, (size_t)nl[k]) != NULL;
            if (seen != 1 || !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
                continue;
            if (nl[2] >= CFX_TYPE_MAX_RANK)
                fail(I, "Einsum '%s': the result has more than %d dimensions", clean(I, eq), CFX_TYPE_MAX_RANK);
            lab[2][nl[2]++] = (char)c;
        }
    }
    for (int a = 0; a < nl[2]; a++)
        for (int b = a + 1; b < nl[2]; b++)
            if (lab[2][a] == lab[2][b])
                fail(I, "Einsum '%s': label '%c' twice in the result", clean(I, eq), lab[2][a]);
    cfx_type t = mktype(ops[0]->ty.dtype, 0, NULL);
    t.rank = nl[2];
    for (int a = 0; a < nl[2]; a++)
        t.dims[a] = size[(int)lab[2][a]];
    if (nops == 2 && ops[1]->ty.dtype != t.dtype)
        fail(I, "the operands are %s and %s", tystr(I, &ops[0]->ty), tystr(I, &ops[1]->ty));
    if (t.dtype == CFX_BOOL)
        fail(I, "Einsum of %s is not supported", tystr(I, &ops[0]->ty));
    const char *nm = out_name(I, n, 0);
    /* each operand: the labels in neither the other operand nor the result summed out */
    const char *e[2];
    char kl[2][CFX_TYPE_MAX_RANK + 1];
    int nk[2];
    for (size_t k = 0; k < nops; k++) {
        e[k] = ref(I, ops[k]);
        nk[k] = 0;
        for (int a = nl[k] - 1; a >= 0; a--) {
            char c = lab[k][a];
            int other = nops == 2 && memchr(lab[1 - k], c, (size_t)nl[1 - k]);
            if (!other && !memchr(lab[2], c, (size_t)nl[2]))
                e[k] = fmt(I, "sum(%s, axis=%d)", e[k], a);
        }
        for (int a = 0; a < nl[k]; a++) {
            char c = lab[k][a];
            int other = nops == 2 && memchr(lab[1 - k], c, (size_t)nl[1 - k]);
            if (other || memchr(lab[2], c, (size_t)nl[2]))
                kl[k][nk[k]++] = c;
        }
    }
    /* the permutation of labels `from` (n of them) that gives `to` */
    #define EINSUM_PERM(from, nf, to, nt, perm) \
        for (int q = 0; q < (nt); q++) \
            (perm)[q] = (int)((const char *)memchr((from), (to)[q], (size_t)(nf)) - (from));
    int perm[CFX_TYPE_MAX_RANK], moved;
    if (nops == 1) {
        EINSUM_PERM(kl[0], nk[0], lab[2], nl[2], perm);
        moved = 0;
        for (int q = 0; q < nl[2]; q++)
            moved |= perm[q] != q;
        const char *x = moved && nl[2] > 1 ? fmt(I, "permute(%s, %s)", e[0], perm_text(I, perm, nl[2])) : e[0];
        if (nl[0] == 0 || (nk[0] == nl[0] && !moved)) { /* the operand itself */
            bind(I, nm, &t, ops[0]->id, ops[0]->data);
            return;
        }
        const char *v = out_var(I, n, 0, &t);
        line(I, "%s = %s", v, x);
        return;
    }
    /* two operands: batch (both and the result), contracted (both, not the result), kept */
    char bl[CFX_TYPE_MAX_RANK], cl[CFX_TYPE_MAX_RANK], ml[CFX_TYPE_MAX_RANK], nlb[CFX_TYPE_MAX_RANK];
    int nb = 0, nc = 0, nm_ = 0, nn = 0;
    int64_t B = 1, K = 1, M = 1, N = 1;
    for (int a = 0; a < nk[0]; a++) {
        char c = kl[0][a];
        int both = memchr(kl[1], c, (size_t)nk[1]) != NULL, out = memchr(lab[2], c, (size_t)nl[2]) != NULL;
        if (both && out) bl[nb++] = c, B *= size[(int)c];
        else if (both) cl[nc++] = c, K *= size[(int)c];
        else ml[nm_++] = c, M *= size[(int)c];
    }
    for (int a = 0; a < nk[1]; a++)
        if (!memchr(kl[0], kl[1][a], (size_t)nk[0]))
            nlb[nn++] = kl[1][a], N *= size[(int)kl[1][a]];
    char want[2][CFX_TYPE_MAX_RANK + 1];
    int nw = 0;
    for (int q = 0; q < nb; q++) want[0][nw++] = bl[q];
    for (int q = 0; q < nm_; q++) want[0][nw++] = ml[q];
    for (int q = 0; q < nc; q++) want[0][nw++] = cl[q];
    nw = 0;
    for (int q = 0; q < nb; q++) want[1][nw++] = bl[q];
    for (int q = 0; q < nc; q++) want[1][nw++] = cl[q];
    for (int q = 0; q < nn; q++) want[1][nw++] = nlb[q];
    const char *side[2];
    for (int k = 0; k < 2; k++) {
        EINSUM_PERM(kl[k], nk[k], want[k], nk[k], perm);
        moved = 0;
        for (int q = 0; q < nk[k]; q++)
            moved |= perm[q] != q;
        const char *x = moved && nk[k] > 1 ? fmt(I, "permute(%s, %s)", e[k], perm_text(I, perm, nk[k])) : e[k];
        int64_t d3[3] = {B, k ? K : M, k ? N : K};
        cfx_type pt = mktype(t.dtype, 0, NULL), to = mktype(t.dtype, nb ? 3 : 2, nb ? d3 : d3 + 1);
        pt.rank = nk[k];
        for (int q = 0; q < nk[k]; q++)
            pt.dims[q] = size[(int)want[k][q]];
        const char *id = new_id(I, k ? "eb_" : "ea_", nm);
        line(I, "%s = %s", id, nk[k] == 0 ? fmt(I, "reshape(%s, %s)", x, dims_list(I, &to)) : reshaped(I, x, &pt, &to));
        side[k] = id;
    }
    /* the product: [batch, kept of A, kept of B], then the result's order */
    char got[CFX_TYPE_MAX_RANK + 1];
    int ng = 0;
    for (int q = 0; q < nb; q++) got[ng++] = bl[q];
    for (int q = 0; q < nm_; q++) got[ng++] = ml[q];
    for (int q = 0; q < nn; q++) got[ng++] = nlb[q];
    int64_t d3[3] = {B, M, N};
    cfx_type made = mktype(t.dtype, nb ? 3 : 2, nb ? d3 : d3 + 1), gt = mktype(t.dtype, 0, NULL);
    gt.rank = ng;
    for (int q = 0; q < ng; q++)
        gt.dims[q] = size[(int)got[q]];
    const char *pr = new_id(I, "ep_", nm);
    line(I, "%s = %s @ %s", pr, side[0], side[1]);
    const char *x = reshaped(I, pr, &made, &gt);
    EINSUM_PERM(got, ng, lab[2], nl[2], perm);
    #undef EINSUM_PERM
    moved = 0;
    for (int q = 0; q < nl[2]; q++)
        moved |= perm[q] != q;
    if (moved && ng > 1)
        x = fmt(I, "permute(%s, %s)", x, perm_text(I, perm, ng));
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = %s", v, x);
}

/* Det of [..., M, M] past 3x3: Gaussian elimination with partial pivoting (LAPACK's, which numpy's
 * det calls), a matrix at a time: for each column the row of the largest magnitude at or below
 * the diagonal swapped up (the sign flipped), the pivot multiplied in, the rows below cleared. */
static void det_lu(imp *I, const Onnx__NodeProto *n, ival *x)
{
    int r = x->ty.rank;
    int64_t M = x->ty.dims[r - 1], B = count(&x->ty) / (M * M);
    const char *dn = cfx_dtype_name(x->ty.dtype), *nm = out_name(I, n, 0);
    cfx_type bt = mktype(x->ty.dtype, 3, (int64_t[]){B, M, M}), dt = mktype(x->ty.dtype, 1, &B);
    cfx_type t = x->ty;
    t.rank = r - 2;
    const char *xs = reshaped(I, ref(I, x), &x->ty, &bt), *b = new_id(I, "b_", nm), *k = new_id(I, "k_", nm);
    const char *a = new_id(I, "a_", nm), *d = new_id(I, "det_", nm), *ds = new_id(I, "dets_", nm);
    const char *p = new_id(I, "p_", nm), *row = new_id(I, "row_", nm), *f = new_id(I, "f_", nm);
    const char *io = fmt(I, "iota(i64[%lld])", (long long)M);
    line(I, "%s = %s", ds, zeros_of(I, &dt));
    line(I, "for %s in range(%lld) {", b, (long long)B);
    I->indent++;
    line(I, "%s = %s[%s]", a, plain_id(xs) ? xs : fmt(I, "(%s)", xs), b);
    line(I, "%s = cast(1, %s)", d, dn);
    line(I, "for %s in range(%lld) {", k, (long long)M);
    I->indent++;
    line(I, "%s = argmax(where(%s >= %s, abs(%s[:, %s]), cast(-1, %s)))", p, io, k, a, k, dn);
    line(I, "if %s != %s {", p, k);
    I->indent++;
    line(I, "%s = %s[%s]", row, a, k);
    line(I, "%s[%s] = %s[%s]", a, k, a, p);
    line(I, "%s[%s] = %s", a, p, row);
    line(I, "%s = -%s", d, d);
    I->indent--;
    line(I, "}");
    line(I, "%s = %s * %s[%s, %s]", d, d, a, k, k);
    line(I, "if %s[%s, %s] != cast(0, %s) {", a, k, k, dn);
    I->indent++;
    line(I, "%s = where(%s > %s, %s[:, %s] / %s[%s, %s], cast(0, %s))", f, io, k, a, k, a, k, k, dn);
    line(I, "%s = %s - reshape(%s, [%lld, 1]) * reshape(%s[%s], [1, %lld])", a, a, f, (long long)M, a, k,
         (long long)M);
    I->indent--;
    line(I, "}");
    I->indent--;
    line(I, "}");
    line(I, "%s[%s] = %s", ds, b, d);
    I->indent--;
    line(I, "}");
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = %s", v, reshaped(I, ds, &dt, &t));
}

/* Det of [..., M, M]: the cofactor expansion of 1x1, 2x2 and 3x3 matrices, each entry a slice of
 * x over the leading axes; larger ones by det_lu. */
static void op_det(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int r = x->ty.rank;
    if (!is_real(x->ty.dtype) || r < 2 || x->ty.dims[r - 1] != x->ty.dims[r - 2])
        fail(I, "the input is %s; reals [..., M, M] are taken", tystr(I, &x->ty));
    int64_t M = x->ty.dims[r - 1];
    if (M > 3) {
        det_lu(I, n, x);
        return;
    }
    const char *xs = ref(I, x), *e[3][3];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < M; j++) {
            strbuf *sb = new_sb(I);
            sb_printf(sb, "%s[", xs);
            for (int d = 0; d < r - 2; d++)
                sb_puts(sb, ":, ");
            sb_printf(sb, "%d, %d]", i, j);
            if (sb->oom)
                fail(I, "out of memory");
            e[i][j] = take(I, sb_take(sb));
        }
    cfx_type t = x->ty;
    t.rank = r - 2;
    const char *v = out_var(I, n, 0, &t);
    if (M == 1)
        line(I, "%s = %s", v, e[0][0]);
    else if (M == 2)
        line(I, "%s = %s * %s - %s * %s", v, e[0][0], e[1][1], e[0][1], e[1][0]);
    else
        line(I, "%s = %s * (%s * %s - %s * %s) - %s * (%s * %s - %s * %s) + %s * (%s * %s - %s * %s)", v,
             e[0][0], e[1][1], e[2][2], e[1][2], e[2][1], e[0][1], e[1][0], e[2][2], e[1][2], e[2][0],
             e[0][2], e[1][0], e[2][1], e[1][1], e[2][0]);
}

/* ---- bitwise ops: the language's & | ^ ~ << >>, and BitCast ---------------------------------- */

/* The bits of an integer value's ONNX type and whether it is signed; 0 for no integer type */
static int int_bits(const ival *v, int *sign)
{
    *sign = 1;
    if (narrow(v->half)) {
        *sign = narrow_signed(v->half);
        return narrow_bits(v->half);
    }
    return v->half ? 0 : v->ty.dtype == CFX_I32 ? 32 : v->ty.dtype == CFX_I64 ? 64 : 0;
}

/* The two operands of a bitwise op, of one integer type; their broadcast type in *t */
static int bitwise_operands(imp *I, const Onnx__NodeProto *n, ival **a, ival **b, cfx_type *t, int *sign)
{
    *a = in(I, n, 0);
    *b = in(I, n, 1);
    int bits = int_bits(*a, sign);
    if (!bits || (*a)->ty.dtype != (*b)->ty.dtype || (*a)->half != (*b)->half)
        fail(I, "the operands are %s and %s; %s takes two integers of one type", type_name(*a), type_name(*b),
             n->op_type);
    broadcast(I, &(*a)->ty, &(*b)->ty, t);
    t->dtype = (*a)->ty.dtype;
    return bits;
}

/* BitShift: the language's << and >> (numpy's: a shift of the width or more gives 0, or -1 for a
 * negative value shifted right); a narrow type's left shift wrapped after, as its arithmetic */
static void op_bitshift(imp *I, const Onnx__NodeProto *n)
{
    ival *a, *b;
    cfx_type t;
    int sign;
    bitwise_operands(I, n, &a, &b, &t, &sign);
    const char *dir = attr_str(I, n, "direction", "");
    if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
        fail(I, "direction '%s' is not LEFT or RIGHT", clean(I, dir));
    const char *x = ref(I, a), *y = ref(I, b), *v = out_var(I, n, 0, &t);
    if (a->half == HALF_U64 && strcmp(dir, "LEFT")) /* logical; a count of 2^63 or more reads < 0 */
        line(I, "%s = where(%s >= 0, where(%s < 64, (%s >> %s) & ((cast(1, i64) << (64 - %s)) - 1), 0), 0)", v, y,
             y, x, y, y);
    else
        line(I, "%s = %s %s %s", v, x, strcmp(dir, "LEFT") ? ">>" : "<<", y);
}

/* BitCast between integer types of one width (and bool to uint8): the same bits read as the
 * other type are the value wrapped to it (two's complement, round_results); with a real type
 * refused (the language cannot read a real's bits) */
static void op_bitcast(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int h, sign;
    cfx_dtype to = dtype_of(I, (int32_t)attr_int(I, n, "to", 0), "to", &h);
    ival like = {.ty = {.dtype = to}, .half = h};
    int bits = x->ty.dtype == CFX_BOOL ? 8 * (h == HALF_U8) : int_bits(x, &sign);
    if (!bits || bits != int_bits(&like, &sign))
        fail(I, "BitCast of %s to %s is not supported: cfx takes integers of one width (and bool to uint8)",
             type_name(x), type_name(&like));
    cfx_type t = x->ty;
    t.dtype = to;
    const char *e = ref(I, x), *v = out_var(I, n, 0, &t);
    line(I, "%s = %s", v, x->ty.dtype == to ? e : fmt(I, "cast(%s, %s)", e, cfx_dtype_name(to)));
    I->node_half = h;
}

/* BitwiseNot: the language's ~ of a signed type (held sign-extended, so ~ stays in its range);
 * of an unsigned one the xor with its 2^bits - 1 */
static void op_bitwise_not(imp *I, const Onnx__NodeProto *n)
{
    ival *a = in(I, n, 0);
    int sign, bits = int_bits(a, &sign);
    if (!bits)
        fail(I, "the operand is %s; BitwiseNot takes an integer", type_name(a));
    const char *x = ref(I, a), *v = out_var(I, n, 0, &a->ty);
    if (sign || a->half == HALF_U64) /* uint64's bits: all 64 */
        line(I, "%s = ~%s", v, x);
    else
        line(I, "%s = %s ^ %lld", v, x, (long long)narrow_modulus(a->half) - 1);
    I->node_rounded = 1;
}

/* BitwiseAnd, BitwiseOr, BitwiseXor: the language's & | ^ (a narrow type's values, held
 * sign-extended or below 2^bits, give values of the type) */
static void op_bitwise(imp *I, const Onnx__NodeProto *n, int op)
{
    ival *a, *b;
    cfx_type t;
    int sign;
    bitwise_operands(I, n, &a, &b, &t, &sign);
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = %s %s %s", v, ref(I, a), op == 0 ? "&" : op == 1 ? "|" : "^", ref(I, b));
    I->node_rounded = 1;
}

/* 2^e, exactly, of an i64 tensor e of -1074 to 1023 (a value of f64): the product of the powers
 * 2^(2^k) of |e|'s bits, inverted for a negative e; every step a power of two, so exact (past that
 * range inf or 0). In variable p, from expression e (lines written). */
static void pow2_of(imp *I, const char *p, const char *e, const char *nm)
{
    const char *ae = new_id(I, "ae_", nm);
    line(I, "%s = abs(%s)", ae, e);
    line(I, "%s = where((%s & 1) == 1, %s, 1.0)", p, ae, real_const(I, 2.0, CFX_F64, fmt(I, "%s_2pow1", nm)));
    for (int k = 1; k <= 10; k++)
        line(I, "%s = %s * where(((%s >> %d) & 1) == 1, %s, 1.0)", p, p, ae, k,
             real_const(I, k == 10 ? INFINITY : ldexp(1.0, 1 << k), CFX_F64, fmt(I, "%s_2pow%d", nm, 1 << k)));
    line(I, "%s = where(%s < 0, 1.0 / %s, %s)", p, e, p, p);
}

/* BitCast between a real and an integer type of one width (float and int32 or uint32, double and
 * int64 or uint64), composed exactly of the language's ops, in f64: from a real, the sign (-0 by
 * 1 / x), the exponent from log2 corrected by one either way against an exact power of two, the
 * fraction (x / 2^e - 1) * 2^mantissa bits, a subnormal scaled up; inf as its bits, NaN as the
 * quiet NaN of no payload (a NaN's sign and payload cannot be read). To a real: the fields taken
 * apart with shifts and masks, (1 + fraction) * 2^(exponent - bias), a subnormal scaled down, NaN
 * for a NaN's bits (its payload lost). 0 where another BitCast is asked (op_bitcast's). */
static int op_bitcast_real(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int h;
    cfx_dtype to = dtype_of(I, (int32_t)attr_int(I, n, "to", 0), "to", &h);
    int from_real = is_real(x->ty.dtype) && !x->half;
    cfx_dtype rt = from_real ? x->ty.dtype : to;        /* the real side */
    cfx_dtype it = from_real ? to : x->ty.dtype;        /* the integer side, as held */
    int ih = from_real ? h : x->half;
    if (!from_real && (!is_real(to) || h))
        return 0;
    int w32 = rt == CFX_F32 && ((it == CFX_I32 && !ih) || (it == CFX_I64 && ih == HALF_U32));
    int w64 = rt == CFX_F64 && it == CFX_I64 && (!ih || ih == HALF_U64);
    if (!w32 && !w64)
        return 0;
    int M = w32 ? 23 : 52, bias = w32 ? 127 : 1023, emin = w32 ? -126 : -1022, W = w32 ? 32 : 64;
    const char *nm = out_name(I, n, 0), *xs = ref(I, x);
    const char *mb = fmt(I, "%lld", (long long)(((int64_t)1 << M) - 1)), *eall = w32 ? "255" : "2047";
    cfx_type t = x->ty;
    t.dtype = to;
    const char *p = new_id(I, "p_", nm), *s = new_id(I, "neg_", nm);
    if (from_real) {
        const char *d = new_id(I, "d_", nm), *a = new_id(I, "a_", nm), *e = new_id(I, "e_", nm);
        const char *b = new_id(I, "bits_", nm);
        line(I, "%s = %s", d, w32 ? fmt(I, "cast(%s, f64)", xs) : xs);
        line(I, "%s = abs(%s)", a, d);
        line(I, "%s = min(max(cast(floor(log(%s) / log(2.0)), i64), -1100), 1100)", e, a);
        pow2_of(I, p, e, nm);
        line(I, "%s = where(%s > %s, %s - 1, where(%s * 2.0 <= %s, %s + 1, %s))", e, p, a, e, p, a, e, e);
        line(I, "%s = where(%s > %s, %s / 2.0, where(%s * 2.0 <= %s, %s * 2.0, %s))", p, p, a, p, p, a, p, p);
        const char *sub = w32 ? fmt(I, "cast(%s * %s, i64)", a, real_const(I, ldexp(1.0, 149), CFX_F64, fmt(I, "%s_2pow149", nm)))
                              : fmt(I, "cast(%s * %s * %s, i64)", a, real_const(I, ldexp(1.0, 1000), CFX_F64, fmt(I, "%s_2pow1000", nm)),
                                    real_const(I, ldexp(1.0, 74), CFX_F64, fmt(I, "%s_2pow74", nm)));
        line(I, "%s = where(%s < %s, %s, ((%s + %d) << %d) + cast((%s / %s - 1.0) * %s, i64))", b, a,
             real_const(I, ldexp(1.0, emin), CFX_F64, fmt(I, "%s_min_normal", nm)), sub, e, bias, M, a, p,
             real_const(I, ldexp(1.0, M), CFX_F64, fmt(I, "%s_2pow%d", nm, M)));
        line(I, "%s = where(%s == inf, cast(%s, i64) << %d, where(%s != %s, (cast(%s, i64) << %d) | %lld, %s))", b, a,
             eall, M, d, d, eall, M, (long long)1 << (M - 1), b);
        line(I, "%s = (%s < 0.0) or ((%s == 0.0) and (1.0 / %s < 0.0))", s, d, d, d);
        const char *v = out_var(I, n, 0, &t);
        if (w32 && it == CFX_I32)
            line(I, "%s = cast(%s, i32) | where(%s, cast(1, i32) << 31, cast(0, i32))", v, b, s);
        else
            line(I, "%s = %s | where(%s, cast(1, i64) << %d, cast(0, i64))", v, b, s, W - 1);
        I->node_rounded = 1;
        return 1;
    }
    const char *b = new_id(I, "b_", nm), *E = new_id(I, "ex_", nm), *F = new_id(I, "fr_", nm), *v0 = new_id(I, "r_", nm);
    line(I, "%s = %s", b, it == CFX_I64 ? xs : fmt(I, "cast(%s, i64)", xs));
    line(I, "%s = (%s >> %d) & %s", E, b, M, eall);
    line(I, "%s = %s & %s", F, b, mb);
    line(I, "%s = ((%s >> %d) & 1) == 1", s, b, W - 1);
    pow2_of(I, p, fmt(I, "(%s - %d)", E, bias), nm);
    const char *m = fmt(I, "cast(%s, f64) * %s", F, real_const(I, ldexp(1.0, -M), CFX_F64, fmt(I, "%s_2pow_%d", nm, M)));
    const char *sub = w32 ? fmt(I, "cast(%s, f64) * %s", F, real_const(I, ldexp(1.0, -149), CFX_F64, fmt(I, "%s_2pow_149", nm)))
                          : fmt(I, "cast(%s, f64) * %s * %s", F, real_const(I, ldexp(1.0, -1000), CFX_F64, fmt(I, "%s_2pow_1000", nm)),
                                real_const(I, ldexp(1.0, -74), CFX_F64, fmt(I, "%s_2pow_74", nm)));
    line(I, "%s = where(%s == 0, %s, (1.0 + %s) * %s)", v0, E, sub, m, p);
    line(I, "%s = where(%s == %s, where(%s == 0, inf, nan), %s)", v0, E, eall, F, v0);
    line(I, "%s = where(%s, -%s, %s)", v0, s, v0, v0);
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = %s", v, w32 ? fmt(I, "cast(%s, f32)", v0) : v0);
    I->node_rounded = 1;
    return 1;
}

/* ---- uint64 ---------------------------------------------------------------------------------
 * uint64 is held in i64 as its bits (two's complement: 2^64 - 1 is -1). The ops below are exact
 * on those bits: i64's wrapping + - * and negation are uint64's, == and the bitwise ops are the
 * bits', and the ops that move or pick values keep them. Order (Less ... GreaterOrEqual, Max, Min)
 * compares with the sign bit of both sides flipped (u64_order); BitShift RIGHT is logical
 * (op_bitshift); a Cast to or from a real reads the value as unsigned (op_cast_u64_real). Every
 * other op of a uint64 value (Abs, ReduceMax, ...) is refused by name; Div, Mod, Pow and TopK are
 * op_u64_arith's. */

static int u64_op(const char *op)
{
    static const char *const ops[] = {
        "Identity", "Reshape", "Squeeze", "Unsqueeze", "Flatten", "Transpose", "Expand", "Concat", "Split",
        "Slice", "Gather", "GatherElements", "GatherND", "Where", "Tile", "Trilu", "Pad", "DepthToSpace",
        "SpaceToDepth", "ReverseSequence", "Constant", "ConstantOfShape", "Shape", "Size", "Cast", "CastLike",
        "BitCast", "Add", "Sub", "Mul", "Neg", "Sum", "ReduceSum", "Equal", "Less", "Greater", "LessOrEqual",
        "GreaterOrEqual", "Max", "Min", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot",
        "Div", "Mod", "Pow", "TopK"};
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
        if (!strcmp(op, ops[k]))
            return 1;
    return 0;
}

static void u64_refuse(imp *I, const Onnx__NodeProto *n)
{
    fail(I, "%s of uint64 is not supported: cfx holds uint64 in i64 as its bits and takes it only in the ops "
         "exact on them (docs/onnx.md)", clean(I, n->op_type));
}

/* Less, Greater, LessOrEqual, GreaterOrEqual, Max, Min of uint64: i64's order of the values with
 * the sign bit flipped is uint64's; Max and Min flip their result back */
static void u64_order(imp *I, const Onnx__NodeProto *n, enum bin op)
{
    const char *flip = "(cast(1, i64) << 63)", *e = NULL;
    cfx_type t;
    for (size_t k = 0; k < n->n_input; k++) {
        ival *b = in(I, n, k);
        if (b->half != HALF_U64)
            fail(I, "the operands are %s and %s; %s takes operands of one type", type_name(in(I, n, 0)),
                 type_name(b), n->op_type);
        const char *f = fmt(I, "(%s ^ %s)", ref(I, b), flip);
        if (!e) {
            t = b->ty;
            e = f;
            continue;
        }
        cfx_type o;
        broadcast(I, &t, &b->ty, &o);
        o.dtype = CFX_I64;
        t = o;
        e = bin_text(I, op, CFX_I64, bin_is_cmp(op) ? e : fmt(I, "(%s)", e), f);
    }
    if (!e)
        fail(I, "no operands");
    if (bin_is_cmp(op))
        t.dtype = CFX_BOOL;
    line(I, "%s = %s", out_var(I, n, 0, &t), bin_is_cmp(op) ? e : fmt(I, "(%s) ^ %s", e, flip));
}

/* Div, Mod, Pow and TopK of uint64 (held in i64 as its bits, as this section says): Div and
 * Mod as Hacker's Delight's unsigned division by signed (divlu, figure 9-3): a divisor of 2^63 or
 * more goes once or not at all (an unsigned compare, the sign bits flipped); a smaller one divides
 * a >> 1 (logical, so non-negative) and doubles the quotient, then the remainder corrects it by
 * one; Mod is the remainder of that quotient. Pow of a real base by a uint64 exponent: the exponent
 * read as unsigned (as a Cast to a real) in the base's type. TopK: on the values with the sign bit
 * flipped, whose i64 order is uint64's, the values flipped back. A uint64 base of Pow is refused. */
static void op_u64_arith(imp *I, const Onnx__NodeProto *n)
{
    const char *op = n->op_type, *F = "(cast(1, i64) << 63)";
    if (!strcmp(op, "TopK")) {
        ival *x = in(I, n, 0);
        Onnx__NodeProto s = *n;
        const char *nm = out_name(I, n, 0), *fl = new_id(I, "flip_", nm);
        line(I, "%s = %s ^ %s", fl, ref(I, x), F);
        char **ins = alloc(I, (n->n_input + 1) * sizeof *ins), **outs = alloc(I, 2 * sizeof *outs);
        for (size_t k = 0; k < n->n_input; k++)
            ins[k] = n->input[k];
        ins[0] = (char *)fmt(I, "%s#flipped", nm);
        bind(I, ins[0], &x->ty, fl, NULL);
        for (size_t k = 0; k < 2; k++)
            outs[k] = (char *)fmt(I, "%s#top%zu", nm, k);
        s.input = ins;
        s.output = outs;
        s.n_output = 2;
        op_topk(I, &s);
        I->node = n;
        ival *v = lookup(I, outs[0]), *ix = lookup(I, outs[1]);
        if (n->n_output > 0 && n->output[0] && *n->output[0])
            line(I, "%s = %s ^ %s", out_var(I, n, 0, &v->ty), ref(I, v), F);
        if (n->n_output > 1 && n->output[1] && *n->output[1])
            bind(I, n->output[1], &ix->ty, ref(I, ix), NULL);
        return;
    }
    ival *a = in(I, n, 0), *b = in(I, n, 1);
    if (!strcmp(op, "Pow")) {
        if (a->half == HALF_U64 || !is_real(a->ty.dtype))
            fail(I, "Pow of a uint64 base is not supported (a real base with a uint64 exponent is)");
        cfx_type o;
        broadcast(I, &a->ty, &b->ty, &o);
        o.dtype = a->ty.dtype;
        const char *e = ref(I, b);
        const char *u = fmt(I, "cast((%s >> 32) & 4294967295, f64) * 4294967296.0 + cast(%s & 4294967295, f64)", e, e);
        line(I, "%s = pow(%s, %s)", out_var(I, n, 0, &o), ref(I, a),
             a->ty.dtype == CFX_F64 ? u : fmt(I, "cast(%s, %s)", u, cfx_dtype_name(a->ty.dtype)));
        return;
    }
    if (a->half != HALF_U64 || b->half != HALF_U64)
        fail(I, "the operands are %s and %s; %s takes operands of one type", type_name(a), type_name(b), op);
    cfx_type o;
    broadcast(I, &a->ty, &b->ty, &o);
    o.dtype = CFX_I64;
    const char *nm = out_name(I, n, 0), *x = ref(I, a), *y = ref(I, b);
    const char *qs = new_id(I, "qs_", nm), *q = new_id(I, "q_", nm);
    line(I, "%s = truncdiv((%s >> 1) & ~%s, where(%s < 0, cast(1, i64), %s)) << 1", qs, x, F, y, y);
    line(I, "%s = where(%s < 0, cast((%s ^ %s) >= (%s ^ %s), i64), %s + cast(((%s - %s * %s) ^ %s) >= (%s ^ %s), i64))",
         q, y, x, F, y, F, qs, x, qs, y, F, y, F);
    const char *v = out_var(I, n, 0, &o);
    line(I, !strcmp(op, "Div") ? "%s = %s" : "%s = %s - %s * %s", v, !strcmp(op, "Div") ? q : x, q, y);
}

/* ---- activations, Dropout and the normalizations --------------------------------------------- */

/* Activations written as one expression of cfx's ops, as ONNX's reference defines them: $x is
 * the operand, $a $b $g the attributes (their defaults here), {v} a constant of the operand's
 * dtype. */
static const struct activation {
    const char *op, *expr;
    const char *attrs[3];
    double defaults[3];
} activations[] = {
    {"Softplus", "log(exp($x) + {1})", {0}, {0}},
    {"Softsign", "$x / ({1} + abs($x))", {0}, {0}},
    {"Elu", "where($x < {0}, $a * (exp($x) - {1}), $x)", {"alpha"}, {1.0}},
    {"Selu", "$g * where($x <= {0}, $a * exp($x) - $a, $x)", {"alpha", NULL, "gamma"},
     {1.67326319217681884765625, 0, 1.05070102214813232421875}},
    {"LeakyRelu", "where($x < {0}, $a * $x, $x)", {"alpha"}, {0.01}},
    {"HardSigmoid", "max({0}, min({1}, $a * $x + $b))", {"alpha", "beta"}, {0.2, 0.5}},
    {"HardSwish", "$x * max({0}, min({1}, $a * $x + $b))", {0}, {1.0 / 6.0, 0.5}},
    {"ThresholdedRelu", "where($x > $a, $x, {0})", {"alpha"}, {1.0}},
    {"Celu", "max({0}, $x) + min({0}, $a * (exp($x / $a) - {1}))", {"alpha"}, {1.0}},
    {"Sinh", "(exp($x) - exp(-$x)) / {2}", {0}, {0}},
    {"Cosh", "(exp($x) + exp(-$x)) / {2}", {0}, {0}},
    {"Mish", "$x * tanh(log(exp($x) + {1}))", {0}, {0}},
    {"Swish", "$x * sigmoid($a * $x)", {"alpha"}, {1.0}},
    {"Shrink", "where($x < -$g, $x + $a, where($x > $g, $x - $a, {0}))", {"bias", NULL, "lambd"}, {0.0, 0, 0.5}},
};

/* An activation's expression with its operand and constants written in: `$x` is x (put in
 * parentheses where `paren` says and x is no plain name, but where it is a call's one argument),
 * `$a` `$b` `$g` the values abg[0..2], `{K}` the constant K; constants of dtype dt, named from nm. */
static const char *fill_expr(imp *I, const char *expr, const char *x, int paren, const double *abg, int dt,
                             const char *nm)
{
    strbuf *sb = new_sb(I);
    for (const char *p = expr; *p; p++) {
        if (*p == '$' && p[1] == 'x') {
            int alone = p > expr && p[-1] == '(' && p[2] == ')';
            sb_puts(sb, !paren || plain_id(x) || alone ? x : fmt(I, "(%s)", x));
            p++;
        } else if (*p == '$' && (p[1] == 'a' || p[1] == 'b' || p[1] == 'g')) {
            int k = p[1] == 'a' ? 0 : p[1] == 'b' ? 1 : 2;
            sb_puts(sb, real_const(I, abg[k], dt, fmt(I, "%s_%c", nm, p[1])));
            p++;
        } else if (*p == '{') {
            char *end;
            double v = strtod(p + 1, &end);
            sb_puts(sb, real_const(I, v, dt, fmt(I, "%s_k", nm)));
            p = end;
        } else {
            sb_append(sb, p, 1);
        }
    }
    if (sb->oom)
        fail(I, "out of memory");
    const char *out = fmt(I, "%s", sb_str(sb));
    sb_free(sb);
    return out;
}

static int activation(imp *I, const Onnx__NodeProto *n, const char *op)
{
    const struct activation *f = NULL;
    for (size_t k = 0; k < sizeof activations / sizeof *activations; k++)
        if (!strcmp(activations[k].op, op))
            f = &activations[k];
    int gelu = !strcmp(op, "Gelu");
    if (!f && !gelu)
        return 0;
    ival *x = in(I, n, 0);
    if (!is_real(x->ty.dtype))
        fail(I, "the operand is %s; %s takes float or double", tystr(I, &x->ty), op);
    const char *nm = out_name(I, n, 0), *xs = ref(I, x);
    const char *expr = f ? f->expr : "{0.5} * $x * ({1} + erf($x * {0.70710678118654752440}))";
    if (gelu) {
        const Onnx__AttributeProto *ap = attr(I, n, "approximate");
        if (ap && ap->has_s && ap->s.len == 4 && !memcmp(ap->s.data, "tanh", 4))
            expr = "{0.5} * $x * ({1} + tanh({0.79788456080286535588} * ($x + {0.044715} * $x * $x * $x)))";
        else if (ap && ap->has_s && !(ap->s.len == 4 && !memcmp(ap->s.data, "none", 4)))
            fail(I, "approximate must be 'none' or 'tanh'");
    }
    double abg[3] = {0, 0, 0};
    for (int k = 0; f && k < 3; k++)
        if (strstr(expr, k == 0 ? "$a" : k == 1 ? "$b" : "$g"))
            abg[k] = f->attrs[k] ? attr_float(I, n, f->attrs[k], f->defaults[k]) : f->defaults[k];
    const char *e = fill_expr(I, expr, xs, 0, abg, x->ty.dtype, nm);
    const char *v = out_var(I, n, 0, &x->ty);
    line(I, "%s = %s", v, e);
    return 1;
}

/* PRelu: x where x >= 0, else slope * x (slope broadcast to x) */
static void op_prelu(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *slope = in(I, n, 1);
    if (!is_real(x->ty.dtype) || slope->ty.dtype != x->ty.dtype)
        fail(I, "the operands are %s and %s", tystr(I, &x->ty), tystr(I, &slope->ty));
    cfx_type t;
    broadcast(I, &x->ty, &slope->ty, &t);
    t.dtype = x->ty.dtype;
    if (!same_type(&t, &x->ty)) /* the slope spreads over x, never x over the slope */
        fail(I, "the slope %s does not broadcast to %s", tystr(I, &slope->ty), tystr(I, &x->ty));
    const char *xs = ref(I, x);
    const char *v = out_var(I, n, 0, &x->ty);
    line(I, "%s = where(%s < %s, %s * %s, %s)", v, xs, real_const(I, 0, x->ty.dtype, fmt(I, "%s_0", out_name(I, n, 0))),
         ref(I, slope), xs, xs);
}

/* SwiGLU: Swish_alpha(A) * B, A and B of one shape. */
static void op_swiglu(imp *I, const Onnx__NodeProto *n)
{
    ival *a = in(I, n, 0), *b = in(I, n, 1);
    if (!is_real(a->ty.dtype) || !same_type(&a->ty, &b->ty))
        fail(I, "A is %s and B %s: they must be one float or double type and shape", tystr(I, &a->ty),
             tystr(I, &b->ty));
    double alpha = attr_float(I, n, "alpha", 1.0);
    const char *xa = ref(I, a), *xb = ref(I, b);
    const char *sg = alpha == 1.0 ? fmt(I, "sigmoid(%s)", xa) : fmt(I, "sigmoid(%s * %s)", real_lit(I, alpha), xa);
    const char *sw = half_rounded(I, a->half, fmt(I, "%s * %s", xa, half_rounded(I, a->half, sg)));
    const char *v = out_var(I, n, 0, &a->ty);
    line(I, "%s = %s * %s", v, sw, xb);
}

/* Dropout at inference: the input itself, and a mask of all true. Training (a training_mode
 * known true, with a ratio not known 0) is refused. */
static void op_dropout(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    if (has_input(n, 2)) {
        ival *tm = known(I, n, 2, "training_mode");
        if (count(&tm->ty) != 1)
            fail(I, "training_mode is %s, not one bool", tystr(I, &tm->ty));
        int zero = 0;
        if (has_input(n, 1)) {
            ival *ratio = in(I, n, 1);
            zero = ratio->data && count(&ratio->ty) == 1 && is_real(ratio->ty.dtype) && getd(ratio, 0) == 0.0;
        }
        if (geti(tm, 0) && !zero)
            fail(I, "training_mode = true (random dropout) is not supported; cfx imports Dropout at inference");
    }
    bind(I, out_name(I, n, 0), &x->ty, x->id, x->data)->half = x->half;
    I->node_rounded = 1;
    if (n->n_output > 1 && n->output[1] && *n->output[1]) {
        cfx_type t = x->ty;
        t.dtype = I->opset >= 10 ? CFX_BOOL : x->ty.dtype;
        if (count(&t) <= ONNX_FOLD_MAX) {
            void *data = new_data(I, &t);
            for (int64_t i = 0; i < count(&t); i++)
                seti(t.dtype, data, i, 1);
            if (t.dtype != CFX_BOOL)
                for (int64_t i = 0; i < count(&t); i++)
                    setd(t.dtype, data, i, 1.0);
            out_known(I, n, 1, &t, data);
        } else {
            const char *v = out_var(I, n, 1, &t);
            line(I, "%s = ones(%s)", v, tystr(I, &t));
        }
    }
}

/* BatchNormalization with training_mode = 1 (opset 14 on): the batch's mean and variance of each
 * channel (over every axis but 1) normalize x, and the running statistics given back are
 * `mean * momentum + batch mean * (1 - momentum)` (the variance's alike), as ONNX's reference. */
static void op_batchnorm_train(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int r = x->ty.rank;
    if (I->opset < 14)
        fail(I, "training statistics before opset 14 are not supported (training_mode, opset 14 on)");
    if (!is_real(x->ty.dtype) || r < 2)
        fail(I, "the input is %s; BatchNormalization takes reals of rank 2 or more", tystr(I, &x->ty));
    int64_t c = x->ty.dims[1];
    cfx_type vt = mktype(x->ty.dtype, 1, &c), pt = x->ty; /* the parameters seen as [C, 1, ...] */
    pt.rank = r - 1;
    pt.dims[0] = c;
    for (int d = 1; d < r - 1; d++)
        pt.dims[d] = 1;
    const char *p[4];
    for (int k = 0; k < 4; k++) {
        ival *v = in(I, n, (size_t)k + 1);
        if (!same_type(&v->ty, &vt))
            fail(I, "input %d is %s; the data %s needs %s", k + 1, tystr(I, &v->ty), tystr(I, &x->ty),
                 tystr(I, &vt));
        p[k] = ref(I, v);
    }
    double eps = attr_float(I, n, "epsilon", 1e-5), mom = attr_float(I, n, "momentum", 0.9);
    const char *a = ref(I, x), *nm = out_name(I, n, 0);
    const char *mu = new_id(I, "mu_", nm), *d = new_id(I, "d_", nm), *var = new_id(I, "var_", nm);
    const char *m1 = a, *m2 = fmt(I, "(%s * %s)", d, d);
    for (int k = r - 1; k >= 0; k--)
        if (k != 1) {
            m1 = fmt(I, "mean(%s, axis=%d, keepdims=True)", m1, k);
            m2 = fmt(I, "mean(%s, axis=%d, keepdims=True)", m2, k);
        }
    cfx_type kt = x->ty; /* [1, C, 1, ...] */
    for (int k = 0; k < r; k++)
        kt.dims[k] = k == 1 ? c : 1;
    line(I, "%s = %s", mu, m1);
    line(I, "%s = %s - %s", d, a, mu);
    line(I, "%s = %s", var, m2);
    const char *e = real_const(I, eps, x->ty.dtype, fmt(I, "%s_epsilon", nm));
    const char *v = out_var(I, n, 0, &x->ty);
    line(I, "%s = %s * %s / sqrt(%s + %s) + %s", v, reshaped(I, p[0], &vt, &pt), d, var, e,
         reshaped(I, p[1], &vt, &pt));
    const char *m = real_const(I, mom, x->ty.dtype, fmt(I, "%s_momentum", nm));
    const char *m_1 = real_const(I, 1.0 - mom, x->ty.dtype, fmt(I, "%s_1_momentum", nm));
    for (int k = 1; k < 3; k++)
        if ((size_t)k < n->n_output && n->output[k] && *n->output[k]) {
            const char *o = out_var(I, n, (size_t)k, &vt);
            line(I, "%s = %s * %s + %s * %s", o, p[k + 1], m, reshaped(I, k == 1 ? mu : var, &kt, &vt), m_1);
        }
    for (size_t k = 3; k < n->n_output; k++)
        if (n->output[k] && *n->output[k])
            fail(I, "output %zu: BatchNormalization has 3 outputs from opset 14", k);
}

static void op_batchnorm(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int r = x->ty.rank;
    if (attr_int(I, n, "training_mode", 0)) {
        op_batchnorm_train(I, n);
        return;
    }
    for (size_t k = 1; k < n->n_output; k++)
        if (n->output[k] && *n->output[k])
            fail(I, "output %zu (the running or saved statistics of training) is not supported", k);
    if (!is_real(x->ty.dtype) || r < 2)
        fail(I, "the input is %s; BatchNormalization takes reals of rank 2 or more", tystr(I, &x->ty));
    int spatial = (int)(I->opset < 9 ? attr_int(I, n, "spatial", 1) : 1);
    int64_t c = x->ty.dims[1];
    cfx_type pt = x->ty; /* what each parameter is seen as: [C, 1, ...], or [C, D1, ...] */
    pt.rank = r - 1;
    for (int d = 1; d < r - 1; d++)
        pt.dims[d] = spatial ? 1 : x->ty.dims[d + 1];
    pt.dims[0] = c;
    const char *p[4];
    for (int k = 0; k < 4; k++) {
        ival *v = in(I, n, (size_t)k + 1);
        cfx_type want = spatial ? mktype(x->ty.dtype, 1, &c) : pt;
        if (v->ty.dtype != x->ty.dtype || count(&v->ty) != count(&want) ||
            (v->ty.rank != 1 && !same_type(&v->ty, &want)))
            fail(I, "input %d is %s; the data %s needs %s", k + 1, tystr(I, &v->ty), tystr(I, &x->ty),
                 tystr(I, &want));
        p[k] = reshaped(I, ref(I, v), &v->ty, &pt);
    }
    double eps = attr_float(I, n, "epsilon", 1e-5);
    const char *nm = out_name(I, n, 0);
    const char *e = real_const(I, (float)eps, x->ty.dtype, fmt(I, "%s_epsilon", nm));
    const char *sd = new_id(I, "sd_", nm);
    line(I, "%s = sqrt(%s + %s)", sd, p[3], e);
    const char *v = out_var(I, n, 0, &x->ty);
    line(I, "%s = %s * (%s - %s) / %s + %s", v, p[0], ref(I, x), p[2], sd, p[1]);
}

/* InstanceNormalization: scale * (x - mean) / sqrt(var + epsilon) + B, the mean and variance of
 * each [n, c] taken over the spatial axes (2 on), scale and B along axis 1 as BatchNormalization's.
 * PyTorch writes it for nn.InstanceNorm*d and, on [N, groups, -1], for nn.GroupNorm. */
static void op_instancenorm(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int r = x->ty.rank;
    if (!is_real(x->ty.dtype) || r < 3)
        fail(I, "the input is %s; InstanceNormalization takes reals of rank 3 or more", tystr(I, &x->ty));
    int64_t c = x->ty.dims[1];
    cfx_type pt = x->ty; /* each parameter seen as [C, 1, ...] */
    pt.rank = r - 1;
    pt.dims[0] = c;
    for (int d = 1; d < r - 1; d++)
        pt.dims[d] = 1;
    cfx_type want = mktype(x->ty.dtype, 1, &c);
    const char *p[2];
    for (int k = 0; k < 2; k++) {
        ival *v = in(I, n, (size_t)k + 1);
        if (!same_type(&v->ty, &want))
            fail(I, "input %d is %s; the data %s needs %s", k + 1, tystr(I, &v->ty), tystr(I, &x->ty),
                 tystr(I, &want));
        p[k] = reshaped(I, ref(I, v), &v->ty, &pt);
    }
    double eps = attr_float(I, n, "epsilon", 1e-5);
    const char *a = ref(I, x), *nm = out_name(I, n, 0);
    const char *mu = new_id(I, "mu_", nm), *d = new_id(I, "d_", nm), *sd = new_id(I, "sd_", nm);
    const char *m1 = a, *m2 = fmt(I, "(%s * %s)", d, d);
    for (int k = r - 1; k >= 2; k--) {
        m1 = fmt(I, "mean(%s, axis=%d, keepdims=True)", m1, k);
        m2 = fmt(I, "mean(%s, axis=%d, keepdims=True)", m2, k);
    }
    line(I, "%s = %s", mu, m1);
    line(I, "%s = %s - %s", d, a, mu);
    line(I, "%s = sqrt(%s + %s)", sd, m2, real_const(I, eps, x->ty.dtype, fmt(I, "%s_epsilon", nm)));
    const char *v = out_var(I, n, 0, &x->ty);
    line(I, "%s = %s * %s / %s + %s", v, p[0], d, sd, p[1]);
}

/* LayerNormalization over the axes from `axis` to the last, as ONNX's own function body
 * computes it: Deviation * InvStdDev * Scale + B, with the mean and variance of those axes. */
static void op_layernorm(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *scale = in(I, n, 1), *bias = in_opt(I, n, 2);
    int r = x->ty.rank;
    if (!is_real(x->ty.dtype) || r == 0)
        fail(I, "the operand is %s", tystr(I, &x->ty));
    int axis = norm_axis(I, attr_int(I, n, "axis", -1), r, "axis");
    double eps = attr_float(I, n, "epsilon", 1e-5);
    const char *a = ref(I, x), *nm = out_name(I, n, 0);
    const char *mu = new_id(I, "mu_", nm), *d = new_id(I, "d_", nm), *inv = new_id(I, "inv_", nm);
    cfx_type st = x->ty; /* the statistics' shape: the normalized axes kept as 1 */
    const char *m1 = a, *m2 = fmt(I, "(%s * %s)", d, d);
    for (int k = r - 1; k >= axis; k--) {
        st.dims[k] = 1;
        m1 = fmt(I, "mean(%s, axis=%d, keepdims=True)", m1, k);
        m2 = fmt(I, "mean(%s, axis=%d, keepdims=True)", m2, k);
    }
    const char *mv = n->n_output > 1 && n->output[1] && *n->output[1] ? out_var(I, n, 1, &st) : mu;
    line(I, "%s = %s", mv, m1);
    line(I, "%s = %s - %s", d, a, mv);
    const char *iv = n->n_output > 2 && n->output[2] && *n->output[2] ? out_var(I, n, 2, &st) : inv;
    line(I, "%s = 1.0 / sqrt(%s + %s)", iv, m2, real_const(I, eps, x->ty.dtype, fmt(I, "%s_epsilon", nm)));
    cfx_type chk;
    broadcast(I, &x->ty, &scale->ty, &chk);
    const char *e = fmt(I, "%s * %s * %s", d, iv, ref(I, scale));
    if (bias)
        e = fmt(I, "%s + %s", e, ref(I, bias));
    const char *v = out_var(I, n, 0, &x->ty);
    line(I, "%s = %s", v, e);
}

/* RMSNormalization (opset 23): X / sqrt(mean(X^2 over the axes from `axis` on) + epsilon) * Scale,
 * computed in the input's type (f32 for the half types, rounded once: stash_type 1). */
static void op_rmsnorm(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *scale = in(I, n, 1);
    int r = x->ty.rank;
    if (!is_real(x->ty.dtype) || r == 0)
        fail(I, "the operand is %s", tystr(I, &x->ty));
    if (attr_int(I, n, "stash_type", 1) != 1)
        fail(I, "stash_type %lld is not supported (only 1, float)", (long long)attr_int(I, n, "stash_type", 1));
    int axis = norm_axis(I, attr_int(I, n, "axis", -1), r, "axis");
    double eps = attr_float(I, n, "epsilon", 1e-5);
    cfx_type chk;
    broadcast(I, &x->ty, &scale->ty, &chk);
    if (chk.rank != r || memcmp(chk.dims, x->ty.dims, sizeof chk.dims[0] * (size_t)r))
        fail(I, "the scale %s does not broadcast to the input %s", tystr(I, &scale->ty), tystr(I, &x->ty));
    const char *a = ref(I, x), *nm = out_name(I, n, 0), *inv = new_id(I, "inv_", nm);
    const char *m2 = fmt(I, "(%s * %s)", a, a);
    for (int k = r - 1; k >= axis; k--)
        m2 = fmt(I, "mean(%s, axis=%d, keepdims=True)", m2, k);
    line(I, "%s = 1.0 / sqrt(%s + %s)", inv, m2, real_const(I, eps, x->ty.dtype, fmt(I, "%s_epsilon", nm)));
    const char *v = out_var(I, n, 0, &x->ty);
    line(I, "%s = %s * %s * %s", v, a, inv, ref(I, scale));
}

/* GroupNormalization: x seen as [N, G, C / G * rest], each group's mean and variance over its last
 * axis, normalized, seen as x again, then scale and bias along the channels (opset 18's scale and
 * bias of one value per group: on the groups, before the reshape back). float16 and bfloat16 are
 * computed in f32 and rounded once (stash_type 1, the default). */
static void op_groupnorm(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *sc = in(I, n, 1), *bi = in(I, n, 2);
    int r = x->ty.rank;
    if (!is_real(x->ty.dtype) || r < 3)
        fail(I, "the input is %s; GroupNormalization takes reals of rank 3 or more", tystr(I, &x->ty));
    const Onnx__AttributeProto *ga = attr(I, n, "num_groups");
    if (!ga)
        fail(I, "the attribute num_groups is missing");
    int64_t G = attr_int(I, n, "num_groups", 0), N = x->ty.dims[0], C = x->ty.dims[1];
    if (G < 1 || C % G)
        fail(I, "num_groups %lld does not divide the %lld channels", (long long)G, (long long)C);
    int per_group = 0;
    for (int k = 0; k < 2; k++) {
        ival *p = k ? bi : sc;
        if (p->ty.rank != 1 || p->ty.dtype != x->ty.dtype)
            fail(I, "input %d is %s; the data %s needs a vector of its channels", k + 1, tystr(I, &p->ty),
                 tystr(I, &x->ty));
        if (p->ty.dims[0] == G && G != C && I->opset < 21)
            per_group = 1;
        else if (p->ty.dims[0] != C)
            fail(I, "input %d is %s for %lld channels", k + 1, tystr(I, &p->ty), (long long)C);
    }
    double eps = attr_float(I, n, "epsilon", 1e-5);
    const char *nm = out_name(I, n, 0);
    cfx_type gt = mktype(x->ty.dtype, 3, (int64_t[]){N, G, count(&x->ty) / (N * G)});
    const char *xg = new_id(I, "xg_", nm), *d = new_id(I, "d_", nm), *y = new_id(I, "y_", nm);
    line(I, "%s = %s", xg, reshaped(I, ref(I, x), &x->ty, &gt));
    line(I, "%s = %s - mean(%s, axis=2, keepdims=True)", d, xg, xg);
    line(I, "%s = %s / sqrt(mean(%s * %s, axis=2, keepdims=True) + %s)", y, d, d, d,
         real_const(I, eps, x->ty.dtype, fmt(I, "%s_epsilon", nm)));
    cfx_type pt = mktype(x->ty.dtype, 2, (int64_t[]){per_group ? G : C, 1});
    const char *s = reshaped(I, ref(I, sc), &sc->ty, &pt), *b = reshaped(I, ref(I, bi), &bi->ty, &pt);
    if (per_group) {
        const char *v = out_var(I, n, 0, &x->ty);
        line(I, "%s = %s", v, reshaped(I, fmt(I, "(%s * %s + %s)", s, y, b), &gt, &x->ty));
        return;
    }
    cfx_type ct = x->ty; /* [C, 1, ...] against x */
    ct.rank = r - 1;
    ct.dims[0] = C;
    for (int k = 1; k < r - 1; k++)
        ct.dims[k] = 1;
    s = reshaped(I, ref(I, sc), &sc->ty, &ct);
    b = reshaped(I, ref(I, bi), &bi->ty, &ct);
    const char *v = out_var(I, n, 0, &x->ty);
    line(I, "%s = %s * %s + %s", v, s, reshaped(I, y, &gt, &x->ty), b);
}

/* MeanVarianceNormalization: (x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9) over `axes`, as its
 * function body computes it. */
static void op_mvn(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int r = x->ty.rank, mark[CFX_TYPE_MAX_RANK] = {0};
    if (!is_real(x->ty.dtype) || r < 1)
        fail(I, "the input is %s; MeanVarianceNormalization takes reals", tystr(I, &x->ty));
    size_t na = 0;
    const int64_t *ax = attr_ints(I, n, "axes", &na);
    static const int64_t def[] = {0, 2, 3};
    if (!ax) {
        ax = def;
        na = 3;
    }
    for (size_t k = 0; k < na; k++)
        mark[norm_axis(I, ax[k], r, "axes")] = 1;
    const char *a = ref(I, x), *nm = out_name(I, n, 0);
    const char *mu = new_id(I, "mu_", nm), *m1 = a, *m2 = fmt(I, "(%s * %s)", a, a);
    for (int k = r - 1; k >= 0; k--)
        if (mark[k]) {
            m1 = fmt(I, "mean(%s, axis=%d, keepdims=True)", m1, k);
            m2 = fmt(I, "mean(%s, axis=%d, keepdims=True)", m2, k);
        }
    line(I, "%s = %s", mu, m1);
    const char *v = out_var(I, n, 0, &x->ty);
    line(I, "%s = (%s - %s) / (sqrt(%s - %s * %s) + %s)", v, a, mu, m2, mu, mu,
         real_const(I, 1e-9, x->ty.dtype, fmt(I, "%s_epsilon", nm)));
}

/* LRN: x / (bias + alpha / size * s) ** beta, s the sum of squares over the channel window
 * [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)]: the squares written into zeros with
 * room for the window on either side, and `size` slices of it added. */
static void op_lrn(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int r = x->ty.rank;
    if (r < 3 || !is_real(x->ty.dtype))
        fail(I, "the input is %s; float or double of rank 3 or more ([N, C, ...]) is taken", tystr(I, &x->ty));
    int64_t size = attr_int(I, n, "size", 0);
    if (size < 1 || size > 4096)
        fail(I, "size %lld", (long long)size);
    double alpha = attr_float(I, n, "alpha", 0.0001), beta = attr_float(I, n, "beta", 0.75);
    double bias = attr_float(I, n, "bias", 1.0);
    int64_t C = x->ty.dims[1], lo = (size - 1) / 2;
    cfx_type pt = x->ty;
    pt.dims[1] = C + size - 1;
    const char *src = ref(I, x), *nm = out_name(I, n, 0);
    const char *p = new_id(I, "q_", nm), *s = new_id(I, "s_", nm);
    line(I, "%s = %s", p, zeros_of(I, &pt));
    line(I, "%s[:, %lld:%lld] = %s * %s", p, (long long)lo, (long long)(lo + C), src, src);
    strbuf *sb = new_sb(I);
    for (int64_t k = 0; k < size; k++)
        sb_printf(sb, "%s%s[:, %lld:%lld]", k ? " + " : "", p, (long long)k, (long long)(k + C));
    if (sb->oom)
        fail(I, "out of memory");
    line(I, "%s = %s", s, sb_str(sb));
    sb_free(sb);
    const char *v = out_var(I, n, 0, &x->ty);
    line(I, "%s = %s / pow(%s + %s * %s, %s)", v, src, real_lit(I, bias), real_lit(I, alpha / (double)size), s,
         real_lit(I, beta));
}

/* ---- Conv, ConvTranspose, Col2Im and the pools, composed of slices, concat and @ ------------- */

/* The sliding window of a Conv or a pool over the spatial axes (1 to 3) of an [N, C, ...] input:
 * kernel k, strides s, dilations dl, pads before pb and after pe, and the result's length o. */
typedef struct {
    int ns;
    int64_t d[3], k[3], s[3], dl[3], pb[3], pe[3], o[3];
    int flip;        /* ConvTranspose: the kernel's offsets taken in reverse */
    const char **ph; /* window_prepare: the padded input's phases */
} window;

static void window_dims(imp *I, const Onnx__NodeProto *n, const char *name, int ns, int64_t *out, int64_t min)
{
    size_t len;
    const int64_t *a = attr_ints(I, n, name, &len);
    if (!a)
        return;
    if ((int)len != ns)
        fail(I, "'%s' has %zu values for %d spatial axes", name, len, ns);
    for (int d = 0; d < ns; d++) {
        if (a[d] < min || a[d] > ((int64_t)1 << 30))
            fail(I, "'%s' holds %lld", name, (long long)a[d]);
        out[d] = a[d];
    }
}

/* The window of n over x's spatial axes with the given kernel: strides, dilations, pads and
 * auto_pad as ONNX's reference computes them (op_pool_common.py), ceil_mode for the pools. */
static void window_of(imp *I, const Onnx__NodeProto *n, const cfx_type *x, const int64_t *kernel, int ceil_mode,
                      window *w)
{
    int ns = x->rank - 2;
    if (x->rank < 3 || ns > 3)
        fail(I, "the input is %s: 1 to 3 spatial axes after N and C are supported", tystr(I, x));
    memset(w, 0, sizeof *w);
    w->ns = ns;
    for (int d = 0; d < ns; d++) {
        w->d[d] = x->dims[2 + d];
        w->k[d] = kernel[d];
        w->s[d] = w->dl[d] = 1;
    }
    window_dims(I, n, "strides", ns, w->s, 1);
    window_dims(I, n, "dilations", ns, w->dl, 1);
    int64_t pads[6] = {0};
    window_dims(I, n, "pads", 2 * ns, pads, 0);
    const char *ap = attr_str(I, n, "auto_pad", "NOTSET");
    int same = !strcmp(ap, "SAME_UPPER") ? 1 : !strcmp(ap, "SAME_LOWER") ? 2 : 0;
    if (!same && strcmp(ap, "NOTSET") && strcmp(ap, "VALID"))
        fail(I, "auto_pad '%s' is not supported (NOTSET, SAME_UPPER, SAME_LOWER, VALID are)", clean(I, ap));
    if (same && ceil_mode)
        fail(I, "ceil_mode with auto_pad '%s' is not supported", clean(I, ap));
    for (int d = 0; d < ns; d++) {
        int64_t span = (w->k[d] - 1) * w->dl[d] + 1;
        if (same) {
            w->o[d] = (w->d[d] + w->s[d] - 1) / w->s[d];
            int64_t total = (w->o[d] - 1) * w->s[d] + span - w->d[d];
            total = total > 0 ? total : 0;
            w->pb[d] = same == 1 ? total / 2 : total - total / 2;
            w->pe[d] = total - w->pb[d];
            continue;
        }
        if (!strcmp(ap, "NOTSET")) {
            w->pb[d] = pads[d];
            w->pe[d] = pads[ns + d];
        }
        int64_t ext = w->d[d] + w->pb[d] + w->pe[d] - span;
        if (ext < 0)
            fail(I, "the window (%lld wide along spatial axis %d) is wider than the padded input (%lld)",
                 (long long)span, d, (long long)(w->d[d] + w->pb[d] + w->pe[d]));
        w->o[d] = ext / w->s[d] + 1;
        if (ceil_mode && ext % w->s[d]) {
            w->o[d]++;
            if ((w->o[d] - 1) * w->s[d] >= w->d[d] + w->pb[d]) /* the last window starts in the pads */
                w->o[d]--;
        }
    }
}

/* a type of that rank, its dims to be set */
static cfx_type window_type(cfx_dtype dt, int rank)
{
    cfx_type t = mktype(dt, 0, NULL);
    t.rank = rank;
    return t;
}

static int64_t window_count(const int64_t *v, int ns)
{
    int64_t c = 1;
    for (int d = 0; d < ns; d++)
        c *= v[d];
    return c;
}

/* A known value v seen under type t (same element count): a module constant of that shape; else
 * v's variable reshaped. */
static const char *reshaped_val(imp *I, ival *v, const cfx_type *t, const char *tag)
{
    if (!v->data)
        return reshaped(I, ref(I, v), &v->ty, t);
    ival c = {.name = fmt(I, "%s#%s", v->name, tag), .ty = *t, .data = v->data};
    c.ty.dtype = v->ty.dtype;
    return ref(I, &c);
}

/* The input of w made ready for its slices: padded with `fill` (and cropped or padded past the
 * pads to a multiple of each stride), then split along each strided axis into its stride's
 * phases (reshape [A, L / s, s, B], index r), so that each kernel offset meets a plain slice of
 * a phase (window_slice). */
static void window_prepare(imp *I, const Onnx__NodeProto *n, ival *x, window *w, double fill)
{
    int ns = w->ns, r = x->ty.rank;
    const char *nm = out_name(I, n, 0);
    int64_t lp[3];
    cfx_type pt = x->ty;
    int moved = 0;
    for (int d = 0; d < ns; d++) {
        lp[d] = w->s[d] * ((w->k[d] - 1) * w->dl[d] / w->s[d] + w->o[d]);
        pt.dims[2 + d] = lp[d];
        moved |= w->pb[d] != 0 || lp[d] != w->d[d];
    }
    check_dims(I, nm, pt.rank, pt.dims);
    const char *src = ref(I, x);
    if (moved) { /* the input written into its place in the padded one */
        const char *xp = new_id(I, "xp_", nm);
        strbuf *to = new_sb(I), *from = new_sb(I);
        sb_puts(to, "[:, :");
        sb_puts(from, "[:, :");
        for (int d = 0; d < ns; d++) {
            int64_t s0 = w->pb[d] < 0 ? -w->pb[d] : 0, t0 = w->pb[d] > 0 ? w->pb[d] : 0;
            int64_t len = w->d[d] - s0 < lp[d] - t0 ? w->d[d] - s0 : lp[d] - t0;
            if (len < 1)
                fail(I, "the window never meets the input along spatial axis %d", d);
            sb_printf(to, ", %lld:%lld", (long long)t0, (long long)(t0 + len));
            sb_printf(from, ", %lld:%lld", (long long)s0, (long long)(s0 + len));
        }
        sb_puts(to, "]");
        sb_puts(from, "]");
        if (to->oom || from->oom)
            fail(I, "out of memory");
        line(I, "%s = %s", xp,
             fill == 0 ? zeros_of(I, &pt)
                       : fmt(I, "full(%s, %s)", tystr(I, &pt), real_const(I, fill, x->ty.dtype, fmt(I, "%s_fill", nm))));
        line(I, "%s%s = %s%s", xp, sb_str(to), src, sb_str(from));
        sb_free(to);
        sb_free(from);
        src = xp;
    }
    /* the phases: ph[i] for the residues (r_0, ..., r_ns-1) in mixed radix over the strides */
    int64_t nph = window_count(w->s, ns);
    if (nph > 4096)
        fail(I, "strides of %lld phases; at most 4096 are taken", (long long)nph);
    const char **ph = alloc(I, (size_t)nph * sizeof *ph);
    memset(ph, 0, (size_t)nph * sizeof *ph);
    ph[0] = src;
    int64_t have = 1; /* phases made so far: the radix of the axes done */
    cfx_type ct = pt;
    for (int d = 0; d < ns; d++) {
        int64_t s = w->s[d];
        if (s == 1)
            continue;
        int used[4096] = {0};
        for (int64_t k = 0; k < w->k[d] && k < 4096; k++)
            used[(k * w->dl[d]) % s] = 1;
        int64_t A = 1, B = 1;
        for (int e = 0; e < 2 + d; e++)
            A *= ct.dims[e];
        for (int e = 3 + d; e < r; e++)
            B *= ct.dims[e];
        cfx_type nt = ct;
        nt.dims[2 + d] = ct.dims[2 + d] / s;
        const char **nx = alloc(I, (size_t)nph * sizeof *nx);
        memset(nx, 0, (size_t)nph * sizeof *nx);
        for (int64_t i = 0; i < have; i++) {
            if (!ph[i])
                continue;
            for (int64_t q = 0; q < s; q++) {
                if (!used[q])
                    continue;
                const char *id = new_id(I, "ph_", nm);
                line(I, "%s = reshape(reshape(%s, [%lld, %lld, %lld, %lld])[:, :, %lld], %s)", id, ph[i], (long long)A,
                     (long long)nt.dims[2 + d], (long long)s, (long long)B, (long long)q, dims_list(I, &nt));
                nx[i * s + q] = id;
            }
        }
        ph = nx;
        have *= s;
        ct = nt;
    }
    w->ph = ph;
}

/* The [N, C, O...] slice of the prepared input that kernel offset kk (row-major over the spatial
 * axes) meets. */
static const char *window_slice(imp *I, const window *w, int64_t kk)
{
    int ns = w->ns;
    int64_t rest = kk, idx = 0, q[3], kd[3];
    for (int d = ns - 1; d >= 0; d--) {
        kd[d] = rest % w->k[d];
        rest /= w->k[d];
        if (w->flip)
            kd[d] = w->k[d] - 1 - kd[d];
    }
    for (int d = 0; d < ns; d++) {
        int64_t off = kd[d] * w->dl[d];
        q[d] = off / w->s[d];
        idx = idx * w->s[d] + off % w->s[d];
    }
    strbuf *sb = new_sb(I);
    sb_printf(sb, "%s[:, :", w->ph[idx]);
    for (int d = 0; d < ns; d++)
        sb_printf(sb, ", %lld:%lld", (long long)q[d], (long long)(q[d] + w->o[d]));
    sb_puts(sb, "]");
    if (sb->oom)
        fail(I, "out of memory");
    return take(I, sb_take(sb));
}

/* The patches of x under w: each kernel offset's slice (window_slice) reshaped to part's dims,
 * joined along `axis` of them. */
static const char *window_patches(imp *I, const Onnx__NodeProto *n, ival *x, window *w, double fill,
                                  const cfx_type *part, int axis)
{
    window_prepare(I, n, x, w, fill);
    int64_t kt = window_count(w->k, w->ns);
    if (kt > 4096)
        fail(I, "a kernel of %lld offsets; at most 4096 are taken", (long long)kt);
    strbuf *sb = new_sb(I);
    if (kt > 1)
        sb_puts(sb, "concat((");
    for (int64_t kk = 0; kk < kt; kk++)
        sb_printf(sb, "%sreshape(%s, %s)", kk ? ", " : "", window_slice(I, w, kk), dims_list(I, part));
    if (kt > 1)
        sb_printf(sb, "), axis=%d)", axis);
    if (sb->oom)
        fail(I, "out of memory");
    return take(I, sb_take(sb));
}

/* The result [N, M, O...] of y (of [N * M * O] elements), plus the bias along axis 1 */
static void window_result(imp *I, const Onnx__NodeProto *n, const char *y, const cfx_type *yt, const window *w,
                          int64_t N, int64_t M, ival *b)
{
    cfx_type t = window_type(yt->dtype, 2 + w->ns);
    t.dims[0] = N;
    t.dims[1] = M;
    for (int d = 0; d < w->ns; d++)
        t.dims[2 + d] = w->o[d];
    const char *e = reshaped(I, y, yt, &t);
    if (b) {
        if (b->ty.rank != 1 || b->ty.dims[0] != M || b->ty.dtype != yt->dtype)
            fail(I, "the bias is %s, not %s[%lld]", tystr(I, &b->ty), cfx_dtype_name(yt->dtype), (long long)M);
        cfx_type bt = window_type(yt->dtype, 1 + w->ns);
        bt.dims[0] = M;
        for (int d = 0; d < w->ns; d++)
            bt.dims[1 + d] = 1;
        e = fmt(I, "%s + %s", e, reshaped_val(I, b, &bt, "bias"));
    }
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = %s", v, e);
}

/* Conv over the weights w [M, C / group, K...] (and ConvTranspose, which is the Conv of the input
 * spread out by the strides and the kernel flipped): the input's slice for each kernel offset,
 * joined into patches [N, C, K, O] seen as [N, group, C / group * K, O] (the channels and the
 * offsets in the order of the weights' [M, C / group * K] rows) and multiplied by the weights, a
 * product per group and batch element (the importer's MatMul); a depthwise Conv (one input
 * channel per group) multiplies patches [N, C, 1, O, K] by the weights elementwise and sums the
 * offsets. */
static void conv_core(imp *I, const Onnx__NodeProto *n, ival *x, ival *wv, window *w, int64_t M, int64_t G, ival *b)
{
    int ns = w->ns;
    int64_t N = x->ty.dims[0], C = x->ty.dims[1], Cg = C / G, kt = window_count(w->k, ns), ot = window_count(w->o, ns);
    cfx_dtype dt = x->ty.dtype;
    if (Cg == 1) {
        int64_t mult = M / G;
        cfx_type pc = window_type(dt, 5), pt = window_type(dt, 5), wt = window_type(dt, 4);
        int64_t pd[5] = {N, C, 1, ot, 1}, pp[5] = {N, C, 1, ot, kt}, wd[4] = {G, mult, 1, kt};
        copy(pc.dims, pd, sizeof pd);
        copy(pt.dims, pp, sizeof pp);
        copy(wt.dims, wd, sizeof wd);
        ival *p = part(I, n, "patches", &pt, 0, window_patches(I, n, x, w, 0, &pc, 4));
        const char *we = reshaped_val(I, wv, &wt, "depthwise");
        cfx_type yt = window_type(dt, 4);
        int64_t yd[4] = {N, G, mult, ot};
        copy(yt.dims, yd, sizeof yd);
        window_result(I, n, fmt(I, "sum(%s * %s, axis=-1)", p->id, we), &yt, w, N, M, b);
        return;
    }
    cfx_type pc = window_type(dt, 4);
    int64_t pd[4] = {N, C, 1, ot};
    copy(pc.dims, pd, sizeof pd);
    /* the patches [N, G, Cg * K, O] (N and G left out where 1), the weights [G, M / G, Cg * K] */
    cfx_type pt = mktype(dt, 0, NULL), wt = mktype(dt, 0, NULL);
    if (N > 1)
        pt.dims[pt.rank++] = N;
    if (G > 1) {
        pt.dims[pt.rank++] = G;
        wt.dims[wt.rank++] = G;
    }
    pt.dims[pt.rank++] = Cg * kt;
    pt.dims[pt.rank++] = ot;
    wt.dims[wt.rank++] = M / G;
    wt.dims[wt.rank++] = Cg * kt;
    const char *pe;
    if (ns <= 2) { /* [N, C, K, O...] written an offset at a time: two records each */
        window_prepare(I, n, x, w, 0);
        cfx_type full = window_type(dt, 3 + ns), one = window_type(dt, 2 + ns);
        full.dims[0] = one.dims[0] = N;
        full.dims[1] = one.dims[1] = C;
        full.dims[2] = kt;
        for (int d = 0; d < ns; d++)
            full.dims[3 + d] = one.dims[2 + d] = w->o[d];
        if (kt == 1) {
            pe = reshaped(I, window_slice(I, w, 0), &one, &pt);
        } else {
            const char *pv = new_id(I, "pt_", out_name(I, n, 0));
            line(I, "%s = %s", pv, zeros_of(I, &full));
            for (int64_t kk = 0; kk < kt; kk++)
                line(I, "%s[:, :, %lld] = %s", pv, (long long)kk, window_slice(I, w, kk));
            pe = reshaped(I, pv, &full, &pt);
        }
    } else { /* 3-D: [N, C, K, D, H, W] would be rank 6; the slices flattened and joined */
        cfx_type cat = window_type(dt, 4);
        int64_t cd[4] = {N, C, kt, ot};
        copy(cat.dims, cd, sizeof cd);
        pe = reshaped(I, window_patches(I, n, x, w, 0, &pc, 2), &cat, &pt);
    }
    ival *p = part(I, n, "patches", &pt, 0, pe);
    ival *wm;
    if (wv->data)
        wm = bind(I, fmt(I, "%s#weights", out_name(I, n, 0)), &wt, NULL, wv->data);
    else
        wm = part(I, n, "weights", &wt, 0, reshaped(I, ref(I, wv), &wv->ty, &wt));
    ival *y = product_part(I, n, "product", wm, p, 0);
    window_result(I, n, y->id, &y->ty, w, N, M, b);
}

static void op_conv(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *wv = in(I, n, 1), *b = in_opt(I, n, 2);
    if (!is_real(x->ty.dtype) || wv->ty.dtype != x->ty.dtype || wv->ty.rank != x->ty.rank)
        fail(I, "the input is %s and the weights %s", tystr(I, &x->ty), tystr(I, &wv->ty));
    int64_t G = attr_int(I, n, "group", 1), C = x->ty.rank > 1 ? x->ty.dims[1] : 0, M = wv->ty.dims[0];
    if (G < 1 || C % G || M % G || wv->ty.dims[1] * G != C)
        fail(I, "group %lld does not fit the input %s and the weights %s", (long long)G, tystr(I, &x->ty),
             tystr(I, &wv->ty));
    window w;
    window_of(I, n, &x->ty, wv->ty.dims + 2, 0, &w);
    size_t len;
    const int64_t *ks = attr_ints(I, n, "kernel_shape", &len);
    for (size_t d = 0; ks && d < len; d++)
        if ((int)len != w.ns || ks[d] != w.k[d])
            fail(I, "kernel_shape does not match the weights %s", tystr(I, &wv->ty));
    conv_core(I, n, x, wv, &w, M, G, b);
}

/* ConvTranspose: the input spread out by the strides (s - 1 zeros between its elements, each
 * spatial axis in turn), then the Conv of stride 1 with the kernel flipped and its two channel
 * axes swapped, padded by dilation * (K - 1) less the pads (output_padding at the end). */
static void op_conv_transpose(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *wv = in(I, n, 1), *b = in_opt(I, n, 2);
    if (!is_real(x->ty.dtype) || wv->ty.dtype != x->ty.dtype || wv->ty.rank != x->ty.rank || x->ty.rank < 3 ||
        x->ty.rank > 5)
        fail(I, "the input is %s and the weights %s", tystr(I, &x->ty), tystr(I, &wv->ty));
    int ns = x->ty.rank - 2;
    int64_t G = attr_int(I, n, "group", 1), C = x->ty.dims[1];
    if (G < 1 || C % G || wv->ty.dims[0] != C)
        fail(I, "group %lld does not fit the input %s and the weights %s", (long long)G, tystr(I, &x->ty),
             tystr(I, &wv->ty));
    int64_t Mg = wv->ty.dims[1], M = Mg * G, Cg = C / G;
    int64_t s[3] = {1, 1, 1}, dl[3] = {1, 1, 1}, op[3] = {0, 0, 0}, pads[6] = {0}, k[3], os[3];
    for (int d = 0; d < ns; d++)
        k[d] = wv->ty.dims[2 + d];
    window_dims(I, n, "strides", ns, s, 1);
    window_dims(I, n, "dilations", ns, dl, 1);
    window_dims(I, n, "output_padding", ns, op, 0);
    window_dims(I, n, "pads", 2 * ns, pads, 0);
    const char *ap = attr_str(I, n, "auto_pad", "NOTSET");
    size_t len;
    const int64_t *shape = attr_ints(I, n, "output_shape", &len);
    if (shape && (int)len != ns && (int)len != ns + 2)
        fail(I, "output_shape has %zu values for %d spatial axes", len, ns);
    int same = !strcmp(ap, "SAME_UPPER") ? 1 : !strcmp(ap, "SAME_LOWER") ? 2 : 0;
    if (!same && strcmp(ap, "NOTSET") && strcmp(ap, "VALID"))
        fail(I, "auto_pad '%s' is not supported (NOTSET, SAME_UPPER, SAME_LOWER, VALID are)", clean(I, ap));
    for (int d = 0; d < ns; d++) {
        int64_t span = (k[d] - 1) * dl[d] + 1, full = s[d] * (x->ty.dims[2 + d] - 1) + op[d] + span;
        if (op[d] >= s[d] && op[d] >= dl[d])
            fail(I, "output_padding %lld is not below the stride or the dilation", (long long)op[d]);
        if (!strcmp(ap, "VALID"))
            pads[d] = pads[ns + d] = 0;
        if (same) { /* the pads that give the output shape asked for, split as ONNX's reference does */
            os[d] = shape ? shape[(int)len - ns + d] : x->ty.dims[2 + d] * s[d];
            int64_t total = full - os[d], half = total >= 0 ? total / 2 : -((1 - total) / 2);
            pads[d] = same == 1 ? half : total - half;
            pads[ns + d] = total - pads[d];
        } else if (shape) { /* the pads before as given, the result as long as asked */
            os[d] = shape[(int)len - ns + d];
            pads[ns + d] = full - pads[d] - os[d];
        }
        if (full - pads[d] - pads[ns + d] < 1)
            fail(I, "the pads leave no result along spatial axis %d", d);
    }
    /* the input spread out: [N, C, (D - 1) * s + 1, ...] */
    const char *nm = out_name(I, n, 0);
    ival *xs = x;
    cfx_type ct = x->ty;
    for (int d = 0; d < ns; d++) {
        if (s[d] == 1)
            continue;
        int64_t A = 1, B = 1, D = ct.dims[2 + d];
        for (int e = 0; e < 2 + d; e++)
            A *= ct.dims[e];
        for (int e = 3 + d; e < ct.rank; e++)
            B *= ct.dims[e];
        cfx_type nt = ct;
        nt.dims[2 + d] = (D - 1) * s[d] + 1;
        check_dims(I, nm, nt.rank, nt.dims);
        const char *id = new_id(I, "sp_", nm);
        cfx_type zt = window_type(ct.dtype, 4);
        int64_t zd[4] = {A, D, s[d], B};
        copy(zt.dims, zd, sizeof zd);
        line(I, "%s = %s", id, zeros_of(I, &zt));
        line(I, "%s[:, :, 0] = reshape(%s, [%lld, %lld, %lld])", id, ref(I, xs), (long long)A, (long long)D,
             (long long)B);
        const char *e = fmt(I, "reshape(%s, [%lld, %lld, %lld])[:, 0:%lld]", id, (long long)A, (long long)(D * s[d]),
                            (long long)B, (long long)nt.dims[2 + d]);
        xs = part(I, n, fmt(I, "spread%d", d), &nt, 0, reshaped(I, e, &(cfx_type){.dtype = ct.dtype, .rank = 3,
                                                                             .dims = {A, nt.dims[2 + d], B}}, &nt));
        ct = nt;
    }
    window w;
    memset(&w, 0, sizeof w);
    w.ns = ns;
    w.flip = 1;
    for (int d = 0; d < ns; d++) {
        w.d[d] = ct.dims[2 + d];
        w.k[d] = k[d];
        w.s[d] = 1;
        w.dl[d] = dl[d];
        w.pb[d] = (k[d] - 1) * dl[d] - pads[d];
        w.pe[d] = (k[d] - 1) * dl[d] - pads[ns + d] + op[d];
        int64_t ext = w.d[d] + w.pb[d] + w.pe[d] - ((k[d] - 1) * dl[d] + 1);
        if (ext < 0)
            fail(I, "the pads leave no result along spatial axis %d", d);
        w.o[d] = ext + 1;
    }
    /* the weights [C, M / G, K...] as a Conv's [M, C / G, K...]: [G, Cg, Mg, K] -> [G, Mg, Cg, K] */
    int64_t kt = window_count(k, ns);
    cfx_type w4 = window_type(x->ty.dtype, 4), wc = wv->ty;
    int64_t w4d[4] = {G, Cg, Mg, kt};
    copy(w4.dims, w4d, sizeof w4d);
    wc.dims[0] = M;
    wc.dims[1] = Cg;
    if (wv->data) {
        void *data = new_data(I, &wc);
        size_t es = cfx_dtype_size(x->ty.dtype);
        for (int64_t g = 0; g < G; g++)
            for (int64_t c = 0; c < Cg; c++)
                for (int64_t m = 0; m < Mg; m++)
                    copy((char *)data + (size_t)(((g * Mg + m) * Cg + c) * kt) * es,
                         (char *)wv->data + (size_t)(((g * Cg + c) * Mg + m) * kt) * es, (size_t)kt * es);
        conv_core(I, n, xs, bind(I, fmt(I, "%s#weights", nm), &wc, NULL, data), &w, M, G, b);
        return;
    }
    const char *we = fmt(I, "permute(%s, (0, 2, 1, 3))", reshaped(I, ref(I, wv), &wv->ty, &w4));
    cfx_type wp = w4;
    wp.dims[1] = Mg;
    wp.dims[2] = Cg;
    ival *wk = part(I, n, "weights", &wc, 0, reshaped(I, we, &wp, &wc));
    conv_core(I, n, xs, wk, &w, M, G, b);
}

/* Col2Im (opset 18; PyTorch's F.fold): the columns [N, C * prod(block_shape), L] summed back into
 * an image [N, C, image_shape...], as the ConvTranspose above of the columns seen as [N, C * K,
 * L1, ...] (L1 ... the blocks along each axis), in C groups, its weights one-hot (row j of a
 * group to place j of the block), with the node's strides, dilations and pads, and an
 * output_padding for the image's end that no block reaches. image_shape and block_shape known at
 * import; 1 to 3 spatial axes. */
static void op_col2im(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int64_t img[3], blk[3], s[3] = {1, 1, 1}, dl[3] = {1, 1, 1}, pads[6] = {0}, op[3], xd[5], wd[5];
    int ns = (int)ints_of(I, known(I, n, 1, "image_shape"), img, 3, "image_shape");
    int nb = (int)ints_of(I, known(I, n, 2, "block_shape"), blk, 3, "block_shape");
    if (ns < 1 || nb != ns)
        fail(I, "image_shape has %d values and block_shape %d; cfx takes 1 to 3 spatial axes, as many of each", ns, nb);
    if (!is_real(x->ty.dtype) || x->ty.rank != 3)
        fail(I, "the input is %s; Col2Im takes reals [N, C * block elements, blocks]", tystr(I, &x->ty));
    window_dims(I, n, "strides", ns, s, 1);
    window_dims(I, n, "dilations", ns, dl, 1);
    window_dims(I, n, "pads", 2 * ns, pads, 0);
    int64_t K = 1, L = 1, CK = x->ty.dims[1];
    xd[0] = x->ty.dims[0];
    xd[1] = wd[0] = CK;
    wd[1] = 1;
    for (int d = 0; d < ns; d++) {
        if (img[d] < 1 || blk[d] < 1 || img[d] > ((int64_t)1 << 30) || blk[d] > ((int64_t)1 << 30))
            fail(I, "image_shape %lld and block_shape %lld on axis %d", (long long)img[d], (long long)blk[d], d);
        int64_t room = img[d] + pads[d] + pads[ns + d] - (blk[d] - 1) * dl[d] - 1;
        if (room < 0)
            fail(I, "a block of %lld (dilation %lld) does not fit the image's %lld with its pads on axis %d",
                 (long long)blk[d], (long long)dl[d], (long long)img[d], d);
        xd[2 + d] = room / s[d] + 1;
        op[d] = room % s[d]; /* the image's end no block reaches */
        wd[2 + d] = blk[d];
        K *= blk[d];
        L *= xd[2 + d];
    }
    if (CK % K || x->ty.dims[2] != L)
        fail(I, "the input is %s; image_shape, block_shape, strides, dilations and pads need [N, C * %lld, %lld]",
             tystr(I, &x->ty), (long long)K, (long long)L);
    cfx_type xt = mktype(x->ty.dtype, 2 + ns, xd), wt = mktype(x->ty.dtype, 2 + ns, wd);
    ival *cols = x->data ? bind(I, fmt(I, "%s#cols", out_name(I, n, 0)), &xt, NULL, x->data)
                         : part(I, n, "cols", &xt, x->half, reshaped(I, ref(I, x), &x->ty, &xt));
    void *w = new_data(I, &wt);
    for (int64_t r = 0; r < CK; r++)
        setd(wt.dtype, w, r * K + r % K, 1.0);
    ival *ins[2] = {cols, bind(I, fmt(I, "%s#onehot", out_name(I, n, 0)), &wt, NULL, w)};
    Onnx__AttributeProto a[5], *as[5];
    memset(a, 0, sizeof a);
    const char *names[5] = {"group", "strides", "dilations", "pads", "output_padding"};
    int64_t *vals[5] = {NULL, s, dl, pads, op};
    for (int k = 0; k < 5; k++) {
        a[k].name = (char *)names[k];
        if (k == 0) {
            a[k].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
            a[k].has_i = 1;
            a[k].i = CK / K;
        } else {
            a[k].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
            a[k].ints = vals[k];
            a[k].n_ints = (size_t)(k == 3 ? 2 * ns : ns);
        }
        as[k] = &a[k];
    }
    step_with(I, n, NULL, op_conv_transpose, ins, 2, as, 5);
}

/* MaxPool, AveragePool and LpPool: each kernel offset's slice of the input (padded with -inf for
 * the max, 0 for the others) folded into the result by max or + (of |x|^p); the average divides
 * by the count of the window's positions inside the input (count_include_pad: inside the padded
 * input), computed at import for each result. MaxPool's Indices follow the running maximum. */
static void op_pool(imp *I, const Onnx__NodeProto *n, int max, int lp)
{
    ival *x = in(I, n, 0);
    int ints = max && (x->half == HALF_I8 || x->half == HALF_U8); /* MaxPool's int8 and uint8 */
    if (!is_real(x->ty.dtype) && !ints)
        fail(I, "the input is %s (real types are taken, and int8 and uint8 for MaxPool)", type_name(x));
    int want_idx = max && n->n_output > 1 && n->output[1] && *n->output[1];
    size_t len;
    const int64_t *ks = attr_ints(I, n, "kernel_shape", &len);
    if (!ks || (int)len != x->ty.rank - 2)
        fail(I, "kernel_shape must give one size for each spatial axis of %s", tystr(I, &x->ty));
    for (size_t d = 0; d < len; d++)
        if (ks[d] < 1 || ks[d] > ((int64_t)1 << 30))
            fail(I, "kernel_shape holds %lld", (long long)ks[d]);
    window w;
    window_of(I, n, &x->ty, ks, lp ? 0 : (int)attr_int(I, n, "ceil_mode", 0), &w);
    int ns = w.ns;
    int64_t kt = window_count(w.k, ns), ot = window_count(w.o, ns);
    cfx_dtype dt = x->ty.dtype;
    const char *nm = out_name(I, n, 0);
    /* a narrow integer's pads lie below its range (held in i32): never the largest */
    window_prepare(I, n, x, &w, ints ? (x->half == HALF_I8 ? -129.0 : -1.0) : max ? -INFINITY : 0);
    if (kt > 4096)
        fail(I, "a kernel of %lld offsets; at most 4096 are taken", (long long)kt);
    cfx_type yt = x->ty, ot_ty = window_type(dt, ns);
    for (int d = 0; d < ns; d++)
        yt.dims[2 + d] = ot_ty.dims[d] = w.o[d];
    int64_t pw = 1;
    const char *rp = NULL;
    if (lp) { /* sum(|x|^p)^(1/p), as ONNX's reference: the pads add nothing */
        pw = attr_int(I, n, "p", 2);
        if (pw < 1 || pw > 64)
            fail(I, "p = %lld is not supported (1 to 64 are)", (long long)pw);
        if (pw > 2)
            rp = real_const(I, (double)pw, dt, fmt(I, "%s_p", nm));
    }
    /* each offset's slice folded into acc: two records an offset (the slice, max or +) */
    const char *acc = new_id(I, "acc_", nm), *v = NULL, *ix = NULL;
    int64_t so = want_idx ? attr_int(I, n, "storage_order", 0) : 0;
    if (want_idx)
        ix = new_id(I, "ix_", nm);
    for (int64_t kk = 0; kk < kt; kk++) {
        const char *t = window_slice(I, &w, kk);
        if (want_idx) { /* MaxPool's Indices: where each window's first largest element lies in x */
            cfx_type it = ot_ty;
            it.dtype = CFX_I64;
            int64_t *tab = new_data(I, &it), kd[3], rest = kk;
            for (int d = ns - 1; d >= 0; d--) {
                kd[d] = rest % w.k[d];
                rest /= w.k[d];
            }
            for (int64_t i = 0; i < ot; i++) {
                int64_t r2 = i, flat = 0, pos[3];
                for (int d = ns - 1; d >= 0; d--) {
                    pos[d] = (r2 % w.o[d]) * w.s[d] + kd[d] * w.dl[d] - w.pb[d];
                    r2 /= w.o[d];
                }
                if (so == 0)
                    for (int d = 0; d < ns; d++)
                        flat = flat * w.d[d] + pos[d];
                else
                    for (int d = ns - 1; d >= 0; d--)
                        flat = flat * w.d[d] + pos[d];
                tab[i] = flat;
            }
            ival tv = {.name = fmt(I, "%s_index%lld", nm, (long long)kk), .ty = it, .data = tab};
            const char *tk = ref(I, &tv);
            cfx_type ixt = yt;
            ixt.dtype = CFX_I64;
            if (kk == 0) {
                line(I, "%s = %s + %s", ix, zeros_of(I, &ixt), tk);
            } else {
                const char *sv = new_id(I, "s_", nm), *cv = new_id(I, "gt_", nm);
                line(I, "%s = %s", sv, t);
                line(I, "%s = %s > %s", cv, sv, acc);
                line(I, "%s = %s + cast(%s, i64) * (%s - %s)", ix, ix, cv, tk, ix);
                line(I, "%s = where(%s, %s, %s)", kk == kt - 1 ? (v = out_var(I, n, 0, &yt)) : acc, cv, sv, acc);
                continue;
            }
        }
        if (pw == 2) {
            const char *tv = new_id(I, "s_", nm);
            line(I, "%s = %s", tv, t);
            t = tv;
        }
        const char *e = !lp || pw == 1 ? (lp ? fmt(I, "abs(%s)", t) : t)
                        : pw == 2 ? fmt(I, "%s * %s", t, t) : fmt(I, "pow(abs(%s), %s)", t, rp);
        const char *to = kk == kt - 1 && max ? (v = out_var(I, n, 0, &yt)) : acc;
        if (kk == 0)
            line(I, "%s = %s", to, e);
        else
            line(I, max ? "%s = max(%s, %s)" : "%s = %s + %s", to, acc, e);
    }
    if (want_idx) {
        cfx_type bt = yt, ixt = yt;
        bt.dtype = ixt.dtype = CFX_I64;
        for (int d = 0; d < ns; d++)
            bt.dims[2 + d] = 1;
        int64_t *base = new_data(I, &bt), sp = window_count(w.d, ns);
        for (int64_t i = 0; i < bt.dims[0] * bt.dims[1]; i++)
            base[i] = i * sp;
        ival bv = {.name = fmt(I, "%s_base", nm), .ty = bt, .data = base};
        line(I, "%s = %s + %s", out_var(I, n, 1, &ixt), ix, ref(I, &bv));
    }
    if (max)
        return;
    if (lp) {
        v = out_var(I, n, 0, &yt);
        line(I, "%s = %s", v, pw == 1 ? acc : pw == 2 ? fmt(I, "sqrt(%s)", acc)
                          : fmt(I, "pow(%s, %s)", acc, real_const(I, 1.0 / (double)pw, dt, fmt(I, "%s_inv_p", nm))));
        return;
    }
    int incl = (int)attr_int(I, n, "count_include_pad", 0);
    cfx_type ct = ot_ty;
    void *cnt = new_data(I, &ct);
    int same = 1;
    double first = 0;
    for (int64_t i = 0; i < ot; i++) {
        int64_t rest = i;
        double c = 1;
        for (int d = ns - 1; d >= 0; d--) {
            int64_t o = rest % w.o[d], m = 0;
            rest /= w.o[d];
            int64_t lo = incl ? 0 : w.pb[d], hi = incl ? w.d[d] + w.pb[d] + w.pe[d] : w.pb[d] + w.d[d];
            for (int64_t k = 0; k < w.k[d]; k++) {
                int64_t at = o * w.s[d] + k * w.dl[d];
                m += at >= lo && at < hi;
            }
            c *= (double)m;
        }
        if (i == 0)
            first = c;
        same &= c == first;
        setd(dt, cnt, i, c);
    }
    const char *div;
    if (same) {
        div = real_const(I, first, dt, fmt(I, "%s_count", nm));
    } else {
        ival c = {.name = fmt(I, "%s_counts", nm), .ty = ct, .data = cnt};
        div = ref(I, &c);
    }
    v = out_var(I, n, 0, &yt);
    line(I, "%s = %s / %s", v, acc, div);
}

/* GlobalAveragePool and GlobalMaxPool: the mean or max of each [N, C] row of the spatial axes */
static void op_global_pool(imp *I, const Onnx__NodeProto *n, int max)
{
    ival *x = in(I, n, 0);
    if (!is_real(x->ty.dtype) || x->ty.rank < 3)
        fail(I, "the input is %s (real, N and C and spatial axes)", tystr(I, &x->ty));
    cfx_type ft = window_type(x->ty.dtype, 3), t = x->ty;
    ft.dims[0] = x->ty.dims[0];
    ft.dims[1] = x->ty.dims[1];
    ft.dims[2] = 1;
    for (int d = 2; d < x->ty.rank; d++) {
        ft.dims[2] *= x->ty.dims[d];
        t.dims[d] = 1;
    }
    cfx_type yt = ft;
    yt.rank = 2;
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = %s", v,
         reshaped(I, fmt(I, "%s(%s, axis=-1)", max ? "max" : "mean", reshaped(I, ref(I, x), &x->ty, &ft)), &yt, &t));
}

/* ---- MaxUnpool, Resize and Upsample, GridSample, AffineGrid, RoiAlign, DeformConv and -----------
 * NonMaxSuppression */

/* 'pads' of 2 * ns values (the begins, then the ends), 0 where absent. */
static void pads_of(imp *I, const Onnx__NodeProto *n, int ns, int64_t *pads)
{
    size_t len;
    const int64_t *a = attr_ints(I, n, "pads", &len);
    for (int d = 0; d < 2 * ns; d++)
        pads[d] = 0;
    if (!a)
        return;
    if ((int)len != 2 * ns)
        fail(I, "'pads' has %zu values for %d spatial axes", len, ns);
    for (int d = 0; d < 2 * ns; d++) {
        if (a[d] < 0 || a[d] > ((int64_t)1 << 30))
            fail(I, "'pads' holds %lld", (long long)a[d]);
        pads[d] = a[d];
    }
}

/* MaxUnpool: zeros of the shape MaxPool's input had, X written element by element at the flat
 * indices I (MaxPool's Indices: into the whole tensor, batch and channels included; one out of
 * range stops the run with `index`), then placed at the start of output_shape where given. */
static void op_max_unpool(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *ix = in(I, n, 1);
    int r = x->ty.rank, ns = r - 2;
    if (ns < 1)
        fail(I, "the input is %s; [N, C, spatial...] is taken", tystr(I, &x->ty));
    if (ix->ty.dtype != CFX_I64 && ix->ty.dtype != CFX_I32)
        fail(I, "the indices are %s, not integers", tystr(I, &ix->ty));
    if (ix->ty.rank != r || memcmp(ix->ty.dims, x->ty.dims, sizeof x->ty.dims[0] * (size_t)r))
        fail(I, "the indices are %s for the input %s: they must have its shape", tystr(I, &ix->ty), tystr(I, &x->ty));
    int64_t kernel[3] = {0, 0, 0}, strides[3] = {1, 1, 1}, pads[6];
    size_t nk;
    if (!attr_ints(I, n, "kernel_shape", &nk) || (int)nk != ns)
        fail(I, "kernel_shape must give %d values", ns);
    window_dims(I, n, "kernel_shape", ns, kernel, 1);
    window_dims(I, n, "strides", ns, strides, 1);
    pads_of(I, n, ns, pads);
    cfx_type u = x->ty; /* the inferred shape */
    for (int d = 0; d < ns; d++)
        u.dims[2 + d] = (x->ty.dims[2 + d] - 1) * strides[d] - pads[d] - pads[ns + d] + kernel[d];
    check_shape(I, out_name(I, n, 0), u.rank, u.dims, 0);
    cfx_type t = u;
    if (has_input(n, 2)) {
        int64_t os[CFX_TYPE_MAX_RANK];
        if (ints_of(I, known(I, n, 2, "output_shape"), os, CFX_TYPE_MAX_RANK, "output_shape") != r)
            fail(I, "output_shape must give %d values", r);
        for (int d = 0; d < r; d++) {
            if (os[d] < u.dims[d] || (d < 2 && os[d] != u.dims[d]))
                fail(I, "output_shape dimension %d is %lld; the unpooled one is %lld", d, (long long)os[d],
                     (long long)u.dims[d]);
            t.dims[d] = os[d];
        }
        check_shape(I, out_name(I, n, 0), t.rank, t.dims, 0);
    }
    int64_t m = count(&x->ty), total = count(&u);
    for (int64_t i = 0; ix->data && i < m; i++)
        if (geti(ix, i) < -total || geti(ix, i) >= total)
            fail(I, "index %lld is out of range for %lld elements", (long long)geti(ix, i), (long long)total);
    const char *nm = out_name(I, n, 0), *src = ref(I, x), *idx = ref(I, ix);
    cfx_type flat = mktype(x->ty.dtype, 1, &total), xf = mktype(x->ty.dtype, 1, &m), iff = mktype(ix->ty.dtype, 1, &m);
    const char *y = new_id(I, "u_", nm), *xs = new_id(I, "x_", nm), *is = new_id(I, "i_", nm),
               *j = new_id(I, "j_", nm);
    line(I, "%s = %s", xs, reshaped(I, src, &x->ty, &xf));
    line(I, "%s = %s", is, reshaped(I, idx, &ix->ty, &iff));
    line(I, "%s = %s", y, zeros_of(I, &flat));
    line(I, "for %s in range(%lld) {", j, (long long)m);
    I->indent++;
    line(I, "%s[%s[%s]] = %s[%s]", y, is, j, xs, j);
    I->indent--;
    line(I, "}");
    const char *v = out_var(I, n, 0, &t);
    if (same_type(&t, &u)) {
        line(I, "%s = %s", v, reshaped(I, y, &flat, &u));
        return;
    }
    int64_t lo[CFX_TYPE_MAX_RANK] = {0};
    line(I, "%s = %s", v, zeros_of(I, &t));
    line(I, "%s%s = %s", v, box_text(I, r, lo, u.dims, t.dims), reshaped(I, y, &flat, &u));
}

/* How a Resize reads its input, from the node's attributes (ONNX's reference, op_resize.py). */
typedef struct resize_how {
    int mode;      /* 0 nearest, 1 linear, 2 cubic */
    int nearest;   /* 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil */
    int ctm;       /* an index into resize_ctms */
    int antialias, exclude;
    double a, extrap;
} resize_how;

static const char *const resize_modes[] = {"nearest", "linear", "cubic"};

static const char *const resize_nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

static const char *const resize_ctms[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                          "tf_crop_and_resize", "half_pixel_symmetric"};

static int resize_pick(imp *I, const char *what, const char *s, const char *const *names, int nn)
{
    for (int k = 0; k < nn; k++)
        if (!strcmp(s, names[k]))
            return k;
    fail(I, "%s '%s' is not supported", what, s);
    return -1;
}

/* The weights of the taps around a source position `ratio` in (0, 1] past the tap before it
 * (the reference's _nearest_coeffs, _linear_coeffs, _cubic_coeffs and their antialias forms);
 * their count. c holds at least resize_taps() entries. */
static int resize_coeffs(const resize_how *h, double ratio, double scale, double *c)
{
    double A = h->a;
    if (h->mode == 0) {
        int hi = ratio == 1.0 || h->nearest == 3 ||
                 (h->nearest == 0 && ratio > 0.5) || (h->nearest == 1 && ratio >= 0.5);
        c[0] = !hi;
        c[1] = hi;
        return 2;
    }
    if (!h->antialias && h->mode == 1) {
        c[0] = 1 - ratio;
        c[1] = ratio;
        return 2;
    }
    if (!h->antialias) {
        double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
        c[0] = ((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A;
        c[1] = ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1;
        c[2] = ((A + 2) * q - (A + 3)) * q * q + 1;
        c[3] = ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A;
        return 4;
    }
    double s = scale < 1 ? scale : 1, sum = 0;
    int64_t start = (int64_t)floor((h->mode == 1 ? -1 : -2) / s) + 1;
    int nc = (int)(2 - 2 * start); /* the taps' count: the same for every ratio of one scale */
    for (int k = 0; k < nc; k++) {
        double x = fabs((double)(start + k) - ratio) * s, x2 = x * x, x3 = x2 * x;
        if (h->mode == 1)
            c[k] = x < 1 ? 1 - x : 0;
        else
            c[k] = x <= 1 ? (A + 2) * x3 - (A + 3) * x2 + 1 : x < 2 ? A * x3 - 5 * A * x2 + 8 * A * x - 4 * A : 0;
        sum += c[k];
    }
    for (int k = 0; k < nc; k++)
        c[k] /= sum;
    return nc;
}

static int64_t resize_taps(const resize_how *h, double scale)
{
    double s = scale < 1 ? scale : 1;
    return h->antialias ? 2 * (int64_t)ceil(2 / s) + 4 : 4;
}

/* The weights w[i * out + y] of input index i in output index y along one axis, and ext[y] set
 * where tf_crop_and_resize's source falls outside (the extrapolation value goes there). */
static void resize_weights(imp *I, const resize_how *h, int64_t in, int64_t out, double scale, const double *roi,
                           double *w, char *ext)
{
    double ow = scale * (double)in, *c = alloc(I, (size_t)resize_taps(h, scale) * sizeof *c);
    for (int64_t y = 0; y < out; y++) {
        double x, yy = (double)y;
        switch (h->ctm) {
        case 0: x = (yy + 0.5) / scale - 0.5; break;
        case 1: x = ow == 1 ? -0.5 : (yy + 0.5) / scale - 0.5; break;
        case 2: x = ow == 1 ? 0 : yy * (double)(in - 1) / (ow - 1); break;
        case 3: x = yy / scale; break;
        case 4:
            x = ow == 1 ? (roi[1] - roi[0]) * (double)(in - 1) / 2 : yy * (roi[1] - roi[0]) * (double)(in - 1) / (ow - 1);
            x += roi[0] * (double)(in - 1);
            ext[y] = x < 0 || x > (double)(in - 1);
            break;
        default: x = (double)in / 2 * (1 - (double)out / ow) + (yy + 0.5) / scale - 0.5; break;
        }
        if (!isfinite(x) || fabs(x) > 1e15)
            fail(I, "output index %lld reads from %g", (long long)y, x);
        if (ext[y])
            continue;
        double fl = floor(x);
        int nc = resize_coeffs(h, x == fl ? 1 : x - fl, scale, c);
        int64_t pad = (nc + 1) / 2, off;
        double xp = x + (double)pad, pp = floor(xp), frac = xp - pp;
        if (nc % 2 == 0)
            off = frac == 0 ? -(nc / 2) : -(nc / 2) + 1;
        else
            off = frac <= 0.5 ? -((nc - 1) / 2) : -((nc - 1) / 2) + 1;
        int64_t start = (int64_t)pp + off - pad;
        if (h->exclude) {
            double sum = 0;
            for (int k = 0; k < nc; k++) {
                if (start + k < 0 || start + k >= in)
                    c[k] = 0;
                sum += c[k];
            }
            for (int k = 0; k < nc && sum != 0; k++)
                c[k] /= sum;
        }
        for (int k = 0; k < nc; k++) {
            int64_t i = start + k < 0 ? 0 : start + k >= in ? in - 1 : start + k;
            w[i * out + y] += c[k];
        }
    }
}

/* x resized along one axis: for a real x the product of x (seen as [outer, in, inner]) with the
 * known [out, in] weights (one MATMUL record; x @ W along the last axis), plus the extrapolation
 * value where tf_crop_and_resize puts it; nearest on integers gathers rows at known indices. */
static ival *resize_axis(imp *I, const Onnx__NodeProto *n, ival *x, int axis, int64_t out, double scale,
                         const double *roi, const resize_how *h)
{
    int64_t in = x->ty.dims[axis], outer = 1, inner = 1;
    for (int d = 0; d < axis; d++)
        outer *= x->ty.dims[d];
    for (int d = axis + 1; d < x->ty.rank; d++)
        inner *= x->ty.dims[d];
    if (in * out > ((int64_t)1 << 24))
        fail(I, "the weights along axis %d would be %lld by %lld", axis, (long long)out, (long long)in);
    double *w = alloc(I, (size_t)(in * out) * sizeof *w);
    char *ext = alloc(I, (size_t)out);
    int anyext = 0;
    resize_weights(I, h, in, out, scale, roi, w, ext);
    for (int64_t y = 0; y < out; y++)
        anyext |= ext[y];
    cfx_type t = x->ty;
    t.dims[axis] = out;
    const char *tag = fmt(I, "axis%d", axis);
    if (!is_real(x->ty.dtype)) {
        if (h->mode != 0 || anyext)
            fail(I, "%s on %s is not supported (only nearest without extrapolation takes integers)",
                 anyext ? "extrapolation" : resize_modes[h->mode], tystr(I, &x->ty));
        cfx_type it = mktype(CFX_I64, 1, &out);
        int64_t *ix = new_data(I, &it);
        for (int64_t y = 0; y < out; y++)
            for (int64_t i = 0; i < in; i++)
                if (w[i * out + y] != 0)
                    ix[y] = i;
        ival *iv = bind(I, fmt(I, "%s#%s_idx", out_name(I, n, 0), tag), &it, NULL, ix);
        Onnx__AttributeProto a = {0};
        a.name = "axis";
        a.has_i = 1;
        a.i = axis;
        ival *ins[2] = {x, iv};
        return step(I, n, tag, op_gather, ins, 2, &a);
    }
    int last = axis == x->ty.rank - 1;
    cfx_type wt = last ? mktype(x->ty.dtype, 2, (int64_t[]){in, out}) : mktype(x->ty.dtype, 2, (int64_t[]){out, in});
    void *wd = new_data(I, &wt);
    for (int64_t i = 0; i < in; i++)
        for (int64_t y = 0; y < out; y++)
            setd(wt.dtype, wd, last ? i * out + y : y * in + i, w[i * out + y]);
    ival *wv = bind(I, fmt(I, "%s#%s_w", out_name(I, n, 0), tag), &wt, NULL, wd);
    ival *v;
    if (last) {
        v = product_part(I, n, tag, x, wv, 0);
    } else if (outer == 1) {
        cfx_type xt = mktype(x->ty.dtype, 2, (int64_t[]){in, inner});
        ival *x2 = same_type(&xt, &x->ty) ? x : part(I, n, fmt(I, "%s_in", tag), &xt, 0,
                                                      reshaped(I, ref(I, x), &x->ty, &xt));
        ival *p = product_part(I, n, tag, wv, x2, 0);
        v = same_type(&p->ty, &t) ? p : part(I, n, fmt(I, "%s_out", tag), &t, 0, reshaped(I, ref(I, p), &p->ty, &t));
    } else {
        /* x as [outer, in * inner], transposed and seen as [in, inner * outer]: W @ that is
         * [out, inner * outer], whose transpose seen as [outer, out * inner] is the result. Two
         * 2-D transposes and one product, where a batched product would be `outer` of them. */
        cfx_type a = mktype(x->ty.dtype, 2, (int64_t[]){outer, in * inner});
        cfx_type at = mktype(x->ty.dtype, 2, (int64_t[]){in * inner, outer});
        cfx_type b = mktype(x->ty.dtype, 2, (int64_t[]){in, inner * outer});
        cfx_type p = mktype(x->ty.dtype, 2, (int64_t[]){out, inner * outer});
        cfx_type pt = mktype(x->ty.dtype, 2, (int64_t[]){out * inner, outer});
        cfx_type q = mktype(x->ty.dtype, 2, (int64_t[]){outer, out * inner});
        ival *xt = part(I, n, fmt(I, "%s_t", tag), &at, 0, fmt(I, "transpose(%s)", reshaped(I, ref(I, x), &x->ty, &a)));
        ival *pv = part(I, n, fmt(I, "%s_p", tag), &p, 0, fmt(I, "%s @ %s", ref(I, wv), reshaped(I, xt->id, &at, &b)));
        v = part(I, n, fmt(I, "%s_out", tag), &t, 0,
                 reshaped(I, fmt(I, "transpose(%s)", reshaped(I, pv->id, &p, &pt)), &q, &t));
    }
    if (anyext && h->extrap != 0) {
        void *bd = new_data(I, &t);
        for (int64_t k = 0; k < count(&t); k++)
            setd(t.dtype, bd, k, ext[(k / inner) % out] ? h->extrap : 0);
        ival *bv = bind(I, fmt(I, "%s#%s_ext", out_name(I, n, 0), tag), &t, NULL, bd);
        v = part(I, n, fmt(I, "%s_x", tag), &t, 0, fmt(I, "%s + %s", ref(I, v), ref(I, bv)));
    }
    return v;
}

/* Resize (opsets 10 to 19) and Upsample (7 to 9) with scales or sizes known at import: separable,
 * one axis after another as the reference does, each a product with known weights (resize_axis). */
static void op_resize(imp *I, const Onnx__NodeProto *n, int upsample)
{
    ival *x = in(I, n, 0);
    int r = x->ty.rank;
    resize_how h = {0};
    h.mode = resize_pick(I, "mode", attr_str(I, n, "mode", "nearest"), resize_modes, 3);
    int old = upsample || I->opset < 11;
    if (old && h.mode == 2)
        fail(I, "mode 'cubic' before opset 11");
    h.ctm = old ? 3 : resize_pick(I, "coordinate_transformation_mode",
                                  attr_str(I, n, "coordinate_transformation_mode", "half_pixel"), resize_ctms, 6);
    h.nearest = old ? 2 : resize_pick(I, "nearest_mode", attr_str(I, n, "nearest_mode", "round_prefer_floor"),
                                      resize_nearests, 4);
    h.a = old ? -0.75 : attr_float(I, n, "cubic_coeff_a", -0.75);
    h.exclude = old ? 0 : attr_int(I, n, "exclude_outside", 0) != 0;
    h.extrap = old ? 0 : attr_float(I, n, "extrapolation_value", 0);
    h.antialias = old ? 0 : attr_int(I, n, "antialias", 0) != 0;
    if (h.antialias && h.mode == 0)
        fail(I, "antialias with mode 'nearest'");
    int pol = old ? 0 : resize_pick(I, "keep_aspect_ratio_policy", attr_str(I, n, "keep_aspect_ratio_policy", "stretch"),
                                    (const char *const[]){"stretch", "not_larger", "not_smaller"}, 3);
    int64_t axes[CFX_TYPE_MAX_RANK];
    size_t na = 0;
    const int64_t *aa = old ? NULL : attr_ints(I, n, "axes", &na);
    int seen[CFX_TYPE_MAX_RANK] = {0};
    if (!aa)
        na = (size_t)r;
    if ((int)na > r)
        fail(I, "%zu axes for rank %d", na, r);
    for (size_t k = 0; k < na; k++) {
        axes[k] = aa ? norm_axis(I, aa[k], r, "axes") : (int64_t)k;
        if (seen[axes[k]]++)
            fail(I, "axis %lld is given twice", (long long)axes[k]);
    }
    /* scales or sizes: one of them, known at import */
    double scale[CFX_TYPE_MAX_RANK], roi[2 * CFX_TYPE_MAX_RANK];
    int64_t size[CFX_TYPE_MAX_RANK];
    size_t ks = upsample && I->opset < 9 ? 99 : upsample || I->opset < 11 ? 1 : 2, kz = 3;
    ival *sv = ks < 99 && has_input(n, ks) ? in(I, n, ks) : NULL;
    ival *zv = !old && has_input(n, kz) ? in(I, n, kz) : NULL;
    if (sv && count(&sv->ty) == 0)
        sv = NULL;
    if (zv && count(&zv->ty) == 0)
        zv = NULL;
    if (ks == 99) {
        size_t ns;
        const float *f = NULL;
        const Onnx__AttributeProto *at = attr(I, n, "scales");
        if (at)
            f = at->floats, ns = at->n_floats;
        if (!f || ns != na)
            fail(I, "attribute 'scales' must have %zu entries", na);
        for (size_t k = 0; k < na; k++)
            scale[k] = f[k];
    } else if (sv && zv) {
        fail(I, "both scales ('%s') and sizes ('%s') are given", sv->name, zv->name);
    } else if (sv) {
        sv = known(I, n, ks, "the scales");
        if (!is_real(sv->ty.dtype) || sv->ty.rank != 1 || (size_t)count(&sv->ty) != na)
            fail(I, "the scales ('%s') must be %zu reals, not %s", sv->name, na, tystr(I, &sv->ty));
        for (size_t k = 0; k < na; k++)
            scale[k] = getd(sv, k);
    } else if (zv) {
        zv = known(I, n, kz, "the sizes");
        if ((size_t)ints_of(I, zv, size, CFX_TYPE_MAX_RANK, "the sizes") != na)
            fail(I, "the sizes ('%s') must have %zu entries", zv->name, na);
    } else {
        fail(I, "neither scales nor sizes are given");
    }
    if (h.ctm == 4) {
        ival *rv = known(I, n, 1, "the roi");
        if (!is_real(rv->ty.dtype) || (size_t)count(&rv->ty) != 2 * na)
            fail(I, "the roi ('%s') must be %zu reals", rv->name, 2 * na);
        for (size_t k = 0; k < 2 * na; k++)
            roi[k] = getd(rv, k);
    }
    for (size_t k = 0; k < na; k++) {
        int64_t d = x->ty.dims[axes[k]];
        if (d == 0)
            fail(I, "axis %lld of %s is empty", (long long)axes[k], tystr(I, &x->ty));
        if (zv) {
            if (size[k] < 0)
                fail(I, "size %lld along axis %lld", (long long)size[k], (long long)axes[k]);
            scale[k] = (double)size[k] / (double)d;
        } else {
            if (!(scale[k] > 0) || scale[k] * (double)d > (double)((int64_t)1 << 30))
                fail(I, "scale %g along axis %lld", scale[k], (long long)axes[k]);
            size[k] = (int64_t)(scale[k] * (double)d);
            if (old && h.mode == 0 && scale[k] < 1)
                fail(I, "nearest downsampling before opset 11 (scale %g)", scale[k]);
        }
    }
    if (zv && pol) {
        double s = scale[0];
        for (size_t k = 1; k < na; k++)
            s = pol == 1 ? (scale[k] < s ? scale[k] : s) : (scale[k] > s ? scale[k] : s);
        for (size_t k = 0; k < na; k++) {
            scale[k] = s;
            size[k] = (int64_t)(s * (double)x->ty.dims[axes[k]] + 0.5);
        }
    }
    cfx_type t = x->ty;
    for (size_t k = 0; k < na; k++)
        t.dims[axes[k]] = size[k];
    check_shape(I, out_name(I, n, 0), t.rank, t.dims, 0);
    if (count(&t) == 0)
        fail(I, "the result %s has no elements", tystr(I, &t));
    ival *v = x;
    for (size_t k = 0; k < na; k++) {
        int64_t d = axes[k];
        const double *kr = h.ctm == 4 ? (double[]){roi[k], roi[na + k]} : NULL;
        if (fabs(scale[k] - 1) <= 1e-9 && size[k] == x->ty.dims[d] && (!kr || (fabs(kr[0]) <= 1e-9 && fabs(kr[1] - 1) <= 1e-9)))
            continue;
        v = resize_axis(I, n, v, (int)d, size[k], scale[k], kr, &h);
    }
    bind(I, out_name(I, n, 0), &t, v == x ? x->id : ref(I, v), v->data);
}

/* Lines reflecting the positions in variable f (real) into [lo, hi] as ONNX's GridSample does
 * (reflected by the near border until inside); the variable that holds the result. */
static const char *gs_reflect(imp *I, const char *f, double lo, double hi, const cfx_type *t, const char *nm)
{
    const char *out = new_id(I, "r_", nm);
    if (hi <= lo) { /* one position: every one reflects to it */
        line(I, "%s = %s", out, zeros_of(I, t));
        return out;
    }
    const char *L = real_lit(I, lo), *H = real_lit(I, hi), *R = real_lit(I, hi - lo);
    const char *db = new_id(I, "d_", nm), *nb = new_id(I, "n_", nm), *da = new_id(I, "d_", nm),
               *na = new_id(I, "n_", nm);
    line(I, "%s = %s - %s", db, L, f);
    line(I, "%s = floor(%s / %s)", nb, db, R);
    line(I, "%s = %s - %s * %s", db, db, nb, R);
    line(I, "%s = %s - %s", da, f, H);
    line(I, "%s = floor(%s / %s)", na, da, R);
    line(I, "%s = %s - %s * %s", da, da, na, R);
    line(I, "%s = where(%s < %s, where(%s %% 2.0 == 0.0, %s + %s, %s - %s), where(%s > %s, where(%s %% 2.0 "
            "== 0.0, %s - %s, %s + %s), %s))",
         out, f, L, nb, L, db, H, db, f, H, na, H, da, L, da, f);
    return out;
}

/* GridSample of [N, C, D1 .. Dk] (k 1 to 3) at the positions of a grid [N, O1 .. Ok, k] of run
 * time, as ONNX's reference computes it (onnx/reference/ops/op_grid_sample.py): each axis's
 * position denormalized (align_corners), rounded for nearest, moved inside by padding_mode
 * (border: clamped; reflection: reflected), then its taps (1 nearest, 2 linear, 4 cubic with
 * Keys' a = -0.75), each tap an index clamped into the axis and a weight (0 outside the axis for
 * padding zeros, as the reference's pixel of 0). One loop over the output positions reads, for
 * each combination of the axes' taps, the channels' row at its index; the rows are then weighted
 * and summed. */
static void op_grid_sample(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *gr = in(I, n, 1);
    int r = x->ty.rank, k = r - 2;
    if (k < 1 || k > 3)
        fail(I, "the input is %s; ranks 3 to 5 are taken", tystr(I, &x->ty));
    if (!is_real(x->ty.dtype) || !is_real(gr->ty.dtype))
        fail(I, "the input is %s and the grid %s; both must be float or double", tystr(I, &x->ty), tystr(I, &gr->ty));
    if (gr->ty.rank != r || gr->ty.dims[0] != x->ty.dims[0] || gr->ty.dims[r - 1] != k)
        fail(I, "the grid is %s for the input %s; it must be [N, out..., %d]", tystr(I, &gr->ty), tystr(I, &x->ty), k);
    const char *mode = attr_str(I, n, "mode", I->opset < 20 ? "bilinear" : "linear");
    const char *pad = attr_str(I, n, "padding_mode", "zeros");
    int align = attr_int(I, n, "align_corners", 0) != 0;
    int how = !strcmp(mode, "nearest") ? 0 : !strcmp(mode, "linear") || !strcmp(mode, "bilinear") ? 1
              : !strcmp(mode, "cubic") || !strcmp(mode, "bicubic") ? 2 : -1;
    if (how < 0)
        fail(I, "mode '%s' is not supported (nearest, linear, cubic are)", clean(I, mode));
    if (how == 2 && k != 2)
        fail(I, "mode cubic of a %d-D input: ONNX defines it for 4-D inputs", r);
    int pm = !strcmp(pad, "zeros") ? 0 : !strcmp(pad, "border") ? 1 : !strcmp(pad, "reflection") ? 2 : -1;
    if (pm < 0)
        fail(I, "padding_mode '%s' is not supported (zeros, border, reflection are)", clean(I, pad));
    int64_t N = x->ty.dims[0], C = x->ty.dims[1], P = 1, S = 1;
    for (int d = 0; d < k; d++) {
        P *= gr->ty.dims[1 + d];
        S *= x->ty.dims[2 + d];
    }
    cfx_type t = x->ty; /* [N, C, O...] */
    for (int d = 0; d < k; d++)
        t.dims[2 + d] = gr->ty.dims[1 + d];
    if (count(&t) == 0 || count(&x->ty) == 0)
        fail(I, "no elements: the input %s, the grid %s", tystr(I, &x->ty), tystr(I, &gr->ty));
    const char *nm = out_name(I, n, 0), *src = ref(I, x), *gs = ref(I, gr);
    cfx_type pt = mktype(gr->ty.dtype, 2, (int64_t[]){N, P}); /* positions, weights */
    cfx_type gt = mktype(x->ty.dtype, 3, (int64_t[]){N, C, P}); /* a tap's values */
    cfx_type flat = mktype(x->ty.dtype, 3, (int64_t[]){N, C, S});
    const char *xf = new_id(I, "x_", nm);
    line(I, "%s = %s", xf, reshaped(I, src, &x->ty, &flat));
    const char *idx[3][4], *wt[3][4]; /* each axis's taps: index variable, weight (NULL: 1) */
    int taps = how == 0 ? 1 : how == 1 ? 2 : 4;
    for (int a = 0; a < k; a++) {
        int64_t len = x->ty.dims[2 + a];
        double lo = align ? 0.0 : -0.5, hi = align ? (double)(len - 1) : (double)len - 0.5;
        const char *L1 = real_lit(I, (double)(len - 1));
        const char *f = new_id(I, "f_", nm);
        cfx_type ct = gr->ty; /* the grid's component: [N, O...] */
        ct.rank = r - 1;
        const char *c = reshaped(I, fmt(I, "%s%s", gs, subscript(I, r, r - 1, fmt(I, "%d", k - 1 - a))), &ct, &pt);
        if (align)
            line(I, "%s = (%s + 1.0) / 2.0 * %s", f, c, L1);
        else
            line(I, "%s = ((%s + 1.0) * %s - 1.0) / 2.0", f, c, real_lit(I, (double)len));
        if (how == 0)
            line(I, "%s = round(%s)", f, f);
        if (pm == 1) {
            const char *fc = fmt(I, "min(max(%s, 0.0), %s)", f, L1);
            line(I, "%s = where(%s < %s, %s, where(%s > %s, %s, %s))", f, f, real_lit(I, lo), fc, f,
                 real_lit(I, hi), fc, f);
        } else if (pm == 2) {
            f = gs_reflect(I, f, lo, hi, &pt, nm);
        }
        const char *pos[4];
        const char *w[4] = {NULL, NULL, NULL, NULL};
        if (how == 0) {
            pos[0] = f;
        } else {
            const char *f0 = new_id(I, "f0_", nm), *d = new_id(I, "t_", nm);
            line(I, "%s = floor(%s)", f0, f);
            line(I, "%s = %s - %s", d, f, f0);
            if (how == 1) {
                pos[0] = f0;
                pos[1] = fmt(I, "(%s + 1.0)", f0);
                w[0] = fmt(I, "(1.0 - %s)", d);
                w[1] = d;
            } else {
                /* Keys' cubic, a = -0.75, at distances 1 + t, t, 1 - t, 2 - t */
                static const char *const cub[4] = {
                    "((-0.75 * (%s + 1.0) + 3.75) * (%s + 1.0) - 6.0) * (%s + 1.0) + 3.0",
                    "(1.25 * %s - 2.25) * %s * %s + 1.0",
                    "(1.25 * (1.0 - %s) - 2.25) * (1.0 - %s) * (1.0 - %s) + 1.0",
                    "((-0.75 * (2.0 - %s) + 3.75) * (2.0 - %s) - 6.0) * (2.0 - %s) + 3.0"};
                for (int q = 0; q < 4; q++) {
                    pos[q] = q == 1 ? f0 : fmt(I, "(%s %s %d.0)", f0, q == 0 ? "-" : "+", q == 0 ? 1 : q - 1);
                    w[q] = new_id(I, "w_", nm);
                    line(I, "%s = %s", w[q], fmt(I, cub[q], d, d, d));
                }
            }
        }
        for (int q = 0; q < taps; q++) {
            const char *p = pos[q];
            if (pm == 2 && how != 0) {
                const char *pv = new_id(I, "p_", nm);
                line(I, "%s = %s", pv, p);
                p = gs_reflect(I, pv, lo, hi, &pt, nm);
            }
            idx[a][q] = new_id(I, "k_", nm);
            line(I, "%s = cast(min(max(%s, 0.0), %s), i64)", idx[a][q], p, L1);
            if (pm == 0) {
                const char *m = fmt(I, "where(%s < 0.0, 0.0, where(%s > %s, 0.0, 1.0))", p, p, L1);
                w[q] = w[q] ? fmt(I, "%s * %s", w[q], m) : m;
            }
            if (w[q]) {
                wt[a][q] = new_id(I, "w_", nm);
                line(I, "%s = %s", wt[a][q], w[q]);
            } else {
                wt[a][q] = NULL;
            }
        }
    }
    int T = 1;
    for (int a = 0; a < k; a++)
        T *= taps;
    const char *ks[64], *ws[64], *gs_[64];
    for (int c = 0; c < T; c++) { /* the combination c: axis a's tap is digit a of c in base taps */
        strbuf *fi = new_sb(I), *fw = new_sb(I);
        int64_t stride = S;
        for (int a = 0, rest = c; a < k; a++) {
            int q = rest;
            for (int b = a + 1; b < k; b++)
                q /= taps;
            q %= taps;
            stride /= x->ty.dims[2 + a];
            if (stride > 1)
                sb_printf(fi, "%s%s * %lld", a ? " + " : "", idx[a][q], (long long)stride);
            else
                sb_printf(fi, "%s%s", a ? " + " : "", idx[a][q]);
            if (wt[a][q])
                sb_printf(fw, "%s%s", fw->len ? " * " : "", wt[a][q]);
        }
        if (fi->oom || fw->oom)
            fail(I, "out of memory");
        ks[c] = k == 1 ? idx[0][c] : new_id(I, "k_", nm);
        if (k > 1)
            line(I, "%s = %s", ks[c], sb_str(fi));
        ws[c] = NULL;
        if (fw->len) {
            ws[c] = new_id(I, "w_", nm);
            const char *wv = sb_str(fw);
            if (gr->ty.dtype != x->ty.dtype)
                wv = fmt(I, "cast(%s, %s)", wv, cfx_dtype_name(x->ty.dtype));
            line(I, "%s = reshape(%s, [%lld, 1, %lld])", ws[c], wv, (long long)N, (long long)P);
        }
        sb_free(fi);
        sb_free(fw);
        gs_[c] = new_id(I, "g_", nm);
        line(I, "%s = %s", gs_[c], zeros_of(I, &gt));
    }
    const char *b = new_id(I, "b_", nm), *o = new_id(I, "o_", nm);
    line(I, "for %s in range(%lld) {", b, (long long)N);
    I->indent++;
    line(I, "for %s in range(%lld) {", o, (long long)P);
    I->indent++;
    for (int c = 0; c < T; c++)
        line(I, "%s[%s, :, %s] = %s[%s, :, %s[%s, %s]]", gs_[c], b, o, xf, b, ks[c], b, o);
    I->indent--;
    line(I, "}");
    I->indent--;
    line(I, "}");
    strbuf *sum = new_sb(I);
    for (int c = 0; c < T; c++) {
        sb_printf(sum, "%s%s", c ? " + " : "", gs_[c]);
        if (ws[c])
            sb_printf(sum, " * %s", ws[c]);
    }
    if (sum->oom)
        fail(I, "out of memory");
    const char *y = new_id(I, "y_", nm);
    line(I, "%s = %s", y, sb_str(sum));
    sb_free(sum);
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = %s", v, reshaped(I, y, &gt, &t));
}

/* AffineGrid: the grid of positions known at import ([1 + spatial, positions]: x, y(, z), 1 per
 * position, as ONNX's reference lays them out), multiplied by theta, one product, then each
 * position's coordinates moved last. */
static void op_affine_grid(imp *I, const Onnx__NodeProto *n)
{
    ival *th = in(I, n, 0);
    int64_t sz[5];
    int64_t ns = ints_of(I, known(I, n, 1, "the size"), sz, 5, "the size");
    int align = (int)attr_int(I, n, "align_corners", 0);
    if (ns != 4 && ns != 5)
        fail(I, "the size has %lld entries; 4 (2-D) or 5 (3-D) are taken", (long long)ns);
    int sd = (int)ns - 2;
    int64_t N = sz[0], P = 1;
    for (int d = 0; d < sd; d++) {
        if (sz[d + 2] < 1 || sz[d + 2] > ((int64_t)1 << 24) || P * sz[d + 2] > ((int64_t)1 << 24))
            fail(I, "spatial size %lld; grids of at most 2^24 positions are made", (long long)sz[d + 2]);
        P *= sz[d + 2];
    }
    if (!is_real(th->ty.dtype) || th->ty.rank != 3 || th->ty.dims[0] != N || th->ty.dims[1] != sd ||
        th->ty.dims[2] != sd + 1)
        fail(I, "theta is %s for the size [%lld, ...] of %d spatial axes", tystr(I, &th->ty), (long long)N, sd);
    cfx_type bt = mktype(th->ty.dtype, 2, (int64_t[]){sd + 1, P});
    if (count(&bt) > ((int64_t)1 << 24))
        fail(I, "a grid of %lld positions; at most 2^24 / %d are made", (long long)P, sd + 1);
    void *base = new_data(I, &bt);
    for (int64_t p = 0; p < P; p++) {
        int64_t rest = p, idx[3];
        for (int d = sd - 1; d >= 0; d--) {
            idx[d] = rest % sz[d + 2];
            rest /= sz[d + 2];
        }
        /* row k is the coordinate of the (sd - 1 - k)th spatial axis: x (the last axis) first */
        for (int k = 0; k < sd; k++) {
            int d = sd - 1 - k;
            double len = (double)sz[d + 2], c;
            if (align)
                c = len > 1 ? -1.0 + (double)idx[d] * (2.0 / (len - 1)) : -1.0;
            else
                c = -1.0 + 1.0 / len + (double)idx[d] * (2.0 / len);
            setd(bt.dtype, base, (int64_t)k * P + p, c);
        }
        setd(bt.dtype, base, (int64_t)sd * P + p, 1.0);
    }
    const char *nm = out_name(I, n, 0);
    ival bv = {.name = fmt(I, "%s_grid", nm), .ty = bt, .data = base};
    const char *g = new_id(I, "g_", nm);
    line(I, "%s = %s @ %s", g, ref(I, th), ref(I, &bv));
    cfx_type pt = mktype(th->ty.dtype, 3, (int64_t[]){N, P, sd});
    cfx_type ot = mktype(th->ty.dtype, sd + 2, sz); /* [N, (D,) H, W, sd] */
    for (int d = 0; d < sd; d++)
        ot.dims[d + 1] = sz[d + 2];
    ot.dims[sd + 1] = sd;
    const char *v = out_var(I, n, 0, &ot);
    line(I, "%s = %s", v, reshaped(I, fmt(I, "permute(%s, (0, 2, 1))", g), &pt, &ot));
}

/* RoiAlign: each roi's sampling grid (sampling_ratio points a bin along each axis) is separable:
 * along y, each point's two rows and weights (0 outside the map, as ONNX's reference) make a
 * one-hot [points, H] matrix for each tap; avg sums a bin's points into [PH, H] and gives
 * `Wy @ X[b] @ Wx^T / count`; max gathers each tap's values with the one-hot matrices and takes
 * the largest weighted tap, then the largest point of each bin. A loop over the rois (their batch
 * index of run time, out of range stops with `index`). */
static void op_roi_align(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *ro = in(I, n, 1), *bi = in(I, n, 2);
    cfx_dtype dt = x->ty.dtype;
    if (!is_real(dt) || x->ty.rank != 4 || ro->ty.rank != 2 || ro->ty.dims[1] != 4 || ro->ty.dtype != dt ||
        bi->ty.rank != 1 || bi->ty.dims[0] != ro->ty.dims[0] || (bi->ty.dtype != CFX_I64 && bi->ty.dtype != CFX_I32))
        fail(I, "X %s, rois %s and batch_indices %s; reals [N, C, H, W], [R, 4] and integers [R] are taken",
             tystr(I, &x->ty), tystr(I, &ro->ty), tystr(I, &bi->ty));
    const char *mode = attr_str(I, n, "mode", "avg");
    const char *ctm = attr_str(I, n, "coordinate_transformation_mode", I->opset >= 16 ? "half_pixel" : "output_half_pixel");
    int avg = !strcmp(mode, "avg"), hp = !strcmp(ctm, "half_pixel");
    if (!avg && strcmp(mode, "max"))
        fail(I, "mode '%s' is not supported (avg, max)", mode);
    if (!hp && strcmp(ctm, "output_half_pixel"))
        fail(I, "coordinate_transformation_mode '%s' is not supported (half_pixel, output_half_pixel)", ctm);
    int64_t PH = attr_int(I, n, "output_height", 1), PW = attr_int(I, n, "output_width", 1);
    int64_t g = attr_int(I, n, "sampling_ratio", 0);
    double scale = attr_float(I, n, "spatial_scale", 1.0);
    if (g < 1 || g > 64)
        fail(I, "sampling_ratio %lld: 1 to 64 are taken (0 makes each roi's grid from its size, of run time)",
             (long long)g);
    if (PH < 1 || PW < 1 || PH * g > 4096 || PW * g > 4096)
        fail(I, "output_height %lld and output_width %lld of %lld samples a bin; at most 4096 samples an axis",
             (long long)PH, (long long)PW, (long long)g);
    int64_t R = ro->ty.dims[0], C = x->ty.dims[1], H = x->ty.dims[2], W = x->ty.dims[3];
    const char *nm = out_name(I, n, 0), *dn = cfx_dtype_name(dt);
    const char *r = new_id(I, "r_", nm), *xb = new_id(I, "xb_", nm);
    const char *ss = real_const(I, scale, dt, fmt(I, "%s_scale", nm)), *off = hp ? " - 0.5" : "";
    cfx_type t = mktype(dt, 4, (int64_t[]){R, C, PH, PW});
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = %s", v, zeros_of(I, &t));
    line(I, "for %s in range(%lld) {", r, (long long)R);
    I->indent++;
    line(I, "%s = %s[%s[%s]]", xb, ref(I, x), ref(I, bi), r);
    const char *mat[2][2], *wt[2][2]; /* [axis y, x][tap low, high]: one-hot matrix, weights */
    for (int a = 0; a < 2; a++) { /* a = 0: y (rows, roi columns 1 and 3), 1: x */
        int64_t P = a ? PW : PH, L = a ? W : H, G = P * g;
        const char *ax = a ? "x" : "y";
        const char *st = new_id(I, fmt(I, "%s0_", ax), nm), *bs = new_id(I, fmt(I, "b%s_", ax), nm);
        const char *pos = new_id(I, fmt(I, "%s_", ax), nm), *out = new_id(I, fmt(I, "out%s_", ax), nm);
        const char *lo = new_id(I, fmt(I, "%slo_", ax), nm), *edge = new_id(I, fmt(I, "edge%s_", ax), nm);
        const char *lw = new_id(I, fmt(I, "l%s_", ax), nm);
        line(I, "%s = %s[%s, %d] * %s%s", st, ref(I, ro), r, 1 - a, ss, off);
        line(I, hp ? "%s = (%s[%s, %d] * %s%s - %s) / %lld" : "%s = max(%s[%s, %d] * %s%s - %s, 1.0) / %lld", bs,
             ref(I, ro), r, 3 - a, ss, off, st, (long long)P);
        /* the points: st + p * bs + (i + 0.5) * bs / g for bin p and point i */
        cfx_type pt = mktype(dt, 1, &G);
        void *pd = new_data(I, &pt), *id = new_data(I, &pt);
        for (int64_t k = 0; k < G; k++) {
            setd(dt, pd, k, (double)(k / g));
            setd(dt, id, k, (double)(k % g) + 0.5);
        }
        ival pv = {.name = fmt(I, "%s_bins%s", nm, ax), .ty = pt, .data = pd};
        ival iv = {.name = fmt(I, "%s_points%s", nm, ax), .ty = pt, .data = id};
        line(I, "%s = %s + %s * %s + %s * %s / %lld", pos, st, ref(I, &pv), bs, ref(I, &iv), bs, (long long)g);
        line(I, "%s = (%s < -1.0) or (%s > %lld)", out, pos, pos, (long long)L);
        line(I, "%s = max(%s, 0.0)", pos, pos);
        line(I, "%s = cast(%s, i32)", lo, pos);
        line(I, "%s = %s >= %lld", edge, lo, (long long)(L - 1));
        line(I, "%s = where(%s, %lld, %s)", lo, edge, (long long)(L - 1), lo);
        line(I, "%s = where(%s, cast(%s, %s), %s) - cast(%s, %s)", lw, edge, lo, dn, pos, lo, dn);
        const char *hi = fmt(I, "where(%s, %s, %s + 1)", edge, lo, lo);
        const char *io = fmt(I, "iota(i32[1, %lld])", (long long)L);
        for (int h = 0; h < 2; h++) {
            mat[a][h] = new_id(I, fmt(I, "s%s%s_", ax, h ? "hi" : "lo"), nm);
            wt[a][h] = new_id(I, fmt(I, "w%s%s_", ax, h ? "hi" : "lo"), nm);
            line(I, "%s = cast(%s == reshape(where(%s, 0, %s), [%lld, 1]), %s)", mat[a][h], io, out, h ? hi : lo,
                 (long long)G, dn);
            line(I, "%s = where(%s, 0.0, %s)", wt[a][h], out, h ? lw : fmt(I, "1.0 - %s", lw));
        }
        if (avg) { /* the bins' weights on the rows: [P, L] */
            const char *m = new_id(I, fmt(I, "m%s_", ax), nm);
            line(I, "%s = sum(reshape(%s * reshape(%s, [%lld, 1]) + %s * reshape(%s, [%lld, 1]), [%lld, %lld, %lld]), "
                 "axis=1)", m, mat[a][0], wt[a][0], (long long)G, mat[a][1], wt[a][1], (long long)G, (long long)P,
                 (long long)g, (long long)L);
            mat[a][0] = m;
        }
    }
    if (avg) {
        line(I, "%s[%s] = (%s @ %s) @ transpose(%s) / %lld", v, r, mat[0][0], xb, mat[1][0], (long long)(g * g));
    } else {
        const char *best = NULL;
        for (int hy = 0; hy < 2; hy++) {
            const char *ay = new_id(I, fmt(I, "a%s_", hy ? "hi" : "lo"), nm);
            line(I, "%s = %s @ %s", ay, mat[0][hy], xb);
            for (int hx = 0; hx < 2; hx++) {
                const char *tap = fmt(I, "reshape(%s, [%lld, 1]) * reshape(%s, [1, %lld]) * (%s @ transpose(%s))",
                                      wt[0][hy], (long long)(PH * g), wt[1][hx], (long long)(PW * g), ay, mat[1][hx]);
                best = best ? fmt(I, "max(%s, %s)", best, tap) : tap;
            }
        }
        const char *val = new_id(I, "val_", nm);
        line(I, "%s = reshape(%s, [%lld, %lld, %lld, %lld, %lld])", val, best, (long long)C, (long long)PH, (long long)g,
             (long long)PW, (long long)g);
        line(I, "%s[%s] = max(max(%s, axis=4), axis=2)", v, r, val);
    }
    I->indent--;
    line(I, "}");
}

/* DeformConv of 2-D images, as ONNX's reference: each kernel offset's sampling positions (the
 * window's place plus the offsets of run time) read X bilinearly with zeros outside (GridSample's
 * align_corners 1), which is separable: a [P, H] matrix of the rows' weights and a [P, W] one of the
 * columns' (a tap outside the image matches no row), `sum((X @ Wx^T) * Wy^T, axis=1)` the samples
 * of every channel of the offset group at the P output positions, times the mask; the samples as
 * the columns of a product with the weights per group, plus the bias. A loop over the batch, the
 * kernel offsets and offset groups unrolled in it. */
static void op_deform_conv(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *w = in(I, n, 1), *of = in(I, n, 2), *bias = in_opt(I, n, 3), *mk = in_opt(I, n, 4);
    cfx_dtype dt = x->ty.dtype;
    if (!is_real(dt) || x->ty.rank != 4 || w->ty.rank != 4 || of->ty.rank != 4 || w->ty.dtype != dt ||
        of->ty.dtype != dt || (bias && (bias->ty.dtype != dt || bias->ty.rank != 1)) ||
        (mk && (mk->ty.dtype != dt || mk->ty.rank != 4)))
        fail(I, "X %s, W %s and offset %s: 2-D deformable convolutions of reals are taken", tystr(I, &x->ty),
             tystr(I, &w->ty), tystr(I, &of->ty));
    int64_t N = x->ty.dims[0], C = x->ty.dims[1], H = x->ty.dims[2], Wd = x->ty.dims[3], OC = w->ty.dims[0];
    int64_t G = attr_int(I, n, "group", 1), OG = attr_int(I, n, "offset_group", 1);
    int64_t ks[2] = {w->ty.dims[2], w->ty.dims[3]}, pads[4] = {0, 0, 0, 0}, st[2] = {1, 1}, dl[2] = {1, 1};
    size_t len;
    const int64_t *a;
    if ((a = attr_ints(I, n, "kernel_shape", &len)) && len == 2)
        ks[0] = a[0], ks[1] = a[1];
    if ((a = attr_ints(I, n, "pads", &len)) && len == 4)
        memcpy(pads, a, sizeof pads);
    if ((a = attr_ints(I, n, "strides", &len)) && len == 2)
        st[0] = a[0], st[1] = a[1];
    if ((a = attr_ints(I, n, "dilations", &len)) && len == 2)
        dl[0] = a[0], dl[1] = a[1];
    int64_t K = ks[0] * ks[1], OH = of->ty.dims[2], OW = of->ty.dims[3], P = OH * OW;
    if (G < 1 || OG < 1 || C % G || OC % G || C % OG || w->ty.dims[1] * G != C || ks[0] != w->ty.dims[2] ||
        ks[1] != w->ty.dims[3] || of->ty.dims[0] != N || of->ty.dims[1] != OG * K * 2 || st[0] < 1 || st[1] < 1 ||
        dl[0] < 1 || dl[1] < 1)
        fail(I, "X %s, W %s, offset %s with group %lld and offset_group %lld do not fit", tystr(I, &x->ty),
             tystr(I, &w->ty), tystr(I, &of->ty), (long long)G, (long long)OG);
    if (OH != (H + pads[0] + pads[2] - (ks[0] - 1) * dl[0] - 1) / st[0] + 1 ||
        OW != (Wd + pads[1] + pads[3] - (ks[1] - 1) * dl[1] - 1) / st[1] + 1)
        fail(I, "the offset %s does not give the output's size for these pads, strides and dilations",
             tystr(I, &of->ty));
    if ((mk && (mk->ty.dims[0] != N || mk->ty.dims[1] != OG * K || mk->ty.dims[2] != OH || mk->ty.dims[3] != OW)) ||
        (bias && bias->ty.dims[0] != OC))
        fail(I, "the mask or bias does not fit the offset %s and %lld output channels", tystr(I, &of->ty),
             (long long)OC);
    if (K * OG > 256)
        fail(I, "%lld kernel offsets in %lld offset groups; at most 256 in all are taken", (long long)K, (long long)OG);
    const char *nm = out_name(I, n, 0), *dn = cfx_dtype_name(dt);
    int64_t CG = C / OG, ICG = C / G, OCG = OC / G;
    const char *b = new_id(I, "b_", nm), *cols = new_id(I, "cols_", nm), *xb = new_id(I, "xb_", nm);
    const char *py = new_id(I, "py_", nm), *px = new_id(I, "px_", nm), *sy = new_id(I, "sy_", nm);
    const char *sx = new_id(I, "sx_", nm), *fy = new_id(I, "fy_", nm), *fx = new_id(I, "fx_", nm);
    const char *ofs = ref(I, of), *ws = ref(I, w);
    cfx_type yt = mktype(dt, 3, (int64_t[]){N, OC, P}), t = mktype(dt, 4, (int64_t[]){N, OC, OH, OW});
    cfx_type ct = mktype(dt, 3, (int64_t[]){C, K, P});
    const char *y = new_id(I, "y_", nm);
    line(I, "%s = %s", y, zeros_of(I, &yt));
    line(I, "for %s in range(%lld) {", b, (long long)N);
    I->indent++;
    line(I, "%s = %s[%s]", xb, ref(I, x), b);
    line(I, "%s = %s", cols, zeros_of(I, &ct));
    for (int64_t k = 0; k < K; k++) {
        /* the window's place of each output position along y and x, known at import */
        cfx_type pt = mktype(dt, 1, &P);
        void *by = new_data(I, &pt), *bx = new_data(I, &pt);
        for (int64_t p = 0; p < P; p++) {
            setd(dt, by, p, (double)(-pads[0] + st[0] * (p / OW) + (k / ks[1]) * dl[0]));
            setd(dt, bx, p, (double)(-pads[1] + st[1] * (p % OW) + (k % ks[1]) * dl[1]));
        }
        ival byv = {.name = fmt(I, "%s_y%lld", nm, (long long)k), .ty = pt, .data = by};
        ival bxv = {.name = fmt(I, "%s_x%lld", nm, (long long)k), .ty = pt, .data = bx};
        for (int64_t og = 0; og < OG; og++) {
            int64_t ch = (og * K + k) * 2;
            line(I, "%s = %s + reshape(%s[%s, %lld], [%lld])", py, ref(I, &byv), ofs, b, (long long)ch, (long long)P);
            line(I, "%s = %s + reshape(%s[%s, %lld], [%lld])", px, ref(I, &bxv), ofs, b, (long long)ch + 1, (long long)P);
            line(I, "%s = floor(%s)", fy, py);
            line(I, "%s = floor(%s)", fx, px);
            const char *iy = fmt(I, "iota(%s[1, %lld])", dn, (long long)H), *ix = fmt(I, "iota(%s[1, %lld])", dn, (long long)Wd);
            line(I, "%s = where(%s == reshape(%s, [%lld, 1]), reshape(%s + 1.0 - %s, [%lld, 1]), 0.0) + where(%s == "
                 "reshape(%s + 1.0, [%lld, 1]), reshape(%s - %s, [%lld, 1]), 0.0)", sy, iy, fy, (long long)P, fy, py,
                 (long long)P, iy, fy, (long long)P, py, fy, (long long)P);
            line(I, "%s = where(%s == reshape(%s, [%lld, 1]), reshape(%s + 1.0 - %s, [%lld, 1]), 0.0) + where(%s == "
                 "reshape(%s + 1.0, [%lld, 1]), reshape(%s - %s, [%lld, 1]), 0.0)", sx, ix, fx, (long long)P, fx, px,
                 (long long)P, ix, fx, (long long)P, px, fx, (long long)P);
            const char *smp = fmt(I, "sum((%s[%lld:%lld] @ transpose(%s)) * transpose(%s), axis=1)", xb,
                                  (long long)(og * CG), (long long)((og + 1) * CG), sx, sy);
            if (mk)
                smp = fmt(I, "%s * reshape(%s[%s, %lld], [1, %lld])", smp, ref(I, mk), b, (long long)(og * K + k),
                          (long long)P);
            line(I, "%s[%lld:%lld, %lld] = %s", cols, (long long)(og * CG), (long long)((og + 1) * CG), (long long)k,
                 smp);
        }
    }
    for (int64_t g = 0; g < G; g++) {
        cfx_type wg = mktype(dt, 2, (int64_t[]){OCG, ICG * K});
        cfx_type w4 = mktype(dt, 4, (int64_t[]){OCG, ICG, ks[0], ks[1]}), c3 = mktype(dt, 3, (int64_t[]){ICG, K, P});
        cfx_type c2 = mktype(dt, 2, (int64_t[]){ICG * K, P});
        const char *wpart = G == 1 ? ws : fmt(I, "%s[%lld:%lld]", ws, (long long)(g * OCG), (long long)((g + 1) * OCG));
        const char *cpart = G == 1 ? cols : fmt(I, "%s[%lld:%lld]", cols, (long long)(g * ICG), (long long)((g + 1) * ICG));
        line(I, "%s[%s, %lld:%lld] = %s @ %s", y, b, (long long)(g * OCG), (long long)((g + 1) * OCG),
             reshaped(I, wpart, &w4, &wg), reshaped(I, cpart, &c3, &c2));
    }
    I->indent--;
    line(I, "}");
    const char *v = out_var(I, n, 0, &t);
    cfx_type bt = mktype(dt, 3, (int64_t[]){OC, 1, 1});
    line(I, "%s = %s%s", v, reshaped(I, y, &yt, &t),
         bias ? fmt(I, " + %s", reshaped(I, ref(I, bias), &bias->ty, &bt)) : "");
}

/* NonMaxSuppression, as ONNX's reference: for each batch and class, the boxes above
 * score_threshold taken by decreasing score (the lower index first among equal scores), each kept
 * where its IoU with every box kept before in the class is at most iou_threshold, up to
 * max_output_boxes_per_class; [batch, class, box] of each kept box, in that order. The count is the
 * model's declared one: a while loop per class picks the best box left, compares it with all the
 * boxes at once (the kept ones masked), and writes the next row; the run checks the count. */
static void op_nms(imp *I, const Onnx__NodeProto *n)
{
    ival *bx = in(I, n, 0), *sc = in(I, n, 1), *mo = in_opt(I, n, 2), *it = in_opt(I, n, 3), *st = in_opt(I, n, 4);
    cfx_dtype dt = bx->ty.dtype;
    if (!is_real(dt) || bx->ty.rank != 3 || bx->ty.dims[2] != 4 || sc->ty.rank != 3 || sc->ty.dtype != dt ||
        sc->ty.dims[0] != bx->ty.dims[0] || sc->ty.dims[2] != bx->ty.dims[1])
        fail(I, "boxes %s and scores %s; reals [batch, boxes, 4] and [batch, classes, boxes] are taken",
             tystr(I, &bx->ty), tystr(I, &sc->ty));
    if ((mo && (mo->ty.dtype != CFX_I64 || count(&mo->ty) != 1)) || (it && (it->ty.dtype != dt || count(&it->ty) != 1)) ||
        (st && (st->ty.dtype != dt || count(&st->ty) != 1)))
        fail(I, "max_output_boxes_per_class, iou_threshold and score_threshold are one int64 and one value of the "
             "boxes' type each");
    int64_t cpb = attr_int(I, n, "center_point_box", 0);
    if (cpb != 0 && cpb != 1)
        fail(I, "center_point_box %lld is not 0 or 1", (long long)cpb);
    int64_t B = bx->ty.dims[0], C = sc->ty.dims[1], N = bx->ty.dims[1];
    int64_t D = declared_length(I, n, 0, 2, 0);
    if (!D)
        fail(I, "the count of boxes selected depends on the data, and the model declares no shape for output "
             "'%s' (cfx fixes every shape at import)", clean(I, out_name(I, n, 0)));
    const char *nm = out_name(I, n, 0), *dn = cfx_dtype_name(dt);
    cfx_type one_i = mktype(CFX_I64, 0, NULL), one_r = mktype(dt, 0, NULL);
    const char *mx = mo ? fmt(I, "max(%s, cast(0, i64))", reshaped(I, ref(I, mo), &mo->ty, &one_i)) : "cast(0, i64)";
    const char *thr = it ? reshaped(I, ref(I, it), &it->ty, &one_r) : fmt(I, "cast(0, %s)", dn);
    const char *b = new_id(I, "b_", nm), *c = new_id(I, "c_", nm), *j = new_id(I, "j_", nm), *m = new_id(I, "m_", nm);
    const char *box = new_id(I, "box_", nm), *lo[2], *hi[2], *area = new_id(I, "area_", nm);
    const char *s = new_id(I, "s_", nm), *alive = new_id(I, "alive_", nm), *kept = new_id(I, "kept_", nm);
    const char *k = new_id(I, "k_", nm), *hit = new_id(I, "hit_", nm);
    const char *ext[2] = {new_id(I, "ix_", nm), new_id(I, "iy_", nm)}, *inter = new_id(I, "inter_", nm);
    const char *sup = new_id(I, "sup_", nm), *lim = new_id(I, "limit_", nm), *th = new_id(I, "thr_", nm);
    cfx_type t = mktype(CFX_I64, 2, (int64_t[]){D, 3});
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = %s", v, zeros_of(I, &t));
    line(I, "%s = 0", j);
    line(I, "%s = %s", lim, mx);
    line(I, "%s = %s", th, thr);
    line(I, "for %s in range(%lld) {", b, (long long)B);
    I->indent++;
    line(I, "%s = %s[%s]", box, ref(I, bx), b);
    for (int a = 0; a < 2; a++) { /* x (a = 0) and y: the boxes' extents along it */
        lo[a] = new_id(I, a ? "ylo_" : "xlo_", nm);
        hi[a] = new_id(I, a ? "yhi_" : "xhi_", nm);
        if (cpb == 0) { /* [y1, x1, y2, x2], the corners in either order */
            int p = a ? 0 : 1;
            line(I, "%s = min(%s[:, %d], %s[:, %d])", lo[a], box, p, box, p + 2);
            line(I, "%s = max(%s[:, %d], %s[:, %d])", hi[a], box, p, box, p + 2);
        } else { /* [x_center, y_center, width, height] */
            line(I, "%s = %s[:, %d] - %s[:, %d] / 2", lo[a], box, a, box, a + 2);
            line(I, "%s = %s[:, %d] + %s[:, %d] / 2", hi[a], box, a, box, a + 2);
        }
    }
    line(I, "%s = (%s - %s) * (%s - %s)", area, hi[0], lo[0], hi[1], lo[1]);
    line(I, "for %s in range(%lld) {", c, (long long)C);
    I->indent++;
    line(I, "%s = %s[%s, %s]", s, ref(I, sc), b, c);
    if (st)
        line(I, "%s = %s > %s", alive, s, reshaped(I, ref(I, st), &st->ty, &one_r));
    else
        line(I, "%s = ones(bool[%lld])", alive, (long long)N);
    line(I, "%s = zeros(bool[%lld])", kept, (long long)N);
    line(I, "%s = cast(0, i64)", m);
    line(I, "while %s < %s and any(%s) {", m, lim, alive);
    I->indent++;
    line(I, "%s = %s and (%s == max(where(%s, %s, -inf)))", hit, alive, s, alive, s);
    line(I, "%s = argmax(cast(%s, i32)) if any(%s) else argmax(cast(%s, i32))", k, hit, hit, alive);
    line(I, "%s[%s] = False", alive, k);
    for (int a = 0; a < 2; a++)
        line(I, "%s = min(%s[%s], %s) - max(%s[%s], %s)", ext[a], hi[a], k, hi[a], lo[a], k, lo[a]);
    line(I, "%s = %s * %s", inter, ext[0], ext[1]);
    line(I, "%s = (%s > 0) and (%s > 0) and (%s > 0) and (%s[%s] > 0) and (%s > 0) and (%s[%s] + %s - %s > 0) and "
         "(%s / (%s[%s] + %s - %s) > %s)", sup, ext[0], ext[1], inter, area, k, area, area, k, area, inter, inter,
         area, k, area, inter, th);
    line(I, "if not any(%s and %s) {", sup, kept);
    I->indent++;
    line(I, "%s[%s] = True", kept, k);
    line(I, "%s += 1", m);
    line(I, "%s[%s, 0] = cast(%s, i64)", v, j, b);
    line(I, "%s[%s, 1] = cast(%s, i64)", v, j, c);
    line(I, "%s[%s, 2] = cast(%s, i64)", v, j, k);
    line(I, "%s += 1", j);
    I->indent--;
    line(I, "}");
    I->indent--;
    line(I, "}");
    I->indent--;
    line(I, "}");
    I->indent--;
    line(I, "}");
    line(I, "assert(%s == %lld, \"NonMaxSuppression '%s': another count of boxes is selected than the %lld "
         "declared\")", j, (long long)D, clean(I, nm), (long long)D);
}

/* ---- quantization ---------------------------------------------------------------------------- */

/* A scale or zero point p of x's quantization along axis, as an expression that broadcasts
 * against x, as ONNX's reference reshapes it: one element (per tensor), a vector of x's length
 * along axis (per axis), or with block_size, x's shape but for axis, whose length there is the
 * number of blocks (each element repeated block_size times along it, by a Gather). */
static const char *quant_param(imp *I, const Onnx__NodeProto *n, ival *x, ival *p, int64_t axis, int64_t block,
                               const char *tag)
{
    if (count(&p->ty) == 1) {
        cfx_type s = mktype(p->ty.dtype, 0, NULL);
        return reshaped_val(I, p, &s, tag);
    }
    int r = x->ty.rank, ax = norm_axis(I, axis, r, "axis");
    int64_t len = x->ty.dims[ax], nb = block > 0 ? (len + block - 1) / block : len;
    if (!block) {
        if (p->ty.rank != 1 || p->ty.dims[0] != len)
            fail(I, "'%s' is %s; quantizing %s per axis along axis %d takes one element per index", p->name,
                 tystr(I, &p->ty), tystr(I, &x->ty), ax);
        int64_t dims[CFX_TYPE_MAX_RANK];
        for (int d = 0; d < r; d++)
            dims[d] = d == ax ? len : 1;
        cfx_type s = mktype(p->ty.dtype, r, dims);
        return reshaped_val(I, p, &s, tag);
    }
    int ok = p->ty.rank == r;
    for (int d = 0; ok && d < r; d++)
        ok = p->ty.dims[d] == (d == ax ? nb : x->ty.dims[d]);
    if (block < 0 || !ok)
        fail(I, "'%s' is %s; blocks of %lld along axis %d of %s take %lld there and x's other dimensions",
             p->name, tystr(I, &p->ty), (long long)block, ax, tystr(I, &x->ty), (long long)nb);
    cfx_type it = mktype(CFX_I64, 1, &len);
    int64_t *ix = new_data(I, &it);
    for (int64_t i = 0; i < len; i++)
        ix[i] = i / block;
    ival *iv = bind(I, fmt(I, "%s#%s_idx", out_name(I, n, 0), tag), &it, NULL, ix);
    Onnx__AttributeProto a = {0};
    a.name = "axis";
    a.has_i = 1;
    a.i = ax;
    ival *ins[2] = {p, iv};
    return ref(I, step(I, n, tag, op_gather, ins, 2, &a));
}

/* The narrow type an attribute names (output_dtype), or def where it is absent or 0 */
static int attr_narrow(imp *I, const Onnx__NodeProto *n, const char *name, int def, cfx_dtype *dt)
{
    int64_t t = attr_int(I, n, name, 0);
    int h = def;
    if (t)
        *dt = dtype_of(I, (int32_t)t, name, &h);
    return h;
}

/* QuantizeLinear: round(x / scale) (halves to even) plus the zero point, saturated to the type
 * of the zero point (or output_dtype, uint8 by default); x / scale in x's type, as the reference
 * (a float16 quotient rounded to float16), or the type 'precision' names. To a float8 type:
 * x / scale cast as Cast casts it, with the attribute saturate (the zero point, which ONNX says
 * is 0, left out as the reference leaves it); to float4e2m1: x / scale plus the zero point, cast
 * (saturated), as the reference. */
static void op_quantize_linear(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *s = in(I, n, 1), *zp = in_opt(I, n, 2);
    if (!is_real(x->ty.dtype) || !is_real(s->ty.dtype))
        fail(I, "x is %s and the scale %s; QuantizeLinear takes real ones", tystr(I, &x->ty), tystr(I, &s->ty));
    cfx_dtype odt = CFX_I32;
    int to = attr_narrow(I, n, "output_dtype", zp ? zp->half : HALF_U8, &odt);
    if (zp && to != zp->half)
        fail(I, "'output_dtype' is %s and the zero point '%s' %s: they must agree", half_types[to], zp->name,
             type_name(zp));
    int fq = minifloat(to) && to != HALF_F8E8M0; /* to a float8 type or float4e2m1 */
    if (!(fq || (to >= HALF_I8 && to <= HALF_U16) || to >= HALF_I4) || (zp && zp->ty.dtype != (fq ? CFX_F32 : CFX_I32)))
        fail(I, "the result would be %s; cfx quantizes to int8, uint8, int16, uint16, int4, uint4, int2, uint2, "
             "the float8 types and float4e2m1", zp ? type_name(zp) : to ? half_types[to] : cfx_dtype_name(odt));
    /* numpy's x / scale: in f64 where either is, in a half type where both are */
    cfx_dtype cdt = x->ty.dtype == CFX_F64 || s->ty.dtype == CFX_F64 ? CFX_F64 : CFX_F32;
    int ch = x->half == s->half ? x->half : HALF_NONE;
    if (attr_int(I, n, "precision", 0)) {
        cdt = dtype_of(I, (int32_t)attr_int(I, n, "precision", 0), "precision", &ch);
        if (!is_real(cdt))
            fail(I, "'precision' is %s; it must be a real type", ch ? half_types[ch] : cfx_dtype_name(cdt));
    }
    int64_t axis = attr_int(I, n, "axis", 1), block = attr_int(I, n, "block_size", 0);
    const char *xe = ref(I, x), *se = quant_param(I, n, x, s, axis, block, "scale");
    if (x->ty.dtype != cdt)
        xe = fmt(I, "cast(%s, %s)", xe, cfx_dtype_name(cdt));
    if (s->ty.dtype != cdt)
        se = fmt(I, "cast(%s, %s)", se, cfx_dtype_name(cdt));
    if (fq) {
        const char *f = half_rounded(I, ch, fmt(I, "%s / %s", xe, se));
        if (zp && to == HALF_F4E2M1)
            f = fmt(I, "%s + cast(%s, %s)", f, quant_param(I, n, x, zp, axis, block, "zero_point"), cfx_dtype_name(cdt));
        f = minifloat_cast_expr(I, out_name(I, n, 0), to, attr_int(I, n, "saturate", 1) != 0, 0, f);
        cfx_type ft = x->ty;
        ft.dtype = CFX_F32;
        line(I, "%s = %s", out_var(I, n, 0, &ft), cdt == CFX_F32 ? f : fmt(I, "cast(%s, f32)", f));
        I->node_half = to;
        I->node_rounded = 1;
        return;
    }
    const char *q = fmt(I, "round(%s)", half_rounded(I, ch, fmt(I, "%s / %s", xe, se)));
    if (zp)
        q = fmt(I, "%s + cast(%s, %s)", q, quant_param(I, n, x, zp, axis, block, "zero_point"), cfx_dtype_name(cdt));
    int64_t m = narrow_modulus(to), lo = narrow_signed(to) ? -m / 2 : 0, hi = lo + m - 1;
    cfx_type t = x->ty;
    t.dtype = CFX_I32;
    const char *v = out_var(I, n, 0, &t);
    /* saturated before the cast: a quotient past i32's range still gives the type's end */
    line(I, "%s = cast(min(max(%s, %lld), %lld), i32)", v, q, (long long)lo, (long long)hi);
    I->node_half = to;
    I->node_rounded = 1;
}

/* DequantizeLinear: (x - zero point) * scale, the difference in f32 as the reference computes
 * it, the product in the scale's type (f64 for a double scale), then in output_dtype's. A float8
 * or float4e2m1 x (held in f32) times the scale, its zero point left out as the reference leaves
 * it (ONNX says it is 0; a float8 one known and not 0 is refused, as the reference refuses it). */
static void op_dequantize_linear(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *s = in(I, n, 1), *zp = in_opt(I, n, 2);
    int fx = minifloat(x->half) && x->half != HALF_F8E8M0;
    if ((x->ty.dtype != CFX_I32 || x->half == HALF_U32) && !fx)
        fail(I, "x is %s; cfx dequantizes int8, uint8, int16, uint16, int32, int4, uint4, int2, uint2, the float8 "
             "types and float4e2m1", type_name(x));
    if (!is_real(s->ty.dtype))
        fail(I, "the scale is %s; DequantizeLinear takes a real one", tystr(I, &s->ty));
    if (zp && (zp->ty.dtype != x->ty.dtype || zp->half != x->half))
        fail(I, "x is %s and its zero point '%s' %s: they must be of one type", type_name(x), zp->name,
             type_name(zp));
    for (int64_t i = 0; fx && zp && zp->data && x->half != HALF_F4E2M1 && i < count(&zp->ty); i++)
        if (getd(zp, i) != 0)
            fail(I, "the zero point '%s' of a %s x is not 0", zp->name, type_name(x));
    if (fx)
        zp = NULL;
    cfx_dtype odt = s->ty.dtype;
    int oh = attr_narrow(I, n, "output_dtype", s->half, &odt);
    if (!is_real(odt))
        fail(I, "'output_dtype' is %s; it must be a real type", oh ? half_types[oh] : cfx_dtype_name(odt));
    int64_t axis = attr_int(I, n, "axis", 1), block = attr_int(I, n, "block_size", 0);
    const char *dx = fx ? ref(I, x) : fmt(I, "cast(%s, f32)", ref(I, x));
    if (zp)
        dx = fmt(I, "%s - cast(%s, f32)", dx, quant_param(I, n, x, zp, axis, block, "zero_point"));
    const char *se = quant_param(I, n, x, s, axis, block, "scale");
    cfx_dtype cdt = s->ty.dtype == CFX_F64 ? CFX_F64 : CFX_F32;
    const char *y = cdt == CFX_F64 ? fmt(I, "cast(%s, f64) * %s", dx, se) : fmt(I, "(%s) * %s", dx, se);
    if (odt != cdt)
        y = fmt(I, "cast(%s, %s)", y, cfx_dtype_name(odt));
    cfx_type t = x->ty;
    t.dtype = odt;
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = %s", v, y);
    I->node_half = oh; /* a float16 result computed in f32 and rounded once, as the reference */
}

/* DynamicQuantizeLinear: uint8 with the scale and zero point of x's range widened to hold 0,
 * each step as ONNX's reference computes it in f32. */
static void op_dynamic_quantize_linear(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    if (x->ty.dtype != CFX_F32 || x->half)
        fail(I, "x is %s; DynamicQuantizeLinear takes float", x->half ? half_types[x->half] : tystr(I, &x->ty));
    const char *xe = ref(I, x), *nm = out_name(I, n, 0);
    const char *mx = new_id(I, "t_", fmt(I, "%s#max", nm)), *mn = new_id(I, "t_", fmt(I, "%s#min", nm));
    line(I, "%s = max(max(%s), 0.0)", mx, xe);
    line(I, "%s = min(min(%s), 0.0)", mn, xe);
    cfx_type st = mktype(CFX_F32, 0, NULL), zt = mktype(CFX_I32, 0, NULL), yt = x->ty;
    yt.dtype = CFX_I32;
    const char *sc = out_var(I, n, 1, &st);
    line(I, "%s = (1.0 if %s == %s else %s - %s) / 255.0", sc, mx, mn, mx, mn);
    const char *zr = new_id(I, "t_", fmt(I, "%s#zero_point", nm));
    line(I, "%s = round(min(max(0.0 - %s / %s, 0.0), 255.0))", zr, mn, sc);
    const char *y = out_var(I, n, 0, &yt);
    line(I, "%s = cast(min(max(round(%s / %s) + %s, 0.0), 255.0), i32)", y, xe, sc, zr);
    const char *z = out_var(I, n, 2, &zt);
    line(I, "%s = cast(%s, i32)", z, zr);
    lookup(I, out_name(I, n, 0))->half = HALF_U8;
    lookup(I, out_name(I, n, 2))->half = HALF_U8;
}

/* A zero point or scale of a matrix product's left operand a ([..., M, K]): one element, or one
 * per row (shape [M], made [M, 1]); of its right one, one element or one per column ([N]). */
static const char *row_param(imp *I, ival *a, ival *p, int left, const char *tag)
{
    if (count(&p->ty) == 1) {
        cfx_type s = mktype(p->ty.dtype, 0, NULL);
        return reshaped_val(I, p, &s, tag);
    }
    int r = a->ty.rank;
    int64_t len = r < 1 ? 0 : left && r >= 2 ? a->ty.dims[r - 2] : a->ty.dims[r - 1];
    if (p->ty.rank != 1 || p->ty.dims[0] != len)
        fail(I, "'%s' is %s; it must hold one element or one per %s of %s", p->name, tystr(I, &p->ty),
             left ? "row" : "column", tystr(I, &a->ty));
    if (!left)
        return ref(I, p);
    cfx_type s = mktype(p->ty.dtype, 2, (int64_t[]){len, 1});
    return reshaped_val(I, p, &s, tag);
}

/* A quantized operand of MatMulInteger or QLinearMatMul less its zero point, in i32 (exact for
 * 8- and 16-bit values) */
static ival *shifted_part(imp *I, const Onnx__NodeProto *n, ival *a, ival *zp, int left, const char *tag)
{
    if (a->ty.dtype != CFX_I32 || (a->half != HALF_I8 && a->half != HALF_U8))
        fail(I, "'%s' is %s; cfx multiplies int8 and uint8 here", a->name, type_name(a));
    if (zp && zp->half != a->half)
        fail(I, "'%s' is %s and its zero point '%s' %s: they must be of one type", a->name, type_name(a), zp->name,
             type_name(zp));
    if (!zp)
        return a;
    return part(I, n, tag, &a->ty, HALF_NONE, fmt(I, "%s - %s", ref(I, a), row_param(I, a, zp, left, tag)));
}

/* MatMulInteger: (A - a_zero_point) @ (B - b_zero_point), exact in i32 */
static void op_matmul_integer(imp *I, const Onnx__NodeProto *n)
{
    ival *a = shifted_part(I, n, in(I, n, 0), in_opt(I, n, 2), 1, "a");
    ival *b = shifted_part(I, n, in(I, n, 1), in_opt(I, n, 3), 0, "b");
    product_part(I, n, NULL, a, b, HALF_NONE);
    I->node_half = HALF_NONE;
}

/* QLinearMatMul: the i32 product of the shifted operands times a_scale * b_scale / y_scale (in
 * the scales' type), plus y's zero point, in f64 as the reference computes it (int32 times a real
 * array is float64 in numpy), rounded (halves to even) and saturated to y's type. */
static void op_qlinear_matmul(imp *I, const Onnx__NodeProto *n)
{
    ival *a0 = in(I, n, 0), *as = in(I, n, 1), *b0 = in(I, n, 3), *bs = in(I, n, 4), *ys = in(I, n, 6);
    ival *yzp = in_opt(I, n, 7);
    ival *a = shifted_part(I, n, a0, in_opt(I, n, 2), 1, "a");
    ival *b = shifted_part(I, n, b0, in_opt(I, n, 5), 0, "b");
    if (as->ty.dtype != CFX_F32 || bs->ty.dtype != CFX_F32 || ys->ty.dtype != CFX_F32 || as->half != bs->half ||
        as->half != ys->half)
        fail(I, "the scales are %s, %s and %s; QLinearMatMul takes float, float16 or bfloat16 ones of one type",
             type_name(as), type_name(bs), type_name(ys));
    int to = yzp ? yzp->half : a0->half, h = as->half;
    if (to != HALF_I8 && to != HALF_U8)
        fail(I, "the result would be %s; QLinearMatMul gives int8 or uint8", type_name(yzp));
    if (yzp && count(&yzp->ty) != 1)
        fail(I, "y's zero point '%s' is %s; it must hold one element", yzp->name, tystr(I, &yzp->ty));
    ival *c = product_part(I, n, "c", a, b, HALF_NONE);
    if (count(&ys->ty) != 1)
        fail(I, "y's scale '%s' is %s; it must hold one element", ys->name, tystr(I, &ys->ty));
    cfx_type one = mktype(CFX_F32, 0, NULL);
    const char *ab = half_rounded(I, h, fmt(I, "%s * %s", row_param(I, a0, as, 1, "a_scale"),
                                            row_param(I, b0, bs, 0, "b_scale")));
    const char *f = half_rounded(I, h, fmt(I, "%s / %s", ab, reshaped_val(I, ys, &one, "y_scale")));
    const char *d = fmt(I, "cast(%s, f64) * cast(%s, f64)", c->id, f);
    if (yzp) {
        cfx_type zt = mktype(CFX_I32, 0, NULL);
        d = fmt(I, "%s + cast(%s, f64)", d, reshaped_val(I, yzp, &zt, "y_zero_point"));
    }
    int64_t m = narrow_modulus(to), lo = narrow_signed(to) ? -m / 2 : 0, hi = lo + m - 1;
    const char *v = out_var(I, n, 0, &c->ty);
    line(I, "%s = cast(min(max(round(%s), %lld.0), %lld.0), i32)", v, d, (long long)lo, (long long)hi);
    I->node_half = to;
    I->node_rounded = 1;
}

/* The importer's Conv of x by w (plus bias b, or none) with n's attributes, as a step of n: its
 * result bound under n's first output name and tag */
static ival *conv_part(imp *I, const Onnx__NodeProto *n, const char *tag, ival *x, ival *w, ival *b)
{
    Onnx__NodeProto s = *n;
    char *names[3], *out = fmt(I, "%s#%s", out_name(I, n, 0), tag);
    ival *ins[3] = {x, w, b};
    for (int k = 0; k < (b ? 3 : 2); k++) {
        names[k] = fmt(I, "%s#%s_in%d", out_name(I, n, 0), tag, k);
        bind(I, names[k], &ins[k]->ty, ins[k]->id, ins[k]->data);
    }
    s.input = names;
    s.n_input = b ? 3 : 2;
    s.output = &out;
    s.n_output = 1;
    op_conv(I, &s);
    return lookup(I, out);
}

/* A quantized operand of ConvInteger or QLinearConv less its zero point (one, or for the weights
 * one per output channel), in f64, where the importer's Conv computes it exactly */
static ival *shifted_f64(imp *I, const Onnx__NodeProto *n, ival *a, ival *zp, const char *tag)
{
    if (a->ty.dtype != CFX_I32 || (a->half != HALF_I8 && a->half != HALF_U8))
        fail(I, "'%s' is %s; cfx convolves int8 and uint8 here", a->name, type_name(a));
    if (zp && zp->half != a->half)
        fail(I, "'%s' is %s and its zero point '%s' %s: they must be of one type", a->name, type_name(a), zp->name,
             type_name(zp));
    cfx_type t = a->ty;
    t.dtype = CFX_F64;
    const char *z = NULL;
    if (zp && count(&zp->ty) == 1) {
        cfx_type one = mktype(zp->ty.dtype, 0, NULL);
        z = reshaped_val(I, zp, &one, tag);
    } else if (zp) {
        int64_t dims[CFX_TYPE_MAX_RANK];
        for (int d = 0; d < a->ty.rank; d++)
            dims[d] = d ? 1 : a->ty.dims[0];
        if (zp->ty.rank != 1 || zp->ty.dims[0] != a->ty.dims[0])
            fail(I, "'%s' is %s; it must hold one element or one per output channel", zp->name, tystr(I, &zp->ty));
        cfx_type pc = mktype(zp->ty.dtype, a->ty.rank, dims);
        z = reshaped_val(I, zp, &pc, tag);
    }
    return part(I, n, tag, &t, HALF_NONE, fmt(I, "cast(%s, f64)", z ? fmt(I, "%s - %s", ref(I, a), z) : ref(I, a)));
}

/* ConvInteger: the Conv of (x - x_zero_point) by (w - w_zero_point), in f64 (exact) and then i32 */
static void op_conv_integer(imp *I, const Onnx__NodeProto *n)
{
    ival *x = shifted_f64(I, n, in(I, n, 0), in_opt(I, n, 2), "x");
    ival *w = shifted_f64(I, n, in(I, n, 1), in_opt(I, n, 3), "w");
    ival *c = conv_part(I, n, "conv", x, w, NULL);
    cfx_type t = c->ty;
    t.dtype = CFX_I32;
    line(I, "%s = cast(%s, i32)", out_var(I, n, 0, &t), c->id);
    I->node_half = HALF_NONE;
}

/* QLinearConv: ConvInteger's product plus the int32 bias, times x_scale * w_scale / y_scale (in
 * the scales' type; w_scale one or one per output channel) in f64, plus y's zero point, saturated
 * and rounded halves to even, as ONNX's reference. */
static void op_qlinear_conv(imp *I, const Onnx__NodeProto *n)
{
    ival *x0 = in(I, n, 0), *xs = in(I, n, 1), *w0 = in(I, n, 3), *ws = in(I, n, 4), *ys = in(I, n, 6);
    ival *yzp = in_opt(I, n, 7), *b = in_opt(I, n, 8);
    ival *x = shifted_f64(I, n, x0, in_opt(I, n, 2), "x"), *w = shifted_f64(I, n, w0, in_opt(I, n, 5), "w");
    if (xs->ty.dtype != CFX_F32 || ws->ty.dtype != CFX_F32 || ys->ty.dtype != CFX_F32 || xs->half != ws->half ||
        xs->half != ys->half || count(&xs->ty) != 1 || count(&ys->ty) != 1)
        fail(I, "the scales are %s, %s and %s; QLinearConv takes float ones of one type, x's and y's of one element",
             type_name(xs), type_name(ws), type_name(ys));
    if (b && (b->ty.dtype != CFX_I32 || b->half))
        fail(I, "the bias is %s; QLinearConv takes int32", type_name(b));
    int to = yzp ? yzp->half : x0->half, h = xs->half;
    if ((to != HALF_I8 && to != HALF_U8) || (yzp && count(&yzp->ty) != 1))
        fail(I, "y's zero point '%s' is %s; QLinearConv gives int8 or uint8, one zero point", yzp ? yzp->name : "",
             yzp ? tystr(I, &yzp->ty) : "");
    ival *bf = NULL;
    if (b) {
        cfx_type bt = b->ty;
        bt.dtype = CFX_F64;
        bf = part(I, n, "bias", &bt, HALF_NONE, fmt(I, "cast(%s, f64)", ref(I, b)));
    }
    ival *c = conv_part(I, n, "conv", x, w, bf);
    cfx_type one = mktype(CFX_F32, 0, NULL);
    const char *wse = NULL;
    if (count(&ws->ty) == 1) {
        wse = reshaped_val(I, ws, &one, "w_scale");
    } else {
        int64_t dims[CFX_TYPE_MAX_RANK];
        for (int d = 0; d < c->ty.rank; d++)
            dims[d] = d == 1 ? c->ty.dims[1] : 1;
        if (ws->ty.rank != 1 || c->ty.rank < 2 || ws->ty.dims[0] != c->ty.dims[1])
            fail(I, "w_scale '%s' is %s; it must hold one element or one per output channel", ws->name,
                 tystr(I, &ws->ty));
        cfx_type pc = mktype(CFX_F32, c->ty.rank, dims);
        wse = reshaped_val(I, ws, &pc, "w_scale");
    }
    const char *xw = half_rounded(I, h, fmt(I, "%s * %s", reshaped_val(I, xs, &one, "x_scale"), wse));
    const char *f = half_rounded(I, h, fmt(I, "%s / %s", xw, reshaped_val(I, ys, &one, "y_scale")));
    const char *d = fmt(I, "%s * cast(%s, f64)", c->id, f);
    if (yzp) {
        cfx_type zt = mktype(CFX_I32, 0, NULL);
        d = fmt(I, "%s + cast(%s, f64)", d, reshaped_val(I, yzp, &zt, "y_zero_point"));
    }
    int64_t m = narrow_modulus(to), lo = narrow_signed(to) ? -m / 2 : 0, hi = lo + m - 1;
    cfx_type t = c->ty;
    t.dtype = CFX_I32;
    line(I, "%s = cast(round(min(max(%s, %lld.0), %lld.0)), i32)", out_var(I, n, 0, &t), d, (long long)lo,
         (long long)hi);
    I->node_half = to;
    I->node_rounded = 1;
}

/* ---- opset 23's transformer ops and ai.onnx.preview's FlexAttention -------------------------- */

/* A 3-D input [B, S, heads * d] of Attention as [B, heads, S, d]. */
static ival *heads_of(imp *I, const Onnx__NodeProto *n, const char *tag, ival *x, int64_t heads)
{
    cfx_type t = mktype(x->ty.dtype, 4, (int64_t[]){x->ty.dims[0], x->ty.dims[1], heads, x->ty.dims[2] / heads});
    ival *s = part(I, n, fmt(I, "%s_split", tag), &t, x->half, reshaped(I, ref(I, x), &x->ty, &t));
    return permuted_part(I, n, tag, s, (const int64_t[]){0, 2, 1, 3});
}

/* An [S, T] table made at import: 0 where a query i may attend key j, -inf elsewhere (causal:
 * j <= i + offset; a window: offset + i - left <= j <= offset + i + right, a bound < 0 open),
 * or, with diff, the i64 value i - j (offsets known only at run time). */
static ival *bias_table(imp *I, const Onnx__NodeProto *n, const char *tag, cfx_dtype dt, int64_t S, int64_t T,
                        int64_t offset, int causal, int64_t left, int64_t right, int diff)
{
    cfx_type t = mktype(diff ? CFX_I64 : dt, 2, (int64_t[]){S, T});
    void *data = new_data(I, &t);
    for (int64_t i = 0; i < S; i++)
        for (int64_t j = 0; j < T; j++) {
            int64_t d = i + offset - j;
            int ok = (!causal || d >= 0) && (left < 0 || d <= left) && (right < 0 || -d <= right);
            if (diff)
                seti(t.dtype, data, i * T + j, i - j);
            else
                setd(t.dtype, data, i * T + j, ok ? 0.0 : -INFINITY);
        }
    ival *v = alloc(I, sizeof *v);
    *v = (ival){.name = fmt(I, "%s#%s", out_name(I, n, 0), tag), .ty = t, .data = data};
    return v;
}

/* Grouped-query attention's keys and values ([B, Hkv, T, D] and [B, Hkv, T, Dv]) with each head
 * repeated for its group of Hq / Hkv query heads, in turn: [B, Hq, T, D] and [B, Hq, T, Dv]. */
static void repeat_kv_heads(imp *I, const Onnx__NodeProto *n, int half, int64_t Hq, ival **ks, ival **vs)
{
    const cfx_type *k = &(*ks)->ty, *v = &(*vs)->ty;
    cfx_dtype dt = k->dtype;
    int64_t B = k->dims[0], Hkv = k->dims[1], T = k->dims[2], D = k->dims[3], Dv = v->dims[3], g = Hq / Hkv;
    cfx_type k5 = mktype(dt, 5, (int64_t[]){B, Hkv, 1, T, D}), kr = mktype(dt, 5, (int64_t[]){B, Hkv, g, T, D});
    cfx_type v5 = mktype(dt, 5, (int64_t[]){B, Hkv, 1, T, Dv}), vr = mktype(dt, 5, (int64_t[]){B, Hkv, g, T, Dv});
    cfx_type kq = mktype(dt, 4, (int64_t[]){B, Hq, T, D}), vq = mktype(dt, 4, (int64_t[]){B, Hq, T, Dv});
    const char *kx = fmt(I, "(%s * ones(%s))", reshaped(I, ref(I, *ks), k, &k5), tystr(I, &kr));
    const char *vx = fmt(I, "(%s * ones(%s))", reshaped(I, ref(I, *vs), v, &v5), tystr(I, &vr));
    *ks = part(I, n, "ks_rep", &kq, half, reshaped(I, kx, &kr, &kq));
    *vs = part(I, n, "v_rep", &vq, half, reshaped(I, vx, &vr, &vq));
}

/* RotaryEmbedding (opset 23), as ONNX's reference computes it: the first rotary_embedding_dim
 * values of each head turned by the cos and sin caches (rows picked by position_ids), as halves
 * or as interleaved pairs; the rest passed through. A 4-D input [B, heads, S, D] is turned in
 * place (the caches seen as [B, 1, S, R/2]); a 3-D one [B, S, heads * D] as [B, S, heads, D]. */
static void op_rotary(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *cc = in(I, n, 1), *sc = in(I, n, 2), *pos = in_opt(I, n, 3);
    int r = x->ty.rank, half = x->half;
    if (!is_real(x->ty.dtype) || (r != 3 && r != 4))
        fail(I, "the input is %s; RotaryEmbedding takes a real tensor of rank 3 or 4", tystr(I, &x->ty));
    if (cc->ty.dtype != x->ty.dtype || sc->ty.dtype != x->ty.dtype)
        fail(I, "the caches are %s and %s, for an input %s", tystr(I, &cc->ty), tystr(I, &sc->ty), tystr(I, &x->ty));
    int64_t heads = attr_int(I, n, "num_heads", 0), B = x->ty.dims[0], S, H, D;
    int inter = (int)attr_int(I, n, "interleaved", 0);
    if (r == 4) {
        H = x->ty.dims[1], S = x->ty.dims[2], D = x->ty.dims[3];
        if (heads && heads != H)
            fail(I, "num_heads is %lld for an input of %lld heads", (long long)heads, (long long)H);
    } else {
        if (heads <= 0 || x->ty.dims[2] % heads)
            fail(I, "a 3-D input %s needs num_heads dividing its last dimension (num_heads is %lld)",
                 tystr(I, &x->ty), (long long)heads);
        S = x->ty.dims[1], H = heads, D = x->ty.dims[2] / heads;
    }
    int64_t R = attr_int(I, n, "rotary_embedding_dim", 0);
    if (R == 0)
        R = D;
    if (R < 0 || R > D || R % 2)
        fail(I, "rotary_embedding_dim %lld is not an even number up to the head size %lld", (long long)R, (long long)D);
    int64_t R2 = R / 2;
    ival *c = cc, *s = sc;
    if (pos) {
        if (pos->ty.rank != 2 || pos->ty.dims[0] != B || pos->ty.dims[1] != S || cc->ty.rank != 2)
            fail(I, "position_ids %s and cos_cache %s do not fit an input %s", tystr(I, &pos->ty),
                 tystr(I, &cc->ty), tystr(I, &x->ty));
        ival *cp[2] = {cc, pos}, *sp[2] = {sc, pos};
        c = step(I, n, "cos", op_gather, cp, 2, NULL);
        s = step(I, n, "sin", op_gather, sp, 2, NULL);
    }
    cfx_type ct = mktype(x->ty.dtype, 3, (int64_t[]){B, S, R2});
    if (!same_type(&c->ty, &ct) || !same_type(&s->ty, &ct))
        fail(I, "the caches give %s and %s; the input %s needs %s", tystr(I, &c->ty), tystr(I, &s->ty),
             tystr(I, &x->ty), tystr(I, &ct));
    /* the input as [B, H, S, D] (4-D) or [B, S, H, D] (3-D); the caches broadcast over H */
    cfx_type x4 = r == 4 ? x->ty : mktype(x->ty.dtype, 4, (int64_t[]){B, S, H, D});
    cfx_type c4 = r == 4 ? mktype(x->ty.dtype, 4, (int64_t[]){B, 1, S, R2})
                         : mktype(x->ty.dtype, 4, (int64_t[]){B, S, 1, R2});
    const char *xs = reshaped(I, ref(I, x), &x->ty, &x4);
    const char *cs = reshaped(I, ref(I, c), &c->ty, &c4), *ss = reshaped(I, ref(I, s), &s->ty, &c4);
    const char *nm = out_name(I, n, 0);
    const char *x1, *x2;
    ival *x0 = part(I, n, "x", &x4, half, xs), *xr = x0;
    if (R < D) {
        cfx_type rt = x4;
        rt.dims[3] = R;
        xr = part(I, n, "rot", &rt, half, sub_dims(I, x0->id, 4, 3, 0, R));
    }
    cfx_type pt = mktype(x->ty.dtype, 5, (int64_t[]){x4.dims[0], x4.dims[1], x4.dims[2], R2, 2});
    if (inter) {
        const char *p = new_id(I, "t_", fmt(I, "%s#pairs", nm));
        line(I, "%s = %s", p, reshaped(I, xr->id, &xr->ty, &pt));
        x1 = fmt(I, "%s[:, :, :, :, 0]", p);
        x2 = fmt(I, "%s[:, :, :, :, 1]", p);
    } else {
        x1 = sub_dims(I, xr->id, 4, 3, 0, R2);
        x2 = sub_dims(I, xr->id, 4, 3, R2, R);
    }
#define H_(e) half_rounded(I, half, (e))
    const char *re = new_id(I, "t_", fmt(I, "%s#real", nm)), *im = new_id(I, "t_", fmt(I, "%s#imag", nm));
    line(I, "%s = %s", re, H_(fmt(I, "%s - %s", H_(fmt(I, "%s * %s", cs, x1)), H_(fmt(I, "%s * %s", ss, x2)))));
    line(I, "%s = %s", im, H_(fmt(I, "%s + %s", H_(fmt(I, "%s * %s", ss, x1)), H_(fmt(I, "%s * %s", cs, x2)))));
#undef H_
    const char *rot;
    cfx_type qt = pt;
    qt.dims[4] = 1;
    cfx_type rt = x4;
    rt.dims[3] = R;
    if (inter) {
        cfx_type ht = qt;
        ht.rank = 4;
        rot = fmt(I, "concat((%s, %s), axis=4)", reshaped(I, re, &ht, &qt), reshaped(I, im, &ht, &qt));
        rot = reshaped(I, rot, &pt, &rt);
    } else {
        rot = fmt(I, "concat((%s, %s), axis=3)", re, im);
    }
    if (R < D)
        rot = fmt(I, "concat((%s, %s), axis=3)", rot, sub_dims(I, x0->id, 4, 3, R, D));
    const char *v = out_var(I, n, 0, &x->ty);
    line(I, "%s = %s", v, reshaped(I, rot, &x4, &x->ty));
    I->node_rounded = 1;
}

/* Attention (opsets 23 to 25) as ONNX's reference computes it (onnx/reference/ops/op_attention.py):
 * Q and K each scaled by sqrt(scale), the product, softcap, the bias (attn_mask padded to the
 * keys, causal from the bottom right, the window, the keys past nonpad_kv_seqlen), a softmax
 * that gives 0 to a row whose bias is all -inf, and the product with V; K and V heads repeated
 * for grouped queries; a cache of past keys and values joined in front. Each step of a half
 * type is rounded as the reference computes it in the type. */
static void op_attention(imp *I, const Onnx__NodeProto *n)
{
    ival *q = in(I, n, 0), *k = in(I, n, 1), *v = in(I, n, 2), *mask = in_opt(I, n, 3);
    ival *pk = in_opt(I, n, 4), *pv = in_opt(I, n, 5), *nonpad = I->opset >= 24 ? in_opt(I, n, 6) : NULL;
    int r = q->ty.rank, half = q->half;
    cfx_dtype dt = q->ty.dtype;
    const char *nm = out_name(I, n, 0);
    if (!is_real(dt) || (r != 3 && r != 4))
        fail(I, "Q is %s; Attention takes real tensors of rank 3 or 4", tystr(I, &q->ty));
    if (k->ty.dtype != dt || v->ty.dtype != dt || k->ty.rank != r || v->ty.rank != r || k->half != half ||
        v->half != half)
        fail(I, "Q, K and V are %s, %s and %s: they need one type and one rank", tystr(I, &q->ty), tystr(I, &k->ty),
             tystr(I, &v->ty));
    if (!pk != !pv)
        fail(I, "past_key and past_value come together");
    if (nonpad && pk)
        fail(I, "nonpad_kv_seqlen cannot be combined with past_key and past_value");
    int64_t qh = attr_int(I, n, "q_num_heads", 0), kh = attr_int(I, n, "kv_num_heads", 0);
    int64_t B = q->ty.dims[0];
    if (k->ty.dims[0] != B || v->ty.dims[0] != B || k->ty.dims[1] != v->ty.dims[1])
        fail(I, "Q, K and V are %s, %s and %s: their batches or K's and V's lengths differ", tystr(I, &q->ty),
             tystr(I, &k->ty), tystr(I, &v->ty));
    ival *q4 = q, *k4 = k, *v4 = v;
    if (r == 3) {
        if (qh <= 0 || kh <= 0)
            fail(I, "3-D inputs need q_num_heads and kv_num_heads");
        if (q->ty.dims[2] % qh || k->ty.dims[2] % kh || v->ty.dims[2] % kh)
            fail(I, "the hidden sizes of %s, %s and %s are not multiples of q_num_heads %lld and kv_num_heads %lld",
                 tystr(I, &q->ty), tystr(I, &k->ty), tystr(I, &v->ty), (long long)qh, (long long)kh);
        q4 = heads_of(I, n, "q", q, qh);
        k4 = heads_of(I, n, "k", k, kh);
        v4 = heads_of(I, n, "v", v, kh);
    } else if ((qh && qh != q->ty.dims[1]) || (kh && kh != k->ty.dims[1])) {
        fail(I, "q_num_heads %lld and kv_num_heads %lld disagree with the 4-D inputs %s and %s", (long long)qh,
             (long long)kh, tystr(I, &q->ty), tystr(I, &k->ty));
    }
    int64_t Hq = q4->ty.dims[1], S = q4->ty.dims[2], D = q4->ty.dims[3];
    int64_t Hkv = k4->ty.dims[1], L = k4->ty.dims[2], Dv = v4->ty.dims[3];
    if (k4->ty.dims[3] != D || v4->ty.dims[1] != Hkv)
        fail(I, "Q, K and V are %s, %s and %s: Q's and K's head sizes or K's and V's heads differ",
             tystr(I, &q->ty), tystr(I, &k->ty), tystr(I, &v->ty));
    if (Hq != Hkv && Hq % Hkv)
        fail(I, "%lld query heads are not a multiple of %lld key and value heads", (long long)Hq, (long long)Hkv);
    int64_t P = pk ? pk->ty.dims[2] : 0, T = P + L;
    ival *K = k4, *V = v4;
    if (pk) {
        cfx_type kt = mktype(dt, 4, (int64_t[]){B, Hkv, P, D}), vt = mktype(dt, 4, (int64_t[]){B, Hkv, P, Dv});
        if (!same_type(&pk->ty, &kt) || !same_type(&pv->ty, &vt))
            fail(I, "past_key %s and past_value %s do not fit keys %s and values %s", tystr(I, &pk->ty),
                 tystr(I, &pv->ty), tystr(I, &k4->ty), tystr(I, &v4->ty));
        kt.dims[2] = vt.dims[2] = T;
        K = part(I, n, "present_key", &kt, half, fmt(I, "concat((%s, %s), axis=2)", ref(I, pk), ref(I, k4)));
        V = part(I, n, "present_value", &vt, half, fmt(I, "concat((%s, %s), axis=2)", ref(I, pv), ref(I, v4)));
    }
    if (nonpad && (nonpad->ty.dtype != CFX_I64 || nonpad->ty.rank != 1 || nonpad->ty.dims[0] != B))
        fail(I, "nonpad_kv_seqlen is %s, not i64[%lld]", tystr(I, &nonpad->ty), (long long)B);
    /* Q * sqrt(scale) and K * sqrt(scale), the scale in the inputs' type */
    const Onnx__AttributeProto *sa = attr(I, n, "scale");
    double scale = sqrt(sa ? attr_float(I, n, "scale", 1.0) : 1.0 / sqrt((double)D));
    scale = half ? half_value_of(half, scale) : dt == CFX_F32 ? (double)(float)scale : scale;
    const char *c = real_const(I, scale, dt, fmt(I, "%s_scale", nm));
    const char *z = real_const(I, 0.0, dt, fmt(I, "%s_zero", nm));
    const char *ninf = real_const(I, -INFINITY, dt, fmt(I, "%s_ninf", nm));
#define H_(e) half_rounded(I, half, (e))
    ival *qs = part(I, n, "qs", &q4->ty, half, H_(fmt(I, "%s * %s", ref(I, q4), c)));
    ival *ks = part(I, n, "ks", &K->ty, half, H_(fmt(I, "%s * %s", ref(I, K), c)));
    ival *vs = V;
    if (Hq != Hkv) /* each key and value head repeated for its group of query heads, in turn */
        repeat_kv_heads(I, n, half, Hq, &ks, &vs);
    ival *kt = permuted_part(I, n, "kt", ks, (const int64_t[]){0, 1, 3, 2});
    ival *qk = product_part(I, n, "qk", qs, kt, half);
    double cap = attr_float(I, n, "softcap", 0.0);
    if (cap > 0) {
        cap = half ? half_value_of(half, cap) : dt == CFX_F32 ? (double)(float)cap : cap;
        const char *cc = real_const(I, cap, dt, fmt(I, "%s_softcap", nm));
        const char *th = H_(fmt(I, "tanh(%s)", H_(fmt(I, "%s / %s", qk->id, cc))));
        qk = part(I, n, "capped", &qk->ty, half, H_(fmt(I, "%s * %s", th, cc)));
    }
    /* the bias: sums of 0 and -inf (and the values of a real mask), broadcast to [B, Hq, S, T] */
    int causal = (int)attr_int(I, n, "is_causal", 0);
    int64_t left = I->opset >= 25 ? attr_int(I, n, "left_window_size", -1) : -1;
    int64_t right = I->opset >= 25 ? attr_int(I, n, "right_window_size", -1) : -1;
    if (left < -1 || right < -1)
        fail(I, "left_window_size %lld and right_window_size %lld must be -1 or at least 0", (long long)left,
             (long long)right);
    int windowed = left >= 0 || right >= 0, guard = 0;
    const char *bias = NULL;
    cfx_type bt = mktype(dt, 2, (int64_t[]){S, T});
    if (mask) {
        int mr = mask->ty.rank;
        int64_t ml = mr ? mask->ty.dims[mr - 1] : 0;
        if (mr < 1 || mr > 4 || ml > T || (mask->ty.dtype != CFX_BOOL && (mask->ty.dtype != dt || mask->half != half)))
            fail(I, "attn_mask is %s; it must be bool or Q's type, of rank 1 to 4, with at most %lld keys",
                 tystr(I, &mask->ty), (long long)T);
        const char *m = ref(I, mask);
        if (mask->ty.dtype == CFX_BOOL)
            m = fmt(I, "where(%s, %s, %s)", m, z, ninf);
        cfx_type mt = mask->ty;
        mt.dtype = dt;
        if (ml < T) { /* the keys the mask does not reach are masked */
            cfx_type pt = mt;
            pt.dims[mr - 1] = T - ml;
            mt.dims[mr - 1] = T;
            m = fmt(I, "concat((%s, full(%s, -inf)), axis=%d)", m, tystr(I, &pt), mr - 1);
        }
        bias = m;
        cfx_type b2 = bt;
        broadcast(I, &b2, &mt, &bt);
        guard = 1;
    }
    const char *lens = nonpad ? fmt(I, "reshape(%s, [%lld, 1, 1, 1])", ref(I, nonpad), (long long)B) : NULL;
    const char *offb = nonpad ? fmt(I, "(%s - %lld)", lens, (long long)S) : NULL;
    ival *tb = NULL; /* the bias, where it is a table made at import */
    if ((causal || windowed) && !nonpad) { /* the offset is the past's length: a table made at import */
        tb = bias_table(I, n, "causal", dt, S, T, P, causal, left, right, 0);
        bias = bias ? fmt(I, "%s + %s", bias, ref(I, tb)) : ref(I, tb);
        guard |= windowed;
    } else if (causal || windowed) { /* offset nonpad_kv_seqlen[b] - S: i - j + offset compared at run time */
        ival *dtab = bias_table(I, n, "diff", dt, S, T, 0, 0, -1, -1, 1);
        const char *d = fmt(I, "(%s + %s)", ref(I, dtab), offb);
        const char *ok[3] = {causal ? fmt(I, "%s >= 0", d) : NULL,
                             left >= 0 ? fmt(I, "%s <= %lld", d, (long long)left) : NULL,
                             right >= 0 ? fmt(I, "%s >= %lld", d, (long long)-right) : NULL};
        for (int t = 0; t < 3; t++) /* a term each: -inf where any says no */
            if (ok[t]) {
                const char *w = fmt(I, "where(%s, %s, %s)", ok[t], z, ninf);
                bias = bias ? fmt(I, "%s + %s", bias, w) : w;
            }
        cfx_type wt = mktype(dt, 4, (int64_t[]){B, 1, S, T});
        cfx_type b2 = bt;
        broadcast(I, &b2, &wt, &bt);
        guard = 1;
    }
    if (nonpad) { /* the keys from nonpad_kv_seqlen[b] on are padding */
        cfx_type jt = mktype(CFX_I64, 1, (int64_t[]){T});
        int64_t *js = new_data(I, &jt);
        for (int64_t j = 0; j < T; j++)
            js[j] = j;
        ival *jv = alloc(I, sizeof *jv);
        *jv = (ival){.name = fmt(I, "%s#keys", nm), .ty = jt, .data = js};
        const char *w = fmt(I, "where(%s < %s, %s, %s)", ref(I, jv), lens, z, ninf);
        bias = bias ? fmt(I, "%s + %s", bias, w) : w;
        cfx_type wt = mktype(dt, 4, (int64_t[]){B, 1, 1, T});
        cfx_type b2 = bt;
        broadcast(I, &b2, &wt, &bt);
        guard = 1;
    }
    cfx_type chk = qk->ty;
    broadcast(I, &bt, &qk->ty, &chk);
    if (!same_type(&chk, &qk->ty))
        fail(I, "the mask %s does not broadcast to the scores %s", tystr(I, &bt), tystr(I, &qk->ty));
    ival *bv = !bias ? NULL : tb && !strcmp(bias, tb->id) ? tb : part(I, n, "bias", &bt, half, bias);
    ival *x = bv ? part(I, n, "biased", &qk->ty, half, H_(fmt(I, "%s + %s", qk->id, bv->id))) : qk;
    /* the softmax, in softmax_precision: the inputs' type, or f32 (f64) where that is wider */
    int smh = half;
    const Onnx__AttributeProto *pa = attr(I, n, "softmax_precision");
    if (pa) {
        int32_t p = (int32_t)attr_int(I, n, "softmax_precision", 1);
        if (p == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16)
            smh = HALF_F16;
        else if (p == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16)
            smh = HALF_BF16;
        else if (p == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || p == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE)
            smh = HALF_NONE;
        else
            fail(I, "softmax_precision %s is not supported (float, double, float16, bfloat16)", onnx_dtype_name(p));
        if (smh && dt != CFX_F32)
            fail(I, "softmax_precision %s for %s inputs is not supported", onnx_dtype_name(p), tystr(I, &q->ty));
    }
#define SH_(e) half_rounded(I, smh, (e))
    const char *xs = smh && smh != half ? part(I, n, "sm_in", &x->ty, smh, SH_(x->id))->id : x->id;
    cfx_type rt = qk->ty;
    rt.dims[3] = 1;
    ival *mx = part(I, n, "max", &rt, smh, fmt(I, "max(%s, axis=3, keepdims=True)", xs));
    line(I, "%s = where(%s == %s, %s, %s)", mx->id, mx->id, ninf, z, mx->id);
    ival *e = part(I, n, "exp", &qk->ty, smh, SH_(fmt(I, "exp(%s)", SH_(fmt(I, "%s - %s", xs, mx->id)))));
    ival *s = part(I, n, "sum", &rt, smh, SH_(fmt(I, "sum(%s, axis=3, keepdims=True)", e->id)));
    line(I, "%s = where(%s == %s, %s, %s)", s->id, s->id, z, real_const(I, 1.0, dt, fmt(I, "%s_one", nm)), s->id);
    ival *p = part(I, n, "p", &qk->ty, smh, SH_(fmt(I, "%s / %s", e->id, s->id)));
    if (guard) { /* a row whose bias is all -inf attends nothing: 0, not NaN */
        cfx_type bq = qk->ty;
        bq.dtype = CFX_BOOL;
        line(I, "%s = where((max(%s, axis=-1, keepdims=True) == %s) == ones(%s), %s, %s)", p->id, bv->id, ninf,
             tystr(I, &bq), z, p->id);
    }
    if (smh != half)
        line(I, "%s = %s", p->id, H_(p->id));
#undef SH_
#undef H_
    ival *y = product_part(I, n, r == 4 ? NULL : "y", p, vs, half); /* 4-D: Y itself */
    if (r == 3) {
        ival *yt = permuted_part(I, n, "y_heads", y, (const int64_t[]){0, 2, 1, 3});
        cfx_type t = mktype(dt, 3, (int64_t[]){B, S, Hq * Dv});
        const char *out = out_var(I, n, 0, &t);
        line(I, "%s = %s", out, reshaped(I, yt->id, &yt->ty, &t));
    }
    if (n->n_output > 1 && n->output[1] && *n->output[1])
        bind(I, n->output[1], &K->ty, K->id, K->data)->half = half;
    if (n->n_output > 2 && n->output[2] && *n->output[2])
        bind(I, n->output[2], &V->ty, V->id, V->data)->half = half;
    if (n->n_output > 3 && n->output[3] && *n->output[3]) {
        int64_t mode = attr_int(I, n, "qk_matmul_output_mode", 0);
        if (mode < 0 || mode > 3)
            fail(I, "qk_matmul_output_mode %lld is not 0 to 3", (long long)mode);
        ival *o = mode == 3 ? p : mode == 2 ? x : qk;
        bind(I, n->output[3], &o->ty, o->id, NULL)->half = half;
    }
    I->node_rounded = 1;
}

/* FlexAttention's score_mod or prob_mod (attribute `name`): the subgraph imported in place with
 * its one input bound to x; its one output, of x's type. x itself where there is none. */
static ival *flex_mod(imp *I, const Onnx__NodeProto *n, const char *name, ival *x)
{
    const Onnx__AttributeProto *a = attr(I, n, name);
    if (!a)
        return x;
    const Onnx__GraphProto *g = a->g;
    if (!g || g->n_input != 1 || g->n_output != 1 || !g->input[0] || !g->input[0]->name)
        fail(I, "%s is not a subgraph of one input and one output", name);
    const char *note = I->note;
    int64_t opset = graph_opset_guard(I);
    int base = scope_open(I);
    bind(I, g->input[0]->name, &x->ty, x->id, x->data)->half = x->half;
    ival o = *subgraph_outputs(I, g, n)[0];
    scope_close(I, base);
    I->node = n;
    I->opset = opset;
    I->note = note;
    I->depth--;
    if (!same_type(&o.ty, &x->ty) || o.seq)
        fail(I, "%s gives %s for scores of %s; it must keep their type", name, tystr(I, &o.ty), tystr(I, &x->ty));
    return part(I, n, name, &x->ty, x->half, half_rounded(I, x->half, ref(I, &o)));
}

/* FlexAttention (ai.onnx.preview): as ONNX's reference computes it, Q and K each times
 * sqrt(scale) (the square root taken in f32, then in the inputs' type), K's and V's heads repeated
 * for grouped queries, the scores in softmax_precision (f32 for float16 and bfloat16 inputs, else
 * the inputs' type), score_mod, the softmax (no guard: a row all -inf gives NaN, as the
 * reference), prob_mod, the product with V in that precision, and the result in the inputs' type. */
static void op_flex_attention(imp *I, const Onnx__NodeProto *n)
{
    ival *q = in(I, n, 0), *k = in(I, n, 1), *v = in(I, n, 2);
    cfx_dtype dt = q->ty.dtype;
    int half = q->half;
    if (!is_real(dt) || q->ty.rank != 4 || k->ty.rank != 4 || v->ty.rank != 4 || k->ty.dtype != dt ||
        v->ty.dtype != dt || k->half != half || v->half != half)
        fail(I, "Q, K and V are %s, %s and %s; reals of one type and rank 4 are taken", tystr(I, &q->ty),
             tystr(I, &k->ty), tystr(I, &v->ty));
    int64_t B = q->ty.dims[0], Hq = q->ty.dims[1], L = q->ty.dims[2], E = q->ty.dims[3];
    int64_t Hkv = k->ty.dims[1], S = k->ty.dims[2], Ev = v->ty.dims[3];
    if (k->ty.dims[0] != B || v->ty.dims[0] != B || v->ty.dims[1] != Hkv || v->ty.dims[2] != S ||
        k->ty.dims[3] != E || Hq % Hkv)
        fail(I, "Q, K and V are %s, %s and %s: batches, heads, lengths or head sizes do not fit", tystr(I, &q->ty),
             tystr(I, &k->ty), tystr(I, &v->ty));
    /* the softmax's precision: cdt, rounded to chalf */
    cfx_dtype cdt = dt == CFX_F64 ? CFX_F64 : CFX_F32;
    int chalf = HALF_NONE;
    if (attr(I, n, "softmax_precision")) {
        int32_t p = (int32_t)attr_int(I, n, "softmax_precision", 1);
        if (p == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 || p == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16)
            chalf = p == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 ? HALF_F16 : HALF_BF16;
        else if (p != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && p != ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE)
            fail(I, "softmax_precision %s is not supported (float, double, float16, bfloat16)", onnx_dtype_name(p));
        cdt = p == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE ? CFX_F64 : CFX_F32;
    }
    const Onnx__AttributeProto *sa = attr(I, n, "scale");
    double scale = sa ? attr_float(I, n, "scale", 1.0) : 1.0 / sqrt((double)E);
    double ss = (double)sqrtf((float)scale);
    ss = half ? half_value_of(half, ss) : ss;
    const char *nm = out_name(I, n, 0), *c = real_const(I, ss, dt, fmt(I, "%s_scale", nm));
#define H_(e) half_rounded(I, half, (e))
#define C_(e) half_rounded(I, chalf, (e))
    ival *qs = part(I, n, "qs", &q->ty, half, H_(fmt(I, "%s * %s", ref(I, q), c)));
    ival *ks = part(I, n, "ks", &k->ty, half, H_(fmt(I, "%s * %s", ref(I, k), c)));
    ival *vs = v;
    if (Hq != Hkv) /* each key and value head repeated for its group of query heads, in turn */
        repeat_kv_heads(I, n, half, Hq, &ks, &vs);
    ival *kt = permuted_part(I, n, "kt", ks, (const int64_t[]){0, 1, 3, 2});
    ival *qk = product_part(I, n, "qk", qs, kt, half);
    cfx_type st = mktype(cdt, 4, (int64_t[]){B, Hq, L, S}), rt = mktype(cdt, 4, (int64_t[]){B, Hq, L, 1});
    const char *cn = cfx_dtype_name(cdt);
    ival *x = cdt == dt && chalf == half ? qk
            : part(I, n, "scores", &st, chalf, C_(cdt == dt ? qk->id : fmt(I, "cast(%s, %s)", qk->id, cn)));
    x = flex_mod(I, n, "score_mod", x);
    ival *mx = part(I, n, "max", &rt, chalf, fmt(I, "max(%s, axis=3, keepdims=True)", x->id));
    ival *e = part(I, n, "exp", &st, chalf, C_(fmt(I, "exp(%s)", C_(fmt(I, "%s - %s", x->id, mx->id)))));
    ival *s = part(I, n, "sum", &rt, chalf, C_(fmt(I, "sum(%s, axis=3, keepdims=True)", e->id)));
    ival *p = part(I, n, "p", &st, chalf, C_(fmt(I, "%s / %s", e->id, s->id)));
    p = flex_mod(I, n, "prob_mod", p);
    if (cdt != dt || chalf != half) {
        cfx_type vt = vs->ty;
        vt.dtype = cdt;
        vs = part(I, n, "v_c", &vt, chalf, C_(cdt == dt ? ref(I, vs) : fmt(I, "cast(%s, %s)", ref(I, vs), cn)));
    }
    ival *y = product_part(I, n, "y", p, vs, chalf);
    cfx_type t = mktype(dt, 4, (int64_t[]){B, Hq, L, Ev});
    const char *o = out_var(I, n, 0, &t);
    line(I, "%s = %s", o, H_(cdt == dt ? y->id : fmt(I, "cast(%s, %s)", y->id, cfx_dtype_name(dt))));
#undef C_
#undef H_
    I->node_rounded = 1;
}

/* ---- opset 27's LinearAttention and CausalConvWithState ----------------------------------------
 * LinearAttention is a recurrence over the time steps and becomes one `for t in range(T)` loop, as
 * the RNN ops do. Before the loop each input is laid out time first, [T, N, ...] with N = batch *
 * kv_num_heads (the decay through exp there, once); the state is held transposed, S^T as
 * [N, 1, d_v, d_k], so that a step is a few elementwise products and sums along the last axis:
 * the decay, the delta rule's read of the state (sum(S^T * k)), the write (an outer product) and
 * the output row of each query head (its group of heads broadcast against the one state of their
 * kv head). The output is scaled after the loop; the present state is the last S, transposed back.
 * The equations are onnx/reference/ops/op_linear_attention.py's; a half type's results are
 * rounded once, after the loop, as the reference computes in float32 and casts at the end. */

static void op_linear_attention(imp *I, const Onnx__NodeProto *n)
{
    ival *q = in(I, n, 0), *k = in(I, n, 1), *v = in(I, n, 2), *ps = in_opt(I, n, 3);
    ival *dc = in_opt(I, n, 4), *be = in_opt(I, n, 5);
    cfx_dtype dt = q->ty.dtype;
    int half = q->half;
    if (!is_real(dt) || q->ty.rank != 3)
        fail(I, "query is %s; LinearAttention takes a real tensor of 3 dimensions", tystr(I, &q->ty));
    int64_t B = q->ty.dims[0], T = q->ty.dims[1];
    ival *ins[6] = {q, k, v, ps, dc, be};
    for (int j = 1; j < 6; j++) {
        ival *x = ins[j];
        if (x && (x->ty.dtype != dt || x->half != half))
            fail(I, "input %d ('%s') and query differ in type: LinearAttention takes one", j, x->name);
        if (x && j != 3 && (x->ty.rank != 3 || x->ty.dims[0] != B || x->ty.dims[1] != T))
            fail(I, "input %d ('%s') is %s; query %s wants [%lld, %lld, ...]", j, x->name, tystr(I, &x->ty),
                 tystr(I, &q->ty), (long long)B, (long long)T);
    }
    const char *rule = attr_str(I, n, "update_rule", "gated_delta");
    int gated = !strcmp(rule, "gated") || !strcmp(rule, "gated_delta");
    int delta = !strcmp(rule, "delta") || !strcmp(rule, "gated_delta");
    if (!gated && !delta && strcmp(rule, "linear"))
        fail(I, "update_rule '%s' is not linear, gated, delta or gated_delta", rule);
    if (gated != (dc != NULL) || delta != (be != NULL))
        fail(I, "update_rule '%s' %s decay and %s beta", rule, gated ? "takes" : "takes no",
             delta ? "takes" : "takes no");
    int64_t qh = attr_int(I, n, "q_num_heads", 0), kh = attr_int(I, n, "kv_num_heads", 0);
    if (qh <= 0 || kh <= 0 || qh % kh)
        fail(I, "q_num_heads %lld must be a positive multiple of kv_num_heads %lld", (long long)qh, (long long)kh);
    int64_t dk = q->ty.dims[2] / qh, dv = v->ty.dims[2] / kh, g = qh / kh, N = B * kh;
    if (q->ty.dims[2] % qh || v->ty.dims[2] % kh || k->ty.dims[2] != kh * dk)
        fail(I, "query %s, key %s and value %s do not split into %lld query and %lld kv heads of one key size",
             tystr(I, &q->ty), tystr(I, &k->ty), tystr(I, &v->ty), (long long)qh, (long long)kh);
    int64_t de = 1;
    if (dc) {
        de = dc->ty.dims[2] == kh * dk ? dk : 1;
        if (dc->ty.dims[2] != kh && dc->ty.dims[2] != kh * dk)
            fail(I, "decay is %s; its last dimension must be kv_num_heads (%lld) or kv_num_heads * d_k (%lld)",
                 tystr(I, &dc->ty), (long long)kh, (long long)(kh * dk));
    }
    if (be && be->ty.dims[2] != kh && be->ty.dims[2] != 1)
        fail(I, "beta is %s; its last dimension must be kv_num_heads (%lld) or 1", tystr(I, &be->ty), (long long)kh);
    cfx_type st = mktype(dt, 4, (int64_t[]){B, kh, dk, dv});
    if (ps && !same_type(&ps->ty, &st))
        fail(I, "past_state is %s; it must be %s", tystr(I, &ps->ty), tystr(I, &st));
    double scale = attr_float(I, n, "scale", 0.0);
    if (scale == 0.0)
        scale = 1.0 / sqrt((double)dk);
    const char *nm = n->n_output > 0 && n->output[0] && *n->output[0] ? n->output[0] : out_name(I, n, 1);
    const char *sc = real_const(I, dt == CFX_F32 ? (double)(float)scale : scale, dt, fmt(I, "%s_scale", nm));
    const char *ty = cfx_dtype_name(dt);
    long long LT = (long long)T, LN = (long long)N, Lg = (long long)g, Ldk = (long long)dk, Ldv = (long long)dv;

    /* before the loop: each input time first, [T, N, ...], a step's slice of it one index */
#define LA_TFIRST(x) (B == 1 || T == 1 ? (x) : fmt(I, "permute(%s, (1, 0, 2))", (x)))
    const char *t = new_id(I, "t_", nm);
    const char *qs = new_id(I, "q_", nm), *ks = new_id(I, "k_", nm), *vs = new_id(I, "val_", nm);
    const char *es = NULL, *bs = NULL, *s = new_id(I, "s_", nm), *o = new_id(I, "o_", nm);
    line(I, "%s = reshape(%s, [%lld, %lld, %lld, 1, %lld])", qs, LA_TFIRST(ref(I, q)), LT, LN, Lg, Ldk);
    line(I, "%s = reshape(%s, [%lld, %lld, 1, 1, %lld])", ks, LA_TFIRST(ref(I, k)), LT, LN, Ldk);
    line(I, "%s = reshape(%s, [%lld, %lld, 1, %lld, 1])", vs, LA_TFIRST(ref(I, v)), LT, LN, Ldv);
    if (dc) {
        es = new_id(I, "e_", nm);
        line(I, "%s = reshape(%s, [%lld, %lld, 1, 1, %lld])", es, LA_TFIRST(fmt(I, "exp(%s)", ref(I, dc))), LT, LN,
             (long long)de);
    }
    if (be) {
        const char *b = LA_TFIRST(ref(I, be));
        if (be->ty.dims[2] != kh) /* one beta for every kv head */
            b = fmt(I, "%s * ones(%s[%lld, %lld, %lld])", b, ty, (long long)(B == 1 || T == 1 ? B : T),
                    (long long)(B == 1 || T == 1 ? T : B), (long long)kh);
        bs = new_id(I, "beta_", nm);
        line(I, "%s = reshape(%s, [%lld, %lld, 1, 1, 1])", bs, b, LT, LN);
    }
#undef LA_TFIRST
    if (ps)
        line(I, "%s = reshape(permute(%s, (0, 1, 3, 2)), [%lld, 1, %lld, %lld])", s, ref(I, ps), LN, Ldv, Ldk);
    else
        line(I, "%s = zeros(%s[%lld, 1, %lld, %lld])", s, ty, LN, Ldv, Ldk);
    line(I, "%s = zeros(%s[%lld, %lld, %lld, %lld])", o, ty, LT, LN, Lg, Ldv);

    /* the loop: S^T decayed, written (the delta rule: with what it held for k taken out), read */
    line(I, "for %s in range(%lld) {", t, LT);
    I->indent++;
    if (es)
        line(I, "%s = %s * %s[%s]", s, s, es, t);
    if (bs) { /* k read twice: its row once */
        const char *u = new_id(I, "u_", nm), *kt = new_id(I, "kt_", nm);
        line(I, "%s = %s[%s]", kt, ks, t);
        line(I, "%s = %s[%s] * (%s[%s] - sum(%s * %s, axis=-1, keepdims=True))", u, bs, t, vs, t, s, kt);
        line(I, "%s = %s + %s * %s", s, s, u, kt);
    } else {
        line(I, "%s = %s + %s[%s] * %s[%s]", s, s, vs, t, ks, t);
    }
    line(I, "%s[%s] = sum(%s * %s[%s], axis=-1)", o, t, s, qs, t);
    I->indent--;
    line(I, "}");

    /* after it: the output [B, T, q_num_heads * d_v] scaled, and the state [B, kv_num_heads, d_k, d_v] */
    if (n->n_output > 0 && n->output[0] && *n->output[0]) {
        cfx_type ot = mktype(dt, 3, (int64_t[]){B, T, qh * dv});
        const char *e = fmt(I, "reshape(%s, [%lld, %lld, %lld])", o, LT, (long long)B, (long long)(qh * dv));
        if (B == 1 || T == 1)
            e = fmt(I, "reshape(%s, %s)", o, dims_list(I, &ot));
        else
            e = fmt(I, "permute(%s, (1, 0, 2))", e);
        const char *y = out_var(I, n, 0, &ot);
        line(I, "%s = %s", y, half_rounded(I, half, fmt(I, "%s * %s", e, sc)));
    }
    if (n->n_output > 1 && n->output[1] && *n->output[1]) {
        const char *y = out_var(I, n, 1, &st);
        const char *e = fmt(I, "permute(reshape(%s, [%lld, %lld, %lld, %lld]), (0, 1, 3, 2))", s, (long long)B,
                            (long long)kh, Ldv, Ldk);
        line(I, "%s = %s", y, half_rounded(I, half, e));
    }
    I->node_rounded = 1; /* both results rounded to a half type above */
    for (size_t j = 2; j < n->n_output; j++)
        if (n->output[j] && *n->output[j])
            fail(I, "LinearAttention has no output %zu", j);
}

/* CausalConvWithState: the depthwise conv over the state (past_state, or zeros) and the input
 * concatenated, a product of each kernel offset's slice and its weights summed (a half type's sum
 * rounded before the bias and the activation, as the reference's conv gives it); silu/swish
 * x * sigmoid(x) after; the present state the last k - 1 positions of the concatenation. */
static void op_causal_conv_with_state(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *w = in(I, n, 1), *b = in_opt(I, n, 2), *ps = in_opt(I, n, 3);
    cfx_dtype dt = x->ty.dtype;
    int half = x->half;
    if (!is_real(dt) || x->ty.rank != 3)
        fail(I, "input is %s; CausalConvWithState takes a real tensor of 3 dimensions", tystr(I, &x->ty));
    int64_t B = x->ty.dims[0], C = x->ty.dims[1], L = x->ty.dims[2];
    if (w->ty.dtype != dt || w->half != half || w->ty.rank != 3 || w->ty.dims[0] != C || w->ty.dims[1] != 1 ||
        w->ty.dims[2] < 1)
        fail(I, "weight is %s; input %s wants [%lld, 1, k] of its type", tystr(I, &w->ty), tystr(I, &x->ty),
             (long long)C);
    int64_t K = w->ty.dims[2];
    cfx_type bt = mktype(dt, 1, &C), st = mktype(dt, 3, (int64_t[]){B, C, K - 1});
    if (b && (!same_type(&b->ty, &bt) || b->half != half))
        fail(I, "bias is %s; it must be %s", tystr(I, &b->ty), tystr(I, &bt));
    if (ps && (!same_type(&ps->ty, &st) || ps->half != half))
        fail(I, "past_state is %s; it must be %s", tystr(I, &ps->ty), tystr(I, &st));
    const char *act = attr_str(I, n, "activation", "none");
    int silu = !strcmp(act, "silu") || !strcmp(act, "swish");
    if (!silu && strcmp(act, "none"))
        fail(I, "activation '%s' is not none, silu or swish", act);
    const char *nm = n->n_output > 0 && n->output[0] && *n->output[0] ? n->output[0] : out_name(I, n, 1);
    const char *xs = ref(I, x), *p = xs;
    if (K > 1) {
        p = new_id(I, "pad_", nm);
        line(I, "%s = concat((%s, %s), axis=2)", p, ps ? ref(I, ps) : zeros_of(I, &st), xs);
    }
    cfx_type ot = mktype(dt, 3, (int64_t[]){B, C, L});
    if (n->n_output > 0 && n->output[0] && *n->output[0]) {
        const char *wr = new_id(I, "w_", nm);
        line(I, "%s = reshape(%s, [%lld, %lld])", wr, ref(I, w), (long long)C, (long long)K);
        strbuf *sb = new_sb(I);
        for (int64_t j = 0; j < K; j++)
            sb_printf(sb, "%s%s[:, %lld:%lld] * %s[:, :, %lld:%lld]", j ? " + " : "", wr, (long long)j,
                      (long long)(j + 1), p, (long long)j, (long long)(j + L));
        if (sb->oom)
            fail(I, "out of memory");
        const char *e = take(I, sb_take(sb));
        if (b)
            e = fmt(I, "%s + reshape(%s, [%lld, 1])", half_rounded(I, half, e), ref(I, b), (long long)C);
        if (silu) {
            const char *c = new_id(I, "conv_", nm);
            line(I, "%s = %s", c, half_rounded(I, half, e));
            e = fmt(I, "%s * sigmoid(%s)", c, c);
        }
        line(I, "%s = %s", out_var(I, n, 0, &ot), half_rounded(I, half, e));
    }
    if (n->n_output > 1 && n->output[1] && *n->output[1]) {
        if (K == 1) /* no state: a value of 0 elements, known by its type */
            out_known(I, n, 1, &st, alloc(I, 1));
        else
            line(I, "%s = %s[:, :, %lld:%lld]", out_var(I, n, 1, &st), p, (long long)L, (long long)(L + K - 1));
    }
    I->node_rounded = 1; /* the output rounded above; the state holds values of the inputs */
    for (size_t j = 2; j < n->n_output; j++)
        if (n->output[j] && *n->output[j])
            fail(I, "CausalConvWithState has no output %zu", j);
}

/* ---- recurrent ops: RNN, GRU, LSTM ------------------------------------------------------------
 * One `for t in range(seq_length)` loop whose body steps every direction: X @ W^T (and the
 * biases that do not depend on the state) is one product over all steps before the loop, and
 * only the state's h @ R^T is left inside. Y's rows are written per step, Y_h and Y_c after the
 * loop. The equations are ONNX's (onnx/reference/ops/op_rnn.py, op_gru.py, op_lstm.py), with
 * the activations, clip, GRU's linear_before_reset and LSTM's input_forget of the spec, and
 * sequence_lens as onnxruntime takes it (a mask of each sequence's steps). */

/* The activations the spec lists: $x the operand, $a $b alpha and beta, {v} a constant. */
static const struct rnn_act {
    const char *name, *expr;
    int alpha, beta; /* taking them, in the order of activation_alpha, activation_beta */
    double da, db;   /* their defaults */
} rnn_acts[] = {
    {"Relu", "relu($x)", 0, 0, 0, 0},
    {"Tanh", "tanh($x)", 0, 0, 0, 0},
    {"Sigmoid", "sigmoid($x)", 0, 0, 0, 0},
    {"Affine", "$a * $x + $b", 1, 1, 1.0, 0.0},
    {"LeakyRelu", "where($x < {0}, $a * $x, $x)", 1, 0, 0.01, 0},
    {"ThresholdedRelu", "where($x > $a, $x, {0})", 1, 0, 1.0, 0},
    {"ScaledTanh", "$a * tanh($b * $x)", 1, 1, 1.0, 1.0},
    {"HardSigmoid", "max({0}, min({1}, $a * $x + $b))", 1, 1, 0.2, 0.5},
    {"Elu", "where($x < {0}, $a * (exp($x) - {1}), $x)", 1, 0, 1.0, 0},
    {"Softsign", "$x / ({1} + abs($x))", 0, 0, 0, 0},
    {"Softplus", "log(exp($x) + {1})", 0, 0, 0, 0},
};

typedef struct rnn_fn {
    const struct rnn_act *act;
    double a, b;
} rnn_fn;

typedef struct rnn_op {
    cfx_dtype dt;
    const char *nm;     /* for the names of constants */
    const char *lo, *hi; /* clip's bounds, or NULL */
    rnn_fn fn[2][3];    /* per direction: f, g, h */
} rnn_op;

static int rnn_same_name(const char *a, size_t len, const char *b)
{
    if (strlen(b) != len)
        return 0;
    for (size_t k = 0; k < len; k++) {
        char x = a[k], y = b[k];
        if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
        if (x != y)
            return 0;
    }
    return 1;
}

/* fn applied to x (clipped first where the node says so), written as one expression; an
 * operand that the activation reads twice is computed into a variable of its own first */
static const char *rnn_apply(imp *I, rnn_op *R, const rnn_fn *fn, const char *x, int clip)
{
    if (clip && R->lo)
        x = fmt(I, "min(max(%s, %s), %s)", x, R->lo, R->hi);
    const char *e = fn->act->expr;
    int uses = 0;
    for (const char *p = e; (p = strstr(p, "$x")); p += 2)
        uses++;
    if (!plain_id(x) && uses > 1) {
        const char *v = new_id(I, "a_", R->nm);
        line(I, "%s = %s", v, x);
        x = v;
    }
    double abg[3] = {fn->a, fn->b, 0};
    return fill_expr(I, e, x, 1, abg, R->dt, R->nm);
}

/* a state's new value where the step's mask m is true, else its old one (no mask: the new) */
static const char *rnn_masked(imp *I, const char *m, const char *e, const char *old)
{
    return m ? fmt(I, "where(%s, %s, %s)", m, e, old) : e;
}

/* kind 'R' (RNN), 'G' (GRU) or 'L' (LSTM) */
static void op_rnn(imp *I, const Onnx__NodeProto *n, int kind)
{
    const char *op = kind == 'R' ? "RNN" : kind == 'G' ? "GRU" : "LSTM";
    int G = kind == 'L' ? 4 : kind == 'G' ? 3 : 1, nact = kind == 'L' ? 3 : kind == 'G' ? 2 : 1;
    ival *x = in(I, n, 0), *w = in(I, n, 1), *r = in(I, n, 2), *b = in_opt(I, n, 3);
    ival *h0 = in_opt(I, n, 5), *c0 = kind == 'L' ? in_opt(I, n, 6) : NULL;
    ival *pp = kind == 'L' ? in_opt(I, n, 7) : NULL;
    if (!is_real(x->ty.dtype) || x->ty.rank != 3)
        fail(I, "X is %s; %s takes a float or double tensor of 3 dimensions", tystr(I, &x->ty), op);
    cfx_dtype dt = x->ty.dtype;
    for (size_t k = 1; k < n->n_input && k < 8; k++) {
        ival *v = in_opt(I, n, k);
        if (v && k != 4 && v->ty.dtype != dt)
            fail(I, "input %zu ('%s') is %s and X is %s", k, v->name, tystr(I, &v->ty), tystr(I, &x->ty));
        if (v && v->half)
            fail(I, "%s of float16 or bfloat16 is not supported", op);
    }
    if (x->half)
        fail(I, "%s of float16 or bfloat16 is not supported", op);
    const Onnx__AttributeProto *da = attr(I, n, "direction");
    int dirs = 1, rev0 = 0;
    if (da) {
        if (!da->has_s)
            fail(I, "attribute 'direction' is not a string");
        const char *s = da->s.data ? (const char *)da->s.data : "";
        size_t len = da->s.data ? da->s.len : 0;
        if (len == 7 && !memcmp(s, "reverse", 7))
            rev0 = 1;
        else if (len == 13 && !memcmp(s, "bidirectional", 13))
            dirs = 2;
        else if (!(len == 7 && !memcmp(s, "forward", 7)))
            fail(I, "direction '%.*s' is not forward, reverse or bidirectional", (int)len, s);
    }
    int layout = (int)attr_int(I, n, "layout", 0);
    if (layout != 0 && layout != 1)
        fail(I, "layout is %d; it must be 0 or 1", layout);
    int lbr = kind == 'G' ? (int)attr_int(I, n, "linear_before_reset", 0) : 0;
    int coupled = kind == 'L' ? (int)attr_int(I, n, "input_forget", 0) : 0;
    int64_t S = x->ty.dims[layout ? 1 : 0], Bn = x->ty.dims[layout ? 0 : 1], In = x->ty.dims[2];
    if (w->ty.rank != 3 || r->ty.rank != 3)
        fail(I, "W is %s and R is %s; both must have 3 dimensions", tystr(I, &w->ty), tystr(I, &r->ty));
    int64_t H = r->ty.dims[2], hs = attr_int(I, n, "hidden_size", H);
    if (hs != H)
        fail(I, "hidden_size is %lld and R is %s", (long long)hs, tystr(I, &r->ty));
    if (w->ty.dims[0] != dirs || w->ty.dims[1] != G * H || w->ty.dims[2] != In)
        fail(I, "W is %s; X %s and R %s want [%d, %lld, %lld]", tystr(I, &w->ty), tystr(I, &x->ty),
             tystr(I, &r->ty), dirs, (long long)(G * H), (long long)In);
    if (r->ty.dims[0] != dirs || r->ty.dims[1] != G * H)
        fail(I, "R is %s; it must be [%d, %lld, %lld]", tystr(I, &r->ty), dirs, (long long)(G * H), (long long)H);
    if (b && (b->ty.rank != 2 || b->ty.dims[0] != dirs || b->ty.dims[1] != 2 * G * H))
        fail(I, "B is %s; it must be [%d, %lld]", tystr(I, &b->ty), dirs, (long long)(2 * G * H));
    int64_t sd[3] = {layout ? Bn : dirs, layout ? dirs : Bn, H};
    cfx_type st = mktype(dt, 3, sd);
    if (h0 && !same_type(&h0->ty, &st))
        fail(I, "initial_h is %s; it must be %s", tystr(I, &h0->ty), tystr(I, &st));
    if (c0 && !same_type(&c0->ty, &st))
        fail(I, "initial_c is %s; it must be %s", tystr(I, &c0->ty), tystr(I, &st));
    if (pp && (pp->ty.rank != 2 || pp->ty.dims[0] != dirs || pp->ty.dims[1] != 3 * H))
        fail(I, "P is %s; it must be [%d, %lld]", tystr(I, &pp->ty), dirs, (long long)(3 * H));
    /* sequence_lens: where it is not the full length of every sequence (or not known), a mask of
     * the steps each sequence has: past its length a state keeps its value and Y is 0 */
    ival *sl = in_opt(I, n, 4);
    if (sl) {
        if (sl->ty.rank != 1 || sl->ty.dims[0] != Bn || (sl->ty.dtype != CFX_I32 && sl->ty.dtype != CFX_I64))
            fail(I, "sequence_lens is %s; it must be %lld integers, a length for each sequence", tystr(I, &sl->ty),
                 (long long)Bn);
        int full = sl->data != NULL;
        for (int64_t k = 0; full && k < Bn; k++)
            full = geti(sl, k) == S;
        if (full)
            sl = NULL;
    }

    rnn_op R = {.dt = dt, .nm = out_name(I, n, 0)};
    if (!*R.nm)
        R.nm = n->name && *n->name ? n->name : op;
    const Onnx__AttributeProto *cl = attr(I, n, "clip");
    if (cl) {
        if (!cl->has_f || !(cl->f > 0))
            fail(I, "clip must be a positive float");
        R.lo = real_const(I, -cl->f, dt, fmt(I, "%s_clip_lo", R.nm));
        R.hi = real_const(I, cl->f, dt, fmt(I, "%s_clip_hi", R.nm));
    }
    static const char *const defaults[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    const char *const *def = defaults[nact - 1];
    const Onnx__AttributeProto *aa = attr(I, n, "activations");
    const Onnx__AttributeProto *al = attr(I, n, "activation_alpha"), *be = attr(I, n, "activation_beta");
    if (aa && aa->n_strings != (size_t)(nact * dirs))
        fail(I, "activations has %zu names; this %s takes %d (%s for each direction)", aa->n_strings, op,
             nact * dirs, kind == 'L' ? "f, g, h" : kind == 'G' ? "f, g" : "f");
    size_t ka = 0, kb = 0;
    for (int d = 0; d < dirs; d++)
        for (int j = 0; j < nact; j++) {
            const char *s = aa ? (const char *)aa->strings[d * nact + j].data : def[j];
            size_t len = aa ? aa->strings[d * nact + j].len : strlen(def[j]);
            if (!s)
                s = "", len = 0;
            const struct rnn_act *f = NULL;
            for (size_t k = 0; k < sizeof rnn_acts / sizeof *rnn_acts; k++)
                if (rnn_same_name(s, len, rnn_acts[k].name))
                    f = &rnn_acts[k];
            if (!f)
                fail(I, "activation '%.*s' is not supported (docs/onnx.md lists those taken)", (int)len, s);
            rnn_fn *fn = &R.fn[d][j];
            fn->act = f;
            fn->a = f->alpha && al && ka < al->n_floats ? al->floats[ka++] : f->da;
            fn->b = f->beta && be && kb < be->n_floats ? be->floats[kb++] : f->db;
        }

    /* before the loop: the inputs' products, the weights transposed, the states */
    const char *xs = ref(I, x), *ws = ref(I, w), *rs = ref(I, r), *bs = b ? ref(I, b) : NULL;
    const char *ps = pp ? ref(I, pp) : NULL;
    const char *one = real_const(I, 1.0, dt, fmt(I, "%s_one", R.nm));
    const char *mk = NULL, *none = NULL;
    if (sl) {
        const char *ls = ref(I, sl), *it = cfx_dtype_name(sl->ty.dtype);
        line(I, "assert(min(%s) >= 0 and max(%s) <= %lld, \"%s '%s': a length of sequence_lens is outside 0 to "
             "%lld\")", ls, ls, (long long)S, op, clean(I, R.nm), (long long)S);
        mk = new_id(I, "mask_", R.nm);
        line(I, "%s = reshape(%s, [1, %lld, 1]) > iota(%s[%lld, %lld, %lld]) // %lld", mk, ls, (long long)Bn, it,
             (long long)S, (long long)Bn, (long long)H, (long long)(Bn * H));
        none = new_id(I, "zero_", R.nm);
        line(I, "%s = zeros(%s[%lld, %lld])", none, cfx_dtype_name(dt), (long long)Bn, (long long)H);
    }
    const char *xw[2], *rt[2], *rt2[2], *rb[2], *peep[2][3], *h[2], *c[2];
    const char *t = new_id(I, "t_", R.nm);
    long long GH = (long long)(G * H), HH = (long long)H;
    for (int d = 0; d < dirs; d++) {
        const char *e = fmt(I, "%s @ transpose(%s[%d])", xs, ws, d);
        if (bs && kind == 'G' && lbr)
            e = fmt(I, "%s + %s[%d, 0:%lld]", e, bs, d, GH);
        else if (bs)
            e = fmt(I, "%s + (%s[%d, 0:%lld] + %s[%d, %lld:%lld])", e, bs, d, GH, bs, d, GH, 2 * GH);
        xw[d] = new_id(I, "xw_", R.nm);
        line(I, "%s = %s", xw[d], e);
        rt[d] = new_id(I, "rt_", R.nm);
        rt2[d] = rb[d] = NULL;
        if (kind == 'G' && !lbr) { /* the candidate's product reads r * h: apart */
            line(I, "%s = transpose(%s[%d, 0:%lld])", rt[d], rs, d, 2 * HH);
            rt2[d] = new_id(I, "rt_", R.nm);
            line(I, "%s = transpose(%s[%d, %lld:%lld])", rt2[d], rs, d, 2 * HH, 3 * HH);
        } else {
            line(I, "%s = transpose(%s[%d])", rt[d], rs, d);
        }
        if (kind == 'G' && lbr && bs) {
            rb[d] = new_id(I, "rb_", R.nm);
            line(I, "%s = %s[%d, %lld:%lld]", rb[d], bs, d, GH, 2 * GH);
        }
        for (int k = 0; k < 3; k++) {
            peep[d][k] = NULL;
            if (ps) {
                peep[d][k] = new_id(I, "p_", R.nm);
                line(I, "%s = %s[%d, %lld:%lld]", peep[d][k], ps, d, k * HH, (k + 1) * HH);
            }
        }
        cfx_type bh = mktype(dt, 2, (int64_t[]){Bn, H});
        h[d] = new_id(I, "h_", R.nm);
        line(I, "%s = %s", h[d], h0 ? fmt(I, layout ? "%s[:, %d]" : "%s[%d]", ref(I, h0), d) : zeros_of(I, &bh));
        c[d] = NULL;
        if (kind == 'L') {
            c[d] = new_id(I, "cell_", R.nm);
            line(I, "%s = %s", c[d], c0 ? fmt(I, layout ? "%s[:, %d]" : "%s[%d]", ref(I, c0), d) : zeros_of(I, &bh));
        }
    }
    const char *yn = n->n_output > 0 && n->output[0] ? n->output[0] : "";
    const char *y = NULL;
    cfx_type yt = layout ? mktype(dt, 4, (int64_t[]){Bn, S, dirs, H}) : mktype(dt, 4, (int64_t[]){S, dirs, Bn, H});
    if (*yn) {
        check_dims(I, yn, yt.rank, yt.dims);
        y = new_id(I, "v_", yn);
        line(I, "%s = %s", y, zeros_of(I, &yt));
    }

    /* the loop: a step of each direction */
    line(I, "for %s in range(%lld) {", t, (long long)S);
    I->indent++;
    for (int d = 0; d < dirs; d++) {
        int rev = rev0 || d == 1;
        const char *pos = rev ? fmt(I, "%lld - %s", (long long)(S - 1), t) : t;
        const char *xrow = fmt(I, layout ? "%s[:, %s]" : "%s[%s]", xw[d], pos);
        rnn_fn *f = R.fn[d];
        const char *m = NULL;
        if (mk) {
            m = new_id(I, "m_", R.nm);
            line(I, "%s = %s[%s]", m, mk, pos);
        }
        if (kind == 'R') {
            line(I, "%s = %s", h[d], rnn_masked(I, m, rnn_apply(I, &R, &f[0], fmt(I, "%s + %s @ %s", xrow, h[d], rt[d]), 1), h[d]));
        } else if (kind == 'G') {
            const char *xr = new_id(I, "x_", R.nm), *zr = new_id(I, "zr_", R.nm), *hh = new_id(I, "hh_", R.nm);
            line(I, "%s = %s", xr, xrow);
            const char *z = fmt(I, "%s[:, 0:%lld]", zr, HH), *rg = fmt(I, "%s[:, %lld:%lld]", zr, HH, 2 * HH);
            if (!lbr) {
                line(I, "%s = %s", zr, rnn_apply(I, &R, &f[0], fmt(I, "%s[:, 0:%lld] + %s @ %s", xr, 2 * HH, h[d], rt[d]), 1));
                line(I, "%s = %s", hh, rnn_apply(I, &R, &f[1], fmt(I, "%s[:, %lld:%lld] + (%s * %s) @ %s", xr, 2 * HH,
                                                                   3 * HH, rg, h[d], rt2[d]), 1));
            } else {
                const char *hr = new_id(I, "hr_", R.nm);
                line(I, "%s = %s @ %s%s%s", hr, h[d], rt[d], rb[d] ? " + " : "", rb[d] ? rb[d] : "");
                line(I, "%s = %s", zr, rnn_apply(I, &R, &f[0], fmt(I, "%s[:, 0:%lld] + %s[:, 0:%lld]", xr, 2 * HH, hr,
                                                                   2 * HH), 1));
                line(I, "%s = %s", hh, rnn_apply(I, &R, &f[1], fmt(I, "%s[:, %lld:%lld] + %s * %s[:, %lld:%lld]", xr,
                                                                   2 * HH, 3 * HH, rg, hr, 2 * HH, 3 * HH), 1));
            }
            line(I, "%s = %s", h[d], rnn_masked(I, m, fmt(I, "(%s - %s) * %s + %s * %s", one, z, hh, z, h[d]), h[d]));
        } else {
            const char *g = new_id(I, "g_", R.nm);
            line(I, "%s = %s + %s @ %s", g, xrow, h[d], rt[d]);
            const char *ig, *og = NULL, *fg;
            if (!ps && !coupled) { /* i, o and f side by side, through f at once */
                const char *iof = new_id(I, "iof_", R.nm);
                line(I, "%s = %s", iof, rnn_apply(I, &R, &f[0], fmt(I, "%s[:, 0:%lld]", g, 3 * HH), 1));
                ig = fmt(I, "%s[:, 0:%lld]", iof, HH);
                og = fmt(I, "%s[:, %lld:%lld]", iof, HH, 2 * HH);
                fg = fmt(I, "%s[:, %lld:%lld]", iof, 2 * HH, 3 * HH);
            } else {
                const char *iv = new_id(I, "i_", R.nm);
                const char *pi = ps ? fmt(I, " + %s * %s", peep[d][0], c[d]) : "";
                line(I, "%s = %s", iv, rnn_apply(I, &R, &f[0], fmt(I, "%s[:, 0:%lld]%s", g, HH, pi), 1));
                ig = iv;
                if (coupled) {
                    fg = fmt(I, "(%s - %s)", one, iv);
                } else {
                    const char *fv = new_id(I, "f_", R.nm);
                    const char *pf = ps ? fmt(I, " + %s * %s", peep[d][2], c[d]) : "";
                    line(I, "%s = %s", fv, rnn_apply(I, &R, &f[0], fmt(I, "%s[:, %lld:%lld]%s", g, 2 * HH, 3 * HH, pf), 1));
                    fg = fv;
                }
            }
            line(I, "%s = %s", c[d], rnn_masked(I, m, fmt(I, "%s * %s + %s * %s", fg, c[d], ig,
                 rnn_apply(I, &R, &f[1], fmt(I, "%s[:, %lld:%lld]", g, 3 * HH, 4 * HH), 1)), c[d]));
            if (!og) {
                const char *po = ps ? fmt(I, " + %s * %s", peep[d][1], c[d]) : "";
                og = rnn_apply(I, &R, &f[0], fmt(I, "%s[:, %lld:%lld]%s", g, HH, 2 * HH, po), 1);
            }
            line(I, "%s = %s", h[d], rnn_masked(I, m, fmt(I, "%s * %s", og, rnn_apply(I, &R, &f[2], c[d], 0)), h[d]));
        }
        if (y)
            line(I, layout ? "%s[:, %s, %d] = %s" : "%s[%s, %d] = %s", y, pos, d,
                 m ? fmt(I, "where(%s, %s, %s)", m, h[d], none) : h[d]);
    }
    I->indent--;
    line(I, "}");

    /* after it: the results */
    if (y)
        bind(I, yn, &yt, y, NULL);
    for (int k = 1; k <= (kind == 'L' ? 2 : 1); k++) {
        const char *nm = (size_t)k < n->n_output && n->output[k] ? n->output[k] : "";
        if (!*nm)
            continue;
        const char *src[2];
        for (int d = 0; d < dirs; d++) { /* a sequence of length 0 has states of 0 (onnxruntime's) */
            src[d] = k == 1 ? h[d] : c[d];
            if (mk)
                src[d] = fmt(I, "where(%s[0], %s, %s)", mk, src[d], none);
        }
        const char *v = new_id(I, "v_", nm);
        if (dirs == 1) {
            line(I, "%s = reshape(%s, %s)", v, src[0], dims_list(I, &st));
        } else {
            line(I, "%s = %s", v, zeros_of(I, &st));
            for (int d = 0; d < dirs; d++)
                line(I, layout ? "%s[:, %d] = %s" : "%s[%d] = %s", v, d, src[d]);
        }
        bind(I, nm, &st, v, NULL);
    }
    for (size_t k = (kind == 'L' ? 3 : 2); k < n->n_output; k++)
        if (n->output[k] && *n->output[k])
            fail(I, "%s has no output %zu", op, k);
}

/* ---- losses and the training ops ------------------------------------------------------------- */

/* NegativeLogLikelihoodLoss's input [N, C, d1, ..., dk] (or SoftmaxCrossEntropyLoss's), its
 * classes moved last: [N, d1, ..., dk, C], so that the sums over them are products with ones */
static const char *classes_last(imp *I, const char *x, const cfx_type *xt, cfx_type *pt)
{
    int r = xt->rank, perm[CFX_TYPE_MAX_RANK];
    *pt = *xt;
    if (r == 2)
        return x;
    perm[0] = 0;
    for (int d = 1; d < r - 1; d++)
        perm[d] = d + 1;
    perm[r - 1] = 1;
    for (int d = 0; d < r; d++)
        pt->dims[d] = xt->dims[perm[d]];
    return fmt(I, "permute(%s, %s)", x, perm_text(I, perm, r));
}

/* The loss of the losses' ops, from lp, the log-probabilities with the classes last (an
 * expression read once), as ONNX's reference computes it: each target's -lp, times the weight of
 * its class; 0 for a target equal to ignore_index; reduced by none, sum, or mean (the sum divided
 * by the sum of the weights picked where there are weights or an ignore_index, else by the count).
 * The pick is a comparison of the targets with a table of the classes (a target of no class
 * picks nothing). A target outside 0 to C - 1 that is not ignore_index stops the run with
 * `index`: its smallest and largest start a one-element slice of that table, which the run
 * checks. */
static void loss_of(imp *I, const Onnx__NodeProto *n, const char *lp, const cfx_type *xt, ival *t, ival *w)
{
    int r = xt->rank;
    int64_t C = xt->dims[1];
    const char *dts = cfx_dtype_name(xt->dtype);
    if (t->ty.dtype != CFX_I32 && t->ty.dtype != CFX_I64)
        fail(I, "the target is %s, not integers", tystr(I, &t->ty));
    int ok = t->ty.rank == r - 1 && t->ty.dims[0] == xt->dims[0];
    for (int d = 1; ok && d < r - 1; d++)
        ok = t->ty.dims[d] == xt->dims[d + 1];
    if (!ok)
        fail(I, "the target is %s for an input %s: it must have the input's shape without dimension 1 (the "
             "classes)", tystr(I, &t->ty), tystr(I, xt));
    if (w && (w->ty.rank != 1 || w->ty.dims[0] != C || w->ty.dtype != xt->dtype))
        fail(I, "the weight is %s; it must be %s[%lld], one per class", tystr(I, &w->ty), dts, (long long)C);
    const char *red = attr_str(I, n, "reduction", "mean");
    int mode = !strcmp(red, "none") ? 0 : !strcmp(red, "sum") ? 1 : !strcmp(red, "mean") ? 2 : -1;
    if (mode < 0)
        fail(I, "reduction '%s' is not supported (none, sum, mean are)", clean(I, red));
    int has_ii = attr(I, n, "ignore_index") != NULL;
    int64_t ii = attr_int(I, n, "ignore_index", 0);
    if (has_ii && (t->ty.dtype == CFX_I32 ? ii < INT32_MIN || ii > INT32_MAX : ii == INT64_MIN))
        has_ii = 0; /* no target equals it: nothing is ignored, and the mean is the same */
    int64_t *cls = alloc(I, (size_t)C * sizeof *cls);
    for (int64_t c = 0; c < C; c++)
        cls[c] = c;
    const char *nm = out_name(I, n, 0), *ts = ref(I, t);
    const char *table = index_table(I, fmt(I, "%s_classes", nm), cls, C);
    const char *keep = NULL, *tc = ts, *tk = ts; /* kept targets; for the check; for the pick */
    if (has_ii) {
        keep = new_id(I, "keep_", nm);
        tk = new_id(I, "tk_", nm);
        line(I, "%s = %s != %lld", keep, ts, (long long)ii);
        if (!t->data) {
            tc = new_id(I, "tc_", nm);
            line(I, "%s = where(%s, %s, 0)", tc, keep, ts);
        }
        line(I, "%s = where(%s, %s, -1)", tk, keep, ts);
    }
    for (int64_t i = 0; t->data && i < count(&t->ty); i++) { /* known targets are checked here */
        int64_t v = geti(t, i);
        if ((!has_ii || v != ii) && (v < 0 || v >= C))
            fail(I, "target %lld is out of range for %lld classes", (long long)v, (long long)C);
    }
    if (!t->data) {
        const char *lo = new_id(I, "lo_", nm), *hi = new_id(I, "hi_", nm), *ck = new_id(I, "ck_", nm);
        line(I, "%s = min(%s)", lo, tc);
        line(I, "%s = max(%s)", hi, tc);
        line(I, "%s = %s[%s:%s + 1]", ck, table, lo, lo);
        line(I, "%s = %s[%s:%s + 1]", ck, table, hi, hi);
    }
    cfx_type kt = t->ty; /* the targets with a last dimension of 1, against the classes */
    kt.rank = r;
    kt.dims[r - 1] = 1;
    const char *m = new_id(I, "m_", nm), *wt = NULL;
    line(I, "%s = %s == %s", m, reshaped(I, tk, &t->ty, &kt), table);
    if (w) {
        wt = new_id(I, "w_", nm);
        line(I, "%s = sum(where(%s, %s, 0.0), axis=-1)", wt, m, ref(I, w));
    } else if (has_ii) {
        wt = new_id(I, "w_", nm);
        line(I, "%s = cast(%s, %s)", wt, keep, dts);
    }
    const char *loss = fmt(I, "-sum(where(%s, %s, 0.0), axis=-1)", m, lp);
    if (wt)
        loss = fmt(I, "%s * %s", loss, wt);
    cfx_type lt = t->ty, st = mktype(xt->dtype, 0, NULL);
    lt.dtype = xt->dtype;
    if (mode == 0) {
        const char *v = out_var(I, n, 0, &lt);
        line(I, "%s = %s", v, loss);
    } else if (mode == 2 && wt) {
        const char *l = new_id(I, "l_", nm);
        line(I, "%s = %s", l, loss);
        const char *v = out_var(I, n, 0, &st);
        line(I, "%s = sum(%s) / sum(%s)", v, l, wt);
    } else {
        const char *v = out_var(I, n, 0, &st);
        line(I, "%s = %s(%s)", v, mode == 2 ? "mean" : "sum", loss);
    }
}

/* NegativeLogLikelihoodLoss: input [N, C] or [N, C, d1, ..., dk] (rank at most 5), target of
 * run time [N] or [N, d1, ..., dk], optional weight [C] */
static void op_nll_loss(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *t = in(I, n, 1), *w = in_opt(I, n, 2);
    if (!is_real(x->ty.dtype) || x->ty.rank < 2)
        fail(I, "the input is %s; it must be reals [N, C] or [N, C, d1, ...]", tystr(I, &x->ty));
    cfx_type pt;
    loss_of(I, n, classes_last(I, ref(I, x), &x->ty, &pt), &x->ty, t, w);
}

/* SoftmaxCrossEntropyLoss: the log-softmax over the classes (LogSoftmax's steps, the classes
 * moved last), then NegativeLogLikelihoodLoss's loss; its optional log_prob output moved back */
static void op_sce_loss(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *t = in(I, n, 1), *w = in_opt(I, n, 2);
    int r = x->ty.rank;
    if (!is_real(x->ty.dtype) || r < 2)
        fail(I, "the input is %s; it must be reals [N, C] or [N, C, d1, ...]", tystr(I, &x->ty));
    const char *nm = out_name(I, n, 0);
    cfx_type pt;
    const char *xp = classes_last(I, ref(I, x), &x->ty, &pt);
    if (r > 2) {
        const char *p = new_id(I, "xp_", nm);
        line(I, "%s = %s", p, xp);
        xp = p;
    }
    int want_lp = n->n_output > 1 && n->output[1] && *n->output[1];
    const char *mx = new_id(I, "mx_", nm), *d = new_id(I, "d_", nm);
    const char *lp = want_lp && r == 2 ? out_var(I, n, 1, &x->ty) : new_id(I, "lp_", nm);
    line(I, "%s = max(%s, axis=-1, keepdims=True)", mx, xp);
    line(I, "%s = %s", d, half_rounded(I, x->half, fmt(I, "%s - %s", xp, mx)));
    const char *s = half_rounded(I, x->half, fmt(I, "sum(%s, axis=-1, keepdims=True)",
                                                 half_rounded(I, x->half, fmt(I, "exp(%s)", d))));
    line(I, "%s = %s - %s", lp, d, half_rounded(I, x->half, fmt(I, "log(%s)", s)));
    loss_of(I, n, lp, &x->ty, t, w);
    if (want_lp && r > 2) {
        int inv[CFX_TYPE_MAX_RANK];
        inv[0] = 0;
        inv[1] = r - 1;
        for (int k = 2; k < r; k++)
            inv[k] = k - 1;
        const char *v = out_var(I, n, 1, &x->ty);
        line(I, "%s = permute(%s, %s)", v, lp, perm_text(I, inv, r));
    }
}

/* The training ops of ai.onnx.preview.training, as ONNX's reference computes them: the rate R and
 * the step T are scalars of run time (the rate's adjustment computed in f64, as the reference's
 * numpy does, and cast to the tensors' type), then elementwise formulas for each of the n tensors
 * the node updates. kind: 'g' Adagrad (R, T, X..., G..., H... -> X'..., H'...), 'a' Adam (R, T,
 * X..., G..., V..., H... -> X'..., V'..., H'...), 'm' Momentum (R, T, X..., G..., V... -> X'...,
 * V'...). */
static void op_training(imp *I, const Onnx__NodeProto *n, char kind)
{
    size_t per = kind == 'a' ? 4 : 3, nt = n->n_input >= 2 ? (n->n_input - 2) / per : 0;
    if (nt < 1 || n->n_input != 2 + per * nt)
        fail(I, "%zu inputs; R, T and %zu tensors for each one updated are taken", n->n_input, per);
    if (n->n_output != (per - 1) * nt)
        fail(I, "%zu outputs for %zu tensors updated; %zu are taken", n->n_output, nt, (per - 1) * nt);
    ival *r = in(I, n, 0), *t = in(I, n, 1);
    if (!is_real(r->ty.dtype) || count(&r->ty) != 1 || (t->ty.dtype != CFX_I64 && t->ty.dtype != CFX_I32) ||
        count(&t->ty) != 1)
        fail(I, "R is %s and T %s; a real and an integer, one element each, are taken", tystr(I, &r->ty),
             tystr(I, &t->ty));
    cfx_type one = mktype(r->ty.dtype, 0, NULL), onet = mktype(t->ty.dtype, 0, NULL);
    const char *nm = out_name(I, n, 0);
    const char *rv = fmt(I, "cast(%s, f64)", reshaped(I, ref(I, r), &r->ty, &one));
    const char *tv = reshaped(I, ref(I, t), &t->ty, &onet), *tf = fmt(I, "cast(%s, f64)", tv);
    double nc = attr_float(I, n, "norm_coefficient", 0.0);
    const char *mode = kind == 'm' ? attr_str(I, n, "mode", "standard") : "";
    if (kind == 'm' && strcmp(mode, "standard") && strcmp(mode, "nesterov"))
        fail(I, "mode '%s' is not supported (standard, nesterov)", mode);
    const char *rate = new_id(I, "rate_", nm);
    double alpha = attr_float(I, n, "alpha", kind == 'a' ? 0.9 : 0.0);
    double beta = attr_float(I, n, "beta", kind == 'a' ? 0.999 : 0.0);
    double eps = attr_float(I, n, "epsilon", 1e-6);
    if (kind == 'g') {
        double decay = attr_float(I, n, "decay_factor", 0.0);
        line(I, "%s = %s / (1.0 + %s * %s)", rate, rv, tf, real_const(I, decay, CFX_F64, fmt(I, "%s_decay", nm)));
    } else if (kind == 'a') {
        const char *a = real_const(I, alpha, CFX_F64, fmt(I, "%s_alpha", nm));
        const char *b = real_const(I, beta, CFX_F64, fmt(I, "%s_beta", nm));
        line(I, "%s = (%s * sqrt(1.0 - pow(%s, %s)) / (1.0 - pow(%s, %s))) if %s > 0 else %s", rate, rv, b, tf, a,
             tf, tv, rv);
    } else {
        /* the gradient's coefficient: beta, or 1 at the first step */
        line(I, "%s = %s if %s > 0 else 1.0", rate, real_const(I, beta, CFX_F64, fmt(I, "%s_beta", nm)), tv);
    }
    for (size_t k = 0; k < nt; k++) {
        ival *x = in(I, n, 2 + k), *g = in(I, n, 2 + nt + k), *v = in(I, n, 2 + 2 * nt + k);
        ival *h = kind == 'a' ? in(I, n, 2 + 3 * nt + k) : NULL;
        cfx_dtype dt = x->ty.dtype;
        if (!is_real(dt) || !same_type(&g->ty, &x->ty) || !same_type(&v->ty, &x->ty) || (h && !same_type(&h->ty, &x->ty)))
            fail(I, "tensor %zu is %s with %s and %s; reals of one type are taken", k, tystr(I, &x->ty),
                 tystr(I, &g->ty), tystr(I, &v->ty));
        const char *dn = cfx_dtype_name(dt), *xs = ref(I, x), *gs = ref(I, g), *vs = ref(I, v);
        const char *gr = new_id(I, "gr_", nm);
        line(I, "%s = %s * %s + %s", gr, real_const(I, nc, dt, fmt(I, "%s_norm", nm)), xs, gs);
        if (kind == 'g') {
            const char *hn = out_var(I, n, nt + k, &x->ty);
            line(I, "%s = %s + %s * %s", hn, vs, gr, gr);
            const char *xn = out_var(I, n, k, &x->ty);
            line(I, "%s = %s - cast(%s, %s) * %s / (sqrt(%s) + %s)", xn, xs, rate, dn, gr, hn,
                 real_const(I, eps, dt, fmt(I, "%s_epsilon", nm)));
        } else if (kind == 'a') {
            double post = attr_float(I, n, "norm_coefficient_post", 0.0);
            const char *vn = out_var(I, n, nt + k, &x->ty);
            line(I, "%s = %s * %s + %s * %s", vn, real_const(I, alpha, dt, fmt(I, "%s_alpha", nm)), vs,
                 real_const(I, 1.0 - alpha, dt, fmt(I, "%s_1_alpha", nm)), gr);
            const char *hn = out_var(I, n, 2 * nt + k, &x->ty);
            line(I, "%s = %s * %s + %s * (%s * %s)", hn, real_const(I, beta, dt, fmt(I, "%s_beta", nm)), ref(I, h),
                 real_const(I, 1.0 - beta, dt, fmt(I, "%s_1_beta", nm)), gr, gr);
            const char *xn = out_var(I, n, k, &x->ty);
            line(I, "%s = %s * (%s - cast(%s, %s) * (%s / (sqrt(%s) + %s)))", xn,
                 real_const(I, 1.0 - post, dt, fmt(I, "%s_1_post", nm)), xs, rate, dn, vn, hn,
                 real_const(I, eps, dt, fmt(I, "%s_epsilon", nm)));
        } else {
            const char *al = real_const(I, alpha, dt, fmt(I, "%s_alpha", nm));
            const char *vn = out_var(I, n, nt + k, &x->ty);
            line(I, "%s = %s * %s + cast(%s, %s) * %s", vn, al, vs, rate, dn, gr);
            const char *xn = out_var(I, n, k, &x->ty);
            if (!strcmp(mode, "standard"))
                line(I, "%s = %s - cast(%s, %s) * %s", xn, xs, rv, dn, vn);
            else
                line(I, "%s = %s - cast(%s, %s) * (%s + %s * %s)", xn, xs, rv, dn, gr, al, vn);
        }
    }
}

/* ---- the windows, DFT, STFT and MelWeightMatrix ---------------------------------------------- */

/* HannWindow, HammingWindow, BlackmanWindow: the window of the size known at import, computed
 * there (in f64, as ONNX's reference, then in output_datatype): kind 'n' Hann, 'm' Hamming, 'b'
 * Blackman. */
static void op_window(imp *I, const Onnx__NodeProto *n, char kind)
{
    int64_t size = known_int(I, n, 0, "the size");
    if (size < 1 || size > ((int64_t)1 << 24))
        fail(I, "the size is %lld; 1 to 2^24 are taken", (long long)size);
    int half = 0;
    cfx_dtype dt = dtype_of(I, (int32_t)attr_int(I, n, "output_datatype", 1), "the output_datatype", &half);
    int periodic = (int)attr_int(I, n, "periodic", 1);
    double N1 = (double)(periodic ? size : size - 1), pi = 3.14159265358979323846;
    cfx_type t = mktype(dt, 1, &size);
    void *data = new_data(I, &t);
    for (int64_t i = 0; i < size; i++) {
        double k = (double)i, w;
        if (kind == 'n')
            w = sin(k * pi / N1) * sin(k * pi / N1);
        else if (kind == 'm')
            w = 25.0 / 46.0 - cos(k * pi * 2 / N1) * (1 - 25.0 / 46.0);
        else
            w = cos(k * (pi * 2) / N1) * -0.5 + cos(k * (pi * 4) / N1) * 0.08 + 0.42;
        setd(dt, data, i, w);
    }
    out_known(I, n, 0, &t, data);
    I->node_half = half;
}

/* The DFT of x ([..., L, ..., 1 or 2]: real, or real and imaginary parts last) along axis, of
 * length N, as numpy's fft, ifft and irfft (inverse and onesided): each part of the result a sum
 * of products of x's parts with [L', K] matrices of cos and sin known at import (L' the positions
 * of x used: x is cut or padded with zeros to N), the axis moved last for the product and back.
 * Writes the result into v (of dft_type's type). */
static cfx_type dft_type(imp *I, const cfx_type *xt, int axis, int64_t N, int inverse, int onesided)
{
    int r = xt->rank;
    if (r < 2 || (xt->dims[r - 1] != 1 && xt->dims[r - 1] != 2) || axis >= r - 1)
        fail(I, "the input is %s with axis %d; [..., n, ..., 1 or 2] with the axis before the last is taken",
             tystr(I, xt), axis);
    if (!is_real(xt->dtype))
        fail(I, "the input is %s, not real", tystr(I, xt));
    if (N < 1 || N > ((int64_t)1 << 20))
        fail(I, "the DFT's length is %lld; 1 to 2^20 are taken", (long long)N);
    cfx_type t = *xt;
    t.dims[axis] = !inverse && onesided ? N / 2 + 1 : N;
    t.dims[r - 1] = inverse && onesided ? 1 : 2;
    return t;
}

static void dft_emit(imp *I, const char *x, const cfx_type *xt, int axis, int64_t N, int inverse,
                     int onesided, const char *nm, const char *v, const cfx_type *ot)
{
    int r = xt->rank, parts_in = (int)xt->dims[r - 1], parts_out = (int)ot->dims[r - 1];
    int64_t L = xt->dims[axis], K = ot->dims[axis];
    int64_t used = inverse && onesided ? N / 2 + 1 : N;
    if (used > L)
        used = L;
    if (used * K > ((int64_t)1 << 22))
        fail(I, "a DFT matrix of %lld by %lld; at most 2^22 entries are made", (long long)used, (long long)K);
    double pi = 3.14159265358979323846, sign = inverse ? 1.0 : -1.0, scale = inverse ? 1.0 / (double)N : 1.0;
    /* m[o][i]: the [used, K] matrix taking part i of x to part o of the result */
    const char *m[2][2] = {{NULL, NULL}, {NULL, NULL}};
    for (int o = 0; o < parts_out; o++)
        for (int i = 0; i < parts_in; i++) {
            cfx_type mt = mktype(xt->dtype, 2, (int64_t[]){used, K});
            void *data = new_data(I, &mt);
            for (int64_t j = 0; j < used; j++)
                for (int64_t k = 0; k < K; k++) {
                    double th = sign * 2 * pi * (double)((j * k) % N) / (double)N;
                    double c = cos(th) * scale, s = sin(th) * scale;
                    if (inverse && onesided) /* irfft: the bins past the first counted twice, once conjugated */
                        c *= j == 0 || 2 * j == N ? 1 : 2, s *= j == 0 || 2 * j == N ? 0 : 2;
                    /* (a + ib)(c + is): re = ac - bs, im = as + bc */
                    setd(mt.dtype, data, j * K + k, o == 0 ? (i == 0 ? c : -s) : (i == 0 ? s : c));
                }
            ival mv = {.name = fmt(I, "%s_dft%d%d", nm, o, i), .ty = mt, .data = data};
            m[o][i] = ref(I, &mv);
        }
    /* x's parts, the axis moved last, cut to the positions used */
    int perm[CFX_TYPE_MAX_RANK], inv[CFX_TYPE_MAX_RANK], np = 0;
    for (int d = 0; d < r - 1; d++)
        if (d != axis)
            perm[np++] = d;
    perm[np++] = axis;
    for (int d = 0; d < r - 1; d++)
        inv[perm[d]] = d;
    const char *y[2];
    for (int o = 0; o < parts_out; o++) {
        const char *sum = NULL;
        for (int i = 0; i < parts_in; i++) {
            const char *p = fmt(I, "%s%s", x, subscript(I, r, r - 1, i ? "1" : "0"));
            if (axis != r - 2)
                p = fmt(I, "permute(%s, %s)", p, perm_text(I, perm, r - 1));
            if (used < L)
                p = fmt(I, "%s%s", p, subscript(I, r - 1, r - 2, fmt(I, "0:%lld", (long long)used)));
            const char *term = fmt(I, "%s @ %s", p, m[o][i]);
            sum = sum ? fmt(I, "%s + %s", sum, term) : term;
        }
        y[o] = new_id(I, o ? "im_" : "re_", nm);
        line(I, "%s = %s", y[o], sum);
        if (axis != r - 2)
            y[o] = fmt(I, "permute(%s, %s)", y[o], perm_text(I, inv, r - 1));
        cfx_type one = *ot, flat = *ot;
        one.dims[r - 1] = 1;
        flat.rank = r - 1;
        y[o] = reshaped(I, y[o], &flat, &one);
    }
    if (parts_out == 1)
        line(I, "%s = %s", v, y[0]);
    else
        line(I, "%s = concat((%s, %s), axis=%d)", v, y[0], y[1], r - 1);
}

/* DFT (opsets 17 to 20): dft_length and (opset 20) the axis known at import. */
static void op_dft(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    int r = x->ty.rank;
    int64_t ax = I->opset >= 20 ? (has_input(n, 2) ? known_int(I, n, 2, "the axis") : -2) : attr_int(I, n, "axis", 1);
    int axis = norm_axis(I, ax, r, "axis");
    int inverse = (int)attr_int(I, n, "inverse", 0), onesided = (int)attr_int(I, n, "onesided", 0);
    if (axis == r - 1)
        fail(I, "axis %d is the last, the parts of each complex number", axis);
    if (!inverse && onesided && x->ty.dims[r - 1] == 2)
        fail(I, "onesided of a complex input is not supported (a real input is taken)");
    int64_t L = r >= 2 ? x->ty.dims[axis] : 0;
    int64_t N = has_input(n, 1) ? known_int(I, n, 1, "the dft_length") : inverse && onesided ? 2 * (L - 1) : L;
    cfx_type t = dft_type(I, &x->ty, axis, N, inverse, onesided);
    const char *nm = out_name(I, n, 0), *xs = ref(I, x);
    const char *v = out_var(I, n, 0, &t);
    dft_emit(I, xs, &x->ty, axis, N, inverse, onesided, nm, v, &t);
}

/* STFT: frame_step and frame_length known at import, the window of run time or none; each frame
 * x[:, f * step : f * step + length] copied in a loop into [batch, frames, length, parts], times
 * the window, then the DFT along the frame's axis (onesided: the first length / 2 + 1 bins). */
static void op_stft(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *w = in_opt(I, n, 2);
    int64_t step = known_int(I, n, 1, "the frame_step");
    int onesided = (int)attr_int(I, n, "onesided", 1);
    if (x->ty.rank != 3 || (x->ty.dims[2] != 1 && x->ty.dims[2] != 2) || !is_real(x->ty.dtype))
        fail(I, "the signal is %s; reals [batch, length, 1 or 2] are taken", tystr(I, &x->ty));
    if (w && (w->ty.rank != 1 || w->ty.dtype != x->ty.dtype))
        fail(I, "the window is %s for the signal %s", tystr(I, &w->ty), tystr(I, &x->ty));
    int64_t len = has_input(n, 3) ? known_int(I, n, 3, "the frame_length") : w ? w->ty.dims[0] : x->ty.dims[1];
    if (w && w->ty.dims[0] != len)
        fail(I, "the window is %s for a frame_length of %lld", tystr(I, &w->ty), (long long)len);
    if (onesided && x->ty.dims[2] == 2)
        fail(I, "onesided of a complex signal is not supported (a real signal is taken)");
    int64_t B = x->ty.dims[0], T = x->ty.dims[1], P = x->ty.dims[2];
    if (step < 1 || len < 1 || len > T)
        fail(I, "frame_step %lld and frame_length %lld for %lld samples", (long long)step, (long long)len,
             (long long)T);
    int64_t F = 1 + (T - len) / step;
    const char *nm = out_name(I, n, 0), *xs = ref(I, x);
    cfx_type ft = mktype(x->ty.dtype, 4, (int64_t[]){B, F, len, P});
    const char *fr = new_id(I, "frames_", nm), *f = new_id(I, "f_", nm);
    line(I, "%s = %s", fr, zeros_of(I, &ft));
    line(I, "for %s in range(%lld) {", f, (long long)F);
    I->indent++;
    line(I, "%s[:, %s] = %s[:, %s * %lld:%s * %lld + %lld]", fr, f, xs, f, (long long)step, f, (long long)step,
         (long long)len);
    I->indent--;
    line(I, "}");
    if (w) {
        cfx_type wt = mktype(x->ty.dtype, 2, (int64_t[]){len, 1});
        line(I, "%s = %s * %s", fr, fr, reshaped(I, ref(I, w), &w->ty, &wt));
    }
    cfx_type t = dft_type(I, &ft, 2, len, 0, onesided);
    const char *v = out_var(I, n, 0, &t);
    dft_emit(I, fr, &ft, 2, len, 0, onesided, nm, v, &t);
}

/* MelWeightMatrix: computed at import from its inputs, known there, as ONNX's reference. */
static void op_mel_weight_matrix(imp *I, const Onnx__NodeProto *n)
{
    int64_t bins = known_int(I, n, 0, "num_mel_bins"), dft = known_int(I, n, 1, "dft_length");
    int64_t rate = known_int(I, n, 2, "sample_rate");
    ival *lo = known(I, n, 3, "lower_edge_hertz"), *hi = known(I, n, 4, "upper_edge_hertz");
    if (count(&lo->ty) != 1 || count(&hi->ty) != 1)
        fail(I, "the edges are %s and %s, not one value each", tystr(I, &lo->ty), tystr(I, &hi->ty));
    if (bins < 1 || dft < 1 || rate < 1 || bins > 4096 || dft > ((int64_t)1 << 20))
        fail(I, "num_mel_bins %lld, dft_length %lld, sample_rate %lld", (long long)bins, (long long)dft,
             (long long)rate);
    int half = 0;
    cfx_dtype dt = dtype_of(I, (int32_t)attr_int(I, n, "output_datatype", 1), "the output_datatype", &half);
    int64_t spec = dft / 2 + 1;
    if (spec * bins > ((int64_t)1 << 24))
        fail(I, "a matrix of %lld by %lld; at most 2^24 entries are made", (long long)spec, (long long)bins);
    double lmel = 2595 * log1p(getd(lo, 0) / 700) / log(10.0), hmel = 2595 * log1p(getd(hi, 0) / 700) / log(10.0);
    double stepm = (hmel - lmel) / (double)(bins + 2);
    int64_t *fb = alloc(I, (size_t)(bins + 2) * sizeof *fb);
    for (int64_t i = 0; i < bins + 2; i++) {
        double f = 700 * expm1(((double)i * stepm + lmel) / 2595 * log(10.0));
        double at = floor((double)(dft + 1) * f / (double)rate);
        if (!(at >= -1e15 && at <= 1e15))
            fail(I, "the edges %g and %g Hz give a mel bin at %g", getd(lo, 0), getd(hi, 0), at);
        fb[i] = (int64_t)at;
    }
    cfx_type t = mktype(dt, 2, (int64_t[]){spec, bins});
    double *out = alloc(I, (size_t)(spec * bins) * sizeof *out);
    for (int64_t i = 0; i < spec * bins; i++)
        out[i] = 0;
    for (int64_t i = 0; i < bins; i++) {
        int64_t l = fb[i], c = fb[i + 1], h = fb[i + 2];
        if (l < 0 || h >= spec || c < l || h < c)
            fail(I, "mel bin %lld spans the spectrogram's bins %lld to %lld, outside 0 to %lld", (long long)i,
                 (long long)l, (long long)h, (long long)(spec - 1));
        if (c == l)
            out[c * bins + i] = 1;
        else
            for (int64_t j = l; j <= c; j++)
                out[j * bins + i] = (double)(j - l) / (double)(c - l);
        for (int64_t j = c; j < h; j++)
            out[j * bins + i] = (double)(h - j) / (double)(h - c);
    }
    void *data = new_data(I, &t);
    for (int64_t i = 0; i < spec * bins; i++)
        setd(dt, data, i, out[i]);
    out_known(I, n, 0, &t, data);
    I->node_half = half;
}

/* ---- ai.onnx.ml: Binarizer, ArrayFeatureExtractor, TreeEnsemble and LabelEncoder ------------- */

/* Binarizer (ai.onnx.ml): 1 where x > threshold, else 0, in x's type. */
static void op_binarizer(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    if (x->ty.dtype == CFX_BOOL)
        fail(I, "the input is %s, not numbers", tystr(I, &x->ty));
    const char *nm = out_name(I, n, 0);
    const char *th = real_const(I, attr_float(I, n, "threshold", 0.0), x->ty.dtype, fmt(I, "%s_threshold", nm));
    const char *v = out_var(I, n, 0, &x->ty);
    line(I, "%s = cast(%s > %s, %s)", v, ref(I, x), th, cfx_dtype_name(x->ty.dtype));
}

/* ArrayFeatureExtractor (ai.onnx.ml): the elements of x's last axis at the indices (of run time,
 * flattened), a loop writing one column each; [1, n] of a vector, as ONNX's reference and
 * onnxruntime. An index outside the axis stops the run with `index`. */
static void op_array_feature_extractor(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0), *ix = in(I, n, 1);
    int r = x->ty.rank;
    if (r < 1 || ix->ty.rank < 1 || (ix->ty.dtype != CFX_I64 && ix->ty.dtype != CFX_I32))
        fail(I, "the data %s and indices %s: a tensor and integer indices are taken", tystr(I, &x->ty),
             tystr(I, &ix->ty));
    int64_t A = count(&ix->ty);
    cfx_type xt = x->ty;
    if (r == 1)
        xt = mktype(x->ty.dtype, 2, (int64_t[]){1, x->ty.dims[0]});
    cfx_type t = xt, it = mktype(ix->ty.dtype, 1, &A);
    t.dims[xt.rank - 1] = A;
    const char *nm = out_name(I, n, 0), *xs = reshaped(I, ref(I, x), &x->ty, &xt);
    const char *is = reshaped(I, ref(I, ix), &ix->ty, &it), *k = new_id(I, "k_", nm);
    const char *v = out_var(I, n, 0, &t);
    line(I, "%s = %s", v, zeros_of(I, &t));
    line(I, "for %s in range(%lld) {", k, (long long)A);
    I->indent++;
    line(I, "%s%s = %s%s", v, subscript(I, t.rank, t.rank - 1, k), plain_id(xs) ? xs : fmt(I, "(%s)", xs),
         subscript(I, t.rank, t.rank - 1, fmt(I, "%s[%s]", plain_id(is) ? is : fmt(I, "(%s)", is), k)));
    I->indent--;
    line(I, "}");
}

/* A tree ensemble's attribute of numbers, given as a tensor or as a list (floats, ints): into
 * vals[0 .. *len) as doubles; NULL (and *len 0) when absent. */
static double *te_values(imp *I, const Onnx__NodeProto *n, const char *name, int64_t *len)
{
    const Onnx__AttributeProto *a = attr(I, n, name);
    *len = 0;
    if (!a)
        return NULL;
    if (a->t) {
        cfx_type t;
        int half;
        ival v = {.name = name};
        v.data = tensor_data(I, a->t, &t, &half);
        v.ty = t;
        *len = count(&t);
        double *out = alloc(I, (size_t)(*len + 1) * sizeof *out);
        for (int64_t k = 0; k < *len; k++)
            out[k] = getd(&v, k);
        return out;
    }
    *len = (int64_t)(a->n_floats ? a->n_floats : a->n_ints);
    double *out = alloc(I, (size_t)(*len + 1) * sizeof *out);
    for (int64_t k = 0; k < *len; k++)
        out[k] = a->n_floats ? (double)a->floats[k] : (double)a->ints[k];
    return out;
}

typedef struct te {
    const double *splits, *feat, *modes, *tid, *tleaf, *fid, *fleaf, *ltarget, *lweight, *miss, *members;
    int64_t nnodes, nleaves, nmembers, *member_at, nwritten, ntargets;
    const char *x, *res, *nm, *agg;
    cfx_dtype dt;
    int ntrees;
} te;

/* The rows of X that reach node k (of a tree, leaf when `leaf`) are those where `mask` is true:
 * a node's condition splits them between its branches, a leaf adds its weight to its target. */
static void te_walk(imp *I, te *T, double kd, int leaf, const char *mask, int depth)
{
    if (depth > 64 || ++T->nwritten > 4096)
        fail(I, "the trees are deeper than 64 or have more than 4096 nodes in all");
    if (!(kd >= 0 && kd < (double)(leaf ? T->nleaves : T->nnodes)))
        fail(I, "%s %g is outside the %lld %s", leaf ? "leaf" : "node", kd,
             (long long)(leaf ? T->nleaves : T->nnodes), leaf ? "leaves" : "nodes");
    int64_t k = (int64_t)kd;
    if (leaf) {
        if (!(T->ltarget[k] >= 0 && T->ltarget[k] < (double)T->ntargets))
            fail(I, "leaf %lld's target %g is outside the %lld targets", (long long)k, T->ltarget[k],
                 (long long)T->ntargets);
        int64_t t = (int64_t)T->ltarget[k];
        double w = T->lweight[k] / (!strcmp(T->agg, "avg") ? T->ntrees : 1);
        const char *wc = real_const(I, w, T->dt, fmt(I, "%s_leaf%lld", T->nm, (long long)k));
        const char *col = fmt(I, "%s[:, %lld]", T->res, (long long)t);
        if (!strcmp(T->agg, "sum") || !strcmp(T->agg, "avg"))
            line(I, "%s = %s + where(%s, %s, 0.0)", col, col, mask, wc);
        else
            line(I, "%s = where(%s, %s(%s, %s), %s)", col, mask, T->agg, col, wc, col);
        return;
    }
    if (!(T->modes[k] >= 0 && T->modes[k] <= 6))
        fail(I, "node %lld has mode %g; 0 to 6 are taken", (long long)k, T->modes[k]);
    int mode = (int)T->modes[k];
    const char *xv = fmt(I, "%s[:, %lld]", T->x, (long long)T->feat[k]);
    const char *sp = real_const(I, T->splits[k], CFX_F64, fmt(I, "%s_split%lld", T->nm, (long long)k));
    const char *c;
    static const char *const cmp[] = {"<=", "<", ">=", ">", "==", "!="};
    if (mode >= 0 && mode <= 5) {
        c = fmt(I, "(%s %s %s)", xv, cmp[mode], sp);
    } else if (mode == 6) {
        c = NULL;
        for (int64_t j = T->member_at[k]; j < T->nmembers && !isnan(T->members[j]); j++) {
            const char *e = fmt(I, "(%s == %s)", xv, real_const(I, T->members[j], CFX_F64, fmt(I, "%s_member", T->nm)));
            c = c ? fmt(I, "%s or %s", c, e) : e;
        }
        if (!c)
            c = fmt(I, "zeros(bool[%s.shape[0]])", T->x);
        c = fmt(I, "(%s)", c);
    } else {
        fail(I, "node %lld has mode %d; 0 to 6 are taken", (long long)k, mode);
    }
    if (T->miss && T->miss[k] != 0)
        c = fmt(I, "(%s or (%s != %s))", c, xv, xv);
    const char *cv = new_id(I, "cond_", T->nm), *tm = new_id(I, "m_", T->nm), *fm = new_id(I, "m_", T->nm);
    line(I, "%s = %s", cv, c);
    line(I, "%s = %s and %s", tm, mask, cv);
    line(I, "%s = %s and not %s", fm, mask, cv);
    te_walk(I, T, T->tid[k], T->tleaf[k] != 0, tm, depth + 1);
    te_walk(I, T, T->fid[k], T->fleaf[k] != 0, fm, depth + 1);
}

/* TreeEnsemble (ai.onnx.ml, opset 5): the trees, known at import, unrolled into masks of the rows
 * reaching each node (the conditions compared in f64, as the reference's Python floats), each
 * leaf's weight added (aggregate_function SUM, AVERAGE) or taken the least or largest (MIN, MAX) into
 * its target's column, tree after tree. post_transform NONE only. */
static void op_tree_ensemble(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    cfx_dtype dt = x->ty.dtype;
    if (!is_real(dt) || x->ty.rank != 2)
        fail(I, "X is %s; reals [N, features] are taken", tystr(I, &x->ty));
    if (attr_int(I, n, "post_transform", 0) != 0)
        fail(I, "post_transform %lld is not supported (0, none)", (long long)attr_int(I, n, "post_transform", 0));
    int64_t agg = attr_int(I, n, "aggregate_function", 1), nt = attr_int(I, n, "n_targets", 0);
    static const char *const aggs[] = {"avg", "sum", "min", "max"};
    if (agg < 0 || agg > 3 || nt < 1 || nt > ((int64_t)1 << 20))
        fail(I, "aggregate_function %lld and n_targets %lld: 0 to 3 and a positive count are taken", (long long)agg,
             (long long)nt);
    te T = {.dt = dt, .agg = aggs[agg], .nm = out_name(I, n, 0), .ntargets = nt};
    int64_t l[11];
    T.splits = te_values(I, n, "nodes_splits", &l[0]);
    T.feat = te_values(I, n, "nodes_featureids", &l[1]);
    T.modes = te_values(I, n, "nodes_modes", &l[2]);
    T.tid = te_values(I, n, "nodes_truenodeids", &l[3]);
    T.tleaf = te_values(I, n, "nodes_trueleafs", &l[4]);
    T.fid = te_values(I, n, "nodes_falsenodeids", &l[5]);
    T.fleaf = te_values(I, n, "nodes_falseleafs", &l[6]);
    T.ltarget = te_values(I, n, "leaf_targetids", &l[7]);
    T.lweight = te_values(I, n, "leaf_weights", &l[8]);
    T.miss = te_values(I, n, "nodes_missing_value_tracks_true", &l[9]);
    T.members = te_values(I, n, "membership_values", &l[10]);
    T.nnodes = l[0];
    T.nleaves = l[7];
    T.nmembers = l[10];
    for (int k = 1; k < 7; k++)
        if (l[k] != T.nnodes)
            fail(I, "the nodes' attributes have %lld and %lld entries", (long long)T.nnodes, (long long)l[k]);
    if (l[8] != T.nleaves || (T.miss && l[9] != T.nnodes) || T.nnodes < 1)
        fail(I, "the leaves' or nodes' attributes differ in length");
    for (int64_t k = 0; k < T.nnodes; k++)
        if (!(T.feat[k] >= 0 && T.feat[k] < (double)x->ty.dims[1]))
            fail(I, "node %lld reads feature %g of %lld", (long long)k, T.feat[k], (long long)x->ty.dims[1]);
    /* where each membership node's set starts: the sets follow one another, each ended by a NaN */
    T.member_at = alloc(I, (size_t)(T.nnodes + 1) * sizeof *T.member_at);
    for (int64_t k = 0, at = 0; k < T.nnodes; k++) {
        T.member_at[k] = at;
        if (T.modes[k] == 6) {
            if (!T.members)
                fail(I, "node %lld tests membership and there are no membership_values", (long long)k);
            while (at < T.nmembers && !isnan(T.members[at]))
                at++;
            at++;
        }
    }
    size_t nr;
    const int64_t *roots = attr_ints(I, n, "tree_roots", &nr);
    if (!roots || nr < 1)
        fail(I, "tree_roots is missing");
    T.ntrees = (int)nr;
    int64_t N = x->ty.dims[0];
    cfx_type t = mktype(dt, 2, (int64_t[]){N, nt});
    T.x = new_id(I, "xf_", T.nm);
    T.res = out_var(I, n, 0, &t);
    line(I, "%s = cast(%s, f64)", T.x, ref(I, x));
    double big = dt == CFX_F32 ? 3.4028234663852886e38 : 1.7976931348623157e308; /* finfo(dtype).max */
    double init = agg == 2 ? big : agg == 3 ? -big : 0;
    line(I, "%s = full(%s, %s)", T.res, tystr(I, &t), real_const(I, init, dt, fmt(I, "%s_init", T.nm)));
    for (size_t r = 0; r < nr; r++) {
        int64_t k = roots[r];
        if (k < 0 || k >= T.nnodes)
            fail(I, "tree root %lld is outside the %lld nodes", (long long)k, (long long)T.nnodes);
        int leaf = T.tleaf[k] != 0 && T.fleaf[k] != 0 && T.tid[k] == T.fid[k];
        te_walk(I, &T, leaf ? T.tid[k] : (double)k, leaf, fmt(I, "ones(bool[%lld])", (long long)N), 0);
    }
}

/* A LabelEncoder's keys or values (attribute `name`: floats, ints or a tensor) as a value known at
 * import; its data NULL when absent. */
static ival le_values(imp *I, const Onnx__NodeProto *n, const char *name)
{
    const Onnx__AttributeProto *a = attr(I, n, name);
    ival v = {.name = name};
    if (!a)
        return v;
    if (a->t) {
        v.data = tensor_data(I, a->t, &v.ty, &v.half);
        return v;
    }
    int64_t len = (int64_t)(a->n_floats ? a->n_floats : a->n_ints);
    v.ty = mktype(a->n_floats ? CFX_F32 : CFX_I64, 1, &len);
    v.data = new_data(I, &v.ty);
    copy(v.data, a->n_floats ? (void *)a->floats : (void *)a->ints, (size_t)len * (a->n_floats ? 4 : 8));
    return v;
}

/* element k of known value v as a constant of dtype dt (integers kept exact) */
static const char *le_const(imp *I, const ival *v, int64_t k, cfx_dtype dt, const char *why)
{
    cfx_type t = mktype(dt, 0, NULL);
    void *data = new_data(I, &t);
    if (is_real(dt) || is_real(v->ty.dtype))
        setd(dt, data, 0, getd(v, k));
    else
        seti(dt, data, 0, geti(v, k));
    ival c = {.name = why, .ty = t, .data = data};
    return ref(I, &c);
}

/* LabelEncoder (ai.onnx.ml, opsets 2 to 4) of numbers: the keys and values known at import (a key
 * given twice takes its last value, as the reference's dict), a `where` for each key over the
 * default; string keys or values refused. */
static void op_label_encoder(imp *I, const Onnx__NodeProto *n)
{
    ival *x = in(I, n, 0);
    if (attr(I, n, "keys_strings") || attr(I, n, "values_strings") || attr(I, n, "default_string"))
        fail(I, "string keys or values are not supported (cfx has no strings)");
    ival keys = le_values(I, n, attr(I, n, "keys_floats") ? "keys_floats" : attr(I, n, "keys_int64s") ? "keys_int64s"
                                                                                                   : "keys_tensor");
    const char *vn = attr(I, n, "values_floats") ? "values_floats" : attr(I, n, "values_int64s") ? "values_int64s"
                   : "values_tensor";
    ival vals = le_values(I, n, vn);
    int64_t nk = keys.data ? count(&keys.ty) : 0, nv = vals.data ? count(&vals.ty) : 0;
    if (nk != nv || nk < 1 || nk > 256 || keys.half || vals.half || keys.ty.dtype == CFX_BOOL || vals.ty.dtype == CFX_BOOL)
        fail(I, "%lld keys and %lld values: one to 256 numbers of each, as many keys as values, are taken",
             (long long)nk, (long long)nv);
    cfx_dtype vt = vals.ty.dtype, kt = keys.ty.dtype;
    ival def = {.name = "default"};
    cfx_type one = mktype(vt, 0, NULL);
    def.ty = one;
    def.data = new_data(I, &one);
    if (vn[7] == 'f')
        setd(vt, def.data, 0, attr_float(I, n, "default_float", -0.0));
    else if (vn[7] == 'i')
        seti(vt, def.data, 0, attr_int(I, n, "default_int64", -1));
    else if (attr(I, n, "default_tensor") && attr(I, n, "default_tensor")->t)
        def = le_values(I, n, "default_tensor");
    if (def.ty.dtype != vt || count(&def.ty) < 1 || def.half)
        fail(I, "the default is %s for values of %s", tystr(I, &def.ty), cfx_dtype_name(vt));
    if (x->ty.dtype != kt || x->half)
        fail(I, "the input is %s for keys of %s", type_name(x), cfx_dtype_name(kt));
    const char *nm = out_name(I, n, 0), *xs = ref(I, x);
    cfx_type t = x->ty;
    t.dtype = vt;
    const char *dc = le_const(I, &def, 0, vt, fmt(I, "%s_default", nm)), *v = out_var(I, n, 0, &t);
    line(I, "%s = %s", v, t.rank == 0 ? dc : fmt(I, "full(%s, %s)", tystr(I, &t), dc));
    for (int64_t k = 0; k < nk; k++) {
        int later = 0; /* a key given again later takes that value */
        for (int64_t j = k + 1; j < nk; j++)
            later |= is_real(kt) ? getd(&keys, j) == getd(&keys, k) : geti(&keys, j) == geti(&keys, k);
        if (!later)
            line(I, "%s = where(%s == %s, %s, %s)", v, xs, le_const(I, &keys, k, kt, fmt(I, "%s_key", nm)),
                 le_const(I, &vals, k, vt, fmt(I, "%s_value", nm)), v);
    }
}

/* ---- sequences and optionals -------------------------------------------------------------- */

/* An ONNX sequence is a cfx list (docs/language.md, "Lists"): its items have one type, ty, and
 * the list a capacity fixed at compile time. A value that takes another from an old one (Insert,
 * Erase) appends or pops in place where the old one is read no more (the enclosing Loop's
 * variable, given by var_for), else copies it into a list of its own. An optional of a tensor is
 * a variable that may hold None; an optional of a sequence is the sequence. A sequence whose items
 * differ in shape is held item by item instead (SEQ_ITEMS, below). */
enum { SEQ_LIST = 1, SEQ_UNTYPED = 2, SEQ_ITEMS = 3 }; /* ival.seq: a list; an empty one of no item type

                                                       * yet; items held one by one (below) */
enum { OPT_MAY = 1, OPT_NONE = 2 };         /* ival.opt: may be None; is None */

#define SEQ_BASE ((int64_t)1 << 40)         /* slen of a loop's carried list: the length it entered with */

static int slen_known(const ival *s)
{
    return s->slen >= 0 && s->slen < SEQ_BASE / 2;
}

static ival *seq_bind(imp *I, const char *name, const cfx_type *item, const char *id, int seq, int64_t cap,
                      int64_t slen)
{
    ival *v = bind(I, name, item, id, NULL);
    v->seq = seq;
    v->cap = cap;
    v->slen = slen;
    return v;
}

static ival *seq_keep(ival *to, const ival *from)
{
    to->seq = from->seq;
    to->cap = from->cap;
    to->slen = from->slen;
    to->opt = from->opt;
    to->has = from->has;
    to->items = from->items;
    return to;
}

static ival *seq_in(imp *I, const Onnx__NodeProto *n, size_t k)
{
    ival *s = in(I, n, k);
    if (!s->seq)
        fail(I, "input %zu ('%s') is a tensor, not a sequence", k, s->name);
    return s;
}

/* The list variable for output k: the enclosing Loop's or If's own where it may take it, never
 * the graph's result (a sequence result is its items stacked, written at the end). */
static const char *seq_var(imp *I, const Onnx__NodeProto *n, size_t k)
{
    const char *name = out_name(I, n, k);
    const char *id = var_for(I, name);
    if (!strncmp(id, "out_", 4)) {
        for (int j = 0; j < I->ndirect; j++)
            if (!I->direct[j].id && I->direct[j].from < 0 && !strcmp(I->direct[j].name, name))
                I->direct[j].id = id;
        id = new_id(I, "s_", name);
    }
    return id;
}

/* A float16 or bfloat16 tensor (held in f32 and rounded by each node) is no list's item. */
static void seq_no_half(imp *I, const ival *x)
{
    if (x->half)
        fail(I, "'%s' is %s: a sequence of float16, bfloat16 or narrow integer items is not supported", x->name,
             half_types[x->half]);
}

/* Items of one type: the message names the node and the two shapes. */
static void seq_item(imp *I, const ival *s, const cfx_type *t, const char *what)
{
    if (s->seq == SEQ_UNTYPED ? s->ty.dtype != t->dtype : !same_type(&s->ty, t))
        fail(I, "sequence '%s' holds %s items and %s is %s: cfx's lists hold items of one type and shape",
             s->name, s->seq == SEQ_UNTYPED ? cfx_dtype_name(s->ty.dtype) : tystr(I, &s->ty), what, tystr(I, t));
}

/* A sequence whose items differ in shape, and whose length is known at import, is held item by
 * item (SEQ_ITEMS): each item a value of its own (a variable or known data; ty is the first's),
 * which the ops at positions known at import take one by one: SequenceAt reads one, Insert and
 * Erase make a new array of them, SequenceMap imports its body once per item, a Loop that grows
 * one is unrolled at import (op_loop). Where such a sequence meets a list's op (a position of
 * run time, a Loop that stays a loop, an If of run time) its items must have one shape: it is
 * then made a list (seq_list_of). A graph input given item by item (NAME[0], NAME[1], ...) is
 * one; a graph result of items of differing shapes comes back item by item (seq_item_results). */
static int seq_ragged(const ival *s)
{
    for (int64_t j = 1; s->seq == SEQ_ITEMS && j < s->slen; j++)
        if (!same_type(&s->items[j]->ty, &s->items[0]->ty))
            return 1;
    return 0;
}

/* The sequence of n items (n > 0; none: an empty one of dtype dt) bound to `name`. */
static ival *seq_items_bind(imp *I, const char *name, ival **items, int64_t n, cfx_dtype dt)
{
    cfx_type t = n ? items[0]->ty : (cfx_type){.dtype = dt};
    ival *v = bind(I, name, &t, NULL, NULL);
    v->seq = n ? SEQ_ITEMS : SEQ_UNTYPED;
    v->items = n ? items : NULL;
    v->cap = v->slen = n;
    return v;
}

/* An item of a sequence held item by item: known data as it is; a variable as it is, or where
 * copy_it (a value the graph may write again later, a Loop's variable) a copy of its own. */
static ival *seq_item_of(imp *I, ival *x, int copy_it)
{
    ival *v = alloc(I, sizeof *v);
    v->name = x->name;
    v->ty = x->ty;
    v->data = x->data;
    v->half = x->half;
    v->prev = -1;
    v->slen = -1;
    if (x->seq)
        fail(I, "'%s' is a sequence: a sequence holds tensors", x->name);
    if (!x->data && copy_it) {
        v->id = new_id(I, "v_", x->name);
        line(I, "%s = %s", v->id, ref(I, x));
    } else {
        v->id = x->id;
    }
    return v;
}

/* The items of a sequence whose length is known at import: a list's read into variables. */
static ival **seq_items_of(imp *I, ival *s)
{
    if (s->seq == SEQ_ITEMS)
        return s->items;
    if (!slen_known(s))
        fail(I, "the length of sequence '%s' must be known when the model is imported: its items differ in "
             "shape, and cfx holds such a sequence item by item", s->name);
    ival **items = alloc(I, (size_t)(s->slen + 1) * sizeof *items);
    for (int64_t j = 0; j < s->slen; j++) {
        ival *v = items[j] = alloc(I, sizeof *v);
        v->name = s->name;
        v->ty = s->ty;
        v->prev = -1;
        v->slen = -1;
        v->id = new_id(I, "v_", s->name);
        line(I, "%s = %s[%lld]", v->id, s->id, (long long)j);
    }
    return items;
}

/* A sequence held item by item as a list, for an op that takes one (`why`: what needs it): its
 * items must have one shape. Any other sequence as it is. */
static ival *seq_list_of(imp *I, ival *s, const char *why)
{
    if (s->seq != SEQ_ITEMS)
        return s;
    for (int64_t j = 1; j < s->slen; j++)
        if (!same_type(&s->items[j]->ty, &s->items[0]->ty))
            fail(I, "sequence '%s' holds items of differing shapes (%s and %s): %s needs them in a list, of one "
                 "shape (for such a sequence, held item by item, the positions, trip counts and conditions must be "
                 "known when the model is imported)", s->name, tystr(I, &s->items[0]->ty), tystr(I, &s->items[j]->ty),
                 why);
    ival *l = alloc(I, sizeof *l);
    *l = *s;
    l->seq = SEQ_LIST;
    l->items = NULL;
    l->id = new_id(I, "s_", s->name);
    line(I, "%s = list(%s, %lld)", l->id, tystr(I, &s->ty), (long long)s->slen);
    for (int64_t j = 0; j < s->slen; j++)
        line(I, "%s.append(%s)", l->id, ref(I, s->items[j]));
    return l;
}

/* A position known at import into a sequence of known length, in 0 to len - 1 (0 to len where
 * `end`: Insert's); p NULL: the end (Erase's last). */
static int64_t seq_pos_known(imp *I, const ival *s, ival *p, int end)
{
    if (!p)
        return end ? s->slen : s->slen - 1;
    if (is_real(p->ty.dtype) || p->ty.dtype == CFX_BOOL || count(&p->ty) != 1)
        fail(I, "the position is %s, not one integer", tystr(I, &p->ty));
    if (!p->data)
        fail(I, "the position ('%s') must be known when the model is imported: sequence '%s' holds items of "
             "differing shapes, which cfx holds item by item", p->name, s->name);
    int64_t k = geti(p, 0), n = s->slen;
    if (k < 0)
        k += n;
    if (k < 0 || k > n - !end)
        fail(I, "position %lld is outside the sequence '%s' of %lld items", (long long)geti(p, 0), s->name,
             (long long)n);
    return k;
}

/* A graph result held item by item whose items differ in shape: each item a result of its own,
 * NAME[0], NAME[1], ... (docs/onnx.md). 0 where v is no such sequence. */
static int seq_item_results(imp *I, ival *v, const char *name)
{
    if (!seq_ragged(v))
        return 0;
    if (v->has)
        line(I, "assert(%s, \"output '%s' is None: a cfx result is never None\")", v->has, clean(I, v->name));
    const Onnx__GraphProto *g = I->mp->graph;
    const char **names = alloc(I, ((size_t)I->nres + (size_t)v->slen + g->n_output + 1) * sizeof *names);
    copy(names, I->res_names, (size_t)I->nres * sizeof *names);
    I->res_names = names;
    for (int64_t j = 0; j < v->slen; j++) {
        ival *x = v->items[j];
        if (count(&x->ty) == 0)
            fail(I, "item %lld of sequence result '%s' has no elements: cfx has no tensors of 0 elements at run "
                 "time", (long long)j, name);
        seq_no_half(I, x);
        const char *id = new_id(I, "out_", fmt(I, "%s_%lld", name, (long long)j));
        sb_printf(&I->head, "%s%s: %s", I->nres ? ", " : "", id, tystr(I, &x->ty));
        line(I, "%s = %s", id, ref(I, x));
        I->res_names[I->nres++] = fmt(I, "%s[%lld]", name, (long long)j);
    }
    return 1;
}

/* dst = a new list of room cap with src's items (src may be dst: copied apart first); with
 * `item` inserted before position `pos` (an i32 expression, 0 to len), or with position `erase`
 * left out. */
static void seq_copy(imp *I, const char *dst, const ival *src, const cfx_type *t, int64_t cap, const char *pos,
                     const char *item, const char *erase)
{
    const char *from = src->id;
    if (from && !strcmp(from, dst)) {
        from = new_id(I, "t_", src->name);
        line(I, "%s = list(%s, %lld)", from, tystr(I, t), (long long)(src->cap > 0 ? src->cap : 1));
        const char *v = new_id(I, "v_", "item");
        line(I, "for %s in %s {", v, dst);
        line(I, "  %s.append(%s)", from, v);
        line(I, "}");
    }
    line(I, "%s = list(%s, %lld)", dst, tystr(I, t), (long long)(cap > 0 ? cap : 1));
    if (from) {
        const char *j = new_id(I, "j_", "item"), *v = new_id(I, "v_", "item");
        line(I, "for %s, %s in enumerate(%s) {", j, v, from);
        if (item)
            line(I, "  if %s == %s {", j, pos), line(I, "    %s.append(%s)", dst, item), line(I, "  }");
        if (erase)
            line(I, "  if %s != %s {", j, erase), line(I, "    %s.append(%s)", dst, v), line(I, "  }");
        else
            line(I, "  %s.append(%s)", dst, v);
        line(I, "}");
    }
    if (item)
        line(I, "if %s == %s {", pos, from ? fmt(I, "len(%s)", from) : "0"), line(I, "  %s.append(%s)", dst, item),
            line(I, "}");
}

/* A position input as an i32 expression, negative counted from len, checked in 0 to len - 1
 * (0 to len where `end` may be taken: Insert's). NULL where it is the end, known. */
static const char *seq_pos(imp *I, const ival *s, ival *p, int end)
{
    if (is_real(p->ty.dtype) || p->ty.dtype == CFX_BOOL || count(&p->ty) != 1)
        fail(I, "the position is %s, not one integer", tystr(I, &p->ty));
    const char *len = s->id ? fmt(I, "len(%s)", s->id) : "0";
    if (p->data && slen_known(s)) {
        int64_t k = geti(p, 0), n = s->slen;
        if (k < 0)
            k += n;
        if (k < 0 || k > n - !end)
            fail(I, "position %lld is outside the sequence '%s' of %lld items", (long long)geti(p, 0), s->name,
                 (long long)n);
        return end && k == n ? NULL : fmt(I, "%lld", (long long)k);
    }
    const char *v = new_id(I, "pos_", s->name);
    line(I, "%s = cast(%s, i32)", v, reshaped(I, ref(I, p), &p->ty, &(cfx_type){.dtype = p->ty.dtype}));
    line(I, "%s = %s + %s if %s < 0 else %s", v, v, len, v, v);
    line(I, "assert(0 <= %s and %s %s %s, \"%s: the position is outside the sequence\")", v, v, end ? "<=" : "<", len,
         clean(I, I->note ? I->note : ""));
    return v;
}

/* Where a tensor is made from a list (ConcatFromSequence, a graph's result): the items as the rows
 * of a tensor of s->slen rows, which must be known at import. */
static const char *seq_rows(imp *I, const ival *s, cfx_type *t, const char *dst)
{
    if (!slen_known(s))
        fail(I, "the length of sequence '%s' must be known when the model is imported: cfx makes a tensor of "
             "a list only where its length is known (a Loop that no condition ends, of a known trip count; a "
             "SequenceConstruct)", s->name);
    if (s->slen == 0 || s->seq == SEQ_UNTYPED)
        fail(I, "sequence '%s' is empty: cfx has no tensors of 0 elements", s->name);
    if (s->ty.rank + 1 > CFX_TYPE_MAX_RANK)
        fail(I, "the items of sequence '%s' have rank %d: stacked they would have rank %d, above cfx's %d", s->name,
             s->ty.rank, s->ty.rank + 1, CFX_TYPE_MAX_RANK);
    *t = s->ty;
    t->rank = s->ty.rank + 1;
    for (int d = s->ty.rank; d > 0; d--)
        t->dims[d] = s->ty.dims[d - 1];
    t->dims[0] = s->slen;
    if (s->cap == s->slen && !dst)
        return fmt(I, "stack(%s)", s->id);
    const char *r = dst ? dst : new_id(I, "rows_", s->name);
    if (s->cap == s->slen) {
        line(I, "%s = stack(%s)", r, s->id);
        return r;
    }
    const char *j = new_id(I, "j_", "item"), *v = new_id(I, "v_", "item");
    line(I, "%s = %s", r, zeros_of(I, t));
    line(I, "for %s, %s in enumerate(%s) {", j, v, s->id);
    line(I, "  %s[%s] = %s", r, j, v);
    line(I, "}");
    return r;
}

/* A graph's sequence result: its items stacked along a new first axis (docs/onnx.md). */
static ival *seq_result(imp *I, ival *v, const char *dst)
{
    if (!v->seq)
        return v;
    if (v->has)
        line(I, "assert(%s, \"output '%s' is None: a cfx result is never None\")", v->has, clean(I, v->name));
    v = seq_list_of(I, v, "a result"); /* items of one shape: stacked */
    cfx_type t;
    ival *o = alloc(I, sizeof *o);
    o->name = v->name;
    o->id = seq_rows(I, v, &t, dst);
    o->ty = t;
    return o;
}

/* The list of a Loop's carried sequence, made before the loop: room for what it enters with and
 * what the body's SequenceInserts (at any depth) add in `rows` iterations. */
static int seq_inserts(const Onnx__GraphProto *g)
{
    int n = 0;
    for (size_t k = 0; k < g->n_node; k++) {
        const Onnx__NodeProto *nd = g->node[k];
        n += nd && nd->op_type && !strcmp(nd->op_type, "SequenceInsert");
        for (size_t a = 0; nd && a < nd->n_attribute; a++)
            if (nd->attribute[a] && nd->attribute[a]->g)
                n += seq_inserts(nd->attribute[a]->g);
    }
    return n;
}

static int64_t seq_loop_cap(imp *I, const ival *init, const Onnx__GraphProto *body, const ival *M, const char *oname)
{
    int grows = seq_inserts(body);
    if (!grows)
        return init->cap > 0 ? init->cap : 1;
    if (!M || !M->data)
        fail(I, "loop-carried sequence '%s' grows in the Loop, whose trip count must be known when the model "
             "is imported: cfx's lists have a capacity fixed when the program is compiled (give the trip "
             "count's input)", oname);
    return (init->cap > 0 ? init->cap : 0) + geti(M, 0) * grows;
}

static void seq_loop_init(imp *I, const char *lc, const ival *init, const ival *out, int64_t cap)
{
    const ival *typed = init->seq == SEQ_LIST ? init : out;
    if (typed->seq != SEQ_LIST)
        fail(I, "loop-carried sequence '%s' is empty and the body gives it no items: its item type is not known",
             init->name);
    line(I, "%s = list(%s, %lld)", lc, tystr(I, &typed->ty), (long long)cap);
    if (init->id) {
        const char *v = new_id(I, "v_", "item");
        line(I, "for %s in %s {", v, init->id);
        line(I, "  %s.append(%s)", lc, v);
        line(I, "}");
    }
}

/* An If's output that the branches declare a sequence: a list variable of its own (never the
 * graph's result, which is the list stacked). */
static int seq_declared(const Onnx__ValueInfoProto *vi)
{
    const Onnx__TypeProto *t = vi ? vi->type : NULL;
    if (t && t->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && t->optional_type)
        t = t->optional_type->elem_type;
    return t && t->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
}

static int opt_seq_declared(const Onnx__ValueInfoProto *vi)
{
    const Onnx__TypeProto *t = vi ? vi->type : NULL;
    return t && t->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && seq_declared(vi);
}

/* An If branch's sequence output into the If's variable: a copy where the branch computed it
 * elsewhere. */
static void seq_branch_out(imp *I, const char *id, ival *o)
{
    if (o->seq == SEQ_UNTYPED && !o->id)
        fail(I, "a branch gives the empty sequence '%s', whose item type is not known", o->name);
    if (!o->id || strcmp(o->id, id) != 0)
        seq_copy(I, id, o, &o->ty, o->cap, NULL, NULL, NULL);
}

/* An optional graph input of a tensor: a parameter that defaults to None. */
static int opt_input_type(const Onnx__ValueInfoProto *vi)
{
    const Onnx__TypeProto *t = vi->type;
    return t && t->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && t->optional_type &&
           t->optional_type->elem_type &&
           t->optional_type->elem_type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
}

static void seq_type_of(imp *I, const Onnx__TypeProto *tp, cfx_type *t, int *isseq)
{
    *isseq = 0;
    while (tp && (tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE ||
                  tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE)) {
        *isseq |= tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
        tp = tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE
                 ? (tp->sequence_type ? tp->sequence_type->elem_type : NULL)
                 : (tp->optional_type ? tp->optional_type->elem_type : NULL);
    }
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        fail(I, "the 'type' attribute is not a tensor, a sequence or an optional of one");
    int half;
    memset(t, 0, sizeof *t);
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    t->dtype = dtype_of(I, tt->has_elem_type ? tt->elem_type : 0, "the 'type' attribute", &half);
    if (!tt->shape)
        t->rank = -1;
    else {
        t->rank = (int)tt->shape->n_dim;
        if (t->rank > CFX_TYPE_MAX_RANK)
            fail(I, "the 'type' attribute has rank %d", t->rank);
        for (int d = 0; d < t->rank; d++) {
            const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
            if (!dim || dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
                t->rank = -1;
            else
                t->dims[d] = dim->dim_value;
            if (t->rank < 0)
                break;
        }
    }
}

/* The nodes of g and of its subgraphs. */
static int64_t graph_nodes(const Onnx__GraphProto *g)
{
    int64_t n = 0;
    for (size_t k = 0; k < g->n_node; k++) {
        const Onnx__NodeProto *nd = g->node[k];
        n++;
        for (size_t a = 0; nd && a < nd->n_attribute; a++) {
            if (nd->attribute[a] && nd->attribute[a]->g)
                n += graph_nodes(nd->attribute[a]->g);
            for (size_t j = 0; nd->attribute[a] && j < nd->attribute[a]->n_graphs; j++)
                if (nd->attribute[a]->graphs[j])
                    n += graph_nodes(nd->attribute[a]->graphs[j]);
        }
    }
    return n;
}

/* SequenceMap over a sequence held item by item: the body imported once per item, given the
 * items at j of the sequences and the tensors as they are; each output held item by item. */
static void seq_map_items(imp *I, const Onnx__NodeProto *n)
{
    const Onnx__GraphProto *body = attr_graph(I, n, "body");
    const Onnx__NodeProto *self = n;
    int64_t opset = graph_opset_guard(I);
    ival *s = seq_in(I, n, 0);
    if (body->n_input != n->n_input || body->n_output != n->n_output)
        fail(I, "the body takes %zu inputs and gives %zu outputs; the node has %zu and %zu", body->n_input,
             body->n_output, n->n_input, n->n_output);
    int64_t len = s->slen;
    ival ***items = alloc(I, (n->n_input + 1) * sizeof *items), ***outs = alloc(I, (n->n_output + 1) * sizeof *outs);
    for (size_t k = 0; k < n->n_input; k++) {
        ival *x = in(I, n, k);
        if (!x->seq)
            continue;
        items[k] = seq_items_of(I, x);
        if (x->slen != len)
            fail(I, "the sequences '%s' and '%s' have %lld and %lld items", s->name, x->name, (long long)len,
                 (long long)x->slen);
    }
    int64_t nodes = graph_nodes(body) + 1;
    if (len > ONNX_UNROLL_MAX_NODES || I->unrolled + len * nodes > ONNX_UNROLL_MAX_NODES)
        fail(I, "sequence '%s' has %lld items of differing shapes, which cfx maps item by item: %lld items of %lld "
             "nodes are too many to unroll at import (at most %d nodes in all)", s->name, (long long)len,
             (long long)len, (long long)nodes, ONNX_UNROLL_MAX_NODES);
    I->unrolled += len * nodes;
    for (size_t k = 0; k < n->n_output; k++)
        outs[k] = alloc(I, (size_t)(len + 1) * sizeof *outs[k]);
    const char *note = I->note;
    for (int64_t j = 0; j < len; j++) {
        int base = scope_open(I);
        for (size_t k = 0; k < n->n_input; k++) {
            const char *bn = body->input[k] && body->input[k]->name ? body->input[k]->name : "";
            ival *x = in(I, n, k), *v = items[k] ? items[k][j] : x;
            seq_keep(bind(I, bn, &v->ty, v->id, v->data), items[k] ? &(ival){.slen = -1} : x)->half = v->half;
        }
        ival **got = subgraph_outputs(I, body, n);
        I->node = self;
        I->opset = opset;
        I->note = note;
        for (size_t k = 0; k < n->n_output; k++) {
            if (got[k]->seq)
                fail(I, "the body's output %zu ('%s') is a sequence: a sequence holds tensors", k, got[k]->name);
            seq_no_half(I, got[k]);
            outs[k][j] = seq_item_of(I, got[k], 0);
            if (j && got[k]->ty.dtype != outs[k][0]->ty.dtype)
                fail(I, "the body's output %zu is %s for item 0 and %s for item %lld", k,
                     tystr(I, &outs[k][0]->ty), tystr(I, &got[k]->ty), (long long)j);
        }
        scope_close(I, base);
    }
    for (size_t k = 0; k < n->n_output; k++)
        seq_items_bind(I, out_name(I, n, k), outs[k], len, len ? outs[k][0]->ty.dtype : s->ty.dtype);
    I->depth--;
}

/* SequenceMap: the body run for each item of the first sequence (`for j, v in enumerate(s)`),
 * given the items at j of the other sequences and the tensors as they are; each output a list
 * the loop appends the body's result to, made before the loop once the body gives its type. */
static void seq_map(imp *I, const Onnx__NodeProto *n)
{
    for (size_t k = 0; k < n->n_input; k++)
        if (has_input(n, k) && in(I, n, k)->seq == SEQ_ITEMS) {
            seq_map_items(I, n);
            return;
        }
    const Onnx__GraphProto *body = attr_graph(I, n, "body");
    const Onnx__NodeProto *self = n;
    int64_t opset = graph_opset_guard(I);
    ival *s = seq_in(I, n, 0);
    if (body->n_input != n->n_input || body->n_output != n->n_output)
        fail(I, "the body takes %zu inputs and gives %zu outputs; the node has %zu and %zu", body->n_input,
             body->n_output, n->n_input, n->n_output);
    if (s->seq == SEQ_UNTYPED || !s->id)
        fail(I, "sequence '%s' has no item type known here", s->name);
    ival **ins = alloc(I, (n->n_input + 1) * sizeof *ins);
    for (size_t k = 0; k < n->n_input; k++) {
        ins[k] = in(I, n, k);
        if (ins[k]->seq && (ins[k]->seq == SEQ_UNTYPED || !ins[k]->id))
            fail(I, "sequence '%s' has no item type known here", ins[k]->name);
        if (k && ins[k]->seq && slen_known(s) && slen_known(ins[k]) && ins[k]->slen != s->slen)
            fail(I, "the sequences '%s' and '%s' have %lld and %lld items", s->name, ins[k]->name,
                 (long long)s->slen, (long long)ins[k]->slen);
    }
    const char *note = I->note, *j = new_id(I, "j_", "item");
    const char **item = alloc(I, (n->n_input + 1) * sizeof *item);
    for (size_t k = 1; k < n->n_input; k++)
        if (ins[k]->seq && !(slen_known(s) && slen_known(ins[k])))
            line(I, "assert(len(%s) == len(%s), \"SequenceMap '%s': the sequences have different lengths\")",
                 ins[k]->id, s->id, clean(I, self->name && *self->name ? self->name : out_name(I, n, 0)));
    const char **outs_id = alloc(I, (n->n_output + 1) * sizeof *outs_id);
    for (size_t k = 0; k < n->n_output; k++)
        outs_id[k] = seq_var(I, n, k);
    body_apart(I);
    I->indent++;
    int base = scope_open(I);
    for (size_t k = 0; k < n->n_input; k++) {
        const char *bn = body->input[k] && body->input[k]->name ? body->input[k]->name : "";
        if (!ins[k]->seq) {
            seq_keep(bind(I, bn, &ins[k]->ty, ins[k]->id, ins[k]->data), ins[k])->half = ins[k]->half;
            continue;
        }
        item[k] = new_id(I, "v_", bn);
        if (k)
            line(I, "%s = %s[%s]", item[k], ins[k]->id, j);
        bind(I, bn, &ins[k]->ty, item[k], NULL);
    }
    ival **outs = subgraph_outputs(I, body, n);
    I->node = self;
    I->opset = opset;
    I->note = note;
    cfx_type *ot = alloc(I, (n->n_output + 1) * sizeof *ot);
    for (size_t k = 0; k < n->n_output; k++) {
        if (outs[k]->seq)
            fail(I, "the body's output %zu ('%s') is a sequence: cfx's lists hold tensors", k, outs[k]->name);
        seq_no_half(I, outs[k]);
        ot[k] = outs[k]->ty;
        line(I, "%s.append(%s)", outs_id[k], ref(I, outs[k]));
    }
    scope_close(I, base);
    I->indent--;
    body_back(I);
    for (size_t k = 0; k < n->n_output; k++)
        line(I, "%s = list(%s, %lld)", outs_id[k], tystr(I, &ot[k]), (long long)(s->cap > 0 ? s->cap : 1));
    line(I, "for %s, %s in enumerate(%s) {", j, item[0], s->id);
    body_join(I);
    line(I, "}");
    for (size_t k = 0; k < n->n_output; k++)
        seq_bind(I, out_name(I, n, k), &ot[k], outs_id[k], SEQ_LIST, s->cap, s->slen);
    I->depth--;
}

/* The sequence and optional ops, and Identity of either; 0 for any other node. */
static int seq_op(imp *I, const Onnx__NodeProto *n)
{
    const char *op = n->op_type;
    if (!strcmp(op, "Identity") && has_input(n, 0) && lookup(I, n->input[0]) &&
        (lookup(I, n->input[0])->seq || lookup(I, n->input[0])->opt)) {
        ival *s = in(I, n, 0);
        if (!s->seq) {
            seq_keep(bind(I, out_name(I, n, 0), &s->ty, s->id, s->data), s);
            return 1;
        }
        if ((s->seq == SEQ_UNTYPED && !s->id) || s->seq == SEQ_ITEMS) { /* the same items */
            seq_keep(bind(I, out_name(I, n, 0), &s->ty, NULL, NULL), s);
            return 1;
        }
        if (s->seq == SEQ_UNTYPED)
            fail(I, "sequence '%s' has no item type known here", s->name);
        const char *id = seq_var(I, n, 0);
        if (!s->id || strcmp(s->id, id) != 0)
            seq_copy(I, id, s, &s->ty, s->cap, NULL, NULL, NULL);
        seq_bind(I, out_name(I, n, 0), &s->ty, id, SEQ_LIST, s->cap, s->slen);
    } else if (!strcmp(op, "SequenceEmpty")) {
        int half;
        cfx_type t = {.dtype = dtype_of(I, (int32_t)attr_int(I, n, "dtype", 1), "the 'dtype' attribute", &half)};
        seq_bind(I, out_name(I, n, 0), &t, NULL, SEQ_UNTYPED, 0, 0);
    } else if (!strcmp(op, "SequenceConstruct")) {
        if (n->n_input == 0)
            fail(I, "SequenceConstruct takes at least one tensor");
        ival *first = in(I, n, 0);
        int ragged = 0;
        for (size_t j = 1; j < n->n_input; j++)
            ragged |= !in(I, n, j)->seq && in(I, n, j)->ty.dtype == first->ty.dtype &&
                      !same_type(&in(I, n, j)->ty, &first->ty);
        if (ragged) { /* items of differing shapes: held item by item */
            ival **items = alloc(I, (n->n_input + 1) * sizeof *items);
            for (size_t j = 0; j < n->n_input; j++) {
                ival *x = in(I, n, j);
                seq_no_half(I, x);
                if (x->ty.dtype != first->ty.dtype)
                    fail(I, "input %zu ('%s') is %s and input 0 %s: a sequence's items have one type", j, x->name,
                         tystr(I, &x->ty), tystr(I, &first->ty));
                items[j] = seq_item_of(I, x, 1);
            }
            seq_items_bind(I, out_name(I, n, 0), items, (int64_t)n->n_input, first->ty.dtype);
            return 1;
        }
        const char *id = seq_var(I, n, 0);
        line(I, "%s = list(%s, %zu)", id, tystr(I, &first->ty), n->n_input);
        ival tmp = {.name = out_name(I, n, 0), .ty = first->ty, .seq = SEQ_LIST};
        for (size_t j = 0; j < n->n_input; j++) {
            ival *x = in(I, n, j);
            if (x->seq)
                fail(I, "input %zu ('%s') is a sequence: a sequence holds tensors", j, x->name);
            seq_no_half(I, x);
            seq_item(I, &tmp, &x->ty, fmt(I, "input %zu ('%s')", j, x->name));
            line(I, "%s.append(%s)", id, ref(I, x));
        }
        seq_bind(I, out_name(I, n, 0), &first->ty, id, SEQ_LIST, (int64_t)n->n_input, (int64_t)n->n_input);
    } else if (!strcmp(op, "SequenceInsert")) {
        ival *s = seq_in(I, n, 0), *x = in(I, n, 1), *p = in_opt(I, n, 2);
        if (x->seq)
            fail(I, "the tensor to insert ('%s') is a sequence", x->name);
        seq_no_half(I, x);
        if (s->seq == SEQ_ITEMS && !seq_ragged(s) && p && !p->data && same_type(&s->ty, &x->ty))
            s = seq_list_of(I, s, "SequenceInsert at a position of run time");
        if (s->seq == SEQ_ITEMS || (s->seq == SEQ_LIST && slen_known(s) && s->ty.dtype == x->ty.dtype &&
                                    !same_type(&s->ty, &x->ty))) { /* item by item */
            if (s->ty.dtype != x->ty.dtype)
                fail(I, "sequence '%s' holds %s items and the tensor inserted ('%s') is %s", s->name,
                     cfx_dtype_name(s->ty.dtype), x->name, tystr(I, &x->ty));
            int64_t at = seq_pos_known(I, s, p, 1);
            ival **old = seq_items_of(I, s), **items = alloc(I, (size_t)(s->slen + 2) * sizeof *items);
            copy(items, old, (size_t)at * sizeof *items);
            items[at] = seq_item_of(I, x, 1);
            copy(items + at + 1, old + at, (size_t)(s->slen - at) * sizeof *items);
            seq_items_bind(I, out_name(I, n, 0), items, s->slen + 1, s->ty.dtype);
            return 1;
        }
        seq_item(I, s, &x->ty, fmt(I, "the tensor inserted ('%s')", x->name));
        const char *pos = p ? seq_pos(I, s, p, 1) : NULL;
        const char *id = seq_var(I, n, 0);
        /* the same variable (a Loop's list, whose room counts every insert) keeps its room */
        int64_t cap = s->id && !strcmp(s->id, id) ? s->cap : s->cap + 1;
        if (!pos && s->id && !strcmp(s->id, id))
            line(I, "%s.append(%s)", id, ref(I, x));
        else if (!pos && !s->id)
            line(I, "%s = list(%s, 1)", id, tystr(I, &x->ty)), line(I, "%s.append(%s)", id, ref(I, x));
        else
            seq_copy(I, id, s, &x->ty, cap, pos ? pos : fmt(I, "len(%s)", s->id), ref(I, x), NULL);
        seq_bind(I, out_name(I, n, 0), &x->ty, id, SEQ_LIST, cap, s->slen >= 0 ? s->slen + 1 : -1);
    } else if (!strcmp(op, "SequenceErase")) {
        ival *s = seq_in(I, n, 0), *p = in_opt(I, n, 1);
        if (slen_known(s) && s->slen == 0)
            fail(I, "sequence '%s' is empty: nothing to erase", s->name);
        if (s->seq == SEQ_UNTYPED)
            fail(I, "sequence '%s' has no item type known here", s->name);
        if (s->seq == SEQ_ITEMS && (seq_ragged(s) || !p || p->data)) { /* item by item */
            int64_t at = seq_pos_known(I, s, p, 0);
            ival **items = alloc(I, (size_t)(s->slen + 1) * sizeof *items);
            copy(items, s->items, (size_t)at * sizeof *items);
            copy(items + at, s->items + at + 1, (size_t)(s->slen - at - 1) * sizeof *items);
            seq_items_bind(I, out_name(I, n, 0), items, s->slen - 1, s->ty.dtype);
            return 1;
        }
        s = seq_list_of(I, s, "SequenceErase");
        const char *pos = p ? seq_pos(I, s, p, 0) : NULL;
        if (pos && slen_known(s) && atoll(pos) == s->slen - 1 && pos[0] >= '0' && pos[0] <= '9')
            pos = NULL;
        const char *id = seq_var(I, n, 0);
        if (!pos && !strcmp(s->id, id))
            line(I, "%s.pop()", id);
        else
            seq_copy(I, id, s, &s->ty, s->cap, NULL, NULL, pos ? pos : fmt(I, "len(%s) - 1", s->id));
        seq_bind(I, out_name(I, n, 0), &s->ty, id, SEQ_LIST, s->cap, s->slen >= 0 ? s->slen - 1 : -1);
    } else if (!strcmp(op, "SequenceAt")) {
        ival *s = seq_in(I, n, 0), *p = in(I, n, 1);
        if (s->seq == SEQ_UNTYPED && !s->id)
            fail(I, "sequence '%s' is empty", s->name);
        if (s->seq == SEQ_UNTYPED)
            fail(I, "sequence '%s' has no item type known here", s->name);
        if (is_real(p->ty.dtype) || p->ty.dtype == CFX_BOOL || count(&p->ty) != 1)
            fail(I, "the position is %s, not one integer", tystr(I, &p->ty));
        if (s->seq == SEQ_ITEMS && (seq_ragged(s) || p->data)) { /* the item itself */
            ival *x = s->items[seq_pos_known(I, s, p, 0)];
            if (x->data) {
                out_known(I, n, 0, &x->ty, x->data);
            } else {
                const char *id = out_var(I, n, 0, &x->ty);
                line(I, "%s = %s", id, x->id);
            }
            lookup(I, out_name(I, n, 0))->half = x->half;
            return 1;
        }
        s = seq_list_of(I, s, "SequenceAt");
        /* a list's index counts from the end where negative and is checked (status index) */
        const char *pos = p->data ? fmt(I, "%lld", (long long)geti(p, 0))
                                  : fmt(I, "cast(%s, i32)", reshaped(I, ref(I, p), &p->ty, &(cfx_type){.dtype = p->ty.dtype}));
        const char *id = out_var(I, n, 0, &s->ty);
        line(I, "%s = %s[%s]", id, s->id, pos);
    } else if (!strcmp(op, "SequenceLength")) {
        ival *s = seq_in(I, n, 0);
        cfx_type t = mktype(CFX_I64, 0, NULL);
        if (slen_known(s)) {
            void *d = new_data(I, &t);
            seti(CFX_I64, d, 0, s->slen);
            out_known(I, n, 0, &t, d);
        } else {
            const char *id = out_var(I, n, 0, &t);
            line(I, "%s = cast(len(%s), i64)", id, s->id);
        }
    } else if (!strcmp(op, "ConcatFromSequence")) {
        ival *s = seq_in(I, n, 0);
        int newax = (int)attr_int(I, n, "new_axis", 0);
        if (seq_ragged(s) && !newax) { /* the language's concat of the items */
            int r = s->ty.rank, ax = norm_axis(I, attr_int(I, n, "axis", 0), r, "axis");
            cfx_type t = s->items[0]->ty;
            t.dims[ax] = 0;
            strbuf *parts = new_sb(I);
            for (int64_t j = 0; j < s->slen; j++) {
                ival *x = s->items[j];
                int fits = x->ty.rank == r;
                for (int d = 0; fits && d < r; d++)
                    fits = d == ax || x->ty.dims[d] == t.dims[d];
                if (!fits) {
                    sb_free(parts);
                    fail(I, "the items of sequence '%s' are %s and %s: they differ in a dimension besides axis %d",
                         s->name, tystr(I, &s->items[0]->ty), tystr(I, &x->ty), ax);
                }
                t.dims[ax] += x->ty.dims[ax];
                sb_printf(parts, "%s%s", j ? ", " : "", ref(I, x));
            }
            if (parts->oom)
                fail(I, "out of memory");
            const char *id = out_var(I, n, 0, &t);
            line(I, "%s = concat((%s), axis=%d)", id, sb_str(parts), ax);
            sb_free(parts);
            return 1;
        }
        if (seq_ragged(s))
            fail(I, "the items of sequence '%s' are %s and %s: new_axis stacks them, which needs items of one "
                 "shape", s->name, tystr(I, &s->items[0]->ty), tystr(I, &s->items[1]->ty));
        s = seq_list_of(I, s, "ConcatFromSequence");
        cfx_type st;
        const char *rows = seq_rows(I, s, &st, NULL);
        int r = s->ty.rank, ax = (int)attr_int(I, n, "axis", 0);
        if (!newax && r == 0)
            fail(I, "the items are scalars: concatenating them needs new_axis = 1");
        ax = norm_axis(I, ax, newax ? r + 1 : r, "axis");
        /* the stacked axis moved to `ax`, then (no new axis) merged with the item's axis ax */
        int perm[CFX_TYPE_MAX_RANK];
        cfx_type pt = st;
        for (int d = 0, j = 1; d <= r; d++) {
            perm[d] = d == ax ? 0 : j++;
            pt.dims[d] = st.dims[perm[d]];
        }
        const char *e = ax == 0 ? rows : fmt(I, "transpose(%s, %s)", rows, perm_text(I, perm, r + 1));
        cfx_type t = pt;
        if (!newax) {
            t.rank = r;
            for (int d = 0; d < r; d++)
                t.dims[d] = d < ax ? pt.dims[d] : d == ax ? pt.dims[ax] * pt.dims[ax + 1] : pt.dims[d + 1];
            e = reshaped(I, e, &pt, &t);
        }
        const char *id = out_var(I, n, 0, &t);
        line(I, "%s = %s", id, e);
    } else if (!strcmp(op, "SplitToSequence")) {
        ival *x = in(I, n, 0), *sp = in_opt(I, n, 1);
        if (x->ty.rank == 0)
            fail(I, "the input is a scalar");
        seq_no_half(I, x);
        int ax = norm_axis(I, attr_int(I, n, "axis", 0), x->ty.rank, "axis");
        int keep = (int)attr_int(I, n, "keepdims", 1);
        int64_t len = x->ty.dims[ax], nparts = 0;
        int64_t *sizes = alloc(I, (size_t)(len + 1) * sizeof *sizes);
        if (!sp) {
            for (int64_t j = 0; j < len; j++)
                sizes[nparts++] = 1;
        } else {
            if (!sp->data)
                fail(I, "the split ('%s') must be known when the model is imported", sp->name);
            keep = 1;
            if (count(&sp->ty) == 1 && sp->ty.rank == 0) {
                int64_t c = geti(sp, 0);
                if (c <= 0)
                    fail(I, "the split %lld is not positive", (long long)c);
                for (int64_t at = 0; at < len; at += sizes[nparts - 1])
                    sizes[nparts++] = c <= len - at ? c : len - at;
            } else {
                int64_t sum = 0;
                for (int64_t j = 0; j < count(&sp->ty) && j < len; j++) {
                    int64_t size = geti(sp, j);
                    if (size < 0 || size > len)
                        fail(I, "split size %lld is outside 0 to %lld, the axis's length", (long long)size,
                             (long long)len);
                    sum += sizes[nparts++] = size;
                }
                if (sum != len || count(&sp->ty) > len)
                    fail(I, "the split sizes add up to %lld, the axis has %lld", (long long)sum, (long long)len);
            }
        }
        cfx_type t = x->ty;
        t.dims[ax] = sizes[0];
        int ragged = 0;
        for (int64_t j = 1; j < nparts; j++)
            ragged |= sizes[j] != sizes[0];
        if (ragged) { /* pieces of differing lengths (a split is given: kept dims): item by item */
            ival **items = alloc(I, (size_t)(nparts + 1) * sizeof *items);
            const char *xr = ref(I, x);
            for (int64_t j = 0, at = 0; j < nparts; at += sizes[j], j++) {
                ival *v = items[j] = alloc(I, sizeof *v);
                v->name = out_name(I, n, 0);
                v->ty = x->ty;
                v->ty.dims[ax] = sizes[j];
                v->prev = -1;
                v->slen = -1;
                v->id = new_id(I, "v_", v->name);
                line(I, "%s = %s", v->id, sub_dims(I, xr, x->ty.rank, ax, at, at + sizes[j]));
            }
            seq_items_bind(I, out_name(I, n, 0), items, nparts, x->ty.dtype);
            return 1;
        }
        cfx_type it = t;
        if (!keep) {
            it.rank--;
            for (int d = ax; d < it.rank; d++)
                it.dims[d] = t.dims[d + 1];
        }
        const char *id = seq_var(I, n, 0);
        line(I, "%s = list(%s, %lld)", id, tystr(I, &it), (long long)nparts);
        const char *xr = ref(I, x);
        for (int64_t j = 0, at = 0; j < nparts; at += sizes[j], j++)
            line(I, "%s.append(%s)", id, reshaped(I, sub_dims(I, xr, x->ty.rank, ax, at, at + sizes[j]), &t, &it));
        seq_bind(I, out_name(I, n, 0), &it, id, SEQ_LIST, nparts, nparts);
    } else if (!strcmp(op, "SequenceMap")) {
        seq_map(I, n);
    } else if (!strcmp(op, "Optional")) {
        if (has_input(n, 0)) {
            ival *x = in(I, n, 0);
            ival *o = bind(I, out_name(I, n, 0), &x->ty, x->id, x->data);
            seq_keep(o, x);
            if (!x->seq)
                o->opt = x->opt ? x->opt : OPT_MAY;
        } else {
            const Onnx__AttributeProto *a = attr(I, n, "type");
            if (!a || !a->tp)
                fail(I, "an empty Optional needs its 'type'");
            cfx_type t;
            int isseq;
            seq_type_of(I, a->tp, &t, &isseq);
            if (t.rank < 0)
                fail(I, "the 'type' attribute has no static shape");
            if (isseq) { /* an empty list of that type, known to be None */
                const char *id = seq_var(I, n, 0);
                line(I, "%s = list(%s, 1)", id, tystr(I, &t));
                seq_bind(I, out_name(I, n, 0), &t, id, SEQ_LIST, 1, 0)->opt = OPT_NONE;
            } else {
                bind(I, out_name(I, n, 0), &t, "None", NULL)->opt = OPT_NONE;
            }
        }
    } else if (!strcmp(op, "OptionalHasElement")) {
        ival *x = in_opt(I, n, 0);
        cfx_type t = mktype(CFX_BOOL, 0, NULL);
        if (x && x->opt == OPT_MAY && (x->seq ? x->has != NULL : x->id && !x->data)) {
            const char *id = out_var(I, n, 0, &t);
            line(I, "%s = %s", id, x->seq ? x->has : fmt(I, "%s is not None", x->id));
        } else {
            void *d = new_data(I, &t);
            seti(CFX_BOOL, d, 0, x && x->opt != OPT_NONE);
            out_known(I, n, 0, &t, d);
        }
    } else if (!strcmp(op, "OptionalGetElement")) {
        ival *x = in(I, n, 0);
        if (x->opt == OPT_NONE)
            fail(I, "optional '%s' is None here", x->name);
        if (x->seq && x->has)
            line(I, "assert(%s, \"optional '%s' is None\")", x->has, clean(I, x->name));
        ival *o = bind(I, out_name(I, n, 0), &x->ty, x->id, x->data);
        seq_keep(o, x);
        o->opt = 0; /* a tensor: reading a variable that holds None stops the run */
        o->has = NULL;
    } else {
        return 0;
    }
    return 1;
}

/* ---- control flow: If, Loop, Scan and the model's own functions ------------------------------ */

static int64_t graph_opset_guard(imp *I)
{
    if (++I->depth > ONNX_MAX_DEPTH)
        fail(I, "subgraphs nest deeper than %d", ONNX_MAX_DEPTH);
    return I->opset;
}

/* Emits a subgraph's nodes and returns its outputs' values (in the subgraph's scope, which the
 * caller closes after reading them). */
static ival **subgraph_outputs(imp *I, const Onnx__GraphProto *g, const Onnx__NodeProto *owner)
{
    ival **outs = alloc(I, (g->n_output + 1) * sizeof *outs);
    for (size_t k = 0; k < g->n_initializer; k++) {
        cfx_type t;
        int half;
        void *data = tensor_data(I, g->initializer[k], &t, &half);
        bind(I, g->initializer[k]->name ? g->initializer[k]->name : "", &t, NULL, data)->half = half;
    }
    emit_graph_nodes(I, g);
    I->node = owner; /* what follows is about the If, Loop or Scan that owns the subgraph */
    for (size_t k = 0; k < g->n_output; k++) {
        const char *name = g->output[k] && g->output[k]->name ? g->output[k]->name : "";
        outs[k] = lookup(I, name);
        if (!outs[k])
            fail(I, "the subgraph's output '%s' is computed by no node", name);
    }
    return outs;
}

static void op_if(imp *I, const Onnx__NodeProto *n)
{
    ival *c = in(I, n, 0);
    if (c->ty.dtype != CFX_BOOL || count(&c->ty) != 1)
        fail(I, "the condition is %s, not one bool", tystr(I, &c->ty));
    const Onnx__GraphProto *gs[2] = {attr_graph(I, n, "then_branch"), attr_graph(I, n, "else_branch")};
    const Onnx__NodeProto *self = n;
    /* the outputs' variables: an enclosing Loop's own where it may take them (var_for) */
    const char **ids = alloc(I, (n->n_output + 1) * sizeof *ids);
    int *outer = alloc(I, (n->n_output + 1) * sizeof *outer);
    if (!c->data)
        for (size_t k = 0; k < n->n_output; k++) {
            ids[k] = (k < gs[0]->n_output && seq_declared(gs[0]->output[k])) ||
                     (k < gs[1]->n_output && seq_declared(gs[1]->output[k]))
                         ? seq_var(I, n, k) : var_for(I, out_name(I, n, k));
            outer[k] = lookup_id(I, ids[k]);
        }
    int64_t opset = graph_opset_guard(I);
    for (int b = 0; b < 2; b++)
        if (gs[b]->n_output != n->n_output)
            fail(I, "the %s branch has %zu outputs, the node %zu", b ? "else" : "then", gs[b]->n_output,
                 n->n_output);
    if (c->data) { /* known: only the branch taken is imported */
        const Onnx__GraphProto *g = gs[geti(c, 0) ? 0 : 1];
        int base = scope_open(I);
        ival **outs = subgraph_outputs(I, g, n);
        ival *copies = alloc(I, (n->n_output + 1) * sizeof *copies);
        for (size_t k = 0; k < n->n_output; k++)
            copies[k] = *outs[k];
        scope_close(I, base);
        I->node = self;
        I->opset = opset;
        for (size_t k = 0; k < n->n_output; k++)
            seq_keep(bind(I, out_name(I, n, k), &copies[k].ty, copies[k].id, copies[k].data), &copies[k]);
        for (size_t k = 0; k < n->n_output; k++)
            lookup(I, out_name(I, n, k))->half = copies[k].half;
        I->depth--;
        return;
    }
    cfx_type *types = alloc(I, (n->n_output + 1) * sizeof *types);
    int *halves = alloc(I, (n->n_output + 1) * sizeof *halves);
    const char **refs = alloc(I, (n->n_output + 1) * sizeof *refs);
    ival *joined = alloc(I, (n->n_output + 1) * sizeof *joined); /* sequences' and optionals' */
    const char **has = alloc(I, (n->n_output + 1) * sizeof *has); /* optional sequences' flags */
    for (size_t k = 0; k < n->n_output; k++)
        if ((k < gs[0]->n_output && opt_seq_declared(gs[0]->output[k])) ||
            (k < gs[1]->n_output && opt_seq_declared(gs[1]->output[k])))
            has[k] = new_id(I, "has_", out_name(I, n, k));
    const char *note = I->note;
    line(I, "if %s {", ref(I, c));
    for (int b = 0; b < 2; b++) {
        if (b)
            line(I, "} else {");
        I->indent++;
        int base = scope_open(I);
        /* a variable that holds a live value (a loop's) is written once the branch reads it no more */
        for (size_t k = 0; k < n->n_output; k++)
            if (gs[b]->output[k] && gs[b]->output[k]->name)
                add_direct(I, gs[b]->output[k]->name, ids[k], I->depth, outer[k] ? last_use_of_id(I, gs[b], ids[k]) : -1);
        ival **outs = subgraph_outputs(I, gs[b], n);
        drop_direct(I, I->depth);
        I->node = self;
        I->opset = opset;
        I->note = note;
        for (size_t k = 0; k < n->n_output; k++) {
            if (outs[k]->seq == SEQ_ITEMS)
                outs[k] = seq_list_of(I, outs[k], "an If whose condition is of run time");
            if (b == 0) {
                types[k] = outs[k]->ty;
                halves[k] = outs[k]->half;
            } else if (!same_type(&types[k], &outs[k]->ty)) {
                fail(I, "output %zu ('%s') is %s in the then branch and %s in the else branch: the "
                     "branches cannot join", k, out_name(I, n, k), tystr(I, &types[k]), tystr(I, &outs[k]->ty));
            }
            if (b && !joined[k].seq != !outs[k]->seq)
                fail(I, "output %zu ('%s') is a sequence in one branch and a tensor in the other", k, out_name(I, n, k));
            joined[k].seq = outs[k]->seq;
            joined[k].cap = b && joined[k].cap > outs[k]->cap ? joined[k].cap : outs[k]->cap;
            int none = outs[k]->seq && outs[k]->opt == OPT_NONE; /* its length is no result's */
            if (!b)
                joined[k].slen = none ? -2 : outs[k]->slen;
            else if (!none)
                joined[k].slen = joined[k].slen == -2 || joined[k].slen == outs[k]->slen ? outs[k]->slen : -1;
            joined[k].opt = b && joined[k].opt ? OPT_MAY : outs[k]->opt ? OPT_MAY : 0;
            if (outs[k]->seq)
                seq_branch_out(I, ids[k], outs[k]);
            if (has[k] && outs[k]->seq)
                line(I, "%s = %s", has[k], none ? "False" : outs[k]->has ? outs[k]->has : "True");
            refs[k] = outs[k]->seq ? ids[k] : ref(I, outs[k]);
        }
        assign_all(I, ids, refs, n->n_output);
        scope_close(I, base);
        I->indent--;
    }
    line(I, "}");
    for (size_t k = 0; k < n->n_output; k++) {
        ival *o = bind(I, out_name(I, n, k), &types[k], ids[k], NULL);
        o->half = halves[k];
        joined[k].slen = joined[k].slen < -1 ? -1 : joined[k].slen;
        joined[k].has = joined[k].seq ? has[k] : NULL;
        joined[k].opt = joined[k].seq && !has[k] ? 0 : joined[k].opt;
        seq_keep(o, &joined[k]);
    }
    I->depth--;
}

/* The declared shape of a value named `name` in the model's graphs (outputs and value_info), for
 * lengths that depend on data. */
static int declared_type(imp *I, const Onnx__GraphProto *g, const char *name, cfx_type *t)
{
    int half;
    for (size_t k = 0; k < g->n_output; k++)
        if (g->output[k] && g->output[k]->name && !strcmp(g->output[k]->name, name))
            return value_info_type(I, g->output[k], 0, t, &half);
    for (size_t k = 0; k < g->n_value_info; k++)
        if (g->value_info[k] && g->value_info[k]->name && !strcmp(g->value_info[k]->name, name))
            return value_info_type(I, g->value_info[k], 0, t, &half);
    for (size_t k = 0; k < g->n_node; k++) {
        const Onnx__NodeProto *nd = g->node[k];
        for (size_t a = 0; nd && a < nd->n_attribute; a++) {
            const Onnx__AttributeProto *at = nd->attribute[a];
            if (at && at->g && declared_type(I, at->g, name, t))
                return 1;
            for (size_t j = 0; at && j < at->n_graphs; j++)
                if (at->graphs[j] && declared_type(I, at->graphs[j], name, t))
                    return 1;
        }
    }
    return 0;
}

/* Assigns targets[k] = values[k] for every k at once (a body's outputs may be its inputs). */
static void assign_all(imp *I, const char **targets, const char **values, size_t n)
{
    int clash = 0;
    for (size_t k = 0; k < n; k++)
        for (size_t j = 0; j < n; j++)
            clash |= j != k && strcmp(targets[k], values[k]) != 0 && !strcmp(values[k], targets[j]);
    const char **tmp = alloc(I, (n + 1) * sizeof *tmp);
    for (size_t k = 0; k < n; k++) {
        tmp[k] = values[k];
        if (clash && strcmp(targets[k], values[k]) != 0) {
            tmp[k] = new_id(I, "t_", targets[k]);
            line(I, "%s = %s", tmp[k], values[k]);
        }
    }
    for (size_t k = 0; k < n; k++)
        if (strcmp(targets[k], tmp[k]) != 0)
            line(I, "%s = %s", targets[k], tmp[k]);
}

/* A Loop as a cfx loop (a while over the body); a Loop that cannot be one, whose trip count is known,
 * is unrolled at import (op_loop). */
static void loop_rolled(imp *I, const Onnx__NodeProto *n)
{
    const Onnx__GraphProto *body = attr_graph(I, n, "body");
    const Onnx__NodeProto *self = n;
    int64_t opset = graph_opset_guard(I);
    ival *M = in_opt(I, n, 0), *C = in_opt(I, n, 1);
    size_t ncarried = n->n_input > 2 ? n->n_input - 2 : 0;
    if (body->n_input != ncarried + 2)
        fail(I, "the body takes %zu inputs for %zu loop-carried values", body->n_input, ncarried);
    if (body->n_output < ncarried + 1)
        fail(I, "the body gives %zu outputs for %zu loop-carried values", body->n_output, ncarried);
    size_t nscan = body->n_output - ncarried - 1;
    if (n->n_output != ncarried + nscan)
        fail(I, "the node has %zu outputs, the body %zu", n->n_output, ncarried + nscan);
    if (M && (is_real(M->ty.dtype) || M->ty.dtype == CFX_BOOL || count(&M->ty) != 1))
        fail(I, "the trip count is %s, not one integer", tystr(I, &M->ty));
    if (C && (C->ty.dtype != CFX_BOOL || count(&C->ty) != 1))
        fail(I, "the condition is %s, not one bool", tystr(I, &C->ty));
    const char *nm = self->name && *self->name ? self->name : out_name(I, n, 0);
    const char *it = new_id(I, "it_", nm), *cv = new_id(I, "cond_", nm);
    /* the counter, where the loop needs it: a trip count, scan outputs, a body that reads it */
    int counted = M || body->n_output > ncarried + 1 ||
                  (body->input[0] && body->input[0]->name && reads(body, body->input[0]->name));
    if (counted)
        line(I, "%s = cast(0, i64)", it);
    line(I, "%s = %s", cv, C ? ref(I, C) : "True");
    const char **lc = alloc(I, (ncarried + 1) * sizeof *lc);
    cfx_type *lt = alloc(I, (ncarried + 1) * sizeof *lt);
    int *lh = alloc(I, (ncarried + 1) * sizeof *lh);
    ival **ls = alloc(I, (ncarried + 1) * sizeof *ls); /* the carried sequences' initial values */
    int64_t *lcap = alloc(I, (ncarried + 1) * sizeof *lcap);
    for (size_t k = 0; k < ncarried; k++) {
        ival *v = seq_list_of(I, in(I, n, k + 2), "a Loop that stays a loop (its trip count of run time)");
        lt[k] = v->ty;
        lh[k] = v->half;
        if (v->seq) { /* a list of its own, made once the body gives its item type */
            ls[k] = v;
            lcap[k] = seq_loop_cap(I, v, body, M, out_name(I, n, k));
            lc[k] = new_id(I, "s_", out_name(I, n, k));
            continue;
        }
        /* a loop whose value the graph gives back keeps it in the result itself, as a program
         * written by hand does (the plan then treats it as one) */
        lc[k] = fresh_direct(I, out_name(I, n, k), I->depth - 1);
        if (!lc[k])
            lc[k] = new_id(I, "lc_", out_name(I, n, k));
        line(I, "%s = %s", lc[k], ref(I, v));
    }
    /* scan outputs: their row count is the trip count where nothing can end the loop early, else
     * the model's declared shape, checked after the loop */
    int64_t rows = -1;
    int exact = 0;
    if (M && M->data && (!C || (C->data && geti(C, 0)))) {
        rows = geti(M, 0);
        exact = 1; /* the body's condition may still end it early: checked below */
    }
    const char **so = alloc(I, (nscan + 1) * sizeof *so);
    cfx_type *so_t = alloc(I, (nscan + 1) * sizeof *so_t);
    int *so_h = alloc(I, (nscan + 1) * sizeof *so_h);
    const char *note = I->note;
    /* the body is written apart: the scan buffers, whose types it gives, go before the loop */
    body_apart(I);
    I->indent++;
    int base = scope_open(I);
    cfx_type i64 = mktype(CFX_I64, 0, NULL), b1 = mktype(CFX_BOOL, 0, NULL);
    if (!body->input[0] || !body->input[1])
        fail(I, "the body's inputs are missing");
    bind(I, body->input[0]->name ? body->input[0]->name : "", &i64, it, NULL);
    bind(I, body->input[1]->name ? body->input[1]->name : "", &b1, cv, NULL);
    for (size_t k = 0; k < ncarried; k++)
        if (ls[k])
            seq_bind(I, body->input[k + 2] && body->input[k + 2]->name ? body->input[k + 2]->name : "", &lt[k],
                     lc[k], ls[k]->seq, lcap[k], SEQ_BASE);
        else
        bind(I, body->input[k + 2] && body->input[k + 2]->name ? body->input[k + 2]->name : "", &lt[k], lc[k], NULL)->half = lh[k];
    /* a new value computed straight into its loop variable once the old one is read no more */
    for (size_t k = 0; k <= ncarried; k++) {
        const Onnx__ValueInfoProto *o = body->output[k], *i = body->input[k + 1];
        if (o && o->name && i && i->name)
            add_direct(I, o->name, k ? lc[k - 1] : cv, I->depth, last_read(body, i->name));
    }
    ival **outs = subgraph_outputs(I, body, n);
    drop_direct(I, I->depth);
    I->node = self;
    I->opset = opset;
    I->note = note;
    for (size_t k = 0; k < ncarried; k++)
        outs[k + 1] = seq_list_of(I, outs[k + 1], "a Loop that stays a loop (its trip count of run time)");
    if (outs[0]->ty.dtype != CFX_BOOL || count(&outs[0]->ty) != 1)
        fail(I, "the body's condition output is %s, not one bool", tystr(I, &outs[0]->ty));
    int cond_stays = outs[0]->data ? geti(outs[0], 0) != 0 : outs[0]->id == cv;
    for (size_t k = 0; k < ncarried; k++)
        if (ls[k] && !outs[k + 1]->seq)
            fail(I, "loop-carried value '%s' enters as a sequence and leaves the body as a tensor", out_name(I, n, k));
        else if (ls[k] && ls[k]->seq == SEQ_UNTYPED && outs[k + 1]->seq == SEQ_LIST)
            seq_item(I, ls[k], &outs[k + 1]->ty, fmt(I, "the item the body gives it"));
        else if (!same_type(&outs[k + 1]->ty, &lt[k]))
            fail(I, "loop-carried value '%s' enters as %s and leaves the body as %s: a loop-carried value "
                 "may not change type or shape", out_name(I, n, k), tystr(I, &lt[k]), tystr(I, &outs[k + 1]->ty));
    for (size_t j = 0; j < nscan; j++) {
        ival *y = outs[ncarried + 1 + j];
        const char *oname = out_name(I, n, ncarried + j);
        cfx_type decl, t = y->ty;
        int64_t r = -1;
        if (rows > 0 && cond_stays)
            r = rows;
        else if (declared_type(I, I->mp->graph, oname, &decl) && decl.rank == y->ty.rank + 1 && decl.dims[0] > 0)
            r = decl.dims[0];
        else
            fail(I, "scan output '%s' has a length that depends on the data (the loop can end early, or "
                 "its trip count is not known at import) and the model declares no static shape for it: the "
                 "length must be known when the model is imported (give the inputs it comes from)", oname);
        t.rank = y->ty.rank + 1;
        if (t.rank > CFX_TYPE_MAX_RANK)
            fail(I, "scan output '%s' has rank %d; cfx takes at most %d", oname, t.rank, CFX_TYPE_MAX_RANK);
        for (int d = y->ty.rank; d > 0; d--)
            t.dims[d] = y->ty.dims[d - 1];
        t.dims[0] = r;
        check_dims(I, oname, t.rank, t.dims);
        so_t[j] = t;
        so_h[j] = y->half;
        so[j] = new_id(I, "scan_", oname);
        line(I, "%s[%s] = %s", so[j], it, ref(I, y));
    }
    const char **vals = alloc(I, (ncarried + 2) * sizeof *vals);
    const char **tgts = alloc(I, (ncarried + 2) * sizeof *tgts);
    for (size_t k = 0; k < ncarried; k++) {
        tgts[k] = lc[k];
        if (ls[k] && outs[k + 1]->seq == SEQ_LIST && strcmp(outs[k + 1]->id, lc[k]) != 0)
            seq_copy(I, lc[k], outs[k + 1], &outs[k + 1]->ty, lcap[k], NULL, NULL, NULL);
        vals[k] = ls[k] ? lc[k] : ref(I, outs[k + 1]);
    }
    tgts[ncarried] = cv;
    vals[ncarried] = ref(I, outs[0]);
    assign_all(I, tgts, vals, ncarried + 1);
    if (counted)
        line(I, "%s = %s + 1", it, it);
    scope_close(I, base);
    I->indent--;
    body_back(I);
    for (size_t j = 0; j < nscan; j++)
        line(I, "%s = %s", so[j], zeros_of(I, &so_t[j]));
    for (size_t k = 0; k < ncarried; k++)
        if (ls[k])
            seq_loop_init(I, lc[k], ls[k], outs[k + 1], lcap[k]);
    line(I, "while %s%s%s {", M ? fmt(I, "%s < %s", it, ref(I, M)) : "", M ? " and " : "", cv);
    body_join(I);
    line(I, "}");
    for (size_t j = 0; j < nscan; j++)
        if (!(exact && cond_stays && rows == so_t[j].dims[0]))
            line(I, "assert(%s == %lld, \"Loop '%s': scan output '%s' is declared with %lld rows; the loop ran "
                 "another number of iterations\")", it, (long long)so_t[j].dims[0], clean(I, self->name),
                 clean(I, out_name(I, n, ncarried + j)), (long long)so_t[j].dims[0]);
    for (size_t k = 0; k < ncarried; k++)
        if (ls[k]) {
            ival *o = outs[k + 1];
            int64_t grow = o->slen >= SEQ_BASE / 2 ? o->slen - SEQ_BASE : -1;
            int64_t len = grow >= 0 && slen_known(ls[k]) && exact && cond_stays && rows >= 0
                              ? ls[k]->slen + rows * grow : -1;
            seq_bind(I, out_name(I, n, k), o->seq == SEQ_LIST ? &o->ty : &ls[k]->ty, lc[k], o->seq, lcap[k], len);
        } else
        bind(I, out_name(I, n, k), &lt[k], lc[k], NULL)->half = lh[k];
    for (size_t j = 0; j < nscan; j++)
        bind(I, out_name(I, n, ncarried + j), &so_t[j], so[j], NULL)->half = so_h[j];
    I->depth--;
}

/* A Loop unrolled at import: the body imported once per iteration, its counter known (so that a
 * Slice up to it has a length known at import), the carried values passed from one iteration's
 * outputs to the next's inputs as values (a sequence may take items of differing shapes: it is
 * then held item by item), the scan outputs stacked. Its trip count is known, and its condition
 * must be known at every iteration. */
static void loop_unrolled(imp *I, const Onnx__NodeProto *n)
{
    const Onnx__GraphProto *body = attr_graph(I, n, "body");
    const Onnx__NodeProto *self = n;
    int64_t opset = graph_opset_guard(I);
    ival *M = in_opt(I, n, 0), *C = in_opt(I, n, 1);
    size_t ncarried = n->n_input > 2 ? n->n_input - 2 : 0;
    if (body->n_input != ncarried + 2 || body->n_output < ncarried + 1 ||
        n->n_output != body->n_output - 1)
        fail(I, "the body's inputs and outputs do not match the node's");
    size_t nscan = body->n_output - ncarried - 1;
    int64_t trips = geti(M, 0);
    int go = C ? geti(C, 0) != 0 : 1;
    ival **cur = alloc(I, (ncarried + 1) * sizeof *cur);
    for (size_t k = 0; k < ncarried; k++)
        cur[k] = in(I, n, k + 2);
    ival ***rows = alloc(I, (nscan + 1) * sizeof *rows);
    for (size_t j = 0; j < nscan; j++)
        rows[j] = alloc(I, (size_t)(trips + 1) * sizeof *rows[j]);
    const char *note = I->note;
    int64_t it = 0;
    cfx_type i64 = mktype(CFX_I64, 0, NULL), b1 = mktype(CFX_BOOL, 0, NULL);
    for (; it < trips && go; it++) {
        int base = scope_open(I);
        void *itd = new_data(I, &i64), *cd = new_data(I, &b1);
        seti(CFX_I64, itd, 0, it);
        seti(CFX_BOOL, cd, 0, 1);
        bind(I, body->input[0] && body->input[0]->name ? body->input[0]->name : "", &i64, NULL, itd);
        bind(I, body->input[1] && body->input[1]->name ? body->input[1]->name : "", &b1, NULL, cd);
        for (size_t k = 0; k < ncarried; k++) {
            const char *bn = body->input[k + 2] && body->input[k + 2]->name ? body->input[k + 2]->name : "";
            seq_keep(bind(I, bn, &cur[k]->ty, cur[k]->id, cur[k]->data), cur[k])->half = cur[k]->half;
        }
        ival **outs = subgraph_outputs(I, body, n);
        I->node = self;
        I->opset = opset;
        I->note = note;
        if (outs[0]->ty.dtype != CFX_BOOL || count(&outs[0]->ty) != 1)
            fail(I, "the body's condition output is %s, not one bool", tystr(I, &outs[0]->ty));
        if (!outs[0]->data)
            fail(I, "the Loop is unrolled at import (its carried sequence takes items of differing shapes, or "
                 "its body's shapes depend on the iteration), and its body's condition must be known when the "
                 "model is imported");
        go = geti(outs[0], 0) != 0;
        for (size_t k = 0; k < ncarried; k++) {
            ival *c = alloc(I, sizeof *c);
            *c = *outs[k + 1];
            c->name = out_name(I, n, k);
            cur[k] = c;
        }
        for (size_t j = 0; j < nscan; j++) {
            ival *y = outs[ncarried + 1 + j];
            if (y->seq)
                fail(I, "scan output '%s' is a sequence", out_name(I, n, ncarried + j));
            if (it && !same_type(&y->ty, &rows[j][0]->ty))
                fail(I, "scan output '%s' is %s at iteration 0 and %s at iteration %lld: its rows must have one "
                     "shape", out_name(I, n, ncarried + j), tystr(I, &rows[j][0]->ty), tystr(I, &y->ty),
                     (long long)it);
            rows[j][it] = seq_item_of(I, y, 0);
        }
        scope_close(I, base);
    }
    for (size_t k = 0; k < ncarried; k++)
        seq_keep(bind(I, out_name(I, n, k), &cur[k]->ty, cur[k]->id, cur[k]->data), cur[k])->half = cur[k]->half;
    for (size_t j = 0; j < nscan; j++) {
        const char *oname = out_name(I, n, ncarried + j);
        if (it == 0)
            fail(I, "scan output '%s' has no rows (the loop runs no iteration): cfx has no tensors of 0 elements",
                 oname);
        cfx_type t = rows[j][0]->ty;
        if (t.rank + 1 > CFX_TYPE_MAX_RANK)
            fail(I, "scan output '%s' has rank %d; cfx takes at most %d", oname, t.rank + 1, CFX_TYPE_MAX_RANK);
        for (int d = t.rank; d > 0; d--)
            t.dims[d] = t.dims[d - 1];
        t.dims[0] = it;
        t.rank++;
        const char *id = out_var(I, n, ncarried + j, &t);
        line(I, "%s = %s", id, zeros_of(I, &t));
        for (int64_t r = 0; r < it; r++)
            line(I, "%s[%lld] = %s", id, (long long)r, ref(I, rows[j][r]));
        lookup(I, oname)->half = rows[j][0]->half;
    }
    I->depth--;
}

/* A Loop: a cfx loop where it can be one; where it cannot (its carried sequence takes items of
 * differing shapes, a Slice's length depends on the iteration) and its trip count is known and it
 * carries a sequence, unrolled at import (up to ONNX_UNROLL_MAX_NODES nodes). The first try is
 * written apart and, where it fails, every trace of it dropped: its text, its values, the
 * variables it took for its outputs. */
static void op_loop(imp *I, const Onnx__NodeProto *n)
{
    ival *M = in_opt(I, n, 0), *C = in_opt(I, n, 1);
    int seqs = 0;
    for (size_t k = 2; k < n->n_input; k++)
        seqs |= has_input(n, k) && in(I, n, k)->seq;
    const Onnx__GraphProto *body = attr_graph(I, n, "body");
    if (!seqs || !M || !M->data || count(&M->ty) != 1 || (C && (!C->data || count(&C->ty) != 1))) {
        loop_rolled(I, n);
        return;
    }
    /* what the first try may change */
    int h = I->nheld, nvals = I->nvals, nbases = I->nbases, base = I->base, indent = I->indent, depth = I->depth;
    int ndirect = I->ndirect, ndone = I->ndone, nwide = I->nwide, node_index = I->node_index;
    int64_t unrolled = I->unrolled;
    const char *note = I->note;
    int64_t opset = I->opset;
    ival *vals = alloc(I, ((size_t)nvals + 1) * sizeof *vals);
    for (int k = 0; k < nvals; k++)
        vals[k] = *I->vals[k];
    struct direct *direct = alloc(I, ((size_t)ndirect + 1) * sizeof *direct);
    copy(direct, I->direct, (size_t)ndirect * sizeof *direct);
    jmp_buf outer;
    memcpy(outer, I->jb, sizeof outer);
    body_apart(I);
    if (!setjmp(I->jb)) {
        loop_rolled(I, n);
        memcpy(I->jb, outer, sizeof outer);
        body_back(I);
        body_join(I);
        return;
    }
    memcpy(I->jb, outer, sizeof outer);
    while (I->nheld > h + 1)
        sb_free(&I->held[--I->nheld]);
    sb_free(&I->body);
    I->body = I->held[h];
    I->nheld = h;
    while (I->nvals > nvals) {
        ival *v = I->vals[--I->nvals];
        *smap_slot(I, &I->names, v->name, 0) = v->prev;
    }
    for (int k = 0; k < nvals; k++)
        *I->vals[k] = vals[k];
    copy(I->direct, direct, (size_t)ndirect * sizeof *direct);
    I->ndirect = ndirect;
    I->nbases = nbases;
    I->base = base;
    I->indent = indent;
    I->depth = depth;
    I->ndone = ndone;
    I->nwide = nwide;
    I->node_index = node_index;
    I->node = n;
    I->note = note;
    I->opset = opset;
    I->pure_id = NULL;
    I->unrolled = unrolled;
    int64_t nodes = graph_nodes(body) + 1, trips = geti(M, 0);
    if (trips > 0 && (trips > ONNX_UNROLL_MAX_NODES || I->unrolled + nodes * trips > ONNX_UNROLL_MAX_NODES)) {
        const char *why = strstr(I->msg ? I->msg : "", "): ");
        char *first = I->msg;
        why = fmt(I, "%s", why ? why + 3 : first ? first : "");
        free(first);
        I->msg = NULL;
        fail(I, "the Loop is no cfx loop (%.*s) and %lld iterations of %lld nodes are too many to unroll at import "
             "(at most %d nodes in all)", (int)strcspn(why, "\n"), why, (long long)trips, (long long)nodes,
             ONNX_UNROLL_MAX_NODES);
    }
    if (trips > 0)
        I->unrolled += nodes * trips;
    free(I->msg);
    I->msg = NULL;
    loop_unrolled(I, n);
}

/* Scan (opset 9 on): states carried, scan inputs read one slice per iteration along their axes,
 * scan outputs stacked along theirs; Scan-8's leading batch dimension is one loop more. */
static void op_scan(imp *I, const Onnx__NodeProto *n)
{
    const Onnx__GraphProto *body = attr_graph(I, n, "body");
    const Onnx__NodeProto *self = n;
    int64_t opset = graph_opset_guard(I);
    int v8 = opset < 9;
    size_t first = v8 ? 1 : 0; /* Scan-8's optional sequence_lens comes first */
    if (v8 && has_input(n, 0))
        fail(I, "sequence_lens is not supported");
    int64_t nin = attr_int(I, n, "num_scan_inputs", -1);
    size_t ninputs = n->n_input - first;
    if (nin < 1 || (size_t)nin > ninputs)
        fail(I, "num_scan_inputs is %lld for %zu inputs", (long long)nin, ninputs);
    size_t nstate = ninputs - (size_t)nin, nscan_out;
    if (body->n_input != ninputs || body->n_output < nstate)
        fail(I, "the body's inputs and outputs do not match the node's");
    nscan_out = body->n_output - nstate;
    if (n->n_output != body->n_output)
        fail(I, "the node has %zu outputs, the body %zu", n->n_output, body->n_output);
    size_t k8;
    const int64_t *in_axes = attr_ints(I, n, "scan_input_axes", &k8);
    if (in_axes && k8 != (size_t)nin) fail(I, "scan_input_axes has %zu entries", k8);
    size_t kd;
    const int64_t *in_dirs = attr_ints(I, n, v8 ? "directions" : "scan_input_directions", &kd);
    if (in_dirs && kd != (size_t)nin) fail(I, "the input directions have %zu entries", kd);
    size_t ko;
    const int64_t *out_axes = attr_ints(I, n, "scan_output_axes", &ko);
    if (out_axes && ko != nscan_out) fail(I, "scan_output_axes has %zu entries", ko);
    size_t kod;
    const int64_t *out_dirs = attr_ints(I, n, "scan_output_directions", &kod);
    if (out_dirs && kod != nscan_out) fail(I, "scan_output_directions has %zu entries", kod);
    const char *nm = out_name(I, n, 0);
    int64_t batch = 1;
    int off = v8 ? 1 : 0; /* the batch dimension shifts every axis by one */
    /* the sequence length, from the scan inputs */
    int64_t L = -1;
    int *axis = alloc(I, ((size_t)nin + 1) * sizeof *axis);
    for (int64_t i = 0; i < nin; i++) {
        ival *x = in(I, n, first + nstate + (size_t)i);
        int r = x->ty.rank - off;
        if (r < 1)
            fail(I, "scan input '%s' is %s", x->name, tystr(I, &x->ty));
        axis[i] = norm_axis(I, in_axes ? in_axes[i] : 0, r, "scan input axis") + off;
        if (v8) {
            if (i == 0) batch = x->ty.dims[0];
            else if (x->ty.dims[0] != batch) fail(I, "the scan inputs' batch sizes differ");
        }
        int64_t len = x->ty.dims[axis[i]];
        if (L >= 0 && len != L)
            fail(I, "the scan inputs' lengths differ: %lld and %lld", (long long)L, (long long)len);
        L = len;
    }
    const char *b = v8 ? new_id(I, "b_", nm) : NULL, *t = new_id(I, "t_", nm);
    const char **st = alloc(I, (nstate + 1) * sizeof *st), **fin = alloc(I, (nstate + 1) * sizeof *fin);
    cfx_type *stt = alloc(I, (nstate + 1) * sizeof *stt);
    for (size_t k = 0; k < nstate; k++) {
        ival *s0 = in(I, n, first + k);
        stt[k] = s0->ty;
        if (v8) {
            stt[k].rank--;
            for (int d = 0; d < stt[k].rank; d++)
                stt[k].dims[d] = s0->ty.dims[d + 1];
        }
        st[k] = new_id(I, "st_", out_name(I, n, k));
    }
    const char *note = I->note;
    body_apart(I);
    I->indent += v8 ? 2 : 1;
    int base = scope_open(I);
    for (int64_t i = 0; i < nin; i++) {
        ival *x = in(I, n, first + nstate + (size_t)i);
        int rev = in_dirs && in_dirs[i];
        const char *pos = rev ? fmt(I, "%lld - %s", (long long)(L - 1), t) : t;
        cfx_type et = x->ty;
        et.rank = 0;
        for (int d = off; d < x->ty.rank; d++)
            if (d != axis[i])
                et.dims[et.rank++] = x->ty.dims[d];
        strbuf *sb = new_sb(I);
        sb_puts(sb, "[");
        for (int d = 0; d <= axis[i]; d++)
            sb_printf(sb, "%s%s", d ? ", " : "", d == axis[i] ? pos : (v8 && d == 0) ? b : ":");
        sb_puts(sb, "]");
        if (sb->oom) fail(I, "out of memory");
        const char *e = fmt(I, "%s%s", ref(I, x), sb_str(sb));
        sb_free(sb);
        const char *bn = body->input[nstate + (size_t)i] && body->input[nstate + (size_t)i]->name ?
                         body->input[nstate + (size_t)i]->name : "";
        const char *v = new_id(I, "x_", bn);
        line(I, "%s = %s", v, e);
        bind(I, bn, &et, v, NULL)->half = x->half;
    }
    for (size_t k = 0; k < nstate; k++)
        bind(I, body->input[k] && body->input[k]->name ? body->input[k]->name : "", &stt[k], st[k], NULL)->half =
            in(I, n, first + k)->half;
    ival **outs = subgraph_outputs(I, body, n);
    I->node = self;
    I->opset = opset;
    I->note = note;
    for (size_t k = 0; k < nstate; k++)
        if (!same_type(&outs[k]->ty, &stt[k]))
            fail(I, "state '%s' enters as %s and leaves the body as %s: a state may not change type or shape",
                 out_name(I, n, k), tystr(I, &stt[k]), tystr(I, &outs[k]->ty));
    const char **so = alloc(I, (nscan_out + 1) * sizeof *so);
    cfx_type *sot = alloc(I, (nscan_out + 1) * sizeof *sot);
    int *soh = alloc(I, (nscan_out + 1) * sizeof *soh);
    for (size_t j = 0; j < nscan_out; j++) {
        ival *y = outs[nstate + j];
        const char *oname = out_name(I, n, nstate + j);
        int r = y->ty.rank + 1;
        int ax = norm_axis(I, out_axes ? out_axes[j] : 0, r, "scan output axis");
        cfx_type ty = y->ty;
        ty.rank = r + off;
        if (ty.rank > CFX_TYPE_MAX_RANK)
            fail(I, "scan output '%s' has rank %d; cfx takes at most %d", oname, ty.rank, CFX_TYPE_MAX_RANK);
        for (int d = 0, s = 0; d < r; d++)
            ty.dims[d + off] = d == ax ? L : y->ty.dims[s++];
        if (v8)
            ty.dims[0] = batch;
        check_dims(I, oname, ty.rank, ty.dims);
        sot[j] = ty;
        soh[j] = y->half;
        so[j] = new_id(I, "scan_", oname);
        int rev = out_dirs && out_dirs[j];
        const char *pos = rev ? fmt(I, "%lld - %s", (long long)(L - 1), t) : t;
        strbuf *sb = new_sb(I);
        sb_puts(sb, "[");
        for (int d = 0; d <= ax + off; d++)
            sb_printf(sb, "%s%s", d ? ", " : "", d == ax + off ? pos : (v8 && d == 0) ? b : ":");
        sb_puts(sb, "]");
        if (sb->oom) fail(I, "out of memory");
        line(I, "%s%s = %s", so[j], sb_str(sb), ref(I, y));
        sb_free(sb);
    }
    const char **vals = alloc(I, (nstate + 1) * sizeof *vals);
    for (size_t k = 0; k < nstate; k++)
        vals[k] = ref(I, outs[k]);
    assign_all(I, st, vals, nstate);
    scope_close(I, base);
    I->indent -= v8 ? 2 : 1;
    body_back(I);
    for (size_t k = 0; k < nstate; k++) {
        fin[k] = st[k];
        if (v8) {
            cfx_type all = in(I, n, first + k)->ty;
            fin[k] = new_id(I, "fin_", out_name(I, n, k));
            line(I, "%s = %s", fin[k], zeros_of(I, &all));
        }
    }
    for (size_t j = 0; j < nscan_out; j++)
        line(I, "%s = %s", so[j], zeros_of(I, &sot[j]));
    if (v8) {
        line(I, "for %s in range(%lld) {", b, (long long)batch);
        I->indent++;
    }
    for (size_t k = 0; k < nstate; k++)
        line(I, "%s = %s%s", st[k], ref(I, in(I, n, first + k)), v8 ? fmt(I, "[%s]", b) : "");
    line(I, "for %s in range(%lld) {", t, (long long)L);
    body_join(I);
    line(I, "}");
    if (v8) {
        for (size_t k = 0; k < nstate; k++)
            line(I, "%s[%s] = %s", fin[k], b, st[k]);
        I->indent--;
        line(I, "}");
    }
    for (size_t k = 0; k < nstate; k++)
        bind(I, out_name(I, n, k), v8 ? &in(I, n, first + k)->ty : &stt[k], fin[k], NULL)->half =
            in(I, n, first + k)->half;
    for (size_t j = 0; j < nscan_out; j++)
        bind(I, out_name(I, n, nstate + j), &sot[j], so[j], NULL)->half = soh[j];
    I->depth--;
}

/* A node of a model-local function: its body inlined, the function's inputs bound to the node's
 * values and its attribute references to the node's attributes. */
static const Onnx__FunctionProto *find_function(imp *I, const Onnx__NodeProto *n)
{
    for (size_t k = 0; k < I->mp->n_functions; k++) {
        const Onnx__FunctionProto *f = I->mp->functions[k];
        if (f && f->name && n->op_type && !strcmp(f->name, n->op_type) &&
            !strcmp(f->domain ? f->domain : "", n->domain ? n->domain : ""))
            return f;
    }
    return NULL;
}

static void op_function(imp *I, const Onnx__NodeProto *n, const Onnx__FunctionProto *f)
{
    const Onnx__NodeProto *self = n, *caller = I->caller;
    int64_t opset = graph_opset_guard(I);
    ival *args = alloc(I, (f->n_input + 1) * sizeof *args);
    for (size_t k = 0; k < f->n_input; k++) {
        ival *v = in_opt(I, n, k);
        if (v)
            args[k] = *v;
        else
            args[k].ty.rank = -1;
    }
    int base = scope_open(I);
    for (size_t k = 0; k < f->n_input; k++)
        if (args[k].ty.rank >= 0)
            bind(I, f->input[k], &args[k].ty, args[k].id, args[k].data)->half = args[k].half;
    int64_t fopset = opset;
    for (size_t k = 0; k < f->n_opset_import; k++)
        if (f->opset_import[k] && (!f->opset_import[k]->domain || !*f->opset_import[k]->domain ||
                                   !strcmp(f->opset_import[k]->domain, "ai.onnx")))
            fopset = f->opset_import[k]->version;
    I->caller = n;
    const Onnx__GraphProto *graph = I->graph;
    const Onnx__FunctionProto *func = I->func;
    I->graph = NULL;
    I->func = f;
    for (size_t k = 0; k < f->n_node; k++) {
        I->opset = fopset;
        if (!done_already(I, f->node[k]))
            node(I, f->node[k]);
    }
    I->graph = graph;
    I->func = func;
    I->caller = caller;
    I->node = self;
    I->opset = opset;
    ival *outs = alloc(I, (f->n_output + 1) * sizeof *outs);
    for (size_t k = 0; k < f->n_output && k < n->n_output; k++) {
        ival *v = lookup(I, f->output[k]);
        if (!v)
            fail(I, "function '%s' computes no output '%s'", f->name, f->output[k]);
        outs[k] = *v;
    }
    scope_close(I, base);
    for (size_t k = 0; k < f->n_output && k < n->n_output; k++)
        if (n->output[k] && *n->output[k])
            bind(I, n->output[k], &outs[k].ty, outs[k].id, outs[k].data)->half = outs[k].half;
    I->depth--;
}

/* ---- dispatch ------------------------------------------------------------------------------ */

/* The ops of the default domain cfx imports whose definition in force at opset 7 came after opset 1,
 * by the opset that brought it: onnx.defs.get_schema(op, 7, "").since_version (onnx 1.23.2,
 * written once by hand from it); an op not yet defined at opset 7 by the opset that brought it
 * (the smallest since_version of its schemas). An op not listed is defined alike from opset 1 to
 * 7. Below ONNX_OPSET_FULL a node imports as at opset 7 where its op's number is at most the
 * model's opset (the same definition), and is refused otherwise (old_op_check). */
static const struct { int since; const char *ops; } old_ops[] = {
    {2, "LpPool Pad Split"},
    {4, "Concat"},
    {5, "Reshape"},
    {6, "Abs Cast Ceil Clip Elu Exp Floor HardSigmoid InstanceNormalization LeakyRelu Log Max Mean Min Neg "
        "Reciprocal Relu Selu Sigmoid Sqrt Sum Tanh Tile"},
    {7, "Acos Add And Asin Atan AveragePool BatchNormalization Cos Div Dropout Equal GRU Gemm Greater LSTM "
        "Less Mul Or PRelu Pow RNN Sin Sub Tan Upsample Xor"},
    {8, "Expand Scan"},
    {9, "Acosh Asinh Atanh Compress ConstantOfShape Cosh Erf EyeLike IsNaN MaxUnpool "
        "MeanVarianceNormalization NonZero OneHot Scatter Shrink Sign Sinh Where"},
    {10, "ConvInteger DequantizeLinear IsInf MatMulInteger Mod NonMaxSuppression QLinearConv QLinearMatMul "
         "QuantizeLinear Resize ReverseSequence RoiAlign ThresholdedRelu"},
    {11, "BitShift ConcatFromSequence CumSum Det DynamicQuantizeLinear GatherElements GatherND Range Round "
         "ScatterElements ScatterND SequenceAt SequenceConstruct SequenceEmpty SequenceErase SequenceInsert "
         "SequenceLength SplitToSequence Unique"},
    {12, "Celu Einsum GreaterOrEqual LessOrEqual NegativeLogLikelihoodLoss SoftmaxCrossEntropyLoss"},
    {14, "HardSwish Trilu"},
    {15, "CastLike Optional OptionalGetElement OptionalHasElement"},
    {16, "GridSample"},
    {17, "BlackmanWindow DFT HammingWindow HannWindow LayerNormalization MelWeightMatrix STFT SequenceMap"},
    {18, "BitwiseAnd BitwiseNot BitwiseOr BitwiseXor CenterCropPad Col2Im GroupNormalization Mish"},
    {19, "DeformConv"},
    {20, "AffineGrid Gelu"},
    {23, "Attention RMSNormalization RotaryEmbedding"},
    {24, "Swish TensorScatter"},
    {26, "BitCast CumProd"},
    {27, "CausalConvWithState LinearAttention"},
    {28, "SwiGLU"},
};

/* Below ONNX_OPSET_FULL: refuses a node of the default domain whose op's definition at the
 * model's opset is not the one of opset 7 (old_ops). */
static void old_op_check(imp *I, const char *op)
{
    size_t len = strlen(op);
    int since = 1;
    for (size_t k = 0; k < sizeof old_ops / sizeof *old_ops && since == 1 && len; k++)
        for (const char *s = old_ops[k].ops; (s = strstr(s, op)) != NULL; s += len)
            if ((s == old_ops[k].ops || s[-1] == ' ') && (s[len] == ' ' || !s[len])) {
                since = old_ops[k].since;
                break;
            }
    if (since > ONNX_OPSET_FULL)
        fail(I, "%s is not in opset %lld of the default domain (it came in opset %d)", clean(I, op),
             (long long)I->opset, since);
    if (since > I->opset)
        fail(I, "%s's definition at opset %lld is older than cfx supports (supported from opset %d on)",
             clean(I, op), (long long)I->opset, since);
}

static const struct { const char *name; enum bin op; } binops[] = {
    {"Add", B_ADD}, {"Sub", B_SUB}, {"Mul", B_MUL}, {"Div", B_DIV}, {"Pow", B_POW},
    {"Equal", B_EQ}, {"Less", B_LT}, {"Greater", B_GT}, {"LessOrEqual", B_LE},
    {"GreaterOrEqual", B_GE}, {"And", B_AND}, {"Or", B_OR}, {"Xor", B_XOR},
};

/* 1 for the ops of domains besides the default one that cfx takes (docs/onnx.md) */
static int more_domain(const char *dom, const char *op)
{
    if (!strcmp(dom, "ai.onnx.preview.training"))
        return !strcmp(op, "Adagrad") || !strcmp(op, "Adam") || !strcmp(op, "Momentum");
    if (!strcmp(dom, "ai.onnx.ml"))
        return !strcmp(op, "Binarizer") || !strcmp(op, "ArrayFeatureExtractor") || !strcmp(op, "TreeEnsemble") ||
               !strcmp(op, "LabelEncoder");
    if (!strcmp(dom, "ai.onnx.preview"))
        return !strcmp(op, "FlexAttention");
    return 0;
}

/* The ops whose node is written by one op_ function of the node alone, by their op type; the
 * others (a variant or a type read from the node first) are node_op's chain below. */
static const struct {
    const char *name;
    void (*emit)(imp *I, const Onnx__NodeProto *n);
} plain_ops[] = {
    {"PRelu", op_prelu}, {"IsInf", op_isinf}, {"TopK", op_topk}, {"CumSum", op_cumsum}, {"Trilu", op_trilu},
    {"CumProd", op_cumsum}, {"BitShift", op_bitshift}, {"BitwiseNot", op_bitwise_not},
    {"QuantizeLinear", op_quantize_linear}, {"DequantizeLinear", op_dequantize_linear},
    {"DynamicQuantizeLinear", op_dynamic_quantize_linear}, {"ConvInteger", op_conv_integer},
    {"QLinearConv", op_qlinear_conv}, {"MatMulInteger", op_matmul_integer},
    {"QLinearMatMul", op_qlinear_matmul}, {"EyeLike", op_eyelike}, {"OneHot", op_onehot},
    {"Hardmax", op_hardmax}, {"LpNormalization", op_lpnorm}, {"NegativeLogLikelihoodLoss", op_nll_loss},
    {"SoftmaxCrossEntropyLoss", op_sce_loss}, {"Reshape", op_reshape}, {"Flatten", op_flatten},
    {"Constant", op_constant}, {"ConstantOfShape", op_constant_of_shape}, {"Range", op_range},
    {"Where", op_where}, {"Expand", op_expand}, {"Concat", op_concat}, {"Split", op_split},
    {"Slice", op_slice}, {"Gather", op_gather}, {"ScatterND", op_scatter_nd}, {"Tile", op_tile},
    {"Pad", op_pad}, {"BatchNormalization", op_batchnorm}, {"InstanceNormalization", op_instancenorm},
    {"Einsum", op_einsum}, {"GatherElements", op_gather_elements}, {"GatherND", op_gather_nd},
    {"GridSample", op_grid_sample}, {"ReverseSequence", op_reverse_sequence},
    {"CenterCropPad", op_center_crop_pad}, {"LRN", op_lrn}, {"SwiGLU", op_swiglu},
    {"MaxUnpool", op_max_unpool}, {"Transpose", op_transpose}, {"MatMul", op_matmul}, {"Gemm", op_gemm},
    {"LayerNormalization", op_layernorm}, {"RMSNormalization", op_rmsnorm}, {"RotaryEmbedding", op_rotary},
    {"Attention", op_attention}, {"Dropout", op_dropout}, {"Clip", op_clip}, {"If", op_if}, {"Loop", op_loop},
    {"Scan", op_scan}, {"LinearAttention", op_linear_attention},
    {"CausalConvWithState", op_causal_conv_with_state}, {"Conv", op_conv},
    {"ConvTranspose", op_conv_transpose}, {"Col2Im", op_col2im}, {"TensorScatter", op_tensor_scatter},
    {"GroupNormalization", op_groupnorm}, {"MeanVarianceNormalization", op_mvn},
    {"AffineGrid", op_affine_grid}, {"DFT", op_dft}, {"STFT", op_stft},
    {"MelWeightMatrix", op_mel_weight_matrix}, {"Binarizer", op_binarizer},
    {"ArrayFeatureExtractor", op_array_feature_extractor}, {"Det", op_det}, {"Compress", op_compress},
    {"FlexAttention", op_flex_attention}, {"NonZero", op_nonzero}, {"Unique", op_unique},
    {"NonMaxSuppression", op_nms}, {"RoiAlign", op_roi_align}, {"DeformConv", op_deform_conv},
    {"TreeEnsemble", op_tree_ensemble}, {"LabelEncoder", op_label_encoder},
};

/* plain_ops' index of op, or -1 */
static int plain_op(const char *op)
{
    for (int k = 0; k < (int)(sizeof plain_ops / sizeof *plain_ops); k++)
        if (!strcmp(op, plain_ops[k].name))
            return k;
    return -1;
}

static void node_op(imp *I, const Onnx__NodeProto *n)
{
    I->node = n;
    if (!n || !n->op_type)
        fail(I, "a node has no op type");
    const char *op = n->op_type;
    const char *dom = n->domain ? n->domain : "";
    const char *name = n->name && *n->name ? n->name : (n->n_output && n->output[0] ? n->output[0] : "");
    I->note = fmt(I, "%s '%s'", clean(I, op), clean(I, name));
    for (size_t k = 0; k < n->n_output; k++) {
        int *at = n->output[k] && *n->output[k] ? smap_slot(I, &I->names, n->output[k], 0) : NULL;
        if (at && *at >= I->base)
            fail(I, "value '%s' is computed twice in one graph (by this node and before it)", n->output[k]);
    }
    const Onnx__FunctionProto *f = find_function(I, n);
    if (f) {
        op_function(I, n, f);
        return;
    }
    if (*dom && strcmp(dom, "ai.onnx") != 0 && !more_domain(dom, op))
        fail(I, "the domain '%s' is not supported (cfx takes the default ONNX domain and the model's own "
             "functions; docs/onnx.md lists the ops)", dom);
    if ((!*dom || !strcmp(dom, "ai.onnx")) && I->opset < ONNX_OPSET_FULL)
        old_op_check(I, op);
    if (seq_op(I, n))
        return;
    int order = !strcmp(op, "Less") ? B_LT : !strcmp(op, "Greater") ? B_GT : !strcmp(op, "LessOrEqual") ? B_LE
              : !strcmp(op, "GreaterOrEqual") ? B_GE : !strcmp(op, "Max") ? B_MAX : !strcmp(op, "Min") ? B_MIN : -1;
    int u64 = 0;
    for (size_t k = 0; order >= 0 && k < n->n_input; k++)
        u64 |= in(I, n, k)->half == HALF_U64;
    if (u64) {
        u64_order(I, n, (enum bin)order);
        return;
    }
    for (size_t k = 0; k < n->n_input && (!strcmp(op, "Div") || !strcmp(op, "Mod") || !strcmp(op, "Pow") ||
                                            !strcmp(op, "TopK")); k++)
        if (has_input(n, k) && in(I, n, k)->half == HALF_U64) {
            op_u64_arith(I, n);
            return;
        }
    for (size_t k = 0; k < sizeof binops / sizeof *binops; k++)
        if (!strcmp(op, binops[k].name)) {
            binary(I, n, binops[k].op, in(I, n, 0), in(I, n, 1));
            return;
        }
    int k;
    if (!strcmp(op, "Mod")) {
        ival *a = in(I, n, 0);
        int fm = (int)attr_int(I, n, "fmod", 0);
        binary(I, n, fm ? B_FMOD : B_MOD, a, in(I, n, 1));
    } else if (unary(I, n, op) || activation(I, n, op)) {
    } else if ((k = plain_op(op)) >= 0) {
        plain_ops[k].emit(I, n);
    } else if (!strcmp(op, "BitCast")) {
        if (!op_bitcast_real(I, n))
            op_bitcast(I, n);
    } else if (!strcmp(op, "BitwiseAnd") || !strcmp(op, "BitwiseOr") || !strcmp(op, "BitwiseXor")) {
        op_bitwise(I, n, !strcmp(op, "BitwiseAnd") ? 0 : !strcmp(op, "BitwiseOr") ? 1 : 2);
    } else if (!strcmp(op, "Cast")) {
        int half;
        cfx_dtype to = dtype_of(I, (int32_t)attr_int(I, n, "to", 0), "Cast's 'to'", &half);
        op_cast_half(I, n, to, half);
    } else if (!strcmp(op, "CastLike")) {
        ival *like = in(I, n, 1);
        op_cast_half(I, n, like->ty.dtype, like->half);
    } else if (!strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze")) {
        op_squeeze(I, n, op[0] == 'U');
    } else if (!strcmp(op, "Shape") || !strcmp(op, "Size")) {
        op_shape(I, n, op[1] == 'i');
    } else if (!strcmp(op, "ScatterElements") || !strcmp(op, "Scatter")) {
        op_scatter_elements(I, n);
    } else if (!strcmp(op, "ReduceProd")) {
        op_reduce(I, n, "prod", 0);
    } else if (!strcmp(op, "DepthToSpace") || !strcmp(op, "SpaceToDepth")) {
        op_depth_space(I, n, op[0] == 'S');
    } else if (!strcmp(op, "ReduceSum") || !strcmp(op, "ReduceSumSquare") || !strcmp(op, "ReduceL2") ||
               !strcmp(op, "ReduceL1") || !strcmp(op, "ReduceLogSum") || !strcmp(op, "ReduceLogSumExp")) {
        op_reduce(I, n, "sum", 0);
    } else if (!strcmp(op, "ReduceMax")) {
        op_reduce(I, n, "max", 0);
    } else if (!strcmp(op, "ReduceMin")) {
        op_reduce(I, n, "min", 0);
    } else if (!strcmp(op, "ReduceMean")) {
        op_reduce(I, n, "mean", 0);
    } else if (!strcmp(op, "ArgMax")) {
        op_reduce(I, n, "argmax", 1);
    } else if (!strcmp(op, "ArgMin")) {
        op_reduce(I, n, "argmin", 1);
    } else if (!strcmp(op, "Softmax") || !strcmp(op, "LogSoftmax")) {
        op_softmax(I, n, op[0] == 'L');
    } else if (!strcmp(op, "Sum") || !strcmp(op, "Mean")) {
        op_variadic(I, n, B_ADD, op[0] == 'M');
    } else if (!strcmp(op, "Min") || !strcmp(op, "Max")) {
        op_variadic(I, n, op[1] == 'i' ? B_MIN : B_MAX, 0);
    } else if (!strcmp(op, "RNN") || !strcmp(op, "GRU") || !strcmp(op, "LSTM")) {
        op_rnn(I, n, op[0] == 'R' ? 'R' : op[0] == 'G' ? 'G' : 'L');
    } else if (!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool") || !strcmp(op, "LpPool")) {
        op_pool(I, n, op[0] == 'M', op[0] == 'L');
    } else if (!strcmp(op, "GlobalMaxPool") || !strcmp(op, "GlobalAveragePool")) {
        op_global_pool(I, n, op[6] == 'M');
    } else if (!strcmp(op, "Resize") || !strcmp(op, "Upsample")) {
        op_resize(I, n, op[0] == 'U');
    } else if (!strcmp(op, "Adagrad") || !strcmp(op, "Adam") || !strcmp(op, "Momentum")) {
        op_training(I, n, op[1] == 'd' ? (op[3] == 'g' ? 'g' : 'a') : 'm');
    } else if (!strcmp(op, "HannWindow") || !strcmp(op, "HammingWindow") || !strcmp(op, "BlackmanWindow")) {
        op_window(I, n, op[0] == 'B' ? 'b' : op[2] == 'n' ? 'n' : 'm');
    } else {
        fail(I, "op '%s' is not supported (docs/onnx.md lists the ops cfx imports)", op);
    }
}

static void node(imp *I, const Onnx__NodeProto *n)
{
    I->node_half = -1;
    I->node_rounded = 0;
    int lines = I->nlines;
    const char *op = n->op_type;
    int u64 = 0;
    for (size_t k = 0; n->op_type && k < n->n_input; k++) {
        ival *x = has_input(n, k) ? lookup(I, n->input[k]) : NULL;
        u64 |= x && x->half == HALF_U64;
    }
    I->node = n;
    if (u64 && !find_function(I, n) && !u64_op(op))
        u64_refuse(I, n);
    node_op(I, n);
    if (!find_function(I, n) && strcmp(op, "If") && strcmp(op, "Loop") && strcmp(op, "Scan")) {
        I->node = n;
        round_results(I, n, I->nlines > lines);
        for (size_t k = 0; k < n->n_output; k++) {
            ival *v = n->output[k] && *n->output[k] ? lookup(I, n->output[k]) : NULL;
            if (v && v->half == HALF_U64 && !u64_op(op))
                u64_refuse(I, n);
        }
    }
}

static void emit_graph_nodes(imp *I, const Onnx__GraphProto *g)
{
    int saved = I->node_index;
    const Onnx__GraphProto *saved_graph = I->graph;
    const Onnx__FunctionProto *saved_func = I->func;
    I->graph = g;
    I->func = NULL;
    for (size_t k = 0; k < g->n_node; k++) {
        I->node_index = (int)k;
        if (!done_already(I, g->node[k]))
            node(I, g->node[k]);
    }
    I->node_index = saved;
    I->graph = saved_graph;
    I->func = saved_func;
}

static int node_reads(const Onnx__NodeProto *n, const char *name)
{
    for (size_t k = 0; k < n->n_input; k++)
        if (n->input[k] && !strcmp(n->input[k], name))
            return 1;
    for (size_t a = 0; a < n->n_attribute; a++) {
        const Onnx__AttributeProto *at = n->attribute[a];
        if (at && at->g && reads(at->g, name))
            return 1;
        for (size_t j = 0; at && j < at->n_graphs; j++)
            if (at->graphs[j] && reads(at->graphs[j], name))
                return 1;
    }
    return 0;
}

static int reads(const Onnx__GraphProto *g, const char *name)
{
    for (size_t k = 0; k < g->n_node; k++)
        if (g->node[k] && node_reads(g->node[k], name))
            return 1;
    for (size_t k = 0; k < g->n_output; k++)
        if (g->output[k] && g->output[k]->name && !strcmp(g->output[k]->name, name))
            return 1;
    return 0;
}

/* 1 when n, or a subgraph of it, reads a value in scope that variable id holds */
static int node_reads_id(imp *I, const Onnx__NodeProto *n, const char *id)
{
    for (size_t k = 0; k < n->n_input; k++) {
        ival *v = n->input[k] && *n->input[k] ? lookup(I, n->input[k]) : NULL;
        if (v && v->id && !strcmp(v->id, id))
            return 1;
    }
    for (size_t a = 0; a < n->n_attribute; a++) {
        const Onnx__AttributeProto *at = n->attribute[a];
        if (at && at->g && graph_reads_id(I, at->g, id))
            return 1;
        for (size_t j = 0; at && j < at->n_graphs; j++)
            if (at->graphs[j] && graph_reads_id(I, at->graphs[j], id))
                return 1;
    }
    return 0;
}

static int graph_reads_id(imp *I, const Onnx__GraphProto *g, const char *id)
{
    for (size_t k = 0; k < g->n_node; k++)
        if (g->node[k] && node_reads_id(I, g->node[k], id))
            return 1;
    return 0;
}

/* The last node of g that reads a value variable id holds (-1: none). */
static int last_use_of_id(imp *I, const Onnx__GraphProto *g, const char *id)
{
    int last = -1;
    for (size_t k = 0; k < g->n_node; k++)
        if (g->node[k] && node_reads_id(I, g->node[k], id))
            last = (int)k;
    for (size_t k = 0; k < g->n_output; k++) {
        ival *v = g->output[k] && g->output[k]->name ? lookup(I, g->output[k]->name) : NULL;
        if (v && v->id && !strcmp(v->id, id))
            last = (int)g->n_node; /* given back as it is: never written in the branch */
    }
    return last;
}

/* The index of the last node of g that reads `name` (-1: none), for values whose old contents a
 * direct write must not destroy too early; a function's nodes count as their node's. */
static int last_read(const Onnx__GraphProto *g, const char *name)
{
    int last = -1;
    for (size_t k = 0; k < g->n_node; k++)
        if (g->node[k] && node_reads(g->node[k], name))
            last = (int)k;
    return last;
}

/* ---- the model ------------------------------------------------------------------------------- */

/* Calls back each identifier of line [p, end) outside comments and strings. */
static void idents(imp *I, const char *p, const char *end, smap *counts, int delta, const char **lines_of,
                   int *work, int *nwork)
{
    int str = 0;
    while (p < end) {
        char c = *p;
        if (str) {
            if (c == '\\' && p + 1 < end)
                p++;
            else if (c == '"')
                str = 0;
            p++;
        } else if (c == '"') {
            str = 1;
            p++;
        } else if (c == '#') {
            break;
        } else if (ident_start(c) && (p == end || 1)) {
            const char *q = p;
            while (q < end && ident_char(*q))
                q++;
            char *name = fmt(I, "%.*s", (int)(q - p), p);
            int *slot = smap_slot(I, counts, name, delta > 0);
            if (slot) {
                if (*slot < 0)
                    *slot = 0;
                *slot += delta;
                if (delta < 0 && *slot == 1 && lines_of) {
                    int *li = smap_slot(I, (smap *)lines_of, name, 0);
                    if (li && *li >= 0)
                        work[(*nwork)++] = *li;
                }
            }
            p = q;
        } else {
            p++;
        }
    }
}

static void prune(imp *I)
{
    char *t = I->body.data;
    if (!t)
        return;
    size_t len = I->body.len;
    int nlines = 0;
    for (size_t i = 0; i < len; i++)
        nlines += t[i] == '\n';
    size_t *start = alloc(I, ((size_t)nlines + 1) * sizeof *start);
    const char **def = alloc(I, ((size_t)nlines + 1) * sizeof *def);
    char *dead = alloc(I, (size_t)nlines + 1);
    int *work = alloc(I, ((size_t)nlines + 1) * sizeof *work);
    int nwork = 0;
    smap counts = {0}, lines = {0};
    for (int l = 0, i = 0; l < nlines; l++) {
        start[l] = (size_t)i;
        while (t[i] != '\n')
            i++;
        i++;
    }
    start[nlines] = len;
    for (int l = 0; l < nlines; l++) {
        const char *p = t + start[l], *end = t + start[l + 1];
        while (p < end && *p == ' ')
            p++;
        if (p < end && *p == PURE_MARK) {
            const char *q = strchr(p, PURE_END);
            def[l] = fmt(I, "%.*s", (int)(q - p - 1), p + 1);
            *smap_slot(I, &lines, def[l], 1) = l;
            p = q + 1;
        }
        idents(I, p, end, &counts, 1, NULL, NULL, NULL);
    }
    for (int l = 0; l < nlines; l++)
        if (def[l] && *smap_slot(I, &counts, def[l], 0) == 1)
            work[nwork++] = l;
    while (nwork > 0) {
        int l = work[--nwork];
        if (dead[l])
            continue;
        dead[l] = 1;
        const char *p = strchr(t + start[l], PURE_END) + 1;
        idents(I, p, t + start[l + 1], &counts, -1, (const char **)&lines, work, &nwork);
    }
    strbuf out = {0};
    for (int l = 0; l < nlines; l++) {
        if (dead[l])
            continue;
        const char *p = t + start[l], *end = t + start[l + 1];
        const char *m = memchr(p, PURE_MARK, (size_t)(end - p));
        if (m) {
            sb_append(&out, p, (size_t)(m - p));
            p = strchr(m, PURE_END) + 1;
        }
        sb_append(&out, p, (size_t)(end - p));
    }
    smap_free(&counts);
    smap_free(&lines);
    if (out.oom) {
        sb_free(&out);
        fail(I, "out of memory");
    }
    sb_free(&I->body);
    I->body = out;
}

/* A sequence input given item by item, as NAME[0], NAME[1], ... in `shapes` (its items may differ
 * in shape): each item a parameter of its own under that name, and the sequence held item by
 * item (SEQ_ITEMS). 0 where no NAME[0] is given. */
static int seq_input_items(imp *I, const char *name, const Onnx__TypeProto__Tensor *tt, int *nparams)
{
    int64_t n = 0;
    const cfx_input_shape **given = NULL;
    for (;; n++) {
        const char *iname = fmt(I, "%s[%lld]", name, (long long)n);
        const cfx_input_shape *found = NULL;
        for (int k = 0; k < I->nshapes; k++)
            if (I->shapes[k].name && !strcmp(I->shapes[k].name, iname))
                found = &I->shapes[k];
        if (!found)
            break;
        const cfx_input_shape **more = alloc(I, (size_t)(n + 1) * sizeof *more);
        copy(more, given, (size_t)n * sizeof *more);
        more[n] = found;
        given = more;
    }
    if (n == 0)
        return 0;
    int half;
    cfx_dtype dt = dtype_of(I, tt->has_elem_type ? tt->elem_type : 0, name, &half);
    if (half)
        fail(I, "input '%s' is a sequence of %s items: a sequence of float16, bfloat16 or narrow integer items is "
             "not supported", name, half_types[half]);
    const Onnx__GraphProto *g = I->mp->graph;
    const char **names = alloc(I, ((size_t)*nparams + (size_t)n + g->n_input + 1) * sizeof *names);
    copy(names, I->in_names, (size_t)*nparams * sizeof *names);
    I->in_names = names;
    ival **items = alloc(I, (size_t)(n + 1) * sizeof *items);
    for (int64_t j = 0; j < n; j++) {
        const char *iname = fmt(I, "%s[%lld]", name, (long long)j);
        cfx_type t = given[j]->type;
        int same = t.dtype == dt;
        if (tt->shape) {
            same &= (int)tt->shape->n_dim == t.rank;
            for (int d = 0; same && d < t.rank; d++) {
                const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
                same &= !dim || dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
                        dim->dim_value == t.dims[d];
            }
        }
        if (!same)
            fail(I, "input '%s' is given as %s, but the model's sequence '%s' holds %s items%s", iname,
                 tystr(I, &t), name, cfx_dtype_name(dt), tt->shape ? fmt(I, " of rank %zu and the shape it declares",
                 tt->shape->n_dim) : "");
        check_shape(I, iname, t.rank, t.dims, 1);
        if (count(&t) == 0)
            fail(I, "input '%s' has no elements: cfx has no tensors of 0 elements at run time (an empty sequence "
                 "is given stacked, as [0, item dims])", iname);
        ival *v = items[j] = alloc(I, sizeof *v);
        v->name = iname;
        v->ty = t;
        v->prev = -1;
        v->slen = -1;
        v->id = new_id(I, "in_", fmt(I, "%s_%lld", name, (long long)j));
        sb_printf(&I->head, "%s%s: %s", *nparams ? ", " : "", v->id, tystr(I, &t));
        I->in_names[(*nparams)++] = iname;
    }
    seq_items_bind(I, name, items, n, dt);
    return 1;
}

/* A graph input that is a sequence (or an optional of one), which a cfx list cannot be: the
 * caller gives its items stacked along a new first axis, as a sequence result comes back (cfx
 * run: a .npy file of [length, item dims]; C and Python: shapes), and the import specialises the
 * model on that length: the parameter is the stacked tensor, of which the graph makes the list
 * of its rows. A length of 0 is an input of 0 elements, known at import: an empty list. 0 where
 * vi is no sequence; else 1, the input bound. */
static int seq_input(imp *I, const Onnx__ValueInfoProto *vi, int *nparams)
{
    const Onnx__TypeProto *tp = vi->type;
    while (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && tp->optional_type)
        tp = tp->optional_type->elem_type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE)
        return 0;
    const Onnx__TypeProto *e = tp->sequence_type ? tp->sequence_type->elem_type : NULL;
    const char *name = vi->name;
    if (!e || e->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !e->tensor_type)
        fail(I, "input '%s' is a sequence of no tensors: cfx takes sequences of tensors", name);
    const cfx_input_shape *given = NULL;
    for (int k = 0; k < I->nshapes; k++)
        if (I->shapes[k].name && !strcmp(I->shapes[k].name, name))
            given = &I->shapes[k];
    for (int k = 0; given && k < I->nshapes; k++)
        if (I->shapes[k].name && !strcmp(I->shapes[k].name, fmt(I, "%s[0]", name)))
            fail(I, "input '%s' is given both stacked and item by item ('%s[0]'): give it one way", name, name);
    if (!given && seq_input_items(I, name, e->tensor_type, nparams))
        return 1;
    if (!given)
        fail(I, "input '%s' is a sequence: give its items stacked along a new first axis, as a sequence result "
             "comes back (cfx run: a .npy input of [length, item dims]; the C API and Python: shapes), or item "
             "by item as '%s[0]', '%s[1]', ...", name, name, name);
    cfx_type st = given->type, it;
    int half;
    const Onnx__TypeProto__Tensor *tt = e->tensor_type;
    cfx_dtype dt = dtype_of(I, tt->has_elem_type ? tt->elem_type : 0, name, &half);
    if (half)
        fail(I, "input '%s' is a sequence of %s items: a sequence of float16, bfloat16 or narrow integer items is "
             "not supported", name, half_types[half]);
    if (st.rank < 1 || st.rank > CFX_TYPE_MAX_RANK)
        fail(I, "input '%s' is a sequence, given as a value of rank %d: its items stacked have rank 1 to %d", name,
             st.rank, CFX_TYPE_MAX_RANK);
    check_shape(I, name, st.rank, st.dims, 1);
    it = st;
    it.rank = st.rank - 1;
    for (int d = 0; d < it.rank; d++)
        it.dims[d] = st.dims[d + 1];
    int same = dt == st.dtype && count(&it) > 0;
    if (tt->shape) {
        same &= (int)tt->shape->n_dim == it.rank;
        for (int d = 0; same && d < it.rank; d++) {
            const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
            same &= !dim || dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
                    dim->dim_value == it.dims[d];
        }
    }
    if (!same)
        fail(I, "input '%s' is given as %s: a sequence of %s items stacked, but the model's items are %s%s", name,
             tystr(I, &st), tystr(I, &it), cfx_dtype_name(dt), count(&it) ? " of another shape" : " (of some elements)");
    const char *sid = new_id(I, "s_", name);
    int64_t len = st.dims[0];
    I->note = fmt(I, "input '%s', a sequence", clean(I, name));
    if (len == 0) { /* no items: known at import, and no parameter */
        line(I, "%s = list(%s, 1)", sid, tystr(I, &it));
        I->known_names[I->nknown] = name;
        I->known_types[I->nknown++] = st;
    } else {
        const char *id = new_id(I, "in_", name), *v = new_id(I, "v_", name);
        sb_printf(&I->head, "%s%s: %s", *nparams ? ", " : "", id, tystr(I, &st));
        I->in_names[(*nparams)++] = name;
        line(I, "%s = list(%s, %lld)", sid, tystr(I, &it), (long long)len);
        line(I, "for %s in %s {", v, id);
        line(I, "  %s.append(%s)", sid, v);
        line(I, "}");
    }
    I->note = NULL;
    seq_bind(I, name, &it, sid, SEQ_LIST, len ? len : 1, len);
    return 1;
}

static void import_model(imp *I, onnx_import *out)
{
    Onnx__ModelProto *mp = I->mp;
    const Onnx__GraphProto *g = mp->graph;
    if (!g)
        fail(I, "the model holds no graph");
    I->opset = -1;
    for (size_t k = 0; k < mp->n_opset_import; k++) {
        const Onnx__OperatorSetIdProto *o = mp->opset_import[k];
        if (o && (!o->domain || !*o->domain || !strcmp(o->domain, "ai.onnx")))
            I->opset = o->has_version ? o->version : 1;
    }
    if (I->opset < 0 && mp->n_opset_import > 0)
        I->opset = ONNX_OPSET_MAX; /* only other domains imported (ai.onnx.preview.training's ops) */
    if (I->opset < 0)
        I->opset = 1; /* IR 3 models without opset_import run opset 1 */
    if (I->opset < ONNX_OPSET_MIN || I->opset > ONNX_OPSET_MAX)
        fail(I, "the model uses opset %lld of the default domain; cfx imports opsets %d to %d", (long long)I->opset,
             ONNX_OPSET_MIN, ONNX_OPSET_MAX);
    /* initializers, then the inputs that are not initializers */
    for (size_t k = 0; k < g->n_initializer; k++) {
        const Onnx__TensorProto *t = g->initializer[k];
        if (!t || !t->name)
            fail(I, "initializer %zu has no name", k);
        cfx_type ty;
        int half;
        void *data = tensor_data(I, t, &ty, &half);
        bind(I, t->name, &ty, NULL, data)->half = half;
    }
    /* the graph's name as an identifier; a word of the language, or none, is prefixed */
    static const char *const words[] = {"graph", "if", "elif", "else", "while", "for", "in", "range",
                                        "switch", "case", "default", "break", "continue", "return",
                                        "true", "false", "True", "False", "and", "or", "not", "is",
                                        "None", "pass", "const", "print", "assert", "lambda", "def"};
    const char *gname = new_id(I, "", g->name && *g->name ? g->name : "model");
    int word = !*gname || (gname[0] >= '0' && gname[0] <= '9');
    for (size_t k = 0; k < sizeof words / sizeof *words; k++)
        word |= !strcmp(gname, words[k]);
    if (word)
        gname = new_id(I, "g_", g->name && *g->name ? g->name : "model");
    I->in_names = take(I, calloc(g->n_input + 1, sizeof *I->in_names));
    I->res_names = take(I, calloc(g->n_output + 1, sizeof *I->res_names));
    I->known_names = take(I, calloc(g->n_input + 1, sizeof *I->known_names));
    I->known_types = take(I, calloc(g->n_input + 1, sizeof *I->known_types));
    I->kres_names = take(I, calloc(g->n_output + 1, sizeof *I->kres_names));
    I->kres_types = take(I, calloc(g->n_output + 1, sizeof *I->kres_types));
    sb_printf(&I->head, "graph %s(", gname);
    I->indent = 1;
    int nparams = 0;
    for (size_t k = 0; k < g->n_input; k++) {
        const Onnx__ValueInfoProto *vi = g->input[k];
        if (!vi || !vi->name)
            fail(I, "input %zu has no name", k);
        ival *init = lookup(I, vi->name);
        if (init && init->data)
            continue; /* an initializer listed as an input (IR < 4): a constant here */
        cfx_type t;
        int half, optional = opt_input_type(vi);
        Onnx__ValueInfoProto elem = *vi;
        if (optional) /* a parameter that defaults to None */
            elem.type = vi->type->optional_type->elem_type;
        if (seq_input(I, vi, &nparams))
            continue;
        value_info_type(I, &elem, 1, &t, &half);
        if (count(&t) == 0) {
            /* 0 elements: its dtype and shape are all of it, a value known here and no
             * parameter; the run takes it by name alone (cfx_known_input_count) */
            ival *v = bind(I, vi->name, &t, NULL, alloc(I, 1));
            v->half = half;
            I->known_names[I->nknown] = vi->name;
            I->known_types[I->nknown++] = t;
            continue;
        }
        const char *id = new_id(I, "in_", vi->name);
        ival *v = bind(I, vi->name, &t, id, NULL);
        v->opt = optional ? OPT_MAY : 0;
        for (int j = 0; I->use_values && j < I->nshapes; j++)
            if (I->shapes[j].value && I->shapes[j].name && !strcmp(I->shapes[j].name, vi->name) &&
                same_type(&I->shapes[j].type, &t)) {
                /* fixed at import: the value is a constant, and the run checks it was given */
                size_t bytes = (size_t)count(&t) * (size_t)cfx_dtype_size(t.dtype);
                ival fixed = {.name = fmt(I, "%s_fixed", vi->name), .ty = t, .data = alloc(I, bytes)};
                memcpy(fixed.data, I->shapes[j].value, bytes);
                const char *c = ref(I, &fixed);
                I->note = fmt(I, "input '%s'", clean(I, vi->name));
                line(I, "assert(%s, \"input '%s' was fixed to another value when the model was imported: "
                     "import it again for this one\")", count(&t) == 1 ? fmt(I, "%s == %s", id, c)
                     : fmt(I, "all(%s == %s)", id, c), clean(I, vi->name));
                I->note = NULL;
                v->data = fixed.data;
                v->id = c;
            }
        if (half) { /* given as f32: rounded once, so that the model sees values of its type */
            I->note = fmt(I, "input '%s' is %s", clean(I, vi->name), half_types[half]);
            v->half = half;
            if (v->data)
                round_known(I, v);
            else if (half != HALF_U64) /* uint64's bits: nothing to wrap */
                round_value(I, v, 1);
            I->note = NULL;
        }
        sb_printf(&I->head, "%s%s: %s%s", nparams ? ", " : "", id, tystr(I, &t), optional ? " = None" : "");
        I->in_names[nparams++] = vi->name;
    }
    I->nin = nparams;
    for (size_t k = 0; k < g->n_output; k++)
        for (size_t j = 0; j < k; j++)
            if (g->output[k] && g->output[j] && g->output[k]->name && g->output[j]->name &&
                !strcmp(g->output[k]->name, g->output[j]->name))
                fail(I, "output '%s' is listed twice", g->output[k]->name);
    /* the outputs' variables, which the nodes that compute them write directly */
    const char **out_ids = alloc(I, (g->n_output + 1) * sizeof *out_ids);
    for (size_t k = 0; k < g->n_output; k++) {
        if (!g->output[k] || !g->output[k]->name)
            fail(I, "output %zu has no name", k);
        out_ids[k] = new_id(I, "out_", g->output[k]->name);
        add_direct(I, g->output[k]->name, out_ids[k], I->depth, -1);
    }
    emit_graph_nodes(I, g);
    drop_direct(I, I->depth);
    I->node = NULL;
    I->note = NULL;
    sb_puts(&I->head, ") -> (");
    if (g->n_output == 0)
        fail(I, "the graph has no outputs");
    for (size_t k = 0; k < g->n_output; k++) {
        const Onnx__ValueInfoProto *vo = g->output[k];
        if (!vo || !vo->name)
            fail(I, "output %zu has no name", k);
        ival *v = lookup(I, vo->name);
        if (!v)
            fail(I, "output '%s' is computed by no node", vo->name);
        if (v->opt == OPT_NONE)
            fail(I, "output '%s' is None: a cfx result is never None", vo->name);
        if (v->seq) { /* a sequence result: its items stacked along a new first axis */
            I->note = fmt(I, "output '%s', a sequence", clean(I, vo->name));
            if (seq_item_results(I, v, vo->name)) /* or item by item, where they differ in shape */
                continue;
            v = seq_result(I, v, out_ids[k]);
        }
        if (count(&v->ty) == 0 && v->data && !v->seq) {
            /* 0 elements: known by its type, no result of the program; the run hands it back
             * as an empty array (cfx_known_result_count) */
            I->kres_names[I->nkres] = vo->name;
            I->kres_types[I->nkres++] = v->ty;
            continue;
        }
        cfx_type decl;
        int half;
        if (value_info_type(I, vo, 0, &decl, &half) && !same_type(&decl, &v->ty))
            fail(I, "output '%s' is declared %s but computes %s", vo->name, tystr(I, &decl), tystr(I, &v->ty));
        const char *id = out_ids[k], *r = ref(I, v);
        sb_printf(&I->head, "%s%s: %s", I->nres ? ", " : "", id, tystr(I, &v->ty));
        I->note = fmt(I, "output '%s'", clean(I, vo->name));
        if (strcmp(id, r) != 0)
            line(I, "%s = %s", id, r);
        I->res_names[I->nres++] = vo->name;
    }
    sb_puts(&I->head, ") {\n");
    prune(I);
    strbuf *text = new_sb(I);
    sb_printf(text, "# imported from %s (ONNX IR %lld, opset %lld%s%s) by cfx import\n", clean(I, I->model),
              (long long)mp->ir_version, (long long)I->opset, mp->producer_name && *mp->producer_name ? ", made by " : "",
              clean(I, mp->producer_name));
    sb_append(text, sb_str(&I->consts), I->consts.len);
    if (I->consts.len)
        sb_puts(text, "\n");
    sb_append(text, sb_str(&I->head), I->head.len);
    sb_append(text, sb_str(&I->body), I->body.len);
    sb_puts(text, "}\n");
    if (text->oom) {
        sb_free(text);
        fail(I, "out of memory");
    }
    out->text = sb_take(text);
}

static char *dup_plain(const char *s)
{
    char *c = malloc(strlen(s) + 1);
    if (c)
        strcpy(c, s);
    return c;
}

/* 1 when the serialized message p[0, len) of type d nests no deeper than `room` messages:
 * protobuf-c unpacks nested messages by recursion, so a model nested a million deep would
 * overflow the stack before the importer saw it. Walks the wire format with the schema's own
 * descriptors; a malformed encoding is left to unpack to refuse. */
static uint64_t wire_varint(const uint8_t **p, const uint8_t *end, int *ok)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p >= end) {
            *ok = 0;
            return 0;
        }
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    *ok = 0;
    return 0;
}

static int nesting_ok(const uint8_t *p, size_t len, const ProtobufCMessageDescriptor *d, int room)
{
    if (room <= 0)
        return 0;
    const uint8_t *end = p + len;
    int ok = 1;
    while (p < end && ok) {
        uint64_t tag = wire_varint(&p, end, &ok);
        unsigned wt = (unsigned)(tag & 7);
        uint64_t n;
        switch (wt) {
        case 0:
            wire_varint(&p, end, &ok);
            break;
        case 1:
        case 5:
            n = wt == 1 ? 8 : 4;
            if ((uint64_t)(end - p) < n)
                return 1;
            p += n;
            break;
        case 2: {
            n = wire_varint(&p, end, &ok);
            if (!ok || n > (uint64_t)(end - p))
                return 1;
            const ProtobufCFieldDescriptor *f =
                tag >> 3 <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(d, (unsigned)(tag >> 3)) : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE && f->descriptor &&
                !nesting_ok(p, (size_t)n, f->descriptor, room - 1))
                return 0;
            p += n;
            break;
        }
        default:
            return 1; /* groups and worse: unpack refuses them */
        }
    }
    return 1;
}

/* Reads the model, imports it and hands the result over; leaves by fail() on any error. */
static void import_all(imp *I, const char *path, onnx_import *out)
{
    if (path) {
        const char *slash = strrchr(path, '/');
        I->dir = slash == path ? sdup(I, "/") : slash ? fmt(I, "%.*s", (int)(slash - path), path) : sdup(I, ".");
    }
    if (!I->bytes) {
        if (!path)
            fail(I, "neither a path nor bytes were given");
        FILE *f = fopen(path, "rb");
        if (!f)
            fail(I, "cannot read: %s", strerror(errno));
        size_t cap = 1 << 16, n = 0;
        I->file = malloc(cap);
        while (I->file) {
            size_t got = fread(I->file + n, 1, cap - n, f);
            n += got;
            if (got == 0)
                break;
            if (n == cap) {
                if (cap >= ONNX_MAX_MODEL) {
                    fclose(f);
                    fail(I, "the model is larger than 2 GiB (keep weights as external data)");
                }
                uint8_t *grown = realloc(I->file, cap * 2);
                if (!grown)
                    break;
                I->file = grown;
                cap *= 2;
            }
        }
        fclose(f);
        if (!I->file)
            fail(I, "out of memory");
        I->bytes = I->file;
        I->len = n;
    }
    if (!nesting_ok(I->bytes, I->len, &onnx__model_proto__descriptor, ONNX_MAX_NESTING))
        fail(I, "the model nests its messages (subgraphs, types) more than %d deep", ONNX_MAX_NESTING);
    I->mp = onnx__model_proto__unpack(NULL, I->len, I->bytes);
    if (!I->mp)
        fail(I, "not an ONNX model: the protobuf does not parse (a truncated or corrupt file?)");
    import_model(I, out);
    /* hand over what the result keeps: copies, since everything else goes with I */
    out->file = dup_plain(fmt(I, "%s.cfx", I->model));
    out->constants = calloc((size_t)I->ntable + 1, sizeof *out->constants);
    out->input_names = calloc((size_t)I->nin + 1, sizeof *out->input_names);
    out->result_names = calloc((size_t)I->nres + 1, sizeof *out->result_names);
    out->known_names = calloc((size_t)I->nknown + 1, sizeof *out->known_names);
    out->known_types = calloc((size_t)I->nknown + 1, sizeof *out->known_types);
    out->kres_names = calloc((size_t)I->nkres + 1, sizeof *out->kres_names);
    out->kres_types = calloc((size_t)I->nkres + 1, sizeof *out->kres_types);
    if (!out->file || !out->constants || !out->input_names || !out->result_names || !out->known_names ||
        !out->known_types || !out->kres_names || !out->kres_types)
        fail(I, "out of memory");
    for (; out->nknown < I->nknown; out->nknown++) {
        out->known_types[out->nknown] = I->known_types[out->nknown];
        if (!(out->known_names[out->nknown] = dup_plain(I->known_names[out->nknown])))
            fail(I, "out of memory");
    }
    for (; out->nkres < I->nkres; out->nkres++) {
        out->kres_types[out->nkres] = I->kres_types[out->nkres];
        if (!(out->kres_names[out->nkres] = dup_plain(I->kres_names[out->nkres])))
            fail(I, "out of memory");
    }
    for (; out->ninputs < I->nin; out->ninputs++)
        if (!(out->input_names[out->ninputs] = dup_plain(I->in_names[out->ninputs])))
            fail(I, "out of memory");
    for (; out->nresults < I->nres; out->nresults++)
        if (!(out->result_names[out->nresults] = dup_plain(I->res_names[out->nresults])))
            fail(I, "out of memory");
    for (int k = 0; k < I->ntable; k++) {
        onnx_constant *c = &out->constants[k];
        size_t bytes = (size_t)count(&I->table[k].type) * (size_t)cfx_dtype_size(I->table[k].type.dtype);
        c->type = I->table[k].type;
        c->name = dup_plain(I->table[k].name);
        c->data = malloc(bytes ? bytes : 1);
        out->nconstants = k + 1;
        if (!c->name || !c->data)
            fail(I, "out of memory");
        memcpy(c->data, I->table[k].data, bytes);
    }
}

static int import_once(const char *path, const void *bytes, size_t len, const cfx_input_shape *shapes,
                       int nshapes, int use_values, const char *data_dir, const char *data_dir_text,
                       onnx_import *out, char **err)
{
    imp *I = calloc(1, sizeof *I);
    memset(out, 0, sizeof *out);
    *err = NULL;
    if (!I) {
        *err = dup_plain("out of memory\n");
        return -1;
    }
    I->model = path ? path : "model.onnx";
    I->shapes = shapes;
    I->nshapes = shapes ? nshapes : 0;
    I->use_values = use_values;
    I->data_dir = data_dir;
    I->data_dir_text = data_dir_text;
    I->bytes = bytes;
    I->len = len;
    int failed = setjmp(I->jb);
    if (!failed)
        import_all(I, path, out);
    if (failed) {
        *err = I->msg ? I->msg : dup_plain("out of memory\n");
        onnx_import_free(out);
    }
    if (I->mp)
        onnx__model_proto__free_unpacked(I->mp, NULL);
    free(I->file);
    for (int k = 0; k < I->nsbs; k++) /* before the allocations that hold them */
        sb_free(I->sbs[k]);
    free(I->sbs);
    for (size_t k = 0; k < I->nallocs; k++)
        free(I->allocs[k]);
    free(I->allocs);
    free(I->vals);
    free(I->table);
    free(I->direct);
    free(I->bases);
    free(I->done);
    free(I->wide);
    smap_free(&I->names);
    smap_free(&I->ids);
    sb_free(&I->consts);
    sb_free(&I->body);
    sb_free(&I->head);
    for (int k = 0; k < I->nheld; k++)
        sb_free(&I->held[k]);
    free(I->held);
    free(I);
    return failed ? -1 : 0;
}

/* Inputs whose values the caller gave are fixed only where the model needs them (a first try
 * without them failed): a plain import keeps every input a run-time value. */
int onnx_import_model(const char *path, const void *bytes, size_t len,
                      const cfx_input_shape *shapes, int nshapes, const char *data_dir,
                      const char *data_dir_text, onnx_import *out, char **err)
{
    int rc = import_once(path, bytes, len, shapes, nshapes, 0, data_dir, data_dir_text, out, err);
    int values = 0;
    for (int k = 0; shapes && k < nshapes; k++)
        values |= shapes[k].value != NULL;
    if (rc != 0 && values && *err && strstr(*err, "must be known when the model is imported")) {
        char *first = *err;
        rc = import_once(path, bytes, len, shapes, nshapes, 1, data_dir, data_dir_text, out, err);
        free(first);
    }
    return rc;
}

void onnx_import_free(onnx_import *im)
{
    if (!im)
        return;
    free(im->text);
    free(im->file);
    for (int k = 0; k < im->nconstants; k++) {
        free(im->constants[k].name);
        free(im->constants[k].data);
    }
    free(im->constants);
    if (im->input_names)
        for (int k = 0; k < im->ninputs; k++)
            free(im->input_names[k]);
    free(im->input_names);
    if (im->result_names)
        for (int k = 0; k < im->nresults; k++)
            free(im->result_names[k]);
    free(im->result_names);
    if (im->known_names)
        for (int k = 0; k < im->nknown; k++)
            free(im->known_names[k]);
    free(im->known_names);
    free(im->known_types);
    if (im->kres_names)
        for (int k = 0; k < im->nkres; k++)
            free(im->kres_names[k]);
    free(im->kres_names);
    free(im->kres_types);
    memset(im, 0, sizeof *im);
}

#endif
