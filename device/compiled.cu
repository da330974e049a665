/* compiled.cu: the cuda-persistent executor with its two modes. The compiled mode (the
 * default) generates the program as CUDA C (host/gen/cgen.c), compiles it with NVRTC, keeps the
 * machine code in an on-disk cache keyed by the source, the NVRTC version and the device, and
 * launches it as one persistent kernel (device/compiled_kernel.cuh). The interpreter mode is
 * dev_persistent_ops, created when it is first needed: when asked for, when NVRTC cannot be
 * loaded, when the generator refuses the program or the compile fails, and for a run whose
 * printed values overflow the compiled kernel's buffer (the whole run is repeated, see
 * compiled_kernel.cuh).
 *
 * Records that end the kernel's launch (a CALL of a binary application kernel, a product for
 * cuBLAS) are served as the interpreter serves them, by the session both modes share
 * (session.cu; this file supplies the kernel's launch, graph, state and timeline): where the device runs
 * device graph launch, the kernel is built to tail-launch (CK_DEVICE_LAUNCH 1) and is the node
 * of a device-launchable graph, and each such record's work is captured into a graph of its
 * own (a product's at the build, a CALL's at the first run), which the kernel tail-launches
 * before itself; otherwise, or when a site cannot be captured, the kernel pauses there and the
 * host runs the work on the stream and launches again (the pause and relaunch path). A kernel
 * registered by its source is no launch: the generator writes it into the kernel. The module
 * also builds and launches the small kernel around such an op that the other CUDA paths
 * launch (comp_module_op_*).
 *
 * The kernel is built at the first run that wants it, or when cfx_set_persistent_mode asks for
 * the compiled mode, which is how a caller learns at once which mode will run and why.
 *
 * NVRTC is loaded with dlopen, so that a machine with the CUDA driver and runtime but no NVRTC
 * still runs everything with the interpreter. The headers the generated code includes
 * (kernels/, compiled_kernel.cuh) are carried by the module as text (compiled_headers.cu,
 * written by CMake), with stand-ins for <stdint.h> and <math.h>, which NVRTC does not have.
 *
 * Environment: CFX_NVRTC names the NVRTC library to load ("none": as if there were none);
 * CFX_KERNEL_CACHE is the cache directory, or "off" (default $XDG_CACHE_HOME/cfx/kernels, else
 * ~/.cache/cfx/kernels). A cache that cannot be read or written only costs a compile.
 * CFX_KERNEL_DUMP=DIR keeps each generated kernel in DIR and CFX_KERNEL_OVERRIDE=DIR compiles
 * DIR's file of the same name instead, named by the cache key (host/gen/kernel_files.h).
 */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blas.h"
#include "host/gen/cgen.h"
#include "host/runtime/module.h"
#include "compiled_kernel.cuh"
#include "host/front/context.h"
#include "dev.h"
#include "host/runtime/exec.h"
#include "host/gen/kernel_files.h"
#include "host/runtime/nvtx.h"
#include "scheduler.h"
#include "session.h"
extern "C" { /* strbuf.h is a C header without C++ guards */
#include "host/util/strbuf.h"
}

static_assert(sizeof(ck_state) == sizeof(dev_state) &&
                  offsetof(ck_state, iterations) == offsetof(dev_state, iterations),
              "ck_state is dev_state as the kernel sees it");
static_assert(sizeof(ck_control) == sizeof(dev_control) &&
                  offsetof(ck_control, max_iters) == offsetof(dev_control, max_iters),
              "ck_control is dev_control as the kernel sees it");
static_assert(CK_STOP_CANCELLED == CFX_STOP_CANCELLED, "the kernel raises cancelled by number");
static_assert(sizeof(ck_progress) == sizeof(exec_progress) && offsetof(ck_progress, barrier) ==
                  offsetof(exec_progress, barrier) && offsetof(ck_progress, iterations) ==
                  offsetof(exec_progress, iterations),
              "the kernel's progress words are exec_progress (exec_format_hang reads them)");
static_assert(CK_BATCH_MAX == SCHED_BATCH_MAX, "the kernel combines the plan's batches");
static_assert(CK_STATUS_PAUSE == SCHED_STATUS_PAUSE && CK_ERROR == CFX_ERROR,
              "the kernel pauses and fails with the interpreter's statuses");

#define COMP_PRINT_BYTES (1u << 20) /* the print buffer, grown for one big printed value */
#define COMP_TRACE_PER_BLOCK 8192u /* timeline events kept per block and run (CK_TRACE builds) */
#define COMP_ENTRY "cfx_compiled"

/* compiled_headers.cu, written by CMake */
extern "C" const char *const comp_header_names[];
extern "C" const char *const comp_header_texts[];
extern "C" const int comp_header_count;

/* NVRTC has no C library headers; the generated code and kernels/ need these few names. */
static const char shim_stdint[] =
    "#pragma once\n"
    "typedef signed char int8_t; typedef unsigned char uint8_t;\n"
    "typedef short int16_t; typedef unsigned short uint16_t;\n"
    "typedef int int32_t; typedef unsigned int uint32_t;\n"
    "typedef long long int64_t; typedef unsigned long long uint64_t;\n"
    "typedef unsigned long long uintptr_t;\n"
    "#define INT32_MAX 2147483647\n#define INT32_MIN (-INT32_MAX - 1)\n"
    "#define INT64_MAX 9223372036854775807LL\n#define INT64_MIN (-INT64_MAX - 1)\n";
static const char shim_empty[] = "#pragma once\n";

/* ==== NVRTC, loaded at first use ========================================================== */

typedef struct nvrtc_api {
    void *lib;
    char why[320];
    nvrtcResult (*version)(int *, int *);
    const char *(*error_string)(nvrtcResult);
    nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                          const char *const *);
    nvrtcResult (*compile)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*log_size)(nvrtcProgram, size_t *);
    nvrtcResult (*log)(nvrtcProgram, char *);
    nvrtcResult (*cubin_size)(nvrtcProgram, size_t *);
    nvrtcResult (*cubin)(nvrtcProgram, char *);
    nvrtcResult (*ptx_size)(nvrtcProgram, size_t *);
    nvrtcResult (*ptx)(nvrtcProgram, char *);
    nvrtcResult (*destroy)(nvrtcProgram *);
    nvrtcResult (*num_archs)(int *);
    nvrtcResult (*archs)(int *);
    int major, minor;
} nvrtc_api;

static nvrtc_api nvrtc;
static pthread_once_t nvrtc_once = PTHREAD_ONCE_INIT;

static void nvrtc_load(void)
{
    char soname[64];
    const char *env = getenv("CFX_NVRTC");
    const char *names[2] = {soname, "libnvrtc.so"};
    int n = 2;
    snprintf(soname, sizeof soname, "libnvrtc.so.%d", CUDART_VERSION / 1000);
    if (env && env[0]) {
        if (strcmp(env, "none") == 0) {
            snprintf(nvrtc.why, sizeof nvrtc.why, "NVRTC is not available (CFX_NVRTC=none)");
            return;
        }
        names[0] = env;
        n = 1;
    }
    for (int i = 0; i < n && !nvrtc.lib; i++)
        nvrtc.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!nvrtc.lib) {
        const char *e = dlerror();
        snprintf(nvrtc.why, sizeof nvrtc.why, "NVRTC is not available (%s)", e ? e : names[0]);
        return;
    }
#define SYM(field, name)                                                                          \
    do {                                                                                          \
        *(void **)&nvrtc.field = dlsym(nvrtc.lib, name);                                          \
        if (!nvrtc.field) {                                                                       \
            snprintf(nvrtc.why, sizeof nvrtc.why, "NVRTC is not available (%s has no %s)",        \
                     names[0], name);                                                             \
            dlclose(nvrtc.lib);                                                                   \
            nvrtc.lib = NULL;                                                                     \
            return;                                                                               \
        }                                                                                         \
    } while (0)
    SYM(version, "nvrtcVersion");
    SYM(error_string, "nvrtcGetErrorString");
    SYM(create, "nvrtcCreateProgram");
    SYM(compile, "nvrtcCompileProgram");
    SYM(log_size, "nvrtcGetProgramLogSize");
    SYM(log, "nvrtcGetProgramLog");
    SYM(cubin_size, "nvrtcGetCUBINSize");
    SYM(cubin, "nvrtcGetCUBIN");
    SYM(ptx_size, "nvrtcGetPTXSize");
    SYM(ptx, "nvrtcGetPTX");
    SYM(destroy, "nvrtcDestroyProgram");
    SYM(num_archs, "nvrtcGetNumSupportedArchs");
    SYM(archs, "nvrtcGetSupportedArchs");
