/* fake_module.c: a CUDA module "from another build of cfx" for test_cuda_module.sh: it has
 * the entry point, but its table names a module interface this cfx does not speak, so the
 * loader must refuse it before touching any of it. */
#include "host/runtime/exec.h"

const dev_module *cfx_cuda_module(void);

const dev_module *cfx_cuda_module(void)
{
    static const dev_module table = {DEV_MODULE_ABI + 1, CFX_VERSION_MAJOR, CFX_VERSION_MINOR,
                                     sizeof(exec_ops), 13000, NULL, NULL, NULL};
    return &table;
}
