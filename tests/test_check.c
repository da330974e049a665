/* test_check.c: the checker's diagnostics and annotations.
 *
 * 1. Every tests/diag/NAME.cfx carries its expected errors in `# error: ` comment lines;
 *    compiling it must give exactly those error lines, in that order (each followed by its
 *    source line and caret), and nothing else. The path in the messages is
 *    `tests/diag/NAME.cfx`, as `cfx` prints it when run from the source directory.
 * 2. Unit checks on the annotated tree: types of expressions (a literal takes the other
 *    operand's dtype), folded values, and the full text of one diagnostic with its caret.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/front/check.h"
#include "host/front/compile.h"
#include "host/front/parse.h"
#include "testutil.h"

/* ---- diagnostics files ------------------------------------------------------------------- */
static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void diag_file(const char *name)
{
    char path[1024], rel[512];
    snprintf(rel, sizeof rel, "tests/diag/%s", name);
    snprintf(path, sizeof path, "%s/%s", CFX_SOURCE_DIR, rel);
    long len = 0;
    char *src = test_read_file(path, &len);
    if (!CHECK(src != NULL))
        return;
    /* expected: every `# error: ` line, in order */
    strbuf want = {0};
    int nwant = 0;
    for (const char *p = src; *p;) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n > 9 && strncmp(p, "# error: ", 9) == 0) {
            sb_append(&want, p + 9, n - 9);
            sb_puts(&want, "\n");
            nwant++;
        }
        p += n + (end ? 1 : 0);
    }
    CHECK(nwant > 0);
    compiled_module m;
    char *diags = NULL;
    /* from the source tree, as `cfx check tests/diag/NAME.cfx` runs: a constant's .npy path is
     * relative to the file's folder, which rel names from there */
    char cwd[1024];
    int back = getcwd(cwd, sizeof cwd) != NULL && chdir(CFX_SOURCE_DIR) == 0;
    int rc = compile_source(NULL, rel, src, (size_t)len, &m, &diags);
    if (back && chdir(cwd) != 0)
        CHECK(0);
    if (!CHECK_INT(rc, -1)) {
        fprintf(stderr, "  %s compiled without errors\n", rel);
        compiled_module_free(&m);
    }
    /* got: the lines that start with the path; every one is followed by source and caret */
    strbuf got = {0};
    size_t rl = strlen(rel);
    for (const char *p = diags ? diags : ""; *p;) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n > rl && strncmp(p, rel, rl) == 0 && p[rl] == ':') {
            sb_append(&got, p, n);
            sb_puts(&got, "\n");
        }
        p += n + (end ? 1 : 0);
    }
    if (!CHECK_STR(sb_str(&got), sb_str(&want)))
        fprintf(stderr, "  in %s\n", rel);
    CHECK_INT(count_lines(diags ? diags : ""), 3 * nwant);
    sb_free(&want);
    sb_free(&got);
    free(diags);
    free(src);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void all_diag_files(void)
{
    DIR *dp = opendir(CFX_SOURCE_DIR "/tests/diag");
    if (!CHECK(dp != NULL))
        return;
    char *names[512];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL && n < 512) {
        size_t l = strlen(de->d_name);
        if (l > 4 && strcmp(de->d_name + l - 4, ".cfx") == 0 && (names[n] = malloc(l + 1)) != NULL)
            memcpy(names[n++], de->d_name, l + 1);
    }
    closedir(dp);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    CHECK(n >= 20);
    for (int i = 0; i < n; i++) {
        diag_file(names[i]);
        free(names[i]);
    }
}

/* ---- annotations --------------------------------------------------------------------------- */
/* Parses and checks src; returns the module (checked) and the error count in *errors. */
static ast_module *checked(const char *src, int *errors, char **text)
{
    diag d;
    diag_init(&d, "t.cfx", src, strlen(src));
    ast_module *m = parse_module(src, strlen(src), &d);
    CHECK_INT(d.errors, 0);
    *errors = m ? compile_check(m, NULL, &d) : -1;
    *text = diag_take(&d);
    diag_free(&d);
    return m;
}

/* The value node of statement i of graph 0 (an assignment). */
static ast_node *value_of(ast_module *m, int i) { return m->graphs[0].body->list[i]->a; }

