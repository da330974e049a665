/* test_lex.c: the token streams of every number form, operator and keyword, newlines inside
 * brackets, strings and escapes, and the lexer's error messages, compared exactly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/front/diag.h"
#include "host/front/lex.h"
#include "testutil.h"

/* The tokens of src, one word each: an operator or keyword by its spelling, `NL`, `EOF`,
 * `name:x`, `int:12`, `real`, `str:...` (the value). Lexer errors go to *errors. */
static char *tokens(const char *src, char **errors)
{
    static char out[8192];
    diag d;
    diag_init(&d, "t.cfx", src, strlen(src));
    lexer lx;
    lex_init(&lx, src, strlen(src), &d);
    ast_arena *arena = ast_arena_new();
    size_t k = 0;
    out[0] = '\0';
    for (int guard = 0; guard < 1000; guard++) {
        lex_token t = lex_next(&lx);
        char word[256];
        switch (t.kind) {
        case TK_EOF: snprintf(word, sizeof word, "EOF"); break;
        case TK_NEWLINE: snprintf(word, sizeof word, "NL"); break;
        case TK_NAME: snprintf(word, sizeof word, "name:%.*s", (int)t.len, src + t.start); break;
        case TK_INT: snprintf(word, sizeof word, "int:%lld", (long long)t.ival); break;
        case TK_REAL: snprintf(word, sizeof word, "real"); break;
        case TK_STRING: snprintf(word, sizeof word, "str:%s", lex_string_value(&lx, &t, arena)); break;
        default: snprintf(word, sizeof word, "%s", lex_kind_name(t.kind)); break;
        }
        k += (size_t)snprintf(out + k, sizeof out - k, "%s%s", k ? " " : "", word);
        if (t.kind == TK_EOF)
            break;
    }
    ast_arena_free(arena);
    char *msgs = diag_take(&d);
    diag_free(&d);
    if (errors)
        *errors = msgs;
    else
        free(msgs);
    return out;
}

/* The messages for src; "" when there are none. The caller frees. */
static char *errors_of(const char *src)
{
    char *e = NULL;
    tokens(src, &e);
    if (!e) {
        e = malloc(1);
        e[0] = '\0';
    }
    return e;
}

static void check_errors(const char *src, const char *want, int line)
{
    char *got = errors_of(src);
    if (!test_check_str(got, want, __FILE__, line, src))
        fprintf(stderr, "  (source above)\n");
    free(got);
}

/* The values of the real literals in src, in order. */
static int reals(const char *src, double *out, int max)
{
    lexer lx;
    lex_init(&lx, src, strlen(src), NULL);
    int n = 0;
    for (;;) {
        lex_token t = lex_next(&lx);
        if (t.kind == TK_EOF)
            break;
        if (t.kind == TK_REAL && n < max)
            out[n++] = t.rval;
    }
    return n;
}

static void test_numbers(void)
{
    CHECK_STR(tokens("12 0x1f 0X1F 0 007 9223372036854775807", NULL),
              "int:12 int:31 int:31 int:0 int:7 int:9223372036854775807 EOF");
    CHECK_STR(tokens("1.5 1e-6 .5 2. 3E+2 1.e3", NULL), "real real real real real real EOF");
    double r[8];
    CHECK_INT(reals("1.5 1e-6 .5 2. 3E+2 1.e3 0.1", r, 8), 7);
    CHECK(r[0] == 1.5);
    CHECK(r[1] == 1e-6);
    CHECK(r[2] == 0.5);
    CHECK(r[3] == 2.0);
    CHECK(r[4] == 300.0);
    CHECK(r[5] == 1000.0);
    CHECK(r[6] == 0.1);
    /* a number next to an operator is still two tokens */
    CHECK_STR(tokens("1-2 x-1 a[0]", NULL), "int:1 - int:2 name:x - int:1 name:a [ int:0 ] EOF");
    /* a malformed number is one token (the parser sees a 0 and goes on), reported once */
    CHECK_STR(tokens("1e5x", NULL), "int:0 EOF");
}

