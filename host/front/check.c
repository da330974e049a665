/* check.c: names, types, constant folding and joins across control flow (see check.h).
 *
 * The checker walks each graph once, in program order, carrying an environment: for each
 * variable its state on the paths reaching this point (assigned with a type, assigned on
 * some paths only, assigned only inside an earlier loop, ...) and, for a scalar, its value
 * when that value is known on every path. The paths of a branch are checked one after the
 * other in the one environment, each undone when it ends but for what it changed, and joined
 * afterwards by looking only at what some path changed, so checking costs time in proportion
 * to the program, not to its statements times its variables. A loop body is checked once:
 * every variable the body assigns (found by a syntactic scan) is treated as unknown at the
 * loop head, so the one pass is valid for every iteration and no fixpoint is needed.
 *
 * After an error an expression is "in error": whatever uses it reports nothing more, so
 * one mistake gives one message, and independent mistakes each give theirs.
 *
 * Checking is a stage that compile.c runs graph by graph, each graph just after its desugaring
 * (check.h): check_constants, check_begin, check_one_graph per graph, check_end.
 *
 * Sections, in order (each under a `---- NAME` heading):
 *   the checker's state      variables' states, environments, the checker
 *   type helpers
 *   declarations             what is used before the section that defines it
 *   statements               conditions, assignments, the variables a statement assigns
 *   branches                 the paths out of an if or a switch, and their join
 *   loops                    while, for over a range, for over tensors and lists
 *   if and switch
 *   results, return          and the statement and block dispatch
 *   graphs                   variables, captures, the two passes over a graph, sizes once inlined
 *   the module               its constants, and checking's begin, graphs and end
 *   types                    as messages write them
 *   small helpers            literals, wrapping and rounding, written types, broadcasting
 *   expressions              literals and folding, elementwise ops, matmul, indexing, names
 *   lists                    records, items, assignment, methods
 *   list capacities
 *   shapes                   a shape given as a value, reshape, boxes x[i, j], x.shape
 *   conditional expressions  `is` and narrowing, value hints, the expression dispatch
 *   calls                    graphs and their arguments, type arguments, makers, ops, reductions
 *   the environment          notes, variables, interned types, the per-path state
 *   the call graph           its strongly connected components and inlined sizes
 */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "host/cfx.h"
#include "check.h"
#include "context.h"
#include "diag.h"
#include "lower.h"
#include "parse.h"
#include "host/program/program.h"
#include "kernels/cfxlimits.h"

/* ---- the checker's state: variables' states, environments, the checker ----------------------- */
enum var_state {
    V_UNDEF,    /* not assigned on any path */
    V_PARTIAL,  /* assigned on some paths only */
    V_DEF,      /* assigned on every path, with type ty */
    V_CONFLICT, /* assigned on every path of a branch statement, with different types */
    V_LOOP,     /* assigned only inside the loop at `line`: it may have no value at run time; with
                   `typed`, ty is the type its assignments there gave it (a read checks, at run
                   time, that one of them ran) */
    V_ERROR,    /* an error was reported about it: stay quiet */
};

/* Kept small: every branch copies the state of every variable. Types are interned (an id
 * into checker.types, so equal types have equal ids) and a conflict's details live apart. */
typedef struct vstate {
    uint8_t st;     /* enum var_state */
    uint8_t known;  /* V_DEF scalar: value known at compile time */
    uint8_t typed;  /* V_LOOP: ty holds its type */
    uint8_t none;   /* V_DEF, V_LOOP: 0 a value, 1 None (ty may be the None type), 2 None or a value,
                       told apart at run time by the variable's presence flag */
    int32_t line;   /* V_DEF: line of the assignment; V_LOOP: line of the loop */
    int32_t ty;     /* V_DEF, and the first side of V_CONFLICT: a type id */
    int32_t conflict; /* V_CONFLICT: index into checker.conflicts */
    int64_t ival;
    double rval;
} vstate;

typedef struct conflict {
    int32_t ty2;   /* the other side's type id */
    int line2;
    char lab[16], lab2[16];
} conflict;

/* One environment per graph, changed in place. A branch or a loop body is checked in it and
 * then undone: every write goes through env_set, which logs the old state while a branch or
 * body is open, so leaving one costs what it changed, never the number of variables (an
 * `if` among 20,000 variables used to copy all 20,000). */
typedef struct env {
    const vstate *v; /* one per variable of the graph; written only through env_set */
    int live;        /* 0 after break, continue or return: no path reaches this point */
} env;

typedef struct undo {
    int32_t var;
    vstate old;
} undo;

/* The types a loop's body gives a variable that has no value where the loop starts (undefined,
 * or assigned only inside an earlier loop): its type after the loop joins them, as a branch's
 * paths join (check_loop_track). */
typedef struct ltrack {
    uint8_t state;  /* 0: not tracked; 1: tracked, no assignment yet; 2: typed (ty); 3: two types */
    int32_t ty, line, ty2, line2;
    uint8_t none;   /* an assignment of None was seen */
} ltrack;

typedef struct loopctx {
    struct loopctx *up;
    int exits;  /* a reachable break, or return, leaves this loop */
    int breaks; /* a reachable break: the code after the loop is reached */
} loopctx;

/* A graph's name and index, sorted by name (then index) for binary search. */
struct named {
    const char *name;
    int index;
};

typedef struct checker {
    ast_module *m;
    const cfx_context *ctx;
    diag *d;
    int gi;              /* the graph being checked */
    const char **names;  /* its variables */
    int nvars, capvars;
    int32_t *name_hash;  /* open addressing: variable index + 1, 0 for empty */
    int hashcap;         /* a power of two, at least twice nvars */
    cfx_type *types;     /* interned types */
    int32_t ntypes, captypes;
    int32_t *type_hash;  /* open addressing: type id + 1 */
    int32_t typehashcap;
    conflict *conflicts;
    int32_t nconflicts, capconflicts;
    cfx_type *declared;  /* per variable: the declared type of a result */
    uint8_t *is_result;
    loopctx *loop;
    undo *trail;         /* the writes to undo, while `open` branches or loop bodies are checked */
    int ntrail, captrail;
    int open;
    int *stamp, *slot;   /* per variable: a mark for deduplicating lists of variables, and a place */
    int stampgen;
    struct named *gsorted; /* graphs sorted by name, for check_graph_find */
    int *scc;            /* per graph: its strongly connected component in the call graph */
    int64_t *size;       /* per graph: syntax nodes once its calls are inlined (saturating) */
    check_list **lists;  /* the list variables of the graph being checked */
    int nlists, caplists;
    int sizing;          /* the first of two passes over a graph with lists: sizes them */
    ltrack *track;       /* per variable: the loop type being collected (ltrack) */
    int32_t none_ty;     /* the type id of None, which a variable holding only None has */
    int oom;
    check_note dummy;    /* handed out when out of memory, so callers need no NULL checks */
} checker;

/* ---- type helpers ----------------------------------------------------------------------- */
#define TYBUF 64

static inline const char *tystr(const cfx_type *t, char *buf)
{
    return check_type_str(t, buf, TYBUF);
}

static inline int64_t type_count(const cfx_type *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->dims[i];
    return n;
}

static int is_real(int dt) { return dt == CFX_F32 || dt == CFX_F64; }
static int is_int(int dt) { return dt == CFX_I32 || dt == CFX_I64; }
static int is_num(int dt) { return dt != CFX_BOOL; }

static inline cfx_type scalar_type(cfx_dtype dt)
{
    cfx_type t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    return t;
}

static inline cfx_type row_type(const cfx_type *x)
{
    cfx_type t = scalar_type(x->dtype);
    t.rank = x->rank - 1;
    for (int i = 1; i < x->rank; i++)
        t.dims[i - 1] = x->dims[i];
    return t;
}

/* ---- declarations: what is used before the section that defines it --------------------------- */
/* defined in: the environment; the call graph */
/* The note of n, made on first use; a dummy (with C->oom set) when out of memory. */
static check_note *check_note_of(checker *C, ast_node *n);
/* The index of variable `name` in the graph being checked, or -1. */
static int check_var_find(checker *C, const char *name);
/* Adds variable `name` of the graph being checked (once); its index, or -1 when out of memory. */
static int check_var_add(checker *C, const char *name);
/* Forgets the variables of the previous graph. */
static void check_vars_reset(checker *C);
/* The id of type t, interned: equal types have equal ids; 0 (with oom set) when out of memory. */
static int32_t check_type_id(checker *C, const cfx_type *t);
/* Keeps a conflict's details; its index into C->conflicts, or -1 when out of memory. */
static int32_t check_add_conflict(checker *C, const conflict *c);
/* A live environment with every variable undefined (-1 when out of memory); freeing. */
static int check_env_new(checker *C, env *e);
static void check_env_free(env *e);
/* Variable v's state, to be written: the old one is logged when a branch or body is open. */
static vstate *env_set(checker *C, env *e, int v);
/* Undoes the writes logged after `mark`, and sets e->live back to `live`. */
static void env_restore(checker *C, env *e, int mark, int live);
/* A fresh mark for deduplicating a list of variables (C->stamp[v] == the mark: listed). */
static int check_new_stamp(checker *C);
/* Fills C->scc (the call graph's strongly connected components) and C->size (each graph's
 * syntax nodes once its calls are inlined); -1 when out of memory. */
static int check_call_sccs(checker *C);

/* defined in: expressions; conditional expressions, `is` and narrowing; calls; small helpers */
/* Types expression n (its ty and note) in environment e. `want` is the dtype the context
 * asks a literal to take, or -1. 0, or -1 when n is in error. */
static int check_expr(checker *C, env *e, ast_node *n, int want);
static int check_default(checker *C, const ast_param *p);
static int check_is(checker *C, env *e, ast_node *n);
static void narrow(checker *C, env *e, const ast_node *c, int truth);
static int check_narrowed(checker *C, env *e, ast_node *n, int want, const ast_node *cond, int truth);
static int check_name_as(checker *C, env *e, ast_node *n, int optional);
/* A call: a graph of the module (inlined), a built-in op, or a registered kernel. `nwant`
 * is the number of results the context takes (1 in an expression, -1 for a statement, which
 * discards them). */
static int check_call(checker *C, env *e, ast_node *n, int nwant);
/* Reads and checks an index `i` of a tensor of type x (for x[i] and x[i] = E); names the
 * tensor `what` in messages. */
static int check_index(checker *C, env *e, ast_node *at, const cfx_type *x, const char *what, int dim, ast_node *i);
/* How messages name an indexed tensor n: 'its name', or "the tensor". */
static int check_tensor_name(const ast_node *n, char *buf, size_t len);
/* The graph called `name` (the first one, if the parser let a duplicate through), or -1. */
static int check_graph_find(const checker *C, const char *name);
/* A type written in the source (a parameter, a result, zeros(TYPE)) must describe a tensor
 * the program can hold: 0, or -1 with the error reported at line:col. */
static int check_written_type(checker *C, const cfx_type *t, int line, int col);

/* defined in: lists; shapes; conditional expressions; expressions; calls; list capacities; the module */
/* The list that variable node n (an AST_NAME) holds here, typing n; NULL, quietly, when n is
 * not a name or its variable does not hold a list. */
static check_list *list_var(checker *C, env *e, ast_node *n);
/* `xs = [a, b]`, `xs = []`, `xs = list(TYPE, N)`: 1 if n's value makes a list (checked), 0
 * if it is not a list value at all. */
static int check_list_assign(checker *C, env *e, ast_node *n, ast_node *t);
/* xs[i] as a value (target 0) or as a target (1): checks the index, types n as an item. */
static int check_list_item(checker *C, env *e, ast_node *n, check_list *l);
/* A type argument: zeros(f32[3]), cast(x, f64). */
static int type_arg(checker *C, env *e, ast_node *n, ast_node *a, int scalar_only, cfx_type *out);
/* A shape given as a value (x.shape, a slice of it, a tuple of integers known at compile time,
 * two of these joined by +): 1 with its dimensions, 0 when n is no such form (nothing
 * reported), -1 when it is one in error (reported). Lists `[2, 3]` count when `lists`. */
static int shape_value(checker *C, env *e, ast_node *n, int lists, int64_t *dims, int *rank);
static int shape_syntax(const ast_node *n, int lists);
static int shape_type(checker *C, env *e, ast_node *a, int dt, cfx_type *out);
static int check_reshape(checker *C, env *e, ast_node *n, int nwant);
static int check_box(checker *C, env *e, ast_node *n);
static int check_cond_expr(checker *C, env *e, ast_node *n, int want);
static int check_pair(checker *C, env *e, ast_node *at, const char *name, ast_node *a, ast_node *b,
                      cfx_type *shape, int want, const ast_node *cond, int ta, int tb);
static int want_count(checker *C, ast_node *n, int nresults, int nwant);
/* x.shape[i], and `n, m = x.shape` */
static int check_shape_index(checker *C, env *e, ast_node *n);
static int shape_tuple(checker *C, env *e, ast_node *n);
/* xs.append(v), xs.pop() */
static int check_method(checker *C, env *e, ast_node *n, int nwant);
/* After a graph's statements: the capacity of every list whose capacity was not declared. */
static void size_lists(checker *C, const ast_graph *g);
/* The constants of the module as variables of the graph being checked (check_constants). */
static void add_const_vars(checker *C);
static void define_consts(checker *C, env *e);


/* ---- statements: conditions, assignments, the variables a statement assigns ------------------ */
static void check_block(checker *C, env *e, ast_node *blk);

static int is_literal_expr(const ast_node *n);

/* Conditions of if, elif, while: a one-element bool. Returns 1 known true, 0 known false,
 * -1 not known (or in error). */
static int check_cond(checker *C, env *e, ast_node *c, const char *what)
{
    char b1[TYBUF];
    if (check_expr(C, e, c, -1) < 0)
        return -1;
    if (c->ty.dtype != CFX_BOOL || type_count(&c->ty) != 1) {
        diag_error(C->d, c->line, c->col, "%s must be a one-element bool, got %s", what, tystr(&c->ty, b1));
        return -1;
    }
    check_note *k = c->note;
    return k->known ? (k->ival != 0) : -1;
}

static void value_hint(const ast_node *value, const cfx_type *target, char *buf, size_t len);

/* Assigns type t (line `line`) to variable v, as `x = E` does; `value` is E, or NULL for a
 * loop variable or a multi-result call. Returns -1 after a type error. */
static int assign_var(checker *C, env *e, ast_node *at, int v, const cfx_type *t, const ast_node *value)
{
    char b1[TYBUF], b2[TYBUF], hint[320];
    const check_note *val = value ? value->note : NULL;
    vstate *s = env_set(C, e, v);
    int32_t id = check_type_id(C, t);
    const cfx_type *fixed = C->is_result[v] ? &C->declared[v]
                            : s->st == V_DEF || (s->st == V_LOOP && s->typed) ? &C->types[s->ty] : NULL;
    int is_none = id == C->none_ty;
    if (is_none && C->is_result[v]) {
        diag_error(C->d, at->line, at->col, "result '%s' cannot be None: it is %s", C->names[v], tystr(fixed, b1));
        return -1;
    }
    if (fixed && (is_none || fixed->rank == -2)) {
        /* None beside a value keeps the value's type: the variable may hold either */
        if (is_none)
            id = check_type_id(C, fixed);
        fixed = NULL;
    }
    if (fixed && !ast_same_type(fixed, t)) {
        value_hint(value, fixed, hint, sizeof hint);
        if (fixed->dtype == CFX_F32 && t->dtype == CFX_F64 && !C->is_result[v] && s->line > 0)
            /* most often a state started with a real literal (0.0 is an f32) that meets an f64 */
            snprintf(hint, sizeof hint, ": it is f32 from line %d (0.0 is an f32): start it as an f64 there, "
                     "%s = cast(0.0, f64), or write cast(..., f32) to convert", s->line, C->names[v]);
        diag_error(C->d, at->line, at->col, "'%s' has type %s and cannot be assigned %s%s", C->names[v],
                   tystr(fixed, b1), tystr(t, b2), hint);
        if (s->st != V_DEF)
            s->st = V_ERROR;
        return -1;
    }
    s->st = V_DEF;
    s->ty = id;
    s->line = at->line;
    s->typed = 0;
    s->none = (uint8_t)is_none;
    ltrack *tr = C->track ? &C->track[v] : NULL;
    if (tr && is_none) {
        tr->none = 1; /* a None assignment gives no type */
    } else if (tr && tr->state == 1) {
        *tr = (ltrack){2, id, at->line, 0, 0, tr->none};
    } else if (tr && tr->state == 2 && tr->ty != id) {
        tr->state = 3;
        tr->ty2 = id;
        tr->line2 = at->line;
    }
    s->known = val && val->known && t->rank == 0;
    s->ival = s->known ? val->ival : 0;
    s->rval = s->known ? val->rval : 0;
    return 0;
}

/* The dtype a value assigned to v should give a literal. */
static int want_for_var(checker *C, env *e, int v)
{
    if (v < 0)
        return -1;
    if (C->is_result[v])
        return C->declared[v].dtype;
    const vstate *s = &e->v[v];
    return s->st == V_DEF || (s->st == V_LOOP && s->typed) ? (int)C->types[s->ty].dtype : -1;
}

static void mark_error(checker *C, env *e, int v)
{
    if (v >= 0 && e->v[v].st != V_DEF)
        env_set(C, e, v)->st = V_ERROR;
}

/* x[i] = val: x keeps its type; val has the row's type. With val_checked, val was already
 * typed without error (the values of a tuple assignment come before its targets). */
static void check_row_target(checker *C, env *e, ast_node *t, ast_node *val, int val_checked)
{
    char b1[TYBUF], b2[TYBUF], hint[160];
    ast_node *x = t->a;
    if (!t->b) {
        /* x[i, j] = v, x[a:b] = v, x[:, j] = v: v has the part's type */
        if (check_box(C, e, t) < 0) {
            if (!val_checked)
                check_expr(C, e, val, -1);
            return;
        }
        check_note_of(C, t)->known = 0;
        if (!val_checked && check_expr(C, e, val, t->ty.dtype) < 0)
            return;
        if (!ast_same_type(&val->ty, &t->ty)) {
            value_hint(val, &t->ty, hint, sizeof hint);
            diag_error(C->d, val->line, val->col, "this part of '%s' is %s and cannot be assigned %s%s",
                       x->kind == AST_NAME ? x->name : "the tensor", tystr(&t->ty, b1), tystr(&val->ty, b2), hint);
        }
        return;
    }
    check_list *l = list_var(C, e, x);
    if (l) {
        if (check_list_item(C, e, t, l) < 0) {
            if (!val_checked)
                check_expr(C, e, val, -1);
            return;
        }
        if (!val_checked && check_expr(C, e, val, t->ty.dtype) < 0)
            return;
        if (!ast_same_type(&val->ty, &t->ty)) {
            value_hint(val, &t->ty, hint, sizeof hint);
            diag_error(C->d, val->line, val->col, "an item of list '%s' is %s and cannot be assigned %s%s", l->name,
                       tystr(&t->ty, b1), tystr(&val->ty, b2), hint);
        }
        return;
    }
    int rx = check_expr(C, e, x, -1);
    char what[80];
    int dim = check_tensor_name(x, what, sizeof what);
    if (rx < 0) {
        check_expr(C, e, t->b, CFX_I32);
        if (!val_checked)
            check_expr(C, e, val, -1);
        return;
    }
    int ri = check_index(C, e, t, &x->ty, what, dim, t->b);
    if (ri < 0) {
        if (x->ty.rank >= 1 && !val_checked)
            check_expr(C, e, val, x->ty.dtype);
        return;
    }
    cfx_type row = row_type(&x->ty);
    t->ty = row;
    check_note_of(C, t)->known = 0;
    if (!val_checked && check_expr(C, e, val, row.dtype) < 0)
        return;
    if (!ast_same_type(&val->ty, &row)) {
        value_hint(val, &row, hint, sizeof hint);
        diag_error(C->d, val->line, val->col, "a row of %s is %s and cannot be assigned %s%s", what,
                   tystr(&row, b1), tystr(&val->ty, b2), hint);
        return;
    }
    /* x is a tensor (rank >= 1), so it had no known value to forget */
}

static int is_result(const checker *C, const char *name)
{
    const ast_graph *g = &C->m->graphs[C->gi];
    for (int i = 0; i < g->nresults; i++)
        if (strcmp(g->results[i].name, name) == 0)
            return 1;
    return 0;
}

/* `a, x[i], ... = E1, E2, ...`: every value first, as Python evaluates them (a literal takes
 * the dtype of its target), then the targets from left to right, so `a, b = b, a` swaps and
 * `i, x[i] = 1, v` writes row 1. */
static void check_tuple_assign(checker *C, env *e, ast_node *n)
{
    ast_node *tup = n->a;
    int nv = tup->nlist, count_ok = nv == n->nlist;
    if (!count_ok && n->nlist == 1 && n->list[0]->kind == AST_NAME)
        diag_error(C->d, tup->line, tup->col, "'%s' is a %s and holds one value, not a tuple of %d", n->list[0]->name,
                   is_result(C, n->list[0]->name) ? "result" : "parameter", nv);
    else if (!count_ok && n->nlist == 1)
        diag_error(C->d, tup->line, tup->col, "%d values for one target (write 'a, b = x, y')", nv);
    else if (!count_ok)
        diag_error(C->d, tup->line, tup->col, "%d targets but %d values", n->nlist, nv);
    uint8_t *ok = calloc((size_t)nv + 1, 1);
    if (!ok) {
        C->oom = 1;
        return;
    }
    for (int i = 0; i < nv; i++) {
        int want = -1;
        if (count_ok) {
            ast_node *t = n->list[i];
            want = want_for_var(C, e, check_var_find(C, t->kind == AST_INDEX ? t->a->name : t->name));
        }
        ok[i] = check_expr(C, e, tup->list[i], want) == 0;
    }
    for (int i = 0; i < n->nlist; i++) {
        ast_node *t = n->list[i];
        if (!count_ok || !ok[i]) {
            if (t->kind == AST_NAME)
                mark_error(C, e, check_var_find(C, t->name));
            continue;
        }
        if (t->kind == AST_INDEX) {
            check_row_target(C, e, t, tup->list[i], 1);
            continue;
        }
        int v = check_var_find(C, t->name);
        check_note_of(C, t)->known = 0;
        t->ty = tup->list[i]->ty;
        if (assign_var(C, e, t, v, &t->ty, tup->list[i]) == 0)
            t->ty = C->types[e->v[v].ty];
    }
    free(ok);
}

static void check_assign(checker *C, env *e, ast_node *n)
{
    if (n->a && n->a->kind == AST_ATTR && n->nlist > 1 && shape_tuple(C, e, n) < 0) {
        for (int i = 0; i < n->nlist; i++)
            if (n->list[i]->kind == AST_NAME)
                mark_error(C, e, check_var_find(C, n->list[i]->name));
        return;
    }
    if (n->a && n->a->kind == AST_TUPLE) {
        check_tuple_assign(C, e, n);
        return;
    }
    if (n->nlist > 1) {
        /* a, b = f(...) */
        int ok = 1;
        for (int i = 0; i < n->nlist; i++)
            if (n->list[i]->kind != AST_NAME) {
                diag_error(C->d, n->list[i]->line, n->list[i]->col,
                           "each target of a multiple assignment must be a name");
                ok = 0;
            }
        if (!n->a || n->a->kind != AST_CALL) {
            diag_error(C->d, n->line, n->col, "several targets need as many values, as in 'a, b = b, a', a tuple, "
                       "as in 'a, b = t', or a call with several results, as in 'a, b = f(x)'");
            ok = 0;
        } else if (check_call(C, e, n->a, n->nlist) < 0) {
            ok = 0;
        }
        for (int i = 0; i < n->nlist; i++) {
            ast_node *t = n->list[i];
            if (t->kind != AST_NAME)
                continue;
            int v = check_var_find(C, t->name);
            if (!ok) {
                mark_error(C, e, v);
                continue;
            }
            check_note_of(C, t)->known = 0;
            t->ty = *check_result_type(C->m, n->a, i);
            assign_var(C, e, t, v, &t->ty, NULL);
        }
        return;
    }
    ast_node *t = n->nlist == 1 ? n->list[0] : NULL;
    if (!t) {
        diag_error(C->d, n->line, n->col, "an assignment needs a target");
        return;
    }
    if (t->kind == AST_NAME && !(n->flags & AST_F_AUG) && check_list_assign(C, e, n, t))
        return;
    if (t->kind == AST_NAME && n->a->kind == AST_NONE && !(n->flags & AST_F_AUG)) {
        /* x = None: x holds None, with the type of its values, if it has any */
        int v = check_var_find(C, t->name);
        cfx_type none;
        memset(&none, 0, sizeof none);
        none.rank = -2;
        check_note_of(C, n->a)->known = 0;
        n->a->ty = none;
        check_note_of(C, t)->known = 0;
        if (assign_var(C, e, t, v, &none, n->a) == 0)
            t->ty = C->types[e->v[v].ty];
        else
            mark_error(C, e, v);
        return;
    }
    if (t->kind == AST_NAME) {
        int v = check_var_find(C, t->name);
        if (check_expr(C, e, n->a, want_for_var(C, e, v)) < 0) {
            mark_error(C, e, v);
            return;
        }
        check_note_of(C, t)->known = 0;
        t->ty = n->a->ty;
        if (assign_var(C, e, t, v, &n->a->ty, n->a) == 0)
            t->ty = C->types[e->v[v].ty];
        return;
    }
    if (t->kind == AST_INDEX && t->a && t->a->kind == AST_NAME) {
        check_row_target(C, e, t, n->a, 0);
        return;
    }
    diag_error(C->d, t->line, t->col, "only a name or a row x[i] can be assigned");
}

/* A list of variables, each once. */
typedef struct varlist {
    int *v;
    int n, cap;
} varlist;

typedef struct mark_ctx {
    checker *C;
    varlist *list;
    int stamp;
} mark_ctx;

static int mark_assigned(const char *name, void *arg)
{
    mark_ctx *a = (mark_ctx *)arg;
    checker *C = a->C;
    int v = check_var_find(C, name);
    if (v < 0 || C->stamp[v] == a->stamp)
        return 0;
    C->stamp[v] = a->stamp;
    varlist *l = a->list;
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 8;
        int *grown = realloc(l->v, (size_t)cap * sizeof *grown);
        if (!grown) {
            C->oom = 1;
            return 1;
        }
        l->v = grown;
        l->cap = cap;
    }
    l->v[l->n++] = v;
    return 0;
}

/* Lists every variable that a statement assigns (targets and loop variables), each once;
 * the list is empty when out of memory (C->oom). Free l->v. */
static void collect_assigned(checker *C, const ast_node *n, varlist *l)
{
    memset(l, 0, sizeof *l);
    mark_ctx a = {C, l, check_new_stamp(C)};
    ast_each_assigned(n, mark_assigned, &a);
    if (C->oom)
        l->n = 0;
}

/* ---- branches: the paths out of an if or a switch, and their join ---------------------------- */

/* A path's change: a variable and its state where the path ends. */
typedef struct change {
    int32_t var;
    vstate s;
} change;

/* The paths of an if or a switch, checked one after the other in the statement's own
 * environment: each path is undone when it ends, and keeps only what it changed. */
typedef struct arm_set {
    char (*labels)[16];
    uint8_t *live;  /* per path: whether it reaches its end */
    int *first;     /* per path: its changes are changes[first[i] .. first[i + 1]) */
    change *changes;
    int nchanges, capchanges;
    int cap, n;
    int live0;       /* e->live before the statement */
    int mark;        /* the trail where the path being checked began */
    int in_path;     /* a path was begun and not ended */
} arm_set;

/* Room for `cap` paths out of e; -1 (and C->oom) when out of memory. arms_close ends it
 * either way. */
