/* test_standin.cpp: the host's stand-in for CUDA (tests/cuda_host.h) and the block-level code
 * that the persistent kernels share, run through it with blocks of many threads.
 *
 * - The stand-in itself: __syncthreads_count/_or/_and, warp shuffles (with widths), votes,
 *   atomics on shared memory, a named barrier and a warp-sum tree, against values written by
 *   hand; and, in a child process, that a block whose threads wait at different barriers
 *   aborts with a message instead of hanging; and that where the launcher asks for faults to
 *   go on (test_gen --mutants), such a block, a warp operation naming a lane that has ended and
 *   one whose mask leaves out its own lane stop only their block, each counted once, with the
 *   launcher's hook called, and the test goes on.
 * - The device graph launch probe (device/probe.cuh) as interp_launch.cu launches it, a
 *   parent of 2 blocks of 32 threads that tail-launches a child of 1 block of 32 threads and
 *   itself, must leave 102 (1 + 100 + 1): a child where every thread adds leaves 3202, the
 *   bug that made the probe fail on every GPU.
 * - kernels/block.cuh's fixed-tree reduction on 32, 64 and 256 threads, in the three orders a
 *   block's threads can run in, against sums, maxima and argmaxima computed by plain loops
 *   over the same sequences; and a copy of it with the loop's __syncthreads removed (a planted
 *   race), which must come out wrong in every order: the test of this test.
 * - k_matmul_tiles (kernels/block.cuh, 256 threads, the tiles split over 2 blocks) and
 *   interp_kernel.cuh's warp-per-row matrix-vector product (32, 64 and 256 threads,
 *   2 blocks) on small integer-valued matrices of every dtype, rows aligned for vector loads
 *   and not, against a naive triple loop.
 * - The race detector (tests/race_host.h), in child processes, in each order: a planted race
 *   between blocks in global memory (block 0 fills an array that block 1 sums, no grid barrier
 *   between) and one between a block's threads in shared memory (the reduction tree without
 *   its barrier) each abort with a message that names both sides (block, thread, epochs,
 *   function and place); a reduction's second level reading one slot past the warps' partials
 *   aborts as a read of unwritten shared memory; the same code with its barriers runs clean.
 *   Everything above runs with the detector on too (unless CFX_STANDIN_RACE=0), so none of it
 *   races.
 */
#include <signal.h>
#include <sys/wait.h>

#include "cuda_runtime.h"
#include "device/interp_kernel.cuh"
#include "device/probe.cuh"
#include "kernels/grid.cuh"

extern "C" {
#include "testutil.h"
}

/* Runs fn(arg) in every thread of a grid of blocks x threads, in `order`. */
static void run_grid(unsigned blocks, unsigned threads, int order, unsigned seed, void (*fn)(void *), void *arg)
{
    ck_host_grid g;
    memset(&g, 0, sizeof g);
    g.blocks = blocks;
    g.threads = threads;
    g.order = order;
    g.seed = seed;
    g.kernel = fn;
    g.arg = arg;
    if (!CHECK_INT(ck_host_grid_start(&g), 0))
        abort();
    ck_host_grid_join(&g);
}

static const char *const order_name[] = {"forward", "reverse", "shuffled"};
static int race_default; /* the detector as the environment sets it (tests/race_host.h) */

/* ==== the stand-in's own operations ========================================================= */

enum { NOUT = 24 };
static int64_t outs[256][NOUT];

