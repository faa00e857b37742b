/* The data-parallel gradient sum across local devices
 * (grad_exchange_internal.h). */
#include "runtime/train/grad_exchange_internal.h"
#include "runtime/train/world_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/core/clock_internal.h"
#include "runtime/device/pinned_internal.h"
#include "runtime/device/wait_internal.h"

#include <stdlib.h>
#include <string.h>

static clrt_status part_init(clrt__grad_exchange *x, clrt__grad_part *p, clrt_module *m)
{
    p->dev = m->device;
    int n = clrt__module_param_arrays(m, NULL, &p->grads);
    int nb = n < 0 ? n : clrt__module_buffer_arrays(m, &p->bufs);
    int nc = nb < 0 ? nb : clrt__module_counter_arrays(m, &p->counters);
    if (nc < 0)
        return (clrt_status)nc;
    if (n != x->n_params || nb != x->n_bufs || nc != x->n_counters)
        return clrt__fail(CLRT_EINVAL, "data-parallel gradients: the replicas differ");
    size_t bytes = (size_t)(x->numel + x->buf_numel) * sizeof(float);
    p->flat = clrt__buffer_new(p->dev, bytes, "flat gradient buffer");
    if (!p->flat)
        return clrt_last_status();
    if (!p->dev->info.unified_memory)
        p->host = clrt__pinned_new(p->dev, CLRT__COMPUTE, bytes, &p->pinned, "gradient staging");
    else if (!(p->host = clrt__malloc(bytes)))
        clrt__fail(CLRT_ENOMEM, "data-parallel gradients: out of host memory");
    return p->host ? CLRT_OK : clrt_last_status();
}

/* The model's buffer floats, and its counts of parameters, buffers and
 * counters, into x. */
static clrt_status sizes_init(clrt__grad_exchange *x, clrt_module *m)
{
    clrt_tensor **bufs = NULL;
    int64_t **counters = NULL;
    x->n_params = clrt_module_parameters(m, NULL, NULL, NULL, 0);
    x->numel = clrt_module_param_count(m);
    x->n_bufs = clrt__module_buffer_arrays(m, &bufs);
    x->n_counters = x->n_bufs < 0 ? x->n_bufs : clrt__module_counter_arrays(m, &counters);
    for (int i = 0; i < x->n_bufs; i++)
        x->buf_numel += clrt_tensor_numel(bufs[i]);
    free(bufs);
    free(counters);
    if (x->n_counters < 0)
        return (clrt_status)x->n_counters;
    if (!(x->counter_values = clrt__calloc((size_t)x->n_counters + 1, sizeof(int64_t))))
        return clrt__fail(CLRT_ENOMEM, "data-parallel training: out of host memory");
    return x->n_params > 0 ? CLRT_OK
                           : clrt__fail(CLRT_EINVAL, "data-parallel training: the model has no "
                                                     "parameters");
}

clrt_status clrt__grad_exchange_init(clrt__grad_exchange *x, int n_parts,
                                     clrt_module *const *models, const clrt_collective *world)
{
    memset(x, 0, sizeof *x);
    x->n_parts = n_parts;
    x->world = world;
    clrt_status st = sizes_init(x, models[0]);
    for (int i = 0; i < n_parts && st == CLRT_OK; i++)
        st = part_init(x, &x->part[i], models[i]);
    if (st != CLRT_OK)
        clrt__grad_exchange_free(x);
    return st;
}

/* Copies n tensors into (to_flat) or out of the flat buffer from float
 * `start`, on the part's compute queue. */
static clrt_status copy_flat(clrt__grad_part *p, clrt_tensor **t, int n, int64_t start, int to_flat)
{
    size_t off = (size_t)start * sizeof(float);
    clrt_status st = CLRT_OK;
    for (int i = 0; i < n && st == CLRT_OK; i++) {
        size_t bytes = clrt_tensor_nbytes(t[i]);
        cl_mem g = clrt__mem(t[i]);
        st = to_flat ? clrt__copy_buffer(p->dev, g, 0, p->flat, off, bytes, "gradient pack")
                     : clrt__copy_buffer(p->dev, p->flat, off, g, 0, bytes, "gradient unpack");
        off += bytes;
    }
    return st;
}

/* Packs and reads part p's gradients (and part 0's buffers) to its host
 * memory (no wait). */
static clrt_status enqueue_read(clrt__grad_exchange *x, clrt__grad_part *p)
{
    int first = p == &x->part[0];
    clrt_status st = copy_flat(p, p->grads, x->n_params, 0, 1);
    if (st == CLRT_OK && first)
        st = copy_flat(p, p->bufs, x->n_bufs, x->numel, 1);
    if (st != CLRT_OK)
        return st;
    int64_t floats = x->numel + (first ? x->buf_numel : 0);
    st = clrt__read_buffer(p->dev, p->flat, 0, (size_t)floats * sizeof(float), p->host, &p->read,
                           "gradient read");
    return st == CLRT_OK ? clrt__flush(p->dev, CLRT__COMPUTE, "gradient read") : st;
}

