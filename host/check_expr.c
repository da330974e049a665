/* check_expr.c: the checker's expressions (names, literals, constant folding, indexing), the
 * type rules of the built-in ops, and calls (graphs, ops, kernels, assert, print).
 * Statements, joins and graphs are in check.c; the state both share is in check_int.h.
 */
#include "check_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"

/* ---- types ------------------------------------------------------------------------------ */
static const char *dtype_name(int dt)
{
    static const char *const names[] = {"f32", "f64", "i32", "i64", "bool"};
    return dt >= 0 && dt <= CFX_BOOL ? names[dt] : "?";
}

char *check_type_str(const cfx_type *t, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "%s[", dtype_name(t->dtype));
    for (int i = 0; i < t->rank && i < CFX_TYPE_MAX_RANK && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, i ? ", %" PRId64 : "%" PRId64, t->dims[i]);
    if (n < len)
        snprintf(buf + n, len - n, "]");
    return buf;
}

int check_same_type(const cfx_type *a, const cfx_type *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return 1;
}

static int is_real(int dt) { return dt == CFX_F32 || dt == CFX_F64; }
static int is_int(int dt) { return dt == CFX_I32 || dt == CFX_I64; }
static int is_num(int dt) { return dt != CFX_BOOL; }

/* ---- small helpers ------------------------------------------------------------------------- */

static int is_literal(const ast_node *n)
{
    while (n && n->kind == AST_UNARY && n->op == OP_NEG)
        n = n->a;
    return n && (n->kind == AST_INT || n->kind == AST_REAL);
}

static int64_t wrap(int dt, int64_t v) { return dt == CFX_I32 ? (int64_t)(int32_t)(uint32_t)v : v; }

/* The value as the dtype holds it: f32 rounds. A finite double past f32's range is made
 * infinite first, as IEEE rounding would, because C leaves that conversion undefined. */
static double round_real(int dt, double r)
{
    if (dt != CFX_F32)
        return r;
    if (fabs(r) >= 0x1p128)
        return r < 0 ? -(double)INFINITY : (double)INFINITY;
    return (double)(float)r;
}

/* A type written in the source (a parameter, a result, zeros(TYPE)) must describe a tensor the
 * program can hold. */
int check_written_type(checker *C, const cfx_type *t, int line, int col)
{
    char b[TYBUF];
    if (t->rank < 0 || t->rank > CFX_MAX_RANK) {
        diag_error(C->d, line, col, "a tensor has at most %d dimensions", CFX_MAX_RANK);
        return -1;
    }
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) {
        if (t->dims[i] < 1) {
            diag_error(C->d, line, col, "tensor dimensions must be at least 1, got %s", tystr(t, b));
            return -1;
        }
        if (t->dims[i] > CFX_MAX_ELEMENTS || n * t->dims[i] > CFX_MAX_ELEMENTS) {
            diag_error(C->d, line, col, "tensor type %s has more than %" PRId64 " elements",
                       tystr(t, b), (int64_t)CFX_MAX_ELEMENTS);
            return -1;
        }
        n *= t->dims[i];
    }
    return 0;
}

/* The result shape of an elementwise op on a and b: equal shapes, or one of them has one
 * element (then the other's shape; of two one-element shapes the one of higher rank). */
static int broadcast(const cfx_type *a, const cfx_type *b, cfx_type *out)
{
    cfx_type sa = *a, sb = *b;
    sb.dtype = sa.dtype;
    if (check_same_type(&sa, &sb)) {
        *out = sa;
        return 0;
    }
    int64_t na = type_count(a), nb = type_count(b);
    if (na == 1 && (nb != 1 || b->rank >= a->rank))
        *out = *b;
    else if (nb == 1)
        *out = *a;
    else
        return -1;
    return 0;
}

/* ---- expressions ----------------------------------------------------------------------------- */

/* Sets n's type to a scalar with a known value. */
static void set_known(checker *C, ast_node *n, int dt, int64_t iv, double rv)
{
    check_note *k = check_note_of(C, n);
    n->ty = scalar_type((cfx_dtype)dt);
    k->known = 1;
    k->ival = is_real(dt) ? 0 : iv;
    k->rval = is_real(dt) ? round_real(dt, rv) : 0;
}

