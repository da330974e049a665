/* test_cpu_linalg.c: the cpu executor's products, dots and reductions (host/runtime/cpu_linalg.c) in
 * both accumulation modes, and the option that picks the mode (C API, $CFX_ACCUMULATE).
 *
 * - the f64 mode (the reference) gives exactly the bits of the kernels/ bodies, which compute
 *   one output element at a time (k_matmul, k_dot_range, k_reduce_range), on shapes around
 *   the blocks' edges, for every dtype;
 * - the fast mode (a CBLAS, and cfx's own kernels) is within the error bound of a sum of k
 *   products rounded in the result's dtype: |c - exact| <= (k + 2) u sum_t |a_it b_tj|, with
 *   u = 2^-24 for f32 and 2^-53 for f64, the exact value and the bound in long double;
 *   integer products and the extremes (max, argmax, with NaN) are exact in both modes;
 * - small products worked by hand, in both modes;
 * - the choice of OpenBLAS's kernel set (cpu_blas_coretype_choice) on made-up processors,
 *   OpenBLAS core names and environments, worked by hand from its rule (cpu_linalg.h); and
 *   through `cfx backends` with $CFX_BLAS_CORETYPE, where this machine's OpenBLAS can show it;
 * - cfx_set_option(CFX_OPTION_ACCUMULATE) and $CFX_ACCUMULATE on a cpu executor: each mode gives
 *   that mode's result of a dot whose f32 accumulation loses what the double one keeps; other
 *   values are refused.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "host/runtime/cpu_linalg.h"
#include "kernels/kernels.h"
#include "testutil.h"

static uint64_t rng_state = 88172645463325252ull;

static uint64_t next_u64(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* uniform in [-1, 1) for reals; integers in a range that overflows i32 products now and then */
static void fill(int dtype, void *p, int64_t n)
{
    for (int64_t e = 0; e < n; e++) {
        double u = (double)(next_u64() >> 11) / 9007199254740992.0 * 2.0 - 1.0;
        switch (dtype) {
        case K_F32: ((float *)p)[e] = (float)u; break;
        case K_F64: ((double *)p)[e] = u; break;
        case K_I32: ((int32_t *)p)[e] = (int32_t)(next_u64() >> 40) - (1 << 23); break;
        case K_I64: ((int64_t *)p)[e] = (int64_t)(next_u64() >> 8) - ((int64_t)1 << 55); break;
        }
    }
}

static double get(int dtype, const void *p, int64_t e)
{
    return dtype == K_F32 ? ((const float *)p)[e] : ((const double *)p)[e];
}

/* fast-mode result c (m x n) against the exact product of a and b: within the bound */
static int within_bound(int dtype, const void *c, const void *a, const void *b, int64_t m, int64_t k,
                        int64_t n)
{
    long double u = dtype == K_F32 ? ldexpl(1.0L, -24) : ldexpl(1.0L, -53);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            long double exact = 0, mag = 0;
            for (int64_t t = 0; t < k; t++) {
                long double p = (long double)get(dtype, a, i * k + t) * (long double)get(dtype, b, t * n + j);
                exact += p;
                mag += fabsl(p);
            }
            long double err = fabsl((long double)get(dtype, c, i * n + j) - exact);
            if (err > (long double)(k + 2) * u * mag) {
                fprintf(stderr, "  [%lld,%lld] of %lldx%lldx%lld: %.9Lg, exact %.9Lg, bound %.3Lg\n",
                        (long long)i, (long long)j, (long long)m, (long long)k, (long long)n,
                        (long double)get(dtype, c, i * n + j), exact, (long double)(k + 2) * u * mag);
                return 0;
            }
        }
    return 1;
}

