/*
 * fields.h: request bodies built from flags by one table. The admin verbs
 * (nodepool create|edit, project|department edit, access-rule create)
 * each list their flags as rows { flag, JSON path, kind, bounds }, and
 * one loop turns the flags met into the JSON the API takes:
 *
 *   {"placement", 0, F_WORD, "placementStrategy.gpu", 0, 0, "binpack spread fragmentation"}
 *   --placement spread   ->   {"placementStrategy": {"gpu": "spread"}}
 *
 * "none" clears a field that may be empty (F_LIST, F_SECONDS with
 * clear, F_TEXT with clear): the field becomes null, or is taken out of
 * its object when the row says so (a scheduling rule with no limit).
 */
#ifndef ALLOT_FIELDS_H
#define ALLOT_FIELDS_H

#include <jansson.h>

#include "cli.h"
#include "opts.h"

enum field_kind {
    F_TEXT,                    /* the word as typed */
    F_WORD,                    /* one of `words` (space-separated), case-insensitive */
    F_NUMBER,                  /* a real in [min, max] */
    F_INT,                     /* a whole number in [min, max] */
    F_BOOL,                    /* on|off, true|false, yes|no */
    F_SECONDS,                 /* seconds: 90, 90s, 30m, 2h, 1d12h; a number in [min, max] */
    F_LIST,                    /* a,b,c: an array of strings */
    F_KEY_VALUE,               /* KEY=VALUE into the two fields of path "keyField=valueField" */
};

/* How "none" reads (for kinds that take it). */
enum field_clear { CLEAR_NO = 0, CLEAR_NULL, CLEAR_REMOVE };

struct field_flag {
    const char *flag;          /* "placement" for --placement */
    int id;                    /* the option id, from FIELD_ID_BASE up */
    int kind;                  /* enum field_kind */
    const char *path;          /* dotted: "schedulingConfiguration.minGuaranteedRuntime" */
    double min, max;
    const char *words;         /* F_WORD: the words allowed */
    int clear;                 /* enum field_clear */
};

/* Option ids of the field tables start here, clear of every verb's own. */
#define FIELD_ID_BASE 500

/* Fills spec (cap entries) with extra's options, then one OPT_VALUE
 * option per row of each table (tables ends with NULL; a table ends with
 * a NULL flag), then the end mark. 0 ok, -1 if cap is too small. */
int field_specs(const struct field_flag *const *tables, const struct opt_spec *extra,
                struct opt_spec *spec, int cap);

/* The row of fields for option id, or NULL. */
const struct field_flag *field_of(const struct field_flag *fields, int id);

/* Reads h (a hit of row f) into body at f's path. CLI_OK, or a usage
 * error printed under cmd's name. */
int field_apply(const struct cli_cmd *cmd, const struct field_flag *f, const char *val,
                json_t *body);

/* Seconds of "90", "90s", "30m", "2h", "1d12h"; 0 ok, -1 not a duration. */
int field_seconds(const char *s, double *out);

/* Sets body's value at a dotted path (making the objects on the way);
 * v NULL removes the key. v is stolen. 0 ok, -1 out of memory. */
int field_set_path(json_t *body, const char *path, json_t *v);

#endif
