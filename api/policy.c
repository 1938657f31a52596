/*
 * policy.c: the rule engine of workload policies (policy.h).
 *
 * fields[] is the whole of what a policy may speak about: one row per spec
 * field allot honours, with its kind (which says the JSON type of its
 * value and which rule attributes apply) and the workload types that
 * have it. A policy naming anything else is refused, never kept unread.
 *
 *   kind   value               rule attributes (and required, canEdit)
 *   STR    string              options
 *   ARR    array of strings    options (each item)
 *   INT    integer             min, max, step
 *   NUM    number              min, max, step
 *   QTY    quantity string     min, max (compared in MiB)
 *
 * Merge (Run:ai's inheritance, docs/allotd.md "Policies"): the chain is the
 * tenant's policy, the department's, the project's. A field's rule comes
 * whole from the highest scope that has a rule on it: a lower scope cannot
 * loosen what a higher one set. A field's default comes from the lowest
 * scope that has one: the closest scope knows its users best. A default
 * is checked against the merged rule like a submitted value.
 *
 * Apply, per field of the table, in the table's order:
 *   Step 1  canEdit false: the submission may leave the field out or give
 *           the default's value, nothing else;
 *   Step 2  a field left out takes the default, if there is one;
 *   Step 3  required: the field must now have a value;
 *   Step 4  options, min, max, step on the value.
 * The first breach is the answer: the field, its value, the rule and the
 * scope it comes from.
 */
#include "policy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "quantity.h"

enum pol_kind { K_STR, K_ARR, K_INT, K_NUM, K_QTY };

#define T_TRAIN (1u << DB_TRAINING)
#define T_WS (1u << DB_WORKSPACE)
#define T_INF (1u << DB_INFERENCE)
#define T_DIST (1u << DB_DISTRIBUTED)
#define T_ALL (T_TRAIN | T_WS | T_INF | T_DIST)

struct pol_field {
    const char *path;     /* in the spec and in the policy: "image", "compute.x" */
    int kind;             /* enum pol_kind */
    unsigned types;       /* the workload types that have it */
};

static const struct pol_field fields[] = {
    {"image", K_STR, T_ALL},
    {"imagePullPolicy", K_STR, T_ALL},
    {"command", K_STR, T_ALL},
    {"args", K_STR, T_ALL},
    {"workingDir", K_STR, T_ALL},
    {"nodeType", K_STR, T_ALL},
    {"nodePools", K_ARR, T_ALL},
    {"priorityClass", K_STR, T_ALL},
    {"preemptibility", K_STR, T_ALL},
    {"terminationGracePeriodSeconds", K_INT, T_ALL},
    {"backoffLimit", K_INT, T_TRAIN | T_WS | T_DIST},
    {"parallelism", K_INT, T_TRAIN},
    {"completions", K_INT, T_TRAIN},
    {"distributedFramework", K_STR, T_DIST},
    {"numWorkers", K_INT, T_DIST},
    {"minReplicas", K_INT, T_DIST},
    {"maxReplicas", K_INT, T_DIST},
    {"compute.gpuDevicesRequest", K_INT, T_ALL},
    {"compute.gpuRequestType", K_STR, T_ALL},
    {"compute.gpuPortionRequest", K_NUM, T_ALL},
    {"compute.gpuMemoryRequest", K_QTY, T_ALL},
    {"compute.cpuCoreRequest", K_NUM, T_ALL},
    {"compute.cpuMemoryRequest", K_QTY, T_ALL},
};
#define N_FIELDS ((int)(sizeof(fields) / sizeof(fields[0])))

/* The rule attributes each kind takes, beyond required and canEdit. */
static const char *const kind_attrs[][4] = {
    [K_STR] = {"options", NULL},
    [K_ARR] = {"options", NULL},
    [K_INT] = {"min", "max", "step", NULL},
    [K_NUM] = {"min", "max", "step", NULL},
    [K_QTY] = {"min", "max", NULL},
};

static const char *const kind_words[] = {
    [K_STR] = "a string", [K_ARR] = "an array of strings", [K_INT] = "an integer",
    [K_NUM] = "a number", [K_QTY] = "a quantity (20G, 40Gi, 500M)",
};

/* ---- paths ---- */

/* The section of a policy's defaults or rules that holds the fields:
 * itself, or its "worker" for distributed workloads. */
