/*
 * opts.h: the command-line parser of allot's client commands.
 *
 * Options and operands may come in any order ("submit a1 -i IMG -g 1" and
 * "submit -g 1 a1 -i IMG" mean the same). Spellings: "--long VALUE",
 * "--long=VALUE", "-s VALUE", "-sVALUE"; a flag takes no value. A value
 * is the next word whatever it looks like, so "--tail -1" works. "--"
 * ends the options: every word after it is kept, in order, in `rest`.
 * "-h" and "--help" set `help` unless the spec claims them.
 */
#ifndef ALLOT_OPTS_H
#define ALLOT_OPTS_H

#include <stddef.h>

enum opt_kind { OPT_FLAG = 0, OPT_VALUE = 1 };

struct opt_spec {
    const char *lng;           /* "image" for --image */
    char shrt;                 /* 'i' for -i, or 0 */
    int kind;                  /* enum opt_kind */
    int id;                    /* returned in the hits, never 0 */
};

/* One option met on the command line, in order. */
struct opt_hit {
    int id;
    const char *val;           /* borrowed from argv; NULL for a flag */
};

struct opts {
    struct opt_hit *hits;
    int n_hits;
    char **pos;                /* operands, borrowed from argv */
    int n_pos;
    char **rest;               /* the words after "--" (points into argv) */
    int n_rest;
    int has_rest;              /* "--" was given */
    int help;
};

/* Parses argv[0..argc) against spec (ended by an entry with lng NULL).
 * 0 ok; -1 on a bad command line with the reason in err; -2 out of
 * memory. o must be released with opts_free() either way. */
int opts_parse(const struct opt_spec *spec, int argc, char **argv, struct opts *o, char *err,
               size_t err_len);

void opts_free(struct opts *o);

#endif
