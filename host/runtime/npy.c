/* npy.c: the .npy format (numpy.lib.format), version 1.0 and 2.0, for cfx's dtypes.
 *
 * Layout: "\x93NUMPY", major, minor, the header length (uint16 little-endian in 1.0, uint32
 * in 2.0), then an ASCII Python dict literal
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * padded with spaces and ended by '\n', then the raw C-order data. The dict is parsed
 * strictly: the three keys, each once, nothing else.
 */
#include "npy.h"

#include "kernels/elementwise.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* float16 files are read as f32 (exactly): cfx holds float16 values in f32 (round_f16); int8,
 * uint8, int16 and uint16 files as i32 and uint32 files as i64, as cfx holds ONNX's narrow integers,
 * and uint64 files as i64 holding the same bits (2^64 - 1 is -1), as cfx holds ONNX's uint64
 * (docs/onnx.md); it writes only its own dtypes, the first entry of each */
static const struct {
    const char *descr;
    cfx_dtype dtype;
    int size;
} descrs[] = {
    {"<f4", CFX_F32, 4}, {"<f8", CFX_F64, 8}, {"<i4", CFX_I32, 4}, {"<i8", CFX_I64, 8}, {"|b1", CFX_BOOL, 1},
    {"<f2", CFX_F32, 2}, {"|i1", CFX_I32, 1}, {"|u1", CFX_I32, 1}, {"<i2", CFX_I32, 2}, {"<u2", CFX_I32, 2},
    {"<u4", CFX_I64, 4}, {"<u8", CFX_I64, 8},
};