static int arms_open(checker *C, arm_set *a, int cap, env *e)
{
    memset(a, 0, sizeof *a);
    a->cap = cap;
    a->labels = calloc((size_t)cap, sizeof *a->labels);
    a->live = calloc((size_t)cap, 1);
    a->first = calloc((size_t)cap + 1, sizeof *a->first);
    a->live0 = e->live;
    C->open++;
    if (!a->labels || !a->live || !a->first) {
        C->oom = 1;
        return -1;
    }
    return 0;
}

/* Begins a path that starts from e as it was before the statement, named `label`: the
 * caller checks it in e and calls arms_end. NULL when out of memory. */
static env *arms_add(checker *C, arm_set *a, env *e, const char *label)
{
    if (C->oom || a->n >= a->cap)
        return NULL;
    snprintf(a->labels[a->n], sizeof a->labels[a->n], "%s", label);
    a->first[a->n] = a->nchanges;
    a->n++;
    a->in_path = 1;
    a->mark = C->ntrail; /* what a condition before the path wrote stays */
    return e;
}

/* Ends the path begun last: keeps each variable it changed with its final state, and
 * whether it is live, then undoes it. */
static void arms_end(checker *C, arm_set *a, env *e)
{
    if (!a->in_path)
        return;
    a->in_path = 0;
    int i = a->n - 1, stamp = check_new_stamp(C);
    a->live[i] = (uint8_t)e->live;
    for (int k = a->mark; k < C->ntrail && !C->oom; k++) {
        int v = C->trail[k].var;
        if (C->stamp[v] == stamp)
            continue;
        C->stamp[v] = stamp;
        if (a->nchanges == a->capchanges) {
            int cap = a->capchanges ? a->capchanges * 2 : 16;
            change *grown = realloc(a->changes, (size_t)cap * sizeof *grown);
            if (!grown) {
                C->oom = 1;
                break;
            }
            a->changes = grown;
            a->capchanges = cap;
        }
        a->changes[a->nchanges++] = (change){v, e->v[v]};
    }
    a->first[a->n] = a->nchanges;
    env_restore(C, e, a->mark, a->live0);
}

static void arms_close(checker *C, arm_set *a, env *e)
{
    arms_end(C, a, e);
    C->open--;
    free(a->labels);
    free(a->live);
    free(a->first);
    free(a->changes);
}

static int same_value(const vstate *x, const vstate *y)
{
    return x->ival == y->ival && memcmp(&x->rval, &y->rval, sizeof(double)) == 0;
}

/* The first live path at or after i that did not change the variable whose changes (in
 * path order) are chg[0 .. nchg) by path number `arm`; -1 when there is none.
 * next_live[i] is the first live path at or after i (-1 for none). */
static int unchanged_from(const int *next_live, int npaths, const int *arm, int nchg, int i)
{
    int k = 0;
    for (i = i < npaths ? next_live[i] : -1; i >= 0; i = i + 1 < npaths ? next_live[i + 1] : -1) {
        while (k < nchg && arm[k] < i)
            k++;
        if (k == nchg || arm[k] != i)
            return i;
    }
    return -1;
}

/* Joins variable v: `p` is its state before the statement (so in every live path that did
 * not change it), and its changes in live paths are (arm[k], s[k]), in path order. The
 * outcome is that of comparing the paths one by one in order (first definition, first other
 * type, first loop or conflict), worked out from the changes alone. */
static void join_var(checker *C, env *e, int v, const arm_set *a, const int *next_live, int nlive,
                     const int *arm, const vstate *const *s, int nchg)
{
    const vstate p = e->v[v];
    int unchanged = nlive - nchg;
    int u1 = unchanged > 0 ? unchanged_from(next_live, a->n, arm, nchg, 0) : -1;
    /* the first path with each state, among the changes and the unchanged paths */
    int first_arm = -1, loop_arm = -1, conflict_arm = -1, ndef = 0, any_err = 0, partial = 0;
    const vstate *first = NULL, *loop = NULL, *confl = NULL;
    for (int k = 0; k < nchg; k++) {
        int st = s[k]->st;
        if (st == V_DEF && !first) {
            first = s[k];
            first_arm = arm[k];
        }
        if (st == V_LOOP && !loop) {
            loop = s[k];
            loop_arm = arm[k];
        }
        if (st == V_CONFLICT && !confl) {
            confl = s[k];
            conflict_arm = arm[k];
        }
        ndef += st == V_DEF;
        any_err |= st == V_ERROR;
        partial |= st == V_PARTIAL;
    }
    if (u1 >= 0) {
        if (p.st == V_DEF && (!first || u1 < first_arm)) {
            first = &p;
            first_arm = u1;
        }
        if (p.st == V_LOOP && (!loop || u1 < loop_arm))
            loop = &p;
        if (p.st == V_CONFLICT && (!confl || u1 < conflict_arm))
            confl = &p;
        ndef += p.st == V_DEF ? unchanged : 0;
        any_err |= p.st == V_ERROR;
        partial |= p.st == V_PARTIAL;
    }
    /* None: a path that gives v only None takes the type of the others; v holds None on every
     * path (none 1), on none (0), or on some (2, told apart at run time) */
    int nones = 0, values = 0;
    for (int k = 0; k < nchg; k++)
        if (s[k]->st == V_DEF || (s[k]->st == V_LOOP && s[k]->typed)) {
            nones += s[k]->none != 0;
            values += s[k]->none != 1;
        }
    if (unchanged > 0 && (p.st == V_DEF || (p.st == V_LOOP && p.typed))) {
        nones += p.none != 0;
        values += p.none != 1;
    }
    uint8_t none = nones == 0 ? 0 : values == 0 ? 1 : 2;
    if (first && first->ty == C->none_ty) {
        /* the first path with a type, if any, gives it */
        for (int k = 0; k < nchg; k++)
            if (s[k]->st == V_DEF && s[k]->ty != C->none_ty && (first->ty == C->none_ty || arm[k] < first_arm)) {
                first = s[k];
                first_arm = arm[k];
            }
        if (unchanged > 0 && p.st == V_DEF && p.ty != C->none_ty && (first->ty == C->none_ty || u1 < first_arm)) {
            first = &p;
            first_arm = u1;
        }
    }
    /* the first path after first_arm defining v with another type */
    int other = -1;
    const vstate *second = NULL;
    if (first) {
        for (int k = 0; k < nchg && other < 0; k++)
            if (arm[k] > first_arm && s[k]->st == V_DEF && s[k]->ty != first->ty && s[k]->ty != C->none_ty) {
                other = arm[k];
                second = s[k];
            }
        if (p.st == V_DEF && p.ty != first->ty && p.ty != C->none_ty && unchanged > 0) {
            int u = unchanged_from(next_live, a->n, arm, nchg, first_arm + 1);
            if (u >= 0 && (other < 0 || u < other)) {
                other = u;
                second = &p;
            }
        }
    }
    vstate o = p;
    if (any_err) {
        o.st = V_ERROR;
    } else if (confl) {
        o = *confl;
    } else if (other >= 0) {
        conflict c;
        memset(&c, 0, sizeof c);
        c.ty2 = second->ty;
        c.line2 = second->line;
        snprintf(c.lab, sizeof c.lab, "%s", a->labels[first_arm]);
        snprintf(c.lab2, sizeof c.lab2, "%s", a->labels[other]);
        int32_t ci = check_add_conflict(C, &c);
        memset(&o, 0, sizeof o);
        o.st = ci >= 0 ? V_CONFLICT : V_ERROR;
        o.ty = first->ty;
        o.line = first->line;
        o.conflict = ci;
    } else if (ndef == nlive) {
        /* one type on every path: known only if known, and the same, on every path */
        int known = first->known;
        for (int k = 0; k < nchg; k++)
            known &= s[k]->known && same_value(s[k], first);
        if (unchanged > 0)
            known &= p.known && same_value(&p, first);
        o = *first;
        o.known = (uint8_t)(known && !none);
        o.none = none;
    } else if (loop) {
        /* may have no value: its type is the one every path that gives it one gives it */
        const vstate *typed = first ? first : loop->typed ? loop : NULL;
        int typed_arm = first ? first_arm : loop_arm;
        const vstate *clash = NULL;
        int clash_arm = -1;
        for (int k = 0; k < nchg && typed && !clash; k++)
            if (s[k]->st == V_LOOP && s[k]->typed && s[k]->ty != typed->ty)
                clash = s[k], clash_arm = arm[k];
        if (!clash && typed && u1 >= 0 && p.st == V_LOOP && p.typed && p.ty != typed->ty)
            clash = &p, clash_arm = u1;
        memset(&o, 0, sizeof o);
        if (clash) {
            conflict c;
            memset(&c, 0, sizeof c);
            c.ty2 = clash->ty;
            c.line2 = clash->line;
            snprintf(c.lab, sizeof c.lab, "%s", a->labels[typed_arm]);
            snprintf(c.lab2, sizeof c.lab2, "%s", a->labels[clash_arm]);
            int32_t ci = check_add_conflict(C, &c);
            o.st = ci >= 0 ? V_CONFLICT : V_ERROR;
            o.ty = typed->ty;
            o.line = typed->line;
            o.conflict = ci;
        } else {
            o.st = V_LOOP;
            o.line = loop->line;
            o.typed = typed != NULL;
            o.ty = typed ? typed->ty : 0;
            o.none = none;
        }
    } else {
        memset(&o, 0, sizeof o);
        o.st = ndef > 0 || partial ? V_PARTIAL : V_UNDEF;
    }
    *env_set(C, e, v) = o;
}

/* Joins the paths of a branch statement into e, which holds the state before it. Only the
 * variables some live path changed are looked at: any other has its state on every path. */
static void join(checker *C, env *e, const arm_set *a)
{
    int nlive = 0;
    for (int i = 0; i < a->n; i++)
        nlive += a->live[i];
    e->live = nlive > 0;
    if (!nlive || C->oom)
        return;
    /* the changes of live paths, grouped by variable (in path order within a group) */
    int *next_live = malloc(((size_t)a->n + 1) * sizeof *next_live);
    int *vars = malloc(((size_t)a->nchanges + 1) * sizeof *vars);
    int *count = calloc((size_t)a->nchanges + 1, sizeof *count);
    int *start = malloc(((size_t)a->nchanges + 2) * sizeof *start);
    int *arm = malloc(((size_t)a->nchanges + 1) * sizeof *arm);
    const vstate **st = malloc(((size_t)a->nchanges + 1) * sizeof *st);
    if (!next_live || !vars || !count || !start || !arm || !st) {
        C->oom = 1;
        goto done;
    }
    for (int i = a->n - 1, next = -1; i >= 0; i--)
        next_live[i] = next = a->live[i] ? i : next;
    int stamp = check_new_stamp(C), nvars = 0;
    for (int i = 0; i < a->n; i++) {
        if (!a->live[i])
            continue;
        for (int k = a->first[i]; k < a->first[i + 1]; k++) {
            int v = a->changes[k].var;
            if (C->stamp[v] != stamp) {
                C->stamp[v] = stamp;
                C->slot[v] = nvars;
                vars[nvars++] = v;
            }
            count[C->slot[v]]++;
        }
    }
    start[0] = 0;
    for (int u = 0; u < nvars; u++)
        start[u + 1] = start[u] + count[u];
    for (int u = 0; u < nvars; u++)
        count[u] = start[u];
    for (int i = 0; i < a->n; i++) {
        if (!a->live[i])
            continue;
        for (int k = a->first[i]; k < a->first[i + 1]; k++) {
            int at = count[C->slot[a->changes[k].var]]++;
            arm[at] = i;
            st[at] = &a->changes[k].s;
        }
    }
    for (int u = 0; u < nvars && !C->oom; u++)
        join_var(C, e, vars[u], a, next_live, nlive, arm + start[u], st + start[u], start[u + 1] - start[u]);
done:
    free(next_live);
    free(vars);
    free(count);
    free(start);
    free(arm);
    free(st);
}

/* ---- loops: while, for over a range, for over tensors and lists ------------------------------ */

/* The environment after a loop: what held before it, with every variable the body assigns
 * unknown, or, when the loop defined it first, marked as belonging to the loop: a read after the
 * loop is checked at run time, with the type the body's assignments gave it (`types`, from
 * loop_body, per variable of `assigned`), or two types, a join's conflict. */
static void loop_none(checker *C, env *e, const varlist *assigned, const ast_node *loop);

static void after_loop(checker *C, env *e, const varlist *assigned, const ltrack *types, int line,
                       const ast_node *loop)
{
    loop_none(C, e, assigned, loop);
    for (int k = 0; k < assigned->n; k++) {
        int v = assigned->v[k];
        const vstate *s = &e->v[v];
        if (s->st == V_DEF) {
            env_set(C, e, v)->known = 0;
        } else if (s->st != V_ERROR && s->st != V_PARTIAL) {
            const ltrack *t = types ? &types[k] : NULL;
            vstate *w = env_set(C, e, v);
            memset(w, 0, sizeof *w);
            w->st = V_LOOP;
            w->line = line;
            if (t && t->state == 2) {
                w->typed = 1;
                w->ty = t->ty;
                w->none = t->none ? 2 : 0;
            } else if (t && t->state == 1 && t->none) {
                w->typed = 1; /* only None was assigned */
                w->ty = C->none_ty;
                w->none = 1;
            } else if (t && t->state == 3) {
                conflict c;
                memset(&c, 0, sizeof c);
                c.ty2 = t->ty2;
                c.line2 = t->line2;
                snprintf(c.lab, sizeof c.lab, "loop");
                snprintf(c.lab2, sizeof c.lab2, "loop");
                int32_t ci = check_add_conflict(C, &c);
                w->st = ci >= 0 ? V_CONFLICT : V_ERROR;
                w->ty = t->ty;
                w->line = t->line;
                w->conflict = ci;
            }
        }
    }
}

/* Opens a loop body (or a while's head) in e: the assigned variables become unknown.
 * Returns the mark for loop_close, which undoes the body. */
/* 1 if statement n assigns None to `name` (to any variable, with name NULL) anywhere inside. */
static int assigns_none(const ast_node *n, const char *name)
{
    if (!n)
        return 0;
    if (n->kind == AST_ASSIGN)
        return n->nlist == 1 && n->a && n->a->kind == AST_NONE && n->list[0]->kind == AST_NAME &&
               (!name || strcmp(n->list[0]->name, name) == 0);
    const ast_node *kids[4] = {n->a, n->b, n->c, n->d};
    if (n->kind == AST_IF || n->kind == AST_SWITCH || n->kind == AST_BLOCK || n->kind == AST_ARM ||
        n->kind == AST_CASE || n->kind == AST_WHILE || n->kind == AST_FOR_RANGE || n->kind == AST_FOR_EACH) {
        for (int i = 0; i < 4; i++)
            if (kids[i] && kids[i]->kind >= AST_ASSIGN && assigns_none(kids[i], name))
                return 1;
        for (int i = 0; i < n->nlist; i++)
            if (assigns_none(n->list[i], name))
                return 1;
    }
    return 0;
}

/* In a loop (statement `loop`), a variable the body assigns may hold, at the head and after the
 * loop, what it held before or what the body gave it: None on one and a value on the other
 * makes it either (none 2). */
static void loop_none(checker *C, env *e, const varlist *assigned, const ast_node *loop)
{
    if (!loop || !assigns_none(loop, NULL)) {
        for (int k = 0; k < assigned->n; k++) {
            const vstate *s = &e->v[assigned->v[k]];
            if (s->st == V_DEF && s->none == 1)
                env_set(C, e, assigned->v[k])->none = 2;
        }
        return;
    }
    for (int k = 0; k < assigned->n; k++) {
        int v = assigned->v[k];
        const vstate *s = &e->v[v];
        if (s->st == V_DEF && (s->none != 0 || assigns_none(loop, C->names[v])))
            env_set(C, e, v)->none = 2;
    }
}

static int loop_open(checker *C, env *e, const varlist *assigned, const ast_node *loop)
{
    int mark = C->ntrail;
    C->open++;
    for (int k = 0; k < assigned->n; k++)
        env_set(C, e, assigned->v[k])->known = 0;
    loop_none(C, e, assigned, loop);
    return mark;
}

static void loop_close(checker *C, env *e, int mark, int live)
{
    env_restore(C, e, mark, live);
    C->open--;
}

/* Checks a loop body in e, with the assigned variables unknown, and undoes it: what the
 * body does reaches the code after the loop only through after_loop. The loop variables
 * loopvars[0 .. nloopvars) take their types (a type NULL: in error, quiet). */
/* A variable that holds only None where a loop starts and that the body assigns a value may be
 * read at the loop's head with that value (`best = None; for v in x { if best is None or v >
 * best { best = v } }`): its type comes from the body, which a quiet first pass checks for it;
 * the variable then holds None or a value of that type (none 2). */
static void loop_none_types(checker *C, env *e, ast_node *body, const varlist *assigned, const int *loopvars,
                            const cfx_type *const *loopvar_ty, int nloopvars, ast_node *at)
{
    int need = 0;
    for (int k = 0; k < assigned->n; k++) {
        const vstate *s = &e->v[assigned->v[k]];
        need |= (s->st == V_DEF || (s->st == V_LOOP && s->typed)) && s->ty == C->none_ty;
    }
    ltrack *saved = need ? calloc((size_t)assigned->n + 1, sizeof *saved) : NULL;
    if (!need || !saved) {
        C->oom |= need;
        return;
    }
    for (int k = 0; k < assigned->n; k++) {
        saved[k] = C->track[assigned->v[k]];
        C->track[assigned->v[k]] = (ltrack){1, 0, 0, 0, 0, 1};
    }
    diag quiet, *d = C->d;
    diag_init(&quiet, d->file, d->src, d->len);
    C->d = &quiet;
    int live = e->live;
    int mark = loop_open(C, e, assigned, body);
    for (int i = 0; i < nloopvars; i++)
        if (loopvars[i] >= 0 && loopvar_ty[i])
            assign_var(C, e, at, loopvars[i], loopvar_ty[i], NULL);
    loopctx lc = {C->loop, 0, 0};
    C->loop = &lc;
    check_block(C, e, body);
    C->loop = lc.up;
    loop_close(C, e, mark, live);
    C->d = d;
    diag_free(&quiet);
    for (int k = 0; k < assigned->n; k++) {
        int v = assigned->v[k];
        ltrack t = C->track[v];
        C->track[v] = saved[k];
        const vstate *s = &e->v[v];
        if ((s->st == V_DEF || (s->st == V_LOOP && s->typed)) && s->ty == C->none_ty && t.state == 2) {
            vstate *w = env_set(C, e, v);
            w->ty = t.ty;
            w->none = 2;
        }
    }
    free(saved);
}

static void loop_body(checker *C, env *e, ast_node *body, const varlist *assigned, const int *loopvars,
                      const cfx_type *const *loopvar_ty, int nloopvars, ast_node *at, int *exits, int *breaks,
                      ltrack *types)
{
    int live = e->live;
    loop_none_types(C, e, body, assigned, loopvars, loopvar_ty, nloopvars, at);
    /* collect the types the body gives each variable without a value here; an enclosing loop's
     * collection of the same variable waits, then takes them in too */
    ltrack *saved = calloc((size_t)assigned->n + 1, sizeof *saved);
    uint8_t *started = calloc((size_t)assigned->n + 1, 1);
    if (!saved || !started || !C->track) {
        C->oom = 1;
        free(saved);
        free(started);
        return;
    }
    for (int k = 0; k < assigned->n; k++) {
        int v = assigned->v[k];
        const vstate *s = &e->v[v];
        types[k].state = 0;
        if (s->st != V_UNDEF && s->st != V_LOOP)
            continue; /* it has a value here: an enclosing loop's collection, if any, goes on */
        started[k] = 1;
        saved[k] = C->track[v];
        C->track[v] = s->st == V_LOOP && s->typed ? (ltrack){2, s->ty, s->line, 0, 0, s->none != 0}
                                                  : (ltrack){1, 0, 0, 0, 0, 0};
    }
    int mark = loop_open(C, e, assigned, body);
    for (int i = 0; i < nloopvars; i++) {
        int lv = loopvars[i];
        if (lv >= 0 && (!loopvar_ty[i] || assign_var(C, e, at, lv, loopvar_ty[i], NULL) < 0))
            env_set(C, e, lv)->st = V_ERROR;
    }
    loopctx lc = {C->loop, 0, 0};
    C->loop = &lc;
    check_block(C, e, body);
    C->loop = lc.up;
    *exits = lc.exits;
    *breaks = lc.breaks;
    loop_close(C, e, mark, live);
    for (int k = 0; k < assigned->n; k++) {
        if (!started[k])
            continue;
        int v = assigned->v[k];
        types[k] = C->track[v];
        ltrack inner = C->track[v], *outer = &C->track[v];
        *outer = saved[k];
        /* the enclosing loop's body assigned what this loop's did */
        outer->none |= inner.none;
        if (outer->state == 1 && inner.state >= 2)
            *outer = inner;
        else if (outer->state == 2 && inner.state >= 2 && (inner.ty != outer->ty || inner.state == 3))
            *outer = (ltrack){3, outer->ty, outer->line, inner.ty != outer->ty ? inner.ty : inner.ty2,
                              inner.ty != outer->ty ? inner.line : inner.line2, outer->none};
    }
    free(saved);
    free(started);
}

static void check_while(checker *C, env *e, ast_node *n)
{
    varlist set;
    collect_assigned(C, n, &set);
    if (C->oom)
        goto done;
    int live = e->live;
    int mark = loop_open(C, e, &set, n);
    int c = check_cond(C, e, n->a, "condition");
    loop_close(C, e, mark, live);
    if (c == 0)
        goto done; /* while false: the body is dropped */
    int exits = 0, breaks = 0;
    ltrack *types = calloc((size_t)set.n + 1, sizeof *types);
    if (!types) {
        C->oom = 1;
        goto done;
    }
    loop_body(C, e, n->b, &set, NULL, NULL, 0, n, &exits, &breaks, types);
    if (c == 1 && !exits)
        diag_error(C->d, n->line, n->col, "infinite loop: 'while true' has no break");
    after_loop(C, e, &set, types, n->line, n);
    free(types);
    if (c == 1 && !breaks)
        e->live = 0; /* left only by return: nothing after the loop is reached */
done:
    free(set.v);
}

static void check_for_range(checker *C, env *e, ast_node *n)
{
    char b1[TYBUF];
    ast_node *args[3] = {n->a, n->b, n->c};
    int bad = 0, dt = CFX_I32, ok[3] = {1, 1, 1};
    /* the arguments that are not literals decide the dtype: i64 if one is (an i32 beside it is
     * converted), else i32; the literals then take it */
    for (int i = 0; i < 3; i++) {
        if (!args[i] || is_literal_expr(args[i]))
            continue;
        if (check_expr(C, e, args[i], CFX_I32) < 0)
            bad = 1, ok[i] = 0;
        else if (args[i]->ty.dtype == CFX_I64 && args[i]->ty.rank == 0)
            dt = CFX_I64;
    }
    for (int i = 0; i < 3; i++) {
        if (!args[i] || !ok[i])
            continue;
        if (is_literal_expr(args[i]) && check_expr(C, e, args[i], dt) < 0) {
            bad = 1;
            continue;
        }
        /* an i32 beside an i64 promotes to it, as in any arithmetic */
        if (!is_int(args[i]->ty.dtype) || args[i]->ty.rank != 0) {
            diag_error(C->d, args[i]->line, args[i]->col,
                       "the arguments of 'range' must be i32 or i64 scalars, got %s", tystr(&args[i]->ty, b1));
            bad = 1;
        }
    }
    n->ty = scalar_type((cfx_dtype)dt); /* the loop variable's type */
    if (!bad && n->c && ((check_note *)n->c->note)->known && ((check_note *)n->c->note)->ival == 0) {
        diag_error(C->d, n->c->line, n->c->col, "the step of 'range' must not be 0");
        bad = 1;
    }
    check_note_of(C, n)->assigns_loop_var = ast_assigns(n->d, n->name);
    varlist set;
    collect_assigned(C, n, &set);
    if (!C->oom) {
        int v = check_var_find(C, n->name);
        cfx_type ity = n->ty;
        int exits = 0, breaks = 0;
        const cfx_type *tys[1] = {&ity};
        ltrack *types = calloc((size_t)set.n + 1, sizeof *types);
        if (!types)
            C->oom = 1;
        else
            loop_body(C, e, n->d, &set, &v, tys, 1, n, &exits, &breaks, types);
        after_loop(C, e, &set, types, n->line, n);
        free(types);
    }
    free(set.v);
}

/* `for v in [a, b, ...]`: the items, of one type (a literal takes the first item's dtype, as
 * in a list's literal), become the rows of one tensor [n, item...], computed before the loop
 * starts. 0, or -1 after an error. */
static int check_literal_rows(checker *C, env *e, ast_node *x)
{
    char b1[TYBUF], b2[TYBUF];
    int ok = 1;
    if (x->nlist == 0) {
        diag_error(C->d, x->line, x->col, "'for' over [] has no item to give its variable a type");
        return -1;
    }
    for (int i = 0; i < x->nlist; i++) {
        ast_node *it = x->list[i];
        int want = i > 0 && x->list[0]->note && ok ? (int)x->list[0]->ty.dtype : -1;
        if (check_expr(C, e, it, want) < 0) {
            ok = 0;
        } else if (i == 0 && it->ty.rank >= CFX_MAX_RANK) {
            diag_error(C->d, it->line, it->col, "an item of a list has at most %d dimensions, got %s",
                       CFX_MAX_RANK - 1, tystr(&it->ty, b1));
            ok = 0;
        } else if (ok && i > 0 && !ast_same_type(&x->list[0]->ty, &it->ty)) {
            diag_error(C->d, it->line, it->col, "this list holds %s items and cannot take %s",
                       tystr(&x->list[0]->ty, b1), tystr(&it->ty, b2));
            ok = 0;
        }
    }
    if (!ok)
        return -1;
    const cfx_type *t = &x->list[0]->ty;
    if (type_count(t) > CFX_MAX_ELEMENTS / x->nlist) {
        diag_error(C->d, x->line, x->col, "this list of %d items of %s has more than %" PRId64 " elements",
                   x->nlist, tystr(t, b1), (int64_t)CFX_MAX_ELEMENTS);
        return -1;
    }
    cfx_type rows = scalar_type(t->dtype);
    rows.rank = t->rank + 1;
    rows.dims[0] = x->nlist;
    for (int d = 0; d < t->rank; d++)
        rows.dims[d + 1] = t->dims[d];
    x->ty = rows;
    check_note_of(C, x)->known = 0;
    return 0;
}

/* One iterable of a for loop: a tensor, whose rows it takes, a list, whose items, or a list's
 * literal, whose items; the type of one in *item. 0, or -1 after an error. */
static int check_iterable(checker *C, env *e, ast_node *x, cfx_type *item)
{
    char b1[TYBUF];
    if (x->kind == AST_LIST) {
        if (check_literal_rows(C, e, x) < 0)
            return -1;
        *item = row_type(&x->ty);
        return 0;
    }
    check_list *l = list_var(C, e, x);
    if (l) {
        if (!l->typed) {
            diag_error(C->d, x->line, x->col, "list '%s' has no items yet, so its items have no type", l->name);
            return -1;
        }
        *item = l->item;
        return 0;
    }
    if (check_expr(C, e, x, -1) < 0)
        return -1;
    if (x->ty.rank < 1) {
        diag_error(C->d, x->line, x->col, "'for' needs a tensor of rank >= 1 to iterate, got %s", tystr(&x->ty, b1));
        return -1;
    }
    *item = row_type(&x->ty);
    return 0;
}

/* What a for loop walks: a tensor or a list (CHECK_ITER_PLAIN), enumerate(it) or zip(it, ...),
 * unless the file or the application defines a graph or kernel of that name. */
