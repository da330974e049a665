/* test_kernels.c: every op body in kernels/ against hand-computed values, for every dtype it
 * takes, including the edge rules of kernels.h (wrapping, INT_MIN / -1, pow with negative
 * exponents, NaN in min/max/argmax, saturating casts, first index on ties, broadcasting),
 * and reductions split into shares merged in different orders. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/kernels.h"
#include "host/program/program.h"
#include "testutil.h"

/* ---- one-element helpers: run the range body on [0, 1) and the scalar dispatcher, and
 * check that both give the same answer before returning it ---- */
static int32_t bin_i32(int op, int32_t a, int32_t b)
{
    int32_t range = 0x5a5a5a5a, scalar = 0x5a5a5a5a;
    k_binary(op, K_I32, &range, &a, 1, &b, 1, 0, 1);
    k_binary1_i32(op, &scalar, a, b);
    CHECK_INT(range, scalar);
    return range;
}

static int64_t bin_i64(int op, int64_t a, int64_t b)
{
    int64_t range = 0, scalar = 1;
    k_binary(op, K_I64, &range, &a, 1, &b, 1, 0, 1);
    k_binary1_i64(op, &scalar, a, b);
    CHECK_INT(range, scalar);
    return range;
}

static float bin_f32(int op, float a, float b)
{
    float range = 0, scalar = 1;
    k_binary(op, K_F32, &range, &a, 1, &b, 1, 0, 1);
    k_binary1_f32(op, &scalar, a, b);
    CHECK(memcmp(&range, &scalar, sizeof range) == 0);
    return range;
}

static double bin_f64(int op, double a, double b)
{
    double range = 0, scalar = 1;
    k_binary(op, K_F64, &range, &a, 1, &b, 1, 0, 1);
    k_binary1_f64(op, &scalar, a, b);
    CHECK(memcmp(&range, &scalar, sizeof range) == 0);
    return range;
}

/* comparisons write one bool byte whatever the operand dtype */
static int cmp_f32(int op, float a, float b)
{
    uint8_t range = 7, scalar = 7;
    k_binary(op, K_F32, &range, &a, 1, &b, 1, 0, 1);
    k_binary1_f32(op, &scalar, a, b);
    CHECK_INT(range, scalar);
    return range;
}

static int cmp_i32(int op, int32_t a, int32_t b)
{
    uint8_t range = 7, scalar = 7;
    k_binary(op, K_I32, &range, &a, 1, &b, 1, 0, 1);
    k_binary1_i32(op, &scalar, a, b);
    CHECK_INT(range, scalar);
    return range;
}

static int cmp_i64(int op, int64_t a, int64_t b)
{
    uint8_t range = 7, scalar = 7;
    k_binary(op, K_I64, &range, &a, 1, &b, 1, 0, 1);
    k_binary1_i64(op, &scalar, a, b);
    CHECK_INT(range, scalar);
    return range;
}

static int cmp_f64(int op, double a, double b)
{
    uint8_t range = 7, scalar = 7;
    k_binary(op, K_F64, &range, &a, 1, &b, 1, 0, 1);
    k_binary1_f64(op, &scalar, a, b);
    CHECK_INT(range, scalar);
    return range;
}

static int bin_b(int op, int a, int b)
{
    uint8_t x = (uint8_t)a, y = (uint8_t)b, range = 7, scalar = 7;
    k_binary(op, K_BOOL, &range, &x, 1, &y, 1, 0, 1);
    k_binary1_b(op, &scalar, x, y);
    CHECK_INT(range, scalar);
    return range;
}

static int32_t un_i32(int op, int32_t a)
{
    int32_t range = 0, scalar = 1;
    k_unary(op, K_I32, &range, &a, 0, 1);
    k_unary1_i32(op, &scalar, a);
    CHECK_INT(range, scalar);
    return range;
}

static int64_t un_i64(int op, int64_t a)
{
    int64_t range = 0, scalar = 1;
    k_unary(op, K_I64, &range, &a, 0, 1);
    k_unary1_i64(op, &scalar, a);
    CHECK_INT(range, scalar);
    return range;
}

static float un_f32(int op, float a)
{
    float range = 0, scalar = 1;
    k_unary(op, K_F32, &range, &a, 0, 1);
    k_unary1_f32(op, &scalar, a);
    CHECK(memcmp(&range, &scalar, sizeof range) == 0);
    return range;
}

static double un_f64(int op, double a)
{
    double range = 0, scalar = 1;
    k_unary(op, K_F64, &range, &a, 0, 1);
    k_unary1_f64(op, &scalar, a);
    CHECK(memcmp(&range, &scalar, sizeof range) == 0);
    return range;
}

static void test_integer_binary(void)
{
    /* i32: wrap through two's complement */
    CHECK_INT(bin_i32(OP_ADD, 2, 3), 5);
    CHECK_INT(bin_i32(OP_ADD, INT32_MAX, 1), INT32_MIN);
    CHECK_INT(bin_i32(OP_SUB, INT32_MIN, 1), INT32_MAX);
    CHECK_INT(bin_i32(OP_SUB, 3, 10), -7);
    CHECK_INT(bin_i32(OP_MUL, -4, 6), -24);
    CHECK_INT(bin_i32(OP_MUL, 65536, 65536), 0);
    CHECK_INT(bin_i32(OP_MUL, INT32_MAX, 2), -2);
    /* C's truncating division and remainder (truncdiv, fmod; integer div is truncdiv) */
    CHECK_INT(bin_i32(OP_TRUNCDIV, 7, 2), 3);
    CHECK_INT(bin_i32(OP_TRUNCDIV, -7, 2), -3);
    CHECK_INT(bin_i32(OP_TRUNCDIV, 7, -2), -3);
    CHECK_INT(bin_i32(OP_TRUNCDIV, -7, -2), 3);
    CHECK_INT(bin_i32(OP_TRUNCDIV, INT32_MIN, -1), INT32_MIN);
    CHECK_INT(bin_i32(OP_TRUNCDIV, 5, 0), 0);
    CHECK_INT(bin_i32(OP_DIV, -7, 2), -3);
    CHECK_INT(bin_i32(OP_FMOD, 7, 3), 1);
    CHECK_INT(bin_i32(OP_FMOD, -7, 2), -1);
    CHECK_INT(bin_i32(OP_FMOD, 7, -2), 1);
    CHECK_INT(bin_i32(OP_FMOD, INT32_MIN, -1), 0);
    CHECK_INT(bin_i32(OP_FMOD, 5, 0), 0);
    /* Python's floor division and remainder, the divisor's sign (by hand: -7 = -4 * 2 + 1) */
    CHECK_INT(bin_i32(OP_FLOORDIV, 7, 2), 3);
    CHECK_INT(bin_i32(OP_FLOORDIV, -7, 2), -4);
    CHECK_INT(bin_i32(OP_FLOORDIV, 7, -2), -4);
    CHECK_INT(bin_i32(OP_FLOORDIV, -7, -2), 3);
    CHECK_INT(bin_i32(OP_FLOORDIV, -6, 2), -3);
    CHECK_INT(bin_i32(OP_FLOORDIV, INT32_MIN, -1), INT32_MIN);
    CHECK_INT(bin_i32(OP_FLOORDIV, INT32_MIN, 2), INT32_MIN / 2);
    CHECK_INT(bin_i32(OP_FLOORDIV, INT32_MAX, -2), -1073741824);
    CHECK_INT(bin_i32(OP_FLOORDIV, 5, 0), 0);
    CHECK_INT(bin_i32(OP_MOD, 7, 3), 1);
    CHECK_INT(bin_i32(OP_MOD, -7, 2), 1);
    CHECK_INT(bin_i32(OP_MOD, 7, -2), -1);
    CHECK_INT(bin_i32(OP_MOD, -7, -2), -1);
    CHECK_INT(bin_i32(OP_MOD, -6, 3), 0);
    CHECK_INT(bin_i32(OP_MOD, INT32_MIN, -1), 0);
    CHECK_INT(bin_i32(OP_MOD, INT32_MIN, 3), 1); /* -2147483648 = -715827883 * 3 + 1 */
    CHECK_INT(bin_i32(OP_MOD, 5, 0), 0);
    CHECK_INT(bin_i32(OP_MIN, -3, 2), -3);
    CHECK_INT(bin_i32(OP_MAX, -3, 2), 2);
    /* pow: repeated multiplication that wraps; negative exponents truncate */
    CHECK_INT(bin_i32(OP_POW, 2, 10), 1024);
    CHECK_INT(bin_i32(OP_POW, -3, 3), -27);
    CHECK_INT(bin_i32(OP_POW, 0, 0), 1);
    CHECK_INT(bin_i32(OP_POW, 7, 0), 1);
    CHECK_INT(bin_i32(OP_POW, 2, 31), INT32_MIN);
    CHECK_INT(bin_i32(OP_POW, 2, 32), 0);
    CHECK_INT(bin_i32(OP_POW, 3, 21), 1870418611); /* 3^21 = 10460353203 - 2 * 2^32 */
    CHECK_INT(bin_i32(OP_POW, 2, -1), 0);
    CHECK_INT(bin_i32(OP_POW, 0, -1), 0);
    CHECK_INT(bin_i32(OP_POW, 1, -5), 1);
    CHECK_INT(bin_i32(OP_POW, -1, -3), -1);
    CHECK_INT(bin_i32(OP_POW, -1, -2), 1);
    CHECK_INT(bin_i32(OP_POW, -2, -2), 0);

    /* i64 */
    CHECK_INT(bin_i64(OP_ADD, INT64_MAX, 1), INT64_MIN);
    CHECK_INT(bin_i64(OP_SUB, INT64_MIN, 1), INT64_MAX);
    CHECK_INT(bin_i64(OP_MUL, (int64_t)1 << 32, (int64_t)1 << 32), 0);
    CHECK_INT(bin_i64(OP_MUL, 3000000000LL, 3), 9000000000LL);
    CHECK_INT(bin_i64(OP_TRUNCDIV, INT64_MIN, -1), INT64_MIN);
    CHECK_INT(bin_i64(OP_TRUNCDIV, -9, 4), -2);
    CHECK_INT(bin_i64(OP_FMOD, INT64_MIN, -1), 0);
    CHECK_INT(bin_i64(OP_FMOD, -9, 4), -1);
    CHECK_INT(bin_i64(OP_FLOORDIV, INT64_MIN, -1), INT64_MIN);
    CHECK_INT(bin_i64(OP_FLOORDIV, -9, 4), -3);
    CHECK_INT(bin_i64(OP_MOD, INT64_MIN, -1), 0);
    CHECK_INT(bin_i64(OP_MOD, -9, 4), 3);
    CHECK_INT(bin_i64(OP_MOD, 9, -4), -3);
    CHECK_INT(bin_i64(OP_MOD, 9, 0), 0);
    CHECK_INT(bin_i64(OP_MIN, INT64_MIN, 0), INT64_MIN);
    CHECK_INT(bin_i64(OP_MAX, INT64_MIN, 0), 0);
    CHECK_INT(bin_i64(OP_POW, 2, 40), (int64_t)1 << 40);
    CHECK_INT(bin_i64(OP_POW, 2, 63), INT64_MIN);
    CHECK_INT(bin_i64(OP_POW, -1, -7), -1);
    CHECK_INT(bin_i64(OP_POW, 5, -1), 0);

    /* comparisons on integers */
    CHECK_INT(cmp_i32(OP_LT, -1, 0), 1);
    CHECK_INT(cmp_i32(OP_LT, 0, 0), 0);
    CHECK_INT(cmp_i32(OP_LE, 0, 0), 1);
    CHECK_INT(cmp_i32(OP_GT, INT32_MAX, INT32_MIN), 1);
    CHECK_INT(cmp_i32(OP_GE, 1, 2), 0);
    CHECK_INT(cmp_i32(OP_EQ, 4, 4), 1);
    CHECK_INT(cmp_i32(OP_NE, 4, 4), 0);
    CHECK_INT(cmp_i64(OP_LT, INT64_MIN, INT64_MAX), 1);
    CHECK_INT(cmp_i64(OP_EQ, (int64_t)1 << 40, ((int64_t)1 << 40) + 1), 0);
    CHECK_INT(cmp_i64(OP_NE, (int64_t)1 << 40, ((int64_t)1 << 40) + 1), 1);
    CHECK_INT(cmp_i64(OP_GE, 3, 3), 1);
    CHECK_INT(cmp_i64(OP_GT, 3, 3), 0);
    CHECK_INT(cmp_i64(OP_LE, 2, 3), 1);
}

