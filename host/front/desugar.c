/* desugar.c: rewrites, before checking, Python's shorthand into forms the checker knows
 * (desugar.h). Each graph is rewritten on its own, in three steps:
 *
 * 1. List comprehensions. `ys = [E for v in IT if C]` becomes `ys = []` and the loops that
 *    append to it; a comprehension elsewhere in a statement (`y = stack([f(v) for v in xs])`)
 *    fills a list of its own, named `[...] at LINE:COL`, made just before its statement. Only
 *    a place evaluated once before its statement may hold one (the value of an assignment or a
 *    return, an expression statement, a loop's range or iterated value, a switch's value, the
 *    first condition of an if). A loop variable whose name the graph uses elsewhere is renamed
 *    in the comprehension, as Python keeps it local.
 * 2. Shapes held in variables. `s = x.shape` (or a slice of it) makes s stand for x.shape
 *    wherever s is read: a shape is known at compile time and never changes, as a variable
 *    keeps its type. Such a variable is assigned once.
 * 3. Tuples. A variable that holds a tuple (`t = (a, b)`, `t = a, b`, `t = f(x)` of a graph
 *    with several results, another tuple, a slice of one, `t1 + t2`, `A if c else B`) becomes
 *    one variable per item, named `t[0]`, `t[1]`, ...; `t[i]` with i an integer literal reads
 *    one, `a, b = t` unpacks them, `len(t)` is their count, `t == u` compares item by item,
 *    `for v in t` walks them, `x[t]` indexes x by them, and `t` elsewhere (`zeros(t)`) is the
 *    tuple `(t[0], t[1])`, which the checker takes where a shape may stand.
 * An error is reported once and the expression it was in becomes a name the checker passes
 * over quietly (AST_ERROR_NAME).
 */
#include "desugar.h"
#include "kernels/cfxlimits.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


typedef struct tvar {
    const char *name;
    int arity;       /* > 0: a tuple of this many items */
    int line;        /* of its first tuple assignment */
    ast_node *alias; /* a shape variable: the shape it stands for */
    int nassign;     /* assignments seen (shape variables) */
} tvar;

typedef struct desugar {
    ast_module *m;
    const cfx_context *ctx;
    diag *d;
    ast_graph *g;
    tvar *vars;
    int nvars, cap;
    int oom;
} desugar;

/* ---- nodes --------------------------------------------------------------------------- */

static ast_node *node_new(desugar *D, int kind, int line, int col)
{
    ast_node *n = ast_alloc(D->m->arena, sizeof *n);
    if (!n) {
        D->oom = 1;
        return NULL;
    }
    n->kind = (uint8_t)kind;
    n->line = line;
    n->col = col;
    return n;
}

static const char *str_fmt(desugar *D, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *s = ast_strdup(D->m->arena, buf, strlen(buf));
    if (!s)
        D->oom = 1;
    return s;
}

static ast_node *name_node(desugar *D, const char *name, int line, int col)
{
    ast_node *n = node_new(D, AST_NAME, line, col);
    if (n)
        n->name = name;
    return n;
}

static int set_list(desugar *D, ast_node *n, ast_node **items, int count)
{
    n->list = NULL;
    n->nlist = 0;
    if (count == 0)
        return 0;
    ast_node **l = ast_alloc(D->m->arena, (size_t)count * sizeof *l);
    if (!l) {
        D->oom = 1;
        return -1;
    }
    memcpy(l, items, (size_t)count * sizeof *l);
    n->list = l;
    n->nlist = count;
    return 0;
}

static ast_node *copy_tree(desugar *D, const ast_node *n, int line, int col)
{
    if (!n)
        return NULL;
    ast_node *c = node_new(D, n->kind, line, col);
    if (!c)
        return NULL;
    *c = *n;
    c->line = line;
    c->col = col;
    c->note = NULL;
    c->a = copy_tree(D, n->a, line, col);
    c->b = copy_tree(D, n->b, line, col);
    c->c = copy_tree(D, n->c, line, col);
    c->d = copy_tree(D, n->d, line, col);
    c->list = NULL;
    c->nlist = 0;
    if (n->nlist) {
        ast_node *items[DESUGAR_MAX_TUPLE];
        ast_node **big = n->nlist > DESUGAR_MAX_TUPLE ? malloc((size_t)n->nlist * sizeof *big) : items;
        if (!big) {
            D->oom = 1;
            return c;
        }
        for (int i = 0; i < n->nlist; i++)
            big[i] = copy_tree(D, n->list[i], line, col);
        set_list(D, c, big, n->nlist);
        if (big != items)
            free(big);
    }
    return c;
}

/* What an expression in error becomes: a name the checker passes over quietly. */
static ast_node *error_node(desugar *D, const ast_node *at)
{
    return name_node(D, AST_ERROR_NAME, at->line, at->col);
}


/* ---- variables ------------------------------------------------------------------------ */

static tvar *var_find(desugar *D, const char *name)
{
    for (int i = 0; i < D->nvars; i++)
        if (strcmp(D->vars[i].name, name) == 0)
            return &D->vars[i];
    return NULL;
}

static tvar *var_add(desugar *D, const char *name)
{
    tvar *v = var_find(D, name);
    if (v)
        return v;
    if (D->nvars == D->cap) {
        int cap = D->cap ? D->cap * 2 : 8;
        tvar *nv = realloc(D->vars, (size_t)cap * sizeof *nv);
        if (!nv) {
            D->oom = 1;
            return NULL;
        }
        D->vars = nv;
        D->cap = cap;
    }
    v = &D->vars[D->nvars++];
    memset(v, 0, sizeof *v);
    v->name = name;
    return v;
}

static const ast_param *param_named(const ast_graph *g, const char *name)
{
    for (int i = 0; i < g->nparams; i++)
        if (strcmp(g->params[i].name, name) == 0)
            return &g->params[i];
    for (int i = 0; i < g->nresults; i++)
        if (strcmp(g->results[i].name, name) == 0)
            return &g->results[i];
    return NULL;
}

/* The number of results of what a call names: a graph of the module or a registered kernel;
 * 0 for anything else. */
static int call_results(desugar *D, const ast_node *n)
{
    if (n->kind != AST_CALL || (n->flags & AST_F_METHOD))
        return 0;
    for (int i = 0; i < D->m->ngraphs; i++)
        if (strcmp(D->m->graphs[i].name, n->name) == 0)
            return D->m->graphs[i].nresults;
    const ctx_kernel *k = ctx_find(D->ctx, n->name);
    return k ? k->nresults : 0;
}

/* x.shape, or a slice of it: what a shape variable stands for. */
static int is_shape_form(const ast_node *n)
{
    if (n->kind == AST_ATTR && strcmp(n->name, "shape") == 0)
        return 1;
    return n->kind == AST_INDEX && !n->b && n->nlist == 1 && n->list[0]->kind == AST_SLICE && n->a &&
           n->a->kind == AST_ATTR && strcmp(n->a->name, "shape") == 0;
}

/* ---- tuples ---------------------------------------------------------------------------- */

/* The bounds of slice sl over n items: 0 with [*lo, *hi), -1 when they are no literals. */
static int const_int(desugar *D, const ast_node *n, int64_t *v);

static int slice_bounds(desugar *D, const ast_node *sl, int n, int *lo, int *hi)
{
    int64_t a = 0, b = n;
    if (sl->a && !const_int(D, sl->a, &a))
        return -1;
    if (sl->b && !const_int(D, sl->b, &b))
        return -1;
    if (a < 0)
        a += n;
    if (b < 0)
        b += n;
    a = a < 0 ? 0 : a > n ? n : a;
    b = b < 0 ? 0 : b > n ? n : b;
    *lo = (int)a;
    *hi = (int)(b < a ? a : b);
    return 0;
}

/* How many items tuple-valued expression n holds (its items known one by one); 0 when n is
 * no such tuple. A call of a graph with several results is a tuple too, but not one whose
 * items can be taken apart: for it *call is set. */
