/* test_cpu_paths.c: the cpu executor's own loops for whole records (host/runtime/cpu.c), each
 * against C's arithmetic and indexing element by element, on one thread and on three:
 *
 * - BINARY of reals (+ - * / min max) over contiguous operands and with a one-element operand
 *   on either side, f32 and f64, NaN in min and max taking the NaN;
 * - relu: NaN stays NaN, -0 and negatives give +0, inf stays;
 * - exp near and past f32's and f64's underflow (the shortcut to +0 below -104 and -746), the
 *   subnormal results above it, NaN and the infinities: the bits C's libm gives;
 * - TRANSPOSE of 4- and 8-byte elements, square and not, in tiles and past their edges;
 * - boxes got and set (the runs of a box with an index inside it, the odometer over rows) and a
 *   permute of a rank-3 tensor, which the lowering builds from boxes and transposes;
 * - boxes whose trailing dimensions are whole, copied as one run a block (a block of rows, a
 *   head of a rank-3 tensor), also over 1.2 million elements, which three threads cut inside
 *   a block;
 * - broadcasts along the first, middle and last dimensions of a rank-3 result, f32 and f64
 *   (broadcast_runs: a row of the result at a time, a copy or a fill). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "testutil.h"

#define N 1003 /* no multiple of a vector's width */

static const char SRC[] =
    "graph bin(a: f32[1003], b: f32[1003], s: f32, p: f64[1003], q: f64[1003], t: f64) -> ("
    "add: f32[1003], sub: f32[1003], mul: f32[1003], div: f32[1003], lo: f32[1003], hi: f32[1003], "
    "dadd: f64[1003], dsub: f64[1003], dmul: f64[1003], ddiv: f64[1003], dlo: f64[1003], dhi: f64[1003]) {\n"
    "  add = a + b\n"
    "  sub = a - s\n"
    "  mul = s * b\n"
    "  div = a / b\n"
    "  lo = min(a, b)\n"
    "  hi = max(s, b)\n"
    "  dadd = p + t\n"
    "  dsub = t - q\n"
    "  dmul = p * q\n"
    "  ddiv = p / t\n"
    "  dlo = min(p, t)\n"
    "  dhi = max(p, q)\n"
    "}\n"
    "graph un(x: f32[16], y: f64[16]) -> (r: f32[16], e: f32[16], dr: f64[16], de: f64[16]) {\n"
    "  r = relu(x)\n"
    "  e = exp(x)\n"
    "  dr = relu(y)\n"
    "  de = exp(y)\n"
    "}\n"
    "graph moves(m: f32[37, 53], w: f64[16, 16], z: i32[5, 40], u: f32[4, 6, 5], v: f32[3, 4, 7]) -> ("
    "mt: f32[53, 37], wt: f64[16, 16], zt: i32[40, 5], up: f32[5, 4, 6], box: f32[4, 3], "
    "set: f32[3, 4, 7]) {\n"
    "  mt = transpose(m)\n"
    "  wt = transpose(w)\n"
    "  zt = transpose(z)\n"
    "  up = permute(u, (2, 0, 1))\n"
    "  box = u[:, 2, 1:4]\n"
    "  set = v\n"
    "  set[1:3, :, 2:6] = v[0:2, :, 3:7] * 2.0\n"
    "}\n"
    "graph whole(u: f32[4, 6, 5], big: f32[13, 100, 1000]) -> (mid: f32[2, 6, 5], rows: f32[4, 2, 5], "
    "head: f32[6, 5], put: f32[4, 6, 5], top: f32[13, 93, 1000], back: f32[13, 100, 1000]) {\n"
    "  mid = u[1:3, :, :]\n"
    "  rows = u[:, 1:3, :]\n"
    "  head = u[2, :, :]\n"
    "  put = u\n"
    "  put[:, 3:5, :] = rows * 3.0\n"
    "  top = big[:, 7:100, :]\n"
    "  back = big\n"
    "  back[:, 0:93, :] = top\n"
    "}\n"
    "graph spread(a: f32[4, 1, 5], b: f32[6, 1], c: f32[5], f: f64[1, 6, 1], w: f32[4, 6, 5]) -> ("
    "pa: f32[4, 6, 5], pb: f32[4, 6, 5], pc: f32[4, 6, 5], pf: f64[4, 6, 5]) {\n"
    "  pa = a + w\n"
    "  pb = w - b\n"
    "  pc = c * w\n"
    "  pf = f + cast(w, f64)\n"
    "}\n";

/* A value in [-2, 2) from i, no pattern. */
static float val(uint32_t i)
{
    i = i * 2654435761u + 12345u;
    i ^= i >> 15;
    return (float)(i % 40000u) / 10000.0f - 2.0f;
}

