/* ck_host.h: the generated persistent kernels on the host, for tests/test_gen.c. Included
 * first in a C++ file of kernels that host/gen/cgen.c wrote for the CUDA target; the file is
 * compiled with the system C++ compiler into a shared object. CUDA itself is cuda_host.h's
 * (blocks as host threads, each running its CUDA threads as fibers); this adds the skew that
 * holds blocks back at barriers, the device runtime's graph launch as tests/persist_host.cpp
 * models it for the interpreter (the graphs a launch tail-launches are recorded, for the test to
 * serve in order), and the launcher, ck_host_launch. */
#ifndef CFX_CK_HOST_H
#define CFX_CK_HOST_H

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "cuda_host.h"

/* Skew: 1 holds block 0 back for a while at the start and after every grid barrier (it
 * arrives last at the next), 2 the other blocks, released in an order that changes from launch
 * to launch: forward (block 1 first), reverse (the last block first) or shuffled anew at each
 * barrier (seeded by the launch). A kernel missing a barrier where one block reads what another
 * writes then reads the old values, every time, instead of now and then. The block's thread 0
 * sleeps, which holds the whole block: its threads take turns on one host thread. */
static int ck_host_skew;
static unsigned ck_host_release;     /* skew 2: 0 forward, 1 reverse, 2 shuffled */
static unsigned ck_host_release_seed;
static thread_local unsigned ck_host_passes; /* the block's holds so far in this launch */
static inline void ck_host_hold(void)
{
    if (threadIdx.x != 0)
        return;
    long ns = 0;
    const unsigned n = gridDim.x, b = blockIdx.x;
    if (ck_host_skew == 1 && b == 0) {
        ns = 300000;
    } else if (ck_host_skew == 2 && b != 0) {
        unsigned rank = b; /* 1 .. n-1: the order blocks 1 .. n-1 go in */
        if (ck_host_release == 1) {
            rank = n - b;
        } else if (ck_host_release == 2) {
            uint64_t h = ((uint64_t)ck_host_release_seed << 32 | ck_host_passes) * 0x9e3779b97f4a7c15ull;
            rank = 1 + (unsigned)(((h >> 29) + b) % (n > 1 ? n - 1 : 1)); /* a rotation: each rank once */
        }
        ns = 150000l * rank;
    }
    ck_host_passes++;
    if (ns > 0) {
        struct timespec ts = {0, ns};
        nanosleep(&ts, NULL);
    }
}
/* Where each block stands, for the watchdog's report (below): the record of the grid barrier
 * its thread 0 last reached, whether it waits there, how many it has passed, whether the
 * block's thread 0 has ended. Written by the block's thread 0 alone. */
typedef struct ck_host_where {
    int32_t record;
    int waiting, ended;
    unsigned passed;
} ck_host_where;
static ck_host_where ck_host_at[CK_HOST_MAX_BLOCKS];
static inline void ck_host_after_barrier(void)
{
    if (threadIdx.x == 0) {
        __atomic_store_n(&ck_host_at[blockIdx.x].waiting, 0, __ATOMIC_RELEASE);
        __atomic_add_fetch(&ck_host_at[blockIdx.x].passed, 1, __ATOMIC_RELEASE);
    }
    ck_host_hold();
}
#define CK_AFTER_BARRIER() ck_host_after_barrier()

/* A planted deadlock (test_gen's hang report): thread 0 of block ck_host_held waits before the
 * grid barrier of record ck_host_held_at until ck_host_let_go() (-1: nobody held). */
