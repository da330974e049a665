/* ast.h: the syntax tree, the contract between the parser and the checker.
 *
 * The parser builds it (parse.c), the checker annotates it in place (check.c: the fields
 * under "checker"), the lowering reads it (lower.c). All nodes of a module live in one
 * arena and are freed together with ast_module_free().
 */
#ifndef CFX_AST_H
#define CFX_AST_H

#include <stdint.h>

#include "host/cfx.h"
#include "kernels/ops.h"

enum ast_kind {
    /* expressions */
    AST_INT,      /* ival; `12`, `0x1f` */
    AST_REAL,     /* rval; `1.5`, `1e-6`, `.5` */
    AST_BOOL,     /* ival 0 or 1; `true`, `false` */
    AST_STRING,   /* str (escapes resolved, NUL-terminated; only as an assert/print argument) */
    AST_NAME,     /* name */
    AST_UNARY,    /* op (OP_NEG, OP_NOT), a */
    AST_BINARY,   /* op (OP_ADD ... OP_NE, OP_AND, OP_OR, OP_MATMUL), a, b */
    AST_CALL,     /* name, list = arguments (which may include AST_TYPE nodes); flag
                     AST_F_METHOD: `r.name(args)`, with the receiver r as list[0] */
    AST_INDEX,    /* a[b]: a is the tensor expression, b the index; or, for `x[i, j]` and any
                     subscript with a slice (`x[1:3]`, `x[:, j]`), b = NULL and list = the
                     items, each an index expression or an AST_SLICE */
    AST_SLICE,    /* `start:stop` in a subscript: a = start, b = stop (NULL: the dimension's end) */
    AST_TYPE,     /* ty; a type written as an argument: zeros(f32[3]), cast(x, f32) */
    AST_TUPLE,    /* list = values: `a, b` as the value of an assignment or a return, `(a, b)`,
                     `(a,)`; a tuple that is not a shape is taken apart before checking
                     (desugar.c): its variables become one per item */
    AST_LIST,     /* list = items; `[a, b]`, `[]`: a list's value, or reshape's shape */
    AST_ATTR,     /* a.name: `x.shape` */
    AST_COND,     /* `b if a else c`: a = condition, b = the value when true, c = when false */
    AST_KWARG,    /* `name=a`: an argument given by name (in a call's list only) */
    AST_NONE,     /* `None` */
    AST_IS,       /* `a is b`, `a is not b` (flag AST_F_NOT): one side is None */
    AST_LAMBDA,   /* `lambda v, w: E`: list = the parameters (AST_NAME), a = E; only as the value
                     of an assignment `f = lambda ...`, which desugar.c makes a macro of f */
    AST_COMP,     /* `[E for V in ITER if C ...]`: a = E, list = the clauses in order, each a loop
                     head (AST_FOR_RANGE or AST_FOR_EACH, d = NULL) or a filter (AST_ARM, a = C);
                     replaced before checking (desugar.c) by a list the loops fill */
    /* statements */
    AST_ASSIGN,   /* list = targets (AST_NAME or AST_INDEX), a = value;
                     several targets only with a call value: `a, b = f(x)`;
                     flag AST_F_AUG: `t op= E`, with op and a = BINARY(op, a read of t, E) */
    AST_IF,       /* list = arms, each an AST_ARM; the last arm may have a == NULL (else) */
    AST_ARM,      /* a = condition (NULL for else), b = block */
    AST_WHILE,    /* a = condition, b = block */
    AST_FOR_RANGE,/* name = loop variable, a = start, b = stop, c = step (NULL: 1), d = block */
    AST_FOR_EACH, /* name = loop variable, a = the tensor iterated, d = block; with several
                     loop variables (`for i, x in enumerate(xs)`) list = all of them, as
                     AST_NAME nodes, and name = the first */
    AST_SWITCH,   /* a = the i32 expression, list = AST_CASE nodes in source order */
    AST_CASE,     /* ival = case value, b = block; flag AST_F_DEFAULT for `default` */
    AST_BREAK,
    AST_CONTINUE,
    AST_RETURN,   /* a = the value (an expression or an AST_TUPLE), or NULL for a bare return;
                     the checker puts in b the assignment of the value to the results */
    AST_EXPR,     /* a = an expression used as a statement (assert(...), print(...), a call) */
    AST_BLOCK,    /* list = statements */
    AST_DEF,      /* a graph defined inside a graph's body: name = its name there, a = an AST_NAME of
                     the module graph it is (`outer.inner`, appended after its enclosing graph);
                     desugar.c resolves the calls and removes the statement */
    AST_ERROR,    /* a statement that did not parse (reported): list = AST_NAME nodes of the names
                     it seems to assign, which the checker then knows nothing of, quietly */
};

