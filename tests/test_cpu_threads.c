/* test_cpu_threads.c: the cpu executor's threads (host/runtime/pool.c, CFX_OPTION_THREADS).
 *
 * - the pool: pool_parts' counts, pool_for covering [0, n) once in its stated parts, no worker
 *   made by a program whose records stay small, the workers joined when the last executor goes;
 * - elementwise records over large tensors (several ops, a broadcast, a transpose, a cast, a
 *   where): the same bits with 1 thread as with 3;
 * - broadcasts of a row and of a column and boxes got and set, over tensors whose rows (1021,
 *   1020) the parts cut anywhere: the cpu executor copies them a run at a time; the same bits
 *   with 1 and 3 threads, and each element where C's indexing puts it;
 * - the fast mode's sum, mean, norm and dot of a large f32 tensor: the same bits with 1 and 3
 *   threads, and within the f32 accumulation bound of a double sum computed here;
 * - the option: out-of-range values of CFX_OPTION_THREADS and of $CFX_NUM_THREADS refused with
 *   a message naming them;
 * - several executors running at once from several threads (the pool taken by one of them,
 *   the others on their own threads), each result checked; .ci/run runs this under TSan. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "host/runtime/cpu_linalg.h"
#include "host/runtime/pool.h"
#include "testutil.h"

#define N 100003 /* above the split size, and no multiple of anything */
#define NR 1100009 /* the sums' and the cheap ops': above their split size (more than 64 chunks of 16384) */
#define R 301
#define C 333

static const char SRC[] =
    "graph ew(x: f32[100003], y: f32[100003], m: f32[301, 333], r: f32[333]) -> (a: f32[100003], "
    "b: f32[100003], c: i32[100003], t: f32[333, 301], s: f32[301, 333], e: f64[100003]) {\n"
    "  a = exp(x) * y - x / (y + 1.0)\n"
    "  b = where(x > y, x, y * 2.0)\n"
    "  c = cast(x * 1000.0, i32) % 7\n"
    "  t = transpose(m)\n"
    "  s = m * r + 1.0\n"
    "  e = cast(x, f64) ** 1.5\n"
    "}\n"
    "graph red(x: f32[1100009], y: f32[1100009]) -> (s: f32, mu: f32, n2: f32, d: f32, z: f32[1100009]) {\n"
    "  z = x * y - x\n"
    "  s = sum(x)\n"
    "  mu = mean(x)\n"
    "  n2 = norm(x)\n"
    "  d = dot(x, y)\n"
    "}\n"
    "graph ext(x: f32[1100009]) -> (hi: f32, at_hi: i32, lo: f32, at_lo: i32) {\n"
    "  hi = max(x)\n"
    "  at_hi = argmax(x)\n"
    "  lo = min(x)\n"
    "  at_lo = argmin(x)\n"
    "}\n"
    "graph moves(x: f32[1100009]) -> (s: f32[1031, 1021], t: f32[1031, 1021], u: f32[1031, 1020], "
    "w: f32[1031, 1021]) {\n"
    "  m = reshape(x[0:1052651], [1031, 1021])\n"
    "  s = m * m[7]\n"
    "  t = m - m[:, 5:6]\n"
    "  u = m[:, 1:1021]\n"
    "  w = m\n"
    "  w[:, 0:1020] = u\n"
    "}\n"
    "graph small(x: f32[8]) -> (y: f32[8]) {\n"
    "  y = x * 2.0 + 1.0\n"
    "}\n";

static float X[NR], Y[NR], M[R * C], RV[C];

/* A value in [-1, 1) from i, no pattern the sums could cancel by. */
static float val(uint32_t i)
{
    i = i * 2654435761u + 12345u;
    i ^= i >> 15;
    return (float)(i % 20000u) / 10000.0f - 1.0f;
}