static int iter_kind(const checker *C, const ast_node *x)
{
    if (x->kind != AST_CALL || (x->flags & AST_F_METHOD) || check_graph_find(C, x->name) >= 0 ||
        ctx_find(C->ctx, x->name))
        return CHECK_ITER_PLAIN;
    if (strcmp(x->name, "enumerate") == 0)
        return CHECK_ITER_ENUMERATE;
    if (strcmp(x->name, "zip") == 0)
        return CHECK_ITER_ZIP;
    return CHECK_ITER_PLAIN;
}


static void check_for_each(checker *C, env *e, ast_node *n)
{
    int kind = iter_kind(C, n->a), nvars = n->nlist ? n->nlist : 1, ok = 1;
    check_note_of(C, n)->iter = kind;
    ast_node **its = kind == CHECK_ITER_PLAIN ? &n->a : n->a->list;
    int nits = kind == CHECK_ITER_PLAIN ? 1 : n->a->nlist;
    int nvals = kind == CHECK_ITER_ENUMERATE ? 2 : nits;
    cfx_type types[CHECK_MAX_FOR_VARS];
    memset(types, 0, sizeof types);
    if (kind == CHECK_ITER_ENUMERATE && nits != 1) {
        diag_error(C->d, n->a->line, n->a->col, "'enumerate' takes one tensor or list, got %d arguments", nits);
        ok = 0;
    } else if (kind == CHECK_ITER_ZIP && (nits < 1 || nits > CHECK_MAX_FOR_VARS)) {
        diag_error(C->d, n->a->line, n->a->col, "'zip' takes 1 to %d tensors or lists, got %d", CHECK_MAX_FOR_VARS, nits);
        ok = 0;
    }
    for (int i = 0; ok && i < nits; i++)
        if (check_iterable(C, e, its[i], &types[kind == CHECK_ITER_ENUMERATE ? 1 : i]) < 0)
            ok = 0;
    if (ok && nvars != nvals) {
        if (kind == CHECK_ITER_PLAIN)
            diag_error(C->d, n->line, n->col,
                       "each step of this loop gives one value, but it has %d loop variables "
                       "(enumerate(x) and zip(x, y) give several)",
                       nvars);
        else
            diag_error(C->d, n->line, n->col, "'%s' gives %d values at each step, but the loop has %d variables",
                       n->a->name, nvals, nvars);
        ok = 0;
    }
    if (kind == CHECK_ITER_ENUMERATE)
        types[0] = scalar_type(CFX_I32);
    if (kind == CHECK_ITER_PLAIN && ok && list_var(C, e, n->a))
        check_note_of(C, n)->list = ((check_note *)n->a->note)->list;
    varlist set;
    collect_assigned(C, n, &set);
    if (C->oom)
        goto done;
    int vars[CHECK_MAX_FOR_VARS];
    const cfx_type *tys[CHECK_MAX_FOR_VARS];
    for (int i = 0; i < nvars && i < CHECK_MAX_FOR_VARS; i++) {
        vars[i] = check_var_find(C, n->nlist ? n->list[i]->name : n->name);
        tys[i] = ok ? &types[i] : NULL;
    }
    int exits = 0, breaks = 0;
    ltrack *joined = calloc((size_t)set.n + 1, sizeof *joined);
    if (!joined) {
        C->oom = 1;
        goto done;
    }
    loop_body(C, e, n->d, &set, vars, tys, nvars < CHECK_MAX_FOR_VARS ? nvars : CHECK_MAX_FOR_VARS, n, &exits, &breaks, joined);
    after_loop(C, e, &set, joined, n->line, n);
    free(joined);
done:
    free(set.v);
}

/* ---- if and switch --------------------------------------------------------------------------- */
static void check_if(checker *C, env *e, ast_node *n)
{
    arm_set arms;
    int taken = 0, has_else = 0;
    if (arms_open(C, &arms, n->nlist + 1, e) < 0)
        goto done;
    for (int i = 0; i < n->nlist && !taken; i++) {
        ast_node *arm = n->list[i];
        check_note_of(C, arm);
        int c = 1;
        if (arm->a)
            c = check_cond(C, e, arm->a, "condition");
        else
            has_else = 1;
        if (c == 0)
            continue; /* a branch folded away: not checked, not joined */
        env *x = arms_add(C, &arms, e, !arm->a ? "else" : i == 0 ? "then" : "elif");
        if (!x)
            goto done;
        /* what the conditions say of None on this path: the earlier ones false, its own true */
        for (int j = 0; j < i; j++)
            narrow(C, x, n->list[j]->a, 0);
        narrow(C, x, arm->a, 1);
        check_block(C, x, arm->b);
        arms_end(C, &arms, e);
        if (c == 1)
            taken = 1; /* the remaining arms are dead */
    }
    if (!taken && !has_else) {
        /* no else: the path that takes no arm keeps e as it is, but for what its conditions,
         * all false, say of None */
        if (!arms_add(C, &arms, e, "else"))
            goto done;
        for (int j = 0; j < n->nlist; j++)
            narrow(C, e, n->list[j]->a, 0);
        arms_end(C, &arms, e);
    }
    if (arms.n > 0)
        join(C, e, &arms);
done:
    arms_close(C, &arms, e);
}

static void check_switch(checker *C, env *e, ast_node *n)
{
    char b1[TYBUF];
    int ok = check_expr(C, e, n->a, CFX_I32) == 0;
    if (ok && (n->a->ty.dtype != CFX_I32 || n->a->ty.rank != 0)) {
        diag_error(C->d, n->a->line, n->a->col, "the value of 'switch' must be an i32 scalar, got %s",
                   tystr(&n->a->ty, b1));
        ok = 0;
    }
    int ndefault = 0;
    /* case values seen, open addressing (index + 1): linear in the cases, not in their pairs */
    int hcap = 16;
    while (hcap < 2 * n->nlist)
        hcap *= 2;
    int *seen = calloc((size_t)hcap, sizeof *seen);
    if (!seen) {
        C->oom = 1;
        return;
    }
    for (int i = 0; i < n->nlist; i++) {
        ast_node *cs = n->list[i];
        if (cs->flags & AST_F_DEFAULT) {
            if (ndefault++)
                diag_error(C->d, cs->line, cs->col, "'switch' has more than one default");
            continue;
        }
        if (cs->ival < INT32_MIN || cs->ival > INT32_MAX)
            diag_error(C->d, cs->line, cs->col, "case %" PRId64 " does not fit in i32", cs->ival);
        size_t h = (size_t)((uint64_t)cs->ival * 0x9E3779B97F4A7C15u >> 32) & (size_t)(hcap - 1);
        while (seen[h] && n->list[seen[h] - 1]->ival != cs->ival)
            h = (h + 1) & (size_t)(hcap - 1);
        if (seen[h])
            diag_error(C->d, cs->line, cs->col, "duplicate case %" PRId64, cs->ival);
        else
            seen[h] = i + 1;
    }
    free(seen);
    check_note *k = ok ? n->a->note : NULL;
    arm_set arms;
    int has_default = 0;
    if (arms_open(C, &arms, n->nlist + 1, e) < 0)
        goto done;
    /* with a known value only the case it selects is checked */
    int chosen = -1;
    if (k && k->known) {
        for (int i = 0; i < n->nlist; i++)
            if (!(n->list[i]->flags & AST_F_DEFAULT) && n->list[i]->ival == k->ival)
                chosen = i;
        if (chosen < 0)
            for (int i = 0; i < n->nlist; i++)
                if (n->list[i]->flags & AST_F_DEFAULT)
                    chosen = i;
    }
    for (int i = 0; i < n->nlist; i++) {
        ast_node *cs = n->list[i];
        if (cs->flags & AST_F_DEFAULT)
            has_default = 1;
        if (k && k->known && i != chosen)
            continue;
        check_note_of(C, cs);
        char label[16];
        if (cs->flags & AST_F_DEFAULT)
            snprintf(label, sizeof label, "default");
        else
            snprintf(label, sizeof label, "case %d", (int)cs->ival);
        env *x = arms_add(C, &arms, e, label);
        if (!x)
            goto done;
        check_block(C, x, cs->b);
        arms_end(C, &arms, e);
    }
    if ((k && k->known) ? chosen < 0 : !has_default) {
        if (!arms_add(C, &arms, e, "default"))
            goto done;
        arms_end(C, &arms, e);
    }
    join(C, e, &arms);
done:
    arms_close(C, &arms, e);
}

/* ---- results, return, and the statement and block dispatch ----------------------------------- */
/* Every result must be assigned, with its type, where the graph ends or returns. */
static void check_results(checker *C, env *e, int line, int col, int at_return)
{
    const ast_graph *g = &C->m->graphs[C->gi];
    for (int i = 0; i < g->nresults; i++) {
        int v = check_var_find(C, g->results[i].name);
        const vstate *s = &e->v[v];
        int l = at_return ? line : g->results[i].line, c = at_return ? col : g->results[i].col;
        switch (s->st) {
        case V_UNDEF:
            diag_error(C->d, l, c, "result '%s' is not assigned", g->results[i].name);
            break;
        case V_PARTIAL:
        case V_CONFLICT:
            diag_error(C->d, l, c, "'%s' is not assigned on every path", g->results[i].name);
            break;
        case V_LOOP:
            diag_error(C->d, l, c, "'%s' is assigned only inside the loop at line %d", g->results[i].name, s->line);
            break;
        default:
            break;
        }
    }
}

/* `return E` or `return E1, E2, ...`: the values are assigned to the results, in declaration
 * order, as a tuple assignment would (all values first), and then the graph returns. The
 * assignment is made here, as n->b, for the lowering. */
static void check_return_value(checker *C, env *e, ast_node *n)
{
    const ast_graph *g = &C->m->graphs[C->gi];
    ast_node *val = n->a;
    int nv = val->kind == AST_TUPLE ? val->nlist : 1;
    int from_call = nv == 1 && val->kind == AST_CALL && g->nresults > 1; /* return f(x) */
    if (nv != g->nresults && !from_call) {
        if (g->nresults == 0)
            diag_error(C->d, val->line, val->col, "'%s' has no results: write 'return' alone", g->name);
        else
            diag_error(C->d, val->line, val->col, "'return' gives %d value%s, but '%s' has %d result%s", nv,
                       nv == 1 ? "" : "s", g->name, g->nresults, g->nresults == 1 ? "" : "s");
        if (val->kind == AST_TUPLE)
            for (int i = 0; i < val->nlist; i++)
                check_expr(C, e, val->list[i], -1);
        else
            check_expr(C, e, val, -1);
        for (int i = 0; i < g->nresults; i++) /* one message: not also "not assigned" */
            mark_error(C, e, check_var_find(C, g->results[i].name));
        return;
    }
    ast_node *as = ast_alloc(C->m->arena, sizeof *as);
    ast_node **targets = ast_alloc(C->m->arena, sizeof *targets * (size_t)g->nresults);
    if (!as || !targets) {
        C->oom = 1;
        return;
    }
    as->kind = AST_ASSIGN;
    as->line = n->line;
    as->col = n->col;
    as->a = val;
    for (int i = 0; i < g->nresults; i++) {
        const ast_node *at = val->kind == AST_TUPLE ? val->list[i] : val;
        targets[i] = ast_alloc(C->m->arena, sizeof **targets);
        if (!targets[i]) {
            C->oom = 1;
            return;
        }
        targets[i]->kind = AST_NAME;
        targets[i]->name = g->results[i].name;
        targets[i]->line = at->line; /* a type error points at the value */
        targets[i]->col = at->col;
    }
    as->list = targets;
    as->nlist = g->nresults;
    check_note_of(C, as);
    n->b = as;
    check_assign(C, e, as);
}

static void check_expr_stmt(checker *C, env *e, ast_node *n)
{
    char b1[TYBUF];
    ast_node *x = n->a;
    if (!x || x->kind != AST_CALL) {
        diag_error(C->d, x ? x->line : n->line, x ? x->col : n->col,
                   "only a call can be a statement (an assignment needs '=')");
        if (x)
            check_expr(C, e, x, -1);
        return;
    }
    check_note *k = check_note_of(C, x);
    if (strcmp(x->name, "assert") == 0) {
        k->callee = CHECK_CALL_ASSERT;
        if (x->nlist != 2 || x->list[1]->kind != AST_STRING) {
            diag_error(C->d, x->line, x->col, "'assert' takes a condition and a message string");
            if (x->nlist >= 1)
                check_expr(C, e, x->list[0], -1);
            return;
        }
        if (check_expr(C, e, x->list[0], -1) < 0)
            return;
        const cfx_type *t = &x->list[0]->ty;
        if (t->dtype != CFX_BOOL || type_count(t) != 1)
            diag_error(C->d, x->list[0]->line, x->list[0]->col,
                       "the condition of 'assert' must be a one-element bool, got %s", tystr(t, b1));
        else
            narrow(C, e, x->list[0], 1); /* after `assert(x is not None, ...)`, x holds a value */
        return;
    }
    if (strcmp(x->name, "print") == 0) {
        k->callee = CHECK_CALL_PRINT;
        if (x->nlist < 1 || x->nlist > 2 || (x->nlist == 2 && x->list[1]->kind != AST_STRING)) {
            diag_error(C->d, x->line, x->col, "'print' takes a value and an optional label string");
            if (x->nlist >= 1)
                check_expr(C, e, x->list[0], -1);
            return;
        }
        check_expr(C, e, x->list[0], -1);
        return;
    }
    check_call(C, e, x, -1);
}

static void check_stmt(checker *C, env *e, ast_node *n)
{
    check_note_of(C, n);
    switch (n->kind) {
    case AST_ASSIGN:
        check_assign(C, e, n);
        return;
    case AST_IF:
        check_if(C, e, n);
        return;
    case AST_WHILE:
        check_while(C, e, n);
        return;
    case AST_FOR_RANGE:
        check_for_range(C, e, n);
        return;
    case AST_FOR_EACH:
        check_for_each(C, e, n);
        return;
    case AST_SWITCH:
        check_switch(C, e, n);
        return;
    case AST_BREAK:
    case AST_CONTINUE:
        if (!C->loop) {
            diag_error(C->d, n->line, n->col, "'%s' outside a loop", n->kind == AST_BREAK ? "break" : "continue");
            return;
        }
        if (n->kind == AST_BREAK)
            C->loop->exits = C->loop->breaks = 1;
        e->live = 0;
        return;
    case AST_RETURN:
        if (n->a)
            check_return_value(C, e, n);
        check_results(C, e, n->line, n->col, 1);
        for (loopctx *l = C->loop; l; l = l->up)
            l->exits = 1;
        e->live = 0;
        return;
    case AST_EXPR:
        check_expr_stmt(C, e, n);
        return;
    case AST_BLOCK:
        check_block(C, e, n);
        return;
    case AST_ERROR:
        /* a statement that did not parse: what it may have assigned is unknown, quietly */
        for (int i = 0; i < n->nlist; i++) {
            int v = check_var_find(C, n->list[i]->name);
            if (v >= 0)
                env_set(C, e, v)->st = V_ERROR;
        }
        return;
    default:
        diag_error(C->d, n->line, n->col, "expected a statement");
        return;
    }
}

/* Statements after a break, continue or return in the same block are never reached: they
 * get no note, so the lowering skips them too. */
static void check_block(checker *C, env *e, ast_node *blk)
{
    if (!blk)
        return;
    if (blk->kind != AST_BLOCK) {
        check_stmt(C, e, blk);
        return;
    }
    check_note_of(C, blk);
    for (int i = 0; i < blk->nlist && e->live && !C->oom; i++)
        check_stmt(C, e, blk->list[i]);
}

/* ---- graphs: variables, captures, the two passes over a graph, sizes once inlined ------------ */
static void collect_vars(checker *C, const ast_node *n)
{
    if (!n)
        return;
    switch (n->kind) {
    case AST_ASSIGN:
    case AST_ERROR:
        for (int i = 0; i < n->nlist; i++)
            if (n->list[i]->kind == AST_NAME)
                check_var_add(C, n->list[i]->name);
        return;
    case AST_FOR_RANGE:
    case AST_FOR_EACH:
        check_var_add(C, n->name);
        for (int i = 1; i < n->nlist; i++)
            check_var_add(C, n->list[i]->name);
        collect_vars(C, n->d);
        return;
    case AST_IF:
    case AST_SWITCH:
    case AST_BLOCK:
        for (int i = 0; i < n->nlist; i++)
            collect_vars(C, n->list[i]);
        return;
    case AST_ARM:
    case AST_CASE:
    case AST_WHILE:
        collect_vars(C, n->b);
        return;
    default:
        return;
    }
}

static int cmp_named(const void *x, const void *y)
{
    const struct named *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* Whether tree n makes a list: `[...]` or list(...). */
static int makes_lists(const ast_node *n)
{
    if (!n)
        return 0;
    if (n->kind == AST_LIST || (n->kind == AST_CALL && strcmp(n->name, "list") == 0))
        return 1;
    if (makes_lists(n->a) || makes_lists(n->b) || makes_lists(n->c) || makes_lists(n->d))
        return 1;
    for (int i = 0; i < n->nlist; i++)
        if (makes_lists(n->list[i]))
            return 1;
    return 0;
}

static void check_graph_pass(checker *C, int gi);

/* The type of a variable of graph gi, from a place the checker typed it (a parameter, a result,
 * an assignment or a read), for capture x of a graph defined inside gi. */
static const ast_node *typed_name(const ast_node *n, const char *name)
{
    if (!n)
        return NULL;
    if (n->kind == AST_NAME && n->note && n->ty.rank >= 0 && strcmp(n->name, name) == 0)
        return n;
    const ast_node *kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++) {
        const ast_node *r = typed_name(kids[i], name);
        if (r)
            return r;
    }
    for (int i = 0; i < n->nlist; i++) {
        const ast_node *r = typed_name(n->list[i], name);
        if (r)
            return r;
    }
    return NULL;
}

static void capture_type(checker *C, int gi, ast_param *x)
{
    const ast_graph *g = &C->m->graphs[gi];
    for (int i = 0; i < g->nparams; i++)
        if (strcmp(g->params[i].name, x->name) == 0 && g->params[i].type.rank >= 0) {
            x->type = g->params[i].type;
            return;
        }
    for (int i = 0; i < g->nresults; i++)
        if (strcmp(g->results[i].name, x->name) == 0) {
            x->type = g->results[i].type;
            return;
        }
    const ast_node *n = typed_name(g->body, x->name);
    if (n)
        x->type = n->ty;
}

/* A graph with lists is checked twice: the first pass, with its messages dropped, finds how
 * many items each list may hold (size_lists), so that the second pass knows the type of
 * stack(xs), [capacity, ...], wherever it appears. */
static void check_graph(checker *C, int gi)
{
    for (int i = 0; i < C->nlists; i++)
        C->lists[i] = NULL;
    C->nlists = 0;
    if (makes_lists(C->m->graphs[gi].body)) {
        diag quiet, *d = C->d;
        diag_init(&quiet, d->file, d->src, d->len);
        C->d = &quiet;
        C->sizing = 1;
        check_graph_pass(C, gi);
        C->sizing = 0;
        C->d = d;
        diag_free(&quiet);
        for (int i = 0; i < C->nlists; i++)
            C->lists[i]->typed = 0;
    }
    check_graph_pass(C, gi);
    /* the graphs defined inside this one that no call has typed yet: each capture takes the
     * type of the variable it reads here */
    for (int h = 0; h < C->m->ngraphs; h++) {
        ast_graph *inner = &C->m->graphs[h];
        if (inner->enclosing != gi + 1)
            continue;
        for (int i = 0; i < inner->nparams; i++)
            if (inner->params[i].capture && inner->params[i].type.rank == AST_UNTYPED)
                capture_type(C, gi, &inner->params[i]);
    }
}

static void check_graph_pass(checker *C, int gi)
{
    ast_graph *g = &C->m->graphs[gi];
    C->gi = gi;
    check_vars_reset(C);
    C->loop = NULL;
    env e = {0};
    /* a graph defined twice was reported by the parser */
    uint8_t *untyped = calloc((size_t)g->nparams + 1, 1); /* captures no variable gave a type */
    if (!untyped) {
        C->oom = 1;
        return;
    }
    for (int i = 0; i < g->nparams; i++) {
        if (check_var_find(C, g->params[i].name) >= 0)
            diag_error(C->d, g->params[i].line, g->params[i].col, "'%s' is declared twice", g->params[i].name);
        check_var_add(C, g->params[i].name);
        if (g->params[i].capture == 2) {
            untyped[i] = 1; /* its call reported why it has no type */
            continue;
        }
        if (!g->params[i].capture && g->params[i].type.rank == AST_UNTYPED) {
            untyped[i] = 1; /* its type did not parse (a shape too large): reported there */
            continue;
        }
        if (g->params[i].capture && g->params[i].type.rank == AST_UNTYPED) {
            if (!C->sizing) {
                const char *dot = strrchr(g->name, '.');
                diag_error(C->d, g->line, g->col, "'%s' reads '%s', which '%.*s' never gives a value it could read",
                           dot ? dot + 1 : g->name, g->params[i].name, dot ? (int)(dot - g->name) : 0, g->name);
            }
            memset(&g->params[i].type, 0, sizeof g->params[i].type);
            g->params[i].type.dtype = CFX_F32;
            g->params[i].type.rank = AST_UNTYPED; /* for the next pass too; typed here as f32 */
            untyped[i] = 1;
            continue;
        }
        check_written_type(C, &g->params[i].type, g->params[i].line, g->params[i].col);
    }
    for (int i = 0; i < g->nresults; i++) {
        if (check_var_find(C, g->results[i].name) >= 0)
            diag_error(C->d, g->results[i].line, g->results[i].col, "'%s' is declared twice", g->results[i].name);
        check_var_add(C, g->results[i].name);
        check_written_type(C, &g->results[i].type, g->results[i].line, g->results[i].col);
    }
    add_const_vars(C);
    collect_vars(C, g->body);
    if (C->oom) {
        free(untyped);
        return;
    }
    free(C->declared);
    free(C->is_result);
    free(C->stamp);
    free(C->slot);
    free(C->track);
    C->declared = calloc((size_t)C->nvars + 1, sizeof *C->declared);
    C->is_result = calloc((size_t)C->nvars + 1, 1);
    C->stamp = calloc((size_t)C->nvars + 1, sizeof *C->stamp);
    C->slot = calloc((size_t)C->nvars + 1, sizeof *C->slot);
    C->track = calloc((size_t)C->nvars + 1, sizeof *C->track);
    C->stampgen = 0;
    C->ntrail = 0;
    C->open = 0;
    cfx_type none_type;
    memset(&none_type, 0, sizeof none_type);
    none_type.rank = -2;
    C->none_ty = check_type_id(C, &none_type);
    if (!C->declared || !C->is_result || !C->stamp || !C->slot || !C->track || check_env_new(C, &e) < 0) {
        C->oom = 1;
        goto done;
    }
    for (int i = 0; i < g->nparams; i++) {
        if (g->params[i].def && !C->sizing)
            check_default(C, &g->params[i]);
        int v = check_var_find(C, g->params[i].name);
        vstate *s = env_set(C, &e, v);
        s->st = V_DEF;
        cfx_type pt = g->params[i].type;
        if (untyped[i])
            pt.rank = 0;
        s->ty = check_type_id(C, &pt);
        s->line = g->params[i].line;
        s->none = g->params[i].def && g->params[i].def->kind == AST_NONE ? 2 : 0; /* told at run time */
        if (untyped[i])
            s->st = V_ERROR; /* reported above: its reads are not */
    }
    for (int i = 0; i < g->nresults; i++) {
        int v = check_var_find(C, g->results[i].name);
        C->is_result[v] = 1;
        C->declared[v] = g->results[i].type;
    }
    define_consts(C, &e);
    check_block(C, &e, g->body);
    if (e.live)
        check_results(C, &e, 0, 0, 0);
    size_lists(C, g);
done:
    free(untyped);
    check_env_free(&e);
}

static int is_statement(int kind)
{
    return kind == AST_ASSIGN || kind == AST_IF || kind == AST_WHILE || kind == AST_FOR_RANGE ||
           kind == AST_FOR_EACH || kind == AST_SWITCH || kind == AST_BREAK || kind == AST_CONTINUE ||
           kind == AST_RETURN || kind == AST_EXPR;
}

/* Walks tree n as collect_calls counts it, adding to *total each node and, at a call of a
 * graph, that graph's inlined size; returns the innermost statement at which *total first
 * passes cap (NULL if it does not), so a size error names the statement that crossed it. */
static const ast_node *crossing(checker *C, const ast_node *n, const ast_node *stmt, int64_t *total,
                                int64_t cap, int depth)
{
    if (!n || depth > 4 * PARSE_MAX_DEPTH)
        return NULL;
    if (is_statement(n->kind))
        stmt = n;
    (*total)++;
    if (n->kind == AST_CALL) {
        int g = check_graph_find(C, n->name);
        if (g >= 0 && C->scc[g] != C->scc[C->gi])
            *total += C->size[g];
    }
    if (*total > cap)
        return stmt;
    const ast_node *kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4 + n->nlist; i++) {
        const ast_node *r = crossing(C, i < 4 ? kids[i] : n->list[i - 4], stmt, total, cap, depth + 1);
        if (r)
            return r;
    }
    return NULL;
}

/* Reports that graph g, inlined, passes a cap, at the statement that crossed it; `before` is
 * what the graphs before it already count. */
static void too_large(checker *C, int g, int64_t before, int64_t cap, const char *fmt)
{
    const ast_graph *gr = &C->m->graphs[g];
    int64_t total = before;
    C->gi = g;
    const ast_node *at = crossing(C, gr->body, NULL, &total, cap, 0);
    diag_error(C->d, at ? at->line : gr->line, at ? at->col : gr->col, fmt, gr->name, (int)cap);
}

/* ---- the module: its constants, and checking's begin, graphs and end (check.h) --------------- */

static const ast_module *sort_module; /* for cmp_const: qsort takes no context */

static int cmp_const(const void *x, const void *y)
{
    const ast_const *c = sort_module->consts;
    return strcmp(c[*(const int *)x].name, c[*(const int *)y].name);
}

/* A constant is read by its name in every graph (check.h). */
int check_constants(ast_module *m, diag *d)
{
    if (!m->nconsts)
        return 0;
    m->const_order = ast_alloc(m->arena, (size_t)m->nconsts * sizeof *m->const_order);
    if (!m->const_order)
        return -1;
    for (int i = 0; i < m->nconsts; i++)
        m->const_order[i] = i;
    sort_module = m;
    qsort(m->const_order, (size_t)m->nconsts, sizeof *m->const_order, cmp_const);
    for (int g = 0; g < m->ngraphs; g++) {
        const ast_graph *gr = &m->graphs[g];
        const char *dot = strrchr(gr->name, '.');
        int k = ast_const_find(m, dot ? dot + 1 : gr->name);
        if (k >= 0)
            diag_error(d, gr->line, gr->col, "graph '%s' has the name of the constant at line %d, column %d",
                       dot ? dot + 1 : gr->name, m->consts[k].line, m->consts[k].col);
        for (int pass = 0; pass < 2; pass++) {
            const ast_param *ps = pass ? gr->results : gr->params;
            int n = pass ? gr->nresults : gr->nparams;
            for (int i = 0; i < n; i++) {
                const char *name = ps[i].tuple_of ? ps[i].tuple_of : ps[i].name;
                if (ps[i].tuple_of && ps[i].tuple_index > 0)
                    continue;
                if ((k = ast_const_find(m, name)) >= 0)
                    diag_error(d, ps[i].line, ps[i].col, "%s '%s' of graph '%s' has the name of the constant at "
                               "line %d, column %d", pass ? "result" : "parameter", name, gr->name,
                               m->consts[k].line, m->consts[k].col);
            }
        }
    }
    return 0;
}

