/* loader.c: how libcfx reaches the CUDA executors, which live in a module of their own.
 *
 * libcfx_cuda.so holds the .cu files of device/ and kernels/, linked against the CUDA
 * runtime, cuBLAS (and NVRTC once it is used) and the C++ runtime that nvcc's objects need;
 * libcfx links none of them. Mapping cuBLAS costs a process about 0.1 s and 200 MiB, so only
 * a process that creates a CUDA executor pays it: `cfx check`, `dump`, a cpu run, and an
 * application that never asks for a GPU load nothing of CUDA.
 *
 * Why a module rather than opening the CUDA libraries lazily from libcfx: the executors make
 * many runtime and cuBLAS calls, and nvcc turns each kernel launch into runtime calls and
 * registers the kernels with the runtime when the object is loaded. Reaching all that
 * through function pointers would rewrite every line of device/ and still need the runtime
 * at load time. A module, loaded with dlopen as ggml loads its backends, keeps device/ plain
 * CUDA C, and this file is the one place that finds it, checks it and says what went wrong.
 *
 * The one thing asked of CUDA before the module is loaded is whether a device is present:
 * the runtime alone answers that for about 2 MiB, so `--backend auto` on a machine without a
 * GPU never maps cuBLAS. When the runtime cannot be opened by name, the module is loaded all
 * the same: its RUNPATH may know where CUDA lies, and if not, its failure names the library.
 *
 * Where the module is looked for: the path in $CFX_CUDA_MODULE when that is set (and nowhere
 * else, so a missing module can be staged); else beside the object this code is part of
 * (libcfx.so, or a program that linked libcfx.a, as the build tree's cfx); else in the
 * library directory as installed relative to it (bin/../lib for the installed cfx); else
 * libcfx_cuda.so by name (the RUNPATH of the program, LD_LIBRARY_PATH, the system's library
 * path). The places are found from where the code lies rather than left to RUNPATH, which a
 * tool that wraps dlopen (AddressSanitizer, say) makes the dynamic loader ignore. The module
 * is never unloaded: executors may outlive any caller, and the CUDA runtime tears itself
 * down at exit.
 */
#define _GNU_SOURCE /* dladdr1, RTLD_DL_LINKMAP */
#include "host/runtime/exec.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CFX_CUDART_SONAME
#error "CFX_CUDART_SONAME (the CUDA runtime's soname, e.g. libcudart.so.13) comes from CMake"
#endif
#ifndef CFX_BIN_TO_LIB
#error "CFX_BIN_TO_LIB (the installed library directory seen from the command's, e.g. ../lib) comes from CMake"
#endif
#define MODULE_NAME "libcfx_cuda.so"
static const char module_name[] = MODULE_NAME; /* find_module's answer when no place holds it */

/* ---- is a device present? (the runtime alone) ------------------------------------------- */

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probe_devices;     /* > 0 devices; 0 none (probe_why says why); -1 not asked */
static char probe_why[256];

typedef int (*count_fn)(int *);
typedef int (*last_error_fn)(void);
typedef const char *(*error_text_fn)(int);

static void probe(void)
{
    probe_devices = -1;
    /* Left open: the module, if it is loaded, uses this same runtime. */
    void *rt = dlopen(CFX_CUDART_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!rt)
        return;
    count_fn count = (count_fn)dlsym(rt, "cudaGetDeviceCount");
    last_error_fn last_error = (last_error_fn)dlsym(rt, "cudaGetLastError");
    error_text_fn name = (error_text_fn)dlsym(rt, "cudaGetErrorName");
    error_text_fn text = (error_text_fn)dlsym(rt, "cudaGetErrorString");
    if (!count || !last_error || !name || !text)
        return;
    int n = 0;
    int e = count(&n);
    if (e != 0) {
        /* the failed query leaves a sticky error behind; the application should not see ours */
        (void)last_error();
        /* the runtime calls a missing driver "insufficient": say that there is none */
        void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
        if (!driver)
            snprintf(probe_why, sizeof probe_why,
                     "no CUDA driver is installed (libcuda.so.1 cannot be loaded), so no CUDA device can be used");
        else
            snprintf(probe_why, sizeof probe_why, "no CUDA device is present (%s: %s)", name(e),
                     text(e));
        if (driver)
            dlclose(driver);
        n = 0;
    } else if (n == 0) {
        snprintf(probe_why, sizeof probe_why,
                 "no CUDA device is present (the driver reports 0 devices)");
    }
    probe_devices = n;
}

/* ---- the module ------------------------------------------------------------------------- */

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const dev_module *module;
static char module_path[400]; /* where it was loaded from */
static char load_why[640];    /* why it did not load */

