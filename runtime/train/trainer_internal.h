/* The trainer's state, shared by its passes (trainer.c), its set-up
 * (trainer_setup.c) and the whole-run loop (train_loop.c). */
#ifndef CLRT_TRAINER_INTERNAL_H
#define CLRT_TRAINER_INTERNAL_H

#include "runtime/train/batch_stream_internal.h"
#include "runtime/train/grad_exchange_internal.h"
#include "runtime/train/sums_internal.h"
#include "runtime/train/world_internal.h"
#include <clrt/train.h>

/* A model and optimizer on one device with its part of each training
 * batch. Replica 0 is the caller's model and optimizer (borrowed); the
 * others are the trainer's copies. */
typedef struct {
    clrt_module *model;
    clrt_optimizer *opt;
    clrt__batch_stream train;
    clrt__sums sums;
} clrt__replica;

_Static_assert(CLRT_MAX_DATA_PARALLEL == CLRT__MAX_REPLICAS, "one limit");

struct clrt_trainer {
    clrt_train_config cfg; /* device: replica 0's; devices: NULL (the replicas') */
    int n_rep;
    clrt__replica rep[CLRT__MAX_REPLICAS];
    clrt__grad_exchange exchange; /* n_parts 0: none (one device, one process) */
    clrt__batch_stream test;      /* on replica 0's device; this process's part across processes */
    int have_test;
    int epoch;
};

#endif
