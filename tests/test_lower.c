/* test_lower.c: the lowering, pinned two ways.
 *
 * 1. Golden listings: every tests/dump/NAME.cfx is compiled and its dump compared whole with
 *    tests/dump/NAME.dump, written by hand from the lowering rules in lower.c (a folded
 *    branch leaves no record; a loop is test, JUMP_FALSE, TICK, body, JUMP back; ...).
 * 2. Runs: small graphs over i32 scalars run on the CPU executor, each expected result worked
 *    out by hand in the comment beside it. These pin what the records mean (loop bounds,
 *    negative steps, break/continue/return, switch tables, short-circuit conditions that
 *    guard an index, inlined calls that assign their parameters), not how they look.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/gen/cgen.h"
#include "host/front/compile.h"
#include "host/runtime/exec.h"
#include "host/util/strbuf.h"
#include "testutil.h"

#define MAXV 4

typedef struct run_case {
    const char *name;
    const char *src;
    int32_t in[MAXV];
    cfx_status status;
    int32_t out[MAXV];
} run_case;

/* ---- runs ---------------------------------------------------------------------------------- */
static const char *const SPEC_EXAMPLE =
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
    "}\n";

static const char *const NEG_STEP =
    "graph f(n: i32) -> (s: i32) { s = 0; for i in range(n, 0, -2) { s = s + i } }\n";

static const char *const COMPUTED_STEP =
    "graph f(a: i32, b: i32, st: i32) -> (s: i32) { s = 0\n for i in range(a, b, st) { s = s + 1 } }\n";

static const char *const BREAK_CONTINUE =
    "graph f(n: i32) -> (s: i32) {\n"
    "  s = 0; i = 0\n"
    "  while true {\n"
    "    i = i + 1\n"
    "    if i > n { break }\n"
    "    if i % 2 == 0 { continue }\n"
    "    s = s + i\n"
    "  }\n"
    "}\n";

static const char *const RETURN_IN_LOOP =
    "graph f(n: i32) -> (r: i32) {\n"
    "  r = -1\n"
    "  for i in range(0, 100) {\n"
    "    if i * i >= n { r = i; return }\n"
    "  }\n"
    "}\n";

static const char *const SWITCH_DENSE =
    "graph f(x: i32) -> (r: i32) {\n"
    "  switch x { case -1 { r = 10 } case 0 { r = 20 } case 2 { r = 30 } default { r = 40 } }\n"
    "}\n";

static const char *const SWITCH_SPARSE =
    "graph f(x: i32) -> (r: i32) {\n"
    "  r = 0\n"
    "  switch x { case 1000000 { r = 1 } case -5 { r = 2 } }\n"
    "}\n";

static const char *const SHORT_CIRCUIT =
    "graph f(i: i32) -> (r: i32, s: i32, t: i32) {\n"
    "  x = iota(i32[4])\n"
    "  r = 0; s = 0; t = 0\n"
    "  if i < 4 and x[i] > 1 { r = 1 }\n"
    "  if i >= 4 or x[i] == 0 { s = 1 }\n"
    "  c = i < 4 and x[i] > 1\n"
    "  if not c { t = 1 }\n"
    "}\n";

static const char *const INLINE =
    "graph main(a: i32) -> (r: i32, q: i32, m: i32, keep: i32) {\n"
    "  r = twice(a) + 1\n"
    "  q, m = divmod(a, 3)\n"
    "  keep = a\n"
    "}\n"
    "graph twice(x: i32) -> (y: i32) { x = x * 2; y = x }\n"
    "graph divmod(a: i32, b: i32) -> (q: i32, m: i32) {\n"
    "  q = a // b; m = a % b\n"
    "  if m == 2 { return }\n"
    "  q = q + 100\n"
    "}\n";

static const char *const FOR_EACH =
    "graph f(k: i32) -> (s: i32, t: i32) {\n"
    "  x = iota(i32[4])\n"
    "  s = 0; t = 0\n"
    "  for r in x { s = s + r * r }\n"
    "  for r in x { x[0] = k; t = t + r }\n"
    "  t = t + x[0]\n"
    "}\n";

static const char *const DIVIDE =
    "graph f(a: i32, b: i32) -> (q: i32, m: i32) { q = a // b; m = a % b }\n";

static const char *const DIVIDE_C =
    "graph f(a: i32, b: i32) -> (q: i32, m: i32) { q = truncdiv(a, b); m = fmod(a, b) }\n";

static const char *const LOOP_VAR_ASSIGNED =
    "graph f(n: i32) -> (s: i32) { s = 0; for i in range(0, n) { s = s + i; i = i + 10 } }\n";

static const char *const NESTED =
    "graph f(n: i32) -> (s: i32) {\n"
    "  s = 0\n"
    "  for i in range(0, n) {\n"
    "    for j in range(0, n) { if j > i { break }; s = s + 1 }\n"
    "  }\n"
    "}\n";

static const char *const ELIF =
    "graph f(x: i32) -> (r: i32) { if x < 0 { r = -1 } elif x == 0 { r = 0 } else { r = 1 } }\n";

static const char *const ASSERT =
    "graph f(a: i32) -> (r: i32) { assert(a > 0, \"a must be positive\"); r = a }\n";

