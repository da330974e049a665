/* test_microops.c: the micro-ops of one-block loops (device/microops.h) on the CPU.
 *
 * - Every example graph and a few hundred generated programs (tests/gen_programs.h) are
 *   translated, and every translation passes mop_check (the checks the dispatch loop trusts).
 * - Golden listings: the micro-ops of graphs/counter.cfx and graphs/if_in_while.cfx, written
 *   out by hand from their records (cfx dump): the compare, branch and TICK fused, the back
 *   edge a copy of the test, the if's JUMP kept, the entries.
 * - Regions run by mop_run alone, one thread as on the device, against answers computed here
 *   in plain C by the language's rules: results, the stopping status, record and details
 *   (index, divide, assert, limit), the iteration count, the prints in order, how often the
 *   caller's clock is asked for.
 * - The checks can fail: mutants of a correct translation (a flipped compare, a constant
 *   changed, a TICK left out) give answers the by-hand check rejects, and mop_check rejects
 *   mutants that the dispatch loop must never see.
 * Whole programs, the interpreter and the micro-ops together on threads standing in for
 * blocks, against the cpu executor, are test_sched's (its replica enters the micro-ops where
 * the device does).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/front/compile.h"
#include "gen_programs.h"
#include "device/microops.h"
#include "host/program/program.h"
#include "device/scheduler.h"
#include "testutil.h"

/* ==== compiling, planning, translating ===================================================== */

typedef struct translated {
    compiled_module m;
    const cfx_prog *p;
    sched_plan plan;
    mop_prog mp;
    int ok; /* compiled, planned and translated */
} translated;

/* The first graph of src, its plan and its micro-ops. */
static int translate_source(const char *file, const char *src, translated *t)
{
    char *diag = NULL;
    char err[256];
    memset(t, 0, sizeof *t);
    if (!CHECK_INT(compile_source(NULL, file, src, strlen(src), &t->m, &diag), 0)) {
        fprintf(stderr, "%s", diag ? diag : "");
        free(diag);
        return 0;
    }
    free(diag);
    t->p = t->m.graphs[0].prog;
    if (!CHECK_INT(sched_plan_build(t->p, &t->plan, err, sizeof err), 0))
        return 0;
    if (!CHECK_INT(mop_translate(t->p, &t->plan, &t->mp, err, sizeof err), 0)) {
        fprintf(stderr, "  %s: %s\n", file, err);
        return 0;
    }
    t->ok = 1;
    return 1;
}

static void translated_free(translated *t)
{
    mop_prog_free(&t->mp);
    sched_plan_free(&t->plan);
    if (t->p)
        compiled_module_free(&t->m);
}

static int32_t slot_named(const cfx_prog *p, const char *name)
{
    for (int32_t s = 0; s < p->nslots; s++)
        if (p->slots[s].name >= 0 && strcmp(p->strings + p->slots[s].name, name) == 0)
            return s;
    return -1;
}

/* The first record of a kind at or after `from`. */
static int32_t record_of(const cfx_prog *p, int kind, int32_t from)
{
    for (int32_t r = from; r < p->nrecords; r++)
        if (p->records[r].kind == kind)
            return r;
    return -1;
}

/* The region's entry record (the first one). */
static int32_t region_head(const translated *t)
{
    for (int32_t r = 0; r < t->p->nrecords; r++)
        if (t->plan.flags[r] & SCHED_F_REGION_ENTRY)
            return r;
    return -1;
}

/* ==== every graph and generated program translates ======================================== */

typedef struct totals {
    int programs, regions, covered, interp, fused, rotated, code;
} totals;

