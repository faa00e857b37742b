/* Training checkpoints (clrt/checkpoint.h): the model file and its .optim
 * file written by one save, both whole before either is renamed into
 * place, and read back only as a pair whose ids, epochs, steps and run
 * match (checkpoint_meta.c). */
#include "runtime/core/alloc_internal.h"
#include "runtime/core/file_internal.h"
#include "runtime/core/text_internal.h"
#include "runtime/nn/module_internal.h"
#include "runtime/optim/optim_io_internal.h"
#include "runtime/train/checkpoint_internal.h"

#include <clrt/checkpoint.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define KEY_CAP 256

static clrt_status optim_path(char *out, size_t cap, const char *path, const char *api)
{
    if (!path)
        return clrt__fail(CLRT_EINVAL, "%s: path is NULL", api);
    int n = snprintf(out, cap, "%s.optim", path);
    if (n < 0 || (size_t)n >= cap)
        return clrt__fail(CLRT_EINVAL, "%s: path too long: %s", api, path);
    return CLRT_OK;
}

static clrt_status check_run(int n_run, const char *const *run, const char *api)
{
    if (n_run < 0 || (n_run > 0 && !run))
        return clrt__fail(CLRT_EINVAL, "%s: bad run description (n_run = %d)", api, n_run);
    for (int i = 0; i < n_run; i++)
        if (!run[2 * i] || !run[2 * i + 1] || !*run[2 * i] ||
            strlen(run[2 * i]) + strlen(CLRT__CKPT_RUN_PREFIX) >= KEY_CAP)
            return clrt__fail(CLRT_EINVAL, "%s: run pair %d has a NULL, empty or long key or value",
                              api, i);
    for (int i = 0; i < 2 * n_run; i++)
        if (clrt__utf8_bad_at(run[i], strlen(run[i])) >= 0)
            return clrt__fail(CLRT_EINVAL,
                              "%s: run pair %d's %s is not UTF-8 (it is saved in a safetensors "
                              "header, which must be)",
                              api, i / 2, i % 2 ? "value" : "key");
    return CLRT_OK;
}

/* A fresh id: 16 random bytes as hex (a mixed clock and pid if the
 * kernel's generator fails: an id only has to differ between saves). */
static void new_id(char out[CLRT__CKPT_ID_HEX + 1])
{
    uint8_t b[16];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
        uint64_t x = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32 ^ (uint64_t)clock();
        for (int i = 0; i < 16; i++) {
            x = x * 6364136223846793005u + 1442695040888963407u;
            b[i] = (uint8_t)(x >> 56);
        }
    }
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

/* The .optim file's metadata: the optimizer's, the checkpoint's, the run's
 * (keys prefixed into keys). meta has room for 2 * (6 + n_run) strings. */
static int optim_meta(const char **meta, char (*keys)[KEY_CAP], const clrt__optim_state *s,
                      const char *id, const char *epoch, int n_run, const char *const *run)
{
    int n = 0;
    for (; n < CLRT__OPTIM_META; n++)
        meta[n] = s->meta[n];
    const char *ours[4] = {"clrt.checkpoint", id, "clrt.epoch", epoch};
    for (int i = 0; i < 4; i++)
        meta[n++] = ours[i];
    for (int i = 0; i < n_run; i++) {
        snprintf(keys[i], KEY_CAP, "%s%s", CLRT__CKPT_RUN_PREFIX, run[2 * i]);
        meta[n++] = keys[i];
        meta[n++] = run[2 * i + 1];
    }
    return n / 2;
}

/* Both files written whole under temporary names, then renamed, the model
 * first. */
static clrt_status write_pair(const char *path, const char *opath, const clrt__st_item *items,
                              int n, const clrt__optim_state *s, const char *const *mmeta,
                              const char *const *ometa, int n_ometa)
{
    const char *api = "clrt_checkpoint_save";
    clrt__out_file om, oo;
    clrt_status st = clrt__st_write_tmp(&om, path, items, n, mmeta, 4, api);
    if (st != CLRT_OK)
        return st;
    st = clrt__st_write_tmp(&oo, opath, s->items, s->n, ometa, n_ometa, api);
    if (st != CLRT_OK) {
        clrt__out_abort(&om);
        return st;
    }
    st = clrt__out_rename(&om);
    if (st != CLRT_OK) {
        clrt__out_abort(&oo);
        return st;
    }
    return clrt__out_rename(&oo);
}

