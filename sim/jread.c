/*
 * jread.c: the strict JSON reader of jread.h.
 *
 * Numbers: a JSON integer, or a real with no fractional part, reads as an
 * integer; any JSON number reads as a number. Strings must be non-empty.
 * A path that outgrows JR_PATH_MAX is cut, never overflowed.
 */
#include "jread.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void jr_init(struct jr *r, const char *file)
{
    r->file = file;
    strcpy(r->path, "$");
    r->len = 1;
    r->failed = 0;
    r->error[0] = '\0';
}

static size_t jr_append(struct jr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static size_t jr_append(struct jr *r, const char *fmt, ...)
{
    size_t mark = r->len;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(r->path + r->len, sizeof(r->path) - r->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        r->len += (size_t)n < sizeof(r->path) - r->len ? (size_t)n : sizeof(r->path) - r->len - 1;
    return mark;
}

size_t jr_key(struct jr *r, const char *key)
{
    return jr_append(r, ".%s", key);
}

size_t jr_index(struct jr *r, size_t i)
{
    return jr_append(r, "[%zu]", i);
}

void jr_pop(struct jr *r, size_t mark)
{
    r->len = mark;
    r->path[mark] = '\0';
}

static void jr_vfail(struct jr *r, const char *path, const char *fmt, va_list ap)
{
    char msg[JR_ERROR_MAX / 2];

    if (r->failed)
        return;
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (path)
        snprintf(r->error, sizeof(r->error), "%s: %s: %s", r->file, path, msg);
    else
        snprintf(r->error, sizeof(r->error), "%s: %s", r->file, msg);
    r->failed = 1;
}

int jr_fail(struct jr *r, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    jr_vfail(r, r->path, fmt, ap);
    va_end(ap);
    return -1;
}

int jr_fail_file(struct jr *r, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    jr_vfail(r, NULL, fmt, ap);
    va_end(ap);
    return -1;
}

static int allowed_key(const char *key, const char *const *allowed)
{
    for (; *allowed; allowed++)
        if (strcmp(*allowed, key) == 0)
            return 1;
    return 0;
}

int jr_object(struct jr *r, const json_t *v, const char *const *allowed)
{
    const char *key;
    json_t *member;
    size_t mark;

    if (!json_is_object(v))
        return jr_fail(r, "expected an object");
    if (!allowed)
        return 0;
    json_object_foreach((json_t *)v, key, member) {
        if (!allowed_key(key, allowed)) {
            mark = jr_key(r, key);
            jr_fail(r, "unknown field");
            jr_pop(r, mark);
            return -1;
        }
    }
    return 0;
}

int jr_array(struct jr *r, const json_t *v)
{
    return json_is_array(v) ? 0 : jr_fail(r, "expected an array");
}

int jr_string(struct jr *r, const json_t *v, const char **out)
{
    if (!json_is_string(v) || json_string_length(v) == 0)
        return jr_fail(r, "expected a non-empty string");
    *out = json_string_value(v);
    return 0;
}

static int int_fail(struct jr *r, int64_t min, int64_t max)
{
    if (max >= JR_NO_MAX && min == 0)
        return jr_fail(r, "expected a non-negative integer");
    if (max >= JR_NO_MAX && min == 1)
        return jr_fail(r, "expected a positive integer");
    if (max >= JR_NO_MAX)
        return jr_fail(r, "expected an integer of at least %lld", (long long)min);
    return jr_fail(r, "expected an integer from %lld to %lld", (long long)min, (long long)max);
}

int jr_int(struct jr *r, const json_t *v, int64_t min, int64_t max, int64_t *out)
{
    double d;
    int64_t i;

    if (json_is_integer(v)) {
        i = (int64_t)json_integer_value(v);
    } else if (json_is_real(v)) {
        d = json_real_value(v);
        if (d != floor(d) || fabs(d) > (double)JR_NO_MAX)
            return int_fail(r, min, max);
        i = (int64_t)d;
    } else {
        return int_fail(r, min, max);
    }
    if (i < min || i > max)
        return int_fail(r, min, max);
    *out = i;
    return 0;
}

int jr_number(struct jr *r, const json_t *v, double min, double max, const char *what,
              double *out)
{
    double d;

    if (!json_is_number(v))
        return jr_fail(r, "expected %s", what);
    d = json_number_value(v);
    if (!(d >= min && d <= max))
        return jr_fail(r, "expected %s", what);
    *out = d;
    return 0;
}

int jr_enum(struct jr *r, const json_t *v, const char *const *names, int *out)
{
    char list[256] = "";
    size_t used = 0;
    int i;

    for (i = 0; json_is_string(v) && names[i]; i++) {
        if (strcmp(names[i], json_string_value(v)) == 0) {
            *out = i;
            return 0;
        }
    }
    for (i = 0; names[i] && used < sizeof(list); i++) {
        int n = snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "", names[i]);
        used += n > 0 ? (size_t)n : 0;
    }
    return jr_fail(r, "expected one of %s", list);
}

const json_t *jr_opt(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);

    return json_is_null(v) ? NULL : v;
}

