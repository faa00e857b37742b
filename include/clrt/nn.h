/* clrt/nn.h — neural-network modules with forward and backward passes, like
 * torch.nn.
 *
 * Names. Module constructors are clrt_<kind> (torch.nn.<Kind>): clrt_linear,
 * clrt_conv2d, clrt_relu... The tensor ops they call are the functional forms
 * of clrt/ops.h, clrt_f_<op> (torch.nn.functional: F.relu, F.conv2d).
 *
 * Where parameters live. A constructor creates its parameters on
 * clrt_default_device() (clrt/device.h; like torch.set_default_device: the
 * first CPU device, else gpu:0, or the device given to
 * clrt_set_default_device), so a model builds on every host with an OpenCL
 * device, GPU-only hosts included. Parameters are initialised as PyTorch does (see
 * clrt_module_init), from a process-wide seed sequence, so two layers built
 * one after the other differ. clrt_module_to(m, d) moves every parameter and
 * gradient to d IN PLACE: the clrt_tensor objects keep their identity, so
 * borrowed pointers from clrt_module_param / clrt_module_parameters stay
 * valid. Build optimizers after clrt_module_to, as in PyTorch, because their
 * state lives on the device the parameters had when they were built.
 * A lazy clrt_linear(0, n) has no parameters until its first forward,
 * which creates them on the module's device (the default device when it was
 * built, or the device of the last clrt_module_to) from its init seed.
 *
 * Ownership. Constructors return a module the caller frees with
 * clrt_module_free; clrt_sequential takes ownership of its children (also
 * on failure). clrt_module_forward and clrt_module_backward return a NEW
 * REFERENCE to a buffer the module keeps and reuses while the batch shape is
 * unchanged (a training step allocates no device memory): release it when
 * done, and clone it (clrt_tensor_clone) to keep its values past the next
 * forward/backward of the same module. A module retains what it needs from
 * the forward pass (its input, pooling indices) until the next forward.
 *
 * Gradients accumulate into each parameter's gradient like PyTorch's .grad:
 * call clrt_module_zero_grad before each backward pass. Gradients start at
 * zero. Forward, backward and zero_grad only enqueue work and never read
 * back to the host; building parameters (constructors, clrt_module_init, a
 * lazy layer's first forward) and clrt_module_to wait for their copies. */
#ifndef CLRT_NN_H
#define CLRT_NN_H
#include <clrt/tensor.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct clrt_module clrt_module;

/* y = x W^T + b. x [*, in] -> y [*, out] (every leading index is a row),
 * W [out, in], b [out]. in_features 0: inferred from x at the first
 * forward, like nn.LazyLinear. */
CLRT_API clrt_module *clrt_linear(int in_features, int out_features);
/* The same; bias 0 for a layer without b (PyTorch's bias=False: no
 * "bias" in its state). */
CLRT_API clrt_module *clrt_linear_ex(int in_features, int out_features, int bias);
/* x [N, in_ch, H, W] -> [N, out_ch, (H+2p-k)/s+1, (W+2p-k)/s+1]; weight
 * [out_ch, in_ch, k, k], bias [out_ch]. */
CLRT_API clrt_module *clrt_conv2d(int in_ch, int out_ch, int kernel, int stride, int padding);
/* The same with bias 0 for a convolution without bias (PyTorch's
 * bias=False: no "bias" in its state), as before a BatchNorm. */
CLRT_API clrt_module *clrt_conv2d_ex(int in_ch, int out_ch, int kernel, int stride, int padding,
                                     int bias);
CLRT_API clrt_module *clrt_relu(void);
CLRT_API clrt_module *clrt_sigmoid(void);
/* NCHW pooling, square window, no padding: (H-k)/s+1. */
CLRT_API clrt_module *clrt_maxpool2d(int kernel, int stride);
CLRT_API clrt_module *clrt_avgpool2d(int kernel, int stride);
/* nn.BatchNorm2d(channels): per-channel batch normalization (eps 1e-5,
 * momentum 0.1, affine, running statistics). Parameters "weight" (1) and
 * "bias" (0); buffers "running_mean" (0) and "running_var" (1) on the
 * device and "num_batches_tracked" (int64, on the host), part of its state
 * (save, load, clone, to) but not parameters: optimizers never see them.
 * Training normalises with the batch's mean and biased variance and
 * updates the running statistics with the unbiased one; evaluation
 * (clrt_module_train(m, 0)) uses the running statistics. */
