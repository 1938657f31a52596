/*
 * json_in.c: strict reading of request bodies.
 *
 * Invariants:
 *   1. An object's keys must all be in the operation's allow-list; the
 *      first unknown key is a 400 that names it (no mass assignment, no
 *      silently ignored typo).
 *   2. A field of the wrong type or out of range is a 400 that names it;
 *      null counts as absent.
 *   3. No text reaches jansson nested deeper than API_JSON_DEPTH_MAX.
 *      jansson's parser recurses once per open array or object (about
 *      110 bytes of stack a level) and stops only at 2048 levels, while a
 *      civetweb worker of Debian's build has a 100 KiB stack of which the
 *      dispatcher and civetweb already use about 22 KiB: 1,000 levels
 *      overflowed it and killed the server. api_json_depth() counts the
 *      levels first, in a loop; 32 levels cost jansson under 4 KiB, and
 *      json_decref() and json_dumps() (recursive too) stay as shallow.
 */
#include "api.h"
#include "quantity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void bad_field(struct api_req *r, const char *key, const char *why)
{
    char details[256];

    snprintf(details, sizeof(details), "field '%s': %s", key, why);
    api_error(r, 400, "Bad request", details);
}

static void unknown_field(struct api_req *r, const char *key, const char *where)
{
    char details[256];

    snprintf(details, sizeof(details), "unknown field '%s%s%s'", where ? where : "",
             where ? "." : "", key);
    api_error(r, 400, "Bad request", details);
}

int api_json_depth(const char *text, size_t len, int max)
{
    int depth = 0, deepest = 0, in_string = 0;
    size_t i;

    for (i = 0; i < len && deepest <= max; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '[' || c == '{') {
            if (++depth > deepest)
                deepest = depth;
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        }
    }
    return deepest;
}

json_t *api_json_parse(struct api_req *r, const char *text, size_t len)
{
    json_error_t err;
    char details[256];
    json_t *v;

    if (api_json_depth(text, len, API_JSON_DEPTH_MAX) > API_JSON_DEPTH_MAX) {
        snprintf(details, sizeof(details), "JSON nested deeper than %d levels",
                 API_JSON_DEPTH_MAX);
        api_error(r, 400, "Bad request", details);
        return NULL;
    }
    v = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    if (!v) {
        snprintf(details, sizeof(details), "malformed JSON at line %d column %d: %s", err.line,
                 err.column, err.text);
        api_error(r, 400, "Bad request", details);
    }
    return v;
}

int api_json_allow(struct api_req *r, json_t *obj, const char *const *allowed, const char *where)
{
    const char *key;
    json_t *v;

    json_object_foreach(obj, key, v) {
        const char *const *a;
        for (a = allowed; *a; a++)
            if (strcmp(*a, key) == 0)
                break;
        if (!*a) {
            unknown_field(r, key, where);
            return -1;
        }
    }
    (void)v;
    return 0;
}

int api_json_str(struct api_req *r, json_t *obj, const char *key, char *out, size_t len,
                 int required)
{
    json_t *v = json_object_get(obj, key);

    if (!v || json_is_null(v)) {
        if (required) {
            bad_field(r, key, "is required");
            return -1;
        }
        return 0;
    }
    if (!json_is_string(v)) {
        bad_field(r, key, "must be a string");
        return -1;
    }
    if (json_string_length(v) >= len || strlen(json_string_value(v)) != json_string_length(v)) {
        bad_field(r, key, "is too long or holds a NUL");
        return -1;
    }
    memcpy(out, json_string_value(v), json_string_length(v) + 1);
    return 0;
}

/* The code point of the UTF-8 sequence at s (jansson has checked it is
 * valid UTF-8); *n its length. */
static uint32_t utf8_at(const unsigned char *s, int *n)
{
    if (s[0] < 0x80)
        return *n = 1, s[0];
    if ((s[0] & 0xe0) == 0xc0)
        return *n = 2, ((uint32_t)(s[0] & 0x1f) << 6) | (s[1] & 0x3f);
    if ((s[0] & 0xf0) == 0xe0)
        return *n = 3, ((uint32_t)(s[0] & 0x0f) << 12) | ((uint32_t)(s[1] & 0x3f) << 6) |
                       (s[2] & 0x3f);
    return *n = 4, ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3f) << 12) |
                   ((uint32_t)(s[2] & 0x3f) << 6) | (s[3] & 0x3f);
}

/* Characters no text should hold: C0 and C1 controls, DEL, and the
 * invisible ones that make two strings look alike or reorder what is
 * shown (zero-width, bidirectional controls, the byte order mark). */
static int invisible(uint32_t c)
{
    return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0xad || (c >= 0x200b && c <= 0x200f) ||
           (c >= 0x202a && c <= 0x202e) || (c >= 0x2060 && c <= 0x206f) || c == 0xfeff;
}

