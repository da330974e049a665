/* test_value.c: command-line literals into typed buffers, and the shortest printing of
 * values, checked against hand-written strings (Python's repr for the same doubles). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "host/runtime/value.h"

static const char *real(double v, int is_f32)
{
    static char buf[64];
    value_format_real(v, is_f32, buf, sizeof buf);
    return buf;
}

static cfx_type ty(cfx_dtype dt, int rank, int64_t d0, int64_t d1)
{
    cfx_type t = {dt, rank, {d0, d1, 0, 0}};
    return t;
}

static void check_formatting(void)
{
    CHECK_STR(real(0.1f, 1), "0.1");
    CHECK_STR(real(0.1, 0), "0.1");
    CHECK_STR(real(1.0f / 3.0f, 1), "0.33333334");
    CHECK_STR(real(1.0 / 3.0, 0), "0.3333333333333333");
    CHECK_STR(real(0.1 + 0.2, 0), "0.30000000000000004");
    CHECK_STR(real(1e-45f, 1), "1e-45"); /* the smallest f32 denormal, 1.4e-45 */
    CHECK_STR(real(FLT_MAX, 1), "3.4028235e+38");
    CHECK_STR(real(DBL_MAX, 0), "1.7976931348623157e+308");
    CHECK_STR(real(5e-324, 0), "5e-324");
    CHECK_STR(real(1e16, 0), "1e+16");
    CHECK_STR(real(1e15, 0), "1000000000000000");
    CHECK_STR(real(1e-5, 0), "1e-05");
    CHECK_STR(real(0.0001, 0), "0.0001");
    CHECK_STR(real(123456789.0, 0), "123456789");
    CHECK_STR(real(16777216.0f, 1), "16777216");
    CHECK_STR(real(100.0, 0), "100");
    CHECK_STR(real(1.0f, 1), "1");
    CHECK_STR(real(-2.5f, 1), "-2.5");
    CHECK_STR(real(1234.5625, 0), "1234.5625");
    CHECK_STR(real(0.0, 0), "0");
    CHECK_STR(real(-0.0, 0), "-0");
    CHECK_STR(real(NAN, 1), "nan");
    CHECK_STR(real(INFINITY, 1), "inf");
    CHECK_STR(real(-INFINITY, 0), "-inf");

    strbuf sb = {0};
    float f3[3] = {1.0f, 2.5f, 3.0f};
    cfx_type t = ty(CFX_F32, 1, 3, 0);
    value_format(&sb, &t, f3);
    CHECK_STR(sb_str(&sb), "[1, 2.5, 3]");
    sb_free(&sb);

    int32_t m[4] = {1, 2, 3, -4};
    t = ty(CFX_I32, 2, 2, 2);
    value_format(&sb, &t, m);
    CHECK_STR(sb_str(&sb), "[[1, 2], [3, -4]]");
    sb_free(&sb);

    uint8_t b[2] = {1, 0};
    t = ty(CFX_BOOL, 1, 2, 0);
    value_format(&sb, &t, b);
    CHECK_STR(sb_str(&sb), "[true, false]");
    sb_free(&sb);

    int64_t big = INT64_MIN;
    t = ty(CFX_I64, 0, 0, 0);
    value_format(&sb, &t, &big);
    CHECK_STR(sb_str(&sb), "-9223372036854775808");
    sb_free(&sb);

    double third[3] = {1.0 / 3.0, NAN, -INFINITY};
    cfx_type t3 = {CFX_F64, 3, {1, 1, 3, 0}};
    value_format(&sb, &t3, third);
    CHECK_STR(sb_str(&sb), "[[[0.3333333333333333, nan, -inf]]]");
    sb_free(&sb);
}

/* Parses text into a buffer; returns the error message, "" on success. */
static const char *parse(const char *text, cfx_type t, void *buf)
{
    static char err[256];
    err[0] = '\0';
    if (value_parse(text, &t, buf, err, sizeof err) == 0)
        return "";
    if (err[0] == '\0')
        return "(failed without a message)";
    return err;
}

