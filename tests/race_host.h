/* race_host.h: the stand-in's race detector (included by tests/cuda_host.h, after its blocks).
 *
 * Shadow memory: every 4-byte word that device code reads or writes through the kernels'
 * hooks (K_RACE_R and K_RACE_W, which kernels/hd.h defines to nothing everywhere else) has
 * its last writer and its readers of the current epoch: block, thread, epochs and the place
 * (the hook's function, and its file and line, or the generated line that called it, which
 * tests/ck_host.h's wrappers say through ck_race_site). Two epochs:
 * - a grid epoch per block, advanced when its thread 0 arrives at a grid barrier
 *   (kernels/grid.cuh's k_grid_arrive calls CK_HOST_GRID_ARRIVE). A block only touches memory
 *   between barriers, and no block passes barrier k before every block has arrived at it, so
 *   every block that touches memory at a moment is in the same grid epoch: a word written by
 *   block A and read or written by block B in the same grid epoch is a race, whatever the
 *   interleaving that happened to run;
 * - a block epoch per block, advanced when a barrier that every live thread of the block
 *   waits at completes (__syncthreads and its forms, a named barrier of the whole block): a
 *   word written by one thread and read or written by another of the same block in the same
 *   block epoch is a race.
 * Atomics and the grid barrier's own words are synchronisation and never recorded, nor is a
 * fiber's own stack (its locals). Shared memory (the block's thread-local storage, where
 * `__shared__` puts it, and ck_host_smem) read through K_RACE_RS (the hooks that read slots
 * whose every write is hooked too: the block reduction's, the tiles') before anything wrote it
 * in the launch is a fault too. The generated kernels' own element loads and stores and their
 * scalars' are not hooked (host/gen/cgen.c writes them as plain C): a race between two of those
 * goes unseen; one between such an access and a range function's is seen from the range
 * function's side alone when the other is a write it missed. A fault prints both sides and aborts, as the stand-in's other rules do.
 *
 * On by default; CFX_STANDIN_RACE=0 in the environment turns it off (for timing),
 * CFX_STANDIN_RACE=report says each pair of places once and goes on (a survey),
 * CFX_STANDIN_RACE=quiet says nothing and goes on, and tests/ck_host.h's launcher ends the run
 * with status 9 (test_gen --mutants, where a mutant that races must count as caught and the
 * next mutant run; the stand-in's other rules, a warp operation with a lane that has ended
 * and the like, then stop the run with the same status: cuda_host.h's ck_host_fail); and a test
 * that plants a race to see a wrong answer turns it off around that run (ck_race_enable).
 * Beside the detector, random yields: with CFX_STANDIN_YIELD unset or 1, a block gives the core
 * away at one hook between two of its barriers, a seeded choice (one hook in 16 until it has),
 * so blocks interleave inside phases, not only at barriers.
 *
 * Cost: a page table read without a lock, a spin lock per stripe of pages; a range of more than CK_RACE_SAMPLE words is recorded
 * one word in 8 past its first CK_RACE_SAMPLE (big read-only matrices), a sample that keeps
 * every boundary of a block's share. */
#ifndef CFX_RACE_HOST_H
#define CFX_RACE_HOST_H

/* The replicas each block loads from the arena at a launch's start (ck_block_copy before the
 * block's first barrier) and block 0's stores of them at the launch's end (HALT, a record that
 * ends the launch) were once in the same grid epoch where the launch passed no grid barrier, so
 * a block that started after block 0 had finished loaded the values of the launch's end. This
 * detector found it in 40-odd generated kernels of test_gen; host/gen/cgen.c now puts a grid
 * barrier before those stores (results_after_loads), and the detector records the loads like any
 * other read. */

#include <dlfcn.h>
#include <link.h>

#define CK_RACE_PAGE_WORDS 1024u /* 4 KiB of memory per shadow page */
#define CK_RACE_TABLE (1u << 16)
#define CK_RACE_SAMPLE 16384u
#define CK_RACE_NONE 0xffffu

