/* clrt's stored CLBlast parameters (clrt/ops_gemm.h): parameters stored
 * with clrt_clblast_tuning_store (as clrt-smi --tune stores its tuners'
 * best) are found in the cache folder by a later process and handed to
 * CLBlast at its first CLBlast GEMM, whose products still match a float64
 * reference; values beyond CLBlast's constraints or the device's limits
 * are refused at the store and at the override (issue 36: MWG=4294967296
 * was taken, and every later GEMM spun in LLVM for over a minute); a
 * record holding them, names CLBlast refuses and a corrupt record fail
 * that GEMM and the next with an error naming them and the way out,
 * building nothing; a CLBlast GEMM that fails names the stored parameters
 * in use; CLRT_CLBLAST_TUNED=0 leaves them unused; a caller's
 * clrt_clblast_override wins over them. tests/tune/ runs clrt-smi --tune
 * itself, with CLBlast's tuners.
 *
 * Each test case makes a cache folder of its own before its first clrt
 * call (the store lives there, and the test cases run one after another
 * in forked processes of one program). The later process is this program
 * again (`child`): it runs products through both of CLBlast's GEMM kernels
 * and prints what it ran with and whether they matched. main sets
 * CLRT_GEMM=clblast, so that CPU devices take CLBlast too.
 *
 * Error bound, as test_gemm's: |got - ref| <= (k + 2) * FLT_EPSILON *
 * max_ij sum_p |a_ip b_pj|, with outputs poisoned (CLRT_POISON=1: NaN)
 * before the run, so a product that did not run fails. */
#include "testutil.h"

#include "runtime/device/tuning_internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <float.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Valid settings away from CLBlast's own, for each of its GEMM kernels;
 * HUGE_MWG, issue 36's: known names, a tile of 2^32 (LLVM spun on it for
 * minutes at every GEMM). */
#define XGEMM                                                                                      \
    "GEMMK=0 KREG=1 KWG=16 KWI=2 MDIMA=8 MDIMC=8 MWG=32 NDIMB=8 NDIMC=8 NWG=32 PRECISION=32 SA=0 " \
    "SB=0 STRM=1 STRN=0 VWM=2 VWN=2"
#define XGEMM_DIRECT "KWID=2 MDIMAD=8 MDIMCD=8 NDIMBD=8 NDIMCD=8 PADA=1 PADB=0 VWMD=2 VWND=1 WGD=16"
#define HUGE_MWG                                                                                   \
    "GEMMK=0 KREG=1 KWG=16 KWI=2 MDIMA=8 MDIMC=8 MWG=4294967296 NDIMB=8 NDIMC=8 NWG=32 SA=0 SB=0 " \
    "STRM=0 STRN=0 VWM=2 VWN=2"

static uint64_t rng;

/* A cache folder of this test case's own, `<CLRT_CACHE_DIR>-<name>` (else
 * under /tmp), set before any clrt call, without the records of a run
 * before (its compiled kernels stay). */
static void own_cache_folder(const char *name)
{
    const char *base = getenv("CLRT_CACHE_DIR");
    static char dir[4096];
    snprintf(dir, sizeof dir, "%s-%s", base && *base ? base : "/tmp/clrt-test-tuning", name);
    DIR *d = opendir(dir);
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        size_t n = strlen(e->d_name);
        if (n > 5 && strcmp(e->d_name + n - 5, ".tune") == 0)
            ck_assert_int_eq(unlinkat(dirfd(d), e->d_name, 0), 0);
    }
    if (d)
        closedir(d);
    setenv("CLRT_CACHE_DIR", dir, 1);
    rng = tu_seed() ^ 0xBB67AE8584CAA73BULL;
}

/* --- the later process --- */

/* n floats uniform in [-1, 1): malloc'ed. Here and below no ck_* call:
 * the later process runs outside check's runner. */
static float *random_floats(size_t n)
{
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; x && i < n; i++)
        x[i] = (float)tu_uniform(&rng, -1, 1);
    return x;
}

/* C [m,n] = A [m,k] B [k,n] through clrt_matmul against float64: 1 when
 * within the bound, else 0 after printing why. */