static const char *const MATRIX =
    "graph f(k: i32) -> (r: i32, t01: i32) {\n"
    "  m = ones(i32[2, 2])\n"
    "  m = m @ m\n"
    "  m = m @ m\n"
    "  r = sum(m) + k\n"
    "  t = iota(i32[2, 2])\n"
    "  t = transpose(t)\n"
    "  t01 = t[0][1]\n"
    "}\n";

static const char *const SET_ROW =
    "graph f(a: i32) -> (r: i32, w: i32) {\n"
    "  x = zeros(i32[3])\n"
    "  x[a] = 5\n"
    "  r = x[2]\n"
    "  w = sum(where(iota(i32[5]) > 2, 1, 0))\n"
    "}\n";

static const char *const INDEX_INTO_ITSELF =
    "graph f(i: i32) -> (r: i32) {\n"
    "  x = iota(i32[4]) * 2\n"
    "  i = x[i]\n"
    "  c = ones(bool[1, 1])\n"
    "  r = i\n"
    "  if c and i > 2 { r = r + 100 }\n"
    "}\n";

static const char *const FOLDED =
    "graph f(a: i32) -> (r: i32) {\n"
    "  x = 0; y = 1\n"
    "  if x < y + 1 { r = a } else { r = 1.5 }\n"
    "  while false { r = r + bogus(1) }\n"
    "  c = true\n"
    "  while c { c = false; r = r + 1 }\n"
    "}\n";

static const char *const RANGE_READS_OLD =
    "graph f(i: i32) -> (s: i32) { s = 0; for i in range(0, i) { s = s + 1 } }\n";

static const char *const RETURN_ONLY =
    "graph f(n: i32) -> (r: i32) {\n"
    "  i = 0\n"
    "  while true {\n"
    "    i = i + 1\n"
    "    if i >= n { r = i * 10; return }\n"
    "  }\n"
    "}\n";

static const run_case runs[] = {
    /* the spec's example: out = 5 for x=0 y=1 i=0; i=3 never enters the loop */
    {"spec", SPEC_EXAMPLE, {0, 1, 0}, CFX_OK, {5}},
    {"spec no iteration", SPEC_EXAMPLE, {7, 1, 3}, CFX_OK, {7}},
    /* 7 + 5 + 3 + 1 */
    {"negative step", NEG_STEP, {7}, CFX_OK, {16}},
    {"negative step, empty", NEG_STEP, {0}, CFX_OK, {0}},
    /* 0 3 6 9; 10 7 4 1; step 0 stops with value; a negative step away from b runs 0 times */
    {"computed step up", COMPUTED_STEP, {0, 10, 3}, CFX_OK, {4}},
    {"computed step down", COMPUTED_STEP, {10, 0, -3}, CFX_OK, {4}},
    {"computed step zero", COMPUTED_STEP, {0, 10, 0}, CFX_STOP_VALUE, {0}},
    {"computed step wrong way", COMPUTED_STEP, {0, 10, -1}, CFX_OK, {0}},
    /* odd i up to 5: 1 + 3 + 5 */
    {"break and continue", BREAK_CONTINUE, {5}, CFX_OK, {9}},
    /* first i with i*i >= 10 is 4; none below 100 reaches 20000 */
    {"return in loop", RETURN_IN_LOOP, {10}, CFX_OK, {4}},
    {"return never taken", RETURN_IN_LOOP, {20000}, CFX_OK, {-1}},
    {"switch -1", SWITCH_DENSE, {-1}, CFX_OK, {10}},
    {"switch 0", SWITCH_DENSE, {0}, CFX_OK, {20}},
    {"switch hole", SWITCH_DENSE, {1}, CFX_OK, {40}},
    {"switch 2", SWITCH_DENSE, {2}, CFX_OK, {30}},
    {"switch above", SWITCH_DENSE, {3}, CFX_OK, {40}},
    {"switch far below", SWITCH_DENSE, {INT32_MIN}, CFX_OK, {40}},
    {"sparse switch 1000000", SWITCH_SPARSE, {1000000}, CFX_OK, {1}},
    {"sparse switch -5", SWITCH_SPARSE, {-5}, CFX_OK, {2}},
    {"sparse switch none", SWITCH_SPARSE, {0}, CFX_OK, {0}},
    /* x = [0 1 2 3]. i=4: x[4] is never read. i=-1: x[-1] = 3. i=-5: out of range */
    {"short circuit 2", SHORT_CIRCUIT, {2}, CFX_OK, {1, 0, 0}},
    {"short circuit 1", SHORT_CIRCUIT, {1}, CFX_OK, {0, 0, 1}},
    {"short circuit 0", SHORT_CIRCUIT, {0}, CFX_OK, {0, 1, 1}},
    {"short circuit guards", SHORT_CIRCUIT, {4}, CFX_OK, {0, 1, 1}},
    {"short circuit negative", SHORT_CIRCUIT, {-1}, CFX_OK, {1, 0, 0}},
    {"short circuit out of range", SHORT_CIRCUIT, {-5}, CFX_STOP_INDEX, {0}},
    /* twice(7) = 14, +1; 7 // 3 = 2, 7 % 3 = 1 (no return: q + 100); a unchanged.
     * -7: -7 // 3 = -3, -7 % 3 = 2 (Python's: -7 = -3 * 3 + 2): return early with q = -3 */
    {"inline", INLINE, {7}, CFX_OK, {15, 102, 1, 7}},
    {"inline with return", INLINE, {-7}, CFX_OK, {-13, -3, 2, -7}},
    /* 0+1+4+9; the second loop sees the rows as they were: 0+1+2+3, then x[0] = k = 100 */
    {"for each", FOR_EACH, {100}, CFX_OK, {14, 106}},
    /* Python's: -7 = -4 * 2 + 1; C's: -7 = -3 * 2 - 1 */
    {"divide", DIVIDE, {-7, 2}, CFX_OK, {-4, 1}},
    {"divide by zero", DIVIDE, {7, 0}, CFX_STOP_DIVIDE, {0}},
    {"divide as C", DIVIDE_C, {-7, 2}, CFX_OK, {-3, -1}},
    {"divide as C by zero", DIVIDE_C, {7, 0}, CFX_STOP_DIVIDE, {0}},
    /* assigning i does not change the iterations: 0+1+2+3+4 */
    {"loop var assigned", LOOP_VAR_ASSIGNED, {5}, CFX_OK, {10}},
    /* 1 + 2 + 3 + 4 */
    {"nested break", NESTED, {4}, CFX_OK, {10}},
    {"elif -", ELIF, {-3}, CFX_OK, {-1}},
    {"elif 0", ELIF, {0}, CFX_OK, {0}},
    {"elif +", ELIF, {3}, CFX_OK, {1}},
    {"assert ok", ASSERT, {2}, CFX_OK, {2}},
    {"assert fails", ASSERT, {0}, CFX_STOP_ASSERT, {0}},
    /* ones @ ones = all 2; again: 2*2+2*2 = 8 each, sum 32; transpose of [[0,1],[2,3]] */
    {"matmul in place", MATRIX, {1}, CFX_OK, {33, 2}},
    /* x[-1] is x[2]; w: iota 0..4 > 2 at 3 and 4 */
    {"set row -1", SET_ROW, {-1}, CFX_OK, {5, 2}},
    {"set row 2", SET_ROW, {2}, CFX_OK, {5, 2}},
    {"set row 0", SET_ROW, {0}, CFX_OK, {0, 2}},
    {"set row out of range", SET_ROW, {3}, CFX_STOP_INDEX, {0}},
    /* range(0, i) reads i before the loop variable i is set: 3 iterations */
    {"range reads the old value", RANGE_READS_OLD, {3}, CFX_OK, {3}},
    /* left only by return (nothing after the loop is reached, so r needs no value there) */
    {"while true with return", RETURN_ONLY, {3}, CFX_OK, {30}},
    /* x = [0 2 4 6]: i = x[3] = 6, then a bool[1, 1] and a scalar short-circuit: 106 */
    {"index into itself", INDEX_INTO_ITSELF, {3}, CFX_OK, {106}},
    {"index into itself 1", INDEX_INTO_ITSELF, {1}, CFX_OK, {2}},
    /* the else branch (a type error) and the while-false body (an unknown op) are dropped */
    {"folded", FOLDED, {41}, CFX_OK, {42}},
};

