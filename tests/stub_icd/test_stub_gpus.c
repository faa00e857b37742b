/* The device model's GPU paths, under the stub driver (two "NVIDIA CUDA"
 * GPUs) beside PoCL. Enumeration runs once per process, so each scenario is
 * a ctest entry with its own environment (tests/stub_icd/CMakeLists.txt)
 * that runs this program with the scenario's name:
 *   gpus          OCL_ICD_VENDORS=stub + PoCL
 *   visible_1     the same with CLRT_VISIBLE_DEVICES=1
 *   visible_1_0   the same with CLRT_VISIBLE_DEVICES=1,0
 *   failing       CLRT_STUB_ICD_FAIL=1: the stub's clGetDeviceIDs fails
 *   gpu_only      OCL_ICD_VENDORS=stub alone: a host with only GPUs */
#include "testutil.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* PoCL's device, beside the stub's GPUs. */
static clrt_device *cpu(void) { return TU_NONNULL(clrt_cpu()); }

static const char *model(clrt_device *d)
{
    static clrt_device_info info;
    TU_OK(clrt_device_info_get(d, &info));
    return info.model;
}

/* Where the ICD loader lists d: its platform's index and its own in it
 * (what CLBlast's tuners take as -platform and -device). */
static void opencl_index(clrt_device *d, unsigned *platform, unsigned *device)
{
    clrt_device_info info;
    TU_OK(clrt_device_info_get(d, &info));
    *platform = info.opencl_platform_index;
    *device = info.opencl_device_index;
}

/* --- gpus: ordering, names, aliases, info, clean failures --- */

START_TEST(gpus_come_first)
{
    ck_assert_int_eq(clrt_num_gpus(), 2);
    ck_assert_int_ge(clrt_num_cpus(), 1);
    ck_assert_int_eq(clrt_device_count(), 2 + clrt_num_cpus());
    clrt_device *g0 = TU_NONNULL(clrt_gpu(0)), *g1 = TU_NONNULL(clrt_gpu(1));
    ck_assert_ptr_eq(clrt_device_at(0), g0);
    ck_assert_ptr_eq(clrt_device_at(1), g1);
    ck_assert_ptr_eq(clrt_device_at(2), cpu());
    ck_assert_str_eq(clrt_device_str(g0), "gpu:0");
    ck_assert_str_eq(clrt_device_str(g1), "gpu:1");
    ck_assert_str_eq(clrt_device_str(cpu()), "cpu");
    ck_assert_str_eq(model(g0), "Stub GPU 0");
    ck_assert_str_eq(model(g1), "Stub GPU 1");

    clrt_device_info info;
    TU_OK(clrt_device_info_get(cpu(), &info));
    ck_assert_int_eq(info.kind, CLRT_DEVICE_CPU);
    ck_assert_str_eq(info.platform, "Portable Computing Language");

    /* Two platforms (the stub's, PoCL's) in the loader's order; the stub's
     * GPUs are its devices 0 and 1. */
    unsigned p0, d0, p1, d1, pc, dc;
    opencl_index(g0, &p0, &d0);
    opencl_index(g1, &p1, &d1);
    opencl_index(cpu(), &pc, &dc);
    ck_assert_uint_eq(p0, p1);
    ck_assert_uint_ne(p0, pc);
    ck_assert_uint_lt(p0, 2);
    ck_assert_uint_lt(pc, 2);
    ck_assert_uint_eq(d0, 0);
    ck_assert_uint_eq(d1, 1);
    ck_assert_uint_eq(dc, 0);
}
END_TEST

START_TEST(gpu_info_is_the_drivers)
{
    clrt_device_info info;
    TU_OK(clrt_device_info_get(TU_NONNULL(clrt_gpu(0)), &info));
    ck_assert_str_eq(info.name, "gpu:0");
    ck_assert_str_eq(info.platform, "NVIDIA CUDA");
    ck_assert_str_eq(info.platform_version, "OpenCL 3.0 CUDA 12.2.148");
    ck_assert_str_eq(info.vendor, "NVIDIA Corporation");
    ck_assert_str_eq(info.driver_version, "535.104.05");
    ck_assert_str_eq(info.opencl_c_version, "OpenCL C 1.2 ");
    ck_assert_int_eq(info.kind, CLRT_DEVICE_GPU);
    ck_assert_str_eq(clrt_device_kind_str(info.kind), "GPU");
    ck_assert_uint_eq(info.global_mem_bytes, 40ULL << 30);
    ck_assert_uint_eq(info.max_alloc_bytes, 10ULL << 30);
    ck_assert_uint_eq(info.local_mem_bytes, 48 << 10);
    ck_assert_uint_eq(info.compute_units, 108);
    ck_assert_uint_eq(info.clock_mhz, 1410);
    ck_assert_uint_eq(info.max_work_group_size, 1024);
    ck_assert_int_eq(info.has_fp64, 1);
    ck_assert_int_eq(info.unified_memory, 0);
    ck_assert_int_eq(info.native_kernels, 0);
    ck_assert_int_eq(info.gemm_path, CLRT_GEMM_CLBLAST); /* a GPU never uses the host's BLAS */
    TU_OK(clrt_device_info_get(TU_NONNULL(clrt_gpu(1)), &info));
    ck_assert_uint_eq(info.compute_units, 128);
    ck_assert_uint_eq(info.global_mem_bytes, 24ULL << 30);
}
END_TEST

