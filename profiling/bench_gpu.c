/* bench_gpu.c: the GPU benchmark driver. Runs the loop-heavy programs of profiling/bench/
 * on every executor and reports the cost of control per loop iteration, read against
 * floors measured on the same GPU in the same run (floors.h).
 *
 *   bench_gpu [--quick] [--csv FILE] [--json FILE] [--export DIR] [--bench-dir DIR]
 *             [--graphs a,b,...] [--executors cpu,cuda-host,...] [--cpu-only]
 *             [--predict] [--blocks N] [--fake-device]
 *
 * Per graph and executor: iterations per run (cfx_exec_iterations), time per iteration
 * (CUDA events around each run, divided by its iterations; the median over repeats after
 * warm-up, with min/max and the interquartile range), the ratio to cuda-host, and for the
 * work-heavy graphs the memory-bandwidth floor per iteration and the fraction achieved.
 * Every executor's results are checked against an independent computation in C before its
 * times are reported; a failed check marks the row and makes the exit status 1.
 *
 * Without CUDA or without a device it prints `bench_gpu: no CUDA device is present (...)`
 * and exits 0: there is nothing to measure, and that is not an error. `--cpu-only` runs
 * the cpu executor alone (no floors), to check the programs and the driver on any machine.
 * `--export DIR` writes every graph's inputs (DIR/KEY.NAME.npy) and the results of its last
 * checked GPU run (DIR/KEY.out.NAME.npy) plus DIR/manifest.json, which peers.py reads.
 *
 * `--json FILE` writes the round as records (profiling/rounds.py says the format; compare_rounds.py
 * reads two rounds): one per floor and one per row, each with the commit, the GPU, the driver
 * and the runtime, the graph, the backend and its mode, the median us per iteration, the floor
 * it is read against and the cost sheet's prediction for it (cfx_dump_cost, for the grid the
 * executors launch: sms x min(occupancy, 2), 264 on an H100 or an H200). `--predict` needs no
 * GPU: it prints the cost sheet's predictions of every graph in both modes and writes them as
 * records with "source": "cost sheet" (a grid of --blocks blocks, default 264).
 * `--fake-device` (for tests) runs the cpu executor with a made-up device, made-up floors and a
 * made-up cuda-persistent row, so that the records can be checked on any machine.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bench.h"
#include "cfx.h"
#include "host/program/cost.h"
#include "host/runtime/npy.h"

#ifdef CFX_HAVE_CUDA
#include <cuda_runtime.h>

#include "floors.h"
#endif

#ifndef CFX_SOURCE_DIR
#define CFX_SOURCE_DIR "."
#endif

/* ================================================================================== */
/* ---- small helpers ---------------------------------------------------------------- */

/* splitmix64: the deterministic source of every input. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi), from the top 53 bits. */
static double uniform(uint64_t *state, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(splitmix64(state) >> 11) * (1.0 / 9007199254740992.0));
}

/* ================================================================================== */
/* ---- the graphs: inputs, checks and floors ---------------------------------------- */

enum { MAX_BUFFERS = 8 };

/* One named input or result buffer in host memory. */
typedef struct buffer {
    const char *name;
    cfx_type type;
    void *host;
    size_t bytes;
} buffer;

/* A graph's inputs and what a correct run must produce. `iters_input` names the i32 input
 * that bounds the loop (NULL when the data decides), so the cpu executor can run the heavy
 * graphs for fewer iterations; a check reads that input's value as used. */
typedef struct case_data {
    buffer in[MAX_BUFFERS];
    int nin;
    int64_t expect_iters;   /* loop iterations a correct run takes with these inputs */
    void *ref;              /* what the check compares with (collatz steps, decode tokens) */
    int32_t ref_param;      /* the trip-count input `ref` was computed for */
} case_data;

typedef struct bench_case {
    const char *key;          /* graph name, also the file profiling/bench/KEY.cfx */
    const char *iters_input;  /* the i32 input that sets the trip count, or NULL */
    int cpu_iters;            /* the value the cpu executor uses (0: as the GPU runs) */
    int (*make)(case_data *d, int quick);
    /* Checks results (in the module's result order) for the inputs in d and the
     * iterations the run reported; on failure writes why. */
    int (*check)(case_data *d, buffer *res, int nres, int64_t iters, char *why, size_t len);
    /* Bytes one iteration must move at least (0 for the control-only graphs). */
    double (*bytes_per_iter)(const case_data *d);
} bench_case;

static void *add_input(case_data *d, const char *name, cfx_dtype dt, int rank, int64_t d0,
                       int64_t d1)
{
    buffer *b = &d->in[d->nin++];
    b->name = name;
    memset(&b->type, 0, sizeof b->type);
    b->type.dtype = dt;
    b->type.rank = rank;
    b->type.dims[0] = d0;
    b->type.dims[1] = d1;
    b->bytes = (size_t)cfx_type_count(&b->type) * (size_t)cfx_dtype_size(dt);
    b->host = calloc(1, b->bytes ? b->bytes : 1);
    return b->host;
}

static buffer *find_buffer(buffer *list, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(list[i].name, name) == 0)
            return &list[i];
    return NULL;
}

static int32_t input_i32(const case_data *d, const char *name)
{
    for (int i = 0; i < d->nin; i++)
        if (strcmp(d->in[i].name, name) == 0)
            return *(const int32_t *)d->in[i].host;
    return 0;
}

/* Every make allocates with add_input; one check that they all succeeded. */
static int inputs_ok(const case_data *d)
{
    for (int i = 0; i < d->nin; i++)
        if (!d->in[i].host)
            return -1;
    return 0;
}

/* cfx_exec_iterations counts TICK records, and the lowering puts a loop's TICK at the start
 * of its body, after the condition (since commit 175ea07): a loop that runs n iterations and
 * then exits reports exactly n. Only n is accepted: one more or one fewer means an executor
 * counts TICKs wrongly, which the benchmark must report rather than time. */
static int ticks_ok(int64_t ticks, int64_t trip)
{
    return ticks == trip;
}

#define RESULT(name) find_buffer(res, nres, name)
#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            snprintf(why, len, __VA_ARGS__);                                              \
            return -1;                                                                    \
        }                                                                                 \
    } while (0)

/* ---- counter ---- */
static int make_counter(case_data *d, int quick)
{
    int32_t *n = add_input(d, "n", CFX_I32, 0, 0, 0);
    if (inputs_ok(d))
        return -1;
    *n = quick ? 2000 : 10000;
    d->expect_iters = *n;
    return 0;
}

static int check_counter(case_data *d, buffer *res, int nres, int64_t iters, char *why,
                         size_t len)
{
    int32_t n = input_i32(d, "n");
    buffer *count = RESULT("count");
    CHECK(count, "no result 'count'");
    CHECK(*(int32_t *)count->host == n, "count = %d, expected %d", *(int32_t *)count->host, n);
    CHECK(ticks_ok(iters, n), "%lld loop iterations (TICKs), expected %d", (long long)iters, n);
    return 0;
}

/* ---- if_in_while ---- */
static int make_if_in_while(case_data *d, int quick)
{
    int32_t *x = add_input(d, "x", CFX_I32, 0, 0, 0);
    int32_t *y = add_input(d, "y", CFX_I32, 0, 0, 0);
    int32_t *i = add_input(d, "i", CFX_I32, 0, 0, 0);
    int32_t *n = add_input(d, "n", CFX_I32, 0, 0, 0);
    if (inputs_ok(d))
        return -1;
    *x = 0;
    *y = 1;
    *i = 0;
    *n = quick ? 2000 : 10000;
    d->expect_iters = *n;
    return 0;
}

static int check_if_in_while(case_data *d, buffer *res, int nres, int64_t iters,
                             char *why, size_t len)
{
    int32_t x = input_i32(d, "x"), y = input_i32(d, "y"), i = input_i32(d, "i");
    int32_t n = input_i32(d, "n"), out = x;
    buffer *r = RESULT("out");
    /* The MindSpore program, as Python would run it. */
    for (; i < n; i++) {
        out += x + i < y ? x : y;
        out += 1;
    }
    CHECK(r, "no result 'out'");
    CHECK(*(int32_t *)r->host == out, "out = %d, expected %d", *(int32_t *)r->host, out);
    CHECK(ticks_ok(iters, n), "%lld loop iterations (TICKs), expected %d", (long long)iters, n);
    return 0;
}

/* ---- collatz ---- */
enum { COLLATZ_BATCH = 8192 };

static int make_collatz(case_data *d, int quick)
{
    int64_t *x = add_input(d, "x", CFX_I64, 1, COLLATZ_BATCH, 0);
    int32_t *steps = calloc(COLLATZ_BATCH, sizeof *steps);
    uint64_t seed = 1;
    int32_t most = 0;
    if (inputs_ok(d) || !steps) {
        free(steps);
        return -1;
    }
    for (int j = 0; j < COLLATZ_BATCH; j++) {
        int64_t v = 1 + (int64_t)(splitmix64(&seed) % 1000000u);
        x[j] = v;
        while (v > 1) {
            v = v % 2 == 0 ? v / 2 : 3 * v + 1;
            steps[j]++;
        }
        if (steps[j] > most)
            most = steps[j];
    }
    d->ref = steps;
    d->expect_iters = most;
    return 0;
}

static int check_collatz(case_data *d, buffer *res, int nres, int64_t iters, char *why,
                         size_t len)
{
    const int32_t *want = d->ref;
    buffer *r = RESULT("steps");
    CHECK(r, "no result 'steps'");
    for (int j = 0; j < COLLATZ_BATCH; j++) {
        int32_t got = ((const int32_t *)r->host)[j];
        CHECK(got == want[j], "steps[%d] = %d, expected %d", j, got, want[j]);
    }
    CHECK(ticks_ok(iters, d->expect_iters), "%lld loop iterations (TICKs), expected %lld", (long long)iters,
          (long long)d->expect_iters);
    return 0;
}

/* ---- power iteration ---- */
enum { POWER_N = 4096 };

/* A = 100 u u^T / n + S: a dominant eigenvalue near 100 |u|^2 / n far from the rest (|S| is
 * under 1), so 100 iterations converge and the eigenpair can be checked with one product. */
static int make_power(case_data *d, int quick)
{
    const int n = POWER_N;
    float *A = add_input(d, "A", CFX_F32, 2, n, n);
    float *v0 = add_input(d, "v0", CFX_F32, 1, n, 0);
    int32_t *max_iters = add_input(d, "max_iters", CFX_I32, 0, 0, 0);
    float *tol = add_input(d, "tol", CFX_F32, 0, 0, 0);
    double *u = malloc((size_t)n * sizeof *u);
    uint64_t seed = 2;
    if (inputs_ok(d) || !u) {
        free(u);
        return -1;
    }
    for (int i = 0; i < n; i++)
        u[i] = uniform(&seed, 0.5, 1.5);
    for (int i = 0; i < n; i++)
        for (int j = i; j < n; j++) {
            double s = uniform(&seed, -0.01, 0.01);
            float a = (float)(100.0 * u[i] * u[j] / n + s);
            A[(size_t)i * n + j] = a;
            A[(size_t)j * n + i] = a;
        }
    for (int i = 0; i < n; i++)
        v0[i] = (float)uniform(&seed, 0.1, 1.1);
    free(u);
    *max_iters = 100;
    *tol = -1.0f; /* delta > -1 always: the loop runs max_iters, still testing on data */
    d->expect_iters = *max_iters;
    return 0;
}