static void check_parsing(void)
{
    int32_t i = 0;
    CHECK_STR(parse("5", ty(CFX_I32, 0, 0, 0), &i), "");
    CHECK_INT(i, 5);
    CHECK_STR(parse("-7", ty(CFX_I32, 0, 0, 0), &i), "");
    CHECK_INT(i, -7);
    CHECK_STR(parse("0x1f", ty(CFX_I32, 0, 0, 0), &i), "");
    CHECK_INT(i, 31);
    CHECK_STR(parse("-2147483648", ty(CFX_I32, 0, 0, 0), &i), "");
    CHECK_INT(i, INT32_MIN);
    CHECK_STR(parse("2147483648", ty(CFX_I32, 0, 0, 0), &i), "'2147483648' is out of range for i32");
    CHECK_STR(parse("1.5", ty(CFX_I32, 0, 0, 0), &i), "expected an integer for i32, got '1.5'");
    CHECK_STR(parse("true", ty(CFX_I32, 0, 0, 0), &i), "expected an integer for i32, got 'true'");

    int64_t l = 0;
    CHECK_STR(parse("9223372036854775807", ty(CFX_I64, 0, 0, 0), &l), "");
    CHECK_INT(l, INT64_MAX);
    CHECK_STR(parse("-9223372036854775808", ty(CFX_I64, 0, 0, 0), &l), "");
    CHECK_INT(l, INT64_MIN);
    CHECK_STR(parse("9223372036854775808", ty(CFX_I64, 0, 0, 0), &l),
              "'9223372036854775808' is out of range for i64");
    CHECK_STR(parse("99999999999999999999999", ty(CFX_I64, 0, 0, 0), &l),
              "'99999999999999999999999' is out of range for i64");

    float f = 0;
    CHECK_STR(parse("-1.5", ty(CFX_F32, 0, 0, 0), &f), "");
    CHECK_REAL(f, -1.5, 0);
    CHECK_STR(parse(".5", ty(CFX_F32, 0, 0, 0), &f), "");
    CHECK_REAL(f, 0.5, 0);
    CHECK_STR(parse("3", ty(CFX_F32, 0, 0, 0), &f), "");
    CHECK_REAL(f, 3.0, 0);
    CHECK_STR(parse("0.1", ty(CFX_F32, 0, 0, 0), &f), "");
    CHECK(f == 0.1f);
    CHECK_STR(parse("-inf", ty(CFX_F32, 0, 0, 0), &f), "");
    CHECK(isinf(f) && f < 0);
    CHECK_STR(parse("nan", ty(CFX_F32, 0, 0, 0), &f), "");
    CHECK(isnan(f));
    CHECK_STR(parse("1e39", ty(CFX_F32, 0, 0, 0), &f), "'1e39' is out of range for f32");
    CHECK_STR(parse("1.5x", ty(CFX_F32, 0, 0, 0), &f), "expected a number for f32, got '1.5x'");
    CHECK_STR(parse("false", ty(CFX_F32, 0, 0, 0), &f), "expected a number for f32, got 'false'");

    double d = 0;
    CHECK_STR(parse("1e39", ty(CFX_F64, 0, 0, 0), &d), "");
    CHECK_REAL(d, 1e39, 0);
    CHECK_STR(parse("1e400", ty(CFX_F64, 0, 0, 0), &d), "'1e400' is out of range for f64");

    uint8_t b = 7;
    CHECK_STR(parse("true", ty(CFX_BOOL, 0, 0, 0), &b), "");
    CHECK_INT(b, 1);
    CHECK_STR(parse("false", ty(CFX_BOOL, 0, 0, 0), &b), "");
    CHECK_INT(b, 0);
    CHECK_STR(parse("2", ty(CFX_BOOL, 0, 0, 0), &b), "expected true or false for bool, got '2'");

    int32_t m[4] = {0};
    CHECK_STR(parse("[[1,2],[3,4]]", ty(CFX_I32, 2, 2, 2), m), "");
    CHECK(m[0] == 1 && m[1] == 2 && m[2] == 3 && m[3] == 4);
    CHECK_STR(parse(" [ [ -1 , 2 ] ,\n[3,4] ] ", ty(CFX_I32, 2, 2, 2), m), "");
    CHECK(m[0] == -1 && m[3] == 4);
    CHECK_STR(parse("[[1,2],[3]]", ty(CFX_I32, 2, 2, 2), m), "dimension 1 has 1 element, expected 2");
    CHECK_STR(parse("[[1,2],[3,4],[5,6]]", ty(CFX_I32, 2, 2, 2), m),
              "dimension 0 has more than 2 elements");
    CHECK_STR(parse("[1,2,3,4]", ty(CFX_I32, 2, 2, 2), m),
              "expected '[' for a value of type i32[2, 2], found '1'");
    CHECK_STR(parse("[[[1]]]", ty(CFX_I32, 1, 2, 0), m), "too many '[': the type i32[2] has 1 dimension");
    CHECK_STR(parse("5", ty(CFX_I32, 1, 1, 0), m), "expected '[' for a value of type i32[1], found '5'");
    CHECK_STR(parse("[]", ty(CFX_I32, 1, 2, 0), m), "dimension 0 has 0 elements, expected 2");
    CHECK_STR(parse("[1,,2]", ty(CFX_I32, 1, 2, 0), m), "expected a value, found ','");
    /* a trailing comma is the mistake, whether the count is right or not */
    CHECK_STR(parse("[1,2,]", ty(CFX_I32, 1, 2, 0), m), "a ',' before ']': a trailing comma is not allowed");
    CHECK_STR(parse("[1, ]", ty(CFX_I32, 1, 2, 0), m), "a ',' before ']': a trailing comma is not allowed");
    CHECK_STR(parse("[[1,2],[3,4],]", ty(CFX_I32, 2, 2, 2), m),
              "a ',' before ']': a trailing comma is not allowed");
    CHECK_STR(parse("[1 2]", ty(CFX_I32, 1, 2, 0), m), "expected ',' or ']', found '2'");
    CHECK_STR(parse("[1,2", ty(CFX_I32, 1, 2, 0), m), "expected ',' or ']', found the end of the value");
    CHECK_STR(parse("[1,2] 3", ty(CFX_I32, 1, 2, 0), m), "unexpected '3' after the value");
    CHECK_STR(parse("", ty(CFX_I32, 0, 0, 0), m), "expected a value, found the end of the value");

    /* a literal far longer than any number: refused, not overflowed */
    char longtext[400];
    memset(longtext, '9', sizeof longtext - 1);
    longtext[sizeof longtext - 1] = '\0';
    CHECK(strlen(parse(longtext, ty(CFX_F64, 0, 0, 0), &d)) > 0);

    /* formatting then parsing gives back the same bits */
    float samples[] = {0.1f, 1.0f / 3.0f, 1e-45f, FLT_MAX, -123.456f, 6.02214076e23f};
    for (size_t k = 0; k < sizeof samples / sizeof samples[0]; k++) {
        float back = 0;
        parse(real(samples[k], 1), ty(CFX_F32, 0, 0, 0), &back);
        CHECK(memcmp(&back, &samples[k], 4) == 0);
    }
}

static void check_random(void)
{
    uint64_t s = 0;
    /* splitmix64 from state 0: reference values of the published algorithm */
    CHECK(value_splitmix64(&s) == 0xe220a8397b1dcdafu);
    CHECK(value_splitmix64(&s) == 0x6e789e6aa1b965f4u);

    float a[64], b[64];
    cfx_type t = ty(CFX_F32, 1, 64, 0);
    uint64_t s1 = 42, s2 = 42;
    value_random(&t, &s1, a);
    value_random(&t, &s2, b);
    CHECK(memcmp(a, b, sizeof a) == 0);
    int in_range = 1;
    for (int k = 0; k < 64; k++)
        in_range &= a[k] >= 0.0f && a[k] < 1.0f;
    CHECK(in_range);

    int32_t v[256];
    t = ty(CFX_I32, 1, 256, 0);
    value_random(&t, &s1, v);
    int ok = 1, distinct = 0;
    for (int k = 0; k < 256; k++) {
        ok &= v[k] >= 0 && v[k] < 100;
        distinct += k > 0 && v[k] != v[k - 1];
    }
    CHECK(ok);
    CHECK(distinct > 200);
}

int main(void)
{
    check_formatting();
    check_parsing();
    check_random();
    return test_finish("test_value");
}