/* & | ^ ~ << >> by hand, two's complement; shifts as numpy's (a count outside 0 to width - 1
 * shifts every bit out; >> of a negative rounds toward minus infinity: -7 >> 1 is -4) */
static void test_bitwise(void)
{
    CHECK_INT(bin_i32(OP_BITAND, 12, 10), 8);
    CHECK_INT(bin_i32(OP_BITOR, 12, 10), 14);
    CHECK_INT(bin_i32(OP_BITXOR, 12, 10), 6);
    CHECK_INT(bin_i32(OP_BITAND, -1, 0x7f), 0x7f);
    CHECK_INT(bin_i32(OP_BITXOR, -8, 3), -5);
    CHECK_INT(bin_i32(OP_BITOR, INT32_MIN, 1), INT32_MIN + 1);
    CHECK_INT(un_i32(OP_INVERT, 0), -1);
    CHECK_INT(un_i32(OP_INVERT, 5), -6);
    CHECK_INT(un_i32(OP_INVERT, INT32_MIN), INT32_MAX);
    CHECK_INT(un_i64(OP_INVERT, -((int64_t)1 << 40)), ((int64_t)1 << 40) - 1);
    CHECK_INT(bin_i32(OP_LSHIFT, 3, 4), 48);
    CHECK_INT(bin_i32(OP_LSHIFT, 1, 31), INT32_MIN);
    CHECK_INT(bin_i32(OP_LSHIFT, 3, 31), INT32_MIN); /* the high bit dropped */
    CHECK_INT(bin_i32(OP_LSHIFT, -3, 2), -12);
    CHECK_INT(bin_i32(OP_LSHIFT, 5, 32), 0);
    CHECK_INT(bin_i32(OP_LSHIFT, 5, -1), 0);
    CHECK_INT(bin_i32(OP_RSHIFT, 48, 4), 3);
    CHECK_INT(bin_i32(OP_RSHIFT, -7, 1), -4);
    CHECK_INT(bin_i32(OP_RSHIFT, -1, 31), -1);
    CHECK_INT(bin_i32(OP_RSHIFT, INT32_MIN, 31), -1);
    CHECK_INT(bin_i32(OP_RSHIFT, INT32_MAX, 30), 1);
    CHECK_INT(bin_i32(OP_RSHIFT, 9, 40), 0);
    CHECK_INT(bin_i32(OP_RSHIFT, -9, 40), -1);
    CHECK_INT(bin_i32(OP_RSHIFT, -9, -3), -1);
    CHECK_INT(bin_i64(OP_LSHIFT, 1, 62), (int64_t)1 << 62);
    CHECK_INT(bin_i64(OP_LSHIFT, 1, 63), INT64_MIN);
    CHECK_INT(bin_i64(OP_LSHIFT, 1, 64), 0);
    CHECK_INT(bin_i64(OP_LSHIFT, 1, 32), (int64_t)1 << 32); /* no i32 width here */
    CHECK_INT(bin_i64(OP_RSHIFT, INT64_MIN, 63), -1);
    CHECK_INT(bin_i64(OP_RSHIFT, -((int64_t)1 << 40) - 1, 40), -2);
    CHECK_INT(bin_i64(OP_BITXOR, INT64_MIN, -1), INT64_MAX);
    CHECK_INT(bin_i64(OP_BITAND, ((int64_t)0x5555 << 40) | 0xff, ((int64_t)0xffff << 40) | 0x0f),
              ((int64_t)0x5555 << 40) | 0x0f);
}

static void test_real_binary(void)
{
    float nf = nanf("");
    double nd = nan("");
    CHECK_REAL(bin_f32(OP_ADD, 1.5f, 2.25f), 3.75, 0);
    CHECK_REAL(bin_f32(OP_SUB, 1.5f, 2.25f), -0.75, 0);
    CHECK_REAL(bin_f32(OP_MUL, 1.5f, -2.0f), -3.0, 0);
    CHECK_REAL(bin_f32(OP_DIV, 1.0f, 4.0f), 0.25, 0);
    CHECK(isinf(bin_f32(OP_DIV, 1.0f, 0.0f)));
    CHECK_REAL(bin_f32(OP_FMOD, 7.5f, 2.0f), 1.5, 0);
    CHECK_REAL(bin_f32(OP_FMOD, -7.5f, 2.0f), -1.5, 0); /* sign of the dividend, C's fmod */
    CHECK_REAL(bin_f32(OP_FMOD, 7.5f, -2.0f), 1.5, 0);
    CHECK_REAL(bin_f32(OP_TRUNCDIV, -7.5f, 2.0f), -3.0, 0);
    /* Python's: -7.5 = -4 * 2 + 0.5; 7.5 = -4 * -2 - 0.5 */
    CHECK_REAL(bin_f32(OP_MOD, 7.5f, 2.0f), 1.5, 0);
    CHECK_REAL(bin_f32(OP_MOD, -7.5f, 2.0f), 0.5, 0);
    CHECK_REAL(bin_f32(OP_MOD, 7.5f, -2.0f), -0.5, 0);
    CHECK(bin_f32(OP_MOD, 4.0f, -2.0f) == 0.0f && signbit(bin_f32(OP_MOD, 4.0f, -2.0f)));
    CHECK(isnan(bin_f32(OP_MOD, 1.0f, 0.0f)));
    CHECK_REAL(bin_f32(OP_FLOORDIV, 7.5f, 2.0f), 3.0, 0);
    CHECK_REAL(bin_f32(OP_FLOORDIV, -7.5f, 2.0f), -4.0, 0);
    CHECK_REAL(bin_f32(OP_FLOORDIV, 7.5f, -2.0f), -4.0, 0);
    CHECK(isinf(bin_f32(OP_FLOORDIV, 1.0f, 0.0f)) && bin_f32(OP_FLOORDIV, -1.0f, 0.0f) < 0);
    CHECK(isnan(bin_f32(OP_FLOORDIV, 0.0f, 0.0f)));
    CHECK_REAL(bin_f32(OP_FLOORDIV, -1.0f, INFINITY), -1.0, 0);
    CHECK(bin_f32(OP_FLOORDIV, 0.0f, -3.0f) == 0.0f && signbit(bin_f32(OP_FLOORDIV, 0.0f, -3.0f)));
    CHECK_REAL(bin_f32(OP_MIN, 1.0f, -2.0f), -2.0, 0);
    CHECK_REAL(bin_f32(OP_MAX, 1.0f, -2.0f), 1.0, 0);
    CHECK(isnan(bin_f32(OP_MIN, nf, 1.0f)));
    CHECK(isnan(bin_f32(OP_MIN, 1.0f, nf)));
    CHECK(isnan(bin_f32(OP_MAX, nf, 1.0f)));
    CHECK(isnan(bin_f32(OP_MAX, 1.0f, nf)));
    CHECK_REAL(bin_f32(OP_POW, 2.0f, 10.0f), 1024.0, 0);
    CHECK_REAL(bin_f32(OP_POW, 2.0f, -1.0f), 0.5, 0);
    CHECK_REAL(bin_f32(OP_POW, 4.0f, 0.5f), 2.0, 0);

    CHECK_REAL(bin_f64(OP_ADD, 0.1, 0.2), 0.1 + 0.2, 0);
    CHECK_REAL(bin_f64(OP_SUB, 1e300, -1e300), 2e300, 0);
    CHECK_REAL(bin_f64(OP_MUL, 3.0, 0.5), 1.5, 0);
    CHECK_REAL(bin_f64(OP_DIV, -9.0, 4.0), -2.25, 0);
    CHECK_REAL(bin_f64(OP_FMOD, -9.0, 4.0), -1.0, 0);
    CHECK_REAL(bin_f64(OP_MOD, -9.0, 4.0), 3.0, 0);
    CHECK_REAL(bin_f64(OP_FLOORDIV, -9.0, 4.0), -3.0, 0);
    CHECK_REAL(bin_f64(OP_TRUNCDIV, -9.0, 4.0), -2.0, 0);
    CHECK_REAL(bin_f64(OP_MOD, -1.0, INFINITY), INFINITY, 0);
    /* exact: 0.3 // 0.1 is 2 in Python (0.3 is a little less than 3 * 0.1) */
    CHECK_REAL(bin_f64(OP_FLOORDIV, 0.3, 0.1), 2.0, 0);
    CHECK(isnan(bin_f64(OP_MAX, nd, 3.0)));
    CHECK(isnan(bin_f64(OP_MIN, 3.0, nd)));
    CHECK_REAL(bin_f64(OP_MIN, -0.5, 0.25), -0.5, 0);
    CHECK_REAL(bin_f64(OP_MAX, -0.5, 0.25), 0.25, 0);
    CHECK_REAL(bin_f64(OP_POW, 10.0, -2.0), 0.01, 1e-15);

    /* comparisons with NaN are false, except ne */
    CHECK_INT(cmp_f32(OP_LT, 1.0f, 2.0f), 1);
    CHECK_INT(cmp_f32(OP_LE, 2.0f, 2.0f), 1);
    CHECK_INT(cmp_f32(OP_GT, 1.0f, 2.0f), 0);
    CHECK_INT(cmp_f32(OP_GE, 2.0f, 2.0f), 1);
    CHECK_INT(cmp_f32(OP_EQ, 2.0f, 2.0f), 1);
    CHECK_INT(cmp_f32(OP_NE, 2.0f, 2.0f), 0);
    CHECK_INT(cmp_f32(OP_LT, nf, 1.0f), 0);
    CHECK_INT(cmp_f32(OP_GE, nf, 1.0f), 0);
    CHECK_INT(cmp_f32(OP_EQ, nf, nf), 0);
    CHECK_INT(cmp_f32(OP_NE, nf, nf), 1);
    CHECK_INT(cmp_f64(OP_LE, nd, nd), 0);
    CHECK_INT(cmp_f64(OP_GT, 1.0, nd), 0);
    CHECK_INT(cmp_f64(OP_NE, 1.0, nd), 1);
    CHECK_INT(cmp_f64(OP_LT, -1.0, 1.0), 1);
    CHECK_INT(cmp_f64(OP_EQ, 0.0, -0.0), 1);
}

