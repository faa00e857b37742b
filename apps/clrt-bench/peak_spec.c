/* The FP32 peak a device's specification gives, for clrt-bench peak to
 * set its measured rate against: on NVIDIA's driver the datasheet figure
 * (SMs x FP32 lanes per SM for the compute capability x 2 x the clock the
 * driver reports), on a CPU device an estimate from what /proc/cpuinfo and
 * the driver's vector width tell (cores x lanes x FMA units x 2 x clock),
 * labelled as such. Other devices tell no architecture: no figure. */
#include "bench_peak.h"

#include "runtime/device/arch_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* FP32 lanes (CUDA cores) per SM, by compute capability (CUDA C
 * Programming Guide, "Arithmetic Instructions" throughput table). */
static int nv_lanes_per_sm(unsigned major, unsigned minor)
{
    switch (major) {
    case 3:
        return 192;
    case 5:
        return 128;
    case 6:
        return minor == 0 ? 64 : 128;
    case 7:
        return 64;
    case 8:
        return minor == 0 ? 64 : 128;
    case 9:
    case 10:
    case 11:
    case 12:
        return 128;
    }
    return 0;
}

static int nvidia_spec(const clrt_device_info *in, unsigned major, unsigned minor,
                       bench_peak_spec *out)
{
    int lanes = nv_lanes_per_sm(major, minor);
    if (!lanes || !in->compute_units || !in->clock_mhz) {
        snprintf(out->basis, sizeof out->basis,
                 "compute capability %u.%u: FP32 lanes per SM not in clrt-bench's table", major,
                 minor);
        return 0;
    }
    out->gflops = 2.0 * in->compute_units * lanes * in->clock_mhz * 1e-3;
    snprintf(out->kind, sizeof out->kind, "datasheet");
    snprintf(out->basis, sizeof out->basis,
             "%u SMs x %d FP32 lanes per SM (compute capability %u.%u) x 2 FLOP per FMA x %u MHz "
             "(the driver's maximum clock)",
             in->compute_units, lanes, major, minor, in->clock_mhz);
    return 1;
}

/* The host CPU as /proc/cpuinfo describes its first processor. */
typedef struct {
    char vendor[32];
    int family, model, siblings, cores, fma;
} cpu_facts;

static void cpuinfo_line(const char *line, cpu_facts *c)
{
    const char *v = strchr(line, ':');
    if (!v)
        return;
    v++;
    if (strncmp(line, "vendor_id", 9) == 0)
        sscanf(v, " %31s", c->vendor);
    else if (strncmp(line, "cpu family", 10) == 0)
        c->family = atoi(v);
    else if (strncmp(line, "model", 5) == 0 && (line[5] == ' ' || line[5] == '\t'))
        c->model = atoi(v);
    else if (strncmp(line, "siblings", 8) == 0)
        c->siblings = atoi(v);
    else if (strncmp(line, "cpu cores", 9) == 0)
        c->cores = atoi(v);
    else if (strncmp(line, "flags", 5) == 0)
        c->fma = strstr(v, " fma ") != NULL || strstr(v, " fma\n") != NULL;
}

static int read_cpuinfo(cpu_facts *c)
{
    char line[4096];
    FILE *f = fopen("/proc/cpuinfo", "r");
    memset(c, 0, sizeof *c);
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f) && line[0] != '\n') /* the first processor */
        cpuinfo_line(line, c);
    fclose(f);
    return 1;
}

/* FP32 lanes of one FMA unit: the driver's vector width, capped by the
 * core's datapath where it is narrower (AMD Zen 1: 128 bits; Zen 2 to 4:
 * 256 bits, AVX-512 on Zen 4 is split in two). *why describes the cap. */
static int cpu_fma_lanes(const cpu_facts *c, unsigned isa_lanes, const char **why)
{
    int amd = strcmp(c->vendor, "AuthenticAMD") == 0;
    *why = "the driver's vector width";
    if (amd && c->family == 0x17 && c->model < 0x30 && isa_lanes > 4) {
        *why = "Zen 1: a 128-bit FMA datapath";
        return 4;
    }
    if (amd && (c->family == 0x17 || c->family == 0x19) && isa_lanes > 8) {
        *why = "Zen 2-4: a 256-bit FMA datapath";
        return 8;
    }
    return (int)isa_lanes;
}

/* The highest clock cpufreq knows (MHz), else the driver's. *source says which. */
static unsigned cpu_clock_mhz(const clrt_device_info *in, const char **source)
{
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "r");
    unsigned long khz = 0;
    int got = f && fscanf(f, "%lu", &khz) == 1 && khz >= 1000;
    if (f)
        fclose(f);
    *source = got ? "cpufreq's maximum" : "the driver's clock; turbo clocks differ";
    return got ? (unsigned)(khz / 1000) : in->clock_mhz;
}

static int cpu_spec(const clrt_device *d, const clrt_device_info *in, bench_peak_spec *out)
{
    cpu_facts c;
    if (!read_cpuinfo(&c) || !c.fma || !in->compute_units || !in->clock_mhz) {
        snprintf(out->basis, sizeof out->basis,
                 "no estimate: /proc/cpuinfo shows no FMA instructions, or the driver "
                 "reports no clock");
        return 0;
    }
    unsigned threads_per_core =
        c.cores > 0 && c.siblings >= c.cores ? (unsigned)(c.siblings / c.cores) : 1;
    unsigned cores =
        in->compute_units / threads_per_core ? in->compute_units / threads_per_core : 1;
    const char *why, *clock_source;
    int lanes = cpu_fma_lanes(&c, clrt__device_native_vector_width(d), &why);
    unsigned mhz = cpu_clock_mhz(in, &clock_source);
    out->gflops = 2.0 * cores * lanes * 2 * mhz * 1e-3;
    snprintf(out->kind, sizeof out->kind, "estimate");
    snprintf(out->basis, sizeof out->basis,
             "an estimate: %u cores x %d FP32 lanes (%s) x 2 FMA units (assumed) x 2 FLOP per FMA "
             "x %u MHz (%s)",
             cores, lanes, why, mhz, clock_source);
    return 1;
}

int bench_peak_spec_of(const clrt_device *d, bench_peak_spec *out)
{
    clrt_device_info in;
    unsigned major = 0, minor = 0;
    memset(out, 0, sizeof *out);
    if (clrt_device_info_get(d, &in) != CLRT_OK)
        return 0;
    if (clrt__device_nv_compute_capability(d, &major, &minor)) {
        snprintf(out->compute_capability, sizeof out->compute_capability, "%u.%u", major, minor);
        return nvidia_spec(&in, major, minor, out);
    }
    if (in.kind == CLRT_DEVICE_CPU)
        return cpu_spec(d, &in, out);
    snprintf(out->basis, sizeof out->basis,
             "the device does not tell its architecture (no cl_nv_device_attribute_query)");
    return 0;
}
