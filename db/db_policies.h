/*
 * db_policies.h: the store of workload policies (Run:ai's /api/v2/policy),
 * policies.c.
 *
 * A policy belongs to a workload type (training, workspace, distributed,
 * inference) and a scope (the tenant, a department or a project): at most
 * one per type and scope. Its body is the policy's JSON, {defaults, rules},
 * as api/policy.c checked it; the store does not read it.
 */
#ifndef ALLOT_DB_POLICIES_H
#define ALLOT_DB_POLICIES_H

#include "db.h"

struct db_policy {
    int64_t seq;
    char id[DB_ID_LEN];
    char type[16];                /* "training", "workspace", "distributed", "inference" */
    char scope[16];               /* "tenant", "department" or "project" */
    char scope_id[DB_ID_LEN];     /* the department's or project's id; "" for the tenant */
    char name[DB_NAME_LEN];
    char created_by[DB_NAME_LEN], updated_by[DB_NAME_LEN];
    int64_t created_at, updated_at;
    char *body;                   /* JSON {defaults, rules}, malloc'd */
};

/* Frees what a read filled in (body); p stays usable. */
void db_policy_clear(struct db_policy *p);
void db_policies_free(struct db_policy *p, int n);

/* Stores p as the policy of its type and scope: a new row (id, name,
 * created_by, body set by the caller) or, when that scope has one, its
 * name and body replaced (updated_by = created_by, now). */
int db_policy_put(struct db *db, const struct db_policy *p);
/* The policy of that type and scope; DB_ENOTFOUND if none. */
int db_policy_get(struct db *db, const char *type, const char *scope, const char *scope_id,
                  struct db_policy *out);
/* Deletes it; DB_ENOTFOUND if none. */
int db_policy_delete(struct db *db, const char *type, const char *scope, const char *scope_id);
/* Every policy (type NULL) or those of a type, by type, scope and id
 * (malloc'd: db_policies_free()). */
int db_policy_list(struct db *db, const char *type, struct db_policy **out, int *n);
/* The policies of a type that a project under department dept is under:
 * the tenant's, its department's and its own, in that order (malloc'd). */
int db_policy_chain(struct db *db, const char *type, const char *dept, const char *project,
                    struct db_policy **out, int *n);

#endif
