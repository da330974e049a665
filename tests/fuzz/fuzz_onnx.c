/* fuzz_onnx.c: the libFuzzer target over the ONNX importer and the cpu executor.
 *
 * Each input is the bytes of a model (a serialized ModelProto, or anything else). It is
 * imported from memory through the C API (cfx_import_onnx); a refusal must come back as one
 * line naming the model, in printable ASCII (no byte of hostile input reaches a terminal
 * raw). A model that imports is run on the cpu executor with zeroed inputs and a budget of
 * FUZZ_MAX_ITERS loop iterations, so a runaway loop ends with status `limit`; a model whose
 * arena is larger than FUZZ_MAX_ARENA (read from cfx_dump's first line) is imported but not
 * run. ASan and UBSan report what goes wrong inside; everything is freed, so LeakSanitizer
 * reports what is not.
 *
 * Built two ways (tests/CMakeLists.txt): with clang and -DCFX_FUZZ=ON as a libFuzzer binary
 * (`.ci/run` runs it for a bounded time over a corpus seeded with the models of
 * tests/onnx/make_models.py and ONNX's node tests' models of under 64 KB), and as part of test_fuzz_onnx_replay, which feeds it every
 * .onnx file in tests/fuzz/regress/ without clang. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"

#define FUZZ_MAX_ARENA ((long long)1 << 22)
#define FUZZ_MAX_ITERS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A refusal: one line (a trailing newline allowed) that names the model, printable ASCII. */
static void check_message(const char *text)
{
    if (!text || strncmp(text, "model.onnx", 10) != 0)
        abort();
    size_t n = strlen(text);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\n' && i == n - 1)
            break;
        if (c == '\n' || c < 32 || c > 126)
            abort();
    }
}

/* The arena of graph 0 in bytes, from `graph NAME: N records, N slots, arena N bytes`; -1
 * where the dump cannot be read. */
static long long arena_bytes(const cfx_module *m)
{
    char *dump = cfx_dump(m, 0);
    long long bytes = -1;
    if (dump) {
        const char *p = strstr(dump, ", arena ");
        const char *nl = strchr(dump, '\n');
        if (p && (!nl || p < nl))
            bytes = strtoll(p + 8, NULL, 10);
        cfx_free(dump);
    }
    return bytes;
}

static void run_graph(cfx_module *m)
{
    long long arena = arena_bytes(m);
    if (arena < 0 || arena > FUZZ_MAX_ARENA)
        return;
    int nin = cfx_input_count(m, 0), nres = cfx_result_count(m, 0);
    if (nin < 0 || nres < 0)
        abort();
    char *err = NULL;
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, &err);
    if (!e) {
        /* a graph that compiled runs on the cpu executor */
        abort();
    }
    void **bufs = calloc((size_t)nin + (size_t)nres + 1, sizeof *bufs);
    int ok = bufs != NULL;
    for (int i = 0; ok && i < nin + nres; i++) {
        cfx_type t = i < nin ? cfx_input_type(m, 0, i) : cfx_result_type(m, 0, i - nin);
        const char *name = i < nin ? cfx_input_name(m, 0, i) : cfx_result_name(m, 0, i - nin);
        int64_t count = cfx_type_count(&t);
        size_t bytes = (size_t)count * (size_t)cfx_dtype_size(t.dtype);
        if (!name || count < 0 || (long long)bytes > FUZZ_MAX_ARENA) {
            if (!name || count < 0)
                abort();
            ok = 0;
            break;
        }
        if (!(bufs[i] = calloc(1, bytes ? bytes : 1)) || cfx_bind(e, name, bufs[i], bytes) != 0)
            ok = 0;
    }
    if (ok) {
        if (cfx_set_max_iters(e, FUZZ_MAX_ITERS) != 0)
            abort();
        cfx_status s = cfx_run(e);
        if ((int)s < CFX_OK || s > CFX_ERROR || cfx_exec_iterations(e) > FUZZ_MAX_ITERS)
            abort();
        if (s != CFX_OK && s != CFX_ERROR) {
            const char *msg = cfx_exec_message(e);
            if (!msg || !*msg)
                abort();
        }
    }
    cfx_exec_free(e);
    for (int i = 0; bufs && i < nin + nres; i++)
        free(bufs[i]);
    free(bufs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *diags = NULL;
    cfx_module *m = cfx_import_onnx(NULL, NULL, data, size, NULL, 0, &diags);
    if (!m) {
        check_message(diags);
        cfx_free(diags);
        return 0;
    }
    cfx_free(diags);
    if (cfx_graph_count(m) != 1)
        abort();
    run_graph(m);
    cfx_module_free(m);
    return 0;
}