static void run_one(const run_case *rc)
{
    compiled_module m;
    char *diags = NULL;
    if (!CHECK(compile_source(NULL, rc->name, rc->src, strlen(rc->src), &m, &diags) == 0)) {
        fprintf(stderr, "%s:\n%s", rc->name, diags ? diags : "");
        free(diags);
        return;
    }
    const cfx_prog *p = m.graphs[0].prog;
    int32_t in[MAXV], out[MAXV];
    void *ip[MAXV], *op[MAXV];
    CHECK(p->ninputs <= MAXV && p->nresults <= MAXV);
    for (int i = 0; i < MAXV; i++) {
        in[i] = rc->in[i];
        out[i] = -12345;
        ip[i] = &in[i];
        op[i] = &out[i];
    }
    exec_run r;
    memset(&r, 0, sizeof r);
    r.prog = p;
    r.inputs = ip;
    r.results = op;
    r.max_iters = 1000000;
    exec_outcome o;
    memset(&o, 0, sizeof o);
    cpu_run(&r, &o);
    if (!CHECK_INT(o.status, rc->status))
        fprintf(stderr, "  in case '%s'\n", rc->name);
    if (rc->status == CFX_OK)
        for (int i = 0; i < p->nresults; i++)
            if (!CHECK_INT(out[i], rc->out[i]))
                fprintf(stderr, "  in case '%s', result %d\n", rc->name, i);
    compiled_module_free(&m);
}

/* ---- the iteration budget ------------------------------------------------------------------------
 * The budget counts iterations, all loops together: one per body entered, none for the test
 * that ends a loop. Each graph's loops make exactly `iters` iterations (counted by hand in the
 * comment) and print once per body entered: a budget of `iters` ends ok with iterations ==
 * iters; a budget of iters - 1 stops with limit at a loop's TICK, at its statement's line,
 * before that body runs (iters - 1 prints), with the results untouched. */
typedef struct budget_case {
    const char *name;
    const char *src;
    int32_t in;
    int64_t iters;
    int stop_line; /* of the loop statement whose iteration goes over the budget */
} budget_case;

static void count_print(void *user, const cfx_prog *prog, int32_t record, const void *data)
{
    (void)prog;
    (void)record;
    (void)data;
    (*(int64_t *)user)++;
}

