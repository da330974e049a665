/* ck_host.h: the generated persistent kernels on the host, for tests/test_gen.c. Included
 * first in a C++ file of kernels that host/cgen.c wrote for the CUDA target; the file is
 * compiled with the system C++ compiler into a shared object. CUDA itself is cuda_host.h's
 * (blocks as host threads, each running its CUDA threads as fibers); this adds the skew that
 * holds blocks back at barriers and the launcher, ck_host_launch. */
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

/* Runs kernel on `blocks` host threads (at most 16) of `threads` CUDA threads each (a
 * multiple of 32), `order` (cuda_host.h: 0 forward, 1 reverse, 2 shuffled with seed), with
 * `skew` (above); returns when all have ended. */
extern "C" int ck_host_launch(ck_host_kernel kernel, const ck_args *args, unsigned int blocks,
                              unsigned int threads, int order, unsigned int seed, int skew)
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
    if (ck_host_grid_start(&g) != 0) {
        /* the blocks started wait for the missing ones: stop the run, as a failing block
         * would */
        atomicCAS(&args->state->status, 0, 7);
        ck_host_grid_join(&g);
        return -1;
    }
    ck_host_grid_join(&g);
    return 0;
}

#endif
