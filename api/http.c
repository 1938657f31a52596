/*
 * http.c: the civetweb glue: server options, the route table, and the
 * dispatcher every request goes through.
 *
 * A request's path through dispatch():
 *   Step 1: match the route table: of the patterns that match the path,
 *           the most specific (a fixed segment beats an {id}), then the
 *           method; 404 no path, 405 wrong method, 501 a path (or method)
 *           of Run:ai's document that allotd does not serve (runai_ops.c);
 *           a GET outside /api/ that no route matches is a dashboard file
 *           (static.c); every query parameter must decode cleanly to at
 *           most API_QUERY_VALUE_MAX bytes (400 naming it);
 *   Step 2: the client address's token bucket (429 with Retry-After);
 *   Step 3: unless the route is public, the bearer token (401), the
 *           principal's own token bucket (--user-rate-limit: 429 with
 *           Retry-After, however many addresses it calls from), and the
 *           route's right on some scope (403); agent routes take an agent
 *           token instead (h_agent.c). Headers only: nobody makes the
 *           server read a body before saying who they are;
 *   Step 4: read the body, at most API_BODY_MAX bytes (API_PUBLIC_BODY_MAX
 *           on public routes), all of it within 5 request timeouts (413 or
 *           408, connection closed, the rest never read);
 *   Step 5: the handler, with the route's arg in r->arg (one handler may
 *           serve several routes), which checks the object it touches;
 *   Step 6: free what the request owned; count it in the metrics.
 * conns.c hears of each step (a request head arrived, the handler runs,
 * the reply is sent) to know which connections only hold a worker.
 *
 * Invariants:
 *   1. civetweb serves nothing by itself: no document_root, no directory
 *      listing, no CORS (the access_control_* options are empty), no TLS.
 *   2. Every reply carries Content-Length, Cache-Control: no-store and
 *      X-Content-Type-Options: nosniff.
 */
#include "api.h"
#include "secrets.h"
#include "assets.h"

#include <civetweb.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* The five routes of a kind of asset at /api/v1/asset/PATH. */
/* clang-format off */
#define ASSET_ROUTES(path, read)                                                 \
    {"GET", "/api/v1/asset/" path, api_h_assets_list, read},                     \
    {"POST", "/api/v1/asset/" path, api_h_asset_create, API_ORG_WRITE},          \
    {"GET", "/api/v1/asset/" path "/{id}", api_h_asset_get, read},               \
    {"PUT", "/api/v1/asset/" path "/{id}", api_h_asset_update, API_ORG_WRITE},   \
    {"DELETE", "/api/v1/asset/" path "/{id}", api_h_asset_delete, API_ORG_WRITE}
/* The six routes of a type of workload template at
 * /api/v1/workload-templates/TYPE. */
#define TEMPLATE_ROUTES(type)                                                              \
    {"POST", "/api/v1/workload-templates/" type, api_h_template_create, API_ORG_WRITE},    \
    {"GET", "/api/v1/workload-templates/" type, api_h_templates_list, API_WL_READ},        \
    {"GET", "/api/v1/workload-templates/" type "/{id}", api_h_template_get, API_WL_READ},  \
    {"PUT", "/api/v1/workload-templates/" type "/{id}", api_h_template_update,             \
     API_ORG_WRITE},                                                                       \
    {"PATCH", "/api/v1/workload-templates/" type "/{id}", api_h_template_update,           \
     API_ORG_WRITE, API_ARG_PATCH},                                                        \
    {"DELETE", "/api/v1/workload-templates/" type "/{id}", api_h_template_delete,          \
     API_ORG_WRITE}
/* The four routes of a type of workload policy at /api/v2/policy/TYPE:
 * each handler checks the right on the policy's scope (read to read, the
 * organization's write to change). */
#define POLICY_ROUTES(type)                                                      \
    {"GET", "/api/v2/policy/" type, api_h_policy_get, API_AUTH},                 \
    {"PUT", "/api/v2/policy/" type, api_h_policy_put, API_AUTH},                 \
    {"PATCH", "/api/v2/policy/" type, api_h_policy_put, API_AUTH, API_ARG_PATCH}, \
    {"DELETE", "/api/v2/policy/" type, api_h_policy_delete, API_AUTH}
/* The eleven routes of a kind of queue at /api/v1/org-unit/KIND (arg:
 * API_ARG_PROJECT for projects, 0 for departments). */
#define QUEUE_ROUTES(kind, arg)                                                                \
    {"GET", "/api/v1/org-unit/" kind, api_h_queues_list, API_ORG_READ, arg},                   \
    {"POST", "/api/v1/org-unit/" kind, api_h_queues_create, API_ORG_WRITE, arg},               \
    {"GET", "/api/v1/org-unit/" kind "/count", api_h_queues_list, API_ORG_READ,                \
     (arg) | API_ARG_COUNT},                                                                   \
    {"GET", "/api/v1/org-unit/" kind "/telemetry", api_h_org_telemetry, API_ORG_READ, arg},    \
    {"GET", "/api/v1/org-unit/" kind "/{id}", api_h_queue_get, API_ORG_READ, arg},             \
    {"PUT", "/api/v1/org-unit/" kind "/{id}", api_h_queue_change, API_ORG_WRITE, arg},         \
    {"PATCH", "/api/v1/org-unit/" kind "/{id}", api_h_queue_change, API_ORG_WRITE,             \
     (arg) | API_ARG_PATCH},                                                                   \
    {"DELETE", "/api/v1/org-unit/" kind "/{id}", api_h_queue_delete, API_ORG_WRITE, arg},      \
    {"PUT", "/api/v1/org-unit/" kind "/{id}/resources", api_h_queue_resources, API_ORG_WRITE,  \
     arg},                                                                                     \
    {"PATCH", "/api/v1/org-unit/" kind "/{id}/resources", api_h_queue_resources,               \
     API_ORG_WRITE, (arg) | API_ARG_PATCH},                                                    \
    {"GET", "/api/v1/org-unit/" kind "/{id}/metrics", api_h_queue_metrics, API_ORG_READ, arg}
/* clang-format on */

