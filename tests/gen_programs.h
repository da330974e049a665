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
 * taken from cfx: i32 wraps, `/` and `%` truncate, INT_MIN / -1 is INT_MIN, `and`/`or`
 * short-circuit, sum(f32) accumulates in double, a negative index counts from the end, and
 * the budget counts iterations, all loops together: one per body entered, none for the test
 * that ends a loop; with a budget of N, a loop about to enter its body for the (N+1)-th time
 * in the run stops it with limit at the loop's line (the language's rule, docs/language.md).
 *
 * Header-only (static functions) so that a cpu test and a gpu test can both include it.
 * The graph's signature is fixed (see GEN_SIGNATURE), so callers bind inputs by name.
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
    "r2: i32[4], r3: f32[4])"
#define GEN_LEN 4          /* rows of every tensor */
#define GEN_MAX_NODES 2048 /* expression and statement nodes of one program */
#define GEN_MAX_VARS 96
#define GEN_MAX_KIDS 8     /* statements in a block, arms of an if, cases of a switch */
#define GEN_MAX_DEPTH 3    /* nesting of compound statements */

/* ---- the tree ---------------------------------------------------------------------------- */

enum gen_type { GT_I, GT_F, GT_B, GT_VI, GT_VF }; /* i32, f32, bool, i32[4], f32[4] */

enum gen_expr {
    GE_INT, GE_REAL, GE_VAR, GE_ADD, GE_SUB, GE_MUL, GE_DIV, GE_MOD, GE_MIN, GE_MAX,
    GE_LT, GE_LE, GE_GT, GE_GE, GE_EQ, GE_NE, GE_AND, GE_OR, GE_NOT, GE_NEG, GE_ABS,
    GE_SUM, GE_ARGMAX, GE_INDEX, GE_CAST_I, GE_CAST_F, GE_LEN,
    GE_COND, /* e[1] if e[0] else e[2]: only the chosen one is evaluated */
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
};

/* Tensor statement forms (GS_TENSOR): dst = ... */
enum gen_form {
    GF_ADD_T,   /* dst + tv */
    GF_MUL_S,   /* dst * e0 */
    GF_SUB_S,   /* tv - e0 */
    GF_DIV_T,   /* dst / tv (i32 only: a divide guard over a tensor) */
    GF_WHERE,   /* where(dst > tv, dst, tv) */
    GF_COPY,    /* copy(tv) */
};

typedef struct gen_node {
    uint8_t kind;   /* gen_expr or gen_stmt */
    uint8_t type;   /* gen_type of an expression */
    uint8_t form;   /* GS_TENSOR */
    uint8_t has_else;
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
} gen_var;

typedef struct gen_prog {
    uint64_t seed;
    uint64_t rng;
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

static int gen_rand(gen_prog *g, int n) { return (int)(gen_next(&g->rng) % (uint64_t)n); }

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
               name[0] == 'i' || name[0] == 'e' || name[0] == 'c';
    }
    case GE_SUM: case GE_ARGMAX: case GE_INDEX:
        return 1;
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

