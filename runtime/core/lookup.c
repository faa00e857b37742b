/* Linear lookups (lookup_internal.h). The index of names: open addressing
 * with linear probing, kept at most half full, each slot holding the name's
 * full 64-bit hash so that a string is compared only when the hashes agree.
 * A repeat search: the entries sorted by (pointer, index). */
#include "runtime/core/lookup_internal.h"
#include "runtime/core/alloc_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

struct clrt__name_slot {
    const char *name; /* NULL: empty */
    uint64_t hash;
    int value;
};

static _Thread_local uint64_t steps;

uint64_t clrt__lookup_steps(void) { return steps; }

/* FNV-1a from a seeded start, then SplitMix64's finaliser to spread the
 * low bits the table uses. */
static uint64_t hash_of(const char *s, uint64_t seed)
{
    uint64_t h = 0xcbf29ce484222325u ^ seed;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3u;
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9u;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebu;
    return h ^ h >> 31;
}

static uint64_t fresh_seed(void)
{
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s)
        s = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15u ^ (uint64_t)(uintptr_t)&s;
    return s;
}

/* The slot of name (hash h): where it is, or the empty slot where it goes. */
static clrt__name_slot *find(clrt__name_slot *slots, size_t cap, const char *name, uint64_t h)
{
    for (size_t i = (size_t)h & (cap - 1);; i = (i + 1) & (cap - 1)) {
        steps++;
        clrt__name_slot *s = &slots[i];
        if (!s->name || (s->hash == h && strcmp(s->name, name) == 0))
            return s;
    }
}

static int grow(clrt__name_index *x)
{
    size_t cap = x->cap ? 2 * x->cap : 16;
    if (cap > SIZE_MAX / sizeof(clrt__name_slot))
        return 0;
    clrt__name_slot *slots = clrt__calloc(cap, sizeof *slots);
    if (!slots)
        return 0;
    if (!x->slots)
        x->seed = fresh_seed();
    for (size_t i = 0; i < x->cap; i++) {
        const clrt__name_slot *s = &x->slots[i];
        if (!s->name)
            continue;
        size_t k = (size_t)s->hash & (cap - 1);
        while (slots[k].name)
            k = (k + 1) & (cap - 1);
        slots[k] = *s;
    }
    free(x->slots);
    x->slots = slots;
    x->cap = cap;
    return 1;
}

int clrt__name_index_put(clrt__name_index *x, const char *name, int value)
{
    if (2 * (x->count + 1) > x->cap && !grow(x))
        return -2;
    uint64_t h = hash_of(name, x->seed);
    clrt__name_slot *s = find(x->slots, x->cap, name, h);
    if (s->name)
        return s->value;
    *s = (clrt__name_slot){name, h, value};
    x->count++;
    return -1;
}

int clrt__name_index_get(const clrt__name_index *x, const char *name)
{
    if (!x->slots)
        return -1;
    const clrt__name_slot *s = find(x->slots, x->cap, name, hash_of(name, x->seed));
    return s->name ? s->value : -1;
}

void clrt__name_index_free(clrt__name_index *x)
{
    free(x->slots);
    memset(x, 0, sizeof *x);
}

/* --- the first repeat --- */

typedef struct {
    uintptr_t p;
    int i;
} entry;

static int by_pointer(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    steps++;
    if (x->p != y->p)
        return x->p < y->p ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

int clrt__first_repeat(int n, const void *const *ptrs, int *first, int *again)
{
    if (n < 2)
        return 0;
    entry *e = clrt__malloc((size_t)n * sizeof *e);
    if (!e)
        return -1;
    for (int i = 0; i < n; i++)
        e[i] = (entry){(uintptr_t)ptrs[i], i};
    qsort(e, (size_t)n, sizeof *e, by_pointer);
    int found = 0;
    for (int k = 1; k < n; k++) /* k - 1 starts a run of one pointer: its second entry */
        if (e[k].p == e[k - 1].p && (k < 2 || e[k - 2].p != e[k].p) && (!found || e[k].i < *again))
            *first = e[k - 1].i, *again = e[k].i, found = 1;
    free(e);
    return found;
}
