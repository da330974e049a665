/* cost.c: the cost sheet of a program (`cfx dump --cost`, cfx_dump_cost): what one iteration of
 * each loop costs the two modes of cuda-persistent, read off the plan both follow
 * (host/gen/plan.c) and the kernel the code generator writes (host/gen/cgen.c), so that speed
 * work can be judged without a GPU.
 *
 * Per loop (a back edge's target h and the last record that jumps back to it, j: records h to
 * j, each counted once: an upper bound where the body branches), per iteration:
 *   records         walked by the interpreter (a batch's later reductions and skipped records
 *                   included: the walk visits them)
 *   grid barriers   the interpreter's from its plan: before a record, at a region's entry, a
 *                   split reduction's combine (one per batch), a region's exit; the compiled
 *                   kernel's counted in the code written, from its own plan, which may spare
 *                   some (a tensor whose two buffers alternate by iteration, plan.h)
 *   block barriers  the interpreter's (one after every record, 2 in a block reduction, 2 in
 *                   a grid barrier) and the compiled kernel's (counted in the code written)
 *   bytes           read and written in device memory by the whole grid, each mode by its
 *                   own plan (the compiled kernel's has its own replicas; `plan of the
 *                   compiled kernel` names them and the tensors that alternate) (global loads and
 *                   stores; what L2 serves counts too): a split record moves its slots once,
 *                   a record computed whole by every block (a replica's, a redundant one's)
 *                   reads its shared inputs once per block, a matrix-vector product reads the
 *                   matrix once and the vector once per block
 *   launches        records that end the launch: the interpreter's (every CALL, a launched
 *                   product), the compiled kernel's (a CALL of a binary kernel: one of a kernel
 *                   registered by its source is inline)
 * and a predicted time from the floors (cfx_floors): grid barriers x grid barrier + bytes /
 * bandwidth + for the interpreter records x record (one-block loops: micro-ops x micro-op),
 * for the compiled kernel block barriers x block barrier + memory phases x phase (the trips
 * to device memory its code makes one after another, which the code generator counts). The
 * floors' defaults are the H100 figures of profiling/results/2026-11-26-h100.md; the phase is
 * fitted to the compiled kernel's times there (1.0 to 1.65 us over five graphs).
 */
#include "cost.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/gen/cgen.h"
#include "host/gen/plan.h"

/* The defaults of cfx_floors: NVIDIA H100 80GB HBM3, bench_gpu --quick at commit e7ba51c
 * (profiling/results/2026-11-26-h100.md): the counting grid barrier of 264 blocks, one
 * __syncthreads of 256 threads, a device-to-device copy, the records column over counter's and
 * IfInWhileNet's records per iteration, the micro-ops column likewise, and the phase what
 * the compiled kernel's times at 82fad6a leave after barriers and bytes, per phase. */
const cfx_floors cost_default_floors = {1.21, 0.014, 2959.0, 1.15, 0.08, 1.35};