static int tuple_len(desugar *D, const ast_node *n, int *call)
{
    int c = 0;
    if (!call)
        call = &c;
    *call = 0;
    if (!n)
        return 0;
    switch (n->kind) {
    case AST_TUPLE: /* a longer one is no tuple value (the assignment of one says so) */
        return n->nlist <= DESUGAR_MAX_TUPLE ? n->nlist : 0;
    case AST_NAME: {
        const tvar *v = var_find(D, n->name);
        return v && !v->alias ? v->arity : 0;
    }
    case AST_CALL: {
        int k = call_results(D, n);
        if (k >= 2) {
            *call = 1;
            return k;
        }
        return 0;
    }
    case AST_INDEX: {
        if (n->b || n->nlist != 1 || n->list[0]->kind != AST_SLICE)
            return 0;
        int k = tuple_len(D, n->a, NULL);
        int lo, hi;
        if (k <= 0 || slice_bounds(D, n->list[0], k, &lo, &hi) < 0)
            return 0;
        return hi - lo;
    }
    case AST_BINARY: {
        if (n->op != OP_ADD)
            return 0;
        int a = tuple_len(D, n->a, NULL), b = tuple_len(D, n->b, NULL);
        return a > 0 && b > 0 && a + b <= DESUGAR_MAX_TUPLE ? a + b : 0;
    }
    case AST_COND: {
        int a = tuple_len(D, n->b, NULL), b = tuple_len(D, n->c, NULL);
        return a > 0 && a == b ? a : 0;
    }
    default:
        return 0;
    }
}

/* An integer the source spells out: literals, len of a tuple, and + - * // of these. */
static int const_int(desugar *D, const ast_node *n, int64_t *v)
{
    int64_t a, b;
    if (!n)
        return 0;
    switch (n->kind) {
    case AST_INT:
        *v = n->ival;
        return 1;
    case AST_UNARY:
        if (n->op != OP_NEG || !const_int(D, n->a, &a))
            return 0;
        *v = -a;
        return 1;
    case AST_CALL:
        if ((n->flags & AST_F_METHOD) || strcmp(n->name, "len") != 0 || n->nlist != 1)
            return 0;
        a = tuple_len(D, n->list[0], NULL);
        if (a <= 0)
            return 0;
        *v = a;
        return 1;
    case AST_BINARY:
        if (!const_int(D, n->a, &a) || !const_int(D, n->b, &b) || a > 1000000 || a < -1000000 || b > 1000000 ||
            b < -1000000)
            return 0;
        switch (n->op) {
        case OP_ADD: *v = a + b; return 1;
        case OP_SUB: *v = a - b; return 1;
        case OP_MUL: *v = a * b; return 1;
        case OP_FLOORDIV:
            if (b == 0)
                return 0;
            *v = a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
            return 1;
        default: return 0;
        }
    default:
        return 0;
    }
}

static void rw_expr(desugar *D, ast_node **slot);

/* The items of tuple-valued n (tuple_len > 0, not a call), rewritten, into out. */
static int tuple_items(desugar *D, ast_node *n, ast_node **out)
{
    int k = tuple_len(D, n, NULL);
    switch (n->kind) {
    case AST_TUPLE:
        for (int i = 0; i < k; i++) {
            out[i] = n->list[i];
            rw_expr(D, &out[i]);
        }
        return k;
    case AST_NAME:
        for (int i = 0; i < k; i++)
            out[i] = name_node(D, str_fmt(D, "%s[%d]", n->name, i), n->line, n->col);
        return k;
    case AST_INDEX: {
        ast_node *all[DESUGAR_MAX_TUPLE];
        int nb = tuple_items(D, n->a, all), lo = 0, hi = 0;
        slice_bounds(D, n->list[0], nb, &lo, &hi);
        for (int i = lo; i < hi; i++)
            out[i - lo] = all[i];
        return hi - lo;
    }
    case AST_BINARY: {
        int a = tuple_items(D, n->a, out);
        return a + tuple_items(D, n->b, out + a);
    }
    case AST_COND: {
        ast_node *bs[DESUGAR_MAX_TUPLE], *cs[DESUGAR_MAX_TUPLE];
        tuple_items(D, n->b, bs);
        tuple_items(D, n->c, cs);
        rw_expr(D, &n->a);
        for (int i = 0; i < k; i++) {
            ast_node *c = node_new(D, AST_COND, n->line, n->col);
            if (!c)
                return 0;
            c->a = i ? copy_tree(D, n->a, n->a->line, n->a->col) : n->a;
            c->b = bs[i];
            c->c = cs[i];
            out[i] = c;
        }
        return k;
    }
    default:
        return 0;
    }
}

/* A tuple `(a, b)` of tuple-valued n's items. */
static ast_node *tuple_display(desugar *D, ast_node *n, int kind)
{
    ast_node *items[DESUGAR_MAX_TUPLE];
    int k = tuple_items(D, n, items);
    ast_node *t = node_new(D, kind, n->line, n->col);
    if (!t)
        return n;
    t->flags = AST_F_PAREN;
    set_list(D, t, items, k);
    return t;
}

/* t == u, t != u of two tuples: item by item, joined by `and` (`or` for !=). */
static ast_node *tuple_compare(desugar *D, ast_node *n)
{
    ast_node *a[DESUGAR_MAX_TUPLE], *b[DESUGAR_MAX_TUPLE];
    int ka = tuple_items(D, n->a, a), kb = tuple_items(D, n->b, b);
    if (ka != kb) {
        ast_node *r = node_new(D, AST_BOOL, n->line, n->col);
        if (r)
            r->ival = n->op == OP_NE;
        return r;
    }
    ast_node *acc = NULL;
    for (int i = 0; i < ka; i++) {
        ast_node *c = node_new(D, AST_BINARY, n->line, n->col);
        if (!c)
            return n;
        c->op = n->op;
        c->a = a[i];
        c->b = b[i];
        c->flags = AST_F_PAREN;
        if (!acc) {
            acc = c;
            continue;
        }
        ast_node *j = node_new(D, AST_BINARY, n->line, n->col);
        if (!j)
            return n;
        j->op = n->op == OP_NE ? OP_OR : OP_AND;
        j->a = acc;
        j->b = c;
        acc = j;
    }
    if (acc)
        acc->flags |= AST_F_PAREN;
    return acc ? acc : n;
}

static void rw_children(desugar *D, ast_node *n)
{
    rw_expr(D, &n->a);
    rw_expr(D, &n->b);
    rw_expr(D, &n->c);
    rw_expr(D, &n->d);
    for (int i = 0; i < n->nlist; i++)
        rw_expr(D, &n->list[i]);
}

/* A call of a graph with tuple parameters: each argument for one becomes its items, as many
 * arguments (`f(t)` -> `f(t[0], t[1])`, `f(p=t)` -> `f(p[0]=t[0], p[1]=t[1])`). 1 when n was
 * such a call (its arguments are rewritten), 0 otherwise. */
static int tuple_args(desugar *D, ast_node *n)
{
    const ast_graph *g = NULL;
    for (int i = 0; i < D->m->ngraphs && !g; i++)
        if (strcmp(D->m->graphs[i].name, n->name) == 0)
            g = &D->m->graphs[i];
    int any = 0;
    for (int i = 0; g && i < g->nparams; i++)
        any |= g->params[i].tuple_of != NULL;
    if (!any)
        return 0;
    /* the declared parameters: a tuple's items count as one */
    int nargs = 0;
    ast_node **args = malloc(sizeof *args * (size_t)(g->nparams + n->nlist + 1));
    if (!args) {
        D->oom = 1;
        return 1;
    }
    int pos = 0; /* the declared parameter the next positional argument goes to */
    for (int i = 0; i < n->nlist; i++) {
        ast_node *a = n->list[i];
        const char *kw = a->kind == AST_KWARG ? a->name : NULL;
        int first = -1; /* the parameter a goes to, by its flattened index */
        if (kw) {
            for (int j = 0; j < g->nparams && first < 0; j++)
                if ((g->params[j].tuple_of && strcmp(g->params[j].tuple_of, kw) == 0) ||
                    strcmp(g->params[j].name, kw) == 0)
                    first = j;
        } else {
            int decl = 0;
            for (int j = 0; j < g->nparams && first < 0; j++) {
                if (g->params[j].tuple_of && g->params[j].tuple_index > 0)
                    continue;
                if (decl++ == pos)
                    first = j;
            }
            pos++;
        }
        const ast_param *x = first >= 0 ? &g->params[first] : NULL;
        if (!x || !x->tuple_of) {
            if (kw)
                rw_expr(D, &a->a);
            else
                rw_expr(D, &n->list[i]), a = n->list[i];
            args[nargs++] = a;
            continue;
        }
        int k = 0;
        while (first + k < g->nparams && g->params[first + k].tuple_of == x->tuple_of)
            k++;
        ast_node *val = kw ? a->a : a;
        int call = 0, have = tuple_len(D, val, &call);
        if (have != k || call) {
            diag_error(D->d, val->line, val->col, "parameter '%s' of '%s' is a tuple of %d items; %s", x->tuple_of,
                       g->name, k, have > 0 && !call ? "this one has a different count" : "pass a tuple");
            for (int j = 0; j < k; j++) /* as many as it takes: no second message about the count */
                args[nargs++] = error_node(D, val);
            continue;
        }
        ast_node *items[DESUGAR_MAX_TUPLE];
        tuple_items(D, val, items);
        for (int j = 0; j < k; j++) {
            if (kw) {
                ast_node *w = node_new(D, AST_KWARG, a->line, a->col);
                if (!w)
                    break;
                w->name = g->params[first + j].name;
                w->a = items[j];
                args[nargs++] = w;
            } else {
                args[nargs++] = items[j];
            }
        }
    }
    set_list(D, n, args, nargs);
    free(args);
    return 1;
}