/* A literal, possibly negated: `3`, `-1.5`. It takes the dtype `want` when it can
 * (an integer literal any numeric dtype, a real one f32 or f64); alone it is i32 or f32. */
static int check_literal(checker *C, ast_node *n, int want)
{
    int neg = 0;
    const ast_node *base = n;
    while (base->kind == AST_UNARY) {
        neg = !neg;
        base = base->a;
    }
    if (base->kind == AST_REAL) {
        int dt = want == CFX_F64 ? CFX_F64 : CFX_F32;
        double r = neg ? -base->rval : base->rval;
        set_known(C, n, dt, 0, r);
        return 0;
    }
    int dt = (want >= 0 && is_num(want)) ? want : CFX_I32;
    int64_t v = neg ? -base->ival : base->ival;
    if (dt == CFX_I32 && (v > INT32_MAX || v < INT32_MIN)) {
        diag_error(C->d, n->line, n->col, "integer literal %" PRId64 " does not fit in i32", v);
        return -1;
    }
    set_known(C, n, dt, v, (double)v);
    return 0;
}

/* Folds a known binary op on scalars; returns 1 if the result is known. */
static int fold_binary(int op, int dt, const check_note *x, const check_note *y, int64_t *iv, double *rv)
{
    if (is_real(dt)) {
        double a = x->rval, b = y->rval;
        switch (op) {
        case OP_ADD: *rv = a + b; return 1;
        case OP_SUB: *rv = a - b; return 1;
        case OP_MUL: *rv = a * b; return 1;
        case OP_DIV: *rv = a / b; return 1;
        case OP_LT: *iv = a < b; return 1;
        case OP_LE: *iv = a <= b; return 1;
        case OP_GT: *iv = a > b; return 1;
        case OP_GE: *iv = a >= b; return 1;
        case OP_EQ: *iv = a == b; return 1;
        case OP_NE: *iv = a != b; return 1;
        default: return 0;
        }
    }
    int64_t a = x->ival, b = y->ival;
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (op) {
    case OP_ADD: *iv = wrap(dt, (int64_t)(ua + ub)); return 1;
    case OP_SUB: *iv = wrap(dt, (int64_t)(ua - ub)); return 1;
    case OP_MUL: *iv = wrap(dt, (int64_t)(ua * ub)); return 1;
    case OP_DIV:
    case OP_MOD:
        if (b == 0)
            return 0; /* left to the run, which stops with status divide */
        if (b == -1) {
            *iv = op == OP_DIV ? wrap(dt, (int64_t)(0 - ua)) : 0;
            return 1;
        }
        *iv = op == OP_DIV ? a / b : a % b;
        return 1;
    case OP_LT: *iv = a < b; return 1;
    case OP_LE: *iv = a <= b; return 1;
    case OP_GT: *iv = a > b; return 1;
    case OP_GE: *iv = a >= b; return 1;
    case OP_EQ: *iv = a == b; return 1;
    case OP_NE: *iv = a != b; return 1;
    case OP_AND: *iv = a && b; return 1;
    case OP_OR: *iv = a || b; return 1;
    default: return 0;
    }
}

/* Arithmetic on literals alone (`1`, `-2.5`, `(1 + 2) * 3`) takes its dtype from where it
 * is used, like a literal: `x * (1 + 2)` is f32 for an f32 x. */
static int is_literal_expr(const ast_node *n)
{
    if (!n)
        return 0;
    if (n->kind == AST_INT || n->kind == AST_REAL)
        return 1;
    if (n->kind == AST_UNARY && n->op == OP_NEG)
        return is_literal_expr(n->a);
    if (n->kind == AST_BINARY && (n->op == OP_ADD || n->op == OP_SUB || n->op == OP_MUL ||
                                  n->op == OP_DIV || n->op == OP_MOD))
        return is_literal_expr(n->a) && is_literal_expr(n->b);
    return 0;
}

