/*
 * h_policy.c: workload policies in Run:ai's shapes (/api/v2/policy and
 * /api/v2/policy/{trainings,workspaces,distributed,inferences}), and the
 * check every submission goes through (api_policy_submission).
 *
 * A policy's scope is the tenant, a department or a project; its chain is
 * the tenant's policy, then the department's, then the project's, as
 * deep as its scope. policy.c merges a chain and applies it; this file
 * reads and writes the store (db_policies.h) and the HTTP side.
 *
 * Invariants:
 *   1. A stored policy is one policy.c accepts (pol_check_body), and its
 *      chain's merged defaults keep the merged rules when it is stored.
 *   2. Reading a scope's policy takes the right to read that scope;
 *      changing it, the right to change the organization there.
 *   3. Every submission and every patch of a workload's spec is checked
 *      against its project's chain as it is at that moment; defaults fill
 *      what the spec leaves out before wl_spec.c reads it.
 */
#include "api.h"
#include "db_policies.h"
#include "policy.h"
#include "scope.h"
#include "secretbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ptype {
    const char *segment;      /* the route's last segment */
    const char *word;         /* the store's and PolicyType's word */
    const char *query;        /* list_policies' workloadType */
    int type;                 /* enum db_wl_type */
};

static const struct ptype ptypes[] = {
    {"trainings", "training", "Training", DB_TRAINING},
    {"workspaces", "workspace", "Workspace", DB_WORKSPACE},
    {"distributed", "distributed", "Distributed", DB_DISTRIBUTED},
    {"inferences", "inference", "Inference", DB_INFERENCE},
};
#define N_PTYPES ((int)(sizeof(ptypes) / sizeof(ptypes[0])))

static const struct ptype *ptype_of_type(int type)
{
    int i;

    for (i = 0; i < N_PTYPES; i++)
        if (ptypes[i].type == type)
            return &ptypes[i];
    return &ptypes[0];
}

static const struct ptype *ptype_of_path(const char *path)
{
    const char *seg = strrchr(path, '/');
    int i;

    for (i = 0; seg && i < N_PTYPES; i++)
        if (strcmp(ptypes[i].segment, seg + 1) == 0)
            return &ptypes[i];
    return &ptypes[0];
}

/* ---- scopes ---- */

/* A scope that names no department or project: 404 to a read or a delete
 * of its policy, 400 to a change (Run:ai's document lists no 404 there). */
static void no_such(struct api_req *r, int rc, const char *what)
{
    if (rc == DB_ENOTFOUND && (strcmp(r->method, "PUT") == 0 || strcmp(r->method, "PATCH") == 0))
        api_error(r, 400, "Bad request", what);
    else
        api_db_error(r, rc, what);
}

struct scope {
    char scope[16];
    int depth;                                 /* 1 tenant, 2 department, 3 project */
    char dept_id[DB_ID_LEN], dept_name[DB_NAME_LEN];
    char project_id[DB_ID_LEN], project_name[DB_NAME_LEN];
    long long project_seq;
};

static const char *scope_id(const struct scope *s)
{
    return s->depth == 3 ? s->project_id : s->depth == 2 ? s->dept_id : "";
}

static int scope_dept(struct api_req *r, struct scope *s)
{
    struct db_queue q;
    int rc = db_queue_get(r->app->db, s->dept_id, &q);

    if (rc == DB_OK && q.kind != DB_DEPARTMENT)
        rc = DB_ENOTFOUND;
    if (rc != DB_OK)
        return no_such(r, rc, "no such department"), -1;
    snprintf(s->dept_name, sizeof(s->dept_name), "%s", q.name);
    return 0;
}

/* The project a projectId names: its number (Run:ai's integer ids) or
 * its id as the org-unit routes give it. */
static int project_ref(struct api_req *r, const char *ref, struct api_project *p)
{
    char *end;
    long long n = strtoll(ref, &end, 10);
    json_t *v = ref[0] && !*end ? json_integer(n) : json_string(ref);
    int rc = api_project_by_ref(r, v, p);

    json_decref(v);
    return rc;
}

