/* clrt-onnx's commands (info, run, test, bench), each in its own file;
 * main.c parses the command line and picks one. Exit codes: 0 success,
 * 2 a model that uses what clrt does not support (an op, an opset, an
 * element type), 1 any other error. */
#ifndef CLRT_ONNX_CLI_H
#define CLRT_ONNX_CLI_H
#include <clrt/clrt.h>
#include <clrt/onnx.h>

/* The exit code for a failed clrt call: 2 for CLRT_ENOTSUP, else 1. */
int cli_exit_for(clrt_status st);
/* Loads path on dev, printing the error (and returning NULL) on failure;
 * *code gets the exit code. */
clrt_onnx_model *cli_load(const char *path, clrt_device *dev, int *code);

int cli_info(const char *model, clrt_device *dev);
int cli_run(const char *model, clrt_device *dev, int n_in, char **inputs, const char *out_dir);
/* |got - want| <= atol + rtol |want| for float outputs. */
typedef struct {
    double rtol, atol;
} cli_tolerance;
int cli_test(int n_dirs, char **dirs, clrt_device *dev, const cli_tolerance *tol);
int cli_bench(const char *model, clrt_device *dev, int batch, int runs, int json);
#endif