static void test_bool_ops(void)
{
    CHECK_INT(bin_b(OP_AND, 1, 1), 1);
    CHECK_INT(bin_b(OP_AND, 1, 0), 0);
    CHECK_INT(bin_b(OP_OR, 0, 0), 0);
    CHECK_INT(bin_b(OP_OR, 0, 1), 1);
    CHECK_INT(bin_b(OP_EQ, 0, 0), 1);
    CHECK_INT(bin_b(OP_EQ, 1, 0), 0);
    CHECK_INT(bin_b(OP_NE, 1, 0), 1);
    CHECK_INT(bin_b(OP_AND, 2, 1), 1); /* any non-zero byte reads as true */
    uint8_t x[3] = {0, 1, 5}, y[3] = {9, 9, 9};
    k_unary(OP_NOT, K_BOOL, y, x, 0, 3);
    CHECK_INT(y[0], 1);
    CHECK_INT(y[1], 0);
    CHECK_INT(y[2], 0);
    uint8_t s = 9;
    k_unary1_b(OP_NOT, &s, 0);
    CHECK_INT(s, 1);
}

static void test_unary(void)
{
    CHECK_INT(un_i32(OP_NEG, 5), -5);
    CHECK_INT(un_i32(OP_NEG, INT32_MIN), INT32_MIN);
    CHECK_INT(un_i32(OP_ABS, -5), 5);
    CHECK_INT(un_i32(OP_ABS, INT32_MIN), INT32_MIN);
    CHECK_INT(un_i32(OP_RELU, -5), 0);
    CHECK_INT(un_i32(OP_RELU, 5), 5);
    CHECK_INT(un_i64(OP_NEG, INT64_MIN), INT64_MIN);
    CHECK_INT(un_i64(OP_ABS, -((int64_t)1 << 40)), (int64_t)1 << 40);
    CHECK_INT(un_i64(OP_RELU, -1), 0);

    float nf = nanf("");
    CHECK_REAL(un_f32(OP_NEG, 1.5f), -1.5, 0);
    CHECK_REAL(un_f32(OP_ABS, -1.5f), 1.5, 0);
    CHECK_REAL(un_f32(OP_RELU, -1.5f), 0.0, 0);
    CHECK_REAL(un_f32(OP_RELU, 2.5f), 2.5, 0);
    CHECK(isnan(un_f32(OP_RELU, nf)));
    CHECK_REAL(un_f32(OP_EXP, 0.0f), 1.0, 0);
    CHECK_REAL(un_f32(OP_EXP, 1.0f), 2.718281828, 1e-6);
    CHECK_REAL(un_f32(OP_LOG, 1.0f), 0.0, 0);
    CHECK(isnan(un_f32(OP_LOG, -1.0f)));
    CHECK_REAL(un_f32(OP_SQRT, 6.25f), 2.5, 0);
    CHECK_REAL(un_f32(OP_TANH, 0.0f), 0.0, 0);
    CHECK_REAL(un_f32(OP_TANH, 1.0f), 0.7615941559557649, 1e-6);
    CHECK_REAL(un_f32(OP_SIGMOID, 0.0f), 0.5, 0);
    CHECK_REAL(un_f32(OP_SIGMOID, 2.0f), 0.8807970779778823, 1e-6);

    double nd = nan("");
    CHECK_REAL(un_f64(OP_NEG, -0.25), 0.25, 0);
    CHECK_REAL(un_f64(OP_ABS, -1e300), 1e300, 0);
    CHECK(isnan(un_f64(OP_RELU, nd)));
    CHECK_REAL(un_f64(OP_RELU, -3.0), 0.0, 0);
    CHECK_REAL(un_f64(OP_EXP, 2.0), 7.38905609893065, 1e-14);
    CHECK_REAL(un_f64(OP_LOG, 10.0), 2.302585092994046, 1e-15);
    CHECK_REAL(un_f64(OP_SQRT, 2.0), 1.4142135623730951, 0);
    CHECK_REAL(un_f64(OP_TANH, -1.0), -0.7615941559557649, 1e-15);
    CHECK_REAL(un_f64(OP_SIGMOID, -2.0), 0.11920292202211755, 1e-15);

    /* sin cos tan erf against values of the functions (radians); floor ceil, round halving to
     * even, sign with NaN and -0 */
    CHECK_REAL(un_f64(OP_SIN, 0.5), 0.479425538604203, 1e-15);
    CHECK_REAL(un_f64(OP_COS, 0.5), 0.8775825618903728, 1e-15);
    CHECK_REAL(un_f64(OP_TAN, 1.0), 1.5574077246549023, 1e-15);
    CHECK_REAL(un_f64(OP_ERF, 0.5), 0.5204998778130465, 1e-15);
    CHECK_REAL(un_f32(OP_SIN, -2.5f), -0.5984721441039564, 1e-6);
    CHECK_REAL(un_f32(OP_ERF, 1.5f), 0.9661051464753108, 1e-6);

    /* the inverse functions against values written by hand (pi = 3.141592653589793):
     * atan(1) = pi/4, asin(1) = pi/2, asin(-1/2) = -pi/6, acos(1/2) = pi/3, acos(-1) = pi,
     * asinh(1) = ln(1 + sqrt 2), acosh(2) = ln(2 + sqrt 3), atanh(1/2) = ln(3) / 2; past their
     * domains NaN, and atanh(+-1) = +-inf, as C's */
    CHECK_REAL(un_f64(OP_ATAN, 1.0), 0.7853981633974483, 1e-15);
    CHECK_REAL(un_f64(OP_ATAN, 1e300), 1.5707963267948966, 1e-15);
    CHECK_REAL(un_f64(OP_ASIN, 1.0), 1.5707963267948966, 1e-15);
    CHECK_REAL(un_f64(OP_ASIN, -0.5), -0.5235987755982988, 1e-15);
    CHECK_REAL(un_f64(OP_ACOS, 0.5), 1.0471975511965976, 1e-15);
    CHECK_REAL(un_f64(OP_ACOS, -1.0), 3.141592653589793, 1e-15);
    CHECK_REAL(un_f64(OP_ACOS, 1.0), 0.0, 0);
    CHECK(isnan(un_f64(OP_ACOS, 1.5)));
    CHECK(isnan(un_f64(OP_ASIN, -1.0000001)));
    CHECK_REAL(un_f64(OP_ASINH, 1.0), 0.8813735870195429, 1e-15);
    CHECK_REAL(un_f64(OP_ASINH, -1.0), -0.8813735870195429, 1e-15);
    CHECK_REAL(un_f64(OP_ACOSH, 2.0), 1.3169578969248166, 1e-15);
    CHECK_REAL(un_f64(OP_ACOSH, 1.0), 0.0, 0);
    CHECK(isnan(un_f64(OP_ACOSH, 0.5)));
    CHECK_REAL(un_f64(OP_ATANH, 0.5), 0.5493061443340549, 1e-15);
    CHECK(isinf(un_f64(OP_ATANH, 1.0)) && un_f64(OP_ATANH, 1.0) > 0);
    CHECK(isinf(un_f64(OP_ATANH, -1.0)) && un_f64(OP_ATANH, -1.0) < 0);
    CHECK(isnan(un_f64(OP_ATANH, 2.0)));
    CHECK(signbit(un_f64(OP_ATAN, -0.0)) && signbit(un_f64(OP_ASIN, -0.0)) && signbit(un_f64(OP_ATANH, -0.0)));
    CHECK_REAL(un_f32(OP_ATAN, 1.0f), 0.7853981633974483, 1e-6);
    CHECK_REAL(un_f32(OP_ASIN, 1.0f), 1.5707963267948966, 1e-6);
    CHECK_REAL(un_f32(OP_ASIN, -0.5f), -0.5235987755982988, 1e-6);
    CHECK_REAL(un_f32(OP_ACOS, 0.5f), 1.0471975511965976, 1e-6);
    CHECK_REAL(un_f32(OP_ACOS, -1.0f), 3.141592653589793, 1e-6);
    CHECK(isnan(un_f32(OP_ACOS, 1.5f)));
    CHECK(isnan(un_f32(OP_ASIN, -2.0f)));
    CHECK_REAL(un_f32(OP_ASINH, 1.0f), 0.8813735870195429, 1e-6);
    CHECK_REAL(un_f32(OP_ACOSH, 2.0f), 1.3169578969248166, 1e-6);
    CHECK(isnan(un_f32(OP_ACOSH, 0.0f)));
    CHECK_REAL(un_f32(OP_ATANH, 0.5f), 0.5493061443340549, 1e-6);
    CHECK(isinf(un_f32(OP_ATANH, 1.0f)) && un_f32(OP_ATANH, 1.0f) > 0);
    CHECK(isinf(un_f32(OP_ATANH, -1.0f)) && un_f32(OP_ATANH, -1.0f) < 0);
    CHECK(isnan(un_f32(OP_ATANH, nf)));

    /* atan2(y, x), C99's Annex F: the quadrant from both signs, pi/2 on the y axis, and the
     * signed zeros: atan2(+-0, -1) = +-pi, atan2(+-0, +0) = +-0, atan2(+-0, -0) = +-pi */
    {
        const double pi = 3.141592653589793;
        CHECK_REAL(bin_f64(OP_ATAN2, 1.0, 1.0), pi / 4, 1e-15);
        CHECK_REAL(bin_f64(OP_ATAN2, 1.0, -1.0), 3 * pi / 4, 1e-15);
        CHECK_REAL(bin_f64(OP_ATAN2, -1.0, -1.0), -3 * pi / 4, 1e-15);
        CHECK_REAL(bin_f64(OP_ATAN2, -1.0, 1.0), -pi / 4, 1e-15);
        CHECK_REAL(bin_f64(OP_ATAN2, 2.0, 0.0), pi / 2, 1e-15);
        CHECK_REAL(bin_f64(OP_ATAN2, -2.0, 0.0), -pi / 2, 1e-15);
        CHECK_REAL(bin_f64(OP_ATAN2, 0.0, -1.0), pi, 0);
        CHECK_REAL(bin_f64(OP_ATAN2, -0.0, -1.0), -pi, 0);
        CHECK_REAL(bin_f64(OP_ATAN2, 0.0, -0.0), pi, 0);
        CHECK_REAL(bin_f64(OP_ATAN2, -0.0, -0.0), -pi, 0);
        CHECK(bin_f64(OP_ATAN2, 0.0, 0.0) == 0 && !signbit(bin_f64(OP_ATAN2, 0.0, 0.0)));
        CHECK(bin_f64(OP_ATAN2, -0.0, 0.0) == 0 && signbit(bin_f64(OP_ATAN2, -0.0, 0.0)));
        CHECK(bin_f64(OP_ATAN2, -0.0, 3.0) == 0 && signbit(bin_f64(OP_ATAN2, -0.0, 3.0)));
        CHECK_REAL(bin_f64(OP_ATAN2, 1.0, -INFINITY), pi, 0);
        CHECK_REAL(bin_f64(OP_ATAN2, INFINITY, INFINITY), pi / 4, 1e-15);
        CHECK(isnan(bin_f64(OP_ATAN2, nd, 1.0)));
        CHECK_REAL(bin_f32(OP_ATAN2, 1.0f, 1.0f), pi / 4, 1e-6);
        CHECK_REAL(bin_f32(OP_ATAN2, 1.0f, -1.0f), 3 * pi / 4, 1e-6);
        CHECK_REAL(bin_f32(OP_ATAN2, -1.0f, -1.0f), -3 * pi / 4, 1e-6);
        CHECK_REAL(bin_f32(OP_ATAN2, -1.0f, 1.0f), -pi / 4, 1e-6);
        CHECK_REAL(bin_f32(OP_ATAN2, 0.0f, -1.0f), pi, 1e-6);
        CHECK_REAL(bin_f32(OP_ATAN2, -0.0f, -1.0f), -pi, 1e-6);
        CHECK_REAL(bin_f32(OP_ATAN2, -0.0f, -0.0f), -pi, 1e-6);
        CHECK(signbit(bin_f32(OP_ATAN2, -0.0f, 0.0f)) && !signbit(bin_f32(OP_ATAN2, 0.0f, 0.0f)));
        CHECK(isnan(bin_f32(OP_ATAN2, 1.0f, nf)));
    }
    CHECK_REAL(un_f32(OP_FLOOR, -2.5f), -3.0, 0);
    CHECK_REAL(un_f32(OP_CEIL, -2.5f), -2.0, 0);
    CHECK_REAL(un_f64(OP_FLOOR, 2.5), 2.0, 0);
    CHECK_REAL(un_f32(OP_ROUND, 2.5f), 2.0, 0);
    CHECK_REAL(un_f32(OP_ROUND, 3.5f), 4.0, 0);
    CHECK_REAL(un_f64(OP_ROUND, -0.5), 0.0, 0);
    CHECK(signbit(un_f64(OP_ROUND, -0.5)));
    CHECK_REAL(un_f64(OP_ROUND, 1.4999999999999998), 1.0, 0);
    CHECK_REAL(un_f32(OP_SIGN, -3.5f), -1.0, 0);
    CHECK_REAL(un_f32(OP_SIGN, -0.0f), 0.0, 0);
    CHECK(isnan(un_f32(OP_SIGN, nf)));
    CHECK_REAL(un_f64(OP_SIGN, 1e-300), 1.0, 0);
    CHECK_INT(un_i32(OP_SIGN, -2147483647 - 1), -1);
    CHECK_INT(un_i64(OP_SIGN, 0), 0);
    CHECK_INT(un_i64(OP_SIGN, 5), 1);

    /* round_f16, round_bf16: IEEE binary16 holds 11 significant bits (1 + 2^-10 is the next
     * value after 1), normals from 2^-14, subnormals in steps of 2^-24, 65504 the largest;
     * bfloat16 8 bits (1 + 2^-7 next after 1) and f32's exponents. Halfway cases go to the
     * even neighbour; from 65520 (halfway to 2^16) on, inf. Values written out by hand. */
    CHECK_REAL(un_f32(OP_ROUND_F16, 1.0f + 0x1p-11f), 1.0, 0);            /* tie, to even 1 */
    CHECK_REAL(un_f32(OP_ROUND_F16, 1.0f + 3 * 0x1p-11f), 1.0 + 0x1p-9, 0); /* tie, up to even */
    CHECK_REAL(un_f32(OP_ROUND_F16, 1.0f + 0x1p-11f + 0x1p-20f), 1.0 + 0x1p-10, 0);
    CHECK_REAL(un_f32(OP_ROUND_F16, -0.3f), -0.300048828125, 0);         /* 1229 * 2^-12 */
    CHECK_REAL(un_f32(OP_ROUND_F16, 65519.0f), 65504.0, 0);
    CHECK(isinf(un_f32(OP_ROUND_F16, 65520.0f)) && un_f32(OP_ROUND_F16, 65520.0f) > 0);
    CHECK(isinf(un_f64(OP_ROUND_F16, -1e6)) && un_f64(OP_ROUND_F16, -1e6) < 0);
    CHECK_REAL(un_f32(OP_ROUND_F16, 3 * 0x1p-26f), 0x1p-24, 0);          /* subnormal: 0.75 step */
    CHECK_REAL(un_f32(OP_ROUND_F16, 0x1p-25f), 0.0, 0);                 /* tie, to even 0 */
    CHECK_REAL(un_f64(OP_ROUND_F16, 5 * 0x1p-25), 0x1p-23, 0);           /* 2.5 steps, to even 2 */
    CHECK_REAL(un_f64(OP_ROUND_F16, 0x1p-14 + 0x1p-25), 0x1p-14, 0);     /* the smallest normal */
    CHECK_REAL(un_f64(OP_ROUND_F16, 1.0 + 0x1p-11 + 0x1p-40), 1.0 + 0x1p-10, 0); /* no double rounding */
    CHECK(isnan(un_f32(OP_ROUND_F16, nf)));
    CHECK(signbit(un_f32(OP_ROUND_F16, -0x1p-30f)));
    CHECK_REAL(un_f32(OP_ROUND_BF16, 1.0f + 0x1p-8f), 1.0, 0);            /* tie, to even 1 */
    CHECK_REAL(un_f32(OP_ROUND_BF16, 1.0f + 3 * 0x1p-8f), 1.0 + 0x1p-6, 0);
    CHECK_REAL(un_f32(OP_ROUND_BF16, -0.3f), -0.30078125, 0);            /* 77 * 2^-8 */
    CHECK_REAL(un_f32(OP_ROUND_BF16, 65520.0f), 65536.0, 0);
    CHECK_REAL(un_f32(OP_ROUND_BF16, 5 * 0x1p-133f), 5 * 0x1p-133, 0);    /* a subnormal it holds */
    CHECK_REAL(un_f32(OP_ROUND_BF16, 0x1p-140f), 0.0, 0);               /* under half its step */
    CHECK_REAL(un_f64(OP_ROUND_BF16, 3 * 0x1p-135), 0x1p-133, 0);         /* its step there */
    CHECK(isinf(un_f32(OP_ROUND_BF16, 3.397e38f)));                      /* past (2 - 2^-8) 2^127 */
    CHECK_REAL(un_f32(OP_ROUND_BF16, 3.39e38f), 0x1.fep127, 0);          /* the largest, below that */
    CHECK_REAL(un_f32(OP_ROUND_BF16, 3.38e38f), 0x1.fcp127, 0);          /* below the midpoint */

    /* The float8 formats, written out by hand from their definitions (OCP 8-bit floating point,
     * ONNX's IR.md): E4M3FN holds 1.mmm 2^e for e in -6..8 (1.111 2^8 is NaN, so 448 = 1.11 2^8
     * the largest), subnormals m 2^-9; E4M3FNUZ e in -7..7 (240 = 1.111 2^7), subnormals m 2^-10;
     * E5M2 1.mm 2^e for e in -14..15 (57344 = 1.11 2^15), subnormals m 2^-16, and infinities;
     * E5M2FNUZ e in -15..15, subnormals m 2^-17. FN and FNUZ have no infinities (past the
     * largest value NaN), FNUZ no -0. */
    CHECK_REAL(un_f32(OP_ROUND_F8E4M3FN, 0.4375f), 0.4375, 0);             /* 1.110 2^-2, exact */
    CHECK_REAL(un_f32(OP_ROUND_F8E4M3FN, 1.0625f), 1.0, 0);               /* tie, to even 1.000 */
    CHECK_REAL(un_f32(OP_ROUND_F8E4M3FN, 1.1875f), 1.25, 0);              /* tie, to even 1.010 */
    CHECK_REAL(un_f32(OP_ROUND_F8E4M3FN, -0.47892547f), -0.46875, 0);     /* 1.111 2^-2 */
    CHECK_REAL(un_f32(OP_ROUND_F8E4M3FN, 100.0f), 96.0, 0);               /* tie 96 | 104, to 1.100 */
    CHECK_REAL(un_f32(OP_ROUND_F8E4M3FN, 3 * 0x1p-10f), 0x1p-8, 0);        /* 1.5 steps of 2^-9, to 2 */
    CHECK_REAL(un_f32(OP_ROUND_F8E4M3FN, 0x1p-10f), 0.0, 0);              /* half the least, to even 0 */
    CHECK_REAL(un_f32(OP_ROUND_F8E4M3FN, 0x1.8p-10f), 0x1p-9, 0);         /* past half: the least */
    CHECK(signbit(un_f32(OP_ROUND_F8E4M3FN, -1e-7f)));                    /* -0 */
    CHECK_REAL(un_f32(OP_ROUND_F8E4M3FN, 464.0f), 448.0, 0);              /* tie 448 | 480, to even */
    CHECK(isnan(un_f32(OP_ROUND_F8E4M3FN, 465.0f)));                      /* past: NaN, no inf */
    CHECK(isnan(un_f64(OP_ROUND_F8E4M3FN, -1e6)));
    CHECK(isnan(un_f32(OP_ROUND_F8E4M3FN, INFINITY)));
    CHECK(isnan(un_f32(OP_ROUND_F8E4M3FN, nf)));
    CHECK_REAL(un_f32(OP_ROUND_F8E4M3FNUZ, 240.0f), 240.0, 0);            /* the largest */
    CHECK_REAL(un_f32(OP_ROUND_F8E4M3FNUZ, 247.0f), 240.0, 0);
    CHECK(isnan(un_f32(OP_ROUND_F8E4M3FNUZ, 248.0f)));                    /* tie 240 | 256, to even */
    CHECK_REAL(un_f32(OP_ROUND_F8E4M3FNUZ, 3 * 0x1p-11f), 0x1p-9, 0);      /* steps of 2^-10 */
    CHECK_REAL(un_f32(OP_ROUND_F8E4M3FNUZ, 0x1.8p-11f), 0x1p-10, 0);      /* the least */
    CHECK(!signbit(un_f32(OP_ROUND_F8E4M3FNUZ, -1e-7f)));                 /* no -0: 0 */
    CHECK(!signbit(un_f32(OP_ROUND_F8E4M3FNUZ, -0.0f)));
    CHECK_REAL(un_f32(OP_ROUND_F8E4M3FNUZ, -0.3f), -0.3125, 0);           /* 1.010 2^-2 */
    CHECK_REAL(un_f32(OP_ROUND_F8E5M2, 0.3f), 0.3125, 0);                 /* 1.01 2^-2 */
    CHECK_REAL(un_f32(OP_ROUND_F8E5M2, 1.125f), 1.0, 0);                  /* tie, to even 1.00 */
    CHECK_REAL(un_f32(OP_ROUND_F8E5M2, 1.375f), 1.5, 0);                  /* tie, to even 1.10 */
    CHECK_REAL(un_f32(OP_ROUND_F8E5M2, 3 * 0x1p-17f), 0x1p-15, 0);         /* steps of 2^-16 */
    CHECK_REAL(un_f32(OP_ROUND_F8E5M2, 0x1p-17f), 0.0, 0);                /* tie, to even 0 */
    CHECK_REAL(un_f32(OP_ROUND_F8E5M2, 61439.0f), 57344.0, 0);            /* the largest */
    CHECK(isinf(un_f32(OP_ROUND_F8E5M2, 61440.0f)));                      /* tie 57344 | 65536: inf */
    CHECK(isinf(un_f64(OP_ROUND_F8E5M2, -1e6)) && un_f64(OP_ROUND_F8E5M2, -1e6) < 0);
    CHECK(signbit(un_f32(OP_ROUND_F8E5M2, -1e-7f)));
    CHECK_REAL(un_f32(OP_ROUND_F8E5M2FNUZ, 3 * 0x1p-18f), 0x1p-16, 0);     /* steps of 2^-17 */
    CHECK_REAL(un_f32(OP_ROUND_F8E5M2FNUZ, 57344.0f), 57344.0, 0);
    CHECK(isnan(un_f32(OP_ROUND_F8E5M2FNUZ, 61440.0f)));
    CHECK(isnan(un_f32(OP_ROUND_F8E5M2FNUZ, -INFINITY)));
    CHECK(!signbit(un_f32(OP_ROUND_F8E5M2FNUZ, -1e-7f)));
    /* float4 E2M1: 0, 0.5 (the subnormal), 1, 1.5, 2, 3, 4, 6 and their negatives; saturated */
    CHECK_REAL(un_f32(OP_ROUND_F4E2M1, 0.25f), 0.0, 0);                   /* tie 0 | 0.5, to even 0 */
    CHECK_REAL(un_f32(OP_ROUND_F4E2M1, 0.2500001f), 0.5, 0);
    CHECK_REAL(un_f32(OP_ROUND_F4E2M1, 0.75f), 1.0, 0);                   /* tie 0.5 | 1, to even 1 */
    CHECK_REAL(un_f32(OP_ROUND_F4E2M1, 1.25f), 1.0, 0);                   /* tie 1 | 1.5, to 1 */
    CHECK_REAL(un_f32(OP_ROUND_F4E2M1, -3.5f), -4.0, 0);                  /* tie 3 | 4, to 4 */
    CHECK_REAL(un_f32(OP_ROUND_F4E2M1, 5.0f), 4.0, 0);                    /* tie 4 | 6, to 4 */
    CHECK_REAL(un_f32(OP_ROUND_F4E2M1, 5.5f), 6.0, 0);
    CHECK_REAL(un_f32(OP_ROUND_F4E2M1, 7.0f), 6.0, 0);                    /* past 6: 6 */
    CHECK_REAL(un_f64(OP_ROUND_F4E2M1, -1e6), -6.0, 0);
    CHECK_REAL(un_f32(OP_ROUND_F4E2M1, INFINITY), 6.0, 0);
    CHECK_REAL(un_f32(OP_ROUND_F4E2M1, nf), 0.0, 0);                      /* no NaN in the format */
    CHECK(signbit(un_f32(OP_ROUND_F4E2M1, -0.1f)));
    /* float8 E8M0: 2^-127 ... 2^127, the nearest, halfway up */
    CHECK_REAL(un_f32(OP_ROUND_F8E8M0, 0.25f), 0.25, 0);
    CHECK_REAL(un_f32(OP_ROUND_F8E8M0, 0.124f), 0.125, 0);
    CHECK_REAL(un_f32(OP_ROUND_F8E8M0, 1.4f), 1.0, 0);
    CHECK_REAL(un_f32(OP_ROUND_F8E8M0, 1.5f), 2.0, 0);                    /* halfway 1 | 2: up */
    CHECK_REAL(un_f64(OP_ROUND_F8E8M0, 6.0), 8.0, 0);                     /* halfway 4 | 8: up */
    CHECK_REAL(un_f32(OP_ROUND_F8E8M0, 0x1p-127f), 0x1p-127, 0);          /* the least, an f32 subnormal */
    CHECK_REAL(un_f32(OP_ROUND_F8E8M0, 0x1p-140f), 0x1p-127, 0);          /* under it: it */
    CHECK_REAL(un_f32(OP_ROUND_F8E8M0, 0x1.7p127f), 0x1p127, 0);          /* the largest */
    CHECK(isnan(un_f32(OP_ROUND_F8E8M0, 0x1.8p127f)));                    /* halfway past it */
    CHECK(isnan(un_f32(OP_ROUND_F8E8M0, 0.0f)));                          /* no zero, */
    CHECK(isnan(un_f32(OP_ROUND_F8E8M0, -4.0f)));                         /* no sign */
    CHECK(isnan(un_f64(OP_ROUND_F8E8M0, INFINITY)));
    CHECK(isnan(un_f64(OP_ROUND_F8E8M0, 0x1p200)));                      /* f64: past it too */
    CHECK_REAL(un_f64(OP_ROUND_F8E8M0, 0x1p-200), 0x1p-127, 0);
}

