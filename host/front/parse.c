/* parse.c: recursive-descent parser, .cfx tokens -> ast_module (ast.h).
 *
 * Errors and recovery. A syntax error sets `panic`: later syntax errors of the same
 * statement stay quiet (they are usually echoes of the first), and the block loop skips
 * to the end of the statement (a newline, ';' or the '}' of the block, with nested braces
 * skipped whole) before it clears `panic` and goes on. A broken graph header skips to the
 * next `graph`. Every skip consumes at least one token or stops at a token that ends the
 * enclosing loop, so the parser always terminates.
 *
 * Errors that do not disturb the parse (a duplicate name, a shape too large) are reported
 * with parse_report() and do not set `panic`.
 *
 * Depth. Blocks and expression levels share one counter limited to PARSE_MAX_DEPTH, so
 * 10,000 nested '(' or '{' give one error instead of a stack overflow, here and in the
 * recursive passes after the parser. What counts is the depth of the tree, so the operators
 * of a flat chain `1 + 1 + ... + 1` and the indexes of `x[0][0]...` count too (as Python's
 * compiler also gives up on a 100,000-term sum). */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "lex.h"
#include "parse.h"
#include "kernels/cfxlimits.h"

typedef struct parser {
    lexer lx;
    lex_token tok;     /* the current token */
    ast_arena *arena;  /* NULL when parsing a type text: no nodes are made then */
    int depth;         /* open blocks and expression levels */
    int panic;         /* a syntax error was reported in this statement */
    int unclosed;      /* a block already reported the missing '}' before `graph` or the end */
    int oom;
    /* sizes: nodes made in the file and in the graph being parsed; past a cap the parse
     * stops (every later token is the end of the file), so memory stays within the caps */
    int64_t nodes, graph_nodes;
    const char *graph_name;
    int stmt_line, stmt_col; /* the innermost statement being parsed, which a cap names */
    int stop;
    /* graphs defined inside the graph being parsed, in the order they start (an enclosing
     * graph before those inside it), each with the index of its enclosing graph among them
     * (-1: the file's graph being parsed) */
    ast_graph *nested;
    int *nested_in;
    int nnested, capnested;
    int nesting;       /* index among `nested` of the graph being parsed; -1 for the file's */
    ast_node scratch;  /* handed out when out of memory or stopped at a cap; no graph is kept then */
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

/* ---- tokens, errors and nodes ------------------------------------------------- */
static void parse_next(parser *p);
/* An error that leaves the parse in step: always reported. */
static void parse_report(parser *p, int line, int col, const char *fmt, ...) PRINTF_LIKE;
/* A syntax error: the first of a statement is reported, the rest wait for recovery. */
static void parse_syntax_error(parser *p, int line, int col, const char *fmt, ...) PRINTF_LIKE;
/* `expected WHAT, found TOKEN` at the current token. */
static void parse_expected(parser *p, const char *what);
static int parse_expect(parser *p, int kind, const char *what);
static ast_node *parse_node(parser *p, int kind, int line, int col);
/* What an expression becomes after an error, so callers always have a node. */
static ast_node *parse_error_node(parser *p);
static void parse_push(parser *p, nodelist *l, ast_node *x);
static void parse_set_list(ast_node *n, const nodelist *l);
static const char *parse_token_text(parser *p, const lex_token *t);

/* ---- expressions and types ------------------------------------------------ */
/* One more level of nesting (a block or an expression level); 0, with a syntax error, past
 * PARSE_MAX_DEPTH. parse_leave undoes it. */
static int parse_enter(parser *p);
static void parse_leave(parser *p);
static ast_node *parse_expr(parser *p);
static ast_node *parse_comprehension(parser *p, lex_token open, ast_node *e);
/* TYPE: DTYPE, DTYPE[] or DTYPE[d0, ...]. Returns 1 for a usable type. */
static int parse_type(parser *p, cfx_type *out);

/* ---- tokens and errors ------------------------------------------------------------- */

static void parse_next(parser *p)
{
    if (p->stop) {
        int line = p->tok.line, col = p->tok.col;
        memset(&p->tok, 0, sizeof p->tok);
        p->tok.kind = TK_EOF;
        p->tok.line = line;
        p->tok.col = col;
        return;
    }
    p->tok = lex_next(&p->lx);
    if (p->lx.oom)
        p->oom = 1;
    if (p->lx.lost) { /* `n & 1`: what the parser would then miss is the same mistake */
        p->lx.lost = 0;
        p->panic = 1;
    }
}

static void vreport(parser *p, int line, int col, const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    lex_error(&p->lx, line, col, "%s", msg);
}


/* An error that leaves the parse in step: always reported. */
static void parse_report(parser *p, int line, int col, const char *fmt, ...)
{
    if (p->stop)
        return; /* past a size cap, what follows is cut short: not an error of its own */
    va_list ap;
    va_start(ap, fmt);
    vreport(p, line, col, fmt, ap);
    va_end(ap);
}

/* A syntax error: the first of a statement is reported, the rest wait for recovery. */
static void parse_syntax_error(parser *p, int line, int col, const char *fmt, ...)
{
    if (p->panic || p->stop)
        return;
    p->panic = 1;
    va_list ap;
    va_start(ap, fmt);
    vreport(p, line, col, fmt, ap);
    va_end(ap);
}

/* `expected WHAT, found TOKEN` at the current token. */
static void parse_expected(parser *p, const char *what)
{
    char found[64];
    lex_describe(&p->lx, &p->tok, found, sizeof found);
    parse_syntax_error(p, p->tok.line, p->tok.col, "expected %s, found %s", what, found);
}

static int parse_expect(parser *p, int kind, const char *what)
{
    if (p->tok.kind == kind) {
        parse_next(p);
        return 1;
    }
    parse_expected(p, what);
    return 0;
}

/* Whether a token ends a statement. `graph` and the end of the file do too: the block
 * loop then reports the missing '}'. */
static int ends_statement(int kind)
{
    return kind == TK_NEWLINE || kind == TK_SEMI || kind == TK_RBRACE || kind == TK_EOF || kind == TK_GRAPH;
}

/* ---- nodes ------------------------------------------------------------------------- */

/* Counts a node against the caps; past one, reports it at the statement being parsed and
 * stops the parse. */
static void count_node(parser *p)
{
    p->nodes++;
    p->graph_nodes++;
    if (p->stop || (p->graph_nodes <= PARSE_MAX_GRAPH_NODES && p->nodes <= PARSE_MAX_FILE_NODES))
        return;
    if (p->graph_nodes > PARSE_MAX_GRAPH_NODES)
        parse_report(p, p->stmt_line, p->stmt_col, "graph '%s' is too large: more than %d nodes",
                     p->graph_name ? p->graph_name : "", PARSE_MAX_GRAPH_NODES);
    else
        parse_report(p, p->stmt_line, p->stmt_col, "the file is too large: more than %d nodes",
                     PARSE_MAX_FILE_NODES);
    p->stop = 1;
}

static ast_node *parse_node(parser *p, int kind, int line, int col)
{
    count_node(p);
    ast_node *n = p->arena && !p->stop ? ast_alloc(p->arena, sizeof *n) : NULL;
    if (!n) {
        /* keep going on a throwaway node; the lexer now returns only EOF, so this ends soon */
        if (!p->stop)
            p->oom = p->lx.oom = 1;
        memset(&p->scratch, 0, sizeof p->scratch);
        n = &p->scratch;
    }
    n->kind = (uint8_t)kind;
    n->line = line;
    n->col = col;
    return n;
}

/* What an expression becomes after an error, so callers always have a node. */
static ast_node *parse_error_node(parser *p)
{
    return parse_node(p, AST_INT, p->tok.line, p->tok.col);
}

static void parse_push(parser *p, nodelist *l, ast_node *x)
{
    if (l->n == l->cap) {
        if (l->cap > INT_MAX / 4) {
            p->oom = p->lx.oom = 1;
            return;
        }
        int cap = l->cap ? l->cap * 2 : 4;
        ast_node **items = p->arena ? ast_alloc(p->arena, (size_t)cap * sizeof *items) : NULL;
        if (!items) {
            p->oom = p->lx.oom = 1;
            return;
        }
        if (l->n)
            memcpy(items, l->items, (size_t)l->n * sizeof *items);
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = x;
}

static void parse_set_list(ast_node *n, const nodelist *l)
{
    n->list = l->items;
    n->nlist = l->n;
}

static const char *parse_token_text(parser *p, const lex_token *t)
{
    const char *s = p->arena ? ast_strdup(p->arena, p->lx.src + t->start, t->len) : NULL;
    if (!s) {
        p->oom = p->lx.oom = 1;
        return "";
    }
    return s;
}

/* A set of names (graph, parameter and result names, case values as text) that says where
 * a name was first seen. Open addressing in the arena; a grown table leaves the old one
 * behind, which the arena frees with the rest. */
typedef struct nameset {
    const char **keys;
    int *values;
    size_t cap, n;
} nameset;

static size_t hash_name(const char *s)
{
    size_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Adds key with a value (a line, say). 0 when key is new; 1 when it was there already, with
 * its first value in *first. */
static int nameset_add(parser *p, nameset *s, const char *key, int value, int *first)
{
    if (s->n * 2 >= s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        const char **keys = ast_alloc(p->arena, cap * sizeof *keys);
        int *values = ast_alloc(p->arena, cap * sizeof *values);
        if (!keys || !values) {
            p->oom = p->lx.oom = 1;
            return 0;
        }
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->keys[i])
                continue;
            size_t j = hash_name(s->keys[i]) & (cap - 1);
            while (keys[j])
                j = (j + 1) & (cap - 1);
            keys[j] = s->keys[i];
            values[j] = s->values[i];
        }
        s->keys = keys;
        s->values = values;
        s->cap = cap;
    }
    size_t j = hash_name(key) & (s->cap - 1);
    while (s->keys[j]) {
        if (strcmp(s->keys[j], key) == 0) {
            *first = s->values[j];
            return 1;
        }
        j = (j + 1) & (s->cap - 1);
    }
    s->keys[j] = key;
    s->values[j] = value;
    s->n++;
    return 0;
}


/* ---- statements -------------------------------------------------------------------- */

/* `{ STATEMENT ... }`; `after` completes the message when the '{' is missing. */
static ast_node *parse_block(parser *p, const char *after);

/* Skips tokens to one of the kinds stop1..stop3 outside nested braces, or to the end of the
 * file or the next graph. */
static void sync_to(parser *p, int stop1, int stop2, int stop3)
{
    int depth = 0;
    for (;;) {
        int k = p->tok.kind;
        if (k == TK_EOF || k == TK_GRAPH)
            return;
        if (depth == 0 && (k == stop1 || k == stop2 || k == stop3))
            return;
        if (k == TK_LBRACE)
            depth++;
        else if (k == TK_RBRACE)
            depth--;
        parse_next(p);
    }
}

/* Skips to the end of a broken statement: a newline, ';' or '}' outside nested braces. */
static void sync_statement(parser *p)
{
    sync_to(p, TK_NEWLINE, TK_SEMI, TK_RBRACE);
}

/* Skips a whole `{ ... }` group; the current token is its '{'. */
static void skip_group(parser *p)
{
    int depth = 0;
    do {
        int k = p->tok.kind;
        if (k == TK_EOF || k == TK_GRAPH)
            return;
        if (k == TK_LBRACE)
            depth++;
        else if (k == TK_RBRACE)
            depth--;
        parse_next(p);
    } while (depth > 0);
}

static ast_node *parse_if(parser *p)
{
    ast_node *n = parse_node(p, AST_IF, p->tok.line, p->tok.col);
    nodelist arms = {0};
    for (;;) {
        ast_node *arm = parse_node(p, AST_ARM, p->tok.line, p->tok.col);
        parse_next(p); /* `if` or `elif` */
        arm->a = parse_expr(p);
        arm->b = parse_block(p, "after the condition");
        parse_push(p, &arms, arm);
        if (p->panic)
            break;
        if (p->tok.kind == TK_ELIF)
            continue;
        if (p->tok.kind == TK_ELSE) {
            arm = parse_node(p, AST_ARM, p->tok.line, p->tok.col);
            parse_next(p);
            if (p->tok.kind == TK_IF) {
                parse_expected(p, "'{' after 'else' (write 'elif' for another condition)");
                break;
            }
            arm->b = parse_block(p, "after 'else'");
            parse_push(p, &arms, arm);
        }
        break;
    }
    parse_set_list(n, &arms);
    return n;
}

/* Python's `for ... else` and `while ... else`, which cfx does not take. */
static void loop_else(parser *p)
{
    if (!p->panic && p->tok.kind == TK_ELSE)
        parse_syntax_error(p, p->tok.line, p->tok.col, "a loop has no 'else': set a flag before its 'break' "
                           "and test the flag after the loop");
}

static ast_node *parse_while(parser *p)
{
    ast_node *n = parse_node(p, AST_WHILE, p->tok.line, p->tok.col);
    parse_next(p);
    n->a = parse_expr(p);
    n->b = parse_block(p, "after the condition");
    loop_else(p);
    return n;
}

/* `for NAME in range(A, B[, S]) BLOCK`, `for NAME in range(B) BLOCK` or `for NAME in EXPR BLOCK`. */
/* Python's: `|` below `^` below `&` below the shifts, all between the comparisons and `+` */
enum { PREC_OR = 1, PREC_AND, PREC_NOT, PREC_COMPARE, PREC_BITOR, PREC_BITXOR, PREC_BITAND, PREC_SHIFT, PREC_ADD,
       PREC_MUL };
static ast_node *parse_binary(parser *p, int min);

/* `for VARS in ITER`, the current token `for`: an AST_FOR_RANGE or AST_FOR_EACH without its
 * body (d). In a list comprehension (comp), the iterated value ends before an `if`. */
static ast_node *parse_for_head(parser *p, int comp)
{
    lex_token t = p->tok;
    parse_next(p);
    if (p->tok.kind != TK_NAME) {
        parse_expected(p, "a loop variable after 'for'");
        return NULL;
    }
    lex_token var = p->tok;
    parse_next(p);
    /* `for i, x in enumerate(xs)`, `for a, b in zip(x, y)`: several loop variables */
    nodelist vars = {0};
    while (p->tok.kind == TK_COMMA) {
        if (!vars.n) {
            ast_node *v0 = parse_node(p, AST_NAME, var.line, var.col);
            v0->name = parse_token_text(p, &var);
            parse_push(p, &vars, v0);
        }
        parse_next(p);
        if (p->tok.kind != TK_NAME) {
            parse_expected(p, "a loop variable after ','");
            return NULL;
        }
        ast_node *v = parse_node(p, AST_NAME, p->tok.line, p->tok.col);
        v->name = parse_token_text(p, &p->tok);
        parse_push(p, &vars, v);
        parse_next(p);
    }
    if (!parse_expect(p, TK_IN, "'in' after the loop variable"))
        return NULL;
    ast_node *n;
    if (p->tok.kind == TK_RANGE && vars.n) {
        parse_syntax_error(p, p->tok.line, p->tok.col,
                           "a range gives one value: write 'for i in range(...)' with one loop variable");
        return NULL;
    }
    if (p->tok.kind == TK_RANGE) {
        lex_token r = p->tok;
        parse_next(p);
        if (!parse_expect(p, TK_LPAREN, "'(' after 'range'"))
            return NULL;
        nodelist args = {0};
        while (p->tok.kind != TK_RPAREN) {
            parse_push(p, &args, parse_expr(p));
            if (p->panic)
                return NULL;
            if (p->tok.kind == TK_COMMA) {
                parse_next(p);
                continue;
            }
            if (p->tok.kind != TK_RPAREN) {
                parse_expected(p, "',' or ')' after the argument");
                return NULL;
            }
        }
        parse_next(p);
        n = parse_node(p, AST_FOR_RANGE, t.line, t.col);
        if (args.n == 1) {
            n->a = parse_node(p, AST_INT, r.line, r.col); /* range(B) counts from 0 */
            n->b = args.items[0];
        } else if (args.n == 2 || args.n == 3) {
            n->a = args.items[0];
            n->b = args.items[1];
            n->c = args.n == 3 ? args.items[2] : NULL;
        } else {
            parse_report(p, r.line, r.col, "range takes 1 to 3 arguments, found %d", args.n);
            n->a = parse_node(p, AST_INT, r.line, r.col);
            n->b = parse_node(p, AST_INT, r.line, r.col);
        }
    } else {
        n = parse_node(p, AST_FOR_EACH, t.line, t.col);
        n->a = comp ? parse_binary(p, PREC_OR) : parse_expr(p);
        parse_set_list(n, &vars);
    }
    n->name = parse_token_text(p, &var);
    return n;
}

static ast_node *parse_for(parser *p)
{
    ast_node *n = parse_for_head(p, 0);
    if (!n || p->panic)
        return NULL;
    n->d = parse_block(p, n->kind == AST_FOR_RANGE ? "after 'range(...)'" : "after the loop's tensor");
    loop_else(p);
    return n;
}

/* Skips a broken case to the next `case`, `default` or the switch's '}'. */
static void sync_case(parser *p)
{
    sync_to(p, TK_CASE, TK_DEFAULT, TK_RBRACE);
}

/* One `case [-]INT BLOCK` or `default BLOCK`; the current token is the keyword. */
static void parse_case(parser *p, nodelist *cases, nameset *seen, int *default_line)
{
    lex_token t = p->tok;
    ast_node *c = parse_node(p, AST_CASE, t.line, t.col);
    parse_next(p);
    if (t.kind == TK_DEFAULT) {
        c->flags |= AST_F_DEFAULT;
        if (*default_line)
            parse_report(p, t.line, t.col, "more than one default in this switch (the first is at line %d)",
                   *default_line);
        else
            *default_line = t.line;
    } else {
        int negative = 0;
        if (p->tok.kind == TK_MINUS) {
            negative = 1;
            parse_next(p);
        }
        if (p->tok.kind != TK_INT) {
            parse_expected(p, "an integer case value");
            return;
        }
        lex_token v = p->tok;
        parse_next(p);
        int64_t value = negative ? -v.ival : v.ival;
        c->ival = value;
        if (!v.bad && (value < INT32_MIN || value > INT32_MAX)) {
            parse_report(p, t.line, t.col, "case value %lld does not fit in i32", (long long)value);
        } else if (!v.bad) {
            char key[32];
            snprintf(key, sizeof key, "%lld", (long long)value);
            const char *k = p->arena ? ast_strdup(p->arena, key, strlen(key)) : NULL;
            int first = 0;
            if (k && nameset_add(p, seen, k, t.line, &first))
                parse_report(p, t.line, t.col, "duplicate case %lld (the first is at line %d)", (long long)value, first);
        }
    }
    c->b = parse_block(p, t.kind == TK_DEFAULT ? "after 'default'" : "after the case value");
    parse_push(p, cases, c);
}

/* Steps into the '{' of a switch or block; 0 when the group cannot be read: after an error,
 * nested too deep, or with no '{' (then "expected '{' AFTER" is reported). */
static int open_group(parser *p, const char *after)
{
    if (p->panic)
        return 0;
    if (p->tok.kind == TK_COLON) {
        parse_syntax_error(p, p->tok.line, p->tok.col,
                           "cfx writes a block in braces, not after ':' and an indent: put '{' here and '}' after the "
                           "block");
        return 0;
    }
    if (p->tok.kind != TK_LBRACE) {
        char what[96];
        snprintf(what, sizeof what, "'{' %s", after);
        parse_expected(p, what);
        return 0;
    }
    if (!parse_enter(p)) {
        skip_group(p);
        return 0;
    }
    parse_next(p);
    return 1;
}

/* Inside the braces of a switch or block opened at line `open_line`: skips blank lines and
 * ';' and says whether the group ends here, at its '}' (consumed) or, left open, at the end
 * of the file or the next graph (reported once). */
static int group_ends(parser *p, const char *group, int open_line)
{
    while (p->tok.kind == TK_NEWLINE || p->tok.kind == TK_SEMI)
        parse_next(p);
    int k = p->tok.kind;
    if (k == TK_RBRACE) {
        parse_next(p);
        return 1;
    }
    if (k == TK_EOF || (k == TK_GRAPH && p->tok.col == 1)) {
        /* a `graph` in column 1 starts the file's next graph; one further in is defined inside
         * this one (a statement) */
        if (!p->unclosed && !p->stop) {
            char what[64];
            snprintf(what, sizeof what, "'}' to close the %s at line %d", group, open_line);
            parse_expected(p, what);
        }
        p->unclosed = 1;
        return 1;
    }
    return 0;
}

static ast_node *parse_switch(parser *p)
{
    ast_node *n = parse_node(p, AST_SWITCH, p->tok.line, p->tok.col);
    parse_next(p);
    n->a = parse_expr(p);
    lex_token open = p->tok;
    if (!open_group(p, "after the switch value"))
        return n;
    nodelist cases = {0};
    nameset seen = {0};
    int default_line = 0;
    for (;;) {
        if (group_ends(p, "switch", open.line))
            break;
        if (p->tok.kind == TK_CASE || p->tok.kind == TK_DEFAULT) {
            parse_case(p, &cases, &seen, &default_line);
        } else {
            parse_expected(p, "'case', 'default' or '}' in the switch");
            parse_next(p);
        }
        if (p->panic) {
            sync_case(p);
            p->panic = 0;
        }
    }
    parse_leave(p);
    parse_set_list(n, &cases);
    return n;
}

/* The op of an augmented assignment token (`+=` gives OP_ADD), or -1. */
static int aug_op(int kind)
{
    switch (kind) {
    case TK_PLUS_ASSIGN: return OP_ADD;
    case TK_MINUS_ASSIGN: return OP_SUB;
    case TK_STAR_ASSIGN: return OP_MUL;
    case TK_SLASH_ASSIGN: return OP_DIV;
    case TK_PERCENT_ASSIGN: return OP_MOD;
    case TK_SLASHSLASH_ASSIGN: return OP_FLOORDIV;
    case TK_STARSTAR_ASSIGN: return OP_POW;
    case TK_AMP_ASSIGN: return OP_BITAND;
    case TK_PIPE_ASSIGN: return OP_BITOR;
    case TK_CARET_ASSIGN: return OP_BITXOR;
    case TK_LSHIFT_ASSIGN: return OP_LSHIFT;
    case TK_RSHIFT_ASSIGN: return OP_RSHIFT;
    default: return -1;
    }
}

/* A target as the value side reads it: a copy of the name, or of `name[...]` with the index
 * trees shared (the lowering evaluates an index once; see lower.c). */
static ast_node *read_of_target(parser *p, const ast_node *t)
{
    ast_node *r = parse_node(p, t->kind, t->line, t->col);
    *r = *t;
    if (t->kind == AST_INDEX)
        r->a = read_of_target(p, t->a);
    return r;
}

/* The message for an assignment to x, which is no target: d[i][j] is written d[i, j]. */
static const char *bad_target(const ast_node *x, char *buf, size_t n)
{
    const ast_node *b = x;
    int depth = 0;
    for (; b->kind == AST_INDEX; b = b->a)
        depth++;
    if (depth >= 2 && b->kind == AST_NAME && !(x->flags & AST_F_PAREN)) {
        snprintf(buf, n, "cannot assign to %s[...][...]: write one subscript list, as in %s[i, j] = v", b->name,
                 b->name);
        return buf;
    }
    return "cannot assign to this expression (a target is a name or name[i])";
}

/* `TARGET op= EXPR`: one target, a name or a row or element of a named tensor. The value is
 * BINARY(op, TARGET, EXPR), at the operator's position, so that the checker and the
 * messages treat `x += e` exactly as `x = x + e`. */
static ast_node *parse_augmented(parser *p, lex_token start, ast_node *target, int op)
{
    lex_token optok = p->tok;
    parse_next(p);
    int ok = target->kind == AST_NAME || (target->kind == AST_INDEX && target->a->kind == AST_NAME);
    if (!ok || (target->flags & AST_F_PAREN)) {
        char buf[256];
        parse_syntax_error(p, target->line, target->col, "%s", bad_target(target, buf, sizeof buf));
        return NULL;
    }
    ast_node *n = parse_node(p, AST_ASSIGN, start.line, start.col);
    n->flags |= AST_F_AUG;
    n->op = (uint8_t)op;
    ast_node *value = parse_node(p, AST_BINARY, optok.line, optok.col);
    value->op = (uint8_t)op;
    value->flags |= AST_F_AUG; /* messages spell the operator `+=` */
    value->a = read_of_target(p, target);
    value->b = parse_expr(p);
    if (p->panic)
        return NULL;
    n->a = value;
    nodelist targets = {0};
    parse_push(p, &targets, target);
    parse_set_list(n, &targets);
    return n;
}

/* `EXPR` or `EXPR, EXPR, ...` (an AST_TUPLE): the value of an assignment or a return. */
static ast_node *parse_values(parser *p)
{
    lex_token t = p->tok;
    ast_node *first = parse_expr(p);
    if (p->panic || p->tok.kind != TK_COMMA)
        return first;
    ast_node *tup = parse_node(p, AST_TUPLE, t.line, t.col);
    nodelist items = {0};
    parse_push(p, &items, first);
    while (p->tok.kind == TK_COMMA && !p->panic) {
        parse_next(p);
        parse_push(p, &items, parse_expr(p));
    }
    parse_set_list(tup, &items);
    return tup;
}

static void parse_args(parser *p, ast_node *call);

/* The message for a Python statement that cfx does not take, by its first word, or NULL. */
static const char *unsupported_word(const char *w)
{
    static const struct {
        const char *word, *why;
    } words[] = {
        {"class", "classes are not supported: write a graph for each method, with the object's fields as its "
                  "parameters and results"},
        {"import", "'import' is not needed: the ops are built in (write sum(x), not np.sum(x))"},
        {"from", "'from ... import' is not needed: the ops are built in (write sum(x), not np.sum(x))"},
        {"global", "'global' is not supported: a graph's variables are its own; pass the value in as a "
                   "parameter and out as a result"},
        {"nonlocal", "'nonlocal' is not supported: a graph's variables are its own; pass the value in as a "
                     "parameter and out as a result"},
        {"try", "exceptions are not supported: test the condition with if, or stop the run with "
                "assert(c, \"message\")"},
        {"except", "exceptions are not supported: test the condition with if, or stop the run with "
                   "assert(c, \"message\")"},
        {"finally", "exceptions are not supported: write the statements after the others"},
        {"raise", "'raise' is not supported: stop the run with assert(False, \"message\")"},
        {"with", "'with' is not supported: write its statements without it"},
        {"yield", "generators (yield) are not supported: append to a list, or loop over a range"},
        {"async", "async code is not supported: a graph runs where its data lives, start to end"},
        {"await", "async code is not supported: a graph runs where its data lives, start to end"},
        {"del", "'del' is not supported: a variable lives until its graph ends; assign it anew"},
        {"print", "print takes parentheses: print(x) or print(x, \"label\")"},
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcmp(w, words[i].word) == 0)
            return words[i].why;
    return NULL;
}

/* Python's `assert C` and `assert C, "message"`, the current token past `assert`: the call
 * assert(C, "message") (the message "assertion failed" when there is none). */
static ast_node *parse_python_assert(parser *p, lex_token at)
{
    ast_node *call = parse_node(p, AST_CALL, at.line, at.col);
    call->name = "assert";
    nodelist args = {0};
    parse_push(p, &args, parse_expr(p));
    if (p->panic)
        return NULL;
    if (p->tok.kind == TK_COMMA) {
        parse_next(p);
        parse_push(p, &args, parse_expr(p));
        if (p->panic)
            return NULL;
    } else {
        ast_node *msg = parse_node(p, AST_STRING, at.line, at.col);
        msg->str = "assertion failed";
        parse_push(p, &args, msg);
    }
    parse_set_list(call, &args);
    ast_node *n = parse_node(p, AST_EXPR, at.line, at.col);
    n->a = call;
    return n;
}

/* Whether the '(' at the current token closes at the end of the statement, as in
 * assert(C, "message"), rather than opening the condition of `assert (C), "message"`. */
static int call_form(parser *p)
{
    lexer lx;
    char err[8];
    lex_init_text(&lx, p->lx.src + p->tok.start, p->lx.len - p->tok.start, err, sizeof err);
    int depth = 0;
    for (;;) {
        lex_token x = lex_next(&lx);
        if (x.kind == TK_EOF)
            return 1;
        if (x.kind == TK_LPAREN || x.kind == TK_LBRACKET)
            depth++;
        else if (x.kind == TK_RPAREN || x.kind == TK_RBRACKET)
            depth--;
        if (depth > 0)
            continue;
        x = lex_next(&lx);
        return x.kind == TK_EOF || x.kind == TK_NEWLINE || x.kind == TK_SEMI || x.kind == TK_RBRACE;
    }
}

/* `TARGET, ... = EXPR` or a call used as a statement. */
static ast_node *parse_simple(parser *p)
{
    lex_token t = p->tok;
    switch (t.kind) {
    case TK_NAME: case TK_INT: case TK_REAL: case TK_STRING: case TK_TRUE: case TK_FALSE:
    case TK_LPAREN: case TK_MINUS: case TK_NOT: case TK_NONE:
        break;
    default:
        parse_expected(p, "a statement");
        return NULL;
    }
    if (lex_is(&p->lx, &t, "def")) {
        parse_syntax_error(p, t.line, t.col,
                           "'def' is Python: a graph may be defined here, graph NAME(x: TYPE) -> (y: TYPE) { ... }, "
                           "and reads this graph's variables as they are at each call");
        return NULL;
    }
    if (lex_is(&p->lx, &t, "assert")) {
        /* Python's `assert c, "message"` beside cfx's assert(c, "message") */
        parse_next(p);
        if (p->tok.kind != TK_LPAREN || !call_form(p))
            return parse_python_assert(p, t);
        ast_node *call = parse_node(p, AST_CALL, t.line, t.col);
        call->name = "assert";
        parse_args(p, call);
        if (p->panic)
            return NULL;
        if (call->nlist == 1) {
            /* `assert(C)`, Python's `assert (C)`: the message "assertion failed" */
            nodelist args = {0};
            parse_push(p, &args, call->list[0]);
            ast_node *msg = parse_node(p, AST_STRING, t.line, t.col);
            msg->str = "assertion failed";
            parse_push(p, &args, msg);
            parse_set_list(call, &args);
        }
        ast_node *n = parse_node(p, AST_EXPR, t.line, t.col);
        n->a = call;
        return n;
    }
    ast_node *first = parse_expr(p);
    if (p->panic)
        return NULL;
    if (first->kind == AST_NAME && !(first->flags & AST_F_PAREN) && p->tok.kind != TK_COMMA &&
        p->tok.kind != TK_ASSIGN && aug_op(p->tok.kind) < 0) {
        const char *why = unsupported_word(first->name);
        if (why) {
            parse_syntax_error(p, t.line, t.col, "%s", why);
            return NULL;
        }
    }
    if (p->tok.kind == TK_COLON) {
        parse_syntax_error(p, p->tok.line, p->tok.col,
                           "annotated assignment (x: TYPE = ...) is not supported: write x = ..., with "
                           "cast(...) for another dtype");
        return NULL;
    }
    if (p->tok.kind != TK_COMMA && p->tok.kind != TK_ASSIGN && aug_op(p->tok.kind) < 0) {
        if (first->kind != AST_CALL) {
            parse_syntax_error(p, t.line, t.col, "an expression alone is not a statement (assign it, or call an op)");
            return NULL;
        }
        ast_node *n = parse_node(p, AST_EXPR, t.line, t.col);
        n->a = first;
        return n;
    }
    int aug = aug_op(p->tok.kind);
    if (aug >= 0)
        return parse_augmented(p, t, first, aug);
    nodelist targets = {0};
    parse_push(p, &targets, first);
    while (p->tok.kind == TK_COMMA) {
        parse_next(p);
        parse_push(p, &targets, parse_expr(p));
        if (p->panic)
            return NULL;
    }
    lex_token eq = p->tok;
    if (!parse_expect(p, TK_ASSIGN, "'=' after the assignment targets"))
        return NULL;
    if (p->tok.kind == TK_LBRACE) {
        parse_syntax_error(p, p->tok.line, p->tok.col,
                           "dicts and sets are not supported: use one variable per key, or a tensor indexed by an "
                           "integer");
        return NULL;
    }
    ast_node *n = parse_node(p, AST_ASSIGN, t.line, t.col);
    n->a = parse_values(p);
    if (p->panic)
        return NULL;
    if (p->tok.kind == TK_ASSIGN) {
        parse_syntax_error(p, p->tok.line, p->tok.col,
                           "chained assignment (a = b = v) is not supported: assign each on a line of its own");
        return NULL;
    }
    parse_set_list(n, &targets);
    /* a target is a name or one row of a named tensor: the lowering writes rows in place */
    for (int i = 0; i < targets.n; i++) {
        ast_node *x = targets.items[i];
        int ok = x->kind == AST_NAME || (x->kind == AST_INDEX && x->a->kind == AST_NAME);
        if (!ok || (x->flags & AST_F_PAREN)) {
            char buf[256];
            parse_report(p, x->line, x->col, "%s", bad_target(x, buf, sizeof buf));
            return NULL;
        }
    }
    /* several targets and one value that is no tuple, a call, a shape or a name (which may hold
     * a tuple): reported by the checker, which knows what the value is */
    (void)eq;
    return n;
}

static ast_node *parse_nested_graph(parser *p);

static ast_node *parse_statement(parser *p)
{
    lex_token t = p->tok;
    ast_node *n;
    switch (t.kind) {
    case TK_IF:
        return parse_if(p);
    case TK_WHILE:
        return parse_while(p);
    case TK_FOR:
        return parse_for(p);
    case TK_SWITCH:
        return parse_switch(p);
    case TK_PASS:
        parse_next(p);
        return parse_node(p, AST_BLOCK, t.line, t.col); /* an empty block: nothing to do */
    case TK_GRAPH:
        return parse_nested_graph(p);
    case TK_BREAK:
    case TK_CONTINUE:
    case TK_RETURN:
        parse_next(p);
        n = parse_node(p, t.kind == TK_BREAK ? AST_BREAK : t.kind == TK_CONTINUE ? AST_CONTINUE : AST_RETURN, t.line,
                 t.col);
        if (t.kind == TK_RETURN && !ends_statement(p->tok.kind))
            n->a = parse_values(p); /* `return a, b`: the results' values */
        return n;
    case TK_ELIF:
    case TK_ELSE:
        parse_syntax_error(p, t.line, t.col, "'%s' without 'if' (it goes on the line of the '}' before it)",
                     lex_kind_name(t.kind));
        return NULL;
    case TK_CASE:
    case TK_DEFAULT:
        parse_syntax_error(p, t.line, t.col, "'%s' outside a switch", lex_kind_name(t.kind));
        return NULL;
    default:
        return parse_simple(p);
    }
}

/* What a statement that did not parse stands in for: an AST_ERROR with the names the text from
 * `from` up to the current token seems to assign (`NAME =`, `NAME op=`, `a, b =`, `for NAME in`),
 * so that the checker goes on without reporting their uses, which the first error explains. */
static ast_node *broken_statement(parser *p, const lex_token *from)
{
    ast_node *n = parse_node(p, AST_ERROR, from->line, from->col);
    if (!p->arena || p->stop || p->tok.start <= from->start)
        return n;
    lexer lx;
    char err[8];
    lex_init_text(&lx, p->lx.src + from->start, p->tok.start - from->start, err, sizeof err);
    nodelist names = {0};
    lex_token run[8]; /* the names of a run `a, b, c`, or of `for a, b` */
    int nrun = 0, sep = 0;
    for (;;) {
        lex_token t = lex_next(&lx);
        if (t.kind == TK_EOF)
            break;
        if (t.kind == TK_NAME) {
            if (sep || nrun == 8) /* a name after a name: a new run */
                nrun = 0;
            run[nrun++] = t;
            sep = 1;
            continue;
        }
        if (t.kind == TK_COMMA && sep) {
            sep = 0; /* another name of the run may follow */
            continue;
        }
        if ((t.kind == TK_ASSIGN || t.kind == TK_IN || aug_op(t.kind) >= 0) && sep)
            for (int i = 0; i < nrun; i++) {
                ast_node *x = parse_node(p, AST_NAME, from->line, from->col);
                x->name = ast_strdup(p->arena, lx.src + run[i].start, run[i].len);
                if (x->name)
                    parse_push(p, &names, x);
            }
        nrun = 0;
        sep = 0;
    }
    parse_set_list(n, &names);
    return n;
}

static ast_node *parse_block(parser *p, const char *after)
{
    lex_token open = p->tok;
    ast_node *b = parse_node(p, AST_BLOCK, open.line, open.col);
    if (!open_group(p, after))
        return b;
    nodelist stmts = {0};
    for (;;) {
        if (group_ends(p, "block", open.line))
            break;
        int line = p->stmt_line, col = p->stmt_col;
        lex_token start = p->tok;
        p->stmt_line = p->tok.line;
        p->stmt_col = p->tok.col;
        ast_node *s = parse_statement(p);
        p->stmt_line = line;
        p->stmt_col = col;
        if (s && !p->panic)
            parse_push(p, &stmts, s);
        if (!p->panic && !ends_statement(p->tok.kind))
            parse_expected(p, "a newline or ';' after the statement");
        if (p->panic) {
            sync_statement(p);
            p->panic = 0;
            /* the checker goes on past it (every independent error is reported) */
            parse_push(p, &stmts, broken_statement(p, &start));
        }
    }
    parse_leave(p);
    parse_set_list(b, &stmts);
    return b;
}

/* ---- graphs ------------------------------------------------------------------------ */

/* `NAME: TYPE, ...` up to the closing ')', which is left for the caller; a parameter may have a
 * default, `NAME: TYPE = VALUE`, and once one has, every later one must, as in Python. */
static int parse_decls(parser *p, const char *what, ast_param **out, int *count)
{
    ast_param *items = NULL;
    int n = 0, cap = 0, defaulted = -1;
    while (p->tok.kind != TK_RPAREN) {
        char msg[64];
        if (p->tok.kind != TK_NAME) {
            snprintf(msg, sizeof msg, "a %s name", what);
            parse_expected(p, msg);
            return 0;
        }
        lex_token name = p->tok;
        parse_next(p);
        snprintf(msg, sizeof msg, "':' and a type after the %s name", what);
        if (!parse_expect(p, TK_COLON, msg))
            return 0;
        cfx_type type, items_of[16];
        int ntuple = 0;
        if (p->tok.kind == TK_LPAREN) {
            /* `p: (T0, T1, ...)`: a tuple, declared as one parameter per item */
            lex_token open = p->tok;
            parse_next(p);
            while (!p->panic) {
                cfx_type it;
                parse_type(p, &it);
                if (p->panic)
                    return 0;
                if (ntuple == 16) {
                    parse_report(p, open.line, open.col, "a tuple parameter has at most 16 items");
                    return 0;
                }
                items_of[ntuple++] = it;
                if (p->tok.kind == TK_COMMA) {
                    parse_next(p);
                    if (p->tok.kind == TK_RPAREN)
                        break;
                    continue;
                }
                break;
            }
            if (!parse_expect(p, TK_RPAREN, "',' or ')' in the tuple type"))
                return 0;
            if (strcmp(what, "parameter") != 0) {
                parse_report(p, open.line, open.col, "a result holds one value: declare a result for each item "
                             "of the tuple");
                ntuple = 0;
            }
            memset(&type, 0, sizeof type);
        } else if (!parse_type(p, &type) && !p->panic) {
            type.rank = AST_UNTYPED; /* reported (a shape too large): its uses are not */
        }
        if (p->panic)
            return 0;
        ast_node *def = NULL;
        if (p->tok.kind == TK_ASSIGN) {
            lex_token eq = p->tok;
            parse_next(p);
            def = parse_expr(p);
            if (p->panic)
                return 0;
            if (strcmp(what, "parameter") != 0) {
                parse_report(p, eq.line, eq.col, "a %s has no default value", what);
                def = NULL;
            }
        }
        if (ntuple && def) {
            parse_report(p, def->line, def->col, "a tuple parameter has no default value");
            def = NULL;
        }
        while (n + ntuple + 1 > cap) {
            if (cap > INT_MAX / 4) {
                p->oom = p->lx.oom = 1;
                return 0;
            }
            cap = cap ? cap * 2 : 4;
            ast_param *grown = ast_alloc(p->arena, (size_t)cap * sizeof *grown);
            if (!grown) {
                p->oom = p->lx.oom = 1;
                return 0;
            }
            if (n)
                memcpy(grown, items, (size_t)n * sizeof *items);
            items = grown;
        }
        if (ntuple) {
            const char *tname = parse_token_text(p, &name);
            if (defaulted >= 0)
                parse_report(p, name.line, name.col,
                             "parameter '%s' has no default but follows '%s', which has one (defaults come last, "
                             "as in Python)", tname ? tname : "", items[defaulted].name);
            for (int i = 0; i < ntuple; i++) {
                char buf[300];
                snprintf(buf, sizeof buf, "%s[%d]", tname ? tname : "", i);
                memset(&items[n], 0, sizeof items[n]);
                items[n].name = ast_strdup(p->arena, buf, strlen(buf));
                items[n].type = items_of[i];
                items[n].line = name.line;
                items[n].col = name.col;
                items[n].tuple_of = tname;
                items[n].tuple_index = i;
                n++;
            }
        } else {
            items[n].name = parse_token_text(p, &name);
            items[n].type = type;
            items[n].line = name.line;
            items[n].col = name.col;
            items[n].def = def;
            if (def && defaulted < 0)
                defaulted = n;
            else if (!def && defaulted >= 0)
                parse_report(p, name.line, name.col,
                             "parameter '%s' has no default but follows '%s', which has one (defaults come last, "
                             "as in Python)",
                             items[n].name, items[defaulted].name);
            n++;
        }
        if (p->tok.kind == TK_COMMA) {
            parse_next(p);
            continue;
        }
        if (p->tok.kind != TK_RPAREN) {
            snprintf(msg, sizeof msg, "',' or ')' after the %s", what);
            parse_expected(p, msg);
            return 0;
        }
    }
    *out = items;
    *count = n;
    return 1;
}

/* Duplicate names among a graph's parameters and results. */
static void check_names(parser *p, const ast_graph *g)
{
    /* the value remembered is 0 for a parameter, 1 for a result */
    nameset seen = {0};
    int first;
    for (int i = 0; i < g->nparams; i++) {
        const ast_param *x = &g->params[i];
        if (nameset_add(p, &seen, x->name, 0, &first))
            parse_report(p, x->line, x->col, "parameter '%s' is declared twice", x->name);
    }
    for (int i = 0; i < g->nresults; i++) {
        const ast_param *x = &g->results[i];
        if (!nameset_add(p, &seen, x->name, 1, &first))
            continue;
        if (first == 0)
            parse_report(p, x->line, x->col, "'%s' is both a parameter and a result", x->name);
        else
            parse_report(p, x->line, x->col, "result '%s' is declared twice", x->name);
    }
}

/* `graph NAME(DECLS) -> (DECLS) BLOCK`; 1 when g holds a graph (its body may have errors). */
static int parse_graph(parser *p, ast_graph *g)
{
    memset(g, 0, sizeof *g);
    g->line = p->tok.line;
    g->col = p->tok.col;
    parse_next(p); /* `graph` */
    if (p->tok.kind != TK_NAME) {
        parse_expected(p, "a graph name after 'graph'");
        return 0;
    }
    g->name = parse_token_text(p, &p->tok);
    if (p->nesting >= 0 && g->name) {
        /* inside another graph: `outer.inner`, the module's name for it */
        char full[512];
        snprintf(full, sizeof full, "%s.%s", p->graph_name ? p->graph_name : "", g->name);
        g->name = ast_strdup(p->arena, full, strlen(full));
    }
    p->graph_name = g->name;
    p->graph_nodes = 0;
    p->stmt_line = g->line;
    p->stmt_col = g->col;
    parse_next(p);
    if (!parse_expect(p, TK_LPAREN, "'(' after the graph name"))
        return 0;
    if (!parse_decls(p, "parameter", &g->params, &g->nparams))
        return 0;
    parse_next(p); /* ')' */
    if (!parse_expect(p, TK_ARROW, "'->' and the results after the parameters"))
        return 0;
    if (p->tok.kind == TK_LPAREN) {
        parse_next(p);
        if (!parse_decls(p, "result", &g->results, &g->nresults))
            return 0;
        parse_next(p); /* ')' */
    } else if (p->tok.kind == TK_NAME) {
        /* `-> y: f32`: one result without parentheses */
        lex_token name = p->tok;
        parse_next(p);
        if (!parse_expect(p, TK_COLON, "':' and a type after the result name"))
            return 0;
        g->results = ast_alloc(p->arena, sizeof *g->results);
        if (!g->results) {
            p->oom = p->lx.oom = 1;
            return 0;
        }
        parse_type(p, &g->results[0].type);
        if (p->panic)
            return 0;
        g->results[0].name = parse_token_text(p, &name);
        g->results[0].line = name.line;
        g->results[0].col = name.col;
        g->nresults = 1;
    } else {
        parse_expected(p, "'(' and the results after '->'");
        return 0;
    }
    check_names(p, g);
    if (p->tok.kind != TK_LBRACE) {
        parse_expected(p, "'{' after the results");
        return 0;
    }
    g->body = parse_block(p, "after the results");
    return 1;
}

/* A graph defined inside the body of the one being parsed: it becomes a graph of the module,
 * named `outer.inner`, appended after the file's graph that holds it (parse_module); the
 * statement is an AST_DEF that names it. */
static ast_node *parse_nested_graph(parser *p)
{
    lex_token t = p->tok;
    if (p->nnested == p->capnested) {
        int cap = p->capnested ? p->capnested * 2 : 4;
        ast_graph *ng = realloc(p->nested, (size_t)cap * sizeof *ng);
        int *ni = ng ? realloc(p->nested_in, (size_t)cap * sizeof *ni) : NULL;
        if (ng)
            p->nested = ng;
        if (!ng || !ni) {
            p->oom = p->lx.oom = 1;
            return NULL;
        }
        p->nested_in = ni;
        p->capnested = cap;
    }
    int at = p->nnested++, outer = p->nesting;
    const char *outer_name = p->graph_name;
    int64_t outer_nodes = p->graph_nodes;
    memset(&p->nested[at], 0, sizeof p->nested[at]);
    p->nested_in[at] = outer;
    p->nesting = at;
    ast_graph g;
    int ok = parse_graph(p, &g);
    p->nesting = outer;
    p->graph_name = outer_name;
    p->graph_nodes += outer_nodes;
    if (!ok || !g.name) {
        p->nnested--; /* reported; nothing inside it was kept after it */
        if (p->nnested > at)
            p->nnested = at;
        return NULL;
    }
    ast_node *n = parse_node(p, AST_DEF, t.line, t.col);
    const char *local = strrchr(g.name, '.');
    n->name = local ? local + 1 : g.name;
    n->a = parse_node(p, AST_NAME, t.line, t.col);
    n->a->name = g.name;
    p->nested[at] = g;
    return n;
}

/* ---- constants of the module ---------------------------------------------------------- *
 * `const NAME: TYPE = VALUE`, `const NAME: TYPE = "PATH.npy"` or `const NAME: TYPE`. A literal
 * value is read token by token straight into the constant's data, never into nodes: an
 * importer's weights may hold millions of numbers. */

static void shape_text(const cfx_type *t, char *buf, size_t n);

/* One element of a constant's literal: a number, maybe negated, true, false, inf or nan. */
typedef struct const_elem {
    int real;   /* rv holds it (a real literal, inf, nan) */
    int boolean;
    int64_t iv; /* an integer's value, a bool's 0 or 1 */
    double rv;
    int line, col;
} const_elem;

static void const_type_text(const cfx_type *t, char *buf, size_t n)
{
    if (t->rank == 0) {
        shape_text(t, buf, n);
        char *b = strchr(buf, '[');
        if (b)
            *b = '\0';
        return;
    }
    shape_text(t, buf, n);
}

/* The current token as an element of constant c into *e; 0, or -1 after a syntax error. */
static int const_element(parser *p, const ast_const *c, const char *where, const_elem *e)
{
    memset(e, 0, sizeof *e);
    e->line = p->tok.line;
    e->col = p->tok.col;
    int neg = 0;
    if (p->tok.kind == TK_MINUS) {
        neg = 1;
        p->lx.negated = 1; /* -9223372036854775808 is an i64 */
        parse_next(p);
        p->lx.negated = 0;
    }
    lex_token t = p->tok;
    if (t.kind == TK_INT && !t.bad) {
        if (t.ival == INT64_MIN && !neg) {
            parse_syntax_error(p, t.line, t.col, "integer literal is too large");
            return -1;
        }
        e->iv = neg && t.ival != INT64_MIN ? -t.ival : t.ival;
        e->rv = neg ? -(double)t.ival : (double)t.ival;
        if (t.ival == INT64_MIN)
            e->rv = -0x1p63;
    } else if (t.kind == TK_REAL && !t.bad) {
        e->real = 1;
        e->rv = neg ? -t.rval : t.rval;
    } else if (t.kind == TK_NAME && (lex_is(&p->lx, &t, "inf") || lex_is(&p->lx, &t, "nan"))) {
        e->real = 1;
        e->rv = lex_is(&p->lx, &t, "inf") ? (double)INFINITY : (double)NAN;
        if (neg)
            e->rv = -e->rv;
    } else if (!neg && (t.kind == TK_TRUE || t.kind == TK_FALSE)) {
        e->boolean = 1;
        e->iv = t.kind == TK_TRUE;
    } else {
        if (t.bad) { /* the lexer reported the literal */
            p->panic = 1;
            return -1;
        }
        char msg[300], ty[160];
        const_type_text(&c->type, ty, sizeof ty);
        snprintf(msg, sizeof msg, "a value of '%s' (%s)%s", c->name, ty, where);
        parse_expected(p, msg);
        return -1;
    }
    parse_next(p);
    return 0;
}

/* Element e of constant c, stored at index i of its data; 0, or -1 (reported) when the dtype
 * cannot hold it. */
static int const_store(parser *p, ast_const *c, int64_t i, const const_elem *e)
{
    char ty[160];
    const_type_text(&c->type, ty, sizeof ty);
    switch (c->type.dtype) {
    case CFX_BOOL:
        if (e->real || (!e->boolean && e->iv != 0 && e->iv != 1)) {
            parse_syntax_error(p, e->line, e->col, "'%s' is %s: its values are true or false", c->name, ty);
            return -1;
        }
        ((uint8_t *)c->data)[i] = (uint8_t)(e->iv != 0);
        return 0;
    case CFX_F32:
    case CFX_F64:
        if (e->boolean) {
            parse_syntax_error(p, e->line, e->col, "'%s' is %s: its values are numbers, not true or false", c->name,
                               ty);
            return -1;
        }
        if (c->type.dtype == CFX_F64) {
            ((double *)c->data)[i] = e->rv;
            return 0;
        }
        if (isfinite(e->rv) && fabs(e->rv) >= 0x1.ffffffp127) { /* rounds to infinity as an f32 */
            parse_syntax_error(p, e->line, e->col, "%.9g does not fit in f32 (largest 3.4028235e+38)", e->rv);
            return -1;
        }
        ((float *)c->data)[i] = (float)e->rv;
        return 0;
    case CFX_I32:
    case CFX_I64:
    default:
        if (e->real || e->boolean) {
            parse_syntax_error(p, e->line, e->col, "'%s' is %s: its values are integers", c->name, ty);
            return -1;
        }
        if (c->type.dtype == CFX_I32) {
            if (e->iv > INT32_MAX || e->iv < INT32_MIN) {
                parse_syntax_error(p, e->line, e->col, "integer literal %lld does not fit in i32", (long long)e->iv);
                return -1;
            }
            ((int32_t *)c->data)[i] = (int32_t)e->iv;
            return 0;
        }
        ((int64_t *)c->data)[i] = e->iv;
        return 0;
    }
}

/* The rows of dimension `dim` of constant c, from the current '[', into its data from element
 * *at on; 0, or -1 after an error (reported). */
static int const_rows(parser *p, ast_const *c, int dim, int64_t *at)
{
    char ty[160];
    if (dim >= CFX_TYPE_MAX_RANK || dim >= c->type.rank)
        return -1;
    const_type_text(&c->type, ty, sizeof ty);
    lex_token open = p->tok;
    parse_next(p); /* '[' */
    int64_t n = 0, want = c->type.dims[dim];
    while (p->tok.kind != TK_RBRACKET) {
        if (n == want) {
            parse_syntax_error(p, open.line, open.col, "'%s' is %s: dimension %d holds %lld items, this list has more",
                               c->name, ty, dim, (long long)want);
            return -1;
        }
        if (dim + 1 < c->type.rank && dim + 1 < CFX_TYPE_MAX_RANK) {
            if (p->tok.kind != TK_LBRACKET) {
                char msg[300];
                snprintf(msg, sizeof msg, "'[' and the %lld items of dimension %d of '%s' (%s)",
                         (long long)c->type.dims[dim + 1], dim + 1, c->name, ty);
                parse_expected(p, msg);
                return -1;
            }
            if (const_rows(p, c, dim + 1, at) < 0)
                return -1;
        } else {
            const_elem e;
            if (p->tok.kind == TK_LBRACKET) {
                parse_syntax_error(p, p->tok.line, p->tok.col, "'%s' is %s: it has %d dimension%s, this list nests "
                                   "deeper", c->name, ty, c->type.rank, c->type.rank == 1 ? "" : "s");
                return -1;
            }
            if (const_element(p, c, "", &e) < 0 || const_store(p, c, (*at)++, &e) < 0)
                return -1;
        }
        n++;
        if (p->tok.kind == TK_COMMA) {
            parse_next(p);
            continue;
        }
        if (p->tok.kind != TK_RBRACKET) {
            parse_expected(p, "',' or ']' in the constant's value");
            return -1;
        }
    }
    if (n < want) {
        parse_syntax_error(p, open.line, open.col, "'%s' is %s: dimension %d holds %lld items, this list has %lld",
                           c->name, ty, dim, (long long)want, (long long)n);
        return -1;
    }
    parse_next(p); /* ']' */
    return 0;
}

/* The value of constant c after its '=': a literal into c->data, or a path into c->path. */
static void const_value(parser *p, ast_const *c)
{
    c->vline = p->tok.line;
    c->vcol = p->tok.col;
    if (p->tok.kind == TK_STRING) {
        c->path = lex_string_value(&p->lx, &p->tok, p->arena);
        if (!c->path) {
            p->oom = p->lx.oom = 1;
            return;
        }
        size_t n = strlen(c->path);
        if (n < 4 || strcmp(c->path + n - 4, ".npy") != 0) {
            parse_report(p, c->vline, c->vcol, "the value of '%s' is a .npy file: \"%s\" does not end in .npy",
                         c->name, c->path);
            c->bad = 1;
        }
        parse_next(p);
        return;
    }
    int one = p->tok.kind != TK_LBRACKET; /* one value for every element */
    size_t bytes = (size_t)(one ? 1 : cfx_type_count(&c->type)) * (size_t)cfx_dtype_size(c->type.dtype);
    c->data = ast_alloc(p->arena, bytes);
    if (!c->data) {
        p->oom = p->lx.oom = 1;
        return;
    }
    int64_t at = 0;
    int failed;
    if (p->tok.kind == TK_LBRACKET) {
        if (c->type.rank == 0) {
            char ty[160];
            const_type_text(&c->type, ty, sizeof ty);
            parse_syntax_error(p, p->tok.line, p->tok.col, "'%s' is %s, a scalar: its value is one number, not a "
                               "list", c->name, ty);
            failed = 1;
        } else {
            failed = const_rows(p, c, 0, &at) < 0;
        }
    } else {
        /* one value fills every element (compile.c makes them) */
        const_elem e;
        failed = const_element(p, c, ", or a list of them", &e) < 0 || const_store(p, c, 0, &e) < 0;
        c->fill = c->type.rank > 0;
    }
    if (failed) {
        c->data = NULL;
        c->bad = 1;
    }
}

/* Appends constant c to m->consts, unless its name was declared already (reported). */
static void add_const(parser *p, ast_module *m, int *cap, nameset *names, const ast_const *c)
{
    int first;
    if (nameset_add(p, names, c->name, c->line, &first)) {
        parse_report(p, c->line, c->col, "constant '%s' is declared twice (the first is at line %d)", c->name, first);
        return;
    }
    if (p->oom)
        return;
    if (m->nconsts == *cap) {
        if (*cap > INT_MAX / 4) {
            p->oom = p->lx.oom = 1;
            return;
        }
        int ncap = *cap ? *cap * 2 : 8;
        ast_const *grown = ast_alloc(p->arena, (size_t)ncap * sizeof *grown);
        if (!grown) {
            p->oom = p->lx.oom = 1;
            return;
        }
        if (m->nconsts)
            memcpy(grown, m->consts, (size_t)m->nconsts * sizeof *grown);
        m->consts = grown;
        *cap = ncap;
    }
    m->consts[m->nconsts++] = *c;
}

/* `const NAME: TYPE [= VALUE]` at the top level, the current token being `const`; appended to
 * m->consts. A syntax error goes on at the next line outside brackets. */
static void parse_const(parser *p, ast_module *m, int *cap, nameset *names)
{
    parse_next(p); /* `const` */
    ast_const c;
    memset(&c, 0, sizeof c);
    if (p->tok.kind != TK_NAME) {
        parse_expected(p, "a constant's name after 'const'");
        goto skip;
    }
    c.name = parse_token_text(p, &p->tok);
    c.line = p->tok.line;
    c.col = p->tok.col;
    parse_next(p);
    if (!parse_expect(p, TK_COLON, "':' and a type after the constant's name"))
        goto skip;
    if (!parse_type(p, &c.type)) {
        if (p->panic)
            goto skip;
        c.bad = 1; /* reported: a type that cannot be used */
    }
    if (p->tok.kind == TK_ASSIGN) {
        parse_next(p);
        if (c.bad) {
            /* skip the value: it cannot be stored (to the end of the file where a bracket
             * never closes) */
            while (p->tok.kind != TK_EOF &&
                   (!(p->tok.kind == TK_NEWLINE || p->tok.kind == TK_SEMI) || p->lx.paren > 0))
                parse_next(p);
        } else {
            const_value(p, &c);
            if (p->panic)
                goto skip;
        }
    }
    if (p->tok.kind != TK_NEWLINE && p->tok.kind != TK_SEMI && p->tok.kind != TK_EOF) {
        parse_expected(p, c.path || c.data ? "the end of the line after the constant's value"
                                           : "'=' and a value, or the end of the line, after the constant's type");
        goto skip;
    }
    add_const(p, m, cap, names, &c);
    return;
skip:
    /* a broken declaration keeps its name, so that its reads are no errors of their own */
    if (c.name) {
        c.bad = 1;
        c.data = NULL;
        c.path = NULL;
        add_const(p, m, cap, names, &c);
    }
    while (p->tok.kind != TK_EOF && p->tok.kind != TK_GRAPH && !(p->lx.paren == 0 && p->tok.kind == TK_NEWLINE))
        parse_next(p);
}

ast_module *parse_module(const char *src, size_t len, diag *d)
{
    ast_arena *arena = ast_arena_new();
    if (!arena)
        return NULL;
    ast_module *m = ast_alloc(arena, sizeof *m);
    if (!m) {
        ast_arena_free(arena);
        return NULL;
    }
    m->arena = arena;

    parser p;
    memset(&p, 0, sizeof p);
    lex_init(&p.lx, src, len, d);
    p.arena = arena;
    p.nesting = -1;
    parse_next(&p);

    nameset names = {0}, constnames = {0};
    int cap = 0, capconsts = 0, seen_graph = 0;
    for (;;) {
        while (p.tok.kind == TK_NEWLINE || p.tok.kind == TK_SEMI)
            parse_next(&p);
        if (p.tok.kind == TK_EOF)
            break;
        p.panic = 0;
        p.unclosed = 0;
        if (p.tok.kind == TK_NAME && lex_is(&p.lx, &p.tok, "const")) {
            parse_const(&p, m, &capconsts, &constnames);
            continue;
        }
        if (p.tok.kind != TK_GRAPH) {
            /* something other than a graph: say what to write, then go on at the next graph or
             * at the next line that starts in column 1 (Python's next top-level item) */
            const char *why = NULL;
            if (lex_is(&p.lx, &p.tok, "def"))
                why = "'def' is Python: write graph NAME(x: TYPE) -> (y: TYPE) { ... }";
            else if (p.tok.kind == TK_AT)
                why = "decorators (@...) are not supported: a graph compiles as it is written";
            else if (p.tok.kind == TK_NAME) {
                char w[16] = "";
                if (p.tok.len < sizeof w)
                    memcpy(w, p.lx.src + p.tok.start, p.tok.len), w[p.tok.len] = 0;
                why = unsupported_word(w);
                if (!why)
                    why = "statements go inside a graph: graph NAME(x: TYPE) -> (y: TYPE) { ... } (a constant "
                          "of the file is written const NAME: TYPE = VALUE)";
            }
            if (why)
                parse_syntax_error(&p, p.tok.line, p.tok.col, "%s", why);
            else
                parse_expected(&p, "'graph'");
            int at_line_start = 0;
            parse_next(&p);
            while (p.tok.kind != TK_GRAPH && p.tok.kind != TK_EOF && !(at_line_start && p.tok.col == 1 && p.tok.kind != TK_RBRACE)) {
                at_line_start = p.tok.kind == TK_NEWLINE;
                parse_next(&p);
            }
            continue;
        } else {
            seen_graph = 1;
            ast_graph g;
            int first = 0;
            int ok = parse_graph(&p, &g);
            if (!ok && g.name && m->nbroken < 64) {
                /* its calls are no errors of their own: the header's error explains them */
                if (!m->broken)
                    m->broken = ast_alloc(arena, 64 * sizeof *m->broken);
                if (m->broken)
                    m->broken[m->nbroken++] = g.name;
            }
            if (ok) {
                if (nameset_add(&p, &names, g.name, g.line, &first)) {
                    parse_report(&p, g.line, g.col, "graph '%s' is defined twice (the first is at line %d)", g.name,
                           first);
                } else {
                    if (m->ngraphs == cap) {
                        if (cap > INT_MAX / 4) {
                            p.oom = 1;
                            break;
                        }
                        int ncap = cap ? cap * 2 : 4;
                        ast_graph *grown = ast_alloc(arena, (size_t)ncap * sizeof *grown);
                        if (!grown) {
                            p.oom = 1;
                            break;
                        }
                        if (m->ngraphs)
                            memcpy(grown, m->graphs, (size_t)m->ngraphs * sizeof *grown);
                        m->graphs = grown;
                        cap = ncap;
                    }
                    m->graphs[m->ngraphs++] = g;
                    /* then the graphs defined inside it, each after the one that holds it */
                    int gi = m->ngraphs - 1, base = m->ngraphs;
                    for (int i = 0; i < p.nnested && !p.oom; i++) {
                        ast_graph x = p.nested[i];
                        x.enclosing = 1 + (p.nested_in[i] < 0 ? gi : base + p.nested_in[i]);
                        if (nameset_add(&p, &names, x.name, x.line, &first)) {
                            /* two of one name inside one graph: keep the first */
                            const char *local = strrchr(x.name, '.');
                            parse_report(&p, x.line, x.col, "graph '%s' is defined twice here (the first is at "
                                         "line %d)", local ? local + 1 : x.name, first);
                            char other[600];
                            snprintf(other, sizeof other, "%s#%d", x.name, i + 2);
                            x.name = ast_strdup(arena, other, strlen(other)); /* kept, checked, never called */
                        }
                        if (m->ngraphs == cap) {
                            int ncap = cap * 2;
                            ast_graph *grown = ast_alloc(arena, (size_t)ncap * sizeof *grown);
                            if (!grown) {
                                p.oom = 1;
                                break;
                            }
                            memcpy(grown, m->graphs, (size_t)m->ngraphs * sizeof *grown);
                            m->graphs = grown;
                            cap = ncap;
                        }
                        m->graphs[m->ngraphs++] = x;
                    }
                }
            }
            p.nnested = 0;
        }
        if (p.panic) {
            /* a broken header: go on at the next graph */
            while (p.tok.kind != TK_GRAPH && p.tok.kind != TK_EOF)
                parse_next(&p);
        }
    }
    free(p.nested);
    free(p.nested_in);
    /* a file whose only graph was refused above (`def g(x):`) has had its error */
    if (!seen_graph && !p.oom && (!d || d->errors == 0))
        parse_report(&p, 1, 1, "no graph in file");
    if (p.stop)
        m->ngraphs = 0; /* the graph cut short holds the parser's throwaway node: keep none */
    if (p.oom) {
        ast_arena_free(arena);
        return NULL;
    }
    return m;
}

/* ---- type texts -------------------------------------------------------------------- */

int parse_type_text(const char *text, cfx_type *out, char *err, size_t errlen)
{
    parser p;
    memset(&p, 0, sizeof p);
    lex_init_text(&p.lx, text ? text : "", text ? strlen(text) : 0, err, errlen);
    parse_next(&p);
    cfx_type t;
    parse_type(&p, &t);
    if (!p.panic && p.tok.kind != TK_EOF)
        parse_expected(&p, "the end of the type");
    if (p.lx.errors)
        return -1;
    *out = t;
    return 0;
}

/* `(TYPE, ...)`, the current token being '('; at most max types. */
static int parse_type_list(parser *p, cfx_type *types, int max, int *count, const char *what)
{
    int n = 0;
    parse_next(p);
    while (p->tok.kind != TK_RPAREN) {
        cfx_type t;
        lex_token at = p->tok;
        parse_type(p, &t);
        if (p->panic)
            return -1;
        if (n >= max) {
            parse_report(p, at.line, at.col, "more than %d %s", max, what);
            return -1;
        }
        types[n++] = t;
        if (p->tok.kind == TK_COMMA) {
            parse_next(p);
            continue;
        }
        if (p->tok.kind != TK_RPAREN) {
            parse_expected(p, "',' or ')' after the type");
            return -1;
        }
    }
    parse_next(p);
    *count = n;
    return 0;
}

int parse_signature(const char *sig, cfx_type *params, int maxp, int *np, cfx_type *results, int maxr, int *nr,
                    char *err, size_t errlen)
{
    parser p;
    memset(&p, 0, sizeof p);
    lex_init_text(&p.lx, sig ? sig : "", sig ? strlen(sig) : 0, err, errlen);
    parse_next(&p);
    int nparams = 0, nresults = 0;
    if (p.tok.kind != TK_LPAREN) {
        parse_expected(&p, "'(' to start the parameter types");
        return -1;
    }
    if (parse_type_list(&p, params, maxp, &nparams, "parameters") < 0)
        return -1;
    if (!parse_expect(&p, TK_ARROW, "'->' after the parameter types"))
        return -1;
    if (p.tok.kind == TK_LPAREN) {
        if (parse_type_list(&p, results, maxr, &nresults, "results") < 0)
            return -1;
    } else {
        cfx_type t;
        parse_type(&p, &t);
        if (!p.panic && maxr < 1)
            parse_report(&p, 1, 1, "more than %d results", maxr);
        else if (!p.panic)
            results[nresults++] = t;
    }
    if (!p.panic && p.tok.kind != TK_EOF)
        parse_expected(&p, "the end of the signature");
    if (p.lx.errors)
        return -1;
    *np = nparams;
    *nr = nresults;
    return 0;
}


/* ---- types ------------------------------------------------------------------------- */

static const struct {
    const char *name;
    cfx_dtype dtype;
} dtypes[] = {
    {"f32", CFX_F32}, {"f64", CFX_F64}, {"i32", CFX_I32}, {"i64", CFX_I64}, {"bool", CFX_BOOL},
};

static int is_dtype(parser *p, const lex_token *t, cfx_dtype *out)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) {
        if (lex_is(&p->lx, t, dtypes[i].name)) {
            if (out)
                *out = dtypes[i].dtype;
            return 1;
        }
    }
    return 0;
}

