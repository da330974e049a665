/* test_onnx: the ONNX importer through the C API, on models built here with protobuf-c (no
 * Python, no onnx package): If, Loop, ONNX's integer semantics, names that are not identifiers,
 * symbolic dimensions, and hostile input (garbage, every truncation of a model, an unknown op,
 * external data outside the model's folder). Expected values are worked out by hand in the
 * comments. Exits 77 where the build has no importer. */
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "testutil.h"

#ifndef CFX_HAVE_ONNX
int main(void)
{
    if (cfx_onnx_available()) {
        fprintf(stderr, "test_onnx: the library has the importer but this test was built without it\n");
        return 1;
    }
    printf("test_onnx: skipped (built without protobuf-c)\n");
    return 77;
}
#else

#include "onnx.pb-c.h"

static int failures;

#undef CHECK
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* ---- building models: every allocation on one list, freed at the end ---- */

static void **arena;
static size_t narena;

static void *keep(void *p)
{
    arena = realloc(arena, (narena + 1) * sizeof *arena);
    arena[narena++] = p;
    return p;
}

static void *tcalloc(size_t n, size_t size)
{
    return keep(calloc(n ? n : 1, size));
}

static void free_arena(void)
{
    for (size_t i = 0; i < narena; i++)
        free(arena[i]);
    free(arena);
}

static char **strs(int n, ...)
{
    char **v = tcalloc((size_t)n + 1, sizeof *v);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        v[i] = va_arg(ap, char *);
    va_end(ap);
    return v;
}