/* numpy broadcasting: [3] to [2, 3] repeats the row, [2, 1] to [2, 3] the column, [1, 3] to
 * [2, 2, 3] the row in every block; written out by hand */
static void test_numpy_broadcast(void)
{
    int32_t row[3] = {1, 2, 3}, colv[2] = {7, 8}, out[12];
    k_bshape sh = {{2, 3, 0, 0}, {3, 0, 0, 0}, 2, 1};
    k_broadcast(4, out, row, &sh, 0, 6);
    int32_t want1[6] = {1, 2, 3, 1, 2, 3};
    for (int i = 0; i < 6; i++)
        CHECK_INT(out[i], want1[i]);
    k_bshape sc = {{2, 3, 0, 0}, {2, 1, 0, 0}, 2, 2};
    k_broadcast(4, out, colv, &sc, 0, 6);
    int32_t want2[6] = {7, 7, 7, 8, 8, 8};
    for (int i = 0; i < 6; i++)
        CHECK_INT(out[i], want2[i]);
    k_bshape s3 = {{2, 2, 3, 0}, {1, 3, 0, 0}, 3, 2};
    k_broadcast(4, out, row, &s3, 0, 12);
    for (int i = 0; i < 12; i++)
        CHECK_INT(out[i], row[i % 3]);
    uint8_t b[2] = {1, 0}, bo[4];
    k_bshape sb = {{2, 2, 0, 0}, {2, 1, 0, 0}, 2, 2};
    k_broadcast(1, bo, b, &sb, 1, 3); /* a share: elements 1 and 2 only */
    CHECK_INT(bo[1], 1);
    CHECK_INT(bo[2], 0);
    double dv[2] = {0.5, -1.5}, dout[4];
    k_bshape sd = {{2, 2, 0, 0}, {2, 0, 0, 0}, 2, 1};
    k_broadcast(8, dout, dv, &sd, 0, 4);
    CHECK_REAL(dout[2], 0.5, 0);
    CHECK_REAL(dout[3], -1.5, 0);
}