static void test_operators(void)
{
    CHECK_STR(tokens("+ - * / % @ < <= > >= == != = , : -> ( ) [ ] { } ;", NULL),
              "+ - * / % @ < <= > >= == != = , : -> ( ) [ ] { } ; EOF");
    /* longest match, with and without spaces */
    CHECK_STR(tokens("a<=b a<b a==b a=b a!=b a->b a- >b", NULL),
              "name:a <= name:b name:a < name:b name:a == name:b name:a = name:b name:a != name:b "
              "name:a -> name:b name:a - > name:b EOF");
    /* Python's floor division and the three-character assignments */
    CHECK_STR(tokens("a//b a/ /b a//=b a**=b a**b a*=b a/=b a%=b", NULL),
              "name:a // name:b name:a / / name:b name:a //= name:b name:a **= name:b name:a ** name:b "
              "name:a *= name:b name:a /= name:b name:a %= name:b EOF");
    /* the bitwise operators, Python's: the shifts before the comparisons they start like */
    CHECK_STR(tokens("a&b a|b a^b ~a a<<b a>>b a<<=b a>>=b a&=b a|=b a^=b a< <b a<=b a>=b", NULL),
              "name:a & name:b name:a | name:b name:a ^ name:b ~ name:a name:a << name:b name:a >> name:b "
              "name:a <<= name:b name:a >>= name:b name:a &= name:b name:a |= name:b name:a ^= name:b "
              "name:a < < name:b name:a <= name:b name:a >= name:b EOF");
}

static void test_keywords_and_names(void)
{
    CHECK_STR(tokens("graph if elif else while for in range switch case default break continue return true "
                     "false and or not",
                     NULL),
              "graph if elif else while for in range switch case default break continue return true false and "
              "or not EOF");
    CHECK_STR(tokens("is None none", NULL), "is None name:none EOF");
    /* Python's spellings of the bools, and pass */
    CHECK_STR(tokens("True False pass true TRUE", NULL), "true false pass true name:TRUE EOF");
    CHECK_STR(tokens("graphs _x x_1 If f32 len", NULL),
              "name:graphs name:_x name:x_1 name:If name:f32 name:len EOF");
}

static void test_newlines_and_comments(void)
{
    CHECK_STR(tokens("a = 1 # comment = 2\nb", NULL), "name:a = int:1 NL name:b EOF");
    /* a newline inside ( ) or [ ] is not a token */
    CHECK_STR(tokens("f(a,\n  b)\nx[\n1]\n", NULL), "name:f ( name:a , name:b ) NL name:x [ int:1 ] NL EOF");
    /* a brace ends an unclosed '(' so that the rest of the file still has its newlines */
    CHECK_STR(tokens("f(a\n}\nb", NULL), "name:f ( name:a } NL name:b EOF");
    CHECK_STR(tokens("a\r\nb\t;c", NULL), "name:a NL name:b ; name:c EOF");
    /* a lone CR is a line break as LF and CR LF are (one token each), and ends a comment */
    CHECK_STR(tokens("a\rb\r\rc # x\rd\r\ne", NULL), "name:a NL name:b NL NL name:c NL name:d NL name:e EOF");
    CHECK_STR(tokens("f(a,\r b)\r", NULL), "name:f ( name:a , name:b ) NL EOF");
    CHECK_STR(tokens("", NULL), "EOF");
    CHECK_STR(tokens("# only a comment", NULL), "EOF");
}

static void test_strings(void)
{
    CHECK_STR(tokens("\"hi there\" \"a\\\"b\" \"back\\\\slash\" \"\"", NULL),
              "str:hi there str:a\"b str:back\\slash str: EOF");
    CHECK_STR(tokens("\"tab\\tnl\\n\"", NULL), "str:tab\tnl\n EOF");
    CHECK_STR(tokens("\"# not a comment\"", NULL), "str:# not a comment EOF");
    CHECK_STR(tokens("\"caf\xc3\xa9\"", NULL), "str:caf\xc3\xa9 EOF");
}