static int scope_project(struct api_req *r, struct scope *s)
{
    struct api_project p;
    int rc = project_ref(r, s->project_id, &p);

    if (rc != DB_OK)
        return no_such(r, rc, "no such project"), -1;
    snprintf(s->project_id, sizeof(s->project_id), "%s", p.id);
    s->project_seq = p.seq;
    snprintf(s->project_name, sizeof(s->project_name), "%s", p.name);
    snprintf(s->dept_id, sizeof(s->dept_id), "%s", p.parent_id);
    snprintf(s->dept_name, sizeof(s->dept_name), "%s", p.parent_name);
    return 0;
}

/* The scope named by scope and the ids that go with it; replies 400 or
 * 404 itself. */
static int scope_in(struct api_req *r, const char *scope, const char *dept, const char *project,
                    struct scope *s)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->scope, sizeof(s->scope), "%s", scope);
    if (strcmp(scope, "cluster") == 0 || strcmp(scope, "system") == 0)
        return api_error(r, 400, "Bad request", "scope: allotd serves one cluster of one tenant;"
                                                " its policies are the tenant's (scope tenant)"),
               -1;
    if (strcmp(scope, "tenant") == 0 && !dept[0] && !project[0])
        return s->depth = 1, 0;
    if (strcmp(scope, "department") == 0 && dept[0] && !project[0]) {
        s->depth = 2;
        snprintf(s->dept_id, sizeof(s->dept_id), "%s", dept);
        return scope_dept(r, s);
    }
    if (strcmp(scope, "project") == 0 && project[0]) {
        s->depth = 3;
        snprintf(s->project_id, sizeof(s->project_id), "%s", project);
        if (scope_project(r, s) != 0)
            return -1;
        if (dept[0] && strcmp(dept, s->dept_id) != 0)
            return api_error(r, 400, "Bad request", "departmentId is not the project's "
                                                    "department"), -1;
        return 0;
    }
    return api_error(r, 400, "Bad request", "scope is tenant, department (with departmentId) or "
                                            "project (with projectId)"), -1;
}

/* May the caller do perm on the scope? */
static int may(struct api_req *r, const struct scope *s, unsigned perm)
{
    if (s->depth == 1 && perm == API_ORG_READ)
        return api_can_any(&r->who, perm);
    return api_can(&r->who, perm, s->depth == 3 ? s->project_id : "",
                   s->depth >= 2 ? s->dept_id : "");
}

/* Invariant 2: reading the tenant's policy takes the right to read some
 * scope, reading another the right to read its scope (a project's: a
 * rule on it, its department or the system); changing one, the right to
 * change the organization there. Replies 403 itself when not. */
static int scope_may(struct api_req *r, const struct scope *s, unsigned perm)
{
    if (may(r, s, perm))
        return 1;
    api_error(r, 403, "Forbidden", perm == API_ORG_WRITE
                                       ? "changing this policy needs the right to change the "
                                         "organization in its scope"
                                       : "reading this policy needs the right to read its scope");
    return 0;
}

/* ---- chains ---- */

struct chain {
    struct pol_layer l[3];
    struct db_policy row[3];  /* row[i].id[0] == 0: none at that depth */
    int n;
};

static void chain_free(struct chain *c)
{
    int i;

    for (i = 0; i < 3; i++) {
        json_decref(c->l[i].policy);
        c->l[i].policy = NULL;
        db_policy_clear(&c->row[i]);
    }
}

static int depth_of(const char *scope)
{
    return strcmp(scope, "project") == 0 ? 3 : strcmp(scope, "department") == 0 ? 2 : 1;
}

/* The policies over scope s, tenant first; replies 500 itself. */
static int chain_load(struct api_req *r, const struct ptype *pt, const struct scope *s,
                      struct chain *c)
{
    static const char *const scopes[] = {"tenant", "department", "project"};
    struct db_policy *rows = NULL;
    int n = 0, i, at,
        rc = api_policy_chain(r->app, pt->word, s->depth >= 2 ? s->dept_id : "",
                              s->depth == 3 ? s->project_id : "", &rows, &n);

    memset(c, 0, sizeof(*c));
    if (rc != DB_OK)
        return api_db_error(r, rc, "cannot read the policies"), -1;
    c->n = s->depth;
    for (i = 0; i < 3; i++) {
        c->l[i].scope = scopes[i];
        c->l[i].scope_id = i == 2 ? s->project_id : i == 1 ? s->dept_id : "";
        c->l[i].scope_name = i == 2 ? s->project_name : i == 1 ? s->dept_name : "";
        c->l[i].project_seq = s->project_seq;
    }
    for (i = 0; i < n; i++) {
        at = depth_of(rows[i].scope) - 1;
        c->row[at] = rows[i];
        c->l[at].policy = json_loads(rows[i].body ? rows[i].body : "{}", 0, NULL);
    }
    free(rows); /* the bodies moved into c->row */
    return 0;
}