/* The data is copied as is, so the host must store numbers little-endian as the files do. */
static int host_is_little_endian(void)
{
    uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

static const char *descr_of(cfx_dtype dt)
{
    for (size_t i = 0; i < sizeof descrs / sizeof descrs[0]; i++)
        if (descrs[i].dtype == dt)
            return descrs[i].descr;
    return "?";
}

/* ---- the header dict -------------------------------------------------------------------- */

typedef struct hparse {
    const char *p, *end;
} hparse;

static void hskip(hparse *h)
{
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t'))
        h->p++;
}

static int haccept(hparse *h, char ch)
{
    hskip(h);
    if (h->p < h->end && *h->p == ch) {
        h->p++;
        return 1;
    }
    return 0;
}

/* A quoted string ('...' or "...") of at most outlen-1 bytes, no escapes. */
static int hstring(hparse *h, char *out, size_t outlen)
{
    hskip(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
        return -1;
    char q = *h->p++;
    size_t n = 0;
    while (h->p < h->end && *h->p != q) {
        if (*h->p == '\\' || n + 1 >= outlen)
            return -1;
        out[n++] = *h->p++;
    }
    if (h->p >= h->end)
        return -1;
    h->p++;
    out[n] = '\0';
    return 0;
}

static int hword(hparse *h, const char *w)
{
    hskip(h);
    size_t n = strlen(w);
    if ((size_t)(h->end - h->p) >= n && memcmp(h->p, w, n) == 0) {
        h->p += n;
        return 1;
    }
    return 0;
}

typedef struct npy_info {
    char descr[16];
    int fortran;
    int rank;
    int64_t dims[CFX_TYPE_MAX_RANK];
} npy_info;

/* The shape tuple: `()`, `(3,)`, `(2, 3)`. */
static int hshape(hparse *h, npy_info *info, char *err, size_t errlen)
{
    if (!haccept(h, '(')) {
        snprintf(err, errlen, "bad header: 'shape' is not a tuple");
        return -1;
    }
    info->rank = 0;
    for (;;) {
        if (haccept(h, ')'))
            return 0;
        hskip(h);
        if (h->p < h->end && *h->p == '-') {
            snprintf(err, errlen, "bad header: 'shape' has a negative dimension");
            return -1;
        }
        if (h->p >= h->end || *h->p < '0' || *h->p > '9') {
            snprintf(err, errlen, "bad header: 'shape' holds something other than integers");
            return -1;
        }
        int64_t v = 0;
        while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
            if (v > (INT64_MAX - 9) / 10) {
                snprintf(err, errlen, "bad header: a dimension in 'shape' is too large");
                return -1;
            }
            v = v * 10 + (*h->p++ - '0');
        }
        if (info->rank == CFX_TYPE_MAX_RANK) {
            snprintf(err, errlen, "shape has more than %d dimensions", CFX_TYPE_MAX_RANK);
            return -1;
        }
        info->dims[info->rank++] = v;
        if (haccept(h, ','))
            continue;
        if (haccept(h, ')'))
            return 0;
        snprintf(err, errlen, "bad header: 'shape' is not a tuple");
        return -1;
    }
}

static int parse_dict(const char *text, size_t len, npy_info *info, char *err, size_t errlen)
{
    hparse h = {text, text + len};
    int seen_descr = 0, seen_fortran = 0, seen_shape = 0;
    if (!haccept(&h, '{')) {
        snprintf(err, errlen, "bad header: not a dict");
        return -1;
    }
    for (;;) {
        if (haccept(&h, '}'))
            break;
        char key[32];
        if (hstring(&h, key, sizeof key) != 0) {
            snprintf(err, errlen, "bad header: expected a quoted key");
            return -1;
        }
        if (!haccept(&h, ':')) {
            snprintf(err, errlen, "bad header: expected ':' after '%s'", key);
            return -1;
        }
        if (strcmp(key, "descr") == 0 && !seen_descr) {
            seen_descr = 1;
            if (hstring(&h, info->descr, sizeof info->descr) != 0) {
                snprintf(err, errlen, "bad header: 'descr' is not a simple dtype string");
                return -1;
            }
        } else if (strcmp(key, "fortran_order") == 0 && !seen_fortran) {
            seen_fortran = 1;
            if (hword(&h, "True"))
                info->fortran = 1;
            else if (hword(&h, "False"))
                info->fortran = 0;
            else {
                snprintf(err, errlen, "bad header: 'fortran_order' is not True or False");
                return -1;
            }
        } else if (strcmp(key, "shape") == 0 && !seen_shape) {
            seen_shape = 1;
            if (hshape(&h, info, err, errlen) != 0)
                return -1;
        } else if (strcmp(key, "descr") == 0 || strcmp(key, "fortran_order") == 0 ||
                   strcmp(key, "shape") == 0) {
            snprintf(err, errlen, "bad header: key '%s' appears twice", key);
            return -1;
        } else {
            snprintf(err, errlen, "bad header: unexpected key '%s'", key);
            return -1;
        }
        if (haccept(&h, ','))
            continue;
        if (haccept(&h, '}'))
            break;
        snprintf(err, errlen, "bad header: expected ',' or '}'");
        return -1;
    }
    /* after the dict: only the padding and the final newline */
    while (h.p < h.end && (*h.p == ' ' || *h.p == '\t' || *h.p == '\n' || *h.p == '\r'))
        h.p++;
    if (h.p != h.end) {
        snprintf(err, errlen, "bad header: unexpected text after the dict");
        return -1;
    }
    if (!seen_descr || !seen_fortran || !seen_shape) {
        snprintf(err, errlen, "bad header: missing key '%s'",
                 !seen_descr ? "descr" : !seen_fortran ? "fortran_order" : "shape");
        return -1;
    }
    return 0;
}

/* `(2, 3)` as Python writes a tuple, for messages and headers. */
static void shape_str(int rank, const int64_t *dims, char *buf, size_t len)
{
    size_t o = 0;
    o += (size_t)snprintf(buf, len, "(");
    for (int i = 0; i < rank && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%lld", i ? ", " : "", (long long)dims[i]);
    if (o < len)
        snprintf(buf + o, len - o, rank == 1 ? ",)" : ")");
}

/* ---- reading ---------------------------------------------------------------------------- */

/* The header of the .npy image bytes[0, len): its type into *t (rank and dims from the shape)
 * and where its data starts. 0, or -1 with the reason in err. */
static int decode_header(const unsigned char *b, size_t len, cfx_type *t, size_t *data_at, int *which,
                         char *err, size_t errlen)
{
    if (!host_is_little_endian()) {
        snprintf(err, errlen, "reading .npy files needs a little-endian host");
        return -1;
    }
    if (len < sizeof magic || memcmp(b, magic, sizeof magic) != 0) {
        snprintf(err, errlen, "not a .npy file (bad magic)");
        return -1;
    }
    if (len < 8) {
        snprintf(err, errlen, "truncated header");
        return -1;
    }
    int major = b[6], minor = b[7];
    size_t hlen, prefix;
    if (major == 1 && minor == 0) {
        if (len < 10) {
            snprintf(err, errlen, "truncated header");
            return -1;
        }
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
        prefix = 10;
    } else if (major == 2 && minor == 0) {
        if (len < 12) {
            snprintf(err, errlen, "truncated header");
            return -1;
        }
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        prefix = 12;
    } else {
        snprintf(err, errlen, "unsupported .npy version %d.%d (cfx reads 1.0 and 2.0)", major,
                 minor);
        return -1;
    }
    if (hlen > NPY_MAX_HEADER) {
        snprintf(err, errlen, "header of %zu bytes is too long", hlen);
        return -1;
    }
    if (len - prefix < hlen) {
        snprintf(err, errlen, "truncated header: it should be %zu bytes, the file has %zu", hlen,
                 len - prefix);
        return -1;
    }
    for (size_t i = 0; i < hlen; i++)
        if (b[prefix + i] < 32 && b[prefix + i] != '\n' && b[prefix + i] != '\t' &&
            b[prefix + i] != '\r') {
            snprintf(err, errlen, "bad header: it holds a control byte");
            return -1;
        }

    npy_info info;
    memset(&info, 0, sizeof info);
    if (parse_dict((const char *)b + prefix, hlen, &info, err, errlen) != 0)
        return -1;
    int dt = -1;
    for (size_t i = 0; i < sizeof descrs / sizeof descrs[0]; i++)
        if (strcmp(info.descr, descrs[i].descr) == 0) {
            dt = (int)descrs[i].dtype;
            *which = (int)i;
        }
    if (dt < 0) {
        snprintf(err, errlen, "dtype '%s' is not supported (cfx reads <f4 <f8 <i4 <i8 |b1, <f2 as f32, "
                 "|i1 |u1 <i2 <u2 as i32 and <u4 <u8 as i64)",
                 info.descr);
        return -1;
    }
    if (info.fortran) {
        snprintf(err, errlen, "fortran_order is True; only C order is supported");
        return -1;
    }
    memset(t, 0, sizeof *t);
    t->dtype = (cfx_dtype)dt;
    t->rank = info.rank;
    for (int i = 0; i < info.rank; i++)
        t->dims[i] = info.dims[i];
    *data_at = prefix + hlen;
    return 0;
}

/* what a file of another dtype is read as */
static const char *fmt_held(int dt)
{
    return dt == CFX_F32 ? "float16, read as f32" : dt == CFX_I32 ? "a narrow integer, read as i32"
                                                  : "uint32 or uint64, read as i64";
}

int npy_peek(const void *bytes, size_t len, cfx_type *t, char *err, size_t errlen)
{
    size_t at;
    int which;
    return decode_header(bytes, len, t, &at, &which, err, errlen);
}

int npy_decode(const void *bytes, size_t len, const cfx_type *want, void *out, char *err,
               size_t errlen)
{
    const unsigned char *b = bytes;
    char ty[64];
    cfx_type_str(want, ty, sizeof ty);
    cfx_type got;
    size_t at;
    int which;
    if (decode_header(b, len, &got, &at, &which, err, errlen) != 0)
        return -1;
    const char *descr = descrs[which].descr;
    int esize = descrs[which].size, held = which > 4; /* read as another dtype */
    int dt = (int)got.dtype;
    npy_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.descr, sizeof info.descr, "%s", descr_of(got.dtype));
    info.rank = got.rank;
    for (int i = 0; i < got.rank; i++)
        info.dims[i] = got.dims[i];
    size_t prefix = at, hlen = 0;
    if (dt != (int)want->dtype) {
        snprintf(err, errlen, "dtype '%s' (%s) does not match the input's type %s",
                 descr, held ? fmt_held(dt) : cfx_dtype_name((cfx_dtype)dt), ty);
        return -1;
    }
    int same = info.rank == want->rank;
    for (int i = 0; same && i < info.rank; i++)
        same = info.dims[i] == want->dims[i];
    if (!same) {
        char sh[128];
        shape_str(info.rank, info.dims, sh, sizeof sh);
        snprintf(err, errlen, "shape %s does not match the input's type %s", sh, ty);
        return -1;
    }
    /* the shape equals the input's type, whose size the compiler bounded */
    size_t need = (size_t)cfx_type_count(want) * (size_t)esize;
    size_t have = len - prefix - hlen;
    if (have < need) {
        snprintf(err, errlen, "truncated data: %zu bytes expected, %zu found", need, have);
        return -1;
    }
    if (have > need) {
        snprintf(err, errlen, "%zu unexpected bytes after the data", have - need);
        return -1;
    }
    const unsigned char *data = b + prefix + hlen;
    if (want->dtype == CFX_BOOL)
        for (size_t i = 0; i < need; i++)
            if (data[i] > 1) {
                snprintf(err, errlen, "bool element %zu is the byte %d, not 0 or 1", i, data[i]);
                return -1;
            }
    if (!strcmp(descr, "<f2")) /* float16, to f32 */
        for (size_t i = 0; i < need / 2; i++)
            ((float *)out)[i] = k_f16_value((uint16_t)(data[2 * i] | data[2 * i + 1] << 8));
    else if (held) /* a narrow integer, little-endian, to i32 or i64 */
        for (size_t i = 0; i < need / (size_t)esize; i++) {
            uint64_t u = 0;
            for (int k = 0; k < esize; k++)
                u |= (uint64_t)data[i * (size_t)esize + (size_t)k] << (8 * k);
            /* unsigned: the value (uint64: its bits, as i64) */
            int64_t x = descr[1] == 'u' ? (int64_t)u : esize == 1 ? (int8_t)u : (int16_t)u;
            if (dt == CFX_I64)
                ((int64_t *)out)[i] = x;
            else
                ((int32_t *)out)[i] = (int32_t)x;
        }
    else
        memcpy(out, data, need);
    return 0;
}

int npy_read_file(const char *path, const cfx_type *want, void *out, char *err, size_t errlen)
{
    char why[256];
    int rc = -1;
    unsigned char *buf = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    /* a valid file holds at most the prefix, the header and the data: read one byte more
     * than that, so that an oversized file is refused without reading all of it */
    size_t cap = 12 + NPY_MAX_HEADER +
                 (size_t)cfx_type_count(want) * (size_t)cfx_dtype_size(want->dtype) + 1;
    buf = malloc(cap);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto done;
    }
    size_t n = fread(buf, 1, cap, f);
    if (ferror(f)) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        goto done;
    }
    if (n == cap) {
        snprintf(err, errlen, "%s: the file is larger than a .npy file of the input's type could be",
                 path);
        goto done;
    }
    if (npy_decode(buf, n, want, out, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: %s", path, why);
        goto done;
    }
    rc = 0;
done:
    free(buf);
    fclose(f);
    return rc;
}

