/* gen_programs.h: a deterministic generator of random .cfx programs, with an independent
 * evaluator of what each must do.
 *
 * gen_make(seed) builds one program as a small tree: random nests of if/elif/else, while,
 * for range, for each, switch, break, continue, return, assert, row writes and elementwise
 * tensor statements over i32/f32 scalars and i32[4]/f32[4] tensors, type-correct by
 * construction. Some runs stop: asserts, indices that may be out of range, integer division
 * by values that may be 0, computed range steps that may be 0, and (when the caller sets
 * one) the loop budget. Every loop is bounded by construction, so no run hangs.
 *
 * gen_text() prints the tree as .cfx source (one statement per line, every binary
 * expression parenthesized), gen_inputs() draws inputs from the seed, and gen_eval() walks
 * the tree directly in C, with the language's rules written out here again rather than
 * taken from cfx: i32 wraps, `//` rounds down and `%` takes the divisor's sign (Python's),
 * C's truncdiv and fmod truncate, INT_MIN // -1 is INT_MIN, `/` of i32 is f32, `and`/`or`
 * short-circuit, sum(f32) accumulates in double, a negative index counts from the end, and
 * the budget counts iterations, all loops together: one per body entered, none for the test
 * that ends a loop; with a budget of N, a loop about to enter its body for the (N+1)-th time
 * in the run stops it with limit at the loop's line (the language's rule, docs/language.md).
 *
 * Two programs in three (g->ext) also draw the forms added to the language later: bounded
 * lists (L0, i32 with room for 4, holding 3 at first; k0, a literal of 3 i32; L1, room for three
 * f32[4], holding 2) with append, pop, item reads and writes (= and op=), len, for over a list,
 * enumerate, stack, and a literal list assigned again;
 * for over a list written in place; slices with known starts (written in each of Python's ways)
 * and run-time ones (linear in s0 = n % 3, an input or a loop counter), x[:, j], x[i, j], x[i][j]
 * and writes through them, on the vectors and on an f32[3, 4] matrix; numpy broadcasting ([3, 4] +
 * [4], [3, 1] * [1, 4], [3, 4] * [3, 1]) through reshape; `**` on i32, i64, f32 and tensors; and
 * i64 scalars with ranges over i64, at the i64 limits too; `/` of i32 (an f32), `//` and `%` of
 * f32, and C's truncdiv and fmod by name; operands of mixed dtypes that promote (i32 or i64 with
 * f32, i32 with i64, a bool or an i32-with-f32 comparison with i32); a call of a second graph
 * whose parameters have defaults, left out or given by position or by name; o0, None or an f32,
 * read as a value (a stop with value while None), tested with is None, and assigned; a loop's variable read after
 * the loop (its last value, or a stop with value when no iteration ran, as Python's
 * UnboundLocalError). Their stops: an append to a full list,
 * a pop from an empty one, an item index outside the length, stack of a list that is not full,
 * an index of any dimension out of range, a run-time slice start outside 0 ..= size - length.
 * Those forms are drawn from a second random stream, and each is put in beside the statements
 * the first stream draws, which stay as they were: a seed's program keeps every statement it
 * had before the forms were added (GEN_FIRST_STREAM_ONLY prints those alone), and a seed with
 * g->ext off is the program it always was, but for the results r4 and r5, whose prologue adds
 * no new record kind (so a consumer that lacks a new kind still runs those programs whole).
 * The evaluator follows Python: a plain write computes its value before the subscript, `op=`
 * the subscript (checked) first; all items of a subscript are computed before any is checked;
 * a literal's items before the list changes; broadcasting aligns dimensions at the right, a
 * one-element operand first.
 *
 * Header-only (static functions) so that a cpu test and a gpu test can both include it.
 * The graph's signature is fixed (see GEN_SIGNATURE), so callers bind inputs by name; its
 * inputs are those of the first programs (a b n x v w, in that order), and its results r0..r5.
 */
#ifndef CFX_GEN_PROGRAMS_H
#define CFX_GEN_PROGRAMS_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"

#define GEN_SIGNATURE                                                                       \
    "graph g(a: i32, b: i32, n: i32, x: f32, v: i32[4], w: f32[4]) -> (r0: i32, r1: f32, " \
    "r2: i32[4], r3: f32[4], r4: i64, r5: f32[3, 4])"
/* A second graph, printed after the first when a program calls it (GE_CALLH): parameters with
 * defaults, which calls leave out or give by name. */
#define GEN_CALLEE "graph h(p: i32, q: i32 = 3, s: f32 = 0.5) -> (y: f32) {\n  y = p * q + s\n}\n"
#define GEN_LEN 4          /* rows of every vector, columns of the matrix r5 */
#define GEN_ROWS 3         /* rows of the matrix r5 */
#define GEN_MAX_NODES 4096 /* expression and statement nodes of one program */
#define GEN_MAX_VARS 128
#define GEN_MAX_STMTS 8    /* statements the first stream draws for the graph's own block */
#define GEN_MAX_KIDS 24    /* statements in a block (those drawn and those put in beside them),
                              arms of an if, cases of a switch, items of a list */
#define GEN_MAX_DEPTH 3    /* nesting of compound statements */
#define GEN_TMAX 16        /* elements of a tensor value in the evaluator ([4, 4] at most) */

/* ---- the tree ---------------------------------------------------------------------------- */

enum gen_type {
    GT_I, GT_F, GT_B, GT_VI, GT_VF, /* i32, f32, bool, i32[4], f32[4] */
    GT_L,    /* i64 */
    GT_M,    /* f32[3, 4]: the variable r5 */
    GT_T,    /* a tensor expression: dtype tdt (GT_I or GT_F), shape rank, dims */
    GT_LIST, /* a list variable: items of type `item` (GT_I, or GT_VF for f32[4]), room for cap */
};

enum gen_expr {
    GE_INT, GE_REAL, GE_VAR /* form 1: a loop variable read after its loop: it may have no value */, GE_ADD, GE_SUB, GE_MUL, GE_DIV, GE_MOD, GE_MIN, GE_MAX,
    GE_LT, GE_LE, GE_GT, GE_GE, GE_EQ, GE_NE, GE_AND, GE_OR, GE_NOT, GE_NEG, GE_ABS,
    GE_SUM, GE_ARGMAX, GE_INDEX, GE_CAST_I, GE_CAST_F, GE_LEN,
    GE_COND, /* e[1] if e[0] else e[2]: only the chosen one is evaluated */
    /* the second stream's forms */
    GE_POW,     /* e[0] ** e[1] (i32, i64, f32) */
    GE_CAST_L,  /* cast(e[0] (i32), i64) */
    GE_CAST_IL, /* cast(e[0] (i64), i32): the low 32 bits */
    GE_LLEN,    /* len(list var) */
    GE_LITEM,   /* list var [e[0]]: an i32, or an f32[4] (type GT_T) */
    GE_STACK,   /* stack(list var) */
    GE_TSUM,    /* sum(e[0]), e[0] a tensor expression */
    GE_TVAR,    /* tensor variable var as a tensor expression (form 1: as GE_VAR's) */
    GE_BOX,     /* var[kids...]: the subscript items are GE_DIM nodes; a scalar when every item is
                   an index; form 1: written x[i][j] (two indices, each checked before the next) */
    GE_DIM,     /* one item of a subscript: form gen_dim */
    GE_RESHAPE, /* reshape(e[0], [dims]); form 1: the first dimension written -1 */
    GE_TBIN,    /* e[0] op e[1], op = form (GE_ADD, GE_SUB, GE_MUL), broadcast as numpy does */
    GE_TPOW,    /* e[0] ** ival, elementwise */
    GE_TWHERE,  /* where(e[0] > e[1], e[0], e[1]), broadcast */
    GE_TNEG,    /* -e[0] */
    GE_AXRED,   /* sum, max, min or mean (form 0..3) of r5 along axis ival (0, 1 or -1): f32[4] or
                   f32[3] */
    GE_TDIV,    /* e[0] / e[1] of two i32: true division, an f32 (never stops) */
    GE_CDIV,    /* truncdiv(e[0], e[1]) (i32): C's division, toward zero */
    GE_CMOD,    /* fmod(e[0], e[1]) (i32): C's remainder, the dividend's sign */
    GE_OPT,     /* the variable o0, None or an f32 (the prologue of a second-stream program): form 0,
                   its value read, which stops with value while it is None; 1, `(o0 if o0 is not
                   None else e[0])`, an f32; 2, `(1 if o0 is None else 0)`, an i32 */
    GE_CALLH,   /* a call of the graph GEN_CALLEE, h(e[0]) with q and s left to their defaults, or with
                   e[1] for q by position (form bit 1), e[2] for s by name (bit 2), or both by
                   name with s first (bit 4): an f32 */
    GE_MIXED,   /* e[0] op e[1], op = form (GE_ADD, GE_SUB, GE_MUL, GE_LT, GE_GE), of two scalars of
                   different types (i32, i64, f32, bool) that promote: the node's type, or for a
                   comparison (type GT_B) the one they promote to */
};

/* An item of a subscript (GE_DIM). */
enum gen_dim {
    GD_INDEX, /* e[0]: drops the dimension */
    GD_ALL,   /* `:` */
    GD_CONST, /* ival:vals[0], each written when vals[1] has bit 1 (start) or 2 (stop), Python's
                 rules for known bounds */
    GD_RUN,   /* e[0]:(e[0]) + vals[2]: a start known at run time, a length vals[2] */
};

enum gen_stmt {
    GS_ASSIGN,   /* var = e0 */
    GS_PAIR,     /* t0, t1 = e0, e1: both values first (tuple assignment) */
    GS_TENSOR,   /* var = tensor form `form` over tensor var tv and scalar e0 */
    GS_SETROW,   /* var[e0] = e1 */
    GS_IF,       /* arms: conds[k] with blocks[k]; has_else: the last block */
    GS_WHILE,    /* counter var, limit ival, cond e0, block */
    GS_FOR,      /* loop var, range(e0, e1, e2), block */
    GS_FOREACH,  /* loop var over tensor tv, block */
    GS_SWITCH,   /* e0; case values vals[k] with blocks[k]; has_else: default */
    GS_BREAK, GS_CONTINUE, GS_RETURN,
    GS_ASSERT,   /* e0, message "m<ival>" */
    GS_PRINT,    /* print(e0, "p<ival>"), or of tensor tv when e0 < 0 */
    GS_BLOCK,    /* kids */
    /* the second stream's forms */
    GS_TASSIGN,  /* var = e0, or var op= e0 (form: 0 for =, else GE_ADD, GE_SUB, GE_MUL), tensors */
    GS_TSET,     /* box e1 = e0, or box op= e0 (form as GS_TASSIGN) */
    GS_APPEND,   /* list var .append(e0) */
    GS_POP,      /* tv = list var .pop(), or the pop alone when tv < 0 */
    GS_LSET,     /* list var [e0] = e1, or op= (form as GS_TASSIGN) */
    GS_LASSIGN,  /* list var = [vals[0 .. ival)] */
    GS_FORLIST,  /* for var in list tv { kids[0] }; form 1: for vals[0], var in enumerate(tv) */
    GS_FORLIT,   /* for var in [vals[0 .. ival)] { kids[0] }; form 1: for tv, var in enumerate([...]) */
    GS_FOR64,    /* loop var (i64), range(e0, e1, e2) over i64, block */
    GS_ASSIGN64, /* r4 = e0, or r4 op= e0 (form as GS_TASSIGN) */
    GS_OPTSET,   /* o0 = e0 (f32): o0 holds a value from here on */
};

/* Tensor statement forms (GS_TENSOR): dst = ... */
enum gen_form {
    GF_ADD_T,   /* dst + tv */
    GF_MUL_S,   /* dst * e0 */
    GF_SUB_S,   /* tv - e0 */
    GF_DIV_T,   /* dst // tv (i32 only: a divide guard over a tensor) */
    GF_WHERE,   /* where(dst > tv, dst, tv) */
    GF_COPY,    /* copy(tv) */
};

typedef struct gen_node {
    uint8_t kind;   /* gen_expr or gen_stmt */
    uint8_t type;   /* gen_type of an expression */
    uint8_t form;   /* GS_TENSOR; the kinds of the second stream */
    uint8_t has_else;
    uint8_t tdt, rank, dims[2]; /* a tensor expression (GT_T): GT_I or GT_F, and its shape */
    uint8_t ext;    /* drawn from the second stream */
    int var, tv;    /* variable indices */
    int64_t ival;
    float fval;
    int e[3];       /* expression children */
    int kids[GEN_MAX_KIDS]; /* statements / blocks */
    int conds[GEN_MAX_KIDS];
    int vals[GEN_MAX_KIDS];
    int nkids;
    int line;       /* source line of the statement (header line for compound ones) */
    int else_line;  /* line of each `} elif`/`} else` / `case`: see lines[] */
    int lines[GEN_MAX_KIDS];
} gen_node;

typedef struct gen_var {
    char name[8];
    uint8_t type;
    uint8_t item; /* a list's items: GT_I or GT_VF */
    int cap;      /* a list's room */
} gen_var;

typedef struct gen_prog {
    uint64_t seed;
    uint64_t rng;
    uint64_t rng2;     /* the second stream: the forms added later, and everything inside them */
    int ext;           /* this program draws from the second stream (two seeds in three) */
    int ext_on;        /* drawing one of those forms now: gen_rand reads rng2 */
    gen_node nodes[GEN_MAX_NODES];
    int nnodes;
    gen_var vars[GEN_MAX_VARS];
    int nvars;
    int body;          /* the GS_BLOCK of the graph */
    int loops;         /* loops made so far: names i<k>, c<k>, e<k> */
    int asserts;
    int prints;
    int overflow;      /* 1 if a limit was hit while generating (the program is still valid) */
    /* variables visible where the generator is: index into vars */
    int scope[GEN_MAX_VARS];
    int nscope;
} gen_prog;

/* Inputs in declaration order of GEN_SIGNATURE. */
typedef struct gen_inputs {
    int32_t a, b, n;
    float x;
    int32_t v[GEN_LEN];
    float w[GEN_LEN];
} gen_inputs;

/* Results in declaration order, and how the run ends. */
typedef struct gen_results {
    int32_t r0;
    float r1;
    int32_t r2[GEN_LEN];
    float r3[GEN_LEN];
    int64_t r4;
    float r5[GEN_ROWS * GEN_LEN];
} gen_results;

typedef struct gen_outcome {
    cfx_status status;
    int line;            /* line of the statement that stopped the run (0 for ok) */
    int64_t iterations;  /* TICKs that passed */
    gen_results res;     /* valid only for ok */
    char *prints;        /* the printed lines, each ending in '\n' (free with gen_outcome_free) */
    size_t prints_len;
} gen_outcome;

static inline void gen_outcome_free(gen_outcome *o)
{
    free(o->prints);
    o->prints = NULL;
    o->prints_len = 0;
}

/* ---- random numbers: splitmix64, so every machine draws the same programs ---------------- */

static uint64_t gen_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int gen_rand(gen_prog *g, int n) { return (int)(gen_next(g->ext_on ? &g->rng2 : &g->rng) % (uint64_t)n); }

/* ---- building ------------------------------------------------------------------------------ */

static int gen_node_new(gen_prog *g, int kind)
{
    if (g->nnodes >= GEN_MAX_NODES) {
        g->overflow = 1;
        return 0; /* node 0 is the literal 0 made first, a harmless stand-in */
    }
    gen_node *n = &g->nodes[g->nnodes];
    memset(n, 0, sizeof *n);
    n->kind = (uint8_t)kind;
    n->ext = (uint8_t)g->ext_on;
    return g->nnodes++;
}

static int gen_var_new(gen_prog *g, const char *name, int type)
{
    if (g->nvars >= GEN_MAX_VARS) {
        g->overflow = 1;
        return 0;
    }
    gen_var *v = &g->vars[g->nvars];
    snprintf(v->name, sizeof v->name, "%s", name);
    v->type = (uint8_t)type;
    return g->nvars++;
}

/* A visible variable of `type`, at random; -1 if none. */
static int gen_pick_var(gen_prog *g, int type)
{
    int found[GEN_MAX_VARS], n = 0;
    for (int i = 0; i < g->nscope; i++)
        if (g->vars[g->scope[i]].type == type) found[n++] = g->scope[i];
    return n ? found[gen_rand(g, n)] : -1;
}

static int gen_int_lit(gen_prog *g, int64_t v)
{
    int k = gen_node_new(g, GE_INT);
    g->nodes[k].type = GT_I;
    g->nodes[k].ival = v;
    return k;
}

static int gen_expr_of(gen_prog *g, int type, int depth);
static int gen_cond(gen_prog *g, int type, int depth);

static int gen_bin(gen_prog *g, int kind, int type, int l, int r)
{
    int k = gen_node_new(g, kind);
    g->nodes[k].type = (uint8_t)type;
    g->nodes[k].e[0] = l;
    g->nodes[k].e[1] = r;
    return k;
}

/* 1 if the checker cannot know e's value at compile time: e reads an input that the program
 * never assigns (b, n, x, and the tensors), a loop variable, or a tensor element. A known
 * index out of range, a known divisor of 0 or a known step of 0 is a compile error, so
 * those operands are made opaque before they are used. */
static int gen_opaque(const gen_prog *g, int e)
{
    const gen_node *n = &g->nodes[e];
    switch (n->kind) {
    case GE_INT: case GE_REAL: case GE_LEN:
        return 0;
    case GE_VAR: {
        const char *name = g->vars[n->var].name;
        return strcmp(name, "b") == 0 || strcmp(name, "n") == 0 || strcmp(name, "x") == 0 ||
               name[0] == 'i' || name[0] == 'e' || name[0] == 'c' || name[0] == 'q';
    }
    case GE_SUM: case GE_ARGMAX: case GE_INDEX:
    case GE_LLEN: case GE_LITEM: case GE_TSUM: case GE_BOX: case GE_STACK:
        return 1;
    case GE_COND: /* a known condition folds to one value, which must be opaque itself */
        return gen_opaque(g, n->e[0]) || (gen_opaque(g, n->e[1]) && gen_opaque(g, n->e[2]));
    default:
        for (int i = 0; i < 3; i++)
            if (n->e[i] > 0 && gen_opaque(g, n->e[i])) return 1;
        return 0;
    }
}

static int gen_var_ref(gen_prog *g, const char *name, int type)
{
    int k = gen_node_new(g, GE_VAR);
    g->nodes[k].type = (uint8_t)type;
    for (int i = 0; i < g->nvars; i++)
        if (strcmp(g->vars[i].name, name) == 0) g->nodes[k].var = i;
    return k;
}

/* e itself if opaque, else (e + n): the same type, a value the checker cannot fold. */
static int gen_make_opaque(gen_prog *g, int e)
{
    if (gen_opaque(g, e)) return e;
    return gen_bin(g, GE_ADD, GT_I, e, gen_var_ref(g, "n", GT_I));
}

/* range(e0, e1, e2) near the i32 limits, with a few iterations at most: the start within 24
 * of a limit, the bound at or near it, and a step that is large or leaves the counter past
 * the limit after the last iteration; sometimes computed (opaque: + n, n in [0, 6]). Python
 * runs range(2147483640, 2147483647, 5) twice and range(0, 2147483647, 1073741824) twice. */
