/* value.c: parsing command-line literals into typed buffers, and formatting values. */
#include "value.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- parsing ------------------------------------------------------------------------ */

typedef struct cursor {
    const char *s;
    const cfx_type *t;
    unsigned char *buf;
    int64_t next; /* index of the next element to write */
    char *err;
    size_t errlen;
} cursor;

static void skip_space(cursor *c)
{
    while (*c->s == ' ' || *c->s == '\t' || *c->s == '\n' || *c->s == '\r')
        c->s++;
}

static int is_delim(char ch)
{
    return ch == '\0' || ch == ',' || ch == '[' || ch == ']' || ch == ' ' || ch == '\t' ||
           ch == '\n' || ch == '\r';
}

/* What the cursor points at, for messages: the token, or a name for the end. */
static void describe_here(const char *s, char *out, size_t len)
{
    if (*s == '\0') {
        snprintf(out, len, "the end of the value");
        return;
    }
    size_t n = 0;
    if (*s == '[' || *s == ']' || *s == ',')
        n = 1;
    else
        while (!is_delim(s[n]) && n < 24)
            n++;
    snprintf(out, len, "'%.*s%s'", (int)n, s, (n == 24 && !is_delim(s[n])) ? "..." : "");
}

static int fail(cursor *c, const char *msg)
{
    snprintf(c->err, c->errlen, "%s", msg);
    return -1;
}

/* Parses an unsigned decimal or 0x hex integer of exactly `tok`; 0, or -1 if the token is
 * not one or does not fit in uint64. */
