/* elementwise.h: the scalar arithmetic of every elementwise op, and the range bodies built on it.
 *
 * Each op's arithmetic exists once, as a scalar function per dtype (`k_add_i32(a, b)`), generated
 * by the macros below. The range bodies (k_unary, k_binary, k_cast, ...) loop over those
 * functions, and the CPU executor's scalar fast path calls the same functions through
 * k_unary1_* / k_binary1_*. Included from kernels.h; the rules are written down there.
 *
 * Integers wrap: arithmetic that may overflow goes through the unsigned type of the same
 * width, and the conversion back to the signed type is two's complement on every compiler
 * cfx supports (gcc, clang, nvcc), never undefined behaviour.
 */
#ifndef CFX_KERNELS_ELEMENTWISE_H
#define CFX_KERNELS_ELEMENTWISE_H

#include <math.h>
#include <stdint.h>

#include "hd.h"
#include "ops.h"
#include "cfxlimits.h"

/* dtype codes as plain ints, so this header does not need cfx.h (same values as cfx_dtype) */
#define K_F32 0
#define K_F64 1
#define K_I32 2
#define K_I64 3
#define K_BOOL 4

/* ==== scalar ops on integers ================================================================ */
#define K_INT_SCALAR_OPS(T, U, SFX)                                                               \
    CFX_HD T k_add_##SFX(T a, T b) { return (T)((U)a + (U)b); }                                   \
    CFX_HD T k_sub_##SFX(T a, T b) { return (T)((U)a - (U)b); }                                   \
    CFX_HD T k_mul_##SFX(T a, T b) { return (T)((U)a * (U)b); }                                   \
    /* C's division, truncating (truncdiv); INT_MIN / -1 wraps to INT_MIN; a zero divisor      \
     * gives 0 (never reached: CHECK_DIVIDE stops the run first) */                               \
    CFX_HD T k_truncdiv_##SFX(T a, T b)                                                           \
    {                                                                                             \
        if (b == 0)                                                                               \
            return 0;                                                                             \
        if (b == -1)                                                                              \
            return (T)(0u - (U)a);                                                                \
        return (T)(a / b);                                                                        \
    }                                                                                             \
    /* C's remainder (fmod): the sign of the dividend; INT_MIN % -1 is 0 */                       \
    CFX_HD T k_fmod_##SFX(T a, T b)                                                               \
    {                                                                                             \
        if (b == 0 || b == -1)                                                                    \
            return 0;                                                                             \
        return (T)(a % b);                                                                        \
    }                                                                                             \
    /* Python's //: the quotient rounded toward minus infinity; INT_MIN // -1 wraps */            \
    CFX_HD T k_floordiv_##SFX(T a, T b)                                                           \
    {                                                                                             \
        if (b == 0)                                                                               \
            return 0;                                                                             \
        if (b == -1)                                                                              \
            return (T)(0u - (U)a);                                                                \
        T q = (T)(a / b);                                                                         \
        return (a % b != 0 && ((a < 0) != (b < 0))) ? (T)(q - 1) : q;                            \
    }                                                                                             \
    /* Python's %: the sign of the divisor, so a // b * b + a % b == a */                         \
    CFX_HD T k_mod_##SFX(T a, T b)                                                                \
    {                                                                                             \
        if (b == 0 || b == -1)                                                                    \
            return 0;                                                                             \
        T r = (T)(a % b);                                                                         \
        return (r != 0 && ((r < 0) != (b < 0))) ? (T)(r + b) : r;                                 \
    }                                                                                             \
    /* never made by the compiler for integers (it divides them as f32): truncdiv's body */       \
    CFX_HD T k_div_##SFX(T a, T b) { return k_truncdiv_##SFX(a, b); }                             \
    CFX_HD T k_min_##SFX(T a, T b) { return a < b ? a : b; }                                      \
    CFX_HD T k_max_##SFX(T a, T b) { return a > b ? a : b; }                                      \
    /* negative exponent: the truncated real result (1, +-1 or 0); wraps like repeated mul */      \
    CFX_HD T k_pow_##SFX(T a, T b)                                                                \
    {                                                                                             \
        if (b < 0) {                                                                              \
            if (a == 1)                                                                           \
                return 1;                                                                         \
            if (a == -1)                                                                          \
                return (b & 1) ? (T)-1 : (T)1;                                                    \
            return 0;                                                                             \
        }                                                                                         \
        U base = (U)a, r = 1u;                                                                    \
        U e = (U)b;                                                                               \
        while (e) {                                                                               \
            if (e & 1u)                                                                           \
                r *= base;                                                                        \
            base *= base;                                                                         \
            e >>= 1;                                                                              \
        }                                                                                         \
        return (T)r;                                                                              \
    }                                                                                             \
    CFX_HD T k_neg_##SFX(T a) { return (T)(0u - (U)a); }                                          \
    /* the bitwise ops of two's complement, numpy's and Python's (~a is -a - 1) */                \
    CFX_HD T k_bitand_##SFX(T a, T b) { return (T)((U)a & (U)b); }                                \
    CFX_HD T k_bitor_##SFX(T a, T b) { return (T)((U)a | (U)b); }                                 \
    CFX_HD T k_bitxor_##SFX(T a, T b) { return (T)((U)a ^ (U)b); }                                \
    CFX_HD T k_invert_##SFX(T a) { return (T)~(U)a; }                                             \
    /* shifts as numpy's: a << b is a * 2^b wrapped, a >> b rounds toward minus infinity (the    \
     * sign kept); a count below 0 or of the width or more shifts every bit out (0, or -1 for a  \
     * negative a shifted right) */                                                               \
    CFX_HD T k_lshift_##SFX(T a, T b)                                                             \
    {                                                                                             \
        return (U)b >= sizeof(T) * 8u ? (T)0 : (T)((U)a << (U)b);                                \
    }                                                                                             \
    CFX_HD T k_rshift_##SFX(T a, T b)                                                             \
    {                                                                                             \
        if ((U)b >= sizeof(T) * 8u)                                                               \
            return a < 0 ? (T)-1 : (T)0;                                                          \
        return a < 0 ? (T)~(~(U)a >> (U)b) : (T)((U)a >> (U)b);                                   \
    }                                                                                             \
    CFX_HD T k_abs_##SFX(T a) { return a < 0 ? (T)(0u - (U)a) : a; }                              \
    CFX_HD T k_relu_##SFX(T a) { return a < 0 ? (T)0 : a; }                                      \
    CFX_HD T k_sign_##SFX(T a) { return (T)((a > 0) - (a < 0)); }