/* A route's arg is 0 unless its row names one: the rows leave it out. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
const struct api_route api_routes[] = {
    {"GET", "/", api_h_dashboard, API_PUBLIC},
    {"GET", "/healthz", api_h_healthz, API_PUBLIC},
    {"GET", "/readyz", api_h_readyz, API_PUBLIC},
    {"GET", "/metrics", api_h_metrics, API_ORG_READ},
    {"POST", "/api/v1/token", api_h_token_v1, API_PUBLIC},
    {"POST", "/api/v2/token", api_h_token_v2, API_PUBLIC},
    {"POST", "/v1/k8s/auth/oauth/apptoken", api_h_app_token, API_PUBLIC},
    {"GET", "/api/v1/clusters", api_h_clusters, API_ORG_READ},
    {"GET", "/api/v1/clusters/{uuid}", api_h_cluster_get, API_ORG_READ},
    {"GET", "/api/v1/clusters/{uuid}/nodes", api_h_cluster_nodes, API_ORG_READ},
    {"GET", "/api/v1/clusters/{uuid}/nodes/count", api_h_cluster_nodes, API_ORG_READ,
     API_ARG_COUNT},
    {"GET", "/api/v1/clusters/{uuid}/metrics", api_h_cluster_metrics, API_ORG_READ},
    {"GET", "/api/v1/clusters/{uuid}/nodepools/{name}/metrics", api_h_pool_metrics, API_ORG_READ},
    {"GET", "/api/v1/nodes", api_h_nodes, API_ORG_READ},
    {"GET", "/api/v1/nodes/count", api_h_nodes, API_ORG_READ, API_ARG_COUNT},
    {"GET", "/api/v1/nodes/{id}/metrics", api_h_node_metrics, API_ORG_READ},
    {"GET", "/api/v1/nodes/telemetry", api_h_nodes_telemetry, API_ORG_READ},
    {"GET", "/api/v1/network-topologies", api_h_ntopo_list, API_ORG_READ},
    {"POST", "/api/v1/network-topologies", api_h_ntopo_create, API_NODE_WRITE},
    {"GET", "/api/v1/network-topologies/count", api_h_ntopo_list, API_ORG_READ, API_ARG_COUNT},
    {"GET", "/api/v1/network-topologies/{id}", api_h_ntopo_get, API_ORG_READ},
    {"DELETE", "/api/v1/network-topologies/{id}", api_h_ntopo_delete, API_NODE_WRITE},
    {"GET", "/api/v1/node-pools", api_h_pools_list, API_ORG_READ},
    {"POST", "/api/v1/node-pools", api_h_pools_create, API_NODE_WRITE},
    {"GET", "/api/v1/node-pools/count", api_h_pools_list, API_ORG_READ, API_ARG_COUNT},
    {"GET", "/api/v1/node-pools/{id}", api_h_pool_get, API_ORG_READ},
    {"PUT", "/api/v1/node-pools/{id}", api_h_pool_change, API_NODE_WRITE},
    {"PATCH", "/api/v1/node-pools/{id}", api_h_pool_change, API_NODE_WRITE, API_ARG_PATCH},
    {"DELETE", "/api/v1/node-pools/{id}", api_h_pool_delete, API_NODE_WRITE},
    {"GET", "/api/v1/org-unit/priorities", api_h_org_priorities, API_AUTH},
    /* workload policies (h_policy.c) */
    {"GET", "/api/v2/policy", api_h_policy_list, API_AUTH},
    POLICY_ROUTES("trainings"),
    POLICY_ROUTES("workspaces"),
    POLICY_ROUTES("distributed"),
    POLICY_ROUTES("inferences"),
    {"GET", "/api/v1/workload-types", api_h_wl_types, API_AUTH},
    {"GET", "/api/v1/workload-types/{id}", api_h_wl_type_get, API_AUTH},
    {"GET", "/api/v1/workload-categories", api_h_wl_categories, API_AUTH},
    {"GET", "/api/v1/workload-categories/{id}", api_h_wl_category_get, API_AUTH},
    {"GET", "/api/v1/workload-priorities", api_h_wl_priorities, API_AUTH},
    QUEUE_ROUTES("departments", 0),
    QUEUE_ROUTES("projects", API_ARG_PROJECT),
    {"GET", "/api/v1/org-unit/reports", api_h_reports, API_ORG_READ},
    {"POST", "/api/v1/org-unit/reports", api_h_report_create, API_ORG_WRITE},
    {"GET", "/api/v1/org-unit/reports/count", api_h_reports, API_ORG_READ, API_ARG_COUNT},
    {"GET", "/api/v1/org-unit/reports/availability", api_h_reports_availability, API_AUTH},
    {"GET", "/api/v1/org-unit/reports/{id}", api_h_report_get, API_ORG_READ},
    {"DELETE", "/api/v1/org-unit/reports/{id}", api_h_report_delete, API_ORG_WRITE},
    {"GET", "/api/v1/org-unit/reports/{id}/file", api_h_report_file, API_ORG_READ},
    {"GET", "/api/v1/users", api_h_users_list, API_IAM},
    {"POST", "/api/v1/users", api_h_users_create, API_IAM},
    {"GET", "/api/v1/users/count", api_h_users_list, API_IAM, API_ARG_COUNT},
    {"GET", "/api/v1/users/{id}", api_h_user_get, API_IAM},
    {"DELETE", "/api/v1/users/{id}", api_h_user_delete, API_IAM},
    {"POST", "/api/v1/users/{id}/logout", api_h_user_logout, API_AUTH}, /* self, or IAM */
    {"POST", "/api/v1/users/{id}/password", api_h_user_password, API_IAM},
    {"POST", "/api/v1/me/password", api_h_me_password, API_AUTH},
    {"GET", "/api/v1/service-accounts", api_h_service_accounts_list, API_IAM},
    {"POST", "/api/v1/service-accounts", api_h_service_accounts_create, API_IAM},
    {"GET", "/api/v1/service-accounts/{id}", api_h_service_account_get, API_IAM},
    {"PATCH", "/api/v1/service-accounts/{id}", api_h_service_account_patch, API_IAM},
    {"DELETE", "/api/v1/service-accounts/{id}", api_h_service_account_delete, API_IAM},
    {"POST", "/api/v1/service-accounts/{id}/secret", api_h_service_account_secret, API_IAM},
    {"GET", "/api/v1/apps", api_h_service_accounts_list, API_IAM},
    {"POST", "/api/v1/apps", api_h_apps_create, API_IAM},
    {"GET", "/api/v1/apps/{id}", api_h_service_account_get, API_IAM},
    {"PATCH", "/api/v1/apps/{id}", api_h_service_account_patch, API_IAM},
    {"DELETE", "/api/v1/apps/{id}", api_h_service_account_delete, API_IAM},
    {"POST", "/api/v1/apps/{id}/secret", api_h_app_secret, API_IAM},
    {"GET", "/api/v1/access-keys", api_h_keys_list, API_AUTH},
    {"POST", "/api/v1/access-keys", api_h_key_create, API_AUTH},
    {"GET", "/api/v1/access-keys/{id}", api_h_key_get, API_AUTH},
    {"DELETE", "/api/v1/access-keys/{id}", api_h_key_delete, API_AUTH},
    {"POST", "/api/v1/access-keys/{id}/secret", api_h_key_secret, API_AUTH},
    {"GET", "/api/v1/administration/access-keys", api_h_keys_list, API_IAM, API_ARG_ADMIN},
    {"DELETE", "/api/v1/administration/access-keys/{id}", api_h_key_delete, API_IAM,
     API_ARG_ADMIN},
    {"GET", "/api/v1/user-applications", api_h_keys_list, API_AUTH, API_ARG_USER_APP},
    {"POST", "/api/v1/user-applications", api_h_key_create, API_AUTH, API_ARG_USER_APP},
    {"GET", "/api/v1/user-applications/{id}", api_h_key_get, API_AUTH},
    {"DELETE", "/api/v1/user-applications/{id}", api_h_key_delete, API_AUTH},
    {"POST", "/api/v1/user-applications/{id}/secret", api_h_key_secret, API_AUTH},
    {"GET", "/api/v1/administration/user-applications", api_h_keys_list, API_IAM,
     API_ARG_USER_APP | API_ARG_ADMIN},
    {"DELETE", "/api/v1/administration/user-applications/{id}", api_h_key_delete, API_IAM,
     API_ARG_ADMIN},
    {"GET", "/api/v1/authorization/roles", api_h_roles, API_AUTH},
    {"GET", "/api/v1/authorization/roles/{id}", api_h_role_get, API_AUTH},
    {"GET", "/api/v1/authorization/permissions", api_h_permissions, API_AUTH},
    {"GET", "/api/v1/authorization/access-rules", api_h_rules_list, API_IAM},
    {"POST", "/api/v1/authorization/access-rules", api_h_rules_create, API_IAM},
    {"GET", "/api/v1/authorization/access-rules/count", api_h_rules_list, API_IAM,
     API_ARG_COUNT},
    {"GET", "/api/v1/authorization/access-rules/{id}", api_h_rule_get, API_IAM},
    {"DELETE", "/api/v1/authorization/access-rules/{id}", api_h_rule_delete, API_IAM},
    {"POST", "/api/v1/authorization/access-rules/batch", api_h_rules_batch, API_IAM},
    {"POST", "/api/v1/authorization/access-rules/batch-create", api_h_rules_batch_create,
     API_IAM},
    {"POST", "/api/v1/authorization/permitted-scopes", api_h_permitted_scopes, API_AUTH},
    {"GET", "/api/v1/authorization/me/access-rules", api_h_me_rules, API_AUTH},
    {"GET", "/api/v1/authorization/me/access-rules/count", api_h_me_rules_count, API_AUTH},
    {"POST", "/api/v1/workloads/trainings", api_h_wl_create_training, API_WL_WRITE},
    {"POST", "/api/v1/workloads/workspaces", api_h_wl_create_workspace, API_WL_WRITE},
    {"POST", "/api/v1/workloads/distributed", api_h_wl_create_distributed, API_WL_WRITE},
    {"POST", "/api/v1/workloads/inferences", api_h_wl_create_inference, API_WL_WRITE},
    {"POST", "/api/v1/workloads/batch", api_h_wl_batch, API_WL_WRITE},
    {"POST", "/api/v1/workloads/submissions", api_h_wl_submissions, API_WL_WRITE},
    {"GET", "/api/v1/workloads/trainings/{id}", api_h_wl_get, API_WL_READ},
    {"GET", "/api/v1/workloads/workspaces/{id}", api_h_wl_get, API_WL_READ},
    {"GET", "/api/v1/workloads/distributed/{id}", api_h_wl_get, API_WL_READ},
    {"GET", "/api/v1/workloads/inferences/{id}", api_h_wl_get, API_WL_READ},
    {"PATCH", "/api/v1/workloads/inferences/{id}", api_h_wl_inference_patch, API_WL_WRITE},
    {"GET", "/api/v1/workloads/inferences/{id}/metrics", api_h_wl_metrics, API_WL_READ},
    {"GET", "/api/v1/workloads/inferences/{id}/pods/{podId}/metrics", api_h_wl_pod_metrics,
     API_WL_READ},
    {"GET", "/api/v1/workloads/inferences/{id}/revisions", api_h_revisions, API_WL_READ},
    {"GET", "/api/v1/workloads/inferences/{id}/revisions/count", api_h_revisions_count,
     API_WL_READ},
    {"GET", "/api/v1/workloads/inferences/revisions/{id}", api_h_revision_get, API_WL_READ},
    {"GET", "/api/v1/workloads/inferences/revisions/{id}/events", api_h_revision_events,
     API_WL_READ},
    {"GET", "/api/v1/workloads/inferences/revisions/{id}/history", api_h_revision_history,
     API_WL_READ},
    {"GET", "/api/v1/workloads/inferences/revisions/{id}/pods", api_h_revision_pods,
     API_WL_READ},
    {"DELETE", "/api/v1/workloads/trainings/{id}", api_h_wl_delete, API_WL_WRITE},
    {"DELETE", "/api/v1/workloads/workspaces/{id}", api_h_wl_delete, API_WL_WRITE},
    {"DELETE", "/api/v1/workloads/distributed/{id}", api_h_wl_delete, API_WL_WRITE},
    {"DELETE", "/api/v1/workloads/inferences/{id}", api_h_wl_delete, API_WL_WRITE},
    {"POST", "/api/v1/workloads/trainings/{id}/suspend", api_h_wl_suspend, API_WL_WRITE},
    {"POST", "/api/v1/workloads/workspaces/{id}/suspend", api_h_wl_suspend, API_WL_WRITE},
    {"POST", "/api/v1/workloads/distributed/{id}/suspend", api_h_wl_suspend, API_WL_WRITE},
    {"POST", "/api/v1/workloads/trainings/{id}/resume", api_h_wl_resume, API_WL_WRITE},
    {"POST", "/api/v1/workloads/workspaces/{id}/resume", api_h_wl_resume, API_WL_WRITE},
    {"POST", "/api/v1/workloads/distributed/{id}/resume", api_h_wl_resume, API_WL_WRITE},
    {"GET", "/api/v1/workloads", api_h_wl_list, API_WL_READ},
    {"GET", "/api/v1/workloads/count", api_h_wl_count, API_WL_READ},
    {"GET", "/api/v1/workloads/pods", api_h_pods_list, API_WL_READ},
    {"GET", "/api/v1/workloads/pods/count", api_h_pods_list, API_WL_READ, API_ARG_COUNT},
    {"GET", "/api/v1/evictions", api_h_wl_evictions, API_WL_READ},
    {"GET", "/api/v1/workloads/telemetry", api_h_wl_telemetry, API_WL_READ},
    {"GET", "/api/v1/evictions/count", api_h_wl_evictions_count, API_WL_READ},
    {"GET", "/api/v1/workloads/{id}", api_h_wl_get, API_WL_READ},
    {"DELETE", "/api/v1/workloads/{id}", api_h_wl_delete, API_WL_WRITE},
    {"POST", "/api/v1/workloads/{id}/suspend", api_h_wl_suspend, API_WL_WRITE},
    {"POST", "/api/v1/workloads/{id}/resume", api_h_wl_resume, API_WL_WRITE},
    {"GET", "/api/v1/workloads/{id}/events", api_h_wl_events, API_WL_READ},
    {"GET", "/api/v1/workloads/{id}/pods", api_h_wl_pods, API_WL_READ},
    {"GET", "/api/v1/workloads/{id}/history", api_h_wl_history, API_WL_READ},
    {"GET", "/api/v1/workloads/{id}/metrics", api_h_wl_metrics, API_WL_READ},
    {"GET", "/api/v1/workloads/{id}/logs", api_h_wl_logs, API_WL_READ},
    {"GET", "/api/v1/workloads/{id}/metrics", api_h_wl_metrics, API_WL_READ},
    {"GET", "/api/v1/workloads/{id}/pods/{podId}/metrics", api_h_wl_pod_metrics, API_WL_READ},
    {"POST", "/api/v1/whatif", api_h_whatif, API_AUTH},
    /* the audit log (h_audit.c): administrators of the system only */
    {"GET", "/api/v1/audit/log", api_h_audit_log, API_IAM | API_NODE_WRITE},
    {"GET", "/api/v1/audit/log/file", api_h_audit_file, API_IAM | API_NODE_WRITE},
    /* the tenant's settings (h_settings.c): read by any principal, changed
     * by administrators of the system (the handlers check) */
    {"GET", "/api/v1/security/settings", api_h_security_settings, API_AUTH},
    {"GET", "/api/v1/security/settings/{key}", api_h_security_setting_get, API_AUTH},
    {"PUT", "/api/v1/security/settings/{key}", api_h_security_setting_put, API_IAM},
    {"GET", "/v1/k8s/setting", api_h_tenant_settings, API_AUTH},
    {"PUT", "/v1/k8s/setting", api_h_tenant_setting_put, API_IAM},
    {"GET", "/v1/k8s/setting/{settingKey}", api_h_tenant_setting_get, API_AUTH},
    {"GET", "/api/v1/logo", api_h_logo_get, API_AUTH},
    {"POST", "/api/v1/logo", api_h_logo_post, API_IAM},
    {"POST", "/api/v1/agent/tokens", api_h_agent_tokens_create, API_NODE_WRITE},
    {"GET", "/api/v1/agent/tokens", api_h_agent_tokens_list, API_NODE_WRITE},
    {"DELETE", "/api/v1/agent/tokens/{id}", api_h_agent_token_revoke, API_NODE_WRITE},
    {"GET", "/api/v1/agent/nodes", api_h_agent_nodes, API_ORG_READ},
    {"PATCH", "/api/v1/agent/nodes/{name}", api_h_agent_node_set, API_NODE_WRITE},
    {"POST", "/api/v1/agent/nodes/{name}/approve", api_h_agent_node_approve, API_NODE_WRITE},
    {"POST", "/api/v1/agent/register", api_h_agent_register, API_AGENT},
    {"POST", "/api/v1/agent/heartbeat", api_h_agent_heartbeat, API_AGENT},
    {"POST", "/api/v1/agent/pods/{uid}/logs", api_h_agent_logs_append, API_AGENT},
    /* named secrets (h_secrets.c, secrets.h): reading keys takes the right
     * to submit, managing takes the organization's */
    {"GET", "/api/v1/asset/credentials/generic-secret", api_h_secrets_list, API_WL_WRITE},
    {"POST", "/api/v1/asset/credentials/generic-secret", api_h_secrets_create, API_ORG_WRITE},
    {"GET", "/api/v1/asset/credentials/generic-secret/{id}", api_h_secret_get, API_WL_WRITE},
    {"PUT", "/api/v1/asset/credentials/generic-secret/{id}", api_h_secret_update, API_ORG_WRITE},
    {"DELETE", "/api/v1/asset/credentials/generic-secret/{id}", api_h_secret_delete,
     API_ORG_WRITE},
    /* the other assets (h_assets.c, assets.h): one handler per verb, the
     * kind from the path; reading takes the right to read (credentials:
     * to submit) where the asset's scope is, managing the organization's */
    {"GET", "/api/v1/asset/datasource", api_h_assets_family_list, API_WL_READ},
    {"GET", "/api/v1/asset/credentials", api_h_assets_family_list, API_WL_WRITE},
    ASSET_ROUTES("environment", API_WL_READ),
    ASSET_ROUTES("compute", API_WL_READ),
    ASSET_ROUTES("datasource/host-path", API_WL_READ),
    ASSET_ROUTES("datasource/git", API_WL_READ),
    ASSET_ROUTES("datasource/nfs", API_WL_READ),
    ASSET_ROUTES("datasource/pvc", API_WL_READ),
    ASSET_ROUTES("datasource/s3", API_WL_READ),
    ASSET_ROUTES("datasource/config-map", API_WL_READ),
    ASSET_ROUTES("datasource/secrets", API_WL_READ),
    ASSET_ROUTES("credentials/password", API_WL_WRITE),
    ASSET_ROUTES("credentials/access-key", API_WL_WRITE),
    ASSET_ROUTES("credentials/docker-registry", API_WL_WRITE),
    ASSET_ROUTES("credentials/ngc-api-key", API_WL_WRITE),
    ASSET_ROUTES("registries", API_WL_READ),
    ASSET_ROUTES("workload-template", API_WL_READ),
    /* workload templates (h_templates.c): the type from the path */
    {"GET", "/api/v1/workload-templates", api_h_templates_list, API_WL_READ},
    {"GET", "/api/v1/workload-templates/count", api_h_templates_list, API_WL_READ, API_ARG_COUNT},
    {"GET", "/api/v1/workload-templates/name-availability", api_h_template_name_free,
     API_WL_READ},
    {"GET", "/api/v1/workload-templates/{id}", api_h_template_get, API_WL_READ},
    TEMPLATE_ROUTES("workspaces"),
    TEMPLATE_ROUTES("trainings"),
    TEMPLATE_ROUTES("distributed"),
    {"POST", "/api/v1/workload-templates/inferences", api_h_template_create, API_ORG_WRITE},
    {"GET", "/api/v1/workload-templates/inferences", api_h_templates_list, API_WL_READ},
    {"GET", "/api/v1/workload-templates/inferences/{id}", api_h_template_get, API_WL_READ},
    {"DELETE", "/api/v1/workload-templates/inferences/{id}", api_h_template_delete,
     API_ORG_WRITE},
};
#pragma GCC diagnostic pop
const int api_n_routes = (int)(sizeof(api_routes) / sizeof(api_routes[0]));

