/* lex.c: cuts .cfx source text into tokens (see lex.h). */
#include "lex.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[TK_COUNT] = {
#define X(name, spelling) spelling,
    LEX_TOKENS(X)
#undef X
};

const char *lex_kind_name(int kind)
{
    if (kind < 0 || kind >= TK_COUNT)
        return "?";
    return kind_names[kind];
}

static void advance(lexer *lx);

void lex_init(lexer *lx, const char *src, size_t len, diag *d)
{
    memset(lx, 0, sizeof *lx);
    lx->src = src ? src : "";
    lx->len = src ? len : 0;
    lx->line = 1;
    lx->col = 1;
    lx->d = d;
    /* a UTF-8 byte-order mark (an editor's) is not part of the text, as Python has it; columns
     * still count its bytes */
    if (lx->len >= 3 && memcmp(lx->src, "\xEF\xBB\xBF", 3) == 0)
        for (int k = 0; k < 3; k++)
            advance(lx);
}

void lex_init_text(lexer *lx, const char *src, size_t len, char *err, size_t errlen)
{
    lex_init(lx, src, len, NULL);
    lx->err = err;
    lx->errlen = errlen;
    if (err && errlen)
        err[0] = '\0';
}

void lex_error(lexer *lx, int line, int col, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lx->errors++;
    if (lx->d)
        diag_error(lx->d, line, col, "%s", msg);
    else if (lx->err && lx->errlen && lx->errors == 1)
        snprintf(lx->err, lx->errlen, "%s", msg);
}

/* ---- characters -------------------------------------------------------------------- */

