/* main.c: the cfx command. The only place in cfx that prints or exits.
 *
 *   cfx run FILE [options]   compile, bind --in values, run, print the results
 *   cfx check FILE           compile only
 *   cfx dump FILE            print the compiled records
 *
 * Exit status: 0 a run that ended ok (or a clean check/dump), 1 a compile error, a bad
 * command line or a failure of the backend, 3 a run that stopped early (its status line is
 * on stderr).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "host/cfx.h"
#include "host/runtime/cpu_linalg.h"
#include "host/runtime/exec.h"
#include "host/runtime/npy.h"
#include "host/util/strbuf.h"
#include "host/runtime/value.h"

#define EXIT_STOPPED 3
/* A run without --max-iters that takes longer than this says once how to stop it: a loop
 * that never ends (collatz of 0, say) otherwise looks like a hang. */
#define RUN_HINT_SECONDS 5

static const char usage_text[] =
    "usage: cfx run FILE [options]     compile FILE and run a graph\n"
    "       cfx check FILE             compile FILE; print nothing when it is fine\n"
    "       cfx dump FILE [--graph NAME] [--cost [--blocks N] [--floors GB,BB,BW,REC,MOP,PH]]\n"
    "                    [--kernel [cuda|c]]\n"
    "                                  print the compiled records of every graph (or of one),\n"
    "                                  or with --cost what each loop iteration costs on the GPU,\n"
    "                                  or with --kernel the generated kernel (see cfx dump --help)\n"
    "       cfx import MODEL.onnx [-o FILE.cfx]\n"
    "                                  write the .cfx program an ONNX model imports as; run,\n"
    "                                  check and dump take MODEL.onnx for FILE too\n"
    "       cfx backends               whether the CUDA executors were built, whether they\n"
    "                                  load here, what each backend finds on this machine,\n"
    "                                  and the cpu executor's BLAS and its kernels\n"
    "       cfx --help | -h            this text\n"
    "       cfx --version              the version (loads nothing)\n"
    "\n"
    "Run `cfx run --help` for the options of run, and `cfx run FILE --help` for the inputs\n"
    "and results of FILE's graph.\n"
    "\n"
    "Exit status: 0 ok; 1 a compile error, a bad command line or a backend failure;\n"
    "3 a run that stopped early (assert, index, divide, value, limit, cancelled), after its\n"
    "status line `FILE:LINE:COL: run stopped: ...` on standard error.\n"
    "\n"
    "In a build with CUDA, the CUDA executors are a module, libcfx_cuda.so, loaded only when\n"
    "a CUDA backend is asked for; it is found beside libcfx, or at the path in\n"
    "CFX_CUDA_MODULE.\n";

static const char run_usage_text[] =
    "usage: cfx run FILE [options]\n"
    "\n"
    "Compiles FILE, runs one of its graphs and prints each result as `NAME = VALUE`, one per\n"
    "line, in declaration order, after any lines the graph's print statements wrote.\n"
    "\n"
    "options:\n"
    "  --graph NAME          run graph NAME (default: the first graph in FILE)\n"
    "  --in NAME=VALUE       the value of input NAME; every input without a default needs one\n"
    "                        (FILE --help shows the defaults). VALUE is a literal\n"
    "                        checked against the input's type (5, -1.5, true, [[1,2],[3,4]]),\n"
    "                        a .npy file (a path ending in .npy, with exactly the input's\n"
    "                        dtype and shape), or `random`: uniform in [0, 1) for reals,\n"
    "                        integers in [0, 100), bools 0 or 1. An ONNX model's sequence\n"
    "                        input is one .npy of its items stacked along a new first axis,\n"
    "                        or one per item, --in 'NAME[0]=a.npy' --in 'NAME[1]=b.npy' ...\n"
    "                        (so its items may differ in shape)\n"
    "  --seed N              seed of the `random` values (default 0); the same seed gives the\n"
    "                        same values on every machine\n"
    "  --out NAME=FILE.npy   write result NAME to FILE.npy instead of printing it; an ONNX\n"
    "                        model's sequence result is its items stacked, or, where they\n"
    "                        differ in shape, one result per item, NAME[0], NAME[1], ...\n"
    "  --backend B           auto (default), cpu, cuda-host, cuda-graph or cuda-persistent;\n"
    "                        auto picks cuda-persistent where a CUDA device is present, else\n"
    "                        cpu, and when given explicitly says on stderr which it picked;\n"
    "                        cuda-persistent also says which path it took (its compiled\n"
    "                        kernel, or its interpreter and why; device graph launch, or\n"
    "                        pause and relaunch and why)\n"
    "  --persistent-mode M   compiled (default) or interp: how cuda-persistent runs the graph,\n"
    "                        as a kernel generated from it and compiled with NVRTC, or by\n"
    "                        interpreting its records\n"
    "  --accumulate M        fast (default) or f64: how the cpu backend accumulates sums,\n"
    "                        dots and products of reals: fast as numpy does (f32 products\n"
    "                        through the CBLAS, f32 accumulating in f32), f64 as the\n"
    "                        reference (f32 accumulating in double, rounded once); also\n"
    "                        $CFX_ACCUMULATE (docs/language.md, \"Arithmetic rules\")\n"
    "  --threads N           how many threads the cpu backend runs on (1 to 256; 1 runs\n"
    "                        everything on the calling thread): its elementwise records over\n"
    "                        large tensors, its sums and dots, and the CBLAS's products;\n"
    "                        default $CFX_NUM_THREADS where set, else the cores available\n"
    "                        (and the CBLAS's own count)\n"
    "  --max-iters N         stop the run with status limit after N loop iterations in all\n"
    "                        (default 0: no limit; Ctrl-C cancels a run)\n"
    "  --trace FILE.json     write a Chrome trace of the run (open it in Perfetto)\n"
    "  --profile             after the run, print on stderr where its time went: count,\n"
    "                        total and mean time and share of the run by source line and by\n"
    "                        record kind, and each loop's time per iteration: on cpu from\n"
    "                        its own clock (profiling turns record fusion off), on\n"
    "                        cuda-persistent from block 0's %globaltimer stamps: the\n"
    "                        interpreter's around each record or micro-op loop, the\n"
    "                        compiled kernel's at the end of each phase (a fused loop, a\n"
    "                        product, a combine) and around each grid barrier (a kernel\n"
    "                        built with the stamps); not on cuda-host or cuda-graph yet\n"
    "  --deadline SECONDS    cancel the run after SECONDS of wall time (a real number) and\n"
    "                        say where it stood, as Ctrl-C does: the statement and the loop\n"
    "                        iterations so far, and on cuda-persistent each\n"
    "                        block's position and the grid barriers blocks wait at, with\n"
    "                        the blocks that never arrived (status cancelled, exit 3)\n"
    "  --help, -h            this text; after FILE, also the graph's inputs and results\n"
    "\n"
    "Options also take the form --option=VALUE. Reals print in the shortest form that reads\n"
    "back to the same value (0.1, 1e-06), bools as true/false, tensors as [1, 2.5, 3].\n";