/* ---- answers ---- */

static json_t *meta_json(const struct db_policy *p, const struct scope *s)
{
    json_t *m = json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:o}", "id", p->id, "name", p->name,
                          "scope", s->scope, "createdBy", p->created_by, "createdAt",
                          api_time(p->created_at), "updatedBy", p->updated_by, "updatedAt",
                          api_time(p->updated_at));

    if (s->depth >= 2)
        json_object_set_new(m, "departmentId", json_string(s->dept_id));
    if (s->depth == 3)
        json_object_set_new(m, "projectId", json_integer(s->project_seq));
    return m;
}

/* {meta, policy, effective, effectiveUpdatedAt}: meta and policy only when
 * the scope has its own. */
static json_t *answer(const struct chain *c, const struct scope *s, int type)
{
    const struct db_policy *own = &c->row[s->depth - 1];
    json_t *o = json_pack("{s:o}", "effective", pol_merge(c->l, c->n, type));
    int64_t at = 0;
    int i;

    for (i = 0; i < c->n; i++)
        if (c->row[i].updated_at > at)
            at = c->row[i].updated_at;
    if (at)
        json_object_set_new(o, "effectiveUpdatedAt", api_time(at));
    if (own->id[0]) {
        json_object_set_new(o, "meta", meta_json(own, s));
        json_object_set(o, "policy", c->l[s->depth - 1].policy);
    }
    return o;
}

/* ---- GET, DELETE ---- */

/* The scope of a GET or DELETE's query; replies itself. */
static int query_scope(struct api_req *r, struct scope *s)
{
    char scope[16] = "", dept[DB_ID_LEN] = "", project[DB_ID_LEN] = "";

    if (api_query(r, "scope", scope, sizeof(scope)) != 0)
        return api_error(r, 400, "Bad request", "scope is required: tenant, department or "
                                                "project"), -1;
    if (api_query(r, "departmentId", dept, sizeof(dept)) < 0 ||
        api_query(r, "projectId", project, sizeof(project)) < 0)
        return api_error(r, 400, "Bad request", "departmentId or projectId is too long"), -1;
    return scope_in(r, scope, dept, project, s);
}

void api_h_policy_get(struct api_req *r)
{
    const struct ptype *pt = ptype_of_path(r->path);
    struct scope s;
    struct chain c;

    if (query_scope(r, &s) != 0 || !scope_may(r, &s, API_ORG_READ) ||
        chain_load(r, pt, &s, &c) != 0)
        return;
    api_reply(r, 200, answer(&c, &s, pt->type));
    chain_free(&c);
}

void api_h_policy_delete(struct api_req *r)
{
    const struct ptype *pt = ptype_of_path(r->path);
    struct scope s;
    int rc;

    if (query_scope(r, &s) != 0 || !scope_may(r, &s, API_ORG_WRITE))
        return;
    rc = db_policy_delete(r->app->db, pt->word, s.scope, scope_id(&s));
    api_polcache_invalidate(r->app->polc); /* whatever the outcome: it may have committed */
    if (rc != DB_OK) {
        api_db_error(r, rc, "the scope has no policy of this type");
        return;
    }
    api_reply_text(r, 204, "application/json", "", 0);
}

/* ---- PUT, PATCH ---- */

struct change {
    struct scope s;
    char name[DB_NAME_LEN];
    json_t *policy;           /* the new body (owned) */
    int validate_only;
};