CLRT_API clrt_module *clrt_batchnorm2d(int channels);
/* nn.Embedding(num_embeddings, embedding_dim): int32 ids of any shape ->
 * float32 [*ids.shape, embedding_dim], rows of "weight" [num, dim]
 * (N(0, 1) at init); an id outside [0, num) gives a NaN row (see
 * clrt_f_embedding). Its backward is autograd's, deterministic for
 * repeated ids. */
CLRT_API clrt_module *clrt_embedding(int num_embeddings, int embedding_dim);
/* nn.LayerNorm(dim): x [*, dim] normalised over the last dim (biased
 * variance, eps 1e-5), times "weight" (1 at init) plus "bias" (0). Its
 * backward is autograd's (clrt_f_layer_norm's fused rule). */
CLRT_API clrt_module *clrt_layernorm(int dim);
/* nn.MultiheadAttention(embed_dim, num_heads, batch_first=True) as
 * self-attention: clrt_module_forward(m, x) or, with a mask,
 * clrt_module_forward_n(m, 2, {x, mask}); x [B, T, embed_dim] -> [B, T,
 * embed_dim]. mask: uint8, 1 where attention is not allowed (PyTorch's
 * boolean attn_mask), broadcast to [B, heads, T, T]: [T, T] from
 * clrt_causal_mask for a causal model. State: "in_proj_weight" [3E, E]
 * (xavier uniform at init), "in_proj_bias" [3E] (0), "out_proj.weight",
 * "out_proj.bias" (0). Its backward is autograd's. num_heads must divide
 * embed_dim. */
CLRT_API clrt_module *clrt_multihead_attention(int embed_dim, int num_heads);
/* The same with dropout p in [0, 1) on the attention weights in training
 * (PyTorch's dropout argument; a fresh mask per training forward, from the
 * module's init seed). */
CLRT_API clrt_module *clrt_multihead_attention_ex(int embed_dim, int num_heads, double dropout);
/* The feed-forward activation of a transformer layer. */
typedef enum { CLRT_ACTIVATION_RELU, CLRT_ACTIVATION_GELU } clrt_activation;

/* nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout,
 * activation, batch_first=True, norm_first): x [B, T, d_model] -> the
 * same shape; clrt_module_forward_n(m, 2, {x, mask}) with a uint8 mask as
 * clrt_multihead_attention's. Post-norm (norm_first 0, PyTorch's default):
 * h = norm1(x + sa(x)), y = norm2(h + ff(h)); pre-norm: h = x +
 * sa(norm1(x)), y = h + ff(norm2(h)); sa = dropout1(self_attn(.)), ff =
 * dropout2(linear2(dropout(activation(linear1(.))))). Children (state
 * names) as PyTorch's: self_attn (clrt_multihead_attention_ex with the
 * same dropout), linear1, dropout, linear2, norm1, norm2 (eps 1e-5),
 * dropout1, dropout2. dropout in [0, 1) (PyTorch's default 0.1), nhead
 * must divide d_model. Its backward is autograd's. */
CLRT_API clrt_module *clrt_transformer_encoder_layer(int d_model, int nhead, int dim_feedforward,
                                                     double dropout, clrt_activation activation,
                                                     int norm_first);
/* nn.TransformerEncoder(layer, num_layers) without a final norm: the
 * layers (owned from now on, also on failure) as children "layers.0",
 * "layers.1", ... each called on the last one's output with the same
 * optional mask. PyTorch copies one layer num_layers times; here each
 * layer is made by the caller (and initialised from its own seed). */
CLRT_API clrt_module *clrt_transformer_encoder(int num_layers, clrt_module **layers);
/* A decoder-only language model whose state loads strictly into this
 * PyTorch module (and back):
 *   tok_emb = nn.Embedding(vocab, d_model); pos_emb = nn.Embedding(block, d_model)
 *   encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(d_model, heads,
 *       dim_ff, dropout, activation="gelu", batch_first=True, norm_first=True), layers)
 *   norm = nn.LayerNorm(d_model); head = nn.Linear(d_model, vocab, bias=False)
 *   forward(idx): head(norm(encoder(tok_emb(idx) + pos_emb(arange(T)),
 *                                   causal mask)))
 * clrt_module_forward(gpt, ids): ids int32 [B, T], 1 <= T <= block ->
 * logits [B, T, vocab]. An id outside [0, vocab) gives NaN logits for its
 * position (ids are not read back). clrt_gpt has dropout 0. */