static void test_positions(void)
{
    const char *src = "ab  12\n\tx = \"s\"\n";
    lexer lx;
    lex_init(&lx, src, strlen(src), NULL);
    int want[][3] = {{TK_NAME, 1, 1}, {TK_INT, 1, 5}, {TK_NEWLINE, 1, 7}, {TK_NAME, 2, 2},
                     {TK_ASSIGN, 2, 4}, {TK_STRING, 2, 6}, {TK_NEWLINE, 2, 9}, {TK_EOF, 3, 1}};
    for (int i = 0; i < 8; i++) {
        lex_token t = lex_next(&lx);
        CHECK_INT(t.kind, want[i][0]);
        CHECK_INT(t.line, want[i][1]);
        CHECK_INT(t.col, want[i][2]);
    }
}

/* Lines end at LF, CR LF and a lone CR alike, in positions and in the echoed line. */
static void test_line_breaks(void)
{
    const char *src = "a\rbb\r\nc\n\rd";
    lexer lx;
    lex_init(&lx, src, strlen(src), NULL);
    int want[][3] = {{TK_NAME, 1, 1}, {TK_NEWLINE, 1, 2}, {TK_NAME, 2, 1}, {TK_NEWLINE, 2, 4},
                     {TK_NAME, 3, 1}, {TK_NEWLINE, 3, 2}, {TK_NEWLINE, 4, 1}, {TK_NAME, 5, 1}};
    for (int i = 0; i < 8; i++) {
        lex_token t = lex_next(&lx);
        CHECK_INT(t.kind, want[i][0]);
        CHECK_INT(t.line, want[i][1]);
        CHECK_INT(t.col, want[i][2]);
    }
    check_errors("a\r  $b\rc", "t.cfx:2:3: error: unexpected character '$'\n  $b\n  ^\n", __LINE__);
    check_errors("a\r\n  $b\r\nc", "t.cfx:2:3: error: unexpected character '$'\n  $b\n  ^\n", __LINE__);
    check_errors("a\r\r\n\n$", "t.cfx:4:1: error: unexpected character '$'\n$\n^\n", __LINE__);
    /* a string ends on its line, whichever break ends the line */
    check_errors("\"ab\rc\"", "t.cfx:1:1: error: unterminated string\n\"ab\n^\n"
                 "t.cfx:2:2: error: unterminated string\nc\"\n ^\n", __LINE__);
}

/* A long line is echoed as a window around the caret, with "..." where it was cut; a long
 * message is cut with "...". */
static void test_long_lines(void)
{
    size_t n = (size_t)10 << 20;
    char *src = malloc(n + 1);
    if (!CHECK(src != NULL))
        return;
    memset(src, 'a', n);
    src[n / 2] = '$';
    src[n] = '\0';
    char *got = errors_of(src);
    /* the window: DIAG_ECHO_WINDOW bytes with the caret DIAG_ECHO_WINDOW / 2 in, after "..." */
    char want[512];
    int k = snprintf(want, sizeof want, "t.cfx:1:%zu: error: unexpected character '$'\n...", n / 2 + 1);
    for (int i = 0; i < DIAG_ECHO_WINDOW; i++)
        want[k++] = i == DIAG_ECHO_WINDOW / 2 ? '$' : 'a';
    k += snprintf(want + k, sizeof want - (size_t)k, "...\n%*s^\n", 3 + DIAG_ECHO_WINDOW / 2, "");
    CHECK_STR(got, want);
    free(got);
    /* near either end, the window stays inside the line and is marked on one side only */
    src[n / 2] = 'a';
    src[3] = '$';
    got = errors_of(src);
    if (!CHECK(strlen(got) < 500))
        fprintf(stderr, "%.600s\n", got);
    CHECK(strncmp(got, "t.cfx:1:4: error: unexpected character '$'\naaa$a", 48) == 0);
    CHECK(strstr(got, "a...\n   ^\n") != NULL);
    free(got);
    src[3] = 'a';
    src[n - 1] = '$';
    got = errors_of(src);
    if (!CHECK(strlen(got) < 500))
        fprintf(stderr, "%.900s\n", got);
    CHECK(strstr(got, "\n...aaa") != NULL && strstr(got, "a$\n") != NULL);
    free(got);
    free(src);

    /* a message past DIAG_MAX_MESSAGE characters ends in "..." */
    diag d;
    diag_init(&d, "t.cfx", "x", 1);
    char name[1000];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    diag_error(&d, 1, 1, "'%s' is not defined", name);
    diag_error(&d, 1, 1, "%.*s", DIAG_MAX_MESSAGE, name);
    got = diag_take(&d);
    diag_free(&d);
    char line[2 * DIAG_MAX_MESSAGE + 64];
    k = snprintf(line, sizeof line, "t.cfx:1:1: error: '");
    memset(line + k, 'n', DIAG_MAX_MESSAGE - 1);
    k += DIAG_MAX_MESSAGE - 1;
    k += snprintf(line + k, sizeof line - (size_t)k, "...\nx\n^\nt.cfx:1:1: error: ");
    memset(line + k, 'n', DIAG_MAX_MESSAGE); /* exactly the limit: not cut */
    k += DIAG_MAX_MESSAGE;
    snprintf(line + k, sizeof line - (size_t)k, "\nx\n^\n");
    CHECK_STR(got, line);
    free(got);
}