/* The directory of the object this code is part of, in dir. dladdr names a program as it was
 * invoked (a bare name when found on PATH), so for the program /proc/self/exe says where. */
static int own_dir(char *dir, size_t len)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (!dladdr1((void *)own_dir, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return -1;
    char *full = realpath(map->l_name[0] ? map->l_name : "/proc/self/exe", NULL);
    char *slash = full ? strrchr(full, '/') : NULL;
    if (slash)
        *slash = '\0';
    int n = slash ? snprintf(dir, len, "%s", full) : -1;
    free(full);
    return n >= 0 && (size_t)n < len ? 0 : -1;
}

/* The first of the places in the top comment that holds a file (but for the last, a name). */
static const char *find_module(char *path, size_t len)
{
    const char *env = getenv("CFX_CUDA_MODULE");
    if (env && env[0])
        return env;
    char dir[320];
    if (own_dir(dir, sizeof dir) == 0) {
        snprintf(path, len, "%s/%s", dir, MODULE_NAME);
        if (access(path, F_OK) == 0)
            return path;
        snprintf(path, len, "%s/%s/%s", dir, CFX_BIN_TO_LIB, MODULE_NAME);
        if (access(path, F_OK) == 0)
            return path;
    }
    return module_name;
}

static void load(void)
{
    char path[400];
    const char *name = find_module(path, sizeof path);
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        if (!e)
            e = "unknown error";
        /* dlerror names the file that failed: the module, or a library it needs */
        int missing = name == module_name ? strncmp(e, name, strlen(name)) == 0 &&
                                                strstr(e, "cannot open shared object file")
                                          : access(name, F_OK) != 0;
        if (missing)
            snprintf(load_why, sizeof load_why, "%s (%s is installed beside libcfx; "
                     "CFX_CUDA_MODULE may name another path)", e, MODULE_NAME);
        else
            snprintf(load_why, sizeof load_why, "%s (%s, or a library it needs, is broken or "
                     "of another CUDA version)", e, MODULE_NAME);
        return;
    }
    dev_module_fn entry = (dev_module_fn)dlsym(h, DEV_MODULE_ENTRY);
    Dl_info info;
    char *full = NULL;
    if (entry && dladdr((void *)entry, &info) && info.dli_fname)
        full = realpath(info.dli_fname, NULL);
    snprintf(module_path, sizeof module_path, "%s", full ? full : name);
    free(full);
    name = module_path;
    if (!entry) {
        snprintf(load_why, sizeof load_why, "%s is not a cfx CUDA module (it has no %s)", name,
                 DEV_MODULE_ENTRY);
        return;
    }
    const dev_module *m = entry();
    if (!m || m->abi != DEV_MODULE_ABI || m->ops_size != sizeof(exec_ops) ||
        m->version_major != CFX_VERSION_MAJOR || m->version_minor != CFX_VERSION_MINOR) {
        snprintf(load_why, sizeof load_why, "%s belongs to another build of cfx (%d.%d, module "
                 "interface %d; this is %d.%d, interface %d)",
                 name, m ? m->version_major : 0, m ? m->version_minor : 0, m ? m->abi : 0,
                 CFX_VERSION_MAJOR, CFX_VERSION_MINOR, DEV_MODULE_ABI);
        return;
    }
    module = m;
}

const exec_ops *dev_ops(cfx_backend b, char *why, size_t len)
{
    pthread_once(&probe_once, probe);
    if (probe_devices == 0) {
        snprintf(why, len, "%s", probe_why);
        return NULL;
    }
    pthread_once(&load_once, load);
    if (!module) {
        snprintf(why, len, "the CUDA executors cannot be loaded: %s", load_why);
        return NULL;
    }
    const exec_ops *ops = b == CFX_BACKEND_CUDA_HOST    ? module->host
                          : b == CFX_BACKEND_CUDA_GRAPH ? module->graph
                          : b == CFX_BACKEND_CUDA_PERSISTENT ? module->persistent
                                                             : NULL;
    if (!ops)
        snprintf(why, len, "%s is not a CUDA backend", cfx_backend_name(b));
    return ops;
}

int dev_module_built(void) { return 1; }

int dev_module_describe(char *buf, size_t len)
{
    pthread_once(&load_once, load);
    if (!module) {
        snprintf(buf, len, "built, but they cannot be loaded: %s", load_why);
        return -1;
    }
    snprintf(buf, len, "built with CUDA %d.%d, loaded from %s", module->cudart_version / 1000,
             module->cudart_version % 1000 / 10, module_path);
    return 1;
}

const dev_module *dev_module_get(char *why, size_t len)
{
    pthread_once(&load_once, load);
    if (!module)
        snprintf(why, len, "the CUDA executors cannot be loaded: %s", load_why);
    return module;
}