static const char import_usage_text[] =
    "usage: cfx import MODEL.onnx [-o FILE.cfx] [--in NAME=FILE.npy]...\n"
    "\n"
    "Imports an ONNX model (If, Loop, Scan and the ops docs/onnx.md lists) and writes the .cfx\n"
    "program that `cfx run MODEL.onnx` runs, each statement with its ONNX node's name in a\n"
    "comment. With -o, the text goes to FILE.cfx and constants of more than 16 elements to .npy\n"
    "files in the folder FILE_data beside it, so that `cfx run FILE.cfx` runs it; without, the\n"
    "text goes to standard output and such constants are declared without their values. A\n"
    "--in NAME=FILE.npy gives input NAME the shape of FILE.npy (for symbolic dimensions); a\n"
    "sequence input is its items stacked, or item by item as --in 'NAME[0]=FILE.npy' ...\n";
static const char check_usage_text[] =
    "usage: cfx check FILE\n"
    "\n"
    "Compiles FILE and prints every error, `FILE:LINE:COL: error: MESSAGE` with the source\n"
    "line and a caret; prints nothing and exits 0 when FILE compiles.\n";

static const char dump_usage_text[] =
    "usage: cfx dump FILE [--graph NAME] [--cost [--blocks N] [--floors GB,BB,BW,REC,MOP,PH]]\n"
    "                     [--kernel [cuda|c]]\n"
    "\n"
    "Compiles FILE and prints the records of every graph, or only of graph NAME.\n"
    "\n"
    "--cost prints instead each graph's cost sheet: for every loop, what one iteration costs the\n"
    "two modes of cuda-persistent (the interpreter and the compiled kernel), computed on this\n"
    "machine from the plan they follow: records walked, grid and block barriers, bytes read and\n"
    "written in device memory, launches, and a time predicted from the floors. --blocks is the\n"
    "grid's size (default 264, what the executors launch on an H100 or an H200: 132\n"
    "multiprocessors x 2); --floors the figures the prediction uses, in this order: grid barrier\n"
    "us, block barrier us, device memory GB/s, interpreted record us, micro-op us, memory phase us\n"
    "(the compiled kernel's trips to memory one after another); default 1.21,0.014,2959,1.15,0.08,1.35, measured on an H100.\n"
    "\n"
    "--kernel prints instead each graph's generated kernel: cuda (the default), the CUDA C that the\n"
    "compiled mode of cuda-persistent gives NVRTC, as built for a GPU of 132 multiprocessors (the\n"
    "executor adds `#define CK_DEVICE_LAUNCH 1` or `#define CK_TRACE 1` first where it wants\n"
    "them); c, the C function the code generator writes for the host. No GPU is needed. To keep\n"
    "or replace the kernel a run compiles, see CFX_KERNEL_DUMP and CFX_KERNEL_OVERRIDE in\n"
    "docs/persistent.md.\n";

/* ---- command-line parsing --------------------------------------------------------------- */

/* Command-line text in a message is cut as compile errors cut source (diag.h): at most
 * SHOWN_MAX bytes, a byte that does not print as \xNN, and "..." where it was cut, so a value
 * of 100 KB makes a line of a terminal's width, not a page. */
#define SHOWN_MAX 64
#define SHOWN_BYTES (SHOWN_MAX * 4 + 4)

static const char *shown(const char *s, char *buf)
{
    size_t n = 0, i = 0;
    for (; s[i] && i < SHOWN_MAX; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f)
            buf[n++] = (char)c;
        else
            n += (size_t)snprintf(buf + n, SHOWN_BYTES - n, "\\x%02X", c);
    }
    if (s[i])
        n += (size_t)snprintf(buf + n, SHOWN_BYTES - n, "...");
    buf[n] = '\0';
    return buf;
}

typedef struct pair {
    const char *name;
    const char *value;
} pair;

typedef struct options {
    const char *file;
    const char *graph;
    pair *ins;
    int nins;
    pair *outs;
    int nouts;
    const char *seed;
    const char *backend;
    const char *max_iters;
    const char *trace;
    const char *persistent_mode;
    const char *accumulate;
    const char *threads;
    const char *blocks;
    const char *floors;
    const char *deadline;
    const char *output;
    int cost;
    const char *kernel; /* dump --kernel: "cuda" or "c" */
    int profile;
    int help;
} options;

static int bad_usage(const char *command, const char *fmt, const char *what)
{
    char cut[SHOWN_BYTES];
    fprintf(stderr, "cfx: ");
    fprintf(stderr, fmt, shown(what, cut));
    fprintf(stderr, " (see cfx %s%s--help)\n", command ? command : "", command ? " " : "");
    return 1;
}

/* Splits NAME=VALUE; -1 when there is no '=' or no name. */
static int split_pair(const char *arg, pair *out)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return -1;
    size_t n = (size_t)(eq - arg);
    char *name = malloc(n + 1);
    if (!name)
        return -1;
    memcpy(name, arg, n);
    name[n] = '\0';
    out->name = name;
    out->value = eq + 1;
    return 0;
}

/* Parses the arguments after the command word. `allowed` lists the options with a value
 * that this command takes. Returns 0, or 1 after printing what is wrong. */
static int parse_options(const char *command, int argc, char **argv, const char *const *allowed,
                         options *o)
{
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            o->help = 1;
            continue;
        }
        if (arg[0] != '-' || arg[1] == '\0') {
            if (o->file)
                return bad_usage(command, "unexpected argument '%s'", arg);
            o->file = arg;
            continue;
        }
        /* --name VALUE or --name=VALUE */
        char name[32];
        const char *value = NULL;
        const char *eq = strchr(arg, '=');
        size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
        if (n >= sizeof name)
            return bad_usage(command, "unknown option '%s'", arg);
        memcpy(name, arg, n);
        name[n] = '\0';
        int known = 0;
        for (int k = 0; allowed[k]; k++)
            known |= strcmp(allowed[k], name) == 0;
        if (!known)
            return bad_usage(command, "unknown option '%s'", name);
        if (strcmp(name, "--kernel") == 0) { /* an optional value: cuda (default) or c */
            const char *next = i + 1 < argc ? argv[i + 1] : NULL;
            if (eq)
                o->kernel = eq + 1;
            else if (next && (strcmp(next, "cuda") == 0 || strcmp(next, "c") == 0))
                o->kernel = argv[++i];
            else
                o->kernel = "cuda";
            if (strcmp(o->kernel, "cuda") != 0 && strcmp(o->kernel, "c") != 0)
                return bad_usage(command, "--kernel is cuda or c, got '%s'", o->kernel);
            continue;
        }
        if (strcmp(name, "--cost") == 0 || strcmp(name, "--profile") == 0) { /* no value */
            if (eq)
                return bad_usage(command, "%s takes no value", name);
            if (name[2] == 'c')
                o->cost = 1;
            else
                o->profile = 1;
            continue;
        }
        if (eq) {
            value = eq + 1;
        } else {
            if (i + 1 >= argc)
                return bad_usage(command, "option %s needs a value", name);
            value = argv[++i];
        }
        if (strcmp(name, "--graph") == 0) {
            o->graph = value;
        } else if (strcmp(name, "--blocks") == 0) {
            o->blocks = value;
        } else if (strcmp(name, "--floors") == 0) {
            o->floors = value;
        } else if (strcmp(name, "--in") == 0 || strcmp(name, "--out") == 0) {
            int is_in = name[2] == 'i';
            pair p;
            if (split_pair(value, &p) != 0)
                return bad_usage(command, is_in ? "--in wants NAME=VALUE, got '%s'"
                                                : "--out wants NAME=FILE.npy, got '%s'", value);
            pair **list = is_in ? &o->ins : &o->outs;
            int *count = is_in ? &o->nins : &o->nouts;
            pair *grown = realloc(*list, (size_t)(*count + 1) * sizeof *grown);
            if (!grown) {
                free((char *)p.name);
                fprintf(stderr, "cfx: out of memory\n");
                return 1;
            }
            grown[(*count)++] = p;
            *list = grown;
        } else if (strcmp(name, "--seed") == 0) {
            o->seed = value;
        } else if (strcmp(name, "--backend") == 0) {
            o->backend = value;
        } else if (strcmp(name, "--max-iters") == 0) {
            o->max_iters = value;
        } else if (strcmp(name, "--trace") == 0) {
            o->trace = value;
        } else if (strcmp(name, "--deadline") == 0) {
            o->deadline = value;
        } else if (strcmp(name, "--persistent-mode") == 0) {
            o->persistent_mode = value;
        } else if (strcmp(name, "-o") == 0 || strcmp(name, "--output") == 0) {
            o->output = value;
        } else if (strcmp(name, "--accumulate") == 0) {
            o->accumulate = value;
        } else if (strcmp(name, "--threads") == 0) {
            o->threads = value;
        }
    }
    return 0;
}

