/* Other programs for clrt-smi --tune (smi.h): CLBlast's tuners and clrt-smi
 * itself as a timing child, started with fork and execve, their output
 * into files, never through a shell. The driver's threads run beside this
 * one, so the child makes only async-signal-safe calls before execve: the
 * path and the environment are made first. */
#include "smi.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int smi_find_program(const char *program, char *out, size_t cap)
{
    struct stat st;
    if (strchr(program, '/'))
        return snprintf(out, cap, "%s", program) < (int)cap && access(out, X_OK) == 0;
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        size_t n = strcspn(p, ":");
        if (n > 0 && snprintf(out, cap, "%.*s/%s", (int)n, p, program) < (int)cap &&
            stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return 1;
        p += n + (p[n] == ':');
    }
    return 0;
}

/* environ with each "NAME=VALUE" of set in place of NAME's old value:
 * malloc'ed (the strings are borrowed), or NULL. */
static char **environment(const char *const *set)
{
    size_t n = 0, m = 0, k = 0;
    while (environ[n])
        n++;
    while (set && set[m])
        m++;
    char **env = malloc((n + m + 1) * sizeof *env);
    for (size_t i = 0; env && i < n; i++) {
        int replaced = 0;
        for (size_t j = 0; j < m; j++)
            replaced |= strncmp(environ[i], set[j], strcspn(set[j], "=") + 1) == 0;
        if (!replaced)
            env[k++] = environ[i];
    }
    for (size_t j = 0; env && j < m; j++)
        env[k++] = (char *)set[j];
    if (env)
        env[k] = NULL;
    return env;
}

int smi_run(char *const argv[], const char *dir, const char *const *set, const char *log)
{
    char program[PATH_MAX];
    if (!smi_find_program(argv[0], program, sizeof program)) {
        errno = ENOENT;
        return -1;
    }
    char **env = environment(set);
    if (!env)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0 && chdir(dir) == 0 && dup2(fd, STDOUT_FILENO) >= 0 &&
            dup2(fd, STDERR_FILENO) >= 0)
            execve(program, argv, env);
        _exit(127);
    }
    free(env);
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (pid < 0)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

char *smi_read_file(const char *path, size_t max)
{
    FILE *f = fopen(path, "rb");
    char *text = f ? malloc(max + 1) : NULL;
    size_t n = text ? fread(text, 1, max, f) : 0;
    if (f)
        fclose(f);
    if (text)
        text[n] = '\0';
    return text;
}
