/* --plot FILE.svg: train and test loss (left panel) and accuracy (right
 * panel) per epoch as an SVG line chart with axes, ticks and a legend, the
 * picture d2l's training loop draws; with --compare or --batch-sweep, their
 * samples per second as a bar chart. */
#include "cnn.h"

#include <clrt/file.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#define W 420.0 /* one panel */
#define H 300.0
#define L 55.0 /* margins: left, right, top, bottom */
#define R 15.0
#define T 30.0
#define B 45.0

typedef struct {
    FILE *f;
    double x0;         /* panel's left edge */
    double xmax, ymax; /* data ranges: epochs 1..xmax, values 0..ymax */
} panel;

static double px(const panel *p, double x)
{
    return p->x0 + L + (p->xmax > 1 ? (x - 1) / (p->xmax - 1) : 0.5) * (W - L - R);
}
static double py(const panel *p, double y) { return T + (1 - y / p->ymax) * (H - T - B); }

/* A tick step of 1, 2 or 5 times a power of ten giving about 5 ticks. */
static double nice_step(double range)
{
    double raw = range / 5, mag = pow(10, floor(log10(raw)));
    double n = raw / mag;
    return (n < 1.5 ? 1 : n < 3.5 ? 2 : n < 7.5 ? 5 : 10) * mag;
}

static void axes(const panel *p, const char *title)
{
    FILE *f = p->f;
    fprintf(f, "<g font-family=\"sans-serif\" font-size=\"12\">\n");
    fprintf(f, "<text x=\"%.1f\" y=\"18\" text-anchor=\"middle\" font-size=\"14\">%s</text>\n",
            p->x0 + (L + W - R) / 2, title);
    fprintf(f, "<path d=\"M%.1f %.1f V%.1f H%.1f\" stroke=\"black\" fill=\"none\"/>\n",
            px(p, 1) - 0, T, H - B, p->x0 + W - R);
    double step = p->xmax > 1 ? ceil(nice_step(p->xmax - 1)) : 1;
    for (double x = 1; x <= p->xmax + 1e-9; x += step)
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n",
                px(p, x), H - B, px(p, x), H - B + 5, px(p, x), H - B + 18, x);
    double ys = nice_step(p->ymax);
    for (double y = 0; y <= p->ymax + 1e-9; y += ys)
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                p->x0 + L, py(p, y), p->x0 + W - R, py(p, y), p->x0 + L - 6, py(p, y) + 4, y);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">epoch</text>\n</g>\n",
            p->x0 + (L + W - R) / 2, H - 8);
}

/* One series: a polyline with a marker per epoch and a legend entry. */
static void series(const panel *p, const clrt_epoch_stats *s, int n, size_t field, const char *name,
                   const char *color, int k)
{
    FILE *f = p->f;
    fprintf(f,
            "<g class=\"series\" data-name=\"%s\" stroke=\"%s\" fill=\"%s\">\n<polyline points=\"",
            name, color, color);
    for (int i = 0; i < n; i++) {
        double v = *(const double *)((const char *)&s[i] + field);
        if (isfinite(v))
            fprintf(f, "%.1f,%.1f ", px(p, s[i].epoch - s[0].epoch + 1), py(p, v));
    }
    fprintf(f, "\" fill=\"none\" stroke-width=\"2\"/>\n");
    for (int i = 0; i < n; i++) {
        double v = *(const double *)((const char *)&s[i] + field);
        if (isfinite(v))
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>\n",
                    px(p, s[i].epoch - s[0].epoch + 1), py(p, v));
    }
    double lx = p->x0 + W - R - 110, ly = T + 12 + 16 * k;
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke-width=\"2\"/>"
            "<text x=\"%.1f\" y=\"%.1f\" stroke=\"none\" fill=\"black\" font-family=\"sans-serif\" "
            "font-size=\"12\">%s</text>\n</g>\n",
            lx, ly, lx + 20, ly, lx + 26, ly + 4, name);
}