static cfx_exec *make(cfx_module *m, const char *graph, int threads)
{
    char *err = NULL;
    cfx_exec *e = cfx_exec_new(m, cfx_graph_find(m, graph), CFX_BACKEND_CPU, &err);
    if (!e) {
        printf("cfx_exec_new: %s\n", err ? err : "?");
        cfx_free(err);
        return NULL;
    }
    if (cfx_set_option(e, CFX_OPTION_THREADS, threads) != 0)
        printf("cfx_set_option: %s\n", cfx_exec_error(e));
    return e;
}

/* the same bits, NaN for NaN */
static int same_f(float got, float want)
{
    return (isnan(got) && isnan(want)) || memcmp(&got, &want, 4) == 0;
}

static int same_d(double got, double want)
{
    return (isnan(got) && isnan(want)) || memcmp(&got, &want, 8) == 0;
}

static float minf_nan(float a, float b) { return isnan(a) ? a : isnan(b) ? b : (b < a ? b : a); }
static float maxf_nan(float a, float b) { return isnan(a) ? a : isnan(b) ? b : (b > a ? b : a); }
static double mind_nan(double a, double b) { return isnan(a) ? a : isnan(b) ? b : (b < a ? b : a); }
static double maxd_nan(double a, double b) { return isnan(a) ? a : isnan(b) ? b : (b > a ? b : a); }

static void test_binary(cfx_module *m, int threads)
{
    static float a[N], b[N], o[6][N];
    static double p[N], q[N], d[6][N];
    float s = 0.75f;
    double t = -1.25;
    for (int i = 0; i < N; i++) {
        a[i] = val(i);
        b[i] = val(i + N);
        p[i] = (double)val(i + 2 * N) * 1.000001;
        q[i] = (double)val(i + 3 * N) + 0.5;
    }
    a[5] = NAN;
    b[9] = NAN;
    p[11] = NAN;
    q[13] = NAN;
    cfx_exec *e = make(m, "bin", threads);
    CHECK(e != NULL);
    if (!e)
        return;
    static const char *fo[6] = {"add", "sub", "mul", "div", "lo", "hi"};
    static const char *dn[6] = {"dadd", "dsub", "dmul", "ddiv", "dlo", "dhi"};
    int bound = cfx_bind(e, "a", a, sizeof a) || cfx_bind(e, "b", b, sizeof b) || cfx_bind(e, "s", &s, 4) ||
                cfx_bind(e, "p", p, sizeof p) || cfx_bind(e, "q", q, sizeof q) || cfx_bind(e, "t", &t, 8);
    for (int k = 0; k < 6; k++)
        bound = bound || cfx_bind(e, fo[k], o[k], sizeof o[k]) || cfx_bind(e, dn[k], d[k], sizeof d[k]);
    CHECK_INT(bound, 0);
    CHECK_INT(cfx_run(e), CFX_OK);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        bad += !same_f(o[0][i], a[i] + b[i]);
        bad += !same_f(o[1][i], a[i] - s);
        bad += !same_f(o[2][i], s * b[i]);
        bad += !same_f(o[3][i], a[i] / b[i]);
        bad += !same_f(o[4][i], minf_nan(a[i], b[i]));
        bad += !same_f(o[5][i], maxf_nan(s, b[i]));
        bad += !same_d(d[0][i], p[i] + t);
        bad += !same_d(d[1][i], t - q[i]);
        bad += !same_d(d[2][i], p[i] * q[i]);
        bad += !same_d(d[3][i], p[i] / t);
        bad += !same_d(d[4][i], mind_nan(p[i], t));
        bad += !same_d(d[5][i], maxd_nan(p[i], q[i]));
    }
    CHECK_INT(bad, 0);
    CHECK(isnan(o[4][5]) && isnan(o[4][9]) && isnan(o[5][9]) && isnan(d[4][11]) && isnan(d[5][13]));
    cfx_exec_free(e);
}