static json_t *section(json_t *o, int type)
{
    if (!json_is_object(o))
        return NULL;
    return type == DB_DISTRIBUTED ? json_object_get(o, "worker") : o;
}

/* The value at a field's path in o; NULL when absent or null. */
static json_t *path_get(json_t *o, const char *path)
{
    const char *dot = strchr(path, '.');
    char head[32];
    json_t *v;

    if (!json_is_object(o))
        return NULL;
    if (dot) {
        snprintf(head, sizeof(head), "%.*s", (int)(dot - path), path);
        return path_get(json_object_get(o, head), dot + 1);
    }
    v = json_object_get(o, path);
    return json_is_null(v) ? NULL : v;
}

/* Sets v (a new reference, stolen) at the path in o, making the objects
 * on the way; -1 if one on the way is not an object. */
static int path_set(json_t *o, const char *path, json_t *v)
{
    const char *dot = strchr(path, '.');
    char head[32];
    json_t *sub;

    if (!dot)
        return json_object_set_new(o, path, v);
    snprintf(head, sizeof(head), "%.*s", (int)(dot - path), path);
    sub = json_object_get(o, head);
    if (!sub || json_is_null(sub)) {
        sub = json_object();
        json_object_set_new(o, head, sub);
    }
    if (!json_is_object(sub)) {
        json_decref(v);
        return -1;
    }
    return path_set(sub, dot + 1, v);
}

static void path_del(json_t *o, const char *path)
{
    const char *dot = strchr(path, '.');
    char head[32];

    if (!json_is_object(o))
        return;
    if (!dot) {
        json_object_del(o, path);
        return;
    }
    snprintf(head, sizeof(head), "%.*s", (int)(dot - path), path);
    path_del(json_object_get(o, head), dot + 1);
}

static const struct pol_field *field_of(const char *path, int type)
{
    int i;

    for (i = 0; i < N_FIELDS; i++)
        if (strcmp(fields[i].path, path) == 0)
            return fields[i].types & (1u << type) ? &fields[i] : NULL;
    return NULL;
}

/* ---- values ---- */

/* v as a number for min, max and step (MiB for a quantity); -1 if it is
 * not one of the kind. */
static int as_number(const json_t *v, int kind, double *out)
{
    int64_t mib;

    if (kind == K_QTY) {
        if (!json_is_string(v) || quantity_mib(json_string_value(v), &mib) != 0)
            return -1;
        *out = (double)mib;
        return 0;
    }
    if (kind == K_INT ? !json_is_integer(v) : !json_is_number(v))
        return -1;
    *out = json_number_value(v);
    return 0;
}

static int value_ok(const json_t *v, int kind)
{
    double d;
    size_t i;

    switch (kind) {
    case K_STR:
        return json_is_string(v);
    case K_ARR:
        if (!json_is_array(v))
            return 0;
        for (i = 0; i < json_array_size(v); i++)
            if (!json_is_string(json_array_get(v, i)))
                return 0;
        return 1;
    default:
        return as_number(v, kind, &d) == 0;
    }
}

/* ---- checking a policy's body ---- */

static int bad(char *msg, size_t len, const char *fmt, const char *a, const char *b)
{
    snprintf(msg, len, fmt, a, b);
    return -1;
}

static int options_ok(json_t *opts)
{
    size_t i;

    if (!json_is_array(opts))
        return 0;
    for (i = 0; i < json_array_size(opts); i++) {
        json_t *o = json_array_get(opts, i), *d = json_object_get(o, "displayed");
        if (!json_is_string(json_object_get(o, "value")) || (d && !json_is_string(d) &&
                                                             !json_is_null(d)))
            return 0;
    }
    return 1;
}

static int attr_allowed(const char *key, int kind)
{
    int i;

    if (strcmp(key, "required") == 0 || strcmp(key, "canEdit") == 0)
        return 1;
    for (i = 0; kind_attrs[kind][i]; i++)
        if (strcmp(kind_attrs[kind][i], key) == 0)
            return 1;
    return 0;
}

