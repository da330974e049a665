/* source_op.c: application ops registered by their source (source_op.h): compiling and loading
 * the host's copy, the op's CPU and CUDA functions, and the text that generated code embeds. */
#include "source_op.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/runtime/module.h"
#include "context.h"
#include "host/program/program.h"

extern char **environ;

/* op_headers.c, written by CMakeLists.txt: kernels/ as text, which the op's source may use */
extern const char *const sop_header_names[];
extern const char *const sop_header_texts[];
extern const int sop_header_count;

#ifndef CFX_DEFAULT_CC
#define CFX_DEFAULT_CC "cc"
#endif

#define SOP_MAX_OPERANDS (2 * CTX_MAX_ARGS)

typedef void (*sop_entry)(void *const *p, int64_t lo, int64_t hi);

struct sop {
    int refs;
    char *name;
    int form;
    int nparams, nresults;
    cfx_type params[CTX_MAX_ARGS], results[CTX_MAX_ARGS];
    char *source;
    char *device_text; /* the kernel around it that sop_cuda launches, for NVRTC */
    void *lib;         /* the host's shared object */
    sop_entry entry;
    void *device;      /* the CUDA module's build of device_text, made at first use */
};

const char *sop_ctype(int dtype)
{
    switch (dtype) {
    case CFX_F32: return "float";
    case CFX_F64: return "double";
    case CFX_I32: return "int32_t";
    case CFX_I64: return "int64_t";
    default: return "uint8_t";
    }
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

void sop_mangle(const char *name, const char *source, char *buf, size_t len)
{
    snprintf(buf, len, "cfx_op_%s_%016llx", name, (unsigned long long)fnv1a(source));
}

void sop_write_unit(strbuf *out, const char *name, const char *source, const char *after)
{
    char m[300];
    size_t n = strlen(source);
    sop_mangle(name, source, m, sizeof m);
    sb_printf(out, "#ifndef %s_defined\n#define %s_defined\n#define %s %s\n#line 1 \"%s\"\n", m, m, name, m,
              name);
    sb_puts(out, source);
    if (n == 0 || source[n - 1] != '\n')
        sb_puts(out, "\n");
    sb_printf(out, "#undef %s\n#line 1 \"%s\"\n#endif\n", name, after);
}

/* The function the source must define, as a C prototype with the op's own name, for messages. */
static void prototype(const sop *op, strbuf *out)
{
    sb_printf(out, "CFX_HD void %s(", op->name);
    if (op->form == KERNEL_ELEMENTS)
        sb_puts(out, "int64_t lo, int64_t hi, ");
    for (int k = 0; k < op->nparams; k++)
        sb_printf(out, "const %s *a%d, ", sop_ctype(op->params[k].dtype), k);
    for (int k = 0; k < op->nresults; k++)
        sb_printf(out, "%s *r%d%s", sop_ctype(op->results[k].dtype), k, k + 1 < op->nresults ? ", " : ")");
}

/* The call of the op's function from an array p of pointers (arguments, then results), and
 * before it a pointer of the exact type the call expects, initialized with the function: the
 * compiler refuses a source whose function has another signature. */
static void typed_call(const sop *op, const char *fn, const char *lo, const char *hi, strbuf *out)
{
    sb_printf(out, "    void (*const f_)(%s", op->form == KERNEL_ELEMENTS ? "int64_t, int64_t, " : "");
    for (int k = 0; k < op->nparams; k++)
        sb_printf(out, "const %s *, ", sop_ctype(op->params[k].dtype));
    for (int k = 0; k < op->nresults; k++)
        sb_printf(out, "%s *%s", sop_ctype(op->results[k].dtype), k + 1 < op->nresults ? ", " : "");
    sb_printf(out, ") = %s;\n    f_(", fn);
    if (op->form == KERNEL_ELEMENTS)
        sb_printf(out, "%s, %s, ", lo, hi);
    for (int k = 0; k < op->nparams + op->nresults; k++)
        sb_printf(out, "(%s%s *)p[%d]%s", k < op->nparams ? "const " : "",
                  sop_ctype(k < op->nparams ? op->params[k].dtype : op->results[k - op->nparams].dtype), k,
                  k + 1 < op->nparams + op->nresults ? ", " : ");\n");
}

/* The host's file: the source and cfx_op_entry(p, lo, hi), which calls it. */
static void host_text(const sop *op, const char *fn, strbuf *out)
{
    sb_printf(out, "/* op '%s', registered by its source: the cpu executor's copy */\n", op->name);
    sb_puts(out, "#include <math.h>\n#include <stdint.h>\n#include \"kernels.h\"\n");
    sop_write_unit(out, op->name, op->source, "cfx: the call of the op");
    sb_puts(out, "void cfx_op_entry(void *const *p, int64_t lo, int64_t hi);\n"
                 "void cfx_op_entry(void *const *p, int64_t lo, int64_t hi)\n{\n    (void)lo;\n    (void)hi;\n");
    typed_call(op, fn, "lo", "hi", out);
    sb_puts(out, "}\n");
}

/* The device's file: the source and a kernel that calls it over [0, n) strided over the grid
 * (KERNEL_ELEMENTS), or once (KERNEL_WHOLE). */
static void device_text(const sop *op, const char *fn, strbuf *out)
{
    sb_printf(out, "/* op '%s', registered by its source: the kernel cuda-host, cuda-graph and the interpreter launch */\n",
              op->name);
    sb_puts(out, "#include \"kernels.h\"\n");
    sop_write_unit(out, op->name, op->source, "cfx: the kernel around the op");
    sb_printf(out, "typedef struct cfx_op_ptrs { void *p[%d]; } cfx_op_ptrs;\n", SOP_MAX_OPERANDS);
    sb_puts(out, "extern \"C\" __global__ void cfx_op_entry(const cfx_op_ptrs a, long long n)\n{\n"
                 "    void *const *p = a.p;\n");
    if (op->form == KERNEL_ELEMENTS) {
        sb_puts(out, "    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < n;\n"
                     "         e += (long long)gridDim.x * blockDim.x) {\n");
        typed_call(op, fn, "e", "e + 1", out);
        sb_puts(out, "    }\n");
    } else {
        sb_puts(out, "    (void)n;\n    if (blockIdx.x != 0 || threadIdx.x != 0)\n        return;\n");
        typed_call(op, fn, "0", "0", out);
    }
    sb_puts(out, "}\n");
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    strbuf sb = {0};
    char buf[4096];
    size_t n;
    if (!f)
        return NULL;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        sb_append(&sb, buf, n);
    fclose(f);
    return sb_take(&sb);
}

/* Runs the C compiler on dir/op.c into dir/op.so, its output in dir/log. Returns 0; -1 with
 * the reason in err (the compiler's log, or that there is none). */
static int compile_host(const sop *op, const char *dir, char *err, size_t errlen)
{
    const char *env = getenv("CFX_CC");
    const char *cc = env && env[0] ? env : CFX_DEFAULT_CC[0] ? CFX_DEFAULT_CC : "cc";
    char src[1100], so[1100], log[1100], inc[1100];
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int status = 0, rc;
    snprintf(src, sizeof src, "%s/op.c", dir);
    snprintf(so, sizeof so, "%s/op.so", dir);
    snprintf(log, sizeof log, "%s/log", dir);
    snprintf(inc, sizeof inc, "-I%s", dir);
    char *argv[] = {(char *)cc, "-std=c11", "-O2", "-fPIC", "-shared", "-ffp-contract=off",
                    "-Werror=incompatible-pointer-types", "-Werror=implicit-function-declaration",
                    "-Werror=int-conversion", inc, "-o", so, src, "-lm", NULL};
    if (posix_spawn_file_actions_init(&fa) != 0) {
        snprintf(err, errlen, "op '%s': out of memory", op->name);
        return -1;
    }
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    rc = posix_spawnp(&pid, cc, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        snprintf(err, errlen,
                 "op '%s': registering an op by its source needs a C compiler at run time, and '%s' cannot be "
                 "run (%s); set CFX_CC to one",
                 op->name, cc, strerror(rc));
        return -1;
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    char *text = read_file(log);
    strbuf want = {0};
    prototype(op, &want);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        snprintf(err, errlen,
                 "op '%s': registering an op by its source needs a C compiler at run time, and '%s' was not "
                 "found; set CFX_CC to one",
                 op->name, cc);
    else
        snprintf(err, errlen, "op '%s': the source does not compile with %s (it must define %s):\n%.3000s",
                 op->name, cc, sb_str(&want), text ? text : "");
    free(text);
    sb_free(&want);
    return -1;
}

/* Writes the host file and kernels/ into a fresh directory, compiles and loads it. */
static int load_host(sop *op, const char *fn, char *err, size_t errlen)
{
    const char *tmp = getenv("TMPDIR");
    char dir[1024], path[1200];
    strbuf text = {0};
    int rc = -1;
    snprintf(dir, sizeof dir, "%s/cfx_op.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        snprintf(err, errlen, "op '%s': cannot make a directory to compile it in (%s)", op->name, strerror(errno));
        return -1;
    }
    host_text(op, fn, &text);
    snprintf(path, sizeof path, "%s/op.c", dir);
    int written = !text.oom && write_file(path, sb_str(&text)) == 0;
    for (int i = 0; written && i < sop_header_count; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, sop_header_names[i]);
        written = write_file(path, sop_header_texts[i]) == 0;
    }
    if (!written) {
        snprintf(err, errlen, "op '%s': cannot write its source to %s", op->name, dir);
        goto done;
    }
    if (compile_host(op, dir, err, errlen) != 0)
        goto done;
    snprintf(path, sizeof path, "%s/op.so", dir);
    op->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!op->lib) {
        const char *e = dlerror();
        snprintf(err, errlen, "op '%s': its compiled source does not load: %s", op->name, e ? e : "?");
        goto done;
    }
    *(void **)&op->entry = dlsym(op->lib, "cfx_op_entry");
    if (!op->entry) {
        snprintf(err, errlen, "op '%s': its compiled source has no entry point", op->name);
        goto done;
    }
    rc = 0;
done:
    /* the loaded object stays mapped once its file is gone */
    snprintf(path, sizeof path, "%s/op.c", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/op.so", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/log", dir);
    unlink(path);
    for (int i = 0; i < sop_header_count; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, sop_header_names[i]);
        unlink(path);
    }
    rmdir(dir);
    sb_free(&text);
    return rc;
}

