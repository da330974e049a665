/* test_generated.c: a few thousand random programs (tests/gen_programs.h) on the cpu executor,
 * each checked against the generator's own evaluator of the same tree: the status, the line
 * of the statement that stopped the run, the loop iterations, and every result bit for bit
 * (the generated f32 arithmetic is + - * and sums, which C and cfx both round the same way,
 * and ** of small whole exponents, which both take from the C library's powf).
 * The forms of the generator's second stream (lists, slices, broadcasting, **, i64 ranges) must
 * each come up in runs that end ok, and each stop they aim at must come up: a full list, an
 * empty one, an item outside the length, stack of a list not full, a slice start outside its
 * room, an index of the second dimension out of range.
 * Also: a second run gives identical results, and a stopped run leaves the caller's result
 * buffers untouched. Some programs run under an iteration budget, so `limit` comes up too.
 *
 * `test_generated SEED` runs one program and prints its source, for debugging. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "gen_programs.h"
#include "testutil.h"

#define PROGRAMS 3000
#define SENTINEL 0xA5

typedef struct bufs {
    gen_inputs in;
    gen_results res;
} bufs;

/* The printed lines of a run, each ending in '\n'. */
typedef struct printed {
    char text[65536];
    size_t len;
    int truncated;
} printed;

static void on_print(void *user, const char *line)
{
    printed *p = (printed *)user;
    size_t n = strlen(line);
    if (p->len + n + 2 > sizeof p->text) {
        p->truncated = 1;
        return;
    }
    memcpy(p->text + p->len, line, n);
    p->text[p->len + n] = '\n';
    p->len += n + 1;
    p->text[p->len] = '\0';
}

static int bind_all(cfx_exec *e, bufs *b)
{
    int rc = 0;
    rc |= cfx_bind(e, "a", &b->in.a, sizeof b->in.a);
    rc |= cfx_bind(e, "b", &b->in.b, sizeof b->in.b);
    rc |= cfx_bind(e, "n", &b->in.n, sizeof b->in.n);
    rc |= cfx_bind(e, "x", &b->in.x, sizeof b->in.x);
    rc |= cfx_bind(e, "v", b->in.v, sizeof b->in.v);
    rc |= cfx_bind(e, "w", b->in.w, sizeof b->in.w);
    rc |= cfx_bind(e, "r0", &b->res.r0, sizeof b->res.r0);
    rc |= cfx_bind(e, "r1", &b->res.r1, sizeof b->res.r1);
    rc |= cfx_bind(e, "r2", b->res.r2, sizeof b->res.r2);
    rc |= cfx_bind(e, "r3", b->res.r3, sizeof b->res.r3);
    rc |= cfx_bind(e, "r4", &b->res.r4, sizeof b->res.r4);
    rc |= cfx_bind(e, "r5", b->res.r5, sizeof b->res.r5);
    return rc;
}

/* Bitwise equal, except that any two NaNs are equal. */
static int same_f32(float a, float b)
{
    if (a != a && b != b) return 1;
    return memcmp(&a, &b, sizeof a) == 0;
}

static int same_results(const gen_results *x, const gen_results *y)
{
    if (x->r0 != y->r0 || !same_f32(x->r1, y->r1)) return 0;
    for (int i = 0; i < GEN_LEN; i++)
        if (x->r2[i] != y->r2[i] || !same_f32(x->r3[i], y->r3[i])) return 0;
    if (x->r4 != y->r4) return 0;
    for (int i = 0; i < GEN_ROWS * GEN_LEN; i++)
        if (!same_f32(x->r5[i], y->r5[i])) return 0;
    return 1;
}

static int all_sentinel(const gen_results *r)
{
    const unsigned char *p = (const unsigned char *)r;
    for (size_t i = 0; i < sizeof *r; i++)
        if (p[i] != SENTINEL) return 0;
    return 1;
}

/* What the second stream's forms must reach: a marker of each form in the source of a run that
 * ended ok, and a piece of each stop message it aims at. */
