/*
 * authz.c: the built-in roles and the check of a principal's access rules
 * against an object's scope.
 *
 * A rule (subject, role, scope) grants the role's rights on its scope and
 * everything below it: system > department > project. So a right on a
 * project is held through a rule on that project, on its department, or
 * on the system. allotd serves one tenant with one cluster: a rule asked
 * for on the tenant or on the cluster is stored as a system rule
 * (db_rule.scope_named remembers which, for display).
 *
 * api_permissions[] says the same rights in Run:ai's vocabulary (resource
 * types and actions), for /authorization/roles and /permissions.
 *
 * Invariants:
 *   1. Default deny: a principal without a matching rule holds nothing.
 *   2. Objects outside every project (nodes, pools, users, rules) need a
 *      system-scope rule to be changed.
 */
#include "api.h"

#include <stdlib.h>
#include <string.h>

#define ALL_RIGHTS (API_ORG_READ | API_ORG_WRITE | API_WL_READ | API_WL_WRITE | API_IAM | \
                    API_NODE_WRITE)

const struct api_role api_roles[] = {
    {1, "System administrator", "Every right on every object", ALL_RIGHTS},
    {2, "Department administrator", "Manages the projects, workloads and rules of a department",
     API_ORG_READ | API_ORG_WRITE | API_WL_READ | API_WL_WRITE | API_IAM},
    {3, "Editor", "Submits and manages workloads; reads the organization",
     API_ORG_READ | API_WL_READ | API_WL_WRITE},
    {4, "L1 researcher", "Submits and manages workloads in its scope",
     API_ORG_READ | API_WL_READ | API_WL_WRITE},
    {5, "ML engineer", "Submits and manages inference workloads in its scope",
     API_ORG_READ | API_WL_READ | API_WL_WRITE},
    {6, "Viewer", "Reads everything in its scope", API_ORG_READ | API_WL_READ},
};
const int api_n_roles = (int)(sizeof(api_roles) / sizeof(api_roles[0]));

const struct api_permission api_permissions[] = {
    {"tenant", "Tenant", "organization", API_AUTH, 0},
    {"cluster", "Clusters", "organization", API_AUTH, 0},
    {"department", "Departments", "organization", API_ORG_READ, API_ORG_WRITE},
    {"project", "Projects", "organization", API_ORG_READ, API_ORG_WRITE},
    {"nodepools", "Node pools", "physical-resource", API_AUTH, API_NODE_WRITE},
    {"nodes", "Nodes", "physical-resource", API_AUTH, API_NODE_WRITE},
    {"users", "Users", "iam", API_IAM, API_IAM},
    {"service-account", "Service accounts", "iam", API_IAM, API_IAM},
    {"roles", "Roles", "iam", API_AUTH, 0},
    {"access_rules", "Access rules", "iam", API_IAM, API_IAM},
    {"workloads", "Workloads", "workload", API_WL_READ, API_WL_WRITE},
    {"trainings", "Trainings", "workload", API_WL_READ, API_WL_WRITE},
    {"workspaces", "Workspaces", "workload", API_WL_READ, API_WL_WRITE},
    {"inferences", "Inferences", "workload", API_WL_READ, API_WL_WRITE},
};
const int api_n_permissions = (int)(sizeof(api_permissions) / sizeof(api_permissions[0]));

const struct api_role *api_role_find(int id)
{
    int i;

    for (i = 0; i < api_n_roles; i++)
        if (api_roles[i].id == id)
            return &api_roles[i];
    return NULL;
}

static unsigned rule_rights(const struct db_rule *r)
{
    const struct api_role *role = api_role_find(r->role_id);

    return role ? role->perms : 0;
}

int api_can(const struct api_principal *p, unsigned perm, const char *project_id,
            const char *department_id)
{
    int i;

    perm &= ~(unsigned)API_AUTH;
    for (i = 0; i < p->n_rules; i++) {
        const struct db_rule *r = &p->rules[i];
        if ((rule_rights(r) & perm) != perm)
            continue;
        if (strcmp(r->scope_type, "system") == 0)
            return 1;
        if (strcmp(r->scope_type, "department") == 0 && department_id && department_id[0] &&
            strcmp(r->scope_id, department_id) == 0)
            return 1;
        if (strcmp(r->scope_type, "project") == 0 && project_id && project_id[0] &&
            strcmp(r->scope_id, project_id) == 0)
            return 1;
    }
    return 0;
}

int api_can_any(const struct api_principal *p, unsigned perm)
{
    int i;

    perm &= ~(unsigned)API_AUTH;
    for (i = 0; i < p->n_rules; i++)
        if ((rule_rights(&p->rules[i]) & perm) == perm)
            return 1;
    return 0;
}

void api_principal_clear(struct api_principal *p)
{
    free(p->rules);
    memset(p, 0, sizeof(*p));
}
