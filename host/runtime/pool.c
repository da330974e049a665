/* pool.c: the cpu executor's worker threads (see pool.h).
 *
 * Everything below is guarded by `mu` but the part counter, which the threads of one section
 * take parts from. A section: the caller takes `busy` (or, finding it taken, runs the range
 * itself), publishes the job under `mu` with seats for parts - 1 workers and a new generation,
 * wakes the workers, and takes parts itself like any of them; then it closes the seats (a
 * worker that wakes later has nothing to join) and waits under `mu` until every part is done and
 * no worker is inside the job, so the next section cannot overwrite a job in use. The caller
 * doing parts too means a section ends even if no worker ever wakes for it. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "pool.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER; /* a new job, or quit */
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER; /* a worker left a job */
static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER;  /* one section at a time */

static pthread_t workers[POOL_MAX_THREADS];
static int nworkers, users, quitting;
static uint64_t generation;
/* the job of the section in progress */
static pool_fn job_fn;
static void *job_ctx;
static int64_t job_n;
static int job_parts, seats, inside, parts_done;
static atomic_int next_part;

/* Takes parts of the current job until none is left; returns how many it ran. */
static int take_parts(pool_fn fn, void *ctx, int64_t n, int parts)
{
    int done = 0;
    for (;;) {
        int p = atomic_fetch_add_explicit(&next_part, 1, memory_order_relaxed);
        if (p >= parts)
            return done;
        fn(ctx, p, n * p / parts, n * (p + 1) / parts);
        done++;
    }
}

/* arg: the generation when the worker was made (the job it is made for comes after it) */
static void *worker_main(void *arg)
{
    uint64_t seen = (uint64_t)(uintptr_t)arg;
    pthread_mutex_lock(&mu);
    for (;;) {
        while (!quitting && (seen == generation || seats == 0))
            pthread_cond_wait(&work_cv, &mu);
        if (quitting)
            break;
        seen = generation;
        seats--;
        inside++;
        pool_fn fn = job_fn;
        void *ctx = job_ctx;
        int64_t n = job_n;
        int parts = job_parts;
        pthread_mutex_unlock(&mu);
        int done = take_parts(fn, ctx, n, parts);
        pthread_mutex_lock(&mu);
        parts_done += done;
        if (--inside == 0)
            pthread_cond_signal(&done_cv);
    }
    pthread_mutex_unlock(&mu);
    return NULL;
}

int pool_parts(int64_t n, int64_t grain, int threads)
{
    if (grain < 1)
        grain = 1;
    if (threads > POOL_MAX_THREADS)
        threads = POOL_MAX_THREADS;
    if (threads <= 1 || n < 2 * grain)
        return 1;
    /* a few parts per thread, so that a thread the system runs late holds up little */
    int64_t parts = n / grain, most = (int64_t)threads * POOL_PARTS_PER_THREAD;
    return parts < most ? (int)parts : (int)most;
}

int pool_for(int64_t n, int64_t grain, int threads, pool_fn fn, void *ctx)
{
    int parts = pool_parts(n, grain, threads);
    if (parts <= 1 || pthread_mutex_trylock(&busy) != 0) {
        /* alone: the same parts, in order, on this thread */
        for (int p = 0; p < parts; p++)
            fn(ctx, p, n * p / parts, n * (p + 1) / parts);
        return parts;
    }
    if (threads > POOL_MAX_THREADS)
        threads = POOL_MAX_THREADS;
    int helpers = (parts < threads ? parts : threads) - 1;
    pthread_mutex_lock(&mu);
    if (nworkers < helpers && !quitting) {
        /* the workers start with every signal blocked: the application's handlers (Ctrl-C)
         * run on its own threads */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        while (nworkers < helpers && !quitting) {
            if (pthread_create(&workers[nworkers], NULL, worker_main, (void *)(uintptr_t)generation) != 0)
                break; /* fewer helpers: the parts are the same */
            nworkers++;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    job_fn = fn;
    job_ctx = ctx;
    job_n = n;
    job_parts = parts;
    parts_done = 0;
    atomic_store_explicit(&next_part, 0, memory_order_relaxed);
    seats = helpers < nworkers ? helpers : nworkers;
    generation++;
    if (seats > 0)
        pthread_cond_broadcast(&work_cv);
    pthread_mutex_unlock(&mu);

    int done = take_parts(fn, ctx, n, parts);

    pthread_mutex_lock(&mu);
    parts_done += done;
    seats = 0;
    while (parts_done < parts || inside > 0)
        pthread_cond_wait(&done_cv, &mu);
    pthread_mutex_unlock(&mu);
    pthread_mutex_unlock(&busy);
    return parts;
}

int pool_cores(void)
{
    static atomic_int cores;
    int c = atomic_load_explicit(&cores, memory_order_relaxed);
    if (c > 0)
        return c;
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        c = CPU_COUNT(&set);
#endif
    if (c < 1) {
        long k = sysconf(_SC_NPROCESSORS_ONLN);
        c = k > 0 ? (int)k : 1;
    }
    if (c > POOL_MAX_THREADS)
        c = POOL_MAX_THREADS;
    atomic_store_explicit(&cores, c, memory_order_relaxed);
    return c;
}

void pool_retain(void)
{
    pthread_mutex_lock(&mu);
    users++;
    pthread_mutex_unlock(&mu);
}

void pool_release(void)
{
    pthread_mutex_lock(&mu);
    if (--users > 0 || nworkers == 0 || quitting) {
        pthread_mutex_unlock(&mu);
        return;
    }
    /* the last user: no section can be running (its executor is a user) */
    quitting = 1;
    pthread_cond_broadcast(&work_cv);
    int n = nworkers;
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < n; i++)
        pthread_join(workers[i], NULL);
    pthread_mutex_lock(&mu);
    nworkers = 0;
    quitting = 0;
    pthread_mutex_unlock(&mu);
}

int pool_workers(void)
{
    pthread_mutex_lock(&mu);
    int n = nworkers;
    pthread_mutex_unlock(&mu);
    return n;
}
