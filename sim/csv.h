/*
 * csv.h: reading a comma-separated file row by row, with its columns
 * found by the names in its header line.
 *
 * The dialect is the one of the trace files: the first line names the
 * columns; every other line has exactly that many fields; a field may be
 * wrapped in double quotes (a quote inside is doubled); a trailing "\r"
 * is dropped; blank lines are skipped. Every error is one line that names
 * the file and the line: "FILE:LINE: problem" ("FILE: problem" when it
 * is about the whole file).
 *
 * Ownership: the reader owns its line buffer and header; the strings
 * csv_field() returns live until the next csv_next() or csv_close().
 */
#ifndef ALLOT_CSV_H
#define ALLOT_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct csv {
    const char *file;     /* borrowed */
    FILE *fp;
    char *line;           /* the current row, split in place */
    size_t cap;
    int lineno;           /* of the current row, from 1 */
    char **fields;        /* [n_fields] into line */
    int n_fields, cap_fields;
    char **header;        /* [n_cols] owned copies of the column names */
    int n_cols;
    char *err;            /* the caller's buffer for the last error */
    size_t err_len;
};

/* Opens `file` (borrowed) and reads its header. Errors go into err (the
 * buffer is borrowed for the reader's life). Returns 0 or -1; the reader
 * must be closed either way. */
int csv_open(struct csv *c, const char *file, char *err, size_t len);
void csv_close(struct csv *c);   /* a reader that never opened is fine */

/* Reads the next row: 1 when there is one, 0 at the end, -1 on error. */
int csv_next(struct csv *c);

/* Index of the column named `name`, or -1. */
int csv_col(const struct csv *c, const char *name);
/* csv_col(), or -1 with "FILE: no column NAME" written as the error. */
int csv_need(struct csv *c, const char *name);
/* The field of column `col` in the current row ("" when col < 0). */
const char *csv_field(const struct csv *c, int col);

/* The field of column `col` as a decimal integer in [min, max]; -1 and a
 * "FILE:LINE: column NAME: ..." error otherwise. */
int csv_int(struct csv *c, int col, int64_t min, int64_t max, int64_t *out);
/* A decimal number in thousandths (e.g. "2.5" -> 2500), in [min, max]
 * thousandths; "-1" is allowed when allow_minus_one is set (-> -1). */
int csv_milli(struct csv *c, int col, int64_t min, int64_t max, int allow_minus_one,
              int64_t *out);
/* Writes "FILE:LINE: column NAME: msg" as the error and returns -1. */
int csv_fail(struct csv *c, int col, const char *msg);

#endif
