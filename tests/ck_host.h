/* ck_host.h: the generated persistent kernels on the host, for tests/test_gen.c. Included
 * first in a C++ file of kernels that host/cgen.c wrote for the CUDA target; the file is
 * compiled with the system C++ compiler into a shared object. CUDA itself is cuda_host.h's
 * (blocks of one thread each, as host threads); this adds the skew that holds blocks back at
 * barriers and the launcher, ck_host_launch. */
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
 * have ended. */
extern "C" int ck_host_launch(ck_host_kernel kernel, const ck_args *args, unsigned int blocks,
                              int skew)
{
    ck_host_skew = skew;
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
    return 0;
}

#endif