START_TEST(try_gpu_falls_back_to_cpu)
{
    ck_assert_ptr_eq(clrt_try_gpu(0), clrt_gpu(0));
    ck_assert_ptr_eq(clrt_try_gpu(1), clrt_gpu(1));
    ck_assert_ptr_eq(clrt_try_gpu(5), cpu());
    ck_assert_ptr_eq(clrt_try_gpu(-1), cpu());

    clrt_device *all[4] = {NULL, NULL, NULL, NULL};
    ck_assert_int_eq(clrt_try_all_gpus(all, 4), 2);
    ck_assert_ptr_eq(all[0], clrt_gpu(0));
    ck_assert_ptr_eq(all[1], clrt_gpu(1));
    ck_assert_ptr_null(all[2]);
    /* A short array gets what fits; the count is still all of them. */
    clrt_device *one[1] = {NULL};
    ck_assert_int_eq(clrt_try_all_gpus(one, 1), 2);
    ck_assert_ptr_eq(one[0], clrt_gpu(0));
    ck_assert_int_eq(clrt_try_all_gpus(NULL, 0), 2);
}
END_TEST

START_TEST(gpu_out_of_range_says_how_many)
{
    ck_assert_ptr_null(clrt_gpu(3));
    tu_assert_error(CLRT_ENODEV, "gpu:3", "2 GPU", NULL);
    ck_assert_ptr_null(clrt_device_get("cuda:2"));
    tu_assert_error(CLRT_ENODEV, "gpu:2", "2 GPU", NULL);
}
END_TEST

START_TEST(device_specs_and_aliases)
{
    ck_assert_ptr_eq(clrt_device_get("cuda:1"), clrt_gpu(1));
    ck_assert_ptr_eq(clrt_device_get("gpu:1"), clrt_gpu(1));
    ck_assert_ptr_eq(clrt_device_get("gpu"), clrt_gpu(0));
    ck_assert_ptr_eq(clrt_device_get("cuda"), clrt_gpu(0));
    ck_assert_ptr_eq(clrt_device_get("cuda:0"), clrt_gpu(0));
    ck_assert_ptr_eq(clrt_device_get("cpu"), cpu());
    ck_assert_ptr_eq(clrt_device_get("cpu:0"), cpu());
}
END_TEST

/* The stub creates no contexts: every use of its GPUs fails with an error
 * that names the device and the OpenCL error, and PoCL keeps working. */
START_TEST(unusable_gpu_fails_cleanly)
{
    clrt_device *g0 = TU_NONNULL(clrt_gpu(0));
    int64_t shape[1] = {5};
    for (int attempt = 0; attempt < 2; attempt++) {
        ck_assert_ptr_null(clrt_zeros(g0, CLRT_F32, 1, shape));
        tu_assert_error(CLRT_EOPENCL, "clCreateContext", "CL_DEVICE_NOT_AVAILABLE", "gpu:0",
                        "Stub GPU 0", NULL);
    }
    TU_OK(clrt_device_synchronize(g0)); /* nothing was ever queued */

    clrt_tensor *x = TU_NONNULL(clrt_full(cpu(), CLRT_F32, 1, shape, 2.5));
    ck_assert_ptr_null(clrt_tensor_to(x, g0));
    tu_assert_error(CLRT_EOPENCL, "gpu:0", NULL);
    float back[5];
    TU_OK(clrt_to_host(x, back, sizeof back));
    for (int i = 0; i < 5; i++)
        ck_assert_float_eq(back[i], 2.5f);
    ck_assert_int_eq(clrt_tensor_refcount(x), 1);
    clrt_tensor_release(x);
}
END_TEST

/* The size limit is checked before the device is even opened. */
START_TEST(gpu_allocation_limit)
{
    int64_t shape[2] = {(int64_t)1 << 20, (int64_t)2561}; /* just over 10 GiB of floats */
    ck_assert_ptr_null(clrt_empty(TU_NONNULL(clrt_gpu(0)), CLRT_F32, 2, shape));
    tu_assert_error(CLRT_ENOMEM, "gpu:0", "CL_DEVICE_MAX_MEM_ALLOC_SIZE", "10737418240", NULL);
}
END_TEST

/* --- CLRT_VISIBLE_DEVICES --- */

START_TEST(visible_1_keeps_only_the_second)
{
    ck_assert_int_eq(clrt_num_gpus(), 1);
    ck_assert_str_eq(model(TU_NONNULL(clrt_gpu(0))), "Stub GPU 1");
    ck_assert_str_eq(clrt_device_str(clrt_gpu(0)), "gpu:0");
    ck_assert_ptr_eq(clrt_device_at(1), cpu());
    ck_assert_ptr_null(clrt_gpu(1));
    tu_assert_error(CLRT_ENODEV, "1 GPU", "CLRT_VISIBLE_DEVICES", NULL);
    clrt_device *all[2];
    ck_assert_int_eq(clrt_try_all_gpus(all, 2), 1);
}
END_TEST

