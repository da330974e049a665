/* cuda_host.h: CUDA as cfx's kernels use it, on the host. Included before a kernel's header
 * in a C++ file compiled with the system C++ compiler: by ck_host.h for the generated kernels
 * (tests/test_gen.c), and through tests/host_cuda/cuda_runtime.h for the interpreter's kernel
 * (tests/persist_host.cpp) and the block-level routines and the probe (tests/test_standin.cpp).
 *
 * A block is a host thread, and it runs blockDim.x CUDA threads as fibers (a stack and a
 * context switch of a few instructions each, no kernel threads): a fiber runs until it reaches
 * a point where a CUDA thread waits for others (__syncthreads and its _or/_and/_count forms, a
 * named barrier, __syncwarp, a warp shuffle or vote) or ends; when every fiber of the block is
 * waiting, the barriers and warp operations that every participant has reached complete, and
 * the released fibers run again, in forward, reverse or a seeded shuffled order (the grid's
 * `order`), so a barrier missing between a write by one thread and a read by another gives a
 * wrong answer rather than a lucky one. `__shared__` variables are per block (host thread);
 * blocks run concurrently, so the grid barrier, the split of work over blocks, the combine of
 * split reductions, the one-block regions with their publish and reload, and stops raised by
 * one block while the others wait run as on a GPU, with the same atomics and fences.
 *
 * Rules the device does not enforce and the stand-in does (each aborts with a message that
 * names the block and the threads): every thread of a block that has not ended must reach
 * __syncthreads, and the threads at a named barrier must be its count; the lanes named in a
 * warp operation's mask must all reach the same operation with the same mask, and a lane may
 * not read a lane outside the mask. A block whose threads all wait and none can go on is a
 * deadlock and aborts too (or, where the launcher asks for faults to go on, stops the run:
 * ck_host_fail). What cannot be modelled: a thread spinning on memory that a thread
 * of its own block must write without a barrier in between (the fibers of a block take turns
 * only at the points above; the kernels' spins read global or host memory that other blocks
 * or the host write), the device's weaker memory model within a block (a fiber sees its
 * siblings' writes at once), and the timing of instructions. One-dimensional blocks only.
 *
 * A race detector (tests/race_host.h) watches what the kernels read and write through their
 * hooks: a word one block wrote and another touched between the same two grid barriers, or one
 * thread of a block wrote and another touched between the same two block barriers, aborts the
 * run naming both sides. On by default; CFX_STANDIN_RACE=0 turns it off.
 *
 * Under AddressSanitizer the switches are announced to it (__sanitizer_start_switch_fiber),
 * under ThreadSanitizer each fiber is one of its fibers (__tsan_switch_to_fiber). On x86-64
 * the switch is a few instructions; elsewhere it is ucontext's swapcontext, slower (a system
 * call per switch) but the same. */
#ifndef CFX_CUDA_HOST_H
#define CFX_CUDA_HOST_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) && !defined(CK_HOST_UCONTEXT)
#define CK_HOST_SWITCH_X86 1
#else
#include <ucontext.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define CK_HOST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CK_HOST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define CK_HOST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CK_HOST_TSAN 1
#endif
#endif
#ifdef CK_HOST_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef CK_HOST_TSAN
#include <sanitizer/tsan_interface.h>
#endif

#define CK_HOST_EMULATION 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __shared__ static thread_local
#define __align__(n) __attribute__((aligned(n)))
#define warpSize 32

#define CK_HOST_MAX_BLOCKS 16
#define CK_HOST_MAX_THREADS 1024
#define CK_HOST_NBARRIERS 16 /* bar.sync 0..15; 0 is __syncthreads */

struct ck_dim3 {
    unsigned int x, y, z;
};
typedef struct float4 {
    float x, y, z, w;
} float4;
typedef struct double2 {
    double x, y;
} double2;

static thread_local ck_dim3 blockIdx;
static ck_dim3 blockDim = {1, 1, 1};
static ck_dim3 gridDim = {1, 1, 1};

/* ==== fibers ================================================================================ */

enum { CK_HOST_RUNNING, CK_HOST_AT_BARRIER, CK_HOST_AT_WARP, CK_HOST_ENDED, CK_HOST_FAULTED };
/* warp operations */
enum { CK_W_SYNC, CK_W_SHFL, CK_W_SHFL_XOR, CK_W_SHFL_DOWN, CK_W_SHFL_UP, CK_W_BALLOT, CK_W_ANY, CK_W_ALL };
static const char *const ck_host_wop_name[] = {"__syncwarp",     "__shfl_sync", "__shfl_xor_sync",
                                               "__shfl_down_sync", "__shfl_up_sync", "__ballot_sync",
                                               "__any_sync",     "__all_sync"};
