/* Host allocation wrappers and the allocation-failure hook (alloc_internal.h). */
#include "runtime/core/alloc_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Allocations left before the injected failure (0: none planned), how many
 * have been counted and how many were failed since the last arming. */
static atomic_long countdown;
static atomic_long counted;
static atomic_long injected;

void clrt__alloc_fail_after(long n)
{
    atomic_store(&countdown, n > 0 ? n : 0);
    atomic_store(&counted, 0);
    atomic_store(&injected, 0);
}

long clrt__alloc_failures(void) { return atomic_load(&injected); }

long clrt__alloc_count(void) { return atomic_load(&counted); }

int clrt__alloc_should_fail(void)
{
    atomic_fetch_add_explicit(&counted, 1, memory_order_relaxed);
    if (atomic_load_explicit(&countdown, memory_order_relaxed) <= 0)
        return 0;
    if (atomic_fetch_sub(&countdown, 1) != 1)
        return 0;
    atomic_fetch_add(&injected, 1);
    return 1;
}

void *clrt__malloc(size_t n) { return clrt__alloc_should_fail() ? NULL : malloc(n); }

void *clrt__calloc(size_t count, size_t size)
{
    return clrt__alloc_should_fail() ? NULL : calloc(count, size);
}

void *clrt__realloc(void *p, size_t n) { return clrt__alloc_should_fail() ? NULL : realloc(p, n); }

char *clrt__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = clrt__malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}