static void primitives(void *)
{
    const unsigned t = threadIdx.x, lane = t & 31u, n = blockDim.x;
    int64_t *o = outs[t];
    __shared__ int sum;
    __shared__ int cells[256];
    o[0] = __syncthreads_count(t % 3 == 0);
    o[1] = __syncthreads_or(t == n - 1);
    o[2] = __syncthreads_or(0);
    o[3] = __syncthreads_and(t < n);
    o[4] = __syncthreads_and(t != 5);
    const int v = (int)t * 10;
    o[5] = __shfl_sync(0xffffffffu, v, 3);
    o[6] = __shfl_xor_sync(0xffffffffu, v, 1);
    o[7] = __shfl_down_sync(0xffffffffu, v, 4);
    o[8] = __shfl_up_sync(0xffffffffu, v, 2);
    o[9] = __shfl_sync(0xffffffffu, v, 1, 8);
    o[10] = __shfl_xor_sync(0xffffffffu, (double)t + 0.5, 16);
    o[11] = __ballot_sync(0xffffffffu, lane % 2);
    o[12] = __any_sync(0xffffffffu, lane == 31);
    o[13] = __all_sync(0xffffffffu, lane < 31);
    o[14] = __all_sync(0xffffffffu, 1);
    if (t == 0)
        sum = 0;
    __syncthreads();
    atomicAdd(&sum, (int)t);
    __syncthreads();
    o[15] = sum;
    /* a sum over the warp by halving */
    unsigned long long w = t;
    for (int off = 16; off > 0; off >>= 1)
        w += __shfl_down_sync(0xffffffffu, w, off);
    o[16] = lane == 0 ? (int64_t)w : -1;
    /* the named barrier orders a write before a read by another thread */
    cells[t] = (int)t + 1;
    CK_HOST_BAR_SYNC(1, n);
    o[17] = cells[n - 1 - t];
    /* half the warp shuffles among itself */
    if (lane < 16)
        o[18] = __shfl_sync(0x0000ffffu, v, 15);
    else
        o[18] = __shfl_sync(0xffff0000u, v, 16);
    __syncwarp();
    o[19] = 1;
}

static void test_primitives(void)
{
    for (int order = 0; order < 3; order++) {
        const unsigned n = 64;
        memset(outs, 0, sizeof outs);
        run_grid(1, n, order, 7, primitives, NULL);
        int bad = 0;
        for (unsigned t = 0; t < n; t++) {
            const int64_t *o = outs[t];
            const unsigned lane = t & 31u, warp0 = t & ~31u;
            bad |= !CHECK_INT(o[0], 22); /* 0, 3, ..., 63 */
            bad |= !CHECK_INT(o[1], 1);
            bad |= !CHECK_INT(o[2], 0);
            bad |= !CHECK_INT(o[3], 1);
            bad |= !CHECK_INT(o[4], 0);
            bad |= !CHECK_INT(o[5], (warp0 + 3) * 10);
            bad |= !CHECK_INT(o[6], (t ^ 1u) * 10);
            bad |= !CHECK_INT(o[7], (lane + 4 < 32 ? t + 4 : t) * 10);
            bad |= !CHECK_INT(o[8], (lane >= 2 ? t - 2 : t) * 10);
            bad |= !CHECK_INT(o[9], ((t & ~7u) + 1) * 10);
            bad |= !CHECK_INT(o[10], (int64_t)((double)(t ^ 16u) + 0.5));
            bad |= !CHECK_INT(o[11], 0xaaaaaaaall);
            bad |= !CHECK_INT(o[12], 1);
            bad |= !CHECK_INT(o[13], 0);
            bad |= !CHECK_INT(o[14], 1);
            bad |= !CHECK_INT(o[15], n * (n - 1) / 2);
            bad |= !CHECK_INT(o[16], lane == 0 ? (int64_t)(32 * warp0 + 31 * 32 / 2) : -1);
            bad |= !CHECK_INT(o[17], n - t);
            bad |= !CHECK_INT(o[18], (lane < 16 ? warp0 + 15 : warp0 + 16) * 10);
            bad |= !CHECK_INT(o[19], 1);
            if (bad) {
                fprintf(stderr, "  thread %u of 64, %s order\n", t, order_name[order]);
                break;
            }
        }
    }
}

/* Half the block at __syncthreads, half at a named barrier of the whole block: on a GPU a
 * hang; here an abort with a message. */
