/* validate.c: prog_validate, the check of a program before any executor sees it.
 *
 * The record's `dtype` field, which executors use to pick a typed loop, is set by the lowering
 * and enforced here:
 *   UNARY, BINARY, REDUCE, CAST  the dtype of slot b (the operand; the result is slot a's)
 *   other records with a slot a  the dtype of slot a
 *   HALT, JUMP, TICK, CALL       0
 *
 * What prog_validate guarantees, so that executors check nothing per record:
 * - every field by its role: slots in [0, nslots), targets in [0, nrecords), strings valid or
 *   -1, table ranges inside the table (SWITCH: c + 1 entries, all valid targets; CALL: c
 *   valid slots, the first d arguments, the results not constants and not repeated), unused
 *   fields 0, op 0 outside UNARY/BINARY/REDUCE, flags only REC_F_SCALAR and only where every
 *   slot operand has one element, the dtype field as above;
 * - slots: a known dtype and kind, 1 <= dims, count = product of dims <= CFX_MAX_ELEMENTS,
 *   16-aligned and inside the arena, constants inside the const image and everything else
 *   above it, no two writable slots overlapping; inputs and results listed exactly once;
 * - operands per kind: the dtypes and element counts each kind needs (BINARY: equal counts
 *   or one of them 1, result count the larger; comparisons write bool; conditions and
 *   asserts read a one-element bool; SWITCH a one-element i32; MATMUL [m,k]@[k,n]->[m,n] or
 *   [m,k]@[k]->[m], or with a batch count d >= 1 (never negative) the counts rec_matmul reads
 *   (b: d or one [m,k], c: d or one [k,n], a: d [m,n]); GET_ROW/SET_ROW a row's exact shape;
 *   GATHER b's shape with axis d replaced by the i32/i64 indices' shape; REDUCE_AXIS b's shape
 *   without axis c, or with it as 1, of the reduction's dtype; PERMUTE b's dtype and b's dims
 *   permuted by the permutation c packs); no record writes a constant;
 *   MATMUL, TRANSPOSE, GET_ROW, SET_ROW, GATHER, REDUCE_AXIS, PERMUTE and a dtype-changing CAST
 *   never write an operand;
 * - control: the last record is HALT, and every cycle passes a TICK, so no run can loop
 *   without counting against the budget and seeing a cancel;
 * - row indices: each GET_ROW/SET_ROW index is a constant in range, or was checked by a
 *   CHECK_INDEX of the same slot and row count on every path to it with no write between.
 */
#include "program.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"

/* ==== validation ============================================================================
 * Everything an executor trusts is checked here, so that no program, however it was made,
 * can make an executor read or write outside its arrays or its arena, or loop without a
 * TICK (which would escape the budget and cancel). */

typedef struct vctx {
    const cfx_prog *p;
    char *err;
    size_t errlen;
} vctx;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int vfail(vctx *v, int32_t record, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (record >= 0)
        snprintf(v->err, v->errlen, "invalid program: record %d (%s): %s", record,
                 rec_names[v->p->records[record].kind], msg);
    else
        snprintf(v->err, v->errlen, "invalid program: %s", msg);
    return -1;
}

static int valid_string(const cfx_prog *p, int32_t m)
{
    return m >= 0 && m < p->nstrings;
}

static int is_int(int dt) { return dt == CFX_I32 || dt == CFX_I64; }
static int is_real(int dt) { return dt == CFX_F32 || dt == CFX_F64; }
static int is_num(int dt) { return dt != CFX_BOOL; }

static int check_slot(vctx *v, int32_t i)
{
    const cfx_prog *p = v->p;
    const cfx_slot *s = &p->slots[i];
    if (s->dtype > CFX_BOOL || s->rank > CFX_MAX_RANK || s->kind > SLOT_RESULT || s->pad_ != 0)
        return vfail(v, -1, "slot %d has a bad dtype, rank or kind", i);
    if (s->name != -1 && !valid_string(p, s->name))
        return vfail(v, -1, "slot %d has a bad name offset %d", i, s->name);
    int64_t count = 1;
    for (int d = 0; d < CFX_MAX_RANK; d++) {
        if (d < s->rank) {
            if (s->dims[d] < 1 || s->dims[d] > CFX_MAX_ELEMENTS)
                return vfail(v, -1, "slot %d has a bad dimension %d", i, s->dims[d]);
            count *= s->dims[d];
            if (count > CFX_MAX_ELEMENTS)
                return vfail(v, -1, "slot %d has too many elements", i);
        } else if (s->dims[d] != 0) {
            return vfail(v, -1, "slot %d has a dimension past its rank", i);
        }
    }
    if (s->count != count)
        return vfail(v, -1, "slot %d has count %lld but its dims give %lld", i, (long long)s->count,
                     (long long)count);
    if (s->offset < 0 || s->offset % CFX_ARENA_ALIGN != 0 ||
        s->offset > p->arena_bytes - slot_bytes(s))
        return vfail(v, -1, "slot %d at offset %lld is misaligned or outside the arena", i,
                     (long long)s->offset);
    if (s->kind == SLOT_CONST && s->offset + slot_bytes(s) > p->const_bytes)
        return vfail(v, -1, "constant slot %d lies outside the const image", i);
    if (s->kind != SLOT_CONST && s->offset < p->const_bytes)
        return vfail(v, -1, "slot %d overlaps the const image", i);
    return 0;
}

