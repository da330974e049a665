/* diag.c: formats compile errors with their source line and a caret. */
#include "diag.h"

#include <stdarg.h>
#include <stdlib.h>

void diag_init(diag *d, const char *file, const char *src, size_t len)
{
    d->file = file;
    d->src = src;
    d->len = len;
    d->errors = 0;
    d->out = (strbuf){0};
}

/* Appends source line `line` and a caret under `col`. Tabs in the line are kept in the
 * caret's indentation so the caret lines up in a terminal. */
static void show_line(diag *d, int line, int col)
{
    if (!d->src || line < 1)
        return;
    size_t i = 0;
    for (int l = 1; l < line && i < d->len; i++)
        if (d->src[i] == '\n')
            l++;
    if (i >= d->len && line > 1 && (i == 0 || d->src[i - 1] != '\n'))
        return;
    size_t end = i;
    while (end < d->len && d->src[end] != '\n' && d->src[end] != '\r')
        end++;
    strbuf *o = &d->out;
    /* bytes that do not print (a binary file) are shown as '?' so the terminal stays sane */
    for (size_t k = i; k < end; k++) {
        unsigned char c = (unsigned char)d->src[k];
        char ch = (c == '\t' || (c >= 32 && c < 127) || c >= 128) ? (char)c : '?';
        sb_append(o, &ch, 1);
    }
    sb_puts(o, "\n");
    for (size_t k = i; k < end && (int)(k - i) < col - 1; k++)
        sb_append(o, d->src[k] == '\t' ? "\t" : " ", 1);
    sb_puts(o, "^\n");
}

void diag_error(diag *d, int line, int col, const char *fmt, ...)
{
    d->errors++;
    if (d->errors > DIAG_MAX_ERRORS) {
        return;
    }
    sb_printf(&d->out, "%s:%d:%d: error: ", d->file ? d->file : "<input>", line, col);
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&d->out, fmt, ap);
    va_end(ap);
    sb_puts(&d->out, "\n");
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
