/* check.c: names, types, constant folding and joins across control flow (see check.h).
 *
 * The checker walks each graph once, in program order, carrying an environment: for each
 * variable its state on the paths reaching this point (assigned with a type, assigned on
 * some paths only, assigned only inside an earlier loop, ...) and, for a scalar, its value
 * when that value is known on every path. Branches are checked in copies of the
 * environment and joined afterwards. A loop body is checked once: every variable the body
 * assigns (found by a syntactic scan) is treated as unknown at the loop head, so the one
 * pass is valid for every iteration and no fixpoint is needed.
 *
 * After an error an expression is "in error": whatever uses it reports nothing more, so
 * one mistake gives one message, and independent mistakes each give theirs.
 *
 * Expressions and calls are in check_expr.c; what both halves share is in check_int.h.
 * The environment (variables and interned types) and the call graph with its inlining sizes
 * are in check_env.c.
 */
#include "check_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"
#include "parse.h"
#include "program.h"

/* All graphs of a file together, once calls are inlined: bounds the work of lowering. */
#define CHECK_MAX_MODULE_NODES (1 << 24)

/* ---- statements ------------------------------------------------------------------------------- */
static void check_block(checker *C, env *e, ast_node *blk);

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

/* Assigns type t (line `line`) to variable v, as `x = E` does; `src` is the value, or NULL
 * for a loop variable or a multi-result call. Returns -1 after a type error. */
static int assign_var(checker *C, env *e, ast_node *at, int v, const cfx_type *t, const check_note *val)
{
    char b1[TYBUF], b2[TYBUF];
    vstate *s = &e->v[v];
    int32_t id = check_type_id(C, t);
    const cfx_type *fixed = C->is_result[v] ? &C->declared[v] : s->st == V_DEF ? &C->types[s->ty] : NULL;
    if (fixed && !check_same_type(fixed, t)) {
        diag_error(C->d, at->line, at->col, "'%s' has type %s and cannot be assigned %s", C->names[v],
                   tystr(fixed, b1), tystr(t, b2));
        if (s->st != V_DEF)
            s->st = V_ERROR;
        return -1;
    }
    s->st = V_DEF;
    s->ty = id;
    s->line = at->line;
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
    return e->v[v].st == V_DEF ? (int)C->types[e->v[v].ty].dtype : -1;
}

static void mark_error(env *e, int v)
{
    if (v >= 0 && e->v[v].st != V_DEF)
        e->v[v].st = V_ERROR;
}

static void check_assign(checker *C, env *e, ast_node *n)
{
    char b1[TYBUF], b2[TYBUF];
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
            diag_error(C->d, n->line, n->col, "assigning several names needs a call that returns several results");
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
                mark_error(e, v);
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
    if (t->kind == AST_NAME) {
        int v = check_var_find(C, t->name);
        if (check_expr(C, e, n->a, want_for_var(C, e, v)) < 0) {
            mark_error(e, v);
            return;
        }
        check_note_of(C, t)->known = 0;
        t->ty = n->a->ty;
        if (assign_var(C, e, t, v, &n->a->ty, n->a->note) == 0)
            t->ty = C->types[e->v[v].ty];
        return;
    }
    if (t->kind == AST_INDEX && t->a && t->a->kind == AST_NAME) {
        /* x[i] = E: x keeps its type; E has the row's type */
        ast_node *x = t->a;
        int rx = check_expr(C, e, x, -1);
        char what[80];
        check_tensor_name(x, what, sizeof what);
        if (rx < 0) {
            check_expr(C, e, t->b, CFX_I32);
            check_expr(C, e, n->a, -1);
            return;
        }
        int ri = check_index(C, e, t, &x->ty, what, t->b);
        if (ri < 0) {
            if (x->ty.rank >= 1)
                check_expr(C, e, n->a, x->ty.dtype);
            return;
        }
        cfx_type row = row_type(&x->ty);
        t->ty = row;
        check_note_of(C, t)->known = 0;
        if (check_expr(C, e, n->a, row.dtype) < 0)
            return;
        if (!check_same_type(&n->a->ty, &row)) {
            diag_error(C->d, n->a->line, n->a->col, "a row of %s is %s and cannot be assigned %s", what,
                       tystr(&row, b1), tystr(&n->a->ty, b2));
            return;
        }
        /* x is a tensor (rank >= 1), so it had no known value to forget */
        return;
    }
    diag_error(C->d, t->line, t->col, "only a name or a row x[i] can be assigned");
}

