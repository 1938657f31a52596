/*
 * svg.c: the line charts of svg.h.
 *
 * Geometry: a W x H canvas; the plot area leaves room for tick labels on
 * the left and below and for the legend on the right. Data maps linearly
 * onto it; the axis ranges are widened to whole multiples of a "nice"
 * step (1, 2 or 5 times a power of ten, about five steps per axis).
 */
#include "svg.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define W 760.0
#define H 400.0
#define LEFT 64.0
#define RIGHT 190.0
#define TOP 34.0
#define BOTTOM 48.0

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
#define N_PALETTE ((int)(sizeof(palette) / sizeof(palette[0])))

struct axis {
    double lo, hi, step;
};

static double nice_step(double range)
{
    double raw = range / 5.0, e, f;

    if (!(raw > 0))
        return 1.0;
    e = pow(10.0, floor(log10(raw)));
    f = raw / e;
    return (f < 1.5 ? 1.0 : f < 3.0 ? 2.0 : f < 7.0 ? 5.0 : 10.0) * e;
}

static void fit_axis(struct axis *a, double lo, double hi)
{
    if (!(hi > lo))
        hi = lo + 1.0;
    a->step = nice_step(hi - lo);
    a->lo = floor(lo / a->step) * a->step;
    a->hi = ceil(hi / a->step) * a->step;
}

/* The smallest and largest finite x (want_x) or y of every series. */
static void data_range(const struct svg_chart *c, int want_x, double *lo, double *hi)
{
    const struct svg_series *s;
    double v;
    int i, k, any = 0;

    *lo = 0;
    *hi = 0;
    for (k = 0; k < c->n_series; k++) {
        s = &c->series[k];
        for (i = 0; i < s->n; i++) {
            v = want_x ? s->x[i] : s->y[i];
            if (!isfinite(v))
                continue;
            *lo = !any || v < *lo ? v : *lo;
            *hi = !any || v > *hi ? v : *hi;
            any = 1;
        }
    }
}

static void put_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else
            fputc(*s, f);
    }
}

static double px(const struct axis *x, double v)
{
    return LEFT + (v - x->lo) / (x->hi - x->lo) * (W - LEFT - RIGHT);
}

static double py(const struct axis *y, double v)
{
    return H - BOTTOM - (v - y->lo) / (y->hi - y->lo) * (H - TOP - BOTTOM);
}

static void write_axes(FILE *f, const struct svg_chart *c, const struct axis *x,
                       const struct axis *y)
{
    double v;
    int i, n;

    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
            "stroke=\"#444\"/>\n", LEFT, TOP, W - LEFT - RIGHT, H - TOP - BOTTOM);
    n = (int)lround((x->hi - x->lo) / x->step);
    for (i = 0, v = x->lo; i <= n; v = x->lo + ++i * x->step)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n",
                px(x, v), TOP, px(x, v), H - BOTTOM, px(x, v), H - BOTTOM + 16, v);
    n = (int)lround((y->hi - y->lo) / y->step);
    for (i = 0, v = y->lo; i <= n; v = y->lo + ++i * y->step)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                LEFT, py(y, v), W - RIGHT, py(y, v), LEFT - 6, py(y, v) + 4, v);
    fprintf(f, "<text x=\"%.1f\" y=\"20\" text-anchor=\"middle\" font-size=\"15\">", W / 2);
    put_text(f, c->title);
    fprintf(f, "</text>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
            LEFT + (W - LEFT - RIGHT) / 2, H - 10);
    put_text(f, c->x_label);
    fprintf(f, "</text>\n<text x=\"14\" y=\"%.1f\" text-anchor=\"middle\" "
            "transform=\"rotate(-90 14 %.1f)\">", TOP + (H - TOP - BOTTOM) / 2,
            TOP + (H - TOP - BOTTOM) / 2);
    put_text(f, c->y_label);
    fputs("</text>\n", f);
}

static void write_series(FILE *f, const struct svg_series *s, int k, const struct axis *x,
                         const struct axis *y)
{
    const char *color = palette[(s->color % N_PALETTE + N_PALETTE) % N_PALETTE];
    double ly = TOP + 14 + 18 * k;
    int i;

    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"%s points=\"", color,
            s->dashed ? " stroke-dasharray=\"5,3\"" : "");
    for (i = 0; i < s->n; i++)
        if (isfinite(s->x[i]) && isfinite(s->y[i]))
            fprintf(f, "%s%.1f,%.1f", i ? " " : "", px(x, s->x[i]), py(y, s->y[i]));
    fprintf(f, "\"/>\n<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
            "stroke-width=\"2\"%s/><text x=\"%.1f\" y=\"%.1f\">", W - RIGHT + 12, ly,
            W - RIGHT + 36, ly, color, s->dashed ? " stroke-dasharray=\"5,3\"" : "",
            W - RIGHT + 42, ly + 4);
    put_text(f, s->name);
    fputs("</text>\n", f);
}

int svg_write(const char *path, const struct svg_chart *c, char *err, size_t len)
{
    struct axis x, y;
    double lo, hi;
    FILE *f;
    int k, rc;

    data_range(c, 1, &lo, &hi);
    fit_axis(&x, lo, hi);
    data_range(c, 0, &lo, &hi);
    if (c->y_max > c->y_min) {
        lo = c->y_min;
        hi = c->y_max;
    }
    fit_axis(&y, lo < 0 ? lo : 0, hi);
    f = fopen(path, "w");
    if (!f) {
        snprintf(err, len, "%s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/"
            "svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\""
            "sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" "
            "fill=\"white\"/>\n", W, H, W, H);
    write_axes(f, c, &x, &y);
    for (k = 0; k < c->n_series; k++)
        write_series(f, &c->series[k], k, &x, &y);
    fputs("</svg>\n", f);
    rc = ferror(f) | fclose(f);
    if (rc != 0)
        snprintf(err, len, "%s: write error", path);
    return rc ? -1 : 0;
}
