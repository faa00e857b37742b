/* Host memory: every allocation the library makes goes through these
 * wrappers (one home), so that a test can make the n-th one fail and check
 * that each failure is an error, not a crash or a leak (the allocation-
 * failure test, tests/test_alloc_fail.c, in the style of SQLite's).
 *
 * The wrappers behave as the C library's functions they are named after;
 * memory they return is released with free(). Thread-safe. */
#ifndef CLRT_ALLOC_INTERNAL_H
#define CLRT_ALLOC_INTERNAL_H

#include <stddef.h>

void *clrt__malloc(size_t n);
void *clrt__calloc(size_t count, size_t size);
void *clrt__realloc(void *p, size_t n); /* on failure p is left as it was */
char *clrt__strdup(const char *s);

/* Test hook (internal, never exported): the n-th allocation counted from
 * this call fails once, as if the system were out of memory; n <= 0 turns
 * failures off. Device buffers count too (clrt__buffer_new asks
 * clrt__alloc_should_fail), so the hook reaches clCreateBuffer. */
void clrt__alloc_fail_after(long n);
/* Failures injected since the last clrt__alloc_fail_after. */
long clrt__alloc_failures(void);
/* Allocations counted since the last clrt__alloc_fail_after. */
long clrt__alloc_count(void);
/* Counts one allocation; 1 when it is the one to fail. For allocators
 * other than the C library's (device buffers). */
int clrt__alloc_should_fail(void);

#endif
