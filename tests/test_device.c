/* The device model on the host's real drivers (PoCL here; NVIDIA's where
 * there is one), and with no OpenCL platform at all: `test_device no_platform`
 * runs under OCL_ICD_VENDORS=<empty dir> (tests/stub_icd/CMakeLists.txt). */
#include "testutil.h"

#include "runtime/device/idle_internal.h"

#include <string.h>

static const char *const bad_specs[] = {"cuda0", "tpu",    "cpu:x", "gpu:-1",  "",
                                        "cpu:",  "gpu:1x", "GPU",   "cpu:0:1", "cuda:+1"};

/* --- real drivers --- */

/* The first CPU device is "cpu" (= "cpu:0"), after the GPUs; a host without
 * one says so and how to get one. */
START_TEST(cpu_is_named_cpu)
{
    ck_assert_int_eq(clrt_device_count(), clrt_num_gpus() + clrt_num_cpus());
    if (clrt_num_cpus() == 0) {
        ck_assert_ptr_null(clrt_cpu());
        tu_assert_error(CLRT_ENODEV, "no device cpu:0", "0 CPU device", "pocl-opencl-icd", NULL);
        return;
    }
    clrt_device *c = TU_NONNULL(clrt_cpu());
    ck_assert_str_eq(clrt_device_str(c), "cpu");
    ck_assert_ptr_eq(clrt_device_get("cpu"), c);
    ck_assert_ptr_eq(clrt_device_get("cpu:0"), c);
    ck_assert_ptr_eq(clrt_device_at(clrt_num_gpus()), c);
}
END_TEST

/* The default device when nothing sets it: the first CPU device, else gpu:0. */
static clrt_device *automatic_default(void)
{
    return TU_NONNULL(clrt_num_cpus() > 0 ? clrt_cpu() : clrt_gpu(0));
}

/* The default device: CLRT_DEFAULT_DEVICE (tu_run sets it to the test
 * device) or the automatic choice; settable to any of the runtime's
 * devices, and back with NULL. */
START_TEST(default_device)
{
    const char *spec = getenv("CLRT_DEFAULT_DEVICE");
    clrt_device *automatic = spec ? TU_NONNULL(clrt_device_get(spec)) : automatic_default();
    ck_assert_ptr_eq(TU_NONNULL(clrt_default_device()), automatic);
    clrt_device *last = TU_NONNULL(clrt_device_at(clrt_device_count() - 1));
    TU_OK(clrt_set_default_device(last));
    ck_assert_ptr_eq(clrt_default_device(), last);
    clrt_device_info bogus_storage;
    ck_assert_int_eq(clrt_set_default_device((clrt_device *)(void *)&bogus_storage), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "clrt_set_default_device", "not one of the", NULL);
    ck_assert_ptr_eq(clrt_default_device(), last);
    TU_OK(clrt_set_default_device(NULL));
    ck_assert_ptr_eq(clrt_default_device(), automatic);
}
END_TEST

/* CLRT_DEFAULT_DEVICE names the default; one naming no device gets the
 * automatic choice (and a warning). Read at the library's first use: these
 * forked tests set it before any call. */
START_TEST(default_device_from_the_environment)
{
    setenv("CLRT_DEFAULT_DEVICE", _i == 0 ? "gpu:9999" : "cpu", 1);
    clrt_device *d = TU_NONNULL(clrt_default_device());
    if (_i == 0 || clrt_num_cpus() == 0)
        ck_assert_ptr_eq(d, automatic_default());
    else
        ck_assert_ptr_eq(d, clrt_cpu());
}
END_TEST

/* Every device's name follows from its place: gpu:N first, then cpu, cpu:N. */
START_TEST(names_follow_the_order)
{
    int n = clrt_device_count(), g = clrt_num_gpus();
    ck_assert_int_ge(n, 1);
    for (int i = 0; i < n; i++) {
        clrt_device *d = TU_NONNULL(clrt_device_at(i));
        char want[32];
        if (i < g)
            snprintf(want, sizeof want, "gpu:%d", i);
        else if (i == g)
            snprintf(want, sizeof want, "cpu");
        else
            snprintf(want, sizeof want, "cpu:%d", i - g);
        ck_assert_str_eq(clrt_device_str(d), want);
        ck_assert_ptr_eq(clrt_device_get(want), d);
    }
    ck_assert_ptr_null(clrt_device_at(n));
    tu_assert_error(CLRT_ENODEV, "device(s) exist", NULL);
    ck_assert_ptr_null(clrt_device_at(-1));
    tu_assert_error(CLRT_ENODEV, NULL);
    ck_assert_str_eq(clrt_device_str(NULL), "(null)");
}
END_TEST