clrt_status clrt_checkpoint_save(const char *path, clrt_module *model, const clrt_optimizer *opt,
                                 int64_t epoch, int n_run, const char *const *run)
{
    const char *api = "clrt_checkpoint_save";
    char opath[CLRT__PATH_CAP], id[CLRT__CKPT_ID_HEX + 1], ep[24];
    clrt__st_item *items = NULL;
    clrt__optim_state s = {0};
    int n = 0;
    clrt_status st = optim_path(opath, sizeof opath, path, api);
    if (st == CLRT_OK && (!model || !opt))
        st = clrt__fail(CLRT_EINVAL, "%s: NULL model or optimizer", api);
    if (st == CLRT_OK && (epoch < 0 || epoch > INT32_MAX))
        st = clrt__fail(CLRT_EINVAL, "%s: epoch %lld is not from 0 to %d", api, (long long)epoch,
                        INT32_MAX);
    if (st == CLRT_OK)
        st = check_run(n_run, run, api);
    if (st == CLRT_OK)
        st = clrt__module_state_items(model, &items, &n, api);
    if (st == CLRT_OK)
        st = clrt__optim_state_get(opt, &s, api);
    const char **ometa =
        st == CLRT_OK ? clrt__calloc(2 * (size_t)(6 + n_run), sizeof *ometa) : NULL;
    char(*keys)[KEY_CAP] = ometa ? clrt__calloc((size_t)n_run + 1, KEY_CAP) : NULL;
    if (st == CLRT_OK && !keys)
        st = clrt__fail(CLRT_ENOMEM, "%s: out of host memory", api);
    if (st == CLRT_OK) {
        new_id(id);
        snprintf(ep, sizeof ep, "%" PRId64, epoch);
        const char *mmeta[8] = {"format",     "pt", "clrt.checkpoint", id,
                                "clrt.epoch", ep,   "clrt.step",       s.steps};
        int n_ometa = optim_meta(ometa, keys, &s, id, ep, n_run, run);
        st = write_pair(path, opath, items, n, &s, mmeta, ometa, n_ometa);
    }
    free(keys);
    free(ometa);
    clrt__optim_state_free(&s);
    clrt__st_items_free(items, n);
    return st;
}

/* --- load --- */

typedef struct {
    const char *id, *path; /* the model's id; the .optim path */
    int done;
} recovery;

/* A temporary .optim that is whole (its header validates against its size)
 * and carries the model's id is the new half of a save killed between its
 * renames: it is renamed into place, over a regular file or nothing. */
static void try_finish(const char *tmp, void *ctx)
{
    recovery *r = ctx;
    clrt__st_file f;
    clrt__ckpt_meta m;
    struct stat sb;
    if (r->done || clrt__st_read(tmp, &f) != CLRT_OK)
        return;
    if (clrt__ckpt_meta_read(&f, tmp, 1, &m) == CLRT_OK && strcmp(m.id, r->id) == 0 &&
        (lstat(r->path, &sb) != 0 || S_ISREG(sb.st_mode)) && rename(tmp, r->path) == 0)
        r->done = 1;
    clrt__st_close(&f);
}

/* The .optim file whose id is the model's: the one in place, or one a
 * killed save left whole under a temporary name. */