static int parse_magnitude(const char *tok, uint64_t *out)
{
    uint64_t v = 0;
    int base = 10;
    if (tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X')) {
        base = 16;
        tok += 2;
    }
    if (*tok == '\0')
        return -1;
    for (; *tok; tok++) {
        int d;
        if (*tok >= '0' && *tok <= '9')
            d = *tok - '0';
        else if (base == 16 && *tok >= 'a' && *tok <= 'f')
            d = *tok - 'a' + 10;
        else if (base == 16 && *tok >= 'A' && *tok <= 'F')
            d = *tok - 'A' + 10;
        else
            return -1;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return -2;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    *out = v;
    return 0;
}

/* Converts one token to an element of the type's dtype and stores it at c->next. */
static int store_scalar(cursor *c, const char *tok)
{
    cfx_dtype dt = c->t->dtype;
    const char *dname = cfx_dtype_name(dt);
    unsigned char *dst = c->buf + c->next * cfx_dtype_size(dt);
    char msg[200];

    if (dt == CFX_BOOL) {
        uint8_t b;
        if (strcmp(tok, "true") == 0 || strcmp(tok, "1") == 0)
            b = 1;
        else if (strcmp(tok, "false") == 0 || strcmp(tok, "0") == 0)
            b = 0;
        else {
            snprintf(msg, sizeof msg, "expected true or false for bool, got '%s'", tok);
            return fail(c, msg);
        }
        memcpy(dst, &b, 1);
    } else if (dt == CFX_I32 || dt == CFX_I64) {
        int neg = tok[0] == '-';
        const char *digits = (tok[0] == '-' || tok[0] == '+') ? tok + 1 : tok;
        uint64_t mag = 0;
        int r = parse_magnitude(digits, &mag);
        if (r == -1) {
            snprintf(msg, sizeof msg, "expected an integer for %s, got '%s'", dname, tok);
            return fail(c, msg);
        }
        uint64_t limit = dt == CFX_I32 ? (neg ? 2147483648u : 2147483647u)
                                       : (neg ? (uint64_t)1 << 63 : ((uint64_t)1 << 63) - 1);
        if (r == -2 || mag > limit) {
            snprintf(msg, sizeof msg, "'%s' is out of range for %s", tok, dname);
            return fail(c, msg);
        }
        /* two's complement negation through unsigned, so INT64_MIN needs no special case */
        uint64_t bits = neg ? (uint64_t)0 - mag : mag;
        if (dt == CFX_I32) {
            int32_t v = (int32_t)(uint32_t)bits;
            memcpy(dst, &v, 4);
        } else {
            int64_t v = (int64_t)bits;
            memcpy(dst, &v, 8);
        }
    } else {
        if (strcmp(tok, "true") == 0 || strcmp(tok, "false") == 0 || tok[0] == '\0') {
            snprintf(msg, sizeof msg, "expected a number for %s, got '%s'", dname, tok);
            return fail(c, msg);
        }
        char *end = NULL;
        errno = 0;
        /* strtof for f32 rounds once, from the text, rather than twice through double */
        double v = dt == CFX_F32 ? (double)strtof(tok, &end) : strtod(tok, &end);
        int overflow = errno == ERANGE && isinf(v);
        if (!end || *end != '\0') {
            snprintf(msg, sizeof msg, "expected a number for %s, got '%s'", dname, tok);
            return fail(c, msg);
        }
        /* a literal `inf` is fine; a finite literal that rounds to inf is not */
        int written_inf = strstr(tok, "inf") || strstr(tok, "INF") || strstr(tok, "Inf");
        if (overflow || (isinf(v) && !written_inf)) {
            snprintf(msg, sizeof msg, "'%s' is out of range for %s", tok, dname);
            return fail(c, msg);
        }
        if (dt == CFX_F32) {
            float f = (float)v;
            memcpy(dst, &f, 4);
        } else {
            memcpy(dst, &v, 8);
        }
    }
    c->next++;
    return 0;
}

static int parse_scalar(cursor *c)
{
    char tok[128];
    size_t n = 0;
    while (!is_delim(c->s[n]))
        n++;
    if (n == 0) {
        char here[48], msg[160];
        describe_here(c->s, here, sizeof here);
        snprintf(msg, sizeof msg, "expected a value, found %s", here);
        return fail(c, msg);
    }
    if (n >= sizeof tok) {
        char msg[200];
        snprintf(msg, sizeof msg, "the number '%.24s...' is too long", c->s);
        return fail(c, msg);
    }
    memcpy(tok, c->s, n);
    tok[n] = '\0';
    c->s += n;
    return store_scalar(c, tok);
}

/* Parses the part of the value for dimension `depth` onward (depth == rank: one element).
 * Recursion is bounded by the rank (at most CFX_TYPE_MAX_RANK). */
static int parse_level(cursor *c, int depth)
{
    char here[48], msg[200], ty[64];
    skip_space(c);
    if (depth == c->t->rank) {
        if (*c->s == '[') {
            cfx_type_str(c->t, ty, sizeof ty);
            snprintf(msg, sizeof msg, "too many '[': the type %s has %d dimension%s", ty,
                     c->t->rank, c->t->rank == 1 ? "" : "s");
            return fail(c, msg);
        }
        return parse_scalar(c);
    }
    if (*c->s != '[') {
        cfx_type_str(c->t, ty, sizeof ty);
        describe_here(c->s, here, sizeof here);
        snprintf(msg, sizeof msg, "expected '[' for a value of type %s, found %s", ty, here);
        return fail(c, msg);
    }
    c->s++;
    int64_t want = c->t->dims[depth], got = 0;
    for (;;) {
        skip_space(c);
        if (*c->s == ']' && got == 0)
            break; /* `[]`: reported below as too few elements */
        if (got == want) {
            snprintf(msg, sizeof msg, "dimension %d has more than %lld element%s", depth,
                     (long long)want, want == 1 ? "" : "s");
            return fail(c, msg);
        }
        if (parse_level(c, depth + 1) != 0)
            return -1;
        got++;
        skip_space(c);
        if (*c->s == ',') {
            c->s++;
            skip_space(c);
            if (*c->s == ']')
                return fail(c, "a ',' before ']': a trailing comma is not allowed");
            continue;
        }
        if (*c->s == ']')
            break;
        describe_here(c->s, here, sizeof here);
        snprintf(msg, sizeof msg, "expected ',' or ']', found %s", here);
        return fail(c, msg);
    }
    c->s++; /* the ']' */
    if (got != want) {
        snprintf(msg, sizeof msg, "dimension %d has %lld element%s, expected %lld", depth,
                 (long long)got, got == 1 ? "" : "s", (long long)want);
        return fail(c, msg);
    }
    return 0;
}

int value_parse(const char *text, const cfx_type *t, void *buf, char *err, size_t errlen)
{
    cursor c = {text, t, buf, 0, err, errlen};
    if (!text || t->rank < 0 || t->rank > CFX_TYPE_MAX_RANK)
        return fail(&c, "bad value or type");
    if (parse_level(&c, 0) != 0)
        return -1;
    skip_space(&c);
    if (*c.s != '\0') {
        char here[48], msg[120];
        describe_here(c.s, here, sizeof here);
        snprintf(msg, sizeof msg, "unexpected %s after the value", here);
        return fail(&c, msg);
    }
    return 0;
}

/* ---- random values ------------------------------------------------------------------ */

uint64_t value_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

void value_random(const cfx_type *t, uint64_t *state, void *buf)
{
    int64_t n = cfx_type_count(t);
    for (int64_t i = 0; i < n; i++) {
        uint64_t x = value_splitmix64(state);
        switch (t->dtype) {
        case CFX_F32: {
            float f = (float)(x >> 40) * 0x1p-24f; /* 24 bits: every value exact, < 1 */
            memcpy((char *)buf + i * 4, &f, 4);
            break;
        }
        case CFX_F64: {
            double d = (double)(x >> 11) * 0x1p-53;
            memcpy((char *)buf + i * 8, &d, 8);
            break;
        }
        case CFX_I32: {
            int32_t v = (int32_t)(x % 100);
            memcpy((char *)buf + i * 4, &v, 4);
            break;
        }
        case CFX_I64: {
            int64_t v = (int64_t)(x % 100);
            memcpy((char *)buf + i * 8, &v, 8);
            break;
        }
        case CFX_BOOL: {
            uint8_t b = (uint8_t)(x >> 63);
            memcpy((char *)buf + i, &b, 1);
            break;
        }
        }
    }
}

/* ---- formatting --------------------------------------------------------------------- */

void value_format_real(double v, int is_f32, char *buf, size_t len)
{
    if (isnan(v)) {
        snprintf(buf, len, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, len, v < 0 ? "-inf" : "inf");
        return;
    }
    /* the fewest significant digits that read back to the same value */
    char e[64];
    int maxp = is_f32 ? 9 : 17;
    for (int p = 1; p <= maxp; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, v);
        if (is_f32 ? strtof(e, NULL) == (float)v : strtod(e, NULL) == v)
            break;
    }
    /* e is [-]D[.DDD]e[+-]XX: take its digits and exponent, then lay them out */
    const char *s = e;
    int neg = 0;
    if (*s == '-') {
        neg = 1;
        s++;
    }
    char digits[32];
    int nd = 0;
    for (; *s && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9' && nd < (int)sizeof digits - 1)
            digits[nd++] = *s;
    int exp10 = (*s == 'e') ? atoi(s + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = '\0';

    char out[64];
    int o = 0;
    if (neg)
        out[o++] = '-';
    if (exp10 >= -4 && exp10 < 16) {
        if (exp10 >= 0) {
            for (int i = 0; i <= exp10; i++)
                out[o++] = i < nd ? digits[i] : '0';
            if (nd > exp10 + 1) {
                out[o++] = '.';
                for (int i = exp10 + 1; i < nd; i++)
                    out[o++] = digits[i];
            }
        } else {
            out[o++] = '0';
            out[o++] = '.';
            for (int i = 0; i < -exp10 - 1; i++)
                out[o++] = '0';
            for (int i = 0; i < nd; i++)
                out[o++] = digits[i];
        }
        out[o] = '\0';
    } else {
        out[o++] = digits[0];
        if (nd > 1) {
            out[o++] = '.';
            for (int i = 1; i < nd; i++)
                out[o++] = digits[i];
        }
        snprintf(out + o, sizeof out - (size_t)o, "e%c%02d", exp10 < 0 ? '-' : '+',
                 exp10 < 0 ? -exp10 : exp10);
    }
    snprintf(buf, len, "%s", out);
}

static void format_element(strbuf *out, cfx_dtype dt, const unsigned char *p)
{
    char buf[64];
    switch (dt) {
    case CFX_F32: {
        float f;
        memcpy(&f, p, 4);
        value_format_real(f, 1, buf, sizeof buf);
        break;
    }
    case CFX_F64: {
        double d;
        memcpy(&d, p, 8);
        value_format_real(d, 0, buf, sizeof buf);
        break;
    }
    case CFX_I32: {
        int32_t v;
        memcpy(&v, p, 4);
        snprintf(buf, sizeof buf, "%ld", (long)v);
        break;
    }
    case CFX_I64: {
        int64_t v;
        memcpy(&v, p, 8);
        snprintf(buf, sizeof buf, "%lld", (long long)v);
        break;
    }
    case CFX_BOOL:
    default:
        snprintf(buf, sizeof buf, "%s", *p ? "true" : "false");
        break;
    }
    sb_puts(out, buf);
}

/* Formats dimension `depth` onward of the elements starting at *index. */
static void format_level(strbuf *out, const cfx_type *t, const unsigned char *data, int depth,
                         int64_t *index)
{
    if (depth >= t->rank || depth >= CFX_TYPE_MAX_RANK) {
        format_element(out, t->dtype, data + *index * cfx_dtype_size(t->dtype));
        (*index)++;
        return;
    }
    sb_puts(out, "[");
    for (int64_t i = 0; i < t->dims[depth]; i++) {
        if (i > 0)
            sb_puts(out, ", ");
        format_level(out, t, data, depth + 1, index);
    }
    sb_puts(out, "]");
}

void value_format(strbuf *out, const cfx_type *t, const void *data)
{
    int64_t index = 0;
    if (t->rank < 0 || t->rank > CFX_TYPE_MAX_RANK)
        return;
    format_level(out, t, data, 0, &index);
}

void value_scalar(cfx_dtype dt, int64_t iv, double rv, void *out)
{
    union {
        float f;
        double d;
        int32_t i;
        int64_t l;
        uint8_t b;
    } u;
    memset(&u, 0, sizeof u);
    switch (dt) {
    case CFX_F32: u.f = (float)rv; break;
    case CFX_F64: u.d = rv; break;
    case CFX_I32: u.i = (int32_t)iv; break;
    case CFX_I64: u.l = iv; break;
    case CFX_BOOL: u.b = iv != 0; break;
    }
    memcpy(out, &u, sizeof u);
}
