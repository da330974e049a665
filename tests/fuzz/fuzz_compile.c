/* fuzz_compile.c: the libFuzzer target over the compiler and the cpu executor.
 *
 * Each input is a .cfx text. It is compiled; a refusal must come back as messages, each line
 * printable ASCII (so no byte of hostile input reaches a terminal raw). A program that
 * compiles is run on the cpu executor, every graph of it, with small inputs and a budget of
 * FUZZ_MAX_ITERS loop iterations, so a runaway loop ends with status `limit`; a program whose
 * arena is larger than FUZZ_MAX_ARENA is compiled but not run (the size limits are proven by
 * the compiler, not by allocating gigabytes). The constants of a file (`const W: f64[...] = 0`)
 * are the one thing the compiler does allocate, their declared size each: a file whose
 * constants declare more than FUZZ_MAX_ARENA bytes together is parsed but not compiled. ASan and
 * UBSan report what goes wrong inside.
 *
 * Built two ways (tests/CMakeLists.txt): with clang and -DCFX_FUZZ=ON as a libFuzzer binary
 * (`.ci/run` runs it for a bounded time over a corpus seeded from graphs/), and always as
 * part of test_fuzz_replay, which feeds it every file in tests/fuzz/regress/: the inputs that
 * once crashed or misbehaved, kept so that the ordinary suite replays them without clang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host/front/ast.h"
#include "host/front/compile.h"
#include "host/front/diag.h"
#include "host/runtime/exec.h"
#include "host/front/parse.h"
#include "host/program/program.h"

#define FUZZ_MAX_ARENA ((int64_t)1 << 22)
#define FUZZ_MAX_ITERS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every message line starts with the file name and holds only printable ASCII and tabs. */
static void check_messages(const char *text)
{
    if (!text || strncmp(text, "fuzz.cfx:", 9) != 0)
        abort();
    size_t n = strlen(text);
    if (n == 0 || text[n - 1] != '\n')
        abort();
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c != '\n' && c != '\t' && (c < 32 || c > 126))
            abort();
    }
}

/* Fills a buffer of `count` elements of dtype dt with small values of both signs. */
static void fill(void *buf, int dt, int64_t count)
{
    for (int64_t k = 0; k < count; k++) {
        int v = (int)(k % 5) - 1;
        switch (dt) {
        case CFX_F32: ((float *)buf)[k] = (float)v * 1.5f; break;
        case CFX_F64: ((double *)buf)[k] = (double)v * 1.5; break;
        case CFX_I32: ((int32_t *)buf)[k] = v; break;
        case CFX_I64: ((int64_t *)buf)[k] = v; break;
        default: ((uint8_t *)buf)[k] = (uint8_t)(v > 0); break;
        }
    }
}

static void run_graph(const cfx_prog *p)
{
    if (p->arena_bytes > FUZZ_MAX_ARENA)
        return;
    void **in = calloc((size_t)p->ninputs + 1, sizeof *in);
    void **res = calloc((size_t)p->nresults + 1, sizeof *res);
    if (!in || !res)
        goto done;
    for (int i = 0; i < p->ninputs; i++) {
        const cfx_slot *s = &p->slots[p->inputs[i]];
        if (!(in[i] = malloc((size_t)slot_bytes(s))))
            goto done;
        fill(in[i], s->dtype, s->count);
    }
    for (int i = 0; i < p->nresults; i++)
        if (!(res[i] = calloc(1, (size_t)slot_bytes(&p->slots[p->results[i]]))))
            goto done;
    exec_run run;
    memset(&run, 0, sizeof run);
    run.prog = p;
    run.inputs = in;
    run.results = res;
    run.max_iters = FUZZ_MAX_ITERS;
    exec_outcome out;
    memset(&out, 0, sizeof out);
    out.record = -1;
    if (cpu_run(&run, &out) != 0)
        goto done;
    if ((int)out.status < CFX_OK || out.status > CFX_ERROR || out.iterations > FUZZ_MAX_ITERS)
        abort();
    if (out.status != CFX_OK) {
        if (out.record < 0 || out.record >= p->nrecords)
            abort();
        char msg[1024];
        exec_format_stop(p, &out, msg, sizeof msg);
        if (strncmp(msg, "fuzz.cfx:", 9) != 0)
            abort();
    }
done:
    for (int i = 0; in && i < p->ninputs; i++)
        free(in[i]);
    for (int i = 0; res && i < p->nresults; i++)
        free(res[i]);
    free(in);
    free(res);
}

/* The bytes the constants of the text declare, together (0 when it does not parse). */
static int64_t constant_bytes(const uint8_t *data, size_t size)
{
    diag d;
    diag_init(&d, "fuzz.cfx", (const char *)data, size);
    ast_module *am = parse_module((const char *)data, size, &d);
    int64_t total = 0;
    for (int i = 0; am && i < am->nconsts; i++)
        total += cfx_type_count(&am->consts[i].type) * cfx_dtype_size(am->consts[i].type.dtype);
    ast_module_free(am);
    diag_free(&d);
    return total;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    compiled_module m;
    char *diags = NULL;
    if (constant_bytes(data, size) > FUZZ_MAX_ARENA)
        return 0;
    if (compile_source(NULL, "fuzz.cfx", (const char *)data, size, &m, &diags) != 0) {
        check_messages(diags);
        free(diags);
        return 0;
    }
    if (diags || m.ngraphs < 1)
        abort();
    for (int g = 0; g < m.ngraphs && g < 8; g++)
        run_graph(m.graphs[g].prog);
    compiled_module_free(&m);
    return 0;
}
