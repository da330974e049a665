/* diag.h: compile diagnostics, collected for the caller and never printed by the library.
 *
 * Each error is `FILE:LINE:COL: error: MESSAGE`, then the source line, then a caret under
 * the column. Lines and columns count from 1; a column counts bytes. */
#ifndef CFX_DIAG_H
#define CFX_DIAG_H

#include <stddef.h>

#include "strbuf.h"

#define DIAG_MAX_ERRORS 50 /* after this many, one last line says how many were left out */

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
