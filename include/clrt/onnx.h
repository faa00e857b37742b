/* clrt/onnx.h — run ONNX models on any OpenCL device, and fine-tune them.
 *
 *   clrt_onnx_model *m = clrt_onnx_load("resnet18.onnx", clrt_try_gpu(0));
 *   clrt_tensor *x = ...;                      // [N, 3, 224, 224] on m's device
 *   clrt_tensor *y = NULL;
 *   clrt_onnx_run(m, 1, &x, 1, &y);            // enqueued; read y when needed
 *   clrt_onnx_free(m);
 *
 * Loading reads the whole model (initializers inline or in external data
 * files beside it) and checks it before anything runs: the opset of the
 * default domain (7 to 18), every node's op (an op clrt does not run is
 * refused with its name, node and opset: CLRT_ENOTSUP), element types
 * (float, int32, int64, bool: others CLRT_ENOTSUP), and the graph (names
 * defined once, every input defined before use, no cycle: CLRT_EFORMAT,
 * naming the node). A file that is not an ONNX model, cut or altered, is
 * CLRT_EFORMAT; a missing or unreadable one CLRT_EIO.
 *
 * Running: the nodes are run in order through the op table, on the model's
 * device; values no later node reads are released at once, so their
 * buffers are reused. Nothing is read back to the host except where a
 * graph computes a shape from device data. int64 tensors (shapes, indices)
 * are kept on the host; an int64 graph output is returned as an int32
 * tensor (clrt tensors have no int64) by clrt_onnx_run, and exactly by
 * clrt_onnx_run_host.
 *
 * Training: clrt_onnx_module gives the model as a module whose parameters
 * are its float initializers under their ONNX names ("layer1.0.conv1.weight"
 * as a nested module path, so clrt_module_save writes those names), so
 * clrt_train, clrt_backward and optimizers work on it. Nodes whose ops have
 * no gradient rule refuse to run on inputs that require grad (CLRT_ENOTSUP,
 * naming the node) rather than cut the gradient.
 *
 * Ownership: clrt_onnx_load returns a model the caller frees with
 * clrt_onnx_free; the module of clrt_onnx_module is the model's (borrowed).
 * Output tensors are new references. Not thread-safe per model. */
#ifndef CLRT_ONNX_H
#define CLRT_ONNX_H
#include <clrt/nn.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct clrt_onnx_model clrt_onnx_model;

/* A graph input or output. */
typedef struct {
    const char *name;
    int elem_type; /* ONNX's TensorProto.DataType: 1 float, 6 int32, 7 int64, 9 bool */
    int ndim;      /* -1 when the model does not say */
    int64_t shape[CLRT_MAX_DIMS];        /* -1 for a dimension the model leaves open */
    const char *dim_name[CLRT_MAX_DIMS]; /* a symbolic dimension's name ("batch"), or NULL */
} clrt_onnx_io;

/* A tensor on the host in ONNX's terms: elements of elem_type packed
 * row-major (bool as one byte each). */
typedef struct {
    int elem_type;
    int ndim;
    int64_t shape[CLRT_MAX_DIMS];
    void *data; /* malloc'ed by the calls that fill one; free with clrt_onnx_host_free */
} clrt_onnx_host_tensor;

CLRT_API clrt_onnx_model *clrt_onnx_load(const char *path, clrt_device *dev);
CLRT_API void clrt_onnx_free(clrt_onnx_model *m); /* NULL: no-op */

CLRT_API int clrt_onnx_num_inputs(const clrt_onnx_model *m);
CLRT_API int clrt_onnx_num_outputs(const clrt_onnx_model *m);
/* Borrowed, valid until clrt_onnx_free; NULL + CLRT_EINVAL for i out of range. */
CLRT_API const clrt_onnx_io *clrt_onnx_input(const clrt_onnx_model *m, int i);
CLRT_API const clrt_onnx_io *clrt_onnx_output(const clrt_onnx_model *m, int i);
CLRT_API clrt_device *clrt_onnx_device(const clrt_onnx_model *m);
/* The number of nodes, and node i's op type and name (borrowed). */
CLRT_API int clrt_onnx_num_nodes(const clrt_onnx_model *m);
CLRT_API const char *clrt_onnx_node_op(const clrt_onnx_model *m, int i);
CLRT_API const char *clrt_onnx_node_name(const clrt_onnx_model *m, int i);
/* The default domain's opset the model imports. */
CLRT_API int clrt_onnx_opset(const clrt_onnx_model *m);
/* The most device memory the last run's values held at once, in bytes,
 * with what stays between runs: initializers, folded weights and the
 * copies of them the convolution kernels keep re-laid for their loops.
 * The ops' scratch workspace is not counted. */
CLRT_API size_t clrt_onnx_peak_bytes(const clrt_onnx_model *m);

/* Runs the graph on n_in tensors (the graph inputs in order, on the
 * model's device: float32 for float, int32 for int32 and int64, uint8 for
 * bool; any size where the model's dimension is symbolic) and stores
 * n_out new references in outputs (n_out <= the graph's outputs). Enqueued;
 * returns without waiting unless the graph computes a shape from data.
 * Errors name the node, shapes and devices. */
CLRT_API clrt_status clrt_onnx_run(clrt_onnx_model *m, int n_in, clrt_tensor *const *inputs,
                                   int n_out, clrt_tensor **outputs);
/* The same from host tensors of the declared element types, reading every
 * output back (waits) into outputs[i] (data malloc'ed; free with
 * clrt_onnx_host_free). */
CLRT_API clrt_status clrt_onnx_run_host(clrt_onnx_model *m, int n_in,
                                        const clrt_onnx_host_tensor *inputs, int n_out,
                                        clrt_onnx_host_tensor *outputs);

/* The model as a module (borrowed: freed with the model): its parameters
 * are the float initializers under their ONNX names; forward runs the
 * graph on its first input(s). */
CLRT_API clrt_module *clrt_onnx_module(clrt_onnx_model *m);

/* An ONNX TensorProto file (as ONNX's test data sets hold) read into t, or
 * t written to path (through a temporary file). CLRT_EIO, CLRT_EFORMAT
 * naming the path, CLRT_ENOTSUP for an element type clrt does not hold. */
CLRT_API clrt_status clrt_onnx_tensor_read(const char *path, clrt_onnx_host_tensor *t);
CLRT_API clrt_status clrt_onnx_tensor_write(const char *path, const clrt_onnx_host_tensor *t);
CLRT_API void clrt_onnx_host_free(clrt_onnx_host_tensor *t); /* frees data; NULL: no-op */
/* "float" "int32" "int64" "bool" ..., "unknown" */
CLRT_API const char *clrt_onnx_type_str(int elem_type);

#ifdef __cplusplus
}
#endif
#endif
