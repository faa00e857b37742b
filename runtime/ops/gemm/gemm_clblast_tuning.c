/* CLBlast's GEMM parameters on a device (ops_gemm.h), from three sources:
 * CLBlast's own choice (its database entry for the device, architecture or
 * vendor, else its defaults), parameters measured on such a device and
 * kept in clrt's tuning store (clrt_clblast_tuning_store, which clrt-smi
 * --tune calls), and parameters a caller hands over
 * (clrt_clblast_override). Stored ones are handed to CLBlast at the first
 * CLBlast GEMM on the device (clrt__clblast_stored_locked) or when
 * clrt_clblast_tuning_of asks; a caller's win over them. Every hand-over
 * is one CLBlastOverrideParameters call, which lasts for the process,
 * made only for values within CLBlast's constraints and the device's limits
 * (gemm_clblast_check.c): values beyond them are refused at the store and
 * at the override, and a stored record holding them fails every GEMM
 * without a kernel built from them.
 *
 * Each device's state here (which parameters are in use, and why stored
 * ones could not be) is guarded by clrt__clblast_lock, as CLBlast is. */
#include "runtime/ops/gemm/gemm_internal.h"
#include "runtime/core/env_internal.h"
#include "runtime/device/tuning_internal.h"

#include <clblast_c.h>
#include <clrt/ops_gemm.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_KERNELS 2
#define PARAMS_MAX 512  /* characters of one kernel's NAME=VALUE text, NUL included */
#define NOT_PAIRS (-1)  /* hand_over: the text is not NAME=VALUE pairs */
#define BAD_VALUES (-2) /* hand_over: values beyond CLBlast's constraints (why says) */
#define WHY_MAX 160

static const char *const kernels[N_KERNELS] = {"Xgemm", "XgemmDirect"};

typedef enum { FROM_CLBLAST, FROM_STORE, FROM_CALLER } param_source;

typedef struct clrt__clblast_state {
    int looked_up; /* the store was read and its parameters handed over */
    int bad;       /* 1 + the kernel whose stored parameters cannot be used, or 0 */
    char bad_text[PARAMS_MAX], problem[WHY_MAX + 64];
    param_source source[N_KERNELS];
    char stored[N_KERNELS][PARAMS_MAX]; /* the stored text in use (FROM_STORE) */
} device_state;

/* d's state (clrt_device.clblast), made on first use; the lock is held.
 * NULL when out of host memory. */
static device_state *state_of(const clrt_device *d)
{
    clrt_device *dev = (clrt_device *)d; /* the state is the device's own, kept beside it */
    if (!dev->clblast)
        dev->clblast = calloc(1, sizeof *dev->clblast);
    return dev->clblast;
}

static int kernel_index(const char *kernel)
{
    for (int k = 0; k < N_KERNELS; k++)
        if (strcmp(kernel, kernels[k]) == 0)
            return k;
    return -1;
}

/* The tuning store's key of a kernel's parameters. */
static void store_key(int k, char *key, size_t cap)
{
    snprintf(key, cap, "clblast/%s", kernels[k]);
}

/* Parses "NAME=VALUE NAME=VALUE ..." into at most cap pairs; names point
 * into buf (a copy of text). Returns the count, or -1. */
static int parse_params(const char *text, char *buf, const char **names, size_t *values, int cap)
{
    strcpy(buf, text);
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, " \t\n", &save); tok;
         tok = strtok_r(NULL, " \t\n", &save)) {
        char *eq = strchr(tok, '='), *end = NULL;
        if (!eq || eq == tok || n == cap)
            return -1;
        *eq = '\0';
        unsigned long long v = strtoull(eq + 1, &end, 10);
        if (end == eq + 1 || *end != '\0')
            return -1;
        if (strcmp(tok, "PRECISION") == 0) /* the tuner lists it; not a kernel parameter */
            continue;
        names[n] = tok;
        values[n++] = (size_t)v;
    }
    return n;
}

