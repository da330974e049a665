/* test_parse.c: the parser's trees (printed as S-expressions and compared with hand-written
 * strings), its exact messages and recovery, and its behaviour on hostile input: every prefix
 * of a valid file, random bytes and random tokens, 10,000 nested levels, huge literals and
 * shapes. Type texts and kernel signatures too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/front/diag.h"
#include "host/front/parse.h"
#include "host/util/strbuf.h"
#include "testutil.h"

/* ---- printing a tree --------------------------------------------------------------- */

/* The test's own names for the operators, so a wrong op in the tree shows. */
static const char *tree_op_name(int op)
{
    switch (op) {
    case OP_NEG: return "neg";
    case OP_NOT: return "not";
    case OP_ADD: return "add";
    case OP_SUB: return "sub";
    case OP_MUL: return "mul";
    case OP_DIV: return "div";
    case OP_MOD: return "mod";
    case OP_FLOORDIV: return "floordiv";
    case OP_MATMUL: return "matmul";
    case OP_AND: return "and";
    case OP_OR: return "or";
    case OP_LT: return "lt";
    case OP_LE: return "le";
    case OP_GT: return "gt";
    case OP_GE: return "ge";
    case OP_EQ: return "eq";
    case OP_NE: return "ne";
    default: return "?op";
    }
}

static void put_type(strbuf *o, const cfx_type *t)
{
    static const char *names[] = {"f32", "f64", "i32", "i64", "bool"};
    sb_puts(o, (unsigned)t->dtype < 5 ? names[t->dtype] : "?");
    if (t->rank == 0)
        return;
    sb_puts(o, "[");
    for (int i = 0; i < t->rank; i++)
        sb_printf(o, "%s%lld", i ? "," : "", (long long)t->dims[i]);
    sb_puts(o, "]");
}

static void put(strbuf *o, const ast_node *n);

static void put_list(strbuf *o, const ast_node *n)
{
    for (int i = 0; i < n->nlist; i++) {
        sb_puts(o, " ");
        put(o, n->list[i]);
    }
}

static void put(strbuf *o, const ast_node *n)
{
    if (!n) {
        sb_puts(o, "_");
        return;
    }
    switch (n->kind) {
    case AST_INT: sb_printf(o, "%lld", (long long)n->ival); break;
    case AST_REAL: sb_printf(o, "%g", n->rval); break;
    case AST_BOOL: sb_puts(o, n->ival ? "true" : "false"); break;
    case AST_STRING: sb_printf(o, "\"%s\"", n->str); break;
    case AST_NAME: sb_puts(o, n->name); break;
    case AST_TYPE:
        put_type(o, &n->ty);
        if (n->flags & AST_F_DIMS) {
            sb_puts(o, "[dims");
            put_list(o, n);
            sb_puts(o, "]");
        }
        break;
    case AST_TUPLE:
        sb_puts(o, "(tuple");
        put_list(o, n);
        sb_puts(o, ")");
        break;
    case AST_LIST:
        sb_puts(o, "(list");
        put_list(o, n);
        sb_puts(o, ")");
        break;
    case AST_COND:
        sb_puts(o, "(cond ");
        put(o, n->a);
        sb_puts(o, " ");
        put(o, n->b);
        sb_puts(o, " ");
        put(o, n->c);
        sb_puts(o, ")");
        break;
    case AST_ATTR:
        sb_puts(o, "(attr ");
        put(o, n->a);
        sb_printf(o, " %s)", n->name);
        break;
    case AST_LAMBDA:
        sb_puts(o, "(lambda");
        put_list(o, n);
        sb_puts(o, " ");
        put(o, n->a);
        sb_puts(o, ")");
        break;
    case AST_DEF:
        sb_printf(o, "(def %s %s)", n->name, n->a ? n->a->name : "?");
        break;
    case AST_COMP:
        sb_puts(o, "(comp ");
        put(o, n->a);
        put_list(o, n);
        sb_puts(o, ")");
        break;
    case AST_UNARY:
    case AST_BINARY:
        sb_printf(o, "(%s ", tree_op_name(n->op));
        put(o, n->a);
        if (n->kind == AST_BINARY) {
            sb_puts(o, " ");
            put(o, n->b);
        }
        sb_puts(o, ")");
        break;
    case AST_CALL:
        sb_printf(o, "(call %s", n->name);
        put_list(o, n);
        sb_puts(o, ")");
        break;
    case AST_INDEX:
        sb_puts(o, "(index ");
        put(o, n->a);
        sb_puts(o, " ");
        put(o, n->b);
        sb_puts(o, ")");
        break;
    case AST_ASSIGN:
        sb_puts(o, "(=");
        put_list(o, n);
        sb_puts(o, " ");
        put(o, n->a);
        sb_puts(o, ")");
        break;
    case AST_IF:
        sb_puts(o, "(if");
        put_list(o, n);
        sb_puts(o, ")");
        break;
    case AST_ARM:
        if (n->a) {
            sb_puts(o, "(arm ");
            put(o, n->a);
            sb_puts(o, " ");
        } else {
            sb_puts(o, "(else ");
        }
        put(o, n->b);
        sb_puts(o, ")");
        break;
    case AST_WHILE:
        sb_puts(o, "(while ");
        put(o, n->a);
        sb_puts(o, " ");
        put(o, n->b);
        sb_puts(o, ")");
        break;
    case AST_FOR_RANGE:
        sb_printf(o, "(for %s ", n->name);
        put(o, n->a);
        sb_puts(o, " ");
        put(o, n->b);
        sb_puts(o, " ");
        put(o, n->c);
        sb_puts(o, " ");
        put(o, n->d);
        sb_puts(o, ")");
        break;
    case AST_FOR_EACH:
        sb_printf(o, "(foreach %s ", n->name);
        put(o, n->a);
        sb_puts(o, " ");
        put(o, n->d);
        sb_puts(o, ")");
        break;
    case AST_SWITCH:
        sb_puts(o, "(switch ");
        put(o, n->a);
        put_list(o, n);
        sb_puts(o, ")");
        break;
    case AST_CASE:
        if (n->flags & AST_F_DEFAULT)
            sb_puts(o, "(default ");
        else
            sb_printf(o, "(case %lld ", (long long)n->ival);
        put(o, n->b);
        sb_puts(o, ")");
        break;
    case AST_NONE: sb_puts(o, "None"); break;
    case AST_IS:
        sb_puts(o, (n->flags & AST_F_NOT) ? "(isnot " : "(is ");
        put(o, n->a);
        sb_puts(o, " ");
        put(o, n->b);
        sb_puts(o, ")");
        break;
    case AST_KWARG:
        sb_printf(o, "(%s= ", n->name);
        put(o, n->a);
        sb_puts(o, ")");
        break;
    case AST_ERROR:
        sb_puts(o, "(error");
        for (int i = 0; i < n->nlist; i++)
            sb_printf(o, " %s", n->list[i]->name);
        sb_puts(o, ")");
        break;
    case AST_BREAK: sb_puts(o, "break"); break;
    case AST_CONTINUE: sb_puts(o, "continue"); break;
    case AST_RETURN: sb_puts(o, "return"); break;
    case AST_EXPR:
        sb_puts(o, "(expr ");
        put(o, n->a);
        sb_puts(o, ")");
        break;
    case AST_BLOCK:
        sb_puts(o, "{");
        for (int i = 0; i < n->nlist; i++) {
            sb_puts(o, i ? " " : "");
            put(o, n->list[i]);
        }
        sb_puts(o, "}");
        break;
    default: sb_printf(o, "?kind%d", n->kind); break;
    }
}

static void put_decls(strbuf *o, const ast_param *p, int n)
{
    sb_puts(o, "(");
    for (int i = 0; i < n; i++) {
        sb_printf(o, "%s%s:", i ? " " : "", p[i].name);
        put_type(o, &p[i].type);
    }
    sb_puts(o, ")");
}

/* The whole module, one graph after another. */
static char *show_module(const ast_module *m)
{
    strbuf o = {0};
    for (int i = 0; i < m->ngraphs; i++) {
        const ast_graph *g = &m->graphs[i];
        sb_printf(&o, "%s(graph %s ", i ? " " : "", g->name);
        put_decls(&o, g->params, g->nparams);
        sb_puts(&o, " -> ");
        put_decls(&o, g->results, g->nresults);
        sb_puts(&o, " ");
        put(&o, g->body);
        sb_puts(&o, ")");
    }
    return sb_take(&o);
}

