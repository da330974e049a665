/* compile.c: parse, check, lower and validate every graph of a source text (compile.h). */
#include "compile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "check.h"
#include "context.h"
#include "desugar.h"
#include "host/util/strbuf.h"
#include "host/runtime/value.h"
#include "diag.h"
#include "lower.h"
#include "host/runtime/npy.h"
#include "parse.h"
#include "source_op.h"

static char *dup_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c)
        memcpy(c, s, n);
    return c;
}

/* The default of parameter p (a checked literal) as one element of its dtype in v->value, and
 * as text in v->def. -1 when out of memory. */
static int copy_default(compiled_value *v, const ast_param *p)
{
    if (p->def->kind == AST_NONE) {
        v->def = dup_string("None");
        return v->def ? 0 : -1;
    }
    const check_note *k = p->def->note;
    cfx_type one;
    memset(&one, 0, sizeof one);
    one.dtype = p->type.dtype;
    value_scalar(one.dtype, k->ival, k->rval, v->value);
    strbuf text = {0};
    value_format(&text, &one, v->value);
    v->def = text.oom ? NULL : dup_string(sb_str(&text));
    sb_free(&text);
    return v->def ? 0 : -1;
}

static int copy_values(compiled_value **out, int *nout, const ast_param *p, int n)
{
    *nout = 0;
    int hidden = 0;
    for (int i = 0; i < n; i++)
        hidden += p[i].def && p[i].def->kind == AST_NONE;
    *out = calloc((size_t)(n + hidden) + 1, sizeof **out);
    if (!*out)
        return -1;
    for (int i = 0; i < n; i++) {
        (*out)[i].type = p[i].type;
        (*out)[i].name = dup_string(p[i].name);
        (*out)[i].presence_of = -1;
        if (!(*out)[i].name)
            return -1;
        (*nout)++;
        if (p[i].def && copy_default(&(*out)[i], &p[i]) < 0)
            return -1;
    }
    /* the presence of each parameter that defaults to None, an input of the program (lower.c) */
    for (int i = 0; i < n; i++) {
        if (!p[i].def || p[i].def->kind != AST_NONE)
            continue;
        compiled_value *v = &(*out)[*nout];
        size_t len = strlen(p[i].name) + 10;
        v->name = malloc(len);
        if (!v->name)
            return -1;
        snprintf(v->name, len, "present(%s)", p[i].name);
        v->type.dtype = CFX_I32;
        v->presence_of = i;
        (*nout)++;
    }
    return 0;
}

void compiled_module_free(compiled_module *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->ngraphs; i++) {
        compiled_graph *g = &m->graphs[i];
        free(g->name);
        for (int k = 0; k < g->nparams; k++) {
            free(g->params[k].name);
            free(g->params[k].def);
        }
        for (int k = 0; k < g->nresults; k++)
            free(g->results[k].name);
        free(g->params);
        free(g->results);
        prog_free(g->prog);
    }
    free(m->graphs);
    m->graphs = NULL;
    m->ngraphs = 0;
}

/* The sources of the kernels p calls that were registered by their source, for the code
 * generator to inline (program.h's kernel_form and kernel_source). */
static int attach_sources(const cfx_context *ctx, cfx_prog *p, char *err, size_t errlen)
{
    for (int32_t k = 0; k < p->nkernels; k++) {
        const ctx_kernel *kern = ctx_find(ctx, p->strings + p->kernels[k]);
        if (kern && kern->source &&
            prog_set_kernel_source(p, k, sop_form(kern->source), sop_source(kern->source), err, errlen) != 0)
            return -1;
    }
    return 0;
}

/* Message `why` of the .npy reader with its words for an input made a constant's. */
static void npy_words(char *why, size_t len)
{
    static const char from[] = "the input's type", to[] = "the constant's type";
    char *at = strstr(why, from);
    if (!at || strlen(why) - strlen(from) + strlen(to) >= len)
        return;
    memmove(at + strlen(to), at + strlen(from), strlen(at + strlen(from)) + 1);
    memcpy(at, to, strlen(to));
}

/* Constant c's value from its .npy file, whose path is relative to folder dir (NULL: the
 * current directory) unless it is absolute. */
