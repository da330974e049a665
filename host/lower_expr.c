/* lower_expr.c: lowering of expressions: constants and folded values, elementwise ops and
 * matmul (with the no-alias rule for writing straight into a variable), short-circuit `and`
 * and `or`, indexing with CHECK_INDEX, calls of built-in ops and kernels, conditional jumps,
 * and the inlining of graph calls. Statements, control flow and the graph entry are in
 * lower.c; the state both share is in lower_int.h. */
#include "lower_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- expressions ---------------------------------------------------------------------------- */

const check_note *lower_note(const ast_node *n) { return n->note; }

static int32_t dest(lowerer *L, const ast_node *n, int32_t want)
{
    return want >= 0 ? want : lower_temp(L, &n->ty);
}

int32_t lower_copy_to(lowerer *L, int32_t want, int32_t s)
{
    if (want >= 0 && want != s) {
        lower_emit(L, REC_COPY, 0, want, s, 0, 0);
        return want;
    }
    return s;
}

static int is_int_dtype(int dt) { return dt == CFX_I32 || dt == CFX_I64; }

static int one_element(const cfx_type *t)
{
    for (int i = 0; i < t->rank; i++)
        if (t->dims[i] != 1)
            return 0;
    return 1;
}

static int32_t elementwise2(lowerer *L, ast_node *n, int op, ast_node *a, ast_node *b, int32_t want)
{
    int32_t sa = lower_expr(L, a, -1), sb = lower_expr(L, b, -1);
    if ((op == OP_DIV || op == OP_MOD) && is_int_dtype(a->ty.dtype)) {
        const check_note *kb = lower_note(b);
        if (!(kb->known && kb->ival != 0))
            lower_emit(L, REC_CHECK_DIVIDE, 0, sb, 0, 0, 0);
    }
    int32_t d = dest(L, n, want);
    lower_emit(L, REC_BINARY, op, d, sa, sb, 0);
    return d;
}

/* A short-circuit `and`/`or` on one-element bools, as a value. */
static int32_t short_circuit(lowerer *L, ast_node *n, int32_t want)
{
    int32_t t = lower_temp(L, &n->ty);
    lower_expr(L, n->a, t);
    int32_t j = lower_emit(L, n->op == OP_AND ? REC_JUMP_FALSE : REC_JUMP_TRUE, 0, t, 0, 0, 0);
    lower_expr(L, n->b, t);
    if (j >= 0)
        lower_set_target(L, j, prog_here(L->b));
    return lower_copy_to(L, want, t);
}

/* matmul and transpose must not write an operand. */
static int32_t no_alias(lowerer *L, const ast_node *n, int32_t want, int32_t x, int32_t y)
{
    if (want >= 0 && want != x && want != y)
        return want;
    return lower_temp(L, &n->ty);
}

/* Index of a row access: a constant, or a checked slot. */
int32_t lower_index(lowerer *L, ast_node *i, int64_t rows, const ast_node *tensor)
{
    const check_note *k = lower_note(i);
    if (k->known)
        return lower_const_scalar(L, i->ty.dtype, k->ival, 0);
    int32_t s = lower_expr(L, i, -1);
    int32_t name = tensor->kind == AST_NAME ? prog_string(L->b, tensor->name) : -1;
    lower_emit(L, REC_CHECK_INDEX, 0, s, (int32_t)rows, name, 0);
    return s;
}