static void test_errors(void)
{
    check_errors("x = $y", "t.cfx:1:5: error: unexpected character '$'\nx = $y\n    ^\n", __LINE__);
    check_errors("a && b || c",
                 "t.cfx:1:3: error: there is no '&&' operator: for a logical and, write 'and'\na && b || c\n  ^\n"
                 "t.cfx:1:8: error: there is no '||' operator: for a logical or, write 'or'\na && b || c\n       ^\n",
                 __LINE__);
    /* a run of bad bytes is one error */
    check_errors("a $$$ b", "t.cfx:1:3: error: unexpected character '$'\na $$$ b\n  ^\n", __LINE__);
    /* bytes that do not print are echoed as \xNN, and the caret moves past them to match */
    check_errors("a\n \x01", "t.cfx:2:2: error: unexpected character '\\x01'\n \\x01\n ^\n", __LINE__);
    check_errors("x = \xe2\x82\xac", "t.cfx:1:5: error: unexpected character '\\xE2'\nx = \\xE2\\x82\\xAC\n    ^\n",
                 __LINE__);
    check_errors("# \x1b[2J\xff\n\t\x7f$", "t.cfx:2:2: error: unexpected character '\\x7F'\n\t\\x7F$\n\t^\n", __LINE__);
    check_errors("\x80\x01 $ y", "t.cfx:1:1: error: unexpected character '\\x80'\n\\x80\\x01 $ y\n^\n"
                 "t.cfx:1:4: error: unexpected character '$'\n\\x80\\x01 $ y\n         ^\n", __LINE__);
    check_errors("! ' `",
                 "t.cfx:1:1: error: unexpected character '!' (write 'not', or '!=')\n! ' `\n^\n"
                 "t.cfx:1:3: error: unexpected character '\\''\n! ' `\n  ^\n"
                 "t.cfx:1:5: error: unexpected character '`'\n! ' `\n    ^\n",
                 __LINE__);
    check_errors("n = 9223372036854775808",
                 "t.cfx:1:5: error: integer literal is too large\nn = 9223372036854775808\n    ^\n", __LINE__);
    check_errors("0x8000000000000000", "t.cfx:1:1: error: integer literal is too large\n0x8000000000000000\n^\n",
                 __LINE__);
    check_errors("1e400", "t.cfx:1:1: error: real literal is too large\n1e400\n^\n", __LINE__);
    check_errors("12abc + 1", "t.cfx:1:1: error: invalid number '12abc'\n12abc + 1\n^\n", __LINE__);
    check_errors("0x + 1e", "t.cfx:1:1: error: invalid number '0x'\n0x + 1e\n^\n"
                            "t.cfx:1:6: error: invalid number '1e'\n0x + 1e\n     ^\n",
                 __LINE__);
    check_errors("1.2.3", "t.cfx:1:1: error: invalid number '1.2.3'\n1.2.3\n^\n", __LINE__);
    check_errors("s = \"abc\nx", "t.cfx:1:5: error: unterminated string\ns = \"abc\n    ^\n", __LINE__);
    check_errors("\"abc\\", "t.cfx:1:1: error: unterminated string\n\"abc\\\n^\n", __LINE__);
    check_errors("\"a\\qb\"", "t.cfx:1:3: error: unknown escape '\\q' in string\n\"a\\qb\"\n  ^\n", __LINE__);
    /* a NUL byte in the source is a character like any other, not the end */
    const char nul[] = "a \0 b";
    diag d;
    diag_init(&d, "t.cfx", nul, 5);
    lexer lx;
    lex_init(&lx, nul, 5, &d);
    CHECK_INT(lex_next(&lx).kind, TK_NAME);
    lex_token t = lex_next(&lx);
    CHECK_INT(t.kind, TK_NAME);
    CHECK_INT(t.col, 5);
    CHECK_INT(lex_next(&lx).kind, TK_EOF);
    char *m = diag_take(&d);
    CHECK_STR(m, "t.cfx:1:3: error: unexpected character '\\x00'\na \\x00 b\n  ^\n");
    free(m);
    diag_free(&d);
}