static void gen_range_edge(gen_prog *g, gen_node *n)
{
    static const int64_t steps[] = {5, 7, 1073741824, 2147483647, 3, 1};
    int up = gen_rand(g, 2), s = (int)gen_rand(g, 6);
    int64_t step = steps[s], lim = up ? INT32_MAX : INT32_MIN;
    int64_t start = s >= 2 && s <= 3 ? (up ? gen_rand(g, 3) : -(int64_t)gen_rand(g, 3))
                                      : (up ? lim - 24 + gen_rand(g, 8) : lim + 24 - gen_rand(g, 8));
    int64_t stop = up ? lim - gen_rand(g, 3) : lim + gen_rand(g, 3);
    int es = gen_int_lit(g, up ? step : -step);
    n->e[0] = gen_int_lit(g, start);
    /* INT32_MIN cannot be written as a literal: -2147483647 - 1 */
    n->e[1] = stop == INT32_MIN ? gen_bin(g, GE_SUB, GT_I, gen_int_lit(g, -INT32_MAX), gen_int_lit(g, 1))
                                : gen_int_lit(g, stop);
    n->e[2] = gen_rand(g, 3) == 0 && step < 2000000000 ? gen_make_opaque(g, es) : es;
}

/* An index into a 4-row tensor: mostly in range (negative ones too), sometimes not. */
static int gen_index(gen_prog *g, int depth)
{
    int c = gen_rand(g, 10);
    if (c < 4) return gen_int_lit(g, gen_rand(g, 8) - 4); /* -4 .. 3: always in range */
    if (c < 5) /* n is in [0, 6]: n + 4 is never in range, n - 5 sometimes */
        return gen_bin(g, gen_rand(g, 2) ? GE_ADD : GE_SUB, GT_I, gen_var_ref(g, "n", GT_I),
                       gen_int_lit(g, gen_rand(g, 2) ? 4 : 5));
    return gen_bin(g, GE_MOD, GT_I, gen_make_opaque(g, gen_expr_of(g, GT_I, depth + 1)),
                   gen_int_lit(g, 5 + gen_rand(g, 2)));
}

/* `a if c else b` of `type`: an index read in a value is then guarded only on its own path */
static int gen_cond(gen_prog *g, int type, int depth)
{
    int c = gen_expr_of(g, GT_B, depth + 1);
    int a = gen_expr_of(g, type, depth + 1), b = gen_expr_of(g, type, depth + 1);
    int k = gen_node_new(g, GE_COND);
    g->nodes[k].type = (uint8_t)type;
    g->nodes[k].e[0] = c;
    g->nodes[k].e[1] = a;
    g->nodes[k].e[2] = b;
    return k;
}

static int gen_ext_expr(gen_prog *g, int type, int depth);

static int gen_expr_of(gen_prog *g, int type, int depth)
{
    int leaf, k;
    /* the second stream's expressions, inside its own forms only (depth < 2 keeps the
     * recursion through sum(...) and subscripts finite) */
    if (g->ext_on && (type == GT_I || type == GT_F) && depth < 2 && gen_rand(g, 5) == 0)
        return gen_ext_expr(g, type, depth);
    leaf = depth >= 3 || gen_rand(g, 3) == 0;
    if (type == GT_I) {
        int c = leaf ? gen_rand(g, 2) : gen_rand(g, 16);
        if (c == 0) return gen_int_lit(g, gen_rand(g, 9) - 2);
        if (c == 1) {
            int v = gen_pick_var(g, GT_I);
            if (v < 0) return gen_int_lit(g, 1);
            k = gen_node_new(g, GE_VAR);
            g->nodes[k].type = GT_I;
            g->nodes[k].var = v;
            return k;
        }
        switch (c) {
        case 2: case 3: return gen_bin(g, GE_ADD, GT_I, gen_expr_of(g, GT_I, depth + 1), gen_expr_of(g, GT_I, depth + 1));
        case 4: return gen_bin(g, GE_SUB, GT_I, gen_expr_of(g, GT_I, depth + 1), gen_expr_of(g, GT_I, depth + 1));
        case 5: return gen_bin(g, GE_MUL, GT_I, gen_expr_of(g, GT_I, depth + 1), gen_expr_of(g, GT_I, depth + 1));
        case 6: case 7: {
            /* the divisor may be 0 at run time, never at compile time */
            int l = gen_expr_of(g, GT_I, depth + 1);
            int r = gen_make_opaque(g, gen_expr_of(g, GT_I, depth + 1));
            return gen_bin(g, c == 6 ? GE_DIV : GE_MOD, GT_I, l, r);
        }
        case 8:
            if (gen_rand(g, 3) == 0)
                return gen_cond(g, GT_I, depth);
            return gen_bin(g, gen_rand(g, 2) ? GE_MIN : GE_MAX, GT_I, gen_expr_of(g, GT_I, depth + 1), gen_expr_of(g, GT_I, depth + 1));
        case 9:
            k = gen_node_new(g, gen_rand(g, 2) ? GE_NEG : GE_ABS);
            g->nodes[k].type = GT_I;
            g->nodes[k].e[0] = gen_expr_of(g, GT_I, depth + 1);
            return k;
        case 10: case 11:
            k = gen_node_new(g, GE_INDEX);
            g->nodes[k].type = GT_I;
            g->nodes[k].tv = gen_pick_var(g, GT_VI);
            g->nodes[k].e[0] = gen_index(g, depth);
            return k;
        case 12:
            k = gen_node_new(g, GE_SUM);
            g->nodes[k].type = GT_I;
            g->nodes[k].tv = gen_pick_var(g, GT_VI);
            return k;
        case 13:
            k = gen_node_new(g, GE_ARGMAX);
            g->nodes[k].type = GT_I;
            g->nodes[k].tv = gen_pick_var(g, gen_rand(g, 2) ? GT_VI : GT_VF);
            return k;
        case 14:
            k = gen_node_new(g, GE_CAST_I);
            g->nodes[k].type = GT_I;
            g->nodes[k].e[0] = gen_expr_of(g, GT_F, depth + 1);
            return k;
        default:
            k = gen_node_new(g, GE_LEN);
            g->nodes[k].type = GT_I;
            g->nodes[k].tv = gen_pick_var(g, GT_VF);
            return k;
        }
    }
    if (type == GT_F) {
        int c = leaf ? gen_rand(g, 2) : gen_rand(g, 10);
        if (c == 0) {
            /* quarters: exact in f32, so sums and products stay exact for a while */
            k = gen_node_new(g, GE_REAL);
            g->nodes[k].type = GT_F;
            g->nodes[k].fval = (float)(gen_rand(g, 17) - 8) * 0.25f;
            return k;
        }
        if (c == 1) {
            k = gen_node_new(g, GE_VAR);
            g->nodes[k].type = GT_F;
            g->nodes[k].var = gen_pick_var(g, GT_F);
            return k;
        }
        switch (c) {
        case 2: return gen_bin(g, GE_ADD, GT_F, gen_expr_of(g, GT_F, depth + 1), gen_expr_of(g, GT_F, depth + 1));
        case 3: return gen_bin(g, GE_SUB, GT_F, gen_expr_of(g, GT_F, depth + 1), gen_expr_of(g, GT_F, depth + 1));
        case 4: return gen_bin(g, GE_MUL, GT_F, gen_expr_of(g, GT_F, depth + 1), gen_expr_of(g, GT_F, depth + 1));
        case 5:
            if (gen_rand(g, 3) == 0)
                return gen_cond(g, GT_F, depth);
            return gen_bin(g, gen_rand(g, 2) ? GE_MIN : GE_MAX, GT_F, gen_expr_of(g, GT_F, depth + 1), gen_expr_of(g, GT_F, depth + 1));
        case 6:
            k = gen_node_new(g, GE_INDEX);
            g->nodes[k].type = GT_F;
            g->nodes[k].tv = gen_pick_var(g, GT_VF);
            g->nodes[k].e[0] = gen_index(g, depth);
            return k;
        case 7:
            k = gen_node_new(g, GE_SUM);
            g->nodes[k].type = GT_F;
            g->nodes[k].tv = gen_pick_var(g, GT_VF);
            return k;
        case 8:
            k = gen_node_new(g, GE_CAST_F);
            g->nodes[k].type = GT_F;
            g->nodes[k].e[0] = gen_expr_of(g, GT_I, depth + 1);
            return k;
        default:
            k = gen_node_new(g, GE_NEG);
            g->nodes[k].type = GT_F;
            g->nodes[k].e[0] = gen_expr_of(g, GT_F, depth + 1);
            return k;
        }
    }
    /* GT_B: comparisons joined by and/or/not */
    {
        int c = leaf ? 0 : gen_rand(g, 6);
        if (c <= 2) {
            static const int cmps[] = {GE_LT, GE_LE, GE_GT, GE_GE, GE_EQ, GE_NE};
            int ot = gen_rand(g, 3) ? GT_I : GT_F;
            return gen_bin(g, cmps[gen_rand(g, 6)], GT_B, gen_expr_of(g, ot, depth + 1), gen_expr_of(g, ot, depth + 1));
        }
        if (c == 3) {
            k = gen_node_new(g, GE_NOT);
            g->nodes[k].type = GT_B;
            g->nodes[k].e[0] = gen_expr_of(g, GT_B, depth + 1);
            return k;
        }
        return gen_bin(g, c == 4 ? GE_AND : GE_OR, GT_B, gen_expr_of(g, GT_B, depth + 1), gen_expr_of(g, GT_B, depth + 1));
    }
}

static int gen_block(gen_prog *g, int depth, int in_loop);

/* One statement; compound ones recurse up to GEN_MAX_DEPTH. */
static int gen_stmt(gen_prog *g, int depth, int in_loop)
{
    int compound = depth < GEN_MAX_DEPTH && gen_rand(g, 3) == 0;
    int k, c;
    if (!compound) {
        c = gen_rand(g, 21);
        if (c == 20) {
            /* print an i32 scalar or an i32 tensor: their text is exact */
            k = gen_node_new(g, GS_PRINT);
            g->nodes[k].ival = g->prints++;
            if (gen_rand(g, 3) == 0) {
                g->nodes[k].e[0] = -1;
                g->nodes[k].tv = gen_pick_var(g, GT_VI);
            } else {
                g->nodes[k].e[0] = gen_expr_of(g, GT_I, 1);
            }
            return k;
        }
        if (c < 7) {
            /* scalar assignment to a result or a local (never to a loop variable) */
            static const char *const targets[] = {"r0", "t0", "t1", "a", "r1", "f0"};
            int t = gen_rand(g, 6);
            if (t == 1 && gen_rand(g, 2) == 0) {
                /* t0, t1 = e0, e1: the values read t0 and t1 before either changes */
                k = gen_node_new(g, GS_PAIR);
                g->nodes[k].e[0] = gen_expr_of(g, GT_I, 0);
                g->nodes[k].e[1] = gen_expr_of(g, GT_I, 0);
                return k;
            }
            k = gen_node_new(g, GS_ASSIGN);
            for (int i = 0; i < g->nvars; i++)
                if (strcmp(g->vars[i].name, targets[t]) == 0) g->nodes[k].var = i;
            g->nodes[k].e[0] = gen_expr_of(g, t < 4 ? GT_I : GT_F, 0);
            return k;
        }
        if (c < 10) {
            int vi = gen_rand(g, 2);
            k = gen_node_new(g, GS_TENSOR);
            g->nodes[k].var = gen_pick_var(g, vi ? GT_VI : GT_VF); /* r2 or r3 (v, w are never written) */
            for (int i = 0; i < g->nvars; i++)
                if (strcmp(g->vars[i].name, vi ? "r2" : "r3") == 0) g->nodes[k].var = i;
            g->nodes[k].tv = gen_pick_var(g, vi ? GT_VI : GT_VF);
            g->nodes[k].form = (uint8_t)gen_rand(g, 6);
            if (g->nodes[k].form == GF_DIV_T && !vi) g->nodes[k].form = GF_ADD_T;
            g->nodes[k].e[0] = gen_expr_of(g, vi ? GT_I : GT_F, 2);
            return k;
        }
        if (c < 13) {
            int vi = gen_rand(g, 2);
            k = gen_node_new(g, GS_SETROW);
            for (int i = 0; i < g->nvars; i++)
                if (strcmp(g->vars[i].name, vi ? "r2" : "r3") == 0) g->nodes[k].var = i;
            g->nodes[k].e[0] = gen_index(g, 1);
            g->nodes[k].e[1] = gen_expr_of(g, vi ? GT_I : GT_F, 1);
            return k;
        }
        if (c < 14) {
            k = gen_node_new(g, GS_ASSERT);
            g->nodes[k].e[0] = gen_expr_of(g, GT_B, 1);
            g->nodes[k].ival = g->asserts++;
            return k;
        }
        if (c < 17 && in_loop) return gen_node_new(g, gen_rand(g, 2) ? GS_BREAK : GS_CONTINUE);
        if (c < 18 && gen_rand(g, 3) == 0) return gen_node_new(g, GS_RETURN);
        k = gen_node_new(g, GS_ASSIGN);
        for (int i = 0; i < g->nvars; i++)
            if (strcmp(g->vars[i].name, "t0") == 0) g->nodes[k].var = i;
        g->nodes[k].e[0] = gen_expr_of(g, GT_I, 0);
        return k;
    }
    c = gen_rand(g, 5);
    if (c == 0 || c == 1) {
        /* if / elif / else */
        int arms = 1 + gen_rand(g, 3);
        k = gen_node_new(g, GS_IF);
        g->nodes[k].has_else = (uint8_t)gen_rand(g, 2);
        for (int i = 0; i < arms; i++) g->nodes[k].conds[i] = gen_expr_of(g, GT_B, 1);
        for (int i = 0; i < arms + g->nodes[k].has_else; i++) g->nodes[k].kids[i] = gen_block(g, depth + 1, in_loop);
        g->nodes[k].nkids = arms;
        return k;
    }
    if (c == 2) {
        /* while cK < L and COND { cK = cK + 1 ... }: the counter is bumped first, so a
         * continue cannot skip it and the loop ends after at most L iterations */
        char name[8];
        snprintf(name, sizeof name, "c%d", g->loops++);
        k = gen_node_new(g, GS_WHILE);
        g->nodes[k].var = gen_var_new(g, name, GT_I);
        g->nodes[k].ival = 1 + gen_rand(g, 4);
        g->scope[g->nscope++] = g->nodes[k].var;
        g->nodes[k].e[0] = gen_rand(g, 3) ? gen_expr_of(g, GT_B, 1) : -1;
        g->nodes[k].kids[0] = gen_block(g, depth + 1, 1);
        g->nscope--;
        return k;
    }
    if (c == 3) {
        char name[8];
        int each = gen_rand(g, 3) == 0;
        snprintf(name, sizeof name, "%s%d", each ? "e" : "i", g->loops++);
        k = gen_node_new(g, each ? GS_FOREACH : GS_FOR);
        if (each) {
            int vi = gen_rand(g, 2);
            /* iterate over an input, which the program never writes */
            for (int i = 0; i < g->nvars; i++)
                if (strcmp(g->vars[i].name, vi ? "v" : "w") == 0) g->nodes[k].tv = i;
            g->nodes[k].var = gen_var_new(g, name, vi ? GT_I : GT_F);
        } else {
            int step;
            g->nodes[k].var = gen_var_new(g, name, GT_I);
            if (gen_rand(g, 6) == 0) { /* at the i32 limits, where a stepped counter would wrap */
                gen_range_edge(g, &g->nodes[k]);
                goto body;
            }
            g->nodes[k].e[0] = gen_int_lit(g, gen_rand(g, 5) - 2);
            g->nodes[k].e[1] = gen_rand(g, 2) ? gen_int_lit(g, gen_rand(g, 6))
                                              : gen_bin(g, GE_MOD, GT_I, gen_expr_of(g, GT_I, 2), gen_int_lit(g, 6));
            step = gen_rand(g, 6);
            if (step < 3)
                g->nodes[k].e[2] = gen_int_lit(g, 1 + step / 2); /* 1, 1, 2 */
            else if (step < 4)
                g->nodes[k].e[2] = -1; /* no step written */
            else /* computed, may be 0 or negative */
                g->nodes[k].e[2] = gen_bin(g, GE_MOD, GT_I, gen_make_opaque(g, gen_expr_of(g, GT_I, 2)),
                                           gen_int_lit(g, 3));
        }
    body:
        g->scope[g->nscope++] = g->nodes[k].var;
        g->nodes[k].kids[0] = gen_block(g, depth + 1, 1);
        g->nscope--;
        return k;
    }
    /* switch */
    {
        int ncases = 1 + gen_rand(g, 3), used = 0;
        k = gen_node_new(g, GS_SWITCH);
        g->nodes[k].e[0] = gen_rand(g, 2) ? gen_bin(g, GE_MOD, GT_I, gen_expr_of(g, GT_I, 1), gen_int_lit(g, 4))
                                          : gen_expr_of(g, GT_I, 1);
        g->nodes[k].has_else = (uint8_t)gen_rand(g, 2);
        for (int i = 0; i < ncases; i++) {
            int v;
            do v = gen_rand(g, 4); while (used & (1 << v));
            used |= 1 << v;
            g->nodes[k].vals[i] = v;
        }
        g->nodes[k].nkids = ncases;
        for (int i = 0; i < ncases + g->nodes[k].has_else; i++) g->nodes[k].kids[i] = gen_block(g, depth + 1, in_loop);
        return k;
    }
}

static int gen_ext_stmt(gen_prog *g, int depth, int in_loop);
static int gen_after_loop(gen_prog *g, int loop);

/* A block of 1 to GEN_MAX_STMTS (the graph's) or 3 statements; in a program of the second
 * stream, each may have one of its forms put in before it, drawn from that stream alone, and a
 * loop (of either stream) may be followed by a read of its loop variable. */
static int gen_block(gen_prog *g, int depth, int in_loop)
{
    int k = gen_node_new(g, GS_BLOCK);
    int n = 1 + gen_rand(g, depth == 0 ? GEN_MAX_STMTS : 3);
    for (int i = 0; i < n; i++) {
        if (g->ext && gen_next(&g->rng2) % 3 == 0) {
            int x = gen_ext_stmt(g, depth, in_loop);
            g->nodes[k].kids[g->nodes[k].nkids++] = x;
            if (gen_next(&g->rng2) % 3 == 0)
                g->nodes[k].kids[g->nodes[k].nkids++] = gen_after_loop(g, x);
        }
        int s = gen_stmt(g, depth, in_loop);
        g->nodes[k].kids[g->nodes[k].nkids++] = s;
        if (g->ext && gen_next(&g->rng2) % 3 == 0)
            g->nodes[k].kids[g->nodes[k].nkids++] = gen_after_loop(g, s);
    }
    return k;
}

/* ---- the second stream: lists, slices, broadcasting, **, i64 --------------------------------
 * Everything here runs with g->ext_on set, so every draw, its sub-expressions' and its nested
 * blocks' included, comes from rng2 and leaves the first stream where it was. */

static int gen_find_var(const gen_prog *g, const char *name)
{
    for (int i = 0; i < g->nvars; i++)
        if (strcmp(g->vars[i].name, name) == 0) return i;
    return 0;
}

static int gen_pick(gen_prog *g, const int *choices, int n) { return choices[gen_rand(g, n)]; }

/* A tensor expression node of dtype f (GT_I or GT_F) and shape [d0] (rank 1) or [d0, d1]. */
static int gen_tnode(gen_prog *g, int kind, int f, int rank, int d0, int d1)
{
    int k = gen_node_new(g, kind);
    gen_node *n = &g->nodes[k];
    n->type = GT_T;
    n->tdt = (uint8_t)f;
    n->rank = (uint8_t)rank;
    n->dims[0] = (uint8_t)d0;
    n->dims[1] = (uint8_t)(rank == 2 ? d1 : 0);
    return k;
}

