/* ck_host.h: the generated persistent kernels on the host, for tests/test_gen.c. Included
 * first in a C++ file of kernels that host/cgen.c wrote for the CUDA target; the file is
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

/* Skew: 1 holds block 0 back for a while at the start and after every grid barrier, 2 the
 * other blocks. A kernel missing a barrier where one block reads what another writes then
 * reads the old values, every time, instead of now and then. The block's thread 0 sleeps,
 * which holds the whole block: its threads take turns on one host thread. */
static int ck_host_skew;
static inline void ck_host_hold(void)
{
    if (threadIdx.x == 0 &&
        ((ck_host_skew == 1 && blockIdx.x == 0) || (ck_host_skew == 2 && blockIdx.x != 0))) {
        struct timespec ts = {0, 300000};
        nanosleep(&ts, NULL);
    }
}
#define CK_AFTER_BARRIER() ck_host_hold()

/* A planted deadlock (test_gen's hang report): thread 0 of block ck_host_held waits before the
 * grid barrier of record ck_host_held_at until ck_host_let_go() (-1: nobody held). */
static int ck_host_held = -1, ck_host_held_at = -1, ck_host_released;
static inline void ck_host_before_barrier(int32_t record)
{
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

#include "compiled_kernel.cuh"

typedef void (*ck_host_kernel)(const ck_args a);

typedef struct ck_host_run {
    ck_host_kernel kernel;
    const ck_args *args;
} ck_host_run;

static void ck_host_thread_main(void *arg)
{
    const ck_host_run *r = (const ck_host_run *)arg;
    ck_host_hold();
    r->kernel(*r->args);
}

/* A kernel whose blocks disagree about the grid barriers (a mutant's) leaves a block waiting
 * for ever once the others have ended; on the host a watchdog then stops the run (status 7, no
 * cfx_status, which the comparison reports) after CK_HOST_WATCHDOG_S seconds. */
#define CK_HOST_WATCHDOG_S 5
typedef struct ck_host_watch {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    ck_state *state;
} ck_host_watch;

static void *ck_host_watchdog(void *arg)
{
    ck_host_watch *w = (ck_host_watch *)arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += CK_HOST_WATCHDOG_S;
    pthread_mutex_lock(&w->lock);
    while (!w->done && pthread_cond_timedwait(&w->cond, &w->lock, &until) == 0)
        ;
    if (!w->done)
        atomicCAS(&w->state->status, 0, 7);
    pthread_mutex_unlock(&w->lock);
    return NULL;
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
    ck_host_ntails = 0;
    *ntails = 0;
    if (ck_host_grid_start(&g) != 0) {
        /* the blocks started wait for the missing ones: stop the run, as a failing block
         * would */
        atomicCAS(&args->state->status, 0, 7);
        ck_host_grid_join(&g);
        return -1;
    }
    ck_host_watch w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, args->state};
    pthread_t watchdog;
    int watching = pthread_create(&watchdog, NULL, ck_host_watchdog, &w) == 0;
    ck_host_grid_join(&g);
    pthread_mutex_lock(&w.lock);
    w.done = 1;
    pthread_cond_signal(&w.cond);
    pthread_mutex_unlock(&w.lock);
    if (watching)
        pthread_join(watchdog, NULL);
    for (int i = 0; i < ck_host_ntails; i++)
        tails[i] = ck_host_tails[i];
    *ntails = ck_host_ntails;
    return 0;
}

#endif
