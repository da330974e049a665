/* check.h: the checker. Resolves names, types every expression, folds what is known at
 * compile time, joins types across control flow and reports every independent error.
 *
 * The checker annotates the tree in place for the lowering (lower.c):
 * - every expression it typed gets `ty` and a check_note in `note`;
 * - every statement it reached gets a check_note in `note`. A statement without a note
 *   was not reached (it follows a break/continue/return in its block, or it lies in a
 *   branch a folded condition dropped) and the lowering skips it.
 * The dead branch of a folded condition is not checked at all, in the spirit of C++'s
 * `if constexpr` and of MindSpore, which drops it: an error inside it is not reported,
 * and its assignments take no part in joins.
 *
 * Decisions where the spec is silent:
 * - Branches may give a variable different types; that is an error only where the variable
 *   is read after the join ("cannot join", reported at the read). Likewise "not assigned on
 *   every path" and "assigned only inside the loop" are reported where the variable is read,
 *   and for a result at its declaration (end of the graph) or at the `return`.
 * - Code after break, continue or return in the same block, and after a `while true` left
 *   only by return, is unreachable: not checked, not lowered.
 * - A `while` whose condition is known true (a literal, or a variable the body never
 *   assigns) needs a reachable break or return, like `while true`.
 * - A literal, and arithmetic on literals alone (`(1 + 2) * 3`), takes the dtype the other
 *   operand or the target asks for; an integer literal becomes any numeric dtype, a real one
 *   only f32 or f64. Alone, they are i32 or f32.
 * - A loop variable assigned in its body does not change the iterations (Python's rule).
 */
#ifndef CFX_CHECK_H
#define CFX_CHECK_H

#include <stdint.h>

#include "ast.h"
#include "host/cfx.h"
#include "context.h"
#include "diag.h"

/* What a call resolved to (check_note.callee for AST_CALL). */
#define CHECK_CALL_OP -1     /* a built-in op: check_note.op */
#define CHECK_CALL_KERNEL -2 /* a registered kernel: check_note.kernel */
#define CHECK_CALL_ASSERT -3
#define CHECK_CALL_PRINT -4
#define CHECK_CALL_METHOD -5 /* a list method: name "append" or "pop"; check_note.list */
#define CHECK_CALL_STACK -6  /* stack(xs): check_note.list */
#define CHECK_CALL_RESHAPE -7 /* reshape(x, [d0, ...]) or x.reshape([d0, ...]): the call's type */
#define CHECK_CALL_CONCAT -8  /* concat((a, b, ...), axis=K): list[0]'s items joined on check_note.axis */
#define CHECK_CALL_PERMUTE -9 /* transpose(x, axes), permute(x, axes), transpose(x) of rank > 2: the
                                 argument x is list[0], output dimension d is its axis
                                 (check_note.ival >> 4 * d) & 15 */
#define CHECK_CALL_TAKE -10 /* take(x, idx, axis=K), numpy's: the slices of x along check_note.axis at
                                the indices idx */
/* >= 0: a graph of the module, by index; the call is inlined */

/* What a for-each loop walks (check_note.iter). */
#define CHECK_ITER_PLAIN 0     /* a tensor's rows or a list's items */
#define CHECK_ITER_ENUMERATE 1 /* enumerate(it): the position and the row or item */
#define CHECK_ITER_ZIP 2       /* zip(it, ...): a row or item of each, as long as the shortest */

/* A list variable of a graph: bounded, with a capacity known at compile time and a length
 * that lives in a slot of its own at run time. */
typedef struct check_list {
    const char *name;     /* the variable */
    const char *len_name; /* "len(NAME)": the variable that holds its length */
    cfx_type item;        /* the items' type, fixed by the first item the graph gives it */
    int typed;            /* item is known */
    int64_t cap;          /* capacity: declared with list(TYPE, N), or inferred (check.c) */
    int declared;
    int id;               /* a list's type in the checker is {rank -1, dims[0] = id} */
} check_list;

