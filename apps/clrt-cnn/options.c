/* clrt-cnn's command line. */
#include "cnn.h"

#include <stdlib.h>
#include <string.h>

void cnn_usage(FILE *f)
{
    fprintf(f, "usage: clrt-cnn [options]\n"
               "Trains a CNN with clrt and reports loss, accuracy and speed per epoch.\n\n"
               "  --model lenet|seed-cnn|resnet18   LeNet (28x28 inputs, default), the seed\n"
               "                              notebook's CNN (3x32x32 inputs), or ResNet-18\n"
               "                              with its small stem (any 28-32 pixel images)\n"
               "  --dataset fashion-mnist|cifar10   default: fashion-mnist (seed-cnn: cifar10)\n"
               "  --data-dir DIR              default for Fashion-MNIST:\n"
               "                              /usr/share/datasets/fashion-mnist\n"
               "  --device SPEC               cpu, cpu:1, gpu, gpu:1, cuda:0 ... (default: the\n"
               "                              best device, gpu:0 if any, else cpu)\n"
               "  --devices LIST|all          train on several devices at once (data parallel):\n"
               "                              cpu:0,cpu:1, gpu:0,gpu:1, or all (every GPU, else\n"
               "                              cpu); each batch is split across them\n"
               "  --distributed               train across the processes of an MPI job (each\n"
               "                              rank on --device/--devices, default: its local\n"
               "                              rank's GPU, else cpu); run under mpirun, e.g.\n"
               "                              mpirun -np 2 clrt-cnn --distributed; rank 0\n"
               "                              prints and writes --save/--logdir/--plot\n"
               "  --compare                   train the same model from the same seed on every\n"
               "                              visible device in turn and print a table\n"
               "  --batch-sweep B1,B2,...     one epoch at each batch size, with the share of\n"
               "                              time spent moving data to the device\n"
               "  --epochs N                  default 10\n"
               "  --batch-size N              default 256\n"
               "  --optimizer sgd|adam        default sgd (momentum 0.9)\n"
               "  --lr X                      default 0.05 for sgd, 0.001 for adam\n"
               "  --momentum X                sgd momentum, default 0.9\n"
               "  --weight-decay X            L2 penalty added to the gradients, default 0\n"
               "  --augment                   random crops (4-pixel zero padding) and\n"
               "                              horizontal flips of the training images\n"
               "  --schedule cosine|constant  learning rate over the epochs: cosine annealing\n"
               "                              from --lr towards 0 (default), or constant\n"
               "  --seed N                    default 1\n"
               "  --limit N                   use the first N training images\n"
               "  --test-limit N              use the first N test images\n"
               "  --save PATH                 after each epoch, save the model to PATH\n"
               "                              (safetensors, PyTorch state_dict names) and the\n"
               "                              optimizer's state to PATH.optim\n"
               "  --resume PATH               continue a --save run from PATH and PATH.optim\n"
               "                              up to --epochs epochs in all, as if never\n"
               "                              stopped: the options that shape training must be\n"
               "                              the saved ones (checked; with --schedule cosine,\n"
               "                              --epochs too)\n"
               "  --logdir DIR                TensorBoard scalars: each step's loss (Train/Loss),\n"
               "                              per epoch train/test loss and accuracy, speed\n"
               "  --plot FILE.svg             train/test loss and accuracy per epoch as an SVG\n"
               "                              (--compare, --batch-sweep: samples/s as bars)\n"
               "  --profile                   at the end, the operations with the most device\n"
               "                              time (CLRT_TRACE=FILE.json: the whole timeline)\n"
               "  --help                      this text\n");
}

static const char *const valued_flags[] = {
    "--model",       "--dataset",      "--optimizer", "--device", "--devices", "--data-dir",
    "--epochs",      "--batch-size",   "--seed",      "--limit",  "--lr",      "--momentum",
    "--batch-sweep", "--schedule",     "--save",      "--resume", "--logdir",  "--plot",
    "--test-limit",  "--weight-decay", NULL};

static const app_cli cli = {"clrt-cnn", cnn_usage, valued_flags};

static int bad(const char *flag, const char *value, const char *why)
{
    return app_bad(&cli, flag, value, why);
}

