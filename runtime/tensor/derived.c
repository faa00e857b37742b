/* A storage's derived buffer (tensor_internal.h): one buffer an op makes
 * from a tensor's data (conv_vec's weights re-laid for its kernel) and
 * keeps, so that inference on unchanged weights does not redo the work on
 * every call. Valid while the storage's version is the one it was made
 * from and the tag (the maker's key: layout, and the other inputs it read
 * with their storages' serials and versions) matches. */
#include "runtime/tensor/tensor_internal.h"
#include "runtime/device/device_internal.h"

#include <string.h>

static int same_tag(const clrt__derived *dv, const uint64_t tag[3])
{
    return memcmp(dv->tag, tag, sizeof dv->tag) == 0;
}

cl_mem clrt__derived_get(clrt_tensor *t, const uint64_t tag[3], size_t bytes, int *fresh)
{
    clrt__storage *s = t->storage;
    clrt__derived *dv = &s->derived;
    unsigned version = atomic_load(&s->version);
    if (dv->made && dv->bytes == bytes && dv->version == version && same_tag(dv, tag)) {
        *fresh = 0;
        return dv->mem;
    }
    *fresh = 1;
    dv->made = 0; /* until clrt__derived_made */
    if (dv->mem && dv->bytes == bytes)
        return dv->mem;
    clrt__derived_free(s);
    dv->mem = clrt__buffer_new(s->dev, bytes, "derived buffer (re-laid weights)");
    dv->bytes = dv->mem ? bytes : 0;
    return dv->mem;
}

void clrt__derived_made(clrt_tensor *t, const uint64_t tag[3])
{
    clrt__derived *dv = &t->storage->derived;
    dv->version = atomic_load(&t->storage->version);
    memcpy(dv->tag, tag, sizeof dv->tag);
    dv->made = 1;
}

size_t clrt__derived_bytes(const clrt_tensor *t) { return t->storage->derived.bytes; }

void clrt__derived_free(clrt__storage *s)
{
    clrt__buffer_release(s->dev, s->derived.mem, s->derived.bytes);
    s->derived = (clrt__derived){0};
}