typedef struct ck_race_word {
    uint32_t gen; /* the launch of the write record (0: none) */
    uint16_t wblock, wthread;
    uint32_t wg, wb, wsite; /* the writer's grid and block epochs, its place */
    uint32_t rgen, rg;      /* the launch and grid epoch of the readers below */
    uint64_t rbytes;        /* the bytes of the word each block read in that grid epoch, 4 bits a block */
    uint16_t rblock, rthread, rother; /* the last reader, and another thread of its block that read
                                         in the same block epoch (CK_RACE_NONE: none) */
    uint8_t wbytes, rlb, rob;         /* the bytes written, read by rthread, read by rother */
    uint32_t rb, rsite, rosite;
} ck_race_word;

typedef struct ck_race_page {
    uintptr_t base; /* address / 4096 + 1; 0: a free slot */
    ck_race_word *w;
} ck_race_page;

typedef struct ck_race_site_t {
    const char *file, *func;
    int line;
} ck_race_site_t;

static pthread_mutex_t ck_race_lock = PTHREAD_MUTEX_INITIALIZER;
static ck_race_page *ck_race_pages; /* CK_RACE_TABLE slots, open addressing */
static unsigned ck_race_npages;
static ck_race_site_t *ck_race_sites;
static unsigned ck_race_nsites, ck_race_capsites;
static uint32_t ck_race_gen; /* the launch: advanced by ck_race_launch */
static int ck_race_on = -1;  /* -1: not read from the environment yet */
static int ck_race_yield = -1;
static unsigned long long ck_race_hooks;  /* for the tests: how many accesses were checked */

/* The place a range function was called from (tests/ck_host.h's wrappers set it around the
 * call; NULL: the hook's own). */
static inline void ck_race_site(const char *file, int line)
{
    ck_host_block *b = ck_host_this_block;
    if (b && b->cur) {
        b->cur->site_file = file;
        b->cur->site_line = line;
    }
}

static int ck_race_enabled(void)
{
    if (ck_race_on < 0) {
        const char *e = getenv("CFX_STANDIN_RACE");
        ck_race_on = e && strcmp(e, "0") == 0        ? 0
                     : e && strcmp(e, "report") == 0 ? 2
                     : e && strcmp(e, "quiet") == 0  ? 3
                                                     : 1;
        const char *y = getenv("CFX_STANDIN_YIELD");
        ck_race_yield = !(y && strcmp(y, "0") == 0);
    }
    return ck_race_on;
}

/* On or off for the launches that follow (a planted race that must give a wrong answer). */
static inline void ck_race_enable(int on)
{
    ck_race_enabled();
    ck_race_on = on;
}

/* A new launch: every record of the last one is forgotten. Called by ck_host_grid_start. */
static void ck_race_launch(void)
{
    pthread_mutex_lock(&ck_race_lock);
    ck_race_gen++;
    if (ck_race_gen == 0)
        ck_race_gen = 1;
    pthread_mutex_unlock(&ck_race_lock);
}

/* A place's number (ck_race_sites): a hash table of CK_RACE_SITES slots, under the lock. */
#define CK_RACE_SITES (1u << 15)
static uint32_t *ck_race_site_slots; /* site number + 1; 0: free */