/* meta: {name, scope, departmentId | projectId, clusterId}; replies. */
static int meta_in(struct api_req *r, json_t *meta, struct change *ch)
{
    static const char *const fields[] = {"name", "scope", "departmentId", "projectId",
                                         "clusterId", NULL};
    char scope[16] = "", dept[DB_ID_LEN] = "", project[DB_ID_LEN] = "";
    json_t *pid = json_object_get(meta, "projectId");

    if (!json_is_object(meta))
        return api_error(r, 400, "Bad request", "field 'meta' is required: {name, scope}"), -1;
    if (json_is_integer(pid))
        snprintf(project, sizeof(project), "%lld", (long long)json_integer_value(pid));
    if (api_json_allow(r, meta, fields, "meta") ||
        api_json_text(r, meta, "name", ch->name, sizeof(ch->name), 1, API_TEXT_FREE) ||
        api_json_str(r, meta, "scope", scope, sizeof(scope), 1) ||
        api_json_str(r, meta, "departmentId", dept, sizeof(dept), 0) ||
        (!json_is_integer(pid) && api_json_str(r, meta, "projectId", project, sizeof(project), 0)))
        return -1;
    if (!ch->name[0])
        return api_error(r, 400, "Bad request", "meta.name must not be empty"), -1;
    if (json_object_get(meta, "clusterId") && !json_is_null(json_object_get(meta, "clusterId")) &&
        strcmp(scope, "tenant") != 0)
        return api_error(r, 400, "Bad request", "meta.clusterId: allotd has one cluster; give "
                                                "the scope's own id only"), -1;
    return scope_in(r, scope, dept, project, &ch->s);
}

/* The body the change leaves: PUT's policy; PATCH's merged into the
 * stored one, then its reset fields cleared. Replies 400 itself. */
static int new_body(struct api_req *r, json_t *o, const struct ptype *pt, json_t *stored,
                    struct change *ch)
{
    json_t *policy = json_object_get(o, "policy");
    char msg[300];

    if (policy && !json_is_null(policy) && !json_is_object(policy))
        return api_error(r, 400, "Bad request", "policy must be an object"), -1;
    if (!(r->arg & API_ARG_PATCH)) {
        ch->policy = policy && !json_is_null(policy) ? json_deep_copy(policy) : json_object();
        return 0;
    }
    ch->policy = stored ? json_deep_copy(stored) : json_object();
    if (policy && !json_is_null(policy))
        pol_patch(ch->policy, policy);
    if (pol_reset(ch->policy, json_object_get(o, "reset"), pt->type, msg, sizeof(msg)) != 0)
        return api_error(r, 400, "Bad request", msg), -1;
    return 0;
}

/* Invariant 1 for the new body at its place in the chain. */
static int body_ok(struct api_req *r, const struct ptype *pt, struct chain *c, json_t *body)
{
    struct pol_layer l[3];
    char msg[512];
    int own = c->n - 1;

    if (pol_check_body(body, pt->type, msg, sizeof(msg)) != 0)
        return api_error(r, 400, "Bad request", msg), -1;
    memcpy(l, c->l, sizeof(l));
    l[own].policy = body;
    if (pol_apply(l, c->n, pt->type, NULL, POL_DEFAULTS_ONLY, msg, sizeof(msg)) != 0)
        return api_error(r, 400, "Bad request", msg), -1;
    return 0;
}

static int store(struct api_req *r, const struct ptype *pt, struct change *ch,
                 const struct db_policy *old)
{
    struct db_policy p;
    int rc;

    memset(&p, 0, sizeof(p));
    if (old->id[0])
        snprintf(p.id, sizeof(p.id), "%s", old->id);
    else if (api_secretbox_uuid(p.id) != 0)
        return api_error(r, 500, "Internal error", "no randomness"), -1;
    snprintf(p.type, sizeof(p.type), "%s", pt->word);
    snprintf(p.scope, sizeof(p.scope), "%s", ch->s.scope);
    snprintf(p.scope_id, sizeof(p.scope_id), "%s", scope_id(&ch->s));
    snprintf(p.name, sizeof(p.name), "%s", ch->name);
    snprintf(p.created_by, sizeof(p.created_by), "%s", r->who.user.login);
    p.body = json_dumps(ch->policy, JSON_COMPACT | JSON_SORT_KEYS);
    rc = p.body ? db_policy_put(r->app->db, &p) : DB_ENOMEM;
    api_polcache_invalidate(r->app->polc); /* whatever the outcome: it may have committed */
    free(p.body);
    if (rc != DB_OK)
        return api_db_error(r, rc, "cannot store the policy"), -1;
    return 0;
}

/* The answer of a validateOnly change: the chain as it would be. */
static void answer_unstored(struct api_req *r, const struct ptype *pt, struct chain *c,
                            struct change *ch)
{
    struct db_policy *own = &c->row[c->n - 1];
    int64_t now = api_now_ms();

