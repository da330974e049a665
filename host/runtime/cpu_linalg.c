/* cpu_linalg.c: the cpu executor's matrix products, dots and sums over whole tensors.
 *
 * kernels/ holds the reference bodies every executor shares (k_matmul, k_dot_range,
 * k_reduce_range), written one output element at a time. On the CPU these run here instead,
 * in one of two accumulation modes (cfx.h, CFX_OPTION_ACCUMULATE):
 *
 * - CPU_ACC_F64, the reference: results bit-identical to the kernels/ bodies. An f32 product
 *   accumulates each output element in double, in the order t = 0, 1, ..., k-1, and rounds
 *   once. The loops are reordered (i, t, j over a row of double accumulators, rows in blocks)
 *   so that they stream and vectorise across j, but every element still sees the same
 *   additions in the same order, so nothing a test can see changes.
 * - CPU_ACC_FAST, the default: what numpy and PyTorch do. f32 and f64 products (matmul,
 *   matrix-vector, vector-matrix, dot) go to the CBLAS found at configure (CFX_HAVE_CBLAS:
 *   OpenBLAS, threaded as it is), accumulating f32 in f32 in the BLAS's order; without a
 *   BLAS, to cfx's own blocked kernels below, which accumulate f32 in f32 too. The BLAS is
 *   opened (dlopen, by its soname, then by the path configure found) at the first product of
 *   the fast mode, not linked: a program that makes none never loads it, and where it cannot
 *   be opened the own kernels run. Sums, means
 *   and norms of f32 still accumulate in double (in 16 partial sums, which vectorise): as
 *   fast as f32 partial sums, and closer to the exact result than numpy's. Over large tensors
 *   they, cfx's own dots and the extremes run on the executor's threads, in fixed chunks
 *   combined in order, so the thread count never changes a result ("sums and dots in chunks").
 *
 * Integer products wrap (two's complement), so any order gives the same bits: both modes run
 * the blocked loop, accumulating i32 in uint32 and i64 in uint64.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_linalg.h"
#include "kernels/kernels.h"
#include "pool.h"

#ifdef CFX_HAVE_CBLAS
#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>
#endif

/* Columns of one block of accumulators (a row of them per row of A in the block). */
#define JB 256
/* Rows of A that share one pass over a block of B. */
#define IB 4
/* Rows of B (the reduction dimension) per pass, so that a block of B stays in L2. */
#define KB 256

/* ---- OpenBLAS's kernel set ---------------------------------------------------------------- */
/* OpenBLAS's kernel sets (its openblas_get_corename() names, the names OPENBLAS_CORETYPE takes)
 * by the instructions they use: 0, none beyond AVX (or a fallback such as "Prescott" for a
 * processor this OpenBLAS does not know); 2, AVX2 and FMA; 3, AVX-512. Excavator is left
 * out: a processor with AVX2 that OpenBLAS calls Excavator is one (its own kernels). */
static const struct {
    const char *name;
    int level;
} coretypes[] = {
    {"Unknown", 0},   {"Katmai", 0},       {"Coppermine", 0}, {"Northwood", 0},   {"Prescott", 0},
    {"Banias", 0},    {"Atom", 0},         {"Core2", 0},      {"Penryn", 0},      {"Dunnington", 0},
    {"Nehalem", 0},   {"Athlon", 0},       {"Opteron", 0},    {"Opteron_SSE3", 0}, {"Barcelona", 0},
    {"Nano", 0},      {"Sandybridge", 0},  {"Bobcat", 0},     {"Bulldozer", 0},   {"Piledriver", 0},
    {"Steamroller", 0}, {"Haswell", 2},    {"Zen", 2},        {"SkylakeX", 3},    {"Cooperlake", 3},
    {"SapphireRapids", 3},
};

static int same_name(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if ((*a | 0x20) != (*b | 0x20)) /* ASCII letters, digits and '_' */
            return 0;
    return *a == *b;
}

/* The level of a kernel set's name, -1 for a name not in the list. */
static int coretype_level(const char *name)
{
    for (size_t i = 0; i < sizeof coretypes / sizeof coretypes[0]; i++)
        if (same_name(name, coretypes[i].name))
            return coretypes[i].level;
    return -1;
}

