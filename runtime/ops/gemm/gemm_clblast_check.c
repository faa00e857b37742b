/* The values of CLBlast GEMM parameters checked before CLBlast gets them
 * (issue 36): CLBlast checks only their names, and builds its kernel with
 * any values at the next GEMM, where MWG=4294967296 kept LLVM busy for over
 * a minute at every GEMM of the process. The rules are CLBlast 1.5's own,
 * from its tuners' constraints (src/tuning/kernels/xgemm.hpp and
 * xgemm_direct.hpp: multiples, divisibility, local memory, work-group size
 * within the device's limits) and its kernels' choices (vector widths 1 to
 * 16, flags 0 or 1), plus bounds at twice the largest values its tuners try,
 * so that no kernel unrolls or holds more than a tuned one could. Only
 * float32 parameters (4-byte elements) of Xgemm and XgemmDirect are
 * checked; other kernels' are CLBlast's alone. */
#include "runtime/ops/gemm/gemm_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define TILE_MAX 256    /* MWG, NWG, KWG, WGD: the tuners go to 128 */
#define THREADS_MAX 256 /* MDIMC, NDIMC, ... per dimension: the tuners go to 32 */
#define UNROLL_MAX 64   /* KWI, KWID, KREG: the tuners go to 16 */
#define PAD_MAX 16      /* PADA, PADB: the tuners use 0 and 1 */
#define PER_THREAD 4096 /* outputs a work item holds: the tuners go to 64 x 64 */
#define ELEMENT 4       /* bytes of a float32 */

enum { GEMMK, KREG, KWG, KWI, MDIMA, MDIMC, MWG, NDIMB, NDIMC, NWG, SA, SB, STRM, STRN, VWM, VWN };
static const char *const xgemm_names[] = {"GEMMK", "KREG",  "KWG",   "KWI", "MDIMA", "MDIMC",
                                          "MWG",   "NDIMB", "NDIMC", "NWG", "SA",    "SB",
                                          "STRM",  "STRN",  "VWM",   "VWN"};
enum { WGD, MDIMCD, NDIMCD, MDIMAD, NDIMBD, KWID, VWMD, VWND, PADA, PADB };
static const char *const direct_names[] = {"WGD",  "MDIMCD", "NDIMCD", "MDIMAD", "NDIMBD",
                                           "KWID", "VWMD",   "VWND",   "PADA",   "PADB"};

typedef struct {
    char *why;
    size_t cap;
    int bad;
} verdict;

/* Notes the first problem (printf-style) when cond holds; returns cond. */
static int refuse(verdict *v, int cond, const char *fmt, ...) CLRT__PRINTF(3, 4);
static int refuse(verdict *v, int cond, const char *fmt, ...)
{
    if (!cond || v->bad)
        return cond;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->why, v->cap, fmt, ap);
    va_end(ap);
    v->bad = 1;
    return 1;
}

/* Each of want's names in names/values into out; 0 when one is missing
 * (CLBlast refuses the set then, naming it). */
static int gather(int n, const char *const *names, const size_t *values, int count,
                  const char *const *want, size_t *out)
{
    for (int w = 0; w < count; w++) {
        int found = 0;
        for (int i = 0; i < n && !found; i++)
            if (strcmp(names[i], want[w]) == 0)
                out[w] = values[i], found = 1;
        if (!found)
            return 0;
    }
    return 1;
}

static void in_range(verdict *v, const char *name, size_t x, size_t lo, size_t hi)
{
    refuse(v, x < lo || x > hi, "%s=%zu is not from %zu to %zu", name, x, lo, hi);
}

static void vector_width(verdict *v, const char *name, size_t x)
{
    refuse(v, x != 1 && x != 2 && x != 4 && x != 8 && x != 16,
           "%s=%zu is not a vector width CLBlast's kernel has (1, 2, 4, 8, 16)", name, x);
}

/* a is a multiple of b (both named in the message). */
static void multiple(verdict *v, size_t a, const char *an, size_t b, const char *bn)
{
    refuse(v, b == 0 || a % b != 0, "%s=%zu is not a multiple of %s (%zu)", an, a, bn, b);
}

/* A work group of mx x my items, within the device's limits. */
static void work_group(verdict *v, const clrt_device *d, const char *xn, size_t mx, const char *yn,
                       size_t my)
{
    refuse(v, mx * my > d->info.max_work_group_size,
           "a work group of %s x %s = %zu items is over the device's %zu", xn, yn, mx * my,
           d->info.max_work_group_size);
    refuse(v, mx > d->max_item_sizes[0] || my > d->max_item_sizes[1],
           "a work group of %zu x %zu items is over the device's %zu x %zu per dimension", mx, my,
           d->max_item_sizes[0], d->max_item_sizes[1]);
}

static void local_memory(verdict *v, const clrt_device *d, size_t bytes)
{
    refuse(v, bytes > d->info.local_mem_bytes,
           "the kernel would need %zu bytes of local memory, the device has %llu", bytes,
           (unsigned long long)d->info.local_mem_bytes);
}

static void per_thread(verdict *v, size_t m, size_t n)
{
    refuse(v, m * n > PER_THREAD,
           "a work item would hold %zu x %zu outputs, over %d (CLBlast's tuners go to 64 x 64)", m,
           n, PER_THREAD);
}