/* how a block's runnable threads are ordered at each round */
enum { CK_HOST_FORWARD, CK_HOST_REVERSE, CK_HOST_SHUFFLE };

typedef struct ck_host_fiber {
    void *sp; /* the saved context (x86-64: its stack pointer) */
#ifndef CK_HOST_SWITCH_X86
    ucontext_t uc;
#endif
    unsigned char *stack; /* the usable stack, CK_HOST_STACK bytes above a guard page */
    ck_dim3 idx;
    int state;
    /* at a barrier: which, the count it was given (0: every thread not ended), a predicate */
    int bar;
    unsigned bar_count;
    int pred;
    /* at a warp operation */
    int wop;
    unsigned mask;
    uint64_t val;
    int arg, width;
    uint64_t out;
    /* the race detector's (race_host.h): the generated line running a range function */
    const char *site_file;
    int site_line;
#ifdef CK_HOST_ASAN
    void *fake_stack;
#endif
#ifdef CK_HOST_TSAN
    void *tsan_fiber;
#endif
} ck_host_fiber;

struct ck_host_grid;

typedef struct ck_host_block {
    void *sched_sp;
#ifndef CK_HOST_SWITCH_X86
    ucontext_t sched_uc;
#endif
    const struct ck_host_grid *grid;
    ck_host_fiber *fibers;
    ck_host_fiber *cur;
    unsigned n, live;
    unsigned *order; /* the round's fibers, in the order they run */
    unsigned m, pos; /* how many, and the next to run */
    uint64_t rng;
    /* the barriers: threads arrived, of them with a true predicate, the count they gave */
    unsigned arrived[CK_HOST_NBARRIERS], trues[CK_HOST_NBARRIERS], count[CK_HOST_NBARRIERS];
    unsigned at_warp; /* threads at a warp operation */
    int faulted;      /* a rule broken with faults going on (ck_host_fail): the block has stopped */
    /* the race detector's (tests/race_host.h): grid barriers arrived at, barriers of the whole
     * block passed, the block's thread-local storage (its __shared__ variables) and its dynamic
     * shared memory */
    uint32_t gepoch, bepoch, yielded;
    uintptr_t tls_lo, tls_hi, smem_lo, smem_hi;
#ifdef CK_HOST_ASAN
    void *fake_stack;
    const void *sched_bottom;
    size_t sched_size;
#endif
#ifdef CK_HOST_TSAN
    void *tsan_sched;
#endif
} ck_host_block;

static thread_local ck_host_block *ck_host_this_block;

/* The thread running now (one-dimensional blocks: y and z are 0). */
static inline const ck_dim3 &ck_host_thread_index(void)
{
    return ck_host_this_block->cur->idx;
}
#define threadIdx (ck_host_thread_index())

#if defined(CK_HOST_ASAN)
#define CK_HOST_STACK (1u << 20)
#else
#define CK_HOST_STACK (256u << 10)
#endif

/* Stacks, kept for the next launch: mapped once, lazily committed, with a guard page below;
 * released by ck_host_stacks_release. */
static pthread_mutex_t ck_host_stack_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char **ck_host_stacks;
static size_t ck_host_nstacks, ck_host_capstacks;

static unsigned char *ck_host_stack_get(void)
{
    unsigned char *s = NULL;
    pthread_mutex_lock(&ck_host_stack_lock);
    if (ck_host_nstacks > 0)
        s = ck_host_stacks[--ck_host_nstacks];
    pthread_mutex_unlock(&ck_host_stack_lock);
    if (s)
        return s;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *m = mmap(NULL, CK_HOST_STACK + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    mprotect(m, page, PROT_NONE);
    return (unsigned char *)m + page;
}

static void ck_host_stack_put(unsigned char *s)
{
    pthread_mutex_lock(&ck_host_stack_lock);
    if (ck_host_nstacks == ck_host_capstacks) {
        size_t cap = ck_host_capstacks ? 2 * ck_host_capstacks : 256;
        unsigned char **n = (unsigned char **)realloc(ck_host_stacks, cap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&ck_host_stack_lock);
            munmap(s - sysconf(_SC_PAGESIZE), CK_HOST_STACK + (size_t)sysconf(_SC_PAGESIZE));
            return;
        }
        ck_host_stacks = n;
        ck_host_capstacks = cap;
    }
    ck_host_stacks[ck_host_nstacks++] = s;
    pthread_mutex_unlock(&ck_host_stack_lock);
}