static int product_matches(clrt_device *d, int64_t m, int64_t k, int64_t n)
{
    int64_t sa[2] = {m, k}, sb[2] = {k, n};
    float *ha = random_floats((size_t)(m * k)), *hb = random_floats((size_t)(k * n));
    float *got = malloc((size_t)(m * n) * sizeof *got);
    double *ref = malloc((size_t)(m * n) * sizeof *ref);
    if (!ha || !hb || !got || !ref)
        abort();
    double scale = tu_matmul_ref(ha, hb, m, k, n, ref);
    clrt_tensor *a = clrt_from_host(d, CLRT_F32, 2, sa, ha);
    clrt_tensor *b = clrt_from_host(d, CLRT_F32, 2, sb, hb);
    clrt_tensor *c = a && b ? clrt_matmul(a, b) : NULL;
    int ok = c && clrt_to_host(c, got, (size_t)(m * n) * sizeof *got) == CLRT_OK;
    double err = ok ? tu_rel_err(got, ref, (size_t)(m * n), scale) : 0;
    if (!ok)
        printf("gemm error (m=%lld k=%lld n=%lld): %s\n", (long long)m, (long long)k, (long long)n,
               clrt_last_error());
    else if (!(err <= (double)(k + 2) * FLT_EPSILON))
        printf("product m=%lld k=%lld n=%lld off by %.3g\n", (long long)m, (long long)k,
               (long long)n, err);
    ok = ok && err <= (double)(k + 2) * FLT_EPSILON;
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    clrt_tensor_release(c);
    free(ha);
    free(hb);
    free(got);
    free(ref);
    return ok;
}

/* The later process: CLRT_TEST_OVERRIDE=1 hands over XGEMM first, as a
 * program of its own would. Prints "tuning <what the first GEMM left>",
 * then "products match" when every product did. The first product builds
 * CLBlast's GEMM program, both kernels in it, with the parameters in use;
 * CLRT_TEST_INDIRECT=1 runs the kernels of every size through Xgemm too
 * (which builds the program once more). */
static int child_main(void)
{
    rng = tu_seed() ^ 0x3C6EF372FE94F82BULL;
    clrt_device *d = tu_device_lookup();
    const char *override = getenv("CLRT_TEST_OVERRIDE");
    if (!d || (override && clrt_clblast_override(d, "Xgemm", XGEMM) != CLRT_OK)) {
        printf("setup error: %s\n", clrt_last_error());
        return 1;
    }
    /* CLRT_TEST_BREAK=1: CLBlast's copy kernel, built in one program with
     * its GEMM kernels, gets a vector width it has no code for (clrt checks
     * only Xgemm's and XgemmDirect's values), so the GEMM program fails to
     * build. */
    if (getenv("CLRT_TEST_BREAK") &&
        clrt_clblast_override(d, "Copy", "COPY_DIMX=8 COPY_DIMY=8 COPY_VW=3 COPY_WPT=1") !=
            CLRT_OK) {
        printf("setup error: %s\n", clrt_last_error());
        return 1;
    }
    int ok = product_matches(d, 7, 31, 13); /* the first GEMM: XgemmDirect at this size */
    printf("tuning %s\n", clrt_clblast_tuning_str(clrt_clblast_tuning_of(d)));
    ok = ok && product_matches(d, 65, 17, 33);
    if (getenv("CLRT_TEST_INDIRECT")) {
        /* CLBlast's indirect kernel (Xgemm) for every size from here on. */
        ok = ok && clrt_clblast_override(d, "GemmRoutine", "XGEMM_MIN_INDIRECT_SIZE=1") == CLRT_OK;
        ok = ok && product_matches(d, 64, 96, 64) && product_matches(d, 33, 130, 17);
    }
    if (ok)
        printf("products match\n");
    else
        printf("products do not match: %s\n", clrt_last_error());
    return ok ? 0 : 1;
}

/* Runs the later process with env; returns its output (static). */
static const char *later_process(const char *const *env, int want_ok)
{
    static char out[1 << 16];
    int status = tu_run_child(env, 600, out, sizeof out);
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    ck_assert_msg(ok == want_ok, "the later process %s:\n%s", ok ? "succeeded" : "failed", out);
    return out;
}