#define AST_F_DEFAULT 1u /* AST_CASE: the default case */
#define AST_F_PAREN 2u   /* expression was written in parentheses */
#define AST_F_AUG 4u     /* AST_ASSIGN: augmented, `x += E`; and the BINARY that is its value */
#define AST_F_METHOD 8u  /* AST_CALL: a method call, `xs.append(v)` */
#define AST_F_NOT 16u    /* AST_IS: `is not` */
#define AST_F_DIMS 32u   /* AST_TYPE: its dimensions are expressions, in list (f32[x.shape[0], n]);
                            the checker writes the type they make into ty */
#define AST_F_COMP 64u   /* the append of a list comprehension (AST_CALL) and the empty list that
                            starts it (AST_LIST), made by desugar.c */

/* The name an expression in error becomes (desugar.c): the checker passes over it quietly. */
#define AST_ERROR_NAME "(error)"

/* Compile memory is about one node and one check_note per name, literal, operator, call
 * and statement, so a node is kept small: fields that no kind uses together share storage,
 * and a written type (AST_TYPE) is kept in `ty`, which the checker never sets for it. */
typedef struct ast_node ast_node;
struct ast_node {
    uint8_t kind;   /* enum ast_kind */
    uint8_t op;     /* enum op_kind, for AST_UNARY, AST_BINARY and an augmented AST_ASSIGN */
    uint16_t flags; /* AST_F_* */
    int line, col;  /* of the node's first token (for a binary node: of its operator) */
    int nlist;
    union {
        const char *name; /* AST_NAME, AST_CALL, AST_FOR_*: arena string */
        const char *str;  /* AST_STRING */
    };
    union {
        int64_t ival;     /* AST_INT (always >= 0: `-5` is AST_UNARY NEG of 5), AST_BOOL, AST_CASE */
        double rval;      /* AST_REAL */
    };
    ast_node *a, *b, *c, *d;
    ast_node **list;

    /* ---- checker: filled by check.c, read by lower.c ---- */
    cfx_type ty;      /* type of an expression; for AST_TYPE, the type written */
    void *note;       /* the checker's own annotation; lower.c and check.c agree on it */
};

typedef struct ast_param {
    const char *name;
    cfx_type type; /* a capture's: rank AST_UNTYPED until the checker learns it */
    int line, col;
    ast_node *def; /* a parameter's default value (a literal), or NULL */
    const char *tuple_of; /* an item of a tuple parameter `p: (T0, T1)`, which is declared as one
                             parameter per item, `p[0]: T0`, `p[1]: T1`: "p" (NULL otherwise) */
    int tuple_index;
    int capture;   /* a variable of an enclosing graph that a graph defined inside it reads: a
                      parameter desugar.c adds, which each call passes by name */
} ast_param;

/* The rank of a capture parameter's type before the checker has seen it. */
#define AST_UNTYPED (-3)