/* ---- helpers ----------------------------------------------------------------------- */

typedef struct parsed {
    ast_module *m;
    char *errors; /* "" when none */
    int nerrors;
} parsed;

static parsed parse_text(const char *src, size_t len)
{
    parsed r;
    diag d;
    diag_init(&d, "t.cfx", src, len);
    r.m = parse_module(src, len, &d);
    r.nerrors = d.errors;
    r.errors = diag_take(&d);
    diag_free(&d);
    if (!r.errors)
        r.errors = calloc(1, 1);
    return r;
}

static void done(parsed *r)
{
    ast_module_free(r->m);
    free(r->errors);
}

/* The body of `graph g() -> (y: i32) { BODY }` as an S-expression, or the errors. */
static char *body_of(const char *body)
{
    char src[4096];
    snprintf(src, sizeof src, "graph g() -> (y: i32) {\n%s\n}\n", body);
    parsed r = parse_text(src, strlen(src));
    char *out;
    if (r.nerrors || !r.m || r.m->ngraphs != 1) {
        out = r.errors;
        r.errors = NULL;
    } else {
        strbuf o = {0};
        put(&o, r.m->graphs[0].body);
        out = sb_take(&o);
    }
    done(&r);
    return out;
}

static void check_body(const char *body, const char *want, int line)
{
    char *got = body_of(body);
    test_check_str(got, want, __FILE__, line, body);
    free(got);
}

/* The expression E of `y = E`. */
static void check_expr(const char *expr, const char *want, int line)
{
    char body[2048];
    snprintf(body, sizeof body, "y = %s", expr);
    char wanted[2048];
    snprintf(wanted, sizeof wanted, "{(= y %s)}", want);
    check_body(body, wanted, line);
}

static void check_module(const char *src, const char *want, int line)
{
    parsed r = parse_text(src, strlen(src));
    char *got = r.nerrors ? strdup(r.errors) : show_module(r.m);
    test_check_str(got, want, __FILE__, line, src);
    free(got);
    done(&r);
}

/* The exact messages for src (there must be some). */
static void check_errors(const char *src, const char *want, int line)
{
    parsed r = parse_text(src, strlen(src));
    test_check_str(r.errors, want, __FILE__, line, src);
    test_check(r.m != NULL, __FILE__, line, "a module comes back even with errors");
    done(&r);
}

/* ---- trees ------------------------------------------------------------------------- */

static void test_precedence(void)
{
    /* tuples, list comprehensions, types with dimensions that are expressions */
    check_expr("(a, b)", "(tuple a b)", __LINE__);
    check_expr("(a,)", "(tuple a)", __LINE__);
    check_expr("a, (b + 1, c)", "(tuple a (tuple (add b 1) c))", __LINE__);
    check_expr("(a)", "a", __LINE__);
    check_expr("[v * 2 for v in xs]", "(comp (mul v 2) (foreach v xs _))", __LINE__);
    check_expr("[a for a, b in zip(p, q) if b > 0 for i in range(3)]",
               "(comp a (foreach a (call zip p q) _) (arm (gt b 0) _) (for i 0 3 _ _))", __LINE__);
    check_expr("[x if c else y for r in t]", "(comp (cond c x y) (foreach r t _))", __LINE__);
    check_expr("zeros(f32[x.shape[0], 2])", "(call zeros f32[dims (index (attr x shape) 0) 2])", __LINE__);
    check_expr("zeros(f32[2, 3])", "(call zeros f32[2,3])", __LINE__);
    check_errors("graph g() -> (y: i32) {\n  y = ()\n}\n",
                 "t.cfx:2:7: error: the empty tuple () is not supported: a tuple holds values\n  y = ()\n      ^\n",
                 __LINE__);
    check_errors("graph g() -> (y: i32) {\n  y = [v for v in xs if]\n}\n",
                 "t.cfx:2:24: error: expected an expression, found ']'\n  y = [v for v in xs if]\n"
                 "                       ^\n",
                 __LINE__);
    check_expr("lambda v, w: v * w + 1", "(lambda v w (add (mul v w) 1))", __LINE__);
    check_expr("lambda: 2", "(lambda 2)", __LINE__);
    /* a graph inside a graph: a graph of the module, `outer.inner`, after the file's graph */
    {
        const char *src = "graph outer(x: f32) -> (y: f32) {\n  graph inner(v: f32) -> (r: f32) {\n"
                          "    graph deep() -> (q: f32) { q = 1.0 }\n    r = v\n  }\n  y = inner(x)\n}\n"
                          "graph last() -> (z: f32) { z = 2.0 }\n";
        parsed r = parse_text(src, strlen(src));
        CHECK_INT(r.nerrors, 0);
        if (r.m && CHECK_INT(r.m->ngraphs, 4)) {
            CHECK_STR(r.m->graphs[0].name, "outer");
            CHECK_STR(r.m->graphs[1].name, "outer.inner");
            CHECK_STR(r.m->graphs[2].name, "outer.inner.deep");
            CHECK_STR(r.m->graphs[3].name, "last");
            CHECK_INT(r.m->graphs[0].enclosing, 0);
            CHECK_INT(r.m->graphs[1].enclosing, 1);
            CHECK_INT(r.m->graphs[2].enclosing, 2);
            CHECK_INT(r.m->graphs[3].enclosing, 0);
            char *t = show_module(r.m);
            CHECK(strstr(t, "(def inner outer.inner)") != NULL);
            CHECK(strstr(t, "(def deep outer.inner.deep)") != NULL);
            free(t);
        }
        done(&r);
    }
    check_expr("i < n or a and b", "(or (lt i n) (and a b))", __LINE__);
    check_expr("a or b or c", "(or (or a b) c)", __LINE__);
    check_expr("a and b or c and d", "(or (and a b) (and c d))", __LINE__);
    check_expr("not a and b", "(and (not a) b)", __LINE__);
    check_expr("not a < b", "(not (lt a b))", __LINE__);
    check_expr("not not a", "(not (not a))", __LINE__);
    check_expr("a and not b or c", "(or (and a (not b)) c)", __LINE__);
    check_expr("a + b * c", "(add a (mul b c))", __LINE__);
    check_expr("a * b + c", "(add (mul a b) c)", __LINE__);
    check_expr("a - b - c", "(sub (sub a b) c)", __LINE__);
    check_expr("a / b % c * d @ e", "(matmul (mul (mod (div a b) c) d) e)", __LINE__);
    check_expr("a // b + c", "(add (floordiv a b) c)", __LINE__);
    /* `is` and `is not` compare at the level of ==; None is a value */
    check_expr("x is None and y is not None", "(and (is x None) (isnot y None))", __LINE__);
    check_expr("not x is None", "(not (is x None))", __LINE__);
    check_expr("a + b < c * d", "(lt (add a b) (mul c d))", __LINE__);
    check_expr("a <= b", "(le a b)", __LINE__);
    check_expr("a > b", "(gt a b)", __LINE__);
    check_expr("a >= b", "(ge a b)", __LINE__);
    check_expr("a == b", "(eq a b)", __LINE__);
    check_expr("a != b", "(ne a b)", __LINE__);
    check_expr("-5", "(neg 5)", __LINE__);
    check_expr("-a * b", "(mul (neg a) b)", __LINE__);
    check_expr("- - a", "(neg (neg a))", __LINE__);
    check_expr("a - -b", "(sub a (neg b))", __LINE__);
    check_expr("-x[i]", "(neg (index x i))", __LINE__);
    check_expr("x[i][j + 1]", "(index (index x i) (add j 1))", __LINE__);
    check_expr("(a + b) * c", "(mul (add a b) c)", __LINE__);
    check_expr("a @ b @ c", "(matmul (matmul a b) c)", __LINE__);
    check_expr("f(a, b + 1)[0]", "(index (call f a (add b 1)) 0)", __LINE__);
    check_expr("f()", "(call f)", __LINE__);
    check_expr("i < n and x[i] > 0", "(and (lt i n) (gt (index x i) 0))", __LINE__);
    check_expr("(a < b) == c", "(eq (lt a b) c)", __LINE__);
    check_expr("1.5 + .5 * 1e-6", "(add 1.5 (mul 0.5 1e-06))", __LINE__);
    check_expr("0x1f", "31", __LINE__);
    check_expr("true or false", "(or true false)", __LINE__);
    check_expr("f(\n  a,\n  b\n)", "(call f a b)", __LINE__);
}

