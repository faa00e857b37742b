/* Reading and writing files, one way each (file_internal.h): readers open
 * without blocking and check what they opened before reading; writers go
 * through a temporary file that is renamed only over a regular file or
 * nothing. */
#include "runtime/core/file_internal.h"
#include "runtime/core/alloc_internal.h"
#include "runtime/core/error_internal.h"
#include <clrt/file.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A temporary file whose writer cannot be checked (another host's) is
 * stale after this long; no live writer of a checkpoint or trace takes it. */
#define STALE_ANY_S 3600

void (*clrt__out_hook)(const char *step, const char *path) = NULL;

static void hook(const char *step, const char *path)
{
    if (clrt__out_hook)
        clrt__out_hook(step, path);
}

static const char *kind_of(mode_t m)
{
    return S_ISLNK(m)    ? "symbolic link"
           : S_ISFIFO(m) ? "FIFO"
           : S_ISCHR(m)  ? "character device"
           : S_ISBLK(m)  ? "block device"
           : S_ISDIR(m)  ? "folder"
           : S_ISSOCK(m) ? "socket"
                         : "special file";
}

int clrt__read_full(int fd, void *buf, size_t n)
{
    for (size_t done = 0; done < n;) {
        ssize_t r = read(fd, (char *)buf + done, n - done);
        if (r <= 0 && !(r < 0 && errno == EINTR))
            return 0;
        done += r > 0 ? (size_t)r : 0;
    }
    return 1;
}

int clrt__pread_full(int fd, void *buf, size_t n, uint64_t off)
{
    for (size_t done = 0; done < n;) {
        ssize_t r = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));
        if (r <= 0 && !(r < 0 && errno == EINTR))
            return 0;
        done += r > 0 ? (size_t)r : 0;
    }
    return 1;
}

int clrt__write_full(int fd, const void *buf, size_t n)
{
    for (size_t done = 0; done < n;) {
        ssize_t r = write(fd, (const char *)buf + done, n - done);
        if (r <= 0 && !(r < 0 && errno == EINTR))
            return 0;
        done += r > 0 ? (size_t)r : 0;
    }
    return 1;
}

int clrt__file_open_read(const char *path, uint64_t max, const char *what, uint64_t *size)
{
    struct stat st;
    if (!path || !*path) {
        clrt__fail(CLRT_EINVAL, "%s: no file named (the path is %s)", what,
                   path ? "an empty string" : "NULL");
        return -1;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), err = errno;
    if (fd < 0) {
        clrt__fail(CLRT_EIO, "%s: %s: cannot open: %s", what, path, strerror(err));
        return -1;
    }
    if (fstat(fd, &st) != 0) {
        clrt__fail(CLRT_EIO, "%s: %s: fstat: %s", what, path, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        clrt__fail(CLRT_EIO, "%s: %s: not a regular file (a %s)", what, path, kind_of(st.st_mode));
    } else if ((uint64_t)st.st_size > max) {
        clrt__fail(CLRT_EFORMAT, "%s: %s: %llu bytes, more than the %llu it can hold", what, path,
                   (unsigned long long)st.st_size, (unsigned long long)max);
    } else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
        clrt__fail(CLRT_EIO, "%s: %s: fcntl: %s", what, path, strerror(errno));
    } else {
        *size = (uint64_t)st.st_size;
        return fd;
    }
    close(fd);
    return -1;
}

char *clrt__file_read_text(const char *path, uint64_t max, const char *what, size_t *size)
{
    uint64_t n = 0;
    int fd = clrt__file_open_read(path, max, what, &n);
    char *buf = fd >= 0 ? clrt__malloc((size_t)n + 1) : NULL;
    if (fd >= 0 && !buf)
        clrt__fail(CLRT_ENOMEM, "%s: out of host memory for %s", what, path);
    else if (buf && !clrt__read_full(fd, buf, (size_t)n)) {
        clrt__fail(CLRT_EIO, "%s: %s: read failed: %s", what, path,
                   errno ? strerror(errno) : "early end of file");
        free(buf);
        buf = NULL;
    }
    if (fd >= 0)
        close(fd);
    if (buf) {
        buf[n] = '\0';
        *size = (size_t)n;
    }
    return buf;
}

/* --- outputs --- */

/* path's folder into dir ("." for a bare name). */
static void folder_of(const char *path, char *dir, size_t cap)
{
    const char *slash = strrchr(path, '/');
    snprintf(dir, cap, "%.*s", slash ? (int)(slash - path + (slash == path)) : 1,
             slash ? path : ".");
}

