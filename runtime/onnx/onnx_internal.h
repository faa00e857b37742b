/* The ONNX importer's insides (runtime/onnx/): a model read with
 * protobuf-c (the C code protoc-c generates from Debian's onnx.proto at
 * build time), checked whole at load, then run node by node through the
 * op table's calls.
 *
 * Values. Every tensor of a graph is an onnx_value: its ONNX element type
 * and shape, and its elements on the model's device (`dev`), on the host
 * (`host`), or both. float, int32 and bool live on the device (float32,
 * int32, uint8); int64 lives on the host, where ONNX graphs keep their
 * shape arithmetic (Shape -> Gather -> Concat -> Reshape), so a shape is
 * never read back from a device. Initializers and constants keep a host
 * copy beside their device one, so an op that takes a scalar from an input
 * (Clip's bounds, Pow's exponent, Pad's pads) reads it without waiting. An
 * int64 value that a device op needs goes up as int32 (refused when a
 * value does not fit); a device value that a host op needs is read back,
 * which waits: only graphs that compute shapes from data do that.
 *
 * Ownership: an onnx_value owns one reference to dev and its host buffer.
 * A model owns its protobuf message, values and plan. Not thread-safe: one
 * run of a model at a time. */
#ifndef CLRT_ONNX_INTERNAL_H
#define CLRT_ONNX_INTERNAL_H

#include "onnx.pb-c.h"
#include "runtime/ops/epilogue_internal.h"
#include "runtime/tensor/tensor_internal.h"
#include <clrt/autograd.h>
#include <clrt/onnx.h>

/* ONNX TensorProto.DataType values clrt runs. */
enum {
    ONNX_FLOAT = 1,
    ONNX_UINT8 = 2,
    ONNX_INT8 = 3,
    ONNX_INT32 = 6,
    ONNX_INT64 = 7,
    ONNX_BOOL = 9,
    ONNX_DOUBLE = 11
};

typedef struct {
    int type; /* ONNX element type */
    int ndim;
    int64_t shape[CLRT_MAX_DIMS];
    clrt_tensor *dev; /* F32, I32 or U8 on the model's device, or NULL */
    void *host;       /* numel elements: float, int32_t, int64_t or uint8_t (bool) */
    int is_param;     /* an initializer: dev is the module's parameter (not ours to change) */
} onnx_value;

/* A node's inputs and outputs as indices into the model's value table;
 * -1 for an optional input left out. */
typedef struct {
    const Onnx__NodeProto *proto;
    int n_in, n_out;
    int *in, *out;
    int evaluated_at_load; /* a Constant run once at load: its output persists */
} onnx_node;

typedef struct onnx_op onnx_op;

/* A node's part in the inference fusions (onnx_fuse.c). */
typedef struct {
    int bn, act;        /* the BatchNormalization folded in, the Relu or Clip fused; -1 none */
    int epi;            /* the activation as an epilogue kind (clrt__epi_kind) */
    int out;            /* the value the fused node produces */
    int skip;           /* done by an earlier node when fusing */
    clrt_tensor *w, *b; /* the folded weight and bias (owned) */
    uint64_t serial[6]; /* the storages they were folded from (unique, where a
                           freed storage's address is not), and their versions */
    unsigned version[6];
} onnx_fusion;

struct clrt_onnx_model {
    Onnx__ModelProto *proto;
    clrt_device *dev;
    int opset; /* of the default domain */
    char path[4096];
    /* value table: graph inputs, initializers, node outputs */
    int n_values;
    char **names;
    onnx_value *values; /* the run's values; initializers' stay between runs */
    int *is_init;       /* 1 for initializers and Constant outputs computed at load */
    int *release_after; /* index of the node after which a value is dead; -1: never */
    int n_inputs, n_outputs;
    int *inputs, *outputs; /* graph inputs (initializers aside) and outputs */
    clrt_onnx_io *input_info, *output_info;
    int n_nodes;
    onnx_node *nodes; /* in an order that runs (topological) */
    const onnx_op **ops;
    clrt_module *module; /* the parameters under their ONNX names */
    int n_params;
    clrt_tensor **params; /* borrowed from module */
    size_t peak_bytes, live_bytes;
    onnx_fusion *fuse; /* n_nodes entries */
};