static void assert_has(const char *text, const char *needle)
{
    ck_assert_msg(strstr(text, needle) != NULL, "no \"%s\" in:\n%s", needle, text);
}

/* The later process with `var` set ("NAME=value", or NULL) ran with the
 * parameters `tuning` names, and its products matched. */
static void later_process_matches(const char *var, const char *tuning)
{
    const char *env[] = {var, NULL};
    const char *out = later_process(env, 1);
    assert_has(out, tu_fmt("tuning %s\n", tuning));
    assert_has(out, "products match\n");
}

/* --- tests --- */

START_TEST(stored_parameters_apply_in_a_later_process)
{
    own_cache_folder("stored");
    clrt_device *d = tu_device();
    char text[1024];
    ck_assert_int_eq(clrt_clblast_tuning_of(d), CLRT_CLBLAST_BUILT_IN);
    ck_assert_int_eq(clrt_clblast_tuning_load(d, "Xgemm", text, sizeof text), 0);
    TU_OK(clrt_clblast_tuning_store(d, "Xgemm", XGEMM));
    TU_OK(clrt_clblast_tuning_store(d, "XgemmDirect", XGEMM_DIRECT));
    ck_assert_int_eq(clrt_clblast_tuning_of(d), CLRT_CLBLAST_TUNED_HERE);
    ck_assert_int_eq(clrt_clblast_tuning_load(d, "Xgemm", text, sizeof text), strlen(XGEMM));
    ck_assert_str_eq(text, XGEMM);
    ck_assert_int_eq(clrt_clblast_tuning_load(d, "XgemmDirect", text, 8), strlen(XGEMM_DIRECT));
    ck_assert_str_eq(text, "KWID=2 ");

    later_process_matches("CLRT_TEST_INDIRECT=1", "tuned here");
    later_process_matches("CLRT_CLBLAST_TUNED=0", "built-in");
}
END_TEST

/* A CLBlast GEMM that fails (its program does not build) names the stored
 * parameters it was built with. */
START_TEST(failed_gemm_names_the_stored_parameters)
{
    own_cache_folder("build");
    clrt_device *d = tu_device();
    TU_OK(clrt_clblast_tuning_store(d, "Xgemm", XGEMM));
    const char *env[] = {"CLRT_TEST_BREAK=1", NULL};
    const char *out = later_process(env, 0);
    assert_has(out, "gemm error (m=7 k=31 n=13): CLBlast SGEMM");
    assert_has(out, "with clrt's stored parameters");
    assert_has(out, "Xgemm '" XGEMM "'");
    assert_has(out, "CLRT_CLBLAST_TUNED=0");
}
END_TEST

/* Every GEMM on the device fails while the record stands, naming it. */
static void assert_gemms_fail(clrt_device *d, const char *record_text, const char *problem)
{
    int64_t s[2] = {5, 5};
    clrt_tensor *a = TU_NONNULL(clrt_ones(d, CLRT_F32, 2, s));
    for (int i = 0; i < 2; i++) {
        ck_assert_ptr_null(clrt_matmul(a, a));
        tu_assert_error(CLRT_EINVAL, "clrt's stored CLBlast Xgemm parameters",
                        tu_fmt("for %s", clrt_device_str(d)), record_text, problem,
                        tu_fmt("clrt-smi --tune %s", clrt_device_str(d)), "CLRT_CLBLAST_TUNED=0",
                        NULL);
    }
    ck_assert_int_eq(clrt_clblast_tuning_of(d), CLRT_CLBLAST_REFUSED);
    tu_assert_error(CLRT_EINVAL, record_text, problem, NULL);
    clrt_tensor_release(a);
}

/* Values beyond CLBlast's constraints or the device's limits (issue 36):
 * each refused at the store (nothing stored, nothing handed over) and at
 * the override, naming the problem; CLBlast's own parameters stay, and a
 * GEMM after them runs at once. */