static int ck_host_held = -1, ck_host_held_at = -1, ck_host_released;
static inline void ck_host_before_barrier(int32_t record)
{
    if (threadIdx.x == 0) {
        __atomic_store_n(&ck_host_at[blockIdx.x].record, record, __ATOMIC_RELEASE);
        __atomic_store_n(&ck_host_at[blockIdx.x].waiting, 1, __ATOMIC_RELEASE);
    }
    if (threadIdx.x == 0 && (int)blockIdx.x == __atomic_load_n(&ck_host_held, __ATOMIC_ACQUIRE) &&
        record == ck_host_held_at)
        while (!__atomic_load_n(&ck_host_released, __ATOMIC_ACQUIRE))
            sched_yield();
}
#define CK_BEFORE_BARRIER(record) ck_host_before_barrier(record)
extern "C" void ck_host_plant(int block, int record)
{
    ck_host_held_at = record;
    __atomic_store_n(&ck_host_released, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&ck_host_held, block, __ATOMIC_RELEASE);
}
extern "C" void ck_host_let_go(void)
{
    __atomic_store_n(&ck_host_released, 1, __ATOMIC_RELEASE);
}

/* Device graph launch, modelled: with ck_args.device_launch a record that ends the launch
 * tail-launches its site's graph (the test's site_exec[r] is r + 1) and then the kernel's own
 * (CK_HOST_SELF); they are recorded here, and the test runs the site's work and launches
 * again. Without it, the kernel pauses (CK_STATUS_PAUSE) as it does where a device cannot
 * launch graphs. Only thread 0 of block 0 launches, and the launcher reads them after
 * joining every block. */
#define CK_HOST_SELF ((struct CUgraphExec_st *)(intptr_t)-1)
#define cudaStreamGraphTailLaunch ((struct CUstream_st *)0x0100000000000000ull)
static struct CUgraphExec_st *ck_host_tails[4];
static int ck_host_ntails;
static inline int cudaGraphLaunch(struct CUgraphExec_st *g, struct CUstream_st *s)
{
    if (s != cudaStreamGraphTailLaunch || !g || ck_host_ntails == 4)
        return 1;
    ck_host_tails[ck_host_ntails++] = g;
    return 0;
}
static inline struct CUgraphExec_st *cudaGetCurrentGraphExec(void) { return CK_HOST_SELF; }

#include "device/compiled_kernel.cuh"

/* The race detector's places (tests/race_host.h): the range functions and helpers that the
 * generated code calls say the generated line they were called from (this file's __LINE__ is
 * the generated file's), for the hooks inside them. */
template <typename T> static inline T ck_host_unsite(T v)
{
    ck_race_site(NULL, 0);
    return v;
}
#define CK_HOST_SITED_VOID(f, ...) (ck_race_site(__FILE__, __LINE__), f(__VA_ARGS__), ck_race_site(NULL, 0))
#define CK_HOST_SITED(f, ...) (ck_race_site(__FILE__, __LINE__), ck_host_unsite(f(__VA_ARGS__)))
#define k_unary(...) CK_HOST_SITED_VOID(k_unary, __VA_ARGS__)
#define k_binary(...) CK_HOST_SITED_VOID(k_binary, __VA_ARGS__)
#define k_cast(...) CK_HOST_SITED_VOID(k_cast, __VA_ARGS__)
#define k_copy_bytes(...) CK_HOST_SITED_VOID(k_copy_bytes, __VA_ARGS__)
#define k_fill(...) CK_HOST_SITED_VOID(k_fill, __VA_ARGS__)
#define k_iota(...) CK_HOST_SITED_VOID(k_iota, __VA_ARGS__)
#define k_where(...) CK_HOST_SITED_VOID(k_where, __VA_ARGS__)
#define k_broadcast(...) CK_HOST_SITED_VOID(k_broadcast, __VA_ARGS__)
#define k_box_copy(...) CK_HOST_SITED_VOID(k_box_copy, __VA_ARGS__)
#define k_matmul(...) CK_HOST_SITED_VOID(k_matmul, __VA_ARGS__)
#define k_transpose(...) CK_HOST_SITED_VOID(k_transpose, __VA_ARGS__)
#define k_reduce_range(...) CK_HOST_SITED_VOID(k_reduce_range, __VA_ARGS__)
#define k_reduce_one(...) CK_HOST_SITED_VOID(k_reduce_one, __VA_ARGS__)
#define k_reduce_merge(...) CK_HOST_SITED_VOID(k_reduce_merge, __VA_ARGS__)
#define k_reduce_finish(...) CK_HOST_SITED_VOID(k_reduce_finish, __VA_ARGS__)
#define k_dot_range(...) CK_HOST_SITED_VOID(k_dot_range, __VA_ARGS__)
#define k_dot_finish(...) CK_HOST_SITED_VOID(k_dot_finish, __VA_ARGS__)
#define ck_block_copy(...) CK_HOST_SITED_VOID(ck_block_copy, __VA_ARGS__)
#define ck_matvec_rows(...) CK_HOST_SITED_VOID(ck_matvec_rows, __VA_ARGS__)
#define ck_matmul_tiles(...) CK_HOST_SITED_VOID(ck_matmul_tiles, __VA_ARGS__)
#define ck_matmul_tiles_batch(...) CK_HOST_SITED_VOID(ck_matmul_tiles_batch, __VA_ARGS__)
#define k_block_reduce(...) CK_HOST_SITED(k_block_reduce, __VA_ARGS__)
#define ck_combine(...) CK_HOST_SITED(ck_combine, __VA_ARGS__)
#define ck_combine_batch(...) CK_HOST_SITED(ck_combine_batch, __VA_ARGS__)