static void check_xgemm(verdict *v, const clrt_device *d, const size_t *p)
{
    const char *const *nm = xgemm_names;
    static const int flags[] = {GEMMK, SA, SB, STRM, STRN};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
        in_range(v, nm[flags[i]], p[flags[i]], 0, 1);
    vector_width(v, "VWM", p[VWM]);
    vector_width(v, "VWN", p[VWN]);
    static const int tiles[] = {MWG, NWG, KWG}, threads[] = {MDIMC, NDIMC, MDIMA, NDIMB};
    for (size_t i = 0; i < 3; i++)
        in_range(v, nm[tiles[i]], p[tiles[i]], 1, TILE_MAX);
    for (size_t i = 0; i < 4; i++)
        in_range(v, nm[threads[i]], p[threads[i]], 1, THREADS_MAX);
    in_range(v, "KWI", p[KWI], 1, UNROLL_MAX);
    in_range(v, "KREG", p[KREG], 1, UNROLL_MAX);
    if (v->bad) /* the products below stay small from here */
        return;
    multiple(v, p[KWG], "KWG", p[KWI], "KWI");
    multiple(v, p[MWG], "MWG", p[MDIMC] * p[VWM], "MDIMC x VWM");
    multiple(v, p[NWG], "NWG", p[NDIMC] * p[VWN], "NDIMC x VWN");
    multiple(v, p[MWG], "MWG", p[MDIMA] * p[VWM], "MDIMA x VWM");
    multiple(v, p[NWG], "NWG", p[NDIMB] * p[VWN], "NDIMB x VWN");
    if (p[GEMMK] == 0) { /* the tile of A (B) reshaped to KDIMA x MDIMA (KDIMB x NDIMB) */
        size_t threads_c = p[MDIMC] * p[NDIMC];
        multiple(v, threads_c, "MDIMC x NDIMC", p[MDIMA], "MDIMA");
        multiple(v, threads_c, "MDIMC x NDIMC", p[NDIMB], "NDIMB");
        if (!v->bad) {
            multiple(v, p[KWG], "KWG", threads_c / p[MDIMA], "KDIMA = MDIMC x NDIMC / MDIMA");
            multiple(v, p[KWG], "KWG", threads_c / p[NDIMB], "KDIMB = MDIMC x NDIMC / NDIMB");
        }
    } else {
        multiple(v, p[KREG], "KREG", p[VWN], "VWN");
    }
    if (v->bad)
        return;
    per_thread(v, p[MWG] / p[MDIMC], p[NWG] / p[NDIMC]);
    work_group(v, d, "MDIMC", p[MDIMC], "NDIMC", p[NDIMC]);
    local_memory(v, d, ELEMENT * (p[SA] * p[KWG] * p[MWG] + p[SB] * p[KWG] * p[NWG]));
}

static void check_direct(verdict *v, const clrt_device *d, const size_t *p)
{
    const char *const *nm = direct_names;
    vector_width(v, "VWMD", p[VWMD]);
    vector_width(v, "VWND", p[VWND]);
    in_range(v, "WGD", p[WGD], 1, TILE_MAX);
    static const int threads[] = {MDIMCD, NDIMCD, MDIMAD, NDIMBD};
    for (size_t i = 0; i < 4; i++)
        in_range(v, nm[threads[i]], p[threads[i]], 1, THREADS_MAX);
    in_range(v, "KWID", p[KWID], 1, UNROLL_MAX);
    in_range(v, "PADA", p[PADA], 0, PAD_MAX);
    in_range(v, "PADB", p[PADB], 0, PAD_MAX);
    if (v->bad)
        return;
    multiple(v, p[WGD], "WGD", p[KWID], "KWID");
    multiple(v, p[WGD], "WGD", p[MDIMCD] * p[VWMD], "MDIMCD x VWMD");
    multiple(v, p[WGD], "WGD", p[NDIMCD] * p[VWND], "NDIMCD x VWND");
    multiple(v, p[WGD], "WGD", p[MDIMAD] * p[VWMD], "MDIMAD x VWMD");
    multiple(v, p[WGD], "WGD", p[NDIMBD] * p[VWND], "NDIMBD x VWND");
    size_t threads_c = p[MDIMCD] * p[NDIMCD];
    multiple(v, threads_c, "MDIMCD x NDIMCD", p[MDIMAD], "MDIMAD");
    multiple(v, threads_c, "MDIMCD x NDIMCD", p[NDIMBD], "NDIMBD");
    if (v->bad)
        return;
    multiple(v, p[WGD], "WGD", threads_c / p[MDIMAD], "KDIMAD = MDIMCD x NDIMCD / MDIMAD");
    multiple(v, p[WGD], "WGD", threads_c / p[NDIMBD], "KDIMBD = MDIMCD x NDIMCD / NDIMBD");
    per_thread(v, p[WGD] / p[MDIMCD], p[WGD] / p[NDIMCD]);
    work_group(v, d, "MDIMCD", p[MDIMCD], "NDIMCD", p[NDIMCD]);
    local_memory(v, d, ELEMENT * (p[WGD] * (p[WGD] + p[PADA]) + p[WGD] * (p[WGD] + p[PADB])));
}

int clrt__clblast_values_bad(const clrt_device *d, const char *kernel, int n,
                             const char *const *names, const size_t *values, char *why, size_t cap)
{
    size_t p[16];
    verdict v = {why, cap, 0};
    if (strcmp(kernel, "Xgemm") == 0 && gather(n, names, values, 16, xgemm_names, p))
        check_xgemm(&v, d, p);
    else if (strcmp(kernel, "XgemmDirect") == 0 && gather(n, names, values, 10, direct_names, p))
        check_direct(&v, d, p);
    return v.bad;
}