#undef SYM
    if (nvrtc.version(&nvrtc.major, &nvrtc.minor) != NVRTC_SUCCESS) {
        snprintf(nvrtc.why, sizeof nvrtc.why, "NVRTC is not available (nvrtcVersion failed)");
        dlclose(nvrtc.lib);
        nvrtc.lib = NULL;
    }
}

extern "C" int comp_module_nvrtc_available(char *why, size_t len)
{
    pthread_once(&nvrtc_once, nvrtc_load);
    if (!nvrtc.lib && why && len)
        snprintf(why, len, "%s", nvrtc.why);
    return nvrtc.lib != NULL;
}

/* The machine code of one compile: a cubin for an architecture NVRTC knows, else PTX for the
 * newest one below the device's, which the driver compiles at load. */
typedef struct image {
    char *data;
    size_t bytes;
    int is_cubin;
    char arch[16]; /* "sm_90" or "compute_90" */
} image;

/* Picks the target for compute capability `cc` (90 for 9.0). */
static int pick_arch(int cc, image *im, char *err, size_t errlen)
{
    int n = 0, best = -1;
    int *archs = NULL;
    if (nvrtc.num_archs(&n) != NVRTC_SUCCESS || n <= 0 ||
        !(archs = (int *)malloc(sizeof(int) * (size_t)n)) || nvrtc.archs(archs) != NVRTC_SUCCESS) {
        free(archs);
        snprintf(err, errlen, "NVRTC did not list the architectures it supports");
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (archs[i] <= cc && archs[i] > best)
            best = archs[i];
    free(archs);
    if (best < 0) {
        snprintf(err, errlen, "NVRTC %d.%d supports no architecture up to sm_%d", nvrtc.major,
                 nvrtc.minor, cc);
        return -1;
    }
    im->is_cubin = best == cc;
    snprintf(im->arch, sizeof im->arch, "%s_%d", im->is_cubin ? "sm" : "compute", best);
    return 0;
}

/* Compiles `source` for im->arch into im. */
static int nvrtc_compile(const char *source, image *im, char *err, size_t errlen)
{
    enum { MAX_HEADERS = 32 };
    const char *names[MAX_HEADERS], *texts[MAX_HEADERS];
    int nh = 0;
    char archopt[48];
    const char *opts[4];
    nvrtcProgram prog = NULL;
    nvrtcResult r;
    size_t size = 0;
    char *log = NULL;
    int rc = -1;
    if (comp_header_count > MAX_HEADERS - 2) { /* CMakeLists.txt embeds more than room here */
        snprintf(err, errlen, "internal error: %d embedded headers, room for %d", comp_header_count,
                 MAX_HEADERS - 2);
        return -1;
    }
    for (int i = 0; i < comp_header_count; i++) {
        names[nh] = comp_header_names[i];
        texts[nh++] = comp_header_texts[i];
    }
    names[nh] = "stdint.h";
    texts[nh++] = shim_stdint;
    names[nh] = "math.h";
    texts[nh++] = shim_empty;
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", im->arch);
    opts[0] = archopt;
    opts[1] = "-std=c++17";
    opts[2] = "--fmad=false"; /* a * b + c rounds twice, as on the cpu executor */
    opts[3] = "-default-device";
    r = nvrtc.create(&prog, source, "cfx_compiled.cu", nh, texts, names);
    if (r != NVRTC_SUCCESS) {
        snprintf(err, errlen, "nvrtcCreateProgram: %s", nvrtc.error_string(r));
        goto done;
    }
    r = nvrtc.compile(prog, 4, opts);
    if (r != NVRTC_SUCCESS) {
        size_t n = 0;
        if (nvrtc.log_size(prog, &n) == NVRTC_SUCCESS && n > 0 && (log = (char *)malloc(n + 1)) &&
            nvrtc.log(prog, log) == NVRTC_SUCCESS)
            log[n] = '\0';
        snprintf(err, errlen, "NVRTC could not compile the generated kernel (%s): %.400s",
                 nvrtc.error_string(r), log ? log : "");
        goto done;
    }
    r = im->is_cubin ? nvrtc.cubin_size(prog, &size) : nvrtc.ptx_size(prog, &size);
    if (r != NVRTC_SUCCESS || size == 0 || !(im->data = (char *)malloc(size))) {
        snprintf(err, errlen, "NVRTC gave no machine code");
        goto done;
    }
    r = im->is_cubin ? nvrtc.cubin(prog, im->data) : nvrtc.ptx(prog, im->data);
    if (r != NVRTC_SUCCESS) {
        snprintf(err, errlen, "NVRTC gave no machine code: %s", nvrtc.error_string(r));
        goto done;
    }
    im->bytes = size;
    rc = 0;
done:
    if (rc != 0) {
        free(im->data);
        im->data = NULL;
    }
    free(log);
    if (prog)
        nvrtc.destroy(&prog);
    return rc;
}

static double ms_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* The kernel's source: the generator's, with CK_DEVICE_LAUNCH 1 first when it is to tail-launch
 * at its records that end the launch (and has some). `blocks`: the fewest blocks the kernel will
 * run with (a loop may then keep tensors in registers; the kernel checks it got them). */
static int generate(const cfx_prog *prog, int force_dispatch, int device_launch, int64_t product_min, int trace,
                    int blocks, strbuf *out, cgen_info *info, char *err, size_t errlen)
{
    strbuf body = {0};
    cgen_options o = {CGEN_TARGET_CUDA, force_dispatch, COMP_ENTRY, NULL, NULL, NULL, product_min, blocks,
                      CK_THREADS};
    if (cgen_emit(prog, &o, &body, info, err, errlen) != 0) {
        sb_free(&body);
        return -1;
    }
    if (device_launch && info->launches > 0)
        sb_puts(out, "#define CK_DEVICE_LAUNCH 1\n");
    if (trace) /* the stamps (CK_STAMP), in a build of their own: a different source, cache entry */
        sb_puts(out, "#define CK_TRACE 1\n");
    sb_puts(out, sb_str(&body));
    sb_free(&body);
    if (out->oom) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

extern "C" int comp_module_build(const cfx_prog *prog, int arch, int flags,
                                 size_t *image_bytes, double *ms, char *err, size_t errlen)
{
    strbuf src = {0};
    image im;
    cgen_info info;
    struct timespec t0;
    int rc = -1;
    memset(&im, 0, sizeof im);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (!comp_module_nvrtc_available(err, errlen))
        return -1;
    /* with no device: the grid of an H100, one block per multiprocessor */
    if (generate(prog, (flags & COMP_BUILD_DISPATCH) != 0, (flags & COMP_BUILD_DEVICE_LAUNCH) != 0,
                 SCHED_LAUNCH_PRODUCT_MIN, (flags & COMP_BUILD_TRACE) != 0, 132, &src, &info, err, errlen) != 0)
        goto done;
    if (pick_arch(arch, &im, err, errlen) != 0)
        goto done;
    if (flags & COMP_BUILD_PTX) {
        im.is_cubin = 0;
        snprintf(im.arch, sizeof im.arch, "compute_%d", arch);
    }
    if (nvrtc_compile(sb_str(&src), &im, err, errlen) != 0)
        goto done;
    if (image_bytes)
        *image_bytes = im.bytes;
    if (ms)
        *ms = ms_since(&t0);
    rc = 0;
done:
    free(im.data);
    sb_free(&src);
    return rc;
}

/* ==== ops registered by their source ======================================================== */

/* The kernel around an op (host/front/source_op.c writes it): cfx_op_entry(ptrs, n), the operands'
 * device pointers by value. */
#define OP_MAX_OPERANDS 32
static_assert(OP_MAX_OPERANDS == 2 * CTX_MAX_ARGS, "room for every argument and result of an op");
typedef struct op_ptrs {
    void *p[OP_MAX_OPERANDS];
} op_ptrs;

typedef struct op_build {
    cudaLibrary_t lib;
    cudaKernel_t kernel;
    int sms;
} op_build;

static pthread_mutex_t op_lock = PTHREAD_MUTEX_INITIALIZER;

extern "C" int comp_module_op_check(const char *text, char *why, size_t len)
{
    image im;
    memset(&im, 0, sizeof im);
    if (!comp_module_nvrtc_available(why, len) || pick_arch(90, &im, why, len) != 0)
        return 0;
    int rc = nvrtc_compile(text, &im, why, len) == 0 ? 1 : -1;
    free(im.data);
    return rc;
}

/* Compiles and loads the kernel around an op for the current device. NULL with why. */
static op_build *op_load(const char *text, char *why, size_t len)
{
    image im;
    int device = 0, major = 0, minor = 0;
    op_build *b = (op_build *)calloc(1, sizeof *b);
    memset(&im, 0, sizeof im);
    if (!b) {
        snprintf(why, len, "out of memory");
        return NULL;
    }
    if (!comp_module_nvrtc_available(why, len))
        goto fail;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&b->sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(why, len, "the device's compute capability could not be read");
        goto fail;
    }
    if (pick_arch(major * 10 + minor, &im, why, len) != 0 || nvrtc_compile(text, &im, why, len) != 0)
        goto fail;
    if (cudaLibraryLoadData(&b->lib, im.data, NULL, NULL, 0, NULL, NULL, 0) != cudaSuccess ||
        cudaLibraryGetKernel(&b->kernel, b->lib, "cfx_op_entry") != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(why, len, "the op's kernel could not be loaded");
        goto fail;
    }
    free(im.data);
    return b;
fail:
    if (b->lib)
        cudaLibraryUnload(b->lib);
    free(im.data);
    free(b);
    return NULL;
}

extern "C" int comp_module_op_launch(void **handle, const char *text, void *stream, void *const *p, int np, int64_t n,
                                     char *why, size_t len)
{
    op_build *b;
    op_ptrs ptrs;
    long long count = (long long)n;
    if (np > OP_MAX_OPERANDS) {
        snprintf(why, len, "%d operands, more than an op has", np);
        return -1;
    }
    pthread_mutex_lock(&op_lock);
    b = (op_build *)*handle;
    if (!b) {
        /* a first call may come while the stream is captured (the interpreter captures CALL
         * sites at its first run): loading a module is no stream work, so let it happen */
        cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
        cudaThreadExchangeStreamCaptureMode(&mode);
        b = op_load(text, why, len);
        cudaThreadExchangeStreamCaptureMode(&mode);
        *handle = b;
    }
    pthread_mutex_unlock(&op_lock);
    if (!b)
        return -1;
    memset(&ptrs, 0, sizeof ptrs);
    memcpy(ptrs.p, p, sizeof(void *) * (size_t)np);
    void *params[] = {&ptrs, &count};
    int64_t blocks = (n + 255) / 256;
    blocks = blocks < 1 ? 1 : blocks > 4 * (int64_t)b->sms ? 4 * (int64_t)b->sms : blocks;
    cudaError_t e = cudaLaunchKernel((const void *)b->kernel, dim3((unsigned)blocks), dim3(256), params, 0,
                                     (cudaStream_t)stream);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(why, len, "the op's kernel did not launch: %s", cudaGetErrorString(e));
        return -1;
    }
    return 0;
}

