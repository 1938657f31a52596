/*
 * refresh.c: the families of refresh tokens. Every sign-in (a password or
 * client-credentials grant) starts a family; each refresh token names its
 * family and a generation, and only the family's current generation may
 * be exchanged.
 *
 * Steps of a refresh (db_refresh_rotate, one savepoint):
 *   1. The family is looked up: gone (expired, logged out, revoked, or
 *      never issued) -> DB_ENOTFOUND.
 *   2. The token's generation is older than the family's: the token was
 *      already exchanged, so someone holds a copy of it. The whole family
 *      is revoked (deleted) -> DB_ECONFLICT: neither the thief nor the
 *      owner can refresh it any more (OAuth 2.0 Security BCP, refresh
 *      token rotation with reuse detection).
 *   3. Otherwise the generation goes one up and the family lives ttl
 *      more; the caller issues a token of the new generation.
 *
 * Invariants:
 *   1. A generation is exchanged at most once: step 3 is a compare and
 *      set on it in the writer's savepoint, so of two concurrent refreshes
 *      with one token the second finds step 2.
 *   2. Expired families are removed whenever a family starts, so the table
 *      holds at most the sign-ins of the last refresh lifetime.
 *   3. An access token names its family too; it is good only while the
 *      family lives (db_refresh_live), so the revocation of step 2 and a
 *      logout end the family's access tokens with it. A family outlives
 *      its access tokens: each rotation keeps it a refresh lifetime (24 h),
 *      the longest an access token may live.
 */
#include "db_int.h"

#include <string.h>

struct family_arg {
    const char *family;
    int64_t user_id, gen, expires_at, now;
    int reused;                   /* rotate: step 2 revoked the family */
};

static int start_fn(struct db__conn *c, void *arg)
{
    static const char purge[] = "DELETE FROM refresh_families WHERE expires_at < ?";
    static const char add[] =
        "INSERT INTO refresh_families (id, user_id, gen, expires_at) VALUES (?, ?, 1, ?)";
    const struct family_arg *a = arg;
    int rc = db__run_key(c, purge, a->now);
    struct db__stmt *st;

    if (rc != DB_OK || !(st = db__prep(c, add, &rc)))
        return rc;
    db__bind_text(st, 1, a->family);
    db__bind_int64(st, 2, a->user_id);
    db__bind_int64(st, 3, a->expires_at);
    return db__done(st, db__step_done(st));
}

int db_refresh_start(struct db *db, int64_t user_id, int64_t expires_at, int64_t now,
                     char family[DB_ID_LEN])
{
    struct family_arg a = {family, user_id, 1, expires_at, now, 0};

    db__uuid(family);
    return db__write(db, start_fn, &a);
}

static int revoke(struct db__conn *c, const char *family)
{
    static const char sql[] = "DELETE FROM refresh_families WHERE id = ?";

    return db__run_text_key(c, sql, family);
}

static int rotate_fn(struct db__conn *c, void *arg)
{
    static const char get[] =
        "SELECT gen FROM refresh_families WHERE id = ? AND user_id = ? AND expires_at >= ?";
    static const char next[] =
        "UPDATE refresh_families SET gen = gen + 1, expires_at = ? WHERE id = ? AND gen = ?";
    struct family_arg *a = arg;
    int64_t gen = 0;
    const struct db__arg key[] = {DB__S(a->family), DB__I(a->user_id), DB__I(a->now)};
    int rc = db__query_one(c, get, key, DB__NARGS(key), db__read_int64, &gen);
    const struct db__arg step[] = {DB__I(a->expires_at), DB__S(a->family), DB__I(gen)};

    if (rc != DB_OK)
        return rc;
    if (a->gen != gen) { /* step 2: an exchanged token again, or one never issued */
        a->reused = 1;   /* an error would roll the revocation back with it */
        return revoke(c, a->family);
    }
    return db__exec_args(c, next, step, DB__NARGS(step));
}

int db_refresh_revoke_user(struct db *db, int64_t user_id)
{
    static const char sql[] = "DELETE FROM refresh_families WHERE user_id = ?";

    return db__write_key(db, sql, user_id);
}

int db_refresh_rotate(struct db *db, const char *family, int64_t user_id, int64_t gen,
                      int64_t expires_at, int64_t now)
{
    struct family_arg a = {family, user_id, gen, expires_at, now, 0};
    int rc = db__write(db, rotate_fn, &a);

    return rc == DB_OK && a.reused ? DB_ECONFLICT : rc;
}

struct live_arg {
    const char *family;
    int64_t user_id;
};

static int live_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "SELECT 1 FROM refresh_families WHERE id = ? AND user_id = ?";
    const struct live_arg *a = arg;
    const struct db__arg args[] = {DB__S(a->family), DB__I(a->user_id)};

    return db__query_one(c, sql, args, DB__NARGS(args), NULL, NULL);
}

int db_refresh_live(struct db *db, const char *family, int64_t user_id)
{
    struct live_arg a = {family, user_id};

    return db__read(db, live_fn, &a);
}
