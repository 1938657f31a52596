/*
 * h_wlprops.c: Run:ai's workload properties, read-only: the workload types
 * (/api/v1/workload-types), their categories (/api/v1/workload-categories)
 * and the workload priorities (/api/v1/workload-priorities).
 *
 * allot's set is fixed: four types, each with the category and the
 * priority class a submission of that type gets when it names none
 * (wl_spec.c, sched_default_priority_class()); the priorities are the
 * scheduler's named priority classes (scheduler/vocab.c). Every id is a
 * fixed UUID, the same on every server, made from a table and an index.
 *
 * Invariants:
 *   1. What these routes answer is what a submission gets: a type's
 *      category and priority are the ones wl_spec.c gives that type.
 *   2. No route here writes; creating, changing or deleting a type is not
 *      served (501, docs/allotd.md).
 */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

enum { K_TYPE = 0xa110c001u, K_CATEGORY = 0xa110c002u, K_PRIORITY = 0xa110c003u };

struct wl_type {
    const char *name, *group; /* Run:ai's Kubernetes kind and group */
    int db_type;              /* enum db_wl_type */
    int category;             /* index in categories[] */
};

static const char *const categories[] = {"Build", "Train", "Deploy"};
#define N_CATEGORIES ((int)(sizeof(categories) / sizeof(categories[0])))

static const struct wl_type types[] = {
    {"TrainingWorkload", "run.ai", DB_TRAINING, 1},
    {"InteractiveWorkload", "run.ai", DB_WORKSPACE, 0},
    {"DistributedWorkload", "run.ai", DB_DISTRIBUTED, 1},
    {"InferenceWorkload", "run.ai", DB_INFERENCE, 2},
};
#define N_TYPES ((int)(sizeof(types) / sizeof(types[0])))

/* The fixed id of entry i of a table. */
static void fixed_id(char out[40], unsigned kind, int i)
{
    snprintf(out, 40, "%08x-0000-4000-8000-%012x", kind, (unsigned)i + 1);
}

/* The index that id names in a table of n entries, or -1. */
static int fixed_index(const char *id, unsigned kind, int n)
{
    char want[40];
    int i;

    for (i = 0; i < n; i++) {
        fixed_id(want, kind, i);
        if (strcmp(want, id) == 0)
            return i;
    }
    return -1;
}

static int sched_type(int db_type)
{
    switch (db_type) {
    case DB_WORKSPACE: return SCHED_WORKSPACE;
    case DB_INFERENCE: return SCHED_INFERENCE;
    case DB_DISTRIBUTED: return SCHED_DISTRIBUTED;
    default: return SCHED_TRAINING;
    }
}

/* The index of the named priority class, or -1. */
static int class_index(const char *name)
{
    const char *n;
    int i, prio;

    for (i = 0; (n = sched_priority_class_at(i, &prio)) != NULL; i++)
        if (strcmp(n, name) == 0)
            return i;
    return -1;
}

static json_t *category_json(int i)
{
    char id[40];

    fixed_id(id, K_CATEGORY, i);
    return json_pack("{s:s, s:s}", "id", id, "name", categories[i]);
}

static json_t *type_json(const struct wl_type *t, int i)
{
    char id[40], cat[40], prio[40];
    const char *pname = sched_default_priority_class(sched_type(t->db_type));

    fixed_id(id, K_TYPE, i);
    fixed_id(cat, K_CATEGORY, t->category);
    fixed_id(prio, K_PRIORITY, class_index(pname));
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "id", id, "name", t->name, "group",
                     t->group, "categoryId", cat, "categoryName", categories[t->category],
                     "priorityId", prio, "priorityName", pname);
}

/* ---- workload types ---- */

static int type_get(const void *row, const char *f, struct api_lv *v)
{
    const struct wl_type *t = row;

    if (strcmp(f, "name") == 0)
        v->s = t->name;
    else if (strcmp(f, "group") == 0)
        v->s = t->group;
    else
        return -1;
    return 0;
}