/* boxes: x[1, 1:3] of a [3, 4] tensor, and a column written back; starts clamped into the
 * tensor whatever value they come with. Worked by hand on x = 0, 1, ..., 11 row-major. */
static void test_boxes(void)
{
    int32_t x[12], out[4];
    for (int i = 0; i < 12; i++)
        x[i] = i;
    cfx_slot t;
    memset(&t, 0, sizeof t);
    t.rank = 2;
    t.dims[0] = 3;
    t.dims[1] = 4;
    int32_t ent[4] = {0, -1, 0, 2};
    int64_t st[4] = {1, 1, 0, 0};
    k_box b = rec_box(ent, &t, st);
    k_box_copy(0, 4, out, x, &b, 0, 2);
    CHECK_INT(out[0], 5);
    CHECK_INT(out[1], 6);
    st[0] = -1; /* an index counts from the end: row 2 */
    st[1] = 9;  /* a slice start past the room is clamped to 4 - 2 */
    b = rec_box(ent, &t, st);
    k_box_copy(0, 4, out, x, &b, 0, 2);
    CHECK_INT(out[0], 10);
    CHECK_INT(out[1], 11);
    int32_t colent[4] = {0, 3, 0, -1}, col[3] = {-1, -2, -3};
    int64_t cst[4] = {0, 3, 0, 0};
    b = rec_box(colent, &t, cst);
    k_box_copy(1, 4, x, col, &b, 0, 3); /* x[:, 3] = col */
    CHECK_INT(x[3], -1);
    CHECK_INT(x[7], -2);
    CHECK_INT(x[11], -3);
    CHECK_INT(x[10], 10);
    CHECK_INT(k_box_start(-5, -1, 4), 0);
    CHECK_INT(k_box_start(-2, -1, 4), 2);
    CHECK_INT(k_box_start(3, 2, 4), 2);
}