static int has_real_literal(const ast_node *n)
{
    if (!n)
        return 0;
    return n->kind == AST_REAL || has_real_literal(n->a) || has_real_literal(n->b);
}

/* Checks the two operands of an elementwise op, giving a literal the other side's dtype; when
 * both are literals they take `want` (the dtype the context asks for, -1 for none), or f32 if
 * one of them is real. `name` spells the op in messages (`+` or `add`). On success *shape is
 * the result shape (its dtype is the operands'). */
static int check_pair(checker *C, env *e, ast_node *at, const char *name, ast_node *a, ast_node *b,
                      cfx_type *shape, int want)
{
    int la = is_literal_expr(a), lb = is_literal_expr(b), ra, rb;
    if (la && lb) {
        int dt = want >= 0 && is_num(want) ? want : -1;
        if (has_real_literal(a) || has_real_literal(b))
            dt = want == CFX_F64 ? CFX_F64 : CFX_F32;
        ra = check_expr(C, e, a, dt);
        rb = check_expr(C, e, b, dt);
    } else if (la) {
        rb = check_expr(C, e, b, -1);
        ra = check_expr(C, e, a, rb == 0 ? (int)b->ty.dtype : -1);
    } else {
        ra = check_expr(C, e, a, -1);
        rb = check_expr(C, e, b, ra == 0 ? (int)a->ty.dtype : -1);
    }
    if (ra < 0 || rb < 0)
        return -1;
    char b1[TYBUF], b2[TYBUF];
    if (a->ty.dtype != b->ty.dtype) {
        diag_error(C->d, at->line, at->col, "operands of '%s' have different dtypes: %s and %s", name,
                   dtype_name(a->ty.dtype), dtype_name(b->ty.dtype));
        return -1;
    }
    if (broadcast(&a->ty, &b->ty, shape) < 0) {
        diag_error(C->d, at->line, at->col, "operands of '%s' have different shapes: %s and %s", name,
                   tystr(&a->ty, b1), tystr(&b->ty, b2));
        return -1;
    }
    return 0;
}

/* An elementwise op of two operands (infix or called by name), typed into n. */
static int check_elementwise2(checker *C, env *e, ast_node *n, int op, const char *name, ast_node *a,
                              ast_node *b, int want)
{
    cfx_type shape;
    int cls = op_class[op];
    if (check_pair(C, e, n, name, a, b, &shape, cls == OPC_BINARY_NUM ? want : -1) < 0)
        return -1;
    int dt = a->ty.dtype;
    char b1[TYBUF];
    if ((cls == OPC_BINARY_NUM || (cls == OPC_COMPARE && op != OP_EQ && op != OP_NE)) && !is_num(dt)) {
        diag_error(C->d, n->line, n->col, "operands of '%s' must be numeric, got %s", name,
                   tystr(&a->ty, b1));
        return -1;
    }
    if (cls == OPC_BINARY_BOOL && dt != CFX_BOOL) {
        diag_error(C->d, n->line, n->col, "operands of '%s' must be bool, got %s", name, tystr(&a->ty, b1));
        return -1;
    }
    n->ty = shape;
    if (cls == OPC_COMPARE)
        n->ty.dtype = CFX_BOOL;
    check_note *k = check_note_of(C, n), *ka = a->note, *kb = b->note;
    int64_t iv = 0;
    double rv = 0;
    /* `false and X` and `true or X` are known whatever X is, as in a short-circuit */
    if (op == OP_AND && ka->known && !ka->ival) {
        set_known(C, n, CFX_BOOL, 0, 0);
    } else if (op == OP_OR && ka->known && ka->ival) {
        set_known(C, n, CFX_BOOL, 1, 0);
    } else if (ka->known && kb->known && fold_binary(op, dt, ka, kb, &iv, &rv)) {
        int rdt = n->ty.dtype;
        set_known(C, n, rdt, is_real(rdt) ? 0 : iv, rv);
    } else {
        k->known = 0;
    }
    return 0;
}