static uint32_t ck_race_intern(const char *file, int line, const char *func)
{
    pthread_mutex_lock(&ck_race_lock);
    uint32_t id = 0;
    if (!ck_race_site_slots)
        ck_race_site_slots = (uint32_t *)calloc(CK_RACE_SITES, sizeof *ck_race_site_slots);
    if (ck_race_site_slots) {
        uint64_t k = ((uint64_t)(uintptr_t)file * 31 + (uint64_t)line) * 0x9e3779b97f4a7c15ull ^ (uintptr_t)func;
        unsigned h = (unsigned)((k * 0xbf58476d1ce4e5b9ull) >> 40) & (CK_RACE_SITES - 1);
        for (;; h = (h + 1) & (CK_RACE_SITES - 1)) {
            uint32_t v = ck_race_site_slots[h];
            if (v == 0) {
                if (ck_race_nsites >= CK_RACE_SITES / 2)
                    break; /* full: number 0 */
                if (ck_race_nsites == ck_race_capsites) {
                    unsigned cap = ck_race_capsites ? 2 * ck_race_capsites : 256;
                    ck_race_site_t *n = (ck_race_site_t *)realloc(ck_race_sites, cap * sizeof *n);
                    if (!n)
                        break;
                    ck_race_sites = n;
                    ck_race_capsites = cap;
                }
                ck_race_sites[ck_race_nsites].file = file;
                ck_race_sites[ck_race_nsites].func = func;
                ck_race_sites[ck_race_nsites].line = line;
                id = ck_race_nsites++;
                ck_race_site_slots[h] = id + 1;
                break;
            }
            const ck_race_site_t *q = &ck_race_sites[v - 1];
            if (q->line == line && q->file == file && q->func == func) {
                id = v - 1;
                break;
            }
        }
    }
    pthread_mutex_unlock(&ck_race_lock);
    return id;
}

/* The shadow of the word at addr: the table is read without the lock (a slot's key is
 * published after its page), and grown under it. */
static ck_race_word *ck_race_shadow(uintptr_t addr)
{
    static thread_local uintptr_t last_key;
    static thread_local ck_race_word *last;
    const uintptr_t key = (addr >> 12) + 1;
    if (key == last_key)
        return &last[(addr & 4095u) >> 2];
    ck_race_page *pages = __atomic_load_n(&ck_race_pages, __ATOMIC_ACQUIRE);
    if (!pages) {
        pthread_mutex_lock(&ck_race_lock);
        if (!ck_race_pages)
            __atomic_store_n(&ck_race_pages, (ck_race_page *)calloc(CK_RACE_TABLE, sizeof *ck_race_pages),
                             __ATOMIC_RELEASE);
        pages = ck_race_pages;
        pthread_mutex_unlock(&ck_race_lock);
        if (!pages)
            return NULL;
    }
    const unsigned h0 = (unsigned)((key * 0x9e3779b97f4a7c15ull) >> 48) & (CK_RACE_TABLE - 1);
    for (int locked = 0; locked < 2; locked++) {
        if (locked)
            pthread_mutex_lock(&ck_race_lock);
        for (unsigned h = h0;; h = (h + 1) & (CK_RACE_TABLE - 1)) {
            ck_race_page *p = &pages[h];
            const uintptr_t base = __atomic_load_n(&p->base, __ATOMIC_ACQUIRE);
            if (base == key) {
                if (locked)
                    pthread_mutex_unlock(&ck_race_lock);
                last_key = key;
                last = p->w;
                return &p->w[(addr & 4095u) >> 2];
            }
            if (base != 0)
                continue;
            if (!locked)
                break; /* not there: again under the lock, which may add it */
            ck_race_word *w = NULL;
            if (ck_race_npages < CK_RACE_TABLE / 2)
                w = (ck_race_word *)calloc(CK_RACE_PAGE_WORDS, sizeof *w);
            if (w) {
                p->w = w;
                __atomic_store_n(&p->base, key, __ATOMIC_RELEASE);
                ck_race_npages++;
                last_key = key;
                last = w;
            }
            pthread_mutex_unlock(&ck_race_lock);
            return w ? &w[(addr & 4095u) >> 2] : NULL; /* full: the rest goes unchecked */
        }
    }
    return NULL;
}

/* The words' records: a lock per stripe of pages (a spin that gives the core away). */
#define CK_RACE_STRIPES 64u
static int ck_race_stripe[CK_RACE_STRIPES];
static inline unsigned ck_race_stripe_of(uintptr_t addr)
{
    return (unsigned)((addr >> 12) * 0x9e3779b97f4a7c15ull >> 58) & (CK_RACE_STRIPES - 1);
}
static inline void ck_race_stripe_lock(unsigned s)
{
    while (__atomic_exchange_n(&ck_race_stripe[s], 1, __ATOMIC_ACQUIRE))
        sched_yield();
}
static inline void ck_race_stripe_unlock(unsigned s)
{
    __atomic_store_n(&ck_race_stripe[s], 0, __ATOMIC_RELEASE);
}

