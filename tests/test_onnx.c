/* The ONNX importer (clrt/onnx.h) on models this suite builds with
 * protobuf-c's generated structs: a small network's outputs against a
 * float64 reference, an int64 shape subgraph, its module's parameters
 * and gradients, external data, TensorProto files; and the refusals a
 * malformed, truncated, cyclic or unsupported model gets, each naming
 * what is wrong. */
#include "testutil.h"

#include "runtime/onnx/onnx_internal.h" /* white-box: the generated structs build models */
#include <check.h>
#include <clrt/clrt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- building models: every piece from one arena, freed at once --- */
static void *arena[4096];
static int n_arena;

static void *grab(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_lt(n_arena, 4096);
    arena[n_arena++] = p;
    return p;
}

static char saved_path[256]; /* the model save() last wrote, removed with the arena */

static void arena_free(void)
{
    while (n_arena)
        free(arena[--n_arena]);
    if (saved_path[0]) {
        unlink(saved_path);
        *strrchr(saved_path, '/') = 0;
        rmdir(saved_path);
        saved_path[0] = 0;
    }
}

static char *str(const char *s)
{
    char *p = grab(strlen(s) + 1);
    strcpy(p, s);
    return p;
}

typedef struct {
    Onnx__ModelProto model;
    Onnx__GraphProto graph;
    Onnx__OperatorSetIdProto opset;
} builder;

static void begin(builder *b, int opset)
{
    memset(b, 0, sizeof *b);
    onnx__model_proto__init(&b->model);
    onnx__graph_proto__init(&b->graph);
    onnx__operator_set_id_proto__init(&b->opset);
    b->opset.has_version = 1;
    b->opset.version = opset;
    b->model.has_ir_version = 1;
    b->model.ir_version = 8;
    b->model.n_opset_import = 1;
    b->model.opset_import = grab(sizeof(void *));
    b->model.opset_import[0] = &b->opset;
    b->model.graph = &b->graph;
    b->graph.name = str("g");
    b->graph.node = grab(64 * sizeof(void *));
    b->graph.input = grab(16 * sizeof(void *));
    b->graph.output = grab(16 * sizeof(void *));
    b->graph.initializer = grab(16 * sizeof(void *));
}

/* A float/int64 value info; a dim of -1 is the symbolic "batch". */
static Onnx__ValueInfoProto *info(const char *name, int type, int nd, const int64_t *dims)
{
    Onnx__ValueInfoProto *v = grab(sizeof *v);
    Onnx__TypeProto *t = grab(sizeof *t);
    Onnx__TypeProto__Tensor *tt = grab(sizeof *tt);
    Onnx__TensorShapeProto *s = grab(sizeof *s);
    onnx__value_info_proto__init(v);
    onnx__type_proto__init(t);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(s);
    v->name = str(name);
    v->type = t;
    t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    t->tensor_type = tt;
    tt->has_elem_type = 1;
    tt->elem_type = type;
    tt->shape = s;
    s->n_dim = (size_t)nd;
    s->dim = grab((size_t)nd * sizeof(void *) + 1);
    for (int i = 0; i < nd; i++) {
        Onnx__TensorShapeProto__Dimension *d = grab(sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        if (dims[i] < 0) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = str("batch");
        } else {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = dims[i];
        }
        s->dim[i] = d;
    }
    return v;
}

static void input(builder *b, const char *name, int type, int nd, const int64_t *dims)
{
    b->graph.input[b->graph.n_input++] = info(name, type, nd, dims);
}

static void output(builder *b, const char *name, int type, int nd, const int64_t *dims)
{
    b->graph.output[b->graph.n_output++] = info(name, type, nd, dims);
}

