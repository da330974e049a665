/* context.h: the kernels an application registered, as the checker and the API see them.
 *
 * cfx_context (opaque in cfx.h) is a list of registered kernels. The checker looks a call's
 * name up with ctx_find() to type it; the API copies the function pointers into each
 * module it compiles, so the context may be freed once compiling is done.
 */
#ifndef CFX_CONTEXT_H
#define CFX_CONTEXT_H

#include "host/cfx.h"
#include "kernels/cfxlimits.h"


typedef struct ctx_kernel {
    char *name;
    int nparams;
    cfx_type params[CTX_MAX_ARGS];
    int nresults;
    cfx_type results[CTX_MAX_ARGS];
    cfx_cpu_kernel cpu_fn;  /* may be NULL */
    cfx_cuda_kernel cuda_fn; /* may be NULL */
    void *user;
    struct sop *source;      /* registered by its source (source_op.h; cpu_fn and cuda_fn are
                              * its, user is it): the context holds a reference; else NULL */
} ctx_kernel;

struct cfx_context {
    ctx_kernel *kernels;
    int nkernels;
    int cap;
};

/* The kernel registered as `name`, or NULL (also when ctx is NULL). */
const ctx_kernel *ctx_find(const cfx_context *ctx, const char *name);

#endif
