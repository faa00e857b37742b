/* The program cache across processes: a second process with the same
 * CLRT_CACHE_DIR builds nothing; damaged or foreign cache files are rebuilt
 * and rewritten; CLRT_CACHE=0 writes nothing; a kernel that does not compile
 * fails with its build log. The cache as a trust boundary (issue 14): the
 * folder and files are private; a cut payload with a consistent header is
 * rebuilt, never handed to the driver; FIFOs, links, files of others or
 * writable by others, oversized files and foreign folders are refused
 * without blocking; stale temporary files of dead writers are removed;
 * SipHash-2-4 gives the published answers.
 *
 * The "processes" are this program run again as `test_program_cache child`,
 * which uses two kernel families (random, binary), checks the results and
 * prints how many programs it built from source. */
#include "philox_ref.h"
#include "runtime/device/cache_internal.h"
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILD_N 1001
#define CHILD_SEED 0x123456789abcdefULL

/* --- the child --- */

static int child_results_ok(clrt_device *d)
{
    int64_t n = CHILD_N;
    float a[CHILD_N], r[CHILD_N], s[CHILD_N];
    for (int k = 0; k < CHILD_N; k++)
        a[k] = (float)k;
    clrt_tensor *tr = clrt_rand(d, 1, &n, CHILD_SEED);
    clrt_tensor *ta = clrt_from_host(d, CLRT_F32, 1, &n, a);
    clrt_tensor *tsum = ta ? clrt_add(ta, ta) : NULL;
    int ok = tr && tsum && clrt_to_host(tr, r, sizeof r) == CLRT_OK &&
             clrt_to_host(tsum, s, sizeof s) == CLRT_OK;
    for (int k = 0; ok && k < CHILD_N; k++)
        ok = r[k] == tu_philox_uniform(CHILD_SEED, (uint64_t)k) && s[k] == 2.0f * (float)k;
    if (!ok)
        fprintf(stderr, "child: wrong results or a failure: %s\n", clrt_last_error());
    clrt_tensor_release(tr), clrt_tensor_release(ta), clrt_tensor_release(tsum);
    return ok;
}

static int child_main(void)
{
    clrt_device *d = clrt_default_device(); /* the test device (tu_run: CLRT_DEFAULT_DEVICE) */
    int ok = d && child_results_ok(d);
    printf("builds=%ld ok=%d\n", clrt_program_builds(), ok);
    return ok ? 0 : 1;
}

/* --- the parent --- */

/* Runs the child with CLRT_CACHE_DIR=dir (and CLRT_CACHE=cache if not
 * NULL); returns its program builds, after checking it succeeded within a
 * minute (a hang, e.g. on a FIFO, is killed by SIGALRM and fails). Its
 * stdout and stderr go to out (may be NULL). */
static long run_child_out(const char *dir, const char *cache, char *out, size_t cap)
{
    char buf[4096], dir_var[600], cache_var[64];
    snprintf(dir_var, sizeof dir_var, "CLRT_CACHE_DIR=%s", dir);
    snprintf(cache_var, sizeof cache_var, cache ? "CLRT_CACHE=%s" : "CLRT_CACHE", cache);
    const char *env[] = {dir_var, cache_var, NULL};
    int status = tu_run_child(env, 60, buf, sizeof buf);
    long builds = -1;
    int ok = 0;
    const char *line = strstr(buf, "builds=");
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0 && line &&
                      sscanf(line, "builds=%ld ok=%d", &builds, &ok) == 2 && ok,
                  "child failed (%s %d): '%s'", WIFSIGNALED(status) ? "signal" : "status",
                  WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), buf);
    if (out)
        snprintf(out, cap, "%s", buf);
    return builds;
}

static long run_child(const char *dir, const char *cache)
{
    return run_child_out(dir, cache, NULL, 0);
}

static void fresh_dir(char *path) /* path: a mkdtemp template */
{
    ck_assert_ptr_nonnull(mkdtemp(path));
}

/* Paths of the entries of dir (at most max) whose names end with suffix
 * ("" for all but . and ..); returns how many. */
static int list_entries(const char *dir, const char *suffix, char names[][512], int max)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return 0;
    size_t ls = strlen(suffix);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t l = strlen(e->d_name);
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && l >= ls &&
            strcmp(e->d_name + l - ls, suffix) == 0 && n < max)
            snprintf(names[n++], 512, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    return n;
}