/* At exit, or when a shared object of generated kernels (tests/ck_host.h) is unloaded. */
__attribute__((destructor)) static void ck_host_stacks_release(void)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < ck_host_nstacks; i++)
        munmap(ck_host_stacks[i] - page, CK_HOST_STACK + page);
    free(ck_host_stacks);
    ck_host_stacks = NULL;
    ck_host_nstacks = ck_host_capstacks = 0;
}

#ifdef CK_HOST_SWITCH_X86
/* Saves the callee-saved registers on this stack and the stack pointer in *save, then takes
 * them back from the stack at `to` and returns there. */
__attribute__((naked, noinline)) static void ck_host_switch(void **save, void *to)
{
    __asm__ volatile("pushq %rbp\n\t"
                     "pushq %rbx\n\t"
                     "pushq %r12\n\t"
                     "pushq %r13\n\t"
                     "pushq %r14\n\t"
                     "pushq %r15\n\t"
                     "movq %rsp, (%rdi)\n\t"
                     "movq %rsi, %rsp\n\t"
                     "popq %r15\n\t"
                     "popq %r14\n\t"
                     "popq %r13\n\t"
                     "popq %r12\n\t"
                     "popq %rbx\n\t"
                     "popq %rbp\n\t"
                     "ret\n\t");
}

/* A new fiber's first return lands here: its function (r13) with its argument (r12). */
__attribute__((naked, noinline)) static void ck_host_fiber_entry(void)
{
    __asm__ volatile("movq %r12, %rdi\n\t"
                     "callq *%r13\n\t"
                     "ud2\n\t");
}
#endif

/* The round's fibers hand over to each other, the first from the scheduler, the last back to
 * it, so a round of n fibers costs n + 1 switches. */
static void ck_host_run_round(ck_host_block *b)
{
    ck_host_fiber *f = &b->fibers[b->order[0]];
    b->pos = 1;
    b->cur = f;
#ifdef CK_HOST_TSAN
    __tsan_switch_to_fiber(f->tsan_fiber, 0);
#endif
#ifdef CK_HOST_ASAN
    __sanitizer_start_switch_fiber(&b->fake_stack, f->stack, CK_HOST_STACK);
#endif
#ifdef CK_HOST_SWITCH_X86
    ck_host_switch(&b->sched_sp, f->sp);
#else
    swapcontext(&b->sched_uc, &f->uc);
#endif
#ifdef CK_HOST_ASAN
    __sanitizer_finish_switch_fiber(b->fake_stack, NULL, NULL);
#endif
}

/* From the running fiber f, which waits or has ended (and is then never resumed), to the
 * round's next fiber, or back to the scheduler after the last. */
static void ck_host_suspend(ck_host_block *b, ck_host_fiber *f)
{
    ck_host_fiber *next = b->pos < b->m ? &b->fibers[b->order[b->pos++]] : NULL;
    b->cur = next;
#ifdef CK_HOST_TSAN
    __tsan_switch_to_fiber(next ? next->tsan_fiber : b->tsan_sched, 0);
#endif
#ifdef CK_HOST_ASAN
    __sanitizer_start_switch_fiber(f->state == CK_HOST_ENDED ? NULL : &f->fake_stack,
                                   next ? (const void *)next->stack : b->sched_bottom,
                                   next ? CK_HOST_STACK : b->sched_size);
#endif
#ifdef CK_HOST_SWITCH_X86
    ck_host_switch(&f->sp, next ? next->sp : b->sched_sp);
#else
    swapcontext(&f->uc, next ? &next->uc : &b->sched_uc);
#endif
#ifdef CK_HOST_ASAN
    __sanitizer_finish_switch_fiber(f->fake_stack, NULL, NULL);
#endif
}

/* Every CUDA thread of the running grid: the kernel, then back to the scheduler for good. */
static void ck_host_fiber_main(ck_host_fiber *f);

#ifndef CK_HOST_SWITCH_X86
static void ck_host_fiber_main_uc(unsigned int hi, unsigned int lo)
{
    ck_host_fiber_main((ck_host_fiber *)(((uintptr_t)hi << 16 << 16) | (uintptr_t)lo));
}
#endif

