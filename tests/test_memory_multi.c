/* Two devices whose buffers are host memory (PoCL's two CPU devices by
 * default) share what the process may take from the host (issue 36, item
 * 5): each device's budget is at most that, and their buffers together
 * are refused past it, with CLRT_ENOMEM naming the limit. Under RLIMIT_AS
 * (2 GiB more than the process maps when the test starts) so that the
 * pool is small; the buffers are only reserved (poisoning off), never
 * touched. */
#include "testutil.h"

#include "runtime/device/device_internal.h"

#include <stdio.h>
#include <sys/resource.h>

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

/* A tensor of `bytes` on d, or NULL. */
static clrt_tensor *block(clrt_device *d, uint64_t bytes)
{
    int64_t n = (int64_t)(bytes / 4);
    return clrt_empty(d, CLRT_F32, 1, &n);
}

START_TEST(host_pool_shared_by_devices)
{
    setenv("CLRT_POISON", "0", 1);
    uint64_t limit = vm_size() + ((uint64_t)2 << 30);
    struct rlimit r = {(rlim_t)limit, (rlim_t)limit};
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &r), 0);
    clrt_device *d0 = tu_device_pair(0), *d1 = tu_device_pair(1);
    if (!d0->host_pool || !d1->host_pool) {
        tu_skip("%s and %s do not both keep their buffers in host memory", clrt_device_str(d0),
                clrt_device_str(d1));
        return;
    }
    uint64_t pool = d0->mem_budget;
    ck_assert_uint_lt(pool, limit);
    ck_assert_uint_eq(d1->mem_budget, pool); /* both the pool's, below their global memory */
    /* Three fifths of the pool on d0, then three fifths on d1: refused. */
    uint64_t part = (pool / 5 * 3) & ~(uint64_t)3;
    clrt_tensor *a = TU_NONNULL(block(d0, part));
    ck_assert_ptr_null(block(d1, part));
    tu_assert_error(CLRT_ENOMEM, clrt_device_str(d1), "host memory", "RLIMIT_AS", NULL);
    ck_assert_uint_eq(atomic_load(&d1->mem_used), 0); /* nothing kept on the refusal */
    /* Released on d0, the room is d1's. */
    clrt_tensor_release(a);
    clrt_tensor *b = TU_NONNULL(block(d1, part));
    clrt_tensor_release(b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("memory_multi");
    TCase *tc = tu_tcase("host");
    tcase_set_timeout(tc, 120);
    tcase_set_tags(tc, TU_MAY_SKIP);
    tcase_add_test(tc, host_pool_shared_by_devices);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
