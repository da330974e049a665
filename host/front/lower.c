/* lower.c: checked syntax tree -> records (see lower.h).
 *
 * Decisions a reader of `cfx dump` should know:
 * - Every variable is one slot per (name, type) in its graph instance; parameters are the
 *   input slots themselves (assigning a parameter changes only the graph's copy, so the
 *   input slot may be written) and results are the result slots, so `return` is a plain
 *   jump to the HALT.
 * - `x = E` writes E's last record straight into x's slot when that is safe: elementwise
 *   records read element e before writing element e; matmul and transpose never write an
 *   operand (they go through a temporary), nor does a short-circuit `and`/`or`.
 * - An expression the checker knows the value of becomes a constant slot; a folded
 *   condition leaves no record at all.
 * - Loops: the test, JUMP_FALSE to the exit, TICK, the body, JUMP back to the test. The TICK
 *   opens each iteration (it carries the loop statement's position), so the budget counts
 *   bodies entered: a loop of n iterations runs n TICKs, and the test that ends it none.
 *   `while C {B}` is `head: C; JUMP_FALSE ->exit; TICK; B; JUMP ->head`; a folded
 *   `while true` is `head: TICK; B; JUMP ->head`; a for loop's step follows the body
 *   (`continue` jumps to it) and its JUMP goes back to the test.
 *   `for i in range(A, B, S)` evaluates A, B and S once, checks a computed S with
 *   CHECK_STEP, and loops while (S > 0 ? i < B : i > B); a literal step picks one test.
 *   Where the step past the last value could wrap an i32 (a step other than 1 or -1 with a
 *   bound not known, or near the i32 limits), the counter is an i64 and i is cast from it.
 *   When the body assigns `i`, a hidden counter drives the loop and i is set from it at
 *   the top of each iteration, as in Python. `for r in x` counts over len(x) rows.
 * - `switch`: a SWITCH record through a dense table indexed by value - min when the case
 *   values are dense enough (span <= 2 * cases + 8), else a chain of `==` tests and
 *   JUMP_TRUEs, so sparse or huge case values never make a huge table.
 * - Row access with an index not known at compile time is preceded by CHECK_INDEX; a
 *   known index is a constant (the checker rejected it if out of range). Integer `/` and
 *   `%` get CHECK_DIVIDE unless the divisor is a known nonzero constant.
 *
 * Statements, control flow and the graph entry come first; expressions, calls, short-circuit
 * `and`/`or`, conditional jumps and the inlining of graph calls follow.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "check.h"
#include "diag.h"
#include "lower.h"
#include "host/program/program.h"
#include "host/runtime/value.h"

typedef struct patchlist {
    int32_t *at; /* records whose jump target is still open */
    int n, cap;
} patchlist;

typedef struct var_slot {
    const char *name;
    cfx_type ty;
    int32_t slot;
} var_slot;

/* A flag of a variable, an i32 slot: FLAG_ASSIGNED for a variable that a read may find without a
 * value (assigned only inside a loop), 0 at the instance's entry and 1 once any assignment of it
 * has run; FLAG_PRESENT for one that may hold None, 0 while it does and 1 while it holds a value
 * (a parameter that defaults to None: what the caller gave). */
enum { FLAG_ASSIGNED, FLAG_PRESENT };
typedef struct flagged_var {
    const char *name;
    int kind;      /* FLAG_* */
    int32_t slot;  /* -1 until open_flags makes it */
    int preset;    /* the slot was given (a parameter's presence): no reset at the entry */
} flagged_var;

/* One graph instance: the top graph, or an inlined call. */
typedef struct scope {
    int graph;
    var_slot *vars;
    int nvars, cap;
    int32_t *hash;  /* open addressing by name: index into vars + 1, 0 for empty */
    int hashcap;    /* a power of two, at least twice nvars */
    patchlist returns;
    flagged_var *flags;
    int nflags, capflags;
} scope;

typedef struct loopl {
    struct loopl *up;
    patchlist breaks;
    patchlist continues;
} loopl;

typedef struct slot_info {
    int64_t count; /* elements, for REC_F_SCALAR */
    int dtype;     /* for the record's dtype field */
    cfx_type ty;   /* for broadcasting */
} slot_info;

typedef struct lowerer {
    const ast_module *m;
    prog_builder *b;
    diag *d;
    int line, col;     /* of the statement being lowered */
    int failed;
    char why[256];
    int why_line, why_col; /* where the failure was met */
    slot_info *info;   /* of each slot made so far (the builder keeps its slots to itself) */
    int32_t nslots, capslots;
    scope *sc;
    loopl *loop;
    int depth;
    int top;           /* the graph being lowered, which calls are inlined into */
    int32_t *consts;   /* per constant of the module: its const slot, made at its first read (one
                          for every read, in the graph and in the calls inlined into it); -1 before */
} lowerer;

/* ---- records, slots, jumps, variables, blocks ---------------------------------- */
static int32_t lower_bind_var(lowerer *L, const char *name, const cfx_type *t, int32_t slot);
static int32_t lower_const_scalar(lowerer *L, int dt, int64_t iv, double rv);
static int32_t lower_emit(lowerer *L, int kind, int op, int32_t a, int32_t b, int32_t c, int32_t d);
static void lower_fail(lowerer *L, const char *why);
static void lower_block(lowerer *L, ast_node *blk);
static void lower_patch_add(lowerer *L, patchlist *pl, int32_t rec);
static void lower_patch_free(patchlist *pl);
static void lower_patch_here(lowerer *L, patchlist *pl);
static void lower_scope_free(scope *sc);
static void lower_set_target(lowerer *L, int32_t rec, int32_t target);
static int32_t lower_temp(lowerer *L, const cfx_type *t);
static int32_t lower_var(lowerer *L, const char *name, const cfx_type *t);

/* ---- expressions, calls and inlining --------------------------------------- */
static void binary_slots(lowerer *L, int op, int cdt, const ast_node *b, int32_t d, int32_t sa, int32_t sb);
static int32_t lower_copy_to(lowerer *L, int32_t want, int32_t s);
static int32_t lower_operand(lowerer *L, ast_node *n, int dt);
static int32_t convert(lowerer *L, int32_t s, int dt);
static void lower_inline_call(lowerer *L, ast_node *call, int32_t *outs, int nouts);
static void lower_jump_if(lowerer *L, ast_node *n, int when, patchlist *pl);
static void lower_kernel_call(lowerer *L, ast_node *n, int32_t *outs, int nouts);
static int32_t lower_expr(lowerer *L, ast_node *n, int32_t want);
static int32_t lower_rows(lowerer *L, ast_node *n, const check_list *l);
static int32_t lower_index(lowerer *L, ast_node *i, int64_t rows, const ast_node *tensor, int dim);
static void check_index(lowerer *L, int32_t s, int64_t rows, const ast_node *tensor, int dim);
static const check_note *lower_note(const ast_node *n);

/* ---- lists ------------------------------------------------------------------------ */
static int32_t list_data(lowerer *L, const check_list *l);
static int32_t list_len(lowerer *L, const check_list *l);
static void lower_list_value(lowerer *L, ast_node *n, const check_list *l);
static int32_t lower_list_item(lowerer *L, ast_node *n, int32_t want);
static void lower_list_set(lowerer *L, ast_node *t, int32_t val, const ast_node *aug);
static int32_t lower_method(lowerer *L, ast_node *n, int32_t want);

/* ---- boxes: x[i, j], x[a:b], x[:, j] -------------------------------------------------- */
static int32_t lower_box(lowerer *L, ast_node *n, int32_t *starts);
static int32_t lower_get_box(lowerer *L, ast_node *n, int32_t want);
static void lower_set_box(lowerer *L, ast_node *t, int32_t val, const ast_node *aug);

static void lower_fail(lowerer *L, const char *why)
{
    if (!L->failed) {
        snprintf(L->why, sizeof L->why, "%s", why);
        L->why_line = L->line;
        L->why_col = L->col;
    }
    L->failed = 1;
}

/* ---- records and slots ------------------------------------------------------------------ */
static int32_t note_slot(lowerer *L, int32_t s)
{
    if (s < 0) {
        lower_fail(L, "the graph needs too many slots");
        return -1;
    }
    if (s >= L->capslots) {
        int32_t cap = L->capslots ? L->capslots * 2 : 64;
        while (cap <= s)
            cap *= 2;
        slot_info *c = realloc(L->info, (size_t)cap * sizeof *c);
        if (!c) {
            lower_fail(L, "out of memory");
            return -1;
        }
        L->info = c;
        L->capslots = cap;
    }
    if (s >= L->nslots)
        L->nslots = s + 1;
    return s;
}

static int32_t new_slot(lowerer *L, const cfx_type *t, enum slot_kind kind, const char *name)
{
    if (L->failed)
        return 0;
    int32_t dims[CFX_MAX_RANK] = {0};
    for (int i = 0; i < t->rank && i < CFX_MAX_RANK; i++)
        dims[i] = (int32_t)t->dims[i];
    int32_t s = note_slot(L, prog_slot(L->b, t->dtype, t->rank, dims, kind, name));
    if (s < 0)
        return 0;
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->dims[i];
    L->info[s].count = n;
    L->info[s].dtype = t->dtype;
    L->info[s].ty = *t;
    return s;
}

static int32_t lower_temp(lowerer *L, const cfx_type *t) { return new_slot(L, t, SLOT_TEMP, NULL); }

static int32_t temp_scalar(lowerer *L, cfx_dtype dt)
{
    cfx_type t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    return lower_temp(L, &t);
}

/* A scalar constant of dtype dt with value iv (integers, bool) or rv (reals). */
static int32_t lower_const_scalar(lowerer *L, int dt, int64_t iv, double rv)
{
    if (L->failed)
        return 0;
    uint64_t u;
    value_scalar((cfx_dtype)dt, iv, rv, &u);
    int32_t s = note_slot(L, prog_const(L->b, (cfx_dtype)dt, 0, NULL, &u));
    if (s < 0)
        return 0;
    L->info[s].count = 1;
    L->info[s].dtype = dt;
    memset(&L->info[s].ty, 0, sizeof L->info[s].ty);
    L->info[s].ty.dtype = (cfx_dtype)dt;
    return s;
}

static int slot_dtype(const lowerer *L, int32_t s)
{
    return s >= 0 && s < L->nslots ? L->info[s].dtype : 0;
}

/* Emits a record at the current statement's position. The dtype field and REC_F_SCALAR are
 * derived here, the one place, from the operand slots (program.c states the rule). */
static int32_t lower_emit(lowerer *L, int kind, int op, int32_t a, int32_t b, int32_t c, int32_t d)
{
    if (L->failed)
        return -1;
    if (prog_here(L->b) >= LOWER_MAX_RECORDS) {
        char why[128];
        snprintf(why, sizeof why, "the graph is too large: more than %d records after inlining calls",
                 LOWER_MAX_RECORDS);
        lower_fail(L, why);
        return -1;
    }
    cfx_record r;
    memset(&r, 0, sizeof r);
    r.kind = (uint8_t)kind;
    r.op = (uint8_t)op;
    r.a = a;
    r.b = b;
    r.c = c;
    r.d = d;
    r.line = L->line;
    r.col = L->col;
    const char *f = rec_fields[kind];
    const int32_t field[4] = {a, b, c, d};
    int nslot = 0, scalar = 1;
    for (int k = 0; k < 4; k++)
        if (f[k] == 's') {
            nslot++;
            if (field[k] < 0 || field[k] >= L->nslots || L->info[field[k]].count != 1)
                scalar = 0;
        }
    if (nslot > 0 && scalar)
        r.flags = REC_F_SCALAR;
    if (kind == REC_UNARY || kind == REC_BINARY || kind == REC_REDUCE || kind == REC_REDUCE_AXIS || kind == REC_CAST)
        r.dtype = (uint8_t)slot_dtype(L, b);
    else if (f[0] == 's')
        r.dtype = (uint8_t)slot_dtype(L, a);
    int32_t at = prog_emit(L->b, r);
    if (at < 0)
        lower_fail(L, "the graph has too many records");
    return at;
}

/* ---- jumps ---------------------------------------------------------------------------------- */
static void lower_patch_add(lowerer *L, patchlist *pl, int32_t rec)
{
    if (rec < 0 || L->failed)
        return;
    if (pl->n == pl->cap) {
        int cap = pl->cap ? pl->cap * 2 : 8;
        int32_t *at = realloc(pl->at, (size_t)cap * sizeof *at);
        if (!at) {
            lower_fail(L, "out of memory");
            return;
        }
        pl->at = at;
        pl->cap = cap;
    }
    pl->at[pl->n++] = rec;
}

static void lower_set_target(lowerer *L, int32_t rec, int32_t target)
{
    cfx_record *r = prog_record(L->b, rec);
    if (!r) {
        lower_fail(L, "internal error: patching a record that does not exist");
        return;
    }
    if (r->kind == REC_JUMP)
        r->a = target;
    else if (r->kind == REC_JUMP_FALSE || r->kind == REC_JUMP_TRUE)
        r->b = target;
    else
        lower_fail(L, "internal error: patching a record that is not a jump");
}