static int ck_host_fiber_init(ck_host_block *b, ck_host_fiber *f)
{
    f->stack = ck_host_stack_get();
    if (!f->stack)
        return -1;
#ifdef CK_HOST_SWITCH_X86
    /* as ck_host_switch leaves a stack: r15 r14 r13 r12 rbx rbp, then the return address;
     * after that return the stack pointer is 16-byte aligned, as a call expects it */
    uintptr_t top = ((uintptr_t)(f->stack + CK_HOST_STACK)) & ~(uintptr_t)15;
    void **sp = (void **)(top - 7 * sizeof(void *));
    sp[0] = NULL;
    sp[1] = NULL;
    sp[2] = (void *)&ck_host_fiber_main;
    sp[3] = (void *)f;
    sp[4] = NULL;
    sp[5] = NULL;
    sp[6] = (void *)&ck_host_fiber_entry;
    f->sp = sp;
#else
    if (getcontext(&f->uc) != 0)
        return -1;
    f->uc.uc_stack.ss_sp = f->stack;
    f->uc.uc_stack.ss_size = CK_HOST_STACK;
    f->uc.uc_link = NULL;
    uintptr_t p = (uintptr_t)f;
    makecontext(&f->uc, (void (*)(void))ck_host_fiber_main_uc, 2, (unsigned int)(p >> 16 >> 16),
                (unsigned int)(p & 0xffffffffu));
#endif
#ifdef CK_HOST_TSAN
    f->tsan_fiber = __tsan_create_fiber(0);
#endif
    (void)b;
    return 0;
}

/* ==== what a CUDA thread waits at ============================================================= */

/* A rule broken. Where the run asked for faults to go on (ck_host_on_fault set, and
 * CFX_STANDIN_RACE=quiet: test_gen --mutants, whose next mutant must run), the fault is
 * counted in ck_host_faults, the hook stops the run (every other block sees it at its next poll
 * or barrier), and the block stops: its threads are left where they are. From a thread
 * (b->cur is the caller) that thread is parked for good; from the scheduler, the caller returns
 * at once. Otherwise one line, where the block's threads stand, and abort. */
static void (*ck_host_on_fault)(void);
/* faults that went on: these, and the races the detector (race_host.h) reports or lets go */
static unsigned long long ck_host_faults;
static int ck_race_enabled(void);
static void ck_host_suspend(ck_host_block *b, ck_host_fiber *f);
static void ck_host_fail(ck_host_block *b, const char *what, unsigned thread)
{
    if (b && ck_host_on_fault && ck_race_enabled() == 3) {
        if (!b->faulted) {
            b->faulted = 1;
            __atomic_fetch_add(&ck_host_faults, 1, __ATOMIC_SEQ_CST);
            ck_host_on_fault();
        }
        if (b->cur && b->cur->state == CK_HOST_RUNNING) { /* from the thread itself */
            ck_host_fiber *f = b->cur;
            f->state = CK_HOST_FAULTED;
            ck_host_suspend(b, f);
            abort(); /* a parked thread is never resumed */
        }
        return;
    }
    fprintf(stderr, "cuda_host.h: block %u, thread %u: %s\n", blockIdx.x, thread, what);
    if (b) {
        for (unsigned i = 0; i < b->n; i++) {
            const ck_host_fiber *f = &b->fibers[i];
            if (f->state == CK_HOST_AT_BARRIER)
                fprintf(stderr, "  thread %u at barrier %d (count %u)\n", i, f->bar, f->bar_count);
            else if (f->state == CK_HOST_AT_WARP)
                fprintf(stderr, "  thread %u at %s (mask %#x)\n", i, ck_host_wop_name[f->wop], f->mask);
            else if (f->state == CK_HOST_ENDED)
                fprintf(stderr, "  thread %u ended\n", i);
        }
    }
    abort();
}

/* Barrier `id` of `count` threads (0: every thread of the block that has not ended), with a
 * predicate; returns the threads that arrived (high 32 bits) and of them those with a true
 * predicate (low 32 bits). */
__attribute__((noinline)) static uint64_t ck_host_barrier(int id, unsigned count, int pred)
{
    ck_host_block *b = ck_host_this_block;
    ck_host_fiber *f = b->cur;
    if (id < 0 || id >= CK_HOST_NBARRIERS)
        ck_host_fail(b, "a barrier id out of 0..15", f->idx.x);
    if (count % 32u != 0 || count > b->n)
        ck_host_fail(b, "a named barrier's count that is not a multiple of 32 up to the block's size", f->idx.x);
    if (b->arrived[id] > 0 && b->count[id] != count)
        ck_host_fail(b, "threads at one barrier with different thread counts", f->idx.x);
    b->count[id] = count;
    b->arrived[id]++;
    b->trues[id] += pred != 0;
    f->state = CK_HOST_AT_BARRIER;
    f->bar = id;
    f->bar_count = count;
    ck_host_suspend(b, f);
    return f->out;
}