static const char *const ok_forms[] = {
    ".append(", ".pop()", "stack(", "enumerate(L", "enumerate([", "in L", "in [", "len(L", " ** ", "reshape(",
    ":(", "[:, ", "range(cast(", "9223372036854775", "k0 = [", "] += ", "where((", " // ", " % ", " / ",
    "truncdiv(", "fmod(", " h(", "o0 is not None", "o0 is None", "  o0 = ", "(r5, axis=", "tp = (", "= tp[-1]",
    " for q in ", ".shape == ", ".shape, dtype=", "assert (", "plus_a(", "times(",
};
static const char *const stop_kinds[] = {
    "is full", "pop from the empty list", "items, index was", "stack needs", "the slice of", "dimension 1 of",
    "has no value: no iteration of the loop", "'o0' is None",
};
#define NFORMS (int)(sizeof ok_forms / sizeof ok_forms[0])
#define NSTOPS (int)(sizeof stop_kinds / sizeof stop_kinds[0])
static int form_ok[NFORMS], stop_seen[NSTOPS];
/* runs that ended ok with a promoting expression (GE_MIXED) to f32, to i64, and of a bool or a
 * mixed comparison to i32 */
static int mixed_ok[3];
/* runs that ended ok with a loop variable read after its loop (a GE_VAR or GE_TVAR of form 1) */
static int after_loop_ok;

/* One program; returns the number of failed checks it added. */
static int check_program(uint64_t seed, int verbose, int *stops, int *by_status)
{
    int failures_before = test_failures;
    gen_prog *g = (gen_prog *)malloc(sizeof *g);
    char *src = NULL, *diags = NULL;
    cfx_module *m = NULL;
    cfx_exec *e = NULL;
    char *err = NULL;
    gen_outcome want = {0};
    bufs b1, b2;
    static printed p1, p2;
    int64_t budget = seed % 5 == 4 ? (int64_t)(1 + seed % 7) : 0;

    if (!CHECK(g != NULL)) goto done;
    gen_make(g, seed);
    CHECK(!g->overflow); /* a program cut short by the node limit would be another program */
    src = gen_text(g);
    if (!CHECK(src != NULL)) goto done;
    if (verbose) printf("%s", src);
    gen_inputs_make(seed, &b1.in);
    if (!CHECK(gen_eval(g, &b1.in, budget, &want) == 0)) goto done;

    m = cfx_compile_string(NULL, "gen.cfx", src, strlen(src), &diags);
    if (!m) {
        fprintf(stderr, "seed %llu: does not compile:\n%s\n%s", (unsigned long long)seed,
                diags ? diags : "", src);
        CHECK(m != NULL);
        goto done;
    }
    e = cfx_exec_new(m, cfx_graph_find(m, NULL), CFX_BACKEND_CPU, &err);
    if (!CHECK(e != NULL)) goto done;
    cfx_set_max_iters(e, budget);

    memset(&b1.res, SENTINEL, sizeof b1.res);
    memset(&p1, 0, sizeof p1);
    cfx_set_print(e, on_print, &p1);
    if (!CHECK(bind_all(e, &b1) == 0)) goto done;
    cfx_status s1 = cfx_run(e);
    int line = 0, col = 0;
    cfx_exec_position(e, &line, &col);
    int64_t iters = cfx_exec_iterations(e);

    b2.in = b1.in;
    memset(&b2.res, SENTINEL, sizeof b2.res);
    memset(&p2, 0, sizeof p2);
    cfx_set_print(e, on_print, &p2);
    if (!CHECK(bind_all(e, &b2) == 0)) goto done;
    cfx_status s2 = cfx_run(e);
    int line2 = 0, col2 = 0;
    cfx_exec_position(e, &line2, &col2);

    CHECK_INT(s1, want.status);
    if (s1 >= CFX_OK && s1 <= CFX_ERROR) by_status[s1]++;
    CHECK(s1 >= CFX_OK && s1 <= CFX_STOP_LIMIT);
    CHECK_INT(iters, want.iterations);
    /* determinism: the second run ends the same way */
    CHECK_INT(s2, s1);
    CHECK_INT(line2, line);
    CHECK_INT(col2, col);
    /* prints, in program order, up to the stop if there is one */
    CHECK(!p1.truncated);
    if (!p1.truncated) CHECK_STR(p1.text, want.prints ? want.prints : "");
    CHECK_STR(p2.text, p1.text);
    const char *body = strstr(src, "s0 = n % 3\n"); /* past the prologue of a second-stream program */
    for (int k = 0; k < NFORMS && s1 == CFX_OK && body; k++)
        form_ok[k] += strstr(body, ok_forms[k]) != NULL;
    for (int k = 0; k < NSTOPS && s1 != CFX_OK; k++)
        stop_seen[k] += strstr(cfx_exec_message(e), stop_kinds[k]) != NULL;
    int mixed[3] = {0, 0, 0};
    for (int k = 0; k < g->nnodes && s1 == CFX_OK; k++)
        if (g->nodes[k].kind == GE_MIXED)
            mixed[g->nodes[k].type == GT_F ? 0 : g->nodes[k].type == GT_L ? 1 : 2] = 1;
    for (int k = 0; k < 3; k++)
        mixed_ok[k] += mixed[k];
    int after = 0;
    for (int k = 0; k < g->nnodes && s1 == CFX_OK; k++)
        after |= (g->nodes[k].kind == GE_VAR || g->nodes[k].kind == GE_TVAR) && g->nodes[k].form == 1;
    after_loop_ok += after;
    if (s1 == CFX_OK) {
        CHECK(same_results(&b1.res, &want.res));
        CHECK(same_results(&b2.res, &b1.res));
    } else {
        (*stops)++;
        CHECK_INT(line, want.line);
        CHECK(all_sentinel(&b1.res)); /* a stopped run writes no results */
        CHECK(all_sentinel(&b2.res));
        CHECK(cfx_exec_message(e)[0] != '\0');
    }
    if (test_failures != failures_before && !verbose) {
        fprintf(stderr, "seed %llu failed (status %s, want %s; line %d, want %d; iterations %lld, want %lld); "
                        "run `test_generated %llu` to see the program\n",
                (unsigned long long)seed, cfx_status_name(s1), cfx_status_name(want.status), line,
                want.line, (long long)iters, (long long)want.iterations, (unsigned long long)seed);
    }
done:
    gen_outcome_free(&want);
    cfx_exec_free(e);
    cfx_module_free(m);
    cfx_free(diags);
    cfx_free(err);
    free(src);
    free(g);
    return test_failures - failures_before;
}