static Onnx__TensorProto *tensor(const char *name, int type, int nd, const int64_t *dims,
                                 const void *data)
{
    Onnx__TensorProto *t = grab(sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = str(name);
    t->has_data_type = 1;
    t->data_type = type;
    t->n_dims = (size_t)nd;
    t->dims = grab((size_t)nd * 8 + 1);
    size_t cnt = 1;
    for (int i = 0; i < nd; i++)
        t->dims[i] = dims[i], cnt *= (size_t)dims[i];
    size_t bytes = cnt * (type == 7 ? 8 : 4);
    t->has_raw_data = 1;
    t->raw_data.len = bytes;
    t->raw_data.data = grab(bytes);
    memcpy(t->raw_data.data, data, bytes);
    return t;
}

static void init(builder *b, Onnx__TensorProto *t)
{
    b->graph.initializer[b->graph.n_initializer++] = t;
}

/* A node of op with up to 3 inputs ("" for an optional one left out) and
 * one output; attributes added with attr_int(s). */
static Onnx__NodeProto *node(builder *b, const char *op, const char *a, const char *x,
                             const char *c, const char *out)
{
    Onnx__NodeProto *n = grab(sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = str(op);
    n->name = str(out);
    const char *ins[3] = {a, x, c};
    n->input = grab(3 * sizeof(void *));
    for (int i = 0; i < 3 && ins[i]; i++)
        n->input[n->n_input++] = str(ins[i]);
    n->output = grab(sizeof(void *));
    n->output[n->n_output++] = str(out);
    n->attribute = grab(8 * sizeof(void *));
    b->graph.node[b->graph.n_node++] = n;
    return n;
}

/* A fresh attribute of n: name and type set, the value left to the caller. */
static Onnx__AttributeProto *new_attr(Onnx__NodeProto *n, const char *name,
                                      Onnx__AttributeProto__AttributeType type)
{
    Onnx__AttributeProto *a = grab(sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = str(name);
    a->has_type = 1;
    a->type = type;
    n->attribute[n->n_attribute++] = a;
    return a;
}

static void attr_int(Onnx__NodeProto *n, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = new_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = v;
}

static void attr_ints(Onnx__NodeProto *n, const char *name, int count, const int64_t *v)
{
    Onnx__AttributeProto *a = new_attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = (size_t)count;
    a->ints = grab((size_t)count * sizeof(int64_t));
    memcpy(a->ints, v, (size_t)count * sizeof(int64_t));
}

/* The model written to a fresh file; returns its path (static buffer). */
static const char *save(builder *b)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/onnx-test-%d/model.onnx",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    char dir[256];
    snprintf(dir, sizeof dir, "%.*s", (int)(strrchr(path, '/') - path), path);
    mkdir(dir, 0700);
    size_t len = onnx__model_proto__get_packed_size(&b->model);
    uint8_t *buf = grab(len);
    onnx__model_proto__pack(&b->model, buf);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
    fclose(f);
    snprintf(saved_path, sizeof saved_path, "%s", path);
    return path;
}

static void refused(const char *path, clrt_status want, const char *needle)
{
    clrt_onnx_model *m = clrt_onnx_load(path, tu_device());
    ck_assert_msg(!m, "%s loaded", path);
    ck_assert_int_eq(clrt_last_status(), want);
    ck_assert_msg(strstr(clrt_last_error(), needle), "'%s' lacks '%s'", clrt_last_error(), needle);
}

/* --- the network: y = softmax(relu(x W1 + b1) W2^T + b2), x [batch, 5] --- */
enum { IN = 5, HID = 7, OUT = 3 };

static void mlp(builder *b, const float *w1, const float *b1, const float *w2, const float *b2)
{
    begin(b, 13);
    int64_t xs[2] = {-1, IN}, ys[2] = {-1, OUT}, s1[2] = {IN, HID}, s2[2] = {OUT, HID};
    int64_t sb1 = HID, sb2 = OUT;
    input(b, "x", 1, 2, xs);
    output(b, "y", 1, 2, ys);
    init(b, tensor("fc1.weight", 1, 2, s1, w1));
    init(b, tensor("fc1.bias", 1, 1, &sb1, b1));
    init(b, tensor("fc2.weight", 1, 2, s2, w2));
    init(b, tensor("fc2.bias", 1, 1, &sb2, b2));
    node(b, "MatMul", "x", "fc1.weight", NULL, "h0");
    node(b, "Add", "h0", "fc1.bias", NULL, "h1");
    node(b, "Relu", "h1", NULL, NULL, "h2");
    attr_int(node(b, "Gemm", "h2", "fc2.weight", "fc2.bias", "z"), "transB", 1);
    attr_int(node(b, "Softmax", "z", NULL, NULL, "y"), "axis", 1);
}

static void mlp_ref(int rows, const float *x, const float *w1, const float *b1, const float *w2,
                    const float *b2, double *y, double *h)
{
    for (int r = 0; r < rows; r++) {
        for (int j = 0; j < HID; j++) {
            double s = b1[j];
            for (int i = 0; i < IN; i++)
                s += (double)x[r * IN + i] * w1[i * HID + j];
            h[r * HID + j] = s > 0 ? s : 0;
        }
        double z[OUT], mx = -INFINITY, sum = 0;
        for (int o = 0; o < OUT; o++) {
            z[o] = b2[o];
            for (int j = 0; j < HID; j++)
                z[o] += h[r * HID + j] * w2[o * HID + j];
            mx = z[o] > mx ? z[o] : mx;
        }
        for (int o = 0; o < OUT; o++)
            sum += exp(z[o] - mx);
        for (int o = 0; o < OUT; o++)
            y[r * OUT + o] = exp(z[o] - mx) / sum;
    }
}

START_TEST(network_against_float64)
{
    uint64_t st = tu_seed();
    float *w1 = tu_random_floats(&st, IN * HID, -1, 1), *b1 = tu_random_floats(&st, HID, -1, 1);
    float *w2 = tu_random_floats(&st, OUT * HID, -1, 1), *b2 = tu_random_floats(&st, OUT, -1, 1);
    builder b;
    mlp(&b, w1, b1, w2, b2);
    clrt_onnx_model *m = TU_NONNULL(clrt_onnx_load(save(&b), tu_device()));
    ck_assert_int_eq(clrt_onnx_num_inputs(m), 1);
    const clrt_onnx_io *io = clrt_onnx_input(m, 0);
    ck_assert_str_eq(io->name, "x");
    ck_assert_str_eq(io->dim_name[0], "batch");
    ck_assert_int_eq(io->shape[1], IN);
    for (int rows = 1; rows <= 11; rows += 10) { /* any batch: the dim is symbolic */
        float *x = tu_random_floats(&st, (size_t)rows * IN, -2, 2);
        int64_t xs[2] = {rows, IN};
        clrt_tensor *xt = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 2, xs, x)), *y = NULL;
        TU_OK(clrt_onnx_run(m, 1, &xt, 1, &y));
        ck_assert_int_eq(clrt_tensor_shape(y)[0], rows);
        double *ref = calloc((size_t)rows * OUT, 8), *h = calloc((size_t)rows * HID, 8);
        mlp_ref(rows, x, w1, b1, w2, b2, ref, h);
        float *got = tu_read(y);
        ck_assert_double_lt(tu_rel_err(got, ref, (size_t)rows * OUT, 1e-6), 1e-5);
        free(got), free(ref), free(h), free(x);
        clrt_tensor_release(xt), clrt_tensor_release(y);
    }
    int64_t bad[2] = {2, IN + 1};
    clrt_tensor *xb = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 2, bad)), *y = NULL;
    ck_assert_int_eq(clrt_onnx_run(m, 1, &xb, 1, &y), CLRT_ESHAPE);
    ck_assert_ptr_nonnull(strstr(clrt_last_error(), "[batch, 5]"));
    clrt_tensor_release(xb);
    clrt_tensor *xi = TU_NONNULL(clrt_zeros(tu_device(), CLRT_I32, 2, (int64_t[]){2, IN}));
    ck_assert_int_eq(clrt_onnx_run(m, 1, &xi, 1, &y), CLRT_EDTYPE);
    clrt_tensor_release(xi);
    clrt_onnx_free(m);
    free(w1), free(b1), free(w2), free(b2);
    arena_free();
}
END_TEST