static void test_products(void)
{
    /* m, k, n: vectors both ways, empty k, the blocks' edges (4 rows, 256 columns and rows of B) */
    static const int64_t shapes[][3] = {{1, 1, 1},   {3, 4, 2},    {5, 7, 1},     {1, 9, 6},
                                        {2, 0, 3},   {4, 256, 256}, {5, 257, 255}, {9, 300, 513},
                                        {64, 64, 64}, {130, 70, 1},  {1, 513, 130}};
    static const int dtypes[] = {K_F32, K_F64, K_I32, K_I64};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
            int dt = dtypes[d];
            int64_t m = shapes[s][0], k = shapes[s][1], n = shapes[s][2];
            size_t es = (size_t)k_elem_size(dt);
            void *a = malloc(es * (size_t)(m * k + 1)), *b = malloc(es * (size_t)(k * n + 1));
            void *want = malloc(es * (size_t)(m * n)), *got = malloc(es * (size_t)(m * n));
            fill(dt, a, m * k);
            fill(dt, b, k * n);
            k_matmul(dt, want, a, b, m, k, n, 0, m * n);
            memset(got, 0x7f, es * (size_t)(m * n));
            cpu_matmul(dt, CPU_ACC_F64, got, a, b, m, k, n);
            if (!CHECK(memcmp(got, want, es * (size_t)(m * n)) == 0))
                fprintf(stderr, "  f64 mode, dtype %d, %lldx%lldx%lld\n", dt, (long long)m,
                        (long long)k, (long long)n);
            memset(got, 0x7f, es * (size_t)(m * n));
            cpu_matmul(dt, CPU_ACC_FAST, got, a, b, m, k, n);
            if (dt == K_I32 || dt == K_I64) {
                if (!CHECK(memcmp(got, want, es * (size_t)(m * n)) == 0))
                    fprintf(stderr, "  fast mode, dtype %d, %lldx%lldx%lld\n", dt, (long long)m,
                            (long long)k, (long long)n);
            } else {
                CHECK(within_bound(dt, got, a, b, m, k, n));
            }
            /* dot: the first row of a with the first column of b's storage (k elements) */
            if (dt == K_F32 || dt == K_F64 || k > 0) {
                uint8_t dw[8], dg[8];
                k_acc acc = k_reduce_init(OP_SUM, dt);
                k_dot_range(dt, &acc, a, b, 0, k);
                k_dot_finish(dt, &acc, dw);
                cpu_dot(dt, CPU_ACC_F64, dg, a, b, k);
                CHECK(memcmp(dg, dw, es) == 0);
                cpu_dot(dt, CPU_ACC_FAST, dg, a, b, k);
                if (dt == K_I32 || dt == K_I64)
                    CHECK(memcmp(dg, dw, es) == 0);
                else
                    CHECK(within_bound(dt, dg, a, b, 1, k, 1));
            }
            free(a);
            free(b);
            free(want);
            free(got);
        }

    /* by hand: [[1,2],[3,4]] @ [[5,6],[7,8]] = [[19,22],[43,50]]; [[1,2],[3,4]] @ [1,1] = [3,7];
     * [1,1] @ [[5,6],[7,8]] = [12,14] */
    for (int mode = 0; mode < 2; mode++) {
        int md = mode ? CPU_ACC_FAST : CPU_ACC_F64;
        float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, ones[2] = {1, 1}, c[4] = {0};
        cpu_matmul(K_F32, md, c, a, b, 2, 2, 2);
        CHECK(c[0] == 19 && c[1] == 22 && c[2] == 43 && c[3] == 50);
        cpu_matmul(K_F32, md, c, a, ones, 2, 2, 1);
        CHECK(c[0] == 3 && c[1] == 7);
        cpu_matmul(K_F32, md, c, ones, b, 1, 2, 2);
        CHECK(c[0] == 12 && c[1] == 14);
        double da[4] = {1, 2, 3, 4}, db[4] = {5, 6, 7, 8}, dc[4] = {0};
        cpu_matmul(K_F64, md, dc, da, db, 2, 2, 2);
        CHECK(dc[0] == 19 && dc[1] == 22 && dc[2] == 43 && dc[3] == 50);
        int32_t ia[4] = {INT32_MAX, 2, 3, 4}, ib[4] = {2, 0, 0, 1}, ic[4] = {0};
        cpu_matmul(K_I32, md, ic, ia, ib, 2, 2, 2);
        CHECK(ic[0] == -2 && ic[1] == 2 && ic[2] == 6 && ic[3] == 4); /* 2 * INT32_MAX wraps to -2 */
    }
}