static void test_type_arguments(void)
{
    check_expr("zeros(f32[3])", "(call zeros f32[3])", __LINE__);
    check_expr("full(i32[2, 3], 7)", "(call full i32[2,3] 7)", __LINE__);
    check_expr("cast(x, f64)", "(call cast x f64)", __LINE__);
    check_expr("ones(bool[])", "(call ones bool)", __LINE__);
    check_expr("iota(i64[1, 2, 3, 4])", "(call iota i64[1,2,3,4])", __LINE__);
}

static void test_statements(void)
{
    check_body("x = 1\nx[0] = 2\na, b = f(x)", "{(= x 1) (= (index x 0) 2) (= a b (call f x))}", __LINE__);
    check_body("x = 1; y = 2;; z = 3", "{(= x 1) (= y 2) (= z 3)}", __LINE__);
    check_body("if a { y = 1 }", "{(if (arm a {(= y 1)}))}", __LINE__);
    check_body("if a { y = 1 } elif b { y = 2 } elif c {} else { y = 3 }",
               "{(if (arm a {(= y 1)}) (arm b {(= y 2)}) (arm c {}) (else {(= y 3)}))}", __LINE__);
    check_body("if a {\n\n  # comment\n  y = 1\n\n} else {\n}", "{(if (arm a {(= y 1)}) (else {}))}", __LINE__);
    check_body("while i < 3 { i = i + 1; continue }", "{(while (lt i 3) {(= i (add i 1)) continue})}", __LINE__);
    check_body("for i in range(2, n, 2) { break }", "{(for i 2 n 2 {break})}", __LINE__);
    check_body("for i in range(1, n) {}", "{(for i 1 n _ {})}", __LINE__);
    check_body("for i in range(n) {}", "{(for i 0 n _ {})}", __LINE__);
    check_body("for r in x { s = s + r }", "{(foreach r x {(= s (add s r))})}", __LINE__);
    check_body("for r in x[0] {}", "{(foreach r (index x 0) {})}", __LINE__);
    check_body("switch k {\n  case 0 { y = 1 }\n  case -1 { y = 2 } default {}\n  case 7 {}\n}",
               "{(switch k (case 0 {(= y 1)}) (case -1 {(= y 2)}) (default {}) (case 7 {}))}", __LINE__);
    check_body("switch k {}", "{(switch k)}", __LINE__);
    check_body("return", "{return}", __LINE__);
    check_body("assert(x > 0, \"x must be \\\"positive\\\"\")\nprint(x)\nprint(x, \"label\")",
               "{(expr (call assert (gt x 0) \"x must be \"positive\"\")) (expr (call print x)) "
               "(expr (call print x \"label\"))}",
               __LINE__);
    /* a statement ends before the '}' of its block, or at ';' */
    check_body("if c { y = x + 1 }", "{(if (arm c {(= y (add x 1))}))}", __LINE__);
    check_body("if c { y = 1; }", "{(if (arm c {(= y 1)}))}", __LINE__);
    check_body("while c {y=1;break}", "{(while c {(= y 1) break})}", __LINE__);
}

static void test_graphs(void)
{
    check_module("graph f(x: i32, y: f32[3], z: bool[], w: f64[2, 3, 4, 5]) -> (out: i64[7]) { out = x }",
                 "(graph f (x:i32 y:f32[3] z:bool w:f64[2,3,4,5]) -> (out:i64[7]) {(= out x)})", __LINE__);
    check_module("# leading comment\n\ngraph a() -> (y: i32) { y = 1 }\n\ngraph b(x: i32) -> y: i32 {\n  y = a()\n}\n",
                 "(graph a () -> (y:i32) {(= y 1)}) (graph b (x:i32) -> (y:i32) {(= y (call a))})", __LINE__);
    check_module("graph f(\n  x: i32,\n  y: i32,\n) -> (\n  s: i32,\n) { s = x + y }",
                 "(graph f (x:i32 y:i32) -> (s:i32) {(= s (add x y))})", __LINE__);
    /* the spec's example */
    check_module("# x=0, y=1, i=0  ->  out = 5\n"
                 "graph if_in_while(x: i32, y: i32, i: i32) -> (out: i32) {\n"
                 "  out = x\n"
                 "  while i < 3 {\n"
                 "    if x + i < y {\n"
                 "      out = out + x\n"
                 "    } else {\n"
                 "      out = out + y\n"
                 "    }\n"
                 "    out = out + 1\n"
                 "    i = i + 1\n"
                 "  }\n"
                 "}\n",
                 "(graph if_in_while (x:i32 y:i32 i:i32) -> (out:i32) {(= out x) (while (lt i 3) {(if (arm (lt (add "
                 "x i) y) {(= out (add out x))}) (else {(= out (add out y))})) (= out (add out 1)) (= i (add i "
                 "1))})})",
                 __LINE__);
}

/* Positions: a node's first token, a binary node's operator. */
static void test_positions(void)
{
    const char *src = "graph g(x: i32) -> (y: i32) {\n  y = -x + f(x)[1]\n  if y < 2 { y = 1 } else { y = 2 }\n}\n";
    parsed r = parse_text(src, strlen(src));
    CHECK_INT(r.nerrors, 0);
    if (!r.m || r.m->ngraphs != 1) {
        done(&r);
        return;
    }
    const ast_graph *g = &r.m->graphs[0];
    CHECK_INT(g->line, 1);
    CHECK_INT(g->col, 1);
    CHECK_INT(g->params[0].line, 1);
    CHECK_INT(g->params[0].col, 9);
    CHECK_INT(g->results[0].col, 21);
    const ast_node *as = g->body->list[0];
    CHECK_INT(as->line, 2);
    CHECK_INT(as->col, 3);
    const ast_node *plus = as->a;
    CHECK_INT(plus->kind, AST_BINARY);
    CHECK_INT(plus->col, 10);
    CHECK_INT(plus->a->col, 7);      /* the '-' */
    CHECK_INT(plus->a->a->col, 8);   /* x */
    CHECK_INT(plus->b->kind, AST_INDEX);
    CHECK_INT(plus->b->col, 12);     /* f */
    CHECK_INT(plus->b->a->col, 12);
    CHECK_INT(plus->b->b->col, 17);  /* 1 */
    const ast_node *iff = g->body->list[1];
    CHECK_INT(iff->line, 3);
    CHECK_INT(iff->col, 3);
    CHECK_INT(iff->list[0]->col, 3);
    CHECK_INT(iff->list[1]->col, 22); /* else */
    CHECK_INT(iff->list[0]->a->col, 8);
    CHECK_INT(iff->list[0]->b->col, 12);
    done(&r);
}

/* ---- messages ---------------------------------------------------------------------- */

