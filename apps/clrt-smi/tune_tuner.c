/* One of CLBlast's tuners (Debian's clblast-utils) for clrt-smi --tune
 * (smi.h). A tuner takes one -fraction for all its phases (Xgemm's: two
 * fixed sets and two large spaces sampled at random; XgemmDirect's: one
 * of each) and divides each phase's settings by it, so each tuner runs
 * twice: first with a fraction too large to leave any setting, which
 * prints how many each phase holds ("* Found N configuration(s)"), then
 * with the fraction that leaves about the number asked in all. Its random
 * sample is the same on every run (a default-seeded engine). Each phase
 * writes clblast_<family>_32.json (family: xgemm_1, xgemm_direct_2 ...)
 * with its best time and parameters; the best over the phases wins. */
#include "smi.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_MAX (64u << 20)
#define JSON_MAX (16u << 20)

/* "clblast_tuner_xgemm_direct" -> "xgemm_direct" */
static const char *family_of(const char *program)
{
    const char *p = "clblast_tuner_";
    return strncmp(program, p, strlen(p)) == 0 ? program + strlen(p) : program;
}

/* 1 when name is clblast_<family>_<digits>_32.json, one phase's results. */
static int is_result_file(const char *name, const char *family)
{
    size_t n = strlen(family);
    if (strncmp(name, "clblast_", 8) != 0 || strncmp(name + 8, family, n) != 0 ||
        name[8 + n] != '_')
        return 0;
    const char *p = name + 8 + n + 1, *digits = p;
    while (*p >= '0' && *p <= '9')
        p++;
    return p > digits && strcmp(p, "_32.json") == 0;
}

/* Calls each(dir, name, ctx) for every result file of family in dir. */
static void for_results(const char *dir, const char *family,
                        void (*each)(const char *, const char *, void *), void *ctx)
{
    DIR *d = opendir(dir);
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d))
        if (is_result_file(e->d_name, family))
            each(dir, e->d_name, ctx);
    if (d)
        closedir(d);
}

static void remove_result(const char *dir, const char *name, void *ctx)
{
    char path[4096];
    (void)ctx;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
}

/* The value of `"key": "value"` in a tuner's JSON, into out: 1, or 0. */
static int json_string(const char *text, const char *key, char *out, size_t cap)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\": \"", key);
    const char *at = strstr(text, pattern);
    if (!at)
        return 0;
    at += strlen(pattern);
    int n = (int)strcspn(at, "\"");
    return snprintf(out, cap, "%.*s", n, at) < (int)cap;
}

typedef struct {
    const clrt_device_info *info;
    long size;
    char *best;
    size_t cap;
    double ms;
    int wrong_device;
    char device[256];
} best_search;

/* One phase's file: its best, if it ran on the device at the size asked. */
static void consider(const char *dir, const char *name, void *ctx)
{
    best_search *b = ctx;
    char path[4096], time[64], params[1024], device[256], m[32];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *text = smi_read_file(path, JSON_MAX);
    int ok = text && json_string(text, "best_time", time, sizeof time) &&
             json_string(text, "best_parameters", params, sizeof params) &&
             json_string(text, "device", device, sizeof device) &&
             json_string(text, "arg_m", m, sizeof m);
    free(text);
    if (!ok || atol(m) != b->size)
        return;
    if (strcmp(device, b->info->model) != 0) {
        b->wrong_device = 1;
        snprintf(b->device, sizeof b->device, "%s", device);
        return;
    }
    double ms = atof(time);
    if (ms > 0 && (b->ms <= 0 || ms < b->ms) &&
        snprintf(b->best, b->cap, "%s", params) < (int)b->cap)
        b->ms = ms;
}

/* The settings the phases hold, summed from a log: 0 when it tells none. */
static double search_space(const char *log)
{
    char *text = smi_read_file(log, LOG_MAX);
    double total = 0;
    for (const char *p = text; p && (p = strstr(p, "* Found ")) != NULL; p++) {
        const char *end = strstr(p, " configuration(s)"), *q = end;
        while (q && q > p && q[-1] >= '0' && q[-1] <= '9')
            q--;
        if (q && q < end)
            total += atof(q);
    }
    free(text);
    return total;
}

/* How many settings ran and matched the reference, from a log. */
static int count_matches(const char *log)
{
    char *text = smi_read_file(log, LOG_MAX);
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, "results match")) != NULL; p++)
        n++;
    free(text);
    return n;
}

/* Runs the tuner once with `fraction`, output into log. 0, or 1 after a
 * message. */
static int run_once(const char *program, const clrt_device_info *info, const char *dir, long size,
                    const char *fraction, const char *log)
{
    char platform[16], device[16], s[32];
    snprintf(platform, sizeof platform, "%u", info->opencl_platform_index);
    snprintf(device, sizeof device, "%u", info->opencl_device_index);
    snprintf(s, sizeof s, "%ld", size);
    char *argv[] = {(char *)program,
                    "-platform",
                    platform,
                    "-device",
                    device,
                    "-precision",
                    "32",
                    "-m",
                    s,
                    "-n",
                    s,
                    "-k",
                    s,
                    "-fraction",
                    (char *)fraction,
                    NULL};
    int rc = smi_run(argv, dir, NULL, log);
    if (rc == -1 && errno == ENOENT)
        fprintf(stderr,
                "clrt-smi: %s is not on PATH: CLBlast's tuners come with Debian's clblast-utils "
                "(apt-get install clblast-utils)\n",
                program);
    else if (rc != 0)
        fprintf(stderr,
                "clrt-smi: %s -platform %s -device %s (%s) failed (%s %d); its output: %s\n",
                program, platform, device, info->name, rc < 0 ? "error" : "exit status",
                rc < 0 ? errno : rc, log);
    return rc != 0;
}

int smi_run_tuner(const char *program, const clrt_device_info *info, const char *dir, long settings,
                  long size, char *best, size_t cap, double *ms, int *tried)
{
    const char *family = family_of(program);
    char log[4096], fraction[64];
    best_search b = {info, size, best, cap, 0, 0, ""};
    best[0] = '\0';
    for_results(dir, family, remove_result, NULL);
    snprintf(log, sizeof log, "%s/%s.space.log", dir, family);
    if (run_once(program, info, dir, size, "1000000000000", log))
        return 1;
    double space = search_space(log);
    if (space <= 0) {
        fprintf(stderr, "clrt-smi: %s printed no search space ('* Found N configuration(s)'): %s\n",
                program, log);
        return 1;
    }
    double f = space / (double)settings;
    snprintf(fraction, sizeof fraction, "%.6g", f > 1 ? f : 1.0);
    printf("clrt-smi: %s: %.0f settings in its phases at m=n=k=%ld; trying about %ld "
           "(-fraction %s)\n",
           program, space, size, settings < space ? settings : (long)space, fraction);
    snprintf(log, sizeof log, "%s/%s.log", dir, family);
    if (run_once(program, info, dir, size, fraction, log))
        return 1;
    for_results(dir, family, consider, &b);
    if (b.wrong_device) {
        fprintf(stderr,
                "clrt-smi: %s ran on '%s', not on %s ('%s'): OpenCL platform %u device %u is "
                "another device here; nothing stored\n",
                program, b.device, info->name, info->model, info->opencl_platform_index,
                info->opencl_device_index);
        return 1;
    }
    *ms = b.ms;
    *tried = count_matches(log);
    return 0;
}