/* Bytes the whole grid moves for one execution of record i (see the top comment). */
static void record_bytes(const cfx_prog *p, const sched_plan *plan, int32_t i, int blocks, double *rd,
                         double *wr)
{
    const cfx_record *r = &p->records[i];
    const cfx_slot *sl = p->slots;
    const char *f = rec_fields[r->kind];
    int32_t ops[4] = {r->a, r->b, r->c, r->d};
    unsigned fl = plan->flags[i];
    int one = (fl & SCHED_F_ONE_BLOCK) != 0;
    double copies = one ? 1.0 : (double)blocks; /* how many blocks read a whole input */
    *rd = *wr = 0;
    if (plan->batch_head[i] >= 0)
        return; /* counted at its batch's head: the same reads */
    switch ((enum rec_kind)r->kind) {
    case REC_HALT: case REC_JUMP: case REC_JUMP_FALSE: case REC_JUMP_TRUE: case REC_SWITCH:
    case REC_TICK: case REC_ASSERT: case REC_CHECK_INDEX: case REC_CHECK_STEP: case REC_CHECK_BOUND:
    case REC_CALL:
        return;
    case REC_PRINT:
    case REC_CHECK_DIVIDE:
        if (plan->priv_offset[r->a] < 0)
            *rd = (double)slot_bytes(&sl[r->a]) * (r->kind == REC_PRINT ? 1.0 : copies);
        return;
    case REC_MATMUL: { /* each product of a batch as a plain one (rec_matmul) */
        rec_mm g = rec_matmul(sl, r);
        int64_t m = g.m, k = g.k, n = g.n;
        int size = dtype_size(sl[r->b].dtype);
        if (fl & SCHED_F_LAUNCH)
            return; /* cuBLAS's, between two launches */
        *rd = (double)m * k * size;
        if (plan->priv_offset[r->c] < 0)
            *rd += (double)k * n * size * (n == 1 && g.batch == 1 ? copies : (double)(m + SCHED_TILE - 1) / SCHED_TILE);
        *rd *= (double)g.batch;
        *wr = (double)g.batch * m * n * size;
        return;
    }
    case REC_GET_ROW:
    case REC_GET_ITEM:
    case REC_GET_BOX: {
        /* what it copies, read by every block when its output is a replica */
        double b = (double)slot_bytes(&sl[r->a]);
        int rep = plan->priv_offset[r->a] >= 0;
        if (plan->priv_offset[r->b] < 0)
            *rd = b * (rep ? copies : 1.0);
        if (!rep)
            *wr = b;
        return;
    }
    case REC_GATHER: {
        /* what it copies, and the indices, read whole by every block */
        double b = (double)slot_bytes(&sl[r->a]);
        int rep = plan->priv_offset[r->a] >= 0;
        if (plan->priv_offset[r->b] < 0)
            *rd = b * (rep ? copies : 1.0);
        if (plan->priv_offset[r->c] < 0)
            *rd += (double)slot_bytes(&sl[r->c]) * copies;
        if (!rep)
            *wr = b;
        return;
    }
    case REC_UNARY:
    case REC_BINARY:
    case REC_REDUCE:
    case REC_DOT:
    case REC_TRANSPOSE:
    case REC_FILL:
    case REC_IOTA:
    case REC_COPY:
    case REC_CAST:
    case REC_WHERE:
    case REC_SET_ROW:
    case REC_SET_BOX:
    case REC_BROADCAST:
    case REC_SET_ITEM:
    case REC_REDUCE_AXIS: /* all of b (each block its results' runs when split), a written */
    case REC_PERMUTE:     /* all of b (each block its elements' sources when split), a written */
        break;
    }
    /* the elementwise family and the reductions: inputs are the slot fields after a */
    int split = (fl & (SCHED_F_SPLIT | SCHED_F_COMBINE)) && !one;
    for (int k = 1; k < 4 && f[k]; k++) {
        if (f[k] != 's' || plan->priv_offset[ops[k]] >= 0)
            continue;
        double b = (double)slot_bytes(&sl[ops[k]]);
        if (sl[ops[k]].kind == SLOT_CONST && sl[ops[k]].count == 1)
            continue; /* a literal */
        *rd += split ? b : b * copies;
    }
    if (r->kind == REC_REDUCE || r->kind == REC_DOT) {
        if ((fl & SCHED_F_COMBINE) && !one) {
            int n = 1;
            for (int32_t q = plan->batch_next[i]; q >= 0; q = plan->batch_next[q])
                n++;
            for (int32_t q = plan->batch_next[i]; q >= 0; q = plan->batch_next[q]) {
                double b = 0, w = 0;
                const cfx_record *rq = &p->records[q];
                if (plan->priv_offset[rq->b] < 0)
                    b += (double)slot_bytes(&sl[rq->b]);
                if (rq->kind == REC_DOT && plan->priv_offset[rq->c] < 0)
                    b += (double)slot_bytes(&sl[rq->c]);
                *rd += b;
                (void)w;
            }
            /* partials: each block writes one per reduction and reads all of them */
            *wr += (double)blocks * n * sizeof(k_acc);
            *rd += (double)blocks * blocks * n * sizeof(k_acc);
        }
        return;
    }
    if (plan->priv_offset[r->a] < 0)
        *wr = (double)slot_bytes(&sl[r->a]);
}

static void human_bytes(char *buf, size_t len, double b)
{
    if (b < 1e3)
        snprintf(buf, len, "%.0f B", b);
    else if (b < 1e6)
        snprintf(buf, len, "%.1f KB", b / 1e3);
    else if (b < 1e9)
        snprintf(buf, len, "%.1f MB", b / 1e6);
    else
        snprintf(buf, len, "%.2f GB", b / 1e9);
}

/* " (s8 r, s9 p)": the slots and their names, nothing when n is 0. */
static void slot_list(const cfx_prog *p, strbuf *out, const int32_t *slots, int32_t n)
{
    for (int32_t k = 0; k < n; k++) {
        int32_t at = p->slots[slots[k]].name;
        const char *name = at >= 0 ? p->strings + at : NULL;
        sb_printf(out, "%ss%d%s%s%s", k ? ", " : " (", (int)slots[k], name ? " " : "", name ? name : "",
                  k + 1 == n ? ")" : "");
    }
}