__attribute__((noinline)) static uint64_t ck_host_warp(int wop, unsigned mask, uint64_t val, int arg, int width)
{
    ck_host_block *b = ck_host_this_block;
    ck_host_fiber *f = b->cur;
    unsigned lane = f->idx.x & 31u;
    if (!(mask >> lane & 1u))
        ck_host_fail(b, "a warp operation whose mask leaves out the calling lane", f->idx.x);
    if (width < 1 || width > 32 || (width & (width - 1)) != 0)
        ck_host_fail(b, "a shuffle width that is not a power of two up to 32", f->idx.x);
    f->state = CK_HOST_AT_WARP;
    b->at_warp++;
    f->wop = wop;
    f->mask = mask;
    f->val = val;
    f->arg = arg;
    f->width = width;
    ck_host_suspend(b, f);
    return f->out;
}

/* The scheduler's part: completes every barrier whose threads have all arrived. */
static void ck_host_release_barriers(ck_host_block *b)
{
    for (int id = 0; id < CK_HOST_NBARRIERS; id++) {
        const unsigned arrived = b->arrived[id], need = b->count[id] ? b->count[id] : b->live;
        if (arrived == 0 || arrived < need)
            continue;
        if (arrived > need) {
            ck_host_fail(b, "more threads at a named barrier than its count", 0);
            return;
        }
        if (arrived >= b->live)
            b->bepoch++; /* every live thread waited: a new block epoch (race_host.h) */
        const uint64_t out = (uint64_t)arrived << 32 | b->trues[id];
        for (unsigned i = 0; i < b->n; i++) {
            ck_host_fiber *f = &b->fibers[i];
            if (f->state == CK_HOST_AT_BARRIER && f->bar == id) {
                f->state = CK_HOST_RUNNING;
                f->out = out;
            }
        }
        b->arrived[id] = b->trues[id] = b->count[id] = 0;
    }
}

/* The scheduler's part: completes every warp operation whose lanes have all arrived. */
static void ck_host_release_warps(ck_host_block *b)
{
    for (unsigned w = 0; w * 32 < b->n && b->at_warp > 0; w++) {
        ck_host_fiber *lanes = &b->fibers[w * 32];
        const unsigned nl = b->n - w * 32 < 32 ? b->n - w * 32 : 32;
        unsigned done = 0; /* lanes already released this pass */
        for (unsigned l = 0; l < nl; l++) {
            const ck_host_fiber *f = &lanes[l];
            if (f->state != CK_HOST_AT_WARP || (done >> l & 1u))
                continue;
            const unsigned mask = f->mask;
            int complete = 1;
            for (unsigned q = 0; q < 32; q++) {
                if (!(mask >> q & 1u))
                    continue;
                if (q >= nl) {
                    ck_host_fail(b, "a warp operation's mask names a lane the block does not have", w * 32 + l);
                    return;
                }
                const ck_host_fiber *g = &lanes[q];
                if (g->state == CK_HOST_ENDED) {
                    ck_host_fail(b, "a warp operation's mask names a lane that has ended", w * 32 + q);
                    return;
                }
                if (g->state != CK_HOST_AT_WARP) {
                    complete = 0;
                    continue;
                }
                if (g->wop != f->wop || g->mask != mask || g->width != f->width) {
                    ck_host_fail(b, "lanes of one mask at different warp operations", w * 32 + q);
                    return;
                }
            }
            if (!complete)
                continue;
            uint32_t ballot = 0;
            for (unsigned q = 0; q < 32; q++)
                if (mask >> q & 1u)
                    ballot |= (uint32_t)(lanes[q].val != 0) << q;
            for (unsigned q = 0; q < 32; q++) {
                if (!(mask >> q & 1u))
                    continue;
                ck_host_fiber *g = &lanes[q];
                const unsigned width = (unsigned)g->width, base = q & ~(width - 1);
                unsigned src = q;
                switch (g->wop) {
                case CK_W_SHFL:
                    src = base + ((unsigned)g->arg & (width - 1));
                    break;
                case CK_W_SHFL_XOR:
                    src = q ^ ((unsigned)g->arg & 31u);
                    if (src >= base + width)
                        src = q; /* a later group: the lane keeps its own value */
                    break;
                case CK_W_SHFL_DOWN:
                    src = q + (unsigned)g->arg;
                    if (src >= base + width)
                        src = q;
                    break;
                case CK_W_SHFL_UP:
                    src = q - (unsigned)g->arg;
                    if ((int)q - g->arg < (int)base)
                        src = q;
                    break;
                default:
                    break;
                }
                if (src != q && !(mask >> src & 1u)) {
                    ck_host_fail(b, "a shuffle that reads a lane outside its mask", w * 32 + q);
                    return;
                }
                switch (g->wop) {
                case CK_W_SHFL:
                case CK_W_SHFL_XOR:
                case CK_W_SHFL_DOWN:
                case CK_W_SHFL_UP:
                    g->out = lanes[src].val;
                    break;
                case CK_W_BALLOT:
                    g->out = ballot;
                    break;
                case CK_W_ANY:
                    g->out = ballot != 0;
                    break;
                case CK_W_ALL:
                    g->out = ballot == mask;
                    break;
                default:
                    g->out = 0;
                    break;
                }
            }
            for (unsigned q = 0; q < 32; q++)
                if (mask >> q & 1u) {
                    lanes[q].state = CK_HOST_RUNNING;
                    done |= 1u << q;
                    b->at_warp--;
                }
        }
    }
}

