/* Per-thread error state: a status and a formatted message. */
#include "runtime/core/error_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_message[8192];
static _Thread_local clrt_status last_code = CLRT_OK;

const char *clrt_status_str(clrt_status s)
{
    switch (s) {
#define CLRT__STATUS_STR(name, value, desc) \
    case CLRT_##name:                       \
        return desc;
        CLRT_STATUS_MAP(CLRT__STATUS_STR)
#undef CLRT__STATUS_STR
    }
    return "unknown status";
}

const char *clrt_status_name(clrt_status s)
{
    switch (s) {
#define CLRT__STATUS_NAME(name, value, desc) \
    case CLRT_##name:                        \
        return "CLRT_" #name;
        CLRT_STATUS_MAP(CLRT__STATUS_NAME)
#undef CLRT__STATUS_NAME
    }
    return "CLRT_UNKNOWN";
}

const char *clrt_last_error(void) { return last_message; }

clrt_status clrt_last_status(void) { return last_code; }

void clrt_clear_error(void)
{
    last_message[0] = '\0';
    last_code = CLRT_OK;
}

clrt_status clrt_set_error(clrt_status code, const char *fmt, ...)
{
    char tmp[sizeof last_message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap); /* fmt may use last_message */
    va_end(ap);
    memcpy(last_message, tmp, sizeof tmp);
    last_code = code;
    return code;
}

const char *clrt__cl_error_name(cl_int err)
{
    switch (err) {
        /* One OpenCL error name a line; clang-format reflows such lists
         * differently on each pass, so it leaves this one alone. */
        /* clang-format off */
#define E(x) case x: return #x;
        E(CL_SUCCESS)
        E(CL_DEVICE_NOT_FOUND)
        E(CL_DEVICE_NOT_AVAILABLE)
        E(CL_COMPILER_NOT_AVAILABLE)
        E(CL_MEM_OBJECT_ALLOCATION_FAILURE)
        E(CL_OUT_OF_RESOURCES)
        E(CL_OUT_OF_HOST_MEMORY)
        E(CL_PROFILING_INFO_NOT_AVAILABLE)
        E(CL_MEM_COPY_OVERLAP)
        E(CL_IMAGE_FORMAT_MISMATCH)
        E(CL_IMAGE_FORMAT_NOT_SUPPORTED)
        E(CL_BUILD_PROGRAM_FAILURE)
        E(CL_MAP_FAILURE)
        E(CL_MISALIGNED_SUB_BUFFER_OFFSET)
        E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        E(CL_COMPILE_PROGRAM_FAILURE)
        E(CL_LINKER_NOT_AVAILABLE)
        E(CL_LINK_PROGRAM_FAILURE)
        E(CL_DEVICE_PARTITION_FAILED)
        E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
        E(CL_INVALID_VALUE)
        E(CL_INVALID_DEVICE_TYPE)
        E(CL_INVALID_PLATFORM)
        E(CL_INVALID_DEVICE)
        E(CL_INVALID_CONTEXT)
        E(CL_INVALID_QUEUE_PROPERTIES)
        E(CL_INVALID_COMMAND_QUEUE)
        E(CL_INVALID_HOST_PTR)
        E(CL_INVALID_MEM_OBJECT)
        E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
        E(CL_INVALID_IMAGE_SIZE)
        E(CL_INVALID_SAMPLER)
        E(CL_INVALID_BINARY)
        E(CL_INVALID_BUILD_OPTIONS)
        E(CL_INVALID_PROGRAM)
        E(CL_INVALID_PROGRAM_EXECUTABLE)
        E(CL_INVALID_KERNEL_NAME)
        E(CL_INVALID_KERNEL_DEFINITION)
        E(CL_INVALID_KERNEL)
        E(CL_INVALID_ARG_INDEX)
        E(CL_INVALID_ARG_VALUE)
        E(CL_INVALID_ARG_SIZE)
        E(CL_INVALID_KERNEL_ARGS)
        E(CL_INVALID_WORK_DIMENSION)
        E(CL_INVALID_WORK_GROUP_SIZE)
        E(CL_INVALID_WORK_ITEM_SIZE)
        E(CL_INVALID_GLOBAL_OFFSET)
        E(CL_INVALID_EVENT_WAIT_LIST)
        E(CL_INVALID_EVENT)
        E(CL_INVALID_OPERATION)
        E(CL_INVALID_GL_OBJECT)
        E(CL_INVALID_BUFFER_SIZE)
        E(CL_INVALID_MIP_LEVEL)
        E(CL_INVALID_GLOBAL_WORK_SIZE)
        E(CL_INVALID_PROPERTY)
        E(CL_INVALID_IMAGE_DESCRIPTOR)
        E(CL_INVALID_COMPILER_OPTIONS)
        E(CL_INVALID_LINKER_OPTIONS)
        E(CL_INVALID_DEVICE_PARTITION_COUNT)
        /* clang-format on */
#undef E
    case -1001:
        return "CL_PLATFORM_NOT_FOUND_KHR";
    }
    return "unknown OpenCL error";
}

clrt_status clrt__fail_cl(cl_int err, const char *what)
{
    clrt_status code = CLRT_EOPENCL;
    if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
        err == CL_OUT_OF_HOST_MEMORY || err == CL_INVALID_BUFFER_SIZE)
        code = CLRT_ENOMEM;
    return clrt__fail(code, "%s failed: %s (%d)", what, clrt__cl_error_name(err), (int)err);
}
