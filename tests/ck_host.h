/* ck_host.h: the generated persistent kernels on the host, for tests/test_gen.c. Included
 * first in a C++ file of kernels that host/cgen.c wrote for the CUDA target; the file is
 * compiled with the system C++ compiler into a shared object. CUDA itself is cuda_host.h's
 * (blocks of one thread each, as host threads); this adds the skew that holds blocks back at
 * barriers, the device runtime's graph launch as tests/persist_host.cpp models it for the
 * interpreter (the graphs a launch tail-launches are recorded, for the test to serve in order),
 * and the launcher, ck_host_launch. */
#ifndef CFX_CK_HOST_H
#define CFX_CK_HOST_H

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "cuda_host.h"

/* Skew: 1 holds block 0 back for a while at the start and after every grid barrier, 2 the
 * other blocks. A kernel missing a barrier where one block reads what another writes then
 * reads the old values, every time, instead of now and then. */
static int ck_host_skew;
static inline void ck_host_hold(void)
{
    if ((ck_host_skew == 1 && blockIdx.x == 0) || (ck_host_skew == 2 && blockIdx.x != 0)) {
        struct timespec ts = {0, 300000};
        nanosleep(&ts, NULL);
    }
}
#define CK_AFTER_BARRIER() ck_host_hold()

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

typedef struct ck_host_block {
    ck_host_kernel kernel;
    const ck_args *args;
    unsigned int index;
} ck_host_block;

static void *ck_host_block_main(void *arg)
{
    const ck_host_block *b = (const ck_host_block *)arg;
    blockIdx.x = b->index;
    ck_host_hold();
    b->kernel(*b->args);
    return NULL;
}

/* Runs kernel on `blocks` host threads (at most 16) with `skew` (above) and returns when all
 * have ended; the graphs it tail-launched go to tails[0 .. *ntails) (room for 4). */
extern "C" int ck_host_launch(ck_host_kernel kernel, const ck_args *args, unsigned int blocks,
                              int skew, struct CUgraphExec_st **tails, int *ntails)
{
    ck_host_skew = skew;
    ck_host_ntails = 0;
    *ntails = 0;
    pthread_t threads[16];
    ck_host_block b[16];
    if (blocks < 1 || blocks > 16)
        return -1;
    gridDim.x = blocks;
    for (unsigned int i = 0; i < blocks; i++) {
        b[i].kernel = kernel;
        b[i].args = args;
        b[i].index = i;
        if (pthread_create(&threads[i], NULL, ck_host_block_main, &b[i]) != 0) {
            /* the blocks started wait for the missing ones: stop the run, as a failing block
             * would */
            atomicCAS(&args->state->status, 0, 7);
            for (unsigned int j = 0; j < i; j++)
                pthread_join(threads[j], NULL);
            return -1;
        }
    }
    for (unsigned int i = 0; i < blocks; i++)
        pthread_join(threads[i], NULL);
    for (int i = 0; i < ck_host_ntails; i++)
        tails[i] = ck_host_tails[i];
    *ntails = ck_host_ntails;
    return 0;
}

#endif