static void assert_text(const char *what, const char *s)
{
    ck_assert_msg(s[0] != '\0' && strcmp(s, "?") != 0, "%s is empty or unknown: '%s'", what, s);
}

START_TEST(device_info_is_sane)
{
    for (int i = 0; i < clrt_device_count(); i++) {
        clrt_device *d = TU_NONNULL(clrt_device_at(i));
        clrt_device_info in;
        TU_OK(clrt_device_info_get(d, &in));
        ck_assert_str_eq(in.name, clrt_device_str(d));
        assert_text("model", in.model);
        assert_text("vendor", in.vendor);
        assert_text("platform", in.platform);
        assert_text("platform version", in.platform_version);
        assert_text("driver version", in.driver_version);
        ck_assert_msg(strncmp(in.opencl_c_version, "OpenCL C ", 9) == 0, "OpenCL C version '%s'",
                      in.opencl_c_version);
        if (i >= clrt_num_gpus())
            ck_assert_int_eq(in.kind, CLRT_DEVICE_CPU);
        else
            ck_assert_int_ne(in.kind, CLRT_DEVICE_CPU);
        ck_assert_uint_gt(in.global_mem_bytes, 0);
        ck_assert_uint_gt(in.max_alloc_bytes, 0);
        ck_assert_uint_le(in.max_alloc_bytes, in.global_mem_bytes);
        ck_assert_uint_gt(in.local_mem_bytes, 0);
        ck_assert_uint_ge(in.compute_units, 1);
        ck_assert_uint_ge(in.max_work_group_size, 1);
        ck_assert(in.has_fp64 == 0 || in.has_fp64 == 1);
        ck_assert(in.unified_memory == 0 || in.unified_memory == 1);
        ck_assert(in.gemm_path == CLRT_GEMM_CLBLAST || in.gemm_path == CLRT_GEMM_HOST_BLAS);
        if (in.gemm_path == CLRT_GEMM_HOST_BLAS) /* only where the host's memory is the device's */
            ck_assert(in.kind == CLRT_DEVICE_CPU && in.unified_memory && in.native_kernels);
    }
    ck_assert_int_eq(clrt_device_info_get(NULL, NULL), CLRT_EINVAL);
    clrt_device_info in;
    ck_assert_int_eq(clrt_device_info_get(NULL, &in), CLRT_EINVAL);
    ck_assert_int_eq(clrt_device_info_get(tu_device(), NULL), CLRT_EINVAL);
    ck_assert_str_eq(clrt_device_kind_str(CLRT_DEVICE_GPU), "GPU");
    ck_assert_str_eq(clrt_device_kind_str(CLRT_DEVICE_CPU), "CPU");
    ck_assert_str_eq(clrt_device_kind_str(CLRT_DEVICE_ACCELERATOR), "ACCELERATOR");
}
END_TEST

START_TEST(bad_specs_list_the_accepted_forms)
{
    for (size_t i = 0; i < sizeof bad_specs / sizeof *bad_specs; i++) {
        clrt_clear_error();
        ck_assert_ptr_null(clrt_device_get(bad_specs[i]));
        char quoted[64];
        snprintf(quoted, sizeof quoted, "'%s'", bad_specs[i]);
        tu_assert_error(CLRT_EINVAL, quoted, "accepted forms", "\"cpu:N\"", "\"gpu:N\"",
                        "\"cuda:N\"", NULL);
    }
    ck_assert_ptr_null(clrt_device_get(NULL));
    tu_assert_error(CLRT_EINVAL, "NULL", "accepted forms", NULL);
}
END_TEST

START_TEST(cpu_index_out_of_range_says_how_many)
{
    int ncpu = clrt_num_cpus();
    char spec[32], count[32];
    snprintf(spec, sizeof spec, "cpu:%d", ncpu);
    snprintf(count, sizeof count, "%d CPU device", ncpu);
    ck_assert_ptr_null(clrt_device_get(spec));
    tu_assert_error(CLRT_ENODEV, spec, count, NULL);
}
END_TEST

