/* Lookups that stay linear in the number of entries (issue 36): a hash
 * index from C strings to ints, for safetensors headers (whose 100 MiB cap
 * admits about 1.9 million tensors), a module's state names and a
 * container's child names; and the first entry listed twice in a list of
 * pointers (an optimizer's parameters, a container's children). The names
 * are the caller's and must outlive the index. Each index takes a random
 * seed when it first grows, so a crafted file cannot choose names that all
 * land in one chain. Not thread-safe per index; distinct indexes are
 * independent.
 *
 * clrt__lookup_steps() counts the steps this thread's lookups have taken
 * (slots visited, each comparing at most one string; comparisons of a
 * repeat search): a test checks that loading n names costs O(n) of them
 * (O(n log n) for a repeat search), a count that does not depend on the
 * machine's speed. */
#ifndef CLRT_LOOKUP_INTERNAL_H
#define CLRT_LOOKUP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

typedef struct clrt__name_slot clrt__name_slot;

typedef struct {
    clrt__name_slot *slots; /* cap entries, a power of two; NULL while empty */
    size_t cap, count;
    uint64_t seed;
} clrt__name_index; /* zero-initialised: an empty index */

/* Adds name -> value (value >= 0) unless name is already there. Returns -1
 * when added, the value already held when name is there (nothing changes),
 * or -2 when out of host memory (no message set: the caller names what it
 * was doing). */
int clrt__name_index_put(clrt__name_index *x, const char *name, int value);
/* The value held for name, or -1. */
int clrt__name_index_get(const clrt__name_index *x, const char *name);
void clrt__name_index_free(clrt__name_index *x); /* then empty again */

/* The first repeat in ptrs[0..n): 1 with *first < *again, where *again
 * is the lowest index whose pointer an earlier entry holds and *first that
 * earlier entry (what a loop over j < i finds first); 0 when every entry
 * differs; -1 when out of host memory (no message set). */
int clrt__first_repeat(int n, const void *const *ptrs, int *first, int *again);

/* Steps taken by this thread's lookups since it started. */
uint64_t clrt__lookup_steps(void);

#endif