/* Points every open jump of pl at the next record, and empties pl. */
static void lower_patch_here(lowerer *L, patchlist *pl)
{
    int32_t here = prog_here(L->b);
    for (int i = 0; i < pl->n && !L->failed; i++)
        lower_set_target(L, pl->at[i], here);
    pl->n = 0;
}

static void lower_patch_free(patchlist *pl)
{
    free(pl->at);
    pl->at = NULL;
    pl->n = pl->cap = 0;
}

/* ---- variables ------------------------------------------------------------------------------ */
static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static void hash_put(scope *sc, int i)
{
    uint32_t mask = (uint32_t)sc->hashcap - 1, h = name_hash(sc->vars[i].name) & mask;
    while (sc->hash[h])
        h = (h + 1) & mask;
    sc->hash[h] = i + 1;
}

static void lower_scope_free(scope *sc)
{
    free(sc->vars);
    free(sc->hash);
    free(sc->flags);
    lower_patch_free(&sc->returns);
}

/* ---- flags: variables that may have no value, or hold None ---------------------------------- */

/* The flag of kind `kind` of variable `name` in the current instance, or -1 when it has none. */
static int32_t flag_of(const lowerer *L, const char *name, int kind)
{
    for (int i = 0; i < L->sc->nflags; i++)
        if (L->sc->flags[i].kind == kind && strcmp(L->sc->flags[i].name, name) == 0)
            return L->sc->flags[i].slot;
    return -1;
}

/* Adds flag `kind` of `name` to sc, once; a preset slot >= 0 is used as it is. */
static void add_flag(lowerer *L, scope *sc, const char *name, int kind, int32_t preset)
{
    for (int i = 0; i < sc->nflags; i++)
        if (sc->flags[i].kind == kind && strcmp(sc->flags[i].name, name) == 0)
            return;
    if (sc->nflags == sc->capflags) {
        int cap = sc->capflags ? sc->capflags * 2 : 4;
        flagged_var *f = realloc(sc->flags, (size_t)cap * sizeof *f);
        if (!f) {
            lower_fail(L, "out of memory");
            return;
        }
        sc->flags = f;
        sc->capflags = cap;
    }
    sc->flags[sc->nflags++] = (flagged_var){name, kind, preset, preset >= 0};
}

/* Lists, in sc, every flag tree n needs: a read that may find its variable without a value (the
 * checker's unset_line), or holding None (presence), and a test `is None` made at run time. */
static void collect_flags(lowerer *L, scope *sc, const ast_node *n, int depth)
{
    if (!n || L->failed || depth > 4 * 256)
        return;
    const check_note *k = n->note;
    if (n->kind == AST_NAME && k && k->unset_line)
        add_flag(L, sc, n->name, FLAG_ASSIGNED, -1);
    if (n->kind == AST_NAME && k && k->presence)
        add_flag(L, sc, n->name, FLAG_PRESENT, -1);
    if (n->kind == AST_IS && k && k->presence) {
        const ast_node *x = n->a->kind == AST_NONE ? n->b : n->a;
        add_flag(L, sc, x->name, FLAG_PRESENT, -1);
    }
    const ast_node *kids[4] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++)
        collect_flags(L, sc, kids[i], depth + 1);
    for (int i = 0; i < n->nlist; i++)
        collect_flags(L, sc, n->list[i], depth + 1);
}

static int32_t lower_bind_var(lowerer *L, const char *name, const cfx_type *t, int32_t slot)
{
    scope *sc = L->sc;
    if (2 * (sc->nvars + 1) > sc->hashcap) {
        int cap = sc->hashcap ? sc->hashcap * 2 : 32;
        int32_t *h = calloc((size_t)cap, sizeof *h);
        if (!h) {
            lower_fail(L, "out of memory");
            return 0;
        }
        free(sc->hash);
        sc->hash = h;
        sc->hashcap = cap;
        for (int i = 0; i < sc->nvars; i++)
            hash_put(sc, i);
    }
    if (sc->nvars == sc->cap) {
        int cap = sc->cap ? sc->cap * 2 : 16;
        var_slot *v = realloc(sc->vars, (size_t)cap * sizeof *v);
        if (!v) {
            lower_fail(L, "out of memory");
            return 0;
        }
        sc->vars = v;
        sc->cap = cap;
    }
    sc->vars[sc->nvars] = (var_slot){name, *t, slot};
    hash_put(sc, sc->nvars++);
    return slot;
}

/* The const slot of constant k of the module, made at its first read in the program. */
static int32_t module_const(lowerer *L, int k)
{
    if (L->failed)
        return 0;
    if (L->consts[k] >= 0)
        return L->consts[k];
    const ast_const *c = &L->m->consts[k];
    int32_t dims[CFX_MAX_RANK] = {0};
    for (int i = 0; i < c->type.rank && i < CFX_MAX_RANK; i++)
        dims[i] = (int32_t)c->type.dims[i];
    int32_t s = note_slot(L, prog_const(L->b, c->type.dtype, c->type.rank, dims, c->data));
    if (s < 0)
        return 0;
    L->info[s].count = cfx_type_count(&c->type);
    L->info[s].dtype = c->type.dtype;
    L->info[s].ty = c->type;
    return L->consts[k] = s;
}

/* The slot of variable `name` with type t in the current graph instance, made on first use; a
 * name no graph instance has is a constant of the module, if one has it. */
static int32_t lower_var(lowerer *L, const char *name, const cfx_type *t)
{
    scope *sc = L->sc;
    if (sc->hashcap) {
        uint32_t mask = (uint32_t)sc->hashcap - 1;
        for (uint32_t h = name_hash(name) & mask; sc->hash[h]; h = (h + 1) & mask) {
            const var_slot *v = &sc->vars[sc->hash[h] - 1];
            if (strcmp(v->name, name) == 0 && ast_same_type(&v->ty, t))
                return v->slot;
        }
    }
    int k = L->m->nconsts ? ast_const_find(L->m, name) : -1;
    if (k >= 0)
        return module_const(L, k);
    char full[160];
    if (L->depth > 0)
        snprintf(full, sizeof full, "%s.%s", L->m->graphs[sc->graph].name, name);
    else
        snprintf(full, sizeof full, "%s", name);
    return lower_bind_var(L, name, t, new_slot(L, t, SLOT_VAR, full));
}

/* At the entry of a graph instance (body `body`): a flag for every variable that needs one, set
 * to 0 but for a parameter's presence, which the caller gave. */
static void open_flags(lowerer *L, const ast_node *body)
{
    scope *sc = L->sc;
    collect_flags(L, sc, body, 0);
    cfx_type i32;
    memset(&i32, 0, sizeof i32);
    i32.dtype = CFX_I32;
    for (int i = 0; i < sc->nflags && !L->failed; i++) {
        if (sc->flags[i].preset)
            continue;
        char full[192];
        const char *what = sc->flags[i].kind == FLAG_ASSIGNED ? "assigned" : "present";
        if (L->depth > 0)
            snprintf(full, sizeof full, "%s.%s(%s)", L->m->graphs[sc->graph].name, what, sc->flags[i].name);
        else
            snprintf(full, sizeof full, "%s(%s)", what, sc->flags[i].name);
        sc->flags[i].slot = new_slot(L, &i32, SLOT_VAR, full);
        lower_emit(L, REC_COPY, 0, sc->flags[i].slot, lower_const_scalar(L, CFX_I32, 0, 0), 0, 0);
    }
}

/* After an assignment of `name` has run (of None when none): its flags, if it has any, say so. */
static void set_flags(lowerer *L, const char *name, int none)
{
    int32_t f = flag_of(L, name, FLAG_ASSIGNED), p = flag_of(L, name, FLAG_PRESENT);
    if (f >= 0)
        lower_emit(L, REC_COPY, 0, f, lower_const_scalar(L, CFX_I32, 1, 0), 0, 0);
    if (p >= 0)
        lower_emit(L, REC_COPY, 0, p, lower_const_scalar(L, CFX_I32, !none, 0), 0, 0);
}

static void set_flag(lowerer *L, const char *name) { set_flags(L, name, 0); }

/* ---- statements ------------------------------------------------------------------------------ */
static void at(lowerer *L, const ast_node *n)
{
    L->line = n->line;
    L->col = n->col;
}

/* `t0, t1, ... = E0, E1, ...`: every value into a slot first, then the targets from left to
 * right. A value that is a target's own variable is copied aside first when an earlier target
 * writes that variable (`a, b = b, a`); any other value is read where it lies. */
static void lower_tuple_assign(lowerer *L, ast_node *n)
{
    ast_node *tup = n->a;
    int k = n->nlist;
    int32_t *vals = calloc((size_t)k + 1, sizeof *vals), *base = calloc((size_t)k + 1, sizeof *base);
    if (!vals || !base) {
        lower_fail(L, "out of memory");
        goto done;
    }
    for (int i = 0; i < k; i++) {
        const ast_node *t = n->list[i];
        const check_list *l = lower_note(t)->list;
        base[i] = l ? list_data(L, l)
                    : t->kind == AST_INDEX ? lower_var(L, t->a->name, &t->a->ty) : lower_var(L, t->name, &t->ty);
    }
    for (int i = 0; i < k && !L->failed; i++) {
        int32_t s = lower_expr(L, tup->list[i], -1);
        for (int j = 0; j < i; j++)
            if (base[j] == s) {
                s = lower_copy_to(L, lower_temp(L, &tup->list[i]->ty), s);
                break;
            }
        vals[i] = s;
    }
    for (int i = 0; i < k && !L->failed; i++) {
        ast_node *t = n->list[i];
        if (t->kind == AST_INDEX && !t->b) {
            lower_set_box(L, t, vals[i], NULL);
        } else if (lower_note(t)->list) {
            lower_list_set(L, t, vals[i], NULL);
        } else if (t->kind == AST_INDEX) {
            int32_t ix = lower_index(L, t->b, t->a->ty.dims[0], t->a, 0);
            lower_emit(L, REC_SET_ROW, 0, base[i], ix, vals[i], 0);
        } else {
            lower_copy_to(L, base[i], vals[i]);
        }
    }
done:
    free(vals);
    free(base);
}

static void lower_assign(lowerer *L, ast_node *n)
{
    if (n->a->kind == AST_NONE)
        return; /* x = None: only its flags change (lower_stmt) */
    if (n->a->kind == AST_TUPLE) {
        lower_tuple_assign(L, n);
        return;
    }
    if (n->nlist > 1) {
        int32_t outs[CTX_MAX_ARGS * 4];
        int nouts = n->nlist;
        int32_t *o = nouts <= (int)(sizeof outs / sizeof outs[0]) ? outs : calloc((size_t)nouts, sizeof *o);
        if (!o) {
            lower_fail(L, "out of memory");
            return;
        }
        if (lower_note(n->a)->callee == CHECK_CALL_KERNEL)
            lower_kernel_call(L, n->a, o, nouts);
        else
            lower_inline_call(L, n->a, o, nouts);
        for (int i = 0; i < nouts && !L->failed; i++)
            lower_copy_to(L, lower_var(L, n->list[i]->name, &n->list[i]->ty), o[i]);
        if (o != outs)
            free(o);
        return;
    }
    ast_node *t = n->list[0];
    if (t->kind == AST_NAME && lower_note(t)->list && !(n->flags & AST_F_AUG)) {
        lower_list_value(L, n->a, lower_note(t)->list);
        return;
    }
    if (t->kind == AST_NAME) {
        int32_t v = lower_var(L, t->name, &t->ty);
        lower_expr(L, n->a, v);
        return;
    }
    if (!t->b) {
        /* x[i, j] = E, x[a:b] op= E */
        lower_set_box(L, t, (n->flags & AST_F_AUG) ? -1 : lower_expr(L, n->a, -1), (n->flags & AST_F_AUG) ? n->a : NULL);
        return;
    }
    if (lower_note(t)->list) {
        /* xs[i] = E, xs[i] op= E */
        lower_list_set(L, t, (n->flags & AST_F_AUG) ? -1 : lower_expr(L, n->a, -1),
                       (n->flags & AST_F_AUG) ? n->a : NULL);
        return;
    }
    if (n->flags & AST_F_AUG) {
        /* x[i] op= E, as Python runs it: the index once, the row read, E, the op, the write */
        int32_t x = lower_var(L, t->a->name, &t->a->ty);
        int32_t i = lower_index(L, t->b, t->a->ty.dims[0], t->a, 0);
        int32_t row = lower_temp(L, &t->ty);
        lower_emit(L, REC_GET_ROW, 0, row, x, i, 0);
        int32_t v = lower_operand(L, n->a->b, lower_note(n->a)->cdt);
        binary_slots(L, n->op, lower_note(n->a)->cdt, n->a->b, row, row, v);
        lower_emit(L, REC_SET_ROW, 0, x, i, row, 0);
        return;
    }
    /* x[i] = E: E first, as Python evaluates it */
    int32_t val = lower_expr(L, n->a, -1);
    int32_t x = lower_var(L, t->a->name, &t->a->ty);
    int32_t i = lower_index(L, t->b, t->a->ty.dims[0], t->a, 0);
    lower_emit(L, REC_SET_ROW, 0, x, i, val, 0);
}