static void test_reductions(void)
{
    static const int ops[] = {OP_SUM, OP_MEAN, OP_NORM, OP_RMAX, OP_RMIN, OP_ARGMAX, OP_ARGMIN};
    static const int64_t counts[] = {1, 2, 15, 16, 17, 1000, 4099};
    for (int d = 0; d < 2; d++) {
        int dt = d ? K_F64 : K_F32;
        size_t es = (size_t)k_elem_size(dt);
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
            int64_t n = counts[c];
            void *x = malloc(es * (size_t)n);
            for (int nan = 0; nan < 2; nan++) {
                fill(dt, x, n);
                if (nan && n > 2) { /* two NaNs: the extremes and their positions are the first */
                    if (dt == K_F32)
                        ((float *)x)[n / 2] = ((float *)x)[n - 1] = NAN;
                    else
                        ((double *)x)[n / 2] = ((double *)x)[n - 1] = NAN;
                }
                for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
                    int op = ops[o];
                    uint8_t want[8] = {0}, got[8] = {0};
                    k_acc acc = k_reduce_init(op, dt);
                    k_reduce_range(op, dt, &acc, x, 0, n);
                    k_reduce_finish(op, dt, &acc, n, want);
                    size_t rs = op == OP_ARGMAX || op == OP_ARGMIN ? 4 : es;
                    cpu_reduce(op, dt, CPU_ACC_F64, got, x, n);
                    if (!CHECK(memcmp(got, want, rs) == 0))
                        fprintf(stderr, "  f64 mode: op %d dtype %d n %lld\n", op, dt, (long long)n);
                    memset(got, 0, sizeof got);
                    cpu_reduce(op, dt, CPU_ACC_FAST, got, x, n);
                    if (op == OP_SUM || op == OP_MEAN || op == OP_NORM) {
                        double w = get(dt, want, 0), g = get(dt, got, 0);
                        /* partial sums in double, rounded once: within one rounding of the result */
                        double tol = (dt == K_F32 ? 1.2e-7 : 4e-15) * (fabs(w) + 1e-30) + (nan ? 0 : 1e-12 * n);
                        if (isnan(w))
                            CHECK(isnan(g));
                        else if (!CHECK(fabs(g - w) <= tol))
                            fprintf(stderr, "  fast mode: op %d dtype %d n %lld: %.17g vs %.17g\n", op, dt,
                                    (long long)n, g, w);
                    } else if (!CHECK(memcmp(got, want, rs) == 0)) {
                        fprintf(stderr, "  fast mode: op %d dtype %d n %lld\n", op, dt, (long long)n);
                    }
                }
            }
            free(x);
        }
    }
    /* cpu_reduce_rows (REDUCE_AXIS along the last axis): each row's bits are cpu_reduce's of the
     * row, in both modes, for rows of one chunk and of several */
    static const int64_t widths[] = {1, 7, 128, 16384, 16385};
    for (int d = 0; d < 2; d++) {
        int dt = d ? K_F64 : K_F32;
        size_t es = (size_t)k_elem_size(dt);
        for (size_t c = 0; c < sizeof widths / sizeof widths[0]; c++) {
            int64_t n = widths[c], rows = 3;
            void *x = malloc(es * (size_t)(n * rows));
            fill(dt, x, n * rows);
            for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
                int op = ops[o];
                size_t rs = op == OP_ARGMAX || op == OP_ARGMIN ? 4 : es;
                for (int mode = 0; mode < 2; mode++) {
                    uint8_t want[24] = {0}, got[24] = {0};
                    for (int64_t r = 0; r < rows; r++)
                        cpu_reduce(op, dt, mode, want + r * rs, (const char *)x + r * n * es, n);
                    cpu_reduce_rows(op, dt, mode, got, x, rows, n);
                    if (!CHECK(memcmp(got, want, rs * (size_t)rows) == 0))
                        fprintf(stderr, "  rows: op %d dtype %d n %lld mode %d\n", op, dt, (long long)n, mode);
                }
            }
            free(x);
        }
    }
    /* by hand: max of [-0.0, 0.0] is the first (a tie), argmax of [1, 3, 3] is 1 */
    float z[2] = {-0.0f, 0.0f}, t[3] = {1, 3, 3}, m = 1;
    int32_t at = -1;
    cpu_reduce(OP_RMAX, K_F32, CPU_ACC_FAST, &m, z, 2);
    CHECK(m == 0.0f && signbit(m));
    cpu_reduce(OP_ARGMAX, K_F32, CPU_ACC_FAST, &at, t, 3);
    CHECK_INT(at, 1);
}

/* Through the API: the option (and $CFX_ACCUMULATE) picks the mode per executor. The data is
 * the first of a few dots whose f32 accumulation, as this build runs it (cpu_dot in the fast
 * mode), differs from the reference's: 2^24 + 1 + 1 + 1 + 1 is 16777220 accumulated in double,
 * and 16777216 or 16777218 in most f32 orders; a product rounded before its sum (a BLAS
 * without FMA) loses 2^-24 in (1 + 2^-12)^2 - (1 + 2^-11). */
