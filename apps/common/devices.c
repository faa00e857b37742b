/* The devices a demo trains on, from --device / --devices (app.h). */
#include "app.h"

#include <string.h>

#define MAX_GPUS 64

/* "all" (every GPU, else cpu), or specs between commas. */
static clrt_device *listed_devices(const char *devices, clrt_device **dp, int *n_dp)
{
    if (strcmp(devices, "all") == 0) {
        int n = clrt_try_all_gpus(dp, CLRT_MAX_DATA_PARALLEL);
        *n_dp = n > CLRT_MAX_DATA_PARALLEL ? CLRT_MAX_DATA_PARALLEL : n;
        return n > 0 ? dp[0] : NULL;
    }
    char spec[64];
    *n_dp = 0;
    for (const char *p = devices; *p; p += *p == ',') {
        size_t len = strcspn(p, ",");
        snprintf(spec, sizeof spec, "%.*s", (int)(len < sizeof spec ? len : sizeof spec - 1), p);
        p += len;
        if (*n_dp == CLRT_MAX_DATA_PARALLEL || !(dp[(*n_dp)++] = clrt_device_get(spec)))
            return NULL;
    }
    return *n_dp > 0 ? dp[0] : NULL; /* the programs refuse an empty list */
}

static clrt_device *local_rank_device(const app_job *job)
{
    clrt_device *gpus[MAX_GPUS];
    int n = clrt_try_all_gpus(gpus, MAX_GPUS);
    n = n > MAX_GPUS ? MAX_GPUS : n;
    return n > 0 ? gpus[job->local_rank % n] : NULL;
}

clrt_device *app_pick_device(const char *prog, const char *device, const char *devices,
                             const app_job *job, clrt_device **dp, int *n_dp)
{
    *n_dp = 0;
    clrt_device *d = devices             ? listed_devices(devices, dp, n_dp)
                     : device            ? clrt_device_get(device)
                     : job && job->world ? local_rank_device(job)
                                         : clrt_try_gpu(0);
    if (!d)
        fprintf(stderr, "%s: %s\n", prog, clrt_last_error());
    return d;
}

void app_print_device(clrt_device *d)
{
    clrt_device_info info;
    if (clrt_device_info_get(d, &info) == CLRT_OK)
        printf("device %s: %s (%s, %s)\n", info.name, info.model, info.platform,
               clrt_device_kind_str(info.kind));
}

void app_print_devices(clrt_device *const *dp, int n, clrt_device *d)
{
    for (int i = 0; i < n; i++)
        app_print_device(dp[i]);
    if (n == 0)
        app_print_device(d);
}
