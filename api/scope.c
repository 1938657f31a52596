/*
 * scope.c: the scopes of assets and generic secrets (scope.h): reading one
 * from a request's meta with the right to manage it, the rights on one,
 * what meta answers of it, and the list routes' scope filters.
 *
 * Invariants:
 *   1. A scope is managed only by a caller with API_ORG_WRITE on it; one
 *      it may read but not manage answers 403, one it cannot read 400 as
 *      if absent.
 *   2. The tenant's scope takes a tenant-wide right.
 */
#include "scope.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The project of a project scope (DB_ENOTFOUND for another scope). */
static int project_of(struct api_req *r, const char *scope, const char *scope_id,
                      struct api_project *p)
{
    memset(p, 0, sizeof(*p));
    return strcmp(scope, "project") == 0 ? api_project_lookup(r->app, scope_id, p)
                                         : DB_ENOTFOUND;
}

int api_scope_may(struct api_req *r, const char *scope, const char *scope_id, unsigned perm)
{
    struct api_project p;

    if (strcmp(scope, "tenant") == 0)
        return api_can(&r->who, perm, "", "");
    if (strcmp(scope, "department") == 0)
        return api_can(&r->who, perm, "", scope_id);
    if (project_of(r, scope, scope_id, &p) != DB_OK)
        return api_can(&r->who, perm, "", "");
    return api_can(&r->who, perm, p.id, p.parent_id);
}

int api_project_by_ref(struct api_req *r, json_t *v, struct api_project *out)
{
    struct db_queue *q = NULL;
    int n = 0, i, rc;
    int64_t seq;

    if (json_is_string(v))
        return api_project_lookup(r->app, json_string_value(v), out);
    if (!json_is_integer(v))
        return DB_EINVAL;
    seq = json_integer_value(v);
    rc = db_queue_list(r->app->db, DB_PROJECT, &q, &n);
    if (rc != DB_OK)
        return rc;
    rc = DB_ENOTFOUND;
    for (i = 0; i < n; i++)
        if (q[i].seq == seq) {
            rc = api_project_lookup(r->app, q[i].id, out);
            break;
        }
    free(q);
    return rc;
}

static int refuse(struct api_req *r, const char *details)
{
    api_error(r, 400, "Bad request", details);
    return -1;
}

/* 0 when the caller manages the scope; else -1 replied: 403 when it may
 * read it, 400 naming `field` otherwise (rc: the lookup's code). */
static int managed(struct api_req *r, int rc, const char *id, const char *parent,
                   const char *field, const char *what, const char *unit)
{
    char details[160];

    if (rc == DB_OK && api_can(&r->who, API_ORG_WRITE, id, parent))
        return 0;
    if (rc == DB_OK && api_can(&r->who, API_ORG_READ, id, parent)) {
        snprintf(details, sizeof(details), "the caller may not manage this %s's %ss", unit, what);
        return api_error(r, 403, "Forbidden", details), -1;
    }
    if (rc == DB_OK || rc == DB_ENOTFOUND || rc == DB_EINVAL) {
        snprintf(details, sizeof(details), "meta.%s names no %s", field, unit);
        return refuse(r, details);
    }
    return api_db_error(r, rc, "cannot read the scope"), -1;
}

static int project_scope_in(struct api_req *r, json_t *pid, struct api_scope *s,
                            const char *what)
{
    char details[128];
    struct api_project p;
    int rc;

    if (!pid || json_is_null(pid)) {
        snprintf(details, sizeof(details), "meta.projectId is required for a project's %s",
                 what);
        return refuse(r, details);
    }
    rc = api_project_by_ref(r, pid, &p);
    if (managed(r, rc, p.id, p.parent_id, "projectId", what, "project") != 0)
        return -1;
    snprintf(s->scope_id, sizeof(s->scope_id), "%s", p.id);
    return 0;
}