/* The cache files (<key>.bin) in dir. */
static int list_files(const char *dir, char names[][512], int max)
{
    return list_entries(dir, ".bin", names, max);
}

static void remove_dir(const char *dir)
{
    char names[64][512];
    int n = list_entries(dir, "", names, 64);
    for (int i = 0; i < n; i++)
        unlink(names[i]);
    rmdir(dir);
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

static size_t read_file(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

START_TEST(second_process_compiles_nothing)
{
    char dir[] = "/tmp/clrt-cache-test-XXXXXX";
    fresh_dir(dir);
    long first = run_child(dir, NULL);
    ck_assert_int_ge(first, 2); /* random and binary */
    char names[64][512];
    ck_assert_int_eq(list_files(dir, names, 64), first);
    ck_assert_int_eq(run_child(dir, NULL), 0);
    remove_dir(dir);
}
END_TEST

/* Each way of damaging every cache file: the child must get correct
 * results, rebuild, and leave files a third run can use. */
typedef enum { TRUNCATE, GARBAGE, FOREIGN, EMPTY } damage;

static void damage_files(char names[][512], int n, damage how)
{
    static char buf[1 << 22], first[1 << 22];
    size_t first_size = read_file(names[0], first, sizeof first);
    ck_assert_uint_lt(first_size, sizeof first);
    for (int i = 0; i < n; i++) {
        size_t size = read_file(names[i], buf, sizeof buf);
        if (how == TRUNCATE) {
            ck_assert_int_eq(truncate(names[i], (off_t)(size / 2)), 0);
        } else if (how == GARBAGE) {
            for (size_t k = 0; k < size; k++)
                buf[k] = (char)(k * 131 + 7);
            write_file(names[i], buf, size);
        } else if (how == EMPTY) {
            write_file(names[i], buf, 0);
        } else if (i + 1 < n) { /* FOREIGN: each gets the next one's valid file */
            size = read_file(names[i + 1], buf, sizeof buf);
            write_file(names[i], buf, size);
        } else {
            write_file(names[i], first, first_size);
        }
    }
}

static void check_survives(damage how)
{
    char dir[] = "/tmp/clrt-cache-test-XXXXXX";
    fresh_dir(dir);
    long builds = run_child(dir, NULL);
    char names[64][512];
    int n = list_files(dir, names, 64);
    ck_assert_int_eq(n, builds);
    long good_size[64];
    for (int i = 0; i < n; i++)
        good_size[i] = file_size(names[i]);
    damage_files(names, n, how);
    ck_assert_int_eq(run_child(dir, NULL), builds); /* every damaged one rebuilt */
    ck_assert_int_eq(list_files(dir, names, 64), n);
    for (int i = 0; i < n; i++) /* rewritten whole (same source, same driver) */
        ck_assert_int_eq(file_size(names[i]), good_size[i]);
    ck_assert_int_eq(run_child(dir, NULL), 0);
    remove_dir(dir);
}

START_TEST(truncated_files_are_rebuilt) { check_survives(TRUNCATE); }
END_TEST
START_TEST(garbage_files_are_rebuilt) { check_survives(GARBAGE); }
END_TEST
START_TEST(empty_files_are_rebuilt) { check_survives(EMPTY); }
END_TEST
START_TEST(foreign_files_are_rebuilt) { check_survives(FOREIGN); }
END_TEST

START_TEST(cache_off_writes_nothing)
{
    char dir[] = "/tmp/clrt-cache-test-XXXXXX";
    fresh_dir(dir);
    ck_assert_int_ge(run_child(dir, "0"), 2);
    ck_assert_int_ge(run_child(dir, "0"), 2);
    char names[4][512];
    ck_assert_int_eq(list_entries(dir, "", names, 4), 0); /* not even a key */
    remove_dir(dir);
}
END_TEST

/* --- the cache as a trust boundary (issue 14) --- */

static uint8_t *slurp(const char *path, size_t *size)
{
    static char buf[1 << 22];
    *size = read_file(path, buf, sizeof buf);
    ck_assert_uint_lt(*size, sizeof buf);
    uint8_t *copy = malloc(*size ? *size : 1);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, buf, *size);
    return copy;
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void read_user_key(const char *dir, uint8_t key[CLRT__CACHE_KEY_BYTES])
{
    char path[600];
    snprintf(path, sizeof path, "%s/key", dir);
    size_t n;
    uint8_t *k = slurp(path, &n);
    ck_assert_uint_eq(n, CLRT__CACHE_KEY_BYTES);
    memcpy(key, k, n);
    free(k);
}

static mode_t mode_of(const char *path)
{
    struct stat st;
    ck_assert_int_eq(lstat(path, &st), 0);
    return st.st_mode;
}

/* A populated cache folder: its path in dir (a mkdtemp template), its files
 * in names; returns how many programs the first process built. */
static long populate(char *dir, char names[][512], int *n)
{
    fresh_dir(dir);
    long builds = run_child(dir, NULL);
    *n = list_files(dir, names, 64);
    ck_assert_int_eq(*n, builds);
    return builds;
}

/* The folder, made with its missing parents, and every file in it are
 * private to the user; the key is 16 bytes. */
START_TEST(folder_and_files_are_private)
{
    char base[] = "/tmp/clrt-cache-test-XXXXXX", dir[600], mid[600], names[64][512];
    fresh_dir(base);
    ck_assert_int_eq(chmod(base, 0755), 0);
    snprintf(mid, sizeof mid, "%s/a", base);
    snprintf(dir, sizeof dir, "%s/a/b", base);
    ck_assert_int_ge(run_child(dir, NULL), 2);
    ck_assert_int_eq(mode_of(mid) & 07777, 0700);
    ck_assert_int_eq(mode_of(dir) & 07777, 0700);
    char key[700];
    snprintf(key, sizeof key, "%s/key", dir);
    ck_assert(S_ISREG(mode_of(key)) && (mode_of(key) & 07777) == 0600);
    ck_assert_int_eq(file_size(key), CLRT__CACHE_KEY_BYTES);
    int n = list_files(dir, names, 64);
    ck_assert_int_ge(n, 2);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(mode_of(names[i]) & 07777, 0600);
    remove_dir(dir);
    rmdir(mid);
    rmdir(base);
}
END_TEST

/* Issue 14, defect 2: keep the header and program key, cut the payload to
 * 100 or 5000 bytes and rewrite the size and the tag to match, as someone
 * without the user's key would. Before, such a file went to the driver,
 * whose binary loader crashed (SIGSEGV, or PoCL's assertion in
 * pocl_binary_deserialize). Now it fails its tag and is rebuilt. */
START_TEST(cut_payload_with_consistent_header_is_rebuilt)
{
    const size_t keep = _i == 0 ? 100 : 5000;
    char dir[] = "/tmp/clrt-cache-test-XXXXXX", names[64][512];
    int n;
    long builds = populate(dir, names, &n);
    uint8_t key[CLRT__CACHE_KEY_BYTES], guess[CLRT__CACHE_KEY_BYTES] = {0};
    read_user_key(dir, key);
    for (int i = 0; i < n; i++) {
        size_t size, cut_size, len;
        const uint8_t *payload;
        uint8_t *f = slurp(names[i], &size);
        const uint64_t program[2] = {le64(f + 8), le64(f + 16)};
        ck_assert_int_eq(clrt__cache_file_decode(f, size, program, key, &payload, &len),
                         CLRT__CACHE_FILE_OK);
        ck_assert_uint_gt(len, keep);
        uint8_t *cut = clrt__cache_file_encode(program, guess, payload, keep, &cut_size);
        ck_assert_ptr_nonnull(cut);
        /* Consistent in every field: only the key tells it apart. */
        ck_assert_int_eq(clrt__cache_file_decode(cut, cut_size, program, guess, &payload, &len),
                         CLRT__CACHE_FILE_OK);
        ck_assert_int_eq(clrt__cache_file_decode(cut, cut_size, program, key, &payload, &len),
                         CLRT__CACHE_FILE_TAG);
        write_file(names[i], cut, cut_size);
        free(cut);
        free(f);
    }
    ck_assert_int_eq(run_child(dir, NULL), builds); /* every one rebuilt, no crash */
    ck_assert_int_eq(run_child(dir, NULL), 0);
    remove_dir(dir);
}
END_TEST

/* Issue 14, defect 3: a FIFO where a cache file should be hung the process
 * forever in fopen. Now it is refused without blocking, rebuilt, and
 * replaced by a regular file. */
START_TEST(fifo_is_refused_without_blocking)
{
    char dir[] = "/tmp/clrt-cache-test-XXXXXX", names[64][512];
    int n;
    long builds = populate(dir, names, &n);
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(unlink(names[i]), 0);
        ck_assert_int_eq(mkfifo(names[i], 0600), 0);
    }
    ck_assert_int_eq(run_child(dir, NULL), builds); /* a hang is killed after a minute */
    for (int i = 0; i < n; i++)
        ck_assert(S_ISREG(mode_of(names[i])));
    ck_assert_int_eq(run_child(dir, NULL), 0);
    remove_dir(dir);
}
END_TEST

/* Files the cache must not trust, though their bytes are good: writable by
 * the group (0), by others (1), a link to a good file (2), another user's
 * (3, as root only: others cannot give files away), oversized (4, sparse:
 * refused before a byte is read). Each is rebuilt and replaced. */
static void check_untrusted_files_are_rebuilt(int kind)
{
    char dir[] = "/tmp/clrt-cache-test-XXXXXX", names[64][512], real[1024];
    int n;
    long builds = populate(dir, names, &n);
    for (int i = 0; i < n; i++) {
        if (kind == 0)
            ck_assert_int_eq(chmod(names[i], 0620), 0);
        else if (kind == 1)
            ck_assert_int_eq(chmod(names[i], 0602), 0);
        else if (kind == 2) {
            ck_assert_int_lt(snprintf(real, sizeof real, "%s.real", names[i]), (int)sizeof real);
            ck_assert_int_eq(rename(names[i], real), 0);
            ck_assert_int_eq(symlink(real, names[i]), 0);
        } else if (kind == 3)
            ck_assert_int_eq(chown(names[i], 65534, 65534), 0);
        else
            ck_assert_int_eq(truncate(names[i], (off_t)CLRT__CACHE_FILE_MAX + 1), 0);
    }
    ck_assert_int_eq(run_child(dir, NULL), builds);
    for (int i = 0; i < n; i++) {
        struct stat st;
        ck_assert_int_eq(lstat(names[i], &st), 0);
        ck_assert(S_ISREG(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 07777) == 0600);
        ck_assert_int_lt(st.st_size, 1 << 24);
    }
    ck_assert_int_eq(run_child(dir, NULL), 0);
    remove_dir(dir);
}

START_TEST(untrusted_files_are_rebuilt) { check_untrusted_files_are_rebuilt(_i < 3 ? _i : _i + 1); }
END_TEST

/* Kind 3, another user's file: only root can give a file away. */
START_TEST(another_users_files_are_rebuilt)
{
    if (geteuid() != 0) {
        tu_skip("another_users_files_are_rebuilt: giving a file to another user needs root");
        return;
    }
    check_untrusted_files_are_rebuilt(3);
}
END_TEST

/* A folder others may write to (0), or another user's (1), is not used:
 * one warning per process naming it, every program built, nothing written. */
START_TEST(untrusted_folder_is_refused)
{
    char dir[] = "/tmp/clrt-cache-test-XXXXXX", out[4096], names[4][512];
    fresh_dir(dir);
    const char *why = "others may write";
    if (_i == 0)
        ck_assert_int_eq(chmod(dir, 0777), 0);
    else if (geteuid() == 0)
        ck_assert_int_eq(chown(dir, 65534, 65534), 0);
    else
        snprintf(dir, sizeof dir, "/"); /* root's, and never written */
    if (_i == 1)
        why = "belongs to uid";
    for (int run = 0; run < 2; run++) {
        ck_assert_int_ge(run_child_out(dir, NULL, out, sizeof out), 2);
        const char *w = strstr(out, "not using the program cache folder");
        ck_assert_msg(w && strstr(w, dir) && strstr(w, why), "no warning: %s", out);
        ck_assert_msg(!strstr(w + 1, "not using the program cache folder"), "twice: %s", out);
    }
    if (strcmp(dir, "/") != 0) {
        ck_assert_int_eq(list_entries(dir, "", names, 4), 0);
        remove_dir(dir);
    }
}
END_TEST

static void make_aged(const char *dir, const char *name, long age_s)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    write_file(path, "partial", 7);
    struct timeval t[2];
    gettimeofday(&t[0], NULL);
    t[0].tv_sec -= age_s;
    t[1] = t[0];
    ck_assert_int_eq(utimes(path, t), 0);
}