static int gen_expr_of(gen_prog *g, int type, int depth)
{
    int leaf = depth >= 3 || gen_rand(g, 3) == 0;
    int k;
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

static int gen_block(gen_prog *g, int depth, int in_loop)
{
    int k = gen_node_new(g, GS_BLOCK);
    int n = 1 + gen_rand(g, depth == 0 ? GEN_MAX_KIDS : 3);
    for (int i = 0; i < n; i++) {
        int s = gen_stmt(g, depth, in_loop);
        g->nodes[k].kids[g->nodes[k].nkids++] = s;
    }
    return k;
}

/* Builds program `seed` into *g (a large struct: allocate it). */
static inline void gen_make(gen_prog *g, uint64_t seed)
{
    static const struct { const char *name; int type; } fixed[] = {
        {"a", GT_I}, {"b", GT_I}, {"n", GT_I}, {"x", GT_F}, {"v", GT_VI}, {"w", GT_VF},
        {"r0", GT_I}, {"r1", GT_F}, {"r2", GT_VI}, {"r3", GT_VF}, {"t0", GT_I}, {"t1", GT_I}, {"f0", GT_F},
    };
    memset(g, 0, sizeof *g);
    g->seed = seed;
    g->rng = seed * 0x2545f4914f6cdd1dull + 1;
    gen_int_lit(g, 0); /* node 0: the stand-in gen_node_new returns when full */
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        int v = gen_var_new(g, fixed[i].name, fixed[i].type);
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

static void gen_put_expr(gen_prog *g, gen_buf *b, int e)
{
    static const char *const infix[] = {
        [GE_ADD] = "+", [GE_SUB] = "-", [GE_MUL] = "*", [GE_DIV] = "/", [GE_MOD] = "%",
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
    case GE_MIN: case GE_MAX:
        gen_put(b, "%s(", n->kind == GE_MIN ? "min" : "max");
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
    case GE_CAST_I: gen_put(b, "cast("); gen_put_expr(g, b, n->e[0]); gen_put(b, ", i32)"); break;
    case GE_CAST_F: gen_put(b, "cast("); gen_put_expr(g, b, n->e[0]); gen_put(b, ", f32)"); break;
    default:
        gen_put(b, "(");
        gen_put_expr(g, b, n->e[0]);
        gen_put(b, " %s ", infix[n->kind]);
        gen_put_expr(g, b, n->e[1]);
        gen_put(b, ")");
        break;
    }
}

static void gen_put_stmt(gen_prog *g, gen_buf *b, int s, int indent);

static void gen_put_block(gen_prog *g, gen_buf *b, int blk, int indent)
{
    for (int i = 0; i < g->nodes[blk].nkids; i++) gen_put_stmt(g, b, g->nodes[blk].kids[i], indent);
}

static void gen_put_stmt(gen_prog *g, gen_buf *b, int s, int indent)
{
    gen_node *n = &g->nodes[s];
    const char *dst = g->vars[n->var].name;
    gen_put(b, "%*s", indent * 2, "");
    n->line = b->line;
    switch (n->kind) {
    case GS_PAIR:
        gen_put(b, "t0, t1 = ");
        gen_put_expr(g, b, n->e[0]);
        gen_put(b, ", ");
        gen_put_expr(g, b, n->e[1]);
        gen_put(b, "\n");
        break;
    case GS_ASSIGN: {
        /* `x = (x op e)` is written `x op= e` in every other such statement: the same program */
        const gen_node *v = &g->nodes[n->e[0]];
        int aug = v->kind >= GE_ADD && v->kind <= GE_MOD && g->nodes[v->e[0]].kind == GE_VAR &&
                  g->nodes[v->e[0]].var == n->var && s % 2 == 0;
        if (aug) {
            static const char *const ops[] = {"+=", "-=", "*=", "/=", "%="};
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
            gen_put(b, s % 2 ? "%s = %s * " : "%s *= %.0s", dst, dst);
            gen_put_expr(g, b, n->e[0]);
            gen_put(b, "\n");
            break;
        case GF_SUB_S: gen_put(b, "%s = %s - ", dst, tv); gen_put_expr(g, b, n->e[0]); gen_put(b, "\n"); break;
        case GF_DIV_T: gen_put(b, "%s = %s / %s\n", dst, dst, tv); break;
        case GF_WHERE: gen_put(b, "%s = where(%s > %s, %s, %s)\n", dst, dst, tv, dst, tv); break;
        default: gen_put(b, "%s = copy(%s)\n", dst, tv); break;
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
        gen_put(b, "assert(");
        gen_put_expr(g, b, n->e[0]);
        gen_put(b, ", \"m%lld\")\n", (long long)n->ival);
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
            gen_put_expr(g, b, n->conds[i]);
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
    case GS_FOR:
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
    gen_put_block(g, &b, g->body, 1);
    gen_put(&b, "}\n");
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
} gen_val;

typedef struct gen_state {
    gen_prog *g;
    int32_t si[GEN_MAX_VARS];         /* i32 scalars */
    float sf[GEN_MAX_VARS];           /* f32 scalars */
    int32_t ti[GEN_MAX_VARS][GEN_LEN];/* i32[4] */
    float tf[GEN_MAX_VARS][GEN_LEN];  /* f32[4] */
    int64_t max_iters;
    gen_outcome *out;
    int stopped;                      /* a stop status is set */
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

static float gen_fmin(float a, float b) { return isnan(a) || isnan(b) ? NAN : a < b ? a : b; }
static float gen_fmax(float a, float b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }

/* Evaluates expression e at statement line `line`; after a stop the value is meaningless. */
static gen_val gen_eval_expr(gen_state *st, int e, int line)
{
    const gen_node *n = &st->g->nodes[e];
    gen_val r = {0, 0.0f, 0}, x, y;
    if (st->stopped) return r;
    switch (n->kind) {
    case GE_INT: r.i = (int32_t)n->ival; return r;
    case GE_REAL: r.f = n->fval; return r;
    case GE_VAR:
        if (n->type == GT_I) r.i = st->si[n->var];
        else r.f = st->sf[n->var];
        return r;
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
    {
        int ints = st->g->nodes[n->e[0]].type == GT_I;
        switch (n->kind) {
        case GE_ADD: if (ints) r.i = gen_wrap((int64_t)x.i + y.i); else r.f = x.f + y.f; break;
        case GE_SUB: if (ints) r.i = gen_wrap((int64_t)x.i - y.i); else r.f = x.f - y.f; break;
        case GE_MUL: if (ints) r.i = gen_wrap((int64_t)x.i * y.i); else r.f = x.f * y.f; break;
        case GE_DIV:
        case GE_MOD:
            if (y.i == 0) {
                gen_stop(st, CFX_STOP_DIVIDE, line);
                return r;
            }
            if (x.i == INT32_MIN && y.i == -1) r.i = n->kind == GE_DIV ? INT32_MIN : 0;
            else r.i = n->kind == GE_DIV ? x.i / y.i : x.i % y.i;
            break;
        case GE_MIN: if (ints) r.i = x.i < y.i ? x.i : y.i; else r.f = gen_fmin(x.f, y.f); break;
        case GE_MAX: if (ints) r.i = x.i > y.i ? x.i : y.i; else r.f = gen_fmax(x.f, y.f); break;
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
static int gen_find_var(const gen_prog *g, const char *name);

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
        gen_val sc = {0, 0.0f, 0};
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
            case GF_DIV_T: di[k] = di[k] == INT32_MIN && ti[k] == -1 ? INT32_MIN : di[k] / ti[k]; break;
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
    case GS_FOR: {
        int32_t lo = gen_eval_expr(st, n->e[0], line).i;
        int32_t hi = gen_eval_expr(st, n->e[1], line).i;
        int32_t step = n->e[2] >= 0 ? gen_eval_expr(st, n->e[2], line).i : 1;
        if (st->stopped) return GEN_STOP;
        if (step == 0) {
            gen_stop(st, CFX_STOP_VALUE, line);
            return GEN_STOP;
        }
        for (int64_t i = lo;;) {
            int r;
            if (step > 0 ? !(i < hi) : !(i > hi)) break;
            if (!gen_tick(st, line)) return GEN_STOP;
            st->si[n->var] = (int32_t)i;
            r = gen_loop_body(st, n->kids[0]);
            if (r == GEN_BREAK) break;
            if (r != GEN_NEXT) return r;
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

static int gen_find_var(const gen_prog *g, const char *name)
{
    for (int i = 0; i < g->nvars; i++)
        if (strcmp(g->vars[i].name, name) == 0) return i;
    return 0;
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
    gen_exec_block(st, g->body);
    if (out->status == CFX_OK) {
        out->res.r0 = st->si[r0];
        out->res.r1 = st->sf[r1];
        memcpy(out->res.r2, st->ti[r2], sizeof out->res.r2);
        memcpy(out->res.r3, st->tf[r3], sizeof out->res.r3);
    }
    free(st);
    return 0;
}

#endif