/* `f32[2, 3]` for messages. This file's own spelling, so the parser links on its own. */
static void shape_text(const cfx_type *t, char *buf, size_t n)
{
    const char *name = "?";
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].dtype == t->dtype)
            name = dtypes[i].name;
    size_t k = (size_t)snprintf(buf, n, "%s[", name);
    for (int i = 0; i < t->rank && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
}

/* TYPE: DTYPE, DTYPE[] or DTYPE[d0, ...]. Returns 1 for a usable type. A syntax error sets
 * panic; a type that parsed but cannot be used (rank, size) is reported, and *out is then a
 * scalar so that parsing goes on. */
static int parse_type_rest(parser *p, const lex_token *start, cfx_dtype dt, cfx_type *out);

static int parse_type(parser *p, cfx_type *out)
{
    memset(out, 0, sizeof *out);
    lex_token start = p->tok;
    cfx_dtype dt;
    if (!is_dtype(p, &p->tok, &dt)) {
        parse_expected(p, "a type (f32, f64, i32, i64 or bool)");
        return 0;
    }
    parse_next(p);
    return parse_type_rest(p, &start, dt, out);
}

/* The rest of a type after its dtype name (the token start): `[d0, ...]`, `[]` or nothing. */
static int parse_type_rest(parser *p, const lex_token *startp, cfx_dtype dt, cfx_type *out)
{
    lex_token start = *startp;
    memset(out, 0, sizeof *out);
    out->dtype = dt;
    if (p->tok.kind != TK_LBRACKET)
        return 1;
    parse_next(p);
    if (p->tok.kind == TK_RBRACKET) {
        parse_next(p);
        return 1;
    }
    int64_t dims[CFX_TYPE_MAX_RANK];
    int rank = 0, bad = 0;
    for (;;) {
        if (p->tok.kind != TK_INT) {
            parse_expected(p, "a dimension (a positive integer)");
            return 0;
        }
        bad |= p->tok.bad;
        if (rank < CFX_TYPE_MAX_RANK)
            dims[rank] = p->tok.ival;
        if (rank < INT_MAX)
            rank++;
        parse_next(p);
        if (p->tok.kind == TK_COMMA) {
            parse_next(p);
            continue;
        }
        if (p->tok.kind == TK_RBRACKET) {
            parse_next(p);
            break;
        }
        parse_expected(p, "',' or ']' in the shape");
        return 0;
    }
    if (rank > CFX_TYPE_MAX_RANK) {
        parse_report(p, start.line, start.col, "rank %d is more than %d", rank, CFX_TYPE_MAX_RANK);
        return 0;
    }
    if (bad)
        return 0; /* the lexer reported the literal */
    cfx_type t = *out;
    t.rank = rank;
    int64_t count = 1;
    int zero = 0, huge = 0;
    for (int i = 0; i < rank; i++) {
        t.dims[i] = dims[i];
        if (dims[i] == 0)
            zero = 1;
        else if (dims[i] > CFX_MAX_DIM)
            huge = 1;
        else if (!huge && (count *= dims[i]) > CFX_MAX_ELEMENTS)
            huge = 1; /* count <= 2^30 before and dims[i] < 2^31: no overflow */
    }
    if (zero || huge) {
        char text[160];
        shape_text(&t, text, sizeof text);
        parse_report(p, start.line, start.col, zero ? "shape %s has a dimension of 0" : "shape %s is too large", text);
        return 0;
    }
    *out = t;
    return 1;
}

