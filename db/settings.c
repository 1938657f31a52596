/*
 * settings.c: the settings table (migration 260): the tenant's settings
 * as key/value texts (security settings, tenant settings, the logo); the
 * API file that owns a key says what its value means. Each change writes
 * a row of the change log (DB_CHANGE_SETTINGS) in its savepoint, so
 * other replicas on the database apply it too.
 */
#include "db_int.h"
#include "db_audit.h"
#include "db_ha.h"

#include <stdlib.h>
#include <string.h>

struct get_arg {
    const char *key;
    char **value;
};

static int read_value(struct db__stmt *st, void *arg)
{
    const char *v = db__col_text(st, 0);

    *(char **)arg = strdup(v ? v : "");
    return *(char **)arg ? DB_OK : DB_ENOMEM;
}

static int get_fn(struct db__conn *c, void *arg)
{
    static const char sql[] = "SELECT value FROM settings WHERE name = ?";
    struct get_arg *a = arg;
    const struct db__arg args[] = {DB__S(a->key)};

    return db__query_one(c, sql, args, DB__NARGS(args), read_value, a->value);
}

int db_setting_get(struct db *db, const char *key, char **value)
{
    struct get_arg a = {key, value};

    *value = NULL;
    return db__read(db, get_fn, &a);
}

struct put_arg {
    const char *key, *value;
};

static int put_fn(struct db__conn *c, void *arg)
{
    static const char drop[] = "DELETE FROM settings WHERE name = ?";
    static const char add[] = "INSERT INTO settings (name, value, updated_at) VALUES (?, ?, ?)";
    const struct put_arg *a = arg;
    const struct db__arg args[] = {DB__S(a->key), DB__S(a->value), DB__I(db__now_ms())};
    int rc = db__run_text_key(c, drop, a->key);

    return rc == DB_OK && a->value ? db__exec_args(c, add, args, DB__NARGS(args)) : rc;
}

int db_setting_put(struct db *db, const char *key, const char *value)
{
    struct put_arg a = {key, value ? value : ""};

    return db__write_noted(db, DB_CHANGE_SETTINGS, put_fn, &a);
}

int db_setting_delete(struct db *db, const char *key)
{
    struct put_arg a = {key, NULL};

    return db__write_noted(db, DB_CHANGE_SETTINGS, put_fn, &a);
}