static void deadlock(void *)
{
    if (threadIdx.x < 32)
        __syncthreads();
    else
        CK_HOST_BAR_SYNC(1, blockDim.x);
}

static void test_deadlock_aborts(void)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr))
            _exit(3);
        run_grid(1, 64, CK_HOST_FORWARD, 0, deadlock, NULL);
        _exit(0);
    }
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
}

/* A warp operation of lanes 0..15 whose mask names lanes 16..31, which have ended (seen by
 * the scheduler), or (kind 1) lane 0 at a shuffle whose mask leaves it out (seen by the thread
 * itself). */
static void warp_fault(void *arg)
{
    const int kind = *(const int *)arg;
    const unsigned lane = threadIdx.x & 31u;
    if (kind == 0 && lane >= 16)
        return;
    const unsigned mask = kind == 0 ? 0xffffffffu : lane == 0 ? 0xfffffffeu : 0xffffffffu;
    outs[threadIdx.x][0] = (int64_t)__shfl_xor_sync(mask, (int)lane, 1);
}

static int faults_seen;
static void count_fault(void) { faults_seen++; }

/* With faults going on (CFX_STANDIN_RACE=quiet and a hook), the rules above stop the block that
 * breaks them, once per block, and return; in a child, so that an abort fails only this. */
static void test_faults_go_on(void)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        ck_race_enable(3);
        ck_host_on_fault = count_fault;
        int bad = 0;
        for (int kind = 0; kind < 2; kind++) {
            faults_seen = 0;
            const unsigned long long before = ck_host_faults;
            run_grid(2, 64, CK_HOST_FORWARD, 0, warp_fault, &kind);
            bad |= faults_seen != 2 || ck_host_faults - before != 2; /* each block's first fault */
        }
        faults_seen = 0;
        run_grid(1, 64, CK_HOST_SHUFFLE, 1, deadlock, NULL);
        bad |= faults_seen != 1;
        _exit(bad ? 1 : 0);
    }
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
    if (!CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0))
        fprintf(stderr, "  faults that were to go on: %s\n", WIFSIGNALED(st) ? "the child aborted" : "miscounted");
}

/* ==== the probe ============================================================================ */

#define CHILD_GRAPH ((cudaGraphExec_t)(intptr_t)1)
#define PARENT_GRAPH ((cudaGraphExec_t)(intptr_t)2)

static int probe_count;

static void child_thread(void *) { probe_child(&probe_count); }
static void parent_thread(void *) { probe_parent(CHILD_GRAPH, &probe_count); }

/* interp_launch.cu's probe_once: the parent from the host, then what it tail-launched, in
 * order, each once the launch before it has ended (at most 8 launches). Returns the count. */
static int run_probe(int order, int *launches)
{
    cudaGraphExec_t queue[16];
    int head = 0, tail = 0;
    probe_count = 0;
    queue[tail++] = PARENT_GRAPH;
    *launches = 0;
    while (head < tail && *launches < 8) {
        cudaGraphExec_t g = queue[head++];
        ck_host_ntails = 0;
        ck_host_current_graph = g;
        if (g == PARENT_GRAPH)
            run_grid(2, 32, order, 3, parent_thread, NULL);
        else
            run_grid(1, 32, order, 3, child_thread, NULL);
        ++*launches;
        for (int i = 0; i < ck_host_ntails && tail < 16; i++)
            queue[tail++] = ck_host_tails[i];
    }
    return probe_count;
}

static void test_probe(void)
{
    for (int order = 0; order < 3; order++) {
        int launches = 0;
        int count = run_probe(order, &launches);
        if (!CHECK_INT(count, 102) || !CHECK_INT(launches, 3))
            fprintf(stderr, "  the probe's kernels, %s order\n", order_name[order]);
    }
}

/* ==== the block reduction =================================================================== */

/* kernels/block.cuh's k_block_reduce with the __syncthreads inside the loop left out: a
 * thread goes on to the next level before the threads it reads from have merged theirs. */
