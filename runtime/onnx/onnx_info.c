/* What a loaded model says about itself: inputs, outputs, nodes, opset,
 * device and the last run's peak memory; and TensorProto files read and
 * written for programs that feed a model from ONNX's test data. */
#include "runtime/core/alloc_internal.h"
#include "runtime/core/error_internal.h"
#include "runtime/core/file_internal.h"
#include "runtime/onnx/onnx_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int clrt_onnx_num_inputs(const clrt_onnx_model *m) { return m ? m->n_inputs : 0; }
int clrt_onnx_num_outputs(const clrt_onnx_model *m) { return m ? m->n_outputs : 0; }
int clrt_onnx_num_nodes(const clrt_onnx_model *m) { return m ? m->n_nodes : 0; }
int clrt_onnx_opset(const clrt_onnx_model *m) { return m ? m->opset : -1; }
clrt_device *clrt_onnx_device(const clrt_onnx_model *m) { return m ? m->dev : NULL; }
size_t clrt_onnx_peak_bytes(const clrt_onnx_model *m) { return m ? m->peak_bytes : 0; }

static const clrt_onnx_io *io_at(const clrt_onnx_model *m, int i, int out)
{
    int n = !m ? 0 : out ? m->n_outputs : m->n_inputs;
    if (i < 0 || i >= n) {
        clrt__fail(CLRT_EINVAL, "clrt_onnx_%s: index %d of %d", out ? "output" : "input", i, n);
        return NULL;
    }
    return out ? &m->output_info[i] : &m->input_info[i];
}

const clrt_onnx_io *clrt_onnx_input(const clrt_onnx_model *m, int i) { return io_at(m, i, 0); }
const clrt_onnx_io *clrt_onnx_output(const clrt_onnx_model *m, int i) { return io_at(m, i, 1); }

const char *clrt_onnx_node_op(const clrt_onnx_model *m, int i)
{
    return m && i >= 0 && i < m->n_nodes ? m->nodes[i].proto->op_type : NULL;
}

const char *clrt_onnx_node_name(const clrt_onnx_model *m, int i)
{
    return m && i >= 0 && i < m->n_nodes && m->nodes[i].proto->name ? m->nodes[i].proto->name : "";
}

clrt_status clrt_onnx_tensor_read(const char *path, clrt_onnx_host_tensor *t)
{
    if (!path || !t)
        return clrt__fail(CLRT_EINVAL, "clrt_onnx_tensor_read: path or t is NULL");
    memset(t, 0, sizeof *t);
    uint64_t size = 0;
    int fd = clrt__file_open_read(path, (uint64_t)INT32_MAX, "ONNX tensor", &size);
    if (fd < 0)
        return clrt_last_status();
    uint8_t *buf = clrt__malloc(size ? size : 1);
    clrt_status st = buf ? CLRT_OK : clrt_last_status();
    if (st == CLRT_OK && !clrt__read_full(fd, buf, size))
        st = clrt__fail(CLRT_EIO, "clrt_onnx_tensor_read: cannot read %s", path);
    close(fd);
    Onnx__TensorProto *p =
        st == CLRT_OK ? onnx__tensor_proto__unpack(&onnx_pb_allocator, size, buf) : NULL;
    free(buf);
    if (st == CLRT_OK && !p)
        st = clrt__fail(CLRT_EFORMAT, "clrt_onnx_tensor_read: %s is not an ONNX TensorProto", path);
    onnx_value v = {0};
    if (st == CLRT_OK)
        st = onnx_tensor_from_proto(p, ".", &v, path);
    if (p)
        onnx__tensor_proto__free_unpacked(p, &onnx_pb_allocator);
    if (st != CLRT_OK)
        return st;
    t->elem_type = v.type;
    t->ndim = v.ndim;
    memcpy(t->shape, v.shape, sizeof t->shape);
    t->data = v.host;
    return CLRT_OK;
}

clrt_status clrt_onnx_tensor_write(const char *path, const clrt_onnx_host_tensor *t)
{
    if (!path || !t || (t->ndim && !t->data) || t->ndim < 0 || t->ndim > CLRT_MAX_DIMS)
        return clrt__fail(CLRT_EINVAL, "clrt_onnx_tensor_write: bad arguments");
    size_t es = onnx_type_size(t->elem_type);
    if (!es)
        return clrt__fail(CLRT_ENOTSUP, "clrt_onnx_tensor_write: element type %s",
                          onnx_type_name(t->elem_type));
    Onnx__TensorProto p;
    onnx__tensor_proto__init(&p);
    int64_t cnt = 1, dims[CLRT_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++)
        dims[i] = t->shape[i], cnt *= t->shape[i];
    p.n_dims = (size_t)t->ndim;
    p.dims = dims;
    p.has_data_type = 1;
    p.data_type = t->elem_type;
    p.has_raw_data = 1;
    p.raw_data.len = (size_t)cnt * es;
    p.raw_data.data = t->data;
    size_t len = onnx__tensor_proto__get_packed_size(&p);
    uint8_t *buf = clrt__malloc(len ? len : 1);
    if (!buf)
        return clrt_last_status();
    onnx__tensor_proto__pack(&p, buf);
    clrt__out_file f;
    clrt_status st = clrt__out_open(&f, path, "ONNX tensor");
    if (st == CLRT_OK)
        st = clrt__out_write(&f, buf, len);
    if (st == CLRT_OK)
        st = clrt__out_commit(&f);
    else
        clrt__out_abort(&f);
    free(buf);
    return st;
}