int64_t api_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

json_t *api_time(int64_t ms)
{
    char buf[96];
    time_t s = (time_t)(ms / 1000);
    struct tm tm;

    if (ms <= 0)
        return json_null();
    gmtime_r(&s, &tm);
    snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
    return json_string(buf);
}

static int hexval(int c);

/* FNV-1a over the base, the kind and n, from a seed. */
static uint64_t id_hash(uint64_t h, const char *base, int kind, int64_t n)
{
    unsigned char tail[9];
    int i;

    for (; *base; base++)
        h = (h ^ (unsigned char)*base) * 0x100000001b3ULL;
    tail[0] = (unsigned char)kind;
    for (i = 0; i < 8; i++)
        tail[1 + i] = (unsigned char)((uint64_t)n >> (8 * i));
    for (i = 0; i < 9; i++)
        h = (h ^ tail[i]) * 0x100000001b3ULL;
    return h;
}

void api_uuid_derived(const char *base, int kind, int64_t n, char out[DB_ID_LEN])
{
    uint64_t hi = id_hash(0xcbf29ce484222325ULL, base, kind, n);
    uint64_t lo = id_hash(0x84222325cbf29ce4ULL, base, kind, n) ^ (hi >> 7);

    hi = (hi & ~0xf000ULL) | 0x8000ULL;                      /* version 8 */
    lo = (lo & ~(3ULL << 62)) | (2ULL << 62);                /* RFC 9562 variant */
    snprintf(out, DB_ID_LEN, "%08llx-%04llx-%04llx-%04llx-%012llx",
             (unsigned long long)(hi >> 32), (unsigned long long)((hi >> 16) & 0xffff),
             (unsigned long long)(hi & 0xffff), (unsigned long long)(lo >> 48),
             (unsigned long long)(lo & 0xffffffffffffULL));
}