static int check_power(case_data *d, buffer *res, int nres, int64_t iters, char *why,
                       size_t len)
{
    const int n = POWER_N;
    const float *A = d->in[0].host;
    buffer *rv = RESULT("v"), *reig = RESULT("eig"), *rit = RESULT("iters");
    int32_t max_iters = input_i32(d, "max_iters");
    double eig, norm = 0, resid = 0;
    CHECK(rv && reig && rit, "missing result v, eig or iters");
    eig = *(const float *)reig->host;
    const float *v = rv->host;
    /* The eigenpair in double: |A v - eig v| / |eig| with |v| = 1. */
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int j = 0; j < n; j++)
            s += (double)A[(size_t)i * n + j] * v[j];
        resid += (s - eig * v[i]) * (s - eig * v[i]);
        norm += (double)v[i] * v[i];
    }
    resid = sqrt(resid) / fabs(eig);
    CHECK(isfinite(eig) && eig > 50, "eig = %g, expected the dominant eigenvalue (about 108)", eig);
    CHECK(fabs(sqrt(norm) - 1) < 1e-3, "|v| = %g, expected 1", sqrt(norm));
    CHECK(resid < 1e-3, "|A v - eig v| / eig = %g, expected below 1e-3", resid);
    CHECK(*(int32_t *)rit->host == max_iters, "iters = %d, expected %d", *(int32_t *)rit->host,
          max_iters);
    CHECK(ticks_ok(iters, max_iters), "%lld loop iterations (TICKs), expected %d", (long long)iters, max_iters);
    return 0;
}

/* Read A once, read v and write the next v. */
static double bytes_power(const case_data *d)
{
    return 4.0 * POWER_N * POWER_N + 2 * 4.0 * POWER_N;
}

/* ---- conjugate gradient ---- */

/* A = L + c I + R + diag(|R| row sums): L the 1-D Laplacian (2 on the diagonal, -1 beside
 * it), R a small symmetric random matrix. L + c I has eigenvalues in (c, 4 + c) and the
 * rest is diagonally dominant with a non-negative diagonal, so A is SPD with a condition
 * number near 4/c = 400: CG converges steadily without its residual reaching 0 in f32. */
static int make_cg(case_data *d, int n, uint64_t seed)
{
    const double c = 0.01, eps = 0.25 * c / n;
    float *A = add_input(d, "A", CFX_F32, 2, n, n);
    float *b = add_input(d, "b", CFX_F32, 1, n, 0);
    int32_t *max_iters = add_input(d, "max_iters", CFX_I32, 0, 0, 0);
    float *tol = add_input(d, "tol", CFX_F32, 0, 0, 0);
    double *diag = calloc((size_t)n, sizeof *diag);
    if (inputs_ok(d) || !diag) {
        free(diag);
        return -1;
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            double r = uniform(&seed, -eps, eps);
            double a = (j == i + 1 ? -1.0 : 0.0) + r;
            A[(size_t)i * n + j] = (float)a;
            A[(size_t)j * n + i] = (float)a;
            diag[i] += fabs(r);
            diag[j] += fabs(r);
        }
    for (int i = 0; i < n; i++) {
        A[(size_t)i * n + i] = (float)(2.0 + c + diag[i]);
        b[i] = (float)uniform(&seed, -1.0, 1.0);
    }
    free(diag);
    *max_iters = 200;
    *tol = 0.0f;
    d->expect_iters = *max_iters;
    return 0;
}

static int make_cg_1024(case_data *d, int quick) { return make_cg(d, 1024, 3); }
static int make_cg_8192(case_data *d, int quick) { return make_cg(d, 8192, 4); }

/* The true residual |b - A x| / |b| in double. After 100 or more iterations CG on this
 * matrix is converged to f32 accuracy; after fewer (the cpu executor's short runs) it must
 * at least have reduced the residual. */
static int check_cg(case_data *d, buffer *res, int nres, int64_t iters, char *why,
                    size_t len)
{
    const buffer *Ab = &d->in[0], *bb = &d->in[1];
    const int64_t n = Ab->type.dims[0];
    const float *A = Ab->host, *b = bb->host;
    buffer *rx = RESULT("x"), *rit = RESULT("iters"), *rrr = RESULT("rr");
    int32_t max_iters = input_i32(d, "max_iters");
    double num = 0, den = 0, rel, bound = max_iters >= 100 ? 1e-3 : 0.9;
    CHECK(rx && rit && rrr, "missing result x, iters or rr");
    const float *x = rx->host;
    for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int64_t j = 0; j < n; j++)
            s += (double)A[i * n + j] * x[j];
        num += (b[i] - s) * (b[i] - s);
        den += (double)b[i] * b[i];
    }
    rel = sqrt(num / den);
    CHECK(isfinite(rel) && rel < bound, "|b - A x| / |b| = %g after %d iterations, expected below %g",
          rel, *(int32_t *)rit->host, bound);
    CHECK(*(const float *)rrr->host > 0, "rr = %g, expected positive", *(const float *)rrr->host);
    CHECK(*(int32_t *)rit->host == max_iters, "iters = %d, expected %d", *(int32_t *)rit->host,
          max_iters);
    CHECK(ticks_ok(iters, max_iters), "%lld loop iterations (TICKs), expected %d", (long long)iters, max_iters);
    return 0;
}

/* Fused to the limit, an iteration reads A, p, x and r once and writes x, r and p. */
static double bytes_cg(const case_data *d)
{
    double n = (double)d->in[0].type.dims[0];
    return 4.0 * n * n + 7 * 4.0 * n;
}

/* ---- greedy decode ---- */
enum { DEC_V = 32768, DEC_D = 256, DEC_L = 128 };

/* The decode loop in C with the kernels' rules (f32 matmul accumulates in double and rounds
 * once), for max_len steps from `start`; fills tokens and returns the length. */
static int32_t decode_reference(const float *W, const float *M, const float *E,
                                const float *h0, int32_t start, int32_t eos, int32_t max_len,
                                int32_t *tokens)
{
    float h[DEC_D], t[DEC_D];
    int32_t tok = start, length = 0;
    memcpy(h, h0, sizeof h);
    memset(tokens, 0, DEC_L * sizeof *tokens);
    while (length < max_len && length < DEC_L) {
        float best = 0;
        int32_t arg = 0;
        for (int i = 0; i < DEC_D; i++) {
            double s = 0;
            for (int j = 0; j < DEC_D; j++)
                s += (double)M[i * DEC_D + j] * h[j];
            t[i] = tanhf((float)s + E[(size_t)tok * DEC_D + i]);
        }
        memcpy(h, t, sizeof h);
        for (int v = 0; v < DEC_V; v++) {
            double s = 0;
            for (int j = 0; j < DEC_D; j++)
                s += (double)W[(size_t)v * DEC_D + j] * h[j];
            if (v == 0 || (float)s > best) {
                best = (float)s;
                arg = v;
            }
        }
        tok = arg;
        if (tok == eos)
            break;
        tokens[length++] = tok;
    }
    return length;
}

static int make_decode(case_data *d, int quick)
{
    float *W = add_input(d, "W", CFX_F32, 2, DEC_V, DEC_D);
    float *M = add_input(d, "M", CFX_F32, 2, DEC_D, DEC_D);
    float *E = add_input(d, "E", CFX_F32, 2, DEC_V, DEC_D);
    float *h0 = add_input(d, "h0", CFX_F32, 1, DEC_D, 0);
    int32_t *start = add_input(d, "start", CFX_I32, 0, 0, 0);
    int32_t *eos = add_input(d, "eos", CFX_I32, 0, 0, 0);
    int32_t *max_len = add_input(d, "max_len", CFX_I32, 0, 0, 0);
    /* M's spectral radius is about 0.9 (entries of standard deviation 0.9 / sqrt(D)), so
     * the state stays bounded and rounding differences do not grow. */
    const double m = 0.9 * sqrt(3.0) / sqrt((double)DEC_D);
    uint64_t seed = 5;
    if (inputs_ok(d))
        return -1;
    for (size_t i = 0; i < (size_t)DEC_V * DEC_D; i++)
        W[i] = (float)uniform(&seed, -1, 1);
    for (size_t i = 0; i < (size_t)DEC_D * DEC_D; i++)
        M[i] = (float)uniform(&seed, -m, m);
    for (size_t i = 0; i < (size_t)DEC_V * DEC_D; i++)
        E[i] = (float)uniform(&seed, -1, 1);
    for (int i = 0; i < DEC_D; i++)
        h0[i] = 0.0f;
    *start = 0;
    *eos = -1; /* no argmax is -1: the loop runs max_len steps, still testing for eos */
    *max_len = DEC_L;
    d->expect_iters = DEC_L;
    d->ref = NULL; /* computed by the check for the max_len it is given */
    return 0;
}

static int check_decode(case_data *d, buffer *res, int nres, int64_t iters, char *why,
                        size_t len)
{
    int32_t max_len = input_i32(d, "max_len"), n = 0;
    buffer *rt = RESULT("tokens"), *rl = RESULT("length");
    int32_t *want = d->ref;
    /* The reference takes a second or so: computed once per max_len and kept. */
    if (!want || d->ref_param != max_len) {
        free(d->ref);
        d->ref = want = malloc((DEC_L + 1) * sizeof *want);
        CHECK(want, "out of memory");
        want[DEC_L] = decode_reference(d->in[0].host, d->in[1].host, d->in[2].host,
                                       d->in[3].host, input_i32(d, "start"), input_i32(d, "eos"),
                                       max_len, want);
        d->ref_param = max_len;
    }
    n = want[DEC_L];
    CHECK(rt && rl, "missing result tokens or length");
    CHECK(*(int32_t *)rl->host == n, "length = %d, expected %d", *(int32_t *)rl->host, n);
    for (int i = 0; i < DEC_L; i++) {
        int32_t got = ((const int32_t *)rt->host)[i];
        CHECK(got == want[i], "tokens[%d] = %d, expected %d", i, got, want[i]);
    }
    CHECK(ticks_ok(iters, max_len), "%lld loop iterations (TICKs), expected %d", (long long)iters, max_len);
    return 0;
}

/* Read W, M, one row of E and h; the logits need never reach memory. */
static double bytes_decode(const case_data *d)
{
    return 4.0 * DEC_V * DEC_D + 4.0 * DEC_D * DEC_D + 2 * 4.0 * DEC_D;
}

/* ---- call_matmul ---- */
enum { CM_N = 512 };

/* dup, the application kernel call_matmul calls: its result is its argument. The CUDA version
 * enqueues a device-to-device copy on the stream it is given, as an application kernel must
 * (and as a captured one may). */
static int dup_cpu(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    (void)user, (void)nargs, (void)nresults;
    memcpy(results[0].data, args[0].data, (size_t)cfx_type_count(&args[0].type) * 4);
    return 0;
}

#ifdef CFX_HAVE_CUDA
static int dup_cuda(void *user, void *stream, int nargs, const cfx_tensor *args, int nresults,
                    cfx_tensor *results)
{
    (void)user, (void)nargs, (void)nresults;
    return cudaMemcpyAsync(results[0].data, args[0].data, (size_t)cfx_type_count(&args[0].type) * 4,
                           cudaMemcpyDeviceToDevice, (cudaStream_t)stream) == cudaSuccess ? 0 : -1;
}
#endif

