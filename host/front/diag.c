/* diag.c: formats compile errors with their source line and a caret. */
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void diag_init(diag *d, const char *file, const char *src, size_t len)
{
    d->file = file;
    d->src = src;
    d->len = len;
    d->errors = 0;
    d->out = (strbuf){0};
}

/* Whether byte c is echoed as itself; any other is shown as \xNN. A tab is kept so the
 * caret line, indented with the same tabs, lines up in a terminal. */
static int prints(unsigned char c) { return c == '\t' || (c >= 32 && c < 127); }

/* Appends bytes [from, to) of the source, escaped. */
static void echo_bytes(strbuf *o, const char *src, size_t from, size_t to)
{
    for (size_t k = from; k < to; k++) {
        unsigned char c = (unsigned char)src[k];
        if (prints(c))
            sb_append(o, (const char *)&c, 1);
        else
            sb_printf(o, "\\x%02X", (unsigned)c);
    }
}

/* Appends source line `line` and a caret under `col`: the whole line, or a window of
 * DIAG_ECHO_WINDOW bytes around the caret with "..." where the line was cut. */
static void show_line(diag *d, int line, int col)
{
    if (!d->src || line < 1)
        return;
    size_t i = 0;
    for (int l = 1; l < line; l++) {
        while (i < d->len && !diag_break(d->src, d->len, i))
            i++;
        if (i >= d->len)
            return; /* no such line */
        i += diag_break(d->src, d->len, i);
    }
    size_t end = i;
    while (end < d->len && !diag_break(d->src, d->len, end))
        end++;
    size_t caret = col > 1 ? (size_t)(col - 1) : 0;
    if (caret > end - i)
        caret = end - i;
    caret += i;
    size_t from = i, to = end;
    if (end - i > DIAG_ECHO_WINDOW) {
        from = caret - i > DIAG_ECHO_WINDOW / 2 ? caret - DIAG_ECHO_WINDOW / 2 : i;
        to = end - from > DIAG_ECHO_WINDOW ? from + DIAG_ECHO_WINDOW : end;
        if (to - from < DIAG_ECHO_WINDOW)
            from = to - DIAG_ECHO_WINDOW;
    }
    strbuf *o = &d->out;
    if (from > i)
        sb_puts(o, "...");
    echo_bytes(o, d->src, from, to);
    if (to < end)
        sb_puts(o, "...");
    sb_puts(o, "\n");
    if (from > i)
        sb_puts(o, "   ");
    for (size_t k = from; k < caret; k++) {
        unsigned char c = (unsigned char)d->src[k];
        sb_puts(o, c == '\t' ? "\t" : prints(c) ? " " : "    ");
    }
    sb_puts(o, "^\n");
}

void diag_error(diag *d, int line, int col, const char *fmt, ...)
{
    d->errors++;
    if (d->errors > DIAG_MAX_ERRORS) {
        return;
    }
    sb_printf(&d->out, "%s:%d:%d: error: ", d->file ? d->file : "<input>", line, col);
    char msg[DIAG_MAX_MESSAGE + 1];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* a message quotes names and text from the source: escaped and cut like the echo */
    echo_bytes(&d->out, msg, 0, strlen(msg));
    sb_puts(&d->out, n > DIAG_MAX_MESSAGE ? "...\n" : "\n");
    show_line(d, line, col);
}

char *diag_take(diag *d)
{
    if (d->errors == 0)
        return NULL;
    if (d->errors > DIAG_MAX_ERRORS)
        sb_printf(&d->out, "%s: %d more errors not shown\n", d->file ? d->file : "<input>",
                  d->errors - DIAG_MAX_ERRORS);
    return sb_take(&d->out);
}

void diag_free(diag *d) { sb_free(&d->out); }