extern "C" void comp_module_op_release(void *handle)
{
    op_build *b = (op_build *)handle;
    if (!b)
        return;
    cudaLibraryUnload(b->lib);
    free(b);
}

/* ==== the cache of machine code ============================================================ */

#define CACHE_MAGIC "CFXKERN1"

typedef struct cache_head {
    char magic[8];
    uint64_t key, check; /* two hashes of the source and the build's conditions */
    uint64_t source_bytes;
    uint64_t image_bytes;
} cache_head;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *c = (const uint8_t *)p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 0x100000001b3ull;
    return h;
}

/* The cache directory (created), or 0 when there is none. */
static int cache_dir(char *dir, size_t len)
{
    const char *env = getenv("CFX_KERNEL_CACHE"), *xdg = getenv("XDG_CACHE_HOME"),
               *home = getenv("HOME");
    if (env && (strcmp(env, "off") == 0 || strcmp(env, "0") == 0))
        return 0;
    if (env && env[0])
        snprintf(dir, len, "%s", env);
    else if (xdg && xdg[0])
        snprintf(dir, len, "%s/cfx/kernels", xdg);
    else if (home && home[0])
        snprintf(dir, len, "%s/.cache/cfx/kernels", home);
    else
        return 0;
    return kernel_file_mkdirs(dir);
}

static void cache_keys(const char *source, const image *im, uint64_t *key, uint64_t *check)
{
    char cond[96];
    snprintf(cond, sizeof cond, "nvrtc %d.%d %s fmad=false", nvrtc.major, nvrtc.minor, im->arch);
    size_t n = strlen(source);
    *key = fnv(fnv(0xcbf29ce484222325ull, source, n), cond, strlen(cond));
    *check = fnv(fnv(0x84222325cbf29ce4ull, cond, strlen(cond)), source, n);
}

static void cache_path(char *path, size_t len, const char *dir, uint64_t key, const image *im)
{
    snprintf(path, len, "%s/%016llx-%s.%s", dir, (unsigned long long)key, im->arch,
             im->is_cubin ? "cubin" : "ptx");
}

static int cache_load(const char *dir, const char *source, image *im)
{
    char path[1024];
    cache_head h;
    uint64_t key, check;
    cache_keys(source, im, &key, &check);
    cache_path(path, sizeof path, dir, key, im);
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    int ok = fread(&h, sizeof h, 1, f) == 1 && memcmp(h.magic, CACHE_MAGIC, 8) == 0 &&
             h.key == key && h.check == check && h.source_bytes == strlen(source) &&
             h.image_bytes > 0 && h.image_bytes < ((uint64_t)1 << 31) &&
             (im->data = (char *)malloc((size_t)h.image_bytes)) &&
             fread(im->data, 1, (size_t)h.image_bytes, f) == h.image_bytes;
    fclose(f);
    if (!ok) {
        free(im->data);
        im->data = NULL;
        return -1;
    }
    im->bytes = (size_t)h.image_bytes;
    return 0;
}

static void cache_store(const char *dir, const char *source, const image *im)
{
    char path[1024];
    cache_head h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, CACHE_MAGIC, 8);
    cache_keys(source, im, &h.key, &h.check);
    h.source_bytes = strlen(source);
    h.image_bytes = im->bytes;
    cache_path(path, sizeof path, dir, h.key, im);
    (void)kernel_file_write(path, &h, sizeof h, im->data, im->bytes); /* a cache that cannot be written is none */
}

/* ==== the executor ========================================================================= */

enum { MODE_COMPILED = 0, MODE_INTERP = 1 }; /* cfx_persistent_mode's values */

typedef struct comp_exec {
    dev_session s;          /* first: the session's callbacks cast it back (session.h) */
    int want;               /* the mode asked for */
    int tried, ready;       /* the kernel was built (ready) or could not be (why) */
    char why[640];
    cgen_info info;
    double build_ms;        /* generating, compiling (or loading from the cache) and loading */
    const char *cache;      /* "hit", "miss", "off" */
    char arch[16];
    /* the compiled kernel and its memory */
    cudaLibrary_t lib;
    cudaKernel_t kernel;
    int threads;
    ck_sync *sync;
    ck_sync sync_host;      /* sync as the last launch left it */
    k_acc *partials;
    uint8_t *publish;
    uint8_t *alt;           /* ck_args.alt: the second buffers of the tensors that alternate */
    uint8_t *print_buf, *print_host;
    uint32_t print_cap;
    /* records that end the launch (info.launches of them; the session serves them) */
    int built_for_tail;     /* the kernel was built with CK_DEVICE_LAUNCH 1 */
    ck_args main_args;      /* main_exec's argument, fixed at its creation */
    /* the timeline: a traced run needs the kernel built with CK_TRACE, and an untraced one the
     * kernel without, so the executor builds again (from the disk cache after the first time)
     * when a run asks for the other */
    int trace_build;
    int min_blocks;         /* the device's multiprocessors: the grid has at least a block on each */
    ck_event *trace;        /* COMP_TRACE_PER_BLOCK per block */
    uint32_t *trace_count;
    unsigned long long *tick_counts; /* per block, each TICK's iterations (ck_args.tick_counts) */
    int32_t nticks;         /* the program's TICK records */
    unsigned long long *clock; /* 8 bytes for dev_clock_offset */
    double clock_ghz;       /* the device's clock, for a launch's stamps whose END was not kept */
    ck_sync sync_init;      /* what sync holds as a run starts (copied from here) */
    /* the interpreter, made when first needed, with the options cfx_set_option gave */
    void *interp;
    persist_opts opts;
    /* the run in flight (the session's, or the interpreter's) */
    int in_interp;
    ck_sync *sync_pinned;   /* sync_init's page-locked copy, which a captured run copies from */
    int rerun;              /* the last run overflowed the print buffer: the interpreter ran it */
    char detail[1400];      /* cfx_exec_backend_detail's line */
} comp_exec;