static int32_t lower_op_call(lowerer *L, ast_node *n, int32_t want)
{
    const check_note *k = lower_note(n);
    int op = k->op;
    ast_node **arg = n->list;
    switch (op_class[op]) {
    case OPC_UNARY_REAL:
    case OPC_UNARY_NUM:
    case OPC_UNARY_BOOL: {
        int32_t x = lower_expr(L, arg[0], -1), d = dest(L, n, want);
        lower_emit(L, REC_UNARY, op, d, x, 0, 0);
        return d;
    }
    case OPC_BINARY_NUM:
    case OPC_COMPARE:
    case OPC_BINARY_BOOL:
        return elementwise2(L, n, op, arg[0], arg[1], want);
    case OPC_REDUCE_NUM:
    case OPC_REDUCE_REAL:
    case OPC_REDUCE_ARG:
    case OPC_REDUCE_BOOL: {
        int32_t x = lower_expr(L, arg[0], -1), d = no_alias(L, n, want, x, x);
        lower_emit(L, REC_REDUCE, op, d, x, 0, 0);
        return lower_copy_to(L, want, d);
    }
    case OPC_DOT: {
        int32_t x = lower_expr(L, arg[0], -1), y = lower_expr(L, arg[1], -1);
        int32_t d = no_alias(L, n, want, x, y);
        lower_emit(L, REC_DOT, 0, d, x, y, 0);
        return lower_copy_to(L, want, d);
    }
    case OPC_MATMUL: {
        int32_t x = lower_expr(L, arg[0], -1), y = lower_expr(L, arg[1], -1);
        int32_t d = no_alias(L, n, want, x, y);
        lower_emit(L, REC_MATMUL, 0, d, x, y, 0);
        return lower_copy_to(L, want, d);
    }
    case OPC_TRANSPOSE: {
        int32_t x = lower_expr(L, arg[0], -1), d = no_alias(L, n, want, x, x);
        lower_emit(L, REC_TRANSPOSE, 0, d, x, 0, 0);
        return lower_copy_to(L, want, d);
    }
    case OPC_MAKE_TYPE: {
        int32_t d = dest(L, n, want);
        if (op == OP_IOTA)
            lower_emit(L, REC_IOTA, 0, d, 0, 0, 0);
        else
            lower_emit(L, REC_FILL, 0, d, lower_const_scalar(L, n->ty.dtype, op == OP_ONES, op == OP_ONES), 0, 0);
        return d;
    }
    case OPC_FULL: {
        int32_t v = lower_expr(L, arg[1], -1), d = dest(L, n, want);
        lower_emit(L, REC_FILL, 0, d, v, 0, 0);
        return d;
    }
    case OPC_COPY: {
        int32_t x = lower_expr(L, arg[0], -1), d = dest(L, n, want);
        if (d != x)
            lower_emit(L, REC_COPY, 0, d, x, 0, 0);
        return d;
    }
    case OPC_CAST: {
        int32_t x = lower_expr(L, arg[0], -1), d = dest(L, n, want);
        if (d == x && arg[0]->ty.dtype != n->ty.dtype)
            d = lower_temp(L, &n->ty);
        if (d != x)
            lower_emit(L, REC_CAST, 0, d, x, 0, 0);
        return lower_copy_to(L, want, d);
    }
    case OPC_WHERE: {
        int32_t c = lower_expr(L, arg[0], -1), x = lower_expr(L, arg[1], -1), y = lower_expr(L, arg[2], -1);
        int32_t d = dest(L, n, want);
        lower_emit(L, REC_WHERE, 0, d, c, x, y);
        return d;
    }
    default: /* OPC_LEN is always known, and known expressions never get here */
        lower_fail(L, "internal error: an op the lowering does not know");
        return 0;
    }
}

/* A call to a registered kernel: arguments, then results, in the table; d counts the
 * arguments. Results go to fresh temporaries, so a kernel never writes a variable it also
 * reads. */
void lower_kernel_call(lowerer *L, ast_node *n, int32_t *outs, int nouts)
{
    const ctx_kernel *kern = lower_note(n)->kernel;
    int total = n->nlist + kern->nresults;
    int32_t *ops = calloc((size_t)total + 1, sizeof *ops);
    if (!ops) {
        lower_fail(L, "out of memory");
        return;
    }
    for (int i = 0; i < n->nlist; i++)
        ops[i] = lower_expr(L, n->list[i], -1);
    for (int i = 0; i < kern->nresults; i++) {
        ops[n->nlist + i] = lower_temp(L, &kern->results[i]);
        if (i < nouts)
            outs[i] = ops[n->nlist + i];
    }
    int32_t tab = L->failed ? 0 : prog_table(L->b, ops, total);
    int32_t ki = L->failed ? 0 : prog_kernel(L->b, n->name);
    if (tab < 0 || ki < 0)
        lower_fail(L, "the graph has too many kernel operands");
    lower_emit(L, REC_CALL, 0, ki, tab, total, n->nlist);
    free(ops);
}

static int32_t lower_call(lowerer *L, ast_node *n, int32_t want)
{
    const check_note *k = lower_note(n);
    if (k->callee == CHECK_CALL_OP)
        return lower_op_call(L, n, want);
    int32_t out = 0;
    if (k->callee == CHECK_CALL_KERNEL)
        lower_kernel_call(L, n, &out, 1);
    else if (k->callee >= 0)
        lower_inline_call(L, n, &out, 1);
    else
        lower_fail(L, "internal error: a call the checker did not resolve");
    return lower_copy_to(L, want, out);
}

/* Returns the slot holding n's value: `want` when want >= 0, else any slot (a variable's own
 * slot, a constant or a new temporary). */
