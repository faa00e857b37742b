/* clrt-lm's command line. */
#include "lm.h"

#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: clrt-lm [options]                      train a character model\n"
               "       clrt-lm --sample N --checkpoint PATH [--prompt TEXT] [--temperature T]\n"
               "Trains clrt_gpt, a small GPT, to predict the next character of a text and\n"
               "reports the validation loss in bits per character; or writes text sampled\n"
               "from a checkpoint of such a run.\n\n"
               "  --text FILE                 the text to learn (default: the fortune-cookie\n"
               "                              texts of Debian's fortunes package,\n"
               "                              " LM_DEFAULT_TEXT ")\n"
               "  --max-chars N               use the first N characters of the text\n"
               "  --val-fraction F            the text's tail held out for validation (0.1)\n"
               "  --device SPEC               cpu, gpu:1 ... (default: the best device)\n"
               "  --devices LIST|all          data parallel over several devices\n"
               "  --distributed               across the processes of an MPI job (mpirun -np 2\n"
               "                              clrt-lm --distributed); rank 0 prints and saves\n"
               "  --block N                   characters of context (64; with --sample, at most\n"
               "                              the checkpoint's)\n"
               "  --d-model N, --heads N, --layers N, --dim-ff N\n"
               "                              the model (128, 4, 4, 4 * d-model)\n"
               "  --dropout P                 in the layers while training (0)\n"
               "  --epochs N                  passes over the training text (5)\n"
               "  --batch-size N              sequences per step (32)\n"
               "  --lr X, --min-lr X          AdamW's peak and final rate (0.003, 0.0003)\n"
               "  --warmup N                  epochs of linear warm-up before the cosine (1)\n"
               "  --schedule cosine|constant  warm-up then cosine decay to --min-lr over the\n"
               "                              epochs (default), or --lr throughout\n"
               "  --weight-decay X            AdamW's decoupled decay (0.1)\n"
               "  --seed N                    initial weights, data order, sampling (1)\n"
               "  --save PATH                 after each epoch, the model (safetensors) and\n"
               "                              AdamW's state (PATH.optim); --epochs 0 saves the\n"
               "                              initial state\n"
               "  --resume PATH               continue a --save run, as if never stopped\n"
               "  --logdir DIR                TensorBoard scalars\n"
               "  --profile                   at the end, the operations with the most device\n"
               "                              time (CLRT_TRACE=FILE.json: the whole timeline)\n"
               "  --sample N                  write N characters sampled from --checkpoint\n"
               "  --checkpoint PATH           a --save checkpoint to sample from\n"
               "  --prompt TEXT               the text the sample continues\n"
               "  --temperature T             below 1 sharper, above 1 flatter, 0 the likeliest\n"
               "                              character every time (0.8)\n"
               "  --help                      this text\n");
}

static const char *const valued_flags[] = {"--text",        "--max-chars",    "--val-fraction",
                                           "--device",      "--devices",      "--block",
                                           "--d-model",     "--heads",        "--layers",
                                           "--dim-ff",      "--dropout",      "--epochs",
                                           "--batch-size",  "--lr",           "--min-lr",
                                           "--warmup",      "--weight-decay", "--seed",
                                           "--save",        "--resume",       "--logdir",
                                           "--sample",      "--checkpoint",   "--prompt",
                                           "--temperature", "--schedule",     NULL};

static const app_cli cli = {"clrt-lm", usage, valued_flags};

/* An integer option into an int field. */
static int int_option(const char *flag, const char *v, long lo, long hi, int *out)
{
    long n;
    if (app_parse_long(&cli, flag, v, lo, hi, &n))
        return -1;
    *out = (int)n;
    return 0;
}

static int apply_model(const char *flag, const char *v, lm_options *o)
{
    if (strcmp(flag, "--block") == 0)
        return int_option(flag, v, 1, 1 << 16, &o->block);
    if (strcmp(flag, "--d-model") == 0)
        return int_option(flag, v, 1, 1 << 14, &o->d_model);
    if (strcmp(flag, "--heads") == 0)
        return int_option(flag, v, 1, 1 << 10, &o->heads);
    if (strcmp(flag, "--layers") == 0)
        return int_option(flag, v, 1, 1 << 10, &o->layers);
    if (strcmp(flag, "--dim-ff") == 0)
        return int_option(flag, v, 1, 1 << 16, &o->dim_ff);
    if (strcmp(flag, "--dropout") == 0)
        return app_parse_double(&cli, flag, v, 0, 0.99, &o->dropout);
    return 1;
}