typedef struct extent {
    int64_t offset, end;
    int32_t slot;
} extent;

static int cmp_extent(const void *x, const void *y)
{
    const extent *a = x, *b = y;
    return a->offset < b->offset ? -1 : a->offset > b->offset;
}

/* No two writable slots share bytes: an executor may write one while reading another. */
static int check_overlap(vctx *v)
{
    const cfx_prog *p = v->p;
    int rc = 0;
    int32_t n = 0;
    extent *e = malloc(sizeof *e * (size_t)(p->nslots > 0 ? p->nslots : 1));
    if (!e)
        return vfail(v, -1, "out of memory");
    for (int32_t i = 0; i < p->nslots; i++)
        if (p->slots[i].kind != SLOT_CONST)
            e[n++] = (extent){p->slots[i].offset, p->slots[i].offset + slot_bytes(&p->slots[i]), i};
    qsort(e, (size_t)n, sizeof *e, cmp_extent);
    for (int32_t i = 1; i < n; i++) {
        if (e[i - 1].end > e[i].offset) {
            rc = vfail(v, -1, "slots %d and %d overlap", e[i - 1].slot, e[i].slot);
            break;
        }
    }
    free(e);
    return rc;
}

/* Parameter lists: each a slot of the right kind, listed once, and every slot of that kind
 * listed (so every input slot is filled before a run and every result copied after). */
static int check_params(vctx *v, const int32_t *list, int32_t n, int kind, const char *what)
{
    const cfx_prog *p = v->p;
    int32_t of_kind = 0;
    if (n < 0 || (n > 0 && !list))
        return vfail(v, -1, "bad %s list", what);
    for (int32_t i = 0; i < p->nslots; i++)
        of_kind += p->slots[i].kind == kind;
    if (of_kind != n)
        return vfail(v, -1, "%d %s slots but %d listed", of_kind, what, n);
    uint8_t *seen = calloc((size_t)(p->nslots > 0 ? p->nslots : 1), 1);
    if (!seen)
        return vfail(v, -1, "out of memory");
    int rc = 0;
    for (int32_t i = 0; i < n && rc == 0; i++) {
        if (list[i] < 0 || list[i] >= p->nslots || p->slots[list[i]].kind != kind)
            rc = vfail(v, -1, "%s %d is not a %s slot", what, i, what);
        else if (seen[list[i]]++)
            rc = vfail(v, -1, "slot %d is listed twice as a %s", list[i], what);
    }
    free(seen);
    return rc;
}

/* The slot a record writes (-1: none; CALL's results are checked apart). */
static int32_t written_slot(const cfx_record *r)
{
    return rec_writes_a(r->kind) ? r->a : -1;
}

/* Is `row` shaped like one row of `t` (t's dims without the first)? */
static int row_shape(const cfx_slot *row, const cfx_slot *t)
{
    if (t->rank < 1 || row->rank != t->rank - 1)
        return 0;
    for (int d = 0; d < row->rank; d++)
        if (row->dims[d] != t->dims[d + 1])
            return 0;
    return 1;
}

static int unary_ok(int op, int dt)
{
    switch (op) {
    case OP_NEG: case OP_ABS: case OP_RELU: case OP_SIGN: return is_num(dt);
    case OP_EXP: case OP_LOG: case OP_SQRT: case OP_TANH: case OP_SIGMOID: case OP_SIN: case OP_COS:
    case OP_TAN: case OP_FLOOR: case OP_CEIL: case OP_ROUND: case OP_ERF: case OP_ROUND_F16: case OP_ROUND_BF16:
    case OP_ROUND_F8E4M3FN: case OP_ROUND_F8E4M3FNUZ: case OP_ROUND_F8E5M2: case OP_ROUND_F8E5M2FNUZ:
    case OP_ROUND_F4E2M1: case OP_ROUND_F8E8M0:
    case OP_ATAN: case OP_ASIN: case OP_ACOS: case OP_ASINH: case OP_ACOSH: case OP_ATANH:
        return is_real(dt);
    case OP_NOT: return dt == CFX_BOOL;
    case OP_INVERT: return is_int(dt);
    default: return 0;
    }
}

/* Returns the result dtype of a binary op on dt, or -1 if the op does not take dt. */
static int binary_result(int op, int dt)
{
    switch (op) {
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_MOD: case OP_MIN: case OP_MAX:
    case OP_POW: case OP_FLOORDIV: case OP_TRUNCDIV: case OP_FMOD:
        return is_num(dt) ? dt : -1;
    case OP_ATAN2:
        return is_real(dt) ? dt : -1;
    case OP_BITAND: case OP_BITOR: case OP_BITXOR: case OP_LSHIFT: case OP_RSHIFT:
        return is_int(dt) ? dt : -1;
    case OP_AND: case OP_OR:
        return dt == CFX_BOOL ? CFX_BOOL : -1;
    case OP_LT: case OP_LE: case OP_GT: case OP_GE:
        return is_num(dt) ? CFX_BOOL : -1;
    case OP_EQ: case OP_NE:
        return CFX_BOOL;
    default:
        return -1;
    }
}

