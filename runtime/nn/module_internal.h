/* Internal view of modules: the common header every kind embeds, its
 * vtable, and helpers shared by the layer files. */
#ifndef CLRT_MODULE_INTERNAL_H
#define CLRT_MODULE_INTERNAL_H

#include "runtime/ops/epilogue_internal.h"
#include "runtime/tensor/safetensors_internal.h"
#include "runtime/tensor/tensor_internal.h"
#include <clrt/autograd.h>
#include <clrt/module.h>

/* One tensor of a module's state: a parameter (with its gradient), or a
 * buffer (grad NULL: state that is not trained, such as BatchNorm's
 * running statistics; optimizers never see it). */
typedef struct {
    const char *name; /* "weight", "bias", "running_mean": a string literal, or own_name */
    char *own_name;   /* a copy of a name given from outside (clrt_module_add_parameter), or
                         NULL */
    clrt_tensor *value;
    clrt_tensor *grad;
} clrt__param;

/* What a state walk visits (clrt__state_walk): parameters, float32 buffers
 * on the device, and host counters (int64 buffers kept on the host, such
 * as num_batches_tracked, saved as 0-dim int64 tensors). */
enum { CLRT__STATE_PARAMS = 1, CLRT__STATE_BUFFERS = 2, CLRT__STATE_COUNTERS = 4 };
#define CLRT__STATE_ALL (CLRT__STATE_PARAMS | CLRT__STATE_BUFFERS | CLRT__STATE_COUNTERS)

/* One visited entry: p for a parameter or buffer, counter for a counter. */
typedef struct {
    int kind; /* one CLRT__STATE_* bit */
    clrt__param *p;
    int64_t *counter;
} clrt__state;

typedef struct {
    const char *kind;
    /* Forward on x (non-NULL, on m->device): a new reference to the output. */
    clrt_tensor *(*forward)(clrt_module *m, clrt_tensor *x);
    /* Optional: forward on n inputs (custom modules, module_custom.c),
     * whose ops record themselves: a kind with it records no node of its
     * own and runs with the caller's grad mode. */
    clrt_tensor *(*forward_n)(clrt_module *m, int n, clrt_tensor *const *in);
    /* Backward of the last training-mode forward; grad_out already matches
     * the output's shape and device. Accumulates parameter gradients; when
     * grad_in is non-NULL stores a new reference to the input gradient. */
    clrt_status (*backward)(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in);
    /* Writes a description after the kind name, e.g. "(in=3, out=4)". */
    void (*describe)(const clrt_module *m, char *buf, size_t cap);
    /* Optional: (re)creates and initialises the module's own parameters
     * from m->init_seed (see clrt__init_uniform). */
    clrt_status (*init)(clrt_module *m);
    /* Optional: releases the kind's own fields (not the common ones). */
    void (*free_fields)(clrt_module *m);
    /* Optional, with free_fields: on a byte copy of a module (a clone),
     * sets the kind's own pointer fields to NULL. They hold only caches and
     * forward state, which the copy rebuilds on its own device. */
    void (*clone_fields)(clrt_module *copy);
    /* Optional, for Sequential's fusions (fuse.c): forward with the output
     * through epi (CLRT__EPI_RELU: a ReLU after the layer), and backward
     * with the input gradient through epi (CLRT__EPI_MASK by the layer's
     * input: a ReLU before it). Otherwise like forward and backward. */
    clrt_tensor *(*forward_epi)(clrt_module *m, clrt_tensor *x, const clrt__epilogue *epi);
    clrt_status (*backward_epi)(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in,
                                const clrt__epilogue *epi);
    /* Capabilities, which fusions ask for instead of a module's kind, so
     * that any module offering them fuses:
     * epilogue: nonzero for a module whose forward is this elementwise
     * epilogue (CLRT__EPI_RELU: a ReLU) and whose backward masks the
     * gradient by its output; a layer beside it in a Sequential may apply
     * it in its own kernels instead (fuse.c). */
    clrt__epi_kind epilogue;
    /* Optional, for a module whose output has its input's shape: forward
     * with `residual` (of that shape) added to the output and a ReLU
     * applied, out = relu(f(x) + residual), in its own output pass; keeps
     * its state for backward as after forward (whoever fused the ReLU
     * takes its backward). A residual block's last body layer (residual.c). */
    clrt_tensor *(*forward_residual)(clrt_module *m, clrt_tensor *x, clrt_tensor *residual);
    /* A kind's own per-call state (what its backward reads of its last
     * forward beyond out and saved: BatchNorm's statistics), moved out
     * when the module runs again before that call's backward (module
     * node.c): call_state_size bytes that swap_call_state exchanges with
     * the kind's fields and release_call_state frees. All 0 / NULL for a
     * kind without. */
    size_t call_state_size;
    void (*swap_call_state)(clrt_module *m, void *stash);
    void (*release_call_state)(void *stash);
} clrt__module_vt;