static void budget_runs(void)
{
    static const budget_case cases[] = {
        /* i = 0, 1, 2 enter the body */
        {"while", "graph f(n: i32) -> (r: i32) {\n  r = 0; i = 0\n  while i < n {\n    print(i)\n"
                  "    i = i + 1; r = r + 1\n  }\n}\n", 3, 3, 3},
        /* both tests true for i = 0, 1, 2 */
        {"while and", "graph f(n: i32) -> (r: i32) {\n  r = 0; i = 0\n  while i < n and i < 10 {\n"
                      "    print(i); i = i + 1; r = r + 1\n  }\n}\n", 3, 3, 3},
        /* i = 0..3, and a continue that skips the rest of the body still counts */
        {"for range continue", "graph f(n: i32) -> (r: i32) {\n  r = 0\n  for i in range(0, n) {\n"
                               "    print(i)\n    if i % 2 == 0 { continue }\n    r = r + i\n  }\n}\n",
         4, 4, 3},
        /* 3 rows */
        {"for each", "graph f(n: i32) -> (r: i32) {\n  r = n; x = zeros(i32[3])\n  for v in x {\n"
                     "    print(v); r = r + 1\n  }\n}\n", 0, 3, 3},
        /* the outer loop 2 times, the inner 3 times in each: 2 + 6; the last iteration to
         * start is the inner loop's */
        {"nested", "graph f(n: i32) -> (r: i32) {\n  r = 0\n  for i in range(0, 2) {\n    print(i)\n"
                   "    for j in range(0, n) {\n      print(j); r = r + 1\n    }\n  }\n}\n",
         3, 8, 5},
        /* while true: bodies with i = 1, 2, 3, the third leaves by break */
        {"while true break", "graph f(n: i32) -> (r: i32) {\n  r = 0; i = 0\n  while true {\n"
                             "    print(i); i = i + 1; r = i\n    if i >= n { break }\n  }\n}\n",
         3, 3, 3},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const budget_case *bc = &cases[k];
        compiled_module m;
        char *diags = NULL;
        if (!CHECK(compile_source(NULL, bc->name, bc->src, strlen(bc->src), &m, &diags) == 0)) {
            fprintf(stderr, "%s:\n%s", bc->name, diags ? diags : "");
            free(diags);
            continue;
        }
        const cfx_prog *p = m.graphs[0].prog;
        /* budget iters, then iters - 1; each with the fused steps and, traced, without */
        for (int run = 0; run < 4; run++) {
            int64_t budget = run < 2 ? bc->iters : bc->iters - 1, prints = 0;
            int32_t in = bc->in, out = -12345;
            void *ip[1] = {&in}, *op[1] = {&out};
            exec_run r;
            memset(&r, 0, sizeof r);
            r.prog = p;
            r.inputs = ip;
            r.results = op;
            r.max_iters = budget;
            r.print = count_print;
            r.print_user = &prints;
            FILE *trace = run % 2 ? tmpfile() : NULL;
            r.trace = trace;
            exec_outcome o;
            memset(&o, 0, sizeof o);
            cpu_run(&r, &o);
            if (trace)
                fclose(trace);
            int ok = run < 2;
            if (!CHECK_INT(o.status, ok ? CFX_OK : CFX_STOP_LIMIT) ||
                !CHECK_INT(o.iterations, budget) || !CHECK_INT(prints, budget)) {
                fprintf(stderr, "  in budget case '%s', budget %lld\n", bc->name, (long long)budget);
                continue;
            }
            if (ok) {
                CHECK(out != -12345);
                continue;
            }
            CHECK_INT(out, -12345);
            CHECK_INT(o.detail[0], budget);
            if (CHECK(o.record >= 0 && o.record < p->nrecords)) {
                CHECK_INT(p->records[o.record].kind, REC_TICK);
                CHECK_INT(p->records[o.record].line, bc->stop_line);
            }
        }
        compiled_module_free(&m);
    }
}

/* ---- registered kernels ------------------------------------------------------------------------ */
static int divmod_k(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    if (nargs != 2 || nresults != 2)
        return 1;
    int32_t a = *(const int32_t *)args[0].data, b = *(const int32_t *)args[1].data;
    if (b == 0)
        return 1;
    *(int32_t *)results[0].data = a / b;
    *(int32_t *)results[1].data = a % b;
    return 0;
}

static int plus1_k(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    if (nargs != 1 || nresults != 1)
        return 1;
    *(int32_t *)results[0].data = *(const int32_t *)args[0].data + 1;
    return 0;
}

