/* dump.c: prog_dump, the readable listing of a program (`cfx dump`).
 *
 * The format (stable: golden tests compare it; change it only with them):
 *
 *   graph count: 9 records, 7 slots, arena 112 bytes (32 of constants)
 *   kernels: foo bar                      <- only when the graph calls application kernels
 *   slots:
 *     s0    n        i32        input  @32
 *     s3    -        bool       temp   @80
 *     s4    -        i32        const  @0 = 1
 *     s5    -        f32[3]     const  @16 = [1.5, 0.1, -2]
 *   records:
 *        0  TICK                                      ; 2:3
 *        1  BINARY       lt s3 s2 s0                  ; 2:9
 *        2  JUMP_FALSE   s3 ->7                       ; 2:3
 *        5  ASSERT       s3 "oops \"x\""              ; 5:5
 *
 * A slot line (`  %-5s %-8s %-10s %-6s @OFFSET`): `s` and the index, the variable's name or
 * `-`, its type (`i32` for a scalar, `f32[2, 3]`),
 * its kind (temp var const input result), `@` its arena offset, and for a constant ` = ` its
 * value (nested brackets for tensors, at most 16 elements then `...`; reals in the shortest
 * form that reads back, bools true/false). A record line (`  %4d  %-12s %-28s ; LINE:COL`):
 * the index, the kind name, the op's name for UNARY/BINARY/REDUCE, then the operands a, b, c, d in
 * order by role, each unused one left out: a slot `s3`, a jump target `->12`, a string
 * quoted (`-` for none), a table offset `k0`, an integer plain; SWITCH adds its table as
 * `[->4 ->6 default ->8]`, CALL its kernel and operands as `[foo: s1 s2 -> s3]`, and GET_BOX
 * and SET_BOX their box as `[s4:ix -:3]`, per dimension the start slot (`-`: 0) and the length
 * (`ix`: an index).
 */
#include "program.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "host/util/strbuf.h"

/* ==== dump ================================================================================== */
static const char *const slot_kind_names[] = {"temp", "var", "const", "input", "result"};

static void type_str(const cfx_slot *s, char *buf, size_t len)
{
    static const char *const dt[] = {"f32", "f64", "i32", "i64", "bool"};
    int n = snprintf(buf, len, "%s", s->dtype <= CFX_BOOL ? dt[s->dtype] : "?");
    if (s->rank == 0)
        return;
    for (int d = 0; d < s->rank && d < CFX_MAX_RANK && n > 0 && (size_t)n < len; d++)
        n += snprintf(buf + n, len - (size_t)n, "%s%d", d ? ", " : "[", s->dims[d]);
    if (n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "]");
}

/* Shortest decimal that reads back to the same value (up to `max` significant digits). */
static void real_str(double x, int is_f32, char *buf, size_t len)
{
    if (isnan(x)) {
        snprintf(buf, len, "nan");
        return;
    }
    if (isinf(x)) {
        snprintf(buf, len, x < 0 ? "-inf" : "inf");
        return;
    }
    int max = is_f32 ? 9 : 17;
    for (int prec = 1; prec <= max; prec++) {
        snprintf(buf, len, "%.*g", prec, x);
        double back = strtod(buf, NULL);
        if (is_f32 ? (float)back == (float)x : back == x)
            return;
    }
}

static void elem_str(int dtype, const uint8_t *data, int64_t e, char *buf, size_t len)
{
    switch (dtype) {
    case CFX_F32: {
        float f;
        memcpy(&f, data + e * 4, 4);
        real_str(f, 1, buf, len);
        break;
    }
    case CFX_F64: {
        double x;
        memcpy(&x, data + e * 8, 8);
        real_str(x, 0, buf, len);
        break;
    }
    case CFX_I32: {
        int32_t x;
        memcpy(&x, data + e * 4, 4);
        snprintf(buf, len, "%d", x);
        break;
    }
    case CFX_I64: {
        int64_t x;
        memcpy(&x, data + e * 8, 8);
        snprintf(buf, len, "%lld", (long long)x);
        break;
    }
    default:
        snprintf(buf, len, "%s", data[e] ? "true" : "false");
        break;
    }
}