/* Calls fn(name, arg) for every variable a statement assigns (targets and loop variables)
 * until fn returns nonzero, and returns that value (0 when none did): the one walk behind
 * collect_assigned and check_assigns. */
static int each_assigned(const ast_node *n, int (*fn)(const char *name, void *arg), void *arg)
{
    if (!n)
        return 0;
    switch (n->kind) {
    case AST_ASSIGN:
        for (int i = 0; i < n->nlist; i++) {
            const ast_node *t = n->list[i];
            if (t->kind == AST_INDEX)
                t = t->a;
            if (t && t->kind == AST_NAME) {
                int r = fn(t->name, arg);
                if (r)
                    return r;
            }
        }
        return 0;
    case AST_FOR_RANGE:
    case AST_FOR_EACH: {
        int r = fn(n->name, arg);
        return r ? r : each_assigned(n->d, fn, arg);
    }
    case AST_IF:
    case AST_SWITCH:
    case AST_BLOCK:
        for (int i = 0; i < n->nlist; i++) {
            int r = each_assigned(n->list[i], fn, arg);
            if (r)
                return r;
        }
        return 0;
    case AST_ARM:
    case AST_CASE:
    case AST_WHILE:
        return each_assigned(n->b, fn, arg);
    default:
        return 0;
    }
}

typedef struct mark_ctx {
    checker *C;
    uint8_t *set;
} mark_ctx;

static int mark_assigned(const char *name, void *arg)
{
    mark_ctx *a = (mark_ctx *)arg;
    int v = check_var_find(a->C, name);
    if (v >= 0)
        a->set[v] = 1;
    return 0;
}

/* Marks in `set` every variable that a statement assigns (targets and loop variables). */
static void collect_assigned(checker *C, const ast_node *n, uint8_t *set)
{
    mark_ctx a = {C, set};
    each_assigned(n, mark_assigned, &a);
}

static int is_name(const char *name, void *arg)
{
    return strcmp(name, (const char *)arg) == 0;
}

int check_assigns(const ast_node *n, const char *name)
{
    return each_assigned(n, is_name, (void *)name);
}

