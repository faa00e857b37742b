/* clrt-smi --tune (smi.h): tunes CLBlast's two SGEMM kernels, Xgemm and
 * XgemmDirect, on one device with CLBlast's own tuners (tune_tuner.c),
 * stores the best parameters in clrt's tuning store for the device model
 * and driver (clrt_clblast_tuning_store), where the library finds them at
 * the first CLBlast GEMM of every later process, then times SGEMM with
 * CLBlast's built-in parameters against them (tune_time.c); then tunes
 * clrt's own kernels (tune_kernels.c). --tune-only picks one of the two. */
#include "smi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const struct {
    const char *program, *kernel;
} tuners[] = {{"clblast_tuner_xgemm", "Xgemm"}, {"clblast_tuner_xgemm_direct", "XgemmDirect"}};

/* The tuners' folder into dir: the one asked (made if missing), else a
 * new one under $TMPDIR. 0, or 1 after a message. */
static int make_dir(const char *asked, char *dir, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    if (asked) {
        snprintf(dir, cap, "%s", asked);
        if (mkdir(dir, 0755) == 0 || errno == EEXIST)
            return 0;
    } else {
        snprintf(dir, cap, "%s/clrt-tune-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (mkdtemp(dir))
            return 0;
    }
    fprintf(stderr, "clrt-smi: cannot make the folder %s: %s\n", dir, strerror(errno));
    return 1;
}

/* One kernel: its tuner, then the best parameters into the store. 0 (also
 * when no setting ran), or 1 after a message. */
static int tune_kernel(clrt_device *d, const clrt_device_info *info, const char *dir, int t,
                       long settings, long size)
{
    const char *kernel = tuners[t].kernel;
    char best[1024], before[1024];
    double ms = 0;
    int tried = 0;
    if (smi_run_tuner(tuners[t].program, info, dir, settings, size, best, sizeof best, &ms, &tried))
        return 1;
    if (!best[0]) {
        int had = clrt_clblast_tuning_load(d, kernel, before, sizeof before) > 0;
        printf("clrt-smi: %s: none of the settings tried ran and matched the tuner's reference; "
               "%s stay\n",
               kernel, had ? "the parameters stored before" : "CLBlast's built-in ones");
        return 0;
    }
    printf("clrt-smi: %s: best of %d settings that ran: %.3f ms at m=n=k=%ld (%.1f GFLOP/s)\n"
           "clrt-smi: %s: %s\n",
           kernel, tried, ms, size, 2.0 * (double)size * size * size / (ms * 1e6), kernel, best);
    if (clrt_clblast_tuning_store(d, kernel, best) != CLRT_OK) {
        fprintf(stderr, "clrt-smi: %s\n", clrt_last_error());
        return 1;
    }
    return 0;
}

/* The tuners' size and the timed sizes, where not asked: GPUs (and other
 * accelerators) at CLBlast's own tuning size, CPU devices smaller. */
static void sizes_for(const smi_tune_options *o, const clrt_device_info *info, long *size,
                      int *sizes, int *n_sizes)
{
    static const int cpu[] = {128, 256, 512, 1024}, gpu[] = {256, 512, 1024, 2048, 4096};
    int is_cpu = info->kind == CLRT_DEVICE_CPU;
    *size = o->size ? o->size : is_cpu ? 256 : 1024;
    *n_sizes = o->n_sizes ? o->n_sizes : is_cpu ? 4 : 5;
    for (int i = 0; i < *n_sizes; i++)
        sizes[i] = o->n_sizes ? o->sizes[i] : is_cpu ? cpu[i] : gpu[i];
}

/* CLBlast's SGEMM kernels on d: tuned, stored, timed. 0, or 1 after a
 * message. */
static int tune_clblast(clrt_device *d, const clrt_device_info *info_in, const smi_tune_options *o)
{
    clrt_device_info info = *info_in;
    char dir[4096];
    int sizes[SMI_MAX_SIZES], n_sizes = 0;
    long size = 0;
    sizes_for(o, &info, &size, sizes, &n_sizes);
    if (make_dir(o->dir, dir, sizeof dir))
        return 1;
    printf("clrt-smi: tuning CLBlast's SGEMM kernels on %s (%s, driver %s; OpenCL platform %u, "
           "device %u); the tuners' output goes to %s\n",
           info.name, info.model, info.driver_version, info.opencl_platform_index,
           info.opencl_device_index, dir);
    if (info.gemm_path != CLRT_GEMM_CLBLAST)
        printf("clrt-smi: %s runs GEMM on the host's BLAS: the tuned parameters serve when it runs "
               "CLBlast (CLRT_GEMM=clblast)\n",
               info.name);
    for (int t = 0; t < 2; t++)
        if (tune_kernel(d, &info, dir, t, o->settings, size))
            return 1;
    clrt_clblast_tuning now = clrt_clblast_tuning_of(d);
    if (now != CLRT_CLBLAST_TUNED_HERE) {
        fprintf(stderr, "clrt-smi: no parameters stored for %s%s%s\n", info.name,
                now == CLRT_CLBLAST_REFUSED ? ": " : "",
                now == CLRT_CLBLAST_REFUSED ? clrt_last_error() : "");
        return 1;
    }
    printf("clrt-smi: stored in clrt's cache folder for %s under driver %s: clrt hands them to "
           "CLBlast at the first CLBlast GEMM on such a device\n",
           info.model, info.driver_version);
    if (smi_time_tuned(info.name, dir, sizes, n_sizes, o->rounds))
        return 1;
    printf("clrt-smi: %s: CLBLAST TUNED: %s\n", info.name,
           clrt_clblast_tuning_str(clrt_clblast_tuning_of(d)));
    return 0;
}

int smi_tune(const smi_tune_options *o)
{
    clrt_device *d = o->device ? clrt_device_get(o->device) : clrt_try_gpu(0);
    clrt_device_info info;
    if (!d || clrt_device_info_get(d, &info) != CLRT_OK) {
        fprintf(stderr, "clrt-smi: %s\n", clrt_last_error());
        return 1;
    }
    if ((o->what & SMI_TUNE_CLBLAST) && tune_clblast(d, &info, o))
        return 1;
    return (o->what & SMI_TUNE_KERNELS) ? smi_tune_kernels(d, &info, o) : 0;
}