/* What the session asks of the compiled kernel (session.h); defined with the run, below. */
static int comp_ends_launch(const dev_session *s, int32_t i);
static int comp_device_graph(dev_session *s, int coop, char *why, size_t len);
static int comp_reset_sync(dev_session *s, char *err, size_t errlen);
static int comp_launch(dev_session *s, int32_t pc, char *err, size_t errlen);
static int32_t comp_pause_pc(const dev_session *s, const dev_state *st);
static int comp_ended(dev_session *s, const dev_state *st, int *handled, char *err, size_t errlen);
static int comp_timeline(dev_session *s, char *err, size_t errlen);

static const dev_session_mode compiled_session = {
    "cuda-persistent (compiled)", "compiled kernel", comp_ends_launch, comp_device_graph, comp_reset_sync, comp_launch,
    comp_pause_pc, NULL, comp_ended, comp_timeline, NULL, NULL,
};

static void release_kernel(comp_exec *x)
{
    dev_session_free(&x->s);
    if (x->sync) cudaFree(x->sync);
    if (x->partials) cudaFree(x->partials);
    if (x->publish) cudaFree(x->publish);
    if (x->alt) cudaFree(x->alt);
    if (x->print_buf) cudaFree(x->print_buf);
    if (x->print_host) cudaFreeHost(x->print_host);
    if (x->sync_pinned) cudaFreeHost(x->sync_pinned);
    if (x->trace) cudaFree(x->trace);
    if (x->trace_count) cudaFree(x->trace_count);
    if (x->tick_counts) cudaFree(x->tick_counts);
    if (x->clock) cudaFree(x->clock);
    x->trace = NULL;
    x->trace_count = NULL;
    x->tick_counts = NULL;
    x->clock = NULL;
    if (x->lib) cudaLibraryUnload(x->lib);
    x->sync = NULL;
    x->partials = NULL;
    x->publish = NULL;
    x->alt = NULL;
    x->print_buf = x->print_host = NULL;
    x->sync_pinned = NULL;
    x->lib = NULL;
    x->ready = 0;
}

static void comp_destroy(void *self)
{
    comp_exec *x = (comp_exec *)self;
    if (!x)
        return;
    if (x->s.in_flight && !x->in_interp && x->s.stream)
        cudaStreamSynchronize(x->s.stream);
    if (x->interp)
        dev_persistent_ops.destroy(x->interp);
    release_kernel(x);
    free(x);
}

static int comp_available(char *why, size_t len)
{
    return dev_persistent_ops.available(why, len);
}

static void *comp_create(const cfx_prog *prog, char *err, size_t errlen)
{
    comp_exec *x = (comp_exec *)calloc(1, sizeof *x);
    if (!x) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    static const persist_opts defaults = PERSIST_OPTS_DEFAULT;
    x->s.mode = &compiled_session;
    x->s.prog = prog;
    x->opts = defaults;
    x->want = MODE_COMPILED;
    x->cache = "off";
    return x;
}

/* The kernel's argument for this executor (a run's budget added per run). */
static ck_args kernel_args(const comp_exec *x, int device_launch)
{
    ck_args a;
    memset(&a, 0, sizeof a);
    a.arena = x->s.d.arena;
    a.state = (ck_state *)x->s.d.state;
    a.control = (const ck_control *)x->s.d.control_dev;
    a.sync = x->sync;
    a.partials = x->partials;
    a.publish = x->publish;
    a.alt = x->alt;
    a.print_buf = x->print_buf;
    a.print_cap = x->print_cap;
    a.site_exec = (struct CUgraphExec_st *const *)x->s.site_exec_dev;
    a.device_launch = device_launch;
    a.trace = x->trace;
    a.trace_cap = COMP_TRACE_PER_BLOCK;
    a.trace_count = x->trace_count;
    a.tick_counts = x->tick_counts;
    a.progress = (ck_progress *)x->s.progress_dev;
    return a;
}

/* The grid and the memory of the kernel, once it is loaded. */
static int prepare_launch(comp_exec *x, char *err, size_t errlen)
{
    const cfx_prog *p = x->s.prog;
    size_t max_print = 0;
    int per_sm = 0;
    if (dev_session_upload(&x->s, p, err, errlen) != 0)
        return -1;
    dev_l2_window(&x->s.d, sched_l2_keep(p), x->opts.l2_window);
    x->s.nlaunches = x->info.launches;
    /* A program of scalars only runs the same in every thread: one warp does it. Tensors want
     * a block; split work and barriers the grid the device keeps resident at once. */
    x->threads = x->info.needs_block || x->info.needs_grid ? CK_THREADS : 32;
    x->s.nblocks = 1;
    if (x->info.needs_grid) {
        CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, (const void *)x->kernel,
                                                               CK_THREADS, 0));
        if (per_sm < 1) {
            snprintf(err, errlen,
                     "the compiled kernel does not fit on a multiprocessor of this device");
            return -1;
        }
        x->s.nblocks = x->s.d.sms * (per_sm < 2 ? per_sm : 2);
    }
    CUDA_TRY(cudaDeviceGetAttribute(&x->s.cooperative, cudaDevAttrCooperativeLaunch, x->s.d.device));
    CUDA_TRY(cudaMalloc((void **)&x->sync, sizeof(ck_sync)));
    x->s.sync = x->sync;
    x->s.sync_host = &x->sync_host;
    x->s.sync_bytes = sizeof x->sync_host;
    CUDA_TRY(cudaMalloc((void **)&x->partials, 2 * CK_BATCH_MAX * sizeof(k_acc) * (size_t)x->s.nblocks));
    CUDA_TRY(cudaMalloc((void **)&x->publish, 2 * (size_t)x->info.publish_bytes));
    if (x->info.alt_bytes > 0)
        CUDA_TRY(cudaMalloc((void **)&x->alt, (size_t)x->info.alt_bytes));
    for (int32_t i = 0; i < p->nrecords; i++)
        if (p->records[i].kind == REC_PRINT) {
            size_t b = (size_t)slot_bytes(&p->slots[p->records[i].a]) + sizeof(ck_print_entry) + 8;
            max_print = b > max_print ? b : max_print;
        }
    if (2 * max_print > (size_t)UINT32_MAX / 2) {
        snprintf(err, errlen, "a printed value is too big for the compiled kernel");
        return -1;
    }
    x->print_cap = 2 * max_print > COMP_PRINT_BYTES ? (uint32_t)(2 * max_print) : COMP_PRINT_BYTES;
    CUDA_TRY(cudaMalloc((void **)&x->print_buf, x->print_cap));
    CUDA_TRY(cudaHostAlloc((void **)&x->print_host, x->print_cap, cudaHostAllocDefault));
    CUDA_TRY(cudaHostAlloc((void **)&x->sync_pinned, sizeof(ck_sync), cudaHostAllocDefault));
    if (x->trace_build) {
        CUDA_TRY(cudaMalloc((void **)&x->trace, sizeof(ck_event) * COMP_TRACE_PER_BLOCK * (size_t)x->s.nblocks));
        CUDA_TRY(cudaMalloc((void **)&x->trace_count, sizeof(uint32_t) * (size_t)x->s.nblocks));
        x->nticks = 0;
        for (int32_t i = 0; i < p->nrecords; i++)
            x->nticks += p->records[i].kind == REC_TICK;
        if (x->nticks > 0)
            CUDA_TRY(cudaMalloc((void **)&x->tick_counts,
                                sizeof(unsigned long long) * (size_t)x->nticks * (size_t)x->s.nblocks));
        CUDA_TRY(cudaMalloc((void **)&x->clock, sizeof(unsigned long long)));
        int khz = 0;
        if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, x->s.d.device) != cudaSuccess)
            (void)cudaGetLastError();
        x->clock_ghz = khz > 0 ? khz / 1e6 : 1.0;
    }
    if (dev_session_alloc(&x->s, err, errlen) != 0)
        return -1;
    /* the upload's copies are ordered on the legacy default stream, which a run on a
     * non-blocking stream does not wait for */
    CUDA_TRY(cudaStreamSynchronize(0));
    if (x->info.launches > 0 && x->built_for_tail)
        return dev_session_device_launch(&x->s, err, errlen);
    return 0;
