/* clrt-onnx info (a model's inputs, outputs, ops and parameters) and
 * clrt-onnx run (TensorProto files in, TensorProto files out). */
#include "onnx_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_io(const char *what, const clrt_onnx_io *io)
{
    printf("%s %s: %s [", what, io->name, clrt_onnx_type_str(io->elem_type));
    for (int d = 0; d < io->ndim; d++) {
        if (io->dim_name[d])
            printf("%s%s", d ? ", " : "", io->dim_name[d]);
        else if (io->shape[d] < 0)
            printf("%s?", d ? ", " : "");
        else
            printf("%s%lld", d ? ", " : "", (long long)io->shape[d]);
    }
    printf("%s\n", io->ndim < 0 ? "unknown rank]" : "]");
}

/* The op types and how often each appears, in order of first use. */
static void print_ops(const clrt_onnx_model *m)
{
    int n = clrt_onnx_num_nodes(m), kinds = 0;
    const char **names = calloc((size_t)n + 1, sizeof *names);
    int *counts = calloc((size_t)n + 1, sizeof *counts);
    for (int i = 0; names && counts && i < n; i++) {
        const char *op = clrt_onnx_node_op(m, i);
        int k = 0;
        while (k < kinds && strcmp(names[k], op) != 0)
            k++;
        if (k == kinds)
            names[kinds++] = op;
        counts[k]++;
    }
    printf("ops (%d nodes):", n);
    for (int k = 0; k < kinds; k++)
        printf(" %s x%d", names[k], counts[k]);
    printf("\n");
    free(names);
    free(counts);
}

int cli_info(const char *model, clrt_device *dev)
{
    int code = 0;
    clrt_onnx_model *m = cli_load(model, dev, &code);
    if (!m) {
        if (code == 2)
            printf("unsupported: %s\n", clrt_last_error());
        return code;
    }
    printf("model %s: opset %d, on %s\n", model, clrt_onnx_opset(m), clrt_device_str(dev));
    for (int i = 0; i < clrt_onnx_num_inputs(m); i++)
        print_io("input", clrt_onnx_input(m, i));
    for (int i = 0; i < clrt_onnx_num_outputs(m); i++)
        print_io("output", clrt_onnx_output(m, i));
    print_ops(m);
    clrt_module *mod = clrt_onnx_module(m);
    int np = clrt_module_parameters(mod, NULL, NULL, NULL, 0);
    long long count = 0;
    clrt_tensor **ps = calloc((size_t)(np > 0 ? np : 1), sizeof *ps);
    if (ps && np > 0 && clrt_module_parameters(mod, NULL, ps, NULL, np) == np)
        for (int i = 0; i < np; i++)
            count += clrt_tensor_numel(ps[i]);
    free(ps);
    printf("parameters: %d tensors, %lld values\n", np > 0 ? np : 0, count);
    printf("unsupported ops: none\n");
    clrt_onnx_free(m);
    return 0;
}

int cli_run(const char *model, clrt_device *dev, int n_in, char **inputs, const char *out_dir)
{
    int code = 0;
    clrt_onnx_model *m = cli_load(model, dev, &code);
    if (!m)
        return code;
    int n_out = clrt_onnx_num_outputs(m);
    clrt_onnx_host_tensor *in = calloc((size_t)n_in + 1, sizeof *in);
    clrt_onnx_host_tensor *out = calloc((size_t)n_out + 1, sizeof *out);
    clrt_status st = in && out ? CLRT_OK : CLRT_ENOMEM;
    if (st == CLRT_OK && n_in != clrt_onnx_num_inputs(m))
        st = clrt_set_error(CLRT_EINVAL, "%s takes %d inputs (--input), %d given", model,
                            clrt_onnx_num_inputs(m), n_in);
    for (int i = 0; st == CLRT_OK && i < n_in; i++)
        st = clrt_onnx_tensor_read(inputs[i], &in[i]);
    if (st == CLRT_OK)
        st = clrt_onnx_run_host(m, n_in, in, n_out, out);
    for (int i = 0; st == CLRT_OK && i < n_out; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/output_%d.pb", out_dir, i);
        st = clrt_onnx_tensor_write(path, &out[i]);
    }
    if (st != CLRT_OK) {
        fprintf(stderr, "clrt-onnx: %s\n", clrt_last_error());
        code = cli_exit_for(st);
    }
    for (int i = 0; in && i < n_in; i++)
        clrt_onnx_host_free(&in[i]);
    for (int i = 0; out && i < n_out; i++)
        clrt_onnx_host_free(&out[i]);
    free(in);
    free(out);
    clrt_onnx_free(m);
    return code;
}