static void translate_all_of(const char *file, const char *src, size_t len, totals *tt)
{
    compiled_module m;
    char *diag = NULL;
    if (compile_source(NULL, file, src, len, &m, &diag) != 0) {
        free(diag); /* graphs that must not compile (diag examples) */
        return;
    }
    for (int g = 0; g < m.ngraphs; g++) {
        const cfx_prog *p = m.graphs[g].prog;
        sched_plan plan;
        mop_prog mp;
        char err[256];
        if (!CHECK_INT(sched_plan_build(p, &plan, err, sizeof err), 0))
            continue;
        tt->programs++;
        if (plan.nregions > 0) {
            if (CHECK_INT(mop_translate(p, &plan, &mp, err, sizeof err), 0)) {
                CHECK_INT(mop_check(p, &plan, &mp, err, sizeof err), 0);
                CHECK_INT(mp.nregions, plan.nregions); /* these programs are small: all fit */
                tt->regions += mp.nregions;
                tt->covered += mp.ncovered;
                tt->interp += mp.ninterp;
                tt->fused += mp.nfused;
                tt->rotated += mp.nrotated;
                tt->code += mp.ncode;
                mop_prog_free(&mp);
            } else {
                fprintf(stderr, "  %s, graph %s: %s\n", file, p->name, err);
            }
        } else {
            CHECK(mop_translate(p, &plan, &mp, err, sizeof err) != 0); /* nothing to translate */
        }
        sched_plan_free(&plan);
    }
    compiled_module_free(&m);
}

static void translate_graph(const char *path, const char *text, long len, void *user)
{
    translate_all_of(path, text, (size_t)len, (totals *)user);
}

static void test_translate_all(void)
{
    totals tg, tr;
    memset(&tg, 0, sizeof tg);
    memset(&tr, 0, sizeof tr);
    test_each_graph(translate_graph, &tg);
    gen_prog *g = (gen_prog *)malloc(sizeof *g);
    for (uint64_t seed = 1; seed <= 400; seed++) {
        gen_make(g, seed);
        char *text = gen_text(g);
        translate_all_of("generated.cfx", text, strlen(text), &tr);
        free(text);
    }
    free(g);
    printf("test_microops: graphs/: %d graphs, %d one-block loops, %d records as micro-ops, %d left to the "
           "interpreter, %d compares fused with their branch, %d back edges rotated, %d micro-ops\n",
           tg.programs, tg.regions, tg.covered, tg.interp, tg.fused, tg.rotated, tg.code);
    printf("test_microops: generated: %d programs, %d one-block loops, %d records as micro-ops, %d left to the "
           "interpreter, %d fused, %d rotated, %d micro-ops\n",
           tr.programs, tr.regions, tr.covered, tr.interp, tr.fused, tr.rotated, tr.code);
    CHECK(tg.programs >= 30 && tg.regions >= 15);
    CHECK(tr.programs >= 390 && tr.regions >= 200);
    CHECK(tg.fused > 0 && tg.rotated > 0 && tr.fused > 0 && tr.rotated > 0);
    CHECK(tr.covered > tr.interp); /* the generated loops are mostly scalar */
}

/* ==== golden listings ====================================================================== */

/* "name->t@pc" per micro-op (->t only where it has a target), space separated. */
static void listing(const mop_prog *mp, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (int32_t i = 0; i < mp->ncode && n < cap; i++) {
        const mop *m = &mp->code[i];
        if (mop_roles[m->code][4] == 't')
            n += (size_t)snprintf(out + n, cap - n, "%s%s->%d@%d", i ? " " : "", mop_names[m->code], (int)m->t,
                                  (int)m->pc);
        else
            n += (size_t)snprintf(out + n, cap - n, "%s%s@%d", i ? " " : "", mop_names[m->code], (int)m->pc);
    }
}