static void test_broadcast_and_ranges(void)
{
    int32_t a[4] = {1, 2, 3, 4}, ten = 10, d[4] = {0, 0, 0, 0};
    k_binary(OP_SUB, K_I32, d, &ten, 1, a, 4, 0, 4); /* 10 - [1 2 3 4] */
    CHECK_INT(d[0], 9);
    CHECK_INT(d[3], 6);
    k_binary(OP_SUB, K_I32, d, a, 4, &ten, 1, 0, 4); /* [1 2 3 4] - 10 */
    CHECK_INT(d[0], -9);
    CHECK_INT(d[3], -6);
    int32_t e[4] = {-1, -1, -1, -1};
    k_binary(OP_MUL, K_I32, e, a, 4, a, 4, 1, 3); /* only elements 1 and 2 */
    CHECK_INT(e[0], -1);
    CHECK_INT(e[1], 4);
    CHECK_INT(e[2], 9);
    CHECK_INT(e[3], -1);
    float f[3] = {1, 2, 3}, half = 0.5f;
    uint8_t lt[3];
    k_binary(OP_LT, K_F32, lt, f, 3, &half, 1, 0, 3);
    CHECK_INT(lt[0] + lt[1] + lt[2], 0);
    k_binary(OP_GT, K_F32, lt, f, 3, &f[1], 1, 0, 3); /* [1 2 3] > 2 */
    CHECK_INT(lt[0], 0);
    CHECK_INT(lt[1], 0);
    CHECK_INT(lt[2], 1);
    double g[2] = {4, 9}, h[2];
    k_unary(OP_SQRT, K_F64, h, g, 0, 2);
    CHECK_REAL(h[0], 2, 0);
    CHECK_REAL(h[1], 3, 0);
}

static void test_casts(void)
{
    float fv[8] = {3.7f, -3.7f, 1e10f, -1e10f, nanf(""), INFINITY, -INFINITY, -0.0f};
    int32_t iv[8];
    k_cast(K_I32, iv, K_F32, fv, 0, 8);
    CHECK_INT(iv[0], 3);
    CHECK_INT(iv[1], -3);
    CHECK_INT(iv[2], INT32_MAX);
    CHECK_INT(iv[3], INT32_MIN);
    CHECK_INT(iv[4], 0);
    CHECK_INT(iv[5], INT32_MAX);
    CHECK_INT(iv[6], INT32_MIN);
    CHECK_INT(iv[7], 0);

    double dv[6] = {2147483647.9, -2147483648.9, 1e19, -1e19, 9223372036854775808.0,
                    -9223372036854775808.0};
    int32_t i32[2];
    k_cast(K_I32, i32, K_F64, dv, 0, 2);
    CHECK_INT(i32[0], INT32_MAX);
    CHECK_INT(i32[1], INT32_MIN);
    int64_t i64[6];
    k_cast(K_I64, i64, K_F64, dv, 0, 6);
    CHECK_INT(i64[0], 2147483647);
    CHECK_INT(i64[1], -2147483648LL);
    CHECK_INT(i64[2], INT64_MAX);
    CHECK_INT(i64[3], INT64_MIN);
    CHECK_INT(i64[4], INT64_MAX);
    CHECK_INT(i64[5], INT64_MIN);

    /* to bool: != 0, and NaN is true */
    float bf[4] = {0.0f, -0.0f, nanf(""), 0.5f};
    uint8_t bb[4];
    k_cast(K_BOOL, bb, K_F32, bf, 0, 4);
    CHECK_INT(bb[0], 0);
    CHECK_INT(bb[1], 0);
    CHECK_INT(bb[2], 1);
    CHECK_INT(bb[3], 1);
    int64_t bi[3] = {0, -7, (int64_t)1 << 40};
    k_cast(K_BOOL, bb, K_I64, bi, 0, 3);
    CHECK_INT(bb[0], 0);
    CHECK_INT(bb[1], 1);
    CHECK_INT(bb[2], 1);

    /* from bool: 0 or 1 */
    uint8_t fb[3] = {0, 1, 2};
    float ff[3];
    k_cast(K_F32, ff, K_BOOL, fb, 0, 3);
    CHECK_REAL(ff[0], 0, 0);
    CHECK_REAL(ff[1], 1, 0);
    CHECK_REAL(ff[2], 1, 0);
    int32_t fi[3];
    k_cast(K_I32, fi, K_BOOL, fb, 0, 3);
    CHECK_INT(fi[2], 1);

    /* integer narrowing wraps; widening and int -> real are exact */
    int64_t wide[2] = {((int64_t)1 << 32) + 5, -1};
    int32_t narrow[2];
    k_cast(K_I32, narrow, K_I64, wide, 0, 2);
    CHECK_INT(narrow[0], 5);
    CHECK_INT(narrow[1], -1);
    int32_t small[2] = {INT32_MIN, 7};
    int64_t widened[2];
    double asreal[2];
    k_cast(K_I64, widened, K_I32, small, 0, 2);
    k_cast(K_F64, asreal, K_I32, small, 0, 2);
    CHECK_INT(widened[0], INT32_MIN);
    CHECK_REAL(asreal[0], -2147483648.0, 0);
    CHECK_REAL(asreal[1], 7.0, 0);
    double d3[1] = {0.1};
    float f3[1];
    k_cast(K_F32, f3, K_F64, d3, 0, 1);
    CHECK(f3[0] == 0.1f);
}

static void test_make_and_move(void)
{
    float v = 2.5f, f[4] = {0};
    k_fill(K_F32, f, &v, 1, 4);
    CHECK_REAL(f[0], 0, 0);
    CHECK_REAL(f[3], 2.5, 0);
    int64_t w = -3, g[2];
    k_fill(K_I64, g, &w, 0, 2);
    CHECK_INT(g[1], -3);
    uint8_t bv = 1, b[2] = {0, 0};
    k_fill(K_BOOL, b, &bv, 0, 2);
    CHECK_INT(b[0] + b[1], 2);

    int32_t io[5];
    k_iota(K_I32, io, 0, 5);
    CHECK_INT(io[0], 0);
    CHECK_INT(io[4], 4);
    double iod[3];
    k_iota(K_F64, iod, 0, 3);
    CHECK_REAL(iod[2], 2.0, 0);
    uint8_t iob[3];
    k_iota(K_BOOL, iob, 0, 3);
    CHECK_INT(iob[0], 0);
    CHECK_INT(iob[1], 1);

    /* where: condition, a and b each broadcast when they have one element */
    uint8_t c[4] = {1, 0, 1, 0}, one = 1;
    int32_t x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40}, k = -1, out[4];
    k_where(K_I32, out, c, 4, x, 4, y, 4, 0, 4);
    CHECK_INT(out[0], 1);
    CHECK_INT(out[1], 20);
    CHECK_INT(out[2], 3);
    CHECK_INT(out[3], 40);
    k_where(K_I32, out, c, 4, x, 4, &k, 1, 0, 4);
    CHECK_INT(out[1], -1);
    CHECK_INT(out[2], 3);
    k_where(K_I32, out, &one, 1, &k, 1, y, 4, 0, 4);
    CHECK_INT(out[0], -1);
    CHECK_INT(out[3], -1);
    double dx[2] = {0.5, 1.5}, dy[2] = {-1, -2}, dout[2];
    k_where(K_F64, dout, c, 2, dx, 2, dy, 2, 0, 2);
    CHECK_REAL(dout[0], 0.5, 0);
    CHECK_REAL(dout[1], -2, 0);

    char src[6] = "abcde", dst[6] = "-----";
    k_copy_bytes(dst, src, 1, 4);
    CHECK_STR(dst, "-bcd-");

    int32_t i32 = -7;
    int64_t i64 = (int64_t)1 << 40;
    uint8_t bo = 1;
    CHECK_INT(k_load_int(K_I32, &i32), -7);
    CHECK_INT(k_load_int(K_I64, &i64), (int64_t)1 << 40);
    CHECK_INT(k_load_int(K_BOOL, &bo), 1);
    CHECK_INT(k_row_index(-1, 4), 3);
    CHECK_INT(k_row_index(-4, 4), 0);
    CHECK_INT(k_row_index(2, 4), 2);
}

/* ---- reductions ---- */
static void reduce_all(int op, int dtype, const void *src, int64_t n, void *dst)
{
    k_acc acc = k_reduce_init(op, dtype);
    k_reduce_range(op, dtype, &acc, src, 0, n);
    k_reduce_finish(op, dtype, &acc, n, dst);
}

/* Splits [0, n) into `shares` pieces, folds each, merges them in the order given by `order`
 * (0: forward, 1: backward, 2: pairwise tree), and finishes. */
static void reduce_split(int op, int dtype, const void *src, int64_t n, int shares, int order,
                         void *dst)
{
    k_acc acc[16];
    for (int s = 0; s < shares; s++) {
        acc[s] = k_reduce_init(op, dtype);
        k_reduce_range(op, dtype, &acc[s], src, n * s / shares, n * (s + 1) / shares);
    }
    k_acc total = k_reduce_init(op, dtype);
    if (order == 0) {
        for (int s = 0; s < shares; s++)
            k_reduce_merge(op, dtype, &total, &acc[s]);
    } else if (order == 1) {
        for (int s = shares - 1; s >= 0; s--)
            k_reduce_merge(op, dtype, &total, &acc[s]);
    } else {
        for (int step = 1; step < shares; step *= 2)
            for (int s = 0; s + step < shares; s += 2 * step)
                k_reduce_merge(op, dtype, &acc[s], &acc[s + step]);
        total = acc[0];
    }
    k_reduce_finish(op, dtype, &total, n, dst);
}

