/* clrt/module.h — modules written outside the library, like a subclass of
 * torch.nn.Module.
 *
 * A module kind is a forward composed of ops (clrt/ops.h) and of other
 * modules' calls; its backward comes from autograd (clrt/autograd.h), so
 * there is none to write. Its parameters, buffers and child modules are
 * registered by name, as a PyTorch module's attributes are, and then take
 * part in everything modules do: clrt_module_parameters (for optimizers),
 * save and load (safetensors under PyTorch's state_dict names, so the
 * state of a clrt module loads into the PyTorch module with the same
 * attributes), clrt_module_to, clrt_module_clone (data-parallel replicas),
 * training and evaluation modes, clrt_train, and the explicit
 * clrt_module_backward (containers call it: a custom module inside a
 * Sequential works as a built-in one does).
 *
 * Ownership: clrt_module_new returns a module the caller frees with
 * clrt_module_free (which also frees `user` through def->free_user); a
 * registered tensor is retained, a registered child is owned (also when
 * the call fails). The def must outlive its modules (a static one).
 *
 *   static clrt_tensor *mlp_forward(clrt_module *m, int n, clrt_tensor *const *in, void *user)
 *   {
 *       clrt_tensor *h = clrt_module_forward(clrt_module_child_named(m, "fc1"), in[0]);
 *       clrt_tensor *a = h ? clrt_f_gelu(h) : NULL;
 *       clrt_tensor *y = a ? clrt_module_forward(clrt_module_child_named(m, "fc2"), a) : NULL;
 *       clrt_tensor_release(h);
 *       clrt_tensor_release(a);
 *       return y;
 *   }
 *   static const clrt_module_def mlp_def = {.kind = "MLP", .forward = mlp_forward};
 *   clrt_module *m = clrt_module_new(&mlp_def, NULL);
 *   clrt_module_add_child(m, "fc1", clrt_linear(8, 32));
 *   clrt_module_add_child(m, "fc2", clrt_linear(32, 2));
 */
#ifndef CLRT_MODULE_H
#define CLRT_MODULE_H
#include <clrt/nn.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *kind; /* shown by clrt_module_str and in errors: "MLP" */
    /* The forward on n inputs (n as the caller gave), on the module's
     * device: a new reference or NULL + an error. Runs with grad mode on
     * while training, so that the ops it calls are recorded. */
    clrt_tensor *(*forward)(clrt_module *m, int n, clrt_tensor *const *inputs, void *user);
    /* Optional: writes "(in=3, out=4)" or so after the kind. */
    void (*describe)(const clrt_module *m, const void *user, char *buf, size_t cap);
    /* Optional: a copy of user for clrt_module_clone (without it the clone
     * shares user). */
    void *(*clone_user)(const void *user);
    /* Optional: frees user when the module goes. */
    void (*free_user)(void *user);
} clrt_module_def;

/* A module of kind def with its own data `user`, on clrt_default_device(),
 * in training mode, with no parameters yet. NULL + error (then user is
 * not freed). */
CLRT_API clrt_module *clrt_module_new(const clrt_module_def *def, void *user);
/* The user data given to clrt_module_new (a clone's copy); NULL for a
 * built-in module. */
CLRT_API void *clrt_module_user(const clrt_module *m);

/* Registers `value` as parameter `name` of m (float32, on m's device, a
 * leaf): it becomes a tensor that requires grad, with a zeroed gradient
 * (clrt_module_grad, clrt_tensor_grad). Names are PyTorch attribute
 * names: non-empty, no dots, UTF-8, unique among m's parameters, buffers
 * and children. Retains value. */
CLRT_API clrt_status clrt_module_add_parameter(clrt_module *m, const char *name,
                                               clrt_tensor *value);
/* Registers a buffer: state that is saved and moved but not trained
 * (float32, on m's device). Retains value. */
CLRT_API clrt_status clrt_module_add_buffer(clrt_module *m, const char *name, clrt_tensor *value);
/* Registers a child module (owned from now on, also on failure; on m's
 * device; not owned by another container). */
CLRT_API clrt_status clrt_module_add_child(clrt_module *m, const char *name, clrt_module *child);
/* The child registered under name (borrowed), or NULL + CLRT_EINVAL. */
CLRT_API clrt_module *clrt_module_child_named(clrt_module *m, const char *name);

/* Forward on several inputs (attention's query and mask): custom modules
 * take any n >= 1; built-in ones take one. Recorded like
 * clrt_module_forward. */
CLRT_API clrt_tensor *clrt_module_forward_n(clrt_module *m, int n, clrt_tensor *const *inputs);

#ifdef __cplusplus
}
#endif
#endif