static void test_golden(void)
{
    translated t;
    char got[2048];
    long len = 0;
    char *text = test_read_file(CFX_SOURCE_DIR "/graphs/counter.cfx", &len);
    /* counter: 2 lt, 3 JUMP_FALSE ->9, 4 TICK, 5 mod, 6 add, 7 add, 8 JUMP ->2; exit 9. The test
     * and the TICK are one micro-op; the back edge a copy of the test that goes back to the
     * body (micro-op 1) and falls out to the EXIT. */
    if (CHECK(text != NULL) && translate_source("counter.cfx", text, &t)) {
        listing(&t.mp, got, sizeof got);
        CHECK_STR(got, "lt_i32_jf_tick->5@4 mod_i32@5 add_i32@6 add_i32@7 lt_i32_jt_tick->1@4 EXIT@9");
        const int32_t want[10] = {-1, -1, 0, -1, -1, 1, 2, 3, 4, -1};
        for (int r = 0; r < 10 && r < t.p->nrecords; r++)
            CHECK_INT(t.mp.entry[r], want[r]);
        CHECK_INT(t.mp.nfused, 2);
        CHECK_INT(t.mp.nrotated, 1);
        CHECK_INT(t.mp.ninterp, 0);
    }
    translated_free(&t);
    free(text);

    /* if_in_while: 1 lt, 2 JUMP_FALSE ->13, 3 TICK, 4 add, 5 lt, 6 JUMP_FALSE ->9, 7 add,
     * 8 JUMP ->10, 9 add, 10 add, 11 add, 12 JUMP ->1; exit 13. The if's test fuses with its
     * branch (no TICK after it); the then-arm's JUMP over the else-arm stays. */
    text = test_read_file(CFX_SOURCE_DIR "/graphs/if_in_while.cfx", &len);
    if (CHECK(text != NULL) && translate_source("if_in_while.cfx", text, &t)) {
        listing(&t.mp, got, sizeof got);
        CHECK_STR(got, "lt_i32_jf_tick->9@3 add_i32@4 lt_i32_jf->5@6 add_i32@7 JUMP->6@8 add_i32@9 add_i32@10 "
                       "add_i32@11 lt_i32_jt_tick->1@3 EXIT@13");
        const int32_t want[14] = {-1, 0, -1, -1, 1, 2, -1, 3, 4, 5, 6, 7, 8, -1};
        for (int r = 0; r < 14 && r < t.p->nrecords; r++)
            CHECK_INT(t.mp.entry[r], want[r]);
    }
    translated_free(&t);
    free(text);
}

/* ==== regions run by mop_run alone ========================================================= */

typedef struct region_run {
    int out;            /* MOP_OUT_EXIT or MOP_OUT_STOP */
    mop_state st;
    int clock_asks;     /* MOP_OUT_TICK returns */
    int32_t prints[64]; /* printed i32 values, in order */
    int32_t print_pc[64];
    int nprints;
    uint8_t *file;      /* the scalar file, then the micro-ops */
} region_run;

/* Thread 0 of block 0 at the region's entry: the private copies loaded from the arena (as
 * at a launch), the image after them, then mop_run until the region is left, serving
 * prints and clock asks (no poll here: nothing cancels). */
static void run_region(const translated *t, const mop_prog *mp, uint8_t *arena, int64_t max_iters,
                       region_run *rr)
{
    const cfx_prog *p = t->p;
    memset(rr, 0, sizeof *rr);
    rr->file = (uint8_t *)calloc((size_t)mp->file_bytes + (size_t)mp->image_bytes - (size_t)mp->pool_bytes + 16, 1);
    for (int32_t s = 0; s < p->nslots; s++)
        if (t->plan.priv_offset[s] >= 0)
            memcpy(rr->file + t->plan.priv_offset[s], arena + p->slots[s].offset, (size_t)slot_bytes(&p->slots[s]));
    memcpy(rr->file + t->plan.priv_bytes, mp->image, (size_t)mp->image_bytes);
    rr->st.at = mp->entry[region_head(t)];
    rr->st.clock_left = 1;
    rr->st.max_iters = max_iters;
    for (int guard = 0; guard < 1000000; guard++) {
        rr->out = mop_run((const mop *)(rr->file + mp->code_offset), rr->file, arena, &rr->st);
        if (rr->out == MOP_OUT_TICK) {
            rr->clock_asks++;
        } else if (rr->out == MOP_OUT_PRINT) {
            const cfx_record *r = &p->records[rr->st.pc];
            if (rr->nprints < 64) {
                memcpy(&rr->prints[rr->nprints], rr->file + t->plan.priv_offset[r->a], 4);
                rr->print_pc[rr->nprints] = rr->st.pc;
            }
            rr->nprints++;
        } else {
            return;
        }
    }
    CHECK(!"the region did not end");
}

static int32_t file_i32(const translated *t, const region_run *rr, const char *name)
{
    int32_t v = 0, s = slot_named(t->p, name);
    if (CHECK(s >= 0 && t->plan.priv_offset[s] >= 0))
        memcpy(&v, rr->file + t->plan.priv_offset[s], 4);
    return v;
}

