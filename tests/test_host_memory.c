/* What the process may take from the host (runtime/core/host_memory.c,
 * issue 36 item 5): the cap from each limit with its headroom and the
 * reason naming the binding one, and the figures read from a fake root
 * holding /proc files and cgroup v1 and v2 hierarchies as Linux lays them
 * out (the live system's are whatever this machine has). */
#include "testutil.h"

#include "runtime/core/host_memory_internal.h"
#include "test_data_files.h"

#include <string.h>

#define GIB ((uint64_t)1 << 30)
#define MIB ((uint64_t)1 << 20)

static clrt__host_memory unlimited(void)
{
    clrt__host_memory m = {0, 0, CLRT__NO_LIMIT, 0, CLRT__NO_LIMIT, 0, CLRT__NO_LIMIT, 0};
    return m;
}

START_TEST(cap_from_each_limit)
{
    char why[256];
    clrt__host_memory m = unlimited();
    ck_assert_uint_eq(clrt__host_memory_cap(&m, why, sizeof why), CLRT__NO_LIMIT);
    ck_assert_str_eq(why, "");
    /* Available memory less a tenth of the total (at least 1 GiB). */
    m.mem_total = 24 * GIB, m.mem_available = 20 * GIB;
    uint64_t head = 24 * GIB / 10;
    ck_assert_uint_eq(clrt__host_memory_cap(&m, why, sizeof why), 20 * GIB - head);
    ck_assert_ptr_nonnull(strstr(why, "MemAvailable"));
    m.mem_total = 4 * GIB, m.mem_available = 3 * GIB;
    ck_assert_uint_eq(clrt__host_memory_cap(&m, why, sizeof why), 2 * GIB);
    /* RLIMIT_AS (ulimit -v) binds: what is left of it less 1 GiB or a
     * quarter of it. */
    m.mem_total = 64 * GIB, m.mem_available = 60 * GIB;
    m.rlimit_as = 4 * GIB, m.vm_size = 600 * MIB;
    ck_assert_uint_eq(clrt__host_memory_cap(&m, why, sizeof why), 4 * GIB - 600 * MIB - GIB);
    ck_assert_ptr_nonnull(strstr(why, "RLIMIT_AS"));
    ck_assert_ptr_nonnull(strstr(why, "4294967296"));
    m.rlimit_as = 12 * GIB, m.vm_size = 0;
    ck_assert_uint_eq(clrt__host_memory_cap(&m, why, sizeof why), 9 * GIB);
    /* RLIMIT_DATA likewise. */
    m.rlimit_data = 3 * GIB, m.vm_data = 0;
    ck_assert_uint_eq(clrt__host_memory_cap(&m, why, sizeof why), 2 * GIB);
    ck_assert_ptr_nonnull(strstr(why, "RLIMIT_DATA"));
    /* The cgroup's limit less its usage and a tenth (at least 256 MiB). */
    m.cgroup_limit = 2 * GIB, m.cgroup_usage = 512 * MIB;
    ck_assert_uint_eq(clrt__host_memory_cap(&m, why, sizeof why), 2 * GIB - 512 * MIB - 256 * MIB);
    ck_assert_ptr_nonnull(strstr(why, "cgroup"));
    /* A limit already reached leaves nothing. */
    m.rlimit_as = 700 * MIB, m.vm_size = 600 * MIB;
    ck_assert_uint_eq(clrt__host_memory_cap(&m, NULL, 0), 0);
}
END_TEST

static char root[256];