static int parse_sweep(const char *s, cnn_options *o)
{
    const char *p = s;
    o->n_sweep = 0;
    while (p && *p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 1 << 20 || (*end != ',' && *end != '\0') ||
            o->n_sweep == CNN_MAX_SWEEP)
            return bad("--batch-sweep", s, "expected a comma-separated list of batch sizes");
        o->sweep[o->n_sweep++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return o->n_sweep ? 0 : bad("--batch-sweep", s, "empty list");
}

/* v is a, b or c (c may be NULL). */
static int one_of(const char *flag, const char *v, const char *a, const char *b, const char *c)
{
    if (v && (strcmp(v, a) == 0 || strcmp(v, b) == 0 || (c && strcmp(v, c) == 0)))
        return 0;
    char why[96];
    snprintf(why, sizeof why, c ? "expected %s, %s or %s" : "expected %s or %s", a, b, c);
    return bad(flag, v, why);
}

/* Commas in s: a --devices list's length less one ("all": 0). */
static size_t count_commas(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == ',';
    return n;
}

/* Applies one "--flag value" pair; returns -1 on error. */
static int apply(const char *flag, const char *v, cnn_options *o)
{
    long n = 0;
    if (strcmp(flag, "--model") == 0)
        return one_of(flag, v, "lenet", "seed-cnn", "resnet18") ? -1 : (o->model = v, 0);
    if (strcmp(flag, "--dataset") == 0)
        return one_of(flag, v, "fashion-mnist", "cifar10", NULL) ? -1 : (o->dataset = v, 0);
    if (strcmp(flag, "--optimizer") == 0)
        return one_of(flag, v, "sgd", "adam", NULL) ? -1 : (o->optimizer = v, 0);
    if (strcmp(flag, "--schedule") == 0)
        return one_of(flag, v, "cosine", "constant", NULL)
                   ? -1
                   : (o->cosine = strcmp(v, "cosine") == 0, 0);
    if (strcmp(flag, "--device") == 0)
        return (o->device = v, 0);
    if (strcmp(flag, "--devices") == 0)
        return *v ? (o->devices = v, 0) : bad(flag, v, "expected a device list or all");
    if (strcmp(flag, "--data-dir") == 0)
        return (o->data_dir = v, 0);
    if (strcmp(flag, "--epochs") == 0)
        return app_parse_long(&cli, flag, v, 1, 100000, &n) ? -1 : (o->epochs = (int)n, 0);
    if (strcmp(flag, "--batch-size") == 0)
        return app_parse_long(&cli, flag, v, 1, 1 << 20, &n) ? -1 : (o->batch_size = (int)n, 0);
    if (strcmp(flag, "--seed") == 0)
        return app_parse_long(&cli, flag, v, 0, 0x7fffffffL, &n) ? -1 : (o->seed = (uint64_t)n, 0);
    if (strcmp(flag, "--limit") == 0)
        return app_parse_long(&cli, flag, v, 1, 1L << 40, &n) ? -1 : (o->limit = n, 0);
    if (strcmp(flag, "--test-limit") == 0)
        return app_parse_long(&cli, flag, v, 1, 1L << 40, &n) ? -1 : (o->test_limit = n, 0);
    if (strcmp(flag, "--lr") == 0)
        return app_parse_double(&cli, flag, v, 0, 1e6, &o->lr);
    if (strcmp(flag, "--momentum") == 0)
        return app_parse_double(&cli, flag, v, 0, 1e6, &o->momentum);
    if (strcmp(flag, "--weight-decay") == 0)
        return app_parse_double(&cli, flag, v, 0, 1e6, &o->weight_decay);
    if (strcmp(flag, "--save") == 0)
        return (o->save = v, 0);
    if (strcmp(flag, "--resume") == 0)
        return (o->resume = v, 0);
    if (strcmp(flag, "--logdir") == 0)
        return (o->logdir = v, 0);
    if (strcmp(flag, "--plot") == 0)
        return (o->plot = v, 0);
    if (strcmp(flag, "--batch-sweep") == 0)
        return parse_sweep(v, o);
    return bad("unknown option", flag, "see the list below");
}

int cnn_parse_options(int argc, char **argv, cnn_options *o)
{
    *o = (cnn_options){.model = "lenet",
                       .optimizer = "sgd",
                       .epochs = 10,
                       .batch_size = 256,
                       .lr = -1,
                       .momentum = 0.9,
                       .seed = 1,
                       .cosine = 1};
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        if (strcmp(flag, "--help") == 0 || strcmp(flag, "-h") == 0) {
            cnn_usage(stdout);
            return 1;
        }
        if (strcmp(flag, "--compare") == 0) {
            o->compare = 1;
            continue;
        }
        if (strcmp(flag, "--profile") == 0) {
            o->profile = 1;
            continue;
        }
        if (strcmp(flag, "--distributed") == 0) {
            o->distributed = 1;
            continue;
        }
        if (strcmp(flag, "--augment") == 0) {
            o->augment = 1;
            continue;
        }
        char name[64];
        const char *value;
        if (app_flag_value(&cli, argc, argv, &i, name, &flag, &value) != 0)
            return -1;
        if (apply(flag, value, o) != 0)
            return -1;
    }
    if (!o->dataset)
        o->dataset = strcmp(o->model, "seed-cnn") == 0 ? "cifar10" : "fashion-mnist";
    /* SGD at 0.1 with momentum 0.9 left LeNet stuck at chance for one seed in
     * three (in clrt and in PyTorch alike); 0.05 trained every seed tried,
     * to 0.890-0.895 test accuracy in 10 epochs on Fashion-MNIST. */
    if (o->lr < 0)
        o->lr = strcmp(o->optimizer, "adam") == 0 ? 0.001 : 0.05;
    if ((o->compare || o->n_sweep) && (o->save || o->resume || o->logdir))
        return bad(o->save     ? "--save"
                   : o->resume ? "--resume"
                               : "--logdir",
                   o->save     ? o->save
                   : o->resume ? o->resume
                               : o->logdir,
                   "cannot be combined with --compare or --batch-sweep");
    if (o->compare && o->n_sweep)
        return bad("--compare", "", "cannot be combined with --batch-sweep");
    if (o->distributed && (o->compare || o->n_sweep || o->profile))
        return bad("--distributed", "",
                   "trains one model: it cannot be combined with --compare, --batch-sweep or "
                   "--profile");
    if (o->devices && (o->device || o->compare || o->n_sweep))
        return bad("--devices", o->devices,
                   "cannot be combined with --device, --compare or --batch-sweep");
    return 0;
}