static const struct {
    const char *kernel, *params, *problem;
    uint64_t local_mem; /* the case applies to devices with less local memory; 0: all */
} bad_values[] = {
    {"Xgemm", HUGE_MWG, "MWG=4294967296 is not from 1 to 256", 0},
    {"Xgemm",
     "GEMMK=0 KREG=1 KWG=16 KWI=2 MDIMA=8 MDIMC=8 MWG=-1 NDIMB=8 NDIMC=8 NWG=32 SA=0 SB=0 STRM=0 "
     "STRN=0 VWM=2 VWN=2",
     "MWG=18446744073709551615 is not from 1 to 256", 0},
    {"Xgemm", /* a vector width CLBlast's kernel has no code for */
     "GEMMK=0 KREG=1 KWG=16 KWI=2 MDIMA=8 MDIMC=8 MWG=24 NDIMB=8 NDIMC=8 NWG=32 SA=0 SB=0 STRM=0 "
     "STRN=0 VWM=3 VWN=2",
     "VWM=3 is not a vector width CLBlast's kernel has", 0},
    {"Xgemm",
     "GEMMK=0 KREG=1 KWG=16 KWI=3 MDIMA=8 MDIMC=8 MWG=32 NDIMB=8 NDIMC=8 NWG=32 SA=0 SB=0 STRM=0 "
     "STRN=0 VWM=2 VWN=2",
     "KWG=16 is not a multiple of KWI (3)", 0},
    {"Xgemm",
     "GEMMK=0 KREG=1 KWG=16 KWI=2 MDIMA=8 MDIMC=16 MWG=32 NDIMB=8 NDIMC=8 NWG=32 SA=0 SB=0 STRM=0 "
     "STRN=0 VWM=4 VWN=2",
     "MWG=32 is not a multiple of MDIMC x VWM (64)", 0},
    {"Xgemm",
     "GEMMK=0 KREG=1 KWG=4 KWI=2 MDIMA=8 MDIMC=8 MWG=32 NDIMB=8 NDIMC=8 NWG=32 SA=0 SB=0 STRM=0 "
     "STRN=0 VWM=2 VWN=2",
     "KWG=4 is not a multiple of KDIMA = MDIMC x NDIMC / MDIMA (8)", 0},
    {"Xgemm",
     "GEMMK=2 KREG=1 KWG=16 KWI=2 MDIMA=8 MDIMC=8 MWG=32 NDIMB=8 NDIMC=8 NWG=32 SA=0 SB=0 STRM=0 "
     "STRN=0 VWM=2 VWN=2",
     "GEMMK=2 is not from 0 to 1", 0},
    {"Xgemm",
     "GEMMK=0 KREG=1 KWG=256 KWI=2 MDIMA=1 MDIMC=1 MWG=256 NDIMB=1 NDIMC=1 NWG=256 SA=0 SB=0 "
     "STRM=0 STRN=0 VWM=1 VWN=1",
     "a work item would hold 256 x 256 outputs", 0},
    {"Xgemm",
     "GEMMK=0 KREG=1 KWG=256 KWI=2 MDIMA=256 MDIMC=256 MWG=256 NDIMB=256 NDIMC=256 NWG=256 SA=0 "
     "SB=0 STRM=0 STRN=0 VWM=1 VWN=1",
     "a work group of MDIMC x NDIMC = 65536 items is over the device's", 0},
    {"Xgemm",
     "GEMMK=0 KREG=1 KWG=256 KWI=2 MDIMA=16 MDIMC=16 MWG=256 NDIMB=16 NDIMC=16 NWG=256 SA=1 SB=1 "
     "STRM=0 STRN=0 VWM=1 VWN=1",
     "the kernel would need 524288 bytes of local memory", 524288},
    {"XgemmDirect",
     "KWID=2 MDIMAD=8 MDIMCD=8 NDIMBD=8 NDIMCD=8 PADA=1 PADB=0 VWMD=2 VWND=1 WGD=4096",
     "WGD=4096 is not from 1 to 256", 0},
    {"XgemmDirect", "KWID=2 MDIMAD=8 MDIMCD=8 NDIMBD=8 NDIMCD=8 PADA=1 PADB=0 VWMD=5 VWND=1 WGD=16",
     "VWMD=5 is not a vector width", 0},
    {"XgemmDirect",
     "KWID=2 MDIMAD=8 MDIMCD=8 NDIMBD=8 NDIMCD=8 PADA=99 PADB=0 VWMD=2 VWND=1 WGD=16",
     "PADA=99 is not from 0 to 16", 0},
    {"XgemmDirect", "KWID=2 MDIMAD=8 MDIMCD=8 NDIMBD=8 NDIMCD=8 PADA=1 PADB=0 VWMD=2 VWND=1 WGD=24",
     "WGD=24 is not a multiple of MDIMCD x VWMD (16)", 0},
    {"XgemmDirect",
     "KWID=2 MDIMAD=16 MDIMCD=16 NDIMBD=16 NDIMCD=16 PADA=16 PADB=16 VWMD=1 VWND=1 WGD=256",
     "the kernel would need 557056 bytes of local memory", 557056},
};