static int reduce_result(int op, int dt)
{
    switch (op) {
    case OP_SUM: case OP_RMAX: case OP_RMIN: return is_num(dt) ? dt : -1;
    case OP_MEAN: case OP_NORM: return is_real(dt) ? dt : -1;
    case OP_ARGMAX: case OP_ARGMIN: return is_num(dt) ? CFX_I32 : -1;
    case OP_ALL: case OP_ANY: return dt == CFX_BOOL ? CFX_BOOL : -1;
    default: return -1;
    }
}

/* Is count = B * each, B >= 1 (by division: a batch count from a program is any int32)? */
static int batch_count_is(int64_t count, int64_t B, int64_t each)
{
    return each == 0 ? count == 0 : count % each == 0 && count / each == B;
}

/* The kind-specific rules: operand dtypes, counts and shapes. */
static int check_operands(vctx *v, int32_t i)
{
    const cfx_prog *p = v->p;
    const cfx_record *r = &p->records[i];
    const cfx_slot *S = p->slots;
    const cfx_slot *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    const char *f = rec_fields[r->kind];
    if (f[0] == 's') a = &S[r->a];
    if (f[1] == 's') b = &S[r->b];
    if (f[2] == 's') c = &S[r->c];
    if (f[3] == 's') d = &S[r->d];

    switch ((enum rec_kind)r->kind) {
    case REC_JUMP_FALSE:
    case REC_JUMP_TRUE:
    case REC_ASSERT:
        if (a->dtype != CFX_BOOL || a->count != 1)
            return vfail(v, i, "the condition must be a one-element bool");
        break;
    case REC_SWITCH:
        if (a->dtype != CFX_I32 || a->count != 1)
            return vfail(v, i, "the switch value must be a one-element i32");
        if (r->c < 0 || (int64_t)r->b + r->c + 1 > p->ntable)
            return vfail(v, i, "table range %d + %d + 1 is outside the table of %d", r->b, r->c,
                         p->ntable);
        for (int32_t k = 0; k <= r->c; k++)
            if (p->table[r->b + k] < 0 || p->table[r->b + k] >= p->nrecords)
                return vfail(v, i, "switch target %d is out of range", p->table[r->b + k]);
        break;
    case REC_CHECK_INDEX:
        if (!is_int(a->dtype) || a->count != 1)
            return vfail(v, i, "the index must be a one-element integer");
        if (r->b < 1)
            return vfail(v, i, "the row count %d must be at least 1", r->b);
        if (r->d < 0 || r->d >= CFX_MAX_RANK)
            return vfail(v, i, "the dimension %d is not one of a tensor's", r->d);
        break;
    case REC_CHECK_DIVIDE:
        if (!is_int(a->dtype))
            return vfail(v, i, "the divisor must be an integer");
        break;
    case REC_CHECK_STEP:
        if (!is_int(a->dtype) || a->count != 1)
            return vfail(v, i, "the step must be a one-element integer");
        break;
    case REC_UNARY:
        if (!unary_ok(r->op, b->dtype) || a->dtype != b->dtype || a->count != b->count)
            return vfail(v, i, "op %d on these operands is not allowed", r->op);
        break;
    case REC_BINARY: {
        int res = binary_result(r->op, b->dtype);
        if (res < 0 || c->dtype != b->dtype || a->dtype != res)
            return vfail(v, i, "op %d on these operand dtypes is not allowed", r->op);
        if (b->count != c->count && b->count != 1 && c->count != 1)
            return vfail(v, i, "operand counts %lld and %lld do not broadcast",
                         (long long)b->count, (long long)c->count);
        if (a->count != (b->count > c->count ? b->count : c->count))
            return vfail(v, i, "the result's count does not match its operands");
        break;
    }
    case REC_REDUCE: {
        int res = reduce_result(r->op, b->dtype);
        if (res < 0 || a->dtype != res || a->count != 1)
            return vfail(v, i, "reduction %d on these operands is not allowed", r->op);
        break;
    }
    case REC_DOT:
        if (!is_num(b->dtype) || c->dtype != b->dtype || a->dtype != b->dtype ||
            b->count != c->count || a->count != 1)
            return vfail(v, i, "dot needs two numeric operands of one dtype and length");
        break;
    case REC_MATMUL:
        if (!is_num(b->dtype) || c->dtype != b->dtype || a->dtype != b->dtype || r->a == r->b || r->a == r->c)
            return vfail(v, i, "matmul needs three distinct numeric operands of one dtype");
        if (r->d < 0)
            return vfail(v, i, "matmul batch count %d is negative", r->d);
        if (r->d == 0) {
            if (b->rank != 2 || c->dims[0] != b->dims[1] ||
                !((c->rank == 2 && a->rank == 2 && a->dims[0] == b->dims[0] && a->dims[1] == c->dims[1]) ||
                  (c->rank == 1 && a->rank == 1 && a->dims[0] == b->dims[0])))
                return vfail(v, i, "matmul operand shapes are inconsistent");
        } else { /* a batch of d products (rec_matmul) */
            int64_t B = r->d, m = b->rank >= 2 ? b->dims[b->rank - 2] : 1, k = b->rank >= 1 ? b->dims[b->rank - 1] : 1;
            int64_t kc = c->rank >= 2 ? c->dims[c->rank - 2] : c->dims[0], n = c->rank >= 2 ? c->dims[c->rank - 1] : 1;
            if (b->rank < 1 || c->rank < 1 || kc != k)
                return vfail(v, i, "batched matmul needs [..., m, k] @ [..., k, n] (or [k] on either side)");
            if (!batch_count_is(b->count, 1, m * k) && !batch_count_is(b->count, B, m * k))
                return vfail(v, i, "batched matmul's left operand holds %lld elements, not %d matrices [%lld, %lld] or one",
                             (long long)b->count, r->d, (long long)m, (long long)k);
            if (!batch_count_is(c->count, 1, k * n) && (c->rank < 2 || !batch_count_is(c->count, B, k * n)))
                return vfail(v, i, "batched matmul's right operand holds %lld elements, not %d matrices [%lld, %lld] or one",
                             (long long)c->count, r->d, (long long)k, (long long)n);
            if (!batch_count_is(a->count, B, m * n))
                return vfail(v, i, "batched matmul's result holds %lld elements, not %d products [%lld, %lld]",
                             (long long)a->count, r->d, (long long)m, (long long)n);
        }
        break;
    case REC_TRANSPOSE:
        if (a->dtype != b->dtype || r->a == r->b || b->rank != 2 || a->rank != 2 ||
            a->dims[0] != b->dims[1] || a->dims[1] != b->dims[0])
            return vfail(v, i, "transpose operand shapes are inconsistent");
        break;
    case REC_FILL:
        if (a->dtype != b->dtype || b->count != 1)
            return vfail(v, i, "fill needs a one-element value of the result's dtype");
        break;
    case REC_COPY:
        if (a->dtype != b->dtype || a->count != b->count)
            return vfail(v, i, "copy needs operands of one dtype and count");
        break;
    case REC_CAST:
        if (a->count != b->count || (r->a == r->b && a->dtype != b->dtype))
            return vfail(v, i, "cast needs distinct operands of one count");
        break;
    case REC_WHERE: {
        int64_t n = b->count;
        if (c->count > n) n = c->count;
        if (d->count > n) n = d->count;
        if (b->dtype != CFX_BOOL || c->dtype != a->dtype || d->dtype != a->dtype || a->count != n ||
            (b->count != 1 && b->count != n) || (c->count != 1 && c->count != n) ||
            (d->count != 1 && d->count != n))
            return vfail(v, i, "where operands are inconsistent");
        break;
    }
    case REC_GET_ROW:
        if (a->dtype != b->dtype || r->a == r->b || !row_shape(a, b) || !is_int(c->dtype) ||
            c->count != 1)
            return vfail(v, i, "get_row operands are inconsistent");
        break;
    case REC_SET_ROW:
        if (c->dtype != a->dtype || r->a == r->c || !row_shape(c, a) || !is_int(b->dtype) ||
            b->count != 1)
            return vfail(v, i, "set_row operands are inconsistent");
        break;
    case REC_GET_BOX:
    case REC_SET_BOX: {
        const cfx_slot *t = r->kind == REC_GET_BOX ? b : a, *val = r->kind == REC_GET_BOX ? a : b;
        if ((int64_t)r->c + 2 * (int64_t)t->rank > p->ntable)
            return vfail(v, i, "box table range is outside the table");
        int64_t n = 1;
        for (int k = 0; k < t->rank; k++) {
            int32_t st = p->table[r->c + 2 * k], len = p->table[r->c + 2 * k + 1];
            if (st != -1 && (st < 0 || st >= p->nslots || !is_int(S[st].dtype) || S[st].count != 1 || st == r->a))
                return vfail(v, i, "box start slot %d is not a one-element integer it may read", st);
            if (len != -1 && (len < 1 || len > t->dims[k]))
                return vfail(v, i, "box length %d does not fit dimension %d", len, k);
            n *= len < 0 ? 1 : len;
        }
        if (val->count != n || val->dtype != t->dtype || r->a == r->b)
            return vfail(v, i, "box operands are inconsistent");
        break;
    }
    case REC_BROADCAST: {
        int ok = a->dtype == b->dtype && r->a != r->b && b->rank <= a->rank;
        for (int k = 1; ok && k <= b->rank; k++) {
            int32_t sd = b->dims[b->rank - k], dd = a->dims[a->rank - k];
            ok = sd == 1 || sd == dd;
        }
        if (!ok)
            return vfail(v, i, "broadcast operand shapes are inconsistent");
        break;
    }
    case REC_GATHER: {
        /* a's shape is b's with dimension d replaced by c's shape */
        int ok = a->dtype == b->dtype && r->a != r->b && r->a != r->c && is_int(c->dtype) && r->d >= 0 &&
                 r->d < b->rank && a->rank == b->rank - 1 + c->rank && (b->dims[r->d] > 0 || c->count == 0);
        for (int k = 0; ok && k < a->rank; k++) {
            int32_t want = k < r->d ? b->dims[k] : k < r->d + c->rank ? c->dims[k - r->d]
                                                                       : b->dims[k - c->rank + 1];
            ok = a->dims[k] == want;
        }
        if (!ok)
            return vfail(v, i, "gather operands are inconsistent");
        break;
    }
    case REC_PERMUTE: {
        /* c packs a permutation of b's dimensions (3 bits each); a's dims are b's permuted */
        if (a->dtype != b->dtype)
            return vfail(v, i, "a permute's result must have its operand's dtype");
        if (r->a == r->b)
            return vfail(v, i, "a permute cannot write its operand");
        if (a->rank != b->rank)
            return vfail(v, i, "a permute's result has rank %d, its operand rank %d", a->rank, b->rank);
        if (r->c < 0 || (b->rank < CFX_MAX_RANK && (r->c >> (3 * b->rank)) != 0))
            return vfail(v, i, "a permute's axes 0x%x name more dimensions than its operand's %d", r->c, b->rank);
        int seen = 0;
        for (int k = 0; k < b->rank; k++) {
            int j = rec_perm_axis(r->c, k);
            if (j >= b->rank || (seen >> j & 1))
                return vfail(v, i, "a permute's axes 0x%x are not a permutation of %d dimensions", r->c, b->rank);
            seen |= 1 << j;
            if (a->dims[k] != b->dims[j])
                return vfail(v, i, "a permute's result dimension %d is %d, not its operand's dimension %d (%d)", k,
                             (int)a->dims[k], j, (int)b->dims[j]);
        }
        break;
    }
    case REC_REDUCE_AXIS: {
        /* a's shape is b's without dimension c, or with it as 1 (keepdims) */
        int res = reduce_result(r->op, b->dtype);
        if (res < 0 || a->dtype != res)
            return vfail(v, i, "reduction %d along an axis on these operands is not allowed", r->op);
        if (r->c < 0 || r->c >= b->rank)
            return vfail(v, i, "reduction axis %d is out of range for a tensor of rank %d", r->c, b->rank);
        if (r->a == r->b)
            return vfail(v, i, "a reduction along an axis cannot write its operand");
        int keep = a->rank == b->rank, ok = keep || a->rank == b->rank - 1;
        for (int k = 0, j = 0; ok && k < b->rank; k++) {
            if (k == r->c) {
                if (keep)
                    ok = a->dims[j++] == 1;
                continue;
            }
            ok = a->dims[j++] == b->dims[k];
        }
        if (!ok)
            return vfail(v, i, "the result's shape is not the operand's without axis %d", r->c);
        break;
    }
    case REC_CHECK_BOUND:
        if (!is_int(a->dtype) || a->count != 1 || !is_int(b->dtype) || b->count != 1)
            return vfail(v, i, "the bound's operands must be one-element integers");
        if (r->d < 0 || r->d > 4)
            return vfail(v, i, "unknown bound %d", r->d);
        break;
    case REC_GET_ITEM:
        if (a->dtype != b->dtype || r->a == r->b || r->a == r->c || r->a == r->d || !row_shape(a, b) ||
            !is_int(c->dtype) || c->count != 1 || !is_int(d->dtype) || d->count != 1)
            return vfail(v, i, "get_item operands are inconsistent");
        break;
    case REC_SET_ITEM:
        if (c->dtype != a->dtype || r->a == r->b || r->a == r->c || r->a == r->d || !row_shape(c, a) ||
            !is_int(b->dtype) || b->count != 1 || !is_int(d->dtype) || d->count != 1)
            return vfail(v, i, "set_item operands are inconsistent");
        break;
    case REC_CALL: {
        if (r->a < 0 || r->a >= p->nkernels)
            return vfail(v, i, "kernel %d is out of range", r->a);
        if (r->c < 0 || r->d < 0 || r->d > r->c || (int64_t)r->b + r->c > p->ntable)
            return vfail(v, i, "operand list is outside the table");
        for (int32_t k = 0; k < r->c; k++) {
            int32_t s = p->table[r->b + k];
            if (s < 0 || s >= p->nslots)
                return vfail(v, i, "operand slot %d is out of range", s);
            if (k >= r->d) {
                if (S[s].kind == SLOT_CONST)
                    return vfail(v, i, "writes the constant slot %d", s);
                for (int32_t q = r->d; q < k; q++)
                    if (p->table[r->b + q] == s)
                        return vfail(v, i, "slot %d is a result twice", s);
            }
            if ((r->flags & REC_F_SCALAR) && S[s].count != 1)
                return vfail(v, i, "flagged scalar but slot %d has %lld elements", s,
                             (long long)S[s].count);
        }
        break;
    }
    case REC_HALT:
    case REC_JUMP:
    case REC_TICK:
    case REC_PRINT:
    case REC_IOTA:
        break;
    }
    return 0;
}