static k_acc planted_block_reduce(k_acc *red, k_acc mine, int op, int dtype)
{
    K_RACE_W(&red[threadIdx.x], sizeof *red);
    red[threadIdx.x] = mine;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            K_RACE_R(&red[threadIdx.x], sizeof *red);
            K_RACE_W(&red[threadIdx.x], sizeof *red);
            k_reduce_merge(op, dtype, &red[threadIdx.x], &red[threadIdx.x + s]);
        }
    }
    K_RACE_R(&red[0], sizeof *red);
    k_acc r = red[0];
    __syncthreads();
    return r;
}

typedef struct reduce_job {
    int op, dtype, planted;
    const void *src;
    int64_t count;
    k_acc got[256]; /* every thread's result */
} reduce_job;

static void reduce_thread(void *arg)
{
    reduce_job *j = (reduce_job *)arg;
    __shared__ k_acc red[256];
    k_acc acc = k_reduce_init(j->op, j->dtype);
    for (int64_t e = threadIdx.x; e < j->count; e += blockDim.x)
        k_reduce_range(j->op, j->dtype, &acc, j->src, e, e + 1);
    acc = j->planted ? planted_block_reduce(red, acc, j->op, j->dtype) : k_block_reduce(red, acc, j->op, j->dtype);
    j->got[threadIdx.x] = acc;
}

/* A block of `threads` threads reduces count elements of src (planted: by the planted tree) in
 * `order`; the job, with every thread's result in got, is static (its got is big). */
static reduce_job *run_reduce(int op, int dtype, const void *src, int64_t count, int planted, unsigned threads,
                              int order, unsigned seed)
{
    static reduce_job j;
    j.op = op;
    j.dtype = dtype;
    j.src = src;
    j.count = count;
    j.planted = planted;
    memset(j.got, 0, sizeof j.got);
    run_grid(1, threads, order, seed, reduce_thread, &j);
    return &j;
}

/* 1 when every thread got `want` (integers: i; reals: r; extremes also idx). */
static int reduce_agrees(const reduce_job *j, unsigned threads, const k_acc *want)
{
    for (unsigned t = 0; t < threads; t++) {
        const k_acc *g = &j->got[t];
        int same = j->dtype == K_F64 ? g->r == want->r : g->i == want->i;
        if (j->op == OP_RMAX || j->op == OP_ARGMAX)
            same = same && g->idx == want->idx;
        if (!same || g->n != want->n)
            return 0;
    }
    return 1;
}

/* any and all vote in one barrier: by hand, any of 1000 booleans with one true (at 777) is 1
 * and all of them 0; all of 1000 trues is 1; over 10 elements (most threads' shares empty,
 * holding the op's identity) any of falses is 0 and all of trues 1. Every thread gets it. */
static void test_block_vote(void)
{
    static uint8_t one_true[1000], trues[1000], falses[1000];
    for (int i = 0; i < 1000; i++) {
        one_true[i] = i == 777;
        trues[i] = 1;
        falses[i] = 0;
    }
    static const struct {
        int op;
        const uint8_t *src;
        int64_t count, want;
    } cases[] = {
        {OP_ANY, one_true, 1000, 1}, {OP_ALL, one_true, 1000, 0}, {OP_ALL, trues, 1000, 1},
        {OP_ANY, falses, 10, 0},     {OP_ALL, trues, 10, 1},      {OP_ANY, one_true, 777, 0},
    };
    const unsigned sizes[] = {32, 64, 256};
    for (int si = 0; si < 3; si++)
        for (int order = 0; order < 3; order++)
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                const reduce_job *j = run_reduce(cases[c].op, K_BOOL, cases[c].src, cases[c].count, 0, sizes[si],
                                                 order, 5 + (unsigned)c);
                int ok = 1;
                for (unsigned t = 0; t < sizes[si]; t++)
                    ok &= j->got[t].i == cases[c].want;
                if (!CHECK(ok))
                    fprintf(stderr, "  k_block_reduce's vote, %u threads, %s order, case %d\n", sizes[si],
                            order_name[order], (int)c);
            }
}