    if (!own->id[0]) {
        api_secretbox_uuid(own->id);
        snprintf(own->created_by, sizeof(own->created_by), "%s", r->who.user.login);
        own->created_at = now;
    }
    snprintf(own->name, sizeof(own->name), "%s", ch->name);
    snprintf(own->updated_by, sizeof(own->updated_by), "%s", r->who.user.login);
    own->updated_at = now;
    json_decref(c->l[c->n - 1].policy);
    c->l[c->n - 1].policy = json_incref(ch->policy);
    api_reply(r, 200, answer(c, &ch->s, pt->type));
}

static int change_in(struct api_req *r, json_t *o, const struct ptype *pt, struct chain *c,
                     struct change *ch)
{
    static const char *const put_fields[] = {"meta", "policy", NULL};
    static const char *const patch_fields[] = {"meta", "policy", "reset", NULL};

    if (api_json_allow(r, o, r->arg & API_ARG_PATCH ? patch_fields : put_fields, NULL) ||
        meta_in(r, json_object_get(o, "meta"), ch) != 0 ||
        !scope_may(r, &ch->s, API_ORG_WRITE) || chain_load(r, pt, &ch->s, c) != 0)
        return -1;
    if (new_body(r, o, pt, c->l[c->n - 1].policy, ch) != 0 ||
        body_ok(r, pt, c, ch->policy) != 0)
        return -1;
    return 0;
}

/* PUT overwrites the scope's policy, PATCH changes it (API_ARG_PATCH);
 * validateOnly=true answers what it would be and stores nothing. */
void api_h_policy_put(struct api_req *r)
{
    const struct ptype *pt = ptype_of_path(r->path);
    struct change ch;
    struct chain c;
    json_t *o;

    memset(&ch, 0, sizeof(ch));
    memset(&c, 0, sizeof(c));
    if (api_query_bool(r, "validateOnly", &ch.validate_only) != 0)
        return;
    o = api_body_object(r);
    if (!o)
        return;
    if (change_in(r, o, pt, &c, &ch) != 0)
        goto out;
    if (ch.validate_only) {
        answer_unstored(r, pt, &c, &ch);
        goto out;
    }
    if (store(r, pt, &ch, &c.row[c.n - 1]) != 0)
        goto out;
    chain_free(&c);
    if (chain_load(r, pt, &ch.s, &c) == 0)
        api_reply(r, 200, answer(&c, &ch.s, pt->type));
out:
    chain_free(&c);
    json_decref(ch.policy);
    json_decref(o);
}

/* ---- the list ---- */

/* The scope of a stored row, with the names; -1 when its department or
 * project is gone (the row is skipped). */
static int row_scope(struct api_req *r, const struct db_policy *p, struct scope *s)
{
    struct api_project pj;
    struct db_queue q;

    memset(s, 0, sizeof(*s));
    snprintf(s->scope, sizeof(s->scope), "%s", p->scope);
    s->depth = depth_of(p->scope);
    if (s->depth == 3) {
        if (api_project_lookup(r->app, p->scope_id, &pj) != DB_OK)
            return -1;
        snprintf(s->project_id, sizeof(s->project_id), "%s", pj.id);
        s->project_seq = pj.seq;
        snprintf(s->dept_id, sizeof(s->dept_id), "%s", pj.parent_id);
    } else if (s->depth == 2) {
        if (db_queue_get(r->app->db, p->scope_id, &q) != DB_OK)
            return -1;
        snprintf(s->dept_id, sizeof(s->dept_id), "%s", q.id);
    }
    return 0;
}

struct list_q {
    char type[24], scope[16], dept[DB_ID_LEN], project[DB_ID_LEN];
};

static int listed(struct api_req *r, const struct list_q *q, const struct db_policy *p,
                  struct scope *s)
{
    if (row_scope(r, p, s) != 0 || (q->scope[0] && strcmp(q->scope, p->scope) != 0))
        return 0;
    if (q->dept[0] && strcmp(q->dept, s->dept_id) != 0)
        return 0;
    if (q->project[0] && strcmp(q->project, s->project_id) != 0 &&
        !(s->project_seq && atoll(q->project) == s->project_seq))
        return 0;
    return may(r, s, API_ORG_READ);
}

