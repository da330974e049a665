/* source_op.h: application ops registered by their source (cfx_register_source).
 *
 * An op given by its source is a function in the host-and-device subset of C that cfx's own op
 * bodies are written in (kernels/: CFX_HD functions, <stdint.h> types, <math.h> functions, and
 * kernels.h's own functions). Its parameters are pointers to its arguments' elements (const)
 * and then to its results', in the signature's order, with the C type of each dtype (f32 float,
 * f64 double, i32 int32_t, i64 int64_t, bool uint8_t):
 *
 *   KERNEL_ELEMENTS  CFX_HD void NAME(int64_t lo, int64_t hi, const float *x, ..., float *y, ...)
 *                    writes elements [lo, hi) of every result (they all have the same number);
 *                    may read any element of its arguments
 *   KERNEL_WHOLE     CFX_HD void NAME(const float *x, ..., float *y, ...)
 *                    computes every result in one call
 *
 * The same text runs everywhere, so a graph that calls it is tested on any machine:
 * - the cpu executor: registering compiles it with the system C compiler into a shared object
 *   (CFX_CC names the compiler, else the one the build found, else cc) and loads it; the op's
 *   CPU function (sop_cpu) calls it over the whole range;
 * - the generated C (host/gen/cgen.c's twin) and the compiled persistent kernel: the generator
 *   writes the source into the generated file (sop_write_unit) and calls it where the graph
 *   does, inline, NVRTC compiling it with the graph;
 * - the other CUDA paths (cuda-host, cuda-graph, the interpreter's launches): its CUDA
 *   function (sop_cuda) launches a small kernel around it that the CUDA module builds with
 *   NVRTC at first use (device/compiled.cu's op functions).
 *
 * Registration fails, with the compiler's log and the op's name, when the source does not
 * compile, does not define NAME with that signature, or (where the CUDA module and NVRTC are
 * present) does not compile as CUDA C++ either. Inside the generated code the function is
 * renamed (sop_mangle: cfx_op_NAME_HASH), so it clashes with nothing the generator writes.
 *
 * An op is shared: the context that registered it and every module compiled with it hold a
 * reference (sop_ref, sop_unref); the shared object is unloaded with the last.
 */
#ifndef CFX_SOURCE_OP_H
#define CFX_SOURCE_OP_H

#include <stddef.h>

#include "host/cfx.h"
#include "host/util/strbuf.h"

typedef struct sop sop;

/* Compiles and loads `source` as op `name` of that signature and form (KERNEL_ELEMENTS or
 * KERNEL_WHOLE). Returns the op with one reference, or NULL with the reason in err (the
 * compiler's log, naming the op). */
sop *sop_new(const char *name, const cfx_type *params, int nparams, const cfx_type *results, int nresults,
             int form, const char *source, char *err, size_t errlen);
sop *sop_ref(sop *op);  /* NULL stays NULL; returns op */
void sop_unref(sop *op); /* NULL is fine */
int sop_form(const sop *op);
const char *sop_source(const sop *op);

/* The op's CPU and CUDA functions (cfx_cpu_kernel, cfx_cuda_kernel), with the op as `user`. */
int sop_cpu(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results);
int sop_cuda(void *user, void *stream, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results);

/* The identifier the op's function has in generated code: cfx_op_NAME_HASH, the hash of the
 * source, so two ops of one name and different sources never meet in one file. */
void sop_mangle(const char *name, const char *source, char *buf, size_t len);
/* Appends the source as generated code includes it: once per file (an include guard), its
 * function renamed to sop_mangle's, its lines numbered as the op's own ("#line 1 \"NAME\""),
 * then "#line 1 \"after\"" so later messages do not blame the op. */
void sop_write_unit(strbuf *out, const char *name, const char *source, const char *after);
/* The C type of a cfx_dtype's elements. */
const char *sop_ctype(int dtype);

#endif