/* ---- call_op, call_op_kernel, call_op_cfx ---- */
enum { OP_N = 256 };

/* act, y = tanh(x) * 0.5 + 0.25 rounded after each operation, as source (the compiled kernel
 * calls it inline), and as a binary kernel's two functions (act_kernel). */
static const char act_source[] = "CFX_HD void act(int64_t lo, int64_t hi, const float *x, float *y)\n"
                                 "{\n"
                                 "    for (int64_t e = lo; e < hi; e++)\n"
                                 "        y[e] = tanhf(x[e]) * 0.5f + 0.25f;\n"
                                 "}\n";

static int act_cpu(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    (void)user, (void)nargs, (void)nresults;
    const float *x = args[0].data;
    float *y = results[0].data;
    for (int64_t e = 0; e < cfx_type_count(&args[0].type); e++) {
        volatile float t = tanhf(x[e]) * 0.5f; /* no contraction into a fused multiply-add */
        y[e] = t + 0.25f;
    }
    return 0;
}

#ifdef CFX_HAVE_CUDA
int bench_act_launch(void *stream, const float *x, float *y, long long n); /* bench_ops.cu */

static int act_cuda(void *user, void *stream, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    (void)user, (void)nargs, (void)nresults;
    return bench_act_launch(stream, args[0].data, results[0].data, (long long)cfx_type_count(&args[0].type));
}
#endif

static int make_call_op(case_data *d, int quick)
{
    float *x = add_input(d, "x", CFX_F32, 1, OP_N, 0);
    int32_t *n = add_input(d, "n", CFX_I32, 0, 0, 0);
    uint64_t seed = 7;
    if (inputs_ok(d))
        return -1;
    for (int i = 0; i < OP_N; i++)
        x[i] = (float)uniform(&seed, -3, 3);
    *n = quick ? 2000 : 10000;
    d->expect_iters = *n;
    return 0;
}

/* y is act applied n times to x, computed here in double: act is a contraction (its slope is at
 * most 0.5), so f32 roundings stay below 1e-6 of it whatever the tanh of each executor. */
static int check_call_op(case_data *d, buffer *res, int nres, int64_t iters, char *why, size_t len)
{
    const float *x = find_buffer(d->in, d->nin, "x")->host;
    int32_t n = input_i32(d, "n");
    buffer *ry = RESULT("y"), *ri = RESULT("iters");
    CHECK(ry && ri, "missing result y or iters");
    for (int i = 0; i < OP_N; i++) {
        double v = x[i];
        for (int32_t k = 0; k < n; k++)
            v = tanh(v) * 0.5 + 0.25;
        double got = ((const float *)ry->host)[i];
        CHECK(fabs(got - v) <= 1e-5, "y[%d] = %.9g, expected %.9g (act applied %d times)", i, got, v, n);
    }
    CHECK(*(int32_t *)ri->host == n, "iters = %d, expected %d", *(int32_t *)ri->host, n);
    CHECK(ticks_ok(iters, n), "%lld loop iterations (TICKs), expected %d", (long long)iters, n);
    return 0;
}

/* The kernels the benchmark's programs may call. */
static cfx_context *bench_context(void)
{
    static cfx_context *ctx;
    char *err = NULL;
    char sig[64], op_sig[64];
    if (ctx)
        return ctx;
    ctx = cfx_context_new();
    snprintf(sig, sizeof sig, "(f32[%d, %d]) -> (f32[%d, %d])", CM_N, CM_N, CM_N, CM_N);
    snprintf(op_sig, sizeof op_sig, "(f32[%d]) -> (f32[%d])", OP_N, OP_N);
#ifdef CFX_HAVE_CUDA
    cfx_register_kernel(ctx, "dup", sig, dup_cpu, dup_cuda, NULL, &err);
#else
    cfx_register_kernel(ctx, "dup", sig, dup_cpu, NULL, NULL, &err);
#endif
    if (err) {
        fprintf(stderr, "bench_gpu: registering dup: %s\n", err);
        cfx_free(err);
        err = NULL;
    }
#ifdef CFX_HAVE_CUDA
    cfx_register_kernel(ctx, "act_kernel", op_sig, act_cpu, act_cuda, NULL, &err);
#else
    cfx_register_kernel(ctx, "act_kernel", op_sig, act_cpu, NULL, NULL, &err);
#endif
    if (err) {
        fprintf(stderr, "bench_gpu: registering act_kernel: %s\n", err);
        cfx_free(err);
        err = NULL;
    }
    /* needs a C compiler (and checks the source with NVRTC where it can): without one, call_op
     * does not compile and its rows say so */
    if (cfx_register_source(ctx, "act", op_sig, CFX_OP_ELEMENTS, act_source, &err) != 0) {
        fprintf(stderr, "bench_gpu: registering act by its source: %s\n", err ? err : "?");
        cfx_free(err);
    }
    return ctx;
}

/* A is a permutation matrix, so A @ y is exact in f32 on every executor (one product per
 * element is 1 * y, the rest add 0) and y after n iterations is x with its rows permuted n
 * times. */