/* Will this arm of an if be lowered: reached by the checker and not folded false? */
static int arm_lowered(const ast_node *arm)
{
    if (!arm->note)
        return 0;
    const check_note *k = arm->a ? arm->a->note : NULL;
    return !k || !k->known || k->ival;
}

static void lower_if(lowerer *L, ast_node *n)
{
    patchlist end = {0};
    for (int i = 0; i < n->nlist && !L->failed; i++) {
        ast_node *arm = n->list[i];
        if (!arm->note)
            break; /* after an arm whose condition is known true */
        if (!arm->a) {
            lower_block(L, arm->b);
            break;
        }
        const check_note *k = lower_note(arm->a);
        if (k->known) {
            if (!k->ival)
                continue;
            lower_block(L, arm->b);
            break;
        }
        at(L, arm);
        patchlist next = {0};
        lower_jump_if(L, arm->a, 0, &next);
        lower_block(L, arm->b);
        int last = 1; /* a jump past the later arms only if one of them is lowered */
        for (int j = i + 1; j < n->nlist; j++)
            if (arm_lowered(n->list[j]))
                last = 0;
        if (!last) {
            at(L, arm);
            lower_patch_add(L, &end, lower_emit(L, REC_JUMP, 0, 0, 0, 0, 0));
        }
        lower_patch_here(L, &next);
        lower_patch_free(&next);
    }
    lower_patch_here(L, &end);
    lower_patch_free(&end);
}

static void loop_push(lowerer *L, loopl *lp)
{
    memset(lp, 0, sizeof *lp);
    lp->up = L->loop;
    L->loop = lp;
}

static void loop_pop(lowerer *L, loopl *lp)
{
    L->loop = lp->up;
    lower_patch_free(&lp->breaks);
    lower_patch_free(&lp->continues);
}

static void lower_while(lowerer *L, ast_node *n)
{
    const check_note *k = lower_note(n->a);
    if (k->known && !k->ival)
        return; /* while false */
    loopl lp;
    loop_push(L, &lp);
    at(L, n);
    int32_t head = prog_here(L->b);
    patchlist exit = {0};
    if (!k->known)
        lower_jump_if(L, n->a, 0, &exit);
    at(L, n);
    lower_emit(L, REC_TICK, 0, 0, 0, 0, 0);
    lower_block(L, n->b);
    lower_patch_here(L, &lp.continues);
    at(L, n);
    lower_emit(L, REC_JUMP, 0, head, 0, 0, 0);
    lower_patch_here(L, &exit);
    lower_patch_here(L, &lp.breaks);
    lower_patch_free(&exit);
    loop_pop(L, &lp);
}

/* Ends a counted loop (for-range, for-each) after its body: `continue` lands on the step of
 * the counter, which jumps back to the head; the exit test and `break` land after it. */
static void end_counted_loop(lowerer *L, ast_node *n, loopl *lp, int32_t ctr, int32_t step,
                             int32_t head, int32_t exit)
{
    lower_patch_here(L, &lp->continues);
    at(L, n);
    if (step >= 0) /* -1: the caller has stepped the counter already */
        lower_emit(L, REC_BINARY, OP_ADD, ctr, ctr, step, 0);
    lower_emit(L, REC_JUMP, 0, head, 0, 0, 0);
    if (exit >= 0)
        lower_set_target(L, exit, prog_here(L->b));
    lower_patch_here(L, &lp->breaks);
    loop_pop(L, lp);
}

/* 1 if an i32 counter that steps by `step` past the last value of range(.., stop, step) cannot
 * wrap: the last value v satisfies v < stop (step > 0) or v > stop (step < 0), so the step
 * after it is at most stop + step - 1 (or at least stop + step + 1). A step of 1 or -1 never
 * wraps, whatever the bounds. */
static int counter_fits_i32(int stop_known, int64_t stop, int64_t step)
{
    if (step == 1 || step == -1)
        return 1;
    if (!stop_known || step == 0)
        return 0;
    int64_t after = step > 0 ? stop + step - 1 : stop + step + 1;
    return after >= INT32_MIN && after <= INT32_MAX;
}

/* 1 if the i64 counter of range(.., stop, step) cannot wrap when it steps past the last value:
 * a step of 1 or -1, or a known stop with stop + step inside i64. */
static int counter_fits_i64(int stop_known, int64_t stop, int64_t step)
{
    if (step == 1 || step == -1)
        return 1;
    if (!stop_known || step == 0)
        return 0;
    return step > 0 ? stop <= INT64_MAX - step : stop >= INT64_MIN - step;
}

/* out = x lies before y in the direction of the step: x < y for a step known positive, x > y
 * for one known negative, and for a computed step both, chosen by the bool slot `positive`. */
static void emit_before(lowerer *L, int32_t out, int32_t x, int32_t y, int64_t step_known, int32_t positive)
{
    if (step_known > 0) {
        lower_emit(L, REC_BINARY, OP_LT, out, x, y, 0);
    } else if (step_known < 0) {
        lower_emit(L, REC_BINARY, OP_GT, out, x, y, 0);
    } else {
        int32_t lt = temp_scalar(L, CFX_BOOL), gt = temp_scalar(L, CFX_BOOL);
        lower_emit(L, REC_BINARY, OP_LT, lt, x, y, 0);
        lower_emit(L, REC_BINARY, OP_GT, gt, x, y, 0);
        lower_emit(L, REC_WHERE, 0, out, positive, lt, gt);
    }
}

static void lower_for_range(lowerer *L, ast_node *n)
{
    const cfx_type *vt = &n->ty; /* i32, or i64 when an argument is */
    int wide = vt->dtype == CFX_I64;
    cfx_dtype adt = wide ? CFX_I64 : CFX_I32;
    at(L, n);
    int32_t iv = lower_var(L, n->name, vt);
    /* A, B and S are evaluated once, in that order, before the loop; the counter is set
     * last, so `range(0, i)` reads the old i */
    int32_t start = convert(L, lower_expr(L, n->a, -1), adt); /* an i32 beside an i64 is converted */
    const check_note *kb = lower_note(n->b);
    int32_t stop = kb->known ? lower_operand(L, n->b, adt)
                   : n->b->ty.dtype == adt ? lower_expr(L, n->b, temp_scalar(L, adt))
                                           : convert(L, lower_expr(L, n->b, -1), adt);
    int64_t step_known = 1;
    int32_t step;
    if (!n->c) {
        step = lower_const_scalar(L, adt, 1, 0);
    } else if (lower_note(n->c)->known) {
        step_known = lower_note(n->c)->ival;
        step = lower_operand(L, n->c, adt);
    } else {
        step_known = 0;
        step = n->c->ty.dtype == adt ? lower_expr(L, n->c, temp_scalar(L, adt))
                                     : convert(L, lower_expr(L, n->c, -1), adt);
        lower_emit(L, REC_CHECK_STEP, 0, step, -1, 0, 0);
    }
    /* Python's iterations exactly: where the step past the last value could wrap an i32
     * (range(2147483640, 2147483647, 5)), the counter, the bound and the step are i64,
     * where nothing wraps, and i is set from the counter at the top of each iteration.
     * Otherwise an i32 counter, and i itself is the counter unless the body assigns i. An
     * i64 range has no wider type: where its step could wrap, the step is taken only when
     * it does not (`guard`, in end_counted_loop). */
    cfx_dtype cdt = wide || !counter_fits_i32(kb->known, kb->ival, step_known) ? CFX_I64 : CFX_I32;
    int guard = wide && !counter_fits_i64(kb->known, kb->ival, step_known);
    /* i itself is the counter unless the body assigns i, or i is read after the loop, where it
     * must hold the last value the loop gave it, as in Python, not the one past the end */
    int own = lower_note(n)->assigns_loop_var || flag_of(L, n->name, FLAG_ASSIGNED) >= 0;
    int32_t ctr = (cdt == CFX_I32 || wide) && !own ? iv : temp_scalar(L, cdt);
    if (cdt == CFX_I64 && !wide) {
        int32_t s64 = temp_scalar(L, CFX_I64), b64 = temp_scalar(L, CFX_I64);
        lower_emit(L, REC_CAST, 0, s64, step, 0, 0);
        lower_emit(L, REC_CAST, 0, b64, stop, 0, 0);
        lower_emit(L, REC_CAST, 0, ctr, start, 0, 0);
        step = s64;
        stop = b64;
    } else {
        lower_copy_to(L, ctr, start);
    }
    int32_t positive = -1;
    if (!step_known) {
        positive = temp_scalar(L, CFX_BOOL);
        lower_emit(L, REC_BINARY, OP_GT, positive, step, lower_const_scalar(L, cdt, 0, 0), 0);
    }
    loopl lp;
    loop_push(L, &lp);
    int32_t head = prog_here(L->b);
    int32_t go = temp_scalar(L, CFX_BOOL);
    emit_before(L, go, ctr, stop, step_known, positive);
    int32_t exit = lower_emit(L, REC_JUMP_FALSE, 0, go, 0, 0, 0);
    at(L, n);
    lower_emit(L, REC_TICK, 0, 0, 0, 0, 0);
    if (ctr != iv)
        lower_emit(L, cdt == (cfx_dtype)vt->dtype ? REC_COPY : REC_CAST, 0, iv, ctr, 0, 0);
    set_flag(L, n->name);
    lower_block(L, n->d);
    if (guard) {
        /* next = ctr + step; it wrapped when it moved against the step: leave the loop */
        lower_patch_here(L, &lp.continues);
        at(L, n);
        int32_t next = temp_scalar(L, CFX_I64), wrapped = temp_scalar(L, CFX_BOOL);
        lower_emit(L, REC_BINARY, OP_ADD, next, ctr, step, 0);
        emit_before(L, wrapped, next, ctr, step_known, positive);
        lower_patch_add(L, &lp.breaks, lower_emit(L, REC_JUMP_TRUE, 0, wrapped, 0, 0, 0));
        lower_emit(L, REC_COPY, 0, ctr, next, 0, 0);
        step = -1; /* stepped */
    }
    end_counted_loop(L, n, &lp, ctr, step, head, exit);
}

/* for v in xs, for i, x in enumerate(it), for a, b in zip(p, q, ...) (a loop over a tensor
 * alone is lower_for_each's): one counter from 0 to the length of the shortest (a tensor's
 * rows are known at compile time, a list's length is taken when the loop starts), and at each
 * step the row or item of each, walked as it was when the loop started (a copy when the body
 * may change it). */
static void lower_for_zip(lowerer *L, ast_node *n, int kind)
{
    cfx_type i32;
    memset(&i32, 0, sizeof i32);
    i32.dtype = CFX_I32;
    at(L, n);
    ast_node **its = kind == CHECK_ITER_PLAIN ? &n->a : n->a->list;
    int nits = kind == CHECK_ITER_PLAIN ? 1 : n->a->nlist, first = kind == CHECK_ITER_ENUMERATE ? 1 : 0;
    int32_t *src = calloc((size_t)nits + 1, sizeof *src), *len = calloc((size_t)nits + 1, sizeof *len);
    if (!src || !len) {
        lower_fail(L, "out of memory");
        goto done;
    }
    int32_t count = -1; /* slot of the trip count; a constant while every length is known */
    int64_t known = -1;
    for (int k = 0; k < nits; k++) {
        ast_node *it = its[k];
        const check_list *l = lower_note(it)->list;
        if (l) {
            src[k] = list_data(L, l);
            len[k] = lower_copy_to(L, lower_temp(L, &i32), list_len(L, l));
            if (ast_mutates_list(n->d, l->name)) {
                cfx_type t = check_list_data_type(l);
                src[k] = lower_copy_to(L, lower_temp(L, &t), src[k]);
            }
        } else {
            src[k] = lower_expr(L, it, -1);
            if (it->kind == AST_NAME && ast_assigns(n->d, it->name))
                src[k] = lower_copy_to(L, lower_temp(L, &it->ty), src[k]);
            len[k] = -1;
            if (known < 0 || it->ty.dims[0] < known)
                known = it->ty.dims[0];
        }
    }
    for (int k = 0; k < nits; k++) {
        if (len[k] < 0)
            continue;
        if (count < 0) {
            count = len[k];
        } else {
            int32_t m = lower_temp(L, &i32);
            lower_emit(L, REC_BINARY, OP_MIN, m, count, len[k], 0);
            count = m;
        }
    }
    if (known >= 0) {
        int32_t kc = lower_const_scalar(L, CFX_I32, known, 0);
        if (count < 0) {
            count = kc;
        } else {
            int32_t m = lower_temp(L, &i32);
            lower_emit(L, REC_BINARY, OP_MIN, m, count, kc, 0);
            count = m;
        }
    }
    int32_t ctr = lower_copy_to(L, lower_temp(L, &i32), lower_const_scalar(L, CFX_I32, 0, 0));
    loopl lp;
    loop_push(L, &lp);
    int32_t head = prog_here(L->b);
    int32_t go = lower_temp(L, &(cfx_type){.dtype = CFX_BOOL});
    lower_emit(L, REC_BINARY, OP_LT, go, ctr, count, 0);
    int32_t exit = lower_emit(L, REC_JUMP_FALSE, 0, go, 0, 0, 0);
    at(L, n);
    lower_emit(L, REC_TICK, 0, 0, 0, 0, 0);
    if (kind == CHECK_ITER_ENUMERATE)
        lower_copy_to(L, lower_var(L, n->list[0]->name, &i32), ctr);
    for (int k = 0; k < nits && !L->failed; k++) {
        ast_node *it = its[k];
        const char *v = n->nlist ? n->list[first + k]->name : n->name;
        const check_list *l = lower_note(it)->list;
        if (l) { /* 0 <= ctr < len: no check needed */
            lower_emit(L, REC_GET_ITEM, 0, lower_var(L, v, &l->item), src[k], ctr, len[k]);
            continue;
        }
        cfx_type row = it->ty;
        row.rank--;
        for (int d = 0; d < row.rank; d++)
            row.dims[d] = it->ty.dims[d + 1];
        /* the counter is in range here, but the validator wants every row index checked */
        int32_t name = it->kind == AST_NAME ? prog_string(L->b, it->name) : -1;
        lower_emit(L, REC_CHECK_INDEX, 0, ctr, (int32_t)it->ty.dims[0], name, 0);
        lower_emit(L, REC_GET_ROW, 0, lower_var(L, v, &row), src[k], ctr, 0);
    }
    for (int k = 0; k < (n->nlist ? n->nlist : 1); k++)
        set_flag(L, n->nlist ? n->list[k]->name : n->name);
    lower_block(L, n->d);
    end_counted_loop(L, n, &lp, ctr, lower_const_scalar(L, CFX_I32, 1, 0), head, exit);
done:
    free(src);
    free(len);
}