/* numpy's functions that are cfx ops under other names, unless the file or the application
 * defines one of that name: minimum(a, b) is min(a, b), maximum(a, b) max(a, b), clip(x, lo, hi)
 * min(max(x, lo), hi), isnan(v) of a variable v != v, arctan(x) atan(x) (and arcsin arccos
 * arcsinh arccosh arctanh), arctan2(y, x) atan2(y, x). Returns 1 when *slot was rewritten. */
static int numpy_function(desugar *D, ast_node **slot)
{
    ast_node *n = *slot;
    for (int i = 0; i < n->nlist; i++)
        if (n->list[i]->kind == AST_KWARG || n->list[i]->kind == AST_TYPE)
            return 0;
    int two = (strcmp(n->name, "minimum") == 0 || strcmp(n->name, "maximum") == 0) && n->nlist == 2;
    int clip = strcmp(n->name, "clip") == 0 && n->nlist == 3;
    int isnan = strcmp(n->name, "isnan") == 0 && n->nlist == 1 && n->list[0]->kind == AST_NAME;
    static const char *const arc[][2] = {{"arctan", "atan"}, {"arcsin", "asin"}, {"arccos", "acos"},
                                         {"arcsinh", "asinh"}, {"arccosh", "acosh"}, {"arctanh", "atanh"},
                                         {"arctan2", "atan2"}};
    const char *inverse = NULL;
    for (size_t i = 0; i < sizeof arc / sizeof arc[0]; i++)
        if (strcmp(n->name, arc[i][0]) == 0 && n->nlist == (i == 6 ? 2 : 1))
            inverse = arc[i][1];
    if ((!two && !clip && !isnan && !inverse) || ctx_find(D->ctx, n->name))
        return 0;
    for (int g = 0; g < D->m->ngraphs; g++)
        if (strcmp(D->m->graphs[g].name, n->name) == 0)
            return 0;
    if (inverse) {
        n->name = inverse;
    } else if (two) {
        n->name = n->name[1] == 'i' ? "min" : "max";
    } else if (clip) { /* min(max(x, lo), hi) */
        ast_node *inner = node_new(D, AST_CALL, n->line, n->col);
        ast_node *items[2] = {inner, n->list[2]};
        if (!inner || set_list(D, inner, n->list, 2) < 0 || set_list(D, n, items, 2) < 0)
            return 1;
        inner->name = "max";
        n->name = "min";
    } else { /* v != v: only NaN differs from itself */
        ast_node *ne = node_new(D, AST_BINARY, n->line, n->col), *b = node_new(D, AST_NAME, n->list[0]->line,
                                                                             n->list[0]->col);
        if (!ne || !b)
            return 1;
        b->name = n->list[0]->name;
        ne->op = OP_NE;
        ne->a = n->list[0];
        ne->b = b;
        *slot = ne;
        return 1;
    }
    rw_expr(D, slot);
    return 1;
}

/* numpy's and PyTorch's methods of a tensor, as the ops they are: x.sum() is sum(x), x.max(0)
 * is max(x, axis=0), x.astype(f64) is cast(x, f64), x.copy() is x (a value is never shared).
 * Returns 1 when *slot was rewritten (and its parts too). */
static int numpy_method(desugar *D, ast_node **slot)
{
    static const char *const reductions[] = {"sum", "mean", "max", "min", "argmax", "argmin", "all", "any"};
    ast_node *n = *slot;
    if (strcmp(n->name, "copy") == 0 && n->nlist == 1) {
        *slot = n->list[0];
        rw_expr(D, slot);
        return 1;
    }
    if (strcmp(n->name, "astype") == 0 && n->nlist == 2 && n->list[1]->kind == AST_TYPE) {
        n->flags &= ~AST_F_METHOD;
        n->name = "cast";
        rw_expr(D, &n->list[0]);
        return 1;
    }
    for (size_t i = 0; i < sizeof reductions / sizeof reductions[0]; i++) {
        if (strcmp(n->name, reductions[i]) != 0 || n->nlist > 3)
            continue;
        n->flags &= ~AST_F_METHOD;
        /* a positional argument after the tensor is numpy's axis */
        for (int k = 1; k < n->nlist && k < 2; k++) {
            if (n->list[k]->kind == AST_KWARG)
                continue;
            ast_node *kw = node_new(D, AST_KWARG, n->list[k]->line, n->list[k]->col);
            if (!kw)
                return 1;
            kw->name = "axis";
            kw->a = n->list[k];
            n->list[k] = kw;
        }
        for (int k = 0; k < n->nlist; k++)
            rw_expr(D, n->list[k]->kind == AST_KWARG ? &n->list[k]->a : &n->list[k]);
        return 1;
    }
    return 0;
}

static void rw_expr(desugar *D, ast_node **slot)
{
    ast_node *n = *slot;
    if (!n || D->oom)
        return;
    switch (n->kind) {
    case AST_NAME: {
        const tvar *v = var_find(D, n->name);
        if (v && v->alias)
            *slot = copy_tree(D, v->alias, n->line, n->col);
        else if (v && v->arity > 0)
            *slot = tuple_display(D, n, AST_TUPLE);
        return;
    }
    case AST_INDEX: {
        int call = 0, k = tuple_len(D, n->a, &call);
        if (k > 0 && call) {
            diag_error(D->d, n->line, n->col,
                       "'%s' gives %d results: assign them to as many names (a, b = %s(...)), or to one that "
                       "holds the tuple (t = %s(...)), then index that",
                       n->a->name, k, n->a->name, n->a->name);
            *slot = error_node(D, n);
            return;
        }
        if (k > 0 && n->b) {
            int64_t i;
            if (!const_int(D, n->b, &i)) {
                diag_error(D->d, n->b->line, n->b->col,
                           "a tuple is indexed by an integer the source spells out (t[0], t[-1], "
                           "t[len(t) - 1]); a tensor made with stack(...), or a list, may be indexed at run time");
                *slot = error_node(D, n);
                return;
            }
            if (i < -k || i >= k) {
                diag_error(D->d, n->b->line, n->b->col, "index %lld is out of range for a tuple of %d items",
                           (long long)i, k);
                *slot = error_node(D, n);
                return;
            }
            ast_node *items[DESUGAR_MAX_TUPLE];
            tuple_items(D, n->a, items);
            *slot = items[i < 0 ? i + k : i];
            return;
        }
        if (k > 0 && n->nlist == 1 && n->list[0]->kind == AST_SLICE) {
            *slot = tuple_display(D, n, AST_TUPLE);
            return;
        }
        if (k > 0) {
            diag_error(D->d, n->line, n->col, "a tuple takes one index, or one slice whose bounds the source spells out");
            *slot = error_node(D, n);
            return;
        }
        rw_children(D, n);
        /* x[t]: the tensor indexed by the tuple's items, x[t[0], t[1]] */
        if (n->b && tuple_len(D, n->b, NULL) > 0) {
            ast_node *items[DESUGAR_MAX_TUPLE];
            int nk = tuple_items(D, n->b, items);
            n->b = NULL;
            set_list(D, n, items, nk);
        } else if (n->b && n->b->kind == AST_TUPLE) {
            ast_node *t = n->b;
            n->b = NULL;
            set_list(D, n, t->list, t->nlist);
        }
        return;
    }
    case AST_ATTR:
        /* numpy's and PyTorch's x.T: transpose(x) */
        if (strcmp(n->name, "T") == 0 && n->a) {
            ast_node *c = node_new(D, AST_CALL, n->line, n->col);
            if (!c || set_list(D, c, &n->a, 1) < 0)
                return;
            c->name = "transpose";
            *slot = c;
            rw_expr(D, &c->list[0]);
            return;
        }
        rw_children(D, n);
        return;
    case AST_CALL:
        if ((n->flags & AST_F_METHOD) && numpy_method(D, slot))
            return;
        if (!(n->flags & AST_F_METHOD) && numpy_function(D, slot))
            return;
        if (!(n->flags & AST_F_METHOD) && strcmp(n->name, "len") == 0 && n->nlist == 1) {
            int call = 0, k = tuple_len(D, n->list[0], &call);
            if (k > 0) {
                ast_node *r = node_new(D, AST_INT, n->line, n->col);
                if (r)
                    r->ival = k;
                *slot = r;
                return;
            }
        }
        if (!(n->flags & AST_F_METHOD) && tuple_args(D, n))
            return;
        for (int i = 0; i < n->nlist; i++) {
            if (n->list[i]->kind == AST_KWARG)
                rw_expr(D, &n->list[i]->a);
            else
                rw_expr(D, &n->list[i]);
        }
        return;
    case AST_BINARY:
        if ((n->op == OP_EQ || n->op == OP_NE) && tuple_len(D, n->a, NULL) > 0 && tuple_len(D, n->b, NULL) > 0) {
            *slot = tuple_compare(D, n);
            return;
        }
        if (n->op == OP_ADD && tuple_len(D, n, NULL) > 0) {
            *slot = tuple_display(D, n, AST_TUPLE);
            return;
        }
        rw_children(D, n);
        return;
    case AST_COND:
        if (tuple_len(D, n, NULL) > 0) {
            *slot = tuple_display(D, n, AST_TUPLE);
            return;
        }
        rw_children(D, n);
        return;
    case AST_COMP:
        return; /* reported where it stands */
    default:
        rw_children(D, n);
        return;
    }
}