int api_valid_text(const char *s, int kind)
{
    const unsigned char *p = (const unsigned char *)s;
    int n;

    if (kind != API_TEXT_FREE && !*p)
        return 0;
    for (; *p; p += n) {
        uint32_t c = utf8_at(p, &n);
        if (invisible(c) || (kind != API_TEXT_FREE && c > 0x7e) ||
            (kind == API_TEXT_LOGIN && c == ' '))
            return 0;
    }
    return 1;
}

int api_json_text(struct api_req *r, json_t *obj, const char *key, char *out, size_t len,
                  int required, int kind)
{
    static const char *const why[] = {
        "printable ASCII without spaces (no control or look-alike non-ASCII characters)",
        "printable ASCII (no control or look-alike non-ASCII characters)",
        "no control or invisible characters",
    };

    if (api_json_str(r, obj, key, out, len, required))
        return -1;
    if (json_object_get(obj, key) && !json_is_null(json_object_get(obj, key)) &&
        !api_valid_text(out, kind)) {
        bad_field(r, key, why[kind]);
        return -1;
    }
    return 0;
}

/* The number under key into *out: 1 if it is one (an integer where
 * integer is set) within min..max, 0 if the key is absent or null (out
 * untouched), -1 with the 400 replied otherwise. The bounds are exact as
 * doubles (|x| <= 2^53); an integer's are written as integers. */
static int number_in(struct api_req *r, json_t *obj, const char *key, int integer, double min,
                     double max, double *out)
{
    json_t *v = json_object_get(obj, key);
    char why[96];
    double d;

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_number(v) ||
        (integer && json_is_real(v) && floor(json_real_value(v)) != json_real_value(v))) {
        bad_field(r, key, integer ? "must be an integer" : "must be a number");
        return -1;
    }
    d = json_number_value(v);
    if (d >= min && d <= max) {
        *out = d;
        return 1;
    }
    if (integer)
        snprintf(why, sizeof(why), "must be between %lld and %lld", (long long)min,
                 (long long)max);
    else
        snprintf(why, sizeof(why), "must be between %g and %g", min, max);
    bad_field(r, key, why);
    return -1;
}

int api_json_int(struct api_req *r, json_t *obj, const char *key, int64_t min, int64_t max,
                 int64_t *out)
{
    double d;
    int rc = number_in(r, obj, key, 1, (double)min, (double)max, &d);

    if (rc > 0)
        *out = (int64_t)d;
    return rc < 0 ? -1 : 0;
}

int api_json_num(struct api_req *r, json_t *obj, const char *key, double min, double max,
                 double *out)
{
    return number_in(r, obj, key, 0, min, max, out) < 0 ? -1 : 0;
}

int api_json_bool(struct api_req *r, json_t *obj, const char *key, int *out)
{
    json_t *v = json_object_get(obj, key);

    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v)) {
        bad_field(r, key, "must be true or false");
        return -1;
    }
    *out = json_is_true(v);
    return 0;
}

/* Reads one row of a field table into its place in target. */
static int field_in(struct api_req *r, json_t *obj, const struct api_field *f, void *target,
                    int creating)
{
    char *at = (char *)target + f->offset;
    int required = f->need == API_F_REQUIRED || (f->need == API_F_ON_CREATE && creating);
    int64_t x;

    switch (f->kind) {
    case API_F_STR:
        return api_json_str(r, obj, f->key, at, f->size, required);
    case API_F_TEXT:
        return api_json_text(r, obj, f->key, at, f->size, required, f->text);
    case API_F_INT:
        x = *(int *)at;
        if (api_json_int(r, obj, f->key, (int64_t)f->lo, (int64_t)f->hi, &x))
            return -1;
        *(int *)at = (int)x;
        return 0;
    case API_F_I64:
        return api_json_int(r, obj, f->key, (int64_t)f->lo, (int64_t)f->hi, (int64_t *)at);
    case API_F_NUM:
        return api_json_num(r, obj, f->key, f->lo, f->hi, (double *)at);
    case API_F_BOOL:
        return api_json_bool(r, obj, f->key, (int *)at);
    default:
        return 0;
    }
}

int api_fields_in(struct api_req *r, json_t *obj, const struct api_field *table, size_t n,
                  void *target, const char *where, int creating)
{
    const char *key;
    json_t *v;
    size_t i;

    json_object_foreach(obj, key, v) {
        for (i = 0; i < n && strcmp(table[i].key, key) != 0; i++)
            ;
        if (i == n) {
            unknown_field(r, key, where);
            return -1;
        }
    }
    for (i = 0; i < n; i++)
        if (field_in(r, obj, &table[i], target, creating))
            return -1;
    return 0;
}

/* A Kubernetes memory quantity ("500M", "1Gi", "1024") in MiB, rounded up. */
int api_quantity_mib(const char *s, int64_t *out)
{
    return quantity_mib(s, out);
}