typedef void (*ck_host_kernel)(const ck_args a);

typedef struct ck_host_run {
    ck_host_kernel kernel;
    const ck_args *args;
} ck_host_run;

static void ck_host_thread_main(void *arg)
{
    const ck_host_run *r = (const ck_host_run *)arg;
    if (threadIdx.x == 0)
        ck_host_passes = 0;
    ck_host_hold();
    r->kernel(*r->args);
    if (threadIdx.x == 0)
        __atomic_store_n(&ck_host_at[blockIdx.x].ended, 1, __ATOMIC_RELEASE);
}

/* A hang on a GPU, caught on the host by a watchdog beside the blocks, in two forms:
 * - a block waits at a grid barrier that can never complete: another block has ended (a
 *   kernel whose blocks disagree about the grid barriers, a mutant's), no stop was raised, the
 *   barrier's count is not a whole number of barriers, and the waiting block has passed no
 *   barrier for CK_HOST_STUCK_MS;
 * - the launch runs past CK_HOST_WATCHDOG_S seconds (4 times that with the race detector on,
 *   whether it stops at a race or only reports it, tests/race_host.h): far longer than any
 *   launch of the tests, so a loop that never ends, or a barrier that never completes. (A CI
 *   machine under load once took past 5 s on a launch of test_gen --mutants, quiet, whose run
 *   then differed with no mutant in it.)
 * Either way it prints one line that names the kernel (and the program, ck_host_name), the
 * form, and where each block stands: the grid barrier (its record) it waits at or last passed,
 * or ended. Then, with the detector stopping at a race (the tests' default) it aborts, as the
 * stand-in's other rules do, so the test fails at once rather than at ctest's TIMEOUT; otherwise
 * (CFX_STANDIN_RACE=quiet, test_gen --mutants, where the next mutant must run) it stops the run:
 * the status is set to cancelled, which every block sees at its next poll or barrier, and once
 * they have ended, to 7 (no cfx_status), which the comparison reports. */
#define CK_HOST_WATCHDOG_S 5
#define CK_HOST_STUCK_MS 2000
static const char *ck_host_name; /* the program, as the test names it (ck_host_set_name) */
static long ck_host_limit_ms;    /* > 0: the launch's limit instead (test_gen's test of the watchdog) */
extern "C" void ck_host_set_limit_ms(long ms)
{
    ck_host_limit_ms = ms;
}
extern "C" void ck_host_set_name(const char *name)
{
    ck_host_name = name;
}
typedef struct ck_host_watch {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done, fired;
    unsigned blocks;
    ck_state *state;
    void (*kernel)(const ck_args a);
    const unsigned long long *arrivals; /* the grid barrier's word */
} ck_host_watch;

