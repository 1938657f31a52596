/*
 * svg.h: a small line-chart writer (SVG 1.1, no scripts, no fonts to
 * fetch), enough for the replay report's plots.
 *
 * One chart: a title, axis labels, nice round ticks on both axes, and
 * series drawn as polylines with a legend on the right. Output depends
 * only on the input (fixed formats, no clock), so reports can be
 * compared byte for byte.
 */
#ifndef ALLOT_SVG_H
#define ALLOT_SVG_H

#include <stddef.h>

struct svg_series {
    const char *name;
    const double *x, *y;   /* [n], borrowed */
    int n;
    int color;             /* palette index */
    int dashed;
};

struct svg_chart {
    const char *title, *x_label, *y_label;
    double y_min, y_max;   /* y_max <= y_min: from the data (and 0) */
    const struct svg_series *series;   /* borrowed */
    int n_series;
};

/* Writes the chart to `path`. 0, or -1 with "PATH: reason" in err. */
int svg_write(const char *path, const struct svg_chart *c, char *err, size_t len);

#endif