static void read_npy(ast_module *m, ast_const *c, const char *dir, diag *d)
{
    size_t bytes = (size_t)cfx_type_count(&c->type) * (size_t)cfx_dtype_size(c->type.dtype);
    char *path = malloc(strlen(c->path) + (dir ? strlen(dir) : 0) + 2);
    void *data = ast_alloc(m->arena, bytes);
    if (!path || !data) {
        free(path);
        diag_error(d, c->vline, c->vcol, "out of memory");
        return;
    }
    if (dir && *dir && c->path[0] != '/')
        sprintf(path, "%s/%s", dir, c->path);
    else
        strcpy(path, c->path);
    char why[512];
    if (npy_read_file(path, &c->type, data, why, sizeof why) != 0) {
        npy_words(why, sizeof why);
        diag_error(d, c->vline, c->vcol, "constant '%s': %s", c->name, why);
        c->bad = 1;
    } else {
        c->data = data;
    }
    free(path);
}

/* The values of m's constants: read from their .npy files, or taken from the compile call's
 * table for those the text gives none; every error is reported. */
static void bind_constants(ast_module *m, const char *dir, const cfx_constant *table, int ntable, diag *d)
{
    char b1[128], b2[128];
    for (int i = 0; i < m->nconsts; i++) {
        ast_const *c = &m->consts[i];
        if (c->path && !c->bad)
            read_npy(m, c, dir, d);
        if (c->fill && c->data && !c->bad) {
            /* one value for every element */
            size_t n = (size_t)cfx_type_count(&c->type), size = (size_t)cfx_dtype_size(c->type.dtype);
            char *all = ast_alloc(m->arena, n * size);
            if (!all) {
                diag_error(d, c->vline, c->vcol, "out of memory");
                c->bad = 1;
                continue;
            }
            for (size_t k = 0; k < n; k++)
                memcpy(all + k * size, c->data, size);
            c->data = all;
            c->fill = 0;
        }
    }
    uint8_t *given = calloc((size_t)m->nconsts + 1, 1);
    if (!given) {
        diag_error(d, 1, 1, "out of memory");
        return;
    }
    for (int k = 0; k < ntable; k++) {
        const cfx_constant *e = &table[k];
        if (!e->name) {
            diag_error(d, 1, 1, "entry %d of the compile call's table of constants has no name", k);
            continue;
        }
        ast_const *c = NULL;
        for (int i = 0; i < m->nconsts && !c; i++)
            if (strcmp(m->consts[i].name, e->name) == 0)
                c = &m->consts[i];
        if (!c) {
            diag_error(d, 1, 1, "the compile call's table gives constant '%s', which the file does not declare "
                       "(const %s: TYPE)", e->name, e->name);
            continue;
        }
        if (given[c - m->consts]++) {
            diag_error(d, c->line, c->col, "the compile call's table gives constant '%s' twice", c->name);
            continue;
        }
        if (c->bad)
            continue;
        if (c->path || c->data) {
            diag_error(d, c->line, c->col, "constant '%s' has a value in the text, and the compile call's table "
                       "gives it another", c->name);
            continue;
        }
        if (!ast_same_type(&c->type, &e->type)) {
            const char *t2 = e->type.rank < 0 || e->type.rank > CFX_TYPE_MAX_RANK || (unsigned)e->type.dtype > CFX_BOOL
                                 ? "no type"
                                 : check_type_str(&e->type, b2, sizeof b2);
            diag_error(d, c->line, c->col, "constant '%s' is %s, but the compile call's table gives it as %s",
                       c->name, check_type_str(&c->type, b1, sizeof b1), t2);
            continue;
        }
        if (!e->data) {
            diag_error(d, c->line, c->col, "the compile call's table gives constant '%s' no data", c->name);
            continue;
        }
        size_t n = (size_t)cfx_type_count(&c->type), size = (size_t)cfx_dtype_size(c->type.dtype);
        c->data = ast_alloc(m->arena, n * size);
        if (!c->data) {
            diag_error(d, c->line, c->col, "out of memory");
            continue;
        }
        if (c->type.dtype == CFX_BOOL)
            for (size_t j = 0; j < n; j++)
                ((uint8_t *)c->data)[j] = ((const uint8_t *)e->data)[j] != 0;
        else
            memcpy(c->data, e->data, n * size);
    }
    for (int i = 0; i < m->nconsts; i++) {
        ast_const *c = &m->consts[i];
        if (!c->data && !c->path && !c->bad && !given[i]) {
            diag_error(d, c->line, c->col, "constant '%s' has no value: write one (const %s: TYPE = VALUE), or give "
                       "it in the compile call's table (cfx_compile_string_constants)", c->name, c->name);
            c->bad = 1;
        }
    }
    free(given);
}