struct clrt__node;

/* The common part, first member of every kind's struct. */
struct clrt_module {
    const clrt__module_vt *vt;
    atomic_int refs;          /* the owner's reference and graph nodes' (clrt_module_free
                                 releases the owner's) */
    struct clrt__node *owner; /* the recorded call whose state it holds (module_node.c) */
    size_t size;              /* bytes of the kind's struct, for clrt_module_clone */
    clrt_device *device;      /* where parameters live or will be created */
    int training;
    uint64_t init_seed;      /* seed of this module's parameter values */
    int nparams, params_cap; /* its own parameters, in the order they were added */
    clrt__param *params;
    int nbuffers, buffers_cap; /* its own buffers */
    clrt__param *buffers;
    const char *counter_name; /* a host counter's name (a literal), or NULL */
    int64_t counter;
    int owned;     /* a container holds it (module_adopt.c) */
    int nchildren; /* containers */
    clrt_module **children;
    char **child_names;   /* NULL, or one name per child (NULL: its index) */
    clrt_tensor *out;     /* forward output buffer, reused across steps */
    clrt_tensor *grad_in; /* input gradient buffer, reused across steps */
    clrt_tensor *saved;   /* what backward needs of the forward (its input) */
    char **name_cache;    /* for clrt_module_parameters */
    int name_count;
};

/* Allocates a zeroed module of `size` bytes (>= sizeof(clrt_module)) on
 * clrt_default_device() in training mode with the next default seed. NULL + error. */
clrt_module *clrt__module_new(const clrt__module_vt *vt, size_t size);

/* A module whose forward is composed of ops (module_custom.c, as
 * clrt_module_new) with the kind's own init from m->init_seed (NULL:
 * none), for the library's composed layers (embedding.c, layernorm.c).
 * NULL + error (user not freed). */
clrt_module *clrt__module_composed(const clrt_module_def *def, void *user,
                                   clrt_status (*init)(clrt_module *m));

/* m with children names[0..n) made by make(ctx, i), in that order (the
 * state names of a composed layer); NULL after freeing m when a child
 * cannot be made or added (its error stands). */
clrt_module *clrt__module_with_children(clrt_module *m, int n, const char *const *names,
                                        clrt_module *(*make)(const void *ctx, int i),
                                        const void *ctx);

/* CLRT_OK, or CLRT_EINVAL naming api and the value a transformer encoder
 * layer cannot have (transformer.c). */
clrt_status clrt__check_encoder_layer(const char *api, int d_model, int nhead, int dim_ff,
                                      double dropout, clrt_activation activation);

/* Adds a float32 parameter of the given shape on m->device with a zeroed
 * gradient; its values are left to the caller (see clrt__init_uniform).
 * name: a string literal (the module keeps the pointer). */
clrt_status clrt__module_add_param(clrt_module *m, const char *name, int ndim,
                                   const int64_t *shape);
/* Room for one more parameter (or buffer, when buffers): a slot at the
 * end of the array, zeroed, not yet counted. NULL + CLRT_ENOMEM. */
clrt__param *clrt__module_param_slot(clrt_module *m, int buffers);

/* Makes p's value a parameter as nn.Parameter is: a leaf that requires
 * grad, whose .grad (clrt_tensor_grad, what clrt_backward accumulates
 * into) is p's gradient tensor. */
void clrt__param_link(clrt__param *p);

