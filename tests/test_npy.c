/* test_npy.c: .npy reading and writing: the exact bytes numpy's format prescribes, round
 * trips for every dtype, and every malformed file refused with a message. Fixtures are
 * built by hand here (numpy is not installed on the build machine). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/runtime/npy.h"
#include "testutil.h"

static cfx_type ty(cfx_dtype dt, int rank, int64_t d0, int64_t d1)
{
    cfx_type t = {dt, rank, {d0, d1, 0, 0}};
    return t;
}

/* A version 1.0 (or 2.0) image: magic, lengths, the dict padded to 64 bytes, the data. */
static size_t image(unsigned char *out, int major, const char *dict, const void *data,
                    size_t nbytes)
{
    size_t prefix = major == 1 ? 10 : 12;
    size_t hlen = strlen(dict) + 1;
    while ((prefix + hlen) % 64)
        hlen++;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    out[8] = (unsigned char)(hlen & 0xff);
    out[9] = (unsigned char)(hlen >> 8);
    if (major == 2) {
        out[10] = 0;
        out[11] = 0;
    }
    memset(out + prefix, ' ', hlen);
    memcpy(out + prefix, dict, strlen(dict));
    out[prefix + hlen - 1] = '\n';
    memcpy(out + prefix + hlen, data, nbytes);
    return prefix + hlen + nbytes;
}

static char err[512];

/* Decodes an image against `want`; returns "" or the message. */
static const char *decode(const unsigned char *img, size_t len, cfx_type want, void *out)
{
    err[0] = '\0';
    if (npy_decode(img, len, &want, out, err, sizeof err) == 0)
        return "";
    return err[0] ? err : "(failed without a message)";
}

static void check_write_bytes(void)
{
    /* numpy.save(f, np.zeros((2, 3), np.float32)) writes exactly this header */
    static const char want_header[] = "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, "
                                      "'shape': (2, 3), }";
    const size_t want_len = sizeof want_header - 1; /* it holds NUL bytes: no strlen */
    float data[6] = {1, 2.5f, -3, 0.1f, 5, 6};
    cfx_type t = ty(CFX_F32, 2, 2, 3);
    const char *path = "test_npy_tmp.npy";
    CHECK_INT(npy_write_file(path, &t, data, err, sizeof err), 0);
    long len = 0;
    char *bytes = test_read_file(path, &len);
    CHECK(bytes != NULL);
    if (!bytes)
        return;
    CHECK_INT(len, 128 + 24);
    CHECK(memcmp(bytes, want_header, want_len) == 0);
    CHECK(bytes[127] == '\n');
    int spaces = 1;
    for (size_t i = want_len; i < 127; i++)
        spaces &= bytes[i] == ' ';
    CHECK(spaces);
    CHECK(memcmp(bytes + 128, data, 24) == 0);

    /* and it reads back */
    float back[6] = {0};
    CHECK_INT(npy_read_file(path, &t, back, err, sizeof err), 0);
    CHECK(memcmp(back, data, sizeof data) == 0);

    /* every proper prefix of the valid file is refused with a message */
    int all_refused = 1, all_messages = 1;
    for (long cut = 0; cut < len; cut++) {
        err[0] = '\0';
        if (npy_decode(bytes, (size_t)cut, &t, back, err, sizeof err) == 0)
            all_refused = 0;
        if (err[0] == '\0')
            all_messages = 0;
    }
    CHECK(all_refused);
    CHECK(all_messages);
    CHECK_STR(decode((unsigned char *)bytes, 100, t, back),
              "truncated header: it should be 118 bytes, the file has 90");
    CHECK_STR(decode((unsigned char *)bytes, (size_t)len - 1, t, back),
              "truncated data: 24 bytes expected, 23 found");
    free(bytes);

    /* against another type */
    cfx_type other = ty(CFX_F32, 1, 6, 0);
    CHECK_INT(npy_read_file(path, &other, back, err, sizeof err), -1);
    CHECK_STR(err, "test_npy_tmp.npy: shape (2, 3) does not match the input's type f32[6]");
    other = ty(CFX_F64, 2, 2, 3);
    CHECK_INT(npy_read_file(path, &other, back, err, sizeof err), -1);
    CHECK_STR(err, "test_npy_tmp.npy: dtype '<f4' (f32) does not match the input's type f64[2, 3]");
    remove(path);

    CHECK_INT(npy_read_file("no/such/file.npy", &t, back, err, sizeof err), -1);
    CHECK_STR(err, "no/such/file.npy: cannot read: No such file or directory");
    CHECK_INT(npy_write_file("no/such/dir/out.npy", &t, data, err, sizeof err), -1);
    CHECK_STR(err, "no/such/dir/out.npy: cannot write: No such file or directory");
}