static void free_options(options *o)
{
    for (int i = 0; i < o->nins; i++)
        free((char *)o->ins[i].name);
    for (int i = 0; i < o->nouts; i++)
        free((char *)o->outs[i].name);
    free(o->ins);
    free(o->outs);
}

/* A non-negative decimal integer that fits in int64; -1 for text that is not one, -2 for one
 * above INT64_MAX. */
static int parse_count(const char *s, int64_t *out)
{
    int64_t v = 0;
    int big = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        if (v > (INT64_MAX - (*s - '0')) / 10)
            big = 1;
        else
            v = v * 10 + (*s - '0');
    }
    if (big)
        return -2;
    *out = v;
    return 0;
}

/* Parses --NAME's count into *out; 1 after saying what is wrong. */
static int count_option(const char *name, const char *text, int64_t *out)
{
    int rc = parse_count(text, out);
    if (rc == -2) {
        char cut[SHOWN_BYTES];
        fprintf(stderr, "cfx: %s is at most %lld, got '%s' (see cfx run --help)\n", name,
                (long long)INT64_MAX, shown(text, cut));
        return 1;
    }
    if (rc != 0) {
        char fmt[96];
        snprintf(fmt, sizeof fmt, "%s wants a non-negative integer, got '%%s'", name);
        return bad_usage("run", fmt, text);
    }
    return 0;
}

/* ---- compiling and listing -------------------------------------------------------------- */

/* 1 when diags begins as a compile error does, `FILE:LINE:`; what else cfx_compile_file says
 * (a file it cannot read) is a message of cfx's own, which carries its prefix. */
static int positioned(const char *diags, const char *file)
{
    size_t n = strlen(file);
    return strncmp(diags, file, n) == 0 && diags[n] == ':' && diags[n + 1] >= '0' &&
           diags[n + 1] <= '9';
}

/* 1 when FILE names an ONNX model (by its suffix), which is imported instead of compiled. */
static int is_onnx(const char *file)
{
    size_t n = strlen(file);
    return n > 5 && strcmp(file + n - 5, ".onnx") == 0;
}

/* The shapes of the .npy files among the --in values, which fix an ONNX model's symbolic
 * dimensions. NULL when there are none; a file that cannot be read is left to the run to report. */
static cfx_input_shape *npy_shapes(const options *o, int *n)
{
    cfx_input_shape *s = calloc((size_t)o->nins + 1, sizeof *s);
    *n = 0;
    for (int k = 0; s && k < o->nins; k++) {
        const char *v = o->ins[k].value;
        size_t len = strlen(v);
        if (len < 4 || strcmp(v + len - 4, ".npy") != 0)
            continue;
        FILE *f = fopen(v, "rb");
        if (!f)
            continue;
        unsigned char head[4096];
        size_t got = fread(head, 1, sizeof head, f);
        fclose(f);
        char err[256];
        if (npy_peek(head, got, &s[*n].type, err, sizeof err) != 0)
            continue;
        /* a small one may also give its value, where the model takes a shape from it */
        int64_t count = cfx_type_count(&s[*n].type);
        void *value = count <= 64 ? malloc((size_t)count * 8 + 1) : NULL;
        if (value && npy_read_file(v, &s[*n].type, value, err, sizeof err) == 0)
            s[*n].value = value;
        else
            free(value);
        s[(*n)++].name = o->ins[k].name;
    }
    return s;
}

static void free_shapes(cfx_input_shape *s, int n)
{
    for (int k = 0; s && k < n; k++)
        free((void *)s[k].value);
    free(s);
}

static cfx_module *compile_or_report(const char *file, const options *o)
{
    char *diags = NULL;
    cfx_module *m;
    if (is_onnx(file)) {
        int n = 0;
        cfx_input_shape *shapes = o ? npy_shapes(o, &n) : NULL;
        m = cfx_import_onnx(NULL, file, NULL, 0, shapes, n, &diags);
        free_shapes(shapes, n);
        if (!m && diags && strncmp(diags, file, strlen(file)) == 0 && diags[strlen(file)] == ':' &&
            !positioned(diags, file)) {
            fprintf(stderr, "cfx: %s", diags); /* the importer's own one line */
            cfx_free(diags);
            return NULL;
        }
    } else {
        m = cfx_compile_file(NULL, file, &diags);
    }
    if (!m) {
        if (!diags)
            fputs("cfx: compilation failed\n", stderr);
        else
            fprintf(stderr, "%s%s", positioned(diags, file) ? "" : "cfx: ", diags);
        cfx_free(diags);
    }
    return m;
}

/* Index of --graph NAME (or the entry graph); prints the known graphs when there is no such. */
static int find_graph(const cfx_module *m, const char *file, const char *name)
{
    int g = cfx_graph_find(m, name);
    if (g >= 0)
        return g;
    char cut[SHOWN_BYTES];
    fprintf(stderr, "cfx: %s has no graph '%s'; its graphs are:", file, shown(name ? name : "", cut));
    for (int i = 0; i < cfx_graph_count(m); i++)
        fprintf(stderr, " %s", cfx_graph_name(m, i));
    fprintf(stderr, "\n");
    return -1;
}