START_TEST(values_beyond_clblast_are_refused)
{
    own_cache_folder("values");
    clrt_device *d = tu_device();
    clrt_device_info info;
    TU_OK(clrt_device_info_get(d, &info));
    const char *kernel = bad_values[_i].kernel, *params = bad_values[_i].params;
    if (bad_values[_i].local_mem && info.local_mem_bytes >= bad_values[_i].local_mem) {
        printf("case %d: %s has %llu bytes of local memory, enough for '%s'\n", _i,
               clrt_device_str(d), (unsigned long long)info.local_mem_bytes, params);
        return;
    }
    char text[16];
    ck_assert_int_eq(clrt_clblast_tuning_store(d, kernel, params), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "clrt_clblast_tuning_store", kernel, params,
                    "beyond what CLBlast's kernel takes", bad_values[_i].problem, NULL);
    ck_assert_int_eq(clrt_clblast_tuning_load(d, kernel, text, sizeof text), 0);
    ck_assert_int_eq(clrt_clblast_tuning_of(d), CLRT_CLBLAST_BUILT_IN);
    ck_assert_int_eq(clrt_clblast_override(d, kernel, params), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "clrt_clblast_override", bad_values[_i].problem, NULL);
    ck_assert(product_matches(d, 9, 40, 11));
    ck_assert(product_matches(d, 64, 96, 64));
}
END_TEST

/* Such values in a record written below the API (by hand, by another
 * version): every GEMM fails naming them, none builds a kernel from them;
 * a program's own parameters for the kernel win over them. */
START_TEST(stored_values_beyond_clblast_fail_every_gemm)
{
    own_cache_folder("stored-values");
    clrt_device *d = tu_device();
    clrt__tuning_put(d, "clblast/Xgemm", HUGE_MWG, sizeof HUGE_MWG);
    assert_gemms_fail(d, "'" HUGE_MWG "'",
                      "beyond what CLBlast's kernel takes (MWG=4294967296 is not from 1 to 256)");
    later_process_matches("CLRT_TEST_OVERRIDE=1", "built-in");
}
END_TEST

START_TEST(refused_names_fail_every_gemm)
{
    own_cache_folder("refused");
    clrt_device *d = tu_device();
    char text[64];
    /* Refused when stored: nothing is kept. */
    ck_assert_int_eq(clrt_clblast_tuning_store(d, "Xgemm", "KWG=32"), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "CLBlast refused", "KWG=32", "CLBlastMissingOverrideParameter",
                    NULL);
    ck_assert_int_eq(clrt_clblast_tuning_load(d, "Xgemm", text, sizeof text), 0);
    /* A record with names this CLBlast does not take (as another version's
     * could have), written below the API. */
    clrt__tuning_put(d, "clblast/Xgemm", "KWG=32", sizeof "KWG=32");
    assert_gemms_fail(d, "'KWG=32'", "refused by CLBlast (CLBlastMissingOverrideParameter");
}
END_TEST

START_TEST(corrupt_record_fails_every_gemm)
{
    own_cache_folder("corrupt");
    clrt_device *d = tu_device();
    char text[64];
    static const char junk[] = {'M', 'W', 'G', '\x01', '\xff', '3'}; /* no NUL */
    clrt__tuning_put(d, "clblast/Xgemm", junk, sizeof junk);
    ck_assert_int_eq(clrt_clblast_tuning_load(d, "Xgemm", text, sizeof text), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "not text", "corrupt", NULL);
    assert_gemms_fail(d, "'MWG??3'", "not NAME=VALUE pairs: the record is corrupt");
    /* Storing good ones replaces it. */
    TU_OK(clrt_clblast_tuning_store(d, "Xgemm", XGEMM));
    ck_assert_int_eq(clrt_clblast_tuning_of(d), CLRT_CLBLAST_TUNED_HERE);
    ck_assert(product_matches(d, 9, 40, 11));
}
END_TEST

