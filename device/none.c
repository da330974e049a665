/* none.c: the loader of the CUDA executors (device/loader.c) in a build without CUDA: there
 * is nothing to load, and each answer says so. */
#include "exec.h"

#include <stdio.h>

static const char not_built[] = "cfx was built without CUDA";

const exec_ops *dev_ops(cfx_backend b, char *why, size_t len)
{
    (void)b;
    snprintf(why, len, "%s", not_built);
    return NULL;
}

int dev_module_describe(char *buf, size_t len)
{
    snprintf(buf, len, "not built (%s)", not_built);
    return 0;
}
