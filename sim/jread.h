/*
 * jread.h: strict reading of a JSON document, with a path for every error.
 *
 * A reader carries the file name, the JSON path of the value being read
 * ("$.steps[3].submit") and the first error met. Every reading function
 * returns 0 or -1; on -1 the reader holds one line,
 * "FILE: PATH: what is wrong", and later errors are ignored, so the first
 * problem of a file is the one reported.
 *
 * Values are borrowed from the document: strings stay valid as long as
 * the json_t they came from.
 */
#ifndef ALLOT_JREAD_H
#define ALLOT_JREAD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define JR_PATH_MAX 512
#define JR_ERROR_MAX 1024
#define JR_NO_MAX ((int64_t)1 << 50)   /* "no upper bound" for jr_int() */

enum jr_need { JR_OPTIONAL = 0, JR_REQUIRED = 1 };

struct jr {
    const char *file;          /* borrowed */
    char path[JR_PATH_MAX];
    size_t len;                /* strlen(path) */
    int failed;
    char error[JR_ERROR_MAX];  /* the first error, when failed */
};

void jr_init(struct jr *r, const char *file);

/* Path steps: append ".key" or "[i]" and return a mark for jr_pop(). */
size_t jr_key(struct jr *r, const char *key);
size_t jr_index(struct jr *r, size_t i);
void jr_pop(struct jr *r, size_t mark);

/* Records an error at the current path (the first one wins); returns -1. */
int jr_fail(struct jr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Records an error about the file itself, with no path; returns -1. */
int jr_fail_file(struct jr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The value at the current path must be an object whose keys are all in
 * `allowed` (NULL-terminated; NULL: any key). */
int jr_object(struct jr *r, const json_t *v, const char *const *allowed);
int jr_array(struct jr *r, const json_t *v);
int jr_string(struct jr *r, const json_t *v, const char **out);
int jr_int(struct jr *r, const json_t *v, int64_t min, int64_t max, int64_t *out);
/* `what` completes "expected ..." when v is no number in [min, max]. */
int jr_number(struct jr *r, const json_t *v, double min, double max, const char *what,
              double *out);
/* v must be one of `names` (NULL-terminated); *out is its index. */
int jr_enum(struct jr *r, const json_t *v, const char *const *names, int *out);

/* Members of an object. An absent or null optional member leaves *out as
 * it was; an absent required one is "missing required field". */
int jr_get_object(struct jr *r, const json_t *obj, const char *key, enum jr_need need,
                  const char *const *allowed, const json_t **out);
int jr_get_array(struct jr *r, const json_t *obj, const char *key, enum jr_need need,
                 const json_t **out);
int jr_get_string(struct jr *r, const json_t *obj, const char *key, enum jr_need need,
                  const char **out);
int jr_get_bool(struct jr *r, const json_t *obj, const char *key, int *out);
int jr_get_enum(struct jr *r, const json_t *obj, const char *key, const char *const *names,
                int *out);
int jr_get_int(struct jr *r, const json_t *obj, const char *key, enum jr_need need,
               int64_t min, int64_t max, int64_t *out);
int jr_get_number(struct jr *r, const json_t *obj, const char *key, double min, double max,
                  const char *what, double *out);

/* An optional member: NULL when absent or null. */
const json_t *jr_opt(const json_t *obj, const char *key);

#endif