static int list_query(struct api_req *r, struct list_q *q, const struct ptype **pt)
{
    static const char *const scopes[] = {"tenant", "cluster", "department", "project"};
    int i, fallback = 0, ok = 0;

    memset(q, 0, sizeof(*q));
    *pt = NULL;
    if (api_query(r, "workloadType", q->type, sizeof(q->type)) < 0 ||
        api_query(r, "scope", q->scope, sizeof(q->scope)) < 0 ||
        api_query(r, "departmentId", q->dept, sizeof(q->dept)) < 0 ||
        api_query(r, "projectId", q->project, sizeof(q->project)) < 0 ||
        api_query_bool(r, "includeFallbackPolicies", &fallback) != 0)
        return api_error(r, 400, "Bad request", "a filter is too long"), -1;
    for (i = 0; q->type[0] && i < N_PTYPES; i++)
        if (strcmp(ptypes[i].query, q->type) == 0)
            *pt = &ptypes[i];
    if (q->type[0] && !*pt && strcmp(q->type, "DistributedInference") != 0)
        return api_error(r, 400, "Bad request", "workloadType: Workspace, Training, Distributed,"
                                                " Inference or DistributedInference"), -1;
    for (i = 0; i < 4; i++)
        ok |= strcmp(q->scope, scopes[i]) == 0;
    if (q->scope[0] && !ok)
        return api_error(r, 400, "Bad request", "scope: tenant, cluster, department or project"),
               -1;
    return 0;
}

/* GET /api/v2/policy: the policies the caller may read; allot has no
 * fallback policies and no distributed inference, so includeFallbackPolicies
 * adds none and workloadType=DistributedInference lists none. */
void api_h_policy_list(struct api_req *r)
{
    const struct ptype *pt;
    struct db_policy *rows = NULL;
    struct list_q q;
    struct scope s;
    int n = 0, i, rc;
    json_t *a;

    if (list_query(r, &q, &pt) != 0)
        return;
    rc = db_policy_list(r->app->db, pt ? pt->word : NULL, &rows, &n);
    if (rc != DB_OK) {
        api_db_error(r, rc, "cannot read the policies");
        return;
    }
    a = json_array();
    for (i = 0; i < n && !(q.type[0] && !pt); i++)
        if (listed(r, &q, &rows[i], &s))
            json_array_append_new(a, json_pack("{s:s, s:o, s:{}}", "type", rows[i].type, "meta",
                                               meta_json(&rows[i], &s), "status"));
    api_reply(r, 200, json_pack("{s:o}", "policies", a));
    db_policies_free(rows, n);
}

/* ---- submissions ---- */

/* The project's scope, for its chain of policies. */
static void project_scope(const struct api_project *project, struct scope *s)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->scope, sizeof(s->scope), "project");
    s->depth = 3;
    snprintf(s->project_id, sizeof(s->project_id), "%s", project->id);
    snprintf(s->project_name, sizeof(s->project_name), "%s", project->name);
    s->project_seq = project->seq;
    snprintf(s->dept_id, sizeof(s->dept_id), "%s", project->parent_id);
    snprintf(s->dept_name, sizeof(s->dept_name), "%s", project->parent_name);
}

/* pol_apply() of the project's chain for type: 0, 1 (a breach, in msg),
 * or -1 answered (the policies could not be read). */
static int project_apply(struct api_req *r, json_t *spec, int type,
                         const struct api_project *project, unsigned flags, char *msg,
                         size_t len)
{
    struct scope s;
    struct chain c;
    int rc;

    project_scope(project, &s);
    if (chain_load(r, ptype_of_type(type), &s, &c) != 0)
        return -1;
    rc = pol_apply(c.l, c.n, type, spec, flags, msg, len);
    chain_free(&c);
    return rc != 0;
}

int api_policy_submission(struct api_req *r, json_t *spec, int type,
                          const struct api_project *project)
{
    char msg[512];
    int rc = project_apply(r, spec, type, project, 0, msg, sizeof(msg));

    if (rc == 1)
        api_error(r, 400, "Bad request", msg);
    return rc == 0 ? 0 : -1;
}

int api_policy_comply(struct api_req *r, json_t *part, int type,
                      const struct api_project *project, char *msg, size_t len)
{
    return project_apply(r, part, type, project, POL_PARTIAL, msg, len);
}