int compile_check(ast_module *m, const cfx_context *ctx, diag *d)
{
    int before = d->errors;
    if (check_constants(m, d) < 0 || desugar_module(m, ctx, d) < 0) {
        diag_error(d, 1, 1, "out of memory");
        return d->errors - before;
    }
    checker *C = check_begin(m, ctx, d);
    if (!C)
        return d->errors - before;
    int oom = 0;
    for (int gi = 0; gi < m->ngraphs && !oom; gi++)
        oom = desugar_graph(m, gi, ctx, d) < 0 || check_one_graph(C, gi) < 0;
    check_end(C, oom);
    return d->errors - before;
}

static char *folder_of(const char *file)
{
    const char *slash = file ? strrchr(file, '/') : NULL;
    if (!slash)
        return dup_string("");
    size_t n = slash == file ? 1 : (size_t)(slash - file);
    char *dir = malloc(n + 1);
    if (dir) {
        memcpy(dir, file, n);
        dir[n] = '\0';
    }
    return dir;
}

int compile_source(const cfx_context *ctx, const char *file, const char *src, size_t len,
                   compiled_module *out, char **diagnostics)
{
    char *dir = folder_of(file);
    if (!dir) {
        memset(out, 0, sizeof *out);
        *diagnostics = dup_string("out of memory\n");
        return -1;
    }
    int rc = compile_source_with(ctx, file, src, len, dir, NULL, 0, out, diagnostics);
    free(dir);
    return rc;
}

int compile_source_with(const cfx_context *ctx, const char *file, const char *src, size_t len, const char *dir,
                        const cfx_constant *constants, int nconstants, compiled_module *out, char **diagnostics)
{
    diag d;
    diag_init(&d, file, src, len);
    ast_module *m = NULL;
    memset(out, 0, sizeof *out);
    *diagnostics = NULL;

    m = parse_module(src, len, &d);
    if (!m) {
        diag_error(&d, 1, 1, "out of memory");
        goto fail;
    }
    bind_constants(m, dir, constants, nconstants < 0 ? 0 : nconstants, &d);
    if (d.errors) {
        /* every independent error is reported: check what parsed (its broken statements stand
         * for what they may have assigned, quietly), then stop before lowering */
        if (m->ngraphs > 0)
            compile_check(m, ctx, &d);
        goto fail;
    }
    if (m->ngraphs == 0) {
        diag_error(&d, 1, 1, "the file holds no graph");
        goto fail;
    }
    if (compile_check(m, ctx, &d) > 0)
        goto fail;
    out->graphs = calloc((size_t)m->ngraphs, sizeof *out->graphs);
    if (!out->graphs) {
        diag_error(&d, 1, 1, "out of memory");
        goto fail;
    }
    for (int i = 0; i < m->ngraphs; i++) {
        const ast_graph *g = &m->graphs[i];
        compiled_graph *cg = &out->graphs[i];
        out->ngraphs = i + 1;
        cg->name = dup_string(g->name);
        cg->ndeclared = g->nparams;
        if (!cg->name || copy_values(&cg->params, &cg->nparams, g->params, g->nparams) < 0 ||
            copy_values(&cg->results, &cg->nresults, g->results, g->nresults) < 0) {
            diag_error(&d, g->line, g->col, "out of memory");
            goto fail;
        }
        cg->prog = lower_graph(m, i, file, &d);
        if (!cg->prog)
            continue; /* reported; lower the other graphs for their messages too */
        char err[256];
        if (attach_sources(ctx, cg->prog, err, sizeof err) != 0) {
            diag_error(&d, g->line, g->col, "%s", err);
            continue;
        }
        if (prog_validate(cg->prog, err, sizeof err) != 0)
            diag_error(&d, g->line, g->col, "internal error: the program for graph '%s' is invalid: %s",
                       g->name, err);
    }
    if (d.errors)
        goto fail;
    ast_module_free(m);
    diag_free(&d);
    return 0;
fail:
    if (d.errors == 0)
        diag_error(&d, 1, 1, "out of memory");
    *diagnostics = diag_take(&d);
    diag_free(&d);
    ast_module_free(m);
    compiled_module_free(out);
    return -1;
}