/* The dtype (GT_I or GT_F) and shape of tensor variable v (a vector or the matrix r5). */
static int gen_var_shape(const gen_prog *g, int v, int *rank, int *d)
{
    int t = g->vars[v].type;
    *rank = t == GT_M ? 2 : 1;
    d[0] = t == GT_M ? GEN_ROWS : GEN_LEN;
    d[1] = t == GT_M ? GEN_LEN : 0;
    return t == GT_VI ? GT_I : GT_F;
}

static int gen_lit64(gen_prog *g, int64_t v)
{
    int k = gen_int_lit(g, v);
    g->nodes[k].type = GT_L;
    return k;
}

/* cast((n - n), i64): an i64 zero the checker cannot fold, so that literals beside it take i64. */
static int gen_zero64(gen_prog *g)
{
    int k = gen_node_new(g, GE_CAST_L);
    g->nodes[k].type = GT_L;
    g->nodes[k].e[0] = gen_bin(g, GE_SUB, GT_I, gen_var_ref(g, "n", GT_I), gen_var_ref(g, "n", GT_I));
    return k;
}

static int gen_dim_node(gen_prog *g, int form)
{
    int k = gen_node_new(g, GE_DIM);
    g->nodes[k].form = (uint8_t)form;
    return k;
}

/* An index into a dimension of size d: mostly in range (negative ones too), sometimes not, and
 * never a known one out of range (a compile error). */
static int gen_dim_index(gen_prog *g, int d, int depth)
{
    int c = gen_rand(g, 10), k = gen_dim_node(g, GD_INDEX), e;
    if (c < 5)
        e = gen_int_lit(g, gen_rand(g, 2 * d) - d);
    else if (c < 7)
        e = gen_bin(g, gen_rand(g, 2) ? GE_ADD : GE_SUB, GT_I, gen_var_ref(g, gen_rand(g, 2) ? "n" : "b", GT_I),
                    gen_int_lit(g, gen_rand(g, 4)));
    else /* may stop the run itself (a divisor of 0), before the subscript is checked */
        e = gen_bin(g, GE_MOD, GT_I, gen_make_opaque(g, gen_expr_of(g, GT_I, depth + 1)),
                    gen_int_lit(g, d + 1 + gen_rand(g, 2)));
    g->nodes[k].e[0] = e;
    return k;
}

/* A slice start known only at run time: linear in s0 (n % 3, set once), in an input the
 * program never assigns, or in a loop counter, so never known at compile time, and
 * `s:(s + L)` has a known length. */
static int gen_run_start(gen_prog *g)
{
    int c = gen_rand(g, 8), base = -1, k;
    if (c >= 6) {
        int found[GEN_MAX_VARS], nf = 0;
        for (int i = 0; i < g->nscope; i++) {
            const gen_var *v = &g->vars[g->scope[i]];
            if (v->type == GT_I && (v->name[0] == 'i' || v->name[0] == 'c')) found[nf++] = g->scope[i];
        }
        if (nf) {
            base = gen_node_new(g, GE_VAR);
            g->nodes[base].type = GT_I;
            g->nodes[base].var = found[gen_rand(g, nf)];
        }
    }
    if (base < 0) base = gen_var_ref(g, c < 5 ? "s0" : c == 5 ? "n" : "b", GT_I);
    k = gen_rand(g, 5);
    return k >= 3 ? base : gen_bin(g, k ? GE_ADD : GE_SUB, GT_I, base, gen_int_lit(g, 1));
}

/* A slice of len elements of a dimension of size d: known bounds written in each of Python's
 * ways (omitted, negative, past the end), or a start known at run time when run_ok. */
static int gen_dim_slice(gen_prog *g, int d, int len, int run_ok)
{
    if (run_ok && len < d && gen_rand(g, 3) == 0) { /* room for two starts at least */
        int k = gen_dim_node(g, GD_RUN), st = gen_run_start(g);
        g->nodes[k].e[0] = st;
        g->nodes[k].vals[2] = len;
        return k;
    }
    if (len == d && gen_rand(g, 3) == 0) return gen_dim_node(g, GD_ALL);
    int k = gen_dim_node(g, GD_CONST), s = gen_rand(g, d - len + 1), end = s + len, flags = 3;
    int64_t start = s, stop = end;
    switch (gen_rand(g, 5)) {
    case 0: break;
    case 1: if (s == 0) flags = 2; break;            /* x[:3] */
    case 2: if (end == d) flags = 1; break;          /* x[1:] */
    case 3:                                          /* x[-3:-1], x[-2:], x[-2:5] */
        start = s - d;
        if (end < d) stop = end - d;
        else if (gen_rand(g, 2)) flags = 1;
        else stop = d + gen_rand(g, 3);
        break;
    default: if (end == d) stop = d + 1 + gen_rand(g, 5); break; /* x[2:9]: clamped */
    }
    g->nodes[k].ival = start;
    g->nodes[k].vals[0] = (int)stop;
    g->nodes[k].vals[1] = flags;
    return k;
}

static int gen_box_new(gen_prog *g, int var, int f, int rank, int d0, int d1)
{
    int k = rank ? gen_tnode(g, GE_BOX, f, rank, d0, d1) : gen_node_new(g, GE_BOX);
    if (!rank) g->nodes[k].type = (uint8_t)f;
    g->nodes[k].var = var;
    return k;
}

static void gen_box_add(gen_prog *g, int box, int dim) { g->nodes[box].kids[g->nodes[box].nkids++] = dim; }

/* A subscript of a variable that has the shape asked for (rank 0: a scalar), or -1 where none
 * does (an i32 scalar: that is x[i], the first stream's; a shape larger than r5's). */
static int gen_box_of(gen_prog *g, int f, int rank, int d0, int d1, int depth)
{
    int r5 = gen_find_var(g, "r5"), k;
    if (rank == 0) {
        if (f != GT_F) return -1;
        k = gen_box_new(g, r5, GT_F, 0, 0, 0);
        gen_box_add(g, k, gen_dim_index(g, GEN_ROWS, depth));
        gen_box_add(g, k, gen_dim_index(g, GEN_LEN, depth));
        g->nodes[k].form = (uint8_t)(gen_rand(g, 3) == 0); /* r5[i][j] */
        return k;
    }
    if (rank == 1 && d0 <= GEN_LEN) {
        int c = f == GT_F ? gen_rand(g, 4) : 0;
        if (c == 1 || (c == 2 && d0 > GEN_ROWS)) { /* part of a row of r5 */
            k = gen_box_new(g, r5, GT_F, 1, d0, 0);
            gen_box_add(g, k, gen_dim_index(g, GEN_ROWS, depth));
            if (d0 < GEN_LEN || gen_rand(g, 2)) gen_box_add(g, k, gen_dim_slice(g, GEN_LEN, d0, 1));
            return k;
        }
        if (c == 2) { /* part of a column of r5 */
            k = gen_box_new(g, r5, GT_F, 1, d0, 0);
            gen_box_add(g, k, gen_dim_slice(g, GEN_ROWS, d0, 1));
            gen_box_add(g, k, gen_dim_index(g, GEN_LEN, depth));
            return k;
        }
        int v = gen_pick_var(g, f == GT_I ? GT_VI : GT_VF);
        k = gen_box_new(g, v, f, 1, d0, 0);
        gen_box_add(g, k, gen_dim_slice(g, GEN_LEN, d0, 1));
        return k;
    }
    if (rank == 2 && f == GT_F && d0 <= GEN_ROWS && d1 <= GEN_LEN) {
        k = gen_box_new(g, r5, GT_F, 2, d0, d1);
        gen_box_add(g, k, gen_dim_slice(g, GEN_ROWS, d0, 1));
        if (d1 < GEN_LEN || gen_rand(g, 2)) gen_box_add(g, k, gen_dim_slice(g, GEN_LEN, d1, 1));
        return k;
    }
    return -1;
}

/* A variable of exactly this shape, or -1. */
static int gen_tvar_of(gen_prog *g, int f, int rank, int d0, int d1)
{
    int type = rank == 1 && d0 == GEN_LEN ? (f == GT_I ? GT_VI : GT_VF)
               : rank == 2 && f == GT_F && d0 == GEN_ROWS && d1 == GEN_LEN ? GT_M : -1;
    int v = type < 0 ? -1 : gen_pick_var(g, type);
    if (v < 0) return -1;
    int k = gen_tnode(g, GE_TVAR, f, rank, d0, d1);
    g->nodes[k].var = v;
    return k;
}

static int gen_reshape(gen_prog *g, int src, int f, int rank, int d0, int d1)
{
    int k = gen_tnode(g, GE_RESHAPE, f, rank, d0, d1);
    g->nodes[k].e[0] = src;
    g->nodes[k].form = (uint8_t)(gen_rand(g, 4) == 0); /* the first dimension written -1 */
    return k;
}

static int gen_tbin(gen_prog *g, int op, int f, int rank, int d0, int d1, int a, int b)
{
    int k = gen_tnode(g, GE_TBIN, f, rank, d0, d1);
    g->nodes[k].form = (uint8_t)op;
    g->nodes[k].e[0] = a;
    g->nodes[k].e[1] = b;
    return k;
}

/* A tensor expression of this shape that always exists: a subscript, a reshape of one, or an
 * outer product of two. */
static int gen_tfallback(gen_prog *g, int f, int rank, int d0, int d1, int depth)
{
    int b = gen_box_of(g, f, rank, d0, d1, depth), count = rank == 1 ? d0 : d0 * d1;
    if (b >= 0) return b;
    if (count <= GEN_LEN) return gen_reshape(g, gen_tfallback(g, f, 1, count, 0, depth), f, rank, d0, d1);
    if (f == GT_F && count == GEN_ROWS * GEN_LEN)
        return gen_reshape(g, gen_tvar_of(g, GT_F, 2, GEN_ROWS, GEN_LEN), f, rank, d0, d1);
    return gen_tbin(g, GE_MUL, f, 2, d0, d1, gen_reshape(g, gen_tfallback(g, f, 1, d0, 0, depth), f, 2, d0, 1),
                    gen_reshape(g, gen_tfallback(g, f, 1, d1, 0, depth), f, 2, 1, d1));
}

static int gen_list_index(gen_prog *g, int depth);

/* A tensor expression of dtype f and shape [d0] or [d0, d1] (no dimension of one element but
 * in [d, 1] and [1, d], so numpy's rule and cfx's one-element rule never part). */
static int gen_texpr(gen_prog *g, int f, int rank, int d0, int d1, int depth)
{
    int leaf = depth >= 2 || gen_rand(g, 3) == 0;
    int c = gen_rand(g, leaf ? 3 : 10), k, a, b;
    int sc = f == GT_I ? GT_I : GT_F, count = rank == 1 ? d0 : d0 * d1;
    switch (c) {
    case 1: /* r5 reduced along an axis: [4] from its columns, [3] from its rows */
        if (f != GT_F || rank != 1 || (d0 != GEN_LEN && d0 != GEN_ROWS))
            break;
        k = gen_tnode(g, GE_AXRED, f, rank, d0, d1);
        g->nodes[k].form = (uint8_t)gen_rand(g, 4);
        g->nodes[k].ival = d0 == GEN_LEN ? 0 : gen_rand(g, 2) ? 1 : -1;
        return k;
    case 0:
        k = gen_tvar_of(g, f, rank, d0, d1);
        if (k >= 0) return k;
        break;
    case 2: {
        const char *list = f == GT_F && rank == 1 && d0 == GEN_LEN ? "L1"
                           : f == GT_F && rank == 2 && d0 == GEN_ROWS && d1 == GEN_LEN ? "L1"
                           : f == GT_I && rank == 1 && d0 == 4 ? "L0"
                           : f == GT_I && rank == 1 && d0 == 3 ? "k0" : NULL;
        if (!list) break;
        if (rank == 1 && f == GT_F) { /* an item of L1 */
            k = gen_tnode(g, GE_LITEM, f, rank, d0, d1);
            g->nodes[k].var = gen_find_var(g, list);
            g->nodes[k].e[0] = gen_list_index(g, depth);
            return k;
        }
        k = gen_tnode(g, GE_STACK, f, rank, d0, d1);
        g->nodes[k].var = gen_find_var(g, list);
        return k;
    }
    case 3: case 4: /* the same shape, or a scalar on one side */
        a = gen_texpr(g, f, rank, d0, d1, depth + 1);
        b = gen_rand(g, 3) == 0 ? gen_expr_of(g, sc, 2) : gen_texpr(g, f, rank, d0, d1, depth + 1);
        if (gen_rand(g, 4) == 0) { int t = a; a = b; b = t; }
        return gen_tbin(g, GE_ADD + gen_rand(g, 3), f, rank, d0, d1, a, b);
    case 5: /* broadcasting into a matrix: [m, n] op [n], [m, 1] op [1, n], [m, n] op [m, 1] */
        if (rank != 2 || d0 < 2 || d1 < 2) break;
        switch (gen_rand(g, 3)) {
        case 0: a = gen_texpr(g, f, 2, d0, d1, depth + 1); b = gen_texpr(g, f, 1, d1, 0, depth + 1); break;
        case 1: a = gen_texpr(g, f, 2, d0, 1, depth + 1); b = gen_texpr(g, f, 2, 1, d1, depth + 1); break;
        default: a = gen_texpr(g, f, 2, d0, d1, depth + 1); b = gen_texpr(g, f, 2, d0, 1, depth + 1); break;
        }
        if (gen_rand(g, 2)) { int t = a; a = b; b = t; }
        return gen_tbin(g, GE_ADD + gen_rand(g, 3), f, rank, d0, d1, a, b);
    case 6: /* reshape from another shape of as many elements */
        if (count <= GEN_LEN && count >= 2)
            return gen_reshape(g, rank == 2 ? gen_texpr(g, f, 1, count, 0, depth + 1)
                                            : gen_texpr(g, f, 2, 1, count, depth + 1), f, rank, d0, d1);
        if (f == GT_F && count == GEN_ROWS * GEN_LEN && !(rank == 2 && d0 == GEN_LEN))
            return gen_reshape(g, gen_texpr(g, f, 2, GEN_LEN, GEN_ROWS, depth + 1), f, rank, d0, d1);
        break;
    case 7: { /* ** a small literal: exact for the quarters the reals are made of */
        static const int ints[] = {2, 3, 0, -1, 5}, reals[] = {2, 3, 0};
        k = gen_tnode(g, GE_TPOW, f, rank, d0, d1);
        g->nodes[k].ival = f == GT_I ? gen_pick(g, ints, 5) : gen_pick(g, reals, 3);
        a = gen_texpr(g, f, rank, d0, d1, depth + 1);
        g->nodes[k].e[0] = a;
        return k;
    }
    case 8: /* where(a > b, a, b): b of the same shape, a row of a matrix, or a scalar */
        a = gen_texpr(g, f, rank, d0, d1, depth + 1);
        b = rank == 2 && d1 >= 2 && gen_rand(g, 2) ? gen_texpr(g, f, 1, d1, 0, depth + 1)
            : gen_rand(g, 3) == 0 ? gen_expr_of(g, sc, 2) : gen_texpr(g, f, rank, d0, d1, depth + 1);
        k = gen_tnode(g, GE_TWHERE, f, rank, d0, d1);
        g->nodes[k].e[0] = a;
        g->nodes[k].e[1] = b;
        return k;
    case 9:
        k = gen_tnode(g, GE_TNEG, f, rank, d0, d1);
        a = gen_texpr(g, f, rank, d0, d1, depth + 1);
        g->nodes[k].e[0] = a;
        return k;
    default:
        break;
    }
    return gen_tfallback(g, f, rank, d0, d1, depth);
}

/* A random shape for sum(...): vectors, parts of r5, and shapes only broadcasting makes. */
static void gen_tshape(gen_prog *g, int f, int *rank, int *d0, int *d1)
{
    static const int fs[][3] = {{1, 4, 0}, {1, 3, 0}, {1, 2, 0}, {2, 3, 4}, {2, 2, 3}, {2, 3, 2},
                                {2, 2, 4}, {2, 3, 1}, {2, 1, 4}, {2, 4, 3}, {2, 2, 2}, {2, 4, 4}};
    static const int is[][3] = {{1, 4, 0}, {1, 3, 0}, {1, 2, 0}, {2, 4, 1}, {2, 1, 4}, {2, 2, 2}, {2, 4, 4}};
    const int *s = f == GT_F ? fs[gen_rand(g, 12)] : is[gen_rand(g, 7)];
    *rank = s[0];
    *d0 = s[1];
    *d1 = s[2];
}

/* An index of a list: any literal compiles (the length is known only at run time). */
static int gen_list_index(gen_prog *g, int depth)
{
    int c = gen_rand(g, 6);
    if (c < 3) return gen_int_lit(g, gen_rand(g, 9) - 5);
    if (c < 4) return gen_bin(g, GE_SUB, GT_I, gen_var_ref(g, "n", GT_I), gen_int_lit(g, 3));
    return gen_bin(g, GE_MOD, GT_I, gen_make_opaque(g, gen_expr_of(g, GT_I, depth + 1)), gen_int_lit(g, 5));
}

static int gen_mixed(gen_prog *g, int type, int depth);

/* An i64 expression; never a bare literal, so a literal always sits beside an i64 and takes it. */
static int gen_expr64(gen_prog *g, int depth)
{
    static const int64_t lits[] = {1, 2, -3, 4000000000, INT64_MAX, -INT64_MAX, 7, 1000};
    int leaf = depth >= 3 || gen_rand(g, 3) == 0;
    int c = gen_rand(g, leaf ? 2 : 9), k;
    switch (c) {
    case 8:
        return gen_mixed(g, GT_L, depth);
    case 0: {
        int v = gen_pick_var(g, GT_L);
        k = gen_node_new(g, GE_VAR);
        g->nodes[k].type = GT_L;
        g->nodes[k].var = v;
        return k;
    }
    case 1:
        k = gen_node_new(g, GE_CAST_L);
        g->nodes[k].type = GT_L;
        g->nodes[k].e[0] = gen_expr_of(g, GT_I, depth + 1);
        return k;
    case 2: case 3: case 4: {
        int a = gen_expr64(g, depth + 1);
        int b = gen_rand(g, 2) ? gen_expr64(g, depth + 1) : gen_lit64(g, lits[gen_rand(g, 8)]);
        return gen_bin(g, GE_ADD + gen_rand(g, 3), GT_L, a, b);
    }
    case 5:
        return gen_bin(g, GE_POW, GT_L, gen_expr64(g, depth + 1), gen_lit64(g, gen_rand(g, 4)));
    case 6: { /* a literal divisor: never 0, so no check */
        static const int64_t divs[] = {7, 1000, 4294967296, -3};
        return gen_bin(g, GE_MOD, GT_L, gen_expr64(g, depth + 1), gen_lit64(g, divs[gen_rand(g, 4)]));
    }
    default:
        k = gen_node_new(g, GE_NEG);
        g->nodes[k].type = GT_L;
        g->nodes[k].e[0] = gen_expr64(g, depth + 1);
        return k;
    }
}

/* h(...): a call of GEN_CALLEE with its defaulted parameters left out, or given by position or
 * by name. */
static int gen_callh(gen_prog *g, int depth)
{
    int k = gen_node_new(g, GE_CALLH), form = gen_rand(g, 5);
    g->nodes[k].type = GT_F;
    g->nodes[k].form = (uint8_t)(form == 4 ? 4 : form);
    g->nodes[k].e[0] = gen_expr_of(g, GT_I, depth + 1);
    if (form & 5)
        g->nodes[k].e[1] = gen_expr_of(g, GT_I, depth + 1);
    if (form & 6)
        g->nodes[k].e[2] = gen_expr_of(g, GT_F, depth + 1);
    return k;
}