/* Hands float32 parameters for `kernel` on d to CLBlast; the lock is held.
 * CLBlast's status, NOT_PAIRS, or BAD_VALUES (why: the first problem;
 * nothing handed over). CLBlast checks that the names are its kernel's,
 * all of them; the values are checked here first, since CLBlast meets them
 * only when it builds the kernel. */
static int hand_over(const clrt_device *d, const char *kernel, const char *params,
                     char why[WHY_MAX])
{
    enum { CAP = 32 };
    const char *names[CAP];
    size_t values[CAP];
    char buf[PARAMS_MAX];
    if (strlen(params) >= sizeof buf)
        return NOT_PAIRS;
    int n = parse_params(params, buf, names, values, CAP);
    if (n <= 0)
        return NOT_PAIRS;
    if (clrt__clblast_values_bad(d, kernel, n, names, values, why, WHY_MAX))
        return BAD_VALUES;
    return CLBlastOverrideParameters(d->id, kernel, CLBlastPrecisionSingle, (size_t)n, names,
                                     values);
}

static const char *refusal_name(int s)
{
    return s == CLBlastInvalidOverrideKernel      ? "CLBlastInvalidOverrideKernel"
           : s == CLBlastMissingOverrideParameter ? "CLBlastMissingOverrideParameter"
                                                  : "a CLBlast error";
}

/* Kernel k's stored text into out: 1, 0 when none is stored, -1 when the
 * record is not NUL-terminated text (then out shows it, made printable). */
static int load_stored(const clrt_device *d, int k, char out[PARAMS_MAX])
{
    char key[64], raw[CLRT__TUNING_MAX];
    store_key(k, key, sizeof key);
    size_t n = clrt__tuning_get(d, key, raw, sizeof raw);
    if (n == 0)
        return 0;
    int text = raw[n - 1] == '\0' && strlen(raw) == n - 1 && n <= PARAMS_MAX;
    size_t shown = n < PARAMS_MAX ? n : PARAMS_MAX - 1;
    for (size_t i = 0; i < shown; i++)
        out[i] = isprint((unsigned char)raw[i]) ? raw[i] : '?';
    out[text ? n - 1 : shown] = '\0';
    return text ? 1 : -1;
}

/* Notes in st that kernel k's stored parameters cannot be used, and why. */
static void stored_unusable(device_state *st, int k, const char *params, const char *problem)
{
    st->bad = 1 + k;
    snprintf(st->bad_text, sizeof st->bad_text, "%s", params);
    snprintf(st->problem, sizeof st->problem, "%s", problem);
}

/* The error for stored parameters that cannot be used: which, where they
 * came from, and the way out. */
static clrt_status fail_stored(const clrt_device *d, const device_state *st)
{
    const char *dir = clrt__env()->cache_dir;
    return clrt__fail(CLRT_EINVAL,
                      "clrt's stored CLBlast %s parameters for %s (%s), '%s' (stored by clrt-smi "
                      "--tune in %s), %s: run 'clrt-smi --tune %s' again, or set "
                      "CLRT_CLBLAST_TUNED=0 to use CLBlast's built-in ones",
                      kernels[st->bad - 1], d->info.name, d->info.model, st->bad_text,
                      dir ? dir : "clrt's cache folder", st->problem, d->info.name);
}

/* Reads d's stored parameters and hands them to CLBlast, once; the lock is
 * held. Kernels a caller has given parameters for keep them. */