/* `q, m = k(a, b)` and a one-result kernel inside an expression, run on the CPU. */
static void kernels(void)
{
    cfx_context *ctx = cfx_context_new();
    char *err = NULL;
    CHECK(ctx != NULL);
    CHECK_INT(cfx_register_kernel(ctx, "divmod_k", "(i32, i32) -> (i32, i32)", divmod_k, NULL, NULL, &err), 0);
    CHECK_INT(cfx_register_kernel(ctx, "plus1_k", "(i32) -> (i32)", plus1_k, NULL, NULL, &err), 0);
    free(err);
    const char *src = "graph f(a: i32, b: i32) -> (q: i32, m: i32, s: i32) {\n"
                      "  q, m = divmod_k(a, b)\n"
                      "  s = plus1_k(q) * 10\n"
                      "}\n";
    compiled_module m;
    char *diags = NULL;
    if (!CHECK(compile_source(ctx, "k.cfx", src, strlen(src), &m, &diags) == 0)) {
        fprintf(stderr, "%s", diags ? diags : "");
        free(diags);
        cfx_context_free(ctx);
        return;
    }
    const cfx_prog *p = m.graphs[0].prog;
    exec_kernel ek[2];
    CHECK_INT(p->nkernels, 2);
    for (int i = 0; i < p->nkernels && i < 2; i++) {
        const char *name = p->strings + p->kernels[i];
        ek[i] = (exec_kernel){name, strcmp(name, "divmod_k") == 0 ? divmod_k : plus1_k, NULL, NULL};
    }
    int32_t a = 17, b = 5, q = 0, mm = 0, sv = 0;
    void *ip[2] = {&a, &b}, *op[3] = {&q, &mm, &sv};
    exec_run r;
    memset(&r, 0, sizeof r);
    r.prog = p;
    r.inputs = ip;
    r.results = op;
    r.kernels = ek;
    exec_outcome o;
    memset(&o, 0, sizeof o);
    cpu_run(&r, &o);
    CHECK_INT(o.status, CFX_OK);
    CHECK_INT(q, 3);   /* 17 / 5 */
    CHECK_INT(mm, 2);  /* 17 % 5 */
    CHECK_INT(sv, 40); /* (3 + 1) * 10 */
    compiled_module_free(&m);

    /* the wrong argument type for a kernel is the checker's error */
    const char *bad = "graph f(a: f32) -> (s: i32) { s = plus1_k(a) }\n";
    CHECK_INT(compile_source(ctx, "k.cfx", bad, strlen(bad), &m, &diags), -1);
    CHECK(diags && strstr(diags, "k.cfx:1:43: error: argument 1 of 'plus1_k' must be i32[], got f32[]\n"));
    free(diags);
    cfx_context_free(ctx);
}

/* ---- random programs --------------------------------------------------------------------------- *
 * Small random graphs over i32 scalars (assignments, if/elif/else with and/or/not, for loops with
 * computed bounds and literal steps of both signs, switch with sparse and negative cases,
 * break, continue, return) are printed as .cfx text and also interpreted here, directly from
 * the generator's own tree, with i32 wrapping. The compiled program run on the CPU must give
 * the same results. */
enum { GE_LIT, GE_VAR, GE_ADD, GE_SUB, GE_MUL, GE_LT, GE_LE, GE_EQ, GE_NE, GE_AND, GE_OR, GE_NOT };
enum { GS_ASSIGN, GS_IF, GS_FOR, GS_SWITCH, GS_BREAK, GS_CONTINUE, GS_RETURN };
enum { FLOW_NEXT, FLOW_BREAK, FLOW_CONTINUE, FLOW_RETURN, FLOW_BUDGET };

#define GMAX 4096
typedef struct gnode {
    int kind;
    int32_t v;     /* literal, variable index, case value */
    int a, b, c;   /* children (expressions or statement lists), -1 for none */
    int next;      /* next statement, or -1 */
    int lv;        /* GS_FOR: the loop variable's index */
} gnode;

typedef struct gen {
    gnode n[GMAX];
    int count;
    uint64_t rng;
    int32_t vars[16]; /* 0..2: a b c (results), 3 x, 4 y, 5.. loop variables i0, i1, ... */
    long ticks;
} gen;

static const char *const gvar_names[] = {"a", "b", "c", "x", "y", "i0", "i1", "i2", "i3"};

static uint32_t grand(gen *g, uint32_t n)
{
    g->rng = g->rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(g->rng >> 33) % n;
}

static int gnew(gen *g, int kind, int32_t v, int a, int b, int c)
{
    if (g->count >= GMAX)
        return -1;
    g->n[g->count] = (gnode){kind, v, a, b, c, -1, 0};
    return g->count++;
}

static int gexpr(gen *g, int depth, int nvars)
{
    if (depth > 2 || grand(g, 10) < 3)
        return grand(g, 2) ? gnew(g, GE_LIT, (int32_t)grand(g, 11) - 5, -1, -1, -1)
                           : gnew(g, GE_VAR, (int32_t)grand(g, (uint32_t)nvars), -1, -1, -1);
    return gnew(g, GE_ADD + (int)grand(g, 3), 0, gexpr(g, depth + 1, nvars), gexpr(g, depth + 1, nvars), -1);
}

static int gcond(gen *g, int depth, int nvars)
{
    uint32_t r = grand(g, 10);
    if (depth < 2 && r < 3)
        return gnew(g, r < 2 ? GE_AND + (int)r : GE_NOT, 0, gcond(g, depth + 1, nvars), r < 2 ? gcond(g, depth + 1, nvars) : -1, -1);
    return gnew(g, GE_LT + (int)grand(g, 4), 0, gexpr(g, 1, nvars), gexpr(g, 1, nvars), -1);
}

static int gblock(gen *g, int depth, int loops, int nvars);