int cost_sheet(const cfx_prog *p, int blocks, const cfx_floors *fl, strbuf *out, char *err,
               size_t errlen)
{
    sched_plan plan, cplan;
    const sched_opts compiled_opts = plan_options_compiled(0); /* cgen's plan with this sheet's options */
    cgen_info info;
    cgen_options opt;
    strbuf code = {0};
    int32_t *bb = NULL, *gb = NULL, *ph = NULL, *lastback = NULL, *succ = NULL;
    int have_code = 0, rc = -1, nloops = 0;
    char why[256] = "";
    if (!fl)
        fl = &cost_default_floors;
    if (blocks < 1)
        blocks = 264;
    if (sched_plan_build(p, &plan, err, errlen) != 0)
        return -1;
    if (sched_plan_build_opts(p, &compiled_opts, &cplan, err, errlen) != 0) {
        sched_plan_free(&plan);
        return -1;
    }
    bb = (int32_t *)calloc((size_t)p->nrecords + 1, sizeof *bb);
    gb = (int32_t *)calloc((size_t)p->nrecords + 1, sizeof *gb);
    ph = (int32_t *)calloc((size_t)p->nrecords + 1, sizeof *ph);
    lastback = (int32_t *)malloc(sizeof(int32_t) * ((size_t)p->nrecords + 1));
    succ = (int32_t *)malloc(sizeof(int32_t) * ((size_t)p->ntable + 2));
    if (!bb || !gb || !ph || !lastback || !succ) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    /* the compiled kernel's own barriers, from the code the generator writes */
    memset(&info, 0, sizeof info);
    memset(&opt, 0, sizeof opt);
    opt.target = CGEN_TARGET_CUDA;
    opt.block_barriers = bb;
    opt.grid_barriers = gb;
    opt.phases = ph;
    have_code = cgen_emit(p, &opt, &code, &info, why, sizeof why) == 0;
    sb_free(&code);

    sb_printf(out, "graph %s: cost of one loop iteration on cuda-persistent, a grid of %d blocks\n", p->name, blocks);
    sb_printf(out,
              "floors: grid barrier %.3g us, block barrier %.3g us, device memory %.0f GB/s, interpreted record "
              "%.3g us, micro-op %.3g us, memory phase %.3g us\n",
              fl->grid_barrier_us, fl->block_barrier_us, fl->bandwidth_gbs, fl->record_us, fl->microop_us,
              fl->phase_us);
    sb_printf(out, "plan: %d replica%s", (int)plan.nreplicas, plan.nreplicas == 1 ? "" : "s");
    slot_list(p, out, plan.replicas, plan.nreplicas);
    sb_printf(out, ", %d reduction%s in an earlier one's batch, %d one-block loop%s\n", (int)plan.nbatched,
              plan.nbatched == 1 ? "" : "s", (int)plan.nregions, plan.nregions == 1 ? "" : "s");
    {
        /* the compiled kernel's plan: the interpreter's, but with tensors that alternate */
        int32_t nalt = 0, *alt = (int32_t *)malloc(sizeof(int32_t) * ((size_t)p->nslots + 1));
        for (int32_t s = 0; alt && s < p->nslots; s++)
            if (cplan.alt_tick[s] >= 0)
                alt[nalt++] = s;
        sb_printf(out, "plan of the compiled kernel: %d replica%s", (int)cplan.nreplicas, cplan.nreplicas == 1 ? "" : "s");
        slot_list(p, out, cplan.replicas, cplan.nreplicas);
        sb_printf(out, ", %d tensor%s alternating by iteration", (int)nalt, nalt == 1 ? "" : "s");
        slot_list(p, out, alt, nalt);
        sb_printf(out, ", %d product%s computed an iteration ahead", (int)cplan.naheads, cplan.naheads == 1 ? "" : "s");
        for (int32_t i = 0, k = 0; i < p->nrecords; i++)
            if (cplan.ahead_at[i] >= 0) {
                k++;
                sb_printf(out, "%s%d after %d%s", k > 1 ? ", " : " (record ", (int)i, (int)cplan.ahead_at[i],
                          k == cplan.naheads ? ")" : "");
            }
        sb_puts(out, "\n");
        free(alt);
    }
    {
        /* the tensor the executors ask L2 to keep (both modes); its reads are still priced at
         * device memory below: what the window gives is for the GPU to measure */
        int32_t keep = sched_l2_keep(p);
        if (keep >= 0) {
            char b[32];
            human_bytes(b, sizeof b, (double)slot_bytes(&p->slots[keep]));
            sb_puts(out, "kept in L2 (an access policy window on the launch, priced as device memory here):");
            slot_list(p, out, &keep, 1);
            sb_printf(out, " %s\n", b);
        } else {
            sb_puts(out, "kept in L2: nothing (no loop reads a tensor of 1 MiB or more whole without writing it)\n");
        }
    }
    if (!have_code)
        sb_printf(out, "compiled: none (%s)\n", why);

    sched_back_edges(p, succ, lastback);
    for (int32_t h = 0; h < p->nrecords; h++) {
        int32_t j = lastback[h];
        if (j < 0)
            continue;
        int region = (plan.flags[h] & SCHED_F_ONE_BLOCK) != 0;
        long records = 0, grid = 0, cgrid = 0, iblock = 0, cblock = 0, launches = 0, claunches = 0, mops = 0,
             phases = 0;
        double rd = 0, wr = 0, crd = 0, cwr = 0;
        for (int32_t i = h; i <= j; i++) {
            const cfx_record *r = &p->records[i];
            unsigned f = plan.flags[i];
            double a = 0, b = 0;
            records++;
            if (r->kind != REC_JUMP)
                mops++;
            if (f & SCHED_F_LAUNCH)
                launches++;
            if (sched_record_launches(p, r, &compiled_opts))
                claunches++;
            if (plan.batch_head[i] < 0) {
                int g = ((f & SCHED_F_BARRIER_BEFORE) && !(f & SCHED_F_ONE_BLOCK)) + ((f & SCHED_F_ENTRY_BARRIER) != 0) +
                        ((f & SCHED_F_COMBINE) && !(f & SCHED_F_ONE_BLOCK)) +
                        ((f & SCHED_F_REGION_EXIT) && i > h);
                grid += g;
                iblock += 1 + 2 * g;
                if ((r->kind == REC_REDUCE || r->kind == REC_DOT)) {
                    /* each reduction of the batch: a block reduction, and another after the combine */
                    int n = 0;
                    for (int32_t q = i; q >= 0; q = plan.batch_next[q])
                        n += p->records[q].kind == REC_REDUCE ? K_BLOCK_REDUCE_BARRIERS_OF(p->records[q].op)
                                                              : K_BLOCK_REDUCE_BARRIERS;
                    iblock += n * (1 + ((f & SCHED_F_COMBINE) && !(f & SCHED_F_ONE_BLOCK)));
                }
            }
            cblock += bb[i];
            cgrid += gb[i];
            phases += ph[i];
            record_bytes(p, &plan, i, blocks, &a, &b);
            rd += a;
            wr += b;
            record_bytes(p, &cplan, i, blocks, &a, &b);
            crd += a;
            cwr += b;
        }
        double mem_us = (rd + wr) / (fl->bandwidth_gbs * 1e3);
        double interp_us = grid * fl->grid_barrier_us + mem_us +
                           (region ? mops * fl->microop_us : records * fl->record_us);
        double cmem_us = (crd + cwr) / (fl->bandwidth_gbs * 1e3);
        double comp_us = cgrid * fl->grid_barrier_us + cmem_us + cblock * fl->block_barrier_us + phases * fl->phase_us;
        char r1[32], w1[32], r2[32], w2[32];
        human_bytes(r1, sizeof r1, rd);
        human_bytes(w1, sizeof w1, wr);
        human_bytes(r2, sizeof r2, crd);
        human_bytes(w2, sizeof w2, cwr);
        sb_printf(out, "\nloop at %d:%d, records %d to %d%s:\n", (int)p->records[h].line, (int)p->records[h].col, (int)h,
                  (int)j, region ? " (a one-block loop: block 0 alone, micro-ops in the interpreter)" : "");
        sb_printf(out, "  %-12s %8s %14s %15s %11s %14s %9s %13s\n", "mode", "records", "grid barriers",
                  "block barriers", "bytes read", "bytes written", "launches", "predicted us");
        sb_printf(out, "  %-12s %8ld %14ld %15ld %11s %14s %9ld %13.3f\n", "interpreter", records, grid, iblock, r1, w1,
                  launches, interp_us);
        if (have_code)
            sb_printf(out, "  %-12s %8s %14ld %15ld %11s %14s %9ld %13.3f\n", "compiled", "-", cgrid, cblock, r2, w2,
                      claunches, comp_us);
        nloops++;
    }
    if (nloops == 0)
        sb_puts(out, "\nno loops\n");
    rc = out->oom ? -1 : 0;
    if (rc != 0)
        snprintf(err, errlen, "out of memory");
done:
    free(bb);
    free(gb);
    free(ph);
    free(lastback);
    free(succ);
    sched_plan_free(&plan);
    sched_plan_free(&cplan);
    return rc;
}
