/* The trainer's side of training across processes (clrt/collective.h):
 * the start-up agreement of the group, the broadcast of the first
 * process's parameters, and the sums of the epoch's metrics. Each call is
 * collective: every process of the group makes it, in the same order. A
 * NULL world (or one of size 1) is one process; then each call does
 * nothing. */
#ifndef CLRT_WORLD_INTERNAL_H
#define CLRT_WORLD_INTERNAL_H

#include "runtime/nn/module_internal.h"
#include <clrt/collective.h>
#include <clrt/train.h>

/* Checks that every process trains the same way: the same parameter
 * layout (count, sizes and shapes), seed, batch size, data set sizes,
 * options, start epoch and epochs, devices per process, and optimizer
 * (kind, learning rate, hyperparameters, step count), through
 * clrt_collective_agree: on a difference every process fails alike with
 * CLRT_EINVAL, naming what differs, the rank and both values. */
clrt_status clrt__world_agree(const clrt_collective *w, clrt_module *model,
                              const clrt_optimizer *opt, int n_devices,
                              const clrt_train_config *cfg, const clrt_dataset *train,
                              const clrt_dataset *test);
/* At each epoch's start: the same epoch number and learning rate on every
 * process (a schedule that differs shows here, before the replicas drift
 * apart). */
clrt_status clrt__world_agree_epoch(const clrt_collective *w, int epoch, double lr);
/* Overwrites every process's parameters, buffers and counters with rank
 * 0's, then checks a hash of each process's parameters and buffers, read
 * back from its device, and of its
 * optimizer state (not broadcast: every process resumes from the same
 * checkpoint) against rank 0's. Blocking: it runs once, before training. */
clrt_status clrt__world_broadcast_params(const clrt_collective *w, clrt_module *model,
                                         const clrt_optimizer *opt);
/* v[0..n) summed over the group, in place. */
clrt_status clrt__world_sum(const clrt_collective *w, double *v, int64_t n);
clrt_status clrt__world_sum_f32(const clrt_collective *w, float *v, int64_t n);

static inline int clrt__world_size(const clrt_collective *w) { return w ? w->size : 1; }
static inline int clrt__world_rank(const clrt_collective *w) { return w ? w->rank : 0; }

#endif