/* A promoting expression of `type` (GT_F, GT_L or GT_I): two scalars of different types that
 * promote to it (i32 or i64 with f32, i32 with i64, a bool with i32); for GT_I, the bool is itself
 * sometimes a comparison of an i32 with an f32. */
static int gen_mixed(gen_prog *g, int type, int depth)
{
    static const int ops[] = {GE_ADD, GE_SUB, GE_MUL};
    int a, b;
    if (type == GT_F) {
        a = gen_rand(g, 3) ? gen_expr_of(g, GT_I, depth + 1) : gen_expr64(g, depth + 1);
        b = gen_expr_of(g, GT_F, depth + 1);
    } else if (type == GT_L) {
        a = gen_expr_of(g, GT_I, depth + 1);
        b = gen_expr64(g, depth + 1);
    } else {
        a = gen_expr_of(g, GT_I, depth + 1);
        if (gen_rand(g, 2)) {
            b = gen_node_new(g, GE_MIXED);
            g->nodes[b].type = GT_B;
            g->nodes[b].form = (uint8_t)(gen_rand(g, 2) ? GE_LT : GE_GE);
            g->nodes[b].e[0] = gen_expr_of(g, GT_I, depth + 1);
            g->nodes[b].e[1] = gen_expr_of(g, GT_F, depth + 1);
        } else {
            b = gen_expr_of(g, GT_B, depth + 1);
        }
    }
    int k = gen_node_new(g, GE_MIXED), left = gen_rand(g, 2); /* either side */
    g->nodes[k].type = (uint8_t)type;
    g->nodes[k].form = (uint8_t)ops[gen_rand(g, 3)];
    g->nodes[k].e[0] = left ? a : b;
    g->nodes[k].e[1] = left ? b : a;
    return k;
}

/* The second stream's expressions of i32 or f32, drawn in gen_expr_of. */
static int gen_ext_expr(gen_prog *g, int type, int depth)
{
    int c = gen_rand(g, 7), k, rank, d0, d1;
    if (type == GT_I) {
        switch (c) {
        case 0: { /* ** an exponent that is small, negative, large, or computed */
            static const int64_t exps[] = {0, 1, 2, 3, 5, -1, -2, 31, 32};
            int base = gen_expr_of(g, GT_I, depth + 1);
            int e = gen_rand(g, 4) ? gen_int_lit(g, exps[gen_rand(g, 9)])
                                   : gen_bin(g, GE_MOD, GT_I, gen_expr_of(g, GT_I, depth + 1), gen_int_lit(g, 8));
            return gen_bin(g, GE_POW, GT_I, base, e);
        }
        case 1: {
            static const char *const lists[] = {"L0", "k0", "L1"};
            k = gen_node_new(g, GE_LLEN);
            g->nodes[k].type = GT_I;
            g->nodes[k].var = gen_find_var(g, lists[gen_rand(g, 3)]);
            return k;
        }
        case 2:
            k = gen_node_new(g, GE_LITEM);
            g->nodes[k].type = GT_I;
            g->nodes[k].var = gen_find_var(g, gen_rand(g, 2) ? "L0" : "k0");
            g->nodes[k].e[0] = gen_list_index(g, depth);
            return k;
        case 3: case 4: /* the low 32 bits of an i64 */
            k = gen_node_new(g, GE_CAST_IL);
            g->nodes[k].type = GT_I;
            g->nodes[k].e[0] = gen_expr64(g, depth + 1);
            return k;
        case 6:
            if (gen_rand(g, 4) == 0) { /* 1 if o0 is None else 0 */
                k = gen_node_new(g, GE_OPT);
                g->nodes[k].type = GT_I;
                g->nodes[k].form = 2;
                return k;
            }
            return gen_mixed(g, GT_I, depth);
        case 5: { /* C's division and remainder by name; the divisor may be 0 at run time */
            int l = gen_expr_of(g, GT_I, depth + 1);
            int r = gen_make_opaque(g, gen_expr_of(g, GT_I, depth + 1));
            return gen_bin(g, gen_rand(g, 2) ? GE_CDIV : GE_CMOD, GT_I, l, r);
        }
        default:
            break;
        }
    } else {
        if (c == 0) { /* ** a whole exponent: exact for the quarters the reals are made of */
            static const float exps[] = {0.0f, 2.0f, 3.0f};
            int base = gen_expr_of(g, GT_F, depth + 1), e = gen_node_new(g, GE_REAL);
            g->nodes[e].type = GT_F;
            g->nodes[e].fval = exps[gen_rand(g, 3)];
            return gen_bin(g, GE_POW, GT_F, base, e);
        }
        if (c == 1) return gen_box_of(g, GT_F, 0, 0, 0, depth);
        if (c == 2) /* i32 / i32: true division in f32, by 0 too (inf or nan) */
            return gen_bin(g, GE_TDIV, GT_F, gen_expr_of(g, GT_I, depth + 1), gen_expr_of(g, GT_I, depth + 1));
        if (c == 4)
            return gen_mixed(g, GT_F, depth);
        if (c == 5)
            return gen_callh(g, depth);
        if (c == 6) { /* o0, read as a value, or as o0 if o0 is not None else e */
            k = gen_node_new(g, GE_OPT);
            g->nodes[k].type = GT_F;
            g->nodes[k].form = (uint8_t)(gen_rand(g, 3) ? 1 : 0);
            if (g->nodes[k].form == 1)
                g->nodes[k].e[0] = gen_expr_of(g, GT_F, depth + 1);
            return k;
        }
        if (c == 3) /* f32 // f32 and f32 % f32, Python's; a divisor of 0 gives inf or nan */
            return gen_bin(g, gen_rand(g, 2) ? GE_DIV : GE_MOD, GT_F, gen_expr_of(g, GT_F, depth + 1),
                           gen_expr_of(g, GT_F, depth + 1));
    }
    gen_tshape(g, type, &rank, &d0, &d1);
    k = gen_node_new(g, GE_TSUM);
    g->nodes[k].type = (uint8_t)type;
    if (type == GT_I && rank == 2 && d0 == 4 && d1 == 4) /* an outer product: sum(reshape(a, [4, 1]) * b) */
        g->nodes[k].e[0] = gen_tbin(g, GE_MUL, GT_I, 2, 4, 4, gen_texpr(g, GT_I, 2, 4, 1, 1), gen_texpr(g, GT_I, 1, 4, 0, 1));
    else
        g->nodes[k].e[0] = gen_texpr(g, type, rank, d0, d1, 1);
    return k;
}

/* range(e0, e1, e2) over i64 near the limits, as gen_range_edge near those of i32: Python
 * runs range(9223372036854775800, 9223372036854775807, 5) twice. */
static void gen_range_edge64(gen_prog *g, gen_node *n)
{
    static const int64_t steps[] = {5, 7, (int64_t)1 << 62, INT64_MAX, 3, 1};
    int up = gen_rand(g, 2), s = gen_rand(g, 6);
    int64_t step = steps[s], lim = up ? INT64_MAX : INT64_MIN;
    int64_t start = s >= 2 && s <= 3 ? (up ? gen_rand(g, 3) : -(int64_t)gen_rand(g, 3))
                                      : (up ? lim - 24 + gen_rand(g, 8) : lim + 24 - gen_rand(g, 8));
    int64_t stop = up ? lim - gen_rand(g, 3) : lim + gen_rand(g, 3);
    n->e[0] = gen_bin(g, GE_ADD, GT_L, gen_zero64(g), gen_lit64(g, start));
    /* INT64_MIN cannot be written as a literal: (0 - 9223372036854775807) - 1 */
    n->e[1] = stop == INT64_MIN ? gen_bin(g, GE_SUB, GT_L, gen_bin(g, GE_SUB, GT_L, gen_zero64(g), gen_lit64(g, INT64_MAX)),
                                          gen_lit64(g, 1))
                                : gen_lit64(g, stop);
    n->e[2] = gen_lit64(g, up ? step : -step);
}

static int gen_op_form(gen_prog *g) { return gen_rand(g, 2) ? 0 : GE_ADD + gen_rand(g, 3); }

/* `dst = (dst * 3) + src` (scalars of one type; r3 += src for a vector): a statement that
 * makes a loop's results depend on every value its variable takes, in order. */
static int gen_horner(gen_prog *g, int src)
{
    int type = g->vars[src].type, k;
    if (type == GT_VF) {
        k = gen_node_new(g, GS_TASSIGN);
        g->nodes[k].var = gen_find_var(g, "r3");
        g->nodes[k].form = GE_ADD;
        g->nodes[k].e[0] = gen_tnode(g, GE_TVAR, GT_F, 1, GEN_LEN, 0);
        g->nodes[g->nodes[k].e[0]].var = src;
        return k;
    }
    const char *dst = type == GT_L ? "r4" : type == GT_F ? "r1" : "r0";
    int three = type == GT_F ? gen_node_new(g, GE_REAL) : gen_int_lit(g, 3);
    g->nodes[three].type = (uint8_t)type;
    g->nodes[three].fval = 3.0f;
    int v = gen_node_new(g, GE_VAR);
    g->nodes[v].type = (uint8_t)type;
    g->nodes[v].var = src;
    k = gen_node_new(g, type == GT_L ? GS_ASSIGN64 : GS_ASSIGN);
    g->nodes[k].var = gen_find_var(g, dst);
    g->nodes[k].e[0] = gen_bin(g, GE_ADD, type, gen_bin(g, GE_MUL, type, gen_var_ref(g, dst, type), three), v);
    return k;
}

/* After statement s of a block: when s is a loop with a variable, a statement of the second
 * stream that reads it (gen_horner), as Python may after the loop: its last value, or, when no
 * iteration ran, a stop with value; else an empty block. */
static int gen_after_loop(gen_prog *g, int s)
{
    int kind = g->nodes[s].kind, first = g->nnodes;
    if (kind != GS_FOR && kind != GS_FOREACH && kind != GS_FOR64 && kind != GS_FORLIST && kind != GS_FORLIT)
        return gen_node_new(g, GS_BLOCK);
    int saved = g->ext_on;
    g->ext_on = 1;
    int k = gen_horner(g, g->nodes[s].var);
    g->ext_on = saved;
    for (int i = first; i < g->nnodes; i++) /* the read of the loop variable */
        if ((g->nodes[i].kind == GE_VAR || g->nodes[i].kind == GE_TVAR) && g->nodes[i].var == g->nodes[s].var)
            g->nodes[i].form = 1;
    return k;
}

/* A compound form: a range over i64, a for over a list (maybe enumerated), a for over a list
 * written in place; its body starts with gen_horner of each loop variable. */
static int gen_ext_loop(gen_prog *g, int depth)
{
    int c = gen_rand(g, 3), k, nv = 0, vars[2];
    char name[8];
    if (c == 0) {
        snprintf(name, sizeof name, "q%d", g->loops++);
        k = gen_node_new(g, GS_FOR64);
        vars[nv++] = g->nodes[k].var = gen_var_new(g, name, GT_L);
        if (gen_rand(g, 2)) {
            gen_range_edge64(g, &g->nodes[k]);
        } else { /* a few iterations; a computed step may be 0 or negative */
            int st = gen_node_new(g, GE_CAST_L), c2 = gen_rand(g, 4);
            g->nodes[st].type = GT_L;
            g->nodes[st].e[0] = gen_bin(g, GE_MOD, GT_I, gen_expr_of(g, GT_I, 2), gen_int_lit(g, 4));
            g->nodes[k].e[0] = st;
            g->nodes[k].e[1] = gen_lit64(g, gen_rand(g, 6));
            if (c2 == 0) {
                g->nodes[k].e[2] = -1;
            } else if (c2 == 1) {
                int sp = gen_node_new(g, GE_CAST_L);
                g->nodes[sp].type = GT_L;
                g->nodes[sp].e[0] = gen_bin(g, GE_MOD, GT_I, gen_make_opaque(g, gen_expr_of(g, GT_I, 2)),
                                            gen_int_lit(g, 3));
                g->nodes[k].e[2] = sp;
            } else {
                g->nodes[k].e[2] = gen_lit64(g, c2 - 1);
            }
        }
    } else {
        static const char *const lists[] = {"L0", "k0", "L1"};
        int lit = c == 2, enumerate = gen_rand(g, 3) == 0, item = GT_I;
        int loop = g->loops++;
        k = gen_node_new(g, lit ? GS_FORLIT : GS_FORLIST);
        if (lit) {
            int kind = gen_rand(g, 3);
            item = kind == 0 ? GT_I : kind == 1 ? GT_F : GT_VF;
            g->nodes[k].ival = 2 + gen_rand(g, 2);
            for (int i = 0; i < g->nodes[k].ival; i++) {
                int e = item == GT_VF ? gen_texpr(g, GT_F, 1, GEN_LEN, 0, 1) : gen_expr_of(g, item, 1);
                g->nodes[k].vals[i] = e;
            }
        } else {
            g->nodes[k].tv = gen_find_var(g, lists[gen_rand(g, 3)]);
            item = g->vars[g->nodes[k].tv].item;
        }
        if (enumerate) {
            snprintf(name, sizeof name, "i%d", loop);
            g->nodes[k].form = 1;
            vars[nv] = gen_var_new(g, name, GT_I);
            if (lit) g->nodes[k].tv = vars[nv];
            else g->nodes[k].vals[0] = vars[nv];
            nv++;
        }
        snprintf(name, sizeof name, "e%d", loop);
        vars[nv++] = g->nodes[k].var = gen_var_new(g, name, item);
    }
    for (int i = 0; i < nv; i++) g->scope[g->nscope++] = vars[i];
    int blk = gen_block(g, depth + 1, 1);
    gen_node *b = &g->nodes[blk];
    memmove(b->kids + nv, b->kids, sizeof b->kids[0] * (size_t)b->nkids);
    for (int i = 0; i < nv; i++) b->kids[i] = gen_horner(g, vars[i]);
    b->nkids += nv;
    g->nodes[k].kids[0] = blk;
    g->nscope -= nv;
    return k;
}

/* One statement of the second stream: a list's, a tensor assignment or write through a
 * subscript, an i64 assignment, a loop, or one of the first stream's statements with the
 * second stream's expressions. */
static int gen_ext_stmt(gen_prog *g, int depth, int in_loop)
{
    int saved = g->ext_on, k, c, rank, d[2];
    int L0 = gen_find_var(g, "L0"), k0 = gen_find_var(g, "k0"), L1 = gen_find_var(g, "L1");
    g->ext_on = 1;
    if (depth < GEN_MAX_DEPTH && gen_rand(g, 4) == 0) {
        k = gen_ext_loop(g, depth);
        goto done;
    }
    c = gen_rand(g, 12);
    switch (c) {
    case 0: /* append: the value first, then the room */
        k = gen_node_new(g, GS_APPEND);
        if (gen_rand(g, 2)) {
            g->nodes[k].var = L0;
            g->nodes[k].e[0] = gen_expr_of(g, GT_I, 1);
        } else {
            g->nodes[k].var = L1;
            g->nodes[k].e[0] = gen_texpr(g, GT_F, 1, GEN_LEN, 0, 0);
        }
        break;
    case 1: { /* pop, into a variable or dropped */
        static const int lists[] = {0, 1, 2};
        int l = gen_pick(g, lists, 3);
        k = gen_node_new(g, GS_POP);
        g->nodes[k].var = l == 0 ? L0 : l == 1 ? k0 : L1;
        g->nodes[k].tv = gen_rand(g, 4) == 0 ? -1 : gen_find_var(g, l == 2 ? "r3" : gen_rand(g, 2) ? "t0" : "t1");
        break;
    }
    case 2: { /* an item written */
        int l = gen_rand(g, 3);
        k = gen_node_new(g, GS_LSET);
        g->nodes[k].var = l == 0 ? L0 : l == 1 ? k0 : L1;
        g->nodes[k].form = (uint8_t)gen_op_form(g);
        g->nodes[k].e[0] = gen_list_index(g, 1);
        if (l < 2) g->nodes[k].e[1] = gen_expr_of(g, GT_I, 1);
        else if (g->nodes[k].form && gen_rand(g, 3) == 0) g->nodes[k].e[1] = gen_expr_of(g, GT_F, 1);
        else g->nodes[k].e[1] = gen_texpr(g, GT_F, 1, GEN_LEN, 0, 0);
        break;
    }
    case 3: /* the literal list again, with 1 to 3 items */
        k = gen_node_new(g, GS_LASSIGN);
        g->nodes[k].var = k0;
        g->nodes[k].ival = 1 + gen_rand(g, 3);
        for (int i = 0; i < g->nodes[k].ival; i++) {
            int e = gen_expr_of(g, GT_I, 1);
            g->nodes[k].vals[i] = e;
        }
        break;
    case 4: case 5: { /* r2, r3 or r5 = a tensor expression, or op= one that broadcasts to it */
        static const char *const vars[] = {"r2", "r3", "r5"};
        int v = gen_find_var(g, vars[gen_rand(g, 3)]), f = gen_var_shape(g, v, &rank, d);
        k = gen_node_new(g, GS_TASSIGN);
        g->nodes[k].var = v;
        g->nodes[k].form = (uint8_t)gen_op_form(g);
        int e;
        if (!g->nodes[k].form) {
            e = gen_texpr(g, f, rank, d[0], d[1], 0);
        } else {
            int s = gen_rand(g, rank == 2 ? 5 : 2);
            e = s == 0 ? gen_expr_of(g, f, 1)
                : s == 1 ? gen_texpr(g, f, rank, d[0], d[1], 0)
                : s == 2 ? gen_texpr(g, f, 1, d[1], 0, 0)
                : s == 3 ? gen_texpr(g, f, 2, d[0], 1, 0) : gen_texpr(g, f, 2, 1, d[1], 0);
        }
        g->nodes[k].e[0] = e;
        break;
    }
    case 6: case 7: { /* a write through a subscript of r2, r3 or r5 */
        int t = gen_rand(g, 3), box, f, len;
        k = gen_node_new(g, GS_TSET);
        g->nodes[k].form = (uint8_t)gen_op_form(g);
        if (t < 2) { /* a slice of a vector */
            int v = gen_find_var(g, t ? "r3" : "r2");
            f = t ? GT_F : GT_I;
            len = 2 + gen_rand(g, 3);
            box = gen_box_new(g, v, f, 1, len, 0);
            gen_box_add(g, box, gen_dim_slice(g, GEN_LEN, len, 1));
            rank = 1;
            d[0] = len;
            d[1] = 0;
        } else { /* an element, a row, a column or a block of r5 */
            int s = gen_rand(g, 4);
            f = GT_F;
            rank = s == 0 ? 0 : s == 3 ? 2 : 1;
            d[0] = s == 1 ? 2 + gen_rand(g, 3) : s == 2 ? 2 + gen_rand(g, 2) : s == 3 ? 2 + gen_rand(g, 2) : 0;
            d[1] = s == 3 ? 2 + gen_rand(g, 3) : 0;
            box = gen_box_new(g, gen_find_var(g, "r5"), GT_F, rank, d[0], d[1]);
            if (s == 0) {
                gen_box_add(g, box, gen_dim_index(g, GEN_ROWS, 1));
                gen_box_add(g, box, gen_dim_index(g, GEN_LEN, 1));
            } else if (s == 1) {
                gen_box_add(g, box, gen_dim_index(g, GEN_ROWS, 1));
                gen_box_add(g, box, gen_dim_slice(g, GEN_LEN, d[0], 1));
            } else if (s == 2) {
                gen_box_add(g, box, gen_dim_slice(g, GEN_ROWS, d[0], 1));
                gen_box_add(g, box, gen_dim_index(g, GEN_LEN, 1));
            } else {
                gen_box_add(g, box, gen_dim_slice(g, GEN_ROWS, d[0], 1));
                gen_box_add(g, box, gen_dim_slice(g, GEN_LEN, d[1], 1));
            }
        }
        g->nodes[k].e[1] = box;
        int e;
        if (rank == 0 || (g->nodes[k].form && gen_rand(g, 3) == 0)) e = gen_expr_of(g, f, 1);
        else if (rank == 2 && g->nodes[k].form && gen_rand(g, 2)) e = gen_texpr(g, f, 1, d[1], 0, 0);
        else e = gen_texpr(g, f, rank, d[0], d[1], 0);
        g->nodes[k].e[0] = e;
        break;
    }
    case 9:
        if (gen_rand(g, 2))
            goto first_stream;
        k = gen_node_new(g, GS_OPTSET);
        g->nodes[k].e[0] = gen_expr_of(g, GT_F, 1);
        break;
    case 8:
        k = gen_node_new(g, GS_ASSIGN64);
        g->nodes[k].var = gen_find_var(g, "r4");
        g->nodes[k].form = (uint8_t)gen_op_form(g);
        g->nodes[k].e[0] = gen_expr64(g, 0);
        break;
    default: /* the first stream's simple statements, now with these expressions in them */
    first_stream:
        k = gen_stmt(g, GEN_MAX_DEPTH, in_loop);
        break;
    }
done:
    g->ext_on = saved;
    return k;
}

