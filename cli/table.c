/*
 * table.c: rendering the client's text tables (table.h gives the look).
 *
 * The same cells print as CSV (RFC 4180) for --csv.
 *
 * Invariants:
 *   1. cells holds n_cells strings, row-major, the titles first; a row
 *      being filled may be short, and prints with empty cells.
 *   2. Widths count UTF-8 characters, so the rule of U+2500 lines up with
 *      the titles in any terminal.
 */
#include "table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define GAP 3
#define RULE "\xe2\x94\x80" /* U+2500, box drawings light horizontal */

static void push(struct table *t, char *cell)
{
    char **c;

    if (!cell) {
        t->oom = 1;
        return;
    }
    if (t->n_cells == t->cap) {
        int cap = t->cap ? t->cap * 2 : 64;
        c = realloc(t->cells, sizeof(*c) * (size_t)cap);
        if (!c) {
            free(cell);
            t->oom = 1;
            return;
        }
        t->cells = c;
        t->cap = cap;
    }
    t->cells[t->n_cells++] = cell;
}

void table_init(struct table *t, int n_cols, const char *const *heads)
{
    int i;

    memset(t, 0, sizeof(*t));
    t->n_cols = n_cols;
    for (i = 0; i < n_cols; i++)
        push(t, strdup(heads[i]));
}

void table_add(struct table *t, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    push(t, cli_vstrf(fmt, ap));
    va_end(ap);
}

static int width(const char *s)
{
    int w = 0;

    for (; *s; s++)
        if (((unsigned char)*s & 0xc0) != 0x80)
            w++;
    return w;
}

static void print_row(const struct table *t, FILE *out, int first, const int *w,
                      const char *indent)
{
    int col, last = t->n_cols - 1;

    while (last > 0 && (first + last >= t->n_cells || !t->cells[first + last][0]))
        last--;
    fputs(indent, out);
    for (col = 0; col <= last; col++) {
        const char *s = first + col < t->n_cells ? t->cells[first + col] : "";
        fputs(s, out);
        if (col < last)
            fprintf(out, "%*s", w[col] - width(s) + GAP, "");
    }
    fputc('\n', out);
}

void table_print(const struct table *t, FILE *out, int headers, const char *indent)
{
    int *w = calloc((size_t)t->n_cols, sizeof(int));
    int i, total = 0;

    if (!w)
        return;
    for (i = 0; i < t->n_cells; i++) {
        int c = i % t->n_cols, cw = width(t->cells[i]);
        if (cw > w[c])
            w[c] = cw;
    }
    for (i = 0; i < t->n_cols; i++)
        total += w[i] + (i ? GAP : 0);
    if (headers) {
        print_row(t, out, 0, w, indent);
        fputs(indent, out);
        for (i = 0; i < total; i++)
            fputs(RULE, out);
        fputc('\n', out);
    }
    for (i = t->n_cols; i < t->n_cells; i += t->n_cols)
        print_row(t, out, i, w, indent);
    free(w);
}

static void csv_cell(FILE *out, const char *s)
{
    if (!s[strcspn(s, ",\"\r\n")]) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

void table_print_csv(const struct table *t, FILE *out, int headers)
{
    int i;

    for (i = headers ? 0 : t->n_cols; i < t->n_cells; i++) {
        csv_cell(out, t->cells[i]);
        fputs(i % t->n_cols == t->n_cols - 1 || i == t->n_cells - 1 ? "\r\n" : ",", out);
    }
}

void table_free(struct table *t)
{
    int i;

    for (i = 0; i < t->n_cells; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof(*t));
}
