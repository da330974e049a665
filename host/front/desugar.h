/* desugar.h: rewrites Python's shorthand before checking (desugar.c): list comprehensions
 * into the loops that fill a list, variables that hold a shape into that shape, variables
 * that hold a tuple into one variable per item. A stage of the pipeline that compile.c runs
 * (compile_check), each graph just before it is checked (check.h gives the order). */
#ifndef CFX_DESUGAR_H
#define CFX_DESUGAR_H

#include "ast.h"
#include "context.h"
#include "diag.h"

/* Before anything else: expands the calls of lambdas, and makes the graphs defined inside
 * graphs callable, with the variables they read from their enclosing graphs as parameters
 * (captures). -1 when out of memory. */
int desugar_module(ast_module *m, const cfx_context *ctx, diag *d);

/* Rewrites graph gi of m in place, reporting to d. -1 when out of memory. */
int desugar_graph(ast_module *m, int gi, const cfx_context *ctx, diag *d);

#endif