fail:
    return -1;
}

/* Generates, finds in the cache or compiles, and loads the kernel: 0, or -1 with why. A
 * kernel that tail-launches and does not load (the driver does not resolve the device runtime's
 * graph launch) is built again to pause. */
static int build_kernel(comp_exec *x, int tail, image *im, char *err, size_t errlen)
{
    strbuf src = {0};
    char dir[900];
    int rc = -1;
    for (;;) {
        /* the grid is at least a block per multiprocessor (or the kernel does not fit at all) */
        if (generate(x->s.prog, 0, tail, x->s.product_min, x->trace_build, x->min_blocks, &src, &x->info, err,
                     errlen) != 0) {
            char msg[640];
            snprintf(msg, sizeof msg, "the code generator cannot take this program: %s", err);
            snprintf(err, errlen, "%s", msg);
            goto done;
        }
        if (!tail || x->info.launches == 0)
            break;
        /* tail launches where the device runs them (asked once per process) */
        int coop = 0;
        char why[320] = "";
        if (persist_probe_device_launch(&coop, why, sizeof why))
            break;
        snprintf(x->s.why_pause, sizeof x->s.why_pause, "device graph launch is not available here: %s", why);
        tail = 0;
        sb_free(&src);
    }
    x->built_for_tail = tail && x->info.launches > 0;
    {
        /* CFX_KERNEL_DUMP keeps the generated source, CFX_KERNEL_OVERRIDE replaces it, both by
         * its cache key (host/gen/kernel_files.h) */
        uint64_t key, check;
        char name[96];
        cache_keys(sb_str(&src), im, &key, &check);
        snprintf(name, sizeof name, "%016llx-%s.cu", (unsigned long long)key, im->arch);
        kernel_file_dump(name, sb_str(&src));
        char *over = kernel_file_override(name);
        if (over) {
            sb_free(&src);
            sb_puts(&src, over);
            free(over);
        }
    }
    if (cache_dir(dir, sizeof dir)) {
        x->cache = cache_load(dir, sb_str(&src), im) == 0 ? "hit" : "miss";
    } else {
        x->cache = "off";
    }
    if (!im->data) {
        prof_push("NVRTC build");
        int failed = nvrtc_compile(sb_str(&src), im, err, errlen) != 0;
        prof_pop();
        if (failed)
            goto done;
        if (strcmp(x->cache, "miss") == 0)
            cache_store(dir, sb_str(&src), im);
    }
    {
        cudaError_t e = cudaLibraryLoadData(&x->lib, im->data, NULL, NULL, 0, NULL, NULL, 0);
        if (e == cudaSuccess)
            e = cudaLibraryGetKernel(&x->kernel, x->lib, COMP_ENTRY);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            if (x->lib)
                cudaLibraryUnload(x->lib);
            x->lib = NULL;
            snprintf(err, errlen, "the compiled kernel could not be loaded: %s", cudaGetErrorString(e));
            goto done;
        }
    }
    rc = 0;
done:
    sb_free(&src);
    return rc;
}

/* Builds the kernel: generate, find in the cache or compile, load, prepare. On failure the
 * reason goes to x->why and the interpreter runs the program. */
static void build(comp_exec *x)
{
    char err[600] = "", blas_why[256];
    image im;
    int device = 0, major = 0, minor = 0, tail;
    struct timespec t0;
    memset(&im, 0, sizeof im);
    x->tried = 1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    prof_push("compile kernel");
    if (!comp_module_nvrtc_available(err, sizeof err)) {
        snprintf(x->why, sizeof x->why, "%s", err);
        goto done;
    }
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&x->min_blocks, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(x->why, sizeof x->why, "the device's compute capability or size could not be read");
        goto done;
    }
    if (pick_arch(major * 10 + minor, &im, err, sizeof err) != 0) {
        snprintf(x->why, sizeof x->why, "%s", err);
        goto done;
    }
    snprintf(x->arch, sizeof x->arch, "%s", im.arch);
    /* the big products go to cuBLAS, as the interpreter's do; without it they stay inline */
    x->s.blas = blas_new(blas_why, sizeof blas_why);
    if (!x->s.blas)
        (void)cudaGetLastError();
    x->s.product_min = !x->s.blas ? 0 : x->opts.launch_product_min >= 0 ? x->opts.launch_product_min
                                                                     : SCHED_LAUNCH_PRODUCT_MIN;
    /* tail launches where wanted (and, build_kernel asks, where the device runs them) */
    tail = x->opts.device_launch;
    if (!tail)
        snprintf(x->s.why_pause, sizeof x->s.why_pause, "pause and relaunch asked for (CFX_OPTION_DEVICE_LAUNCH 0)");
    if (build_kernel(x, tail, &im, err, sizeof err) != 0) {
        if (!x->built_for_tail || !strstr(err, "could not be loaded")) {
            snprintf(x->why, sizeof x->why, "%s", err);
            goto done;
        }
        /* a kernel that tail-launches did not load: the one that pauses */
        char first[300];
        snprintf(first, sizeof first, "%s", err);
        free(im.data);
        im.data = NULL;
        if (build_kernel(x, 0, &im, err, sizeof err) != 0) {
            snprintf(x->why, sizeof x->why, "%s", err);
            goto done;
        }
        snprintf(x->s.why_pause, sizeof x->s.why_pause, "the kernel that tail-launches does not load here (%s)", first);
    }
    if (prepare_launch(x, err, sizeof err) != 0) {
        snprintf(x->why, sizeof x->why, "the compiled kernel could not be prepared: %s", err);
        goto done;
    }
    x->ready = 1;
done:
    prof_pop();
    x->build_ms = ms_since(&t0);
    if (!x->ready)
        release_kernel(x);
    free(im.data);
}

/* ---- the interpreter ---------------------------------------------------------------------- */

static int run_interp(comp_exec *x, const exec_run *run, int async, char *err, size_t errlen)
{
    if (!x->interp) {
        x->interp = persist_create_opts(x->s.prog, &x->opts, err, errlen);
        if (!x->interp)
            return -1;
    }
    x->in_interp = 1;
    int rc = dev_persistent_ops.run(x->interp, run, async, err, errlen);
    x->s.in_flight = rc == 0;
    if (rc == 0 && !async) {
        rc = dev_persistent_ops.wait(x->interp, &x->s.out, err, errlen);
        x->s.in_flight = 0;
    }
    return rc;
}

/* ---- a compiled run ------------------------------------------------------------------------ */

/* One launch of the kernel (session.h's launch): the run's first, through the kernel's graph
 * with device launch, or from the host, the first or the next after a pause (which resumes after
 * the record, sync.resume); cooperatively where the device can: every block is resident before
 * any waits at the grid barrier (the interpreter launches the same way). Inside the
 * application's capture without the L2 window. */
static int comp_launch(dev_session *s, int32_t pc, char *err, size_t errlen)
{
    comp_exec *x = (comp_exec *)s;
    if (pc < 0 && s->run_device) {
        CUDA_TRY(cudaGraphLaunch(s->main_exec, s->stream));
        return 0;
    }
    if (pc >= 0)
        CUDA_TRY(cudaMemsetAsync(&s->d.state->status, 0, sizeof s->d.state->status, s->stream));
    {
        ck_args a = kernel_args(x, 0);
        void *params[] = {&a};
        return dev_launch((const void *)x->kernel, params, s->nblocks, x->threads, 0, s->cooperative && s->nblocks > 1,
                          s->in_capture ? NULL : &s->d.l2, s->stream, err, errlen);
    }
fail:
    return -1;
}