static int apply_recipe(const char *flag, const char *v, lm_options *o)
{
    long n;
    if (strcmp(flag, "--epochs") == 0)
        return int_option(flag, v, 0, 1000000, &o->epochs);
    if (strcmp(flag, "--batch-size") == 0)
        return int_option(flag, v, 1, 1 << 20, &o->batch_size);
    if (strcmp(flag, "--warmup") == 0)
        return int_option(flag, v, 0, 1000000, &o->warmup);
    if (strcmp(flag, "--lr") == 0)
        return app_parse_double(&cli, flag, v, 0, 10, &o->lr);
    if (strcmp(flag, "--min-lr") == 0)
        return app_parse_double(&cli, flag, v, 0, 10, &o->min_lr);
    if (strcmp(flag, "--weight-decay") == 0)
        return app_parse_double(&cli, flag, v, 0, 10, &o->weight_decay);
    if (strcmp(flag, "--val-fraction") == 0)
        return app_parse_double(&cli, flag, v, 0.001, 0.9, &o->val_fraction);
    if (strcmp(flag, "--max-chars") == 0)
        return app_parse_long(&cli, flag, v, 1, 1L << 40, &n) ? -1 : (o->max_chars = n, 0);
    if (strcmp(flag, "--seed") == 0)
        return app_parse_long(&cli, flag, v, 0, 0x7fffffffL, &n) ? -1 : (o->seed = (uint64_t)n, 0);
    return 1;
}

static int apply_io(const char *flag, const char *v, lm_options *o)
{
    const char **paths[] = {&o->text,   &o->device,     &o->save,  &o->resume,
                            &o->logdir, &o->checkpoint, &o->prompt};
    static const char *const names[] = {"--text",   "--device",     "--save",  "--resume",
                                        "--logdir", "--checkpoint", "--prompt"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(flag, names[i]) == 0)
            return (*paths[i] = v, 0);
    if (strcmp(flag, "--devices") == 0)
        return *v ? (o->devices = v, 0) : app_bad(&cli, flag, v, "expected a device list or all");
    if (strcmp(flag, "--schedule") == 0) {
        if (strcmp(v, "cosine") != 0 && strcmp(v, "constant") != 0)
            return app_bad(&cli, flag, v, "expected cosine or constant");
        o->constant = strcmp(v, "constant") == 0;
        return 0;
    }
    if (strcmp(flag, "--sample") == 0)
        return int_option(flag, v, 1, 1 << 24, &o->sample);
    if (strcmp(flag, "--temperature") == 0)
        return app_parse_double(&cli, flag, v, 0, 100, &o->temperature);
    return app_bad(&cli, "unknown option", flag, "see the list below");
}

static int apply(const char *flag, const char *v, lm_options *o)
{
    int rc = apply_model(flag, v, o);
    if (rc == 1)
        rc = apply_recipe(flag, v, o);
    return rc == 1 ? apply_io(flag, v, o) : rc;
}

/* What only makes sense together, and the defaults that follow others. */
static int check(lm_options *o)
{
    if (o->sample && !o->checkpoint)
        return app_bad(&cli, "--sample", "", "needs --checkpoint PATH, a --save checkpoint");
    if (!o->sample && (o->checkpoint || o->prompt))
        return app_bad(&cli, o->checkpoint ? "--checkpoint" : "--prompt",
                       o->checkpoint ? o->checkpoint : o->prompt, "is for --sample");
    if (o->sample && (o->devices || o->distributed))
        return app_bad(&cli, "--sample", "", "runs on one device (--device)");
    if (o->devices && o->device)
        return app_bad(&cli, "--devices", o->devices, "cannot be combined with --device");
    if (o->min_lr > o->lr)
        return app_bad(&cli, "--min-lr", "", "must not exceed --lr");
    if (o->warmup > o->epochs)
        o->warmup = o->epochs;
    if (!o->sample && o->block == 0)
        o->block = 64;
    if (o->dim_ff == 0)
        o->dim_ff = 4 * o->d_model;
    return 0;
}

int lm_parse_options(int argc, char **argv, lm_options *o)
{
    *o = (lm_options){.text = LM_DEFAULT_TEXT,
                      .d_model = 128,
                      .heads = 4,
                      .layers = 4,
                      .epochs = 5,
                      .batch_size = 32,
                      .warmup = 1,
                      .lr = 3e-3,
                      .min_lr = 3e-4,
                      .weight_decay = 0.1,
                      .val_fraction = 0.1,
                      .seed = 1,
                      .temperature = 0.8,
                      .job = {.size = 1, .prog = "clrt-lm"}};
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i], *value;
        char name[64];
        if (strcmp(flag, "--help") == 0 || strcmp(flag, "-h") == 0) {
            usage(stdout);
            return 1;
        }
        if (strcmp(flag, "--distributed") == 0 || strcmp(flag, "--profile") == 0) {
            *(flag[2] == 'd' ? &o->distributed : &o->profile) = 1;
            continue;
        }
        if (app_flag_value(&cli, argc, argv, &i, name, &flag, &value) != 0 ||
            apply(flag, value, o) != 0)
            return -1;
    }
    return check(o);
}