/* Reports `W = ...`, `W[i] = ...`, `W += ...` and `for W in ...` of a constant W, in the
 * statements of tree n: an assignment becomes a statement in error (AST_ERROR, holding its other
 * names), a loop variable the name in error, so that the checker goes on quietly. */
static int is_const_write(const ast_module *m, const ast_graph *g, const char *name)
{
    if (ast_const_find(m, name) < 0)
        return 0;
    for (int i = 0; i < g->nparams; i++)
        if (strcmp(g->params[i].tuple_of ? g->params[i].tuple_of : g->params[i].name, name) == 0)
            return 0; /* the parameter's name was reported (check_constants): it is the parameter */
    for (int i = 0; i < g->nresults; i++)
        if (strcmp(g->results[i].name, name) == 0)
            return 0;
    return 1;
}

static void refuse_const_writes(ast_module *m, const ast_graph *g, ast_node *n, diag *d)
{
    if (!n)
        return;
    switch (n->kind) {
    case AST_ASSIGN: {
        int refused = 0, k = 0;
        for (int i = 0; i < n->nlist; i++) {
            ast_node *t = n->list[i], *x = t;
            while (x->kind == AST_INDEX && x->a)
                x = x->a;
            if (x->kind == AST_NAME && is_const_write(m, g, x->name)) {
                diag_error(d, t->line, t->col, "'%s' is a constant of the module and cannot be assigned", x->name);
                refused = 1;
            } else if (t->kind == AST_NAME) {
                n->list[k++] = t;
            }
        }
        if (refused) {
            n->kind = AST_ERROR;
            n->nlist = k;
        }
        return;
    }
    case AST_FOR_RANGE:
    case AST_FOR_EACH:
        for (int i = 0; i < (n->nlist ? n->nlist : 1); i++) {
            ast_node *v = n->nlist ? n->list[i] : NULL;
            const char *name = v ? v->name : n->name;
            if (name && is_const_write(m, g, name)) {
                int line = v ? v->line : n->line, col = v ? v->col : n->col;
                diag_error(d, line, col, "'%s' is a constant of the module and cannot be assigned", name);
                /* a loop variable of its own, which the body's reads of the constant do not see */
                char other[64];
                snprintf(other, sizeof other, "(loop variable at %d:%d)", line, col);
                const char *renamed = ast_strdup(m->arena, other, strlen(other));
                if (!renamed)
                    renamed = AST_ERROR_NAME;
                if (v)
                    v->name = renamed;
                if (i == 0)
                    n->name = renamed;
            }
        }
        refuse_const_writes(m, g, n->d, d);
        return;
    case AST_IF:
    case AST_SWITCH:
    case AST_BLOCK:
        for (int i = 0; i < n->nlist; i++)
            refuse_const_writes(m, g, n->list[i], d);
        return;
    case AST_ARM:
    case AST_CASE:
    case AST_WHILE:
        refuse_const_writes(m, g, n->b, d);
        return;
    default:
        return;
    }
}

/* The constants as variables of the graph being checked, after its parameters and results:
 * defined from the start, with their values when they are scalars. */
static void add_const_vars(checker *C)
{
    for (int i = 0; i < C->m->nconsts; i++)
        if (check_var_find(C, C->m->consts[i].name) < 0)
            check_var_add(C, C->m->consts[i].name);
}

static void define_consts(checker *C, env *e)
{
    for (int i = 0; i < C->m->nconsts; i++) {
        const ast_const *c = &C->m->consts[i];
        int v = check_var_find(C, c->name);
        if (v < 0 || C->is_result[v] || e->v[v].st != V_UNDEF)
            continue; /* a parameter or a result of that name (reported) */
        vstate *s = env_set(C, e, v);
        s->st = c->bad || !c->data ? V_ERROR : V_DEF;
        s->ty = check_type_id(C, &c->type);
        s->line = c->line;
        if (s->st != V_DEF || c->type.rank != 0)
            continue;
        const void *x = c->data;
        s->known = 1;
        switch (c->type.dtype) {
        case CFX_F32: s->rval = *(const float *)x; break;
        case CFX_F64: s->rval = *(const double *)x; break;
        case CFX_I32: s->ival = *(const int32_t *)x; break;
        case CFX_I64: s->ival = *(const int64_t *)x; break;
        case CFX_BOOL: default: s->ival = *(const uint8_t *)x != 0; break;
        }
    }
}

checker *check_begin(ast_module *m, const cfx_context *ctx, diag *d)
{
    checker *C = calloc(1, sizeof *C);
    if (!C) {
        diag_error(d, 1, 1, "out of memory");
        return NULL;
    }
    C->m = m;
    C->ctx = ctx;
    C->d = d;
    C->gsorted = malloc(((size_t)m->ngraphs + 1) * sizeof *C->gsorted);
    if (C->gsorted) {
        for (int g = 0; g < m->ngraphs; g++)
            C->gsorted[g] = (struct named){m->graphs[g].name, g};
        qsort(C->gsorted, (size_t)m->ngraphs, sizeof *C->gsorted, cmp_named);
    }
    if (!C->gsorted || check_call_sccs(C) < 0) {
        diag_error(d, 1, 1, "out of memory");
        free(C->gsorted);
        free(C->scc);
        free(C->size);
        free(C);
        return NULL;
    }
    /* inlining must not multiply a file into something huge: each graph, and all together */
    int64_t all = 0;
    for (int g = 0; g < m->ngraphs; g++) {
        all += C->size[g];
        if (C->size[g] > LOWER_MAX_RECORDS) {
            too_large(C, g, 0, LOWER_MAX_RECORDS, "graph '%s' is too large: more than %d nodes once its calls are inlined");
        } else if (all > CHECK_MAX_MODULE_NODES) {
            too_large(C, g, all - C->size[g], CHECK_MAX_MODULE_NODES,
                      "the file is too large (at graph '%s'): more than %d nodes once graph calls are inlined");
            break;
        }
    }
    return C;
}

int check_one_graph(checker *C, int gi)
{
    if (C->m->nconsts)
        refuse_const_writes(C->m, &C->m->graphs[gi], C->m->graphs[gi].body, C->d);
    check_graph(C, gi);
    return C->oom ? -1 : 0;
}

void check_end(checker *C, int oom)
{
    if (oom || C->oom)
        diag_error(C->d, 1, 1, "out of memory");
    free(C->gsorted);
    free(C->scc);
    free(C->size);
    free(C->names);
    free(C->name_hash);
    free(C->types);
    free(C->type_hash);
    free(C->conflicts);
    free(C->declared);
    free(C->is_result);
    free(C->lists);
    free(C->stamp);
    free(C->slot);
    free(C->track);
    free(C->trail);
    free(C);
}

/* ---- types as messages write them ------------------------------------------------------------ */
static const char *dtype_name(int dt)
{
    static const char *const names[] = {"f32", "f64", "i32", "i64", "bool"};
    return dt >= 0 && dt <= CFX_BOOL ? names[dt] : "?";
}

char *check_type_str(const cfx_type *t, char *buf, size_t len)
{
    if (t->rank < 0) {
        snprintf(buf, len, "list");
        return buf;
    }
    size_t n = (size_t)snprintf(buf, len, "%s[", dtype_name(t->dtype));
    for (int i = 0; i < t->rank && i < CFX_TYPE_MAX_RANK && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, i ? ", %" PRId64 : "%" PRId64, t->dims[i]);
    if (n < len)
        snprintf(buf + n, len - n, "]");
    return buf;
}


