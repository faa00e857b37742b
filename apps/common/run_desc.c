/* A run's description for checkpoints (app.h): key/value strings a resumed
 * run must match. */
#include "app.h"

#include <stdarg.h>

void app_run_put(app_run_desc *r, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->values[r->n], sizeof r->values[r->n], fmt, ap);
    va_end(ap);
    app_run_pair(r, key, r->values[r->n]);
}

void app_run_pair(app_run_desc *r, const char *key, const char *value)
{
    r->pairs[2 * r->n] = key;
    r->pairs[2 * r->n + 1] = value;
    r->n++;
}
