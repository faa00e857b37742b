/* The device memory budget (issue 14, defect 4) and the cache of released
 * buffers (buffer_cache.c): clrt counts the bytes of
 * the buffers it creates on each device and refuses, with CLRT_ENOMEM
 * naming the device, the bytes asked, the bytes in use and the limit, an
 * allocation that would take the total above the device's global memory
 * (or CLRT_MEMORY_LIMIT). Drivers that allocate lazily (PoCL) accepted
 * five 4 GiB tensors on an 11 GiB device before. A device whose buffers
 * are host memory is budgeted by what the process may take from the host
 * too (issue 36: under `ulimit -v` PoCL aborted on its failed allocation).
 *
 * Each test sets its environment first: check runs every test in a fresh
 * child process of main, and the library reads CLRT_* variables at its first
 * use. Poisoning is off here: it would write every byte of gigabytes this
 * suite only reserves. */
#include "testutil.h"

#include "runtime/device/device_internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

static void set_env(const char *limit)
{
    setenv("CLRT_POISON", "0", 1);
    if (limit)
        setenv("CLRT_MEMORY_LIMIT", limit, 1);
    else
        unsetenv("CLRT_MEMORY_LIMIT");
}

static char *ull(unsigned long long v, char *buf)
{
    sprintf(buf, "%llu", v);
    return buf;
}

/* Tensors of `chunk` bytes until one is refused; returns how many were
 * made (released before returning). The refusal must name everything. */
static int fill_until_refused(clrt_device *d, uint64_t chunk, uint64_t limit, int max)
{
    clrt_tensor *held[64] = {NULL};
    int64_t n = (int64_t)(chunk / 4);
    int made = 0;
    ck_assert_int_le(max, 64);
    while (made < max && (held[made] = clrt_empty(d, CLRT_F32, 1, &n)) != NULL)
        made++;
    ck_assert_int_lt(made, max); /* refused before max */
    char asked[32], used[32], lim[32];
    tu_assert_error(CLRT_ENOMEM, clrt_device_str(d), ull(chunk, asked),
                    ull((uint64_t)made * chunk, used), ull(limit, lim), "in use", NULL);
    ck_assert_uint_le((uint64_t)made * chunk, limit);
    ck_assert_uint_gt((uint64_t)(made + 1) * chunk, limit);
    for (int i = 0; i < made; i++)
        clrt_tensor_release(held[i]);
    return made;
}

START_TEST(over_commit_is_refused)
{
    set_env(NULL);
    clrt_device_info info;
    TU_OK(clrt_device_info_get(tu_device(), &info));
    /* the global memory, or less where the host has less to give */
    uint64_t budget = tu_device()->mem_budget;
    ck_assert_uint_le(budget, info.global_mem_bytes);
    uint64_t chunk = (uint64_t)4 << 30;
    if (chunk > info.max_alloc_bytes)
        chunk = info.max_alloc_bytes & ~(uint64_t)3;
    if (chunk > budget / 2)
        chunk = (budget / 2) & ~(uint64_t)3;
    int max = (int)(budget / chunk) + 2;
    int made = fill_until_refused(tu_device(), chunk, budget, max);
    ck_assert_int_eq(made, (int)(budget / chunk));
    /* Released bytes are available again. */
    int64_t n = (int64_t)(chunk / 4);
    clrt_tensor *again = TU_NONNULL(clrt_empty(tu_device(), CLRT_F32, 1, &n));
    clrt_tensor_release(again);
}
END_TEST

START_TEST(limit_in_bytes)
{
    set_env("1000000");
    ck_assert_int_eq(fill_until_refused(tu_device(), 400000, 1000000, 8), 2);
    tu_assert_error(CLRT_ENOMEM, "CLRT_MEMORY_LIMIT", NULL);
    /* Views share their storage: they cost nothing more. */
    int64_t n = 100000, half[2] = {2, 50000};
    clrt_tensor *a = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 1, &n));
    clrt_tensor *b = TU_NONNULL(clrt_zeros(tu_device(), CLRT_F32, 1, &n));
    clrt_tensor *va = TU_NONNULL(clrt_reshape(a, 2, half));
    clrt_tensor *vb = TU_NONNULL(clrt_reshape(b, 2, half));
    clrt_tensor_release(a);
    clrt_tensor_release(va); /* a's storage goes: room for one more */
    clrt_tensor *c = TU_NONNULL(clrt_ones(tu_device(), CLRT_F32, 1, &n));
    ck_assert_ptr_null(clrt_ones(tu_device(), CLRT_F32, 1, &n));
    /* An op's result counts too: refused, as an error. */
    ck_assert_ptr_null(clrt_add(c, c));
    tu_assert_error(CLRT_ENOMEM, clrt_device_str(tu_device()), NULL);
    clrt_tensor_release(vb);
    clrt_tensor_release(b);
    clrt_tensor *sum = TU_NONNULL(clrt_add(c, c));
    float *v = tu_read(sum);
    for (int64_t i = 0; i < n; i++)
        ck_assert_float_eq(v[i], 2.0f);
    free(v);
    clrt_tensor_release(sum);
    clrt_tensor_release(c);
}
END_TEST