/* Builds program `seed` into *g (a large struct: allocate it). */
static inline void gen_make(gen_prog *g, uint64_t seed)
{
    static const struct { const char *name; int type, item, cap; } fixed[] = {
        {"a", GT_I, 0, 0}, {"b", GT_I, 0, 0}, {"n", GT_I, 0, 0}, {"x", GT_F, 0, 0}, {"v", GT_VI, 0, 0},
        {"w", GT_VF, 0, 0}, {"r0", GT_I, 0, 0}, {"r1", GT_F, 0, 0}, {"r2", GT_VI, 0, 0}, {"r3", GT_VF, 0, 0},
        {"t0", GT_I, 0, 0}, {"t1", GT_I, 0, 0}, {"f0", GT_F, 0, 0},
        /* the second stream's: in every program's prologue (r4, r5) or only in its own (the lists) */
        {"r4", GT_L, 0, 0}, {"r5", GT_M, 0, 0}, {"L0", GT_LIST, GT_I, 4}, {"k0", GT_LIST, GT_I, 3},
        {"L1", GT_LIST, GT_VF, GEN_ROWS}, {"s0", GT_I, 0, 0},
    };
    memset(g, 0, sizeof *g);
    g->seed = seed;
    g->rng = seed * 0x2545f4914f6cdd1dull + 1;
    {
        uint64_t h = seed ^ 0xe7037ed1a0b428dbull;
        g->rng2 = gen_next(&h); /* a hashed start: the streams of nearby seeds do not overlap */
    }
    g->ext = seed % 3 != 0;
    gen_int_lit(g, 0); /* node 0: the stand-in gen_node_new returns when full */
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        int v = gen_var_new(g, fixed[i].name, fixed[i].type);
        g->vars[v].item = (uint8_t)fixed[i].item;
        g->vars[v].cap = fixed[i].cap;
        if (strcmp(fixed[i].name, "s0") != 0) /* only slice starts read s0 */
            g->scope[g->nscope++] = v;
    }
    g->body = gen_block(g, 0, 0);
}

/* ---- printing ------------------------------------------------------------------------------ */

typedef struct gen_buf {
    char *p;
    size_t len, cap;
    int line;
} gen_buf;

static void gen_put(gen_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void gen_put(gen_buf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if (b->p && (size_t)n < room) {
            for (int i = 0; i < n; i++) b->line += b->p[b->len + i] == '\n';
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->len + (size_t)n + 1) cap *= 2;
        char *p = (char *)realloc(b->p, cap);
        if (!p) return;
        b->p = p;
        b->cap = cap;
    }
}

/* Whether node e, an i32 `e0 + a` or `e0 * e1`, is written as a call of the graph defined inside
 * the generated one, plus_a(e0), or of the lambda times(e0, e1): in one such node of three,
 * chosen by the node's index, so the program draws nothing more. plus_a reads a as it is at the
 * call, and times is expanded in place: the same values as the operator's. */
static int gen_inner_call(const gen_prog *g, int e)
{
    const gen_node *n = &g->nodes[e];
    if (n->type != GT_I || (n->kind != GE_ADD && n->kind != GE_MUL) || e % 3 != (n->kind == GE_ADD ? 0 : 1))
        return 0;
    const gen_node *r = &g->nodes[n->e[1]];
    return n->kind == GE_MUL || (r->kind == GE_VAR && strcmp(g->vars[r->var].name, "a") == 0);
}

static void gen_put_expr(gen_prog *g, gen_buf *b, int e)
{
    static const char *const infix[] = {
        [GE_ADD] = "+", [GE_SUB] = "-", [GE_MUL] = "*", [GE_DIV] = "//", [GE_MOD] = "%", [GE_TDIV] = "/",
        [GE_LT] = "<", [GE_LE] = "<=", [GE_GT] = ">", [GE_GE] = ">=", [GE_EQ] = "==", [GE_NE] = "!=",
        [GE_AND] = "and", [GE_OR] = "or",
    };
    const gen_node *n = &g->nodes[e];
    switch (n->kind) {
    case GE_INT:
        if (n->ival < 0) gen_put(b, "(-%lld)", (long long)-n->ival);
        else gen_put(b, "%lld", (long long)n->ival);
        break;
    case GE_REAL:
        if (n->fval < 0) gen_put(b, "(-%.2f)", -(double)n->fval);
        else gen_put(b, "%.2f", (double)n->fval);
        break;
    case GE_VAR: gen_put(b, "%s", g->vars[n->var].name); break;
    case GE_OPT:
        if (n->form == 0) {
            gen_put(b, "o0");
        } else if (n->form == 1) {
            gen_put(b, "(o0 if o0 is not None else ");
            gen_put_expr(g, b, n->e[0]);
            gen_put(b, ")");
        } else {
            gen_put(b, "(1 if o0 is None else 0)");
        }
        break;
    case GE_CALLH:
        gen_put(b, "h(");
        gen_put_expr(g, b, n->e[0]);
        if (n->form & 4) {
            gen_put(b, ", s=");
            gen_put_expr(g, b, n->e[2]);
            gen_put(b, ", q=");
            gen_put_expr(g, b, n->e[1]);
        } else {
            if (n->form & 1) {
                gen_put(b, ", ");
                gen_put_expr(g, b, n->e[1]);
            }
            if (n->form & 2) {
                gen_put(b, ", s=");
                gen_put_expr(g, b, n->e[2]);
            }
        }
        gen_put(b, ")");
        break;
    case GE_MIXED:
        gen_put(b, "(");
        gen_put_expr(g, b, n->e[0]);
        gen_put(b, " %s ", infix[n->form]);
        gen_put_expr(g, b, n->e[1]);
        gen_put(b, ")");
        break;
    case GE_MIN: case GE_MAX: case GE_CDIV: case GE_CMOD:
        gen_put(b, "%s(", n->kind == GE_MIN ? "min" : n->kind == GE_MAX ? "max" : n->kind == GE_CDIV ? "truncdiv" : "fmod");
        gen_put_expr(g, b, n->e[0]);
        gen_put(b, ", ");
        gen_put_expr(g, b, n->e[1]);
        gen_put(b, ")");
        break;
    case GE_NOT: case GE_NEG:
        gen_put(b, "(%s", n->kind == GE_NOT ? "not " : "-");
        gen_put_expr(g, b, n->e[0]);
        gen_put(b, ")");
        break;
    case GE_ABS: gen_put(b, "abs("); gen_put_expr(g, b, n->e[0]); gen_put(b, ")"); break;
    case GE_COND:
        gen_put(b, "(");
        gen_put_expr(g, b, n->e[1]);
        gen_put(b, " if ");
        gen_put_expr(g, b, n->e[0]);
        gen_put(b, " else ");
        gen_put_expr(g, b, n->e[2]);
        gen_put(b, ")");
        break;
    case GE_SUM: gen_put(b, "sum(%s)", g->vars[n->tv].name); break;
    case GE_ARGMAX: gen_put(b, "argmax(%s)", g->vars[n->tv].name); break;
    case GE_LEN: gen_put(b, "len(%s)", g->vars[n->tv].name); break;
    case GE_INDEX: gen_put(b, "%s[", g->vars[n->tv].name); gen_put_expr(g, b, n->e[0]); gen_put(b, "]"); break;
    case GE_CAST_I: case GE_CAST_IL: gen_put(b, "cast("); gen_put_expr(g, b, n->e[0]); gen_put(b, ", i32)"); break;
    case GE_CAST_F: gen_put(b, "cast("); gen_put_expr(g, b, n->e[0]); gen_put(b, ", f32)"); break;
    case GE_CAST_L: gen_put(b, "cast("); gen_put_expr(g, b, n->e[0]); gen_put(b, ", i64)"); break;
    case GE_LLEN: gen_put(b, "len(%s)", g->vars[n->var].name); break;
    case GE_STACK: gen_put(b, "stack(%s)", g->vars[n->var].name); break;
    case GE_TVAR: gen_put(b, "%s", g->vars[n->var].name); break;
    case GE_LITEM: gen_put(b, "%s[", g->vars[n->var].name); gen_put_expr(g, b, n->e[0]); gen_put(b, "]"); break;
    case GE_TSUM: gen_put(b, "sum("); gen_put_expr(g, b, n->e[0]); gen_put(b, ")"); break;
    case GE_TNEG: gen_put(b, "(-"); gen_put_expr(g, b, n->e[0]); gen_put(b, ")"); break;
    case GE_AXRED: {
        static const char *const ops[] = {"sum", "max", "min", "mean"};
        if (n->form == 1 || n->form == 2) /* max and min take their axis by name */
            gen_put(b, "%s(r5, axis=%d)", ops[n->form], (int)n->ival);
        else
            gen_put(b, n->ival == -1 ? "%s(r5, axis=%d)" : "%s(r5, %d)", ops[n->form], (int)n->ival);
        break;
    }
    case GE_POW: case GE_TPOW:
        gen_put(b, "(");
        gen_put_expr(g, b, n->e[0]);
        if (n->kind == GE_POW) {
            gen_put(b, " ** ");
            gen_put_expr(g, b, n->e[1]);
        } else {
            gen_put(b, n->ival < 0 ? " ** (%lld)" : " ** %lld", (long long)n->ival);
        }
        gen_put(b, ")");
        break;
    case GE_TBIN: {
        static const char *const ops[] = {"+", "-", "*"};
        gen_put(b, "(");
        gen_put_expr(g, b, n->e[0]);
        gen_put(b, " %s ", ops[n->form - GE_ADD]);
        gen_put_expr(g, b, n->e[1]);
        gen_put(b, ")");
        break;
    }
    case GE_TWHERE:
        gen_put(b, "where((");
        gen_put_expr(g, b, n->e[0]);
        gen_put(b, " > ");
        gen_put_expr(g, b, n->e[1]);
        gen_put(b, "), ");
        gen_put_expr(g, b, n->e[0]);
        gen_put(b, ", ");
        gen_put_expr(g, b, n->e[1]);
        gen_put(b, ")");
        break;
    case GE_RESHAPE:
        gen_put(b, "reshape(");
        gen_put_expr(g, b, n->e[0]);
        if (n->rank == 1) gen_put(b, n->form ? ", [-1])" : ", [%d])", n->dims[0]);
        else if (n->form) gen_put(b, ", [-1, %d])", n->dims[1]);
        else gen_put(b, ", [%d, %d])", n->dims[0], n->dims[1]);
        break;
    case GE_BOX:
        gen_put(b, "%s[", g->vars[n->var].name);
        for (int i = 0; i < n->nkids; i++) {
            if (i) gen_put(b, n->form ? "][" : ", ");
            gen_put_expr(g, b, n->kids[i]);
        }
        gen_put(b, "]");
        break;
    case GE_DIM:
        if (n->form == GD_INDEX) {
            gen_put_expr(g, b, n->e[0]);
        } else if (n->form == GD_ALL) {
            gen_put(b, ":");
        } else if (n->form == GD_RUN) {
            gen_put_expr(g, b, n->e[0]);
            gen_put(b, ":(");
            gen_put_expr(g, b, n->e[0]);
            gen_put(b, " + %d)", n->vals[2]);
        } else {
            if (n->vals[1] & 1) gen_put(b, n->ival < 0 ? "(%lld)" : "%lld", (long long)n->ival);
            gen_put(b, ":");
            if (n->vals[1] & 2) gen_put(b, n->vals[0] < 0 ? "(%d)" : "%d", n->vals[0]);
        }
        break;
    default:
        if (gen_inner_call(g, e)) {
            /* e0 + a through the graph defined inside, e0 * e1 through the lambda (gen_text) */
            gen_put(b, n->kind == GE_ADD ? "plus_a(" : "times(");
            gen_put_expr(g, b, n->e[0]);
            if (n->kind == GE_MUL) {
                gen_put(b, ", ");
                gen_put_expr(g, b, n->e[1]);
            }
            gen_put(b, ")");
            break;
        }
        gen_put(b, "(");
        gen_put_expr(g, b, n->e[0]);
        gen_put(b, " %s ", n->kind < (int)(sizeof infix / sizeof infix[0]) && infix[n->kind] ? infix[n->kind] : "?");
        gen_put_expr(g, b, n->e[1]);
        gen_put(b, ")");
        break;
    }
}

static void gen_put_stmt(gen_prog *g, gen_buf *b, int s, int indent);

static void gen_put_block(gen_prog *g, gen_buf *b, int blk, int indent)
{
    for (int i = 0; i < g->nodes[blk].nkids; i++) {
#ifdef GEN_FIRST_STREAM_ONLY /* what the first stream drew alone: the programs from before the
                                second stream, but for loop names, labels and op= spellings */
        if (g->nodes[g->nodes[blk].kids[i]].ext) continue;
#endif
        gen_put_stmt(g, b, g->nodes[blk].kids[i], indent);
    }
}

static void gen_put_stmt(gen_prog *g, gen_buf *b, int s, int indent)
{
    gen_node *n = &g->nodes[s];
    const char *dst = g->vars[n->var].name;
    gen_put(b, "%*s", indent * 2, "");
    n->line = b->line;
    switch (n->kind) {
    case GS_OPTSET:
        gen_put(b, "o0 = ");
        gen_put_expr(g, b, n->e[0]);
        gen_put(b, "\n");
        break;
    case GS_PAIR:
        /* the same pair through a tuple variable in two statements of three (one per node, so
         * the program draws nothing more): `tp = (e0, e1)` unpacked, or `tp = e0, e1` indexed */
        if (s % 3 == 0) {
            gen_put(b, "t0, t1 = ");
        } else {
            gen_put(b, s % 3 == 1 ? "tp = (" : "tp = ");
        }
        gen_put_expr(g, b, n->e[0]);
        gen_put(b, ", ");
        gen_put_expr(g, b, n->e[1]);
        if (s % 3 == 1)
            gen_put(b, ")\n%*st0, t1 = tp\n", indent * 2, "");
        else if (s % 3 == 2)
            gen_put(b, "\n%*st1 = tp[-1]\n%*st0 = tp[len(tp) - 2]\n", indent * 2, "", indent * 2, "");
        else
            gen_put(b, "\n");
        break;
    case GS_ASSIGN: {
        /* `x = (x op e)` is written `x op= e` in every other such statement: the same program */
        const gen_node *v = &g->nodes[n->e[0]];
        int aug = v->kind >= GE_ADD && v->kind <= GE_MOD && g->nodes[v->e[0]].kind == GE_VAR &&
                  g->nodes[v->e[0]].var == n->var && s % 2 == 0;
        if (aug) {
            static const char *const ops[] = {"+=", "-=", "*=", "//=", "%="};
            gen_put(b, "%s %s ", dst, ops[v->kind - GE_ADD]);
            gen_put_expr(g, b, v->e[1]);
        } else {
            gen_put(b, "%s = ", dst);
            gen_put_expr(g, b, n->e[0]);
        }
        gen_put(b, "\n");
        break;
    }
    case GS_TENSOR: {
        const char *tv = g->vars[n->tv].name;
        switch (n->form) {
        case GF_ADD_T: gen_put(b, s % 2 ? "%s = %s + %s\n" : "%s += %.0s%s\n", dst, dst, tv); break;
        case GF_MUL_S:
            if (s % 4 == 3) {
                /* a list comprehension over the rows, stacked: e0 made for each */
                gen_put(b, "%s = stack([q * (", dst);
                gen_put_expr(g, b, n->e[0]);
                gen_put(b, ") for q in %s])\n", dst);
                break;
            }
            gen_put(b, s % 2 ? "%s = %s * " : "%s *= %.0s", dst, dst);
            gen_put_expr(g, b, n->e[0]);
            gen_put(b, "\n");
            break;
        case GF_SUB_S: gen_put(b, "%s = %s - ", dst, tv); gen_put_expr(g, b, n->e[0]); gen_put(b, "\n"); break;
        case GF_DIV_T: gen_put(b, "%s = %s // %s\n", dst, dst, tv); break;
        case GF_WHERE: gen_put(b, "%s = where(%s > %s, %s, %s)\n", dst, dst, tv, dst, tv); break;
        default:
            /* a copy, or the tensor plus zeros of its shape (a shape as a value) */
            if (s % 3 == 1)
                gen_put(b, "%s = %s + zeros(%s.shape%s)\n", dst, tv, tv,
                        g->vars[n->var].type == GT_VI ? ", dtype=i32" : "");
            else
                gen_put(b, "%s = copy(%s)\n", dst, tv);
            break;
        }
        break;
    }
    case GS_SETROW:
        gen_put(b, "%s[", dst);
        gen_put_expr(g, b, n->e[0]);
        gen_put(b, "] = ");
        gen_put_expr(g, b, n->e[1]);
        gen_put(b, "\n");
        break;
    case GS_ASSERT:
        /* the call form, and on every other assert Python's statement form */
        gen_put(b, n->ival % 2 ? "assert " : "assert(");
        gen_put_expr(g, b, n->e[0]);
        gen_put(b, n->ival % 2 ? ", \"m%lld\"\n" : ", \"m%lld\")\n", (long long)n->ival);
        break;
    case GS_PRINT:
        gen_put(b, "print(");
        if (n->e[0] >= 0) gen_put_expr(g, b, n->e[0]);
        else gen_put(b, "%s", g->vars[n->tv].name);
        gen_put(b, ", \"p%lld\")\n", (long long)n->ival);
        break;
    case GS_BREAK: gen_put(b, "break\n"); break;
    case GS_CONTINUE: gen_put(b, "continue\n"); break;
    case GS_RETURN: gen_put(b, "return\n"); break;
    case GS_IF:
        for (int i = 0; i < n->nkids; i++) {
            if (i > 0) gen_put(b, "%*s} elif ", indent * 2, "");
            else gen_put(b, "if ");
            n->lines[i] = b->line;
            /* a condition under a comparison of shapes, known true, in one if of five */
            if (i == 0 && s % 5 == 4) gen_put(b, "v.shape == w.shape and (");
            gen_put_expr(g, b, n->conds[i]);
            if (i == 0 && s % 5 == 4) gen_put(b, ")");
            gen_put(b, " {\n");
            gen_put_block(g, b, n->kids[i], indent + 1);
        }
        if (n->has_else) {
            gen_put(b, "%*s} else {\n", indent * 2, "");
            gen_put_block(g, b, n->kids[n->nkids], indent + 1);
        }
        gen_put(b, "%*s}\n", indent * 2, "");
        break;
    case GS_WHILE:
        gen_put(b, "%s = 0\n%*s", dst, indent * 2, "");
        n->line = b->line;
        gen_put(b, "while (%s < %lld)", dst, (long long)n->ival);
        if (n->e[0] >= 0) {
            gen_put(b, " and ");
            gen_put_expr(g, b, n->e[0]);
        }
        gen_put(b, " {\n%*s%s = %s + 1\n", indent * 2 + 2, "", dst, dst);
        gen_put_block(g, b, n->kids[0], indent + 1);
        gen_put(b, "%*s}\n", indent * 2, "");
        break;
    case GS_FOR: case GS_FOR64:
        gen_put(b, "for %s in range(", dst);
        gen_put_expr(g, b, n->e[0]);
        gen_put(b, ", ");
        gen_put_expr(g, b, n->e[1]);
        if (n->e[2] >= 0) {
            gen_put(b, ", ");
            gen_put_expr(g, b, n->e[2]);
        }
        gen_put(b, ") {\n");
        gen_put_block(g, b, n->kids[0], indent + 1);
        gen_put(b, "%*s}\n", indent * 2, "");
        break;
    case GS_FOREACH:
        gen_put(b, "for %s in %s {\n", dst, g->vars[n->tv].name);
        gen_put_block(g, b, n->kids[0], indent + 1);
        gen_put(b, "%*s}\n", indent * 2, "");
        break;
    case GS_SWITCH:
        gen_put(b, "switch ");
        gen_put_expr(g, b, n->e[0]);
        gen_put(b, " {\n");
        for (int i = 0; i < n->nkids + n->has_else; i++) {
            if (i < n->nkids) gen_put(b, "%*scase %d {\n", indent * 2 + 2, "", n->vals[i]);
            else gen_put(b, "%*sdefault {\n", indent * 2 + 2, "");
            gen_put_block(g, b, n->kids[i], indent + 2);
            gen_put(b, "%*s}\n", indent * 2 + 2, "");
        }
        gen_put(b, "%*s}\n", indent * 2, "");
        break;
    case GS_TASSIGN: case GS_ASSIGN64: case GS_TSET: case GS_LSET: {
        static const char *const ops[] = {"+=", "-=", "*="};
        if (n->kind == GS_TSET) gen_put_expr(g, b, n->e[1]);
        else gen_put(b, "%s", dst);
        if (n->kind == GS_LSET) {
            gen_put(b, "[");
            gen_put_expr(g, b, n->e[0]);
            gen_put(b, "]");
        }
        gen_put(b, " %s ", n->form ? ops[n->form - GE_ADD] : "=");
        gen_put_expr(g, b, n->kind == GS_LSET ? n->e[1] : n->e[0]);
        gen_put(b, "\n");
        break;
    }
    case GS_APPEND:
        gen_put(b, "%s.append(", dst);
        gen_put_expr(g, b, n->e[0]);
        gen_put(b, ")\n");
        break;
    case GS_POP:
        if (n->tv >= 0) gen_put(b, "%s = ", g->vars[n->tv].name);
        gen_put(b, "%s.pop()\n", dst);
        break;
    case GS_LASSIGN:
        gen_put(b, "%s = [", dst);
        for (int i = 0; i < n->ival; i++) {
            if (i) gen_put(b, ", ");
            gen_put_expr(g, b, n->vals[i]);
        }
        gen_put(b, "]\n");
        break;
    case GS_FORLIST: case GS_FORLIT:
        if (n->form) gen_put(b, "for %s, %s in enumerate(", g->vars[n->kind == GS_FORLIT ? n->tv : n->vals[0]].name, dst);
        else gen_put(b, "for %s in ", dst);
        if (n->kind == GS_FORLIST) {
            gen_put(b, "%s", g->vars[n->tv].name);
        } else {
            gen_put(b, "[");
            for (int i = 0; i < n->ival; i++) {
                if (i) gen_put(b, ", ");
                gen_put_expr(g, b, n->vals[i]);
            }
            gen_put(b, "]");
        }
        gen_put(b, n->form ? ") {\n" : " {\n");
        gen_put_block(g, b, n->kids[0], indent + 1);
        gen_put(b, "%*s}\n", indent * 2, "");
        break;
    default:
        break;
    }
}