static void list_signature(FILE *f, const cfx_module *m, int g)
{
    char ty[CFX_TYPE_STR_MAX];
    fprintf(f, "graph %s\n", cfx_graph_name(m, g));
    fprintf(f, "  inputs:%s\n", cfx_input_count(m, g) ? "" : " none");
    for (int i = 0; i < cfx_input_count(m, g); i++) {
        cfx_type t = cfx_input_type(m, g, i);
        const char *def = cfx_input_default(m, g, i);
        fprintf(f, "    %s: %s%s%s\n", cfx_input_name(m, g, i), cfx_type_str(&t, ty, sizeof ty),
                def ? " = " : "", def ? def : "");
    }
    for (int i = 0; i < cfx_known_input_count(m, g); i++) {
        cfx_type t = cfx_known_input_type(m, g, i);
        fprintf(f, "    %s: %s (0 elements, known at import)\n", cfx_known_input_name(m, g, i),
                cfx_type_str(&t, ty, sizeof ty));
    }
    fprintf(f, "  results:%s\n", cfx_result_count(m, g) + cfx_known_result_count(m, g) ? "" : " none");
    for (int i = 0; i < cfx_result_count(m, g); i++) {
        cfx_type t = cfx_result_type(m, g, i);
        fprintf(f, "    %s: %s\n", cfx_result_name(m, g, i), cfx_type_str(&t, ty, sizeof ty));
    }
    for (int i = 0; i < cfx_known_result_count(m, g); i++) {
        cfx_type t = cfx_known_result_type(m, g, i);
        fprintf(f, "    %s: %s (0 elements, known at import)\n", cfx_known_result_name(m, g, i),
                cfx_type_str(&t, ty, sizeof ty));
    }
}

static int cmd_check(int argc, char **argv)
{
    static const char *const allowed[] = {NULL};
    options o = {0};
    int rc = parse_options("check", argc, argv, allowed, &o);
    if (rc == 0 && o.help) {
        fputs(check_usage_text, stdout);
    } else if (rc == 0 && !o.file) {
        rc = bad_usage("check", "%s", "check needs a FILE");
    } else if (rc == 0) {
        cfx_module *m = compile_or_report(o.file, &o);
        rc = m ? 0 : 1;
        cfx_module_free(m);
    }
    free_options(&o);
    return rc;
}

/* --floors GB,BB,BW,REC,MOP,PH into f; 0, or 1 after saying what is wrong. */
static int parse_floors(const char *text, cfx_floors *f)
{
    double v[6];
    int used = 0;
    if (sscanf(text, "%lf,%lf,%lf,%lf,%lf,%lf%n", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &used) != 6 ||
        text[used] != '\0')
        return bad_usage("dump", "--floors wants six numbers, GB,BB,BW,REC,MOP,PH, got '%s'", text);
    for (int i = 0; i < 6; i++)
        if (!(v[i] > 0) || v[i] > 1e12)
            return bad_usage("dump", "--floors wants six positive numbers, got '%s'", text);
    f->grid_barrier_us = v[0];
    f->block_barrier_us = v[1];
    f->bandwidth_gbs = v[2];
    f->record_us = v[3];
    f->microop_us = v[4];
    f->phase_us = v[5];
    return 0;
}

static int cmd_dump(int argc, char **argv)
{
    static const char *const allowed[] = {"--graph", "--cost", "--blocks", "--floors", "--kernel", NULL};
    cfx_floors floors, *fl = NULL;
    long blocks = 0;
    options o = {0};
    cfx_module *m = NULL;
    int rc = parse_options("dump", argc, argv, allowed, &o);
    if (rc != 0)
        goto done;
    if (o.help) {
        fputs(dump_usage_text, stdout);
        goto done;
    }
    if (!o.file) {
        rc = bad_usage("dump", "%s", "dump needs a FILE");
        goto done;
    }
    if (o.kernel && o.cost) {
        rc = bad_usage("dump", "%s", "--kernel and --cost print different things: give one");
        goto done;
    }
    if ((o.blocks || o.floors) && !o.cost) {
        rc = bad_usage("dump", "%s", o.blocks ? "--blocks goes with --cost" : "--floors goes with --cost");
        goto done;
    }
    if (o.blocks) {
        char *end = NULL;
        blocks = strtol(o.blocks, &end, 10);
        if (!*o.blocks || *end || blocks < 1 || blocks > 1000000) {
            rc = bad_usage("dump", "--blocks wants a count of blocks from 1 to 1000000, got '%s'", o.blocks);
            goto done;
        }
    }
    if (o.floors) {
        rc = parse_floors(o.floors, &floors);
        if (rc != 0)
            goto done;
        fl = &floors;
    }
    m = compile_or_report(o.file, &o);
    if (!m) {
        rc = 1;
        goto done;
    }
    int first = 0, last = cfx_graph_count(m) - 1;
    if (o.graph) {
        first = last = find_graph(m, o.file, o.graph);
        if (first < 0) {
            rc = 1;
            goto done;
        }
    }
    for (int g = first; g <= last; g++) {
        char why[600] = "out of memory";
        char *text = o.kernel ? cfx_dump_kernel(m, g, o.kernel, why, sizeof why)
                     : o.cost ? cfx_dump_cost(m, g, (int)blocks, fl)
                              : cfx_dump(m, g);
        if (!text) {
            fprintf(stderr, "cfx: %s: %s\n", o.file, why);
            rc = 1;
            goto done;
        }
        if (g > first)
            fputs("\n", stdout);
        fputs(text, stdout);
        cfx_free(text);
    }
done:
    cfx_module_free(m);
    free_options(&o);
    return rc;
}

/* ---- run -------------------------------------------------------------------------------- */

/* Ctrl-C during a run cancels it (cfx_cancel is an atomic store, safe in a handler), so the
 * run ends with status cancelled and exit 3; the handler is then reset, and a second Ctrl-C
 * ends the process as usual. An interrupt ignored by the parent (a background job) stays
 * ignored. */
static cfx_exec *volatile running;
static volatile sig_atomic_t deadline_passed;

static void on_interrupt(int sig)
{
    (void)sig;
    if (running)
        cfx_cancel(running);
}

static void on_deadline(int sig)
{
    (void)sig;
    deadline_passed = 1;
    if (running)
        cfx_cancel(running);
}

static volatile sig_atomic_t hint_loops; /* the graph has loops: --max-iters can act */

static void on_alarm(int sig)
{
    static const char hint[] = "cfx: the run has gone on for 5 s; Ctrl-C cancels it, and "
                               "--max-iters N bounds its loop iterations\n";
    static const char no_loops[] = "cfx: the run has gone on for 5 s; Ctrl-C cancels it, and "
                                   "--deadline SECONDS bounds its time\n";
    (void)sig;
    ssize_t rc = hint_loops ? write(2, hint, sizeof hint - 1) : write(2, no_loops, sizeof no_loops - 1);
    (void)rc;
}
_Static_assert(RUN_HINT_SECONDS == 5, "the hint's text says 5 s");

/* Whether graph g has a loop (a TICK record in its listing): the hint offers --max-iters only
 * then, since a budget of iterations cannot stop a graph without one. */
static int has_loops(const cfx_module *m, int g)
{
    char *listing = cfx_dump(m, g);
    int loops = !listing || strstr(listing, "  TICK") != NULL;
    cfx_free(listing);
    return loops;
}