/* --distributed: every option that changes the computation, the number of
 * collective calls or who writes what must be the same on every rank
 * (clrt_collective_agree: every rank fails alike, naming the difference).
 * Paths may differ across hosts; whether one is given may not. */
int cnn_options_agree(const cnn_options *o)
{
    enum { N = 16 };
    static const char *const names[N] = {
        "--model",    "--dataset",  "--optimizer",  "--lr",
        "--momentum", "--schedule", "--epochs",     "--batch-size",
        "--seed",     "--limit",    "--test-limit", "--save",
        "--resume",   "--logdir",   "--plot",       "--devices (how many)"};
    char num[N][48];
    const char *values[N];
    const char *given[2] = {"not given", "given"};
    snprintf(num[3], sizeof num[3], "%.17g", o->lr);
    snprintf(num[4], sizeof num[4], "%.17g", o->momentum);
    snprintf(num[6], sizeof num[6], "%d", o->epochs);
    snprintf(num[7], sizeof num[7], "%d", o->batch_size);
    snprintf(num[8], sizeof num[8], "%llu", (unsigned long long)o->seed);
    snprintf(num[9], sizeof num[9], "%lld", (long long)o->limit);
    snprintf(num[10], sizeof num[10], "%lld", (long long)o->test_limit);
    snprintf(num[15], sizeof num[15], "%d", o->devices ? 1 + (int)count_commas(o->devices) : 1);
    const char *fixed[N] = {o->model,
                            o->dataset,
                            o->optimizer,
                            num[3],
                            num[4],
                            o->cosine ? "cosine" : "constant",
                            num[6],
                            num[7],
                            num[8],
                            num[9],
                            num[10],
                            given[o->save != NULL],
                            given[o->resume != NULL],
                            given[o->logdir != NULL],
                            given[o->plot != NULL],
                            num[15]};
    for (int i = 0; i < N; i++)
        values[i] = fixed[i];
    if (clrt_collective_agree(o->job.world, N, names, values, "clrt-cnn --distributed") == CLRT_OK)
        return 0;
    fprintf(stderr, "clrt-cnn: %s\n", clrt_last_error());
    return 1;
}
