/* Command-line helpers the demos share (app.h): flags with values, numbers
 * in ranges, errors that end with the usage. */
#include "app.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int app_bad(const app_cli *c, const char *flag, const char *value, const char *why)
{
    fprintf(stderr, "%s: %s '%s': %s\n\n", c->prog, flag, value ? value : "", why);
    c->usage(stderr);
    return -1;
}

int app_parse_long(const app_cli *c, const char *flag, const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || *s == '\0' || *end != '\0' || errno || v < lo || v > hi) {
        char why[96];
        snprintf(why, sizeof why, "expected an integer from %ld to %ld", lo, hi);
        return app_bad(c, flag, s, why);
    }
    *out = v;
    return 0;
}

int app_parse_double(const app_cli *c, const char *flag, const char *s, double lo, double hi,
                     double *out)
{
    char *end;
    double v = s ? strtod(s, &end) : 0;
    if (!s || *s == '\0' || *end != '\0' || !(v >= lo && v <= hi)) {
        char why[96];
        snprintf(why, sizeof why, "expected a number from %g to %g", lo, hi);
        return app_bad(c, flag, s, why);
    }
    *out = v;
    return 0;
}

int app_flag_value(const app_cli *c, int argc, char **argv, int *i, char name[64],
                   const char **flag, const char **value)
{
    const char *arg = argv[*i], *eq = strchr(arg, '=');
    if (eq && eq - arg < 64) { /* --flag=value */
        memcpy(name, arg, (size_t)(eq - arg));
        name[eq - arg] = '\0';
        *flag = name;
        *value = eq + 1;
        return 0;
    }
    *flag = arg;
    for (int k = 0; c->valued_flags[k]; k++)
        if (strcmp(arg, c->valued_flags[k]) == 0) {
            if (*i + 1 >= argc)
                return app_bad(c, arg, NULL, "needs a value");
            *value = argv[++*i];
            return 0;
        }
    return app_bad(c, "unknown option", arg, "see the list below");
}