static void set_i32(const translated *t, uint8_t *arena, const char *name, int32_t v)
{
    int32_t s = slot_named(t->p, name);
    if (CHECK(s >= 0))
        memcpy(arena + t->p->slots[s].offset, &v, 4);
}

static uint8_t *fresh_arena(const cfx_prog *p)
{
    uint8_t *arena = (uint8_t *)calloc((size_t)p->arena_bytes + 16, 1);
    if (p->const_bytes > 0)
        memcpy(arena, p->consts, (size_t)p->const_bytes);
    return arena;
}

/* counter with n (the records before the loop set i = s = 0: the arena's zeros). Returns 1
 * when the run matches the language's answer: s = sum of i % 7, n iterations, ok; or, with
 * a budget below n, limit at the TICK after `budget` iterations. */
static int counter_matches(const translated *t, const mop_prog *mp, int32_t n, int64_t budget, int *clock_asks)
{
    uint8_t *arena = fresh_arena(t->p);
    region_run rr;
    int32_t s = 0;
    int64_t want_iters = budget > 0 && budget < n ? budget : n;
    for (int32_t i = 0; i < want_iters; i++)
        s += i % 7;
    set_i32(t, arena, "n", n);
    run_region(t, mp, arena, budget, &rr);
    int ok = rr.st.iters == (uint64_t)want_iters;
    if (budget > 0 && budget < n)
        ok = ok && rr.out == MOP_OUT_STOP && rr.st.status == CFX_STOP_LIMIT &&
             rr.st.pc == record_of(t->p, REC_TICK, 0) && rr.st.detail[0] == budget;
    else
        ok = ok && rr.out == MOP_OUT_EXIT && rr.st.pc == t->plan.region_exit[region_head(t)] &&
             file_i32(t, &rr, "s") == s && file_i32(t, &rr, "i") == n;
    if (clock_asks)
        *clock_asks = rr.clock_asks;
    free(rr.file);
    free(arena);
    return ok;
}

/* Guards, rows, a switch and prints in one loop, every record of it a micro-op. */
static const char guards_src[] =
    "graph guards(n: i32, d: i32, v: i32[5], big: i32) -> (s: i32, w: i32[5]) {\n"
    "  s = 0\n  w = v\n  i = 0\n"
    "  while i < n {\n"
    "    s = s + v[i]\n"
    "    s = s + 100 // (d - i)\n"
    "    assert(s < big, \"too big\")\n"
    "    w[i] = s\n"
    "    switch i % 3 {\n"
    "      case 0 { s = s + 1 }\n"
    "      case 1 { s = s - 1 }\n"
    "      default { print(s, \"s\") }\n"
    "    }\n"
    "    i = i + 1\n"
    "  }\n}\n";

/* The language's answer for guards, in plain C. */
typedef struct guards_answer {
    int status;
    int kind; /* the kind of the record that stops it (0: none) */
    int64_t d0, d1, iters;
    int32_t s, w[5], prints[64];
    int nprints;
} guards_answer;

static void guards_expect(int32_t n, int32_t d, const int32_t v[5], int32_t big, int64_t budget, guards_answer *a)
{
    memset(a, 0, sizeof *a);
    memcpy(a->w, v, sizeof a->w);
    a->status = CFX_OK;
    for (int32_t i = 0; i < n; i++) {
        if (budget > 0 && a->iters == budget) {
            a->status = CFX_STOP_LIMIT, a->kind = REC_TICK, a->d0 = budget;
            return;
        }
        a->iters++;
        if (i < -5 || i >= 5) {
            a->status = CFX_STOP_INDEX, a->kind = REC_CHECK_INDEX, a->d0 = i, a->d1 = 5;
            return;
        }
        a->s += v[i < 0 ? i + 5 : i];
        if (d - i == 0) {
            a->status = CFX_STOP_DIVIDE, a->kind = REC_CHECK_DIVIDE;
            return;
        }
        int32_t q = 100 / (d - i); /* Python's floor division */
        a->s += q * (d - i) != 100 && (d - i < 0) ? q - 1 : q;
        if (!(a->s < big)) {
            a->status = CFX_STOP_ASSERT, a->kind = REC_ASSERT;
            return;
        }
        a->w[i] = a->s;
        if (i % 3 == 0)
            a->s += 1;
        else if (i % 3 == 1)
            a->s -= 1;
        else
            a->prints[a->nprints++] = a->s;
    }
}