static const char *ck_race_space(const ck_host_block *b, uintptr_t a)
{
    return a >= b->tls_lo && a < b->tls_hi ? "shared" : a >= b->smem_lo && a < b->smem_hi ? "shared (dynamic)"
                                                                                           : "global";
}

static void ck_race_side(const char *what, unsigned block, unsigned thread, uint32_t g, uint32_t be, uint32_t site)
{
    const ck_race_site_t *s = site < ck_race_nsites ? &ck_race_sites[site] : NULL;
    fprintf(stderr, "  %s: block %u, thread %u, grid epoch %u, block epoch %u, in %s at %s:%d\n", what, block,
            thread, g, be, s && s->func ? s->func : "?", s && s->file ? s->file : "?", s ? s->line : 0);
}

static void ck_race_fault(const char *kind, const ck_host_block *b, uintptr_t a, int write, unsigned thread,
                          uint32_t site, const ck_race_word *w, int other_is_write, unsigned oblock, unsigned othread,
                          uint32_t og, uint32_t ob, uint32_t osite)
{
    __atomic_fetch_add(&ck_host_faults, 1, __ATOMIC_SEQ_CST); /* cuda_host.h's count */
    if (ck_race_on == 3)
        return; /* quiet: the launcher turns the count into the run's status */
    pthread_mutex_lock(&ck_race_lock);
    if (ck_race_on == 2) { /* report each pair of places once, and go on */
        static uint64_t seen[4096];
        static unsigned nseen;
        const uint64_t key = (uint64_t)site << 32 | (w ? osite : 0xffffffffu);
        for (unsigned i = 0; i < nseen; i++)
            if (seen[i] == key) {
                pthread_mutex_unlock(&ck_race_lock);
                return;
            }
        if (nseen < 4096)
            seen[nseen++] = key;
    }
    fprintf(stderr, "cuda_host.h: race detector: %s on %s memory at %p\n", kind, ck_race_space(b, a), (void *)a);
    ck_race_side(write ? "this write" : "this read", blockIdx.x, thread, b->gepoch, b->bepoch, site);
    if (w)
        ck_race_side(other_is_write ? "the other side, a write" : "the other side, a read", oblock, othread, og, ob,
                     osite);
    fprintf(stderr, "  (grid epochs advance at each grid barrier, block epochs at each barrier of the whole "
                    "block; CFX_STANDIN_RACE=0 turns the detector off)\n");
    if (ck_race_on != 2)
        abort();
    pthread_mutex_unlock(&ck_race_lock);
}

/* Records the access of `bytes` (a mask of the word's 4) of one word by the running thread of
 * block b (the lock is held). */