/* ---- expressions ------------------------------------------------------------------- */

/* Precedence, lowest first; `not` sits between `and` and the comparisons. */

static int parse_enter(parser *p)
{
    if (p->depth >= PARSE_MAX_DEPTH) {
        parse_syntax_error(p, p->tok.line, p->tok.col, "nesting is too deep (more than %d levels)", PARSE_MAX_DEPTH);
        return 0;
    }
    p->depth++;
    return 1;
}

static void parse_leave(parser *p) { p->depth--; }


static int binary_op(int kind, int *op)
{
    switch (kind) {
    case TK_OR: *op = OP_OR; return PREC_OR;
    case TK_AND: *op = OP_AND; return PREC_AND;
    case TK_LT: *op = OP_LT; return PREC_COMPARE;
    case TK_LE: *op = OP_LE; return PREC_COMPARE;
    case TK_GT: *op = OP_GT; return PREC_COMPARE;
    case TK_GE: *op = OP_GE; return PREC_COMPARE;
    case TK_EQ: *op = OP_EQ; return PREC_COMPARE;
    case TK_NE: *op = OP_NE; return PREC_COMPARE;
    case TK_IS: *op = -1; return PREC_COMPARE; /* `is` and `is not`: an AST_IS */
    case TK_PIPE: *op = OP_BITOR; return PREC_BITOR;
    case TK_CARET: *op = OP_BITXOR; return PREC_BITXOR;
    case TK_AMP: *op = OP_BITAND; return PREC_BITAND;
    case TK_LSHIFT: *op = OP_LSHIFT; return PREC_SHIFT;
    case TK_RSHIFT: *op = OP_RSHIFT; return PREC_SHIFT;
    case TK_PLUS: *op = OP_ADD; return PREC_ADD;
    case TK_MINUS: *op = OP_SUB; return PREC_ADD;
    case TK_STAR: *op = OP_MUL; return PREC_MUL;
    case TK_SLASH: *op = OP_DIV; return PREC_MUL;
    case TK_PERCENT: *op = OP_MOD; return PREC_MUL;
    case TK_SLASHSLASH: *op = OP_FLOORDIV; return PREC_MUL;
    case TK_AT: *op = OP_MATMUL; return PREC_MUL;
    default: return 0;
    }
}