static clrt_status open_optim(const char *opath, const clrt__ckpt_meta *mm, clrt__st_file *fo,
                              clrt__ckpt_meta *mo)
{
    char why[1024];
    clrt_status st = clrt__st_read(opath, fo);
    if (st == CLRT_OK)
        st = clrt__ckpt_meta_read(fo, opath, 1, mo);
    if (st == CLRT_OK && strcmp(mo->id, mm->id) == 0)
        return CLRT_OK;
    snprintf(why, sizeof why, "%s", clrt_last_error());
    recovery r = {mm->id, opath, 0};
    clrt__out_temporaries(opath, try_finish, &r);
    if (!r.done) /* a mismatch is the pair check's to report */
        return st == CLRT_OK ? CLRT_OK : clrt__fail(st, "%s", why);
    clrt__st_close(fo);
    st = clrt__st_read(opath, fo);
    return st == CLRT_OK ? clrt__ckpt_meta_read(fo, opath, 1, mo) : st;
}

/* The pair's metadata checked; *epoch gets the saved epoch. */
static clrt_status check_pair(const char *path, const char *opath, int n_run,
                              const char *const *run, int64_t *epoch)
{
    clrt__st_file fm, fo = {0};
    clrt__ckpt_meta mm, mo;
    clrt_status st = clrt__st_read(path, &fm);
    if (st == CLRT_OK)
        st = clrt__ckpt_meta_read(&fm, path, 0, &mm);
    if (st == CLRT_OK)
        st = open_optim(opath, &mm, &fo, &mo);
    if (st == CLRT_OK)
        st = clrt__ckpt_pair_check(&mm, path, &mo, opath);
    if (st == CLRT_OK)
        st = clrt__ckpt_run_check(&fo, opath, n_run, run);
    if (st == CLRT_OK)
        *epoch = mm.epoch;
    clrt__st_close(&fo);
    clrt__st_close(&fm);
    return st;
}

clrt_status clrt_checkpoint_load(const char *path, clrt_module *model, clrt_optimizer *opt,
                                 int n_run, const char *const *run, int64_t *epoch)
{
    const char *api = "clrt_checkpoint_load";
    char opath[CLRT__PATH_CAP];
    int64_t e = 0;
    clrt_status st = optim_path(opath, sizeof opath, path, api);
    if (st == CLRT_OK && (!model || !opt || !epoch))
        st = clrt__fail(CLRT_EINVAL, "%s: NULL model, optimizer or epoch", api);
    if (st == CLRT_OK)
        st = check_run(n_run, run, api);
    if (st == CLRT_OK)
        st = check_pair(path, opath, n_run, run, &e);
    if (st == CLRT_OK)
        st = clrt_module_load(model, path);
    if (st == CLRT_OK)
        st = clrt_optimizer_load(opt, opath);
    if (st != CLRT_OK)
        return st;
    clrt__out_remove_stale(path);
    clrt__out_remove_stale(opath);
    *epoch = e;
    return CLRT_OK;
}

clrt_status clrt_checkpoint_run_value(const char *path, const char *key, char *out, size_t cap)
{
    const char *api = "clrt_checkpoint_run_value";
    char opath[CLRT__PATH_CAP], name[256];
    clrt__st_file f = {0};
    clrt__ckpt_meta m;
    clrt_status st = optim_path(opath, sizeof opath, path, api);
    if (st == CLRT_OK && (!key || !out || cap == 0))
        st = clrt__fail(CLRT_EINVAL, "%s: NULL key or output, or no room", api);
    if (st == CLRT_OK)
        st = clrt__st_read(opath, &f);
    if (st == CLRT_OK)
        st = clrt__ckpt_meta_read(&f, opath, 1, &m);
    snprintf(name, sizeof name, "%s%s", CLRT__CKPT_RUN_PREFIX, key ? key : "");
    const char *value = st == CLRT_OK ? clrt__st_meta(&f, name) : NULL;
    if (st == CLRT_OK && !value)
        st = clrt__fail(CLRT_EINVAL, "%s: %s records no run value '%s'", api, opath, key);
    if (st == CLRT_OK && strlen(value) >= cap)
        st = clrt__fail(CLRT_EINVAL, "%s: %s's '%s' has %zu bytes, more than the %zu given", api,
                        opath, key, strlen(value), cap - 1);
    if (st == CLRT_OK)
        memcpy(out, value, strlen(value) + 1);
    clrt__st_close(&f);
    return st;
}