static json_t *type_row_json(struct api_req *r, const void *row)
{
    (void)r;
    return type_json(row, (int)((const struct wl_type *)row - types));
}

/* GET /workload-types: externalTypesOnly=true lists none (allot's four
 * are built in); filterBy on name and group. */
void api_h_wl_types(struct api_req *r)
{
    struct api_lq q;
    int external = 0, n_kept = 0, *kept = NULL, i;
    json_t *a;

    if (api_query_bool(r, "externalTypesOnly", &external) || api_lq_parse(r, &q) != 0)
        return;
    if (api_lq_select(r, &q, &(struct api_lq_rows){types, external ? 0 : N_TYPES,
                                                   sizeof(types[0]), type_get, type_row_json},
                      &kept, &n_kept) != 0)
        return;
    a = json_array();
    for (i = 0; i < n_kept; i++)
        json_array_append_new(a, type_json(&types[kept[i]], kept[i]));
    api_reply(r, 200, json_pack("{s:o}", "types", a));
    free(kept);
}

void api_h_wl_type_get(struct api_req *r)
{
    int i = fixed_index(r->params[0], K_TYPE, N_TYPES);

    if (i < 0) {
        api_error(r, 404, "Not found", "no such workload type");
        return;
    }
    api_reply(r, 200, type_json(&types[i], i));
}

/* ---- categories ---- */

void api_h_wl_categories(struct api_req *r)
{
    json_t *a = json_array();
    int i;

    for (i = 0; i < N_CATEGORIES; i++)
        json_array_append_new(a, category_json(i));
    api_reply(r, 200, json_pack("{s:o}", "categories", a));
}

void api_h_wl_category_get(struct api_req *r)
{
    int i = fixed_index(r->params[0], K_CATEGORY, N_CATEGORIES);

    if (i < 0) {
        api_error(r, 404, "Not found", "no such workload category");
        return;
    }
    api_reply(r, 200, category_json(i));
}

/* ---- priorities ---- */

struct prio_row {
    int index, value;
    const char *name;
};

static int prio_get(const void *row, const char *f, struct api_lv *v)
{
    const struct prio_row *p = row;

    if (strcmp(f, "name") == 0) {
        v->s = p->name;
    } else if (strcmp(f, "source") == 0) {
        v->s = "allot";
    } else if (strcmp(f, "value") == 0) {
        v->kind = API_LV_NUMBER;
        v->d = p->value;
    } else {
        return -1;
    }
    return 0;
}

static json_t *prio_json(struct api_req *r, const void *row)
{
    const struct prio_row *p = row;
    char id[40];

    (void)r;
    fixed_id(id, K_PRIORITY, p->index);
    return json_pack("{s:s, s:s, s:i, s:s, s:s, s:s}", "id", id, "name", p->name, "value",
                     p->value, "source", "allot", "scopeType", "tenant", "aggregatedPhase",
                     "Ready");
}

/* GET /workload-priorities: the named priority classes; filterBy and
 * sortBy on name, source and value. */
void api_h_wl_priorities(struct api_req *r)
{
    struct prio_row rows[32];
    struct api_lq q;
    int n = 0, n_kept = 0, *kept = NULL, i;
    const char *name;
    json_t *a;

    if (api_lq_parse(r, &q) != 0)
        return;
    while (n < 32 && (name = sched_priority_class_at(n, &rows[n].value)) != NULL) {
        rows[n].index = n;
        rows[n].name = name;
        n++;
    }
    if (api_lq_select(r, &q, &(struct api_lq_rows){rows, n, sizeof(rows[0]), prio_get, prio_json},
                      &kept, &n_kept) != 0)
        return;
    a = json_array();
    for (i = 0; i < n_kept; i++)
        json_array_append_new(a, prio_json(r, &rows[kept[i]]));
    api_reply(r, 200, json_pack("{s:o}", "priorities", a));
    free(kept);
}