int api_is_uuid(const char *s)
{
    int i;

    for (i = 0; i < 36; i++) {
        int dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : hexval((unsigned char)s[i]) < 0)
            return 0;
    }
    return s[36] == 0;
}

/* ---- replies ---- */

/* How long an idle keep-alive connection stays open. Replies say so
 * (Keep-Alive: timeout=N), so that clients stop reusing a connection
 * before the server closes it instead of racing the close. */
#define API_KEEP_ALIVE_S 2
#define API_KEEP_ALIVE_MS "2000"


/* The reply's status line and headers, for a body of len bytes, into
 * head (API_REPLY_HEAD bytes); their length, or 0 when they do not fit. */
static size_t head_format(struct api_req *r, int status, const char *type, size_t len,
                          const char *extra, char *head)
{
    int n = snprintf(head, API_REPLY_HEAD,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
                     "Keep-Alive: timeout=%d\r\n%s\r\n",
                     status, mg_get_response_code_text(r->conn, status), type, len,
                     API_KEEP_ALIVE_S, extra ? extra : "");

    r->status = status;
    return n < 0 || n >= API_REPLY_HEAD ? 0 : (size_t)n;
}

static void send_raw(struct api_req *r, int status, const char *type, const char *body,
                     size_t len, const char *extra)
{
    char head[API_REPLY_HEAD];
    char *one;
    size_t n = head_format(r, status, type, len, extra, head);

    if (!n)
        return;
    if (r->idem)
        api_idem_capture(r, status, body, len);
    /* one write per reply: header and body in separate segments cost a
     * second trip through the stack (and would meet Nagle's algorithm and
     * the peer's delayed ACK without tcp_nodelay) */
    one = malloc(n + len);
    if (one) {
        memcpy(one, head, n);
        if (len)
            memcpy(one + n, body, len);
        mg_write(r->conn, one, n + len);
        free(one);
        return;
    }
    mg_write(r->conn, head, n);
    if (len)
        mg_write(r->conn, body, len);
}

