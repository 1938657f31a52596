/*
 * db_secrets.h: the store of named secrets (Run:ai's generic-secret
 * credential assets), secrets.c.
 *
 * A secret has a scope (project, department or tenant) and a name unique
 * in it; its entries are a JSON object from each key to the key's value
 * as secretbox.c sealed it. The store never sees a value in clear.
 *
 * A workload's project finds a secret by name in its own scope first,
 * then its department's, then the tenant's.
 */
#ifndef ALLOT_DB_SECRETS_H
#define ALLOT_DB_SECRETS_H

#include "db.h"

#define DB_SECRET_DESC_LEN 256

struct db_secret {
    int64_t seq;
    char id[DB_ID_LEN];
    DB_SCOPED_ROW_FIELDS(DB_SECRET_DESC_LEN);
    char *entries;                /* JSON {key: sealed value}, malloc'd */
};

/* Frees what a read filled in s (entries); s stays usable. */
void db_secret_clear(struct db_secret *s);
void db_secrets_free(struct db_secret *s, int n);

/* Inserts s (id, name, scope, scope_id, description, created_by and
 * entries set by the caller); fills seq and the times. DB_ECONFLICT if its
 * scope has a secret of that name, or the id exists. */
int db_secret_insert(struct db *db, struct db_secret *s);
/* The secret of that id; DB_ENOTFOUND if none. */
int db_secret_get(struct db *db, const char *id, struct db_secret *out);
/* Every secret, by name then id (malloc'd: db_secrets_free()). */
int db_secret_list(struct db *db, struct db_secret **out, int *n);
/* Sets the description (NULL or "": none) and who updated it, now. */
int db_secret_update(struct db *db, const char *id, const char *description,
                     const char *updated_by);
/* Deletes it; DB_ENOTFOUND if none. */
int db_secret_delete(struct db *db, const char *id);
/* How many secrets the store holds. */
int db_secret_count(struct db *db, int64_t *n);
/* The secret named `name` that the project named `project` sees: its
 * own, else its department's, else the tenant's. DB_ENOTFOUND if none. */
int db_secret_resolve(struct db *db, const char *project, const char *name,
                      struct db_secret *out);

#endif
