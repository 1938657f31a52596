/*
 * output.c: JSON and YAML printing of API documents.
 *
 * The YAML is block style: mappings as "key: value", sequences as
 * "- item", an object in a sequence starting on the dash's line. A string
 * is written plain only when no YAML reader could take it for anything
 * else (a number, a boolean, a date, null, or syntax); otherwise it is
 * double-quoted with JSON escapes, which YAML reads the same way.
 */
#include "output.h"

#include <ctype.h>
#include <string.h>

void out_json(FILE *out, const json_t *v)
{
    json_dumpf(v, out, JSON_INDENT(2) | JSON_ENCODE_ANY);
    fputc('\n', out);
}

static int plain_word(const char *s)
{
    static const char *const reserved[] = {"true", "false", "null", "yes", "no", "on", "off",
                                           "y", "n", NULL};
    size_t i, n = strlen(s);

    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '/' || s[0] == '_') ||
        s[n - 1] == ' ')
        return 0;
    for (i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr(" _./+-()", s[i]))
            return 0;
    for (i = 0; reserved[i]; i++) {
        const char *a = s, *b = reserved[i];
        while (*a && tolower((unsigned char)*a) == *b) {
            a++;
            b++;
        }
        if (!*a && !*b)
            return 0;
    }
    return 1;
}

static void scalar(FILE *out, const json_t *v)
{
    if (json_is_string(v) && plain_word(json_string_value(v)))
        fputs(json_string_value(v), out);
    else if (json_is_object(v))
        fputs("{}", out);
    else if (json_is_array(v))
        fputs("[]", out);
    else
        json_dumpf(v, out, JSON_ENCODE_ANY);
}

static int is_block(const json_t *v)
{
    return (json_is_object(v) && json_object_size(v) > 0) ||
           (json_is_array(v) && json_array_size(v) > 0);
}

static void node(FILE *out, const json_t *v, int indent, int lead);

/* One mapping entry or sequence item's value after "key:" or "-". */
static void value(FILE *out, const json_t *v, int indent, int in_seq)
{
    if (!is_block(v)) {
        fputc(' ', out);
        scalar(out, v);
        fputc('\n', out);
    } else if (in_seq) {
        fputc(' ', out);
        node(out, v, indent + 2, 1);
    } else {
        fputc('\n', out);
        node(out, v, indent + 2, 0);
    }
}

/* Prints a block node at indent; with lead, its first line continues the
 * current line (after "- "). */
static void node(FILE *out, const json_t *v, int indent, int lead)
{
    const char *key;
    json_t *item;
    size_t i;
    int first = 1;

    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, key, item) {
            if (!(first && lead))
                fprintf(out, "%*s", indent, "");
            if (plain_word(key))
                fprintf(out, "%s:", key);
            else {
                json_t *k = json_string(key);
                json_dumpf(k, out, JSON_ENCODE_ANY);
                json_decref(k);
                fputc(':', out);
            }
            value(out, item, indent, 0);
            first = 0;
        }
        return;
    }
    json_array_foreach(v, i, item) {
        if (!(first && lead))
            fprintf(out, "%*s", indent, "");
        fputc('-', out);
        value(out, item, indent, 1);
        first = 0;
    }
}

void out_yaml(FILE *out, const json_t *v)
{
    if (is_block(v))
        node(out, v, 0, 0);
    else {
        scalar(out, v);
        fputc('\n', out);
    }
}

int out_document(FILE *out, int format, const json_t *v)
{
    if (format == OUT_YAML)
        out_yaml(out, v);
    else
        out_json(out, v);
    return 0;
}