static int gstmt(gen *g, int depth, int loops, int nvars)
{
    uint32_t r = grand(g, 20);
    if (depth > 2 || r < 8)
        return gnew(g, GS_ASSIGN, (int32_t)grand(g, 3), gexpr(g, 0, nvars), -1, -1);
    if (r < 12) {
        int els = grand(g, 2) ? gblock(g, depth + 1, loops, nvars) : -1;
        return gnew(g, GS_IF, 0, gcond(g, 0, nvars), gblock(g, depth + 1, loops, nvars), els);
    }
    if (r < 15) {
        static const int32_t steps[] = {1, 2, -1, -3};
        int bounds = gnew(g, GS_FOR, steps[grand(g, 4)], gexpr(g, 1, nvars), gexpr(g, 1, nvars), -1);
        if (bounds >= 0) {
            g->n[bounds].lv = nvars; /* i0 for the outermost loop, i1 inside it, ... */
            g->n[bounds].c = gblock(g, depth + 1, loops + 1, nvars + 1);
        }
        return bounds;
    }
    if (r < 17) {
        /* cases are a list of GS_SWITCH nodes: v = value (INT32_MIN for default), a = body */
        static const int32_t values[] = {-2, -1, 0, 1, 2, 3, 7, 100, -100000};
        int first = -1, last = -1;
        int ncases = 1 + (int)grand(g, 3);
        uint32_t used = 0;
        for (int i = 0; i < ncases; i++) {
            uint32_t k = grand(g, 9);
            if (used & (1u << k))
                continue;
            used |= 1u << k;
            int cs = gnew(g, GS_SWITCH, values[k], gblock(g, depth + 1, loops, nvars), -1, -1);
            if (cs < 0)
                break;
            if (last >= 0)
                g->n[last].next = cs;
            else
                first = cs;
            last = cs;
        }
        if (grand(g, 2) && last >= 0) {
            int d = gnew(g, GS_SWITCH, INT32_MIN, gblock(g, depth + 1, loops, nvars), -1, -1);
            if (d >= 0)
                g->n[last].next = d;
        }
        return gnew(g, GS_SWITCH, 0, gexpr(g, 1, nvars), first, -2); /* c = -2 marks the head */
    }
    if (r < 19 && loops > 0)
        return gnew(g, GS_IF, 0, gcond(g, 0, nvars), gnew(g, grand(g, 2) ? GS_BREAK : GS_CONTINUE, 0, -1, -1, -1), -1);
    return gnew(g, GS_IF, 0, gcond(g, 0, nvars), gnew(g, GS_RETURN, 0, -1, -1, -1), -1);
}

static int gblock(gen *g, int depth, int loops, int nvars)
{
    int first = -1, last = -1, n = 1 + (int)grand(g, 3);
    for (int i = 0; i < n; i++) {
        int s = gstmt(g, depth, loops, nvars);
        if (s < 0)
            break;
        if (last >= 0)
            g->n[last].next = s;
        else
            first = s;
        last = s;
    }
    return first;
}

static void gprint_expr(const gen *g, int e, strbuf *out)
{
    static const char *const ops[] = {"", "", "+", "-", "*", "<", "<=", "==", "!=", "and", "or"};
    const gnode *x = &g->n[e];
    if (x->kind == GE_LIT)
        sb_printf(out, "%d", x->v);
    else if (x->kind == GE_VAR)
        sb_puts(out, gvar_names[x->v]);
    else if (x->kind == GE_NOT) {
        sb_puts(out, "(not ");
        gprint_expr(g, x->a, out);
        sb_puts(out, ")");
    } else {
        sb_puts(out, "(");
        gprint_expr(g, x->a, out);
        sb_printf(out, " %s ", ops[x->kind]);
        gprint_expr(g, x->b, out);
        sb_puts(out, ")");
    }
}

static void gprint_block(const gen *g, int s, int depth, int ind, strbuf *out)
{
    for (; s >= 0; s = g->n[s].next) {
        const gnode *x = &g->n[s];
        sb_printf(out, "%*s", 2 * ind, "");
        switch (x->kind) {
        case GS_ASSIGN:
            sb_printf(out, "%s = ", gvar_names[x->v]);
            gprint_expr(g, x->a, out);
            sb_puts(out, "\n");
            break;
        case GS_BREAK: sb_puts(out, "break\n"); break;
        case GS_CONTINUE: sb_puts(out, "continue\n"); break;
        case GS_RETURN: sb_puts(out, "return\n"); break;
        case GS_IF:
            sb_puts(out, "if ");
            gprint_expr(g, x->a, out);
            sb_puts(out, " {\n");
            gprint_block(g, x->b, depth + 1, ind + 1, out);
            if (x->c >= 0) {
                sb_printf(out, "%*s} else {\n", 2 * ind, "");
                gprint_block(g, x->c, depth + 1, ind + 1, out);
            }
            sb_printf(out, "%*s}\n", 2 * ind, "");
            break;
        case GS_FOR:
            sb_printf(out, "for %s in range(", gvar_names[x->lv]);
            gprint_expr(g, x->a, out);
            sb_puts(out, ", ");
            gprint_expr(g, x->b, out);
            sb_printf(out, ", %d) {\n", x->v);
            gprint_block(g, x->c, depth + 1, ind + 1, out);
            sb_printf(out, "%*s}\n", 2 * ind, "");
            break;
        case GS_SWITCH:
            sb_puts(out, "switch ");
            gprint_expr(g, x->a, out);
            sb_puts(out, " {\n");
            for (int cs = x->b; cs >= 0; cs = g->n[cs].next) {
                if (g->n[cs].v == INT32_MIN)
                    sb_printf(out, "%*sdefault {\n", 2 * ind + 2, "");
                else
                    sb_printf(out, "%*scase %d {\n", 2 * ind + 2, "", g->n[cs].v);
                gprint_block(g, g->n[cs].a, depth + 1, ind + 2, out);
                sb_printf(out, "%*s}\n", 2 * ind + 2, "");
            }
            sb_printf(out, "%*s}\n", 2 * ind, "");
            break;
        }
    }
}

static int32_t wrap32(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }

static int32_t geval(const gen *g, int e)
{
    const gnode *x = &g->n[e];
    switch (x->kind) {
    case GE_LIT: return x->v;
    case GE_VAR: return g->vars[x->v];
    case GE_ADD: return wrap32((int64_t)geval(g, x->a) + geval(g, x->b));
    case GE_SUB: return wrap32((int64_t)geval(g, x->a) - geval(g, x->b));
    case GE_MUL: return wrap32((int64_t)geval(g, x->a) * geval(g, x->b));
    case GE_LT: return geval(g, x->a) < geval(g, x->b);
    case GE_LE: return geval(g, x->a) <= geval(g, x->b);
    case GE_EQ: return geval(g, x->a) == geval(g, x->b);
    case GE_NE: return geval(g, x->a) != geval(g, x->b);
    case GE_AND: return geval(g, x->a) && geval(g, x->b);
    case GE_OR: return geval(g, x->a) || geval(g, x->b);
    default: return !geval(g, x->a);
    }
}

static int gexec(gen *g, int s, int depth)
{
    for (; s >= 0; s = g->n[s].next) {
        const gnode *x = &g->n[s];
        int flow = FLOW_NEXT;
        switch (x->kind) {
        case GS_ASSIGN: g->vars[x->v] = geval(g, x->a); break;
        case GS_BREAK: return FLOW_BREAK;
        case GS_CONTINUE: return FLOW_CONTINUE;
        case GS_RETURN: return FLOW_RETURN;
        case GS_IF:
            flow = geval(g, x->a) ? gexec(g, x->b, depth + 1) : gexec(g, x->c, depth + 1);
            break;
        case GS_FOR: {
            int64_t i = geval(g, x->a), stop = geval(g, x->b);
            for (;; i += x->v) {
                if (++g->ticks > 20000 || i < INT32_MIN || i > INT32_MAX)
                    return FLOW_BUDGET; /* too long, or the i32 counter would wrap */
                if (x->v > 0 ? i >= stop : i <= stop)
                    break;
                g->vars[x->lv] = (int32_t)i;
                int f = gexec(g, x->c, depth + 1);
                if (f == FLOW_BREAK)
                    break;
                if (f == FLOW_RETURN || f == FLOW_BUDGET)
                    return f;
            }
            break;
        }
        case GS_SWITCH: {
            int32_t v = geval(g, x->a);
            int hit = -1, dflt = -1;
            for (int cs = x->b; cs >= 0; cs = g->n[cs].next) {
                if (g->n[cs].v == INT32_MIN)
                    dflt = cs;
                else if (g->n[cs].v == v)
                    hit = cs;
            }
            if (hit < 0)
                hit = dflt;
            if (hit >= 0)
                flow = gexec(g, g->n[hit].a, depth + 1);
            break;
        }
        }
        if (flow != FLOW_NEXT)
            return flow;
    }
    return FLOW_NEXT;
}

static void random_programs(int count)
{
    static gen g; /* big: keep it off the stack */
    int compared = 0;
    for (int t = 0; t < count; t++) {
        memset(&g, 0, sizeof g);
        g.rng = 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1);
        int body = gblock(&g, 0, 0, 5);
        strbuf src = {0};
        sb_puts(&src, "graph g(x: i32, y: i32) -> (a: i32, b: i32, c: i32) {\n  a = x\n  b = y\n  c = 0\n");
        gprint_block(&g, body, 0, 1, &src);
        sb_puts(&src, "}\n");
        compiled_module m;
        char *diags = NULL;
        if (!CHECK(compile_source(NULL, "random.cfx", sb_str(&src), src.len, &m, &diags) == 0)) {
            fprintf(stderr, "%s%s", diags ? diags : "", sb_str(&src));
            free(diags);
            sb_free(&src);
            continue;
        }
        for (int in = 0; in < 3; in++) {
            int32_t x = (int32_t)grand(&g, 13) - 6, y = (int32_t)grand(&g, 13) - 6;
            memset(g.vars, 0, sizeof g.vars);
            g.vars[0] = x;
            g.vars[1] = y;
            g.vars[3] = x;
            g.vars[4] = y;
            g.ticks = 0;
            if (gexec(&g, body, 0) == FLOW_BUDGET)
                continue; /* a loop too long to compare */
            int32_t ins[2] = {x, y}, outs[3] = {0, 0, 0};
            void *ip[2] = {&ins[0], &ins[1]}, *op[3] = {&outs[0], &outs[1], &outs[2]};
            exec_run r;
            memset(&r, 0, sizeof r);
            r.prog = m.graphs[0].prog;
            r.inputs = ip;
            r.results = op;
            exec_outcome o;
            memset(&o, 0, sizeof o);
            cpu_run(&r, &o);
            compared++;
            if (!CHECK_INT(o.status, CFX_OK) || !CHECK_INT(outs[0], g.vars[0]) ||
                !CHECK_INT(outs[1], g.vars[1]) || !CHECK_INT(outs[2], g.vars[2])) {
                fprintf(stderr, "  random program %d with x=%d y=%d:\n%s", t, x, y, sb_str(&src));
                break;
            }
        }
        compiled_module_free(&m);
        sb_free(&src);
    }
    CHECK(compared > count); /* most programs run to the end within the budget */
}