static cfx_exec *make(cfx_module *m, const char *graph, int threads, int accumulate)
{
    char *err = NULL;
    cfx_exec *e = cfx_exec_new(m, cfx_graph_find(m, graph), CFX_BACKEND_CPU, &err);
    if (!e) {
        printf("cfx_exec_new: %s\n", err ? err : "?");
        cfx_free(err);
        return NULL;
    }
    if (cfx_set_option(e, CFX_OPTION_THREADS, threads) != 0 ||
        cfx_set_option(e, CFX_OPTION_ACCUMULATE, accumulate) != 0)
        printf("cfx_set_option: %s\n", cfx_exec_error(e));
    return e;
}

typedef struct ew_out {
    float a[N], b[N];
    int32_t c[N];
    float t[R * C], s[R * C];
    double e[N];
} ew_out;

static int run_ew(cfx_exec *e, ew_out *o)
{
    if (cfx_bind(e, "x", X, N * 4) || cfx_bind(e, "y", Y, N * 4) || cfx_bind(e, "m", M, sizeof M) ||
        cfx_bind(e, "r", RV, sizeof RV) || cfx_bind(e, "a", o->a, sizeof o->a) ||
        cfx_bind(e, "b", o->b, sizeof o->b) || cfx_bind(e, "c", o->c, sizeof o->c) ||
        cfx_bind(e, "t", o->t, sizeof o->t) || cfx_bind(e, "s", o->s, sizeof o->s) ||
        cfx_bind(e, "e", o->e, sizeof o->e))
        return -1;
    return cfx_run(e) == CFX_OK ? 0 : -1;
}

typedef struct red_out {
    float s, mu, n2, d;
    float z[NR];
} red_out;

static int run_red(cfx_exec *e, red_out *o)
{
    if (cfx_bind(e, "x", X, sizeof X) || cfx_bind(e, "y", Y, sizeof Y) || cfx_bind(e, "s", &o->s, 4) ||
        cfx_bind(e, "mu", &o->mu, 4) || cfx_bind(e, "n2", &o->n2, 4) || cfx_bind(e, "d", &o->d, 4) ||
        cfx_bind(e, "z", o->z, sizeof o->z))
        return -1;
    return cfx_run(e) == CFX_OK ? 0 : -1;
}

/* ---- the pool ---------------------------------------------------------------------------- */
static int hits[1000];
static int part_of[1000];

static void mark(void *ctx, int part, int64_t lo, int64_t hi)
{
    (void)ctx;
    for (int64_t i = lo; i < hi; i++) {
        hits[i]++;
        part_of[i] = part;
    }
}

static void test_pool(void)
{
    CHECK_INT(pool_parts(1000, 100, 1), 1);
    CHECK_INT(pool_parts(199, 100, 4), 1);
    CHECK_INT(pool_parts(200, 100, 4), 2);
    CHECK_INT(pool_parts(1000, 100, 2), 2 * POOL_PARTS_PER_THREAD);
    CHECK_INT(pool_parts(1000, 1, 1000), 1000); /* the count capped at POOL_MAX_THREADS */
    CHECK(pool_cores() >= 1);
    pool_retain();
    for (int threads = 1; threads <= 5; threads++) {
        memset(hits, 0, sizeof hits);
        int parts = pool_for(1000, 7, threads, mark, NULL);
        CHECK_INT(parts, pool_parts(1000, 7, threads));
        int ok = 1;
        for (int i = 0; i < 1000; i++) {
            int p = part_of[i];
            /* every element once, in the part the header says: [n * p / parts, n * (p + 1) / parts) */
            ok &= hits[i] == 1 && (int64_t)1000 * p / parts <= i && i < (int64_t)1000 * (p + 1) / parts;
        }
        CHECK(ok);
    }
    CHECK(pool_workers() >= 1);
    pool_release();
    CHECK_INT(pool_workers(), 0);
}

