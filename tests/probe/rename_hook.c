/* An LD_PRELOAD library for scripts/probe.py: kills the process with
 * SIGKILL at a chosen rename, as a power cut or `kill -9` would, so that
 * what a save leaves behind can be checked. Settings:
 *   PROBE_KILL_BEFORE_RENAME=n  killed at the n-th rename, before it
 *   PROBE_KILL_AFTER_RENAME=n   killed just after the n-th rename
 *   PROBE_RENAME_SUFFIX=s       count only renames onto paths ending in s */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int counted(const char *to)
{
    const char *suffix = getenv("PROBE_RENAME_SUFFIX");
    size_t n = suffix ? strlen(suffix) : 0, m = strlen(to);
    return !suffix || (m >= n && strcmp(to + m - n, suffix) == 0);
}

static long setting(const char *name)
{
    const char *v = getenv(name);
    return v ? strtol(v, NULL, 10) : 0;
}

int rename(const char *from, const char *to)
{
    static long calls;
    int (*real)(const char *, const char *) =
        (int (*)(const char *, const char *))(uintptr_t)dlsym(RTLD_NEXT, "rename");
    int mine = counted(to) ? (int)++calls : 0;
    if (mine && mine == setting("PROBE_KILL_BEFORE_RENAME"))
        raise(SIGKILL);
    int rc = real(from, to);
    if (mine && mine == setting("PROBE_KILL_AFTER_RENAME"))
        raise(SIGKILL);
    return rc;
}
