/*
 * db_audit.h: the audit log (audit.c) and the tenant's stored settings
 * (settings.c).
 *
 * The audit log holds one row per mutating API request that reached a
 * handler: when, who, what (method, path, the Run:ai entity), the answer's
 * status, the client's address. Rows arrive in batches (the API side
 * queues them); each batch's write also deletes the rows older than the
 * retention it is given.
 *
 * Settings are key/value texts: security settings, tenant settings and the
 * tenant's logo, each key owned by the API file that reads it.
 */
#ifndef ALLOT_DB_AUDIT_H
#define ALLOT_DB_AUDIT_H

#include "db.h"

struct db_audit {
    int64_t seq;
    char id[DB_ID_LEN];
    int64_t at_ms;
    char subject[DB_NAME_LEN];
    char subject_type[16];        /* User | App */
    char source_ip[64];
    char action[16];              /* create | update | delete | sign-in */
    char method[8];
    char url[256];
    char entity_type[48];
    char entity_id[DB_NAME_LEN];
    char entity_name[DB_NAME_LEN];
    int status;
};

/* Inserts rows[0..n) in one write, after deleting every row older than
 * purge_before_ms (0: none). On SQLite the write goes in turns of about
 * 0.5 ms, other writes committing between them, so it holds the writer
 * for one turn at a time; a row whose id is already stored is skipped, so
 * a batch that failed part way is written again whole without doubles
 * (the caller keeps each row's id from one try to the next). */
int db_audit_insert(struct db *db, const struct db_audit *rows, int n, int64_t purge_before_ms);
/* The rows with start_ms <= at_ms <= end_ms, oldest first, at most max
 * (*truncated set when more were there); malloc'd. */
int db_audit_list(struct db *db, int64_t start_ms, int64_t end_ms, int max,
                  struct db_audit **out, int *n, int *truncated);

#define DB_SETTING_KEY_LEN 128
/* A setting's value (malloc'd) into *value: DB_OK or DB_ENOTFOUND. */
int db_setting_get(struct db *db, const char *key, char **value);
/* Stores (or replaces) a setting's value. */
int db_setting_put(struct db *db, const char *key, const char *value);
/* Removes a setting: DB_OK whether it was there or not. */
int db_setting_delete(struct db *db, const char *key);

#endif