static void test_messages(void)
{
    check_errors("graph g() -> (y: i32) {\n  if y < 1\n  {\n  }\n}\n",
                 "t.cfx:2:11: error: expected '{' after the condition, found newline\n  if y < 1\n          ^\n"
                 "t.cfx:3:3: error: expected a statement, found '{'\n  {\n  ^\n",
                 __LINE__);
    check_errors("graph g() -> (y: i32) {\n  y = (1 + }\n",
                 "t.cfx:2:12: error: expected an expression, found '}'\n  y = (1 + }\n           ^\n", __LINE__);
    check_errors("graph g() -> (y: i32) { y = 1 y = 2 }\n",
                 "t.cfx:1:31: error: expected a newline or ';' after the statement, found 'y'\n"
                 "graph g() -> (y: i32) { y = 1 y = 2 }\n                              ^\n",
                 __LINE__);
    check_errors("graph g() -> (y: i32) {\n  y = 1 < 2 < 3\n}\n",
                 "t.cfx:2:13: error: comparisons do not chain: write 'a < b and b < c'\n  y = 1 < 2 < 3\n"
                 "            ^\n",
                 __LINE__);
    check_errors("graph g() -> (y: i32) {\n  y == 1\n}\n",
                 "t.cfx:2:3: error: an expression alone is not a statement (assign it, or call an op)\n  y == 1\n"
                 "  ^\n",
                 __LINE__);
    check_errors("", "t.cfx:1:1: error: no graph in file\n\n^\n", __LINE__);
    check_errors("# nothing\n\n", "t.cfx:1:1: error: no graph in file\n# nothing\n^\n", __LINE__);
    /* one mistake, one error: a file whose only graph is refused is not also said to have none */
    check_errors("x = 1\n", "t.cfx:1:1: error: statements go inside a graph: graph NAME(x: TYPE) -> (y: TYPE) { ... } (a "
                            "constant of the file is written const NAME: TYPE = VALUE)\nx = 1\n^\n", __LINE__);
    check_errors("def g(x):\n  return x\n",
                 "t.cfx:1:1: error: 'def' is Python: write graph NAME(x: TYPE) -> (y: TYPE) { ... }\n"
                 "def g(x):\n^\n",
                 __LINE__);
    check_errors("graph g() -> (y: i32) { y = 1 }\ngraph g() -> (y: i32) { y = 2 }\n",
                 "t.cfx:2:1: error: graph 'g' is defined twice (the first is at line 1)\n"
                 "graph g() -> (y: i32) { y = 2 }\n^\n",
                 __LINE__);
    check_errors("graph g(x: i32, x: f32) -> (x: i32, y: i32, y: i32) { y = 1 }\n",
                 "t.cfx:1:17: error: parameter 'x' is declared twice\n"
                 "graph g(x: i32, x: f32) -> (x: i32, y: i32, y: i32) { y = 1 }\n                ^\n"
                 "t.cfx:1:29: error: 'x' is both a parameter and a result\n"
                 "graph g(x: i32, x: f32) -> (x: i32, y: i32, y: i32) { y = 1 }\n                            ^\n"
                 "t.cfx:1:45: error: result 'y' is declared twice\n"
                 "graph g(x: i32, x: f32) -> (x: i32, y: i32, y: i32) { y = 1 }\n"
                 "                                            ^\n",
                 __LINE__);
    check_errors("graph g(x: f32[1,2,3,4,5,6]) -> (y: i32) { y = 1 }\n",
                 "t.cfx:1:12: error: rank 6 is more than 5\ngraph g(x: f32[1,2,3,4,5,6]) -> (y: i32) { y = 1 }\n"
                 "           ^\n",
                 __LINE__);
    check_errors("graph g(x: f32[100000, 100000]) -> (y: i32) { y = 1 }\n",
                 "t.cfx:1:12: error: shape f32[100000, 100000] is too large\n"
                 "graph g(x: f32[100000, 100000]) -> (y: i32) { y = 1 }\n           ^\n",
                 __LINE__);
    check_errors("graph g(x: i8[3]) -> (y: i32) { y = 1 }\n",
                 "t.cfx:1:12: error: expected a type (f32, f64, i32, i64 or bool), found 'i8'\n"
                 "graph g(x: i8[3]) -> (y: i32) { y = 1 }\n           ^\n",
                 __LINE__);
    check_errors("graph g() -> (y: i32) {\n  switch y {\n    case 1 {}\n    case 1 {}\n    default {}\n"
                 "    default {}\n  }\n}\n",
                 "t.cfx:4:5: error: duplicate case 1 (the first is at line 3)\n    case 1 {}\n    ^\n"
                 "t.cfx:6:5: error: more than one default in this switch (the first is at line 5)\n"
                 "    default {}\n    ^\n",
                 __LINE__);
    check_errors("graph g() -> (y: i32) {\n  y = 1\n", "t.cfx:3:1: error: expected '}' to close the block at line "
                                                       "1, found end of file\n\n^\n",
                 __LINE__);
    check_errors("graph g() -> (y: i32) {\n  if y { y = 1\n}\ngraph h() -> (y: i32) { y = 1 }\n",
                 "t.cfx:4:1: error: expected '}' to close the block at line 1, found 'graph'\n"
                 "graph h() -> (y: i32) { y = 1 }\n^\n",
                 __LINE__);
    check_errors("graph g() -> (y: i32) {\n  y = 1\n} else {\n}\n",
                 "t.cfx:3:3: error: expected 'graph', found 'else'\n} else {\n  ^\n", __LINE__);
    check_errors("graph g() -> (y: i32) {\n  if y {\n  }\n  else {\n  }\n}\n",
                 "t.cfx:4:3: error: 'else' without 'if' (it goes on the line of the '}' before it)\n  else {\n"
                 "  ^\n",
                 __LINE__);
    check_errors("graph g() -> (y: i32) {\n  if y {} else if z {}\n}\n",
                 "t.cfx:2:16: error: expected '{' after 'else' (write 'elif' for another condition), found 'if'\n"
                 "  if y {} else if z {}\n               ^\n",
                 __LINE__);
    /* `y = 1, 2` makes a tuple, which the checker takes apart (or reports) */
    check_errors("graph g() -> (y: i32) {\n  y = 1, 2\n  return y,\n}\n",
                 "t.cfx:3:12: error: expected an expression, found newline\n  return y,\n           ^\n",
                 __LINE__);
    check_errors("graph g() -> (y: i32) {\n  a, b = x\n  f(x) = 1\n  a + 1 = 2\n}\n",
                 "t.cfx:3:3: error: cannot assign to this expression (a target is a name or name[i])\n  f(x) = 1\n"
                 "  ^\n"
                 "t.cfx:4:5: error: cannot assign to this expression (a target is a name or name[i])\n  a + 1 = 2\n"
                 "    ^\n",
                 __LINE__);
    check_errors("graph g() -> (y: i32) {\n  for i in range(1, 2, 3, 4) {}\n  for i in range() {}\n}\n",
                 "t.cfx:2:12: error: range takes 1 to 3 arguments, found 4\n  for i in range(1, 2, 3, 4) {}\n"
                 "           ^\n"
                 "t.cfx:3:12: error: range takes 1 to 3 arguments, found 0\n  for i in range() {}\n           ^\n",
                 __LINE__);
    check_errors("graph g() -> (y: i32) {\n  y = x == not z\n}\n",
                 "t.cfx:2:12: error: expected an expression ('not' needs parentheses here), found 'not'\n"
                 "  y = x == not z\n           ^\n",
                 __LINE__);
    check_errors("graph g() -> (y: i32) {\n  switch y { case 5000000000 {} case x {} }\n}\n",
                 "t.cfx:2:14: error: case value 5000000000 does not fit in i32\n"
                 "  switch y { case 5000000000 {} case x {} }\n             ^\n"
                 "t.cfx:2:38: error: expected an integer case value, found 'x'\n"
                 "  switch y { case 5000000000 {} case x {} }\n                                     ^\n",
                 __LINE__);
    check_errors("graph g() -> (y: i32) {\n  case 1 {}\n  y = range(3)\n}\n",
                 "t.cfx:2:3: error: 'case' outside a switch\n  case 1 {}\n  ^\n"
                 "t.cfx:3:7: error: 'range' is only allowed in a for loop: for i in range(n) { }\n"
                 "  y = range(3)\n      ^\n",
                 __LINE__);
}

/* Several independent errors in one file are each reported, once, and the good graph
 * between them still comes back. */