/* Runs e with Ctrl-C cancelling it and either a deadline (seconds > 0), after which it is
 * cancelled too, or, when the run has no budget, the hint after RUN_HINT_SECONDS. Both use
 * SIGALRM, so a deadline replaces the hint. */
static cfx_status run_interruptible(cfx_exec *e, int hint, double deadline)
{
    struct sigaction on_int, old_int, on_alrm, old_alrm;
    memset(&on_int, 0, sizeof on_int);
    on_int.sa_handler = on_interrupt;
    on_int.sa_flags = SA_RESETHAND | SA_RESTART;
    sigemptyset(&on_int.sa_mask);
    memset(&on_alrm, 0, sizeof on_alrm);
    on_alrm.sa_handler = deadline > 0 ? on_deadline : on_alarm;
    on_alrm.sa_flags = SA_RESETHAND | SA_RESTART;
    sigemptyset(&on_alrm.sa_mask);
    running = e;
    int have_int = sigaction(SIGINT, NULL, &old_int) == 0 && old_int.sa_handler != SIG_IGN &&
                   sigaction(SIGINT, &on_int, NULL) == 0;
    int have_alrm = (hint || deadline > 0) && sigaction(SIGALRM, &on_alrm, &old_alrm) == 0;
    struct itimerval timer, off;
    memset(&timer, 0, sizeof timer);
    memset(&off, 0, sizeof off);
    timer.it_value.tv_sec = deadline > 0 ? (time_t)deadline : RUN_HINT_SECONDS;
    timer.it_value.tv_usec = deadline > 0 ? (suseconds_t)((deadline - (double)(time_t)deadline) * 1e6) : 0;
    if (timer.it_value.tv_sec == 0 && timer.it_value.tv_usec == 0)
        timer.it_value.tv_usec = 1;
    deadline_passed = 0;
    if (have_alrm)
        setitimer(ITIMER_REAL, &timer, NULL);
    cfx_status st = cfx_run(e);
    if (have_alrm) {
        setitimer(ITIMER_REAL, &off, NULL);
        sigaction(SIGALRM, &old_alrm, NULL);
    }
    if (have_int)
        sigaction(SIGINT, &old_int, NULL);
    running = NULL;
    return st;
}

/* Where a cancelled run stood (Ctrl-C or --deadline): the
 * statement it was at and the loop iterations it had run, and on cuda-persistent each block's
 * position and the grid barriers blocks waited at. */
