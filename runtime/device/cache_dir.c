/* The program cache's folder, treated as a trust boundary (what it trusts:
 * cache_internal.h). Files are opened relative to the folder, never
 * following links and never blocking (a FIFO in the folder once hung the
 * process in fopen), checked with fstat before a byte is read, and written
 * to a temporary file that is renamed into place. */
#include "runtime/device/cache_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/core/env_internal.h"
#include "runtime/core/file_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A temporary file is stale when it is older than this and its writer is
 * gone, or older than STALE_ANY_S whatever its pid says (another host's or
 * another pid namespace's writer, or a reused pid). Writing a file takes
 * milliseconds, so no live writer is ever this slow. */
#define STALE_S 60
#define STALE_ANY_S 3600

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int dir_fd = -1; /* open for the life of the process */
static uint8_t mac_key[CLRT__CACHE_KEY_BYTES];
static atomic_ulong tmp_serial;

static void refuse(const char *dir, const char *why)
{
    fprintf(stderr,
            "clrt: warning: not using the program cache folder %s: %s; kernels will be compiled "
            "in each process (set CLRT_CACHE_DIR to a private folder of yours, or CLRT_CACHE=0)\n",
            dir, why);
}

/* Ours, and no one else may write to it. */
static int owned_private(const struct stat *st)
{
    return st->st_uid == geteuid() && (st->st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

/* mkdir -p, each folder it makes 0700 (the XDG base directory rule). */
static int make_dirs(const char *dir)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return ENAMETOOLONG;
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST)
            return errno;
        *p = '/';
    }
    return mkdir(path, 0700) != 0 && errno != EEXIST ? errno : 0;
}

/* Opens the folder if it is ours and no one else may write to it. */
static int open_folder(const char *dir)
{
    char why[200];
    struct stat st;
    int err = make_dirs(dir), fd = -1;
    if (!err && (fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        err = errno;
    if (!err && fstat(fd, &st) != 0)
        err = errno;
    if (err)
        snprintf(why, sizeof why, "%s", strerror(err));
    else if (st.st_uid != geteuid())
        snprintf(why, sizeof why, "it belongs to uid %u, not to this user (uid %u)",
                 (unsigned)st.st_uid, (unsigned)geteuid());
    else if (!owned_private(&st))
        snprintf(why, sizeof why, "others may write to it (mode %03o; chmod 700 it)",
                 (unsigned)(st.st_mode & 0777));
    else
        return fd;
    if (fd >= 0)
        close(fd);
    refuse(dir, why);
    return -1;
}

/* Reads the key file, if it is a regular file of ours that no one else may
 * read or write, of the right size. */
static int read_key(int dir)
{
    int fd = openat(dir, "key", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return 0;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
             (st.st_mode & 077) == 0 && st.st_size == CLRT__CACHE_KEY_BYTES &&
             clrt__read_full(fd, mac_key, sizeof mac_key);
    close(fd);
    return ok;
}

/* A new random key, published with link() so that of two processes making
 * one at once, one wins and both use its key. */
static int make_key(int dir)
{
    uint8_t fresh[CLRT__CACHE_KEY_BYTES];
    char tmp[64];
    if (getrandom(fresh, sizeof fresh, 0) != (ssize_t)sizeof fresh)
        return 0;
    snprintf(tmp, sizeof tmp, "key.tmp.%ld", (long)getpid());
    unlinkat(dir, tmp, 0); /* ours: a writer with our pid is no longer alive */
    int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    int ok = fd >= 0 && clrt__write_full(fd, fresh, sizeof fresh);
    if (fd >= 0 && close(fd) != 0)
        ok = 0;
    if (ok && linkat(dir, tmp, dir, "key", 0) != 0 && errno != EEXIST)
        ok = 0;
    unlinkat(dir, tmp, 0);
    return ok && read_key(dir);
}

/* The pid in "<name>.tmp.<pid>[.<n>]", or 0 if name is not one of ours. */
static long tmp_pid(const char *name)
{
    const char *t = strstr(name, ".tmp.");
    char *end;
    if (!t || t[5] < '0' || t[5] > '9')
        return 0;
    long pid = strtol(t + 5, &end, 10);
    return (*end == '\0' || *end == '.') && pid > 0 && pid <= 0x7fffffffL ? pid : 0;
}

/* Removes temporary files left by writers that were killed mid-write. */
static void remove_stale(int dir)
{
    int fd = fcntl(dir, F_DUPFD_CLOEXEC, 0);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    time_t now = time(NULL);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        long pid = tmp_pid(e->d_name);
        struct stat st;
        if (pid == 0 || fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        double age = difftime(now, st.st_mtime);
        int gone = kill((pid_t)pid, 0) != 0 && errno == ESRCH;
        if (age >= STALE_S && (gone || age >= STALE_ANY_S))
            unlinkat(dir, e->d_name, 0);
    }
    closedir(d);
}

static void prepare(void)
{
    const char *dir = clrt__env()->cache_dir;
    int fd = dir ? open_folder(dir) : -1;
    if (fd < 0)
        return;
    if (!read_key(fd)) {
        unlinkat(fd, "key", 0); /* missing, or not private: a new one */
        if (!make_key(fd)) {
            refuse(dir, "its key file cannot be read or made");
            close(fd);
            return;
        }
    }
    remove_stale(fd);
    dir_fd = fd;
}

const uint8_t *clrt__cache_dir_key(void)
{
    pthread_once(&once, prepare);
    return dir_fd >= 0 ? mac_key : NULL;
}

uint8_t *clrt__cache_dir_read(const char *name, size_t max, size_t *size)
{
    if (!clrt__cache_dir_key())
        return NULL;
    int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    uint8_t *buf = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && owned_private(&st) && st.st_size > 0 &&
        (uint64_t)st.st_size <= max && (buf = clrt__malloc((size_t)st.st_size)) != NULL &&
        clrt__read_full(fd, buf, (size_t)st.st_size)) {
        *size = (size_t)st.st_size;
    } else {
        free(buf);
        buf = NULL;
    }
    close(fd);
    return buf;
}

void clrt__cache_dir_write(const char *name, const void *data, size_t size)
{
    char tmp[512];
    if (!clrt__cache_dir_key() || snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%lu", name, (long)getpid(),
                                           atomic_fetch_add(&tmp_serial, 1)) >= (int)sizeof tmp)
        return;
    int fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST && unlinkat(dir_fd, tmp, 0) == 0) /* a dead writer's: our pid */
        fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    int ok = clrt__write_full(fd, data, size);
    if (close(fd) != 0)
        ok = 0;
    if (!ok || renameat(dir_fd, tmp, dir_fd, name) != 0)
        unlinkat(dir_fd, tmp, 0);
}
