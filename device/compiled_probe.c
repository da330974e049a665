/* compiled_probe.c: compiled.h's checks as libcfx offers them. NVRTC is reached only from the
 * CUDA module (device/compiled.cu), so these load the module, without asking for a device,
 * and call its table. In a build without CUDA, none.c answers instead. */
#include "compiled.h"
#include "exec.h"

int comp_nvrtc_available(char *why, size_t len)
{
    const dev_module *m = dev_module_get(why, len);
    return m ? m->nvrtc_available(why, len) : 0;
}

int comp_build(const cfx_prog *prog, int arch, int force_dispatch, size_t *image_bytes, double *ms,
               char *err, size_t errlen)
{
    const dev_module *m = dev_module_get(err, errlen);
    return m ? m->kernel_build(prog, arch, force_dispatch, image_bytes, ms, err, errlen) : -1;
}