/* ---- elementwise and reductions, 1 thread against 3 --------------------------------------- */
static void test_same_bits(cfx_module *m)
{
    ew_out *o1 = calloc(1, sizeof *o1), *o3 = calloc(1, sizeof *o3);
    cfx_exec *e1 = make(m, "ew", 1, CFX_ACCUMULATE_FAST), *e3 = make(m, "ew", 3, CFX_ACCUMULATE_FAST);
    CHECK(o1 && o3 && e1 && e3);
    if (o1 && o3 && e1 && e3) {
        memset(o3, 0xab, sizeof *o3);
        CHECK_INT(run_ew(e1, o1), 0);
        CHECK_INT(run_ew(e3, o3), 0);
        CHECK(memcmp(o1->a, o3->a, sizeof o1->a) == 0);
        CHECK(memcmp(o1->b, o3->b, sizeof o1->b) == 0);
        CHECK(memcmp(o1->c, o3->c, sizeof o1->c) == 0);
        CHECK(memcmp(o1->t, o3->t, sizeof o1->t) == 0);
        CHECK(memcmp(o1->s, o3->s, sizeof o1->s) == 0);
        CHECK(memcmp(o1->e, o3->e, sizeof o1->e) == 0);
        /* and right, element by element against C's own arithmetic, here and there */
        for (int i = 0; i < N; i += 9973) {
            CHECK(o3->a[i] == expf(X[i]) * Y[i] - X[i] / (Y[i] + 1.0f));
            CHECK(o3->b[i] == (X[i] > Y[i] ? X[i] : Y[i] * 2.0f));
            CHECK(o3->e[i] == pow((double)X[i], 1.5) || (isnan(o3->e[i]) && X[i] < 0));
        }
        for (int i = 0; i < R; i += 37)
            for (int j = 0; j < C; j += 41) {
                CHECK(o3->t[j * R + i] == M[i * C + j]);
                CHECK(o3->s[i * C + j] == M[i * C + j] * RV[j] + 1.0f);
            }
    }
    cfx_exec_free(e1);
    cfx_exec_free(e3);
    free(o1);
    free(o3);

    /* the fast mode's sums: the same bits with 1 and 3 threads, near a double sum */
    double s = 0, sq = 0, d = 0, abs_s = 0, abs_d = 0;
    for (int i = 0; i < NR; i++) {
        s += X[i];
        abs_s += fabs(X[i]);
        sq += (double)X[i] * X[i];
        d += (double)X[i] * Y[i];
        abs_d += fabs((double)X[i] * Y[i]);
    }
    /* through the CBLAS's dot where this build has one, then cfx's own (chunked) dot */
    for (int off = 0; off < 2; off++) {
        cpu_blas_off(off);
        static red_out r1, r3; /* large: not on the stack */
        e1 = make(m, "red", 1, CFX_ACCUMULATE_FAST);
        e3 = make(m, "red", 3, CFX_ACCUMULATE_FAST);
        CHECK(e1 && e3);
        if (e1 && e3) {
            CHECK_INT(run_red(e1, &r1), 0);
            CHECK_INT(run_red(e3, &r3), 0);
            /* cfx's sums the same bits; the CBLAS's dot may split by its own thread count */
            CHECK(r1.s == r3.s && r1.mu == r3.mu && r1.n2 == r3.n2);
            CHECK(r1.d == r3.d || (off == 0 && cpu_have_blas()));
            /* an op as cheap as they come, over enough elements to split */
            CHECK(memcmp(r1.z, r3.z, sizeof r1.z) == 0);
            for (int i = 0; i < NR; i += 7919)
                CHECK(r3.z[i] == X[i] * Y[i] - X[i]);
            /* f32 results: the rounding of the result, plus (for the dot, accumulated in f32) the
             * textbook bound n * eps * sum |x y| */
            double eps = 0x1p-24;
            CHECK_REAL(r3.s, s, 2 * eps * fabs(s) + 1e-12 * abs_s);
            CHECK_REAL(r3.mu, s / NR, 2 * eps * fabs(s / NR) + 1e-12 * abs_s / NR);
            CHECK_REAL(r3.n2, sqrt(sq), 2 * eps * sqrt(sq));
            CHECK_REAL(r3.d, d, 2 * eps * fabs(d) + NR * eps * abs_d);
        }
        cfx_exec_free(e1);
        cfx_exec_free(e3);
    }
    cpu_blas_off(0);
}

