/* exec.c: what every executor shares for reporting: the status line of a stopped run, and
 * the names of statuses, dtypes, types and backends from cfx.h. */
#include "exec.h"

#include <stdio.h>
#include <string.h>

#include "kernels/ops.h"

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

int cfx_status_count(void) { return (int)CFX_ERROR + 1; } /* ORDER STATUS: the enum's last */

const char *cfx_dtype_name(cfx_dtype dt)
{
    switch (dt) {
    case CFX_F32: return "f32";
    case CFX_F64: return "f64";
    case CFX_I32: return "i32";
    case CFX_I64: return "i64";
    case CFX_BOOL: return "bool";
    }
    return "unknown";
}

int cfx_dtype_count(void) { return (int)CFX_BOOL + 1; } /* ORDER DTYPE: the enum's last */

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
    if (!t || t->rank < 0)
        return 0; /* no type (an input or result that does not exist) */
    int64_t n = 1;
    for (int d = 0; d < t->rank && d < CFX_TYPE_MAX_RANK; d++)
        n *= t->dims[d];
    return n;
}

char *cfx_type_str(const cfx_type *t, char *buf, size_t len)
{
    if (!buf || len == 0)
        return buf;
    char text[CFX_TYPE_STR_MAX];
    size_t n;
    if (!t || t->rank < 0 || t->rank > CFX_TYPE_MAX_RANK) {
        n = (size_t)snprintf(text, sizeof text, "(no type)");
    } else {
        n = (size_t)snprintf(text, sizeof text, "%s", cfx_dtype_name(t->dtype));
        for (int d = 0; d < t->rank; d++)
            n += (size_t)snprintf(text + n, sizeof text - n, "%s%lld", d ? ", " : "[",
                                  (long long)t->dims[d]);
        if (t->rank > 0)
            n += (size_t)snprintf(text + n, sizeof text - n, "]");
    }
    if (n < len) {
        memcpy(buf, text, n + 1);
        return buf;
    }
    /* too small: what fits, ending in "...", so a cut text never passes for a type */
    size_t keep = len - 1, dots = keep < 3 ? keep : 3;
    memcpy(buf, text, keep - dots);
    memset(buf + keep - dots, '.', dots);
    buf[keep] = '\0';
    return buf;
}

/* ==== the backend table ======================================================================= */

static const exec_ops *cpu_ops(cfx_backend b, char *why, size_t len)
{
    (void)b;
    if (why && len)
        why[0] = '\0';
    return &cpu_exec_ops;
}

/* ORDER BACKEND: cfx.h's cfx_backend */
const exec_backend exec_backends[EXEC_NBACKENDS] = {
    [CFX_BACKEND_AUTO] = {"auto", 0, NULL},
    [CFX_BACKEND_CPU] = {"cpu", 0, cpu_ops},
    [CFX_BACKEND_CUDA_HOST] = {"cuda-host", 1, dev_ops},
    [CFX_BACKEND_CUDA_GRAPH] = {"cuda-graph", 1, dev_ops},
    [CFX_BACKEND_CUDA_PERSISTENT] = {"cuda-persistent", 1, dev_ops},
};
_Static_assert(CFX_BACKEND_CUDA_PERSISTENT + 1 == EXEC_NBACKENDS,
               "a row of exec_backends for every cfx_backend (ORDER BACKEND)");

const exec_backend *exec_backend_row(cfx_backend b)
{
    return (int)b >= 0 && (int)b < EXEC_NBACKENDS ? &exec_backends[b] : NULL;
}

int cfx_backend_count(void) { return EXEC_NBACKENDS; }

const char *cfx_backend_name(cfx_backend b)
{
    const exec_backend *row = exec_backend_row(b);
    return row ? row->name : "unknown"; /* as cfx_status_name says of a status it does not know */
}

int cfx_backend_parse(const char *name, cfx_backend *out)
{
    for (int i = 0; name && i < EXEC_NBACKENDS; i++) {
        if (strcmp(name, exec_backends[i].name) == 0) {
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
    char detail[256] = "a status of no name"; /* a status out of the enum (a run cut short) */
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
        /* a CALL: its application kernel failed (or has no function for this backend) */
        if (r && r->kind == REC_CALL && r->a >= 0 && r->a < prog->nkernels &&
            prog->kernels[r->a] >= 0 && prog->kernels[r->a] < prog->nstrings)
            mark_cut(detail, sizeof detail, snprintf(detail, sizeof detail, "kernel '%s' failed",
                                                     prog->strings + prog->kernels[r->a]));
        else
            snprintf(detail, sizeof detail, "backend error");
        break;
    case CFX_OK:
        buf[0] = '\0';
        return;
    }
    mark_cut(buf, len, snprintf(buf, len, "%s:%d:%d: run stopped: %s: %s", prog->file ? prog->file : "?",
                                line, col, cfx_status_name(out->status), detail));
}

/* ---- Chrome traces ------------------------------------------------------------------------- */

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void exec_trace_open(FILE *f, const char *executor, const cfx_prog *prog, const char *thread,
                     int nthreads)
{
    char name[512];
    snprintf(name, sizeof name, "cfx %s: graph %s (%s)", executor, prog->name ? prog->name : "?",
             prog->file ? prog->file : "?");
    fputs("{\"traceEvents\":[\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,"
          "\"args\":{\"name\":", f);
    json_string(f, name);
    fputs("}}", f);
    for (int t = 0; t < (nthreads > 0 ? nthreads : 1); t++) {
        fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%d,"
                   "\"args\":{\"name\":\"%s", t, thread);
        if (nthreads > 0)
            fprintf(f, " %d", t);
        fputs("\"}}", f);
    }
}

