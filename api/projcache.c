/*
 * projcache.c: the projects a submission names, cached: id -> seq, name,
 * department and effective node types, so a submission reads no queue
 * row while the organization is unchanged; and, where workloads are read
 * from memory (PostgreSQL, readcache.c), every project's seq, id and
 * department (api_project_refs()), from which a list of workloads finds
 * the projects its caller may read without a round trip to the server.
 *
 * Invariants:
 *   1. An entry, and the list of every project, is used only while its
 *      generation equals the scheduler's organization generation
 *      (ctl_sched_org_generation()), which every change to departments,
 *      projects, pools and nodes advances (another replica's too, through
 *      the change feed); the generation is read before the database, so
 *      an entry loaded during a change is stale when stored.
 *   2. The list of every project is kept only where the read cache is
 *      (app->rcache), and used only until --read-max-age-ms after its read
 *      began, as the workloads read from memory are.
 *   3. Memory is bounded: a fixed table, a new entry replaces its slot;
 *      one list of every project, replaced whole.
 */
#include "api.h"
#include "clock.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define PJ_SLOTS 256

struct pj_entry {
    int used;
    uint64_t generation;
    struct api_project p;
};

struct api_projcache {
    pthread_mutex_t mu;
    struct pj_entry slots[PJ_SLOTS];
    struct api_project_ref *refs;   /* every project; NULL: none kept */
    int n_refs;
    uint64_t refs_generation;
    int64_t refs_at_us;             /* the monotonic clock before their read */
};

struct api_projcache *api_projcache_new(void)
{
    struct api_projcache *pc = calloc(1, sizeof(*pc));

    if (pc)
        pthread_mutex_init(&pc->mu, NULL);
    return pc;
}

void api_projcache_free(struct api_projcache *pc)
{
    if (!pc)
        return;
    pthread_mutex_destroy(&pc->mu);
    free(pc->refs);
    free(pc);
}

static unsigned slot_of(const char *id)
{
    unsigned h = 2166136261u;

    for (; *id; id++)
        h = (h ^ (unsigned char)*id) * 16777619u;
    return h % PJ_SLOTS;
}

/* Effective scheduling rules: per rule the stricter (smaller) of the
 * project's and its department's, as a department's rule can only be
 * tightened by its projects. */
static void merge_rules(const char *own, const char *dept, char *out, size_t len)
{
    json_t *a = own[0] ? json_loads(own, 0, NULL) : NULL;
    json_t *b = dept[0] ? json_loads(dept, 0, NULL) : NULL, *v, *mine;
    const char *key;
    char *text;

    out[0] = 0;
    if (!a)
        a = json_object();
    json_object_foreach(b, key, v) {
        mine = json_object_get(a, key);
        if (json_is_integer(v) && json_integer_value(v) > 0 &&
            (!json_is_integer(mine) || json_integer_value(mine) <= 0 ||
             json_integer_value(v) < json_integer_value(mine)))
            json_object_set(a, key, v);
    }
    text = a && json_object_size(a) ? json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (text && strlen(text) < len)
        memcpy(out, text, strlen(text) + 1);
    free(text);
    json_decref(a);
    json_decref(b);
}

/* Reads the project, its effective node types and rules from the database. */
static int load(struct db *db, const char *id, struct api_project *out)
{
    struct db_queue *q = calloc(1, sizeof(*q));
    int rc;

    if (!q)
        return DB_ENOMEM;
    rc = db_queue_get(db, id, q);
    if (rc == DB_OK && q->kind != DB_PROJECT)
        rc = DB_ENOTFOUND;
    if (rc == DB_OK) {
        memset(out, 0, sizeof(*out));
        out->seq = q->seq;
        memcpy(out->id, q->id, sizeof(out->id));
        memcpy(out->name, q->name, sizeof(out->name));
        memcpy(out->parent_id, q->parent_id, sizeof(out->parent_id));
        memcpy(out->parent_name, q->parent_name, sizeof(out->parent_name));
        memcpy(out->node_types, q->node_types, sizeof(out->node_types));
        memcpy(out->rules, q->scheduling_rules, sizeof(out->rules));
        if (db_queue_get(db, out->parent_id, q) == DB_OK) {
            if (!out->node_types[0])
                memcpy(out->node_types, q->node_types, sizeof(out->node_types));
            merge_rules(out->rules, q->scheduling_rules, out->rules, sizeof(out->rules));
        }
    }
    free(q);
    return rc;
}