typedef struct check_note { /* the ints first: no padding, as there is one note per node */
    /* expressions */
    int known;     /* a scalar whose value is known at compile time (then ival or rval holds it) */
    int callee;    /* AST_CALL: CHECK_CALL_* or a graph index */
    int op;        /* AST_CALL of a built-in: enum op_kind */
    int axis;      /* AST_CALL of a reduction along an axis: the axis + 1 (0: over everything;
                      -1: over everything, keeping every dimension as 1) */
    int cdt;       /* an elementwise op of two operands (infix or called): the dtype it computes
                      in, which its operands are converted to first (f32 for `/` of integers) */
    int iter;          /* AST_FOR_EACH: CHECK_ITER_*, what the loop walks */
    int64_t slice_len; /* AST_SLICE: its length (known); `known` and ival: its start, if known */
    /* statements */
    int assigns_loop_var; /* AST_FOR_RANGE: the body assigns the loop variable */
    /* expressions */
    int unset_line;    /* AST_NAME: a read of a variable assigned only inside the loop at this
                          line (its value is the last assignment's; the run stops with `value`
                          when none ran) */
    int presence;      /* AST_NAME of a variable that may be None: 1, a read of its value, which the
                          run checks (stopping with `value`); 2, its presence read as such (a test
                          `is None`, an argument of a parameter that defaults to None). AST_IS: 1
                          when the test is made at run time */
    /* expressions */
    int64_t ival;  /* the value of a known integer or bool expression */
    double rval;   /* the value of a known real expression (already rounded to f32 for f32) */
    const ctx_kernel *kernel; /* AST_CALL of a registered kernel */
    check_list *list;  /* a list's name, item (xs[i]), len(xs), stack(xs), method, for-each */
    int *argmap;       /* AST_CALL of a graph: per parameter, the index in the call's list of its
                          argument (an AST_KWARG's value when given by name), -1 for its default */
} check_note;

/* Checking is a stage of the pipeline, which compile.c runs (compile_check) with desugaring
 * (desugar.h) in this order:
 *   check_constants, desugar_module, check_begin,
 *   then for each graph in order desugar_graph and check_one_graph, and last check_end.
 * A graph is desugared just before it is checked, not every graph first, so that a file's
 * messages come graph by graph, each graph's desugaring's before its checking's; the sizes
 * check_begin bounds are those of the trees desugar_module leaves (before desugar_graph). */
typedef struct checker checker;

/* Sorts the module's constants by name (ast_const_find), and reports a graph, a parameter or
 * a result that has the name of one. -1 when out of memory. */
int check_constants(ast_module *m, diag *d);
/* Begins checking m, whose lambdas and nested graphs desugar_module has expanded: finds the
 * call graph and reports a graph too large once its calls are inlined. ctx (may be NULL) gives
 * the registered kernels. NULL when out of memory (reported). */
checker *check_begin(ast_module *m, const cfx_context *ctx, diag *d);
/* Checks graph gi, desugared (desugar_graph), annotating its tree. -1 when out of memory: check
 * no further graph. */
int check_one_graph(checker *C, int gi);
/* Ends checking and frees C; reports "out of memory" when oom (the caller ran out) or the
 * checker did. */
void check_end(checker *C, int oom);

/* The type of result i of a checked call (a graph's or a kernel's; for an op, its one result). */
const cfx_type *check_result_type(const ast_module *m, const ast_node *call, int i);

/* The type of a list's items taken together: [capacity, item...] (its variable, stack(xs)). */
cfx_type check_list_data_type(const check_list *l);

/* Which variable an index of tensor expression x selects in, for messages: x itself when it
 * is a name (returns 0), or the name under rows taken one by one (x[i][j] indexes dimension 1
 * of x: returns 1). *name is NULL when x is anything else (a call, a list's item). */
int check_index_base(const ast_node *x, const char **name);

/* Writes a type as messages show it: `i32[]` for a scalar, `f32[3]`, `f32[2, 3]`. */
char *check_type_str(const cfx_type *t, char *buf, size_t len);

#endif