void api_reply_room(struct api_req *r, int status, const char *type, char *buf, size_t room,
                    size_t len)
{
    char head[API_REPLY_HEAD];
    size_t n = head_format(r, status, type, len, NULL, head);

    if (!n)
        return;
    if (r->idem)
        api_idem_capture(r, status, buf + room, len);
    if (n > room) {
        send_raw(r, status, type, buf + room, len, NULL);
        return;
    }
    memcpy(buf + room - n, head, n);
    mg_write(r->conn, buf + room - n, n + len);
}

void api_reply_text(struct api_req *r, int status, const char *type, const char *text,
                    size_t len)
{
    send_raw(r, status, type, text, len, NULL);
}

void api_reply_with(struct api_req *r, int status, const char *type, const char *body,
                    size_t len, const char *extra)
{
    send_raw(r, status, type, body, len, extra);
}

void api_reply(struct api_req *r, int status, json_t *body)
{
    char *s = body ? json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

    if (!s) {
        static const char oom[] =
            "{\"code\":500,\"message\":\"out of memory\",\"details\":\"\"}";
        send_raw(r, 500, "application/json", oom, sizeof(oom) - 1, NULL);
    } else {
        send_raw(r, status, "application/json", s, strlen(s), NULL);
    }
    free(s);
    json_decref(body);
}

/* A JSON string of text that may quote the request's own bytes (a query
 * parameter's name, a filter's field): JSON strings are UTF-8, so when
 * text is not, each byte from 0x80 up becomes '?'. */
static json_t *quoted_text(const char *text)
{
    json_t *j = json_string(text);
    char *copy;
    size_t i;

    if (j || !(copy = strdup(text)))
        return j;
    for (i = 0; copy[i]; i++)
        if ((unsigned char)copy[i] >= 0x80)
            copy[i] = '?';
    j = json_string(copy);
    free(copy);
    return j;
}

static void error_with(struct api_req *r, int status, const char *message, const char *details,
                       const char *extra)
{
    static const char oom[] = "{\"code\":500,\"message\":\"out of memory\",\"details\":\"\"}";
    json_t *e = json_pack("{s:i, s:o, s:o}", "code", status, "message", quoted_text(message),
                          "details", quoted_text(details ? details : ""));
    char *s = e ? json_dumps(e, JSON_COMPACT) : NULL;

    if (s)
        send_raw(r, status, "application/json", s, strlen(s), extra);
    else
        send_raw(r, 500, "application/json", oom, sizeof(oom) - 1, extra);
    free(s);
    json_decref(e);
}

void api_error(struct api_req *r, int status, const char *message, const char *details)
{
    error_with(r, status, message, details, NULL);
}

void api_error_retry(struct api_req *r, int status, const char *message, const char *details,
                     int retry_s)
{
    char extra[64];

    snprintf(extra, sizeof(extra), "Retry-After: %d\r\n", retry_s);
    error_with(r, status, message, details, extra);
}

/* The HTTP status of a storage code: one table for every handler. */
int api_db_status(int rc)
{
    switch (rc) {
    case DB_ENOTFOUND: return 404;
    case DB_ECONFLICT: return 409;
    case DB_EINVAL: return 400;
    case DB_EFULL: return 507;
    case DB_ELIMIT: return 429;
    case DB_ECLOSED: case DB_EBUSY: case DB_EREADONLY: case DB_EGONE: case DB_EUNAVAIL:
        return 503;
    default: return 500;
    }
}

void api_db_error(struct api_req *r, int rc, const char *what)
{
    char why[256];

    switch (api_db_status(rc)) {
    case 404: api_error(r, 404, "Not found", what); break;
    case 409: api_error(r, 409, "Conflict", what); break;
    case 400: api_error(r, 400, "Bad request", what); break;
    case 429: api_error(r, 429, "Too many requests", what); break;
    case 507:
    case 503:
        if (rc == DB_ECLOSED || db_health(r->app->db, why, sizeof(why)) == DB_OK)
            snprintf(why, sizeof(why), "%s", rc == DB_ECLOSED ? "the server is stopping"
                                                              : db_strerror(rc));
        api_error(r, api_db_status(rc), rc == DB_EFULL ? "Insufficient storage"
                                                        : "Service unavailable", why);
        break;
    default: api_error(r, 500, "Internal error", "storage failure"); break;
    }
}

void api_reply_deleted(struct api_req *r, int rc, const char *what)
{
    if (rc != DB_OK)
        api_db_error(r, rc, what);
    else
        api_reply_text(r, 204, "application/json", "", 0);
}

json_t *api_body_object(struct api_req *r)
{
    json_t *o;

    if (!r->body || r->body_len == 0) {
        api_error(r, 400, "Bad request", "a JSON object body is required");
        return NULL;
    }
    o = api_json_parse(r, r->body, r->body_len);
    if (o && !json_is_object(o)) {
        json_decref(o);
        api_error(r, 400, "Bad request", "the body must be a JSON object");
        return NULL;
    }
    return o;
}

/* ---- query strings ---- */

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* URL-decodes src[0..n) into out (form rules: '+' is a space); -1 (and
 * out "") for a malformed escape, a NUL or another control character, or
 * an out too small. */
static int url_decode(const char *src, size_t n, char *out, size_t len)
{
    size_t i, o = 0;

    out[0] = 0;
    for (i = 0; i < n; i++) {
        int c = (unsigned char)src[i];
        if (c == '%') {
            int h, l;
            if (i + 2 >= n)
                return out[0] = 0, -1;
            h = hexval(src[i + 1]);
            l = hexval(src[i + 2]);
            if (h < 0 || l < 0)
                return out[0] = 0, -1;
            c = h * 16 + l;
            i += 2;
        } else if (c == '+') {
            c = ' ';
        }
        if (c < 0x20 || c == 0x7f || o + 1 >= len)
            return out[0] = 0, -1;
        out[o++] = (char)c;
    }
    out[o] = 0;
    return 0;
}

int api_form_get(const char *s, const char *name, char *out, size_t len)
{
    size_t nl = strlen(name);

    while (s && *s) {
        const char *amp = strchr(s, '&');
        size_t seg = amp ? (size_t)(amp - s) : strlen(s);
        if (seg > nl && strncmp(s, name, nl) == 0 && s[nl] == '=')
            return url_decode(s + nl + 1, seg - nl - 1, out, len) == 0 ? 0 : -1;
        s = amp ? amp + 1 : NULL;
    }
    return 1;
}

int api_query(const struct api_req *r, const char *name, char *out, size_t len)
{
    return api_form_get(r->query, name, out, len);
}

int api_query_int(struct api_req *r, const char *name, int64_t min, int64_t max, int64_t *out)
{
    char buf[32], *end, details[128];
    long long v = 0;
    int rc = api_query(r, name, buf, sizeof(buf));

    if (rc == 1)
        return 0;
    if (rc == 0) {
        errno = 0;
        v = strtoll(buf, &end, 10);
    }
    if (rc != 0 || errno || end == buf || *end || v < min || v > max) {
        snprintf(details, sizeof(details), "%s must be an integer from %lld to %lld", name,
                 (long long)min, (long long)max);
        api_error(r, 400, "Bad request", details);
        return -1;
    }
    *out = v;
    return 0;
}

