/*
 * config_file.h: options by table, and the config file that sets them.
 *
 * allotd (api/config.c) and allot-agent (agent/opts.c) describe each of
 * their options once, as a row of a table: its name without dashes, what
 * kind of value it takes, its limits, its default (an integer's) and where
 * in the options struct it goes. cf_apply() sets one option from the command line or a config file
 * line through that table; cf_read_file() reads a config file of
 * "key = value" lines and hands each to a caller's apply function.
 *
 * Invariants:
 *   1. An option is set only when its whole value is valid: a refused
 *      value leaves the field as it was.
 *   2. A config file line is read whole, whatever its length (a line is
 *      never cut in two: the rest of a long comment must not become an
 *      option); a line holding a NUL byte is refused, not read up to it.
 *   3. Every message names the program, and a file's messages its path
 *      and line: "PROG: PATH:LINE: ...".
 */
#ifndef ALLOT_CONFIG_FILE_H
#define ALLOT_CONFIG_FILE_H

#include <stddef.h>

enum cf_kind {
    CF_STR,   /* a char[size] field; at least min bytes long */
    CF_INT,   /* an int field, a whole decimal number from min to max */
    CF_FLAG,  /* an int field: 1 with no value or any but "false", else 0 */
    CF_PARSE, /* parse(target, value) sets what it must, 0 or -1 */
};

struct cf_option {
    const char *name;    /* without the leading "--" */
    enum cf_kind kind;
    size_t offset;       /* offsetof the field in the options struct */
    size_t size;         /* CF_STR: the field's size */
    long min, max;       /* CF_INT: the range; CF_STR: min is the least length */
    int (*parse)(void *target, const char *value); /* CF_PARSE */
    long def;            /* CF_INT: the value before any option sets it */
};

/* A CF_STR row for field f of struct type T, at least min bytes long. */
#define CF_STR_ROW(T, name, f, min) \
    {name, CF_STR, offsetof(T, f), sizeof(((T *)0)->f), min, 0, NULL, 0}
/* A CF_INT row: its default def (which may stand outside min..max, as a
 * mark that no option set it), then its range. */
#define CF_INT_ROW(T, name, f, def, min, max) \
    {name, CF_INT, offsetof(T, f), 0, min, max, NULL, def}
#define CF_FLAG_ROW(T, name, f) {name, CF_FLAG, offsetof(T, f), 0, 0, 0, NULL, 0}
#define CF_PARSE_ROW(name, fn) {name, CF_PARSE, 0, 0, 0, 0, fn, 0}

/* Sets the option key (no dashes) of target to value (NULL: the key stood
 * alone, which only a CF_FLAG takes); -1 for an unknown key or a value it
 * refuses (Invariant 1). */
int cf_apply(const struct cf_option *table, size_t n, void *target, const char *key,
             const char *value);

/* Sets every CF_INT field of target to its row's default. */
void cf_defaults(const struct cf_option *table, size_t n, void *target);

/* Copies v into out (len bytes); -1 when it does not fit. */
int cf_set_str(const char *v, char *out, size_t len);
/* Reads v, a whole decimal number from min to max, into *out; else -1. */
int cf_set_int(const char *v, long min, long max, int *out);

/* Reads the config file at path: one "key = value" (or a lone "key") per
 * line, '#' starting a comment, blanks around key and value dropped.
 * Each option goes to apply(ctx, key, value or NULL); the first it
 * refuses stops the read with "PROG: PATH:LINE: bad option". 0, or -1
 * with the message printed on stderr. */
int cf_read_file(const char *prog, const char *path,
                 int (*apply)(void *ctx, const char *key, const char *value), void *ctx);

#endif