/* The module: parameters under their ONNX names, nested at the dots, and
 * gradients through the graph against float64 (loss = sum of y's first
 * column, which depends on every weight). */
START_TEST(module_gradients)
{
    uint64_t st = tu_seed();
    float *w1 = tu_random_floats(&st, IN * HID, -1, 1), *b1 = tu_random_floats(&st, HID, -1, 1);
    float *w2 = tu_random_floats(&st, OUT * HID, -1, 1), *b2 = tu_random_floats(&st, OUT, -1, 1);
    builder b;
    mlp(&b, w1, b1, w2, b2);
    clrt_onnx_model *m = TU_NONNULL(clrt_onnx_load(save(&b), tu_device()));
    clrt_module *mod = TU_NONNULL(clrt_onnx_module(m));
    const char *names[8];
    clrt_tensor *ps[8], *gs[8];
    ck_assert_int_eq(clrt_module_parameters(mod, names, ps, gs, 8), 4);
    ck_assert_str_eq(names[0], "fc1.weight");
    ck_assert_str_eq(names[3], "fc2.bias");
    int rows = 3;
    float *x = tu_random_floats(&st, (size_t)rows * IN, -2, 2);
    clrt_tensor *xt =
        TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 2, (int64_t[]){rows, IN}, x));
    clrt_tensor *y = TU_NONNULL(clrt_module_forward(mod, xt));
    clrt_tensor *col = TU_NONNULL(clrt_narrow(y, 1, 0, 1)), *loss = TU_NONNULL(clrt_sum(col));
    TU_OK(clrt_backward(loss));
    /* d loss / d b2 by central differences of the float64 reference */
    double *ref = calloc((size_t)rows * OUT, 8), *h = calloc((size_t)rows * HID, 8);
    clrt_tensor *g3 = TU_NONNULL(clrt_tensor_grad(ps[3])),
                *g0 = TU_NONNULL(clrt_tensor_grad(ps[0]));
    float *gb2 = tu_read(g3);
    for (int o = 0; o < OUT; o++) {
        double e = 1e-3, lp = 0, lm = 0;
        float keep = b2[o];
        b2[o] = keep + (float)e;
        mlp_ref(rows, x, w1, b1, w2, b2, ref, h);
        for (int r = 0; r < rows; r++)
            lp += ref[r * OUT];
        b2[o] = keep - (float)e;
        mlp_ref(rows, x, w1, b1, w2, b2, ref, h);
        for (int r = 0; r < rows; r++)
            lm += ref[r * OUT];
        b2[o] = keep;
        double fd = (lp - lm) / (((double)(keep + (float)e)) - (double)(keep - (float)e));
        ck_assert_msg(fabs(gb2[o] - fd) < 1e-3 * (1 + fabs(fd)), "d/db2[%d] %g vs %g", o, gb2[o],
                      fd);
    }
    float *gw1 = tu_read(g0);
    double norm = 0;
    for (int i = 0; i < IN * HID; i++) {
        ck_assert(isfinite(gw1[i]));
        norm += fabs(gw1[i]);
    }
    ck_assert_double_gt(norm, 0);
    free(gb2), free(gw1), free(ref), free(h), free(x);
    clrt_tensor_release(g3), clrt_tensor_release(g0);
    clrt_tensor_release(xt), clrt_tensor_release(y), clrt_tensor_release(col);
    clrt_tensor_release(loss);
    clrt_onnx_free(m);
    free(w1), free(b1), free(w2), free(b2);
    arena_free();
}
END_TEST