static void ck_host_hang(ck_host_watch *w, const char *what)
{
    char line[1024];
    size_t n = 0;
    Dl_info info;
    const char *sym = dladdr((void *)w->kernel, &info) && info.dli_sname ? info.dli_sname : "?";
    n += (size_t)snprintf(line + n, sizeof line - n, "ck_host.h: a hang (on a GPU): kernel %s%s%s%s: %s:", sym,
                          ck_host_name ? " (" : "", ck_host_name ? ck_host_name : "", ck_host_name ? ")" : "", what);
    for (unsigned b = 0; b < w->blocks && n < sizeof line - 64; b++) {
        const ck_host_where *s = &ck_host_at[b];
        const int32_t rec = __atomic_load_n(&s->record, __ATOMIC_ACQUIRE);
        if (__atomic_load_n(&s->ended, __ATOMIC_ACQUIRE))
            n += (size_t)snprintf(line + n, sizeof line - n, " block %u ended;", b);
        else if (__atomic_load_n(&s->waiting, __ATOMIC_ACQUIRE))
            n += (size_t)snprintf(line + n, sizeof line - n, " block %u waits at the grid barrier of record %d;", b,
                                  (int)rec);
        else if (rec >= 0)
            n += (size_t)snprintf(line + n, sizeof line - n, " block %u runs past the grid barrier of record %d;", b,
                                  (int)rec);
        else
            n += (size_t)snprintf(line + n, sizeof line - n, " block %u runs, before any grid barrier;", b);
    }
    if (n > 0 && line[n - 1] == ';')
        line[n - 1] = '\0';
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
    if (ck_race_enabled() == 1 && __atomic_load_n(&ck_host_held, __ATOMIC_ACQUIRE) < 0)
        abort(); /* a planted hold (test_gen's hang report) is let go by its test */
    w->fired = 1;
    __atomic_exchange_n(&w->state->status, CK_STOP_CANCELLED, __ATOMIC_SEQ_CST);
}

static void *ck_host_watchdog(void *arg)
{
    ck_host_watch *w = (ck_host_watch *)arg;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    /* the race detector makes a run slower, and a loaded machine more so: 4 times the time */
    const long long limit_ms = ck_host_limit_ms > 0 ? ck_host_limit_ms
                               : 1000ll * (ck_race_enabled() != 0 ? 4 * CK_HOST_WATCHDOG_S : CK_HOST_WATCHDOG_S);
    unsigned passed[CK_HOST_MAX_BLOCKS];
    long long since[CK_HOST_MAX_BLOCKS];
    for (unsigned b = 0; b < w->blocks; b++) {
        passed[b] = 0;
        since[b] = 0;
    }
    pthread_mutex_lock(&w->lock);
    while (!w->done) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 50000000l; /* a look every 50 ms */
        if (until.tv_nsec >= 1000000000l) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000l;
        }
        pthread_cond_timedwait(&w->cond, &w->lock, &until);
        if (w->done)
            break;
        clock_gettime(CLOCK_MONOTONIC, &now);
        const long long ms = (now.tv_sec - start.tv_sec) * 1000ll + (now.tv_nsec - start.tv_nsec) / 1000000;
        int ended = 0;
        for (unsigned b = 0; b < w->blocks; b++)
            ended |= __atomic_load_n(&ck_host_at[b].ended, __ATOMIC_ACQUIRE);
        const int raised = __atomic_load_n(&w->state->status, __ATOMIC_ACQUIRE) != 0;
        /* every block's arrival at the last barrier counted: whatever block still looks as if
         * it waits has not run since it completed (a loaded machine) */
        const int complete = w->arrivals && __atomic_load_n(w->arrivals, __ATOMIC_ACQUIRE) % w->blocks == 0;
        int stuck = -1;
        for (unsigned b = 0; b < w->blocks; b++) {
            const unsigned p = __atomic_load_n(&ck_host_at[b].passed, __ATOMIC_ACQUIRE);
            const int waiting = __atomic_load_n(&ck_host_at[b].waiting, __ATOMIC_ACQUIRE);
            if (!waiting || p != passed[b]) {
                passed[b] = p;
                since[b] = ms;
            } else if (ended && !raised && !complete && ms - since[b] >= CK_HOST_STUCK_MS) {
                stuck = (int)b;
            }
        }
        if (stuck >= 0 || ms >= limit_ms) {
            char what[160];
            if (stuck >= 0)
                snprintf(what, sizeof what,
                         "block %d waits at a grid barrier that can never complete (a block has ended)", stuck);
            else
                snprintf(what, sizeof what, "the launch ran past %.1f s, far longer than any launch of the tests",
                         limit_ms / 1000.0);
            pthread_mutex_unlock(&w->lock);
            ck_host_hang(w, what);
            pthread_mutex_lock(&w->lock);
            break;
        }
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* A rule of cuda_host.h broken in a block, with faults going on (CFX_STANDIN_RACE=quiet): the
 * run is stopped as the watchdog stops it, and ck_host_launch gives it status 9, as a race. */
