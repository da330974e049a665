/* check_int.h: what the two halves of the checker share: its state (the environment of
 * variables, the checker itself), the small type helpers, and the functions one half calls in
 * the other. check.c has statements, joins, graphs and the module; check_expr.c expressions,
 * the type rules of the ops and calls; check_env.c, split from check.c, the environment and
 * the call graph. Not for the lowering: its interface is check.h. */
#ifndef CFX_CHECK_INT_H
#define CFX_CHECK_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ast.h"
#include "cfx.h"
#include "check.h"
#include "context.h"
#include "diag.h"

/* ---- the environment ---------------------------------------------------------------------- */
enum var_state {
    V_UNDEF,    /* not assigned on any path */
    V_PARTIAL,  /* assigned on some paths only */
    V_DEF,      /* assigned on every path, with type ty */
    V_CONFLICT, /* assigned on every path of a branch statement, with different types */
    V_LOOP,     /* assigned only inside the loop at `line` */
    V_ERROR,    /* an error was reported about it: stay quiet */
};

/* Kept small: every branch copies the state of every variable. Types are interned (an id
 * into checker.types, so equal types have equal ids) and a conflict's details live apart. */
typedef struct vstate {
    uint8_t st;     /* enum var_state */
    uint8_t known;  /* V_DEF scalar: value known at compile time */
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

typedef struct env {
    vstate *v; /* one per variable of the graph */
    int live;  /* 0 after break, continue or return: no path reaches this point */
} env;

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
    struct named *gsorted; /* graphs sorted by name, for check_graph_find */
    int *scc;            /* per graph: its strongly connected component in the call graph */
    int64_t *size;       /* per graph: syntax nodes once its calls are inlined (saturating) */
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

/* ---- check_env.c: the environment and the call graph -------------------------------------- */
/* The note of n, made on first use; a dummy (with C->oom set) when out of memory. */
check_note *check_note_of(checker *C, ast_node *n);
/* The index of variable `name` in the graph being checked, or -1. */
int check_var_find(checker *C, const char *name);
/* Adds variable `name` of the graph being checked (once); its index, or -1 when out of memory. */
int check_var_add(checker *C, const char *name);
/* Forgets the variables of the previous graph. */
void check_vars_reset(checker *C);
/* The id of type t, interned: equal types have equal ids; 0 (with oom set) when out of memory. */
int32_t check_type_id(checker *C, const cfx_type *t);
/* Keeps a conflict's details; its index into C->conflicts, or -1 when out of memory. */
int32_t check_add_conflict(checker *C, const conflict *c);
/* A live environment with every variable undefined; a copy; freeing. -1 when out of memory. */
int check_env_new(checker *C, env *e);
int check_env_copy(checker *C, env *dst, const env *src);
void check_env_free(env *e);
/* Fills C->scc (the call graph's strongly connected components) and C->size (each graph's
 * syntax nodes once its calls are inlined); -1 when out of memory. */
int check_call_sccs(checker *C);

/* ---- check_expr.c: expressions and calls ------------------------------------------------ */
/* Types expression n (its ty and note) in environment e. `want` is the dtype the context
 * asks a literal to take, or -1. 0, or -1 when n is in error. */
int check_expr(checker *C, env *e, ast_node *n, int want);
/* A call: a graph of the module (inlined), a built-in op, or a registered kernel. `nwant`
 * is the number of results the context takes (1 in an expression, -1 for a statement, which
 * discards them). */
int check_call(checker *C, env *e, ast_node *n, int nwant);
/* Reads and checks an index `i` of a tensor of type x (for x[i] and x[i] = E); names the
 * tensor `what` in messages. */
int check_index(checker *C, env *e, ast_node *at, const cfx_type *x, const char *what, ast_node *i);
/* How messages name an indexed tensor n: 'its name', or "the tensor". */
void check_tensor_name(const ast_node *n, char *buf, size_t len);
/* The graph called `name` (the first one, if the parser let a duplicate through), or -1. */
int check_graph_find(const checker *C, const char *name);
/* A type written in the source (a parameter, a result, zeros(TYPE)) must describe a tensor
 * the program can hold: 0, or -1 with the error reported at line:col. */
int check_written_type(checker *C, const cfx_type *t, int line, int col);

#endif