/* One field's rule: an object of the kind's attributes, each of its type. */
static int rule_ok(json_t *rule, const struct pol_field *f, char *msg, size_t len)
{
    const char *key;
    json_t *v;
    double lo, hi;

    if (!json_is_object(rule))
        return bad(msg, len, "rules.%s must be an object%s", f->path, "");
    json_object_foreach(rule, key, v) {
        if (json_is_null(v))
            continue;
        if (!attr_allowed(key, f->kind))
            return bad(msg, len, "rules.%s.%s is not supported: allot's rules are required, "
                       "canEdit, options, min, max and step, by the field's kind", f->path, key);
        if ((strcmp(key, "required") == 0 || strcmp(key, "canEdit") == 0) && !json_is_boolean(v))
            return bad(msg, len, "rules.%s.%s must be true or false", f->path, key);
        if (strcmp(key, "options") == 0 && !options_ok(v))
            return bad(msg, len, "rules.%s.options must be [{value, displayed}]%s", f->path, "");
        if ((strcmp(key, "min") == 0 || strcmp(key, "max") == 0 || strcmp(key, "step") == 0) &&
            as_number(v, f->kind, &lo) != 0)
            return bad(msg, len, "rules.%s.%s is not of the field's kind", f->path, key);
    }
    if (path_get(rule, "min") && path_get(rule, "max") &&
        as_number(path_get(rule, "min"), f->kind, &lo) == 0 &&
        as_number(path_get(rule, "max"), f->kind, &hi) == 0 && lo > hi)
        return bad(msg, len, "rules.%s: min is above max%s", f->path, "");
    if (path_get(rule, "step") && as_number(path_get(rule, "step"), f->kind, &lo) == 0 && lo <= 0)
        return bad(msg, len, "rules.%s.step must be above 0%s", f->path, "");
    return 0;
}

/* Every key of a defaults or rules section, walked into compute. */
static int section_ok(json_t *o, const char *prefix, int type, int rules, char *msg, size_t len)
{
    const char *key;
    json_t *v;
    char path[96];
    const struct pol_field *f;

    json_object_foreach(o, key, v) {
        snprintf(path, sizeof(path), "%s%s", prefix, key);
        if (json_is_null(v))
            continue;
        if (!prefix[0] && strcmp(key, "compute") == 0 && json_is_object(v)) {
            if (section_ok(v, "compute.", type, rules, msg, len))
                return -1;
            continue;
        }
        f = field_of(path, type);
        if (!f)
            return bad(msg, len, "%s.%s is not a field allot's policies take for this workload "
                       "type (docs/allotd.md, Policies)", rules ? "rules" : "defaults", path);
        if (rules ? rule_ok(v, f, msg, len) : !value_ok(v, f->kind))
            return rules ? -1 : bad(msg, len, "defaults.%s must be %s", path,
                                    kind_words[f->kind]);
    }
    return 0;
}

/* For distributed workloads the fields sit under worker; master must say
 * nothing (it runs the workers' spec). */
static int sections_ok(json_t *o, int type, int rules, char *msg, size_t len)
{
    const char *what = rules ? "rules" : "defaults";
    json_t *m;

    if (!o || json_is_null(o))
        return 0;
    if (!json_is_object(o))
        return bad(msg, len, "%s must be an object%s", what, "");
    if (type == DB_DISTRIBUTED) {
        const char *key;
        json_t *v;
        m = json_object_get(o, "master");
        if (m && !json_is_null(m) && !(json_is_object(m) && json_object_size(m) == 0))
            return bad(msg, len, "%s.master is not supported: the master runs the workers' "
                       "spec; give its %s under worker", what, what);
        json_object_foreach(o, key, v)
            if (strcmp(key, "master") && strcmp(key, "worker"))
                return bad(msg, len, "%s.%s: a distributed policy has master and worker only",
                           what, key);
        o = json_object_get(o, "worker");
        if (!o || json_is_null(o))
            return 0;
        if (!json_is_object(o))
            return bad(msg, len, "%s.worker must be an object%s", what, "");
    }
    return section_ok(o, "", type, rules, msg, len);
}

int pol_check_body(json_t *policy, int type, char *msg, size_t len)
{
    const char *key;
    json_t *v;

    if (!json_is_object(policy))
        return bad(msg, len, "policy must be an object%s%s", "", "");
    json_object_foreach(policy, key, v) {
        if (strcmp(key, "defaults") && strcmp(key, "rules") &&
            !(strcmp(key, "imposedAssets") == 0 && (json_is_null(v) || (json_is_array(v) &&
                                                                        !json_array_size(v)))))
            return bad(msg, len, "policy.%s is not supported: a policy has defaults and rules%s",
                       key, "");
    }
    if (sections_ok(json_object_get(policy, "defaults"), type, 0, msg, len) ||
        sections_ok(json_object_get(policy, "rules"), type, 1, msg, len))
        return -1;
    return pol_apply(&(struct pol_layer){"new", "", "", 0, policy}, 1, type, NULL,
                     POL_DEFAULTS_ONLY, msg, len);
}