/* ---- statements ------------------------------------------------------------------------- */

static void rw_block(desugar *D, ast_node *blk);

/* Assignments to tuple variables: one target per item. */
static void rw_assign(desugar *D, ast_node *s)
{
    if (s->flags & AST_F_AUG) {
        ast_node *t = s->list[0];
        const tvar *v = t->kind == AST_NAME ? var_find(D, t->name) : NULL;
        if (v && (v->arity > 0 || v->alias)) {
            diag_error(D->d, t->line, t->col, "'%s' holds a %s, which cannot be changed in place: assign a new one",
                       t->name, v->alias ? "shape" : "tuple");
            s->a = error_node(D, s);
            return;
        }
        rw_expr(D, &s->a);
        for (int i = 0; i < s->nlist; i++)
            if (s->list[i]->kind == AST_INDEX)
                rw_children(D, s->list[i]);
        return;
    }
    if (s->nlist == 1 && s->list[0]->kind == AST_NAME) {
        ast_node *t = s->list[0];
        const tvar *v = var_find(D, t->name);
        if (s->a && s->a->kind == AST_TUPLE && s->a->nlist > DESUGAR_MAX_TUPLE) {
            diag_error(D->d, s->a->line, s->a->col,
                       "a tuple holds at most %d items, this one %d (a list [a, b, ...] holds any number)",
                       DESUGAR_MAX_TUPLE, s->a->nlist);
            s->a = error_node(D, s->a);
            return;
        }
        if (v && v->alias && s->a != v->alias) {
            diag_error(D->d, t->line, t->col,
                       "'%s' holds the shape of line %d, and a variable that holds a shape is assigned once "
                       "(write its dimensions into a tuple, t = (n, m), to change them)",
                       t->name, v->line);
            s->a = error_node(D, s->a);
            return;
        }
        if (v && v->arity > 0) {
            int call = 0, k = tuple_len(D, s->a, &call);
            if (k != v->arity) {
                if (k > 0)
                    diag_error(D->d, s->a->line, s->a->col, "'%s' holds a tuple of %d items (line %d), not %d",
                               t->name, v->arity, v->line, k);
                else
                    diag_error(D->d, s->a->line, s->a->col,
                               "'%s' holds a tuple of %d items (line %d) and cannot be assigned one value",
                               t->name, v->arity, v->line);
                s->a = error_node(D, s->a);
                return;
            }
            ast_node *targets[DESUGAR_MAX_TUPLE];
            for (int i = 0; i < k; i++)
                targets[i] = name_node(D, str_fmt(D, "%s[%d]", t->name, i), t->line, t->col);
            set_list(D, s, targets, k);
            if (call)
                rw_expr(D, &s->a);
            else
                s->a = tuple_display(D, s->a, AST_TUPLE);
            return;
        }
    }
    for (int i = 0; i < s->nlist; i++) {
        ast_node *t = s->list[i];
        const tvar *v = t->kind == AST_NAME ? var_find(D, t->name) : NULL;
        if (v && (v->arity > 0 || v->alias) && s->nlist > 1)
            diag_error(D->d, t->line, t->col, "'%s' holds a %s: assign it on a line of its own", t->name,
                       v->alias ? "shape" : "tuple");
        if (t->kind == AST_INDEX)
            rw_children(D, t);
    }
    int call = 0;
    if (s->nlist > 1 && tuple_len(D, s->a, &call) > 0 && !call && s->a->kind != AST_TUPLE)
        s->a = tuple_display(D, s->a, AST_TUPLE); /* a, b = t */
    else
        rw_expr(D, &s->a);
}

/* `for i, v in enumerate(xs, START)` with START an integer literal: enumerate(xs), and the body
 * starts with `i = i + START` (a loop variable assigned in the body keeps the value for the rest
 * of its iteration). Python's start= is taken as well. */
static void enumerate_start(desugar *D, ast_node *s)
{
    ast_node *it = s->a;
    if (!it || it->kind != AST_CALL || (it->flags & AST_F_METHOD) || strcmp(it->name, "enumerate") != 0 ||
        it->nlist != 2 || s->nlist != 2 || s->list[0]->kind != AST_NAME || !s->d || s->d->kind != AST_BLOCK)
        return;
    for (int g = 0; g < D->m->ngraphs; g++)
        if (strcmp(D->m->graphs[g].name, "enumerate") == 0)
            return; /* the file's own graph */
    ast_node *start = it->list[1];
    if (start->kind == AST_KWARG && strcmp(start->name, "start") == 0)
        start = start->a;
    const ast_node *lit = start;
    if (lit->kind == AST_UNARY && lit->op == OP_NEG)
        lit = lit->a;
    if (lit->kind != AST_INT)
        return; /* the checker says what enumerate takes */
    ast_node *as = node_new(D, AST_ASSIGN, start->line, start->col);
    ast_node *target = node_new(D, AST_NAME, start->line, start->col);
    ast_node *read = node_new(D, AST_NAME, start->line, start->col);
    ast_node *add = node_new(D, AST_BINARY, start->line, start->col);
    ast_node **body = ast_alloc(D->m->arena, sizeof *body * ((size_t)s->d->nlist + 1));
    if (!as || !target || !read || !add || !body) {
        D->oom = 1;
        return;
    }
    target->name = read->name = s->list[0]->name;
    add->op = OP_ADD;
    add->a = read;
    add->b = start;
    as->a = add;
    if (set_list(D, as, &target, 1) < 0)
        return;
    body[0] = as;
    for (int i = 0; i < s->d->nlist; i++)
        body[i + 1] = s->d->list[i];
    s->d->list = body;
    s->d->nlist++;
    it->nlist = 1;
}

static void rw_stmt(desugar *D, ast_node *s)
{
    if (!s || D->oom)
        return;
    switch (s->kind) {
    case AST_ASSIGN:
        rw_assign(D, s);
        return;
    case AST_RETURN: {
        /* `return f(x)` of a graph with several results stays a call: the checker assigns its
         * results to the graph's (a call's items cannot be taken apart) */
        int call = 0;
        if (s->a && s->a->kind != AST_TUPLE && tuple_len(D, s->a, &call) > 0 && !call)
            s->a = tuple_display(D, s->a, AST_TUPLE);
        else
            rw_expr(D, &s->a);
        return;
    }
    case AST_FOR_EACH: {
        for (int i = 0; i < (s->nlist ? s->nlist : 1); i++) {
            const char *name = s->nlist ? s->list[i]->name : s->name;
            const tvar *v = var_find(D, name);
            if (v && (v->arity > 0 || v->alias))
                diag_error(D->d, s->line, s->col, "'%s' holds a %s and cannot be a loop variable", name,
                           v->alias ? "shape" : "tuple");
        }
        enumerate_start(D, s);
        if (tuple_len(D, s->a, NULL) > 0)
            s->a = tuple_display(D, s->a, AST_LIST); /* for v in t: its items, as a list literal */
        else
            rw_expr(D, &s->a);
        rw_block(D, s->d);
        return;
    }
    case AST_FOR_RANGE: {
        const tvar *v = var_find(D, s->name);
        if (v && (v->arity > 0 || v->alias))
            diag_error(D->d, s->line, s->col, "'%s' holds a %s and cannot be a loop variable", s->name,
                       v->alias ? "shape" : "tuple");
        rw_expr(D, &s->a);
        rw_expr(D, &s->b);
        rw_expr(D, &s->c);
        rw_block(D, s->d);
        return;
    }
    case AST_IF:
        for (int i = 0; i < s->nlist; i++) {
            rw_expr(D, &s->list[i]->a);
            rw_block(D, s->list[i]->b);
        }
        return;
    case AST_WHILE:
        rw_expr(D, &s->a);
        rw_block(D, s->b);
        return;
    case AST_SWITCH:
        rw_expr(D, &s->a);
        for (int i = 0; i < s->nlist; i++)
            rw_block(D, s->list[i]->b);
        return;
    case AST_EXPR:
        rw_expr(D, &s->a);
        return;
    case AST_BLOCK:
        rw_block(D, s);
        return;
    default:
        return;
    }
}