/* Extremes of reals, merged by lanes in pairs: by plain loops, argmax and argmin of 1000 values
 * (i * 37) % 101 with many ties (the first position of the extreme wins), the same with NaN at
 * 600 and 500 (the first NaN wins both), and over 10 values (most shares empty). Every thread
 * gets the element's value, position and the count. */
static void test_block_extremes(void)
{
    static double ties[1000], nans[1000];
    for (int i = 0; i < 1000; i++)
        ties[i] = nans[i] = (double)((i * 37) % 101);
    nans[600] = nans[500] = NAN;
    static const struct {
        int op;
        const double *src;
        int64_t count;
    } cases[] = {
        {OP_ARGMAX, ties, 1000}, {OP_ARGMIN, ties, 1000}, {OP_RMAX, ties, 1000},
        {OP_ARGMAX, nans, 1000}, {OP_ARGMIN, nans, 1000}, {OP_ARGMAX, ties, 10},
    };
    const unsigned sizes[] = {32, 64, 256};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        /* the answer: the first NaN, else the first position of the largest (smallest) value */
        int64_t at = 0;
        const int want_max = cases[c].op != OP_ARGMIN;
        for (int64_t e = 1; e < cases[c].count; e++) {
            double x = cases[c].src[e], best = cases[c].src[at];
            if (isnan(best))
                break;
            if (isnan(x) || (want_max ? x > best : x < best))
                at = e;
        }
        for (int si = 0; si < 3; si++)
            for (int order = 0; order < 3; order++) {
                const reduce_job *j = run_reduce(cases[c].op, K_F64, cases[c].src, cases[c].count, 0, sizes[si],
                                                 order, 3 + (unsigned)c);
                int ok = 1;
                for (unsigned t = 0; t < sizes[si]; t++) {
                    const k_acc *g = &j->got[t];
                    double want = cases[c].src[at];
                    ok &= g->idx == at && g->n == cases[c].count && (isnan(want) ? isnan(g->r) : g->r == want);
                }
                if (!CHECK(ok))
                    fprintf(stderr, "  k_block_reduce's extremes, %u threads, %s order, case %d (want position %lld)\n",
                            sizes[si], order_name[order], (int)c, (long long)at);
            }
    }
}

static void test_block_reduce(void)
{
    enum { L = 1000 };
    static int64_t seq[L];
    static int32_t hashed[L];
    static double quarters[L];
    for (int i = 0; i < L; i++) {
        seq[i] = i + 1;
        hashed[i] = (int32_t)((i * 7919) % 1009);
        quarters[i] = 0.25 * i;
    }
    /* the answers, by plain loops and closed forms */
    k_acc sum_seq = {0.0, (int64_t)L * (L + 1) / 2, 0, L};
    k_acc max_hashed = {0.0, -1, 0, L};
    for (int i = 0; i < L; i++)
        if (hashed[i] > max_hashed.i) {
            max_hashed.i = hashed[i];
            max_hashed.idx = i;
        }
    k_acc sum_quarters = {0.25 * (L - 1) * L / 2, 0, 0, L};

    const unsigned sizes[] = {32, 64, 256};
    int planted_caught[3] = {0, 0, 0}, planted_runs[3] = {0, 0, 0};
    for (int si = 0; si < 3; si++)
        for (int order = 0; order < 3; order++)
            for (int planted = 0; planted < 2; planted++)
                for (int c = 0; c < 3; c++) {
                    const k_acc *want = c == 0 ? &sum_seq : c == 1 ? &max_hashed : &sum_quarters;
                    ck_race_enable(!planted && race_default); /* the planted race must come out wrong */
                    const reduce_job *j =
                        run_reduce(c == 1 ? (int)OP_RMAX : (int)OP_SUM, c == 0 ? K_I64 : c == 1 ? K_I32 : K_F64,
                                   c == 0 ? (const void *)seq : c == 1 ? (const void *)hashed : (const void *)quarters,
                                   L, planted, sizes[si], order, 11 + (unsigned)c);
                    const int ok = reduce_agrees(j, sizes[si], want);
                    if (!planted) {
                        if (!CHECK(ok))
                            fprintf(stderr, "  k_block_reduce, %u threads, %s order, reduction %d\n", sizes[si],
                                    order_name[order], c);
                    } else {
                        planted_runs[order]++;
                        planted_caught[order] += !ok;
                    }
                }
    ck_race_enable(race_default);
    /* The planted race: in forward order thread 0 runs through every level (and reads the
     * root) before the others have merged theirs; in reverse the high threads read the root
     * before thread 0 has merged anything; shuffled, both happen. */
    printf("test_standin: the planted race in the reduction tree came out wrong in %d of %d runs forward, "
           "%d of %d shuffled, %d of %d reversed\n",
           planted_caught[0], planted_runs[0], planted_caught[2], planted_runs[2], planted_caught[1],
           planted_runs[1]);
    for (int order = 0; order < 3; order++)
        CHECK_INT(planted_caught[order], planted_runs[order]);
}

