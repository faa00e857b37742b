/* Checkpoints (clrt_module_save / clrt_module_load, safetensors): a bit-exact
 * round trip of random values, every malformed header field leaving the
 * model unchanged, the non-strict mode, and atomic saving (a process killed
 * before the rename, a write that fails part-way, a full tmpfs). */
#include "runtime/tensor/safetensors_internal.h"
#include "testutil.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

static char scratch_dir[256];

static void remove_scratch(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", scratch_dir);
}

/* A fresh folder for this test's files, removed when the test exits. */
static const char *scratch(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch_dir, sizeof scratch_dir, "%s/clrt-ckpt-XXXXXX", tmp ? tmp : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(scratch_dir));
    atexit(remove_scratch);
    return scratch_dir;
}

static void path_in(char *out, size_t cap, const char *dir, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

/* Fills every parameter with fresh random floats plus values whose bits a
 * sloppy path would change: -0, a denormal, infinities, a NaN payload. */
static void randomize(clrt_module *m, uint64_t *rng)
{
    clrt_tensor *p[16];
    int n = clrt_module_parameters(m, NULL, p, NULL, 16);
    ck_assert_int_gt(n, 0);
    for (int i = 0; i < n; i++) {
        size_t k = (size_t)clrt_tensor_numel(p[i]);
        float *v = tu_random_floats(rng, k, -2.0, 2.0);
        const uint32_t odd[] = {0x80000000u, 0x00000001u, 0x7f800000u, 0xff800000u, 0x7fc12345u};
        for (size_t j = 0; j < 5 && j < k; j++)
            memcpy(&v[(j * 7919) % k], &odd[j], 4);
        TU_OK(clrt_copy_from_host(p[i], v, k * sizeof *v));
        free(v);
    }
}

/* All parameter bytes, concatenated in state_dict order (malloc'ed). */
static unsigned char *snapshot(clrt_module *m, size_t *bytes)
{
    clrt_tensor *p[16];
    int n = clrt_module_parameters(m, NULL, p, NULL, 16);
    *bytes = 0;
    for (int i = 0; i < n; i++)
        *bytes += clrt_tensor_nbytes(p[i]);
    unsigned char *all = malloc(*bytes), *at = all;
    for (int i = 0; i < n; i++) {
        TU_OK(clrt_to_host(p[i], at, clrt_tensor_nbytes(p[i])));
        at += clrt_tensor_nbytes(p[i]);
    }
    return all;
}

static clrt_module *lenet(void)
{
    const int64_t chw[3] = {1, 28, 28};
    return TU_NONNULL(clrt_lenet(chw, 10));
}

START_TEST(round_trip_is_bit_exact)
{
    uint64_t rng = tu_seed();
    char path[512];
    path_in(path, sizeof path, scratch(), "lenet.safetensors");
    clrt_module *a = lenet(), *b = lenet();
    randomize(a, &rng);
    randomize(b, &rng);
    TU_OK(clrt_module_save(a, path));
    TU_OK(clrt_module_load(b, path));
    size_t na, nb;
    unsigned char *sa = snapshot(a, &na), *sb = snapshot(b, &nb);
    ck_assert_uint_eq(na, nb);
    ck_assert_msg(memcmp(sa, sb, na) == 0, "loaded parameters differ from the saved ones");

    /* The file's layout: a header padded to 8 bytes, then exactly the data,
     * which is the parameters in state_dict order. */
    FILE *f = fopen(path, "rb");
    unsigned char len[8];
    ck_assert_uint_eq(fread(len, 1, 8, f), 8);
    uint64_t h = 0;
    for (int i = 7; i >= 0; i--)
        h = h << 8 | len[i];
    ck_assert_uint_eq(h % 8, 0);
    struct stat st;
    ck_assert_int_eq(fstat(fileno(f), &st), 0);
    ck_assert_uint_eq((uint64_t)st.st_size, 8 + h + na);
    unsigned char *data = malloc(na);
    ck_assert_int_eq(fseek(f, (long)(8 + h), SEEK_SET), 0);
    ck_assert_uint_eq(fread(data, 1, na, f), na);
    ck_assert_msg(memcmp(data, sa, na) == 0, "file data differ from the parameters");
    fclose(f);
    free(data), free(sa), free(sb);
    clrt_module_free(a);
    clrt_module_free(b);
}
END_TEST

/* --- malformed files against Linear(3, 2): weight [2, 3], bias [2] --- */

#define W "\"weight\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]}"
#define B "\"bias\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[24,32]}"

#define OWN UINT64_MAX

typedef struct {
    const char *what;
    const char *header;
    uint64_t header_len; /* OWN: the header's own length */
    size_t data;         /* bytes of data after the header */
    clrt_status want;
    const char *needle;
} bad_case;

static const bad_case bad_cases[] = {
    {"header length past the end", "{" W "," B "}", 4096, 32, CLRT_EFORMAT, "header length 4096"},
    {"header length 2^63", "{" W "," B "}", 0x8000000000000001u, 32, CLRT_EFORMAT, "does not fit"},
    {"header length 0", "{" W "," B "}", 0, 32, CLRT_EFORMAT, "header length 0"},
    {"not JSON", "hello", OWN, 32, CLRT_EFORMAT, "expected '{'"},
    {"truncated JSON", "{" W ",\"bias\":{\"dtype\":\"F32\"", OWN, 32, CLRT_EFORMAT, "expected"},
    {"trailing bytes", "{" W "," B "}x", OWN, 32, CLRT_EFORMAT, "trailing bytes"},
    {"unknown dtype", "{" W ",\"bias\":{\"dtype\":\"F33\",\"shape\":[2],\"data_offsets\":[24,32]}}",
     OWN, 32, CLRT_EFORMAT, "unknown dtype \"F33\""},
    {"dtype not the model's",
     "{" W ",\"bias\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[24,32]}}", OWN, 32,
     CLRT_EDTYPE, "'bias' is I32, the model's is F32"},
    {"shape not the model's",
     "{\"weight\":{\"dtype\":\"F32\",\"shape\":[3,2],\"data_offsets\":[0,24]}," B "}", OWN, 32,
     CLRT_ESHAPE, "'weight' has shape [3, 2], the model's is [2, 3]"},
    {"negative shape",
     "{\"weight\":{\"dtype\":\"F32\",\"shape\":[-2,3],\"data_offsets\":[0,24]}," B "}", OWN, 32,
     CLRT_EFORMAT, "non-negative integer"},
    {"too many dims",
     "{\"weight\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,6],\"data_offsets\":[0,24]}," B "}",
     OWN, 32, CLRT_EFORMAT, "more than 8"},
    {"fractional offset",
     "{\"weight\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24.0]}," B "}", OWN, 32,
     CLRT_EFORMAT, "fraction"},
    {"one offset", "{\"weight\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0]}," B "}",
     OWN, 32, CLRT_EFORMAT, "[begin, end]"},
    {"offsets reversed",
     "{\"weight\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[24,0]}," B "}", OWN, 32,
     CLRT_EFORMAT, "'weight': data_offsets [24, 0]"},
    {"offsets vs shape",
     "{\"weight\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,20]}," B "}", OWN, 32,
     CLRT_EFORMAT, "dtype F32 x shape needs 24"},
    {"offset past the data", "{" W "," B "}", OWN, 28, CLRT_EFORMAT, "past the data"},
    {"overlapping offsets",
     "{" W ",\"bias\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[20,28]}}", OWN, 32,
     CLRT_EFORMAT, "'bias': data_offsets begin 20 overlaps"},
    {"hole between tensors",
     "{" W ",\"bias\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[28,36]}}", OWN, 36,
     CLRT_EFORMAT, "leaves a hole"},
    {"data after the last tensor", "{" W "," B "}", OWN, 40, CLRT_EFORMAT,
     "8 bytes of data after the last tensor"},
    {"duplicate name", "{" W "," W "," B "}", OWN, 32, CLRT_EFORMAT,
     "duplicate tensor name 'weight'"},
    /* Issue 36: a NUL ended the C string ("weight\u0000x" was a duplicate
     * of "weight"); raw bytes that are not UTF-8 were taken as a name. */
    {"NUL escape in a name",
     "{" W "," B ",\"weight\\u0000x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[32,36]}}",
     OWN, 36, CLRT_EFORMAT, "\\u0000 (NUL) in a string"},
    {"name not UTF-8",
     "{" W "," B ",\"\xff\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[32,36]}}", OWN, 36,
     CLRT_EFORMAT, "0xff is not UTF-8"},
    {"unknown key",
     "{" W ",\"bias\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[24,32],\"x\":1}}", OWN, 32,
     CLRT_EFORMAT, "unknown key"},
    {"missing key", "{" W ",\"bias\":{\"dtype\":\"F32\",\"shape\":[2]}}", OWN, 32, CLRT_EFORMAT,
     "lacks dtype, shape or data_offsets"},
    {"metadata not strings", "{\"__metadata__\":{\"a\":1}," W "," B "}", OWN, 32, CLRT_EFORMAT,
     "expected '\"'"},
    {"control character", "{\"wei\nght\":{\"dtype\":\"F32\"}}", OWN, 32, CLRT_EFORMAT,
     "control character"},
    {"missing name", "{" W "}", OWN, 24, CLRT_EFORMAT, "missing: bias; unexpected: none"},
    {"extra name",
     "{" W "," B ",\"extra\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[32,36]}}", OWN, 36,
     CLRT_EFORMAT, "missing: none; unexpected: extra"},
};

static void write_raw(const char *path, const char *header, uint64_t header_len, size_t data)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    uint64_t n = header_len == OWN ? strlen(header) : header_len;
    for (int i = 0; i < 8; i++)
        fputc((int)(n >> (8 * i) & 0xFF), f);
    fputs(header, f);
    for (size_t i = 0; i < data; i++)
        fputc((int)(i * 37 + 11), f);
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(malformed_files_leave_the_model_unchanged)
{
    uint64_t rng = tu_seed();
    const char *dir = scratch();
    char path[512];
    clrt_module *m = TU_NONNULL(clrt_linear(3, 2));
    randomize(m, &rng);
    size_t n0, n1;
    unsigned char *before = snapshot(m, &n0);
    const bad_case *c = &bad_cases[_i];
    path_in(path, sizeof path, dir, "bad.safetensors");
    write_raw(path, c->header, c->header_len, c->data);
    ck_assert_msg(clrt_module_load(m, path) == c->want, "%s: loaded (%s)", c->what,
                  clrt_last_error());
    tu_assert_error(c->want, c->needle, path, NULL);
    unsigned char *after = snapshot(m, &n1);
    ck_assert_msg(memcmp(before, after, n0) == 0, "%s: the model changed", c->what);
    free(before), free(after);
    clrt_module_free(m);
}
END_TEST

START_TEST(short_and_missing_files_are_errors)
{
    const char *dir = scratch();
    char path[512];
    clrt_module *m = TU_NONNULL(clrt_linear(3, 2));
    path_in(path, sizeof path, dir, "short.safetensors");
    FILE *f = fopen(path, "wb");
    fwrite("\x10\0\0", 1, 3, f);
    fclose(f);
    ck_assert_int_eq(clrt_module_load(m, path), CLRT_EFORMAT);
    tu_assert_error(CLRT_EFORMAT, "3 bytes, too short", NULL);
    path_in(path, sizeof path, dir, "absent.safetensors");
    ck_assert_int_eq(clrt_module_load(m, path), CLRT_EIO);
    tu_assert_error(CLRT_EIO, "absent.safetensors", "No such file", NULL);
    ck_assert_int_eq(clrt_module_load(m, dir), CLRT_EIO);
    tu_assert_error(CLRT_EIO, "not a regular file", NULL);
    clrt_module_free(m);
}
END_TEST

/* strict 0 loads what both have and lists the rest. */
START_TEST(non_strict_load_lists_what_it_skipped)
{
    const char *dir = scratch();
    char path[512], skipped[256];
    clrt_module *m = TU_NONNULL(clrt_linear(3, 2));
    path_in(path, sizeof path, dir, "partial.safetensors");
    write_raw(path, "{" W ",\"extra\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[24,28]}}",
              OWN, 28);
    TU_OK(clrt_module_load_ex(m, path, 0, skipped, sizeof skipped));
    ck_assert_str_eq(skipped, "missing: bias; unexpected: extra");
    unsigned char w[24];
    TU_OK(clrt_to_host(clrt_module_param(m, "weight"), w, sizeof w));
    for (int i = 0; i < 24; i++)
        ck_assert_uint_eq(w[i], (unsigned char)(i * 37 + 11));
    /* A shape mismatch is an error even when not strict. */
    write_raw(path, "{\"weight\":{\"dtype\":\"F32\",\"shape\":[6],\"data_offsets\":[0,24]}}", OWN,
              24);
    ck_assert_int_eq(clrt_module_load_ex(m, path, 0, skipped, sizeof skipped), CLRT_ESHAPE);
    clrt_module_free(m);
}
END_TEST

/* --- atomic saving (host-side writer, so forked children use no OpenCL) --- */

/* Writes weight [2, 3] and bias [2] all equal to v, plus an "extra" U8
 * tensor of extra bytes (to make the file large). */
static clrt_status write_linear(const char *path, float v, size_t extra)
{
    float w[6], b[2];
    for (int i = 0; i < 6; i++)
        w[i] = b[i % 2] = v;
    unsigned char *x = calloc(extra + 1, 1);
    const int64_t ws[2] = {2, 3}, bs[1] = {2}, xs[1] = {(int64_t)extra};
    const clrt__st_item items[3] = {{"weight", "F32", 2, ws, w, sizeof w},
                                    {"bias", "F32", 1, bs, b, sizeof b},
                                    {"extra", "U8", 1, xs, x, extra}};
    clrt_status st = clrt__st_write(path, items, extra ? 3 : 2, NULL, 0, "test");
    free(x);
    return st;
}

/* Files in dir whose names hold ".tmp-" (left-over temporaries). */
static int temporaries(const char *dir, off_t *size)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "find '%s' -name '*.tmp-*' -printf '%%s\\n'", dir);
    FILE *p = popen(cmd, "r");
    int n = 0;
    long long s;
    while (fscanf(p, "%lld", &s) == 1)
        n++, *size = (off_t)s;
    pclose(p);
    return n;
}