static void lower_for_each(lowerer *L, ast_node *n)
{
    if (lower_note(n)->iter != CHECK_ITER_PLAIN || lower_note(n)->list) {
        lower_for_zip(L, n, lower_note(n)->iter);
        return;
    }
    at(L, n);
    int32_t x = lower_expr(L, n->a, -1);
    /* the rows are those of x before the loop, whatever the body assigns */
    if (n->a->kind == AST_NAME && ast_assigns(n->d, n->a->name))
        x = lower_copy_to(L, lower_temp(L, &n->a->ty), x);
    int32_t rows = (int32_t)n->a->ty.dims[0];
    cfx_type row = n->a->ty;
    row.rank--;
    for (int i = 0; i < row.rank; i++)
        row.dims[i] = n->a->ty.dims[i + 1];
    int32_t r = lower_var(L, n->name, &row);
    int32_t ctr = temp_scalar(L, CFX_I32);
    lower_emit(L, REC_COPY, 0, ctr, lower_const_scalar(L, CFX_I32, 0, 0), 0, 0);
    loopl lp;
    loop_push(L, &lp);
    int32_t head = prog_here(L->b);
    int32_t go = temp_scalar(L, CFX_BOOL);
    lower_emit(L, REC_BINARY, OP_LT, go, ctr, lower_const_scalar(L, CFX_I32, rows, 0), 0);
    int32_t exit = lower_emit(L, REC_JUMP_FALSE, 0, go, 0, 0, 0);
    at(L, n);
    lower_emit(L, REC_TICK, 0, 0, 0, 0, 0);
    /* the counter is in range here, but the validator wants every row index checked */
    int32_t name = n->a->kind == AST_NAME ? prog_string(L->b, n->a->name) : -1;
    lower_emit(L, REC_CHECK_INDEX, 0, ctr, rows, name, 0);
    lower_emit(L, REC_GET_ROW, 0, r, x, ctr, 0);
    set_flag(L, n->name);
    lower_block(L, n->d);
    end_counted_loop(L, n, &lp, ctr, lower_const_scalar(L, CFX_I32, 1, 0), head, exit);
}

static void lower_switch(lowerer *L, ast_node *n)
{
    const check_note *k = lower_note(n->a);
    int ncases = 0, dflt = -1;
    int64_t lo = 0, hi = 0;
    for (int i = 0; i < n->nlist; i++) {
        ast_node *cs = n->list[i];
        if (cs->flags & AST_F_DEFAULT) {
            dflt = i;
            continue;
        }
        if (ncases == 0 || cs->ival < lo)
            lo = cs->ival;
        if (ncases == 0 || cs->ival > hi)
            hi = cs->ival;
        ncases++;
    }
    if (k->known) {
        int chosen = -1;
        for (int i = 0; i < n->nlist; i++)
            if (!(n->list[i]->flags & AST_F_DEFAULT) && n->list[i]->ival == k->ival)
                chosen = i;
        if (chosen < 0)
            chosen = dflt;
        if (chosen >= 0)
            lower_block(L, n->list[chosen]->b);
        return;
    }
    at(L, n);
    int32_t v = lower_expr(L, n->a, -1);
    int32_t *start = calloc((size_t)n->nlist + 1, sizeof *start);
    patchlist end = {0};
    int32_t *chain_case = calloc((size_t)n->nlist + 1, sizeof *chain_case);
    if (!start || !chain_case) {
        lower_fail(L, "out of memory");
        goto done;
    }
    int64_t span = hi - lo + 1;
    int dense = ncases > 0 && span <= 2 * (int64_t)ncases + 8;
    int32_t sw = -1, table = -1, to_default = -1;
    if (ncases == 0) {
        /* only a default: nothing to test */
    } else if (dense) {
        int32_t idx = v;
        if (lo != 0) {
            idx = temp_scalar(L, CFX_I32);
            lower_emit(L, REC_BINARY, OP_SUB, idx, v, lower_const_scalar(L, CFX_I32, lo, 0), 0);
        }
        int32_t *zeros = calloc((size_t)span + 1, sizeof *zeros);
        if (!zeros) {
            lower_fail(L, "out of memory");
            goto done;
        }
        table = L->failed ? -1 : prog_table(L->b, zeros, (int32_t)span + 1);
        free(zeros);
        if (table < 0)
            lower_fail(L, "the switch table is too large");
        sw = lower_emit(L, REC_SWITCH, 0, idx, table, (int32_t)span, 0);
    } else {
        /* sparse values: a chain of tests */
        int32_t eq = temp_scalar(L, CFX_BOOL);
        for (int i = 0; i < n->nlist; i++) {
            if (n->list[i]->flags & AST_F_DEFAULT)
                continue;
            lower_emit(L, REC_BINARY, OP_EQ, eq, v, lower_const_scalar(L, CFX_I32, n->list[i]->ival, 0), 0);
            chain_case[i] = lower_emit(L, REC_JUMP_TRUE, 0, eq, 0, 0, 0);
        }
        to_default = lower_emit(L, REC_JUMP, 0, 0, 0, 0, 0);
    }
    /* the bodies, each ending with a jump past the others (the last one falls through) */
    int last = -1;
    for (int i = 0; i < n->nlist; i++)
        if (n->list[i]->note)
            last = i;
    for (int i = 0; i < n->nlist && !L->failed; i++) {
        ast_node *cs = n->list[i];
        start[i] = prog_here(L->b);
        if (!cs->note)
            continue;
        lower_block(L, cs->b);
        if (i != last) {
            at(L, n);
            lower_patch_add(L, &end, lower_emit(L, REC_JUMP, 0, 0, 0, 0, 0));
        }
    }
    int32_t here = prog_here(L->b);
    int32_t dflt_at = dflt >= 0 ? start[dflt] : here;
    if (L->failed)
        goto done;
    if (sw >= 0) {
        int32_t *t = prog_table_at(L->b, table);
        for (int64_t j = 0; j <= span; j++)
            t[j] = dflt_at;
        for (int i = 0; i < n->nlist; i++)
            if (!(n->list[i]->flags & AST_F_DEFAULT))
                t[n->list[i]->ival - lo] = start[i];
    } else if (ncases > 0) {
        for (int i = 0; i < n->nlist; i++)
            if (!(n->list[i]->flags & AST_F_DEFAULT))
                lower_set_target(L, chain_case[i], start[i]);
        lower_set_target(L, to_default, dflt_at);
    }
    lower_patch_here(L, &end);
done:
    free(start);
    free(chain_case);
    lower_patch_free(&end);
}

static void lower_expr_stmt(lowerer *L, ast_node *n)
{
    ast_node *x = n->a;
    const check_note *k = lower_note(x);
    if (k->callee == CHECK_CALL_ASSERT) {
        int32_t c = lower_expr(L, x->list[0], -1);
        int32_t msg = L->failed ? -1 : prog_string(L->b, x->list[1]->str);
        lower_emit(L, REC_ASSERT, 0, c, msg, 0, 0);
        return;
    }
    if (k->callee == CHECK_CALL_PRINT) {
        int32_t s = lower_expr(L, x->list[0], -1);
        int32_t label = x->nlist == 2 && !L->failed ? prog_string(L->b, x->list[1]->str) : -1;
        lower_emit(L, REC_PRINT, 0, s, label, 0, 0);
        return;
    }
    if (k->callee == CHECK_CALL_KERNEL) {
        lower_kernel_call(L, x, NULL, 0);
        return;
    }
    if (k->callee == CHECK_CALL_METHOD) {
        lower_method(L, x, -1);
        return;
    }
    if (k->callee >= 0) {
        lower_inline_call(L, x, NULL, 0);
        return;
    }
    lower_expr(L, x, -1); /* an op whose value is dropped: harmless, kept for its checks */
}

static void lower_stmt(lowerer *L, ast_node *n)
{
    if (L->failed || !n->note)
        return; /* a statement the checker did not reach is dead */
    at(L, n);
    switch (n->kind) {
    case AST_ASSIGN:
        lower_assign(L, n);
        for (int i = 0; i < n->nlist; i++)
            if (n->list[i]->kind == AST_NAME)
                set_flags(L, n->list[i]->name, n->a && n->a->kind == AST_NONE);
        return;
    case AST_IF:
        lower_if(L, n);
        return;
    case AST_WHILE:
        lower_while(L, n);
        return;
    case AST_FOR_RANGE:
        lower_for_range(L, n);
        return;
    case AST_FOR_EACH:
        lower_for_each(L, n);
        return;
    case AST_SWITCH:
        lower_switch(L, n);
        return;
    case AST_BREAK:
        lower_patch_add(L, &L->loop->breaks, lower_emit(L, REC_JUMP, 0, 0, 0, 0, 0));
        return;
    case AST_CONTINUE:
        lower_patch_add(L, &L->loop->continues, lower_emit(L, REC_JUMP, 0, 0, 0, 0, 0));
        return;
    case AST_RETURN:
        if (n->b)
            lower_assign(L, n->b); /* return E, ...: the results' values (check.c made n->b) */
        at(L, n);
        lower_patch_add(L, &L->sc->returns, lower_emit(L, REC_JUMP, 0, 0, 0, 0, 0));
        return;
    case AST_EXPR:
        lower_expr_stmt(L, n);
        return;
    case AST_BLOCK:
        lower_block(L, n);
        return;
    default:
        lower_fail(L, "internal error: a statement the lowering does not know");
        return;
    }
}

static void lower_block(lowerer *L, ast_node *blk)
{
    if (!blk || L->failed)
        return;
    if (blk->kind != AST_BLOCK) {
        lower_stmt(L, blk);
        return;
    }
    for (int i = 0; i < blk->nlist && !L->failed; i++)
        lower_stmt(L, blk->list[i]);
}

/* ---- graphs ------------------------------------------------------------------------------------ */
cfx_prog *lower_graph(const ast_module *m, int graph, const char *file, diag *d)
{
    const ast_graph *g = &m->graphs[graph];
    lowerer L;
    memset(&L, 0, sizeof L);
    L.m = m;
    L.d = d;
    L.top = graph;
    L.line = L.why_line = g->line;
    L.col = L.why_col = g->col;
    L.b = prog_begin(file ? file : "<input>", g->name);
    scope sc = {0};
    sc.graph = graph;
    L.sc = &sc;
    cfx_prog *p = NULL;
    L.consts = malloc(((size_t)m->nconsts + 1) * sizeof *L.consts);
    if (!L.b || !L.consts) {
        diag_error(d, g->line, g->col, "out of memory");
        prog_abandon(L.b);
        goto done;
    }
    for (int i = 0; i < m->nconsts; i++)
        L.consts[i] = -1;
    for (int i = 0; i < g->nparams && !L.failed; i++) {
        int32_t s = lower_bind_var(&L, g->params[i].name, &g->params[i].type,
                             new_slot(&L, &g->params[i].type, SLOT_INPUT, g->params[i].name));
        prog_add_input(L.b, s);
    }
    for (int i = 0; i < g->nresults && !L.failed; i++) {
        int32_t s = lower_bind_var(&L, g->results[i].name, &g->results[i].type,
                             new_slot(&L, &g->results[i].type, SLOT_RESULT, g->results[i].name));
        prog_add_result(L.b, s);
    }
    /* a parameter that defaults to None: whether the caller gave it comes in as an input of its
     * own, after the declared ones, `present(NAME)` (compile.c, api.c) */
    cfx_type i32;
    memset(&i32, 0, sizeof i32);
    i32.dtype = CFX_I32;
    for (int i = 0; i < g->nparams && !L.failed; i++)
        if (g->params[i].def && g->params[i].def->kind == AST_NONE) {
            char name[192];
            snprintf(name, sizeof name, "present(%s)", g->params[i].name);
            int32_t s = new_slot(&L, &i32, SLOT_INPUT, name);
            prog_add_input(L.b, s);
            add_flag(&L, &sc, g->params[i].name, FLAG_PRESENT, s);
        }
    open_flags(&L, g->body);
    lower_block(&L, g->body);
    lower_patch_here(&L, &sc.returns);
    L.line = g->line;
    L.col = g->col;
    lower_emit(&L, REC_HALT, 0, 0, 0, 0, 0);
    char err[256];
    if (L.failed) {
        diag_error(d, L.why_line, L.why_col, "%s", L.why);
        prog_abandon(L.b);
        goto done;
    }
    p = prog_finish(L.b, err, sizeof err);
    if (!p)
        diag_error(d, g->line, g->col, "graph '%s': %s", g->name, err);
done:
    lower_scope_free(&sc);
    free(L.info);
    free(L.consts);
    return p;
}