static void test_option(void)
{
    const char *src = "graph g(x: f32[5], y: f32[5]) -> (d: f32) {\n  d = dot(x, y)\n}\n";
    char *diags = NULL, *err = NULL;
    cfx_module *m = cfx_compile_string(NULL, "acc.cfx", src, strlen(src), &diags);
    CHECK(m != NULL);
    if (!m) {
        fprintf(stderr, "%s\n", diags ? diags : "");
        cfx_free(diags);
        return;
    }
    cfx_free(diags);
    const float a = 1.0f + 0x1p-12f, b = -(1.0f + 0x1p-11f);
    const float cands[][2][5] = {
        {{16777216.0f, 1, 1, 1, 1}, {1, 1, 1, 1, 1}},
        {{1, 1, 1, 1, 16777216.0f}, {1, 1, 1, 1, 1}},
        {{a, b, 0, 0, 0}, {a, 1, 0, 0, 0}},
    };
    float x[5], y[5], d = 0, fast = 0, ref = 0;
    int found = 0;
    size_t c = 0;
    for (; c < sizeof cands / sizeof cands[0]; c++) {
        memcpy(x, cands[c][0], sizeof x);
        memcpy(y, cands[c][1], sizeof y);
        cpu_dot(K_F32, CPU_ACC_FAST, &fast, x, y, 5);
        cpu_dot(K_F32, CPU_ACC_F64, &ref, x, y, 5);
        if ((found = fast != ref) != 0)
            break;
    }
    /* the reference's value by hand: 16777220, or 2^-24 for the third */
    CHECK(ref == (c == 2 ? 0x1p-24f : 16777220.0f) || !found);
    if (!found)
        printf("test_cpu_linalg: no dot here whose f32 accumulation differs from the reference's; "
               "the option is checked for its answers alone\n");
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, &err);
    CHECK(e != NULL);
    if (e) {
        CHECK_INT(cfx_bind(e, "x", x, sizeof x), 0);
        CHECK_INT(cfx_bind(e, "y", y, sizeof y), 0);
        CHECK_INT(cfx_bind(e, "d", &d, sizeof d), 0);
        CHECK_INT(cfx_run(e), CFX_OK); /* the default: fast */
        CHECK(d == fast);
        CHECK_INT(cfx_set_option(e, CFX_OPTION_ACCUMULATE, CFX_ACCUMULATE_F64), 0);
        CHECK_INT(cfx_run(e), CFX_OK);
        CHECK(d == ref);
        CHECK_INT(cfx_set_option(e, CFX_OPTION_ACCUMULATE, CFX_ACCUMULATE_FAST), 0);
        CHECK_INT(cfx_run(e), CFX_OK);
        CHECK(d == fast);
        CHECK_INT(cfx_set_option(e, CFX_OPTION_ACCUMULATE, 2), -1);
        CHECK_STR(cfx_exec_error(e), "the accumulate option takes 0 (fast) or 1 (f64), got 2");
        CHECK_INT(cfx_set_option(e, CFX_OPTION_L2_WINDOW, 1), -1);
        CHECK(strstr(cfx_exec_error(e), "the cpu backend takes only option 5 (accumulate)") != NULL);
        cfx_exec_free(e);
    }
    /* $CFX_ACCUMULATE sets a new executor's mode; another value is refused at creation */
    setenv("CFX_ACCUMULATE", "f64", 1);
    e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, &err);
    CHECK(e != NULL);
    if (e) {
        d = 0;
        cfx_bind(e, "x", x, sizeof x);
        cfx_bind(e, "y", y, sizeof y);
        cfx_bind(e, "d", &d, sizeof d);
        CHECK_INT(cfx_run(e), CFX_OK);
        CHECK(d == ref);
        cfx_exec_free(e);
    }
    setenv("CFX_ACCUMULATE", "double", 1);
    e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, &err);
    CHECK(e == NULL);
    CHECK_STR(err, "CFX_ACCUMULATE is 'double': it takes fast or f64");
    cfx_free(err);
    unsetenv("CFX_ACCUMULATE");
    cfx_module_free(m);
}

/* The bands a cancellable product is cut into, by hand: 2^24 multiply-adds for cfx's own
 * kernels (16 rows of a 1024^3 product), and for the BLAS 2^30 with at least 256 rows (the
 * whole 1024^3 product in one call; 4096^3: 256 rows, not 64). */
