/*
 * table.h: the client's text tables, in the runai CLI's look:
 *
 *   Workload   Type       Status    ...
 *   ─────────────────────────────────
 *   a1         Training   Pending   ...
 *
 * Columns are as wide as their widest cell (counted in characters, not
 * bytes) and three spaces apart; no line ends in spaces. Cells are
 * added left to right, row after row.
 */
#ifndef ALLOT_TABLE_H
#define ALLOT_TABLE_H

#include <stdio.h>

struct table {
    int n_cols;
    int n_cells;               /* the header row included */
    int cap;
    char **cells;
    int oom;                   /* a cell could not be stored */
};

/* heads: n_cols column titles. */
void table_init(struct table *t, int n_cols, const char *const *heads);

/* Appends the next cell, printf-style. */
void table_add(struct table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints the table; without headers, neither the titles nor the rule.
 * Every line starts with indent. */
void table_print(const struct table *t, FILE *out, int headers, const char *indent);

/* Prints the table as RFC 4180 CSV: the same cells, comma-separated,
 * lines ended by CRLF; a cell holding a comma, a double quote, CR or LF is
 * enclosed in double quotes, its quotes doubled. Without headers, the
 * title line is left out. */
void table_print_csv(const struct table *t, FILE *out, int headers);

void table_free(struct table *t);

#endif