/* ---- small helpers: literals, wrapping and rounding, written types, broadcasting ------------- */

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
static int check_written_type(checker *C, const cfx_type *t, int line, int col)
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
 * element (then the other's shape; of two one-element shapes the one of higher rank), else
 * numpy's broadcasting ([2, 3] and [3] give [2, 3]; [2, 1] and [1, 3] give [2, 3]). The first
 * two rules come first, so f32[1, 1] with f32[3] stays f32[3] as it always was (numpy would
 * make it [1, 3]). */
static int broadcast(const cfx_type *a, const cfx_type *b, cfx_type *out)
{
    cfx_type sa = *a, sb = *b;
    sb.dtype = sa.dtype;
    if (ast_same_type(&sa, &sb)) {
        *out = sa;
        return 0;
    }
    int64_t na = type_count(a), nb = type_count(b);
    if (na == 1 && (nb != 1 || b->rank >= a->rank))
        *out = *b;
    else if (nb == 1)
        *out = *a;
    else {
        /* numpy's rule: dims aligned at the right, each pair equal or one of them 1 */
        cfx_type t = *a;
        t.rank = a->rank > b->rank ? a->rank : b->rank;
        for (int k = 1; k <= t.rank; k++) {
            int64_t da = k <= a->rank ? a->dims[a->rank - k] : 1, db = k <= b->rank ? b->dims[b->rank - k] : 1;
            if (da != db && da != 1 && db != 1)
                return -1;
            t.dims[t.rank - k] = da == 1 ? db : da;
        }
        *out = t;
    }
    return 0;
}

/* ---- expressions: literals and folding, elementwise ops, matmul, indexing, names ------------- */

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
        if (dt == CFX_F32 && isinf((float)r) && !isinf(r)) { /* the lexer rejected what overflows f64 */
            diag_error(C->d, n->line, n->col, "real literal %g does not fit in f32 (largest 3.4028235e+38)", r);
            return -1;
        }
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

/* A known value of dtype `from` as dtype `to` holds it (an operand converted to the dtype its
 * op computes in: an integer or a bool to a real, a bool to an integer). */
static check_note known_as(const check_note *k, int from, int to)
{
    check_note c = *k;
    if (is_real(to) && !is_real(from))
        c.rval = round_real(to, (double)k->ival);
    else if (is_real(to))
        c.rval = round_real(to, k->rval);
    return c;
}

/* Folds a known binary op on scalars of dtype dt; returns 1 if the result is known. The
 * operations the run may compute differently from C's on doubles (floor division, the
 * remainders) are folded with the kernels' own scalar functions. */
static int fold_binary(int op, int dt, const check_note *x, const check_note *y, int64_t *iv, double *rv)
{
    if (is_real(dt)) {
        double a = x->rval, b = y->rval;
        if (op == OP_FLOORDIV || op == OP_MOD || op == OP_TRUNCDIV || op == OP_FMOD || op == OP_ATAN2) {
            if (dt == CFX_F32) {
                float r = 0;
                k_binary1_f32(op, &r, (float)a, (float)b);
                *rv = r;
            } else {
                k_binary1_f64(op, rv, a, b);
            }
            return 1;
        }
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
    case OP_FLOORDIV:
    case OP_MOD:
    case OP_TRUNCDIV:
    case OP_FMOD:
    case OP_BITAND:
    case OP_BITOR:
    case OP_BITXOR:
    case OP_LSHIFT:
    case OP_RSHIFT:
        if (b == 0 && op_class[op] != OPC_BINARY_INT)
            return 0; /* left to the run, which stops with status divide */
        if (dt == CFX_I32) {
            int32_t r = 0;
            k_binary1_i32(op, &r, (int32_t)a, (int32_t)b);
            *iv = r;
        } else {
            k_binary1_i64(op, iv, a, b);
        }
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
    if (n->kind == AST_UNARY && (n->op == OP_NEG || n->op == OP_INVERT))
        return is_literal_expr(n->a);
    if (n->kind == AST_BINARY && (n->op == OP_ADD || n->op == OP_SUB || n->op == OP_MUL ||
                                  n->op == OP_DIV || n->op == OP_MOD || n->op == OP_FLOORDIV ||
                                  op_class[n->op] == OPC_BINARY_INT))
        return is_literal_expr(n->a) && is_literal_expr(n->b);
    return 0;
}

static int has_real_literal(const ast_node *n)
{
    if (!n)
        return 0;
    return n->kind == AST_REAL || has_real_literal(n->a) || has_real_literal(n->b);
}

/* The dtype two operands of different dtypes promote to, as numpy and PyTorch promote them: the
 * wider integer, the wider real, a real over any integer (PyTorch's rule: i64 with f32 is f32,
 * where numpy makes it f64), a number over a bool. */
static int promote(int a, int b)
{
    if (a == b || b == CFX_BOOL)
        return a;
    if (a == CFX_BOOL)
        return b;
    if (is_real(a) != is_real(b))
        return is_real(a) ? a : b;
    return is_real(a) ? CFX_F64 : CFX_I64; /* two reals, or two integers, of different widths */
}

/* Checks the two operands of an elementwise op, giving a literal the other side's dtype; when
 * both are literals they take `want` (the dtype the context asks for, -1 for none), or f32 if
 * one of them is real. A literal never widens the other operand (a Python scalar beside a
 * tensor, in PyTorch's terms): `x + 1` keeps x's dtype, and `n + 1.5` for an integer n is f32.
 * `name` spells the op in messages (`+` or `add`). On success *shape is the result shape, with
 * the dtype the operands promote to. */
static int check_pair(checker *C, env *e, ast_node *at, const char *name, ast_node *a, ast_node *b,
                      cfx_type *shape, int want, const ast_node *cond, int ta, int tb)
{
    int la = is_literal_expr(a), lb = is_literal_expr(b), ra, rb;
    if (la && lb) {
        int dt = want >= 0 && is_num(want) ? want : -1;
        if (has_real_literal(a) || has_real_literal(b))
            dt = want == CFX_F64 ? CFX_F64 : CFX_F32;
        ra = check_narrowed(C, e, a, dt, cond, ta);
        rb = check_narrowed(C, e, b, dt, cond, tb);
    } else if (la) {
        rb = check_narrowed(C, e, b, -1, cond, tb);
        ra = check_narrowed(C, e, a, rb == 0 ? (int)b->ty.dtype : -1, cond, ta);
    } else {
        ra = check_narrowed(C, e, a, -1, cond, ta);
        rb = check_narrowed(C, e, b, ra == 0 ? (int)a->ty.dtype : -1, cond, tb);
        if (rb == 0 && cond == a && tb >= 0 && type_count(&b->ty) != 1)
            rb = check_expr(C, e, b, -1); /* elementwise: b is evaluated whatever a is */
    }
    if (ra < 0 || rb < 0)
        return -1;
    char b1[TYBUF], b2[TYBUF];
    if (broadcast(&a->ty, &b->ty, shape) < 0) {
        diag_error(C->d, at->line, at->col, "operands of '%s' have different shapes: %s and %s", name,
                   tystr(&a->ty, b1), tystr(&b->ty, b2));
        return -1;
    }
    shape->dtype = (cfx_dtype)promote(a->ty.dtype, b->ty.dtype);
    return 0;
}

/* A copy of node n made by the checker (n's fields; no note). NULL, with oom set, when out of memory. */
static ast_node *copy_node(checker *C, const ast_node *n)
{
    ast_node *c = ast_alloc(C->m->arena, sizeof *c);
    if (!c) {
        C->oom = 1;
        return NULL;
    }
    *c = *n;
    c->note = NULL;
    return c;
}

/* A variable read by name that is None, or may be, here. */
static int may_be_none(checker *C, env *e, const ast_node *x)
{
    if (x->kind != AST_NAME || (x->flags & AST_F_PAREN))
        return 0;
    int v = check_var_find(C, x->name);
    return v >= 0 && (e->v[v].st == V_DEF || e->v[v].st == V_LOOP) && e->v[v].none != 0;
}

/* An elementwise op of two operands (infix or called by name), typed into n. */
static int check_elementwise2(checker *C, env *e, ast_node *n, int op, const char *name, ast_node *a,
                              ast_node *b, int want)
{
    cfx_type shape;
    int cls = op_class[op];
    /* Python's `y == v` and `y != v` with y None: False and True, not an error. Rewritten as
     * `y is not None and y == v` and `y is None or y != v`, which then read y only where it
     * holds a value */
    if (n->kind == AST_BINARY && (op == OP_EQ || op == OP_NE) && a->kind != AST_NONE && b->kind != AST_NONE &&
        (may_be_none(C, e, a) || may_be_none(C, e, b))) {
        ast_node *y = may_be_none(C, e, a) ? a : b;
        ast_node *is = copy_node(C, n), *none = copy_node(C, n), *cmp = copy_node(C, n), *yy = copy_node(C, y);
        if (!is || !none || !cmp || !yy)
            return -1;
        none->kind = AST_NONE;
        none->a = none->b = NULL;
        is->kind = AST_IS;
        is->a = yy;
        is->b = none;
        is->flags = op == OP_EQ ? AST_F_NOT : 0;
        n->op = op == OP_EQ ? OP_AND : OP_OR;
        n->a = is;
        n->b = cmp;
        return check_elementwise2(C, e, n, n->op, op == OP_EQ ? "and" : "or", is, cmp, want);
    }
    /* `y is not None and E` with y known to be None: E never runs, so it is not checked (nor
     * reported), as a branch dropped by a folded condition is not */
    if (n->kind == AST_BINARY && (op == OP_AND || op == OP_OR) &&
        (a->kind == AST_IS || (a->kind == AST_UNARY && a->op == OP_NOT && a->a->kind == AST_IS))) {
        if (check_expr(C, e, a, -1) < 0)
            return -1;
        const check_note *ka = a->note;
        if (ka->known && a->ty.dtype == CFX_BOOL && (ka->ival != 0) == (op == OP_OR)) {
            n->ty = scalar_type(CFX_BOOL);
            set_known(C, n, CFX_BOOL, op == OP_OR, 0);
            return 0;
        }
    }
    /* the right side of `and` (`or`) runs only when the left is true (false), so what the left
     * says of None holds there, as in `x is not None and x[0] > 1` */
    int sc = n->kind == AST_BINARY && (op == OP_AND || op == OP_OR);
    /* a real op's literals are f32 (f64 where wanted), as sin(1) takes 1 as f32 */
    int wpair = cls == OPC_BINARY_NUM || cls == OPC_BINARY_INT ? want
              : cls == OPC_BINARY_REAL ? (want == CFX_F64 ? CFX_F64 : CFX_F32) : -1;
    if (check_pair(C, e, n, name, a, b, &shape, wpair, sc ? a : NULL, -1, op == OP_AND) < 0)
        return -1;
    int dt = shape.dtype;
    char b1[TYBUF];
    /* & | ^ of two bools are the logical and, or and xor (numpy's, and Python's for bools) */
    if (cls == OPC_BINARY_INT && dt == CFX_BOOL && op != OP_LSHIFT && op != OP_RSHIFT) {
        op = op == OP_BITAND ? OP_AND : op == OP_BITOR ? OP_OR : OP_NE;
        cls = op_class[op];
        if (n->kind == AST_BINARY)
            n->op = (uint8_t)op;
        else
            check_note_of(C, n)->op = op;
    }
    if (cls == OPC_BINARY_INT && !is_int(dt)) {
        const cfx_type *bad = !is_int(a->ty.dtype) ? &a->ty : &b->ty;
        diag_error(C->d, n->line, n->col, "operands of '%s' must be integers%s, got %s", name,
                   op == OP_LSHIFT || op == OP_RSHIFT ? "" : " (or two bools)", tystr(bad, b1));
        return -1;
    }
    if (cls == OPC_BINARY_REAL && !is_real(dt)) {
        const cfx_type *bad = !is_real(a->ty.dtype) ? &a->ty : &b->ty;
        diag_error(C->d, n->line, n->col, "operands of '%s' must be f32 or f64, got %s", name, tystr(bad, b1));
        return -1;
    }
    if ((cls == OPC_BINARY_NUM || (cls == OPC_COMPARE && op != OP_EQ && op != OP_NE)) && !is_num(dt)) {
        diag_error(C->d, n->line, n->col, "operands of '%s' must be numeric, got %s", name,
                   tystr(&a->ty, b1));
        return -1;
    }
    if (cls == OPC_BINARY_BOOL && (a->ty.dtype != CFX_BOOL || b->ty.dtype != CFX_BOOL)) {
        const cfx_type *bad = a->ty.dtype != CFX_BOOL ? &a->ty : &b->ty;
        diag_error(C->d, n->line, n->col, "operands of '%s' must be bool, got %s", name, tystr(bad, b1));
        return -1;
    }
    /* `/` is true division: integers are divided as f32, PyTorch's default real */
    int cdt = op == OP_DIV && !is_real(dt) ? CFX_F32 : dt;
    n->ty = shape;
    n->ty.dtype = (cfx_dtype)(cls == OPC_COMPARE ? CFX_BOOL : cdt);
    check_note *k = check_note_of(C, n);
    k->cdt = cdt;
    check_note ka = known_as(a->note, a->ty.dtype, cdt), kb = known_as(b->note, b->ty.dtype, cdt);
    int64_t iv = 0;
    double rv = 0;
    /* `false and X` and `true or X` are known whatever X is, as in a short-circuit */
    if (op == OP_AND && ka.known && !ka.ival) {
        set_known(C, n, CFX_BOOL, 0, 0);
    } else if (op == OP_OR && ka.known && ka.ival) {
        set_known(C, n, CFX_BOOL, 1, 0);
    } else if (ka.known && kb.known && fold_binary(op, cdt, &ka, &kb, &iv, &rv)) {
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
    if (!is_num(x->dtype) || !is_num(y->dtype)) {
        diag_error(C->d, n->line, n->col, "operands of '%s' must be numeric, got %s and %s", name,
                   tystr(x, b1), tystr(y, b2));
        return -1;
    }
    /* as numpy's matmul: [m, k] @ [k, n] and [m, k] @ [k]; a vector on the left is a row,
     * [k] @ [k, n] is [n], and [k] @ [k] is their dot product, a scalar. Beyond two dimensions
     * the leading ones are a batch, broadcast as numpy's: [..., m, k] @ [..., k, n] */
    int kx = x->rank - 1, ky = y->rank >= 2 ? y->rank - 2 : 0;
    if (x->rank < 1 || y->rank < 1 || x->dims[kx] != y->dims[ky]) {
        diag_error(C->d, n->line, n->col, "shapes of '%s' do not match: %s @ %s", name, tystr(x, b1),
                   tystr(y, b2));
        return -1;
    }
    cfx_type t = scalar_type((cfx_dtype)promote(x->dtype, y->dtype));
    int bx = x->rank > 2 ? x->rank - 2 : 0, by = y->rank > 2 ? y->rank - 2 : 0, nb = bx > by ? bx : by;
    for (int i = 0; i < nb; i++) { /* the batch, aligned at the right */
        int ix = i - (nb - bx), iy = i - (nb - by);
        int64_t dx = ix >= 0 ? x->dims[ix] : 1, dy = iy >= 0 ? y->dims[iy] : 1;
        if (dx != dy && dx != 1 && dy != 1) {
            diag_error(C->d, n->line, n->col, "the batch dimensions of '%s' do not broadcast: %s @ %s", name,
                       tystr(x, b1), tystr(y, b2));
            return -1;
        }
        t.dims[t.rank++] = dx == 1 ? dy : dx;
    }
    if (x->rank >= 2)
        t.dims[t.rank++] = x->dims[x->rank - 2];
    if (y->rank >= 2)
        t.dims[t.rank++] = y->dims[y->rank - 1];
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
 * tensor `what` in messages, and its first dimension as dimension `dim` of `what` (1 for the
 * j of x[i][j] or x[i, j]). */
static int check_index(checker *C, env *e, ast_node *at, const cfx_type *x, const char *what, int dim, ast_node *i)
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
        if (dim == 0)
            diag_error(C->d, i->line, i->col, "index %" PRId64 " is out of range for %s with %" PRId64 " rows",
                       k->ival, what, x->dims[0]);
        else
            diag_error(C->d, i->line, i->col,
                       "index %" PRId64 " is out of range for dimension %d of %s, which has size %" PRId64, k->ival,
                       dim, what, x->dims[0]);
        return -1;
    }
    return 0;
}

int check_index_base(const ast_node *x, const char **name)
{
    int dim = 0;
    while (x->kind == AST_INDEX && x->b && !(x->note && ((const check_note *)x->note)->list)) {
        x = x->a;
        dim++;
    }
    *name = x->kind == AST_NAME && !(x->note && ((const check_note *)x->note)->list) ? x->name : NULL;
    return *name ? dim : 0;
}

/* Names tensor expression n in messages, "'x'" or "the tensor"; returns the dimension of that
 * name an index of n selects in (check_index_base). */
static int check_tensor_name(const ast_node *n, char *buf, size_t len)
{
    const char *name;
    int dim = check_index_base(n, &name);
    if (name)
        snprintf(buf, len, "'%s'", name);
    else
        snprintf(buf, len, "the tensor");
    return dim;
}

/* A use of variable `name` as a value: its type, or a message saying why it has none here. A
 * variable that may be None is checked at run time (check_note.presence 1); one known to be None
 * is an error. With `optional`, n is read for a test `is None` or passed to a parameter that
 * defaults to None: None is then no error and needs no check (presence 2, and n has the None
 * type when it is known to be None). */
static int check_name_as(checker *C, env *e, ast_node *n, int optional)
{
    if (strcmp(n->name, AST_ERROR_NAME) == 0)
        return -1; /* reported where it was made (desugar.c) */
    int v = check_var_find(C, n->name);
    if (v < 0) {
        diag_error(C->d, n->line, n->col, "'%s' is not defined", n->name);
        return -1;
    }
    const vstate *s = &e->v[v];
    char b1[TYBUF], b2[TYBUF];
    switch (s->st) {
    case V_DEF: {
        check_note *k = check_note_of(C, n);
        if (s->none == 1 && !optional) {
            diag_error(C->d, n->line, n->col, "'%s' is None here (test it first: if %s is not None { ... })",
                       n->name, n->name);
            break;
        }
        n->ty = C->types[s->ty];
        k->known = s->known && !s->none;
        k->ival = s->ival;
        k->rval = s->rval;
        k->presence = s->none == 2 ? (optional ? 2 : 1) : 0;
        return 0;
    }
    case V_UNDEF:
        diag_error(C->d, n->line, n->col, "'%s' is used before it is assigned", n->name);
        break;
    case V_PARTIAL:
        diag_error(C->d, n->line, n->col, "'%s' is not assigned on every path", n->name);
        break;
    case V_LOOP:
        if (s->typed && C->types[s->ty].rank >= 0) {
            /* Python's rule: the value of the last assignment that ran, and a run that never
             * assigned it stops (the lowering checks the variable's flag here) */
            check_note *k = check_note_of(C, n);
            if (s->none == 1 && !optional) {
                diag_error(C->d, n->line, n->col, "'%s' is None here (test it first: if %s is not None { ... })",
                           n->name, n->name);
                break;
            }
            n->ty = C->types[s->ty];
            k->known = 0;
            k->unset_line = s->line;
            k->presence = s->none == 2 ? (optional ? 2 : 1) : 0;
            return 0;
        }
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
    env_set(C, e, v)->st = V_ERROR; /* one message per variable and path */
    return -1;
}

static int check_name(checker *C, env *e, ast_node *n) { return check_name_as(C, e, n, 0); }

/* ---- lists: records, items, assignment, methods ------------------------------------------------
 * A list variable has a check_list record per graph (found by name) and the checker type
 * {rank -1, dims[0] = the record's id}, so that it joins like any variable and never passes
 * for a tensor: a list name is accepted only where a list may stand (xs[i], len(xs), stack(xs),
 * for x in xs, xs.append(v), xs.pop(), xs = [...]); anywhere else it is an error. */

static cfx_type list_type(const check_list *l)
{
    cfx_type t;
    memset(&t, 0, sizeof t);
    t.rank = -1;
    t.dims[0] = l->id;
    return t;
}

/* The record of list variable `name`, made on first use. */
static check_list *list_record(checker *C, const char *name)
{
    for (int i = 0; i < C->nlists; i++)
        if (strcmp(C->lists[i]->name, name) == 0)
            return C->lists[i];
    if (C->nlists == C->caplists) {
        int cap = C->caplists ? C->caplists * 2 : 8;
        check_list **nl = realloc(C->lists, (size_t)cap * sizeof *nl);
        if (!nl) {
            C->oom = 1;
            return NULL;
        }
        C->lists = nl;
        C->caplists = cap;
    }
    check_list *l = ast_alloc(C->m->arena, sizeof *l);
    size_t n = strlen(name);
    char *len_name = ast_alloc(C->m->arena, n + 6);
    if (!l || !len_name) {
        C->oom = 1;
        return NULL;
    }
    snprintf(len_name, n + 6, "len(%s)", name);
    l->name = name;
    l->len_name = len_name;
    l->id = C->nlists;
    C->lists[C->nlists++] = l;
    return l;
}

cfx_type check_list_data_type(const check_list *l)
{
    cfx_type t = l->item;
    t.rank = l->item.rank + 1;
    for (int i = l->item.rank; i > 0; i--)
        t.dims[i] = t.dims[i - 1];
    t.dims[0] = l->cap > 0 ? l->cap : 1;
    return t;
}

static check_list *list_var(checker *C, env *e, ast_node *n)
{
    if (!n || n->kind != AST_NAME)
        return NULL;
    int v = check_var_find(C, n->name);
    if (v < 0 || e->v[v].st != V_DEF || C->types[e->v[v].ty].rank >= 0)
        return NULL;
    int id = (int)C->types[e->v[v].ty].dims[0];
    if (id < 0 || id >= C->nlists)
        return NULL;
    check_note *k = check_note_of(C, n);
    k->known = 0;
    k->list = C->lists[id];
    n->ty = C->types[e->v[v].ty];
    return C->lists[id];
}

/* The first item fixes the items' type; every later one must have it. */
static int list_takes(checker *C, check_list *l, const ast_node *at, const cfx_type *t)
{
    char b1[TYBUF], b2[TYBUF];
    if (!l->typed) {
        if (t->rank >= CFX_MAX_RANK) {
            diag_error(C->d, at->line, at->col, "a list item has at most %d dimensions, got %s", CFX_MAX_RANK - 1,
                       tystr(t, b1));
            return -1;
        }
        l->item = *t;
        l->typed = 1;
        return 0;
    }
    if (!ast_same_type(&l->item, t)) {
        diag_error(C->d, at->line, at->col, "list '%s' holds %s items and cannot take %s", l->name,
                   tystr(&l->item, b1), tystr(t, b2));
        return -1;
    }
    return 0;
}

static int check_list_assign(checker *C, env *e, ast_node *n, ast_node *t)
{
    ast_node *val = n->a;
    int is_decl = val->kind == AST_CALL && !(val->flags & AST_F_METHOD) && strcmp(val->name, "list") == 0 &&
                  check_graph_find(C, "list") < 0;
    if (val->kind != AST_LIST && !is_decl)
        return 0;
    int v = check_var_find(C, t->name);
    check_list *l = list_record(C, t->name);
    if (!l)
        return 1;
    int ok = 1;
    check_note_of(C, val)->list = l;
    if (is_decl) {
        /* list(TYPE, N): no items yet, room for N */
        cfx_type it;
        if (val->nlist != 2) {
            diag_error(C->d, val->line, val->col, "'list' takes an item type and a capacity, as in list(f32[3], 8)");
            ok = 0;
        } else if (type_arg(C, e, val, val->list[0], 0, &it) < 0 || list_takes(C, l, val->list[0], &it) < 0) {
            ok = 0;
        } else if (check_expr(C, e, val->list[1], CFX_I32) < 0) {
            ok = 0;
        } else {
            const check_note *k = val->list[1]->note;
            if (!k->known || !is_int(val->list[1]->ty.dtype) || k->ival < 1 ||
                k->ival * type_count(&it) > CFX_MAX_ELEMENTS) {
                diag_error(C->d, val->list[1]->line, val->list[1]->col,
                           "the capacity of a list is an integer known at compile time, from 1 to %" PRId64
                           " items in all",
                           (int64_t)CFX_MAX_ELEMENTS / type_count(&it));
                ok = 0;
            } else {
                l->declared = 1;
                l->cap = k->ival;
            }
        }
    } else {
        for (int i = 0; i < val->nlist; i++) {
            ast_node *x = val->list[i];
            int want = l->typed ? (int)l->item.dtype : i > 0 && val->list[0]->note ? (int)val->list[0]->ty.dtype : -1;
            if (check_expr(C, e, x, want) < 0 || list_takes(C, l, x, &x->ty) < 0)
                ok = 0;
        }
    }
    if (!ok) {
        mark_error(C, e, v);
        return 1;
    }
    cfx_type lt = list_type(l);
    check_note_of(C, t)->known = 0;
    check_note_of(C, t)->list = l;
    t->ty = lt;
    assign_var(C, e, t, v, &lt, NULL);
    return 1;
}

static int check_list_item(checker *C, env *e, ast_node *n, check_list *l)
{
    char b1[TYBUF];
    int ri = check_expr(C, e, n->b, CFX_I32);
    if (!l->typed) {
        diag_error(C->d, n->line, n->col, "list '%s' has no items yet, so its items have no type", l->name);
        return -1;
    }
    if (ri < 0)
        return -1;
    if (!is_int(n->b->ty.dtype) || type_count(&n->b->ty) != 1) {
        diag_error(C->d, n->b->line, n->b->col, "index must be an integer scalar, got %s", tystr(&n->b->ty, b1));
        return -1;
    }
    check_note *k = check_note_of(C, n);
    k->known = 0;
    k->list = l;
    n->ty = l->item;
    return 0;
}

static int check_method(checker *C, env *e, ast_node *n, int nwant)
{
    check_note *k = check_note_of(C, n);
    ast_node *recv = n->list[0];
    check_list *l = list_var(C, e, recv);
    int nargs = n->nlist - 1;
    if (!l) {
        if (check_expr(C, e, recv, -1) == 0)
            diag_error(C->d, n->line, n->col, "'%s' is not a method of %s: only lists have methods (append, pop)",
                       n->name, check_type_str(&recv->ty, (char[TYBUF]){0}, TYBUF));
        for (int i = 1; i < n->nlist; i++)
            check_expr(C, e, n->list[i], -1);
        return -1;
    }
    k->callee = CHECK_CALL_METHOD;
    k->list = l;
    if (strcmp(n->name, "append") == 0) {
        if (nargs != 1) {
            diag_error(C->d, n->line, n->col, "'append' takes one item, got %d", nargs);
            return -1;
        }
        if (nwant > 0) {
            diag_error(C->d, n->line, n->col, "'append' gives no value: write it as a statement");
            return -1;
        }
        ast_node *x = n->list[1];
        if (check_expr(C, e, x, l->typed ? (int)l->item.dtype : -1) < 0)
            return -1;
        return list_takes(C, l, x, &x->ty);
    }
    if (strcmp(n->name, "pop") == 0) {
        if (nargs != 0) {
            diag_error(C->d, n->line, n->col, "'pop' takes no argument: it removes the last item");
            return -1;
        }
        if (!l->typed) {
            diag_error(C->d, n->line, n->col, "list '%s' has no items yet, so its items have no type", l->name);
            return -1;
        }
        n->ty = l->item;
        return 0;
    }
    diag_error(C->d, n->line, n->col, "unknown list method '%s' (lists have append and pop)", n->name);
    return -1;
}

/* ---- list capacities -------------------------------------------------------------------
 * After a graph's statements are checked, the capacity of a list that was not declared is
 * the most items any run can give it: its largest literal, plus an upper bound of its
 * appends, counted over the checked tree (dead branches have no note and count nothing): a
 * block adds its statements, an if or a switch takes its largest arm, a for loop multiplies
 * its body by its trip count when that is known at compile time. A while loop, or a for loop
 * whose trip count is not known, that appends has no bound: the list must then be declared. */
#define LIST_UNBOUNDED (-1)

static int64_t add_count(int64_t a, int64_t b)
{
    if (a == LIST_UNBOUNDED || b == LIST_UNBOUNDED || a + b > CFX_MAX_ELEMENTS)
        return a == LIST_UNBOUNDED || b == LIST_UNBOUNDED ? LIST_UNBOUNDED : CFX_MAX_ELEMENTS + 1;
    return a + b;
}

static int64_t mul_count(int64_t trips, int64_t c)
{
    if (c == 0)
        return 0;
    if (trips == LIST_UNBOUNDED || c == LIST_UNBOUNDED)
        return LIST_UNBOUNDED;
    return trips > (CFX_MAX_ELEMENTS + 1) / c ? CFX_MAX_ELEMENTS + 1 : trips * c;
}

/* Python's len(range(a, b, s)) for known a, b, s (s != 0). */
static int64_t range_len(int64_t a, int64_t b, int64_t st)
{
    if (st > 0)
        return a < b ? (b - a - 1) / st + 1 : 0;
    return a > b ? (a - b - 1) / -st + 1 : 0;
}

static int64_t count_appends(checker *C, const ast_node *n, const check_list *l, const ast_node **where)
{
    if (!n || !n->note)
        return 0;
    int64_t c = 0;
    switch (n->kind) {
    case AST_BLOCK:
        for (int i = 0; i < n->nlist; i++)
            c = add_count(c, count_appends(C, n->list[i], l, where));
        return c;
    case AST_IF:
    case AST_SWITCH:
        for (int i = 0; i < n->nlist; i++) {
            const ast_node *arm = n->list[i];
            int64_t x = arm->note ? count_appends(C, arm->b, l, where) : 0;
            if (x == LIST_UNBOUNDED || c == LIST_UNBOUNDED)
                c = LIST_UNBOUNDED;
            else if (x > c)
                c = x;
        }
        return c;
    case AST_WHILE: {
        const ast_node **w0 = where;
        const ast_node *first = NULL;
        int64_t x = count_appends(C, n->b, l, &first);
        if (x != 0 && !*w0)
            *w0 = first ? first : n;
        return x == 0 ? 0 : LIST_UNBOUNDED;
    }
    case AST_FOR_RANGE:
    case AST_FOR_EACH: {
        const ast_node *first = NULL;
        int64_t x = count_appends(C, n->d, l, &first), trips = LIST_UNBOUNDED;
        if (x == 0)
            return 0;
        if (n->kind == AST_FOR_RANGE) {
            const check_note *ka = n->a->note, *kb = n->b->note, *ks = n->c ? n->c->note : NULL;
            if (ka && kb && ka->known && kb->known && (!n->c || (ks && ks->known && ks->ival != 0)))
                trips = range_len(ka->ival, kb->ival, ks ? ks->ival : 1);
        } else {
            /* the shortest of what the loop walks */
            const check_note *ke = n->note;
            int nits = ke->iter == CHECK_ITER_PLAIN ? 1 : n->a->nlist;
            for (int i = 0; i < nits; i++) {
                const ast_node *it = ke->iter == CHECK_ITER_PLAIN ? n->a : n->a->list[i];
                const check_note *ki = it->note;
                int64_t t = ki && ki->list ? (ki->list->cap > 0 ? ki->list->cap : LIST_UNBOUNDED)
                            : it->ty.rank >= 1 ? it->ty.dims[0] : LIST_UNBOUNDED;
                if (t != LIST_UNBOUNDED && (trips == LIST_UNBOUNDED || t < trips))
                    trips = t; /* any bound of one of them bounds the loop */
            }
        }
        c = mul_count(trips, x);
        if (c == LIST_UNBOUNDED && !*where)
            *where = first ? first : n;
        return c;
    }
    case AST_EXPR: {
        const ast_node *x = n->a;
        const check_note *k = x ? x->note : NULL;
        if (x && x->kind == AST_CALL && k && k->callee == CHECK_CALL_METHOD && k->list == l &&
            strcmp(x->name, "append") == 0) {
            if (!*where)
                *where = x;
            return 1;
        }
        return 0;
    }
    default:
        return 0;
    }
}

/* The longest literal `NAME = [...]` of the list. */
static int64_t longest_literal(const ast_node *n, const check_list *l)
{
    if (!n || !n->note)
        return 0;
    int64_t m = 0;
    if (n->kind == AST_ASSIGN && n->nlist == 1 && n->a && n->a->kind == AST_LIST && n->list[0]->kind == AST_NAME &&
        strcmp(n->list[0]->name, l->name) == 0)
        return n->a->nlist;
    const ast_node *kids[4] = {n->a, n->b, n->c, n->d};
    if (n->kind != AST_ASSIGN && n->kind != AST_EXPR)
        for (int i = 0; i < 4; i++) {
            int64_t x = longest_literal(kids[i], l);
            m = x > m ? x : m;
        }
    for (int i = 0; n->kind != AST_ASSIGN && i < n->nlist; i++) {
        int64_t x = longest_literal(n->list[i], l);
        m = x > m ? x : m;
    }
    return m;
}

/* The statement that makes list comprehension list l (desugar.c): `l = []`, flagged, followed
 * in its block by the loop that fills it. NULL when l is not such a list, or when anything else
 * changes it (then the graph's appends all count, as for any list). */
static const ast_node *comp_init(const ast_node *n, const char *name, const ast_node **fill)
{
    if (!n)
        return NULL;
    const ast_node *kids[4] = {n->a, n->b, n->c, n->d};
    if (n->kind == AST_BLOCK) {
        for (int i = 0; i < n->nlist; i++) {
            const ast_node *s = n->list[i];
            if (s->kind == AST_ASSIGN && s->nlist == 1 && s->list[0]->kind == AST_NAME && s->a &&
                s->a->kind == AST_LIST && (s->a->flags & AST_F_COMP) && strcmp(s->list[0]->name, name) == 0 &&
                i + 1 < n->nlist) {
                *fill = n->list[i + 1];
                return s;
            }
            const ast_node *r = comp_init(s, name, fill);
            if (r)
                return r;
        }
        return NULL;
    }
    if (n->kind == AST_IF || n->kind == AST_SWITCH) {
        for (int i = 0; i < n->nlist; i++) {
            const ast_node *r = comp_init(n->list[i]->b, name, fill);
            if (r)
                return r;
        }
        return NULL;
    }
    for (int i = 0; i < 4; i++)
        if (kids[i] && kids[i]->kind == AST_BLOCK) {
            const ast_node *r = comp_init(kids[i], name, fill);
            if (r)
                return r;
        }
    return NULL;
}

/* 1 if a statement of tree n other than skip1 and skip2 changes list `name`. */
static int changed_elsewhere(const ast_node *n, const char *name, const ast_node *skip1, const ast_node *skip2)
{
    if (!n || n == skip1 || n == skip2)
        return 0;
    switch (n->kind) {
    case AST_BLOCK:
        for (int i = 0; i < n->nlist; i++)
            if (changed_elsewhere(n->list[i], name, skip1, skip2))
                return 1;
        return 0;
    case AST_IF:
    case AST_SWITCH:
        for (int i = 0; i < n->nlist; i++)
            if (changed_elsewhere(n->list[i]->b, name, skip1, skip2))
                return 1;
        return 0;
    case AST_WHILE:
        return changed_elsewhere(n->b, name, skip1, skip2);
    case AST_FOR_RANGE:
    case AST_FOR_EACH:
        if (strcmp(n->name, name) == 0)
            return 1;
        for (int i = 0; i < n->nlist; i++)
            if (strcmp(n->list[i]->name, name) == 0)
                return 1;
        return changed_elsewhere(n->d, name, skip1, skip2);
    default:
        return ast_mutates_list(n, name);
    }
}

static void size_lists(checker *C, const ast_graph *g)
{
    /* a list iterated by another's loop must be sized first: a few rounds settle chains */
    for (int round = 0; round < 4; round++)
        for (int i = 0; i < C->nlists; i++) {
            check_list *l = C->lists[i];
            if (l->declared)
                continue;
            const ast_node *where = NULL, *fill = NULL, *init = comp_init(g->body, l->name, &fill);
            int64_t c;
            if (init && !changed_elsewhere(g->body, l->name, init, fill))
                c = count_appends(C, fill, l, &where); /* made afresh each time: its own loop's items */
            else
                c = add_count(longest_literal(g->body, l), count_appends(C, g->body, l, &where));
            if (c == LIST_UNBOUNDED) {
                if (C->sizing)
                    l->cap = 0;
                if (round == 3 && !C->sizing && where && where->kind == AST_CALL && (where->flags & AST_F_COMP))
                    diag_error(C->d, where->line, where->col,
                               "cannot tell how many items this list comprehension makes: it loops over a range "
                               "whose bounds are not known at compile time; loop over a range of known bounds, a "
                               "tensor or a list, or write the loop, appending to a declared list "
                               "(xs = list(%s, CAPACITY))", l->typed ? tystr(&l->item, (char[TYBUF]){0}) : "f32[3]");
                else if (round == 3 && !C->sizing && where)
                    diag_error(C->d, where->line, where->col,
                               "cannot tell how many items list '%s' may hold: it grows in a loop whose trip "
                               "count is not known at compile time; declare it, as in %s = list(%s, CAPACITY)",
                               l->name, l->name, l->typed ? tystr(&l->item, (char[TYBUF]){0}) : "f32[3]");
                continue;
            }
            if (C->sizing) /* the second pass keeps the sizes its types were made with */
                l->cap = c > 0 ? c : 1;
            if (round == 3 && !C->sizing && l->typed && l->cap * type_count(&l->item) > CFX_MAX_ELEMENTS)
                diag_error(C->d, where ? where->line : g->line, where ? where->col : g->col,
                           "list '%s' may hold %" PRId64 " items of %s: more than %" PRId64 " elements in all",
                           l->name, l->cap, tystr(&l->item, (char[TYBUF]){0}), (int64_t)CFX_MAX_ELEMENTS);
        }
}

/* ---- shapes: a shape given as a value, reshape, boxes x[i, j], x.shape ----------------------- */
/* The syntax of a shape given as a value; lists `[2, 3]` count when `lists`. */
static int shape_syntax(const ast_node *n, int lists)
{
    if (!n)
        return 0;
    switch (n->kind) {
    case AST_ATTR:
        return strcmp(n->name, "shape") == 0;
    case AST_INDEX:
        return !n->b && n->nlist == 1 && n->list[0]->kind == AST_SLICE && n->a && n->a->kind == AST_ATTR &&
               strcmp(n->a->name, "shape") == 0;
    case AST_TUPLE:
        return 1;
    case AST_LIST:
        return lists;
    case AST_BINARY:
        return n->op == OP_ADD && shape_syntax(n->a, 0) && shape_syntax(n->b, 0);
    default:
        return 0;
    }
}

/* A dimension of a shape given as a value: an integer known at compile time. */
static int known_dim(checker *C, env *e, ast_node *d, int64_t *out)
{
    if (check_expr(C, e, d, CFX_I32) < 0)
        return -1;
    const check_note *k = d->note;
    if (!k->known || !is_int(d->ty.dtype)) {
        diag_error(C->d, d->line, d->col, "a dimension is an integer known at compile time (a literal, len(x), "
                   "x.shape[i], or arithmetic on them), got %s", k->known ? tystr(&d->ty, (char[TYBUF]){0}) :
                   "a value known only at run time");
        return -1;
    }
    *out = k->ival;
    return 0;
}

static int shape_value(checker *C, env *e, ast_node *n, int lists, int64_t *dims, int *rank)
{
    if (!shape_syntax(n, lists))
        return 0;
    switch (n->kind) {
    case AST_ATTR: {
        if (check_expr(C, e, n->a, -1) < 0)
            return -1;
        const cfx_type *t = &n->a->ty;
        if (t->rank < 0) {
            diag_error(C->d, n->line, n->col, "a list has no shape: len(xs) is its length");
            return -1;
        }
        for (int i = 0; i < t->rank; i++)
            dims[i] = t->dims[i];
        *rank = t->rank;
        return 1;
    }
    case AST_INDEX: {
        int64_t all[CFX_MAX_RANK];
        int r = 0;
        if (shape_value(C, e, n->a, 0, all, &r) < 0)
            return -1;
        const ast_node *sl = n->list[0];
        int64_t lo = 0, hi = r;
        if ((sl->a && known_dim(C, e, sl->a, &lo) < 0) || (sl->b && known_dim(C, e, sl->b, &hi) < 0))
            return -1;
        lo = lo < 0 ? lo + r : lo;
        hi = hi < 0 ? hi + r : hi;
        lo = lo < 0 ? 0 : lo > r ? r : lo;
        hi = hi < lo ? lo : hi > r ? r : hi;
        for (int64_t i = lo; i < hi; i++)
            dims[i - lo] = all[i];
        *rank = (int)(hi - lo);
        return 1;
    }
    case AST_TUPLE:
    case AST_LIST:
        if (n->nlist > CFX_MAX_RANK) {
            diag_error(C->d, n->line, n->col, "a shape has at most %d dimensions", CFX_MAX_RANK);
            return -1;
        }
        for (int i = 0; i < n->nlist; i++)
            if (known_dim(C, e, n->list[i], &dims[i]) < 0)
                return -1;
        *rank = n->nlist;
        return 1;
    default: { /* a + b */
        int64_t b[CFX_MAX_RANK];
        int ra = 0, rb = 0;
        if (shape_value(C, e, n->a, 0, dims, &ra) < 0 || shape_value(C, e, n->b, 0, b, &rb) < 0)
            return -1;
        if (ra + rb > CFX_MAX_RANK) {
            diag_error(C->d, n->line, n->col, "a shape has at most %d dimensions", CFX_MAX_RANK);
            return -1;
        }
        for (int i = 0; i < rb; i++)
            dims[ra + i] = b[i];
        *rank = ra + rb;
        return 1;
    }
    }
}

/* The type of a shape given as a value, with dtype dt; reported when it is none. */
static int shape_type(checker *C, env *e, ast_node *a, int dt, cfx_type *out)
{
    int64_t dims[CFX_MAX_RANK];
    int rank = 0;
    if (shape_value(C, e, a, 1, dims, &rank) <= 0)
        return -1;
    memset(out, 0, sizeof *out);
    out->dtype = (cfx_dtype)dt;
    out->rank = rank;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 1) {
            diag_error(C->d, a->line, a->col, "a dimension of a shape is a positive integer, got %lld",
                       (long long)dims[i]);
            return -1;
        }
        out->dims[i] = dims[i];
    }
    return check_written_type(C, out, a->line, a->col);
}

/* A type written with dimensions that are expressions, f32[x.shape[0], n] or f32[x.shape]:
 * each is an integer known at compile time, or a shape, spliced in. */
static int resolve_dims(checker *C, env *e, ast_node *a)
{
    cfx_type t;
    memset(&t, 0, sizeof t);
    t.dtype = a->ty.dtype;
    for (int i = 0; i < a->nlist; i++) {
        ast_node *d = a->list[i];
        int64_t dims[CFX_MAX_RANK];
        int r = 0, sv = shape_value(C, e, d, 0, dims, &r);
        if (sv < 0)
            return -1;
        if (sv == 0) {
            if (known_dim(C, e, d, &dims[0]) < 0)
                return -1;
            r = 1;
        }
        for (int j = 0; j < r; j++) {
            if (t.rank == CFX_MAX_RANK) {
                diag_error(C->d, a->line, a->col, "a shape has at most %d dimensions", CFX_MAX_RANK);
                return -1;
            }
            if (dims[j] < 1) {
                diag_error(C->d, d->line, d->col, "a dimension of a shape is a positive integer, got %lld",
                           (long long)dims[j]);
                return -1;
            }
            t.dims[t.rank++] = dims[j];
        }
    }
    a->ty = t;
    return 0;
}

/* reshape(x, y.shape), reshape(x, (2, 3)): a shape as a value, with no -1. */
static int check_reshape_to(checker *C, env *e, ast_node *n, int nwant)
{
    char b1[TYBUF], b2[TYBUF];
    check_note *k = check_note_of(C, n);
    k->callee = CHECK_CALL_RESHAPE;
    if (want_count(C, n, 1, nwant < 0 ? 1 : nwant) < 0 || check_expr(C, e, n->list[0], -1) < 0)
        return -1;
    cfx_type t;
    if (shape_type(C, e, n->list[1], n->list[0]->ty.dtype, &t) < 0)
        return -1;
    if (type_count(&t) != type_count(&n->list[0]->ty)) {
        diag_error(C->d, n->line, n->col, "cannot reshape %s (%" PRId64 " elements) to %s", tystr(&n->list[0]->ty, b1),
                   type_count(&n->list[0]->ty), tystr(&t, b2));
        return -1;
    }
    n->ty = t;
    return 0;
}

/* reshape(x, [d0, ...]) and x.reshape([d0, ...]): the same elements in row-major order under
 * another shape; each dimension is an integer known at compile time, one of them may be -1
 * (the one that makes the counts agree), as in numpy. */
static int check_reshape(checker *C, env *e, ast_node *n, int nwant)
{
    char b1[TYBUF];
    check_note *k = check_note_of(C, n);
    k->callee = CHECK_CALL_RESHAPE;
    if (n->nlist == 2 && n->list[1]->kind != AST_LIST && shape_syntax(n->list[1], 0))
        return check_reshape_to(C, e, n, nwant);
    if (n->nlist != 2 || n->list[1]->kind != AST_LIST) {
        diag_error(C->d, n->line, n->col, "'reshape' takes a tensor and a shape, as in reshape(x, [2, 3])");
        for (int i = 0; i < n->nlist; i++)
            if (n->list[i]->kind != AST_LIST && n->list[i]->kind != AST_TYPE)
                check_expr(C, e, n->list[i], -1);
        return -1;
    }
    if (want_count(C, n, 1, nwant < 0 ? 1 : nwant) < 0 || check_expr(C, e, n->list[0], -1) < 0)
        return -1;
    const cfx_type *x = &n->list[0]->ty;
    ast_node *sh = n->list[1];
    cfx_type t = scalar_type(x->dtype);
    int infer = -1;
    int64_t count = 1;
    if (sh->nlist > CFX_MAX_RANK) {
        diag_error(C->d, sh->line, sh->col, "a shape has at most %d dimensions", CFX_MAX_RANK);
        return -1;
    }
    for (int i = 0; i < sh->nlist; i++) {
        ast_node *d = sh->list[i];
        if (check_expr(C, e, d, CFX_I32) < 0)
            return -1;
        const check_note *kd = d->note;
        if (!kd->known || !is_int(d->ty.dtype) || (kd->ival < 1 && kd->ival != -1) || (kd->ival == -1 && infer >= 0)) {
            diag_error(C->d, d->line, d->col,
                       "a dimension of 'reshape' is a positive integer known at compile time, or one -1");
            return -1;
        }
        if (kd->ival == -1)
            infer = i;
        else
            count *= kd->ival;
        if (count > CFX_MAX_ELEMENTS)
            count = CFX_MAX_ELEMENTS + 1;
        t.dims[i] = kd->ival;
    }
    t.rank = sh->nlist;
    int64_t have = type_count(x);
    if (infer >= 0 && count > 0 && have % count == 0)
        t.dims[infer] = have / count;
    if ((infer >= 0 && (count == 0 || have % count != 0)) || type_count(&t) != have) {
        char b2[TYBUF];
        cfx_type want = t;
        if (infer >= 0)
            want.dims[infer] = -1;
        diag_error(C->d, n->line, n->col, "cannot reshape %s (%" PRId64 " elements) to %s", tystr(x, b1), have,
                   tystr(&want, b2));
        return -1;
    }
    n->ty = t;
    return 0;
}

/* A linear form c + sum coef[k] * name[k] of an integer expression, for the length of a slice
 * whose start is known only at run time: stop - start must not depend on the names. */
#define LIN_TERMS 8
typedef struct lin {
    int64_t c;
    int n;
    const char *name[LIN_TERMS];
    int64_t coef[LIN_TERMS];
} lin;

static int lin_add(lin *a, const lin *b, int64_t sign)
{
    a->c += sign * b->c;
    for (int k = 0; k < b->n; k++) {
        int j = 0;
        while (j < a->n && strcmp(a->name[j], b->name[k]) != 0)
            j++;
        if (j == a->n) {
            if (a->n == LIN_TERMS)
                return -1;
            a->name[a->n] = b->name[k];
            a->coef[a->n++] = 0;
        }
        a->coef[j] += sign * b->coef[k];
    }
    return 0;
}

/* 0 when n is linear in names with known coefficients (from its notes), else -1. */
static int linear(const ast_node *n, lin *out)
{
    memset(out, 0, sizeof *out);
    const check_note *k = n->note;
    if (k && k->known) {
        out->c = k->ival;
        return 0;
    }
    if (n->kind == AST_NAME) {
        out->n = 1;
        out->name[0] = n->name;
        out->coef[0] = 1;
        return 0;
    }
    lin a, b;
    if (n->kind == AST_UNARY && n->op == OP_NEG) {
        if (linear(n->a, &a) < 0)
            return -1;
        return lin_add(out, &a, -1);
    }
    if (n->kind != AST_BINARY || linear(n->a, &a) < 0 || linear(n->b, &b) < 0)
        return -1;
    if (n->op == OP_ADD || n->op == OP_SUB)
        return lin_add(&a, &b, n->op == OP_ADD ? 1 : -1) < 0 ? -1 : (*out = a, 0);
    if (n->op == OP_MUL && (a.n == 0 || b.n == 0)) {
        const lin *v = a.n == 0 ? &b : &a;
        int64_t f = a.n == 0 ? a.c : b.c;
        out->c = v->c * f;
        out->n = v->n;
        for (int j = 0; j < v->n; j++) {
            out->name[j] = v->name[j];
            out->coef[j] = v->coef[j] * f;
        }
        return 0;
    }
    return -1;
}

/* x[i, j], x[a:b], x[:, j]: each item an index (the dimension dropped) or a slice (kept, with a
 * length known at compile time: both bounds known, clamped as Python clamps them, or a stop
 * that is the start plus a constant, x[i:i+4]); dimensions not named are kept whole. */
static int check_box(checker *C, env *e, ast_node *n)
{
    char b1[TYBUF], what[80];
    ast_node *x = n->a;
    if (list_var(C, e, x)) {
        int sliced = 0;
        for (int d = 0; d < n->nlist; d++)
            sliced |= n->list[d]->kind == AST_SLICE;
        if (sliced)
            diag_error(C->d, n->line, n->col,
                       "slices of lists are not supported: take the items one by one (%s[i]), or slice stack(%s)",
                       x->name, x->name);
        else
            diag_error(C->d, n->line, n->col, "a list takes one index, as in %s[i]; index its item after: %s[i][j]",
                       x->name, x->name);
        return -1;
    }
    if (check_expr(C, e, x, -1) < 0)
        return -1;
    const cfx_type *t = &x->ty;
    int dim0 = check_tensor_name(x, what, sizeof what);
    if (n->nlist > t->rank) {
        diag_error(C->d, n->line, n->col, "%d subscripts for %s, which has %d dimension%s", n->nlist, tystr(t, b1),
                   t->rank, t->rank == 1 ? "" : "s");
        return -1;
    }
    cfx_type out = scalar_type(t->dtype);
    int r = 0;
    for (int d = 0; d < n->nlist; d++) {
        ast_node *it = n->list[d];
        int64_t dim = t->dims[d];
        if (it->kind != AST_SLICE) {
            cfx_type one = scalar_type(t->dtype);
            one.rank = 1;
            one.dims[0] = dim;
            if (check_index(C, e, it, &one, what, dim0 + d, it) < 0)
                return -1;
            continue;
        }
        check_note *ks = check_note_of(C, it);
        const check_note *ka = NULL, *kb = NULL;
        ast_node *bounds[2] = {it->a, it->b};
        for (int q = 0; q < 2; q++) {
            if (!bounds[q])
                continue;
            if (check_expr(C, e, bounds[q], CFX_I32) < 0)
                return -1;
            if (!is_int(bounds[q]->ty.dtype) || bounds[q]->ty.rank != 0) {
                diag_error(C->d, bounds[q]->line, bounds[q]->col, "a slice bound must be an integer scalar, got %s",
                           tystr(&bounds[q]->ty, b1));
                return -1;
            }
        }
        ka = it->a ? it->a->note : NULL;
        kb = it->b ? it->b->note : NULL;
        int start_known = !it->a || ka->known, stop_known = !it->b || kb->known;
        int64_t len;
        if (start_known && stop_known) {
            int64_t a = it->a ? ka->ival : 0, b = it->b ? kb->ival : dim;
            a = a < 0 ? a + dim : a;
            b = b < 0 ? b + dim : b;
            a = a < 0 ? 0 : a > dim ? dim : a;
            b = b < 0 ? 0 : b > dim ? dim : b;
            len = b - a;
            if (len < 1) {
                diag_error(C->d, it->line, it->col, "this slice of %s is empty: a slice keeps at least one element",
                           what);
                return -1;
            }
            ks->known = 1;
            ks->ival = a;
        } else {
            lin la, lb;
            if (!it->a || !it->b || linear(it->a, &la) < 0 || linear(it->b, &lb) < 0 || lin_add(&lb, &la, -1) < 0)
                la.n = -1;
            int constant = la.n >= 0;
            for (int k = 0; constant && k < lb.n; k++)
                constant = lb.coef[k] == 0;
            if (!constant || start_known) {
                diag_error(C->d, it->line, it->col,
                           "the length of a slice must be known at compile time: write x[i:i+4] or x[2:]");
                return -1;
            }
            len = lb.c;
            if (len < 1 || len > dim) {
                diag_error(C->d, it->line, it->col, "a slice of %" PRId64 " is out of range for %s with %" PRId64
                           " in that dimension", len, what, dim);
                return -1;
            }
            ks->known = 0;
        }
        ks->slice_len = len;
        out.dims[r++] = len;
    }
    for (int d = n->nlist; d < t->rank; d++)
        out.dims[r++] = t->dims[d];
    out.rank = r;
    n->ty = out;
    check_note_of(C, n)->known = 0;
    return 0;
}

/* x.shape[i]: the dimension, an i32 known at compile time; i is known, negative from the end. */
static int check_shape_index(checker *C, env *e, ast_node *n)
{
    char b1[TYBUF];
    int rx = check_expr(C, e, n->a->a, -1), ri = check_expr(C, e, n->b, CFX_I32);
    if (rx < 0 || ri < 0)
        return -1;
    const check_note *k = n->b->note;
    const cfx_type *t = &n->a->a->ty;
    if (!k->known || !is_int(n->b->ty.dtype)) {
        diag_error(C->d, n->b->line, n->b->col, "the index of x.shape must be an integer known at compile time");
        return -1;
    }
    if (k->ival < -t->rank || k->ival >= t->rank) {
        diag_error(C->d, n->b->line, n->b->col, "index %" PRId64 " is out of range for the shape of %s",
                   k->ival, tystr(t, b1));
        return -1;
    }
    set_known(C, n, CFX_I32, t->dims[k->ival < 0 ? k->ival + t->rank : k->ival], 0);
    return 0;
}

/* n, m = x.shape: the value becomes the tuple of x's dimensions, literals. */
static int shape_tuple(checker *C, env *e, ast_node *n)
{
    char b1[TYBUF];
    ast_node *at = n->a;
    if (strcmp(at->name, "shape") != 0) {
        diag_error(C->d, at->line, at->col, "several targets need as many values, or a call or x.shape on the right");
        return -1;
    }
    if (check_expr(C, e, at->a, -1) < 0)
        return -1;
    const cfx_type *t = &at->a->ty;
    if (t->rank != n->nlist) {
        diag_error(C->d, at->line, at->col, "%d targets but the shape of %s has %d dimensions", n->nlist,
                   tystr(t, b1), t->rank);
        return -1;
    }
    ast_node *tup = ast_alloc(C->m->arena, sizeof *tup);
    ast_node **items = ast_alloc(C->m->arena, sizeof *items * (size_t)(t->rank + 1));
    if (!tup || !items) {
        C->oom = 1;
        return -1;
    }
    tup->kind = AST_TUPLE;
    tup->line = at->line;
    tup->col = at->col;
    for (int i = 0; i < t->rank; i++) {
        items[i] = ast_alloc(C->m->arena, sizeof **items);
        if (!items[i]) {
            C->oom = 1;
            return -1;
        }
        items[i]->kind = AST_INT;
        items[i]->ival = t->dims[i];
        items[i]->line = at->line;
        items[i]->col = at->col;
    }
    tup->list = items;
    tup->nlist = t->rank;
    n->a = tup;
    return 0;
}

/* ---- conditional expressions, `is` and narrowing, value hints, the expression dispatch ------- */
/* How messages spell a binary node's operator: `+`, or `+=` for an augmented assignment. */
static const char *infix_name(const ast_node *n)
{
    if (n->flags & AST_F_AUG) {
        switch (n->op) {
        case OP_ADD: return "+=";
        case OP_SUB: return "-=";
        case OP_MUL: return "*=";
        case OP_DIV: return "/=";
        case OP_MOD: return "%=";
        case OP_FLOORDIV: return "//=";
        case OP_POW: return "**=";
        case OP_BITAND: return "&=";
        case OP_BITOR: return "|=";
        case OP_BITXOR: return "^=";
        case OP_LSHIFT: return "<<=";
        case OP_RSHIFT: return ">>=";
        default: break;
        }
    }
    return op_infix[n->op];
}

/* `a if c else b`: c is a one-element bool and only the chosen value is evaluated; both values
 * have one type (a literal takes the other's dtype). A known c folds to its value, and the
 * other is then not checked, like the dead arm of an if. */
static int check_cond_expr(checker *C, env *e, ast_node *n, int want)
{
    char b1[TYBUF], b2[TYBUF];
    if (check_expr(C, e, n->a, -1) < 0) {
        check_expr(C, e, n->b, want);
        check_expr(C, e, n->c, want);
        return -1;
    }
    if (n->a->ty.dtype != CFX_BOOL || type_count(&n->a->ty) != 1) {
        diag_error(C->d, n->a->line, n->a->col,
                   "the condition of 'a if c else b' must be a one-element bool, got %s "
                   "(where(c, a, b) chooses element by element)",
                   tystr(&n->a->ty, b1));
        return -1;
    }
    const check_note *kc = n->a->note;
    if (kc->known) {
        ast_node *v = kc->ival ? n->b : n->c;
        if (check_expr(C, e, v, want) < 0)
            return -1;
        n->ty = v->ty;
        *check_note_of(C, n) = *(const check_note *)v->note;
        return 0;
    }
    cfx_type shape;
    if (check_pair(C, e, n, "if-else", n->b, n->c, &shape, want, n->a, 1, 0) < 0)
        return -1;
    cfx_type sb = n->b->ty, sc = n->c->ty;
    sb.dtype = sc.dtype = shape.dtype;
    if (!ast_same_type(&sb, &sc)) {
        diag_error(C->d, n->line, n->col, "the values of 'a if c else b' have different shapes: %s and %s",
                   tystr(&n->b->ty, b1), tystr(&n->c->ty, b2));
        return -1;
    }
    n->ty = shape; /* the values' shape, and the dtype they promote to */
    check_note_of(C, n)->known = 0;
    return 0;
}

/* `x is None` and `x is not None` (and `None is x`): x is a variable, and the test a bool, known
 * where the variable is known to hold a value or None here, else made at run time from its
 * presence flag (the note's presence 1). */
static int check_is(checker *C, env *e, ast_node *n)
{
    ast_node *x = n->a->kind == AST_NONE ? n->b : n->a, *other = x == n->a ? n->b : n->a;
    if (other->kind != AST_NONE) {
        diag_error(C->d, n->line, n->col, "'is' compares with None only (x is None, x is not None): to compare "
                   "values write %s", (n->flags & AST_F_NOT) ? "!=" : "==");
        check_expr(C, e, n->a, -1);
        check_expr(C, e, n->b, -1);
        return -1;
    }
    if (x->kind == AST_NONE) { /* None is None */
        set_known(C, n, CFX_BOOL, !(n->flags & AST_F_NOT), 0);
        return 0;
    }
    if (x->kind != AST_NAME || (x->flags & AST_F_PAREN)) {
        if (check_expr(C, e, x, -1) < 0)
            return -1;
        /* any other expression has a value */
        set_known(C, n, CFX_BOOL, (n->flags & AST_F_NOT) != 0, 0);
        return 0;
    }
    if (check_name_as(C, e, x, 1) < 0)
        return -1;
    int v = check_var_find(C, x->name);
    int none = e->v[v].none;
    if (none == 2) {
        n->ty = scalar_type(CFX_BOOL);
        check_note *k = check_note_of(C, n);
        k->known = 0;
        k->presence = 1;
        return 0;
    }
    set_known(C, n, CFX_BOOL, (none == 1) != ((n->flags & AST_F_NOT) != 0), 0);
    return 0;
}

/* What a true (truth 1) or false (0) condition c says of the variables it tests against None:
 * `x is not None` true, or `x is None` false, leaves x holding a value; `and` true and `or`
 * false say it of both sides; `not` turns it round. The states are written in e, so the path
 * that c leads to (an arm of an if, the right side of `and`) skips their run-time checks. */
static void narrow(checker *C, env *e, const ast_node *c, int truth)
{
    if (!c)
        return;
    if (c->kind == AST_UNARY && c->op == OP_NOT) {
        narrow(C, e, c->a, !truth);
    } else if (c->kind == AST_BINARY && c->op == (truth ? OP_AND : OP_OR)) {
        narrow(C, e, c->a, truth);
        narrow(C, e, c->b, truth);
    } else if (c->kind == AST_IS) {
        const ast_node *x = c->a->kind == AST_NONE ? c->b : c->a;
        const ast_node *other = x == c->a ? c->b : c->a;
        if (other->kind != AST_NONE || x->kind != AST_NAME)
            return;
        int v = check_var_find(C, x->name);
        if (v < 0 || (e->v[v].st != V_DEF && e->v[v].st != V_LOOP) || e->v[v].none != 2)
            return;
        int is_none = truth != ((c->flags & AST_F_NOT) != 0); /* the variable is None */
        if (!is_none || e->v[v].ty != C->none_ty)
            env_set(C, e, v)->none = (uint8_t)is_none;
    }
}

/* check_expr of n in e as it is where condition cond has the value truth (narrow); truth -1, or
 * no cond: as it is. */
static int check_narrowed(checker *C, env *e, ast_node *n, int want, const ast_node *cond, int truth)
{
    if (!cond || truth < 0)
        return check_expr(C, e, n, want);
    int mark = C->ntrail, live = e->live;
    C->open++;
    narrow(C, e, cond, truth);
    int r = check_expr(C, e, n, want);
    env_restore(C, e, mark, live);
    C->open--;
    return r;
}

/* Why a value's dtype is not the one its target keeps, when the value's own op made it: `/` of
 * integers is true division, an f32. Empty when there is nothing to add. */
static void value_hint(const ast_node *value, const cfx_type *target, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!value || !value->note || value->ty.dtype == target->dtype)
        return;
    const ast_node *a = NULL, *b = NULL;
    int op = -1;
    if (value->kind == AST_BINARY) {
        a = value->a, b = value->b, op = value->op;
    } else if (value->kind == AST_CALL && value->nlist == 2 &&
               ((const check_note *)value->note)->callee == CHECK_CALL_OP) {
        a = value->list[0], b = value->list[1], op = ((const check_note *)value->note)->op;
    }
    if (!a || !b || !a->note || !b->note || op < 0 || op >= OP_COUNT || op_class[op] != OPC_BINARY_NUM)
        return;
    if (op == OP_DIV && !is_real(a->ty.dtype) && !is_real(b->ty.dtype) && is_int(target->dtype)) {
        snprintf(buf, len, ": %s is true division, an f32 (write %s to divide integers, as in Python)",
                 (value->flags & AST_F_AUG) ? "/=" : "/", (value->flags & AST_F_AUG) ? "//=" : "//");
    } else if (a->ty.dtype != b->ty.dtype) {
        const char *infix = value->kind == AST_BINARY ? infix_name(value) : NULL;
        if (infix)
            snprintf(buf, len, ": %s %s %s gives %s, as the operands promote (write cast(..., %s) to convert)",
                     dtype_name(a->ty.dtype), infix, dtype_name(b->ty.dtype), dtype_name(value->ty.dtype),
                     dtype_name(target->dtype));
        else
            snprintf(buf, len, ": %s(%s, %s) gives %s, as the operands promote (write cast(..., %s) to convert)",
                     op_spellings[op], dtype_name(a->ty.dtype), dtype_name(b->ty.dtype),
                     dtype_name(value->ty.dtype), dtype_name(target->dtype));
    }
}