static void test_recovery(void)
{
    const char *src = "graph a(x: i32 -> (y: i32) {\n"   /* 1: header error: skip to the next graph */
                      "  y = (\n"
                      "}\n"
                      "graph b(x: i32) -> (y: i32) {\n"  /* 4 */
                      "  y = x +\n"                      /* 5: error */
                      "  y = 2\n"                        /* 6: fine */
                      "  while y { y = $ 3 }\n"          /* 7: lexer error, the statement parses on */
                      "  if { }\n"                       /* 8: error */
                      "  y = f(1, 2\n"                   /* 9: unclosed '(' ends at the brace */
                      "}\n"                              /* 10 */
                      "graph c() -> (z: f32) { z = 1.5 }\n";
    parsed r = parse_text(src, strlen(src));
    CHECK_STR(r.errors, "t.cfx:1:16: error: expected ',' or ')' after the parameter, found '->'\n"
                        "graph a(x: i32 -> (y: i32) {\n               ^\n"
                        "t.cfx:5:10: error: expected an expression, found newline\n  y = x +\n         ^\n"
                        "t.cfx:7:17: error: unexpected character '$'\n  while y { y = $ 3 }\n                ^\n"
                        "t.cfx:8:6: error: expected an expression, found '{'\n  if { }\n     ^\n"
                        "t.cfx:10:1: error: expected ',' or ')' after the argument, found '}'\n}\n^\n");
    CHECK_INT(r.nerrors, 5);
    CHECK(r.m != NULL);
    if (r.m) {
        CHECK_INT(r.m->ngraphs, 2);
        char *s = show_module(r.m);
        CHECK_STR(s, "(graph b (x:i32) -> (y:i32) {(error y) (= y 2) (while y {(= y 3)}) (error) (error y)}) "
                      "(graph c () -> (z:f32) {(= z 1.5)})");
        free(s);
    }
    done(&r);

    /* Python's top-level items: each reported, and parsing goes on at the next line that starts
     * in column 1 (the indented body of a def is skipped) */
    {
        const char *py = "import numpy as np\ndef f(x):\n    return x\n@jit\ngraph g() -> (y: i32) { y = 1 }\n"
                         "class A:\n  pass\n";
        parsed q = parse_text(py, strlen(py));
        CHECK_INT(q.nerrors, 4);
        CHECK(strstr(q.errors, "t.cfx:1:1: error: 'import' is not needed") != NULL);
        CHECK(strstr(q.errors, "t.cfx:2:1: error: 'def' is Python") != NULL);
        CHECK(strstr(q.errors, "t.cfx:4:1: error: decorators (@...) are not supported") != NULL);
        CHECK(strstr(q.errors, "t.cfx:6:1: error: classes are not supported") != NULL);
        CHECK(q.m && q.m->ngraphs == 1);
        done(&q);
    }

    /* 60 broken statements: every one reported (the diag keeps 50 and counts the rest) */
    strbuf b = {0};
    sb_puts(&b, "graph g() -> (y: i32) {\n");
    for (int i = 0; i < 60; i++)
        sb_puts(&b, "  y = )\n  y = 1\n");
    sb_puts(&b, "}\n");
    r = parse_text(b.data, b.len);
    CHECK_INT(r.nerrors, 60);
    CHECK(strstr(r.errors, "t.cfx: 10 more errors not shown\n") != NULL);
    done(&r);
    sb_free(&b);
}

/* ---- generated programs ------------------------------------------------------------ */

/* Random programs that are valid by construction, written together with the tree that they
 * must parse to. Expressions carry as few parentheses as the spec's precedence allows, so
 * the parser's precedence and associativity are checked against this independent writer. */

static uint32_t gen_state = 777;
static uint32_t gen_rng(uint32_t n)
{
    gen_state = gen_state * 1103515245u + 12345u;
    return (gen_state >> 8) % n;
}

enum { G_OR = 1, G_AND, G_NOT, G_CMP, G_ADD, G_MUL, G_NEG, G_ATOM };

/* Writes an expression to text and its tree to tree; returns its precedence. */
static int gen_expr(strbuf *text, strbuf *tree, int depth);

/* An operand that needs precedence >= need: in parentheses when it binds more loosely. */
static void gen_operand(strbuf *text, strbuf *tree, int depth, int need)
{
    strbuf t = {0};
    int prec = gen_expr(&t, tree, depth);
    if (prec < need)
        sb_printf(text, "(%s)", sb_str(&t));
    else
        sb_puts(text, sb_str(&t));
    sb_free(&t);
}

static int gen_expr(strbuf *text, strbuf *tree, int depth)
{
    static const char *names[] = {"a", "b", "x", "len_1", "f32x"};
    static const struct {
        const char *text, *tree;
        int prec;
    } binops[] = {
        {"or", "or", G_OR},   {"and", "and", G_AND}, {"<", "lt", G_CMP},  {"<=", "le", G_CMP},
        {">", "gt", G_CMP},   {">=", "ge", G_CMP},   {"==", "eq", G_CMP}, {"!=", "ne", G_CMP},
        {"+", "add", G_ADD},  {"-", "sub", G_ADD},   {"*", "mul", G_MUL}, {"/", "div", G_MUL},
        {"%", "mod", G_MUL},  {"@", "matmul", G_MUL}, {"//", "floordiv", G_MUL},
    };
    uint32_t pick = depth <= 0 ? gen_rng(4) : gen_rng(12);
    switch (pick) {
    case 0:
    case 1: {
        const char *n = names[gen_rng(5)];
        sb_puts(text, n);
        sb_puts(tree, n);
        return G_ATOM;
    }
    case 2: {
        unsigned v = gen_rng(1000);
        sb_printf(text, gen_rng(2) ? "%u" : "0x%x", v);
        sb_printf(tree, "%u", v);
        return G_ATOM;
    }
    case 3:
        if (gen_rng(2)) {
            sb_puts(text, ".25");
            sb_puts(tree, "0.25");
        } else {
            const char *b = gen_rng(2) ? "true" : "false";
            sb_puts(text, b);
            sb_puts(tree, b);
        }
        return G_ATOM;
    case 4:
        sb_puts(text, "-");
        sb_puts(tree, "(neg ");
        gen_operand(text, tree, depth - 1, G_NEG);
        sb_puts(tree, ")");
        return G_NEG;
    case 5:
        sb_puts(text, "not ");
        sb_puts(tree, "(not ");
        gen_operand(text, tree, depth - 1, G_NOT);
        sb_puts(tree, ")");
        return G_NOT;
    case 6: {
        int nargs = (int)gen_rng(3);
        sb_puts(text, "f(");
        sb_puts(tree, "(call f");
        for (int i = 0; i < nargs; i++) {
            sb_puts(text, i ? ", " : "");
            sb_puts(tree, " ");
            if (gen_rng(4) == 0) {
                sb_puts(text, "i32[2, 3]");
                sb_puts(tree, "i32[2,3]");
            } else {
                gen_operand(text, tree, depth - 1, G_OR);
            }
        }
        sb_puts(text, ")");
        sb_puts(tree, ")");
        return G_ATOM;
    }
    case 7: {
        const char *base = names[gen_rng(5)];
        sb_printf(text, "%s[", base);
        sb_printf(tree, "(index %s ", base);
        gen_operand(text, tree, depth - 1, G_OR);
        sb_puts(text, "]");
        sb_puts(tree, ")");
        return G_ATOM;
    }
    default: {
        int o = (int)gen_rng(sizeof binops / sizeof binops[0]);
        int p = binops[o].prec;
        sb_printf(tree, "(%s ", binops[o].tree);
        /* left-associative; comparisons do not chain, so their left side binds tighter */
        gen_operand(text, tree, depth - 1, p == G_CMP ? p + 1 : p);
        sb_printf(text, " %s ", binops[o].text);
        sb_puts(tree, " ");
        gen_operand(text, tree, depth - 1, p + 1);
        sb_puts(tree, ")");
        return p;
    }
    }
}

static int gen_case_value;

static void gen_block(strbuf *text, strbuf *tree, int depth);