/* The kernel's graph for device launch: the kernel built to tail-launch as its node. */
static int comp_device_graph(dev_session *s, int coop, char *why, size_t len)
{
    comp_exec *x = (comp_exec *)s;
    x->main_args = kernel_args(x, 1);
    void *args[1] = {&x->main_args};
    return dev_device_graph((const void *)x->kernel, args, s->nblocks, x->threads, 0,
                            coop && s->cooperative && s->nblocks > 1, &s->d.l2, s->own, &s->main_graph, &s->main_exec,
                            why, len);
}

static int comp_ends_launch(const dev_session *s, int32_t i)
{
    sched_opts so = plan_options_compiled(s->product_min); /* the generator's plan's */
    return sched_record_launches(s->prog, &s->prog->records[i], &so);
}

/* The blocks' shared state as a run starts, with its budget (the kernel's argument is fixed in
 * main_exec, so the budget is not in it); inside the application's capture from its
 * page-locked copy, which every replay copies again. */
static int comp_reset_sync(dev_session *s, char *err, size_t errlen)
{
    comp_exec *x = (comp_exec *)s;
    memset(&x->sync_init, 0, sizeof x->sync_init);
    x->sync_init.max_iters = s->run.max_iters;
    if (s->in_capture)
        *x->sync_pinned = x->sync_init;
    CUDA_TRY(cudaMemcpyAsync(x->sync, s->in_capture ? x->sync_pinned : &x->sync_init, sizeof(ck_sync),
                             cudaMemcpyHostToDevice, s->stream));
    return 0;
fail:
    return -1;
}

/* A pause is at the record the state names, and the next launch resumes after it. */
static int32_t comp_pause_pc(const dev_session *s, const dev_state *st)
{
    return ((const comp_exec *)s)->sync_host.resume == st->record + 1 ? st->record : -1;
}

/* Hands the printed values to the callback, in program order. */
static int drain_prints(comp_exec *x, uint32_t used, char *err, size_t errlen)
{
    if (used == 0)
        return 0;
    if (used > x->print_cap) {
        snprintf(err, errlen, "the device reported %u bytes of printed values in a %u-byte buffer",
                 used, x->print_cap);
        return -1;
    }
    CUDA_TRY(cudaMemcpyAsync(x->print_host, x->print_buf, used, cudaMemcpyDeviceToHost, x->s.stream));
    CUDA_TRY(cudaStreamSynchronize(x->s.stream));
    for (uint32_t off = 0; off + sizeof(ck_print_entry) <= used;) {
        ck_print_entry h;
        memcpy(&h, x->print_host + off, sizeof h);
        if (h.record < 0 || h.record >= x->s.prog->nrecords || h.bytes < 0) {
            snprintf(err, errlen, "a corrupt print entry at byte %u of the device's buffer", off);
            return -1;
        }
        if (x->s.run.print)
            x->s.run.print(x->s.run.print_user, x->s.prog, h.record, x->print_host + off + sizeof h);
        off += (uint32_t)sizeof h + ((uint32_t)h.bytes + 7u) / 8u * 8u;
    }
    return 0;
fail:
    return -1;
}

/* The kernel's name for a stamp's span: what the block did from this stamp to its next. */
/* What the span of a block's timeline from one stamp to its next was, named by where it ends
 * (each stamp closes what came before it): the record it counts to, or -1 for none (from a
 * launch's end to the next launch's start: the host's time), and its name (NULL: the record's
 * own, its kind). A phase's work ends at its DONE, a barrier's wait at its PASS, the loop's test
 * and poll at the next iteration's ITER, and the last stretch at END, which counts to HALT. */
static int32_t span_of(const cfx_prog *p, const ck_event *from, const ck_event *to, const char **name)
{
    *name = NULL;
    if (from->kind == CK_EV_END)
        return -1;
    switch (to->kind) {
    case CK_EV_DONE: return to->record;
    case CK_EV_PASS: *name = "grid barrier (waiting)"; return to->record;
    case CK_EV_WAIT: *name = "to the grid barrier"; return to->record;
    case CK_EV_ITER: *name = "loop test"; return to->record;
    case CK_EV_SAMPLE: *name = "loop iterations (one in 64 stamped)"; return to->record;
    case CK_EV_REGION: *name = "to a one-block region"; return to->record;
    case CK_EV_END:
        *name = "to the launch's end";
        for (int32_t i = 0; i < p->nrecords; i++)
            if (p->records[i].kind == REC_HALT)
                return i;
        return -1;
    default: return -1;
    }
}

/* The timeline of a run of a kernel built with CK_TRACE, each block's events from the device:
 * *counts (per block, stamped, kept or not), *ev (COMP_TRACE_PER_BLOCK per block, its first
 * (*kept)[b] events the block's, in nanoseconds: ck_timeline_ns) and *ticks (block 0's
 * iterations of each TICK record, x->nticks), malloc'd. */
static int read_timeline(comp_exec *x, uint32_t **counts, uint32_t **kept, ck_event **ev, unsigned long long **ticks,
                         char *err, size_t errlen)
{
    size_t nb = (size_t)x->s.nblocks;
    *counts = (uint32_t *)malloc(sizeof(uint32_t) * nb);
    *kept = (uint32_t *)malloc(sizeof(uint32_t) * nb);
    *ev = (ck_event *)malloc(sizeof(ck_event) * nb * COMP_TRACE_PER_BLOCK);
    *ticks = (unsigned long long *)calloc((size_t)x->nticks + 1, sizeof(unsigned long long));
    if (!*counts || !*kept || !*ev || !*ticks) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    CUDA_TRY(cudaMemcpyAsync(*counts, x->trace_count, sizeof(uint32_t) * nb, cudaMemcpyDeviceToHost, x->s.stream));
    CUDA_TRY(cudaMemcpyAsync(*ev, x->trace, sizeof(ck_event) * nb * COMP_TRACE_PER_BLOCK, cudaMemcpyDeviceToHost,
                             x->s.stream));
    if (x->nticks > 0)
        CUDA_TRY(cudaMemcpyAsync(*ticks, x->tick_counts, sizeof(unsigned long long) * (size_t)x->nticks,
                                 cudaMemcpyDeviceToHost, x->s.stream));
    CUDA_TRY(cudaStreamSynchronize(x->s.stream));
    for (size_t b = 0; b < nb; b++)
        (*kept)[b] = ck_timeline_ns(*ev + b * COMP_TRACE_PER_BLOCK,
                                    (*counts)[b] < COMP_TRACE_PER_BLOCK ? (*counts)[b] : COMP_TRACE_PER_BLOCK,
                                    x->clock_ghz);
    return 0;
fail:
    return -1;
}

/* The run's flat profile from block 0's timeline (every block runs the same phases, and block 0
 * also the one-block regions): each span's time to the record span_of names, a count at each
 * phase's DONE, and each loop's iterations at its TICK from the kernel's exact count (`ticks`:
 * a loop without tensor work is stamped one iteration in CK_SAMPLE). With more stamps than the
 * buffer keeps, the times cover the kept ones (run_ns their span). */
static void fill_profile(comp_exec *x, const uint32_t *kept, const ck_event *ev, const unsigned long long *ticks)
{
    exec_profile *pr = x->s.run.profile;
    uint32_t n = kept[0];
    for (uint32_t k = 0; k + 1 < n; k++) {
        const char *name;
        int32_t r = span_of(x->s.prog, &ev[k], &ev[k + 1], &name);
        if (r < 0 || r >= x->s.prog->nrecords)
            continue;
        pr->ns[r] += (int64_t)(ev[k + 1].t - ev[k].t);
        pr->count[r] += ev[k + 1].kind == CK_EV_DONE;
    }
    for (int32_t i = 0, k = 0; i < x->s.prog->nrecords; i++)
        if (x->s.prog->records[i].kind == REC_TICK)
            pr->count[i] = (int64_t)ticks[k++];
    pr->run_ns = n >= 2 ? (int64_t)(ev[n - 1].t - ev[0].t) : 0;
}