/* ---- max, min, argmax, argmin split: the first extreme, the first NaN -------------------- */
static float XE[NR];

static void run_ext(cfx_module *m, int threads, float *hi, int32_t *at_hi, float *lo, int32_t *at_lo)
{
    cfx_exec *e = make(m, "ext", threads, CFX_ACCUMULATE_FAST);
    CHECK(e != NULL);
    if (!e)
        return;
    CHECK(cfx_bind(e, "x", XE, sizeof XE) == 0 && cfx_bind(e, "hi", hi, 4) == 0 &&
          cfx_bind(e, "at_hi", at_hi, 4) == 0 && cfx_bind(e, "lo", lo, 4) == 0 &&
          cfx_bind(e, "at_lo", at_lo, 4) == 0);
    CHECK_INT(cfx_run(e), CFX_OK);
    cfx_exec_free(e);
}

#define MR 1031
#define MC 1021
typedef struct moves_out {
    float s[MR * MC], t[MR * MC], u[MR * (MC - 1)], w[MR * MC];
} moves_out;

static int run_moves(cfx_exec *e, moves_out *o)
{
    if (cfx_bind(e, "x", X, sizeof X) || cfx_bind(e, "s", o->s, sizeof o->s) || cfx_bind(e, "t", o->t, sizeof o->t) ||
        cfx_bind(e, "u", o->u, sizeof o->u) || cfx_bind(e, "w", o->w, sizeof o->w))
        return -1;
    return cfx_run(e) == CFX_OK ? 0 : -1;
}

static void test_moves(cfx_module *m)
{
    moves_out *o1 = calloc(1, sizeof *o1), *o3 = calloc(1, sizeof *o3);
    cfx_exec *e1 = make(m, "moves", 1, CFX_ACCUMULATE_FAST), *e3 = make(m, "moves", 3, CFX_ACCUMULATE_FAST);
    CHECK(o1 && o3 && e1 && e3);
    if (o1 && o3 && e1 && e3) {
        memset(o3, 0xab, sizeof *o3);
        CHECK_INT(run_moves(e1, o1), 0);
        CHECK_INT(run_moves(e3, o3), 0);
        CHECK(memcmp(o1, o3, sizeof *o1) == 0);
        int bad = 0;
        for (int i = 0; i < MR; i++)
            for (int j = 0; j < MC; j++) {
                float x = X[i * MC + j];
                bad += o3->s[i * MC + j] != x * X[7 * MC + j];
                bad += o3->t[i * MC + j] != x - X[i * MC + 5];
                bad += j < MC - 1 && o3->u[i * (MC - 1) + j] != X[i * MC + j + 1];
                bad += o3->w[i * MC + j] != (j < MC - 1 ? X[i * MC + j + 1] : x);
            }
        CHECK_INT(bad, 0);
    }
    cfx_exec_free(e1);
    cfx_exec_free(e3);
    free(o1);
    free(o3);
}

static void test_extremes(cfx_module *m)
{
    /* ties across the parts' boundary (2 parts of about 150000 with 3 threads, more with 8):
     * the first of each extreme is the answer */
    memcpy(XE, X, sizeof XE);
    XE[100000] = XE[200000] = XE[290000] = 5.0f;
    XE[160000] = XE[170000] = -5.0f;
    for (int threads = 1; threads <= 8; threads += 7) {
        float hi = 0, lo = 0;
        int32_t at_hi = -1, at_lo = -1;
        run_ext(m, threads, &hi, &at_hi, &lo, &at_lo);
        CHECK(hi == 5.0f && lo == -5.0f);
        CHECK_INT(at_hi, 100000);
        CHECK_INT(at_lo, 160000);
    }
    /* NaNs: the first one, wherever the larger values are */
    XE[260000] = XE[120000 + 150000] = NAN;
    XE[299999] = NAN;
    for (int threads = 1; threads <= 8; threads += 7) {
        float hi = 0, lo = 0;
        int32_t at_hi = -1, at_lo = -1;
        run_ext(m, threads, &hi, &at_hi, &lo, &at_lo);
        CHECK(isnan(hi) && isnan(lo));
        CHECK_INT(at_hi, 260000);
        CHECK_INT(at_lo, 260000);
    }
}