static void test_reductions(void)
{
    int32_t iv[5] = {3, -1, 7, 7, -1};
    int32_t r32;
    reduce_all(OP_SUM, K_I32, iv, 5, &r32);
    CHECK_INT(r32, 15);
    reduce_all(OP_RMAX, K_I32, iv, 5, &r32);
    CHECK_INT(r32, 7);
    reduce_all(OP_RMIN, K_I32, iv, 5, &r32);
    CHECK_INT(r32, -1);
    reduce_all(OP_ARGMAX, K_I32, iv, 5, &r32);
    CHECK_INT(r32, 2); /* first of the two 7s */
    reduce_all(OP_ARGMIN, K_I32, iv, 5, &r32);
    CHECK_INT(r32, 1); /* first of the two -1s */
    int32_t wrap[3] = {INT32_MAX, 1, 1};
    reduce_all(OP_SUM, K_I32, wrap, 3, &r32);
    CHECK_INT(r32, INT32_MIN + 1);

    int64_t lv[3] = {INT64_MAX, 1, -5}, r64;
    reduce_all(OP_SUM, K_I64, lv, 3, &r64);
    CHECK_INT(r64, (int64_t)((uint64_t)INT64_MAX + 1u - 5u)); /* INT64_MAX + 1 - 5 wraps */
    reduce_all(OP_RMIN, K_I64, lv, 3, &r64);
    CHECK_INT(r64, -5);
    reduce_all(OP_ARGMAX, K_I64, lv, 3, &r32);
    CHECK_INT(r32, 0);

    float fv[4] = {1, 2, 3, 4}, rf;
    reduce_all(OP_SUM, K_F32, fv, 4, &rf);
    CHECK_REAL(rf, 10, 0);
    reduce_all(OP_MEAN, K_F32, fv, 4, &rf);
    CHECK_REAL(rf, 2.5, 0);
    float pyth[2] = {3, 4};
    reduce_all(OP_NORM, K_F32, pyth, 2, &rf);
    CHECK_REAL(rf, 5, 0);
    reduce_all(OP_RMAX, K_F32, fv, 4, &rf);
    CHECK_REAL(rf, 4, 0);
    float ties[4] = {-2, 5, 5, -2};
    reduce_all(OP_ARGMAX, K_F32, ties, 4, &r32);
    CHECK_INT(r32, 1);
    reduce_all(OP_ARGMIN, K_F32, ties, 4, &r32);
    CHECK_INT(r32, 0);
    /* NaN propagates through max/min and argmax/argmin find the first NaN */
    float withnan[5] = {1, nanf(""), 9, nanf(""), -9};
    reduce_all(OP_RMAX, K_F32, withnan, 5, &rf);
    CHECK(isnan(rf));
    reduce_all(OP_RMIN, K_F32, withnan, 5, &rf);
    CHECK(isnan(rf));
    reduce_all(OP_ARGMAX, K_F32, withnan, 5, &r32);
    CHECK_INT(r32, 1);
    reduce_all(OP_ARGMIN, K_F32, withnan, 5, &r32);
    CHECK_INT(r32, 1);
    float lastnan[3] = {1, 2, nanf("")};
    reduce_all(OP_ARGMAX, K_F32, lastnan, 3, &r32);
    CHECK_INT(r32, 2);

    double dv[3] = {0.5, -1.5, 4.0}, rd;
    reduce_all(OP_SUM, K_F64, dv, 3, &rd);
    CHECK_REAL(rd, 3.0, 0);
    reduce_all(OP_MEAN, K_F64, dv, 3, &rd);
    CHECK_REAL(rd, 1.0, 0);
    reduce_all(OP_NORM, K_F64, dv, 3, &rd);
    CHECK_REAL(rd, sqrt(0.25 + 2.25 + 16.0), 0);
    reduce_all(OP_RMIN, K_F64, dv, 3, &rd);
    CHECK_REAL(rd, -1.5, 0);
    reduce_all(OP_ARGMIN, K_F64, dv, 3, &r32);
    CHECK_INT(r32, 1);

    uint8_t bv[4] = {1, 1, 0, 1}, rb;
    reduce_all(OP_ALL, K_BOOL, bv, 4, &rb);
    CHECK_INT(rb, 0);
    reduce_all(OP_ANY, K_BOOL, bv, 4, &rb);
    CHECK_INT(rb, 1);
    reduce_all(OP_ALL, K_BOOL, bv, 2, &rb);
    CHECK_INT(rb, 1);
    uint8_t none[3] = {0, 0, 0};
    reduce_all(OP_ANY, K_BOOL, none, 3, &rb);
    CHECK_INT(rb, 0);
}

/* k_reduce_axis: a [2, 3, 2] tensor along each axis, each result against values worked by hand,
 * over result ranges split anywhere (each result is whole in one call); ties take the first
 * position, a NaN is the first NaN; a [2, 0] tensor's empty runs sum to 0. */
static void test_reduce_axis(void)
{
    /* x[o][i][k]: 0 1 | 5 -2 | 5 3    and    -1 nan | 2 2 | 7 2 */
    float x[12] = {0, 1, 5, -2, 5, 3, -1, nanf(""), 2, 2, 7, 2};
    float f[6];
    int32_t p[6];
    k_reduce_axis(OP_SUM, K_F32, f, x, 2, 6, 0, 6); /* axis 0: [3, 2] results, inner 6 */
    CHECK_REAL(f[0], -1, 0);
    CHECK(isnan(f[1]));
    CHECK_REAL(f[2], 7, 0);
    CHECK_REAL(f[5], 5, 0);
    k_reduce_axis(OP_ARGMAX, K_F32, p, x, 3, 2, 0, 1); /* axis 1: [2, 2] results, inner 2 */
    k_reduce_axis(OP_ARGMAX, K_F32, p, x, 3, 2, 1, 4);
    CHECK_INT(p[0], 1); /* 0 5 5: the first 5 */
    CHECK_INT(p[1], 2); /* 1 -2 3 */
    CHECK_INT(p[2], 2); /* -1 2 7 */
    CHECK_INT(p[3], 0); /* nan 2 2: the NaN */
    k_reduce_axis(OP_ARGMIN, K_F32, p, x, 3, 2, 0, 4);
    CHECK_INT(p[0], 0);
    CHECK_INT(p[1], 1);
    CHECK_INT(p[2], 0);
    CHECK_INT(p[3], 0);
    k_reduce_axis(OP_RMAX, K_F32, f, x, 2, 1, 0, 6); /* axis 2: [2, 3] results, contiguous runs */
    CHECK_REAL(f[0], 1, 0);
    CHECK_REAL(f[1], 5, 0);
    CHECK_REAL(f[2], 5, 0);
    CHECK(isnan(f[3]));
    CHECK_REAL(f[4], 2, 0);
    CHECK_REAL(f[5], 7, 0);
    k_reduce_axis(OP_MEAN, K_F32, f, x, 3, 2, 0, 4);
    CHECK_REAL(f[0], 10.0f / 3, 0);
    CHECK_REAL(f[1], 2.0f / 3, 0);
    CHECK_REAL(f[2], 8.0f / 3, 0);
    int32_t iv[6] = {INT32_MAX, 4, 1, 4, 7, 4}, ir[3];
    k_reduce_axis(OP_SUM, K_I32, ir, iv, 3, 2, 0, 2); /* axis 0 of [3, 2]: wraps */
    CHECK_INT(ir[0], INT32_MIN + 7); /* INT32_MAX + 8 */
    CHECK_INT(ir[1], 12);
    k_reduce_axis(OP_ARGMAX, K_I32, ir, iv, 3, 2, 1, 2);
    CHECK_INT(ir[1], 0); /* 4 4 4: the first */
    int64_t lv[4] = {-5, 9, 9, -5}, lr[2];
    k_reduce_axis(OP_RMIN, K_I64, lr, lv, 2, 1, 0, 2);
    CHECK_INT(lr[0], -5);
    CHECK_INT(lr[1], -5);
    double dv[4] = {0.25, -1.5, 4, 0.5}, dr[2];
    k_reduce_axis(OP_SUM, K_F64, dr, dv, 2, 2, 0, 2);
    CHECK_REAL(dr[0], 4.25, 0);
    CHECK_REAL(dr[1], -1.0, 0);
    uint8_t bv[6] = {1, 1, 0, 1, 1, 1}, br[3];
    k_reduce_axis(OP_ALL, K_BOOL, br, bv, 2, 1, 0, 3);
    CHECK_INT(br[0], 1);
    CHECK_INT(br[1], 0);
    CHECK_INT(br[2], 1);
    k_reduce_axis(OP_ANY, K_BOOL, br, bv, 3, 2, 0, 2);
    CHECK_INT(br[0], 1);
    CHECK_INT(br[1], 1);
    float empty[1] = {0}, er[2] = {9, 9};
    k_reduce_axis(OP_SUM, K_F32, er, empty, 0, 1, 0, 2);
    CHECK_REAL(er[0], 0, 0);
    CHECK_REAL(er[1], 0, 0);
}

/* f32 sums accumulate in double and round once: compare with an independent double sum. */
static void test_f32_sum_precision(void)
{
    enum { N = 1000000 };
    static float v[N];
    double ref = 0;
    for (int i = 0; i < N; i++) {
        v[i] = 0.1f + (float)(i % 13) * 0.37f;
        ref += (double)v[i];
    }
    float got;
    reduce_all(OP_SUM, K_F32, v, N, &got);
    CHECK(got == (float)ref);
    /* a float accumulator would drift visibly: make sure the test can tell */
    float naive = 0;
    for (int i = 0; i < N; i++)
        naive += v[i];
    CHECK(naive != (float)ref);
    reduce_all(OP_MEAN, K_F32, v, N, &got);
    CHECK(got == (float)(ref / N));
}

static void test_shares(void)
{
    enum { N = 1000 };
    static float fv[N];
    static int32_t iv[N];
    static uint8_t bv[N];
    uint32_t seed = 12345;
    for (int i = 0; i < N; i++) {
        seed = seed * 1664525u + 1013904223u;
        fv[i] = (float)(seed >> 8) / (float)(1 << 24) * 200.0f - 100.0f;
        iv[i] = (int32_t)(seed % 50u) - 25; /* many ties */
        bv[i] = (seed >> 7) % 5u != 0;
    }
    fv[700] = fv[300] = 1000.0f; /* a tie for the max, across shares */
    const int ops[] = {OP_SUM, OP_MEAN, OP_NORM, OP_RMAX, OP_RMIN, OP_ARGMAX, OP_ARGMIN};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        float whole;
        reduce_all(ops[o], K_F32, fv, N, &whole);
        for (int shares = 2; shares <= 16; shares += 7)
            for (int order = 0; order < 3; order++) {
                float split;
                reduce_split(ops[o], K_F32, fv, N, shares, order, &split);
                CHECK(memcmp(&split, &whole, sizeof split) == 0);
            }
    }
    int32_t am;
    reduce_split(OP_ARGMAX, K_F32, fv, N, 9, 1, &am);
    CHECK_INT(am, 300);
    const int iops[] = {OP_SUM, OP_RMAX, OP_RMIN, OP_ARGMAX, OP_ARGMIN};
    for (size_t o = 0; o < sizeof iops / sizeof iops[0]; o++) {
        int32_t whole, split;
        reduce_all(iops[o], K_I32, iv, N, &whole);
        for (int order = 0; order < 3; order++) {
            reduce_split(iops[o], K_I32, iv, N, 7, order, &split);
            CHECK_INT(split, whole);
        }
    }
    /* argmin over ints with ties: the first index of the minimum, checked directly */
    int first = 0;
    for (int i = 1; i < N; i++)
        if (iv[i] < iv[first])
            first = i;
    reduce_split(OP_ARGMIN, K_I32, iv, N, 16, 1, &am);
    CHECK_INT(am, first);
    for (int op = OP_ALL; op <= OP_ANY; op++) {
        uint8_t whole, split;
        reduce_all(op, K_BOOL, bv, N, &whole);
        reduce_split(op, K_BOOL, bv, N, 5, 2, &split);
        CHECK_INT(split, whole);
    }
    /* an empty share merges as nothing */
    k_acc a = k_reduce_init(OP_RMAX, K_F32), empty = k_reduce_init(OP_RMAX, K_F32);
    k_reduce_range(OP_RMAX, K_F32, &a, fv, 0, 10);
    k_reduce_range(OP_RMAX, K_F32, &empty, fv, 10, 10);
    k_reduce_merge(OP_RMAX, K_F32, &empty, &a);
    float m1, m2;
    k_reduce_finish(OP_RMAX, K_F32, &empty, 10, &m1);
    reduce_all(OP_RMAX, K_F32, fv, 10, &m2);
    CHECK(m1 == m2);
}

