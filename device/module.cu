/* module.cu: the one entry point of libcfx_cuda.so, the module that holds the CUDA executors.
 * device/loader.c opens the module, calls this and checks the table before using any of it
 * (exec.h says what the fields mean); nothing else of the module is visible outside it. */
#include <cuda_runtime.h>

#include "host/cfx.h"
#include "host/runtime/module.h"
#include "host/runtime/exec.h"

extern "C" __attribute__((visibility("default"))) const dev_module *cfx_cuda_module(void)
{
    static const dev_module table = {
        DEV_MODULE_ABI,    CFX_VERSION_MAJOR, CFX_VERSION_MINOR, sizeof(exec_ops),
        CUDART_VERSION,    &dev_host_ops,     &dev_graph_ops,    &dev_compiled_ops,
        comp_module_nvrtc_available, comp_module_build,
        comp_module_op_check, comp_module_op_launch, comp_module_op_release,
    };
    return &table;
}
