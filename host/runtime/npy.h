/* npy.h: reading and writing NumPy .npy files (format versions 1.0 and 2.0).
 *
 * Only what maps to a cfx dtype: little-endian `<f4 <f8 <i4 <i8` and `|b1`, in C order.
 * A file is always read against the type of the input it is for: its dtype and shape must
 * be exactly that type's (a scalar is shape `()`). Every error is one line saying what is
 * wrong; the file functions begin it with the path. Nothing is read past the bytes given.
 */
#ifndef CFX_NPY_H
#define CFX_NPY_H

#include <stddef.h>

#include "host/cfx.h"
#include "kernels/cfxlimits.h"


/* Checks the .npy image bytes[0, len) against `want` and copies its data into out
 * (cfx_type_count(want) elements). Returns 0, or -1 with the reason in err. */
int npy_decode(const void *bytes, size_t len, const cfx_type *want, void *out, char *err,
               size_t errlen);

/* The type (dtype and shape) of the .npy image bytes[0, len), from its header alone. Returns 0,
 * or -1 with the reason in err. */
int npy_peek(const void *bytes, size_t len, cfx_type *t, char *err, size_t errlen);

/* npy_decode of the file at path; messages are `PATH: REASON`. */
int npy_read_file(const char *path, const cfx_type *want, void *out, char *err, size_t errlen);

/* Writes the version 1.0 header for type t into buf (the magic, the lengths and the dict,
 * padded with spaces to a multiple of 64 bytes as numpy does); returns its length, or -1
 * if buf is too small (256 bytes always suffice). */
int npy_header(const cfx_type *t, char *buf, size_t len);

/* Writes t's data as a .npy file; 0, or -1 with `PATH: REASON` in err. */
int npy_write_file(const char *path, const cfx_type *t, const void *data, char *err,
                   size_t errlen);

#endif