/* ---- expressions ---------------------------------------------------------------------------- */

static const check_note *lower_note(const ast_node *n) { return n->note; }

static int32_t dest(lowerer *L, const ast_node *n, int32_t want)
{
    return want >= 0 ? want : lower_temp(L, &n->ty);
}

static int32_t lower_copy_to(lowerer *L, int32_t want, int32_t s)
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

/* Constant s broadcast to type `to` at compile time: a constant of that shape, or -1 where s's
 * value is not known yet or the result would pass LOWER_FOLD_BROADCAST_BYTES. */
static int32_t fold_broadcast(lowerer *L, int32_t s, const cfx_type *to)
{
    int64_t count = 1, size = dtype_size(to->dtype);
    for (int d = 0; d < to->rank; d++)
        count *= to->dims[d];
    if (count * size > LOWER_FOLD_BROADCAST_BYTES)
        return -1; /* before the constant's bytes are looked up (hashed) */
    const void *v = prog_const_value(L->b, s);
    if (!v)
        return -1;
    k_bshape sh;
    int32_t dims[CFX_MAX_RANK] = {0};
    memset(&sh, 0, sizeof sh);
    sh.drank = to->rank;
    sh.srank = L->info[s].ty.rank;
    for (int d = 0; d < CFX_MAX_RANK; d++) {
        sh.dims[d] = dims[d] = d < to->rank ? (int32_t)to->dims[d] : 0;
        sh.sdims[d] = d < sh.srank ? (int32_t)L->info[s].ty.dims[d] : 0;
    }
    void *data = malloc((size_t)(count * size));
    if (!data) {
        lower_fail(L, "out of memory");
        return -1;
    }
    k_broadcast((int)size, data, v, &sh, 0, count);
    int32_t c = note_slot(L, prog_const(L->b, to->dtype, to->rank, dims, data));
    free(data);
    if (c < 0)
        return -1;
    L->info[c].count = count;
    L->info[c].dtype = to->dtype;
    L->info[c].ty = *to;
    return c;
}

/* Slot s as an operand of an elementwise record whose result is slot d: itself when it has one
 * element or d's shape, a constant of d's shape where s is a constant (fold_broadcast), else a
 * temporary that BROADCAST fills with s repeated to d's shape. */
static int32_t spread(lowerer *L, int32_t s, int32_t d)
{
    if (L->failed || L->info[s].count == 1)
        return s;
    cfx_type to = L->info[d].ty;
    to.dtype = (cfx_dtype)L->info[s].dtype;
    if (ast_same_type(&to, &L->info[s].ty))
        return s;
    int32_t c = fold_broadcast(L, s, &to);
    if (c >= 0 || L->failed)
        return c >= 0 ? c : s;
    int32_t t = lower_temp(L, &to);
    lower_emit(L, REC_BROADCAST, 0, t, s, 0, 0);
    return t;
}

/* Slot s as dtype dt: itself, or a temporary of its shape that a CAST fills. */
static int32_t convert(lowerer *L, int32_t s, int dt)
{
    if (L->failed || L->info[s].dtype == dt)
        return s;
    cfx_type t = L->info[s].ty;
    t.dtype = (cfx_dtype)dt;
    int32_t c = lower_temp(L, &t);
    lower_emit(L, REC_CAST, 0, c, s, 0, 0);
    return c;
}

/* The value of operand n of an op that computes in dtype dt: a known value is a constant of
 * dt (no CAST at run time); anything else is n's slot, which binary_slots converts. */
static int32_t lower_operand(lowerer *L, ast_node *n, int dt)
{
    const check_note *k = lower_note(n);
    if (k && k->known && (int)n->ty.dtype != dt) {
        int from_real = n->ty.dtype == CFX_F32 || n->ty.dtype == CFX_F64;
        return lower_const_scalar(L, dt, k->ival, from_real ? k->rval : (double)k->ival);
    }
    return lower_expr(L, n, -1);
}

/* Expression n into slot d, whose dtype it may promote to (the values of `a if c else b`). */
static void lower_into(lowerer *L, ast_node *n, int32_t d)
{
    int dt = slot_dtype(L, d);
    if ((int)n->ty.dtype == dt) {
        lower_expr(L, n, d);
        return;
    }
    int32_t s = lower_operand(L, n, dt); /* a known value: a constant of dt, copied */
    if (!L->failed && slot_dtype(L, s) == dt)
        lower_copy_to(L, d, s);
    else if (!L->failed)
        lower_emit(L, REC_CAST, 0, d, s, 0, 0);
}

/* The integer ops whose divisor must not be 0. */
static int divides(int op)
{
    return op == OP_DIV || op == OP_FLOORDIV || op == OP_MOD || op == OP_TRUNCDIV || op == OP_FMOD;
}

/* d = op(sa, sb), computed in dtype cdt, where sb holds the value of expression b: operands
 * of another dtype are converted first; an integer division or remainder first checks the
 * divisor unless b is a known nonzero constant; an operand of another shape than d's is
 * broadcast. */
static void binary_slots(lowerer *L, int op, int cdt, const ast_node *b, int32_t d, int32_t sa, int32_t sb)
{
    int same = sa == sb;
    sa = convert(L, sa, cdt);
    sb = same ? sa : convert(L, sb, cdt);
    if (divides(op) && is_int_dtype(cdt)) {
        const check_note *kb = lower_note(b);
        if (!(kb->known && kb->ival != 0))
            lower_emit(L, REC_CHECK_DIVIDE, 0, sb, 0, 0, 0);
    }
    sa = spread(L, sa, d);
    sb = spread(L, sb, d);
    lower_emit(L, REC_BINARY, op, d, sa, sb, 0);
}