static ck_state *ck_host_running;
static void ck_host_stop_run(void)
{
    __atomic_exchange_n(&ck_host_running->status, CK_STOP_CANCELLED, __ATOMIC_SEQ_CST);
}

/* Runs kernel on `blocks` host threads (at most 16) of `threads` CUDA threads each (a
 * multiple of 32), `order` (cuda_host.h: 0 forward, 1 reverse, 2 shuffled with seed), with
 * `skew` (above); returns when all have ended. The graphs it tail-launched go to
 * tails[0 .. *ntails) (room for 4). */
extern "C" int ck_host_launch(ck_host_kernel kernel, const ck_args *args, unsigned int blocks,
                              unsigned int threads, int order, unsigned int seed, int skew,
                              struct CUgraphExec_st **tails, int *ntails)
{
    ck_host_run r = {kernel, args};
    ck_host_grid g;
    memset(&g, 0, sizeof g);
    g.blocks = blocks;
    g.threads = threads;
    g.order = order;
    g.seed = seed;
    g.kernel = ck_host_thread_main;
    g.arg = &r;
    ck_host_skew = skew;
    ck_host_release = seed % 3;
    ck_host_release_seed = seed;
    ck_host_ntails = 0;
    /* the split reductions' partials are scratch, written before they are read in a launch:
     * poisoned (NaN reals, all-ones integers and counts), a read of one no block wrote in this
     * launch gives a wrong answer even with the detector off */
    if (args->partials)
        memset(args->partials, 0xff, sizeof(k_acc) * 2 * CK_BATCH_MAX * blocks);
    *ntails = 0;
    for (unsigned b = 0; b < CK_HOST_MAX_BLOCKS; b++) {
        ck_host_at[b].record = -1;
        ck_host_at[b].waiting = ck_host_at[b].ended = 0;
        ck_host_at[b].passed = 0;
    }
    ck_host_running = args->state;
    ck_host_on_fault = ck_host_stop_run;
    const unsigned long long faults = __atomic_load_n(&ck_host_faults, __ATOMIC_SEQ_CST);
    if (ck_host_grid_start(&g) != 0) {
        /* the blocks started wait for the missing ones: stop the run, as a failing block
         * would */
        atomicCAS(&args->state->status, 0, 7);
        ck_host_grid_join(&g);
        return -1;
    }
    ck_host_watch w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, blocks, args->state, kernel,
                       args->sync ? &args->sync->bar_arrived : NULL};
    pthread_t watchdog;
    int watching = pthread_create(&watchdog, NULL, ck_host_watchdog, &w) == 0;
    ck_host_grid_join(&g);
    pthread_mutex_lock(&w.lock);
    w.done = 1;
    pthread_cond_signal(&w.cond);
    pthread_mutex_unlock(&w.lock);
    if (watching)
        pthread_join(watchdog, NULL);
    if (w.fired)
        args->state->status = 7; /* a hang the watchdog stopped: no executor's status */
    if (__atomic_load_n(&ck_host_faults, __ATOMIC_SEQ_CST) != faults)
        args->state->status = 9; /* a race the detector found, or a rule broken (CFX_STANDIN_RACE=quiet): no
                                    executor's status */
    for (int i = 0; i < ck_host_ntails; i++)
        tails[i] = ck_host_tails[i];
    *ntails = ck_host_ntails;
    return 0;
}

#endif