static void rw_block(desugar *D, ast_node *blk)
{
    if (!blk)
        return;
    /* the assignments of shape variables go: their reads stand for the shape itself */
    int k = 0;
    for (int i = 0; i < blk->nlist; i++) {
        ast_node *s = blk->list[i];
        if (s->kind == AST_ASSIGN && !(s->flags & AST_F_AUG) && s->nlist == 1 && s->list[0]->kind == AST_NAME) {
            const tvar *v = var_find(D, s->list[0]->name);
            if (v && v->alias && s->a == v->alias) {
                /* the shape's tensor is read where the variable is; keep it defined here */
                continue;
            }
        }
        rw_stmt(D, s);
        blk->list[k++] = s;
    }
    blk->nlist = k;
}

/* ---- finding tuple and shape variables --------------------------------------------------- */

typedef struct walk {
    desugar *D;
    int changed;
} walk;

static void find_stmt(walk *w, ast_node *s);

static void find_block(walk *w, ast_node *blk)
{
    if (!blk)
        return;
    for (int i = 0; i < blk->nlist; i++)
        find_stmt(w, blk->list[i]);
}

static void find_stmt(walk *w, ast_node *s)
{
    desugar *D = w->D;
    if (!s || D->oom)
        return;
    switch (s->kind) {
    case AST_ASSIGN: {
        if ((s->flags & AST_F_AUG) || s->nlist != 1 || s->list[0]->kind != AST_NAME)
            return;
        const ast_node *t = s->list[0];
        tvar *v = var_find(D, t->name);
        if (is_shape_form(s->a)) {
            if (!v) {
                if (param_named(D->g, t->name))
                    return; /* reported by the checker, as any value of the wrong type */
                v = var_add(D, t->name);
                if (!v)
                    return;
                v->alias = s->a;
                v->line = s->line;
                w->changed = 1;
            }
            return;
        }
        int k = tuple_len(D, s->a, NULL);
        if (k > 0 && !v && !param_named(D->g, t->name)) {
            v = var_add(D, t->name);
            if (!v)
                return;
            v->arity = k;
            v->line = s->line;
            w->changed = 1;
        }
        return;
    }
    case AST_BLOCK:
        find_block(w, s);
        return;
    default:
        for (int k = 0, n = ast_child_blocks(s); k < n; k++)
            find_block(w, ast_child_block(s, k));
        return;
    }
}

/* ---- list comprehensions ----------------------------------------------------------------- */

typedef struct stmts {
    ast_node **items;
    int n, cap;
} stmts;

static void stmts_push(desugar *D, stmts *l, ast_node *s)
{
    if (!s)
        return;
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 8;
        ast_node **ni = realloc(l->items, (size_t)cap * sizeof *ni);
        if (!ni) {
            D->oom = 1;
            return;
        }
        l->items = ni;
        l->cap = cap;
    }
    l->items[l->n++] = s;
}

/* 1 if tree n reads or assigns the name (as a name, a target or a loop variable). */
static int mentions(const ast_node *n, const char *name)
{
    if (!n)
        return 0;
    if ((n->kind == AST_NAME || n->kind == AST_FOR_RANGE || n->kind == AST_FOR_EACH) && n->name &&
        strcmp(n->name, name) == 0)
        return 1;
    if (mentions(n->a, name) || mentions(n->b, name) || mentions(n->c, name) || mentions(n->d, name))
        return 1;
    for (int i = 0; i < n->nlist; i++)
        if (mentions(n->list[i], name))
            return 1;
    return 0;
}

/* Occurrences of the name in tree n outside the subtree `skip`. */
static int mentions_outside(const ast_node *n, const ast_node *skip, const char *name)
{
    if (!n || n == skip)
        return 0;
    if ((n->kind == AST_NAME || n->kind == AST_FOR_RANGE || n->kind == AST_FOR_EACH) && n->name &&
        strcmp(n->name, name) == 0)
        return 1;
    if (mentions_outside(n->a, skip, name) || mentions_outside(n->b, skip, name) ||
        mentions_outside(n->c, skip, name) || mentions_outside(n->d, skip, name))
        return 1;
    for (int i = 0; i < n->nlist; i++)
        if (mentions_outside(n->list[i], skip, name))
            return 1;
    return 0;
}

static void rename_name(ast_node *n, const char *from, const char *to)
{
    if (!n)
        return;
    if (n->kind == AST_NAME && strcmp(n->name, from) == 0)
        n->name = to;
    rename_name(n->a, from, to);
    rename_name(n->b, from, to);
    rename_name(n->c, from, to);
    rename_name(n->d, from, to);
    for (int i = 0; i < n->nlist; i++)
        rename_name(n->list[i], from, to);
}

/* A block holding the one statement s. */
static ast_node *block_of(desugar *D, ast_node *s)
{
    ast_node *b = node_new(D, AST_BLOCK, s->line, s->col);
    if (b)
        set_list(D, b, &s, 1);
    return b;
}

/* The statements that make comprehension c's list, named list: `list = []` and its loops. */
static void comp_statements(desugar *D, ast_node *c, const char *list, stmts *out)
{
    /* the loop variables are the comprehension's own: renamed where the graph uses the name */
    for (int i = 0; i < c->nlist; i++) {
        ast_node *f = c->list[i];
        if (f->kind == AST_ARM)
            continue;
        int nv = f->nlist ? f->nlist : 1;
        for (int j = 0; j < nv; j++) {
            const char *v = f->nlist ? f->list[j]->name : f->name;
            if (!mentions_outside(D->g->body, c, v))
                continue;
            const char *to = str_fmt(D, "%s (comprehension at %d:%d)", v, c->line, c->col);
            if (!to)
                return;
            rename_name(c->a, v, to);
            for (int k = i + 1; k < c->nlist; k++) {
                rename_name(c->list[k]->a, v, to); /* a later clause's iterated value or condition */
                rename_name(c->list[k]->b, v, to);
                rename_name(c->list[k]->c, v, to);
            }
            if (f->nlist)
                f->list[j]->name = to;
            if (j == 0)
                f->name = to;
        }
    }
    ast_node *empty = node_new(D, AST_LIST, c->line, c->col);
    ast_node *init = node_new(D, AST_ASSIGN, c->line, c->col);
    ast_node *target = name_node(D, list, c->line, c->col);
    ast_node *append = node_new(D, AST_CALL, c->a ? c->a->line : c->line, c->a ? c->a->col : c->col);
    ast_node *stmt = node_new(D, AST_EXPR, append ? append->line : c->line, append ? append->col : c->col);
    if (!empty || !init || !target || !append || !stmt)
        return;
    empty->flags = AST_F_COMP; /* checker: the list's size is its own loop's (size_lists) */
    init->a = empty;
    set_list(D, init, &target, 1);
    append->name = "append";
    append->flags = AST_F_METHOD | AST_F_COMP;
    ast_node *args[2] = {name_node(D, list, c->line, c->col), c->a};
    set_list(D, append, args, 2);
    stmt->a = append;
    ast_node *body = stmt;
    for (int i = c->nlist - 1; i >= 0; i--) {
        ast_node *f = c->list[i];
        if (f->kind == AST_ARM) {
            ast_node *arm = f, *iff = node_new(D, AST_IF, f->line, f->col);
            if (!iff)
                return;
            arm->b = block_of(D, body);
            set_list(D, iff, &arm, 1);
            body = iff;
        } else {
            f->d = block_of(D, body);
            body = f;
        }
    }
    stmts_push(D, out, init);
    stmts_push(D, out, body);
}

static void comp_block(desugar *D, ast_node *blk);