int api_query_bool(struct api_req *r, const char *name, int *out)
{
    char buf[8], details[96];
    int rc = api_query(r, name, buf, sizeof(buf));

    if (rc == 1)
        return 0;
    if (rc != 0 || (strcmp(buf, "true") && strcmp(buf, "false"))) {
        snprintf(details, sizeof(details), "%s is true or false", name);
        api_error(r, 400, "Bad request", details);
        return -1;
    }
    *out = buf[0] == 't';
    return 0;
}

/* Every query parameter decodes (no malformed escape, NUL or control
 * character) to at most API_QUERY_VALUE_MAX bytes; else a 400 naming it,
 * so that no handler takes a parameter it could not read for absent. */
int api_query_valid(struct api_req *r)
{
    const char *s = r->query;
    char details[160];

    while (s && *s) {
        const char *amp = strchr(s, '&'), *eq;
        size_t seg = amp ? (size_t)(amp - s) : strlen(s), nl;
        char value[API_QUERY_VALUE_MAX + 1];
        eq = memchr(s, '=', seg);
        nl = eq ? (size_t)(eq - s) : seg;
        if (eq && url_decode(eq + 1, seg - nl - 1, value, sizeof(value)) != 0) {
            snprintf(details, sizeof(details),
                     "query parameter '%.*s': a malformed escape, a NUL or a control character,"
                     " or longer than %d bytes", nl > 64 ? 64 : (int)nl, s, API_QUERY_VALUE_MAX);
            api_error(r, 400, "Bad request", details);
            return 0;
        }
        s = amp ? amp + 1 : NULL;
    }
    return 1;
}

/* ---- dispatch ---- */

/* How specifically `pattern` matches `path`, segment by segment: bit
 * (31 - i) is set when segment i is a "{param}". -1 if it does not match
 * (params, when given, receive the first two captures). Of two patterns
 * that match, the smaller value is the more specific: a fixed segment
 * wins over a parameter at the first place they differ. */
static long long match(const char *pattern, const char *path, char params[2][DB_NAME_LEN])
{
    long long spec = 0;
    int np = 0, seg = 0;

    /* byte loops, not strcspn/strncmp: every request tries each of the
     * ~120 patterns, and most differ from the path within a few bytes */
    while (*pattern && *path) {
        size_t n = 0;
        if (*pattern != '/' || *path != '/' || seg >= 31)
            return -1;
        pattern++;
        path++;
        if (*pattern == '{') {
            while (path[n] && path[n] != '/')
                n++;
            while (*pattern && *pattern != '}')
                pattern++;
            if (n == 0 || n >= DB_NAME_LEN || !*pattern)
                return -1;
            if (params && np < 2) {
                memcpy(params[np], path, n);
                params[np][n] = 0;
            }
            np++;
            path += n;
            pattern++;
            spec |= 1LL << (31 - seg);
        } else {
            while (pattern[n] && pattern[n] != '/' && pattern[n] == path[n])
                n++;
            if ((pattern[n] && pattern[n] != '/') || (path[n] && path[n] != '/'))
                return -1;
            pattern += n;
            path += n;
        }
        seg++;
    }
    return *pattern == 0 && *path == 0 ? spec : -1;
}

/* The Run:ai operation of the document most specific for the path, with
 * the method if it has it; *best its specificity (-1 none). */
static const struct api_runai_op *runai_op(const char *method, const char *path,
                                           long long *best)
{
    const struct api_runai_op *op = NULL;
    int i;

    *best = -1;
    for (i = 0; i < api_n_runai_ops; i++) {
        long long m = match(api_runai_ops[i].pattern, path, NULL);
        if (m < 0 || (*best >= 0 && m > *best))
            continue;
        if (m < *best || *best < 0)
            op = NULL;
        *best = m;
        if (strcmp(api_runai_ops[i].method, method) == 0)
            op = &api_runai_ops[i];
    }
    return op;
}

/* The fixed segments of Run:ai's paths, sorted: a route whose {param}
 * captured none of them cannot be shadowed by a more specific Run:ai path,
 * so the common request skips the scan of runai_op(). Built once. */
static const char **runai_literals;
static int n_runai_literals;
static pthread_once_t literals_once = PTHREAD_ONCE_INIT;

static int literal_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void literals_build(void)
{
    static char text[16384];
    size_t used = 0;
    int i, cap = 512;

    runai_literals = malloc(sizeof(*runai_literals) * (size_t)cap);
    for (i = 0; runai_literals && i < api_n_runai_ops; i++) {
        const char *p = api_runai_ops[i].pattern;
        while (*p == '/') {
            size_t n = strcspn(++p, "/");
            if (*p != '{' && n > 0 && used + n + 1 < sizeof(text) && n_runai_literals < cap) {
                memcpy(text + used, p, n);
                text[used + n] = 0;
                runai_literals[n_runai_literals++] = text + used;
                used += n + 1;
            }
            p += n;
        }
    }
    if (runai_literals)
        qsort(runai_literals, (size_t)n_runai_literals, sizeof(*runai_literals), literal_cmp);
}

/* Did the route's parameters capture a fixed segment of a Run:ai path? */
static int captured_literal(const struct api_req *r, const char *pattern)
{
    const char *s = r->params[0];
    int i;

    pthread_once(&literals_once, literals_build);
    for (i = 0; i < 2 && strchr(pattern, '{'); i++, s = r->params[1]) {
        if (s[0] && bsearch(&s, runai_literals, (size_t)n_runai_literals,
                            sizeof(*runai_literals), literal_cmp))
            return 1;
        pattern = strchr(pattern, '}') + 1;
    }
    return 0;
}

enum route_miss { ROUTE_FOUND = 0, ROUTE_NO_PATH, ROUTE_NO_METHOD, ROUTE_RUNAI };

/* A pattern matches only paths of as many segments ('/'s) as it has, and
 * only paths whose third segment (the resource after /api/v1/) is its
 * own when that segment of the pattern is not a {param}: each route's
 * count and third segment, kept once, rule most routes out before
 * match(), which would refuse them anyway. */
struct route_key {
    int slashes;
    const char *third;         /* the third segment; NULL: a {param} or none */
    size_t third_len;
};

static struct route_key route_keys[sizeof(api_routes) / sizeof(api_routes[0])];
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;

/* The key of a path or a pattern: its '/'s, and its third segment. */
static struct route_key key_of(const char *s)
{
    struct route_key k = {0, NULL, 0};

    for (; *s; s++)
        if (*s == '/' && ++k.slashes == 3 && s[1] != '{') {
            k.third = s + 1;
            k.third_len = strcspn(s + 1, "/");
        }
    return k;
}

static void keys_build(void)
{
    int i;

    for (i = 0; i < api_n_routes; i++)
        route_keys[i] = key_of(api_routes[i].pattern);
}

/* Can route i match a path of key k at all? */
static int may_match(int i, const struct route_key *k)
{
    const struct route_key *r = &route_keys[i];

    return r->slashes == k->slashes &&
           (!r->third || (k->third && r->third_len == k->third_len &&
                          memcmp(r->third, k->third, k->third_len) == 0));
}

/* The route for the request: of the patterns that match its path, the
 * most specific, then the method. A path Run:ai's document defines more
 * specifically than any route (or the same path with a method Run:ai has
 * and allotd lacks) is ROUTE_RUNAI, with *op naming the operation. */