/* Joins the environments of the paths leaving a branch statement into out. */
static void join(checker *C, env *out, env *arms, const char *const *labels, int n)
{
    int live = 0;
    for (int i = 0; i < n; i++)
        live += arms[i].live;
    out->live = live > 0;
    if (!live)
        return;
    for (int v = 0; v < C->nvars; v++) {
        const vstate *first = NULL;
        int first_arm = -1, ndef = 0, nlive = 0, any_loop = 0, any_err = 0, any_conflict = 0;
        int conflict_arm = -1, other = -1, loop_line = 0, same_known = 1;
        for (int i = 0; i < n; i++) {
            if (!arms[i].live)
                continue;
            const vstate *s = &arms[i].v[v];
            nlive++;
            if (s->st == V_DEF) {
                ndef++;
                if (!first) {
                    first = s;
                    first_arm = i;
                } else if (first->ty != s->ty) {
                    if (other < 0)
                        other = i;
                } else if (!first->known || !s->known || first->ival != s->ival ||
                           memcmp(&first->rval, &s->rval, sizeof(double)) != 0) {
                    same_known = 0;
                }
            } else if (s->st == V_LOOP) {
                if (!any_loop)
                    loop_line = s->line;
                any_loop = 1;
            } else if (s->st == V_ERROR) {
                any_err = 1;
            } else if (s->st == V_CONFLICT && conflict_arm < 0) {
                any_conflict = 1;
                conflict_arm = i;
            }
        }
        vstate *o = &out->v[v];
        if (any_err) {
            o->st = V_ERROR;
        } else if (any_conflict) {
            *o = arms[conflict_arm].v[v];
        } else if (other >= 0) {
            const vstate *s2 = &arms[other].v[v];
            conflict c;
            memset(&c, 0, sizeof c);
            c.ty2 = s2->ty;
            c.line2 = s2->line;
            snprintf(c.lab, sizeof c.lab, "%s", labels[first_arm]);
            snprintf(c.lab2, sizeof c.lab2, "%s", labels[other]);
            int32_t ci = check_add_conflict(C, &c);
            int32_t ty = first->ty, line = first->line;
            memset(o, 0, sizeof *o);
            o->st = ci >= 0 ? V_CONFLICT : V_ERROR;
            o->ty = ty;
            o->line = line;
            o->conflict = ci;
        } else if (ndef == nlive) {
            *o = *first;
            o->known = first->known && same_known;
        } else if (any_loop) {
            memset(o, 0, sizeof *o);
            o->st = V_LOOP;
            o->line = loop_line;
        } else if (ndef > 0) {
            memset(o, 0, sizeof *o);
            o->st = V_PARTIAL;
        } else {
            int partial = 0;
            for (int i = 0; i < n; i++)
                if (arms[i].live && arms[i].v[v].st == V_PARTIAL)
                    partial = 1;
            memset(o, 0, sizeof *o);
            o->st = partial ? V_PARTIAL : V_UNDEF;
        }
    }
}

/* The environment after a loop: what held before it, with every variable the body assigns
 * unknown, or, when the loop defined it first, marked as belonging to the loop. */
static void after_loop(checker *C, env *e, const uint8_t *assigned, int line)
{
    for (int v = 0; v < C->nvars; v++) {
        if (!assigned[v])
            continue;
        vstate *s = &e->v[v];
        if (s->st == V_DEF) {
            s->known = 0;
        } else if (s->st != V_ERROR && s->st != V_PARTIAL) {
            memset(s, 0, sizeof *s);
            s->st = V_LOOP;
            s->line = line;
        }
    }
}

/* Checks a loop body in a copy of e in which the assigned variables are unknown. */
static int loop_body(checker *C, env *e, ast_node *body, const uint8_t *assigned, int loopvar,
                     const cfx_type *loopvar_ty, ast_node *at, int *exits, int *breaks)
{
    env b;
    if (check_env_copy(C, &b, e) < 0)
        return -1;
    for (int v = 0; v < C->nvars; v++)
        if (assigned[v])
            b.v[v].known = 0;
    if (loopvar >= 0 && assign_var(C, &b, at, loopvar, loopvar_ty, NULL) < 0)
        b.v[loopvar].st = V_ERROR;
    loopctx lc = {C->loop, 0, 0};
    C->loop = &lc;
    check_block(C, &b, body);
    C->loop = lc.up;
    *exits = lc.exits;
    *breaks = lc.breaks;
    check_env_free(&b);
    return 0;
}

static uint8_t *assigned_set(checker *C, const ast_node *loop)
{
    uint8_t *set = calloc((size_t)(C->nvars ? C->nvars : 1), 1);
    if (!set) {
        C->oom = 1;
        return NULL;
    }
    collect_assigned(C, loop, set);
    return set;
}