/* ---- merging ---- */

/* The layer whose rule (rules) or default (!rules) governs field f: the
 * highest with a rule, the lowest with a default; -1 if none. */
static int governing(const struct pol_layer *layers, int n, int type, const struct pol_field *f,
                     int rules)
{
    int i;

    for (i = 0; i < n; i++) {
        int at = rules ? i : n - 1 - i;
        json_t *p = layers[at].policy;
        if (path_get(section(json_object_get(p, rules ? "rules" : "defaults"), type), f->path))
            return at;
    }
    return -1;
}

static json_t *source_of(const struct pol_layer *l)
{
    json_t *s = json_pack("{s:s}", "scope", l->scope);

    if (strcmp(l->scope, "department") == 0)
        json_object_set_new(s, "departmentId", json_string(l->scope_id));
    else if (strcmp(l->scope, "project") == 0)
        json_object_set_new(s, "projectId", json_integer(l->project_seq));
    return s;
}

static json_t *wrap(json_t *o, int type)
{
    return type == DB_DISTRIBUTED ? json_pack("{s:o}", "worker", o) : o;
}

json_t *pol_merge(const struct pol_layer *layers, int n, int type)
{
    json_t *defaults = json_object(), *rules = json_object();
    int i, at;

    for (i = 0; i < N_FIELDS; i++) {
        const struct pol_field *f = &fields[i];
        if (!(f->types & (1u << type)))
            continue;
        at = governing(layers, n, type, f, 0);
        if (at >= 0)
            path_set(defaults, f->path, json_deep_copy(path_get(
                section(json_object_get(layers[at].policy, "defaults"), type), f->path)));
        at = governing(layers, n, type, f, 1);
        if (at >= 0) {
            json_t *rule = json_deep_copy(path_get(
                section(json_object_get(layers[at].policy, "rules"), type), f->path));
            json_object_set_new(rule, "sourceOfRule", source_of(&layers[at]));
            path_set(rules, f->path, rule);
        }
    }
    return json_pack("{s:o, s:o}", "defaults", wrap(defaults, type), "rules", wrap(rules, type));
}

/* ---- applying ---- */

struct breach {
    const struct pol_field *f;
    const json_t *value;
    const char *rule;               /* "required", "max", ... */
    const json_t *limit;            /* the rule's value */
    const struct pol_layer *layer;  /* whose rule */
    int from_default;
};

