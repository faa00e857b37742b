/* Training checkpoints as pairs (clrt_checkpoint_save/load, issue 25): a
 * round trip, a model file of one save beside the .optim of another, the
 * run's description, crafted metadata, and the kill loop: a save killed at
 * every step of its writing leaves a pair that loads as the old checkpoint
 * or the new one, with the temporaries cleaned up by the load. */
#include "runtime/core/file_internal.h"
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const RUN[] = {"batch-size", "256", "schedule", "cosine over 3 epochs"};
enum { N_RUN = 2 };

typedef struct {
    clrt_module *m;
    clrt_optimizer *o;
} state;

/* A Linear(3, 2) with Adam after `epoch` steps from values of its own:
 * the same bytes on each call with the same epoch. No check macros (the
 * kill loop's child runs it outside a test); 0 when something failed. */
static int build_state(int epoch, state *s)
{
    s->m = clrt_linear(3, 2);
    s->o = NULL;
    clrt_tensor *p[2], *g[2];
    int n = s->m ? clrt_module_parameters(s->m, NULL, p, g, 2) : 0;
    if (n != 2 || !(s->o = clrt_adam(n, p, g, 0.01, 0.9, 0.999, 1e-8, 0)))
        return 0;
    float w[6], b[2], gw[6], gb[2];
    for (int i = 0; i < 6; i++)
        w[i] = (float)(i + 1) * 0.25f, gw[i] = (float)(i % 3) - 1.0f + 0.125f * (float)i;
    b[0] = b[1] = 0.5f, gb[0] = 1, gb[1] = -2;
    int ok = clrt_copy_from_host(p[0], w, sizeof w) == CLRT_OK &&
             clrt_copy_from_host(p[1], b, sizeof b) == CLRT_OK &&
             clrt_copy_from_host(g[0], gw, sizeof gw) == CLRT_OK &&
             clrt_copy_from_host(g[1], gb, sizeof gb) == CLRT_OK;
    for (int i = 0; ok && i < epoch; i++)
        ok = clrt_optimizer_step(s->o) == CLRT_OK;
    return ok;
}

static state make_state(int epoch)
{
    state s;
    ck_assert_msg(build_state(epoch, &s), "%s", clrt_last_error());
    return s;
}

static void free_state(state *s)
{
    clrt_optimizer_free(s->o);
    clrt_module_free(s->m);
}

/* The parameters' bytes (state_dict order, 32 bytes). */
static void params_of(const state *s, unsigned char out[32])
{
    TU_OK(clrt_to_host(clrt_module_param(s->m, "weight"), out, 24));
    TU_OK(clrt_to_host(clrt_module_param(s->m, "bias"), out + 24, 8));
}

/* Loads path into a fresh state; CLRT_OK with *epoch, or the error. */
static clrt_status load_into(const char *path, state *s, int n_run, const char *const *run,
                             int64_t *epoch)
{
    *s = make_state(0);
    return clrt_checkpoint_load(path, s->m, s->o, n_run, run, epoch);
}

/* path's state equals make_state(epoch)'s, parameters and the step count;
 * the optimizer state shows in one more step from both. */
static void expect_epoch(const state *got, int epoch)
{
    state want = make_state(epoch);
    unsigned char a[32], b[32];
    params_of(got, a);
    params_of(&want, b);
    ck_assert_msg(memcmp(a, b, 32) == 0, "parameters differ from epoch %d's", epoch);
    ck_assert_int_eq(clrt_optimizer_steps(got->o), epoch);
    TU_OK(clrt_optimizer_step(got->o));
    TU_OK(clrt_optimizer_step(want.o));
    params_of(got, a);
    params_of(&want, b);
    ck_assert_msg(memcmp(a, b, 32) == 0, "optimizer state differs from epoch %d's", epoch);
    free_state(&want);
}

static char scratch_dir[256];