typedef struct ast_graph {
    const char *name; /* `outer.inner` for a graph defined inside graph outer */
    int line, col;
    ast_param *params;
    int nparams;
    ast_param *results;
    int nresults;
    ast_node *body; /* AST_BLOCK */
    int enclosing;  /* a graph defined inside another: 1 + the other's index; 0 for a file's graph */
} ast_graph;

/* A constant of the module: `const NAME: TYPE = VALUE` at the top level of a file (parse.c).
 * Every graph of the file reads NAME as a value of TYPE that is never assigned (check.c); a
 * graph that reads it holds it in one const slot (lower.c). Its value is a literal, which the
 * parser writes into data, a .npy file (path, read by compile.c), or, with neither in the text,
 * an entry of the compile call's table (cfx_compile_string_constants, compile.c). */
typedef struct ast_const {
    const char *name;
    cfx_type type;
    int line, col;     /* of its name */
    const char *path;  /* `= "PATH.npy"`: the path as written, or NULL */
    int vline, vcol;   /* of its value (the path, the literal) */
    void *data;        /* cfx_type_count(&type) elements of its dtype, row-major (bool: bytes 0 or
                          1), in the arena; NULL while it has no value */
    int fill;          /* the literal was one value for every element: the parser keeps that one
                          in data, compile.c makes the rest (so that parsing allocates no more
                          than the text holds) */
    int bad;           /* its declaration had an error (reported): its reads are quiet */
} ast_const;

typedef struct ast_arena ast_arena;

typedef struct ast_module {
    ast_graph *graphs;
    int ngraphs;
    ast_const *consts; /* in source order */
    int nconsts;
    int *const_order;  /* indices of consts sorted by name, for ast_const_find (check.c sorts them) */
    ast_arena *arena;
    const char **broken; /* the graphs whose header did not parse (reported): a call of one is no
                            error of its own */
    int nbroken;
} ast_module;

/* The blocks directly inside statement s: each arm's block of an AST_IF, each case's of an
 * AST_SWITCH, the body of AST_WHILE, AST_FOR_RANGE and AST_FOR_EACH (none for any other
 * statement, nor for an AST_BLOCK itself). ast_child_blocks gives their number and
 * ast_child_block(s, k) block k of them (which may be NULL in a tree with errors), for the
 * walk over a statement's blocks:
 *   for (int k = 0, n = ast_child_blocks(s); k < n; k++) ... ast_child_block(s, k) */
int ast_child_blocks(const ast_node *s);
ast_node *ast_child_block(const ast_node *s, int k);

/* Arena allocation: zeroed memory that lives until ast_module_free. NULL on out of memory. */
ast_arena *ast_arena_new(void);
void *ast_alloc(ast_arena *a, size_t bytes);
char *ast_strdup(ast_arena *a, const char *s, size_t n);
void ast_arena_free(ast_arena *a);
void ast_module_free(ast_module *m);

/* ---- queries of the tree ------------------------------------------------------------------
 * Questions about a parsed (and desugared) tree that need nothing of the checker: the checker
 * and the lowering both ask them. */

/* Calls fn(name, arg) for every variable statement n assigns (targets and loop variables)
 * until fn returns nonzero, and returns that value (0 when none did). */
int ast_each_assigned(const ast_node *n, int (*fn)(const char *name, void *arg), void *arg);
/* 1 if statement n (a block, a loop, ...) assigns `name` anywhere inside, as a target or a
 * loop variable. */
int ast_assigns(const ast_node *n, const char *name);
/* 1 if tree n may change list `name`: assigns it or one of its items, or calls a method on it. */
int ast_mutates_list(const ast_node *n, const char *name);
/* The constant of the module called `name` (an index of m->consts), or -1; m->const_order was
 * made by the checker (check_constants), or is NULL (no constant is found). */
int ast_const_find(const ast_module *m, const char *name);
/* 1 if the two types have the same dtype and shape (list types: the same list). */
int ast_same_type(const cfx_type *a, const cfx_type *b);

#endif
