/* The ops the importer runs: each family's table (onnx_ops_*.c) searched
 * by type and opset. */
#include "runtime/onnx/onnx_internal.h"

#include <string.h>

static const onnx_op *const families[] = {onnx_ops_elementwise, onnx_ops_shape, onnx_ops_nn,
                                          onnx_ops_reduce, onnx_ops_compose};

const onnx_op *onnx_op_find(const char *type, int opset)
{
    for (size_t f = 0; f < sizeof families / sizeof *families; f++)
        for (const onnx_op *op = families[f]; op->name; op++)
            if (strcmp(op->name, type) == 0 && opset >= op->since && opset <= op->until)
                return op;
    return NULL;
}

int onnx_op_known(const char *type)
{
    for (size_t f = 0; f < sizeof families / sizeof *families; f++)
        for (const onnx_op *op = families[f]; op->name; op++)
            if (strcmp(op->name, type) == 0)
                return 1;
    return 0;
}