static const struct api_route *find_route(struct api_req *r, int *miss,
                                          const struct api_runai_op **op)
{
    const struct api_route *found = NULL;
    long long best = -1, runai;
    struct route_key key = key_of(r->path);
    int i;

    pthread_once(&keys_once, keys_build);
    for (i = 0; i < api_n_routes; i++) {
        char params[2][DB_NAME_LEN];
        long long m = !may_match(i, &key) ? -1 : match(api_routes[i].pattern, r->path, params);
        if (m < 0 || (best >= 0 && m > best))
            continue;
        if (m < best || best < 0)
            found = NULL;
        best = m;
        if (!found && strcmp(api_routes[i].method, r->method) == 0) {
            memcpy(r->params, params, sizeof(params));
            found = &api_routes[i];
        }
    }
    *op = NULL;
    runai = -1;
    if (!found || (best > 0 && captured_literal(r, found->pattern)))
        *op = runai_op(r->method, r->path, &runai);
    if (runai >= 0 && (best < 0 || runai < best))
        *miss = *op ? ROUTE_RUNAI : ROUTE_NO_METHOD;
    else if (found)
        *miss = ROUTE_FOUND;
    else if (best >= 0)
        *miss = *op && runai == best ? ROUTE_RUNAI : ROUTE_NO_METHOD;
    else
        *miss = ROUTE_NO_PATH;
    return *miss == ROUTE_FOUND ? found : NULL;
}

/* 404, 405 or 501 for a request no route serves. */
static void route_missing(struct api_req *r, int miss, const struct api_runai_op *op)
{
    char details[512];

    if (miss == ROUTE_RUNAI) {
        snprintf(details, sizeof(details),
                 "%s %s (Run:ai's operation %s) is not implemented by allotd", op->method,
                 op->pattern, op->operation_id);
        api_error(r, 501, "Not implemented", details);
    } else if (miss == ROUTE_NO_METHOD) {
        snprintf(details, sizeof(details), "%s is not served on %.400s", r->method, r->path);
        api_error(r, 405, "Method not allowed", details);
    } else {
        snprintf(details, sizeof(details), "no route %s %.400s", r->method, r->path);
        api_error(r, 404, "Not found", details);
    }
}

static void body_too_large(struct api_req *r, size_t cap)
{
    char details[96];

    snprintf(details, sizeof(details), "the request body is capped at %zu bytes here", cap);
    error_with(r, 413, "Payload too large", details, "Connection: close\r\n");
}

/* Reads the body, at most `cap` bytes; replies 413, or 408 for a body
 * that stopped arriving for a request timeout or that conns.c cut for
 * taking longer than 5 (and returns -1). */
static int read_body(struct api_req *r, long long content_length, size_t cap_max)
{
    size_t cap = content_length >= 0 ? (size_t)content_length : 4096, got = 0;
    char *buf;

    if (content_length > (long long)cap_max) {
        body_too_large(r, cap_max);
        return -1;
    }
    buf = malloc(cap + 1);
    if (!buf) {
        api_error(r, 500, "Internal error", "out of memory");
        return -1;
    }
    for (;;) {
        int n;
        if (got == cap) {
            char *nb;
            if (content_length >= 0 || cap > cap_max)
                break;
            cap = cap * 2 > cap_max ? cap_max + 1 : cap * 2;
            nb = realloc(buf, cap + 1);
            if (!nb)
                break;
            buf = nb;
        }
        n = mg_read(r->conn, buf + got, cap - got);
        if (n <= 0)
            break;
        got += (size_t)n;
        if (got > cap_max) {
            free(buf);
            body_too_large(r, cap_max);
            return -1;
        }
    }
    if (content_length >= 0 && got < (size_t)content_length) {
        free(buf);
        error_with(r, 408, "Request timeout",
                   "the request body did not arrive in time (or ended before its Content-Length)",
                   "Connection: close\r\n");
        return -1;
    }
    buf[got] = 0;
    r->body = buf;
    r->body_len = got;
    return 0;
}

/* An access key's token acts as its owner: r->who.user becomes the owner
 * (a user), whose access rules then apply. 0; 1 when the owner is gone or
 * may not sign in; or a DB_E* code. */
static int act_as_owner(struct api_req *r)
{
    int rc = db_user_get(r->app->db, r->who.user.owner_id, &r->who.user);

    if (rc != DB_OK && rc != DB_ENOTFOUND)
        return rc;
    return rc != DB_OK || r->who.user.kind != DB_USER || !r->who.user.enabled;
}

/* 0; 1 when the token names no user that may use it (gone, disabled,
 * token version passed); or the DB_E* code of a store that could not
 * answer (the database server unreachable): not the token's fault. */
static int load_principal(struct api_req *r, const struct api_token_info *info)
{
    int rc = db_user_get(r->app->db, info->user_id, &r->who.user);

    if (rc != DB_OK && rc != DB_ENOTFOUND)
        return rc;
    if (rc != DB_OK || r->who.user.token_version != info->token_version ||
        !r->who.user.enabled)
        return 1;
    if (info->family[0]) { /* its sign-in's family, revoked on a refresh token's reuse */
        rc = db_refresh_live(r->app->db, info->family, info->user_id);
        if (rc != DB_OK)
            return rc == DB_ENOTFOUND ? 1 : rc;
    }
    if (r->who.user.owner_id > 0 && (rc = act_as_owner(r)) != 0)
        return rc;
    memset(r->who.user.secret_hash, 0, sizeof(r->who.user.secret_hash));
    return db_rule_list(r->app->db, r->who.user.login, &r->who.rules, &r->who.n_rules);
}

/* A cached principal, else a verified token and the database (pcache.c). */
static int authenticate(struct api_req *r)
{
    const char *h = mg_get_header(r->conn, "Authorization");
    int64_t now_s = api_now_ms() / 1000;
    struct api_token_info info;
    uint64_t gen;
    int rc;

    if (!h || strncasecmp(h, "Bearer ", 7) != 0 || strlen(h + 7) > API_TOKEN_MAX) {
        api_error(r, 401, "Unauthorized", "a bearer token is required");
        return -1;
    }
    if (api_pcache_get(r->app->pc, h + 7, now_s, &r->who) == 0)
        return 0;
    gen = api_pcache_generation(r->app->pc);
    rc = api_token_check(&r->app->key, h + 7, API_TOKEN_ACCESS, now_s, &info) != 0
             ? 1 : load_principal(r, &info);
    if (rc < 0) { /* the token may be good: the store could not say (503) */
        api_db_error(r, rc, "the token's user");
        return -1;
    }
    if (rc != 0) {
        api_error(r, 401, "Unauthorized", "the token is invalid or expired");
        return -1;
    }
    api_pcache_put(r->app->pc, h + 7, info.exp_s + r->app->key.leeway_s,
                   info.nbf_s - r->app->key.leeway_s, gen, &r->who);
    return 0;
}

static int rate_ok(struct api_req *r, int cost)
{
    int wait = api_ratelimit_take(r->app->rl, r->remote, cost, api_now_ms());

    if (wait == 0)
        return 1;
    api_error_retry(r, 429, "Too many requests", "the client's request rate is limited", wait);
    return 0;
}

/* The signed-in principal's bucket, whatever addresses it calls from. */
static int user_rate_ok(struct api_req *r)
{
    char key[32];
    int wait;

    snprintf(key, sizeof(key), "%lld", (long long)r->who.user.id);
    wait = api_ratelimit_take(r->app->url, key, 1, api_now_ms());
    if (wait == 0)
        return 1;
    api_error_retry(r, 429, "Too many requests",
                    "the user's request rate is limited (allotd --user-rate-limit)", wait);
    return 0;
}

