/*
 * db_idem.h: the answers kept for idempotency keys (the `Idempotency-Key`
 * request header of the workload submissions), idem.c.
 *
 * A key belongs to one principal: (principal, key) names one request,
 * whose route and body the row holds as a digest. A row is first
 * reserved (status 0: the request is being answered, or its server died
 * while answering it), then finished with the answer's status and body,
 * or dropped when the answer is not kept. Rows older than DB_IDEM_TTL_MS
 * are gone: a reserve deletes them.
 */
#ifndef ALLOT_DB_IDEM_H
#define ALLOT_DB_IDEM_H

#include "db.h"

#define DB_IDEM_TTL_MS (24LL * 3600 * 1000)
#define DB_IDEM_KEY_LEN 256    /* a key is 1 to 255 bytes */
#define DB_IDEM_DIGEST_LEN 65  /* hex SHA-256 and its terminator */

struct db_idem {
    char principal[DB_NAME_LEN];
    char key[DB_IDEM_KEY_LEN];
    char digest[DB_IDEM_DIGEST_LEN]; /* of the request: method, path, query, body */
    int status;                      /* the answer's; 0 while reserved */
    char *reply;                     /* the answer's body, malloc'd (NULL while reserved) */
    int64_t created_at;              /* when it was reserved, ms */
};

/* Reserves (principal, key) for a request of that digest, now: DB_OK if no
 * live row held it. DB_ECONFLICT if one does: *out is that row (its digest,
 * status and reply: free out->reply). Deletes every row older than the TTL. */
int db_idem_reserve(struct db *db, const struct db_idem *k, struct db_idem *out);
/* Keeps the answer of a reserved row: DB_ENOTFOUND if it is not there. */
int db_idem_finish(struct db *db, const char *principal, const char *key, int status,
                   const char *reply);
/* Deletes a row still reserved (status 0); DB_OK when there was none. */
int db_idem_drop(struct db *db, const char *principal, const char *key);

#endif
