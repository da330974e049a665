/* kernels.h: the body of every built-in op, written once for host and device.
 *
 * Each function computes a range [lo, hi) of its output's elements, so that an executor can
 * split an op across threads, blocks or CPU threads by giving each a share of the range:
 * the CPU executor calls it with [0, count), the persistent kernel with each thread's
 * share, the host-driven executor's launch kernels one element per thread. No op's
 * arithmetic exists anywhere else.
 *
 * Rules every executor relies on (written down here because the GPU must match the CPU):
 * - integers wrap on overflow (two's complement) in add, sub, mul, neg, abs, pow, sum;
 *   floordiv (`//`) rounds toward minus infinity and mod (`%`) takes the divisor's sign, as in
 *   Python; truncdiv and fmod are C's `/` and `%` (toward zero, the dividend's sign);
 *   INT_MIN // -1 is INT_MIN and INT_MIN % -1 is 0; a zero divisor never reaches these bodies
 *   (CHECK_DIVIDE stops the run first), but the bodies still return 0 for it rather than trap;
 *   div of integers is never made (the language divides integers as f32) and is truncdiv;
 * - integer pow with a negative exponent is the truncated real result: 1 for base 1, +-1 for
 *   base -1, 0 otherwise; 0 to the power 0 is 1;
 * - real floordiv and mod are numpy's (from fmod, exact; the sign of a zero result as in
 *   Python; a zero divisor gives inf or nan); truncdiv is trunc(a / b), fmod is C's fmod;
 * - min, max, relu and the reductions max/min propagate NaN; argmax/argmin return the first
 *   index of the extreme value, and the first NaN if there is one;
 * - comparisons with NaN are false, except ne;
 * - cast from real to integer truncates toward zero, saturates at the integer's range and
 *   maps NaN to 0; to bool is `!= 0` (NaN is true); from bool is 0 or 1;
 * - sum, mean, dot and norm of f32 accumulate in double and round once at the end, so the
 *   order in which shares are combined changes nothing a test can see; matmul does the same
 *   for each output element.
 */
#ifndef CFX_KERNELS_H
#define CFX_KERNELS_H

#include <stdint.h>

#include "hd.h"
#include "ops.h"

/* Accumulator of a reduction share. `r` sums reals, `i` sums integers (as uint64, wrapping),
 * `idx` is the position of the extreme for max/min/argmax/argmin, `n` counts elements seen
 * (0: the share was empty). */
typedef struct k_acc {
    double r;
    int64_t i;
    int64_t idx;
    int64_t n;
} k_acc;

/* Block barriers a block reduction passes (k_block_reduce, kernels/block.cuh), for the cost
 * sheet and the code generator's counts. */
#define K_BLOCK_REDUCE_BARRIERS 2
/* ... of op: any and all vote in one. */
#define K_BLOCK_REDUCE_BARRIERS_OF(op) ((op) == OP_ANY || (op) == OP_ALL ? 1 : K_BLOCK_REDUCE_BARRIERS)

/* dst[e] = op(src[e]) for e in [lo, hi). dtype is the operand's (and result's) dtype. */
CFX_HD void k_unary(int op, int dtype, void *dst, const void *src, int64_t lo, int64_t hi);

/* dst[e] = op(a[e or 0], b[e or 0]) for e in [lo, hi): an operand with count 1 is broadcast.
 * dtype is the operands' dtype; comparisons write bool (uint8_t 0/1). */
CFX_HD void k_binary(int op, int dtype, void *dst, const void *a, int64_t na, const void *b,
                     int64_t nb, int64_t lo, int64_t hi);

/* Reductions in three steps: every share starts from k_reduce_init, folds its elements in
 * with k_reduce_range, shares are merged with k_reduce_merge (in any order; `from` covers
 * elements after or before `into`, the merge keeps the first index on ties), and
 * k_reduce_finish writes the one-element result. op is OP_SUM, OP_MEAN, OP_RMAX, OP_RMIN,
 * OP_ARGMAX, OP_ARGMIN, OP_ALL, OP_ANY, OP_NORM. */