int32_t lower_expr(lowerer *L, ast_node *n, int32_t want)
{
    if (L->failed)
        return 0;
    const check_note *k = lower_note(n);
    if (!k) {
        lower_fail(L, "internal error: an expression the checker did not type");
        return 0;
    }
    if (k->known)
        return lower_copy_to(L, want, lower_const_scalar(L, n->ty.dtype, k->ival, k->rval));
    switch (n->kind) {
    case AST_NAME:
        return lower_copy_to(L, want, lower_var(L, n->name, &n->ty));
    case AST_UNARY: {
        int32_t x = lower_expr(L, n->a, -1), d = dest(L, n, want);
        lower_emit(L, REC_UNARY, n->op, d, x, 0, 0);
        return d;
    }
    case AST_BINARY:
        if (n->op == OP_MATMUL) {
            int32_t x = lower_expr(L, n->a, -1), y = lower_expr(L, n->b, -1);
            int32_t d = no_alias(L, n, want, x, y);
            lower_emit(L, REC_MATMUL, 0, d, x, y, 0);
            return lower_copy_to(L, want, d);
        }
        if ((n->op == OP_AND || n->op == OP_OR) && one_element(&n->a->ty) && one_element(&n->b->ty))
            return short_circuit(L, n, want);
        return elementwise2(L, n, n->op, n->a, n->b, want);
    case AST_INDEX: {
        int32_t x = lower_expr(L, n->a, -1);
        int32_t i = lower_index(L, n->b, n->a->ty.dims[0], n->a);
        /* never write the tensor or the index while reading them (`i = x[i]`) */
        int32_t d = want >= 0 && want != x && want != i ? want : lower_temp(L, &n->ty);
        lower_emit(L, REC_GET_ROW, 0, d, x, i, 0);
        return lower_copy_to(L, want, d);
    }
    case AST_CALL:
        return lower_call(L, n, want);
    default:
        lower_fail(L, "internal error: an expression the lowering does not know");
        return 0;
    }
}

/* Emits a test of the one-element bool n that jumps (target left open in pl) when n's value
 * equals `when`, and falls through otherwise; `and`, `or` and `not` short-circuit. */
void lower_jump_if(lowerer *L, ast_node *n, int when, patchlist *pl)
{
    if (L->failed)
        return;
    const check_note *k = lower_note(n);
    if (k->known) {
        if ((k->ival != 0) == when)
            lower_patch_add(L, pl, lower_emit(L, REC_JUMP, 0, 0, 0, 0, 0));
        return;
    }
    if (n->kind == AST_UNARY && n->op == OP_NOT) {
        lower_jump_if(L, n->a, !when, pl);
        return;
    }
    if (n->kind == AST_BINARY && (n->op == OP_AND || n->op == OP_OR)) {
        /* and: false as soon as a is false; or: true as soon as a is true */
        int stop = n->op == OP_OR;
        if (when == stop) {
            lower_jump_if(L, n->a, stop, pl);
            lower_jump_if(L, n->b, stop, pl);
        } else {
            patchlist skip = {0};
            lower_jump_if(L, n->a, stop, &skip);
            lower_jump_if(L, n->b, when, pl);
            lower_patch_here(L, &skip);
            lower_patch_free(&skip);
        }
        return;
    }
    int32_t s = lower_expr(L, n, -1);
    lower_patch_add(L, pl, lower_emit(L, when ? REC_JUMP_TRUE : REC_JUMP_FALSE, 0, s, 0, 0, 0));
}


/* ---- graph calls ---------------------------------------------------------------------------- */
/* Inlines a call of graph lower_note(call)->callee: parameters bound to the argument slots (copied
 * first when the callee assigns them), results in fresh variables named `graph.result`. */
void lower_inline_call(lowerer *L, ast_node *call, int32_t *outs, int nouts)
{
    const ast_graph *g = &L->m->graphs[lower_note(call)->callee];
    if (L->depth >= LOWER_MAX_INLINE) {
        char why[128];
        snprintf(why, sizeof why, "graph calls nest deeper than %d", LOWER_MAX_INLINE);
        lower_fail(L, why);
        return;
    }
    int32_t *args = calloc((size_t)g->nparams + 1, sizeof *args);
    if (!args) {
        lower_fail(L, "out of memory");
        return;
    }
    for (int i = 0; i < g->nparams; i++)
        args[i] = lower_expr(L, call->list[i], -1);
    scope sc = {0};
    sc.graph = lower_note(call)->callee;
    scope *saved_sc = L->sc;
    loopl *saved_loop = L->loop;
    int saved_line = L->line, saved_col = L->col;
    L->sc = &sc;
    L->loop = NULL; /* break and continue never leave a graph */
    L->depth++;
    for (int i = 0; i < g->nparams && !L->failed; i++) {
        if (check_assigns(g->body, g->params[i].name))
            lower_copy_to(L, lower_var(L, g->params[i].name, &g->params[i].type), args[i]);
        else
            lower_bind_var(L, g->params[i].name, &g->params[i].type, args[i]);
    }
    for (int i = 0; i < g->nresults && !L->failed; i++) {
        int32_t r = lower_var(L, g->results[i].name, &g->results[i].type);
        if (i < nouts)
            outs[i] = r;
    }
    lower_block(L, g->body);
    lower_patch_here(L, &sc.returns);
    L->depth--;
    L->sc = saved_sc;
    L->loop = saved_loop;
    L->line = saved_line;
    L->col = saved_col;
    lower_scope_free(&sc);
    free(args);
}