static void use_stored(const clrt_device *d, device_state *st)
{
    st->looked_up = 1;
    if (!clrt__env()->clblast_tuned)
        return;
    for (int k = 0; k < N_KERNELS && !st->bad; k++) {
        char text[PARAMS_MAX], problem[sizeof st->problem], why[WHY_MAX];
        int got = st->source[k] == FROM_CALLER ? 0 : load_stored(d, k, text);
        int s = got == 1 ? hand_over(d, kernels[k], text, why) : CLBlastSuccess;
        if (got < 0 || s == NOT_PAIRS) {
            stored_unusable(st, k, text, "are not NAME=VALUE pairs: the record is corrupt");
        } else if (s == BAD_VALUES) {
            snprintf(problem, sizeof problem, "are beyond what CLBlast's kernel takes (%s)", why);
            stored_unusable(st, k, text, problem);
        } else if (s != CLBlastSuccess) {
            snprintf(problem, sizeof problem, "are refused by CLBlast (%s, %d)", refusal_name(s),
                     s);
            stored_unusable(st, k, text, problem);
        } else if (got == 1) {
            st->source[k] = FROM_STORE;
            snprintf(st->stored[k], PARAMS_MAX, "%s", text);
        }
    }
}

clrt_status clrt__clblast_stored_locked(const clrt_device *d)
{
    device_state *st = state_of(d);
    if (!st)
        return CLRT_OK;
    if (!st->looked_up)
        use_stored(d, st);
    return st->bad ? fail_stored(d, st) : CLRT_OK;
}

void clrt__clblast_tuning_note(const clrt_device *d, char *out, size_t cap)
{
    out[0] = '\0';
    pthread_mutex_lock(&clrt__clblast_lock);
    device_state *st = state_of(d);
    for (int k = 0; st && k < N_KERNELS; k++) {
        size_t used = strlen(out);
        if (st->source[k] == FROM_STORE)
            snprintf(out + used, cap - used, "%s%s '%s'",
                     used ? "; "
                          : "; with clrt's stored parameters (clrt-smi --tune; "
                            "CLRT_CLBLAST_TUNED=0 leaves them unused): ",
                     kernels[k], st->stored[k]);
    }
    pthread_mutex_unlock(&clrt__clblast_lock);
}

clrt_clblast_tuning clrt_clblast_tuning_of(const clrt_device *d)
{
    if (!d) {
        clrt__fail(CLRT_EINVAL, "clrt_clblast_tuning_of: device is NULL");
        return CLRT_CLBLAST_TUNING_UNKNOWN;
    }
    clrt_clblast_tuning t = CLRT_CLBLAST_BUILT_IN;
    pthread_mutex_lock(&clrt__clblast_lock);
    device_state *st = state_of(d);
    if (st && clrt__clblast_stored_locked(d) != CLRT_OK)
        t = CLRT_CLBLAST_REFUSED;
    for (int k = 0; st && t == CLRT_CLBLAST_BUILT_IN && k < N_KERNELS; k++)
        if (st->source[k] == FROM_STORE)
            t = CLRT_CLBLAST_TUNED_HERE;
    pthread_mutex_unlock(&clrt__clblast_lock);
    return t;
}

const char *clrt_clblast_tuning_str(clrt_clblast_tuning t)
{
    switch (t) {
    case CLRT_CLBLAST_BUILT_IN:
        return "built-in";
    case CLRT_CLBLAST_TUNED_HERE:
        return "tuned here";
    case CLRT_CLBLAST_REFUSED:
        return "refused";
    case CLRT_CLBLAST_TUNING_UNKNOWN:
        break;
    }
    return "unknown";
}

/* The error of a hand-over that failed (s is not CLBlastSuccess). */
static clrt_status hand_over_fail(const char *api, const clrt_device *d, const char *kernel,
                                  const char *params, int s, const char *why)
{
    if (s == NOT_PAIRS)
        return clrt__fail(CLRT_EINVAL,
                          "%s: parameters '%.*s' are not NAME=VALUE pairs (as the tuner's "
                          "best_parameters) of fewer than %d characters",
                          api, PARAMS_MAX, params, PARAMS_MAX);
    if (s == BAD_VALUES)
        return clrt__fail(CLRT_EINVAL,
                          "%s: %s parameters '%s' for %s (%s) are beyond what CLBlast's kernel "
                          "takes: %s; nothing was handed to CLBlast",
                          api, kernel, params, d->info.name, d->info.model, why);
    return clrt__fail(CLRT_EINVAL,
                      "%s: CLBlast refused %s parameters '%s' for %s (%s, %d: an unknown kernel, "
                      "or a parameter missing or unknown)",
                      api, kernel, params, d->info.name, refusal_name(s), s);
}