static Onnx__NodeProto *node(const char *op, const char *name, int nin, char **in, int nout, char **out)
{
    Onnx__NodeProto *n = tcalloc(1, sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = (char *)op;
    n->name = (char *)name;
    n->n_input = (size_t)nin;
    n->input = in;
    n->n_output = (size_t)nout;
    n->output = out;
    return n;
}

static void add_attr(Onnx__NodeProto *n, Onnx__AttributeProto *a)
{
    Onnx__AttributeProto **grown = tcalloc(n->n_attribute + 1, sizeof *grown);
    if (n->n_attribute)
        memcpy(grown, n->attribute, n->n_attribute * sizeof *grown);
    grown[n->n_attribute++] = a;
    n->attribute = grown;
}

static Onnx__AttributeProto *attr_new(const char *name, Onnx__AttributeProto__AttributeType type)
{
    Onnx__AttributeProto *a = tcalloc(1, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1;
    a->type = type;
    return a;
}

static void attr_int(Onnx__NodeProto *n, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = attr_new(name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = v;
    add_attr(n, a);
}

static void attr_graph(Onnx__NodeProto *n, const char *name, Onnx__GraphProto *g)
{
    Onnx__AttributeProto *a = attr_new(name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    a->g = g;
    add_attr(n, a);
}

/* a tensor of n float32 values (dims: rank r) */
static Onnx__TensorProto *tensor_f(const char *name, int r, const int64_t *dims, int n, const float *v)
{
    Onnx__TensorProto *t = tcalloc(1, sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = (char *)name;
    t->has_data_type = 1;
    t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    t->n_dims = (size_t)r;
    t->dims = (int64_t *)dims;
    t->n_float_data = (size_t)n;
    t->float_data = (float *)v;
    return t;
}

static Onnx__TensorProto *tensor_i64(const char *name, int64_t v)
{
    Onnx__TensorProto *t = tcalloc(1, sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = (char *)name;
    t->has_data_type = 1;
    t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    t->n_int64_data = 1;
    t->int64_data = tcalloc(1, sizeof(int64_t));
    t->int64_data[0] = v;
    return t;
}

static Onnx__NodeProto *constant(const char *out, Onnx__TensorProto *t)
{
    Onnx__NodeProto *n = node("Constant", out, 0, NULL, 1, strs(1, out));
    Onnx__AttributeProto *a = attr_new("value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
    a->t = t;
    add_attr(n, a);
    return n;
}

/* a tensor value_info; dims < 0 is a symbolic dimension named "N" */
static Onnx__ValueInfoProto *vinfo(const char *name, int elem, int r, const int64_t *dims)
{
    Onnx__ValueInfoProto *v = tcalloc(1, sizeof *v);
    onnx__value_info_proto__init(v);
    v->name = (char *)name;
    Onnx__TypeProto *tp = tcalloc(1, sizeof *tp);
    onnx__type_proto__init(tp);
    Onnx__TypeProto__Tensor *tt = tcalloc(1, sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = elem;
    Onnx__TensorShapeProto *sh = tcalloc(1, sizeof *sh);
    onnx__tensor_shape_proto__init(sh);
    sh->n_dim = (size_t)r;
    sh->dim = tcalloc((size_t)r + 1, sizeof *sh->dim);
    for (int d = 0; d < r; d++) {
        Onnx__TensorShapeProto__Dimension *dim = tcalloc(1, sizeof *dim);
        onnx__tensor_shape_proto__dimension__init(dim);
        if (dims[d] >= 0) {
            dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            dim->dim_value = dims[d];
        } else {
            dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            dim->dim_param = "N";
        }
        sh->dim[d] = dim;
    }
    tt->shape = sh;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    v->type = tp;
    return v;
}

static Onnx__GraphProto *graph(const char *name, int nn, Onnx__NodeProto **nodes, int nin,
                               Onnx__ValueInfoProto **in, int nout, Onnx__ValueInfoProto **out)
{
    Onnx__GraphProto *g = tcalloc(1, sizeof *g);
    onnx__graph_proto__init(g);
    g->name = (char *)name;
    g->n_node = (size_t)nn;
    g->node = nodes;
    g->n_input = (size_t)nin;
    g->input = in;
    g->n_output = (size_t)nout;
    g->output = out;
    return g;
}

/* The packed model of graph g at opset 18; *len its size (free the result). */
static uint8_t *pack(Onnx__GraphProto *g, size_t *len)
{
    Onnx__ModelProto m;
    onnx__model_proto__init(&m);
    m.has_ir_version = 1;
    m.ir_version = 8;
    Onnx__OperatorSetIdProto os;
    onnx__operator_set_id_proto__init(&os);
    os.domain = "";
    os.has_version = 1;
    os.version = 18; /* Split's num_outputs */
    Onnx__OperatorSetIdProto *ops[] = {&os};
    m.n_opset_import = 1;
    m.opset_import = ops;
    m.graph = g;
    *len = onnx__model_proto__get_packed_size(&m);
    uint8_t *buf = malloc(*len);
    onnx__model_proto__pack(&m, buf);
    return buf;
}

#define F ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define I32 ONNX__TENSOR_PROTO__DATA_TYPE__INT32
#define I64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64

static const int64_t d3[] = {3};

/* z = x + y if sum(x) > 0 else x - y; the branches read x and y from the graph around them */
static Onnx__GraphProto *if_model(const char *xname)
{
    static const float zero = 0;
    /* the graph outlives this function: its arrays too */
    static Onnx__NodeProto *then_n[1], *else_n[1];
    static Onnx__ValueInfoProto *t_out[1], *e_out[1];
    then_n[0] = node("Add", "add", 2, strs(2, xname, "y"), 1, strs(1, "t_out"));
    else_n[0] = node("Sub", "sub", 2, strs(2, xname, "y"), 1, strs(1, "e_out"));
    t_out[0] = vinfo("t_out", F, 1, d3);
    e_out[0] = vinfo("e_out", F, 1, d3);
    Onnx__NodeProto *sum = node("ReduceSum", "sum", 1, strs(1, xname), 1, strs(1, "s"));
    attr_int(sum, "keepdims", 0);
    Onnx__NodeProto *ifn = node("If", "choose", 1, strs(1, "c"), 1, strs(1, "z"));
    attr_graph(ifn, "then_branch", graph("then", 1, then_n, 0, NULL, 1, t_out));
    attr_graph(ifn, "else_branch", graph("else", 1, else_n, 0, NULL, 1, e_out));
    Onnx__NodeProto **nodes = tcalloc(5, sizeof *nodes);
    nodes[0] = sum;
    nodes[1] = constant("zero", tensor_f("zero_t", 0, NULL, 1, &zero));
    nodes[2] = node("Greater", "gt", 2, strs(2, "s", "zero"), 1, strs(1, "c"));
    nodes[3] = ifn;
    Onnx__ValueInfoProto **in = tcalloc(3, sizeof *in), **out = tcalloc(2, sizeof *out);
    in[0] = vinfo(xname, F, 1, d3);
    in[1] = vinfo("y", F, 1, d3);
    out[0] = vinfo("z", F, 1, d3);
    return graph("if_model", 4, nodes, 2, in, 1, out);
}

static void test_if(void)
{
    size_t len;
    uint8_t *bytes = pack(if_model("x.1"), &len);
    char *diag = NULL;
    cfx_module *m = cfx_import_onnx(NULL, NULL, bytes, len, NULL, 0, &diag);
    CHECK(m, "the If model does not import: %s", diag ? diag : "");
    cfx_free(diag);
    if (m) {
        CHECK(!strcmp(cfx_input_name(m, 0, 0), "x.1"), "input 0 is '%s', not the ONNX name x.1",
              cfx_input_name(m, 0, 0));
        CHECK(!strcmp(cfx_result_name(m, 0, 0), "z"), "result 0 is '%s'", cfx_result_name(m, 0, 0));
        char *err = NULL;
        cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, &err);
        float x[3] = {1, 2, 3}, y[3] = {1, 1, 1}, z[3] = {0};
        cfx_bind(e, "x.1", x, sizeof x);
        cfx_bind(e, "y", y, sizeof y);
        cfx_bind(e, "z", z, sizeof z);
        CHECK(cfx_run(e) == CFX_OK, "run: %s", cfx_exec_message(e));
        CHECK(z[0] == 2 && z[1] == 3 && z[2] == 4, "sum 6 > 0 takes x + y = [2, 3, 4], got [%g, %g, %g]",
              z[0], z[1], z[2]);
        float xn[3] = {-1, -2, 3};
        cfx_bind(e, "x.1", xn, sizeof xn);
        CHECK(cfx_run(e) == CFX_OK, "run: %s", cfx_exec_message(e));
        CHECK(z[0] == -2 && z[1] == -3 && z[2] == 2, "sum 0 is not > 0: x - y = [-2, -3, 2], got [%g, %g, %g]",
              z[0], z[1], z[2]);
        cfx_exec_free(e);
        cfx_module_free(m);
    }
    /* the program it imports as names the nodes */
    char *text = cfx_import_onnx_source(NULL, bytes, len, NULL, 0, NULL, NULL, &diag);
    CHECK(text && strstr(text, "# Add 'add'") && strstr(text, "# If 'choose'"),
          "the imported text names its nodes:\n%s", text ? text : diag);
    cfx_free(text);
    cfx_free(diag);

    /* every truncation of the model, and every byte flipped: refused or imported, never a crash */
    for (size_t cut = 0; cut < len; cut++) {
        cfx_module *t = cfx_import_onnx(NULL, NULL, bytes, cut, NULL, 0, &diag);
        cfx_module_free(t);
        cfx_free(diag);
    }
    for (size_t at = 0; at < len; at++) {
        uint8_t *flip = malloc(len);
        memcpy(flip, bytes, len);
        flip[at] ^= 0x5a;
        cfx_module *t = cfx_import_onnx(NULL, NULL, flip, len, NULL, 0, &diag);
        cfx_module_free(t);
        cfx_free(diag);
        free(flip);
    }
    free(bytes);
}

/* acc = a0 + sum over i < 4 of i * x (x = [1, 2]: [6, 12]); tots = the sums of acc after each
 * step: [0, 3, 9, 18]; q = truncdiv(-7, 2) = -3 and r = -7 mod 2 = 1 (the divisor's sign) */
static void test_loop(void)
{
    static const int64_t d2[] = {2};
    Onnx__NodeProto *body_n[] = {
        node("Cast", "fi", 1, strs(1, "i"), 1, strs(1, "fi")),
        node("Mul", "ix", 2, strs(2, "fi", "x"), 1, strs(1, "ix")),
        node("Add", "acc_out", 2, strs(2, "acc_in", "ix"), 1, strs(1, "acc_out")),
        node("Identity", "cond_out", 1, strs(1, "cond_in"), 1, strs(1, "cond_out")),
        node("ReduceSum", "tot", 1, strs(1, "acc_out"), 1, strs(1, "tot")),
    };
    attr_int(body_n[0], "to", F);
    attr_int(body_n[4], "keepdims", 0);
    Onnx__ValueInfoProto **bin = tcalloc(3, sizeof *bin), **bout = tcalloc(3, sizeof *bout);
    bin[0] = vinfo("i", I64, 0, NULL);
    bin[1] = vinfo("cond_in", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 0, NULL);
    bin[2] = vinfo("acc_in", F, 1, d2);
    bout[0] = vinfo("cond_out", ONNX__TENSOR_PROTO__DATA_TYPE__BOOL, 0, NULL);
    bout[1] = vinfo("acc_out", F, 1, d2);
    bout[2] = vinfo("tot", F, 0, NULL);
    Onnx__NodeProto *loop = node("Loop", "loop0", 3, strs(3, "M", "", "a0"), 2, strs(2, "acc", "tots"));
    attr_graph(loop, "body", graph("body", 5, body_n, 3, bin, 3, bout));
    Onnx__NodeProto *mod = node("Mod", "mod", 2, strs(2, "n", "d"), 1, strs(1, "r"));
    attr_int(mod, "fmod", 0);
    Onnx__NodeProto **nodes = tcalloc(5, sizeof *nodes);
    nodes[0] = constant("M", tensor_i64("M_t", 4));
    nodes[1] = loop;
    nodes[2] = node("Div", "div", 2, strs(2, "n", "d"), 1, strs(1, "q"));
    nodes[3] = mod;
    static const int64_t d4[] = {4};
    Onnx__ValueInfoProto **in = tcalloc(5, sizeof *in), **out = tcalloc(5, sizeof *out);
    in[0] = vinfo("x", F, 1, d2);
    in[1] = vinfo("a0", F, 1, d2);
    in[2] = vinfo("n", I32, 0, NULL);
    in[3] = vinfo("d", I32, 0, NULL);
    out[0] = vinfo("acc", F, 1, d2);
    out[1] = vinfo("tots", F, 1, d4);
    out[2] = vinfo("q", I32, 0, NULL);
    out[3] = vinfo("r", I32, 0, NULL);
    size_t len;
    uint8_t *bytes = pack(graph("loop_model", 4, nodes, 4, in, 4, out), &len);
    char *diag = NULL;
    cfx_module *m = cfx_import_onnx(NULL, NULL, bytes, len, NULL, 0, &diag);
    CHECK(m, "the Loop model does not import: %s", diag ? diag : "");
    cfx_free(diag);
    free(bytes);
    if (!m)
        return;
    char *err = NULL;
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, &err);
    float x[2] = {1, 2}, a0[2] = {0, 0}, acc[2], tots[4];
    int32_t n = -7, d = 2, q = 0, r = 0;
    cfx_bind(e, "x", x, sizeof x);
    cfx_bind(e, "a0", a0, sizeof a0);
    cfx_bind(e, "n", &n, sizeof n);
    cfx_bind(e, "d", &d, sizeof d);
    cfx_bind(e, "acc", acc, sizeof acc);
    cfx_bind(e, "tots", tots, sizeof tots);
    cfx_bind(e, "q", &q, sizeof q);
    cfx_bind(e, "r", &r, sizeof r);
    CHECK(cfx_run(e) == CFX_OK, "run: %s", cfx_exec_message(e));
    CHECK(acc[0] == 6 && acc[1] == 12, "acc = [6, 12], got [%g, %g]", acc[0], acc[1]);
    CHECK(tots[0] == 0 && tots[1] == 3 && tots[2] == 9 && tots[3] == 18, "tots = [0, 3, 9, 18], got [%g, %g, %g, %g]",
          tots[0], tots[1], tots[2], tots[3]);
    CHECK(q == -3 && r == 1, "Div(-7, 2) = -3 and Mod(-7, 2) = 1, got %d and %d", q, r);
    /* a divisor of 0 stops the run with divide */
    d = 0;
    CHECK(cfx_run(e) == CFX_STOP_DIVIDE, "Div by 0: %s", cfx_exec_message(e));
    /* the loop's iterations count against the budget */
    d = 2;
    cfx_set_max_iters(e, 2);
    CHECK(cfx_run(e) == CFX_STOP_LIMIT, "a budget of 2 stops the 4-iteration loop: %s", cfx_exec_message(e));
    cfx_exec_free(e);
    cfx_module_free(m);
}

static void expect_refusal(const char *what, Onnx__GraphProto *g, const cfx_input_shape *shapes, int n,
                           const char *path, const char *want1, const char *want2)
{
    size_t len;
    uint8_t *bytes = pack(g, &len);
    char *diag = NULL;
    cfx_module *m = cfx_import_onnx(NULL, path, bytes, len, shapes, n, &diag);
    CHECK(!m, "%s: imported, should be refused", what);
    CHECK(diag && strstr(diag, want1) && (!want2 || strstr(diag, want2)), "%s: the message '%s' lacks '%s'%s%s",
          what, diag ? diag : "(none)", want1, want2 ? " or " : "", want2 ? want2 : "");
    CHECK(diag && strchr(diag, '\n') == diag + strlen(diag) - 1, "%s: the message is not one line: %s", what,
          diag ? diag : "");
    cfx_module_free(m);
    cfx_free(diag);
    free(bytes);
}

static void test_refusals(void)
{
    char *diag = NULL;
    cfx_module *m = cfx_import_onnx(NULL, NULL, "hello, world", 12, NULL, 0, &diag);
    CHECK(!m && diag && strstr(diag, "model.onnx: error: not an ONNX model"), "garbage: %s", diag ? diag : "");
    cfx_free(diag);
    m = cfx_import_onnx(NULL, "/nonexistent/m.onnx", NULL, 0, NULL, 0, &diag);
    CHECK(!m && diag && strstr(diag, "cannot read"), "a missing file: %s", diag ? diag : "");
    cfx_free(diag);

    /* an unknown op, named with its node, op type, domain and opset */
    Onnx__NodeProto **nodes = tcalloc(2, sizeof *nodes);
    nodes[0] = node("Frobnicate", "n1", 1, strs(1, "x"), 1, strs(1, "z"));
    Onnx__ValueInfoProto **in = tcalloc(2, sizeof *in), **out = tcalloc(2, sizeof *out);
    in[0] = vinfo("x", F, 1, d3);
    out[0] = vinfo("z", F, 1, d3);
    expect_refusal("an unknown op", graph("g", 1, nodes, 1, in, 1, out), NULL, 0, NULL,
                   "node 'n1' (Frobnicate, domain '', opset 18)", "not supported");

    /* a Range of no scalars: Shape's empty slice (i64[0], known) as start, limit and delta;
     * the importer read element 0 of each (ASan: found by fuzzing) */
    Onnx__NodeProto **nr = tcalloc(3, sizeof *nr);
    nr[0] = node("Shape", "empty", 1, strs(1, "x"), 1, strs(1, "s"));
    attr_int(nr[0], "start", 0);
    attr_int(nr[0], "end", 0);
    nr[1] = node("Range", "range", 3, strs(3, "s", "s", "s"), 1, strs(1, "z"));
    Onnx__ValueInfoProto **inr = tcalloc(2, sizeof *inr), **outr = tcalloc(2, sizeof *outr);
    inr[0] = vinfo("x", F, 1, d3);
    outr[0] = vinfo("z", F, 1, d3);
    expect_refusal("a Range of an empty shape", graph("g", 2, nr, 1, inr, 1, outr), NULL, 0, NULL,
                   "node 'range' (Range", "Range's start is i64[0], not one number");

    /* a symbolic dimension without a shape, then with one */
    static const int64_t dn[] = {-1};
    Onnx__NodeProto **n2 = tcalloc(2, sizeof *n2);
    n2[0] = node("Neg", "neg", 1, strs(1, "x"), 1, strs(1, "z"));
    Onnx__ValueInfoProto **in2 = tcalloc(2, sizeof *in2), **out2 = tcalloc(2, sizeof *out2);
    in2[0] = vinfo("x", F, 1, dn);
    out2[0] = vinfo("z", F, 1, dn);
    Onnx__GraphProto *sym = graph("sym", 1, n2, 1, in2, 1, out2);
    expect_refusal("a symbolic dimension", sym, NULL, 0, NULL, "symbolic dimension", "'N'");
    cfx_input_shape s = {"x", {CFX_F32, 1, {5}}, NULL};
    size_t len;
    uint8_t *bytes = pack(sym, &len);
    m = cfx_import_onnx(NULL, NULL, bytes, len, &s, 1, &diag);
    CHECK(m && cfx_input_type(m, 0, 0).dims[0] == 5, "N = 5 given: %s", diag ? diag : "");
    cfx_module_free(m);
    cfx_free(diag);
    free(bytes);

    /* external data that leaves the model's folder */
    Onnx__TensorProto *w = tensor_f("w", 1, d3, 0, NULL);
    w->n_float_data = 0;
    w->has_data_location = 1;
    w->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    Onnx__StringStringEntryProto *loc = tcalloc(1, sizeof *loc);
    onnx__string_string_entry_proto__init(loc);
    loc->key = "location";
    loc->value = "../../etc/passwd";
    w->n_external_data = 1;
    w->external_data = tcalloc(1, sizeof *w->external_data);
    w->external_data[0] = loc;
    Onnx__NodeProto **n3 = tcalloc(2, sizeof *n3);
    n3[0] = node("Add", "add", 2, strs(2, "x", "w"), 1, strs(1, "z"));
    Onnx__ValueInfoProto **in3 = tcalloc(2, sizeof *in3), **out3 = tcalloc(2, sizeof *out3);
    in3[0] = vinfo("x", F, 1, d3);
    out3[0] = vinfo("z", F, 1, d3);
    Onnx__GraphProto *ext = graph("ext", 1, n3, 1, in3, 1, out3);
    ext->n_initializer = 1;
    ext->initializer = tcalloc(1, sizeof *ext->initializer);
    ext->initializer[0] = w;
    expect_refusal("external data outside the folder", ext, NULL, 0, "/tmp/cfx_test/m.onnx", "outside the model's folder",
                   NULL);
    expect_refusal("external data in a model given as bytes", ext, NULL, 0, NULL, "cannot use", NULL);

    /* external data beside the model: w = [0.5, 1.5, 2.5] from w.bin, z = x + w */
    char dir[512], path[600], model_path[600];
    snprintf(dir, sizeof dir, "%s/test_onnx", CFX_TEST_WORK_DIR);
    snprintf(path, sizeof path, "mkdir -p '%s'", dir);
    CHECK(system(path) == 0, "cannot make %s", dir);
    snprintf(path, sizeof path, "%s/w.bin", dir);
    static const float w_data[3] = {0.5f, 1.5f, 2.5f};
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(w_data, sizeof w_data, 1, f) == 1, "cannot write %s", path);
    if (f)
        fclose(f);
    loc->value = "w.bin";
    snprintf(model_path, sizeof model_path, "%s/m.onnx", dir);
    bytes = pack(ext, &len);
    f = fopen(model_path, "wb");
    CHECK(f && fwrite(bytes, len, 1, f) == 1, "cannot write %s", model_path);
    if (f)
        fclose(f);
    free(bytes);
    m = cfx_import_onnx(NULL, model_path, NULL, 0, NULL, 0, &diag);
    CHECK(m, "external data beside the model: %s", diag ? diag : "");
    cfx_free(diag);
    if (m) {
        char *err = NULL;
        cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, &err);
        float x[3] = {1, 2, 3}, z[3] = {0};
        cfx_bind(e, "x", x, sizeof x);
        cfx_bind(e, "z", z, sizeof z);
        CHECK(cfx_run(e) == CFX_OK, "run: %s", cfx_exec_message(e));
        CHECK(z[0] == 1.5f && z[1] == 3.5f && z[2] == 5.5f, "x + w = [1.5, 3.5, 5.5], got [%g, %g, %g]", z[0], z[1],
              z[2]);
        cfx_exec_free(e);
        cfx_module_free(m);
    }
}

/* A Split into 64 parts and a Concat of them back: the importer binds 64 values while it holds
 * the split's input (its table of values grows under it: an ASan build catches a stale pointer);
 * y = x. */
static void test_many_values(void)
{
    static const int64_t d64[] = {64};
    char **parts = tcalloc(65, sizeof *parts);
    for (int k = 0; k < 64; k++) {
        parts[k] = tcalloc(16, 1);
        snprintf(parts[k], 16, "part%d", k);
    }
    Onnx__NodeProto **nodes = tcalloc(3, sizeof *nodes);
    nodes[0] = node("Split", "split", 1, strs(1, "x"), 64, parts);
    attr_int(nodes[0], "num_outputs", 64);
    nodes[1] = node("Concat", "concat", 64, parts, 1, strs(1, "y"));
    attr_int(nodes[1], "axis", 0);
    Onnx__ValueInfoProto **in = tcalloc(2, sizeof *in), **out = tcalloc(2, sizeof *out);
    in[0] = vinfo("x", F, 1, d64);
    out[0] = vinfo("y", F, 1, d64);
    Onnx__GraphProto *g = graph("many", 2, nodes, 1, in, 1, out);
    size_t len;
    uint8_t *bytes = pack(g, &len);
    char *diag = NULL;
    cfx_module *m = cfx_import_onnx(NULL, NULL, bytes, len, NULL, 0, &diag);
    free(bytes);
    CHECK(m, "64 parts: %s", diag ? diag : "");
    cfx_free(diag);
    if (!m)
        return;
    char *err = NULL;
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, &err);
    float x[64], y[64];
    for (int k = 0; k < 64; k++)
        x[k] = (float)k * 0.5f - 3.0f;
    cfx_bind(e, "x", x, sizeof x);
    cfx_bind(e, "y", y, sizeof y);
    CHECK(cfx_run(e) == CFX_OK, "run: %s", cfx_exec_message(e));
    CHECK(!memcmp(x, y, sizeof x), "splitting and concatenating x gives x back");
    cfx_exec_free(e);
    cfx_module_free(m);
}

/* float16 and bfloat16 held in f32: z = x + w (float16), x given as f32 and rounded on entry,
 * w a float16 initializer as int32_data bits; b = Cast(Cast(d, FLOAT16), FLOAT) of a double d
 * (rounded once, from the double); v = Cast(x, BFLOAT16) of x (bfloat16's 8 bits). Values by hand. */
static void test_half(void)
{
    Onnx__TensorProto *w = tcalloc(1, sizeof *w);
    onnx__tensor_proto__init(w);
    w->name = "w";
    w->has_data_type = 1;
    w->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16;
    w->n_dims = 1;
    w->dims = (int64_t *)d3;
    w->n_int32_data = 3;
    w->int32_data = tcalloc(3, sizeof *w->int32_data);
    w->int32_data[0] = 0x3c00; /* 1 */
    w->int32_data[1] = 0x3555; /* 1365 * 2^-12 = 0.333251953125 */
    w->int32_data[2] = 0x7bff; /* 65504, the largest */
    Onnx__NodeProto *c1 = node("Cast", "to_f16", 1, strs(1, "d"), 1, strs(1, "dh"));
    attr_int(c1, "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16);
    Onnx__NodeProto *c2 = node("Cast", "to_f32", 1, strs(1, "dh"), 1, strs(1, "b"));
    attr_int(c2, "to", F);
    Onnx__NodeProto *c3 = node("Cast", "to_bf16", 1, strs(1, "x"), 1, strs(1, "v"));
    attr_int(c3, "to", ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16);
    Onnx__NodeProto **nodes = tcalloc(5, sizeof *nodes);
    nodes[0] = node("Add", "add", 2, strs(2, "x", "w"), 1, strs(1, "z"));
    nodes[1] = c1;
    nodes[2] = c2;
    nodes[3] = c3;
    Onnx__ValueInfoProto **in = tcalloc(3, sizeof *in), **out = tcalloc(4, sizeof *out);
    in[0] = vinfo("x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16, 1, d3);
    in[1] = vinfo("d", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 0, NULL);
    out[0] = vinfo("z", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16, 1, d3);
    out[1] = vinfo("b", F, 0, NULL);
    out[2] = vinfo("v", ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16, 1, d3);
    Onnx__GraphProto *g = graph("half", 4, nodes, 2, in, 3, out);
    g->n_initializer = 1;
    g->initializer = tcalloc(1, sizeof *g->initializer);
    g->initializer[0] = w;
    size_t len;
    uint8_t *bytes = pack(g, &len);
    char *diag = NULL;
    cfx_module *m = cfx_import_onnx(NULL, NULL, bytes, len, NULL, 0, &diag);
    CHECK(m, "the float16 model does not import: %s", diag ? diag : "");
    cfx_free(diag);
    free(bytes);
    if (!m)
        return;
    CHECK(cfx_input_type(m, 0, 0).dtype == CFX_F32 && cfx_result_type(m, 0, 0).dtype == CFX_F32,
          "float16 is held in f32");
    char *err = NULL;
    cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, &err);
    /* x: 0.1 is 0.0999755859375 in float16 (1638 * 2^-14); 2^-11 and 16 are exact */
    float x[3] = {0.1f, 0x1p-11f, 16.0f}, z[3], b, v[3];
    double d = 1.0 + 0x1p-11 + 0x1p-40; /* just above a float16 midpoint: up, 1 + 2^-10 */
    cfx_bind(e, "x", x, sizeof x);
    cfx_bind(e, "d", &d, sizeof d);
    cfx_bind(e, "z", z, sizeof z);
    cfx_bind(e, "b", &b, sizeof b);
    cfx_bind(e, "v", v, sizeof v);
    CHECK(cfx_run(e) == CFX_OK, "run: %s", cfx_exec_message(e));
    /* 1.0999755859375 in steps of 2^-10: 1126.375 steps, 1126; 1367 * 2^-12 exactly; 65504 + 16
     * = 65520, halfway to 2^16: inf */
    CHECK(z[0] == 1.099609375f && z[1] == 0.333740234375f && isinf(z[2]) && z[2] > 0,
          "z = [1.099609375, 0.333740234375, inf], got [%.12g, %.12g, %g]", z[0], z[1], z[2]);
    CHECK(b == 1.0f + 0x1p-10f, "the double rounds once: 1 + 2^-10, got %.12g (through f32 it is 1)", b);
    /* bfloat16 of x's float16 values: 0.0999755859375 is 0.10009765625 (205 * 2^-11) */
    CHECK(v[0] == 0.10009765625f && v[1] == 0x1p-11f && v[2] == 16.0f, "v = [0.10009765625, 2^-11, 16], got "
          "[%.12g, %.12g, %.12g]", v[0], v[1], v[2]);
    cfx_exec_free(e);
    cfx_module_free(m);
}

/* y = CastLike(x, like) and ea = Abs(e), like and e given of 0 elements: values known at import,
 * no parameters; ea an output of 0 elements, no result; both taken by name at 0 bytes */
static void test_empty(void)
{
    static const int64_t sym[] = {-1};
    Onnx__NodeProto *nodes[] = {node("CastLike", "cast", 2, strs(2, "x", "like"), 1, strs(1, "y")),
                                node("Abs", "abs", 1, strs(1, "e"), 1, strs(1, "ea"))};
    Onnx__ValueInfoProto *in[] = {vinfo("x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, d3),
                                  vinfo("like", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 1, sym),
                                  vinfo("e", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, sym)};
    Onnx__ValueInfoProto *out[] = {vinfo("y", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 1, d3),
                                   vinfo("ea", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 1, sym)};
    size_t len;
    uint8_t *bytes = pack(graph("empties", 2, nodes, 3, in, 2, out), &len);
    cfx_input_shape shapes[] = {{"like", {CFX_F64, 1, {0}}, NULL}, {"e", {CFX_F32, 1, {0}}, NULL}};
    char *diag = NULL;
    cfx_module *m = cfx_import_onnx(NULL, NULL, bytes, len, shapes, 2, &diag);
    CHECK(m, "the model with inputs of 0 elements does not import: %s", diag ? diag : "");
    cfx_free(diag);
    if (m) {
        CHECK(cfx_input_count(m, 0) == 1 && !strcmp(cfx_input_name(m, 0, 0), "x"), "one parameter, x; got %d",
              cfx_input_count(m, 0));
        CHECK(cfx_result_count(m, 0) == 1 && !strcmp(cfx_result_name(m, 0, 0), "y"), "one result, y; got %d",
              cfx_result_count(m, 0));
        cfx_type lt = cfx_known_input_type(m, 0, 0), et = cfx_known_input_type(m, 0, 1);
        CHECK(cfx_known_input_count(m, 0) == 2 && !strcmp(cfx_known_input_name(m, 0, 0), "like") &&
              lt.dtype == CFX_F64 && lt.rank == 1 && lt.dims[0] == 0 && !strcmp(cfx_known_input_name(m, 0, 1), "e") &&
              et.dtype == CFX_F32 && et.rank == 1 && et.dims[0] == 0, "the known inputs are like: f64[0], e: f32[0]");
        cfx_type rt = cfx_known_result_type(m, 0, 0);
        CHECK(cfx_known_result_count(m, 0) == 1 && !strcmp(cfx_known_result_name(m, 0, 0), "ea") &&
              rt.dtype == CFX_F32 && rt.rank == 1 && rt.dims[0] == 0, "the known result is ea: f32[0]");
        CHECK(cfx_known_input_count(m, 1) == 0 && cfx_known_input_name(m, 0, 2) == NULL &&
              cfx_known_result_type(m, 0, 1).rank == -1, "queries out of range answer none");
        char *err = NULL;
        cfx_exec *e = cfx_exec_new(m, 0, CFX_BACKEND_CPU, &err);
        float x[3] = {1.5f, -2, 0.25f}, spare[2];
        double y[3] = {0};
        CHECK(cfx_bind(e, "x", x, sizeof x) == 0 && cfx_bind(e, "y", y, sizeof y) == 0, "bind: %s",
              cfx_exec_error(e));
        CHECK(cfx_bind(e, "like", NULL, 0) == 0 && cfx_bind(e, "ea", spare, 0) == 0, "inputs and results of 0 "
              "elements are taken by name at 0 bytes: %s", cfx_exec_error(e));
        CHECK(cfx_bind(e, "e", spare, sizeof spare) != 0 && strstr(cfx_exec_error(e), "'e' is f32[0]"),
              "a buffer of 8 bytes for e (0 elements) is refused, naming it: %s", cfx_exec_error(e));
        CHECK(cfx_run(e) == CFX_OK, "run: %s", cfx_exec_message(e));
        CHECK(y[0] == 1.5 && y[1] == -2 && y[2] == 0.25, "y = x as f64, got [%g, %g, %g]", y[0], y[1], y[2]);
        cfx_exec_free(e);
        cfx_module_free(m);
    }
    free(bytes);
}

int main(void)
{
    CHECK(cfx_onnx_available(), "cfx_onnx_available() is 0 in a build with the importer");
    test_empty();
    test_half();
    test_if();
    test_loop();
    test_refusals();
    test_many_values();
    free_arena();
    if (failures) {
        fprintf(stderr, "test_onnx: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_onnx: ok\n");
    return 0;
}
#endif