/* Shape -> Gather -> Unsqueeze -> Concat -> Reshape, in int64 on the host:
 * x [batch, 2, 3] flattened to [batch, 6]. */
START_TEST(int64_shape_subgraph)
{
    builder b;
    begin(&b, 13);
    int64_t xs[3] = {-1, 2, 3}, ys[2] = {-1, 6}, one = 1, zero = 0, six = 6;
    input(&b, "x", 1, 3, xs);
    output(&b, "y", 1, 2, ys);
    init(&b, tensor("i0", 7, 0, NULL, &zero));
    init(&b, tensor("ax", 7, 1, &one, &zero));
    init(&b, tensor("six", 7, 1, &one, &six));
    node(&b, "Shape", "x", NULL, NULL, "s");
    node(&b, "Gather", "s", "i0", NULL, "n");
    node(&b, "Unsqueeze", "n", "ax", NULL, "n1");
    Onnx__NodeProto *c = node(&b, "Concat", "n1", "six", NULL, "shape");
    attr_int(c, "axis", 0);
    node(&b, "Reshape", "x", "shape", NULL, "y");
    clrt_onnx_model *m = TU_NONNULL(clrt_onnx_load(save(&b), tu_device()));
    float x[24];
    for (int i = 0; i < 24; i++)
        x[i] = (float)i - 7.5f;
    clrt_tensor *xt = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 3, (int64_t[]){4, 2, 3}, x));
    clrt_tensor *y = NULL;
    TU_OK(clrt_onnx_run(m, 1, &xt, 1, &y));
    ck_assert_int_eq(clrt_tensor_ndim(y), 2);
    ck_assert_int_eq(clrt_tensor_shape(y)[0], 4);
    ck_assert_int_eq(clrt_tensor_shape(y)[1], 6);
    float *got = tu_read(y);
    ck_assert_mem_eq(got, x, sizeof x);
    free(got);
    clrt_tensor_release(xt), clrt_tensor_release(y);
    clrt_onnx_free(m);
    arena_free();
}
END_TEST