/* An op's implementation: reads in[0..n_in) (NULL where an optional input
 * is absent), fills out[0..n_out) (zeroed on entry), CLRT_OK or an error
 * that names the node (onnx_fail_node). */
typedef clrt_status (*onnx_op_fn)(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in,
                                  onnx_value *out);

struct onnx_op {
    const char *name;   /* the ONNX op type */
    int since, until;   /* the opsets whose semantics fn implements (inclusive) */
    int differentiable; /* 1: composed of recorded ops, so autograd sees through it */
    onnx_op_fn fn;
};

/* The op for (type, opset), or NULL. */
const onnx_op *onnx_op_find(const char *type, int opset);
/* 1 when some entry has this type (another opset): for the refusal's wording. */
int onnx_op_known(const char *type);

/* Per-family tables (onnx_ops_*.c), each ending in {NULL}. */
extern const onnx_op onnx_ops_elementwise[], onnx_ops_shape[], onnx_ops_nn[], onnx_ops_reduce[],
    onnx_ops_compose[];
/* Cast of v to ONNX type `to` into out (Cast's and CastLike's work). */
clrt_status onnx_cast_to(clrt_onnx_model *m, const onnx_node *n, onnx_value *v, int to,
                         onnx_value *out);

/* --- values (onnx_value.c) --- */
int64_t onnx_numel(const onnx_value *v);
size_t onnx_type_size(int type); /* host bytes per element; 0 for an unsupported type */
const char *onnx_type_name(int type);
clrt_dtype onnx_dev_dtype(int type); /* F32, I32 (int32 and int64) or U8 (bool) */
void onnx_value_clear(onnx_value *v);
/* The device tensor (borrowed), uploading the host copy first if needed. */
clrt_tensor *onnx_need_dev(clrt_onnx_model *m, const onnx_node *n, onnx_value *v);
/* The host elements (borrowed), reading the device tensor back first if
 * needed (waits). */
const void *onnx_need_host(clrt_onnx_model *m, const onnx_node *n, onnx_value *v);
/* Element i of a host value as int64 / double. */
int64_t onnx_host_i64(const onnx_value *v, int64_t i);
double onnx_host_f64(const onnx_value *v, int64_t i);
/* out takes a new reference to t (its shape from t), with ONNX type `type`. */
void onnx_set_dev(onnx_value *out, int type, clrt_tensor *t);
/* out takes over t, a new reference an op returned (NULL: the op's error,
 * named after the node). */
clrt_status onnx_take_dev(const onnx_node *n, onnx_value *out, int type, clrt_tensor *t);
/* out gets a host buffer of type and shape (zeroed); NULL + error. */
void *onnx_set_host(onnx_value *out, int type, int ndim, const int64_t *shape);
/* A TensorProto's elements into v (host), from its raw_data, typed fields
 * or external file beside the model (dir). */
clrt_status onnx_tensor_from_proto(const Onnx__TensorProto *t, const char *dir, onnx_value *v,
                                   const char *what);

/* --- host arithmetic (onnx_host.c) --- */
/* One element as the host computes it: exact int64, or double. */
typedef struct {
    double f;
    int64_t i;
    int is_float;
} onnx_scalar;
typedef onnx_scalar (*onnx_host_fn)(const onnx_scalar *x, const void *ctx);
/* NumPy's broadcast of two shapes; CLRT_ESHAPE naming the node. */
clrt_status onnx_broadcast(const onnx_node *n, int na, const int64_t *a, int nb, const int64_t *b,
                           int *nout, int64_t *out);
/* out (a new host value of out_type) = fn over the broadcast elements of
 * args[0..n_args) (at most 3), read back to the host where needed. */
clrt_status onnx_host_map(clrt_onnx_model *m, const onnx_node *n, int n_args,
                          onnx_value *const *args, onnx_value *out, int out_type, onnx_host_fn fn,
                          const void *ctx);
