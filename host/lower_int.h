/* lower_int.h: what the two halves of the lowering share: the lowerer's state (scopes, loops,
 * slots, patch lists) and the functions one half calls in the other. lower.c has records,
 * slots, jumps, variables, statements and the graph entry; lower_expr.c expressions, calls
 * and inlining. Not for other modules: their interface is lower.h. */
#ifndef CFX_LOWER_INT_H
#define CFX_LOWER_INT_H

#include <stdint.h>

#include "ast.h"
#include "check.h"
#include "diag.h"
#include "lower.h"
#include "program.h"

typedef struct patchlist {
    int32_t *at; /* records whose jump target is still open */
    int n, cap;
} patchlist;

typedef struct var_slot {
    const char *name;
    cfx_type ty;
    int32_t slot;
} var_slot;

/* One graph instance: the top graph, or an inlined call. */
typedef struct scope {
    int graph;
    var_slot *vars;
    int nvars, cap;
    int32_t *hash;  /* open addressing by name: index into vars + 1, 0 for empty */
    int hashcap;    /* a power of two, at least twice nvars */
    patchlist returns;
} scope;

typedef struct loopl {
    struct loopl *up;
    patchlist breaks;
    patchlist continues;
} loopl;

typedef struct slot_info {
    int64_t count; /* elements, for REC_F_SCALAR */
    int dtype;     /* for the record's dtype field */
} slot_info;

typedef struct lowerer {
    const ast_module *m;
    prog_builder *b;
    diag *d;
    int line, col;     /* of the statement being lowered */
    int failed;
    char why[256];
    slot_info *info;   /* of each slot made so far (the builder keeps its slots to itself) */
    int32_t nslots, capslots;
    scope *sc;
    loopl *loop;
    int depth;
} lowerer;

/* ---- lower.c: records, slots, jumps, variables, blocks ---------------------------------- */
int32_t lower_bind_var(lowerer *L, const char *name, const cfx_type *t, int32_t slot);
int32_t lower_const_scalar(lowerer *L, int dt, int64_t iv, double rv);
int32_t lower_emit(lowerer *L, int kind, int op, int32_t a, int32_t b, int32_t c, int32_t d);
void lower_fail(lowerer *L, const char *why);
void lower_block(lowerer *L, ast_node *blk);
void lower_patch_add(lowerer *L, patchlist *pl, int32_t rec);
void lower_patch_free(patchlist *pl);
void lower_patch_here(lowerer *L, patchlist *pl);
void lower_scope_free(scope *sc);
void lower_set_target(lowerer *L, int32_t rec, int32_t target);
int32_t lower_temp(lowerer *L, const cfx_type *t);
int32_t lower_var(lowerer *L, const char *name, const cfx_type *t);

/* ---- lower_expr.c: expressions, calls and inlining --------------------------------------- */
int32_t lower_copy_to(lowerer *L, int32_t want, int32_t s);
void lower_inline_call(lowerer *L, ast_node *call, int32_t *outs, int nouts);
void lower_jump_if(lowerer *L, ast_node *n, int when, patchlist *pl);
void lower_kernel_call(lowerer *L, ast_node *n, int32_t *outs, int nouts);
int32_t lower_expr(lowerer *L, ast_node *n, int32_t want);
int32_t lower_index(lowerer *L, ast_node *i, int64_t rows, const ast_node *tensor);
const check_note *lower_note(const ast_node *n);

#endif