START_TEST(bad_arguments)
{
    own_cache_folder("args");
    clrt_device *d = tu_device();
    char text[16];
    ck_assert_int_eq(clrt_clblast_tuning_store(d, "GemmRoutine", "XGEMM_MIN_INDIRECT_SIZE=1"),
                     CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "'GemmRoutine' is not one clrt tunes", "Xgemm, XgemmDirect", NULL);
    ck_assert_int_eq(clrt_clblast_tuning_store(d, "Xgemm", "KWG=32 MWG"), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "not NAME=VALUE pairs", NULL);
    ck_assert_int_eq(clrt_clblast_tuning_store(NULL, "Xgemm", XGEMM), CLRT_EINVAL);
    ck_assert_int_eq(clrt_clblast_tuning_store(d, NULL, XGEMM), CLRT_EINVAL);
    ck_assert_int_eq(clrt_clblast_tuning_store(d, "Xgemm", NULL), CLRT_EINVAL);
    ck_assert_int_eq(clrt_clblast_tuning_load(d, "Copy", text, sizeof text), CLRT_EINVAL);
    ck_assert_int_eq(clrt_clblast_tuning_load(d, "Xgemm", NULL, 4), CLRT_EINVAL);
    ck_assert_int_eq(clrt_clblast_tuning_of(NULL), CLRT_CLBLAST_TUNING_UNKNOWN);
    tu_assert_error(CLRT_EINVAL, "NULL", NULL);
    ck_assert_str_eq(clrt_clblast_tuning_str(CLRT_CLBLAST_BUILT_IN), "built-in");
    ck_assert_str_eq(clrt_clblast_tuning_str(CLRT_CLBLAST_TUNED_HERE), "tuned here");
    ck_assert_str_eq(clrt_clblast_tuning_str(CLRT_CLBLAST_REFUSED), "refused");
    ck_assert_str_eq(clrt_clblast_tuning_str(CLRT_CLBLAST_TUNING_UNKNOWN), "unknown");
    ck_assert_int_eq(clrt_clblast_tuning_of(d), CLRT_CLBLAST_BUILT_IN);
}
END_TEST

/* Without a cache folder the parameters hold for this process only, and
 * the store says so. */
START_TEST(no_cache_folder)
{
    setenv("CLRT_CACHE", "0", 1);
    rng = tu_seed();
    clrt_device *d = tu_device();
    ck_assert_int_eq(clrt_clblast_tuning_store(d, "Xgemm", XGEMM), CLRT_EIO);
    tu_assert_error(CLRT_EIO, "in use in this process only", "CLRT_CACHE=0", NULL);
    ck_assert_int_eq(clrt_clblast_tuning_of(d), CLRT_CLBLAST_TUNED_HERE);
    ck_assert(product_matches(d, 9, 40, 11));
}
END_TEST

static Suite *tuning_suite(void)
{
    Suite *s = suite_create("clblast_tuning");
    TCase *tc = tu_tcase("store");
    tcase_set_timeout(tc, 900);
    tcase_add_test(tc, stored_parameters_apply_in_a_later_process);
    tcase_add_test(tc, failed_gemm_names_the_stored_parameters);
    tcase_add_loop_test(tc, values_beyond_clblast_are_refused, 0,
                        (int)(sizeof bad_values / sizeof bad_values[0]));
    tcase_add_test(tc, stored_values_beyond_clblast_fail_every_gemm);
    tcase_add_test(tc, refused_names_fail_every_gemm);
    tcase_add_test(tc, corrupt_record_fails_every_gemm);
    tcase_add_test(tc, bad_arguments);
    tcase_add_test(tc, no_cache_folder);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    setenv("CLRT_GEMM", "clblast", 1);
    if (argc == 2 && strcmp(argv[1], "child") == 0)
        return child_main();
    return tu_run(tuning_suite());
}
