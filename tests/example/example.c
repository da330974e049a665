/* example.c: a small application of the installed cfx, using only <cfx.h>.
 *
 * Compiles a graph from a string, registers a CPU kernel that the graph calls, binds host
 * buffers by name, runs it, and reads the results and a stopped run's status line.
 * Exits 0 when every answer is the one computed by hand in the comments.
 */
#include <cfx.h>
#include <stdio.h>
#include <string.h>

static const char source[] =
    "# IfInWhileNet from the MindSpore control-flow tutorial, then an application kernel\n"
    "graph net(x: i32, y: i32, i: i32, v: f32[3]) -> (out: i32, w: f32[3]) {\n"
    "  out = x\n"
    "  while i < 3 {\n"
    "    if x + i < y {\n"
    "      out = out + x\n"
    "    } else {\n"
    "      out = out + y\n"
    "    }\n"
    "    out = out + 1\n"
    "    i = i + 1\n"
    "  }\n"
    "  w = axpy(v, cast(out, f32))\n"
    "}\n";

/* w = v * a + 1: the application's own op */
static int axpy(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    const float *v = args[0].data;
    float a = *(const float *)args[1].data;
    float *w = results[0].data;
    for (int64_t k = 0; k < cfx_type_count(&args[0].type); k++)
        w[k] = v[k] * a + 1.0f;
    return 0;
}

int main(void)
{
    int ok = 0;
    char *err = NULL;
    cfx_module *m = NULL;
    cfx_exec *e = NULL;
    cfx_context *ctx = cfx_context_new();
    if (!ctx || cfx_register_kernel(ctx, "axpy", "(f32[3], f32) -> (f32[3])", axpy, NULL, NULL, &err) != 0) {
        fprintf(stderr, "example: %s\n", err ? err : "out of memory");
        goto done;
    }
    m = cfx_compile_string(ctx, "example.cfx", source, strlen(source), &err);
    if (!m) {
        fprintf(stderr, "%s", err);
        goto done;
    }
    e = cfx_exec_new(m, cfx_graph_find(m, NULL), CFX_BACKEND_AUTO, &err);
    if (!e) {
        fprintf(stderr, "example: %s\n", err);
        goto done;
    }
    /* auto picks cpu here whatever the machine (axpy has no CUDA function); say what the
     * machine offers all the same */
    char why[512] = "";
    int gpu = cfx_backend_available(CFX_BACKEND_CUDA_PERSISTENT, why, sizeof why);
    printf("example: graph %s on %s (cuda-persistent: %s)\n", cfx_graph_name(m, 0),
           cfx_backend_name(cfx_exec_backend(e)), gpu ? "available" : why);

    int32_t x = 0, y = 1, i = 0, out = -1;
    float v[3] = {1.0f, 2.0f, 0.5f}, w[3] = {0};
    if (cfx_bind(e, "x", &x, sizeof x) || cfx_bind(e, "y", &y, sizeof y) ||
        cfx_bind(e, "i", &i, sizeof i) || cfx_bind(e, "v", v, sizeof v) ||
        cfx_bind(e, "out", &out, sizeof out) || cfx_bind(e, "w", w, sizeof w)) {
        fprintf(stderr, "example: %s\n", cfx_exec_error(e));
        goto done;
    }
    if (cfx_run(e) != CFX_OK) {
        fprintf(stderr, "example: %s\n", cfx_exec_message(e));
        goto done;
    }
    /* by hand: out goes 0 -> 1 -> 3 -> 5; w = v * 5 + 1 */
    printf("example: out = %d, w = [%g, %g, %g]\n", (int)out, w[0], w[1], w[2]);
    ok = out == 5 && w[0] == 6.0f && w[1] == 11.0f && w[2] == 3.5f;

    /* a budget of 2 iterations stops the 3-iteration loop */
    cfx_set_max_iters(e, 2);
    if (cfx_run(e) != CFX_STOP_LIMIT) {
        fprintf(stderr, "example: the budget did not stop the run\n");
        ok = 0;
    } else {
        printf("example: %s\n", cfx_exec_message(e));
    }
done:
    cfx_free(err);
    cfx_exec_free(e);
    cfx_module_free(m);
    cfx_context_free(ctx);
    printf("example: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