/* The program's source (malloc'd; the caller frees), and records each statement's line. */
static inline char *gen_text(gen_prog *g)
{
    gen_buf b = {NULL, 0, 0, 1};
    gen_put(&b, "# generated program, seed %llu\n", (unsigned long long)g->seed);
    gen_put(&b, "%s {\n", GEN_SIGNATURE);
    gen_put(&b, "  r0 = a\n  r1 = x\n  r2 = copy(v)\n  r3 = copy(w)\n  t0 = b\n  t1 = n\n  f0 = 0.5\n");
    gen_put(&b, "  r4 = cast(b, i64)\n  r5 = full(f32[3, 4], x)\n");
    if (g->ext) /* lists with room for one more item, and a full one */
        gen_put(&b, "  L0 = list(i32, 4)\n  L0.append(a)\n  L0.append(n)\n  L0.append(b)\n  L1 = list(f32[4], 3)\n"
                    "  L1.append(w)\n  L1.append(w * 2.0)\n  k0 = [a, b, n]\n"
                    "  o0 = None\n  if n > 3 {\n    o0 = x\n  }\n  s0 = n %% 3\n");
    int adds = 0, muls = 0;
    for (int k = 0; k < g->nnodes; k++)
        if (gen_inner_call(g, k)) {
            adds |= g->nodes[k].kind == GE_ADD;
            muls |= g->nodes[k].kind == GE_MUL;
        }
    if (adds)
        gen_put(&b, "  graph plus_a(u: i32) -> (r: i32) {\n    r = u + a\n  }\n");
    if (muls)
        gen_put(&b, "  times = lambda u, w: u * w\n");
    gen_put_block(g, &b, g->body, 1);
    gen_put(&b, "}\n");
    for (int k = 0; k < g->nnodes; k++)
        if (g->nodes[k].kind == GE_CALLH) {
            gen_put(&b, "\n%s", GEN_CALLEE);
            break;
        }
    return b.p;
}

/* Inputs drawn from the seed: small values, so that zeros (divisors, steps) and
 * out-of-range indices come up often. */
static inline void gen_inputs_make(uint64_t seed, gen_inputs *in)
{
    uint64_t s = seed ^ 0x5eedull;
    in->a = (int32_t)(gen_next(&s) % 11) - 5;
    in->b = (int32_t)(gen_next(&s) % 11) - 5;
    in->n = (int32_t)(gen_next(&s) % 7);
    in->x = (float)((int)(gen_next(&s) % 17) - 8) * 0.5f;
    for (int i = 0; i < GEN_LEN; i++) {
        in->v[i] = (int32_t)(gen_next(&s) % 9) - 4;
        in->w[i] = (float)((int)(gen_next(&s) % 17) - 8) * 0.25f;
    }
}

/* ---- the independent evaluator ----------------------------------------------------------- */

typedef struct gen_val {
    int32_t i;
    float f;
    int b;
    int64_t l;
} gen_val;

typedef struct gen_state {
    gen_prog *g;
    int32_t si[GEN_MAX_VARS];         /* i32 scalars */
    float sf[GEN_MAX_VARS];           /* f32 scalars */
    int32_t ti[GEN_MAX_VARS][GEN_LEN];/* i32[4] */
    float tf[GEN_MAX_VARS][GEN_LEN];  /* f32[4] */
    int64_t sl[GEN_MAX_VARS];         /* i64 scalars */
    float m[GEN_ROWS * GEN_LEN];      /* r5 */
    int32_t li[GEN_MAX_VARS][GEN_LEN];/* the items of the i32 lists */
    float lv[GEN_ROWS][GEN_LEN];      /* the items of L1 */
    int llen[GEN_MAX_VARS];           /* the lists' lengths */
    int64_t max_iters;
    gen_outcome *out;
    uint8_t assigned[GEN_MAX_VARS];   /* the loop variables a loop has given a value */
    float o0;                         /* the variable o0 (GE_OPT), while o0_present */
    int o0_present;
    int stopped;                      /* a stop status is set */
    int bug;                          /* the generator made something it should not have */
} gen_state;

enum { GEN_NEXT, GEN_BREAK, GEN_CONTINUE, GEN_RETURN, GEN_STOP };

/* Appends one printed line as cfx formats it: `LABEL: VALUE`, a tensor as `[1, 2, 3, 4]`. */
static void gen_print_line(gen_outcome *o, const char *text)
{
    size_t n = strlen(text);
    char *p = (char *)realloc(o->prints, o->prints_len + n + 2);
    if (!p) return;
    memcpy(p + o->prints_len, text, n);
    p[o->prints_len + n] = '\n';
    p[o->prints_len + n + 1] = '\0';
    o->prints = p;
    o->prints_len += n + 1;
}

static void gen_stop(gen_state *st, cfx_status s, int line)
{
    if (st->stopped) return;
    st->stopped = 1;
    st->out->status = s;
    st->out->line = line;
}

static int32_t gen_wrap(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }

/* Python's // and % on integers (b != 0): the quotient rounded down, the remainder with the
 * divisor's sign; INT_MIN // -1 wraps to INT_MIN, INT_MIN % -1 is 0. */
static int32_t gen_floordiv(int32_t a, int32_t b)
{
    if (b == -1) return gen_wrap(-(int64_t)a);
    int32_t q = a / b;
    return (q * b != a && (a < 0) != (b < 0)) ? q - 1 : q;
}
static int32_t gen_mod(int32_t a, int32_t b)
{
    if (b == -1) return 0;
    int32_t r = a % b;
    return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}
static int64_t gen_mod64(int64_t a, int64_t b)
{
    if (b == -1) return 0;
    int64_t r = a % b;
    return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}
/* Python's float // and % (CPython's float_divmod): exact, from fmod; a zero divisor gives IEEE's
 * answer (inf or nan), as numpy and cfx do, where Python would raise. */
static float gen_mod_f(float a, float b)
{
    float m = fmodf(a, b);
    if (b == 0.0f) return m;
    if (m == 0.0f) return copysignf(0.0f, b);
    return (b < 0.0f) != (m < 0.0f) ? m + b : m;
}
static float gen_floordiv_f(float a, float b)
{
    if (b == 0.0f) return a / b;
    float m = fmodf(a, b), d = (a - m) / b;
    if (m != 0.0f && (b < 0.0f) != (m < 0.0f)) d -= 1.0f;
    if (d == 0.0f) return copysignf(0.0f, a / b);
    float f = floorf(d);
    return d - f > 0.5f ? f + 1.0f : f;
}

static float gen_fmin(float a, float b) { return isnan(a) || isnan(b) ? NAN : a < b ? a : b; }
static float gen_fmax(float a, float b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }

static gen_val gen_eval_expr(gen_state *st, int e, int line);

/* ---- the second stream's values: i64 scalars, tensors up to [4, 4], lists ------------------ */

/* A tensor value: dtype (f: 1 for f32, 0 for i32), shape (rank 0: a scalar), elements in
 * row-major order. */
typedef struct gen_tv {
    int f, rank, d[2], count;
    int32_t i[GEN_TMAX];
    float x[GEN_TMAX];
} gen_tv;

/* Two's complement wrapping without relying on the conversion of an unsigned out of range. */
static int64_t gen_wrap64(uint64_t v) { return v <= (uint64_t)INT64_MAX ? (int64_t)v : -(int64_t)(~v) - 1; }

/* a ** b on integers (docs/language.md): a negative exponent gives the truncated real result,
 * 1 for a base of 1, 1 or -1 for a base of -1 by the exponent's parity, else 0; otherwise the
 * product of b copies of a, wrapping. */
static int64_t gen_ipow(int64_t a, int64_t b, int bits)
{
    if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
    uint64_t r = 1, mask = bits == 32 ? 0xffffffffull : ~0ull;
    for (int64_t k = 0; k < b; k++) r = (r * (uint64_t)a) & mask;
    return bits == 32 ? (int64_t)gen_wrap((int64_t)r) : gen_wrap64(r);
}

static void gen_bug(gen_state *st, const char *what)
{
    if (!st->bug) fprintf(stderr, "gen_programs: the generator made %s (seed %llu)\n", what, (unsigned long long)st->g->seed);
    st->bug = 1;
    gen_stop(st, CFX_ERROR, 0);
}

static void gen_set_shape(gen_tv *t, int f, int rank, int d0, int d1)
{
    t->f = f;
    t->rank = rank;
    t->d[0] = rank >= 1 ? d0 : 0;
    t->d[1] = rank == 2 ? d1 : 0;
    t->count = rank == 0 ? 1 : rank == 1 ? d0 : d0 * d1;
}

static int gen_same_shape(const gen_tv *a, const gen_tv *b)
{
    return a->rank == b->rank && (a->rank < 1 || a->d[0] == b->d[0]) && (a->rank < 2 || a->d[1] == b->d[1]);
}

static void gen_load(gen_state *st, int v, gen_tv *o)
{
    int rank, d[2];
    int f = gen_var_shape(st->g, v, &rank, d);
    memset(o, 0, sizeof *o);
    gen_set_shape(o, f == GT_F, rank, d[0], d[1]);
    if (f == GT_I) memcpy(o->i, st->ti[v], sizeof st->ti[v]);
    else if (st->g->vars[v].type == GT_M) memcpy(o->x, st->m, sizeof st->m);
    else memcpy(o->x, st->tf[v], sizeof st->tf[v]);
}

static void gen_store(gen_state *st, int v, const gen_tv *t)
{
    gen_tv cur;
    gen_load(st, v, &cur);
    if (!gen_same_shape(&cur, t) || cur.f != t->f) {
        gen_bug(st, "a value of another shape for a variable");
        return;
    }
    if (!t->f) memcpy(st->ti[v], t->i, sizeof st->ti[v]);
    else if (st->g->vars[v].type == GT_M) memcpy(st->m, t->x, sizeof st->m);
    else memcpy(st->tf[v], t->x, sizeof st->tf[v]);
}

/* One item of a subscript of a dimension of size d, whose computed value (an index, a run-time
 * start) is v: its start and length in that dimension, and whether the part keeps it. */
static int gen_dim_at(gen_state *st, const gen_node *dn, int d, int64_t v, int line, int *start, int *len,
                      int *kept)
{
    switch (dn->form) {
    case GD_INDEX:
        if (v < -d || v >= d) {
            gen_stop(st, CFX_STOP_INDEX, line);
            return -1;
        }
        *start = (int)(v < 0 ? v + d : v);
        *len = 1;
        *kept = 0;
        return 0;
    case GD_ALL:
        return 0;
    case GD_RUN: /* the start must leave room for the length: 0 <= v <= d - length */
        if (v < 0 || v > d - dn->vals[2]) {
            gen_stop(st, CFX_STOP_INDEX, line);
            return -1;
        }
        *start = (int)v;
        *len = dn->vals[2];
        return 0;
    default: { /* Python's rules: negative from the end, then clamped into 0 .. d */
        int64_t a = dn->vals[1] & 1 ? dn->ival : 0, b = dn->vals[1] & 2 ? dn->vals[0] : d;
        a = a < 0 ? a + d : a;
        b = b < 0 ? b + d : b;
        a = a < 0 ? 0 : a > d ? d : a;
        b = b < 0 ? 0 : b > d ? d : b;
        if (b <= a) {
            gen_bug(st, "an empty slice");
            return -1;
        }
        *start = (int)a;
        *len = (int)(b - a);
        return 0;
    }
    }
}

/* Where subscript bx lies in its variable, per dimension. Every item is computed before any is
 * checked, as Python computes a subscript's tuple first; x[i][j] (form 1) reads row i, checked,
 * before it computes j. -1 after a stop. */
static int gen_box_at(gen_state *st, const gen_node *bx, int line, int *start, int *len, int *kept)
{
    const gen_prog *g = st->g;
    int rank, d[2];
    int64_t val[2] = {0, 0};
    gen_var_shape(g, bx->var, &rank, d);
    for (int k = 0; k < rank; k++) {
        start[k] = 0;
        len[k] = d[k];
        kept[k] = 1;
    }
    for (int k = 0; k < bx->nkids; k++) {
        const gen_node *dn = &g->nodes[bx->kids[k]];
        if (dn->form == GD_INDEX || dn->form == GD_RUN) {
            val[k] = gen_eval_expr(st, dn->e[0], line).i;
            if (st->stopped) return -1;
        }
        if (bx->form == 1 && gen_dim_at(st, dn, d[k], val[k], line, &start[k], &len[k], &kept[k]) < 0) return -1;
    }
    for (int k = 0; bx->form != 1 && k < bx->nkids; k++)
        if (gen_dim_at(st, &g->nodes[bx->kids[k]], d[k], val[k], line, &start[k], &len[k], &kept[k]) < 0) return -1;
    return 0;
}

/* Reads the part of bx's variable at (start, len) into *t, or writes *t there. */
static void gen_box_io(gen_state *st, const gen_node *bx, const int *start, const int *len, const int *kept,
                       gen_tv *t, int write)
{
    gen_tv whole;
    gen_load(st, bx->var, &whole);
    int two = whole.rank == 2, stride = two ? whole.d[1] : 1, k = 0;
    for (int a = 0; a < len[0]; a++)
        for (int b = 0; b < (two ? len[1] : 1); b++, k++) {
            int at = (start[0] + a) * stride + (two ? start[1] + b : 0);
            if (write) {
                whole.i[at] = t->i[t->count == 1 ? 0 : k];
                whole.x[at] = t->x[t->count == 1 ? 0 : k];
            } else {
                t->i[k] = whole.i[at];
                t->x[k] = whole.x[at];
            }
        }
    if (write) {
        gen_store(st, bx->var, &whole);
        return;
    }
    int r = 0;
    t->f = whole.f;
    for (int d = 0; d < whole.rank; d++)
        if (kept[d]) t->d[r++] = len[d];
    t->rank = r;
    t->count = k;
}

/* The shape of a op b: an operand of one element takes the other's shape (cfx's rule, which
 * comes first); otherwise numpy's, dimensions aligned at the right, each pair equal or one 1. */
static int gen_bshape(const gen_tv *a, const gen_tv *b, gen_tv *o)
{
    if (a->count == 1 && b->count == 1) {
        gen_set_shape(o, a->f, a->rank > b->rank ? a->rank : b->rank, 1, 1);
        return 0;
    }
    if (a->count == 1 || b->count == 1) {
        const gen_tv *t = a->count == 1 ? b : a;
        gen_set_shape(o, a->f, t->rank, t->d[0], t->d[1]);
        return 0;
    }
    int rank = a->rank > b->rank ? a->rank : b->rank, d[2] = {1, 1};
    for (int k = 0; k < rank; k++) { /* k counts from the right */
        int da = k < a->rank ? a->d[a->rank - 1 - k] : 1, db = k < b->rank ? b->d[b->rank - 1 - k] : 1;
        if (da != db && da != 1 && db != 1) return -1;
        d[rank - 1 - k] = da == 1 ? db : da;
    }
    gen_set_shape(o, a->f, rank, d[0], d[1]);
    return 0;
}

/* The element of a that element k of o (a's shape broadcast to o's) reads. */
static int gen_bat(const gen_tv *a, const gen_tv *o, int k)
{
    if (a->count == 1) return 0;
    int idx[2] = {o->rank == 2 ? k / o->d[1] : k, o->rank == 2 ? k % o->d[1] : 0};
    int off = o->rank - a->rank, at = 0;
    for (int j = 0; j < a->rank; j++) at = at * a->d[j] + (a->d[j] == 1 ? 0 : idx[j + off]);
    return at;
}