static void test_guards(void)
{
    translated t;
    if (!translate_source("guards.cfx", guards_src, &t)) {
        translated_free(&t);
        return;
    }
    CHECK_INT(t.plan.nregions, 1);
    CHECK_INT(t.mp.ninterp, 0); /* every record of the loop is a micro-op */
    const int32_t v[5] = {3, -4, 7, 1, 12};
    const struct {
        int32_t n, d, big;
        int64_t budget;
    } cases[] = {
        {5, 9, 1000, 0},  /* ok, with prints */
        {0, 9, 1000, 0},  /* no iteration */
        {7, 9, 1000, 0},  /* v[5]: index 5 of 5 rows */
        {5, 3, 1000, 0},  /* 100 // (3 - 3) */
        {5, 5, 100000, 0}, /* 100 // (5 - 4) after 100 // (5 - 3); no divisor below 0 here */
        {5, 9, 40, 0},    /* assert */
        {5, 9, 1000, 3},  /* limit at the fourth TICK */
        {5, 9, 1000, 5},  /* a budget of exactly the iterations: ok */
        {40, 60, 100000, 0}, /* index again, after prints */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint8_t *arena = fresh_arena(t.p);
        guards_answer want;
        region_run rr;
        int32_t w = slot_named(t.p, "w");
        guards_expect(cases[k].n, cases[k].d, v, cases[k].big, cases[k].budget, &want);
        set_i32(&t, arena, "n", cases[k].n);
        set_i32(&t, arena, "d", cases[k].d);
        set_i32(&t, arena, "big", cases[k].big);
        memcpy(arena + t.p->slots[slot_named(t.p, "v")].offset, v, sizeof v);
        memcpy(arena + t.p->slots[w].offset, v, sizeof v); /* w = v, before the loop */
        run_region(&t, &t.mp, arena, cases[k].budget, &rr);
        int bad = 0;
        bad |= !CHECK_INT(rr.st.iters, want.iters);
        bad |= !CHECK_INT(rr.nprints, want.nprints);
        for (int i = 0; i < want.nprints && i < rr.nprints; i++) {
            bad |= !CHECK_INT(rr.prints[i], want.prints[i]);
            bad |= !CHECK_INT(t.p->records[rr.print_pc[i]].kind, REC_PRINT);
        }
        if (want.status == CFX_OK) {
            bad |= !CHECK_INT(rr.out, MOP_OUT_EXIT);
            bad |= !CHECK_INT(rr.st.pc, t.plan.region_exit[region_head(&t)]);
            bad |= !CHECK_INT(file_i32(&t, &rr, "s"), want.s);
            bad |= !CHECK(memcmp(arena + t.p->slots[w].offset, want.w, sizeof want.w) == 0);
        } else {
            bad |= !CHECK_INT(rr.out, MOP_OUT_STOP);
            bad |= !CHECK_INT(rr.st.status, want.status);
            bad |= !CHECK_INT(rr.st.pc, record_of(t.p, want.kind, region_head(&t)));
            bad |= !CHECK_INT(rr.st.detail[0], want.d0);
            bad |= !CHECK_INT(rr.st.detail[1], want.d1);
        }
        if (bad)
            fprintf(stderr, "  guards case %d\n", (int)k);
        free(rr.file);
        free(arena);
    }
    translated_free(&t);
}

