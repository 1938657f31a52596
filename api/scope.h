/*
 * scope.h: the scopes of Run:ai's assets and generic secrets (scope.c): a
 * project, a department or the tenant. Who may do what on a scope is the
 * same rule as for projects (authz.c): a right on the project, on its
 * department, or on the whole tenant.
 *
 * A project sees the assets of its own scope, its department's and the
 * tenant's; a department's assets are seen by its projects.
 */
#ifndef ALLOT_SCOPE_H
#define ALLOT_SCOPE_H

#include "api.h"

/* A scope as stored: "project", "department" or "tenant", and the
 * project's or department's id ("" for the tenant). */
struct api_scope {
    char scope[16];
    char scope_id[DB_ID_LEN];
};

/* Does the caller hold perm on the scope (on the project with its
 * department, on the department, or tenant-wide)? A project that no
 * longer exists takes a tenant-wide right. */
int api_scope_may(struct api_req *r, const char *scope, const char *scope_id, unsigned perm);

/* The project named by a JSON value: an integer (the number answered as
 * meta.projectId) or the project's id as the org-unit routes give it.
 * DB_OK, DB_ENOTFOUND, DB_EINVAL (neither) or the database's error. */
int api_project_by_ref(struct api_req *r, json_t *v, struct api_project *out);

/* meta's scope, departmentId and projectId into s, with the right to
 * manage assets there (API_ORG_WRITE) checked; `what` names the kind of
 * thing in messages ("secret", "environment"). 0, or -1 replied (400,
 * 403). */
int api_scope_in(struct api_req *r, json_t *meta, struct api_scope *s, const char *what);

/* Sets meta's clusterId, departmentId, projectId and projectName for the
 * scope. */
void api_scope_meta(struct api_req *r, json_t *meta, const char *scope, const char *scope_id);

/* Does the project see an asset of that scope (its own, its department's,
 * the tenant's)? */
int api_scope_seen(const char *scope, const char *scope_id, const struct api_project *p);

/* After an object of a scope was read by the path's id (rc): 0 if it was
 * and the caller may read it, else -1 answered: 404 "no such <what>" for
 * one absent or unreadable (as if absent), the store's error otherwise. */
int api_scope_found(struct api_req *r, int rc, int readable, const char *what);

/* Calls fn on each live workload (not deleted, not Completed or Failed:
 * Pending, Running, Stopped, which may start again): what keeps an asset
 * or a secret from being deleted. DB_OK, or the store's error (below 0). */
typedef void (*api_wl_visit)(struct api_req *r, const struct db_workload *w, void *arg);
int api_live_workloads(struct api_req *r, api_wl_visit fn, void *arg);
/* api_live_workloads(), or with live_only 0 every workload not deleted
 * (Completed and Failed too). */
int api_workloads_visit(struct api_req *r, int live_only, api_wl_visit fn, void *arg);

/* The list routes' filters: name, scope (allot's one cluster is its
 * tenant: scope=cluster is scope=tenant), projectId (what that project
 * sees), departmentId (the department's and the tenant's), clusterId (the
 * tenant's; a cluster other than allot's passes nothing), and
 * includeDescendants (with departmentId, the department's projects' too;
 * with clusterId, every scope). */
struct api_scope_filter {
    char name[DB_NAME_LEN], scope[16], department_id[DB_ID_LEN], cluster_id[64];
    int by_project, descendants;
    struct api_project project;
    struct api_req *r;        /* a descendant project's department is looked up */
};
/* Reads the filters from the query: 0, or -1 replied 400. */
int api_scope_filter_in(struct api_req *r, struct api_scope_filter *f);
/* Does an asset of that name and scope pass f? */
int api_scope_filter_pass(const struct api_scope_filter *f, const char *name,
                          const char *scope, const char *scope_id);

#endif
