/*
 * config_file.c: setting options through a table of them, and reading a
 * config file of "key = value" lines (config_file.h says the rules).
 */
#include "config_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

int cf_set_str(const char *v, char *out, size_t len)
{
    size_t n = strlen(v);

    if (n >= len)
        return -1;
    memcpy(out, v, n + 1);
    return 0;
}

int cf_set_int(const char *v, long min, long max, int *out)
{
    char *end;
    long x = strtol(v, &end, 10);

    if (end == v || *end || x < min || x > max)
        return -1;
    *out = (int)x;
    return 0;
}

void cf_defaults(const struct cf_option *table, size_t n, void *target)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (table[i].kind == CF_INT)
            *(int *)((char *)target + table[i].offset) = (int)table[i].def;
}

/* Sets one option from its row. */
static int set_option(const struct cf_option *opt, void *target, const char *value)
{
    char *field = (char *)target + opt->offset;

    if (opt->kind == CF_FLAG) {
        *(int *)field = !value || strcmp(value, "false") != 0;
        return 0;
    }
    if (!value)
        return -1;
    switch (opt->kind) {
    case CF_STR:
        return strlen(value) < (size_t)opt->min ? -1 : cf_set_str(value, field, opt->size);
    case CF_INT:
        return cf_set_int(value, opt->min, opt->max, (int *)field);
    case CF_PARSE:
        return opt->parse(target, value);
    default:
        return -1;
    }
}

int cf_apply(const struct cf_option *table, size_t n, void *target, const char *key,
             const char *value)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (strcmp(table[i].name, key) == 0)
            return set_option(&table[i], target, value);
    return -1;
}

/* s without the blanks before it and the blanks and line end after it. */
static char *trim(char *s)
{
    char *e;

    while (*s == ' ' || *s == '\t')
        s++;
    e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
        *--e = 0;
    return s;
}

int cf_read_file(const char *prog, const char *path,
                 int (*apply)(void *ctx, const char *key, const char *value), void *ctx)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int lineno = 0, rc = 0;

    if (!f) {
        fprintf(stderr, "%s: cannot read %s\n", prog, path);
        return -1;
    }
    while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
        char *s = line, *hash, *eq;

        lineno++;
        if (memchr(line, 0, (size_t)n)) {
            fprintf(stderr, "%s: %s:%d: a NUL byte in the line\n", prog, path, lineno);
            rc = -1;
            break;
        }
        hash = strchr(s, '#');
        if (hash)
            *hash = 0;
        s = trim(s);
        if (!*s)
            continue;
        eq = strchr(s, '=');
        if (eq)
            *eq = 0;
        if (apply(ctx, trim(s), eq ? trim(eq + 1) : NULL) != 0) {
            fprintf(stderr, "%s: %s:%d: bad option\n", prog, path, lineno);
            rc = -1;
        }
    }
    free(line);
    fclose(f);
    return rc;
}