/* Host-side check of a file written by write_linear(path, v, 0). */
static int holds(const char *path, float v)
{
    clrt__st_file f;
    if (clrt__st_read(path, &f) != CLRT_OK)
        return 0;
    const clrt__st_tensor *w = clrt__st_find(&f, "weight");
    int ok = w && w->bytes == 24 && f.count == 2 && clrt__st_fetch(&f, 1, &w) == CLRT_OK;
    for (int i = 0; ok && i < 6; i++) {
        float x;
        memcpy(&x, w->data + 4 * i, 4);
        ok = x == v;
    }
    clrt__st_close(&f);
    return ok;
}

static void expect_loadable(const char *path, float v)
{
    clrt_module *m = TU_NONNULL(clrt_linear(3, 2));
    TU_OK(clrt_module_load(m, path));
    float *w = tu_read(clrt_module_param(m, "weight")), *b = tu_read(clrt_module_param(m, "bias"));
    for (int i = 0; i < 6; i++)
        ck_assert_float_eq(w[i], v);
    ck_assert_float_eq(b[0], v);
    free(w), free(b);
    clrt_module_free(m);
}

/* Killed once the temporary file is written, synced and closed: just
 * before the rename. */
static void die(const char *step, const char *path)
{
    (void)path;
    if (strcmp(step, "close") == 0)
        raise(SIGKILL);
}