clrt_status clrt_clblast_override(clrt_device *d, const char *kernel, const char *params)
{
    if (!d || !kernel || !params)
        return clrt__fail(CLRT_EINVAL, "clrt_clblast_override: NULL argument");
    pthread_mutex_lock(&clrt__clblast_lock);
    device_state *st = state_of(d);
    char why[WHY_MAX] = "";
    int s = hand_over(d, kernel, params, why), k = kernel_index(kernel);
    if (s == CLBlastSuccess && st && k >= 0)
        st->source[k] = FROM_CALLER;
    pthread_mutex_unlock(&clrt__clblast_lock);
    return s == CLBlastSuccess ? CLRT_OK
                               : hand_over_fail("clrt_clblast_override", d, kernel, params, s, why);
}

/* kernel's index into *k, or CLRT_EINVAL naming it (the store's calls). */
static clrt_status check_kernel(const char *api, const char *kernel, int *k)
{
    *k = kernel_index(kernel);
    if (*k < 0)
        return clrt__fail(CLRT_EINVAL, "%s: kernel '%s' is not one clrt tunes (Xgemm, XgemmDirect)",
                          api, kernel);
    return CLRT_OK;
}

clrt_status clrt_clblast_tuning_store(clrt_device *d, const char *kernel, const char *params)
{
    static const char api[] = "clrt_clblast_tuning_store";
    int k = -1, written = 0;
    char key[64];
    if (!d || !kernel || !params)
        return clrt__fail(CLRT_EINVAL, "%s: NULL argument", api);
    if (check_kernel(api, kernel, &k) != CLRT_OK)
        return CLRT_EINVAL;
    store_key(k, key, sizeof key);
    pthread_mutex_lock(&clrt__clblast_lock);
    device_state *st = state_of(d);
    char why[WHY_MAX] = "";
    int s = hand_over(d, kernel, params, why);
    if (s == CLBlastSuccess)
        written = clrt__tuning_put(d, key, params, strlen(params) + 1);
    if (s == CLBlastSuccess && st) {
        /* In use from now on; the other kernel's stored text is read again
         * at the next GEMM, and a refusal before this one forgotten. */
        st->source[k] = FROM_STORE;
        snprintf(st->stored[k], PARAMS_MAX, "%s", params);
        st->looked_up = 0;
        st->bad = 0;
    }
    pthread_mutex_unlock(&clrt__clblast_lock);
    if (s != CLBlastSuccess)
        return hand_over_fail(api, d, kernel, params, s, why);
    if (!written) {
        const char *dir = clrt__env()->cache_dir;
        return clrt__fail(CLRT_EIO,
                          "%s: %s parameters for %s are in use in this process only: clrt's "
                          "cache folder %s%s",
                          api, kernel, d->info.name,
                          dir ? dir : "is off (CLRT_CACHE=0, or no HOME)",
                          dir ? " could not be written (see the warning above, if any)" : "");
    }
    return CLRT_OK;
}

int clrt_clblast_tuning_load(const clrt_device *d, const char *kernel, char *out, size_t cap)
{
    static const char api[] = "clrt_clblast_tuning_load";
    int k = -1;
    char text[PARAMS_MAX];
    if (!d || !kernel || !out || cap == 0)
        return clrt__fail(CLRT_EINVAL, "%s: NULL argument or cap 0", api);
    if (check_kernel(api, kernel, &k) != CLRT_OK)
        return CLRT_EINVAL;
    int got = load_stored(d, k, text);
    if (got < 0)
        return clrt__fail(CLRT_EINVAL,
                          "%s: the stored %s parameters for %s are not text ('%s'): the record "
                          "is corrupt; run 'clrt-smi --tune %s' again",
                          api, kernel, d->info.name, text, d->info.name);
    if (got == 0)
        text[0] = '\0';
    return snprintf(out, cap, "%s", text);
}