static int say(const struct breach *b, char *msg, size_t len)
{
    char *value = b->value ? json_dumps(b->value, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
    char *limit = b->limit ? json_dumps(b->limit, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
    const struct pol_layer *l = b->layer;

    snprintf(msg, len, "spec.%s%s%s%s breaks the rule %s%s%s of the %s policy%s%s%s", b->f->path,
             value ? " " : "", value ? value : "", b->from_default ? " (its default)" : "",
             b->rule, limit ? " " : "", limit ? limit : "", l->scope, l->scope_name[0] ? " (" : "",
             l->scope_name, l->scope_name[0] ? ")" : "");
    free(value);
    free(limit);
    return -1;
}

static int in_options(const json_t *v, json_t *opts)
{
    size_t i;

    for (i = 0; i < json_array_size(opts); i++)
        if (json_equal((json_t *)v, json_object_get(json_array_get(opts, i), "value")))
            return 1;
    return 0;
}

/* Step 4: options, min, max and step; 0 or the breach filled in. */
static int value_keeps(json_t *rule, struct breach *b)
{
    json_t *opts = path_get(rule, "options"), *lim;
    double v, x, lo = 0;
    size_t i;

    if (opts && json_array_size(opts)) {
        for (i = 0; b->f->kind == K_ARR && i < json_array_size(b->value); i++)
            if (!in_options(json_array_get(b->value, i), opts))
                return b->rule = "options", b->limit = opts, -1;
        if (b->f->kind != K_ARR && !in_options(b->value, opts))
            return b->rule = "options", b->limit = opts, -1;
    }
    if (b->f->kind == K_STR || b->f->kind == K_ARR || as_number(b->value, b->f->kind, &v) != 0)
        return 0;
    if ((lim = path_get(rule, "min")) && as_number(lim, b->f->kind, &x) == 0 && v < x)
        return b->rule = "min", b->limit = lim, -1;
    if ((lim = path_get(rule, "max")) && as_number(lim, b->f->kind, &x) == 0 && v > x)
        return b->rule = "max", b->limit = lim, -1;
    if (path_get(rule, "min"))
        as_number(path_get(rule, "min"), b->f->kind, &lo);
    if ((lim = path_get(rule, "step")) && as_number(lim, b->f->kind, &x) == 0 && x > 0) {
        double k = (v - lo) / x;
        if (fabs(k - nearbyint(k)) > 1e-9)
            return b->rule = "step", b->limit = lim, -1;
    }
    return 0;
}

/* Steps 1 to 4 for one field. */
static int field_keeps(const struct pol_layer *layers, int n, int type, json_t *spec,
                       unsigned flags, struct breach *b)
{
    int rat = governing(layers, n, type, b->f, 1), dat = governing(layers, n, type, b->f, 0);
    json_t *rule, *def, *given;

    if (rat < 0 && dat < 0)
        return 0; /* no policy speaks of the field: nothing to keep or give */
    rule = rat >= 0 ? path_get(section(json_object_get(layers[rat].policy, "rules"), type),
                               b->f->path) : NULL;
    def = dat >= 0 ? path_get(section(json_object_get(layers[dat].policy, "defaults"), type),
                              b->f->path) : NULL;
    given = spec ? path_get(spec, b->f->path) : NULL;
    b->layer = rat >= 0 ? &layers[rat] : NULL;
    b->value = given ? given : def;
    b->from_default = !given && def;
    if (rule && !(flags & POL_DEFAULTS_ONLY) && json_is_false(path_get(rule, "canEdit")) &&
        given && (!def || !json_equal(given, def)))
        return b->rule = "canEdit", b->limit = json_false(), -1;
    if (!given && def && spec && path_set(spec, b->f->path, json_deep_copy(def)) != 0)
        return b->rule = "the spec's shape", b->limit = NULL, -1;
    if (!rule)
        return 0;
    if (!b->value)
        return json_is_true(path_get(rule, "required")) &&
                       !(flags & (POL_DEFAULTS_ONLY | POL_PARTIAL))
                   ? (b->rule = "required", b->limit = json_true(), -1) : 0;
    return value_keeps(rule, b);
}

int pol_apply(const struct pol_layer *layers, int n, int type, json_t *spec, unsigned flags,
              char *msg, size_t len)
{
    struct breach b;
    int i;

    for (i = 0; i < n && !layers[i].policy; i++)
        ;
    if (i == n)
        return 0; /* no layer holds a policy: no field has a rule or a default */
    for (i = 0; i < N_FIELDS; i++) {
        if (!(fields[i].types & (1u << type)))
            continue;
        memset(&b, 0, sizeof(b));
        b.f = &fields[i];
        if (field_keeps(layers, n, type, spec, flags, &b) != 0)
            return say(&b, msg, len);
    }
    return 0;
}

/* ---- changing a policy ---- */

int pol_patch(json_t *policy, json_t *patch)
{
    const char *key;
    json_t *v, *mine;

    if (!json_is_object(policy) || !json_is_object(patch))
        return -1;
    json_object_foreach(patch, key, v) {
        mine = json_object_get(policy, key);
        if (json_is_null(v))
            json_object_del(policy, key);
        else if (json_is_object(v) && json_is_object(mine))
            pol_patch(mine, v);
        else
            json_object_set(policy, key, v);
    }
    return 0;
}

int pol_reset(json_t *policy, json_t *reset, int type, char *msg, size_t len)
{
    size_t i;

    if (!reset || json_is_null(reset))
        return 0;
    if (!json_is_array(reset))
        return bad(msg, len, "reset must be an array of field paths%s%s", "", "");
    for (i = 0; i < json_array_size(reset); i++) {
        json_t *p = json_array_get(reset, i);
        const char *path = json_string_value(p);
        if (path && type == DB_DISTRIBUTED && strncmp(path, "worker.", 7) == 0)
            path += 7;
        if (!path || !field_of(path, type))
            return bad(msg, len, "reset: %s is not a field allot's policies take%s",
                       path ? path : "(not a string)", "");
        path_del(section(json_object_get(policy, "defaults"), type), path);
        path_del(section(json_object_get(policy, "rules"), type), path);
    }
    return 0;
}