/* ---- golden listings -------------------------------------------------------------------------- */
static void golden(const char *dir, const char *base)
{
    char path[1024], want_path[1024];
    snprintf(path, sizeof path, "%s/%s.cfx", dir, base);
    snprintf(want_path, sizeof want_path, "%s/%s.dump", dir, base);
    long len = 0, wlen = 0;
    char *src = test_read_file(path, &len);
    char *want = test_read_file(want_path, &wlen);
    if (!CHECK(src != NULL) || !CHECK(want != NULL)) {
        fprintf(stderr, "  cannot read %s or %s\n", path, want_path);
        free(src);
        free(want);
        return;
    }
    compiled_module m;
    char *diags = NULL;
    /* the file name in messages is the base name, so the golden does not depend on paths */
    if (!CHECK(compile_source(NULL, base, src, (size_t)len, &m, &diags) == 0)) {
        fprintf(stderr, "%s", diags ? diags : "");
        free(diags);
        free(src);
        free(want);
        return;
    }
    strbuf got = {0};
    for (int i = 0; i < m.ngraphs; i++)
        prog_dump(m.graphs[i].prog, &got);
    if (!CHECK_STR(sb_str(&got), want))
        fprintf(stderr, "  golden %s differs; got:\n%s", want_path, sb_str(&got));
    sb_free(&got);
    compiled_module_free(&m);
    free(src);
    free(want);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* ---- module constants ----------------------------------------------------------------------
 * A weight of 65,536 elements bound by the compile call's table and read four times (once inside
 * an inlined call) is one const slot of the program, 256 KiB of its const image, and the code
 * generator reads it from the arena instead of writing its numbers into the kernel's text. With
 * W[i][j] = i - j (by hand): y = W[2] + W[5][7] + sum(W[0]) + g(W[1]) where g(v) = v * W[3, 0]:
 * y[j] = (2 - j) + (-2) + (0 + -1 + ... + -255 = -32640) + (1 - j) * 3 = -32637 - 4j. */
static void module_constants(void)
{
    const char *src = "const W: f32[256, 256]\n"
                      "graph f(x: f32[256]) -> (y: f32[256]) {\n"
                      "  y = x + W[2] + W[5][7] + sum(W[0]) + g(W[1])\n"
                      "}\n"
                      "graph g(v: f32[256]) -> (o: f32[256]) {\n"
                      "  o = v * W[3, 0]\n"
                      "}\n";
    float *w = malloc(sizeof(float) * 256 * 256);
    if (!w)
        abort();
    for (int i = 0; i < 256; i++)
        for (int j = 0; j < 256; j++)
            w[i * 256 + j] = (float)(i - j);
    cfx_constant table = {"W", {CFX_F32, 2, {256, 256, 0, 0}}, w};
    compiled_module m;
    char *diags = NULL;
    int rc = compile_source_with(NULL, "w.cfx", src, strlen(src), NULL, &table, 1, &m, &diags);
    free(w); /* copied by the compile */
    if (!CHECK_INT(rc, 0)) {
        fprintf(stderr, "%s", diags ? diags : "");
        free(diags);
        return;
    }
    const cfx_prog *p = m.graphs[0].prog;
    int big = 0;
    for (int32_t i = 0; i < p->nslots; i++)
        big += p->slots[i].kind == SLOT_CONST && p->slots[i].count == 65536;
    CHECK_INT(big, 1);
    CHECK(p->const_bytes >= 65536 * 4 && p->const_bytes < 65536 * 4 + 4096);
    float x[256], y[256];
    void *ip[1] = {x}, *op[1] = {y};
    for (int j = 0; j < 256; j++)
        x[j] = 0.0f;
    exec_run r;
    memset(&r, 0, sizeof r);
    r.prog = p;
    r.inputs = ip;
    r.results = op;
    r.max_iters = 1000;
    exec_outcome o;
    memset(&o, 0, sizeof o);
    cpu_run(&r, &o);
    CHECK_INT(o.status, CFX_OK);
    for (int j = 0; j < 256; j += 85)
        CHECK_REAL(y[j], -32637.0 - 4.0 * j, 0);
    /* the kernels' text: the numbers would take more than 300 KB */
    for (int target = CGEN_TARGET_C; target <= CGEN_TARGET_CUDA; target++) {
        cgen_options opt;
        memset(&opt, 0, sizeof opt);
        opt.target = target;
        strbuf text = {0};
        char err[256];
        CHECK_INT(cgen_emit(p, &opt, &text, NULL, err, sizeof err), 0);
        CHECK(text.len > 0 && text.len < 200000);
        sb_free(&text);
    }
    compiled_module_free(&m);
}

int main(void)
{
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++)
        run_one(&runs[i]);
    budget_runs();
    kernels();
    random_programs(300);
    module_constants();

    const char *dir = CFX_SOURCE_DIR "/tests/dump";
    DIR *dp = opendir(dir);
    CHECK(dp != NULL);
    char *names[256];
    int n = 0;
    struct dirent *de;
    while (dp && (de = readdir(dp)) != NULL && n < 256) {
        size_t l = strlen(de->d_name);
        if (l > 4 && strcmp(de->d_name + l - 4, ".cfx") == 0) {
            names[n] = malloc(l - 3);
            if (!names[n])
                break;
            memcpy(names[n], de->d_name, l - 4);
            names[n][l - 4] = '\0';
            n++;
        }
    }
    if (dp)
        closedir(dp);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    CHECK(n >= 3);
    for (int i = 0; i < n; i++) {
        golden(dir, names[i]);
        free(names[i]);
    }
    return test_finish("test_lower");
}