static void report_cancel(cfx_exec *e, const char *file)
{
    int line, col;
    cfx_exec_position(e, &line, &col);
    if (line > 0)
        fprintf(stderr, "cfx: the run stood at %s:%d:%d after %lld loop iterations\n", file, line, col,
                (long long)cfx_exec_iterations(e));
    else
        fprintf(stderr, "cfx: the run was cancelled after %lld loop iterations\n",
                (long long)cfx_exec_iterations(e));
    /* cuda-persistent's interpreter: where each block stood, and who waited at which barrier */
    const char *hang = cfx_exec_hang_report(e);
    if (hang[0])
        fprintf(stderr, "cfx: where each block stood when the run was cancelled:\n%s", hang);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static size_t type_bytes(const cfx_type *t)
{
    return (size_t)cfx_type_count(t) * (size_t)cfx_dtype_size(t->dtype);
}

/* An input of an imported model that has 0 elements is known at import (its .npy file gave
 * its type there) and no parameter: -1 when `name` is none such; else 0 when `value` is a .npy
 * file of exactly that dtype and shape, 1 (said on stderr) when it is not. */
static int known_input(const cfx_module *m, int g, const char *name, const char *value)
{
    char ty[CFX_TYPE_STR_MAX], ty2[CFX_TYPE_STR_MAX], err[256], cut[SHOWN_BYTES];
    for (int i = 0; i < cfx_known_input_count(m, g); i++) {
        if (strcmp(cfx_known_input_name(m, g, i), name) != 0)
            continue;
        cfx_type want = cfx_known_input_type(m, g, i), got;
        unsigned char head[4096];
        size_t n = 0;
        FILE *f = ends_with(value, ".npy") ? fopen(value, "rb") : NULL;
        if (f) {
            n = fread(head, 1, sizeof head, f);
            fclose(f);
        }
        if (!f || npy_peek(head, n, &got, err, sizeof err) != 0) {
            fprintf(stderr, "cfx: --in %s=%s: the input is %s, 0 elements, known when the model was imported: "
                    "give it as that .npy file\n", name, shown(value, cut), cfx_type_str(&want, ty, sizeof ty));
            return 1;
        }
        if (got.dtype != want.dtype || got.rank != want.rank ||
            memcmp(got.dims, want.dims, (size_t)want.rank * sizeof *want.dims) != 0) {
            fprintf(stderr, "cfx: --in %s=%s: the file is %s; the input was imported as %s\n", name,
                    shown(value, cut), cfx_type_str(&got, ty, sizeof ty), cfx_type_str(&want, ty2, sizeof ty2));
            return 1;
        }
        return 0;
    }
    return -1;
}

static int cmd_run(int argc, char **argv)
{
    static const char *const allowed[] = {"--graph",     "--in",        "--out",     "--seed",
                                          "--backend",   "--persistent-mode", "--max-iters",
                                          "--trace",     "--profile",   "--deadline", "--accumulate",
                                          "--threads",   NULL};
    options o = {0};
    cfx_module *m = NULL;
    cfx_exec *e = NULL;
    void **inbuf = NULL, **resbuf = NULL;
    const char **invalue = NULL, **outpath = NULL, **kpath = NULL;
    int nin = 0, nres = 0, nkres = 0;
    char err[1024], ty[CFX_TYPE_STR_MAX], cut[SHOWN_BYTES];

    int rc = parse_options("run", argc, argv, allowed, &o);
    if (rc != 0)
        goto done;
    rc = 1;
    if (o.help && !o.file) {
        fputs(run_usage_text, stdout);
        rc = 0;
        goto done;
    }
    if (!o.file) {
        rc = bad_usage("run", "%s", "run needs a FILE");
        goto done;
    }

    /* check the options that need no compiling first, so a typo is reported at once */
    uint64_t seed = 0;
    if (o.seed) {
        int64_t s;
        if ((rc = count_option("--seed", o.seed, &s)) != 0)
            goto done;
        seed = (uint64_t)s;
    }
    int64_t max_iters = 0;
    if (o.max_iters && (rc = count_option("--max-iters", o.max_iters, &max_iters)) != 0)
        goto done;
    double deadline = 0;
    if (o.deadline) {
        char *end;
        deadline = strtod(o.deadline, &end);
        if (end == o.deadline || *end || !(deadline > 0 && deadline <= 1e6)) {
            rc = bad_usage("run", "--deadline wants seconds, a number above 0 and at most 1e6, got '%s'",
                           o.deadline);
            goto done;
        }
    }
    rc = 1;
    cfx_backend backend = CFX_BACKEND_AUTO;
    if (o.backend && cfx_backend_parse(o.backend, &backend) != 0) {
        fprintf(stderr, "cfx: unknown backend '%s' (", shown(o.backend, cut));
        for (int i = 0; i < EXEC_NBACKENDS; i++)
            fprintf(stderr, "%s%s", i ? ", " : "", exec_backends[i].name);
        fputs(")\n", stderr);
        goto done;
    }
    cfx_persistent_mode mode = CFX_PERSISTENT_COMPILED;
    if (o.persistent_mode) {
        if (strcmp(o.persistent_mode, "interp") == 0) {
            mode = CFX_PERSISTENT_INTERP;
        } else if (strcmp(o.persistent_mode, "compiled") != 0) {
            rc = bad_usage("run", "--persistent-mode wants compiled or interp, got '%s'",
                           o.persistent_mode);
            goto done;
        }
        if (backend != CFX_BACKEND_AUTO && backend != CFX_BACKEND_CUDA_PERSISTENT) {
            rc = bad_usage("run",
                           "--persistent-mode applies to the cuda-persistent backend, not %s",
                           cfx_backend_name(backend));
            goto done;
        }
    }

    int accumulate = -1;
    if (o.accumulate) {
        if (strcmp(o.accumulate, "fast") == 0) {
            accumulate = CFX_ACCUMULATE_FAST;
        } else if (strcmp(o.accumulate, "f64") == 0) {
            accumulate = CFX_ACCUMULATE_F64;
        } else {
            rc = bad_usage("run", "--accumulate wants fast or f64, got '%s'", o.accumulate);
            goto done;
        }
        if (backend != CFX_BACKEND_AUTO && backend != CFX_BACKEND_CPU) {
            rc = bad_usage("run", "--accumulate applies to the cpu backend, not %s",
                           cfx_backend_name(backend));
            goto done;
        }
    }

    int64_t threads = 0;
    if (o.threads) {
        if (parse_count(o.threads, &threads) != 0 || threads < 1 || threads > 256) {
            rc = bad_usage("run", "--threads wants a count from 1 to 256, got '%s'", o.threads);
            goto done;
        }
        if (backend != CFX_BACKEND_AUTO && backend != CFX_BACKEND_CPU) {
            rc = bad_usage("run", "--threads applies to the cpu backend, not %s",
                           cfx_backend_name(backend));
            goto done;
        }
    }

    m = compile_or_report(o.file, &o);
    if (!m)
        goto done;
    int g = find_graph(m, o.file, o.graph);
    if (g < 0)
        goto done;
    if (o.help) {
        fputs(run_usage_text, stdout);
        fputs("\n", stdout);
        list_signature(stdout, m, g);
        rc = 0;
        goto done;
    }

    /* inputs: each --in names an input, once */
    nin = cfx_input_count(m, g);
    nres = cfx_result_count(m, g);
    nkres = cfx_known_result_count(m, g);
    kpath = calloc((size_t)nkres + 1, sizeof *kpath);
    inbuf = calloc((size_t)nin + 1, sizeof *inbuf);
    invalue = calloc((size_t)nin + 1, sizeof *invalue);
    resbuf = calloc((size_t)nres + 1, sizeof *resbuf);
    outpath = calloc((size_t)nres + 1, sizeof *outpath);
    if (!inbuf || !invalue || !resbuf || !outpath || !kpath) {
        fprintf(stderr, "cfx: out of memory\n");
        goto done;
    }
    for (int k = 0; k < o.nins; k++) {
        int i = 0;
        while (i < nin && strcmp(cfx_input_name(m, g, i), o.ins[k].name) != 0)
            i++;
        int known = i == nin ? known_input(m, g, o.ins[k].name, o.ins[k].value) : -1;
        if (known > 0)
            goto done;
        if (known == 0)
            continue; /* of 0 elements, known at import: its file's type checked, nothing bound */
        if (i == nin) {
            fprintf(stderr, "cfx: graph '%s' has no input '%s'\n", cfx_graph_name(m, g),
                    shown(o.ins[k].name, cut));
            list_signature(stderr, m, g);
            goto done;
        }
        if (invalue[i]) {
            fprintf(stderr, "cfx: input '%s' is given twice\n", shown(o.ins[k].name, cut));
            goto done;
        }
        invalue[i] = o.ins[k].value;
    }
    /* an input with a default may be left out: the library gives it its default */
    int missing = 0;
    for (int i = 0; i < nin; i++)
        missing += invalue[i] == NULL && !cfx_input_default(m, g, i);
    if (missing) {
        fprintf(stderr, "cfx: missing input%s:", missing > 1 ? "s" : "");
        for (int i = 0; i < nin; i++)
            if (!invalue[i] && !cfx_input_default(m, g, i))
                fprintf(stderr, " %s", cfx_input_name(m, g, i));
        fprintf(stderr, "; graph '%s' takes, each as --in NAME=VALUE:\n", cfx_graph_name(m, g));
        for (int i = 0; i < nin; i++) {
            cfx_type t = cfx_input_type(m, g, i);
            const char *def = cfx_input_default(m, g, i);
            fprintf(stderr, "  %s: %s%s%s\n", cfx_input_name(m, g, i), cfx_type_str(&t, ty, sizeof ty),
                    def ? " = " : "", def ? def : "");
        }
        goto done;
    }
    /* values, in declaration order, so `random` inputs do not depend on the order of --in */
    uint64_t state = seed;
    for (int i = 0; i < nin; i++) {
        cfx_type t = cfx_input_type(m, g, i);
        const char *name = cfx_input_name(m, g, i);
        if (!invalue[i])
            continue; /* left out: its default */
        inbuf[i] = malloc(type_bytes(&t) ? type_bytes(&t) : 1);
        if (!inbuf[i]) {
            fprintf(stderr, "cfx: out of memory for input '%s' (%s)\n", name,
                    cfx_type_str(&t, ty, sizeof ty));
            goto done;
        }
        if (strcmp(invalue[i], "random") == 0) {
            value_random(&t, &state, inbuf[i]);
        } else if (ends_with(invalue[i], ".npy")) {
            if (npy_read_file(invalue[i], &t, inbuf[i], err, sizeof err) != 0) {
                fprintf(stderr, "cfx: --in %s: %s\n", name, err); /* err names the file, cut */
                goto done;
            }
        } else if (value_parse(invalue[i], &t, inbuf[i], err, sizeof err) != 0) {
            fprintf(stderr, "cfx: --in %s=%s: %s (the input is %s)\n", name,
                    shown(invalue[i], cut), err, cfx_type_str(&t, ty, sizeof ty));
            goto done;
        }
    }

    /* results: each --out names a result, once */
    for (int k = 0; k < o.nouts; k++) {
        int i = 0;
        while (i < nres && strcmp(cfx_result_name(m, g, i), o.outs[k].name) != 0)
            i++;
        int kr = 0; /* or a result of 0 elements known at import, written below */
        while (i == nres && kr < nkres && strcmp(cfx_known_result_name(m, g, kr), o.outs[k].name) != 0)
            kr++;
        if (i == nres && kr < nkres) {
            if (!o.outs[k].value[0] || kpath[kr]) {
                fprintf(stderr, "cfx: --out %s%s\n", o.outs[k].name, kpath[kr] ? " is given twice" : "= needs a file name");
                goto done;
            }
            kpath[kr] = o.outs[k].value;
            continue;
        }
        if (i == nres) {
            fprintf(stderr, "cfx: graph '%s' has no result '%s'\n", cfx_graph_name(m, g),
                    shown(o.outs[k].name, cut));
            list_signature(stderr, m, g);
            goto done;
        }
        if (outpath[i]) {
            fprintf(stderr, "cfx: result '%s' is given to --out twice\n", shown(o.outs[k].name, cut));
            goto done;
        }
        if (!o.outs[k].value[0]) {
            fprintf(stderr, "cfx: --out %s= needs a file name\n", o.outs[k].name);
            goto done;
        }
        outpath[i] = o.outs[k].value;
    }
    for (int i = 0; i < nres; i++) {
        cfx_type t = cfx_result_type(m, g, i);
        resbuf[i] = calloc(1, type_bytes(&t) ? type_bytes(&t) : 1);
        if (!resbuf[i]) {
            fprintf(stderr, "cfx: out of memory for result '%s'\n", cfx_result_name(m, g, i));
            goto done;
        }
    }

    char *why = NULL;
    e = cfx_exec_new(m, g, backend, &why);
    if (!e) {
        fprintf(stderr, "cfx: %s\n", why ? why : "cannot create the executor");
        cfx_free(why);
        goto done;
    }
    if (accumulate >= 0 && cfx_exec_backend(e) == CFX_BACKEND_CPU &&
        cfx_set_option(e, CFX_OPTION_ACCUMULATE, accumulate) != 0) {
        fprintf(stderr, "cfx: --accumulate: %s\n", cfx_exec_error(e));
        goto done;
    }
    if (threads > 0 && cfx_exec_backend(e) == CFX_BACKEND_CPU &&
        cfx_set_option(e, CFX_OPTION_THREADS, threads) != 0) {
        fprintf(stderr, "cfx: --threads: %s\n", cfx_exec_error(e));
        goto done;
    }
    /* cuda-persistent: the mode, whose kernel is built now (or found in the cache) */
    if (cfx_exec_backend(e) == CFX_BACKEND_CUDA_PERSISTENT) {
        cfx_set_persistent_mode(e, mode);
    }
    /* --backend auto says which backend it picked; with cuda-persistent, picked or named, the
     * line also says which path it took (after the run: the path may be settled only then) */
    int say_path =
        (o.backend || o.persistent_mode) && cfx_exec_backend(e) == CFX_BACKEND_CUDA_PERSISTENT;
    if (o.backend && backend == CFX_BACKEND_AUTO && cfx_exec_backend(e) == CFX_BACKEND_CPU) {
        char reason[256] = "";
        cfx_backend_available(CFX_BACKEND_CUDA_PERSISTENT, reason, sizeof reason);
        fprintf(stderr, "cfx: backend cpu (%s)\n", reason[0] ? reason : "auto");
    }
    for (int i = 0; i < nin; i++) {
        cfx_type t = cfx_input_type(m, g, i);
        if (inbuf[i] && cfx_bind(e, cfx_input_name(m, g, i), inbuf[i], type_bytes(&t)) != 0) {
            fprintf(stderr, "cfx: %s\n", cfx_exec_error(e));
            goto done;
        }
    }
    for (int i = 0; i < nres; i++) {
        cfx_type t = cfx_result_type(m, g, i);
        if (cfx_bind(e, cfx_result_name(m, g, i), resbuf[i], type_bytes(&t)) != 0) {
            fprintf(stderr, "cfx: %s\n", cfx_exec_error(e));
            goto done;
        }
    }
    cfx_set_max_iters(e, max_iters);
    if (o.trace && cfx_set_trace(e, o.trace) != 0) {
        fprintf(stderr, "cfx: %s\n", cfx_exec_error(e));
        goto done;
    }

    if (o.profile && cfx_set_profile(e, 1) != 0) {
        fprintf(stderr, "cfx: --profile: %s\n", cfx_exec_error(e));
        goto done;
    }

    hint_loops = has_loops(m, g);
    cfx_status st = run_interruptible(e, max_iters == 0, deadline);
    if (st == CFX_OK && deadline_passed) {
        /* the deadline passed and the run ended before it could be stopped (between two
         * checks of the cancel flag): the deadline holds, and the results are not printed */
        fprintf(stderr, "%s: run stopped: cancelled: the deadline of %s s passed before the run "
                        "ended\n", o.file, o.deadline);
        rc = EXIT_STOPPED;
        goto done;
    }
    fflush(stdout); /* the graph's prints come before the status line and the results */
    if (say_path)
        fprintf(stderr, "cfx: backend cuda-persistent (%s)\n", cfx_exec_backend_detail(e));
    if (st == CFX_ERROR) {
        fprintf(stderr, "cfx: %s\n", cfx_exec_message(e)[0] ? cfx_exec_message(e) : cfx_exec_error(e));
        goto done;
    }
    if (o.profile) {
        char *text = cfx_profile_text(e);
        int bad = text && (fputs(text, stderr) == EOF || fflush(stderr) != 0);
        cfx_free(text);
        if (bad) /* a full disk, a closed stderr: the profile asked for is lost, so exit 1 */
            goto done;
    }
    if (st != CFX_OK) {
        const char *msg = cfx_exec_message(e), *by = strstr(msg, "cancelled by the caller");
        if (st == CFX_STOP_CANCELLED && deadline_passed && by) /* the caller is --deadline */
            fprintf(stderr, "%.*sthe deadline of %s s passed%s\n", (int)(by - msg), msg, o.deadline,
                    by + strlen("cancelled by the caller"));
        else
            fprintf(stderr, "%s\n", msg);
        if (st == CFX_STOP_CANCELLED)
            report_cancel(e, o.file);
        rc = EXIT_STOPPED;
        goto done;
    }
    for (int i = 0; i < nres; i++) {
        cfx_type t = cfx_result_type(m, g, i);
        if (outpath[i]) {
            if (npy_write_file(outpath[i], &t, resbuf[i], err, sizeof err) != 0) {
                fprintf(stderr, "cfx: --out %s: %s\n", cfx_result_name(m, g, i), err);
                goto done;
            }
            continue;
        }
        strbuf line = {0};
        sb_printf(&line, "%s = ", cfx_result_name(m, g, i));
        value_format(&line, &t, resbuf[i]);
        if (line.oom) {
            fprintf(stderr, "cfx: out of memory printing '%s'\n", cfx_result_name(m, g, i));
            sb_free(&line);
            goto done;
        }
        puts(sb_str(&line));
        sb_free(&line);
    }
    for (int i = 0; i < nkres; i++) { /* the results of 0 elements, known at import */
        cfx_type t = cfx_known_result_type(m, g, i);
        char none = 0;
        if (kpath[i] && npy_write_file(kpath[i], &t, &none, err, sizeof err) != 0) {
            fprintf(stderr, "cfx: --out %s: %s\n", cfx_known_result_name(m, g, i), err);
            goto done;
        }
        if (!kpath[i])
            printf("%s = [] (%s)\n", cfx_known_result_name(m, g, i), cfx_type_str(&t, ty, sizeof ty));
    }
    rc = 0;
done:
    cfx_exec_free(e);
    for (int i = 0; inbuf && i < nin; i++)
        free(inbuf[i]);
    for (int i = 0; resbuf && i < nres; i++)
        free(resbuf[i]);
    free(inbuf);
    free(resbuf);
    free(invalue);
    free(outpath);
    free(kpath);
    cfx_module_free(m);
    free_options(&o);
    return rc;
}

/* The version and whether the CUDA executors were built, from what was compiled in: nothing is
 * loaded (the CUDA runtime alone costs a quarter of a second and 200 MB). */
static void print_version(void)
{
    printf("cfx %d.%d (language version %d)\n", CFX_VERSION_MAJOR, CFX_VERSION_MINOR, CFX_LANGUAGE_VERSION);
    printf("CUDA executors: %s\n", dev_module_built() ? "built (`cfx backends` says whether they "
                                                         "load and find a device here)"
                                                       : "not built (cfx was built without CUDA)");
    const char *blas = cpu_blas_built();
    if (blas)
        printf("cpu BLAS: %s, found at configure (opened at the first product; `cfx backends` says "
               "which kernels it runs)\n", blas);
    else
        printf("cpu BLAS: none (built without one: products run cfx's own blocked kernels)\n");
}

/* `cfx backends`: whether the CUDA executors were built and load here and, when they do, what
 * each backend says about this machine. Loads the CUDA executors where they were built. */
static int cmd_backends(int argc, char **argv)
{
    static const char *const allowed[] = {NULL};
    options o = {0};
    int rc = parse_options("backends", argc, argv, allowed, &o);
    if (rc == 0 && o.file)
        rc = bad_usage("backends", "unexpected argument '%s'", o.file);
    if (rc == 0 && o.help)
        fputs("usage: cfx backends\n\nSays whether the CUDA executors were built, where they load "
              "from (or why they cannot),\nand whether each backend can run here (or why not). "
              "Loads the CUDA executors.\n", stdout);
    if (rc != 0 || o.help) {
        free_options(&o);
        return rc;
    }
    char line[640];
    printf("cfx %d.%d (language version %d)\n", CFX_VERSION_MAJOR, CFX_VERSION_MINOR, CFX_LANGUAGE_VERSION);
    int loaded = dev_module_describe(line, sizeof line);
    printf("CUDA executors: %s\n", line);
    /* every backend of the table but AUTO, which picks one of them */
    for (int i = 0; i < EXEC_NBACKENDS; i++) {
        const exec_backend *b = &exec_backends[i];
        if (!b->ops)
            continue;
        int ok = (!b->device || loaded > 0) && cfx_backend_available((cfx_backend)i, line, sizeof line);
        if (b->device && loaded <= 0)
            snprintf(line, sizeof line, "%s", loaded == 0 ? "not built" : "cannot be loaded (above)");
        printf("  %-16s %s\n", b->name, ok ? "available" : line);
    }
    cpu_blas_describe(line, sizeof line);
    printf("cpu BLAS: %s\n", line);
    free_options(&o);
    return 0;
}

static int cmd_import(int argc, char **argv)
{
    static const char *const allowed[] = {"-o", "--output", "--in", NULL};
    options o = {0};
    char *diags = NULL, *text = NULL, *dir = NULL, *dir_text = NULL;
    int rc = parse_options("import", argc, argv, allowed, &o);
    if (rc != 0)
        goto done;
    rc = 1;
    if (o.help) {
        fputs(import_usage_text, stdout);
        rc = 0;
        goto done;
    }
    if (!o.file) {
        rc = bad_usage("import", "%s", "import needs a MODEL.onnx");
        goto done;
    }
    if (o.output) {
        /* FILE.cfx's constants go to FILE_data/ beside it, named relative to FILE's folder */
        const char *base = strrchr(o.output, '/');
        base = base ? base + 1 : o.output;
        size_t stem = strlen(base);
        if (stem > 4 && strcmp(base + stem - 4, ".cfx") == 0)
            stem -= 4;
        size_t n = strlen(o.output) + 8;
        dir = malloc(n);
        dir_text = malloc(stem + 8);
        if (!dir || !dir_text) {
            fprintf(stderr, "cfx: out of memory\n");
            goto done;
        }
        snprintf(dir, n, "%.*s%.*s_data", (int)(base - o.output), o.output, (int)stem, base);
        snprintf(dir_text, stem + 8, "%.*s_data", (int)stem, base);
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "cfx: cannot make the folder %s: %s\n", dir, strerror(errno));
            goto done;
        }
    }
    int nshapes = 0;
    cfx_input_shape *shapes = npy_shapes(&o, &nshapes);
    text = cfx_import_onnx_source(o.file, NULL, 0, shapes, nshapes, dir, dir_text, &diags);
    free_shapes(shapes, nshapes);
    if (!text) {
        fprintf(stderr, "cfx: %s", diags ? diags : "the import failed\n");
        goto done;
    }
    if (o.output) {
        FILE *f = fopen(o.output, "w");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
            fprintf(stderr, "cfx: cannot write %s: %s\n", o.output, strerror(errno));
            goto done;
        }
        rmdir(dir); /* gone again when no constant needed it */
    } else {
        fputs(text, stdout);
    }
    rc = 0;