/* The run's trace: the build's facts, the host's phases on a track of their own, and with a
 * kernel built with CK_TRACE, each block's timeline (a track per block), its spans as span_of
 * names them, each carrying the source line of its record. The host's phases are put on the
 * blocks' clock (the device's global timer) by the offset dev_clock_offset measures. */
static int write_trace(comp_exec *x, double run_ms, const uint32_t *counts, const uint32_t *kept, const ck_event *ev,
                       char *err, size_t errlen)
{
    FILE *f = x->s.run.trace;
    size_t nb = (size_t)x->s.nblocks;
    long long spans = 0, dropped = 0;
    if (ev) { /* a track per block, and the host's after them */
        unsigned long long base = ~0ull;
        for (size_t b = 0; b < nb; b++)
            if (kept[b] > 0 && ev[b * COMP_TRACE_PER_BLOCK].t < base)
                base = ev[b * COMP_TRACE_PER_BLOCK].t;
        if (dev_session_trace_open(&x->s, "cuda-persistent (compiled)", base, x->clock, &base, err, errlen) != 0)
            return -1;
        for (size_t b = 0; b < nb; b++) {
            uint32_t n = kept[b];
            const ck_event *e = ev + b * COMP_TRACE_PER_BLOCK;
            dropped += counts[b] > COMP_TRACE_PER_BLOCK ? counts[b] - COMP_TRACE_PER_BLOCK : 0;
            for (uint32_t k = 0; k + 1 < n; k++) {
                const char *name;
                int32_t r = span_of(x->s.prog, &e[k], &e[k + 1], &name);
                if (r == -1 && e[k].kind == CK_EV_END)
                    continue;
                exec_trace_event(f, x->s.prog, r, name ? name : r < 0 ? "?" : NULL,
                                 (double)(e[k].t - base) / 1e3, (double)(e[k + 1].t - e[k].t) / 1e3, (int)b);
                spans++;
            }
        }
    } else {
        exec_trace_open(f, "cuda-persistent (compiled)", x->s.prog, "device", 0);
        exec_trace_event(f, x->s.prog, -1, "compiled kernel", 0.0, run_ms * 1e3, 0);
    }
    fputs("\n],", f);
    fprintf(f, "\"displayTimeUnit\":\"ns\",\"otherData\":{\"executor\":\"cuda-persistent\","
               "\"mode\":\"compiled\",\"graph\":\"%s\",\"compile_ms\":%.3f,\"cache\":\"%s\",",
            x->s.prog->name ? x->s.prog->name : "", x->build_ms, x->cache);
    fprintf(f, "\"arch\":\"%s\",\"blocks\":%d,\"threads\":%d,\"structured\":%d,\"regions\":%d,"
               "\"barriers\":%d,\"launch_sites\":%d,\"inline_calls\":%d,\"paused\":%d,"
               "\"events\":%lld,\"events_dropped\":%lld,\"event_cap\":%d,\"sampled_every\":%d,"
               "\"host_clock_offset_ns\":%lld}}\n",
            x->arch, x->s.nblocks, x->threads, x->info.structured, (int)x->info.regions,
            (int)x->info.barriers, (int)x->info.launches, (int)x->info.inline_calls, x->s.paused, spans, dropped,
            COMP_TRACE_PER_BLOCK, CK_SAMPLE, ev ? x->s.host.offset : 0ll);
    fflush(f);
    return 0;
}

/* A traced or profiled run's timeline (session.h's timeline). */
static int comp_timeline(dev_session *s, char *err, size_t errlen)
{
    comp_exec *x = (comp_exec *)s;
    double run_ms = ms_since(&s->t_launch);
    uint32_t *counts = NULL, *kept = NULL;
    ck_event *ev = NULL;
    unsigned long long *ticks = NULL;
    prof_push("write trace");
    int failed = x->trace && read_timeline(x, &counts, &kept, &ev, &ticks, err, errlen) != 0;
    if (!failed && s->run.profile && ev)
        fill_profile(x, kept, ev, ticks);
    if (!failed && s->run.trace)
        failed = write_trace(x, run_ms, counts, kept, ev, err, errlen) != 0;
    free(counts);
    free(kept);
    free(ev);
    free(ticks);
    prof_pop();
    return failed ? -1 : 0;
}

/* The last launch ended (session.h's ended): a run whose printed values did not fit is run
 * again by the interpreter; else the printed values, in program order. */
static int comp_ended(dev_session *s, const dev_state *st, int *handled, char *err, size_t errlen)
{
    comp_exec *x = (comp_exec *)s;
    if (st->status == CK_STATUS_RERUN) {
        x->rerun = 1;
        /* the printed values did not fit: nothing of this launch was delivered, so the
         * interpreter runs the program again and drains its buffer as it goes */
        *handled = 1;
        return run_interp(x, &s->run, 0, err, errlen);
    }
    if (st->status == CFX_ERROR && st->detail[0] == -1 && st->detail[1] == -1) {
        /* the kernel found no record to resume after (compiled_kernel.cuh's resume entry) */
        snprintf(err, errlen, "the compiled kernel was launched to resume after record %d, which does not end a launch",
                 (int)st->record);
        return -1;
    }
    return drain_prints(x, x->sync_host.print_used, err, errlen);
}

/* 1 when a run with these arguments would build the kernel first (the first run, or one that
 * changes whether it is traced): what comp_prepare does. */
static int comp_needs_build(const comp_exec *x, const exec_run *run)
{
    int stamps = run->trace != NULL || run->profile != NULL;
    return x->want == MODE_COMPILED && (!x->tried || (x->ready && stamps != x->trace_build));
}

/* cfx_prepare: the kernel built for this run (or the interpreter made and prepared where it cannot
 * be), and the CALL sites' graphs for its kernels. */
static int comp_prepare(void *self, const exec_run *run, char *err, size_t errlen)
{
    comp_exec *x = (comp_exec *)self;
    int stamps = run->trace != NULL || run->profile != NULL;
    if (dev_session_busy(&x->s, err, errlen) != 0)
        return -1;
    if (x->want == MODE_COMPILED && x->tried && x->ready && stamps != x->trace_build) {
        release_kernel(x);
        x->tried = 0;
    }
    if (x->want == MODE_COMPILED && !x->tried) {
        x->trace_build = stamps;
        build(x);
    }
    if (x->want != MODE_COMPILED || !x->ready) {
        if (!x->interp && !(x->interp = persist_create_opts(x->s.prog, &x->opts, err, errlen)))
            return -1;
        return dev_persistent_ops.prepare(x->interp, run, err, errlen);
    }
    return dev_session_capture_calls(&x->s, run, err, errlen);
}

static int comp_run(void *self, const exec_run *run, int async, char *err, size_t errlen)
{
    comp_exec *x = (comp_exec *)self;
    {
        cudaStream_t s;
        int capturing = dev_session_stream(&x->s, run, &s, err, errlen);
        if (capturing < 0) return -1;
        if (capturing) {
            memset(&x->s.out, 0, sizeof x->s.out);
            x->s.out.record = -1;
            if (comp_needs_build(x, run)) {
                snprintf(err, errlen, "cuda-persistent: under stream capture the run would build its kernel first "
                         "(NVRTC, the first run or one traced differently): call cfx_prepare (or run once) before "
                         "capturing");
                return -1;
            }
            if (x->want != MODE_COMPILED || !x->ready) {
                if (!x->interp) {
                    snprintf(err, errlen, "cuda-persistent (interpreter): under stream capture the run would make "
                             "the interpreter first: call cfx_prepare (or run once) before capturing");
                    return -1;
                }
                int rc = dev_persistent_ops.run(x->interp, run, async, err, errlen);
                x->in_interp = rc == EXEC_CAPTURED;
                x->s.captured_run = rc == EXEC_CAPTURED;
                return rc;
            }
            x->in_interp = 0;
            return dev_session_capture(&x->s, run, async, s, err, errlen);
        }
    }
    x->s.captured_run = 0;
    memset(&x->s.out, 0, sizeof x->s.out);
    x->s.out.record = -1;
    x->in_interp = 0;
    x->rerun = 0;
    /* a traced or profiled run needs the kernel built with the stamps (CK_TRACE), an untraced one
     * the kernel without them */
    int stamps = run->trace != NULL || run->profile != NULL;
    if (x->want == MODE_COMPILED && x->tried && x->ready && stamps != x->trace_build) {
        release_kernel(x);
        x->tried = 0;
    }
    dev_host_track_start(&x->s.host, run->trace != NULL);
    if (x->want == MODE_COMPILED && !x->tried) {
        unsigned long long t = dev_host_ns();
        x->trace_build = stamps;
        build(x);
        dev_host_span(&x->s.host, strcmp(x->cache, "hit") == 0 ? "build the kernel (from the cache)" : "build the kernel",
                      t);
    }
    if (x->want != MODE_COMPILED || !x->ready)
        return run_interp(x, run, async, err, errlen);
    dev_session_begin(&x->s, run);
    if (dev_session_capture_calls(&x->s, run, err, errlen) != 0)
        return dev_session_fail(&x->s);
    x->s.run_device = x->s.device_launch; /* after the capture, which may have fallen back */
    if (x->trace)
        CUDA_TRY(cudaMemsetAsync(x->trace_count, 0, sizeof(uint32_t) * (size_t)x->s.nblocks, x->s.stream));
    if (x->tick_counts)
        CUDA_TRY(cudaMemsetAsync(x->tick_counts, 0,
                                 sizeof(unsigned long long) * (size_t)x->nticks * (size_t)x->s.nblocks, x->s.stream));
    return dev_session_launch(&x->s, async, err, errlen);
fail:
    return dev_session_fail(&x->s);
}