/* This host's name as it goes into temporary file names. */
static void host_tag(char *out, size_t cap)
{
    char h[256] = "";
    size_t n = 0;
    if (gethostname(h, sizeof h - 1) != 0)
        h[0] = '\0';
    for (const char *p = h; *p && *p != '.' && n + 1 < cap && n < 32; p++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '_';
        out[n++] = ok ? c : '_';
    }
    out[n] = '\0';
}

/* "<path>.tmp-<pid>@<host>-XXXXXX", the template for mkstemp. */
static int tmp_template(char *out, size_t cap, const char *path)
{
    char host[40];
    host_tag(host, sizeof host);
    int n = snprintf(out, cap, "%s.tmp-%ld@%s-XXXXXX", path, (long)getpid(), host);
    return n > 0 && (size_t)n < cap;
}

/* The path must be given, fit, and have nothing but a regular file at it. */
static clrt_status check_target(const char *path, const char *what)
{
    struct stat st;
    if (!path || !*path)
        return clrt__fail(CLRT_EINVAL, "%s: no path given (%s)", what,
                          path ? "an empty string" : "NULL");
    if (strlen(path) + 64 >= CLRT__PATH_CAP)
        return clrt__fail(CLRT_EINVAL, "%s: path too long: %s", what, path);
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return clrt__fail(CLRT_EIO,
                          "%s: %s is a %s; clrt writes only where a regular file or nothing "
                          "stands, and leaves it as it is",
                          what, path, kind_of(st.st_mode));
    return CLRT_OK;
}

/* Makes the temporary file for path into tmp; its descriptor or -1 + error. */
static int make_tmp(const char *path, const char *what, char *tmp, size_t cap)
{
    char dir[CLRT__PATH_CAP];
    if (!tmp_template(tmp, cap, path)) {
        clrt__fail(CLRT_EINVAL, "%s: path too long: %s", what, path);
        return -1;
    }
    int fd = mkostemp(tmp, O_CLOEXEC), err = errno;
    if (fd < 0) {
        folder_of(path, dir, sizeof dir);
        if (err == ENOENT || err == ENOTDIR)
            clrt__fail(CLRT_EIO, "%s: cannot write %s: its folder %s does not exist", what, path,
                       dir);
        else
            clrt__fail(CLRT_EIO, "%s: cannot write %s: cannot create a file in %s: %s", what, path,
                       dir, strerror(err));
        tmp[0] = '\0';
    }
    return fd;
}

clrt_status clrt__out_check(const char *path, const char *what)
{
    char tmp[CLRT__PATH_CAP];
    clrt_status st = check_target(path, what);
    int fd = st == CLRT_OK ? make_tmp(path, what, tmp, sizeof tmp) : -1;
    if (fd < 0)
        return st != CLRT_OK ? st : clrt_last_status();
    close(fd);
    unlink(tmp);
    return CLRT_OK;
}

clrt_status clrt__out_open(clrt__out_file *f, const char *path, const char *what)
{
    memset(f, 0, sizeof *f);
    f->fd = -1;
    f->what = what;
    clrt_status st = check_target(path, what);
    if (st != CLRT_OK)
        return st;
    snprintf(f->path, sizeof f->path, "%s", path);
    clrt__out_remove_stale(path);
    f->fd = make_tmp(path, what, f->tmp, sizeof f->tmp);
    if (f->fd < 0)
        return clrt_last_status();
    hook("create", f->path);
    return CLRT_OK;
}

static clrt_status write_error(clrt__out_file *f, const char *step, int err)
{
    if (f->st == CLRT_OK)
        f->st = clrt__fail(CLRT_EIO, "%s: %s: %s failed: %s", f->what, f->path, step,
                           err ? strerror(err) : "unknown error");
    return f->st;
}

clrt_status clrt__out_write(clrt__out_file *f, const void *p, size_t n)
{
    if (f->st != CLRT_OK)
        return f->st;
    if (!clrt__write_full(f->fd, p, n))
        return write_error(f, "write", errno);
    hook("write", f->path);
    return CLRT_OK;
}

FILE *clrt__out_stream(clrt__out_file *f)
{
    if (f->st == CLRT_OK && !f->stream && !(f->stream = fdopen(f->fd, "w")))
        write_error(f, "fdopen", errno);
    return f->st == CLRT_OK ? f->stream : NULL;
}

clrt_status clrt__out_finish(clrt__out_file *f)
{
    if (f->st == CLRT_OK && f->stream && (fflush(f->stream) != 0 || ferror(f->stream)))
        write_error(f, "write", errno);
    if (f->st == CLRT_OK && fsync(f->fd) != 0)
        write_error(f, "fsync", errno);
    if (f->st == CLRT_OK)
        hook("sync", f->path);
    if (f->st == CLRT_OK && fchmod(f->fd, 0644) != 0)
        write_error(f, "fchmod", errno);
    int closed = f->stream ? fclose(f->stream) : close(f->fd);
    if (closed != 0)
        write_error(f, "close", errno);
    f->stream = NULL;
    f->fd = -1;
    if (f->st == CLRT_OK)
        hook("close", f->path);
    else
        clrt__out_abort(f);
    return f->st;
}

