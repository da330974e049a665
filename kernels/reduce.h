/* reduce.h: reductions (sum mean max min argmax argmin all any norm) and dot, as shares.
 *
 * A share folds a range of elements into a k_acc; shares merge in any order; finish writes
 * the one-element result. Reals accumulate in double (f32 too), integers in uint64 so they
 * wrap, and the extremes keep the position of the first extreme (the first NaN, if any).
 * Merging is symmetric (ties go to the lower index, whichever side it is on), so any split
 * and any merge order give the same result for f32 and integers.
 */
#ifndef CFX_KERNELS_REDUCE_H
#define CFX_KERNELS_REDUCE_H

#include <math.h>
#include <stdint.h>

#include "elementwise.h"
#include "hd.h"
#include "ops.h"

CFX_HD int k_is_real(int dtype)
{
    return dtype == K_F32 || dtype == K_F64;
}

CFX_HD k_acc k_reduce_init(int op, int dtype)
{
    (void)dtype; /* every dtype starts from the same zeros (the min/max ops from no element) */
    k_acc a;
    a.r = 0.0;
    a.i = op == OP_ALL ? 1 : 0;
    a.idx = 0;
    a.n = 0;
    return a;
}

/* Is candidate (value cr/ci at position cidx) a better extreme than the accumulator's?
 * `want_max` picks max over min. NaN beats any number; ties go to the lower position. */
CFX_HD int k_extreme_better(int real, int want_max, double cr, int64_t ci, int64_t cidx,
                            const k_acc *acc)
{
    if (acc->n == 0)
        return 1;
    if (real) {
        int cn = isnan(cr), an = isnan(acc->r);
        if (cn || an) {
            if (cn && an)
                return cidx < acc->idx;
            return cn;
        }
        if (cr == acc->r)
            return cidx < acc->idx;
        return want_max ? cr > acc->r : cr < acc->r;
    }
    if (ci == acc->i)
        return cidx < acc->idx;
    return want_max ? ci > acc->i : ci < acc->i;
}

/* Takes the candidate into the accumulator when it is the better extreme: one rule for
 * the elements of a range and for merging the partial results of two ranges. */
CFX_HD void k_extreme_offer(int real, int want_max, double cr, int64_t ci, int64_t cidx, k_acc *acc)
{
    if (k_extreme_better(real, want_max, cr, ci, cidx, acc)) {
        acc->r = cr;
        acc->i = ci;
        acc->idx = cidx;
    }
}

CFX_HD void k_reduce_range(int op, int dtype, k_acc *acc, const void *src, int64_t lo, int64_t hi)
{
    if (lo >= hi)
        return;
    int real = k_is_real(dtype);
    K_RACE_RANGE_R(src, lo, hi, 1, k_elem_size(dtype));
    switch (op) {
    case OP_SUM:
    case OP_MEAN:
        if (real) {
            double s = acc->r;
            for (int64_t e = lo; e < hi; e++)
                s += k_get_real(dtype, src, e);
            acc->r = s;
        } else {
            uint64_t s = (uint64_t)acc->i;
            for (int64_t e = lo; e < hi; e++)
                s += (uint64_t)k_get_int(dtype, src, e);
            acc->i = (int64_t)s;
        }
        break;
    case OP_NORM: {
        double s = acc->r;
        for (int64_t e = lo; e < hi; e++) {
            double v = k_get_real(dtype, src, e);
            s += v * v;
        }
        acc->r = s;
        break;
    }
    case OP_RMAX:
    case OP_RMIN:
    case OP_ARGMAX:
    case OP_ARGMIN: {
        int want_max = op == OP_RMAX || op == OP_ARGMAX;
        for (int64_t e = lo; e < hi; e++) {
            double cr = real ? k_get_real(dtype, src, e) : 0.0;
            int64_t ci = real ? 0 : k_get_int(dtype, src, e);
            k_extreme_offer(real, want_max, cr, ci, e, acc);
            acc->n++;
        }
        return; /* n counted per element above */
    }
    case OP_ALL:
        for (int64_t e = lo; e < hi; e++)
            acc->i = acc->i && ((const uint8_t *)src)[e] != 0;
        break;
    case OP_ANY:
        for (int64_t e = lo; e < hi; e++)
            acc->i = acc->i || ((const uint8_t *)src)[e] != 0;
        break;
    }
    acc->n += hi - lo;
}

/* Folds one element, at position e, held at `value` (its own bytes): what k_reduce_range does
 * for element e. The compiled kernel's fused loops reduce values they hold in registers. */
CFX_HD void k_reduce_one(int op, int dtype, k_acc *acc, const void *value, int64_t e)
{
    if (op == OP_RMAX || op == OP_RMIN || op == OP_ARGMAX || op == OP_ARGMIN) {
        int real = k_is_real(dtype);
        K_RACE_R(value, k_elem_size(dtype));
        double cr = real ? k_get_real(dtype, value, 0) : 0.0;
        int64_t ci = real ? 0 : k_get_int(dtype, value, 0);
        k_extreme_offer(real, op == OP_RMAX || op == OP_ARGMAX, cr, ci, e, acc);
        acc->n++;
        return;
    }
    k_reduce_range(op, dtype, acc, value, 0, 1); /* the position does not matter */
}