static int check_expr(checker *C, env *e, ast_node *n, int want)
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
    case AST_NAME: {
        if (check_name(C, e, n) < 0)
            return -1;
        if (n->ty.rank < 0) {
            if (n->name[0] == '[') /* a list comprehension, where a tensor is wanted */
                diag_error(C->d, n->line, n->col, "a list comprehension is a list: make a tensor of it with "
                           "stack([...]), as in sum(stack([v * 2.0 for v in x]))");
            else
                diag_error(C->d, n->line, n->col,
                           "'%s' is a list: use its items (%s[i], for x in %s), len(%s) or stack(%s)", n->name,
                           n->name, n->name, n->name, n->name);
            return -1;
        }
        return 0;
    }
    case AST_COND:
        return check_cond_expr(C, e, n, want);
    case AST_LIST:
        diag_error(C->d, n->line, n->col,
                   "a list [...] is only the value of a list variable, as in xs = [a, b] (stack(xs) makes a tensor)");
        return -1;
    case AST_ATTR:
        if (strcmp(n->name, "ndim") == 0 && check_expr(C, e, n->a, -1) == 0) {
            set_known(C, n, CFX_I32, n->a->ty.rank, 0);
            return 0;
        }
        if (strcmp(n->name, "shape") == 0)
            diag_error(C->d, n->line, n->col,
                       "x.shape is a tuple of dimensions: index it (x.shape[0]), unpack it (n, m = x.shape), "
                       "compare it (x.shape == y.shape) or make a tensor of it (zeros(x.shape))");
        else if (n->a->kind == AST_NAME && (strcmp(n->a->name, "math") == 0 || strcmp(n->a->name, "np") == 0 ||
                                            strcmp(n->a->name, "numpy") == 0 || strcmp(n->a->name, "torch") == 0)) {
            /* a module's constant: the literal to write */
            static const char *const known[][2] = {{"pi", "3.141592653589793"}, {"e", "2.718281828459045"},
                                                   {"tau", "6.283185307179586"}, {"inf", "inf"}, {"nan", "nan"}};
            const char *lit = NULL;
            for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
                if (strcmp(n->name, known[i][0]) == 0)
                    lit = known[i][1];
            if (lit)
                diag_error(C->d, n->line, n->col, "there is no module '%s': write %s.%s as the literal %s",
                           n->a->name, n->a->name, n->name, lit);
            else
                diag_error(C->d, n->line, n->col, "there is no module '%s': the ops are built in (sqrt(x), "
                           "not %s.sqrt(x))", n->a->name, n->a->name);
        } else if (strcmp(n->name, "ndim") != 0)
            diag_error(C->d, n->line, n->col, "unknown attribute '%s' (tensors have shape and ndim)", n->name);
        return -1;
    case AST_STRING:
        diag_error(C->d, n->line, n->col, "a string can only be the message of assert or the label of print");
        return -1;
    case AST_TYPE:
        diag_error(C->d, n->line, n->col, "a type is not a value here");
        return -1;
    case AST_TUPLE:
        diag_error(C->d, n->line, n->col, "a tuple is not a value here: index it (t[0]), unpack it (a, b = t), "
                   "or give it where a shape goes (zeros(t))");
        return -1;
    case AST_COMP:
        diag_error(C->d, n->line, n->col, "internal error: a list comprehension the checker did not expect");
        return -1;
    case AST_UNARY: {
        if (check_expr(C, e, n->a, want) < 0)
            return -1;
        int dt = n->a->ty.dtype;
        if (n->op == OP_INVERT && dt == CFX_BOOL)
            n->op = OP_NOT; /* numpy's and PyTorch's ~ of bools (Python's ~True, -2, is deprecated) */
        if (n->op == OP_NOT ? dt != CFX_BOOL : n->op == OP_INVERT ? !is_int(dt) : !is_num(dt)) {
            diag_error(C->d, n->line, n->col, "operand of '%s' must be %s, got %s", op_infix[n->op],
                       n->op == OP_NOT ? "bool" : n->op == OP_INVERT ? "an integer or a bool" : "numeric",
                       tystr(&n->a->ty, b1));
            return -1;
        }
        n->ty = n->a->ty;
        check_note *ka = n->a->note;
        if (ka->known) {
            if (n->op == OP_NOT)
                set_known(C, n, dt, !ka->ival, 0);
            else if (n->op == OP_INVERT)
                set_known(C, n, dt, ~ka->ival, 0);
            else
                set_known(C, n, dt, wrap(dt, (int64_t)(0 - (uint64_t)ka->ival)), -ka->rval);
        }
        return 0;
    }
    case AST_BINARY:
        if ((n->op == OP_EQ || n->op == OP_NE) && (n->a->kind == AST_NONE || n->b->kind == AST_NONE)) {
            diag_error(C->d, n->line, n->col, "compare with None by 'is': write x %s None",
                       n->op == OP_EQ ? "is" : "is not");
            return -1;
        }
        if ((n->op == OP_EQ || n->op == OP_NE) && (shape_syntax(n->a, 0) || shape_syntax(n->b, 0))) {
            /* x.shape == y.shape, x.shape != (3, 4): known at compile time, like the shapes */
            int64_t da[CFX_MAX_RANK], db[CFX_MAX_RANK];
            int ra = 0, rb = 0;
            int sa = shape_value(C, e, n->a, 0, da, &ra), sb = shape_value(C, e, n->b, 0, db, &rb);
            if (sa < 0 || sb < 0)
                return -1;
            if (sa == 0 || sb == 0) {
                ast_node *other = sa == 0 ? n->a : n->b;
                diag_error(C->d, other->line, other->col, "a shape compares with a shape or a tuple of integers, "
                           "as in x.shape == y.shape or x.shape == (3, 4)");
                return -1;
            }
            int same = ra == rb;
            for (int i = 0; same && i < ra; i++)
                same = da[i] == db[i];
            set_known(C, n, CFX_BOOL, n->op == OP_EQ ? same : !same, 0);
            return 0;
        }
        if (n->op == OP_MATMUL)
            return check_matmul(C, e, n, "@", n->a, n->b);
        if (n->op >= OP_COUNT || !op_infix[n->op]) {
            diag_error(C->d, n->line, n->col, "unknown operator");
            return -1;
        }
        return check_elementwise2(C, e, n, n->op, infix_name(n), n->a, n->b, want);
    case AST_INDEX: {
        if (!n->b)
            return check_box(C, e, n);
        check_list *l = list_var(C, e, n->a);
        if (l)
            return check_list_item(C, e, n, l);
        if (n->a->kind == AST_ATTR && strcmp(n->a->name, "shape") == 0)
            return check_shape_index(C, e, n);
        if (check_expr(C, e, n->a, -1) < 0) {
            check_expr(C, e, n->b, CFX_I32); /* still report errors in the index */
            return -1;
        }
        char what[80];
        int dim = check_tensor_name(n->a, what, sizeof what);
        if (check_index(C, e, n, &n->a->ty, what, dim, n->b) < 0)
            return -1;
        n->ty = row_type(&n->a->ty);
        return 0;
    }
    case AST_CALL:
        return check_call(C, e, n, 1);
    case AST_KWARG:
        diag_error(C->d, n->line, n->col, "'%s=' gives an argument by name, which only a call of a graph takes",
                   n->name);
        check_expr(C, e, n->a, -1);
        return -1;
    case AST_NONE:
        diag_error(C->d, n->line, n->col,
                   "None is not a value here: assign it to a variable (x = None), test a variable with "
                   "'x is None', or pass it to a parameter that defaults to None");
        return -1;
    case AST_IS:
        return check_is(C, e, n);
    default:
        diag_error(C->d, n->line, n->col, "expected an expression");
        return -1;
    }
}

/* ---- calls: graphs and their arguments, type arguments, makers, ops, reductions -------------- */
/* The graph called `name` (the first one, if the parser let a duplicate through), or -1. */
static int check_graph_find(const checker *C, const char *name)
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

/* How messages name a graph: its name where it is defined (`inner` for the graph `outer.inner`). */
static const char *shown(const char *name)
{
    const char *dot = name ? strrchr(name, '.') : NULL;
    return dot ? dot + 1 : name;
}

static const cfx_type *param_type(const ast_graph *g, const ctx_kernel *k, int i)
{
    return g ? &g->params[i].type : &k->params[i];
}

/* Checks arguments against the declared parameter types of graph g or kernel k. A graph's
 * arguments may be given by position, then by name (`f(x, scale=2.0)`), and a parameter with a
 * default may be left out, as in Python; the note's argmap says which argument (an index into
 * the call's list) each parameter takes, -1 for its default. */