static int department_scope_in(struct api_req *r, const char *did, struct api_scope *s,
                               const char *what)
{
    char details[128];
    struct db_queue *q;
    int rc;

    if (!did[0]) {
        snprintf(details, sizeof(details),
                 "meta.departmentId is required for a department's %s", what);
        return refuse(r, details);
    }
    q = calloc(1, sizeof(*q));
    rc = q ? db_queue_get(r->app->db, did, q) : DB_ENOMEM;
    if (rc == DB_OK && q->kind != DB_DEPARTMENT)
        rc = DB_ENOTFOUND;
    free(q);
    if (managed(r, rc, "", did, "departmentId", what, "department") != 0)
        return -1;
    snprintf(s->scope_id, sizeof(s->scope_id), "%s", did);
    return 0;
}

int api_scope_in(struct api_req *r, json_t *meta, struct api_scope *s, const char *what)
{
    char did[DB_ID_LEN] = "", details[128];
    json_t *pid = json_object_get(meta, "projectId");

    memset(s, 0, sizeof(*s));
    if (api_json_str(r, meta, "scope", s->scope, sizeof(s->scope), 1) ||
        api_json_str(r, meta, "departmentId", did, sizeof(did), 0))
        return -1;
    if (strcmp(s->scope, "project") == 0)
        return project_scope_in(r, pid, s, what);
    if (pid && !json_is_null(pid)) {
        snprintf(details, sizeof(details),
                 "meta.projectId is for a project's %s (scope project)", what);
        return refuse(r, details);
    }
    if (strcmp(s->scope, "department") == 0)
        return department_scope_in(r, did, s, what);
    if (did[0]) {
        snprintf(details, sizeof(details),
                 "meta.departmentId is for a department's %s (scope department)", what);
        return refuse(r, details);
    }
    if (strcmp(s->scope, "tenant") == 0 && !api_can(&r->who, API_ORG_WRITE, "", "")) {
        snprintf(details, sizeof(details), "the caller may not manage the tenant's %ss", what);
        return api_error(r, 403, "Forbidden", details), -1;
    }
    if (strcmp(s->scope, "tenant") == 0)
        return 0;
    return refuse(r, "meta.scope: project, department or tenant (allot has one cluster: its"
                     " tenant)");
}

void api_scope_meta(struct api_req *r, json_t *meta, const char *scope, const char *scope_id)
{
    struct api_project p;

    json_object_set_new(meta, "clusterId", json_string(API_CLUSTER_ID));
    json_object_set_new(meta, "projectId", json_null());
    json_object_set_new(meta, "projectName", json_null());
    json_object_set_new(meta, "departmentId", json_null());
    if (strcmp(scope, "department") == 0)
        json_object_set_new(meta, "departmentId", json_string(scope_id));
    if (project_of(r, scope, scope_id, &p) == DB_OK) {
        json_object_set_new(meta, "projectId", json_integer(p.seq));
        json_object_set_new(meta, "projectName", json_string(p.name));
    }
}

int api_scope_filter_in(struct api_req *r, struct api_scope_filter *f)
{
    char pid[64] = "";
    json_t *ref;
    int rc;

    memset(f, 0, sizeof(*f));
    f->r = r;
    if (api_query(r, "name", f->name, sizeof(f->name)) < 0 ||
        api_query(r, "scope", f->scope, sizeof(f->scope)) < 0 ||
        api_query(r, "projectId", pid, sizeof(pid)) < 0 ||
        api_query(r, "departmentId", f->department_id, sizeof(f->department_id)) < 0 ||
        api_query(r, "clusterId", f->cluster_id, sizeof(f->cluster_id)) < 0)
        return refuse(r, "a filter is too long");
    if (api_query_bool(r, "includeDescendants", &f->descendants) != 0)
        return -1;
    if (f->descendants && f->scope[0])
        return refuse(r, "includeDescendants and scope exclude each other (Run:ai's document)");
    if (strcmp(f->scope, "cluster") == 0) /* allot's one cluster is its tenant */
        snprintf(f->scope, sizeof(f->scope), "tenant");
    if (!pid[0])
        return 0;
    ref = pid[strspn(pid, "0123456789")] == 0 ? json_integer(strtoll(pid, NULL, 10))
                                              : json_string(pid);
    rc = api_project_by_ref(r, ref, &f->project);
    json_decref(ref);
    if (rc == DB_ENOTFOUND || rc == DB_EINVAL)
        return refuse(r, "projectId names no project");
    if (rc != DB_OK)
        return api_db_error(r, rc, "cannot read the project"), -1;
    f->by_project = 1;
    return 0;
}