static int exists(const char *dir, const char *name)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Issue 14, defect 7: a writer killed mid-write leaves "<name>.tmp.<pid>";
 * the next process removes it once its writer is gone and it is a minute
 * old (or an hour old, whatever its pid), and leaves live writers' alone. */
START_TEST(stale_temporary_files_are_removed)
{
    char dir[] = "/tmp/clrt-cache-test-XXXXXX", name[9][128];
    fresh_dir(dir);
    pid_t dead = fork();
    ck_assert_int_ge(dead, 0);
    if (dead == 0)
        _exit(0);
    ck_assert_int_eq(waitpid(dead, NULL, 0), dead);
    long me = (long)getpid();
    static const struct {
        const char *fmt;
        int pid_is_mine;
        long age;
        int removed;
    } cases[] = {
        {"00ff.bin.tmp.%ld", 0, 120, 1},    /* dead writer */
        {"00ff.bin.tmp.%ld.7", 0, 120, 1},  /* dead writer, with a serial */
        {"key.tmp.%ld", 0, 120, 1},         /* a dead process's key */
        {"00fe.bin.tmp.%ld", 1, 120, 0},    /* live writer */
        {"00fd.bin.tmp.%ld.1", 0, 5, 0},    /* too fresh to judge */
        {"00fc.bin.tmp.%ld.2", 1, 7200, 1}, /* older than any write */
        {"notes.tmp.%ldx", 0, 7200, 0},     /* not a name of ours */
    };
    int nc = (int)(sizeof cases / sizeof *cases);
    for (int i = 0; i < nc; i++) {
        snprintf(name[i], sizeof name[i], cases[i].fmt, cases[i].pid_is_mine ? me : (long)dead);
        make_aged(dir, name[i], cases[i].age);
    }
    ck_assert_int_ge(run_child(dir, NULL), 2);
    for (int i = 0; i < nc; i++)
        ck_assert_msg(exists(dir, name[i]) == !cases[i].removed, "%s was %s", name[i],
                      cases[i].removed ? "kept" : "removed");
    remove_dir(dir);
}
END_TEST