done:
    cfx_free(diags);
    cfx_free(text);
    free(dir);
    free(dir_text);
    free_options(&o);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_text, stderr);
        return 1;
    }
    const char *cmd = argv[1];
    int rc = 0;
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage_text, stdout);
    } else if (strcmp(cmd, "--version") == 0) {
        print_version();
    } else if (strcmp(cmd, "run") == 0) {
        rc = cmd_run(argc - 2, argv + 2);
    } else if (strcmp(cmd, "check") == 0) {
        rc = cmd_check(argc - 2, argv + 2);
    } else if (strcmp(cmd, "dump") == 0) {
        rc = cmd_dump(argc - 2, argv + 2);
    } else if (strcmp(cmd, "backends") == 0) {
        rc = cmd_backends(argc - 2, argv + 2);
    } else if (strcmp(cmd, "import") == 0) {
        rc = cmd_import(argc - 2, argv + 2);
    } else {
        char cut[SHOWN_BYTES];
        fprintf(stderr, "cfx: unknown command '%s' (run, check, dump, import, backends; see cfx --help)\n",
                shown(cmd, cut));
        rc = 1;
    }
    /* Every path ends here: output cut short (a full disk, a file size limit, a closed pipe
     * with SIGPIPE ignored) is an error. A write that failed earlier leaves the stream's error
     * flag set, and an empty buffer then flushes without complaint: both are asked. */
    errno = 0;
    int flushed = fflush(stdout) == 0, why = errno;
    if (!flushed || ferror(stdout)) {
        if (flushed) { /* the failed write's errno is gone: a newline asks the file again */
            clearerr(stdout);
            fputc('\n', stdout);
            why = fflush(stdout) != 0 ? errno : 0;
        }
        fprintf(stderr, "cfx: cannot write the output: %s\n",
                why ? strerror(why) : "a write to standard output failed");
        if (rc == 0)
            rc = 1;
    }
    return rc;
}