/* ---- writing ---------------------------------------------------------------------------- */

int npy_header(const cfx_type *t, char *buf, size_t len)
{
    char sh[128], dict[224];
    shape_str(t->rank, t->dims, sh, sizeof sh);
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     descr_of(t->dtype), sh);
    if (n < 0 || (size_t)n >= sizeof dict)
        return -1;
    /* pad with spaces so that the data starts at a multiple of 64 bytes; '\n' ends it */
    size_t total = 10 + (size_t)n + 1;
    total = (total + 63) / 64 * 64;
    if (total > len)
        return -1;
    size_t hlen = total - 10;
    memcpy(buf, magic, sizeof magic);
    buf[6] = 1;
    buf[7] = 0;
    buf[8] = (char)(hlen & 0xff);
    buf[9] = (char)(hlen >> 8);
    memcpy(buf + 10, dict, (size_t)n);
    memset(buf + 10 + n, ' ', hlen - (size_t)n - 1);
    buf[total - 1] = '\n';
    return (int)total;
}

int npy_write_file(const char *path, const cfx_type *t, const void *data, char *err,
                   size_t errlen)
{
    char header[256];
    int hl = npy_header(t, header, sizeof header);
    if (hl < 0 || !host_is_little_endian()) {
        snprintf(err, errlen, "%s: cannot write this type as .npy", path);
        return -1;
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    size_t bytes = (size_t)cfx_type_count(t) * (size_t)cfx_dtype_size(t->dtype);
    int ok = fwrite(header, 1, (size_t)hl, f) == (size_t)hl && fwrite(data, 1, bytes, f) == bytes;
    if (fclose(f) != 0)
        ok = 0;
    if (!ok) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
