/*
 * h_revisions.c: the revisions of an inference workload, Run:ai's
 * Revision (db/revisions.c keeps them):
 *   GET /api/v1/workloads/inferences/{workloadId}/revisions[/count]
 *   GET /api/v1/workloads/inferences/revisions/{revisionId}
 *   GET /api/v1/workloads/inferences/revisions/{revisionId}/events
 *       (offset, limit, sortOrder), .../history (offset, limit), .../pods
 *
 * A revision is one spec the inference has had: the one it was submitted
 * with (revision 1, whose id is the workload's own), then one per PATCH
 * (api_h_wl_inference_patch). A revision spans from its createdAt to the
 * next one's: its events are the workload's events of that span, its
 * history those events and then its phase (the workload's for the
 * revision in force; Stopped, since the next one's createdAt, for one
 * replaced), its pods the workload's pods while it is in force (a
 * replaced revision's pods were stopped when the next one came: none).
 * deleted=true answers the revisions of a deleted inference, and without
 * it those of a live one, as GET /api/v1/workloads does; a deleted
 * inference's revisions have its deletedAt.
 *
 * Invariant: reading a revision needs the right to read its workload.
 */
#include "api.h"
#include "db_revisions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A workload's revisions, stored or (never PATCHed) its submission as
 * revision 1; -1 replied. */
static int revisions_of(struct api_req *r, const struct db_workload *w, struct db_revision **out,
                        int *n)
{
    int rc = db_revision_list(r->app->db, w->seq, out, n);

    if (rc == DB_OK && *n == 0) {
        *out = calloc(1, sizeof(**out));
        if (!*out || !((*out)->spec = strdup(w->spec ? w->spec : ""))) {
            db_revisions_free(*out, 0);
            *out = NULL;
            rc = DB_ENOMEM;
        } else {
            struct db_revision *v = *out;
            snprintf(v->id, sizeof(v->id), "%s", w->id);
            snprintf(v->created_by, sizeof(v->created_by), "%s", w->created_by);
            snprintf(v->image, sizeof(v->image), "%s", w->image);
            v->workload_seq = w->seq;
            v->number = 1;
            v->created_at = w->created_at;
            v->n_pods = w->n_pods;
            v->min_pods = w->min_pods;
            *n = 1;
        }
    }
    if (rc != DB_OK)
        api_db_error(r, rc, "cannot read the revisions");
    return rc == DB_OK ? 0 : -1;
}

/* The phase of revision v of w, and since when. */
static struct api_phase_at phase_of(const struct db_workload *w, const struct db_revision *v)
{
    if (v->ended_at)
        return (struct api_phase_at){"Stopped", "replaced by the next revision", v->ended_at};
    return (struct api_phase_at){w->phase, w->phase_message, w->phase_updated_at};
}

/* spec.environmentVariables ([{name, value}]) as Run:ai's map. */
static json_t *env_map(const json_t *spec)
{
    json_t *m = json_object(), *e;
    size_t i;

    json_array_foreach(json_object_get(spec, "environmentVariables"), i, e) {
        const char *name = json_string_value(json_object_get(e, "name"));
        const char *value = json_string_value(json_object_get(e, "value"));
        if (name && value)
            json_object_set_new(m, name, json_string(value));
    }
    return m;
}

static json_t *revision_json(const struct db_workload *w, const struct db_revision *v)
{
    json_t *spec = json_loads(v->spec ? v->spec : "", 0, NULL), *o;
    struct api_phase_at ph = phase_of(w, v);
    const char *cmd, *args;
    char name[DB_NAME_LEN + 16];

    snprintf(name, sizeof(name), "%s-%05d", w->name, v->number);
    o = json_pack("{s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:s, s:o, s:o, s:[s], s:{s:i, s:i},"
                  " s:i, s:s, s:s, s:o, s:o}",
                  "type", "runai-revision", "name", name, "id", v->id, "workloadId", w->id,
                  "tenantId", 1, "clusterId", API_CLUSTER_ID, "departmentId", w->department_id,
                  "projectId", w->project_id, "createdAt", api_time(v->created_at), "deletedAt",
                  w->deleted_at ? api_time(w->deleted_at) : json_null(), "images", v->image,
                  "requestedPods", "number", v->n_pods, "min", v->min_pods, "runningPods",
                  v->ended_at || w->deleted_at ? 0 : w->running_pods, "phase", ph.phase,
                  "phaseMessage", ph.message, "phaseUpdatedAt", api_time(ph.at),
                  "environmentVariables", env_map(spec));
    cmd = json_string_value(json_object_get(spec, "command"));
    args = json_string_value(json_object_get(spec, "args"));
    if (o && cmd)
        json_object_set_new(o, "command", json_string(cmd));
    if (o && args)
        json_object_set_new(o, "arguments", json_string(args));
    json_decref(spec);
    return o;
}

/* deleted=true|false: 1 the deleted inference's revisions, 0 a live one's;
 * -1 replied 400. */
static int deleted_in(struct api_req *r)
{
    char buf[8];
    int rc = api_query(r, "deleted", buf, sizeof(buf));

    if (rc == 1)
        return 0;
    if (rc == 0 && (strcmp(buf, "true") == 0 || strcmp(buf, "false") == 0))
        return buf[0] == 't';
    api_error(r, 400, "Bad request", "deleted is true or false");
    return -1;
}

