/* lex.h: the tokens of the .cfx language and the lexer that cuts source text into them.
 *
 * The lexer reports its own errors (a bad character, a malformed number, an unterminated
 * string) and goes on with the next token, so the parser never sees a bad byte. A newline
 * (LF, CR LF or a lone CR: diag_break) inside ( ) or [ ] is skipped: only a newline outside
 * them ends a statement. */
#ifndef CFX_LEX_H
#define CFX_LEX_H

#include <stddef.h>
#include <stdint.h>

#include "ast.h"
#include "diag.h"

/* X(NAME, SPELLING): every token kind once. SPELLING is the text of a keyword or an
 * operator, or a description ("newline") for the kinds that have no fixed text. The
 * keywords are the run from GRAPH to PASS; the lexer looks names up in that run, and reads
 * Python's spellings True and False as true and false. */
#define LEX_TOKENS(X)                     \
    X(EOF, "end of file")                 \
    X(NEWLINE, "newline")                 \
    X(NAME, "name")                       \
    X(INT, "integer")                     \
    X(REAL, "real number")                \
    X(STRING, "string")                   \
    /* keywords */                        \
    X(GRAPH, "graph")                     \
    X(IF, "if")                           \
    X(ELIF, "elif")                       \
    X(ELSE, "else")                       \
    X(WHILE, "while")                     \
    X(FOR, "for")                         \
    X(IN, "in")                           \
    X(RANGE, "range")                     \
    X(SWITCH, "switch")                   \
    X(CASE, "case")                       \
    X(DEFAULT, "default")                 \
    X(BREAK, "break")                     \
    X(CONTINUE, "continue")               \
    X(RETURN, "return")                   \
    X(TRUE, "true")                       \
    X(FALSE, "false")                     \
    X(AND, "and")                         \
    X(OR, "or")                           \
    X(NOT, "not")                         \
    X(IS, "is")                           \
    X(NONE, "None")                       \
    X(PASS, "pass")                       \
    /* operators and punctuation */       \
    X(PLUS, "+")                          \
    X(MINUS, "-")                         \
    X(STAR, "*")                          \
    X(STARSTAR, "**")                     \
    X(SLASH, "/")                         \
    X(SLASHSLASH, "//")                   \
    X(PERCENT, "%")                       \
    X(AT, "@")                            \
    X(AMP, "&")                           \
    X(PIPE, "|")                          \
    X(CARET, "^")                         \
    X(TILDE, "~")                         \
    X(LSHIFT, "<<")                       \
    X(RSHIFT, ">>")                       \
    X(LT, "<")                            \
    X(LE, "<=")                           \
    X(GT, ">")                            \
    X(GE, ">=")                           \
    X(EQ, "==")                           \
    X(NE, "!=")                           \
    X(ASSIGN, "=")                        \
    X(PLUS_ASSIGN, "+=")                  \
    X(MINUS_ASSIGN, "-=")                 \
    X(STAR_ASSIGN, "*=")                  \
    X(SLASH_ASSIGN, "/=")                 \
    X(PERCENT_ASSIGN, "%=")               \
    X(SLASHSLASH_ASSIGN, "//=")           \
    X(STARSTAR_ASSIGN, "**=")             \
    X(AMP_ASSIGN, "&=")                   \
    X(PIPE_ASSIGN, "|=")                  \
    X(CARET_ASSIGN, "^=")                 \
    X(LSHIFT_ASSIGN, "<<=")               \
    X(RSHIFT_ASSIGN, ">>=")               \
    X(COMMA, ",")                         \
    X(DOT, ".")                           \
    X(COLON, ":")                         \
    X(SEMI, ";")                          \
    X(ARROW, "->")                        \
    X(LPAREN, "(")                        \
    X(RPAREN, ")")                        \
    X(LBRACKET, "[")                      \
    X(RBRACKET, "]")                      \
    X(LBRACE, "{")                        \
    X(RBRACE, "}")

enum lex_kind {
#define X(name, spelling) TK_##name,
    LEX_TOKENS(X)
#undef X
    TK_COUNT
};

typedef struct lex_token {
    int kind;      /* enum lex_kind */
    size_t start;  /* byte offset of the token's text in the source */
    size_t len;    /* bytes of text (0 for EOF; 1 for NEWLINE) */
    int line, col; /* 1-based; col counts bytes */
    int64_t ival;  /* TK_INT: the value (>= 0; INT64_MIN for 9223372036854775808 lexed with
                      lexer.negated); TK_STRING: 1 when the closing quote is there */
    double rval;   /* TK_REAL: the value (finite) */
    int bad;       /* the lexer already reported an error for this token; its value is 0 */
} lex_token;

typedef struct lexer {
    const char *src;
    size_t len;
    size_t pos;
    int line, col;
    int paren;     /* depth of open ( and [: newlines inside them are not tokens */
    int negated;   /* the parser read a '-' in a constant's value: the decimal integer 2^63 that may
                      follow is -2^63's magnitude, lexed as INT64_MIN rather than refused */
    diag *d;       /* errors go here ... */
    char *err;     /* ... or, when d is NULL, the first one goes here (message only) */
    size_t errlen;
    int errors;    /* errors reported through this lexer (its parser's included) */
    int oom;       /* out of memory: every later token is EOF */
    int lost;      /* set when a bad character stood for an operator or a string (`&`, `'...'`): the
                    * statement cannot parse without it, so its parser reports nothing more there */
} lexer;

/* Reports to a diagnostic (`FILE:LINE:COL: error: ...`). */
void lex_init(lexer *lx, const char *src, size_t len, diag *d);
/* Reports only the first error's message into err (for one-line texts: a type, a signature). */
void lex_init_text(lexer *lx, const char *src, size_t len, char *err, size_t errlen);
lex_token lex_next(lexer *lx);

/* Reports an error at a position; the parser reports through here as well. */
void lex_error(lexer *lx, int line, int col, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* The fixed spelling of a kind: "if", "{", or "newline" for the kinds without one. */
const char *lex_kind_name(int kind);
/* A token as an error message names it: `'{'`, `'foo'`, `newline`, `end of file`. */
void lex_describe(const lexer *lx, const lex_token *t, char *buf, size_t n);
/* The value of a TK_STRING token with its escapes resolved, in the arena; NULL on out of memory. */
char *lex_string_value(const lexer *lx, const lex_token *t, ast_arena *a);
/* Whether a TK_NAME token's text is s. */
int lex_is(const lexer *lx, const lex_token *t, const char *s);

#endif
