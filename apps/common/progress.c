/* Per-epoch progress: a bar redrawn in place on a terminal, nothing but the
 * summary lines otherwise (logs stay readable). */
#include "app.h"

#include <unistd.h>

void app_progress_report(void *ctx, clrt_phase phase, int epoch, int64_t done, int64_t total)
{
    app_progress *p = ctx;
    if (!p->tty || total <= 0)
        return;
    int width = 30, filled = (int)(width * done / total);
    int percent = (int)(100 * done / total);
    if (percent == p->last_percent && done != total)
        return; /* redraw only when the bar changes */
    p->last_percent = percent;
    fprintf(stderr, "\r%-8s epoch %-3d %s [", p->device, epoch,
            phase == CLRT_PHASE_TRAIN ? "train" : "test ");
    for (int i = 0; i < width; i++)
        fputc(i < filled ? '#' : '.', stderr);
    fprintf(stderr, "] %3d%% %lld/%lld", percent, (long long)done, (long long)total);
    fflush(stderr);
}

void app_progress_clear(app_progress *p)
{
    if (p->tty) {
        fprintf(stderr, "\r%*s\r", 78, "");
        fflush(stderr);
    }
    p->last_percent = -1;
}

void app_progress_init(app_progress *p, const char *device)
{
    p->tty = isatty(STDERR_FILENO);
    p->last_percent = -1;
    p->device = device;
}