START_TEST(crash_before_rename_keeps_the_previous_file)
{
    const char *dir = scratch();
    char path[512];
    path_in(path, sizeof path, dir, "ckpt.safetensors");
    TU_OK(write_linear(path, 1.0f, 0));
    pid_t pid = fork();
    if (pid == 0) {
        clrt__out_hook = die;
        write_linear(path, 2.0f, 1000);
        _exit(3); /* not reached */
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child was not killed");
    off_t size = 0;
    ck_assert_int_eq(temporaries(dir, &size), 1); /* the new file was written whole... */
    ck_assert_int_gt(size, 1000 + 32);
    expect_loadable(path, 1.0f); /* ...and never replaced the old one */
}
END_TEST

/* A write that fails part-way (the file size limit: write() returns EFBIG,
 * as a full disk returns ENOSPC) is an error, removes its temporary and
 * keeps the previous file. */
START_TEST(failed_write_keeps_the_previous_file)
{
    const char *dir = scratch();
    char path[512];
    path_in(path, sizeof path, dir, "ckpt.safetensors");
    TU_OK(write_linear(path, 1.0f, 0));
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit lim = {4096, 4096};
        signal(SIGXFSZ, SIG_IGN);
        setrlimit(RLIMIT_FSIZE, &lim);
        clrt_status st = write_linear(path, 2.0f, 1 << 16);
        _exit(st == CLRT_EIO && strstr(clrt_last_error(), "write failed") ? 0 : 1);
    }
    int status;
    off_t size;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "write did not fail cleanly");
    ck_assert_int_eq(temporaries(dir, &size), 0);
    expect_loadable(path, 1.0f);
}
END_TEST