/* Nested brackets, row-major, at most 16 elements then `...`. */
static void value_str(strbuf *out, const cfx_slot *s, const uint8_t *data)
{
    char buf[40];
    if (s->rank == 0) {
        elem_str(s->dtype, data, 0, buf, sizeof buf);
        sb_puts(out, buf);
        return;
    }
    int64_t shown = s->count < 16 ? s->count : 16;
    for (int64_t e = 0; e < shown; e++) {
        /* open a bracket for every dimension whose index starts at e */
        int64_t span = s->count;
        for (int d = 0; d < s->rank; d++) {
            if (e % span == 0)
                sb_puts(out, "[");
            else if (d == s->rank - 1 || e % (span / s->dims[d]) != 0)
                break;
            span /= s->dims[d];
        }
        elem_str(s->dtype, data, e, buf, sizeof buf);
        sb_puts(out, buf);
        if (e + 1 == shown && shown < s->count) {
            sb_puts(out, ", ...");
            for (int d = 0; d < s->rank; d++)
                sb_puts(out, "]");
            return;
        }
        int64_t close = 0;
        span = 1;
        for (int d = s->rank - 1; d >= 0; d--) {
            span *= s->dims[d];
            if ((e + 1) % span == 0)
                close++;
            else
                break;
        }
        for (int64_t k = 0; k < close; k++)
            sb_puts(out, "]");
        if (e + 1 < shown)
            sb_puts(out, ", ");
    }
}

static void quoted(strbuf *out, const cfx_prog *p, int32_t m)
{
    if (m < 0 || m >= p->nstrings) {
        sb_puts(out, "-");
        return;
    }
    sb_puts(out, "\"");
    for (const char *c = p->strings + m; *c; c++) {
        if (*c == '"' || *c == '\\')
            sb_printf(out, "\\%c", *c);
        else if ((unsigned char)*c < 32)
            sb_printf(out, "\\x%02x", (unsigned char)*c);
        else
            sb_append(out, c, 1);
    }
    sb_puts(out, "\"");
}

static const char *string_at(const cfx_prog *p, int32_t m)
{
    return m >= 0 && m < p->nstrings ? p->strings + m : "?";
}

