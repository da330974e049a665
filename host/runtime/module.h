/* compiled.h: the compiled mode of the cuda-persistent executor (device/compiled.cu), as seen
 * from plain C: the checks that need NVRTC but no device, for the tests and the benchmarks.
 * They run in the CUDA module, which NVRTC is reached from; libcfx's comp_* load the module
 * and ask it (device/compiled_probe.c; none.c without CUDA). The executor itself is
 * dev_compiled_ops (host/runtime/exec.h). */
#ifndef CFX_COMPILED_H
#define CFX_COMPILED_H

#include <stddef.h>

#include "host/program/program.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if NVRTC can be loaded here; otherwise 0 and why ("NVRTC is not available: ..."). The
 * library is looked up as libnvrtc.so.MAJOR of the CUDA the build used, then libnvrtc.so; the
 * environment variable CFX_NVRTC names another file to load instead ("none": as if absent). */
int comp_nvrtc_available(char *why, size_t len);

/* Generates prog's kernel and compiles it with NVRTC for compute capability `arch` (90 for
 * sm_90), with no device and no cache; flags: COMP_BUILD_DISPATCH for the pc-dispatch loop
 * rather than the structured form, COMP_BUILD_DEVICE_LAUNCH for the kernel that tail-launches
 * at a record that ends its launch (CK_DEVICE_LAUNCH 1; without it, the one that only pauses),
 * COMP_BUILD_TRACE for the build a traced or profiled run takes, COMP_BUILD_PTX for PTX of
 * compute_`arch` rather than machine code (what a device newer than NVRTC gets: the source and
 * NVVM's code generation without ptxas, a third of the time).
 * Returns 0 with the size of the machine code and the compile time, or -1 with the reason (the
 * generator's refusal or NVRTC's log). */
#define COMP_BUILD_DISPATCH 1
#define COMP_BUILD_DEVICE_LAUNCH 2
#define COMP_BUILD_TRACE 4 /* the build with the timeline's stamps (CK_TRACE) */
#define COMP_BUILD_PTX 8
int comp_build(const cfx_prog *prog, int arch, int flags, size_t *image_bytes, double *ms,
               char *err, size_t errlen);

/* Ops registered by their source (host/front/source_op.h), on the device. comp_op_check compiles
 * `text` (the kernel around an op) with NVRTC, with no device: 1 when it compiles, -1 with
 * NVRTC's log in why when it does not, 0 when it could not be checked (no CUDA module, no
 * NVRTC). comp_op_launch launches that kernel on `stream` (a cudaStream_t) over the n elements
 * (or once, for a whole op) with the operands' device pointers p[0 .. np), building it at the
 * first call into *handle (thread-safe; also inside a stream capture); 0, or -1 with why.
 * comp_op_release frees a handle. */
int comp_op_check(const char *text, char *why, size_t len);
int comp_op_launch(void **handle, const char *text, void *stream, void *const *p, int np, int64_t n, char *why,
                   size_t len);
void comp_op_release(void *handle);

/* The same, inside the module (its table hands them out). */
int comp_module_nvrtc_available(char *why, size_t len);
int comp_module_build(const cfx_prog *prog, int arch, int flags, size_t *image_bytes,
                      double *ms, char *err, size_t errlen);
int comp_module_op_check(const char *text, char *why, size_t len);
int comp_module_op_launch(void **handle, const char *text, void *stream, void *const *p, int np, int64_t n,
                          char *why, size_t len);
void comp_module_op_release(void *handle);

#ifdef __cplusplus
}
#endif
#endif