static void test_bands(void)
{
    CHECK_INT(cpu_matmul_band(K_F32, CPU_ACC_F64, 1024, 1024, 1024), 16);
    CHECK_INT(cpu_matmul_band(K_I32, CPU_ACC_FAST, 1024, 1024, 1024), 16);
    CHECK_INT(cpu_matmul_band(K_F64, CPU_ACC_F64, 8192, 8192, 1), 2048); /* a matrix-vector product */
    CHECK_INT(cpu_matmul_band(K_F32, CPU_ACC_F64, 3, 0, 5), 3);
    CHECK_INT(cpu_matmul_band(K_F32, CPU_ACC_F64, 0, 4, 4), 1);
    CHECK_INT(cpu_matmul_band(K_F32, CPU_ACC_F64, 10, 1 << 20, 1 << 10), 1); /* at least a row */
    int blas = cpu_have_blas();
    CHECK_INT(cpu_matmul_band(K_F32, CPU_ACC_FAST, 1024, 1024, 1024), blas ? 1024 : 16);
    CHECK_INT(cpu_matmul_band(K_F64, CPU_ACC_FAST, 4096, 4096, 4096), blas ? 256 : 1);
    CHECK_INT(cpu_matmul_band(K_F32, CPU_ACC_FAST, 100, 4096, 4096), blas ? 100 : 1);
    if (blas) {
        cpu_blas_off(1);
        CHECK_INT(cpu_matmul_band(K_F32, CPU_ACC_FAST, 1024, 1024, 1024), 16);
        cpu_blas_off(0);
    }
}

/* NULL-safe: the choice, "-" for none */
static const char *choice(int features, const char *core, const char *openblas_env, const char *cfx_env,
                          const char **why)
{
    const char *c = cpu_blas_coretype_choice(features, core, openblas_env, cfx_env, why);
    return c ? c : "-";
}

static void test_coretype_choice(void)
{
    const int avx512 = CPU_HAS_AVX2_FMA | CPU_HAS_AVX512, avx2 = CPU_HAS_AVX2_FMA, sse = 0;
    const char *why = NULL;
    /* an OpenBLAS that does not know the processor falls back to Prescott (or another kernel
     * set without AVX2): the best the processor runs instead */
    CHECK_STR(choice(avx512, "Prescott", NULL, NULL, &why), "SkylakeX");
    CHECK(why && strstr(why, "chosen by cfx") != NULL);
    CHECK_STR(choice(avx2, "Prescott", NULL, NULL, NULL), "Haswell");
    CHECK_STR(choice(avx512, "Core2", NULL, NULL, NULL), "SkylakeX");
    CHECK_STR(choice(avx512, "Nehalem", NULL, NULL, NULL), "SkylakeX");
    CHECK_STR(choice(avx2, "Sandybridge", NULL, NULL, NULL), "Haswell");
    CHECK_STR(choice(avx2, "Barcelona", NULL, NULL, NULL), "Haswell");
    CHECK_STR(choice(avx512, "PRESCOTT", NULL, NULL, NULL), "SkylakeX"); /* a static build's spelling */
    CHECK_STR(choice(avx512, "Prescott", NULL, "", NULL), "SkylakeX"); /* empty: unset */
    /* kept: a processor without AVX2 (Prescott's kernels are its own), OpenBLAS's AVX2 or
     * AVX-512 choices, names cfx does not know, and a BLAS that is not OpenBLAS */
    CHECK_STR(choice(sse, "Prescott", NULL, NULL, NULL), "-");
    CHECK_STR(choice(CPU_HAS_AVX512, "Prescott", NULL, NULL, NULL), "-"); /* no FMA: not Haswell's */
    CHECK_STR(choice(avx512, "Haswell", NULL, NULL, &why), "-");
    CHECK_STR(why, "OpenBLAS's own choice");
    CHECK_STR(choice(avx512, "Zen", NULL, NULL, NULL), "-");
    CHECK_STR(choice(avx512, "SkylakeX", NULL, NULL, NULL), "-");
    CHECK_STR(choice(avx512, "Cooperlake", NULL, NULL, NULL), "-");
    CHECK_STR(choice(avx2, "Excavator", NULL, NULL, NULL), "-");
    CHECK_STR(choice(avx512, "neoversen1", NULL, NULL, NULL), "-");
    CHECK_STR(choice(avx512, NULL, NULL, NULL, &why), "-");
    CHECK_STR(why, "not OpenBLAS");
    /* the user's OPENBLAS_CORETYPE is never overridden, not even by CFX_BLAS_CORETYPE */
    CHECK_STR(choice(avx512, "Prescott", "Prescott", NULL, &why), "-");
    CHECK_STR(why, "OPENBLAS_CORETYPE is set");
    CHECK_STR(choice(avx512, "Prescott", "Haswell", "SkylakeX", NULL), "-");
    CHECK_STR(choice(avx512, "Prescott", "", NULL, NULL), "-"); /* set, if empty */
    /* CFX_BLAS_CORETYPE=off keeps OpenBLAS's choice */
    CHECK_STR(choice(avx512, "Prescott", NULL, "off", &why), "-");
    CHECK_STR(why, "CFX_BLAS_CORETYPE=off");
    CHECK_STR(choice(avx2, "Prescott", NULL, "OFF", NULL), "-");
    /* CFX_BLAS_CORETYPE=NAME: a kernel set the processor can run, even an older one */
    CHECK_STR(choice(avx512, "Prescott", NULL, "Haswell", &why), "Haswell");
    CHECK_STR(why, "chosen by CFX_BLAS_CORETYPE");
    CHECK_STR(choice(avx512, "Prescott", NULL, "Cooperlake", NULL), "Cooperlake");
    CHECK_STR(choice(avx512, "SkylakeX", NULL, "Nehalem", NULL), "Nehalem");
    CHECK_STR(choice(avx512, "Haswell", NULL, "haswell", NULL), "-"); /* already so */
    CHECK_STR(choice(avx2, "Prescott", NULL, "SkylakeX", &why), "-"); /* would fault */
    CHECK(why && strstr(why, "cannot run") != NULL);
    CHECK_STR(choice(sse, "Prescott", NULL, "Haswell", NULL), "-");
    CHECK_STR(choice(avx512, "Prescott", NULL, "Skylake", &why), "-"); /* not a name OpenBLAS takes */
    CHECK(why && strstr(why, "not a kernel set cfx knows") != NULL);
}

