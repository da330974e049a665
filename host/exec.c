/* exec.c: what every executor shares for reporting: the status line of a stopped run, and
 * the names of statuses, dtypes, types and backends from cfx.h. */
#include "exec.h"

#include <stdio.h>
#include <string.h>

const char *cfx_status_name(cfx_status s)
{
    switch (s) {
    case CFX_OK: return "ok";
    case CFX_STOP_ASSERT: return "assert";
    case CFX_STOP_INDEX: return "index";
    case CFX_STOP_DIVIDE: return "divide";
    case CFX_STOP_VALUE: return "value";
    case CFX_STOP_LIMIT: return "limit";
    case CFX_STOP_CANCELLED: return "cancelled";
    case CFX_ERROR: return "error";
    }
    return "unknown";
}

const char *cfx_dtype_name(cfx_dtype dt)
{
    switch (dt) {
    case CFX_F32: return "f32";
    case CFX_F64: return "f64";
    case CFX_I32: return "i32";
    case CFX_I64: return "i64";
    case CFX_BOOL: return "bool";
    }
    return "?";
}

int cfx_dtype_size(cfx_dtype dt)
{
    switch (dt) {
    case CFX_F64:
    case CFX_I64:
        return 8;
    case CFX_BOOL:
        return 1;
    case CFX_F32:
    case CFX_I32:
        return 4;
    }
    return 0;
}

int64_t cfx_type_count(const cfx_type *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->rank && d < CFX_TYPE_MAX_RANK; d++)
        n *= t->dims[d];
    return n;
}

char *cfx_type_str(const cfx_type *t, char *buf, size_t len)
{
    if (!buf || len == 0)
        return buf;
    size_t n = (size_t)snprintf(buf, len, "%s", cfx_dtype_name(t->dtype));
    for (int d = 0; d < t->rank && d < CFX_TYPE_MAX_RANK && n < len; d++)
        n += (size_t)snprintf(buf + n, len - n, "%s%lld", d ? ", " : "[", (long long)t->dims[d]);
    if (t->rank > 0 && n < len)
        snprintf(buf + n, len - n, "]");
    return buf;
}

static const char *const backend_names[] = {"auto", "cpu", "cuda-host", "cuda-graph",
                                             "cuda-persistent"};

const char *cfx_backend_name(cfx_backend b)
{
    if ((int)b < 0 || (size_t)b >= sizeof backend_names / sizeof backend_names[0])
        return "?";
    return backend_names[b];
}

int cfx_backend_parse(const char *name, cfx_backend *out)
{
    for (size_t i = 0; name && i < sizeof backend_names / sizeof backend_names[0]; i++) {
        if (strcmp(name, backend_names[i]) == 0) {
            *out = (cfx_backend)i;
            return 0;
        }
    }
    return -1;
}

/* After snprintf into buf (size bytes) returned n: a text that did not fit ends in "...". */
static void mark_cut(char *buf, size_t size, int n)
{
    if (n >= 0 && (size_t)n >= size && size > 3)
        memcpy(buf + size - 4, "...", 4);
}

void exec_format_stop(const cfx_prog *prog, const exec_outcome *out, char *buf, size_t len)
{
    if (!buf || len == 0)
        return;
    int line = 0, col = 0;
    const cfx_record *r = NULL;
    if (out->record >= 0 && out->record < prog->nrecords) {
        r = &prog->records[out->record];
        line = r->line;
        col = r->col;
    }
    char detail[256];
    switch (out->status) {
    case CFX_STOP_ASSERT:
        /* ASSERT's message is its field b */
        mark_cut(detail, sizeof detail,
                 snprintf(detail, sizeof detail, "%s",
                          r && r->kind == REC_ASSERT && r->b >= 0 && r->b < prog->nstrings
                              ? prog->strings + r->b
                              : "assertion failed"));
        break;
    case CFX_STOP_INDEX: {
        int bound = r && r->kind == REC_CHECK_BOUND;
        const char *name = r && (r->kind == REC_CHECK_INDEX || bound) && r->c >= 0 && r->c < prog->nstrings
                               ? prog->strings + r->c
                               : NULL;
        char quoted[96]; /* the tensor's name in quotes, or what stands in for it */
        if (name)
            mark_cut(quoted, sizeof quoted, snprintf(quoted, sizeof quoted, "'%s'", name));
        else
            snprintf(quoted, sizeof quoted, "the tensor");
        long long a = (long long)out->detail[0], b = (long long)out->detail[1];
        if (!name)
            name = "?"; /* a list always has one */
        if (!bound && r && r->d > 0)
            snprintf(detail, sizeof detail, "dimension %d of %s has size %lld, index was %lld", r->d, quoted, b, a);
        else if (!bound)
            snprintf(detail, sizeof detail, "%s has %lld rows, index was %lld", quoted, b, a);
        else if (r->d == 0)
            snprintf(detail, sizeof detail, "list '%s' has %lld items, index was %lld", name, b, a);
        else if (r->d == 1)
            snprintf(detail, sizeof detail, "list '%s' is full: it holds at most %lld items", name, b);
        else if (r->d == 2)
            snprintf(detail, sizeof detail, "pop from the empty list '%s'", name);
        else if (r->d == 3)
            snprintf(detail, sizeof detail, "the slice of %s starts at %lld, outside 0 to %lld", quoted, a, b - 1);
        else
            snprintf(detail, sizeof detail, "stack needs list '%s' full with %lld items, it has %lld", name, b, a);
        break;
    }
    case CFX_STOP_DIVIDE:
        snprintf(detail, sizeof detail, "integer division by zero");
        break;
    case CFX_STOP_VALUE:
        /* CHECK_STEP: a range step, or the flag of the variable named by b */
        if (r && r->kind == REC_CHECK_STEP && r->b >= 0 && r->b < prog->nstrings && r->c == 1)
            mark_cut(detail, sizeof detail, snprintf(detail, sizeof detail, "'%s' is None", prog->strings + r->b));
        else if (r && r->kind == REC_CHECK_STEP && r->b >= 0 && r->b < prog->nstrings)
            mark_cut(detail, sizeof detail,
                     snprintf(detail, sizeof detail,
                              "'%s' has no value: no iteration of the loop at line %d assigned it",
                              prog->strings + r->b, r->d));
        else
            snprintf(detail, sizeof detail, "range step is 0");
        break;
    case CFX_STOP_LIMIT:
        snprintf(detail, sizeof detail, "iteration budget of %lld spent", (long long)out->detail[0]);
        break;
    case CFX_STOP_CANCELLED:
        snprintf(detail, sizeof detail, "cancelled by the caller");
        break;
    case CFX_ERROR:
        snprintf(detail, sizeof detail, "backend error");
        break;
    case CFX_OK:
        buf[0] = '\0';
        return;
    }
    mark_cut(buf, len, snprintf(buf, len, "%s:%d:%d: run stopped: %s: %s", prog->file ? prog->file : "?",
                                line, col, cfx_status_name(out->status), detail));
}