/* ---- no workers for small programs; the option's values ---------------------------------- */
static void test_small_and_options(cfx_module *m)
{
    cfx_exec *e = make(m, "small", 4, CFX_ACCUMULATE_FAST);
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8];
    CHECK(e != NULL);
    if (e) {
        CHECK_INT(cfx_bind(e, "x", x, sizeof x), 0);
        CHECK_INT(cfx_bind(e, "y", y, sizeof y), 0);
        CHECK_INT(cfx_run(e), CFX_OK);
        CHECK(y[7] == 17.0f);
        CHECK_INT(pool_workers(), 0); /* nothing was large enough to split */
        CHECK_INT(cfx_set_option(e, CFX_OPTION_THREADS, -1), -1);
        CHECK(strstr(cfx_exec_error(e), "threads option") != NULL);
        CHECK_INT(cfx_set_option(e, CFX_OPTION_THREADS, 257), -1);
        CHECK_INT(cfx_set_option(e, CFX_OPTION_THREADS, 256), 0);
        CHECK_INT(cfx_set_option(e, CFX_OPTION_THREADS, 0), 0); /* the cores available */
    }
    cfx_exec_free(e);

    static const char *const bad[] = {"0", "-2", "x", "3x", "257", " "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *err = NULL;
        setenv("CFX_NUM_THREADS", bad[i], 1);
        e = cfx_exec_new(m, cfx_graph_find(m, "small"), CFX_BACKEND_CPU, &err);
        CHECK(e == NULL);
        CHECK(err && strstr(err, "CFX_NUM_THREADS") != NULL && strchr(err, '\n') == NULL);
        cfx_exec_free(e);
        cfx_free(err);
    }
    setenv("CFX_NUM_THREADS", "2", 1);
    char *err = NULL;
    e = cfx_exec_new(m, cfx_graph_find(m, "small"), CFX_BACKEND_CPU, &err);
    CHECK(e != NULL);
    cfx_exec_free(e);
    cfx_free(err);
    unsetenv("CFX_NUM_THREADS");
}

/* ---- the BLAS's count follows a count that is set, and only then ---------------------------- */
static const char SRC_MM[] = "graph mm(a: f32[64, 64], b: f32[64, 64]) -> (c: f32[64, 64]) {\n"
                             "  c = a @ b\n"
                             "}\n";

static void test_blas_threads(void)
{
    if (!cpu_have_blas()) {
        printf("test_cpu_threads: no CBLAS in this build: its thread count not checked\n");
        return;
    }
    /* the OpenBLAS cfx opened (RTLD_NOLOAD: the same one, already in the process: a product
     * opens it, and so did cpu_have_blas) */
    void *h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
    int (*get)(void) = NULL;
    if (h)
        *(void **)&get = dlsym(h, "openblas_get_num_threads");
    if (!get) {
        printf("test_cpu_threads: the CBLAS is not OpenBLAS: its thread count not checked\n");
        if (h)
            dlclose(h);
        return;
    }
    char *diag = NULL;
    cfx_module *m = cfx_compile_string(NULL, "mm.cfx", SRC_MM, strlen(SRC_MM), &diag);
    static float a[64 * 64], b[64 * 64], c[64 * 64];
    CHECK(m != NULL);
    for (int k = 0; m && k < 3; k++) {
        int threads = k == 0 ? 3 : k == 1 ? 0 : 2; /* 0: not set */
        int before = get();
        cfx_exec *e = make(m, "mm", threads, CFX_ACCUMULATE_FAST);
        CHECK(e != NULL);
        if (!e)
            break;
        CHECK(cfx_bind(e, "a", a, sizeof a) == 0 && cfx_bind(e, "b", b, sizeof b) == 0 &&
              cfx_bind(e, "c", c, sizeof c) == 0);
        CHECK_INT(cfx_run(e), CFX_OK);
        CHECK_INT(get(), threads > 0 ? threads : before);
        cfx_exec_free(e);
    }
    cfx_module_free(m);
    cfx_free(diag);
    dlclose(h);
}