static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_hex(int c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_alnum(int c) { return is_alpha(c) || is_digit(c); }

/* The byte at pos + k, or 0 past the end (the source need not be NUL-terminated, and a
 * NUL inside it is reported as a bad character, never taken for the end). */
static int peek(const lexer *lx, size_t k)
{
    return lx->pos + k < lx->len ? (unsigned char)lx->src[lx->pos + k] : 0;
}

static int at_end(const lexer *lx, size_t k) { return lx->pos + k >= lx->len; }

static void advance(lexer *lx)
{
    if (lx->pos >= lx->len)
        return;
    /* positions saturate rather than overflow on a file of more than 2^31 bytes; a line
     * ends at LF, CR LF (counted at its LF) or a lone CR, as the echo of a line counts them */
    if (diag_break(lx->src, lx->len, lx->pos) == 1) {
        if (lx->line < INT_MAX)
            lx->line++;
        lx->col = 1;
    } else if (lx->col < INT_MAX) {
        lx->col++;
    }
    lx->pos++;
}

/* A byte as an error message shows it: `$`, or `\xNN` when it does not print. */
static void show_byte(int c, char *buf, size_t n)
{
    if (c >= 33 && c < 127 && c != '\'')
        snprintf(buf, n, "%c", c);
    else if (c == '\'')
        snprintf(buf, n, "\\'");
    else
        snprintf(buf, n, "\\x%02X", (unsigned)c);
}

/* ---- numbers ----------------------------------------------------------------------- */

/* Reports `invalid number 'TEXT'` for the text from start to the end of the alphanumeric
 * run, which it consumes, so `12abc` is one error and not a number followed by a name. */
static void bad_number(lexer *lx, lex_token *t)
{
    while (!at_end(lx, 0) && (is_alnum(peek(lx, 0)) || peek(lx, 0) == '.'))
        advance(lx);
    size_t n = lx->pos - t->start;
    lex_error(lx, t->line, t->col, "invalid number '%.*s%s'", (int)(n > 40 ? 40 : n), lx->src + t->start,
              n > 40 ? "..." : "");
    t->bad = 1;
}

/* An integer literal's value, decimal or hex, or its error when it did not fit in i64. */
static void set_integer(lexer *lx, lex_token *t, int64_t v, int overflow)
{
    if (overflow) {
        lex_error(lx, t->line, t->col, "integer literal is too large");
        t->bad = 1;
        return;
    }
    t->ival = v;
}

static void lex_number(lexer *lx, lex_token *t)
{
    t->kind = TK_INT;
    if (peek(lx, 0) == '0' && (peek(lx, 1) == 'x' || peek(lx, 1) == 'X')) {
        advance(lx);
        advance(lx);
        if (!is_hex(peek(lx, 0))) {
            bad_number(lx, t);
            return;
        }
        int64_t v = 0;
        int overflow = 0;
        while (is_hex(peek(lx, 0))) {
            int c = peek(lx, 0);
            int digit = is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10;
            if (v > (INT64_MAX - digit) / 16)
                overflow = 1;
            else
                v = v * 16 + digit;
            advance(lx);
        }
        if (is_alnum(peek(lx, 0)) || peek(lx, 0) == '.') {
            bad_number(lx, t);
            return;
        }
        set_integer(lx, t, v, overflow);
        return;
    }

    int64_t v = 0;
    int overflow = 0, min = 0; /* min: the digits so far are 2^63, which only lexer.negated takes */
    while (is_digit(peek(lx, 0))) {
        int digit = peek(lx, 0) - '0';
        if (min) {
            overflow = 1;
            min = 0;
        } else if (v > (INT64_MAX - digit) / 10) {
            min = !overflow && lx->negated && v == INT64_MAX / 10 && digit == 8;
            if (!min)
                overflow = 1;
        } else {
            v = v * 10 + digit;
        }
        advance(lx);
    }
    int real = 0;
    if (peek(lx, 0) == '.') {
        real = 1;
        advance(lx);
        while (is_digit(peek(lx, 0)))
            advance(lx);
    }
    if (peek(lx, 0) == 'e' || peek(lx, 0) == 'E') {
        size_t k = 1;
        if (peek(lx, 1) == '+' || peek(lx, 1) == '-')
            k = 2;
        if (!is_digit(peek(lx, k))) {
            bad_number(lx, t);
            return;
        }
        real = 1;
        for (size_t i = 0; i < k; i++)
            advance(lx);
        while (is_digit(peek(lx, 0)))
            advance(lx);
    }
    if (is_alnum(peek(lx, 0)) || peek(lx, 0) == '.') {
        bad_number(lx, t);
        return;
    }
    if (!real) {
        if (min)
            t->ival = INT64_MIN;
        else
            set_integer(lx, t, v, overflow);
        return;
    }

    /* strtod needs a NUL-terminated copy; the text is digits, '.', 'e' and a sign only */
    t->kind = TK_REAL;
    size_t n = lx->pos - t->start;
    char small[64];
    char *text = n < sizeof small ? small : malloc(n + 1);
    if (!text) {
        lx->oom = 1;
        t->bad = 1;
        return;
    }
    memcpy(text, lx->src + t->start, n);
    text[n] = '\0';
    double r = strtod(text, NULL);
    if (text != small)
        free(text);
    if (isinf(r) || isnan(r)) {
        lex_error(lx, t->line, t->col, "real literal is too large");
        t->bad = 1;
        return;
    }
    t->rval = r;
}

/* ---- strings ----------------------------------------------------------------------- */

/* Escapes: \" \\ \n \t \r. A string ends on its line: a newline or the end of the file
 * before the closing quote is an error at the opening quote. */
static void lex_string(lexer *lx, lex_token *t)
{
    t->kind = TK_STRING;
    advance(lx); /* the opening quote */
    for (;;) {
        if (at_end(lx, 0) || peek(lx, 0) == '\n' || peek(lx, 0) == '\r') {
            lex_error(lx, t->line, t->col, "unterminated string");
            t->bad = 1;
            return;
        }
        int c = peek(lx, 0);
        if (c == '"') {
            advance(lx);
            t->ival = 1; /* closed: the text ends with its quote */
            return;
        }
        if (c == '\\') {
            int e = peek(lx, 1);
            if (at_end(lx, 1) || e == '\n' || e == '\r') {
                advance(lx);
                continue; /* the loop reports the unterminated string */
            }
            if (e != '"' && e != '\\' && e != 'n' && e != 't' && e != 'r') {
                char shown[8];
                show_byte(e, shown, sizeof shown);
                lex_error(lx, lx->line, lx->col, "unknown escape '\\%s' in string", shown);
                t->bad = 1;
            }
            advance(lx);
            advance(lx);
            continue;
        }
        if (c < 32 && c != '\t') {
            /* a NUL would cut the string short; other control bytes are a binary file */
            char shown[8];
            show_byte(c, shown, sizeof shown);
            lex_error(lx, lx->line, lx->col, "unexpected character '%s' in string", shown);
            t->bad = 1;
        }
        advance(lx);
    }
}

char *lex_string_value(const lexer *lx, const lex_token *t, ast_arena *a)
{
    /* the token's text runs from the opening quote to the closing one (absent when the
     * string was unterminated); the value is never longer than the text */
    const char *s = lx->src + t->start;
    size_t n = t->len;
    char *out = ast_alloc(a, n + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    size_t end = t->ival ? n - 1 : n;
    for (size_t i = 1; i < end; i++) {
        char c = s[i];
        if (c == '\\' && i + 1 < end) {
            char e = s[++i];
            c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
        }
        if (c == '\0')
            continue;
        out[o++] = c;
    }
    out[o] = '\0';
    return out;
}

/* ---- tokens ------------------------------------------------------------------------ */

int lex_is(const lexer *lx, const lex_token *t, const char *s)
{
    size_t n = strlen(s);
    return t->kind == TK_NAME && t->len == n && memcmp(lx->src + t->start, s, n) == 0;
}

static int keyword(const char *s, size_t n)
{
    if (n == 4 && memcmp(s, "True", 4) == 0)
        return TK_TRUE;
    if (n == 5 && memcmp(s, "False", 5) == 0)
        return TK_FALSE;
    for (int k = TK_GRAPH; k <= TK_PASS; k++)
        if (strlen(kind_names[k]) == n && memcmp(kind_names[k], s, n) == 0)
            return k;
    return TK_NAME;
}

/* Operators of one to three characters, longest first where they share a first byte. */
static int lex_operator(lexer *lx)
{
    int c = peek(lx, 0), c1 = peek(lx, 1);
    int kind = -1, two = 0;
    switch (c) {
    case '+': if (c1 == '=') { kind = TK_PLUS_ASSIGN; two = 1; } else kind = TK_PLUS; break;
    case '-':
        if (c1 == '>') { kind = TK_ARROW; two = 1; }
        else if (c1 == '=') { kind = TK_MINUS_ASSIGN; two = 1; }
        else kind = TK_MINUS;
        break;
    case '*':
        if (c1 == '=') { kind = TK_STAR_ASSIGN; two = 1; }
        else if (c1 == '*' && peek(lx, 2) == '=') { kind = TK_STARSTAR_ASSIGN; two = 2; }
        else if (c1 == '*') { kind = TK_STARSTAR; two = 1; }
        else kind = TK_STAR;
        break;
    case '/':
        if (c1 == '=') { kind = TK_SLASH_ASSIGN; two = 1; }
        else if (c1 == '/' && peek(lx, 2) == '=') { kind = TK_SLASHSLASH_ASSIGN; two = 2; }
        else if (c1 == '/') { kind = TK_SLASHSLASH; two = 1; }
        else kind = TK_SLASH;
        break;
    case '%': if (c1 == '=') { kind = TK_PERCENT_ASSIGN; two = 1; } else kind = TK_PERCENT; break;
    case '@': kind = TK_AT; break;
    case '<':
        if (c1 == '=') { kind = TK_LE; two = 1; }
        else if (c1 == '<' && peek(lx, 2) == '=') { kind = TK_LSHIFT_ASSIGN; two = 2; }
        else if (c1 == '<') { kind = TK_LSHIFT; two = 1; }
        else kind = TK_LT;
        break;
    case '>':
        if (c1 == '=') { kind = TK_GE; two = 1; }
        else if (c1 == '>' && peek(lx, 2) == '=') { kind = TK_RSHIFT_ASSIGN; two = 2; }
        else if (c1 == '>') { kind = TK_RSHIFT; two = 1; }
        else kind = TK_GT;
        break;
    case '&': if (c1 == '=') { kind = TK_AMP_ASSIGN; two = 1; } else if (c1 != '&') kind = TK_AMP; break;
    case '|': if (c1 == '=') { kind = TK_PIPE_ASSIGN; two = 1; } else if (c1 != '|') kind = TK_PIPE; break;
    case '^': if (c1 == '=') { kind = TK_CARET_ASSIGN; two = 1; } else kind = TK_CARET; break;
    case '~': kind = TK_TILDE; break;
    case '=': if (c1 == '=') { kind = TK_EQ; two = 1; } else kind = TK_ASSIGN; break;
    case '!': if (c1 == '=') { kind = TK_NE; two = 1; } break;
    case ',': kind = TK_COMMA; break;
    case '.': kind = TK_DOT; break; /* `.5` is a number: the caller lexes numbers first */
    case ':': kind = TK_COLON; break;
    case ';': kind = TK_SEMI; break;
    case '(': kind = TK_LPAREN; break;
    case ')': kind = TK_RPAREN; break;
    case '[': kind = TK_LBRACKET; break;
    case ']': kind = TK_RBRACKET; break;
    case '{': kind = TK_LBRACE; break;
    case '}': kind = TK_RBRACE; break;
    default: break;
    }
    if (kind < 0)
        return -1;
    for (int k = 0; k <= two; k++) /* two: the characters after the first (1 or 2) */
        advance(lx);
    return kind;
}

/* Whether a byte can begin something valid (space, comment, token); a run of bad bytes
 * ends at one. */
static int starts_token(int c)
{
    return (c != 0 && strchr(" \t\r\f\v\n#\".+-*/%@<>=!,:;()[]{}&|^~", c) != NULL) || is_alnum(c);
}

/* Skips spaces, comments and the newlines that are not tokens (inside ( ) or [ ]). */
static void skip_space(lexer *lx)
{
    while (!at_end(lx, 0)) {
        int c = peek(lx, 0);
        /* the CR of a CR LF is space; a lone CR is a line break, like LF */
        int brk = (int)diag_break(lx->src, lx->len, lx->pos);
        if (c == ' ' || c == '\t' || c == '\f' || c == '\v' || brk == 2 || (brk == 1 && lx->paren > 0)) {
            advance(lx);
        } else if (c == '\\' && (peek(lx, 1) == '\n' || peek(lx, 1) == '\r')) {
            /* a backslash at the end of a line joins the next one to it, as in Python */
            advance(lx);
            if (peek(lx, 0) == '\r' && peek(lx, 1) == '\n')
                advance(lx);
            advance(lx);
        } else if (c == '#') {
            while (!at_end(lx, 0) && peek(lx, 0) != '\n' && peek(lx, 0) != '\r')
                advance(lx);
        } else {
            return;
        }
    }
}

/* Where the quote that closes the one at lx->pos stands on its line, or 0 when none does. */
static size_t closing_quote(const lexer *lx)
{
    for (size_t i = lx->pos + 1; i < lx->len && lx->src[i] != '\n' && lx->src[i] != '\r'; i++)
        if (lx->src[i] == '\'')
            return i;
    return 0;
}

lex_token lex_next(lexer *lx)
{
    for (;;) {
        lex_token t;
        memset(&t, 0, sizeof t);
        skip_space(lx);
        t.start = lx->pos;
        t.line = lx->line;
        t.col = lx->col;
        if (lx->oom || at_end(lx, 0)) {
            t.kind = TK_EOF;
            return t;
        }
        int c = peek(lx, 0);
        if (c == '\n' || c == '\r') {
            t.kind = TK_NEWLINE;
            advance(lx);
        } else if (is_alpha(c)) {
            while (is_alnum(peek(lx, 0)))
                advance(lx);
            t.kind = keyword(lx->src + t.start, lx->pos - t.start);
        } else if (is_digit(c) || (c == '.' && is_digit(peek(lx, 1)))) {
            lex_number(lx, &t);
        } else if (c == '"') {
            lex_string(lx, &t);
        } else if (c == '\'' && closing_quote(lx) > lx->pos) {
            /* a string in single quotes: one message, and the quote skipped whole */
            size_t from = lx->pos + 1, to = closing_quote(lx);
            size_t back = t.start;
            while (back > 0 && (lx->src[back - 1] == ' ' || lx->src[back - 1] == '\t'))
                back--;
            int ord = back >= 4 && lx->src[back - 1] == '(' && memcmp(lx->src + back - 4, "ord", 3) == 0;
            if (ord && to == from + 1)
                lex_error(lx, t.line, t.col, "there is no ord(): characters are not values; write the code as a "
                          "number (ord('%c') is %d)", lx->src[from], (unsigned char)lx->src[from]);
            else
                lex_error(lx, t.line, t.col, "a string is written in double quotes (\"...\"), and only as the "
                          "message of assert or the label of print");
            lx->lost = 1;
            while (lx->pos <= to)
                advance(lx);
            continue;
        } else {
            int kind = lex_operator(lx);
            if (kind < 0) {
                /* one message for a run of bad bytes (a UTF-8 character, a binary blob) */
                char shown[8];
                show_byte(c, shown, sizeof shown);
                /* the spellings other languages use for what .cfx writes as a word */
                const char *hint = c == '!' ? " (write 'not', or '!=')" : "";
                lx->lost = c == '&' || c == '|'; /* '&&', '||': the only way here for these */
                if (lx->lost)
                    lex_error(lx, t.line, t.col, "there is no '%c%c' operator: for a logical %s, write '%s'", c, c,
                              c == '&' ? "and" : "or", c == '&' ? "and" : "or");
                else
                    lex_error(lx, t.line, t.col, "unexpected character '%s'%s", shown, hint);
                advance(lx);
                if (lx->lost)
                    advance(lx);
                while (!at_end(lx, 0)) {
                    int b = peek(lx, 0);
                    if (starts_token(b))
                        break;
                    advance(lx);
                }
                continue;
            }
            t.kind = kind;
            if (kind == TK_LPAREN || kind == TK_LBRACKET)
                lx->paren++;
            else if ((kind == TK_RPAREN || kind == TK_RBRACKET) && lx->paren > 0)
                lx->paren--;
            else if (kind == TK_LBRACE || kind == TK_RBRACE)
                lx->paren = 0; /* a brace is never inside ( ): an unclosed ( ends here */
        }
        t.len = lx->pos - t.start;
        return t;
    }
}

void lex_describe(const lexer *lx, const lex_token *t, char *buf, size_t n)
{
    switch (t->kind) {
    case TK_EOF:
    case TK_NEWLINE:
        snprintf(buf, n, "%s", kind_names[t->kind]);
        break;
    case TK_STRING:
        snprintf(buf, n, "a string");
        break;
    case TK_NAME:
    case TK_INT:
    case TK_REAL:
        if (t->len > 32)
            snprintf(buf, n, "'%.32s...'", lx->src + t->start);
        else
            snprintf(buf, n, "'%.*s'", (int)t->len, lx->src + t->start);
        break;
    default:
        snprintf(buf, n, "'%s'", lex_kind_name(t->kind));
        break;
    }
}
