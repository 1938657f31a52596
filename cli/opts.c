/*
 * opts.c: the command-line parser of allot's client commands (opts.h
 * gives the grammar).
 *
 * Invariants:
 *   1. Nothing in argv is copied or changed: hits, operands and rest all
 *      point into it.
 *   2. The first error stops the parse; err then names the word at fault.
 */
#include "opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct opt_spec *find_long(const struct opt_spec *spec, const char *name, size_t n)
{
    for (; spec->lng; spec++)
        if (strlen(spec->lng) == n && strncmp(spec->lng, name, n) == 0)
            return spec;
    return NULL;
}

static const struct opt_spec *find_short(const struct opt_spec *spec, char c)
{
    for (; spec->lng; spec++)
        if (spec->shrt && spec->shrt == c)
            return spec;
    return NULL;
}

static int claims_help(const struct opt_spec *spec)
{
    return find_long(spec, "help", 4) || find_short(spec, 'h');
}

/* Reads the option at argv[*i]; advances *i past its value. */
static int one_option(const struct opt_spec *spec, int argc, char **argv, int *i,
                      struct opts *o, char *err, size_t err_len)
{
    const char *w = argv[*i], *inline_val = NULL;
    const struct opt_spec *s;

    if (w[1] == '-') {
        const char *eq = strchr(w + 2, '=');
        size_t n = eq ? (size_t)(eq - (w + 2)) : strlen(w + 2);
        s = find_long(spec, w + 2, n);
        inline_val = eq ? eq + 1 : NULL;
    } else {
        s = find_short(spec, w[1]);
        inline_val = w[2] ? w + 2 : NULL;
    }
    if (!s) {
        snprintf(err, err_len, "unknown option '%s'", w);
        return -1;
    }
    if (s->kind == OPT_FLAG && inline_val) {
        snprintf(err, err_len, "option '--%s' takes no value", s->lng);
        return -1;
    }
    o->hits[o->n_hits].id = s->id;
    o->hits[o->n_hits].val = NULL;
    if (s->kind == OPT_VALUE) {
        if (!inline_val && *i + 1 >= argc) {
            snprintf(err, err_len, "option '%s' needs a value", w);
            return -1;
        }
        o->hits[o->n_hits].val = inline_val ? inline_val : argv[++*i];
    }
    o->n_hits++;
    return 0;
}

int opts_parse(const struct opt_spec *spec, int argc, char **argv, struct opts *o, char *err,
               size_t err_len)
{
    int i, help_free = !claims_help(spec);

    memset(o, 0, sizeof(*o));
    err[0] = 0;
    o->hits = calloc((size_t)argc + 1, sizeof(*o->hits));
    o->pos = calloc((size_t)argc + 1, sizeof(*o->pos));
    if (!o->hits || !o->pos)
        return -2;
    for (i = 0; i < argc; i++) {
        const char *w = argv[i];
        if (strcmp(w, "--") == 0) {
            o->has_rest = 1;
            o->rest = argv + i + 1;
            o->n_rest = argc - i - 1;
            break;
        }
        if (help_free && (strcmp(w, "--help") == 0 || strcmp(w, "-h") == 0)) {
            o->help = 1;
            continue;
        }
        if (w[0] != '-' || w[1] == 0) {
            o->pos[o->n_pos++] = argv[i];
            continue;
        }
        if (one_option(spec, argc, argv, &i, o, err, err_len) != 0)
            return -1;
    }
    return 0;
}

void opts_free(struct opts *o)
{
    free(o->hits);
    free(o->pos);
    memset(o, 0, sizeof(*o));
}