static void annotations(void)
{
    char buf[64];
    int errors = 0;
    char *text = NULL;
    ast_module *m = checked("graph g(x: f32[3], n: i64) -> (r: f32) {\n"
                            "  a = x * 2\n"          /* 2 takes f32: a is f32[3] */
                            "  b = n + 1\n"          /* 1 takes i64 */
                            "  c = 1 + 2.5\n"        /* two literals: the int one becomes f32 */
                            "  d = len(x) - 1\n"     /* known: 2 */
                            "  e = sum(x) > 0.5 and d == 2\n"
                            "  f = -2147483648\n"    /* fits i32 once negated */
                            "  r = 1\n"              /* a literal takes the result's dtype */
                            "  h = x * (1 + 2)\n"    /* so does arithmetic on literals: f32[3] */
                            "  k = n - 2 * 3\n"      /* i64, and known 6 on the right */
                            "  q = (1 + 2) * 2.5\n"  /* f32: 7.5 */
                            "}\n",
                            &errors, &text);
    CHECK_INT(errors, 0);
    if (text)
        fprintf(stderr, "%s", text);
    free(text);
    if (!m)
        return;
    CHECK_STR(check_type_str(&value_of(m, 0)->ty, buf, sizeof buf), "f32[3]");
    CHECK_STR(check_type_str(&value_of(m, 0)->b->ty, buf, sizeof buf), "f32[]");
    CHECK_STR(check_type_str(&value_of(m, 1)->ty, buf, sizeof buf), "i64[]");
    CHECK_STR(check_type_str(&value_of(m, 1)->b->ty, buf, sizeof buf), "i64[]");
    const check_note *k = value_of(m, 2)->note;
    CHECK_STR(check_type_str(&value_of(m, 2)->ty, buf, sizeof buf), "f32[]");
    CHECK(k->known);
    CHECK_REAL(k->rval, 3.5, 0);
    k = value_of(m, 3)->note;
    CHECK(k->known);
    CHECK_INT(k->ival, 2);
    CHECK_STR(check_type_str(&value_of(m, 4)->ty, buf, sizeof buf), "bool[]");
    CHECK(!((const check_note *)value_of(m, 4)->note)->known); /* sum(x) is not known */
    k = value_of(m, 5)->note;
    CHECK(k->known);
    CHECK_INT(k->ival, INT32_MIN);
    CHECK_STR(check_type_str(&value_of(m, 6)->ty, buf, sizeof buf), "f32[]");
    CHECK_STR(check_type_str(&value_of(m, 7)->ty, buf, sizeof buf), "f32[3]");
    CHECK_STR(check_type_str(&value_of(m, 7)->b->ty, buf, sizeof buf), "f32[]");
    CHECK_STR(check_type_str(&value_of(m, 8)->b->ty, buf, sizeof buf), "i64[]");
    k = value_of(m, 8)->b->note;
    CHECK(k->known);
    CHECK_INT(k->ival, 6);
    k = value_of(m, 9)->note;
    CHECK_STR(check_type_str(&value_of(m, 9)->ty, buf, sizeof buf), "f32[]");
    CHECK(k->known);
    CHECK_REAL(k->rval, 7.5, 0);
    ast_module_free(m);

    /* promotion: the dtype each op computes in (cdt), its result, and known values converted */
    m = checked("graph g(n: i32, w: i64, x: f32, d: f64, b: bool) -> (r: f32) {\n"
                "  a = n + w\n"        /* i64 */
                "  c = w * x\n"        /* f32: PyTorch's rule, where numpy gives f64 */
                "  e = x - d\n"        /* f64 */
                "  f = b + n\n"        /* i32 */
                "  h = n < 1.5\n"      /* bool, computed in f32 */
                "  k = 7 / 2 + true\n" /* f32, known: 4.5 */
                "  q = n / 2\n"        /* f32: / of integers */
                "  s = b == 1\n"       /* bool, computed in i32 */
                "  r = x\n"
                "}\n",
                &errors, &text);
    CHECK_INT(errors, 0);
    if (text)
        fprintf(stderr, "%s", text);
    free(text);
    if (m) {
        static const char *const want[] = {"i64[]", "f32[]", "f64[]", "i32[]", "bool[]", "f32[]", "f32[]", "bool[]"};
        static const int cdt[] = {CFX_I64, CFX_F32, CFX_F64, CFX_I32, CFX_F32, CFX_F32, CFX_F32, CFX_I32};
        for (int i = 0; i < 8; i++) {
            CHECK_STR(check_type_str(&value_of(m, i)->ty, buf, sizeof buf), want[i]);
            CHECK_INT(((const check_note *)value_of(m, i)->note)->cdt, cdt[i]);
        }
        k = value_of(m, 5)->note;
        CHECK(k->known);
        CHECK_REAL(k->rval, 4.5, 0);
        ast_module_free(m);
    }

    /* the spec's folding example: x = 0; y = 1; if x < y + 1 folds to true */
    m = checked("graph g(a: i32) -> (r: i32) {\n"
                "  x = 0; y = 1\n"
                "  if x < y + 1 { r = a } else { r = 2.5 }\n"
                "}\n",
                &errors, &text);
    CHECK_INT(errors, 0);
    free(text);
    if (m) {
        ast_node *ifs = m->graphs[0].body->list[2];
        const check_note *c = ifs->list[0]->a->note;
        CHECK(c && c->known && c->ival == 1);
        CHECK(ifs->list[1]->note == NULL); /* the dead else was not checked */
        ast_module_free(m);
    }

    /* a value known before a loop but assigned in it is not known inside: no folding */
    m = checked("graph g(a: i32) -> (r: i32) {\n"
                "  i = 0; r = 0\n"
                "  while i < 3 { i = i + 1; r = r + a }\n"
                "}\n",
                &errors, &text);
    CHECK_INT(errors, 0);
    free(text);
    if (m) {
        const check_note *c = m->graphs[0].body->list[2]->a->note;
        CHECK(c && !c->known);
        ast_module_free(m);
    }

    /* a value the paths agree on stays known after a join; one they disagree on does not */
    m = checked("graph g(c: bool) -> (r: i32) {\n"
                "  if c { k = 1; j = 1 } else { k = 1; j = 2 }\n"
                "  r = k + 0\n"
                "  r = j + 0\n"
                "}\n",
                &errors, &text);
    CHECK_INT(errors, 0);
    free(text);
    if (m) {
        CHECK(((const check_note *)value_of(m, 1)->note)->known);
        CHECK(!((const check_note *)value_of(m, 2)->note)->known);
        ast_module_free(m);
    }
}