static clrt_status wait_read(clrt__grad_part *p, double expect_s)
{
    clrt_status st =
        clrt__event_wait(p->dev, CLRT__COMPUTE, p->read, expect_s, "reading gradients");
    clrt__event_release(p->read);
    p->read = NULL;
    return st;
}

/* Rank 0's replica 0 buffers and counters to every replica of every
 * process: in part 0's host buffer after the gradients, and in each
 * replica's counters. */
static clrt_status spread_state(clrt__grad_exchange *x)
{
    float *bufs = x->part[0].host + x->numel;
    for (int i = 0; i < x->n_counters; i++)
        x->counter_values[i] = *x->part[0].counters[i];
    clrt_status st = CLRT_OK;
    const clrt_collective *w = x->world;
    if (clrt__world_size(w) > 1 && x->buf_numel > 0)
        st = w->broadcast(w->ctx, bufs, (size_t)x->buf_numel * sizeof(float), 0);
    if (st == CLRT_OK && clrt__world_size(w) > 1 && x->n_counters > 0)
        st = w->broadcast(w->ctx, x->counter_values, (size_t)x->n_counters * sizeof(int64_t), 0);
    for (int r = 0; r < x->n_parts && st == CLRT_OK; r++) {
        for (int i = 0; i < x->n_counters; i++)
            *x->part[r].counters[i] = x->counter_values[i];
        if (r > 0)
            memcpy(x->part[r].host + x->numel, bufs, (size_t)x->buf_numel * sizeof(float));
    }
    return st;
}

/* part[0].host += the other parts', then the sum over the processes; then
 * every part's host holds the sum, and rank 0's buffers. */
static clrt_status sum_on_host(clrt__grad_exchange *x)
{
    float *sum = x->part[0].host;
    for (int r = 1; r < x->n_parts; r++) {
        const float *h = x->part[r].host;
        for (int64_t i = 0; i < x->numel; i++)
            sum[i] += h[i];
    }
    double t0 = clrt__now();
    clrt_status st = clrt__world_sum_f32(x->world, sum, x->numel);
    if (st == CLRT_OK)
        st = spread_state(x);
    x->world_seconds += clrt__now() - t0;
    for (int r = 1; r < x->n_parts; r++)
        memcpy(x->part[r].host, sum, (size_t)x->numel * sizeof(float));
    return st;
}

/* Writes the sum and the buffers back and unpacks them. The write reads
 * host memory until it completes: the part's next read, on the same
 * in-order queue, is after it, so the host memory is reused only then. */
static clrt_status enqueue_write(clrt__grad_exchange *x, clrt__grad_part *p)
{
    clrt_status st = clrt__write_buffer(p->dev, CLRT__COMPUTE, p->flat, 0,
                                        (size_t)(x->numel + x->buf_numel) * sizeof(float), p->host,
                                        NULL, NULL, "gradient write");
    if (st == CLRT_OK)
        st = copy_flat(p, p->grads, x->n_params, 0, 0);
    return st == CLRT_OK ? copy_flat(p, p->bufs, x->n_bufs, x->numel, 0) : st;
}

clrt_status clrt__grad_exchange_sum(clrt__grad_exchange *x)
{
    double t0 = clrt__now();
    clrt_status st = CLRT_OK;
    for (int r = 0; r < x->n_parts && st == CLRT_OK; r++)
        st = enqueue_read(x, &x->part[r]);
    double t1 = clrt__now();
    /* The devices finish their steps at about the same time: the first
     * wait sleeps most of the last step's, the others find theirs done. */
    for (int r = 0; r < x->n_parts; r++)
        if (x->part[r].read) {
            clrt_status w = wait_read(&x->part[r], r == 0 ? 0.75 * x->last_wait : 0);
            st = st == CLRT_OK ? w : st;
        }
    double t2 = clrt__now();
    x->last_wait = t2 - t1;
    if (st == CLRT_OK)
        st = sum_on_host(x);
    for (int r = 0; r < x->n_parts && st == CLRT_OK; r++)
        st = enqueue_write(x, &x->part[r]);
    x->wait_seconds += t2 - t1;
    x->sum_seconds += clrt__now() - t0;
    return st;
}

void clrt__grad_exchange_free(clrt__grad_exchange *x)
{
    for (int r = 0; r < x->n_parts; r++) {
        clrt__grad_part *p = &x->part[r];
        if (p->read)
            wait_read(p, 0);
        if (p->dev && p->flat)
            clrt__device_drain(p->dev); /* the last write may still read p->host */
        if (p->pinned)
            clrt__pinned_free(p->dev, CLRT__COMPUTE, p->pinned, p->host);
        else
            free(p->host);
        clrt__buffer_release(p->dev, p->flat, (size_t)(x->numel + x->buf_numel) * sizeof(float));
        free(p->grads);
        free(p->bufs);
        free(p->counters);
    }
    free(x->counter_values);
    memset(x, 0, sizeof *x);
}
