/* compile.h: source text -> one checked, lowered and validated program per graph.
 *
 * The glue between the stages for the API (api.c): parse, then desugar and check graph by
 * graph (compile_check), then lower and validate. */
#ifndef CFX_COMPILE_H
#define CFX_COMPILE_H

#include <stddef.h>

#include "host/cfx.h"
#include "host/program/program.h"

struct ast_module; /* ast.h */
struct diag;       /* diag.h */

typedef struct compiled_value {
    char *name;
    cfx_type type;
    char *def;              /* a parameter's default as the command line writes it ("2.5", "None"), or NULL */
    unsigned char value[8]; /* with def: one element of type's dtype, which fills the whole input (0 for None) */
    int presence_of;        /* -1; or this is no parameter but the hidden input `present(NAME)` that tells
                               whether parameter presence_of, which defaults to None, was given (1) or not
                               (0): those follow the declared parameters, as the program's inputs do */
} compiled_value;

typedef struct compiled_graph {
    char *name;
    compiled_value *params; /* the declared parameters, then the hidden presence inputs */
    int nparams;            /* all of them: the program's inputs */
    int ndeclared;          /* the declared parameters, which callers see */
    compiled_value *results;
    int nresults;
    cfx_prog *prog; /* validated */
} compiled_graph;

typedef struct compiled_module {
    compiled_graph *graphs; /* in source order; the first is the entry point */
    int ngraphs;
} compiled_module;

/* Compiles `src` (len bytes; need not be NUL-terminated). `file` names it in messages and in
 * the programs. ctx (may be NULL) gives the registered kernels. Returns 0 and fills *out, or
 * -1 with every message in *diagnostics (free()) and *out empty. On success *diagnostics is
 * NULL. */
int compile_source(const cfx_context *ctx, const char *file, const char *src, size_t len,
                   compiled_module *out, char **diagnostics);
/* compile_source, the file's `const NAME: TYPE = "PATH.npy"` read from PATH relative to folder
 * dir (NULL or "": the current directory; compile_source: the folder of `file`), and its
 * constants without a value in the text taken from the table (cfx.h,
 * cfx_compile_string_constants; may be NULL with nconstants 0). */
int compile_source_with(const cfx_context *ctx, const char *file, const char *src, size_t len, const char *dir,
                        const cfx_constant *constants, int nconstants, compiled_module *out, char **diagnostics);

void compiled_module_free(compiled_module *m);

/* The front of the pipeline after parsing: desugars and checks every graph of m, one graph
 * after the other (the order is check.h's). ctx (may be NULL) gives the registered kernels.
 * Returns the number of errors reported to d (0: the tree is annotated and may be lowered). */
int compile_check(struct ast_module *m, const cfx_context *ctx, struct diag *d);

#endif
