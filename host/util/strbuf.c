/* strbuf.c: the growable string used for diagnostics, dumps and formatted values. */
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int grow(strbuf *sb, size_t extra)
{
    if (sb->oom)
        return -1;
    if (sb->len + extra + 1 <= sb->cap)
        return 0;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < sb->len + extra + 1) {
        if (cap > ((size_t)-1) / 2) {
            sb->oom = 1;
            return -1;
        }
        cap *= 2;
    }
    char *p = realloc(sb->data, cap);
    if (!p) {
        sb->oom = 1;
        return -1;
    }
    sb->data = p;
    sb->cap = cap;
    return 0;
}

void sb_append(strbuf *sb, const char *s, size_t n)
{
    if (grow(sb, n) != 0)
        return;
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
}

void sb_puts(strbuf *sb, const char *s) { sb_append(sb, s, strlen(s)); }

void sb_vprintf(strbuf *sb, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n < 0 || grow(sb, (size_t)n) != 0) {
        va_end(again);
        return;
    }
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, again);
    sb->len += (size_t)n;
    va_end(again);
}

void sb_printf(strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(sb, fmt, ap);
    va_end(ap);
}

const char *sb_str(const strbuf *sb) { return sb->data ? sb->data : ""; }

char *sb_take(strbuf *sb)
{
    char *s = sb->data;
    if (!s) {
        s = malloc(1);
        if (s)
            s[0] = '\0';
    }
    sb->data = NULL;
    sb->len = sb->cap = 0;
    sb->oom = 0;
    return s;
}

void sb_free(strbuf *sb)
{
    free(sb->data);
    sb->data = NULL;
    sb->len = sb->cap = 0;
    sb->oom = 0;
}