/* Whether the shape that starts at the current '[' holds integer literals only (or nothing,
 * or something that is no expression: the type parser reports it). */
static int literal_dims(parser *p)
{
    lexer lx;
    char err[8];
    lex_init_text(&lx, p->lx.src + p->tok.start, p->lx.len - p->tok.start, err, sizeof err);
    lex_next(&lx); /* '[' */
    for (;;) {
        lex_token x = lex_next(&lx);
        if (x.kind == TK_RBRACKET)
            return 1;
        if (x.kind != TK_INT)
            return x.kind != TK_NAME && x.kind != TK_LPAREN;
        x = lex_next(&lx);
        if (x.kind == TK_RBRACKET)
            return 1;
        if (x.kind != TK_COMMA)
            return 0;
    }
}

/* `(ARG, ...)` after a call's name; the current token is '('. An argument that starts with
 * a dtype name is a type (`zeros(f32[3])`, `cast(x, f64)`). */
static void parse_args(parser *p, ast_node *call)
{
    nodelist args = {0};
    parse_next(p);
    while (p->tok.kind != TK_RPAREN) {
        ast_node *arg;
        cfx_dtype dt;
        if (is_dtype(p, &p->tok, &dt)) {
            /* a type, or a call of a dtype's name: bool(x) */
            lex_token t = p->tok;
            parse_next(p);
            if (p->tok.kind == TK_LPAREN) {
                arg = parse_node(p, AST_CALL, t.line, t.col);
                arg->name = parse_token_text(p, &t);
                parse_args(p, arg);
            } else {
                arg = parse_node(p, AST_TYPE, t.line, t.col);
                if (p->tok.kind == TK_LBRACKET && !literal_dims(p)) {
                    /* f32[x.shape[0], n], f32[x.shape]: the checker finds the dimensions */
                    parse_next(p);
                    nodelist dims = {0};
                    while (!p->panic) {
                        parse_push(p, &dims, parse_expr(p));
                        if (p->tok.kind == TK_COMMA) {
                            parse_next(p);
                            continue;
                        }
                        parse_expect(p, TK_RBRACKET, "',' or ']' in the shape");
                        break;
                    }
                    parse_set_list(arg, &dims);
                    arg->flags |= AST_F_DIMS;
                    arg->ty.dtype = dt;
                } else {
                    parse_type_rest(p, &t, dt, &arg->ty);
                }
            }
        } else {
            arg = parse_expr(p);
            if (p->tok.kind == TK_ASSIGN && !p->panic && arg->kind == AST_NAME && !(arg->flags & AST_F_PAREN)) {
                /* `name=value`: an argument given by name */
                ast_node *kw = parse_node(p, AST_KWARG, arg->line, arg->col);
                kw->name = arg->name;
                parse_next(p);
                kw->a = parse_expr(p);
                arg = kw;
            }
        }
        parse_push(p, &args, arg);
        if (p->panic)
            break;
        if (p->tok.kind == TK_COMMA) {
            parse_next(p);
            continue;
        }
        if (p->tok.kind == TK_FOR && args.n == 1)
            parse_syntax_error(p, p->tok.line, p->tok.col, "a generator expression is not taken: put the "
                               "comprehension in brackets and make a tensor of it, %s(stack([... for ...])), or "
                               "write the elementwise expression, as in sum(x * 2.0)", call->name);
        else if (p->tok.kind != TK_RPAREN)
            parse_expected(p, "',' or ')' after the argument");
        break;
    }
    if (!p->panic)
        parse_next(p); /* ')' */
    parse_set_list(call, &args);
}