static void record_operands(strbuf *ops, const cfx_prog *p, const cfx_record *r)
{
    const char *f = r->kind < REC_COUNT ? rec_fields[r->kind] : "nnnn";
    const int32_t field[4] = {r->a, r->b, r->c, r->d};
    int first = 1;
    if ((r->kind == REC_UNARY || r->kind == REC_BINARY || r->kind == REC_REDUCE || r->kind == REC_REDUCE_AXIS)) {
        sb_puts(ops, op_name(r->op));
        first = 0;
    }
    for (int k = 0; k < 4; k++) {
        if (f[k] == '-' || (r->kind == REC_MATMUL && k == 3 && field[k] == 0))
            continue; /* a plain product's batch count 0 is not shown */
        if (!first)
            sb_puts(ops, " ");
        first = 0;
        if (r->kind == REC_MATMUL && k == 3) {
            sb_printf(ops, "batch %d", field[k]);
            continue;
        }
        if (r->kind == REC_PERMUTE && k == 2 && r->a >= 0 && r->a < p->nslots) {
            /* the axes, as numpy's transpose takes them */
            sb_puts(ops, "axes (");
            for (int d = 0; d < p->slots[r->a].rank; d++)
                sb_printf(ops, "%s%d", d ? ", " : "", rec_perm_axis(field[k], d));
            sb_puts(ops, ")");
            continue;
        }
        switch (f[k]) {
        case 's': sb_printf(ops, "s%d", field[k]); break;
        case 't': sb_printf(ops, "->%d", field[k]); break;
        case 'm': quoted(ops, p, field[k]); break;
        case 'k': sb_printf(ops, "k%d", field[k]); break;
        default: sb_printf(ops, "%d", field[k]); break;
        }
    }
    if (r->kind == REC_SWITCH && r->c >= 0 && r->b >= 0 && (int64_t)r->b + r->c + 1 <= p->ntable) {
        sb_puts(ops, " [");
        for (int32_t k = 0; k <= r->c; k++)
            sb_printf(ops, "%s->%d", k == 0 ? "" : k == r->c ? " default " : " ", p->table[r->b + k]);
        sb_puts(ops, "]");
    }
    if ((r->kind == REC_GET_BOX || r->kind == REC_SET_BOX) && r->c >= 0 && r->a >= 0 && r->b >= 0 &&
        r->a < p->nslots && r->b < p->nslots) {
        /* per dimension the start slot (- for 0) and the length (ix for an index) */
        const cfx_slot *t = &p->slots[r->kind == REC_GET_BOX ? r->b : r->a];
        if ((int64_t)r->c + 2 * t->rank <= p->ntable) {
            sb_puts(ops, " [");
            for (int d = 0; d < t->rank; d++) {
                int32_t st = p->table[r->c + 2 * d], len = p->table[r->c + 2 * d + 1];
                if (st >= 0)
                    sb_printf(ops, "%ss%d", d ? " " : "", st);
                else
                    sb_printf(ops, "%s-", d ? " " : "");
                if (len < 0)
                    sb_puts(ops, ":ix");
                else
                    sb_printf(ops, ":%d", len);
            }
            sb_puts(ops, "]");
        }
    }
    if (r->kind == REC_CALL && r->c >= 0 && r->b >= 0 && (int64_t)r->b + r->c <= p->ntable) {
        sb_printf(ops, " [%s:", r->a >= 0 && r->a < p->nkernels ? string_at(p, p->kernels[r->a]) : "?");
        for (int32_t k = 0; k < r->c; k++)
            sb_printf(ops, "%s s%d", k == r->d ? " ->" : "", p->table[r->b + k]);
        if (r->d == r->c)
            sb_puts(ops, " ->");
        sb_puts(ops, "]");
    }
}

void prog_dump(const cfx_prog *p, struct strbuf *out)
{
    char type[64];
    sb_printf(out, "graph %s: %d records, %d slots, arena %lld bytes (%lld of constants)\n",
              p->name ? p->name : "?", p->nrecords, p->nslots, (long long)p->arena_bytes,
              (long long)p->const_bytes);
    if (p->nkernels > 0) {
        sb_puts(out, "kernels:");
        for (int32_t i = 0; i < p->nkernels; i++)
            sb_printf(out, " %s", string_at(p, p->kernels[i]));
        sb_puts(out, "\n");
    }
    sb_puts(out, "slots:\n");
    for (int32_t i = 0; i < p->nslots; i++) {
        const cfx_slot *s = &p->slots[i];
        char idx[16];
        snprintf(idx, sizeof idx, "s%d", i);
        type_str(s, type, sizeof type);
        sb_printf(out, "  %-5s %-8s %-10s %-6s @%lld", idx, s->name >= 0 ? string_at(p, s->name) : "-",
                  type, s->kind <= SLOT_RESULT ? slot_kind_names[s->kind] : "?",
                  (long long)s->offset);
        if (s->kind == SLOT_CONST && s->offset >= 0 && s->offset + slot_bytes(s) <= p->const_bytes) {
            sb_puts(out, " = ");
            value_str(out, s, p->consts + s->offset);
        }
        sb_puts(out, "\n");
    }
    sb_puts(out, "records:\n");
    for (int32_t i = 0; i < p->nrecords; i++) {
        const cfx_record *r = &p->records[i];
        strbuf ops = {0};
        record_operands(&ops, p, r);
        sb_printf(out, "  %4d  %-12s %-28s ; %d:%d\n", i,
                  r->kind < REC_COUNT ? rec_names[r->kind] : "?", sb_str(&ops), r->line, r->col);
        sb_free(&ops);
    }
}