static void test_counter_runs(void)
{
    translated t;
    long len = 0;
    char *text = test_read_file(CFX_SOURCE_DIR "/graphs/counter.cfx", &len);
    int asks = 0;
    if (CHECK(text != NULL) && translate_source("counter.cfx", text, &t)) {
        CHECK(counter_matches(&t, &t.mp, 100, 0, &asks));
        /* the clock is asked for at the first TICK, then every MOP_CLOCK_TICKS-th */
        CHECK_INT(asks, (100 + MOP_CLOCK_TICKS - 1) / MOP_CLOCK_TICKS);
        CHECK(counter_matches(&t, &t.mp, 0, 0, NULL));
        CHECK(counter_matches(&t, &t.mp, 100, 10, NULL));
        CHECK(counter_matches(&t, &t.mp, 100, 33, NULL)); /* the budget ends at a clock ask */
        CHECK(counter_matches(&t, &t.mp, 100, 100, NULL));
        CHECK(counter_matches(&t, &t.mp, 100000, 0, NULL));

        /* mutants the by-hand answer rejects (each still ends: its loop keeps its TICK) */
        mop *code = (mop *)(t.mp.image + t.mp.pool_bytes);
        for (int k = 0; k < 3; k++) {
            const mop keep = code[4];
            uint8_t pool0[8];
            memcpy(pool0, t.mp.image, 8);
            if (k == 0)
                code[4].code = MOP_le_i32_jt_tick; /* the back edge's compare flipped */
            else if (k == 1)
                code[4].pc = 5; /* its TICK's record: a budget stop names the wrong one */
            else
                t.mp.image[0] ^= 1; /* the pool's first constant, the 7 of i % 7, changed */
            CHECK(!(counter_matches(&t, &t.mp, 100, 0, NULL) && counter_matches(&t, &t.mp, 100, 10, NULL)));
            code[4] = keep;
            memcpy(t.mp.image, pool0, 8);
        }
        CHECK(counter_matches(&t, &t.mp, 100, 0, NULL)); /* and back */
    }
    translated_free(&t);
    free(text);
}

/* mop_check rejects what the dispatch loop must never see: each mutant of a correct
 * translation of guards. */
static void test_check_rejects(void)
{
    translated t;
    char err[256];
    if (!translate_source("guards.cfx", guards_src, &t)) {
        translated_free(&t);
        return;
    }
    CHECK_INT(mop_check(t.p, &t.plan, &t.mp, err, sizeof err), 0);
    for (int k = 0; k < 7; k++) {
        mop_prog mp;
        if (!CHECK_INT(mop_translate(t.p, &t.plan, &mp, err, sizeof err), 0))
            break;
        mop *code = (mop *)(mp.image + mp.pool_bytes);
        int32_t sw = -1, row = -1, file_op = -1, jump = -1;
        for (int32_t i = 0; i < mp.ncode; i++) {
            const char *roles = mop_roles[code[i].code];
            sw = code[i].code == MOP_SWITCH && sw < 0 ? i : sw;
            row = roles[2] == 'r' && row < 0 ? i : row;
            file_op = roles[0] == 'f' && file_op < 0 ? i : file_op;
            jump = roles[4] == 't' && jump < 0 ? i : jump;
        }
        if (!CHECK(sw >= 0 && row >= 0 && file_op >= 0 && jump >= 0))
            break;
        switch (k) {
        case 0: code[jump].t = (uint16_t)mp.ncode; break;         /* a target past the end */
        case 1: code[file_op].a = (uint16_t)mp.file_bytes; break; /* an operand outside the file */
        case 2: code[sw + 1].code = MOP_add_i32; break;           /* a SWITCH without its CASE 0 */
        case 3: code[mp.ncode - 1].code = MOP_MOV; break;         /* the last micro-op falls off */
        case 4: code[0].code = MOP_COUNT; break;                  /* no such opcode */
        case 5: {                                                 /* a row outside the arena */
            int64_t rows = 1000000;
            memcpy(mp.image + (code[row].c - t.plan.priv_bytes) + 8, &rows, 8);
            break;
        }
        default: code[jump].t = (uint16_t)(sw + 1); break;        /* a jump to a CASE */
        }
        CHECK(mop_check(t.p, &t.plan, &mp, err, sizeof err) != 0);
        mop_prog_free(&mp);
    }
    translated_free(&t);
}

int main(void)
{
    test_translate_all();
    test_golden();
    test_counter_runs();
    test_guards();
    test_check_rejects();
    return test_finish("test_microops");
}