/* Comprehensions in expression n, hoisted before the statement when `ok`; reported otherwise. */
static void comp_expr(desugar *D, ast_node **slot, int ok, stmts *pre)
{
    ast_node *n = *slot;
    if (!n || D->oom)
        return;
    if (n->kind == AST_COMP) {
        /* the comprehension's own parts first: a comprehension inside one is made per item */
        if (!ok) {
            diag_error(D->d, n->line, n->col,
                       "a list comprehension here would be made more than once, or not at all: make it on a "
                       "line of its own (xs = [...]) and use the list");
            *slot = error_node(D, n);
            return;
        }
        const char *list = str_fmt(D, "[...] at %d:%d", n->line, n->col);
        if (!list)
            return;
        comp_statements(D, n, list, pre);
        *slot = name_node(D, list, n->line, n->col);
        return;
    }
    switch (n->kind) {
    case AST_COND:
        comp_expr(D, &n->a, ok, pre);
        comp_expr(D, &n->b, 0, pre);
        comp_expr(D, &n->c, 0, pre);
        return;
    case AST_BINARY:
        comp_expr(D, &n->a, ok, pre);
        comp_expr(D, &n->b, ok && n->op != OP_AND && n->op != OP_OR, pre);
        return;
    case AST_CALL:
        for (int i = 0; i < n->nlist; i++)
            comp_expr(D, n->list[i]->kind == AST_KWARG ? &n->list[i]->a : &n->list[i], ok, pre);
        return;
    default:
        comp_expr(D, &n->a, ok, pre);
        comp_expr(D, &n->b, ok, pre);
        comp_expr(D, &n->c, ok, pre);
        comp_expr(D, &n->d, ok, pre);
        for (int i = 0; i < n->nlist; i++)
            comp_expr(D, &n->list[i], ok, pre);
        return;
    }
}

/* Statement s with its comprehensions made first (into out). */
static void comp_stmt(desugar *D, ast_node *s, stmts *out)
{
    stmts pre = {0};
    switch (s->kind) {
    case AST_ASSIGN:
        if (!(s->flags & AST_F_AUG) && s->nlist == 1 && s->list[0]->kind == AST_NAME && s->a &&
            s->a->kind == AST_COMP && !mentions(s->a, s->list[0]->name)) {
            /* xs = [E for v in it]: xs itself is the list the loops fill */
            ast_node *c = s->a;
            comp_statements(D, c, s->list[0]->name, &pre);
            for (int i = 0; i < pre.n; i++) {
                comp_block(D, pre.items[i]->kind == AST_ASSIGN ? NULL : pre.items[i]);
                stmts_push(D, out, pre.items[i]);
            }
            free(pre.items);
            return;
        }
        comp_expr(D, &s->a, 1, &pre);
        for (int i = 0; i < s->nlist; i++)
            comp_expr(D, &s->list[i], 1, &pre);
        break;
    case AST_RETURN:
    case AST_EXPR:
    case AST_SWITCH:
        comp_expr(D, &s->a, 1, &pre);
        break;
    case AST_FOR_RANGE:
        comp_expr(D, &s->a, 1, &pre);
        comp_expr(D, &s->b, 1, &pre);
        comp_expr(D, &s->c, 1, &pre);
        break;
    case AST_FOR_EACH:
        comp_expr(D, &s->a, 1, &pre);
        break;
    case AST_WHILE:
        comp_expr(D, &s->a, 0, &pre);
        break;
    case AST_IF:
        for (int i = 0; i < s->nlist; i++)
            comp_expr(D, &s->list[i]->a, i == 0, &pre);
        break;
    default:
        break;
    }
    for (int i = 0; i < pre.n; i++) {
        /* the loops that fill a list may hold comprehensions of their own */
        if (pre.items[i]->kind != AST_ASSIGN)
            comp_block(D, pre.items[i]);
        stmts_push(D, out, pre.items[i]);
    }
    free(pre.items);
    /* the statement's own blocks */
    if (s->kind == AST_BLOCK)
        comp_block(D, s);
    for (int k = 0, n = ast_child_blocks(s); k < n; k++)
        comp_block(D, ast_child_block(s, k));
    stmts_push(D, out, s);
}

/* Walks a block, or a statement made for a comprehension (a loop or an if), in place. */
static void comp_block(desugar *D, ast_node *blk)
{
    if (!blk || D->oom)
        return;
    if (blk->kind != AST_BLOCK) {
        /* a loop (or if) made for a comprehension: its body */
        if (blk->kind == AST_IF)
            comp_block(D, blk->list[0]->b);
        else
            comp_block(D, blk->d);
        return;
    }
    stmts out = {0};
    for (int i = 0; i < blk->nlist; i++)
        comp_stmt(D, blk->list[i], &out);
    if (!D->oom)
        set_list(D, blk, out.items, out.n);
    free(out.items);
}

/* 1 if tree n holds a comprehension, a tuple or a shape-like attribute: worth the walk. */
static int has_sugar(const ast_node *n)
{
    if (!n)
        return 0;
    if (n->kind == AST_COMP || n->kind == AST_TUPLE || n->kind == AST_ATTR || n->kind == AST_CALL)
        return 1;
    if (has_sugar(n->a) || has_sugar(n->b) || has_sugar(n->c) || has_sugar(n->d))
        return 1;
    for (int i = 0; i < n->nlist; i++)
        if (has_sugar(n->list[i]))
            return 1;
    return 0;
}

int desugar_graph(ast_module *m, int gi, const cfx_context *ctx, diag *d)
{
    desugar D;
    memset(&D, 0, sizeof D);
    D.m = m;
    D.ctx = ctx;
    D.d = d;
    ast_graph *g = &m->graphs[gi];
    int tuple_params = 0;
    for (int i = 0; i < g->nparams; i++)
        tuple_params |= g->params[i].tuple_of != NULL;
    if (!g->body || (!tuple_params && !has_sugar(g->body)))
        return 0;
    D.g = g;
    /* a tuple parameter is a tuple variable whose items are the parameters p[0], p[1], ... */
    for (int i = 0; i < g->nparams && !D.oom; i++) {
        const ast_param *x = &g->params[i];
        if (!x->tuple_of)
            continue;
        tvar *v = var_add(&D, x->tuple_of);
        if (v) {
            v->arity = x->tuple_index + 1;
            v->line = x->line;
        }
    }
    comp_block(&D, g->body);
    walk w = {&D, 1};
    for (int round = 0; w.changed && round < 64 && !D.oom; round++) {
        w.changed = 0;
        find_block(&w, g->body);
    }
    rw_block(&D, g->body);
    free(D.vars);
    return D.oom ? -1 : 0;
}

/* ---- lambdas and graphs defined inside graphs (the whole module, before anything else) -----
 *
 * `f = lambda v, w: E` makes f a macro of its graph and of the graphs defined inside it: a call
 * f(a, b) becomes E with a and b in place of v and w, so E reads the variables of its graph as
 * they are at the call. An argument that calls something (an op, a graph, a method) is made as
 * often as the lambda reads its parameter, so it must read it exactly once.
 *
 * A graph defined inside another (AST_DEF; the parser made it a graph of the module named
 * `outer.inner`) may be called, by its name there, from its enclosing graph and from the graphs
 * defined inside that one, as Python's nested functions are. A name it reads but does not
 * assign (nor declare) is a variable of an enclosing graph: it becomes a parameter of its own,
 * a capture, which each call passes by name with the variable as it is then. A graph that calls
 * another defined beside or inside it passes that one's captures on, capturing them in turn.
 */

typedef struct lam {
    const char *name;
    int graph; /* where it is defined */
    int line;
    ast_node *def; /* the AST_LAMBDA */
} lam;

typedef struct names {
    const char **items;
    int n, cap;
} names;

typedef struct nested {
    desugar *D;
    lam *lams;
    int nlams, caplams;
    names *vars;   /* per graph: the names it assigns or declares */
    names *free_;  /* per graph: the names it reads and does not assign */
    names *caps;   /* per graph: its captures */
    int depth;     /* of lambda expansion */
} nested;

static int names_has(const names *s, const char *n)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->items[i], n) == 0)
            return 1;
    return 0;
}

static int names_add(desugar *D, names *s, const char *n)
{
    if (!n || names_has(s, n))
        return 0;
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 8;
        const char **ni = realloc(s->items, (size_t)cap * sizeof *ni);
        if (!ni) {
            D->oom = 1;
            return 0;
        }
        s->items = ni;
        s->cap = cap;
    }
    s->items[s->n++] = n;
    return 1;
}

static int graph_index(const ast_module *m, const char *name)
{
    for (int i = 0; i < m->ngraphs; i++)
        if (m->graphs[i].name && strcmp(m->graphs[i].name, name) == 0)
            return i;
    return -1;
}

/* Removes from the blocks of tree n the statements that `drop` says go, after `take` saw them. */
typedef int (*stmt_fn)(nested *N, int gi, ast_node *s);

static void drop_stmts(nested *N, int gi, ast_node *n, stmt_fn take)
{
    if (!n)
        return;
    if (n->kind == AST_BLOCK) {
        int k = 0;
        for (int i = 0; i < n->nlist; i++) {
            ast_node *s = n->list[i];
            if (take(N, gi, s))
                continue;
            drop_stmts(N, gi, s, take);
            n->list[k++] = s;
        }
        n->nlist = k;
        return;
    }
    for (int k = 0, nb = ast_child_blocks(n); k < nb; k++)
        drop_stmts(N, gi, ast_child_block(n, k), take);
}