static int check_record(vctx *v, int32_t i)
{
    const cfx_prog *p = v->p;
    const cfx_record *r = &p->records[i];
    if (r->kind >= REC_COUNT)
        return vfail(v, -1, "record %d has an unknown kind %d", i, r->kind);
    if (r->flags & ~REC_F_SCALAR)
        return vfail(v, i, "unknown flags 0x%x", r->flags);
    int has_op = r->kind == REC_UNARY || r->kind == REC_BINARY || r->kind == REC_REDUCE ||
                 r->kind == REC_REDUCE_AXIS;
    if (has_op ? r->op >= OP_COUNT : r->op != 0)
        return vfail(v, i, "bad op %d", r->op);
    const char *f = rec_fields[r->kind];
    const int32_t field[4] = {r->a, r->b, r->c, r->d};
    for (int k = 0; k < 4; k++) {
        int32_t x = field[k];
        switch (f[k]) {
        case '-':
            if (x != 0)
                return vfail(v, i, "unused field %c is %d, not 0", 'a' + k, x);
            break;
        case 's':
            if (x < 0 || x >= p->nslots)
                return vfail(v, i, "slot %c = %d is out of range [0, %d)", 'a' + k, x, p->nslots);
            if ((r->flags & REC_F_SCALAR) && p->slots[x].count != 1)
                return vfail(v, i, "flagged scalar but slot %d has %lld elements", x,
                             (long long)p->slots[x].count);
            break;
        case 't':
            if (x < 0 || x >= p->nrecords)
                return vfail(v, i, "jump target %d is out of range [0, %d)", x, p->nrecords);
            break;
        case 'm':
            if (x != -1 && !valid_string(p, x))
                return vfail(v, i, "string offset %d is out of range", x);
            break;
        case 'k':
            if (x < 0 || x > p->ntable)
                return vfail(v, i, "table offset %d is out of range", x);
            break;
        default: /* 'n': checked by kind */
            break;
        }
    }
    int32_t w = written_slot(r);
    if (w >= 0 && p->slots[w].kind == SLOT_CONST)
        return vfail(v, i, "writes the constant slot %d", w);
    int want = 0;
    if (r->kind == REC_UNARY || r->kind == REC_BINARY || r->kind == REC_REDUCE || r->kind == REC_REDUCE_AXIS ||
        r->kind == REC_CAST)
        want = p->slots[r->b].dtype;
    else if (f[0] == 's')
        want = p->slots[r->a].dtype;
    if (r->dtype != want)
        return vfail(v, i, "dtype field is %d, expected %d", r->dtype, want);
    return check_operands(v, i);
}