START_TEST(visible_1_0_reorders)
{
    ck_assert_int_eq(clrt_num_gpus(), 2);
    ck_assert_str_eq(model(TU_NONNULL(clrt_gpu(0))), "Stub GPU 1");
    ck_assert_str_eq(model(TU_NONNULL(clrt_gpu(1))), "Stub GPU 0");
    ck_assert_str_eq(clrt_device_str(clrt_gpu(1)), "gpu:1");
    /* The loader's indices stay the driver's: gpu:0 is its device 1. */
    unsigned p0, d0, p1, d1;
    opencl_index(clrt_gpu(0), &p0, &d0);
    opencl_index(clrt_gpu(1), &p1, &d1);
    ck_assert_uint_eq(p0, p1);
    ck_assert_uint_eq(d0, 1);
    ck_assert_uint_eq(d1, 0);
}
END_TEST

/* --- a driver that fails --- */

/* Runs the first clrt call with stderr sent to a file; returns what it wrote. */
static char *stderr_of_enumeration(int *n_gpus)
{
    char path[] = "/tmp/clrt-stderr-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    *n_gpus = clrt_num_gpus();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    static char text[4096];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    return text;
}

START_TEST(failing_platform_is_skipped_with_a_warning)
{
    int n_gpus = -1;
    const char *err = stderr_of_enumeration(&n_gpus);
    ck_assert_int_eq(n_gpus, 0);
    ck_assert_msg(strstr(err, "skipping OpenCL platform 'NVIDIA CUDA'") &&
                      strstr(err, "CL_OUT_OF_RESOURCES"),
                  "no warning about the failing platform on stderr: '%s'", err);
    clrt_device *c = cpu();
    ck_assert_ptr_eq(clrt_try_gpu(0), c);
    ck_assert_str_eq(model(c), model(TU_NONNULL(clrt_device_get("cpu"))));
    int64_t shape[1] = {3};
    clrt_tensor *x = TU_NONNULL(clrt_ones(c, CLRT_F32, 1, shape));
    float v[3];
    TU_OK(clrt_to_host(x, v, sizeof v));
    ck_assert_float_eq(v[0] + v[1] + v[2], 3.0f);
    clrt_tensor_release(x);
}
END_TEST

/* --- a host whose only OpenCL platform is a GPU one --- */

/* Modules find a home without a CPU device: the default device is gpu:0, so
 * a layer with parameters gets as far as opening it (which the stub
 * refuses, naming it) instead of failing for want of a cpu:0. */
START_TEST(gpu_only_host_builds_on_gpu0)
{
    ck_assert_int_eq(clrt_num_cpus(), 0);
    ck_assert_ptr_null(clrt_cpu());
    tu_assert_error(CLRT_ENODEV, "no device cpu:0", "pocl-opencl-icd", NULL);
    clrt_device *g0 = TU_NONNULL(clrt_gpu(0));
    ck_assert_ptr_eq(clrt_default_device(), g0);
    clrt_module *relu = TU_NONNULL(clrt_relu());
    ck_assert_ptr_eq(clrt_module_device(relu), g0);
    clrt_module_free(relu);
    ck_assert_ptr_null(clrt_linear(3, 4));
    tu_assert_error(CLRT_EOPENCL, "clCreateContext", "gpu:0", "Stub GPU 0", NULL);
    ck_assert_msg(strstr(clrt_last_error(), "cpu") == NULL, "%s", clrt_last_error());
}
END_TEST

typedef struct {
    const char *name;
    const TTest *tests[8];
} scenario;

int main(int argc, char **argv)
{
    const scenario scenarios[] = {
        {"gpus",
         {gpus_come_first, gpu_info_is_the_drivers, try_gpu_falls_back_to_cpu,
          gpu_out_of_range_says_how_many, device_specs_and_aliases, unusable_gpu_fails_cleanly,
          gpu_allocation_limit, NULL}},
        {"visible_1", {visible_1_keeps_only_the_second, NULL}},
        {"visible_1_0", {visible_1_0_reorders, NULL}},
        {"failing", {failing_platform_is_skipped_with_a_warning, NULL}},
        {"gpu_only", {gpu_only_host_builds_on_gpu0, NULL}},
    };
    for (size_t i = 0; argc == 2 && i < sizeof scenarios / sizeof *scenarios; i++) {
        if (strcmp(argv[1], scenarios[i].name) != 0)
            continue;
        Suite *s = suite_create("stub_gpus");
        TCase *tc = tu_tcase(scenarios[i].name);
        tcase_set_timeout(tc, 120);
        for (const TTest *const *t = scenarios[i].tests; *t; t++)
            tcase_add_test(tc, *t);
        suite_add_tcase(s, tc);
        return tu_run(s);
    }
    fprintf(stderr, "usage: %s gpus|visible_1|visible_1_0|failing|gpu_only\n", argv[0]);
    return 2;
}