/* `cfx backends` in a process of its own, with CFX_BLAS_CORETYPE=value: its BLAS line. */
static int backends_blas_line(const char *value, char *line, size_t len)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "env -u OPENBLAS_CORETYPE CFX_BLAS_CORETYPE=%s '%s' backends 2>&1", value, CFX_BINARY);
    FILE *p = popen(cmd, "r");
    int found = 0;
    if (!p)
        return 0;
    while (fgets(line, (int)len, p))
        if (strncmp(line, "cpu BLAS: ", 10) == 0) {
            found = 1;
            break;
        }
    while (fgetc(p) != EOF)
        ;
    pclose(p);
    return found;
}

/* This machine: what the first product loaded says, and where the BLAS is an OpenBLAS on a
 * processor with AVX2 and FMA, that CFX_BLAS_CORETYPE=Haswell gives Haswell's kernels and
 * =off OpenBLAS's own (in `cfx backends`, a process each, since the choice is made once). */
static void test_coretype_here(void)
{
    char line[400];
    cpu_blas_describe(line, sizeof line);
    printf("test_cpu_linalg: BLAS: %s\n", line);
    CHECK(line[0] != 0);
    if (!cpu_have_blas() || strncmp(line, "OpenBLAS", 8) != 0 || !(cpu_blas_features() & CPU_HAS_AVX2_FMA) ||
        getenv("OPENBLAS_CORETYPE")) {
        printf("test_cpu_linalg: not an OpenBLAS on an AVX2 processor here: CFX_BLAS_CORETYPE not tried\n");
        return;
    }
    if (CHECK(backends_blas_line("Haswell", line, sizeof line)))
        if (!CHECK(strstr(line, "kernels Haswell (") != NULL))
            fprintf(stderr, "  with CFX_BLAS_CORETYPE=Haswell: %s", line);
    if (CHECK(backends_blas_line("off", line, sizeof line)))
        if (!CHECK(strstr(line, "(CFX_BLAS_CORETYPE=off)") != NULL))
            fprintf(stderr, "  with CFX_BLAS_CORETYPE=off: %s", line);
}

int main(void)
{
    test_coretype_choice();
    test_bands();
    /* the fast mode's products through the CBLAS where this build has one, then cfx's own */
    printf("test_cpu_linalg: products through %s\n", cpu_have_blas() ? "a CBLAS, then cfx's own kernels"
                                                                    : "cfx's own kernels");
    test_products();
    if (cpu_have_blas()) {
        cpu_blas_off(1);
        test_products();
        cpu_blas_off(0);
    }
    test_reductions();
    test_option();
    test_coretype_here();
    return test_finish("test_cpu_linalg");
}