static int make_call_matmul(case_data *d, int quick)
{
    float *A = add_input(d, "A", CFX_F32, 2, CM_N, CM_N);
    float *x = add_input(d, "x", CFX_F32, 2, CM_N, CM_N);
    int32_t *n = add_input(d, "n", CFX_I32, 0, 0, 0);
    int32_t *perm = malloc(CM_N * sizeof *perm);
    uint64_t seed = 6;
    if (inputs_ok(d) || !perm) {
        free(perm);
        return -1;
    }
    for (int i = 0; i < CM_N; i++)
        perm[i] = i;
    for (int i = CM_N - 1; i > 0; i--) {
        int j = (int)(splitmix64(&seed) % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int i = 0; i < CM_N; i++)
        A[(size_t)i * CM_N + perm[i]] = 1.0f;
    for (size_t e = 0; e < (size_t)CM_N * CM_N; e++)
        x[e] = (float)uniform(&seed, -1, 1);
    d->ref = perm;
    *n = quick ? 30 : 100;
    d->expect_iters = *n;
    return 0;
}

static int check_call_matmul(case_data *d, buffer *res, int nres, int64_t iters, char *why, size_t len)
{
    const int32_t *perm = d->ref;
    int32_t n = input_i32(d, "n");
    buffer *ry = RESULT("y"), *ri = RESULT("iters");
    float *y, *t;
    int bad = -1;
    CHECK(ry && ri, "missing result y or iters");
    y = malloc((size_t)CM_N * CM_N * sizeof *y);
    t = malloc((size_t)CM_N * CM_N * sizeof *t);
    if (!y || !t) {
        free(y);
        free(t);
        CHECK(0, "out of memory");
    }
    memcpy(y, find_buffer(d->in, d->nin, "x")->host, (size_t)CM_N * CM_N * sizeof *y);
    for (int k = 0; k < n; k++) {
        for (int i = 0; i < CM_N; i++)
            memcpy(t + (size_t)i * CM_N, y + (size_t)perm[i] * CM_N, CM_N * sizeof *t);
        memcpy(y, t, (size_t)CM_N * CM_N * sizeof *y);
    }
    for (size_t e = 0; e < (size_t)CM_N * CM_N && bad < 0; e++)
        if (((const float *)ry->host)[e] != y[e])
            bad = (int)e;
    free(y);
    free(t);
    CHECK(bad < 0, "y[%d] differs from x permuted %d times", bad, n);
    CHECK(*(int32_t *)ri->host == n, "iters = %d, expected %d", *(int32_t *)ri->host, n);
    CHECK(ticks_ok(iters, n), "%lld loop iterations (TICKs), expected %d", (long long)iters, n);
    return 0;
}

static const bench_case cases[] = {
    {"counter", NULL, 0, make_counter, check_counter, NULL},
    {"if_in_while", NULL, 0, make_if_in_while, check_if_in_while, NULL},
    {"collatz", NULL, 0, make_collatz, check_collatz, NULL},
    {"power_iteration", "max_iters", 10, make_power, check_power, bytes_power},
    {"cg_1024", "max_iters", 20, make_cg_1024, check_cg, bytes_cg},
    {"cg_8192", "max_iters", 5, make_cg_8192, check_cg, bytes_cg},
    {"greedy_decode", "max_len", 8, make_decode, check_decode, bytes_decode},
    {"call_matmul", "n", 2, make_call_matmul, check_call_matmul, NULL},
    {"call_op", NULL, 0, make_call_op, check_call_op, NULL},
    {"call_op_kernel", NULL, 0, make_call_op, check_call_op, NULL},
    {"call_op_cfx", NULL, 0, make_call_op, check_call_op, NULL},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

/* The columns: every backend; cuda-persistent in its default mode, the kernel compiled from the
 * graph (which keeps the name "cuda-persistent": peers.py compares with that row), and again on
 * the pause-and-relaunch path (what a record that ends its launch costs served by the host: the
 * graphs with calls of binary kernels or launched products), and in its interpreter mode four
 * times: on its default path, on the pause-and-relaunch path, with every product inline, and
 * with its one-block loops interpreted record by record rather than as micro-ops, and both
 * modes without the L2 window, through the options (cfx_set_option; the row's note says which
 * path the executor took). */
typedef struct executor {
    cfx_backend backend;
    const char *name;
    const char *jmode; /* the JSON record's mode: the path taken, "-" where a backend has one */
    int option;    /* a cfx_option set to `value` before the first run, or 0 */
    int64_t value;
    int mode;      /* a cfx_persistent_mode, or -1 */
    int seen;      /* 1: every run traced (to /dev/null: the device's stamps and the host's writing of
                    * the events); 2: every run profiled (the same stamps, only the profile read back) */
} executor;

static const executor executors[] = {
    {CFX_BACKEND_CPU, "cpu", "-", 0, 0, -1, 0},
    {CFX_BACKEND_CUDA_HOST, "cuda-host", "-", 0, 0, -1, 0},
    {CFX_BACKEND_CUDA_GRAPH, "cuda-graph", "-", 0, 0, -1, 0},
    {CFX_BACKEND_CUDA_PERSISTENT, "cuda-persistent", "compiled", 0, 0, CFX_PERSISTENT_COMPILED, 0},
    {CFX_BACKEND_CUDA_PERSISTENT, "cuda-persistent-compiled-pause", "compiled-pause", CFX_OPTION_DEVICE_LAUNCH, 0,
     CFX_PERSISTENT_COMPILED, 0},
    {CFX_BACKEND_CUDA_PERSISTENT, "cuda-persistent-interp", "interp", 0, 0, CFX_PERSISTENT_INTERP, 0},
    {CFX_BACKEND_CUDA_PERSISTENT, "cuda-persistent-pause", "interp-pause", CFX_OPTION_DEVICE_LAUNCH, 0, CFX_PERSISTENT_INTERP, 0},
    {CFX_BACKEND_CUDA_PERSISTENT, "cuda-persistent-inline", "interp-inline", CFX_OPTION_LAUNCH_PRODUCT_MIN, 0,
     CFX_PERSISTENT_INTERP, 0},
    {CFX_BACKEND_CUDA_PERSISTENT, "cuda-persistent-records", "interp-records", CFX_OPTION_MICROOPS, 0, CFX_PERSISTENT_INTERP, 0},
    /* what the L2 window gives: both modes without it (the same as the plain rows on graphs
     * whose loops read no tensor of 1 MiB whole) */
    {CFX_BACKEND_CUDA_PERSISTENT, "cuda-persistent-no-l2", "compiled-no-l2", CFX_OPTION_L2_WINDOW, 0, CFX_PERSISTENT_COMPILED, 0},
    {CFX_BACKEND_CUDA_PERSISTENT, "cuda-persistent-interp-no-l2", "interp-no-l2", CFX_OPTION_L2_WINDOW, 0, CFX_PERSISTENT_INTERP, 0},
    /* what seeing inside costs: the interpreter traced and profiled, beside -interp (both on the
     * same path, micro-ops included), and the compiled kernel's build with the stamps, traced
     * and profiled, beside cuda-persistent */
    {CFX_BACKEND_CUDA_PERSISTENT, "cuda-persistent-interp-traced", "interp-traced", 0, 0, CFX_PERSISTENT_INTERP, 1},
    {CFX_BACKEND_CUDA_PERSISTENT, "cuda-persistent-interp-profiled", "interp-profiled", 0, 0, CFX_PERSISTENT_INTERP, 2},
    {CFX_BACKEND_CUDA_PERSISTENT, "cuda-persistent-traced", "compiled-traced", 0, 0, CFX_PERSISTENT_COMPILED, 1},
    {CFX_BACKEND_CUDA_PERSISTENT, "cuda-persistent-profiled", "compiled-profiled", 0, 0, CFX_PERSISTENT_COMPILED, 2},
};
enum { NEXECUTORS = sizeof executors / sizeof executors[0] };

/* ================================================================================== */
/* ---- one row: a graph on an executor ---------------------------------------------- */

typedef struct options {
    int quick;
    int cpu_only;
    int predict;     /* --predict: the cost sheet's predictions alone, no runs */
    int fake_device; /* --fake-device: made-up device and floors, for testing the records */
    int blocks;      /* --blocks: the grid the predictions price (0: the device's, else 264) */
    int have_floors; /* --floors GB,BB,BW,REC,MOP,PH: the predictions' floors (cfx dump --cost's) */
    cfx_floors floors;
    const char *csv, *json, *export_dir, *bench_dir;
    const char *graphs, *executors; /* comma lists, NULL for all */
} options;

typedef struct row {
    int ran;              /* timings exist */
    int failed;           /* a check or a run failed: the exit status becomes 1 */
    char state[256];      /* "ok", "unavailable: ...", "error: ...", "FAIL: ..." */
    char note[160];
    int64_t iters;        /* loop iterations per run: the trip count the inputs imply */
    int64_t ticks;        /* what cfx_exec_iterations reported (see ticks_ok) */
    int reduced;          /* the cpu executor ran fewer iterations than the GPU ones */
    int repeats;
    double med_us, min_us, max_us, p25_us, p75_us; /* per iteration */
    double run_ms, wall_ms;                        /* medians per run */
    int grid_blocks;      /* the grid cuda-persistent launched ("one kernel of N blocks"), or 0 */
    double pred, pred_run; /* the cost sheet's prediction for that grid (report's pred, pred_run) */
} row;

/* Whether `name` is in the comma list (NULL means everything). */
static int selected(const char *list, const char *name)
{
    size_t n = strlen(name);
    if (!list)
        return 1;
    for (const char *p = list; *p;) {
        const char *q = strchr(p, ',');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p += len + (q ? 1 : 0);
    }
    return 0;
}

/* DIR/KEY.NAME.npy for an input, DIR/KEY.out.NAME.npy for a result (prefix "out."). */
static void write_npy(const options *o, const char *key, const char *prefix, const char *name,
                      const cfx_type *t, const void *data)
{
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/%s.%s%s.npy", o->export_dir, key, prefix, name);
    if (npy_write_file(path, t, data, err, sizeof err) != 0)
        fprintf(stderr, "bench_gpu: %s\n", err);
}

/* Runs graph g of m on executor ex with the inputs of d, checks the results, then times it.
 * Fills r; returns nothing since every outcome, failures included, is a row of the table. */
static void run_row(const options *o, const bench_case *c, cfx_module *m, int g, case_data *d,
                    const executor *ex, row *r, const char **exported_from)
{
    const cfx_backend b = ex->backend;
    const int is_cuda = b != CFX_BACKEND_CPU;
    const int warmup = is_cuda ? 2 : 1;
    const int min_rep = o->quick ? 3 : 5, max_rep = o->quick ? 10 : 50;
    const double budget = o->quick ? 0.5 : 2.0;
    cfx_exec *e = NULL;
    buffer res[MAX_BUFFERS];
    int nres = cfx_result_count(m, g), nin = cfx_input_count(m, g);
    double *per_iter = NULL, *run_ms = NULL, *wall_ms = NULL;
    char why[200] = "", avail[200] = ""; /* shorter than r->state, which adds a prefix */
    char *err = NULL;
    buffer *iters_in = c->iters_input ? find_buffer(d->in, d->nin, c->iters_input) : NULL;
    int32_t saved_iters = iters_in ? *(int32_t *)iters_in->host : 0;
    double started, build_ms = 0;
    int rep = 0;
    int64_t trip = d->expect_iters;
#ifdef CFX_HAVE_CUDA
    void *dev_in[MAX_BUFFERS] = {0}, *dev_res[MAX_BUFFERS] = {0};
    cudaStream_t stream = NULL;
    cudaEvent_t t0 = NULL, t1 = NULL;
#endif

    memset(r, 0, sizeof *r);
    memset(res, 0, sizeof res);
    if (!cfx_backend_available(b, avail, sizeof avail)) {
        snprintf(r->state, sizeof r->state, "unavailable: %s", avail);
        return;
    }
    if (nres > MAX_BUFFERS || nin != d->nin) {
        snprintf(r->state, sizeof r->state, "error: the graph has %d inputs and %d results, the "
                 "driver expects %d inputs", nin, nres, d->nin);
        r->failed = 1;
        return;
    }
    /* The cpu executor runs the heavy graphs for fewer iterations: time per iteration is
     * what is compared, and a full run would take minutes. */
    if (!is_cuda && !o->cpu_only && iters_in && c->cpu_iters > 0) {
        *(int32_t *)iters_in->host = c->cpu_iters;
        r->reduced = 1;
        trip = c->cpu_iters;
    }
    per_iter = calloc((size_t)max_rep, sizeof *per_iter);
    run_ms = calloc((size_t)max_rep, sizeof *run_ms);
    wall_ms = calloc((size_t)max_rep, sizeof *wall_ms);
    if (!per_iter || !run_ms || !wall_ms) {
        snprintf(r->state, sizeof r->state, "error: out of memory");
        goto fail;
    }
    e = cfx_exec_new(m, g, b, &err);
    if (!e) {
        snprintf(r->state, sizeof r->state, "error: %s", err ? err : "cfx_exec_new failed");
        goto fail;
    }
    if (ex->option && cfx_set_option(e, (cfx_option)ex->option, ex->value) != 0) {
        snprintf(r->state, sizeof r->state, "error: %.180s", cfx_exec_error(e));
        goto fail;
    }
    if (ex->mode >= 0) {
        /* the mode, and for the compiled kernel its build time (main turns the cache off) */
        double b0 = bench_wall_s();
        if (cfx_set_persistent_mode(e, (cfx_persistent_mode)ex->mode) != ex->mode) {
            /* the compiled kernel takes every graph (calls of application kernels included):
             * a mode that does not run (NVRTC missing or failing) is a failure */
            snprintf(r->state, sizeof r->state, "unavailable: %.180s", cfx_exec_error(e));
            goto fail;
        }
        if (ex->mode == CFX_PERSISTENT_COMPILED && ex->option == CFX_OPTION_DEVICE_LAUNCH &&
            !strstr(cfx_exec_backend_detail(e), "end the launch") &&
            !strstr(cfx_exec_backend_detail(e), "ends the launch")) {
            /* the compiled kernel's pause path: only graphs with a record that ends the launch */
            snprintf(r->state, sizeof r->state, "n/a: no record ends the compiled kernel's launch");
            goto done;
        }
        build_ms = 1e3 * (bench_wall_s() - b0);
    }
    if ((ex->seen == 1 && cfx_set_trace(e, "/dev/null") != 0) || (ex->seen == 2 && cfx_set_profile(e, 1) != 0)) {
        snprintf(r->state, sizeof r->state, "error: %.180s", cfx_exec_error(e));
        goto fail;
    }
    for (int i = 0; i < nres; i++) {
        res[i].name = cfx_result_name(m, g, i);
        res[i].type = cfx_result_type(m, g, i);
        res[i].bytes = (size_t)cfx_type_count(&res[i].type) * (size_t)cfx_dtype_size(res[i].type.dtype);
        res[i].host = calloc(1, res[i].bytes ? res[i].bytes : 1);
        if (!res[i].host) {
            snprintf(r->state, sizeof r->state, "error: out of memory");
            goto fail;
        }
    }

#ifdef CFX_HAVE_CUDA
    /* The stream first: the inputs are placed on it and the results read back on it, so
     * both are ordered with the runs. A cudaMemcpy from pageable memory on the legacy
     * default stream may return before its bytes land, and a non-blocking stream does not
     * wait for that stream. */
    if (is_cuda) {
        if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess ||
            cudaEventCreate(&t0) != cudaSuccess || cudaEventCreate(&t1) != cudaSuccess) {
            snprintf(r->state, sizeof r->state, "error: cannot create a stream or events (%s)",
                     cudaGetErrorString(cudaGetLastError()));
            goto fail;
        }
        cfx_set_stream(e, stream);
    }
#endif

    /* Bind: device buffers for the CUDA executors, so that no run copies its inputs
     * through the host and the times are the executor's alone. */
    for (int i = 0; i < nin; i++) {
        const char *name = cfx_input_name(m, g, i);
        buffer *in = find_buffer(d->in, d->nin, name);
        int rc;
        if (!in) {
            snprintf(r->state, sizeof r->state, "error: the driver has no input '%s'", name);
            goto fail;
        }
#ifdef CFX_HAVE_CUDA
        if (is_cuda) {
            if (cudaMalloc(&dev_in[i], in->bytes) != cudaSuccess ||
                cudaMemcpyAsync(dev_in[i], in->host, in->bytes, cudaMemcpyHostToDevice, stream) != cudaSuccess ||
                cudaStreamSynchronize(stream) != cudaSuccess) {
                snprintf(r->state, sizeof r->state, "error: cannot place input '%s' on the device "
                         "(%s)", name, cudaGetErrorString(cudaGetLastError()));
                goto fail;
            }
            rc = cfx_bind_device(e, name, dev_in[i], in->bytes);
        } else
#endif
            rc = cfx_bind(e, name, in->host, in->bytes);
        if (rc != 0) {
            snprintf(r->state, sizeof r->state, "error: %s", cfx_exec_error(e));
            goto fail;
        }
    }
    for (int i = 0; i < nres; i++) {
        int rc;
#ifdef CFX_HAVE_CUDA
        if (is_cuda) {
            if (cudaMalloc(&dev_res[i], res[i].bytes) != cudaSuccess) {
                snprintf(r->state, sizeof r->state, "error: cannot allocate result '%s' on the "
                         "device (%s)", res[i].name, cudaGetErrorString(cudaGetLastError()));
                goto fail;
            }
            rc = cfx_bind_device(e, res[i].name, dev_res[i], res[i].bytes);
        } else
#endif
            rc = cfx_bind(e, res[i].name, res[i].host, res[i].bytes);
        if (rc != 0) {
            snprintf(r->state, sizeof r->state, "error: %s", cfx_exec_error(e));
            goto fail;
        }
    }
    /* Warm-up runs, then the check, then the timed repeats (rep < 0 is warm-up). */
    started = bench_wall_s();
    for (rep = -warmup; rep < max_rep; rep++) {
        double w0, w1, ms = 0;
        cfx_status st;
        int64_t iters;
        if (rep >= min_rep && bench_wall_s() - started >= budget)
            break;
        w0 = bench_wall_s();
#ifdef CFX_HAVE_CUDA
        if (is_cuda) {
            float fms = 0;
            /* On the pause-and-relaunch path cfx_wait serves the pauses and enqueues the later
             * launches, so the end event goes after it; elsewhere the whole run is enqueued by
             * cfx_run_async, and an end event after cfx_wait would add the host's wake-up. */
            const char *detail = b == CFX_BACKEND_CUDA_PERSISTENT ? cfx_exec_backend_detail(e) : "";
            int host_served = strstr(detail, "pause and relaunch") != NULL;
            cudaEventRecord(t0, stream);
            if (cfx_run_async(e) != 0) {
                snprintf(r->state, sizeof r->state, "error: %s", cfx_exec_error(e));
                goto fail;
            }
            if (!host_served)
                cudaEventRecord(t1, stream);
            st = cfx_wait(e);
            if (host_served)
                cudaEventRecord(t1, stream);
            w1 = bench_wall_s();
            if (cudaEventSynchronize(t1) != cudaSuccess ||
                cudaEventElapsedTime(&fms, t0, t1) != cudaSuccess) {
                snprintf(r->state, sizeof r->state, "error: timing events failed (%s)",
                         cudaGetErrorString(cudaGetLastError()));
                goto fail;
            }
            ms = fms;
        } else
#endif
        {
            st = cfx_run(e);
            w1 = bench_wall_s();
            ms = 1e3 * (w1 - w0);
        }
        if (st != CFX_OK) {
            snprintf(r->state, sizeof r->state, "error: run ended %s: %s", cfx_status_name(st),
                     st == CFX_ERROR ? cfx_exec_error(e) : cfx_exec_message(e));
            goto fail;
        }
        iters = cfx_exec_iterations(e);
        if (rep == -1) {
            /* The last warm-up run is the one checked; after it the executor's path is
             * settled (application kernels are captured at the first run). */
            if (b == CFX_BACKEND_CUDA_PERSISTENT) {
                const char *detail = cfx_exec_backend_detail(e);
                const char *of = strstr(detail, "one kernel of ");
                r->grid_blocks = of ? atoi(of + 14) : 0;
                if (ex->mode == CFX_PERSISTENT_COMPILED)
                    snprintf(r->note, sizeof r->note, "compiled kernel built in %.0f ms", build_ms);
                else
                    snprintf(r->note, sizeof r->note, "%s",
                             strstr(detail, "device graph launch") ? "device graph launch" : detail);
            }
#ifdef CFX_HAVE_CUDA
            for (int i = 0; is_cuda && i < nres; i++)
                if (cudaMemcpyAsync(res[i].host, dev_res[i], res[i].bytes, cudaMemcpyDeviceToHost, stream) !=
                        cudaSuccess ||
                    cudaStreamSynchronize(stream) != cudaSuccess) {
                    snprintf(r->state, sizeof r->state, "error: cannot read result '%s' back (%s)",
                             res[i].name, cudaGetErrorString(cudaGetLastError()));
                    goto fail;
                }
#endif
            if (c->check(d, res, nres, iters, why, sizeof why) != 0) {
                snprintf(r->state, sizeof r->state, "FAIL: %s", why);
                r->failed = 1;
            } else if (o->export_dir && !r->reduced) {
                for (int i = 0; i < nres; i++)
                    write_npy(o, c->key, "out.", res[i].name, &res[i].type, res[i].host);
                *exported_from = ex->name;
            }
            r->iters = trip;
            r->ticks = iters;
            started = bench_wall_s();
        }
        if (rep < 0)
            continue;
        per_iter[rep] = 1e3 * ms / (double)(trip > 0 ? trip : 1);
        run_ms[rep] = ms;
        wall_ms[rep] = 1e3 * (w1 - w0);
    }

    r->repeats = rep;
    if (rep > 0) {
        qsort(run_ms, (size_t)rep, sizeof *run_ms, bench_cmp_double);
        qsort(wall_ms, (size_t)rep, sizeof *wall_ms, bench_cmp_double);
        qsort(per_iter, (size_t)rep, sizeof *per_iter, bench_cmp_double);
        r->ran = 1;
        r->med_us = bench_quantile(per_iter, rep, 0.5);
        r->min_us = per_iter[0];
        r->max_us = per_iter[rep - 1];
        r->p25_us = bench_quantile(per_iter, rep, 0.25);
        r->p75_us = bench_quantile(per_iter, rep, 0.75);
        r->run_ms = bench_quantile(run_ms, rep, 0.5);
        r->wall_ms = bench_quantile(wall_ms, rep, 0.5);
        /* Events that saw far less than the host did mean the run was not on our stream (but a
         * traced or profiled run reads its timeline back and writes it after the run). */
        if (is_cuda && !ex->seen && r->wall_ms - r->run_ms > 1.0 && r->run_ms < 0.5 * r->wall_ms) {
            size_t at = strlen(r->note);
            snprintf(r->note + at, sizeof r->note - at, "%sevents saw %.3g ms of a %.3g ms run: stream not "
                     "honoured?", at ? "; " : "", r->run_ms, r->wall_ms);
        }
    }
    if (!r->failed)
        snprintf(r->state, sizeof r->state, "ok");
    goto done;


fail:
    r->failed = 1;
done:
    if (iters_in)
        *(int32_t *)iters_in->host = saved_iters;
    if (e)
        cfx_exec_free(e);
    cfx_free(err);
#ifdef CFX_HAVE_CUDA
    for (int i = 0; i < MAX_BUFFERS; i++) {
        if (dev_in[i])
            cudaFree(dev_in[i]);
        if (dev_res[i])
            cudaFree(dev_res[i]);
    }
    if (t0)
        cudaEventDestroy(t0);
    if (t1)
        cudaEventDestroy(t1);
    if (stream)
        cudaStreamDestroy(stream);
#endif
    for (int i = 0; i < nres && i < MAX_BUFFERS; i++)
        free(res[i].host);
    free(per_iter);
    free(run_ms);
    free(wall_ms);
}

/* ================================================================================== */
/* ---- reporting -------------------------------------------------------------------- */

/* A floor as the JSON records give it, filled from the measured floors (or, under
 * --fake-device, from fixed figures, so that a test can check the writer without a GPU). */
typedef struct json_floor {
    const char *name;
    const char *unit;
    double median, min, max;
    int repeats;
} json_floor;

enum { MAX_JSON_FLOORS = 16 };

/* What every record says about the run: the commit, the GPU, the driver and the runtime
 * ("none" on a machine without one), and the grid the cost sheet prices. */
typedef struct run_meta {
    char commit[64];
    char gpu[256];
    char driver[32];
    char runtime[32];
    int sms;
    int blocks; /* the grid of the cost sheet's predictions: what the executors launch */
    int fake;   /* --fake-device: figures made up for a test */
    char floors[128]; /* --predict: the floors priced, GB,BB,BW,REC,MOP,PH as cfx dump --cost takes them */
} run_meta;

typedef struct report {
    int have_device;
#ifdef CFX_HAVE_CUDA
    floors_device dev;
    floors fl;
#endif
    run_meta meta;
    json_floor jfloors[MAX_JSON_FLOORS];
    int njfloors;
    /* --predict: the cost sheet's predicted us per iteration, [graph][0: compiled, 1:
     * interpreter]; < 0 where it has none */
    double pred[NCASES][2];
    double bandwidth_gbs; /* 0 when not measured */
    row rows[NCASES][NEXECUTORS];
    int run_case[NCASES];
    const char *exported_from[NCASES];
} report;

static const row *host_row(const report *rp, int ci)
{
    for (int x = 0; x < NEXECUTORS; x++)
        if (executors[x].backend == CFX_BACKEND_CUDA_HOST && rp->rows[ci][x].ran)
            return &rp->rows[ci][x];
    return NULL;
}

/* Speedup over cuda-host (its median over this one's), or 0 when there is none. */
static double speedup(const report *rp, int ci, const row *r)
{
    const row *h = host_row(rp, ci);
    return h && r->ran && r->med_us > 0 ? h->med_us / r->med_us : 0;
}

/* The bandwidth floor per iteration in microseconds, or 0 for control-only graphs. */
static double floor_us(const report *rp, int ci, const case_data *d)
{
    if (!cases[ci].bytes_per_iter || rp->bandwidth_gbs <= 0)
        return 0;
    return cases[ci].bytes_per_iter(d) / (rp->bandwidth_gbs * 1e9) * 1e6;
}

#ifdef CFX_HAVE_CUDA
static void print_floors(const report *rp)
{
    const floors *f = &rp->fl;
    const struct {
        const char *name;
        const floor_stat *s;
        const char *unit;
    } list[] = {
        {"empty kernel launch (back to back)", &f->launch_us, "us"},
        {"4-byte device-to-host copy + stream sync", &f->d2h_sync_us, "us"},
        {"WHILE conditional node, one iteration (empty body)", &f->while_iter_us, "us"},
        {"grid barrier (the executor's, with its status poll)", &f->grid_barrier_us, "us"},
        {"block barrier (__syncthreads)", &f->block_barrier_us, "us"},
        {"device memory bandwidth (D2D copy, read + write)", &f->bandwidth_gbs, "GB/s"},
        {"L2 read bandwidth (16 MiB read again and again, executor's grid)", &f->l2_read_gbs, "GB/s"},
        {"device tail launch of its own graph (executor's grid)", &f->tail_self_us, "us"},
        {"device tail launch of an empty graph, then its own", &f->tail_site_us, "us"},
    };
    printf("\n## Floors\n\n");
    printf("Grid barrier: %d blocks x %d threads; block barrier: 1 block x %d threads; "
           "copy: %.0f MiB moved.\n\n", f->grid_blocks, f->block_threads, f->block_threads,
           f->copy_bytes / (1024.0 * 1024.0));
    printf("| floor | median | min | max | unit | repeats |\n|---|---:|---:|---:|---|---:|\n");
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) {
        if (list[i].s->repeats == 0) {
            printf("| %s | not measured: %s | | | %s | 0 |\n", list[i].name, f->tail_note, list[i].unit);
            continue;
        }
        printf("| %s | %.3f | %.3f | %.3f | %s | %d |\n", list[i].name, list[i].s->median,
               list[i].s->min, list[i].s->max, list[i].unit, list[i].s->repeats);
    }
    printf("\nGrid barrier designs, each in a cooperative launch of blocks of %d threads:\n\n"
           "| design | blocks | median us | min | max | against the executor's |\n|---|---:|---:|---:|---:|---:|\n",
           f->block_threads);
    for (int i = 0; i < FL_BARRIER_VARIANTS; i++) {
        const floor_stat *v = &f->barrier_variant_us[i];
        printf("| %s | %d | %.3f | %.3f | %.3f | %.2fx |\n", floors_barrier_variant_names[i],
               f->barrier_variant_blocks[i], v->median, v->min, v->max,
               v->median > 0 ? f->grid_barrier_us.median / v->median : 0.0);
    }
    if (f->tail_blocks > 0)
        printf("\nTail launches: a kernel of %d blocks x %d threads, the node of a device graph.\n",
               f->tail_blocks, f->block_threads);
}
#endif