/* A real full disk: a 32 KiB tmpfs in a private mount namespace (needs
 * CAP_SYS_ADMIN; skipped, with the reason, without it). */
static int full_tmpfs_child(const char *dir)
{
    char path[512];
    off_t size;
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("tmpfs", dir, "tmpfs", 0, "size=32k") != 0)
        return 77;
    path_in(path, sizeof path, dir, "ckpt.safetensors");
    if (write_linear(path, 1.0f, 0) != CLRT_OK)
        return 1;
    if (write_linear(path, 2.0f, 1 << 17) != CLRT_EIO || !strstr(clrt_last_error(), "No space"))
        return 2;
    return holds(path, 1.0f) && temporaries(dir, &size) == 0 ? 0 : 3;
}

START_TEST(full_disk_keeps_the_previous_file)
{
    const char *dir = scratch();
    pid_t pid = fork();
    if (pid == 0)
        _exit(full_tmpfs_child(dir));
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77)
        tu_skip("full_disk_keeps_the_previous_file: mounting a tmpfs needs CAP_SYS_ADMIN");
    else
        ck_assert_msg(WEXITSTATUS(status) == 0, "full tmpfs: step %d failed", WEXITSTATUS(status));
}
END_TEST

static clrt_optimizer *make_opt(clrt_module *m, int adam);