/* Every cycle of the control-flow graph must pass a TICK: the graph without the edges out of
 * TICK records is acyclic. Iterative depth-first search (no recursion on big programs). */
static int check_loops(vctx *v)
{
    const cfx_prog *p = v->p;
    int rc = 0;
    int32_t n = p->nrecords;
    uint8_t *color = calloc((size_t)n, 1); /* 0 new, 1 on the stack, 2 done */
    int32_t *stack = malloc(sizeof(int32_t) * (size_t)n);
    int32_t *next = calloc((size_t)n, sizeof(int32_t)); /* successor index to visit next */
    if (!color || !stack || !next) {
        rc = vfail(v, -1, "out of memory");
        goto done;
    }
    for (int32_t root = 0; root < n && rc == 0; root++) {
        if (color[root])
            continue;
        int32_t top = 0;
        stack[top++] = root;
        color[root] = 1;
        while (top > 0) {
            int32_t x = stack[top - 1];
            const cfx_record *r = &p->records[x];
            int32_t nsucc, succ;
            if (r->kind == REC_TICK)
                nsucc = 0;
            else if (r->kind == REC_SWITCH)
                nsucc = r->c + 1;
            else {
                int32_t tmp[2];
                nsucc = rec_successors(p, x, tmp, 2);
            }
            if (next[x] >= nsucc) {
                color[x] = 2;
                top--;
                continue;
            }
            if (r->kind == REC_SWITCH) {
                succ = p->table[r->b + next[x]];
            } else {
                int32_t tmp[2];
                rec_successors(p, x, tmp, 2);
                succ = tmp[next[x]];
            }
            next[x]++;
            if (color[succ] == 1) {
                rc = vfail(v, succ, "a loop through this record passes no TICK");
                break;
            }
            if (color[succ] == 0) {
                color[succ] = 1;
                stack[top++] = succ;
            }
        }
    }
done:
    free(color);
    free(stack);
    free(next);
    return rc;
}