/* o = a op b, broadcast; op GE_ADD, GE_SUB, GE_MUL, or GE_GT for where(a > b, a, b). */
static int gen_tv_op(gen_state *st, int op, const gen_tv *a, const gen_tv *b, gen_tv *o)
{
    if (gen_bshape(a, b, o) < 0) {
        gen_bug(st, "operands that do not broadcast");
        return -1;
    }
    for (int k = 0; k < o->count; k++) {
        int ka = gen_bat(a, o, k), kb = gen_bat(b, o, k);
        int32_t x = a->i[ka], y = b->i[kb];
        float fx = a->x[ka], fy = b->x[kb];
        switch (op) {
        case GE_ADD: o->i[k] = gen_wrap((int64_t)x + y); o->x[k] = fx + fy; break;
        case GE_SUB: o->i[k] = gen_wrap((int64_t)x - y); o->x[k] = fx - fy; break;
        case GE_MUL: o->i[k] = gen_wrap((int64_t)x * y); o->x[k] = fx * fy; break;
        default: o->i[k] = x > y ? x : y; o->x[k] = fx > fy ? fx : fy; break; /* NaN: b */
        }
    }
    return 0;
}

/* The value of expression e as a tensor (a scalar one has rank 0). -1 after a stop. */
static int gen_eval_t(gen_state *st, int e, int line, gen_tv *o)
{
    const gen_prog *g = st->g;
    const gen_node *n = &g->nodes[e];
    gen_tv a, b;
    int start[2], len[2], kept[2];
    memset(o, 0, sizeof *o);
    if (st->stopped) return -1;
    if (n->type != GT_T) {
        gen_val v = gen_eval_expr(st, e, line);
        gen_set_shape(o, n->type == GT_F, 0, 0, 0);
        o->i[0] = v.i;
        o->x[0] = v.f;
        return st->stopped ? -1 : 0;
    }
    switch (n->kind) {
    case GE_TVAR:
        if (n->form == 1 && !st->assigned[n->var]) {
            gen_stop(st, CFX_STOP_VALUE, line);
            return -1;
        }
        gen_load(st, n->var, o);
        break;
    case GE_AXRED: { /* numpy's reduction of r5 along an axis; sums in double, rounded once; mean
                        is that sum, as f32, divided by the count in f32 */
        int rows = n->ival == 0, cnt = rows ? GEN_ROWS : GEN_LEN, outs = rows ? GEN_LEN : GEN_ROWS;
        gen_set_shape(o, 1, 1, outs, 0);
        for (int j = 0; j < outs; j++) {
            double sum = 0;
            float best = 0;
            for (int i = 0; i < cnt; i++) {
                float v = rows ? st->m[i * GEN_LEN + j] : st->m[j * GEN_LEN + i];
                sum += v;
                best = i == 0 ? v : n->form == 1 ? gen_fmax(best, v) : gen_fmin(best, v);
            }
            o->x[j] = n->form == 0 ? (float)sum : n->form == 3 ? (float)sum / (float)cnt : best;
        }
        break;
    }
    case GE_BOX:
        if (gen_box_at(st, n, line, start, len, kept) < 0) return -1;
        gen_box_io(st, n, start, len, kept, o, 0);
        break;
    case GE_LITEM: { /* an item of L1 */
        int64_t i = gen_eval_expr(st, n->e[0], line).i, cnt = st->llen[n->var];
        if (st->stopped) return -1;
        if (i < -cnt || i >= cnt) {
            gen_stop(st, CFX_STOP_INDEX, line);
            return -1;
        }
        gen_set_shape(o, 1, 1, GEN_LEN, 0);
        memcpy(o->x, st->lv[i < 0 ? i + cnt : i], sizeof st->lv[0]);
        break;
    }
    case GE_STACK: { /* the list must be full */
        const gen_var *l = &g->vars[n->var];
        if (st->llen[n->var] != l->cap) {
            gen_stop(st, CFX_STOP_INDEX, line);
            return -1;
        }
        if (l->item == GT_VF) {
            gen_set_shape(o, 1, 2, l->cap, GEN_LEN);
            memcpy(o->x, st->lv, sizeof st->lv);
        } else {
            gen_set_shape(o, 0, 1, l->cap, 0);
            memcpy(o->i, st->li[n->var], sizeof(int32_t) * (size_t)l->cap);
        }
        break;
    }
    case GE_RESHAPE:
        if (gen_eval_t(st, n->e[0], line, &a) < 0) return -1;
        *o = a;
        gen_set_shape(o, a.f, n->rank, n->dims[0], n->dims[1]);
        if (o->count != a.count) gen_bug(st, "a reshape to another count");
        break;
    case GE_TBIN:
        if (gen_eval_t(st, n->e[0], line, &a) < 0 || gen_eval_t(st, n->e[1], line, &b) < 0) return -1;
        if (gen_tv_op(st, n->form, &a, &b, o) < 0) return -1;
        break;
    case GE_TWHERE:
        if (gen_eval_t(st, n->e[0], line, &a) < 0 || gen_eval_t(st, n->e[1], line, &b) < 0) return -1;
        if (gen_tv_op(st, GE_GT, &a, &b, o) < 0) return -1;
        break;
    case GE_TPOW: case GE_TNEG:
        if (gen_eval_t(st, n->e[0], line, &a) < 0) return -1;
        *o = a;
        for (int k = 0; k < a.count; k++) {
            if (n->kind == GE_TNEG) {
                o->i[k] = gen_wrap(-(int64_t)a.i[k]);
                o->x[k] = -a.x[k];
            } else {
                o->i[k] = (int32_t)gen_ipow(a.i[k], n->ival, 32);
                o->x[k] = powf(a.x[k], (float)n->ival);
            }
        }
        break;
    default:
        gen_bug(st, "a tensor expression the evaluator does not know");
        return -1;
    }
    if (!st->stopped && (o->f != (n->tdt == GT_F) || o->rank != n->rank || (n->rank >= 1 && o->d[0] != n->dims[0]) ||
                         (n->rank == 2 && o->d[1] != n->dims[1])))
        gen_bug(st, "a tensor expression of another shape than it was made for");
    return st->stopped ? -1 : 0;
}

/* Evaluates expression e at statement line `line`; after a stop the value is meaningless. */
static gen_val gen_eval_expr(gen_state *st, int e, int line)
{
    const gen_node *n = &st->g->nodes[e];
    gen_val r = {0, 0.0f, 0, 0}, x, y;
    if (st->stopped) return r;
    switch (n->kind) {
    case GE_INT: r.i = (int32_t)n->ival; r.l = n->ival; return r;
    case GE_REAL: r.f = n->fval; return r;
    case GE_VAR:
        if (n->form == 1 && !st->assigned[n->var]) { /* Python's UnboundLocalError */
            gen_stop(st, CFX_STOP_VALUE, line);
            return r;
        }
        if (n->type == GT_I) r.i = st->si[n->var];
        else if (n->type == GT_L) r.l = st->sl[n->var];
        else r.f = st->sf[n->var];
        return r;
    case GE_CAST_L: r.l = gen_eval_expr(st, n->e[0], line).i; return r;
    case GE_CAST_IL: r.i = gen_wrap(gen_eval_expr(st, n->e[0], line).l); return r;
    case GE_LLEN: r.i = st->llen[n->var]; return r;
    case GE_LITEM: { /* an item of an i32 list: -len <= i < len */
        int64_t i = gen_eval_expr(st, n->e[0], line).i, cnt = st->llen[n->var];
        if (st->stopped) return r;
        if (i < -cnt || i >= cnt) {
            gen_stop(st, CFX_STOP_INDEX, line);
            return r;
        }
        r.i = st->li[n->var][i < 0 ? i + cnt : i];
        return r;
    }
    case GE_BOX: { /* an element of r5 */
        gen_tv t;
        int start[2], len[2], kept[2];
        if (gen_box_at(st, n, line, start, len, kept) < 0) return r;
        gen_box_io(st, n, start, len, kept, &t, 0);
        r.f = t.x[0];
        return r;
    }
    case GE_TSUM: { /* the sum of a tensor expression: f32 in double, rounded once; i32 wraps */
        gen_tv t;
        if (gen_eval_t(st, n->e[0], line, &t) < 0) return r;
        if (t.f) {
            double sum = 0.0;
            for (int k = 0; k < t.count; k++) sum += (double)t.x[k];
            r.f = (float)sum;
        } else {
            int64_t sum = 0;
            for (int k = 0; k < t.count; k++) sum += t.i[k];
            r.i = gen_wrap(sum);
        }
        return r;
    }
    case GE_LEN: r.i = GEN_LEN; return r;
    case GE_SUM:
        if (n->type == GT_I) {
            int64_t s = 0;
            for (int k = 0; k < GEN_LEN; k++) s += st->ti[n->tv][k];
            r.i = gen_wrap(s);
        } else {
            double s = 0.0;
            for (int k = 0; k < GEN_LEN; k++) s += (double)st->tf[n->tv][k];
            r.f = (float)s;
        }
        return r;
    case GE_ARGMAX: {
        int best = 0;
        if (st->g->vars[n->tv].type == GT_VI) {
            for (int k = 1; k < GEN_LEN; k++)
                if (st->ti[n->tv][k] > st->ti[n->tv][best]) best = k;
        } else {
            const float *t = st->tf[n->tv];
            for (int k = 0; k < GEN_LEN; k++)
                if (isnan(t[k])) { best = k; goto found; }
            for (int k = 1; k < GEN_LEN; k++)
                if (t[k] > t[best]) best = k;
        }
    found:
        r.i = best;
        return r;
    }
    case GE_INDEX: {
        int64_t i = gen_eval_expr(st, n->e[0], line).i;
        if (st->stopped) return r;
        if (i < -GEN_LEN || i >= GEN_LEN) {
            gen_stop(st, CFX_STOP_INDEX, line);
            return r;
        }
        if (i < 0) i += GEN_LEN;
        if (n->type == GT_I) r.i = st->ti[n->tv][i];
        else r.f = st->tf[n->tv][i];
        return r;
    }
    case GE_CAST_I: {
        float f = gen_eval_expr(st, n->e[0], line).f;
        r.i = isnan(f) ? 0 : f >= 2147483648.0f ? INT32_MAX : f <= -2147483648.0f ? INT32_MIN : (int32_t)f;
        return r;
    }
    case GE_CAST_F: r.f = (float)gen_eval_expr(st, n->e[0], line).i; return r;
    case GE_NOT: r.b = !gen_eval_expr(st, n->e[0], line).b; return r;
    case GE_NEG:
        x = gen_eval_expr(st, n->e[0], line);
        if (n->type == GT_I) r.i = gen_wrap(-(int64_t)x.i);
        else if (n->type == GT_L) r.l = gen_wrap64(0u - (uint64_t)x.l);
        else r.f = -x.f;
        return r;
    case GE_ABS:
        x = gen_eval_expr(st, n->e[0], line);
        r.i = x.i < 0 ? gen_wrap(-(int64_t)x.i) : x.i;
        return r;
    case GE_COND:
        x = gen_eval_expr(st, n->e[0], line);
        if (st->stopped) return r;
        return gen_eval_expr(st, n->e[x.b ? 1 : 2], line);
    case GE_OPT:
        if (n->form == 2) {
            r.i = !st->o0_present;
        } else if (st->o0_present) {
            r.f = st->o0;
        } else if (n->form == 1) {
            return gen_eval_expr(st, n->e[0], line);
        } else {
            gen_stop(st, CFX_STOP_VALUE, line); /* 'o0' is None */
        }
        return r;
    case GE_CALLH: { /* the arguments as written, left to right; the defaults q = 3, s = 0.5 */
        int32_t p = 0, q = 3;
        float sv = 0.5f;
        p = gen_eval_expr(st, n->e[0], line).i;
        if (n->form & 4) {
            sv = gen_eval_expr(st, n->e[2], line).f;
            q = gen_eval_expr(st, n->e[1], line).i;
        } else {
            if (n->form & 1) q = gen_eval_expr(st, n->e[1], line).i;
            if (n->form & 2) sv = gen_eval_expr(st, n->e[2], line).f;
        }
        if (st->stopped) return r;
        r.f = (float)gen_wrap((int64_t)p * q) + sv;
        return r;
    }
    case GE_MIXED: { /* both operands, converted to the type they promote to (docs/language.md) */
        int ta = st->g->nodes[n->e[0]].type, tb = st->g->nodes[n->e[1]].type;
        int to = ta == GT_F || tb == GT_F ? GT_F : ta == GT_L || tb == GT_L ? GT_L : GT_I;
        x = gen_eval_expr(st, n->e[0], line);
        y = gen_eval_expr(st, n->e[1], line);
        if (st->stopped) return r;
        gen_val *v[2] = {&x, &y};
        int t[2] = {ta, tb};
        for (int k = 0; k < 2; k++) { /* a bool is 0 or 1; an integer converts to f32 rounded */
            int64_t iv = t[k] == GT_B ? v[k]->b : t[k] == GT_L ? v[k]->l : v[k]->i;
            if (t[k] != GT_F) {
                v[k]->f = (float)iv;
                v[k]->l = iv;
                v[k]->i = (int32_t)iv;
            }
        }
        switch (n->form) {
        case GE_ADD: r.f = x.f + y.f; r.l = gen_wrap64((uint64_t)x.l + (uint64_t)y.l); r.i = gen_wrap((int64_t)x.i + y.i); break;
        case GE_SUB: r.f = x.f - y.f; r.l = gen_wrap64((uint64_t)x.l - (uint64_t)y.l); r.i = gen_wrap((int64_t)x.i - y.i); break;
        case GE_MUL: r.f = x.f * y.f; r.l = gen_wrap64((uint64_t)x.l * (uint64_t)y.l); r.i = gen_wrap((int64_t)x.i * y.i); break;
        case GE_LT: r.b = to == GT_F ? x.f < y.f : to == GT_L ? x.l < y.l : x.i < y.i; break;
        default: r.b = to == GT_F ? x.f >= y.f : to == GT_L ? x.l >= y.l : x.i >= y.i; break;
        }
        return r;
    }
    case GE_AND:
        x = gen_eval_expr(st, n->e[0], line);
        r.b = x.b ? gen_eval_expr(st, n->e[1], line).b : 0; /* short-circuit */
        return r;
    case GE_OR:
        x = gen_eval_expr(st, n->e[0], line);
        r.b = x.b ? 1 : gen_eval_expr(st, n->e[1], line).b;
        return r;
    default:
        break;
    }
    /* binary arithmetic and comparisons: both operands, left first */
    x = gen_eval_expr(st, n->e[0], line);
    y = gen_eval_expr(st, n->e[1], line);
    if (st->stopped) return r;
    if (st->g->nodes[n->e[0]].type == GT_L) { /* i64: wraps; % only by a literal, never 0 */
        uint64_t a = (uint64_t)x.l, c = (uint64_t)y.l;
        switch (n->kind) {
        case GE_ADD: r.l = gen_wrap64(a + c); break;
        case GE_SUB: r.l = gen_wrap64(a - c); break;
        case GE_MUL: r.l = gen_wrap64(a * c); break;
        case GE_POW: r.l = gen_ipow(x.l, y.l, 64); break;
        case GE_MOD: r.l = gen_mod64(x.l, y.l); break;
        default: gen_bug(st, "an i64 operator the evaluator does not know"); break;
        }
        return r;
    }
    {
        int ints = st->g->nodes[n->e[0]].type == GT_I;
        switch (n->kind) {
        case GE_ADD: if (ints) r.i = gen_wrap((int64_t)x.i + y.i); else r.f = x.f + y.f; break;
        case GE_SUB: if (ints) r.i = gen_wrap((int64_t)x.i - y.i); else r.f = x.f - y.f; break;
        case GE_MUL: if (ints) r.i = gen_wrap((int64_t)x.i * y.i); else r.f = x.f * y.f; break;
        case GE_TDIV: r.f = (float)x.i / (float)y.i; break; /* f32 division: 1 / 0 is inf */
        case GE_DIV:
        case GE_MOD:
        case GE_CDIV:
        case GE_CMOD:
            if (!ints) { /* reals: Python's, from fmod; never stops */
                r.f = n->kind == GE_DIV ? gen_floordiv_f(x.f, y.f) : gen_mod_f(x.f, y.f);
                break;
            }
            if (y.i == 0) {
                gen_stop(st, CFX_STOP_DIVIDE, line);
                return r;
            }
            if (n->kind == GE_DIV) r.i = gen_floordiv(x.i, y.i);
            else if (n->kind == GE_MOD) r.i = gen_mod(x.i, y.i);
            else if (x.i == INT32_MIN && y.i == -1) r.i = n->kind == GE_CDIV ? INT32_MIN : 0;
            else r.i = n->kind == GE_CDIV ? x.i / y.i : x.i % y.i;
            break;
        case GE_MIN: if (ints) r.i = x.i < y.i ? x.i : y.i; else r.f = gen_fmin(x.f, y.f); break;
        case GE_MAX: if (ints) r.i = x.i > y.i ? x.i : y.i; else r.f = gen_fmax(x.f, y.f); break;
        case GE_POW: if (ints) r.i = (int32_t)gen_ipow(x.i, y.i, 32); else r.f = powf(x.f, y.f); break;
        case GE_LT: r.b = ints ? x.i < y.i : x.f < y.f; break;
        case GE_LE: r.b = ints ? x.i <= y.i : x.f <= y.f; break;
        case GE_GT: r.b = ints ? x.i > y.i : x.f > y.f; break;
        case GE_GE: r.b = ints ? x.i >= y.i : x.f >= y.f; break;
        case GE_EQ: r.b = ints ? x.i == y.i : x.f == y.f; break;
        case GE_NE: r.b = ints ? x.i != y.i : x.f != y.f; break;
        default: break;
        }
    }
    return r;
}

/* One iteration about to enter its body: stops with limit if the budget is spent, else
 * counts it (the cancel flag is never set here). */
static int gen_tick(gen_state *st, int line)
{
    if (st->max_iters > 0 && st->out->iterations >= st->max_iters) {
        gen_stop(st, CFX_STOP_LIMIT, line);
        return 0;
    }
    st->out->iterations++;
    return 1;
}

static int gen_exec_block(gen_state *st, int blk);

/* Runs a loop body; maps break/continue. Returns GEN_NEXT to go on looping, GEN_BREAK to
 * leave the loop, GEN_RETURN / GEN_STOP to leave everything. */
static int gen_loop_body(gen_state *st, int blk)
{
    int r = gen_exec_block(st, blk);
    if (r == GEN_CONTINUE) return GEN_NEXT;
    return r;
}