CLRT_API clrt_module *clrt_gpt(int vocab, int block, int d_model, int heads, int layers,
                               int dim_ff);
CLRT_API clrt_module *clrt_gpt_ex(int vocab, int block, int d_model, int heads, int layers,
                                  int dim_ff, double dropout);
/* [len, len] uint8 on d, 1 above the diagonal: each position attends to
 * itself and those before it (nn.Transformer.generate_square_subsequent_mask
 * as a boolean mask). A new tensor, or NULL + error. */
CLRT_API clrt_tensor *clrt_causal_mask(clrt_device *d, int len);
/* A residual block: out = relu(body(x) + shortcut(x)), shortcut NULL for
 * the identity. Takes ownership of both (also on failure). When body is a
 * container (clrt_sequential_named) its children, with their names, become
 * the block's, and the shortcut follows as "downsample": torchvision's
 * BasicBlock is clrt_residual(clrt_sequential_named(5, {conv1, bn1, relu,
 * conv2, bn2}, names), downsample), with its state names. Any other body
 * is the block's child "0". Kind "BasicBlock". */
CLRT_API clrt_module *clrt_residual(clrt_module *body, clrt_module *shortcut);
/* nn.MaxPool2d(kernel, stride, padding) (torchvision ResNet's stem: 3, 2,
 * 1): implicit -inf padding, 0 <= padding <= kernel/2, output
 * (H+2p-k)/s+1 (floor); described as PyTorch prints it,
 * "MaxPool2d(kernel_size=3, stride=2, padding=1, dilation=1,
 * ceil_mode=False)". */
CLRT_API clrt_module *clrt_maxpool2d_padded(int kernel, int stride, int padding);
/* nn.AdaptiveAvgPool2d(out): [N, C, H, W] -> [N, C, out, out], any H, W >= 1
 * (see clrt_f_adaptive_avgpool2d_out); out = 1 is global average pooling. */
CLRT_API clrt_module *clrt_adaptive_avgpool2d(int out);
/* nn.Dropout(p), 0 <= p < 1 (p = 1 is refused). Training: out = x * mask /
 * (1 - p), a new mask per training forward; the backward multiplies by the
 * same mask. Evaluation (and p = 0): forward returns its input itself (a
 * new reference to x, no copy), and backward with p = 0 returns grad_out
 * itself. The masks come from clrt/ops_dropout.h with the module's init
 * seed (the default seed sequence, or clrt_module_init's) and a step that
 * counts its training forwards: the same seed gives the same masks on every
 * device. The count restarts at 0 when clrt_module_init gives a new seed;
 * clrt_module_clone copies it (a replica draws what the original would). */
CLRT_API clrt_module *clrt_dropout(double p);
/* [N, ...] -> [N, prod(...)], a view (no copy). */
CLRT_API clrt_module *clrt_flatten(void);
/* Runs mods in order; takes ownership of the array's modules (not of the
 * array), also when it fails. Parameters are named "<index>.<name>". A
 * module has one owner: one listed twice, or one another container owns,
 * is refused with CLRT_EINVAL (the others given are then freed, each once;
 * clrt_module_clone makes a copy to use twice). */
CLRT_API clrt_module *clrt_sequential(int n, clrt_module **mods);
/* The same with each child named as a PyTorch module names its attributes
 * (names[i]: non-empty, no dots, unique; copied): state names become
 * "<name>.<param>", e.g. "conv1.weight", "bn1.running_var", so a model
 * built this way saves and loads under the names of the PyTorch module
 * whose attributes these are. Takes ownership of mods like clrt_sequential. */
CLRT_API clrt_module *clrt_sequential_named(int n, clrt_module **mods, const char *const *names);