/* The whole text of a diagnostic: message, source line, caret under the column. */
static void full_text(void)
{
    const char *src = "graph g(x: f32[3]) -> (r: i32) {\n  r = 0\n  if x { r = 1 }\n}\n";
    compiled_module m;
    char *diags = NULL;
    CHECK_INT(compile_source(NULL, "t.cfx", src, strlen(src), &m, &diags), -1);
    CHECK_STR(diags ? diags : "",
              "t.cfx:3:6: error: condition must be a one-element bool, got f32[3]\n"
              "  if x { r = 1 }\n"
              "     ^\n");
    free(diags);
}

/* The checker finds duplicate cases itself (a tree need not come from the parser, which
 * reports them first): cases made equal after parsing, among many, are each reported once. */
static void switch_duplicates(void)
{
    strbuf src = {0};
    sb_puts(&src, "graph g(x: i32) -> (y: i32) {\n  y = 0\n  switch x {\n");
    for (int i = 0; i < 3000; i++)
        sb_printf(&src, "    case %d { y = %d }\n", i * 65536, i);
    sb_puts(&src, "  }\n}\n");
    diag d;
    diag_init(&d, "t.cfx", sb_str(&src), src.len);
    ast_module *m = parse_module(sb_str(&src), src.len, &d);
    CHECK_INT(d.errors, 0);
    if (m) {
        ast_node *sw = m->graphs[0].body->list[1];
        sw->list[2999]->ival = 0;        /* the first case's value, at the end */
        sw->list[1500]->ival = 1499 * 65536; /* its neighbour's */
        sw->list[7]->ival = -5;          /* a new value: no error */
        CHECK_INT(compile_check(m, NULL, &d), 2);
        char *text = diag_take(&d);
        CHECK_STR(text ? text : "",
                  "t.cfx:1504:5: error: duplicate case 98238464\n    case 98304000 { y = 1500 }\n    ^\n"
                  "t.cfx:3003:5: error: duplicate case 0\n    case 196542464 { y = 2999 }\n    ^\n");
        free(text);
        ast_module_free(m);
    }
    diag_free(&d);
    sb_free(&src);
}