static int check_args_against(checker *C, env *e, ast_node *n, const ast_graph *g, const ctx_kernel *k)
{
    char b1[TYBUF], b2[TYBUF];
    int bad = 0, nparams = g ? g->nparams : k->nparams, npos = 0, named = 0;
    int *map = ast_alloc(C->m->arena, sizeof *map * ((size_t)nparams + 1));
    if (!map) {
        C->oom = 1;
        return -1;
    }
    for (int i = 0; i < nparams; i++)
        map[i] = -1;
    for (int i = 0; i < n->nlist; i++) {
        ast_node *a = n->list[i];
        if (a->kind != AST_KWARG) {
            if (named) {
                diag_error(C->d, a->line, a->col, "an argument by position follows one by name, in the call of '%s'",
                           shown(n->name));
                bad = 1;
            } else if (npos < nparams) {
                map[npos] = i;
            }
            npos++;
            continue;
        }
        named = 1;
        int p = -1;
        for (int q = 0; g && q < nparams && p < 0; q++)
            if (strcmp(g->params[q].name, a->name) == 0)
                p = q;
        if (p < 0) {
            diag_error(C->d, a->line, a->col, "'%s' has no parameter '%s'", shown(n->name), a->name);
            bad = 1;
        } else if (map[p] >= 0) {
            diag_error(C->d, a->line, a->col, "parameter '%s' of '%s' is given twice", a->name, shown(n->name));
            bad = 1;
        } else {
            map[p] = i;
        }
    }
    int missing = 0;
    for (int i = 0; i < nparams; i++)
        missing += map[i] < 0 && !(g && g->params[i].def);
    if (npos > nparams || missing) {
        int least = 0;
        for (int i = 0; i < nparams; i++)
            least += !(g && g->params[i].def);
        if (least == nparams)
            diag_error(C->d, n->line, n->col, "'%s' takes %d argument%s, got %d", shown(n->name), nparams,
                       nparams == 1 ? "" : "s", n->nlist);
        else
            diag_error(C->d, n->line, n->col, "'%s' takes %d to %d arguments, got %d", shown(n->name), least, nparams,
                       n->nlist);
        bad = 1;
    }
    for (int i = 0; i < n->nlist; i++) {
        ast_node *a = n->list[i], *v = a->kind == AST_KWARG ? a->a : a;
        int p = -1;
        for (int q = 0; q < nparams && p < 0; q++)
            if (map[q] == i)
                p = q;
        /* a parameter that defaults to None takes None, and a variable that may be None, whose
         * presence the call passes on */
        int optional = p >= 0 && g && g->params[p].def && g->params[p].def->kind == AST_NONE;
        if (p >= 0 && g && g->params[p].capture && g->params[p].type.rank == AST_UNTYPED) {
            /* the first call of a graph defined inside this one gives its capture a type: the
             * variable's, as the call passes it */
            ast_param *cp = &((ast_graph *)g)->params[p];
            const char *dot = strrchr(g->name, '.');
            if (list_var(C, e, v)) {
                diag_error(C->d, v->line, v->col, "'%s' reads '%s', a list: a graph defined inside another reads "
                           "its tensors, not its lists (pass stack(%s) as an argument)", dot ? dot + 1 : g->name,
                           a->name, a->name);
                v = NULL;
            } else if (check_expr(C, e, v, -1) < 0) {
                v = NULL;
            }
            if (!v) { /* reported: the graph's reads of it are not */
                if (!C->sizing) {
                    memset(&cp->type, 0, sizeof cp->type);
                    cp->type.dtype = CFX_F32;
                    cp->capture = 2;
                }
                bad = 1;
                continue;
            }
            cp->type = v->ty;
            continue;
        }
        if (v->kind == AST_NONE) {
            if (!optional) {
                diag_error(C->d, v->line, v->col, "'%s' cannot take None for parameter '%s', which has no None default",
                           shown(n->name), p >= 0 && g ? g->params[p].name : "?");
                bad = 1;
            }
            check_note_of(C, v)->known = 0;
            continue;
        }
        if (optional && v->kind == AST_NAME && !(v->flags & AST_F_PAREN)) {
            if (check_name_as(C, e, v, 1) < 0) {
                bad = 1;
                continue;
            }
            if (v->ty.rank == -2)
                continue; /* known to be None here */
            if (v->ty.rank < 0) {
                diag_error(C->d, v->line, v->col, "'%s' is a list: pass stack(%s)", v->name, v->name);
                bad = 1;
                continue;
            }
        } else if (check_expr(C, e, v, p >= 0 ? (int)param_type(g, k, p)->dtype : -1) < 0) {
            bad = 1;
            continue;
        }
        if (p >= 0 && g && !g->params[p].capture && g->params[p].type.rank == AST_UNTYPED) {
            bad = 1; /* the parameter's type did not parse: reported there */
            continue;
        }
        if (p >= 0 && !ast_same_type(&v->ty, param_type(g, k, p))) {
            if (a->kind == AST_KWARG)
                diag_error(C->d, v->line, v->col, "argument '%s' of '%s' must be %s, got %s", a->name, shown(n->name),
                           tystr(param_type(g, k, p), b1), tystr(&v->ty, b2));
            else
                diag_error(C->d, v->line, v->col, "argument %d of '%s' must be %s, got %s", i + 1, shown(n->name),
                           tystr(param_type(g, k, p), b1), tystr(&v->ty, b2));
            bad = 1;
        }
    }
    check_note_of(C, n)->argmap = map;
    return bad ? -1 : 0;
}

/* A parameter's default: a literal (possibly negated) or a bool of the parameter's dtype; one
 * element, which fills a tensor parameter. 0, or -1 after an error. */