static ast_node *parse_primary(parser *p)
{
    lex_token t = p->tok;
    ast_node *n;
    switch (t.kind) {
    case TK_INT:
        n = parse_node(p, AST_INT, t.line, t.col);
        n->ival = t.ival;
        parse_next(p);
        return n;
    case TK_REAL:
        n = parse_node(p, AST_REAL, t.line, t.col);
        n->rval = t.rval;
        parse_next(p);
        return n;
    case TK_NONE:
        n = parse_node(p, AST_NONE, t.line, t.col);
        parse_next(p);
        return n;
    case TK_TRUE:
    case TK_FALSE:
        n = parse_node(p, AST_BOOL, t.line, t.col);
        n->ival = t.kind == TK_TRUE;
        parse_next(p);
        return n;
    case TK_STRING:
        n = parse_node(p, AST_STRING, t.line, t.col);
        n->str = p->arena ? lex_string_value(&p->lx, &t, p->arena) : NULL;
        if (!n->str) {
            p->oom = p->lx.oom = 1;
            n->str = "";
        }
        parse_next(p);
        return n;
    case TK_NAME:
        if (lex_is(&p->lx, &t, "inf") || lex_is(&p->lx, &t, "nan")) {
            /* real literals, as numpy's inf and nan: not names */
            n = parse_node(p, AST_REAL, t.line, t.col);
            n->rval = lex_is(&p->lx, &t, "inf") ? (double)INFINITY : (double)NAN;
            parse_next(p);
            return n;
        }
        if (lex_is(&p->lx, &t, "lambda")) {
            /* `lambda v, w: E` */
            n = parse_node(p, AST_LAMBDA, t.line, t.col);
            parse_next(p);
            nodelist params = {0};
            while (p->tok.kind == TK_NAME && !p->panic) {
                ast_node *v = parse_node(p, AST_NAME, p->tok.line, p->tok.col);
                v->name = parse_token_text(p, &p->tok);
                parse_push(p, &params, v);
                parse_next(p);
                if (p->tok.kind == TK_ASSIGN) {
                    parse_syntax_error(p, p->tok.line, p->tok.col, "a lambda's parameters have no defaults: "
                                       "write a graph inside this one for that");
                    return parse_error_node(p);
                }
                if (p->tok.kind != TK_COMMA)
                    break;
                parse_next(p);
            }
            parse_set_list(n, &params);
            if (!parse_expect(p, TK_COLON, "':' after the lambda's parameters"))
                return parse_error_node(p);
            n->a = parse_expr(p);
            return n;
        }
        parse_next(p);
        if (p->tok.kind == TK_LPAREN) {
            n = parse_node(p, AST_CALL, t.line, t.col);
            n->name = parse_token_text(p, &t);
            parse_args(p, n);
            return n;
        }
        if (p->tok.kind == TK_STRING && t.len <= 2) { /* f"...", b"...", rf"..." */
            parse_syntax_error(p, t.line, t.col, "prefixed strings (f\"...\") are not supported: print a value "
                               "with a label, print(x, \"x\")");
            return parse_error_node(p);
        }
        n = parse_node(p, AST_NAME, t.line, t.col);
        n->name = parse_token_text(p, &t);
        return n;
    case TK_LPAREN: {
        parse_next(p);
        if (p->tok.kind == TK_RPAREN) {
            parse_syntax_error(p, t.line, t.col, "the empty tuple () is not supported: a tuple holds values");
            return parse_error_node(p);
        }
        n = parse_expr(p);
        if (p->tok.kind == TK_COMMA && !p->panic) {
            /* a tuple `(a, b)`, `(a,)` */
            ast_node *tup = parse_node(p, AST_TUPLE, t.line, t.col);
            nodelist items = {0};
            parse_push(p, &items, n);
            while (p->tok.kind == TK_COMMA && !p->panic) {
                parse_next(p);
                if (p->tok.kind == TK_RPAREN)
                    break;
                parse_push(p, &items, parse_expr(p));
            }
            parse_set_list(tup, &items);
            n = tup;
        }
        n->flags |= AST_F_PAREN;
        if (!p->panic)
            parse_expect(p, TK_RPAREN, "')'");
        return n;
    }
    case TK_LBRACKET: {
        /* a list literal `[a, b]` or `[]` */
        parse_next(p);
        n = parse_node(p, AST_LIST, t.line, t.col);
        nodelist items = {0};
        while (p->tok.kind != TK_RBRACKET && !p->panic) {
            parse_push(p, &items, parse_expr(p));
            if (items.n == 1 && p->tok.kind == TK_FOR && !p->panic)
                return parse_comprehension(p, t, items.items[0]);
            if (p->tok.kind == TK_COMMA)
                parse_next(p);
            else if (p->tok.kind != TK_RBRACKET)
                parse_expected(p, "',' or ']' in the list");
        }
        if (!p->panic)
            parse_next(p);
        parse_set_list(n, &items);
        return n;
    }
    case TK_RANGE:
        parse_syntax_error(p, t.line, t.col, "'range' is only allowed in a for loop: for i in range(n) { }");
        return parse_error_node(p);
    case TK_STAR:
    case TK_STARSTAR:
        parse_syntax_error(p, t.line, t.col, "starred values (*x, **x) are not supported: unpack a fixed number "
                           "of values (a, b = t), or index them");
        return parse_error_node(p);
    case TK_DOT:
        if (t.start + 2 < p->lx.len && p->lx.src[t.start + 1] == '.' && p->lx.src[t.start + 2] == '.') {
            parse_syntax_error(p, t.line, t.col, "'...' (Ellipsis) is not supported: write a ':' for each axis, "
                               "x[:, 0]");
            return parse_error_node(p);
        }
        parse_expected(p, "an expression");
        return parse_error_node(p);
    case TK_LBRACE: {
        /* `{` with something on its line before a `}` reads as a dict or a set; `if { }`
         * is a missing condition */
        size_t i = t.start + 1;
        while (i < p->lx.len && (p->lx.src[i] == ' ' || p->lx.src[i] == '\t'))
            i++;
        if (i < p->lx.len && p->lx.src[i] != '}' && p->lx.src[i] != '\n' && p->lx.src[i] != '\r') {
            parse_syntax_error(p, t.line, t.col, "dicts and sets are not supported: use one variable per key, "
                               "or a tensor indexed by an integer");
            return parse_error_node(p);
        }
        parse_expected(p, "an expression");
        return parse_error_node(p);
    }
    default:
        parse_expected(p, "an expression");
        return parse_error_node(p);
    }
}

