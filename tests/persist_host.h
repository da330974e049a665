/* persist_host.h: the cuda-persistent interpreter's own kernel (device/interp_kernel.cuh,
 * persist_kernel<0> and <1>) run on host threads, one per block, each running the block's CUDA
 * threads as fibers (tests/cuda_host.h), by a launcher that does what device/interp.cu does
 * around it: the pause path's relaunches, or the device graph launch's tail launches, with
 * each launch-ending record's work between launches, and a host thread draining the print
 * ring while the blocks run. test_sched compares it with the cpu executor beside its replica:
 * the replica models the scheduling, this runs the kernel's code itself. Implemented in
 * persist_host.cpp. */
#ifndef CFX_PERSIST_HOST_H
#define CFX_PERSIST_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "host/runtime/exec.h"
#include "device/microops.h"
#include "host/program/program.h"
#include "device/scheduler.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The device's block size, P_THREADS (device/grid_barrier.cuh, which C cannot include;
 * persist_host.cpp checks that they agree). */
#define PERSIST_HOST_THREADS 256

typedef struct persist_host_opts {
    int nblocks;                /* 1 .. 16 */
    int threads;                /* per block: a multiple of 32 up to PERSIST_HOST_THREADS; 0: all of them, as
                                 * on the device. The tiled product needs them all (kernels/block.cuh) */
    int order;                  /* the order a block's threads run in between waits (tests/cuda_host.h):
                                 * 0 forward, 1 reverse, 2 shuffled with `seed` */
    unsigned seed;
    int device_launch;          /* persist_kernel<1> and its tail launches; else <0> and pauses */
    const mop_prog *mops;       /* block 0's micro-ops, NULL: none */
    int64_t max_iters;          /* 0: no budget */
    uint32_t ring_cap;          /* 0: the executor's size (1 MiB); else at least two of the biggest entry */
    void (*init)(const cfx_prog *p, uint8_t *arena);                  /* writes the inputs */
    int (*site)(void *user, const cfx_record *r, uint8_t *arena);     /* a CALL's or product's work: 0 ok */
    void *site_user;
    int trace;                  /* the launches carry trace buffers, as a traced run's do, and the profile
                                 * block 0 adds up (persist_args.prof) */
    int hold_block;             /* with report_ms, a planted deadlock: this block is held before the grid
                                 * barrier at record hold_barrier until the report is taken (-1: none) */
    int32_t hold_barrier;
    int report_ms;              /* > 0: after this long, the hang report from the blocks' progress words
                                 * goes to result.hang, and the run is cancelled (the held block let go) */
    int limit_ms;               /* > 0: a launch longer than this is a hang (persist_host.cpp); 0: 60 s */
} persist_host_opts;

/* persist_event's layout (device/interp_kernel.cuh; persist_host.cpp checks it): a record a
 * block ran, from t0 to t1 in the global timer's nanoseconds (the stand-in's: CLOCK_MONOTONIC). */
typedef struct persist_host_event {
    int32_t record;
    int32_t what; /* 0: the record, 1: the micro-ops that start at it */
    unsigned long long t0, t1;
} persist_host_event;
#define PERSIST_HOST_TRACE_CAP 8192 /* P_TRACE_PER_BLOCK */

typedef struct persist_host_result {
    exec_outcome out;
    uint8_t *arena;             /* the arena after the run (the caller frees it) */
    uint8_t *prints;            /* the printed entries in order: int32 record, int32 bytes, the bytes */
    size_t nprints;             /* bytes in prints (the caller frees it) */
    int launches;               /* launches of the kernel */
    int sites;                  /* launch-ending records whose work ran between launches */
    persist_host_event *trace;  /* with opts.trace: block b's events at b * PERSIST_HOST_TRACE_CAP (the caller
                                 * frees it) */
    uint32_t trace_count[16];   /* per block: events seen (more than the cap: the rest were dropped) */
    unsigned long long *prof;   /* with opts.trace: persist_args.prof (the caller frees it) */
    char hang[2048];            /* with opts.report_ms: exec_format_hang's report, "" when the run ended first */
} persist_host_result;

/* Runs p (plan: sched_plan_build_opts's for it). Returns 0, or -1 when the run could not be
 * set up (out of memory, more than 16 blocks, a block size it cannot run). */
int persist_host_run(const cfx_prog *p, const sched_plan *plan, const persist_host_opts *o, persist_host_result *r);

/* The stand-in's race detector (tests/race_host.h): how many accesses it checked so far (0 when
 * CFX_STANDIN_RACE=0 turned it off). */
unsigned long long persist_host_race_checks(void);

#ifdef __cplusplus
}
#endif
#endif
