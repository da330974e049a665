/* cost.h: the cost sheet of a program (cost.c; `cfx dump --cost`, cfx_dump_cost). */
#ifndef CFX_COST_H
#define CFX_COST_H

#include <stddef.h>

#include "host/cfx.h"
#include "program.h"
#include "host/util/strbuf.h"

/* cfx_floors' defaults (an H100's, measured; cost.c says where). */
extern const cfx_floors cost_default_floors;

/* Appends p's cost sheet for a grid of `blocks` blocks (< 1: 264) with the floors fl (NULL: the
 * defaults) to out. Returns 0, or -1 with the reason in err. */
int cost_sheet(const cfx_prog *p, int blocks, const cfx_floors *fl, strbuf *out, char *err, size_t errlen);

#endif