/* Element i of a host value set from r, converted to v's type (to an
 * integer: truncated toward zero and saturated; to bool: r != 0). */
void onnx_host_put(onnx_value *v, int64_t i, onnx_scalar r);

/* --- node attributes (onnx_attr.c) --- */
const Onnx__AttributeProto *onnx_attr(const onnx_node *n, const char *name);
int64_t onnx_attr_int(const onnx_node *n, const char *name, int64_t def);
double onnx_attr_float(const onnx_node *n, const char *name, double def);
/* The ints of a list attribute: their count (at most cap are copied), or
 * -1 when absent. */
int onnx_attr_ints(const onnx_node *n, const char *name, int64_t *out, int cap);
const char *onnx_attr_string(const onnx_node *n, const char *name, const char *def);

/* Sets and returns an error that names the node ("Conv node 'conv1'"). */
clrt_status onnx_fail_node(const onnx_node *n, clrt_status code, const char *fmt, ...)
    CLRT__PRINTF(3, 4);
/* The ints of an int64 input (Reshape's shape, Slice's starts) read on the
 * host: their count, or -1 + error (too many for cap, another type). */
int onnx_input_ints(clrt_onnx_model *m, const onnx_node *n, onnx_value *v, int64_t *out, int cap);
/* An axis wrapped into [0, ndim); -1 + error naming the node. */
int onnx_axis(const onnx_node *n, int64_t axis, int ndim);
/* CLRT_ENOTSUP naming the node when grad mode is on and one of ts[0..k)
 * requires grad: for the paths of an op that have no gradient rule. */
clrt_status onnx_refuse_grad(const onnx_node *n, int k, clrt_tensor *const *ts);
/* The axes of Squeeze, Unsqueeze and reductions: the attribute before
 * opset input_from, input 1 from it. Their count; -1 absent; -2 error. */
int onnx_axes(clrt_onnx_model *m, const onnx_node *n, onnx_value *const *in, int input_from,
              int64_t *axes);

/* --- the model (onnx_parse.c, onnx_load.c, onnx_run.c, onnx_module.c) --- */
/* protobuf-c's allocations through clrt__malloc (failure injection). */
extern ProtobufCAllocator onnx_pb_allocator;
/* m->proto unpacked from bytes and checked, the value table, io and plan
 * built (m->path names the model in messages and locates external data);
 * no device is touched. On error what was built stays for
 * onnx_parsed_free. */
clrt_status onnx_parse(clrt_onnx_model *m, const uint8_t *bytes, size_t size);
/* Frees what onnx_parse built (not m itself). */
void onnx_parsed_free(clrt_onnx_model *m);
clrt_status onnx_build_module(clrt_onnx_model *m);
clrt_status onnx_run_values(clrt_onnx_model *m);
/* The fusions (onnx_fuse.c): planned at load; whether a run takes them
 * (nothing records); node i's fused work into out. */
clrt_status onnx_plan_fusions(clrt_onnx_model *m);
void onnx_fusions_free(clrt_onnx_model *m);
int onnx_fusing(const clrt_onnx_model *m);
clrt_status onnx_run_fused(clrt_onnx_model *m, int i, onnx_value *out);
/* Conv node n on x (x4: its device tensor as [N, C, H, W]) with weight w4
 * [O, C/group, kh, kw] and bias b (or NULL), epi applied to what it stores:
 * the op table's recorded convolution where the geometry fits it and epi
 * is none, else the fused and general kernels (refused when an input
 * requires grad). NULL + error naming the node. */
clrt_tensor *onnx_conv(const onnx_node *n, const onnx_value *x, clrt_tensor *x4, clrt_tensor *w4,
                       clrt_tensor *b, const clrt__epilogue *epi);
/* clrt_onnx_run under the caller's grad mode (the module's forward). */
clrt_status onnx_run_tensors(clrt_onnx_model *m, int n_in, clrt_tensor *const *inputs, int n_out,
                             clrt_tensor **outputs);
/* Runs the Constant nodes once at load; their outputs persist. */
clrt_status onnx_eval_constants(clrt_onnx_model *m);

#endif