static void gen_statement(strbuf *text, strbuf *tree, int depth)
{
    uint32_t pick = depth <= 0 ? gen_rng(5) : gen_rng(12);
    switch (pick) {
    case 0:
    case 1:
        sb_puts(text, "y = ");
        sb_puts(tree, "(= y ");
        gen_expr(text, tree, 3);
        sb_puts(tree, ")");
        break;
    case 2:
        sb_puts(text, "x[");
        sb_puts(tree, "(= (index x ");
        gen_expr(text, tree, 2);
        sb_puts(text, "] = ");
        sb_puts(tree, ") ");
        gen_expr(text, tree, 2);
        sb_puts(tree, ")");
        break;
    case 3:
        sb_puts(text, "p, q = f(a)");
        sb_puts(tree, "(= p q (call f a))");
        break;
    case 4: {
        static const char *words[] = {"break", "continue", "return"};
        const char *w = words[gen_rng(3)];
        if (gen_rng(2)) {
            sb_puts(text, w);
            sb_puts(tree, w);
        } else {
            sb_puts(text, "print(");
            sb_puts(tree, "(expr (call print ");
            gen_expr(text, tree, 2);
            sb_puts(text, ", \"s\")");
            sb_puts(tree, " \"s\"))");
        }
        break;
    }
    case 5:
    case 6: {
        int arms = 1 + (int)gen_rng(3);
        int has_else = (int)gen_rng(2);
        sb_puts(tree, "(if");
        for (int i = 0; i < arms; i++) {
            sb_puts(text, i ? " elif " : "if ");
            sb_puts(tree, " (arm ");
            gen_expr(text, tree, 2);
            sb_puts(text, " ");
            sb_puts(tree, " ");
            gen_block(text, tree, depth - 1);
            sb_puts(tree, ")");
        }
        if (has_else) {
            sb_puts(text, " else ");
            sb_puts(tree, " (else ");
            gen_block(text, tree, depth - 1);
            sb_puts(tree, ")");
        }
        sb_puts(tree, ")");
        break;
    }
    case 7:
        sb_puts(text, "while ");
        sb_puts(tree, "(while ");
        gen_expr(text, tree, 2);
        sb_puts(text, " ");
        sb_puts(tree, " ");
        gen_block(text, tree, depth - 1);
        sb_puts(tree, ")");
        break;
    case 8: {
        int nargs = 1 + (int)gen_rng(3);
        sb_puts(text, "for i in range(");
        sb_puts(tree, "(for i ");
        if (nargs == 1)
            sb_puts(tree, "0 ");
        for (int k = 0; k < nargs; k++) {
            sb_puts(text, k ? ", " : "");
            gen_expr(text, tree, 1);
            sb_puts(tree, " ");
        }
        if (nargs < 3)
            sb_puts(tree, "_ ");
        sb_puts(text, ") ");
        gen_block(text, tree, depth - 1);
        sb_puts(tree, ")");
        break;
    }
    case 9:
        sb_puts(text, "for r in ");
        sb_puts(tree, "(foreach r ");
        gen_expr(text, tree, 1);
        sb_puts(text, " ");
        sb_puts(tree, " ");
        gen_block(text, tree, depth - 1);
        sb_puts(tree, ")");
        break;
    case 10: {
        int ncases = (int)gen_rng(4);
        int def = (int)gen_rng(ncases + 1);
        sb_puts(text, "switch ");
        sb_puts(tree, "(switch ");
        gen_expr(text, tree, 1);
        sb_puts(text, " {\n");
        for (int k = 0; k <= ncases; k++) {
            if (k == def) {
                sb_puts(text, "default ");
                sb_puts(tree, " (default ");
            } else {
                int v = gen_case_value++ - 3;
                sb_printf(text, "case %d ", v);
                sb_printf(tree, " (case %d ", v);
            }
            gen_block(text, tree, depth - 1);
            sb_puts(text, gen_rng(2) ? "\n" : " ");
            sb_puts(tree, ")");
        }
        sb_puts(text, "}");
        sb_puts(tree, ")");
        break;
    }
    default:
        sb_puts(text, "y = g(");
        sb_puts(tree, "(= y (call g ");
        gen_expr(text, tree, 4);
        sb_puts(text, ")");
        sb_puts(tree, "))");
        break;
    }
}

static void gen_block(strbuf *text, strbuf *tree, int depth)
{
    static const char *gaps[] = {"\n", "; ", "\n\n  # a comment\n", " ;\n"};
    int n = (int)gen_rng(4);
    sb_puts(text, "{");
    sb_puts(tree, "{");
    sb_puts(text, gen_rng(2) ? "\n" : " ");
    for (int i = 0; i < n; i++) {
        gen_statement(text, tree, depth);
        sb_puts(text, i + 1 < n || gen_rng(2) ? gaps[gen_rng(4)] : " ");
        if (i + 1 < n)
            sb_puts(tree, " ");
    }
    sb_puts(text, "}");
    sb_puts(tree, "}");
}

static void test_generated(void)
{
    int failures = 0;
    for (int i = 0; i < 2000 && failures < 3; i++) {
        strbuf text = {0}, tree = {0};
        gen_case_value = 0;
        sb_puts(&text, "graph g(a: f32[2, 2], x: i32[4]) -> (y: i32) ");
        sb_puts(&tree, "(graph g (a:f32[2,2] x:i32[4]) -> (y:i32) ");
        gen_block(&text, &tree, 3);
        sb_puts(&text, "\n");
        sb_puts(&tree, ")");
        parsed r = parse_text(text.data, text.len);
        char *got = r.nerrors ? strdup(r.errors) : show_module(r.m);
        if (!test_check_str(got, sb_str(&tree), __FILE__, __LINE__, "generated program")) {
            fprintf(stderr, "program:\n%s\n", text.data);
            failures++;
        }
        free(got);
        done(&r);
        sb_free(&text);
        sb_free(&tree);
    }
}

/* ---- hostile input ----------------------------------------------------------------- */

static const char *valid_file =
    "# a valid file: every prefix of it must parse without a crash\n"
    "graph helper(a: f32[4], k: i32) -> (s: f32, m: f32[4]) {\n"
    "  s = sum(a); m = a * 2.0\n"
    "}\n"
    "graph main(x: f32[4], n: i32, flag: bool) -> (out: f32, idx: i32) {\n"
    "  out = 0.0\n"
    "  idx = -1\n"
    "  t, u = helper(x, 3)\n"
    "  for i in range(0, n, 2) {\n"
    "    if i < 4 and x[i] > 0.5 { out = out + x[i] } elif not flag { continue } else { break }\n"
    "  }\n"
    "  for r in x { out = out - r * 1e-3 }\n"
    "  while out > 10.0 { out = out / 2.0 }\n"
    "  switch n % 3 {\n"
    "    case 0 { idx = 0 }\n"
    "    case -1 { idx = 1 }\n"
    "    default { idx = argmax(x) }\n"
    "  }\n"
    "  z = zeros(f32[2, 2]); w = cast(z, f64)\n"
    "  assert(idx >= -1, \"idx \\\"ok\\\"\")\n"
    "  print(out, \"out\")\n"
    "  if flag { return }\n"
    "}\n";

static void test_valid_file(void)
{
    parsed r = parse_text(valid_file, strlen(valid_file));
    CHECK_STR(r.errors, "");
    CHECK(r.m && r.m->ngraphs == 2);
    done(&r);
}

static void test_prefixes(void)
{
    size_t n = strlen(valid_file);
    int missing_error = 0;
    for (size_t k = 0; k < n; k++) {
        /* a copy of exactly k bytes, so a read past the end shows under ASan */
        char *buf = malloc(k ? k : 1);
        memcpy(buf, valid_file, k);
        parsed r = parse_text(buf, k);
        if (!r.m)
            missing_error++;
        done(&r);
        free(buf);
    }
    CHECK_INT(missing_error, 0);
}