K_INT_SCALAR_OPS(int32_t, uint32_t, i32)
K_INT_SCALAR_OPS(int64_t, uint64_t, i64)

/* ==== scalar ops on reals =================================================================== */
/* FN is the libm suffix: `f` for float, empty for double. */
#define K_REAL_SCALAR_OPS(T, SFX, FN)                                                             \
    CFX_HD T k_add_##SFX(T a, T b) { return a + b; }                                              \
    CFX_HD T k_sub_##SFX(T a, T b) { return a - b; }                                              \
    CFX_HD T k_mul_##SFX(T a, T b) { return a * b; }                                              \
    CFX_HD T k_div_##SFX(T a, T b) { return a / b; }                                              \
    CFX_HD T k_truncdiv_##SFX(T a, T b) { return trunc##FN(a / b); }                             \
    CFX_HD T k_fmod_##SFX(T a, T b) { return fmod##FN(a, b); }                                    \
    /* Python's (and numpy's) // and %, from fmod as numpy's npy_divmod computes them: exact, a  \
     * zero divisor gives what IEEE division and fmod give (inf, nan), and a zero result takes   \
     * its sign as Python's does */                                                               \
    CFX_HD T k_floordiv_##SFX(T a, T b)                                                           \
    {                                                                                             \
        if (b == (T)0)                                                                            \
            return a / b;                                                                         \
        T m = fmod##FN(a, b);                                                                     \
        T q = (a - m) / b;                                                                        \
        if (m != (T)0 && ((b < (T)0) != (m < (T)0)))                                              \
            q -= (T)1;                                                                            \
        if (q == (T)0)                                                                            \
            return copysign##FN((T)0, a / b);                                                     \
        T f = floor##FN(q);                                                                       \
        return q - f > (T)0.5 ? f + (T)1 : f;                                                     \
    }                                                                                             \
    CFX_HD T k_mod_##SFX(T a, T b)                                                                \
    {                                                                                             \
        T m = fmod##FN(a, b);                                                                     \
        if (b == (T)0)                                                                            \
            return m;                                                                             \
        if (m == (T)0)                                                                            \
            return copysign##FN((T)0, b);                                                         \
        return (b < (T)0) != (m < (T)0) ? m + b : m;                                              \
    }                                                                                             \
    /* NaN propagates: the first NaN operand is the result */                                      \
    CFX_HD T k_min_##SFX(T a, T b) { return isnan(a) ? a : isnan(b) ? b : (b < a ? b : a); }      \
    CFX_HD T k_max_##SFX(T a, T b) { return isnan(a) ? a : isnan(b) ? b : (b > a ? b : a); }      \
    CFX_HD T k_pow_##SFX(T a, T b) { return pow##FN(a, b); }                                      \
    CFX_HD T k_neg_##SFX(T a) { return -a; }                                                      \
    CFX_HD T k_abs_##SFX(T a) { return fabs##FN(a); }                                             \
    CFX_HD T k_relu_##SFX(T a) { return isnan(a) ? a : (a > (T)0 ? a : (T)0); }                   \
    CFX_HD T k_exp_##SFX(T a) { return exp##FN(a); }                                              \
    CFX_HD T k_log_##SFX(T a) { return log##FN(a); }                                              \
    CFX_HD T k_sqrt_##SFX(T a) { return sqrt##FN(a); }                                            \
    CFX_HD T k_tanh_##SFX(T a) { return tanh##FN(a); }                                            \
    CFX_HD T k_sigmoid_##SFX(T a) { return (T)1 / ((T)1 + exp##FN(-a)); }                        \
    CFX_HD T k_sin_##SFX(T a) { return sin##FN(a); }                                              \
    CFX_HD T k_cos_##SFX(T a) { return cos##FN(a); }                                              \
    CFX_HD T k_tan_##SFX(T a) { return tan##FN(a); }                                              \
    CFX_HD T k_floor_##SFX(T a) { return floor##FN(a); }                                          \
    CFX_HD T k_ceil_##SFX(T a) { return ceil##FN(a); }                                            \
    /* halves to even, as Python's round and numpy's: rint in the default rounding mode */         \
    CFX_HD T k_round_##SFX(T a) { return rint##FN(a); }                                           \
    CFX_HD T k_erf_##SFX(T a) { return erf##FN(a); }                                              \
    /* the inverse functions, C's: asin, acos past +-1 and acosh below 1 are NaN, atanh(+-1) +-inf */ \
    CFX_HD T k_atan_##SFX(T a) { return atan##FN(a); }                                            \
    CFX_HD T k_asin_##SFX(T a) { return asin##FN(a); }                                            \
    CFX_HD T k_acos_##SFX(T a) { return acos##FN(a); }                                            \
    CFX_HD T k_asinh_##SFX(T a) { return asinh##FN(a); }                                          \
    CFX_HD T k_acosh_##SFX(T a) { return acosh##FN(a); }                                          \
    CFX_HD T k_atanh_##SFX(T a) { return atanh##FN(a); }                                          \
    /* the angle of the point (b, a) = (x, y), in [-pi, pi], with C99's quadrants and signed zeros */ \
    CFX_HD T k_atan2_##SFX(T a, T b) { return atan2##FN(a, b); }                                  \
    /* -1, 0 or 1; NaN stays NaN, and -0 gives 0 */                                                \
    CFX_HD T k_sign_##SFX(T a) { return isnan(a) ? a : (T)((a > (T)0) - (a < (T)0)); }            \
    /* a rounded to BITS significant bits, the smallest normal exponent EMIN (below it the        \
     * quantum stays 2^(EMIN - BITS + 1)), ties to even, and past MAX +-inf: the value the        \
     * narrow format holds. a / q and r * q are exact (q a power of two, the results normal). */  \
    CFX_HD T k_narrow_##SFX(T a, int bits, int emin, T max)                                       \
    {                                                                                             \
        if (isnan(a) || isinf(a))                                                                 \
            return a;                                                                             \
        int e;                                                                                    \
        (void)frexp##FN(a, &e);                                                                   \
        e = e - 1 < emin ? emin : e - 1;                                                          \
        T q = ldexp##FN((T)1, e - (bits - 1));                                                    \
        T r = rint##FN(a / q) * q;                                                                \
        return fabs##FN(r) > max ? copysign##FN(ldexp##FN((T)1, 4096), a) : r; /* +-inf */        \
    }                                                                                             \
    /* IEEE binary16 (ONNX's float16): 11 bits, normal from 2^-14, at most 65504 */               \
    CFX_HD T k_round_f16_##SFX(T a) { return k_narrow_##SFX(a, 11, -14, (T)65504); }             \
    /* bfloat16: 8 bits, f32's exponents, at most (2 - 2^-7) 2^127 */                             \
    CFX_HD T k_round_bf16_##SFX(T a) { return k_narrow_##SFX(a, 8, -126, (T)3.3895313892515355e38); } \
    /* NaN, without math.h's NAN: inf - inf */                                                    \
    CFX_HD T k_nan_##SFX(void) { T inf = ldexp##FN((T)1, 4096); return inf - inf; }               \
    /* The float8 formats (OCP's, ONNX's, ml_dtypes' conversion without saturation): rounded as   \
     * k_narrow does; a format with no infinities (FN, FNUZ) gives NaN past its largest value and \
     * for +-inf, one with no -0 (FNUZ) gives 0 for -0. E4M3FN: 4 bits, normal from 2^-6, at most \
     * 448; E4M3FNUZ: 4 bits, from 2^-7, at most 240; E5M2: 3 bits, from 2^-14, at most 57344;     \
     * E5M2FNUZ: 3 bits, from 2^-15, at most 57344. */                                            \
    CFX_HD T k_round_f8e4m3fn_##SFX(T a)                                                          \
    {                                                                                             \
        T r = k_narrow_##SFX(a, 4, -6, (T)448);                                                   \
        return isinf(r) ? k_nan_##SFX() : r;                                                      \
    }                                                                                             \
    CFX_HD T k_round_f8e4m3fnuz_##SFX(T a)                                                        \
    {                                                                                             \
        T r = k_narrow_##SFX(a, 4, -7, (T)240);                                                   \
        return isinf(r) ? k_nan_##SFX() : r == (T)0 ? (T)0 : r;                                  \
    }                                                                                             \
    CFX_HD T k_round_f8e5m2_##SFX(T a) { return k_narrow_##SFX(a, 3, -14, (T)57344); }            \
    CFX_HD T k_round_f8e5m2fnuz_##SFX(T a)                                                        \
    {                                                                                             \
        T r = k_narrow_##SFX(a, 3, -15, (T)57344);                                                \
        return isinf(r) ? k_nan_##SFX() : r == (T)0 ? (T)0 : r;                                   \
    }                                                                                             \
    /* float4 E2M1: 2 bits, normal from 2^0, at most 6, and neither infinities nor NaN: past 6    \
     * +-6 (saturated, as OCP's MX spec and ml_dtypes convert), NaN gives 0 */                    \
    CFX_HD T k_round_f4e2m1_##SFX(T a)                                                            \
    {                                                                                             \
        if (isnan(a))                                                                             \
            return (T)0;                                                                          \
        T r = k_narrow_##SFX(a, 2, 0, (T)6);                                                      \
        return isinf(r) ? copysign##FN((T)6, a) : r;                                              \
    }                                                                                             \
    /* float8 E8M0: the powers of two 2^-127 ... 2^127 and NaN, no sign, no zero (ml_dtypes'      \
     * float8_e8m0fnu): the nearest, halfway (3 2^(e-1)) up, as ONNX's round_mode "nearest";       \
     * a positive value under 2^-127 gives 2^-127; zero, a negative value, NaN, inf and anything    \
     * from 1.5 2^127 on give NaN. a = m 2^e with m in [0.5, 1): 2^(e-1) or 2^e. */              \
    CFX_HD T k_round_f8e8m0_##SFX(T a)                                                            \
    {                                                                                             \
        if (!(a > (T)0) || isinf(a))                                                              \
            return k_nan_##SFX();                                                                 \
        int e;                                                                                    \
        T m = frexp##FN(a, &e);                                                                   \
        if (m >= (T)0.75)                                                                         \
            e++;                                                                                  \
        return e - 1 > 127 ? k_nan_##SFX() : e - 1 < -127 ? ldexp##FN((T)1, -127) : ldexp##FN((T)1, e - 1); \
    }