static int check_matmul(checker *C, env *e, ast_node *n, const char *name, ast_node *a, ast_node *b)
{
    int ra = check_expr(C, e, a, -1), rb = check_expr(C, e, b, -1);
    if (ra < 0 || rb < 0)
        return -1;
    char b1[TYBUF], b2[TYBUF];
    const cfx_type *x = &a->ty, *y = &b->ty;
    if (x->dtype != y->dtype || !is_num(x->dtype)) {
        diag_error(C->d, n->line, n->col, "operands of '%s' must be numeric of one dtype, got %s and %s",
                   name, tystr(x, b1), tystr(y, b2));
        return -1;
    }
    if (x->rank != 2 || (y->rank != 1 && y->rank != 2) || x->dims[1] != y->dims[0]) {
        diag_error(C->d, n->line, n->col, "shapes of '%s' do not match: %s @ %s", name, tystr(x, b1),
                   tystr(y, b2));
        return -1;
    }
    cfx_type t = scalar_type(x->dtype);
    t.rank = y->rank;
    t.dims[0] = x->dims[0];
    if (y->rank == 2)
        t.dims[1] = y->dims[1];
    if (type_count(&t) > CFX_MAX_ELEMENTS) {
        diag_error(C->d, n->line, n->col, "the result of '%s' has more than %" PRId64 " elements", name,
                   (int64_t)CFX_MAX_ELEMENTS);
        return -1;
    }
    n->ty = t;
    check_note_of(C, n)->known = 0;
    return 0;
}

/* Reads and checks an index `i` of a tensor of type x (for x[i] and x[i] = E); names the
 * tensor `what` in messages. */
int check_index(checker *C, env *e, ast_node *at, const cfx_type *x, const char *what, ast_node *i)
{
    char b1[TYBUF];
    int ri = check_expr(C, e, i, CFX_I32);
    if (x->rank < 1) {
        diag_error(C->d, at->line, at->col, "indexing needs a tensor of rank >= 1, got %s", tystr(x, b1));
        return -1;
    }
    if (ri < 0)
        return -1;
    if (!is_int(i->ty.dtype) || type_count(&i->ty) != 1) {
        diag_error(C->d, i->line, i->col, "index must be an integer scalar, got %s", tystr(&i->ty, b1));
        return -1;
    }
    check_note *k = i->note;
    if (k->known && (k->ival < -x->dims[0] || k->ival >= x->dims[0])) {
        diag_error(C->d, i->line, i->col, "index %" PRId64 " is out of range for %s with %" PRId64 " rows",
                   k->ival, what, x->dims[0]);
        return -1;
    }
    return 0;
}

void check_tensor_name(const ast_node *n, char *buf, size_t len)
{
    if (n->kind == AST_NAME)
        snprintf(buf, len, "'%s'", n->name);
    else
        snprintf(buf, len, "the tensor");
}

/* A use of variable `name`: its type, or a message saying why it has none here. */
static int check_name(checker *C, env *e, ast_node *n)
{
    int v = check_var_find(C, n->name);
    if (v < 0) {
        diag_error(C->d, n->line, n->col, "'%s' is not defined", n->name);
        return -1;
    }
    vstate *s = &e->v[v];
    char b1[TYBUF], b2[TYBUF];
    switch (s->st) {
    case V_DEF: {
        check_note *k = check_note_of(C, n);
        n->ty = C->types[s->ty];
        k->known = s->known;
        k->ival = s->ival;
        k->rval = s->rval;
        return 0;
    }
    case V_UNDEF:
        diag_error(C->d, n->line, n->col, "'%s' is used before it is assigned", n->name);
        break;
    case V_PARTIAL:
        diag_error(C->d, n->line, n->col, "'%s' is not assigned on every path", n->name);
        break;
    case V_LOOP:
        diag_error(C->d, n->line, n->col, "'%s' is assigned only inside the loop at line %d", n->name, s->line);
        break;
    case V_CONFLICT: {
        const conflict *c = &C->conflicts[s->conflict];
        diag_error(C->d, n->line, n->col, "cannot join '%s': %s (%s, line %d) vs %s (%s, line %d)", n->name,
                   tystr(&C->types[s->ty], b1), c->lab, s->line, tystr(&C->types[c->ty2], b2), c->lab2,
                   c->line2);
        break;
    }
    default:
        break;
    }
    s->st = V_ERROR; /* one message per variable and path */
    return -1;
}

