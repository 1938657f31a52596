/*
 * secrets.h: named secrets, Run:ai's generic-secret credential assets
 * (h_secrets.c): the routes, the secrets key, and what submissions and the
 * agents' channel ask of them. Values are sealed at rest (secretbox.c).
 *
 * Rights, on the secret's scope (a project, a department, the tenant):
 *   read its keys (never a value)    API_WL_WRITE: those who may submit there
 *   create, change, delete           API_ORG_WRITE: its administrators
 *   use it in a submission           API_WL_WRITE on the workload's project,
 *                                    for the secrets that project sees (its
 *                                    own, its department's, the tenant's)
 */
#ifndef ALLOT_SECRETS_H
#define ALLOT_SECRETS_H

#include "api.h"

api_handler_fn api_h_secrets_list, api_h_secrets_create, api_h_secret_get, api_h_secret_update,
    api_h_secret_delete;

/* GET /api/v1/asset/credentials' share (h_assets.c): the generic secrets
 * the caller may read that the query's filters pass, appended to entries
 * with their spec under genericSecret. 0, or -1 answered. */
int api_secrets_list_into(struct api_req *r, json_t *entries);

/* Loads the secrets key at path (main.c, step 3). A missing file is
 * created when `create` (--init, --demo) or when the database holds no
 * secret yet; a database holding secrets without it is refused. 0, or -1
 * said on stderr. */
int api_secrets_start(struct db *db, const char *path, int create);

/* A submission's entry {FIELD: {name, key}}, FIELD "secret" or
 * "userCredential": 0 when the project sees a secret of that name with that
 * key (for a userCredential, one that the caller created: a user credential
 * is a generic secret its creator uses), else -1 after a 400 naming it
 * (where: "spec.environmentVariables[i]"). */
int api_secret_check_ref(struct api_req *r, const struct api_project *project, const char *field,
                         const char *name, const char *key, const char *where);

/* The value of key in the secret named `name` that the project named
 * `project` sees, opened: 0 and *value (wipe with api_secretbox_free()),
 * or -1. */
int api_secret_value(struct db *db, const char *project, const char *name, const char *key,
                     char **value);

/* The secrets key's seal and open (secretbox.h) for other stores of
 * secret values (h_assets.c): NULL / -1 when allotd has no key. */
int api_secrets_ready(void);
char *api_secrets_seal(const char *id, const char *key, const char *value, size_t len);
int api_secrets_open(const char *id, const char *key, const char *sealed, char **value);

#endif