/* Names that the source's text is compiled with and that an op's name, made a macro for its
 * renaming, would replace: C, C++ and CUDA keywords and the types and macros the prelude gives. */
static int clashes(const char *name)
{
    static const char *const words[] = {
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
        "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
        "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
        "volatile", "while", "bool", "true", "false", "class", "template", "typename", "namespace", "new",
        "delete", "this", "operator", "private", "public", "protected", "virtual", "friend", "using", "try",
        "catch", "throw", "asm", "constexpr", "decltype", "nullptr", "noexcept", "static_assert",
        "thread_local", "alignas", "alignof", "mutable", "explicit", "export", "int8_t", "uint8_t", "int16_t",
        "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "uintptr_t", "size_t", "NULL", "CFX_HD",
        "threadIdx", "blockIdx", "blockDim", "gridDim",
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcmp(name, words[i]) == 0)
            return 1;
    return strncmp(name, "__", 2) == 0 || strncmp(name, "cfx_", 4) == 0;
}

/* The shape rules of each form (source_op.h). */
static int check_form(const char *name, int form, const cfx_type *results, int nresults, char *err,
                      size_t errlen)
{
    int ones = 0;
    if (form != KERNEL_ELEMENTS && form != KERNEL_WHOLE) {
        snprintf(err, errlen, "op '%s': the form %d is neither CFX_OP_ELEMENTS nor CFX_OP_WHOLE", name, form);
        return -1;
    }
    for (int k = 0; k < nresults; k++) {
        int64_t n = cfx_type_count(&results[k]);
        ones += n == 1;
        if (form == KERNEL_ELEMENTS && n != cfx_type_count(&results[0])) {
            snprintf(err, errlen,
                     "op '%s': an elements op computes the same elements of every result, but result %d has %lld "
                     "elements and result 0 has %lld",
                     name, k, (long long)n, (long long)cfx_type_count(&results[0]));
            return -1;
        }
    }
    if (form == KERNEL_WHOLE && ones != 0 && ones != nresults) {
        snprintf(err, errlen,
                 "op '%s': a whole op's results must all have one element (every thread computes them) or all "
                 "have more (one thread does): split it into two ops",
                 name);
        return -1;
    }
    return 0;
}