K_REAL_SCALAR_OPS(float, f32, f)
K_REAL_SCALAR_OPS(double, f64, )

/* The value of IEEE binary16 bits (a float16 .npy element, an ONNX float16), exactly: the sign,
 * the exponent rebased from 15 to 127 (31, inf and NaN, to 255) and the 10 bits moved up by 13;
 * a subnormal m * 2^-24. (No INFINITY or NAN: NVRTC compiles this file without math.h.) */
CFX_HD float k_f16_value(uint16_t h)
{
    uint32_t e = (h >> 10) & 31, m = h & 1023;
    if (e == 0) {
        float v = ldexpf((float)m, -24);
        return h & 0x8000 ? -v : v;
    }
    union { uint32_t u; float f; } v = {((uint32_t)(h & 0x8000) << 16) | ((e == 31 ? 255 : e + 112) << 23) | m << 13};
    return v.f;
}

/* The value of bfloat16 bits: the top half of an f32's. */
CFX_HD float k_bf16_value(uint16_t h)
{
    union { uint32_t u; float f; } v = {(uint32_t)h << 16};
    return v.f;
}

/* ==== comparisons (every numeric dtype; NaN compares false except for ne) ==================== */
#define K_COMPARE_OPS(T, SFX)                                                                     \
    CFX_HD uint8_t k_lt_##SFX(T a, T b) { return a < b; }                                         \
    CFX_HD uint8_t k_le_##SFX(T a, T b) { return a <= b; }                                        \
    CFX_HD uint8_t k_gt_##SFX(T a, T b) { return a > b; }                                         \
    CFX_HD uint8_t k_ge_##SFX(T a, T b) { return a >= b; }                                        \
    CFX_HD uint8_t k_eq_##SFX(T a, T b) { return a == b; }                                        \
    CFX_HD uint8_t k_ne_##SFX(T a, T b) { return a != b; }