static void check_round_trips(void)
{
    const char *path = "test_npy_tmp2.npy";
    double d = -0.125;
    int32_t i[3] = {1, -2, 2147483647};
    int64_t l[2][2] = {{INT64_MIN, 1}, {2, INT64_MAX}};
    uint8_t b[4] = {1, 0, 0, 1};
    struct {
        cfx_type t;
        const void *data;
        size_t bytes;
        const char *dict_part;
    } cases[] = {
        {ty(CFX_F64, 0, 0, 0), &d, 8, "'descr': '<f8', 'fortran_order': False, 'shape': (), }"},
        {ty(CFX_I32, 1, 3, 0), i, 12, "'descr': '<i4', 'fortran_order': False, 'shape': (3,), }"},
        {ty(CFX_I64, 2, 2, 2), l, 32, "'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }"},
        {ty(CFX_BOOL, 1, 4, 0), b, 4, "'descr': '|b1', 'fortran_order': False, 'shape': (4,), }"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        unsigned char back[64] = {0};
        CHECK_INT(npy_write_file(path, &cases[k].t, cases[k].data, err, sizeof err), 0);
        long len = 0;
        char *bytes = test_read_file(path, &len);
        CHECK(bytes && len % 64 == (long)(cases[k].bytes % 64) && strstr(bytes + 10, cases[k].dict_part));
        free(bytes);
        CHECK_INT(npy_read_file(path, &cases[k].t, back, err, sizeof err), 0);
        CHECK(memcmp(back, cases[k].data, cases[k].bytes) == 0);
    }
    remove(path);

    /* version 2.0, double quotes, no trailing comma, extra spaces: all valid */
    unsigned char img[256];
    int32_t v[2] = {7, 8}, got[2] = {0};
    size_t n = image(img, 2, "{\"descr\":\"<i4\",\"shape\":( 2 , ),\"fortran_order\":False}", v, 8);
    CHECK_STR(decode(img, n, ty(CFX_I32, 1, 2, 0), got), "");
    CHECK(got[0] == 7 && got[1] == 8);

    /* float16 read as f32: the bits of 1.5 (0x3e00), -2^-24 (0x8001, the smallest subnormal),
     * 65504 (0x7bff), inf (0x7c00), written out by hand; not for an f64 input */
    uint16_t h[4] = {0x3e00, 0x8001, 0x7bff, 0x7c00};
    float hf[4];
    n = image(img, 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (4,), }", h, 8);
    CHECK_STR(decode(img, n, ty(CFX_F32, 1, 4, 0), hf), "");
    CHECK(hf[0] == 1.5f && hf[1] == -0x1p-24f && hf[2] == 65504.0f && isinf(hf[3]) && hf[3] > 0);
    double hd[4];
    CHECK_STR(decode(img, n, ty(CFX_F64, 1, 4, 0), hd),
              "dtype '<f2' (float16, read as f32) does not match the input's type f64[4]");
    CHECK_STR(decode(img, n - 2, ty(CFX_F32, 1, 4, 0), hf), "truncated data: 8 bytes expected, 6 found");

    /* int8, uint8, int16, uint16 read as i32 and uint32 as i64 (ONNX's narrow integers): the
     * bytes little-endian, written out by hand */
    uint8_t b8[3] = {0xff, 0x80, 0x05};
    int32_t g[3];
    n = image(img, 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", b8, 3);
    CHECK_STR(decode(img, n, ty(CFX_I32, 1, 3, 0), g), "");
    CHECK(g[0] == 255 && g[1] == 128 && g[2] == 5);
    n = image(img, 1, "{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }", b8, 3);
    CHECK_STR(decode(img, n, ty(CFX_I32, 1, 3, 0), g), "");
    CHECK(g[0] == -1 && g[1] == -128 && g[2] == 5);
    uint8_t b16[4] = {0x00, 0x80, 0xff, 0x7f};
    n = image(img, 1, "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }", b16, 4);
    CHECK_STR(decode(img, n, ty(CFX_I32, 1, 2, 0), g), "");
    CHECK(g[0] == -32768 && g[1] == 32767);
    n = image(img, 1, "{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }", b16, 4);
    CHECK_STR(decode(img, n, ty(CFX_I32, 1, 2, 0), g), "");
    CHECK(g[0] == 32768 && g[1] == 32767);
    uint8_t b32[4] = {0xfe, 0xff, 0xff, 0xff};
    int64_t g64[1];
    n = image(img, 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (1,), }", b32, 4);
    CHECK_STR(decode(img, n, ty(CFX_I64, 1, 1, 0), g64), "");
    CHECK(g64[0] == 4294967294LL);
    CHECK_STR(decode(img, n, ty(CFX_I32, 1, 1, 0), g),
              "dtype '<u4' (uint32 or uint64, read as i64) does not match the input's type i32[1]");
    /* uint64: its bits, as i64 (2^64 - 2 is -2, 2^63 is -2^63) */
    uint8_t b64[16] = {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0x80};
    int64_t g2[2];
    n = image(img, 1, "{'descr': '<u8', 'fortran_order': False, 'shape': (2,), }", b64, 16);
    CHECK_STR(decode(img, n, ty(CFX_I64, 1, 2, 0), g2), "");
    CHECK(g2[0] == -2 && g2[1] == INT64_MIN);
    n = image(img, 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", b8, 3);
    CHECK_STR(decode(img, n, ty(CFX_F32, 1, 3, 0), hf),
              "dtype '|u1' (a narrow integer, read as i32) does not match the input's type f32[3]");
    CHECK_STR(decode(img, n - 1, ty(CFX_I32, 1, 3, 0), g), "truncated data: 3 bytes expected, 2 found");
}

static void check_malformed(void)
{
    unsigned char img[512];
    float data[3] = {1, 2, 3}, out[3];
    cfx_type t = ty(CFX_F32, 1, 3, 0);
    size_t n;

    n = image(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", data, 12);
    CHECK_STR(decode(img, n, t, out), "");
    img[1] = 'X';
    CHECK_STR(decode(img, n, t, out), "not a .npy file (bad magic)");
    CHECK_STR(decode((const unsigned char *)"hello", 5, t, out), "not a .npy file (bad magic)");
    CHECK_STR(decode(img, 0, t, out), "not a .npy file (bad magic)");

    n = image(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", data, 12);
    img[6] = 3;
    CHECK_STR(decode(img, n, t, out), "unsupported .npy version 3.0 (cfx reads 1.0 and 2.0)");

    /* a header length far past the end of the file */
    n = image(img, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", data, 12);
    memset(img + 8, 0xff, 4);
    CHECK_STR(decode(img, n, t, out), "header of 4294967295 bytes is too long");

    struct {
        const char *dict;
        const char *message;
    } bad[] = {
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }",
         "fortran_order is True; only C order is supported"},
        {"{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }",
         "dtype '>f4' is not supported (cfx reads <f4 <f8 <i4 <i8 |b1, <f2 as f32, "
         "|i1 |u1 <i2 <u2 as i32 and <u4 <u8 as i64)"},
        {"{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }",
         "dtype '<c8' is not supported (cfx reads <f4 <f8 <i4 <i8 |b1, <f2 as f32, "
         "|i1 |u1 <i2 <u2 as i32 and <u4 <u8 as i64)"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
         "dtype '<f8' (f64) does not match the input's type f32[3]"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1073741824, 1073741824), }",
         "shape (1073741824, 1073741824) does not match the input's type f32[3]"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }",
         "bad header: a dimension in 'shape' is too large"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 3), }",
         "shape has more than 5 dimensions"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }",
         "bad header: 'shape' has a negative dimension"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, -1), }",
         "bad header: 'shape' has a negative dimension"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3.0,), }",
         "bad header: 'shape' is not a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (x,), }",
         "bad header: 'shape' holds something other than integers"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': [3], }",
         "bad header: 'shape' is not a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3 4), }",
         "bad header: 'shape' is not a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, }", "bad header: missing key 'shape'"},
        {"{'descr': '<f4', 'shape': (3,), }", "bad header: missing key 'fortran_order'"},
        {"{'fortran_order': False, 'shape': (3,), }", "bad header: missing key 'descr'"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
         "bad header: key 'descr' appears twice"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}",
         "bad header: unexpected key 'x'"},
        {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (3,), }",
         "bad header: 'fortran_order' is not True or False"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }",
         "bad header: 'descr' is not a simple dtype string"},
        {"{'descr' '<f4', 'fortran_order': False, 'shape': (3,), }", "bad header: expected ':' after 'descr'"},
        {"{descr: '<f4'}", "bad header: expected a quoted key"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,) ", "bad header: expected ',' or '}'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} junk",
         "bad header: unexpected text after the dict"},
        {"('descr', '<f4')", "bad header: not a dict"},
        {"{'descr': '<f4\x01', 'fortran_order': False, 'shape': (3,), }",
         "bad header: it holds a control byte"},
        {"{'descr': '<f4", "bad header: 'descr' is not a simple dtype string"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        n = image(img, 1, bad[k].dict, data, 12);
        CHECK_STR(decode(img, n, t, out), bad[k].message);
    }

    /* data that does not fit the shape */
    n = image(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", data, 12);
    CHECK_STR(decode(img, n - 4, t, out), "truncated data: 12 bytes expected, 8 found");
    n = image(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", data, 12);
    img[n] = 0;
    CHECK_STR(decode(img, n + 1, t, out), "1 unexpected bytes after the data");

    /* a bool that is neither 0 nor 1 */
    uint8_t bools[2] = {1, 2}, bout[2];
    n = image(img, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", bools, 2);
    CHECK_STR(decode(img, n, ty(CFX_BOOL, 1, 2, 0), bout), "bool element 1 is the byte 2, not 0 or 1");

    /* a scalar input wants shape () and not (1,) */
    n = image(img, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", data, 4);
    CHECK_STR(decode(img, n, ty(CFX_F32, 0, 0, 0), out), "shape (1,) does not match the input's type f32");

    /* deterministic random bytes after a valid magic: refused, never a crash */
    uint64_t s = 12345;
    int refused = 1;
    for (int round = 0; round < 2000; round++) {
        size_t len = 8 + (size_t)(round % 200);
        memcpy(img, "\x93NUMPY\x01\x00", 8);
        for (size_t k = 8; k < len; k++) {
            s = s * 6364136223846793005u + 1442695040888963407u;
            img[k] = (unsigned char)(s >> 56);
        }
        if (round % 2)
            img[9] = 0; /* a short header length, so the dict parser sees random text */
        err[0] = '\0';
        if (npy_decode(img, len, &t, out, err, sizeof err) == 0 || err[0] == '\0')
            refused = 0;
    }
    CHECK(refused);
}

int main(void)
{
    check_write_bytes();
    check_round_trips();
    check_malformed();
    return test_finish("test_npy");
}
