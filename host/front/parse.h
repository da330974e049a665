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

#define PARSE_MAX_DEPTH 256
/* Syntax nodes (a name, a literal, an operator, a call, a statement: `y = y + 1` is 5) of one
 * graph as written, and of a whole file. Past either the parse stops at the statement that
 * crossed it, so compile memory stays within the caps (about 170 bytes a node). */
#define PARSE_MAX_GRAPH_NODES (1 << 20)
#define PARSE_MAX_FILE_NODES (1 << 21)

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