/* --- what a save may replace, what a load may read (issue 25) --- */

enum { AT_FIFO, AT_LINK, AT_DANGLING, AT_FOLDER, AT_DEVICE, N_KINDS };

/* Puts a kind of file at path (its target, for links, at target); 0 when
 * it cannot be made here (a device node needs root). */
static int make_kind(int kind, const char *path, const char *target)
{
    FILE *f;
    switch (kind) {
    case AT_FIFO:
        return mkfifo(path, 0600) == 0;
    case AT_LINK:
        f = fopen(target, "w");
        fputs("precious\n", f);
        fclose(f);
        return symlink(target, path) == 0;
    case AT_DANGLING:
        return symlink(target, path) == 0;
    case AT_FOLDER:
        return mkdir(path, 0700) == 0;
    default:
        return mknod(path, S_IFCHR | 0600, makedev(1, 7)) == 0; /* a /dev/full of our own */
    }
}

static mode_t kind_mode(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 ? st.st_mode & S_IFMT : 0;
}

/* clrt_module_save and clrt_optimizer_save write only where a regular file
 * or nothing stands: over a FIFO, a link (dangling or not), a folder or a
 * device they fail naming the path and leave it as it was (they used to
 * rename their temporary file over it and return OK). */
START_TEST(save_writes_only_over_a_regular_file_or_nothing)
{
    const char *dir = scratch();
    char path[512], target[512], opath[512];
    path_in(path, sizeof path, dir, "x");
    path_in(target, sizeof target, dir, "target");
    path_in(opath, sizeof opath, dir, "x.optim");
    if (!make_kind(_i, path, target) || !make_kind(_i, opath, target)) {
        ck_assert_msg(_i == AT_DEVICE, "kind %d could not be made: %s", _i, strerror(errno));
        tu_skip("save over a device node: mknod needs root here (%s)", strerror(errno));
        return;
    }
    mode_t was = kind_mode(path);
    clrt_module *m = TU_NONNULL(clrt_linear(3, 2));
    clrt_optimizer *o = make_opt(m, 1);
    ck_assert_int_eq(clrt_module_save(m, path), CLRT_EIO);
    tu_assert_error(CLRT_EIO, "clrt_module_save", path, "only where a regular file or nothing",
                    NULL);
    ck_assert_int_eq(clrt_optimizer_save(o, opath), CLRT_EIO);
    tu_assert_error(CLRT_EIO, "clrt_optimizer_save", opath, NULL);
    ck_assert_int_eq(kind_mode(path), was);
    ck_assert_int_eq(kind_mode(opath), was);
    if (_i == AT_LINK) {
        char text[32] = "";
        FILE *f = fopen(target, "r");
        ck_assert_ptr_nonnull(fgets(text, sizeof text, f));
        fclose(f);
        ck_assert_str_eq(text, "precious\n");
    }
    off_t size;
    ck_assert_int_eq(temporaries(dir, &size), 0);
    clrt_optimizer_free(o);
    clrt_module_free(m);
}
END_TEST