static void print_table(const report *rp, case_data *data)
{
    printf("\n## Time per loop iteration\n\n");
    printf("| graph | executor | iters/run | us/iter (median) | min .. max | IQR | "
           "speedup vs cuda-host | bandwidth floor us/iter | of floor | check |\n");
    printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (int ci = 0; ci < NCASES; ci++) {
        if (!rp->run_case[ci])
            continue;
        for (int x = 0; x < NEXECUTORS; x++) {
            const row *r = &rp->rows[ci][x];
            double fl = floor_us(rp, ci, &data[ci]), sp = speedup(rp, ci, r);
            if (!r->ran) {
                printf("| %s | %s | | | | | | | | %s |\n", cases[ci].key,
                       executors[x].name, r->state);
                continue;
            }
            printf("| %s | %s | %lld%s | %.3f | %.3f .. %.3f | %.3f | ", cases[ci].key,
                   executors[x].name, (long long)r->iters, r->reduced ? " (cpu)" : "",
                   r->med_us, r->min_us, r->max_us, r->p75_us - r->p25_us);
            if (sp > 0)
                printf("%.2fx | ", sp);
            else
                printf("| ");
            if (fl > 0)
                printf("%.3f | %.0f%% | ", fl, 100.0 * fl / r->med_us);
            else
                printf("| | ");
            printf("%s%s%s |\n", r->state, r->note[0] ? "; " : "", r->note);
        }
    }
}

