/* parse_int.h: what the two halves of the parser share: the parser state, the token, error
 * and node helpers (parse.c) and the expression and type entry points (parse_expr.c). parse.c
 * has statements, blocks, recovery, graphs, the module and type texts; parse_expr.c
 * expressions and types. Not for other modules: their interface is parse.h. */
#ifndef CFX_PARSE_INT_H
#define CFX_PARSE_INT_H

#include <stdarg.h>
#include <stddef.h>

#include "ast.h"
#include "lex.h"
#include "parse.h"

typedef struct parser {
    lexer lx;
    lex_token tok;     /* the current token */
    ast_arena *arena;  /* NULL when parsing a type text: no nodes are made then */
    int depth;         /* open blocks and expression levels */
    int panic;         /* a syntax error was reported in this statement */
    int unclosed;      /* a block already reported the missing '}' before `graph` or the end */
    int oom;
    ast_node scratch;  /* handed out when the arena is out of memory; the module is dropped then */
} parser;

typedef struct nodelist {
    ast_node **items;
    int n, cap;
} nodelist;

#if defined(__GNUC__)
#define PRINTF_LIKE __attribute__((format(printf, 4, 5)))
#else
#define PRINTF_LIKE
#endif

/* ---- parse.c: tokens, errors and nodes ------------------------------------------------- */
void parse_next(parser *p);
/* An error that leaves the parse in step: always reported. */
void parse_report(parser *p, int line, int col, const char *fmt, ...) PRINTF_LIKE;
/* A syntax error: the first of a statement is reported, the rest wait for recovery. */
void parse_syntax_error(parser *p, int line, int col, const char *fmt, ...) PRINTF_LIKE;
/* `expected WHAT, found TOKEN` at the current token. */
void parse_expected(parser *p, const char *what);
int parse_expect(parser *p, int kind, const char *what);
ast_node *parse_node(parser *p, int kind, int line, int col);
/* What an expression becomes after an error, so callers always have a node. */
ast_node *parse_error_node(parser *p);
void parse_push(parser *p, nodelist *l, ast_node *x);
void parse_set_list(ast_node *n, const nodelist *l);
const char *parse_token_text(parser *p, const lex_token *t);

/* ---- parse_expr.c: expressions and types ------------------------------------------------ */
/* One more level of nesting (a block or an expression level); 0, with a syntax error, past
 * PARSE_MAX_DEPTH. parse_leave undoes it. */
int parse_enter(parser *p);
void parse_leave(parser *p);
ast_node *parse_expr(parser *p);
/* TYPE: DTYPE, DTYPE[] or DTYPE[d0, ...]. Returns 1 for a usable type. */
int parse_type(parser *p, cfx_type *out);

#endif