/* `[E for V in ITER ...]`, the current token the first `for`: an AST_COMP with a = E and list
 * = its clauses in order, each a loop head (AST_FOR_RANGE or AST_FOR_EACH without a body) or
 * a filter (AST_ARM, a = the condition). */
static ast_node *parse_comprehension(parser *p, lex_token open, ast_node *e)
{
    ast_node *n = parse_node(p, AST_COMP, open.line, open.col);
    n->a = e;
    nodelist clauses = {0};
    while (!p->panic && (p->tok.kind == TK_FOR || (clauses.n && p->tok.kind == TK_IF))) {
        if (p->tok.kind == TK_FOR) {
            ast_node *f = parse_for_head(p, 1);
            if (!f)
                break;
            parse_push(p, &clauses, f);
        } else {
            ast_node *arm = parse_node(p, AST_ARM, p->tok.line, p->tok.col);
            parse_next(p);
            arm->a = parse_binary(p, PREC_OR);
            parse_push(p, &clauses, arm);
        }
    }
    parse_set_list(n, &clauses);
    if (!p->panic && parse_expect(p, TK_RBRACKET, "']' to close the list comprehension"))
        return n;
    return parse_error_node(p);
}

/* `.NAME` or `.NAME(ARGS)` after e; the current token is the '.'. */
static ast_node *parse_member(parser *p, ast_node *e)
{
    parse_next(p);
    if (p->tok.kind != TK_NAME) {
        parse_expected(p, "a name after '.'");
        return e;
    }
    lex_token name = p->tok;
    parse_next(p);
    ast_node *n;
    if (p->tok.kind == TK_LPAREN) {
        n = parse_node(p, AST_CALL, name.line, name.col);
        n->flags |= AST_F_METHOD;
        parse_args(p, n);
        /* the receiver goes first among the arguments */
        ast_node **items = p->arena ? ast_alloc(p->arena, sizeof *items * (size_t)(n->nlist + 1)) : NULL;
        if (!items) {
            p->oom = p->lx.oom = 1;
            return n;
        }
        items[0] = e;
        for (int i = 0; i < n->nlist; i++)
            items[i + 1] = n->list[i];
        n->list = items;
        n->nlist++;
    } else {
        n = parse_node(p, AST_ATTR, name.line, name.col);
        n->a = e;
    }
    n->name = parse_token_text(p, &name);
    return n;
}