/* ==== the grid ============================================================================== */

/* A launch: `blocks` host threads of `threads` CUDA threads each (a multiple of 32), each
 * running kernel(arg); block_start (may be NULL) runs first in each block's host thread, with
 * blockIdx set (to set per-block state such as ck_host_smem). */
typedef struct ck_host_grid {
    unsigned blocks, threads;
    int order;               /* CK_HOST_FORWARD, CK_HOST_REVERSE or CK_HOST_SHUFFLE */
    unsigned long long seed; /* for CK_HOST_SHUFFLE */
    void (*kernel)(void *arg);
    void (*block_start)(void *arg);
    void *arg;
    /* set by ck_host_grid_start */
    int ended; /* blocks whose threads have all ended */
    unsigned started;
    pthread_t th[CK_HOST_MAX_BLOCKS];
    struct ck_host_block_start {
        struct ck_host_grid *grid;
        unsigned index;
    } start[CK_HOST_MAX_BLOCKS];
} ck_host_grid;

static void ck_host_fiber_main(ck_host_fiber *f)
{
    ck_host_block *b = ck_host_this_block;
#ifdef CK_HOST_ASAN
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
    b->grid->kernel(b->grid->arg);
    f->state = CK_HOST_ENDED;
    b->live--;
    ck_host_suspend(b, f);
    abort(); /* an ended fiber is never resumed */
}

static uint64_t ck_host_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* Dynamic shared memory (`extern __shared__` on a GPU): the block's buffer, which the
 * launcher sets in each block's host thread before its threads start (block_start), with its
 * size where the launcher says it (the race detector's reads of unwritten shared memory). */
static thread_local unsigned char *ck_host_smem;
static thread_local size_t ck_host_smem_bytes;

#include "race_host.h"

/* The block's threads, round after round: each runnable thread runs until it waits or ends,
 * in the grid's order, then whatever all its threads have reached completes. */
static void ck_host_run_block(ck_host_block *b)
{
    for (;;) {
        unsigned m = 0;
        for (unsigned i = 0; i < b->n; i++)
            if (b->fibers[i].state == CK_HOST_RUNNING)
                b->order[m++] = i;
        if (m == 0) {
            if (b->live != 0)
                ck_host_fail(b, "every thread of the block waits, and none can go on (deadlock)", 0);
            return;
        }
        if (b->grid->order == CK_HOST_REVERSE) {
            for (unsigned i = 0; i < m / 2; i++) {
                unsigned t = b->order[i];
                b->order[i] = b->order[m - 1 - i];
                b->order[m - 1 - i] = t;
            }
        } else if (b->grid->order == CK_HOST_SHUFFLE) {
            for (unsigned i = m - 1; i > 0; i--) {
                unsigned j = (unsigned)(((ck_host_next(&b->rng) >> 32) * (uint64_t)(i + 1)) >> 32);
                unsigned t = b->order[i];
                b->order[i] = b->order[j];
                b->order[j] = t;
            }
        }
        b->m = m;
        ck_host_run_round(b);
        if (!b->faulted)
            ck_host_release_barriers(b);
        if (!b->faulted)
            ck_host_release_warps(b);
        if (b->faulted)
            return; /* its threads are left where they stand (ck_host_fail) */
    }
}

static void *ck_host_block_main(void *p)
{
    ck_host_grid *g = ((ck_host_grid::ck_host_block_start *)p)->grid;
    const unsigned index = ((ck_host_grid::ck_host_block_start *)p)->index;
    ck_host_block b;
    memset(&b, 0, sizeof b);
    blockIdx.x = index;
    blockIdx.y = blockIdx.z = 0;
    b.grid = g;
    b.n = g->threads;
    b.rng = (g->seed + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)index + 1) * 0xbf58476d1ce4e5b9ull;
    if (b.rng == 0)
        b.rng = 1;
    b.fibers = (ck_host_fiber *)calloc(b.n, sizeof *b.fibers);
    b.order = (unsigned *)calloc(b.n, sizeof *b.order);
    if (!b.fibers || !b.order)
        ck_host_fail(NULL, "out of memory for the block's threads", 0);
    for (unsigned i = 0; i < b.n; i++) {
        b.fibers[i].idx.x = i;
        b.fibers[i].state = CK_HOST_RUNNING;
        if (ck_host_fiber_init(&b, &b.fibers[i]) != 0)
            ck_host_fail(NULL, "no memory for a thread's stack", i);
    }
    b.live = b.n;
#ifdef CK_HOST_TSAN
    b.tsan_sched = __tsan_get_current_fiber();
#endif
#ifdef CK_HOST_ASAN
    {
        /* the host thread's own stack, which the last fiber of a round switches back to */
        pthread_attr_t attr;
        void *bottom = NULL;
        size_t size = 0;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            pthread_attr_getstack(&attr, &bottom, &size);
            pthread_attr_destroy(&attr);
        }
        b.sched_bottom = bottom;
        b.sched_size = size;
    }