/* root/rel with the folders above it. */
static void put(const char *rel, const char *text)
{
    char path[1024], cmd[1100];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    ck_assert_int_eq(system(cmd), 0);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

static void proc_files(const char *cgroup, const char *mountinfo)
{
    put("proc/meminfo", "MemTotal:       24684092 kB\nMemFree:         1000 kB\n"
                        "MemAvailable:   20000000 kB\n");
    put("proc/self/status", "Name:\ttest\nVmPeak:\t  700000 kB\nVmSize:\t  600000 kB\n"
                            "VmData:\t   50000 kB\n");
    put("proc/self/cgroup", cgroup);
    put("proc/self/mountinfo", mountinfo);
}

START_TEST(reads_proc_and_cgroup_v1)
{
    tdf_mkdtemp(root, sizeof root);
    proc_files("5:devices:/\n4:memory:/jobs/run7\n0::/\n",
               "24 1 0:22 / / rw - ext4 /dev/vda rw\n"
               "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
               "36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n");
    put("sys/fs/cgroup/memory/jobs/run7/memory.limit_in_bytes", "9223372036854771712\n");
    put("sys/fs/cgroup/memory/jobs/run7/memory.usage_in_bytes", "1610612736\n");
    put("sys/fs/cgroup/memory/jobs/run7/memory.stat",
        "cache 0\nhierarchical_memory_limit 4294967296\ntotal_cache 5\n"
        "total_inactive_file 536870912\n");
    clrt__host_memory m;
    clrt__host_memory_read(root, &m);
    ck_assert_uint_eq(m.mem_total, 24684092ull * 1024);
    ck_assert_uint_eq(m.mem_available, 20000000ull * 1024);
    ck_assert_uint_eq(m.vm_size, 600000ull * 1024);
    ck_assert_uint_eq(m.vm_data, 50000ull * 1024);
    ck_assert_uint_eq(m.cgroup_limit, 4 * GIB); /* the parent's, through the hierarchy */
    ck_assert_uint_eq(m.cgroup_usage, GIB);     /* less the inactive file pages */
    /* No limit anywhere: v1's page-counter maximum means none. */
    put("sys/fs/cgroup/memory/jobs/run7/memory.stat",
        "hierarchical_memory_limit 9223372036854771712\n");
    clrt__host_memory_read(root, &m);
    ck_assert_uint_eq(m.cgroup_limit, CLRT__NO_LIMIT);
    tdf_rmdir(root);
}
END_TEST

START_TEST(reads_cgroup_v2_tightest_ancestor)
{
    tdf_mkdtemp(root, sizeof root);
    proc_files("0::/user.slice/job\n",
               "24 1 0:22 / / rw - ext4 /dev/vda rw\n"
               "30 24 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n");
    put("sys/fs/cgroup/user.slice/job/memory.max", "max\n");
    put("sys/fs/cgroup/user.slice/job/memory.current", "104857600\n");
    put("sys/fs/cgroup/user.slice/memory.max", "3221225472\n");
    put("sys/fs/cgroup/user.slice/memory.current", "2147483648\n");
    put("sys/fs/cgroup/user.slice/memory.stat", "anon 1\ninactive_file 1073741824\n");
    clrt__host_memory m;
    clrt__host_memory_read(root, &m);
    ck_assert_uint_eq(m.cgroup_limit, 3 * GIB);
    ck_assert_uint_eq(m.cgroup_usage, GIB);
    m.rlimit_as = m.rlimit_data = CLRT__NO_LIMIT; /* whatever this test runs under */
    char why[256];
    ck_assert_uint_eq(clrt__host_memory_cap(&m, why, sizeof why), 2 * GIB - 3 * GIB / 10);
    ck_assert_ptr_nonnull(strstr(why, "cgroup"));
    /* A cgroup mounted at a sub-root (a container's view) is found under it. */
    proc_files("0::/ctr/job\n", "30 24 0:26 /ctr /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
    put("sys/fs/cgroup/job/memory.max", "1073741824\n");
    put("sys/fs/cgroup/job/memory.current", "0\n");
    clrt__host_memory_read(root, &m);
    ck_assert_uint_eq(m.cgroup_limit, GIB);
    tdf_rmdir(root);
}
END_TEST

/* The live system: whatever it has, the figures are sane. */
START_TEST(reads_this_host)
{
    clrt__host_memory m;
    clrt__host_memory_read("", &m);
    ck_assert_uint_gt(m.mem_total, 0);
    ck_assert_uint_le(m.mem_available, m.mem_total);
    ck_assert_uint_gt(m.vm_size, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("host_memory");
    TCase *tc = tu_tcase("host_memory");
    tcase_add_test(tc, cap_from_each_limit);
    tcase_add_test(tc, reads_proc_and_cgroup_v1);
    tcase_add_test(tc, reads_cgroup_v2_tightest_ancestor);
    tcase_add_test(tc, reads_this_host);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