/* Adds a float32 buffer of the given shape on m->device, filled with
 * `value` (enqueued). */
clrt_status clrt__module_add_buffer(clrt_module *m, const char *name, int ndim,
                                    const int64_t *shape, double value);

/* Visits m's state in PyTorch's state_dict order (a module's parameters,
 * then its buffers and counter, then each child's under "<child name>."),
 * the kinds in `mask` only, with each entry's full name; stops at the
 * first error and returns it. */
typedef clrt_status (*clrt__state_visit)(void *ctx, const char *name, clrt__state *s);
clrt_status clrt__state_walk(clrt_module *m, int mask, clrt__state_visit visit, void *ctx);
/* The name of child i: its given name, or its index ("0"). */
const char *clrt__child_name(const clrt_module *m, int i, char *buf, size_t cap);

/* Fills param with N(0, std^2) from the same kind of host generator
 * (Box-Muller over counter-based uniforms). Blocking upload. */
clrt_status clrt__init_normal(clrt_tensor *param, double std, uint64_t seed, uint64_t stream);
/* Makes a Conv2d initialise its weight as torchvision's ResNet does
 * (kaiming_normal_, fan_out, ReLU gain) from now on (conv2d.c). */
void clrt__conv2d_init_kaiming_normal(clrt_module *m);

/* Fills param with U(-bound, bound) from a host generator seeded by
 * (seed, stream): the same values on every device. Blocking upload (init
 * is not part of a training step). */
clrt_status clrt__init_uniform(clrt_tensor *param, double bound, uint64_t seed, uint64_t stream);

/* A new reference to a buffer the module keeps: what forward returns. */
clrt_tensor *clrt__nn_share(clrt_tensor *t);
/* Ends a backward: on success hands a new reference to m->grad_in to
 * *grad_in. Returns st. */
clrt_status clrt__nn_give_grad_in(clrt_module *m, clrt_status st, clrt_tensor **grad_in);

/* Module references: the creator's (clrt_module_free releases it), a
 * container's for its children, a graph node's for the module it ran. */
void clrt__module_retain(clrt_module *m);
void clrt__module_release(clrt_module *m);

/* Module calls in the autograd graph (module_node.c). Before m runs, the
 * state of its subtree that a recorded call still needs moves into that
 * call's node (clrt__module_claim_state). clrt__module_records says
 * whether a call of m on x is recorded (grad mode on, and x requires grad
 * or m has parameters); clrt__module_record makes the node for the call
 * that read x and produced y, and returns the caller's output: a new
 * tensor over y's storage whose grad_fn is the node. NULL + error. */
clrt_status clrt__module_claim_state(clrt_module *m);
int clrt__module_records(const clrt_module *m, clrt_tensor *x);
clrt_tensor *clrt__module_record(clrt_module *m, clrt_tensor *x, clrt_tensor *y);
/* A kind whose per-call state is one tensor field at `offset` in its
 * struct: its vtable's swap and release (module_node.c). */
#define CLRT__CALL_STATE_TENSOR(swap_fn, release_fn, type, field) \
    static void swap_fn(clrt_module *m, void *stash)              \
    {                                                             \
        clrt_tensor **f = &((type *)m)->field, *t = *f;           \
        *f = *(clrt_tensor **)stash;                              \
        *(clrt_tensor **)stash = t;                               \
    }                                                             \
    static void release_fn(void *stash) { clrt_tensor_release(*(clrt_tensor **)stash); }

/* Releases forward state, so a later backward fails instead of using stale
 * inputs. */
void clrt__module_forget(clrt_module *m);

/* Public entry points reused by Sequential on its children (they check
 * devices and shapes, so a child's error names the child); epi (NULL for
 * none) goes to the kind's backward_epi, which it must have. */
clrt_tensor *clrt__module_backward(clrt_module *m, clrt_tensor *grad_out, int want_grad_in,
                                   const clrt__epilogue *epi, clrt_status *status);
/* m and t non-NULL, t on m's device (named `what` in the message). */
clrt_status clrt__module_check_device(const char *op, const clrt_module *m, const clrt_tensor *t,
                                      const char *what);
/* The checks of clrt_module_forward: m and x non-NULL, x on m's device and
 * float32. */