#endif
    ck_host_this_block = &b;
    ck_race_block_start(&b);
    if (g->block_start)
        g->block_start(g->arg);
    if (ck_host_smem && ck_host_smem_bytes) {
        b.smem_lo = (uintptr_t)ck_host_smem;
        b.smem_hi = b.smem_lo + ck_host_smem_bytes;
    }
    ck_host_run_block(&b);
    ck_host_this_block = NULL;
    for (unsigned i = 0; i < b.n; i++) {
        ck_host_stack_put(b.fibers[i].stack);
#ifdef CK_HOST_TSAN
        __tsan_destroy_fiber(b.fibers[i].tsan_fiber);
#endif
    }
    free(b.fibers);
    free(b.order);
    __atomic_add_fetch(&g->ended, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Starts the grid's blocks; returns 0, or -1 when a block's host thread did not start
 * (g->started says how many did: the caller must stop them, then join). */
static int ck_host_grid_start(ck_host_grid *g)
{
    g->ended = 0;
    g->started = 0;
    if (g->blocks < 1 || g->blocks > CK_HOST_MAX_BLOCKS || g->threads < 32 || g->threads > CK_HOST_MAX_THREADS ||
        g->threads % 32 != 0)
        return -1;
    gridDim.x = g->blocks;
    gridDim.y = gridDim.z = 1;
    ck_race_launch();
    blockDim.x = g->threads;
    blockDim.y = blockDim.z = 1;
    for (unsigned i = 0; i < g->blocks; i++) {
        g->start[i].grid = g;
        g->start[i].index = i;
        if (pthread_create(&g->th[i], NULL, ck_host_block_main, &g->start[i]) != 0)
            return -1;
        g->started++;
    }
    return 0;
}

static int ck_host_grid_running(const ck_host_grid *g)
{
    return __atomic_load_n(&g->ended, __ATOMIC_ACQUIRE) < (int)g->started;
}

static void ck_host_grid_join(ck_host_grid *g)
{
    for (unsigned i = 0; i < g->started; i++)
        pthread_join(g->th[i], NULL);
}

/* ==== CUDA's functions ======================================================================= */

static inline void __syncthreads(void) { ck_host_barrier(0, 0, 0); }
static inline int __syncthreads_or(int p) { return (uint32_t)ck_host_barrier(0, 0, p) != 0; }
static inline int __syncthreads_and(int p)
{
    uint64_t r = ck_host_barrier(0, 0, p);
    return (uint32_t)r == (uint32_t)(r >> 32);
}
static inline int __syncthreads_count(int p) { return (int)(uint32_t)ck_host_barrier(0, 0, p); }
/* `bar.sync id, count;` (the kernels' named barriers, which are inline PTX on the device) */
static inline void ck_host_bar_sync(int id, unsigned count) { ck_host_barrier(id, count, 0); }
#define CK_HOST_BAR_SYNC(id, count) ck_host_bar_sync((id), (count))
static inline void __syncwarp(unsigned mask = 0xffffffffu) { ck_host_warp(CK_W_SYNC, mask, 0, 0, 32); }

template <typename T> static inline uint64_t ck_host_bits(T v)
{
    static_assert(sizeof(T) <= 8, "a shuffle moves at most 8 bytes");
    uint64_t u = 0;
    memcpy(&u, &v, sizeof v);
    return u;
}
template <typename T> static inline T ck_host_from_bits(uint64_t u)
{
    T v;
    memcpy(&v, &u, sizeof v);
    return v;
}
template <typename T> static inline T __shfl_sync(unsigned mask, T v, int src, int width = 32)
{
    return ck_host_from_bits<T>(ck_host_warp(CK_W_SHFL, mask, ck_host_bits(v), src, width));
}
template <typename T> static inline T __shfl_xor_sync(unsigned mask, T v, int lanes, int width = 32)
{
    return ck_host_from_bits<T>(ck_host_warp(CK_W_SHFL_XOR, mask, ck_host_bits(v), lanes, width));
}
template <typename T> static inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
    return ck_host_from_bits<T>(ck_host_warp(CK_W_SHFL_DOWN, mask, ck_host_bits(v), (int)delta, width));
}
template <typename T> static inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
    return ck_host_from_bits<T>(ck_host_warp(CK_W_SHFL_UP, mask, ck_host_bits(v), (int)delta, width));
}
static inline unsigned __ballot_sync(unsigned mask, int p)
{
    return (unsigned)ck_host_warp(CK_W_BALLOT, mask, p != 0, 0, 32);
}
static inline int __any_sync(unsigned mask, int p) { return (int)ck_host_warp(CK_W_ANY, mask, p != 0, 0, 32); }
static inline int __all_sync(unsigned mask, int p) { return (int)ck_host_warp(CK_W_ALL, mask, p != 0, 0, 32); }