/* A 10,000-digit literal: one error, and no work proportional to anything but its length. */
static void test_long_literals(void)
{
    size_t n = 10000;
    char *src = malloc(n + 8);
    memset(src, '7', n);
    src[n] = '\0';
    diag d;
    diag_init(&d, "t.cfx", src, n);
    lexer lx;
    lex_init(&lx, src, n, &d);
    lex_token t = lex_next(&lx);
    CHECK_INT(t.kind, TK_INT);
    CHECK(t.bad);
    CHECK_INT(lex_next(&lx).kind, TK_EOF);
    CHECK_INT(d.errors, 1);
    diag_free(&d);

    /* the same digits as a real overflow; with a leading "0." they are a fine real */
    memcpy(src + n, ".5", 3);
    diag_init(&d, "t.cfx", src, n + 2);
    lex_init(&lx, src, n + 2, &d);
    t = lex_next(&lx);
    CHECK_INT(t.kind, TK_REAL);
    CHECK(t.bad);
    CHECK_INT(d.errors, 1);
    diag_free(&d);

    src[0] = '0';
    src[1] = '.';
    diag_init(&d, "t.cfx", src, n);
    lex_init(&lx, src, n, &d);
    t = lex_next(&lx);
    CHECK_INT(t.kind, TK_REAL);
    CHECK(!t.bad);
    CHECK(t.rval > 0.77 && t.rval < 0.78);
    CHECK_INT(d.errors, 0);
    diag_free(&d);
    free(src);
}

/* Every byte value at every place: the lexer ends, and every token lies inside the source. */
static void test_every_byte(void)
{
    char src[4];
    int bad = 0;
    for (int c = 0; c < 256; c++) {
        for (int at = 0; at < 3; at++) {
            memcpy(src, "a1(", 3);
            src[at] = (char)c;
            lexer lx;
            lex_init(&lx, src, 3, NULL);
            int guard = 0;
            for (;;) {
                lex_token t = lex_next(&lx);
                if (t.start + t.len > 3 || ++guard > 10)
                    bad++;
                if (t.kind == TK_EOF || guard > 10)
                    break;
            }
        }
    }
    CHECK_INT(bad, 0);
}

int main(void)
{
    test_numbers();
    test_operators();
    test_keywords_and_names();
    test_newlines_and_comments();
    test_strings();
    test_positions();
    test_line_breaks();
    test_errors();
    test_long_lines();
    test_long_literals();
    test_every_byte();
    return test_finish("test_lex");
}