static void check_while(checker *C, env *e, ast_node *n)
{
    uint8_t *set = assigned_set(C, n);
    if (!set)
        return;
    env head;
    if (check_env_copy(C, &head, e) < 0) {
        free(set);
        return;
    }
    for (int v = 0; v < C->nvars; v++)
        if (set[v])
            head.v[v].known = 0;
    int c = check_cond(C, &head, n->a, "condition");
    check_env_free(&head);
    if (c == 0) {
        free(set); /* while false: the body is dropped */
        return;
    }
    int exits = 0, breaks = 0;
    loop_body(C, e, n->b, set, -1, NULL, n, &exits, &breaks);
    if (c == 1 && !exits)
        diag_error(C->d, n->line, n->col, "infinite loop: 'while true' has no break");
    after_loop(C, e, set, n->line);
    if (c == 1 && !breaks)
        e->live = 0; /* left only by return: nothing after the loop is reached */
    free(set);
}

static void check_for_range(checker *C, env *e, ast_node *n)
{
    char b1[TYBUF];
    ast_node *args[3] = {n->a, n->b, n->c};
    int bad = 0;
    for (int i = 0; i < 3; i++) {
        if (!args[i])
            continue;
        if (check_expr(C, e, args[i], CFX_I32) < 0) {
            bad = 1;
            continue;
        }
        if (args[i]->ty.dtype != CFX_I32 || args[i]->ty.rank != 0) {
            diag_error(C->d, args[i]->line, args[i]->col, "the arguments of 'range' must be i32 scalars, got %s",
                       tystr(&args[i]->ty, b1));
            bad = 1;
        }
    }
    if (!bad && n->c && ((check_note *)n->c->note)->known && ((check_note *)n->c->note)->ival == 0) {
        diag_error(C->d, n->c->line, n->c->col, "the step of 'range' must not be 0");
        bad = 1;
    }
    check_note_of(C, n)->assigns_loop_var = check_assigns(n->d, n->name);
    uint8_t *set = assigned_set(C, n);
    if (!set)
        return;
    int v = check_var_find(C, n->name);
    cfx_type i32 = scalar_type(CFX_I32);
    int exits = 0, breaks = 0;
    loop_body(C, e, n->d, set, v, &i32, n, &exits, &breaks);
    after_loop(C, e, set, n->line);
    free(set);
}

static void check_for_each(checker *C, env *e, ast_node *n)
{
    char b1[TYBUF];
    int ok = check_expr(C, e, n->a, -1) == 0;
    if (ok && n->a->ty.rank < 1) {
        diag_error(C->d, n->a->line, n->a->col, "'for' needs a tensor of rank >= 1 to iterate, got %s",
                   tystr(&n->a->ty, b1));
        ok = 0;
    }
    uint8_t *set = assigned_set(C, n);
    if (!set)
        return;
    int v = check_var_find(C, n->name);
    cfx_type row = ok ? row_type(&n->a->ty) : scalar_type(CFX_I32);
    int exits = 0, breaks = 0;
    if (!ok) {
        /* still check the body, with the loop variable quiet */
        env b;
        if (check_env_copy(C, &b, e) == 0) {
            for (int i = 0; i < C->nvars; i++)
                if (set[i])
                    b.v[i].known = 0;
            if (v >= 0)
                b.v[v].st = V_ERROR;
            loopctx lc = {C->loop, 0, 0};
            C->loop = &lc;
            check_block(C, &b, n->d);
            C->loop = lc.up;
            check_env_free(&b);
        }
    } else {
        loop_body(C, e, n->d, set, v, &row, n, &exits, &breaks);
    }
    after_loop(C, e, set, n->line);
    free(set);
}

/* The paths out of an if or a switch: each arm's environment and its label, for join. */
typedef struct arm_set {
    env *envs;
    char (*labels)[16];
    const char **labp; /* labels[i], as join takes them */
    int cap, n;
} arm_set;