/* The path's inference and its revisions (*n of them); *shown: how many
 * the deleted query keeps (all or none). -1 replied. */
static int listed(struct api_req *r, struct db_workload *w, struct db_revision **v, int *n,
                  int *shown)
{
    int deleted;

    *v = NULL;
    *n = *shown = 0;
    if (api_wl_load(r, API_WL_READ, w) != 0 || (deleted = deleted_in(r)) < 0 ||
        revisions_of(r, w, v, n) != 0)
        return -1;
    /* deleted=true: a deleted inference's; else a live one's */
    *shown = (w->deleted_at != 0) == deleted ? *n : 0;
    return 0;
}

void api_h_revisions(struct api_req *r)
{
    struct db_workload w;
    struct db_revision *v = NULL;
    int n = 0, shown = 0, i;
    json_t *a;

    memset(&w, 0, sizeof(w));
    if (listed(r, &w, &v, &n, &shown) == 0) {
        a = json_array();
        for (i = 0; i < shown; i++)
            json_array_append_new(a, revision_json(&w, &v[i]));
        api_reply(r, 200, json_pack("{s:o}", "revisions", a));
    }
    db_revisions_free(v, n);
    db_workload_clear(&w);
}

void api_h_revisions_count(struct api_req *r)
{
    struct db_workload w;
    struct db_revision *v = NULL;
    int n = 0, shown = 0;

    memset(&w, 0, sizeof(w));
    if (listed(r, &w, &v, &n, &shown) == 0)
        api_reply(r, 200, json_pack("{s:i}", "count", shown));
    db_revisions_free(v, n);
    db_workload_clear(&w);
}

/* The revision the path names, its workload (readable by the caller) and
 * the next revision's createdAt (0: none); -1 replied 404. The first
 * revision of a never PATCHed inference is not stored: its id is the
 * workload's. */
static int revision_load(struct api_req *r, struct db_workload *w, struct db_revision *v)
{
    struct db_revision *all = NULL;
    int n = 0, i, rc;

    memset(v, 0, sizeof(*v));
    rc = db_revision_get(r->app->db, r->params[0], v);
    if (rc == DB_OK)
        rc = db_workload_get_seq(r->app->db, v->workload_seq, w);
    else if (rc == DB_ENOTFOUND)
        rc = db_workload_get(r->app->db, r->params[0], w);
    if (rc == DB_OK && (w->type != DB_INFERENCE ||
                        !api_can(&r->who, API_WL_READ, w->project_id, w->department_id)))
        rc = DB_ENOTFOUND;
    if (rc != DB_OK) {
        api_db_error(r, rc, "no such revision");
        return -1;
    }
    if (v->number == 0) {
        if (revisions_of(r, w, &all, &n) != 0)
            return -1;
        for (i = 0; i < n && strcmp(all[i].id, r->params[0]) != 0; i++)
            ;
        if (i == n) { /* stored since the first read: PATCHed meanwhile */
            db_revisions_free(all, n);
            api_error(r, 404, "Not found", "no such revision");
            return -1;
        }
        *v = all[i];
        all[i].spec = NULL;
        db_revisions_free(all, n);
    }
    return 0;
}

/* Loads the path's revision and replies with fn's answer. */
static void with_revision(struct api_req *r,
                          void (*fn)(struct api_req *, const struct db_workload *,
                                     const struct db_revision *))
{
    struct db_workload w;
    struct db_revision v;

    memset(&w, 0, sizeof(w));
    if (revision_load(r, &w, &v) == 0)
        fn(r, &w, &v);
    free(v.spec);
    db_workload_clear(&w);
}

static void get_one(struct api_req *r, const struct db_workload *w, const struct db_revision *v)
{
    api_reply(r, 200, revision_json(w, v));
}

/* The first revision's span starts with the workload (its Submitted
 * event); a revision in force has no end. */
static int64_t span_from(const struct db_revision *v)
{
    return v->number == 1 ? 0 : v->created_at;
}

static void events(struct api_req *r, const struct db_workload *w, const struct db_revision *v)
{
    api_wl_events_reply(r, w, span_from(v), v->ended_at);
}

static void history(struct api_req *r, const struct db_workload *w, const struct db_revision *v)
{
    struct api_phase_at ph = phase_of(w, v);

    api_wl_history_reply(r, w, span_from(v), v->ended_at, &ph);
}

static void pods(struct api_req *r, const struct db_workload *w, const struct db_revision *v)
{
    int deleted = deleted_in(r);
    json_t *a;

    if (deleted < 0)
        return;
    /* a replaced revision's pods, and a deleted inference's, were stopped */
    if (v->ended_at || (w->deleted_at != 0) != deleted)
        a = json_array();
    else if (!(a = api_wl_pods_json(r, w)))
        return;
    api_reply(r, 200, json_pack("{s:o}", "pods", a));
}

void api_h_revision_get(struct api_req *r)
{
    with_revision(r, get_one);
}

void api_h_revision_events(struct api_req *r)
{
    with_revision(r, events);
}

void api_h_revision_history(struct api_req *r)
{
    with_revision(r, history);
}

void api_h_revision_pods(struct api_req *r)
{
    with_revision(r, pods);
}