K_COMPARE_OPS(float, f32)
K_COMPARE_OPS(double, f64)
K_COMPARE_OPS(int32_t, i32)
K_COMPARE_OPS(int64_t, i64)

/* ==== bools: stored as one byte; any non-zero byte reads as true, results are 0 or 1 ========= */
CFX_HD uint8_t k_not_b(uint8_t a) { return a == 0; }
CFX_HD uint8_t k_and_b(uint8_t a, uint8_t b) { return a != 0 && b != 0; }
CFX_HD uint8_t k_or_b(uint8_t a, uint8_t b) { return a != 0 || b != 0; }
CFX_HD uint8_t k_eq_b(uint8_t a, uint8_t b) { return (a != 0) == (b != 0); }
CFX_HD uint8_t k_ne_b(uint8_t a, uint8_t b) { return (a != 0) != (b != 0); }

/* ==== op lists per dtype class ==============================================================
 * X(OP, FUNCTION_STEM, RESULT_IS_BOOL). The scalar dispatchers and the range loops are both
 * generated from these, so a case cannot be missing from one and present in the other. */
#define K_NUM_BINARY_OPS(X) \
    X(OP_ADD, add, 0) X(OP_SUB, sub, 0) X(OP_MUL, mul, 0) X(OP_DIV, div, 0) X(OP_MOD, mod, 0) \
    X(OP_FLOORDIV, floordiv, 0) X(OP_TRUNCDIV, truncdiv, 0) X(OP_FMOD, fmod, 0) \
    X(OP_MIN, min, 0) X(OP_MAX, max, 0) X(OP_POW, pow, 0) \
    X(OP_LT, lt, 1) X(OP_LE, le, 1) X(OP_GT, gt, 1) X(OP_GE, ge, 1) X(OP_EQ, eq, 1) X(OP_NE, ne, 1)
/* the integers' binary ops: the numeric ones and the bitwise ones */
#define K_INT_BINARY_OPS(X) K_NUM_BINARY_OPS(X) \
    X(OP_BITAND, bitand, 0) X(OP_BITOR, bitor, 0) X(OP_BITXOR, bitxor, 0) X(OP_LSHIFT, lshift, 0) \
    X(OP_RSHIFT, rshift, 0)
/* the reals' binary ops: the numeric ones and those of reals only */
#define K_REAL_BINARY_OPS(X) K_NUM_BINARY_OPS(X) X(OP_ATAN2, atan2, 0)
#define K_BOOL_BINARY_OPS(X) X(OP_AND, and, 1) X(OP_OR, or, 1) X(OP_EQ, eq, 1) X(OP_NE, ne, 1)
#define K_INT_UNARY_OPS(X) \
    X(OP_NEG, neg, 0) X(OP_ABS, abs, 0) X(OP_RELU, relu, 0) X(OP_SIGN, sign, 0) X(OP_INVERT, invert, 0)
#define K_REAL_UNARY_OPS(X) \
    X(OP_NEG, neg, 0) X(OP_ABS, abs, 0) X(OP_RELU, relu, 0) X(OP_EXP, exp, 0) X(OP_LOG, log, 0) \
    X(OP_SQRT, sqrt, 0) X(OP_TANH, tanh, 0) X(OP_SIGMOID, sigmoid, 0) X(OP_SIN, sin, 0) \
    X(OP_COS, cos, 0) X(OP_TAN, tan, 0) X(OP_FLOOR, floor, 0) X(OP_CEIL, ceil, 0) \
    X(OP_ROUND, round, 0) X(OP_ERF, erf, 0) X(OP_SIGN, sign, 0) \
    X(OP_ATAN, atan, 0) X(OP_ASIN, asin, 0) X(OP_ACOS, acos, 0) X(OP_ASINH, asinh, 0) \
    X(OP_ACOSH, acosh, 0) X(OP_ATANH, atanh, 0) \
    X(OP_ROUND_F16, round_f16, 0) X(OP_ROUND_BF16, round_bf16, 0) \
    X(OP_ROUND_F8E4M3FN, round_f8e4m3fn, 0) X(OP_ROUND_F8E4M3FNUZ, round_f8e4m3fnuz, 0) \
    X(OP_ROUND_F8E5M2, round_f8e5m2, 0) X(OP_ROUND_F8E5M2FNUZ, round_f8e5m2fnuz, 0) \
    X(OP_ROUND_F4E2M1, round_f4e2m1, 0) X(OP_ROUND_F8E8M0, round_f8e8m0, 0)