/* An SVG drawn in memory, then written in one go as the library writes
 * its files (clrt/file.h): a full disk or a bad path leaves no cut-off or
 * empty file behind. */
typedef struct {
    FILE *f;
    char *text;
    size_t len;
} svg;

static FILE *svg_open(svg *s, double w, double h)
{
    s->text = NULL;
    s->f = open_memstream(&s->text, &s->len);
    if (!s->f) {
        fprintf(stderr, "clrt-cnn: --plot: out of memory\n");
        return NULL;
    }
    fprintf(s->f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
            "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            w, h, w, h);
    return s->f;
}

static int svg_close(svg *s, const char *path)
{
    fprintf(s->f, "</svg>\n");
    int bad = ferror(s->f) | fclose(s->f);
    if (bad)
        fprintf(stderr, "clrt-cnn: --plot: out of memory\n");
    else if (clrt_output_write(path, s->text, s->len, "--plot") != CLRT_OK)
        fprintf(stderr, "clrt-cnn: %s\n", clrt_last_error()), bad = 1;
    free(s->text);
    return bad != 0;
}

int cnn_plot_bars(const char *path, const char *title, const char *const *labels,
                  const double *values, int n)
{
    svg out;
    FILE *f = svg_open(&out, W, H);
    if (!f)
        return 1;
    double top = 0;
    for (int i = 0; i < n; i++)
        top = fmax(top, values[i]);
    panel p = {f, 0, 1, top > 0 ? top * 1.15 : 1};
    double slot = (W - L - R) / n, ys = nice_step(p.ymax);
    fprintf(f, "<g font-family=\"sans-serif\" font-size=\"12\">\n");
    fprintf(f, "<text x=\"%.1f\" y=\"18\" text-anchor=\"middle\" font-size=\"14\">%s</text>\n",
            (L + W - R) / 2, title);
    for (double y = 0; y <= p.ymax + 1e-9; y += ys)
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                L, py(&p, y), W - R, py(&p, y), L - 6, py(&p, y) + 4, y);
    fprintf(f, "<path d=\"M%.1f %.1f V%.1f H%.1f\" stroke=\"black\" fill=\"none\"/>\n", L, T, H - B,
            W - R);
    for (int i = 0; i < n; i++) {
        double x = L + slot * i + slot * 0.15, y = py(&p, values[i]);
        fprintf(f,
                "<rect class=\"bar\" data-label=\"%s\" data-value=\"%g\" x=\"%.1f\" y=\"%.1f\" "
                "width=\"%.1f\" height=\"%.1f\" fill=\"#1f77b4\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.0f</text>\n",
                labels[i], values[i], x, y, slot * 0.7, H - B - y, x + slot * 0.35, H - B + 18,
                labels[i], x + slot * 0.35, y - 5, values[i]);
    }
    fprintf(f, "</g>\n");
    return svg_close(&out, path);
}

int cnn_plot(const char *path, const clrt_epoch_stats *s, int n)
{
    svg out;
    FILE *f = svg_open(&out, 2 * W, H);
    if (!f)
        return 1;
    double top = 0;
    for (int i = 0; i < n; i++)
        top = fmax(top, fmax(s[i].train_loss, isfinite(s[i].test_loss) ? s[i].test_loss : 0));
    panel loss = {f, 0, n, top > 0 ? top * 1.1 : 1}, acc = {f, W, n, 1.0};
    axes(&loss, "loss");
    series(&loss, s, n, offsetof(clrt_epoch_stats, train_loss), "train loss", "#1f77b4", 0);
    series(&loss, s, n, offsetof(clrt_epoch_stats, test_loss), "test loss", "#ff7f0e", 1);
    axes(&acc, "accuracy");
    series(&acc, s, n, offsetof(clrt_epoch_stats, train_acc), "train acc", "#2ca02c", 0);
    series(&acc, s, n, offsetof(clrt_epoch_stats, test_acc), "test acc", "#d62728", 1);
    return svg_close(&out, path);
}