int check_expr(checker *C, env *e, ast_node *n, int want)
{
    char b1[TYBUF];
    check_note *k = check_note_of(C, n);
    k->known = 0;
    if (is_literal(n))
        return check_literal(C, n, want);
    switch (n->kind) {
    case AST_BOOL:
        set_known(C, n, CFX_BOOL, n->ival != 0, 0);
        return 0;
    case AST_NAME:
        return check_name(C, e, n);
    case AST_STRING:
        diag_error(C->d, n->line, n->col, "a string can only be the message of assert or the label of print");
        return -1;
    case AST_TYPE:
        diag_error(C->d, n->line, n->col, "a type is not a value here");
        return -1;
    case AST_UNARY: {
        if (check_expr(C, e, n->a, want) < 0)
            return -1;
        int dt = n->a->ty.dtype;
        if (n->op == OP_NOT ? dt != CFX_BOOL : !is_num(dt)) {
            diag_error(C->d, n->line, n->col, "operand of '%s' must be %s, got %s", op_infix[n->op],
                       n->op == OP_NOT ? "bool" : "numeric", tystr(&n->a->ty, b1));
            return -1;
        }
        n->ty = n->a->ty;
        check_note *ka = n->a->note;
        if (ka->known) {
            if (n->op == OP_NOT)
                set_known(C, n, dt, !ka->ival, 0);
            else
                set_known(C, n, dt, wrap(dt, (int64_t)(0 - (uint64_t)ka->ival)), -ka->rval);
        }
        return 0;
    }
    case AST_BINARY:
        if (n->op == OP_MATMUL)
            return check_matmul(C, e, n, "@", n->a, n->b);
        if (n->op >= OP_COUNT || !op_infix[n->op]) {
            diag_error(C->d, n->line, n->col, "unknown operator");
            return -1;
        }
        return check_elementwise2(C, e, n, n->op, op_infix[n->op], n->a, n->b, want);
    case AST_INDEX: {
        if (check_expr(C, e, n->a, -1) < 0) {
            check_expr(C, e, n->b, CFX_I32); /* still report errors in the index */
            return -1;
        }
        char what[80];
        check_tensor_name(n->a, what, sizeof what);
        if (check_index(C, e, n, &n->a->ty, what, n->b) < 0)
            return -1;
        n->ty = row_type(&n->a->ty);
        return 0;
    }
    case AST_CALL:
        return check_call(C, e, n, 1);
    default:
        diag_error(C->d, n->line, n->col, "expected an expression");
        return -1;
    }
}

/* ---- calls ------------------------------------------------------------------------------------ */
/* The graph called `name` (the first one, if the parser let a duplicate through), or -1. */
int check_graph_find(const checker *C, const char *name)
{
    int lo = 0, hi = C->m->ngraphs - 1, found = -1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, g = C->gsorted[mid].index;
        int c = strcmp(C->gsorted[mid].name, name);
        if (c == 0)
            found = g;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1; /* on a match keep looking left, for the first one */
    }
    return found;
}

static const cfx_type *param_type(const ast_graph *g, const ctx_kernel *k, int i)
{
    return g ? &g->params[i].type : &k->params[i];
}

/* Checks arguments against the declared parameter types of graph g or kernel k. */
static int check_args_against(checker *C, env *e, ast_node *n, const ast_graph *g, const ctx_kernel *k)
{
    char b1[TYBUF], b2[TYBUF];
    int bad = 0, nparams = g ? g->nparams : k->nparams;
    if (n->nlist != nparams) {
        diag_error(C->d, n->line, n->col, "'%s' takes %d argument%s, got %d", n->name, nparams,
                   nparams == 1 ? "" : "s", n->nlist);
        bad = 1;
    }
    for (int i = 0; i < n->nlist; i++) {
        ast_node *a = n->list[i];
        int want = i < nparams ? (int)param_type(g, k, i)->dtype : -1;
        if (check_expr(C, e, a, want) < 0) {
            bad = 1;
            continue;
        }
        if (i < nparams && !check_same_type(&a->ty, param_type(g, k, i))) {
            diag_error(C->d, a->line, a->col, "argument %d of '%s' must be %s, got %s", i + 1, n->name,
                       tystr(param_type(g, k, i), b1), tystr(&a->ty, b2));
            bad = 1;
        }
    }
    return bad ? -1 : 0;
}