/* LeNet-5 as in d2l (ReLU, max pooling) for samples chw = [C, H, H]
 * (clrt_dataset_sample_shape): Conv2d(C, 6, 5, padding 2), ReLU, MaxPool 2,
 * Conv2d(6, 16, 5), ReLU, MaxPool 2, Flatten, Linear(16*s*s, 120), ReLU,
 * Linear(120, 84), ReLU, Linear(84, classes); s = 5 for 28x28 images,
 * 6 for 32x32. Parameters "0.", "3.", "7.", "9.", "11.". */
CLRT_API clrt_module *clrt_lenet(const int64_t chw[3], int classes);
/* The seed notebook's CIFAR-10 CNN for 3x32x32 samples: Conv2d(3, 6, 5),
 * ReLU, MaxPool 2, Conv2d(6, 16, 5, padding 3), ReLU, Conv2d(16, 16, 5),
 * ReLU, MaxPool 2, Conv2d(16, 16, 3), ReLU, MaxPool 2, Flatten,
 * Linear(64, 120), ReLU, Linear(120, 84), ReLU, Linear(84, classes).
 * Parameters "0.", "3.", "5.", "8.", "12.", "14.", "16.". */
CLRT_API clrt_module *clrt_seed_cnn(int classes);

/* ResNet's first layers: torchvision's (7x7 stride-2 convolution, 3x3
 * stride-2 padded max pooling) for ImageNet-sized images, or a 3x3
 * stride-1 convolution and no max pooling for 28-32 pixel images (the
 * usual CIFAR variant). */
typedef enum { CLRT_RESNET_IMAGENET, CLRT_RESNET_SMALL } clrt_resnet_stem;
/* torchvision's resnet18 / resnet34 (BasicBlock, [2, 2, 2, 2] / [3, 4, 6,
 * 3] blocks) for in_channels-channel images and `classes` outputs, with its
 * state names ("layer2.0.downsample.1.running_var") and initialisation:
 * a state saved here loads into torchvision's model with
 * load_state_dict(strict=True) (with the small stem: its conv1 replaced by
 * nn.Conv2d(in_channels, 64, 3, 1, 1, bias=False) and maxpool by
 * nn.Identity()), and the reverse. Kind "ResNet". */
CLRT_API clrt_module *clrt_resnet18(int in_channels, int classes, clrt_resnet_stem stem);
CLRT_API clrt_module *clrt_resnet34(int in_channels, int classes, clrt_resnet_stem stem);

/* Children of a container (Sequential, ResNet, a residual block), like
 * model[i]: borrowed, NULL +
 * error when i is out of range. Running a child on its own is allowed. */
CLRT_API int clrt_module_num_children(const clrt_module *m);
CLRT_API clrt_module *clrt_module_child(clrt_module *m, int i);
/* Child i's name: the one it was given, else its index ("0"); borrowed
 * (an index is in a per-thread buffer until the next call). NULL + error
 * when i is out of range. */
CLRT_API const char *clrt_module_child_name(const clrt_module *m, int i);

/* "Linear", "Conv2d", "Sequential", ... */
CLRT_API const char *clrt_module_kind(const clrt_module *m);
/* PyTorch-like one-line description, e.g. "Linear(in_features=400,
 * out_features=120)"; Sequential lists its children. Returns buf. */
CLRT_API char *clrt_module_str(const clrt_module *m, char *buf, size_t cap);
/* The device the parameters are on (or will be created on). */
CLRT_API clrt_device *clrt_module_device(const clrt_module *m);

/* Moves parameters and gradients to d in place (see above). */
CLRT_API clrt_status clrt_module_to(clrt_module *m, clrt_device *d);
/* Training (1, the default) or evaluation (0) mode, recursively. In
 * evaluation mode forward keeps nothing for backward, and backward fails. */
CLRT_API void clrt_module_train(clrt_module *m, int training);
CLRT_API int clrt_module_is_training(const clrt_module *m);

/* Forward pass. x must be on the module's device: otherwise NULL and an
 * error naming both devices. Returns a new reference (see Ownership). */
CLRT_API clrt_tensor *clrt_module_forward(clrt_module *m, clrt_tensor *x);
/* Backward pass of the last forward: grad_out has the forward output's
 * shape. Accumulates parameter gradients and returns the gradient with
 * respect to the forward input (a new reference; see Ownership). */
CLRT_API clrt_tensor *clrt_module_backward(clrt_module *m, clrt_tensor *grad_out);
/* Same, without computing the input gradient (like an input that does not
 * require grad): the first layer skips that work. What training uses. */