static void one_relu(builder *b, int opset, const char *op)
{
    begin(b, opset);
    int64_t s[2] = {2, 3};
    input(b, "x", 1, 2, s);
    output(b, "y", 1, 2, s);
    node(b, op, "x", NULL, NULL, "y");
}

START_TEST(refusals_name_the_problem)
{
    builder b;
    refused("/nonexistent/model.onnx", CLRT_EIO, "/nonexistent/model.onnx");
    one_relu(&b, 13, "FancyOp");
    refused(save(&b), CLRT_ENOTSUP, "op FancyOp at opset 13");
    one_relu(&b, 19, "Relu");
    refused(save(&b), CLRT_ENOTSUP, "opset 19");
    one_relu(&b, 6, "HardSwish"); /* an op newer than the model's opset */
    refused(save(&b), CLRT_ENOTSUP,
            "op HardSwish at opset 6, which clrt does not support (it supports other opsets");
    one_relu(&b, 13, "Relu");
    b.graph.node[0]->input[0] = str("nowhere");
    refused(save(&b), CLRT_EFORMAT, "reads 'nowhere', which nothing defines");
    one_relu(&b, 13, "Relu"); /* a cycle: y = Relu(z), z = Relu(y) */
    b.graph.node[0]->input[0] = str("z");
    node(&b, "Relu", "y", NULL, NULL, "z");
    refused(save(&b), CLRT_EFORMAT, "cycle");
    one_relu(&b, 13, "Relu");
    node(&b, "Relu", "x", NULL, NULL, "y");
    refused(save(&b), CLRT_EFORMAT, "already defined");
    one_relu(&b, 13, "Relu");
    b.graph.input[0]->type->tensor_type->elem_type = 11; /* double */
    refused(save(&b), CLRT_ENOTSUP, "double");
    one_relu(&b, 13, "Relu");
    int64_t two = 2;
    float v[2] = {1, 2};
    Onnx__TensorProto *t = tensor("w", 1, 1, &two, v);
    t->raw_data.len = 4; /* 4 bytes for 2 floats */
    init(&b, t);
    refused(save(&b), CLRT_EFORMAT, "'w' holds 4 bytes");
    /* A valid model cut short, and bytes that are no model at all. */
    one_relu(&b, 13, "Relu");
    const char *path = save(&b);
    FILE *f = fopen(path, "rb");
    uint8_t buf[4096];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    f = fopen(path, "wb");
    fwrite(buf, 1, len / 2, f);
    fclose(f);
    refused(path, CLRT_EFORMAT, "not an ONNX model");
    f = fopen(path, "wb");
    fputs("this is text, not a protobuf message\n", f);
    fclose(f);
    refused(path, CLRT_EFORMAT, "not an ONNX model");
    arena_free();
}
END_TEST

/* An initializer in an external data file beside the model; and one whose
 * location leaves the model's folder. */
