/* none.c: the CUDA executors of a build without CUDA, and the NVRTC checks of compiled.h. Each
 * says so and runs nothing. */
#include "compiled.h"
#include "exec.h"

#include <stdio.h>

static int not_built(char *why, size_t len)
{
    snprintf(why, len, "cfx was built without CUDA");
    return 0;
}

#define NOT_BUILT(ops_name, backend_id) \
    const exec_ops ops_name = {backend_id, not_built, NULL, NULL, NULL, NULL, NULL};

NOT_BUILT(dev_host_ops, CFX_BACKEND_CUDA_HOST)
NOT_BUILT(dev_graph_ops, CFX_BACKEND_CUDA_GRAPH)
NOT_BUILT(dev_persistent_ops, CFX_BACKEND_CUDA_PERSISTENT)
NOT_BUILT(dev_compiled_ops, CFX_BACKEND_CUDA_PERSISTENT)

int comp_nvrtc_available(char *why, size_t len)
{
    return not_built(why, len);
}

int comp_build(const cfx_prog *prog, int arch, int force_dispatch, size_t *image_bytes, double *ms, char *err,
               size_t errlen)
{
    return not_built(err, errlen) - 1;
}