clrt_status clrt__module_check_input(const char *op, const clrt_module *m, const clrt_tensor *t,
                                     const char *what);
/* Replaces *slot with t (retaining it), releasing the previous value. */
void clrt__module_keep(clrt_tensor **slot, clrt_tensor *t);

/* An attribute's name (a child's, a parameter's, a buffer's): non-empty,
 * without dots, UTF-8; CLRT_EINVAL naming op and `what` ("child 3's")
 * otherwise (sequential.c). */
clrt_status clrt__check_attr_name(const char *op, const char *what, const char *name);

/* Containers (sequential.c). clrt__container_new makes a module of `vt`
 * (`size` bytes) owning the n children, named by `names` (NULL: their
 * indices); it checks them (non-NULL, one device, valid unique names) and
 * frees them on failure. The Sequential's forward, backward and describe
 * serve every container that runs its children in order. */
clrt_module *clrt__container_new(const clrt__module_vt *vt, size_t size, int n, clrt_module **mods,
                                 const char *const *names);
clrt_tensor *clrt__sequential_forward(clrt_module *m, clrt_tensor *x);
clrt_status clrt__sequential_backward(clrt_module *m, clrt_tensor *grad_out, clrt_tensor **grad_in);
void clrt__sequential_describe(const clrt_module *m, char *buf, size_t cap);

/* Sequential's fusions (fuse.c). clrt__fused_forward runs children i.. of
 * m from x, fusing a ReLU into the layer before it where it can; stores
 * how many children it ran in *ran (1 or 2) and returns the output (new
 * reference) or NULL + error. clrt__fused_backward runs the backward of
 * child i, fusing the ReLU before it (child i-1) into its input gradient
 * where it can; stores how many children it covered in *ran (1 or 2). */
clrt_tensor *clrt__fused_forward(clrt_module *m, int i, clrt_tensor *x, int *ran);
clrt_tensor *clrt__fused_backward(clrt_module *m, int i, clrt_tensor *grad_out, int want_grad_in,
                                  int *ran, clrt_status *status);

/* ResNet-18's layers with `width` channels in the first stage instead of
 * torchvision's 64 (2, 4 and 8 times that in the later ones), for tests on
 * simulators, where the real widths take hours (resnet.c). */
clrt_module *clrt__resnet18_width(int in_channels, int classes, clrt_resnet_stem stem, int width);

/* The module for error messages: a layer's full description, a container's
 * kind and size ("Sequential(12 modules)"). Returns buf. */
char *clrt__module_brief(const clrt_module *m, char *buf, size_t cap);

/* The module's parameters (*params) and gradients (*grads) in
 * state_dict order, as new malloc'ed arrays the caller frees; either
 * pointer may be NULL (not wanted). Their count, or a negative status. */
int clrt__module_param_arrays(clrt_module *m, clrt_tensor ***params, clrt_tensor ***grads);

/* The module's buffers (float32 tensors on its device) and pointers to
 * its host counters, in state_dict order, as new malloc'ed arrays the
 * caller frees; their count, or a negative status. */
int clrt__module_buffer_arrays(clrt_module *m, clrt_tensor ***buffers);
int clrt__module_counter_arrays(clrt_module *m, int64_t ***counters);

/* A container's children (module_adopt.c): check that none is NULL,
 * listed twice or owned by another container (CLRT_EINVAL naming api and
 * the index); mark them owned; on a failed construction free those the
 * caller handed over (each once, none another container owns). */
clrt_status clrt__adopt_check(const char *api, int n, clrt_module **mods);
void clrt__adopt(int n, clrt_module **mods);
void clrt__adopt_failed(int n, clrt_module **mods);

/* The module's state in state_dict order as safetensors items holding
 * host copies (names borrowed from the module): what clrt_module_save
 * writes, for checkpoints too. Free with clrt__st_items_free. */
clrt_status clrt__module_state_items(clrt_module *m, clrt__st_item **items, int *n, const char *op);

/* A fresh 64-bit seed mixed from two values (splitmix64 finaliser). */
uint64_t clrt__seed_mix(uint64_t a, uint64_t b);

#endif
