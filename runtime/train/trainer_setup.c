/* The trainer's construction and teardown: argument checks, the device
 * list, the replicas of data-parallel training (a clone of the model and
 * the optimizer per further device), their batch streams and sums. */
#include "runtime/train/trainer_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/optim/optim_internal.h"

#include <stdlib.h>

clrt_train_config clrt_train_defaults(void)
{
    return (clrt_train_config){.epochs = 10, .batch_size = 256, .seed = 0, .evaluate = 1};
}

static clrt_status check_config(const clrt_module *model, const clrt_optimizer *opt,
                                const clrt_dataset *train, const clrt_dataset *test,
                                const clrt_train_config *cfg)
{
    int64_t a[3], b[3];
    if (!model || !opt || !train || !cfg)
        return clrt__fail(CLRT_EINVAL, "clrt_trainer_new: NULL model, optimizer, training set "
                                       "or config");
    const clrt_collective *w = cfg->world;
    if (w && (w->size < 1 || w->rank < 0 || w->rank >= w->size || !w->sum_f32 || !w->sum_f64 ||
              !w->broadcast))
        return clrt__fail(CLRT_EINVAL,
                          "clrt_trainer_new: cfg.world is rank %d of %d%s; it needs 0 <= rank < "
                          "size and all three functions",
                          w->rank, w->size,
                          !w->sum_f32 || !w->sum_f64 || !w->broadcast ? " with a NULL function"
                                                                      : "");
    if (cfg->batch_size < 1 || cfg->epochs < 0 || cfg->start_epoch < 0)
        return clrt__fail(CLRT_EINVAL,
                          "clrt_trainer_new: batch_size %d must be >= 1, epochs %d >= 0 and "
                          "start_epoch %d >= 0",
                          cfg->batch_size, cfg->epochs, cfg->start_epoch);
    if (cfg->augment < 0 || cfg->augment > 64)
        return clrt__fail(CLRT_EINVAL,
                          "clrt_trainer_new: augment %d (padding pixels) must be "
                          "from 0 to 64",
                          cfg->augment);
    if (cfg->augment && clrt_dataset_sample_dims(train, a) != 3)
        return clrt__fail(CLRT_EINVAL,
                          "clrt_trainer_new: augment crops and flips images; %s's samples are "
                          "not [C, H, W]",
                          clrt_dataset_name(train));
    if (!test)
        return CLRT_OK;
    clrt_dataset_sample_shape(train, a);
    clrt_dataset_sample_shape(test, b);
    if (a[0] != b[0] || a[1] != b[1] || a[2] != b[2] ||
        clrt_dataset_num_classes(train) != clrt_dataset_num_classes(test))
        return clrt__fail(CLRT_ESHAPE,
                          "clrt_trainer_new: %s has samples [%lld, %lld, %lld] in %d classes but "
                          "%s has [%lld, %lld, %lld] in %d",
                          clrt_dataset_name(train), (long long)a[0], (long long)a[1],
                          (long long)a[2], clrt_dataset_num_classes(train), clrt_dataset_name(test),
                          (long long)b[0], (long long)b[1], (long long)b[2],
                          clrt_dataset_num_classes(test));
    return CLRT_OK;
}

/* cfg->devices into devs. */
static clrt_status list_devices(const clrt_train_config *cfg, clrt_device **devs, const char *api)
{
    int n = cfg->n_devices;
    if (!cfg->devices || n < 1 || n > CLRT_MAX_DATA_PARALLEL)
        return clrt__fail(CLRT_EINVAL, "%s: cfg.devices lists %d devices; give 1 to %d", api,
                          cfg->devices ? n : 0, CLRT_MAX_DATA_PARALLEL);
    for (int i = 0; i < n; i++) {
        if (!(devs[i] = cfg->devices[i]))
            return clrt__fail(CLRT_EINVAL, "%s: cfg.devices[%d] is NULL", api, i);
        for (int j = 0; j < i; j++)
            if (devs[j] == devs[i])
                return clrt__fail(CLRT_EINVAL, "%s: %s is listed twice in cfg.devices (%d and %d)",
                                  api, clrt_device_str(devs[i]), j, i);
    }
    if (cfg->device && cfg->device != devs[0])
        return clrt__fail(CLRT_EINVAL, "%s: cfg.device is %s but cfg.devices[0] is %s", api,
                          clrt_device_str(cfg->device), clrt_device_str(devs[0]));
    return CLRT_OK;
}

/* The devices to train on, into devs: cfg->devices, or the one device
 * (cfg->device, else the model's). Their count, or 0 + error. */
static int pick_devices(const clrt_module *model, const clrt_train_config *cfg, clrt_device **devs)
{
    const char *api = "clrt_trainer_new";
    int n = 1, world = clrt__world_size(cfg->world);
    if (!cfg->devices && !cfg->n_devices)
        devs[0] = cfg->device ? cfg->device : model->device;
    else if (list_devices(cfg, devs, api) == CLRT_OK)
        n = cfg->n_devices;
    else
        return 0;
    if ((int64_t)n * world <= cfg->batch_size)
        return n;
    clrt__fail(CLRT_EINVAL,
               "%s: %d devices%s but a batch of %d samples: every device needs a part of each "
               "full batch",
               api, n * world, world > 1 ? " over all processes" : "", cfg->batch_size);
    return 0;
}