#define K_BOOL_UNARY_OPS(X) X(OP_NOT, not, 1)

/* ==== one-element dispatchers (the CPU fast path) ===========================================
 * k_binary1_i32(op, dst, a, b): dst gets op(a, b), as T or as a bool byte for comparisons. */
#define K_CASE1_BIN(OPC, STEM, ISBOOL, SFX, T)                                                    \
    case OPC:                                                                                     \
        if (ISBOOL)                                                                               \
            *(uint8_t *)dst = (uint8_t)k_##STEM##_##SFX(a, b);                                    \
        else                                                                                      \
            *(T *)dst = (T)k_##STEM##_##SFX(a, b);                                                \
        return;
#define K_CASE1_UN(OPC, STEM, ISBOOL, SFX, T)                                                     \
    case OPC:                                                                                     \
        *(T *)dst = (T)k_##STEM##_##SFX(a);                                                       \
        return;

#define K_BIN1_I32(o, s, r) K_CASE1_BIN(o, s, r, i32, int32_t)
#define K_BIN1_I64(o, s, r) K_CASE1_BIN(o, s, r, i64, int64_t)
#define K_BIN1_F32(o, s, r) K_CASE1_BIN(o, s, r, f32, float)
#define K_BIN1_F64(o, s, r) K_CASE1_BIN(o, s, r, f64, double)
#define K_BIN1_B(o, s, r) K_CASE1_BIN(o, s, r, b, uint8_t)
#define K_UN1_I32(o, s, r) K_CASE1_UN(o, s, r, i32, int32_t)
#define K_UN1_I64(o, s, r) K_CASE1_UN(o, s, r, i64, int64_t)
#define K_UN1_F32(o, s, r) K_CASE1_UN(o, s, r, f32, float)
#define K_UN1_F64(o, s, r) K_CASE1_UN(o, s, r, f64, double)
#define K_UN1_B(o, s, r) K_CASE1_UN(o, s, r, b, uint8_t)

CFX_HD void k_binary1_i32(int op, void *dst, int32_t a, int32_t b) { switch (op) { K_INT_BINARY_OPS(K_BIN1_I32) } }
CFX_HD void k_binary1_i64(int op, void *dst, int64_t a, int64_t b) { switch (op) { K_INT_BINARY_OPS(K_BIN1_I64) } }
CFX_HD void k_binary1_f32(int op, void *dst, float a, float b) { switch (op) { K_REAL_BINARY_OPS(K_BIN1_F32) } }
CFX_HD void k_binary1_f64(int op, void *dst, double a, double b) { switch (op) { K_REAL_BINARY_OPS(K_BIN1_F64) } }
CFX_HD void k_binary1_b(int op, void *dst, uint8_t a, uint8_t b) { switch (op) { K_BOOL_BINARY_OPS(K_BIN1_B) } }
CFX_HD void k_unary1_i32(int op, void *dst, int32_t a) { switch (op) { K_INT_UNARY_OPS(K_UN1_I32) } }
CFX_HD void k_unary1_i64(int op, void *dst, int64_t a) { switch (op) { K_INT_UNARY_OPS(K_UN1_I64) } }
CFX_HD void k_unary1_f32(int op, void *dst, float a) { switch (op) { K_REAL_UNARY_OPS(K_UN1_F32) } }
CFX_HD void k_unary1_f64(int op, void *dst, double a) { switch (op) { K_REAL_UNARY_OPS(K_UN1_F64) } }
CFX_HD void k_unary1_b(int op, void *dst, uint8_t a) { switch (op) { K_BOOL_UNARY_OPS(K_UN1_B) } }

/* ==== range bodies ==========================================================================
 * A one-element operand is broadcast by giving it stride 0. */
#define K_CASE_BIN(OPC, STEM, ISBOOL, SFX, T)                                                     \
    case OPC:                                                                                     \
        K_RACE_RANGE_R(a_, lo, hi, sa, sizeof(T));                                               \
        K_RACE_RANGE_R(b_, lo, hi, sb, sizeof(T));                                               \
        if (ISBOOL) {                                                                             \
            uint8_t *d_ = (uint8_t *)dst;                                                         \
            K_RACE_RANGE_W(d_, lo, hi, 1);                                                        \
            for (int64_t e = lo; e < hi; e++)                                                     \
                d_[e] = (uint8_t)k_##STEM##_##SFX(a_[e * sa], b_[e * sb]);                        \
        } else {                                                                                  \
            T *d_ = (T *)dst;                                                                     \
            K_RACE_RANGE_W(d_, lo, hi, sizeof(T));                                                \
            for (int64_t e = lo; e < hi; e++)                                                     \
                d_[e] = (T)k_##STEM##_##SFX(a_[e * sa], b_[e * sb]);                              \
        }                                                                                         \
        return;
#define K_CASE_UN(OPC, STEM, ISBOOL, SFX, T)                                                      \
    case OPC: {                                                                                   \
        T *d_ = (T *)dst;                                                                         \
        K_RACE_RANGE_R(s_, lo, hi, 1, sizeof(T));                                                 \
        K_RACE_RANGE_W(d_, lo, hi, sizeof(T));                                                    \
        for (int64_t e = lo; e < hi; e++)                                                         \
            d_[e] = (T)k_##STEM##_##SFX(s_[e]);                                                   \
        return;                                                                                   \
    }

