/* How much host memory the process may still take
 * (host_memory_internal.h): /proc/meminfo, /proc/self/status, getrlimit
 * and the memory cgroup's files, read with stdio (pseudo-files report no
 * size), every one optional: what cannot be read limits nothing. */
#include "runtime/core/host_memory_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define GIB ((uint64_t)1 << 30)
#define MIB ((uint64_t)1 << 20)
#define PATH_CAP 1024
/* cgroup v1 reports "no limit" as a page-counter maximum near 2^63. */
#define CGROUP_UNLIMITED ((uint64_t)1 << 62)

/* The number after `key` on the first line of path that starts with it
 * (times 1024 when the line ends in "kB"), or fallback. */
static uint64_t keyed_value(const char *path, const char *key, uint64_t fallback)
{
    FILE *f = fopen(path, "r");
    char line[512];
    size_t n = strlen(key);
    uint64_t v = fallback;
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, n) != 0)
            continue;
        char *end;
        unsigned long long x = strtoull(line + n, &end, 10);
        if (end != line + n)
            v = strstr(end, "kB") ? (uint64_t)x * 1024 : (uint64_t)x;
        break;
    }
    if (f)
        fclose(f);
    return v;
}

/* A file holding one number, or "max" (CLRT__NO_LIMIT); fallback else. */
static uint64_t file_value(const char *path, uint64_t fallback)
{
    FILE *f = fopen(path, "r");
    char text[64] = "";
    int ok = f && fgets(text, sizeof text, f) != NULL;
    if (f)
        fclose(f);
    if (!ok)
        return fallback;
    if (strncmp(text, "max", 3) == 0)
        return CLRT__NO_LIMIT;
    char *end;
    unsigned long long x = strtoull(text, &end, 10);
    return end != text ? (uint64_t)x : fallback;
}

static uint64_t rlimit_of(int resource)
{
    struct rlimit r;
    if (getrlimit(resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY)
        return CLRT__NO_LIMIT;
    return (uint64_t)r.rlim_cur;
}

/* Whether comma-separated list holds word. */
static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, word, n) == 0 && (p[n] == ',' || p[n] == '\0' || p[n] == '\n'))
            return 1;
    return 0;
}

/* The process's cgroup path for v1's memory controller (v2 = 0) or v2's
 * unified hierarchy (v2 = 1) into out; 0 when it has none. */
static int cgroup_path(const char *root, int v2, char *out, size_t cap)
{
    char path[PATH_CAP], line[PATH_CAP];
    snprintf(path, sizeof path, "%s/proc/self/cgroup", root);
    FILE *f = fopen(path, "r");
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
        if (!b)
            continue;
        *b = '\0';
        if (v2 ? (a[1] == '\0' && strncmp(line, "0:", 2) == 0) : has_word(a + 1, "memory")) {
            b[strcspn(b + 1, "\n") + 1] = '\0';
            snprintf(out, cap, "%s", b + 1);
            found = 1;
        }
    }
    if (f)
        fclose(f);
    return found;
}

/* The folder of the cgroup at cg (a path in the hierarchy) in the
 * hierarchy's mount: v1's with the memory controller, or v2's. */
static int cgroup_dir(const char *root, int v2, const char *cg, char *out, size_t cap)
{
    char path[PATH_CAP], line[2 * PATH_CAP];
    snprintf(path, sizeof path, "%s/proc/self/mountinfo", root);
    FILE *f = fopen(path, "r");
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        char mroot[PATH_CAP], mpoint[PATH_CAP], fstype[64], super[PATH_CAP];
        const char *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*s %*s %*s %1023s %1023s", mroot, mpoint) != 2 ||
            sscanf(dash + 3, "%63s %*s %1023s", fstype, super) != 2)
            continue;
        if (v2 ? strcmp(fstype, "cgroup2") != 0
               : strcmp(fstype, "cgroup") != 0 || !has_word(super, "memory"))
            continue;
        size_t n = strcmp(mroot, "/") == 0 ? 0 : strlen(mroot);
        if (strncmp(cg, mroot, n) != 0 || (cg[n] != '/' && cg[n] != '\0'))
            continue; /* not below this mount's root */
        snprintf(out, cap, "%s%s%s", root, mpoint, cg + n);
        found = 1;
    }
    if (f)
        fclose(f);
    return found;
}

/* Keeps in m the cgroup whose limit less usage is least. */
static void consider(clrt__host_memory *m, uint64_t limit, uint64_t usage)
{
    if (limit >= CGROUP_UNLIMITED)
        return;
    uint64_t left = limit > usage ? limit - usage : 0;
    uint64_t have = m->cgroup_limit == CLRT__NO_LIMIT   ? CLRT__NO_LIMIT
                    : m->cgroup_limit > m->cgroup_usage ? m->cgroup_limit - m->cgroup_usage
                                                        : 0;
    if (left < have)
        m->cgroup_limit = limit, m->cgroup_usage = usage;
}