int api_project_lookup(struct api_app *app, const char *id, struct api_project *out)
{
    struct api_projcache *pc = app->projc;
    uint64_t gen = ctl_sched_org_generation(app->sched);
    struct pj_entry *e;
    int rc;

    if (pc) {
        e = &pc->slots[slot_of(id)];
        pthread_mutex_lock(&pc->mu);
        rc = e->used && e->generation == gen && strcmp(e->p.id, id) == 0;
        if (rc)
            *out = e->p;
        pthread_mutex_unlock(&pc->mu);
        if (rc)
            return DB_OK;
    }
    rc = load(app->db, id, out);
    if (rc != DB_OK || !pc)
        return rc;
    e = &pc->slots[slot_of(id)];
    pthread_mutex_lock(&pc->mu);
    e->used = 1;
    e->generation = gen;
    e->p = *out;
    pthread_mutex_unlock(&pc->mu);
    return DB_OK;
}

/* ---- every project (a list's scope) ---- */

static struct api_project_ref *refs_copy(const struct api_project_ref *refs, int n)
{
    struct api_project_ref *out = malloc(sizeof(*out) * ((size_t)n + 1));

    if (out && n > 0)
        memcpy(out, refs, sizeof(*out) * (size_t)n);
    return out;
}

/* Every project's refs from the database. */
static int refs_load(struct db *db, struct api_project_ref **out, int *n)
{
    struct db_queue *ps = NULL;
    int i, count = 0, rc = db_queue_list(db, DB_PROJECT, &ps, &count);

    *out = NULL;
    *n = 0;
    if (rc != DB_OK)
        return rc;
    *out = malloc(sizeof(**out) * ((size_t)count + 1));
    if (!*out) {
        free(ps);
        return DB_ENOMEM;
    }
    for (i = 0; i < count; i++) {
        (*out)[i].seq = ps[i].seq;
        memcpy((*out)[i].id, ps[i].id, sizeof((*out)[i].id));
        memcpy((*out)[i].parent_id, ps[i].parent_id, sizeof((*out)[i].parent_id));
    }
    *n = count;
    free(ps);
    return DB_OK;
}

int api_project_refs(struct api_app *app, struct api_project_ref **out, int *n)
{
    struct api_projcache *pc = app->rcache ? app->projc : NULL;   /* Invariant 2 */
    uint64_t gen = ctl_sched_org_generation(app->sched);         /* Invariant 1: before the read */
    int64_t now_us = clock_mono_us(), max_age_us = (int64_t)app->cfg.read_max_age_ms * 1000;
    struct api_project_ref *kept;
    int rc, hit = 0;

    *out = NULL;
    *n = 0;
    if (pc) {
        pthread_mutex_lock(&pc->mu);
        if (pc->refs && pc->refs_generation == gen && now_us - pc->refs_at_us < max_age_us) {
            *out = refs_copy(pc->refs, pc->n_refs);
            *n = *out ? pc->n_refs : 0;
            hit = 1;
        }
        pthread_mutex_unlock(&pc->mu);
        if (hit)
            return *out ? DB_OK : DB_ENOMEM;
    }
    rc = refs_load(app->db, out, n);
    if (rc != DB_OK || !pc || !(kept = refs_copy(*out, *n)))
        return rc;
    pthread_mutex_lock(&pc->mu);
    free(pc->refs);
    pc->refs = kept;
    pc->n_refs = *n;
    pc->refs_generation = gen;
    pc->refs_at_us = now_us;
    pthread_mutex_unlock(&pc->mu);
    return DB_OK;
}
