/*
 * assets.h: Run:ai's assets (h_assets.c): environments, compute
 * resources, data sources, credentials (generic secrets: secrets.h),
 * registries and workload templates (h_templates.c), one table of kinds,
 * and what a submission takes from them.
 *
 * Rights, on the asset's scope (a project, a department, the tenant), as
 * for projects (authz.c):
 *   read it                     API_WL_READ (credentials: API_WL_WRITE,
 *                               as generic secrets), where the caller may
 *   create, change, delete      API_ORG_WRITE: its administrators
 *   use it in a submission      API_WL_WRITE on the workload's project,
 *                               for the assets that project sees (its
 *                               own, its department's, the tenant's)
 */
#ifndef ALLOT_ASSETS_H
#define ALLOT_ASSETS_H

#include "api.h"
#include "db_assets.h"

/* The routes of every kind: the kind is the path's (h_assets.c's table). */
api_handler_fn api_h_assets_list, api_h_asset_create, api_h_asset_get, api_h_asset_update,
    api_h_asset_delete;
/* GET /api/v1/asset/datasource and /api/v1/asset/credentials: every kind
 * of the family, each entry's spec under its kind. */
void api_h_assets_family_list(struct api_req *r);

/* A submission's templateId and assets (an allot extension of the shape
 * of Run:ai's AssetsIds: {environment, compute, datasources[{id, kind,
 * overrides}], credentials[]}, each an id or a name the project sees):
 * top.spec becomes what they give, overridden field by field by the spec
 * given (a list of named entries merged by name, a value replaced), and
 * templateId and assets leave top. *refs (a new object, or NULL when
 * none was named) says which assets it came from. 0, or -1 answered. */
int api_assets_expand(struct api_req *r, json_t *top, const struct api_project *project,
                      int type, json_t **refs);
/* Keeps refs in a stored spec (w->spec, rewritten) as spec.assets; refs
 * NULL or a spec without room: nothing. 0, or -1 answered 500. */
int api_assets_note(struct api_req *r, struct db_workload *w, json_t *refs);

/* A credential asset the project named `project` sees by name: 0 and
 * *value for key (a shown field or a sealed one opened; wipe it with
 * api_secretbox_free()), 1 if it has no such key, -1 if there is no such
 * credential or the value cannot be had. */
int api_credential_value(struct db *db, const char *project, const char *name, const char *key,
                         char **value);

/* ---- asset_info.c: what an answer adds on request, the list filters ---- */

/* The live workloads (not Completed, Failed or deleted) and the assets
 * that name a: as "name (where), ..." in text, and as Run:ai's
 * AssetUsageInfo in *by (a new object; by may be NULL). 1 if some, 0 if
 * none, or the store's error (below 0), unanswered. */
int api_asset_usage(struct api_req *r, const struct db_asset *a, json_t **by, char *text,
                    size_t len);

/* The query of an asset list or GET: usageInfo, statusInfo, complyTo*,
 * is*, distributedFramework, assetIds (asset_info.c says what each does). */
struct usage_cache;
struct api_asset_q {
    int usage, status;             /* usageInfo, statusInfo */
    int comply, comply_type;       /* complyToProject with complyToWorkloadType (enum
                                      db_wl_type; -1: none) */
    struct api_project comply_project;
    unsigned types;                /* 1 << enum db_wl_type: the types it must serve */
    char framework[16];            /* distributedFramework; "" any */
    int by_ids;
    char ids[API_QUERY_VALUE_MAX + 1]; /* assetIds */
    struct usage_cache *cache;     /* what uses assets, read once */
};
/* Reads the query (usageInfo's default usage_default): 0, or -1 answered
 * 400. Free with api_asset_q_free(). */
int api_asset_q_in(struct api_req *r, struct api_asset_q *q, int usage_default);
/* Does a pass the query's filters (is*, distributedFramework, assetIds)? */
int api_asset_q_pass(const struct api_asset_q *q, const struct db_asset *a);
/* Adds to entry (an asset's answer) what the query asks: usedBy,
 * usageTimes, compliance, status. 0, or -1 answered. */
int api_asset_q_add(struct api_req *r, struct api_asset_q *q, const struct db_asset *a,
                    json_t *entry);
void api_asset_q_free(struct api_asset_q *q);
/* Run:ai's AssetUsageInfo with no users yet (a new object), and one
 * workload added to it (under its type's key). */
json_t *api_usage_new(void);
void api_usage_add(json_t *by, const char *id, const char *name, const char *phase, int type);
/* Run:ai's AssetClusterStatusInfo of what allot stores: sealed values
 * ({key: sealed text} under id; NULL none) that must open with allotd's
 * key, missing the id of an asset it names that is gone ("" or NULL:
 * none). A new object. */
json_t *api_sealed_status(const char *id, const char *sealed, const char *missing);

/* Workload templates (h_templates.c): the type is the path's; PATCH is
 * the update route with API_ARG_PATCH, count the list with API_ARG_COUNT. */
api_handler_fn api_h_templates_list, api_h_template_create, api_h_template_get,
    api_h_template_update, api_h_template_delete, api_h_template_name_free;
/* A template's spec, checked as a part of a spec of a workload of that
 * type, and its assets ({environment, compute, datasources, credentials}:
 * ids of assets of those families): 0, or -1 answered 400. */
int api_template_check(struct api_req *r, json_t *spec, json_t *assets, int wl_type);

/* The asset of the path's id (r->params[0]) if the caller holds perm on
 * its scope: 0, or -1 answered (404 as if absent). */
int api_asset_read(struct api_req *r, unsigned perm, struct db_asset *a);
/* The part of a workload's spec the asset gives (a new object; for a data
 * source, overrides: its {containerPath}), or NULL answered 400. */
json_t *api_asset_part(struct api_req *r, const struct db_asset *a, json_t *overrides);

#endif
