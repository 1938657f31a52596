/*
 * csv.c: the row reader of csv.h.
 *
 * A row is split in place: fields point into the line buffer, and a
 * quoted field is unescaped over itself (it only gets shorter).
 * Numbers are parsed by hand so that what is accepted is exact and the
 * same everywhere: decimal digits with an optional sign, and for
 * thousandths at most three digits after the point.
 */
#include "csv.h"
#include "grow.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int fail(struct csv *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->err, c->err_len, fmt, ap);
    va_end(ap);
    return -1;
}

static int push_field(struct csv *c, char *f)
{
    if (sim_grow(&c->fields, c->n_fields, &c->cap_fields, sizeof(*c->fields), 16) != 0)
        return fail(c, "%s: out of memory", c->file);
    c->fields[c->n_fields++] = f;
    return 0;
}

/* Unescapes the quoted field at *p in place; *p ends after it. */
static int unquote(struct csv *c, char **p)
{
    char *r = *p + 1, *w = *p;

    for (;;) {
        if (*r == '\0')
            return fail(c, "%s:%d: a quoted field is not closed", c->file, c->lineno);
        if (*r == '"' && r[1] == '"') {
            *w++ = '"';
            r += 2;
        } else if (*r == '"') {
            r++;
            break;
        } else {
            *w++ = *r++;
        }
    }
    if (*r != ',' && *r != '\0')
        return fail(c, "%s:%d: text after a closing quote", c->file, c->lineno);
    *w = '\0';
    *p = r;
    return 0;
}

/* Splits c->line into c->fields. */
static int split(struct csv *c)
{
    char *p = c->line, *start;

    c->n_fields = 0;
    for (;;) {
        start = p;
        if (*p == '"') {
            if (unquote(c, &p) != 0)
                return -1;
        } else {
            while (*p && *p != ',')
                p++;
        }
        if (push_field(c, start) != 0)
            return -1;
        if (*p == '\0')
            return 0;
        *p++ = '\0';
    }
}

/* Reads the next non-blank line into c->line: 1, 0 at the end, -1. */
static int read_line(struct csv *c)
{
    ssize_t n;

    for (;;) {
        errno = 0;
        n = getline(&c->line, &c->cap, c->fp);
        if (n < 0)
            return errno ? fail(c, "%s: %s", c->file, strerror(errno)) : 0;
        c->lineno++;
        while (n > 0 && (c->line[n - 1] == '\n' || c->line[n - 1] == '\r'))
            c->line[--n] = '\0';
        if (n > 0)
            return 1;
    }
}

static int read_header(struct csv *c)
{
    int rc = read_line(c), i;

    if (rc <= 0)
        return rc < 0 ? -1 : fail(c, "%s: the file is empty (it needs a header line)", c->file);
    if (split(c) != 0)
        return -1;
    c->header = calloc((size_t)c->n_fields, sizeof(*c->header));
    if (!c->header)
        return fail(c, "%s: out of memory", c->file);
    c->n_cols = c->n_fields;
    for (i = 0; i < c->n_cols; i++) {
        c->header[i] = strdup(c->fields[i]);
        if (!c->header[i])
            return fail(c, "%s: out of memory", c->file);
        if (csv_col(c, c->header[i]) != i)
            return fail(c, "%s:%d: column %s is named twice", c->file, c->lineno, c->header[i]);
    }
    return 0;
}

int csv_open(struct csv *c, const char *file, char *err, size_t len)
{
    memset(c, 0, sizeof(*c));
    c->file = file;
    c->err = err;
    c->err_len = len;
    c->fp = fopen(file, "r");
    if (!c->fp)
        return fail(c, "%s: %s", file, strerror(errno));
    return read_header(c);
}

void csv_close(struct csv *c)
{
    int i;

    if (c->fp)
        fclose(c->fp);
    for (i = 0; c->header && i < c->n_cols; i++)
        free(c->header[i]);
    free(c->header);
    free(c->fields);
    free(c->line);
    memset(c, 0, sizeof(*c));
}