int cpu_blas_features(void)
{
    int f = 0;
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    /* libgcc's (and compiler-rt's) answers count AVX and AVX-512 only where the OS saves their
     * registers (XGETBV's XCR0), as OpenBLAS's own detection does */
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        f |= CPU_HAS_AVX2_FMA;
    if ((f & CPU_HAS_AVX2_FMA) && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        f |= CPU_HAS_AVX512;
#endif
    return f;
}

const char *cpu_blas_coretype_choice(int features, const char *corename, const char *openblas_coretype,
                                     const char *cfx_coretype, const char **why)
{
    static const char *ignore;
    if (!why)
        why = &ignore;
    int has = !(features & CPU_HAS_AVX2_FMA) ? 0 : features & CPU_HAS_AVX512 ? 3 : 2;
    if (!corename) {
        *why = "not OpenBLAS";
        return NULL;
    }
    if (openblas_coretype) { /* even empty: OpenBLAS reads it as it is */
        *why = "OPENBLAS_CORETYPE is set";
        return NULL;
    }
    if (cfx_coretype && same_name(cfx_coretype, "off")) {
        *why = "CFX_BLAS_CORETYPE=off";
        return NULL;
    }
    if (cfx_coretype && *cfx_coretype) {
        int level = coretype_level(cfx_coretype);
        if (level < 0) {
            *why = "CFX_BLAS_CORETYPE is not a kernel set cfx knows (Haswell, SkylakeX, Zen, ...): not used";
            return NULL;
        }
        if (level > has) {
            *why = "CFX_BLAS_CORETYPE names kernels this processor cannot run: not used";
            return NULL;
        }
        if (same_name(cfx_coretype, corename)) {
            *why = "CFX_BLAS_CORETYPE, OpenBLAS's own choice too";
            return NULL;
        }
        *why = "chosen by CFX_BLAS_CORETYPE";
        return cfx_coretype;
    }
    if (coretype_level(corename) != 0 || has < 2) {
        *why = "OpenBLAS's own choice";
        return NULL;
    }
    *why = "chosen by cfx: this OpenBLAS does not know the processor";
    return has == 3 ? "SkylakeX" : "Haswell";
}

#ifdef CFX_HAVE_CBLAS
/* The CBLAS's functions, typed by its own header. */
static struct {
    __typeof__(cblas_sgemm) *sgemm;
    __typeof__(cblas_dgemm) *dgemm;
    __typeof__(cblas_sgemv) *sgemv;
    __typeof__(cblas_dgemv) *dgemv;
    __typeof__(cblas_sdot) *sdot;
    __typeof__(cblas_ddot) *ddot;
} blas;
static int blas_loaded, blas_off;
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
/* what cpu_blas_describe says, filled once by blas_load */
static char blas_info[320];

/* The BLAS's own thread count, set through its setter (OpenBLAS's or BLIS's, where the library
 * has one) to the executor's count before a product: blas_threads_set is the count last set,
 * under blas_threads_mu (the setter is the process's, and not safe to call from two threads). */
static void (*openblas_set_threads)(int);
static void (*blis_set_threads)(int64_t); /* BLIS's dim_t: a 64-bit integer in its builds */
static int blas_threads_set;
static pthread_mutex_t blas_threads_mu = PTHREAD_MUTEX_INITIALIZER;

static void blas_threads_lookup(void *h)
{
    *(void **)&openblas_set_threads = dlsym(h, "openblas_set_num_threads");
    *(void **)&blis_set_threads = openblas_set_threads ? NULL : dlsym(h, "bli_thread_set_num_threads");
}

/* The six functions of h into blas; 1 when every one is there. */
static int blas_bind(void *h)
{
    *(void **)&blas.sgemm = dlsym(h, "cblas_sgemm");
    *(void **)&blas.dgemm = dlsym(h, "cblas_dgemm");
    *(void **)&blas.sgemv = dlsym(h, "cblas_sgemv");
    *(void **)&blas.dgemv = dlsym(h, "cblas_dgemv");
    *(void **)&blas.sdot = dlsym(h, "cblas_sdot");
    *(void **)&blas.ddot = dlsym(h, "cblas_ddot");
    return blas.sgemm && blas.dgemm && blas.sgemv && blas.dgemv && blas.sdot && blas.ddot;
}

static const char *openblas_core(void *h)
{
    const char *(*corename)(void);
    *(void **)&corename = dlsym(h, "openblas_get_corename");
    return corename ? corename() : NULL;
}

/* "OpenBLAS 0.3.21", "BLIS 0.9.0" or "a CBLAS", into buf. */
static void blas_version(void *h, char *buf, size_t len)
{
    const char *(*text)(void);
    *(void **)&text = dlsym(h, "openblas_get_config"); /* "OpenBLAS 0.3.21 DYNAMIC_ARCH ..." */
    if (text && text()) {
        const char *c = text(), *sp = strchr(c, ' ');
        sp = sp ? strchr(sp + 1, ' ') : NULL;
        snprintf(buf, len, "%.*s", sp ? (int)(sp - c) : 40, c);
        return;
    }
    *(void **)&text = dlsym(h, "bli_info_get_version_str");
    snprintf(buf, len, text ? "BLIS %.40s" : "a CBLAS", text ? text() : "");
}

/* Opens the CBLAS; where it is an OpenBLAS that took kernels older than the processor's (one
 * that does not know the processor falls back to Prescott's SSE3 kernels, 3 to 5x slower than
 * its AVX-512 ones), opens it again with OPENBLAS_CORETYPE set to the kernels
 * cpu_blas_coretype_choice picks. OpenBLAS reads the variable once, as it is loaded, so the
 * variable is set just for the second dlopen and unset again. It cannot work where something
 * else in the process loaded the library first (dlclose then leaves it in place): then it is
 * not tried. */
static void blas_load(void)
{
    static const char *const names[] = {CFX_CBLAS_SONAME, CFX_CBLAS_PATH};
    const char *name = NULL, *err = NULL;
    void *h = NULL;
    int earlier = 0;
    for (int i = 0; i < 2 && !h; i++) {
        void *had = dlopen(names[i], RTLD_NOW | RTLD_NOLOAD);
        if (had) {
            earlier = 1;
            dlclose(had);
        }
        h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            err = dlerror();
        } else if (!blas_bind(h)) {
            dlclose(h);
            h = NULL;
            err = "it lacks a CBLAS function";
        }
        if (h)
            name = names[i];
    }
    if (!h) {
        snprintf(blas_info, sizeof blas_info, "none: %s cannot be opened (%.200s); products run cfx's own kernels",
                 CFX_CBLAS_SONAME, err ? err : "?");
        return;
    }
    char version[64], core[40] = "";
    blas_version(h, version, sizeof version);
    const char *why = "", *have = openblas_core(h);
    if (have)
        snprintf(core, sizeof core, "%s", have);
    const char *want = cpu_blas_coretype_choice(cpu_blas_features(), have, getenv("OPENBLAS_CORETYPE"),
                                                getenv("CFX_BLAS_CORETYPE"), &why);
    char note[160] = "";
    if (want && earlier) {
        snprintf(note, sizeof note, "kept: %s was loaded before cfx's first product, so cfx could not "
                 "choose %s", name, want);
        want = NULL;
    }
    if (want) {
        char wanted[40];
        snprintf(wanted, sizeof wanted, "%s", want); /* want may be getenv's, changed below */
        dlclose(h);
        setenv("OPENBLAS_CORETYPE", wanted, 1);
        h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        unsetenv("OPENBLAS_CORETYPE");
        if (h && !blas_bind(h)) {
            dlclose(h);
            h = NULL;
        }
        if (!h) { /* as it opened the first time, then */
            h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
            if (!h || !blas_bind(h)) {
                if (h)
                    dlclose(h);
                snprintf(blas_info, sizeof blas_info, "none: %s did not open again; products run cfx's "
                         "own kernels (CFX_BLAS_CORETYPE=off leaves OpenBLAS's kernels as they are)", name);
                return;
            }
        }
        have = openblas_core(h);
        if (have && same_name(have, wanted))
            snprintf(note, sizeof note, "%s; OpenBLAS's own choice: %s, which CFX_BLAS_CORETYPE=off keeps", why,
                     core);
        else
            snprintf(note, sizeof note, "OpenBLAS's own: cfx asked for %s (%s), and this OpenBLAS did not "
                     "take it", wanted, why);
        snprintf(core, sizeof core, "%s", have ? have : "?");
    } else if (!note[0]) {
        snprintf(note, sizeof note, "%s", why);
    }
    if (core[0])
        snprintf(blas_info, sizeof blas_info, "%s (%s), kernels %s (%s)", version, name, core, note);
    else
        snprintf(blas_info, sizeof blas_info, "%s (%s)", version, name);
    blas_threads_lookup(h); /* from the handle kept: a first one closed above is gone */
    blas_loaded = 1;
}