/* ==== the products ======================================================================== */

typedef struct product_job {
    int dtype;
    uint8_t *dst;
    const uint8_t *a, *b;
    int64_t m, k, n;
    int matvec;
} product_job;

static void product_thread(void *arg)
{
    const product_job *j = (const product_job *)arg;
    int64_t lo, hi;
    if (j->matvec) {
        sched_share(j->m, blockIdx.x, gridDim.x, &lo, &hi);
        matvec_rows(j->dtype, j->dst, j->a, j->b, j->k, lo, hi);
    } else {
        const int64_t tiles = ((j->m + K_TILE - 1) / K_TILE) * ((j->n + K_TILE - 1) / K_TILE);
        sched_share(tiles, blockIdx.x, gridDim.x, &lo, &hi);
        k_matmul_tiles(j->dtype, j->dst, j->a, j->b, j->m, j->k, j->n, lo, hi);
    }
}

static void put(int dtype, uint8_t *p, int64_t e, int64_t v)
{
    switch (dtype) {
    case K_F32: ((float *)p)[e] = (float)v; break;
    case K_F64: ((double *)p)[e] = (double)v; break;
    case K_I32: ((int32_t *)p)[e] = (int32_t)v; break;
    default: ((int64_t *)p)[e] = v; break;
    }
}

static int64_t get(int dtype, const uint8_t *p, int64_t e)
{
    switch (dtype) {
    case K_F32: return (int64_t)((const float *)p)[e];
    case K_F64: return (int64_t)((const double *)p)[e];
    case K_I32: return ((const int32_t *)p)[e];
    default: return ((const int64_t *)p)[e];
    }
}

/* dst[m,n] = a[m,k] @ b[k,n] (n = 1: the matrix-vector product) on `blocks` x `threads`; the
 * entries are small integers, so every dtype holds the exact sums, which a triple loop gives. */