static int want_count(checker *C, ast_node *n, int nresults, int nwant)
{
    if (nwant < 0 || nwant == nresults)
        return 0;
    if (nwant == 1)
        diag_error(C->d, n->line, n->col,
                   nresults == 0 ? "'%s' returns no result" : "'%s' returns %d results; assign them with 'a, b = %s(...)'",
                   n->name, nresults, n->name);
    else
        diag_error(C->d, n->line, n->col, "'%s' returns %d result%s, but %d names are assigned", n->name,
                   nresults, nresults == 1 ? "" : "s", nwant);
    return -1;
}

/* A type argument: zeros(f32[3]), cast(x, f64). */
static int type_arg(checker *C, ast_node *n, ast_node *a, int scalar_only, cfx_type *out)
{
    if (!a || a->kind != AST_TYPE) {
        diag_error(C->d, a ? a->line : n->line, a ? a->col : n->col, "argument of '%s' must be a type", n->name);
        return -1;
    }
    if (scalar_only && a->type.rank != 0) {
        diag_error(C->d, a->line, a->col, "'%s' takes a dtype (f32, f64, i32, i64, bool), not a shape", n->name);
        return -1;
    }
    if (check_written_type(C, &a->type, a->line, a->col) < 0)
        return -1;
    *out = a->type;
    return 0;
}