/* One item of a subscript: an index expression, or a slice `[START]:[STOP]`. */
static ast_node *parse_subscript(parser *p)
{
    lex_token t = p->tok;
    ast_node *start = NULL;
    if (p->tok.kind != TK_COLON)
        start = parse_expr(p);
    if (p->tok.kind != TK_COLON || p->panic)
        return start;
    ast_node *sl = parse_node(p, AST_SLICE, t.line, t.col);
    parse_next(p);
    sl->a = start;
    if (p->tok.kind != TK_COMMA && p->tok.kind != TK_RBRACKET && p->tok.kind != TK_COLON)
        sl->b = parse_expr(p);
    if (p->tok.kind == TK_COLON)
        parse_syntax_error(p, p->tok.line, p->tok.col, "slices have no step: write x[a:b]");
    return sl;
}

/* PRIMARY followed by any number of `[INDEX]`, `.NAME` and `.NAME(ARGS)`. */
static ast_node *parse_postfix(parser *p)
{
    int line = p->tok.line, col = p->tok.col;
    ast_node *e = parse_primary(p);
    if (e->kind == AST_LAMBDA && p->tok.kind == TK_LPAREN && !p->panic) {
        parse_syntax_error(p, p->tok.line, p->tok.col, "a lambda is given a name and called: f = lambda v: ... on "
                           "a line of its own, then f(x)");
        return e;
    }
    int levels = 0; /* x[i][j]... nests the tree one level per index */
    while ((p->tok.kind == TK_LBRACKET || p->tok.kind == TK_DOT) && !p->panic) {
        if (!parse_enter(p))
            break;
        levels++;
        if (p->tok.kind == TK_DOT) {
            e = parse_member(p, e);
            continue;
        }
        parse_next(p);
        ast_node *ix = parse_node(p, AST_INDEX, line, col);
        ix->a = e;
        ast_node *first = parse_subscript(p);
        if (p->tok.kind == TK_COMMA || (first && first->kind == AST_SLICE)) {
            /* x[i, j], x[a:b], x[:, j]: the items in a list */
            nodelist items = {0};
            parse_push(p, &items, first);
            while (p->tok.kind == TK_COMMA && !p->panic) {
                parse_next(p);
                parse_push(p, &items, parse_subscript(p));
            }
            parse_set_list(ix, &items);
        } else {
            ix->b = first;
        }
        if (!p->panic)
            parse_expect(p, TK_RBRACKET, "']' after the index");
        e = ix;
    }
    p->depth -= levels;
    return e;
}