/* On a host without GPUs the GPU calls fall back or fail as documented; on
 * one with GPUs, gpu:0 is the first device. */
START_TEST(gpu_calls_match_the_host)
{
    clrt_device *c = clrt_num_cpus() > 0 ? clrt_cpu() : NULL, *all[4] = {NULL, NULL, NULL, NULL};
    int g = clrt_num_gpus();
    if (g == 0) {
        ck_assert_ptr_null(clrt_gpu(0));
        tu_assert_error(CLRT_ENODEV, "gpu:0", "0 GPU", NULL);
        ck_assert_ptr_null(clrt_device_get("gpu"));
        tu_assert_error(CLRT_ENODEV, "0 GPU", NULL);
        ck_assert_ptr_eq(clrt_try_gpu(0), c);
        ck_assert_int_eq(clrt_try_all_gpus(all, 4), 1);
        ck_assert_ptr_eq(all[0], c);
        ck_assert_ptr_null(all[1]);
    } else {
        ck_assert_ptr_eq(clrt_try_gpu(0), clrt_device_at(0));
        ck_assert_int_eq(clrt_try_all_gpus(all, 4), g);
        ck_assert_ptr_eq(all[0], clrt_gpu(0));
    }
    ck_assert_ptr_eq(clrt_try_gpu(g + 7), c);
    ck_assert_int_eq(clrt_try_all_gpus(NULL, 1), CLRT_EINVAL);
    ck_assert_int_eq(clrt_try_all_gpus(all, -1), CLRT_EINVAL);
    ck_assert_ptr_null(clrt_gpu(-1));
    tu_assert_error(CLRT_ENODEV, NULL);
}
END_TEST

START_TEST(synchronize)
{
    ck_assert_int_eq(clrt_device_synchronize(NULL), CLRT_EINVAL);
    TU_OK(clrt_device_synchronize(tu_device()));
    int64_t shape[1] = {17};
    clrt_tensor *x = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 1, shape));
    TU_OK(clrt_device_synchronize(tu_device()));
    clrt_tensor_release(x);
}
END_TEST

/* clrt_device_synchronize_all: nothing to wait for before any device is
 * used; after a chain of adds, the device is idle (known without waiting
 * where the device tracks its last command, as CPU devices do), and the
 * values are right. */
START_TEST(synchronize_all)
{
    TU_OK(clrt_device_synchronize_all());
    clrt_device *d = tu_device();
    int64_t shape[1] = {1 << 20};
    clrt_tensor *x = TU_NONNULL(clrt_ones(d, CLRT_F32, 1, shape));
    for (int i = 0; i < 20; i++) {
        clrt_tensor *y = TU_NONNULL(clrt_add(x, x));
        clrt_tensor_release(x);
        x = y;
    }
    TU_OK(clrt_device_synchronize_all());
    if (d->track_idle)
        ck_assert_int_eq(clrt__device_idle(d), 1);
    float last;
    clrt_tensor *tail = TU_NONNULL(clrt_narrow(x, 0, (1 << 20) - 1, 1));
    TU_OK(clrt_to_host(tail, &last, sizeof last));
    ck_assert_float_eq(last, 1048576.0f); /* 2^20 */
    clrt_tensor_release(tail);
    clrt_tensor_release(x);
}
END_TEST

/* A flush submits and returns; what it submitted still computes right. */
START_TEST(flush)
{
    ck_assert_int_eq(clrt_device_flush(NULL), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "clrt_device_flush", "NULL", NULL);
    int64_t shape[1] = {1001};
    clrt_tensor *x = TU_NONNULL(clrt_full(tu_device(), CLRT_F32, 1, shape, 1.5));
    clrt_tensor *y = TU_NONNULL(clrt_add(x, x));
    TU_OK(clrt_device_flush(tu_device()));
    float *h = tu_read(y);
    for (int i = 0; i < 1001; i++)
        ck_assert_float_eq(h[i], 3.0f);
    free(h);
    clrt_tensor_release(y);
    clrt_tensor_release(x);
}
END_TEST