static void check_product(int dtype, int64_t m, int64_t k, int64_t n, int matvec, unsigned threads, int order)
{
    const int64_t size = dtype == K_F32 || dtype == K_I32 ? 4 : 8;
    uint8_t *a = (uint8_t *)aligned_alloc(16, (size_t)((m * k * size + 15) / 16 * 16));
    uint8_t *b = (uint8_t *)aligned_alloc(16, (size_t)((k * n * size + 15) / 16 * 16));
    uint8_t *c = (uint8_t *)aligned_alloc(16, (size_t)((m * n * size + 15) / 16 * 16));
    if (!a || !b || !c)
        abort();
    for (int64_t i = 0; i < m * k; i++)
        put(dtype, a, i, (i * 37 + 11) % 13 - 6);
    for (int64_t i = 0; i < k * n; i++)
        put(dtype, b, i, (i * 53 + 5) % 11 - 5);
    for (int64_t i = 0; i < m * n; i++)
        put(dtype, c, i, 999999);
    product_job j = {dtype, c, a, b, m, k, n, matvec};
    run_grid(2, threads, order, 5, product_thread, &j);
    int64_t wrong = 0, first = -1;
    for (int64_t r = 0; r < m; r++)
        for (int64_t col = 0; col < n; col++) {
            int64_t s = 0;
            for (int64_t q = 0; q < k; q++)
                s += get(dtype, a, r * k + q) * get(dtype, b, q * n + col);
            if (get(dtype, c, r * n + col) != s) {
                wrong++;
                first = first < 0 ? r * n + col : first;
            }
        }
    if (!CHECK_INT(wrong, 0))
        fprintf(stderr, "  %s, dtype %d, [%lld, %lld] @ [%lld, %lld], %u threads, %s order: first wrong at %lld\n",
                matvec ? "matvec_rows" : "k_matmul_tiles", dtype, (long long)m, (long long)k, (long long)k,
                (long long)n, threads, order_name[order], (long long)first);
    free(a);
    free(b);
    free(c);
}

static void test_products(void)
{
    const int dtypes[] = {K_F32, K_F64, K_I32, K_I64};
    for (int d = 0; d < 4; d++) {
        /* tiles: edges that are and are not multiples of 16, k longer than one tile */
        check_product(dtypes[d], 37, 21, 19, 0, P_THREADS, d % 3);
        check_product(dtypes[d], 32, 48, 16, 0, P_THREADS, (d + 1) % 3);
        const unsigned sizes[] = {32, 64, 256};
        for (int si = 0; si < 3; si++) {
            /* rows of 40 (vector loads for f32 and f64) and of 37 (none) */
            check_product(dtypes[d], 45, 40, 1, 1, sizes[si], (d + si) % 3);
            check_product(dtypes[d], 45, 37, 1, 1, sizes[si], (d + si + 1) % 3);
        }
    }
}


/* ==== the race detector (tests/race_host.h) ================================================= */

enum { RACE_N = 96 };
static int32_t race_global[RACE_N];
static unsigned long long race_word; /* a grid barrier's word (kernels/grid.cuh) */
enum { RACE_CROSS, RACE_CROSS_BARRIER, RACE_SHARED, RACE_UNWRITTEN, RACE_SHARED_BARRIER };

static void race_kernel(void *arg)
{
    const int kind = *(const int *)arg;
    if (kind == RACE_CROSS || kind == RACE_CROSS_BARRIER) {
        /* block 0 writes the array, block 1 sums it: a grid barrier between, or none */
        const int32_t seven = 7;
        if (blockIdx.x == 0)
            for (int64_t e = threadIdx.x; e < RACE_N; e += blockDim.x)
                k_fill(K_I32, race_global, &seven, e, e + 1);
        if (kind == RACE_CROSS_BARRIER) {
            __syncthreads();
            if (threadIdx.x == 0) {
                const unsigned long long target = k_grid_arrive(&race_word, gridDim.x);
                while (!k_grid_passed(&race_word, target))
                    CK_HOST_SPIN();
            }
            __syncthreads();
        }
        if (blockIdx.x == 1) {
            k_acc acc = k_reduce_init(OP_SUM, K_I32);
            for (int64_t e = threadIdx.x; e < RACE_N; e += blockDim.x)
                k_reduce_range(OP_SUM, K_I32, &acc, race_global, e, e + 1);
        }
    } else if (kind == RACE_SHARED || kind == RACE_SHARED_BARRIER) {
        /* the planted tree (no barrier between its levels), or the real one */
        static const int64_t ones[64] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                         1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                         1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
        __shared__ k_acc red[256];
        k_acc acc = k_reduce_init(OP_SUM, K_I64);
        k_reduce_range(OP_SUM, K_I64, &acc, ones, threadIdx.x, threadIdx.x + 1);
        acc = kind == RACE_SHARED ? planted_block_reduce(red, acc, OP_SUM, K_I64) : k_block_reduce(red, acc, OP_SUM, K_I64);
    } else {
        /* a block reduction's second level reading one slot past the warps' partials, a slot
         * no thread wrote */
        __shared__ k_acc slots[33];
        const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
        if (lane == 0) {
            K_RACE_W(&slots[warp], sizeof *slots);
            slots[warp] = k_reduce_init(OP_SUM, K_I64);
        }
        __syncthreads();
        if (warp == 0 && lane <= nwarps)
            K_RACE_RS(&slots[lane], sizeof *slots);
    }
}

