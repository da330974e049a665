/* none.c: the loader of the CUDA executors (device/loader.c) in a build without CUDA, and the
 * NVRTC checks of compiled.h (device/compiled_probe.c): there is nothing to load, and each
 * answer says so. */
#include "host/runtime/module.h"
#include "host/runtime/exec.h"

#include <stdio.h>

static const char not_built[] = "cfx was built without CUDA";

const exec_ops *dev_ops(cfx_backend b, char *why, size_t len)
{
    (void)b;
    snprintf(why, len, "%s", not_built);
    return NULL;
}

int dev_module_built(void) { return 0; }

int dev_module_describe(char *buf, size_t len)
{
    snprintf(buf, len, "not built (%s)", not_built);
    return 0;
}

int comp_nvrtc_available(char *why, size_t len)
{
    snprintf(why, len, "%s", not_built);
    return 0;
}

int comp_build(const cfx_prog *prog, int arch, int flags, size_t *image_bytes, double *ms,
               char *err, size_t errlen)
{
    (void)prog;
    (void)arch;
    (void)flags;
    (void)image_bytes;
    (void)ms;
    snprintf(err, errlen, "%s", not_built);
    return -1;
}

int comp_op_check(const char *text, char *why, size_t len)
{
    (void)text;
    snprintf(why, len, "%s", not_built);
    return 0;
}

int comp_op_launch(void **handle, const char *text, void *stream, void *const *p, int np, int64_t n, char *why,
                   size_t len)
{
    (void)handle;
    (void)text;
    (void)stream;
    (void)p;
    (void)np;
    (void)n;
    snprintf(why, len, "%s", not_built);
    return -1;
}

void comp_op_release(void *handle)
{
    (void)handle;
}