START_TEST(status_names_and_messages)
{
    ck_assert_str_eq(clrt_status_name(CLRT_OK), "CLRT_OK");
    ck_assert_str_eq(clrt_status_name(CLRT_ESHAPE), "CLRT_ESHAPE");
    ck_assert_str_eq(clrt_status_name(CLRT_ENOPLATFORM), "CLRT_ENOPLATFORM");
    ck_assert_str_eq(clrt_status_name((clrt_status)-999), "CLRT_UNKNOWN");
    ck_assert_str_eq(clrt_status_str(CLRT_EDEVMISMATCH), "tensors are on different devices");
    ck_assert_str_eq(clrt_status_str((clrt_status)42), "unknown status");
    ck_assert_ptr_null(clrt_device_get("tpu"));
    ck_assert_int_eq(clrt_last_status(), CLRT_EINVAL);
    clrt_clear_error();
    ck_assert_int_eq(clrt_last_status(), CLRT_OK);
    ck_assert_str_eq(clrt_last_error(), "");
}
END_TEST

/* --- no OpenCL platform --- */

static void assert_no_platform_error(void)
{
    tu_assert_error(CLRT_ENOPLATFORM, "no OpenCL platform", "pocl-opencl-icd", NULL);
}

START_TEST(no_platform_fails_saying_so)
{
    ck_assert_int_eq(clrt_device_count(), CLRT_ENOPLATFORM);
    assert_no_platform_error();
    ck_assert_ptr_null(clrt_cpu());
    assert_no_platform_error();
    ck_assert_ptr_null(clrt_gpu(0));
    assert_no_platform_error();
    ck_assert_ptr_null(clrt_try_gpu(0));
    assert_no_platform_error();
    ck_assert_ptr_null(clrt_device_get("cpu"));
    assert_no_platform_error();
    ck_assert_ptr_null(clrt_device_at(0));
    assert_no_platform_error();
    clrt_device *all[2];
    ck_assert_int_eq(clrt_try_all_gpus(all, 2), CLRT_ENOPLATFORM);
    ck_assert_int_eq(clrt_num_gpus(), 0);
    ck_assert_int_eq(clrt_num_cpus(), 0);
    int64_t shape[1] = {4};
    ck_assert_ptr_null(clrt_zeros(clrt_cpu(), CLRT_F32, 1, shape));
    tu_assert_error(CLRT_EINVAL, "device is NULL", NULL);
}
END_TEST

/* --- platforms without devices (POCL_DEVICES=bogus) --- */

/* Issue 14, defect 6: PoCL's platform answers with no device; the error
 * says which platforms were asked, what they answered, and names the
 * POCL_DEVICES value behind it (it was a bare "no devices"). */
static void assert_no_device_error(void)
{
    tu_assert_error(CLRT_ENODEV, "no OpenCL device", "Portable Computing Language",
                    "CL_DEVICE_NOT_FOUND", "POCL_DEVICES='bogus'", NULL);
}

START_TEST(no_device_fails_saying_what_was_asked)
{
    ck_assert_int_eq(clrt_device_count(), CLRT_ENODEV);
    assert_no_device_error();
    ck_assert_ptr_null(clrt_cpu());
    assert_no_device_error();
    ck_assert_ptr_null(clrt_try_gpu(0));
    assert_no_device_error();
    ck_assert_ptr_null(clrt_device_get("cpu:0"));
    assert_no_device_error();
    ck_assert_int_eq(clrt_num_cpus(), 0);
}
END_TEST

int main(int argc, char **argv)
{
    Suite *s = suite_create("device");
    TCase *tc = tu_tcase("device");
    tcase_set_timeout(tc, 120);
    if (argc == 2 && strcmp(argv[1], "no_platform") == 0) {
        tcase_add_test(tc, no_platform_fails_saying_so);
    } else if (argc == 2 && strcmp(argv[1], "no_device") == 0) {
        tcase_add_test(tc, no_device_fails_saying_what_was_asked);
    } else {
        tcase_add_test(tc, cpu_is_named_cpu);
        tcase_add_test(tc, default_device);
        tcase_add_loop_test(tc, default_device_from_the_environment, 0, 2);
        tcase_add_test(tc, names_follow_the_order);
        tcase_add_test(tc, device_info_is_sane);
        tcase_add_test(tc, bad_specs_list_the_accepted_forms);
        tcase_add_test(tc, cpu_index_out_of_range_says_how_many);
        tcase_add_test(tc, gpu_calls_match_the_host);
        tcase_add_test(tc, synchronize);
        tcase_add_test(tc, synchronize_all);
        tcase_add_test(tc, flush);
        tcase_add_test(tc, status_names_and_messages);
    }
    suite_add_tcase(s, tc);
    return tu_run(s);
}