#define K_BIN_I32(o, s, r) K_CASE_BIN(o, s, r, i32, int32_t)
#define K_BIN_I64(o, s, r) K_CASE_BIN(o, s, r, i64, int64_t)
#define K_BIN_F32(o, s, r) K_CASE_BIN(o, s, r, f32, float)
#define K_BIN_F64(o, s, r) K_CASE_BIN(o, s, r, f64, double)
#define K_BIN_B(o, s, r) K_CASE_BIN(o, s, r, b, uint8_t)
#define K_UN_I32(o, s, r) K_CASE_UN(o, s, r, i32, int32_t)
#define K_UN_I64(o, s, r) K_CASE_UN(o, s, r, i64, int64_t)
#define K_UN_F32(o, s, r) K_CASE_UN(o, s, r, f32, float)
#define K_UN_F64(o, s, r) K_CASE_UN(o, s, r, f64, double)
#define K_UN_B(o, s, r) K_CASE_UN(o, s, r, b, uint8_t)

CFX_HD void k_unary(int op, int dtype, void *dst, const void *src, int64_t lo, int64_t hi)
{
    switch (dtype) {
    case K_I32: { const int32_t *s_ = (const int32_t *)src; switch (op) { K_INT_UNARY_OPS(K_UN_I32) } break; }
    case K_I64: { const int64_t *s_ = (const int64_t *)src; switch (op) { K_INT_UNARY_OPS(K_UN_I64) } break; }
    case K_F32: { const float *s_ = (const float *)src; switch (op) { K_REAL_UNARY_OPS(K_UN_F32) } break; }
    case K_F64: { const double *s_ = (const double *)src; switch (op) { K_REAL_UNARY_OPS(K_UN_F64) } break; }
    case K_BOOL: { const uint8_t *s_ = (const uint8_t *)src; switch (op) { K_BOOL_UNARY_OPS(K_UN_B) } break; }
    }
}

CFX_HD void k_binary(int op, int dtype, void *dst, const void *a, int64_t na, const void *b,
                     int64_t nb, int64_t lo, int64_t hi)
{
    int64_t sa = na == 1 ? 0 : 1, sb = nb == 1 ? 0 : 1;
    switch (dtype) {
    case K_I32: { const int32_t *a_ = (const int32_t *)a, *b_ = (const int32_t *)b; switch (op) { K_INT_BINARY_OPS(K_BIN_I32) } break; }
    case K_I64: { const int64_t *a_ = (const int64_t *)a, *b_ = (const int64_t *)b; switch (op) { K_INT_BINARY_OPS(K_BIN_I64) } break; }
    case K_F32: { const float *a_ = (const float *)a, *b_ = (const float *)b; switch (op) { K_REAL_BINARY_OPS(K_BIN_F32) } break; }
    case K_F64: { const double *a_ = (const double *)a, *b_ = (const double *)b; switch (op) { K_REAL_BINARY_OPS(K_BIN_F64) } break; }
    case K_BOOL: { const uint8_t *a_ = (const uint8_t *)a, *b_ = (const uint8_t *)b; switch (op) { K_BOOL_BINARY_OPS(K_BIN_B) } break; }
    }
}

/* ==== casts ================================================================================= */
/* Real to integer: truncate toward zero, saturate at the type's range, NaN to 0. The bounds
 * are exact doubles (2^31, 2^63), so the comparisons decide before any undefined conversion. */
CFX_HD int32_t k_real_to_i32(double v)
{
    if (isnan(v))
        return 0;
    if (v >= 2147483648.0)
        return INT32_MAX;
    if (v <= -2147483649.0)
        return INT32_MIN;
    return (int32_t)v;
}