/* Runs race_kernel's `kind` in a child with the detector on; returns 1 when it aborted, with
 * what it said in msg, 0 when it ended normally, -1 otherwise. */
static int race_child(int kind, unsigned blocks, int order, char *msg, size_t cap)
{
    int fd[2];
    msg[0] = 0;
    if (pipe(fd) != 0)
        return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 2);
        ck_race_enable(1);
        race_word = 0;
        run_grid(blocks, 64, order, 5, race_kernel, &kind);
        _exit(0);
    }
    close(fd[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < cap && (r = read(fd[0], msg + n, cap - 1 - n)) > 0)
        n += (size_t)r;
    msg[n] = 0;
    close(fd[0]);
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT)
        return 1;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int says(const char *msg, const char *what)
{
    if (strstr(msg, what))
        return 1;
    fprintf(stderr, "  the detector's message lacks \"%s\":\n%s", what, msg);
    return 0;
}

/* The test of the detector: a planted race between blocks in global memory and one between a
 * block's threads in shared memory each stop the run with a message that names both sides;
 * the same code with its barriers passes. */
static void test_race_detector(void)
{
    static char msg[8192];
    for (int order = 0; order < 3; order++) {
        /* across blocks: block 0's write and block 1's read, whichever came first */
        if (!CHECK_INT(race_child(RACE_CROSS, 2, order, msg, sizeof msg), 1))
            fprintf(stderr, "  a cross-block race, %s order, went unseen:\n%s", order_name[order], msg);
        else if (CHECK(says(msg, "race detector:") && says(msg, "global memory") && says(msg, "in the same grid epoch") &&
                       says(msg, "block 0, thread") && says(msg, "block 1, thread") && says(msg, "the other side") &&
                       says(msg, "grid epoch 0")) &&
                 order == 0)
            printf("test_standin: the planted cross-block race:\n%s", msg);
        CHECK_INT(race_child(RACE_CROSS_BARRIER, 2, order, msg, sizeof msg), 0);
        /* within a block, in shared memory: one thread merges a slot another thread wrote at the
         * same level, no barrier between */
        if (!CHECK_INT(race_child(RACE_SHARED, 1, order, msg, sizeof msg), 1))
            fprintf(stderr, "  a shared-memory race, %s order, went unseen:\n%s", order_name[order], msg);
        else if (CHECK(says(msg, "race detector:") && says(msg, "on shared memory") &&
                       says(msg, "no barrier between") && says(msg, "planted_block_reduce") &&
                       says(msg, "the other side")) &&
                 order == 0)
            printf("test_standin: the planted shared-memory race:\n%s", msg);
        CHECK_INT(race_child(RACE_SHARED_BARRIER, 1, order, msg, sizeof msg), 0);
        if (CHECK_INT(race_child(RACE_UNWRITTEN, 1, order, msg, sizeof msg), 1))
            CHECK(says(msg, "read of shared memory that nothing wrote"));
    }
}

int main(void)
{
    race_default = ck_race_enabled();
    test_primitives();
    test_deadlock_aborts();
    test_faults_go_on();
    test_probe();
    test_block_reduce();
    test_block_vote();
    test_block_extremes();
    test_products();
    test_race_detector();
    return test_finish("test_standin");
}