int csv_next(struct csv *c)
{
    int rc = read_line(c);

    if (rc <= 0)
        return rc;
    if (split(c) != 0)
        return -1;
    if (c->n_fields != c->n_cols)
        return fail(c, "%s:%d: %d fields, the header names %d columns", c->file, c->lineno,
                    c->n_fields, c->n_cols);
    return 1;
}

int csv_col(const struct csv *c, const char *name)
{
    int i;

    for (i = 0; i < c->n_cols; i++)
        if (c->header[i] && strcmp(c->header[i], name) == 0)
            return i;
    return -1;
}

int csv_need(struct csv *c, const char *name)
{
    int col = csv_col(c, name);

    if (col < 0)
        fail(c, "%s:1: no column %s in the header", c->file, name);
    return col;
}

const char *csv_field(const struct csv *c, int col)
{
    return col >= 0 && col < c->n_fields ? c->fields[col] : "";
}

int csv_fail(struct csv *c, int col, const char *msg)
{
    return fail(c, "%s:%d: column %s: %s", c->file, c->lineno,
                col >= 0 && col < c->n_cols ? c->header[col] : "?", msg);
}

/* Digits of s into *v; *end after them. 0, or -1 when there are none or
 * the value passes limit. */
static int digits(const char *s, const char **end, int64_t limit, int64_t *v)
{
    const char *p = s;

    *v = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (*v > (limit - (*p - '0')) / 10)
            return -1;
        *v = *v * 10 + (*p - '0');
    }
    *end = p;
    return p == s ? -1 : 0;
}

/* A thousandths amount as a decimal ("2.5", "-1", "1000"). */
static void milli_text(char *buf, size_t len, int64_t v)
{
    int64_t a = v < 0 ? -v : v;

    if (a % 1000 == 0)
        snprintf(buf, len, "%lld", (long long)(v / 1000));
    else
        snprintf(buf, len, "%s%lld.%03lld", v < 0 ? "-" : "", (long long)(a / 1000),
                 (long long)(a % 1000));
}

static int out_of_range(struct csv *c, int col, int64_t min, int64_t max, int64_t scale)
{
    char msg[160], lo[32], hi[32];

    if (scale == 1) {
        snprintf(msg, sizeof(msg), "expected a whole number from %lld to %lld", (long long)min,
                 (long long)max);
    } else {
        milli_text(lo, sizeof(lo), min);
        milli_text(hi, sizeof(hi), max);
        snprintf(msg, sizeof(msg), "expected a number from %s to %s with at most 3 decimals", lo,
                 hi);
    }
    return csv_fail(c, col, msg);
}

int csv_int(struct csv *c, int col, int64_t min, int64_t max, int64_t *out)
{
    const char *s = csv_field(c, col), *end;
    int neg = *s == '-';
    int64_t v;

    if (digits(s + neg, &end, INT64_MAX, &v) != 0 || *end != '\0')
        return out_of_range(c, col, min, max, 1);
    v = neg ? -v : v;
    if (v < min || v > max)
        return out_of_range(c, col, min, max, 1);
    *out = v;
    return 0;
}

int csv_milli(struct csv *c, int col, int64_t min, int64_t max, int allow_minus_one,
              int64_t *out)
{
    const char *s = csv_field(c, col), *end;
    int64_t whole, frac = 0, scale = 100;

    if (allow_minus_one && strcmp(s, "-1") == 0) {
        *out = -1;
        return 0;
    }
    if (digits(s, &end, INT64_MAX / 1000 - 1, &whole) != 0)
        return out_of_range(c, col, min, max, 1000);
    if (*end == '.') {
        for (end++; *end >= '0' && *end <= '9' && scale > 0; end++, scale /= 10)
            frac += (*end - '0') * scale;
        if (scale == 100)
            return out_of_range(c, col, min, max, 1000);
    }
    if (*end != '\0' || whole * 1000 + frac < min || whole * 1000 + frac > max)
        return out_of_range(c, col, min, max, 1000);
    *out = whole * 1000 + frac;
    return 0;
}