void exec_record_name(const cfx_prog *prog, int32_t record, char *buf, size_t len)
{
    const cfx_record *r = &prog->records[record];
    int has_op = r->kind == REC_UNARY || r->kind == REC_BINARY || r->kind == REC_REDUCE ||
                 r->kind == REC_REDUCE_AXIS;
    snprintf(buf, len, "%s%s%s @ %d:%d", rec_names[r->kind], has_op ? " " : "", has_op ? op_name(r->op) : "",
             (int)r->line, (int)r->col);
}

void exec_trace_event(FILE *f, const cfx_prog *prog, int32_t record, const char *name, double ts_us,
                      double dur_us, int tid)
{
    const cfx_record *r = NULL;
    if (record >= 0 && record < prog->nrecords) {
        r = &prog->records[record];
    } else {
        for (int32_t i = 0; i < prog->nrecords && !r; i++)
            if (prog->records[i].line > 0)
                r = &prog->records[i];
    }
    const char *op = "";
    if (!name && r && (r->kind == REC_UNARY || r->kind == REC_BINARY || r->kind == REC_REDUCE ||
                      r->kind == REC_REDUCE_AXIS))
        op = op_name(r->op);
    /* the name carries the line too, so a track of short spans reads as source lines */
    char at[24] = "";
    if (r && r->line > 0 && record >= 0) /* a span of the whole graph or the host's: no line */
        snprintf(at, sizeof at, " (line %d)", (int)r->line);
    fprintf(f, ",\n{\"name\":\"%s%s%s%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":0,\"tid\":%d,"
               "\"args\":{\"line\":%d,\"col\":%d",
            name ? name : r ? rec_names[r->kind] : "?", op[0] ? " " : "", op, at, ts_us, dur_us, tid,
            r ? (int)r->line : 0, r ? (int)r->col : 0);
    if (record >= 0)
        fprintf(f, ",\"record\":%d", (int)record);
    fputs("}}", f);
}

/* ==== hang reports ============================================================================ */

/* `FILE:LINE:COL` of a record, or `(no record yet)`. */
static void where(const cfx_prog *prog, int32_t record, char *buf, size_t len)
{
    if (record >= 0 && record < prog->nrecords)
        snprintf(buf, len, "%s:%d:%d", prog->file ? prog->file : "?", (int)prog->records[record].line,
                 (int)prog->records[record].col);
    else
        snprintf(buf, len, "(no loop iteration or barrier yet)");
}

void exec_format_hang(const cfx_prog *prog, const exec_progress *progress, int nblocks, char *buf, size_t len)
{
    size_t n = 0;
    char at[320];
    if (len == 0)
        return;
    buf[0] = '\0';
#define PUT(...)                                                                                  \
    do {                                                                                          \
        if (n < len)                                                                              \
            n += (size_t)snprintf(buf + n, len - n, __VA_ARGS__);                                 \
    } while (0)
    for (int b = 0; b < nblocks; b++) {
        int32_t rec = progress[b].record, bar = progress[b].barrier;
        where(prog, rec, at, sizeof at);
        PUT("block %d: at %s after %llu iterations%s\n", b, at, (unsigned long long)progress[b].iterations,
            bar >= 0 ? ", waiting at a grid barrier" : "");
    }
    /* each barrier some block waits at, once: who waits, who has not arrived */
    for (int b = 0; b < nblocks; b++) {
        int32_t bar = progress[b].barrier;
        int seen = 0;
        for (int c = 0; c < b && !seen; c++)
            seen = progress[c].barrier == bar;
        if (bar < 0 || seen)
            continue;
        int waiting = 0;
        for (int c = 0; c < nblocks; c++)
            waiting += progress[c].barrier == bar;
        where(prog, bar, at, sizeof at);
        PUT("grid barrier at %s (record %d): %d of %d blocks wait there", at, (int)bar, waiting, nblocks);
        if (waiting < nblocks) {
            PUT("; not arrived:");
            for (int c = 0; c < nblocks; c++)
                if (progress[c].barrier != bar) {
                    where(prog, progress[c].record, at, sizeof at);
                    PUT(" block %d (at %s)", c, at);
                }
        }
        PUT("\n");
    }
#undef PUT
    if (n >= len && len > 4)
        memcpy(buf + len - 5, "...\n", 5); /* cut: says so */
}