/* v1: the memory controller's hierarchical limit (its ancestors' too). */
static void cgroup_v1(const char *root, clrt__host_memory *m)
{
    char cg[PATH_CAP], dir[2 * PATH_CAP + 64], path[3 * PATH_CAP];
    if (!cgroup_path(root, 0, cg, sizeof cg) || !cgroup_dir(root, 0, cg, dir, sizeof dir))
        return;
    snprintf(path, sizeof path, "%s/memory.limit_in_bytes", dir);
    uint64_t limit = file_value(path, CLRT__NO_LIMIT);
    snprintf(path, sizeof path, "%s/memory.stat", dir);
    uint64_t hier = keyed_value(path, "hierarchical_memory_limit ", CLRT__NO_LIMIT);
    uint64_t inactive = keyed_value(path, "total_inactive_file ", 0);
    snprintf(path, sizeof path, "%s/memory.usage_in_bytes", dir);
    uint64_t usage = file_value(path, 0);
    usage = usage > inactive ? usage - inactive : 0;
    consider(m, hier < limit ? hier : limit, usage);
}

/* v2: memory.max of the process's cgroup and of each one above it. */
static void cgroup_v2(const char *root, clrt__host_memory *m)
{
    char cg[PATH_CAP], dir[2 * PATH_CAP + 64], path[3 * PATH_CAP];
    if (!cgroup_path(root, 1, cg, sizeof cg))
        return;
    for (;;) {
        if (!cgroup_dir(root, 1, cg, dir, sizeof dir))
            return;
        snprintf(path, sizeof path, "%s/memory.max", dir);
        uint64_t limit = file_value(path, CLRT__NO_LIMIT);
        snprintf(path, sizeof path, "%s/memory.current", dir);
        uint64_t usage = file_value(path, 0);
        snprintf(path, sizeof path, "%s/memory.stat", dir);
        uint64_t inactive = keyed_value(path, "inactive_file ", 0);
        consider(m, limit, usage > inactive ? usage - inactive : 0);
        char *slash = strrchr(cg, '/');
        if (!slash || cg[1] == '\0')
            return;
        slash[slash == cg ? 1 : 0] = '\0'; /* the parent; "/" after "/a" */
    }
}

void clrt__host_memory_read(const char *root, clrt__host_memory *m)
{
    char path[PATH_CAP];
    snprintf(path, sizeof path, "%s/proc/meminfo", root);
    m->mem_total = keyed_value(path, "MemTotal:", 0);
    m->mem_available = keyed_value(path, "MemAvailable:", 0);
    snprintf(path, sizeof path, "%s/proc/self/status", root);
    m->vm_size = keyed_value(path, "VmSize:", 0);
    m->vm_data = keyed_value(path, "VmData:", 0);
    m->rlimit_as = rlimit_of(RLIMIT_AS);
    m->rlimit_data = rlimit_of(RLIMIT_DATA);
    m->cgroup_limit = CLRT__NO_LIMIT;
    m->cgroup_usage = 0;
    cgroup_v1(root, m);
    cgroup_v2(root, m);
}

static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* limit - used - headroom, 0 when that is not positive. */
static uint64_t left_over(uint64_t limit, uint64_t used, uint64_t headroom)
{
    return limit > used && limit - used > headroom ? limit - used - headroom : 0;
}

/* Keeps the least cap and its reason. */
typedef struct {
    uint64_t cap;
    char *why;
    size_t why_size;
} least;

static void offer(least *l, uint64_t cap, const char *what, uint64_t limit, uint64_t used,
                  uint64_t headroom)
{
    if (cap >= l->cap)
        return;
    l->cap = cap;
    if (l->why && l->why_size)
        snprintf(l->why, l->why_size,
                 "%s %" PRIu64 " bytes, %" PRIu64 " in use, %" PRIu64
                 " left for the rest of the process and the host",
                 what, limit, used, headroom);
}

uint64_t clrt__host_memory_cap(const clrt__host_memory *m, char *why, size_t why_size)
{
    least l = {CLRT__NO_LIMIT, why, why_size};
    if (why && why_size)
        why[0] = '\0';
    if (m->mem_available) {
        uint64_t head = max_u64(GIB, m->mem_total / 10);
        offer(&l, left_over(m->mem_available, 0, head), "host memory: MemAvailable",
              m->mem_available, 0, head);
    }
    if (m->rlimit_as != CLRT__NO_LIMIT) {
        uint64_t free_as = m->rlimit_as > m->vm_size ? m->rlimit_as - m->vm_size : 0;
        uint64_t head = max_u64(GIB, free_as / 4);
        offer(&l, left_over(m->rlimit_as, m->vm_size, head), "RLIMIT_AS (ulimit -v)", m->rlimit_as,
              m->vm_size, head);
    }
    if (m->rlimit_data != CLRT__NO_LIMIT) {
        uint64_t free_data = m->rlimit_data > m->vm_data ? m->rlimit_data - m->vm_data : 0;
        uint64_t head = max_u64(GIB, free_data / 4);
        offer(&l, left_over(m->rlimit_data, m->vm_data, head), "RLIMIT_DATA (ulimit -d)",
              m->rlimit_data, m->vm_data, head);
    }
    if (m->cgroup_limit != CLRT__NO_LIMIT) {
        uint64_t head = max_u64(256 * MIB, m->cgroup_limit / 10);
        offer(&l, left_over(m->cgroup_limit, m->cgroup_usage, head), "memory cgroup limit",
              m->cgroup_limit, m->cgroup_usage, head);
    }
    return l.cap;
}