CFX_HD void k_reduce_merge(int op, int dtype, k_acc *into, const k_acc *from)
{
    K_RACE_R(from, sizeof *from);
    if (from->n == 0)
        return;
    if (into->n == 0) {
        *into = *from;
        return;
    }
    int real = k_is_real(dtype);
    switch (op) {
    case OP_SUM:
    case OP_MEAN:
    case OP_NORM:
        into->r += from->r;
        into->i = (int64_t)((uint64_t)into->i + (uint64_t)from->i);
        break;
    case OP_RMAX:
    case OP_RMIN:
    case OP_ARGMAX:
    case OP_ARGMIN: {
        int want_max = op == OP_RMAX || op == OP_ARGMAX;
        k_extreme_offer(real, want_max, from->r, from->i, from->idx, into);
        break;
    }
    case OP_ALL:
        into->i = into->i && from->i;
        break;
    case OP_ANY:
        into->i = into->i || from->i;
        break;
    }
    into->n += from->n;
}

/* Writes a real or integer result of dtype. */
CFX_HD void k_store_result(int dtype, void *dst, double r, int64_t i)
{
    K_RACE_W(dst, k_elem_size(dtype));
    switch (dtype) {
    case K_F32: *(float *)dst = (float)r; break;
    case K_F64: *(double *)dst = r; break;
    case K_I32: *(int32_t *)dst = (int32_t)(uint32_t)(uint64_t)i; break;
    case K_I64: *(int64_t *)dst = i; break;
    case K_BOOL: *(uint8_t *)dst = i != 0; break;
    }
}

/* count is the element count of the whole operand (for mean). */
CFX_HD void k_reduce_finish(int op, int dtype, const k_acc *acc, int64_t count, void *dst)
{
    switch (op) {
    case OP_SUM:
    case OP_RMAX:
    case OP_RMIN:
        k_store_result(dtype, dst, acc->r, acc->i);
        break;
    case OP_MEAN:
        k_store_result(dtype, dst, count > 0 ? acc->r / (double)count : 0.0, 0);
        break;
    case OP_NORM:
        k_store_result(dtype, dst, sqrt(acc->r), 0);
        break;
    case OP_ARGMAX:
    case OP_ARGMIN:
        *(int32_t *)dst = (int32_t)acc->idx;
        break;
    case OP_ALL:
    case OP_ANY:
        *(uint8_t *)dst = acc->i != 0;
        break;
    }
}

/* REDUCE_AXIS: the source seen as [outer, n, inner], reduced along its middle dimension into
 * [outer, inner]. Result e = o * inner + k is the REDUCE of the run of n elements
 * src[(o * n + i) * inner + k], i = 0 .. n-1, folded in that order with the positions i (what
 * argmax and argmin give): the same additions in the same order as k_reduce_range over the run
 * copied out, so every executor that runs this body gets the same bits. dst is of the result's
 * dtype (k_reduce_finish's for op over dtype); results [lo, hi). */
CFX_HD void k_reduce_axis(int op, int dtype, void *dst, const void *src, int64_t n, int64_t inner, int64_t lo,
                          int64_t hi)
{
    int size = k_elem_size(dtype);
    int out = op == OP_ARGMAX || op == OP_ARGMIN ? 4 : op == OP_ALL || op == OP_ANY ? 1 : size;
    const uint8_t *s = (const uint8_t *)src;
    for (int64_t e = lo; e < hi; e++) {
        int64_t o = e / inner, k = e % inner;
        const uint8_t *run = s + (o * n * inner + k) * size;
        k_acc acc = k_reduce_init(op, dtype);
        if (inner == 1) {
            k_reduce_range(op, dtype, &acc, run, 0, n);
        } else {
            for (int64_t i = 0; i < n; i++)
                k_reduce_one(op, dtype, &acc, run + i * inner * size, i);
        }
        k_reduce_finish(op, dtype, &acc, n, (uint8_t *)dst + e * out);
    }
}

CFX_HD void k_dot_range(int dtype, k_acc *acc, const void *a, const void *b, int64_t lo, int64_t hi)
{
    K_RACE_RANGE_R(a, lo, hi, 1, k_elem_size(dtype));
    K_RACE_RANGE_R(b, lo, hi, 1, k_elem_size(dtype));
    if (k_is_real(dtype)) {
        double s = acc->r;
        for (int64_t e = lo; e < hi; e++)
            s += k_get_real(dtype, a, e) * k_get_real(dtype, b, e);
        acc->r = s;
    } else {
        uint64_t s = (uint64_t)acc->i;
        for (int64_t e = lo; e < hi; e++)
            s += (uint64_t)k_get_int(dtype, a, e) * (uint64_t)k_get_int(dtype, b, e);
        acc->i = (int64_t)s;
    }
    if (hi > lo)
        acc->n += hi - lo;
}

CFX_HD void k_dot_finish(int dtype, const k_acc *acc, void *dst)
{
    k_store_result(dtype, dst, acc->r, acc->i);
}

#endif
