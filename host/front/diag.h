/* diag.h: compile diagnostics, collected for the caller and never printed by the library.
 *
 * Each error is `FILE:LINE:COL: error: MESSAGE`, then the source line, then a caret under
 * the column. Lines and columns count from 1; a column counts bytes. A line ends at LF, CR LF
 * or a lone CR (diag_break), for the lexer and the echo alike.
 *
 * Hostile text stays harmless on a terminal: a message longer than DIAG_MAX_MESSAGE is cut and
 * ends in "..."; a source line longer than DIAG_ECHO_WINDOW bytes is echoed as a window around
 * the caret, with "..." where it was cut; bytes that do not print (control bytes, bytes above
 * 0x7F) are echoed as \xNN, and the caret line is indented to match. */
#ifndef CFX_DIAG_H
#define CFX_DIAG_H

#include <stddef.h>

#include "host/util/strbuf.h"
#include "kernels/cfxlimits.h"

#define DIAG_ECHO_WINDOW 160 /* bytes of a long source line echoed around the caret */

/* Bytes of the line break at src[pos]: 2 for CR LF, 1 for LF or a lone CR, 0 for none. */
static inline size_t diag_break(const char *src, size_t len, size_t pos)
{
    if (pos >= len)
        return 0;
    if (src[pos] == '\n')
        return 1;
    if (src[pos] == '\r')
        return pos + 1 < len && src[pos + 1] == '\n' ? 2 : 1;
    return 0;
}

typedef struct diag {
    const char *file;
    const char *src;
    size_t len;
    int errors;  /* errors reported, those past the limit included */
    strbuf out;  /* the formatted messages */
} diag;

void diag_init(diag *d, const char *file, const char *src, size_t len);
void diag_error(diag *d, int line, int col, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* The messages so far, handed to the caller (free()); NULL if there were none. */
char *diag_take(diag *d);
void diag_free(diag *d);

#endif