static int comp_wait(void *self, exec_outcome *out, char *err, size_t errlen)
{
    comp_exec *x = (comp_exec *)self;
    if (x->in_interp && (x->s.captured_run || x->s.in_flight)) {
        /* the interpreter's run, or the application's last replay of its capture */
        int rc = dev_persistent_ops.wait(x->interp, &x->s.out, err, errlen);
        if (!x->s.captured_run)
            x->s.in_flight = 0;
        *out = x->s.out;
        return rc;
    }
    return dev_session_wait(&x->s, out, err, errlen);
}

/* cfx_exec_graph: a run recorded by a capture of this call's own. */
static int comp_graph(void *self, const exec_run *run, void **graph, char *err, size_t errlen)
{
    if (comp_prepare(self, run, err, errlen) != 0) return -1;
    return dev_graph_of_run(comp_run, self, run, graph, err, errlen);
}

/* cfx_set_persistent_mode: the mode for the next runs; returns the one that will run. */
static int comp_mode(void *self, int want, char *why, size_t len)
{
    comp_exec *x = (comp_exec *)self;
    if (x->s.in_flight) {
        snprintf(why, len, "a run is in flight: wait for it first");
        return -1;
    }
    x->want = want;
    if (want != MODE_COMPILED) {
        snprintf(why, len, "the interpreter, as asked");
        return MODE_INTERP;
    }
    if (!x->tried)
        build(x);
    if (x->ready) {
        snprintf(why, len, "the compiled kernel (built in %.1f ms, cache %s, %s, %d x %d threads)",
                 x->build_ms, x->cache, x->arch, x->s.nblocks, x->threads);
        return MODE_COMPILED;
    }
    snprintf(why, len, "%s", x->why);
    return MODE_INTERP;
}

/* cfx_set_option: the options of both modes' next runs. The interpreter is made again with
 * them when next needed; the compiled kernel, which depends on how records that end the launch
 * are served and which products are launched, is built again. */
static int comp_option(void *self, int option, int64_t value, char *why, size_t len)
{
    comp_exec *x = (comp_exec *)self;
    persist_opts o = x->opts;
    if (x->s.in_flight) {
        snprintf(why, len, "a run is in flight: wait for it first");
        return -1;
    }
    if (option == CFX_OPTION_DEVICE_LAUNCH)
        o.device_launch = (int)value;
    else if (option == CFX_OPTION_MICROOPS)
        o.microops = (int)value;
    else if (option == CFX_OPTION_LAUNCH_PRODUCT_MIN)
        o.launch_product_min = value;
    else if (option == CFX_OPTION_L2_WINDOW)
        o.l2_window = (int)value;
    else {
        snprintf(why, len, "unknown option %d", option);
        return -1;
    }
    if (memcmp(&o, &x->opts, sizeof o) != 0) {
        if (x->interp) {
            dev_persistent_ops.destroy(x->interp);
            x->interp = NULL;
        }
        /* the window is in the kernel's launch graph too: made again with the kernel */
        if ((o.device_launch != x->opts.device_launch || o.launch_product_min != x->opts.launch_product_min ||
             o.l2_window != x->opts.l2_window) &&
            x->tried) {
            release_kernel(x);
            x->tried = 0;
            x->s.why_pause[0] = '\0';
        }
    }
    x->opts = o;
    return 0;
}

/* cfx_exec_backend_detail: which mode ran (or will run), and for the interpreter why and its
 * own path. */
static const char *comp_detail(void *self)
{
    comp_exec *x = (comp_exec *)self;
    const char *inner = x->interp && dev_persistent_ops.detail ? dev_persistent_ops.detail(x->interp) : NULL;
    const char *sep = inner ? "; " : "";
    char sites[640] = "";
    if (!inner)
        inner = "";
    if (x->info.launches > 0 && x->s.device_launch)
        snprintf(sites, sizeof sites,
                 "; %d record%s end%s the launch (a CALL of a binary kernel, a product for cuBLAS): device graph "
                 "launch: the kernel, the node of a device graph, tail-launches the record's pre-captured graph and "
                 "then itself, resuming after the record",
                 (int)x->info.launches, x->info.launches == 1 ? "" : "s", x->info.launches == 1 ? "s" : "");
    else if (x->info.launches > 0)
        snprintf(sites, sizeof sites,
                 "; %d record%s end%s the launch (a CALL of a binary kernel, a product for cuBLAS): pause and "
                 "relaunch (%s): the host runs the record's work and launches again",
                 (int)x->info.launches, x->info.launches == 1 ? "" : "s", x->info.launches == 1 ? "s" : "",
                 x->s.why_pause[0] ? x->s.why_pause : "the kernel's graph is made at the first run");
    if (x->info.inline_calls > 0)
        snprintf(sites + strlen(sites), sizeof sites - strlen(sites), "; %d call%s of kernels registered by their source "
                 "written inline", (int)x->info.inline_calls, x->info.inline_calls == 1 ? "" : "s");
    if (x->s.uploaded)
        dev_l2_describe(&x->s.d, sites + strlen(sites), sizeof sites - strlen(sites));
    if (x->want != MODE_COMPILED)
        snprintf(x->detail, sizeof x->detail, "interpreter, as asked%s%s", sep, inner);
    else if (x->rerun)
        snprintf(x->detail, sizeof x->detail,
                 "interpreter: the compiled kernel's print buffer overflowed, so the interpreter ran "
                 "the run again%s%s", sep, inner);
    else if (!x->ready)
        snprintf(x->detail, sizeof x->detail, "interpreter: %s%s%s",
                 x->tried ? x->why : "the compiled kernel is built at the first run", sep, inner);
    else
        snprintf(x->detail, sizeof x->detail,
                 "compiled kernel: one kernel of %d blocks x %d threads generated from the graph (%s, "
                 "%d one-block regions, %d grid barriers), built in %.0f ms (cache %s, %s); prints go "
                 "to a device buffer%s",
                 x->s.nblocks, x->threads, x->info.structured ? "structured" : "pc-dispatch loop",
                 (int)x->info.regions, (int)x->info.barriers, x->build_ms, x->cache, x->arch, sites);
    return x->detail;
}

/* The last run's hang report: the interpreter's when it ran the run, else the compiled kernel's,
 * taken from its blocks' progress words when the run was cancelled (hang_poll). */
static const char *comp_hang(void *self)
{
    comp_exec *x = (comp_exec *)self;
    if (x->in_interp)
        return x->interp && dev_persistent_ops.hang ? dev_persistent_ops.hang(x->interp) : "";
    return x->s.hang;
}

const exec_ops dev_compiled_ops = {
    CFX_BACKEND_CUDA_PERSISTENT, comp_available, comp_create, comp_run, comp_wait, comp_destroy,
    comp_detail,                 comp_mode,  comp_option, comp_hang, comp_prepare, comp_graph,
};
