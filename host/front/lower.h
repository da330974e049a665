/* lower.h: a checked graph -> one flat program of records (program.h).
 *
 * The tree must have passed compile_check() (compile.h) without errors: the lowering trusts
 * the types and the folding decisions the checker left in the tree (check.h). Calls to other
 * graphs are inlined; structured control flow becomes jumps. */
#ifndef CFX_LOWER_H
#define CFX_LOWER_H

#include "ast.h"
#include "diag.h"
#include "host/program/program.h"
#include "kernels/cfxlimits.h"


/* Lowers graph `graph` of the module. Returns the program, or NULL after reporting why
 * (a limit exceeded, out of memory) to d. `file` names the source in the program. */
cfx_prog *lower_graph(const ast_module *m, int graph, const char *file, diag *d);

#endif