static uint32_t rng_state = 12345;
static uint32_t rng(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

static void test_random_bytes(void)
{
    int null_modules = 0;
    for (int i = 0; i < 3000; i++) {
        size_t len = rng() % 200;
        char *buf = malloc(len ? len : 1);
        for (size_t k = 0; k < len; k++)
            buf[k] = (char)(rng() & 0xff);
        parsed r = parse_text(buf, len);
        if (!r.m)
            null_modules++;
        if (r.m && r.m->ngraphs == 0 && r.nerrors == 0)
            null_modules++; /* nothing parsed and nothing said */
        done(&r);
        free(buf);
    }
    CHECK_INT(null_modules, 0);
}

/* Random sequences of the language's own tokens reach deeper into the parser than bytes do. */
static void test_random_tokens(void)
{
    static const char *words[] = {
        "graph", "g", "(", ")", "x", ":", "f32", "[", "]", "3", ",", "->", "{", "}", "\n", ";", "if", "elif",
        "else", "while", "for", "in", "range", "switch", "case", "default", "break", "continue", "return",
        "=", "+", "-", "*", "/", "%", "@", "<", "<=", "==", "!=", "and", "or", "not", "true", "1.5", "\"s\"",
        "-1", "y", "i32", "bool", "print", "zeros",
    };
    const int nwords = (int)(sizeof words / sizeof words[0]);
    int bad = 0;
    for (int i = 0; i < 3000; i++) {
        strbuf b = {0};
        if (i % 2)
            sb_puts(&b, "graph g(x: i32) -> (y: i32) {\n");
        int n = (int)(rng() % 60);
        for (int k = 0; k < n; k++) {
            sb_puts(&b, words[rng() % (uint32_t)nwords]);
            sb_puts(&b, " ");
        }
        char *text = sb_take(&b);
        size_t len = strlen(text);
        parsed r = parse_text(text, len);
        if (!r.m || (r.m->ngraphs == 0 && r.nerrors == 0))
            bad++;
        done(&r);
        free(text);
    }
    CHECK_INT(bad, 0);
}

/* A file with `open` repeated `count` times inside a graph body, then `close` as often. */
static parsed nested(const char *open, const char *mid, const char *close, int count)
{
    strbuf b = {0};
    sb_puts(&b, "graph g(c: bool) -> (y: i32) {\n  ");
    for (int i = 0; i < count; i++)
        sb_puts(&b, open);
    sb_puts(&b, mid);
    for (int i = 0; i < count; i++)
        sb_puts(&b, close);
    sb_puts(&b, "\n}\ngraph h() -> (y: i32) { y = 1 }\n");
    parsed r = parse_text(b.data, b.len);
    sb_free(&b);
    return r;
}

static void check_too_deep(const char *open, const char *mid, const char *close, int line)
{
    parsed r = nested(open, mid, close, 10000);
    test_check_int(r.nerrors, 1, __FILE__, line, open);
    test_check(strstr(r.errors, "error: nesting is too deep (more than 256 levels)\n") != NULL, __FILE__, line,
               "the nesting message");
    /* the graph after it is still parsed */
    test_check(r.m && r.m->ngraphs == 2, __FILE__, line, "both graphs come back");
    done(&r);
    /* a modest depth is fine */
    r = nested(open, mid, close, 50);
    test_check_int(r.nerrors, 0, __FILE__, line, open);
    done(&r);
}

static void test_deep_nesting(void)
{
    check_too_deep("if c {\n", "y = 1\n", "}\n", __LINE__);
    check_too_deep("while c { ", "y = 1", " }", __LINE__);
    check_too_deep("switch y { case 1 { ", "y = 1", " } }", __LINE__);
    check_too_deep("for i in range(3) { ", "y = 1", " }", __LINE__);
    check_too_deep("for r in c { ", "y = 1", " }", __LINE__);

    /* blocks and parentheses count together */
    char mid[1024];
    int k = snprintf(mid, sizeof mid, "y = ");
    for (int i = 0; i < 100; i++)
        k += snprintf(mid + k, sizeof mid - (size_t)k, "(");
    k += snprintf(mid + k, sizeof mid - (size_t)k, "1");
    for (int i = 0; i < 100; i++)
        k += snprintf(mid + k, sizeof mid - (size_t)k, ")");
    parsed r = nested("if c {\n", mid, "}\n", 200);
    CHECK_INT(r.nerrors, 1);
    CHECK(strstr(r.errors, "nesting is too deep") != NULL);
    done(&r);
    r = nested("if c {\n", mid, "}\n", 100);
    CHECK_INT(r.nerrors, 0);
    done(&r);
}

static void test_deep_expressions(void)
{
    /* one statement with 10,000 of each: a single error, no stack overflow */
    static const char *forms[][3] = {
        {"(", "1", ")"}, {"-", "1", ""}, {"not ", "c", ""}, {"x[", "0", "]"}, {"f(", "1", ")"},
    };
    for (int f = 0; f < 5; f++) {
        strbuf b = {0};
        sb_puts(&b, "graph g(c: bool) -> (y: i32) {\n  y = ");
        for (int i = 0; i < 10000; i++)
            sb_puts(&b, forms[f][0]);
        sb_puts(&b, forms[f][1]);
        for (int i = 0; i < 10000; i++)
            sb_puts(&b, forms[f][2]);
        sb_puts(&b, "\n  y = 2\n}\n");
        parsed r = parse_text(b.data, b.len);
        test_check_int(r.nerrors, 1, __FILE__, __LINE__, forms[f][0]);
        CHECK(strstr(r.errors, "nesting is too deep") != NULL);
        done(&r);
        sb_free(&b);
    }
    /* 10,000 bare opening or closing brackets, alone and inside a graph body */
    static const char *brackets[] = {"{", "(", "[", "}", ")", "]", "if c {"};
    for (int f = 0; f < 7; f++) {
        for (int inside = 0; inside < 2; inside++) {
            strbuf b = {0};
            if (inside)
                sb_puts(&b, "graph g(c: bool) -> (y: i32) {\n");
            for (int i = 0; i < 10000; i++)
                sb_puts(&b, brackets[f]);
            parsed r = parse_text(b.data, b.len);
            test_check(r.m && r.nerrors > 0 && r.nerrors <= 3, __FILE__, __LINE__, brackets[f]);
            done(&r);
            sb_free(&b);
        }
    }

    /* a flat chain makes a tree as deep as it is long, which the recursive passes after the
     * parser would walk: 10,000 terms are too many, 200 are fine */
    static const char *chains[][2] = {{"1", " + 1"}, {"c", " and c"}, {"x", "[0]"}, {"1", " * 2 - 3"}};
    for (int f = 0; f < 4; f++) {
        for (int n = 200; n <= 10000; n += 9800) {
            strbuf b = {0};
            sb_puts(&b, "graph g(c: bool) -> (y: i32) {\n  y = ");
            sb_puts(&b, chains[f][0]);
            for (int i = 0; i < n / (f == 3 ? 2 : 1); i++)
                sb_puts(&b, chains[f][1]);
            sb_puts(&b, "\n  y = 2\n}\n");
            parsed r = parse_text(b.data, b.len);
            test_check_int(r.nerrors, n == 200 ? 0 : 1, __FILE__, __LINE__, chains[f][1]);
            if (n > 200)
                CHECK(strstr(r.errors, "nesting is too deep (more than 256 levels)") != NULL);
            done(&r);
            sb_free(&b);
        }
    }
}

static void test_huge_literals(void)
{
    strbuf b = {0};
    sb_puts(&b, "graph g() -> (y: i64) {\n  y = ");
    for (int i = 0; i < 10000; i++)
        sb_puts(&b, "9");
    sb_puts(&b, "\n}\n");
    parsed r = parse_text(b.data, b.len);
    CHECK_INT(r.nerrors, 1);
    const char *want = "t.cfx:2:7: error: integer literal is too large\n";
    CHECK(strncmp(r.errors, want, strlen(want)) == 0);
    done(&r);
    sb_free(&b);

    /* a huge dimension: reported by the lexer once, not again as a shape */
    b = (strbuf){0};
    sb_puts(&b, "graph g(x: f32[");
    for (int i = 0; i < 10000; i++)
        sb_puts(&b, "1");
    sb_puts(&b, "]) -> (y: i64) { y = 1 }\n");
    r = parse_text(b.data, b.len);
    CHECK_INT(r.nerrors, 1);
    CHECK(strstr(r.errors, "integer literal is too large") != NULL);
    done(&r);
    sb_free(&b);

    check_errors("graph g(x: f32[2147483648]) -> (y: i32) { y = 1 }\n",
                 "t.cfx:1:12: error: shape f32[2147483648] is too large\n"
                 "graph g(x: f32[2147483648]) -> (y: i32) { y = 1 }\n           ^\n",
                 __LINE__);
    check_errors("graph g(x: f32[0, 3]) -> (y: i32) { y = 1 }\n",
                 "t.cfx:1:12: error: shape f32[0, 3] has a dimension of 0\n"
                 "graph g(x: f32[0, 3]) -> (y: i32) { y = 1 }\n           ^\n",
                 __LINE__);
    /* 2^30 elements is the limit, one more row is over it */
    check_module("graph g(x: bool[1024, 1024, 1024]) -> (y: i32) { y = 1 }",
                 "(graph g (x:bool[1024,1024,1024]) -> (y:i32) {(= y 1)})", __LINE__);
    check_errors("graph g() -> (y: i32) { y = zeros(f32[1025, 1024, 1024]) }\n",
                 "t.cfx:1:35: error: shape f32[1025, 1024, 1024] is too large\n"
                 "graph g() -> (y: i32) { y = zeros(f32[1025, 1024, 1024]) }\n                                  ^\n",
                 __LINE__);
}

/* ---- type texts and signatures ----------------------------------------------------- */

static void test_type_text(void)
{
    cfx_type t;
    char err[200];
    CHECK_INT(parse_type_text("f32[2, 3]", &t, err, sizeof err), 0);
    CHECK_INT(t.dtype, CFX_F32);
    CHECK_INT(t.rank, 2);
    CHECK_INT(t.dims[0], 2);
    CHECK_INT(t.dims[1], 3);
    CHECK_INT(parse_type_text("  i64[] ", &t, err, sizeof err), 0);
    CHECK_INT(t.dtype, CFX_I64);
    CHECK_INT(t.rank, 0);
    CHECK_INT(parse_type_text("bool", &t, err, sizeof err), 0);
    CHECK_INT(t.dtype, CFX_BOOL);
    CHECK_INT(parse_type_text("f64[1,2,3,4]", &t, err, sizeof err), 0);
    CHECK_INT(t.rank, 4);
    CHECK_INT(t.dims[3], 4);
    CHECK_INT(parse_type_text("i64[2,3,1,4,5]", &t, err, sizeof err), 0);
    CHECK_INT(t.rank, 5);
    CHECK_INT(t.dims[4], 5);

    CHECK_INT(parse_type_text("f32[3", &t, err, sizeof err), -1);
    CHECK_STR(err, "expected ',' or ']' in the shape, found end of file");
    CHECK_INT(parse_type_text("f16", &t, err, sizeof err), -1);
    CHECK_STR(err, "expected a type (f32, f64, i32, i64 or bool), found 'f16'");
    CHECK_INT(parse_type_text("f32[2] x", &t, err, sizeof err), -1);
    CHECK_STR(err, "expected the end of the type, found 'x'");
    CHECK_INT(parse_type_text("f32[1,1,1,1,1,1]", &t, err, sizeof err), -1);
    CHECK_STR(err, "rank 6 is more than 5");
    CHECK_INT(parse_type_text("i32[65536, 65536]", &t, err, sizeof err), -1);
    CHECK_STR(err, "shape i32[65536, 65536] is too large");
    CHECK_INT(parse_type_text("i32[-1]", &t, err, sizeof err), -1);
    CHECK_STR(err, "expected a dimension (a positive integer), found '-'");
    CHECK_INT(parse_type_text("", &t, err, sizeof err), -1);
    CHECK_STR(err, "expected a type (f32, f64, i32, i64 or bool), found end of file");
    CHECK_INT(parse_type_text("i32$", &t, err, sizeof err), -1);
    CHECK_STR(err, "unexpected character '$'");
    CHECK_INT(parse_type_text(NULL, &t, err, sizeof err), -1);
}

static void test_signature(void)
{
    cfx_type p[4], r[2];
    int np = -1, nr = -1;
    char err[200];
    CHECK_INT(parse_signature("(f32[4], f32) -> (f32[4])", p, 4, &np, r, 2, &nr, err, sizeof err), 0);
    CHECK_INT(np, 2);
    CHECK_INT(nr, 1);
    CHECK_INT(p[0].rank, 1);
    CHECK_INT(p[0].dims[0], 4);
    CHECK_INT(p[1].rank, 0);
    CHECK_INT(r[0].dtype, CFX_F32);
    CHECK_INT(r[0].dims[0], 4);
    CHECK_INT(parse_signature("() -> i32", p, 4, &np, r, 2, &nr, err, sizeof err), 0);
    CHECK_INT(np, 0);
    CHECK_INT(nr, 1);
    CHECK_INT(r[0].dtype, CFX_I32);
    CHECK_INT(parse_signature("(i64[2,2], bool) -> (f64, i32[3])", p, 4, &np, r, 2, &nr, err, sizeof err), 0);
    CHECK_INT(np, 2);
    CHECK_INT(nr, 2);
    CHECK_INT(p[0].dtype, CFX_I64);
    CHECK_INT(p[1].dtype, CFX_BOOL);
    CHECK_INT(r[1].dims[0], 3);

    CHECK_INT(parse_signature("(f32, f32, f32) -> (f32)", p, 2, &np, r, 2, &nr, err, sizeof err), -1);
    CHECK_STR(err, "more than 2 parameters");
    CHECK_INT(parse_signature("(f32) -> (f32, f32, f32)", p, 2, &np, r, 2, &nr, err, sizeof err), -1);
    CHECK_STR(err, "more than 2 results");
    CHECK_INT(parse_signature("(f32) (f32)", p, 2, &np, r, 2, &nr, err, sizeof err), -1);
    CHECK_STR(err, "expected '->' after the parameter types, found '('");
    CHECK_INT(parse_signature("f32 -> f32", p, 2, &np, r, 2, &nr, err, sizeof err), -1);
    CHECK_STR(err, "expected '(' to start the parameter types, found 'f32'");
    CHECK_INT(parse_signature("(x: f32) -> f32", p, 2, &np, r, 2, &nr, err, sizeof err), -1);
    CHECK_STR(err, "expected a type (f32, f64, i32, i64 or bool), found 'x'");
    CHECK_INT(parse_signature("(f32) -> (f32) junk", p, 2, &np, r, 2, &nr, err, sizeof err), -1);
    CHECK_STR(err, "expected the end of the signature, found 'junk'");
    CHECK_INT(parse_signature("(f32) -> (f32[0])", p, 2, &np, r, 2, &nr, err, sizeof err), -1);
    CHECK_STR(err, "shape f32[0] has a dimension of 0");
}

/* Constants of the module: their literals read into their data (values by hand), wherever the
 * file declares them, across lines inside brackets, with a trailing comma; i64's extremes. */
static void test_constants(void)
{
    const char *src = "const A: f32[2, 2] = [[1, 2.5],\n"
                      "   [-3, inf],\n"
                      "]\n"
                      "graph g() -> (y: i32) { y = 1 }\n"
                      "const B: i64[2] = [-9223372036854775808, 9223372036854775807]\n"
                      "const C: bool[3] = [true, 0, 1]; const D: f64[2] = -nan\n"
                      "const E: i32[2, 1]\n"
                      "const F: f32 = \"w.npy\"\n";
    parsed r = parse_text(src, strlen(src));
    CHECK_STR(r.errors, "");
    if (!CHECK(r.m && r.m->nconsts == 6 && r.m->ngraphs == 1)) {
        done(&r);
        return;
    }
    const ast_const *c = r.m->consts;
    CHECK_STR(c[0].name, "A");
    CHECK(c[0].line == 1 && c[0].col == 7);
    const float *a = c[0].data;
    CHECK(a && a[0] == 1.0f && a[1] == 2.5f && a[2] == -3.0f && isinf(a[3]) && a[3] > 0);
    const int64_t *b = c[1].data;
    CHECK(b && b[0] == INT64_MIN && b[1] == INT64_MAX);
    const uint8_t *bits = c[2].data;
    CHECK(bits && bits[0] == 1 && bits[1] == 0 && bits[2] == 1);
    const double *d = c[3].data;
    CHECK(d && isnan(d[0]) && c[3].fill); /* one value for both, which compile.c repeats */
    CHECK(c[4].data == NULL && c[4].path == NULL && !c[4].bad);
    CHECK(c[4].type.rank == 2 && c[4].type.dims[0] == 2 && c[4].type.dims[1] == 1);
    CHECK(c[5].data == NULL && c[5].path && strcmp(c[5].path, "w.npy") == 0 && c[5].vcol == 16);
    done(&r);
    /* -2^63 only after a minus, and only in a constant */
    check_errors("const B: i64 = 9223372036854775808\ngraph g() -> (y: i32) { y = 1 }\n",
                 "t.cfx:1:16: error: integer literal is too large\nconst B: i64 = 9223372036854775808\n"
                 "               ^\n", __LINE__);
    check_errors("graph g() -> (y: i64) { y = -9223372036854775808 }\n",
                 "t.cfx:1:30: error: integer literal is too large\ngraph g() -> (y: i64) { y = -9223372036854775808 }\n"
                 "                             ^\n", __LINE__);
}

int main(void)
{
    test_precedence();
    test_type_arguments();
    test_statements();
    test_graphs();
    test_positions();
    test_messages();
    test_recovery();
    test_generated();
    test_valid_file();
    test_prefixes();
    test_random_bytes();
    test_random_tokens();
    test_deep_nesting();
    test_deep_expressions();
    test_huge_literals();
    test_type_text();
    test_signature();
    test_constants();
    return test_finish("test_parse");
}