static const char *scratch(void)
{
    snprintf(scratch_dir, sizeof scratch_dir, "/tmp/clrt-pair-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(scratch_dir));
    return scratch_dir;
}

static void remove_dir(const char *dir)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static int temporaries(const char *dir)
{
    char cmd[300];
    int n = 0, c;
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -c '\\.tmp-'", dir);
    FILE *p = popen(cmd, "r");
    if (fscanf(p, "%d", &c) == 1)
        n = c;
    pclose(p);
    return n;
}

static void save_epoch(const char *path, int epoch)
{
    state s = make_state(epoch);
    TU_OK(clrt_checkpoint_save(path, s.m, s.o, epoch, N_RUN, RUN));
    free_state(&s);
}

START_TEST(round_trip)
{
    const char *dir = scratch();
    char path[300];
    snprintf(path, sizeof path, "%s/ck.safetensors", dir);
    save_epoch(path, 2);
    state got;
    int64_t epoch = -1;
    TU_OK(load_into(path, &got, N_RUN, RUN, &epoch));
    ck_assert_int_eq(epoch, 2);
    expect_epoch(&got, 2);
    free_state(&got);
    ck_assert_int_eq(temporaries(dir), 0);
    remove_dir(dir);
}
END_TEST

/* A model file of epoch 3 beside the .optim of epoch 2 (a kill or a full
 * disk between two separate saves left that; it resumed silently). */
/* A saved run value read back before any model exists (clrt-lm --sample
 * rebuilds its model from them); a missing key or too small a buffer is
 * an error that names it. */
START_TEST(run_values_read_back)
{
    const char *dir = scratch();
    char path[300], v[32];
    snprintf(path, sizeof path, "%s/ck.safetensors", dir);
    save_epoch(path, 1);
    TU_OK(clrt_checkpoint_run_value(path, "schedule", v, sizeof v));
    ck_assert_str_eq(v, "cosine over 3 epochs");
    TU_OK(clrt_checkpoint_run_value(path, "batch-size", v, sizeof v));
    ck_assert_str_eq(v, "256");
    ck_assert_int_eq(clrt_checkpoint_run_value(path, "seed", v, sizeof v), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "records no run value 'seed'", NULL);
    ck_assert_int_eq(clrt_checkpoint_run_value(path, "schedule", v, 8), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "'schedule' has 20 bytes", NULL);
    ck_assert_int_ne(clrt_checkpoint_run_value("/nonexistent/ck", "schedule", v, sizeof v),
                     CLRT_OK);
    remove_dir(dir);
}
END_TEST

START_TEST(mixed_pair_is_refused)
{
    const char *dir = scratch();
    char path[300], cmd[700];
    snprintf(path, sizeof path, "%s/ck.safetensors", dir);
    save_epoch(path, 2);
    snprintf(cmd, sizeof cmd, "cp '%s.optim' '%s.optim-2'", path, path);
    ck_assert_int_eq(system(cmd), 0);
    save_epoch(path, 3);
    snprintf(cmd, sizeof cmd, "mv '%s.optim-2' '%s.optim'", path, path);
    ck_assert_int_eq(system(cmd), 0);
    state got;
    int64_t epoch = -1;
    ck_assert_int_eq(load_into(path, &got, N_RUN, RUN, &epoch), CLRT_EFORMAT);
    tu_assert_error(CLRT_EFORMAT, "(epoch 3, step 3)", "(epoch 2, step 2)", "different saves",
                    NULL);
    expect_epoch(&got, 0); /* nothing changed */
    free_state(&got);
    remove_dir(dir);
}
END_TEST

/* The run's description must match: a value, a missing key, an extra key. */
START_TEST(run_mismatch_is_refused)
{
    const char *dir = scratch();
    char path[300];
    snprintf(path, sizeof path, "%s/ck.safetensors", dir);
    save_epoch(path, 1);
    const char *other[] = {"batch-size", "128", "schedule", "cosine over 3 epochs"};
    const char *fewer[] = {"batch-size", "256"};
    const char *more[] = {"batch-size", "256", "schedule", "cosine over 3 epochs", "seed", "1"};
    state got;
    int64_t epoch;
    ck_assert_int_eq(load_into(path, &got, N_RUN, other, &epoch), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "batch-size '256', this run has '128'", NULL);
    expect_epoch(&got, 0);
    free_state(&got);
    ck_assert_int_eq(load_into(path, &got, 1, fewer, &epoch), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "schedule 'cosine over 3 epochs', which this run does not give",
                    NULL);
    free_state(&got);
    ck_assert_int_eq(load_into(path, &got, 3, more, &epoch), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "seed (not given), this run has '1'", NULL);
    free_state(&got);
    remove_dir(dir);
}
END_TEST

/* Reads a whole file (malloc'ed) and its size. */
static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(*n + 1);
    ck_assert_uint_eq(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

/* Rewrites `"key":"from"` in a safetensors header to `"key":"to"` of the
 * same length (the header's length stays right). */
static void patch(const char *path, const char *from, const char *to)
{
    size_t n;
    char *b = slurp(path, &n);
    ck_assert_uint_eq(strlen(from), strlen(to));
    char *at = memmem(b, n, from, strlen(from));
    ck_assert_ptr_nonnull(at);
    memcpy(at, to, strlen(to));
    FILE *f = fopen(path, "wb");
    ck_assert_uint_eq(fwrite(b, 1, n, f), n);
    fclose(f);
    free(b);
}

/* Crafted metadata: a step count of 2^33 in one file, an epoch beyond an
 * int, a step count that overflows int64 (it made training never stop). */
START_TEST(crafted_counts_are_refused)
{
    const char *dir = scratch();
    char path[300], opath[310];
    snprintf(path, sizeof path, "%s/ck.safetensors", dir);
    snprintf(opath, sizeof opath, "%s.optim", path);
    state got;
    int64_t epoch;
    save_epoch(path, 1);
    patch(opath, "\"step\":\"1\"", "\"step\":\"8\""); /* same length, another count */
    ck_assert_int_eq(load_into(path, &got, N_RUN, RUN, &epoch), CLRT_EFORMAT);
    tu_assert_error(CLRT_EFORMAT, "(epoch 1, step 1)", "(epoch 1, step 8)", NULL);
    free_state(&got);
    save_epoch(path, 1);
    patch(path, "\"clrt.step\":\"1\"", "\"clrt.step\":\"-\"");
    ck_assert_int_eq(load_into(path, &got, N_RUN, RUN, &epoch), CLRT_EFORMAT);
    tu_assert_error(CLRT_EFORMAT, "bad checkpoint metadata", NULL);
    free_state(&got);
    remove_dir(dir);
}
END_TEST

/* --- the kill loop --- */

static long kill_at, steps_seen;

static void count_and_kill(const char *step, const char *path)
{
    (void)step, (void)path;
    if (++steps_seen == kill_at)
        raise(SIGKILL);
}

/* The child: saves epoch 2 over the pair in CKPT_PATH, killed at the
 * CKPT_KILL_AT-th step of the writes. Exits 0 when it got through. */
static int child_main(void)
{
    const char *path = getenv("CKPT_PATH"), *k = getenv("CKPT_KILL_AT");
    if (!path || !k)
        return 2;
    kill_at = strtol(k, NULL, 10);
    state s;
    if (!build_state(2, &s))
        return 3;
    clrt__out_hook = count_and_kill;
    clrt_status st = clrt_checkpoint_save(path, s.m, s.o, 2, N_RUN, RUN);
    clrt__out_hook = NULL;
    if (st != CLRT_OK)
        fprintf(stderr, "child: %s\n", clrt_last_error());
    free_state(&s);
    return st == CLRT_OK ? 0 : 1;
}

/* Kills the save of epoch 2 over epoch 1's pair at step k = 1, 2, ...
 * until a save gets through; after each, the pair loads as epoch 1 or 2
 * exactly, and the load leaves no temporary file. */
START_TEST(kill_loop_leaves_a_loadable_pair)
{
    static char out[8192];
    char path[300], var_path[330], var_k[40];
    const char *dir = scratch();
    snprintf(path, sizeof path, "%s/ck.safetensors", dir);
    snprintf(var_path, sizeof var_path, "CKPT_PATH=%s", path);
    int killed = 0, seen[3] = {0, 0, 0};
    for (long k = 1;; k++) {
        ck_assert_msg(k < 1000, "the save never got through");
        save_epoch(path, 1);
        snprintf(var_k, sizeof var_k, "CKPT_KILL_AT=%ld", k);
        const char *env[] = {var_path, var_k, NULL};
        int status = tu_run_child(env, 120, out, sizeof out);
        int done = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        ck_assert_msg(done || (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL),
                      "k = %ld: child status %d: %s", k, status, out);
        state got;
        int64_t epoch = -1;
        clrt_status st = load_into(path, &got, N_RUN, RUN, &epoch);
        ck_assert_msg(st == CLRT_OK, "killed at step %ld, the pair does not load: %s", k,
                      clrt_last_error());
        ck_assert_msg(epoch == 1 || epoch == 2, "epoch %lld", (long long)epoch);
        expect_epoch(&got, (int)epoch);
        ck_assert_msg(!done || epoch == 2, "a finished save left epoch %lld", (long long)epoch);
        ck_assert_msg(temporaries(dir) == 0, "killed at step %ld: temporaries left after a load",
                      k);
        free_state(&got);
        seen[epoch]++;
        if (done)
            break;
        killed++;
    }
    /* Both outcomes happened: the old pair before the model's rename, the
     * new one after it (finished by the load when the kill came between
     * the two renames). */
    ck_assert_msg(killed >= 10 && seen[1] > 0 && seen[2] > 1, "killed %d, epoch 1 %d, epoch 2 %d",
                  killed, seen[1], seen[2]);
    remove_dir(dir);
}
END_TEST

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "child") == 0)
        return child_main();
    Suite *s = suite_create("checkpoint_pair");
    TCase *tc = tu_tcase("checkpoint_pair");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, run_values_read_back);
    tcase_add_test(tc, mixed_pair_is_refused);
    tcase_add_test(tc, run_mismatch_is_refused);
    tcase_add_test(tc, crafted_counts_are_refused);
    tcase_add_test(tc, kill_loop_leaves_a_loadable_pair);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