START_TEST(external_data)
{
    builder b;
    begin(&b, 13);
    int64_t s[1] = {4};
    float w[4] = {1.5f, -2, 3, 0.25f}, zeros[4] = {0};
    input(&b, "x", 1, 1, s);
    output(&b, "y", 1, 1, s);
    Onnx__TensorProto *t = tensor("w", 1, 1, s, zeros);
    t->has_raw_data = 0;
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    t->n_external_data = 2;
    t->external_data = grab(2 * sizeof(void *));
    const char *kv[2][2] = {{"location", "weights.bin"}, {"offset", "8"}};
    for (int i = 0; i < 2; i++) {
        Onnx__StringStringEntryProto *e = grab(sizeof *e);
        onnx__string_string_entry_proto__init(e);
        e->key = str(kv[i][0]);
        e->value = str(kv[i][1]);
        t->external_data[i] = e;
    }
    init(&b, t);
    node(&b, "Mul", "x", "w", NULL, "y");
    const char *path = save(&b);
    char bin[300];
    snprintf(bin, sizeof bin, "%.*s/weights.bin", (int)(strrchr(path, '/') - path), path);
    FILE *f = fopen(bin, "wb");
    fwrite("8 bytes!", 1, 8, f);
    fwrite(w, 4, 4, f);
    fclose(f);
    clrt_onnx_model *m = TU_NONNULL(clrt_onnx_load(path, tu_device()));
    float x[4] = {2, 2, -1, 4};
    clrt_tensor *xt = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 1, s, x)), *y = NULL;
    TU_OK(clrt_onnx_run(m, 1, &xt, 1, &y));
    float *got = tu_read(y);
    for (int i = 0; i < 4; i++)
        ck_assert_float_eq(got[i], x[i] * w[i]);
    free(got);
    clrt_tensor_release(xt), clrt_tensor_release(y);
    clrt_onnx_free(m);
    t->external_data[0]->value = str("../weights.bin");
    refused(save(&b), CLRT_EFORMAT, "not a file name relative");
    t->external_data[0]->value = str("weights.bin");
    t->external_data[1]->value = str("12"); /* 12 + 16 > 24 bytes */
    refused(save(&b), CLRT_EFORMAT, "past the end");
    unlink(bin);
    arena_free();
}
END_TEST

/* A node without a gradient rule (Pad) on a parameter's path refuses to
 * run while grad mode is on, rather than cut the gradient; with grad mode
 * off (inference) it runs. */
START_TEST(no_silent_gradient_cut)
{
    builder b;
    begin(&b, 13);
    int64_t s[1] = {3}, so[1] = {5}, two = 2;
    float w[3] = {1, 2, 3};
    int64_t pads[2] = {1, 1};
    input(&b, "x", 1, 1, s);
    output(&b, "y", 1, 1, so);
    init(&b, tensor("w", 1, 1, s, w));
    init(&b, tensor("pads", 7, 1, &two, pads));
    node(&b, "Mul", "x", "w", NULL, "h");
    node(&b, "Pad", "h", "pads", NULL, "y");
    clrt_onnx_model *m = TU_NONNULL(clrt_onnx_load(save(&b), tu_device()));
    clrt_tensor *xt = TU_NONNULL(clrt_ones(tu_device(), CLRT_F32, 1, s));
    ck_assert_ptr_null(clrt_module_forward(clrt_onnx_module(m), xt));
    ck_assert_int_eq(clrt_last_status(), CLRT_ENOTSUP);
    ck_assert_ptr_nonnull(strstr(clrt_last_error(), "Pad node"));
    clrt_tensor *y = NULL;
    TU_OK(clrt_onnx_run(m, 1, &xt, 1, &y));
    float *got = tu_read(y);
    float want[5] = {0, 1, 2, 3, 0};
    ck_assert_mem_eq(got, want, sizeof want);
    free(got);
    clrt_tensor_release(xt), clrt_tensor_release(y);
    clrt_onnx_free(m);
    arena_free();
}
END_TEST