/* A JSON string: quotes, backslashes and control bytes escaped. */
static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* A CSV field: quoted, with quotes doubled. */
static void csv_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

#ifdef CFX_HAVE_CUDA
/* The floors by the names the CSV and JSON files give them, in one order for both. */
#define NFLOORS 9
typedef struct named_floor {
    const char *name;
    const floor_stat *s;
} named_floor;

static void floor_list(const floors *fl, named_floor out[NFLOORS])
{
    const named_floor list[NFLOORS] = {{"launch_us", &fl->launch_us},
                                       {"d2h_sync_us", &fl->d2h_sync_us},
                                       {"while_iter_us", &fl->while_iter_us},
                                       {"grid_barrier_us", &fl->grid_barrier_us},
                                       {"block_barrier_us", &fl->block_barrier_us},
                                       {"bandwidth_gbs", &fl->bandwidth_gbs},
                                       {"l2_read_gbs", &fl->l2_read_gbs},
                                       {"tail_self_us", &fl->tail_self_us},
                                       {"tail_site_us", &fl->tail_site_us}};
    for (int i = 0; i < NFLOORS; i++)
        out[i] = list[i];
}
#endif

static int write_csv(const report *rp, case_data *data, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bench_gpu: cannot write %s\n", path);
        return -1;
    }
    fprintf(f, "graph,executor,state,iterations,ticks,reduced,repeats,median_us_per_iter,min_us,max_us,"
               "p25_us,p75_us,median_run_ms,median_wall_ms,speedup_vs_cuda_host,"
               "floor_us_per_iter,fraction_of_floor\n");
#ifdef CFX_HAVE_CUDA
    if (rp->have_device) {
        const floors *fl = &rp->fl;
        named_floor list[NFLOORS];
        floor_list(fl, list);
        for (int i = 0; i < NFLOORS; i++)
            fprintf(f, "floor,%s,\"%s\",,,,%d,%.6g,%.6g,%.6g,,,,,,,\n", list[i].name,
                    list[i].s->repeats ? "ok" : "not measured", list[i].s->repeats, list[i].s->median,
                    list[i].s->min, list[i].s->max);
    }
#endif
    for (int ci = 0; ci < NCASES; ci++) {
        if (!rp->run_case[ci])
            continue;
        for (int x = 0; x < NEXECUTORS; x++) {
            const row *r = &rp->rows[ci][x];
            double fl = floor_us(rp, ci, &data[ci]);
            fprintf(f, "%s,%s,", cases[ci].key, executors[x].name);
            csv_string(f, r->state);
            if (!r->ran) {
                fprintf(f, ",,,,,,,,,,,,,,\n");
                continue;
            }
            fprintf(f, ",%lld,%lld,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n",
                    (long long)r->iters, (long long)r->ticks, r->reduced, r->repeats, r->med_us,
                    r->min_us, r->max_us, r->p25_us, r->p75_us, r->run_ms, r->wall_ms, speedup(rp, ci, r), fl,
                    fl > 0 ? fl / r->med_us : 0.0);
        }
    }
    fclose(f);
    return 0;
}

/* The cost sheet's prediction for one iteration of the graph's loop (its slowest loop where
 * it has several: the benchmarks have one each) in each mode: out[0] compiled, out[1]
 * interpreter, < 0 where the sheet gives none. The sheet is text for people (cfx dump
 * --cost); its rows "  interpreter ..." and "  compiled ..." end in the predicted us. */
static void predict(const cfx_module *m, int g, int blocks, const cfx_floors *fl, double out[2])
{
    char *text = cfx_dump_cost(m, g, blocks, fl);
    out[0] = out[1] = -1;
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        int mode = strncmp(line, "  compiled ", 11) == 0 ? 0 : strncmp(line, "  interpreter ", 14) == 0 ? 1 : -1;
        if (mode >= 0) {
            const char *q = line + len;
            while (q > line && q[-1] == ' ')
                q--;
            while (q > line && q[-1] != ' ')
                q--;
            char *e = NULL;
            double v = strtod(q, &e);
            if (e != q && v > out[mode])
                out[mode] = v;
        }
        line += len + (end ? 1 : 0);
    }
    cfx_free(text);
}

/* The prediction a row is read against: the cost sheet prices cuda-persistent's two modes
 * (the L2 window at device memory, so the -no-l2 rows too); other rows have none. */
static int row_pred_mode(const executor *x)
{
    if (x->backend != CFX_BACKEND_CUDA_PERSISTENT)
        return -1;
    if (strcmp(x->jmode, "compiled") == 0 || strcmp(x->jmode, "compiled-no-l2") == 0)
        return 0;
    if (strcmp(x->jmode, "interp") == 0 || strcmp(x->jmode, "interp-no-l2") == 0)
        return 1;
    return -1;
}