/* 1 when the products of the fast mode go to the BLAS (opening it the first time). */
static int use_blas(void)
{
    if (blas_off)
        return 0;
    pthread_once(&blas_once, blas_load);
    return blas_loaded;
}
#endif

const char *cpu_blas_built(void)
{
#ifdef CFX_HAVE_CBLAS
    return CFX_CBLAS_SONAME;
#else
    return NULL;
#endif
}

void cpu_blas_describe(char *buf, size_t len)
{
#ifdef CFX_HAVE_CBLAS
    pthread_once(&blas_once, blas_load);
    snprintf(buf, len, "%s", blas_info);
#else
    snprintf(buf, len, "none: cfx was built without a CBLAS; products run cfx's own blocked kernels");
#endif
}

int cpu_have_blas(void)
{
#ifdef CFX_HAVE_CBLAS
    return use_blas();
#else
    return 0;
#endif
}

void cpu_blas_threads(int threads)
{
#ifdef CFX_HAVE_CBLAS
    if (threads < 1 || !use_blas() || !(openblas_set_threads || blis_set_threads))
        return;
    pthread_mutex_lock(&blas_threads_mu);
    if (threads != blas_threads_set) {
        if (openblas_set_threads)
            openblas_set_threads(threads);
        else
            blis_set_threads(threads);
        blas_threads_set = threads;
    }
    pthread_mutex_unlock(&blas_threads_mu);
#else
    (void)threads;
#endif
}