int api_scope_seen(const char *scope, const char *scope_id, const struct api_project *p)
{
    return strcmp(scope, "tenant") == 0 ||
           (strcmp(scope, "department") == 0 && strcmp(scope_id, p->parent_id) == 0) ||
           (strcmp(scope, "project") == 0 && strcmp(scope_id, p->id) == 0);
}

/* Is a project-scoped asset of scope_id in department did? */
static int in_department(const struct api_scope_filter *f, const char *scope,
                         const char *scope_id, const char *did)
{
    struct api_project p;

    return strcmp(scope, "project") == 0 && project_of(f->r, scope, scope_id, &p) == DB_OK &&
           strcmp(p.parent_id, did) == 0;
}

/* departmentId: the department's and the tenant's; with
 * includeDescendants, its projects' too. */
static int department_pass(const struct api_scope_filter *f, const char *scope,
                           const char *scope_id)
{
    const char *did = f->department_id;

    return !did[0] || strcmp(scope, "tenant") == 0 ||
           (strcmp(scope, "department") == 0 && strcmp(scope_id, did) == 0) ||
           (f->descendants && in_department(f, scope, scope_id, did));
}

/* clusterId: allot's cluster is its tenant, its descendants every scope. */
static int cluster_pass(const struct api_scope_filter *f, const char *scope)
{
    if (!f->cluster_id[0])
        return 1;
    if (strcmp(f->cluster_id, API_CLUSTER_ID) != 0)
        return 0;
    return f->descendants || strcmp(scope, "tenant") == 0;
}

int api_scope_filter_pass(const struct api_scope_filter *f, const char *name,
                          const char *scope, const char *scope_id)
{
    return !(f->name[0] && strcmp(name, f->name) != 0) &&
           !(f->scope[0] && strcmp(scope, f->scope) != 0) &&
           department_pass(f, scope, scope_id) && cluster_pass(f, scope) &&
           !(f->by_project && !api_scope_seen(scope, scope_id, &f->project));
}

int api_scope_found(struct api_req *r, int rc, int readable, const char *what)
{
    char details[64];

    if (rc == DB_OK && readable)
        return 0;
    snprintf(details, sizeof(details), "no such %s", what);
    if (rc == DB_OK || rc == DB_ENOTFOUND)
        api_error(r, 404, "Not found", details);
    else
        api_db_error(r, rc, "cannot read it");
    return -1;
}

int api_workloads_visit(struct api_req *r, int live_only, api_wl_visit fn, void *arg)
{
    struct db_workload *ws = NULL;
    struct db_wl_query q;
    int n = 0, i, rc;

    memset(&q, 0, sizeof(q));
    q.limit = 500;
    do {
        if ((rc = db_workload_list(r->app->db, &q, &ws, &n)) != DB_OK)
            return rc < 0 ? rc : -1;
        for (i = 0; i < n; i++)
            if (!live_only || (strcmp(ws[i].phase, "Completed") != 0 &&
                               strcmp(ws[i].phase, "Failed") != 0))
                fn(r, &ws[i], arg);
        db_workloads_free(ws, n);
        ws = NULL;
        q.offset += n;
    } while (n == q.limit);
    return DB_OK;
}

int api_live_workloads(struct api_req *r, api_wl_visit fn, void *arg)
{
    return api_workloads_visit(r, 1, fn, arg);
}