/* Finds member `key`: 1 when it is there to read (the path now ends with
 * it; the caller pops `*mark`), 0 when an optional one is absent or
 * null, -1 when a required one is missing. */
static int member(struct jr *r, const json_t *obj, const char *key, enum jr_need need,
                  const json_t **v, size_t *mark)
{
    *v = json_object_get(obj, key);
    if (!*v && need == JR_REQUIRED) {
        *mark = jr_key(r, key);
        jr_fail(r, "missing required field");
        jr_pop(r, *mark);
        return -1;
    }
    if (!*v || (json_is_null(*v) && need == JR_OPTIONAL))
        return 0;
    *mark = jr_key(r, key);
    return 1;
}

/* A member that must be an object (with the keys allowed) or, with
 * `array`, an array: jr_get_object()'s and jr_get_array()'s codes. */
static int get_container(struct jr *r, const json_t *obj, const char *key, enum jr_need need,
                         const char *const *allowed, int array, const json_t **out)
{
    const json_t *v;
    size_t mark;
    int rc = member(r, obj, key, need, &v, &mark);

    if (rc <= 0)
        return rc;
    rc = array ? jr_array(r, v) : jr_object(r, v, allowed);
    if (rc == 0)
        *out = v;
    jr_pop(r, mark);
    return rc;
}

int jr_get_object(struct jr *r, const json_t *obj, const char *key, enum jr_need need,
                  const char *const *allowed, const json_t **out)
{
    return get_container(r, obj, key, need, allowed, 0, out);
}

int jr_get_array(struct jr *r, const json_t *obj, const char *key, enum jr_need need,
                 const json_t **out)
{
    return get_container(r, obj, key, need, NULL, 1, out);
}

int jr_get_string(struct jr *r, const json_t *obj, const char *key, enum jr_need need,
                  const char **out)
{
    const json_t *v;
    size_t mark;
    int rc = member(r, obj, key, need, &v, &mark);

    if (rc <= 0)
        return rc;
    rc = jr_string(r, v, out);
    jr_pop(r, mark);
    return rc;
}

int jr_get_bool(struct jr *r, const json_t *obj, const char *key, int *out)
{
    const json_t *v;
    size_t mark;
    int rc = member(r, obj, key, JR_OPTIONAL, &v, &mark);

    if (rc <= 0)
        return rc;
    rc = 0;
    if (json_is_boolean(v))
        *out = json_is_true(v);
    else
        rc = jr_fail(r, "expected true or false");
    jr_pop(r, mark);
    return rc;
}

int jr_get_enum(struct jr *r, const json_t *obj, const char *key, const char *const *names,
                int *out)
{
    const json_t *v;
    size_t mark;
    int rc = member(r, obj, key, JR_OPTIONAL, &v, &mark);

    if (rc <= 0)
        return rc;
    rc = jr_enum(r, v, names, out);
    jr_pop(r, mark);
    return rc;
}

int jr_get_int(struct jr *r, const json_t *obj, const char *key, enum jr_need need,
               int64_t min, int64_t max, int64_t *out)
{
    const json_t *v;
    size_t mark;
    int rc = member(r, obj, key, need, &v, &mark);

    if (rc <= 0)
        return rc;
    rc = jr_int(r, v, min, max, out);
    jr_pop(r, mark);
    return rc;
}

int jr_get_number(struct jr *r, const json_t *obj, const char *key, double min, double max,
                  const char *what, double *out)
{
    const json_t *v;
    size_t mark;
    int rc = member(r, obj, key, JR_OPTIONAL, &v, &mark);

    if (rc <= 0)
        return rc;
    rc = jr_number(r, v, min, max, what, out);
    jr_pop(r, mark);
    return rc;
}