void cpu_blas_off(int off)
{
#ifdef CFX_HAVE_CBLAS
    blas_off = off;
#else
    (void)off;
#endif
}

/* ---- the reference products (bit-identical to k_matmul) ---------------------------------- */
#define REF_PRODUCT(NAME, T)                                                                      \
    static void NAME(T *dst, const T *a, const T *b, int64_t m, int64_t k, int64_t n)             \
    {                                                                                             \
        double acc[IB][JB];                                                                       \
        for (int64_t i0 = 0; i0 < m; i0 += IB) {                                                  \
            int64_t ni = m - i0 < IB ? m - i0 : IB;                                               \
            for (int64_t j0 = 0; j0 < n; j0 += JB) {                                              \
                int64_t nj = n - j0 < JB ? n - j0 : JB;                                           \
                for (int64_t i = 0; i < ni; i++)                                                  \
                    for (int64_t j = 0; j < nj; j++)                                              \
                        acc[i][j] = 0.0;                                                          \
                for (int64_t t = 0; t < k; t++) {                                                 \
                    const T *bt = b + t * n + j0;                                                 \
                    for (int64_t i = 0; i < ni; i++) {                                            \
                        double av = (double)a[(i0 + i) * k + t];                                  \
                        double *ac = acc[i];                                                      \
                        for (int64_t j = 0; j < nj; j++)                                          \
                            ac[j] += av * (double)bt[j];                                          \
                    }                                                                             \
                }                                                                                 \
                for (int64_t i = 0; i < ni; i++)                                                  \
                    for (int64_t j = 0; j < nj; j++)                                              \
                        dst[(i0 + i) * n + j0 + j] = (T)acc[i][j];                                \
            }                                                                                     \
        }                                                                                         \
    }
REF_PRODUCT(ref_product_f32, float)
REF_PRODUCT(ref_product_f64, double)

/* [m,k] @ [k]: one sequential double sum per row, as k_matmul's. */
#define REF_MATVEC(NAME, T)                                                                       \
    static void NAME(T *dst, const T *a, const T *x, int64_t m, int64_t k)                        \
    {                                                                                             \
        for (int64_t i = 0; i < m; i++) {                                                         \
            const T *row = a + i * k;                                                             \
            double s = 0.0;                                                                       \
            for (int64_t t = 0; t < k; t++)                                                       \
                s += (double)row[t] * (double)x[t];                                               \
            dst[i] = (T)s;                                                                        \
        }                                                                                         \
    }
REF_MATVEC(ref_matvec_f32, float)
REF_MATVEC(ref_matvec_f64, double)