/* The first error line that compiling src gives, or "" (the caller frees). */
static char *first_error(const char *src, size_t len, int *nerrors)
{
    compiled_module m;
    char *diags = NULL;
    *nerrors = 0;
    if (compile_source(NULL, "t.cfx", src, len, &m, &diags) == 0) {
        compiled_module_free(&m);
        return calloc(1, 1);
    }
    for (const char *q = diags; q && (q = strstr(q, ": error: ")) != NULL; q++)
        (*nerrors)++;
    char *nl = diags ? strchr(diags, '\n') : NULL;
    if (nl)
        *nl = '\0';
    return diags ? diags : calloc(1, 1);
}

/* The size caps name the statement that crossed them. Expected lines by hand: a graph's body
 * is one node, `y = x + 1` five (assignment, y, +, x, 1). */
static void size_caps(void)
{
    int n = 0;
    /* one graph: statement k brings its graph to 1 + 5k nodes, past 2^20 at k = 209716, on
     * line k + 1 */
    strbuf src = {0};
    sb_puts(&src, "graph g(x: i32) -> (y: i32) {\n");
    for (int k = 0; k < 300000; k++)
        sb_puts(&src, "  y = x + 1\n");
    sb_puts(&src, "}\n");
    char *got = first_error(sb_str(&src), src.len, &n);
    CHECK_STR(got, "t.cfx:209717:3: error: graph 'g' is too large: more than 1048576 nodes");
    CHECK_INT(n, 1);
    free(got);
    /* the parser hands back no graph then: the one cut short holds no node of its own */
    diag d;
    diag_init(&d, "t.cfx", sb_str(&src), src.len);
    ast_module *m = parse_module(sb_str(&src), src.len, &d);
    CHECK_INT(d.errors, 1);
    CHECK(m != NULL && m->ngraphs == 0);
    ast_module_free(m);
    diag_free(&d);
    sb_free(&src);

    /* three graphs of 150,000 statements (750,001 nodes each): the third passes the file's
     * 2^21 at its statement k = 119430 (1,500,002 + 1 + 5k > 2,097,152), on line
     * 2 * 150,002 + 1 + k */
    for (int g = 0; g < 3; g++) {
        sb_printf(&src, "graph g%d(x: i32) -> (y: i32) {\n", g);
        for (int k = 0; k < 150000; k++)
            sb_puts(&src, "  y = x + 1\n");
        sb_puts(&src, "}\n");
    }
    got = first_error(sb_str(&src), src.len, &n);
    CHECK_STR(got, "t.cfx:419435:3: error: the file is too large: more than 2097152 nodes");
    CHECK_INT(n, 1);
    free(got);
    sb_free(&src);

    /* inlined: f is 5,001 nodes; g's statement k `y = x + f(x)` reaches, at its call,
     * 1 + 5007 (k - 1) + 5005 nodes, past 2^20 at k = 210, on line 211 */
    sb_puts(&src, "graph g(x: i32) -> (y: i32) {\n");
    for (int k = 0; k < 300; k++)
        sb_puts(&src, "  y = x + f(x)\n");
    sb_puts(&src, "}\ngraph f(x: i32) -> (z: i32) {\n");
    for (int k = 0; k < 1000; k++)
        sb_puts(&src, "  z = x + 1\n");
    sb_puts(&src, "}\n");
    got = first_error(sb_str(&src), src.len, &n);
    CHECK_STR(got, "t.cfx:211:3: error: graph 'g' is too large: more than 1048576 nodes once its calls are inlined");
    CHECK_INT(n, 1);
    free(got);
    sb_free(&src);
}

int main(void)
{
    all_diag_files();
    annotations();
    full_text();
    switch_duplicates();
    size_caps();
    return test_finish("test_check");
}
