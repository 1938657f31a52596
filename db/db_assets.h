/*
 * db_assets.h: the store of Run:ai's assets (assets.c): environments,
 * compute resources, data sources, credentials (all but generic secrets,
 * which db_secrets.h keeps), registries and workload templates.
 *
 * An asset has a family (environment, compute, datasource, credential,
 * registry, template), a kind inside it (Run:ai's meta.kind: hostPath,
 * git, password, ...), a scope (project, department or tenant) and a name
 * unique among the family's assets of its scope. Its spec is JSON without
 * a secret in clear; the values of a credential are in sealed, a JSON
 * object from each field to its value as secretbox.c sealed it.
 *
 * A workload's project finds an asset by family and name in its own scope
 * first, then its department's, then the tenant's.
 */
#ifndef ALLOT_DB_ASSETS_H
#define ALLOT_DB_ASSETS_H

#include "db.h"

#define DB_ASSET_DESC_LEN 256

struct db_asset {
    int64_t seq;
    char id[DB_ID_LEN];
    char family[16];
    char kind[32];
    DB_SCOPED_ROW_FIELDS(DB_ASSET_DESC_LEN);
    char *spec;                   /* JSON object, malloc'd */
    char *sealed;                 /* JSON {field: sealed value}, malloc'd */
    char supported[256];          /* meta.workloadSupportedTypes as JSON; "" any */
};

/* Frees what a read filled in a (spec, sealed); a stays usable. */
void db_asset_clear(struct db_asset *a);
void db_assets_free(struct db_asset *a, int n);

/* Inserts a (every field but seq, the times and update_count set by the
 * caller); fills those. DB_ECONFLICT if its scope has an asset of that
 * family and name, or the id exists. */
int db_asset_insert(struct db *db, struct db_asset *a);
/* The asset of that id; DB_ENOTFOUND if none. */
int db_asset_get(struct db *db, const char *id, struct db_asset *out);
/* Every asset of the family (NULL: every family), by name then id
 * (malloc'd: db_assets_free()). */
int db_asset_list(struct db *db, const char *family, struct db_asset **out, int *n);
/* Sets a's name, description, spec, sealed, supported and updated_by, now, and
 * counts the update. DB_ENOTFOUND if gone, DB_ECONFLICT if the name is
 * taken in its scope. */
int db_asset_update(struct db *db, struct db_asset *a);
/* Deletes it; DB_ENOTFOUND if none. */
int db_asset_delete(struct db *db, const char *id);
/* The asset of the family named `name` that the project named `project`
 * sees: its own, else its department's, else the tenant's. DB_ENOTFOUND
 * if none. */
int db_asset_resolve(struct db *db, const char *family, const char *project, const char *name,
                     struct db_asset *out);

#endif