START_TEST(tensor_files_round_trip)
{
    char path[256];
    snprintf(path, sizeof path, "%s/onnx-tensor-%d.pb",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    int64_t big[3] = {INT64_MIN, 5000000000LL, -1};
    uint8_t flags[4] = {1, 0, 1, 1};
    clrt_onnx_host_tensor ts[2] = {{7, 1, {3}, big}, {9, 2, {2, 2}, flags}};
    for (int k = 0; k < 2; k++) {
        TU_OK(clrt_onnx_tensor_write(path, &ts[k]));
        clrt_onnx_host_tensor back;
        TU_OK(clrt_onnx_tensor_read(path, &back));
        ck_assert_int_eq(back.elem_type, ts[k].elem_type);
        ck_assert_int_eq(back.ndim, ts[k].ndim);
        ck_assert_mem_eq(back.data, ts[k].data, k ? 4 : 24);
        clrt_onnx_host_free(&back);
    }
    FILE *f = fopen(path, "wb");
    fputs("\xff\xff\xff", f);
    fclose(f);
    clrt_onnx_host_tensor bad;
    ck_assert_int_eq(clrt_onnx_tensor_read(path, &bad), CLRT_EFORMAT);
    ck_assert_int_eq(clrt_onnx_tensor_write("/nonexistent/dir/t.pb", &ts[0]), CLRT_EIO);
    unlink(path);
}
END_TEST

/* What a model says about itself, and the host-side run: the network's
 * outputs through clrt_onnx_run_host equal clrt_onnx_run's. */
START_TEST(introspection_and_host_run)
{
    uint64_t st = tu_seed();
    float *w1 = tu_random_floats(&st, IN * HID, -1, 1), *b1 = tu_random_floats(&st, HID, -1, 1);
    float *w2 = tu_random_floats(&st, OUT * HID, -1, 1), *b2 = tu_random_floats(&st, OUT, -1, 1);
    builder b;
    mlp(&b, w1, b1, w2, b2);
    clrt_onnx_model *m = TU_NONNULL(clrt_onnx_load(save(&b), tu_device()));
    ck_assert_ptr_eq(clrt_onnx_device(m), tu_device());
    ck_assert_int_eq(clrt_onnx_opset(m), 13);
    ck_assert_int_eq(clrt_onnx_num_outputs(m), 1);
    const clrt_onnx_io *y_io = TU_NONNULL((void *)clrt_onnx_output(m, 0));
    ck_assert_str_eq(y_io->name, "y");
    ck_assert_str_eq(clrt_onnx_type_str(y_io->elem_type), "float");
    ck_assert_ptr_null(clrt_onnx_output(m, 1));
    ck_assert_int_eq(clrt_last_status(), CLRT_EINVAL);
    ck_assert_int_eq(clrt_onnx_num_nodes(m), 5);
    ck_assert_str_eq(clrt_onnx_node_op(m, 0), "MatMul");
    ck_assert_str_eq(clrt_onnx_node_name(m, 4), "y");
    ck_assert_ptr_null(clrt_onnx_node_op(m, 5));
    int rows = 3;
    float *x = tu_random_floats(&st, (size_t)rows * IN, -2, 2);
    clrt_onnx_host_tensor hin = {1, 2, {rows, IN}, x}, hout;
    TU_OK(clrt_onnx_run_host(m, 1, &hin, 1, &hout));
    ck_assert_int_eq(hout.elem_type, 1);
    ck_assert_int_eq(hout.ndim, 2);
    ck_assert_int_eq(hout.shape[0], rows);
    clrt_tensor *xt =
        TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 2, (int64_t[]){rows, IN}, x));
    clrt_tensor *y = NULL;
    TU_OK(clrt_onnx_run(m, 1, &xt, 1, &y));
    ck_assert_uint_gt(clrt_onnx_peak_bytes(m), (size_t)(IN * HID + OUT * HID) * 4);
    float *got = tu_read(y);
    ck_assert_mem_eq(got, hout.data, (size_t)rows * OUT * 4);
    clrt_onnx_host_free(&hout);
    hin.elem_type = 7; /* int64 where the model takes float */
    ck_assert_int_eq(clrt_onnx_run_host(m, 1, &hin, 1, &hout), CLRT_EDTYPE);
    free(got), free(x), free(w1), free(b1), free(w2), free(b2);
    clrt_tensor_release(xt), clrt_tensor_release(y);
    clrt_onnx_free(m);
    arena_free();
}
END_TEST

/* A Constant node giving the float scalar v as out. */
static void constant(builder *b, const char *out, float v)
{
    Onnx__NodeProto *n = node(b, "Constant", NULL, NULL, NULL, out);
    n->n_input = 0;
    new_attr(n, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR)->t =
        tensor(out, 1, 0, NULL, &v);
}

/* Convolutions and the activations the importer fuses into them (ReLU6 as
 * Clip with Constant bounds 0 and 6, ReLU as Clip with a lower bound
 * only), against float64; test_onnx_no_fusion runs it unfused:
 *   h = clip(dwconv3x3(x) + b, 0, 6), y = max(conv1x1(h), 0), x [2, C, H, W]. */
enum { FC = 4, FO = 3, FH = 9, FW = 13 };