CFX_HD int64_t k_real_to_i64(double v)
{
    if (isnan(v))
        return 0;
    if (v >= 9223372036854775808.0)
        return INT64_MAX;
    if (v < -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

CFX_HD int k_elem_size(int dtype)
{
    return dtype == K_F64 || dtype == K_I64 ? 8 : dtype == K_BOOL ? 1 : 4;
}

/* Reads element e of any dtype as a double (reals, exactly for f32 and f64) or an int64
 * (integers and bools). */
CFX_HD double k_get_real(int dtype, const void *p, int64_t e)
{
    switch (dtype) {
    case K_F32: return (double)((const float *)p)[e];
    case K_F64: return ((const double *)p)[e];
    case K_I32: return (double)((const int32_t *)p)[e];
    case K_I64: return (double)((const int64_t *)p)[e];
    default: return ((const uint8_t *)p)[e] != 0 ? 1.0 : 0.0;
    }
}

CFX_HD int64_t k_get_int(int dtype, const void *p, int64_t e)
{
    switch (dtype) {
    case K_I32: return ((const int32_t *)p)[e];
    case K_I64: return ((const int64_t *)p)[e];
    case K_BOOL: return ((const uint8_t *)p)[e] != 0;
    default: return 0;
    }
}

/* Integer to integer narrowing (i64 -> i32) wraps, as C, NumPy and PyTorch do; the rules in
 * kernels.h fix only the real-to-integer direction. Real to bool is `!= 0` (NaN is true). */
CFX_HD void k_cast(int dst_dtype, void *dst, int src_dtype, const void *src, int64_t lo, int64_t hi)
{
    int src_real = src_dtype == K_F32 || src_dtype == K_F64;
    K_RACE_RANGE_R(src, lo, hi, 1, k_elem_size(src_dtype));
    K_RACE_RANGE_W(dst, lo, hi, k_elem_size(dst_dtype));
    for (int64_t e = lo; e < hi; e++) {
        switch (dst_dtype) {
        case K_F32:
            ((float *)dst)[e] = src_real ? (float)k_get_real(src_dtype, src, e)
                                         : (float)k_get_int(src_dtype, src, e);
            break;
        case K_F64:
            ((double *)dst)[e] = src_real ? k_get_real(src_dtype, src, e)
                                          : (double)k_get_int(src_dtype, src, e);
            break;
        case K_I32:
            ((int32_t *)dst)[e] = src_real ? k_real_to_i32(k_get_real(src_dtype, src, e))
                                           : (int32_t)(uint32_t)(uint64_t)k_get_int(src_dtype, src, e);
            break;
        case K_I64:
            ((int64_t *)dst)[e] = src_real ? k_real_to_i64(k_get_real(src_dtype, src, e))
                                           : k_get_int(src_dtype, src, e);
            break;
        case K_BOOL:
            ((uint8_t *)dst)[e] = src_real ? (uint8_t)(k_get_real(src_dtype, src, e) != 0.0 ||
                                                       isnan(k_get_real(src_dtype, src, e)))
                                           : (uint8_t)(k_get_int(src_dtype, src, e) != 0);
            break;
        }
    }
}

/* ==== making and moving tensors ============================================================= */
CFX_HD void k_copy_bytes(void *dst, const void *src, int64_t lo, int64_t hi)
{
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *s = (const uint8_t *)src;
    K_RACE_RANGE_R(s, lo, hi, 1, 1);
    K_RACE_RANGE_W(d, lo, hi, 1);
    for (int64_t i = lo; i < hi; i++)
        d[i] = s[i];
}

CFX_HD void k_fill(int dtype, void *dst, const void *value, int64_t lo, int64_t hi)
{
    K_RACE_RANGE_R(value, 0, hi > lo ? 1 : 0, 0, k_elem_size(dtype));
    K_RACE_RANGE_W(dst, lo, hi, k_elem_size(dtype));
    switch (dtype) {
    case K_F32: { float v = *(const float *)value; for (int64_t e = lo; e < hi; e++) ((float *)dst)[e] = v; break; }
    case K_F64: { double v = *(const double *)value; for (int64_t e = lo; e < hi; e++) ((double *)dst)[e] = v; break; }
    case K_I32: { int32_t v = *(const int32_t *)value; for (int64_t e = lo; e < hi; e++) ((int32_t *)dst)[e] = v; break; }
    case K_I64: { int64_t v = *(const int64_t *)value; for (int64_t e = lo; e < hi; e++) ((int64_t *)dst)[e] = v; break; }
    case K_BOOL: { uint8_t v = *(const uint8_t *)value != 0; for (int64_t e = lo; e < hi; e++) ((uint8_t *)dst)[e] = v; break; }
    }
}

/* dst[e] = e; for bool, e != 0 (the cast rule). */
CFX_HD void k_iota(int dtype, void *dst, int64_t lo, int64_t hi)
{
    K_RACE_RANGE_W(dst, lo, hi, k_elem_size(dtype));
    for (int64_t e = lo; e < hi; e++) {
        switch (dtype) {
        case K_F32: ((float *)dst)[e] = (float)e; break;
        case K_F64: ((double *)dst)[e] = (double)e; break;
        case K_I32: ((int32_t *)dst)[e] = (int32_t)e; break;
        case K_I64: ((int64_t *)dst)[e] = e; break;
        case K_BOOL: ((uint8_t *)dst)[e] = e != 0; break;
        }
    }
}

CFX_HD void k_where(int dtype, void *dst, const uint8_t *c, int64_t nc, const void *a, int64_t na,
                    const void *b, int64_t nb, int64_t lo, int64_t hi)
{
    int64_t sc = nc == 1 ? 0 : 1, sa = na == 1 ? 0 : 1, sb = nb == 1 ? 0 : 1;
    int size = k_elem_size(dtype);
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *pa = (const uint8_t *)a, *pb = (const uint8_t *)b;
    K_RACE_RANGE_R(c, lo, hi, sc, 1);
    K_RACE_RANGE_W(d, lo, hi, size);
    for (int64_t e = lo; e < hi; e++) /* the operand each element takes */
        K_RACE_R(c[e * sc] ? pa + e * sa * size : pb + e * sb * size, size);
    for (int64_t e = lo; e < hi; e++) {
        const uint8_t *from = c[e * sc] ? pa + e * sa * size : pb + e * sb * size;
        for (int i = 0; i < size; i++)
            d[e * size + i] = from[i];
    }
    if (dtype == K_BOOL) /* keep bools 0/1 even if an input byte was another non-zero value */
        for (int64_t e = lo; e < hi; e++)
            d[e] = d[e] != 0;
}


/* Numpy broadcasting of a source of shape sdims (rank srank) to dims (rank drank >= srank):
 * the source's dims are aligned at the right and each is 1 (repeated) or the destination's. */
typedef struct k_bshape {
    int32_t dims[K_MAX_RANK], sdims[K_MAX_RANK];
    int32_t drank, srank;
} k_bshape;

/* The source element of destination element e. */
CFX_HD int64_t k_broadcast_src(const k_bshape *sh, int64_t e)
{
    int64_t src = 0, stride = 1;
    for (int d = sh->drank - 1, s = sh->srank - 1; d >= 0; d--, s--) {
        int64_t i = e % sh->dims[d];
        e /= sh->dims[d];
        if (s >= 0) {
            if (sh->sdims[s] != 1)
                src += i * stride;
            stride *= sh->sdims[s];
        }
    }
    return src;
}

/* dst[e] = src[k_broadcast_src(e)] for e in [lo, hi); size is the element size in bytes. */
CFX_HD void k_broadcast(int size, void *dst, const void *src, const k_bshape *sh, int64_t lo, int64_t hi)
{
    /* bytes, not words: reading a float through another type's pointer would break aliasing */
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *s = (const uint8_t *)src;
    K_RACE_RANGE_W(d, lo, hi, size);
    for (int64_t e = lo; e < hi; e++) {
        int64_t from = k_broadcast_src(sh, e);
        K_RACE_R(s + from * size, size);
        for (int b = 0; b < size; b++)
            d[e * size + b] = s[from * size + b];
    }
}

/* A box of a tensor (GET_BOX, SET_BOX): per dimension a start and a length, -1 for an index
 * (one element, the dimension dropped from the box's shape). Box element e, in row-major
 * order over the lengths, is element k_box_src(e) of the tensor. */
typedef struct k_box {
    int32_t rank;
    int32_t dims[K_MAX_RANK], len[K_MAX_RANK];
    int64_t start[K_MAX_RANK];
} k_box;

/* A start as the executor read it, made safe: an index counts from the end when negative; both
 * are clamped so the box lies inside the dimension. The lowering checks every start before
 * (CHECK_INDEX, CHECK_BOUND), so the clamp only guards programs that were not. */
CFX_HD int64_t k_box_start(int64_t v, int32_t len, int32_t dim)
{
    if (len < 0) {
        v = v < 0 ? v + dim : v;
        return v < 0 ? 0 : v >= dim ? dim - 1 : v;
    }
    return v < 0 ? 0 : v > dim - len ? dim - len : v;
}

CFX_HD int64_t k_box_src(const k_box *b, int64_t e)
{
    int64_t src = 0, stride = 1;
    for (int d = b->rank - 1; d >= 0; d--) {
        int64_t l = b->len[d] < 0 ? 1 : b->len[d];
        src += (b->start[d] + e % l) * stride;
        e /= l;
        stride *= b->dims[d];
    }
    return src;
}

/* dst[e] = src[k_box_src(e)] (get) or dst[k_box_src(e)] = src[e] (set), e in [lo, hi); bytes,
 * as k_broadcast, so no element is read through another type's pointer. */
CFX_HD void k_box_copy(int set, int size, void *dst, const void *src, const k_box *b, int64_t lo, int64_t hi)
{
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *s = (const uint8_t *)src;
    for (int64_t e = lo; e < hi; e++) {
        int64_t x = k_box_src(b, e), de = set ? x : e, se = set ? e : x;
        K_RACE_R(s + se * size, size);
        K_RACE_W(d + de * size, size);
        for (int k = 0; k < size; k++)
            d[de * size + k] = s[se * size + k];
    }
}

/* GATHER, numpy's take along an axis: the source [outer, n, inner] and the result [outer, m,
 * inner] for m indices (of dtype idx_dtype, in row-major order of the index tensor). Result
 * element e comes from source element (o * n + i) * inner + k, e = (o * m + j) * inner + k and
 * i index j, negative counting from the end and clamped into [0, n) (the lowering checked every
 * index first, so the clamp only keeps an unchecked program inside the source; n > 0). */
CFX_HD int64_t k_gather_src(int idx_dtype, const void *idx, int64_t m, int64_t n, int64_t inner, int64_t e)
{
    int64_t k = e % inner, j = e / inner % m, o = e / inner / m;
    int64_t i = k_get_int(idx_dtype, idx, j);
    i = i < 0 ? i + n : i;
    i = i < 0 ? 0 : i >= n ? n - 1 : i;
    return (o * n + i) * inner + k;
}

/* dst[e] = src[k_gather_src(e)] for e in [lo, hi), a run of inner elements at a time; size is
 * the element size in bytes. */
CFX_HD void k_gather(int size, void *dst, const void *src, int idx_dtype, const void *idx, int64_t m, int64_t n,
                     int64_t inner, int64_t lo, int64_t hi)
{
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *s = (const uint8_t *)src;
    K_RACE_RANGE_W(d, lo, hi, size);
    for (int64_t e = lo; e < hi;) {
        int64_t run = inner - e % inner, from = k_gather_src(idx_dtype, idx, m, n, inner, e);
        if (run > hi - e)
            run = hi - e;
        K_RACE_R(s + from * size, run * size);
        for (int64_t b = 0; b < run * size; b++)
            d[e * size + b] = s[from * size + b];
        e += run;
    }
}

/* PERMUTE, numpy's transpose(src, perm): the result's dimension k is the source's dimension
 * perm[k], so result element e, its index i over dims (the result's, row-major), comes from
 * source element sum_k i[k] * stride[k], stride[k] the source's stride of its dimension perm[k]
 * (rec_pshape makes the shape). */
typedef struct k_pshape {
    int32_t rank;
    int64_t dims[K_MAX_RANK], stride[K_MAX_RANK];
} k_pshape;

CFX_HD int64_t k_permute_src(const k_pshape *sh, int64_t e)
{
    int64_t src = 0;
    for (int k = sh->rank - 1; k >= 0; k--) {
        src += e % sh->dims[k] * sh->stride[k];
        e /= sh->dims[k];
    }
    return src;
}

/* dst[e] = src[k_permute_src(e)] for e in [lo, hi): the index of lo found once, the next ones
 * by an odometer over the result's dimensions; size is the element size in bytes. */
CFX_HD void k_permute(int size, void *dst, const void *src, const k_pshape *sh, int64_t lo, int64_t hi)
{
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *s = (const uint8_t *)src;
    if (lo >= hi)
        return;
    K_RACE_RANGE_W(d, lo, hi, size);
    int64_t idx[K_MAX_RANK] = {0}, from = 0, e = lo;
    for (int k = sh->rank - 1; k >= 0; k--) {
        idx[k] = e % sh->dims[k];
        e /= sh->dims[k];
        from += idx[k] * sh->stride[k];
    }
    for (e = lo; e < hi; e++) {
        K_RACE_R(s + from * size, size);
        for (int b = 0; b < size; b++)
            d[e * size + b] = s[from * size + b];
        for (int k = sh->rank - 1; k >= 0; k--) {
            from += sh->stride[k];
            if (++idx[k] < sh->dims[k])
                break;
            from -= idx[k] * sh->stride[k];
            idx[k] = 0;
        }
    }
}

CFX_HD int64_t k_load_int(int dtype, const void *p)
{
    return k_get_int(dtype, p, 0);
}

#endif