static void json_number(FILE *f, const char *key, double v)
{
    fprintf(f, ", \"%s\": ", key);
    if (v >= 0 && isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fprintf(f, "null");
}

/* The fields every record begins with. */
static void json_head(FILE *f, const run_meta *mt, const char *kind, const char *source)
{
    fprintf(f, "{\"kind\": \"%s\", \"source\": \"%s\", \"commit\": ", kind, source);
    json_string(f, mt->commit);
    fprintf(f, ", \"gpu\": ");
    json_string(f, mt->gpu);
    fprintf(f, ", \"driver\": ");
    json_string(f, mt->driver);
    fprintf(f, ", \"cuda_runtime\": ");
    json_string(f, mt->runtime);
    fprintf(f, ", \"sms\": %d, \"blocks\": %d", mt->sms, mt->blocks);
    if (mt->fake)
        fprintf(f, ", \"fake\": true");
}

/* The round's records (profiling/README.md, "Rounds as records"): one per floor, then one
 * per row (graph x executor), each with the commit, the GPU, the driver and the runtime, the
 * graph, the backend and its mode, the median us per iteration, the floor it is read against
 * and the cost sheet's prediction. With `predict_only`, one record per graph and mode of
 * cuda-persistent with the prediction as its figure ("source": "cost sheet"). */
static int write_json(const report *rp, case_data *data, const char *path, int predict_only)
{
    FILE *f = fopen(path, "w");
    const run_meta *mt = &rp->meta;
    const char *sep = "\n  ";
    if (!f) {
        fprintf(stderr, "bench_gpu: cannot write %s\n", path);
        return -1;
    }
    fprintf(f, "{\"format\": \"cfx-round/1\", \"records\": [");
    for (int i = 0; i < rp->njfloors && !predict_only; i++, sep = ",\n  ") {
        const json_floor *j = &rp->jfloors[i];
        fprintf(f, "%s", sep);
        json_head(f, mt, "floor", "bench_gpu");
        fprintf(f, ", \"graph\": \"floor\", \"backend\": \"%s\", \"mode\": \"%s\", \"unit\": \"%s\", "
                   "\"state\": \"%s\", \"repeats\": %d", j->name, j->unit, j->unit, j->repeats ? "ok" : "not measured",
                j->repeats);
        json_number(f, "value", j->repeats ? j->median : -1);
        json_number(f, "min", j->repeats ? j->min : -1);
        json_number(f, "max", j->repeats ? j->max : -1);
        fprintf(f, "}");
    }
    for (int ci = 0; ci < NCASES; ci++) {
        if (!rp->run_case[ci])
            continue;
        if (predict_only) {
            for (int k = 0; k < 2; k++, sep = ",\n  ") {
                fprintf(f, "%s", sep);
                json_head(f, mt, "row", "cost sheet");
                fprintf(f, ", \"graph\": \"%s\", \"backend\": \"cuda-persistent\", \"mode\": \"%s\", "
                           "\"executor\": \"%s\", \"state\": \"%s\"", cases[ci].key, k ? "interp" : "compiled",
                        k ? "cuda-persistent-interp" : "cuda-persistent", rp->pred[ci][k] >= 0 ? "ok" : "no prediction");
                fprintf(f, ", \"floors\": ");
                json_string(f, mt->floors);
                json_number(f, "us_per_iter", rp->pred[ci][k]);
                json_number(f, "predicted_us_per_iter", rp->pred[ci][k]);
                fprintf(f, "}");
            }
            continue;
        }
        for (int x = 0; x < NEXECUTORS; x++) {
            const row *r = &rp->rows[ci][x];
            double fl = floor_us(rp, ci, &data[ci]);
            int pm = row_pred_mode(&executors[x]);
            if (!r->ran && (!r->state[0] || strcmp(r->state, "not run") == 0))
                continue; /* not selected, or not reached yet (the file is rewritten after each graph) */
            fprintf(f, "%s", sep);
            sep = ",\n  ";
            json_head(f, mt, "row", "bench_gpu");
            fprintf(f, ", \"graph\": \"%s\", \"backend\": \"%s\", \"mode\": \"%s\", \"executor\": \"%s\", \"state\": ",
                    cases[ci].key, cfx_backend_name(executors[x].backend), executors[x].jmode, executors[x].name);
            json_string(f, r->state);
            if (r->note[0]) {
                fprintf(f, ", \"note\": ");
                json_string(f, r->note);
            }
            json_number(f, "us_per_iter", r->ran ? r->med_us : -1);
            if (r->ran) {
                fprintf(f, ", \"iterations\": %lld, \"ticks\": %lld, \"reduced\": %s, \"repeats\": %d",
                        (long long)r->iters, (long long)r->ticks, r->reduced ? "true" : "false", r->repeats);
                json_number(f, "min_us", r->min_us);
                json_number(f, "max_us", r->max_us);
                json_number(f, "p25_us", r->p25_us);
                json_number(f, "p75_us", r->p75_us);
                json_number(f, "median_run_ms", r->run_ms);
                json_number(f, "median_wall_ms", r->wall_ms);
                json_number(f, "speedup_vs_cuda_host", speedup(rp, ci, r) > 0 ? speedup(rp, ci, r) : -1);
            }
            if (fl > 0) {
                fprintf(f, ", \"floor\": \"bandwidth\"");
                json_number(f, "floor_us_per_iter", fl);
                json_number(f, "fraction_of_floor", r->ran && r->med_us > 0 ? fl / r->med_us : -1);
            } else
                fprintf(f, ", \"floor\": null, \"floor_us_per_iter\": null");
            if (r->grid_blocks > 0)
                fprintf(f, ", \"grid_blocks\": %d", r->grid_blocks);
            json_number(f, "predicted_us_per_iter", pm >= 0 ? r->pred : -1);
            json_number(f, "predicted_us_per_iter_run_floors", pm >= 0 ? r->pred_run : -1);
            fprintf(f, "}");
        }
    }
    fprintf(f, "\n]}\n");
    if (fclose(f) != 0) {
        fprintf(stderr, "bench_gpu: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

/* The commit the benchmark was built from: $CFX_COMMIT, else git's short hash of the source
 * tree (with "+" when it has uncommitted changes), else "unknown". */
static void find_commit(char *out, size_t len)
{
    const char *env = getenv("CFX_COMMIT");
    FILE *p;
    snprintf(out, len, "unknown");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return;
    }
    p = popen("git -C '" CFX_SOURCE_DIR "' rev-parse --short HEAD 2>/dev/null", "r");
    if (!p)
        return;
    if (fgets(out, (int)len, p)) {
        out[strcspn(out, "\r\n")] = 0;
        if (!out[0])
            snprintf(out, len, "unknown");
    }
    if (pclose(p) != 0)
        snprintf(out, len, "unknown");
    else if (strcmp(out, "unknown") != 0) {
        p = popen("git -C '" CFX_SOURCE_DIR "' diff --quiet HEAD 2>/dev/null; echo $?", "r");
        char rc[8] = "";
        if (p) {
            if (fgets(rc, sizeof rc, p) && rc[0] == '1' && strlen(out) + 2 < len)
                strcat(out, "+");
            pclose(p);
        }
    }
}

static void add_jfloor(report *rp, const char *name, const char *unit, double med, double min, double max, int repeats)
{
    if (rp->njfloors >= MAX_JSON_FLOORS)
        return;
    json_floor *j = &rp->jfloors[rp->njfloors++];
    j->name = name;
    j->unit = unit;
    j->median = med;
    j->min = min;
    j->max = max;
    j->repeats = repeats;
}

/* --fake-device: a made-up device and floors (H100-like figures, marked "fake") so that a
 * test can check the records of a run with floors on a machine without a GPU. */
static void fake_device(report *rp)
{
    run_meta *mt = &rp->meta;
    snprintf(mt->gpu, sizeof mt->gpu, "fake \"GPU\" for a test");
    snprintf(mt->driver, sizeof mt->driver, "13.0");
    snprintf(mt->runtime, sizeof mt->runtime, "13.0");
    mt->sms = 132;
    mt->fake = 1;
    add_jfloor(rp, "grid_barrier_us", "us", 1.21, 1.19, 1.30, 5);
    add_jfloor(rp, "block_barrier_us", "us", 0.014, 0.013, 0.015, 5);
    add_jfloor(rp, "bandwidth_gbs", "GB/s", 2959.0, 2900.0, 3000.0, 5);
    add_jfloor(rp, "tail_self_us", "us", 0, 0, 0, 0); /* one not measured */
    rp->bandwidth_gbs = 2959.0;
}

/* DIR/manifest.json: for each graph its file, the inputs and results written beside it,
 * the loop iterations of one run, and the executor whose checked results they are. */
static int write_manifest(const options *o, const report *rp, case_data *data, cfx_module **mods)
{
    char path[1024];
    FILE *f;
    int first = 1;
    snprintf(path, sizeof path, "%s/manifest.json", o->export_dir);
    f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bench_gpu: cannot write %s\n", path);
        return -1;
    }
    fprintf(f, "{\n  \"graphs\": {");
    for (int ci = 0; ci < NCASES; ci++) {
        cfx_module *m = mods[ci];
        int g = m ? cfx_graph_find(m, NULL) : -1;
        if (!rp->run_case[ci] || g < 0)
            continue;
        fprintf(f, "%s\n    \"%s\": {\"file\": ", first ? "" : ",", cases[ci].key);
        first = 0;
        snprintf(path, sizeof path, "%s/%s.cfx", o->bench_dir, cases[ci].key);
        json_string(f, path);
        fprintf(f, ", \"iterations\": %lld, \"results_from\": ", (long long)data[ci].expect_iters);
        if (rp->exported_from[ci])
            json_string(f, rp->exported_from[ci]);
        else
            fprintf(f, "null");
        fprintf(f, ",\n      \"inputs\": [");
        for (int i = 0; i < cfx_input_count(m, g); i++) {
            fprintf(f, "%s", i ? ", " : "");
            json_string(f, cfx_input_name(m, g, i));
        }
        fprintf(f, "], \"results\": [");
        for (int i = 0; i < cfx_result_count(m, g); i++) {
            fprintf(f, "%s", i ? ", " : "");
            json_string(f, cfx_result_name(m, g, i));
        }
        fprintf(f, "]}");
    }
    fprintf(f, "\n  }\n}\n");
    fclose(f);
    return 0;
}

/* ================================================================================== */
/* ---- main ------------------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr,
            "usage: bench_gpu [--quick] [--csv FILE] [--json FILE] [--export DIR]\n"
            "                 [--bench-dir DIR] [--graphs a,b,...] [--executors cpu,cuda-host,...]\n"
            "                 [--cpu-only] [--predict] [--blocks N] [--fake-device]\n"
            "--json writes every row and floor as a record (profiling/README.md, \"Rounds as records\");\n"
            "--predict prints and writes the cost sheet's predictions alone (no GPU needed) for a grid\n"
            "of --blocks blocks (default: what the executors launch on this device, else 264);\n"
            "--floors GB,BB,BW,REC,MOP,PH gives --predict the floors cfx dump --cost takes;\n"
            "--fake-device (for tests) runs the cpu executor with a made-up device and floors\n"
            "graphs: counter if_in_while collatz power_iteration cg_1024 cg_8192 greedy_decode call_matmul\n"
            "        call_op call_op_kernel call_op_cfx\n"
            "executors: cpu cuda-host cuda-graph cuda-persistent cuda-persistent-compiled-pause\n"
            "           cuda-persistent-interp cuda-persistent-pause cuda-persistent-inline cuda-persistent-records\n"
            "           cuda-persistent-interp-traced cuda-persistent-interp-profiled\n"
            "           cuda-persistent-traced cuda-persistent-profiled\n");
}

static int parse_args(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->bench_dir = CFX_SOURCE_DIR "/profiling/bench";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **value = NULL;
        if (strcmp(a, "--quick") == 0)
            o->quick = 1;
        else if (strcmp(a, "--cpu-only") == 0)
            o->cpu_only = 1;
        else if (strcmp(a, "--predict") == 0)
            o->predict = 1;
        else if (strcmp(a, "--fake-device") == 0)
            o->fake_device = o->cpu_only = 1;
        else if (strcmp(a, "--floors") == 0 && i + 1 < argc) {
            double *v[6] = {&o->floors.grid_barrier_us, &o->floors.block_barrier_us, &o->floors.bandwidth_gbs,
                            &o->floors.record_us, &o->floors.microop_us, &o->floors.phase_us};
            const char *t = argv[++i];
            int used = 0, ok = sscanf(t, "%lf,%lf,%lf,%lf,%lf,%lf%n", v[0], v[1], v[2], v[3], v[4], v[5], &used) == 6 &&
                                t[used] == '\0';
            for (int k = 0; ok && k < 6; k++)
                ok = *v[k] > 0 && *v[k] < 1e12;
            if (!ok) {
                fprintf(stderr, "bench_gpu: --floors wants six positive numbers, GB,BB,BW,REC,MOP,PH, got '%s'\n", t);
                return -1;
            }
            o->have_floors = 1;
        } else if (strcmp(a, "--blocks") == 0 && i + 1 < argc) {
            o->blocks = atoi(argv[++i]);
            if (o->blocks < 1 || o->blocks > 1000000) {
                fprintf(stderr, "bench_gpu: --blocks wants a count of blocks from 1 to 1000000\n");
                return -1;
            }
        }
        else if (strcmp(a, "--csv") == 0)
            value = &o->csv;
        else if (strcmp(a, "--json") == 0)
            value = &o->json;
        else if (strcmp(a, "--export") == 0)
            value = &o->export_dir;
        else if (strcmp(a, "--bench-dir") == 0)
            value = &o->bench_dir;
        else if (strcmp(a, "--graphs") == 0)
            value = &o->graphs;
        else if (strcmp(a, "--executors") == 0)
            value = &o->executors;
        else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage();
            exit(0);
        } else {
            fprintf(stderr, "bench_gpu: unknown option '%s'\n", a);
            usage();
            return -1;
        }
        if (value) {
            if (i + 1 >= argc) {
                fprintf(stderr, "bench_gpu: %s needs a value\n", a);
                return -1;
            }
            *value = argv[++i];
        }
    }
    return 0;
}

/* Every name in a comma list must be one of `known` (n entries). */
static int check_list(const char *what, const char *list, const char *const *known, int n)
{
    for (const char *p = list; p && *p;) {
        const char *q = strchr(p, ',');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        int found = 0;
        for (int i = 0; i < n; i++)
            if (strlen(known[i]) == len && strncmp(known[i], p, len) == 0)
                found = 1;
        if (!found) {
            fprintf(stderr, "bench_gpu: unknown %s '%.*s'\n", what, (int)len, p);
            return -1;
        }
        p += len + (q ? 1 : 0);
    }
    return 0;
}

/* The cost sheet's prediction for row (ci, x): with its default floors (an H100's) and, where
 * this run measured them, with the run's grid barrier, block barrier and bandwidth (the
 * records, micro-ops and phases stay the sheet's: no floor measures them apart), for the grid
 * the row's executor launched where it said (else the report's). -1 where there is none. */
static void row_prediction(report *rp, int ci, const cfx_module *m, int g, int x)
{
    row *r = &rp->rows[ci][x];
    int pm = row_pred_mode(&executors[x]);
    int blocks = r->grid_blocks > 0 ? r->grid_blocks : rp->meta.blocks;
    double p[2];
    r->pred = r->pred_run = -1;
    if (pm < 0 || !r->ran)
        return;
    predict(m, g, blocks, NULL, p);
    r->pred = p[pm];
    if (rp->njfloors > 0) {
        cfx_floors run = cost_default_floors;
        for (int i = 0; i < rp->njfloors; i++) {
            const json_floor *j = &rp->jfloors[i];
            if (!j->repeats || j->median <= 0)
                continue;
            if (strcmp(j->name, "grid_barrier_us") == 0)
                run.grid_barrier_us = j->median;
            else if (strcmp(j->name, "block_barrier_us") == 0)
                run.block_barrier_us = j->median;
            else if (strcmp(j->name, "bandwidth_gbs") == 0)
                run.bandwidth_gbs = j->median;
        }
        predict(m, g, blocks, &run, p);
        r->pred_run = p[pm];
    }
}

/* --predict: every selected graph's predictions, printed and (--json) written as records. */
static int predict_all(const options *o, report *rp, case_data *data)
{
    int failed = 0;
    const cfx_floors *fl = o->have_floors ? &o->floors : &cost_default_floors;
    snprintf(rp->meta.floors, sizeof rp->meta.floors, "%s%g,%g,%g,%g,%g,%g", o->have_floors ? "" : "default ",
             fl->grid_barrier_us, fl->block_barrier_us, fl->bandwidth_gbs, fl->record_us, fl->microop_us, fl->phase_us);
    printf("# The cost sheet's predictions, us per loop iteration (commit %s, a grid of %d blocks, "
           "floors %s)\n\n| graph | interpreter | compiled |\n|---|---:|---:|\n",
           rp->meta.commit, rp->meta.blocks, rp->meta.floors);
    for (int ci = 0; ci < NCASES; ci++) {
        char path[1024], *diag = NULL;
        cfx_module *m;
        if (!selected(o->graphs, cases[ci].key))
            continue;
        snprintf(path, sizeof path, "%s/%s.cfx", o->bench_dir, cases[ci].key);
        m = cfx_compile_file(bench_context(), path, &diag);
        if (!m) {
            fprintf(stderr, "bench_gpu: %s does not compile:\n%s", path, diag ? diag : "");
            cfx_free(diag);
            failed = 1;
            continue;
        }
        rp->run_case[ci] = 1;
        predict(m, cfx_graph_find(m, NULL), rp->meta.blocks, o->have_floors ? &o->floors : NULL, rp->pred[ci]);
        printf("| %s |", cases[ci].key);
        for (int k = 1; k >= 0; k--) {
            if (rp->pred[ci][k] >= 0)
                printf(" %.3f |", rp->pred[ci][k]);
            else
                printf(" none |");
        }
        printf("\n");
        cfx_module_free(m);
    }
    if (o->json && write_json(rp, data, o->json, 1) != 0)
        failed = 1;
    return failed;
}

#ifdef CFX_HAVE_CUDA
/* The run's device and floors as the records give them. */
static void device_meta(report *rp, int blocks)
{
    static char variant_names[FL_BARRIER_VARIANTS][96];
    const floors *fl = &rp->fl;
    named_floor list[NFLOORS];
    run_meta *mt = &rp->meta;
    snprintf(mt->gpu, sizeof mt->gpu, "%s", rp->dev.name);
    snprintf(mt->driver, sizeof mt->driver, "%d.%d", rp->dev.driver_version / 1000, rp->dev.driver_version % 1000 / 10);
    snprintf(mt->runtime, sizeof mt->runtime, "%d.%d", rp->dev.runtime_version / 1000,
             rp->dev.runtime_version % 1000 / 10);
    mt->sms = rp->dev.sms;
    /* the executors launch sms x min(occupancy, 2) blocks (P_MAX_BLOCKS_PER_SM), as the grid
     * barrier's floor does: the predictions price that grid unless told another */
    mt->blocks = blocks > 0 ? blocks : fl->grid_blocks > 0 ? fl->grid_blocks : 2 * rp->dev.sms;
    floor_list(fl, list);
    for (int i = 0; i < NFLOORS; i++)
        add_jfloor(rp, list[i].name, strstr(list[i].name, "_gbs") ? "GB/s" : "us", list[i].s->median,
                   list[i].s->min, list[i].s->max, list[i].s->repeats);
    for (int i = 0; i < FL_BARRIER_VARIANTS; i++) {
        const floor_stat *v = &fl->barrier_variant_us[i];
        snprintf(variant_names[i], sizeof variant_names[i], "grid_barrier %s, %d blocks", floors_barrier_variant_names[i],
                 fl->barrier_variant_blocks[i]);
        add_jfloor(rp, variant_names[i], "us", v->median, v->min, v->max, v->repeats);
    }
}
#endif

int main(int argc, char **argv)
{
    options o;
    static report rp;
    static case_data data[NCASES];
    cfx_module *mods[NCASES] = {0};
    const char *case_names[NCASES], *exec_names[NEXECUTORS];
    int failed = 0;

    if (parse_args(argc, argv, &o) != 0)
        return 2;
    /* every compiled kernel's build is a real compile, so its time can be reported */
    setenv("CFX_KERNEL_CACHE", "off", 0);
    for (int ci = 0; ci < NCASES; ci++)
        case_names[ci] = cases[ci].key;
    for (int x = 0; x < NEXECUTORS; x++)
        exec_names[x] = executors[x].name;
    if (check_list("graph", o.graphs, case_names, NCASES) != 0 ||
        check_list("executor", o.executors, exec_names, NEXECUTORS) != 0)
        return 2;

    if (o.export_dir && mkdir(o.export_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "bench_gpu: cannot create %s: %s\n", o.export_dir, strerror(errno));
        return 2;
    }
    find_commit(rp.meta.commit, sizeof rp.meta.commit);
    snprintf(rp.meta.gpu, sizeof rp.meta.gpu, "none");
    snprintf(rp.meta.driver, sizeof rp.meta.driver, "none");
    snprintf(rp.meta.runtime, sizeof rp.meta.runtime, "none");
    if (o.fake_device)
        fake_device(&rp);
    if (o.predict) {
        /* the grid the executors launch here: 2 blocks per multiprocessor where the occupancy
         * allows (P_MAX_BLOCKS_PER_SM; bench_gpu's rows say the grid each launched), else an
         * H100's or an H200's 264 */
        rp.meta.blocks = o.blocks > 0 ? o.blocks : 264;
#ifdef CFX_HAVE_CUDA
        char err[512];
        if (floors_device_info(&rp.dev, err, sizeof err) == 0) {
            snprintf(rp.meta.gpu, sizeof rp.meta.gpu, "%s", rp.dev.name);
            rp.meta.sms = rp.dev.sms;
            if (o.blocks < 1)
                rp.meta.blocks = 2 * rp.dev.sms;
        }
#endif
        return predict_all(&o, &rp, data);
    }
    if (!o.cpu_only) {
#ifdef CFX_HAVE_CUDA
        char err[512];
        if (floors_device_info(&rp.dev, err, sizeof err) != 0) {
            printf("bench_gpu: no CUDA device is present (%s)\n", err);
            return 0;
        }
        rp.have_device = 1;
        printf("# cfx GPU benchmark%s\n\n", o.quick ? " (quick)" : "");
        printf("Device: %s, %d SMs, compute capability %d.%d, %.1f GiB; CUDA driver %d.%d, "
               "runtime %d.%d.\n", rp.dev.name, rp.dev.sms, rp.dev.cc_major, rp.dev.cc_minor,
               rp.dev.memory_gib, rp.dev.driver_version / 1000, rp.dev.driver_version % 1000 / 10,
               rp.dev.runtime_version / 1000, rp.dev.runtime_version % 1000 / 10);
        fflush(stdout);
        if (floors_measure(&rp.fl, o.quick, err, sizeof err) != 0) {
            fprintf(stderr, "bench_gpu: measuring the floors failed: %s\n", err);
            return 1;
        }
        rp.bandwidth_gbs = rp.fl.bandwidth_gbs.median;
        print_floors(&rp);
        device_meta(&rp, o.blocks);
#else
        printf("bench_gpu: no CUDA device is present (cfx was built without CUDA)\n");
        return 0;
#endif
    } else {
        printf("# cfx benchmark, cpu executor only (no GPU figures)%s\n", o.quick ? " (quick)" : "");
    }
    if (!rp.meta.blocks)
        rp.meta.blocks = o.blocks > 0 ? o.blocks : 264;
    fflush(stdout);

    for (int ci = 0; ci < NCASES; ci++) {
        const bench_case *c = &cases[ci];
        char path[1024];
        char *diag = NULL;
        int g;
        if (!selected(o.graphs, c->key))
            continue;
        rp.run_case[ci] = 1;
        snprintf(path, sizeof path, "%s/%s.cfx", o.bench_dir, c->key);
        mods[ci] = cfx_compile_file(bench_context(), path, &diag);
        if (!mods[ci]) {
            fprintf(stderr, "bench_gpu: %s does not compile:\n%s", path, diag ? diag : "");
            cfx_free(diag);
            for (int x = 0; x < NEXECUTORS; x++) {
                snprintf(rp.rows[ci][x].state, sizeof rp.rows[ci][x].state, "error: does not compile");
                rp.rows[ci][x].failed = 1;
            }
            failed = 1;
            continue;
        }
        g = cfx_graph_find(mods[ci], NULL);
        if (c->make(&data[ci], o.quick) != 0) {
            fprintf(stderr, "bench_gpu: out of memory making the inputs of %s\n", c->key);
            return 1;
        }
        if (o.export_dir)
            for (int i = 0; i < data[ci].nin; i++)
                write_npy(&o, c->key, "", data[ci].in[i].name, &data[ci].in[i].type,
                          data[ci].in[i].host);
        for (int x = 0; x < NEXECUTORS; x++) {
            row *r = &rp.rows[ci][x];
            if (!selected(o.executors, executors[x].name) ||
                (o.cpu_only && executors[x].backend != CFX_BACKEND_CPU)) {
                snprintf(r->state, sizeof r->state, "not run");
                continue;
            }
            fprintf(stderr, "bench_gpu: %s on %s\n", c->key, executors[x].name);
            run_row(&o, c, mods[ci], g, &data[ci], &executors[x], r, &rp.exported_from[ci]);
            failed |= r->failed;
            row_prediction(&rp, ci, mods[ci], g, x);
        }
        if (o.fake_device) /* a cuda-persistent row made up for the records' test */
            for (int x = 0; x < NEXECUTORS; x++)
                if (strcmp(executors[x].name, "cuda-persistent") == 0) {
                    row *r = &rp.rows[ci][x];
                    memset(r, 0, sizeof *r);
                    r->ran = 1;
                    r->iters = r->ticks = data[ci].expect_iters;
                    r->repeats = 1;
                    r->med_us = r->min_us = r->max_us = r->p25_us = r->p75_us = 1.5;
                    snprintf(r->state, sizeof r->state, "ok");
                    snprintf(r->note, sizeof r->note, "made up by --fake-device, a test's \"row\"");
                    row_prediction(&rp, ci, mods[ci], g, x);
                }
        /* the records so far, after each graph: a run stopped at a time limit keeps them */
        if (o.json)
            write_json(&rp, data, o.json, 0);
        /* The big inputs go as soon as their graph is done; the data kept for the report
         * is their types (bytes_per_iter reads only those). */
        for (int i = 0; i < data[ci].nin; i++) {
            free(data[ci].in[i].host);
            data[ci].in[i].host = NULL;
        }
        free(data[ci].ref);
        data[ci].ref = NULL;
    }

    print_table(&rp, data);
    if (o.csv && write_csv(&rp, data, o.csv) != 0)
        failed = 1;
    if (o.json && write_json(&rp, data, o.json, 0) != 0)
        failed = 1;
    if (o.export_dir && write_manifest(&o, &rp, data, mods) != 0)
        failed = 1;
    for (int ci = 0; ci < NCASES; ci++)
        if (mods[ci])
            cfx_module_free(mods[ci]);
    return failed ? 1 : 0;
}