static void ck_race_word_access(ck_host_block *b, uintptr_t a, unsigned bytes, int write, int strict,
                                uint32_t site)
{
    ck_race_word *w = ck_race_shadow(a);
    if (!w)
        return;
    const unsigned blk = blockIdx.x, t = b->cur->idx.x;
    const uint32_t g = b->gepoch, be = b->bepoch, gen = ck_race_gen;
    if (w->gen == gen && (w->wbytes & bytes)) {
        if (w->wblock != blk && w->wg == g)
            ck_race_fault(write ? "write after another block's write in the same grid epoch"
                                : "read of another block's write in the same grid epoch",
                          b, a, write, t, site, w, 1, w->wblock, w->wthread, w->wg, w->wb, w->wsite);
        if (w->wblock == blk && w->wthread != t && w->wb == be)
            ck_race_fault(write ? "write after another thread's write with no barrier between"
                                : "read of another thread's write with no barrier between",
                          b, a, write, t, site, w, 1, w->wblock, w->wthread, w->wg, w->wb, w->wsite);
    } else if (w->gen != gen && strict &&
               ((a >= b->tls_lo && a < b->tls_hi) || (a >= b->smem_lo && a < b->smem_hi))) {
        ck_race_fault("read of shared memory that nothing wrote in this launch", b, a, 0, t, site, NULL, 0, 0, 0, 0,
                      0, 0);
    }
    const int readers = w->rgen == gen && w->rg == g;
    if (write && readers) {
        uint64_t others = w->rbytes & ~((uint64_t)15 << (4 * blk));
        for (unsigned ob = 0; ob < CK_HOST_MAX_BLOCKS && others; ob++)
            if ((others >> (4 * ob)) & bytes) {
                const int known = w->rblock == ob;
                ck_race_fault("write after another block's read in the same grid epoch", b, a, 1, t, site, w, 0, ob,
                              known ? w->rthread : CK_RACE_NONE, g, known ? w->rb : 0,
                              known ? w->rsite : ck_race_intern("(an earlier read by that block, its place not kept)", 0, "?"));
            }
        if (w->rblock == blk && w->rb == be) {
            if (w->rthread != t && (w->rlb & bytes))
                ck_race_fault("write after another thread's read with no barrier between", b, a, 1, t, site, w, 0,
                              blk, w->rthread, g, be, w->rsite);
            if (w->rother != CK_RACE_NONE && w->rother != t && (w->rob & bytes))
                ck_race_fault("write after another thread's read with no barrier between", b, a, 1, t, site, w, 0,
                              blk, w->rother, g, be, w->rosite);
        }
    }
    if (write) {
        if (!(w->gen == gen && w->wblock == blk && w->wthread == t && w->wb == be))
            w->wbytes = 0;
        w->gen = gen;
        w->wblock = (uint16_t)blk;
        w->wthread = (uint16_t)t;
        w->wg = g;
        w->wb = be;
        w->wsite = site;
        w->wbytes |= (uint8_t)bytes;
    } else {
        if (!readers) {
            w->rgen = gen;
            w->rg = g;
            w->rbytes = 0;
            w->rblock = CK_RACE_NONE;
        }
        w->rbytes |= (uint64_t)bytes << (4 * blk);
        if (w->rblock == blk && w->rb == be) {
            if (w->rthread != t) {
                w->rother = w->rthread;
                w->rob = w->rlb;
                w->rosite = w->rsite;
                w->rlb = 0;
            }
        } else {
            w->rblock = (uint16_t)blk;
            w->rb = be;
            w->rother = CK_RACE_NONE;
            w->rlb = 0;
        }
        w->rthread = (uint16_t)t;
        w->rlb |= (uint8_t)bytes;
        w->rsite = site;
    }
}

/* The hook: bytes [p, p + n) read (mode 0, 2 where it must have been written) or written
 * (mode 1) by the running CUDA thread, `count` times `stride` bytes apart. */