/* Row indices: GET_ROW and SET_ROW trust that their index is in range. The index is either a
 * constant in range, or a slot that a CHECK_INDEX with the same row count checked on every
 * path to the record, with no write to the slot since. This is a forward must-analysis over
 * facts (slot, rows), one bit each, iterated to its fixpoint. */
#define MAX_FACT_WORDS ((int64_t)1 << 20)

typedef struct fact {
    int32_t slot, rows;
} fact;

static int cmp_fact(const void *x, const void *y)
{
    const fact *a = x, *b = y;
    if (a->slot != b->slot)
        return a->slot < b->slot ? -1 : 1;
    return a->rows < b->rows ? -1 : a->rows > b->rows;
}

/* Index of fact (slot, rows) in the sorted array, or -1. With rows = -1: the first fact about
 * the slot, or -1. */
static int32_t find_fact(const fact *facts, int32_t n, int32_t slot, int32_t rows)
{
    int32_t lo = 0, hi = n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (facts[mid].slot < slot || (facts[mid].slot == slot && rows >= 0 && facts[mid].rows < rows))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < n && facts[lo].slot == slot && (rows < 0 || facts[lo].rows == rows))
        return lo;
    return -1;
}

static int row_access(const cfx_record *r, int32_t *index_slot, int32_t *tensor_slot)
{
    if (r->kind == REC_GET_ROW) {
        *index_slot = r->c;
        *tensor_slot = r->b;
        return 1;
    }
    if (r->kind == REC_SET_ROW) {
        *index_slot = r->b;
        *tensor_slot = r->a;
        return 1;
    }
    return 0;
}

