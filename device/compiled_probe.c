/* compiled_probe.c: compiled.h's checks as libcfx offers them. NVRTC is reached only from the
 * CUDA module (device/compiled.cu), so these load the module, without asking for a device,
 * and call its table. In a build without CUDA, none.c answers instead. */
#include "host/runtime/module.h"
#include "host/runtime/exec.h"

int comp_nvrtc_available(char *why, size_t len)
{
    const dev_module *m = dev_module_get(why, len);
    return m ? m->nvrtc_available(why, len) : 0;
}

int comp_build(const cfx_prog *prog, int arch, int flags, size_t *image_bytes, double *ms,
               char *err, size_t errlen)
{
    const dev_module *m = dev_module_get(err, errlen);
    return m ? m->kernel_build(prog, arch, flags, image_bytes, ms, err, errlen) : -1;
}

int comp_op_check(const char *text, char *why, size_t len)
{
    const dev_module *m = dev_module_get(why, len);
    if (!m || !m->nvrtc_available(why, len))
        return 0;
    return m->op_check(text, why, len);
}

int comp_op_launch(void **handle, const char *text, void *stream, void *const *p, int np, int64_t n, char *why,
                   size_t len)
{
    const dev_module *m = dev_module_get(why, len);
    return m ? m->op_launch(handle, text, stream, p, np, n, why, len) : -1;
}

void comp_op_release(void *handle)
{
    const dev_module *m = dev_module_get(NULL, 0);
    if (m && handle)
        m->op_release(handle);
}