static void test_dot(void)
{
    int32_t a[3] = {1, 2, 3}, b[3] = {4, 5, 6}, r;
    k_acc acc = k_reduce_init(OP_SUM, K_I32);
    k_dot_range(K_I32, &acc, a, b, 0, 3);
    k_dot_finish(K_I32, &acc, &r);
    CHECK_INT(r, 32);
    int32_t big[2] = {65536, 65536};
    acc = k_reduce_init(OP_SUM, K_I32);
    k_dot_range(K_I32, &acc, big, big, 0, 2);
    k_dot_finish(K_I32, &acc, &r);
    CHECK_INT(r, 0); /* 2 * 2^32 wraps to 0 */
    float fa[2] = {0.5f, -2}, fb[2] = {4, 0.25f}, fr;
    k_acc s1 = k_reduce_init(OP_SUM, K_F32), s2 = k_reduce_init(OP_SUM, K_F32);
    k_dot_range(K_F32, &s1, fa, fb, 0, 1);
    k_dot_range(K_F32, &s2, fa, fb, 1, 2);
    k_reduce_merge(OP_SUM, K_F32, &s2, &s1);
    k_dot_finish(K_F32, &s2, &fr);
    CHECK_REAL(fr, 1.5, 0);
    double da[2] = {1e-3, 3}, db[2] = {1e3, 3}, dr;
    acc = k_reduce_init(OP_SUM, K_F64);
    k_dot_range(K_F64, &acc, da, db, 0, 2);
    k_dot_finish(K_F64, &acc, &dr);
    CHECK_REAL(dr, 10, 1e-15);
    int64_t la[2] = {(int64_t)1 << 40, 3}, lb[2] = {2, -3}, lr;
    acc = k_reduce_init(OP_SUM, K_I64);
    k_dot_range(K_I64, &acc, la, lb, 0, 2);
    k_dot_finish(K_I64, &acc, &lr);
    CHECK_INT(lr, ((int64_t)1 << 41) - 9);
}

static void test_linalg(void)
{
    /* [[1,2,3],[4,5,6]] @ [[7,8],[9,10],[11,12]] = [[58,64],[139,154]] */
    int32_t a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12}, c[4] = {0};
    k_matmul(K_I32, c, a, b, 2, 3, 2, 0, 4);
    CHECK_INT(c[0], 58);
    CHECK_INT(c[1], 64);
    CHECK_INT(c[2], 139);
    CHECK_INT(c[3], 154);
    int32_t c2[4] = {-1, -1, -1, -1};
    k_matmul(K_I32, c2, a, b, 2, 3, 2, 1, 3); /* a share: elements 1 and 2 */
    CHECK_INT(c2[0], -1);
    CHECK_INT(c2[1], 64);
    CHECK_INT(c2[2], 139);
    CHECK_INT(c2[3], -1);
    /* matrix @ vector: [[1,2,3],[4,5,6]] @ [1,0,-1] = [-2,-2] */
    float fa[6] = {1, 2, 3, 4, 5, 6}, fv[3] = {1, 0, -1}, fr[2];
    k_matmul(K_F32, fr, fa, fv, 2, 3, 1, 0, 2);
    CHECK_REAL(fr[0], -2, 0);
    CHECK_REAL(fr[1], -2, 0);
    double da[4] = {0.5, 1, 2, 4}, db[4] = {2, 0, 0, 0.25}, dr[4];
    k_matmul(K_F64, dr, da, db, 2, 2, 2, 0, 4);
    CHECK_REAL(dr[0], 1, 0);
    CHECK_REAL(dr[1], 0.25, 0);
    CHECK_REAL(dr[2], 4, 0);
    CHECK_REAL(dr[3], 1, 0);
    int64_t la[1] = {(int64_t)1 << 62}, lb[1] = {4}, lr[1];
    k_matmul(K_I64, lr, la, lb, 1, 1, 1, 0, 1);
    CHECK_INT(lr[0], 0); /* 2^64 wraps */

    /* transpose [2,3] -> [3,2] */
    int32_t t[6];
    k_transpose(K_I32, t, a, 2, 3, 0, 6);
    const int32_t want[6] = {1, 4, 2, 5, 3, 6};
    for (int i = 0; i < 6; i++)
        CHECK_INT(t[i], want[i]);
    uint8_t bm[6] = {1, 0, 0, 1, 1, 0}, bt[6];
    k_transpose(K_BOOL, bt, bm, 3, 2, 0, 6); /* [3,2] -> [2,3] */
    const uint8_t bwant[6] = {1, 0, 1, 0, 1, 0};
    for (int i = 0; i < 6; i++)
        CHECK_INT(bt[i], bwant[i]);
    double dt[4];
    k_transpose(K_F64, dt, da, 2, 2, 0, 4);
    CHECK_REAL(dt[1], 2, 0);
    CHECK_REAL(dt[2], 1, 0);
}

/* PERMUTE: x = 0, 1, ..., 23 as [2, 3, 4] permuted by (2, 0, 1) is [4, 2, 3] with element
 * (i, j, k) = x[j, k, i] = 12 j + 4 k + i, worked by hand; a share from the middle (the odometer's
 * start found by division), a swap of the last two axes of doubles, bools, and a rank-5
 * permutation checked against nested loops over the result's indices. */
static void make_perm(cfx_slot *sl, cfx_record *r, int rank, const int32_t *bdims, const int *perm, int dtype)
{
    memset(sl, 0, 2 * sizeof *sl);
    memset(r, 0, sizeof *r);
    r->kind = REC_PERMUTE;
    r->a = 0;
    r->b = 1;
    sl[0].rank = sl[1].rank = (uint8_t)rank;
    sl[0].dtype = sl[1].dtype = (uint8_t)dtype;
    sl[0].count = sl[1].count = 1;
    for (int k = 0; k < rank; k++) {
        sl[1].dims[k] = bdims[k];
        sl[0].dims[k] = bdims[perm[k]];
        sl[1].count *= bdims[k];
        sl[0].count *= bdims[k];
        r->c |= perm[k] << (3 * k);
    }
}

static void test_permute(void)
{
    cfx_slot sl[2];
    cfx_record r;
    int32_t x[24], out[24];
    for (int i = 0; i < 24; i++)
        x[i] = i;
    const int32_t d3[3] = {2, 3, 4};
    const int p3[3] = {2, 0, 1};
    make_perm(sl, &r, 3, d3, p3, CFX_I32);
    k_pshape sh = rec_pshape(sl, &r);
    CHECK_INT(sh.rank, 3);
    CHECK_INT(sh.dims[0], 4);
    CHECK_INT(sh.stride[0], 1);
    CHECK_INT(sh.stride[1], 12);
    CHECK_INT(sh.stride[2], 4);
    k_permute(4, out, x, &sh, 0, 24);
    const int32_t want[12] = {0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21};
    for (int i = 0; i < 12; i++)
        CHECK_INT(out[i], want[i]);
    CHECK_INT(out[23], 23);
    CHECK_INT(out[18], 3);
    memset(out, 0, sizeof out);
    k_permute(4, out, x, &sh, 5, 9); /* a share: elements 5 to 8 only */
    CHECK_INT(out[4], 0);
    CHECK_INT(out[5], 20);
    CHECK_INT(out[6], 1);
    CHECK_INT(out[7], 5);
    CHECK_INT(out[8], 9);
    CHECK_INT(out[9], 0);
    CHECK_INT(k_permute_src(&sh, 13), 6); /* (2, 0, 1): x[0, 1, 2] */

    /* swapaxes(y, -1, -2) of [2, 2, 3] doubles y = 0 .. 11: [2, 3, 2] */
    double y[12], yo[12];
    for (int i = 0; i < 12; i++)
        y[i] = i + 0.5;
    const int32_t dy[3] = {2, 2, 3};
    const int py[3] = {0, 2, 1};
    make_perm(sl, &r, 3, dy, py, CFX_F64);
    sh = rec_pshape(sl, &r);
    k_permute(8, yo, y, &sh, 0, 12);
    const double wy[12] = {0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11};
    for (int i = 0; i < 12; i++)
        CHECK_REAL(yo[i], wy[i] + 0.5, 0);

    /* bools: [2, 3] -> [3, 2] as a rank-2 permutation */
    uint8_t b[6] = {1, 0, 0, 1, 1, 0}, bo[6];
    const int32_t db[2] = {2, 3};
    const int pb[2] = {1, 0};
    make_perm(sl, &r, 2, db, pb, CFX_BOOL);
    sh = rec_pshape(sl, &r);
    k_permute(1, bo, b, &sh, 0, 6);
    const uint8_t wb[6] = {1, 1, 0, 1, 0, 0};
    for (int i = 0; i < 6; i++)
        CHECK_INT(bo[i], wb[i]);

    /* rank 5: [2, 3, 1, 4, 2] by (3, 0, 4, 2, 1), against loops over the result's indices */
    int64_t z[48], zo[48];
    for (int i = 0; i < 48; i++)
        z[i] = 1000 + i;
    const int32_t dz[5] = {2, 3, 1, 4, 2};
    const int pz[5] = {3, 0, 4, 2, 1};
    make_perm(sl, &r, 5, dz, pz, CFX_I64);
    sh = rec_pshape(sl, &r);
    k_permute(8, zo, z, &sh, 0, 17);
    k_permute(8, zo, z, &sh, 17, 48);
    int64_t e = 0, bad = 0;
    for (int i0 = 0; i0 < 4; i0++)
        for (int i1 = 0; i1 < 2; i1++)
            for (int i2 = 0; i2 < 2; i2++)
                for (int i3 = 0; i3 < 1; i3++)
                    for (int i4 = 0; i4 < 3; i4++) {
                        /* source index: axis pz[k] of z is result index k */
                        int src[5];
                        src[3] = i0, src[0] = i1, src[4] = i2, src[2] = i3, src[1] = i4;
                        int64_t at = (((src[0] * 3 + src[1]) * 1 + src[2]) * 4 + src[3]) * 2 + src[4];
                        bad += zo[e++] != z[at];
                    }
    CHECK_INT(e, 48);
    CHECK_INT(bad, 0);
    CHECK_INT(rec_perm_axis(r.c, 0), 3);
    CHECK_INT(rec_perm_axis(r.c, 4), 1);
}

int main(void)
{
    test_integer_binary();
    test_bitwise();
    test_real_binary();
    test_bool_ops();
    test_unary();
    test_broadcast_and_ranges();
    test_numpy_broadcast();
    test_boxes();
    test_casts();
    test_make_and_move();
    test_reductions();
    test_reduce_axis();
    test_permute();
    test_f32_sum_precision();
    test_shares();
    test_dot();
    test_linalg();
    return test_finish("test_kernels");
}