/* ---- integer products (exact in any order: they wrap) ------------------------------------- */
#define INT_PRODUCT(NAME, T, U)                                                                   \
    static void NAME(T *dst, const T *a, const T *b, int64_t m, int64_t k, int64_t n)             \
    {                                                                                             \
        U *d = (U *)dst;                                                                          \
        memset(d, 0, (size_t)(m * n) * sizeof(U));                                                \
        for (int64_t t0 = 0; t0 < k; t0 += KB) {                                                  \
            int64_t t1 = k - t0 < KB ? k : t0 + KB;                                               \
            for (int64_t i = 0; i < m; i++) {                                                     \
                U *di = d + i * n;                                                                \
                for (int64_t t = t0; t < t1; t++) {                                               \
                    U av = (U)a[i * k + t];                                                       \
                    const T *bt = b + t * n;                                                      \
                    for (int64_t j = 0; j < n; j++)                                               \
                        di[j] += av * (U)bt[j];                                                   \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    }
INT_PRODUCT(int_product_i32, int32_t, uint32_t)
INT_PRODUCT(int_product_i64, int64_t, uint64_t)

/* ---- cfx's own fast products (no BLAS): accumulate in T, blocked, vectorisable ------------ */
/* A dot of n elements in 16 partial sums (a loop GCC and Clang vectorise at -O2/-O3 without
 * reassociating anything themselves), then the partials in a fixed tree. */
#define FAST_DOT(NAME, T)                                                                         \
    static T NAME(const T *a, const T *b, int64_t n)                                              \
    {                                                                                             \
        T p[16];                                                                                  \
        for (int l = 0; l < 16; l++)                                                              \
            p[l] = 0;                                                                             \
        int64_t e = 0;                                                                            \
        for (; e + 16 <= n; e += 16)                                                              \
            for (int l = 0; l < 16; l++)                                                          \
                p[l] += a[e + l] * b[e + l];                                                      \
        for (; e < n; e++)                                                                        \
            p[e & 15] += a[e] * b[e];                                                             \
        for (int w = 8; w > 0; w /= 2)                                                            \
            for (int l = 0; l < w; l++)                                                           \
                p[l] += p[l + w];                                                                 \
        return p[0];                                                                              \
    }
FAST_DOT(fast_dot_f32, float)
FAST_DOT(fast_dot_f64, double)

#define FAST_PRODUCT(NAME, T)                                                                     \
    static void NAME(T *dst, const T *a, const T *b, int64_t m, int64_t k, int64_t n)             \
    {                                                                                             \
        memset(dst, 0, (size_t)(m * n) * sizeof(T));                                              \
        for (int64_t t0 = 0; t0 < k; t0 += KB) {                                                  \
            int64_t t1 = k - t0 < KB ? k : t0 + KB;                                               \
            for (int64_t j0 = 0; j0 < n; j0 += JB) {                                              \
                int64_t nj = n - j0 < JB ? n - j0 : JB;                                           \
                for (int64_t i0 = 0; i0 < m; i0 += IB) {                                          \
                    int64_t ni = m - i0 < IB ? m - i0 : IB;                                       \
                    for (int64_t i = 0; i < ni; i++) {                                            \
                        T *di = dst + (i0 + i) * n + j0;                                          \
                        const T *ai = a + (i0 + i) * k;                                           \
                        for (int64_t t = t0; t < t1; t++) {                                       \
                            T av = ai[t];                                                         \
                            const T *bt = b + t * n + j0;                                         \
                            for (int64_t j = 0; j < nj; j++)                                      \
                                di[j] += av * bt[j];                                              \
                        }                                                                         \
                    }                                                                             \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    }
FAST_PRODUCT(fast_product_f32, float)
FAST_PRODUCT(fast_product_f64, double)

/* ---- entry points ------------------------------------------------------------------------- */
void cpu_matmul(int dtype, int mode, void *dst, const void *a, const void *b, int64_t m, int64_t k,
                int64_t n)
{
    if (m <= 0 || n <= 0)
        return;
    switch (dtype) {
    case K_I32: int_product_i32(dst, a, b, m, k, n); return;
    case K_I64: int_product_i64(dst, a, b, m, k, n); return;
    case K_F32:
    case K_F64: break;
    default: k_matmul(dtype, dst, a, b, m, k, n, 0, m * n); return;
    }
    int f32 = dtype == K_F32;
    if (k <= 0) {
        memset(dst, 0, (size_t)(m * n) * (f32 ? 4 : 8));
        return;
    }
    if (mode == CPU_ACC_F64) {
        if (n == 1)
            f32 ? ref_matvec_f32(dst, a, b, m, k) : ref_matvec_f64(dst, a, b, m, k);
        else
            f32 ? ref_product_f32(dst, a, b, m, k, n) : ref_product_f64(dst, a, b, m, k, n);
        return;
    }
#ifdef CFX_HAVE_CBLAS
    /* row-major: [m,k] @ [k] is gemv; [1,k] @ [k,n] is gemv on B transposed (x^T B); the
     * BLAS takes int dimensions (the validator bounds a slot's elements far below) */
    if (m <= INT32_MAX / 2 && k <= INT32_MAX / 2 && n <= INT32_MAX / 2 && use_blas()) {
        int im = (int)m, ik = (int)k, in = (int)n;
        if (f32) {
            if (n == 1)
                blas.sgemv(CblasRowMajor, CblasNoTrans, im, ik, 1.0f, a, ik, b, 1, 0.0f, dst, 1);
            else if (m == 1)
                blas.sgemv(CblasRowMajor, CblasTrans, ik, in, 1.0f, b, in, a, 1, 0.0f, dst, 1);
            else
                blas.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, im, in, ik, 1.0f, a, ik, b, in,
                           0.0f, dst, in);
        } else {
            if (n == 1)
                blas.dgemv(CblasRowMajor, CblasNoTrans, im, ik, 1.0, a, ik, b, 1, 0.0, dst, 1);
            else if (m == 1)
                blas.dgemv(CblasRowMajor, CblasTrans, ik, in, 1.0, b, in, a, 1, 0.0, dst, 1);
            else
                blas.dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, im, in, ik, 1.0, a, ik, b, in,
                           0.0, dst, in);
        }
        return;
    }
#endif
    if (n == 1) {
        for (int64_t i = 0; i < m; i++)
            if (f32)
                ((float *)dst)[i] = fast_dot_f32((const float *)a + i * k, b, k);
            else
                ((double *)dst)[i] = fast_dot_f64((const double *)a + i * k, b, k);
    } else {
        f32 ? fast_product_f32(dst, a, b, m, k, n) : fast_product_f64(dst, a, b, m, k, n);
    }
}

int64_t cpu_matmul_band(int dtype, int mode, int64_t m, int64_t k, int64_t n)
{
    int64_t per_row = (k > 0 ? k : 1) * (n > 0 ? n : 1), budget = (int64_t)1 << 24, least = 1;
#ifdef CFX_HAVE_CBLAS
    if (mode == CPU_ACC_FAST && (dtype == K_F32 || dtype == K_F64) && use_blas()) {
        budget = (int64_t)1 << 30;
        least = 256;
    }
#endif
    int64_t band = budget / per_row;
    if (band < least)
        band = least;
    return band < m ? band : m > 0 ? m : 1;
}

/* Sum of n reals (x*x for squares) in double, in 16 partial sums. */
#define FAST_SUM(NAME, T)                                                                         \
    static double NAME(const T *x, int64_t n, int squares)                                        \
    {                                                                                             \
        double p[16];                                                                             \
        for (int l = 0; l < 16; l++)                                                              \
            p[l] = 0.0;                                                                           \
        int64_t e = 0;                                                                            \
        if (squares)                                                                              \
            for (; e + 16 <= n; e += 16)                                                          \
                for (int l = 0; l < 16; l++)                                                      \
                    p[l] += (double)x[e + l] * (double)x[e + l];                                  \
        else                                                                                      \
            for (; e + 16 <= n; e += 16)                                                          \
                for (int l = 0; l < 16; l++)                                                      \
                    p[l] += (double)x[e + l];                                                     \
        for (; e < n; e++)                                                                        \
            p[e & 15] += squares ? (double)x[e] * (double)x[e] : (double)x[e];                    \
        for (int w = 8; w > 0; w /= 2)                                                            \
            for (int l = 0; l < w; l++)                                                           \
                p[l] += p[l + w];                                                                 \
        return p[0];                                                                              \
    }
FAST_SUM(fast_sum_f32, float)
FAST_SUM(fast_sum_f64, double)

/* First position of the extreme of n reals, the first NaN if any (k_extreme_better's rule). */
#define EXTREME(NAME, T)                                                                          \
    static int64_t NAME(const T *x, int64_t n, int want_max)                                      \
    {                                                                                             \
        int64_t at = 0;                                                                           \
        T best = x[0];                                                                            \
        if (best != best)                                                                         \
            return 0;                                                                             \
        for (int64_t e = 1; e < n; e++) {                                                         \
            T v = x[e];                                                                           \
            if (v != v)                                                                           \
                return e;                                                                         \
            if (want_max ? v > best : v < best) {                                                 \
                best = v;                                                                         \
                at = e;                                                                           \
            }                                                                                     \
        }                                                                                         \
        return at;                                                                                \
    }
EXTREME(extreme_f32, float)
EXTREME(extreme_f64, double)

/* ---- sums and dots in chunks, over threads ------------------------------------------------
 * The fast mode's sums, means, norms and (without a BLAS) dots of more than SUM_CHUNK elements
 * are the sum, in chunk order, of the partial sums of SUM_CHUNK-long chunks: the chunks are
 * split over the executor's threads (host/runtime/pool.c), each thread a run of whole chunks,
 * and the partials are added on the calling thread in order, so the result is the same bits
 * whatever the thread count. The reference mode (CPU_ACC_F64) stays on the calling thread, in
 * the kernels/ order. */
#define SUM_CHUNK 16384
/* Chunks per part at least (SUM_CHUNK * SUM_GRAIN = 524288 elements, about 100 to 250 us of
 * summing on one core): a sum splits from twice that, as the cheap elementwise ops do (cpu.c,
 * SPLIT_CHEAP); on an idle machine two threads summed 262144 elements at 0.53x the speed of one
 * and 1048576 at 1.14x (profiling/results/2026-11-29-cpu-threads.md). */
#define SUM_GRAIN 32
/* Partials kept on the stack; more chunks than this take an allocation. */
#define SUM_STACK 256

enum { SUM_F32, SUM_F64, SQUARES_F32, SQUARES_F64, DOT_F32, DOT_F64 };

typedef struct sum_job {
    int what; /* SUM_F32 ... */
    const void *a, *b;
    int64_t n;
    double *partial; /* chunk c's, where they are kept */
} sum_job;

/* Chunk c's partial sum: a double, but DOT_F32's an f32 (exact as a double). */
static double chunk_sum(const sum_job *j, int64_t c)
{
    int64_t e = c * SUM_CHUNK, len = j->n - e < SUM_CHUNK ? j->n - e : SUM_CHUNK;
    const float *af = (const float *)j->a + e;
    const double *ad = (const double *)j->a + e;
    switch (j->what) { /* b is NULL but for the dots */
    case SUM_F32: return fast_sum_f32(af, len, 0);
    case SUM_F64: return fast_sum_f64(ad, len, 0);
    case SQUARES_F32: return fast_sum_f32(af, len, 1);
    case SQUARES_F64: return fast_sum_f64(ad, len, 1);
    case DOT_F32: return (double)fast_dot_f32(af, (const float *)j->b + e, len);
    default: return fast_dot_f64(ad, (const double *)j->b + e, len);
    }
}

static void sum_part(void *ctx, int part, int64_t lo, int64_t hi)
{
    sum_job *j = ctx;
    (void)part;
    for (int64_t c = lo; c < hi; c++)
        j->partial[c] = chunk_sum(j, c);
}

/* The chunked sum (dot, sum of squares) of j->n > 0 elements, the partials added in chunk
 * order: in double, but DOT_F32's in f32 (returned as a double, exactly). */
static double chunked_sum(sum_job *j, int threads)
{
    int64_t chunks = (j->n + SUM_CHUNK - 1) / SUM_CHUNK;
    double stack[SUM_STACK], *heap = NULL;
    int split = pool_parts(chunks, SUM_GRAIN, threads) > 1;
    if (split && chunks > SUM_STACK)
        heap = malloc((size_t)chunks * sizeof(double));
    if (split && (heap || chunks <= SUM_STACK)) {
        j->partial = heap ? heap : stack;
        pool_for(chunks, SUM_GRAIN, threads, sum_part, j);
    } else {
        j->partial = NULL; /* one thread: each partial added as it is made, in the same order */
    }
    double s = 0.0;
    float sf = 0.0f;
    for (int64_t c = 0; c < chunks; c++) {
        double p = j->partial ? j->partial[c] : chunk_sum(j, c);
        if (j->what == DOT_F32)
            sf = c == 0 ? (float)p : sf + (float)p;
        else
            s = c == 0 ? p : s + p;
    }
    free(heap);
    return j->what == DOT_F32 ? (double)sf : s;
}

void cpu_dot(int dtype, int mode, void *dst, const void *a, const void *b, int64_t n)
{
    cpu_dot_threads(dtype, mode, 1, dst, a, b, n);
}

void cpu_dot_threads(int dtype, int mode, int threads, void *dst, const void *a, const void *b, int64_t n)
{
    if (mode == CPU_ACC_FAST && (dtype == K_F32 || dtype == K_F64)) {
#ifdef CFX_HAVE_CBLAS
        if (n > 0 && n <= INT32_MAX && use_blas()) {
            if (dtype == K_F32)
                *(float *)dst = blas.sdot((int)n, a, 1, b, 1);
            else
                *(double *)dst = blas.ddot((int)n, a, 1, b, 1);
            return;
        }
#endif
        sum_job j = {dtype == K_F32 ? DOT_F32 : DOT_F64, a, b, n, NULL};
        double s = n > 0 ? chunked_sum(&j, threads) : 0.0;
        if (dtype == K_F32)
            *(float *)dst = (float)s;
        else
            *(double *)dst = s;
        return;
    }
    k_acc acc = k_reduce_init(OP_SUM, dtype);
    k_dot_range(dtype, &acc, a, b, 0, n);
    k_dot_finish(dtype, &acc, dst);
}

/* max, min, argmax and argmin of more than EXTREME_SPLIT elements split into contiguous parts,
 * each finding its own first extreme (or first NaN), combined in part order with the same rule:
 * the first part's NaN, else the first strict improvement, so the position is the one
 * extreme_f32 finds over the whole (one comparison an element, about 0.5 ns on one core). */
#define EXTREME_SPLIT 262144

typedef struct extreme_job {
    int f32, want_max;
    const void *x;
    int64_t at[POOL_MAX_THREADS * POOL_PARTS_PER_THREAD]; /* each part's position */
} extreme_job;

static void extreme_part(void *ctx, int part, int64_t lo, int64_t hi)
{
    extreme_job *j = ctx;
    j->at[part] = lo + (j->f32 ? extreme_f32((const float *)j->x + lo, hi - lo, j->want_max)
                               : extreme_f64((const double *)j->x + lo, hi - lo, j->want_max));
}

static int64_t extreme_threads(int f32, const void *x, int64_t n, int want_max, int threads)
{
    if (threads <= 1 || n < EXTREME_SPLIT)
        return f32 ? extreme_f32(x, n, want_max) : extreme_f64(x, n, want_max);
    extreme_job *j = malloc(sizeof *j);
    if (!j)
        return f32 ? extreme_f32(x, n, want_max) : extreme_f64(x, n, want_max);
    j->f32 = f32;
    j->want_max = want_max;
    j->x = x;
    int parts = pool_for(n, EXTREME_SPLIT / 2, threads, extreme_part, j);
    int64_t at = j->at[0];
    for (int p = 0; p < parts; p++) {
        int64_t q = j->at[p];
        double v = f32 ? ((const float *)x)[q] : ((const double *)x)[q];
        double best = f32 ? ((const float *)x)[at] : ((const double *)x)[at];
        if (v != v) { /* this part's first NaN, and none before it */
            at = q;
            break;
        }
        if (want_max ? v > best : v < best)
            at = q;
    }
    free(j);
    return at;
}

void cpu_reduce(int op, int dtype, int mode, void *dst, const void *src, int64_t n)
{
    cpu_reduce_threads(op, dtype, mode, 1, dst, src, n);
}

void cpu_reduce_threads(int op, int dtype, int mode, int threads, void *dst, const void *src, int64_t n)
{
    int real = dtype == K_F32 || dtype == K_F64;
    if (real && n > 0 && (op == OP_RMAX || op == OP_RMIN || op == OP_ARGMAX || op == OP_ARGMIN)) {
        /* the same position and value as the reference, in any mode */
        int want_max = op == OP_RMAX || op == OP_ARGMAX;
        int64_t at = extreme_threads(dtype == K_F32, src, n, want_max, mode == CPU_ACC_FAST ? threads : 1);
        if (op == OP_ARGMAX || op == OP_ARGMIN)
            *(int32_t *)dst = (int32_t)at;
        else if (dtype == K_F32)
            *(float *)dst = ((const float *)src)[at];
        else
            *(double *)dst = ((const double *)src)[at];
        return;
    }
    if (mode == CPU_ACC_FAST && real && (op == OP_SUM || op == OP_MEAN || op == OP_NORM)) {
        int f32 = dtype == K_F32, sq = op == OP_NORM;
        sum_job j = {f32 ? (sq ? SQUARES_F32 : SUM_F32) : (sq ? SQUARES_F64 : SUM_F64), src, NULL, n, NULL};
        double s = n > 0 ? chunked_sum(&j, threads) : 0.0;
        if (op == OP_MEAN)
            s = n > 0 ? s / (double)n : 0.0;
        else if (op == OP_NORM)
            s = sqrt(s);
        if (dtype == K_F32)
            *(float *)dst = (float)s;
        else
            *(double *)dst = s;
        return;
    }
    k_acc acc = k_reduce_init(op, dtype);
    k_reduce_range(op, dtype, &acc, src, 0, n);
    k_reduce_finish(op, dtype, &acc, n, dst);
}

void cpu_reduce_rows(int op, int dtype, int mode, void *dst, const void *src, int64_t rows, int64_t n)
{
    int size = dtype == K_F64 || dtype == K_I64 ? 8 : dtype == K_BOOL ? 1 : 4;
    int out = op == OP_ARGMAX || op == OP_ARGMIN ? 4 : op == OP_ALL || op == OP_ANY ? 1 : size;
    if (mode == CPU_ACC_FAST && (dtype == K_F32 || dtype == K_F64) && (op == OP_SUM || op == OP_MEAN) && n > 0 &&
        n <= SUM_CHUNK) {
        /* one chunk a row: what chunked_sum gives for it, without its set-up per row */
        for (int64_t r = 0; r < rows; r++) {
            double s = dtype == K_F32 ? fast_sum_f32((const float *)src + r * n, n, 0)
                                      : fast_sum_f64((const double *)src + r * n, n, 0);
            if (op == OP_MEAN)
                s = s / (double)n;
            if (dtype == K_F32)
                ((float *)dst)[r] = (float)s;
            else
                ((double *)dst)[r] = s;
        }
        return;
    }
    for (int64_t r = 0; r < rows; r++)
        cpu_reduce(op, dtype, mode, (char *)dst + r * out, (const char *)src + r * n * size, n);
}
