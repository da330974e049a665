/* strbuf.h: a growable NUL-terminated string. Out of memory leaves the buffer marked
 * failed (oom = 1) and every later append does nothing, so callers check once at the end. */
#ifndef CFX_STRBUF_H
#define CFX_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct strbuf {
    char *data; /* always NUL-terminated once anything was appended; NULL before */
    size_t len;
    size_t cap;
    int oom;
} strbuf;

void sb_append(strbuf *sb, const char *s, size_t n);
void sb_puts(strbuf *sb, const char *s);
void sb_printf(strbuf *sb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void sb_vprintf(strbuf *sb, const char *fmt, va_list ap);
/* The string (never NULL: "" when empty); the buffer keeps ownership. */
const char *sb_str(const strbuf *sb);
/* Hands the string over to the caller (free()), leaving the buffer empty. */
char *sb_take(strbuf *sb);
void sb_free(strbuf *sb);

#endif