static int gen_exec_stmt(gen_state *st, int s)
{
    gen_prog *g = st->g;
    const gen_node *n = &g->nodes[s];
    int line = n->line;
    switch (n->kind) {
    case GS_PAIR: {
        gen_val v0 = gen_eval_expr(st, n->e[0], line);
        gen_val v1 = gen_eval_expr(st, n->e[1], line);
        if (st->stopped) return GEN_STOP;
        st->si[gen_find_var(g, "t0")] = v0.i;
        st->si[gen_find_var(g, "t1")] = v1.i;
        return GEN_NEXT;
    }
    case GS_ASSIGN: {
        gen_val v = gen_eval_expr(st, n->e[0], line);
        if (st->stopped) return GEN_STOP;
        if (g->vars[n->var].type == GT_I) st->si[n->var] = v.i;
        else st->sf[n->var] = v.f;
        return GEN_NEXT;
    }
    case GS_TENSOR: {
        int ints = g->vars[n->var].type == GT_VI;
        int32_t *di = st->ti[n->var], *ti = st->ti[n->tv];
        float *df = st->tf[n->var], *tf = st->tf[n->tv];
        gen_val sc = {0, 0.0f, 0, 0};
        if (n->form == GF_MUL_S && s % 4 == 3) {
            /* written as a list comprehension over the rows: e0 is made for each row, after the
             * loop counts the row (gen_put_stmt) */
            int32_t ri[GEN_LEN];
            float rf[GEN_LEN];
            for (int k = 0; k < GEN_LEN; k++) {
                if (!gen_tick(st, line)) return GEN_STOP;
                sc = gen_eval_expr(st, n->e[0], line);
                if (st->stopped) return GEN_STOP;
                if (ints) ri[k] = gen_wrap((int64_t)di[k] * sc.i);
                else rf[k] = df[k] * sc.f;
            }
            for (int k = 0; k < GEN_LEN; k++) {
                if (ints) di[k] = ri[k];
                else df[k] = rf[k];
            }
            return GEN_NEXT;
        }
        if (n->form == GF_MUL_S || n->form == GF_SUB_S) {
            sc = gen_eval_expr(st, n->e[0], line);
            if (st->stopped) return GEN_STOP;
        }
        if (n->form == GF_DIV_T) {
            for (int k = 0; k < GEN_LEN; k++)
                if (ti[k] == 0) {
                    gen_stop(st, CFX_STOP_DIVIDE, line);
                    return GEN_STOP;
                }
        }
        for (int k = 0; k < GEN_LEN; k++) {
            switch (n->form) {
            case GF_ADD_T: if (ints) di[k] = gen_wrap((int64_t)di[k] + ti[k]); else df[k] = df[k] + tf[k]; break;
            case GF_MUL_S: if (ints) di[k] = gen_wrap((int64_t)di[k] * sc.i); else df[k] = df[k] * sc.f; break;
            case GF_SUB_S: if (ints) di[k] = gen_wrap((int64_t)ti[k] - sc.i); else df[k] = tf[k] - sc.f; break;
            case GF_DIV_T: di[k] = gen_floordiv(di[k], ti[k]); break;
            case GF_WHERE: if (ints) di[k] = di[k] > ti[k] ? di[k] : ti[k]; else df[k] = df[k] > tf[k] ? df[k] : tf[k]; break;
            default: if (ints) di[k] = ti[k]; else df[k] = tf[k]; break;
            }
        }
        return GEN_NEXT;
    }
    case GS_SETROW: {
        /* as Python does: the value first, then the index, then the range check */
        gen_val v = gen_eval_expr(st, n->e[1], line);
        if (st->stopped) return GEN_STOP;
        int64_t i = gen_eval_expr(st, n->e[0], line).i;
        if (st->stopped) return GEN_STOP;
        if (i < -GEN_LEN || i >= GEN_LEN) {
            gen_stop(st, CFX_STOP_INDEX, line);
            return GEN_STOP;
        }
        if (i < 0) i += GEN_LEN;
        if (g->vars[n->var].type == GT_VI) st->ti[n->var][i] = v.i;
        else st->tf[n->var][i] = v.f;
        return GEN_NEXT;
    }
    case GS_ASSERT: {
        gen_val v = gen_eval_expr(st, n->e[0], line);
        if (st->stopped) return GEN_STOP;
        if (!v.b) {
            gen_stop(st, CFX_STOP_ASSERT, line);
            return GEN_STOP;
        }
        return GEN_NEXT;
    }
    case GS_PRINT: {
        char text[96];
        if (n->e[0] >= 0) {
            gen_val v = gen_eval_expr(st, n->e[0], line);
            if (st->stopped) return GEN_STOP;
            snprintf(text, sizeof text, "p%lld: %d", (long long)n->ival, (int)v.i);
        } else {
            const int32_t *t = st->ti[n->tv];
            snprintf(text, sizeof text, "p%lld: [%d, %d, %d, %d]", (long long)n->ival, (int)t[0], (int)t[1],
                     (int)t[2], (int)t[3]);
        }
        gen_print_line(st->out, text);
        return GEN_NEXT;
    }
    case GS_BREAK: return GEN_BREAK;
    case GS_CONTINUE: return GEN_CONTINUE;
    case GS_RETURN: return GEN_RETURN;
    case GS_IF:
        for (int i = 0; i < n->nkids; i++) {
            gen_val c = gen_eval_expr(st, n->conds[i], n->lines[i]);
            if (st->stopped) return GEN_STOP;
            if (c.b) return gen_exec_block(st, n->kids[i]);
        }
        return n->has_else ? gen_exec_block(st, n->kids[n->nkids]) : GEN_NEXT;
    case GS_WHILE:
        st->si[n->var] = 0;
        for (;;) {
            int r;
            if (!(st->si[n->var] < n->ival)) break;
            if (n->e[0] >= 0) {
                gen_val c = gen_eval_expr(st, n->e[0], line);
                if (st->stopped) return GEN_STOP;
                if (!c.b) break;
            }
            if (!gen_tick(st, line)) return GEN_STOP;
            st->si[n->var] = gen_wrap((int64_t)st->si[n->var] + 1);
            r = gen_loop_body(st, n->kids[0]);
            if (r == GEN_BREAK) break;
            if (r != GEN_NEXT) return r;
        }
        return GEN_NEXT;
    case GS_FOR: case GS_FOR64: { /* Python's range: the counter never wraps */
        int wide = n->kind == GS_FOR64;
        gen_val a = gen_eval_expr(st, n->e[0], line), b = gen_eval_expr(st, n->e[1], line);
        gen_val c = n->e[2] >= 0 ? gen_eval_expr(st, n->e[2], line) : (gen_val){1, 0.0f, 0, 1};
        int64_t lo = wide ? a.l : a.i, hi = wide ? b.l : b.i, step = wide ? c.l : c.i;
        if (st->stopped) return GEN_STOP;
        if (step == 0) {
            gen_stop(st, CFX_STOP_VALUE, line);
            return GEN_STOP;
        }
        for (int64_t i = lo;;) {
            int r;
            if (step > 0 ? !(i < hi) : !(i > hi)) break;
            if (!gen_tick(st, line)) return GEN_STOP;
            if (wide) st->sl[n->var] = i;
            else st->si[n->var] = (int32_t)i;
            st->assigned[n->var] = 1;
            r = gen_loop_body(st, n->kids[0]);
            if (r == GEN_BREAK) break;
            if (r != GEN_NEXT) return r;
            if (step > 0 ? i > INT64_MAX - step : i < INT64_MIN - step) break; /* past the limit: past hi */
            i += step;
        }
        return GEN_NEXT;
    }
    case GS_FOREACH:
        for (int k = 0;; k++) {
            int r;
            if (k >= GEN_LEN) break;
            if (!gen_tick(st, line)) return GEN_STOP;
            if (g->vars[n->var].type == GT_I) st->si[n->var] = st->ti[n->tv][k];
            else st->sf[n->var] = st->tf[n->tv][k];
            st->assigned[n->var] = 1;
            r = gen_loop_body(st, n->kids[0]);
            if (r == GEN_BREAK) break;
            if (r != GEN_NEXT) return r;
        }
        return GEN_NEXT;
    case GS_SWITCH: {
        gen_val v = gen_eval_expr(st, n->e[0], line);
        if (st->stopped) return GEN_STOP;
        for (int i = 0; i < n->nkids; i++)
            if (v.i == n->vals[i]) return gen_exec_block(st, n->kids[i]);
        return n->has_else ? gen_exec_block(st, n->kids[n->nkids]) : GEN_NEXT;
    }
    case GS_TASSIGN: { /* the value, then (op=) combined with the variable, broadcast */
        gen_tv val, cur, res;
        if (gen_eval_t(st, n->e[0], line, &val) < 0) return GEN_STOP;
        if (n->form) {
            gen_load(st, n->var, &cur);
            if (gen_tv_op(st, n->form, &cur, &val, &res) < 0) return GEN_STOP;
            val = res;
        }
        gen_store(st, n->var, &val);
        return st->stopped ? GEN_STOP : GEN_NEXT;
    }
    case GS_TSET: { /* =: the value, then the subscript; op=: the subscript, the part, the value */
        const gen_node *bx = &g->nodes[n->e[1]];
        gen_tv val, part, res;
        int start[2], len[2], kept[2];
        if (!n->form && gen_eval_t(st, n->e[0], line, &val) < 0) return GEN_STOP;
        if (gen_box_at(st, bx, line, start, len, kept) < 0) return GEN_STOP;
        gen_box_io(st, bx, start, len, kept, &part, 0);
        if (n->form) {
            if (gen_eval_t(st, n->e[0], line, &val) < 0) return GEN_STOP;
            if (gen_tv_op(st, n->form, &part, &val, &res) < 0) return GEN_STOP;
            val = res;
        }
        if (!gen_same_shape(&val, &part)) gen_bug(st, "a write of another shape than its part");
        else gen_box_io(st, bx, start, len, kept, &val, 1);
        return st->stopped ? GEN_STOP : GEN_NEXT;
    }
    case GS_APPEND: { /* the value, then the room */
        gen_tv val;
        int *cnt = &st->llen[n->var];
        if (gen_eval_t(st, n->e[0], line, &val) < 0) return GEN_STOP;
        if (*cnt >= g->vars[n->var].cap) {
            gen_stop(st, CFX_STOP_INDEX, line);
            return GEN_STOP;
        }
        if (g->vars[n->var].item == GT_VF) memcpy(st->lv[*cnt], val.x, sizeof st->lv[0]);
        else st->li[n->var][*cnt] = val.i[0];
        (*cnt)++;
        return GEN_NEXT;
    }
    case GS_POP: {
        int *cnt = &st->llen[n->var];
        if (*cnt == 0) {
            gen_stop(st, CFX_STOP_INDEX, line);
            return GEN_STOP;
        }
        (*cnt)--;
        if (n->tv >= 0 && g->vars[n->var].item == GT_VF) memcpy(st->tf[n->tv], st->lv[*cnt], sizeof st->lv[0]);
        else if (n->tv >= 0) st->si[n->tv] = st->li[n->var][*cnt];
        return GEN_NEXT;
    }
    case GS_LSET: { /* =: the value, then the index; op=: the index, the item, the value */
        gen_tv val, item, res;
        int vec = g->vars[n->var].item == GT_VF, cnt = st->llen[n->var];
        if (!n->form && gen_eval_t(st, n->e[1], line, &val) < 0) return GEN_STOP;
        int64_t i = gen_eval_expr(st, n->e[0], line).i;
        if (st->stopped) return GEN_STOP;
        if (i < -cnt || i >= cnt) {
            gen_stop(st, CFX_STOP_INDEX, line);
            return GEN_STOP;
        }
        if (i < 0) i += cnt;
        memset(&item, 0, sizeof item);
        gen_set_shape(&item, vec, vec, GEN_LEN, 0);
        if (vec) memcpy(item.x, st->lv[i], sizeof st->lv[0]);
        else item.i[0] = st->li[n->var][i];
        if (n->form) {
            if (gen_eval_t(st, n->e[1], line, &val) < 0) return GEN_STOP;
            if (gen_tv_op(st, n->form, &item, &val, &res) < 0) return GEN_STOP;
            val = res;
        }
        if (!gen_same_shape(&val, &item)) gen_bug(st, "an item of another shape");
        else if (vec) memcpy(st->lv[i], val.x, sizeof st->lv[0]);
        else st->li[n->var][i] = val.i[0];
        return st->stopped ? GEN_STOP : GEN_NEXT;
    }
    case GS_LASSIGN: { /* every item first, then the list */
        int32_t items[GEN_LEN];
        for (int i = 0; i < n->ival; i++) {
            items[i] = gen_eval_expr(st, n->vals[i], line).i;
            if (st->stopped) return GEN_STOP;
        }
        memcpy(st->li[n->var], items, sizeof(int32_t) * (size_t)n->ival);
        st->llen[n->var] = (int)n->ival;
        return GEN_NEXT;
    }
    case GS_ASSIGN64: {
        int64_t v = gen_eval_expr(st, n->e[0], line).l, r = st->sl[n->var];
        if (st->stopped) return GEN_STOP;
        switch (n->form) {
        case GE_ADD: v = gen_wrap64((uint64_t)r + (uint64_t)v); break;
        case GE_SUB: v = gen_wrap64((uint64_t)r - (uint64_t)v); break;
        case GE_MUL: v = gen_wrap64((uint64_t)r * (uint64_t)v); break;
        default: break;
        }
        st->sl[n->var] = v;
        return GEN_NEXT;
    }
    case GS_OPTSET: {
        float v = gen_eval_expr(st, n->e[0], line).f;
        if (st->stopped) return GEN_STOP;
        st->o0 = v;
        st->o0_present = 1;
        return GEN_NEXT;
    }
    case GS_FORLIST: case GS_FORLIT: { /* what the list held, or the items, when the loop starts */
        gen_tv items[GEN_LEN];
        int count, vec, idx = n->form ? (n->kind == GS_FORLIT ? n->tv : n->vals[0]) : -1;
        if (n->kind == GS_FORLIST) {
            const gen_var *l = &g->vars[n->tv];
            count = st->llen[n->tv] < GEN_LEN ? st->llen[n->tv] : GEN_LEN; /* at most its room */
            vec = l->item == GT_VF;
            for (int k = 0; k < count; k++) {
                memset(&items[k], 0, sizeof items[k]);
                if (vec) memcpy(items[k].x, st->lv[k], sizeof st->lv[0]);
                else items[k].i[0] = st->li[n->tv][k];
            }
        } else {
            count = n->ival < GEN_LEN ? (int)n->ival : GEN_LEN;
            vec = g->vars[n->var].type == GT_VF;
            for (int k = 0; k < count; k++)
                if (gen_eval_t(st, n->vals[k], line, &items[k]) < 0) return GEN_STOP;
        }
        for (int k = 0; k < count; k++) {
            int r;
            if (!gen_tick(st, line)) return GEN_STOP;
            if (idx >= 0) st->si[idx] = k;
            if (vec) memcpy(st->tf[n->var], items[k].x, sizeof st->tf[0]);
            else if (g->vars[n->var].type == GT_F) st->sf[n->var] = items[k].x[0];
            else st->si[n->var] = items[k].i[0];
            st->assigned[n->var] = 1;
            r = gen_loop_body(st, n->kids[0]);
            if (r == GEN_BREAK) break;
            if (r != GEN_NEXT) return r;
        }
        return GEN_NEXT;
    }
    default:
        return GEN_NEXT;
    }
}

static int gen_exec_block(gen_state *st, int blk)
{
    const gen_node *b = &st->g->nodes[blk];
    for (int i = 0; i < b->nkids; i++) {
        int r = gen_exec_stmt(st, b->kids[i]);
        if (r != GEN_NEXT) return r;
    }
    return GEN_NEXT;
}

/* Runs program g (after gen_text, which fixes the lines) on `in` with budget max_iters
 * (0: none) and fills *out (free its prints with gen_outcome_free). The state is large: it
 * lives on the heap. */
static inline int gen_eval(gen_prog *g, const gen_inputs *in, int64_t max_iters, gen_outcome *out)
{
    gen_state *st = (gen_state *)calloc(1, sizeof *st);
    if (!st) return -1;
    memset(out, 0, sizeof *out);
    out->status = CFX_OK;
    st->g = g;
    st->out = out;
    st->max_iters = max_iters;
    int a = gen_find_var(g, "a"), b = gen_find_var(g, "b"), n = gen_find_var(g, "n");
    int x = gen_find_var(g, "x"), v = gen_find_var(g, "v"), w = gen_find_var(g, "w");
    int r0 = gen_find_var(g, "r0"), r1 = gen_find_var(g, "r1"), r2 = gen_find_var(g, "r2");
    int r3 = gen_find_var(g, "r3");
    st->si[a] = in->a;
    st->si[b] = in->b;
    st->si[n] = in->n;
    st->sf[x] = in->x;
    memcpy(st->ti[v], in->v, sizeof in->v);
    memcpy(st->tf[w], in->w, sizeof in->w);
    /* the prologue gen_text writes */
    st->si[r0] = in->a;
    st->sf[r1] = in->x;
    memcpy(st->ti[r2], in->v, sizeof in->v);
    memcpy(st->tf[r3], in->w, sizeof in->w);
    st->si[gen_find_var(g, "t0")] = in->b;
    st->si[gen_find_var(g, "t1")] = in->n;
    st->sf[gen_find_var(g, "f0")] = 0.5f;
    st->sl[gen_find_var(g, "r4")] = in->b;
    st->o0 = in->x; /* o0 = None; if n > 3 { o0 = x } (second-stream programs only use it) */
    st->o0_present = in->n > 3;
    for (int k = 0; k < GEN_ROWS * GEN_LEN; k++) st->m[k] = in->x;
    {
        int k0 = gen_find_var(g, "k0"), L0 = gen_find_var(g, "L0"), L1 = gen_find_var(g, "L1");
        st->li[k0][0] = st->li[L0][0] = in->a;
        st->li[k0][1] = st->li[L0][2] = in->b;
        st->li[k0][2] = st->li[L0][1] = in->n;
        st->llen[k0] = st->llen[L0] = 3;
        for (int k = 0; k < GEN_LEN; k++) {
            st->lv[0][k] = in->w[k];
            st->lv[1][k] = in->w[k] * 2.0f;
        }
        st->llen[L1] = 2;
        st->si[gen_find_var(g, "s0")] = in->n % 3;
    }
    gen_exec_block(st, g->body);
    if (out->status == CFX_OK) {
        out->res.r0 = st->si[r0];
        out->res.r1 = st->sf[r1];
        memcpy(out->res.r2, st->ti[r2], sizeof out->res.r2);
        memcpy(out->res.r3, st->tf[r3], sizeof out->res.r3);
        out->res.r4 = st->sl[gen_find_var(g, "r4")];
        memcpy(out->res.r5, st->m, sizeof out->res.r5);
    }
    int bug = st->bug;
    free(st);
    return bug ? -1 : 0;
}

/* A program's text with a statement of `stmts` (one of n, picked at random) after every line
 * that opens a block (but a switch's), with probability 1/2: the generator's programs already
 * nest loops, ifs, switches, break, continue and early return, so the statements (kernel calls,
 * in test_sched and test_gen) land inside all of them. malloc'd; the caller frees. */
static inline char *gen_inject(const char *text, uint64_t seed, const char *const *stmts, int n)
{
    size_t len = strlen(text), cap = 2 * len + 4096, used = 0;
    char *out = (char *)malloc(cap);
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
    if (!out)
        return NULL;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t ll = end ? (size_t)(end - line) + 1 : strlen(line);
        const char *first = line;
        while (*first == ' ')
            first++;
        if (used + ll + 64 > cap) {
            char *grown = (char *)realloc(out, 2 * cap + ll + 64);
            if (!grown) {
                free(out);
                return NULL;
            }
            out = grown;
            cap = 2 * cap + ll + 64;
        }
        memcpy(out + used, line, ll);
        used += ll;
        size_t last = ll;
        while (last > 0 && (line[last - 1] == '\n' || line[last - 1] == ' '))
            last--;
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        if (last > 0 && line[last - 1] == '{' && strncmp(first, "switch", 6) != 0 && (s >> 33) % 2 == 0)
            used += (size_t)snprintf(out + used, cap - used, "  %s\n", stmts[(s >> 40) % (uint64_t)n]);
        line += ll;
    }
    out[used] = '\0';
    return out;
}

#endif
