/* parse_expr.c: the parser's expressions and types: precedence climbing, unary minus and
 * `not`, calls and their arguments (a type is an argument too: `zeros(f32[3])`), indexing,
 * literals, and TYPE itself. Statements, graphs and recovery are in parse.c; the parser state
 * both share is in parse_int.h. */
#include "parse_int.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define MAX_ELEMENTS ((int64_t)1 << 30) /* a tensor's element count, so buffers stay far from overflow */
#define MAX_DIM ((int64_t)INT32_MAX)

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
int parse_type(parser *p, cfx_type *out)
{
    memset(out, 0, sizeof *out);
    lex_token start = p->tok;
    cfx_dtype dt;
    if (!is_dtype(p, &p->tok, &dt)) {
        parse_expected(p, "a type (f32, f64, i32, i64 or bool)");
        return 0;
    }
    out->dtype = dt;
    parse_next(p);
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
        else if (dims[i] > MAX_DIM)
            huge = 1;
        else if (!huge && (count *= dims[i]) > MAX_ELEMENTS)
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
enum { PREC_OR = 1, PREC_AND, PREC_NOT, PREC_COMPARE, PREC_ADD, PREC_MUL };

int parse_enter(parser *p)
{
    if (p->depth >= PARSE_MAX_DEPTH) {
        parse_syntax_error(p, p->tok.line, p->tok.col, "nesting is too deep (more than %d levels)", PARSE_MAX_DEPTH);
        return 0;
    }
    p->depth++;
    return 1;
}

void parse_leave(parser *p) { p->depth--; }


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
    case TK_PLUS: *op = OP_ADD; return PREC_ADD;
    case TK_MINUS: *op = OP_SUB; return PREC_ADD;
    case TK_STAR: *op = OP_MUL; return PREC_MUL;
    case TK_SLASH: *op = OP_DIV; return PREC_MUL;
    case TK_PERCENT: *op = OP_MOD; return PREC_MUL;
    case TK_AT: *op = OP_MATMUL; return PREC_MUL;
    default: return 0;
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
        if (is_dtype(p, &p->tok, NULL)) {
            arg = parse_node(p, AST_TYPE, p->tok.line, p->tok.col);
            parse_type(p, &arg->type);
        } else {
            arg = parse_expr(p);
        }
        parse_push(p, &args, arg);
        if (p->panic)
            break;
        if (p->tok.kind == TK_COMMA) {
            parse_next(p);
            continue;
        }
        if (p->tok.kind != TK_RPAREN)
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
        parse_next(p);
        if (p->tok.kind == TK_LPAREN) {
            n = parse_node(p, AST_CALL, t.line, t.col);
            n->name = parse_token_text(p, &t);
            parse_args(p, n);
            return n;
        }
        n = parse_node(p, AST_NAME, t.line, t.col);
        n->name = parse_token_text(p, &t);
        return n;
    case TK_LPAREN:
        parse_next(p);
        n = parse_expr(p);
        n->flags |= AST_F_PAREN;
        if (!p->panic)
            parse_expect(p, TK_RPAREN, "')'");
        return n;
    case TK_RANGE:
        parse_syntax_error(p, t.line, t.col, "'range' is only allowed in a for loop: for i in range(n) { }");
        return parse_error_node(p);
    default:
        parse_expected(p, "an expression");
        return parse_error_node(p);
    }
}

/* PRIMARY followed by any number of `[INDEX]`. */
static ast_node *parse_postfix(parser *p)
{
    int line = p->tok.line, col = p->tok.col;
    ast_node *e = parse_primary(p);
    int levels = 0; /* x[i][j]... nests the tree one level per index */
    while (p->tok.kind == TK_LBRACKET && !p->panic) {
        if (!parse_enter(p))
            break;
        levels++;
        parse_next(p);
        ast_node *ix = parse_node(p, AST_INDEX, line, col);
        ix->a = e;
        ix->b = parse_expr(p);
        if (!p->panic)
            parse_expect(p, TK_RBRACKET, "']' after the index");
        e = ix;
    }
    p->depth -= levels;
    return e;
}

static ast_node *parse_unary(parser *p)
{
    if (p->tok.kind != TK_MINUS)
        return parse_postfix(p);
    lex_token t = p->tok;
    parse_next(p);
    if (!parse_enter(p))
        return parse_error_node(p);
    ast_node *n = parse_node(p, AST_UNARY, t.line, t.col);
    n->op = OP_NEG;
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
        ast_node *n = parse_node(p, AST_BINARY, t.line, t.col);
        n->op = (uint8_t)op;
        n->a = left;
        n->b = parse_binary(p, prec + 1);
        left = n;
    }
    p->depth -= levels;
    return left;
}

ast_node *parse_expr(parser *p)
{
    if (!parse_enter(p))
        return parse_error_node(p);
    ast_node *e = parse_binary(p, PREC_OR);
    parse_leave(p);
    return e;
}