/* A call to the built-in op `op` with n->nlist arguments (the arity already matches). */
static int check_op_call(checker *C, env *e, ast_node *n, int op)
{
    char b1[TYBUF], b2[TYBUF];
    int cls = op_class[op];
    ast_node **arg = n->list;
    const char *name = n->name;
    switch (cls) {
    case OPC_UNARY_REAL:
    case OPC_UNARY_NUM:
    case OPC_UNARY_BOOL: {
        if (check_expr(C, e, arg[0], cls == OPC_UNARY_REAL ? CFX_F32 : -1) < 0)
            return -1;
        int dt = arg[0]->ty.dtype;
        int ok = cls == OPC_UNARY_REAL ? is_real(dt) : cls == OPC_UNARY_NUM ? is_num(dt) : dt == CFX_BOOL;
        if (!ok) {
            diag_error(C->d, arg[0]->line, arg[0]->col, "'%s' needs %s, got %s", name,
                       cls == OPC_UNARY_REAL ? "f32 or f64" : cls == OPC_UNARY_NUM ? "a numeric operand" : "bool",
                       tystr(&arg[0]->ty, b1));
            return -1;
        }
        n->ty = arg[0]->ty;
        return 0;
    }
    case OPC_BINARY_NUM:
    case OPC_COMPARE:
    case OPC_BINARY_BOOL:
        return check_elementwise2(C, e, n, op, name, arg[0], arg[1], -1);
    case OPC_REDUCE_NUM:
    case OPC_REDUCE_REAL:
    case OPC_REDUCE_ARG:
    case OPC_REDUCE_BOOL: {
        if (check_expr(C, e, arg[0], cls == OPC_REDUCE_REAL ? CFX_F32 : -1) < 0)
            return -1;
        int dt = arg[0]->ty.dtype;
        int ok = cls == OPC_REDUCE_REAL ? is_real(dt) : cls == OPC_REDUCE_BOOL ? dt == CFX_BOOL : is_num(dt);
        if (!ok) {
            diag_error(C->d, arg[0]->line, arg[0]->col, "'%s' needs %s, got %s", name,
                       cls == OPC_REDUCE_REAL ? "f32 or f64" : cls == OPC_REDUCE_BOOL ? "bool" : "a numeric operand",
                       tystr(&arg[0]->ty, b1));
            return -1;
        }
        n->ty = scalar_type(cls == OPC_REDUCE_ARG ? CFX_I32 : (cfx_dtype)dt);
        return 0;
    }
    case OPC_DOT: {
        int r0 = check_expr(C, e, arg[0], -1), r1 = check_expr(C, e, arg[1], -1);
        if (r0 < 0 || r1 < 0)
            return -1;
        const cfx_type *x = &arg[0]->ty, *y = &arg[1]->ty;
        if (x->rank != 1 || !check_same_type(x, y) || !is_num(x->dtype)) {
            diag_error(C->d, n->line, n->col, "'dot' needs two numeric 1-D tensors of one type, got %s and %s",
                       tystr(x, b1), tystr(y, b2));
            return -1;
        }
        n->ty = scalar_type(x->dtype);
        return 0;
    }
    case OPC_MATMUL:
        return check_matmul(C, e, n, name, arg[0], arg[1]);
    case OPC_TRANSPOSE: {
        if (check_expr(C, e, arg[0], -1) < 0)
            return -1;
        const cfx_type *x = &arg[0]->ty;
        if (x->rank != 2) {
            diag_error(C->d, arg[0]->line, arg[0]->col, "'transpose' needs a 2-D tensor, got %s", tystr(x, b1));
            return -1;
        }
        n->ty = *x;
        n->ty.dims[0] = x->dims[1];
        n->ty.dims[1] = x->dims[0];
        return 0;
    }
    case OPC_MAKE_TYPE: {
        cfx_type t;
        if (type_arg(C, n, arg[0], 0, &t) < 0)
            return -1;
        if (op == OP_IOTA && !is_num(t.dtype)) {
            diag_error(C->d, arg[0]->line, arg[0]->col, "'iota' needs a numeric type, got %s", tystr(&t, b1));
            return -1;
        }
        n->ty = t;
        return 0;
    }
    case OPC_FULL: {
        cfx_type t;
        int rt = type_arg(C, n, arg[0], 0, &t);
        int rv = check_expr(C, e, arg[1], rt == 0 ? (int)t.dtype : -1);
        if (rt < 0 || rv < 0)
            return -1;
        if (arg[1]->ty.dtype != t.dtype || type_count(&arg[1]->ty) != 1) {
            diag_error(C->d, arg[1]->line, arg[1]->col, "the value of 'full' must be a one-element %s, got %s",
                       dtype_name(t.dtype), tystr(&arg[1]->ty, b1));
            return -1;
        }
        n->ty = t;
        return 0;
    }
    case OPC_COPY:
        if (check_expr(C, e, arg[0], -1) < 0)
            return -1;
        n->ty = arg[0]->ty;
        return 0;
    case OPC_CAST: {
        cfx_type t;
        int rx = check_expr(C, e, arg[0], -1);
        if (type_arg(C, n, arg[1], 1, &t) < 0 || rx < 0)
            return -1;
        n->ty = arg[0]->ty;
        n->ty.dtype = t.dtype;
        return 0;
    }
    case OPC_WHERE: {
        int rc = check_expr(C, e, arg[0], -1);
        cfx_type ab;
        int rab = check_pair(C, e, n, name, arg[1], arg[2], &ab, -1);
        if (rc < 0 || rab < 0)
            return -1;
        if (arg[0]->ty.dtype != CFX_BOOL) {
            diag_error(C->d, arg[0]->line, arg[0]->col, "the condition of 'where' must be bool, got %s",
                       tystr(&arg[0]->ty, b1));
            return -1;
        }
        cfx_type out;
        if (broadcast(&ab, &arg[0]->ty, &out) < 0) {
            diag_error(C->d, n->line, n->col, "operands of 'where' have different shapes: %s and %s",
                       tystr(&arg[0]->ty, b1), tystr(&ab, b2));
            return -1;
        }
        out.dtype = ab.dtype;
        n->ty = out;
        return 0;
    }
    case OPC_LEN: {
        if (check_expr(C, e, arg[0], -1) < 0)
            return -1;
        if (arg[0]->ty.rank < 1) {
            diag_error(C->d, arg[0]->line, arg[0]->col, "'len' needs a tensor of rank >= 1, got %s",
                       tystr(&arg[0]->ty, b1));
            return -1;
        }
        set_known(C, n, CFX_I32, arg[0]->ty.dims[0], 0);
        return 0;
    }
    default:
        diag_error(C->d, n->line, n->col, "unknown op '%s'", name);
        return -1;
    }
}

