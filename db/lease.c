/*
 * lease.c: the leader lease (db_ha.h) and the fence on writes.
 *
 * The row (migration 150) is read and changed only through the writer,
 * so each step below is one statement in one savepoint of a group
 * commit, against the database's clock (DB_NOW):
 *   Step 1: extend: holder and epoch match and the row has not expired;
 *   Step 2: otherwise take: the row expired (or force), holder becomes
 *           ours, epoch + 1;
 *   Step 3: otherwise read who holds it, for the caller.
 * The fence (db__fence) is Step 1 without the extension: a statement that
 * matches the row only at the fenced epoch before its expiry; it runs
 * first in the savepoint of a fenced write and holds the row until the
 * commit, so a replica taking the lease waits for that commit (or finds
 * the row extended).
 *
 * Invariants:
 *   1. The epoch only grows; each take gives a holder a new one.
 *   2. No write fenced by epoch E commits once the row left E or expired:
 *      the check and the write are one transaction.
 *   3. Times in the row are the database's clock, never a replica's.
 */
#include "db_int.h"
#include "db_ha.h"

#include <string.h>

static _Thread_local int64_t fence_epoch;
static _Thread_local int fence_refused;

void db_fence_set(int64_t epoch)
{
    fence_epoch = epoch;
}

int db_fence_refused(void)
{
    int r = fence_refused;

    fence_refused = 0;
    return r;
}

int64_t db__fence_epoch(void)
{
    return fence_epoch;
}

void db__fence_note(int rc)
{
    if (rc == DB_EFENCED)
        fence_refused = 1;
}

int db__fence(struct db__conn *c, int64_t epoch)
{
    static const char sql[] = "UPDATE leader_lease SET epoch = epoch"
                              " WHERE id = 1 AND epoch = ? AND expires_at > " DB_NOW;
    int rc = DB_OK;
    struct db__stmt *st = db__prep(c, sql, &rc);

    if (!st)
        return rc;
    db__bind_int64(st, 1, epoch);
    rc = db__done(st, db__step_done(st));
    if (rc == DB_OK && db__changes(c) != 1)
        rc = DB_EFENCED;
    return rc;
}

struct hold_arg {
    const char *holder;
    int64_t epoch, ttl_ms;
    int force;
    struct db_lease *out;
};

DB__TABLE(lease_cols, lease_shape, struct db_lease, NULL, holder, epoch, expires_at, db_now);

static int read_row(struct db__conn *c, struct db_lease *out)
{
    static const char sql[] =
        "SELECT holder, epoch, expires_at, " DB_NOW " FROM leader_lease WHERE id = 1";

    return db__query_row(c, sql, NULL, 0, &lease_shape, out);
}

/* What a statement of the lease binds, in this order, as ?1, ?2, ... */
enum { B_HOLDER = 1, B_EPOCH = 2, B_TTL = 4, B_FORCE = 8 };

/* Runs one of the lease's statements with the fields of `binds`: whether
 * it matched the row. */
static int change(struct db__conn *c, const char *sql, int binds, const struct hold_arg *a,
                  int *matched)
{
    int rc = DB_OK, i = 0;
    struct db__stmt *st = db__prep(c, sql, &rc);

    *matched = 0;
    if (!st)
        return rc;
    if (binds & B_HOLDER)
        db__bind_text(st, ++i, a->holder);
    if (binds & B_EPOCH)
        db__bind_int64(st, ++i, a->epoch);
    if (binds & B_TTL)
        db__bind_int64(st, ++i, a->ttl_ms);
    if (binds & B_FORCE)
        db__bind_int(st, ++i, a->force);
    rc = db__done(st, db__step_done(st));
    *matched = rc == DB_OK && db__changes(c) == 1;
    return rc;
}

static int hold_fn(struct db__conn *c, void *arg)
{
    static const char extend[] =
        "UPDATE leader_lease SET expires_at = " DB_NOW " + ?3"
        " WHERE id = 1 AND holder = ?1 AND epoch = ?2 AND expires_at > " DB_NOW;
    static const char take[] =
        "UPDATE leader_lease SET expires_at = " DB_NOW " + ?2, holder = ?1, epoch = epoch + 1,"
        " taken_at = " DB_NOW " WHERE id = 1 AND (expires_at <= " DB_NOW " OR ?3 != 0)";
    struct hold_arg *a = arg;
    int rc, matched = 0;

    /* Step 1 (epoch 0 never matches: nobody holds it) */
    rc = change(c, extend, B_HOLDER | B_EPOCH | B_TTL, a, &matched);
    /* Step 2 */
    if (rc == DB_OK && !matched)
        rc = change(c, take, B_HOLDER | B_TTL | B_FORCE, a, &matched);
    /* Step 3 */
    if (rc == DB_OK)
        rc = read_row(c, a->out);
    if (rc == DB_OK && !matched)
        rc = DB_ECONFLICT; /* nothing changed: the rollback of the savepoint loses nothing */
    return rc;
}

int db_lease_hold(struct db *db, const char *holder, int64_t *epoch, int64_t ttl_ms, int force,
                  struct db_lease *out)
{
    struct hold_arg a = {holder, *epoch, ttl_ms, force, out};
    int64_t saved = db__fence_epoch();
    int rc;

    memset(out, 0, sizeof(*out));
    db_fence_set(0); /* the lease itself is never fenced */
    rc = db__write(db, hold_fn, &a);
    db_fence_set(saved);
    if (rc == DB_OK)
        *epoch = out->epoch;
    return rc;
}

static int release_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "UPDATE leader_lease SET expires_at = " DB_NOW
                              " WHERE id = 1 AND holder = ? AND epoch = ?";
    struct hold_arg *a = arg;
    int matched;

    return change(c, sql, B_HOLDER | B_EPOCH, a, &matched);
}

int db_lease_release(struct db *db, const char *holder, int64_t epoch)
{
    struct hold_arg a = {holder, epoch, 0, 0, NULL};
    int64_t saved = db__fence_epoch();
    int rc;

    db_fence_set(0);
    rc = db__write(db, release_fn, &a);
    db_fence_set(saved);
    return rc;
}

static int get_fn(struct db__conn *c, void *arg)
{
    return read_row(c, arg);
}

int db_lease_get(struct db *db, struct db_lease *out)
{
    memset(out, 0, sizeof(*out));
    return db__read(db, get_fn, out);
}