static void test_unary(cfx_module *m, int threads)
{
    float x[16] = {-1e9f, -104.5f, -104.0f, -103.9f, -103.0f, -95.0f, -88.0f, -87.0f,
                   -0.0f, 0.0f, 1.5f, -2.5f, 88.0f, NAN, -INFINITY, INFINITY};
    double y[16] = {-1e300, -746.5, -746.0, -745.1, -744.0, -720.0, -708.5, -700.0,
                    -0.0, 0.0, 1.5, -2.5, 709.0, NAN, -INFINITY, INFINITY};
    float r[16], ex[16];
    double dr[16], de[16];
    cfx_exec *e = make(m, "un", threads);
    CHECK(e != NULL);
    if (!e)
        return;
    CHECK_INT(cfx_bind(e, "x", x, sizeof x) || cfx_bind(e, "y", y, sizeof y) || cfx_bind(e, "r", r, sizeof r) ||
                  cfx_bind(e, "e", ex, sizeof ex) || cfx_bind(e, "dr", dr, sizeof dr) ||
                  cfx_bind(e, "de", de, sizeof de),
              0);
    CHECK_INT(cfx_run(e), CFX_OK);
    for (int i = 0; i < 16; i++) {
        /* relu: NaN stays, -0 and below give +0 */
        float rf = isnan(x[i]) ? x[i] : x[i] > 0 ? x[i] : 0.0f;
        double rd = isnan(y[i]) ? y[i] : y[i] > 0 ? y[i] : 0.0;
        if (!same_f(r[i], rf) || !same_d(dr[i], rd) || signbit(r[i]) || signbit(dr[i]))
            printf("relu of element %d: %g %g\n", i, (double)r[i], dr[i]);
        CHECK(same_f(r[i], rf) && same_d(dr[i], rd) && !signbit(r[i]) && !signbit(dr[i]));
        if (!same_f(ex[i], expf(x[i])) || !same_d(de[i], exp(y[i])))
            printf("exp of element %d: %a (libm %a), %a (libm %a)\n", i, (double)ex[i], (double)expf(x[i]),
                   de[i], exp(y[i]));
        CHECK(same_f(ex[i], expf(x[i])) && same_d(de[i], exp(y[i])));
    }
    CHECK(ex[0] == 0.0f && !signbit(ex[0]) && ex[1] == 0.0f && de[0] == 0.0 && de[1] == 0.0);
    CHECK(ex[5] > 0.0f && de[5] > 0.0); /* subnormal, not flushed */
    cfx_exec_free(e);
}

static void test_moves(cfx_module *m, int threads)
{
    static float mm[37 * 53], mt[53 * 37], u[4 * 6 * 5], up[5 * 4 * 6], box[4 * 3], v[3 * 4 * 7],
        set[3 * 4 * 7];
    static double w[256], wt[256];
    static int32_t z[200], zt[200];
    for (int i = 0; i < 37 * 53; i++)
        mm[i] = val(i);
    for (int i = 0; i < 256; i++)
        w[i] = (double)val(i + 5000) / 3.0;
    for (int i = 0; i < 200; i++)
        z[i] = i * 7 - 300;
    for (int i = 0; i < 120; i++)
        u[i] = (float)i;
    for (int i = 0; i < 84; i++)
        v[i] = (float)(1000 + i);
    cfx_exec *e = make(m, "moves", threads);
    CHECK(e != NULL);
    if (!e)
        return;
    CHECK_INT(cfx_bind(e, "m", mm, sizeof mm) || cfx_bind(e, "w", w, sizeof w) || cfx_bind(e, "z", z, sizeof z) ||
                  cfx_bind(e, "u", u, sizeof u) || cfx_bind(e, "v", v, sizeof v) ||
                  cfx_bind(e, "mt", mt, sizeof mt) || cfx_bind(e, "wt", wt, sizeof wt) ||
                  cfx_bind(e, "zt", zt, sizeof zt) || cfx_bind(e, "up", up, sizeof up) ||
                  cfx_bind(e, "box", box, sizeof box) || cfx_bind(e, "set", set, sizeof set),
              0);
    CHECK_INT(cfx_run(e), CFX_OK);
    int bad = 0;
    for (int i = 0; i < 37; i++)
        for (int j = 0; j < 53; j++)
            bad += mt[j * 37 + i] != mm[i * 53 + j];
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++)
            bad += wt[j * 16 + i] != w[i * 16 + j];
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 40; j++)
            bad += zt[j * 5 + i] != z[i * 40 + j];
    CHECK_INT(bad, 0);
    /* up[c][a][b] = u[a][b][c] */
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 6; b++)
            for (int c = 0; c < 5; c++)
                bad += up[(c * 4 + a) * 6 + b] != u[(a * 6 + b) * 5 + c];
    CHECK_INT(bad, 0);
    /* box[a][k] = u[a][2][1 + k] */
    for (int a = 0; a < 4; a++)
        for (int k = 0; k < 3; k++)
            bad += box[a * 3 + k] != u[(a * 6 + 2) * 5 + 1 + k];
    CHECK_INT(bad, 0);
    /* set = v, then set[1 + i][j][2 + k] = 2 v[i][j][3 + k] for i < 2, k < 4 */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 7; k++) {
                float want = v[(i * 4 + j) * 7 + k];
                if (i >= 1 && k >= 2 && k < 6)
                    want = 2.0f * v[((i - 1) * 4 + j) * 7 + k + 1];
                bad += set[(i * 4 + j) * 7 + k] != want;
            }
    CHECK_INT(bad, 0);
    cfx_exec_free(e);
}

