/* value.h: values as the command line reads and prints them.
 *
 * Parsing: a literal (`5`, `-1.5`, `true`, `[[1,2],[3,4]]`) is checked against the type of
 * the input it is for and written into that input's buffer. Formatting: reals in the
 * shortest form that reads back to the same value, bools as true/false, tensors as nested
 * brackets.
 */
#ifndef CFX_VALUE_H
#define CFX_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "host/cfx.h"
#include "host/util/strbuf.h"

/* Parses `text` as a value of type t into buf, which holds cfx_type_count(t) elements.
 * Literals: integers (decimal or 0x hex, optional sign), reals (`1.5`, `.5`, `1e-6`, `nan`,
 * `inf`, `-inf`), `true`/`false`, and nested brackets whose shape must be t's shape.
 * An integer type takes only integers within its range; a bool takes true, false, 1 or 0;
 * a real type takes integers and reals within its range. Returns 0, or -1 with a reason. */
int value_parse(const char *text, const cfx_type *t, void *buf, char *err, size_t errlen);

/* Fills buf with pseudo-random values: reals uniform in [0, 1), integers uniform in
 * [0, 100), bools 0 or 1. The generator is splitmix64 (Steele, Lea and Flood, 2014) on
 * *state, so a seed gives the same values on every machine. */
void value_random(const cfx_type *t, uint64_t *state, void *buf);
uint64_t value_splitmix64(uint64_t *state);

/* The shortest text that reads back (strtof for f32, strtod for f64) to v: the fewest
 * significant digits, at most 9 for f32 and 17 for f64, laid out as Python's repr lays out
 * a float: plain digits for exponents -4 <= e < 16 (`0.1`, `100`, `123456.5`), otherwise
 * `1e-06`, `1.5e+20`; with no trailing `.0` (`1`, not `1.0`). `nan`, `inf`, `-inf`. */
void value_format_real(double v, int is_f32, char *buf, size_t len);

/* Appends the value of type t at data: a scalar plainly, a tensor as `[1, 2.5, 3]` or
 * `[[1, 2], [3, 4]]`. */
void value_format(strbuf *out, const cfx_type *t, const void *data);

/* Writes one element of dtype dt to out (room for 8 bytes, the rest zeroed): iv for the
 * integers and bool (nonzero is true), rv for the reals. */
void value_scalar(cfx_dtype dt, int64_t iv, double rv, void *out);

#endif