/* ---- several executors at once ----------------------------------------------------------- */
typedef struct runner {
    cfx_module *m;
    const ew_out *want_ew;
    const red_out *want_red;
    int rounds, ok;
} runner;

static void *run_many(void *arg)
{
    runner *r = arg;
    ew_out *o = malloc(sizeof *o);
    cfx_exec *e = make(r->m, "ew", 2, CFX_ACCUMULATE_FAST), *f = make(r->m, "red", 2, CFX_ACCUMULATE_FAST);
    r->ok = o && e && f;
    red_out *got = malloc(sizeof *got);
    r->ok = r->ok && got;
    for (int k = 0; k < r->rounds && r->ok; k++) {
        r->ok = run_ew(e, o) == 0 && run_red(f, got) == 0 &&
                memcmp(o->a, r->want_ew->a, sizeof o->a) == 0 && memcmp(o->s, r->want_ew->s, sizeof o->s) == 0 &&
                memcmp(got, r->want_red, sizeof *got) == 0;
    }
    free(got);
    cfx_exec_free(e);
    cfx_exec_free(f);
    free(o);
    return NULL;
}

static void test_concurrent(cfx_module *m)
{
    ew_out *want = calloc(1, sizeof *want);
    static red_out want_red;
    cpu_blas_off(1); /* cfx's own dot, the same bits on any count (and nothing TSan cannot see) */
    cfx_exec *e = make(m, "ew", 1, CFX_ACCUMULATE_FAST), *f = make(m, "red", 1, CFX_ACCUMULATE_FAST);
    CHECK(want && e && f);
    if (want && e && f && run_ew(e, want) == 0 && run_red(f, &want_red) == 0) {
        enum { T = 4 };
        pthread_t th[T];
        runner rs[T];
        for (int i = 0; i < T; i++) {
            rs[i] = (runner){m, want, &want_red, 6, 0};
            CHECK_INT(pthread_create(&th[i], NULL, run_many, &rs[i]), 0);
        }
        for (int i = 0; i < T; i++) {
            pthread_join(th[i], NULL);
            CHECK(rs[i].ok);
        }
    }
    cfx_exec_free(e);
    cfx_exec_free(f);
    free(want);
    cpu_blas_off(0);
    CHECK_INT(pool_workers(), 0); /* the last executor gone: the workers joined */
}

int main(void)
{
    for (uint32_t i = 0; i < NR; i++) {
        X[i] = val(i);
        Y[i] = val(i + NR);
    }
    for (uint32_t i = 0; i < R * C; i++)
        M[i] = val(i + 3 * NR);
    for (uint32_t i = 0; i < C; i++)
        RV[i] = val(i + 5 * NR);
    unsetenv("CFX_NUM_THREADS");
    char *diag = NULL;
    cfx_module *m = cfx_compile_string(NULL, "threads.cfx", SRC, strlen(SRC), &diag);
    if (!m) {
        printf("compile: %s\n", diag ? diag : "?");
        return 1;
    }
    test_pool();
    test_small_and_options(m);
    test_same_bits(m);
    test_moves(m);
    test_extremes(m);
    test_blas_threads();
    test_concurrent(m);
    cfx_module_free(m);
    cfx_free(diag);
    return test_finish("test_cpu_threads");
}