/* A FIFO where a checkpoint is read is an error at once: open() used to
 * wait for a writer forever. */
START_TEST(loads_never_wait_on_a_fifo)
{
    const char *dir = scratch();
    char path[512];
    path_in(path, sizeof path, dir, "fifo");
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    clrt_module *m = TU_NONNULL(clrt_linear(3, 2));
    clrt_optimizer *o = make_opt(m, 0);
    alarm(20); /* a hang fails the test instead of waiting for check's timeout */
    ck_assert_int_eq(clrt_module_load(m, path), CLRT_EIO);
    tu_assert_error(CLRT_EIO, path, "not a regular file (a FIFO)", NULL);
    ck_assert_int_eq(clrt_optimizer_load(o, path), CLRT_EIO);
    tu_assert_error(CLRT_EIO, path, "not a regular file (a FIFO)", NULL);
    alarm(0);
    clrt_optimizer_free(o);
    clrt_module_free(m);
}
END_TEST

/* The peak memory (MiB) of a child that runs fn(arg), and its exit code. */
static double child_peak_mib(int (*fn)(const char *), const char *arg, int *code)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(fn(arg));
    int status;
    struct rusage ru;
    ck_assert_int_eq(wait4(pid, &status, 0, &ru), pid);
    *code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return (double)ru.ru_maxrss / 1024.0;
}

/* A fresh Linear(3, 2) and its Adam, then (path not NULL) path loaded
 * into both; 0 when both loads fail with "after the last tensor". Without
 * a path it is the baseline: the device opened and its kernels built (the
 * driver's own memory: rusticl's compiler takes over 100 MiB more than
 * PoCL's). */
static int load_big(const char *path)
{
    clrt_module *m = clrt_linear(3, 2);
    clrt_tensor *p[2], *g[2];
    int n = m ? clrt_module_parameters(m, NULL, p, g, 2) : 0;
    clrt_optimizer *o = n == 2 ? clrt_adam(n, p, g, 0.01, 0.9, 0.999, 1e-8, 0) : NULL;
    if (!o)
        return 2;
    if (!path)
        return 0;
    int ok = clrt_module_load(m, path) == CLRT_EFORMAT &&
             strstr(clrt_last_error(), "after the last tensor") &&
             clrt_optimizer_load(o, path) == CLRT_EFORMAT &&
             strstr(clrt_last_error(), "after the last tensor");
    return ok ? 0 : 1;
}

/* A checkpoint with 1 GiB of (sparse) data after its tensors is refused
 * from its header, without reading the data: the reader used to read the
 * whole file into memory first (a 10 GB file took 10.6 GB). */
START_TEST(oversized_files_are_not_read_whole)
{
    const char *dir = scratch();
    char path[512];
    path_in(path, sizeof path, dir, "big.safetensors");
    write_raw(path, "{" W "," B "}", OWN, 32);
    ck_assert_int_eq(truncate(path, (off_t)1 << 30), 0);
    int code;
    double base = child_peak_mib(load_big, NULL, &code);
    ck_assert_msg(code == 0, "the baseline child: exit %d", code);
    double peak = child_peak_mib(load_big, path, &code);
    ck_assert_msg(code == 0, "load of the big file: exit %d", code);
    ck_assert_msg(peak - base < 128, "a refused 1 GiB file took %.0f MiB", peak - base);
}
END_TEST

/* --- optimizer state --- */

enum { STEPS = 6, HALF = 3 };

static clrt_optimizer *make_opt(clrt_module *m, int adam)
{
    clrt_tensor *p[4], *g[4];
    int n = clrt_module_parameters(m, NULL, p, g, 4);
    return TU_NONNULL(adam ? clrt_adam(n, p, g, 0.01, 0.9, 0.999, 1e-8, 0.01)
                           : clrt_sgd(n, p, g, 0.05, 0.9, 0.01));
}

/* Steps [from, to) with gradient values grads[step] (6 + 2 floats each). */
static void run_steps(clrt_module *m, clrt_optimizer *o, float (*grads)[8], int from, int to)
{
    for (int s = from; s < to; s++) {
        TU_OK(clrt_copy_from_host(clrt_module_grad(m, "weight"), grads[s], 24));
        TU_OK(clrt_copy_from_host(clrt_module_grad(m, "bias"), grads[s] + 6, 8));
        TU_OK(clrt_optimizer_step(o));
    }
}