/* Replica t->n_rep on d: a clone of replica 0's model and an optimizer
 * like replica 0's over the clone's parameters. */
static clrt_status add_replica(clrt_trainer *t, clrt_device *d)
{
    clrt__replica *r0 = &t->rep[0], *r = &t->rep[t->n_rep];
    if (!(r->model = clrt_module_clone(r0->model, d)))
        return clrt_last_status();
    t->n_rep++;
    clrt_tensor **params, **grads;
    int n = clrt__module_param_arrays(r->model, &params, &grads);
    if (n < 0)
        return (clrt_status)n;
    r->opt = clrt__optim_replica(r0->opt, n, params, grads);
    free(params);
    free(grads);
    return r->opt ? CLRT_OK : clrt_last_status();
}

/* Every replica's sums and its stream of its part of each batch (across
 * processes, process r's replicas take the r-th run of parts); with
 * several replicas or processes, the gradient exchange between them. */
static clrt_status replicas_init(clrt_trainer *t, const clrt_dataset *train)
{
    const clrt_collective *w = t->cfg.world;
    int first = clrt__world_rank(w) * t->n_rep, parts = clrt__world_size(w) * t->n_rep;
    clrt_status st = CLRT_OK;
    clrt_module *models[CLRT__MAX_REPLICAS];
    for (int k = 0; k < t->n_rep && st == CLRT_OK; k++) {
        clrt__replica *r = &t->rep[k];
        clrt_device *d = r->model->device;
        models[k] = r->model;
        st = clrt__sums_init(&r->sums, d);
        if (st == CLRT_OK)
            st = clrt__sums_cum_init(&r->sums, &t->cfg, train, d);
        if (st == CLRT_OK)
            st = clrt__stream_init_shard(&r->train, train, d, t->cfg.batch_size, first + k, parts);
        r->train.augment = t->cfg.augment;
    }
    if (st == CLRT_OK && parts > 1)
        st = clrt__grad_exchange_init(&t->exchange, t->n_rep, models, w);
    return st;
}

/* Replica 0 (the caller's model and optimizer, on devs[0]) and its copies. */
static clrt_status trainer_init(clrt_trainer *t, const clrt_dataset *train,
                                const clrt_dataset *test, clrt_device **devs, int n)
{
    clrt_status st = CLRT_OK;
    for (int k = 1; k < n && st == CLRT_OK; k++)
        st = add_replica(t, devs[k]);
    if (st == CLRT_OK)
        st = replicas_init(t, train);
    if (st == CLRT_OK && test)
        st =
            clrt__stream_init_shard(&t->test, test, devs[0], t->cfg.batch_size,
                                    clrt__world_rank(t->cfg.world), clrt__world_size(t->cfg.world));
    return st;
}

clrt_trainer *clrt_trainer_new(clrt_module *model, clrt_optimizer *opt, const clrt_dataset *train,
                               const clrt_dataset *test, const clrt_train_config *cfg)
{
    clrt_device *devs[CLRT__MAX_REPLICAS];
    if (check_config(model, opt, train, test, cfg) != CLRT_OK)
        return NULL;
    int n = pick_devices(model, cfg, devs);
    if (n < 1 || clrt__optim_check_device(opt, devs[0], "clrt_trainer_new") != CLRT_OK ||
        clrt_module_to(model, devs[0]) != CLRT_OK ||
        clrt__world_agree(cfg->world, model, opt, n, cfg, train, test) != CLRT_OK ||
        clrt__world_broadcast_params(cfg->world, model, opt) != CLRT_OK)
        return NULL;
    clrt_trainer *t = clrt__calloc(1, sizeof *t);
    if (!t) {
        clrt__fail(CLRT_ENOMEM, "clrt_trainer_new: out of host memory");
        return NULL;
    }
    t->cfg = *cfg;
    t->cfg.device = devs[0];
    t->cfg.devices = NULL;
    t->cfg.n_devices = 0;
    t->rep[0] = (clrt__replica){.model = model, .opt = opt};
    t->n_rep = 1;
    t->have_test = test != NULL;
    t->epoch = cfg->start_epoch; /* resuming: epochs done */
    if (trainer_init(t, train, test, devs, n) != CLRT_OK) {
        clrt_trainer_free(t);
        return NULL;
    }
    return t;
}

void clrt_trainer_free(clrt_trainer *t)
{
    if (!t)
        return;
    clrt__grad_exchange_free(&t->exchange); /* a no-op when never set up */
    clrt__stream_free(&t->test);
    for (int k = 0; k < t->n_rep; k++) {
        clrt__replica *r = &t->rep[k];
        clrt__stream_free(&r->train);
        clrt__sums_free(&r->sums);
        if (k > 0) {
            clrt_optimizer_free(r->opt);
            clrt_module_free(r->model);
        }
    }
    free(t);
}