static inline void __threadfence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

/* Atomics, on global or shared memory alike (a block's threads take turns on one host
 * thread, and blocks are host threads). */
template <typename T> struct ck_host_same {
    typedef T type;
};
#define CK_V(T) typename ck_host_same<T>::type /* a value of the pointer's type, not deduced */
template <typename T> static inline T atomicAdd(T *p, CK_V(T) v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
template <typename T> static inline T atomicSub(T *p, CK_V(T) v) { return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST); }
template <typename T> static inline T atomicAnd(T *p, CK_V(T) v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); }
template <typename T> static inline T atomicOr(T *p, CK_V(T) v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
template <typename T> static inline T atomicXor(T *p, CK_V(T) v) { return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST); }
template <typename T> static inline T atomicExch(T *p, CK_V(T) v)
{
    return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
}
template <typename T> static inline T atomicCAS(T *p, CK_V(T) compare, CK_V(T) value)
{
    __atomic_compare_exchange_n(p, &compare, value, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return compare;
}
template <typename T> static inline T atomicMax(T *p, CK_V(T) v)
{
    T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (old < v && !__atomic_compare_exchange_n(p, &old, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return old;
}
template <typename T> static inline T atomicMin(T *p, CK_V(T) v)
{
    T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (v < old && !__atomic_compare_exchange_n(p, &old, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return old;
}
/* Reals: a compare-and-swap loop on the bits. */
template <typename T, typename U> static inline T ck_host_atomic_add_real(T *p, T v)
{
    U old = __atomic_load_n((U *)p, __ATOMIC_SEQ_CST), next;
    T f;
    do {
        memcpy(&f, &old, sizeof f);
        f += v;
        memcpy(&next, &f, sizeof f);
    } while (!__atomic_compare_exchange_n((U *)p, &old, next, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
    memcpy(&f, &old, sizeof f);
    return f;
}
static inline float atomicAdd(float *p, float v) { return ck_host_atomic_add_real<float, uint32_t>(p, v); }
static inline double atomicAdd(double *p, double v) { return ck_host_atomic_add_real<double, uint64_t>(p, v); }

#undef CK_V

static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dmul_rn(double a, double b) { return a * b; }


/* The global timer. A block spinning at a barrier reads it on every turn, so it also gives the
 * core away: the machine running the tests may have fewer cores than the grid has blocks. */
static inline unsigned long long ck_host_clock(void)
{
    struct timespec t;
    sched_yield();
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}
#define CK_HOST_CLOCK ck_host_clock
/* A turn of a spin on memory another block or the host writes: gives the core away, so the
 * block it waits for runs (the machine may have fewer cores than the grid has blocks). */
#define CK_HOST_SPIN() sched_yield()

#endif
