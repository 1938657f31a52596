/*
 * idem.c: the idempotency_keys table (migration 175): for each principal's
 * key, the request it named (a digest) and, once answered, the answer.
 *
 * Invariants:
 *   1. (principal, key) is the primary key: two requests with one key
 *      cannot both reserve it, on one server or on two (HA replicas share
 *      the table).
 *   2. A reserve deletes the rows past DB_IDEM_TTL_MS in its own write, so
 *      a key past its day is free again and the table holds a day's keys.
 */
#include "db_int.h"
#include "db_idem.h"

#include <stdlib.h>
#include <string.h>

struct reserve_arg {
    const struct db_idem *k;
    struct db_idem *out;
};

static int reserve_fn(struct db__conn *c, void *arg)
{
    static const char purge[] = "DELETE FROM idempotency_keys WHERE created_at < ?";
    static const char get[] =
        "SELECT digest, status, reply, created_at FROM idempotency_keys"
        " WHERE principal = ? AND idem_key = ?";
    static const char put[] =
        "INSERT INTO idempotency_keys (principal, idem_key, digest, status, reply, created_at)"
        " VALUES (?, ?, ?, 0, NULL, ?)";
    struct reserve_arg *a = arg;
    const char *reply;
    int rc = DB_OK;
    struct db__stmt *st = db__prep(c, purge, &rc);

    if (!st)
        return rc;
    db__bind_int64(st, 1, a->k->created_at - DB_IDEM_TTL_MS);
    rc = db__done(st, db__step_done(st));
    if (rc != DB_OK || !(st = db__prep(c, get, &rc)))
        return rc;
    db__bind_text(st, 1, a->k->principal);
    db__bind_text(st, 2, a->k->key);
    rc = db__step(st);
    if (rc == DB__ROW) {
        db__copy(a->out->digest, sizeof(a->out->digest), st, 0);
        a->out->status = db__col_int(st, 1);
        reply = db__col_text(st, 2);
        a->out->reply = reply ? strdup(reply) : NULL;
        a->out->created_at = db__col_int64(st, 3);
        return db__done(st, reply && !a->out->reply ? DB_ENOMEM : DB_ECONFLICT);
    }
    rc = db__done(st, rc == DB__DONE ? DB_OK : rc < 0 ? rc : DB_EIO);
    if (rc != DB_OK || !(st = db__prep(c, put, &rc)))
        return rc;
    db__bind_text(st, 1, a->k->principal);
    db__bind_text(st, 2, a->k->key);
    db__bind_text(st, 3, a->k->digest);
    db__bind_int64(st, 4, a->k->created_at);
    return db__done(st, db__step_done(st));
}

int db_idem_reserve(struct db *db, const struct db_idem *k, struct db_idem *out)
{
    struct reserve_arg a = {k, out};
    int rc;

    memset(out, 0, sizeof(*out));
    rc = db__write(db, reserve_fn, &a);
    if (rc != DB_ECONFLICT || out->digest[0])
        return rc;
    /* Lost a race for the key with another server's insert: read its row. */
    rc = db__write(db, reserve_fn, &a);
    return rc == DB_OK ? DB_ECONFLICT : rc;
}

struct finish_arg {
    const char *principal, *key, *reply;
    int status;
};

static int finish_fn(struct db__conn *c, void *arg)
{
    static const char finish[] =
        "UPDATE idempotency_keys SET status = ?, reply = ? WHERE principal = ? AND idem_key = ?";
    static const char drop[] =
        "DELETE FROM idempotency_keys WHERE status = 0 AND principal = ? AND idem_key = ?";
    struct finish_arg *a = arg;
    int rc = DB_OK, i = 1;
    struct db__stmt *st = db__prep(c, a->reply ? finish : drop, &rc);

    if (!st)
        return rc;
    if (a->reply) {
        db__bind_int(st, i++, a->status);
        db__bind_text(st, i++, a->reply);
    }
    db__bind_text(st, i++, a->principal);
    db__bind_text(st, i, a->key);
    rc = db__step_done(st);
    if (rc == DB_OK && a->reply && db__changes(c) == 0)
        rc = DB_ENOTFOUND;
    return db__done(st, rc);
}

int db_idem_finish(struct db *db, const char *principal, const char *key, int status,
                   const char *reply)
{
    struct finish_arg a = {principal, key, reply ? reply : "", status};

    return db__write(db, finish_fn, &a);
}

int db_idem_drop(struct db *db, const char *principal, const char *key)
{
    struct finish_arg a = {principal, key, NULL, 0};

    return db__write(db, finish_fn, &a);
}