static __attribute__((noinline)) void ck_race_access_n(const void *p, int64_t n, int mode, int64_t count,
                                                       int64_t stride, const char *file, int line, const char *func)
{
    const int write = mode == 1, strict = mode == 2;
    ck_host_block *b = ck_host_this_block;
    if (!b || !b->cur || n <= 0 || !p || !ck_race_enabled())
        return;
    const uintptr_t a = (uintptr_t)p;
    const ck_host_fiber *f = b->cur;
    if (count <= 0 || (a >= (uintptr_t)f->stack && a < (uintptr_t)f->stack + CK_HOST_STACK))
        return; /* the thread's own locals */
    if (ck_race_yield && b->yielded != b->bepoch + 1 && (ck_host_next(&b->rng) & 15u) == 0) {
        b->yielded = b->bepoch + 1; /* at most one yield between two barriers of the block */
        sched_yield();
    }
    __atomic_fetch_add(&ck_race_hooks, 1, __ATOMIC_RELAXED);
    /* the place's number: the fiber's last one when it is the same place */
    static thread_local const char *site_file, *site_func;
    static thread_local int site_line = -1;
    static thread_local uint32_t site_id;
    const char *sf = f->site_file ? f->site_file : file;
    const int sl = f->site_file ? f->site_line : line;
    if (sf != site_file || sl != site_line || func != site_func) {
        site_id = ck_race_intern(sf, sl, func);
        site_file = sf;
        site_line = sl;
        site_func = func;
    }
    const uint32_t site = site_id;
    unsigned stripe = CK_RACE_STRIPES;
    for (int64_t c = 0; c < count; c++) {
        const uintptr_t at = a + (uintptr_t)(c * stride);
        const uintptr_t end = at + (uintptr_t)n, lo = at & ~(uintptr_t)3, hi = (end + 3) & ~(uintptr_t)3;
        const uintptr_t words = (hi - lo) / 4;
        for (uintptr_t i = 0; i < words; i++) {
            if (i >= CK_RACE_SAMPLE && i + 1 < words && (i & 7u) != 0)
                continue;
            const uintptr_t wa = lo + 4 * i;
            unsigned bytes = 15u;
            if (wa < at)
                bytes &= 15u << (at - wa);
            if (wa + 4 > end)
                bytes &= 15u >> (wa + 4 - end);
            const unsigned st = ck_race_stripe_of(wa);
            if (st != stripe) {
                if (stripe < CK_RACE_STRIPES)
                    ck_race_stripe_unlock(stripe);
                ck_race_stripe_lock(st);
                stripe = st;
            }
            ck_race_word_access(b, wa, bytes, write, strict, site);
        }
    }
    if (stripe < CK_RACE_STRIPES)
        ck_race_stripe_unlock(stripe);
}

/* Where the module's thread-local storage (the block's `__shared__` variables) lies in the
 * calling host thread. */
static int ck_race_tls_cb(struct dl_phdr_info *info, size_t, void *arg)
{
    uintptr_t *r = (uintptr_t *)arg;
    const uintptr_t fn = r[0];
    int mine = 0;
    size_t tls = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && fn >= info->dlpi_addr + ph->p_vaddr &&
            fn < info->dlpi_addr + ph->p_vaddr + ph->p_memsz)
            mine = 1;
        if (ph->p_type == PT_TLS)
            tls = ph->p_memsz;
    }
    if (!mine)
        return 0;
    if (info->dlpi_tls_data && tls > 0) {
        r[1] = (uintptr_t)info->dlpi_tls_data;
        r[2] = r[1] + tls;
    }
    return 1;
}

static void ck_race_block_start(ck_host_block *b)
{
    uintptr_t r[3] = {(uintptr_t)&ck_race_access_n, 0, 0};
    dl_iterate_phdr(ck_race_tls_cb, r);
    b->tls_lo = r[1];
    b->tls_hi = r[2];
}

#define K_RACE_R(p, n) ck_race_access_n((p), (int64_t)(n), 0, 1, 0, __FILE__, __LINE__, __func__)
#define K_RACE_W(p, n) ck_race_access_n((p), (int64_t)(n), 1, 1, 0, __FILE__, __LINE__, __func__)
#define K_RACE_RS(p, n) ck_race_access_n((p), (int64_t)(n), 2, 1, 0, __FILE__, __LINE__, __func__)
#define K_RACE_RS_STRIDED(p, count, stride, size)                                                 \
    ck_race_access_n((p), (int64_t)(size), 2, (int64_t)(count), (int64_t)(stride), __FILE__, __LINE__, __func__)
#define K_RACE_R_STRIDED(p, count, stride, size)                                                  \
    ck_race_access_n((p), (int64_t)(size), 0, (int64_t)(count), (int64_t)(stride), __FILE__, __LINE__, __func__)
/* a grid barrier's arrival by thread 0 of the running block (kernels/grid.cuh) */
#define CK_HOST_GRID_ARRIVE() (ck_host_this_block ? (void)ck_host_this_block->gepoch++ : (void)0)

#endif