CLRT_API clrt_status clrt_module_backward_params(clrt_module *m, clrt_tensor *grad_out);
/* Sets every parameter gradient to zero (enqueued fills). */
CLRT_API clrt_status clrt_module_zero_grad(clrt_module *m);

/* Parameter and its gradient by PyTorch state_dict name ("weight",
 * "0.weight", "3.bias"); borrowed, valid until clrt_module_free. NULL +
 * CLRT_EINVAL error if there is no such parameter. */
CLRT_API clrt_tensor *clrt_module_param(clrt_module *m, const char *name);
CLRT_API clrt_tensor *clrt_module_grad(clrt_module *m, const char *name);
/* Parameter tensors in state_dict order: writes at most `capacity` entries
 * to each non-NULL array (borrowed pointers; names valid until the next
 * call of this or clrt_module_buffers that asks for names, or
 * clrt_module_free) and returns how many exist, or a negative status.
 * Feed params and grads to clrt_sgd / clrt_adam. */
CLRT_API int clrt_module_parameters(clrt_module *m, const char **names, clrt_tensor **params,
                                    clrt_tensor **grads, int capacity);
/* The buffers (state that is not trained: BatchNorm's running_mean and
 * running_var) in state_dict order, like torch's named_buffers(): as
 * clrt_module_parameters, without gradients. Host counters
 * (num_batches_tracked) are part of the saved state but not tensors, so
 * they are not listed here. */
CLRT_API int clrt_module_buffers(clrt_module *m, const char **names, clrt_tensor **buffers,
                                 int capacity);
/* Total number of scalar parameters (lazy layers not yet built count 0). */
CLRT_API int64_t clrt_module_param_count(clrt_module *m);

/* Re-initialises every parameter the way PyTorch does by default: weights
 * Kaiming-uniform with a = sqrt(5), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
 * biases U(-1/sqrt(fan_in), 1/sqrt(fan_in)); fan_in = in_features, or
 * in_ch*k*k for conv. Values come from a host generator seeded by (seed,
 * parameter position), so they are the same on every device. Lazy layers
 * keep the seed for when they are built. Gradients are zeroed. */
CLRT_API clrt_status clrt_module_init(clrt_module *m, uint64_t seed);

/* Checkpoints in the safetensors format, with PyTorch's state_dict names
 * ("0.weight", "3.bias"): safetensors.torch.load_file + load_state_dict
 * (strict=True) reads what clrt_module_save writes into the same PyTorch
 * model, and a file PyTorch saved loads here.
 * clrt_module_save reads the parameters back from any device (blocking) and
 * writes path atomically (a temporary file beside it, fsync, rename): on
 * error, or a crash, the previous file at path is intact.
 * clrt_module_load validates the whole file first (header length, JSON,
 * dtypes, shapes against the model, offsets) and uploads to the module's
 * device only if everything matches: on error the model is unchanged and
 * the message says what does not match. Parameter tensors keep their
 * identity (optimizers built on them stay valid); gradients are left as
 * they are. Loading waits for its uploads. */
CLRT_API clrt_status clrt_module_save(clrt_module *m, const char *path);
CLRT_API clrt_status clrt_module_load(clrt_module *m, const char *path);
/* strict 1 is clrt_module_load. strict 0 (PyTorch's strict=False) loads the
 * parameters present in both and skips the rest; when `skipped` is non-NULL
 * it receives "missing: a, b; unexpected: c" (or "" when nothing was
 * skipped), truncated to cap bytes. Dtype and shape mismatches are errors
 * either way. */
CLRT_API clrt_status clrt_module_load_ex(clrt_module *m, const char *path, int strict,
                                         char *skipped, size_t cap);

CLRT_API void clrt_module_free(clrt_module *m); /* NULL: no-op */
/* A deep copy of m on device d (like copy.deepcopy(model).to(d)): the same
 * layers, parameter values and mode, gradients zeroed, no forward state; a
 * lazy layer not yet built stays lazy with the same seed. The caller owns
 * it (clrt_module_free). NULL + error (m NULL, out of memory). */
CLRT_API clrt_module *clrt_module_clone(clrt_module *m, clrt_device *d);

#ifdef __cplusplus
}
#endif
#endif
