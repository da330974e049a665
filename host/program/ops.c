/* ops.c: the tables of the built-in ops, generated once from CFX_OPS (kernels/ops.h) for
 * the checker, the lowering, the executors and `cfx dump`.
 */
#include "kernels/ops.h"

#include <stddef.h>

const char *const op_spellings[OP_COUNT] = {
#define X(name, spelling, arity, cls, infix) spelling,
    CFX_OPS(X)
#undef X
};

const char *const op_infix[OP_COUNT] = {
#define X(name, spelling, arity, cls, infix) infix,
    CFX_OPS(X)
#undef X
};

const int op_arity[OP_COUNT] = {
#define X(name, spelling, arity, cls, infix) arity,
    CFX_OPS(X)
#undef X
};

const int op_class[OP_COUNT] = {
#define X(name, spelling, arity, cls, infix) cls,
    CFX_OPS(X)
#undef X
};

const char *op_name(int op)
{
    if (op < 0 || op >= OP_COUNT)
        return "?";
    return op_spellings[op][0] ? op_spellings[op] : op_infix[op] ? op_infix[op] : "?";
}