/* Room for `cap` paths; -1 (and C->oom) when out of memory. arms_close frees it either way. */
static int arms_open(checker *C, arm_set *a, int cap)
{
    memset(a, 0, sizeof *a);
    a->cap = cap;
    a->envs = calloc((size_t)cap, sizeof *a->envs);
    a->labels = calloc((size_t)cap, sizeof *a->labels);
    a->labp = calloc((size_t)cap, sizeof *a->labp);
    if (!a->envs || !a->labels || !a->labp) {
        C->oom = 1;
        return -1;
    }
    return 0;
}

/* A new path that starts from e, named `label`; NULL when out of memory. */
static env *arms_add(checker *C, arm_set *a, const env *e, const char *label)
{
    env *x = &a->envs[a->n];
    if (check_env_copy(C, x, e) < 0)
        return NULL;
    snprintf(a->labels[a->n], sizeof a->labels[a->n], "%s", label);
    a->labp[a->n] = a->labels[a->n];
    a->n++;
    return x;
}

static void arms_close(arm_set *a)
{
    for (int i = 0; a->envs && i < a->cap; i++)
        check_env_free(&a->envs[i]);
    free(a->envs);
    free(a->labels);
    free(a->labp);
}

static void check_if(checker *C, env *e, ast_node *n)
{
    arm_set arms;
    int taken = 0, has_else = 0;
    if (arms_open(C, &arms, n->nlist + 1) < 0)
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
        check_block(C, x, arm->b);
        if (c == 1)
            taken = 1; /* the remaining arms are dead */
    }
    if (!taken && !has_else) {
        /* no else: the path that takes no arm keeps e as it is */
        if (!arms_add(C, &arms, e, "else"))
            goto done;
    }
    if (arms.n > 0)
        join(C, e, arms.envs, arms.labp, arms.n);
done:
    arms_close(&arms);
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
    for (int i = 0; i < n->nlist; i++) {
        ast_node *cs = n->list[i];
        if (cs->flags & AST_F_DEFAULT) {
            if (ndefault++)
                diag_error(C->d, cs->line, cs->col, "'switch' has more than one default");
            continue;
        }
        if (cs->ival < INT32_MIN || cs->ival > INT32_MAX)
            diag_error(C->d, cs->line, cs->col, "case %" PRId64 " does not fit in i32", cs->ival);
        for (int j = 0; j < i; j++)
            if (!(n->list[j]->flags & AST_F_DEFAULT) && n->list[j]->ival == cs->ival) {
                diag_error(C->d, cs->line, cs->col, "duplicate case %" PRId64, cs->ival);
                break;
            }
    }
    check_note *k = ok ? n->a->note : NULL;
    arm_set arms;
    int has_default = 0;
    if (arms_open(C, &arms, n->nlist + 1) < 0)
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
    }
    if ((k && k->known) ? chosen < 0 : !has_default) {
        if (!arms_add(C, &arms, e, "default"))
            goto done;
    }
    join(C, e, arms.envs, arms.labp, arms.n);
done:
    arms_close(&arms);
}