int main(int argc, char **argv)
{
    int stops = 0, failed = 0, by_status[CFX_ERROR + 1] = {0};
    if (argc > 1) {
        check_program(strtoull(argv[1], NULL, 10), 1, &stops, by_status);
        return test_finish("test_generated");
    }
    for (uint64_t seed = 0; seed < PROGRAMS; seed++)
        failed += check_program(seed, 0, &stops, by_status) != 0;
    /* the generator must reach both ends: runs that finish and runs that stop */
    CHECK(stops > PROGRAMS / 20);
    CHECK(stops < PROGRAMS - PROGRAMS / 5);
    /* every kind of stop the generator aims at comes up */
    CHECK(by_status[CFX_STOP_ASSERT] > 0);
    CHECK(by_status[CFX_STOP_INDEX] > 0);
    CHECK(by_status[CFX_STOP_DIVIDE] > 0);
    CHECK(by_status[CFX_STOP_VALUE] > 0);
    CHECK(by_status[CFX_STOP_LIMIT] > 0);
    for (int k = 0; k < NFORMS; k++)
        if (!CHECK(form_ok[k] >= PROGRAMS / 100)) fprintf(stderr, "  '%s' in %d runs that ended ok\n", ok_forms[k], form_ok[k]);
    for (int k = 0; k < NSTOPS; k++)
        if (!CHECK(stop_seen[k] > 0)) fprintf(stderr, "  no run stopped with '%s'\n", stop_kinds[k]);
    for (int k = 0; k < 3; k++)
        CHECK(mixed_ok[k] >= PROGRAMS / 100);
    CHECK(after_loop_ok >= PROGRAMS / 100);
    printf("%d programs, %d stopped, %d failed; by status:", PROGRAMS, stops, failed);
    for (int s = CFX_OK; s <= CFX_STOP_LIMIT; s++) printf(" %s %d", cfx_status_name((cfx_status)s), by_status[s]);
    printf("\nruns that ended ok with mixed dtypes promoting to f32 %d, to i64 %d, to i32 (a bool) %d; "
           "with a loop variable read after its loop %d",
           mixed_ok[0], mixed_ok[1], mixed_ok[2], after_loop_ok);
    printf("\nruns that ended ok with:");
    for (int k = 0; k < NFORMS; k++) printf(" '%s' %d", ok_forms[k], form_ok[k]);
    printf("\nstops:");
    for (int k = 0; k < NSTOPS; k++) printf(" '%s' %d", stop_kinds[k], stop_seen[k]);
    printf("\n");
    return test_finish("test_generated");
}