START_TEST(limit_in_percent)
{
    set_env("1%");
    clrt_device_info info;
    TU_OK(clrt_device_info_get(tu_device(), &info));
    uint64_t limit = info.global_mem_bytes / 100;
    uint64_t chunk = (limit / 3) & ~(uint64_t)3;
    ck_assert_int_eq(fill_until_refused(tu_device(), chunk, limit, 8), 3);
}
END_TEST

/* Released tensors' buffers are cached for the next tensor of their size
 * (no new buffer), and an allocation that the cached bytes would push over
 * the limit empties the cache first instead of failing. */
START_TEST(cache_reuse_and_flush)
{
    set_env("1000000");
    clrt_device *d = tu_device();
    int64_t n = 100000, big = 200000;
    clrt_tensor *a = TU_NONNULL(clrt_zeros(d, CLRT_F32, 1, &n));
    uint64_t made = clrt_device_buffers_made(d);
    clrt_tensor_release(a);
    ck_assert_uint_eq(clrt_device_cached_bytes(d), 400000);
    clrt_tensor *b = TU_NONNULL(clrt_zeros(d, CLRT_F32, 1, &n));
    ck_assert_uint_eq(clrt_device_buffers_made(d), made); /* a's buffer again */
    ck_assert_uint_eq(clrt_device_cached_bytes(d), 0);
    clrt_tensor_release(b);
    clrt_tensor *c = TU_NONNULL(clrt_zeros(d, CLRT_F32, 1, &big)); /* 400000 cached + 800000 */
    ck_assert_uint_eq(clrt_device_cached_bytes(d), 0);
    float *v = tu_read(c);
    ck_assert_float_eq(v[big - 1], 0.0f);
    free(v);
    clrt_tensor_release(c);
    TU_OK(clrt_device_empty_cache(d));
    ck_assert_uint_eq(clrt_device_cached_bytes(d), 0);
}
END_TEST

/* VmSize of this process, from /proc/self/status. */
static uint64_t vm_size(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    ck_assert_uint_gt(kb, 0);
    return (uint64_t)kb * 1024;
}

/* Under RLIMIT_AS (`ulimit -v`, 2 GiB more than this process maps when the
 * test starts), 64 MiB tensors filled (the driver allocates their memory
 * then) are refused by clrt with CLRT_ENOMEM naming the limit, and the
 * library works on after it. Before, the budget was the device's 11 GiB
 * and PoCL aborted the process: "pocl_create_migration_commands:
 * Assertion `p->mem_ptr != NULL' failed". */
START_TEST(rlimit_as_is_respected)
{
    set_env(NULL);
    uint64_t limit = vm_size() + ((uint64_t)2 << 30);
    struct rlimit r = {(rlim_t)limit, (rlim_t)limit};
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &r), 0);
    clrt_device *d = tu_device();
    if (!d->host_pool) {
        tu_skip("%s keeps its buffers in its own memory: RLIMIT_AS does not bound them",
                clrt_device_str(d));
        return;
    }
    ck_assert_uint_lt(d->mem_budget, limit);
    clrt_tensor *held[64] = {NULL};
    int64_t n = (int64_t)(16 << 20); /* floats: 64 MiB */
    int made = 0;
    while (made < 64 && (held[made] = clrt_empty(d, CLRT_F32, 1, &n)) != NULL) {
        TU_OK(clrt_fill_(held[made], 1.0));
        TU_OK(clrt_device_synchronize(d));
        made++;
    }
    ck_assert_int_lt(made, 64);
    tu_assert_error(CLRT_ENOMEM, clrt_device_str(d), "RLIMIT_AS", "in use", NULL);
    ck_assert_uint_le((uint64_t)made * (64 << 20), d->mem_budget);
    for (int i = 0; i < made; i++)
        clrt_tensor_release(held[i]);
    clrt_tensor *again = TU_NONNULL(clrt_full(d, CLRT_F32, 1, &n, 2.0));
    clrt_tensor *total = TU_NONNULL(clrt_sum(again));
    double v = 0;
    TU_OK(clrt_item(total, &v));
    ck_assert_double_eq(v, 2.0 * (double)n);
    clrt_tensor_release(total);
    clrt_tensor_release(again);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("memory");
    TCase *tc = tu_tcase("budget");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, over_commit_is_refused);
    tcase_add_test(tc, limit_in_bytes);
    tcase_add_test(tc, limit_in_percent);
    tcase_add_test(tc, cache_reuse_and_flush);
    suite_add_tcase(s, tc);
    TCase *host = tu_tcase("host");
    tcase_set_timeout(host, 300);
    tcase_set_tags(host, TU_MAY_SKIP);
    tcase_add_test(host, rlimit_as_is_respected);
    suite_add_tcase(s, host);
    return tu_run(s);
}