/* SipHash-2-4's published answers (Aumasson and Bernstein, 2012, appendix
 * A and the reference vectors): key 00 01 .. 0f, messages 00 01 .. */
START_TEST(siphash_known_answers)
{
    uint8_t key[16], msg[15];
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)i;
    for (int i = 0; i < 15; i++)
        msg[i] = (uint8_t)i;
    ck_assert(clrt__siphash24(key, msg, 15) == 0xa129ca6149be45e5ULL);
    ck_assert(clrt__siphash24(key, msg, 0) == 0x726fdb47dd0e0e31ULL);
}
END_TEST

/* Rewrites the tag of file f (size bytes) under key, after an edit. */
static void retag(uint8_t *f, size_t size, const uint8_t *key)
{
    uint64_t tag = clrt__siphash24(key, f, size - CLRT__CACHE_TAG);
    for (int i = 0; i < 8; i++)
        f[size - CLRT__CACHE_TAG + (size_t)i] = (uint8_t)(tag >> (8 * i));
}

/* The format's checks, each on its own: every byte flip fails the tag; a
 * re-tagged file with a bad magic, another program's key or a wrong size
 * field is refused for that. */
START_TEST(file_format_checks)
{
    uint8_t key[16] = {1, 2, 3}, payload[20];
    for (int i = 0; i < 20; i++)
        payload[i] = (uint8_t)(i * 7);
    const uint64_t program[2] = {0x1122334455667788ULL, 42}, other[2] = {7, 42};
    size_t size, len;
    const uint8_t *got;
    uint8_t *f = clrt__cache_file_encode(program, key, payload, sizeof payload, &size);
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(size, CLRT__CACHE_HEADER + 20 + CLRT__CACHE_TAG);
    ck_assert_int_eq(clrt__cache_file_decode(f, size, program, key, &got, &len), 0);
    ck_assert(len == 20 && memcmp(got, payload, 20) == 0);
    for (size_t i = 0; i < size; i++)
        for (int bit = 0; bit < 8; bit++) {
            f[i] ^= (uint8_t)(1 << bit);
            ck_assert_int_eq(clrt__cache_file_decode(f, size, program, key, &got, &len),
                             CLRT__CACHE_FILE_TAG);
            f[i] ^= (uint8_t)(1 << bit);
        }
    ck_assert_int_eq(clrt__cache_file_decode(f, size - 1, program, key, &got, &len),
                     CLRT__CACHE_FILE_TAG);
    ck_assert_int_eq(clrt__cache_file_decode(f, 39, program, key, &got, &len),
                     CLRT__CACHE_FILE_SIZE);
    ck_assert_int_eq(clrt__cache_file_decode(f, size, other, key, &got, &len),
                     CLRT__CACHE_FILE_OTHER);
    f[7] = '2'; /* format 02 */
    retag(f, size, key);
    ck_assert_int_eq(clrt__cache_file_decode(f, size, program, key, &got, &len),
                     CLRT__CACHE_FILE_MAGIC);
    f[7] = '3';
    f[24] ^= 1; /* size field */
    retag(f, size, key);
    ck_assert_int_eq(clrt__cache_file_decode(f, size, program, key, &got, &len),
                     CLRT__CACHE_FILE_LENGTH);
    free(f);
}
END_TEST