/* Every result must be assigned, with its type, where the graph ends or returns. */
static void check_results(checker *C, env *e, int line, int col, int at_return)
{
    const ast_graph *g = &C->m->graphs[C->gi];
    for (int i = 0; i < g->nresults; i++) {
        int v = check_var_find(C, g->results[i].name);
        vstate *s = &e->v[v];
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

/* ---- graphs ------------------------------------------------------------------------------------ */
static void collect_vars(checker *C, const ast_node *n)
{
    if (!n)
        return;
    switch (n->kind) {
    case AST_ASSIGN:
        for (int i = 0; i < n->nlist; i++)
            if (n->list[i]->kind == AST_NAME)
                check_var_add(C, n->list[i]->name);
        return;
    case AST_FOR_RANGE:
    case AST_FOR_EACH:
        check_var_add(C, n->name);
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

static void check_graph(checker *C, int gi)
{
    ast_graph *g = &C->m->graphs[gi];
    C->gi = gi;
    check_vars_reset(C);
    C->loop = NULL;
    env e = {0};
    /* a graph defined twice was reported by the parser */
    for (int i = 0; i < g->nparams; i++) {
        if (check_var_find(C, g->params[i].name) >= 0)
            diag_error(C->d, g->params[i].line, g->params[i].col, "'%s' is declared twice", g->params[i].name);
        check_var_add(C, g->params[i].name);
        check_written_type(C, &g->params[i].type, g->params[i].line, g->params[i].col);
    }
    for (int i = 0; i < g->nresults; i++) {
        if (check_var_find(C, g->results[i].name) >= 0)
            diag_error(C->d, g->results[i].line, g->results[i].col, "'%s' is declared twice", g->results[i].name);
        check_var_add(C, g->results[i].name);
        check_written_type(C, &g->results[i].type, g->results[i].line, g->results[i].col);
    }
    collect_vars(C, g->body);
    if (C->oom)
        return;
    free(C->declared);
    free(C->is_result);
    C->declared = calloc((size_t)C->nvars + 1, sizeof *C->declared);
    C->is_result = calloc((size_t)C->nvars + 1, 1);
    if (!C->declared || !C->is_result || check_env_new(C, &e) < 0) {
        C->oom = 1;
        goto done;
    }
    for (int i = 0; i < g->nparams; i++) {
        int v = check_var_find(C, g->params[i].name);
        e.v[v].st = V_DEF;
        e.v[v].ty = check_type_id(C, &g->params[i].type);
        e.v[v].line = g->params[i].line;
    }
    for (int i = 0; i < g->nresults; i++) {
        int v = check_var_find(C, g->results[i].name);
        C->is_result[v] = 1;
        C->declared[v] = g->results[i].type;
    }
    check_block(C, &e, g->body);
    if (e.live)
        check_results(C, &e, 0, 0, 0);
done:
    check_env_free(&e);
}

int check_module(ast_module *m, const cfx_context *ctx, diag *d)
{
    int before = d->errors;
    checker C;
    memset(&C, 0, sizeof C);
    C.m = m;
    C.ctx = ctx;
    C.d = d;
    C.gsorted = malloc(((size_t)m->ngraphs + 1) * sizeof *C.gsorted);
    if (C.gsorted) {
        for (int g = 0; g < m->ngraphs; g++)
            C.gsorted[g] = (struct named){m->graphs[g].name, g};
        qsort(C.gsorted, (size_t)m->ngraphs, sizeof *C.gsorted, cmp_named);
    }
    if (!C.gsorted || check_call_sccs(&C) < 0) {
        diag_error(d, 1, 1, "out of memory");
        free(C.gsorted);
        free(C.scc);
        free(C.size);
        return d->errors - before;
    }
    /* inlining must not multiply a file into something huge: each graph, and all together */
    int64_t all = 0;
    for (int g = 0; g < m->ngraphs; g++) {
        all += C.size[g];
        if (C.size[g] > LOWER_MAX_RECORDS)
            diag_error(d, m->graphs[g].line, m->graphs[g].col,
                       "graph '%s' is too large: more than %d nodes once its calls are inlined",
                       m->graphs[g].name, LOWER_MAX_RECORDS);
        else if (all > CHECK_MAX_MODULE_NODES) {
            diag_error(d, m->graphs[g].line, m->graphs[g].col,
                       "the file is too large: more than %d nodes once graph calls are inlined",
                       CHECK_MAX_MODULE_NODES);
            break;
        }
    }
    for (int gi = 0; gi < m->ngraphs && !C.oom; gi++)
        check_graph(&C, gi);
    if (C.oom)
        diag_error(d, 1, 1, "out of memory");
    free(C.gsorted);
    free(C.scc);
    free(C.size);
    free(C.names);
    free(C.name_hash);
    free(C.types);
    free(C.type_hash);
    free(C.conflicts);
    free(C.declared);
    free(C.is_result);
    return d->errors - before;
}
