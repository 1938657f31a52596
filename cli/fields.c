/*
 * fields.c: request bodies from flags by table (fields.h gives the rows'
 * meaning).
 *
 * Step 1: field_specs() makes the option spec of a verb: its own options
 *         and one valued option per row;
 * Step 2: field_apply() reads one flag's value by the row's kind and sets
 *         it at the row's dotted path in the body, making the objects on
 *         the way.
 *
 * Invariants:
 *   1. A value is checked before it is set: a word outside `words`, a
 *      number out of bounds or a malformed duration is a usage error
 *      (exit 2) and the request is never sent.
 *   2. The same flag given twice: the last one wins, as the body's key is
 *      set again.
 */
#include "fields.h"

#include <stdlib.h>
#include <string.h>

int field_specs(const struct field_flag *const *tables, const struct opt_spec *extra,
                struct opt_spec *spec, int cap)
{
    const struct field_flag *f;
    int n = 0;

    for (; extra && extra->lng; extra++) {
        if (n + 1 >= cap)
            return -1;
        spec[n++] = *extra;
    }
    for (; *tables; tables++)
        for (f = *tables; f->flag; f++) {
            if (n + 1 >= cap)
                return -1;
            spec[n++] = (struct opt_spec){f->flag, 0, OPT_VALUE, f->id};
        }
    spec[n] = (struct opt_spec){NULL, 0, 0, 0};
    return 0;
}

const struct field_flag *field_of(const struct field_flag *fields, int id)
{
    for (; fields->flag; fields++)
        if (fields->id == id)
            return fields;
    return NULL;
}

int field_set_path(json_t *body, const char *path, json_t *v)
{
    char key[96];
    size_t n;
    json_t *next;

    for (;;) {
        n = strcspn(path, ".");
        if (n >= sizeof(key)) {
            json_decref(v);
            return -1;
        }
        memcpy(key, path, n);
        key[n] = 0;
        if (!path[n])
            break;
        next = json_object_get(body, key);
        if (!json_is_object(next)) {
            next = json_object();
            if (!next || json_object_set_new(body, key, next)) {
                json_decref(v);
                return -1;
            }
        }
        body = next;
        path += n + 1;
    }
    if (v)
        return json_object_set_new(body, key, v);
    json_object_del(body, key);   /* -1 when it was not there: nothing to remove */
    return 0;
}

int field_seconds(const char *s, double *out)
{
    static const struct {
        char unit;
        double seconds;
    } units[] = {{'d', 86400}, {'h', 3600}, {'m', 60}, {'s', 1}};
    double total = 0;
    size_t i;
    long v;

    if (!*s)
        return -1;
    if (cli_parse_int(s, 0, 100000000L, &v) == 0) {
        *out = (double)v;
        return 0;
    }
    while (*s) {
        char *end;
        v = strtol(s, &end, 10);
        if (end == s || v < 0 || v > 100000000L)
            return -1;
        for (i = 0; i < sizeof(units) / sizeof(units[0]) && units[i].unit != *end; i++)
            ;
        if (i == sizeof(units) / sizeof(units[0]))
            return -1;
        total += (double)v * units[i].seconds;
        s = end + 1;
    }
    *out = total;
    return 0;
}

/* The canonical spelling of val among words, copied into out; -1 if none. */
static int word_in(const char *words, const char *val, char *out, size_t len)
{
    size_t n;

    while (*words) {
        n = strcspn(words, " ");
        if (n < len) {
            memcpy(out, words, n);
            out[n] = 0;
            if (cli_eq_nocase(out, val))
                return 0;
        }
        words += n + (words[n] == ' ');
    }
    return -1;
}

static json_t *list_value(const char *val)
{
    json_t *a = json_array();
    size_t n;

    while (a && *val) {
        n = strcspn(val, ",");
        if (n && json_array_append_new(a, json_stringn(val, n))) {
            json_decref(a);
            return NULL;
        }
        val += n + (val[n] == ',');
    }
    return a;
}

static int key_value(const struct field_flag *f, const char *val, json_t *body)
{
    const char *eq = strchr(val, '='), *sep = strchr(f->path, '=');
    char key_path[96];
    size_t n = sep ? (size_t)(sep - f->path) : 0;

    if (!sep || n >= sizeof(key_path))
        return -1;
    memcpy(key_path, f->path, n);
    key_path[n] = 0;
    if (field_set_path(body, key_path, json_stringn(val, (size_t)(eq - val))) ||
        field_set_path(body, sep + 1, json_string(eq + 1)))
        return -1;
    return 0;
}

/* The value of val by f's kind into *v (NULL: remove); CLI_OK or a usage
 * error. */
static int value_of(const struct cli_cmd *cmd, const struct field_flag *f, const char *val,
                    json_t **v)
{
    static const char *const bools = "on off true false yes no";
    char word[32];
    double d;
    long l;

    *v = NULL;
    switch (f->kind) {
    case F_TEXT: *v = json_string(val); break;
    case F_LIST: *v = val[0] ? list_value(val) : json_null(); break;
    case F_WORD:
        if (word_in(f->words, val, word, sizeof(word)))
            return cli_usage_error(cmd, "--%s is one of: %s", f->flag, f->words);
        *v = json_string(word);
        break;
    case F_BOOL:
        if (word_in(bools, val, word, sizeof(word)))
            return cli_usage_error(cmd, "--%s is on or off", f->flag);
        *v = json_boolean(strcmp(word, "on") == 0 || strcmp(word, "true") == 0 ||
                          strcmp(word, "yes") == 0);
        break;
    case F_INT:
        if (cli_parse_int(val, (long)f->min, (long)f->max, &l))
            return cli_usage_error(cmd, "--%s wants a whole number from %.0f to %.0f", f->flag,
                                   f->min, f->max);
        *v = json_integer(l);
        break;
    case F_NUMBER:
        if (cli_parse_real(val, f->min, f->max, &d))
            return cli_usage_error(cmd, "--%s wants a number from %g to %g", f->flag, f->min,
                                   f->max);
        *v = json_real(d);
        break;
    case F_SECONDS:
        if (field_seconds(val, &d) || d < f->min || d > f->max)
            return cli_usage_error(cmd, "--%s wants a duration (90s, 30m, 2h, 1d12h) from %gs "
                                        "to %gs%s", f->flag, f->min, f->max,
                                   f->clear ? ", or none" : "");
        *v = json_integer((json_int_t)d);
        break;
    }
    return *v ? CLI_OK : cli_fail("out of memory");
}

int field_apply(const struct cli_cmd *cmd, const struct field_flag *f, const char *val,
                json_t *body)
{
    json_t *v = NULL;
    int rc;

    if (f->clear && strcmp(val, "none") == 0)
        v = f->clear == CLEAR_NULL ? json_null() : NULL;
    else if (f->kind == F_KEY_VALUE) {
        if (!strchr(val, '=') || val[0] == '=' || !strchr(val, '=')[1])
            return cli_usage_error(cmd, "--%s wants KEY=VALUE", f->flag);
        return key_value(f, val, body) ? cli_fail("out of memory") : CLI_OK;
    } else if ((rc = value_of(cmd, f, val, &v)) != CLI_OK)
        return rc;
    return field_set_path(body, f->path, v) ? cli_fail("out of memory") : CLI_OK;
}