static int32_t elementwise2(lowerer *L, ast_node *n, int op, ast_node *a, ast_node *b, int32_t want)
{
    int cdt = lower_note(n)->cdt;
    int32_t sa = lower_operand(L, a, cdt), sb = lower_operand(L, b, cdt);
    int32_t d = dest(L, n, want);
    binary_slots(L, op, cdt, b, d, sa, sb);
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

/* Index i into dimension `dim` of `tensor` (0: its rows; 1: x[i, j]'s j), of size `rows`: a
 * constant, or a checked slot. The check names the variable indexed and which of its
 * dimensions (x[i][j] indexes dimension 1 of x) for the message. */
static int32_t lower_index(lowerer *L, ast_node *i, int64_t rows, const ast_node *tensor, int dim)
{
    const check_note *k = lower_note(i);
    if (k->known)
        return lower_const_scalar(L, i->ty.dtype, k->ival, 0);
    int32_t s = lower_expr(L, i, -1);
    check_index(L, s, rows, tensor, dim);
    return s;
}

/* The CHECK_INDEX of lower_index for slot s. */
static void check_index(lowerer *L, int32_t s, int64_t rows, const ast_node *tensor, int dim)
{
    const char *base;
    dim += check_index_base(tensor, &base);
    int32_t name = base && !L->failed ? prog_string(L->b, base) : -1;
    lower_emit(L, REC_CHECK_INDEX, 0, s, (int32_t)rows, name, base ? dim : 0);
}

/* A box over a tensor of `rank` dimensions `dims` for GET_BOX or SET_BOX: where at[d] >= 0 the one
 * element at that index, elsewhere the whole dimension. Returns the table offset. */
static int32_t whole_box(lowerer *L, int rank, const int64_t *dims, const int64_t *at)
{
    int32_t ent[2 * CFX_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        ent[2 * d] = at[d] > 0 ? lower_const_scalar(L, CFX_I32, at[d], 0) : -1;
        ent[2 * d + 1] = at[d] >= 0 ? -1 : (int32_t)dims[d];
    }
    int32_t tab = L->failed ? 0 : prog_table(L->b, ent, 2 * rank);
    if (tab < 0)
        lower_fail(L, "the graph has too many subscripts");
    return tab;
}

/* The number of matrices in an operand of `@` (the product of its dimensions before the last two;
 * 1 for one of one or two dimensions). */
static int64_t batch_count(const cfx_type *t)
{
    int64_t c = 1;
    for (int d = 0; d + 2 < t->rank; d++)
        c *= t->dims[d];
    return c;
}

/* A matrix product over leading batch dimensions (an operand of more than two), as numpy's. Where
 * each operand's batch is the result's or one matrix (a side of one or two dimensions, or of batch
 * dimensions all 1), one batched MATMUL of the result's B batch elements (its d = B; rec_matmul):
 * the operands are read in place, an operand with one matrix shared by all. Otherwise (one side's
 * batch dimensions broadcast against the other's: [2, 1, m, k] @ [3, k, n]) one MATMUL per batch
 * element, unrolled, each operand's matrix taken with a GET_BOX (an operand of two dimensions is
 * used whole, a vector on the left as the row [1, k]) and the product written with a SET_BOX. */
static int32_t lower_batch_matmul(lowerer *L, ast_node *n, const cfx_type *X, const cfx_type *Y, int32_t x,
                                  int32_t y, int32_t want)
{
    const cfx_type *R = &n->ty;
    cfx_type mx = *R, my = *R, mp = *R;
    int64_t bxn = batch_count(X), byn = batch_count(Y), whole = 1;
    for (int i = 0; i < R->rank - (X->rank >= 2) - (Y->rank >= 2); i++)
        whole *= R->dims[i]; /* the result's batch */
    if (whole == 0)
        return dest(L, n, want); /* no elements */
    if (whole <= INT32_MAX && (bxn == 1 || bxn == whole) && (byn == 1 || byn == whole)) {
        int32_t d = no_alias(L, n, want, x, y);
        lower_emit(L, REC_MATMUL, 0, d, x, y, (int32_t)whole);
        return lower_copy_to(L, want, d);
    }
    int nb = R->rank - (X->rank >= 2) - 1, bx = X->rank > 2 ? X->rank - 2 : 0, by = Y->rank - 2;
    int64_t batch = 1;
    for (int i = 0; i < nb; i++)
        batch *= R->dims[i];
    if (batch > LOWER_MAX_AXIS_RESULTS) {
        char why[200];
        snprintf(why, sizeof why, "'@' over %lld batch elements, more than %d: it is unrolled one matrix product "
                 "at a time", (long long)batch, LOWER_MAX_AXIS_RESULTS);
        lower_fail(L, why);
        return 0;
    }
    int64_t m = X->rank >= 2 ? X->dims[X->rank - 2] : 1, k = Y->dims[Y->rank - 2], nn = Y->dims[Y->rank - 1];
    mx.rank = my.rank = mp.rank = 2;
    mx.dims[0] = mp.dims[0] = m;
    mx.dims[1] = my.dims[0] = k;
    my.dims[1] = mp.dims[1] = nn;
    int32_t xm = x;
    if (X->rank != 2) {
        xm = lower_temp(L, &mx);
        if (X->rank == 1)
            lower_emit(L, REC_COPY, 0, xm, x, 0, 0);
    }
    int32_t ym = lower_temp(L, &my), pm = lower_temp(L, &mp), d = no_alias(L, n, want, x, y);
    for (int64_t b = 0; b < batch && !L->failed; b++) {
        int64_t idx[CFX_MAX_RANK], ax[CFX_MAX_RANK], ay[CFX_MAX_RANK], ar[CFX_MAX_RANK];
        int64_t q = b;
        for (int i = nb - 1; i >= 0; i--) {
            idx[i] = q % R->dims[i];
            q /= R->dims[i];
        }
        for (int i = 0; i < R->rank; i++)
            ar[i] = i < nb ? idx[i] : -1;
        for (int i = 0; i < X->rank; i++)
            ax[i] = i < bx ? (X->dims[i] == 1 ? 0 : idx[i + nb - bx]) : -1;
        for (int i = 0; i < Y->rank; i++)
            ay[i] = i < by ? (Y->dims[i] == 1 ? 0 : idx[i + nb - by]) : -1;
        if (X->rank > 2)
            lower_emit(L, REC_GET_BOX, 0, xm, x, whole_box(L, X->rank, X->dims, ax), 0);
        lower_emit(L, REC_GET_BOX, 0, ym, y, whole_box(L, Y->rank, Y->dims, ay), 0);
        lower_emit(L, REC_MATMUL, 0, pm, xm, ym, 0);
        lower_emit(L, REC_SET_BOX, 0, d, pm, whole_box(L, R->rank, R->dims, ar), 0);
    }
    return lower_copy_to(L, want, d);
}

/* a @ b, their dtypes promoted: [m, k] @ [k, n] and [m, k] @ [k] are one MATMUL; a vector on
 * the left is a row, [k] @ [k, n] the MATMUL of [1, k] @ [k, n] (the same bytes under another
 * shape, a COPY each way); [k] @ [k] is a DOT; more dimensions are a batch (lower_batch_matmul). */
static int32_t lower_matmul(lowerer *L, ast_node *n, ast_node *a, ast_node *b, int32_t want)
{
    int dt = n->ty.dtype; /* the operands' dtypes promote */
    int32_t x = convert(L, lower_expr(L, a, -1), dt), y = convert(L, lower_expr(L, b, -1), dt);
    if (a->ty.rank > 2 || b->ty.rank > 2)
        return lower_batch_matmul(L, n, &a->ty, &b->ty, x, y, want);
    if (a->ty.rank == 1 && b->ty.rank == 1) {
        int32_t d = no_alias(L, n, want, x, y);
        lower_emit(L, REC_DOT, 0, d, x, y, 0);
        return lower_copy_to(L, want, d);
    }
    if (a->ty.rank == 1) {
        cfx_type row = a->ty, out = n->ty;
        row.dtype = out.dtype = (cfx_dtype)dt;
        row.rank = out.rank = 2;
        row.dims[0] = out.dims[0] = 1;
        row.dims[1] = a->ty.dims[0];
        out.dims[1] = b->ty.dims[1];
        int32_t r = lower_temp(L, &row), p = lower_temp(L, &out), d = dest(L, n, want);
        lower_emit(L, REC_COPY, 0, r, x, 0, 0);
        lower_emit(L, REC_MATMUL, 0, p, r, y, 0);
        lower_emit(L, REC_COPY, 0, d, p, 0, 0);
        return d;
    }
    int32_t d = no_alias(L, n, want, x, y);
    lower_emit(L, REC_MATMUL, 0, d, x, y, 0);
    return lower_copy_to(L, want, d);
}

/* concat((a, b, ...), axis=K): each part, converted to the result's dtype, written into its
 * place along the axis with one SET_BOX (one part: a COPY). */
/* take(x, idx, axis=K): one GATHER, after the indices' check: CHECK_INDEX of the index when
 * there is one (none when it is known: the checker saw it in range), else of the least and then
 * the greatest index (two REDUCEs), so a stop reports the least index when it is below the range
 * and the greatest otherwise; no check when there are no indices. */
static int32_t lower_take(lowerer *L, ast_node *n, int32_t want)
{
    ast_node *xa = NULL, *ia = NULL;
    for (int i = 0; i < n->nlist; i++)
        if (n->list[i]->kind != AST_KWARG) {
            if (!xa)
                xa = n->list[i];
            else if (!ia)
                ia = n->list[i];
        }
    int axis = lower_note(n)->axis;
    int32_t x = lower_expr(L, xa, -1), idx = lower_expr(L, ia, -1);
    int64_t rows = xa->ty.dims[axis], count = 1;
    for (int d = 0; d < ia->ty.rank; d++)
        count *= ia->ty.dims[d];
    if (count == 1 && !lower_note(ia)->known) {
        check_index(L, idx, rows, xa, axis);
    } else if (count > 1) {
        cfx_type one = ia->ty;
        one.rank = 0;
        for (int k = 0; k < 2; k++) {
            int32_t s = lower_temp(L, &one);
            lower_emit(L, REC_REDUCE, k ? OP_RMAX : OP_RMIN, s, idx, 0, 0);
            check_index(L, s, rows, xa, axis);
        }
    }
    int32_t d = want >= 0 && want != x && want != idx ? want : lower_temp(L, &n->ty);
    lower_emit(L, REC_GATHER, 0, d, x, idx, axis);
    return lower_copy_to(L, want, d);
}

static int32_t lower_concat(lowerer *L, ast_node *n, int32_t want)
{
    const ast_node *parts = n->list[0];
    for (int i = 0; i < n->nlist; i++)
        if (n->list[i]->kind != AST_KWARG) {
            parts = n->list[i];
            break;
        }
    int axis = lower_note(n)->axis, np = parts->nlist, dt = n->ty.dtype;
    const cfx_type *R = &n->ty;
    int32_t *s = calloc((size_t)np, sizeof *s);
    if (!s) {
        lower_fail(L, "out of memory");
        return 0;
    }
    int clash = 0;
    for (int i = 0; i < np; i++) {
        s[i] = convert(L, lower_expr(L, parts->list[i], -1), dt);
        clash |= s[i] == want;
    }
    int32_t d = want >= 0 && !clash ? want : lower_temp(L, R);
    if (np == 1) {
        lower_emit(L, REC_COPY, 0, d, s[0], 0, 0);
    } else {
        int64_t at = 0;
        for (int i = 0; i < np && !L->failed; i++) {
            int32_t ent[2 * CFX_MAX_RANK];
            for (int dd = 0; dd < R->rank; dd++) {
                ent[2 * dd] = dd == axis && at > 0 ? lower_const_scalar(L, CFX_I32, at, 0) : -1;
                ent[2 * dd + 1] = (int32_t)(dd == axis ? parts->list[i]->ty.dims[dd] : R->dims[dd]);
            }
            at += parts->list[i]->ty.dims[axis];
            int32_t tab = L->failed ? 0 : prog_table(L->b, ent, 2 * R->rank);
            if (tab < 0)
                lower_fail(L, "the graph has too many subscripts");
            lower_emit(L, REC_SET_BOX, 0, d, s[i], tab, 0);
        }
    }
    free(s);
    return lower_copy_to(L, want, d);
}

/* transpose(x, axes) and permute(x, axes): output dimension d is axis p[d] of x. One record:
 * a COPY when the axes longer than 1 keep their order (the elements do), the one TRANSPOSE of a
 * 2-D swap, and otherwise one PERMUTE (each result element reads its source element), where
 * moving blocks took a GET_BOX and a SET_BOX (and a 2-D TRANSPOSE) per block. */
static int32_t lower_permute(lowerer *L, ast_node *n, int32_t want)
{
    const cfx_type *X = &n->list[0]->ty;
    int rank = X->rank, p[CFX_MAX_RANK], last = -1, kept = 1;
    int32_t packed = 0;
    for (int d = 0; d < rank; d++) {
        p[d] = (int)(lower_note(n)->ival >> (4 * d) & 15);
        packed |= (int32_t)p[d] << (3 * d);
        if (X->dims[p[d]] > 1) {
            kept &= p[d] > last;
            last = p[d];
        }
    }
    int32_t x = lower_expr(L, n->list[0], -1);
    int32_t d = no_alias(L, n, want, x, x);
    if (kept)
        lower_emit(L, REC_COPY, 0, d, x, 0, 0);
    else if (rank == 2)
        lower_emit(L, REC_TRANSPOSE, 0, d, x, 0, 0);
    else
        lower_emit(L, REC_PERMUTE, 0, d, x, packed, 0);
    return lower_copy_to(L, want, d);
}

/* The records a halving tree takes for an axis of `len`: three a level (two halves, their max). */
static int64_t halving_records(int64_t len)
{
    int64_t recs = 1; /* the COPY to the result */
    for (; len > 1; len = (len + 1) / 2)
        recs += 3;
    return recs;
}

/* max or min along axis a of x (type X) into d, as a halving tree: at each level the first and
 * the last ceil(len / 2) positions along the axis (they overlap by one for an odd length: the
 * largest of a set does not mind seeing an element twice), a GET_BOX of each and their
 * elementwise max (min), until one position is left, which d takes. log2(len) levels of three
 * records each, whatever the other axes hold, where one result at a time costs three records per
 * result. The same values as the REDUCE of each slice (NaN if the slice holds one), but for which
 * of two equal zeros or two NaNs comes out. */
static int32_t lower_halving(lowerer *L, int op, int32_t x, const cfx_type *X, int a, int32_t d)
{
    cfx_type t = *X;
    int32_t cur = x;
    for (int64_t len = X->dims[a]; len > 1 && !L->failed;) {
        int64_t half = (len + 1) / 2;
        int32_t ent[2 * CFX_MAX_RANK];
        t.dims[a] = half;
        int32_t lo = lower_temp(L, &t), hi = lower_temp(L, &t), m = lower_temp(L, &t);
        for (int k = 0; k < 2; k++) {
            for (int dd = 0; dd < X->rank; dd++) {
                ent[2 * dd] = dd == a && k ? lower_const_scalar(L, CFX_I32, len - half, 0) : -1;
                ent[2 * dd + 1] = (int32_t)t.dims[dd];
            }
            int32_t tab = L->failed ? 0 : prog_table(L->b, ent, 2 * X->rank);
            if (tab < 0) {
                lower_fail(L, "the graph has too many subscripts");
                return d;
            }
            lower_emit(L, REC_GET_BOX, 0, k ? hi : lo, cur, tab, 0);
        }
        lower_emit(L, REC_BINARY, op == OP_RMAX ? OP_MAX : OP_MIN, m, lo, hi, 0);
        cur = m;
        len = half;
    }
    lower_emit(L, REC_COPY, 0, d, cur, 0, 0);
    return d;
}

/* An axis reduction whose results are at most LOWER_AXIS_FEW, along an axis longer than
 * LOWER_AXIS_LONG, is not one REDUCE_AXIS: each result would be one GPU thread folding the whole
 * run alone (greedy decoding's argmax over a vocabulary of 32k, a thread looping 32k elements)
 * while the rest of the grid waits. Such few results are made by records that spread each run
 * over the grid instead. */
#define LOWER_AXIS_FEW 16
#define LOWER_AXIS_LONG 4096

/* A reduction along axis `axis1` - 1 of n's tensor (axis1 -1: over all of it, the one result
 * kept with every dimension 1). One result (a vector, or every other dimension 1) is one REDUCE
 * of the whole tensor, split over the grid. Otherwise one REDUCE_AXIS, each result its run
 * along the axis, unless the results are few and the axis long (LOWER_AXIS_FEW,
 * LOWER_AXIS_LONG): then sum, mean, all and any along the first or the last axis are one
 * MATMUL with a row or column of ones over the tensor seen as a matrix (all and any count the
 * trues in i32: all of them, or any), max and min a halving tree where that takes fewer records,
 * and anything else is unrolled, one REDUCE of each result's slice at a time. */
static int32_t lower_axis_reduce(lowerer *L, ast_node *n, int op, int axis1, int32_t want)
{
    ast_node *arg = n->list[0];
    const cfx_type *X = &arg->ty;
    int32_t x = lower_expr(L, arg, -1);
    if (axis1 < 0) {
        cfx_type one = n->ty;
        one.rank = 0;
        int32_t s = lower_temp(L, &one), d = dest(L, n, want);
        lower_emit(L, REC_REDUCE, op, s, x, 0, 0);
        lower_emit(L, REC_COPY, 0, d, s, 0, 0);
        return d;
    }
    int a = axis1 - 1, R = X->rank;
    int64_t len = X->dims[a], rest = 1;
    for (int d = 0; d < R; d++)
        if (d != a)
            rest *= X->dims[d];
    if (R == 1 || rest == 1) { /* one result: over all of the tensor, in its order */
        int32_t d = dest(L, n, want);
        cfx_type one = n->ty;
        one.rank = 0;
        int32_t s = lower_temp(L, &one);
        lower_emit(L, REC_REDUCE, op, s, x, 0, 0);
        lower_emit(L, REC_COPY, 0, d, s, 0, 0);
        return d;
    }
    if (rest > LOWER_AXIS_FEW || len <= LOWER_AXIS_LONG) {
        int32_t d = no_alias(L, n, want, x, x);
        lower_emit(L, REC_REDUCE_AXIS, op, d, x, a, 0);
        return lower_copy_to(L, want, d);
    }
    int32_t d = dest(L, n, want);
    int summed = op == OP_SUM || op == OP_MEAN || op == OP_ALL || op == OP_ANY;
    if (summed && (a == 0 || a == R - 1)) {
        int acc = op == OP_ALL || op == OP_ANY ? CFX_I32 : X->dtype;
        cfx_type m = *X, ones, out;
        memset(&ones, 0, sizeof ones);
        m.dtype = (cfx_dtype)acc;
        m.rank = 2;
        m.dims[0] = a == 0 ? len : rest;
        m.dims[1] = a == 0 ? rest : len;
        ones.dtype = (cfx_dtype)acc;
        ones.rank = a == 0 ? 2 : 1;
        ones.dims[0] = a == 0 ? 1 : len;
        ones.dims[1] = a == 0 ? len : 0;
        out = ones;
        out.rank = a == 0 ? 2 : 1;
        out.dims[0] = a == 0 ? 1 : rest;
        out.dims[1] = a == 0 ? rest : 0;
        int32_t mx = x; /* x seen as a matrix: itself when it is one, of the dtype summed */
        if (acc != (int)X->dtype || R != 2) {
            mx = lower_temp(L, &m);
            lower_emit(L, acc != (int)X->dtype ? REC_CAST : REC_COPY, 0, mx, x, 0, 0);
        }
        void *data = calloc((size_t)len, 8);
        if (!data) {
            lower_fail(L, "out of memory");
            return d;
        }
        for (int64_t i = 0; i < len; i++) {
            if (acc == CFX_F32) ((float *)data)[i] = 1.0f;
            else if (acc == CFX_F64) ((double *)data)[i] = 1.0;
            else if (acc == CFX_I32) ((int32_t *)data)[i] = 1;
            else ((int64_t *)data)[i] = 1;
        }
        int32_t dims[CFX_MAX_RANK] = {(int32_t)ones.dims[0], (int32_t)ones.dims[1]};
        int32_t o = L->failed ? 0 : note_slot(L, prog_const(L->b, (cfx_dtype)acc, ones.rank, dims, data));
        free(data);
        if (L->failed)
            return d;
        L->info[o].count = len;
        L->info[o].dtype = acc;
        L->info[o].ty = ones;
        int32_t s = lower_temp(L, &out);
        if (a == 0)
            lower_emit(L, REC_MATMUL, 0, s, o, mx, 0);
        else
            lower_emit(L, REC_MATMUL, 0, s, mx, o, 0);
        if (op == OP_SUM) {
            lower_emit(L, REC_COPY, 0, d, s, 0, 0);
        } else {
            cfx_type r = out;
            r.dtype = n->ty.dtype;
            int32_t t = lower_temp(L, &r);
            if (op == OP_MEAN)
                lower_emit(L, REC_BINARY, OP_DIV, t, s, lower_const_scalar(L, acc, 0, (double)len), 0);
            else if (op == OP_ALL)
                lower_emit(L, REC_BINARY, OP_EQ, t, s, lower_const_scalar(L, CFX_I32, len, 0), 0);
            else
                lower_emit(L, REC_BINARY, OP_GT, t, s, lower_const_scalar(L, CFX_I32, 0, 0), 0);
            lower_emit(L, REC_COPY, 0, d, t, 0, 0);
        }
        return d;
    }
    if ((op == OP_RMAX || op == OP_RMIN) && halving_records(len) < 3 * rest)
        return lower_halving(L, op, x, X, a, d);
    /* one result at a time (at most LOWER_AXIS_FEW): the slice of x along the axis, reduced over
     * the grid, written at its place */
    cfx_type v = *X, one = n->ty;
    v.rank = 1;
    v.dims[0] = len;
    one.rank = 0;
    const cfx_type *D = &n->ty;
    for (int64_t r = 0; r < rest && !L->failed; r++) {
        int32_t ent[2 * CFX_MAX_RANK], out[2 * CFX_MAX_RANK];
        int64_t q = r;
        int k = D->rank;
        for (int dd = R - 1; dd >= 0; dd--) {
            if (dd == a) {
                ent[2 * dd] = -1;
                ent[2 * dd + 1] = (int32_t)len;
                if (D->rank == R) { /* keepdims: index 0 */
                    k--;
                    out[2 * k] = lower_const_scalar(L, CFX_I32, 0, 0);
                    out[2 * k + 1] = -1;
                }
                continue;
            }
            int64_t i = q % X->dims[dd];
            q /= X->dims[dd];
            ent[2 * dd] = lower_const_scalar(L, CFX_I32, i, 0);
            ent[2 * dd + 1] = -1;
            k--;
            out[2 * k] = ent[2 * dd];
            out[2 * k + 1] = -1;
        }
        int32_t tin = L->failed ? 0 : prog_table(L->b, ent, 2 * R);
        int32_t tout = L->failed ? 0 : prog_table(L->b, out, 2 * D->rank);
        if (tin < 0 || tout < 0) {
            lower_fail(L, "the graph has too many subscripts");
            return d;
        }
        int32_t sl = lower_temp(L, &v), s = lower_temp(L, &one);
        lower_emit(L, REC_GET_BOX, 0, sl, x, tin, 0);
        lower_emit(L, REC_REDUCE, op, s, sl, 0, 0);
        lower_emit(L, REC_SET_BOX, 0, d, s, tout, 0);
    }
    return d;
}

static int32_t lower_op_call(lowerer *L, ast_node *n, int32_t want)
{
    const check_note *k = lower_note(n);
    int op = k->op;
    ast_node **arg = n->list;
    switch (op_class[op]) {
    case OPC_UNARY_REAL:
    case OPC_UNARY_NUM:
    case OPC_UNARY_BOOL:
    case OPC_UNARY_INT: {
        int32_t x = lower_expr(L, arg[0], -1), d = dest(L, n, want);
        lower_emit(L, REC_UNARY, op, d, x, 0, 0);
        return d;
    }
    case OPC_BINARY_NUM:
    case OPC_BINARY_REAL:
    case OPC_COMPARE:
    case OPC_BINARY_BOOL:
    case OPC_BINARY_INT:
        return elementwise2(L, n, op, arg[0], arg[1], want);
    case OPC_REDUCE_NUM:
    case OPC_REDUCE_REAL:
    case OPC_REDUCE_ARG:
    case OPC_REDUCE_BOOL: {
        if (k->axis)
            return lower_axis_reduce(L, n, op, k->axis, want);
        int32_t x = lower_expr(L, arg[0], -1), d = no_alias(L, n, want, x, x);
        lower_emit(L, REC_REDUCE, op, d, x, 0, 0);
        return lower_copy_to(L, want, d);
    }
    case OPC_DOT: {
        int dt = n->ty.dtype; /* the operands' dtypes promote */
        int32_t x = convert(L, lower_expr(L, arg[0], -1), dt), y = convert(L, lower_expr(L, arg[1], -1), dt);
        int32_t d = no_alias(L, n, want, x, y);
        lower_emit(L, REC_DOT, 0, d, x, y, 0);
        return lower_copy_to(L, want, d);
    }
    case OPC_MATMUL:
        return lower_matmul(L, n, arg[0], arg[1], want);
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
        int dt = n->ty.dtype; /* the values' dtypes promote */
        int32_t c = lower_expr(L, arg[0], -1), x = lower_operand(L, arg[1], dt), y = lower_operand(L, arg[2], dt);
        int32_t d = dest(L, n, want);
        x = convert(L, x, dt);
        y = convert(L, y, dt);
        c = spread(L, c, d);
        x = spread(L, x, d);
        y = spread(L, y, d);
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
static void lower_kernel_call(lowerer *L, ast_node *n, int32_t *outs, int nouts)
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
    if (k->callee == CHECK_CALL_OP && k->op == OP_LEN && k->list) /* a list's length: run time */
        return lower_copy_to(L, want, list_len(L, k->list));
    if (k->callee == CHECK_CALL_OP)
        return lower_op_call(L, n, want);
    if (k->callee == CHECK_CALL_METHOD)
        return lower_method(L, n, want);
    if (k->callee == CHECK_CALL_RESHAPE) {
        /* the same bytes under another shape: a COPY between slots of one count */
        int32_t x = lower_expr(L, n->list[0], -1), d = dest(L, n, want);
        lower_emit(L, REC_COPY, 0, d, x, 0, 0);
        return d;
    }
    if (k->callee == CHECK_CALL_CONCAT)
        return lower_concat(L, n, want);
    if (k->callee == CHECK_CALL_TAKE)
        return lower_take(L, n, want);
    if (k->callee == CHECK_CALL_PERMUTE)
        return lower_permute(L, n, want);
    if (k->callee == CHECK_CALL_STACK) {
        /* stack(xs): the list must be full; then its items are the tensor */
        const check_list *l = k->list;
        int32_t cap = lower_const_scalar(L, CFX_I32, l->cap, 0);
        lower_emit(L, REC_CHECK_BOUND, 0, list_len(L, l), cap, prog_string(L->b, l->name), 4);
        return lower_copy_to(L, want, list_data(L, l));
    }
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
static int32_t lower_expr(lowerer *L, ast_node *n, int32_t want)
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
        if (k->unset_line) {
            /* assigned only inside a loop: some assignment of it must have run */
            int32_t name = L->failed ? -1 : prog_string(L->b, n->name);
            lower_emit(L, REC_CHECK_STEP, 0, flag_of(L, n->name, FLAG_ASSIGNED), name, 0, k->unset_line);
        }
        if (k->presence == 1) {
            /* may be None: its value is read only when it holds one */
            int32_t name = L->failed ? -1 : prog_string(L->b, n->name);
            lower_emit(L, REC_CHECK_STEP, 0, flag_of(L, n->name, FLAG_PRESENT), name, 1, 0);
        }
        return lower_copy_to(L, want, lower_var(L, n->name, &n->ty));
    case AST_UNARY: {
        int32_t x = lower_expr(L, n->a, -1), d = dest(L, n, want);
        lower_emit(L, REC_UNARY, n->op, d, x, 0, 0);
        return d;
    }
    case AST_BINARY:
        if (n->op == OP_MATMUL)
            return lower_matmul(L, n, n->a, n->b, want);
        if ((n->op == OP_AND || n->op == OP_OR) && one_element(&n->a->ty) && one_element(&n->b->ty))
            return short_circuit(L, n, want);
        return elementwise2(L, n, n->op, n->a, n->b, want);
    case AST_INDEX: {
        if (!n->b)
            return lower_get_box(L, n, want);
        if (k->list)
            return lower_list_item(L, n, want);
        int32_t x = lower_expr(L, n->a, -1);
        int32_t i = lower_index(L, n->b, n->a->ty.dims[0], n->a, 0);
        /* never write the tensor or the index while reading them (`i = x[i]`) */
        int32_t d = want >= 0 && want != x && want != i ? want : lower_temp(L, &n->ty);
        lower_emit(L, REC_GET_ROW, 0, d, x, i, 0);
        return lower_copy_to(L, want, d);
    }
    case AST_CALL:
        return lower_call(L, n, want);
    case AST_IS: {
        /* `x is None` made at run time: x's presence flag is 0 */
        const ast_node *x = n->a->kind == AST_NONE ? n->b : n->a;
        const check_note *kx = lower_note(x);
        if (kx && kx->unset_line) {
            int32_t name = L->failed ? -1 : prog_string(L->b, x->name);
            lower_emit(L, REC_CHECK_STEP, 0, flag_of(L, x->name, FLAG_ASSIGNED), name, 0, kx->unset_line);
        }
        int32_t d = dest(L, n, want);
        lower_emit(L, REC_BINARY, (n->flags & AST_F_NOT) ? OP_NE : OP_EQ, d, flag_of(L, x->name, FLAG_PRESENT),
                   lower_const_scalar(L, CFX_I32, 0, 0), 0);
        return d;
    }
    case AST_LIST:
        /* the items of `for v in [a, b]` as the rows of one tensor, made before the loop starts */
        return lower_copy_to(L, want, lower_rows(L, n, NULL));
    case AST_COND: {
        /* only the chosen value is evaluated, as in Python (a known condition never gets here:
         * the node is known, or its value is the chosen one's, lowered below) */
        const check_note *kc = lower_note(n->a);
        if (kc->known)
            return lower_expr(L, kc->ival ? n->b : n->c, want);
        int32_t d = dest(L, n, want);
        patchlist other = {0};
        lower_jump_if(L, n->a, 0, &other);
        lower_into(L, n->b, d);
        int32_t j = lower_emit(L, REC_JUMP, 0, 0, 0, 0, 0);
        lower_patch_here(L, &other);
        lower_patch_free(&other);
        lower_into(L, n->c, d);
        if (j >= 0)
            lower_set_target(L, j, prog_here(L->b));
        return d;
    }
    default:
        lower_fail(L, "internal error: an expression the lowering does not know");
        return 0;
    }
}

/* Emits a test of the one-element bool n that jumps (target left open in pl) when n's value
 * equals `when`, and falls through otherwise; `and`, `or` and `not` short-circuit. */
static void lower_jump_if(lowerer *L, ast_node *n, int when, patchlist *pl)
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
static void lower_inline_call(lowerer *L, ast_node *call, int32_t *outs, int nouts)
{
    const ast_graph *g = &L->m->graphs[lower_note(call)->callee];
    if (L->depth >= LOWER_MAX_INLINE) {
        char why[192];
        snprintf(why, sizeof why, "graph calls nest deeper than %d: this call lies %d calls deep inside graph '%s'",
                 LOWER_MAX_INLINE, L->depth + 1, L->m->graphs[L->top].name);
        at(L, call); /* the message points at the call that crossed the cap */
        lower_fail(L, why);
        return;
    }
    int32_t *args = calloc((size_t)g->nparams + 1, sizeof *args);
    int32_t *given = calloc((size_t)call->nlist + 1, sizeof *given);
    if (!args || !given) {
        free(args);
        free(given);
        lower_fail(L, "out of memory");
        return;
    }
    /* the arguments in the order they are written, by position or by name, as Python
     * evaluates them; a parameter left out takes its default, filling a tensor */
    /* a parameter that defaults to None takes, besides its value, its presence: 0 for None (given,
     * or left out), the flag of a variable that may be None, else 1 */
    int32_t *present = calloc((size_t)g->nparams + 1, sizeof *present);
    if (!present) {
        free(args);
        free(given);
        lower_fail(L, "out of memory");
        return;
    }
    for (int i = 0; i < call->nlist; i++) {
        ast_node *a = call->list[i]->kind == AST_KWARG ? call->list[i]->a : call->list[i];
        if (a->kind == AST_NONE || (a->kind == AST_NAME && a->ty.rank == -2)) {
            given[i] = -1; /* None: nothing to evaluate */
            continue;
        }
        given[i] = lower_expr(L, a, -1);
    }
    const int *map = lower_note(call)->argmap;
    for (int i = 0; i < g->nparams && !L->failed; i++) {
        int optional = g->params[i].def && g->params[i].def->kind == AST_NONE;
        present[i] = lower_const_scalar(L, CFX_I32, 1, 0);
        if (optional) {
            ast_node *a = map && map[i] >= 0 ? call->list[map[i]] : NULL;
            a = a && a->kind == AST_KWARG ? a->a : a;
            const check_note *ka = a ? lower_note(a) : NULL;
            if (!a || given[map[i]] < 0)
                present[i] = lower_const_scalar(L, CFX_I32, 0, 0);
            else if (a->kind == AST_NAME && ka && ka->presence == 2)
                present[i] = flag_of(L, a->name, FLAG_PRESENT);
        }
        if (map && map[i] >= 0 && given[map[i]] >= 0) {
            args[i] = given[map[i]];
            continue;
        }
        if (optional) { /* None: a value never read */
            args[i] = lower_temp(L, &g->params[i].type);
            continue;
        }
        int32_t v = lower_expr(L, g->params[i].def, -1);
        if (g->params[i].type.rank > 0) {
            args[i] = lower_temp(L, &g->params[i].type);
            lower_emit(L, REC_FILL, 0, args[i], v, 0, 0);
        } else {
            args[i] = v;
        }
    }
    free(given);
    scope sc = {0};
    sc.graph = lower_note(call)->callee;
    scope *saved_sc = L->sc;
    loopl *saved_loop = L->loop;
    int saved_line = L->line, saved_col = L->col;
    L->sc = &sc;
    L->loop = NULL; /* break and continue never leave a graph */
    L->depth++;
    for (int i = 0; i < g->nparams && !L->failed; i++) {
        if (ast_assigns(g->body, g->params[i].name))
            lower_copy_to(L, lower_var(L, g->params[i].name, &g->params[i].type), args[i]);
        else
            lower_bind_var(L, g->params[i].name, &g->params[i].type, args[i]);
    }
    for (int i = 0; i < g->nresults && !L->failed; i++) {
        int32_t r = lower_var(L, g->results[i].name, &g->results[i].type);
        if (i < nouts)
            outs[i] = r;
    }
    for (int i = 0; i < g->nparams && !L->failed; i++)
        if (g->params[i].def && g->params[i].def->kind == AST_NONE)
            add_flag(L, &sc, g->params[i].name, FLAG_PRESENT, -1);
    open_flags(L, g->body);
    for (int i = 0; i < g->nparams && !L->failed; i++)
        if (g->params[i].def && g->params[i].def->kind == AST_NONE)
            lower_copy_to(L, flag_of(L, g->params[i].name, FLAG_PRESENT), present[i]);
    free(present);
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

/* ---- lists ---------------------------------------------------------------------------------
 * A list is two variables: its items, a tensor [capacity, item...] under the list's name,
 * and its length, an i32 named `len(NAME)`. Every access that can fail at run time is
 * preceded by a CHECK_BOUND that says what is checked (program.h): an index, an append to a
 * full list, a pop from an empty one, a stack of a list that is not full. */
static int32_t list_data(lowerer *L, const check_list *l)
{
    cfx_type t = check_list_data_type(l);
    return lower_var(L, l->name, &t);
}

static int32_t list_len(lowerer *L, const check_list *l)
{
    cfx_type t;
    memset(&t, 0, sizeof t);
    t.dtype = CFX_I32;
    return lower_var(L, l->len_name, &t);
}

static void check_bound(lowerer *L, int32_t a, int32_t b, const check_list *l, int what)
{
    int32_t name = L->failed ? -1 : prog_string(L->b, l->name);
    lower_emit(L, REC_CHECK_BOUND, 0, a, b, name, what);
}

/* The items of literal n ([a, b, ...], or none for list(TYPE, N)) into the first rows of list
 * l's items, or, with l NULL, of a new tensor of n's type (the rows `for v in [a, b]` walks),
 * which it returns. Every value is computed before any row is written, so an item may read
 * what it replaces. */
static int32_t lower_rows(lowerer *L, ast_node *n, const check_list *l)
{
    int nitems = n->kind == AST_LIST ? n->nlist : 0;
    int32_t *vals = calloc((size_t)nitems + 1, sizeof *vals);
    if (!vals) {
        lower_fail(L, "out of memory");
        return -1;
    }
    for (int i = 0; i < nitems; i++)
        vals[i] = lower_expr(L, n->list[i], -1);
    int32_t data = l ? list_data(L, l) : lower_temp(L, &n->ty);
    for (int i = 0; i < nitems; i++)
        lower_emit(L, REC_SET_ROW, 0, data, lower_const_scalar(L, CFX_I32, i, 0), vals[i], 0);
    free(vals);
    return data;
}

/* xs = [a, b, ...], xs = [], xs = list(TYPE, N): the items first, then the length. */
static void lower_list_value(lowerer *L, ast_node *n, const check_list *l)
{
    lower_rows(L, n, l);
    lower_copy_to(L, list_len(L, l), lower_const_scalar(L, CFX_I32, n->kind == AST_LIST ? n->nlist : 0, 0));
}

static int32_t lower_list_item(lowerer *L, ast_node *n, int32_t want)
{
    const check_list *l = lower_note(n)->list;
    int32_t i = lower_expr(L, n->b, -1), len = list_len(L, l);
    check_bound(L, i, len, l, 0);
    int32_t d = want >= 0 && want != i ? want : lower_temp(L, &n->ty);
    lower_emit(L, REC_GET_ITEM, 0, d, list_data(L, l), i, len);
    return lower_copy_to(L, want, d);
}

/* xs[i] = val; with aug (the BINARY value of `xs[i] op= E`), the item is read, combined with E
 * and written back, the index evaluated and checked once. */
static void lower_list_set(lowerer *L, ast_node *t, int32_t val, const ast_node *aug)
{
    const check_list *l = lower_note(t)->list;
    int32_t i = lower_expr(L, t->b, -1), len = list_len(L, l), data = list_data(L, l);
    check_bound(L, i, len, l, 0);
    if (aug) {
        int32_t item = lower_temp(L, &t->ty);
        lower_emit(L, REC_GET_ITEM, 0, item, data, i, len);
        int32_t v = lower_operand(L, aug->b, lower_note(aug)->cdt);
        binary_slots(L, aug->op, lower_note(aug)->cdt, aug->b, item, item, v);
        val = item;
    }
    lower_emit(L, REC_SET_ITEM, 0, data, i, val, len);
}

/* xs.append(v): room is checked, the item written at the length, the length grown;
 * xs.pop(): the list must not be empty; the last item, then the length shrunk. */
static int32_t lower_method(lowerer *L, ast_node *n, int32_t want)
{
    const check_list *l = lower_note(n)->list;
    int32_t len = list_len(L, l);
    if (strcmp(n->name, "append") == 0) {
        int32_t v = lower_expr(L, n->list[1], -1);
        check_bound(L, len, lower_const_scalar(L, CFX_I32, l->cap, 0), l, 1);
        lower_emit(L, REC_SET_ITEM, 0, list_data(L, l), len, v, len);
        lower_emit(L, REC_BINARY, OP_ADD, len, len, lower_const_scalar(L, CFX_I32, 1, 0), 0);
        return 0;
    }
    int32_t last = lower_const_scalar(L, CFX_I32, -1, 0);
    check_bound(L, last, len, l, 2);
    int32_t d = want >= 0 ? want : lower_temp(L, &n->ty);
    lower_emit(L, REC_GET_ITEM, 0, d, list_data(L, l), last, len);
    lower_emit(L, REC_BINARY, OP_SUB, len, len, lower_const_scalar(L, CFX_I32, 1, 0), 0);
    return d;
}

/* ---- boxes ----------------------------------------------------------------------------------
 * x[i, j], x[a:b], x[:, j] become one GET_BOX or SET_BOX whose table lists, per dimension of x,
 * a start slot and a length (program.h). An index computed at run time is checked with
 * CHECK_INDEX against its dimension, a slice start with CHECK_BOUND (0 <= start <= dim -
 * length); known ones are constants the checker has placed in range. As in Python, every
 * item of the subscript is computed before any is checked: in x[i, 10 / k] with k = 0 the
 * division stops the run, whatever i is. */
static int32_t lower_box(lowerer *L, ast_node *n, int32_t *starts)
{
    const ast_node *x = n->a;
    const cfx_type *t = &x->ty;
    int32_t ent[2 * CFX_MAX_RANK];
    int32_t name = x->kind == AST_NAME && !L->failed ? prog_string(L->b, x->name) : -1;
    for (int d = 0; d < t->rank; d++) {
        ast_node *it = d < n->nlist ? n->list[d] : NULL;
        int32_t dim = (int32_t)t->dims[d], st = -1, len = dim;
        if (it && it->kind != AST_SLICE) {
            const check_note *k = lower_note(it);
            st = k->known ? lower_const_scalar(L, it->ty.dtype, k->ival, 0) : lower_expr(L, it, -1);
            len = -1;
        } else if (it) {
            const check_note *ks = lower_note(it);
            len = (int32_t)ks->slice_len;
            st = ks->known ? lower_const_scalar(L, CFX_I32, ks->ival, 0) : lower_expr(L, it->a, -1);
        }
        ent[2 * d] = st;
        ent[2 * d + 1] = len;
        starts[d] = st;
    }
    for (int d = 0; d < n->nlist && d < t->rank; d++) {
        ast_node *it = n->list[d];
        int32_t dim = (int32_t)t->dims[d], st = ent[2 * d], len = ent[2 * d + 1];
        if (it->kind != AST_SLICE && !lower_note(it)->known)
            check_index(L, st, dim, x, d);
        else if (it->kind == AST_SLICE && !lower_note(it)->known)
            lower_emit(L, REC_CHECK_BOUND, 0, st, lower_const_scalar(L, slot_dtype(L, st), dim - len + 1, 0), name,
                       3);
    }
    int32_t tab = L->failed ? 0 : prog_table(L->b, ent, 2 * t->rank);
    if (tab < 0)
        lower_fail(L, "the graph has too many subscripts");
    return tab;
}

static int is_start(const int32_t *starts, int rank, int32_t s)
{
    for (int d = 0; d < rank; d++)
        if (starts[d] == s)
            return 1;
    return 0;
}

static int32_t lower_get_box(lowerer *L, ast_node *n, int32_t want)
{
    int32_t starts[CFX_MAX_RANK] = {-1, -1, -1, -1, -1};
    int32_t x = lower_expr(L, n->a, -1), tab = lower_box(L, n, starts);
    /* never write the tensor or a start while reading them (`i = x[i, j]`) */
    int32_t d = want >= 0 && want != x && !is_start(starts, n->a->ty.rank, want) ? want : lower_temp(L, &n->ty);
    lower_emit(L, REC_GET_BOX, 0, d, x, tab, 0);
    return lower_copy_to(L, want, d);
}

/* x[..] = val; with aug (the BINARY of `x[..] op= E`) the part is read, combined with E and
 * written back, its subscripts evaluated and checked once. */
static void lower_set_box(lowerer *L, ast_node *t, int32_t val, const ast_node *aug)
{
    int32_t starts[CFX_MAX_RANK] = {-1, -1, -1, -1, -1};
    int32_t x = lower_var(L, t->a->name, &t->a->ty), tab = lower_box(L, t, starts);
    if (aug) {
        int32_t part = lower_temp(L, &t->ty);
        lower_emit(L, REC_GET_BOX, 0, part, x, tab, 0);
        int32_t v = lower_operand(L, aug->b, lower_note(aug)->cdt);
        binary_slots(L, aug->op, lower_note(aug)->cdt, aug->b, part, part, v);
        val = part;
    } else if (val == x) {
        val = lower_copy_to(L, lower_temp(L, &t->ty), val); /* x[0:n] = x */
    }
    lower_emit(L, REC_SET_BOX, 0, x, val, tab, 0);
}