CFX_HD k_acc k_reduce_init(int op, int dtype);
CFX_HD void k_reduce_range(int op, int dtype, k_acc *acc, const void *src, int64_t lo, int64_t hi);
CFX_HD void k_reduce_merge(int op, int dtype, k_acc *into, const k_acc *from);
CFX_HD void k_reduce_finish(int op, int dtype, const k_acc *acc, int64_t count, void *dst);

/* dot: acc += a[e] * b[e] for e in [lo, hi); finish with k_dot_finish. */
CFX_HD void k_dot_range(int dtype, k_acc *acc, const void *a, const void *b, int64_t lo, int64_t hi);
CFX_HD void k_dot_finish(int dtype, const k_acc *acc, void *dst);

/* dst = a @ b with a [m,k] and b [k,n] (n = 1 for a vector b), row-major; computes output
 * elements [lo, hi) of the m*n. */
CFX_HD void k_matmul(int dtype, void *dst, const void *a, const void *b, int64_t m, int64_t k,
                     int64_t n, int64_t lo, int64_t hi);

/* dst [n,m] = transpose of src [m,n]; output elements [lo, hi). */
CFX_HD void k_transpose(int dtype, void *dst, const void *src, int64_t m, int64_t n, int64_t lo,
                        int64_t hi);

/* dst[e] = value (one element of dtype) for e in [lo, hi). */
CFX_HD void k_fill(int dtype, void *dst, const void *value, int64_t lo, int64_t hi);
/* dst[e] = e, converted to dtype. */
CFX_HD void k_iota(int dtype, void *dst, int64_t lo, int64_t hi);
/* dst[e] = (dst_dtype) src[e] by the cast rules above. */
CFX_HD void k_cast(int dst_dtype, void *dst, int src_dtype, const void *src, int64_t lo, int64_t hi);
/* dst[e] = c[e or 0] ? a[e or 0] : b[e or 0]; one-element operands broadcast. */
CFX_HD void k_where(int dtype, void *dst, const uint8_t *c, int64_t nc, const void *a, int64_t na,
                    const void *b, int64_t nb, int64_t lo, int64_t hi);
/* Byte copy of [lo, hi) bytes, for COPY, GET_ROW and SET_ROW. */
CFX_HD void k_copy_bytes(void *dst, const void *src, int64_t lo, int64_t hi);

/* Reads a one-element slot of an integer or bool dtype as int64 (for indices, switch values,
 * conditions and steps). */
CFX_HD int64_t k_load_int(int dtype, const void *p);
/* Normalizes a checked row index: i < 0 counts from the end. */
CFX_HD int64_t k_row_index(int64_t i, int64_t rows) { return i < 0 ? i + rows : i; }

/* CHECK_BOUND's test, by what is checked (program.h): an index -b <= a < b (0) or a pop
 * (2, a = -1: the list is not empty); an append a < b (1, a >= 0 is the length); a slice start
 * 0 <= a < b (3, b = rows - length + 1); a stack a == b (4: the list is full). */
CFX_HD int k_bound_ok(int what, int64_t a, int64_t b)
{
    switch (what) {
    case 0: case 2: return a >= -b && a < b;
    case 1: case 3: return a >= 0 && a < b;
    default: return a == b;
    }
}

/* The item GET_ITEM and SET_ITEM touch in a list of capacity cap and length len: a negative
 * index counts from the length. The index was checked (CHECK_BOUND) before; clamping it into
 * [0, cap) keeps any program, checked or not, inside the list's slot. */
CFX_HD int64_t k_item_index(int64_t i, int64_t len, int64_t cap)
{
    if (i < 0)
        i += len;
    return i < 0 ? 0 : i >= cap ? cap - 1 : i;
}

/* The bodies. */
#include "elementwise.h"
#include "reduce.h"
#include "linalg.h"

#endif