sop *sop_new(const char *name, const cfx_type *params, int nparams, const cfx_type *results, int nresults,
             int form, const char *source, char *err, size_t errlen)
{
    sop *op = NULL;
    char fn[300];
    strbuf dev = {0};
    if (nparams > CTX_MAX_ARGS || nresults > CTX_MAX_ARGS || nresults < 1) {
        snprintf(err, errlen, "op '%s': %d arguments and %d results (at most %d each, at least one result)", name,
                 nparams, nresults, CTX_MAX_ARGS);
        return NULL;
    }
    if (clashes(name)) {
        snprintf(err, errlen,
                 "op '%s': the name clashes with C, C++ or CUDA, or with cfx's own names, that its source is "
                 "compiled with: name it otherwise",
                 name);
        return NULL;
    }
    if (check_form(name, form, results, nresults, err, errlen) != 0)
        return NULL;
    op = calloc(1, sizeof *op);
    if (!op || !(op->name = malloc(strlen(name) + 1)) || !(op->source = malloc(strlen(source) + 1))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    op->refs = 1;
    strcpy(op->name, name);
    strcpy(op->source, source);
    op->form = form;
    op->nparams = nparams;
    op->nresults = nresults;
    memcpy(op->params, params, sizeof *params * (size_t)nparams);
    memcpy(op->results, results, sizeof *results * (size_t)nresults);
    sop_mangle(name, source, fn, sizeof fn);
    if (load_host(op, fn, err, errlen) != 0)
        goto fail;
    device_text(op, fn, &dev);
    if (dev.oom) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    op->device_text = sb_take(&dev);
    {
        /* CUDA C++ is not C: where NVRTC is at hand, it must take the source too */
        char why[2048];
        if (comp_op_check(op->device_text, why, sizeof why) < 0) {
            snprintf(err, errlen, "op '%s': the source does not compile as CUDA C++ (NVRTC):\n%s", name, why);
            goto fail;
        }
    }
    return op;
fail:
    sb_free(&dev);
    sop_unref(op);
    return NULL;
}

sop *sop_ref(sop *op)
{
    if (op)
        __atomic_add_fetch(&op->refs, 1, __ATOMIC_RELAXED);
    return op;
}

void sop_unref(sop *op)
{
    if (!op || __atomic_sub_fetch(&op->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    if (op->device)
        comp_op_release(op->device);
    if (op->lib)
        dlclose(op->lib);
    free(op->name);
    free(op->source);
    free(op->device_text);
    free(op);
}

int sop_form(const sop *op) { return op->form; }
const char *sop_source(const sop *op) { return op->source; }

/* Pointers to the operands' elements, arguments then results; the elements of the range. */
static int operands(const sop *op, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results,
                    void **p, int64_t *n)
{
    if (nargs != op->nparams || nresults != op->nresults)
        return -1;
    for (int k = 0; k < nargs; k++)
        p[k] = args[k].data;
    for (int k = 0; k < nresults; k++)
        p[nargs + k] = results[k].data;
    *n = op->form == KERNEL_ELEMENTS ? cfx_type_count(&results[0].type) : 1;
    return 0;
}

int sop_cpu(void *user, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    sop *op = (sop *)user;
    void *p[SOP_MAX_OPERANDS];
    int64_t n;
    if (operands(op, nargs, args, nresults, results, p, &n) != 0)
        return 1;
    op->entry(p, 0, n);
    return 0;
}

int sop_cuda(void *user, void *stream, int nargs, const cfx_tensor *args, int nresults, cfx_tensor *results)
{
    sop *op = (sop *)user;
    void *p[SOP_MAX_OPERANDS];
    int64_t n;
    char why[512];
    if (operands(op, nargs, args, nresults, results, p, &n) != 0)
        return 1;
    return comp_op_launch(&op->device, op->device_text, stream, p, nargs + nresults, n, why, sizeof why) == 0 ? 0 : 1;
}