/* `f = lambda ...`: recorded, and the statement goes. */
static int take_lambda(nested *N, int gi, ast_node *s)
{
    desugar *D = N->D;
    if (s->kind != AST_ASSIGN || (s->flags & AST_F_AUG) || s->nlist != 1 || s->list[0]->kind != AST_NAME || !s->a ||
        s->a->kind != AST_LAMBDA)
        return 0;
    const char *name = s->list[0]->name;
    for (int i = 0; i < N->nlams; i++)
        if (N->lams[i].graph == gi && strcmp(N->lams[i].name, name) == 0) {
            diag_error(D->d, s->line, s->col, "'%s' holds the lambda of line %d, and a lambda is assigned once",
                       name, N->lams[i].line);
            return 1;
        }
    if (N->nlams == N->caplams) {
        int cap = N->caplams ? N->caplams * 2 : 8;
        lam *nl = realloc(N->lams, (size_t)cap * sizeof *nl);
        if (!nl) {
            D->oom = 1;
            return 1;
        }
        N->lams = nl;
        N->caplams = cap;
    }
    N->lams[N->nlams++] = (lam){name, gi, s->line, s->a};
    return 1;
}

/* The lambda that a call of `name` in graph gi means: its own, or an enclosing graph's. */
static const lam *lambda_for(nested *N, int gi, const char *name)
{
    for (int g = gi; g >= 0; g = N->D->m->graphs[g].enclosing - 1)
        for (int i = 0; i < N->nlams; i++)
            if (N->lams[i].graph == g && strcmp(N->lams[i].name, name) == 0)
                return &N->lams[i];
    return NULL;
}

static int uses_of(const ast_node *n, const char *name)
{
    if (!n)
        return 0;
    int c = n->kind == AST_NAME && strcmp(n->name, name) == 0;
    c += uses_of(n->a, name) + uses_of(n->b, name) + uses_of(n->c, name) + uses_of(n->d, name);
    for (int i = 0; i < n->nlist; i++)
        c += uses_of(n->list[i], name);
    return c;
}

static int makes_calls(const ast_node *n)
{
    if (!n)
        return 0;
    if (n->kind == AST_CALL || n->kind == AST_COMP || n->kind == AST_LAMBDA)
        return 1;
    if (makes_calls(n->a) || makes_calls(n->b) || makes_calls(n->c) || makes_calls(n->d))
        return 1;
    for (int i = 0; i < n->nlist; i++)
        if (makes_calls(n->list[i]))
            return 1;
    return 0;
}

/* E with each name in `from` replaced by a copy of the matching node of `to`. */
static ast_node *substitute(desugar *D, const ast_node *e, ast_node **from, ast_node **to, int count, int line,
                            int col)
{
    if (!e)
        return NULL;
    if (e->kind == AST_NAME)
        for (int i = 0; i < count; i++)
            if (strcmp(e->name, from[i]->name) == 0)
                return copy_tree(D, to[i], to[i]->line, to[i]->col);
    ast_node *c = node_new(D, e->kind, line, col);
    if (!c)
        return NULL;
    *c = *e;
    c->line = e->line;
    c->col = e->col;
    c->note = NULL;
    c->a = substitute(D, e->a, from, to, count, line, col);
    c->b = substitute(D, e->b, from, to, count, line, col);
    c->c = substitute(D, e->c, from, to, count, line, col);
    c->d = substitute(D, e->d, from, to, count, line, col);
    if (e->nlist) {
        ast_node **items = malloc((size_t)e->nlist * sizeof *items);
        if (!items) {
            D->oom = 1;
            return c;
        }
        for (int i = 0; i < e->nlist; i++)
            items[i] = substitute(D, e->list[i], from, to, count, line, col);
        set_list(D, c, items, e->nlist);
        free(items);
    }
    return c;
}

static void expand_lambdas(nested *N, int gi, ast_node **slot);

/* A call of a lambda: its body, with the arguments in place of its parameters. */
static ast_node *expand_call(nested *N, int gi, ast_node *n, const lam *l)
{
    desugar *D = N->D;
    const ast_node *f = l->def;
    for (int i = 0; i < n->nlist; i++)
        if (n->list[i]->kind == AST_KWARG) {
            diag_error(D->d, n->list[i]->line, n->list[i]->col, "a lambda takes its arguments by position");
            return error_node(D, n);
        }
    if (n->nlist != f->nlist) {
        diag_error(D->d, n->line, n->col, "lambda '%s' takes %d argument%s, got %d", l->name, f->nlist,
                   f->nlist == 1 ? "" : "s", n->nlist);
        return error_node(D, n);
    }
    if (N->depth >= 16) {
        diag_error(D->d, n->line, n->col, "lambda '%s' calls itself (or its calls go 16 deep): a lambda is "
                   "expanded where it is called, so it cannot recurse", l->name);
        return error_node(D, n);
    }
    for (int i = 0; i < n->nlist; i++) {
        expand_lambdas(N, gi, &n->list[i]);
        int u = uses_of(f->a, f->list[i]->name);
        if (u != 1 && makes_calls(n->list[i])) {
            diag_error(D->d, n->list[i]->line, n->list[i]->col,
                       "lambda '%s' reads '%s' %d times, so this argument, which calls something, would be made "
                       "%d times: assign it to a variable and pass that", l->name, f->list[i]->name, u, u);
            return error_node(D, n);
        }
    }
    ast_node *e = substitute(D, f->a, f->list, n->list, n->nlist, n->line, n->col);
    if (!e)
        return error_node(D, n);
    e->flags |= AST_F_PAREN;
    N->depth++;
    expand_lambdas(N, gi, &e);
    N->depth--;
    return e;
}

static void expand_lambdas(nested *N, int gi, ast_node **slot)
{
    ast_node *n = *slot;
    if (!n || N->D->oom || n->kind == AST_ERROR)
        return;
    if (n->kind == AST_LAMBDA) {
        diag_error(N->D->d, n->line, n->col, "a lambda is given a name and called: f = lambda v: ... on a line of "
                   "its own, then f(x)");
        *slot = error_node(N->D, n);
        return;
    }
    if (n->kind == AST_CALL && !(n->flags & AST_F_METHOD)) {
        const lam *l = lambda_for(N, gi, n->name);
        if (l) {
            *slot = expand_call(N, gi, n, l);
            return;
        }
    }
    if (n->kind == AST_NAME && lambda_for(N, gi, n->name)) {
        diag_error(N->D->d, n->line, n->col, "'%s' is a lambda: call it, %s(...)", n->name, n->name);
        *slot = error_node(N->D, n);
        return;
    }
    expand_lambdas(N, gi, &n->a);
    expand_lambdas(N, gi, &n->b);
    expand_lambdas(N, gi, &n->c);
    expand_lambdas(N, gi, &n->d);
    for (int i = 0; i < n->nlist; i++)
        expand_lambdas(N, gi, &n->list[i]);
}

/* ---- graphs inside graphs ---- */

/* The statement defining a graph inside this one goes (the graph is the module's). */
static int take_def(nested *N, int gi, ast_node *s)
{
    (void)N;
    (void)gi;
    return s->kind == AST_DEF;
}

/* The graph a call of `name` in graph gi means, when it is one defined inside gi or inside a
 * graph enclosing gi (the nearest); -1 otherwise. */
static int def_for(nested *N, int gi, const char *name)
{
    const ast_module *m = N->D->m;
    for (int g = gi; g >= 0; g = m->graphs[g].enclosing - 1) {
        char full[600];
        snprintf(full, sizeof full, "%s.%s", m->graphs[g].name, name);
        int k = graph_index(m, full);
        if (k >= 0)
            return k;
    }
    return -1;
}