static void clear_slot_facts(uint64_t *set, const fact *facts, int32_t nfacts, int32_t slot)
{
    for (int32_t f = find_fact(facts, nfacts, slot, -1); f >= 0 && f < nfacts && facts[f].slot == slot; f++)
        set[f / 64] &= ~((uint64_t)1 << (f % 64));
}

static int writes_slot(const cfx_prog *p, const cfx_record *r, int32_t slot)
{
    if (written_slot(r) == slot)
        return 1;
    if (r->kind == REC_CALL)
        for (int32_t k = r->d; k < r->c; k++)
            if (p->table[r->b + k] == slot)
                return 1;
    return 0;
}

/* The common case, proven without the analysis: walking back from the access over at most
 * `LOCAL_WINDOW` records that fall through to each other (no jump lands in between), a
 * CHECK_INDEX of the same slot and row count comes before any write to the slot. */
#define LOCAL_WINDOW 64

static int checked_locally(const cfx_prog *p, const uint8_t *is_target, int32_t i, int32_t slot,
                           int32_t rows)
{
    if (is_target[i])
        return 0;
    for (int32_t j = i - 1; j >= 0 && j >= i - LOCAL_WINDOW; j--) {
        const cfx_record *r = &p->records[j];
        if (r->kind == REC_JUMP || r->kind == REC_SWITCH || r->kind == REC_HALT)
            return 0; /* does not fall through: j + 1 is reached only by jumps */
        if (r->kind == REC_CHECK_INDEX && r->a == slot && r->b == rows)
            return 1;
        if (writes_slot(p, r, slot) || is_target[j])
            return 0;
    }
    return 0;
}

static int check_indices(vctx *v)
{
    const cfx_prog *p = v->p;
    int rc = 0;
    int32_t nfacts = 0, nneeded = 0;
    fact *facts = NULL, *needed = NULL;
    int32_t *gen = NULL, *succ = NULL;
    uint64_t *in = NULL, *cur = NULL;
    uint8_t *is_target = NULL, *unproven = NULL;

    is_target = calloc((size_t)p->nrecords, 1);
    unproven = calloc((size_t)p->nrecords, 1);
    needed = malloc(sizeof *needed * (size_t)p->nrecords);
    if (!is_target || !unproven || !needed) {
        rc = vfail(v, -1, "out of memory");
        goto done;
    }
    for (int32_t i = 0; i < p->nrecords; i++) {
        const cfx_record *r = &p->records[i];
        if (r->kind == REC_JUMP)
            is_target[r->a] = 1;
        else if (r->kind == REC_JUMP_FALSE || r->kind == REC_JUMP_TRUE)
            is_target[r->b] = 1;
        else if (r->kind == REC_SWITCH)
            for (int32_t k = 0; k <= r->c; k++)
                is_target[p->table[r->b + k]] = 1;
    }
    for (int32_t i = 0; i < p->nrecords; i++) {
        const cfx_record *r = &p->records[i];
        int32_t is, ts;
        if (!row_access(r, &is, &ts))
            continue;
        const cfx_slot *ix = &p->slots[is], *t = &p->slots[ts];
        if (ix->kind == SLOT_CONST) {
            int64_t val = k_load_int(ix->dtype, p->consts + ix->offset);
            if (val < -(int64_t)t->dims[0] || val >= t->dims[0]) {
                rc = vfail(v, i, "constant row index %lld is outside [-%d, %d)", (long long)val,
                           t->dims[0], t->dims[0]);
                goto done;
            }
        } else if (!checked_locally(p, is_target, i, is, t->dims[0])) {
            unproven[i] = 1;
            needed[nneeded++] = (fact){is, t->dims[0]};
        }
    }
    if (nneeded == 0)
        goto done;

    /* the facts worth tracking: (slot, rows) that some CHECK_INDEX establishes and some
     * unproven access needs, sorted */
    qsort(needed, (size_t)nneeded, sizeof *needed, cmp_fact);
    facts = malloc(sizeof *facts * (size_t)p->nrecords);
    gen = malloc(sizeof *gen * (size_t)p->nrecords);
    if (!facts || !gen) {
        rc = vfail(v, -1, "out of memory");
        goto done;
    }
    for (int32_t i = 0; i < p->nrecords; i++) {
        const cfx_record *r = &p->records[i];
        if (r->kind == REC_CHECK_INDEX && find_fact(needed, nneeded, r->a, r->b) >= 0)
            facts[nfacts++] = (fact){r->a, r->b};
    }
    qsort(facts, (size_t)nfacts, sizeof *facts, cmp_fact);
    int32_t unique = 0;
    for (int32_t f = 0; f < nfacts; f++)
        if (unique == 0 || cmp_fact(&facts[unique - 1], &facts[f]) != 0)
            facts[unique++] = facts[f];
    nfacts = unique;
    for (int32_t i = 0; i < p->nrecords; i++)
        gen[i] = p->records[i].kind == REC_CHECK_INDEX
                     ? find_fact(facts, nfacts, p->records[i].a, p->records[i].b)
                     : -1;
    int64_t words = nfacts > 0 ? (nfacts + 63) / 64 : 1;
    if (words * p->nrecords > MAX_FACT_WORDS) {
        rc = vfail(v, -1, "too many row index checks to verify (%d checks in %d records)", nfacts,
                   p->nrecords);
        goto done;
    }
    in = malloc(sizeof(uint64_t) * (size_t)(words * p->nrecords));
    cur = malloc(sizeof(uint64_t) * (size_t)words);
    int32_t max_succ = 2;
    for (int32_t i = 0; i < p->nrecords; i++)
        if (p->records[i].kind == REC_SWITCH && p->records[i].c + 1 > max_succ)
            max_succ = p->records[i].c + 1;
    succ = malloc(sizeof(int32_t) * (size_t)max_succ);
    if (!in || !cur || !succ) {
        rc = vfail(v, -1, "out of memory");
        goto done;
    }
    /* everything holds (top) until a path shows otherwise; nothing holds at the entry; facts
     * only ever get removed, so this ends */
    memset(in, 0xff, sizeof(uint64_t) * (size_t)(words * p->nrecords));
    memset(in, 0, sizeof(uint64_t) * (size_t)words);
    int changed = 1;
    while (changed) {
        changed = 0;
        for (int32_t i = 0; i < p->nrecords; i++) {
            const cfx_record *r = &p->records[i];
            memcpy(cur, in + i * words, sizeof(uint64_t) * (size_t)words);
            int32_t w = written_slot(r);
            if (w >= 0)
                clear_slot_facts(cur, facts, nfacts, w);
            if (r->kind == REC_CALL)
                for (int32_t k = r->d; k < r->c; k++)
                    clear_slot_facts(cur, facts, nfacts, p->table[r->b + k]);
            if (gen[i] >= 0)
                cur[gen[i] / 64] |= (uint64_t)1 << (gen[i] % 64);
            int32_t n = rec_successors(p, i, succ, max_succ);
            for (int32_t k = 0; k < n; k++) {
                uint64_t *t = in + succ[k] * words;
                for (int64_t q = 0; q < words; q++) {
                    uint64_t nv = t[q] & cur[q];
                    if (nv != t[q]) {
                        t[q] = nv;
                        changed = 1;
                    }
                }
            }
        }
    }
    for (int32_t i = 0; i < p->nrecords; i++) {
        int32_t is, ts;
        if (!unproven[i] || !row_access(&p->records[i], &is, &ts))
            continue;
        int32_t f = find_fact(facts, nfacts, is, p->slots[ts].dims[0]);
        if (f < 0 || !((in[i * words + f / 64] >> (f % 64)) & 1)) {
            rc = vfail(v, i, "row index slot %d is not checked against %d rows on every path", is,
                       p->slots[ts].dims[0]);
            goto done;
        }
    }
done:
    free(is_target);
    free(unproven);
    free(needed);
    free(facts);
    free(gen);
    free(in);
    free(cur);
    free(succ);
    return rc;
}