static int check_default(checker *C, const ast_param *p)
{
    char b1[TYBUF];
    ast_node *d = p->def;
    if (d->kind == AST_NONE) { /* the caller may leave it out: the graph tests `p is None` */
        check_note_of(C, d)->known = 0;
        return 0;
    }
    if (!is_literal(d) && d->kind != AST_BOOL) {
        diag_error(C->d, d->line, d->col, "the default of '%s' must be a literal (a number, true or false) or None",
                   p->name);
        return -1;
    }
    if (check_expr(C, NULL, d, p->type.dtype) < 0)
        return -1;
    if (d->ty.dtype != p->type.dtype) {
        diag_error(C->d, d->line, d->col, "the default of '%s' must be %s, like the parameter, got %s", p->name,
                   dtype_name(p->type.dtype), tystr(&d->ty, b1));
        return -1;
    }
    return 0;
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
static int type_arg(checker *C, env *e, ast_node *n, ast_node *a, int scalar_only, cfx_type *out)
{
    if (!a || a->kind != AST_TYPE) {
        diag_error(C->d, a ? a->line : n->line, a ? a->col : n->col, "argument of '%s' must be a type", n->name);
        return -1;
    }
    if ((a->flags & AST_F_DIMS) && resolve_dims(C, e, a) < 0)
        return -1;
    if (scalar_only && a->ty.rank != 0) {
        diag_error(C->d, a->line, a->col, "'%s' takes a dtype (f32, f64, i32, i64, bool), not a shape", n->name);
        return -1;
    }
    if (check_written_type(C, &a->ty, a->line, a->col) < 0)
        return -1;
    *out = a->ty;
    return 0;
}

/* A dtype given as an argument: a type without a shape (i32), or the name of one (dtype=i32). */
static int dtype_arg(checker *C, const ast_node *a, int *out)
{
    if (a->kind == AST_TYPE && a->ty.rank == 0 && !(a->flags & AST_F_DIMS)) {
        *out = a->ty.dtype;
        return 0;
    }
    static const cfx_dtype all[] = {CFX_F32, CFX_F64, CFX_I32, CFX_I64, CFX_BOOL};
    for (size_t i = 0; a->kind == AST_NAME && i < sizeof all / sizeof all[0]; i++)
        if (strcmp(a->name, cfx_dtype_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    diag_error(C->d, a->line, a->col, "a dtype is f32, f64, i32, i64 or bool");
    return -1;
}

/* zeros, ones, iota and full given a shape as a value (x.shape, (2, 3), [2, 3]) or a dtype:
 * zeros(x.shape), ones((2, 3), dtype=i32), full(x.shape, 7), zeros(n, m)... The dtype is
 * f32 (PyTorch's default) unless given, by dtype=DTYPE or, for zeros, ones and iota, as the
 * second argument. */
static int check_make(checker *C, env *e, ast_node *n, int nwant, int op)
{
    char b1[TYBUF];
    check_note *k = check_note_of(C, n);
    int full = op == OP_FULL, bad = 0, npos = 0;
    ast_node *shape = NULL, *value = NULL, *dtype = NULL;
    for (int i = 0; i < n->nlist; i++) {
        ast_node *a = n->list[i];
        if (a->kind == AST_KWARG) {
            if (strcmp(a->name, "dtype") == 0 && !dtype)
                dtype = a->a;
            else
                bad = 1;
            continue;
        }
        if (npos == 0)
            shape = a;
        else if (npos == 1 && full)
            value = a;
        else if (npos == 1 && !dtype)
            dtype = a;
        else
            bad = 1;
        npos++;
    }
    if (bad || !shape || (full && !value) || (dtype && shape->kind == AST_TYPE)) {
        diag_error(C->d, n->line, n->col, "'%s' takes a type, as in %s(f32[2, 3]%s), or a shape and a dtype, as "
                   "in %s(x.shape%s, dtype=i32)", n->name, n->name, full ? ", v" : "", n->name, full ? ", v" : "");
        return -1;
    }
    int dt = CFX_F32;
    if (dtype && dtype_arg(C, dtype, &dt) < 0)
        return -1;
    cfx_type t;
    if (shape->kind == AST_TYPE) {
        if (type_arg(C, e, n, shape, 0, &t) < 0)
            return -1;
    } else if (!shape_syntax(shape, 1)) {
        diag_error(C->d, shape->line, shape->col, "'%s' takes a type (f32[2, 3]) or a shape (x.shape, (2, 3), "
                   "[2, 3]), not a value", n->name);
        if (shape->kind != AST_TYPE)
            check_expr(C, e, shape, -1);
        return -1;
    } else if (shape_type(C, e, shape, dt, &t) < 0) {
        return -1;
    }
    if (want_count(C, n, 1, nwant < 0 ? 1 : nwant) < 0)
        return -1;
    if (op == OP_IOTA && !is_num(t.dtype)) {
        diag_error(C->d, shape->line, shape->col, "'iota' needs a numeric type, got %s", tystr(&t, b1));
        return -1;
    }
    if (full) {
        if (check_expr(C, e, value, t.dtype) < 0)
            return -1;
        if (value->ty.dtype != t.dtype || type_count(&value->ty) != 1) {
            diag_error(C->d, value->line, value->col, "the value of 'full' must be a one-element %s, got %s",
                       dtype_name(t.dtype), tystr(&value->ty, b1));
            return -1;
        }
    }
    k->callee = CHECK_CALL_OP;
    k->op = op;
    n->ty = t;
    return 0;
}

/* A call to the built-in op `op` with n->nlist arguments (the arity already matches). */
/* sum(b) of bools counts the true ones, as numpy's and PyTorch's do: b, checked, as int(b), an
 * i32 of its shape. NULL when out of memory. */
static ast_node *count_of(checker *C, ast_node *b)
{
    ast_node *c = copy_node(C, b);
    ast_node **list = ast_alloc(C->m->arena, sizeof *list);
    if (!c || !list) {
        C->oom = 1;
        return NULL;
    }
    list[0] = b;
    c->kind = AST_CALL;
    c->name = "int";
    c->flags = 0;
    c->a = c->b = NULL;
    c->list = list;
    c->nlist = 1;
    check_note *k = check_note_of(C, c);
    k->callee = CHECK_CALL_OP;
    k->op = OP_CAST;
    k->known = 0;
    c->ty = b->ty;
    c->ty.dtype = CFX_I32;
    return c;
}

static int check_op_call(checker *C, env *e, ast_node *n, int op)
{
    char b1[TYBUF], b2[TYBUF];
    int cls = op_class[op];
    ast_node **arg = n->list;
    const char *name = n->name;
    switch (cls) {
    case OPC_UNARY_REAL:
    case OPC_UNARY_NUM:
    case OPC_UNARY_BOOL:
    case OPC_UNARY_INT: {
        if (check_expr(C, e, arg[0], cls == OPC_UNARY_REAL ? CFX_F32 : -1) < 0)
            return -1;
        int dt = arg[0]->ty.dtype;
        if (op == OP_INVERT && dt == CFX_BOOL) /* numpy's invert of bools is their not */
            check_note_of(C, n)->op = op = OP_NOT, cls = OPC_UNARY_BOOL;
        int ok = cls == OPC_UNARY_REAL ? is_real(dt) : cls == OPC_UNARY_NUM ? is_num(dt)
               : cls == OPC_UNARY_INT ? is_int(dt) : dt == CFX_BOOL;
        if (!ok) {
            diag_error(C->d, arg[0]->line, arg[0]->col, "'%s' needs %s, got %s", name,
                       cls == OPC_UNARY_REAL ? "f32 or f64" : cls == OPC_UNARY_NUM ? "a numeric operand"
                       : cls == OPC_UNARY_INT ? "an integer or a bool" : "bool",
                       tystr(&arg[0]->ty, b1));
            return -1;
        }
        n->ty = arg[0]->ty;
        return 0;
    }
    case OPC_BINARY_NUM:
    case OPC_BINARY_REAL:
    case OPC_COMPARE:
    case OPC_BINARY_BOOL:
    case OPC_BINARY_INT:
        return check_elementwise2(C, e, n, op, name, arg[0], arg[1], -1);
    case OPC_REDUCE_NUM:
    case OPC_REDUCE_REAL:
    case OPC_REDUCE_ARG:
    case OPC_REDUCE_BOOL: {
        if (check_expr(C, e, arg[0], cls == OPC_REDUCE_REAL ? CFX_F32 : -1) < 0)
            return -1;
        if (op == OP_SUM && arg[0]->ty.dtype == CFX_BOOL && (arg[0] = count_of(C, arg[0])) == NULL)
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
        if (x->rank != 1 || y->rank != 1 || x->dims[0] != y->dims[0] || !is_num(x->dtype) || !is_num(y->dtype)) {
            diag_error(C->d, n->line, n->col, "'dot' needs two numeric 1-D tensors of one length, got %s and %s",
                       tystr(x, b1), tystr(y, b2));
            return -1;
        }
        n->ty = scalar_type((cfx_dtype)promote(x->dtype, y->dtype));
        return 0;
    }
    case OPC_MATMUL:
        return check_matmul(C, e, n, name, arg[0], arg[1]);
    case OPC_TRANSPOSE: {
        if (check_expr(C, e, arg[0], -1) < 0)
            return -1;
        const cfx_type *x = &arg[0]->ty;
        if (x->rank < 2) {
            diag_error(C->d, arg[0]->line, arg[0]->col, "'transpose' needs a tensor of 2 or more dimensions, got %s",
                       tystr(x, b1));
            return -1;
        }
        n->ty = *x;
        if (x->rank > 2) { /* numpy's: the axes reversed */
            check_note *k = check_note_of(C, n);
            k->callee = CHECK_CALL_PERMUTE;
            k->ival = 0;
            for (int d = 0; d < x->rank; d++) {
                n->ty.dims[d] = x->dims[x->rank - 1 - d];
                k->ival |= (int64_t)(x->rank - 1 - d) << (4 * d);
            }
            return 0;
        }
        n->ty.dims[0] = x->dims[1];
        n->ty.dims[1] = x->dims[0];
        return 0;
    }
    case OPC_MAKE_TYPE: {
        cfx_type t;
        if (type_arg(C, e, n, arg[0], 0, &t) < 0)
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
        int rt = type_arg(C, e, n, arg[0], 0, &t);
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
        /* a literal takes the dtype it is cast to: cast(3000000000, i64) is an i64 */
        const ast_node *lit = arg[0];
        while (lit->kind == AST_UNARY && lit->op == OP_NEG)
            lit = lit->a;
        int want = (lit->kind == AST_INT || lit->kind == AST_REAL) && arg[1]->kind == AST_TYPE &&
                   is_num(arg[1]->ty.dtype) ? (int)arg[1]->ty.dtype : -1;
        int rx = check_expr(C, e, arg[0], want);
        if (type_arg(C, e, n, arg[1], 1, &t) < 0 || rx < 0)
            return -1;
        n->ty = arg[0]->ty;
        n->ty.dtype = t.dtype;
        return 0;
    }
    case OPC_WHERE: {
        int rc = check_expr(C, e, arg[0], -1);
        cfx_type ab;
        int rab = check_pair(C, e, n, name, arg[1], arg[2], &ab, -1, NULL, -1, -1);
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
        check_list *l = list_var(C, e, arg[0]);
        if (l) { /* the length of a list is a run-time value */
            n->ty = scalar_type(CFX_I32);
            check_note_of(C, n)->list = l;
            return 0;
        }
        if (shape_syntax(arg[0], 0)) { /* len(x.shape): the rank */
            int64_t dims[CFX_MAX_RANK];
            int rank = 0;
            if (shape_value(C, e, arg[0], 0, dims, &rank) < 0)
                return -1;
            set_known(C, n, CFX_I32, rank, 0);
            return 0;
        }
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
/* The reduction op called `name` (sum mean max min argmax argmin all any), or -1. */
static int reduction_of(const char *name)
{
    static const struct {
        const char *name;
        int op;
    } r[] = {{"sum", OP_SUM},       {"mean", OP_MEAN},     {"max", OP_RMAX}, {"min", OP_RMIN},
             {"argmax", OP_ARGMAX}, {"argmin", OP_ARGMIN}, {"all", OP_ALL},  {"any", OP_ANY}};
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        if (strcmp(name, r[i].name) == 0)
            return r[i].op;
    return -1;
}

/* A reduction along one axis, as numpy's: the tensor, then the axis by position (but for max
 * and min, whose two-argument form is elementwise) or as `axis=`, and `keepdims=`; the axis is
 * an integer known at compile time, negative from the end. The result drops that dimension, or
 * keeps it as 1 (keepdims). The note's axis is the axis + 1. */
static int check_axis_reduce(checker *C, env *e, ast_node *n, int op, int nwant)
{
    char b1[TYBUF];
    check_note *k = check_note_of(C, n);
    ast_node *x = NULL, *ax = NULL, *keep = NULL;
    int bad = 0, npos = 0;
    for (int i = 0; i < n->nlist; i++) {
        ast_node *a = n->list[i];
        if (a->kind != AST_KWARG) {
            if (npos == 0)
                x = a;
            else if (npos == 1 && op != OP_RMAX && op != OP_RMIN)
                ax = a;
            else
                bad = 1;
            npos++;
        } else if (strcmp(a->name, "axis") == 0 && !ax) {
            ax = a->a;
        } else if (strcmp(a->name, "keepdims") == 0 && !keep) {
            keep = a->a;
        } else {
            diag_error(C->d, a->line, a->col, "'%s' takes a tensor, an axis and keepdims, not '%s='", n->name,
                       a->name);
            return -1;
        }
    }
    if (bad || !x || x->kind == AST_TYPE) {
        diag_error(C->d, n->line, n->col, "'%s' takes a tensor and an axis, as in %s(x, axis=0)", n->name, n->name);
        return -1;
    }
    if (want_count(C, n, 1, nwant < 0 ? 1 : nwant) < 0 || check_expr(C, e, x, -1) < 0)
        return -1;
    int cls = op_class[op], dt = x->ty.dtype;
    int ok = cls == OPC_REDUCE_REAL ? is_real(dt) : cls == OPC_REDUCE_BOOL ? dt == CFX_BOOL : is_num(dt);
    if (!ok) {
        diag_error(C->d, x->line, x->col, "'%s' needs %s, got %s", n->name,
                   cls == OPC_REDUCE_REAL ? "f32 or f64" : cls == OPC_REDUCE_BOOL ? "bool" : "a numeric operand",
                   tystr(&x->ty, b1));
        return -1;
    }
    int64_t axis = 0, keepdims = 0;
    if (ax) {
        if (check_expr(C, e, ax, CFX_I32) < 0)
            return -1;
        const check_note *ka = ax->note;
        if (!ka->known || !is_int(ax->ty.dtype) || ka->ival < -x->ty.rank || ka->ival >= x->ty.rank) {
            diag_error(C->d, ax->line, ax->col, "the axis of '%s' must be an integer known at compile time, from "
                       "%d to %d for %s", n->name, -x->ty.rank, x->ty.rank - 1, tystr(&x->ty, b1));
            return -1;
        }
        axis = ka->ival < 0 ? ka->ival + x->ty.rank : ka->ival;
    }
    if (keep) {
        if (check_expr(C, e, keep, -1) < 0)
            return -1;
        const check_note *kk = keep->note;
        if (!kk->known || keep->ty.dtype != CFX_BOOL) {
            diag_error(C->d, keep->line, keep->col, "keepdims must be true or false");
            return -1;
        }
        keepdims = kk->ival;
    }
    if (!ax) { /* all of x: keepdims keeps every dimension as 1 */
        k->callee = CHECK_CALL_OP;
        k->op = op;
        n->ty = scalar_type(op == OP_ARGMAX || op == OP_ARGMIN ? CFX_I32 : (cfx_dtype)dt);
        if (keepdims) {
            n->ty.rank = x->ty.rank;
            for (int d = 0; d < x->ty.rank; d++)
                n->ty.dims[d] = 1;
            k->axis = -1; /* the lowering reshapes the one element */
        }
        return 0;
    }
    cfx_type t = scalar_type(op == OP_ARGMAX || op == OP_ARGMIN ? CFX_I32 : (cfx_dtype)dt);
    for (int d = 0; d < x->ty.rank; d++)
        if (d != axis)
            t.dims[t.rank++] = x->ty.dims[d];
        else if (keepdims)
            t.dims[t.rank++] = 1;
    k->callee = CHECK_CALL_OP;
    k->op = op;
    k->axis = (int)axis + 1;
    n->ty = t;
    return 0;
}

/* concat((a, b, ...), axis=K), numpy's concatenate: tensors of one rank, equal in every
 * dimension but the axis (0 unless given; negative counts from the end), whose dtypes promote
 * as a binary op's; the result holds them one after the other along the axis. */
static int check_concat(checker *C, env *e, ast_node *n, int nwant)
{
    char b1[TYBUF], b2[TYBUF];
    check_note *k = check_note_of(C, n);
    ast_node *parts = NULL, *ax = NULL;
    int npos = 0, bad = 0;
    for (int i = 0; i < n->nlist; i++) {
        ast_node *a = n->list[i];
        if (a->kind == AST_KWARG && strcmp(a->name, "axis") == 0 && !ax) {
            ax = a->a;
        } else if (a->kind == AST_KWARG) {
            diag_error(C->d, a->line, a->col, "'%s' takes the tensors and an axis, not '%s='", n->name, a->name);
            return -1;
        } else if (npos++ == 0) {
            parts = a;
        } else if (npos == 2 && !ax) {
            ax = a;
        } else {
            bad = 1;
        }
    }
    if (bad || !parts || (parts->kind != AST_TUPLE && parts->kind != AST_LIST) || parts->nlist < 1) {
        diag_error(C->d, n->line, n->col, "'%s' takes the tensors as a tuple or a list written out, and an axis, "
                   "as in %s((a, b), axis=0)", n->name, n->name);
        return -1;
    }
    if (want_count(C, n, 1, nwant < 0 ? 1 : nwant) < 0)
        return -1;
    int rc = 0;
    for (int i = 0; i < parts->nlist; i++)
        if (check_expr(C, e, parts->list[i], -1) < 0)
            rc = -1;
    if (rc < 0)
        return -1;
    cfx_type t = parts->list[0]->ty;
    for (int i = 0; i < parts->nlist; i++) {
        const ast_node *p = parts->list[i];
        if (p->ty.rank < 1) {
            diag_error(C->d, p->line, p->col, "the parts of '%s' are tensors of 1 or more dimensions, got %s",
                       n->name, tystr(&p->ty, b1));
            return -1;
        }
        if (p->ty.rank != t.rank || (p->ty.dtype == CFX_BOOL) != (t.dtype == CFX_BOOL)) {
            diag_error(C->d, p->line, p->col, "the parts of '%s' must have one rank and be all bool or all numeric, "
                       "got %s and %s", n->name, tystr(&parts->list[0]->ty, b1), tystr(&p->ty, b2));
            return -1;
        }
        t.dtype = (cfx_dtype)promote(t.dtype, p->ty.dtype);
    }
    int64_t axis = 0;
    if (ax) {
        if (check_expr(C, e, ax, CFX_I32) < 0)
            return -1;
        const check_note *ka = ax->note;
        if (!ka->known || !is_int(ax->ty.dtype) || ka->ival < -t.rank || ka->ival >= t.rank) {
            diag_error(C->d, ax->line, ax->col, "the axis of '%s' must be an integer known at compile time, from "
                       "%d to %d for %s", n->name, -t.rank, t.rank - 1, tystr(&t, b1));
            return -1;
        }
        axis = ka->ival < 0 ? ka->ival + t.rank : ka->ival;
    }
    t.dims[axis] = 0;
    for (int i = 0; i < parts->nlist; i++) {
        const ast_node *p = parts->list[i];
        for (int d = 0; d < t.rank; d++) {
            if (d != axis && p->ty.dims[d] != parts->list[0]->ty.dims[d]) {
                diag_error(C->d, p->line, p->col, "the parts of '%s' differ in dimension %d, which is not the axis "
                           "(%d): %s and %s", n->name, d, (int)axis, tystr(&parts->list[0]->ty, b1),
                           tystr(&p->ty, b2));
                return -1;
            }
        }
        t.dims[axis] += p->ty.dims[axis];
    }
    if (t.dims[axis] > CFX_MAX_DIM || type_count(&t) > CFX_MAX_ELEMENTS) {
        diag_error(C->d, n->line, n->col, "the result of '%s' has more than %" PRId64 " elements", n->name,
                   (int64_t)CFX_MAX_ELEMENTS);
        return -1;
    }
    k->callee = CHECK_CALL_CONCAT;
    k->axis = (int)axis;
    n->ty = t;
    return 0;
}

/* take(x, idx, axis=K), numpy's take: x of 1 or more dimensions, idx an i32 or i64 scalar or
 * tensor of indices (negative counting from the end), the axis (0 unless given; negative counts
 * from the end) known at compile time. The result's shape is x's with the axis replaced by idx's
 * shape. An index known at compile time is checked here; others at run time (lower_take). */
static int check_take(checker *C, env *e, ast_node *n, int nwant)
{
    char b1[TYBUF], b2[TYBUF];
    check_note *k = check_note_of(C, n);
    ast_node *x = NULL, *idx = NULL, *ax = NULL;
    int npos = 0, bad = 0;
    for (int i = 0; i < n->nlist; i++) {
        ast_node *a = n->list[i];
        if (a->kind == AST_KWARG && strcmp(a->name, "axis") == 0 && !ax) {
            ax = a->a;
        } else if (a->kind == AST_KWARG) {
            diag_error(C->d, a->line, a->col, "'take' takes a tensor, the indices and an axis, not '%s='", a->name);
            return -1;
        } else if (npos == 0) {
            x = a, npos++;
        } else if (npos == 1) {
            idx = a, npos++;
        } else if (npos == 2 && !ax) {
            ax = a, npos++;
        } else {
            bad = 1;
        }
    }
    if (bad || !x || !idx) {
        diag_error(C->d, n->line, n->col, "'take' takes a tensor, the indices and an axis, as in take(x, idx, axis=0)");
        return -1;
    }
    if (want_count(C, n, 1, nwant < 0 ? 1 : nwant) < 0)
        return -1;
    int rx = check_expr(C, e, x, -1), ri = check_expr(C, e, idx, CFX_I32);
    if (rx < 0 || ri < 0)
        return -1;
    const cfx_type *X = &x->ty, *I = &idx->ty;
    if (X->rank < 1) {
        diag_error(C->d, x->line, x->col, "'take' takes from a tensor of 1 or more dimensions, got %s", tystr(X, b1));
        return -1;
    }
    if (!is_int(I->dtype)) {
        diag_error(C->d, idx->line, idx->col, "the indices of 'take' must be i32 or i64, got %s", tystr(I, b1));
        return -1;
    }
    int64_t axis = 0;
    if (ax) {
        if (check_expr(C, e, ax, CFX_I32) < 0)
            return -1;
        const check_note *ka = ax->note;
        if (!ka->known || !is_int(ax->ty.dtype) || ka->ival < -X->rank || ka->ival >= X->rank) {
            diag_error(C->d, ax->line, ax->col, "the axis of 'take' must be an integer known at compile time, from "
                       "%d to %d for %s", -X->rank, X->rank - 1, tystr(X, b1));
            return -1;
        }
        axis = ka->ival < 0 ? ka->ival + X->rank : ka->ival;
    }
    if (X->rank - 1 + I->rank > CFX_MAX_RANK) {
        diag_error(C->d, n->line, n->col, "the result of 'take' of %s at indices %s has more than %d dimensions",
                   tystr(X, b1), tystr(I, b2), CFX_MAX_RANK);
        return -1;
    }
    int64_t rows = X->dims[axis];
    const check_note *ki = idx->note;
    if (type_count(I) > 0 && rows == 0) {
        diag_error(C->d, idx->line, idx->col, "'take' of indices from dimension %d of %s, which is empty", (int)axis,
                   tystr(X, b1));
        return -1;
    }
    if (ki && ki->known && type_count(I) == 1 && (ki->ival < -rows || ki->ival >= rows)) {
        diag_error(C->d, idx->line, idx->col, "index %" PRId64 " is out of range for dimension %d of %s, which has "
                   "size %" PRId64, ki->ival, (int)axis, tystr(X, b1), rows);
        return -1;
    }
    cfx_type t = *X;
    t.rank = X->rank - 1 + I->rank;
    for (int d = 0; d < t.rank; d++)
        t.dims[d] = d < axis ? X->dims[d] : d < axis + I->rank ? I->dims[d - axis] : X->dims[d - I->rank + 1];
    if (type_count(&t) > CFX_MAX_ELEMENTS) {
        diag_error(C->d, n->line, n->col, "the result of 'take' has more than %" PRId64 " elements",
                   (int64_t)CFX_MAX_ELEMENTS);
        return -1;
    }
    k->callee = CHECK_CALL_TAKE;
    k->axis = (int)axis;
    n->ty = t;
    return 0;
}

/* n is x (of type t) permuted: output dimension d is x's axis perm >> 4d & 15 (lower_permute). */
static void permuted(checker *C, ast_node *n, const cfx_type *t, int64_t perm)
{
    check_note *k = check_note_of(C, n);
    k->callee = CHECK_CALL_PERMUTE;
    k->ival = perm;
    n->ty = *t;
    for (int d = 0; d < t->rank; d++)
        n->ty.dims[d] = t->dims[perm >> (4 * d) & 15];
}

/* transpose(x, axes), permute(x, axes), x.permute(2, 0, 1): numpy's transpose with its axes, a
 * tuple or a list of integers known at compile time (negative counts from the end), one for
 * each dimension of x; output dimension d is x's axis axes[d]. */
static int check_permute(checker *C, env *e, ast_node *n, int nwant)
{
    char b1[TYBUF];
    ast_node *x = NULL, *list = NULL, *ax[CFX_MAX_RANK + 1];
    int nax = 0, bad = 0;
    for (int i = 0; i < n->nlist; i++) {
        ast_node *a = n->list[i];
        if (a->kind == AST_KWARG && (strcmp(a->name, "axes") == 0 || strcmp(a->name, "dims") == 0)) {
            bad |= list || nax;
            list = a->a;
        } else if (a->kind == AST_KWARG) {
            diag_error(C->d, a->line, a->col, "'%s' takes a tensor and its axes, not '%s='", n->name, a->name);
            return -1;
        } else if (!x) {
            x = a;
        } else if ((a->kind == AST_TUPLE || a->kind == AST_LIST) && !list && !nax) {
            list = a;
        } else if (!list && nax < CFX_MAX_RANK + 1) {
            ax[nax++] = a;
        } else {
            bad = 1;
        }
    }
    if (list && !bad && (list->kind == AST_TUPLE || list->kind == AST_LIST) && list->nlist <= CFX_MAX_RANK + 1) {
        for (int i = 0; i < list->nlist; i++)
            ax[nax++] = list->list[i];
    } else if (list) {
        bad = 1;
    }
    if (bad || !x || x->kind == AST_TYPE || nax == 0) {
        diag_error(C->d, n->line, n->col, "'%s' takes a tensor and its axes, as in %s(x, (1, 0, 2))", n->name,
                   n->name);
        return -1;
    }
    if (want_count(C, n, 1, nwant < 0 ? 1 : nwant) < 0 || check_expr(C, e, x, -1) < 0)
        return -1;
    const cfx_type *t = &x->ty;
    if (t->rank < 1) {
        diag_error(C->d, x->line, x->col, "'%s' needs a tensor, got %s", n->name, tystr(t, b1));
        return -1;
    }
    int seen = 0, ok = nax == t->rank;
    int64_t perm = 0;
    char got[64];
    size_t len = 0;
    got[0] = '\0';
    for (int i = 0; i < nax; i++) {
        if (check_expr(C, e, ax[i], CFX_I32) < 0)
            return -1;
        const check_note *ka = ax[i]->note;
        if (!ka->known || !is_int(ax[i]->ty.dtype)) {
            diag_error(C->d, ax[i]->line, ax[i]->col, "the axes of '%s' are integers known at compile time",
                       n->name);
            return -1;
        }
        int64_t v = ka->ival < 0 ? ka->ival + t->rank : ka->ival;
        if (len < sizeof got)
            len += (size_t)snprintf(got + len, sizeof got - len, "%s%" PRId64, i ? ", " : "", ka->ival);
        if (v < 0 || v >= t->rank || (seen >> v & 1)) {
            ok = 0;
            continue;
        }
        seen |= 1 << v;
        perm |= v << (4 * i);
    }
    if (!ok) {
        diag_error(C->d, n->line, n->col, "the axes of '%s' must be a permutation of 0 to %d for %s, got (%s)",
                   n->name, t->rank - 1, tystr(t, b1), got);
        return -1;
    }
    permuted(C, n, t, perm);
    return 0;
}

/* swapaxes(x, a, b), numpy's swapaxes and PyTorch's transpose(x, a, b): axes a and b of x
 * exchanged (integers known at compile time, negative from the end): a permutation. */
static int check_swapaxes(checker *C, env *e, ast_node *n, int nwant)
{
    char b1[TYBUF];
    if (n->nlist != 3 || n->list[0]->kind == AST_TYPE || n->list[1]->kind == AST_KWARG ||
        n->list[2]->kind == AST_KWARG) {
        diag_error(C->d, n->line, n->col, "'swapaxes' takes a tensor and two axes, as in swapaxes(x, 0, 2)");
        return -1;
    }
    if (want_count(C, n, 1, nwant < 0 ? 1 : nwant) < 0 || check_expr(C, e, n->list[0], -1) < 0)
        return -1;
    const cfx_type *t = &n->list[0]->ty;
    int64_t ax[2];
    for (int i = 0; i < 2; i++) {
        ast_node *a = n->list[1 + i];
        if (check_expr(C, e, a, CFX_I32) < 0)
            return -1;
        const check_note *ka = a->note;
        if (!ka->known || !is_int(a->ty.dtype)) {
            diag_error(C->d, a->line, a->col, "the axes of 'swapaxes' are integers known at compile time");
            return -1;
        }
        ax[i] = ka->ival < 0 ? ka->ival + t->rank : ka->ival;
        if (ax[i] < 0 || ax[i] >= t->rank) {
            diag_error(C->d, a->line, a->col, "axis %" PRId64 " of 'swapaxes' is out of range for %s", ka->ival,
                       tystr(t, b1));
            return -1;
        }
    }
    int64_t perm = 0;
    for (int d = 0; d < t->rank; d++)
        perm |= (int64_t)(d == ax[0] ? ax[1] : d == ax[1] ? ax[0] : d) << (4 * d);
    permuted(C, n, t, perm);
    return 0;
}

static int check_call(checker *C, env *e, ast_node *n, int nwant)
{
    check_note *k = check_note_of(C, n);
    k->known = 0;
    if (strcmp(n->name, "assert") == 0 || strcmp(n->name, "print") == 0) {
        diag_error(C->d, n->line, n->col, "'%s' is a statement, not a value", n->name);
        return -1;
    }
    int g = check_graph_find(C, n->name);
    if (strcmp(n->name, "reshape") == 0 && ((n->flags & AST_F_METHOD) ? !list_var(C, e, n->list[0]) : g < 0))
        return check_reshape(C, e, n, nwant);
    if ((strcmp(n->name, "permute") == 0 || (strcmp(n->name, "transpose") == 0 && n->nlist >= 2)) &&
        ((n->flags & AST_F_METHOD) ? !list_var(C, e, n->list[0]) : g < 0 && !ctx_find(C->ctx, n->name)))
        return check_permute(C, e, n, nwant);
    if (strcmp(n->name, "swapaxes") == 0 &&
        ((n->flags & AST_F_METHOD) ? !list_var(C, e, n->list[0]) : g < 0 && !ctx_find(C->ctx, n->name)))
        return check_swapaxes(C, e, n, nwant);
    if (strcmp(n->name, "transpose") == 0 && (n->flags & AST_F_METHOD) && n->nlist == 1 && g < 0 &&
        !list_var(C, e, n->list[0]))
        n->flags &= ~AST_F_METHOD; /* numpy's x.transpose(): transpose(x) */
    if ((strcmp(n->name, "concat") == 0 || strcmp(n->name, "concatenate") == 0) && !(n->flags & AST_F_METHOD) &&
        g < 0 && !ctx_find(C->ctx, n->name))
        return check_concat(C, e, n, nwant);
    if (strcmp(n->name, "take") == 0 && !(n->flags & AST_F_METHOD) && g < 0 && !ctx_find(C->ctx, n->name))
        return check_take(C, e, n, nwant);
    if (n->flags & AST_F_METHOD)
        return check_method(C, e, n, nwant);
    if (g < 0 && strcmp(n->name, "stack") == 0 && n->nlist == 1) {
        /* stack(xs): the items as one tensor [capacity, item...]; the list must be full */
        check_list *l = list_var(C, e, n->list[0]);
        if (!l) {
            if (check_expr(C, e, n->list[0], -1) == 0)
                diag_error(C->d, n->list[0]->line, n->list[0]->col, "'stack' needs a list, got %s",
                           check_type_str(&n->list[0]->ty, (char[TYBUF]){0}, TYBUF));
            return -1;
        }
        if (!l->typed) {
            diag_error(C->d, n->line, n->col, "list '%s' has no items yet, so its items have no type", l->name);
            return -1;
        }
        if (want_count(C, n, 1, nwant < 0 ? 1 : nwant) < 0)
            return -1;
        k->callee = CHECK_CALL_STACK;
        k->list = l;
        n->ty = check_list_data_type(l);
        return 0;
    }
    if (g >= 0) {
        const ast_graph *gr = &C->m->graphs[g];
        k->callee = g;
        if (g == C->gi || C->scc[g] == C->scc[C->gi]) {
            diag_error(C->d, n->line, n->col, "recursive call to '%s' is not supported", shown(n->name));
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
    /* Python's casts: float(x) is an f32, int(x) an i32, bool(x) a bool (cast's rules) */
    if ((strcmp(n->name, "float") == 0 || strcmp(n->name, "int") == 0 || strcmp(n->name, "bool") == 0) &&
        !ctx_find(C->ctx, n->name)) {
        if (n->nlist != 1 || n->list[0]->kind == AST_KWARG || n->list[0]->kind == AST_TYPE) {
            diag_error(C->d, n->line, n->col, "'%s' takes one value, as in %s(x)", n->name, n->name);
            return -1;
        }
        const ast_node *lit = n->list[0];
        while (lit->kind == AST_UNARY && lit->op == OP_NEG)
            lit = lit->a;
        if (lit->kind == AST_STRING && n->name[0] == 'f') { /* float("inf"), float("nan") */
            diag_error(C->d, n->line, n->col, "float(\"...\") of a string is not taken: write the literal "
                       "itself, inf, -inf or nan (cast(inf, f64) for an f64)");
            return -1;
        }
        if (lit->kind == AST_INT && n->name[0] == 'i' && lit->ival > INT32_MAX) {
            diag_error(C->d, n->line, n->col, "int(%" PRId64 ") is an i32, which cannot hold it: write "
                       "cast(%" PRId64 ", i64) for an i64", lit->ival, lit->ival);
            return -1;
        }
        if (want_count(C, n, 1, nwant < 0 ? 1 : nwant) < 0 ||
            check_expr(C, e, n->list[0], n->name[0] == 'f' && lit->kind == AST_INT ? CFX_F32 : -1) < 0)
            return -1;
        k->callee = CHECK_CALL_OP;
        k->op = OP_CAST;
        n->ty = n->list[0]->ty;
        n->ty.dtype = n->name[0] == 'f' ? CFX_F32 : n->name[0] == 'i' ? CFX_I32 : CFX_BOOL;
        return 0;
    }
    /* zeros(x.shape), ones((2, 3), dtype=i32), full(x.shape, v), ... */
    if (g < 0 && !ctx_find(C->ctx, n->name) && !(n->flags & AST_F_METHOD)) {
        static const int makes[] = {OP_ZEROS, OP_ONES, OP_IOTA, OP_FULL};
        for (size_t i = 0; i < sizeof makes / sizeof makes[0]; i++) {
            int op = makes[i];
            if (strcmp(n->name, op_spellings[op]) != 0)
                continue;
            int plain = n->nlist == op_arity[op] && n->list[0]->kind == AST_TYPE;
            for (int j = 0; j < n->nlist; j++)
                plain &= n->list[j]->kind != AST_KWARG;
            if (!plain && n->nlist >= 1)
                return check_make(C, e, n, nwant, op);
        }
    }
    /* max([a, b, c]): Python's builtin over a list of values */
    if (reduction_of(n->name) >= 0 && n->nlist == 1 && n->list[0]->kind == AST_LIST && !ctx_find(C->ctx, n->name)) {
        const char *two = strcmp(n->name, "max") == 0   ? "max(max(a, b), c)"
                          : strcmp(n->name, "min") == 0 ? "min(min(a, b), c)"
                          : strcmp(n->name, "sum") == 0 ? "a + b + c"
                          : strcmp(n->name, "any") == 0 ? "a or b or c"
                          : strcmp(n->name, "all") == 0 ? "a and b and c" : NULL;
        if (two)
            diag_error(C->d, n->line, n->col, "%s of a list [a, b, c] is not taken: write %s (or %s of a tensor)",
                       n->name, two, n->name);
        else
            diag_error(C->d, n->line, n->col, "%s of a list [...] is not taken: %s takes a tensor", n->name,
                       n->name);
        return -1;
    }
    /* a reduction along an axis: sum(m, axis=0), argmax(m, 1), max(m, axis=-1, keepdims=true) */
    int rop = reduction_of(n->name), kwargs = 0;
    for (int i = 0; i < n->nlist; i++)
        kwargs |= n->list[i]->kind == AST_KWARG;
    if (rop >= 0 && (kwargs || (n->nlist == 2 && rop != OP_RMAX && rop != OP_RMIN)))
        return check_axis_reduce(C, e, n, rop, nwant);
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
        if ((strcmp(n->name, "max") == 0 || strcmp(n->name, "min") == 0) && n->nlist > 2)
            diag_error(C->d, n->line, n->col, "'%s' takes a tensor (and axis=) or two values, got %d: for "
                       "three values write %s(%s(a, b), c)", n->name, n->nlist, n->name, n->name);
        else if (found > 1)
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
    for (int i = 0; i < C->m->nbroken; i++)
        if (strcmp(C->m->broken[i], n->name) == 0)
            return -1; /* a graph whose header did not parse: reported there */
    /* numpy's and Python's names for what cfx writes otherwise */
    static const char *const other[][2] = {
        {"isnan", "x != x"}, {"isinf", "abs(x) == inf"}, {"clip", "min(max(x, lo), hi)"},
        {"minimum", "min(a, b)"}, {"maximum", "max(a, b)"}, {"zeros_like", "zeros(x.shape)"},
        {"ones_like", "ones(x.shape)"}, {"reversed", "for i in range(n - 1, -1, -1)"}, {"ord", "the code as a number"},
        {"chr", "the code as a number"}, {"square", "x * x"}, {"power", "a ** b"}};
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        if (strcmp(n->name, other[i][0]) == 0 && !(n->flags & AST_F_METHOD)) {
            diag_error(C->d, n->line, n->col, "unknown op '%s': write %s", n->name, other[i][1]);
            for (int j = 0; j < n->nlist; j++)
                if (n->list[j]->kind != AST_TYPE)
                    check_expr(C, e, n->list[j], -1);
            return -1;
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

/* ---- the environment: notes, variables, interned types, the per-path state ------------------- */
static check_note *check_note_of(checker *C, ast_node *n)
{
    if (!n->note) {
        n->note = ast_alloc(C->m->arena, sizeof(check_note));
        if (!n->note) {
            C->oom = 1;
            memset(&C->dummy, 0, sizeof C->dummy);
            return &C->dummy;
        }
    }
    return n->note;
}

/* FNV-1a, for the name and type hash tables. */
static uint32_t hash_bytes(const void *p, size_t n, uint32_t h)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

static int check_var_find(checker *C, const char *name)
{
    if (!C->hashcap || !name) /* no name: a target that is no variable (reported where it is) */
        return -1;
    uint32_t mask = (uint32_t)C->hashcap - 1;
    for (uint32_t h = hash_bytes(name, strlen(name), 2166136261u) & mask;; h = (h + 1) & mask) {
        int32_t v = C->name_hash[h] - 1;
        if (v < 0)
            return -1;
        if (strcmp(C->names[v], name) == 0)
            return v;
    }
}

static void hash_insert(checker *C, int v)
{
    uint32_t mask = (uint32_t)C->hashcap - 1;
    uint32_t h = hash_bytes(C->names[v], strlen(C->names[v]), 2166136261u) & mask;
    while (C->name_hash[h])
        h = (h + 1) & mask;
    C->name_hash[h] = v + 1;
}

static int check_var_add(checker *C, const char *name)
{
    int v = check_var_find(C, name);
    if (v >= 0)
        return v;
    if (C->nvars == C->capvars) {
        int cap = C->capvars ? C->capvars * 2 : 16;
        const char **nn = realloc(C->names, (size_t)cap * sizeof *nn);
        if (!nn) {
            C->oom = 1;
            return -1;
        }
        C->names = nn;
        C->capvars = cap;
    }
    if (2 * (C->nvars + 1) > C->hashcap) {
        int cap = C->hashcap ? C->hashcap * 2 : 64;
        int32_t *t = calloc((size_t)cap, sizeof *t);
        if (!t) {
            C->oom = 1;
            return -1;
        }
        free(C->name_hash);
        C->name_hash = t;
        C->hashcap = cap;
        for (int i = 0; i < C->nvars; i++)
            hash_insert(C, i);
    }
    C->names[C->nvars] = name;
    hash_insert(C, C->nvars);
    return C->nvars++;
}

static void check_vars_reset(checker *C)
{
    C->nvars = 0;
    if (C->name_hash)
        memset(C->name_hash, 0, (size_t)C->hashcap * sizeof *C->name_hash);
}

static uint32_t type_hash(const cfx_type *t)
{
    uint32_t h = hash_bytes(&t->dtype, sizeof t->dtype, 2166136261u);
    h = hash_bytes(&t->rank, sizeof t->rank, h);
    for (int i = 0; i < (t->rank < 0 ? 1 : t->rank) && i < CFX_TYPE_MAX_RANK; i++)
        h = hash_bytes(&t->dims[i], sizeof t->dims[i], h);
    return h;
}

/* The id of type t, interned; 0 (with oom set) when out of memory. */
static int32_t check_type_id(checker *C, const cfx_type *t)
{
    if (C->typehashcap) {
        uint32_t mask = (uint32_t)C->typehashcap - 1;
        for (uint32_t h = type_hash(t) & mask;; h = (h + 1) & mask) {
            int32_t id = C->type_hash[h] - 1;
            if (id < 0)
                break;
            if (ast_same_type(&C->types[id], t))
                return id;
        }
    }
    if (C->ntypes == C->captypes) {
        int32_t cap = C->captypes ? C->captypes * 2 : 32;
        cfx_type *nt = realloc(C->types, (size_t)cap * sizeof *nt);
        if (!nt) {
            C->oom = 1;
            return 0;
        }
        C->types = nt;
        C->captypes = cap;
    }
    if (2 * (C->ntypes + 1) > C->typehashcap) {
        int32_t cap = C->typehashcap ? C->typehashcap * 2 : 64;
        int32_t *th = calloc((size_t)cap, sizeof *th);
        if (!th) {
            C->oom = 1;
            return 0;
        }
        free(C->type_hash);
        C->type_hash = th;
        C->typehashcap = cap;
        for (int32_t i = 0; i < C->ntypes; i++) {
            uint32_t h = type_hash(&C->types[i]) & (uint32_t)(cap - 1);
            while (th[h])
                h = (h + 1) & (uint32_t)(cap - 1);
            th[h] = i + 1;
        }
    }
    int32_t id = C->ntypes++;
    C->types[id] = *t;
    uint32_t mask = (uint32_t)C->typehashcap - 1, h = type_hash(t) & mask;
    while (C->type_hash[h])
        h = (h + 1) & mask;
    C->type_hash[h] = id + 1;
    return id;
}

static int32_t check_add_conflict(checker *C, const conflict *c)
{
    if (C->nconflicts == C->capconflicts) {
        int32_t cap = C->capconflicts ? C->capconflicts * 2 : 16;
        conflict *nc = realloc(C->conflicts, (size_t)cap * sizeof *nc);
        if (!nc) {
            C->oom = 1;
            return -1;
        }
        C->conflicts = nc;
        C->capconflicts = cap;
    }
    C->conflicts[C->nconflicts] = *c;
    return C->nconflicts++;
}

static int check_env_new(checker *C, env *e)
{
    e->live = 1;
    e->v = calloc((size_t)(C->nvars ? C->nvars : 1), sizeof(vstate));
    if (!e->v)
        C->oom = 1;
    return e->v ? 0 : -1;
}

static void check_env_free(env *e)
{
    free((vstate *)e->v);
    e->v = NULL;
}

static vstate *env_set(checker *C, env *e, int v)
{
    vstate *w = (vstate *)&e->v[v]; /* e->v is the environment's own array */
    if (!C->open)
        return w; /* nothing to undo at the top of a graph */
    if (C->ntrail == C->captrail) {
        int cap = C->captrail ? C->captrail * 2 : 64;
        undo *grown = C->captrail < INT32_MAX / 2 ? realloc(C->trail, (size_t)cap * sizeof *grown) : NULL;
        if (!grown) {
            C->oom = 1; /* the check ends with "out of memory"; the write still lands */
            return w;
        }
        C->trail = grown;
        C->captrail = cap;
    }
    C->trail[C->ntrail++] = (undo){v, *w};
    return w;
}

static void env_restore(checker *C, env *e, int mark, int live)
{
    vstate *v = (vstate *)e->v;
    while (C->ntrail > mark) {
        C->ntrail--;
        v[C->trail[C->ntrail].var] = C->trail[C->ntrail].old;
    }
    e->live = live;
}

static int check_new_stamp(checker *C) { return ++C->stampgen; }

/* ---- the call graph: its strongly connected components and inlined sizes --------------------- */
/* Appends to *edges the graphs that tree n calls (each once: stamp[h] == from marks h seen). */
typedef struct edgelist {
    int *v;
    int n, cap;
} edgelist;

static int push_edge(checker *C, edgelist *e, int v)
{
    if (e->n == e->cap) {
        int cap = e->cap ? e->cap * 2 : 64;
        int *nv = realloc(e->v, (size_t)cap * sizeof *nv);
        if (!nv) {
            C->oom = 1;
            return -1;
        }
        e->v = nv;
        e->cap = cap;
    }
    e->v[e->n++] = v;
    return 0;
}

/* Also counts the nodes of tree n into *nodes and lists every call site (a graph called
 * twice is listed twice) in *sites. */
static void collect_calls(checker *C, const ast_node *n, int from, int *stamp, edgelist *edges,
                          edgelist *sites, int64_t *nodes, int depth)
{
    if (!n || depth > 4 * PARSE_MAX_DEPTH || C->oom)
        return;
    (*nodes)++;
    if (n->kind == AST_CALL) {
        int g = check_graph_find(C, n->name);
        if (g >= 0)
            push_edge(C, sites, g);
        if (g >= 0 && stamp[g] != from) {
            stamp[g] = from;
            push_edge(C, edges, g);
        }
    }
    collect_calls(C, n->a, from, stamp, edges, sites, nodes, depth + 1);
    collect_calls(C, n->b, from, stamp, edges, sites, nodes, depth + 1);
    collect_calls(C, n->c, from, stamp, edges, sites, nodes, depth + 1);
    collect_calls(C, n->d, from, stamp, edges, sites, nodes, depth + 1);
    for (int i = 0; i < n->nlist; i++)
        collect_calls(C, n->list[i], from, stamp, edges, sites, nodes, depth + 1);
}

static int cmp_by_scc(const void *x, const void *y)
{
    const int *a = x, *b = y; /* pairs (scc, graph) */
    return a[0] != b[0] ? (a[0] > b[0]) - (a[0] < b[0]) : (a[1] > b[1]) - (a[1] < b[1]);
}

/* size[g] = g's own nodes + the size of every graph it calls, once per call site: an estimate
 * of its program once calls are inlined, so that a file whose calls multiply (f calls g twice,
 * g calls h twice, ...) is rejected before anything is built. Tarjan numbers components
 * callees first, so walking components in order sees every callee before its callers. */
static int inline_sizes(checker *C, const int *site_start, const edgelist *sites)
{
    int n = C->m->ngraphs;
    int *order = malloc(((size_t)n + 1) * 2 * sizeof *order);
    if (!order)
        return -1;
    for (int g = 0; g < n; g++) {
        order[2 * g] = C->scc[g];
        order[2 * g + 1] = g;
    }
    qsort(order, (size_t)n, 2 * sizeof *order, cmp_by_scc);
    const int64_t cap = (int64_t)1 << 40;
    for (int i = 0; i < n; i++) {
        int g = order[2 * i + 1];
        int64_t total = C->size[g];
        for (int k = site_start[g]; k < site_start[g + 1]; k++) {
            int h = sites->v[k];
            if (C->scc[h] != C->scc[g]) /* a recursive call is an error of its own */
                total += C->size[h];
            if (total > cap)
                total = cap;
        }
        C->size[g] = total;
    }
    free(order);
    return 0;
}

/* The call graph's strongly connected components (Tarjan's algorithm, iterative so a long
 * chain of calls cannot exhaust the stack): a call from g to h closes a cycle exactly when g
 * and h lie in one component. Fills C->scc; -1 when out of memory. */
static int check_call_sccs(checker *C)
{
    int n = C->m->ngraphs, rc = -1;
    edgelist edges = {0}, sites = {0};
    int *start = calloc((size_t)n + 1, sizeof *start), *stamp = malloc(((size_t)n + 1) * sizeof *stamp);
    int *site_start = calloc((size_t)n + 1, sizeof *site_start);
    C->size = calloc((size_t)n + 1, sizeof *C->size);
    int *index = malloc(((size_t)n + 1) * sizeof *index), *low = malloc(((size_t)n + 1) * sizeof *low);
    int *stack = malloc(((size_t)n + 1) * sizeof *stack), *frame = malloc(((size_t)n + 1) * sizeof *frame);
    int *pos = malloc(((size_t)n + 1) * sizeof *pos);
    uint8_t *on = calloc((size_t)n + 1, 1);
    C->scc = malloc(((size_t)n + 1) * sizeof *C->scc);
    if (!start || !stamp || !index || !low || !stack || !frame || !pos || !on || !C->scc || !site_start ||
        !C->size)
        goto done;
    for (int g = 0; g < n; g++)
        stamp[g] = -1;
    for (int g = 0; g < n; g++) {
        start[g] = edges.n;
        site_start[g] = sites.n;
        collect_calls(C, C->m->graphs[g].body, g, stamp, &edges, &sites, &C->size[g], 0);
    }
    start[n] = edges.n;
    site_start[n] = sites.n;
    if (C->oom)
        goto done;
    for (int g = 0; g < n; g++)
        index[g] = -1;
    int counter = 0, sp = 0, ncomp = 0;
    for (int root = 0; root < n; root++) {
        if (index[root] >= 0)
            continue;
        int fp = 0;
        frame[fp] = root;
        pos[fp++] = start[root];
        index[root] = low[root] = counter++;
        stack[sp++] = root;
        on[root] = 1;
        while (fp > 0) {
            int v = frame[fp - 1];
            if (pos[fp - 1] < start[v + 1]) {
                int w = edges.v[pos[fp - 1]++];
                if (index[w] < 0) {
                    index[w] = low[w] = counter++;
                    stack[sp++] = w;
                    on[w] = 1;
                    frame[fp] = w;
                    pos[fp++] = start[w];
                } else if (on[w] && index[w] < low[v]) {
                    low[v] = index[w];
                }
                continue;
            }
            fp--;
            if (low[v] == index[v]) {
                int w;
                do {
                    w = stack[--sp];
                    on[w] = 0;
                    C->scc[w] = ncomp;
                } while (w != v);
                ncomp++;
            }
            if (fp > 0 && low[v] < low[frame[fp - 1]])
                low[frame[fp - 1]] = low[v];
        }
    }
    rc = inline_sizes(C, site_start, &sites);
done:
    free(edges.v);
    free(sites.v);
    free(site_start);
    free(start);
    free(stamp);
    free(index);
    free(low);
    free(stack);
    free(frame);
    free(pos);
    free(on);
    return rc;
}