/* Saving model and optimizer half-way and resuming in fresh objects gives
 * bit-identical parameters to running straight through (Adam's step count
 * enters its bias correction, so it must be restored too). */
START_TEST(optimizer_resume_matches_uninterrupted)
{
    uint64_t rng = tu_seed();
    const char *dir = scratch();
    char mpath[512], opath[512];
    path_in(mpath, sizeof mpath, dir, "model.safetensors");
    path_in(opath, sizeof opath, dir, "optim.safetensors");
    float grads[STEPS][8];
    for (int s = 0; s < STEPS; s++)
        for (int i = 0; i < 8; i++)
            grads[s][i] = (float)tu_uniform(&rng, -1, 1);
    clrt_module *a = TU_NONNULL(clrt_linear(3, 2)), *b = TU_NONNULL(clrt_linear(3, 2));
    randomize(a, &rng);
    clrt_optimizer *oa = make_opt(a, _i), *ob = make_opt(b, _i);
    run_steps(a, oa, grads, 0, HALF);
    TU_OK(clrt_module_save(a, mpath));
    TU_OK(clrt_optimizer_save(oa, opath));
    run_steps(a, oa, grads, HALF, STEPS);

    TU_OK(clrt_module_load(b, mpath));
    TU_OK(clrt_optimizer_load(ob, opath));
    ck_assert_int_eq(clrt_optimizer_steps(ob), HALF);
    run_steps(b, ob, grads, HALF, STEPS);
    size_t na, nb;
    unsigned char *sa = snapshot(a, &na), *sb = snapshot(b, &nb);
    ck_assert_msg(memcmp(sa, sb, na) == 0, "%s: resumed parameters differ",
                  clrt_optimizer_name(oa));
    free(sa), free(sb);

    /* The other kind's state, or a model file, is refused; nothing changes. */
    clrt_optimizer *other = make_opt(b, !_i);
    ck_assert_int_eq(clrt_optimizer_load(other, opath), CLRT_EINVAL);
    tu_assert_error(CLRT_EINVAL, "state, this optimizer is", NULL);
    ck_assert_int_eq(clrt_optimizer_steps(other), 0);
    ck_assert_int_eq(clrt_optimizer_load(ob, mpath), CLRT_EFORMAT);
    tu_assert_error(CLRT_EFORMAT, "not an optimizer checkpoint", NULL);
    ck_assert_int_eq(clrt_optimizer_steps(ob), STEPS);
    clrt_optimizer_free(other);
    clrt_optimizer_free(oa), clrt_optimizer_free(ob);
    clrt_module_free(a), clrt_module_free(b);
}
END_TEST

static Suite *checkpoint_suite(void)
{
    Suite *s = suite_create("checkpoint");
    TCase *tc = tu_tcase("checkpoint");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, round_trip_is_bit_exact);
    tcase_add_loop_test(tc, malformed_files_leave_the_model_unchanged, 0,
                        (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_add_test(tc, short_and_missing_files_are_errors);
    tcase_add_test(tc, non_strict_load_lists_what_it_skipped);
    tcase_add_test(tc, crash_before_rename_keeps_the_previous_file);
    tcase_add_test(tc, failed_write_keeps_the_previous_file);
    tcase_add_loop_test(tc, optimizer_resume_matches_uninterrupted, 0, 2); /* SGD, Adam */
    tcase_add_loop_test(tc, save_writes_only_over_a_regular_file_or_nothing, 0, AT_DEVICE);
    tcase_add_test(tc, loads_never_wait_on_a_fifo);
    tcase_add_test(tc, oversized_files_are_not_read_whole);
    suite_add_tcase(s, tc);
    TCase *mount = tu_tcase("needs_root");
    tcase_set_tags(mount, TU_MAY_SKIP);
    tcase_set_timeout(mount, 120);
    tcase_add_test(mount, full_disk_keeps_the_previous_file);
    /* A device node of its own needs root (mknod). */
    tcase_add_loop_test(mount, save_writes_only_over_a_regular_file_or_nothing, AT_DEVICE, N_KINDS);
    suite_add_tcase(s, mount);
    return s;
}

int main(void) { return tu_run(checkpoint_suite()); }