/* A call: a graph of the module (inlined), a built-in op, or a registered kernel. `nwant`
 * is the number of results the context takes (1 in an expression, -1 for a statement, which
 * discards them). */
int check_call(checker *C, env *e, ast_node *n, int nwant)
{
    check_note *k = check_note_of(C, n);
    k->known = 0;
    if (strcmp(n->name, "assert") == 0 || strcmp(n->name, "print") == 0) {
        diag_error(C->d, n->line, n->col, "'%s' is a statement, not a value", n->name);
        return -1;
    }
    int g = check_graph_find(C, n->name);
    if (g >= 0) {
        const ast_graph *gr = &C->m->graphs[g];
        k->callee = g;
        if (g == C->gi || C->scc[g] == C->scc[C->gi]) {
            diag_error(C->d, n->line, n->col, "recursive call to '%s' is not supported", n->name);
            for (int i = 0; i < n->nlist; i++)
                check_expr(C, e, n->list[i], -1);
            return -1;
        }
        if (check_args_against(C, e, n, gr, NULL) < 0)
            return -1;
        if (want_count(C, n, gr->nresults, nwant) < 0)
            return -1;
        if (gr->nresults > 0)
            n->ty = gr->results[0].type;
        return 0;
    }
    /* a built-in op: max and min have a one-operand (reduction) and a two-operand form */
    int found = 0, arities[2] = {0, 0};
    for (int op = 0; op < OP_COUNT; op++) {
        if (op_spellings[op][0] == '\0' || strcmp(op_spellings[op], n->name) != 0)
            continue;
        if (found < 2)
            arities[found] = op_arity[op];
        found++;
        if (op_arity[op] == n->nlist) {
            k->callee = CHECK_CALL_OP;
            k->op = op;
            if (want_count(C, n, 1, nwant < 0 ? 1 : nwant) < 0)
                return -1;
            return check_op_call(C, e, n, op);
        }
    }
    if (found) {
        if (found > 1)
            diag_error(C->d, n->line, n->col, "'%s' takes %d or %d arguments, got %d", n->name,
                       arities[0] < arities[1] ? arities[0] : arities[1],
                       arities[0] < arities[1] ? arities[1] : arities[0], n->nlist);
        else
            diag_error(C->d, n->line, n->col, "'%s' takes %d argument%s, got %d", n->name, arities[0],
                       arities[0] == 1 ? "" : "s", n->nlist);
        for (int i = 0; i < n->nlist; i++)
            if (n->list[i]->kind != AST_TYPE)
                check_expr(C, e, n->list[i], -1);
        return -1;
    }
    const ctx_kernel *kern = ctx_find(C->ctx, n->name);
    if (kern) {
        k->callee = CHECK_CALL_KERNEL;
        k->kernel = kern;
        if (check_args_against(C, e, n, NULL, kern) < 0)
            return -1;
        if (want_count(C, n, kern->nresults, nwant) < 0)
            return -1;
        if (kern->nresults > 0)
            n->ty = kern->results[0];
        return 0;
    }
    diag_error(C->d, n->line, n->col, "unknown op '%s'", n->name);
    for (int i = 0; i < n->nlist; i++)
        if (n->list[i]->kind != AST_TYPE)
            check_expr(C, e, n->list[i], -1);
    return -1;
}

const cfx_type *check_result_type(const ast_module *m, const ast_node *call, int i)
{
    const check_note *k = call->note;
    if (k->callee >= 0)
        return &m->graphs[k->callee].results[i].type;
    if (k->callee == CHECK_CALL_KERNEL)
        return &k->kernel->results[i];
    return &call->ty;
}
