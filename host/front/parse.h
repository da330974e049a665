/* parse.h: .cfx source text -> syntax tree (ast.h), and the type texts that the API reads.
 *
 * The parser reports every syntax error it can find (it recovers at the next statement, and
 * at the next `graph` after a broken header) and always hands back a module, maybe partial:
 * the caller looks at d->errors. Nesting of blocks and expressions together is limited to
 * PARSE_MAX_DEPTH, so the recursive passes after it (check, lower) cannot run out of stack. */
#ifndef CFX_PARSE_H
#define CFX_PARSE_H

#include <stddef.h>

#include "ast.h"
#include "host/cfx.h"
#include "diag.h"
#include "kernels/cfxlimits.h"


/* NULL only when out of memory. The module lives in its own arena: free it with
 * ast_module_free. */
ast_module *parse_module(const char *src, size_t len, diag *d);

/* One type: `f32[2, 3]`, `i32[]`, `bool`. 0, or -1 with a message in err. */
int parse_type_text(const char *text, cfx_type *out, char *err, size_t errlen);

/* A registered kernel's signature, types only: `(f32[4], f32) -> (f32[4])`; the results may
 * also be one type without parentheses (`-> f32`). 0, or -1 with a message in err. */
int parse_signature(const char *sig, cfx_type *params, int maxp, int *np, cfx_type *results, int maxr,
                    int *nr, char *err, size_t errlen);

#endif
