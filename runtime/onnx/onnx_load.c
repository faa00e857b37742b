/* Loading an ONNX model onto a device: the file read whole (protobuf's
 * own 2 GiB cap: larger models keep their initializers in external data
 * files), parsed and checked (onnx_parse.c), its float initializers made
 * the parameters of its module, its Constant nodes evaluated once. */
#include "runtime/core/alloc_internal.h"
#include "runtime/core/error_internal.h"
#include "runtime/core/file_internal.h"
#include "runtime/onnx/onnx_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static clrt_status read_bytes(const char *path, uint8_t **buf, size_t *len)
{
    uint64_t size = 0;
    int fd = clrt__file_open_read(path, (uint64_t)INT32_MAX, "ONNX model", &size);
    if (fd < 0)
        return clrt_last_status();
    clrt_status st = CLRT_OK;
    *buf = clrt__malloc(size ? size : 1);
    if (!*buf)
        st = clrt_last_status();
    else if (!clrt__read_full(fd, *buf, size))
        st = clrt__fail(CLRT_EIO, "onnx: cannot read %s", path);
    close(fd);
    *len = (size_t)size;
    return st;
}

static clrt_status load_steps(clrt_onnx_model *m)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    clrt_status st = read_bytes(m->path, &buf, &len);
    if (st == CLRT_OK)
        st = onnx_parse(m, buf, len);
    free(buf);
    if (st == CLRT_OK)
        st = onnx_build_module(m);
    int was = clrt_set_grad_enabled(0);
    if (st == CLRT_OK)
        st = onnx_eval_constants(m);
    clrt_set_grad_enabled(was);
    /* after the constants: a Clip's bounds are Constant nodes' values */
    if (st == CLRT_OK && !getenv("CLRT_ONNX_NO_FUSION"))
        st = onnx_plan_fusions(m);
    return st;
}

clrt_onnx_model *clrt_onnx_load(const char *path, clrt_device *dev)
{
    if (!path || !dev) {
        clrt__fail(CLRT_EINVAL, "clrt_onnx_load: %s is NULL", path ? "dev" : "path");
        return NULL;
    }
    clrt_onnx_model *m = clrt__calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->dev = dev;
    snprintf(m->path, sizeof m->path, "%s", path);
    if (load_steps(m) != CLRT_OK) {
        clrt_status st = clrt_last_status();
        char msg[2048];
        snprintf(msg, sizeof msg, "%s", clrt_last_error());
        clrt_onnx_free(m);
        clrt__fail(st, "%s", msg);
        return NULL;
    }
    return m;
}

void clrt_onnx_free(clrt_onnx_model *m)
{
    if (!m)
        return;
    onnx_fusions_free(m);
    clrt_module_free(m->module);
    onnx_parsed_free(m);
    free(m->params);
    free(m);
}