static void test_whole(cfx_module *m, int threads)
{
    static float u[120], mid[60], rows[40], head[30], put[120], big[13 * 100 * 1000],
        top[13 * 93 * 1000], back[13 * 100 * 1000];
    for (int i = 0; i < 120; i++)
        u[i] = (float)i;
    for (int i = 0; i < 13 * 100 * 1000; i++)
        big[i] = val(i);
    cfx_exec *e = make(m, "whole", threads);
    CHECK(e != NULL);
    if (!e)
        return;
    CHECK_INT(cfx_bind(e, "u", u, sizeof u) || cfx_bind(e, "big", big, sizeof big) ||
                  cfx_bind(e, "mid", mid, sizeof mid) || cfx_bind(e, "rows", rows, sizeof rows) ||
                  cfx_bind(e, "head", head, sizeof head) || cfx_bind(e, "put", put, sizeof put) ||
                  cfx_bind(e, "top", top, sizeof top) || cfx_bind(e, "back", back, sizeof back),
              0);
    CHECK_INT(cfx_run(e), CFX_OK);
    int bad = 0;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 6; b++)
            for (int c = 0; c < 5; c++) {
                float x = u[(a * 6 + b) * 5 + c];
                if (a >= 1 && a < 3)
                    bad += mid[((a - 1) * 6 + b) * 5 + c] != x;
                if (b >= 1 && b < 3)
                    bad += rows[(a * 2 + b - 1) * 5 + c] != x;
                if (a == 2)
                    bad += head[b * 5 + c] != x;
                float want = b >= 3 && b < 5 ? 3.0f * u[(a * 6 + b - 2) * 5 + c] : x;
                bad += put[(a * 6 + b) * 5 + c] != want;
            }
    CHECK_INT(bad, 0);
    /* blocks of 93 rows of 1000, 13 of them: two threads' parts meet inside the seventh */
    for (int a = 0; a < 13; a++)
        for (int r = 0; r < 100; r++)
            for (int c = 0; c < 1000; c++) {
                float x = big[(a * 100 + r) * 1000 + c];
                if (r >= 7)
                    bad += top[(a * 93 + r - 7) * 1000 + c] != x;
                float want = r < 93 ? big[(a * 100 + r + 7) * 1000 + c] : x;
                bad += back[(a * 100 + r) * 1000 + c] != want;
            }
    CHECK_INT(bad, 0);
    cfx_exec_free(e);
}

static void test_spread(cfx_module *m, int threads)
{
    float a[20], b[6], c[5], w[120], pa[120], pb[120], pc[120];
    double f[6], pf[120];
    for (int i = 0; i < 20; i++)
        a[i] = val(i + 100);
    for (int i = 0; i < 6; i++) {
        b[i] = val(i + 200);
        f[i] = (double)val(i + 300) / 7.0;
    }
    for (int i = 0; i < 5; i++)
        c[i] = val(i + 400);
    for (int i = 0; i < 120; i++)
        w[i] = val(i + 500);
    cfx_exec *e = make(m, "spread", threads);
    CHECK(e != NULL);
    if (!e)
        return;
    CHECK_INT(cfx_bind(e, "a", a, sizeof a) || cfx_bind(e, "b", b, sizeof b) || cfx_bind(e, "c", c, sizeof c) ||
                  cfx_bind(e, "f", f, sizeof f) || cfx_bind(e, "w", w, sizeof w) ||
                  cfx_bind(e, "pa", pa, sizeof pa) || cfx_bind(e, "pb", pb, sizeof pb) ||
                  cfx_bind(e, "pc", pc, sizeof pc) || cfx_bind(e, "pf", pf, sizeof pf),
              0);
    CHECK_INT(cfx_run(e), CFX_OK);
    int bad = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 6; j++)
            for (int k = 0; k < 5; k++) {
                int at = (i * 6 + j) * 5 + k;
                bad += pa[at] != a[i * 5 + k] + w[at];
                bad += pb[at] != w[at] - b[j];
                bad += pc[at] != c[k] * w[at];
                bad += pf[at] != f[j] + (double)w[at];
            }
    CHECK_INT(bad, 0);
    cfx_exec_free(e);
}

int main(void)
{
    char *diag = NULL;
    cfx_module *m = cfx_compile_string(NULL, "paths.cfx", SRC, strlen(SRC), &diag);
    if (!m) {
        printf("compile: %s\n", diag ? diag : "?");
        return 1;
    }
    for (int threads = 1; threads <= 3; threads += 2) {
        test_binary(m, threads);
        test_unary(m, threads);
        test_moves(m, threads);
        test_whole(m, threads);
        test_spread(m, threads);
    }
    cfx_module_free(m);
    cfx_free(diag);
    return test_finish("test_cpu_paths");
}
