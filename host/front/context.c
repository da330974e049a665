/* context.c: registering application kernels so that graphs may call them like ops. */
#include "context.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ops.h"
#include "parse.h"
#include "host/program/program.h"
#include "source_op.h"

/* Names a kernel may not take: the language's keywords, the calls the checker handles
 * itself, and the dtype names (an argument spelled f32 is parsed as a type). */
static const char *const reserved[] = {
    "graph", "if", "elif", "else", "while", "for", "in", "range", "switch", "case",
    "default", "break", "continue", "return", "true", "false", "and", "or", "not",
    "assert", "print", "f32", "f64", "i32", "i64", "bool",
};

/* Sets *err to a malloc'd message (left NULL when out of memory) and returns -1. */
static int fail_with(char **err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    *err = malloc(strlen(buf) + 1);
    if (*err)
        strcpy(*err, buf);
    return -1;
}

static int is_identifier(const char *s)
{
    if (!s || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return 0;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return 0;
    return 1;
}

cfx_context *cfx_context_new(void) { return calloc(1, sizeof(cfx_context)); }

void cfx_context_free(cfx_context *ctx)
{
    if (!ctx)
        return;
    for (int i = 0; i < ctx->nkernels; i++) {
        free(ctx->kernels[i].name);
        sop_unref(ctx->kernels[i].source);
    }
    free(ctx->kernels);
    free(ctx);
}

const ctx_kernel *ctx_find(const cfx_context *ctx, const char *name)
{
    if (!ctx || !name)
        return NULL;
    for (int i = 0; i < ctx->nkernels; i++)
        if (strcmp(ctx->kernels[i].name, name) == 0)
            return &ctx->kernels[i];
    return NULL;
}

/* Registers a kernel after the checks both ways of registering share: its functions, or (a
 * non-NULL source) the op compiled from its source with those of source_op.h. */
static int add_kernel(const char *api, cfx_context *ctx, const char *name, const char *signature,
                      cfx_cpu_kernel cpu_fn, cfx_cuda_kernel cuda_fn, void *user, int form, const char *source,
                      char **err)
{
    if (err)
        *err = NULL;
    if (!ctx)
        return fail_with(err, "%s: the context is NULL", api);
    if (!is_identifier(name) || strlen(name) > 255)
        return fail_with(err, "kernel name '%.64s' is not an identifier",
                         name ? name : "(null)");
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (strcmp(name, reserved[i]) == 0)
            return fail_with(err, "kernel name '%s' is reserved by the language", name);
    for (int i = 0; i < OP_COUNT; i++)
        if (strcmp(name, op_spellings[i]) == 0)
            return fail_with(err, "kernel name '%s' is a built-in op", name);
    if (ctx_find(ctx, name))
        return fail_with(err, "kernel '%s' is already registered", name);
    if (!source && !cpu_fn && !cuda_fn)
        return fail_with(err, "kernel '%s' has neither a CPU nor a CUDA function", name);
    if (!signature)
        return fail_with(err, "kernel '%s': the signature is NULL", name);

    ctx_kernel k;
    memset(&k, 0, sizeof k);
    char perr[256] = "";
    if (parse_signature(signature, k.params, CTX_MAX_ARGS, &k.nparams, k.results, CTX_MAX_ARGS,
                        &k.nresults, perr, sizeof perr) != 0)
        return fail_with(err, "kernel '%s': bad signature \"%.128s\": %s", name, signature, perr);
    if (k.nresults < 1)
        return fail_with(err, "kernel '%s': a kernel must have at least one result", name);

    if (ctx->nkernels == ctx->cap) {
        int cap = ctx->cap ? ctx->cap * 2 : 8;
        ctx_kernel *grown = realloc(ctx->kernels, (size_t)cap * sizeof *grown);
        if (!grown)
            return fail_with(err, "out of memory");
        ctx->kernels = grown;
        ctx->cap = cap;
    }
    if (source) {
        char why[4096];
        k.source = sop_new(name, k.params, k.nparams, k.results, k.nresults, form, source, why, sizeof why);
        if (!k.source)
            return fail_with(err, "%s", why);
        cpu_fn = sop_cpu;
        cuda_fn = sop_cuda;
        user = k.source;
    }
    k.name = malloc(strlen(name) + 1);
    if (!k.name) {
        sop_unref(k.source);
        return fail_with(err, "out of memory");
    }
    strcpy(k.name, name);
    k.cpu_fn = cpu_fn;
    k.cuda_fn = cuda_fn;
    k.user = user;
    ctx->kernels[ctx->nkernels++] = k;
    return 0;
}

int cfx_register_kernel(cfx_context *ctx, const char *name, const char *signature,
                        cfx_cpu_kernel cpu_fn, cfx_cuda_kernel cuda_fn, void *user, char **err)
{
    return add_kernel("cfx_register_kernel", ctx, name, signature, cpu_fn, cuda_fn, user, KERNEL_BINARY, NULL,
                      err);
}

int cfx_register_source(cfx_context *ctx, const char *name, const char *signature, cfx_op_form form,
                        const char *source, char **err)
{
    if (!source) {
        if (err)
            *err = NULL;
        return fail_with(err, "kernel '%.64s': the source is NULL", name ? name : "(null)");
    }
    return add_kernel("cfx_register_source", ctx, name, signature, NULL, NULL, NULL, (int)form, source, err);
}
