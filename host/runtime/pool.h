/* pool.h: the cpu executor's worker threads (host/runtime/pool.c).
 *
 * One pool in the process, shared by every cpu executor. pool_for splits a range of work into
 * contiguous parts and runs them on the calling thread and up to threads - 1 workers; the
 * workers are made at the first call that splits (a program whose records all stay below the
 * split's size makes none) and joined when the last user lets go (pool_release). One parallel
 * section runs at a time: a call that finds the pool busy (another executor's, on another
 * thread) runs its whole range on its own thread, so nothing ever waits for a pool. */
#ifndef CFX_POOL_H
#define CFX_POOL_H

#include <stdint.h>

/* The most threads a pool_for takes part in (the caller and POOL_MAX_THREADS - 1 workers). */
#define POOL_MAX_THREADS 256

/* Parts per thread at most: the threads take parts as they come free, so one that the system
 * schedules late (a loaded machine) leaves its share to the others. */
#define POOL_PARTS_PER_THREAD 4

/* fn(ctx, part, lo, hi): one part of the work, [lo, hi) of the range, in part order 0, 1, ...
 * parts - 1 of contiguous, ascending ranges; parts may run at once on different threads. */
typedef void (*pool_fn)(void *ctx, int part, int64_t lo, int64_t hi);

/* The number of parts pool_for would split n into for this many threads: n / grain (each part at
 * least `grain` long), at most threads * POOL_PARTS_PER_THREAD; 1 (the calling thread alone)
 * when threads <= 1 or n < 2 * grain. */
int pool_parts(int64_t n, int64_t grain, int threads);
/* Runs fn over [0, n) in pool_parts(n, grain, threads) parts and returns that count (the parts
 * ran on fewer threads where the pool was busy or a worker could not be made; their ranges are
 * the same). Part p is [n * p / parts, n * (p + 1) / parts). */
int pool_for(int64_t n, int64_t grain, int threads, pool_fn fn, void *ctx);

/* The cores this process may run on (sched_getaffinity), at least 1: the default thread count. */
int pool_cores(void);

/* A user of the pool (a cpu executor) comes and goes; the last to go joins the workers. */
void pool_retain(void);
void pool_release(void);
/* The workers running now (for the tests). */
int pool_workers(void);

#endif