static void serve(struct api_req *r, const struct mg_request_info *ri)
{
    const struct api_runai_op *op;
    const struct api_route *rt;
    int miss;

    /* Step 1; the metrics listener serves /metrics alone, to anyone */
    if (r->app->metrics_port && ri->server_port == r->app->metrics_port) {
        if (strcmp(r->method, "GET") == 0 && strcmp(r->path, "/metrics") == 0)
            api_metrics_render(r);
        else
            api_error(r, 404, "Not found", "this listener serves /metrics only");
        return;
    }
    rt = find_route(r, &miss, &op);
    if (miss == ROUTE_NO_PATH && api_static_wants(r)) {
        if (rate_ok(r, 1))
            api_static_serve(r);
        return;
    }
    if (!rt) {
        route_missing(r, miss, op);
        return;
    }
    if (!api_query_valid(r))
        return;
    /* Step 2: token grants cost more, to slow password guessing */
    if (!rate_ok(r, rt->handler == api_h_token_v1 || rt->handler == api_h_token_v2 ? 10 : 1))
        return;
    /* Step 3: who is asking, from the headers alone */
    if (rt->perm == API_AGENT) {
        if (api_agent_authenticate(r) != 0)
            return;
    } else if (rt->perm != API_PUBLIC) {
        if (authenticate(r) != 0 || !user_rate_ok(r))
            return;
        if ((rt->perm & ~(unsigned)API_AUTH) && !api_can_any(&r->who, rt->perm)) {
            api_error(r, 403, "Forbidden", "the caller lacks the right this route needs");
            return;
        }
    }
    /* Step 4: the body; anonymous callers (the token routes) get a small one */
    if ((strcmp(r->method, "POST") == 0 || strcmp(r->method, "PUT") == 0 ||
         strcmp(r->method, "PATCH") == 0) &&
        read_body(r, ri->content_length, rt->perm == API_PUBLIC ? API_PUBLIC_BODY_MAX
                                                                  : API_BODY_MAX) != 0)
        return;
    api_conns_busy(r->conn);
    /* Step 5 */
    r->arg = rt->arg;
    if (api_idem_begin(r, rt->handler) != 0)
        return;
    rt->handler(r);
    api_idem_end(r);
    api_audit_note(r, rt);
}

/* The client's address: the peer's, or behind a trusted proxy the one its
 * header names (clientaddr.c); kept in r->remote_buf. */
static const char *client_address(struct api_req *r, const struct mg_request_info *ri)
{
    const struct api_client_trust *t = &r->app->cfg.trust;
    const char *lines[16];
    int i, n = 0;

    for (i = 0; t->n_trusted && i < ri->num_headers; i++)
        if (strcasecmp(ri->http_headers[i].name, t->header) == 0) {
            if (n == (int)(sizeof(lines) / sizeof(lines[0]))) { /* the right-most count */
                memmove(lines, lines + 1, sizeof(lines) - sizeof(lines[0]));
                n--;
            }
            lines[n++] = ri->http_headers[i].value;
        }
    api_client_address(t, ri->remote_addr, lines, n, r->remote_buf, sizeof(r->remote_buf));
    return r->remote_buf;
}

static int dispatch(struct mg_connection *conn, void *cbdata)
{
    const struct mg_request_info *ri = mg_get_request_info(conn);
    struct api_req r;
    struct timespec a, b;

    clock_gettime(CLOCK_MONOTONIC, &a);
    api_conns_begin(conn);
    memset(&r, 0, sizeof(r));
    r.conn = conn;
    r.app = cbdata;
    r.method = ri->request_method;
    r.path = ri->local_uri ? ri->local_uri : "/";
    r.query = ri->query_string;
    r.remote = client_address(&r, ri);
    r.content_type = mg_get_header(conn, "Content-Type");
    serve(&r, ri);
    if (!r.status) /* a handler that forgot to answer still answers */
        api_error(&r, 500, "Internal error", "the request was not answered");
    /* Step 6 */
    free(r.body);
    api_principal_clear(&r.who);
    clock_gettime(CLOCK_MONOTONIC, &b);
    api_metrics_request(r.status, (int64_t)(b.tv_sec - a.tv_sec) * 1000000 +
                                      (b.tv_nsec - a.tv_nsec) / 1000);
    api_conns_end(conn);
    return r.status ? r.status : 500;
}

static int log_message(const struct mg_connection *conn, const char *message)
{
    (void)conn;
    fprintf(stderr, "allotd: http: %s\n", message);
    return 1;
}

/* Errors civetweb answers itself, before any handler (a request head
 * that is malformed, too large or did not arrive in time), in the same
 * envelope as every other error. */
static int http_error(struct mg_connection *conn, int status, const char *errmsg)
{
    struct api_req r;
    const char *details = errmsg;

    memset(&r, 0, sizeof(r));
    r.conn = conn;
    if (status == 413) {
        status = 431;
        details = "the request head (request line and headers) is capped at 16384 bytes";
    } else if (status == 400) {
        details = "the request head is malformed, longer than 16384 bytes, or did not arrive "
                  "within the request timeout";
    }
    error_with(&r, status, mg_get_response_code_text(conn, status), details,
               "Connection: close\r\n");
    return 0;
}

int api_http_start(struct api_app *app)
{
    char threads[16], timeout[16], ports_opt[2 * sizeof(app->cfg.listen) + 2];
    const char *options[] = {
        "listening_ports", ports_opt,
        "num_threads", threads,
        "listen_backlog", "1024",
        "enable_keep_alive", "yes",
        "keep_alive_timeout_ms", API_KEEP_ALIVE_MS,
        "request_timeout_ms", timeout,
        "enable_directory_listing", "no",
        "access_control_allow_origin", "",
        "access_control_allow_methods", "",
        "access_control_allow_headers", "",
        "max_request_size", "16384",
        "tcp_nodelay", "1",
        NULL, NULL,
    };
    struct mg_callbacks cb;
    struct mg_server_port ports[4];
    int n;

    snprintf(threads, sizeof(threads), "%d", app->cfg.threads);
    snprintf(timeout, sizeof(timeout), "%d", app->cfg.request_timeout_ms);
    snprintf(ports_opt, sizeof(ports_opt), "%s%s%s", app->cfg.listen,
             app->cfg.metrics_listen[0] ? "," : "", app->cfg.metrics_listen);
    if (api_conns_start(app->cfg.threads, 5 * app->cfg.request_timeout_ms) != 0) {
        fprintf(stderr, "allotd: cannot start the connection table\n");
        return -1;
    }
    memset(&cb, 0, sizeof(cb));
    cb.log_message = log_message;
    cb.init_connection = api_conns_init_connection;
    cb.connection_close = api_conns_closed;
    cb.http_error = http_error;
    app->mg = mg_start(&cb, app, options);
    if (!app->mg) {
        fprintf(stderr, "allotd: cannot listen on %s\n", app->cfg.listen);
        return -1;
    }
    mg_set_request_handler(app->mg, "/", dispatch, app);
    n = mg_get_server_ports(app->mg, 4, ports);
    if (n > 0)
        app->port = ports[0].port;
    if (n > 1 && app->cfg.metrics_listen[0]) {
        app->metrics_port = ports[1].port;
        printf("allotd: metrics without a token on port %d (/metrics)\n", app->metrics_port);
    }
    return 0;
}

void api_http_stop(struct api_app *app)
{
    api_logs_stop();
    if (app->mg) {
        api_conns_unlisten();
        mg_stop(app->mg); /* returns when in-flight requests have finished */
    }
    app->mg = NULL;
    api_conns_stop();
}