START_TEST(fused_activations_against_float64)
{
    uint64_t st = tu_seed();
    float *wd = tu_random_floats(&st, FC * 9, -4, 4), *bd = tu_random_floats(&st, FC, -1, 1);
    float *wp = tu_random_floats(&st, FO * FC, -1, 1);
    float *x = tu_random_floats(&st, 2 * FC * FH * FW, -1, 1);
    builder b;
    begin(&b, 13);
    int64_t xs[4] = {-1, FC, FH, FW}, ys[4] = {-1, FO, FH, FW};
    int64_t sd[4] = {FC, 1, 3, 3}, sp[4] = {FO, FC, 1, 1}, sb = FC, pads[4] = {1, 1, 1, 1};
    input(&b, "x", 1, 4, xs);
    output(&b, "y", 1, 4, ys);
    init(&b, tensor("dw.weight", 1, 4, sd, wd));
    init(&b, tensor("dw.bias", 1, 1, &sb, bd));
    init(&b, tensor("pw.weight", 1, 4, sp, wp));
    constant(&b, "zero", 0.0f);
    constant(&b, "six", 6.0f);
    Onnx__NodeProto *dw = node(&b, "Conv", "x", "dw.weight", "dw.bias", "d");
    attr_int(dw, "group", FC);
    attr_ints(dw, "pads", 4, pads);
    node(&b, "Clip", "d", "zero", "six", "h");
    node(&b, "Conv", "h", "pw.weight", NULL, "p");
    node(&b, "Clip", "p", "zero", NULL, "y");
    clrt_onnx_model *m = TU_NONNULL(clrt_onnx_load(save(&b), tu_device()));
    int64_t xin[4] = {2, FC, FH, FW};
    clrt_tensor *xt = TU_NONNULL(clrt_from_host(tu_device(), CLRT_F32, 4, xin, x)), *y = NULL;
    TU_OK(clrt_onnx_run(m, 1, &xt, 1, &y));
    size_t hw = FH * FW, ny = 2 * FO * hw;
    double *h = calloc(2 * FC * hw, 8), *ref = calloc(ny, 8);
    for (int n = 0; n < 2; n++)
        for (int c = 0; c < FC; c++)
            for (int i = 0; i < FH; i++)
                for (int j = 0; j < FW; j++) {
                    double acc = bd[c];
                    for (int ki = 0; ki < 3; ki++)
                        for (int kj = 0; kj < 3; kj++) {
                            int r = i + ki - 1, q = j + kj - 1;
                            if (r >= 0 && r < FH && q >= 0 && q < FW)
                                acc += (double)x[((n * FC + c) * FH + r) * FW + q] *
                                       wd[c * 9 + ki * 3 + kj];
                        }
                    h[(n * FC + c) * hw + i * FW + j] = acc < 0 ? 0 : acc > 6 ? 6 : acc;
                }
    for (int n = 0; n < 2; n++)
        for (int o = 0; o < FO; o++)
            for (size_t p = 0; p < hw; p++) {
                double acc = 0;
                for (int c = 0; c < FC; c++)
                    acc += h[(n * FC + c) * hw + p] * wp[o * FC + c];
                ref[(n * FO + o) * hw + p] = acc < 0 ? 0 : acc;
            }
    float *got = tu_read(y);
    ck_assert_double_lt(tu_rel_err(got, ref, ny, 1e-6), 1e-5);
    free(got), free(h), free(ref), free(x), free(wd), free(bd), free(wp);
    clrt_tensor_release(xt), clrt_tensor_release(y);
    clrt_onnx_free(m);
    arena_free();
}
END_TEST

static Suite *onnx_suite(void)
{
    Suite *s = suite_create("onnx");
    TCase *tc = tu_tcase("onnx");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, network_against_float64);
    tcase_add_test(tc, module_gradients);
    tcase_add_test(tc, int64_shape_subgraph);
    tcase_add_test(tc, refusals_name_the_problem);
    tcase_add_test(tc, external_data);
    tcase_add_test(tc, no_silent_gradient_cut);
    tcase_add_test(tc, tensor_files_round_trip);
    tcase_add_test(tc, introspection_and_host_run);
    tcase_add_test(tc, fused_activations_against_float64);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return tu_run(onnx_suite()); }