static ast_node *parse_unary(parser *p);

/* POSTFIX [** UNARY]: `**` binds tighter than a unary minus on its left (-x ** 2 is -(x ** 2))
 * and groups to the right (2 ** 3 ** 2 is 2 ** 9), as in Python. */
static ast_node *parse_power(parser *p)
{
    ast_node *base = parse_postfix(p);
    if (p->tok.kind != TK_STARSTAR || p->panic)
        return base;
    lex_token t = p->tok;
    parse_next(p);
    if (!parse_enter(p))
        return parse_error_node(p);
    ast_node *n = parse_node(p, AST_BINARY, t.line, t.col);
    n->op = OP_POW;
    n->a = base;
    n->b = parse_unary(p);
    parse_leave(p);
    return n;
}

static ast_node *parse_unary(parser *p)
{
    if (p->tok.kind != TK_MINUS && p->tok.kind != TK_TILDE)
        return parse_power(p);
    lex_token t = p->tok;
    parse_next(p);
    if (!parse_enter(p))
        return parse_error_node(p);
    ast_node *n = parse_node(p, AST_UNARY, t.line, t.col);
    n->op = t.kind == TK_TILDE ? OP_INVERT : OP_NEG;
    n->a = parse_unary(p);
    parse_leave(p);
    return n;
}

/* Precedence climbing: operators of precedence >= min, left-associative. Comparisons do
 * not chain: `a < b < c` is an error rather than a silent `(a < b) < c`. */
static ast_node *parse_binary(parser *p, int min)
{
    ast_node *left;
    if (p->tok.kind == TK_NOT) {
        if (min > PREC_NOT) {
            parse_expected(p, "an expression ('not' needs parentheses here)");
            return parse_error_node(p);
        }
        lex_token t = p->tok;
        parse_next(p);
        if (!parse_enter(p))
            return parse_error_node(p);
        left = parse_node(p, AST_UNARY, t.line, t.col);
        left->op = OP_NOT;
        left->a = parse_binary(p, PREC_NOT);
        parse_leave(p);
    } else {
        left = parse_unary(p);
    }
    int compared = 0;
    int levels = 0; /* a chain `a + b + c ...` is a tree as deep as it is long: it counts as nesting */
    while (!p->panic) {
        int op = 0;
        if (p->tok.kind == TK_IN && min <= PREC_COMPARE) {
            parse_syntax_error(p, p->tok.line, p->tok.col, "membership tests (x in xs) are not supported: write "
                               "x == a or x == b for a few values, any(xs == x) for a tensor xs, or a loop");
            break;
        }
        if (p->tok.kind == TK_NOT && min <= PREC_COMPARE) {
            parse_syntax_error(p, p->tok.line, p->tok.col, "membership tests (x not in xs) are not supported: "
                               "write x != a and x != b for a few values, not any(xs == x) for a tensor xs, or a loop");
            break;
        }
        int prec = binary_op(p->tok.kind, &op);
        if (prec == 0 || prec < min)
            break;
        lex_token t = p->tok;
        if (prec == PREC_COMPARE) {
            if (compared) {
                parse_syntax_error(p, t.line, t.col, "comparisons do not chain: write 'a < b and b < c'");
                break;
            }
            compared = 1;
        }
        if (!parse_enter(p))
            break;
        levels++;
        parse_next(p);
        ast_node *n = parse_node(p, op < 0 ? AST_IS : AST_BINARY, t.line, t.col);
        if (op < 0 && p->tok.kind == TK_NOT) {
            n->flags |= AST_F_NOT;
            parse_next(p);
        }
        n->op = op < 0 ? 0 : (uint8_t)op;
        n->a = left;
        n->b = parse_binary(p, prec + 1);
        left = n;
    }
    p->depth -= levels;
    return left;
}

/* OR_EXPR [if OR_EXPR else EXPR]: Python's conditional expression, the lowest level. */
static ast_node *parse_expr(parser *p)
{
    if (!parse_enter(p))
        return parse_error_node(p);
    ast_node *e = parse_binary(p, PREC_OR);
    if (p->tok.kind == TK_IF && !p->panic) {
        ast_node *n = parse_node(p, AST_COND, p->tok.line, p->tok.col);
        parse_next(p);
        n->b = e;
        n->a = parse_binary(p, PREC_OR);
        if (!p->panic && parse_expect(p, TK_ELSE, "'else' in 'a if c else b'"))
            n->c = parse_expr(p);
        else
            n->c = parse_error_node(p);
        e = n;
    }
    parse_leave(p);
    return e;
}