/* The names graph gi assigns or declares (vars) and those it reads (reads). */
static void scan_names(nested *N, int gi, const ast_node *n, int target)
{
    desugar *D = N->D;
    if (!n || D->oom)
        return;
    switch (n->kind) {
    case AST_NAME:
        names_add(D, target ? &N->vars[gi] : &N->free_[gi], n->name);
        return;
    case AST_ASSIGN:
        for (int i = 0; i < n->nlist; i++) {
            const ast_node *t = n->list[i];
            if (t->kind == AST_NAME) {
                names_add(D, &N->vars[gi], t->name);
                if (n->flags & AST_F_AUG)
                    names_add(D, &N->free_[gi], t->name);
            } else {
                scan_names(N, gi, t, 0); /* x[i] = v reads x: the graph's own copy */
            }
        }
        scan_names(N, gi, n->a, 0);
        return;
    case AST_FOR_RANGE:
    case AST_FOR_EACH:
        names_add(D, &N->vars[gi], n->name);
        for (int i = 0; i < n->nlist; i++)
            names_add(D, &N->vars[gi], n->list[i]->name);
        scan_names(N, gi, n->a, 0);
        scan_names(N, gi, n->b, 0);
        scan_names(N, gi, n->c, 0);
        scan_names(N, gi, n->d, 0);
        return;
    case AST_COMP:
        for (int i = 0; i < n->nlist; i++) {
            const ast_node *c = n->list[i];
            if (c->kind == AST_FOR_RANGE || c->kind == AST_FOR_EACH) {
                names_add(D, &N->vars[gi], c->name);
                for (int j = 0; j < c->nlist; j++)
                    names_add(D, &N->vars[gi], c->list[j]->name);
            }
            scan_names(N, gi, c->a, 0);
            scan_names(N, gi, c->b, 0);
            scan_names(N, gi, c->c, 0);
        }
        scan_names(N, gi, n->a, 0);
        return;
    case AST_ERROR:
        for (int i = 0; i < n->nlist; i++)
            names_add(D, &N->vars[gi], n->list[i]->name);
        return;
    case AST_KWARG:
        scan_names(N, gi, n->a, 0);
        return;
    default:
        scan_names(N, gi, n->a, 0);
        scan_names(N, gi, n->b, 0);
        scan_names(N, gi, n->c, 0);
        scan_names(N, gi, n->d, 0);
        for (int i = 0; i < n->nlist; i++)
            scan_names(N, gi, n->list[i], 0);
        return;
    }
}

/* Name n, which graph gi needs, from the nearest graph enclosing it that has it: every graph
 * on the way captures it. 1 if a capture was added. */
static int resolve(nested *N, int gi, const char *n)
{
    const ast_module *m = N->D->m;
    int g = gi;
    while (m->graphs[g].enclosing && !names_has(&N->vars[g], n) && !names_has(&N->caps[g], n))
        g = m->graphs[g].enclosing - 1;
    if (!names_has(&N->vars[g], n) && !names_has(&N->caps[g], n))
        return 0; /* no graph has it: reported where it is read */
    int added = 0;
    for (int x = gi; x != g; x = m->graphs[x].enclosing - 1)
        added |= names_add(N->D, &N->caps[x], n);
    return added;
}

typedef struct edge {
    int from, to;
    ast_node *call;
} edge;

typedef struct edges {
    edge *items;
    int n, cap;
} edges;

static void find_calls(nested *N, int gi, ast_node *n, edges *out)
{
    desugar *D = N->D;
    if (!n || D->oom)
        return;
    if (n->kind == AST_CALL && !(n->flags & AST_F_METHOD)) {
        int k = def_for(N, gi, n->name);
        if (k >= 0) {
            n->name = D->m->graphs[k].name;
            if (out->n == out->cap) {
                int cap = out->cap ? out->cap * 2 : 8;
                edge *ne = realloc(out->items, (size_t)cap * sizeof *ne);
                if (!ne) {
                    D->oom = 1;
                    return;
                }
                out->items = ne;
                out->cap = cap;
            }
            out->items[out->n++] = (edge){gi, k, n};
        }
    }
    find_calls(N, gi, n->a, out);
    find_calls(N, gi, n->b, out);
    find_calls(N, gi, n->c, out);
    find_calls(N, gi, n->d, out);
    for (int i = 0; i < n->nlist; i++)
        find_calls(N, gi, n->list[i], out);
}

int desugar_module(ast_module *m, const cfx_context *ctx, diag *d)
{
    desugar D;
    memset(&D, 0, sizeof D);
    D.m = m;
    D.ctx = ctx;
    D.d = d;
    nested N;
    memset(&N, 0, sizeof N);
    N.D = &D;
    int any = 0;
    for (int gi = 0; gi < m->ngraphs; gi++)
        any |= m->graphs[gi].enclosing != 0;
    /* lambdas: recorded and expanded */
    for (int gi = 0; gi < m->ngraphs && !D.oom; gi++)
        drop_stmts(&N, gi, m->graphs[gi].body, take_lambda);
    if (N.nlams)
        for (int gi = 0; gi < m->ngraphs && !D.oom; gi++)
            expand_lambdas(&N, gi, &m->graphs[gi].body);
    else
        for (int gi = 0; gi < m->ngraphs && !D.oom; gi++)
            expand_lambdas(&N, gi, &m->graphs[gi].body); /* a stray lambda is reported */
    if (!any || D.oom) {
        free(N.lams);
        return D.oom ? -1 : 0;
    }
    /* graphs inside graphs: their calls resolved, their captures found and passed */
    N.vars = calloc((size_t)m->ngraphs, sizeof *N.vars);
    N.free_ = calloc((size_t)m->ngraphs, sizeof *N.free_);
    N.caps = calloc((size_t)m->ngraphs, sizeof *N.caps);
    edges calls = {0};
    if (!N.vars || !N.free_ || !N.caps)
        D.oom = 1;
    for (int gi = 0; gi < m->ngraphs && !D.oom; gi++) {
        ast_graph *g = &m->graphs[gi];
        drop_stmts(&N, gi, g->body, take_def);
        for (int i = 0; i < g->nparams; i++)
            names_add(&D, &N.vars[gi], g->params[i].tuple_of ? g->params[i].tuple_of : g->params[i].name);
        for (int i = 0; i < g->nresults; i++)
            names_add(&D, &N.vars[gi], g->results[i].name);
        scan_names(&N, gi, g->body, 0);
        find_calls(&N, gi, g->body, &calls);
    }
    for (int changed = 1, round = 0; changed && !D.oom && round < 1000; round++) {
        changed = 0;
        for (int gi = 0; gi < m->ngraphs; gi++) {
            if (!m->graphs[gi].enclosing)
                continue;
            for (int i = 0; i < N.free_[gi].n; i++)
                if (!names_has(&N.vars[gi], N.free_[gi].items[i]))
                    changed |= resolve(&N, gi, N.free_[gi].items[i]);
        }
        for (int i = 0; i < calls.n; i++) {
            const edge *c = &calls.items[i];
            for (int j = 0; j < N.caps[c->to].n; j++) {
                const char *n = N.caps[c->to].items[j];
                if (!names_has(&N.vars[c->from], n) && !names_has(&N.caps[c->from], n))
                    changed |= resolve(&N, c->from, n);
            }
        }
    }
    /* the captures become parameters, which every call passes by name */
    for (int gi = 0; gi < m->ngraphs && !D.oom; gi++) {
        ast_graph *g = &m->graphs[gi];
        if (!N.caps[gi].n)
            continue;
        ast_param *ps = ast_alloc(m->arena, sizeof *ps * (size_t)(g->nparams + N.caps[gi].n));
        if (!ps) {
            D.oom = 1;
            break;
        }
        if (g->nparams)
            memcpy(ps, g->params, sizeof *ps * (size_t)g->nparams);
        for (int i = 0; i < N.caps[gi].n; i++) {
            ast_param *x = &ps[g->nparams + i];
            memset(x, 0, sizeof *x);
            x->name = N.caps[gi].items[i];
            x->type.rank = AST_UNTYPED;
            x->line = g->line;
            x->col = g->col;
            x->capture = 1;
        }
        g->params = ps;
        g->nparams += N.caps[gi].n;
    }
    for (int i = 0; i < calls.n && !D.oom; i++) {
        const edge *c = &calls.items[i];
        const names *caps = &N.caps[c->to];
        if (!caps->n)
            continue;
        ast_node **args = malloc(sizeof *args * (size_t)(c->call->nlist + caps->n));
        if (!args) {
            D.oom = 1;
            break;
        }
        for (int j = 0; j < c->call->nlist; j++)
            args[j] = c->call->list[j];
        for (int j = 0; j < caps->n; j++) {
            ast_node *kw = node_new(&D, AST_KWARG, c->call->line, c->call->col);
            if (!kw)
                break;
            kw->name = caps->items[j];
            kw->a = name_node(&D, caps->items[j], c->call->line, c->call->col);
            args[c->call->nlist + j] = kw;
        }
        set_list(&D, c->call, args, c->call->nlist + caps->n);
        free(args);
    }
    for (int gi = 0; gi < m->ngraphs; gi++) {
        free(N.vars[gi].items);
        free(N.free_[gi].items);
        free(N.caps[gi].items);
    }
    free(N.vars);
    free(N.free_);
    free(N.caps);
    free(calls.items);
    free(N.lams);
    return D.oom ? -1 : 0;
}