/* Syncs the folder holding path, so the rename itself is durable. */
static void sync_folder(const char *path)
{
    char dir[CLRT__PATH_CAP];
    folder_of(path, dir, sizeof dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd); /* best effort: some file systems refuse it on folders */
        close(fd);
    }
}

clrt_status clrt__out_rename(clrt__out_file *f)
{
    if (f->st == CLRT_OK && f->fd >= 0)
        f->st = clrt__fail(CLRT_ESTATE, "%s: %s: renamed before it was finished", f->what, f->path);
    if (f->st == CLRT_OK)
        f->st = check_target(f->path, f->what); /* something may have appeared meanwhile */
    if (f->st == CLRT_OK && rename(f->tmp, f->path) != 0)
        write_error(f, "rename", errno);
    if (f->st != CLRT_OK) {
        clrt__out_abort(f);
        return f->st;
    }
    f->tmp[0] = '\0';
    hook("rename", f->path);
    sync_folder(f->path);
    hook("folder", f->path);
    return CLRT_OK;
}

clrt_status clrt__out_commit(clrt__out_file *f)
{
    clrt_status st = clrt__out_finish(f);
    return st == CLRT_OK ? clrt__out_rename(f) : st;
}

void clrt__out_abort(clrt__out_file *f)
{
    if (f->stream)
        fclose(f->stream);
    else if (f->fd >= 0)
        close(f->fd);
    f->stream = NULL;
    f->fd = -1;
    if (f->tmp[0])
        unlink(f->tmp);
    f->tmp[0] = '\0';
}

/* --- temporary files of a path --- */

/* Whether the temporary file `name` (in dir_fd, of a path whose base name
 * is `base`) was left by a writer that is gone. */
static int stale(int dir_fd, const char *name, size_t base_len)
{
    struct stat st;
    char host[40], *end;
    if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
        return 0;
    if (difftime(time(NULL), st.st_mtime) >= STALE_ANY_S)
        return 1;
    const char *p = name + base_len + strlen(".tmp-");
    long pid = strtol(p, &end, 10);
    size_t left = strlen(end);
    host_tag(host, sizeof host);
    if (pid <= 0 || *end != '@' || left < 8 || left - 8 != strlen(host) ||
        strncmp(end + 1, host, left - 8) != 0)
        return 0; /* another host's writer, or no pid: only by age */
    return pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Calls fn on each temporary file of path, or only the stale ones. */
static int each_temporary(const char *path, int only_stale, void (*fn)(const char *, void *),
                          void *ctx)
{
    char dir[CLRT__PATH_CAP], prefix[CLRT__PATH_CAP], full[2 * CLRT__PATH_CAP];
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    folder_of(path, dir, sizeof dir);
    int n = snprintf(prefix, sizeof prefix, "%s.tmp-", base), count = 0;
    DIR *d = n > 0 && (size_t)n < sizeof prefix ? opendir(dir) : NULL;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, prefix, (size_t)n) != 0 ||
            (only_stale && !stale(dirfd(d), e->d_name, strlen(base))))
            continue;
        snprintf(full, sizeof full, "%.*s%s", slash ? (int)(slash - path + 1) : 0, path, e->d_name);
        fn(full, ctx);
        count++;
    }
    if (d)
        closedir(d);
    return count;
}

int clrt__out_temporaries(const char *path, void (*fn)(const char *tmp, void *ctx), void *ctx)
{
    return path ? each_temporary(path, 0, fn, ctx) : 0;
}

static void remove_one(const char *tmp, void *ctx)
{
    (void)ctx;
    unlink(tmp);
}

void clrt__out_remove_stale(const char *path)
{
    if (path)
        each_temporary(path, 1, remove_one, NULL);
}

/* --- the public calls (clrt/file.h) --- */

clrt_status clrt_output_check(const char *path, const char *what)
{
    return clrt__out_check(path, what ? what : "clrt_output_check");
}

clrt_status clrt_output_write(const char *path, const void *data, size_t size, const char *what)
{
    clrt__out_file f;
    what = what ? what : "clrt_output_write";
    if (!data && size > 0)
        return clrt__fail(CLRT_EINVAL, "%s: data is NULL", what);
    clrt_status st = clrt__out_open(&f, path, what);
    if (st == CLRT_OK && size > 0)
        st = clrt__out_write(&f, data, size);
    if (st == CLRT_OK)
        return clrt__out_commit(&f);
    clrt__out_abort(&f);
    return st;
}