int prog_validate(const cfx_prog *p, char *err, size_t errlen)
{
    vctx v = {p, err, errlen};
    if (!p || !p->name || !p->file)
        return vfail(&v, -1, "no program");
    if (p->nrecords < 1 || !p->records || p->nslots < 0 || (p->nslots > 0 && !p->slots) ||
        p->ntable < 0 || (p->ntable > 0 && !p->table) || p->nstrings < 0 ||
        (p->nstrings > 0 && !p->strings) || p->nkernels < 0 || (p->nkernels > 0 && !p->kernels))
        return vfail(&v, -1, "bad array sizes");
    if (p->nstrings > 0 && p->strings[p->nstrings - 1] != '\0')
        return vfail(&v, -1, "the string table is not NUL-terminated");
    if (p->arena_bytes < 0 || p->arena_bytes > CFX_MAX_ARENA || p->const_bytes < 0 ||
        p->const_bytes > p->arena_bytes || (p->const_bytes > 0 && !p->consts))
        return vfail(&v, -1, "bad arena size %lld (constants %lld)", (long long)p->arena_bytes,
                     (long long)p->const_bytes);
    for (int32_t i = 0; i < p->nslots; i++)
        if (check_slot(&v, i))
            return -1;
    if (check_overlap(&v))
        return -1;
    if (check_params(&v, p->inputs, p->ninputs, SLOT_INPUT, "input") ||
        check_params(&v, p->results, p->nresults, SLOT_RESULT, "result"))
        return -1;
    for (int32_t i = 0; i < p->nkernels; i++) {
        if (!valid_string(p, p->kernels[i]))
            return vfail(&v, -1, "kernel %d has a bad name offset", i);
        if (p->kernel_form && (!p->kernel_source || p->kernel_form[i] > KERNEL_WHOLE ||
                               (p->kernel_form[i] != KERNEL_BINARY) != (p->kernel_source[i] >= 0) ||
                               (p->kernel_source[i] >= 0 && !valid_string(p, p->kernel_source[i]))))
            return vfail(&v, -1, "kernel %d has a bad form or source", i);
    }
    for (int32_t i = 0; i < p->nrecords; i++)
        if (check_record(&v, i))
            return -1;
    if (p->records[p->nrecords - 1].kind != REC_HALT)
        return vfail(&v, -1, "the last record is not HALT");
    if (check_loops(&v) || check_indices(&v))
        return -1;
    return 0;
}