/* --- build failures --- */

static void copy_kernel(const char *name, const char *to_dir)
{
    const char *src = getenv("CLRT_SOURCE_DIR");
    ck_assert_msg(src != NULL, "CLRT_SOURCE_DIR is not set (ctest sets it)");
    char from[1024], to[1024];
    static char buf[1 << 20];
    snprintf(from, sizeof from, "%s/clkernels/%s", src, name);
    snprintf(to, sizeof to, "%s/%s", to_dir, name);
    size_t n = read_file(from, buf, sizeof buf);
    write_file(to, buf, n);
}

static const char broken_random[] =
    "__kernel void rand_uniform(__global float *out, ulong n, uint lo, uint hi)\n"
    "{\n"
    "    out[0] = clrt_no_such_identifier + lo;\n"
    "}\n";

START_TEST(build_failure_reports_the_log)
{
    char kdir[] = "/tmp/clrt-kernels-test-XXXXXX", cdir[] = "/tmp/clrt-cache-test-XXXXXX";
    fresh_dir(kdir);
    fresh_dir(cdir);
    copy_kernel("common.cl", kdir);
    char path[1024];
    snprintf(path, sizeof path, "%s/random.cl", kdir);
    write_file(path, broken_random, strlen(broken_random));
    setenv("CLRT_KERNEL_DIR", kdir, 1);
    setenv("CLRT_CACHE_DIR", cdir, 1);
    int64_t n = 10;
    for (int attempt = 0; attempt < 2; attempt++) { /* a failure is not cached */
        ck_assert_ptr_null(clrt_rand(tu_device(), 1, &n, 1));
        tu_assert_error(CLRT_EBUILD, "'random'", clrt_device_str(tu_device()), "build log",
                        "clrt_no_such_identifier", NULL);
    }
    char names[4][512];
    ck_assert_int_eq(list_files(cdir, names, 4), 0);
    /* A family missing from the folder is taken from the embedded sources
     * (with a warning; issue 25: every op failed), so the op works. */
    int64_t s[1] = {3};
    clrt_tensor *a = TU_NONNULL(clrt_full(tu_device(), CLRT_F32, 1, s, 1.5));
    clrt_tensor *b = TU_NONNULL(clrt_add(a, a));
    float *v = tu_read(b);
    for (int i = 0; i < 3; i++)
        ck_assert_float_eq(v[i], 3.0f);
    free(v);
    clrt_tensor_release(a);
    clrt_tensor_release(b);
    unsetenv("CLRT_KERNEL_DIR");
    remove_dir(kdir);
    remove_dir(cdir);
}
END_TEST

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "child") == 0)
        return child_main();
    Suite *s = suite_create("program_cache");
    TCase *tc = tu_tcase("program_cache");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, second_process_compiles_nothing);
    tcase_add_test(tc, truncated_files_are_rebuilt);
    tcase_add_test(tc, garbage_files_are_rebuilt);
    tcase_add_test(tc, empty_files_are_rebuilt);
    tcase_add_test(tc, foreign_files_are_rebuilt);
    tcase_add_test(tc, cache_off_writes_nothing);
    tcase_add_test(tc, build_failure_reports_the_log);
    tcase_add_test(tc, folder_and_files_are_private);
    tcase_add_loop_test(tc, cut_payload_with_consistent_header_is_rebuilt, 0, 2);
    tcase_add_test(tc, fifo_is_refused_without_blocking);
    tcase_add_loop_test(tc, untrusted_files_are_rebuilt, 0, 4);
    tcase_add_loop_test(tc, untrusted_folder_is_refused, 0, 2);
    tcase_add_test(tc, stale_temporary_files_are_removed);
    tcase_add_test(tc, siphash_known_answers);
    tcase_add_test(tc, file_format_checks);
    suite_add_tcase(s, tc);
    TCase *root = tu_tcase("needs_root");
    tcase_set_tags(root, TU_MAY_SKIP);
    tcase_set_timeout(root, 300);
    tcase_add_test(root, another_users_files_are_rebuilt);
    suite_add_tcase(s, root);
    return tu_run(s);
}
